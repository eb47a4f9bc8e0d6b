/* SPDX-License-Identifier: BSD-3-Clause */
/* gray-scott-sim: the producer of the coupled example (docs/example.md). A 2-D Gray-Scott
 * reaction-diffusion model,
 *     u_t = Du lap(u) - u v^2 + F (1 - u),    v_t = Dv lap(v) + u v^2 - (F + k) v,
 * explicit Euler, 5-point Laplacian, unit grid spacing, periodic boundaries, on a 2-D block
 * decomposition of the component's ranks (MPI_Cart_create) with one halo cell exchanged each
 * step: by default with MPI_Sendrecv (U and V together, one derived datatype per direction), or
 * with --halo vonneumann|moore as one persistent isomorphic neighbourhood all-to-all of libxfer
 * (xfer/iso.h) over the 4 or 8 neighbours. Every
 * --every steps it puts its block of U and V and the simulated time into the workflow's channel
 * and computes the statistics the analysis computes, writing them to reference_stats.csv in
 * the output directory's .check/ (GS_CHECK_SUBDIR) so that the two can be compared.
 *
 * When the workflow file declares the joined record dataset `particles`, it also moves --particles
 * tracer particles up the gradient of V with Brownian noise (gs_tracers.c), each owned by the
 * rank whose block holds it and handed to a neighbour when it leaves, and puts each rank's
 * particles with the fields (their number changes every step), the number seeded as the step
 * attribute n_particles, and their reference statistics to .check/reference_particles.csv.
 *
 * The initial state depends only on the global cell index and the seed (squares of u = 0.5,
 * v = 0.25, one in the middle, a hash of the index for noise), so results are identical for
 * any rank count.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

#include "common/cli.h"
#include "gs_common.h"
#include "gs_particles.h"

/* How the halo is exchanged (--halo). */
enum { HALO_SENDRECV, HALO_VONNEUMANN, HALO_MOORE, HALO_MODES };
static const char *const halo_names[] = {"sendrecv", "vonneumann", "moore"};

/* What rank 0 puts instead of its particles at the second coupled step (--fault-particles, for
 * the tests of the analysis' particle check): nothing wrong, one particle fewer, one twice, or
 * one with another's id (the count right, an id twice and one missing). */
enum { FAULT_NONE, FAULT_DROP, FAULT_DUPLICATE, FAULT_RELABEL, FAULT_MODES };
static const char *const fault_names[] = {"none", "drop", "duplicate", "relabel"};

typedef struct opts {
    long steps, every;
    long size; /* 0: the workflow file's shape */
    int bins;
    int halo; /* HALO_* */
    double du, dv, feed, kill, dt, noise;
    long particles;
    double chi, dp;
    int fault; /* FAULT_* */
    int world; /* --world: its own communication on MPI_COMM_WORLD, never xfer_comm */
    uint64_t seed;
    const char *output, *channel, *config, *component;
} opts_t;

/* The local block with one halo cell on each side: U then V, (nr + 2) x (nc + 2) each. */
typedef struct grid {
    int nr, nc;                /* interior rows and columns */
    uint64_t r0, c0;           /* global index of interior cell (1, 1) */
    size_t field;              /* elements of one field with its halo */
    double *cur, *next;        /* U at [0, field), V at [field, 2 field) */
    int up, down, left, right; /* neighbours in the periodic process grid */
} grid_t;

/* The halo exchange as an isomorphic all-to-all (--halo vonneumann|moore). Offsets are (row,
 * column) in the process grid, rows first as MPI_Cart_create numbers them: the four faces up,
 * down, left, right, then (moore) the four corners (-1,-1), (-1,1), (1,-1), (1,1). Block i of
 * sbuf goes to the neighbour at offset i: the interior cells facing it (a row, a column or a
 * corner cell), U then V; block i of rbuf comes from the neighbour at minus offset i and fills
 * the halo cells on the opposite side. xfer_iso_alltoall takes one block size and blocks at
 * one stride, while a row, a column and a corner of the halo'd block lie at unrelated offsets,
 * so the blocks are staged: copied in before xfer_iso_start and out after xfer_iso_wait (a few
 * rows per step, next to the compute). The block size must be the same on every process (the
 * request checks it), so it is the longest row or column of any block, ceil(ny / dims[0]) or
 * ceil(nx / dims[1]) cells per field; a block uses its first 2 x rows x cols doubles. */
#define HALO_MAX_NBRS 8
typedef struct halo {
    int s;                 /* neighbours: 4 (vonneumann) or 8 (moore) */
    int blk;               /* doubles per block */
    double *sbuf, *rbuf;   /* s blocks each */
    xfer_iso_t *iso;       /* the process grid and the offsets, on a duplicate of cart */
    xfer_iso_req_t *req;   /* the persistent all-to-all from sbuf to rbuf */
    const char *algorithm; /* the schedule the request runs, and its rounds */
    int rounds;
} halo_t;

