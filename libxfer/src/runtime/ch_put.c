/* SPDX-License-Identifier: BSD-3-Clause */
/* What every put checks, whatever the transport (the channel core, transport.h): the dataset,
 * its type and shape (a joined dataset's rows, a variable shape's extents, a record's layout),
 * the block, and a fixed-shape dataset's block against the others of the rank (ch_blocks.c). */
#include <stdio.h>
#include <string.h>

#include "channel.h"

/* A put's record layout against the declaration: the first field that differs, named. */
static xfer_status_t record_check(const xfer_channel_t *ch, const xfer_rt_dset_t *ds,
                                  const xfer_record_t *got)
{
    const xfer_record_t *want = ds->cfg->record;
    int i;
    for (i = 0; i < want->nfields && i < got->nfields; i++) {
        const xfer_record_field_t *a = &want->fields[i], *b = &got->fields[i];
        if (!b->name || strcmp(a->name, b->name) != 0 || a->type != b->type ||
            a->count != b->count || a->offset != b->offset)
            return XFER_ERR(XFER_ERR_MISMATCH,
                            "channel %s: dataset %s: step %llu: field %d of rank %d's record is "
                            "%s %s[%u] at offset %zu, the workflow file declares %s %s[%u] at "
                            "offset %zu",
                            ch->cfg->name, ds->cfg->name, (unsigned long long) xfer_ch_step_now(ch),
                            i, ch->me, b->name ? b->name : "(null)", xfer_type_name(b->type),
                            (unsigned) b->count, b->offset, a->name, xfer_type_name(a->type),
                            (unsigned) a->count, a->offset);
    }
    if (want->nfields != got->nfields || want->size != got->size)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: dataset %s: step %llu: rank %d's record has %d fields in %zu "
                        "bytes, the workflow file declares %d fields in %zu bytes",
                        ch->cfg->name, ds->cfg->name, (unsigned long long) xfer_ch_step_now(ch),
                        ch->me, got->nfields, got->size, want->nfields, want->size);
    return XFER_SUCCESS;
}

/* The shape of @p c as the workflow file writes it: "[joined, 3]", "[variable, 64]". */
static void fmt_shape(char *buf, size_t len, const xfer_cfg_dataset_t *c)
{
    size_t o = (size_t) snprintf(buf, len, "[");
    int i;
    for (i = 0; i < c->ndims && o < len; i++) {
        const char *sep = i ? ", " : "";
        if (i == 0 && c->joined)
            o += (size_t) snprintf(buf + o, len - o, "%sjoined", sep);
        else if (c->variable >> i & 1u)
            o += (size_t) snprintf(buf + o, len - o, "%svariable", sep);
        else
            o +=
                (size_t) snprintf(buf + o, len - o, "%s%llu", sep, (unsigned long long) c->dims[i]);
    }
    if (o < len)
        snprintf(buf + o, len - o, "]");
}

/* Do the put's dims match the declaration where it fixes them (a variable extent is the put's)? */
static int same_fixed(const xfer_cfg_dataset_t *c, const xfer_dataset_desc_t *d)
{
    int i;
    for (i = 0; i < d->ndims; i++)
        if (!(c->variable >> i & 1u) && d->dims[i] != c->dims[i])
            return 0;
    return 1;
}

/* A put of a joined dataset (docs/runtime.md, "Joined datasets"): this rank's rows of the step,
 * count[0] of them (zero included), whole rows, no start. The rows may change every step. */
static xfer_status_t joined_put_check(xfer_channel_t *ch, const xfer_dataset_desc_t *d,
                                      xfer_rt_dset_t *ds)
{
    const xfer_cfg_dataset_t *c = ds->cfg;
    char want[200], got[200];
    int i;

    if (d->type != c->type || d->ndims != c->ndims ||
        memcmp(d->dims + 1, c->dims + 1, (size_t) (d->ndims - 1) * sizeof(uint64_t)) != 0 ||
        (d->dims[0] != 0 && d->dims[0] != d->count[0])) {
        uint64_t z[XFER_MAX_DIMS] = {0};
        fmt_shape(want, sizeof(want), c);
        if (d->ndims >= 1 && d->ndims <= XFER_MAX_DIMS)
            xfer_ch_fmt_box(got, sizeof(got), d->ndims, z, d->dims);
        else
            snprintf(got, sizeof(got), "(%d dimensions)", d->ndims);
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: dataset %s: step %llu: rank %d puts %s%s, the workflow file "
                        "declares %s%s (a joined put leaves dims[0] 0, or gives this rank's rows "
                        "there)",
                        ch->cfg->name, d->name, (unsigned long long) xfer_ch_step_now(ch), ch->me,
                        xfer_type_name(d->type), got, xfer_type_name(c->type), want);
    }
    for (i = 0; i < d->ndims; i++)
        if (d->start[i] != 0)
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s is joined: a put gives rank %d's rows as "
                            "count[0] and no start, but start[%d] is %llu in step %llu",
                            ch->cfg->name, d->name, ch->me, i, (unsigned long long) d->start[i],
                            (unsigned long long) xfer_ch_step_now(ch));
    for (i = 1; i < d->ndims; i++)
        if (d->count[i] != c->dims[i]) {
            uint64_t z[XFER_MAX_DIMS] = {0};
            xfer_ch_fmt_box(want, sizeof(want), c->ndims - 1, z, c->dims + 1);
            xfer_ch_fmt_box(got, sizeof(got), d->ndims - 1, z, d->count + 1);
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s is joined: each row is %s, but rank %d's "
                            "rows in step %llu are %s",
                            ch->cfg->name, d->name, want, ch->me,
                            (unsigned long long) xfer_ch_step_now(ch), got);
        }
    return XFER_SUCCESS;
}

