/* SPDX-License-Identifier: BSD-3-Clause */
/* Several blocks per rank and step (docs/runtime.md, "Several blocks per rank"), whatever the
 * transport: each xfer_put of a fixed-shape dataset in a step adds a block of the rank that puts
 * it. A put that overlaps a block put before in the step fails at once (nothing is added); with
 * `blocks: fixed` a put after the first step must be one of that step's blocks of the rank. At
 * the commit, before the transport sends anything, the side's ranks gather the blocks they must
 * check (every `blocks: per_step` dataset, and the fixed ones at the first commit) and each
 * checks that they tile the dataset (tile.h): the same verdict on every rank. A step refused
 * forgets the puts of the dataset at fault, and is not committed: the ranks put it again and
 * commit again. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "channel.h"

#define PAD8(b) (((b) + 7) & ~(size_t) 7)

static int per_step(const xfer_rt_dset_t *d)
{
    return d->cfg->blocks == XFER_BLOCKS_PER_STEP;
}

/* Are @p d's blocks gathered at every commit: blocks: per_step, or compressed (its blocks, fixed
 * or not, travel as each step's own: stream.h, xfer_ch_jroute)? */
static int gathered_always(const xfer_channel_t *ch, const xfer_rt_dset_t *d)
{
    return per_step(d) || xfer_ch_zipped(ch, d);
}

/* A fixed-shape dataset this side sends: its blocks are the core's. */
static int blocky(const xfer_channel_t *ch, const xfer_rt_dset_t *d)
{
    return xfer_ch_dset_side(ch, d) == ch->side && !d->dyn;
}

static xfer_status_t grow(xfer_rt_blocks_t *l, int nd)
{
    const int cap = l->cap ? 2 * l->cap : 4;
    uint64_t *box = xfer_realloc_array(l->box, (size_t) cap * 2 * (size_t) nd, sizeof(uint64_t));
    size_t *pk, *at;
    int *of;
    if (box)
        l->box = box;
    pk = box ? xfer_realloc_array(l->pk, (size_t) cap + 1, sizeof(size_t)) : NULL;
    if (pk)
        l->pk = pk;
    at = pk ? xfer_realloc_array(l->at, (size_t) cap, sizeof(size_t)) : NULL;
    if (at)
        l->at = at;
    of = at ? xfer_realloc_array(l->of, (size_t) cap, sizeof(int)) : NULL;
    if (!of)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "%d blocks", cap);
    l->of = of;
    if (!l->cap)
        l->pk[0] = 0;
    l->cap = cap;
    return XFER_SUCCESS;
}

static void forget(xfer_rt_blocks_t *l)
{
    l->n = 0;
    l->vol = 0;
    if (l->pk)
        l->pk[0] = 0;
}

/* A refused step forgets the rank's puts of @p d: the transport's step no longer holds it. */
static void unput(xfer_channel_t *ch, xfer_rt_dset_t *d)
{
    forget(&d->put);
    d->put_now = 0;
    if (ch->ops->unput)
        ch->ops->unput(ch, d);
}

void xfer_ch_blocks_release(xfer_rt_blocks_t *l)
{
    xfer_free(l->box);
    xfer_free(l->pk);
    xfer_free(l->at);
    xfer_free(l->of);
    memset(l, 0, sizeof(*l));
}

/* "[0:4, 0:9], [4:13, 0:9]": at most four boxes of @p l, then how many more. */
static void fmt_list(char *buf, size_t len, int nd, const xfer_rt_blocks_t *l)
{
    size_t o = 0;
    int b;
    buf[0] = '\0';
    for (b = 0; b < l->n && b < 4 && o < len; b++) {
        o += (size_t) snprintf(buf + o, len - o, "%s", b ? ", " : "");
        if (o < len)
            xfer_ch_fmt_box(buf + o, len - o, nd, l->box + (size_t) b * 2 * nd,
                            l->box + (size_t) b * 2 * nd + nd);
        o += strlen(buf + o);
    }
    if (l->n > 4 && o < len)
        snprintf(buf + o, len - o, " and %d more", l->n - 4);
}

