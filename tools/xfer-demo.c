/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer-demo: move a dataset from group A (the first P ranks of MPI_COMM_WORLD, the
 * "simulation") to group B (the rest, the "analysis") with every algorithm, in half duplex
 * (A -> B) and full duplex (both ways), and print the time of each next to the MPI library's
 * own intercommunicator MPI_Allgather. Every result is verified.
 *
 *   mpiexec -n P+Q xfer-demo --p P [--sizes 64K,1M,4M] [--iters 10] [--warmup 2]
 *                            [--algos native,root_gather,...] [--duplex half|full|both]
 *                            [--delay-us D] [--delay-group A|B|both] [--seed S]
 *                            [--link-mbit R]
 *
 * An algorithm may carry options for node staging: "hier:direct+barrier" (node barriers instead
 * of flags), "hier:fc_half+s2" (two senders per node).
 *
 * Arrival imbalance: with --delay-us D every rank sleeps a pseudo-random 0..D us (seeded by S,
 * the rank and the iteration) after the barrier before it calls -- only the ranks of group A
 * (producers) or B (consumers) with --delay-group -- and the table reports, as the
 * imbalance literature does, the latency after the last arrival (latest exit - latest entry)
 * and the mean time a rank spends in the call. Entries and exits of different ranks are compared
 * with MPI_Wtime, so this needs one clock: true on one machine (the emulated cluster included).
 *
 * "copies" is the mean time a rank spends copying through node shared memory (node staging),
 * "between" the longest time a rank spends moving data between the groups (for a flat algorithm
 * the whole call), both from xfer_last_op_stats.
 *
 * --link-mbit R prints the lower bound of a node-link limited network (every node of the
 * receiving group must take in all the remote data through its link at R Mbit/s) and each
 * algorithm's share of it.
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
#include <time.h>

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
            "                                [--algos a,b,...] [--duplex half|full|both]\n"
            "                                [--delay-us D] [--delay-group A|B|both] [--seed S]\n"
            "                                [--link-mbit R]\n");
}

typedef struct {
    double median, min;    /* time: max over ranks from the barrier, or after last arrival */
    double mean_in, after; /* medians, with delays: mean time in call, after last arrival */
    double intra, inter;   /* medians: mean copy time, longest time between the groups */
    int ok;
    xfer_status_t st;
} result_t;

typedef struct {
    double t;       /* max over ranks of the call's time after the barrier (+ delay) */
    double after;   /* latest exit - latest entry */
    double mean_in; /* mean over ranks of exit - entry */
    double intra;   /* mean over ranks of the time in node copies (xfer_last_op_stats) */
    double inter;   /* max over ranks of the time moving data between the groups */
} timing_t;

static long delay_us = 0;
static int delay_group = -1; /* 0: A, 1: B, -1: both */
static int p_ranks = 0;      /* world ranks [0, p) form group A */
static unsigned seed = 1;

/* Deterministic delay of this rank in iteration @p it (microseconds). */
static long delay_for(int wrank, int it)
{
    unsigned x =
        seed * 2654435761u ^ (unsigned) (wrank + 1) * 40503u ^ (unsigned) (it + 7) * 69069u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    if (!delay_us || (delay_group >= 0 && (wrank >= p_ranks) != delay_group))
        return 0;
    return (long) (x % (unsigned) (delay_us + 1));
}

/* "name[+barrier|+flags][+sN]" -> options */
static void algo_opts(const char *spec, xfer_coll_opts_t *o, char *name, size_t len)
{
    char *plus;
    xfer_coll_opts_init(o);
    snprintf(name, len, "%s", spec);
    while ((plus = strrchr(name, '+')) != NULL) {
        if (!strcmp(plus, "+barrier"))
            o->hier_sync = 2;
        else if (!strcmp(plus, "+flags"))
            o->hier_sync = 1;
        else if (plus[1] == 's')
            o->hier_senders = atoi(plus + 2);
        *plus = '\0';
    }
    o->algorithm = name;
    o->fallback = XFER_FALLBACK_ERROR;
}

/* One call, timed after a barrier; times are reduced over all ranks, the status is the worst
 * over all ranks. */
