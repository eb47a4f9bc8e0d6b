/* SPDX-License-Identifier: BSD-3-Clause */
/* The get path: a received step's headers are checked, then the selection is copied out of
 * every remote contribution. */
#include <string.h>

#include "channel.h"

xfer_status_t xfer_ch_get_impl(xfer_channel_t *ch, const char *dataset, const uint64_t start[],
                               const uint64_t count[], void *buf, size_t bufsize,
                               xfer_dataset_desc_t *out)
{
    xfer_status_t st;
    xfer_rt_dset_t *ds;
    xfer_rt_slot_t *sl;
    const xfer_rt_hdr_t *h0 = NULL;
    uint64_t s, v, bytes, zero[XFER_MAX_DIMS] = {0};
    int nd, r, d, present = 0, absent = 0, first_absent = -1;
    size_t off = 0;

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
    if (!start)
        start = zero;
    if (!count)
        count = ds->cfg->dims;
    for (d = 0; d < nd; d++)
        if (count[d] > ds->cfg->dims[d] || start[d] > ds->cfg->dims[d] - count[d])
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: selection start %llu count %llu in "
                            "dimension %d exceeds its size %llu",
                            ch->cfg->name, dataset, (unsigned long long) start[d],
                            (unsigned long long) count[d], d,
                            (unsigned long long) ds->cfg->dims[d]);
    v = xfer_ch_volume(nd, count);
    bytes = v * ds->esize;
    if (bytes > bufsize || (v > 0 && !buf))
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s: the buffer holds %zu bytes, the selection needs "
                        "%llu",
                        ch->cfg->name, dataset, buf ? bufsize : 0, (unsigned long long) bytes);
    if (ch->ended)
        return xfer_ch_ended(ch, ch->cur);
    if (xfer_ch_this_sends(ch))
        XFER_CHECK_GOTO(xfer_ch_commit(ch), st,
                        out_err); /* full duplex: this step's puts are done */
    s = ch->cur;
    XFER_CHECK_GOTO(xfer_ch_wait_until(ch, xfer_ch_step_ready, &s, "waiting for a step"), st,
                    out_err);
    sl = xfer_ch_slot_of(ch, s);
    if (!(sl->state == XFER_SLOT_DONE && sl->step == s))
        return xfer_ch_ended(ch, s);
    if (ds->never)
        return XFER_ERR(XFER_ERR_NOT_FOUND,
                        "channel %s: %s did not put dataset %s in step 0, so it never sends it "
                        "(the decomposition is fixed by step 0)",
                        ch->cfg->name, xfer_ch_peer_name(ch), dataset);
    /* Headers: every sending rank sent this step; which datasets it put. */
    for (r = 0; r < ch->nremote; r++) {
        const xfer_rt_hdr_t *h = (const xfer_rt_hdr_t *) (sl->rbuf + off);
        const uint64_t bv = xfer_ch_volume(nd, ds->g_count + (size_t) r * nd);
        if (h->magic != XFER_RT_MAGIC || h->step != s || h->rank != (uint64_t) r) {
            ch->failed = 1;
            return XFER_ERR(XFER_ERR_MISMATCH,
                            "channel %s: step %llu: the data of %s rank %d is not of this step "
                            "(header step %llu, rank %llu)",
                            ch->cfg->name, (unsigned long long) s, xfer_ch_peer_name(ch), r,
                            (unsigned long long) h->step, (unsigned long long) h->rank);
        }
        if (!h0)
            h0 = h;
        if (bv > 0) {
            if (h->mask >> ds->bit & 1)
                present++;
            else if (absent++ == 0)
                first_absent = r;
        }
        off += ch->r_bytes[r];
    }
    if (present == 0 && absent > 0)
        return XFER_ERR(XFER_ERR_NOT_FOUND, "channel %s: %s did not put dataset %s in step %llu",
                        ch->cfg->name, xfer_ch_peer_name(ch), dataset, (unsigned long long) s);
    if (absent > 0)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: step %llu: %d ranks of %s put dataset %s, rank %d did not",
                        ch->cfg->name, (unsigned long long) s, present, xfer_ch_peer_name(ch),
                        dataset, first_absent);
    for (r = 0, off = 0; r < ch->nremote; r++) {
        const uint64_t *bs = ds->g_start + (size_t) r * nd, *bc = ds->g_count + (size_t) r * nd;
        if (xfer_ch_volume(nd, bc) > 0 && v > 0)
            xfer_ch_copy_box(buf, start, count, sl->rbuf + off + ds->g_off[r], bs, bc, nd,
                             ds->esize);
        off += ch->r_bytes[r];
    }
    if (out) {
        memset(out, 0, sizeof(*out));
        out->name = ds->cfg->name;
        out->type = ds->cfg->type;
        out->ndims = nd;
        memcpy(out->dims, ds->cfg->dims, (size_t) nd * sizeof(uint64_t));
        memcpy(out->start, start, (size_t) nd * sizeof(uint64_t));
        memcpy(out->count, count, (size_t) nd * sizeof(uint64_t));
        out->step = s;
    }
    return XFER_SUCCESS;
out_err:
    return st;
}
