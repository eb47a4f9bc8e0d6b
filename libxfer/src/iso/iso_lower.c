/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An isomorphic step list (the same on every process) lowered to one process's schedule of the
 * engine (sched.h): each step becomes a receive from R - vec and a send to R + vec, each one
 * combined message of the step's parts (no packing: the executor describes the parts with a
 * struct datatype). Offsets and lengths count blocks; the executor is told the block datatype
 * of each buffer. Steps run one round each, or all in one round for a concurrent schedule; a
 * peer beyond a non-periodic edge is left out (its receive blocks stay untouched, as with
 * MPI_PROC_NULL).
 */
#include "../core/core.h"
#include "../sched/sched.h"
#include "iso_sched.h"

static int engine_buf(int iso_buf)
{
    return iso_buf == XFER_ISO_SEND   ? XFER_BUF_SEND
           : iso_buf == XFER_ISO_RECV ? XFER_BUF_RECV
                                      : XFER_BUF_TMP;
}

/* One side of step @p stp: the message of its parts, towards (send) or from @p peer. */
static void side(xfer_sched_t *s, const xfer_iso_sched_t *is, const xfer_iso_step_t *stp, int kind,
                 int peer)
{
    for (int k = 0; k < stp->nparts; k++) {
        const xfer_iso_part_t *p = &is->parts[stp->first + k];
        const int buf = engine_buf(kind == XFER_OP_SEND ? p->sbuf : p->rbuf);
        const size_t slot = (size_t) (kind == XFER_OP_SEND ? p->sslot : p->rslot);
        if (k == 0)
            xfer_sched_p2p_on(s, kind, XFER_COMM_MAIN, peer, buf, slot, 1, 0);
        else
            xfer_sched_piece(s, buf, slot, 1);
    }
}

xfer_status_t xfer_iso_lower(const xfer_iso_nbh_t *n, const xfer_iso_sched_t *is, int rank,
                             xfer_sched_t **out)
{
    xfer_sched_t *s = NULL;
    xfer_status_t st;
    const size_t nsend = is->op == XFER_ISO_OP_ALLTOALL ? (size_t) is->s : 1;

    *out = NULL;
    XFER_CHECK_GOTO(xfer_sched_create_flat(xfer_iso_size(n), rank, nsend, (size_t) is->s, &s), st,
                    fail);
    s->algo = is->algo;
    s->variant = is->op == XFER_ISO_OP_ALLGATHER ? "allgather" : "alltoall";
    s->tmp_bytes = (size_t) is->ntmp;
    s->max_ports = is->concurrent ? is->nsteps : 1;
    for (int t = 0; t < is->nsteps; t++) {
        const xfer_iso_step_t *stp = &is->steps[t];
        const int dst = xfer_iso_shift(n, rank, stp->vec, 1);
        const int src = xfer_iso_shift(n, rank, stp->vec, -1);
        if (!is->concurrent)
            xfer_sched_round(s); /* each step waits for the one before */
        if (src >= 0)            /* receive first: the peer's send finds it posted */
            side(s, is, stp, XFER_OP_RECV, src);
        if (dst >= 0)
            side(s, is, stp, XFER_OP_SEND, dst);
    }
    XFER_CHECK_GOTO(xfer_sched_finish(s), st, fail);
    *out = s;
    return XFER_SUCCESS;
fail:
    xfer_sched_destroy(&s);
    return st;
}
