/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's datasets whose shape or blocks change every step (docs/runtime.md, "Joined
 * datasets", "Shapes that change" and "Several blocks per rank"; stream.h, xfer_rt_joined_t):
 * joined ones, whose rows change, variable ones, whose global shape and blocks change, and
 * fixed-shape ones with blocks: per_step, whose ranks' blocks change. They stay out of the
 * contributions the step 0 set-up lays out (their blocks there are empty) and move in a second
 * phase of each step's slot:
 *  - at its commit a sending rank posts a gather of every sibling's entry of the step (joined:
 *    its rows; variable: its shape and block, checked to agree and tile it; per_step: how many
 *    blocks, whose tiling the channel core checked at the commit, ch_blocks.c) on the side's own
 *    communicator; its slot starts only once the table is in, and rank 0 carries it after the
 *    step's attributes (tab_at of the attribute area, which reaches every receiving rank on
 *    every path); the per_step datasets' blocks themselves (their number changes) rank 0 sends
 *    every receiving rank in a message of their own, the box table, as the second phase
 *    starts;
 *  - once the fixed part of the step completed on a rank, every rank knows both sides' tables and
 *    every receiving rank's rule (its `selection`, or the rows it declared with xfer_select, as
 *    the set-up's geometry records carried them): each sending rank sends each receiving rank
 *    the rows of its share that it holds, straight from its put's copy, and each receiving rank
 *    receives them into its share of the step, on a communicator of the slot's own;
 *  - the slot is done when both phases are.
 * Every rank computes the same shares from the same tables, so every send has its receive.
 * This file holds the tables, the puts and the commit, and a receiving rank's step; the second
 * phase is stream_jmove.c's (its plan stream_jplan.c's, compressed datasets' frames
 * stream_zip.c's). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../coll/coll.h"
#include "stream_jtable.h"

xfer_status_t xfer_ch_joined_new(xfer_channel_t *ch)
{
    xfer_rt_joined_t *jn;
    int i, k, s, n[2] = {0, 0};

    for (i = 0; i < ch->nds; i++)
        n[xfer_ch_dset_side(ch, &ch->ds[i])] += xfer_ch_jroute(&ch->ds[i]);
    if (!n[0] && !n[1])
        return XFER_SUCCESS;
    if (!(jn = ch->jn = xfer_calloc(1, sizeof(*jn))))
        goto oom;
    jn->local = MPI_COMM_NULL;
    for (k = 0; k < 2; k++) {
        jn->nj[k] = n[k];
        if (!(jn->idx[k] = xfer_calloc((size_t) n[k] + 1, sizeof(int))) ||
            !(jn->woff[k] = xfer_calloc((size_t) n[k] + 1, sizeof(int))))
            goto oom;
        n[k] = 0;
    }
    for (i = 0; i < ch->nds; i++)
        if (xfer_ch_jroute(&ch->ds[i])) {
            k = xfer_ch_dset_side(ch, &ch->ds[i]);
            jn->woff[k][n[k]] = jn->W[k];
            jn->W[k] += entry_words(&ch->ds[i]);
            jn->idx[k][n[k]++] = i;
        }
    /* the tables ride in the attribute area of rank 0's contribution: room for either side's */
    jn->tab_at = ch->lay.attr_cap; /* (after the attributes' own room, attr_user) */
    for (k = 0; k < 2; k++) {
        const size_t t = (size_t) jn->W[k] * (size_t) side_ranks(ch, k) * sizeof(uint64_t);
        jn->tab_len = t > jn->tab_len ? t : jn->tab_len;
    }
    ch->lay.attr_cap += jn->tab_len;
    if (!(jn->js = xfer_calloc((size_t) ch->nslots, sizeof(*jn->js))) ||
        !(jn->comm = xfer_calloc((size_t) ch->nslots, sizeof(MPI_Comm))))
        goto oom;
    for (s = 0; s < ch->nslots; s++) {
        xfer_rt_jslot_t *js = &jn->js[s];
        jn->comm[s] = MPI_COMM_NULL;
        js->treq = MPI_REQUEST_NULL;
        js->breq = MPI_REQUEST_NULL;
        js->pcomm = MPI_COMM_NULL;
        if (!(js->rc = xfer_calloc((size_t) ch->nremote + 1, sizeof(int))) ||
            !(js->rd = xfer_calloc((size_t) ch->nremote + 1, sizeof(int))) ||
            !(js->lb = xfer_calloc((size_t) ch->nlocal + 1, sizeof(size_t))))
            goto oom;
        for (k = 0; k < 2; k++)
            if (!(js->tab[k] = xfer_calloc((size_t) jn->W[k] * (size_t) side_ranks(ch, k) + 1,
                                           sizeof(uint64_t))) ||
                !(js->pre[k] =
                      xfer_calloc((size_t) jn->nj[k] * ((size_t) side_ranks(ch, k) + 1) + 1,
                                  sizeof(uint64_t))) ||
                !(js->mo[k] = xfer_calloc((size_t) jn->nj[k] * (size_t) side_ranks(ch, k) + 1,
                                          sizeof(size_t))))
                goto oom;
        k = ch->side;
        if (!(js->blk = xfer_calloc((size_t) jn->nj[k] + 1, sizeof(void *))) ||
            !(js->blk_cap = xfer_calloc((size_t) jn->nj[k] + 1, sizeof(size_t))) ||
            !(js->from = xfer_calloc((size_t) jn->nj[k] + 1, sizeof(void *))) ||
            !(js->mine = xfer_calloc((size_t) jn->W[k] + 1, sizeof(uint64_t))) ||
            !(js->sel = xfer_calloc((size_t) jn->nj[1 - k] + 1, sizeof(void *))) ||
            !(js->sel_cap = xfer_calloc((size_t) jn->nj[1 - k] + 1, sizeof(size_t))) ||
            !(js->land = xfer_calloc((size_t) jn->nj[1 - k] + 1, sizeof(void *))) ||
            !(js->bs =
                  xfer_calloc(((size_t) jn->nj[1 - k] + 1) * XFER_MAX_DIMS, sizeof(uint64_t))) ||
            !(js->bc = xfer_calloc(((size_t) jn->nj[1 - k] + 1) * XFER_MAX_DIMS, sizeof(uint64_t))))
            goto oom;
    }
    return xfer_ch_zip_new(ch);
oom:
    return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: joined and variable datasets", ch->cfg->name);
}

