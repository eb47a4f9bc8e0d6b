/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer-demo: move a dataset from group A (the first P ranks of MPI_COMM_WORLD, the
 * "simulation") to group B (the rest, the "analysis") with every algorithm, in half duplex
 * (A -> B) and full duplex (both ways), and print the time of each next to the MPI library's
 * own intercommunicator MPI_Allgather. Every result is verified.
 *
 *   mpiexec -n P+Q xfer-demo --p P [--sizes 64K,1M,4M] [--iters 10] [--warmup 2]
 *                            [--algos native,root_gather,...] [--duplex half|full|both]
 *
 * Timing: each call starts after a barrier; its time is the maximum over all ranks. The
 * algorithms' calls are interleaved (one call of each in turn, per iteration) so that the
 * machine's slow spells hit all alike. The table shows the median and minimum over the
 * iterations; "vs native" is native's median divided by the algorithm's (> 1: faster than the
 * MPI library).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <xfer/xfer.h>

#define MAXALG              16
#define MAXSIZES            16
#define XFER_DEMO_MAX(a, b) ((a) > (b) ? (a) : (b))

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static long parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k')
        v *= 1024;
    else if (*end == 'M' || *end == 'm')
        v *= 1024 * 1024;
    else if (*end == 'G' || *end == 'g')
        v *= 1024.0 * 1024 * 1024;
    return (long) v;
}

static int split_list(char *s, char **out, int max)
{
    int n = 0;
    char *tok = strtok(s, ",");
    while (tok && n < max) {
        out[n++] = tok;
        tok = strtok(NULL, ",");
    }
    return n;
}

static unsigned char pattern(int group, int rank, long i)
{
    return (unsigned char) (group * 97 + rank * 31 + i * 7 + (i >> 10));
}

static void usage(void)
{
    fprintf(stderr,
            "usage: mpiexec -n P+Q xfer-demo --p P [--sizes 64K,1M] [--iters N] [--warmup W]\n"
            "                                [--algos a,b,...] [--duplex half|full|both]\n");
}

typedef struct {
    double median, min;
    int ok;
    xfer_status_t st;
} result_t;

/* One call, timed after a barrier; the time is the maximum over all ranks, the status the
 * worst over all ranks. */
