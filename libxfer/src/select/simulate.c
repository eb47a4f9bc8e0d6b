/* SPDX-License-Identifier: BSD-3-Clause */
/* Public entry points of the simulator: shapes from user descriptions, registry lookup. */
#include <string.h>

#include <xfer/sim.h>

#include "../coll/hier.h"
#include "../core/core.h"
#include "../sched/sim.h"
#include "select.h"

/* A shape with its own count arrays (they must outlive schedules built on it). */
typedef struct owned_shape {
    xfer_shape_t s;
    size_t *cnt[2], *pre[2];
} owned_shape_t;

static void shape_free(owned_shape_t *o)
{
    int g;
    if (!o)
        return;
    for (g = 0; g < 2; g++) {
        xfer_free(o->cnt[g]);
        xfer_free(o->pre[g]);
    }
    xfer_free(o);
}

static xfer_status_t shape_make(const xfer_side_t *a, const xfer_side_t *b, owned_shape_t **out)
{
    const xfer_side_t *side[2] = {a, b};
    owned_shape_t *o;
    int g, i;

    *out = NULL;
    if (!a || !b || a->n < 1 || b->n < 1)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "both groups need at least one rank");
    o = xfer_calloc(1, sizeof(*o));
    if (!o)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "shape");
    for (g = 0; g < 2; g++) {
        const xfer_side_t *sd = side[g];
        o->s.n[g] = sd->n;
        if (!sd->counts) {
            if (sd->k && (size_t) sd->n > (size_t) -1 / sd->k) {
                shape_free(o);
                return XFER_ERR(XFER_ERR_TOO_LARGE, "%d x %zu bytes overflows", sd->n, sd->k);
            }
            o->s.ucnt[g] = sd->k;
            o->s.total[g] = sd->k * (size_t) sd->n;
            continue;
        }
        o->cnt[g] = xfer_malloc((size_t) sd->n * sizeof(size_t));
        o->pre[g] = xfer_malloc(((size_t) sd->n + 1) * sizeof(size_t));
        if (!o->cnt[g] || !o->pre[g]) {
            shape_free(o);
            return XFER_ERR(XFER_ERR_NO_MEMORY, "counts of %d ranks", sd->n);
        }
        o->pre[g][0] = 0;
        for (i = 0; i < sd->n; i++) {
            o->cnt[g][i] = sd->counts[i];
            o->pre[g][i + 1] = o->pre[g][i] + sd->counts[i];
        }
        o->s.cnt[g] = o->cnt[g];
        o->s.pre[g] = o->pre[g];
        o->s.total[g] = o->pre[g][sd->n];
    }
    *out = o;
    return XFER_SUCCESS;
}

static xfer_status_t find(const char *name, const xfer_algo_t **out)
{
    *out = xfer_algo_find(name);
    if (!*out)
        return XFER_ERR(XFER_ERR_UNKNOWN_ALGORITHM, "unknown algorithm \"%s\"",
                        name ? name : "(null)");
    return XFER_SUCCESS;
}

xfer_status_t xfer_sim_params_init(xfer_sim_params_t *p)
{
    xfer_sim_opts_t o;
    if (!p)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "params is NULL");
    xfer_sim_opts_default(&o);
    p->alpha = o.alpha;
    p->beta = o.beta;
    p->check_ports = o.check_ports;
    p->network = 0;
    return XFER_SUCCESS;
}

/* The simulator's options from the public parameters (NULL: defaults). */
static void sim_opts(const xfer_sim_params_t *params, xfer_sim_opts_t *o)
{
    xfer_sim_opts_default(o);
    if (params) {
        o->alpha = params->alpha;
        o->beta = params->beta;
        o->check_ports = params->check_ports;
    }
}

static void sim_report(const xfer_sim_stats_t *st, xfer_sim_report_t *rep)
{
    memset(rep, 0, sizeof(*rep));
    rep->steps = st->steps;
    rep->rounds = st->max_rounds;
    rep->messages = st->messages;
    rep->max_sent = st->max_sent;
    rep->max_recv = st->max_recv;
    rep->total_sent = st->total_sent;
    rep->max_tmp = st->max_tmp;
    rep->collectives = st->collectives;
    rep->predicted = st->predicted;
    rep->bound = st->bound;
}