static const int halo_offsets[HALO_MAX_NBRS][2] = {{-1, 0},  {1, 0},  {0, -1}, {0, 1},
                                                   {-1, -1}, {-1, 1}, {1, -1}, {1, 1}};

static void usage(FILE *f)
{
    fprintf(f, "usage: gray-scott-sim [--steps S] [--every N] [--size L] [--bins B]\n"
               "                      [--output DIR] [--F f] [--k k] [--Du d] [--Dv d] [--dt t]\n"
               "                      [--noise a] [--seed n] [--channel NAME] [--config FILE]\n"
               "                      [--component NAME] [--halo sendrecv|vonneumann|moore]\n"
               "                      [--particles N] [--chi c] [--Dp d]\n"
               "                      [--fault-particles drop|duplicate|relabel] [--world]\n"
               "  S simulation steps (2000); every N steps (200) U and V go to the analysis;\n"
               "  L: the grid is L x L, as the workflow file declares U and V (default: its\n"
               "  shape); B histogram bins of V over [0, 1] (32); DIR (" GS_DEFAULT_OUTPUT ")\n"
               "  receives .check/reference_stats.csv. Model: Du 0.16, Dv 0.08, F 0.035, k 0.065,\n"
               "  dt 1, noise 0.02, seed 1. Halo exchange: four MPI_Sendrecv per step (sendrecv,\n"
               "  the default), or one persistent libxfer isomorphic all-to-all over the 4 face\n"
               "  neighbours (vonneumann) or the 8 face and corner neighbours (moore); all three\n"
               "  give the same results. When the workflow file declares the dataset particles,\n"
               "  N tracer particles (2000) drift up the gradient of V (velocity c grad V, c 4)\n"
               "  with diffusivity d (0.05) and go to the analysis with U and V. For the tests\n"
               "  of the analysis' particle check, --fault-particles makes rank 0 put one\n"
               "  particle fewer, one twice, or one with another's id at the second coupled step.\n"
               "  --world: the simulation's own communication on MPI_COMM_WORLD, as an uncoupled\n"
               "  code has it, not on the communicator xfer_comm gives (under xfer-run, a\n"
               "  component's MPI_COMM_WORLD is its own processes: mpi_world: component).\n");
}

