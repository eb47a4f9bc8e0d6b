/* SPDX-License-Identifier: BSD-3-Clause */
/* joined_recv: the receiving side of tests/python/joined.py and tests/fortran/fjoined.f90 in C,
 * for records (joined and fixed) Python -> C and Fortran -> C.
 *
 * Gets, every step, whichever of joined.py's datasets the channel declares (joined_pattern.h)
 * under the dataset's selection, all or rows. It computes without libxfer each sending rank's
 * rows of the step, the step's rows and this rank's share of them (all; rows: near-equal and
 * contiguous, the first (rows mod q) ranks one longer), and compares xfer_get_shape,
 * xfer_get_rows and the layout xfer_get returns in desc.record (struct particle's) with them;
 * then every byte of every value it gets: p and ids whole, a record field by field (its
 * padding is not data), the byte after the buffer untouched. It ends when the sender ends the
 * channel, after exactly --steps steps.
 *
 *   joined_recv [--steps N]       (XFER_CONFIG names the workflow file; the channel is "c")
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

#include "joined_pattern.h"

static const char *const joined[3] = {"p", "ids", "parts"};
static int me = -1;
static uint64_t checked; /* values (a record's fields) compared */
/* values that differ: reported at the end, after xfer_finalize (words written just before
 * MPI_Abort may never reach the launcher's output) */