/* When the channel forms (collective over both sides, and over this side for the gathers). */
xfer_status_t xfer_ch_joined_prepare(xfer_channel_t *ch)
{
    xfer_rt_joined_t *jn = ch->jn;
    xfer_status_t st = XFER_SUCCESS;
    int s;
    if (!jn)
        return XFER_SUCCESS;
    XFER_MPI_GOTO(MPI_Comm_dup(ch->ctl_local, &jn->local), st, out);
    for (s = 0; s < ch->nslots; s++) {
        XFER_MPI_GOTO(MPI_Comm_dup(ch->inter, &jn->comm[s]), st, out);
        XFER_MPI_GOTO(MPI_Comm_set_errhandler(jn->comm[s], MPI_ERRORS_RETURN), st, out);
    }
    XFER_CHECK_GOTO(xfer_ch_jplan_create(ch), st, out);
out:
    return st;
}

void xfer_ch_joined_free(xfer_channel_t *ch, int collective)
{
    xfer_rt_joined_t *jn = ch->jn;
    int s, j;
    if (!jn)
        return;
    for (s = 0; jn->js && s < ch->nslots; s++) {
        xfer_rt_jslot_t *js = &jn->js[s];
        for (j = 0; js->blk && j < jn->nj[ch->side]; j++)
            xfer_free(js->blk[j]);
        for (j = 0; js->sel && j < jn->nj[1 - ch->side]; j++)
            xfer_free(js->sel[j]);
        xfer_free(js->tab[0]);
        xfer_free(js->tab[1]);
        xfer_free(js->pre[0]);
        xfer_free(js->pre[1]);
        xfer_free(js->mb[0]);
        xfer_free(js->mb[1]);
        xfer_free(js->mo[0]);
        xfer_free(js->mo[1]);
        if (js->breq != MPI_REQUEST_NULL)
            MPI_Request_free(&js->breq); /* (abandoned by a failure) */
        xfer_free(js->blk);
        xfer_free(js->blk_cap);
        xfer_free((void *) js->from);
        xfer_free(js->mine);
        xfer_free(js->sel);
        xfer_free(js->sel_cap);
        xfer_free(js->land);
        xfer_free(js->bs);
        xfer_free(js->bc);
        xfer_free(js->req);
        if (collective && js->plan)
            xfer_plan_free(&js->plan);
        else
            xfer_plan_abandon(&js->plan);
        if (collective && js->pcomm != MPI_COMM_NULL)
            MPI_Comm_free(&js->pcomm);
        xfer_free(js->rc);
        xfer_free(js->rd);
        xfer_free(js->lb);
        xfer_free(js->rbuf);
        xfer_free(js->pack);
        xfer_ch_zip_free(ch, js);
        if (collective && jn->comm && jn->comm[s] != MPI_COMM_NULL)
            MPI_Comm_free(&jn->comm[s]);
    }
    if (collective && jn->local != MPI_COMM_NULL)
        MPI_Comm_free(&jn->local);
    xfer_free(jn->js);
    xfer_free(jn->comm);
    xfer_free(jn->idx[0]);
    xfer_free(jn->idx[1]);
    xfer_free(jn->woff[0]);
    xfer_free(jn->woff[1]);
    xfer_free(jn->za);
    xfer_free(jn);
    ch->jn = NULL;
}