/* The options; --help, --version and usage errors exit. */
static void parse_args(int argc, char **argv, opts_t *o)
{
    enum {
        O_STEPS = 256,
        O_EVERY,
        O_SIZE,
        O_BINS,
        O_SEED,
        O_F,
        O_K,
        O_DU,
        O_DV,
        O_DT,
        O_NOISE,
        O_OUTPUT,
        O_CHANNEL,
        O_CONFIG,
        O_COMPONENT,
        O_HALO,
        O_PARTICLES,
        O_CHI,
        O_DP,
        O_FAULT,
        O_WORLD,
        O_VERSION
    };
    static const struct option longopts[] = {{"steps", required_argument, NULL, O_STEPS},
                                             {"every", required_argument, NULL, O_EVERY},
                                             {"size", required_argument, NULL, O_SIZE},
                                             {"bins", required_argument, NULL, O_BINS},
                                             {"seed", required_argument, NULL, O_SEED},
                                             {"F", required_argument, NULL, O_F},
                                             {"k", required_argument, NULL, O_K},
                                             {"Du", required_argument, NULL, O_DU},
                                             {"Dv", required_argument, NULL, O_DV},
                                             {"dt", required_argument, NULL, O_DT},
                                             {"noise", required_argument, NULL, O_NOISE},
                                             {"output", required_argument, NULL, O_OUTPUT},
                                             {"channel", required_argument, NULL, O_CHANNEL},
                                             {"config", required_argument, NULL, O_CONFIG},
                                             {"component", required_argument, NULL, O_COMPONENT},
                                             {"halo", required_argument, NULL, O_HALO},
                                             {"particles", required_argument, NULL, O_PARTICLES},
                                             {"chi", required_argument, NULL, O_CHI},
                                             {"Dp", required_argument, NULL, O_DP},
                                             {"fault-particles", required_argument, NULL, O_FAULT},
                                             {"world", no_argument, NULL, O_WORLD},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, O_VERSION},
                                             {NULL, 0, NULL, 0}};
    const char *prog = "gray-scott-sim";
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
        case O_STEPS:
            o->steps = xfer_cli_long(prog, "--steps", optarg, 1, LONG_MAX);
            break;
        case O_EVERY:
            o->every = xfer_cli_long(prog, "--every", optarg, 1, LONG_MAX);
            break;
        case O_SIZE:
            o->size = xfer_cli_long(prog, "--size", optarg, 1, 1L << 30);
            break;
        case O_BINS:
            o->bins = (int) xfer_cli_long(prog, "--bins", optarg, 1, 1000000);
            break;
        case O_SEED:
            o->seed = (uint64_t) xfer_cli_long(prog, "--seed", optarg, 0, LONG_MAX);
            break;
        case O_F:
            o->feed = xfer_cli_double(prog, "--F", optarg, -1e300, 1e300);
            break;
        case O_K:
            o->kill = xfer_cli_double(prog, "--k", optarg, -1e300, 1e300);
            break;
        case O_DU:
            o->du = xfer_cli_double(prog, "--Du", optarg, -1e300, 1e300);
            break;
        case O_DV:
            o->dv = xfer_cli_double(prog, "--Dv", optarg, -1e300, 1e300);
            break;
        case O_DT:
            o->dt = xfer_cli_double(prog, "--dt", optarg, -1e300, 1e300);
            break;
        case O_NOISE:
            o->noise = xfer_cli_double(prog, "--noise", optarg, -1e300, 1e300);
            break;
        case O_OUTPUT:
            o->output = optarg;
            break;
        case O_CHANNEL:
            o->channel = optarg;
            break;
        case O_CONFIG:
            o->config = optarg;
            break;
        case O_COMPONENT:
            o->component = optarg;
            break;
        case O_WORLD:
            o->world = 1;
            break;
        case O_HALO:
            for (o->halo = 0; o->halo < HALO_MODES && strcmp(optarg, halo_names[o->halo]);
                 o->halo++)
                ;
            if (o->halo == HALO_MODES)
                xfer_cli_usage_error(prog,
                                     "--halo: expected sendrecv, vonneumann or moore, got "
                                     "\"%s\"",
                                     optarg);
            break;
        case O_PARTICLES:
            o->particles = xfer_cli_long(prog, "--particles", optarg, 0, INT32_MAX);
            break;
        case O_CHI:
            o->chi = xfer_cli_double(prog, "--chi", optarg, -1e300, 1e300);
            break;
        case O_DP:
            o->dp = xfer_cli_double(prog, "--Dp", optarg, 0, 1e300);
            break;
        case O_FAULT:
            for (o->fault = 1; o->fault < FAULT_MODES && strcmp(optarg, fault_names[o->fault]);
                 o->fault++)
                ;
            if (o->fault == FAULT_MODES)
                xfer_cli_usage_error(prog,
                                     "--fault-particles: expected drop, duplicate or relabel, "
                                     "got \"%s\"",
                                     optarg);
            break;
        default:
            xfer_cli_bad_option(prog, c, argv);
        }
    }
    if (optind < argc)
        xfer_cli_usage_error(prog, "unexpected argument \"%s\"", argv[optind]);
    if (o->every > o->steps)
        xfer_cli_usage_error(prog, "--every %ld exceeds --steps %ld: nothing to send", o->every,
                             o->steps);
}

/* Uniform in [0, 1) from the seed and a global cell index (splitmix64). */
static double noise01(uint64_t seed, uint64_t g)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + g + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double) (z >> 11) * 0x1.0p-53;
}

#define AT(g, f, i, j) ((g)->cur[(f) * (g)->field + (size_t) (i) * ((g)->nc + 2) + (size_t) (j)])

/* Is global cell (gi, gj) in one of the seed squares? GS_SEEDS squares, a tenth of the grid
 * wide, at places drawn from the seed (periodic: a square may wrap around). */
#define GS_SEEDS 5
static int in_seed(uint64_t gi, uint64_t gj, uint64_t ny, uint64_t nx, uint64_t seed)
{
    const uint64_t h = ny / 10 > 0 ? ny / 10 : 1, w = nx / 10 > 0 ? nx / 10 : 1;
    uint64_t k;
    for (k = 0; k < GS_SEEDS; k++) {
        /* the first square sits in the middle */
        const uint64_t ci = k ? (uint64_t) (noise01(seed, ~(2 * k)) * (double) ny) : ny / 2;
        const uint64_t cj = k ? (uint64_t) (noise01(seed, ~(2 * k + 1)) * (double) nx) : nx / 2;
        if ((gi + ny - ci + h / 2) % ny < h && (gj + nx - cj + w / 2) % nx < w)
            return 1;
    }
    return 0;
}

static void initialize(grid_t *g, uint64_t ny, uint64_t nx, const opts_t *o)
{
    int i, j;
    for (i = 1; i <= g->nr; i++)
        for (j = 1; j <= g->nc; j++) {
            const uint64_t gi = g->r0 + (uint64_t) i - 1, gj = g->c0 + (uint64_t) j - 1;
            double u = 1.0, v = 0.0;
            if (in_seed(gi, gj, ny, nx, o->seed)) {
                u = 0.5;
                v = 0.25;
            }
            u += o->noise * (noise01(o->seed, 2 * (gi * nx + gj)) - 0.5);
            v += o->noise * (noise01(o->seed, 2 * (gi * nx + gj) + 1) - 0.5);
            AT(g, 0, i, j) = u;
            AT(g, 1, i, j) = v < 0.0 ? 0.0 : v;
        }
}

