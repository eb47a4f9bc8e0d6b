/* SPDX-License-Identifier: BSD-3-Clause */
/* Arithmetic on groups, counts, segments and splits (sched.h): pure functions, no schedule. */
#include "../core/core.h"
#include "sched.h"

int xfer_group_member(const xfer_group_t *g, int index)
{
    int i;
    for (i = 0; i < g->nranges; i++) {
        if (index < g->ranges[i].count)
            return g->ranges[i].start + index * g->ranges[i].stride;
        index -= g->ranges[i].count;
    }
    return -1;
}

int xfer_group_index_of(const xfer_group_t *g, int merged)
{
    int i, base = 0;
    for (i = 0; i < g->nranges; i++) {
        const xfer_range_t *r = &g->ranges[i];
        int d = merged - r->start;
        if (r->count > 0 && d >= 0 && d % r->stride == 0 && d / r->stride < r->count)
            return base + d / r->stride;
        base += r->count;
    }
    return -1;
}

size_t xfer_seg_len(size_t K, int n, int j)
{
    return K / (size_t) n + ((size_t) j < K % (size_t) n ? 1 : 0);
}

size_t xfer_seg_start(size_t K, int n, int j)
{
    size_t f = K / (size_t) n, r = K % (size_t) n, uj = (size_t) j;
    return uj * f + (uj < r ? uj : r);
}

int xfer_seg_index(size_t K, int n, size_t byte)
{
    size_t f = K / (size_t) n, r = K % (size_t) n, c = f + 1;
    if (byte < r * c)
        return (int) (byte / c);
    return f ? (int) (r + (byte - r * c) / f) : n - 1; /* f == 0 only for bytes >= K */
}

int xfer_split_size(int P, int Q, int i)
{
    return i < P % Q ? P / Q + 1 : P / Q;
}

int xfer_split_start(int P, int Q, int i)
{
    const int r = P % Q, c = P / Q + 1;
    return i < r ? i * c : r * c + (i - r) * (P / Q);
}

int xfer_spread(int n, int m, int i)
{
    return (int) (((long long) i * n) / m);
}

int xfer_split_owner(int P, int Q, int x)
{
    const int r = P % Q, c = P / Q + 1;
    return x < r * c ? x / c : r + (x - r * c) / (P / Q);
}

size_t xfer_counts_get(const xfer_counts_t *c, int i)
{
    int o;
    switch (c->kind) {
    case XFER_COUNTS_UNIFORM:
        return c->k;
    case XFER_COUNTS_SEGMENTS:
        return xfer_seg_len(c->k, c->n, i);
    case XFER_COUNTS_ARRAY:
        return c->v[i];
    case XFER_COUNTS_PIECES:
        o = xfer_split_owner(c->n, c->m, i);
        return xfer_seg_len(c->k, xfer_split_size(c->n, c->m, o),
                            i - xfer_split_start(c->n, c->m, o));
    case XFER_COUNTS_BLOCKS:
        return (size_t) xfer_split_size(c->m, c->n, i) * c->k;
    }
    return 0;
}

size_t xfer_counts_offset(const xfer_counts_t *c, int i)
{
    size_t off = 0;
    int j;
    switch (c->kind) {
    case XFER_COUNTS_UNIFORM:
        return c->k * (size_t) i;
    case XFER_COUNTS_SEGMENTS:
        return xfer_seg_start(c->k, c->n, i);
    case XFER_COUNTS_ARRAY:
        for (j = 0; j < i; j++)
            off += c->v[j];
        return off;
    case XFER_COUNTS_PIECES:
        if (i >= c->n)
            return (size_t) c->m * c->k;
        j = xfer_split_owner(c->n, c->m, i);
        return (size_t) j * c->k + xfer_seg_start(c->k, xfer_split_size(c->n, c->m, j),
                                                  i - xfer_split_start(c->n, c->m, j));
    case XFER_COUNTS_BLOCKS:
        return (size_t) xfer_split_start(c->m, c->n, i) * c->k;
    }
    return 0;
}

size_t xfer_counts_total(const xfer_counts_t *c)
{
    return c->kind == XFER_COUNTS_SEGMENTS ? c->k : xfer_counts_offset(c, c->n);
}
