/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-synth: joined datasets (dims: [joined, ...]; docs/runtime.md, "Joined datasets").
 *
 * Each step every sending rank puts count[0] rows drawn from --seed for (channel, dataset, step,
 * rank), so that every rank of either side computes every sender's rows, the step's total and
 * each rank's first row (the sum of the lower ranks' rows) without a message. The steps cycle
 * through four kinds, from an offset drawn per dataset, so that any four consecutive steps hold
 * each: rows drawn for every rank (zero among them), zero rows on every other rank, every row on
 * one rank, and no rows at all. Values are the pattern keyed on the element's place in the
 * step's rows (global row, then the fixed extents), so a receiver can check every byte.
 *
 * A receiver checks xfer_get_rows against each sender's rows it computed, then everything
 * tools/synth/shape.c checks of a step whose shape changes: xfer_get_shape against the step's
 * rows and its own selection, every byte of its selection and a hyperslab. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#define XFER_XALLOC_PROG "xfer-synth"
#define XFER_XALLOC_EXIT 1
#include "common/xalloc.h"

#define ROWS_AVG 5 /* a sending rank's rows in a drawn step: 0 .. 2 * ROWS_AVG */

enum { K_DRAWN, K_SOME_EMPTY, K_ONE_HOLDS_ALL, K_ALL_EMPTY };

static int senders_of(const xfer_cfg_dataset_t *d)
{
    return cfg->components[d->from].nprocs;
}

/* Rows of sending rank r (of p) of joined dataset j of channel i in step s. */
static uint64_t rows_of(int i, int j, uint64_t s, int r, int p)
{
    const uint64_t kind = (s + synth_draw(R_ROWS, (uint64_t) i, (uint64_t) j, 0, 0)) % 4;
    const uint64_t draw = synth_draw(R_ROWS, (uint64_t) i, (uint64_t) j, s + 1, (uint64_t) r);
    switch (kind) {
    case K_DRAWN:
        return draw % (2 * ROWS_AVG + 1);
    case K_SOME_EMPTY: /* every other rank (one rank alone: every other step) */
        return ((uint64_t) r + s) % 2 == 0 ? 0 : 1 + draw % (2 * ROWS_AVG);
    case K_ONE_HOLDS_ALL: {
        const uint64_t who = synth_draw(R_ROWS, (uint64_t) i, (uint64_t) j, s + 1, 1000);
        return (uint64_t) r == who % (uint64_t) p ? 1 + draw % (2 * ROWS_AVG * (uint64_t) p) : 0;
    }
    default:
        return 0;
    }
}

/* Every sending rank's rows of the step into rows[0 .. p), the total into *total. */
static void step_rows(int i, int j, uint64_t s, int p, uint64_t *rows, uint64_t *total)
{
    int r;
    *total = 0;
    for (r = 0; r < p; r++)
        *total += rows[r] = rows_of(i, j, s, r, p);
    if (*total == 0 && o.no_empty_steps) /* --no-empty-steps: one row, on one rank */
        *total = rows[s % (uint64_t) p] = 1;
}

/* The step's global shape: its rows, then the file's fixed extents. */
static void step_dims(const xfer_cfg_dataset_t *d, uint64_t total, uint64_t *dims)
{
    int k;
    dims[0] = total;
    for (k = 1; k < d->ndims; k++)
        dims[k] = d->dims[k];
}

