/* SPDX-License-Identifier: BSD-3-Clause */
/* Relay chains over the receivers' ring (relay.h). */
#include <stdlib.h>

#include "../algos.h"
#include "chain.h"
#include "relay.h"

/* At most this many segments in all, so that a schedule's operations stay bounded however
 * large the blocks (a segment then grows beyond the network's cap). */
#define RELAY_MAX_SEGMENTS 65536

/* Segments of the heaviest chain (@p len bytes): the model's count, or enough of at most
 * shape->seg_cap bytes across a network (unless XFER_SEGMENT_BYTES says otherwise), so that a
 * forward goes out eagerly, without a rendezvous handshake, and the pipeline keeps its links
 * busy. Measured at (2, 6), 4 MiB, on the emulated cluster: 356 ms with 32 KiB segments against
 * 486-544 ms with 91 KiB (the model's size), 256 KiB and 1 MiB ones (floor 350 ms); on one node
 * the model's size is faster (shared memory has no such handshake cost: 1.35 ms against
 * 1.87 ms at (1, 3)). */
static int heaviest_segments(const xfer_shape_t *shape, size_t len, int hops)
{
    const int model = xfer_chain_segments(len, hops);
    size_t eager;
    if (shape->seg_cap == 0 || xfer_env_long("XFER_SEGMENT_BYTES", 0) > 0)
        return model;
    eager = (len + shape->seg_cap - 1) / shape->seg_cap;
    return (int) XFER_MIN(XFER_MAX((size_t) model, eager), (size_t) 2048);
}

/* Each chain's segment count into @p nseg (p entries; 0 for an empty block), all segments about
 * the heaviest chain's size (*@p size, when not NULL); returns their total. The same on every
 * rank. */
static size_t chain_segments(const xfer_shape_t *shape, int sg, int *nseg, size_t *size)
{
    const int p = shape->n[sg], q = shape->n[1 - sg];
    const size_t amax = xfer_cost_max_count(shape, sg);
    size_t seg, total = 0;
    int i, nmax;

    if (size)
        *size = 0;
    if (amax == 0) {
        for (i = 0; i < p; i++)
            nseg[i] = 0;
        return 0;
    }
    nmax = heaviest_segments(shape, amax, (q - 1) * p + 1);
    seg = (amax + (size_t) nmax - 1) / (size_t) nmax;
    if (shape->total[sg] / seg > RELAY_MAX_SEGMENTS) {
        seg = (shape->total[sg] + RELAY_MAX_SEGMENTS - 1) / RELAY_MAX_SEGMENTS;
        nmax = (int) ((amax + seg - 1) / seg);
    }
    for (i = 0; i < p; i++) {
        const size_t a = xfer_shape_count(shape, sg, i);
        nseg[i] = a == amax ? nmax : (int) ((a + seg - 1) / seg);
        total += (size_t) nseg[i];
    }
    if (size)
        *size = seg;
    return total;
}

/* Segments a sender hands its head in one message: 1 on one node; across a network enough to
 * reach XFER_RELAY_FEED_BYTES (default @p dflt; 0: 1). */
static int feed_group(const xfer_shape_t *shape, size_t seg, long dflt)
{
    const long feed = xfer_env_long("XFER_RELAY_FEED_BYTES", dflt);
    if (shape->seg_cap == 0 || feed <= 0 || seg == 0)
        return 1;
    return (int) XFER_MAX((size_t) 1, ((size_t) feed + seg - 1) / seg);
}

/* Segment @p j of chain @p i (sender i's block cut into nseg near-equal parts): its offset in
 * the block and its length. */
static size_t seg_off(const xfer_shape_t *shape, int sg, int i, int nseg, int j)
{
    return xfer_seg_start(xfer_shape_count(shape, sg, i), nseg, j);
}

static size_t seg_len(const xfer_shape_t *shape, int sg, int i, int nseg, int j)
{
    return xfer_seg_len(xfer_shape_count(shape, sg, i), nseg, j);
}

/* A receiver's part: forward and take in segments step by step (relay.h, "Order"). With g
 * segments a message from the senders (g > 1), a head asks for each message lead steps before
 * the ring reaches it, once its ring receives of that step are in: the message, above the eager
 * limit, then travels when the ring needs it, not before. */
