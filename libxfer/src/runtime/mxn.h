/* SPDX-License-Identifier: BSD-3-Clause */
/* M x N: the direct schedule of a channel's step when receiving ranks hold selections
 * (docs/runtime.md, "M x N selections").
 *
 * Every sending rank r sends every receiving rank c one stream: r's 32-byte step header, then,
 * for each dataset of its side in channel order and each of r's blocks of it in order, the
 * intersection of the block with c's selection, element by element in row-major order. The sender
 * reads it from its contribution (header, then its blocks); the receiver writes the header to slot
 * r of its header area and the elements into its selection buffers. Rank 0's stream carries its
 * side's attributes (m->attr bytes after its header) to the area after the header slots. Both ends
 * cut the stream into the same pieces of contiguous bytes (an MPI struct datatype each message,
 * nothing packed) and into messages of at most XFER_MXN_MSG_MAX bytes, so a step may exceed MPI's
 * int counts. A pair exchanges a stream only when the intersection is not empty or r is its side's
 * rank 0 (whose header every receiving rank reads). On the hybrid path (runtime.h) the headers and
 * the attributes travel in the allgatherv plan instead (no_hdr): a stream is the elements only, and
 * only a non-empty intersection makes a pair. The schedule is a flat one (sched.h) over the merged
 * communicator, side 0 first; the simulator checks it (tests/unit/test_mxn.c). With node staging
 * (node[] below) a receiving rank receives directly only the elements it owns, and the others
 * of its selection from their owners on its node. */
#ifndef XFER_RT_MXN_H
#define XFER_RT_MXN_H

#include <stddef.h>
#include <stdint.h>

#include <xfer/config.h>
#include <xfer/status.h>

#include "../sched/sched.h"

#define XFER_MXN_HDR     32                 /* sizeof(xfer_rt_hdr_t) */
#define XFER_MXN_MSG_MAX ((size_t) 1 << 30) /* bytes per message, far below INT_MAX */

/* One dataset as the schedule sees it. */
typedef struct xfer_mxn_dset {
    int ndims;
    const uint64_t *dims;
    size_t esize;
    int from; /* the side (0, 1) that sends it */
    /* the sending ranks' blocks: rank r's are bfirst[r] .. bfirst[r + 1] - 1 (n[from] + 1
     * entries; NULL: one each, block r), block b at [b * ndims], boff[b] its offset in its
     * rank's contribution */
    const size_t *bfirst;
    const uint64_t *bstart, *bcount;
    const size_t *boff;
    const uint64_t *sstart, *scount; /* [n[1 - from] * ndims]: the receiving ranks' selections */
    const size_t *soff; /* [n[1 - from]]: each selection's offset in its receive area */
} xfer_mxn_dset_t;

typedef struct xfer_mxn {
    int n[2];
    int nds;
    const xfer_mxn_dset_t *ds;
    size_t msg_max; /* bytes per message; 0: XFER_MXN_MSG_MAX (tests cut smaller ones) */
    size_t attr;    /* rank 0's attributes: after its header in its contribution, after the
                       header slots in every receive area */
    int no_hdr;     /* the streams carry no headers nor attributes (the hybrid path) */
    /* Node staging: node[k][r] names the node of rank r of side k (NULL: every rank a node of
     * its own). An element that several receiving ranks of one node select crosses the network
     * once, to the lowest of them (its owner), which forwards it to the others over the node
     * (lane 1, after the owner's own streams arrived): one forward stream per (owner, mate)
     * pair, the senders in order, each dataset's elements in row-major order. */
    const int *node[2];
} xfer_mxn_t;

/* Merged rank of rank @p r of side @p k. */
static inline int xfer_mxn_merged(const xfer_mxn_t *m, int k, int r)
{
    return k == 0 ? r : m->n[0] + r;
}

/* Does rank @p r of side @p k send a stream to rank @p c of the other side? */
int xfer_mxn_pair(const xfer_mxn_t *m, int k, int r, int c);

/* The intersection of the box (bs, bc) with the box (ss, sc) in @p nd dimensions: its corner
 * and extents into @p lo and @p n (either may be NULL); returns its element count (0: empty). */
uint64_t xfer_mxn_overlap(int nd, const uint64_t *bs, const uint64_t *bc, const uint64_t *ss,
                          const uint64_t *sc, uint64_t *lo, uint64_t *n);

/* The schedule of merged rank @p me (side 0 holds merged ranks 0 .. n[0] - 1): its SEND buffer
 * is its contribution (@p send_bytes), its RECV buffer its receive area (@p recv_bytes: the
 * headers of the other side's n ranks, XFER_MXN_HDR each, m->attr bytes of attributes, then
 * its selection buffers). */
xfer_status_t xfer_mxn_build(const xfer_mxn_t *m, int me, size_t send_bytes, size_t recv_bytes,
                             xfer_sched_t **out);

#endif /* XFER_RT_MXN_H */
