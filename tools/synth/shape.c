/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-synth: what a receiving rank checks of a dataset whose shape changes every step (joined
 * rows, tools/synth/joined.c; variable extents, tools/synth/variable.c).
 *
 * Every rank computes the step's global shape from --seed, so a receiver knows its selection of
 * the step before it asks: worked out here from the documented rules (docs/runtime.md, "M x N
 * selections", "Joined datasets", "Shapes that change") rather than by the library's helper:
 * `all`; `rows`, near-equal slabs of the first dimension, the first (extent mod q) one longer;
 * `columns`, the same over the last; `block`, a grid of q parts over every dimension; or the box
 * it declared with xfer_select, clipped to the step. It compares xfer_get_shape with that, gets
 * its selection into a buffer of exactly that size (or, with --bind, the buffer bound to it when
 * the selection fits there), compares every value (a record field by field), and a hyperslab
 * inside it. Once per run a get into a buffer one byte too small must fail with
 * XFER_ERR_INVALID_ARG, naming the step, the rank and both sizes, and leave it untouched. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#define XFER_XALLOC_PROG "xfer-synth"
#define XFER_XALLOC_EXIT 1
#include "common/xalloc.h"

decl_t *synth_decl;
uint64_t synth_jbound_gets, synth_jcopied_gets;
static int small_checked; /* the too-small get: once per run */

/* Part r of q near-equal parts of len, the first len mod q one longer. */
static void share(uint64_t len, uint64_t q, uint64_t r, uint64_t *start, uint64_t *count)
{
    const uint64_t base = len / q, rem = len % q;
    *start = r * base + (r < rem ? r : rem);
    *count = base + (r < rem ? 1 : 0);
}

/* selection: block, part r of q: a grid over every dimension. Each prime factor of q, the
 * largest first, multiplies the parts of the dimension that has the most elements per part so
 * far (the first of equals; compared as fractions, exactly); the ranks take the grid's parts in
 * row-major order, each dimension cut into near-equal parts. */
static void block_part(int nd, const uint64_t *dims, int q, int r, uint64_t *start, uint64_t *count)
{
    uint64_t parts[XFER_MAX_DIMS], rest = (uint64_t) r;
    int fac[64], nf = 0, x = q, f, k;
    for (k = 0; k < nd; k++)
        parts[k] = 1;
    for (f = 2; f <= x / f; f++)
        while (x % f == 0 && nf < 63) {
            fac[nf++] = f;
            x /= f;
        }
    if (x > 1)
        fac[nf++] = x;
    for (f = nf - 1; f >= 0; f--) { /* factors ascending: the largest first */
        int best = 0;
        for (k = 1; k < nd; k++) /* dims[k] / parts[k] > dims[best] / parts[best] */
            if ((unsigned __int128) dims[k] * parts[best] >
                (unsigned __int128) dims[best] * parts[k])
                best = k;
        parts[best] *= (uint64_t) fac[f];
    }
    for (k = nd - 1; k >= 0; k--) {
        share(dims[k], parts[k], rest % parts[k], &start[k], &count[k]);
        rest /= parts[k];
    }
}

void synth_step_selection(int i, int j, const uint64_t *dims, uint64_t *start, uint64_t *count)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const decl_t *b = &synth_decl[i * NDS_MAX + j];
    const int nd = d->ndims;
    int k;
    for (k = 0; k < nd; k++) {
        start[k] = 0;
        count[k] = dims[k];
        if (b->declared && !b->whole) { /* clipped to the step: perhaps nothing */
            start[k] = b->start[k] < dims[k] ? b->start[k] : dims[k];
            count[k] = b->count[k] < dims[k] - start[k] ? b->count[k] : dims[k] - start[k];
        }
    }
    if (b->declared)
        return;
    if (d->selection == XFER_SELECT_ROWS)
        share(dims[0], (uint64_t) csize, (uint64_t) crank, &start[0], &count[0]);
    else if (d->selection == XFER_SELECT_COLUMNS)
        share(dims[nd - 1], (uint64_t) csize, (uint64_t) crank, &start[nd - 1], &count[nd - 1]);
    else if (d->selection == XFER_SELECT_BLOCK)
        block_part(nd, dims, csize, crank, start, count);
}

void synth_declare(int i, int j, const decl_t *b)
{
    synth_decl[i * NDS_MAX + j] = *b;
    if (b->whole)
        XCHECK(xfer_select(chs[i].h, cfg->channels[i].datasets[j].name, NULL, NULL));
    else
        XCHECK(xfer_select(chs[i].h, cfg->channels[i].datasets[j].name, b->start, b->count));
}

void synth_same_u64(int i, uint64_t s, const char *what, int n, const uint64_t *got,
                    const uint64_t *want)
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
    FAIL("channel %s step %" PRIu64 ": %s [%s], expected [%s]", cfg->channels[i].name, s, what, g,
         w);
}

