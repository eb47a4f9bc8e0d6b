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
#include "../sched/sim.h"
#include "../topo/shwin.h"
#include "coll.h"
#include "hier.h"

/* ---- geometry ----------------------------------------------------------------------------------
 */

void xfer_hier_free(xfer_hier_t **ph)
{
    xfer_hier_release(ph, 1);
}

void xfer_hier_release(xfer_hier_t **ph, int mpi)
{
    xfer_hier_t *h = ph ? *ph : NULL;
    int g;
    if (!h)
        return;
    xfer_hier_direct_free(h);
    if (h->own_win && mpi)
        xfer_shwin_free(&h->win);
    else if (h->own_win)
        xfer_shwin_abandon(&h->win);
    for (g = 0; g < 2; g++) {
        xfer_free(h->agg[g]);
        xfer_free(h->agg_off[g]);
    }
    xfer_free(h->stripe_base);
    xfer_free(h->node_off);
    xfer_free(h->rcounts);
    xfer_free(h->rdispls);
    xfer_free(h->tasks);
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

/* The node-level shape the inner algorithm sees on stripe @p l (the selection uses stripe 0: every
 * stripe has the same kind). @p swap: the stripe's intercommunicator numbers the groups the other
 * way round. */
static xfer_status_t node_shape(const xfer_hier_t *h, const xfer_topo_t *t, int l, int swap,
                                size_t *cnt[2], size_t *pre[2], xfer_shape_t *s)
{
    int g, m;
    memset(s, 0, sizeof(*s));
    for (g = 0; g < 2; g++) {
        const int nn = t->hm->nodes[swap ? 1 - g : g].nnodes;
        cnt[g] = xfer_malloc((size_t) nn * sizeof(size_t));
        pre[g] = xfer_malloc(((size_t) nn + 1) * sizeof(size_t));
        if (!cnt[g] || !pre[g])
            return XFER_ERR(XFER_ERR_NO_MEMORY, "node-level shape");
        pre[g][0] = 0;
        for (m = 0; m < nn; m++) {
            cnt[g][m] = xfer_seg_len(h->agg[swap ? 1 - g : g][m], h->senders, l);
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
    int g, r, m_, ppn = XFER_MAX(t->hm->nodes[0].max_ppn, t->hm->nodes[1].max_ppn);

    memset(&ns, 0, sizeof(ns));
    for (g = 0; g < 2; g++) { /* node aggregates: one "rank" per node */
        const xfer_nodes_t *L = &t->hm->nodes[g];
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
    a = xfer_select_auto(&ns, &lead, how, sizeof(how), NULL);
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

/* ---- hier:native: the MPI library's intercommunicator allgatherv over the stripe, as a task ---
 */

static xfer_status_t native_post(void *arg)
{
    xfer_plan_t *p = arg;
    xfer_hier_t *h = p->hier;
    const int b = (int) (h->epoch & 1);
    const size_t seg0 = xfer_seg_start(h->s_bytes, h->senders, h->slot);
    xfer_status_t st = XFER_SUCCESS;

    XFER_MPI_GOTO(PMPI_Iallgatherv(xfer_shwin_S(h->win, b) + seg0,
                                   (int) xfer_seg_len(h->s_bytes, h->senders, h->slot), MPI_BYTE,
                                   xfer_shwin_R(h->win, b) + h->stripe_base[h->slot], h->rcounts,
                                   h->rdispls, MPI_BYTE, h->stripe, &h->native_req),
                  st, out);
out:
    return st;
}

static xfer_status_t native_progress(void *arg, int *done)
{
    xfer_plan_t *p = arg;
    xfer_status_t st = XFER_SUCCESS;
    XFER_MPI_GOTO(MPI_Test(&p->hier->native_req, done, MPI_STATUS_IGNORE), st, out);
out:
    return st;
}

/* Counts of this rank's stripe for the MPI library's allgatherv (int: checked). */
static xfer_status_t native_counts(xfer_hier_t *h, const xfer_nodes_t *R, int o)
{
    const int nn = R->nnodes;
    size_t off = 0;
    int m;
    h->rcounts = xfer_malloc((size_t) nn * sizeof(int));
    h->rdispls = xfer_malloc((size_t) nn * sizeof(int));
    if (!h->rcounts || !h->rdispls)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "stripe counts");
    for (m = 0; m < nn; m++) {
        size_t len = xfer_seg_len(h->agg[o][m], h->senders, h->slot);
        if (len > INT_MAX || off > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE, "a node aggregate segment exceeds INT_MAX bytes");
        h->rcounts[m] = (int) len;
        h->rdispls[m] = (int) off;
        off += len;
    }
    return XFER_SUCCESS;
}

/* ---- the schedule ------------------------------------------------------------------------- */

/* Copy-out: R (node order, stripe areas) into the packed result (rank order). */
static void copy_out(const xfer_plan_t *p, xfer_sched_t *s)
{
    const xfer_hier_t *h = p->hier;
    const int o = 1 - p->topo->group, L = h->senders;
    const xfer_nodes_t *N = &p->topo->hm->nodes[o];
    int i, l;

    for (i = 0; i < N->n; i++) {
        const int m = N->node_of[i];
        const size_t a = h->agg_off[o][i], c = xfer_shape_count(&p->shape, o, i);
        const size_t goff = xfer_shape_offset(&p->shape, o, i);
        const size_t agg = h->agg[o][m];
        for (l = 0; l < L && c > 0; l++) { /* the stripe segments the block spans */
            const size_t s0 = xfer_seg_start(agg, L, l), s1 = s0 + xfer_seg_len(agg, L, l);
            const size_t lo = XFER_MAX(a, s0), hi = XFER_MIN(a + c, s1);
            if (hi > lo)
                xfer_sched_copy(s, XFER_BUF_NODE_R,
                                h->stripe_base[l] + h->node_off[(size_t) l * N->nnodes + m] +
                                    (lo - s0),
                                XFER_BUF_RECV, goff + (lo - a), hi - lo);
        }
    }
}

/* The inner algorithm over this leader's stripe, built on the stripe's own node-level shape and
 * embedded with S and R of the window as its buffers. */
static xfer_status_t embed_inner(xfer_plan_t *p, xfer_sched_t *s)
{
    xfer_hier_t *h = p->hier;
    xfer_topo_t *st_topo = h->stripe_topo;
    const int swap = st_topo->group != p->topo->group;
    size_t *cnt[2] = {NULL, NULL}, *pre[2] = {NULL, NULL};
    xfer_sched_t *in = NULL;
    xfer_embed_map_t map;
    xfer_shape_t ns;
    xfer_status_t st;

    XFER_CHECK_GOTO(node_shape(h, p->topo, h->slot, swap, cnt, pre, &ns), st, out);
    ns.seg_cap = p->shape.seg_cap; /* the stripes cross the network */
    XFER_CHECK_GOTO(xfer_sched_create(&ns, st_topo->group, st_topo->rank, &in), st, out);
    XFER_CHECK_GOTO(h->inner->build(&ns, in), st, out);
    memset(&map, 0, sizeof(map));
    map.comm = XFER_COMM_STRIPE;
    map.buf[XFER_BUF_SEND] = XFER_BUF_NODE_S;
    map.base[XFER_BUF_SEND] = xfer_seg_start(h->s_bytes, h->senders, h->slot);
    map.buf[XFER_BUF_RECV] = XFER_BUF_NODE_R;
    map.base[XFER_BUF_RECV] = h->stripe_base[h->slot];
    map.buf[XFER_BUF_TMP] = XFER_BUF_TMP;
    s->tmp_bytes = in->tmp_bytes;
    XFER_CHECK_GOTO(xfer_sched_embed(s, in, &map), st, out);
out:
    xfer_sched_destroy(&in);
    xfer_free(cnt[0]);
    xfer_free(cnt[1]);
    xfer_free(pre[0]);
    xfer_free(pre[1]);
    return st;
}

/*
 * One rank's schedule for every call of the plan (flag epochs are relative to the call's):
 *   sender group   wait S free (sent, two calls ago) | copy block into S | ready
 *   leader         wait deposits (ready) and R free (copied two calls ago) | inner algorithm
 *                  over the stripe | sent, valid (published as failed if the call fails)
 *   receiver group wait valid | copy R out | copied
 * hier:direct puts its exchange (a task: roles by arrival) where the inner algorithm would be;
 * barrier mode brackets the transfer with node barriers instead of flag waits.
 */
static xfer_status_t build(xfer_plan_t *p)
{
    xfer_hier_t *h = p->hier;
    const int g = p->topo->group, leader = h->slot < h->senders;
    const int uses_s = p->shape.total[g] > 0, uses_r = p->shape.total[1 - g] > 0;
    const int barrier = h->sync == XFER_HIER_BARRIER;
    xfer_sched_t *s;
    xfer_status_t st;

    XFER_CHECK_GOTO(xfer_sched_create(&p->shape, g, p->topo->rank, &p->sched), st, out);
    s = p->sched;
    s->algo = "hier";
    s->variant = h->direct ? "direct" : h->inner->name;
    s->node_bytes[0] = h->s_bytes;
    s->node_bytes[1] = h->r_bytes;
    s->uses_node = 1;
    if (uses_s) { /* copy-in */
        xfer_sched_flag_wait(s, XFER_FLAG_SENT, 0, h->senders, -2);
        xfer_sched_round(s);
        xfer_sched_copy(s, XFER_BUF_SEND, 0, XFER_BUF_NODE_S, h->agg_off[g][p->topo->rank],
                        p->my_bytes);
        xfer_sched_round(s);
        xfer_sched_flag_put(s, XFER_FLAG_READY, h->slot, 0, 0);
        xfer_sched_round(s);
    }
    if (barrier) {
        xfer_sched_barrier(s, XFER_COMM_NODE);
        xfer_sched_round(s);
    }
    if (h->direct) {
        xfer_sched_task(s, 0);
        xfer_sched_round(s);
    } else if (leader) {
        if (!barrier) {
            if (uses_s) /* the node's deposits */
                xfer_sched_flag_wait(s, XFER_FLAG_READY, 0, h->node_size, 0);
            if (uses_r) /* R of this parity: copied out two calls ago */
                xfer_sched_flag_wait(s, XFER_FLAG_COPIED, 0, h->node_size, -2);
            if (!uses_s) /* S unused, but its previous user (maybe a hier:direct shipper still
                          * completing its sends) publishes first: one flag, ordered writers */
                xfer_sched_flag_wait(s, XFER_FLAG_SENT, h->slot, 1, -2);
            xfer_sched_round(s);
        }
        if (h->inner->flags & XFER_ALGO_NATIVE)
            xfer_sched_task(s, 0);
        else
            XFER_CHECK_GOTO(embed_inner(p, s), st, out);
        xfer_sched_round(s);
        xfer_sched_flag_put(s, XFER_FLAG_SENT, h->slot, 0, 1);
        xfer_sched_flag_put(s, XFER_FLAG_VALID, h->slot, 0, 1);
        xfer_sched_round(s);
    }
    if (barrier) {
        xfer_sched_barrier(s, XFER_COMM_NODE);
        xfer_sched_round(s);
    }
    if (uses_r) { /* copy-out */
        xfer_sched_flag_wait(s, XFER_FLAG_VALID, 0, h->senders, 0);
        xfer_sched_round(s);
        copy_out(p, s);
        xfer_sched_round(s);
    }
    /* done with R of this epoch (or never needed it): a later call may refill it */
    xfer_sched_flag_put(s, XFER_FLAG_COPIED, h->slot, 0, 0);
    st = xfer_sched_finish(s);
out:
    return st;
}

/* Geometry and inner algorithm of @p p's staging, once the node layouts are known (t->nodes,
 * t->group, t->rank): this rank's node and slot, the node aggregates, R's layout. */
static xfer_status_t geometry(xfer_plan_t *p)
{
    xfer_topo_t *t = p->topo;
    xfer_hier_t *h = p->hier;
    const int g = t->group, o = 1 - g;
    size_t *cnt[2] = {NULL, NULL}, *pre[2] = {NULL, NULL};
    xfer_shape_t ns;
    xfer_status_t st;
    const char *why;

    h->node = t->hm->nodes[g].node_of[t->rank];
    h->slot = t->hm->nodes[g].slot_of[t->rank];
    h->node_size = t->hm->nodes[g].node_size[h->node];
    XFER_CHECK_GOTO(aggregates(h, &p->shape, &t->hm->nodes[0], 0), st, out);
    XFER_CHECK_GOTO(aggregates(h, &p->shape, &t->hm->nodes[1], 1), st, out);
    XFER_CHECK_GOTO(result_layout(h, &t->hm->nodes[o], o), st, out);
    h->s_bytes = h->agg[g][h->node];
    h->r_bytes = p->shape.total[o];

    /* the inner algorithm, chosen on the node-level shape (the same on every rank) */
    XFER_CHECK_GOTO(node_shape(h, t, 0, 0, cnt, pre, &ns), st, out);
    if (p->opts.hier_inner && strcmp(p->opts.hier_inner, "direct") == 0) {
        h->direct = 1;
    } else if (p->opts.hier_inner) {
        h->inner = xfer_algo_find(p->opts.hier_inner);
        if (!xfer_algo_supports(h->inner, &ns, &why) && !p->opts.hier_measured) {
            st = XFER_ERR(XFER_ERR_NOT_SUPPORTED, "hier:%s cannot run this call: %s",
                          h->inner->name, why);
            goto out;
        }
    }
    if (!h->direct && (!h->inner || !xfer_algo_supports(h->inner, &ns, &why))) {
        /* the model's choice on node aggregates (the same on every rank); also when auto's
         * measured inner algorithm cannot run this node-level shape */
        xfer_model_t m;
        const char *name;
        double predicted;
        m = *xfer_selector_base_model(p->sel);
        XFER_CHECK_GOTO(xfer_hier_predict(t, &p->shape, &m, h->sync, &predicted, &name), st, out);
        h->direct = strcmp(name, "direct") == 0;
        h->inner = h->direct ? NULL : xfer_algo_find(name);
    }
    st = XFER_SUCCESS;
out:
    xfer_free(cnt[0]);
    xfer_free(cnt[1]);
    xfer_free(pre[0]);
    xfer_free(pre[1]);
    return st;
}

xfer_status_t xfer_hier_prepare(xfer_plan_t *p)
{
    xfer_topo_t *t = p->topo;
    const int o = 1 - t->group;
    xfer_hier_t *h;
    xfer_status_t st;

    h = xfer_calloc(1, sizeof(*h));
    if (!h)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "hierarchy state");
    p->hier = h;
    h->senders = p->opts.hier_senders;
    h->sync = p->opts.hier_sync;
    h->stripe = MPI_COMM_NULL;
    h->native_req = MPI_REQUEST_NULL;
    XFER_CHECK_GOTO(xfer_topo_nodes(t), st, out);
    XFER_CHECK_GOTO(xfer_topo_stripes(t, h->senders, &h->stripe), st, out);
    XFER_CHECK_GOTO(geometry(p), st, out);

    /* staging: blocking calls share the window cached on the intercommunicator; a persistent
     * plan has its own (another plan may be active at the same time) */
    if (p->persistent) {
        h->own_win = 1;
        XFER_CHECK_GOTO(xfer_shwin_reserve(&h->win, t->hm->node_comm, h->node_size, h->senders,
                                           XFER_MAX(h->s_bytes, p->opts.win_s_min),
                                           XFER_MAX(h->r_bytes, p->opts.win_r_min)),
                        st, out);
    } else {
        XFER_CHECK_GOTO(xfer_shwin_reserve(&t->hm->win, t->hm->node_comm, h->node_size, h->senders,
                                           h->s_bytes, h->r_bytes),
                        st, out);
        h->win = t->hm->win;
    }
    h->tasks = xfer_calloc(1, sizeof(*h->tasks));
    if (!h->tasks) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "hierarchy tasks");
        goto out;
    }
    if (h->direct) {
        XFER_CHECK_GOTO(xfer_hier_direct_prepare(p, &h->tasks[0]), st, out);
    } else if (h->slot < h->senders) {
        /* the stripe's merged and local communicators carry the inner algorithm */
        XFER_CHECK_GOTO(xfer_topo_get(h->stripe, &h->stripe_topo), st, out);
        if (h->inner->flags & XFER_ALGO_NATIVE) {
            XFER_CHECK_GOTO(native_counts(h, &t->hm->nodes[o], o), st, out);
            h->tasks[0].post = native_post;
            h->tasks[0].progress = native_progress;
            h->tasks[0].arg = p;
            h->tasks[0].what = "hier:native's MPI_Iallgatherv over the stripe";
        }
    }
    XFER_CHECK_GOTO(build(p), st, out);
    st = XFER_SUCCESS;
out:
    return st;
}

xfer_status_t xfer_hier_recount(xfer_plan_t *p)
{
    xfer_hier_t *h = p->hier;
    const xfer_algo_t *inner = h->inner;
    const int direct = h->direct, g = p->topo->group;
    xfer_status_t st;
    int m;

    for (m = 0; m < 2; m++) {
        xfer_free(h->agg[m]);
        xfer_free(h->agg_off[m]);
        h->agg[m] = h->agg_off[m] = NULL;
    }
    xfer_free(h->stripe_base);
    xfer_free(h->node_off);
    xfer_free(h->rcounts);
    xfer_free(h->rdispls);
    h->stripe_base = h->node_off = NULL;
    h->rcounts = h->rdispls = NULL;
    XFER_CHECK_GOTO(geometry(p), st, out);
    if (h->inner != inner || h->direct != direct)
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                        "recount: node staging would choose another inner algorithm (%s, not %s)",
                        h->direct ? "direct" : h->inner->name, direct ? "direct" : inner->name);
    if (h->s_bytes > h->win->s_cap || h->r_bytes > h->win->r_cap)
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                        "recount: the node aggregates (%zu and %zu bytes) exceed the staging "
                        "window (%zu and %zu)",
                        h->s_bytes, h->r_bytes, h->win->s_cap, h->win->r_cap);
    for (m = 0; h->direct && m < p->topo->hm->nodes[g].nnodes; m++)
        if (h->agg[g][m] > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE, "a node aggregate exceeds INT_MAX bytes");
    if (!h->direct && h->slot < h->senders && (h->inner->flags & XFER_ALGO_NATIVE))
        XFER_CHECK_GOTO(native_counts(h, &p->topo->hm->nodes[1 - g], 1 - g), st, out);
    XFER_CHECK_GOTO(build(p), st, out);
