/* SPDX-License-Identifier: BSD-3-Clause */
/* Joined datasets (docs/runtime.md, "Joined datasets"): what a put may not do, steps of no rows,
 * a step nobody put, and max_rows. One MPMD launch of this program as both components:
 *
 *   mpiexec -n 2 test_joined [empty] : -n 1 test_joined [empty]   (XFER_CONFIG=FILE)
 *
 * The file: components a (2 ranks) and b (1 rank), channel c from a to b, datasets
 * p: float32 [joined, 3] with max_rows: 10, x: int32 [4] and r: {a: int32, b: float64}
 * [joined] (never put: its puts are malformed). The steps:
 *   0  every malformed put of p and r fails, naming the dataset, the rank, the step and both
 *      values, and the channel stays usable: then rank r puts r + 2 rows
 *   1  rank 0 does not put p (as if it put no rows), rank 1 puts four: a step of 4 rows
 *      (xfer-synth puts no rows on some ranks); a put of rows of the wrong width, and a get
 *      into a buffer one value too small, fail naming step 1
 *   2  nobody puts p: its shape has no rows, and xfer_get says it was not put
 *   3  11 rows, more than max_rows: the commit fails on both ranks with XFER_ERR_TOO_LARGE and
 *      writes nothing (transport: file: no step file); put again, 10 rows, it commits
 *   4  (with "empty") every rank puts 0 rows: a step of no rows, not a missing one
 * The receiver checks each step's shape, the senders' rows and every value. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfer/xfer.h>

#include "../support/mpitest.h"

#define WIDTH 3

static float value(uint64_t step, uint64_t row, int col)
{
    return (float) (step * 1000 + row * WIDTH + (uint64_t) col);
}

/* Rows of sending rank r in step s (step 3: the first put, then the second). */
static uint64_t rows_of(uint64_t s, int r, int retry)
{
    static const uint64_t rows[5][2] = {{2, 3}, {0, 4}, {0, 0}, {6, 5}, {0, 0}};
    return s == 3 && retry ? (r == 0 ? 6 : 4) : rows[s][r];
}

static void desc_of(xfer_dataset_desc_t *d, uint64_t rows)
{
    memset(d, 0, sizeof(*d));
    d->name = "p";
    d->type = XFER_TYPE_FLOAT32;
    d->ndims = 2;
    d->count[0] = rows;
    d->count[1] = WIDTH;
    d->dims[1] = WIDTH;
}

static void put_x(xfer_channel_t *ch, int rank, uint64_t s)
{
    xfer_dataset_desc_t d;
    int32_t v[2] = {(int32_t) s, (int32_t) s + 1};
    memset(&d, 0, sizeof(d));
    d.name = "x";
    d.type = XFER_TYPE_INT32;
    d.ndims = 1;
    d.dims[0] = 4;
    d.start[0] = (uint64_t) rank * 2;
    d.count[0] = 2;
    MT_XFER_OK(xfer_put(ch, &d, v));
}

static void put_rows(xfer_channel_t *ch, int rank, uint64_t s, uint64_t rows)
{
    xfer_dataset_desc_t d;
    float blk[64 * WIDTH];
    uint64_t first = 0, i;
    int c;
    for (c = 0; c < rank; c++)
        first += rows_of(s, c, 1);
    desc_of(&d, rows);
    for (i = 0; i < rows; i++)
        for (c = 0; c < WIDTH; c++)
            blk[i * WIDTH + (uint64_t) c] = value(s, first + i, c);
    MT_XFER_OK(xfer_put(ch, &d, blk));
}

/* A record put with @p f's layout (dataset r, 2 rows): refused with @p words. */
static void bad_record(xfer_channel_t *ch, xfer_record_field_t *f, size_t size, const char *words)
{
    xfer_record_t rec = {2, f, size, 8};
    xfer_dataset_desc_t d;
    char blk[2 * 24] = {0};
    memset(&d, 0, sizeof(d));
    d.name = "r";
    d.type = XFER_TYPE_RECORD;
    d.ndims = 1;
    d.count[0] = 2;
    d.record = &rec;
    MT_XFER_ERR(xfer_put(ch, &d, blk), XFER_ERR_MISMATCH, words);
}

