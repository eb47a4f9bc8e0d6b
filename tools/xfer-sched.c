/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer-sched: verify, cost and print libxfer schedules without running MPI.
 *
 *   xfer-sched verify --algo NAME|all --p P --q Q [--count K | --counts-file F]
 *                     [--duplex half|full] [--reverse] [--alpha A] [--beta B]
 *   xfer-sched cost   (same options)       figures: steps, traffic, predicted time vs bound
 *   xfer-sched model  (same options)       the cost model's closed form (what auto ranks by)
 *                                          vs bound: no schedule built, any size at once
 *   xfer-sched dump   (same options) --rank A3|B0      one rank's schedule
 *   --algo hier:INNER (or all with any of these): node staging on virtual nodes of
 *                     --node-size K ranks (default 2; --node-size-b K for group B), block or
 *                     --roundrobin placement, --senders L stripes, --hier-sync flags|barrier,
 *                     --calls C consecutive calls (default 3: both window parities, reuse),
 *                     --jitter RUNS more runs with random local delays (default 16)
 *   xfer-sched sweep  --max N [--algo NAME|all] [--count K]
 *                     verify every p, q in 1..N, half (both directions) and full duplex
 *   mpiexec -n 2 xfer-sched measure        ping-pong: alpha and beta of this MPI
 *   xfer-sched iso --dims X,Y,.. (--moore R [--positive] | --vonneumann | --offsets "a,b;c,d")
 *                  [--periods 1,0,..] [--alpha A] [--beta B] [--bytes m1,m2,..]
 *                  isomorphic neighbourhood schedules: every algorithm and operation built
 *                  and run symbolically on the whole torus; rounds, volume, alpha-beta times
 *                  [--dump RANK [--algo NAME] [--allgather]]: instead, the schedule of the
 *                  engine that process RANK runs (default torus, all-to-all)
 *   xfer-sched joined --p P --q Q [--row-bytes B] [--steps S] [--seed N] [--max-rows R]
 *                     [--selection all|rows|columns|block|user] [--algo NAME|all]
 *                     [--duplex half|full] [--reverse] [--node-size K ...] [--verbose]
 *                  a joined dataset step by step (tools/sched/joined.c): each sending rank's
 *                  rows drawn from the seed, the hard cases first (zeros, every row on one
 *                  rank, every rank empty); every receiving rank must end with exactly its
 *                  rows, byte for byte: its share by the runtime's rule code, the point-to-point
 *                  pieces covering it once, and (selection all) the allgatherv schedules of the
 *                  step's counts, flat and with --node-size hier:INNER, simulated
 *
 * Shapes: group A has P ranks, group B has Q. --count K bytes per rank (default 1024;
 * --count-b K for group B's ranks when it differs);
 * --duplex half (default for half-duplex algorithms): A sends, B sends nothing (--reverse: B
 * sends); full: both send. --counts-file F: P + Q byte counts (A's, then B's), whitespace
 * separated, '#' comments. --network: the ranks on different nodes (relay pipelines cut their
 * segments as plans do across a network). Exit status: 0 every property holds, 1 a violation
 * (named: round, ranks, block), 2 usage or input error.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xfer/xfer.h>

#include "common/cli.h"
#include "sched/sched.h"

#define PROG "xfer-sched"

typedef struct {
    const char *cmd, *algo, *counts_file, *rank;
    int p, q, max, duplex_set, full, reverse;
    size_t count, count_b;
    int count_b_set;
    xfer_sim_params_t params;
    xfer_sim_nodes_t nodes; /* hier:INNER on virtual nodes */
    int nodes_set;
} opts_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: xfer-sched verify|cost|model|dump --algo NAME|all --p P --q Q\n"
               "                  [--count K [--count-b K] | --counts-file F]\n"
               "                  [--duplex half|full] [--reverse] [--rank A3|B0] [--network]\n"
               "                  [--alpha SECONDS] [--beta SECONDS_PER_BYTE]\n"
               "                  --algo hier:INNER: on virtual nodes [--node-size K]\n"
               "                  [--node-size-b K] [--roundrobin] [--senders L]\n"
               "                  [--hier-sync flags|barrier] [--calls C] [--jitter RUNS]\n"
               "       xfer-sched sweep --max N [--algo NAME|all] [--count K]\n"
               "       mpiexec -n 2 xfer-sched measure\n"
               "       xfer-sched iso --dims X,Y,.. (--moore R [--positive] | --vonneumann |\n"
               "                      --offsets \"a,b;c,d;..\") [--periods 1,0,..]\n"
               "                      [--alpha A] [--beta B] [--bytes m1,m2,..]\n"
               "                      [--dump RANK [--algo NAME] [--allgather]]\n"
               "       xfer-sched joined --p P --q Q [--row-bytes B] [--steps S] [--seed N]\n"
               "                      [--selection all|rows|columns|block|user] [--algo NAME|all]\n"
               "                      [--duplex half|full] (xfer-sched joined --help)\n");
}

