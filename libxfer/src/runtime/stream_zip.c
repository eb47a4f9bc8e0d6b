/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's compressed datasets (docs/runtime.md, "Compression"; codec.h). A compressed
 * dataset moves in each slot's second phase (stream_jtable.h), whatever its shape, because its
 * bytes change every step:
 *  - at its commit a sending rank compresses each of its blocks of the step into a frame (the
 *    dataset's codec, or auto's choice for the step: codec_auto.h), one after the other, each
 *    padded to 8 bytes; its entry in the side's table ends with the frames' bytes;
 *  - the frames travel whole: to every receiving rank one of its blocks meets (point to point),
 *    or in the slot's allgatherv plan when every receiving rank takes all of it;
 *  - once the step's messages are in, a receiving rank decodes each frame it received and copies
 *    the part its selection holds (a frame names its codec: no agreement is needed on it).
 * A frame that is not one, or does not decode to its block, fails the step (XFER_ERR_PROTOCOL). */
#include <stdio.h>
#include <string.h>

#include "../codec/codec_auto.h"
#include "stream_jtable.h"

xfer_status_t xfer_ch_zip_new(xfer_channel_t *ch)
{
    xfer_rt_joined_t *jn = ch->jn;
    const int k = ch->side, ko = 1 - k;
    int s, j;

    for (j = 0; j < jn->nj[k]; j++)
        jn->zipped[k] |= zipped(dset_at(ch, k, j));
    for (j = 0; j < jn->nj[ko]; j++)
        jn->zipped[ko] |= zipped(dset_at(ch, ko, j));
    if (!jn->zipped[0] && !jn->zipped[1])
        return XFER_SUCCESS;
    if (jn->zipped[k]) {
        if (!(jn->za = xfer_calloc((size_t) jn->nj[k], sizeof(*jn->za))))
            goto oom;
        for (j = 0; j < jn->nj[k]; j++)
            xfer_codec_auto_init_env(&jn->za[j]);
    }
    for (s = 0; s < ch->nslots; s++) {
        xfer_rt_jslot_t *js = &jn->js[s];
        if (jn->zipped[k] && (!(js->z = xfer_calloc((size_t) jn->nj[k], sizeof(char *))) ||
                              !(js->zcap = xfer_calloc((size_t) jn->nj[k], sizeof(size_t))) ||
                              !(js->zlen = xfer_calloc((size_t) jn->nj[k], sizeof(size_t))) ||
                              !(js->zraw_len = xfer_calloc((size_t) jn->nj[k], sizeof(size_t))) ||
                              !(js->zskip = xfer_calloc((size_t) jn->nj[k], sizeof(int)))))
            goto oom;
        if (jn->zipped[ko] &&
            (!(js->zin = xfer_calloc((size_t) jn->nj[ko], sizeof(char *))) ||
             !(js->zin_cap = xfer_calloc((size_t) jn->nj[ko], sizeof(size_t))) ||
             !(js->zoff =
                   xfer_calloc((size_t) jn->nj[ko] * ((size_t) ch->nremote + 1), sizeof(size_t)))))
            goto oom;
    }
    return XFER_SUCCESS;
oom:
    return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: compressed datasets", ch->cfg->name);
}

void xfer_ch_zip_free(xfer_channel_t *ch, xfer_rt_jslot_t *js)
{
    int j;
    for (j = 0; js->z && j < ch->jn->nj[ch->side]; j++)
        xfer_free(js->z[j]);
    for (j = 0; js->zin && j < ch->jn->nj[1 - ch->side]; j++)
        xfer_free(js->zin[j]);
    xfer_free(js->z);
    xfer_free(js->zcap);
    xfer_free(js->zlen);
    xfer_free(js->zraw_len);
    xfer_free(js->zskip);
    xfer_free(js->zin);
    xfer_free(js->zin_cap);
    xfer_free(js->zoff);
    xfer_free(js->zraw);
}

/* This rank's block @p b of its dataset @p d in the step being committed: its shape (what a codec
 * needs of it) and where its bytes are (a per_step or fixed one's blocks as put, one after the
 * other, each padded; a joined or variable one's only block). Its bytes. */