xfer_status_t xfer_ch_block_check(xfer_channel_t *ch, const xfer_rt_dset_t *ds,
                                  const xfer_dataset_desc_t *d, uint64_t v, int *of)
{
    const int nd = d->ndims;
    char b1[200], b2[600];
    int b;

    *of = -1;
    if (v == 0) /* an empty block: the dataset is put, nothing is added */
        return XFER_SUCCESS;
    if (ds->bound && ds->put.n > 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s: step %llu: rank %d put a block already, and the "
                        "dataset is bound to a buffer (xfer_bind_buffer), which holds one block",
                        ch->cfg->name, d->name, (unsigned long long) ch->cur, ch->me);
    for (b = 0; b < ds->put.n; b++) {
        const uint64_t *x = ds->put.box + (size_t) b * 2 * nd;
        if (!xfer_boxes_meet(nd, d->start, d->count, x, x + nd))
            continue;
        xfer_ch_fmt_box(b1, sizeof(b1), nd, d->start, d->count);
        xfer_ch_fmt_box(b2, sizeof(b2), nd, x, x + nd);
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s: step %llu: rank %d's block %s overlaps its block "
                        "%s put before in this step (each xfer_put of a step adds a block, and "
                        "blocks may not overlap)",
                        ch->cfg->name, d->name, (unsigned long long) ch->cur, ch->me, b1, b2);
    }
    if (per_step(ds) || !ds->fix_set)
        return XFER_SUCCESS;
    for (b = 0; b < ds->fix.n; b++) {
        const uint64_t *x = ds->fix.box + (size_t) b * 2 * nd;
        if (memcmp(x, d->start, (size_t) nd * sizeof(uint64_t)) == 0 &&
            memcmp(x + nd, d->count, (size_t) nd * sizeof(uint64_t)) == 0) {
            *of = b;
            return XFER_SUCCESS;
        }
    }
    xfer_ch_fmt_box(b1, sizeof(b1), nd, d->start, d->count);
    fmt_list(b2, sizeof(b2), nd, &ds->fix);
    return XFER_ERR(XFER_ERR_INVALID_ARG,
                    "channel %s: dataset %s: step %llu: rank %d's block %s is not one of its %d "
                    "blocks of the first step%s%s%s; the decomposition is fixed by the first step "
                    "(blocks: per_step lets a rank's blocks change)",
                    ch->cfg->name, d->name, (unsigned long long) ch->cur, ch->me, b1, ds->fix.n,
                    ds->fix.n ? " (" : "", b2, ds->fix.n ? ")" : "");
}

xfer_status_t xfer_ch_block_push(xfer_rt_dset_t *ds, const xfer_dataset_desc_t *d, uint64_t v,
                                 int of)
{
    xfer_rt_blocks_t *l = &ds->put;
    const int nd = d->ndims;
    xfer_status_t st;
    ds->put_now = 1;
    if (v == 0)
        return XFER_SUCCESS;
    if (l->n == l->cap && (st = grow(l, nd)) != XFER_SUCCESS)
        return st;
    memcpy(l->box + (size_t) l->n * 2 * nd, d->start, (size_t) nd * sizeof(uint64_t));
    memcpy(l->box + (size_t) l->n * 2 * nd + nd, d->count, (size_t) nd * sizeof(uint64_t));
    l->at[l->n] = 0;
    l->of[l->n] = of;
    l->pk[l->n + 1] = l->pk[l->n] + PAD8((size_t) v * ds->esize);
    l->vol += v;
    l->n++;
    return XFER_SUCCESS;
}

void xfer_ch_block_pop(xfer_rt_dset_t *ds, uint64_t v)
{
    if (v > 0 && ds->put.n > 0) {
        ds->put.n--;
        ds->put.vol -= v;
    }
}

