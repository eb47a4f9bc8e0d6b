/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer-bench: the benchmark of the papers' comparisons. Times each algorithm against the MPI
 * library's own intercommunicator MPI_Allgather(v) ("native") and the root-gathering scheme
 * ("root_gather") in the same run, per message size and duplex mode, and prints a Markdown
 * table (and, with --csv, appends CSV rows for bench/plot).
 *
 *   mpiexec -n P+Q xfer-bench --p P [--q Q] [--algos native,root_gather,fc_half,...]
 *                 [--sizes 32K,256K,1M,4M,8M] [--duplex half|full|both] [--v SKEW]
 *                 [--iters 10] [--warmup 2] [--link-mbit R] [--csv FILE] [--label L]
 *                 [--calibrate FILE]
 *   mpiexec -n P xfer-bench [options] : -n Q xfer-bench [options]      (MPMD: app 0 is A)
 *
 * Group A (the producer) is the first P ranks of MPI_COMM_WORLD, or the first application of
 * an MPMD launch. Half duplex moves A's blocks to every rank of B; full duplex moves both
 * ways. --v SKEW calls allgatherv with per-rank sizes around the mean: rank i of a group of n
 * sends size * (1 + SKEW * (2i/(n-1) - 1)) bytes (SKEW 1: an arithmetic sequence 0 .. 2*size).
 *
 * Per case and algorithm: the median, minimum and maximum over --iters calls (after --warmup
 * untimed ones) of the per-call maximum over ranks, each call after a barrier, the algorithms'
 * calls interleaved in an order shuffled for every round of calls; every call's result verified;
 * the CSV keeps each call's time (samples_s, space-separated, in call order); the ratio of native's
 * and root_gather's medians to the algorithm's (> 1: faster); a lower bound and the fraction of it
 * achieved (bound / median); the peak RSS of one call (max over ranks, from the kernel's high-water
 * mark reset before the call); and whether the result was verified byte for byte on every rank.
 *
 * The lower bound: with --link-mbit R (a network of R Mbit/s node links, such as the emulated
 * cluster, groups on different nodes), every receiving node must take in all remote data
 * through its link: max(bytes A sends, bytes B sends) * 8 / R, with R2 instead of R in full
 * duplex when --link-mbit-two-way gives the rate per direction of a link carrying data both
 * ways at once (pass measured rates: bench/run-sweep measures both first). Without it (shared
 * memory), every received byte is written at least once: max(bytes the busiest rank receives, all
 * received bytes / online cores) / the single-core memcpy bandwidth measured at start.
 *
 * --calibrate FILE: also measure the link between A's and B's first ranks (alpha by ping-pong,
 * beta one way and per direction both ways at once) and record, for every case run, the fastest
 * algorithm that verified (registry names only: not auto, not hier:*) in FILE, the tuning file
 * `auto` reads when XFER_TUNING=FILE (format: libxfer/src/select/tuning.h). Entries of other
 * shapes already in FILE are kept, so one file collects several runs.
 *
 * Exit status: 0 when every result verified, 1 when any failed, 2 on bad usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfer/xfer.h>

#include "calibrate.h"
#include "common/cli.h"
#include "xbench.h"

#define CSV_HEADER                                                                                 \
    "algo,duplex,v,p,q,bytes_per_rank,median_s,min_s,ratio_native,ratio_root_gather,bound_s,"      \
    "frac_of_bound,peak_rss_kb,verified,status,mpi,label,nodes_a,nodes_b,ppn_a,ppn_b,iters,"       \
    "bound_kind,rss_growth_kb,max_s,samples_s\n"

typedef struct {
    char *algos, *sizes, *csv, *label, *calibrate;
    char mpi[64]; /* flavour and, for MPICH, its device */
    int p, q, iters, warmup, dmin, dmax, v;
    double skew, link_mbit, link_mbit2;
} args_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiexec -n P+Q xfer-bench --p P [--q Q] [--algos a,b,...] [--sizes 32K,1M]\n"
            "                 [--duplex half|full|both] [--v SKEW] [--iters N] [--warmup W]\n"
            "                 [--link-mbit R [--link-mbit-two-way R2]] [--csv FILE] [--label L]\n"
            "                 [--calibrate FILE] [-h|--help] [--version]\n"
            "       or an MPMD launch of two applications (the first is group A)\n"
            "Every algorithm side by side with native and root_gather; docs/benchmarks.md.\n");
}

