/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The executor's MPI-facing pieces (exec.h, "internal"): int count arrays of collectives,
 * addresses and counts in a buffer's units, the struct datatypes of combined messages, and the
 * group collectives (nonblocking, or blocking when they are all there is to do).
 */
#include <limits.h>
#include <string.h>

#include "../core/core.h"
#include "exec.h"

xfer_status_t xfer_exec_int_counts(xfer_exec_t *e, int i)
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

void xfer_exec_free_types(xfer_exec_t *e)
{
    int i;
    if (!e->vtype)
        return;
    for (i = 0; i < e->s->nops; i++)
        if (e->vtype[i] != MPI_DATATYPE_NULL)
            MPI_Type_free(&e->vtype[i]); /* nothing to do on failure */
    e->vstale = 1;
}

unsigned char *xfer_exec_addr(const xfer_exec_t *e, int buf, size_t off)
{
    int i;
    for (i = 0; i < e->nremap[buf]; i++) {
        const xfer_exec_seg_t *g = &e->remap[buf][i];
        if (off >= g->off && off < g->off + g->len)
            return (unsigned char *) g->ptr + (MPI_Aint) (off - g->off) * e->unit_stride[buf];
    }
    return e->buf[buf] + (MPI_Aint) off * e->unit_stride[buf];
}

/* MPI count of @p len units of @p buf, or -1 beyond an int. */
int xfer_exec_count(const xfer_exec_t *e, int buf, size_t len)
{
    if (len > INT_MAX || (e->unit_count[buf] > 0 && len > INT_MAX / (size_t) e->unit_count[buf]))
        return -1;
    return (int) (len * (size_t) e->unit_count[buf]);
}

/* The struct datatypes of the combined messages, over the buffers bound now. */
xfer_status_t xfer_exec_make_types(xfer_exec_t *e)
{
    const xfer_sched_t *s = e->s;
    xfer_status_t st = XFER_SUCCESS;
    MPI_Aint *disp = NULL;
    MPI_Datatype *types = NULL;
    int *blen = NULL, maxp = 1, i, j;

    xfer_exec_free_types(e);
    for (i = 0; i < s->nops; i++)
        maxp = XFER_MAX(maxp, s->ops[i].npieces);
    disp = xfer_malloc((size_t) maxp * sizeof(*disp));
    blen = xfer_malloc((size_t) maxp * sizeof(*blen));
    types = xfer_malloc((size_t) maxp * sizeof(*types));
    if (!disp || !blen || !types) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "datatypes of messages of %d pieces", maxp);
        goto out;
    }
    for (i = 0; i < s->nops; i++) {
        const xfer_op_t *op = &s->ops[i];
        int rc;
        if (op->npieces == 0)
            continue;
        for (j = 0; j < op->npieces; j++) {
            const xfer_piece_t *pc = &s->pieces[op->piece0 + j];
            if ((blen[j] = xfer_exec_count(e, pc->buf, pc->len)) < 0) {
                st = XFER_ERR(XFER_ERR_TOO_LARGE, "%s: a piece of %zu %s exceeds MPI's int counts",
                              s->algo, pc->len, s->unit);
                goto out;
            }
            XFER_MPI_GOTO(MPI_Get_address(xfer_exec_addr(e, pc->buf, pc->off), &disp[j]), st, out);
            types[j] = e->unit_type[pc->buf];
        }
        XFER_MPI_GOTO(MPI_Type_create_struct(op->npieces, blen, disp, types, &e->vtype[i]), st,
                      out);
        if ((rc = MPI_Type_commit(&e->vtype[i])) != MPI_SUCCESS) {
            st = xfer_err_mpi(rc, __func__, "MPI_Type_commit");
            goto out;
        }
    }
    e->vstale = 0;
out:
    xfer_free(disp);
    xfer_free(blen);
    xfer_free(types);
    return st;
}

/* ---- blocking collectives (the only thing to do, no bound) ------------------------------------
 */

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

/* Start collective op @p k: the nonblocking MPI call into *@p r, or with @p r NULL the blocking
 * one (then an allgatherv may run as libxfer's ring instead, see use_ring). */
/* (Collectives are stored operations, so @p k indexes s->ops and the count arrays.) */
xfer_status_t xfer_exec_coll(xfer_exec_t *e, int k, MPI_Request *r)
{
    const xfer_op_t *op = &e->ops[k];
    MPI_Comm comm = e->gcomm[op->group];
    unsigned char *b = e->buf[op->buf] + op->off;
    xfer_status_t st = XFER_SUCCESS;
    int rc;

    switch (op->kind) {
    case XFER_OP_ALLGATHERV:
        if (!r && use_ring(e, e->icounts[k], comm))
            return ring_allgatherv(e, b, e->icounts[k], e->idispls[k], comm);
        rc = r ? MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_BYTE, b, e->icounts[k], e->idispls[k],
                                 MPI_BYTE, comm, r)
               : MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, b, e->icounts[k], e->idispls[k],
                                MPI_BYTE, comm);
        break;
    case XFER_OP_BCAST:
        rc = r ? MPI_Ibcast(b, (int) op->len, MPI_BYTE, op->peer, comm, r)
               : MPI_Bcast(b, (int) op->len, MPI_BYTE, op->peer, comm);
        break;
    default: /* GATHERV */
        rc = r ? MPI_Igatherv(b, (int) op->len, MPI_BYTE, e->buf[op->buf2] + op->off2,
                              e->icounts[k], e->idispls[k], MPI_BYTE, op->peer, comm, r)
               : MPI_Gatherv(b, (int) op->len, MPI_BYTE, e->buf[op->buf2] + op->off2, e->icounts[k],
                             e->idispls[k], MPI_BYTE, op->peer, comm);
    }
    XFER_MPI_GOTO(rc, st, out);
out:
    return st;
}