/* ---- the set-up's records ------------------------------------------------------------------ */

xfer_status_t xfer_ch_joined_rule_in(xfer_channel_t *ch, xfer_rt_dset_t *d, int r, int nranks,
                                     const uint64_t *rec)
{
    const int nd = d->cfg->ndims;
    if (!d->jrule && !(d->jrule = xfer_calloc((size_t) nranks * 2 * (size_t) nd, sizeof(uint64_t))))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: dataset %s: selections", ch->cfg->name,
                        d->cfg->name);
    memcpy(d->jrule + (size_t) r * 2 * (size_t) nd, rec, 2 * (size_t) nd * sizeof(uint64_t));
    return XFER_SUCCESS;
}

/* ---- a sending rank's puts and commit ---------------------------------------------------- */

xfer_status_t xfer_ch_joined_stage(xfer_channel_t *ch, xfer_rt_slot_t *sl, xfer_rt_dset_t *d,
                                   const void *block, uint64_t v)
{
    xfer_rt_jslot_t *js = &ch->jn->js[sl - ch->slots];
    const int j = jindex(ch, d);
    const size_t bytes = (size_t) v * d->esize;
    /* a per_step dataset's block goes after the rank's others of the step (ch_blocks.c lays
     * them out: d->put) */
    const size_t at = per_step(d) && d->put.n && v ? d->put.pk[d->put.n - 1] : 0;
    if (d->bound) {
        /* sent from the caller's block (a bound dataset has one: ch_blocks.c), untouched until
         * xfer_step_end returns (xfer_ch_stream_sent); an empty put adds nothing */
        if (v > 0)
            js->from[j] = block;
        return XFER_SUCCESS;
    }
    if (js->blk_cap[j] < at + PAD8(bytes)) { /* (padded: a plan may send it whole) */
        void *nb = xfer_realloc_array(js->blk[j], at + PAD8(bytes), 1);
        if (!nb)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: dataset %s: %zu bytes of rows",
                            ch->cfg->name, d->cfg->name, at + bytes);
        js->blk[j] = nb;
        js->blk_cap[j] = at + PAD8(bytes);
    }
    if (bytes) {
        memcpy((char *) js->blk[j] + at, block, bytes);
        memset((char *) js->blk[j] + at + bytes, 0, PAD8(bytes) - bytes);
    }
    js->from[j] = js->blk[j];
    ch->stats.bytes_copied_in += bytes;
    return XFER_SUCCESS;
}

/* This rank's entries of the step (js->mine) from its puts. */
static void fill_mine(xfer_channel_t *ch, const xfer_rt_slot_t *sl, xfer_rt_jslot_t *js)
{
    const xfer_rt_joined_t *jn = ch->jn;
    const int k = ch->side;
    int j;
    for (j = 0; j < jn->nj[k]; j++) {
        const xfer_rt_dset_t *d = dset_at(ch, k, j);
        const int nd = d->cfg->ndims, put = sl->mask >> d->bit & 1u;
        uint64_t *x = js->mine + jn->woff[k][j];
        if (zipped(d)) /* its frames' bytes (xfer_ch_zip_commit), or raw */
            x[entry_words(d) - 1] = !put ? 0 : js->zskip[j] ? ZRAW : js->zlen[j];
        if (d->cfg->joined) {
            x[0] = put ? d->count[0] : NOT_PUT;
            continue;
        }
        memset(x, 0, (size_t) (entry_words(d) - zipped(d)) * sizeof(uint64_t));
        if (!put)
            continue;
        if (per_step(d)) { /* its blocks: the box table (xfer_ch_joined_commit) */
            x[0] = 1;
            x[1] = (uint64_t) d->put.n;
            x[2] = (uint64_t) (d->put.n ? d->put.pk[d->put.n] : 0);
            continue;
        }
        x[0] = 1;
        memcpy(x + 1, d->pdims, (size_t) nd * sizeof(uint64_t));
        memcpy(x + 1 + nd, d->start, (size_t) nd * sizeof(uint64_t));
        memcpy(x + 1 + 2 * nd, d->count, (size_t) nd * sizeof(uint64_t));
    }
}

