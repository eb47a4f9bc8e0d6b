/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipelined chain broadcast: member 0 sends its buffer to member 1 segment by segment, and every
 * member forwards segment j to the next one as soon as it has received it, so all links of the
 * chain carry data at once. Time for n members, K bytes in s segments:
 *   (s + n - 2) (a + (K/s) b), minimised at K/s = sqrt(K a / ((n - 2) b)),
 * against a store-and-forward tree's ceil(log2 n) (a + K b) (what MPI libraries do with a few
 * ranks and large blocks). Each member has one receive chain and one send chain, so the
 * single-port model holds.
 */
#ifndef XFER_CHAIN_H
#define XFER_CHAIN_H

#include <stddef.h>

#include "../../sched/sched.h"

/* Blocks of this many bytes and more go by the chain (below, one MPI_Bcast is cheaper). */
#define XFER_CHAIN_MIN 65536

/* Segments for @p len bytes over a chain of @p hops links: the alpha-beta optimum
 * (XFER_ALPHA, XFER_BETA), or XFER_SEGMENT_BYTES when set; between 1 and 256. The same on every
 * rank with the same environment. */
int xfer_chain_segments(size_t len, int hops);

/* Append this rank's part of a chain broadcast over @p members (merged ranks, in chain order;
 * its position is members->my_index) of buf[off, off+len) in @p nseg segments. The operations
 * go into the current round (chains 1 and 2 of it). */
void xfer_chain_bcast(xfer_sched_t *s, const xfer_group_t *members, int buf, size_t off, size_t len,
                      int nseg);

#endif /* XFER_CHAIN_H */
