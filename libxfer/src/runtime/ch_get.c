/* SPDX-License-Identifier: BSD-3-Clause */
/* The get path: a received step's headers are checked, then the request is copied out of
 * every remote contribution (a dataset the allgatherv plan moves) or out of this rank's
 * selection (one the direct schedule moves). */
#include <string.h>

#include "channel.h"
#include "mxn.h"

/* Elements of remote rank r's block of @p ds inside rank c's selection. */
static uint64_t overlap(const xfer_rt_dset_t *ds, int r, int c)
{
    const int nd = ds->cfg->ndims;
    return xfer_mxn_overlap(nd, ds->g_start + (size_t) r * nd, ds->g_count + (size_t) r * nd,
                            ds->gs_start + (size_t) c * nd, ds->gs_count + (size_t) c * nd, NULL,
                            NULL);
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

static const uint64_t zero_box[XFER_MAX_DIMS];

xfer_status_t xfer_ch_get_check(xfer_channel_t *ch, const char *dataset, const uint64_t **start,
                                const uint64_t **count, const void *buf, size_t bufsize,
                                xfer_rt_dset_t **out, uint64_t *bytes)
{
    xfer_status_t st;
    xfer_rt_dset_t *ds;
    const uint64_t *dims;
    uint64_t v;
    int nd, d;

    if (!ch || !dataset)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or dataset name is NULL");
    XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out_err);
    ds = xfer_ch_find_dset(ch, dataset);
    if (!ds)
        return xfer_ch_no_such_dataset(ch, dataset);
    if (ds->out)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s is sent by %s (this component), not received",
                        ch->cfg->name, dataset, xfer_ch_side_name(ch, ch->side));
    nd = ds->cfg->ndims;
    dims = xfer_ch_dims_of(ds); /* a joined or variable one's: of the step, arrived */
    XFER_CHECK_GOTO(xfer_ch_own_selection(ch, ds), st, out_err);
    if (!*start && !*count) { /* this rank's selection: the whole dataset unless it chose less */
        *start = ds->sel_start;
        *count = ds->sel_count;
    }
    if (!*start)
        *start = zero_box;
    if (!*count)
        *count = dims;
    for (d = 0; d < nd; d++)
        if ((*count)[d] > dims[d] || (*start)[d] > dims[d] - (*count)[d])
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: selection start %llu count %llu in "
                            "dimension %d exceeds its size %llu",
                            ch->cfg->name, dataset, (unsigned long long) (*start)[d],
                            (unsigned long long) (*count)[d], d, (unsigned long long) dims[d]);
    for (d = 0; d < nd; d++)
        if ((*start)[d] < ds->sel_start[d] ||
            (*start)[d] + (*count)[d] > ds->sel_start[d] + ds->sel_count[d]) {
            char want[200], have[200];
            xfer_ch_fmt_box(want, sizeof(want), nd, *start, *count);
            xfer_ch_fmt_box(have, sizeof(have), nd, ds->sel_start, ds->sel_count);
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: rank %d asks for %s, outside the selection "
                            "it receives, %s (xfer_select or the dataset's selection mode)",
                            ch->cfg->name, dataset, ch->me, want, have);
        }
    v = xfer_ch_volume(nd, *count);
    *bytes = v * ds->esize;
    if (*bytes > bufsize || (v > 0 && !buf))
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s: the buffer holds %zu bytes, the selection needs "
                        "%llu",
                        ch->cfg->name, dataset, buf ? bufsize : 0, (unsigned long long) *bytes);
    *out = ds;
    return XFER_SUCCESS;
out_err:
    return st;
}

void xfer_ch_get_desc(xfer_dataset_desc_t *out, const xfer_rt_dset_t *ds, const uint64_t *start,
                      const uint64_t *count, uint64_t step)
{
    const int nd = ds->cfg->ndims;
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    out->name = ds->cfg->name;
    out->type = ds->cfg->type;
    out->ndims = nd;
    memcpy(out->dims, xfer_ch_dims_of(ds), (size_t) nd * sizeof(uint64_t));
    memcpy(out->start, start, (size_t) nd * sizeof(uint64_t));
    memcpy(out->count, count, (size_t) nd * sizeof(uint64_t));
    out->step = step;
    out->record = ds->cfg->record;
}

/* The stream's fetch (transport.h): the step's headers are checked, then the box is copied out
 * of every remote contribution (a dataset the allgatherv plan moves) or out of this rank's
 * selection (one the direct schedule moves). */
xfer_status_t xfer_ch_stream_fetch(xfer_channel_t *ch, xfer_rt_dset_t *ds, const uint64_t *start,
                                   const uint64_t *count, void *buf, uint64_t bytes, uint64_t s)
{
    const xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, s);
    const char *dataset = ds->cfg->name;
    const int nd = ds->cfg->ndims;
    const uint64_t v = xfer_ch_volume(nd, count);
    int r, present = 0, absent = 0, first_absent = -1, by_plan;

    if (ds->dyn) /* joined: the slot's second phase (stream_joined.c) */
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
        const uint64_t bv =
            by_plan ? xfer_ch_volume(nd, ds->g_count + (size_t) r * nd) : overlap(ds, r, ch->me);
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
        const uint64_t *bs = ds->g_start + (size_t) r * nd, *bc = ds->g_count + (size_t) r * nd;
        if (xfer_ch_volume(nd, bc) > 0)
            xfer_ch_copy_box(buf, start, count, sl->rbuf + ch->lay.r_pre[r] + ds->g_off[r], bs, bc,
                             nd, ds->esize);
    }
    if (by_plan)
        ch->stats.bytes_copied_out += bytes;
    return XFER_SUCCESS;
}

static xfer_status_t channel_stats_locked(const xfer_channel_t *ch, xfer_channel_stats_t *stats)
{
    if (!ch || !stats)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or output is NULL");
    *stats = ch->stats;
    return XFER_SUCCESS;
}

/* The public calls: under the context's lock (the progress thread, progress.c). */
xfer_status_t xfer_channel_stats(const xfer_channel_t *ch, xfer_channel_stats_t *stats)
{
    XFER_CH_LOCKED(ch, channel_stats_locked(ch, stats));
}
