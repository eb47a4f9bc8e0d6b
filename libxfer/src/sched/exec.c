/* SPDX-License-Identifier: BSD-3-Clause */
#include <limits.h>
#include <string.h>

#include "../core/core.h"
#include "exec.h"

static int is_coll(int kind)
{
    return kind == XFER_OP_ALLGATHERV || kind == XFER_OP_BCAST || kind == XFER_OP_GATHERV;
}

/* A round made of one collective runs as the blocking MPI call (better tuned than the
 * nonblocking one in both MPICH and Open MPI) when nothing else has to progress. */
static int single_coll_round(const xfer_exec_t *e)
{
    return e->view.n == 1 && is_coll(e->view.ops[0].kind);
}

/* Index of the op at @p k of the current view in s->ops (collectives are always stored). */
static int stored_index(const xfer_exec_t *e, int k)
{
    return e->view.first + k;
}

static xfer_status_t make_int_counts(xfer_exec_t *e, int i)
{
    const xfer_op_t *op = &e->s->ops[i];
    const xfer_counts_t *c = &e->s->counts[op->counts];
    size_t off = 0;
    int m;

    e->icounts[i] = xfer_malloc((size_t) c->n * sizeof(int));
    e->idispls[i] = xfer_malloc((size_t) c->n * sizeof(int));
    if (!e->icounts[i] || !e->idispls[i])
        return XFER_ERR(XFER_ERR_NO_MEMORY, "count arrays for a group of %d", c->n);
    for (m = 0; m < c->n; m++) {
        size_t len = xfer_counts_get(c, m);
        if (len > INT_MAX || off > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE,
                            "%s/%s: %s over %d members moves %zu bytes, beyond MPI's int counts",
                            e->s->algo, e->s->variant, xfer_op_name(op->kind), c->n,
                            xfer_counts_total(c));
        e->icounts[i][m] = (int) len;
        e->idispls[i][m] = (int) off;
        off += len;
    }
    return XFER_SUCCESS;
}

xfer_status_t xfer_exec_init(xfer_exec_t *e, const xfer_sched_t *s, MPI_Comm merged,
                             MPI_Comm *gcomm, int tag, int intra)
{
    xfer_status_t st = XFER_SUCCESS;
    const int widest = xfer_sched_widest_round(s);
    int i;

    memset(e, 0, sizeof(*e));
    e->s = s;
    e->merged = merged;
    e->gcomm = gcomm;
    e->tag = tag;
    e->intra = intra;
    e->round = s->nrounds;
    e->req = xfer_malloc((size_t) widest * sizeof(MPI_Request));
    e->scratch = s->gen ? xfer_malloc((size_t) widest * sizeof(xfer_op_t)) : NULL;
    e->icounts = xfer_calloc((size_t) XFER_MAX(s->nops, 1), sizeof(int *));
    e->idispls = xfer_calloc((size_t) XFER_MAX(s->nops, 1), sizeof(int *));
    if (!e->req || (s->gen && !e->scratch) || !e->icounts || !e->idispls) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "executor state for %d operations", s->nops);
        goto fail;
    }
    for (i = 0; i < s->nops; i++) { /* stored operations; generated ones are checked as made */
        const xfer_op_t *op = &s->ops[i];
        if (op->len > INT_MAX) {
            st = XFER_ERR(XFER_ERR_TOO_LARGE,
                          "%s/%s: a %s of %zu bytes exceeds MPI's int count limit", s->algo,
                          s->variant, xfer_op_name(op->kind), op->len);
            goto fail;
        }
        if (op->kind == XFER_OP_ALLGATHERV || op->kind == XFER_OP_GATHERV)
            XFER_CHECK_GOTO(make_int_counts(e, i), st, fail);
        if (is_coll(op->kind) && (op->group < 0 || gcomm[op->group] == MPI_COMM_NULL)) {
            st = XFER_ERR(XFER_ERR_INTERNAL, "%s: collective without a communicator", s->algo);
            goto fail;
        }
    }
    return XFER_SUCCESS;
