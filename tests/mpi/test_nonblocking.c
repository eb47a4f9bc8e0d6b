/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer_test never blocks, whatever the plan: flat schedules, node staging (flags and barrier
 * modes, an embedded inner algorithm, hier:direct's run-time roles) and native. Group B starts
 * every operation 1 s late; group A starts at once and polls with xfer_test, timing each call.
 * Every call must return within XFER_TEST_MAX_MS (far below the 2 s a blocking test would take),
 * the operation must complete, and its result must equal native MPI_Allgather's byte for byte.
 * Run with virtual nodes (XFER_NODE_SIZE) so that the hierarchical plans stage.
 *
 * Usage: mpiexec -n P+Q test_nonblocking --p P
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include <xfer/xfer.h>

#include "../support/mpitest.h"

#define LATE_MS 1000
/* A blocking test would take about LATE_MS in one call and return after one or two calls: every
 * call must take under half of it, and the early side must have polled at least MIN_POLLS times.
 * (The tests oversubscribe 2 cores, and Open MPI then yields the processor inside its progress
 * calls, so single calls of a few ms, even tens, are preemption, not blocking; they are
 * reported: 73 ms at worst under a load of 12 on 2 cores. Half a second is still several times
 * that; 2 s late, as before, only doubled the time of the 20 cases.) */
#define XFER_TEST_MAX_MS  500.0
#define XFER_TEST_SLOW_MS 1.0
#define MIN_POLLS         20
#define COUNT             3000 /* ints per rank */

static void one(const mt_inter_t *ic, const char *algo, xfer_hier_sync_t sync, int half)
{
    const int g = ic->group, nr = ic->nremote;
    const int scount = half && g == 1 ? 0 : COUNT, rcount = half && g == 0 ? 0 : COUNT;
    const char *ran = "?";
    int *sbuf = calloc(COUNT + 1, sizeof(int)),
        *rbuf = calloc((size_t) nr * COUNT + 1, sizeof(int));
    int *rref = calloc((size_t) nr * COUNT + 1, sizeof(int)), j, done = 0, ncalls = 0, nslow = 0;
    double worst = 0.0, t0;
    xfer_coll_opts_t o;
    xfer_plan_t *plan = NULL;
    xfer_status_t st;

    for (j = 0; j < scount; j++)
        sbuf[j] = mt_value(g, ic->rank, j, 7);
    MT_MPI(MPI_Allgather(sbuf, scount, MPI_INT, rref, rcount, MPI_INT, ic->inter));
    xfer_coll_opts_init(&o);
    o.algorithm = algo;
    o.fallback = XFER_FALLBACK_ERROR;
    o.hier_sync = sync;
    o.timeout_ms = 30000; /* a hang fails instead of stalling the suite */
    st = xfer_allgather_inter_init(sbuf, scount, MPI_INT, rbuf, rcount, MPI_INT, ic->inter, &o,
                                   &plan);
    MT_CHECK(st == XFER_SUCCESS, "%s: init: %s", algo, xfer_last_error());
    if (st != XFER_SUCCESS)
        goto out;
    xfer_plan_algorithm(plan, &ran);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (g == 1) { /* the late group */
        struct timespec ts = {LATE_MS / 1000, (LATE_MS % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        st = xfer_start(plan);
        if (st == XFER_SUCCESS)
            st = xfer_wait(plan);
        MT_CHECK(st == XFER_SUCCESS, "%s: late side: %s", algo, xfer_last_error());
    } else {
        t0 = MPI_Wtime();
        st = xfer_start(plan);
        worst = MPI_Wtime() - t0;
        while (st == XFER_SUCCESS && !done) {
            const double t = MPI_Wtime();
            st = xfer_test(plan, &done);
            const double dt = MPI_Wtime() - t;
            worst = dt > worst ? dt : worst;
            nslow += 1e3 * dt > XFER_TEST_SLOW_MS;
            ncalls++;
        }
        MT_CHECK(st == XFER_SUCCESS, "%s: early side: %s", algo, xfer_last_error());
        MT_CHECK(1e3 * worst < XFER_TEST_MAX_MS,
                 "%s%s%s: an xfer_start/xfer_test call took %.1f ms while the other group was "
                 "%d ms late",
                 algo, sync == XFER_HIER_SYNC_BARRIER ? " (barrier)" : "", half ? " half" : "",
                 1e3 * worst, LATE_MS);
        MT_CHECK(ncalls >= MIN_POLLS || !rcount,
                 "%s%s: xfer_test returned only %d times while the other group was %d ms late "
                 "(rank %d)",
                 algo, half ? " half" : "", ncalls, LATE_MS, ic->rank);
    }
    MT_CHECK(memcmp(rbuf, rref, (size_t) nr * (size_t) rcount * sizeof(int)) == 0,
             "%s%s: result differs from native MPI_Allgather", algo, half ? " half" : "");
    if (ic->group == 0 && ic->rank == 0)
        printf("%-14s (%s) %-7s %-4s slowest xfer_test %.3f ms, %d of %d calls over %.0f ms\n",
               algo, ran, sync == XFER_HIER_SYNC_BARRIER ? "barrier" : "flags",
               half ? "half" : "full", 1e3 * worst, nslow, ncalls, XFER_TEST_SLOW_MS);
out:
    xfer_plan_free(&plan);
    free(sbuf);
    free(rbuf);
    free(rref);
}

int main(int argc, char **argv)
{
    static const char *algos[] = {"fc_full",      "ring",      "root_gather", "native",     "hier",
                                  "hier:fc_full", "hier:ring", "hier:native", "hier:direct"};
    mt_inter_t ic;
    int p = -1, a, half, rc;

    MPI_Init(&argc, &argv);
    for (a = 1; a < argc; a++)
        if (strcmp(argv[a], "--p") == 0 && a + 1 < argc)
            p = atoi(argv[++a]);
    mt_make_inter(p, "block", &ic);
    for (a = 0; a < (int) (sizeof(algos) / sizeof(algos[0])); a++)
        for (half = 0; half < 2; half++)
            one(&ic, algos[a], XFER_HIER_SYNC_FLAGS, half);
    one(&ic, "hier", XFER_HIER_SYNC_BARRIER, 0); /* node barriers: nonblocking barriers, polled */
    one(&ic, "hier:fc_half", XFER_HIER_SYNC_FLAGS, 1);
    mt_free_inter(&ic);
    rc = mt_finish("test_nonblocking");
    MPI_Finalize();
    return rc;
}