static xfer_status_t timed_call(MPI_Comm inter, const char *algo, int scount, int rcount,
                                unsigned char *sbuf, unsigned char *rbuf, double *t)
{
    xfer_coll_opts_t opts;
    double t0, dt;
    xfer_status_t st, worst;

    xfer_coll_opts_init(&opts);
    opts.algorithm = algo;
    opts.fallback = XFER_FALLBACK_ERROR;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    st = xfer_allgather_inter(sbuf, scount, MPI_BYTE, rbuf, rcount, MPI_BYTE, inter, &opts);
    dt = MPI_Wtime() - t0;
    MPI_Allreduce(&dt, t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&st, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return worst;
}

/* Every rank's result equal to the other group's pattern? (collective) */
static int verified(int group, int nremote, long bytes, const unsigned char *rbuf, int recvs)
{
    int j, bad = 0, anybad = 0;
    long i;
    for (j = 0; recvs && j < nremote && !bad; j++)
        for (i = 0; i < bytes; i++)
            if (rbuf[(size_t) j * (size_t) bytes + (size_t) i] != pattern(1 - group, j, i)) {
                bad = 1;
                break;
            }
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return !anybad;
}

/* Time every algorithm on one size and duplex mode. Iterations are interleaved (call 1 of
 * every algorithm, then call 2 ...) so that a slow spell of the machine hits all alike. The
 * last call of each algorithm is verified. */
static void run_all(MPI_Comm inter, int group, int nremote, char **alg, int nalg, long bytes,
                    int full, int iters, int warmup, unsigned char *sbuf, unsigned char *rbuf,
                    result_t *res)
{
    const int sends = full || group == 0, recvs = full || group == 1;
    const int scount = sends ? (int) bytes : 0, rcount = recvs ? (int) bytes : 0;
    const size_t rbytes = (size_t) bytes * (size_t) nremote;
    double *t = calloc((size_t) nalg * (size_t) iters, sizeof(double));
    int it, a;

    memset(res, 0, (size_t) nalg * sizeof(*res));
    for (it = -warmup; it < iters; it++)
        for (a = 0; a < nalg; a++) {
            double dt = 0;
            if (res[a].st != XFER_SUCCESS)
                continue;
            if (it == iters - 1)
                memset(rbuf, 0, rbytes);
            res[a].st = timed_call(inter, alg[a], scount, rcount, sbuf, rbuf, &dt);
            if (it >= 0)
                t[(size_t) a * (size_t) iters + (size_t) it] = dt;
            if (it == iters - 1 && res[a].st == XFER_SUCCESS)
                res[a].ok = verified(group, nremote, bytes, rbuf, recvs);
        }
    for (a = 0; a < nalg; a++) {
        double *ta = t + (size_t) a * (size_t) iters;
        qsort(ta, (size_t) iters, sizeof(double), cmp_double);
        res[a].median = iters % 2 ? ta[iters / 2] : 0.5 * (ta[iters / 2 - 1] + ta[iters / 2]);
        res[a].min = ta[0];
    }
    free(t);
}

static const char *human(long b, char *buf, size_t len)
{
    if (b >= 1024 * 1024 && b % (1024 * 1024) == 0)
        snprintf(buf, len, "%ld MiB", b / (1024 * 1024));
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%ld KiB", b / 1024);
    else
        snprintf(buf, len, "%ld B", b);
    return buf;
}

int main(int argc, char **argv)
{
    int p = -1, iters = 10, warmup = 2, nalg, nsizes, wrank, wsize, group, rank, nremote, i, a;
    int s, d, dmin = 0, dmax = 1, failures = 0;
    char algos_default[512] = "";
    char sizes_default[] = "1M";
    char *algos_arg = algos_default, *sizes_arg = sizes_default, *alg[MAXALG], *sz[MAXSIZES];
    long sizes[MAXSIZES], maxsize = 0;
    MPI_Comm local, inter;
    unsigned char *sbuf, *rbuf;
    struct rusage ru;
    long rss, rssmax;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--p") && i + 1 < argc)
            p = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--algos") && i + 1 < argc)
            algos_arg = argv[++i];
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            sizes_arg = argv[++i];
        else if (!strcmp(argv[i], "--duplex") && i + 1 < argc) {
            i++;
            dmin = !strcmp(argv[i], "full");
            dmax = strcmp(argv[i], "half") ? 1 : 0;
        } else {
            if (wrank == 0)
                usage();
            MPI_Finalize();
            return 2;
        }
    }
    if (p < 0)
        p = wsize / 2;
    if (p < 1 || p >= wsize || iters < 1 || warmup < 0) {
        if (wrank == 0) {
            fprintf(stderr, "xfer-demo: need 1 <= p < %d ranks and iters >= 1\n", wsize);
            usage();
        }
        MPI_Finalize();
        return 2;
    }
    if (algos_arg == algos_default) { /* every registered algorithm, then auto */
        xfer_algo_info_t info;
        int n = 0;
        xfer_algorithm_count(&n);
        for (i = 0; i < n && xfer_algorithm_info(i, &info) == XFER_SUCCESS; i++) {
            strncat(algos_default, info.name, sizeof(algos_default) - strlen(algos_default) - 2);
            strcat(algos_default, ",");
        }
        strncat(algos_default, "auto", sizeof(algos_default) - strlen(algos_default) - 1);
    }
    nalg = split_list(algos_arg, alg, MAXALG);
    for (a = 1; a < nalg; a++) /* native first: the others are compared with it */
        if (!strcmp(alg[a], "native")) {
            char *t = alg[0];
            alg[0] = alg[a];
            alg[a] = t;
        }
    nsizes = split_list(sizes_arg, sz, MAXSIZES);
    for (s = 0; s < nsizes; s++) {
        sizes[s] = parse_size(sz[s]);
        if (sizes[s] <= 0 || sizes[s] > (1L << 30)) {
            if (wrank == 0)
                fprintf(stderr, "xfer-demo: bad size \"%s\"\n", sz[s]);
            MPI_Finalize();
            return 2;
        }
        if (sizes[s] > maxsize)
            maxsize = sizes[s];
    }

    group = wrank < p ? 0 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, group, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, group ? 0 : p, 99, &inter);
    MPI_Comm_rank(local, &rank);
    MPI_Comm_remote_size(inter, &nremote);
    sbuf = malloc((size_t) maxsize);
    rbuf = malloc((size_t) maxsize * (size_t) nremote);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "xfer-demo: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (i = 0; i < maxsize; i++)
        sbuf[i] = pattern(group, rank, i);

    if (wrank == 0) {
        printf("xfer-demo: libxfer %s on %s; group A (producer) p=%d, group B (consumer) q=%d; "
               "%d iterations after %d warm-up; time = max over ranks, per call\n\n",
               XFER_VERSION_STRING, XFER_MPI_FLAVOR, p, wsize - p, iters, warmup);
        printf("| bytes/rank | duplex | algorithm   | median ms | min ms  | vs native | "
               "GB/s busiest rcvr | verified |\n");
        printf("|-----------:|--------|-------------|----------:|--------:|----------:|"
               "------------------:|----------|\n");
    }
    for (s = 0; s < nsizes; s++)
        for (d = dmin; d <= dmax; d++) {
            char *run[MAXALG];
            result_t res[MAXALG];
            int nrun = 0;
            for (a = 0; a < nalg; a++) /* half-duplex algorithms cannot run full duplex */
                if (!(d == 1 && (!strcmp(alg[a], "fc_half") || !strcmp(alg[a], "ring_half"))))
                    run[nrun++] = alg[a];
            run_all(inter, group, nremote, run, nrun, sizes[s], d, iters, warmup, sbuf, rbuf, res);
            for (a = 0; a < nrun && wrank == 0; a++) {
                const double native =
                    !strcmp(run[0], "native") && res[0].st == XFER_SUCCESS ? res[0].median : 0.0;
                char hb[32], ratio[16] = "-";
                if (res[a].st != XFER_SUCCESS) {
                    printf("| %10s | %-6s | %-11s | failed: %s |\n", human(sizes[s], hb, 32),
                           d ? "full" : "half", run[a], xfer_status_string(res[a].st));
                    failures++;
                    continue;
                }
                failures += !res[a].ok;
                if (native > 0)
                    snprintf(ratio, sizeof(ratio), "%.2fx", native / res[a].median);
                printf("| %10s | %-6s | %-11s | %9.3f | %7.3f | %9s | %17.2f | %-8s |\n",
                       human(sizes[s], hb, 32), d ? "full" : "half", run[a], 1e3 * res[a].median,
                       1e3 * res[a].min, ratio,
                       (double) sizes[s] * (d ? XFER_DEMO_MAX(p, wsize - p) : p) / res[a].median /
                           1e9,
                       res[a].ok ? "yes" : "NO");
            }
        }
    getrusage(RUSAGE_SELF, &ru);
    rss = ru.ru_maxrss;
    MPI_Reduce(&rss, &rssmax, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("\npeak RSS (max over ranks): %ld KiB; %s\n", rssmax,
               failures ? "SOME RESULTS FAILED" : "all results verified");
    free(sbuf);
    free(rbuf);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    MPI_Finalize();
    return failures ? 1 : 0;
}
