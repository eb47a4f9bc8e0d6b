/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulator's local collectives (ALLGATHERV, BCAST, GATHERV): instances matched per group in
 * call order, run once every member has posted, the members' arguments checked for agreement,
 * labels moved and the call costed by formula.
 */
#include "sim_int.h"

static int same_counts(const xfer_counts_t *a, const xfer_counts_t *b)
{
    int i;
    if (a->n != b->n)
        return 0;
    if (a->kind == b->kind && a->kind != XFER_COUNTS_ARRAY)
        return a->k == b->k && a->m == b->m;
    for (i = 0; i < a->n; i++)
        if (xfer_counts_get(a, i) != xfer_counts_get(b, i))
            return 0;
    return 1;
}

static double log2c(int n)
{
    return (double) xfer_ceil_log2((uint64_t) (n > 0 ? n : 1));
}

static size_t oi_len(const sim_t *m, const coll_inst_t *ci, int i)
{
    return m->r[ci->rank[i]].view.ops[ci->op[i]].len;
}

static void run_coll(sim_t *m, coll_inst_t *ci, int size)
{
    sim_rank_t *R0 = &m->r[ci->rank[0]];
    const xfer_op_t *o0 = &R0->view.ops[ci->op[0]];
    const xfer_counts_t *c0 = o0->counts >= 0 ? &R0->s->counts[o0->counts] : NULL;
    runvec_t res = {0};
    double t = 0.0, cost = 0.0;
    size_t total = o0->len;
    int i;

    for (i = 0; i < size; i++) {
        const sim_rank_t *Ri = &m->r[ci->rank[i]];
        const xfer_op_t *oi = &Ri->view.ops[ci->op[i]];
        t = XFER_MAX(t, Ri->state[ci->op[i]].post);
        if (oi->kind != o0->kind || (c0 && !same_counts(c0, &Ri->s->counts[oi->counts])) ||
            (o0->kind != XFER_OP_ALLGATHERV && oi->peer != o0->peer) ||
            (o0->kind == XFER_OP_BCAST && oi->len != o0->len)) {
            char a[16];
            sim_rank_name(m, ci->rank[i], a, sizeof(a));
            sim_fail(m, XFER_ERR_VERIFY,
                     "%s: round %d: %s disagrees with the other members of a %s on its arguments",
                     Ri->s->algo, Ri->round, a, xfer_op_name(o0->kind));
            return;
        }
    }
    switch (o0->kind) {
    case XFER_OP_ALLGATHERV: { /* every member's block, concatenated, to every member */
        size_t off = 0;        /* running offset: O(1) per member whatever the counts kind */
        for (i = 0; i < size && m->err == XFER_SUCCESS; i++) {
            const xfer_op_t *oi = &m->r[ci->rank[i]].view.ops[ci->op[i]];
            size_t len = xfer_counts_get(c0, i), gap = 0;
            if (!xfer_rv_get(sim_bufmap(m, ci->rank[i], oi->buf), oi->off + off, len, off, &res,
                             &gap))
                sim_take(m, ci->rank[i], oi->buf, oi->off + off, len, "contributes");
            off += len;
        }
        for (i = 0; i < size && m->err == XFER_SUCCESS; i++) {
            const xfer_op_t *oi = &m->r[ci->rank[i]].view.ops[ci->op[i]];
            if (!xfer_rv_put(sim_bufmap(m, ci->rank[i], oi->buf), oi->off, total, &res))
                sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
        }
        cost = log2c(size) * m->o.alpha + (double) total * (size - 1) / size * m->o.beta;
        break;
    }
    case XFER_OP_BCAST: {
        const int root = o0->peer;
        const xfer_op_t *ro = &m->r[ci->rank[root]].view.ops[ci->op[root]];
        if (sim_take(m, ci->rank[root], ro->buf, ro->off, ro->len, "broadcasts")) {
            for (i = 0; i < m->tmp.n; i++)
                xfer_rv_push(&res, m->tmp.r[i]);
            for (i = 0; i < size; i++)
                if (i != root) {
                    const xfer_op_t *oi = &m->r[ci->rank[i]].view.ops[ci->op[i]];
                    if (!xfer_rv_put(sim_bufmap(m, ci->rank[i], oi->buf), oi->off, oi->len, &res))
                        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
                }
        }
        cost = o0->len >= 8192 ? 2 * log2c(size) * m->o.alpha + 2.0 * (double) o0->len * m->o.beta
                               : log2c(size) * (m->o.alpha + (double) o0->len * m->o.beta);
        break;
    }
    case XFER_OP_GATHERV: {
        const int root = o0->peer;
        const xfer_op_t *ro = &m->r[ci->rank[root]].view.ops[ci->op[root]];
        size_t off = 0;
        total = xfer_counts_total(c0);
        for (i = 0; i < size && m->err == XFER_SUCCESS; off += oi_len(m, ci, i), i++) {
            const xfer_op_t *oi = &m->r[ci->rank[i]].view.ops[ci->op[i]];
            if (oi->len != xfer_counts_get(c0, i)) {
                sim_fail(m, XFER_ERR_VERIFY,
                         "%s: gatherv member %d sends %zu bytes, root expects %zu",
                         m->r[ci->rank[i]].s->algo, i, oi->len, xfer_counts_get(c0, i));
                break;
            }
            if (sim_take(m, ci->rank[i], oi->buf, oi->off, oi->len, "gathers") &&
                !xfer_rv_put(sim_bufmap(m, ci->rank[root], ro->buf2), ro->off2 + off, oi->len,
                             &m->tmp))
                sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
        }
        cost = log2c(size) * m->o.alpha + (double) total * (size - 1) / size * m->o.beta;
        break;
    }
    default:
        break;
    }
    xfer_rv_free(&res);
    if (m->err != XFER_SUCCESS)
        return;
    m->st.collectives++;
    for (i = 0; i < size; i++) {
        sim_rank_t *Ri = &m->r[ci->rank[i]];
        Ri->send_free = Ri->recv_free = XFER_MAX(Ri->send_free, t + cost);
        sim_complete(m, ci->rank[i], ci->op[i], t + cost);
    }
}

