/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Straightforward isomorphic exchange: round i sends block i (all-to-all) or the one block
 * (allgather) to R + C^i and receives block i from R - C^i. Isomorphism makes every round
 * a matching, so the rounds cannot deadlock; it is the baseline the combining schedules beat.
 * `posted` is the same schedule with every exchange posted at once (what MPI libraries do for
 * MPI_Neighbor_*): the steps are independent, and a multi-ported network overlaps them.
 *
 * Cost: s (alpha + beta m) one-ported; posted: down to alpha + s beta m when the messages
 *       overlap.
 * Restrictions: none (non-periodic dimensions: a missing neighbour sends or receives nothing).
 * Preferred when: blocks are large, beyond the combining cut-off m* = alpha (s - D) / (beta (V -
 * s)). Source: seed-isomorphic §4 (Listing 4).
 */
#include "iso_sched.h"

xfer_status_t xfer_iso_build_straight(const xfer_iso_nbh_t *n, int op, xfer_iso_sched_t *s)
{
    for (int i = 0; i < n->s; i++) {
        xfer_iso_sched_step(s, &n->off[i * n->d]);
        xfer_iso_sched_part(s, i, XFER_ISO_SEND, op == XFER_ISO_OP_ALLTOALL ? i : 0, XFER_ISO_RECV,
                            i);
    }
    return s->error;
}

xfer_status_t xfer_iso_build_posted(const xfer_iso_nbh_t *n, int op, xfer_iso_sched_t *s)
{
    xfer_status_t st = xfer_iso_build_straight(n, op, s);
    s->concurrent = 1;
    return st;
}