/* The options of verify, cost, dump and sweep (argv[1] is the command); a usage error or
 * --help exits. */
static void parse_args(int argc, char **argv, opts_t *o)
{
    enum {
        O_ALGO = 256,
        O_P,
        O_Q,
        O_MAX,
        O_COUNT,
        O_COUNTB,
        O_FILE,
        O_RANK,
        O_ALPHA,
        O_BETA,
        O_DUPLEX,
        O_REVERSE,
        O_NET,
        O_RR
    };
    static const struct option longopts[] = {{"algo", required_argument, NULL, O_ALGO},
                                             {"p", required_argument, NULL, O_P},
                                             {"q", required_argument, NULL, O_Q},
                                             {"max", required_argument, NULL, O_MAX},
                                             {"count", required_argument, NULL, O_COUNT},
                                             {"count-b", required_argument, NULL, O_COUNTB},
                                             {"counts-file", required_argument, NULL, O_FILE},
                                             {"rank", required_argument, NULL, O_RANK},
                                             {"alpha", required_argument, NULL, O_ALPHA},
                                             {"beta", required_argument, NULL, O_BETA},
                                             XFER_SCHED_NODE_LONGOPTS,
                                             {"duplex", required_argument, NULL, O_DUPLEX},
                                             {"reverse", no_argument, NULL, O_REVERSE},
                                             {"network", no_argument, NULL, O_NET},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    memset(o, 0, sizeof(*o));
    o->count = 1024;
    o->algo = "all";
    xfer_sim_params_init(&o->params);
    xfer_sim_nodes_init(&o->nodes);
    o->cmd = argv[1];
    optind = 2;
    opterr = 0;
    while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            exit(0);
        case O_ALGO:
            o->algo = optarg;
            break;
        case O_P:
            o->p = (int) xfer_cli_long(PROG, "--p", optarg, 1, 1 << 20);
            break;
        case O_Q:
            o->q = (int) xfer_cli_long(PROG, "--q", optarg, 1, 1 << 20);
            break;
        case O_MAX:
            o->max = (int) xfer_cli_long(PROG, "--max", optarg, 1, 4096);
            break;
        case O_COUNT:
            o->count = (size_t) xfer_cli_long(PROG, "--count", optarg, 0, 1L << 40);
            break;
        case O_COUNTB:
            o->count_b = (size_t) xfer_cli_long(PROG, "--count-b", optarg, 0, 1L << 40);
            o->count_b_set = 1;
            break;
        case O_FILE:
            o->counts_file = optarg;
            break;
        case O_RANK:
            o->rank = optarg;
            break;
        case O_ALPHA:
            o->params.alpha = xfer_cli_double(PROG, "--alpha", optarg, 0, 1e9);
            break;
        case O_BETA:
            o->params.beta = xfer_cli_double(PROG, "--beta", optarg, 0, 1e9);
            break;
        case O_DUPLEX:
            if (strcmp(optarg, "half") && strcmp(optarg, "full"))
                xfer_cli_usage_error(PROG, "--duplex: expected half or full, got \"%s\"", optarg);
            o->duplex_set = 1;
            o->full = !strcmp(optarg, "full");
            break;
        case O_REVERSE:
            o->reverse = 1;
            break;
        case O_NET:
            o->params.network = 1;
            break;
        default:
            if (!xfer_sched_node_opt(PROG, c, optarg, &o->nodes))
                xfer_cli_bad_option(PROG, c, argv);
            o->nodes_set = 1;
        }
    }
    if (optind < argc)
        xfer_cli_usage_error(PROG, "unexpected argument \"%s\"", argv[optind]);
}