void sim_post_coll(sim_t *m, int rank, int k)
{
    const sim_rank_t *R = &m->r[rank];
    const xfer_group_t *g = &R->s->groups[R->view.ops[k].group];
    /* instances: per communicator, slot and group (its first member, as a merged rank) */
    const int color = sim_member(m, rank, g, 0), slot = (g->slot + 1) | (g->comm << 12);
    uint64_t *seq, *inst, key;
    coll_inst_t *ci;
    int i;

    seq = xfer_hmap_slot(&m->coll_seq,
                         ((uint64_t) rank << 40) | ((uint64_t) slot << 24) | (uint64_t) color);
    if (!seq) {
        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
        return;
    }
    key = ((uint64_t) slot << 56) | ((uint64_t) color << 32) | (*seq & 0xffffffffu);
    (*seq)++;
    inst = xfer_hmap_slot(&m->coll, key);
    if (!inst) {
        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
        return;
    }
    if (*inst == 0) {
        if (m->ninsts == m->insts_cap) {
            int cap = m->insts_cap ? m->insts_cap * 2 : 64;
            coll_inst_t *p = xfer_realloc_array(m->insts, (size_t) cap, sizeof(*p));
            if (!p) {
                sim_fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
                return;
            }
            m->insts = p;
            m->insts_cap = cap;
        }
        ci = &m->insts[m->ninsts];
        ci->posted = 0;
        ci->rank = xfer_malloc((size_t) g->size * sizeof(int));
        ci->op = xfer_malloc((size_t) g->size * sizeof(int));
        if (!ci->rank || !ci->op) {
            xfer_free(ci->rank);
            xfer_free(ci->op);
            sim_fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
            return;
        }
        for (i = 0; i < g->size; i++)
            ci->op[i] = -1;
        *inst = (uint64_t) ++m->ninsts;
    }
    ci = &m->insts[*inst - 1];
    if (g->my_index < 0 || g->my_index >= g->size || ci->op[g->my_index] != -1 ||
        sim_member(m, rank, g, g->my_index) != rank) {
        sim_fail(m, XFER_ERR_VERIFY, "%s: round %d: inconsistent group membership in a %s",
                 R->s->algo, R->round, xfer_op_name(R->view.ops[k].kind));
        return;
    }
    ci->rank[g->my_index] = rank;
    ci->op[g->my_index] = k;
    if (++ci->posted == g->size) {
        run_coll(m, ci, g->size);
        xfer_free(ci->rank);
        xfer_free(ci->op);
        ci->rank = ci->op = NULL;
        xfer_hmap_erase(&m->coll, key);
    }
}
