/* SPDX-License-Identifier: BSD-3-Clause */
/* The rows and values of tests/python/joined.py (and tests/fortran/fjoined.f90) in C, for
 * joined_send.c (the sending side) and joined_recv.c (the receiving side): the datasets
 *
 *     p      float64 [joined, 3]
 *     ids    int32   [joined]
 *     parts  {id: int64, pos: [float64, 3], q: float32, kind: int8} [joined]
 *     grid   the same record, [7]
 *
 * Joined dataset j (p 0, ids 1, parts 2) holds rows_of(rank, step + j) rows of each sending
 * rank in step `step`; every value is computed from the step and the row's global index. */
#ifndef XFER_TEST_JOINED_PATTERN_H
#define XFER_TEST_JOINED_PATTERN_H

#include <stdint.h>

#define JP_GRID 7

struct particle {
    int64_t id;
    double pos[3];
    float q;
    int8_t kind;
};

/* joined.py's rows_of: some steps no rank has a row, some one rank holds every row */
static inline uint64_t jp_rows_of(int rank, int step, int nsenders)
{
    switch (step % 4) {
    case 2:
        return 0;
    case 1:
        return rank == nsenders - 1 ? 9 : 0;
    default:
        return (uint64_t) ((rank * 5 + step * 3) % 4);
    }
}

static inline uint64_t jp_first_row(int rank, int step, int nsenders)
{
    uint64_t f = 0;
    int r;
    for (r = 0; r < rank; r++)
        f += jp_rows_of(r, step, nsenders);
    return f;
}

/* p's value at global row g, column k of step s */
static inline double jp_p(int s, uint64_t g, int k)
{
    return s * 1000.0 + (double) g * 3.0 + k + 0.5;
}

static inline int32_t jp_id(int s, uint64_t g)
{
    return (int32_t) (s * 100000 + (int64_t) g);
}

static inline struct particle jp_part(int s, uint64_t g)
{
    const int64_t id = s * 100000 + (int64_t) g;
    struct particle p = {0};
    p.id = id;
    p.pos[0] = (double) id * 0.5;
    p.pos[1] = -(double) id;
    p.pos[2] = (double) id + 0.25;
    p.q = (float) (s + (double) g / 4.0);
    p.kind = (int8_t) (id % 251 - 125);
    return p;
}

/* element g of the fixed record array grid in step s */
static inline struct particle jp_grid(int s, uint64_t g)
{
    struct particle p = {0};
    p.id = s * 10 + (int64_t) g;
    p.pos[0] = (double) g;
    p.pos[1] = (double) s;
    p.pos[2] = (double) ((int64_t) g * s);
    p.q = (float) ((double) g / 2.0);
    p.kind = (int8_t) ((int64_t) g - 3);
    return p;
}

#endif
