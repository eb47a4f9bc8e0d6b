/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's joined datasets, shared by stream_joined.c (the second phase of each slot, point to
 * point) and stream_jplan.c (its allgatherv plans): the tables' accessors. */
#ifndef XFER_RT_STREAM_JOINED_H
#define XFER_RT_STREAM_JOINED_H

#include "channel.h"

#define PAD8(b) (((b) + 7) & ~(size_t) 7)

enum { J_IDLE = 0, J_GATHER, J_READY, J_MOVING, J_DONE };

/* The rows of one joined dataset's row (elements past the first dimension) in bytes. */
static inline size_t row_bytes(const xfer_rt_dset_t *d)
{
    return (size_t) xfer_ch_volume(d->cfg->ndims - 1, d->cfg->dims + 1) * d->esize;
}

static inline int side_ranks(const xfer_channel_t *ch, int k)
{
    return k == ch->side ? ch->nlocal : ch->nremote;
}

/* Rank r's rows of joined dataset j in a table of @p nj datasets; NOT_PUT: it did not put it
 * (no rows). */
#define NOT_PUT UINT64_MAX
static inline uint64_t rows_at(const uint64_t *tab, int nj, int r, int j)
{
    const uint64_t n = tab[(size_t) r * (size_t) nj + (size_t) j];
    return n == NOT_PUT ? 0 : n;
}

/* Which of side @p k's joined datasets @p d is (its index in jn->idx[k]). */
static inline int jindex(const xfer_channel_t *ch, const xfer_rt_dset_t *d)
{
    const xfer_rt_joined_t *jn = ch->jn;
    const int k = xfer_ch_dset_side(ch, d), i = (int) (d - ch->ds);
    int j;
    for (j = 0; j < jn->nj[k]; j++)
        if (jn->idx[k][j] == i)
            return j;
    return -1;
}

/* Side @p k's rank @p r's first row of its joined dataset @p j, and the step's total. */
static inline uint64_t offset_of(const xfer_channel_t *ch, const uint64_t *tab, int k, int j, int r,
                                 uint64_t *total)
{
    const int nj = ch->jn->nj[k], n = side_ranks(ch, k);
    uint64_t off = 0, t = 0;
    int e;
    for (e = 0; e < n; e++) {
        if (e == r)
            off = t;
        t += rows_at(tab, nj, e, j);
    }
    *total = t;
    return off;
}

/* stream_jplan.c */
xfer_status_t xfer_ch_jplan_create(xfer_channel_t *ch);
/* The step by the slot's plan when it carries it (*ok), receivers' boxes set to every row. */
xfer_status_t xfer_ch_jplan_step(xfer_channel_t *ch, xfer_rt_jslot_t *js, int *ok);
/* Receiving: the box of dataset @p ds of the step the plan brought, into @p buf. */
void xfer_ch_jplan_fetch(xfer_channel_t *ch, const xfer_rt_jslot_t *js, xfer_rt_dset_t *ds,
                         const uint64_t *start, const uint64_t *count, void *buf);

#endif /* XFER_RT_STREAM_JOINED_H */
