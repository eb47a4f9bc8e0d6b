/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_half: half-duplex inter-group allgather on a fully connected network (Kang et al.,
 * "Optimal Algorithms for Half-Duplex Inter-Group All-to-All Broadcast"). Group A (p senders,
 * blocks of k bytes) delivers every block to each of the q ranks of group B, which sends
 * nothing.
 *   p = q  a_j -> b_j, then an allgather among B.
 *   p > q  a_j -> b_j for j < q, then the p ranks {b_0..b_{q-1}, a_q..a_{p-1}} (ordered by
 *          message index) allgather; the extra senders discard what they receive.
 *   p < q  broadcast groups {a_i, b_i, b_{i+p}, ...} rooted at a_i, then every run of p
 *          consecutive receivers allgathers. When p does not divide q the r = q mod p remainder
 *          receivers join the first r broadcast groups, allgather m_0..m_{r-1} among themselves
 *          and get m_r..m_{p-1} in one message from b_t (t < r). Blocks of XFER_CHAIN_MIN bytes
 *          and more go instead by p pipelined relay chains over the ring of all receivers
 *          (ours, below): each receiver takes in p k, the bound, where the broadcast groups
 *          need (p + 1) k.
 * With unequal block sizes the algorithm switches to the segmented exchange of the 2019
 * paper (see allgatherv_inter_fc_full_v.c), which balances the receivers' load.
 *
 * Cost (a = latency, b = time per byte):
 *   p = q, p > q: (1 + log p) a + p k b                          (optimal in both terms)
 *   p < q:        (log p + 2 log(q/p + 1)) a + (p + 1) k b        (+ (p - r) k b if r > 0)
 *                 relay chains, s segments: (s + q - 1) a + (p k + (q - 1) p k / s) b
 * Restrictions: one group must contribute 0 bytes (half duplex).
 * Preferred when: half duplex, equal blocks, latency matters (fewest rounds of the fc family).
 * Source: seed-intergroup §1.2-1.4 (the q mod p != 0 extension and the relay chains are ours).
 */
#include <stdlib.h>

#include "algos.h"
#include "patterns/chain.h"
#include "patterns/relay.h"

static xfer_status_t build_eq(const xfer_shape_t *shape, xfer_sched_t *s, int sg, size_t k)
{
    const int rg = 1 - sg, j = s->rank;

    s->variant = sg == 0 ? "p=q/A" : "p=q/B";
    if (s->group == sg) {
        xfer_sched_send(s, xfer_merged_rank(shape, rg, j), XFER_BUF_SEND, 0, k, 0);
    } else {
        int local = xfer_sched_group_local(s, shape);
        int counts = xfer_sched_counts_uniform(s, shape->n[rg], k);
        xfer_sched_recv(s, xfer_merged_rank(shape, sg, j), XFER_BUF_RECV, (size_t) j * k, k, 0);
        xfer_sched_round(s);
        xfer_sched_allgatherv(s, local, counts, XFER_BUF_RECV, 0);
    }
    return xfer_sched_finish(s);
}

