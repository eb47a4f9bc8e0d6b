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

/* Number of uint64 in one rank's geometry record, the same on both sides: per dataset 2 ndims
 * words, a selection (received) or the number of the rank's blocks (sent: the blocks follow in
 * the set-up's second exchange), then the rank's node key and a word of flags
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

/* Does side @p k send dataset @p d in the contributions, block by block? */
static int in_contribution(const xfer_channel_t *ch, const xfer_rt_dset_t *d, int k)
{
    return xfer_ch_dset_side(ch, d) == k && !xfer_ch_jroute(d);
}

int xfer_ch_geo_blocks(const xfer_channel_t *ch, int k, const uint64_t *rec)
{
    int i, n = 0;
    for (i = 0; i < ch->nds; i++)
        if (in_contribution(ch, &ch->ds[i], k))
            n += (int) rec[xfer_ch_geo_pos(ch, i)] * 2 * ch->ds[i].cfg->ndims;
    return n;
}

/* Dataset @p i of side k: its blocks, rank r's in @p bx from word @p bd[r] (its datasets in
 * channel order, as many blocks as its record in @p geo says), must tile the global array; they
 * go one after the other from off[r] of their rank's contribution (advanced), as the rank's own
 * stage lays them out (xfer_rt_blocks_t: each padded to 8 bytes). */
static xfer_status_t lay_dset(xfer_channel_t *ch, int k, int nranks, const uint64_t *geo, int len,
                              const uint64_t *bx, const int *bd, int i, size_t *off)
{
    xfer_rt_dset_t *d = &ch->ds[i];
    const int nd = d->cfg->ndims, pos = xfer_ch_geo_pos(ch, i);
    uint64_t covered = 0;
    size_t nb, b;
    int r, j;

    d->g_first = xfer_calloc((size_t) nranks + 1, sizeof(size_t));
    if (!d->g_first)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "dataset layout");
    for (r = 0; r < nranks; r++)
        d->g_first[r + 1] = d->g_first[r] + geo[(size_t) r * (size_t) len + pos];
    nb = d->g_first[nranks];
    d->g_start = xfer_calloc((nb + 1) * (size_t) nd, sizeof(uint64_t));
    d->g_count = xfer_calloc((nb + 1) * (size_t) nd, sizeof(uint64_t));
    d->g_off = xfer_calloc(nb + 1, sizeof(size_t));
    if (!d->g_start || !d->g_count || !d->g_off)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "dataset layout");
    for (r = 0; r < nranks; r++) {
        const uint64_t *x = bx + (size_t) bd[r];
        size_t in = 0, last = 0;
        for (j = 0; j < i; j++) /* the rank's blocks of the datasets before this one */
            if (in_contribution(ch, &ch->ds[j], k))
                x += geo[(size_t) r * (size_t) len + xfer_ch_geo_pos(ch, j)] * 2 *
                     (size_t) ch->ds[j].cfg->ndims;
        for (b = d->g_first[r]; b < d->g_first[r + 1]; b++, x += 2 * nd) {
            const uint64_t v = xfer_ch_volume(nd, x + nd);
            memcpy(d->g_start + b * nd, x, (size_t) nd * sizeof(uint64_t));
            memcpy(d->g_count + b * nd, x + nd, (size_t) nd * sizeof(uint64_t));
            d->g_off[b] = off[r] + in;
            last = in + (size_t) v * d->esize;
            in += ((size_t) v * d->esize + 7) & ~(size_t) 7;
            covered += v;
        }
        if (r == ch->me && k == ch->side) {
            d->my_off = off[r];
            d->my_bytes = last;
        }
        off[r] += in;
    }
    d->never = covered == 0 && !xfer_ch_jroute(d); /* no rank put it in step 0: this side never
                                                       sends it (the second phase's move alone) */
    {
        const xfer_tiles_t t = {nd, d->cfg->dims, nranks, d->g_first, d->g_start, d->g_count};
        return xfer_ch_check_tiling(ch, d, k, 0, &t);
    }
}

/* Check that side k's blocks of every dataset tile the global array exactly; fill the
 * datasets' g_first/g_start/g_count/g_off from @p geo (nranks records) and @p bx (the blocks,
 * rank r's from word bd[r]) and the contribution sizes into @p bytes. A contribution holds the
 * header, rank 0's attributes, the blocks of the datasets every receiving rank takes whole
 * (d->whole), then the others', each group in channel order; @p prefix (may be NULL) gets where
 * the others start (the hybrid path's plan part). */
xfer_status_t xfer_ch_lay_out(xfer_channel_t *ch, int k, int nranks, const uint64_t *geo,
                              const uint64_t *bx, const int *bd, size_t *bytes, size_t *prefix)
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
                XFER_CHECK_GOTO(lay_dset(ch, k, nranks, geo, len, bx, bd, i, off), st, out);
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
    /* A reader the sender outlives (on_reader_loss: continue or spill, both sides alike) leaves
     * the channel's communicators to MPI_Finalize, which Open MPI disconnects from the dead job
     * one by one: the learning's own (its agreement's and its other candidates' plans, whose
     * ranks never spoke to the reader) hung it there. Such channels' plans follow the model. */
    {
        xfer_channel_flow_t f;
        xfer_status_t st = xfer_config_channel_flow(ch->x->cfg, ch->index, &f);
        if (st != XFER_SUCCESS)
            return st;
        if (f.on_reader_loss != XFER_LOSS_FAIL)
            o->learn = XFER_COLL_LEARN_OFF;
    }
    return XFER_SUCCESS;
}
