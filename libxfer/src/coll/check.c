/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XFER_CHECK=1: a cheap cross-group handshake before the data moves. Each group gathers, at
 * its rank 0, what its ranks actually send (bytes and a type-signature hash); the two roots
 * swap these lists together with the algorithm each side selected; every rank compares the
 * other group's list with the counts and type it passed. One allreduce then tells everybody
 * whether any rank found a problem, so all ranks fail together instead of corrupting memory or
 * waiting forever. Cost: two local collectives of O(n) words, one root exchange, one
 * allreduce.
 */
#include <string.h>

#include "../core/core.h"
#include "coll.h"

#define CHECK_MAGIC 0x5846455243484b31ULL /* "XFERCHK1" */

enum { H_MAGIC = 0, H_KIND, H_ALGO, H_ERROR, H_WORDS };

static const char *kind_name(int kind)
{
    return kind == XFER_CALL_ALLGATHER ? "allgather" : "allgatherv";
}

xfer_status_t xfer_check_args(xfer_topo_t *t, const xfer_call_t *call, xfer_status_t local_error,
                              int algo_index)
{
    const int g = t->group, nl = t->n[g], nr = t->n[1 - g];
    xfer_status_t st = XFER_SUCCESS, verdict = XFER_SUCCESS;
    unsigned long long mine[2], *actual = NULL, *remote = NULL, hdr[H_WORDS], rhdr[H_WORDS];
    int rsize = 0, i, bad = 0, any_bad = 0;
    char msg[512] = "";
    uint64_t sig = 0;

    actual = xfer_calloc((size_t) nl * 2 + 1, sizeof(*actual));
    remote = xfer_calloc((size_t) nr * 2 + 1, sizeof(*remote));
    if (!actual || !remote) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "check buffers");
        goto out; /* cannot take part: peers will time out or hang, as with any OOM */
    }
    mine[0] = ~0ULL; /* "this rank has its own argument error": nothing to compare */
    mine[1] = 0;
    if (local_error == XFER_SUCCESS) {
        int ssize = 0;
        XFER_MPI_GOTO(MPI_Type_size(call->stype, &ssize), st, out);
        mine[0] = (unsigned long long) call->scount * (unsigned long long) ssize;
        if (xfer_dtype_signature(call->stype, call->scount, &sig) != XFER_SUCCESS)
            sig = 0;
        mine[1] = sig;
    }
    hdr[H_MAGIC] = CHECK_MAGIC;
    hdr[H_KIND] = (unsigned long long) call->kind;
    hdr[H_ALGO] = (unsigned long long) (algo_index + 1);
    hdr[H_ERROR] = local_error == XFER_SUCCESS ? 0 : 1;

    XFER_MPI_GOTO(
        MPI_Allgather(mine, 2, MPI_UNSIGNED_LONG_LONG, actual, 2, MPI_UNSIGNED_LONG_LONG, t->local),
        st, out);
    if (t->rank == 0) {
        const int peer = g == 0 ? t->n[0] : 0; /* the other group's rank 0, merged */
        XFER_MPI_GOTO(MPI_Sendrecv(hdr, H_WORDS, MPI_UNSIGNED_LONG_LONG, peer, 77, rhdr, H_WORDS,
                                   MPI_UNSIGNED_LONG_LONG, peer, 77, t->merged, MPI_STATUS_IGNORE),
                      st, out);
        XFER_MPI_GOTO(MPI_Sendrecv(actual, 2 * nl, MPI_UNSIGNED_LONG_LONG, peer, 78, remote, 2 * nr,
                                   MPI_UNSIGNED_LONG_LONG, peer, 78, t->merged, MPI_STATUS_IGNORE),
                      st, out);
    }
    XFER_MPI_GOTO(MPI_Bcast(rhdr, H_WORDS, MPI_UNSIGNED_LONG_LONG, 0, t->local), st, out);
    XFER_MPI_GOTO(MPI_Bcast(remote, 2 * nr, MPI_UNSIGNED_LONG_LONG, 0, t->local), st, out);

    if (local_error != XFER_SUCCESS) {
        bad = 1; /* this rank's own message is already in xfer_last_error() */
    } else if (rhdr[H_MAGIC] != CHECK_MAGIC) {
        bad = 1;
        snprintf(msg, sizeof(msg), "the other group does not run the XFER_CHECK handshake");
    } else if (rhdr[H_KIND] != hdr[H_KIND]) {
        bad = 1;
        snprintf(msg, sizeof(msg), "this group calls %s but the other group calls %s",
                 kind_name(call->kind), kind_name((int) rhdr[H_KIND]));
    } else if (rhdr[H_ERROR] == 0 && rhdr[H_ALGO] != hdr[H_ALGO]) {
        const xfer_algo_t *mine_a = xfer_algo_at(algo_index);
        const xfer_algo_t *theirs = xfer_algo_at((int) rhdr[H_ALGO] - 1);
        bad = 1;
        snprintf(msg, sizeof(msg),
                 "this group selected algorithm %s but the other group selected %s (options or "
                 "XFER_ALGORITHM differ between the groups)",
                 algo_index == XFER_CHECK_HIER ? "hier"
                 : mine_a                      ? mine_a->name
                                               : "?",
                 (int) rhdr[H_ALGO] - 1 == XFER_CHECK_HIER ? "hier"
                 : theirs                                  ? theirs->name
                                                           : "?");
    } else {
        XFER_MPI_GOTO(MPI_Type_size(call->rtype, &rsize), st, out);
        for (i = 0; i < nr && !bad; i++) {
            int rc = call->kind == XFER_CALL_ALLGATHER ? call->rcount : call->rcounts[i];
            unsigned long long want = (unsigned long long) rc * (unsigned long long) rsize;
            uint64_t wsig = 0;
            if (remote[2 * i] == ~0ULL)
                continue; /* that rank reports its own error */
            if (xfer_dtype_signature(call->rtype, rc, &wsig) != XFER_SUCCESS)
                wsig = 0;
            if (remote[2 * i] != want) {
                bad = 1;
                snprintf(msg, sizeof(msg),
                         "rank %d of the other group sends %llu bytes but this rank expects "
                         "%llu (%s %d element(s) of %d bytes)",
                         i, remote[2 * i], want,
                         call->kind == XFER_CALL_ALLGATHER ? "recvcount" : "recvcounts[i] =", rc,
                         rsize);
            } else if (want > 0 && wsig && remote[2 * i + 1] && remote[2 * i + 1] != wsig) {
                bad = 1;
                snprintf(msg, sizeof(msg),
                         "rank %d of the other group sends %llu bytes whose type signature "
                         "differs from this rank's receive type",
                         i, want);
            }
        }
    }
    XFER_MPI_GOTO(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, t->merged), st, out);
    if (bad && local_error != XFER_SUCCESS)
        verdict = local_error;
    else if (bad)
        verdict = XFER_ERR(XFER_ERR_MISMATCH, "XFER_CHECK: group %d rank %d: %s", g, t->rank, msg);
    else if (any_bad)
        verdict = XFER_ERR(XFER_ERR_MISMATCH,
                           "XFER_CHECK: another rank found mismatched arguments (its own error "
                           "message names them); nothing was transferred");
    st = verdict;
out:
    xfer_free(actual);
    xfer_free(remote);
    return st;
}