/* P + Q integers from @p path; errors name file:line. */
static int read_counts(const char *path, int p, int q, size_t **out)
{
    FILE *f = fopen(path, "r");
    size_t *c, n = 0, want = (size_t) p + (size_t) q;
    char line[4096];
    int lineno = 0;

    if (!f) {
        fprintf(stderr, "xfer-sched: %s: %s\n", path, strerror(errno));
        return 0;
    }
    c = calloc(want, sizeof(size_t));
    while (c && fgets(line, sizeof(line), f)) {
        char *s = line, *hash = strchr(line, '#'), *end;
        lineno++;
        if (hash)
            *hash = '\0';
        for (;;) {
            unsigned long long v;
            while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
                s++;
            if (!*s)
                break;
            errno = 0;
            v = strtoull(s, &end, 10);
            if (errno || end == s || *s == '-') {
                fprintf(stderr, "xfer-sched: %s:%d: \"%.*s\" is not a byte count\n", path, lineno,
                        (int) strcspn(s, " \t\r\n"), s);
                fclose(f);
                free(c);
                return 0;
            }
            if (n >= want) {
                fprintf(stderr, "xfer-sched: %s:%d: more than P + Q = %zu counts\n", path, lineno,
                        want);
                fclose(f);
                free(c);
                return 0;
            }
            c[n++] = (size_t) v;
            s = end;
        }
    }
    fclose(f);
    if (c && n != want) {
        fprintf(stderr, "xfer-sched: %s: %zu counts, expected P + Q = %zu (A's, then B's)\n", path,
                n, want);
        free(c);
        return 0;
    }
    *out = c;
    return c != NULL;
}

/* The registry's word on it (XFER_ALGO_HALF_ONLY), not a list of names. */
static int half_only(const char *algo)
{
    xfer_algo_info_t info;
    unsigned flags = 0;
    int n = 0, i;
    xfer_algorithm_count(&n);
    for (i = 0; i < n; i++)
        if (xfer_algorithm_info(i, &info) == XFER_SUCCESS && strcmp(info.name, algo) == 0)
            return xfer_algorithm_flags(i, &flags) == XFER_SUCCESS &&
                   (flags & XFER_ALGO_HALF_ONLY) != 0;
    return 0;
}

/* The shape for @p algo: counts file, or --count with the duplex mode. */
static void make_sides(const opts_t *o, const char *algo, const size_t *file, xfer_side_t *a,
                       xfer_side_t *b)
{
    const int full = o->duplex_set ? o->full : !half_only(algo);
    a->n = o->p;
    b->n = o->q;
    a->counts = file ? file : NULL;
    b->counts = file ? file + o->p : NULL;
    a->k = full || !o->reverse ? o->count : 0;
    b->k = full || o->reverse ? (o->count_b_set ? o->count_b : o->count) : 0;
}

/* What verify, cost and model print for each algorithm. */
enum { SHOW_VERIFY, SHOW_COST, SHOW_MODEL };

/* An algorithm's call that did not succeed, said on its line: 0 (not applicable), 1 (a
 * violation), 2 (anything else); -1 when it succeeded. */
static int said_failure(const opts_t *o, const char *algo, xfer_status_t st)
{
    if (st == XFER_SUCCESS)
        return -1;
    if (st == XFER_ERR_NOT_SUPPORTED) {
        printf("%-12s p=%d q=%d: not applicable (%s)\n", algo, o->p, o->q, xfer_last_error());
        return 0;
    }
    printf("%-12s p=%d q=%d: FAILED: %s\n", algo, o->p, o->q, xfer_last_error());
    return st == XFER_ERR_VERIFY || st == XFER_ERR_DEADLOCK ? 1 : 2;
}

/* The cost model's line for @p algo: its time, the bound, their ratio. */
static int model_one(const opts_t *o, const char *algo, const size_t *file)
{
    xfer_side_t a, b;
    double t = 0.0, bound = 0.0;
    int rc;

    make_sides(o, algo, file, &a, &b);
    rc = said_failure(o, algo, xfer_sim_model(algo, &a, &b, &o->params, &t, &bound));
    if (rc >= 0)
        return rc;
    printf("%-12s %6d %6d %12.6g %12.6g %7.3f\n", algo, o->p, o->q, t, bound,
           bound > 0 ? t / bound : 0.0);
    return 0;
}

