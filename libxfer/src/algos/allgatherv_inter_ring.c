/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ring: the ring allgather over all p + q ranks, the comparison of Kang et al.'s ring
 * experiments: in step s (0 <= s < p + q - 1) rank x forwards to x + 1 the block that
 * originated at x - s (its own in step 0) and receives from x - 1 the block of x - s - 1. Every
 * block travels around the whole ring, so each rank also forwards its own group's blocks, which
 * it does not need (kept in TMP). Blocks of 0 bytes are not sent (allgatherv).
 *
 * Cost: (p + q - 1)(a + k_max b) with k_max the largest block size; lower bound
 *       max(p k_A, q k_B) b.
 * Restrictions: none.
 * Preferred when: the topology is a ring and both groups send blocks of similar size (then it
 *       beats ring_full); half duplex is better served by ring_half.
 * Source: seed-intergroup §1.10 (the paper's ring baseline, real block sizes instead of its
 *       k-byte dummy messages).
 */
#include "algos.h"

/* Where the block that originated at merged rank y is kept at rank (g, r). */
static void place(const xfer_sched_t *s, int y, int *buf, size_t *off, size_t *len)
{
    const xfer_shape_t *sh = s->shape;
    const int gy = y < sh->n[0] ? 0 : 1, ry = gy ? y - sh->n[0] : y;
    *len = xfer_shape_count(sh, gy, ry);
    *off = xfer_shape_offset(sh, gy, ry);
    if (gy != s->group)
        *buf = XFER_BUF_RECV;
    else if (ry == s->rank) {
        *buf = XFER_BUF_SEND;
        *off = 0;
    } else
        *buf = XFER_BUF_TMP;
}

static xfer_status_t gen(const xfer_sched_t *s, int step, xfer_op_t *ops, int *n)
{
    const int N = s->n[0] + s->n[1];
    const int x = xfer_merged_rank(s->shape, s->group, s->rank);
    /* x and step are in [0, N): neighbours and origins mod N without a division (this runs
     * for every rank and step of a simulation) */
    const int right = x + 1 < N ? x + 1 : 0, left = x > 0 ? x - 1 : N - 1;
    const int out = x >= step ? x - step : x - step + N, in = out > 0 ? out - 1 : N - 1;
    size_t off, len;
    int buf;

    *n = 0;
    place(s, out, &buf, &off, &len);
    if (len > 0)
        xfer_op_p2p(&ops[(*n)++], XFER_OP_SEND, right, buf, off, len);
    place(s, in, &buf, &off, &len);
    if (len > 0)
        xfer_op_p2p(&ops[(*n)++], XFER_OP_RECV, left, buf, off, len);
    return XFER_SUCCESS;
}

xfer_status_t xfer_build_ring(const xfer_shape_t *shape, xfer_sched_t *s)
{
    s->algo = "ring";
    s->variant = "";
    s->gen = gen;
    s->gen_max_ops = 2;
    s->nrounds = shape->n[0] + shape->n[1] - 1;
    s->tmp_bytes = shape->total[s->group];
    s->ring_only = 1;
    return XFER_SUCCESS;
}

/* ---- descriptor ------------------------------------------------------------------------- */

static double cost_ring(const xfer_shape_t *s, double a, double b)
{
    return (s->n[0] + s->n[1] - 1) *
           (a + (double) XFER_MAX(xfer_cost_max_count(s, 0), xfer_cost_max_count(s, 1)) * b);
}

/* Every block passes every other rank. */
static double volume_ring(const xfer_shape_t *s)
{
    return (double) (s->n[0] + s->n[1] - 1) * (double) (s->total[0] + s->total[1]);
}

const xfer_algo_t xfer_algo_ring = {
    .name = "ring",
    .summary = "ring allgather over all p + q ranks (the papers' ring baseline)",
    .restrictions = "none",
    .build = xfer_build_ring,
    .model = xfer_build_ring,
    .flags = XFER_ALGO_RING | XFER_ALGO_AUTO_FULL,
    .cost = cost_ring,
    .volume = volume_ring,
};
