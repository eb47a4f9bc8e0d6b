/* SPDX-License-Identifier: BSD-3-Clause */
/* A plan's algorithm: the named one, or auto's choice (measured, modelled, learned, flat or node
 * staging), traced with XFER_TRACE. The selector (select/selector.h) owns the environment, the
 * tuning file, the model and the learning; this file applies them to a plan. */
#include <limits.h>
#include <string.h>
#include "../core/core.h"
#include "coll.h"

/* ---- selection ----------------------------------------------------------------------------- */

static void trace_choice(const xfer_plan_t *p, const char *how)
{
    const int lvl = xfer_trace_level();
    if (lvl < 1 || (lvl < 2 && p->topo->rank != 0))
        return;
    xfer_log(XFER_LOG_TRACE, "%s%s group %d rank %d: p=%d q=%d bytes %zu|%zu -> %s [%s]",
             p->call.kind == XFER_CALL_ALLGATHER ? "allgather" : "allgatherv",
             p->persistent ? "_init" : "", p->topo->group, p->topo->rank, p->shape.n[0],
             p->shape.n[1], p->shape.total[0], p->shape.total[1], p->name, how);
}

/* auto: would node staging beat the best flat algorithm? When ranks share nodes, the flat
 * algorithms' messages between nodes share each node's link (modelled as a link per rank that is
 * max-ranks-per-node times slower); a hierarchy crosses each link once per stripe with node
 * aggregates and pays the shared-memory copies instead (xfer_hier_predict). Whether it wins
 * depends on beta against gamma: set XFER_BETA to the network's time per byte. Virtual nodes are
 * for testing and never chosen automatically. */
static xfer_status_t consider_hier(xfer_plan_t *p, const xfer_model_t *m, char *how, size_t len)
{
    const xfer_nodes_t *L0, *L1;
    xfer_model_t flat = *m;
    double t_flat, t_hier;
    const char *inner = "";
    int ppn;
    xfer_status_t st;
    char *end;

    XFER_CHECK_GOTO(xfer_topo_nodes(p->topo), st, out);
    L0 = &p->topo->hm->nodes[0];
    L1 = &p->topo->hm->nodes[1];
    ppn = XFER_MAX(L0->max_ppn, L1->max_ppn);
    if (L0->is_virtual || L1->is_virtual || ppn < 2 || (L0->nnodes < 2 && L1->nnodes < 2))
        return XFER_SUCCESS;
    flat.beta *= ppn;
    t_flat = xfer_algo_predict(p->algo, &p->shape, &flat);
    XFER_CHECK_GOTO(xfer_hier_predict(p->topo, &p->shape, m, p->opts.hier_sync, &t_hier, &inner),
                    st, out);
    if (t_hier < t_flat) {
        p->opts.hier = 1;
        p->opts.hier_inner = NULL;
    }
    end = how + strlen(how);
    snprintf(end, len - (size_t) (end - how),
             "; nodes %d|%d, <= %d ranks/node: hier:%s=%.3g vs %s=%.3g (links shared)", L0->nnodes,
             L1->nnodes, ppn, inner, t_hier, p->algo->name, t_flat);
    st = XFER_SUCCESS;
out:
    return st;
}

/* auto: the tuning file measured node staging best for this call ("best ... hier:INNER"):
 * take it on real shared nodes (virtual nodes are for testing, as in consider_hier). Sets
 * *@p taken. */
