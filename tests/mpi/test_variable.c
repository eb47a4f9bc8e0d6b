/* SPDX-License-Identifier: BSD-3-Clause */
/* Variable shapes (dims entries `variable`; docs/runtime.md): a dataset whose global shape the
 * senders' puts give each step. One MPMD launch of this program as both components:
 *
 *   mpiexec -n 2 test_variable [all] : -n 3 test_variable [all]   (XFER_CONFIG=FILE)
 *
 * The file: components a (2 ranks) and b (3 ranks), channel c from a to b (either transport),
 * dataset g: int32 [variable, 4] under selection: block, and y: float64 [variable] under rows
 * (with `all`: both under selection: all, which the stream carries by its allgatherv plan). The
 * senders split the rows of each step's shape (it grows and shrinks, 0 rows included) between
 * them. Before the good steps, each rank of a provokes the three errors a commit of a variable
 * shape refuses alike on every sending rank before anything is written (two shapes, overlapping
 * blocks, a hole) and then puts the step right: the receiver sees only the good steps. The
 * receiver checks each step's shape, its own selection (xfer_decompose over the step's shape,
 * computed here) and every value. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

#include "../support/mpitest.h"

#define COLS  4
#define STEPS 6

static int all; /* every receiving rank takes all of each dataset */

static const uint64_t rows_in[STEPS] = {5, 9, 0, 3, 12, 1};

static int32_t value(uint64_t s, uint64_t r, uint64_t c)
{
    return (int32_t) (s * 10000 + r * COLS + c);
}

/* Rank @p me of 2 puts rows [first, first + n) of a step of @p rows rows and @p cols columns. */
static xfer_status_t put_g(xfer_channel_t *ch, uint64_t s, uint64_t rows, uint64_t first,
                           uint64_t n, uint64_t cols)
{
    int32_t *b = calloc((size_t) (n * cols + 1), sizeof(*b));
    xfer_dataset_desc_t d;
    xfer_status_t st;
    uint64_t i, c;
    for (i = 0; i < n; i++)
        for (c = 0; c < cols; c++)
            b[i * cols + c] = value(s, first + i, c);
    memset(&d, 0, sizeof(d));
    d.name = "g";
    d.type = XFER_TYPE_INT32;
    d.ndims = 2;
    d.dims[0] = rows;
    d.dims[1] = cols;
    d.start[0] = first;
    d.count[0] = n;
    d.count[1] = cols;
    st = xfer_put(ch, &d, b);
    free(b);
    return st;
}

static void sender(xfer_channel_t *ch, int me)
{
    uint64_t s;
    for (s = 0; s < STEPS; s++) {
        const uint64_t rows = rows_in[s], half = rows / 2;
        const uint64_t first = me == 0 ? 0 : half, n = me == 0 ? half : rows - half;
        double y[16];
        xfer_dataset_desc_t d;
        uint64_t i;
        if (s == 1) { /* the three refusals, then the step right */
            /* rank 1 says 10 rows where rank 0 says 9 */
            MT_XFER_OK(put_g(ch, s, me == 0 ? rows : rows + 1, first, n, COLS));
            MT_XFER_ERR(xfer_step_end(ch), XFER_ERR_MISMATCH,
                        "dataset g: step 1: rank 1 of a puts it with shape [0:10, 0:4], rank 0 "
                        "with [0:9, 0:4]");
            /* both put row 4 */
            MT_XFER_OK(put_g(ch, s, rows, me == 0 ? 0 : 4, me == 0 ? 5 : 5, COLS));
            MT_XFER_ERR(xfer_step_end(ch), XFER_ERR_INVALID_ARG,
                        "dataset g: step 1: the block of a rank 1 [4:9, 0:4] overlaps the block "
                        "of rank 0 [0:5, 0:4]");
            /* nobody puts row 4 */
            MT_XFER_OK(put_g(ch, s, rows, me == 0 ? 0 : 5, 4, COLS));
            MT_XFER_ERR(xfer_step_end(ch), XFER_ERR_INVALID_ARG,
                        "dataset g: step 1: the blocks of a's 2 ranks hold 32 of the 36 elements "
                        "of its shape [0:9, 0:4]");
        }
        MT_XFER_OK(put_g(ch, s, rows, first, n, COLS));
        memset(&d, 0, sizeof(d)); /* y: 1-D, rank 0 holds all of it */
        d.name = "y";
        d.type = XFER_TYPE_FLOAT64;
        d.ndims = 1;
        d.dims[0] = s + 1;
        d.count[0] = me == 0 ? s + 1 : 0;
        for (i = 0; i <= s; i++)
            y[i] = (double) (s * 100 + i);
        MT_XFER_OK(xfer_put(ch, &d, me == 0 ? y : NULL));
        MT_XFER_OK(xfer_step_end(ch));
    }
}

