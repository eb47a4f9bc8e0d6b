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

/* Subgroup arithmetic over L: Q subgroups, the first r = P mod Q of size ceil(P/Q). */
typedef struct {
    int P, Q, c, f, r;
} subgroups_t;

static int sub_size(const subgroups_t *g, int i)
{
    return i < g->r ? g->c : g->f;
}

static int sub_start(const subgroups_t *g, int i)
{
    return i < g->r ? i * g->c : g->r * g->c + (i - g->r) * g->f;
}

static int sub_owner(const subgroups_t *g, int x)
{
    return x < g->r * g->c ? x / g->c : g->r + (x - g->r * g->c) / g->f;
}

static xfer_status_t build_equal_blocks(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const int L = shape->n[0] >= shape->n[1] ? 0 : 1, S = 1 - L;
    const size_t kL = xfer_shape_count(shape, L, 0), kS = xfer_shape_count(shape, S, 0);
    subgroups_t sg;
    int local = xfer_sched_group_local(s, shape);

    sg.P = shape->n[L];
    sg.Q = shape->n[S];
    sg.c = (sg.P + sg.Q - 1) / sg.Q;
    sg.f = sg.P / sg.Q;
    sg.r = sg.P % sg.Q;
    /* With one block size 0 only one direction is scheduled at all: the half-duplex form
     * (the alternative Kang et al. 2018 weigh against H-FC-GT: ceil(P/Q) rounds instead of
     * 1 + log P, but no rank receives data it does not need). */
    if (kL == 0 || kS == 0)
        s->variant = L == 0 ? "seg/L=A/half" : "seg/L=B/half";
    else
        s->variant = L == 0 ? "seg/L=A" : "seg/L=B";

    if (s->group == L) {
        const int x = s->rank, i = sub_owner(&sg, x), t = x - sub_start(&sg, i);
        const int n = sub_size(&sg, i), peer = xfer_merged_rank(shape, S, i);
        size_t *cnt;
        int counts, y;

        xfer_sched_send(s, peer, XFER_BUF_SEND, 0, kL, 0);
        xfer_sched_recv(s, peer, XFER_BUF_RECV, (size_t) i * kS + xfer_seg_start(kS, n, t),
                        xfer_seg_len(kS, n, t), 0);
        xfer_sched_round(s);
        if (kS > 0) {
            counts = xfer_sched_counts_array(s, sg.P, &cnt);
            for (y = 0; cnt && y < sg.P; y++) {
                int iy = sub_owner(&sg, y);
                cnt[y] = xfer_seg_len(kS, sub_size(&sg, iy), y - sub_start(&sg, iy));
            }
            xfer_sched_allgatherv(s, local, counts, XFER_BUF_RECV, 0);
        }
    } else {
        const int i = s->rank, n = sub_size(&sg, i), first = sub_start(&sg, i);
        int t, counts;
        size_t *cnt;

        for (t = 0; t < n; t++) { /* one partner per round: the single-port model */
            const int peer = xfer_merged_rank(shape, L, first + t);
            xfer_sched_send(s, peer, XFER_BUF_SEND, xfer_seg_start(kS, n, t),
                            xfer_seg_len(kS, n, t), 0);
            xfer_sched_recv(s, peer, XFER_BUF_RECV, (size_t) (first + t) * kL, kL, 0);
            xfer_sched_round(s);
        }
        if (kL > 0) {
            int j;
            counts = xfer_sched_counts_array(s, sg.Q, &cnt);
            for (j = 0; cnt && j < sg.Q; j++)
                cnt[j] = (size_t) sub_size(&sg, j) * kL;
            xfer_sched_allgatherv(s, local, counts, XFER_BUF_RECV, 0);
        }
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