/* Exits 0 (help, version) or 2 (a usage error) itself; called before MPI_Init. */
static void parse_args(int argc, char **argv, args_t *a)
{
    enum {
        O_P = 256,
        O_Q,
        O_ITERS,
        O_WARMUP,
        O_V,
        O_LINK,
        O_LINK2,
        O_ALGOS,
        O_SIZES,
        O_CSV,
        O_CALIB,
        O_LABEL,
        O_DUPLEX,
        O_VERSION
    };
    static const struct option longopts[] = {
        {"p", required_argument, NULL, O_P},
        {"q", required_argument, NULL, O_Q},
        {"iters", required_argument, NULL, O_ITERS},
        {"warmup", required_argument, NULL, O_WARMUP},
        {"v", required_argument, NULL, O_V},
        {"link-mbit", required_argument, NULL, O_LINK},
        {"link-mbit-two-way", required_argument, NULL, O_LINK2},
        {"algos", required_argument, NULL, O_ALGOS},
        {"sizes", required_argument, NULL, O_SIZES},
        {"csv", required_argument, NULL, O_CSV},
        {"calibrate", required_argument, NULL, O_CALIB},
        {"label", required_argument, NULL, O_LABEL},
        {"duplex", required_argument, NULL, O_DUPLEX},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0}};
    const char *prog = "xfer-bench";
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            exit(0);
        case O_VERSION:
            xfer_cli_version(prog);
            exit(0);
        case O_P:
            a->p = (int) xfer_cli_long(prog, "--p", optarg, 1, 1 << 20);
            break;
        case O_Q:
            a->q = (int) xfer_cli_long(prog, "--q", optarg, 1, 1 << 20);
            break;
        case O_ITERS:
            a->iters = (int) xfer_cli_long(prog, "--iters", optarg, 1, 1 << 30);
            break;
        case O_WARMUP:
            a->warmup = (int) xfer_cli_long(prog, "--warmup", optarg, 0, 1 << 30);
            break;
        case O_V:
            a->skew = xfer_cli_double(prog, "--v (the skew)", optarg, 0, 1);
            a->v = 1;
            break;
        case O_LINK:
            a->link_mbit = xfer_cli_double(prog, "--link-mbit", optarg, 0, 1e9);
            break;
        case O_LINK2:
            a->link_mbit2 = xfer_cli_double(prog, "--link-mbit-two-way", optarg, 0, 1e9);
            break;
        case O_ALGOS:
            a->algos = optarg;
            break;
        case O_SIZES:
            a->sizes = optarg;
            break;
        case O_CSV:
            a->csv = optarg;
            break;
        case O_CALIB:
            a->calibrate = optarg;
            break;
        case O_LABEL:
            if (strpbrk(optarg, ",\"\n"))
                xfer_cli_usage_error(prog, "--label: no commas, quotes or newlines");
            a->label = optarg;
            break;
        case O_DUPLEX:
            if (strcmp(optarg, "half") && strcmp(optarg, "full") && strcmp(optarg, "both"))
                xfer_cli_usage_error(prog, "--duplex: expected half, full or both, got \"%s\"",
                                     optarg);
            a->dmin = !strcmp(optarg, "full");
            a->dmax = strcmp(optarg, "half") != 0;
            break;
        default:
            xfer_cli_bad_option(prog, c, argv);
        }
    }
    if (optind < argc)
        xfer_cli_usage_error(prog, "unexpected argument \"%s\"", argv[optind]);
    if (a->link_mbit2 > 0 && a->link_mbit <= 0)
        xfer_cli_usage_error(prog, "--link-mbit-two-way needs --link-mbit");
}

static int fmt_ratio(char *buf, size_t len, const xb_result_t *ref, const xb_result_t *r)
{
    if (!ref || ref->st != XFER_SUCCESS || r->st != XFER_SUCCESS)
        return snprintf(buf, len, "-");
    return snprintf(buf, len, "%.2fx", ref->median / r->median);
}

