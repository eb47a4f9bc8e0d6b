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
 * A receiver asks xfer_get_shape and xfer_get_rows and compares them with what it computed:
 * the step's rows, each sender's rows, and its own selection, worked out here from the
 * documented rules (all; rows: near-equal slabs, the first total mod q one longer; columns; the
 * box it declared, clipped to the step) rather than by the library's helper. Then it gets its
 * selection into a buffer of exactly that size (or, with --bind, the buffer bound to it when the
 * selection fits there) and compares every byte, and a hyperslab inside it. Once per run a get
 * into a buffer one byte too small must fail with XFER_ERR_INVALID_ARG and leave it untouched. */
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

jbox_t *synth_jsel;
uint64_t synth_jbound_gets, synth_jcopied_gets;
static int small_checked; /* the too-small get: once per run */

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

/* Part r of q near-equal parts of len, the first len mod q one longer (docs/runtime.md, M x N
 * selections). */
static void share(uint64_t len, int q, int r, uint64_t *start, uint64_t *count)
{
    const uint64_t base = len / (uint64_t) q, rem = len % (uint64_t) q, ur = (uint64_t) r;
    *start = ur * base + (ur < rem ? ur : rem);
    *count = base + (ur < rem ? 1 : 0);
}

/* What this rank must hold of the step (of shape @p dims): its declared box clipped to the step,
 * or the dataset's mode over the step's shape. */
static void expected_selection(int i, int j, const uint64_t *dims, uint64_t *start, uint64_t *count)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const jbox_t *b = &synth_jsel[i * NDS_MAX + j];
    int k;
    for (k = 0; k < d->ndims; k++) {
        start[k] = 0;
        count[k] = dims[k];
        if (b->declared && !b->whole) {
            start[k] = b->start[k] < dims[k] ? b->start[k] : dims[k];
            count[k] = b->count[k] < dims[k] - start[k] ? b->count[k] : dims[k] - start[k];
        }
    }
    if (b->declared)
        return;
    if (d->selection == XFER_SELECT_ROWS)
        share(dims[0], csize, crank, &start[0], &count[0]);
    else if (d->selection == XFER_SELECT_COLUMNS)
        share(dims[d->ndims - 1], csize, crank, &start[d->ndims - 1], &count[d->ndims - 1]);
}

int synth_joined_declare(int i, int j, const char *pick)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    jbox_t *b = &synth_jsel[i * NDS_MAX + j];
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
    if (b->whole)
        XCHECK(xfer_select(chs[i].h, d->name, NULL, NULL));
    else
        XCHECK(xfer_select(chs[i].h, d->name, b->start, b->count));
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

/* Once per run: a get into a buffer one byte smaller than the selection fails with
 * XFER_ERR_INVALID_ARG and writes nothing. */
static void too_small_get(int i, const xfer_cfg_dataset_t *d, size_t bytes)
{
    unsigned char *t = synth_data_alloc(cfg->channels[i].name, d, bytes, 0, "a get too small");
    xfer_status_t st;
    size_t k;
    memset(t, 0xa5, bytes + 1);
    st = xfer_get(chs[i].h, d->name, t, bytes - 1, NULL);
    if (st != XFER_ERR_INVALID_ARG || !strstr(xfer_last_error(), "the buffer holds")) {
        chs[i].end = END_WRONG;
        FAIL("channel %s dataset %s: a get into %zu bytes, for a selection of %zu: %s: %s "
             "(expected XFER_ERR_INVALID_ARG: the buffer holds ...)",
             cfg->channels[i].name, d->name, bytes - 1, bytes, xfer_status_name(st),
             xfer_last_error());
    }
    for (k = 0; k <= bytes; k++)
        if (t[k] != 0xa5) {
            chs[i].end = END_WRONG;
            FAIL("channel %s dataset %s: a get that failed (buffer too small) wrote byte %zu",
                 cfg->channels[i].name, d->name, k);
        }
    free(t);
    small_checked = 1;
}

/* Compare @p n values @p got with @p want; on a difference, end the run naming @p what. */
static void same_u64(int i, const xfer_cfg_dataset_t *d, uint64_t s, const char *what, int n,
                     const uint64_t *got, const uint64_t *want)
{
    char g[512], w[512];
    size_t lg = 0, lw = 0;
    int k;
    if (memcmp(got, want, (size_t) n * sizeof(*got)) == 0)
        return;
    g[0] = w[0] = '\0';
    for (k = 0; k < n && lg < sizeof(g) - 24 && lw < sizeof(w) - 24; k++) {
        lg += (size_t) snprintf(g + lg, sizeof(g) - lg, "%s%" PRIu64, k ? "," : "", got[k]);
        lw += (size_t) snprintf(w + lw, sizeof(w) - lw, "%s%" PRIu64, k ? "," : "", want[k]);
    }
    chs[i].end = END_WRONG;
    FAIL("channel %s dataset %s step %" PRIu64 ": %s [%s], expected [%s]", cfg->channels[i].name,
         d->name, s, what, g, w);
}