size_t xfer_ch_region(const xfer_rt_dset_t *d)
{
    const xfer_rt_blocks_t *l = &d->fix;
    const int nd = d->cfg->ndims;
    if (!d->fix_set || !l->n)
        return 0;
    return l->pk[l->n - 1] +
           (size_t) xfer_ch_volume(nd, l->box + (size_t) (l->n - 1) * 2 * nd + nd) * d->esize;
}

/* ---- the commit ------------------------------------------------------------------------------ */

/* Blocks: fixed, after the first step: this rank put every one of its blocks of the first step
 * (each put is one of them, none twice: xfer_ch_block_check), or none (the dataset is not in its
 * step). */
static xfer_status_t local_check(xfer_channel_t *ch, xfer_rt_dset_t *d)
{
    const int nd = d->cfg->ndims;
    char b1[200];
    int b, k;
    if (per_step(d) || !d->fix_set || !d->put_now || d->put.n == d->fix.n)
        return XFER_SUCCESS;
    for (b = 0; b < d->fix.n; b++) { /* the first one missing */
        for (k = 0; k < d->put.n && d->put.of[k] != b; k++)
            ;
        if (k == d->put.n)
            break;
    }
    xfer_ch_fmt_box(b1, sizeof(b1), nd, d->fix.box + (size_t) b * 2 * nd,
                    d->fix.box + (size_t) b * 2 * nd + nd);
    return XFER_ERR(XFER_ERR_INVALID_ARG,
                    "channel %s: dataset %s: step %llu: rank %d put %d of its %d blocks of the "
                    "first step: %s is missing; the decomposition is fixed by the first step "
                    "(blocks: per_step lets a rank's blocks change)",
                    ch->cfg->name, d->cfg->name, (unsigned long long) ch->cur, ch->me, d->put.n,
                    d->fix.n, b1);
}

/* Words of this rank's gather: its count of each dataset, its verdict (0, or the index + 1 of
 * the dataset whose blocks it refused itself), its boxes. */
static xfer_status_t fill_mine(xfer_channel_t *ch, int bad)
{
    xfer_rt_gather_t *g = &ch->gat;
    size_t words = (size_t) g->n + 1, o;
    int j;
    for (j = 0; j < g->n; j++)
        words += (size_t) ch->ds[g->which[j]].put.n * 2 * (size_t) ch->ds[g->which[j]].cfg->ndims;
    if (g->cap_mine < words) {
        uint64_t *m = xfer_realloc_array(g->mine, words, sizeof(uint64_t));
        if (!m)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: %zu words of blocks", ch->cfg->name,
                            words);
        g->mine = m;
        g->cap_mine = words;
    }
    o = (size_t) g->n + 1;
    for (j = 0; j < g->n; j++) {
        const xfer_rt_dset_t *d = &ch->ds[g->which[j]];
        const size_t w = (size_t) d->put.n * 2 * (size_t) d->cfg->ndims;
        g->mine[j] = (uint64_t) d->put.n;
        if (w)
            memcpy(g->mine + o, d->put.box, w * sizeof(uint64_t));
        o += w;
    }
    g->mine[g->n] = (uint64_t) bad;
    return XFER_SUCCESS;
}

/* Wait, in the one wait loop (every channel moving), for the gather's request. */
static xfer_status_t wait_gather(xfer_channel_t *ch, const char *what)
{
    const xfer_ch_wait_t w = {.cond = xfer_ch_req_done,
                              .arg = &ch->gat.req,
                              .what = what,
                              .until = HUGE_VAL,
                              .need = UINT64_MAX,
                              .resumable = 0,
                              .force = 0,
                              .side = 1};
    int met;
    return xfer_ch_wait(ch, &w, &met);
}