fail:
    xfer_exec_fini(e);
    return st;
}

void xfer_exec_fini(xfer_exec_t *e)
{
    int i;
    if (e->icounts)
        for (i = 0; i < e->s->nops; i++)
            xfer_free(e->icounts[i]);
    if (e->idispls)
        for (i = 0; i < e->s->nops; i++)
            xfer_free(e->idispls[i]);
    xfer_free(e->icounts);
    xfer_free(e->idispls);
    xfer_free(e->req);
    xfer_free(e->scratch);
    memset(e, 0, sizeof(*e));
}

void xfer_exec_bind(xfer_exec_t *e, const void *send, void *recv, void *tmp)
{
    /* SEND is only ever read (MPI_Isend, memcpy source, collective send buffer). */
    e->buf[XFER_BUF_SEND] = (unsigned char *) (uintptr_t) send;
    e->buf[XFER_BUF_RECV] = recv;
    e->buf[XFER_BUF_TMP] = tmp;
}

/* In-place ring allgatherv of the packed blocks at @p base over @p comm: in step s every rank
 * passes on the block it received in step s - 1 (its own first) to its successor. */
static xfer_status_t ring_allgatherv(xfer_exec_t *e, unsigned char *base, const int *counts,
                                     const int *displs, MPI_Comm comm)
{
    xfer_status_t st = XFER_SUCCESS;
    int n, r, s;
    XFER_MPI_GOTO(MPI_Comm_size(comm, &n), st, out);
    XFER_MPI_GOTO(MPI_Comm_rank(comm, &r), st, out);
    for (s = 0; s < n - 1; s++) {
        const int sb = (r - s + n) % n, rb = (r - s - 1 + n) % n;
        XFER_MPI_GOTO(MPI_Sendrecv(base + displs[sb], counts[sb], MPI_BYTE, (r + 1) % n, e->tag,
                                   base + displs[rb], counts[rb], MPI_BYTE, (r - 1 + n) % n, e->tag,
                                   comm, MPI_STATUS_IGNORE),
                      st, out);
    }
out:
    return st;
}

static int use_ring(const xfer_exec_t *e, const int *counts, MPI_Comm comm)
{
    double total = 0;
    int n = 0, j;
    if (e->intra == XFER_INTRA_MPI || MPI_Comm_size(comm, &n) != MPI_SUCCESS || n < 2)
        return 0;
    if (e->intra == XFER_INTRA_RING)
        return 1;
    for (j = 0; j < n; j++)
        total += counts[j];
    return total / n >= XFER_INTRA_RING_MIN;
}

static xfer_status_t run_blocking_coll(xfer_exec_t *e)
{
    const xfer_op_t *op = &e->view.ops[0];
    const int i = stored_index(e, 0);
    MPI_Comm comm = e->gcomm[op->group];
    xfer_status_t st = XFER_SUCCESS;

    switch (op->kind) {
    case XFER_OP_ALLGATHERV:
        if (use_ring(e, e->icounts[i], comm)) {
            st = ring_allgatherv(e, e->buf[op->buf] + op->off, e->icounts[i], e->idispls[i], comm);
            break;
        }
        XFER_MPI_GOTO(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, e->buf[op->buf] + op->off,
                                     e->icounts[i], e->idispls[i], MPI_BYTE, comm),
                      st, out);
        break;
    case XFER_OP_BCAST:
        XFER_MPI_GOTO(MPI_Bcast(e->buf[op->buf] + op->off, (int) op->len, MPI_BYTE, op->peer, comm),
                      st, out);
        break;
    case XFER_OP_GATHERV:
        XFER_MPI_GOTO(MPI_Gatherv(e->buf[op->buf] + op->off, (int) op->len, MPI_BYTE,
                                  e->buf[op->buf2] + op->off2, e->icounts[i], e->idispls[i],
                                  MPI_BYTE, op->peer, comm),
                      st, out);
        break;
    default:
        st = XFER_ERR(XFER_ERR_INTERNAL, "not a collective");
    }
out:
    return st;
}

