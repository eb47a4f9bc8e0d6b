/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-synth: a synthetic workflow component. It plays its part of every channel of the workflow
 * file with a checkable pattern: on the sending side it puts its block of each dataset (a
 * decomposition chosen by --decomp), on the receiving side it gets each dataset whole and one
 * hyperslab and compares them, element by element, with the pattern. Use it to try a workflow
 * file before the real applications exist; the tests use it for coupled runs of every shape.
 *
 *   xfer-synth [--steps N] [--decomp even|uneven|empty] [--config FILE] [--component NAME]
 *              [--skip DATASET] [--get DATASET] [--exit-after K] [--stall-after K]
 *              [--mpi-thread single|multiple]
 *              [--kill-after K] [--sigstop-after K] [--compute-ms MS] [--begin TIMEOUT_MS
 * [--deadline-ms MS]]
 *              [--quiet]
 * --begin uses the step-status API: every step starts with xfer_step_begin(TIMEOUT_MS), called
 * again while it says NOT_READY (--deadline-ms: fail after that long), and the end of a
 * receive-only stream is the END_OF_STREAM status.
 * A failing call is reported with its status, message and how long it ran.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xfer/xfer.h>

#include "common/cli.h"
#include "synth_pattern.h"

typedef struct opts {
    int steps;
    const char *decomp;
    const char *config;
    const char *component;
    const char *skip;       /* never put this dataset */
    const char *get;        /* also get this (perhaps unknown) dataset every step */
    int exit_after;         /* exit(3) without finalizing after this many steps (-1: never) */
    const char *mpi_thread; /* MPI_Init_thread level: single (MPI_Init) or multiple */
    int stall_after;        /* stop calling libxfer after this many steps, for ever (-1: never) */
    int kill_after;         /* rank 0 sends itself SIGKILL after this many steps (-1: never) */
    int stop_after;         /* rank 0 sends itself SIGSTOP after this many steps (-1: never) */
    int compute_ms;         /* each step "computes" this long (a sleep) before its puts */
    int begin_ms;           /* begin every step with xfer_step_begin(timeout), -2: do not */
    const char *select;     /* xfer_select every received dataset: overlap, mixed (even ranks all,
                             * odd ones overlap), corner, none, all */
    int deadline_ms;        /* with begin_ms: give up on a step not begun within this (0: never) */
    int quiet;
    int attrs; /* put and check per-step attributes */
    int bind;  /* xfer_bind_buffer every dataset: no copies in put and get (2: two buffers each,
                  in turn: even steps in the first, odd ones in the second) */
    const char *put_order; /* forward, reverse (datasets against the channel's order), twice
                            * (each block first with wrong data, then again with the right) */
} opts_t;

static int wrank;
static char me[64] = "?";

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "xfer-synth: %s rank %d: ", me, wrank);                                    \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        fflush(stderr);                                                                            \
        exit(1); /* the launcher stops the other ranks; MPI_Abort can lose this output */          \
    } while (0)

#define XCHECK(call)                                                                               \
    do {                                                                                           \
        const double t0_ = MPI_Wtime();                                                            \
        xfer_status_t st_ = (call);                                                                \
        if (st_ != XFER_SUCCESS)                                                                   \
            FAIL("%s: %s: %s (after %.0f ms)", #call, xfer_status_name(st_), xfer_last_error(),    \
                 1e3 * (MPI_Wtime() - t0_));                                                       \
    } while (0)

/* Part i of n of a length: even, uneven (weights 1, 2, 3 ...) or with part 0 empty. */
static void split(uint64_t len, int n, int i, const char *mode, uint64_t *start, uint64_t *count)
{
    uint64_t wsum = 0, wpre = 0;
    int k;
    if (strcmp(mode, "empty") == 0 && n > 1) {
        if (i == 0) {
            *start = *count = 0;
            return;
        }
        split(len, n - 1, i - 1, "even", start, count);
        return;
    }
    for (k = 0; k < n; k++) {
        uint64_t w = strcmp(mode, "uneven") == 0 ? (uint64_t) k + 1 : 1;
        wsum += w;
        if (k < i)
            wpre += w;
    }
    *start = len * wpre / wsum;
    *count = len * (wpre + (strcmp(mode, "uneven") == 0 ? (uint64_t) i + 1 : 1)) / wsum - *start;
}

