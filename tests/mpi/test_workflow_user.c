/* SPDX-License-Identifier: BSD-3-Clause */
/* launch: user — the application forms the intercommunicator and attaches it — and flow
 * control: with max_in_flight_steps W the producer commits W steps while the consumer is not
 * receiving at all, and the step after them waits for the consumer.
 *
 *   test_workflow_user FILE.yaml P      (world ranks 0..P-1 produce, the others consume)
 * The file: components prod (P ranks) and cons, channel c from prod to cons, launch: user,
 * max_in_flight_steps W, dataset x: float64 [N]. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

#include "../support/mpitest.h"

#define TAG_AHEAD 71
#define TAG_PAST  72

static double value(uint64_t step, uint64_t i)
{
    return (double) (step * 1000003u + i) * 0.5;
}

int main(int argc, char **argv)
{
    int wrank, wsize, p, prod, crank, csize, w, i, k;
    MPI_Comm comp, inter;
    xfer_t *x = NULL;
    xfer_channel_t *ch;
    const xfer_config_t *cfg;
    uint64_t n, lo, cnt, s;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    mt_world_rank = wrank;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (argc != 3) {
        fprintf(stderr, "usage: test_workflow_user FILE P\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    p = atoi(argv[2]);
    prod = wrank < p;
    MPI_Comm_split(MPI_COMM_WORLD, prod, wrank, &comp);
    MPI_Intercomm_create(comp, 0, MPI_COMM_WORLD, prod ? p : 0, 9, &inter);
    MPI_Comm_rank(comp, &crank);
    MPI_Comm_size(comp, &csize);

    /* before attaching, the channel has no intercommunicator */
    MT_CHECK(xfer_init(argv[1], prod ? "prod" : "cons", comp, &x) == XFER_SUCCESS, "xfer_init: %s",
             xfer_last_error());
    MT_CHECK(xfer_channel_open(x, "c", &ch) == XFER_ERR_STATE, "open before attach");
    MT_CHECK(xfer_channel_attach(x, "c", inter) == XFER_SUCCESS, "attach: %s", xfer_last_error());
    MT_CHECK(xfer_channel_attach(x, "c", inter) == XFER_ERR_STATE, "second attach accepted");
    MT_CHECK(xfer_channel_open(x, "c", &ch) == XFER_SUCCESS, "open: %s", xfer_last_error());
    xfer_config_of(x, &cfg, NULL);
    w = cfg->channels[0].max_in_flight_steps;
    n = cfg->channels[0].datasets[0].dims[0];

    if (prod) {
        xfer_dataset_desc_t d;
        double *blk;
        memset(&d, 0, sizeof(d));
        d.name = "x";
        d.type = XFER_TYPE_FLOAT64;
        d.ndims = 1;
        d.dims[0] = n;
        lo = n * (uint64_t) crank / (uint64_t) csize;
        cnt = n * (uint64_t) (crank + 1) / (uint64_t) csize - lo;
        d.start[0] = lo;
        d.count[0] = cnt;
        blk = malloc((cnt + 1) * sizeof(double));
        for (s = 0; s < (uint64_t) w + 4; s++) {
            for (i = 0; i < (int) cnt; i++)
                blk[i] = value(s, lo + (uint64_t) i);
            MT_CHECK(xfer_put(ch, &d, blk) == XFER_SUCCESS, "put: %s", xfer_last_error());
            MT_CHECK(xfer_step_end(ch) == XFER_SUCCESS, "step_end %d: %s", (int) s,
                     xfer_last_error());
            if (s == (uint64_t) w && crank == 0) /* W steps after step 0 committed, no wait */
                for (k = 0; k < wsize - p; k++)
                    MPI_Send(&k, 1, MPI_INT, p + k, TAG_AHEAD, MPI_COMM_WORLD);
            if (s == (uint64_t) w + 1 && crank == 0)
                for (k = 0; k < wsize - p; k++)
                    MPI_Send(&k, 1, MPI_INT, p + k, TAG_PAST, MPI_COMM_WORLD);
        }
        free(blk);
    } else {
        double *buf = malloc(n * sizeof(double));
        xfer_dataset_desc_t out;
        int flag = 0, dummy;
        double t0;
        for (s = 0; s < (uint64_t) w + 4; s++) {
            if (s == 1) {
                /* the producer commits steps 1..W while nobody here receives */
                MPI_Recv(&dummy, 1, MPI_INT, 0, TAG_AHEAD, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                /* ... and its step W+1 must wait until step 1 was received: for a while,
                 * nothing may say it got past it */
                t0 = MPI_Wtime();
                while (!flag && MPI_Wtime() - t0 < 0.3)
                    MPI_Iprobe(0, TAG_PAST, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                MT_CHECK(!flag, "the producer passed step %d with %d steps in flight", w + 1, w);
            }
            MT_CHECK(xfer_get(ch, "x", buf, n * sizeof(double), &out) == XFER_SUCCESS, "get %d: %s",
                     (int) s, xfer_last_error());
            MT_CHECK(out.step == s, "step %d labelled %d", (int) s, (int) out.step);
            for (i = 0; i < (int) n; i++)
                MT_CHECK(buf[i] == value(s, (uint64_t) i), "step %d element %d: %g", (int) s, i,
                         buf[i]);
            MT_CHECK(xfer_step_end(ch) == XFER_SUCCESS, "step_end: %s", xfer_last_error());
        }
        MPI_Recv(&dummy, 1, MPI_INT, 0, TAG_PAST, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MT_CHECK(xfer_get(ch, "x", buf, n * sizeof(double), &out) == XFER_ERR_END_OF_STREAM,
                 "no end of stream: %s", xfer_last_error());
        free(buf);
    }
    MT_CHECK(xfer_finalize(&x) == XFER_SUCCESS, "finalize: %s", xfer_last_error());
    MT_CHECK(x == NULL, "finalize left the pointer");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&comp);
    k = mt_finish("test_workflow_user");
    MPI_Finalize();
    return k;
}