/* Next op of @p k's chain in the current round, or -1. */
static int chain_next(const xfer_exec_t *e, int k)
{
    const int chain = e->view.ops[k].chain;
    int j;
    if (chain == 0)
        return -1;
    for (j = k + 1; j < e->view.n; j++)
        if (e->view.ops[j].chain == chain)
            return j;
    return -1;
}

/* Start op @p k of the current round; a COPY completes at once and hands over to the next op
 * of its chain. */
static xfer_status_t start_op(xfer_exec_t *e, int k)
{
    xfer_status_t st = XFER_SUCCESS;

    while (k >= 0) {
        const xfer_op_t *op = &e->view.ops[k];
        MPI_Request *r = &e->req[k];
        MPI_Comm comm = op->group >= 0 ? e->gcomm[op->group] : e->merged;
        const int i = is_coll(op->kind) ? stored_index(e, k) : -1;

        if (op->len > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE, "%s: a %s of %zu bytes exceeds MPI's int counts",
                            e->s->algo, xfer_op_name(op->kind), op->len);
        switch (op->kind) {
        case XFER_OP_SEND:
            XFER_MPI_GOTO(MPI_Isend(e->buf[op->buf] + op->off, (int) op->len, MPI_BYTE, op->peer,
                                    e->tag, e->merged, r),
                          st, out);
            return st;
        case XFER_OP_RECV:
            XFER_MPI_GOTO(MPI_Irecv(e->buf[op->buf] + op->off, (int) op->len, MPI_BYTE, op->peer,
                                    e->tag, e->merged, r),
                          st, out);
            return st;
        case XFER_OP_ALLGATHERV:
            XFER_MPI_GOTO(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_BYTE, e->buf[op->buf] + op->off,
                                          e->icounts[i], e->idispls[i], MPI_BYTE, comm, r),
                          st, out);
            return st;
        case XFER_OP_BCAST:
            XFER_MPI_GOTO(
                MPI_Ibcast(e->buf[op->buf] + op->off, (int) op->len, MPI_BYTE, op->peer, comm, r),
                st, out);
            return st;
        case XFER_OP_GATHERV:
            XFER_MPI_GOTO(MPI_Igatherv(e->buf[op->buf] + op->off, (int) op->len, MPI_BYTE,
                                       e->buf[op->buf2] + op->off2, e->icounts[i], e->idispls[i],
                                       MPI_BYTE, op->peer, comm, r),
                          st, out);
            return st;
        case XFER_OP_COPY:
            memmove(e->buf[op->buf2] + op->off2, e->buf[op->buf] + op->off, op->len);
            *r = MPI_REQUEST_NULL;
            k = chain_next(e, k); /* done: continue its chain, if any */
            break;
        default:
            return XFER_ERR(XFER_ERR_INTERNAL, "unknown operation kind %d", op->kind);
        }
    }
out:
    return st;
}

static xfer_status_t load_round(xfer_exec_t *e)
{
    return xfer_sched_round_view(e->s, e->round, e->scratch, &e->view);
}

static xfer_status_t post_round(xfer_exec_t *e)
{
    xfer_status_t st = XFER_SUCCESS;
    int k, j;

    for (k = 0; k < e->view.n; k++)
        e->req[k] = MPI_REQUEST_NULL;
    for (k = 0; k < e->view.n; k++) {
        int first = 1;
        if (e->view.ops[k].chain != 0)
            for (j = 0; j < k && first; j++)
                first = e->view.ops[j].chain != e->view.ops[k].chain;
        if (first)
            XFER_CHECK_GOTO(start_op(e, k), st, out);
    }
out:
    return st;
}