static size_t own_block(const xfer_rt_jslot_t *js, int j, const xfer_rt_dset_t *d, int b,
                        uint64_t *bc, const char **at)
{
    const int nd = d->cfg->ndims;
    if (per_step(d)) {
        memcpy(bc, d->put.box + (size_t) b * 2 * (size_t) nd + nd, (size_t) nd * sizeof(uint64_t));
        *at = (const char *) js->from[j] + d->put.pk[b];
    } else {
        memcpy(bc, d->count, (size_t) nd * sizeof(uint64_t));
        if (d->cfg->joined) /* its rows: whole rows */
            memcpy(bc + 1, d->cfg->dims + 1, (size_t) (nd - 1) * sizeof(uint64_t));
        *at = js->from[j];
    }
    return (size_t) xfer_ch_volume(nd, bc) * d->esize;
}

static xfer_status_t grow(char **buf, size_t *cap, size_t n, const xfer_channel_t *ch,
                          const xfer_rt_dset_t *d)
{
    char *nb;
    if (*cap >= n)
        return XFER_SUCCESS;
    if (!(nb = xfer_realloc_array(*buf, n, 1)))
        return XFER_ERR(XFER_ERR_NO_MEMORY,
                        "channel %s: dataset %s: %zu bytes of compressed frames", ch->cfg->name,
                        d->cfg->name, n);
    *buf = nb;
    *cap = n;
    return XFER_SUCCESS;
}

/* This rank's frames of its dataset @p j (put in the step), by its codec or auto's choice. */
static xfer_status_t zip_one(xfer_channel_t *ch, xfer_rt_jslot_t *js, int j)
{
    xfer_rt_joined_t *jn = ch->jn;
    const xfer_rt_dset_t *d = dset_at(ch, ch->side, j);
    const int nd = d->cfg->ndims, nb = per_step(d) ? d->put.n : 1;
    uint64_t bc[XFER_MAX_DIMS];
    xfer_compression_t c = d->cfg->compression, used;
    xfer_codec_block_t blk = {d->cfg->type, nd, bc, 0, d->cfg->tolerance};
    xfer_status_t st = XFER_SUCCESS;
    size_t need = 0, at = 0, n;
    const char *src;
    double t0;
    int b;

    for (b = 0; b < nb; b++) { /* the raw bytes, and room for every frame at its bound */
        blk.bytes = own_block(js, j, d, b, bc, &src);
        if (b == 0 && c == XFER_COMPRESSION_AUTO) /* the step's choice, from its first block */
            XFER_CHECK_GOTO(xfer_codec_auto_choose(&jn->za[j], &blk, src, &c), st, out);
        js->zraw_len[j] += blk.bytes;
        need += c == XFER_COMPRESSION_NONE ? 0 : PAD8(xfer_codec_bound(c, &blk));
    }
    if (c == XFER_COMPRESSION_NONE) { /* auto: raw, no frames (stream_jtable.h, ZRAW) */
        js->zskip[j] = 1;
        return XFER_SUCCESS;
    }
    XFER_CHECK_GOTO(grow(&js->z[j], &js->zcap[j], need ? need : 8, ch, d), st, out);
    t0 = xfer_now();
    for (b = 0; b < nb; b++) {
        blk.bytes = own_block(js, j, d, b, bc, &src);
        XFER_CHECK_GOTO(xfer_codec_encode(c, &blk, src, js->z[j] + at, js->zcap[j] - at, &n, &used),
                        st, out);
        memset(js->z[j] + at + n, 0, PAD8(n) - n);
        at += PAD8(n);
    }
    js->zlen[j] = at;
    if (d->cfg->compression == XFER_COMPRESSION_AUTO)
        xfer_codec_auto_seen(&jn->za[j], c, js->zraw_len[j], at, xfer_now() - t0);
out:
    if (st != XFER_SUCCESS) {
        char why[512];
        snprintf(why, sizeof(why), "%s", xfer_last_error());
        return XFER_ERR(st, "channel %s: dataset %s: step %llu: compressing by %s: %s",
                        ch->cfg->name, d->cfg->name, (unsigned long long) ch->cur,
                        xfer_codec_name(c), why);
    }
    return st;
}

