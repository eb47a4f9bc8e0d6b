/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hier: node-hierarchical staging around any inner algorithm (seed-hierarchical §3, §4, §10,
 * §13-14). On each node of each group:
 *   copy-in   every rank copies its block into the node's shared window S (node aggregate,
 *             ranks in slot order) and marks it ready;
 *   inter     the node's `senders` stripe leaders (slots 0..senders-1) each run the inner
 *             algorithm over their stripe intercommunicator, moving segment `stripe` of every
 *             node aggregate (multi-sender: each byte still crosses once); results land in R,
 *             stripe after stripe;
 *   copy-out  every rank copies R into its result, reordering node order to rank order (so any
 *             placement works: round-robin nodes too).
 * Synchronisation (default "flags"): no node barrier. A rank whose group only sends deposits and
 * leaves; a leader starts as soon as its node's deposits are in; receivers wait only on the
 * validity flags of the stripes. Two parities of S and R alternate call by call, and a rank only
 * reuses a parity once its previous use is finished (sent / copied flags of two calls back), so
 * back-to-back calls never see stale or torn data even though early ranks leave. "barrier" mode
 * separates the phases with node barriers instead (the classical scheme, for comparison).
 *
 * Cost: copy-in (node aggregate) + inner algorithm over nodes + copy-out (remote total), with
 *       node-to-node traffic over one link per node per stripe.
 * Restrictions: senders <= the smallest node of either group.
 * Preferred when: several ranks share a node's network link.
 */
#include <limits.h>
#include <string.h>

#include "../core/core.h"
#include "../topo/shwin.h"
#include "coll.h"
#include "hier.h"

static _Thread_local xfer_op_stats_t last_stats;

xfer_status_t xfer_last_op_stats(xfer_op_stats_t *out)
{
    if (!out)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "stats is NULL");
    *out = last_stats;
    return XFER_SUCCESS;
}

void xfer_stats_record(const xfer_op_stats_t *s)
{
    last_stats = *s;
}

/* ---- geometry ----------------------------------------------------------------------------------
 */

void xfer_hier_free(xfer_hier_t **ph)
{
    xfer_hier_t *h = ph ? *ph : NULL;
    int g, b;
    if (!h)
        return;
    for (b = 0; b < 2; b++)
        xfer_plan_free(&h->inner_plan[b]);
    xfer_hier_direct_free(h);
    if (h->own_win)
        xfer_shwin_free(&h->win);
    for (g = 0; g < 2; g++) {
        xfer_free(h->agg[g]);
        xfer_free(h->agg_off[g]);
    }
    xfer_free(h->stripe_base);
    xfer_free(h->node_off);
    xfer_free(h->rcounts);
    xfer_free(h->rdispls);
    xfer_free(h);
    *ph = NULL;
}

/* Node aggregates of group g and each rank's offset inside its node's aggregate. */
static xfer_status_t aggregates(xfer_hier_t *h, const xfer_shape_t *sh, const xfer_nodes_t *L,
                                int g)
{
    int m, k;
    h->agg[g] = xfer_calloc((size_t) L->nnodes, sizeof(size_t));
    h->agg_off[g] = xfer_calloc((size_t) L->n, sizeof(size_t));
    if (!h->agg[g] || !h->agg_off[g])
        return XFER_ERR(XFER_ERR_NO_MEMORY, "node aggregates of %d ranks", L->n);
    for (m = 0; m < L->nnodes; m++)
        for (k = L->node_first[m]; k < L->node_first[m + 1]; k++) {
            const int r = L->members[k];
            h->agg_off[g][r] = h->agg[g][m];
            h->agg[g][m] += xfer_shape_count(sh, g, r);
        }
    return XFER_SUCCESS;
}

