/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * relay: half-duplex inter-group allgatherv by pipelined relay chains over the receivers' ring,
 * for blocks of any sizes (ours). Sender i of group A (p ranks) hands its block, segment by
 * segment, to receiver h(i) = floor(i q / p) of group B (q ranks); the segments run round B's
 * ring from there, each receiver forwarding one as soon as it has it (patterns/relay.h).
 *
 * Why: with uneven blocks the store-and-forward exchanges leave one port carrying more than the
 * bound. Every receiver must take in T = sum a_i bytes; fc_direct's direct path makes the
 * heaviest sender send q a_max, its pieces path sends a_max and then rings the pieces (about
 * a_max + (q - 1) T / q: 1.83 T at (2, 6) with the heaviest rank at 2x the average), and the
 * segmented exchange of fc_half and fc_full_v adds a second phase likewise. Here every port
 * carries at most T (a receiver takes in each chain once, a ring link carries each chain at most
 * once, a sender sends its block once) and the pipeline overlaps the hops, so a step of skewed
 * counts costs about T b plus the ring's fill, as an even one does.
 *
 * Cost: q (a + s b) + n max(s b, a / 2): n segments of s bytes on average pass through each
 *       receiver (the heaviest chain cut to the network's segment cap, XFER_NET_SEGMENT, or the
 *       model's optimum on one node; the other chains in segments of the same size), two in
 *       flight per link; the fill is one segment crossing q links. About T b + q (a + s b)
 *       when segments are large enough to hide the latency.
 * Restrictions: one group sends nothing (half duplex).
 * Preferred when: half duplex with large, uneven blocks (joined datasets' rows, allgatherv with
 *       skew); not for small ones (a message per segment and hop).
 * Source: ours; the chains are fc_half's relay for p < q (docs/algorithms.md) with a chain per
 *       sender of any size and any p, q.
 */
#include "algos.h"
#include "patterns/relay.h"

xfer_status_t xfer_build_relay(const xfer_shape_t *shape, xfer_sched_t *s)
{
    xfer_status_t st;
    int sg;

    s->algo = "relay";
    if (shape->total[0] > 0 && shape->total[1] > 0)
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED, "relay needs one group to send 0 bytes");
    if (shape->total[0] == 0 && shape->total[1] == 0) {
        s->variant = "empty";
        return xfer_sched_finish(s);
    }
    sg = shape->total[0] > 0 ? 0 : 1;
    s->variant = sg == 0 ? "A->B" : "B->A";
    st = xfer_relay_append(shape, s, sg);
    return st != XFER_SUCCESS ? st : xfer_sched_finish(s);
}

/* ---- descriptor ------------------------------------------------------------------------- */

static double cost_relay(const xfer_shape_t *s, double a, double b)
{
    if (s->total[0] == 0 && s->total[1] == 0)
        return 0.0;
    return xfer_relay_cost(s, s->total[0] > 0 ? 0 : 1, a, b);
}

const xfer_algo_t xfer_algo_relay = {
    .name = "relay",
    .summary = "half duplex, pipelined relay chains over the receivers' ring, blocks of any size "
               "(ours)",
    .restrictions = "one group must send 0 bytes",
    .build = xfer_build_relay,
    .model = xfer_build_relay,
    .flags = XFER_ALGO_AUTO_HALF | XFER_ALGO_HALF_ONLY,
    .cost = cost_relay,
    .volume = xfer_volume_optimal,
};
