/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ring_full: full-duplex inter-group allgather on a ring (ours; not in the papers, see
 * docs/ring_full.md for the derivation). Two half-duplex ring passes, the heavier direction
 * first: every block of that group reaches every rank of the other in p' + q'/2 steps, then the
 * other direction in q' + p'/2 steps. Each step each rank sends and receives at most one
 * block, to ring neighbours only. The passes cannot overlap: they keep the ports busy in their
 * last and first steps (checked for all even p, q <= 64: one step could be saved only when the
 * first pass's receivers are 2 positions); filling the first pass's idle ports with the
 * second's transfers gains at most 3% when the return direction is a tenth of the forward one
 * (docs/ring_full.md).
 *
 * Cost: (p' + q'/2)(a + k_A b) + (q' + p'/2)(a + k_B b). Lower bound max(p k_A, q k_B) b; on a
 *       ring with single-port ranks, max(p + q/2, q + p/2) steps for equal blocks.
 * Restrictions: none (a direction with nothing to send costs nothing).
 * Preferred when: the topology is a ring and one direction is much lighter than the other
 *       (k_B / k_A below about 1/3 for p = q), e.g. fields one way and steering data back;
 *       with equal blocks the ring allgather over all ranks (`ring`) is faster.
 * Source: ours, from seed-intergroup §1.6-1.9.
 */
#include "algos.h"
#include "patterns/ring.h"

static void passes(const xfer_sched_t *s, xfer_ring_pass_t r[2])
{
    const int first = (int) s->gen_param[0];
    xfer_ring_pass_init(&r[0], s->shape, first);
    xfer_ring_pass_init(&r[1], s->shape, 1 - first);
}

static xfer_status_t gen(const xfer_sched_t *s, int round, xfer_op_t *ops, int *n)
{
    xfer_ring_pass_t r;
    const int first = (int) s->gen_param[0], steps0 = (int) s->gen_param[1];
    const int second = round >= steps0; /* the pass this round belongs to */
    *n = 0;
    if (!s->gen_param[2 + second])
        return XFER_SUCCESS;
    xfer_ring_pass_init(&r, s->shape, second ? 1 - first : first);
    return xfer_ring_pass_ops(&r, s, second ? round - steps0 : round, ops, n);
}

xfer_status_t xfer_build_ring_full(const xfer_shape_t *shape, xfer_sched_t *s)
{
    xfer_ring_pass_t r[2];
    /* heavier direction first: the bandwidth term of the whole is symmetric, but the lighter
     * pass then ends the operation, shortening the tail */
    const double w0 = (double) shape->total[0] * shape->n[1];
    const double w1 = (double) shape->total[1] * shape->n[0];
    const int first = w1 > w0 ? 1 : 0;

    s->algo = "ring_full";
    s->variant = first == 0 ? "A->B,B->A" : "B->A,A->B";
    s->gen = gen;
    s->gen_param[0] = first;
    passes(s, r);
    s->gen_param[2] = shape->total[first] > 0; /* a pass with nothing to move is skipped */
    s->gen_param[3] = shape->total[1 - first] > 0;
    s->gen_param[1] = s->gen_param[2] ? xfer_ring_pass_nsteps(&r[0]) : 0;
    s->nrounds = (int) s->gen_param[1] + (s->gen_param[3] ? xfer_ring_pass_nsteps(&r[1]) : 0);
    s->gen_max_ops = XFER_RING_PASS_MAX_OPS;
    s->tmp_bytes = shape->total[s->group]; /* a sender keeps its group's other blocks */
    s->ring_only = 1;
    s->max_ports = xfer_ring_pass_hosts(&r[0], s) || xfer_ring_pass_hosts(&r[1], s) ? 2 : 1;
    return XFER_SUCCESS;
}

/* ---- descriptor ------------------------------------------------------------------------- */

/* Two half-duplex passes; every step costs a latency and its largest block. */
static double cost_ring_full(const xfer_shape_t *s, double a, double b)
{
    const int p = s->n[0] + s->n[0] % 2, q = s->n[1] + s->n[1] % 2;
    double t = 0.0;
    if (s->total[0])
        t += (p + q / 2) * (a + (double) xfer_cost_max_count(s, 0) * b);
    if (s->total[1])
        t += (q + p / 2) * (a + (double) xfer_cost_max_count(s, 1) * b);
    return t;
}

/* Every step moves about one block per rank. */
static double volume_ring_full(const xfer_shape_t *s)
{
    return (double) (s->n[0] + s->n[1]) * cost_ring_full(s, 0.0, 1.0) * 0.5;
}

const xfer_algo_t xfer_algo_ring_full = {
    .name = "ring_full",
    .summary = "full duplex on a ring (ours): the two half-duplex ring passes, heavier direction "
               "first",
    .restrictions = "none",
    .build = xfer_build_ring_full,
    .model = xfer_build_ring_full,
    .flags = XFER_ALGO_RING | XFER_ALGO_AUTO_FULL,
    .cost = cost_ring_full,
    .volume = volume_ring_full,
};
