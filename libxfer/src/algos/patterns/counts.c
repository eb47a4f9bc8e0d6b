/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers shared by the builders. */
#include "../algos.h"

int xfer_algo_group_counts(xfer_sched_t *s, const xfer_shape_t *shape, int g, int first, int n)
{
    size_t *v;
    int i, idx;

    if (!shape->cnt[g])
        return xfer_sched_counts_uniform(s, n, shape->ucnt[g]);
    for (i = 1; i < n && shape->cnt[g][first + i] == shape->cnt[g][first]; i++)
        ;
    if (i >= n) /* equal counts need no array */
        return xfer_sched_counts_uniform(s, n, n > 0 ? shape->cnt[g][first] : 0);
    idx = xfer_sched_counts_array(s, n, &v);
    if (idx >= 0)
        for (i = 0; i < n; i++)
            v[i] = shape->cnt[g][first + i];
    return idx;
}