out:
    return st;
}

long xfer_hier_begin(xfer_plan_t *p)
{
    xfer_hier_t *h = p->hier;
    h->epoch = ++h->win->epoch;
    return h->epoch;
}

void xfer_hier_stats(const xfer_plan_t *p, xfer_op_stats_t *stats)
{
    const xfer_hier_t *h = p->hier;
    const int g = p->topo->group, leader = h->slot < h->senders;
    const int uses_s = p->shape.total[g] > 0, uses_r = p->shape.total[1 - g] > 0;
    stats->hier = 1;
    if (h->direct) {
        stats->roles = h->roles;
        stats->leader = h->roles != 0;
    } else {
        stats->leader = leader;
        stats->roles = leader ? (uses_s ? 1 : 0) | (uses_r ? 2 : 0) : 0;
    }
    if (!stats->roles) { /* no part in the transfer between the groups: all of it was waiting */
        stats->wait_s += stats->inter_s;
        stats->inter_s = 0.0;
    }
}

/* ---- virtual nodes: the schedules without MPI (simulator, xfer-sched) ----------------------- */

static xfer_status_t virtual_layouts(const xfer_shape_t *shape, const xfer_hier_virtual_t *v,
                                     xfer_nodes_t L[2])
{
    xfer_status_t st = XFER_SUCCESS;
    int g;
    memset(L, 0, 2 * sizeof(*L));
    for (g = 0; g < 2 && st == XFER_SUCCESS; g++)
        st = xfer_nodes_virtual(&L[g], shape->n[g], v->node_size[g], v->roundrobin);
    if (st == XFER_SUCCESS &&
        (v->senders < 1 || v->senders > L[0].min_ppn || v->senders > L[1].min_ppn))
        st = XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                      "%d senders per node, but the smallest node has %d ranks; use at most that "
                      "many",
                      v->senders, XFER_MIN(L[0].min_ppn, L[1].min_ppn));
    return st;
}