static void receiver(xfer_channel_t *ch, int me, int n)
{
    uint64_t s;
    for (s = 0; s < STEPS; s++) {
        const uint64_t dims[2] = {rows_in[s], COLS}, ydims[1] = {s + 1};
        uint64_t st[2], ct[2], i, c;
        xfer_dataset_desc_t d;
        int32_t *b;
        double y[16];
        int bad = 0;
        MT_XFER_OK(xfer_get_shape(ch, "g", &d));
        MT_CHECK(d.step == s && d.dims[0] == rows_in[s] && d.dims[1] == COLS,
                 "step %llu: shape [%llu, %llu], expected [%llu, %d]", (unsigned long long) s,
                 (unsigned long long) d.dims[0], (unsigned long long) d.dims[1],
                 (unsigned long long) rows_in[s], COLS);
        MT_XFER_OK(
            xfer_decompose(all ? XFER_SELECT_ALL : XFER_SELECT_BLOCK, 2, dims, n, me, st, ct));
        MT_CHECK(!memcmp(d.start, st, sizeof(st)) && !memcmp(d.count, ct, sizeof(ct)),
                 "step %llu: selection [%llu+%llu, %llu+%llu], expected [%llu+%llu, %llu+%llu]",
                 (unsigned long long) s, (unsigned long long) d.start[0],
                 (unsigned long long) d.count[0], (unsigned long long) d.start[1],
                 (unsigned long long) d.count[1], (unsigned long long) st[0],
                 (unsigned long long) ct[0], (unsigned long long) st[1],
                 (unsigned long long) ct[1]);
        b = calloc((size_t) (ct[0] * ct[1] + 1), sizeof(*b));
        MT_XFER_OK(xfer_get(ch, "g", b, (size_t) (ct[0] * ct[1]) * sizeof(*b), &d));
        for (i = 0; i < ct[0]; i++)
            for (c = 0; c < ct[1]; c++)
                bad += b[i * ct[1] + c] != value(s, st[0] + i, st[1] + c);
        MT_CHECK(bad == 0, "step %llu: %d values of g differ", (unsigned long long) s, bad);
        free(b);
        MT_XFER_OK(
            xfer_decompose(all ? XFER_SELECT_ALL : XFER_SELECT_ROWS, 1, ydims, n, me, st, ct));
        MT_XFER_OK(xfer_get(ch, "y", y, (size_t) ct[0] * sizeof(double), &d));
        MT_CHECK(d.dims[0] == s + 1 && d.start[0] == st[0] && d.count[0] == ct[0],
                 "step %llu: y's shape or selection", (unsigned long long) s);
        for (i = 0; i < ct[0]; i++)
            MT_CHECK(y[i] == (double) (s * 100 + st[0] + i), "step %llu: y[%llu]",
                     (unsigned long long) s, (unsigned long long) (st[0] + i));
        MT_XFER_OK(xfer_step_end(ch));
    }
}

int main(int argc, char **argv)
{
    xfer_t *x = NULL;
    xfer_channel_t *ch = NULL;
    xfer_role_t role;
    MPI_Comm comm;
    int me, n, rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_world_rank);
    all = argc > 1 && strcmp(argv[1], "all") == 0;
    MT_XFER_OK(xfer_init(NULL, NULL, MPI_COMM_WORLD, &x));
    MT_XFER_OK(xfer_comm(x, &comm));
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    MT_XFER_OK(xfer_channel_open(x, "c", &ch));
    MT_XFER_OK(xfer_channel_role(ch, &role));
    if (role == XFER_ROLE_SEND)
        sender(ch, me);
    else
        receiver(ch, me, n);
    MT_XFER_OK(xfer_finalize(&x));
    rc = mt_finish("test_variable");
    MPI_Finalize();
    return rc;
}
