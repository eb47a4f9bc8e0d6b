/* SPDX-License-Identifier: BSD-3-Clause */
#include <limits.h>
#include <string.h>

#include "../core/core.h"
#include "exec.h"

static int is_coll(int kind)
{
    return kind == XFER_OP_ALLGATHERV || kind == XFER_OP_BCAST || kind == XFER_OP_GATHERV;
}

static int rbegin(const xfer_exec_t *e)
{
    return e->s->round_start[e->round];
}

static int rend(const xfer_exec_t *e)
{
    return e->s->round_start[e->round + 1];
}

/* A round made of one collective runs as the blocking MPI call (better tuned than the
 * nonblocking one in both MPICH and Open MPI) when nothing else has to progress. */
static int single_coll_round(const xfer_exec_t *e)
{
    return rend(e) - rbegin(e) == 1 && is_coll(e->s->ops[rbegin(e)].kind);
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
                             MPI_Comm *gcomm, int tag)
{
    xfer_status_t st = XFER_SUCCESS;
    int i, widest = 1;

    memset(e, 0, sizeof(*e));
    e->s = s;
    e->merged = merged;
    e->gcomm = gcomm;
    e->tag = tag;
    e->round = s->nrounds;
    for (i = 0; i < s->nrounds; i++)
        widest = XFER_MAX(widest, s->round_start[i + 1] - s->round_start[i]);
    e->req = xfer_malloc((size_t) widest * sizeof(MPI_Request));
    e->icounts = xfer_calloc((size_t) XFER_MAX(s->nops, 1), sizeof(int *));
    e->idispls = xfer_calloc((size_t) XFER_MAX(s->nops, 1), sizeof(int *));
    if (!e->req || !e->icounts || !e->idispls) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "executor state for %d operations", s->nops);
        goto fail;
    }
    for (i = 0; i < s->nops; i++) {
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
    memset(e, 0, sizeof(*e));
}

void xfer_exec_bind(xfer_exec_t *e, const void *send, void *recv, void *tmp)
{
    /* SEND is only ever read (MPI_Isend, memcpy source, collective send buffer). */
    e->buf[XFER_BUF_SEND] = (unsigned char *) (uintptr_t) send;
    e->buf[XFER_BUF_RECV] = recv;
    e->buf[XFER_BUF_TMP] = tmp;
}