/* @p algorithm and its shape (@p a, @p b), which it must be able to run; relay pipelines cut as
 * across a network when @p params say so. */
static xfer_status_t algo_shape(const char *algorithm, const xfer_side_t *a, const xfer_side_t *b,
                                const xfer_sim_params_t *params, const xfer_algo_t **al,
                                owned_shape_t **sh)
{
    const char *why;
    xfer_status_t rc;

    *sh = NULL;
    XFER_CHECK_GOTO(find(algorithm, al), rc, fail);
    XFER_CHECK_GOTO(shape_make(a, b, sh), rc, fail);
    (*sh)->s.seg_cap = params && params->network ? XFER_NET_SEGMENT : 0;
    if (!xfer_algo_supports(*al, &(*sh)->s, &why)) {
        rc = XFER_ERR(XFER_ERR_NOT_SUPPORTED, "%s cannot run this shape: %s", (*al)->name, why);
        goto fail;
    }
    return XFER_SUCCESS;
fail:
    shape_free(*sh);
    *sh = NULL;
    return rc;
}

xfer_status_t xfer_simulate(const char *algorithm, const xfer_side_t *a, const xfer_side_t *b,
                            const xfer_sim_params_t *params, xfer_sim_report_t *rep)
{
    const xfer_algo_t *al;
    owned_shape_t *sh = NULL;
    xfer_sim_opts_t o;
    xfer_sim_stats_t st;
    xfer_status_t rc;

    if (!rep)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "report is NULL");
    XFER_CHECK_GOTO(algo_shape(algorithm, a, b, params, &al, &sh), rc, out);
    sim_opts(params, &o);
    XFER_CHECK_GOTO(xfer_sim_run(&sh->s, al->model, &o, &st), rc, out);
    sim_report(&st, rep);
out:
    shape_free(sh);
    return rc;
}

xfer_status_t xfer_sim_model(const char *algorithm, const xfer_side_t *a, const xfer_side_t *b,
                             const xfer_sim_params_t *params, double *seconds, double *bound)
{
    const xfer_algo_t *al;
    owned_shape_t *sh = NULL;
    xfer_sim_opts_t o;
    xfer_model_t m;
    xfer_status_t rc;

    if (!seconds)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "seconds is NULL");
    XFER_CHECK_GOTO(algo_shape(algorithm, a, b, params, &al, &sh), rc, out);
    sim_opts(params, &o);
    memset(&m, 0, sizeof(m));
    m.alpha = o.alpha;
    m.beta = o.beta;
    m.nnodes = a->n + b->n;
    m.max_ppn = 1;
    *seconds = xfer_algo_predict(al, &sh->s, &m);
    if (bound)
        *bound = xfer_sim_bound(&sh->s, o.alpha, o.beta);
out:
    shape_free(sh);
    return rc;
}

xfer_status_t xfer_sched_build(const char *algorithm, const xfer_side_t *a, const xfer_side_t *b,
                               int group, int rank, xfer_sched_t **sched)
{
    const xfer_algo_t *al;
    owned_shape_t *sh = NULL;
    xfer_sched_t *s = NULL;
    xfer_status_t rc;

    if (!sched)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "sched is NULL");
    *sched = NULL;
    XFER_CHECK_GOTO(algo_shape(algorithm, a, b, NULL, &al, &sh), rc, fail);
    XFER_CHECK_GOTO(xfer_sched_create(&sh->s, group, rank, &s), rc, fail);
    XFER_CHECK_GOTO(al->model(&sh->s, s), rc, fail);
    s->owned = sh; /* freed with the schedule */
    *sched = s;
    return XFER_SUCCESS;
fail:
    xfer_sched_destroy(&s);
    shape_free(sh);
    return rc;
}