int synth_joined_declare(int i, int j, const char *pick)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    decl_t box, *b = &box;
    /* boxes are declared before step 0, against a typical step's rows: some steps hold fewer
     * (the box is clipped, perhaps to nothing), some more */
    const uint64_t n = ROWS_AVG * (uint64_t) senders_of(d),
                   slab = (n + (uint64_t) csize - 1) / (uint64_t) csize;
    uint64_t kind = 0;
    int k;
    if (!pick && !(o.seeded && d->selection == XFER_SELECT_USER))
        return 0;
    memset(b, 0, sizeof(*b));
    b->declared = 1;
    for (k = 1; k < d->ndims; k++)
        b->count[k] = d->dims[k];
    if (!pick) /* one kind per rank, from an offset drawn per dataset: with 3 ranks, 3 kinds */
        kind = (synth_draw(R_JSELECT, (uint64_t) comp, (uint64_t) i, (uint64_t) j, 0) +
                (uint64_t) crank) %
               4;
    if ((pick && strcmp(pick, "all") == 0) ||
        (pick && strcmp(pick, "mixed") == 0 && crank % 2 == 0) || (!pick && kind == 0)) {
        b->whole = 1; /* xfer_select(NULL, NULL): every row of every step */
    } else if (pick && (strcmp(pick, "overlap") == 0 || strcmp(pick, "mixed") == 0)) {
        b->start[0] = (uint64_t) crank * slab; /* two slabs: each overlaps the next rank's */
        b->count[0] = 2 * slab;
    } else if (pick && strcmp(pick, "corner") == 0) {
        b->count[0] = (n + 1) / 2;
        for (k = 1; k < d->ndims; k++)
            b->count[k] = (d->dims[k] + 1) / 2;
    } else if (pick && strcmp(pick, "none") == 0) {
        for (k = 0; k < d->ndims; k++)
            b->count[k] = 0;
    } else if (pick) {
        FAIL("--select %s: expected overlap, mixed, corner, none or all", pick);
    } else if (kind == 1) { /* nothing, whatever the step holds */
        b->count[0] = 0;
    } else if (kind == 2) { /* from a row on, past every step's end: clipped to each step */
        b->start[0] = synth_draw(R_JSELECT, (uint64_t) comp, (uint64_t) crank, (uint64_t) j, 1) % n;
        b->count[0] = 4 * n;
    } else { /* a box inside a typical step, overlapping other ranks' (past a small step's end) */
        b->start[0] = synth_draw(R_JSELECT, (uint64_t) comp, (uint64_t) crank, (uint64_t) j, 2) % n;
        b->count[0] =
            1 + synth_draw(R_JSELECT, (uint64_t) comp, (uint64_t) crank, (uint64_t) j, 3) % n;
        for (k = 1; k < d->ndims; k++) {
            b->start[k] =
                synth_draw(R_JSELECT, (uint64_t) crank, (uint64_t) j, (uint64_t) k, 4) % d->dims[k];
            b->count[k] =
                1 + synth_draw(R_JSELECT, (uint64_t) crank, (uint64_t) j, (uint64_t) k, 5) %
                        (d->dims[k] - b->start[k]);
        }
    }
    synth_declare(i, j, b);
    return 1;
}

/* Bytes of @p rows rows of @p d. */
static size_t rows_bytes(int i, const xfer_cfg_dataset_t *d, uint64_t rows)
{
    uint64_t c[XFER_MAX_DIMS];
    step_dims(d, rows, c);
    return synth_box_bytes(cfg->channels[i].name, d, c);
}

size_t synth_joined_bind_bytes(int i, const xfer_cfg_dataset_t *d, int sending)
{
    const uint64_t p = (uint64_t) senders_of(d);
    /* a sender: the most one rank puts (it holds every row); a receiver: a typical step's
     * rows, which some of its selections exceed */
    return rows_bytes(i, d, sending ? 2 * ROWS_AVG * p : ROWS_AVG * p);
}