static xfer_status_t measured_hier(xfer_plan_t *p, const xfer_model_t *m, char *how, size_t len,
                                   int *taken)
{
    const xfer_tuning_best_t *b = xfer_select_measured(&p->shape, m);
    const char *inner = b && strncmp(b->algo, "hier:", 5) == 0 ? b->algo + 5 : NULL;
    const xfer_algo_t *a = inner ? xfer_algo_find(inner) : NULL;
    xfer_status_t st;

    *taken = 0;
    if (!inner || (!a && strcmp(inner, "direct") != 0 && strcmp(inner, "auto") != 0))
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(xfer_topo_nodes(p->topo), st, out);
    if (p->topo->hm->nodes[0].is_virtual || p->topo->hm->nodes[1].is_virtual)
        return XFER_SUCCESS;
    p->opts.hier = 1;
    p->opts.hier_inner = a ? a->name : strcmp(inner, "direct") == 0 ? "direct" : NULL;
    p->opts.hier_measured = a != NULL;
    *taken = 1;
    snprintf(how, len, "auto: measured best for p=%d q=%d ppn=%d %zu bytes/rank: %s (%.200s:%d)",
             p->shape.n[0], p->shape.n[1], m->max_ppn, b->bytes, b->algo, m->tuning->path, b->line);
    st = XFER_SUCCESS;
out:
    return st;
}

int xfer_plan_learns(const xfer_plan_t *p)
{
    return p->opts.learn == XFER_COLL_LEARN_ON ||
           (p->opts.learn == XFER_COLL_LEARN_FROM_ENV && xfer_selector_learns(p->sel));
}

/* auto learns: a plan made for one call takes the signature's choice for this call (agreeing
 * first when a decision is due); a persistent plan keeps its own state over its starts, with the
 * other candidates' plans beside it (plan_learn.c), which never split the groups, so that a
 * recount's verdict on them is the same on every rank. Called on every rank or none: after the
 * argument check, when every rank's arguments are known good (a rank that failed earlier would
 * leave the others' learning states apart, and their agreement waiting). */
xfer_status_t xfer_plan_select_learned(xfer_plan_t *p)
{
    int cand[XFER_LEARN_MAX], n, measured, k, keep = 1;
    const xfer_algo_t *was = p->algo;
    xfer_model_t m;
    xfer_status_t st;
    char how[512] = "", why[16];

    if (!p->learn_due)
        return XFER_SUCCESS;
    p->learn_due = 0;
    XFER_CHECK_GOTO(xfer_selector_model(p->sel, &m), st, out);
    if (!p->persistent || p->opts.once) {
        XFER_CHECK_GOTO(xfer_selector_pick(p->sel, &p->shape, &m, p->opts.timeout_ms, &p->pick, how,
                                           sizeof(how)),
                        st, out);
        if (p->pick.algo)
            p->algo = p->pick.algo;
    } else {
        n = xfer_selector_candidates(p->sel, &p->shape, &m, cand, why, sizeof(why), &measured);
        for (k = 1; k < n; k++)
            if (!(xfer_algo_at(cand[k])->flags & (XFER_ALGO_SPLITS | XFER_ALGO_NATIVE)))
                cand[keep++] = cand[k];
        xfer_selector_seed(p->sel, &p->shape, &m, cand, keep, &p->learn);
        p->algo = xfer_algo_at(p->learn.cand[0]);
        snprintf(how, sizeof(how), "learning over its starts among %d candidate(s)",
                 p->learn.ncand);
    }
    snprintf(p->name, sizeof(p->name), "%s", p->algo->name);
    if (p->algo != was || p->pick.learn || p->learn.ncand > 1) {
        char what[600];
        snprintf(what, sizeof(what), "%.500s%s%s", how, p->algo != was ? "; model's was " : "",
                 p->algo != was ? was->name : "");
        trace_choice(p, what);
    }
    st = XFER_SUCCESS;
out:
    return st;
}

