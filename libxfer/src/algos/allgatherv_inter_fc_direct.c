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
 * Cost: P a + max(K_L, K_S, Q max k_L, P max k_S) b, K_g = the bytes group g contributes. With
 *       equal blocks in both groups this is P a + max(P k_L, Q k_S) b: the bandwidth bound.
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

xfer_status_t xfer_build_fc_direct(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const int L = shape->n[0] >= shape->n[1] ? 0 : 1, S = 1 - L;
    const int P = shape->n[L], Q = shape->n[S], d = P / 2;
    const int g = s->group, other = 1 - g, me = s->rank, n = shape->n[other];
    const size_t mine = xfer_shape_count(shape, g, me);
    slot_peer_t *out, *in;
    int j;

    s->algo = "fc_direct";
    s->variant = L == 0 ? "L=A" : "L=B";
    s->max_ports = P >= 6 ? 2 : 1;
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
     * either side. With fewer slots one at a time keeps the pairs one-way. */
    for (j = 0; j < n; j++) {
        const int y = in[j].peer, chain = P >= 6 ? 2 * (j % 2) : 0;
        const size_t len = xfer_shape_count(shape, other, y);
        if (len > 0)
            xfer_sched_recv(s, xfer_merged_rank(shape, other, y), XFER_BUF_RECV,
                            xfer_shape_offset(shape, other, y), len, 2 + chain);
        if (mine > 0)
            xfer_sched_send(s, xfer_merged_rank(shape, other, out[j].peer), XFER_BUF_SEND, 0, mine,
                            1 + chain);
    }
    free(out);
    free(in);
    return xfer_sched_finish(s);
}

/* ---- descriptor ------------------------------------------------------------------------- */

static double cost_fc_direct(const xfer_shape_t *s, double a, double b)
{
    const int P = XFER_MAX(s->n[0], s->n[1]);
    double bytes = (double) XFER_MAX(s->total[0], s->total[1]);
    int g;
    if (s->total[0] == 0 && s->total[1] == 0)
        return 0.0;
    for (g = 0; g < 2; g++) /* the busiest sender: its block to every rank of the other group */
        bytes = XFER_MAX(bytes, (double) s->n[1 - g] * (double) xfer_cost_max_count(s, g));
    return P * a + bytes * b;
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