/* This rank's block: a px x py grid over the first two dimensions when the dataset has two or
 * more and the rank count factors, else slabs of the first dimension. */
static void block_of(const xfer_cfg_dataset_t *d, int rank, int nranks, const char *mode,
                     uint64_t *start, uint64_t *count)
{
    int px = 1, k;
    for (k = 0; k < d->ndims; k++) {
        start[k] = 0;
        count[k] = d->dims[k];
    }
    if (d->ndims >= 2)
        for (k = 1; k * k <= nranks; k++)
            if (nranks % k == 0)
                px = k;
    if (px > 1) {
        split(d->dims[0], px, rank % px, mode, &start[0], &count[0]);
        split(d->dims[1], nranks / px, rank / px, mode, &start[1], &count[1]);
    } else {
        split(d->dims[0], nranks, rank, mode, &start[0], &count[0]);
    }
}

static uint64_t vol(int nd, const uint64_t *c)
{
    uint64_t v = 1;
    int k;
    for (k = 0; k < nd; k++)
        v *= c[k];
    return v;
}

/* Fill a box (start, count) of dataset d, step s, with the pattern, packed. */
static void fill(const xfer_cfg_dataset_t *d, int ch, int di, uint64_t s, const uint64_t *start,
                 const uint64_t *count, char *buf)
{
    const size_t es = xfer_type_size(d->type);
    uint64_t idx[XFER_MAX_DIMS] = {0}, n = vol(d->ndims, count), e;
    int k;
    for (e = 0; e < n; e++) {
        uint64_t g = 0;
        for (k = 0; k < d->ndims; k++)
            g = g * d->dims[k] + start[k] + idx[k];
        xfer_synth_element(d->type, (uint64_t) ch, (uint64_t) di, s, g, buf + e * es);
        for (k = d->ndims - 1; k >= 0; k--) {
            if (++idx[k] < count[k])
                break;
            idx[k] = 0;
        }
    }
}

/* The bound buffer of channel i, dataset j in step s, in bnd[]: NDS_MAX slots per channel
 * (--bind-alternate: odd steps use a second set of nchannels * NDS_MAX after the first) */
#define NDS_MAX      (2 * XFER_MAX_DATASETS) /* datasets a channel may have */
#define BND(i, j, s) ((o.bind == 2 && ((s) &1) ? cfg->nchannels * NDS_MAX : 0) + (i) *NDS_MAX + (j))