xfer_status_t xfer_ch_zip_commit(xfer_channel_t *ch, xfer_rt_slot_t *sl, xfer_rt_jslot_t *js)
{
    xfer_rt_joined_t *jn = ch->jn;
    xfer_status_t st = XFER_SUCCESS;
    int j;
    if (!jn->zipped[ch->side])
        return XFER_SUCCESS;
    for (j = 0; j < jn->nj[ch->side]; j++) {
        const xfer_rt_dset_t *d = dset_at(ch, ch->side, j);
        js->zlen[j] = js->zraw_len[j] = 0;
        js->zskip[j] = 0;
        if (zipped(d) && (sl->mask >> d->bit & 1u))
            XFER_CHECK_GOTO(zip_one(ch, js, j), st, out);
    }
out:
    return st;
}

void xfer_ch_zip_room(xfer_channel_t *ch, xfer_rt_jslot_t *js, int j, int r, int hit)
{
    const int k = 1 - ch->side;
    size_t *off = js->zoff + (size_t) j * ((size_t) ch->nremote + 1);
    if (r == 0) /* the first sending rank: the step's frames start over */
        off[0] = 0;
    off[r + 1] = off[r] + (hit ? (size_t) zbytes_at(ch, js->tab[k], k, r, j) : 0);
}

xfer_status_t xfer_ch_zip_reserve(xfer_channel_t *ch, xfer_rt_jslot_t *js, int j, size_t **off)
{
    const int k = 1 - ch->side;
    *off = js->zoff + (size_t) j * ((size_t) ch->nremote + 1);
    return grow(&js->zin[j], &js->zin_cap[j], (*off)[ch->nremote] + 8, ch, dset_at(ch, k, j));
}

/* Decode side @p k's rank @p r's frames of dataset @p j (@p n bytes at @p f) into this rank's
 * selection (js->land[j], box bs/bc). */
static xfer_status_t unzip_rank(xfer_channel_t *ch, xfer_rt_jslot_t *js, int j, int r,
                                const char *f, size_t n, int count)
{
    const int k = 1 - ch->side;
    const xfer_rt_dset_t *d = dset_at(ch, k, j);
    const int nd = d->cfg->ndims;
    const uint64_t *bs = js->bs + (size_t) j * XFER_MAX_DIMS,
                   *bc = js->bc + (size_t) j * XFER_MAX_DIMS;
    uint64_t ms[XFER_MAX_DIMS], mc[XFER_MAX_DIMS];
    xfer_codec_block_t blk = {d->cfg->type, nd, mc, 0, 0.0};
    xfer_status_t st = XFER_SUCCESS;
    size_t at = 0, len;
    int b;

    for (b = 0; b < xfer_ch_jnblk(ch, js->tab[k], k, r, j); b++) {
        xfer_ch_jbox(ch, js, k, j, r, b, ms, mc);
        blk.bytes = (size_t) xfer_ch_volume(nd, mc) * d->esize;
        XFER_CHECK_GOTO(xfer_codec_frame_bytes(f + at, n - at, &len), st, out);
        if (blk.bytes && memcmp(ms, bs, (size_t) nd * sizeof(uint64_t)) == 0 &&
            memcmp(mc, bc, (size_t) nd * sizeof(uint64_t)) == 0) {
            XFER_CHECK_GOTO(xfer_codec_decode(&blk, f + at, len, js->land[j]), st, out);
        } else if (blk.bytes) {
            XFER_CHECK_GOTO(grow(&js->zraw, &js->zraw_cap, blk.bytes, ch, d), st, out);
            XFER_CHECK_GOTO(xfer_codec_decode(&blk, f + at, len, js->zraw), st, out);
            xfer_ch_copy_box(js->land[j], bs, bc, js->zraw, ms, mc, nd, d->esize);
        }
        if (count) /* (the plan's steps count theirs as they start) */
            ch->stats.bytes_received += blk.bytes;
        at += PAD8(len);
    }
out:
    if (st != XFER_SUCCESS) {
        char why[512];
        snprintf(why, sizeof(why), "%s", xfer_last_error());
        return XFER_ERR(st, "channel %s: dataset %s: the frames of %s's rank %d: %s", ch->cfg->name,
                        d->cfg->name, xfer_ch_peer_name(ch), r, why);
    }
    return st;
}

