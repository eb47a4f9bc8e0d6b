/* SPDX-License-Identifier: BSD-3-Clause */
/* joined_send: the sending side of tests/python/joined.py and tests/fortran/fjoined.f90 in C,
 * for records C -> Python and C -> Fortran.
 *
 * Puts, every step, whichever of joined.py's datasets the channel declares: p (float64
 * [joined, 3]), ids (int32 [joined]), parts (a struct particle array, [joined]) and grid (the
 * same struct, [7], this rank's rows of it), with joined.py's rows and values, written out
 * again in joined_pattern.h. The struct's layout is given with each put
 * (xfer_dataset_desc_t.record, from xfer_record_layout), which libxfer checks against the workflow
 * file; the receiver (joined.py) checks every field of every row.
 *
 *   joined_send [--steps N]       (XFER_CONFIG names the workflow file; the channel is "c")
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

#include "joined_pattern.h"

static int me = -1;

static void die(const char *what)
{
    fprintf(stderr, "joined_send: rank %d: %s: %s\n", me, what, xfer_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int has(const xfer_cfg_channel_t *c, const char *name)
{
    int i;
    for (i = 0; i < c->ndatasets; i++)
        if (strcmp(c->datasets[i].name, name) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    xfer_record_field_t f[4] = {{"id", XFER_TYPE_INT64, 1, 0},
                                {"pos", XFER_TYPE_FLOAT64, 3, 0},
                                {"q", XFER_TYPE_FLOAT32, 1, 0},
                                {"kind", XFER_TYPE_INT8, 1, 0}};
    xfer_record_t rec = {4, f, 0, 0};
    const xfer_config_t *cfg;
    const xfer_cfg_channel_t *c;
    xfer_channel_t *ch;
    MPI_Comm comm;
    xfer_t *x;
    int steps = 8, size, s, comp, ci;

    MPI_Init(&argc, &argv);
    if (argc == 3 && strcmp(argv[1], "--steps") == 0)
        steps = atoi(argv[2]);
    if (xfer_init(NULL, NULL, MPI_COMM_WORLD, &x) || xfer_comm(x, &comm) ||
        xfer_channel_open(x, "c", &ch) || xfer_config_of(x, &cfg, &comp) ||
        xfer_config_channel(cfg, "c", &ci))
        die("joining the workflow");
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    c = &cfg->channels[ci];
    if (xfer_record_layout(&rec) || rec.size != sizeof(struct particle) ||
        f[1].offset != offsetof(struct particle, pos) ||
        f[2].offset != offsetof(struct particle, q) ||
        f[3].offset != offsetof(struct particle, kind))
        die("the record's layout is not struct particle's");

    for (s = 0; s < steps; s++) {
        const uint64_t kp = jp_rows_of(me, s, size), fp = jp_first_row(me, s, size);
        const uint64_t ki = jp_rows_of(me, s + 1, size), fi = jp_first_row(me, s + 1, size);
        const uint64_t kr = jp_rows_of(me, s + 2, size), fr = jp_first_row(me, s + 2, size);
        double *p = calloc(3 * kp + 1, sizeof(*p));
        int32_t *ids = calloc(ki + 1, sizeof(*ids));
        struct particle *parts = calloc(kr + 1, sizeof(*parts)), grid[JP_GRID];
        uint64_t g0, gc, i;
        int k;
        if (!p || !ids || !parts)
            die("out of memory");
        for (i = 0; i < kp; i++)
            for (k = 0; k < 3; k++)
                p[3 * i + k] = jp_p(s, fp + i, k);
        for (i = 0; i < ki; i++)
            ids[i] = jp_id(s, fi + i);
        for (i = 0; i < kr; i++)
            parts[i] = jp_part(s, fr + i);
        if (xfer_decompose(XFER_SELECT_ROWS, 1, (const uint64_t[]){JP_GRID}, size, me, &g0, &gc))
            die("xfer_decompose");
        memset(grid, 0, sizeof(grid));
        for (i = 0; i < gc; i++)
            grid[i] = jp_grid(s, g0 + i);
        {
            xfer_dataset_desc_t dp = {.name = "p",
                                      .type = XFER_TYPE_FLOAT64,
                                      .ndims = 2,
                                      .dims = {0, 3},
                                      .count = {kp, 3}};
            xfer_dataset_desc_t di = {
                .name = "ids", .type = XFER_TYPE_INT32, .ndims = 1, .count = {ki}};
            xfer_dataset_desc_t dr = {.name = "parts",
                                      .type = XFER_TYPE_RECORD,
                                      .ndims = 1,
                                      .count = {kr},
                                      .record = &rec};
            xfer_dataset_desc_t dg = {.name = "grid",
                                      .type = XFER_TYPE_RECORD,
                                      .ndims = 1,
                                      .dims = {JP_GRID},
                                      .start = {g0},
                                      .count = {gc},
                                      .record = &rec};
            if ((has(c, "p") && xfer_put(ch, &dp, p)) ||
                (has(c, "ids") && xfer_put(ch, &di, ids)) ||
                (has(c, "parts") && xfer_put(ch, &dr, parts)) ||
                (has(c, "grid") && xfer_put(ch, &dg, grid)) || xfer_step_end(ch))
                die("a step");
        }
        free(p);
        free(ids);
        free(parts);
    }
    if (xfer_finalize(&x))
        die("xfer_finalize");
    MPI_Finalize();
    return 0;
}
