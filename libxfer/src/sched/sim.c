/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulator's set-up and driver (sim.h): every rank's schedule built and its state
 * allocated, the event loop run to the end, the final checks made and the statistics summed.
 * The stages live beside it: sim_queue.c (events), sim_round.c (rounds, copies, messages),
 * sim_coll.c (local collectives), sim_node.c (hierarchies), sim_check.c (checks, messages),
 * sim_labels.c (label maps).
 */
#include <string.h>

#include "sim_int.h"

void sim_free(sim_t *m)
{
    int i, b, k, w;
    if (m->r)
        for (i = 0; i < m->N; i++) {
            sim_rank_t *R = &m->r[i];
            w = R->s ? xfer_sched_widest_round(R->s) : 0;
            for (b = 0; b < XFER_NBUFS; b++)
                xfer_rv_free(&R->map[b]);
            if (R->state)
                for (k = 0; k < w; k++)
                    xfer_rv_free(&R->state[k].cap);
            xfer_sched_destroy(&R->s);
            xfer_free(R->state); /* with scratch and pend */
            xfer_free(R->acc.a[0]);
            xfer_free(R->acc.a[1]);
        }
    for (i = 0; i < m->ninsts; i++) {
        xfer_free(m->insts[i].rank);
        xfer_free(m->insts[i].op);
    }
    xfer_free(m->insts);
    xfer_free(m->r);
    sim_queue_free(m);
    sim_nodes_free(m);
    xfer_free(m->slow);
    xfer_rv_free(&m->tmp);
    xfer_rv_free(&m->tmp2);
    xfer_hmap_fini(&m->coll_seq);
    xfer_hmap_fini(&m->coll);
}

/* Per-rank simulator state for the schedule already in R->s. */
xfer_status_t sim_setup_state(sim_rank_t *R, int rank)
{
    const int w = xfer_sched_widest_round(R->s);
    const size_t nscratch = R->s->gen ? (size_t) w : 0;
    int k, most = 0;

    /* one block: what a round touches of a rank stays close together */
    R->state = xfer_calloc(1, (size_t) w * (sizeof(sim_opstate_t) + sizeof(int)) +
                                  nscratch * sizeof(xfer_op_t));
    if (!R->state)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "simulator state of rank %d", rank);
    R->scratch = nscratch ? (xfer_op_t *) (R->state + w) : NULL;
    R->pend = (int *) ((char *) (R->state + w) + nscratch * sizeof(xfer_op_t));
    if (R->s->npieces > 0) { /* room for the widest combined message's accesses */
        for (k = 0; k < R->s->nops; k++)
            most = XFER_MAX(most, R->s->ops[k].npieces);
        R->acc.a[0] = xfer_malloc((size_t) most * sizeof(access_t));
        R->acc.a[1] = xfer_malloc((size_t) most * sizeof(access_t));
        if (!R->acc.a[0] || !R->acc.a[1])
            return XFER_ERR(XFER_ERR_NO_MEMORY, "simulator state of rank %d", rank);
        R->acc.cap = most;
    }
    return XFER_SUCCESS;
}

xfer_status_t sim_send_labels(sim_t *m, int rank)
{
    sim_rank_t *R = &m->r[rank];
    const size_t n = R->s->send_bytes;
    run_t x = {0, n, 0, 0};
    if (m->flat) { /* global blocks [rank * send, (rank + 1) * send) */
        x.goff = (size_t) rank * n;
    } else { /* the rank's own block at its global offset, labelled with its call */
        x.goff = xfer_shape_offset(m->shape, R->s->group, R->s->rank);
        x.grp = R->s->group + 2 * R->call;
    }
    R->map[XFER_BUF_SEND].n = 0;
    if (n && !xfer_rv_push(&R->map[XFER_BUF_SEND], x))
        return sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
    return XFER_SUCCESS;
}

static xfer_status_t setup_rank(sim_t *m, int rank)
{
    const xfer_shape_t *sh = m->shape;
    const int g = rank < sh->n[0] ? 0 : 1, r = g ? rank - sh->n[0] : rank;
    sim_rank_t *R = &m->r[rank];
    xfer_status_t st;

    XFER_CHECK_GOTO(xfer_sched_create(sh, g, r, &R->s), st, out);
    XFER_CHECK_GOTO(m->build(sh, R->s), st, out);
    XFER_CHECK_GOTO(sim_setup_state(R, rank), st, out);
    st = sim_send_labels(m, rank);
out:
    return st;
}

static xfer_status_t setup_flat_rank(sim_t *m, int rank)
{
    sim_rank_t *R = &m->r[rank];
    xfer_status_t st;

    XFER_CHECK_GOTO(m->flat->build(m->flat->ctx, rank, &R->s), st, out);
    if (!R->s || R->s->n[0] != m->N || R->s->rank != rank) {
        st = XFER_ERR(XFER_ERR_VERIFY,
                      "flat world of %d: the schedule built for process %d is "
                      "not one of its own",
                      m->N, rank);
        goto out;
    }
    XFER_CHECK_GOTO(sim_setup_state(R, rank), st, out);
    st = sim_send_labels(m, rank);
out:
    return st;
}

void xfer_sim_opts_default(xfer_sim_opts_t *o)
{
    o->alpha = 2e-6;
    o->beta = 1e-10;
    o->check_ports = 1;
    o->jitter = 0.0;
    o->seed = 0;
}