xfer_status_t xfer_plan_select(xfer_plan_t *p)
{
    const xfer_shape_t *s = &p->shape;
    const int large = s->total[0] > INT_MAX || s->total[1] > INT_MAX;
    const char *why = "";
    char how[512];

    if (xfer_selector_env_mismatch(p->sel) &&
        (p->opts.algorithm_from_env || p->opts.fallback_from_env))
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "XFER_ALGORITHM or XFER_FALLBACK differ between the environments of the "
                        "two groups; set them alike (or pass options explicitly)");
    if (p->opts.duplex == XFER_DUPLEX_HALF && s->total[0] > 0 && s->total[1] > 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "duplex = half, but both groups contribute data (%zu and %zu bytes)",
                        s->total[0], s->total[1]);
    if (p->opts.hier) { /* forced hierarchy; the inner algorithm is settled in prepare */
        if (large)
            return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                            "hier: a group contributes more than INT_MAX bytes");
        /* what an inner algorithm supports depends on the duplex mode only, which the node
         * aggregates share with the call: decide now, with the fallback policy */
        if (p->opts.hier_inner && strcmp(p->opts.hier_inner, "direct") != 0 &&
            !xfer_algo_supports(xfer_algo_find(p->opts.hier_inner), s, &why)) {
            if (!p->opts.fallback_warn)
                return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                                "hier:%s cannot run this call: %s (set XFER_FALLBACK=warn to "
                                "fall back to the automatic inner choice)",
                                p->opts.hier_inner, why);
            if (p->topo->rank == 0)
                xfer_log(XFER_LOG_WARN, "hier:%s cannot run this call (%s); using hier:auto",
                         p->opts.hier_inner, why);
            p->opts.hier_inner = NULL;
        }
        snprintf(p->name, sizeof(p->name), "hier:%s",
                 p->opts.hier_inner ? p->opts.hier_inner : "auto");
        snprintf(how, sizeof(how), "forced%s",
                 p->opts.algorithm_from_env ? " by XFER_ALGORITHM" : "");
        trace_choice(p, how);
        return XFER_SUCCESS;
    }
    if (p->opts.algorithm) {
        const xfer_algo_t *a = xfer_algo_find(p->opts.algorithm);
        int ok = xfer_algo_supports(a, s, &why);
        if (ok && large && !(a->flags & XFER_ALGO_NATIVE)) {
            ok = 0;
            why = "a group contributes more than INT_MAX bytes (schedules use int byte counts)";
        }
        if (ok) {
            p->algo = a;
            snprintf(p->name, sizeof(p->name), "%s", a->name);
            snprintf(how, sizeof(how), "forced%s",
                     p->opts.algorithm_from_env ? " by XFER_ALGORITHM" : "");
            trace_choice(p, how);
            return XFER_SUCCESS;
        }
        if (!p->opts.fallback_warn)
            return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                            "forced algorithm %s cannot run this call: %s (set XFER_FALLBACK=warn "
                            "to fall back to the automatic choice)",
                            a->name, why);
        if (p->topo->rank == 0)
            xfer_log(XFER_LOG_WARN, "forced algorithm %s cannot run this call (%s); using auto",
                     a->name, why);
    }
    if (large) {
        p->algo = xfer_algo_find("native");
        snprintf(how, sizeof(how), "auto: more than INT_MAX bytes per group, native handles it");
    } else {
        xfer_model_t m;
        int measured;
        xfer_status_t st = xfer_selector_model(p->sel, &m);
        if (st != XFER_SUCCESS)
            return st;
        p->algo = xfer_select_auto(s, &m, how, sizeof(how), &measured);
        if (p->topo->hier_possible && !p->opts.no_auto_hier && !measured) {
            st = measured_hier(p, &m, how, sizeof(how), &measured);
            if (st != XFER_SUCCESS)
                return st;
        }
        /* a measured choice stands; otherwise weigh staging (same on every rank: topo.c) */
        if (p->topo->hier_possible && !p->opts.no_auto_hier && !measured) {
            st = consider_hier(p, &m, how, sizeof(how));
            if (st != XFER_SUCCESS)
                return st;
        }
        /* flat: learn among the candidates the model cannot separate, once every rank is
         * known to have come this far (xfer_plan_select_learned); a plan that chooses again
         * at every recount (opts.reselect) follows the model */
        p->learn_due = !p->opts.hier && !p->opts.reselect && xfer_plan_learns(p);
    }
    snprintf(p->name, sizeof(p->name), "%s%s", p->opts.hier ? "hier:" : "",
             p->opts.hier ? (p->opts.hier_inner ? p->opts.hier_inner : "auto") : p->algo->name);
    trace_choice(p, how);
    return XFER_SUCCESS;
}
