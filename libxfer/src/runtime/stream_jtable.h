/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's datasets whose shape changes every step (joined and variable): the tables'
 * accessors, shared by stream_joined.c (the second phase of each slot, point to point) and
 * stream_jplan.c (its allgatherv plans), which calls nothing of stream_joined.c back. */
#ifndef XFER_RT_STREAM_JTABLE_H
#define XFER_RT_STREAM_JTABLE_H

#include <string.h>

#include "stream.h"

#define PAD8(b) (((b) + 7) & ~(size_t) 7)

enum { J_IDLE = 0, J_GATHER, J_READY, J_BOXES, J_MOVING, J_DONE };

/* The rows of one joined dataset's row (elements past the first dimension) in bytes. */
static inline size_t row_bytes(const xfer_rt_dset_t *d)
{
    return (size_t) xfer_ch_volume(d->cfg->ndims - 1, d->cfg->dims + 1) * d->esize;
}

static inline int side_ranks(const xfer_channel_t *ch, int k)
{
    return k == ch->side ? ch->nlocal : ch->nremote;
}

/* The table (stream.h, xfer_rt_jslot_t): side @p k's rank @p r's entry of its dataset @p j. */
#define NOT_PUT UINT64_MAX
static inline const uint64_t *entry_at(const xfer_channel_t *ch, const uint64_t *tab, int k, int r,
                                       int j)
{
    return tab + (size_t) r * (size_t) ch->jn->W[k] + (size_t) ch->jn->woff[k][j];
}

static inline const xfer_rt_dset_t *dset_at(const xfer_channel_t *ch, int k, int j)
{
    return &ch->ds[ch->jn->idx[k][j]];
}

/* Is @p d a fixed-shape dataset whose blocks change every step (blocks: per_step)? Its entry:
 * put, its number of blocks, their bytes one after the other (each padded to 8); the blocks
 * themselves travel in the slot's box table (js->mb). */
static inline int per_step(const xfer_rt_dset_t *d)
{
    return !d->dyn;
}

/* Is @p d compressed (stream_zip.c)? Its entry ends with its frames' bytes. */
static inline int zipped(const xfer_rt_dset_t *d)
{
    return d->cfg->compression != XFER_COMPRESSION_NONE;
}

/* The words of @p d's entry: joined, its rows; variable, put, dims, start and count; per_step,
 * put, blocks and bytes; compressed, then its frames' bytes. */
static inline int entry_words(const xfer_rt_dset_t *d)
{
    return (d->cfg->joined ? 1 : d->cfg->variable ? 1 + 3 * d->cfg->ndims : 3) + zipped(d);
}

/* Did side @p k's rank @p r put its dataset @p j in the step? */
static inline int put_by(const xfer_channel_t *ch, const uint64_t *tab, int k, int r, int j)
{
    const uint64_t x = *entry_at(ch, tab, k, r, j);
    return dset_at(ch, k, j)->cfg->joined ? x != NOT_PUT : x != 0;
}

/* Side @p k's rank @p r's rows of its joined dataset @p j (0 when it did not put it). */
static inline uint64_t rows_at(const xfer_channel_t *ch, const uint64_t *tab, int k, int r, int j)
{
    const uint64_t n = *entry_at(ch, tab, k, r, j);
    return n == NOT_PUT ? 0 : n;
}

/* A compressed dataset's entry ends with its frames' bytes, or ZRAW: `auto` sent the rank's blocks
 * of the step as they are, as an uncompressed dataset's (no frame, no copy). */
#define ZRAW UINT64_MAX

/* Did side @p k's rank @p r send its blocks of its compressed dataset @p j raw in the step? */
static inline int zraw_at(const xfer_channel_t *ch, const uint64_t *tab, int k, int r, int j)
{
    const xfer_rt_dset_t *d = dset_at(ch, k, j);
    return put_by(ch, tab, k, r, j) && entry_at(ch, tab, k, r, j)[entry_words(d) - 1] == ZRAW;
}

/* Side @p k's rank @p r's frames' bytes of its compressed dataset @p j (0: it put none, or sent
 * it raw). */
static inline uint64_t zbytes_at(const xfer_channel_t *ch, const uint64_t *tab, int k, int r, int j)
{
    const xfer_rt_dset_t *d = dset_at(ch, k, j);
    const uint64_t n =
        put_by(ch, tab, k, r, j) ? entry_at(ch, tab, k, r, j)[entry_words(d) - 1] : 0;
    return n == ZRAW ? 0 : n;
}