static uint64_t differ;
static char first_differ[512];

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "joined_recv: rank %d: FAILED: ", me);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define CALL(call)                                                                                 \
    do {                                                                                           \
        if ((call) != XFER_SUCCESS)                                                                \
            die("%s: %s", #call, xfer_last_error());                                               \
    } while (0)

static const xfer_cfg_dataset_t *dataset(const xfer_cfg_channel_t *c, const char *name)
{
    int i;
    for (i = 0; i < c->ndatasets; i++)
        if (strcmp(c->datasets[i].name, name) == 0)
            return &c->datasets[i];
    return NULL;
}

/* This receiving rank's share of @p total rows: all, or rows. */
static void share(uint64_t total, int q, int rank, xfer_selection_mode_t mode, uint64_t *s0,
                  uint64_t *c0)
{
    const uint64_t base = total / (uint64_t) q, extra = total % (uint64_t) q;
    if (mode == XFER_SELECT_ALL) {
        *s0 = 0;
        *c0 = total;
        return;
    }
    *s0 = (uint64_t) rank * base + ((uint64_t) rank < extra ? (uint64_t) rank : extra);
    *c0 = base + ((uint64_t) rank < extra ? 1 : 0);
}

/* @p n bytes at @p got against @p want: the first that differs, named. */
static void same(const char *where, const char *what, uint64_t row, const void *got,
                 const void *want, size_t n)
{
    const unsigned char *a = got, *b = want;
    size_t k;
    for (k = 0; k < n; k++)
        if (a[k] != b[k]) {
            if (!differ++)
                snprintf(first_differ, sizeof(first_differ),
                         "%s: data differs from the pattern: row %" PRIu64 " %s, byte %zu is "
                         "0x%02x, want 0x%02x",
                         where, row, what, k, a[k], b[k]);
            return;
        }
    checked++;
}

/* Record @p got (row @p row of the selection) against @p want, field by field. */
static void same_record(const char *where, uint64_t row, const struct particle *got,
                        const struct particle *want)
{
    same(where, "id", row, &got->id, &want->id, sizeof(got->id));
    same(where, "pos", row, got->pos, want->pos, sizeof(got->pos));
    same(where, "q", row, &got->q, &want->q, sizeof(got->q));
    same(where, "kind", row, &got->kind, &want->kind, sizeof(got->kind));
}

/* The layout xfer_get returns for a record dataset: struct particle's. */
static void is_particle(const char *where, const xfer_record_t *r)
{
    static const char *const names[4] = {"id", "pos", "q", "kind"};
    static const size_t offs[4] = {offsetof(struct particle, id), offsetof(struct particle, pos),
                                   offsetof(struct particle, q), offsetof(struct particle, kind)};
    int i;
    if (!r || r->nfields != 4 || r->size != sizeof(struct particle))
        die("%s: desc.record is not struct particle's layout (%d fields, %zu bytes)", where,
            r ? r->nfields : -1, r ? r->size : 0);
    for (i = 0; i < 4; i++)
        if (strcmp(r->fields[i].name, names[i]) != 0 || r->fields[i].offset != offs[i])
            die("%s: desc.record's field %d is %s at %zu, struct particle's %s at %zu", where, i,
                r->fields[i].name, r->fields[i].offset, names[i], offs[i]);
}

/* Joined dataset j of step s: shape, each sender's rows, then every value. */
static void get_joined(xfer_channel_t *ch, const xfer_cfg_dataset_t *d, int j, int s, int q,
                       int nsenders)
{
    const size_t esize = xfer_cfg_dataset_esize(d);
    const uint64_t width = d->ndims == 2 ? d->dims[1] : 1;
    uint64_t rows[64], got_rows[64], total = 0, s0, c0, i, k;
    xfer_dataset_desc_t shape, out;
    char where[64];
    size_t bytes;
    unsigned char *buf;
    int r, n = -1;

    snprintf(where, sizeof(where), "%s step %d", d->name, s);
    for (r = 0; r < nsenders; r++)
        total += rows[r] = jp_rows_of(r, s + j, nsenders);
    share(total, q, me, d->selection, &s0, &c0);
    CALL(xfer_get_shape(ch, d->name, &shape));
    if (shape.step != (uint64_t) s || shape.ndims != d->ndims || shape.dims[0] != total ||
        (d->ndims == 2 && shape.dims[1] != width) || shape.start[0] != s0 || shape.count[0] != c0)
        die("%s: xfer_get_shape says step %" PRIu64 ", %" PRIu64 " rows, selection %" PRIu64
            " + %" PRIu64 "; want %" PRIu64 " rows, %" PRIu64 " + %" PRIu64,
            where, shape.step, shape.dims[0], shape.start[0], shape.count[0], total, s0, c0);
    memset(got_rows, 0xff, sizeof(got_rows));
    CALL(xfer_get_rows(ch, d->name, got_rows, nsenders, &n));
    if (n != nsenders || memcmp(got_rows, rows, (size_t) nsenders * sizeof(*rows)) != 0)
        die("%s: xfer_get_rows says %d senders, rank 0 %" PRIu64 " rows; want %d, %" PRIu64, where,
            n, got_rows[0], nsenders, rows[0]);

    bytes = (size_t) (c0 * width) * esize;
    buf = malloc(bytes + 1);
    if (!buf)
        die("out of memory");
    memset(buf, 0x5a, bytes + 1); /* exactly its size: the byte after it stays */
    CALL(xfer_get(ch, d->name, c0 ? buf : NULL, bytes, &out));
    if (out.step != (uint64_t) s || out.start[0] != s0 || out.count[0] != c0 || buf[bytes] != 0x5a)
        die("%s: xfer_get says step %" PRIu64 ", rows %" PRIu64 " + %" PRIu64 " (want %" PRIu64
            " + %" PRIu64 "), the byte after the buffer is 0x%02x",
            where, out.step, out.start[0], out.count[0], s0, c0, buf[bytes]);
    for (i = 0; i < c0; i++) {
        const uint64_t g = s0 + i;
        if (j == 0) {
            for (k = 0; k < width; k++) {
                const double want = jp_p(s, g, (int) k);
                same(where, "p", i, buf + (i * width + k) * esize, &want, sizeof(want));
            }
        } else if (j == 1) {
            const int32_t want = jp_id(s, g);
            same(where, "ids", i, buf + i * esize, &want, sizeof(want));
        } else {
            struct particle got, want = jp_part(s, g);
            memcpy(&got, buf + i * esize, sizeof(got));
            same_record(where, i, &got, &want);
        }
    }
    if (d->type == XFER_TYPE_RECORD)
        is_particle(where, out.record);
    free(buf);
}

/* grid of step s: this rank's part of the fixed record array, under its mode. */
static void get_grid(xfer_channel_t *ch, const xfer_cfg_dataset_t *d, int s, int q)
{
    struct particle got[JP_GRID + 1];
    const uint64_t dims[1] = {JP_GRID};
    uint64_t g0, gc, i;
    xfer_dataset_desc_t out;
    char where[64];

    snprintf(where, sizeof(where), "grid step %d", s);
    CALL(xfer_decompose(d->selection, 1, dims, q, me, &g0, &gc));
    memset(got, 0x5a, sizeof(got));
    CALL(xfer_get(ch, "grid", gc ? got : NULL, (size_t) gc * sizeof(*got), &out));
    if (out.step != (uint64_t) s || out.start[0] != g0 || out.count[0] != gc)
        die("%s: xfer_get says step %" PRIu64 ", %" PRIu64 " + %" PRIu64 "; want %" PRIu64
            " + %" PRIu64,
            where, out.step, out.start[0], out.count[0], g0, gc);
    for (i = 0; i < gc; i++) {
        const struct particle want = jp_grid(s, g0 + i);
        same_record(where, i, &got[i], &want);
    }
    is_particle(where, out.record);
    {
        const unsigned char *after = (const unsigned char *) &got[gc];
        for (i = 0; i < sizeof(*got); i++)
            if (after[i] != 0x5a)
                die("%s: xfer_get wrote past its %" PRIu64 " records", where, gc);
    }
}

int main(int argc, char **argv)
{
    const xfer_config_t *cfg;
    const xfer_cfg_channel_t *c;
    const xfer_cfg_dataset_t *grid;
    xfer_step_status_t status;
    xfer_channel_t *ch;
    MPI_Comm comm;
    xfer_t *x;
    int steps = 8, q, s, j, comp, ci, nsenders;

    MPI_Init(&argc, &argv);
    if (argc == 3 && strcmp(argv[1], "--steps") == 0)
        steps = atoi(argv[2]);
    CALL(xfer_init(NULL, NULL, MPI_COMM_WORLD, &x));
    CALL(xfer_comm(x, &comm));
    CALL(xfer_channel_open(x, "c", &ch));
    CALL(xfer_config_of(x, &cfg, &comp));
    CALL(xfer_config_channel(cfg, "c", &ci));
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &q);
    c = &cfg->channels[ci];
    nsenders = cfg->components[c->from].nprocs;
    if (c->to != comp || nsenders > 64)
        die("channel c is not received here from at most 64 ranks");
    for (j = 0; j < c->ndatasets; j++)
        if (c->datasets[j].selection != XFER_SELECT_ALL &&
            c->datasets[j].selection != XFER_SELECT_ROWS)
            die("dataset %s: selection all or rows only", c->datasets[j].name);
    grid = dataset(c, "grid");

    for (s = 0;; s++) {
        CALL(xfer_step_begin(ch, -1, &status));
        if (status == XFER_STEP_END_OF_STREAM)
            break;
        if (s == steps)
            die("step %d began: the sender sends %d steps", s, steps);
        for (j = 0; j < 3; j++) {
            const xfer_cfg_dataset_t *d = dataset(c, joined[j]);
            if (d)
                get_joined(ch, d, j, s, q, nsenders);
        }
        if (grid)
            get_grid(ch, grid, s, q);
        CALL(xfer_step_end(ch));
    }
    if (s != steps)
        die("received %d steps, want %d", s, steps);
    printf("joined_recv: %s rank %d: %d steps, %" PRIu64 " values checked\n",
           cfg->components[comp].name, me, s, checked);
    CALL(xfer_finalize(&x));
    MPI_Finalize();
    if (differ) {
        fprintf(stderr, "joined_recv: rank %d: FAILED: %s (%" PRIu64 " values differ)\n", me,
                first_differ, differ);
        return 1;
    }
    return 0;
}