/* Side @p k's step as the table says it, checked alike on every rank of the side: a joined
 * dataset within its max_rows, a variable one's shape agreed and tiled by its blocks. */
static xfer_status_t check_step(xfer_channel_t *ch, const xfer_rt_slot_t *sl,
                                const xfer_rt_jslot_t *js)
{
    const xfer_rt_joined_t *jn = ch->jn;
    const int k = ch->side;
    xfer_status_t st = XFER_SUCCESS;
    int j;
    for (j = 0; j < jn->nj[k]; j++) {
        const xfer_rt_dset_t *d = dset_at(ch, k, j);
        uint64_t dims[XFER_MAX_DIMS];
        if (per_step(d)) /* its tiling: the channel core's, at the commit (ch_blocks.c) */
            continue;
        if (d->cfg->variable) {
            XFER_CHECK_GOTO(xfer_ch_check_step_blocks(ch, d, k, ch->nlocal,
                                                      entry_at(ch, js->tab[k], k, 0, j),
                                                      (size_t) jn->W[k], sl->step, dims),
                            st, out);
            continue;
        }
        xfer_ch_jdims(ch, js, k, j, dims);
        if (d->cfg->max_rows && dims[0] > d->cfg->max_rows)
            return XFER_ERR(XFER_ERR_TOO_LARGE,
                            "channel %s: dataset %s: step %llu holds %llu rows in all, more than "
                            "its max_rows, %llu (the step is not committed: put fewer rows and "
                            "commit it again)",
                            ch->cfg->name, d->cfg->name, (unsigned long long) sl->step,
                            (unsigned long long) dims[0], (unsigned long long) d->cfg->max_rows);
    }
out:
    return st;
}

/* The side's box table of the step (its per_step datasets' blocks), from what the channel core
 * gathered at the commit (ch_blocks.c): rank by rank, each dataset's blocks. */
static xfer_status_t box_table(xfer_channel_t *ch, xfer_rt_jslot_t *js)
{
    const xfer_rt_joined_t *jn = ch->jn;
    const int k = ch->side, nj = jn->nj[k];
    const size_t words = xfer_ch_jbox_words(ch, js, k);
    int r, j, n;
    if (!words)
        return XFER_SUCCESS;
    if (js->mb_cap[k] < words) {
        uint64_t *nb = xfer_realloc_array(js->mb[k], words, sizeof(uint64_t));
        if (!nb)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: %zu words of blocks", ch->cfg->name,
                            words);
        js->mb[k] = nb;
        js->mb_cap[k] = words;
    }
    for (r = 0; r < ch->nlocal; r++)
        for (j = 0; j < nj; j++) {
            const xfer_rt_dset_t *d = dset_at(ch, k, j);
            const uint64_t *x;
            if (!per_step(d))
                continue;
            x = xfer_ch_gathered(ch, jn->idx[k][j], r, &n);
            if (n != xfer_ch_jnblk(ch, js->tab[k], k, r, j))
                return XFER_ERR(XFER_ERR_INTERNAL,
                                "channel %s: dataset %s: rank %d's blocks: %d gathered, %d in the "
                                "step's table",
                                ch->cfg->name, d->cfg->name, r, n,
                                xfer_ch_jnblk(ch, js->tab[k], k, r, j));
            if (n)
                memcpy(js->mb[k] + js->mo[k][(size_t) r * (size_t) nj + (size_t) j], x,
                       (size_t) n * 2 * (size_t) d->cfg->ndims * sizeof(uint64_t));
        }
    return XFER_SUCCESS;
}

/* Before a sending rank commits a step: every sibling's entries of the step (a gather waited for
 * in the one wait loop, every channel moving), checked alike on every rank, so that a step that
 * fails is refused before anything is sent and the ranks may put it right and commit again. The
 * commit is collective over the side's ranks already. */
int xfer_ch_joined_side_commit(const xfer_channel_t *ch)
{
    return ch->jn && ch->jn->nj[ch->side] > 0;
}