/* Once per run: a get into a buffer one byte smaller than the selection fails with
 * XFER_ERR_INVALID_ARG, in words naming step @p s, the rank and both sizes, and writes
 * nothing. */
static void too_small_get(int i, const xfer_cfg_dataset_t *d, uint64_t s, size_t bytes)
{
    unsigned char *t = synth_data_alloc(cfg->channels[i].name, d, bytes, 0, "a get too small");
    char w[256];
    xfer_status_t st;
    size_t k;
    memset(t, 0xa5, bytes + 1);
    snprintf(w, sizeof(w),
             "channel %s: dataset %s: step %" PRIu64 ": the buffer holds %zu bytes, rank %d's "
             "selection needs %zu",
             cfg->channels[i].name, d->name, s, bytes - 1, crank, bytes);
    st = xfer_get(chs[i].h, d->name, t, bytes - 1, NULL);
    if (st != XFER_ERR_INVALID_ARG || !strstr(xfer_last_error(), w)) {
        chs[i].end = END_WRONG;
        FAIL("channel %s dataset %s: a get into %zu bytes, for a selection of %zu: %s: %s "
             "(expected XFER_ERR_INVALID_ARG: %s)",
             cfg->channels[i].name, d->name, bytes - 1, bytes, xfer_status_name(st),
             xfer_last_error(), w);
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

int synth_shape_get(int i, int j, uint64_t s, const uint64_t *dims, size_t cap,
                    int (*more)(int i, int j, uint64_t s))
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const char *cn = cfg->channels[i].name;
    const int nd = d->ndims;
    uint64_t est[XFER_MAX_DIMS], ecount[XFER_MAX_DIMS], nh = 0, v[2], w[2];
    xfer_dataset_desc_t shape, out;
    xfer_channel_stats_t cs0, cs1;
    char what[160];
    size_t bytes;
    char *got = NULL, *want = NULL;
    int ok, in_bound = 0;

    synth_step_selection(i, j, dims, est, ecount);
    memset(&shape, 0, sizeof(shape));
    memset(&out, 0, sizeof(out));
    CHCALL(ok, i, s, xfer_get_shape(chs[i].h, d->name, &shape));
    if (ok && more)
        ok = more(i, j, s);
    if (!ok)
        return 0;
    v[0] = shape.step;
    v[1] = (uint64_t) shape.ndims;
    w[0] = s;
    w[1] = (uint64_t) nd;
    snprintf(what, sizeof(what), "dataset %s: xfer_get_shape's step and ndims", d->name);
    synth_same_u64(i, s, what, 2, v, w);
    snprintf(what, sizeof(what), "dataset %s: xfer_get_shape's dims", d->name);
    synth_same_u64(i, s, what, nd, shape.dims, dims);
    snprintf(what, sizeof(what), "dataset %s: this rank's selection starts at", d->name);
    synth_same_u64(i, s, what, nd, shape.start, est);
    snprintf(what, sizeof(what), "dataset %s: this rank's selection counts", d->name);
    synth_same_u64(i, s, what, nd, shape.count, ecount);

    bytes = synth_box_bytes(cn, d, ecount);
    if (!small_checked && bytes > 0)
        too_small_get(i, d, s, bytes);
    in_bound = o.bind && bytes <= cap;
    got = in_bound ? bnd[RBND(i, j, 0)] : synth_data_alloc(cn, d, bytes, 0, "its selection");
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
    if (!in_bound && (unsigned char) got[bytes] != 0x5a) {
        chs[i].end = END_WRONG;
        FAIL("channel %s dataset %s step %" PRIu64 ": xfer_get wrote past the %zu bytes of the "
             "selection",
             cn, d->name, s, bytes);
    }
    snprintf(what, sizeof(what), "dataset %s: xfer_get's step", d->name);
    synth_same_u64(i, s, what, 1, &out.step, &s);
    snprintf(what, sizeof(what), "dataset %s: xfer_get's dims", d->name);
    synth_same_u64(i, s, what, nd, out.dims, dims);
    snprintf(what, sizeof(what), "dataset %s: xfer_get's start", d->name);
    synth_same_u64(i, s, what, nd, out.start, est);
    snprintf(what, sizeof(what), "dataset %s: xfer_get's count", d->name);
    synth_same_u64(i, s, what, nd, out.count, ecount);
    synth_check_record_desc(i, j, s, &out);
    synth_fill(d, dims, i, j, s, est, ecount, want);
    synth_check_data(i, j, s, "data", dims, est, ecount, got, want, NULL);
    if (!(ok = synth_check_hyperslab(i, j, s, dims, &out, &nh)))
        goto out;
    checked += synth_vol(nd, ecount) + nh;
    if (o.bind == 2) { /* the next step lands in the other buffer, wiped first */
        char *next = bnd[RBND(i, j, 1)];
        memset(next, 0, cap);
        CHCALL(ok, i, s, xfer_bind_buffer(chs[i].h, d->name, next, cap));
    }
out:
    if (!in_bound)
        free(got);
    free(want);
    return ok;
}
