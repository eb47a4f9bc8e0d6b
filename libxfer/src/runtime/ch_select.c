/* SPDX-License-Identifier: BSD-3-Clause */
/* What a receiving rank takes of each dataset (xfer_select, the dataset's selection mode) and
 * the buffers a rank binds (xfer_bind_buffer): fixed before step 0's set-up begins. */
#include <stdio.h>
#include <string.h>

#include "channel.h"

/* This rank's selection of received dataset @p d: declared, or the dataset's mode. */
xfer_status_t xfer_ch_own_selection(xfer_channel_t *ch, xfer_rt_dset_t *d)
{
    const xfer_cfg_dataset_t *c = d->cfg;
    xfer_status_t st;
    if (d->sel_declared || d->sel_resolved)
        return XFER_SUCCESS;
    if (c->selection == XFER_SELECT_USER)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s has selection: user, but rank %d of %s did not "
                        "call xfer_select for it before step 0",
                        ch->cfg->name, c->name, ch->me, xfer_ch_side_name(ch, ch->side));
    if (d->dyn) /* by each step's shape (xfer_ch_step_selection) */
        return XFER_SUCCESS;
    st = xfer_decompose(c->selection, c->ndims, c->dims, ch->nlocal, ch->me, d->sel_start,
                        d->sel_count);
    d->sel_resolved = st == XFER_SUCCESS; /* fixed for the run: once */
    return st;
}

void xfer_ch_rule_of(const xfer_rt_dset_t *d, uint64_t *rule)
{
    const int nd = d->cfg->ndims;
    memset(rule, 0, 2 * (size_t) nd * sizeof(uint64_t));
    if (d->sel_declared) {
        memcpy(rule, d->usr_start, (size_t) nd * sizeof(uint64_t));
        memcpy(rule + nd, d->usr_count, (size_t) nd * sizeof(uint64_t));
    } else {
        rule[0] = UINT64_MAX; /* the dataset's mode */
        rule[nd] = (uint64_t) d->cfg->selection;
    }
}

xfer_status_t xfer_ch_rule_box(int nd, const uint64_t *rule, const uint64_t *dims, int n, int r,
                               uint64_t *bs, uint64_t *bc)
{
    int e;
    if (rule[0] == UINT64_MAX)
        return xfer_decompose((xfer_selection_mode_t) rule[nd], nd, dims, n, r, bs, bc);
    for (e = 0; e < nd; e++) { /* the declared box, clipped to the step: possibly nothing */
        bs[e] = rule[e] < dims[e] ? rule[e] : dims[e];
        bc[e] = rule[nd + e] < dims[e] - bs[e] ? rule[nd + e] : dims[e] - bs[e];
    }
    return XFER_SUCCESS;
}

xfer_status_t xfer_ch_step_selection(xfer_channel_t *ch, xfer_rt_dset_t *d, uint64_t step,
                                     const uint64_t *dims)
{
    const xfer_cfg_dataset_t *c = d->cfg;
    uint64_t rule[2 * XFER_MAX_DIMS];
    xfer_status_t st;
    memcpy(d->sdims, dims, (size_t) c->ndims * sizeof(uint64_t));
    xfer_ch_rule_of(d, rule);
    st = xfer_ch_rule_box(c->ndims, rule, dims, ch->nlocal, ch->me, d->sel_start, d->sel_count);
    d->sstep = st == XFER_SUCCESS ? step : UINT64_MAX;
    return st;
}

size_t xfer_ch_sel_bytes(const xfer_rt_dset_t *d)
{
    return (size_t) xfer_ch_volume(d->cfg->ndims, d->sel_count) * d->esize;
}

/* Step 0's set-up began on this rank: its selections and bound buffers are fixed. A channel it
 * only receives on: once its step 0 began on any channel (runtime.h, x->began). */
static int fixed(const xfer_channel_t *ch)
{
    return ch->setup || ch->su.state != XFER_SU_IDLE || ch->cur > 0 || ch->begun ||
           ch->started > 0 || (!xfer_ch_this_sends(ch) && ch->x->began);
}

static xfer_status_t select_locked(xfer_channel_t *ch, const char *dataset, const uint64_t start[],
                                   const uint64_t count[])
{
    xfer_rt_dset_t *d;
    int nd, i;

    if (!ch || !dataset)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "xfer_select: channel or dataset name is NULL");
    d = xfer_ch_find_dset(ch, dataset);
    if (!d)
        return xfer_ch_no_such_dataset(ch, dataset);
    if (d->out)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s is sent by %s (this component): only a receiving "
                        "rank selects",
                        ch->cfg->name, dataset, xfer_ch_side_name(ch, ch->side));
    if (fixed(ch))
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s: dataset %s: selections are fixed once step 0 began (at this "
                        "rank's first commit or first call that waits, on any channel); call "
                        "xfer_select before it",
                        ch->cfg->name, dataset);
    if ((start == NULL) != (count == NULL))
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s: give both start and count, or neither (the "
                        "whole dataset)",
                        ch->cfg->name, dataset);
    nd = d->cfg->ndims;
    for (i = 0; start && i < nd; i++)
        if (!xfer_ch_dim_varies(d->cfg, i) &&
            (count[i] > d->cfg->dims[i] || start[i] > d->cfg->dims[i] - count[i]))
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: selection start %llu count %llu in "
                            "dimension %d exceeds its size %llu",
                            ch->cfg->name, dataset, (unsigned long long) start[i],
                            (unsigned long long) count[i], i, (unsigned long long) d->cfg->dims[i]);
    for (i = 0; i < nd; i++) {
        d->sel_start[i] = start ? start[i] : 0;
        d->sel_count[i] = start             ? count[i]
                          : d->cfg->dims[i] ? d->cfg->dims[i]
                                            : UINT64_MAX; /* a joined or variable one: all of it */
    }
    memcpy(d->usr_start, d->sel_start, (size_t) nd * sizeof(uint64_t));
    memcpy(d->usr_count, d->sel_count, (size_t) nd * sizeof(uint64_t));
    d->sel_declared = 1;
    return XFER_SUCCESS;
}

