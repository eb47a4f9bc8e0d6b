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
#include "../sched/sim.h"
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

/* The simulator's view of one isomorphic collective: process r's lowered schedule, and what its
 * receive block u must hold at the end (send block i of process r - C^u, i = u for all-to-all
 * and 0 for allgather; nothing beyond a non-periodic edge). */
typedef struct iso_world {
    const xfer_iso_nbh_t *n;
    const xfer_iso_sched_t *sc;
} iso_world_t;

static xfer_status_t world_build(void *ctx, int rank, xfer_sched_t **out)
{
    const iso_world_t *w = ctx;
    return xfer_iso_lower(w->n, w->sc, rank, out);
}

static int world_expect(void *ctx, int rank, size_t u, size_t *want)
{
    const iso_world_t *w = ctx;
    const int src = xfer_iso_shift(w->n, rank, &w->n->off[u * (size_t) w->n->d], -1);
    if (src < 0)
        return 0;
    *want = w->sc->op == XFER_ISO_OP_ALLTOALL ? (size_t) src * (size_t) w->n->s + u : (size_t) src;
    return 1;
}

xfer_status_t xfer_iso_sched_simulate(const xfer_iso_nbh_t *n, const xfer_iso_sched_t *is,
                                      const xfer_sim_opts_t *opts, xfer_sim_stats_t *stats)
{
    iso_world_t w = {n, is};
    xfer_sim_flat_t f = {xfer_iso_size(n), &w, world_build, world_expect};
    return xfer_sim_run_flat(&f, opts, stats);
}
