/* SPDX-License-Identifier: BSD-3-Clause */
/* Cost-model terms the algorithm descriptors share (algo.h). */
#include "algo.h"
#include "../core/core.h"

double xfer_cost_lg(int n)
{
    return (double) xfer_ceil_log2((uint64_t) (n > 0 ? n : 1));
}

size_t xfer_cost_max_count(const xfer_shape_t *s, int g)
{
    size_t m = 0;
    int i;
    if (!s->cnt[g])
        return s->ucnt[g];
    for (i = 0; i < s->n[g]; i++)
        m = XFER_MAX(m, s->cnt[g][i]);
    return m;
}

double xfer_cost_bcast(int n, size_t bytes, double a, double b)
{
    return n > 1 && bytes ? 2 * xfer_cost_lg(n) * a + 2.0 * (double) bytes * b : 0.0;
}

double xfer_cost_gather(int n, size_t bytes, double a, double b)
{
    return n > 1 && bytes ? xfer_cost_lg(n) * a + (double) bytes * (n - 1) / n * b : 0.0;
}

double xfer_cost_allgather(int n, size_t bytes, double a, double b)
{
    return n > 1 && bytes ? xfer_cost_lg(n) * a + (double) bytes * (n - 1) / n * b : 0.0;
}

double xfer_volume_optimal(const xfer_shape_t *s)
{
    return (double) s->n[1] * (double) s->total[0] + (double) s->n[0] * (double) s->total[1];
}