/* Step 0's malformed puts, each refused with its words; the channel stays usable. */
static void bad_puts(xfer_channel_t *ch, int rank)
{
    xfer_dataset_desc_t d;
    float blk[8 * WIDTH] = {0};
    xfer_record_field_t f[2] = {{"a", XFER_TYPE_INT32, 1, 0}, {"b", XFER_TYPE_FLOAT64, 1, 4}};
    char w[256];

    desc_of(&d, 2);
    d.start[0] = 1;
    snprintf(w, sizeof(w),
             "channel c: dataset p is joined: a put gives rank %d's rows as count[0] and no "
             "start, but start[0] is 1 in step 0",
             rank);
    MT_XFER_ERR(xfer_put(ch, &d, blk), XFER_ERR_INVALID_ARG, w);
    desc_of(&d, 2);
    d.start[1] = 2;
    d.count[1] = 1;
    snprintf(w, sizeof(w), "but start[1] is 2 in step 0");
    MT_XFER_ERR(xfer_put(ch, &d, blk), XFER_ERR_INVALID_ARG, w);
    desc_of(&d, 2); /* rows of the wrong width */
    d.count[1] = 2;
    snprintf(w, sizeof(w),
             "channel c: dataset p is joined: each row is [0:3], but rank %d's rows in step 0 "
             "are [0:2]",
             rank);
    MT_XFER_ERR(xfer_put(ch, &d, blk), XFER_ERR_INVALID_ARG, w);
    desc_of(&d, 2); /* dims that are not the file's */
    d.dims[1] = 4;
    d.count[1] = 4;
    snprintf(w, sizeof(w),
             "channel c: dataset p: step 0: rank %d puts float32[0:0, 0:4], the workflow file "
             "declares float32[joined, 3] (a joined put leaves dims[0] 0, or gives this rank's "
             "rows there)",
             rank);
    MT_XFER_ERR(xfer_put(ch, &d, blk), XFER_ERR_MISMATCH, w);
    desc_of(&d, 2); /* dims[0] neither 0 nor the rows */
    d.dims[0] = 5;
    snprintf(w, sizeof(w),
             "step 0: rank %d puts float32[0:5, 0:3], the workflow file declares "
             "float32[joined, 3] (a joined put leaves dims[0] 0",
             rank);
    MT_XFER_ERR(xfer_put(ch, &d, blk), XFER_ERR_MISMATCH, w);
    desc_of(&d, 2); /* another type */
    d.type = XFER_TYPE_FLOAT64;
    snprintf(w, sizeof(w),
             "dataset p: step 0: rank %d puts float64[0:0, 0:3], the workflow file declares "
             "float32[joined, 3]",
             rank);
    MT_XFER_ERR(xfer_put(ch, &d, blk), XFER_ERR_MISMATCH, w);
    desc_of(&d, 6); /* one dimension: a flat run of values is not rows */
    d.ndims = 1;
    d.count[0] = 6;
    d.dims[0] = 0;
    snprintf(w, sizeof(w),
             "dataset p: step 0: rank %d puts float32[0:0], the workflow file declares "
             "float32[joined, 3]",
             rank);
    MT_XFER_ERR(xfer_put(ch, &d, blk), XFER_ERR_MISMATCH, w);
    /* records whose layout is not the declared {a: int32, b: float64} (b at 8, 16 bytes) */
    snprintf(w, sizeof(w),
             "channel c: dataset r: step 0: field 1 of rank %d's record is b float64[1] at offset "
             "4, the workflow file declares b float64[1] at offset 8",
             rank);
    bad_record(ch, f, 16, w);
    f[1].offset = 8;
    snprintf(w, sizeof(w),
             "channel c: dataset r: step 0: rank %d's record has 2 fields in 24 bytes, the "
             "workflow file declares 2 fields in 16 bytes",
             rank);
    bad_record(ch, f, 24, w);
}

/* The file of step @p s (transport: file, keep: true: they stay), a's steps on channel c of
 * workflow rt_joined under XFER_TRANSPORT_DIR (docs/runtime.md, "Stream or file"). */
