/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's layout: a step's slot, the geometry records of the set-up, every sending rank's
 * contribution laid out, where headers and attributes land in a receive stage, and the options
 * of the channel's allgatherv plans. Calls nothing of the stream's back. */
#include "../coll/coll.h"
#include "stream.h"

xfer_rt_slot_t *xfer_ch_slot_of(xfer_channel_t *ch, uint64_t step)
{
    return &ch->slots[step % (uint64_t) ch->nslots];
}

/* Number of uint64 in one rank's geometry record, the same on both sides: a block (sent) or a
 * selection (received) per dataset, then the rank's node key and a word of flags
 * (stream_setup.c). */
int xfer_ch_geo_len(const xfer_channel_t *ch)
{
    int i, n = 0;
    for (i = 0; i < ch->nds; i++)
        n += 2 * ch->ds[i].cfg->ndims;
    return n + 2;
}

int xfer_ch_geo_pos(const xfer_channel_t *ch, int i)
{
    int j, pos = 0;
    for (j = 0; j < i; j++)
        pos += 2 * ch->ds[j].cfg->ndims;
    return pos;
}

/* Dataset @p i of side k: its blocks in @p geo (nranks records of @p len words) must not overlap
 * and must tile the global array; each goes at off[r] of its rank's contribution (advanced). */
static xfer_status_t lay_dset(xfer_channel_t *ch, int k, int nranks, const uint64_t *geo, int len,
                              int i, size_t *off, int fill_global)
{
    xfer_rt_dset_t *d = &ch->ds[i];
    const int nd = d->cfg->ndims, pos = xfer_ch_geo_pos(ch, i);
    uint64_t covered = 0;
    int r;

    if (fill_global) {
        d->g_start = xfer_calloc((size_t) nranks * (size_t) nd, sizeof(uint64_t));
        d->g_count = xfer_calloc((size_t) nranks * (size_t) nd, sizeof(uint64_t));
        d->g_off = xfer_calloc((size_t) nranks, sizeof(size_t));
        if (!d->g_start || !d->g_count || !d->g_off)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "dataset layout");
    }
    for (r = 0; r < nranks; r++) {
        const uint64_t *s = geo + (size_t) r * (size_t) len + pos, *c = s + nd;
        uint64_t v = xfer_ch_volume(nd, c);
        int e;
        covered += v;
        for (e = 0; e < r && v > 0; e++) { /* blocks must not overlap */
            const uint64_t *s2 = geo + (size_t) e * (size_t) len + pos, *c2 = s2 + nd;
            int dd, disjoint = 0;
            if (xfer_ch_volume(nd, c2) == 0)
                continue;
            for (dd = 0; dd < nd; dd++)
                if (s[dd] + c[dd] <= s2[dd] || s2[dd] + c2[dd] <= s[dd])
                    disjoint = 1;
            if (!disjoint) {
                char b1[160], b2[160];
                xfer_ch_fmt_box(b1, sizeof(b1), nd, s, c);
                xfer_ch_fmt_box(b2, sizeof(b2), nd, s2, c2);
                return XFER_ERR(XFER_ERR_INVALID_ARG,
                                "channel %s: dataset %s: the block of %s rank %d %s overlaps "
                                "the block of rank %d %s",
                                ch->cfg->name, d->cfg->name, xfer_ch_side_name(ch, k), r, b1, e,
                                b2);
            }
        }
        if (fill_global) {
            memcpy(d->g_start + (size_t) r * nd, s, (size_t) nd * sizeof(uint64_t));
            memcpy(d->g_count + (size_t) r * nd, c, (size_t) nd * sizeof(uint64_t));
            d->g_off[r] = off[r];
        }
        if (r == ch->me && k == ch->side) {
            d->my_off = off[r];
            d->my_bytes = (size_t) v * d->esize;
        }
        off[r] += ((size_t) v * d->esize + 7) & ~(size_t) 7;
    }
    d->never = covered == 0 && !d->dyn; /* no rank put it in step 0: this side never sends it
                                           (joined: its rows travel on their own) */
    if (covered != xfer_ch_volume(nd, d->cfg->dims) && covered != 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s: the blocks of %s's %d ranks hold %llu of its "
                        "%llu elements (each element must belong to exactly one rank's block)",
                        ch->cfg->name, d->cfg->name, xfer_ch_side_name(ch, k), nranks,
                        (unsigned long long) covered,
                        (unsigned long long) xfer_ch_volume(nd, d->cfg->dims));
    return XFER_SUCCESS;
}