/* Side @p k's rank @p r's blocks of dataset @p j that auto sent raw, as the plan brought them
 * (one after the other, each padded, at @p f), into this rank's selection. */
static void unraw_rank(xfer_channel_t *ch, xfer_rt_jslot_t *js, int j, int r, const char *f)
{
    const int k = 1 - ch->side;
    const xfer_rt_dset_t *d = dset_at(ch, k, j);
    const int nd = d->cfg->ndims;
    const uint64_t *bs = js->bs + (size_t) j * XFER_MAX_DIMS,
                   *bc = js->bc + (size_t) j * XFER_MAX_DIMS;
    uint64_t ms[XFER_MAX_DIMS], mc[XFER_MAX_DIMS];
    size_t at = 0;
    int b;
    for (b = 0; b < xfer_ch_jnblk(ch, js->tab[k], k, r, j); b++) {
        const uint64_t v = (xfer_ch_jbox(ch, js, k, j, r, b, ms, mc), xfer_ch_volume(nd, mc));
        if (v)
            xfer_ch_copy_box(js->land[j], bs, bc, f + at, ms, mc, nd, d->esize);
        at += PAD8((size_t) v * d->esize);
    }
}

xfer_status_t xfer_ch_zip_decode(xfer_channel_t *ch, xfer_rt_jslot_t *js)
{
    xfer_rt_joined_t *jn = ch->jn;
    const int k = 1 - ch->side;
    xfer_status_t st = XFER_SUCCESS;
    int j, r;
    if (!jn->zipped[k])
        return XFER_SUCCESS;
    for (j = 0; j < jn->nj[k]; j++) {
        const xfer_rt_dset_t *d = dset_at(ch, k, j);
        const size_t *off = js->zoff + (size_t) j * ((size_t) ch->nremote + 1);
        if (!zipped(d))
            continue;
        if (js->by_plan) { /* every rank's frames, where the plan put them, into the whole */
            const uint64_t *bc = js->bc + (size_t) j * XFER_MAX_DIMS;
            const size_t bytes = (size_t) xfer_ch_volume(d->cfg->ndims, bc) * d->esize;
            js->land[j] = d->bound && bytes <= d->bound_size ? d->bound : NULL;
            if (!js->land[j]) {
                XFER_CHECK_GOTO(
                    grow((char **) &js->sel[j], &js->sel_cap[j], bytes ? bytes : 8, ch, d), st,
                    out);
                js->land[j] = js->sel[j];
            }
            for (r = 0; r < ch->nremote; r++) {
                size_t n;
                const char *f = xfer_ch_jplan_at(ch, js, k, r, j, &n);
                if (zraw_at(ch, js->tab[k], k, r, j))
                    unraw_rank(ch, js, j, r, f);
                else if (n)
                    XFER_CHECK_GOTO(unzip_rank(ch, js, j, r, f, n, 0), st, out);
            }
            continue;
        }
        for (r = 0; r < ch->nremote; r++)
            if (off[r + 1] > off[r])
                XFER_CHECK_GOTO(
                    unzip_rank(ch, js, j, r, js->zin[j] + off[r], off[r + 1] - off[r], 1), st, out);
    }
out:
    return st;
}

void xfer_ch_zip_sent(xfer_channel_t *ch, xfer_rt_jslot_t *js)
{
    xfer_rt_joined_t *jn = ch->jn;
    const int k = ch->side;
    const double dt = xfer_now() - js->zt0;
    double wire = 0.0;
    int j;
    if (!jn->zipped[k] || !jn->za)
        return;
    /* the link as this rank's frames met it: their bytes over the time the step took to cross
     * from here (fan-out to several receivers and the siblings sharing the links included), the
     * rate a byte this rank saves is saved at; each rank compresses its own blocks */
    for (j = 0; j < jn->nj[k]; j++)
        wire += (double) (js->zskip[j] ? js->zraw_len[j] : js->zlen[j]);
    for (j = 0; j < jn->nj[k]; j++)
        if (dset_at(ch, k, j)->cfg->compression == XFER_COMPRESSION_AUTO)
            xfer_codec_auto_link(&jn->za[j], wire, dt);
}