int synth_joined_put(int i, int j, uint64_t s)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const int p = senders_of(d);
    uint64_t *rows = xchecked(calloc((size_t) p + 1, sizeof(*rows))), total, first = 0;
    uint64_t dims[XFER_MAX_DIMS], at[XFER_MAX_DIMS] = {0};
    xfer_dataset_desc_t desc;
    synth_layout_t own;
    size_t cap;
    char *blk;
    int r, ok = 1;

    if (p != csize)
        FAIL("channel %s: dataset %s: the workflow file says %d sending ranks, %s has %d",
             cfg->channels[i].name, d->name, p, me, csize);
    step_rows(i, j, s, p, rows, &total);
    for (r = 0; r < crank; r++)
        first += rows[r];
    if (o.report && crank == 0) { /* every sender's rows, as the receivers expect them */
        printf("xfer-synth-rows component=%s channel=%s dataset=%s step=%" PRIu64 " rows=", me,
               cfg->channels[i].name, d->name, s);
        for (r = 0; r < p; r++)
            printf("%s%" PRIu64, r ? "," : "", rows[r]);
        printf(" total=%" PRIu64 "\n", total);
        fflush(stdout);
    }
    step_dims(d, total, dims);
    memset(&desc, 0, sizeof(desc));
    desc.name = d->name;
    desc.type = d->type;
    desc.ndims = d->ndims;
    synth_record_desc(d, s, &desc, &own);
    step_dims(d, rows[crank], desc.count);
    memcpy(desc.dims, desc.count, sizeof(desc.dims));
    if (s % 2 == 0)
        desc.dims[0] = 0; /* both spellings: 0, or this rank's rows */
    at[0] = first;
    /* --put-order twice: the first put one row longer, with wrong data; the second replaces
     * its rows and its count */
    cap = o.bind ? synth_joined_bind_bytes(i, d, 1) : rows_bytes(i, d, rows[crank] + 1);
    blk =
        o.bind ? bnd[BND(i, j, s)] : synth_data_alloc(cfg->channels[i].name, d, cap, 0, "its rows");
    if (strcmp(o.put_order, "twice") == 0) {
        xfer_dataset_desc_t wrong = desc;
        if (!o.bind || rows_bytes(i, d, rows[crank] + 1) <= cap)
            wrong.count[0]++;
        wrong.dims[0] = 0;
        memset(blk, 0xa5, rows_bytes(i, d, wrong.count[0]));
        CHCALL(ok, i, s, xfer_put(chs[i].h, &wrong, blk));
    }
    if (ok) {
        synth_fill(d, dims, i, j, s, at, desc.count, blk);
        CHCALL(ok, i, s, xfer_put(chs[i].h, &desc, blk));
    }
    if (!o.bind)
        free(blk);
    free(rows);
    return ok;
}

/* xfer_get_rows against each sender's rows of the step (synth_shape_get's check of a joined
 * dataset, once xfer_get_shape returned). */
static int check_rows(int i, int j, uint64_t s)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const int p = senders_of(d);
    const uint64_t sentinel = 0x5eed5eed5eed5eedull;
    uint64_t *want = xchecked(calloc((size_t) p + 1, sizeof(uint64_t)));
    uint64_t *got = xchecked(calloc((size_t) p + 2, sizeof(uint64_t))), total, ns[2];
    char what[160];
    int n = -1, ok;
    step_rows(i, j, s, p, want, &total);
    got[p] = sentinel; /* asked for one more than there are senders: left alone */
    CHCALL(ok, i, s, xfer_get_rows(chs[i].h, d->name, got, p + 1, &n));
    if (ok) {
        ns[0] = (uint64_t) n;
        ns[1] = (uint64_t) p;
        snprintf(what, sizeof(what), "dataset %s: xfer_get_rows' senders", d->name);
        synth_same_u64(i, s, what, 1, &ns[0], &ns[1]);
        snprintf(what, sizeof(what), "dataset %s: xfer_get_rows", d->name);
        synth_same_u64(i, s, what, p, got, want);
        if (got[p] != sentinel) {
            chs[i].end = END_WRONG;
            FAIL("channel %s dataset %s step %" PRIu64 ": xfer_get_rows wrote rows[%d] (%d "
                 "senders)",
                 cfg->channels[i].name, d->name, s, p, p);
        }
    }
    free(want);
    free(got);
    return ok;
}

int synth_joined_get(int i, int j, uint64_t s)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const int p = senders_of(d);
    uint64_t *rows = xchecked(calloc((size_t) p + 1, sizeof(uint64_t))), total;
    uint64_t dims[XFER_MAX_DIMS];
    int ok;
    step_rows(i, j, s, p, rows, &total);
    step_dims(d, total, dims);
    free(rows);
    ok = synth_shape_get(i, j, s, dims, o.bind ? synth_joined_bind_bytes(i, d, 0) : 0, check_rows);
    return ok;
}