/* R layout: stripe-major; within stripe l, the remote nodes' segment l in node order. */
static xfer_status_t result_layout(xfer_hier_t *h, const xfer_nodes_t *R, int o)
{
    const int L = h->senders, nn = R->nnodes;
    size_t base = 0;
    int l, m;

    h->stripe_base = xfer_calloc((size_t) L + 1, sizeof(size_t));
    h->node_off = xfer_calloc((size_t) L * (size_t) nn, sizeof(size_t));
    if (!h->stripe_base || !h->node_off)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "result layout");
    for (l = 0; l < L; l++) {
        size_t off = 0;
        h->stripe_base[l] = base;
        for (m = 0; m < nn; m++) {
            h->node_off[(size_t) l * nn + m] = off;
            off += xfer_seg_len(h->agg[o][m], L, l);
        }
        base += off;
    }
    h->stripe_base[L] = base;
    return XFER_SUCCESS;
}

/* Counts of this rank's stripe for the inner allgatherv (int: checked). */
static xfer_status_t inner_counts(xfer_hier_t *h, const xfer_nodes_t *R, int o, int l)
{
    const int nn = R->nnodes;
    size_t off = 0;
    int m;
    h->rcounts = xfer_malloc((size_t) nn * sizeof(int));
    h->rdispls = xfer_malloc((size_t) nn * sizeof(int));
    if (!h->rcounts || !h->rdispls)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "stripe counts");
    for (m = 0; m < nn; m++) {
        size_t len = xfer_seg_len(h->agg[o][m], h->senders, l);
        if (len > INT_MAX || off > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE, "a node aggregate segment exceeds INT_MAX bytes");
        h->rcounts[m] = (int) len;
        h->rdispls[m] = (int) off;
        off += len;
    }
    return XFER_SUCCESS;
}

/* The node-level shape the inner algorithm sees (stripe 0; every stripe has the same kind). */
static xfer_status_t node_shape(const xfer_hier_t *h, const xfer_topo_t *t, size_t *cnt[2],
                                size_t *pre[2], xfer_shape_t *s)
{
    int g, m;
    memset(s, 0, sizeof(*s));
    for (g = 0; g < 2; g++) {
        const int nn = t->nodes[g].nnodes;
        cnt[g] = xfer_malloc((size_t) nn * sizeof(size_t));
        pre[g] = xfer_malloc(((size_t) nn + 1) * sizeof(size_t));
        if (!cnt[g] || !pre[g])
            return XFER_ERR(XFER_ERR_NO_MEMORY, "node-level shape");
        pre[g][0] = 0;
        for (m = 0; m < nn; m++) {
            cnt[g][m] = xfer_seg_len(h->agg[g][m], h->senders, 0);
            pre[g][m + 1] = pre[g][m] + cnt[g][m];
        }
        s->n[g] = nn;
        s->cnt[g] = cnt[g];
        s->pre[g] = pre[g];
        s->total[g] = pre[g][nn];
    }
    return XFER_SUCCESS;
}

/* Alpha-beta time of the direct node-to-node exchange on the node-level shape: every node link
 * carries its aggregate to each remote node out and every remote aggregate in. In flags mode it
 * is preferred while within 25% of the best inner algorithm: it has no phase that waits for a
 * whole node, which is what pays under arrival imbalance. */
static double direct_cost(const xfer_shape_t *ns, const xfer_model_t *m)
{
    double worst = 0.0;
    int g, i;
    for (g = 0; g < 2; g++)
        for (i = 0; i < ns->n[g]; i++) {
            const double out = (double) ns->cnt[g][i] * (double) ns->n[1 - g];
            worst = XFER_MAX(worst, XFER_MAX(out, (double) ns->total[1 - g]));
        }
    return m->alpha * (double) XFER_MAX(ns->n[0], ns->n[1]) + m->beta * worst;
}