static xfer_status_t timed_call(MPI_Comm inter, const char *algo, int scount, int rcount,
                                unsigned char *sbuf, unsigned char *rbuf, int it, timing_t *tm)
{
    xfer_coll_opts_t opts;
    char name[64];
    double t0, t_in, t_out, v[2], mx[2], sum_in, in;
    xfer_op_stats_t stats;
    xfer_status_t st, worst;
    int wrank, wsize;

    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    algo_opts(algo, &opts, name, sizeof(name));
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (delay_us) {
        const long d = delay_for(wrank, it);
        struct timespec ts = {d / 1000000, (d % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    t_in = MPI_Wtime();
    st = xfer_allgather_inter(sbuf, scount, MPI_BYTE, rbuf, rcount, MPI_BYTE, inter, &opts);
    t_out = MPI_Wtime();
    v[0] = t_out - t0;
    v[1] = t_in;
    MPI_Allreduce(v, mx, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    xfer_last_op_stats(&stats);
    in = t_out - t_in;
    MPI_Allreduce(&in, &sum_in, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&stats.intra_s, &tm->intra, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&stats.inter_s, &tm->inter, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    tm->intra /= wsize;
    v[0] = t_out;
    MPI_Allreduce(v, &tm->after, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    tm->after -= mx[1];
    tm->t = mx[0];
    tm->mean_in = sum_in / wsize;
    MPI_Allreduce(&st, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return worst;
}

static double median(double *x, int n)
{
    qsort(x, (size_t) n, sizeof(double), cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
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
    const size_t n = (size_t) nalg * (size_t) iters;
    double *t = calloc(5 * n, sizeof(double));
    double *ta = t + n, *tm_in = t + 2 * n, *tintra = t + 3 * n, *tinter = t + 4 * n;
    int it, a;

    memset(res, 0, (size_t) nalg * sizeof(*res));
    for (it = -warmup; it < iters; it++)
        for (a = 0; a < nalg; a++) {
            timing_t tm;
            const size_t k = (size_t) a * (size_t) iters + (size_t) it;
            if (res[a].st != XFER_SUCCESS)
                continue;
            if (it == iters - 1)
                memset(rbuf, 0, rbytes);
            res[a].st = timed_call(inter, alg[a], scount, rcount, sbuf, rbuf, it, &tm);
            if (it >= 0) {
                t[k] = tm.t;
                ta[k] = tm.after;
                tm_in[k] = tm.mean_in;
                tintra[k] = tm.intra;
                tinter[k] = tm.inter;
            }
            if (it == iters - 1 && res[a].st == XFER_SUCCESS)
                res[a].ok = verified(group, nremote, bytes, rbuf, recvs);
        }
    for (a = 0; a < nalg; a++) {
        const size_t k = (size_t) a * (size_t) iters;
        res[a].median = median(t + k, iters);
        res[a].min = t[k];
        res[a].after = median(ta + k, iters);
        res[a].mean_in = median(tm_in + k, iters);
        res[a].intra = median(tintra + k, iters);
        res[a].inter = median(tinter + k, iters);
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

/* Shared-memory nodes of each group and the most ranks on one (collective). */
static void node_layout(MPI_Comm local, int group, int nodes[2], int ppn[2])
{
    MPI_Comm node;
    int nsize, nrank, v[4] = {0, 0, 0, 0}, r[4];
    MPI_Comm_split_type(local, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_rank(node, &nrank);
    v[group] = nrank == 0;
    v[2 + group] = nsize;
    MPI_Allreduce(v, r, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(v + 2, r + 2, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    nodes[0] = r[0];
    nodes[1] = r[1];
    ppn[0] = r[2];
    ppn[1] = r[3];
    MPI_Comm_free(&node);
}

int main(int argc, char **argv)
{
    int p = -1, iters = 10, warmup = 2, nalg, nsizes, wrank, wsize, group, rank, nremote, i, a;
    int s, d, dmin = 0, dmax = 1, failures = 0;
    char algos_default[512] = "";
    char sizes_default[] = "1M";
    char *algos_arg = algos_default, *sizes_arg = sizes_default, *alg[MAXALG], *sz[MAXSIZES];
    long sizes[MAXSIZES], maxsize = 0;
    char hb[32];
    MPI_Comm local, inter;
    unsigned char *sbuf, *rbuf;
    struct rusage ru;
    long rss, rssmax;
    double link_mbit = 0.0;
    int nodes[2], ppn[2];

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
        else if (!strcmp(argv[i], "--delay-us") && i + 1 < argc)
            delay_us = atol(argv[++i]);
        else if (!strcmp(argv[i], "--delay-group") && i + 1 < argc) {
            i++;
            delay_group = !strcmp(argv[i], "A") ? 0 : !strcmp(argv[i], "B") ? 1 : -1;
            if (delay_group < 0 && strcmp(argv[i], "both"))
                delay_us = -1; /* reported as bad input below */
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = (unsigned) atol(argv[++i]);
        else if (!strcmp(argv[i], "--link-mbit") && i + 1 < argc)
            link_mbit = atof(argv[++i]);
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
    p_ranks = p;
    if (p < 1 || p >= wsize || iters < 1 || warmup < 0 || delay_us < 0 || link_mbit < 0) {
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

    node_layout(local, group, nodes, ppn);
    if (wrank == 0) {
        printf("xfer-demo: libxfer %s on %s; group A (producer) p=%d on %d node(s) (<= %d per "
               "node), group B (consumer) q=%d on %d node(s) (<= %d per node); %d iterations "
               "after %d warm-up\n",
               XFER_VERSION_STRING, XFER_MPI_FLAVOR, p, nodes[0], ppn[0], wsize - p, nodes[1],
               ppn[1], iters, warmup);
        if (delay_us)
            printf("arrival delays: 0..%ld us per rank of %s and call (seed %u); after last = "
                   "latest exit - latest entry, in call = mean over ranks; medians over "
                   "iterations\n\n",
                   delay_us,
                   delay_group < 0 ? "both groups"
                   : delay_group   ? "group B"
                                   : "group A",
                   seed);
        else
            printf("time = max over ranks per call (median and minimum over iterations)\n\n");
        if (delay_us)
            printf("| bytes/rank | duplex | algorithm            | after last ms | in call ms | "
                   "vs native | copies ms | between ms | verified |\n"
                   "|-----------:|--------|----------------------|--------------:|-----------:|"
                   "----------:|----------:|-----------:|----------|\n");
        else
            printf(
                "| bytes/rank | duplex | algorithm            | median ms | min ms  | vs native | "
                "%s | copies ms | between ms | verified |\n"
                "|-----------:|--------|----------------------|----------:|--------:|----------:|"
                "%s|----------:|-----------:|----------|\n",
                link_mbit > 0 ? "of link bound" : "GB/s busiest rcvr",
                link_mbit > 0 ? "--------------:" : "------------------:");
    }
    for (s = 0; s < nsizes; s++)
        for (d = dmin; d <= dmax; d++) {
            char *run[MAXALG];
            result_t res[MAXALG];
            int nrun = 0;
            /* every receiving node takes in all the remote data through its link */
            const double bound = link_mbit > 0
                                     ? (double) sizes[s] * (d ? XFER_DEMO_MAX(p, wsize - p) : p) *
                                           8.0 / (link_mbit * 1e6)
                                     : 0.0;
            for (a = 0; a < nalg; a++) /* half-duplex algorithms cannot run full duplex */
                if (!(d == 1 && (strstr(alg[a], "fc_half") || strstr(alg[a], "ring_half"))))
                    run[nrun++] = alg[a];
            run_all(inter, group, nremote, run, nrun, sizes[s], d, iters, warmup, sbuf, rbuf, res);
            if (wrank == 0 && bound > 0 && !delay_us)
                printf("| %10s | %-6s | %-20s | %9.3f |         |           | %13s |           |"
                       "            | -        |\n",
                       human(sizes[s], hb, 32), d ? "full" : "half", "(link lower bound)",
                       1e3 * bound, "1.00");
            for (a = 0; a < nrun && wrank == 0; a++) {
                const int nat_ok = !strcmp(run[0], "native") && res[0].st == XFER_SUCCESS;
                char ratio[16] = "-";
                if (res[a].st != XFER_SUCCESS) {
                    printf("| %10s | %-6s | %-20s | failed: %s |\n", human(sizes[s], hb, 32),
                           d ? "full" : "half", run[a], xfer_status_string(res[a].st));
                    failures++;
                    continue;
                }
                failures += !res[a].ok;
                if (delay_us) {
                    if (nat_ok)
                        snprintf(ratio, sizeof(ratio), "%.2fx", res[0].after / res[a].after);
                    printf(
                        "| %10s | %-6s | %-20s | %13.3f | %10.3f | %9s | %9.3f | %10.3f | %-8s |\n",
                        human(sizes[s], hb, 32), d ? "full" : "half", run[a], 1e3 * res[a].after,
                        1e3 * res[a].mean_in, ratio, 1e3 * res[a].intra, 1e3 * res[a].inter,
                        res[a].ok ? "yes" : "NO");
                    continue;
                }
                if (nat_ok)
                    snprintf(ratio, sizeof(ratio), "%.2fx", res[0].median / res[a].median);
                if (bound > 0)
                    printf(
                        "| %10s | %-6s | %-20s | %9.3f | %7.3f | %9s | %13.2f | %9.3f | %10.3f | "
                        "%-8s |\n",
                        human(sizes[s], hb, 32), d ? "full" : "half", run[a], 1e3 * res[a].median,
                        1e3 * res[a].min, ratio, bound / res[a].median, 1e3 * res[a].intra,
                        1e3 * res[a].inter, res[a].ok ? "yes" : "NO");
                else
                    printf(
                        "| %10s | %-6s | %-20s | %9.3f | %7.3f | %9s | %17.2f | %9.3f | %10.3f | "
                        "%-8s |\n",
                        human(sizes[s], hb, 32), d ? "full" : "half", run[a], 1e3 * res[a].median,
                        1e3 * res[a].min, ratio,
                        (double) sizes[s] * (d ? XFER_DEMO_MAX(p, wsize - p) : p) / res[a].median /
                            1e9,
                        1e3 * res[a].intra, 1e3 * res[a].inter, res[a].ok ? "yes" : "NO");
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