/* Every rank of the side: its counts and verdict, then its boxes (collective over the side). */
static xfer_status_t gather(xfer_channel_t *ch)
{
    xfer_rt_gather_t *g = &ch->gat;
    const int n1 = g->n + 1;
    size_t total = 0;
    xfer_status_t st = XFER_SUCCESS;
    int r, j;

    XFER_MPI_GOTO(
        MPI_Iallgather(g->mine, n1, MPI_UINT64_T, g->cnt, n1, MPI_UINT64_T, g->comm, &g->req), st,
        out);
    XFER_CHECK_GOTO(wait_gather(ch, "gathering this side's blocks"), st, out);
    for (r = 0; r < ch->nlocal; r++) {
        size_t w = 0;
        for (j = 0; j < g->n; j++)
            w += (size_t) g->cnt[(size_t) r * n1 + j] * 2 * (size_t) ch->ds[g->which[j]].cfg->ndims;
        if (w > (size_t) INT_MAX || total > (size_t) INT_MAX - w)
            return XFER_ERR(XFER_ERR_TOO_LARGE,
                            "channel %s: step %llu: the blocks of %s take more than %d words",
                            ch->cfg->name, (unsigned long long) ch->cur,
                            xfer_ch_side_name(ch, ch->side), INT_MAX);
        g->rc[r] = (int) w;
        g->rd[r] = (int) total;
        total += w;
    }
    if (g->cap_box < total + 1) {
        uint64_t *b = xfer_realloc_array(g->box, total + 1, sizeof(uint64_t));
        if (!b)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: %zu words of blocks", ch->cfg->name,
                            total);
        g->box = b;
        g->cap_box = total + 1;
    }
    XFER_MPI_GOTO(MPI_Iallgatherv(g->mine + n1, g->rc[ch->me], MPI_UINT64_T, g->box, g->rc, g->rd,
                                  MPI_UINT64_T, g->comm, &g->req),
                  st, out);
    XFER_CHECK_GOTO(wait_gather(ch, "gathering this side's blocks"), st, out);
out:
    return st;
}

const uint64_t *xfer_ch_gathered(const xfer_channel_t *ch, int i, int r, int *n)
{
    const xfer_rt_gather_t *g = &ch->gat;
    const size_t n1 = (size_t) g->n + 1;
    size_t o = (size_t) g->rd[r];
    int j;
    *n = 0;
    for (j = 0; j < g->n; j++) {
        const int c = (int) g->cnt[(size_t) r * n1 + j];
        if (g->which[j] == i) {
            *n = c;
            return g->box + o;
        }
        o += (size_t) c * 2 * (size_t) ch->ds[g->which[j]].cfg->ndims;
    }
    return NULL;
}

/* The tiling of the j-th dataset gathered, checked as every rank of the side checks it. */
static xfer_status_t check_tiling(xfer_channel_t *ch, int j)
{
    xfer_rt_gather_t *g = &ch->gat;
    xfer_rt_dset_t *d = &ch->ds[g->which[j]];
    const int nd = d->cfg->ndims, n = ch->nlocal;
    size_t *first = xfer_calloc((size_t) n + 1, sizeof(size_t)), nb = 0;
    uint64_t *s = NULL, *c = NULL;
    xfer_status_t st = XFER_SUCCESS;
    int r, b, k;

    if (!first)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: blocks", ch->cfg->name);
    for (r = 0; r < n; r++)
        first[r + 1] = first[r] + (size_t) g->cnt[(size_t) r * ((size_t) g->n + 1) + j];
    nb = first[n];
    s = xfer_malloc((nb + 1) * (size_t) nd * sizeof(uint64_t));
    c = xfer_malloc((nb + 1) * (size_t) nd * sizeof(uint64_t));
    if (!s || !c) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: %zu blocks", ch->cfg->name, nb);
        goto out;
    }
    for (r = 0; r < n; r++) {
        const uint64_t *x = xfer_ch_gathered(ch, g->which[j], r, &k);
        for (b = 0; b < k; b++) {
            memcpy(s + (first[r] + (size_t) b) * nd, x + (size_t) b * 2 * nd,
                   (size_t) nd * sizeof(uint64_t));
            memcpy(c + (first[r] + (size_t) b) * nd, x + (size_t) b * 2 * nd + nd,
                   (size_t) nd * sizeof(uint64_t));
        }
    }
    {
        const xfer_tiles_t t = {nd, d->cfg->dims, n, first, s, c};
        st = xfer_ch_check_tiling(ch, d, ch->side, ch->cur, &t);
    }
