/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-synth: several blocks per rank (docs/runtime.md, "Several blocks per rank"), for
 * fixed-shape datasets.
 *
 * --blocks KxL cuts this rank's block (--decomp) into a K x L grid over the first two dimensions
 * (K L slabs of a 1-D dataset), uneven, and puts each piece with an xfer_put of its own, leaving
 * out the empty ones (a rank whose block is empty puts nothing: zero blocks), in an order that
 * turns from step to step. --move makes rank r play the block of rank (r + s) mod n in step s, so
 * that blocks move between the ranks every step (the datasets with `blocks: per_step`). The
 * values are the pattern, keyed on the global element as always: the receivers check them as
 * for one block.
 *
 * --put-order twice puts each block, then again with wrong data: the second put must fail,
 * naming both boxes, and leave the first in place (the receivers check it).
 *
 * --bad-blocks hole|overlap|mismatch spoils step --bad-step (0; mismatch: 1) of the first
 * fixed-shape dataset of each channel the component only sends on, on its last rank: hole
 * leaves out its last block, overlap adds rank 0's first block, mismatch (blocks: fixed) puts
 * its block whole (refused at the put), then all its blocks but the last (refused at the
 * commit). Each refusal is printed (xfer-synth-refused ...); then the rank puts the dataset
 * right and commits again, and the run goes on, checked byte for byte. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#define XFER_XALLOC_PROG "xfer-synth"
#define XFER_XALLOC_EXIT 1
#include "common/xalloc.h"

enum { NBOX_MAX = 64 };

typedef struct boxes {
    int n;
    uint64_t s[NBOX_MAX][XFER_MAX_DIMS], c[NBOX_MAX][XFER_MAX_DIMS];
} boxes_t;

int synth_blocks_on(void)
{
    return o.bk * o.bl > 1 || o.move || o.bad_blocks || strcmp(o.put_order, "twice") == 0;
}

/* Rank @p rank's boxes of dataset @p d in step @p s: its block (the one of the rank it plays:
 * --move) cut into K x L, empty ones left out, turned by the step. */
static void boxes_of(const xfer_cfg_dataset_t *d, int rank, uint64_t s, boxes_t *x)
{
    const int nr = cfg->components[d->from].nprocs;
    const int plays = o.move && d->blocks == XFER_BLOCKS_PER_STEP
                          ? (int) (((uint64_t) rank + s) % (uint64_t) nr)
                          : rank;
    const int k0 = d->ndims >= 2 ? o.bk : o.bk * o.bl, k1 = d->ndims >= 2 ? o.bl : 1;
    uint64_t bs[XFER_MAX_DIMS], bc[XFER_MAX_DIMS];
    boxes_t all;
    int a, b, t;

    synth_block_of(d, plays, nr, o.decomp, bs, bc);
    all.n = 0;
    for (a = 0; a < k0; a++)
        for (b = 0; b < k1; b++) {
            uint64_t *ps = all.s[all.n], *pc = all.c[all.n];
            memcpy(ps, bs, sizeof(bs));
            memcpy(pc, bc, sizeof(bc));
            synth_split(bc[0], k0, a, "uneven", &ps[0], &pc[0]);
            ps[0] += bs[0];
            if (d->ndims >= 2) {
                synth_split(bc[1], k1, b, "uneven", &ps[1], &pc[1]);
                ps[1] += bs[1];
            }
            all.n += synth_vol(d->ndims, pc) > 0;
        }
    x->n = all.n; /* turned by s, reversed on odd steps: the order of the puts changes */
    for (t = 0; t < all.n; t++) {
        const int from = (int) ((s + (uint64_t) t) % (uint64_t) all.n);
        const int to = s % 2 ? all.n - 1 - t : t;
        memcpy(x->s[to], all.s[from], sizeof(x->s[to]));
        memcpy(x->c[to], all.c[from], sizeof(x->c[to]));
    }
}

/* Put box (bs, bc) of dataset j of channel i in step s, the pattern in it (@p wrong: junk). */
static xfer_status_t put_box(int i, int j, uint64_t s, const uint64_t *bs, const uint64_t *bc,
                             int wrong)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const size_t bytes = synth_box_bytes(cfg->channels[i].name, d, bc);
    char *blk = synth_data_alloc(cfg->channels[i].name, d, bytes, 0, "a block of this rank");
    xfer_dataset_desc_t desc;
    synth_layout_t own;
    xfer_status_t st;
    memset(&desc, 0, sizeof(desc));
    desc.name = d->name;
    desc.type = d->type;
    desc.ndims = d->ndims;
    memcpy(desc.dims, d->dims, sizeof(desc.dims));
    memcpy(desc.start, bs, (size_t) d->ndims * sizeof(uint64_t));
    memcpy(desc.count, bc, (size_t) d->ndims * sizeof(uint64_t));
    synth_record_desc(d, s, &desc, &own);
    if (wrong)
        memset(blk, 0xa5, bytes);
    else
        synth_fill(d, d->dims, i, j, s, bs, bc, blk);
    st = xfer_put(chs[i].h, &desc, blk);
    free(blk);
    return st;
}