/* The lower bound of case @p c in seconds (see the header comment). */
static double lower_bound(const args_t *a, const xb_setup_t *s, const xb_case_t *c, double bw,
                          long cores)
{
    const double busiest = xb_busiest(c, s);
    const double all = xb_sent_by(c, s, 0) * s->n[1] + xb_sent_by(c, s, 1) * s->n[0];
    if (a->link_mbit > 0) /* full duplex: the links carry data both ways at once */
        return busiest * 8.0 /
               ((c->full && a->link_mbit2 > 0 ? a->link_mbit2 : a->link_mbit) * 1e6);
    return (busiest > all / (double) cores ? busiest : all / (double) cores) / bw;
}

/* "openmpi", or "mpich/<device>" (ch4:ucx, ch3:nemesis ...) from the library's version text */
static void mpi_name(const char *libv, char *out, size_t len)
{
    const char *dev = strstr(libv, "MPICH Device:");
    int n = 0;
    if (!dev || strcmp(XFER_MPI_FLAVOR, "mpich")) {
        snprintf(out, len, "%s", XFER_MPI_FLAVOR);
        return;
    }
    dev += strlen("MPICH Device:");
    dev += strspn(dev, " \t");
    n = (int) strcspn(dev, " \t\r\n");
    snprintf(out, len, "mpich/%.*s", n, dev);
}

static void csv_row(FILE *f, const args_t *a, const xb_setup_t *s, const char *algo, int full,
                    long bytes, const xb_result_t *r, const xb_result_t *nat, const xb_result_t *rg,
                    double bound)
{
    const int ok = r->st == XFER_SUCCESS;
    int i;
    fprintf(f, "%s,%s,%g,%d,%d,%ld,", algo, full ? "full" : "half", a->v ? a->skew : -1.0, s->n[0],
            s->n[1], bytes);
    if (ok)
        fprintf(f, "%.9g,%.9g,", r->median, r->min);
    else
        fprintf(f, ",,");
    if (ok && nat && nat->st == XFER_SUCCESS)
        fprintf(f, "%.6g", nat->median / r->median);
    fprintf(f, ",");
    if (ok && rg && rg->st == XFER_SUCCESS)
        fprintf(f, "%.6g", rg->median / r->median);
    fprintf(f, ",%.9g,", bound);
    if (ok)
        fprintf(f, "%.6g", bound / r->median);
    fprintf(f, ",%ld,%d,%s,%s,%s,%d,%d,%d,%d,%d,%s,%ld", r->rss_kb, ok && r->ok,
            xfer_status_name(r->st), a->mpi, a->label ? a->label : "", s->nodes[0], s->nodes[1],
            s->ppn[0], s->ppn[1], a->iters, a->link_mbit > 0 ? "link" : "copy", r->rss_growth_kb);
    if (ok)
        fprintf(f, ",%.9g,", r->max);
    else
        fprintf(f, ",,");
    for (i = 0; ok && r->samples && i < a->iters; i++) /* per call, in call order */
        fprintf(f, "%s%.9g", i ? " " : "", r->samples[i]);
    fprintf(f, "\n");
}