static xfer_status_t receiver_part(const xfer_shape_t *shape, xfer_sched_t *s, int sg,
                                   const int *nseg, int g, const int *heads, int cb)
{
    const int rg = 1 - sg, p = shape->n[sg], q = shape->n[rg], b = s->rank;
    const int lead = g > 1 ? 2 * g : 0;
    int *got, *pos, *gbase, *gop, i, j, step, nin = 0, nout = 0, most = 0, ngroups = 0;
    int ring_last = -1;

    got = malloc(sizeof(*got) * 3 * (size_t) p);
    if (!got)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "relay: %d chains", p);
    pos = got + p; /* my place on each chain, 0 = its head */
    gbase = pos + p;
    for (i = 0; i < p; i++) {
        pos[i] = xfer_mod(b - (heads ? heads[i] : xfer_spread(q, p, i)), q);
        got[i] = -1;
        most = XFER_MAX(most, nseg[i]);
        gbase[i] = ngroups;
        if (pos[i] == 0)
            ngroups += (nseg[i] + g - 1) / g;
    }
    gop = malloc(sizeof(*gop) * (size_t) XFER_MAX(ngroups, 1));
    if (!gop) {
        free(got);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "relay: %d messages", ngroups);
    }
    for (step = -1 - lead; step < most + q; step++) {
        for (i = 0; g > 1 && i < p; i++) { /* ask for the senders' messages lead steps ahead */
            j = step + 1 + lead;
            if (pos[i] == 0 && j >= 0 && j < nseg[i] && j % g == 0) {
                const size_t lo = seg_off(shape, sg, i, nseg[i], j);
                const int lane = (j / g) % 2;
                xfer_sched_recv(s, xfer_merged_rank(shape, sg, i), XFER_BUF_RECV,
                                xfer_shape_offset(shape, sg, i) + lo,
                                seg_off(shape, sg, i, nseg[i], XFER_MIN(j + g, nseg[i])) - lo,
                                cb + 3 + 4 * lane);
                xfer_sched_lane(s, lane);
                xfer_sched_dep(s, ring_last);
                gop[gbase[i] + j / g] = xfer_sched_last(s);
            }
        }
        for (i = 0; i < p; i++) { /* forward what the previous step brought in */
            j = step - pos[i];
            if (pos[i] < q - 1 && j >= 0 && j < nseg[i]) {
                xfer_sched_send(s, xfer_merged_rank(shape, rg, (b + 1) % q), XFER_BUF_RECV,
                                xfer_shape_offset(shape, sg, i) + seg_off(shape, sg, i, nseg[i], j),
                                seg_len(shape, sg, i, nseg[i], j),
                                cb + 2 + 2 * (nout % XFER_RELAY_LANES));
                xfer_sched_lane(s, nout++ % XFER_RELAY_LANES);
                xfer_sched_dep(s, pos[i] == 0 && g > 1 ? gop[gbase[i] + j / g] : got[i]);
            }
        }
        for (i = 0; i < p; i++) { /* and take in this step's segments */
            j = step + 1 - pos[i];
            if (j < 0 || j >= nseg[i])
                continue;
            if (pos[i] == 0 && g == 1) { /* the sender's segment */
                xfer_sched_recv(s, xfer_merged_rank(shape, sg, i), XFER_BUF_RECV,
                                xfer_shape_offset(shape, sg, i) + seg_off(shape, sg, i, nseg[i], j),
                                seg_len(shape, sg, i, nseg[i], j), cb + 3);
                got[i] = xfer_sched_last(s);
            } else if (pos[i] > 0) { /* the ring's */
                xfer_sched_recv(s, xfer_merged_rank(shape, rg, (b - 1 + q) % q), XFER_BUF_RECV,
                                xfer_shape_offset(shape, sg, i) + seg_off(shape, sg, i, nseg[i], j),
                                seg_len(shape, sg, i, nseg[i], j),
                                cb + 1 + 4 * (nin % XFER_RELAY_LANES));
                xfer_sched_lane(s, nin++ % XFER_RELAY_LANES);
                got[i] = ring_last = xfer_sched_last(s);
            }
        }
    }
    free(gop);
    free(got);
    return XFER_SUCCESS;
}

xfer_status_t xfer_relay_append_heads(const xfer_shape_t *shape, xfer_sched_t *s, int sg,
                                      const int *heads, int chain_base, long feed)
{
    const int rg = 1 - sg, p = shape->n[sg], q = shape->n[rg], b = s->rank;
    int *nseg, j, g;
    size_t seg;
    xfer_status_t st = XFER_SUCCESS;

    nseg = malloc(sizeof(*nseg) * (size_t) p);
    if (!nseg)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "relay: %d chains", p);
    chain_segments(shape, sg, nseg, &seg);
    g = feed_group(shape, seg, feed);
    s->max_ports = XFER_MAX(s->max_ports, XFER_RELAY_LANES + (g > 1 ? 2 : 1));
    if (s->group == sg) { /* g segments a message, two in flight when g > 1 */
        const int head = heads ? heads[b] : xfer_spread(q, p, b);
        for (j = 0; j < nseg[b]; j += g) {
            const size_t lo = seg_off(shape, sg, b, nseg[b], j);
            const int lane = g > 1 ? (j / g) % 2 : 0;
            xfer_sched_send(s, xfer_merged_rank(shape, rg, head), XFER_BUF_SEND, lo,
                            seg_off(shape, sg, b, nseg[b], XFER_MIN(j + g, nseg[b])) - lo,
                            chain_base + 1 + 4 * lane);
            xfer_sched_lane(s, lane);
        }
    } else {
        st = receiver_part(shape, s, sg, nseg, g, heads, chain_base);
    }
    free(nseg);
    return st;
}

xfer_status_t xfer_relay_append(const xfer_shape_t *shape, xfer_sched_t *s, int sg)
{
    return xfer_relay_append_heads(shape, s, sg, NULL, 0, XFER_RELAY_FEED);
}

double xfer_relay_cost(const xfer_shape_t *shape, int sg, double a, double b)
{
    const int p = shape->n[sg], q = shape->n[1 - sg];
    const double T = (double) shape->total[sg];
    int *nseg;
    double n, seg;

    if (shape->total[sg] == 0)
        return 0.0;
    nseg = malloc(sizeof(*nseg) * (size_t) p);
    if (!nseg)
        return 1e300; /* unknown: never preferred */
    n = (double) chain_segments(shape, sg, nseg, NULL);
    free(nseg);
    seg = T / n; /* a segment's bytes, on average */
    return q * (a + seg * b) + n * XFER_MAX(seg * b, a / XFER_RELAY_LANES);
}
