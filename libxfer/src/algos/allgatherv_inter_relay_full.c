/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * relay_full: full-duplex inter-group allgatherv as two relays at once, each direction's chains
 * over its receivers' ring (patterns/relay.h), with the chains' heads placed so that no port
 * carries more than the bound (ours). Every rank of group g takes in T_o = the other group's
 * bytes (the bound, max(T_A, T_B) b); it sends its own block once, to its chain's head, and
 * forwards the other group's chains on its ring: a ring link out of rank j carries every chain
 * but those that end at j, i.e. those headed at j's successor. So rank j sends
 *     k_j + T_o - E(j + 1),   E(h) = the bytes of the chains headed at h,
 * and the heads are chosen to even that out: chains by size, largest first, each to the head
 * whose predecessor would send the most (the lowest on ties; for B's chains, not a rank whose own
 * chain is headed at this chain's sender, so that no pair carries data both ways, unless that
 * leaves a port above the bound). With the heaviest
 * rank at twice the average the busiest port then carries about the bound in every shape, where
 * one relay's fixed heads leave k_max + T_o (1.5 T at (4, 4)), and the store-and-forward
 * exchanges of fc_full_v and fc_direct's pieces carry more (docs/algorithms.md).
 *
 * Cost: the slower direction's relay (a segment crossing its ring, then every segment through a
 *       receiver's port) plus, at the bytes' rate, what the busiest port carries beyond the bound.
 * Restrictions: none (a group that sends nothing leaves one relay).
 * Preferred when: uneven blocks (allgatherv with skew, joined datasets), both ways or one (where
 *       it is `relay` with heads that even out the ring links and eager feeds for even blocks:
 *       1.02-1.03x the floor in the skewed half-duplex cells against relay's 1.03-1.09); large
 *       blocks (a message per segment and hop).
 * Source: ours, from the relay chains (allgatherv_inter_relay.c).
 */
#include <stdlib.h>

#include "algos.h"
#include "patterns/relay.h"

/* The heads of the chains that carry group @p sg's blocks to the q ranks of the other group
 * into @p heads (p entries), given that group's own blocks go out from its ranks too, and the
 * other direction's heads @p other (q entries, or NULL: not placed yet). The same on every rank.
 * Returns the most one of those receivers sends (its block and its forwards). */
static double place_heads(const xfer_shape_t *s, int sg, const int *other, int avoid, int *heads)
{
    const int rg = 1 - sg, p = s->n[sg], q = s->n[rg];
    const double T = (double) s->total[sg];
    double *E = calloc((size_t) q, sizeof(double)), worst = 0.0;
    int *order = malloc(sizeof(int) * (size_t) p), i, j, k, h;

    if (!E || !order) {
        free(E);
        free(order);
        return -1.0;
    }
    for (i = 0; i < p; i++) { /* chains by size, largest first; the lower index on ties */
        const size_t a = xfer_shape_count(s, sg, i);
        for (j = i; j > 0 && xfer_shape_count(s, sg, order[j - 1]) < a; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    for (k = 0; k < p; k++) {
        const int c = order[k];
        const double len = (double) xfer_shape_count(s, sg, c);
        int best = -1, free_best = -1;
        double best_out = 0.0, free_out = 0.0;
        heads[c] = 0;
        if (len == 0.0)
            continue; /* an empty chain sends nothing: any head */
        for (h = 0; h < q; h++) {
            /* what h's predecessor would send with E(h) as it stands: the chain lowers it */
            const double out = (double) xfer_shape_count(s, rg, (h - 1 + q) % q) + T - E[h];
            const int pair = other && other[h] == c && xfer_shape_count(s, rg, h) > 0;
            if (best < 0 || out > best_out) {
                best = h;
                best_out = out;
            }
            if (!pair && (free_best < 0 || out > free_out)) {
                free_best = h;
                free_out = out;
            }
        }
        if (avoid && free_best >= 0) /* no pair carrying data both ways */
            best = free_best;
        heads[c] = best;
        E[best] += len;
    }
    for (j = 0; j < q; j++)
        worst = XFER_MAX(worst, (double) xfer_shape_count(s, rg, j) + T - E[(j + 1) % q]);
    free(E);
    free(order);
    return worst;
}

/* Both directions' heads into *@p heads (allocated, the caller frees it): A's chains first (one
 * per rank of A), then B's (one per rank of B, from heads[p]), placed
 * so that no pair of ranks carries data both ways (A_i feeding B_j while B_j feeds A_i: slow
 * where one direction's acknowledgements queue behind the other's data) unless that leaves a
 * port above the bound, where they are placed for the ports alone. Returns the busiest port's
 * bytes (inbound or outbound), or < 0. */
static double heads_of(const xfer_shape_t *s, int **heads)
{
    const double bound = (double) XFER_MAX(s->total[0], s->total[1]);
    int *h0 = *heads = malloc(sizeof(int) * (size_t) (s->n[0] + s->n[1])), *h1 = h0 + s->n[0];
    double w0 = 0.0, w1 = 0.0;
    if (!h0)
        return -1.0;
    if (s->total[0] > 0 && (w0 = place_heads(s, 0, NULL, 0, h0)) < 0.0)
        return -1.0;
    if (s->total[1] > 0) {
        const int *other = s->total[0] > 0 ? h0 : NULL;
        if ((w1 = place_heads(s, 1, other, 1, h1)) < 0.0)
            return -1.0;
        if (w1 > bound && other && (w1 = place_heads(s, 1, other, 0, h1)) < 0.0)
            return -1.0;
    }
    return XFER_MAX(XFER_MAX(w0, w1), bound);
}

/* How group @p g's senders feed their heads across a network: a segment a message when its
 * blocks are about even, paced messages (patterns/relay.h, XFER_RELAY_FEED) when one is much
 * larger, whose eager segments would fill its head's inbound queue ahead of the ring's. Measured
 * on the emulated cluster (200 Mbit/s, Open MPI, 4 MiB a rank, medians of 4, ms, eager / paced
 * against the floor): even blocks (4, 4) 714 / 720 (floor 697), (6, 2) 1052 / 1085 (1045),
 * (2, 6) 1053 / 1075, (5, 3) 883 / 935 (871); skew 1 (4, 4) 1002 / 747, (5, 3) 1182 / 967,
 * (6, 2) 1054 / 1080, (2, 6) 1082 / 1071. */
static long feed_of(const xfer_shape_t *shape, int g)
{
    const double mean = (double) shape->total[g] / shape->n[g];
    return (double) xfer_cost_max_count(shape, g) <= 1.25 * mean ? 0 : XFER_RELAY_FEED;
}

xfer_status_t xfer_build_relay_full(const xfer_shape_t *shape, xfer_sched_t *s)
{
    int *heads = NULL;
    xfer_status_t st = XFER_SUCCESS;

    s->algo = "relay_full";
    s->variant = shape->total[0] && shape->total[1] ? "both" : shape->total[0] ? "A->B" : "B->A";
    if (shape->total[0] == 0 && shape->total[1] == 0) {
        s->variant = "empty";
        return xfer_sched_finish(s);
    }
    if (heads_of(shape, &heads) < 0.0) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "relay_full: heads of %d + %d chains", shape->n[0],
                      shape->n[1]);
        goto out;
    }
    if (shape->total[0] > 0)
        XFER_CHECK_GOTO(xfer_relay_append_heads(shape, s, 0, heads, 0, feed_of(shape, 0)), st, out);
    if (shape->total[1] > 0)
        XFER_CHECK_GOTO(
            xfer_relay_append_heads(shape, s, 1, heads + shape->n[0], 8, feed_of(shape, 1)), st,
            out);
    st = xfer_sched_finish(s);
out:
    free(heads);
    return st;
}

/* ---- descriptor ------------------------------------------------------------------------- */

static double cost_relay_full(const xfer_shape_t *s, double a, double b)
{
    int *heads = NULL, g;
    const double busiest = heads_of(s, &heads);
    double t = 0.0;

    free(heads);
    if (busiest < 0.0)
        return 1e300; /* unknown: never preferred */
    for (g = 0; g < 2; g++)
        if (s->total[g] > 0)
            t = XFER_MAX(t, xfer_relay_cost(s, g, a, b));
    return t + (busiest - (double) XFER_MAX(s->total[0], s->total[1])) * b;
}

const xfer_algo_t xfer_algo_relay_full = {
    .name = "relay_full",
    .summary = "full duplex, two pipelined relays at once, heads placed to even out the ports; "
               "blocks of any size (ours)",
    .restrictions = "none",
    .build = xfer_build_relay_full,
    .model = xfer_build_relay_full,
    .flags = XFER_ALGO_AUTO_HALF | XFER_ALGO_AUTO_FULL,
    .cost = cost_relay_full,
    .volume = xfer_volume_optimal,
};