/* Run the schedules already set up, then check and summarise. */
xfer_status_t sim_drive(sim_t *m, xfer_sim_stats_t *stats)
{
    int rank, nslots = -1;
    ready_t x;

    for (rank = 0; rank < m->N; rank++) {
        if (nslots >= 0 && m->r[rank].s->nslots != nslots)
            return XFER_ERR(XFER_ERR_VERIFY, "%s: ranks disagree on the number of split slots",
                            m->r[rank].s->algo);
        nslots = m->r[rank].s->nslots;
    }
    if (m->o.jitter > 0) { /* each rank's slowness, and a start time of its own */
        m->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t) m->o.seed;
        m->slow = xfer_malloc((size_t) m->N * sizeof(double));
        if (!m->slow)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "simulator jitter");
        for (rank = 0; rank < m->N; rank++) {
            int e = (int) (6.0 * sim_rand01(m)); /* about log-uniform, 1 .. 128 */
            m->slow[rank] = 1.0 + sim_rand01(m);
            while (e-- > 0)
                m->slow[rank] *= 2.0;
            m->r[rank].clock = 4.0 * sim_delay(m, rank);
        }
    }
    for (rank = 0; rank < m->N && m->err == XFER_SUCCESS; rank++)
        sim_start_round(m, rank);
    while (m->err == XFER_SUCCESS && sim_dequeue(m, &x)) {
        if (x.finish)
            sim_finish(m, x.rank, x.k, x.t);
        else
            sim_post(m, x.rank, x.k);
    }
    if (m->err == XFER_SUCCESS)
        for (rank = 0; rank < m->N; rank++)
            if (m->r[rank].round < m->r[rank].s->nrounds) {
                sim_describe_stuck(m);
                break;
            }
    if (m->err == XFER_SUCCESS) {
        if (m->flat)
            sim_verify_flat(m);
        else
            sim_verify(m);
    }
    if (m->err == XFER_SUCCESS && stats) {
        memset(stats, 0, sizeof(*stats));
        stats->messages = m->st.messages;
        stats->collectives = m->st.collectives;
        for (rank = 0; rank < m->N; rank++) {
            const sim_rank_t *R = &m->r[rank];
            stats->steps = XFER_MAX(stats->steps, R->s->nrounds);
            stats->max_rounds = XFER_MAX(stats->max_rounds, R->active_rounds);
            stats->max_sent = XFER_MAX(stats->max_sent, R->sent);
            stats->max_recv = XFER_MAX(stats->max_recv, R->recvd);
            stats->max_tmp = XFER_MAX(stats->max_tmp, R->s->tmp_bytes);
            stats->total_sent += R->sent;
            stats->predicted = XFER_MAX(stats->predicted, R->clock);
        }
        if (m->shape)
            stats->bound = xfer_sim_bound(m->shape, m->o.alpha, m->o.beta);
    }
    return m->err;
}

double xfer_sim_bound(const xfer_shape_t *s, double alpha, double beta)
{
    return (s->total[0] || s->total[1] ? alpha : 0.0) +
           beta * (double) XFER_MAX(s->total[0], s->total[1]);
}

xfer_status_t sim_run(sim_t *m, int N, const xfer_sim_opts_t *opts,
                      xfer_status_t (*prepare)(sim_t *m),
                      xfer_status_t (*setup)(sim_t *m, int rank), xfer_sim_stats_t *stats)
{
    xfer_status_t st;
    int rank;

    m->N = N;
    if (opts)
        m->o = *opts;
    else
        xfer_sim_opts_default(&m->o);
    m->r = xfer_calloc((size_t) N, sizeof(sim_rank_t));
    if (!m->r || !xfer_hmap_init(&m->coll_seq, 64) || !xfer_hmap_init(&m->coll, 64)) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "simulator state for %d ranks", N);
        goto out;
    }
    if (prepare)
        XFER_CHECK_GOTO(prepare(m), st, out);
    for (rank = 0; rank < m->N; rank++)
        XFER_CHECK_GOTO(setup(m, rank), st, out);
    st = sim_drive(m, stats);
out:
    sim_free(m);
    return st;
}

xfer_status_t xfer_sim_run(const xfer_shape_t *shape, xfer_builder_fn build,
                           const xfer_sim_opts_t *opts, xfer_sim_stats_t *stats)
{
    sim_t m;

    memset(&m, 0, sizeof(m));
    m.shape = shape;
    m.build = build;
    if (shape->n[0] < 1 || shape->n[1] < 1 || shape->n[0] + shape->n[1] >= XFER_SIM_MAX_RANKS)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "simulator shape %d x %d out of range", shape->n[0],
                        shape->n[1]);
    return sim_run(&m, shape->n[0] + shape->n[1], opts, NULL, setup_rank, stats);
}

xfer_status_t xfer_sim_run_flat(const xfer_sim_flat_t *world, const xfer_sim_opts_t *opts,
                                xfer_sim_stats_t *stats)
{
    sim_t m;

    memset(&m, 0, sizeof(m));
    m.flat = world;
    if (!world || !world->build || !world->expect || world->n < 1 || world->n >= XFER_SIM_MAX_RANKS)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "simulator: flat world of %d processes",
                        world ? world->n : 0);
    return sim_run(&m, world->n, opts, NULL, setup_flat_rank, stats);
}