/* What every put checks, whatever the transport: the dataset, its type and shape, the block
 * and, for a fixed-shape dataset, that it overlaps no block of the step and (blocks: fixed) is one
 * of the first step's (ch_blocks.c). The dataset into *@p out, the block's elements into *@p vol,
 * which block of the first step it is into *@p of (-1: none). */
xfer_status_t xfer_ch_put_check(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block,
                                xfer_rt_dset_t **out, uint64_t *vol, int *of)
{
    xfer_status_t st;
    xfer_rt_dset_t *ds;
    uint64_t v;
    int i;

    *of = -1;
    if (!ch || !d || !d->name)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel, descriptor or its name is NULL");
    XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out);
    ds = xfer_ch_find_dset(ch, d->name);
    if (!ds)
        return xfer_ch_no_such_dataset(ch, d->name);
    if (!ds->out)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel %s: dataset %s is sent by %s, not by %s",
                        ch->cfg->name, d->name, xfer_ch_peer_name(ch),
                        xfer_ch_side_name(ch, ch->side));
    if (ds->cfg->record && d->record && d->type == XFER_TYPE_RECORD)
        XFER_CHECK_GOTO(record_check(ch, ds, d->record), st, out);
    if (ds->cfg->joined)
        XFER_CHECK_GOTO(joined_put_check(ch, d, ds), st, out);
    else if (d->type != ds->cfg->type || d->ndims != ds->cfg->ndims || !same_fixed(ds->cfg, d)) {
        char want[200], got[200];
        uint64_t z[XFER_MAX_DIMS] = {0};
        if (ds->cfg->variable) /* "[variable, 0:64]" */
            fmt_shape(want, sizeof(want), ds->cfg);
        else
            xfer_ch_fmt_box(want, sizeof(want), ds->cfg->ndims, z, ds->cfg->dims);
        if (d->ndims >= 1 && d->ndims <= XFER_MAX_DIMS)
            xfer_ch_fmt_box(got, sizeof(got), d->ndims, z, d->dims);
        else
            snprintf(got, sizeof(got), "(%d dimensions)", d->ndims);
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: dataset %s: step %llu: rank %d puts %s%s, the workflow file "
                        "declares %s%s",
                        ch->cfg->name, d->name, (unsigned long long) xfer_ch_step_now(ch), ch->me,
                        xfer_type_name(d->type), got, xfer_type_name(ds->cfg->type), want);
    }
    for (i = 0; i < d->ndims; i++)
        if (!(i == 0 && ds->cfg->joined) &&
            (d->count[i] > d->dims[i] || d->start[i] > d->dims[i] - d->count[i]))
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: block start %llu count %llu in dimension "
                            "%d exceeds its size %llu",
                            ch->cfg->name, d->name, (unsigned long long) d->start[i],
                            (unsigned long long) d->count[i], i, (unsigned long long) d->dims[i]);
    v = xfer_ch_volume(d->ndims, d->count);
    if (v > 0 && !block)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel %s: dataset %s: block is NULL",
                        ch->cfg->name, d->name);
    if (ch->cur_committed)
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s: step %llu was committed by its first xfer_get: put every "
                        "dataset of a full-duplex step before getting",
                        ch->cfg->name, (unsigned long long) ch->cur);
    if (ds->dyn) { /* the block (and a variable shape) is the step's own */
        memcpy(ds->start, d->start, (size_t) d->ndims * sizeof(uint64_t));
        memcpy(ds->count, d->count, (size_t) d->ndims * sizeof(uint64_t));
        memcpy(ds->pdims, d->dims, (size_t) d->ndims * sizeof(uint64_t));
        ds->declared = 1;
    } else { /* a block more of this rank's in the step (ch_blocks.c) */
        XFER_CHECK_GOTO(xfer_ch_block_check(ch, ds, d, v, of), st, out);
    }
    *out = ds;
    *vol = v;
    return XFER_SUCCESS;
out:
    return st;
}