static xfer_status_t virtual_build(const xfer_shape_t *shape, const xfer_hier_virtual_t *v,
                                   xfer_nodes_t L[2], int g, int r, xfer_sched_t **out)
{
    xfer_plan_t *p = NULL;
    xfer_topo_t *t = NULL, *st_topo = NULL;
    xfer_hier_module_t hm; /* the virtual nodes' layouts (the caller's) */
    xfer_hier_t *h = NULL;
    xfer_status_t st;
    const xfer_algo_t *a = v->inner ? xfer_algo_find(v->inner) : NULL;

    *out = NULL;
    if (!a || (a->flags & XFER_ALGO_NATIVE))
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                        "hier:%s on virtual nodes: give an inner algorithm that builds a schedule "
                        "(hier:native and hier:direct exchange through tasks the simulator "
                        "cannot follow)",
                        v->inner ? v->inner : "auto");
    memset(&hm, 0, sizeof(hm));
    p = xfer_calloc(1, sizeof(*p));
    t = xfer_calloc(1, sizeof(*t));
    st_topo = xfer_calloc(1, sizeof(*st_topo));
    h = xfer_calloc(1, sizeof(*h));
    if (!p || !t || !st_topo || !h) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "virtual hierarchy");
        goto out;
    }
    t->group = g;
    t->rank = r;
    t->n[0] = shape->n[0];
    t->n[1] = shape->n[1];
    t->nnodes = L[0].nnodes + L[1].nnodes;
    t->max_ppn = XFER_MAX(L[0].max_ppn, L[1].max_ppn);
    t->hm = &hm;
    hm.nodes[0] = L[0];
    hm.nodes[1] = L[1];
    hm.have_nodes = 1;
    p->topo = t;
    p->shape = *shape;
    p->my_bytes = xfer_shape_count(shape, g, r);
    p->opts.hier_inner = a->name;
    p->opts.hier_senders = v->senders;
    p->opts.hier_sync = v->barrier ? XFER_HIER_BARRIER : XFER_HIER_FLAGS;
    p->hier = h;
    h->senders = v->senders;
    h->sync = p->opts.hier_sync;
    XFER_CHECK_GOTO(geometry(p), st, out);
    /* the stripe: group g low as in the main numbering, this rank's node its rank */
    st_topo->group = g;
    st_topo->rank = h->node;
    h->stripe_topo = st_topo;
    XFER_CHECK_GOTO(build(p), st, out);
    *out = p->sched;
    p->sched = NULL;