static xfer_status_t build_gt(const xfer_shape_t *shape, xfer_sched_t *s, int sg, size_t k)
{
    const int rg = 1 - sg, p = shape->n[sg], q = shape->n[rg], j = s->rank;
    xfer_range_t r[2];

    s->variant = sg == 0 ? "p>q/A" : "p>q/B";
    s->nslots = 1; /* every rank takes part in the split, members or not */
    r[0].start = xfer_merged_rank(shape, rg, 0);
    r[0].stride = 1;
    r[0].count = q;
    r[1].start = xfer_merged_rank(shape, sg, q);
    r[1].stride = 1;
    r[1].count = p - q;

    if (s->group == sg && j < q) {
        xfer_sched_send(s, xfer_merged_rank(shape, rg, j), XFER_BUF_SEND, 0, k, 0);
    } else if (s->group == sg) {
        /* Extra sender: contributes m_j from scratch, receives (and drops) all p blocks. */
        int grp = xfer_sched_group(s, 0, 2, r);
        int counts = xfer_sched_counts_uniform(s, p, k);
        s->tmp_bytes = (size_t) p * k;
        xfer_sched_copy(s, XFER_BUF_SEND, 0, XFER_BUF_TMP, (size_t) j * k, k);
        xfer_sched_round(s);
        xfer_sched_allgatherv(s, grp, counts, XFER_BUF_TMP, 0);
    } else {
        int grp = xfer_sched_group(s, 0, 2, r);
        int counts = xfer_sched_counts_uniform(s, p, k);
        xfer_sched_recv(s, xfer_merged_rank(shape, sg, j), XFER_BUF_RECV, (size_t) j * k, k, 0);
        xfer_sched_round(s);
        xfer_sched_allgatherv(s, grp, counts, XFER_BUF_RECV, 0);
    }
    return xfer_sched_finish(s);
}

/* p < q, large blocks: p pipelined chains over the ring of all q receivers, chain i entering at
 * b_h(i), h(i) = floor(i q / p), from a_i (patterns/relay.h): each receiver takes in p k and
 * passes on at most p k, and no pair of ranks exchanges data both ways. */
static xfer_status_t build_lt_relay(const xfer_shape_t *shape, xfer_sched_t *s, int sg)
{
    s->variant = sg == 0 ? "p<q/A/relay" : "p<q/B/relay";
    const xfer_status_t st = xfer_relay_append(shape, s, sg);
    return st != XFER_SUCCESS ? st : xfer_sched_finish(s);
}

static xfer_status_t build_lt(const xfer_shape_t *shape, xfer_sched_t *s, int sg, size_t k)
{
    const int rg = 1 - sg, p = shape->n[sg], q = shape->n[rg];
    const int f = q / p, r = q % p;
    xfer_range_t bc[2];
    int i, grp;

    if (k >= XFER_CHAIN_MIN)
        return build_lt_relay(shape, s, sg);
    s->variant = sg == 0 ? "p<q/A" : "p<q/B";
    s->nslots = 2; /* broadcast groups, receiver subgroups */
    i = s->group == sg ? s->rank : s->rank % p;
    bc[0].start = xfer_merged_rank(shape, sg, i);
    bc[0].stride = 1;
    bc[0].count = 1;
    bc[1].start = xfer_merged_rank(shape, rg, i);
    bc[1].stride = p;
    bc[1].count = f + (i < r ? 1 : 0);
    grp = xfer_sched_group(s, 0, 2, bc);

    if (s->group == sg) {
        xfer_sched_bcast(s, grp, 0, XFER_BUF_SEND, 0, k);
    } else {
        const int b = s->rank, sub = b / p, size = sub < f ? p : r;
        xfer_range_t sr;
        int sgrp, counts;

        xfer_sched_bcast(s, grp, 0, XFER_BUF_RECV, (size_t) i * k, k);
        xfer_sched_round(s);
        sr.start = xfer_merged_rank(shape, rg, sub * p);
        sr.stride = 1;
        sr.count = size;
        sgrp = xfer_sched_group(s, 1, 1, &sr);
        counts = xfer_sched_counts_uniform(s, size, k);
        xfer_sched_allgatherv(s, sgrp, counts, XFER_BUF_RECV, 0);
        xfer_sched_round(s);
        /* Remainder receivers miss m_r..m_{p-1}: b_t (t < r) forwards them in one piece. */
        if (r > 0 && b < r)
            xfer_sched_send(s, xfer_merged_rank(shape, rg, f * p + b), XFER_BUF_RECV,
                            (size_t) r * k, (size_t) (p - r) * k, 0);
        else if (r > 0 && b >= f * p)
            xfer_sched_recv(s, xfer_merged_rank(shape, rg, b - f * p), XFER_BUF_RECV,
                            (size_t) r * k, (size_t) (p - r) * k, 0);
    }
    return xfer_sched_finish(s);
}

