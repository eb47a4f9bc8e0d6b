/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's fetch (transport.h, ops->fetch): a received step's headers are checked, then the
 * box is copied out of every remote contribution (a dataset the allgatherv plan moves) or out of
 * this rank's selection (one the direct schedule moves); a joined or variable dataset's comes
 * from the slot's second phase (stream_joined.c). */
#include <string.h>

#include "stream.h"
#include "mxn.h"

/* Elements of remote rank r's blocks of @p ds inside rank c's selection. */
static uint64_t overlap(const xfer_rt_dset_t *ds, int r, int c)
{
    const int nd = ds->cfg->ndims;
    uint64_t v = 0;
    size_t b;
    for (b = ds->g_first[r]; b < ds->g_first[r + 1]; b++)
        v += xfer_mxn_overlap(nd, ds->g_start + b * nd, ds->g_count + b * nd,
                              ds->gs_start + (size_t) c * nd, ds->gs_count + (size_t) c * nd, NULL,
                              NULL);
    return v;
}

/* Elements of remote rank r's blocks of @p ds. */
static uint64_t held(const xfer_rt_dset_t *ds, int r)
{
    const int nd = ds->cfg->ndims;
    uint64_t v = 0;
    size_t b;
    for (b = ds->g_first[r]; b < ds->g_first[r + 1]; b++)
        v += xfer_ch_volume(nd, ds->g_count + b * nd);
    return v;
}

/* The pure direct path: does remote rank r stream to this rank (mxn.h: rank 0 always)? */
static int hears_from(const xfer_channel_t *ch, int r)
{
    int i;
    if (r == 0)
        return 1;
    for (i = 0; i < ch->nds; i++)
        if (!ch->ds[i].out && overlap(&ch->ds[i], r, ch->me) > 0)
            return 1;
    return 0;
}

xfer_status_t xfer_ch_stream_fetch(xfer_channel_t *ch, xfer_rt_dset_t *ds, const uint64_t *start,
                                   const uint64_t *count, void *buf, uint64_t bytes, uint64_t s)
{
    const xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, s);
    const char *dataset = ds->cfg->name;
    const int nd = ds->cfg->ndims;
    const uint64_t v = xfer_ch_volume(nd, count);
    int r, present = 0, absent = 0, first_absent = -1, by_plan;

    if (xfer_ch_jroute(ds)) /* joined, variable, per_step: the slot's second phase */
        return xfer_ch_joined_fetch(ch, ds, start, count, buf, bytes, s);

    if (ds->never)
        return XFER_ERR(XFER_ERR_NOT_FOUND,
                        "channel %s: %s did not put dataset %s in step 0, so it never sends it "
                        "(the decomposition is fixed by step 0)",
                        ch->cfg->name, xfer_ch_peer_name(ch), dataset);
    by_plan = xfer_ch_by_plan(ch, ds);
    /* Headers: every sending rank sent this step (on the pure direct path: every one that
     * streams to this rank); which datasets it put. */
    for (r = 0; r < ch->nremote; r++) {
        const xfer_rt_hdr_t *h = (const xfer_rt_hdr_t *) (sl->rbuf + xfer_ch_hdr_at(ch, r));
        const uint64_t bv = by_plan ? held(ds, r) : overlap(ds, r, ch->me);
        if (ch->path.direct && !ch->path.hybrid && !hears_from(ch, r))
            continue;
        if (h->magic != XFER_RT_MAGIC || h->step != s || h->rank != (uint64_t) r) {
            ch->health.failed = 1;
            return XFER_ERR(XFER_ERR_MISMATCH,
                            "channel %s: step %llu: the data of %s rank %d is not of this step "
                            "(header step %llu, rank %llu)",
                            ch->cfg->name, (unsigned long long) s, xfer_ch_peer_name(ch), r,
                            (unsigned long long) h->step, (unsigned long long) h->rank);
        }
        if (bv > 0) {
            if (h->mask >> ds->bit & 1)
                present++;
            else if (absent++ == 0)
                first_absent = r;
        }
    }
    if (present == 0 && absent > 0)
        return XFER_ERR(XFER_ERR_NOT_FOUND, "channel %s: %s did not put dataset %s in step %llu",
                        ch->cfg->name, xfer_ch_peer_name(ch), dataset, (unsigned long long) s);
    if (absent > 0)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: step %llu: %d ranks of %s put dataset %s, rank %d did not",
                        ch->cfg->name, (unsigned long long) s, present, xfer_ch_peer_name(ch),
                        dataset, first_absent);
    if (!by_plan && v > 0) { /* this rank's selection: in its receive area, or bound */
        const char *src = ds->bound ? ds->bound : sl->rbuf + ds->gs_off[ch->me];
        if (src != buf || memcmp(start, ds->sel_start, (size_t) nd * sizeof(uint64_t)) != 0) {
            xfer_ch_copy_box(buf, start, count, src, ds->sel_start, ds->sel_count, nd, ds->esize);
            ch->stats.bytes_copied_out += bytes;
        }
    }
    for (r = 0; by_plan && v > 0 && r < ch->nremote; r++) { /* from every contribution */
        size_t b;
        for (b = ds->g_first[r]; b < ds->g_first[r + 1]; b++) {
            const uint64_t *bs = ds->g_start + b * nd, *bc = ds->g_count + b * nd;
            if (xfer_ch_volume(nd, bc) > 0)
                xfer_ch_copy_box(buf, start, count, sl->rbuf + ch->lay.r_pre[r] + ds->g_off[b], bs,
                                 bc, nd, ds->esize);
        }
    }
    if (by_plan)
        ch->stats.bytes_copied_out += bytes;
    return XFER_SUCCESS;
}