xfer_status_t xfer_hier_predict(const xfer_topo_t *t, const xfer_shape_t *s, const xfer_model_t *m,
                                int sync, double *predicted, const char **inner)
{
    size_t *cnt[2] = {NULL, NULL}, *pre[2] = {NULL, NULL}, agg_max = 0;
    xfer_model_t lead = *m;
    xfer_shape_t ns;
    xfer_status_t st = XFER_SUCCESS;
    const xfer_algo_t *a;
    char how[512];
    double tt, td;
    int g, r, m_, ppn = XFER_MAX(t->nodes[0].max_ppn, t->nodes[1].max_ppn);

    memset(&ns, 0, sizeof(ns));
    for (g = 0; g < 2; g++) { /* node aggregates: one "rank" per node */
        const xfer_nodes_t *L = &t->nodes[g];
        cnt[g] = xfer_calloc((size_t) L->nnodes, sizeof(size_t));
        pre[g] = xfer_calloc((size_t) L->nnodes + 1, sizeof(size_t));
        if (!cnt[g] || !pre[g]) {
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "node-level shape");
            goto out;
        }
        for (r = 0; r < L->n; r++)
            cnt[g][L->node_of[r]] += xfer_shape_count(s, g, r);
        for (m_ = 0; m_ < L->nnodes; m_++) {
            pre[g][m_ + 1] = pre[g][m_] + cnt[g][m_];
            agg_max = XFER_MAX(agg_max, cnt[g][m_]);
        }
        ns.n[g] = L->nnodes;
        ns.cnt[g] = cnt[g];
        ns.pre[g] = pre[g];
        ns.total[g] = pre[g][L->nnodes];
    }
    lead.nnodes = ns.n[0] + ns.n[1];
    lead.max_ppn = 1; /* one leader per node */
    a = xfer_select_auto(&ns, &lead, how, sizeof(how));
    tt = xfer_algo_predict(a, &ns, &lead);
    *inner = a->name;
    td = direct_cost(&ns, &lead);
    if (sync == XFER_HIER_FLAGS && td <= 1.25 * tt) {
        tt = td;
        *inner = "direct";
    }
    /* copies through shared memory: a node's aggregate in, every rank's whole result out */
    *predicted = tt + m->gamma * ((double) agg_max +
                                  (double) ppn * (double) XFER_MAX(ns.total[0], ns.total[1]));
out:
    for (g = 0; g < 2; g++) {
        xfer_free(cnt[g]);
        xfer_free(pre[g]);
    }
    return st;
}

/* Options of the inner transfer over this rank's stripe: the resolved inner algorithm, no
 * fallback or cross-group check (the outer call did those), the caller's timeout. */
static void inner_opts(const xfer_plan_t *p, xfer_coll_opts_t *io)
{
    xfer_coll_opts_init(io);
    io->algorithm = p->hier->inner->name;
    io->fallback = XFER_FALLBACK_ERROR;
    io->check = 0;
    io->timeout_ms = p->opts.timeout_ms;
    io->intra_allgather = p->opts.intra_allgather;
}