/* Check that side k's blocks of every dataset tile the global array exactly; fill the
 * datasets' g_start/g_count from @p geo (nranks records) and the contribution sizes into
 * @p bytes. A contribution holds the header, rank 0's attributes, the blocks of the datasets
 * every receiving rank takes whole (d->whole), then the others', each group in channel order;
 * @p prefix (may be NULL) gets where the others start (the hybrid path's plan part). */
xfer_status_t xfer_ch_lay_out(xfer_channel_t *ch, int k, int nranks, const uint64_t *geo,
                              size_t *bytes, size_t *prefix, int fill_global)
{
    const int len = xfer_ch_geo_len(ch);
    xfer_status_t st = XFER_SUCCESS;
    int i, r, pass;
    size_t *off = NULL;

    off = xfer_calloc((size_t) nranks, sizeof(*off));
    if (!off)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "layout");
    for (r = 0; r < nranks; r++) /* header; rank 0's attributes */
        off[r] = sizeof(xfer_rt_hdr_t) + (r == 0 ? ch->lay.attr_cap : 0);
    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < ch->nds; i++)
            if ((pass == 0) == (ch->ds[i].whole != 0) && xfer_ch_dset_side(ch, &ch->ds[i]) == k)
                XFER_CHECK_GOTO(lay_dset(ch, k, nranks, geo, len, i, off, fill_global), st, out);
        for (r = 0; pass == 0 && prefix && r < nranks; r++)
            prefix[r] = off[r];
    }
    for (r = 0; r < nranks; r++)
        bytes[r] = off[r];
out:
    xfer_free(off);
    return st;
}

/* Pure direct path: the headers' slots, then the attributes (mxn.h); allgatherv and hybrid
 * paths: every remote plan part in rank order, rank 0's attributes after its header. */
size_t xfer_ch_hdr_at(const xfer_channel_t *ch, int r)
{
    if (ch->path.direct && !ch->path.hybrid)
        return (size_t) r * sizeof(xfer_rt_hdr_t);
    return ch->lay.r_pre[r];
}

size_t xfer_ch_attr_at(const xfer_channel_t *ch)
{
    if (ch->path.direct && !ch->path.hybrid)
        return (size_t) ch->nremote * sizeof(xfer_rt_hdr_t);
    return sizeof(xfer_rt_hdr_t);
}

xfer_status_t xfer_ch_plan_opts(const xfer_channel_t *ch, xfer_coll_opts_t *o)
{
    const xfer_cfg_hier_t *h = &ch->cfg->hier;
    xfer_coll_opts_init(o);
    o->duplex = ch->cfg->duplex;
    o->check = XFER_CHECK_OFF; /* the handshake and the setup checked both sides */
    o->fallback = XFER_FALLBACK_WARN;
    o->algorithm = ch->algorithm;
    o->hier_auto = h->enabled == 0   ? XFER_HIER_AUTO_NEVER
                   : h->enabled == 1 ? XFER_HIER_AUTO_ALWAYS /* forced node staging */
                                     : XFER_HIER_AUTO_ALLOW;
    o->hier_senders = h->leaders_per_node;
    o->hier_sync = (xfer_hier_sync_t) h->sync; /* XFER_HIER_SYNC_FLAGS or _BARRIER */
    /* Every plan progresses in xfer_test and our own waits bound them by the peer's liveness:
     * a collective started early must not expire while the peer legitimately computes. */
    o->timeout_ms = XFER_TIMEOUT_NONE;
    return XFER_SUCCESS;
}
