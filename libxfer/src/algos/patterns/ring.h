/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The half-duplex ring schedule of Kang et al. (2018), Algorithms 1 and 3 with the
 * corrections of seed-intergroup §1.9 (the 004 form of line 58 and the #4-2 guard
 * 2j > 2i + 3p/2 - q), and our p > q formulation (§1.8), in *position* space: senders at
 * positions 0..p-1, receivers at p..p+q-1, p and q even, p + q/2 steps. Position x talks only
 * to x-1 and x+1 (mod p+q).
 *
 * Each step is a handful of "sequences": message m_j moves from src(j) = a + c*j (c = 1 or 2,
 * optionally mod N) to src(j) + dir for j in a range. The same descriptors give the whole
 * step (xfer_ring_half_step) and, by solving src(j) = x for j, the transfers of one position
 * in O(1) (xfer_ring_half_at) -- which is what a rank needs to build its own schedule and what
 * keeps the simulator linear in the number of transfers.
 */
#ifndef XFER_RING_H
#define XFER_RING_H

typedef struct xfer_ring_xfer {
    int src, dst, msg; /* positions and message (sender index) */
    long key;          /* order of the transfer within its step, the same for both ends */
} xfer_ring_xfer_t;

/* Steps of the half-duplex ring for even p, q (p + q/2). */
int xfer_ring_half_nsteps(int p, int q);

/* All transfers of @p step; returns their number (at most 2*(p+q)), or -1 if @p cap is too
 * small. */
int xfer_ring_half_step(int p, int q, int step, xfer_ring_xfer_t *out, int cap);

/* Transfers of @p step in which position @p x sends or receives (at most XFER_RING_MAX_AT). */
#define XFER_RING_MAX_AT 16
int xfer_ring_half_at(int p, int q, int step, int x, xfer_ring_xfer_t *out);

#endif /* XFER_RING_H */

/* ---- one half-duplex pass over the real ranks ---------------------------------------------- */
#include "../../sched/sched.h"

/*
 * A pass moves every block of sender group sg to every rank of the other group around the
 * merged-rank ring (sg's ranks then the other group's, which is a rotation of merged order, so
 * ring neighbours are merged-rank neighbours). Odd group sizes get a dummy position: a virtual
 * sender after the last sender (hosted by the last sender; its message is empty) or a virtual
 * receiver after the last receiver (hosted by the last receiver). A host plays both positions;
 * transfers between them are local and vanish, so a host may have two sends and two receives
 * in a step (max_ports = 2). Block j lives in RECV at its global offset on receivers; on
 * senders their own block is SEND and the others' are kept in TMP at their global offsets.
 */
typedef struct xfer_ring_pass {
    int sg;     /* sender group */
    int p, q;   /* real sizes of the sender and receiver groups */
    int pp, qq; /* padded to even */
} xfer_ring_pass_t;

void xfer_ring_pass_init(xfer_ring_pass_t *r, const xfer_shape_t *shape, int sg);
int xfer_ring_pass_nsteps(const xfer_ring_pass_t *r);
/* Does the rank of @p s host a dummy position in this pass? */
int xfer_ring_pass_hosts(const xfer_ring_pass_t *r, const xfer_sched_t *s);
/* Append the operations of schedule @p s's rank in @p step to ops[*n..]; at most
 * XFER_RING_PASS_MAX_OPS per step. */
#define XFER_RING_PASS_MAX_OPS 8
xfer_status_t xfer_ring_pass_ops(const xfer_ring_pass_t *r, const xfer_sched_t *s, int step,
                                 xfer_op_t *ops, int *n);