xfer_status_t xfer_hier_prepare(xfer_plan_t *p)
{
    xfer_topo_t *t = p->topo;
    const int g = t->group, o = 1 - g;
    xfer_hier_t *h;
    xfer_status_t st;
    size_t *cnt[2] = {NULL, NULL}, *pre[2] = {NULL, NULL};
    xfer_shape_t ns;
    const char *why;

    h = xfer_calloc(1, sizeof(*h));
    if (!h)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "hierarchy state");
    p->hier = h;
    h->senders = p->opts.hier_senders;
    h->sync = p->opts.hier_sync;
    h->stripe = MPI_COMM_NULL;
    XFER_CHECK_GOTO(xfer_topo_nodes(t), st, out);
    XFER_CHECK_GOTO(xfer_topo_stripes(t, h->senders, &h->stripe), st, out);
    h->node = t->nodes[g].node_of[t->rank];
    h->slot = t->nodes[g].slot_of[t->rank];
    h->node_size = t->nodes[g].node_size[h->node];
    XFER_CHECK_GOTO(aggregates(h, &p->shape, &t->nodes[0], 0), st, out);
    XFER_CHECK_GOTO(aggregates(h, &p->shape, &t->nodes[1], 1), st, out);
    XFER_CHECK_GOTO(result_layout(h, &t->nodes[o], o), st, out);
    h->s_bytes = h->agg[g][h->node];
    h->r_bytes = p->shape.total[o];

    /* the inner algorithm, chosen on the node-level shape (the same on every rank) */
    XFER_CHECK_GOTO(node_shape(h, t, cnt, pre, &ns), st, out);
    if (p->opts.hier_inner && strcmp(p->opts.hier_inner, "direct") == 0) {
        h->direct = 1;
    } else if (p->opts.hier_inner) {
        h->inner = xfer_algo_find(p->opts.hier_inner);
        if (!xfer_algo_supports(h->inner, &ns, &why)) {
            st = XFER_ERR(XFER_ERR_NOT_SUPPORTED, "hier:%s cannot run this call: %s",
                          h->inner->name, why);
            goto out;
        }
    } else { /* the model's choice on node aggregates (the same on every rank) */
        xfer_model_t m;
        const char *name;
        double predicted;
        xfer_model_init(&m, t->nnodes, t->max_ppn);
        XFER_CHECK_GOTO(xfer_hier_predict(t, &p->shape, &m, h->sync, &predicted, &name), st, out);
        h->direct = strcmp(name, "direct") == 0;
        h->inner = h->direct ? NULL : xfer_algo_find(name);
    }
    if (h->direct) {
        XFER_CHECK_GOTO(xfer_hier_direct_prepare(p), st, out);
        goto staging;
    }
    if (h->slot < h->senders)
        XFER_CHECK_GOTO(inner_counts(h, &t->nodes[o], o, h->slot), st, out);

    /* staging: blocking calls share the window cached on the intercommunicator; a persistent
     * plan has its own (another plan may be active at the same time) */
staging:
    if (p->persistent) {
        h->own_win = 1;
        XFER_CHECK_GOTO(xfer_shwin_reserve(&h->win, t->node_comm, h->node_size, h->senders,
                                           h->s_bytes, h->r_bytes),
                        st, out);
    } else {
        XFER_CHECK_GOTO(xfer_shwin_reserve(&t->win, t->node_comm, h->node_size, h->senders,
                                           h->s_bytes, h->r_bytes),
                        st, out);
        h->win = t->win;
    }
    if (p->persistent && !h->direct &&
        h->slot < h->senders) { /* one inner plan per parity of the window */
        int b;
        for (b = 0; b < 2; b++) {
            xfer_coll_opts_t io;
            const size_t seg0 = xfer_seg_start(h->s_bytes, h->senders, h->slot);
            inner_opts(p, &io);
            XFER_CHECK_GOTO(xfer_allgatherv_inter_init(
                                xfer_shwin_S(h->win, b) + seg0,
                                (int) xfer_seg_len(h->s_bytes, h->senders, h->slot), MPI_BYTE,
                                xfer_shwin_R(h->win, b) + h->stripe_base[h->slot], h->rcounts,
                                h->rdispls, MPI_BYTE, h->stripe, &io, &h->inner_plan[b]),
                            st, out);
        }
    }
    st = XFER_SUCCESS;
out:
    xfer_free(cnt[0]);
    xfer_free(cnt[1]);
    xfer_free(pre[0]);
    xfer_free(pre[1]);
    return st;
}

/* ---- one operation ----------------------------------------------------------------------------
 */