int synth_joined_get(int i, int j, uint64_t s)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const char *cn = cfg->channels[i].name;
    const int p = senders_of(d), nd = d->ndims;
    const uint64_t sentinel = 0x5eed5eed5eed5eedull;
    uint64_t *want_rows = xchecked(calloc((size_t) p + 1, sizeof(uint64_t)));
    uint64_t *got_rows = xchecked(calloc((size_t) p + 2, sizeof(uint64_t)));
    uint64_t total, dims[XFER_MAX_DIMS], est[XFER_MAX_DIMS], ecount[XFER_MAX_DIMS], held, nh = 0;
    uint64_t v[3];
    xfer_dataset_desc_t shape, out;
    xfer_channel_stats_t cs0, cs1;
    size_t bytes, cap = o.bind ? synth_joined_bind_bytes(i, d, 0) : 0;
    char *got = NULL, *want = NULL;
    int ns = -1, ok, in_bound = 0;

    step_rows(i, j, s, p, want_rows, &total);
    step_dims(d, total, dims);
    expected_selection(i, j, dims, est, ecount);
    memset(&shape, 0, sizeof(shape));
    memset(&out, 0, sizeof(out));
    CHCALL(ok, i, s, xfer_get_shape(chs[i].h, d->name, &shape));
    got_rows[p] = sentinel; /* asked for one more than there are senders: left alone */
    if (ok)
        CHCALL(ok, i, s, xfer_get_rows(chs[i].h, d->name, got_rows, p + 1, &ns));
    if (!ok)
        goto out;
    v[0] = shape.step;
    v[1] = (uint64_t) shape.ndims;
    v[2] = (uint64_t) ns;
    {
        const uint64_t w[3] = {s, (uint64_t) nd, (uint64_t) p};
        same_u64(i, d, s, "xfer_get_shape's step and ndims, xfer_get_rows' senders", 3, v, w);
    }
    same_u64(i, d, s, "xfer_get_shape's dims", nd, shape.dims, dims);
    same_u64(i, d, s, "xfer_get_rows", p, got_rows, want_rows);
    if (got_rows[p] != sentinel)
        FAIL("channel %s dataset %s step %" PRIu64 ": xfer_get_rows wrote rows[%d] (%d senders)",
             cn, d->name, s, p, p);
    same_u64(i, d, s, "this rank's selection starts at", nd, shape.start, est);
    same_u64(i, d, s, "this rank's selection counts", nd, shape.count, ecount);

    bytes = synth_box_bytes(cn, d, ecount);
    if (!small_checked && bytes > 0)
        too_small_get(i, d, bytes);
    in_bound = o.bind && bytes <= cap;
    got = in_bound ? bnd[BND(i, j, s)] : synth_data_alloc(cn, d, bytes, 0, "its selection");
    if (!in_bound)
        memset(got, 0x5a, bytes + 1); /* exactly its size: the byte after it stays */
    want = synth_data_alloc(cn, d, bytes, 0, "the pattern it is compared with");
    CHCALL(ok, i, s, xfer_channel_stats(chs[i].h, &cs0));
    if (ok)
        CHCALL(ok, i, s, xfer_get(chs[i].h, d->name, got, in_bound ? cap : bytes, &out));
    if (ok)
        CHCALL(ok, i, s, xfer_channel_stats(chs[i].h, &cs1));
    if (!ok)
        goto out;
    if (o.bind && bytes > 0) {
        /* a selection that fits is read into the bound buffer: no copy; a larger one lands in
         * the library's buffer and xfer_get copies it */
        const uint64_t copied = cs1.bytes_copied_out - cs0.bytes_copied_out;
        if (copied != (in_bound ? 0 : bytes)) {
            chs[i].end = END_WRONG;
            FAIL("channel %s dataset %s step %" PRIu64 ": xfer_get copied %" PRIu64
                 " bytes of a selection of %zu, the bound buffer holding %zu (expected %zu)",
                 cn, d->name, s, copied, bytes, cap, in_bound ? (size_t) 0 : bytes);
        }
        *(in_bound ? &synth_jbound_gets : &synth_jcopied_gets) += 1;
    }
    if (!in_bound && (unsigned char) got[bytes] != 0x5a)
        FAIL("channel %s dataset %s step %" PRIu64 ": xfer_get wrote past the %zu bytes of the "
             "selection",
             cn, d->name, s, bytes);
    same_u64(i, d, s, "xfer_get's dims", nd, out.dims, dims);
    same_u64(i, d, s, "xfer_get's start", nd, out.start, est);
    same_u64(i, d, s, "xfer_get's count", nd, out.count, ecount);
    if (out.step != s) {
        chs[i].end = END_WRONG;
        FAIL("channel %s dataset %s step %" PRIu64 ": xfer_get says step %" PRIu64, cn, d->name, s,
             out.step);
    }
    synth_check_record_desc(i, j, s, &out);
    synth_fill(d, dims, i, j, s, est, ecount, want);
    held = synth_vol(nd, ecount);
    synth_check_data(i, j, s, "the selection", dims, est, ecount, got, want, NULL);
    if (!(ok = synth_check_hyperslab(i, j, s, dims, &out, &nh)))
        goto out;
    checked += held + nh;
    if (o.bind == 2) { /* the next step lands in the other buffer, wiped first */
        char *next = bnd[BND(i, j, s + 1)];
        memset(next, 0, cap);
        CHCALL(ok, i, s, xfer_bind_buffer(chs[i].h, d->name, next, cap));
    }
out:
    if (!in_bound)
        free(got);
    free(want);
    free(want_rows);
    free(got_rows);
    return ok;
}
