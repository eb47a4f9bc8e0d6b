/* SPDX-License-Identifier: BSD-3-Clause */
/* Byte counts of datasets for the command-line tools: products and sums that say when they
 * overflow instead of wrapping, and one human form ("8.0 TiB"), so that xfer-run --check and the
 * programs that allocate (xfer-synth) compute and name the same sizes. */
#ifndef XFER_TOOLS_SIZE_H
#define XFER_TOOLS_SIZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* *@p out = @p a * @p b; 0, or -1 (and *@p out = UINT64_MAX) when it does not fit 64 bits. */
static inline int xsize_mul(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b != 0 && a > UINT64_MAX / b) {
        *out = UINT64_MAX;
        return -1;
    }
    *out = a * b;
    return 0;
}

/* @p a + @p b, UINT64_MAX when it does not fit. */
static inline uint64_t xsize_add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The bytes of an n-d box of elements of @p esize bytes with extents @p count[0 .. @p ndims):
 * 0, or -1 (and *@p out = UINT64_MAX) when the product does not fit 64 bits. */
static inline int xsize_box(int ndims, const uint64_t *count, uint64_t esize, uint64_t *out)
{
    uint64_t v = esize;
    int k;

    for (k = 0; k < ndims; k++)
        if (xsize_mul(v, count[k], &v) != 0)
            break;
    *out = v;
    return k == ndims ? 0 : -1;
}

/* "8.0 TiB": @p bytes in the largest binary unit up to TiB, one decimal. */
static inline const char *xsize_human(char *buf, size_t len, double bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;

    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, len, "%.1f %s", bytes, unit[u]);
    return buf;
}

#endif /* XFER_TOOLS_SIZE_H */
