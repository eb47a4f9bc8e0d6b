/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_full_v: full-duplex inter-group allgatherv by global-byte-index segmentation (Kang,
 * Träff et al., Parallel Computing 2019, Algorithm 2). Every byte a group contributes gets a
 * global index (its offset in the concatenation of the group's blocks in rank order). The
 * K_A bytes of group A are cut into q near-equal segments, one per rank of B (the first
 * K_A mod q one byte longer), and symmetrically for B. Each rank sends the parts of its
 * block that fall in each segment to that segment's owner, in increasing owner order, and
 * receives its own segment straight into place in the result buffer. One intra-group
 * allgatherv per group over the segments then completes the result, in place.
 * Receive order (the paper's rule, which bounds the exchange time): a receiver has at most
 * two senders whose block spans several segments; it takes the higher-ranked one first, the
 * single-target senders next (ascending) and the lower-ranked one last. Sends and receives
 * each run as a chain (one outstanding at a time), independently of each other.
 *
 * Cost: (#targets + log p) a + (max_i k_i + ceil(K/n)) b for the exchange, plus the
 *       allgatherv: log n a + (K - K/n) b; total <= M + (max k + log pq) b with
 *       M = max(K_A, K_B) (Theorem 3; the log term is our count exchange, not an allreduce).
 * Restrictions: none (any p, q, any counts including 0; K < n gives empty segments).
 * Preferred when: block sizes differ (allgatherv skew) — load per receiver stays within one
 *       byte of K/n whatever the skew.
 * Source: seed-intergroup §2.3.
 */
#include "algos.h"

/* Rank of group g whose block holds global byte @p byte (< total[g]); skips empty blocks. */
static int owner_of_byte(const xfer_shape_t *shape, int g, size_t byte)
{
    int lo = 0, hi = shape->n[g] - 1;

    if (!shape->cnt[g])
        return (int) (byte / shape->ucnt[g]);
    /* last x with pre[x] <= byte: that block is non-empty and holds the byte */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (shape->pre[g][mid] <= byte)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Does sender x of group g (block non-empty) cover more than one of the n segments? */
static int multi_target(const xfer_shape_t *shape, int g, int x, int n)
{
    const size_t K = shape->total[g], off = xfer_shape_offset(shape, g, x);
    const size_t len = xfer_shape_count(shape, g, x);
    return xfer_seg_index(K, n, off) != xfer_seg_index(K, n, off + len - 1);
}

static void recv_piece(const xfer_shape_t *shape, xfer_sched_t *s, int other, int x, size_t s0,
                       size_t s1)
{
    const size_t off = xfer_shape_offset(shape, other, x);
    const size_t lo = XFER_MAX(off, s0), hi = XFER_MIN(off + xfer_shape_count(shape, other, x), s1);
    if (hi > lo)
        xfer_sched_recv(s, xfer_merged_rank(shape, other, x), XFER_BUF_RECV, lo, hi - lo, 2);
}

xfer_status_t xfer_append_segmented(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const int g = s->group, other = 1 - g, me = s->rank;
    const size_t mine = xfer_shape_count(shape, g, me), R = xfer_shape_offset(shape, g, me);
    const size_t K = shape->total[g], K2 = shape->total[other];
    const int nseg_out = shape->n[other], nseg_in = shape->n[g];

    /* Send chain (1): my block cut at the other group's segment boundaries. */
    if (mine > 0) {
        int j0 = xfer_seg_index(K, nseg_out, R), j1 = xfer_seg_index(K, nseg_out, R + mine - 1);
        int j;
        for (j = j0; j <= j1; j++) {
            size_t lo = XFER_MAX(R, xfer_seg_start(K, nseg_out, j));
            size_t hi = XFER_MIN(R + mine, xfer_seg_start(K, nseg_out, j + 1));
            if (hi > lo)
                xfer_sched_send(s, xfer_merged_rank(shape, other, j), XFER_BUF_SEND, lo - R,
                                hi - lo, 1);
        }
    }
    /* Receive chain (2): my segment of the other group's bytes, in the paper's order. */
    if (K2 > 0) {
        const size_t s0 = xfer_seg_start(K2, nseg_in, me);
        const size_t s1 = s0 + xfer_seg_len(K2, nseg_in, me);
        if (s1 > s0) {
            const int x1 = owner_of_byte(shape, other, s0);
            const int xm = owner_of_byte(shape, other, s1 - 1);
            const int multi_lo = x1 != xm && multi_target(shape, other, x1, nseg_in);
            const int multi_hi = x1 != xm && multi_target(shape, other, xm, nseg_in);
            int x;

            if (multi_hi)
                recv_piece(shape, s, other, xm, s0, s1);
            for (x = x1; x <= xm; x++)
                if (!((x == x1 && multi_lo) || (x == xm && multi_hi)))
                    recv_piece(shape, s, other, x, s0, s1);
            if (multi_lo)
                recv_piece(shape, s, other, x1, s0, s1);
        }
        xfer_sched_round(s);
        xfer_sched_allgatherv(s, xfer_sched_group_local(s, shape),
                              xfer_sched_counts_segments(s, nseg_in, K2), XFER_BUF_RECV, 0);
    }
    return xfer_sched_finish(s);
}

xfer_status_t xfer_build_fc_full_v(const xfer_shape_t *shape, xfer_sched_t *s)
{
    s->algo = "fc_full_v";
    s->variant = "segmented";
    return xfer_append_segmented(shape, s);
}

/* ---- descriptor ------------------------------------------------------------------------- */

double xfer_cost_segmented(const xfer_shape_t *s, double a, double b)
{
    double t = 0.0;
    int g;
    for (g = 0; g < 2; g++) { /* direction g -> 1-g, both at once: take the slower */
        const int n = s->n[1 - g];
        const size_t K = s->total[g], seg = K / (size_t) n + (K % (size_t) n ? 1 : 0);
        const size_t kmax = xfer_cost_max_count(s, g);
        double targets = seg ? (double) (kmax / seg + 2) : 1.0;
        double x = K ? targets * a + (double) (kmax + seg) * b : 0.0;
        t = XFER_MAX(t, x + xfer_cost_allgather(n, K, a, b));
    }
    return xfer_cost_lg(XFER_MAX(s->n[0], s->n[1])) * a + t; /* + the count exchange */
}

const xfer_algo_t xfer_algo_fc_full_v = {
    .name = "fc_full_v",
    .summary = "full duplex, fully connected, global-byte-index segmentation (2019 Alg. 2) for "
               "any counts",
    .restrictions = "none",
    .build = xfer_build_fc_full_v,
    .model = xfer_build_fc_full_v,
    .flags = 0, /* fc_full and fc_half switch to its exchange themselves when counts differ */
    .cost = xfer_cost_segmented,
    .volume = xfer_volume_optimal,
};
