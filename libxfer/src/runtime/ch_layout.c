/* SPDX-License-Identifier: BSD-3-Clause */
/* Geometry of a channel's datasets, whatever its transport: which sides send, names for
 * messages, boxes, the tiling check of a step's blocks and the copy of a block's part inside a
 * selection. The stream's layout of its contributions is stream_layout.c. */
#include <stdio.h>
#include <string.h>

#include "channel.h"

int xfer_ch_this_sends(const xfer_channel_t *ch)
{
    return ch->sends[ch->side];
}

int xfer_ch_this_recvs(const xfer_channel_t *ch)
{
    return ch->sends[1 - ch->side];
}

const char *xfer_ch_side_name(const xfer_channel_t *ch, int side)
{
    const xfer_config_t *c = ch->x->cfg;
    return c->components[side == 0 ? ch->cfg->from : ch->cfg->to].name;
}

const char *xfer_ch_peer_name(const xfer_channel_t *ch)
{
    return xfer_ch_side_name(ch, 1 - ch->side);
}

uint64_t xfer_ch_volume(int nd, const uint64_t *count)
{
    uint64_t v = 1;
    int d;
    for (d = 0; d < nd; d++)
        v *= count[d];
    return v;
}

void xfer_ch_fmt_box(char *buf, size_t len, int nd, const uint64_t *start, const uint64_t *count)
{
    size_t o = 0;
    int d;
    o += (size_t) snprintf(buf + o, len - o, "[");
    for (d = 0; d < nd && o < len; d++)
        o += (size_t) snprintf(buf + o, len - o, "%s%llu:%llu", d ? ", " : "",
                               (unsigned long long) start[d],
                               (unsigned long long) (start[d] + count[d]));
    if (o < len)
        snprintf(buf + o, len - o, "]");
}

/* ---- tilings -------------------------------------------------------------------------------- */

/* "2, 2, 1, 0": each rank's blocks, of at most 16 ranks. */
static void per_rank(char *buf, size_t len, const xfer_tiles_t *t)
{
    size_t o = 0;
    int r;
    buf[0] = '\0';
    for (r = 0; r < t->nranks && r < 16 && o < len; r++)
        o += (size_t) snprintf(buf + o, len - o, "%s%zu", r ? ", " : "",
                               t->first[r + 1] - t->first[r]);
    if (t->nranks > 16 && o < len)
        snprintf(buf + o, len - o, ", ...");
}

xfer_status_t xfer_ch_check_tiling(const xfer_channel_t *ch, const xfer_rt_dset_t *d, int k,
                                   uint64_t step, const xfer_tiles_t *t)
{
    const int nd = t->nd;
    xfer_tile_fault_t f;
    char b1[600], b2[200], b3[300], per[200];

    switch (xfer_tiles_check(t, &f)) {
    case XFER_TILE_OK:
        return XFER_SUCCESS;
    case XFER_TILE_OVERLAP:
        xfer_ch_fmt_box(b1, sizeof(b1), nd, t->start + f.a * nd, t->count + f.a * nd);
        xfer_ch_fmt_box(b2, sizeof(b2), nd, t->start + f.b * nd, t->count + f.b * nd);
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s: step %llu: the block %s of rank %d of %s "
                        "overlaps the block %s of rank %d (each element must belong to exactly one "
                        "block)",
                        ch->cfg->name, d->cfg->name, (unsigned long long) step, b1, f.ra,
                        xfer_ch_side_name(ch, k), b2, f.rb);
    default:
        break;
    }
    per_rank(per, sizeof(per), t);
    b1[0] = b3[0] = '\0';
    if (f.hole_known) {
        xfer_ch_fmt_box(b2, sizeof(b2), nd, f.hs, f.hc);
        if (f.rn >= 0) {
            char nb[200];
            xfer_ch_fmt_box(nb, sizeof(nb), nd, t->start + f.n * nd, t->count + f.n * nd);
            snprintf(b3, sizeof(b3), ", beside the block %s of rank %d", nb, f.rn);
        }
        snprintf(b1, sizeof(b1), "the first hole is %s (%llu elements)%s", b2,
                 (unsigned long long) xfer_ch_volume(nd, f.hc), b3);
    } else {
        snprintf(b1, sizeof(b1), "the holes could not be looked for (out of memory)");
    }
    return XFER_ERR(XFER_ERR_INVALID_ARG,
                    "channel %s: dataset %s: step %llu: the blocks of %s's %d ranks hold %llu of "
                    "its %llu elements (each element must belong to exactly one block): %s; "
                    "blocks per rank: %s",
                    ch->cfg->name, d->cfg->name, (unsigned long long) step,
                    xfer_ch_side_name(ch, k), t->nranks, (unsigned long long) f.covered,
                    (unsigned long long) f.whole, b1, per);
}

/* ---- setup: geometry of every sending rank, contributions, plans --------------------------- */

int xfer_ch_dset_side(const xfer_channel_t *ch, const xfer_rt_dset_t *d)
{
    return d->cfg->from == ch->cfg->from ? 0 : 1;
}

/* Copy the part of a block inside a selection: @p src holds the block (start bs, count bc,
 * contiguous), @p dst the selection (start ss, count sc, contiguous). */