/* One halo cell of U and V from the four neighbours: rows, then columns (corners are not
 * needed by the 5-point stencil). */
static void exchange(grid_t *g, MPI_Comm cart, MPI_Datatype row, MPI_Datatype col)
{
    const int w = g->nc + 2;
    double *a = g->cur;
    const int up = g->up, down = g->down, left = g->left, right = g->right;
    MCHECK(MPI_Sendrecv(a + w + 1, 1, row, up, 0, a + (size_t) (g->nr + 1) * w + 1, 1, row, down, 0,
                        cart, MPI_STATUS_IGNORE));
    MCHECK(MPI_Sendrecv(a + (size_t) g->nr * w + 1, 1, row, down, 1, a + 1, 1, row, up, 1, cart,
                        MPI_STATUS_IGNORE));
    MCHECK(MPI_Sendrecv(a + w + 1, 1, col, left, 2, a + w + g->nc + 1, 1, col, right, 2, cart,
                        MPI_STATUS_IGNORE));
    MCHECK(MPI_Sendrecv(a + w + g->nc, 1, col, right, 3, a + w, 1, col, left, 3, cart,
                        MPI_STATUS_IGNORE));
}

/* In one dimension of n interior cells (1..n, halo 0 and n + 1), the first cell a block for
 * neighbour offset d carries: the interior cell next to that neighbour (send) or the halo cell
 * on the opposite side (receive); all n interior cells from 1 when d is 0. */
static int halo_first(int d, int n, int recv)
{
    if (d == 0)
        return 1;
    if (recv)
        return d < 0 ? n + 1 : 0;
    return d < 0 ? 1 : n;
}

/* The cells of U and V the block of neighbour offset (dr, dc) carries. */
static void halo_rect(const grid_t *g, int dr, int dc, int recv, int *i0, int *rows, int *j0,
                      int *cols)
{
    *i0 = halo_first(dr, g->nr, recv);
    *rows = dr ? 1 : g->nr;
    *j0 = halo_first(dc, g->nc, recv);
    *cols = dc ? 1 : g->nc;
}

/* Copy the rows x cols cells at (i0, j0) of U, then of V, to the block (out) or back. */
static void halo_stage(grid_t *g, int i0, int rows, int j0, int cols, double *block, int out)
{
    int f, i, j;
    for (f = 0; f < 2; f++)
        for (i = i0; i < i0 + rows; i++)
            for (j = j0; j < j0 + cols; j++, block++) {
                if (out)
                    *block = AT(g, f, i, j);
                else
                    AT(g, f, i, j) = *block;
            }
}

static void exchange_iso(grid_t *g, halo_t *h)
{
    int n, i0, rows, j0, cols;
    for (n = 0; n < h->s; n++) {
        halo_rect(g, halo_offsets[n][0], halo_offsets[n][1], 0, &i0, &rows, &j0, &cols);
        halo_stage(g, i0, rows, j0, cols, h->sbuf + (size_t) n * h->blk, 1);
    }
    XCHECK(xfer_iso_start(h->req));
    XCHECK(xfer_iso_wait(h->req));
    for (n = 0; n < h->s; n++) {
        halo_rect(g, halo_offsets[n][0], halo_offsets[n][1], 1, &i0, &rows, &j0, &cols);
        halo_stage(g, i0, rows, j0, cols, h->rbuf + (size_t) n * h->blk, 0);
    }
}

/* Set up --halo vonneumann|moore on the process grid of cart (collective). */
static void halo_init(halo_t *h, int mode, MPI_Comm cart, const int dims[2], const int periods[2],
                      uint64_t ny, uint64_t nx)
{
    const uint64_t rmax = (ny + (uint64_t) dims[0] - 1) / (uint64_t) dims[0];
    const uint64_t cmax = (nx + (uint64_t) dims[1] - 1) / (uint64_t) dims[1];
    const uint64_t blk = 2 * (rmax > cmax ? rmax : cmax);
    memset(h, 0, sizeof(*h));
    h->s = mode == HALO_MOORE ? 8 : 4;
    if (blk > (uint64_t) INT_MAX / HALO_MAX_NBRS)
        FAIL("a %" PRIu64 "-cell halo block is too large", blk);
    h->blk = (int) blk;
    h->sbuf = calloc((size_t) h->s * blk, sizeof(double));
    h->rbuf = calloc((size_t) h->s * blk, sizeof(double));
    if (!h->sbuf || !h->rbuf)
        FAIL("out of memory for %d halo blocks of %d doubles", h->s, h->blk);
    XCHECK(xfer_iso_create(cart, 2, dims, periods, h->s, &halo_offsets[0][0], &h->iso));
    XCHECK(xfer_iso_alltoall_init(h->sbuf, h->blk, MPI_DOUBLE, h->rbuf, h->blk, MPI_DOUBLE, h->iso,
                                  NULL, &h->req));
    XCHECK(xfer_iso_req_algorithm(h->req, &h->algorithm, &h->rounds));
}