static int run_one(const opts_t *o, const char *algo, const size_t *file, int show)
{
    xfer_side_t a, b;
    xfer_sim_report_t r;
    xfer_status_t st;
    double t0 = xfer_sched_now();
    int rc;

    if (show == SHOW_MODEL)
        return model_one(o, algo, file);
    make_sides(o, !strncmp(algo, "hier:", 5) ? algo + 5 : algo, file, &a, &b);
    if (!strncmp(algo, "hier:", 5))
        st = xfer_simulate_hier(algo + 5, &a, &b, &o->nodes, &o->params, &r);
    else
        st = xfer_simulate(algo, &a, &b, &o->params, &r);
    rc = said_failure(o, algo, st);
    if (rc >= 0)
        return rc;
    if (show == SHOW_COST)
        printf("%-12s %6d %6d %6d %6d %9ld %12zu %12zu %14zu %12.6g %12.6g %7.3f %7.2f\n", algo,
               o->p, o->q, r.steps, r.rounds, r.messages, r.max_sent, r.max_recv, r.total_sent,
               r.predicted, r.bound, r.bound > 0 ? r.predicted / r.bound : 0.0,
               xfer_sched_now() - t0);
    else
        printf("%-12s p=%d q=%d: ok: %d steps, %ld messages, predicted %.6g s (bound %.6g s, "
               "ratio %.3f), checked in %.2f s\n",
               algo, o->p, o->q, r.steps, r.messages, r.predicted, r.bound,
               r.bound > 0 ? r.predicted / r.bound : 0.0, xfer_sched_now() - t0);
    return 0;
}

static int for_each_algo(const opts_t *o, const size_t *file, int show)
{
    int n = 0, i, worst = 0;
    xfer_algo_info_t info;
    if (strcmp(o->algo, "all") != 0)
        return run_one(o, o->algo, file, show);
    xfer_algorithm_count(&n);
    for (i = 0; i < n; i++) {
        char name[80];
        int rc;
        xfer_algorithm_info(i, &info);
        if (o->nodes_set && !strcmp(info.name, "native"))
            continue; /* with virtual nodes: every hier:INNER the simulator can follow */
        snprintf(name, sizeof(name), "%s%s", o->nodes_set ? "hier:" : "", info.name);
        rc = run_one(o, name, file, show);
        worst = rc > worst ? rc : worst;
    }
    return worst;
}

static int cmd_dump(const opts_t *o, const size_t *file)
{
    xfer_side_t a, b;
    xfer_sched_t *s = NULL;
    int group, rank;
    long v;

    if (!o->rank || (o->rank[0] != 'A' && o->rank[0] != 'B') || !strcmp(o->algo, "all"))
        xfer_cli_usage_error(PROG, "dump needs --algo NAME and --rank A<i> or B<j>");
    v = xfer_cli_long(PROG, "--rank", o->rank + 1, 0, 1 << 20);
    group = o->rank[0] == 'B';
    rank = (int) v;
    if (rank >= (group ? o->q : o->p)) {
        fprintf(stderr, "xfer-sched: there is no rank %s\n", o->rank);
        return 2;
    }
    if (!strncmp(o->algo, "hier:", 5)) {
        make_sides(o, o->algo + 5, file, &a, &b);
        if (xfer_sched_build_hier(o->algo + 5, &a, &b, &o->nodes, group, rank, &s) !=
            XFER_SUCCESS) {
            fprintf(stderr, "xfer-sched: %s\n", xfer_last_error());
            return 2;
        }
    } else if (make_sides(o, o->algo, file, &a, &b),
               xfer_sched_build(o->algo, &a, &b, group, rank, &s) != XFER_SUCCESS) {
        fprintf(stderr, "xfer-sched: %s\n", xfer_last_error());
        return 2;
    }
    if (s)
        xfer_sched_dump(s, stdout);
    else
        printf("%s has no schedule: the MPI library runs it\n", o->algo);
    xfer_sched_free(&s);
    return 0;
}