static xfer_status_t bind_buffer_locked(xfer_channel_t *ch, const char *dataset, void *buf,
                                        size_t bufsize)
{
    xfer_rt_dset_t *d;
    if (!ch || !dataset || !buf)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "xfer_bind_buffer: channel, dataset name or buffer is NULL");
    d = xfer_ch_find_dset(ch, dataset);
    if (!d)
        return xfer_ch_no_such_dataset(ch, dataset);
    if (d->bound && fixed(ch)) { /* after step 0 began */
        if (d->out)
            return XFER_ERR(XFER_ERR_STATE,
                            "channel %s: dataset %s: after step 0, a sending rank's block is "
                            "sent from where each xfer_put gives it",
                            ch->cfg->name, dataset);
        /* a buffer for the next step: where the step lands when its collective starts (a
         * joined or variable step that it does not hold lands in the library's buffer); a
         * selection is known once fixed (before step 0's set-up on this channel too, when the
         * rank's step 0 began on another one) */
        if (!d->dyn && (ch->setup || d->sel_declared || d->sel_resolved) &&
            bufsize < xfer_ch_sel_bytes(d))
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: the buffer bound on rank %d holds %zu bytes, "
                            "the rank's selection needs %zu",
                            ch->cfg->name, d->cfg->name, ch->me, bufsize, xfer_ch_sel_bytes(d));
        d->next_bound = buf;
        d->next_bound_size = bufsize;
        return XFER_SUCCESS;
    }
    if (fixed(ch) || ch->committed > 0 || d->put_now || d->fix_set || d->declared)
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s: dataset %s: bind a buffer before step 0 begins (at this "
                        "rank's first commit or first call that waits, on any channel) and before "
                        "its first put",
                        ch->cfg->name, dataset);
    if (!d->bound && d->out)
        ch->path.bound_send++;
    else if (!d->bound)
        ch->path.bound_recv++;
    d->bound = buf;
    d->bound_size = bufsize;
    return XFER_SUCCESS;
}

/* The public calls: under the context's lock (the progress thread, progress.c). */
static xfer_status_t selection_of_locked(xfer_channel_t *ch, const char *dataset, uint64_t start[],
                                         uint64_t count[])
{
    xfer_rt_dset_t *d;
    const xfer_cfg_dataset_t *c;

    if (!ch || !dataset || !start || !count)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "xfer_selection_of: channel, dataset name, start or count is NULL");
    d = xfer_ch_find_dset(ch, dataset);
    if (!d)
        return xfer_ch_no_such_dataset(ch, dataset);
    c = d->cfg;
    if (d->out)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s is sent by %s (this component), not received",
                        ch->cfg->name, dataset, xfer_ch_side_name(ch, ch->side));
    if (d->dyn && d->sstep == ch->cur) { /* the current step's, once it arrived */
        memcpy(start, d->sel_start, (size_t) c->ndims * sizeof(uint64_t));
        memcpy(count, d->sel_count, (size_t) c->ndims * sizeof(uint64_t));
        return XFER_SUCCESS;
    }
    if (d->dyn && !d->sel_declared)
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s: dataset %s is %s: this rank's selection depends on each "
                        "step's shape; ask once the step began (xfer_step_begin, or "
                        "xfer_get_shape)",
                        ch->cfg->name, dataset, c->joined ? "joined" : "of variable shape");
    if (d->dyn) { /* the box declared, not yet clipped to a step */
        memcpy(start, d->usr_start, (size_t) c->ndims * sizeof(uint64_t));
        memcpy(count, d->usr_count, (size_t) c->ndims * sizeof(uint64_t));
        return XFER_SUCCESS;
    }
    if (d->sel_declared || d->sel_resolved) {
        memcpy(start, d->sel_start, (size_t) c->ndims * sizeof(uint64_t));
        memcpy(count, d->sel_count, (size_t) c->ndims * sizeof(uint64_t));
        return XFER_SUCCESS;
    }
    if (c->selection == XFER_SELECT_USER)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s has selection: user, and rank %d of %s has not "
                        "declared its box with xfer_select yet",
                        ch->cfg->name, dataset, ch->me, xfer_ch_side_name(ch, ch->side));
    return xfer_decompose(c->selection, c->ndims, c->dims, ch->nlocal, ch->me, start, count);
}

xfer_status_t xfer_selection_of(xfer_channel_t *ch, const char *dataset, uint64_t start[],
                                uint64_t count[])
{
    XFER_CH_LOCKED(ch, selection_of_locked(ch, dataset, start, count));
}

xfer_status_t xfer_select(xfer_channel_t *ch, const char *dataset, const uint64_t start[],
                          const uint64_t count[])
{
    XFER_CH_LOCKED(ch, select_locked(ch, dataset, start, count));
}

xfer_status_t xfer_bind_buffer(xfer_channel_t *ch, const char *dataset, void *buf, size_t bufsize)
{
    XFER_CH_LOCKED(ch, bind_buffer_locked(ch, dataset, buf, bufsize));
}