out:
    if (p)
        xfer_sched_destroy(&p->sched);
    if (h) {
        h->stripe_topo = NULL;
        xfer_hier_free(&h);
    }
    xfer_free(st_topo);
    xfer_free(t); /* the layouts are the caller's */
    xfer_free(p);
    return st;
}

xfer_status_t xfer_hier_sched_virtual(const xfer_shape_t *shape, const xfer_hier_virtual_t *v,
                                      int g, int r, xfer_sched_t **out)
{
    xfer_nodes_t L[2];
    xfer_status_t st = virtual_layouts(shape, v, L);
    if (st == XFER_SUCCESS)
        st = virtual_build(shape, v, L, g, r, out);
    xfer_nodes_free(&L[0]);
    xfer_nodes_free(&L[1]);
    return st;
}

typedef struct virt_world {
    const xfer_shape_t *shape;
    const xfer_hier_virtual_t *v;
    xfer_nodes_t *L;
} virt_world_t;

static xfer_status_t world_build(void *ctx, int g, int r, xfer_sched_t **out)
{
    const virt_world_t *w = ctx;
    return virtual_build(w->shape, w->v, w->L, g, r, out);
}

xfer_status_t xfer_hier_simulate(const xfer_shape_t *shape, const xfer_hier_virtual_t *v, int calls,
                                 const xfer_sim_opts_t *opts, xfer_sim_stats_t *stats)
{
    xfer_nodes_t L[2];
    virt_world_t w = {shape, v, L};
    xfer_sim_hier_t sh;
    xfer_status_t st = virtual_layouts(shape, v, L);
    int g;

    if (st == XFER_SUCCESS) {
        memset(&sh, 0, sizeof(sh));
        for (g = 0; g < 2; g++) {
            sh.nodes.nnodes[g] = L[g].nnodes;
            sh.nodes.node_of[g] = L[g].node_of;
            sh.nodes.slot_of[g] = L[g].slot_of;
            sh.nodes.node_first[g] = L[g].node_first;
            sh.nodes.members[g] = L[g].members;
        }
        sh.calls = calls;
        sh.ctx = &w;
        sh.build = world_build;
        st = xfer_sim_run_hier(shape, &sh, opts, stats);
    }
    xfer_nodes_free(&L[0]);
    xfer_nodes_free(&L[1]);
    return st;
}
