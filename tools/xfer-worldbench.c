/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer-worldbench: what libxfer_world.so costs per MPI call (bench/world-bench.sh). Run as every
 * application context of one MPMD launch; each context times, on its own processes,
 *   MPI_Allreduce of 8 bytes and MPI_Sendrecv of 1 MiB round a ring, and MPI_Comm_rank (no
 *   communication: what is left is the call, so the interposer's own cost shows best),
 * on MPI_COMM_WORLD (--comm world: under the interposer, the component's world) or on a
 * communicator it splits from the job's world by MPI_APPNUM itself (--comm split: the same
 * processes, every call straight to the MPI library). Prints, on each context's rank 0, the
 * median, min and max per call (us) over --reps repetitions of --calls calls.
 *   mpiexec -n 2 xfer-worldbench --comm split : -n 2 xfer-worldbench --comm split
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *mode = "world";
    int calls = 2000, reps = 15, i, r, rank, size, color = 0, *app = NULL, flag = 0;
    double *t_ar, *t_sr, *t_cr, in = 1.0, out = 0.0;
    int me;
    char *sbuf, *rbuf;
    const int big = 1 << 20;
    MPI_Comm comm = MPI_COMM_WORLD;

    MPI_Init(&argc, &argv);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--comm") && i + 1 < argc)
            mode = argv[++i];
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: xfer-worldbench [--comm world|split] [--calls N] [--reps R]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (calls < 1 || reps < 1 || (strcmp(mode, "world") && strcmp(mode, "split"))) {
        fprintf(stderr, "xfer-worldbench: bad arguments\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!strcmp(mode, "split")) {
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &app, &flag);
        color = flag && app ? *app : 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_split(MPI_COMM_WORLD, color, rank, &comm);
    }
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    t_ar = malloc(sizeof(double) * (size_t) reps);
    t_sr = malloc(sizeof(double) * (size_t) reps);
    t_cr = malloc(sizeof(double) * (size_t) reps);
    sbuf = calloc(1, (size_t) big);
    rbuf = calloc(1, (size_t) big);
    if (!t_ar || !t_sr || !t_cr || !sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (r = -1; r < reps; r++) { /* r = -1: warm-up */
        double t0;
        MPI_Barrier(comm);
        t0 = MPI_Wtime();
        for (i = 0; i < calls; i++)
            MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, comm);
        if (r >= 0)
            t_ar[r] = (MPI_Wtime() - t0) / calls * 1e6;
        MPI_Barrier(comm);
        t0 = MPI_Wtime();
        for (i = 0; i < calls / 20 + 1; i++)
            MPI_Sendrecv(sbuf, big, MPI_BYTE, (rank + 1) % size, 5, rbuf, big, MPI_BYTE,
                         (rank - 1 + size) % size, 5, comm, MPI_STATUS_IGNORE);
        if (r >= 0)
            t_sr[r] = (MPI_Wtime() - t0) / (calls / 20 + 1) * 1e6;
        t0 = MPI_Wtime();
        for (i = 0; i < 100 * calls; i++)
            MPI_Comm_rank(comm, &me);
        if (r >= 0)
            t_cr[r] = (MPI_Wtime() - t0) / (100.0 * calls) * 1e9;
    }
    MPI_Allreduce(MPI_IN_PLACE, t_ar, reps, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, t_sr, reps, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, t_cr, reps, MPI_DOUBLE, MPI_MIN, comm);
    qsort(t_ar, (size_t) reps, sizeof(double), by_value);
    qsort(t_sr, (size_t) reps, sizeof(double), by_value);
    qsort(t_cr, (size_t) reps, sizeof(double), by_value);
    if (rank == 0)
        printf("xfer-worldbench comm=%s ranks=%d allreduce8_us median=%.3f min=%.3f max=%.3f "
               "sendrecv1MiB_us median=%.1f min=%.1f max=%.1f comm_rank_ns median=%.2f min=%.2f\n",
               mode, size, t_ar[reps / 2], t_ar[0], t_ar[reps - 1], t_sr[reps / 2], t_sr[0],
               t_sr[reps - 1], t_cr[reps / 2], t_cr[0]);
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    free(t_ar);
    free(t_sr);
    free(t_cr);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