static void step_path(char *path, size_t len, const char *dir, uint64_t s)
{
    snprintf(path, len, "%s/rt_joined/c/a.%06llu.h5", dir, (unsigned long long) s);
}

static int step_file(const char *dir, uint64_t s)
{
    char path[1024];
    step_path(path, sizeof(path), dir, s);
    return access(path, F_OK) == 0;
}

static void sender(xfer_channel_t *ch, int rank, int nsteps, const char *dir)
{
    char w[256];
    uint64_t s;
    for (s = 0; s < (uint64_t) nsteps; s++) {
        if (s == 0)
            bad_puts(ch, rank);
        if (s == 1) { /* the step named is this one */
            xfer_dataset_desc_t d;
            float blk[2 * WIDTH] = {0};
            desc_of(&d, 1);
            d.count[1] = d.dims[1] = WIDTH + 1;
            snprintf(w, sizeof(w),
                     "channel c: dataset p: step 1: rank %d puts float32[0:0, 0:4], the workflow "
                     "file declares float32[joined, 3]",
                     rank);
            MT_XFER_ERR(xfer_put(ch, &d, blk), XFER_ERR_MISMATCH, w);
        }
        if (s != 2 && !(s == 1 && rank == 0))
            put_rows(ch, rank, s, rows_of(s, rank, 0));
        put_x(ch, rank, s);
        if (s == 3) { /* 11 rows: more than max_rows, on every rank alike */
            snprintf(
                w, sizeof(w),
                "channel c: dataset p: step 3 holds 11 rows in all, more than its "
                "max_rows, 10 (the step is not committed: put fewer rows and commit it again)");
            MT_XFER_ERR(xfer_step_end(ch), XFER_ERR_TOO_LARGE, w);
            if (dir) {
                MT_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* (b waits in step 3: it holds none) */
                MT_CHECK(step_file(dir, 2) && !step_file(dir, 3),
                         "step 2's file is %s, step 3's %s: expected step 2's only",
                         step_file(dir, 2) ? "there" : "missing",
                         step_file(dir, 3) ? "there" : "missing");
            }
            put_rows(ch, rank, s, rows_of(s, rank, 1)); /* 10: the bound itself */
        }
        if (xfer_step_end(ch) != XFER_SUCCESS) { /* the receiver would wait for the step */
            fprintf(stderr, "[world rank %d] step %llu: xfer_step_end: %s\n", mt_world_rank,
                    (unsigned long long) s, xfer_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}

static void receiver(xfer_channel_t *ch, int nsteps, const char *dir)
{
    uint64_t s, start[2], count[2];
    float got[64 * WIDTH];
    int32_t x[4];
    uint64_t rows[3];
    xfer_dataset_desc_t d;
    int n, c;

    MT_XFER_ERR(xfer_selection_of(ch, "p", start, count), XFER_ERR_STATE,
                "channel c: dataset p is joined: this rank's selection depends on each step's "
                "shape; ask once the step began");
    for (s = 0; s < (uint64_t) nsteps; s++) {
        const uint64_t r0 = rows_of(s, 0, 1), r1 = rows_of(s, 1, 1);
        uint64_t i;
        if (s == 3 && dir)
            MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        memset(&d, 0, sizeof(d));
        rows[2] = 99;
        n = -1;
        MT_XFER_OK(xfer_get_shape(ch, "p", &d));
        MT_XFER_OK(xfer_get_rows(ch, "p", rows, 3, &n));
        MT_CHECK(d.step == s && d.ndims == 2 && d.dims[0] == r0 + r1 && d.dims[1] == WIDTH &&
                     d.start[0] == 0 && d.count[0] == r0 + r1 && d.count[1] == WIDTH,
                 "step %llu: shape step %llu, %d dims [%llu, %llu], selection from %llu, %llu "
                 "rows; expected %llu rows",
                 (unsigned long long) s, (unsigned long long) d.step, d.ndims,
                 (unsigned long long) d.dims[0], (unsigned long long) d.dims[1],
                 (unsigned long long) d.start[0], (unsigned long long) d.count[0],
                 (unsigned long long) (r0 + r1));
        MT_CHECK(n == 2 && rows[0] == r0 && rows[1] == r1 && rows[2] == 99,
                 "step %llu: %d senders, rows %llu, %llu (and %llu past them)",
                 (unsigned long long) s, n, (unsigned long long) rows[0],
                 (unsigned long long) rows[1], (unsigned long long) rows[2]);
        MT_XFER_OK(xfer_selection_of(ch, "p", start, count));
        MT_CHECK(start[0] == 0 && count[0] == r0 + r1, "step %llu: selection %llu + %llu",
                 (unsigned long long) s, (unsigned long long) start[0],
                 (unsigned long long) count[0]);
        if (s == 2) {
            MT_XFER_ERR(xfer_get(ch, "p", got, sizeof(got), NULL), XFER_ERR_NOT_FOUND,
                        "channel c: a did not put dataset p in step 2");
        } else {
            if (s == 1) { /* one value too small: refused, naming the step and the rank */
                char w[256];
                const size_t need = (size_t) (r0 + r1) * WIDTH * sizeof(float);
                snprintf(w, sizeof(w),
                         "channel c: dataset p: step 1: the buffer holds %zu bytes, rank 0's "
                         "selection needs %zu",
                         need - sizeof(float), need);
                MT_XFER_ERR(xfer_get(ch, "p", got, need - sizeof(float), NULL),
                            XFER_ERR_INVALID_ARG, w);
            }
            memset(got, 0, sizeof(got));
            MT_XFER_OK(xfer_get(ch, "p", (r0 + r1) ? got : NULL,
                                (size_t) (r0 + r1) * WIDTH * sizeof(float), &d));
            for (i = 0; i < r0 + r1; i++)
                for (c = 0; c < WIDTH; c++)
                    MT_CHECK(got[i * WIDTH + (uint64_t) c] == value(s, i, c),
                             "step %llu row %llu col %d: %g, expected %g", (unsigned long long) s,
                             (unsigned long long) i, c, (double) got[i * WIDTH + (uint64_t) c],
                             (double) value(s, i, c));
        }
        MT_XFER_OK(xfer_get(ch, "x", x, sizeof(x), NULL));
        MT_CHECK(x[0] == (int32_t) s && x[3] == (int32_t) s + 1, "step %llu: x %d .. %d",
                 (unsigned long long) s, x[0], x[3]);
        MT_XFER_ERR(xfer_get_rows(ch, "x", rows, 2, NULL), XFER_ERR_INVALID_ARG,
                    "channel c: dataset x is not joined");
        MT_XFER_ERR(xfer_get_rows(ch, "p", NULL, 2, NULL), XFER_ERR_INVALID_ARG,
                    "channel c: dataset p: 2 rows asked into NULL");
        MT_XFER_OK(xfer_step_end(ch));
    }
}

int main(int argc, char **argv)
{
    xfer_t *x = NULL;
    xfer_channel_t *ch = NULL;
    const xfer_config_t *cfg;
    const char *dir = getenv("XFER_TRANSPORT_DIR");
    MPI_Comm comm;
    int comp, rank, rc, nsteps = 4;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_world_rank);
    if (argc > 1 && strcmp(argv[1], "empty") == 0)
        nsteps = 5;
    if (dir && mt_world_rank == 0) { /* an earlier run's steps (xfer_init waits for this) */
        char path[1024];
        uint64_t s;
        for (s = 0; s < (uint64_t) nsteps; s++) {
            step_path(path, sizeof(path), dir, s);
            unlink(path);
        }
    }
    MT_XFER_OK(xfer_init(NULL, NULL, MPI_COMM_WORLD, &x));
    if (!x)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MT_XFER_OK(xfer_config_of(x, &cfg, &comp));
    MT_XFER_OK(xfer_comm(x, &comm));
    MPI_Comm_rank(comm, &rank);
    MT_XFER_OK(xfer_channel_open(x, "c", &ch));
    if (cfg->channels[0].transport != XFER_TRANSPORT_FILE || !cfg->channels[0].file.keep)
        dir = NULL; /* the step files are checked where they stay */
    if (comp == 0)
        sender(ch, rank, nsteps, dir);
    else
        receiver(ch, nsteps, dir);
    MT_XFER_OK(xfer_finalize(&x));
    rc = mt_finish("test_joined");
    MPI_Finalize();
    return rc;
}