static void halo_free(halo_t *h)
{
    XCHECK(xfer_iso_req_free(&h->req));
    XCHECK(xfer_iso_free(&h->iso));
    free(h->sbuf);
    free(h->rbuf);
}

static void update(grid_t *g, const opts_t *o)
{
    const size_t w = (size_t) g->nc + 2;
    const double *u = g->cur, *v = g->cur + g->field;
    double *un = g->next, *vn = g->next + g->field, *t;
    int i, j;
    for (i = 1; i <= g->nr; i++)
        for (j = 1; j <= g->nc; j++) {
            const size_t c = (size_t) i * w + (size_t) j;
            const double lu = u[c - w] + u[c + w] + u[c - 1] + u[c + 1] - 4.0 * u[c];
            const double lv = v[c - w] + v[c + w] + v[c - 1] + v[c + 1] - 4.0 * v[c];
            const double uvv = u[c] * v[c] * v[c];
            un[c] = u[c] + o->dt * (o->du * lu - uvv + o->feed * (1.0 - u[c]));
            vn[c] = v[c] + o->dt * (o->dv * lv + uvv - (o->feed + o->kill) * v[c]);
        }
    t = g->cur;
    g->cur = g->next;
    g->next = t;
}

/* The interior of field f, packed. */
static void pack(const grid_t *g, int f, double *out)
{
    int i;
    for (i = 1; i <= g->nr; i++)
        memcpy(out + (size_t) (i - 1) * g->nc, &AT(g, f, i, 1), (size_t) g->nc * sizeof(double));
}

/* The particles of a coupled step: this rank's, any number, as rows of the joined record dataset
 * with their layout (the runtime checks it against the workflow file's declaration), and the
 * number seeded as the step attribute the analysis checks them against (rank 0's travels). With
 * a fault (--fault-particles), rank 0 puts a damaged copy instead. */
static void put_particles(xfer_channel_t *ch, const gs_tracers_t *tr, const xfer_record_t *rec,
                          int fault)
{
    const int64_t seeded = (int64_t) tr->total;
    gs_particle_t *bad = NULL;
    size_t n = tr->n;
    xfer_dataset_desc_t d;

    if (fault != FAULT_NONE) {
        if (n < 2 || !(bad = malloc((n + 1) * sizeof(*bad))))
            FAIL("--fault-particles %s: rank 0 holds %zu particles", fault_names[fault], n);
        memcpy(bad, tr->p, n * sizeof(*bad));
        if (fault == FAULT_DROP)
            n--;
        else if (fault == FAULT_DUPLICATE)
            bad[n++] = bad[0];
        else
            bad[1].id = bad[0].id;
    }
    memset(&d, 0, sizeof(d));
    d.name = GS_PARTICLES_DATASET;
    d.type = XFER_TYPE_RECORD;
    d.ndims = 1;    /* dims[0] stays 0: the dataset is joined */
    d.count[0] = n; /* this rank's rows; 0 allowed */
    d.record = rec; /* gs_particle_t's layout */
    XCHECK(xfer_put(ch, &d, bad ? bad : tr->p));
    if (gs_rank == 0)
        XCHECK(xfer_put_attr(ch, GS_PARTICLES_ATTR, XFER_TYPE_INT64, 1, &seeded));
    free(bad);
}

/* The particles' statistics the analysis computes, on the simulation's own data: one row of
 * reference_particles.csv (collective over cart). */
static void reference_particles(const gs_tracers_t *tr, gs_pstats_t *ps, MPI_Comm cart, FILE *csv,
                                uint64_t step, double time, const char *path)
{
    const uint64_t n = tr->n;
    ps->count = 0;
    ps->xsum = ps->ysum = ps->vsum = 0.0;
    gs_pstats_add(ps, tr->p, tr->n);
    MCHECK(gs_pstats_reduce(ps, cart));
    MCHECK(MPI_Gather(&n, 1, MPI_UINT64_T, ps->rows, 1, MPI_UINT64_T, 0, cart));
    if (gs_rank == 0) {
        gs_pstats_csv_row(csv, step, time, ps);
        if (fflush(csv) != 0)
            FAIL("writing %s: %s", path, strerror(errno));
    }
}

