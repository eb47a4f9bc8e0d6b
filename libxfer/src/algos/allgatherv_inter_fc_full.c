/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_full: full-duplex inter-group allgather with message segmentation (Kang, Träff et al.,
 * Parallel Computing 2019, Algorithm 1). Let L be the larger group (P ranks, blocks of k_L
 * bytes) and S the smaller (Q ranks, k_S). L is cut into Q contiguous subgroups s_i of
 * ceil(P/Q) or floor(P/Q) ranks; b_i in S pairs with each member of s_i in turn, sending it
 * one of |s_i| near-equal pieces of its block and receiving that member's whole block. After
 * ceil(P/Q) exchange rounds both groups run one intra-group allgatherv, concurrently: L over
 * the pieces (which reassemble S's blocks in order), S over the subgroups' blocks. Partners
 * are chosen so that everything lands in rank order: no reordering, no scratch.
 * Either block size may be 0 (half duplex in one direction). With unequal block sizes inside
 * a group (allgatherv) the builder uses the global-byte-index segmentation of Algorithm 2
 * (allgatherv_inter_fc_full_v.c).
 *
 * Cost: ceil(P/Q) a + max(ceil(P/Q) k_L, k_S) b        exchange
 *       + max(log P a + (Q k_S - Q k_S/P) b,
 *             log Q a + (P k_L - P k_L/Q) b)            concurrent allgathers
 *       <= (ceil(P/Q) + log P) a + (M + k_S) b,  M = max(P k_L, Q k_S)  (Theorem 1)
 * Restrictions: none (any P, Q, any k_L, k_S including 0).
 * Preferred when: both groups contribute and P/Q is small; bandwidth-optimal asymptotically.
 * Source: seed-intergroup §2.2.
 */
#include "algos.h"

static xfer_status_t build_equal_blocks(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const int L = shape->n[0] >= shape->n[1] ? 0 : 1, S = 1 - L;
    const int P = shape->n[L], Q = shape->n[S];
    const size_t kL = xfer_shape_count(shape, L, 0), kS = xfer_shape_count(shape, S, 0);
    int local = xfer_sched_group_local(s, shape);

    /* With one block size 0 only one direction is scheduled at all: the half-duplex form
     * (the alternative Kang et al. 2018 weigh against H-FC-GT: ceil(P/Q) rounds instead of
     * 1 + log P, but no rank receives data it does not need). */
    if (kL == 0 || kS == 0)
        s->variant = L == 0 ? "seg/L=A/half" : "seg/L=B/half";
    else
        s->variant = L == 0 ? "seg/L=A" : "seg/L=B";

    if (s->group == L) {
        const int x = s->rank, i = xfer_split_owner(P, Q, x);
        const int t = x - xfer_split_start(P, Q, i), n = xfer_split_size(P, Q, i);
        const int peer = xfer_merged_rank(shape, S, i);

        xfer_sched_send(s, peer, XFER_BUF_SEND, 0, kL, 0);
        xfer_sched_recv(s, peer, XFER_BUF_RECV, (size_t) i * kS + xfer_seg_start(kS, n, t),
                        xfer_seg_len(kS, n, t), 0);
        xfer_sched_round(s);
        /* L reassembles S's blocks from the pieces, in order */
        xfer_sched_allgatherv(s, local, xfer_sched_counts_pieces(s, P, Q, kS), XFER_BUF_RECV, 0);
    } else {
        const int i = s->rank, n = xfer_split_size(P, Q, i), first = xfer_split_start(P, Q, i);
        int t;

        for (t = 0; t < n; t++) { /* one partner per round: the single-port model */
            const int peer = xfer_merged_rank(shape, L, first + t);
            xfer_sched_send(s, peer, XFER_BUF_SEND, xfer_seg_start(kS, n, t),
                            xfer_seg_len(kS, n, t), 0);
            xfer_sched_recv(s, peer, XFER_BUF_RECV, (size_t) (first + t) * kL, kL, 0);
            xfer_sched_round(s);
        }
        /* S gathers the subgroups' blocks, in order */
        xfer_sched_allgatherv(s, local, xfer_sched_counts_blocks(s, P, Q, kL), XFER_BUF_RECV, 0);
    }
    return xfer_sched_finish(s);
}

xfer_status_t xfer_build_fc_full(const xfer_shape_t *shape, xfer_sched_t *s)
{
    s->algo = "fc_full";
    if (xfer_shape_uniform(shape, 0) && xfer_shape_uniform(shape, 1))
        return build_equal_blocks(shape, s);
    s->variant = "segmented";
    return xfer_append_segmented(shape, s);
}

/* ---- descriptor ------------------------------------------------------------------------- */

static double cost_fc_full(const xfer_shape_t *s, double a, double b)
{
    int L, S, P, Q, c;
    size_t kL, kS;
    if (!xfer_shape_uniform(s, 0) || !xfer_shape_uniform(s, 1))
        return xfer_cost_segmented(s, a, b);
    L = s->n[0] >= s->n[1] ? 0 : 1;
    S = 1 - L;
    P = s->n[L];
    Q = s->n[S];
    c = (P + Q - 1) / Q;
    kL = xfer_shape_count(s, L, 0);
    kS = xfer_shape_count(s, S, 0);
    return c * a + (double) XFER_MAX((size_t) c * kL, kS) * b +
           XFER_MAX(xfer_cost_allgather(P, (size_t) Q * kS, a, b),
                    xfer_cost_allgather(Q, (size_t) P * kL, a, b));
}

const xfer_algo_t xfer_algo_fc_full = {
    .name = "fc_full",
    .summary = "full duplex, fully connected, message segmentation (Kang, Traeff et al. 2019, "
               "Alg. 1; Alg. 2 when block sizes differ)",
    .restrictions = "none",
    .build = xfer_build_fc_full,
    .model = xfer_build_fc_full,
    /* half duplex too: its schedule then holds the one direction only */
    .flags = XFER_ALGO_AUTO_HALF | XFER_ALGO_AUTO_FULL,
    .cost = cost_fc_full,
    .volume = xfer_volume_optimal,
};
