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
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <xfer/xfer.h>

#include "common/cli.h"
#include "xbench.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiexec -n P+Q xfer-demo [--p P] [--sizes 64K,1M] [--iters N] [--warmup W]\n"
            "                                [--algos a,b,...] [--duplex half|full|both]\n"
            "                                [--delay-us D] [--delay-group A|B|both] [--seed S]\n"
            "                                [--link-mbit R] [-h|--help] [--version]\n"
            "Moves a dataset between two groups of the job (P ranks, default half, and the rest)\n"
            "with every algorithm beside the MPI library's own MPI_Allgather: time, ratio,\n"
            "verified.\n");
}

int main(int argc, char **argv)
{
    int p = -1, iters = 10, warmup = 2, nalg, nsizes, i, a, s, d, dmin = 0, dmax = 1;
    int failures = 0, delay_group = -1, wsize, wrank;
    char algos_default[512] = "";
    char sizes_default[] = "1M";
    char *algos_arg = algos_default, *sizes_arg = sizes_default, *alg[XB_MAXALG];
    long sizes[XB_MAXSIZES], maxsize = 0, delay_us = 0;
    unsigned seed = 1;
    char hb[32];
    unsigned char *sbuf, *rbuf;
    struct rusage ru;
    long rss, rssmax;
    double link_mbit = 0.0;
    xb_setup_t su;

    {
        enum {
            O_P = 256,
            O_ITERS,
            O_WARMUP,
            O_ALGOS,
            O_SIZES,
            O_DELAY,
            O_DGROUP,
            O_SEED,
            O_LINK,
            O_DUPLEX,
            O_VERSION
        };
        static const struct option longopts[] = {{"p", required_argument, NULL, O_P},
                                                 {"iters", required_argument, NULL, O_ITERS},
                                                 {"warmup", required_argument, NULL, O_WARMUP},
                                                 {"algos", required_argument, NULL, O_ALGOS},
                                                 {"sizes", required_argument, NULL, O_SIZES},
                                                 {"delay-us", required_argument, NULL, O_DELAY},
                                                 {"delay-group", required_argument, NULL, O_DGROUP},
                                                 {"seed", required_argument, NULL, O_SEED},
                                                 {"link-mbit", required_argument, NULL, O_LINK},
                                                 {"duplex", required_argument, NULL, O_DUPLEX},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {"version", no_argument, NULL, O_VERSION},
                                                 {NULL, 0, NULL, 0}};
        const char *prog = "xfer-demo";
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
            switch (c) {
            case 'h':
                usage(stdout);
                return 0;
            case O_VERSION:
                xfer_cli_version(prog);
                return 0;
            case O_P:
                p = (int) xfer_cli_long(prog, "--p", optarg, 1, 1 << 20);
                break;
            case O_ITERS:
                iters = (int) xfer_cli_long(prog, "--iters", optarg, 1, 1 << 30);
                break;
            case O_WARMUP:
                warmup = (int) xfer_cli_long(prog, "--warmup", optarg, 0, 1 << 30);
                break;
            case O_ALGOS:
                algos_arg = optarg;
                break;
            case O_SIZES:
                sizes_arg = optarg;
                break;
            case O_DELAY:
                delay_us = xfer_cli_long(prog, "--delay-us", optarg, 0, 1L << 40);
                break;
            case O_DGROUP:
                if (!strcmp(optarg, "A"))
                    delay_group = 0;
                else if (!strcmp(optarg, "B"))
                    delay_group = 1;
                else if (strcmp(optarg, "both"))
                    xfer_cli_usage_error(prog, "--delay-group: expected A, B or both, got \"%s\"",
                                         optarg);
                break;
            case O_SEED:
                seed = (unsigned) xfer_cli_long(prog, "--seed", optarg, 0, 4294967295L);
                break;
            case O_LINK:
                link_mbit = xfer_cli_double(prog, "--link-mbit", optarg, 0, 1e9);
                break;
            case O_DUPLEX:
                if (strcmp(optarg, "half") && strcmp(optarg, "full") && strcmp(optarg, "both"))
                    xfer_cli_usage_error(prog, "--duplex: expected half, full or both, got \"%s\"",
                                         optarg);
                dmin = !strcmp(optarg, "full");
                dmax = strcmp(optarg, "half") ? 1 : 0;
                break;
            default:
                xfer_cli_bad_option(prog, c, argv);
            }
        }
        if (optind < argc)
            xfer_cli_usage_error(prog, "unexpected argument \"%s\"", argv[optind]);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (p < 0)
        p = wsize / 2;
    if (p < 1 || p >= wsize || xb_setup(&su, p) != 0) {
        if (wrank == 0)
            fprintf(stderr, "xfer-demo: --p %d: need 1 <= p < %d, the ranks of the job\n", p,
                    wsize);
        MPI_Finalize();
        return 2;
    }
    su.delay_us = delay_us;
    su.delay_group = delay_group;
    su.seed = seed;
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
    nalg = xb_split_list(algos_arg, alg, XB_MAXALG);
    nsizes = xb_parse_sizes(sizes_arg, sizes, &maxsize);
    if (nalg < 1 || nsizes < 1) {
        if (su.wrank == 0)
            fprintf(stderr,
                    "xfer-demo: bad --algos or --sizes (at most %d entries each; sizes "
                    "1 B .. 1 GiB, e.g. 64K,4M)\n",
                    XB_MAXALG);
        xb_teardown(&su);
        MPI_Finalize();
        return 2;
    }
    for (a = 1; a < nalg; a++) /* native first: the others are compared with it */
        if (!strcmp(alg[a], "native")) {
            char *t = alg[0];
            alg[0] = alg[a];
            alg[a] = t;
        }

    sbuf = malloc((size_t) maxsize);
    rbuf = malloc((size_t) maxsize * (size_t) su.n[1 - su.group]);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "xfer-demo: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (i = 0; i < maxsize; i++)
        sbuf[i] = xb_pattern(su.group, su.rank, i);

    if (su.wrank == 0) {
        printf("xfer-demo: libxfer %s on %s; group A (producer) p=%d on %d node(s) (<= %d per "
               "node), group B (consumer) q=%d on %d node(s) (<= %d per node); %d iterations "
               "after %d warm-up\n",
               XFER_VERSION_STRING, XFER_MPI_FLAVOR, p, su.nodes[0], su.ppn[0], wsize - p,
               su.nodes[1], su.ppn[1], iters, warmup);
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
            char *run[XB_MAXALG];
            xb_result_t res[XB_MAXALG];
            xb_case_t c;
            const int nrun = xb_for_duplex(alg, nalg, d, run);
            double busiest, bound;
            if (xb_case_init(&c, &su, sizes[s], 0.0, d, 0) != 0) {
                fprintf(stderr, "xfer-demo: out of memory\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            /* every receiving node takes in all the remote data through its link */
            busiest = xb_busiest(&c, &su);
            bound = link_mbit > 0 ? busiest * 8.0 / (link_mbit * 1e6) : 0.0;
            xb_run(&su, &c, run, nrun, iters, warmup, 0, sbuf, rbuf, res);
            xb_case_free(&c);
            if (su.wrank == 0 && bound > 0 && !delay_us)
                printf("| %10s | %-6s | %-20s | %9.3f |         |           | %13s |           |"
                       "            | -        |\n",
                       xb_human(sizes[s], hb, 32), d ? "full" : "half", "(link lower bound)",
                       1e3 * bound, "1.00");
            for (a = 0; a < nrun && su.wrank == 0; a++) {
                const int nat_ok = !strcmp(run[0], "native") && res[0].st == XFER_SUCCESS;
                char ratio[16] = "-";
                if (res[a].st != XFER_SUCCESS) {
                    printf("| %10s | %-6s | %-20s | failed: %s |\n", xb_human(sizes[s], hb, 32),
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
                        xb_human(sizes[s], hb, 32), d ? "full" : "half", run[a], 1e3 * res[a].after,
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
                        xb_human(sizes[s], hb, 32), d ? "full" : "half", run[a],
                        1e3 * res[a].median, 1e3 * res[a].min, ratio, bound / res[a].median,
                        1e3 * res[a].intra, 1e3 * res[a].inter, res[a].ok ? "yes" : "NO");
                else
                    printf(
                        "| %10s | %-6s | %-20s | %9.3f | %7.3f | %9s | %17.2f | %9.3f | %10.3f | "
                        "%-8s |\n",
                        xb_human(sizes[s], hb, 32), d ? "full" : "half", run[a],
                        1e3 * res[a].median, 1e3 * res[a].min, ratio, busiest / res[a].median / 1e9,
                        1e3 * res[a].intra, 1e3 * res[a].inter, res[a].ok ? "yes" : "NO");
            }
            xb_results_free(res, nrun);
        }
    getrusage(RUSAGE_SELF, &ru);
    rss = ru.ru_maxrss;
    MPI_Reduce(&rss, &rssmax, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (su.wrank == 0)
        printf("\npeak RSS (max over ranks): %ld KiB; %s\n", rssmax,
               failures ? "SOME RESULTS FAILED" : "all results verified");
    free(sbuf);
    free(rbuf);
    xb_teardown(&su);
    MPI_Finalize();
    return failures ? 1 : 0;
}