xfer_status_t xfer_build_fc_half(const xfer_shape_t *shape, xfer_sched_t *s)
{
    int sg;
    size_t k;

    s->algo = "fc_half";
    if (shape->total[0] > 0 && shape->total[1] > 0)
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED, "fc_half needs one group to contribute 0 bytes");
    if (shape->total[0] == 0 && shape->total[1] == 0) {
        s->variant = "empty";
        return xfer_sched_finish(s);
    }
    sg = shape->total[0] > 0 ? 0 : 1;
    if (!xfer_shape_uniform(shape, sg)) {
        s->variant = "segmented";
        return xfer_append_segmented(shape, s);
    }
    k = xfer_shape_count(shape, sg, 0);
    if (shape->n[sg] == shape->n[1 - sg])
        return build_eq(shape, s, sg, k);
    if (shape->n[sg] > shape->n[1 - sg])
        return build_gt(shape, s, sg, k);
    return build_lt(shape, s, sg, k);
}

/* ---- descriptor ------------------------------------------------------------------------- */

static double cost_fc_half(const xfer_shape_t *s, double a, double b)
{
    int sg, p, q;
    size_t k, T;
    if (s->total[0] == 0 && s->total[1] == 0)
        return 0.0;
    sg = s->total[0] > 0 ? 0 : 1;
    if (!xfer_shape_uniform(s, sg))
        return xfer_cost_segmented(s, a, b);
    p = s->n[sg];
    q = s->n[1 - sg];
    k = xfer_shape_count(s, sg, 0);
    T = s->total[sg];
    if (p >= q)
        return (1 + xfer_cost_lg(p)) * a + (double) T * b;
    if (k >= XFER_CHAIN_MIN) { /* relay chains: the ring's fill, then p k per receiver */
        const int nseg = xfer_chain_segments(k, (q - 1) * p + 1);
        return (nseg + q - 1) * a + ((double) T + (double) (q - 1) * p * (double) k / nseg) * b;
    }
    return (xfer_cost_lg(p) + 2 * xfer_cost_lg(q / p + 1)) * a + (double) (T + k) * b +
           (q % p ? a + (double) (p - q % p) * (double) k * b : 0.0);
}

static double volume_fc_half(const xfer_shape_t *s)
{
    int sg, p, q, f, r;
    double k;
    if (s->total[0] == 0 && s->total[1] == 0)
        return 0.0;
    sg = s->total[0] > 0 ? 0 : 1;
    if (!xfer_shape_uniform(s, sg))
        return xfer_volume_optimal(s);
    p = s->n[sg];
    q = s->n[1 - sg];
    k = (double) xfer_shape_count(s, sg, 0);
    if (p == q)
        return q * k + (double) q * (q - 1) * k;
    if (p > q) /* the extra senders receive the whole result too */
        return q * k + (double) p * (p - 1) * k;
    if (k >= XFER_CHAIN_MIN) /* relay chains: every receiver gets each block once */
        return (double) q * p * k;
    f = q / p;
    r = q % p;
    return q * k + (double) f * p * (p - 1) * k + (double) r * (r - 1) * k +
           (double) r * (p - r) * k;
}

const xfer_algo_t xfer_algo_fc_half = {
    .name = "fc_half",
    .summary = "half duplex, fully connected (Kang et al.): pairwise send + allgather, extra "
               "senders join, broadcast groups when p < q",
    .restrictions = "one group must send 0 bytes",
    .build = xfer_build_fc_half,
    .model = xfer_build_fc_half,
    .flags = XFER_ALGO_AUTO_HALF | XFER_ALGO_HALF_ONLY | XFER_ALGO_SPLITS,
    .cost = cost_fc_half,
    .volume = volume_fc_half,
};
