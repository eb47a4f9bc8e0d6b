/* SPDX-License-Identifier: BSD-3-Clause */
/* The get path, whatever the transport: the checks of every get and the descriptor it returns
 * (the transport's fetch copies the box: stream_get.c, file.c); xfer_channel_stats. */
#include <string.h>

#include "channel.h"

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
                        "channel %s: dataset %s: step %llu: the buffer holds %zu bytes, rank %d's "
                        "selection needs %llu",
                        ch->cfg->name, dataset, (unsigned long long) xfer_ch_step_now(ch),
                        buf ? bufsize : 0, ch->me, (unsigned long long) *bytes);
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

static xfer_status_t channel_stats_locked(const xfer_channel_t *ch, xfer_channel_stats_t *stats)
{
    if (!ch || !stats)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or output is NULL");
    *stats = ch->stats;
    stats->steps_held = ch->loss.lost ? 0 : (uint64_t) ch->flow.n;
    return XFER_SUCCESS;
}

/* The public calls: under the context's lock (the progress thread, progress.c). */
xfer_status_t xfer_channel_stats(const xfer_channel_t *ch, xfer_channel_stats_t *stats)
{
    XFER_CH_LOCKED(ch, channel_stats_locked(ch, stats));
}