int main(int argc, char **argv)
{
    char algos_default[] = "native,root_gather,fc_half,fc_full,ring_half,ring";
    char sizes_default[] = "32K,256K,1M,4M";
    args_t a = {algos_default, sizes_default, NULL, NULL, NULL, "", -1, -1, 10, 2, 0, 0, 0,
                0.0,           0.0,           0.0};
    xb_best_t best[XB_MAXSIZES * 2];
    xb_link_t link = {0, 0, 0, 0};
    int nbest = 0, node_ppn = 1;
    char *alg[XB_MAXALG], hb[32], libv[MPI_MAX_LIBRARY_VERSION_STRING];
    long sizes[XB_MAXSIZES], maxsize = 0, cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nalg, nsizes, i, s, d, wrank, wsize, failures = 0, len;
    unsigned char *sbuf, *rbuf;
    double bw = 0;
    FILE *csv = NULL;
    xb_setup_t su;

    parse_args(argc, argv, &a);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    nalg = xb_split_list(a.algos, alg, XB_MAXALG);
    nsizes = xb_parse_sizes(a.sizes, sizes, &maxsize);
    if (nalg < 1 || nsizes < 1 || (a.p >= 0 && (a.p < 1 || a.p >= wsize))) {
        if (wrank == 0) {
            fprintf(stderr,
                    "xfer-bench: need --algos and --sizes lists (at most %d entries each, sizes "
                    "1 B .. 1 GiB), 1 <= p < %d and p + q = %d (the ranks launched)\n",
                    XB_MAXALG, wsize, wsize);
            usage(stderr);
        }
        MPI_Finalize();
        return 2;
    }
    if (xb_setup(&su, a.p) != 0) {
        MPI_Finalize();
        return 2;
    }
    if (a.q >= 0 && a.q != su.n[1]) {
        if (wrank == 0)
            fprintf(stderr, "xfer-bench: --q %d, but group B has %d ranks\n", a.q, su.n[1]);
        xb_teardown(&su);
        MPI_Finalize();
        return 2;
    }
    { /* native, then root_gather first: the references; the rest in the order given */
        char *ordered[XB_MAXALG];
        int n = 0, pass;
        for (pass = 0; pass < 3; pass++)
            for (i = 0; i < nalg; i++) {
                const int rank = !strcmp(alg[i], "native")        ? 0
                                 : !strcmp(alg[i], "root_gather") ? 1
                                                                  : 2;
                if (rank == pass)
                    ordered[n++] = alg[i];
            }
        memcpy(alg, ordered, sizeof(ordered[0]) * (size_t) nalg);
    }

    /* the largest block any rank sends: mean * (1 + skew), rounded */
    maxsize = (long) ((double) maxsize * (1.0 + (a.v ? a.skew : 0.0))) + 1;
    sbuf = malloc((size_t) maxsize);
    rbuf = malloc((size_t) maxsize * (size_t) su.n[1 - su.group]);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "xfer-bench: out of memory (%ld bytes per block)\n", maxsize);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (i = 0; i < maxsize; i++)
        sbuf[i] = xb_pattern(su.group, su.rank, i);
    if (a.link_mbit <= 0) {
        const double most = (double) maxsize * (su.n[0] > su.n[1] ? su.n[0] : su.n[1]);
        bw = xb_copy_bandwidth((size_t) (most < 256e6 ? most : 256e6));
    }
    if (wrank == 0 && a.csv) {
        csv = fopen(a.csv, "a");
        if (!csv || (ftell(csv) == 0 && fputs(CSV_HEADER, csv) < 0)) {
            fprintf(stderr, "xfer-bench: cannot write %s: %s\n", a.csv, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (a.calibrate) { /* the link first, on a quiet machine */
        node_ppn = xb_node_ppn();
        if (xb_calibrate_link(&su, &link) != 0 || node_ppn < 1) {
            fprintf(stderr, "xfer-bench: calibration of the link failed\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Get_library_version(libv, &len);
    mpi_name(libv, a.mpi, sizeof(a.mpi));
    libv[strcspn(libv, "\n")] = '\0';
    for (i = 0; libv[i]; i++)
        libv[i] = libv[i] == '\t' ? ' ' : libv[i];
    if (wrank == 0) {
        printf("xfer-bench: libxfer %s, %s (%.60s)\n", XFER_VERSION_STRING, a.mpi, libv);
        printf("group A p=%d on %d node(s) (<= %d per node), group B q=%d on %d node(s) (<= %d "
               "per node); %s; %d iterations after %d warm-up, median and min of the per-call "
               "max over ranks\n",
               su.n[0], su.nodes[0], su.ppn[0], su.n[1], su.nodes[1], su.ppn[1],
               a.v ? "allgatherv" : "allgather", a.iters, a.warmup);
        if (a.v)
            printf("allgatherv skew %.2f: block of rank i of n = size * (1 + %.2f * (2i/(n-1) - "
                   "1))\n",
                   a.skew, a.skew);
        if (a.link_mbit > 0)
            printf("lower bound: node links of %.0f Mbit/s (busiest node's traffic / rate)\n",
                   a.link_mbit);
        else
            printf("lower bound: shared memory, single-core memcpy %.2f GB/s, %ld cores\n",
                   bw / 1e9, cores);
        printf(
            "\n| bytes/rank | duplex | algorithm            | median ms | min ms    | max ms    "
            "| vs native | vs root_gather | bound ms  | of bound | peak RSS KiB | call's own KiB "
            "| verified |\n"
            "|-----------:|--------|----------------------|----------:|----------:|----------:"
            "|----------:|---------------:|----------:|---------:|-------------:|-------------"
            "--:|----------|\n");
    }
    for (s = 0; s < nsizes; s++)
        for (d = a.dmin; d <= a.dmax; d++) {
            char *run[XB_MAXALG];
            xb_result_t res[XB_MAXALG];
            const xb_result_t *nat = NULL, *rg = NULL;
            xb_case_t c;
            double bound;
            const int nrun = xb_for_duplex(alg, nalg, d, run);
            int k;
            if (xb_case_init(&c, &su, sizes[s], a.v ? a.skew : 0.0, d, a.v) != 0) {
                fprintf(stderr, "xfer-bench: size %ld too large for int counts\n", sizes[s]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            xb_run(&su, &c, run, nrun, a.iters, a.warmup, 1, sbuf, rbuf, res);
            bound = lower_bound(&a, &su, &c, bw, cores);
            if (a.calibrate) { /* the fastest algorithm that verified (hier:INNER included;
                                * auto takes a hierarchy on real shared nodes only) */
                xb_best_t *b = &best[nbest];
                int most = 0, g, r, pick = -1;
                for (g = 0; g < 2; g++)
                    for (r = 0; r < su.n[g] && (g == 0 || d); r++)
                        most = c.counts[g][r] > most ? c.counts[g][r] : most;
                for (k = 0; k < nrun; k++)
                    if (res[k].st == XFER_SUCCESS && res[k].ok && strcmp(run[k], "auto") != 0 &&
                        strcmp(run[k], "hier:auto") != 0 && strcmp(run[k], "hier") != 0 &&
                        (pick < 0 || res[k].median < res[pick].median))
                        pick = k;
                if (pick >= 0 && most > 0) {
                    snprintf(b->key, sizeof(b->key), "%s %d %d %d %s %d", d ? "both" : "a-to-b",
                             su.n[0], su.n[1], node_ppn, a.v && a.skew > 0 ? "varied" : "uniform",
                             most);
                    snprintf(b->algo, sizeof(b->algo), "%s", run[pick]);
                    b->seconds = res[pick].median;
                    nbest++;
                }
            }
            xb_case_free(&c);
            for (k = 0; k < nrun; k++) {
                if (!strcmp(run[k], "native"))
                    nat = &res[k];
                else if (!strcmp(run[k], "root_gather"))
                    rg = &res[k];
            }
            for (k = 0; k < nrun && wrank == 0; k++) {
                char r1[16], r2[16];
                const xb_result_t *r = &res[k];
                if (csv)
                    csv_row(csv, &a, &su, run[k], d, sizes[s], r, nat, rg, bound);
                if (r->st == XFER_ERR_NOT_SUPPORTED) {
                    printf("| %10s | %-6s | %-20s | n/a: %s |\n", xb_human(sizes[s], hb, 32),
                           d ? "full" : "half", run[k], xfer_status_string(r->st));
                    continue;
                }
                if (r->st != XFER_SUCCESS || !r->ok) {
                    failures++;
                    if (r->st != XFER_SUCCESS) {
                        printf("| %10s | %-6s | %-20s | failed: %s |\n", xb_human(sizes[s], hb, 32),
                               d ? "full" : "half", run[k], xfer_status_string(r->st));
                        continue;
                    }
                }
                fmt_ratio(r1, sizeof(r1), nat, r);
                fmt_ratio(r2, sizeof(r2), rg, r);
                printf("| %10s | %-6s | %-20s | %9.3f | %9.3f | %9.3f | %9s | %14s | %9.3f | %8.2f "
                       "| %12ld | %14ld | %-8s |\n",
                       xb_human(sizes[s], hb, 32), d ? "full" : "half", run[k], 1e3 * r->median,
                       1e3 * r->min, 1e3 * r->max, r1, r2, 1e3 * bound, bound / r->median,
                       r->rss_kb, r->rss_growth_kb, r->ok ? "yes" : "NO");
            }
            xb_results_free(res, nrun);
            if (wrank == 0)
                fflush(stdout);
        }
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (wrank == 0 && a.calibrate && xb_calibrate_write(a.calibrate, &link, best, nbest) != 0)
        failures++;
    if (wrank == 0) {
        printf("\n%s\n", failures ? "SOME RESULTS FAILED" : "all results verified");
        if (csv && fclose(csv) != 0) {
            fprintf(stderr, "xfer-bench: writing %s failed\n", a.csv);
            failures++;
        }
    }
    free(sbuf);
    free(rbuf);
    xb_teardown(&su);
    MPI_Finalize();
    return failures ? 1 : 0;
}