static void copy_out(const xfer_plan_t *p, const unsigned char *R, unsigned char *dst)
{
    const xfer_hier_t *h = p->hier;
    const int o = 1 - p->topo->group, L = h->senders;
    const xfer_nodes_t *N = &p->topo->nodes[o];
    int i, l;

    for (i = 0; i < N->n; i++) {
        const int m = N->node_of[i];
        const size_t a = h->agg_off[o][i], c = xfer_shape_count(&p->shape, o, i);
        const size_t goff = xfer_shape_offset(&p->shape, o, i);
        const size_t agg = h->agg[o][m];
        if (c == 0)
            continue;
        for (l = 0; l < L; l++) { /* the stripe segments the block spans */
            const size_t s0 = xfer_seg_start(agg, L, l), s1 = s0 + xfer_seg_len(agg, L, l);
            const size_t lo = XFER_MAX(a, s0), hi = XFER_MIN(a + c, s1);
            if (hi > lo)
                memcpy(dst + goff + (lo - a),
                       R + h->stripe_base[l] + h->node_off[(size_t) l * N->nnodes + m] + (lo - s0),
                       hi - lo);
        }
    }
}

static xfer_status_t run_inner(xfer_plan_t *p, int parity)
{
    xfer_hier_t *h = p->hier;
    xfer_status_t st;
    if (h->inner_plan[parity]) {
        XFER_CHECK_GOTO(xfer_start(h->inner_plan[parity]), st, out);
        st = xfer_wait(h->inner_plan[parity]);
    } else {
        xfer_coll_opts_t io;
        const size_t seg0 = xfer_seg_start(h->s_bytes, h->senders, h->slot);
        inner_opts(p, &io);
        st = xfer_allgatherv_inter(xfer_shwin_S(h->win, parity) + seg0,
                                   (int) xfer_seg_len(h->s_bytes, h->senders, h->slot), MPI_BYTE,
                                   xfer_shwin_R(h->win, parity) + h->stripe_base[h->slot],
                                   h->rcounts, h->rdispls, MPI_BYTE, h->stripe, &io);
    }
out:
    return st;
}

