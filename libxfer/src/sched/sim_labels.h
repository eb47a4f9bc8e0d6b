/* SPDX-License-Identifier: BSD-3-Clause */
/* The simulator's label maps: which group's global bytes each byte range of a buffer holds,
 * as sorted runs. Internal to sim.c. */
#ifndef XFER_SIM_LABELS_H
#define XFER_SIM_LABELS_H

#include <stddef.h>

/* Bytes [off, off+len) of a buffer hold group grp's global bytes [goff, goff+len). For a
 * piece taken out of a map, off is relative to the start of the range asked for. */
typedef struct run {
    size_t off, len, goff;
    int grp;
} run_t;

typedef struct runvec {
    run_t *r;
    int n, cap;
} runvec_t;

/* Append @p x (coalesced with the last run when it continues it); 0 when out of memory. */
int xfer_rv_push(runvec_t *v, run_t x);
void xfer_rv_free(runvec_t *v);
/* The labels of [off, off+len) appended to @p out (offsets relative to @p off + @p rel).
 * Returns 0 when part of the range holds nothing; *@p gap is then its first byte
 * ((size_t) -1: out of memory). */
int xfer_rv_get(const runvec_t *m, size_t off, size_t len, size_t rel, runvec_t *out, size_t *gap);
/* Overwrite [off, off+len) of @p m with @p src (relative offsets, covering the range); 0 when
 * out of memory. */
int xfer_rv_put(runvec_t *m, size_t off, size_t len, const runvec_t *src);

#endif /* XFER_SIM_LABELS_H */
