/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer-joinbench: a joined dataset whose per-rank rows are skewed, from P producer ranks to the
 * other ranks of the job, every consumer taking every row (issue 30). Each step every producer
 * holds rows of W float64: one rank, drawn from --seed and never the previous step's, holds twice
 * the mean, the others share the rest in drawn proportions (each below twice the mean), so the
 * step's total is P times the mean and its heaviest rank is 2x the average in every step. The
 * ways, in one job:
 *   joined  a channel with dims: [joined, W], selection: all: each producer puts its rows, each
 *           consumer gets the step's rows (XFER_ALGORITHM as the caller left it: unset is auto)
 *   padded  a channel with a fixed dataset of dims [P * maxrows, W]: every producer puts
 *           maxrows rows (twice the mean), its own first, padding after; what a code does today
 *           when its rows change from step to step
 *   native  MPI_Allgatherv on an intercommunicator of its own: producers send their rows,
 *           consumers 0 bytes, every consumer receives every producer's rows packed
 *   coll    the same call through libxfer's collective alone (xfer_allgatherv_inter, half
 *           duplex, --coll-algo, auto by default: the joined path's plan chooses as auto does for
 *           each step's counts, among the algorithms that never split the groups): the
 *           joined way less the runtime (its puts and gets, the counts' exchange, the step's
 *           two phases); reported as coll:ALGO
 * Every step runs every way once, in an order drawn afresh each step (the same on all ranks), so
 * a slow spell of the machine or what one way leaves in the network hits all alike. A way's step
 * starts after a world barrier and ends when a closing barrier completes (driven by
 * xfer_channel_progress for the channels: a producer's step moves only while it is in libxfer);
 * its time is world rank 0's. Outside the timing the consumers check every row they received
 * against the pattern (any difference ends the job).
 *
 * Floor (--link-mbit R, the measured one-way rate of a host's link, one rank per host): every
 * consumer must take in the step's T bytes through its link and every producer must send its
 * rows at least once, so floor = max(T, max_r S_r) * 8 / R, with S_r producer r's bytes; as
 * S_r <= T, it is T * 8 / R. The padded way moves 2T and is held to the same floor (its useful
 * bytes).
 *
 * Output: rank 0 prints the seed and each step's rows ("step S: heavy rank H, rows a,b,..."),
 * then one CSV line per way (with --csv FILE, appended to FILE, the header when it is new):
 *   label,way,p,q,width,mean_bytes,steps,warmup,seed,median_ms,min_ms,max_ms,floor_ms,
 *   ratio_floor,step_bytes,moved_bytes,peak_rss_producer_kib,peak_rss_consumer_kib,
 *   rss_kib_by_rank,samples_ms
 * (ratio_floor = median / floor; step_bytes T; moved_bytes what the way moves per step, 2T for
 * padded; peak RSS the largest getrusage ru_maxrss of each side and every rank's, space-separated
 * in world rank order: whole processes, so run one way per job to tell the ways' memory apart).
 *
 *   xfer-joinbench --p P [--mib M] [--width W] [--steps S] [--warmup K] [--seed N]
 *                  [--ways joined,padded,native,coll] [--coll-algo NAME] [--link-mbit R]
 *                  [--dir DIR] [--csv FILE]
 *                  [--label L]
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <xfer/xfer.h>

#include "common/cli.h"

enum { W_JOINED, W_PADDED, W_NATIVE, W_COLL, NWAYS };
static const char *const way_name[NWAYS] = {"joined", "padded", "native", "coll"};

typedef struct bench {
    int P, Q, prod, me;     /* me: rank in its side */
    uint64_t width;         /* float64 per row */
    uint64_t mean, maxrows; /* a producer's rows: the mean, the most (twice the mean) */
    uint64_t seed;          /* of the rows and the ways' order */
    int steps, warmup;
    int use[NWAYS];
    double link_mbit;      /* 0: no floor */
    const char *coll_algo; /* the coll way's algorithm */
    MPI_Comm comp, inter[NWAYS];
    xfer_t *x;
    xfer_channel_t *ch[NWAYS]; /* joined, padded */
    double *send;              /* maxrows rows: this producer's rows first */
    double *recv[NWAYS];       /* what a consumer receives */
    int *rc, *rd;              /* native: bytes of each remote rank and their displacements */
} bench_t;

static int wrank, wsize;

#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "xfer-joinbench: rank %d: ", wrank);                                       \
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
#define MC(call)                                                                                   \
    do {                                                                                           \
        if ((call) != MPI_SUCCESS)                                                                 \
            DIE("%s failed", #call);                                                               \
    } while (0)

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        DIE("out of memory (%zu bytes)", n);
    return p;
}

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* Uniform in [0, 1) from (seed, step, what). */
static double draw(uint64_t seed, uint64_t step, uint64_t what)
{
    return (double) (splitmix(seed ^ splitmix(step * 1000003u + what)) >> 11) * 0x1.0p-53;
}

/* Step @p s's rows of every producer: rank *@p heavy (drawn, never @p prev) holds 2 * mean,
 * the others share (P - 2) * mean in proportions drawn from [0.5, 1.5), so each holds less than
 * 2 * mean and the total is P * mean. */
static void rows_of_step(const bench_t *b, uint64_t s, int prev, uint64_t *rows, int *heavy)
{
    const int P = b->P;
    const uint64_t rest = (uint64_t) (P - 2) * b->mean;
    double w[1024], wsum = 0;
    uint64_t given = 0;
    int r;

    *heavy = prev < 0 ? (int) (draw(b->seed, s, 0) * P)
                      : (prev + 1 + (int) (draw(b->seed, s, 0) * (P - 1))) % P;
    for (r = 0; r < P; r++) {
        w[r] = r == *heavy ? 0 : 0.5 + draw(b->seed, s, 1 + (uint64_t) r);
        wsum += w[r];
    }
    for (r = 0; r < P; r++) {
        rows[r] = r == *heavy ? 2 * b->mean : (uint64_t) ((double) rest * w[r] / wsum);
        given += r == *heavy ? 0 : rows[r];
    }
    for (r = 0; given < rest; r = (r + 1) % P) /* the rounding's remainder, a row each */
        if (r != *heavy) {
            rows[r]++;
            given++;
        }
}

static double value(uint64_t s, int rank, uint64_t i, uint64_t j, uint64_t width)
{
    return (double) ((s * 1000003u + (uint64_t) rank * 7919u + i * width + j) % 16777213u);
}

static void fill(const bench_t *b, uint64_t s, uint64_t rows)
{
    for (uint64_t i = 0; i < rows; i++)
        for (uint64_t j = 0; j < b->width; j++)
            b->send[i * b->width + j] = value(s, b->me, i, j, b->width);
}

/* Producer r's @p rows rows at @p at, as it sent them in step @p s. */
static void check(const bench_t *b, int way, uint64_t s, int r, uint64_t rows, const double *at)
{
    for (uint64_t i = 0; i < rows; i++)
        for (uint64_t j = 0; j < b->width; j++)
            if (at[i * b->width + j] != value(s, r, i, j, b->width))
                DIE("%s: step %" PRIu64 ": producer %d's row %" PRIu64
                    " differs at column %" PRIu64,
                    way_name[way], s, r, i, j);
}

static void step_joined(bench_t *b, uint64_t s, const uint64_t *rows, uint64_t total)
{
    xfer_channel_t *ch = b->ch[W_JOINED];
    if (b->prod) {
        xfer_dataset_desc_t d;
        memset(&d, 0, sizeof(d));
        d.name = "rows";
        d.type = XFER_TYPE_FLOAT64;
        d.ndims = 2;
        d.dims[1] = b->width;
        d.count[0] = rows[b->me];
        d.count[1] = b->width;
        XC(xfer_put(ch, &d, b->send));
    } else {
        xfer_step_status_t ss;
        xfer_dataset_desc_t shape, o;
        uint64_t got[1024];
        int n = 0, r;
        XC(xfer_step_begin(ch, -1, &ss));
        if (ss != XFER_STEP_OK)
            DIE("joined: step %" PRIu64 ": no step", s);
        XC(xfer_get_shape(ch, "rows", &shape));
        if (shape.dims[0] != total || shape.count[0] != total)
            DIE("joined: step %" PRIu64 ": %" PRIu64 " rows, %" PRIu64 " expected", s,
                shape.dims[0], total);
        XC(xfer_get(ch, "rows", b->recv[W_JOINED], total * b->width * sizeof(double), &o));
        XC(xfer_get_rows(ch, "rows", got, b->P, &n)); /* each producer's rows, as the step says */
        for (r = 0; r < b->P; r++)
            if (n != b->P || got[r] != rows[r])
                DIE("joined: step %" PRIu64 ": producer %d's rows are %" PRIu64 ", %" PRIu64
                    " expected",
                    s, r, got[r], rows[r]);
    }
    XC(xfer_step_end(ch));
}

static void step_padded(bench_t *b, uint64_t s)
{
    xfer_channel_t *ch = b->ch[W_PADDED];
    const uint64_t all = (uint64_t) b->P * b->maxrows;
    if (b->prod) {
        xfer_dataset_desc_t d;
        memset(&d, 0, sizeof(d));
        d.name = "rows";
        d.type = XFER_TYPE_FLOAT64;
        d.ndims = 2;
        d.dims[0] = all;
        d.dims[1] = b->width;
        d.start[0] = (uint64_t) b->me * b->maxrows;
        d.count[0] = b->maxrows;
        d.count[1] = b->width;
        XC(xfer_put(ch, &d, b->send));
    } else {
        xfer_step_status_t ss;
        xfer_dataset_desc_t o;
        XC(xfer_step_begin(ch, -1, &ss));
        if (ss != XFER_STEP_OK)
            DIE("padded: step %" PRIu64 ": no step", s);
        XC(xfer_get(ch, "rows", b->recv[W_PADDED], all * b->width * sizeof(double), &o));
    }
    XC(xfer_step_end(ch));
}

static void step_native(bench_t *b, const uint64_t *rows)
{
    const uint64_t rb = b->width * sizeof(double);
    int r, mine = b->prod ? (int) (rows[b->me] * rb) : 0;
    if (!b->prod)
        for (r = 0; r < b->P; r++) {
            b->rc[r] = (int) (rows[r] * rb);
            b->rd[r + 1] = b->rd[r] + b->rc[r];
        }
    MC(MPI_Allgatherv(b->send, mine, MPI_BYTE, b->recv[W_NATIVE], b->rc, b->rd, MPI_BYTE,
                      b->inter[W_NATIVE]));
}

static void step_coll(bench_t *b, const uint64_t *rows)
{
    const uint64_t rb = b->width * sizeof(double);
    xfer_coll_opts_t o;
    int r, mine = b->prod ? (int) (rows[b->me] * rb) : 0;
    if (!b->prod)
        for (r = 0; r < b->P; r++) {
            b->rc[r] = (int) (rows[r] * rb);
            b->rd[r + 1] = b->rd[r] + b->rc[r];
        }
    XC(xfer_coll_opts_init(&o));
    o.algorithm = b->coll_algo;
    o.duplex = XFER_DUPLEX_HALF;
    o.check = XFER_CHECK_OFF; /* as the runtime's plans */
    XC(xfer_allgatherv_inter(b->send, mine, MPI_BYTE, b->recv[W_COLL], b->rc, b->rd, MPI_BYTE,
                             b->inter[W_COLL], &o));
}

/* The closing barrier, the channels moving meanwhile. */
static void close_step(bench_t *b, int way)
{
    MPI_Request rq;
    int done = 0;
    MC(MPI_Ibarrier(MPI_COMM_WORLD, &rq));
    while (!done) {
        if (b->ch[way])
            XC(xfer_channel_progress(b->ch[way], NULL));
        MC(MPI_Test(&rq, &done, MPI_STATUS_IGNORE));
    }
}

static void verify(const bench_t *b, int way, uint64_t s, const uint64_t *rows)
{
    uint64_t at = 0;
    int r;
    if (b->prod)
        return;
    for (r = 0; r < b->P; r++) {
        const uint64_t first = way == W_PADDED ? (uint64_t) r * b->maxrows : at;
        check(b, way, s, r, rows[r], b->recv[way] + first * b->width);
        at += rows[r];
    }
}

static int cmp(const void *a, const void *c)
{
    const double x = *(const double *) a, y = *(const double *) c;
    return x < y ? -1 : x > y;
}

static void write_yaml(const bench_t *b, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        DIE("cannot write %s", path);
    fprintf(f,
            "workflow: joinbench\nlaunch: user\ncontrol: {timeout_ms: 600000}\n"
            "components:\n  - {name: prod, nprocs: %d, cmd: [none]}\n"
            "  - {name: cons, nprocs: %d, cmd: [none]}\nchannels:\n",
            b->P, b->Q);
    if (b->use[W_JOINED])
        fprintf(f,
                "  - {name: j, from: prod, to: cons, max_in_flight_steps: 1, selection: all,\n"
                "     attributes_bytes: 0,\n"
                "     datasets: [{name: rows, type: float64, dims: [joined, %" PRIu64 "]}]}\n",
                b->width);
    if (b->use[W_PADDED])
        fprintf(f,
                "  - {name: f, from: prod, to: cons, max_in_flight_steps: 1, selection: all,\n"
                "     attributes_bytes: 0,\n"
                "     datasets: [{name: rows, type: float64, dims: [%" PRIu64 ", %" PRIu64 "]}]}\n",
                (uint64_t) b->P * b->maxrows, b->width);
    if (fclose(f) != 0)
        DIE("cannot write %s", path);
}

static void setup(bench_t *b, const char *dir)
{
    static const char *const chan[NWAYS] = {"j", "f", NULL, NULL};
    const uint64_t rb = b->width * sizeof(double);
    char path[4096];
    int w;

    b->prod = wrank < b->P;
    b->me = b->prod ? wrank : wrank - b->P;
    MC(MPI_Comm_split(MPI_COMM_WORLD, b->prod, wrank, &b->comp));
    for (w = 0; w < NWAYS; w++) {
        b->inter[w] = MPI_COMM_NULL;
        if (b->use[w])
            MC(MPI_Intercomm_create(b->comp, 0, MPI_COMM_WORLD, b->prod ? b->P : 0, 30 + w,
                                    &b->inter[w]));
    }
    if (b->use[W_JOINED] || b->use[W_PADDED]) {
        snprintf(path, sizeof(path), "%s/joinbench-%d.yaml", dir, (int) getppid());
        if (wrank == 0)
            write_yaml(b, path);
        MC(MPI_Bcast(path, (int) sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD));
        MC(MPI_Barrier(MPI_COMM_WORLD));
        XC(xfer_init(path, b->prod ? "prod" : "cons", b->comp, &b->x));
        for (w = 0; w < NWAYS; w++)
            if (chan[w] && b->use[w]) {
                XC(xfer_channel_attach(b->x, chan[w], b->inter[w]));
                XC(xfer_channel_open(b->x, chan[w], &b->ch[w]));
            }
        MC(MPI_Barrier(MPI_COMM_WORLD));
        if (wrank == 0)
            unlink(path);
    }
    if (b->prod) { /* every way sends from it: resident once, for all alike */
        b->send = xmalloc(b->maxrows * rb);
        memset(b->send, 0, b->maxrows * rb);
    } else {
        const uint64_t total = (uint64_t) b->P * b->mean;
        for (w = 0; w < NWAYS; w++)
            if (b->use[w]) {
                const uint64_t n = (w == W_PADDED ? (uint64_t) b->P * b->maxrows : total) * rb;
                b->recv[w] = xmalloc(n);
                memset(b->recv[w], 0, n);
            }
    }
    b->rc = calloc((size_t) (b->prod ? b->Q : b->P) + 1, sizeof(int));
    b->rd = calloc((size_t) (b->prod ? b->Q : b->P) + 1, sizeof(int));
    if (!b->rc || !b->rd)
        DIE("out of memory");
}

static void report(const bench_t *b, int way, double *t, double floor_s, const char *label,
                   FILE *csv)
{
    const uint64_t rb = b->width * sizeof(double), T = (uint64_t) b->P * b->mean * rb;
    struct rusage u;
    long rss, *all = NULL, rp = 0, rcn = 0;
    int r, n = b->steps;
    double med;
    FILE *outs[2] = {stdout, csv};
    char name[64];

    getrusage(RUSAGE_SELF, &u);
    rss = u.ru_maxrss;
    if (wrank == 0)
        all = calloc((size_t) wsize, sizeof(long));
    MC(MPI_Gather(&rss, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    if (wrank != 0)
        return;
    snprintf(name, sizeof(name), "%s%s%s", way_name[way], way == W_COLL ? ":" : "",
             way == W_COLL ? b->coll_algo : "");
    for (r = 0; r < wsize; r++) {
        long *side = r < b->P ? &rp : &rcn;
        *side = all[r] > *side ? all[r] : *side;
    }
    {
        double *sorted = xmalloc((size_t) n * sizeof(double));
        memcpy(sorted, t, (size_t) n * sizeof(double));
        qsort(sorted, (size_t) n, sizeof(double), cmp);
        med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        for (int o = 0; o < 2; o++) {
            FILE *f = outs[o];
            if (!f)
                continue;
            fprintf(f,
                    "%s,%s,%d,%d,%" PRIu64 ",%" PRIu64 ",%d,%d,%" PRIu64
                    ",%.3f,%.3f,%.3f,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%ld,%ld,",
                    label, name, b->P, b->Q, b->width, b->mean * rb, b->steps, b->warmup, b->seed,
                    1e3 * med, 1e3 * sorted[0], 1e3 * sorted[n - 1], 1e3 * floor_s,
                    floor_s > 0 ? med / floor_s : 0.0, T, way == W_PADDED ? 2 * T : T, rp, rcn);
            for (r = 0; r < wsize; r++)
                fprintf(f, "%s%ld", r ? " " : "", all[r]);
            fprintf(f, ",");
            for (int s = 0; s < n; s++)
                fprintf(f, "%s%.3f", s ? " " : "", 1e3 * t[s]);
            fprintf(f, "\n");
            fflush(f);
        }
        free(sorted);
    }
    free(all);
}

static void usage(void)
{
    printf("usage: mpiexec -n P+Q xfer-joinbench --p P [--mib M] [--width W] [--steps S]\n"
           "           [--warmup K] [--seed N] [--ways joined,padded,native,coll]\n"
           "           [--coll-algo NAME] [--link-mbit R]\n"
           "           [--dir DIR] [--csv FILE] [--label L] [-h|--help] [--version]\n"
           "A joined dataset with skewed rows (the heaviest producer 2x the mean, a different\n"
           "one every step) through the runtime, against padding every producer to the most\n"
           "rows and against MPI_Allgatherv, with the link's floor (docs/benchmarks.md).\n"
           "  --mib M      mean MiB per producer per step (4)\n"
           "  --width W    float64 per row (8)\n"
           "  --steps S    timed steps (8), after --warmup K untimed ones (1)\n"
           "  --ways       of joined, padded, native and coll (xfer_allgatherv_inter with\n"
           "               --coll-algo, auto by default): joined,padded,native\n");
}

int main(int argc, char **argv)
{
    bench_t b;
    const char *prog = "xfer-joinbench", *dir = "/tmp", *ways = "joined,padded,native", *label = "",
               *csvpath = NULL;
    double mib = 4;
    FILE *csv = NULL;
    uint64_t *rows, total;
    double *t[NWAYS], floor_s = 0;
    int prev = -1, w, heavy;
    char list[256], *tok, *save = NULL;

    memset(&b, 0, sizeof(b));
    b.width = 8;
    b.steps = 8;
    b.warmup = 1;
    b.seed = 30;
    b.coll_algo = "auto";
    {
        enum {
            O_P = 256,
            O_MIB,
            O_WIDTH,
            O_STEPS,
            O_WARMUP,
            O_SEED,
            O_WAYS,
            O_LINK,
            O_DIR,
            O_CSV,
            O_LABEL,
            O_COLL,
            O_VERSION
        };
        static const struct option longopts[] = {{"p", required_argument, NULL, O_P},
                                                 {"mib", required_argument, NULL, O_MIB},
                                                 {"width", required_argument, NULL, O_WIDTH},
                                                 {"steps", required_argument, NULL, O_STEPS},
                                                 {"warmup", required_argument, NULL, O_WARMUP},
                                                 {"seed", required_argument, NULL, O_SEED},
                                                 {"ways", required_argument, NULL, O_WAYS},
                                                 {"link-mbit", required_argument, NULL, O_LINK},
                                                 {"dir", required_argument, NULL, O_DIR},
                                                 {"csv", required_argument, NULL, O_CSV},
                                                 {"label", required_argument, NULL, O_LABEL},
                                                 {"coll-algo", required_argument, NULL, O_COLL},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {"version", no_argument, NULL, O_VERSION},
                                                 {NULL, 0, NULL, 0}};
        int c;
        char *end;
        opterr = 0;
        while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
            switch (c) {
            case 'h':
                usage();
                return 0;
            case O_VERSION:
                xfer_cli_version(prog);
                return 0;
            case O_P:
                b.P = (int) xfer_cli_long(prog, "--p", optarg, 2, 1023);
                break;
            case O_MIB:
                mib = strtod(optarg, &end);
                if (*end || !(mib > 0) || mib > 256)
                    xfer_cli_usage_error(prog, "--mib: expected MiB in (0, 256], got %s", optarg);
                break;
            case O_WIDTH:
                b.width = (uint64_t) xfer_cli_long(prog, "--width", optarg, 1, 1 << 20);
                break;
            case O_STEPS:
                b.steps = (int) xfer_cli_long(prog, "--steps", optarg, 1, 1 << 20);
                break;
            case O_WARMUP:
                b.warmup = (int) xfer_cli_long(prog, "--warmup", optarg, 0, 1 << 20);
                break;
            case O_SEED:
                b.seed = (uint64_t) xfer_cli_long(prog, "--seed", optarg, 0, LONG_MAX);
                break;
            case O_WAYS:
                ways = optarg;
                break;
            case O_LINK:
                b.link_mbit = strtod(optarg, &end);
                if (*end || !(b.link_mbit > 0))
                    xfer_cli_usage_error(prog, "--link-mbit: expected Mbit/s, got %s", optarg);
                break;
            case O_DIR:
                dir = optarg;
                break;
            case O_CSV:
                csvpath = optarg;
                break;
            case O_LABEL:
                label = optarg;
                break;
            case O_COLL:
                b.coll_algo = optarg;
                break;
            default:
                xfer_cli_bad_option(prog, c, argv);
            }
        }
        if (optind < argc)
            xfer_cli_usage_error(prog, "unexpected argument \"%s\"", argv[optind]);
        if (b.P < 2)
            xfer_cli_usage_error(prog, "--p P (2 or more producers) is required");
    }
    snprintf(list, sizeof(list), "%s", ways);
    for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        for (w = 0; w < NWAYS && strcmp(tok, way_name[w]); w++)
            ;
        if (w == NWAYS)
            xfer_cli_usage_error(prog, "--ways: unknown way %s (joined, padded, native, coll)",
                                 tok);
        b.use[w] = 1;
    }
    b.mean = (uint64_t) (mib * 1048576.0 / (double) (b.width * sizeof(double)));
    b.maxrows = 2 * b.mean;
    if (b.mean < 1 || (double) b.P * (double) b.maxrows * (double) b.width * 8 > INT_MAX)
        xfer_cli_usage_error(prog, "--mib, --width: a row must fit the mean, and the padded "
                                   "step (P x 2 x mean) 2 GiB");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    b.Q = wsize - b.P;
    if (b.Q < 1)
        DIE("--p %d leaves no consumer in %d ranks", b.P, wsize);
    if (wrank == 0 && csvpath) {
        const int fresh = access(csvpath, F_OK) != 0;
        if (!(csv = fopen(csvpath, "a")))
            DIE("cannot append to %s", csvpath);
        if (fresh)
            fprintf(csv, "label,way,p,q,width,mean_bytes,steps,warmup,seed,median_ms,min_ms,"
                         "max_ms,floor_ms,ratio_floor,step_bytes,moved_bytes,"
                         "peak_rss_producer_kib,peak_rss_consumer_kib,rss_kib_by_rank,"
                         "samples_ms\n");
    }
    setup(&b, dir);
    rows = xmalloc((size_t) b.P * sizeof(uint64_t));
    for (w = 0; w < NWAYS; w++)
        t[w] = calloc((size_t) b.steps, sizeof(double));
    total = (uint64_t) b.P * b.mean;
    if (b.link_mbit > 0)
        floor_s = (double) (total * b.width * sizeof(double)) * 8 / (b.link_mbit * 1e6);
    if (wrank == 0)
        printf("xfer-joinbench: p %d, q %d, rows of %" PRIu64 " float64, mean %" PRIu64
               " rows (%.2f MiB) per producer, the heaviest %" PRIu64
               " rows; rows and order drawn from seed %" PRIu64 "; floor %.1f ms"
               " = %" PRIu64 " bytes * 8 / %.2f Mbit/s\n",
               b.P, b.Q, b.width, b.mean, (double) (b.mean * b.width * 8) / 1048576.0, b.maxrows,
               b.seed, 1e3 * floor_s, total * b.width * 8, b.link_mbit);
    for (int s = 0; s < b.warmup + b.steps; s++) {
        int order[NWAYS], n = 0;
        rows_of_step(&b, (uint64_t) s, prev, rows, &heavy);
        prev = heavy;
        if (wrank == 0) {
            printf("step %d%s: heavy rank %d, rows", s, s < b.warmup ? " (warm-up)" : "", heavy);
            for (int r = 0; r < b.P; r++)
                printf("%s%" PRIu64, r ? "," : " ", rows[r]);
            printf("\n");
            fflush(stdout);
        }
        for (w = 0; w < NWAYS; w++)
            if (b.use[w])
                order[n++] = w;
        for (int i = n - 1; i > 0; i--) { /* this step's order, the same on every rank */
            const int j = (int) (draw(b.seed, (uint64_t) s, 5000 + (uint64_t) i) * (i + 1)),
                      x = order[i];
            order[i] = order[j];
            order[j] = x;
        }
        if (b.prod)
            fill(&b, (uint64_t) s, rows[b.me]);
        for (int i = 0; i < n; i++) {
            double t0;
            w = order[i];
            MC(MPI_Barrier(MPI_COMM_WORLD));
            t0 = MPI_Wtime();
            if (w == W_JOINED)
                step_joined(&b, (uint64_t) s, rows, total);
            else if (w == W_PADDED)
                step_padded(&b, (uint64_t) s);
            else if (w == W_NATIVE)
                step_native(&b, rows);
            else
                step_coll(&b, rows);
            close_step(&b, w);
            if (s >= b.warmup)
                t[w][s - b.warmup] = MPI_Wtime() - t0;
            verify(&b, w, (uint64_t) s, rows);
        }
    }
    for (w = 0; w < NWAYS; w++)
        if (b.use[w])
            report(&b, w, t[w], floor_s, label, csv);
    if (b.x)
        XC(xfer_finalize(&b.x));
    for (w = 0; w < NWAYS; w++) {
        if (b.inter[w] != MPI_COMM_NULL)
            MPI_Comm_free(&b.inter[w]);
        free(b.recv[w]);
        free(t[w]);
    }
    if (csv)
        fclose(csv);
    MPI_Comm_free(&b.comp);
    free(b.send);
    free(b.rc);
    free(b.rd);
    free(rows);
    MPI_Finalize();
    return 0;
}
