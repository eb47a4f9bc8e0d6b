/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_direct: every rank sends its block straight to every rank of the other group, one transfer
 * at a time in each direction, in slots arranged so that no pair of ranks ever carries data both
 * ways at once (ours). Let L be the larger group (P ranks; group 0 on a tie) and S the smaller
 * (Q ranks). Slots run 0..P-1; S rank i has offset c_i = floor(i P / Q) and
 *   L rank x -> S rank i   in slot (x - c_i) mod P,
 *   S rank i -> L rank x   in slot (x - c_i - d) mod P,   d = floor(P / 2).
 * In each slot a rank receives at most one block and sends at most one, and the two directions
 * of a pair lie d slots apart. Each rank runs its sends and its receives as chains in slot
 * order (two transfers in flight per direction when P >= 6), so the schedule clocks itself: a
 * transfer starts when both of its ends reach it. The slots are a global order consistent with
 * every chain, so the chains cannot deadlock.
 * No rank relays anything: each receives exactly the other group's data, straight into place,
 * and there is no intra-group phase and no scratch.
 *
 * Why: on links where a two-way exchange between one pair runs slower than two one-way flows
 * (TCP acknowledgements of one direction queued behind the data of the other, as on the emulated
 * cluster and on shaped or shared NICs), fc_full's pair exchange and its smaller group's final
 * allgatherv are the slow part when p != q. Here the smaller group's ranks receive P k_L and send
 * P k_S, each link busy one way per slot.
 *
 * Uneven blocks (allgatherv): when a direction's busiest sender would send more than any
 * receiver takes in at all (n_recv max k_g > max(K_L, K_S)), that direction goes by pieces: the
 * other group's bytes are cut into one segment per receiver, each sender sends each receiver
 * the part of that receiver's segment it holds, and the receivers pass the segments round their
 * ring (n_recv - 1 steps, each waiting for the segment before it: store and forward, no
 * pipelining within a segment).
 *
 * Cost: P a + max(K_L, K_S, Q max k_L, P max k_S) b, K_g = the bytes group g contributes. With
 *       equal blocks in both groups this is P a + max(P k_L, Q k_S) b: the bandwidth bound. By
 *       pieces, a direction costs about n_recv a + (max k_g + (n_recv - 1) K_g / n_recv) b (the
 *       busiest sender's pieces, then the ring's segments one after another): with the
 *       heaviest rank at 2x the average, 1.25 K_g b at 4 x 4 and 1.83 K_g b at 2 x 6 against
 *       the bound's K_g b (docs/benchmarks.md, joined datasets). In full duplex a direction of
 *       whole blocks adds the ring its senders forward for the other direction, if that one
 *       goes by pieces: 1.28 of the bound at 6 x 2 with skew 1 (the simulator 1.41).
 * Restrictions: none (empty blocks are skipped; half duplex sends one way only).
 * Preferred when: full duplex with p != q and blocks of similar size on a network that
 *       penalises two-way pair exchanges; not when one small group must feed a large one
 *       alone (its ranks send P times their block: fc_half's broadcast groups relay instead).
 * Source: ours; the slot arrangement answers the two-way penalty measured for fc_full (p != q)
 *       in docs/PERFORMANCE.md.
 */
#include <stdlib.h>

#include "algos.h"

typedef struct slot_peer {
    int slot, peer; /* peer: rank in the other group */
} slot_peer_t;

static int by_slot(const void *a, const void *b)
{
    const slot_peer_t *x = a, *y = b;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

/* Does direction g -> 1-g go by pieces and a ring (else every block straight to every rank)?
 * Direct makes g's busiest sender send n_{1-g} times its block; when that exceeds what any
 * receiver must take in at all (the larger group total), the pieces spread it. */
static int by_pieces(const xfer_shape_t *shape, int g)
{
    const double most = (double) XFER_MAX(shape->total[0], shape->total[1]);
    return shape->n[1 - g] > 1 &&
           (double) shape->n[1 - g] * (double) xfer_cost_max_count(shape, g) > most;
}

/* The piece of sender r of group g (its block, global bytes [R, R+k)) for receiver j of the
 * other group (global segment j of K_g cut into n parts): [*lo, *hi), empty when *hi <= *lo. */
static void piece_of(const xfer_shape_t *shape, int g, int r, int j, size_t *lo, size_t *hi)
{
    const size_t K = shape->total[g], n = (size_t) shape->n[1 - g];
    const size_t R = xfer_shape_offset(shape, g, r), k = xfer_shape_count(shape, g, r);
    const size_t s0 = xfer_seg_start(K, (int) n, j), s1 = s0 + xfer_seg_len(K, (int) n, j);
    *lo = XFER_MAX(R, s0);
    *hi = XFER_MIN(R + k, s1);
}

/* Receivers of group h = 1-g pass the segments of g's bytes around their ring: in step t rank j
 * forwards segment j - t to j + 1 and takes segment j - t - 1 from j - 1 (chains 5 and 6, beside
 * the slot chains). Step 0 waits for the pieces of j's own segment (ops [first, last)). */
static void ring_segments(const xfer_shape_t *shape, xfer_sched_t *s, int g, int first, int last)
{
    const int h = 1 - g, n = shape->n[h], j = s->rank;
    const size_t K = shape->total[g];
    const int next = xfer_merged_rank(shape, h, (j + 1) % n);
    const int prev = xfer_merged_rank(shape, h, (j - 1 + n) % n);
    int t, got = -1, k;

    for (t = 0; t < n - 1; t++) {
        const int out = xfer_mod(j - t, n), in = xfer_mod(j - t - 1, n);
        if (xfer_seg_len(K, n, out) > 0) {
            xfer_sched_send(s, next, XFER_BUF_RECV, xfer_seg_start(K, n, out),
                            xfer_seg_len(K, n, out), 6);
            if (t == 0)
                for (k = first; k < last; k++)
                    xfer_sched_dep(s, k);
            else
                xfer_sched_dep(s, got);
        }
        if (xfer_seg_len(K, n, in) > 0) {
            xfer_sched_recv(s, prev, XFER_BUF_RECV, xfer_seg_start(K, n, in),
                            xfer_seg_len(K, n, in), 5);
            got = xfer_sched_last(s);
        }
    }
}

xfer_status_t xfer_build_fc_direct(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const int L = shape->n[0] >= shape->n[1] ? 0 : 1, S = 1 - L;
    const int P = shape->n[L], Q = shape->n[S], d = P / 2;
    const int g = s->group, other = 1 - g, me = s->rank, n = shape->n[other];
    const int send_pieces = by_pieces(shape, g), recv_pieces = by_pieces(shape, other);
    const size_t mine = xfer_shape_count(shape, g, me);
    slot_peer_t *out, *in;
    int j, first = -1, last = -1;

    s->algo = "fc_direct";
    s->variant = send_pieces || recv_pieces ? (L == 0 ? "L=A/pieces" : "L=B/pieces")
                                            : (L == 0 ? "L=A" : "L=B");
    s->max_ports = (P >= 6 ? 2 : 1) + recv_pieces;
    out = malloc(sizeof(*out) * (size_t) n);
    in = malloc(sizeof(*in) * (size_t) n);
    if (!out || !in) {
        free(out);
        free(in);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "fc_direct: %d peers", n);
    }
    for (j = 0; j < n; j++) {
        /* j is the peer's rank in the other group */
        const int x = g == L ? me : j, i = g == L ? j : me, c = xfer_spread(P, Q, i);
        out[j].peer = in[j].peer = j;
        out[j].slot = g == L ? xfer_mod(x - c, P) : xfer_mod(x - c - d, P);
        in[j].slot = g == L ? xfer_mod(x - c - d, P) : xfer_mod(x - c, P);
    }
    qsort(out, (size_t) n, sizeof(*out), by_slot);
    qsort(in, (size_t) n, sizeof(*in), by_slot);
    /* Receive and send chains, interleaved so both first transfers start at once. With P >= 6
     * two transfers per direction are in flight (chains alternate), which hides each transfer's
     * handshake; the d = P/2 slots between a pair's two directions still leave a free slot on
     * either side. With fewer slots one at a time keeps the pairs one-way. A direction that goes
     * by pieces keeps the slots and moves only the pieces. */
    for (j = 0; j < n; j++) {
        const int y = in[j].peer, z = out[j].peer, chain = P >= 6 ? 2 * (j % 2) : 0;
        size_t lo, hi;
        if (recv_pieces)
            piece_of(shape, other, y, me, &lo, &hi);
        else {
            lo = xfer_shape_offset(shape, other, y);
            hi = lo + xfer_shape_count(shape, other, y);
        }
        if (hi > lo) {
            xfer_sched_recv(s, xfer_merged_rank(shape, other, y), XFER_BUF_RECV, lo, hi - lo,
                            2 + chain);
            if (first < 0)
                first = xfer_sched_last(s);
            last = xfer_sched_last(s) + 1;
        }
        if (send_pieces) {
            const size_t R = xfer_shape_offset(shape, g, me);
            piece_of(shape, g, me, z, &lo, &hi);
            lo -= XFER_MIN(lo, R);
            hi = hi > R ? hi - R : 0;
        } else {
            lo = 0;
            hi = mine;
        }
        if (hi > lo)
            xfer_sched_send(s, xfer_merged_rank(shape, other, z), XFER_BUF_SEND, lo, hi - lo,
                            1 + chain);
    }
    if (recv_pieces)
        ring_segments(shape, s, other, XFER_MAX(first, 0), XFER_MAX(last, 0));
    free(out);
    free(in);
    return xfer_sched_finish(s);
}

/* ---- descriptor ------------------------------------------------------------------------- */

static double cost_fc_direct(const xfer_shape_t *s, double a, double b)
{
    const int P = XFER_MAX(s->n[0], s->n[1]);
    const int pieces[2] = {by_pieces(s, 0), by_pieces(s, 1)};
    double bytes = 0.0, lat = P;
    int g;
    if (s->total[0] == 0 && s->total[1] == 0)
        return 0.0;
    for (g = 0; g < 2; g++) { /* direction g -> 1-g: its busiest port */
        const int n = s->n[1 - g];
        const double K = (double) s->total[g];
        if (pieces[g]) { /* the busiest sender's pieces, then the receivers' ring */
            bytes = XFER_MAX(bytes, (double) xfer_cost_max_count(s, g) + K * (n - 1) / n);
            lat = XFER_MAX(lat, P + n);
        } else {
            /* Whole blocks; in full duplex g's ports may also forward the other direction's
             * segments round g's ring, and the slot chains wait for blocks whose senders are
             * busy forwarding: the two add up (the simulator, and the link at 6 x 2 skewed:
             * 1.41 and 1.47 of the bound, where the blocks alone say 1.00). */
            const int m = s->n[g];
            const double ring = pieces[1 - g] ? (double) s->total[1 - g] * (m - 1) / m : 0.0;
            bytes = XFER_MAX(bytes,
                             XFER_MAX(K, (double) n * (double) xfer_cost_max_count(s, g)) + ring);
        }
    }
    return lat * a + bytes * b;
}

const xfer_algo_t xfer_algo_fc_direct = {
    .name = "fc_direct",
    .summary = "fully connected, every block straight to every rank of the other group in "
               "slots that keep each pair one-way (ours)",
    .restrictions = "none",
    .build = xfer_build_fc_direct,
    .model = xfer_build_fc_direct,
    .flags = XFER_ALGO_AUTO_HALF | XFER_ALGO_AUTO_FULL,
    .cost = cost_fc_direct,
    .volume = xfer_volume_optimal,
};
