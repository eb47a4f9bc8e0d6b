/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ring_half: half-duplex inter-group allgather on a ring (Kang et al., "Optimal Algorithms for
 * Half-Duplex Inter-Group All-to-All Broadcast", Algorithms 1 and 3). The p senders and q
 * receivers sit on one ring (the merged ranks in order); every step each rank sends at most one
 * block to a ring neighbour and receives at most one. Three stages of message "sequences"
 * pipeline the senders' blocks into the receiver region from both of its ends: p + q/2 steps.
 * Variable block sizes (allgatherv) move the same way. Odd p or q get a dummy position that
 * carries nothing and is played by its neighbour (patterns/ring.h).
 *
 * Cost: (p' + q'/2) (a + k b), p' = p rounded up to even, q' likewise; with unequal blocks each
 *       step costs a plus the largest block moved in it. Lower bound p k b (+ latency).
 * Restrictions: one group sends nothing (half duplex). A host of a dummy position may send two
 *       blocks (and receive two) in one step.
 * Preferred when: the topology is a ring (or the network is ring-like); improves on the ring
 *       allgather over all ranks, (p + q - 1)(a + k b), by (p + q - 1)/(p + q/2).
 * Source: seed-intergroup §1.6-1.9 and Appendix A (p > q formulation and the corrected
 *       Algorithm 3: 004's line 58, guard 2j > 2i + 3p/2 - q).
 */
#include "algos.h"
#include "patterns/ring.h"

static xfer_status_t gen(const xfer_sched_t *s, int round, xfer_op_t *ops, int *n)
{
    xfer_ring_pass_t r;
    xfer_ring_pass_init(&r, s->shape, (int) s->gen_param[0]);
    *n = 0;
    return xfer_ring_pass_ops(&r, s, round, ops, n);
}

xfer_status_t xfer_build_ring_half(const xfer_shape_t *shape, xfer_sched_t *s)
{
    xfer_ring_pass_t r;
    int sg;

    s->algo = "ring_half";
    if (shape->total[0] > 0 && shape->total[1] > 0)
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED, "ring_half needs one group to send 0 bytes");
    if (shape->total[0] == 0 && shape->total[1] == 0) {
        s->variant = "empty";
        return xfer_sched_finish(s);
    }
    sg = shape->total[0] > 0 ? 0 : 1;
    xfer_ring_pass_init(&r, shape, sg);
    s->variant = sg == 0 ? "A->B" : "B->A";
    s->gen = gen;
    s->gen_param[0] = sg;
    s->gen_max_ops = XFER_RING_PASS_MAX_OPS;
    s->nrounds = xfer_ring_pass_nsteps(&r);
    s->tmp_bytes = s->group == sg ? shape->total[sg] : 0;
    s->ring_only = 1;
    s->max_ports = xfer_ring_pass_hosts(&r, s) ? 2 : 1;
    return XFER_SUCCESS;
}

/* ---- descriptor ------------------------------------------------------------------------- */

/* Every step costs a latency and its largest block. */
static double cost_ring_half(const xfer_shape_t *s, double a, double b)
{
    int sg, p, q;
    if (s->total[0] == 0 && s->total[1] == 0)
        return 0.0;
    sg = s->total[0] > 0 ? 0 : 1;
    p = s->n[sg] + s->n[sg] % 2;
    q = s->n[1 - sg] + s->n[1 - sg] % 2;
    return (p + q / 2) * (a + (double) xfer_cost_max_count(s, sg) * b);
}

/* Every step moves about one block per rank. */
static double volume_ring_half(const xfer_shape_t *s)
{
    const int sg = s->total[0] > 0 ? 0 : 1;
    return (double) (s->n[0] + s->n[1]) * cost_ring_half(s, 0.0, 1.0) /
           (double) XFER_MAX(1, s->n[sg]) * 0.5;
}

const xfer_algo_t xfer_algo_ring_half = {
    .name = "ring_half",
    .summary = "half duplex on a ring (Kang et al. Alg. 1/3, corrected; p > q derived): p + q/2 "
               "steps between ring neighbours",
    .restrictions = "one group must send 0 bytes",
    .build = xfer_build_ring_half,
    .model = xfer_build_ring_half,
    .flags = XFER_ALGO_RING | XFER_ALGO_AUTO_HALF | XFER_ALGO_HALF_ONLY,
    .cost = cost_ring_half,
    .volume = volume_ring_half,
};
