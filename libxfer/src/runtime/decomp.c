/* SPDX-License-Identifier: BSD-3-Clause */
/* Decomposition helpers: the box a rank holds under a selection mode (xfer_decompose). */
#include <xfer/workflow.h>

#include "../core/core.h"

/* Part i of n near-equal parts of @p len: the first len mod n parts are one longer. */
static void part(uint64_t len, uint64_t n, uint64_t i, uint64_t *start, uint64_t *count)
{
    const uint64_t q = len / n, rem = len % n;
    *start = i * q + (i < rem ? i : rem);
    *count = q + (i < rem ? 1 : 0);
}

/* A grid of @p nranks over @p nd dimensions: each prime factor of nranks, largest first, goes
 * to the dimension with the most elements per part so far (the first on ties). */
static void grid(int nd, const uint64_t dims[], int nranks, uint64_t f[])
{
    int primes[64], np = 0, x = nranks, p, i, d;
    for (d = 0; d < nd; d++)
        f[d] = 1;
    for (p = 2; (long) p * p <= x; p++)
        while (x % p == 0 && np < 64) {
            primes[np++] = p;
            x /= p;
        }
    if (x > 1 && np < 64)
        primes[np++] = x;
    for (i = np - 1; i >= 0; i--) {
        int best = 0;
        for (d = 1; d < nd; d++) /* dims[d] / f[d] > dims[best] / f[best], without division */
            if ((double) dims[d] * (double) f[best] > (double) dims[best] * (double) f[d])
                best = d;
        f[best] *= (uint64_t) primes[i];
    }
}

xfer_status_t xfer_decompose(xfer_selection_mode_t mode, int ndims, const uint64_t dims[],
                             int nranks, int rank, uint64_t start[], uint64_t count[])
{
    uint64_t f[XFER_MAX_DIMS], rest;
    int d;

    if (ndims < 1 || ndims > XFER_MAX_DIMS || !dims || !start || !count)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "xfer_decompose: %d dimensions (1 .. %d), and dims, start and count "
                        "are required",
                        ndims, XFER_MAX_DIMS);
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "xfer_decompose: rank %d of %d ranks", rank, nranks);
    for (d = 0; d < ndims; d++) {
        start[d] = 0;
        count[d] = dims[d];
    }
    switch (mode) {
    case XFER_SELECT_ALL:
        return XFER_SUCCESS;
    case XFER_SELECT_ROWS:
        part(dims[0], (uint64_t) nranks, (uint64_t) rank, &start[0], &count[0]);
        return XFER_SUCCESS;
    case XFER_SELECT_COLUMNS:
        part(dims[ndims - 1], (uint64_t) nranks, (uint64_t) rank, &start[ndims - 1],
             &count[ndims - 1]);
        return XFER_SUCCESS;
    case XFER_SELECT_BLOCK:
        grid(ndims, dims, nranks, f);
        rest = (uint64_t) rank;
        for (d = ndims - 1; d >= 0; d--) { /* row-major grid coordinates */
            part(dims[d], f[d], rest % f[d], &start[d], &count[d]);
            rest /= f[d];
        }
        return XFER_SUCCESS;
    default:
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "xfer_decompose: mode %d has no decomposition (all, rows, columns or "
                        "block; a user selection is declared with xfer_select)",
                        (int) mode);
    }
}
