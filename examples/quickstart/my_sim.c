/* SPDX-License-Identifier: BSD-3-Clause */
/* The quickstart's producer (docs/quickstart.md): each rank puts its rows of T, 64 x 128
 * float64, every step; T[i][j] = 1e6 * step + 128 * i + j, which analysis.py checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

enum { NY = 64, NX = 128 };

/* Every call returns a status; xfer_last_error() says what went wrong. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        xfer_status_t rc_ = (call);                                                                \
        if (rc_ != XFER_SUCCESS) {                                                                 \
            fprintf(stderr, "%s: %s\n", xfer_status_name(rc_), xfer_last_error());                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    int nsteps = 3, step, provided, rank, nranks;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--steps"))
            nsteps = atoi(argv[i + 1]);

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided); /* lets steps move meanwhile */
    xfer_t *x;
    xfer_channel_t *ch;
    xfer_step_status_t st;
    CHECK(xfer_init(NULL, NULL, MPI_COMM_WORLD, &x)); /* the file and component xfer-run gives */
    CHECK(xfer_channel_open(x, "fields", &ch));

    MPI_Comm comm; /* this component's ranks */
    CHECK(xfer_comm(x, &comm));
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    uint64_t dims[2] = {NY, NX}, start[2], count[2];
    CHECK(xfer_decompose(XFER_SELECT_ROWS, 2, dims, nranks, rank, start, count));
    const uint64_t row0 = start[0], nrows = count[0];
    double *my_rows = malloc((nrows ? nrows : 1) * NX * sizeof *my_rows);

    for (step = 0; step < nsteps; step++) {
        for (uint64_t i = 0; i < nrows; i++) /* compute() */
            for (int j = 0; j < NX; j++)
                my_rows[i * NX + j] = 1e6 * step + (double) ((row0 + i) * NX + (uint64_t) j);
        CHECK(xfer_step_begin(ch, -1, &st)); /* waits for a free slot (flow control) */
        if (st == XFER_STEP_END_OF_STREAM)   /* the consumer closed the channel */
            break;
        xfer_dataset_desc_t d = {.name = "T",
                                 .type = XFER_TYPE_FLOAT64,
                                 .ndims = 2,
                                 .dims = {NY, NX},
                                 .start = {row0, 0},
                                 .count = {nrows, NX}};
        CHECK(xfer_put(ch, &d, my_rows)); /* copied: my_rows may change at once */
        CHECK(xfer_step_end(ch));
    }
    printf("sim rank %d: rows %llu-%llu, %d steps put\n", rank, (unsigned long long) row0,
           (unsigned long long) (row0 + nrows - 1), step);
    CHECK(xfer_finalize(&x)); /* delivers what was committed; the consumer's loop ends */
    free(my_rows);
    MPI_Finalize();
    return 0;
}