out:
    xfer_free(first);
    xfer_free(s);
    xfer_free(c);
    return st;
}

/* The words of a refused commit: the fault, then what to do. */
static xfer_status_t refused(xfer_channel_t *ch, xfer_status_t st)
{
    char why[1024];
    snprintf(why, sizeof(why), "%s", xfer_last_error());
    return XFER_ERR(st,
                    "%s; step %llu is not committed: put the dataset's blocks of the step again "
                    "and commit again",
                    why, (unsigned long long) ch->cur);
}

xfer_status_t xfer_ch_blocks_commit(xfer_channel_t *ch)
{
    xfer_rt_gather_t *g = &ch->gat;
    xfer_status_t st = XFER_SUCCESS, own = XFER_SUCCESS;
    char why[1024] = "";
    int i, j, r, bad = -1;

    g->n = 0;
    for (i = 0; i < ch->nds; i++) {
        xfer_rt_dset_t *d = &ch->ds[i];
        if (!blocky(ch, d))
            continue;
        if (own == XFER_SUCCESS && (own = local_check(ch, d)) != XFER_SUCCESS) {
            snprintf(why, sizeof(why), "%s", xfer_last_error());
            bad = i;
        }
        /* the first step's blocks become the decomposition: room for them before the
         * verdict, so that no rank fails alone once every rank accepted the step */
        while (own == XFER_SUCCESS && !per_step(d) && !d->fix_set &&
               (d->fix.cap < d->put.n || !d->fix.cap))
            if ((own = grow(&d->fix, d->cfg->ndims)) != XFER_SUCCESS) {
                snprintf(why, sizeof(why), "%s", xfer_last_error());
                bad = i;
            }
        if (gathered_always(ch, d) || !d->fix_set)
            g->which[g->n++] = i;
    }
    if (g->n == 0) { /* nothing to gather: blocks: fixed, after the first step */
        if (own == XFER_SUCCESS)
            return XFER_SUCCESS;
        unput(ch, &ch->ds[bad]);
        return refused(ch, xfer_err_raw(own, "%s", why));
    }
    XFER_CHECK_GOTO(fill_mine(ch, bad + 1), st, out);
    XFER_CHECK_GOTO(gather(ch), st, out);
    for (r = 0; r < ch->nlocal; r++) { /* a rank refused its own: every rank forgets it */
        const uint64_t v = g->cnt[(size_t) r * ((size_t) g->n + 1) + (size_t) g->n];
        if (!v)
            continue;
        unput(ch, &ch->ds[v - 1]);
        if (own != XFER_SUCCESS)
            return refused(ch, xfer_err_raw(own, "%s", why));
        return refused(ch,
                       XFER_ERR(XFER_ERR_INVALID_ARG,
                                "channel %s: dataset %s: step %llu: rank %d of %s refused its "
                                "blocks (its error says why)",
                                ch->cfg->name, ch->ds[v - 1].cfg->name,
                                (unsigned long long) ch->cur, r, xfer_ch_side_name(ch, ch->side)));
    }
    for (j = 0; j < g->n; j++)
        if ((st = check_tiling(ch, j)) != XFER_SUCCESS) {
            xfer_rt_dset_t *d = &ch->ds[g->which[j]];
            if (st == XFER_ERR_NO_MEMORY)
                goto out;
            unput(ch, d);
            return refused(ch, st);
        }
    for (j = 0; j < g->n; j++) { /* accepted */
        xfer_rt_dset_t *d = &ch->ds[g->which[j]];
        d->side_max = 0;
        for (r = 0; r < ch->nlocal; r++) {
            const int c = (int) g->cnt[(size_t) r * ((size_t) g->n + 1) + j];
            d->side_max = c > d->side_max ? c : d->side_max;
        }
        if (!per_step(d) && !d->fix_set) { /* the first step: the decomposition (room: above) */
            xfer_rt_blocks_t *f = &d->fix;
            const int nd = d->cfg->ndims;
            int b;
            f->n = d->put.n;
            f->vol = d->put.vol;
            if (f->n) {
                memcpy(f->box, d->put.box, (size_t) f->n * 2 * (size_t) nd * sizeof(uint64_t));
                memcpy(f->pk, d->put.pk, ((size_t) f->n + 1) * sizeof(size_t));
            }
            f->pk[0] = 0;
            for (b = 0; b < f->n; b++)
                d->put.of[b] = b;
            d->fix_set = 1;
        }
    }
out:
    return st;
}

