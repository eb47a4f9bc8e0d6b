/* SPDX-License-Identifier: BSD-3-Clause */
/* A call's shape for the unit tests that rank algorithms without MPI. */
#ifndef XFER_TEST_UNIT_SHAPE_H
#define XFER_TEST_UNIT_SHAPE_H

#include <string.h>

#include "sched/sched.h"

/* p ranks of group A sending @p ka bytes each, q of B sending @p kb (0: that group sends
 * nothing). */
static inline xfer_shape_t unit_uniform_shape(int p, int q, size_t ka, size_t kb)
{
    xfer_shape_t s;
    memset(&s, 0, sizeof(s));
    s.n[0] = p;
    s.n[1] = q;
    s.ucnt[0] = ka;
    s.ucnt[1] = kb;
    s.total[0] = ka * (size_t) p;
    s.total[1] = kb * (size_t) q;
    return s;
}

#endif