/* A call refused as it must be: its words on a line of their own (the tests look for them). */
static void refused(int i, uint64_t s, const char *what, xfer_status_t st)
{
    printf("xfer-synth-refused component=%s rank=%d channel=%s step=%" PRIu64
           " call=%s status=%s: %s\n",
           me, crank, cfg->channels[i].name, s, what, xfer_status_name(st), xfer_last_error());
    fflush(stdout);
}

/* A put that must fail with XFER_ERR_INVALID_ARG and words holding @p words; 0: the channel
 * ended. */
static int must_refuse(int i, uint64_t s, xfer_status_t st, const char *what, const char *words)
{
    if (st == XFER_ERR_END_OF_STREAM)
        return synth_ch_result(i, s, st, what, MPI_Wtime());
    if (st != XFER_ERR_INVALID_ARG || !strstr(xfer_last_error(), words)) {
        chs[i].end = END_WRONG;
        FAIL("channel %s: %s: expected XFER_ERR_INVALID_ARG saying \"%s\", got %s: %s",
             cfg->channels[i].name, what, words, xfer_status_name(st), xfer_last_error());
    }
    refused(i, s, what, st);
    return 1;
}

/* --bad-blocks: the dataset spoiled in channel i (-1: none): the first fixed-shape one of a
 * channel this component only sends on (mismatch: the first with blocks: fixed), in step
 * --bad-step. */
static int spoiled(int i, uint64_t s)
{
    const int fixed_only = strcmp(o.bad_blocks ? o.bad_blocks : "", "mismatch") == 0;
    int j;
    if (!o.bad_blocks || (int64_t) s != o.bad_step || chs[i].role != XFER_ROLE_SEND)
        return -1;
    for (j = 0; j < cfg->channels[i].ndatasets; j++) {
        const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
        if (d->from == comp && !d->joined && !d->variable &&
            (!fixed_only || d->blocks == XFER_BLOCKS_FIXED))
            return j;
    }
    return -1;
}

/* Does the commit of channel i gather the side's blocks after the first step (a dataset with
 * blocks: per_step)? Then one rank's refusal is every rank's. */
static int gathers(int i)
{
    int j;
    for (j = 0; j < cfg->channels[i].ndatasets; j++)
        if (cfg->channels[i].datasets[j].from == comp &&
            cfg->channels[i].datasets[j].blocks == XFER_BLOCKS_PER_STEP)
            return 1;
    return 0;
}

static int spoiler(void)
{
    return crank == csize - 1;
}

int synth_blocks_put(int i, int j, uint64_t s)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const int bad = spoiled(i, s) == j && spoiler();
    boxes_t x;
    int b, ok = 1, n;

    boxes_of(d, crank, s, &x);
    n = x.n;
    if (bad && strcmp(o.bad_blocks, "mismatch") == 0 && x.n > 1) {
        uint64_t ws[XFER_MAX_DIMS], wc[XFER_MAX_DIMS]; /* the block whole: not one of them */
        synth_block_of(d, crank, csize, o.decomp, ws, wc);
        if (!must_refuse(i, s, put_box(i, j, s, ws, wc, 0), "xfer_put (the block whole)",
                         "blocks of the first step"))
            return 0;
        n = x.n - 1; /* and one block short: refused at the commit */
    }
    if (bad && strcmp(o.bad_blocks, "hole") == 0)
        n = x.n - 1;
    for (b = 0; ok && b < n; b++) {
        CHCALL(ok, i, s, put_box(i, j, s, x.s[b], x.c[b], 0));
        if (ok && strcmp(o.put_order, "twice") == 0)
            ok = must_refuse(i, s, put_box(i, j, s, x.s[b], x.c[b], 1), "xfer_put (again)",
                             "put before in this step");
    }
    if (ok && bad && strcmp(o.bad_blocks, "overlap") == 0) { /* rank 0's first block too */
        boxes_t z;
        boxes_of(d, 0, s, &z);
        if (z.n > 0)
            CHCALL(ok, i, s, put_box(i, j, s, z.s[0], z.c[0], 0));
    }
    return ok;
}

int synth_blocks_end(int i, uint64_t s)
{
    const int j = spoiled(i, s);
    const int must = j >= 0 && (spoiler() || strcmp(o.bad_blocks, "mismatch") != 0 || gathers(i));
    xfer_status_t st;
    boxes_t x;
    int b, ok = 1;

    if (j < 0)
        return -1; /* not a spoiled step: the usual xfer_step_end */
    st = xfer_step_end(chs[i].h);
    if (!must) /* (another rank's local refusal: this one commits) */
        return synth_ch_result(i, s, st, "xfer_step_end(chs[i].h)", MPI_Wtime());
    if (st == XFER_SUCCESS) {
        chs[i].end = END_WRONG;
        FAIL("channel %s: --bad-blocks %s: xfer_step_end committed the spoiled step",
             cfg->channels[i].name, o.bad_blocks);
    }
    if (!must_refuse(i, s, st, "xfer_step_end", "is not committed"))
        return 0;
    /* the dataset's blocks of the step were forgotten: put them right, commit again */
    boxes_of(&cfg->channels[i].datasets[j], crank, s, &x);
    for (b = 0; ok && b < x.n; b++)
        CHCALL(ok, i, s, put_box(i, j, s, x.s[b], x.c[b], 0));
    if (ok)
        CHCALL(ok, i, s, xfer_step_end(chs[i].h));
    return ok;
}