int main(int argc, char **argv)
{
    opts_t o = {.steps = 4,
                .decomp = "uneven",
                .exit_after = -1,
                .stall_after = -1,
                .kill_after = -1,
                .stop_after = -1,
                .begin_ms = -2,
                .put_order = "forward"};
    uint64_t not_ready = 0;
    const xfer_config_t *cfg;
    xfer_channel_t **chs;
    xfer_t *x = NULL;
    MPI_Comm comm;
    int comp, crank, csize, i, j, jj;
    uint64_t s, checked = 0;
    void **bnd;
    int nbnd;

    {
        enum {
            O_STEPS = 256,
            O_DECOMP,
            O_CONFIG,
            O_COMPONENT,
            O_SKIP,
            O_GET,
            O_EXIT,
            O_STALL,
            O_KILL,
            O_STOP,
            O_COMPUTE,
            O_BEGIN,
            O_SELECT,
            O_DEADLINE,
            O_ORDER,
            O_QUIET,
            O_ATTRS,
            O_BIND,
            O_BINDALT,
            O_THREAD,
            O_VERSION
        };
        static const struct option longopts[] = {
            {"steps", required_argument, NULL, O_STEPS},
            {"decomp", required_argument, NULL, O_DECOMP},
            {"config", required_argument, NULL, O_CONFIG},
            {"component", required_argument, NULL, O_COMPONENT},
            {"skip", required_argument, NULL, O_SKIP},
            {"get", required_argument, NULL, O_GET},
            {"exit-after", required_argument, NULL, O_EXIT},
            {"stall-after", required_argument, NULL, O_STALL},
            {"kill-after", required_argument, NULL, O_KILL},
            {"sigstop-after", required_argument, NULL, O_STOP},
            {"compute-ms", required_argument, NULL, O_COMPUTE},
            {"begin", required_argument, NULL, O_BEGIN},
            {"select", required_argument, NULL, O_SELECT},
            {"deadline-ms", required_argument, NULL, O_DEADLINE},
            {"put-order", required_argument, NULL, O_ORDER},
            {"quiet", no_argument, NULL, O_QUIET},
            {"attrs", no_argument, NULL, O_ATTRS},
            {"bind", no_argument, NULL, O_BIND},
            {"bind-alternate", no_argument, NULL, O_BINDALT},
            {"mpi-thread", required_argument, NULL, O_THREAD},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, O_VERSION},
            {NULL, 0, NULL, 0}};
        const char *prog = "xfer-synth";
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
            switch (c) {
            case 'h':
                printf(
                    "usage: xfer-synth [--steps N] [--decomp even|uneven|empty] [--config FILE]\n"
                    "                  [--component NAME] [--skip DATASET] [--get DATASET]\n"
                    "                  [--exit-after K] [--stall-after K] [--kill-after K]\n"
                    "                  [--sigstop-after K]\n"
                    "                  [--compute-ms MS] [--put-order forward|reverse|twice]\n"
                    "                  [--begin TIMEOUT_MS [--deadline-ms MS]]\n"
                    "                  [--select overlap|mixed|corner|none|all] [--attrs]\n"
                    "                  [--bind | --bind-alternate]\n"
                    "                  [--mpi-thread single|multiple] [--quiet]\n"
                    "                  [-h|--help] [--version]\n"
                    "A synthetic workflow component: it plays its part of every channel of the\n"
                    "workflow file with a checkable pattern (tools/xfer-synth.c).\n");
                return 0;
            case O_VERSION:
                xfer_cli_version(prog);
                return 0;
            case O_STEPS:
                o.steps = (int) xfer_cli_long(prog, "--steps", optarg, 0, 1 << 30);
                break;
            case O_DECOMP:
                if (strcmp(optarg, "even") && strcmp(optarg, "uneven") && strcmp(optarg, "empty"))
                    xfer_cli_usage_error(prog, "--decomp: expected even, uneven or empty");
                o.decomp = optarg;
                break;
            case O_CONFIG:
                o.config = optarg;
                break;
            case O_COMPONENT:
                o.component = optarg;
                break;
            case O_SKIP:
                o.skip = optarg;
                break;
            case O_GET:
                o.get = optarg;
                break;
            case O_EXIT:
                o.exit_after = (int) xfer_cli_long(prog, "--exit-after", optarg, -1, 1 << 30);
                break;
            case O_STALL:
                o.stall_after = (int) xfer_cli_long(prog, "--stall-after", optarg, -1, 1 << 30);
                break;
            case O_KILL:
                o.kill_after = (int) xfer_cli_long(prog, "--kill-after", optarg, -1, 1 << 30);
                break;
            case O_STOP:
                o.stop_after = (int) xfer_cli_long(prog, "--sigstop-after", optarg, -1, 1 << 30);
                break;
            case O_COMPUTE:
                o.compute_ms = (int) xfer_cli_long(prog, "--compute-ms", optarg, 0, 1 << 30);
                break;
            case O_BEGIN:
                o.begin_ms = (int) xfer_cli_long(prog, "--begin", optarg, -1, 1 << 30);
                break;
            case O_SELECT:
                o.select = optarg;
                break;
            case O_DEADLINE:
                o.deadline_ms = (int) xfer_cli_long(prog, "--deadline-ms", optarg, 0, 1 << 30);
                break;
            case O_ORDER:
                if (strcmp(optarg, "forward") && strcmp(optarg, "reverse") &&
                    strcmp(optarg, "twice"))
                    xfer_cli_usage_error(prog, "--put-order: expected forward, reverse or twice");
                o.put_order = optarg;
                break;
            case O_QUIET:
                o.quiet = 1;
                break;
            case O_ATTRS:
                o.attrs = 1;
                break;
            case O_BIND:
                o.bind = 1;
                break;
            case O_BINDALT:
                o.bind = 2;
                break;
            case O_THREAD:
                o.mpi_thread = optarg;
                break;
            default:
                xfer_cli_bad_option(prog, c, argv);
            }
        }
        if (optind < argc)
            xfer_cli_usage_error(prog, "unexpected argument \"%s\"", argv[optind]);
    }
    if (!o.mpi_thread) /* the whole test suite may run on the progress thread */
        o.mpi_thread = getenv("XFER_SYNTH_MPI_THREAD");
    if (o.mpi_thread && strcmp(o.mpi_thread, "single") && strcmp(o.mpi_thread, "multiple")) {
        fprintf(stderr, "xfer-synth: --mpi-thread: expected single or multiple\n");
        return 2;
    }
    if (o.mpi_thread && strcmp(o.mpi_thread, "multiple") == 0) {
        /* libxfer's progress thread (progress: auto) moves steps while this computes */
        int provided = MPI_THREAD_SINGLE;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided != MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "xfer-synth: --mpi-thread multiple: MPI provides only level %d\n",
                    provided);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    } else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    XCHECK(xfer_init(o.config, o.component, MPI_COMM_WORLD, &x));
    XCHECK(xfer_config_of(x, &cfg, &comp));
    XCHECK(xfer_comm(x, &comm));
    snprintf(me, sizeof(me), "%s", cfg->components[comp].name);
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    chs = calloc((size_t) cfg->nchannels + 1, sizeof(*chs));
    for (i = 0; i < cfg->nchannels; i++)
        if (cfg->channels[i].from == comp || cfg->channels[i].to == comp)
            XCHECK(xfer_channel_open(x, cfg->channels[i].name, &chs[i]));

    /* M x N: declare what this rank receives of each dataset (the file's selection: user) */
    for (i = 0; o.select && i < cfg->nchannels; i++)
        for (j = 0; chs[i] && j < cfg->channels[i].ndatasets; j++) {
            const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
            uint64_t st0[XFER_MAX_DIMS], c0[XFER_MAX_DIMS];
            int k;
            if (d->from == comp)
                continue;
            for (k = 0; k < d->ndims; k++) {
                const uint64_t slab = (d->dims[k] + (uint64_t) csize - 1) / (uint64_t) csize;
                const int slabs = strcmp(o.select, "overlap") == 0 ||
                                  (strcmp(o.select, "mixed") == 0 && crank % 2 == 1);
                if (slabs && k == 0) { /* two slabs, none past the end */
                    st0[k] = ((uint64_t) crank * slab < d->dims[k] - 1 ? (uint64_t) crank * slab
                                                                       : d->dims[k] - 1);
                    c0[k] = (2 * slab < d->dims[k] - st0[k] ? 2 * slab : d->dims[k] - st0[k]);
                } else if (strcmp(o.select, "corner") == 0) {
                    st0[k] = 0;
                    c0[k] = (d->dims[k] + 1) / 2;
                } else if (strcmp(o.select, "none") == 0) {
                    st0[k] = 0;
                    c0[k] = 0;
                } else {
                    st0[k] = 0;
                    c0[k] = d->dims[k];
                }
            }
            XCHECK(xfer_select(chs[i], d->name, st0, c0));
        }
    /* zero copy: every dataset sent from, or received into, a buffer of this program's own */
    nbnd = 2 * cfg->nchannels * NDS_MAX; /* (the configuration goes with the context) */
    bnd = calloc((size_t) nbnd + 1, sizeof(*bnd));
    for (i = 0; o.bind && i < cfg->nchannels; i++)
        for (j = 0; chs[i] && j < cfg->channels[i].ndatasets; j++) {
            const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
            const size_t es = xfer_type_size(d->type);
            uint64_t st0[XFER_MAX_DIMS], c0[XFER_MAX_DIMS];
            size_t n = (size_t) vol(d->ndims, d->dims) * es; /* a selection is no larger */
            if (d->from == comp) {
                block_of(d, crank, csize, o.decomp, st0, c0);
                n = (size_t) vol(d->ndims, c0) * es;
            }
            bnd[BND(i, j, 0)] = malloc(n + 1);
            if (o.bind == 2) /* the odd steps' buffer */
                bnd[BND(i, j, 1)] = calloc(1, n + 1);
            XCHECK(xfer_bind_buffer(chs[i], d->name, bnd[BND(i, j, 0)], n));
        }
    for (s = 0; s < (uint64_t) o.steps; s++) {
        if (o.exit_after >= 0 && s == (uint64_t) o.exit_after) {
            fprintf(stderr, "xfer-synth: %s rank %d: exiting early after %d steps (--exit-after)\n",
                    me, crank, o.exit_after);
            fflush(stderr);
            exit(3);
        }
        if (o.kill_after >= 0 && s == (uint64_t) o.kill_after && crank == 0) {
            /* kill -9 of the component: its launcher takes the other ranks down */
            fprintf(stderr, "xfer-synth: %s rank %d: SIGKILL to myself after %d steps\n", me, crank,
                    o.kill_after);
            fflush(stderr);
            raise(SIGKILL);
        }
        if (o.stop_after >= 0 && s == (uint64_t) o.stop_after && crank == 0) {
            /* a stall that stops everything, the heartbeat thread too (a hung node, a
             * debugger): only SIGKILL or SIGCONT end it */
            fprintf(stderr, "xfer-synth: %s rank %d: SIGSTOP to myself after %d steps\n", me, crank,
                    o.stop_after);
            fflush(stderr);
            raise(SIGSTOP);
        }
        if (o.stall_after >= 0 && s == (uint64_t) o.stall_after) {
            /* a peer that stops answering: wait for a message nobody sends */
            int never;
            fprintf(stderr, "xfer-synth: %s rank %d: stalling after %d steps (--stall-after)\n", me,
                    crank, o.stall_after);
            fflush(stderr);
            MPI_Recv(&never, 1, MPI_INT, MPI_ANY_SOURCE, 999, comm, MPI_STATUS_IGNORE);
        }
        if (o.compute_ms > 0) { /* a simulation's time step */
            struct timespec ts = {o.compute_ms / 1000, (long) (o.compute_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        /* the step-status API: begin each channel's step, polling with the timeout */
        for (i = 0; o.begin_ms >= -1 && i < cfg->nchannels; i++) {
            const double t0 = MPI_Wtime();
            xfer_step_status_t ss = XFER_STEP_NOT_READY;
            while (chs[i] && ss == XFER_STEP_NOT_READY) {
                XCHECK(xfer_step_begin(chs[i], o.begin_ms, &ss));
                if (ss == XFER_STEP_NOT_READY)
                    not_ready++;
                if (ss == XFER_STEP_NOT_READY && o.deadline_ms > 0 &&
                    MPI_Wtime() - t0 > 1e-3 * o.deadline_ms)
                    FAIL("channel %s: step %" PRIu64 " did not begin within %d ms (%s)",
                         cfg->channels[i].name, s, o.deadline_ms, "--deadline-ms");
            }
            if (ss == XFER_STEP_END_OF_STREAM)
                FAIL("channel %s: the stream ended before step %" PRIu64, cfg->channels[i].name, s);
        }
        /* sends first: puts never wait */
        for (i = 0; i < cfg->nchannels; i++)
            for (jj = 0; chs[i] && jj < cfg->channels[i].ndatasets; jj++) {
                const int n = cfg->channels[i].ndatasets;
                const xfer_cfg_dataset_t *d;
                xfer_dataset_desc_t desc;
                size_t bytes;
                char *blk;
                j = strcmp(o.put_order, "reverse") == 0 ? n - 1 - jj : jj;
                d = &cfg->channels[i].datasets[j];
                if (d->from != comp || (o.skip && strcmp(o.skip, d->name) == 0))
                    continue;
                memset(&desc, 0, sizeof(desc));
                desc.name = d->name;
                desc.type = d->type;
                desc.ndims = d->ndims;
                memcpy(desc.dims, d->dims, sizeof(desc.dims));
                block_of(d, crank, csize, o.decomp, desc.start, desc.count);
                bytes = vol(d->ndims, desc.count) * xfer_type_size(d->type);
                blk = o.bind ? bnd[BND(i, j, s)] : malloc(bytes + 1);
                if (strcmp(o.put_order, "twice") == 0) { /* the second put must replace it */
                    memset(blk, 0xa5, bytes);
                    XCHECK(xfer_put(chs[i], &desc, blk));
                }
                fill(d, i, j, s, desc.start, desc.count, blk);
                XCHECK(xfer_put(chs[i], &desc, blk));
                if (!o.bind)
                    free(blk);
            }
        for (i = 0; o.attrs && i < cfg->nchannels; i++) { /* this step's attributes */
            xfer_role_t role;
            char label[96];
            const double t = 0.5 * (double) s;
            const int32_t v3[3] = {(int32_t) s, (int32_t) s + 1, (int32_t) s + 2};
            if (!chs[i])
                continue;
            XCHECK(xfer_channel_role(chs[i], &role));
            if (role == XFER_ROLE_RECV)
                continue;
            snprintf(label, sizeof(label), "%s step %" PRIu64, me, s);
            XCHECK(xfer_put_attr(chs[i], "step", XFER_TYPE_UINT64, 1, &s));
            XCHECK(xfer_put_attr(chs[i], "time", XFER_TYPE_FLOAT64, 1, &t));
            XCHECK(xfer_put_attr(chs[i], "v3", XFER_TYPE_INT32, 3, v3));
            XCHECK(xfer_put_attr_string(chs[i], "label", "replaced below"));
            XCHECK(xfer_put_attr_string(chs[i], "label", label));
        }
        /* commit what this component only sends before waiting for anything: with channels
         * in both directions, a component that got first would wait for a peer that gets
         * first too */
        for (i = 0; i < cfg->nchannels; i++) {
            xfer_role_t role;
            if (!chs[i])
                continue;
            XCHECK(xfer_channel_role(chs[i], &role));
            if (role == XFER_ROLE_SEND)
                XCHECK(xfer_step_end(chs[i]));
        }
        for (i = 0; i < cfg->nchannels; i++) {
            if (o.attrs && chs[i]) {
                xfer_role_t role;
                XCHECK(xfer_channel_role(chs[i], &role));
                if (role != XFER_ROLE_SEND) {
                    const int peer =
                        cfg->channels[i].from == comp ? cfg->channels[i].to : cfg->channels[i].from;
                    uint64_t got_s = 0;
                    double got_t = 0;
                    int32_t got_v[3] = {0, 0, 0};
                    char label[96], want_label[96];
                    xfer_type_t ty;
                    size_t cnt;
                    int na = 0;
                    XCHECK(xfer_attr_count(chs[i], &na));
                    XCHECK(xfer_get_attr(chs[i], "step", &ty, &cnt, &got_s, sizeof(got_s)));
                    XCHECK(xfer_get_attr(chs[i], "time", NULL, NULL, &got_t, sizeof(got_t)));
                    XCHECK(xfer_get_attr(chs[i], "v3", NULL, NULL, got_v, sizeof(got_v)));
                    XCHECK(xfer_get_attr_string(chs[i], "label", label, sizeof(label)));
                    snprintf(want_label, sizeof(want_label), "%s step %" PRIu64,
                             cfg->components[peer].name, s);
                    if (na != 4 || ty != XFER_TYPE_UINT64 || cnt != 1 || got_s != s ||
                        got_t != 0.5 * (double) s || got_v[0] != (int32_t) s ||
                        got_v[2] != (int32_t) s + 2 || strcmp(label, want_label) != 0)
                        FAIL("channel %s step %" PRIu64 ": attributes differ (%d of them, step "
                             "%" PRIu64 ", label \"%s\")",
                             cfg->channels[i].name, s, na, got_s, label);
                }
            }
            for (j = 0; chs[i] && j < cfg->channels[i].ndatasets; j++) {
                const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
                const size_t es = xfer_type_size(d->type);
                const uint64_t n = vol(d->ndims, d->dims);
                uint64_t st0[XFER_MAX_DIMS] = {0}, c0[XFER_MAX_DIMS];
                char *got, *want;
                xfer_dataset_desc_t out;
                xfer_channel_stats_t cs0, cs1;
                uint64_t held;
                int k;
                if (d->from == comp)
                    continue;
                got = o.bind ? bnd[BND(i, j, s)] : malloc(n * es + 1);
                want = malloc(n * es + 1);
                /* what this rank receives: the whole dataset, or its selection */
                XCHECK(xfer_channel_stats(chs[i], &cs0));
                XCHECK(xfer_get(chs[i], d->name, got, n * es, &out));
                XCHECK(xfer_channel_stats(chs[i], &cs1));
                if (o.bind && cs1.bytes_copied_out != cs0.bytes_copied_out)
                    FAIL("channel %s dataset %s step %" PRIu64 ": did not land in the buffer "
                         "bound for it (xfer_get copied %" PRIu64 " bytes)",
                         cfg->channels[i].name, d->name, s,
                         cs1.bytes_copied_out - cs0.bytes_copied_out);
                fill(d, i, j, s, out.start, out.count, want);
                held = vol(d->ndims, out.count);
                if (out.step != s || memcmp(got, want, held * es) != 0)
                    FAIL("channel %s dataset %s step %" PRIu64 ": data differs from the pattern",
                         cfg->channels[i].name, d->name, s);
                /* a hyperslab: the middle third of every dimension (at least one element),
                 * within what this rank holds */
                for (k = 0; k < d->ndims; k++) {
                    uint64_t lo = d->dims[k] / 3, hi = d->dims[k] - d->dims[k] / 3;
                    lo = lo > out.start[k] ? lo : out.start[k];
                    hi = hi < out.start[k] + out.count[k] ? hi : out.start[k] + out.count[k];
                    st0[k] = lo;
                    c0[k] = hi > lo ? hi - lo : 0;
                }
                if (vol(d->ndims, c0) > 0) {
                    /* into a buffer of its own: a bound one holds the step's selection */
                    char *hs = malloc(n * es + 1);
                    if (!hs)
                        FAIL("out of memory");
                    XCHECK(xfer_get_selection(chs[i], d->name, st0, c0, hs, n * es, &out));
                    fill(d, i, j, s, st0, c0, want);
                    k = memcmp(hs, want, vol(d->ndims, c0) * es);
                    free(hs);
                    if (k != 0)
                        FAIL("channel %s dataset %s step %" PRIu64 ": hyperslab differs",
                             cfg->channels[i].name, d->name, s);
                }
                checked += held + vol(d->ndims, c0);
                if (o.bind == 2) {
                    /* the next step lands in the other buffer: wipe it first, so that only
                     * the step itself can make it match */
                    char *next = bnd[BND(i, j, s + 1)];
                    memset(next, 0, held * es);
                    XCHECK(xfer_bind_buffer(chs[i], d->name, next, held * es));
                }
                if (!o.bind)
                    free(got);
                free(want);
            }
            if (chs[i] && o.get) {
                char tiny[8];
                XCHECK(xfer_get(chs[i], o.get, tiny, sizeof(tiny), NULL));
            }
        }
        for (i = 0; i < cfg->nchannels; i++) {
            xfer_role_t role;
            if (!chs[i])
                continue;
            XCHECK(xfer_channel_role(chs[i], &role));
            if (role != XFER_ROLE_SEND)
                XCHECK(xfer_step_end(chs[i]));
        }
    }
    /* A receive-only channel ends with the sender's end of stream. */
    for (i = 0; i < cfg->nchannels; i++) {
        const xfer_cfg_dataset_t *d;
        xfer_role_t role;
        xfer_status_t st;
        size_t n;
        char *buf;
        if (!chs[i])
            continue;
        XCHECK(xfer_channel_role(chs[i], &role));
        if (role != XFER_ROLE_RECV)
            continue;
        d = &cfg->channels[i].datasets[0];
        n = vol(d->ndims, d->dims) * xfer_type_size(d->type);
        if (o.begin_ms >= -1) { /* a status, not an error */
            xfer_step_status_t ss = XFER_STEP_NOT_READY;
            while (ss == XFER_STEP_NOT_READY)
                XCHECK(xfer_step_begin(chs[i], o.begin_ms, &ss));
            if (ss != XFER_STEP_END_OF_STREAM)
                FAIL("channel %s: expected the end of the stream after %d steps, got step %s",
                     cfg->channels[i].name, o.steps, ss == XFER_STEP_OK ? "OK" : "?");
            continue;
        }
        buf = malloc(n + 1);
        st = xfer_get(chs[i], d->name, buf, n, NULL);
        free(buf);
        if (st != XFER_ERR_END_OF_STREAM)
            FAIL("channel %s: expected the end of the stream after %d steps, got %s: %s",
                 cfg->channels[i].name, o.steps, xfer_status_name(st), xfer_last_error());
    }
    for (i = 0; !o.quiet && crank == 0 && i < cfg->nchannels; i++) {
        xfer_channel_stats_t cs;
        if (!chs[i])
            continue;
        XCHECK(xfer_channel_stats(chs[i], &cs));
        printf("xfer-synth: %s: channel %s: %" PRIu64 " steps, %" PRIu64 " bytes sent, %" PRIu64
               " received, %" PRIu64 " copied in, %" PRIu64 " copied out (rank 0)\n",
               me, cfg->channels[i].name, cs.steps, cs.bytes_sent, cs.bytes_received,
               cs.bytes_copied_in, cs.bytes_copied_out);
    }
    XCHECK(xfer_finalize(&x));
    for (i = 0; i < nbnd; i++)
        free(bnd[i]);
    free(bnd);
    if (!o.quiet && crank == 0)
        printf("xfer-synth: %s: %d steps, %" PRIu64 " elements checked on rank 0: ok\n", me,
               o.steps, checked);
    if (!o.quiet && crank == 0 && o.begin_ms >= -1)
        printf("xfer-synth: %s: xfer_step_begin(%d ms) said NOT_READY %" PRIu64 " times\n", me,
               o.begin_ms, not_ready);
    free(chs);
    MPI_Finalize();
    return 0;
}