xfer_status_t xfer_hier_run(xfer_plan_t *p)
{
    xfer_hier_t *h = p->hier;
    xfer_shwin_t *w = h->win;
    const int g = p->topo->group, uses_s = p->shape.total[g] > 0;
    const int uses_r = p->shape.total[1 - g] > 0, leader = h->slot < h->senders;
    const int tmo = p->opts.timeout_ms;
    xfer_op_stats_t stats;
    xfer_status_t st = XFER_SUCCESS;
    long e;
    int b;
    double t, waited = 0.0;

    memset(&stats, 0, sizeof(stats));
    stats.t_enter = MPI_Wtime();
    stats.hier = 1;
    stats.leader = leader;
    stats.roles = leader && !h->direct ? (uses_s ? 1 : 0) | (uses_r ? 2 : 0) : 0;
    e = ++w->epoch;
    b = (int) (e & 1);

    /* S of this parity is free once every stripe sent it two calls ago (both modes: the
     * window's flags stay consistent whichever mode each call uses) */
    if (uses_s) {
        XFER_CHECK_GOTO(xfer_flags_wait(w, b, XFER_FLAG_SENT, h->senders, e - 2, tmo, &waited), st,
                        out);
        stats.wait_s += waited;
        t = MPI_Wtime();
        if (p->my_bytes)
            memcpy(xfer_shwin_S(w, b) + h->agg_off[g][p->topo->rank], p->send_ptr, p->my_bytes);
        xfer_flag_store(w, b, XFER_FLAG_READY, h->slot, e);
        stats.intra_s += MPI_Wtime() - t;
    }

    if (h->sync == XFER_HIER_BARRIER) {
        /* the classical scheme: node barriers separate copy-in, the leaders' transfer and
         * copy-out. A leader that fails still joins the second barrier (no rank is left in it)
         * and publishes the failure in its flags. */
        xfer_status_t ist = XFER_SUCCESS;
        t = MPI_Wtime();
        XFER_MPI_GOTO(MPI_Barrier(p->topo->node_comm), st, out);
        MPI_Win_sync(w->win);
        stats.wait_s += MPI_Wtime() - t;
        if (h->direct) {
            ist = xfer_hier_direct_exchange(p, e, b, &stats);
        } else if (leader) {
            t = MPI_Wtime();
            ist = run_inner(p, b);
            stats.inter_s += MPI_Wtime() - t;
            xfer_flag_store(w, b, XFER_FLAG_SENT, h->slot, ist == XFER_SUCCESS ? e : -e);
            xfer_flag_store(w, b, XFER_FLAG_VALID, h->slot, ist == XFER_SUCCESS ? e : -e);
        }
        t = MPI_Wtime();
        XFER_MPI_GOTO(MPI_Barrier(p->topo->node_comm), st, out);
        MPI_Win_sync(w->win);
        stats.wait_s += MPI_Wtime() - t;
        XFER_CHECK_GOTO(ist, st, out);
    } else if (h->direct) { /* flags, direct: roles by arrival (hier_direct.c) */
        XFER_CHECK_GOTO(xfer_hier_direct_exchange(p, e, b, &stats), st, out);
    } else if (leader) { /* flags: no node barrier */
        xfer_status_t ist = XFER_SUCCESS;
        if (uses_s) /* the node's deposits */
            ist = xfer_flags_wait(w, b, XFER_FLAG_READY, h->node_size, e, tmo, &waited);
        stats.wait_s += ist == XFER_SUCCESS && uses_s ? waited : 0.0;
        if (ist == XFER_SUCCESS && uses_r) { /* R of this parity: copied out two calls ago */
            ist = xfer_flags_wait(w, b, XFER_FLAG_COPIED, h->node_size, e - 2, tmo, &waited);
            stats.wait_s += waited;
        }
        if (ist == XFER_SUCCESS && !uses_s) {
            /* S of this parity was not used, but its previous user (two calls ago, maybe a
             * hier:direct shipper still completing its sends) may not have published yet:
             * publishing over it would let its late store lower the flag again */
            ist = xfer_flag_wait(w, b, XFER_FLAG_SENT, h->slot, e - 2, tmo, &waited);
            stats.wait_s += waited;
        }
        if (ist == XFER_SUCCESS) {
            t = MPI_Wtime();
            ist = run_inner(p, b);
            stats.inter_s += MPI_Wtime() - t;
        }
        /* a failure is published too (negative epoch): the node's waiters return with an error
         * instead of waiting for their timeout */
        xfer_flag_store(w, b, XFER_FLAG_SENT, h->slot, ist == XFER_SUCCESS ? e : -e);
        xfer_flag_store(w, b, XFER_FLAG_VALID, h->slot, ist == XFER_SUCCESS ? e : -e);
        XFER_CHECK_GOTO(ist, st, out);
    }
    if (uses_r) {
        XFER_CHECK_GOTO(xfer_flags_wait(w, b, XFER_FLAG_VALID, h->senders, e, tmo, &waited), st,
                        out);
        stats.wait_s += waited;
        t = MPI_Wtime();
        copy_out(p, xfer_shwin_R(w, b), p->recv_ptr);
        stats.intra_s += MPI_Wtime() - t;
    }
    /* done with R of this epoch (or never needed it): a later call may refill it */
    xfer_flag_store(w, b, XFER_FLAG_COPIED, h->slot, e);
out:
    stats.t_exit = MPI_Wtime();
    xfer_stats_record(&stats);
    if (xfer_trace_level() >= 2)
        xfer_log(XFER_LOG_DEBUG,
                 "hier group %d rank %d (node %d slot %d%s) epoch %ld: %.6f s in call, intra "
                 "%.6f, inter %.6f, wait %.6f",
                 g, p->topo->rank, h->node, h->slot, leader ? ", leader" : "", e,
                 stats.t_exit - stats.t_enter, stats.intra_s, stats.inter_s, stats.wait_s);
    return st;
}