xfer_status_t xfer_sim_nodes_init(xfer_sim_nodes_t *n)
{
    if (!n)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "nodes is NULL");
    memset(n, 0, sizeof(*n));
    n->node_size[0] = n->node_size[1] = 2;
    n->senders = 1;
    n->calls = 3;
    n->jitter_runs = 16;
    return XFER_SUCCESS;
}

static xfer_status_t hier_virtual(const char *inner, const xfer_sim_nodes_t *n,
                                  xfer_hier_virtual_t *v)
{
    if (!n)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "nodes is NULL");
    if (!inner)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "inner algorithm is NULL");
    if (!xfer_algo_find(inner))
        return XFER_ERR(XFER_ERR_UNKNOWN_ALGORITHM, "unknown inner algorithm \"%s\"", inner);
    if (n->node_size[0] < 1 || n->node_size[1] < 1 || n->calls < 1)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "nodes of %d and %d ranks, %d calls: need >= 1",
                        n->node_size[0], n->node_size[1], n->calls);
    v->node_size[0] = n->node_size[0];
    v->node_size[1] = n->node_size[1];
    v->roundrobin = n->roundrobin;
    v->senders = n->senders;
    v->barrier = n->barrier;
    v->inner = inner;
    return XFER_SUCCESS;
}

xfer_status_t xfer_simulate_hier(const char *inner, const xfer_side_t *a, const xfer_side_t *b,
                                 const xfer_sim_nodes_t *nodes, const xfer_sim_params_t *params,
                                 xfer_sim_report_t *rep)
{
    owned_shape_t *sh = NULL;
    xfer_hier_virtual_t v;
    xfer_sim_opts_t o;
    xfer_sim_stats_t st;
    xfer_status_t rc;
    int run;

    if (!rep)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "report is NULL");
    XFER_CHECK_GOTO(hier_virtual(inner, nodes, &v), rc, out);
    XFER_CHECK_GOTO(shape_make(a, b, &sh), rc, out);
    sh->s.seg_cap = params && params->network ? XFER_NET_SEGMENT : 0;
    sim_opts(params, &o);
    XFER_CHECK_GOTO(xfer_hier_simulate(&sh->s, &v, nodes->calls, &o, &st), rc, out);
    for (run = 1; run <= nodes->jitter_runs; run++) { /* other interleavings */
        xfer_sim_opts_t j = o;
        j.jitter = 100.0 * (o.alpha > 0 ? o.alpha : 1e-6);
        j.seed = (unsigned long) run;
        XFER_CHECK_GOTO(xfer_hier_simulate(&sh->s, &v, nodes->calls, &j, NULL), rc, out);
    }
    sim_report(&st, rep);
out:
    shape_free(sh);
    return rc;
}

xfer_status_t xfer_sched_build_hier(const char *inner, const xfer_side_t *a, const xfer_side_t *b,
                                    const xfer_sim_nodes_t *nodes, int group, int rank,
                                    xfer_sched_t **sched)
{
    owned_shape_t *sh = NULL;
    xfer_hier_virtual_t v;
    xfer_sched_t *s = NULL;
    xfer_status_t rc;

    if (!sched)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "sched is NULL");
    *sched = NULL;
    XFER_CHECK_GOTO(hier_virtual(inner, nodes, &v), rc, fail);
    XFER_CHECK_GOTO(shape_make(a, b, &sh), rc, fail);
    if (group < 0 || group > 1 || rank < 0 || rank >= sh->s.n[group]) {
        rc = XFER_ERR(XFER_ERR_INVALID_ARG, "no rank %d in group %d", rank, group);
        goto fail;
    }
    XFER_CHECK_GOTO(xfer_hier_sched_virtual(&sh->s, &v, group, rank, &s), rc, fail);
    s->owned = sh;
    *sched = s;
    return XFER_SUCCESS;
fail:
    xfer_sched_destroy(&s);
    shape_free(sh);
    return rc;
}

xfer_status_t xfer_sched_free(xfer_sched_t **sched)
{
    owned_shape_t *sh;
    if (!sched || !*sched)
        return XFER_SUCCESS;
    sh = (*sched)->owned;
    xfer_sched_destroy(sched);
    shape_free(sh);
    return XFER_SUCCESS;
}