/* Which of side @p k's datasets of changing shape @p d is (its index in jn->idx[k]). */
static inline int jindex(const xfer_channel_t *ch, const xfer_rt_dset_t *d)
{
    const xfer_rt_joined_t *jn = ch->jn;
    const int k = xfer_ch_dset_side(ch, d), i = (int) (d - ch->ds);
    int j;
    for (j = 0; j < jn->nj[k]; j++)
        if (jn->idx[k][j] == i)
            return j;
    return -1;
}

/* Side @p k's table of the slot arrived (js->tab[k]): the rows of each of its joined datasets
 * before each rank and in all (js->pre[k]), once per step, so that a rank's block and the step's
 * shape below read them instead of summing the table again (linear per step, not quadratic). */
/* Side @p k's rank @p r's blocks of its dataset @p j in the slot's step: a joined or variable
 * dataset's one (maybe empty), a per_step one's as many as its entry says. */
static inline int xfer_ch_jnblk(const xfer_channel_t *ch, const uint64_t *tab, int k, int r, int j)
{
    const uint64_t *x = entry_at(ch, tab, k, r, j);
    if (!per_step(dset_at(ch, k, j)))
        return 1;
    return x[0] ? (int) x[1] : 0;
}

static inline void xfer_ch_jprefix(const xfer_channel_t *ch, xfer_rt_jslot_t *js, int k)
{
    const int n = side_ranks(ch, k), nj = ch->jn->nj[k];
    size_t o = 0;
    int j, r;
    for (j = 0; j < nj; j++) {
        uint64_t *p = js->pre[k] + (size_t) j * ((size_t) n + 1);
        if (!dset_at(ch, k, j)->cfg->joined)
            continue;
        p[0] = 0;
        for (r = 0; r < n; r++)
            p[r + 1] = p[r] + rows_at(ch, js->tab[k], k, r, j);
    }
    for (r = 0; r < n; r++) /* the per_step datasets' blocks in the box table, rank by rank */
        for (j = 0; j < nj; j++) {
            const xfer_rt_dset_t *d = dset_at(ch, k, j);
            js->mo[k][(size_t) r * (size_t) nj + (size_t) j] = o;
            if (per_step(d))
                o += (size_t) xfer_ch_jnblk(ch, js->tab[k], k, r, j) * 2 * (size_t) d->cfg->ndims;
        }
    js->mo[k][(size_t) n * (size_t) nj] = o;
}

/* The words of side @p k's box table in the slot's step (0: no per_step dataset, or no block). */
static inline size_t xfer_ch_jbox_words(const xfer_channel_t *ch, const xfer_rt_jslot_t *js, int k)
{
    return js->mo[k][(size_t) side_ranks(ch, k) * (size_t) ch->jn->nj[k]];
}

/* Side @p k's joined dataset @p j: the rows of its ranks below @p r (r = side_ranks: all). */
static inline uint64_t rows_before(const xfer_channel_t *ch, const xfer_rt_jslot_t *js, int k,
                                   int j, int r)
{
    return js->pre[k][(size_t) j * ((size_t) side_ranks(ch, k) + 1) + (size_t) r];
}

/* The global shape of side @p k's dataset @p j in the slot's step (joined: the rows of every
 * rank; variable: the shape its senders agreed on, zeros when none put it). */
static inline void xfer_ch_jdims(const xfer_channel_t *ch, const xfer_rt_jslot_t *js, int k, int j,
                                 uint64_t *dims)
{
    const xfer_rt_dset_t *d = dset_at(ch, k, j);
    const int nd = d->cfg->ndims;
    int r;
    if (d->cfg->joined) {
        memcpy(dims, d->cfg->dims, (size_t) nd * sizeof(uint64_t));
        dims[0] = rows_before(ch, js, k, j, side_ranks(ch, k));
        return;
    }
    if (per_step(d)) { /* a fixed shape */
        memcpy(dims, d->cfg->dims, (size_t) nd * sizeof(uint64_t));
        return;
    }
    memset(dims, 0, (size_t) nd * sizeof(uint64_t));
    for (r = 0; r < side_ranks(ch, k); r++) /* (its senders agreed: checked at their commit) */
        if (put_by(ch, js->tab[k], k, r, j)) {
            memcpy(dims, entry_at(ch, js->tab[k], k, r, j) + 1, (size_t) nd * sizeof(uint64_t));
            return;
        }
}