static xfer_status_t run_blocking_coll(xfer_exec_t *e, int i)
{
    const xfer_op_t *op = &e->s->ops[i];
    MPI_Comm comm = e->gcomm[op->group];
    xfer_status_t st = XFER_SUCCESS;

    switch (op->kind) {
    case XFER_OP_ALLGATHERV:
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

/* Start op @p i; a COPY completes at once and hands over to the next op of its chain. */
static xfer_status_t start_op(xfer_exec_t *e, int i)
{
    const xfer_op_t *op;
    MPI_Request *r;
    MPI_Comm comm;
    xfer_status_t st = XFER_SUCCESS;

    for (;;) {
        op = &e->s->ops[i];
        r = &e->req[i - rbegin(e)];
        comm = op->group >= 0 ? e->gcomm[op->group] : e->merged;
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
            break;
        default:
            return XFER_ERR(XFER_ERR_INTERNAL, "unknown operation kind %d", op->kind);
        }
        /* the copy is done: continue its chain, if any */
        if (op->chain == 0)
            return st;
        {
            int j, next = -1;
            for (j = i + 1; j < rend(e); j++)
                if (e->s->ops[j].chain == op->chain) {
                    next = j;
                    break;
                }
            if (next < 0)
                return st;
            i = next;
        }
    }
out:
    return st;
}

static xfer_status_t post_round(xfer_exec_t *e)
{
    xfer_status_t st = XFER_SUCCESS;
    int b = rbegin(e), n = rend(e) - b, i, j;

    for (i = 0; i < n; i++)
        e->req[i] = MPI_REQUEST_NULL;
    for (i = b; i < b + n; i++) {
        int first = 1;
        if (e->s->ops[i].chain != 0)
            for (j = b; j < i && first; j++)
                first = e->s->ops[j].chain != e->s->ops[i].chain;
        if (first)
            XFER_CHECK_GOTO(start_op(e, i), st, out);
    }
out:
    return st;
}

static xfer_status_t on_complete(xfer_exec_t *e, int slot)
{
    int i = rbegin(e) + slot, j;
    int chain = e->s->ops[i].chain;
    if (chain == 0)
        return XFER_SUCCESS;
    for (j = i + 1; j < rend(e); j++)
        if (e->s->ops[j].chain == chain)
            return start_op(e, j);
    return XFER_SUCCESS;
}

static xfer_status_t timeout_error(xfer_exec_t *e, int timeout_ms)
{
    int i;
    for (i = rbegin(e); i < rend(e); i++)
        if (e->req[i - rbegin(e)] != MPI_REQUEST_NULL) {
            const xfer_op_t *op = &e->s->ops[i];
            const int ng0 = e->s->n[0];
            if (op->kind == XFER_OP_SEND || op->kind == XFER_OP_RECV)
                return XFER_ERR(XFER_ERR_TIMEOUT,
                                "%s/%s: no progress within %d ms in round %d: %s of %zu bytes "
                                "%s group %d rank %d still pending",
                                e->s->algo, e->s->variant, timeout_ms, e->round,
                                xfer_op_name(op->kind), op->len,
                                op->kind == XFER_OP_SEND ? "to" : "from", op->peer < ng0 ? 0 : 1,
                                op->peer < ng0 ? op->peer : op->peer - ng0);
            return XFER_ERR(XFER_ERR_TIMEOUT,
                            "%s/%s: no progress within %d ms in round %d: local %s still pending",
                            e->s->algo, e->s->variant, timeout_ms, e->round,
                            xfer_op_name(op->kind));
        }
    return XFER_ERR(XFER_ERR_TIMEOUT, "%s: timed out after %d ms", e->s->algo, timeout_ms);
}

xfer_status_t xfer_exec_start(xfer_exec_t *e, int timeout_ms)
{
    xfer_status_t st = XFER_SUCCESS;

    if (e->active)
        return XFER_ERR(XFER_ERR_STATE, "operation already active");
    e->active = 1;
    e->round = 0;
    e->posted = 0;
    e->timeout_ms = timeout_ms;
    e->deadline = timeout_ms > 0 ? MPI_Wtime() + 1e-3 * timeout_ms : 0.0;
    /* Post now unless the blocking path will run the first round when the caller waits. */
    if (e->s->nrounds > 0 && (e->deadline > 0 || !single_coll_round(e))) {
        st = post_round(e);
        if (st != XFER_SUCCESS) {
            e->active = 0;
            return st;
        }
        e->posted = 1;
    }
    return XFER_SUCCESS;
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
        int idx = MPI_UNDEFINED, flag = 0, n = rend(e) - rbegin(e);

        if (!e->posted) {
            if (blocking && !bounded && single_coll_round(e)) {
                XFER_CHECK_GOTO(run_blocking_coll(e, rbegin(e)), st, fail);
                e->round++;
                continue;
            }
            XFER_CHECK_GOTO(post_round(e), st, fail);
            e->posted = 1;
        }
        if (blocking && !bounded) {
            XFER_MPI_GOTO(MPI_Waitany(n, e->req, &idx, MPI_STATUS_IGNORE), st, fail);
            flag = 1;
        } else {
            XFER_MPI_GOTO(MPI_Testany(n, e->req, &idx, &flag, MPI_STATUS_IGNORE), st, fail);
        }
        if (flag && idx == MPI_UNDEFINED) { /* every request of the round has completed */
            e->round++;
            e->posted = 0;
        } else if (flag) {
            XFER_CHECK_GOTO(on_complete(e, idx), st, fail);
        } else if (bounded && MPI_Wtime() > e->deadline) {
            st = timeout_error(e, e->timeout_ms);
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