void xfer_ch_copy_box(char *dst, const uint64_t *ss, const uint64_t *sc, const char *src,
                      const uint64_t *bs, const uint64_t *bc, int nd, size_t esize)
{
    uint64_t lo[XFER_MAX_DIMS] = {0}, n[XFER_MAX_DIMS] = {0}, idx[XFER_MAX_DIMS] = {0};
    size_t sstride[XFER_MAX_DIMS] = {0}, dstride[XFER_MAX_DIMS] = {0}, run;
    int d, inner;

    for (d = 0; d < nd; d++) {
        uint64_t a = XFER_MAX(ss[d], bs[d]);
        uint64_t b = XFER_MIN(ss[d] + sc[d], bs[d] + bc[d]);
        if (b <= a)
            return; /* disjoint */
        lo[d] = a;
        n[d] = b - a;
        idx[d] = 0;
    }
    sstride[nd - 1] = dstride[nd - 1] = esize;
    for (d = nd - 2; d >= 0; d--) {
        sstride[d] = sstride[d + 1] * (size_t) bc[d + 1];
        dstride[d] = dstride[d + 1] * (size_t) sc[d + 1];
    }
    /* Merge trailing dimensions that are whole in both boxes into one contiguous run. */
    inner = nd - 1;
    run = (size_t) n[nd - 1] * esize;
    while (inner > 0 && n[inner] == bc[inner] && n[inner] == sc[inner]) {
        inner--;
        run *= (size_t) n[inner];
    }
    for (;;) {
        size_t so = 0, doff = 0;
        for (d = 0; d < inner; d++) {
            so += (size_t) (lo[d] - bs[d] + idx[d]) * sstride[d];
            doff += (size_t) (lo[d] - ss[d] + idx[d]) * dstride[d];
        }
        so += (size_t) (lo[inner] - bs[inner]) * sstride[inner];
        doff += (size_t) (lo[inner] - ss[inner]) * dstride[inner];
        for (d = inner + 1; d < nd; d++) {
            so += (size_t) (lo[d] - bs[d]) * sstride[d];
            doff += (size_t) (lo[d] - ss[d]) * dstride[d];
        }
        memcpy(dst + doff, src + so, run);
        for (d = inner - 1; d >= 0; d--) {
            if (++idx[d] < n[d])
                break;
            idx[d] = 0;
        }
        if (d < 0)
            break;
    }
}

/* One step of a dataset of variable shape (docs/runtime.md, "Shapes that change"): the records of
 * side @p k's @p nranks ranks, rec[r * stride] = {put, dims[nd], start[nd], count[nd]}. The
 * ranks that put it agree on its shape (into @p dims; zeros when none put it), and their blocks
 * tile it exactly. The same verdict, in the same words, on every rank that has the records. */
xfer_status_t xfer_ch_check_step_blocks(const xfer_channel_t *ch, const xfer_rt_dset_t *d, int k,
                                        int nranks, const uint64_t *rec, size_t stride,
                                        uint64_t step, uint64_t *dims)
{
    const int nd = d->cfg->ndims;
    const size_t w = stride;
    const uint64_t *first = NULL;
    uint64_t covered = 0, whole;
    char b1[200], b2[200];
    int r, e, r0 = -1;

    memset(dims, 0, (size_t) nd * sizeof(uint64_t));
    for (r = 0; r < nranks; r++) {
        const uint64_t *x = rec + (size_t) r * w;
        if (!x[0])
            continue;
        if (!first) {
            first = x;
            r0 = r;
            memcpy(dims, x + 1, (size_t) nd * sizeof(uint64_t));
        } else if (memcmp(x + 1, first + 1, (size_t) nd * sizeof(uint64_t)) != 0) {
            uint64_t z[XFER_MAX_DIMS] = {0};
            xfer_ch_fmt_box(b1, sizeof(b1), nd, z, x + 1);
            xfer_ch_fmt_box(b2, sizeof(b2), nd, z, first + 1);
            return XFER_ERR(XFER_ERR_MISMATCH,
                            "channel %s: dataset %s: step %llu: rank %d of %s puts it with shape "
                            "%s, rank %d with %s (the senders of a variable shape agree on it "
                            "each step)",
                            ch->cfg->name, d->cfg->name, (unsigned long long) step, r,
                            xfer_ch_side_name(ch, k), b1, r0, b2);
        }
    }
    for (r = 0; first && r < nranks; r++) {
        const uint64_t *x = rec + (size_t) r * w, *s = x + 1 + nd, *c = s + nd;
        const uint64_t v = x[0] ? xfer_ch_volume(nd, c) : 0;
        covered += v;
        for (e = 0; e < r && v > 0; e++) { /* blocks must not overlap */
            const uint64_t *y = rec + (size_t) e * w, *s2 = y + 1 + nd, *c2 = s2 + nd;
            int dd, disjoint = 0;
            if (!y[0] || xfer_ch_volume(nd, c2) == 0)
                continue;
            for (dd = 0; dd < nd; dd++)
                if (s[dd] + c[dd] <= s2[dd] || s2[dd] + c2[dd] <= s[dd])
                    disjoint = 1;
            if (!disjoint) {
                xfer_ch_fmt_box(b1, sizeof(b1), nd, s, c);
                xfer_ch_fmt_box(b2, sizeof(b2), nd, s2, c2);
                return XFER_ERR(XFER_ERR_INVALID_ARG,
                                "channel %s: dataset %s: step %llu: the block of %s rank %d %s "
                                "overlaps the block of rank %d %s",
                                ch->cfg->name, d->cfg->name, (unsigned long long) step,
                                xfer_ch_side_name(ch, k), r, b1, e, b2);
            }
        }
    }
    whole = xfer_ch_volume(nd, dims);
    if (first && covered != whole) {
        uint64_t z[XFER_MAX_DIMS] = {0};
        xfer_ch_fmt_box(b1, sizeof(b1), nd, z, dims);
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s: step %llu: the blocks of %s's %d ranks hold %llu "
                        "of the %llu elements of its shape %s (each element must belong to "
                        "exactly one rank's block)",
                        ch->cfg->name, d->cfg->name, (unsigned long long) step,
                        xfer_ch_side_name(ch, k), nranks, (unsigned long long) covered,
                        (unsigned long long) whole, b1);
    }
    return XFER_SUCCESS;
}