int xfer_ch_blocks_gather_due(const xfer_channel_t *ch)
{
    int i;
    for (i = 0; i < ch->nds; i++)
        if (blocky(ch, &ch->ds[i]) && (gathered_always(ch, &ch->ds[i]) || !ch->ds[i].fix_set))
            return 1;
    return 0;
}

void xfer_ch_blocks_next(xfer_channel_t *ch)
{
    int i;
    for (i = 0; i < ch->nds; i++) {
        forget(&ch->ds[i].put);
        ch->ds[i].put_now = 0;
    }
}

xfer_status_t xfer_ch_blocks_open(xfer_channel_t *ch)
{
    xfer_rt_gather_t *g = &ch->gat;
    xfer_status_t st = XFER_SUCCESS;
    int i, any = 0, sends = 0;
    g->comm = MPI_COMM_NULL;
    g->req = MPI_REQUEST_NULL;
    for (i = 0; i < ch->nds; i++) {
        any |= blocky(ch, &ch->ds[i]);
        sends |= xfer_ch_dset_side(ch, &ch->ds[i]) == ch->side;
    }
    if (!any && sends && ch->ops->side_commit) /* the agreement's communicator only */
        goto dup;
    if (!any)
        return XFER_SUCCESS;
    g->which = xfer_calloc((size_t) ch->nds + 1, sizeof(int));
    g->cnt = xfer_calloc((size_t) ch->nlocal * ((size_t) ch->nds + 1), sizeof(uint64_t));
    g->rc = xfer_calloc((size_t) ch->nlocal, sizeof(int));
    g->rd = xfer_calloc((size_t) ch->nlocal, sizeof(int));
    if (!g->which || !g->cnt || !g->rc || !g->rd)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: blocks", ch->cfg->name);
dup:
    XFER_MPI_GOTO(MPI_Comm_dup(ch->ctl_local, &g->comm), st, out);
out:
    return st;
}

void xfer_ch_blocks_free(xfer_channel_t *ch, int collective)
{
    xfer_rt_gather_t *g = &ch->gat;
    int i;
    for (i = 0; ch->ds && i < ch->nds; i++) {
        xfer_ch_blocks_release(&ch->ds[i].put);
        xfer_ch_blocks_release(&ch->ds[i].fix);
    }
    if (g->comm != MPI_COMM_NULL)
        xfer_ch_abandon_coll(&g->req); /* (abandoned by a failure) */
    if (collective && g->comm != MPI_COMM_NULL)
        MPI_Comm_free(&g->comm);
    xfer_free(g->which);
    xfer_free(g->cnt);
    xfer_free(g->mine);
    xfer_free(g->box);
    xfer_free(g->rc);
    xfer_free(g->rd);
    memset(g, 0, sizeof(*g));
}