static xfer_status_t timeout_error(xfer_exec_t *e)
{
    int k;
    for (k = 0; k < e->view.n; k++)
        if (e->req[k] != MPI_REQUEST_NULL) {
            const xfer_op_t *op = &e->view.ops[k];
            const int ng0 = e->s->n[0];
            if (op->kind == XFER_OP_SEND || op->kind == XFER_OP_RECV)
                return XFER_ERR(XFER_ERR_TIMEOUT,
                                "%s/%s: no progress within %d ms in round %d: %s of %zu bytes "
                                "%s group %d rank %d still pending",
                                e->s->algo, e->s->variant, e->timeout_ms, e->round,
                                xfer_op_name(op->kind), op->len,
                                op->kind == XFER_OP_SEND ? "to" : "from", op->peer < ng0 ? 0 : 1,
                                op->peer < ng0 ? op->peer : op->peer - ng0);
            return XFER_ERR(XFER_ERR_TIMEOUT,
                            "%s/%s: no progress within %d ms in round %d: local %s still pending",
                            e->s->algo, e->s->variant, e->timeout_ms, e->round,
                            xfer_op_name(op->kind));
        }
    return XFER_ERR(XFER_ERR_TIMEOUT, "%s: timed out after %d ms", e->s->algo, e->timeout_ms);
}

xfer_status_t xfer_exec_start(xfer_exec_t *e, int timeout_ms)
{
    xfer_status_t st = XFER_SUCCESS;

    if (e->active)
        return XFER_ERR(XFER_ERR_STATE, "operation already active");
    e->active = 1;
    e->round = 0;
    e->posted = 0;
    e->loaded = 0;
    e->timeout_ms = timeout_ms;
    e->deadline = timeout_ms > 0 ? MPI_Wtime() + 1e-3 * timeout_ms : 0.0;
    if (e->s->nrounds == 0)
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(load_round(e), st, fail);
    e->loaded = 1;
    /* Post now unless the blocking path will run the first round when the caller waits. */
    if (e->deadline > 0 || !single_coll_round(e)) {
        XFER_CHECK_GOTO(post_round(e), st, fail);
        e->posted = 1;
    }
    return XFER_SUCCESS;
fail:
    e->active = 0;
    return st;
}

xfer_status_t xfer_exec_progress(xfer_exec_t *e, int blocking, int *done)
{
    xfer_status_t st = XFER_SUCCESS;
    const int bounded = e->deadline > 0;

    *done = 0;
    if (!e->active) {
        *done = 1;
        return XFER_SUCCESS;
    }
    while (e->round < e->s->nrounds) {
        int idx = MPI_UNDEFINED, flag = 0;

        if (!e->loaded) {
            XFER_CHECK_GOTO(load_round(e), st, fail);
            e->loaded = 1;
        }
        if (!e->posted) {
            if (e->view.n == 0) { /* nothing for this rank in this round */
                e->round++;
                e->loaded = 0;
                continue;
            }
            if (blocking && !bounded && single_coll_round(e)) {
                XFER_CHECK_GOTO(run_blocking_coll(e), st, fail);
                e->round++;
                e->loaded = 0;
                continue;
            }
            XFER_CHECK_GOTO(post_round(e), st, fail);
            e->posted = 1;
        }
        if (blocking && !bounded) {
            XFER_MPI_GOTO(MPI_Waitany(e->view.n, e->req, &idx, MPI_STATUS_IGNORE), st, fail);
            flag = 1;
        } else {
            XFER_MPI_GOTO(MPI_Testany(e->view.n, e->req, &idx, &flag, MPI_STATUS_IGNORE), st, fail);
        }
        if (flag && idx == MPI_UNDEFINED) { /* every request of the round has completed */
            e->round++;
            e->posted = 0;
            e->loaded = 0;
        } else if (flag) {
            XFER_CHECK_GOTO(start_op(e, chain_next(e, idx)), st, fail);
        } else if (bounded && MPI_Wtime() > e->deadline) {
            st = timeout_error(e);
            goto fail;
        } else if (!blocking) {
            return XFER_SUCCESS;
        }
    }
    e->active = 0;
    *done = 1;
    return XFER_SUCCESS;
fail:
    /* Requests still in flight are abandoned: after a failure or timeout the communicators
     * of this operation must not be used again (documented in coll.h). */
    e->active = 0;
    e->round = e->s->nrounds;
    return st;
}