xfer_status_t xfer_ch_joined_commit(xfer_channel_t *ch, xfer_rt_slot_t *sl)
{
    xfer_rt_joined_t *jn = ch->jn;
    xfer_rt_jslot_t *js;
    xfer_status_t st = XFER_SUCCESS;
    int met;
    if (!jn || !jn->nj[ch->side])
        return XFER_SUCCESS;
    js = &jn->js[sl - ch->slots];
    XFER_CHECK_GOTO(xfer_ch_zip_commit(ch, sl, js), st, out);
    fill_mine(ch, sl, js);
    XFER_MPI_GOTO(MPI_Iallgather(js->mine, jn->W[ch->side], MPI_UINT64_T, js->tab[ch->side],
                                 jn->W[ch->side], MPI_UINT64_T, jn->local, &js->treq),
                  st, out);
    {
        const xfer_ch_wait_t w = {.cond = xfer_ch_req_done,
                                  .arg = &js->treq,
                                  .what = "gathering this side's rows and shapes",
                                  .until = HUGE_VAL,
                                  .need = UINT64_MAX,
                                  .resumable = 0,
                                  .force = 0,
                                  .side = 1};
        XFER_CHECK_GOTO(xfer_ch_wait(ch, &w, &met), st, out);
    }
    xfer_ch_jprefix(ch, js, ch->side);
    XFER_CHECK_GOTO(check_step(ch, sl, js), st, out);
    XFER_CHECK_GOTO(box_table(ch, js), st, out);
    js->state = J_READY;
out:
    return st;
}

/* Rank 0 carries its side's table after the step's attributes (its contribution exists now). */
void xfer_ch_joined_table_out(xfer_channel_t *ch, xfer_rt_slot_t *sl)
{
    xfer_rt_joined_t *jn = ch->jn;
    if (!jn || !jn->nj[ch->side] || ch->me != 0 || !sl->sbuf)
        return;
    memcpy(sl->sbuf + sizeof(xfer_rt_hdr_t) + jn->tab_at, jn->js[sl - ch->slots].tab[ch->side],
           (size_t) jn->W[ch->side] * (size_t) ch->nlocal * sizeof(uint64_t));
}

/* ---- a receiving rank's step ----------------------------------------------------------------- */

void xfer_ch_joined_shape(xfer_channel_t *ch, uint64_t s)
{
    xfer_rt_joined_t *jn = ch->jn;
    const int k = 1 - ch->side;
    xfer_rt_jslot_t *js;
    int j, r;
    if (!jn || !jn->nj[k])
        return;
    js = &jn->js[xfer_ch_slot_of(ch, s) - ch->slots];
    for (j = 0; j < jn->nj[k]; j++) {
        xfer_rt_dset_t *d = &ch->ds[jn->idx[k][j]];
        const int nd = d->cfg->ndims;
        if (d->sstep == s)
            continue;
        for (r = 0; d->cfg->joined && r < ch->nremote; r++)
            d->srows[r] = rows_at(ch, js->tab[k], k, r, j);
        xfer_ch_jdims(ch, js, k, j, d->sdims);
        memcpy(d->sel_start, js->bs + (size_t) j * XFER_MAX_DIMS, (size_t) nd * sizeof(uint64_t));
        memcpy(d->sel_count, js->bc + (size_t) j * XFER_MAX_DIMS, (size_t) nd * sizeof(uint64_t));
        d->sstep = s;
    }
}

xfer_status_t xfer_ch_joined_fetch(xfer_channel_t *ch, xfer_rt_dset_t *ds, const uint64_t *start,
                                   const uint64_t *count, void *buf, uint64_t bytes, uint64_t s)
{
    const xfer_rt_jslot_t *js = &ch->jn->js[xfer_ch_slot_of(ch, s) - ch->slots];
    const int j = jindex(ch, ds), k = xfer_ch_dset_side(ch, ds);
    const int plan = js->by_plan && !zipped(ds); /* (compressed: decoded into land[j]) */
    int r, put = 0;
    for (r = 0; r < ch->nremote; r++)
        put |= put_by(ch, js->tab[k], k, r, j);
    if (!put)
        return XFER_ERR(XFER_ERR_NOT_FOUND, "channel %s: %s did not put dataset %s in step %llu",
                        ch->cfg->name, xfer_ch_peer_name(ch), ds->cfg->name,
                        (unsigned long long) s);
    if (bytes == 0)
        return XFER_SUCCESS;
    /* the whole selection into the buffer it landed in (a bound one): nothing to copy */
    if (buf == (plan ? (const void *) js->rland : js->land[j]) &&
        memcmp(start, ds->sel_start, (size_t) ds->cfg->ndims * sizeof(uint64_t)) == 0 &&
        memcmp(count, ds->sel_count, (size_t) ds->cfg->ndims * sizeof(uint64_t)) == 0)
        return XFER_SUCCESS;
    if (plan)
        xfer_ch_jplan_fetch(ch, js, ds, start, count, buf);
    else
        xfer_ch_copy_box(buf, start, count, js->land[j], ds->sel_start, ds->sel_count,
                         ds->cfg->ndims, ds->esize);
    ch->stats.bytes_copied_out += bytes;
    return XFER_SUCCESS;
}