/* Side @p k's rank @p r's block of its dataset @p j in the slot's step (empty when it put none). */
static inline void xfer_ch_jblock(const xfer_channel_t *ch, const xfer_rt_jslot_t *js, int k, int j,
                                  int r, uint64_t *bs, uint64_t *bc)
{
    const xfer_rt_dset_t *d = dset_at(ch, k, j);
    const int nd = d->cfg->ndims;
    const uint64_t *x = entry_at(ch, js->tab[k], k, r, j);
    memset(bs, 0, (size_t) nd * sizeof(uint64_t));
    memset(bc, 0, (size_t) nd * sizeof(uint64_t));
    if (d->cfg->joined) { /* rows of whole rows, after the lower ranks' */
        memcpy(bc, d->cfg->dims, (size_t) nd * sizeof(uint64_t));
        bc[0] = rows_at(ch, js->tab[k], k, r, j);
        bs[0] = rows_before(ch, js, k, j, r);
    } else if (x[0]) {
        memcpy(bs, x + 1 + nd, (size_t) nd * sizeof(uint64_t));
        memcpy(bc, x + 1 + 2 * nd, (size_t) nd * sizeof(uint64_t));
    }
}

/* Side @p k's rank @p r's block @p b of its dataset @p j in the slot's step (xfer_ch_jnblk of
 * them): a per_step dataset's from the box table, the others' as xfer_ch_jblock says. */
static inline void xfer_ch_jbox(const xfer_channel_t *ch, const xfer_rt_jslot_t *js, int k, int j,
                                int r, int b, uint64_t *bs, uint64_t *bc)
{
    const xfer_rt_dset_t *d = dset_at(ch, k, j);
    const int nd = d->cfg->ndims;
    const uint64_t *x;
    if (!per_step(d)) {
        xfer_ch_jblock(ch, js, k, j, r, bs, bc);
        return;
    }
    x = js->mb[k] + js->mo[k][(size_t) r * (size_t) ch->jn->nj[k] + (size_t) j] +
        (size_t) b * 2 * (size_t) nd;
    memcpy(bs, x, (size_t) nd * sizeof(uint64_t));
    memcpy(bc, x + nd, (size_t) nd * sizeof(uint64_t));
}

/* stream_zip.c: compressed datasets (docs/runtime.md, "Compression") */
xfer_status_t xfer_ch_zip_new(xfer_channel_t *ch);
void xfer_ch_zip_free(xfer_channel_t *ch, xfer_rt_jslot_t *js);
/* A sending rank's commit: its frames of each compressed dataset it put, from its blocks. */
xfer_status_t xfer_ch_zip_commit(xfer_channel_t *ch, xfer_rt_slot_t *sl, xfer_rt_jslot_t *js);
/* Receiving, point to point: for each sending rank @p r in turn, room for its frames of dataset
 * @p j when they come (@p hit: one of its blocks meets this rank's selection); then the room
 * itself, rank r's frames at js->zin[j] + (*@p off)[r] up to (*@p off)[r + 1] (the receives are
 * posted once the buffer no longer moves). */
void xfer_ch_zip_room(xfer_channel_t *ch, xfer_rt_jslot_t *js, int j, int r, int hit);
xfer_status_t xfer_ch_zip_reserve(xfer_channel_t *ch, xfer_rt_jslot_t *js, int j, size_t **off);
/* Receiving, once the step's frames arrived (by the plan when @p by_plan): each decoded into
 * this rank's selection. */
xfer_status_t xfer_ch_zip_decode(xfer_channel_t *ch, xfer_rt_jslot_t *js);
/* Sending: the step's second phase ended on this rank (auto's link rate). */
void xfer_ch_zip_sent(xfer_channel_t *ch, xfer_rt_jslot_t *js);

/* stream_jplan.c */
xfer_status_t xfer_ch_jplan_create(xfer_channel_t *ch);
/* The step by the slot's plan when it carries it (*ok), receivers' boxes set to every row. */
xfer_status_t xfer_ch_jplan_step(xfer_channel_t *ch, xfer_rt_jslot_t *js, int *ok);
/* Where side @p k's rank @p r's bytes of its dataset @p j landed by the plan, and how many. */
const char *xfer_ch_jplan_at(const xfer_channel_t *ch, const xfer_rt_jslot_t *js, int k, int r,
                             int j, size_t *bytes);
/* Receiving: the box of dataset @p ds of the step the plan brought, into @p buf. */
void xfer_ch_jplan_fetch(xfer_channel_t *ch, const xfer_rt_jslot_t *js, xfer_rt_dset_t *ds,
                         const uint64_t *start, const uint64_t *count, void *buf);

#endif /* XFER_RT_STREAM_JTABLE_H */