/* Every p, q in 1..max; half duplex both ways and full duplex; stops at the first failure. */
static int cmd_sweep(opts_t *o)
{
    int n = 0, i, p, q, mode, shapes = 0;
    double t0 = xfer_sched_now();
    xfer_algo_info_t info;

    xfer_algorithm_count(&n);
    for (i = 0; i < n; i++) {
        double ta = xfer_sched_now();
        int runs = 0;
        xfer_algorithm_info(i, &info);
        if (strcmp(o->algo, "all") && strcmp(o->algo, info.name))
            continue;
        for (p = 1; p <= o->max; p++)
            for (q = 1; q <= o->max; q++)
                for (mode = 0; mode < 3; mode++) {
                    xfer_side_t a, b;
                    xfer_sim_report_t r;
                    xfer_status_t st;
                    if (mode == 2 && half_only(info.name))
                        continue;
                    a.n = p;
                    b.n = q;
                    a.counts = b.counts = NULL;
                    a.k = mode != 1 ? o->count : 0;
                    b.k = mode != 0 ? o->count : 0;
                    st = xfer_simulate(info.name, &a, &b, &o->params, &r);
                    runs++;
                    if (st != XFER_SUCCESS) {
                        printf("%s p=%d q=%d %s: FAILED: %s\n", info.name, p, q,
                               mode == 2 ? "full"
                               : mode    ? "half B->A"
                                         : "half A->B",
                               xfer_last_error());
                        return 1;
                    }
                }
        shapes += runs;
        printf("%-12s %6d shapes verified (p, q <= %d; half both ways and full) in %.1f s\n",
               info.name, runs, o->max, xfer_sched_now() - ta);
    }
    printf("sweep: %d simulations, all properties hold, %.1f s\n", shapes, xfer_sched_now() - t0);
    return 0;
}

