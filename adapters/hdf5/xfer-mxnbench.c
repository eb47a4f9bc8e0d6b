/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer-mxnbench: an N x N float64 field from P producer ranks (row slabs) to the other ranks of
 * the job, the consumers, each of which needs one block of a grid over the field. The ways:
 *   select  the consumers declare their blocks (selection: block): M x N, each receives its own
 *   all     the consumers receive the whole field (selection: all) and keep their block
 *   mixed   select, and a second field of N/2 x N (rows from the producers too) that every
 *           consumer takes whole: the hybrid path (the allgatherv plan moves it, the direct
 *           schedule the blocks)
 *   mixed_direct  the same with the hybrid path off (XFER_RT_HYBRID=0): everything direct
 *   pairs   consumers 2i and 2i+1 (a node of 2 ranks) both select row slab i of (q+1)/2
 *           (xfer_select): the direct schedule, node-staged (the slab crosses the network once
 *           per node)
 *   pairs_nostage  the same with node staging off (XFER_RT_NODE_STAGE=0): once per rank
 *   bind    select with bound buffers (xfer_bind_buffer) on both sides: each step is sent
 *           straight from the producer's block and lands straight in the consumer's buffer
 *   h5      the producers write the step to a parallel HDF5 file (collective), the consumers
 *           read their blocks back (collective hyperslab reads): what coupling through files
 *           costs
 * One MPI job; world ranks 0..P-1 produce (launch: user, the program forms the
 * intercommunicator). Every step is framed by world barriers (the closing one nonblocking,
 * driving the channel with xfer_channel_progress: a producer's step moves only while it is in
 * libxfer) and timed on world rank 0 as the
 * time from the first barrier to the second, after every consumer checked its block against
 * the pattern. Prints one CSV line per way:
 *   way,p,q,n,steps,median_ms,min_ms,max_ms,bytes_per_consumer,peak_rss_producer_kib,
 *   peak_rss_consumer_kib,copied_per_byte_producer,copied_per_byte_consumer
 * (bytes a consumer received per step, by xfer_channel_stats for the streams and by the read's
 * size for h5; peak RSS is the largest over the ranks of each side, getrusage, over the whole
 * process: run one way per job to tell them apart; bytes libxfer copied per byte moved, the
 * largest over the ranks of each side, by xfer_channel_stats: a producer's copies into the
 * stages per byte it sent, a consumer's copies out per byte it received; empty for h5).
 *
 * With --compute-ms C the streams model a simulation that computes C ms (a sleep: the cores stay
 * free) after each step's puts, and the consumers analyse nothing: no barriers frame the steps,
 * the time is the whole run after the warm-up step divided by the steps (min = median = max),
 * and the way is named select-cC-thread or select-cC-calls after who moved the data while the
 * producers computed (--mpi-thread multiple: libxfer's progress thread; else their calls).
 * The floor of such a step is max(C, the transfer alone).
 *
 *   xfer-mxnbench --p P [--n N] [--steps S] [--ways select,all,mixed,mixed_direct,pairs,
 *                 pairs_nostage,bind,h5] [--dir DIR] [--compute-ms C] [--mpi-thread
 * single|multiple]
 */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <xfer/xfer.h>

#include "common/cli.h"

static int wrank, wsize, P, prod, compute_ms, threaded;
static MPI_Comm comp;

#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "xfer-mxnbench: rank %d: ", wrank);                                        \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
    } while (0)
#define XC(call)                                                                                   \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        if (st_ != XFER_SUCCESS)                                                                   \
            DIE("%s: %s: %s", #call, xfer_status_name(st_), xfer_last_error());                    \
    } while (0)
#define HC(call)                                                                                   \
    do {                                                                                           \
        if ((call) < 0)                                                                            \
            DIE("%s failed", #call);                                                               \
    } while (0)

static double value(uint64_t step, uint64_t i, uint64_t j, uint64_t n)
{
    return (double) ((step * 7919u + i * n + j) % 1000003u);
}

static void fill(double *b, uint64_t step, const uint64_t *s, const uint64_t *c, uint64_t n)
{
    for (uint64_t i = 0; i < c[0]; i++)
        for (uint64_t j = 0; j < c[1]; j++)
            b[i * c[1] + j] = value(step, s[0] + i, s[1] + j, n);
}

static void check(const double *b, uint64_t step, const uint64_t *s, const uint64_t *c, uint64_t n,
                  const char *way)
{
    for (uint64_t i = 0; i < c[0]; i++)
        for (uint64_t j = 0; j < c[1]; j++)
            if (b[i * c[1] + j] != value(step, s[0] + i, s[1] + j, n))
                DIE("%s: step %" PRIu64 ": element (%" PRIu64 ", %" PRIu64 ") differs", way, step,
                    s[0] + i, s[1] + j);
}

static long peak_rss_kib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* @p copied: this rank's bytes copied per byte moved (negative: not measured). */
static void report(const char *way, uint64_t n, int steps, double *t, uint64_t bytes, double copied)
{
    long rss = peak_rss_kib(), rp = 0, rc = 0, mine_p = prod ? rss : 0, mine_c = prod ? 0 : rss;
    double cp_mine[2] = {prod ? copied : -1, prod ? -1 : copied}, cp[2];
    char cps[2][32];
    MPI_Reduce(&mine_p, &rp, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine_c, &rc, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(cp_mine, cp, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (wrank != 0)
        return;
    for (int i = 0; i < 2; i++)
        if (cp[i] < 0)
            cps[i][0] = '\0';
        else
            snprintf(cps[i], sizeof(cps[i]), "%.3f", cp[i]);
    qsort(t, (size_t) steps, sizeof(double), cmp);
    printf("%s,%d,%d,%" PRIu64 ",%d,%.3f,%.3f,%.3f,%" PRIu64 ",%ld,%ld,%s,%s\n", way, P, wsize - P,
           n, steps, 1e3 * t[steps / 2], 1e3 * t[0], 1e3 * t[steps - 1], bytes, rp, rc, cps[0],
           cps[1]);
    fflush(stdout);
}

/* Through a channel: selection block (each consumer receives its block) or all. */
static void stream(const char *way, uint64_t n, int steps, const char *dir)
{
    const int q = wsize - P, me = prod ? wrank : wrank - P;
    const int mixed = strncmp(way, "mixed", 5) == 0, pairs = strncmp(way, "pairs", 5) == 0;
    const int bind = strcmp(way, "bind") == 0;
    const uint64_t dims[2] = {n, n}, wdims[2] = {n / 2, n};
    uint64_t bs[2], bc[2], ss[2], sc[2], ws[2], wc[2];
    double *wblk = NULL, *wgot = NULL;
    char extra[256] = "";
    char path[4096];
    FILE *f;
    xfer_t *x = NULL;
    xfer_channel_t *ch;
    MPI_Comm inter;
    double *blk, *got, *t = calloc((size_t) steps, sizeof(double)), trun = 0;
    char name[64];
    uint64_t bytes = 0;
    double copied = -1;

    snprintf(path, sizeof(path), "%s/mxnbench-%s.yaml", dir, way);
    if (mixed)
        snprintf(extra, sizeof(extra),
                 ",\n                {name: whole, type: float64, dims: [%" PRIu64 ", %" PRIu64
                 "], selection: all}",
                 wdims[0], wdims[1]);
    /* every rank, before xfer_init: the path is chosen at step 0 from every rank's view */
    if (setenv("XFER_RT_HYBRID", strcmp(way, "mixed_direct") == 0 ? "0" : "1", 1) != 0 ||
        setenv("XFER_RT_NODE_STAGE", strcmp(way, "pairs_nostage") == 0 ? "0" : "1", 1) != 0)
        DIE("setenv");
    if (wrank == 0) {
        if (!(f = fopen(path, "w")))
            DIE("cannot write %s", path);
        fprintf(f,
                "workflow: mxnbench\nlaunch: user\ncontrol: {timeout_ms: 600000}\n"
                "components:\n  - {name: prod, nprocs: %d, cmd: [none]}\n"
                "  - {name: cons, nprocs: %d, cmd: [none]}\n"
                "channels:\n  - {name: c, from: prod, to: cons, max_in_flight_steps: 1,\n"
                "     selection: %s, attributes_bytes: 0,\n"
                "     datasets: [{name: field, type: float64, dims: [%" PRIu64 ", %" PRIu64
                "]}%s]}\n",
                P, q,
                pairs                     ? "user"
                : strcmp(way, "all") != 0 ? "block"
                                          : "all",
                n, n, extra);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Intercomm_create(comp, 0, MPI_COMM_WORLD, prod ? P : 0, 17, &inter);
    XC(xfer_init(path, prod ? "prod" : "cons", comp, &x));
    XC(xfer_channel_attach(x, "c", inter));
    XC(xfer_channel_open(x, "c", &ch));
    XC(xfer_decompose(XFER_SELECT_ROWS, 2, dims, P, prod ? me : 0, bs, bc));
    if (pairs) /* a row slab per pair of consumers */
        XC(xfer_decompose(XFER_SELECT_ROWS, 2, dims, (q + 1) / 2, prod ? 0 : me / 2, ss, sc));
    else
        XC(xfer_decompose(XFER_SELECT_BLOCK, 2, dims, q, prod ? 0 : me, ss, sc));
    if (pairs && !prod)
        XC(xfer_select(ch, "field", ss, sc));
    XC(xfer_decompose(XFER_SELECT_ROWS, 2, wdims, P, prod ? me : 0, ws, wc));
    if (mixed) {
        wblk = malloc((size_t) (wc[0] * wc[1]) * sizeof(double) + 8);
        wgot = malloc((size_t) (wdims[0] * wdims[1]) * sizeof(double) + 8);
        if (!wblk || !wgot)
            DIE("out of memory");
    }
    blk = malloc((size_t) (bc[0] * bc[1]) * sizeof(double) + 8);
    got = malloc((size_t) (strcmp(way, "all") == 0 ? n * n : sc[0] * sc[1]) * sizeof(double) + 8);
    if (!blk || !got || !t)
        DIE("out of memory");
    if (bind) /* before step 0: sent from blk, received into got, no copies */
        XC(xfer_bind_buffer(ch, "field", prod ? (void *) blk : (void *) got,
                            (size_t) (prod ? bc[0] * bc[1] : sc[0] * sc[1]) * sizeof(double)));
    for (int s = -1; s < steps; s++) { /* step -1: warm-up (step 0 of the channel) */
        const uint64_t step = (uint64_t) (s + 1);
        double t0 = 0;
        if (prod)
            fill(blk, step, bs, bc, n);
        if (prod && mixed)
            fill(wblk, step + 1000, ws, wc, n);
        if (!compute_ms || s < 1) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            if (s == 0)
                trun = t0;
        }
        if (prod) {
            xfer_dataset_desc_t d;
            memset(&d, 0, sizeof(d));
            d.name = "field";
            d.type = XFER_TYPE_FLOAT64;
            d.ndims = 2;
            memcpy(d.dims, dims, sizeof(dims));
            memcpy(d.start, bs, sizeof(bs));
            memcpy(d.count, bc, sizeof(bc));
            XC(xfer_put(ch, &d, blk));
            if (mixed) {
                d.name = "whole";
                memcpy(d.dims, wdims, sizeof(wdims));
                memcpy(d.start, ws, sizeof(ws));
                memcpy(d.count, wc, sizeof(wc));
                XC(xfer_put(ch, &d, wblk));
            }
            XC(xfer_step_end(ch));
            if (compute_ms && s >= 0) { /* the simulation's next time step */
                struct timespec ts = {compute_ms / 1000, (long) (compute_ms % 1000) * 1000000L};
                nanosleep(&ts, NULL);
            }
        } else {
            xfer_step_status_t ss_;
            xfer_dataset_desc_t o;
            XC(xfer_step_begin(ch, -1, &ss_));
            if (ss_ != XFER_STEP_OK)
                DIE("step %d: no step", s);
            if (strcmp(way, "all") == 0) { /* the whole field, then its block */
                XC(xfer_get(ch, "field", got, n * n * sizeof(double), &o));
                for (uint64_t i = 0; i < sc[0]; i++)
                    memmove(got + i * sc[1], got + (ss[0] + i) * n + ss[1],
                            (size_t) sc[1] * sizeof(double));
            } else {
                XC(xfer_get(ch, "field", got, sc[0] * sc[1] * sizeof(double), &o));
            }
            check(got, step, ss, sc, n, way);
            if (mixed) {
                const uint64_t z[2] = {0, 0};
                XC(xfer_get(ch, "whole", wgot, wdims[0] * wdims[1] * sizeof(double), &o));
                check(wgot, step + 1000, z, wdims, n, way);
            }
            XC(xfer_step_end(ch));
        }
        if (compute_ms && s >= 0 && s < steps - 1)
            continue; /* no barrier: the steps flow */
        { /* the step is through on every rank: a barrier that keeps the transfers moving */
            MPI_Request rq;
            int done = 0;
            MPI_Ibarrier(MPI_COMM_WORLD, &rq);
            while (!done) {
                XC(xfer_channel_progress(ch, NULL));
                MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
            }
        }
        if (s >= 0 && !compute_ms)
            t[s] = MPI_Wtime() - t0;
    }
    if (compute_ms) { /* the run after the warm-up, per step */
        const double per = (MPI_Wtime() - trun) / steps;
        for (int s = 0; s < steps; s++)
            t[s] = per;
        snprintf(name, sizeof(name), "%s-c%d-%s", way, compute_ms, threaded ? "thread" : "calls");
        way = name;
    }
    {
        xfer_channel_stats_t cs;
        XC(xfer_channel_stats(ch, &cs));
        if (!prod)
            bytes = cs.bytes_received / (uint64_t) (steps + 1);
        if (prod && cs.bytes_sent)
            copied = (double) cs.bytes_copied_in / (double) cs.bytes_sent;
        else if (!prod && cs.bytes_received)
            copied = (double) cs.bytes_copied_out / (double) cs.bytes_received;
    }
    MPI_Bcast(&bytes, 1, MPI_UINT64_T, P, MPI_COMM_WORLD);
    XC(xfer_finalize(&x));
    MPI_Comm_free(&inter);
    report(way, n, steps, t, bytes, copied);
    free(blk);
    free(got);
    free(wblk);
    free(wgot);
    free(t);
}

/* Through a file: the producers write the step (collective), the consumers read their blocks
 * (collective) once the file is closed. */
static void file(uint64_t n, int steps, const char *dir)
{
    const int q = wsize - P, me = prod ? wrank : wrank - P;
    const hsize_t dims[2] = {n, n};
    const uint64_t d64[2] = {n, n};
    uint64_t s2[2], c2[2];
    char path[4096];
    double *buf, *t = calloc((size_t) steps, sizeof(double));
    uint64_t bytes;

    snprintf(path, sizeof(path), "%s/mxnbench.h5", dir);
    if (prod)
        XC(xfer_decompose(XFER_SELECT_ROWS, 2, d64, P, me, s2, c2));
    else
        XC(xfer_decompose(XFER_SELECT_BLOCK, 2, d64, q, me, s2, c2));
    buf = malloc((size_t) (c2[0] * c2[1]) * sizeof(double) + 8);
    if (!buf || !t)
        DIE("out of memory");
    bytes = (uint64_t) (c2[0] * c2[1]) * sizeof(double);
    MPI_Bcast(&bytes, 1, MPI_UINT64_T, P, MPI_COMM_WORLD);
    for (int s = -1; s < steps; s++) {
        const uint64_t step = (uint64_t) (s + 1);
        const hsize_t start[2] = {s2[0], s2[1]}, count[2] = {c2[0], c2[1]};
        hid_t fapl, fid = -1, ds = -1, fs = -1, ms = -1, xp;
        double t0;
        if (prod)
            fill(buf, step, s2, c2, n);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        HC(fapl = H5Pcreate(H5P_FILE_ACCESS));
        HC(H5Pset_fapl_mpio(fapl, comp, MPI_INFO_NULL));
        HC(xp = H5Pcreate(H5P_DATASET_XFER));
        HC(H5Pset_dxpl_mpio(xp, H5FD_MPIO_COLLECTIVE));
        if (prod) {
            HC(fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
            HC(fs = H5Screate_simple(2, dims, NULL));
            HC(ds = H5Dcreate2(fid, "field", H5T_NATIVE_DOUBLE, fs, H5P_DEFAULT, H5P_DEFAULT,
                               H5P_DEFAULT));
            HC(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
            HC(ms = H5Screate_simple(2, count, NULL));
            HC(H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, xp, buf));
        }
        MPI_Barrier(MPI_COMM_WORLD); /* (the consumers wait for the writers' close below) */
        if (prod) {
            H5Sclose(ms);
            H5Sclose(fs);
            H5Dclose(ds);
            HC(H5Fclose(fid));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (!prod) {
            HC(fid = H5Fopen(path, H5F_ACC_RDONLY, fapl));
            HC(ds = H5Dopen2(fid, "field", H5P_DEFAULT));
            HC(fs = H5Dget_space(ds));
            HC(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
            HC(ms = H5Screate_simple(2, count, NULL));
            HC(H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, xp, buf));
            H5Sclose(ms);
            H5Sclose(fs);
            H5Dclose(ds);
            HC(H5Fclose(fid));
            check(buf, step, s2, c2, n, "h5");
        }
        H5Pclose(xp);
        H5Pclose(fapl);
        MPI_Barrier(MPI_COMM_WORLD);
        if (s >= 0)
            t[s] = MPI_Wtime() - t0;
    }
    if (wrank == 0)
        unlink(path);
    report("h5", n, steps, t, bytes, -1);
    free(buf);
    free(t);
}

int main(int argc, char **argv)
{
    uint64_t n = 2048;
    int steps = 5;
    const char *ways = "select,all,h5", *dir = ".";
    char list[256], *w, *save = NULL;

    {
        enum { O_P = 256, O_N, O_STEPS, O_WAYS, O_DIR, O_COMPUTE, O_THREAD, O_VERSION };
        static const struct option longopts[] = {{"p", required_argument, NULL, O_P},
                                                 {"n", required_argument, NULL, O_N},
                                                 {"steps", required_argument, NULL, O_STEPS},
                                                 {"ways", required_argument, NULL, O_WAYS},
                                                 {"dir", required_argument, NULL, O_DIR},
                                                 {"compute-ms", required_argument, NULL, O_COMPUTE},
                                                 {"mpi-thread", required_argument, NULL, O_THREAD},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {"version", no_argument, NULL, O_VERSION},
                                                 {NULL, 0, NULL, 0}};
        const char *prog = "xfer-mxnbench";
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
            switch (c) {
            case 'h':
                printf(
                    "usage: mpiexec -n P+Q xfer-mxnbench --p P [--n N] [--steps S]\n"
                    "           [--ways "
                    "select,all,mixed,mixed_direct,pairs,pairs_nostage,bind,h5]\n"
                    "           [--dir DIR] [--compute-ms C] [--mpi-thread single|multiple]\n"
                    "           [-h|--help] [--version]\n"
                    "An N x N field from P producers to consumers that each need a block: M x N\n"
                    "selections against the whole field and a parallel HDF5 file\n"
                    "(docs/benchmarks.md).\n");
                return 0;
            case O_VERSION:
                xfer_cli_version(prog);
                return 0;
            case O_P:
                P = (int) xfer_cli_long(prog, "--p", optarg, 1, 1 << 20);
                break;
            case O_N:
                n = (uint64_t) xfer_cli_long(prog, "--n", optarg, 2, 1L << 32);
                break;
            case O_STEPS:
                steps = (int) xfer_cli_long(prog, "--steps", optarg, 1, 1 << 30);
                break;
            case O_WAYS:
                ways = optarg;
                break;
            case O_DIR:
                dir = optarg;
                break;
            case O_COMPUTE:
                compute_ms = (int) xfer_cli_long(prog, "--compute-ms", optarg, 0, 1 << 30);
                break;
            case O_THREAD:
                if (strcmp(optarg, "single") && strcmp(optarg, "multiple"))
                    xfer_cli_usage_error(prog, "--mpi-thread: expected single or multiple");
                threaded = !strcmp(optarg, "multiple");
                break;
            default:
                xfer_cli_bad_option(prog, c, argv);
            }
        }
        if (optind < argc)
            xfer_cli_usage_error(prog, "unexpected argument \"%s\"", argv[optind]);
    }
    if (threaded) {
        int provided = MPI_THREAD_SINGLE;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided != MPI_THREAD_MULTIPLE)
            DIE("--mpi-thread multiple: MPI provides only level %d", provided);
    } else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (P < 1 || P >= wsize || n < 2 || steps < 1)
        DIE("--p must leave consumers (1 <= P < %d), --n >= 2, --steps >= 1", wsize);
    prod = wrank < P;
    MPI_Comm_split(MPI_COMM_WORLD, prod, wrank, &comp);
    if (wrank == 0)
        printf("way,p,q,n,steps,median_ms,min_ms,max_ms,bytes_per_consumer,"
               "peak_rss_producer_kib,peak_rss_consumer_kib,copied_per_byte_producer,"
               "copied_per_byte_consumer\n");
    snprintf(list, sizeof(list), "%s", ways);
    for (w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (!strcmp(w, "select") || !strcmp(w, "all") || !strcmp(w, "mixed") ||
            !strcmp(w, "mixed_direct") || !strcmp(w, "pairs") || !strcmp(w, "pairs_nostage") ||
            !strcmp(w, "bind"))
            stream(w, n, steps, dir);
        else if (!strcmp(w, "h5"))
            file(n, steps, dir);
        else
            DIE("--ways: unknown way %s (select, all, mixed, mixed_direct, pairs, pairs_nostage, "
                "bind, h5)",
                w);
    }
    MPI_Comm_free(&comp);
    MPI_Finalize();
    return 0;
}
