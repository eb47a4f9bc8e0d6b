/* SPDX-License-Identifier: BSD-3-Clause */
/* Do the sending ranks' blocks of a dataset tile it exactly (docs/runtime.md, "Several blocks per
 * rank")? Pure geometry, no MPI and no channel: the channel core (ch_blocks.c) checks a step's
 * blocks at its commit with it, the stream's set-up (stream_layout.c) the first step's, and the
 * unit tests check it alone (tests/unit/test_tile.c). */
#ifndef XFER_RT_TILE_H
#define XFER_RT_TILE_H

#include <stddef.h>
#include <stdint.h>

#include <xfer/config.h>

/* Every rank's boxes: rank r's are boxes first[r] .. first[r + 1] - 1, box b at start[b * nd]
 * and count[b * nd]. Boxes inside dims (the puts checked that). */
typedef struct xfer_tiles {
    int nd;
    const uint64_t *dims;
    int nranks;
    const size_t *first; /* nranks + 1 entries */
    const uint64_t *start, *count;
} xfer_tiles_t;

/* What is wrong with a tiling: the first overlap found (box a of rank ra overlaps box b of rank
 * rb, b < a), else the first hole in row-major order, grown into a box (hs, hc) of no element
 * that any box holds, with a box beside it (rank rn's box n; -1: none found), and how many
 * elements the boxes hold of the whole. */
typedef enum { XFER_TILE_OK = 0, XFER_TILE_OVERLAP, XFER_TILE_HOLE } xfer_tile_kind_t;
typedef struct xfer_tile_fault {
    xfer_tile_kind_t kind;
    int ra, rb, rn;
    size_t a, b, n;
    uint64_t covered, whole;
    uint64_t hs[XFER_MAX_DIMS], hc[XFER_MAX_DIMS];
    int hole_known; /* 0: out of memory looking for the hole (covered and whole still hold) */
} xfer_tile_fault_t;

/* Check @p t: XFER_TILE_OK when the boxes hold every element of dims exactly once, or when they
 * hold none at all (nobody put the dataset); else what is wrong in @p f. The same answer for the
 * same boxes on every rank. Overlaps: boxes sorted by their first coordinate, each compared with
 * those that start before it ends; the hole: searched only when there is one. */
xfer_tile_kind_t xfer_tiles_check(const xfer_tiles_t *t, xfer_tile_fault_t *f);

/* Do boxes (as, ac) and (bs, bc) share an element? */
int xfer_boxes_meet(int nd, const uint64_t *as, const uint64_t *ac, const uint64_t *bs,
                    const uint64_t *bc);

#endif /* XFER_RT_TILE_H */