/* Ping-pong between two ranks: alpha from 8-byte messages, beta from the 4 MiB slope. */
static int cmd_measure(int argc, char **argv)
{
    int rank, size, i, n;
    const int reps = 50, big = 4 << 20;
    char *buf;
    double t, lat = 0.0, bw = 0.0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "xfer-sched measure: run it with exactly 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    buf = calloc((size_t) big, 1);
    for (n = 8, i = 0; i < 2; i++, n = big) {
        int r;
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        for (r = 0; r < reps; r++) {
            if (rank == 0) {
                MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        t = (MPI_Wtime() - t) / (2.0 * reps);
        if (i == 0)
            lat = t;
        else
            bw = (t - lat) / (double) (big - 8);
    }
    if (rank == 0)
        printf("--alpha %.3g --beta %.3g   (one-way latency %.2f us, bandwidth %.2f GB/s)\n", lat,
               bw, lat * 1e6, 1e-9 / bw);
    free(buf);
    MPI_Finalize();
    return 0;
}

/* Comma-separated integers into @p out (at most @p max); returns how many, -1 on junk. */
static int parse_ints(const char *str, char sep, int *out, int max)
{
    int n = 0;
    while (*str) {
        char *end;
        long v;
        errno = 0;
        v = strtol(str, &end, 10);
        if (end == str || errno || n == max || v < -1000000 || v > 1000000)
            return -1;
        out[n++] = (int) v;
        if (*end == sep)
            end++;
        else if (*end)
            return -1;
        str = end;
    }
    return n;
}

static int cmd_iso(int argc, char **argv)
{
    static const char *algos[] = {"straight", "posted", "torus", "direct"};
    int dims[8], periods[8] = {1, 1, 1, 1, 1, 1, 1, 1}, d = 0, s = 0, moore = 0, positive = 0,
                 vn = 0, *off = NULL, bytes[16], nbytes = 0, rc = 0, dump = -1, gather = 0;
    const char *offsets = NULL, *algo = "torus";
    double alpha = 2e-6, beta = 1e-10;
    enum {
        O_DIMS = 256,
        O_PERIODS,
        O_MOORE,
        O_POS,
        O_VN,
        O_OFFSETS,
        O_ALPHA,
        O_BETA,
        O_BYTES,
        O_DUMP,
        O_ALGO,
        O_GATHER
    };
    static const struct option longopts[] = {{"dims", required_argument, NULL, O_DIMS},
                                             {"periods", required_argument, NULL, O_PERIODS},
                                             {"moore", required_argument, NULL, O_MOORE},
                                             {"positive", no_argument, NULL, O_POS},
                                             {"vonneumann", no_argument, NULL, O_VN},
                                             {"offsets", required_argument, NULL, O_OFFSETS},
                                             {"alpha", required_argument, NULL, O_ALPHA},
                                             {"beta", required_argument, NULL, O_BETA},
                                             {"bytes", required_argument, NULL, O_BYTES},
                                             {"dump", required_argument, NULL, O_DUMP},
                                             {"algo", required_argument, NULL, O_ALGO},
                                             {"allgather", no_argument, NULL, O_GATHER},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    optind = 2;
    opterr = 0;
    while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case O_DIMS:
            d = parse_ints(optarg, ',', dims, 8);
            break;
        case O_PERIODS:
            if (parse_ints(optarg, ',', periods, 8) < 0)
                d = -1;
            break;
        case O_MOORE:
            moore = (int) xfer_cli_long(PROG, "--moore", optarg, 1, 64);
            break;
        case O_POS:
            positive = 1;
            break;
        case O_VN:
            vn = 1;
            break;
        case O_OFFSETS:
            offsets = optarg;
            break;
        case O_ALPHA:
            alpha = xfer_cli_double(PROG, "--alpha", optarg, 0, 1e9);
            break;
        case O_BETA:
            beta = xfer_cli_double(PROG, "--beta", optarg, 0, 1e9);
            break;
        case O_BYTES:
            nbytes = parse_ints(optarg, ',', bytes, 16);
            break;
        case O_DUMP:
            dump = (int) xfer_cli_long(PROG, "--dump", optarg, 0, 1 << 30);
            break;
        case O_ALGO:
            algo = optarg;
            break;
        case O_GATHER:
            gather = 1;
            break;
        default:
            xfer_cli_bad_option(PROG, c, argv);
        }
    }
    if (optind < argc)
        xfer_cli_usage_error(PROG, "unexpected argument \"%s\"", argv[optind]);
    if (d < 1 || nbytes < 0 || alpha <= 0 || beta <= 0 || (!!moore + vn + !!offsets) != 1) {
        fprintf(stderr, "xfer-sched iso: needs --dims and one of --moore R, --vonneumann, "
                        "--offsets (and positive --alpha, --beta)\n");
        return 2;
    }
    if (nbytes == 0) {
        static const int dflt[] = {8, 64, 512, 4096, 32768};
        nbytes = 5;
        memcpy(bytes, dflt, sizeof(dflt));
    }
    if (offsets) { /* "a,b;c,d" */
        const char *p = offsets;
        off = malloc(sizeof(int) * (strlen(offsets) + 1));
        while (off && *p) {
            char row[256];
            size_t len = strcspn(p, ";");
            if (len >= sizeof(row) ||
                (memcpy(row, p, len), row[len] = 0, parse_ints(row, ',', &off[s * d], d) != d)) {
                fprintf(stderr, "xfer-sched iso: offset %d: expected %d comma-separated integers\n",
                        s, d);
                free(off);
                return 2;
            }
            s++;
            p += len;
            if (*p == ';')
                p++;
        }
    } else {
        xfer_iso_stencil_t kind = vn         ? XFER_ISO_VON_NEUMANN
                                  : positive ? XFER_ISO_MOORE_POSITIVE
                                             : XFER_ISO_MOORE;
        const int r = vn ? 1 : moore;
        xfer_status_t st = xfer_iso_stencil(kind, d, r, 0, NULL, &s); /* how many */
        if (st == XFER_ERR_TOO_LARGE)
            st = (off = malloc(sizeof(int) * (size_t) s * (size_t) d + 1))
                     ? xfer_iso_stencil(kind, d, r, s, off, &s)
                     : XFER_ERR_NO_MEMORY;
        if (st != XFER_SUCCESS) {
            fprintf(stderr, "xfer-sched iso: %s\n",
                    st == XFER_ERR_NO_MEMORY ? "out of memory" : xfer_last_error());
            free(off);
            return 2;
        }
    }
    if (!off) {
        fprintf(stderr, "xfer-sched iso: out of memory\n");
        return 2;
    }
    if (dump >= 0) { /* one process's schedule, as the engine runs it */
        xfer_sched_t *sc = NULL;
        xfer_status_t st = xfer_iso_schedule(algo, gather, d, dims, periods, s, off, dump, &sc);
        if (st == XFER_SUCCESS)
            st = xfer_sched_dump(sc, stdout);
        if (st != XFER_SUCCESS)
            fprintf(stderr, "xfer-sched iso: %s\n", xfer_last_error());
        xfer_sched_free(&sc);
        free(off);
        return st == XFER_SUCCESS ? 0 : 2;
    }
    printf("torus");
    for (int j = 0; j < d; j++)
        printf("%s%d%s", j ? "x" : " ", dims[j], periods[j] ? "" : "(open)");
    printf(", s = %d offsets; alpha %.3g s, beta %.3g s/B\n", s, alpha, beta);
    printf("predicted time (alpha-beta, us) for blocks of the given bytes\n");
    printf("%-9s %-9s %6s %7s %-8s", "algorithm", "operation", "rounds", "volume", "verified");
    for (int b = 0; b < nbytes; b++)
        printf(" %9dB", bytes[b]);
    printf("\n");
    for (int op = 0; op < 2; op++) {
        for (int k = 0; k < 4; k++) {
            int rounds = 0;
            long vol = 0;
            xfer_status_t st =
                xfer_iso_simulate(algos[k], op, d, dims, periods, s, off, &rounds, &vol);
            printf("%-9s %-9s", algos[k], op ? "allgather" : "alltoall");
            if (st == XFER_ERR_NOT_SUPPORTED) {
                printf("  not applicable: %s\n", xfer_last_error());
                continue;
            }
            printf(" %6d %7ld %-8s", rounds, vol, st == XFER_SUCCESS ? "yes" : "NO");
            for (int b = 0; b < nbytes; b++)
                printf(" %10.2f", 1e6 * (rounds * alpha + (double) vol * beta * bytes[b]));
            printf("\n");
            if (st != XFER_SUCCESS) {
                printf("  %s\n", xfer_last_error());
                rc = 1;
            }
        }
    }
    free(off);
    return rc;
}

int main(int argc, char **argv)
{
    opts_t o;
    size_t *file = NULL;
    int rc;

    if (argc < 2)
        xfer_cli_usage_error(PROG, "a command is required: verify, cost, model, dump, sweep, "
                                   "measure, iso or joined");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        xfer_cli_version(PROG);
        return 0;
    }
    if (argv[1][0] == '-')
        xfer_cli_usage_error(PROG, "unknown option %.*s", (int) strcspn(argv[1], "="), argv[1]);
    if (!strcmp(argv[1], "measure"))
        return cmd_measure(argc, argv);
    if (!strcmp(argv[1], "iso"))
        return cmd_iso(argc, argv);
    if (!strcmp(argv[1], "joined"))
        return xfer_sched_joined(argc, argv);
    if (strcmp(argv[1], "verify") && strcmp(argv[1], "cost") && strcmp(argv[1], "dump") &&
        strcmp(argv[1], "sweep") && strcmp(argv[1], "model"))
        xfer_cli_usage_error(PROG,
                             "unknown command \"%s\" (verify, cost, model, dump, sweep, "
                             "measure, iso, joined)",
                             argv[1]);
    parse_args(argc, argv, &o);
    if (!strcmp(o.cmd, "sweep")) {
        if (o.max < 1) {
            fprintf(stderr, "xfer-sched: sweep needs --max N\n");
            return 2;
        }
        return cmd_sweep(&o);
    }
    if (o.p < 1 || o.q < 1) {
        fprintf(stderr, "xfer-sched: %s needs --p P and --q Q (>= 1)\n", o.cmd);
        return 2;
    }
    if (o.counts_file && !read_counts(o.counts_file, o.p, o.q, &file))
        return 2;
    if (!strcmp(o.cmd, "dump"))
        rc = cmd_dump(&o, file);
    else {
        if (!strcmp(o.cmd, "cost"))
            printf("%-12s %6s %6s %6s %6s %9s %12s %12s %14s %12s %12s %7s %7s\n", "algorithm", "p",
                   "q", "steps", "rounds", "messages", "max_sent_B", "max_recv_B", "total_sent_B",
                   "predicted_s", "bound_s", "ratio", "sim_s");
        else if (!strcmp(o.cmd, "model"))
            printf("%-12s %6s %6s %12s %12s %7s\n", "algorithm", "p", "q", "model_s", "bound_s",
                   "ratio");
        rc = for_each_algo(&o, file,
                           !strcmp(o.cmd, "cost")    ? SHOW_COST
                           : !strcmp(o.cmd, "model") ? SHOW_MODEL
                                                     : SHOW_VERIFY);
    }
    free(file);
    return rc;
}