int main(int argc, char **argv)
{
    gs_program = "gray-scott-sim";
    opts_t o = {.steps = 2000,
                .every = 200,
                .bins = GS_DEFAULT_BINS,
                .du = 0.16,
                .dv = 0.08,
                .feed = 0.035,
                .kill = 0.065,
                .dt = 1.0,
                .noise = 0.02,
                .particles = GS_DEFAULT_PARTICLES,
                .chi = GS_DEFAULT_CHI,
                .dp = GS_DEFAULT_DP,
                .seed = 1,
                .output = GS_DEFAULT_OUTPUT,
                .channel = GS_DEFAULT_CHANNEL};
    int dims[2] = {0, 0}, periods[2] = {1, 1}, coords[2], csize, wrank;
    const xfer_config_t *cfg;
    xfer_channel_t *ch;
    xfer_t *x = NULL;
    MPI_Comm comm, cart;
    MPI_Datatype row1, row, col1, col;
    grid_t g;
    halo_t halo = {0};
    gs_stats_t stats;
    gs_tracers_t tr;
    gs_pstats_t ps = {0};
    xfer_record_field_t pfields[3];
    xfer_record_t prec;
    uint64_t ny, nx, sent = 0, fault_step;
    double *blk, t_start, t_compute = 0, t_halo = 0, t_xfer = 0, t_particles = 0, t0;
    char err[512], ref[4096], pref[4096];
    uint64_t moves = 0, held[2] = {0, 0};
    FILE *csv = NULL, *pcsv = NULL;
    long s;
    int comp, e = 0, provided = MPI_THREAD_SINGLE, particles;

    parse_args(argc, argv, &o);
    /* MPI_THREAD_MULTIPLE when the library has it: libxfer's progress thread then moves each
     * step while this rank computes (progress: auto; docs/runtime.md, Progress) */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    gs_rank = wrank;
    XCHECK(xfer_init(o.config, o.component, MPI_COMM_WORLD, &x));
    if (o.world) /* an uncoupled code's communicator, unchanged (mpi_world: component) */
        comm = MPI_COMM_WORLD;
    else
        XCHECK(xfer_comm(x, &comm));
    XCHECK(xfer_config_of(x, &cfg, &comp));
    MPI_Comm_rank(comm, &gs_rank);
    MPI_Comm_size(comm, &csize);
    if (gs_fields_shape(cfg, o.channel, &ny, &nx, err, sizeof(err)) != 0)
        FAIL("%s", err);
    if (o.size && ((uint64_t) o.size != ny || (uint64_t) o.size != nx))
        FAIL("--size %ld, but %s declares U and V as %" PRIu64 " x %" PRIu64
             ": change their dims there (the workflow file fixes the shape)",
             o.size, cfg->path, ny, nx);
    if ((particles = gs_particles_declared(cfg, o.channel, err, sizeof(err))) < 0)
        FAIL("%s", err);
    XCHECK(xfer_channel_open(x, o.channel, &ch));

    /* 2-D block decomposition; ranks keep their numbers (no reorder) */
    MCHECK(MPI_Dims_create(csize, 2, dims));
    if ((uint64_t) dims[0] > ny || (uint64_t) dims[1] > nx)
        FAIL("%d x %d process grid on a %" PRIu64 " x %" PRIu64 " grid: fewer ranks, please",
             dims[0], dims[1], ny, nx);
    MCHECK(MPI_Cart_create(comm, 2, dims, periods, 0, &cart));
    MCHECK(MPI_Cart_coords(cart, gs_rank, 2, coords));
    MCHECK(MPI_Cart_shift(cart, 0, 1, &g.up, &g.down));
    MCHECK(MPI_Cart_shift(cart, 1, 1, &g.left, &g.right));
    g.r0 = ny * (uint64_t) coords[0] / (uint64_t) dims[0];
    g.nr = (int) (ny * (uint64_t) (coords[0] + 1) / (uint64_t) dims[0] - g.r0);
    g.c0 = nx * (uint64_t) coords[1] / (uint64_t) dims[1];
    g.nc = (int) (nx * (uint64_t) (coords[1] + 1) / (uint64_t) dims[1] - g.c0);
    g.field = (size_t) (g.nr + 2) * (size_t) (g.nc + 2);
    g.cur = calloc(2 * g.field, sizeof(double));
    g.next = calloc(2 * g.field, sizeof(double));
    blk = malloc((size_t) g.nr * (size_t) g.nc * sizeof(double));
    if (!g.cur || !g.next || !blk || gs_stats_init(&stats, o.bins) != 0)
        FAIL("out of memory for a %d x %d block", g.nr, g.nc);

    /* A row or a column of U together with the same one of V, 'field' elements further. */
    MCHECK(MPI_Type_contiguous(g.nc, MPI_DOUBLE, &row1));
    MCHECK(MPI_Type_create_hvector(2, 1, (MPI_Aint) (g.field * sizeof(double)), row1, &row));
    MCHECK(MPI_Type_vector(g.nr, 1, g.nc + 2, MPI_DOUBLE, &col1));
    MCHECK(MPI_Type_create_hvector(2, 1, (MPI_Aint) (g.field * sizeof(double)), col1, &col));
    MCHECK(MPI_Type_commit(&row));
    MCHECK(MPI_Type_commit(&col));
    if (o.halo != HALO_SENDRECV)
        halo_init(&halo, o.halo, cart, dims, periods, ny, nx);
    if (particles) {
        const gs_block_t b = {ny,
                              nx,
                              g.r0,
                              g.c0,
                              (uint64_t) g.nr,
                              (uint64_t) g.nc,
                              {dims[0], dims[1]},
                              {coords[0], coords[1]}};
        e = gs_tracers_init(&tr, cart, &b, (uint64_t) o.particles, o.seed, o.chi, o.dp, o.dt);
        if (e == -1 || gs_pstats_init(&ps, csize) != 0)
            FAIL("out of memory for %ld particles", o.particles);
        MCHECK(e);
        e = 0;
        gs_particle_record(&prec, pfields);
    }
    /* the fault of --fault-particles goes into the second coupled step (the first if only one) */
    fault_step = o.steps / o.every > 1 ? 1 : 0;

    /* rank 0 creates the directories and the CSV; everyone stops if it cannot. The reference is
     * for the checks: it goes apart from the user's outputs, to GS_CHECK_SUBDIR. */
    snprintf(ref, sizeof(ref), "%s/" GS_CHECK_SUBDIR, o.output);
    if (gs_rank == 0)
        e = gs_mkdir_p(ref) != 0 ? errno : 0;
    snprintf(ref, sizeof(ref), "%s/" GS_CHECK_SUBDIR "/reference_stats.csv", o.output);
    snprintf(pref, sizeof(pref), "%s/" GS_CHECK_SUBDIR "/reference_particles.csv", o.output);
    if (gs_rank == 0 && !e)
        e = !(csv = fopen(ref, "w")) ? errno : 0;
    if (gs_rank == 0 && !e && particles)
        e = !(pcsv = fopen(pref, "w")) ? errno : 0;
    MCHECK(MPI_Bcast(&e, 1, MPI_INT, 0, cart));
    if (e)
        FAIL("cannot write %s: %s", csv ? pref : ref, strerror(e));
    if (gs_rank == 0) {
        gs_stats_csv_header(csv, o.bins);
        if (particles)
            gs_pstats_csv_header(pcsv, csize);
        printf("gray-scott-sim: %" PRIu64 " x %" PRIu64 " grid on %d ranks (%d x %d blocks), "
               "%ld steps, U and V to the analysis every %ld steps\n",
               ny, nx, csize, dims[0], dims[1], o.steps, o.every);
        if (o.halo == HALO_SENDRECV)
            printf("gray-scott-sim: halo exchange: sendrecv (4 MPI_Sendrecv per step)\n");
        else
            printf("gray-scott-sim: halo exchange: %s (xfer_iso_alltoall over %d neighbours, "
                   "%s schedule, %d round%s per step)\n",
                   halo_names[o.halo], halo.s, halo.algorithm, halo.rounds,
                   halo.rounds == 1 ? "" : "s");
        if (particles)
            printf("gray-scott-sim: %ld tracer particles drift up grad V (chi %g, Dp %g), put "
                   "as the joined record dataset " GS_PARTICLES_DATASET " with U and V\n",
                   o.particles, o.chi, o.dp);
        else
            printf("gray-scott-sim: no dataset " GS_PARTICLES_DATASET " in channel %s of %s: "
                   "no tracer particles\n",
                   o.channel, cfg->path);
        fflush(stdout);
    }

    initialize(&g, ny, nx, &o);
    t_start = MPI_Wtime();
    for (s = 1; s <= o.steps; s++) {
        t0 = MPI_Wtime();
        if (o.halo == HALO_SENDRECV)
            exchange(&g, cart, row, col);
        else
            exchange_iso(&g, &halo);
        t_halo += MPI_Wtime() - t0;
        if (particles) { /* moved by this step's V, whose halo is fresh */
            t0 = MPI_Wtime();
            e = gs_tracers_step(&tr, g.cur + g.field, (size_t) g.nc + 2, (uint64_t) s);
            if (e == -1)
                FAIL("out of memory for %zu particles", tr.n);
            if (e == -2)
                FAIL("particle %" PRId64 " arrived at a rank whose block does not hold it",
                     tr.stray);
            MCHECK(e);
            t_particles += MPI_Wtime() - t0;
        }
        t0 = MPI_Wtime();
        update(&g, &o);
        t_compute += MPI_Wtime() - t0;
        if (s % o.every == 0) {
            const double time = (double) s * o.dt;
            xfer_dataset_desc_t d;
            t0 = MPI_Wtime();
            memset(&d, 0, sizeof(d));
            d.type = XFER_TYPE_FLOAT64;
            d.ndims = 2;
            d.dims[0] = ny;
            d.dims[1] = nx;
            d.start[0] = g.r0;
            d.start[1] = g.c0;
            d.count[0] = (uint64_t) g.nr;
            d.count[1] = (uint64_t) g.nc;
            d.name = "U";
            pack(&g, 0, blk);
            XCHECK(xfer_put(ch, &d, blk));
            d.name = "V";
            pack(&g, 1, blk);
            XCHECK(xfer_put(ch, &d, blk));
            d.name = "time"; /* rank 0 holds it, the others put an empty block */
            d.ndims = 1;
            d.dims[0] = 1;
            d.start[0] = 0;
            d.count[0] = gs_rank == 0 ? 1 : 0;
            XCHECK(xfer_put(ch, &d, gs_rank == 0 ? &time : NULL));
            if (particles) {
                gs_tracers_sample(&tr, g.cur + g.field, (size_t) g.nc + 2);
                put_particles(ch, &tr, &prec,
                              gs_rank == 0 && sent == fault_step ? o.fault : FAULT_NONE);
            }
            XCHECK(xfer_step_end(ch));
            t_xfer += MPI_Wtime() - t0;

            gs_stats_reset(&stats);
            gs_stats_add(&stats, &AT(&g, 0, 1, 1), &AT(&g, 1, 1, 1), (size_t) g.nr, (size_t) g.nc,
                         (size_t) g.nc + 2);
            MCHECK(gs_stats_reduce(&stats, cart));
            if (gs_rank == 0) {
                gs_stats_csv_row(csv, sent, time, &stats);
                if (fflush(csv) != 0)
                    FAIL("writing %s: %s", ref, strerror(errno));
            }
            if (particles)
                reference_particles(&tr, &ps, cart, pcsv, sent, time, pref);
            sent++;
        }
    }
    if (o.halo != HALO_SENDRECV)
        halo_free(&halo);
    if (particles) { /* the moves between blocks, and the fewest and most particles a rank holds */
        const uint64_t mine[2] = {UINT64_MAX - tr.n, tr.n};
        MCHECK(MPI_Reduce(&tr.migrated, &moves, 1, MPI_UINT64_T, MPI_SUM, 0, cart));
        MCHECK(MPI_Reduce(mine, held, 2, MPI_UINT64_T, MPI_MAX, 0, cart));
    }
    { /* what the steps sent so far took on the wire, against their payload (every rank's) */
        xfer_channel_stats_t cs;
        uint64_t mine[3], all[3];
        XCHECK(xfer_channel_stats(ch, &cs));
        mine[0] = cs.steps_sent;
        mine[1] = cs.bytes_sent;
        mine[2] = cs.wire_bytes_sent;
        MCHECK(MPI_Reduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, 0, cart));
        if (gs_rank == 0)
            printf("gray-scott-sim: channel %s: %.2f MiB of payload in %" PRIu64
                   " steps, %.2f MiB on the wire (%.4f of it; the steps sent before "
                   "xfer_finalize)\n",
                   o.channel, (double) all[1] / 1048576.0, mine[0], (double) all[2] / 1048576.0,
                   all[1] ? (double) all[2] / (double) all[1] : 0.0);
    }
    t0 = MPI_Wtime();
    XCHECK(xfer_finalize(&x)); /* delivers what is still in flight */
    t_xfer += MPI_Wtime() - t0;
    if (gs_rank == 0) {
        if (fclose(csv) != 0)
            FAIL("writing %s: %s", ref, strerror(errno));
        printf("gray-scott-sim: %ld steps and %" PRIu64 " coupled steps in %.2f s on rank 0 "
               "(compute %.2f s, halo exchange %.2f s, particles %.2f s, put/step_end/finalize "
               "%.2f s)\n",
               o.steps, sent, MPI_Wtime() - t_start, t_compute, t_halo, t_particles, t_xfer);
        if (particles) {
            if (fclose(pcsv) != 0)
                FAIL("writing %s: %s", pref, strerror(errno));
            printf("gray-scott-sim: particles: %" PRIu64 " moves from a rank's block to a "
                   "neighbour's in %ld steps; at the end %" PRIu64 " to %" PRIu64 " particles "
                   "per rank\n",
                   moves, o.steps, UINT64_MAX - held[0], held[1]);
        }
        printf("gray-scott-sim: reference statistics: %s%s%s\n", ref, particles ? ", " : "",
               particles ? pref : "");
        fflush(stdout);
    }
    if (particles) {
        gs_tracers_free(&tr);
        gs_pstats_free(&ps);
    }
    MPI_Type_free(&row);
    MPI_Type_free(&col);
    MPI_Type_free(&row1);
    MPI_Type_free(&col1);
    MPI_Comm_free(&cart);
    gs_stats_free(&stats);
    free(blk);
    free(g.cur);
    free(g.next);
    MPI_Finalize();
    return 0;
}
