/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-synth: a synthetic workflow component. It plays its part of every channel of the workflow
 * file with a checkable pattern: on the sending side it puts its block of each dataset (a
 * decomposition chosen by --decomp), on the receiving side it gets each dataset whole and one
 * hyperslab and compares them, element by element, with the pattern. Use it to try a workflow
 * file before the real applications exist; the tests use it for coupled runs of every shape, and
 * tools/xfer-chaos for generated workflows with faults (docs/testing.md).
 *
 *   xfer-synth [--steps N] [--decomp even|uneven|empty] [--config FILE] [--component NAME]
 *              [--skip DATASET] [--get DATASET] [--exit-after K] [--stall-after K]
 *              [--mpi-thread single|multiple]
 *              [--kill-after K] [--sigstop-after K] [--fault-rank R] [--compute-ms MS]
 *              [--recv-ms MS]
 *              [--begin TIMEOUT_MS [--deadline-ms MS]] [--quiet] [--report-time]
 *              [--seed S] [--orders phased|file|random] [--delay-ms MAX] [--stop-after K]
 *              [--fault kill|stop:RANK:STEP:begin|commit|end] [--report] [--no-empty-steps]
 *              [--blocks KxL] [--move] [--bad-blocks hole|overlap|mismatch [--bad-step S]]
 * --begin uses the step-status API: every step starts with xfer_step_begin(TIMEOUT_MS), called
 * again while it says NOT_READY (--deadline-ms: fail after that long), and the end of a
 * receive-only stream is the END_OF_STREAM status.
 *
 * A step, by --orders: `phased` (the default) puts every block, commits every channel this
 * component only sends on, then gets (full duplex: the first get commits), then releases;
 * `random` does the same with the channels and datasets in orders drawn from --seed (puts per
 * rank; commits and gets per component and step, the same on all its ranks; full-duplex
 * channels in one order per step shared by every component, so that no two components wait
 * for each other crosswise); `file` does each channel whole (put and commit, or get and
 * release, or put, get and release) in the file's order. END_OF_STREAM from any call ends that
 * channel: the component goes on with its others. Every failing call is reported with the
 * step it was in, the call, its status and message (naming the channel) and how long it ran. Unless
 * --quiet, every rank ends with one line per channel (docs/testing.md): xfer-synth-result
 * component=C rank=R channel=CH role=send|recv|full steps=N [got=G] end=WHY [status=S] (steps:
 * xfer_step_end calls that succeeded; got: steps received whole and right) and --report adds a line
 * per step and channel as it completes (xfer-synth-step ...). The steps themselves are
 * tools/synth/step.c.
 *
 * Joined datasets (dims: [joined, ...]) are played by tools/synth/joined.c: each step every
 * sending rank puts rows drawn from --seed (0 without it; rank 0 prints it), a cycle that forces
 * in a step with no rows on some ranks, one with every row on one rank and one with no rows at
 * all (--no-empty-steps gives that one a row). Variable shapes (dims entries `variable`) by
 * tools/synth/variable.c: each step the global shape is drawn from --seed (growing, shrinking,
 * extents of 0 now and then) and so is its split into the sending ranks' blocks, which tile it
 * exactly (uneven slabs along a drawn dimension, a grid, every element on one rank; a rank with
 * an empty block puts 0 elements or nothing). Every rank computes every sender's rows or block,
 * so a receiver checks the step's shape (and a joined one's rows per sender) and its own
 * selection against what it computes from the documented rules (all, rows, columns, block, its
 * declared box clipped to the step), then every byte (tools/synth/shape.c). --select picks and
 * --seed's user boxes are declared against a typical step and clipped to each; --bind binds a
 * receiver a buffer for a typical step (larger steps land in the library's buffer). --report
 * adds a line per step and joined dataset with every sender's rows (xfer-synth-rows ...), and
 * per variable one with the shape and every sender's block (xfer-synth-shape ...). Records
 * (type: {field: type, ...}), in fixed, joined and variable datasets, hold the pattern field by
 * field and are compared so (padding is not data). A failure of a run that draws from the seed
 * ends with (seed S).
 *
 * Flow policies (tools/synth/flow.c): under `policy: latest` or `stride: N` (the file's, or
 * XFER_POLICY and XFER_STRIDE) a receiver checks each step it reads against the sender's number
 * the step says it is, and the order the policy promises (stride: 0, N, 2N, ... each one; latest:
 * strictly increasing multiples of the stride), reads to the end of the stream, and its result
 * line carries the counters of xfer_channel_stats (sent, dropped, held, unsent on the sending
 * side; received, the first and last step and whether the end came on the receiving one) for
 * tools/xfer-chaos and the tests to hold against the peer's. --recv-ms: each step received
 * takes that long to "analyse" before its release (a reader slower than its sender).
 *
 * Several blocks per rank (tools/synth/blocks.c): --blocks KxL puts each fixed-shape block as a
 * K x L grid of uneven blocks, --move moves the blocks of `blocks: per_step` datasets from rank
 * to rank every step, --bad-blocks spoils a step (a hole, an overlap, blocks that differ from
 * the first step's) and checks that it is refused, then puts it right.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xfer/xfer.h>

#include "common/cli.h"
#include "synth/synth.h"
#define XFER_XALLOC_PROG "xfer-synth"
#define XFER_XALLOC_EXIT 1
#include "common/xalloc.h"

static const char *const end_names[] = {"running", "ok",         "eos",     "stopped",
                                        "failed",  "wrong-data", "aborted", "killed"};

int wrank;
char me[64] = "?";
long long at_step = -1;
opts_t o = {.steps = 4,
            .decomp = "uneven",
            .exit_after = -1,
            .stall_after = -1,
            .kill_after = -1,
            .sigstop_after = -1,
            .begin_ms = -2,
            .put_order = "forward",
            .orders = ORD_PHASED,
            .stop_after = -1,
            .fault_rank = -1,
            .fault_step = -1,
            .bk = 1,
            .bl = 1,
            .bad_step = -1};
const xfer_config_t *cfg;
int comp, crank = -1, csize;
chan_t *chs;
uint64_t checked;
int synth_seed_in_errors;
void **bnd;
static int nbnd;
static int results_printed; /* once: xfer_finalize frees the configuration */

/* Every rank's last words per channel: one machine-readable line each (docs/testing.md). */
void synth_print_results(void)
{
    int i;
    static const char *const roles[] = {"send", "recv", "full"};
    char flow[256];
    if (results_printed)
        return;
    results_printed = 1;
    if (o.quiet || !chs || crank < 0)
        return;
    for (i = 0; i < cfg->nchannels; i++) {
        const chan_t *c = &chs[i];
        if (!c->h)
            continue;
        printf("xfer-synth-result component=%s rank=%d channel=%s role=%s steps=%" PRIu64, me,
               crank, cfg->channels[i].name,
               roles[c->role == XFER_ROLE_SEND   ? 0
                     : c->role == XFER_ROLE_RECV ? 1
                                                 : 2],
               c->steps);
        if (c->role != XFER_ROLE_SEND)
            printf(" got=%" PRIu64, c->got);
        printf(" end=%s", end_names[c->end]);
        if (c->end == END_FAILED)
            printf(" status=%s", xfer_status_name(c->st));
        synth_flow_result(i, flow, sizeof(flow));
        printf("%s\n", flow);
    }
    fflush(stdout);
}

/* Mark every channel still in use as ended by @p why. */
static void end_all(int why)
{
    int i;
    for (i = 0; chs && i < cfg->nchannels; i++)
        if (chs[i].h && chs[i].end == END_RUNNING)
            chs[i].end = why;
}

void synth_die(const char *fmt, ...)
{
    char line[4096];
    size_t n;
    va_list ap;
    /* the rank in its component once known (the world's rank before); one write, so that a
     * launcher killing this process as another one exits cannot cut the line (xfer-chaos soak
     * seed 4562, Open MPI) */
    n = (size_t) snprintf(line, sizeof(line), "xfer-synth: %s rank %d: ", me,
                          crank >= 0 ? crank : wrank);
    if (at_step >= 0 && n < sizeof(line))
        n += (size_t) snprintf(line + n, sizeof(line) - n, "step %lld: ", at_step);
    if (n < sizeof(line)) {
        va_start(ap, fmt);
        n += (size_t) vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        va_end(ap);
    }
    if (synth_seed_in_errors && n < sizeof(line)) /* what was drawn: run it again with it */
        n += (size_t) snprintf(line + n, sizeof(line) - n, " (seed %" PRIu64 ")", o.seed);
    if (n > sizeof(line) - 2)
        n = sizeof(line) - 2;
    line[n++] = '\n';
    line[n] = '\0';
    if (write(STDERR_FILENO, line, n) < 0)
        fputs(line, stderr);
    fflush(stderr);
    if (!results_printed) {
        end_all(END_ABORTED);
        synth_print_results();
    }
    exit(1); /* the launcher stops the other ranks; MPI_Abort can lose this output */
}

/* --fault kill|stop:RANK:STEP:begin|commit|end */
static void parse_fault(const char *prog, const char *arg)
{
    char sig[8], at[8];
    int rank = -1, n = 0;
    long long step = -1;
    if (sscanf(arg, "%7[a-z]:%d:%lld:%7[a-z]%n", sig, &rank, &step, at, &n) != 4 ||
        arg[n] != '\0' || rank < 0 || step < 0 || (strcmp(sig, "kill") && strcmp(sig, "stop")) ||
        (strcmp(at, "begin") && strcmp(at, "commit") && strcmp(at, "end")))
        xfer_cli_usage_error(prog,
                             "--fault: expected kill|stop:RANK:STEP:begin|commit|end, got "
                             "\"%s\"",
                             arg);
    o.fault_sig = strcmp(sig, "kill") == 0 ? SIGKILL : SIGSTOP;
    o.fault_rank = rank;
    o.fault_step = step;
    o.fault_at = strcmp(at, "begin") == 0    ? AT_BEGIN
                 : strcmp(at, "commit") == 0 ? AT_COMMIT
                                             : AT_END;
}

static void parse_options(int argc, char **argv)
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
        O_SEED,
        O_ORDERS,
        O_DELAY,
        O_STOPAFTER,
        O_FAULT,
        O_REPORT,
        O_FAULT_RANK,
        O_REPORT_TIME,
        O_NO_EMPTY,
        O_BLOCKS,
        O_MOVE,
        O_BAD_BLOCKS,
        O_BAD_STEP,
        O_RECV_MS,
        O_EXPECT_FRAMES,
        O_VERSION
    };
    static const struct option longopts[] = {{"steps", required_argument, NULL, O_STEPS},
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
                                             {"recv-ms", required_argument, NULL, O_RECV_MS},
                                             {"begin", required_argument, NULL, O_BEGIN},
                                             {"select", required_argument, NULL, O_SELECT},
                                             {"deadline-ms", required_argument, NULL, O_DEADLINE},
                                             {"put-order", required_argument, NULL, O_ORDER},
                                             {"quiet", no_argument, NULL, O_QUIET},
                                             {"attrs", no_argument, NULL, O_ATTRS},
                                             {"bind", no_argument, NULL, O_BIND},
                                             {"bind-alternate", no_argument, NULL, O_BINDALT},
                                             {"mpi-thread", required_argument, NULL, O_THREAD},
                                             {"seed", required_argument, NULL, O_SEED},
                                             {"orders", required_argument, NULL, O_ORDERS},
                                             {"delay-ms", required_argument, NULL, O_DELAY},
                                             {"stop-after", required_argument, NULL, O_STOPAFTER},
                                             {"fault", required_argument, NULL, O_FAULT},
                                             {"report", no_argument, NULL, O_REPORT},
                                             {"fault-rank", required_argument, NULL, O_FAULT_RANK},
                                             {"report-time", no_argument, NULL, O_REPORT_TIME},
                                             {"no-empty-steps", no_argument, NULL, O_NO_EMPTY},
                                             {"expect-frames", no_argument, NULL, O_EXPECT_FRAMES},
                                             {"blocks", required_argument, NULL, O_BLOCKS},
                                             {"move", no_argument, NULL, O_MOVE},
                                             {"bad-blocks", required_argument, NULL, O_BAD_BLOCKS},
                                             {"bad-step", required_argument, NULL, O_BAD_STEP},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, O_VERSION},
                                             {NULL, 0, NULL, 0}};
    const char *prog = "xfer-synth";
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            printf("usage: xfer-synth [--steps N] [--decomp even|uneven|empty] [--config FILE]\n"
                   "                  [--component NAME] [--skip DATASET] [--get DATASET]\n"
                   "                  [--exit-after K] [--stall-after K] [--kill-after K]\n"
                   "                  [--sigstop-after K] [--fault-rank R] [--report-time]\n"
                   "                  [--compute-ms MS] [--recv-ms MS]\n"
                   "                  [--put-order forward|reverse|twice]\n"
                   "                  [--begin TIMEOUT_MS [--deadline-ms MS]]\n"
                   "                  [--select overlap|mixed|corner|none|all] [--attrs]\n"
                   "                  [--bind | --bind-alternate]\n"
                   "                  [--mpi-thread single|multiple] [--quiet]\n"
                   "                  [--seed S] [--orders phased|file|random] [--delay-ms MAX]\n"
                   "                  [--stop-after K] [--report] [--no-empty-steps]\n"
                   "                  [--fault kill|stop:RANK:STEP:begin|commit|end]\n"
                   "                  [--blocks KxL] [--move] [--bad-blocks hole|overlap|mismatch\n"
                   "                  [--bad-step S]] [--expect-frames]\n"
                   "                  [-h|--help] [--version]\n"
                   "A synthetic workflow component: it plays its part of every channel of the\n"
                   "workflow file with a checkable pattern (tools/xfer-synth.c).\n");
            exit(0);
        case O_VERSION:
            xfer_cli_version(prog);
            exit(0);
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
            o.sigstop_after = (int) xfer_cli_long(prog, "--sigstop-after", optarg, -1, 1 << 30);
            break;
        case O_COMPUTE:
            o.compute_ms = (int) xfer_cli_long(prog, "--compute-ms", optarg, 0, 1 << 30);
            break;
        case O_RECV_MS:
            o.recv_ms = (int) xfer_cli_long(prog, "--recv-ms", optarg, 0, 1 << 30);
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
            if (strcmp(optarg, "forward") && strcmp(optarg, "reverse") && strcmp(optarg, "twice"))
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
        case O_SEED:
            o.seed = (uint64_t) xfer_cli_long(prog, "--seed", optarg, 0, INT64_MAX);
            o.seeded = 1;
            break;
        case O_ORDERS:
            if (strcmp(optarg, "phased") == 0)
                o.orders = ORD_PHASED;
            else if (strcmp(optarg, "file") == 0)
                o.orders = ORD_FILE;
            else if (strcmp(optarg, "random") == 0)
                o.orders = ORD_RANDOM;
            else
                xfer_cli_usage_error(prog, "--orders: expected phased, file or random");
            break;
        case O_DELAY:
            o.delay_ms = (int) xfer_cli_long(prog, "--delay-ms", optarg, 0, 1 << 20);
            break;
        case O_STOPAFTER:
            o.stop_after = (int) xfer_cli_long(prog, "--stop-after", optarg, -1, 1 << 30);
            break;
        case O_FAULT:
            parse_fault(prog, optarg);
            break;
        case O_REPORT:
            o.report = 1;
            break;
        case O_FAULT_RANK:
            o.hook_rank = (int) xfer_cli_long(prog, "--fault-rank", optarg, 0, 1 << 30);
            break;
        case O_REPORT_TIME:
            o.report_time = 1;
            break;
        case O_NO_EMPTY:
            o.no_empty_steps = 1;
            break;
        case O_EXPECT_FRAMES:
            o.expect_frames = 1;
            break;
        case O_BLOCKS: {
            int n = 0;
            if (sscanf(optarg, "%dx%d%n", &o.bk, &o.bl, &n) != 2 || optarg[n] != '\0' || o.bk < 1 ||
                o.bl < 1 || o.bk * o.bl > 64)
                xfer_cli_usage_error(prog, "--blocks: expected KxL, 1 <= K L <= 64, got \"%s\"",
                                     optarg);
            break;
        }
        case O_MOVE:
            o.move = 1;
            break;
        case O_BAD_BLOCKS:
            if (strcmp(optarg, "hole") && strcmp(optarg, "overlap") && strcmp(optarg, "mismatch"))
                xfer_cli_usage_error(prog, "--bad-blocks: expected hole, overlap or mismatch");
            o.bad_blocks = optarg;
            break;
        case O_BAD_STEP:
            o.bad_step = xfer_cli_long(prog, "--bad-step", optarg, 0, 1 << 30);
            break;
        default:
            xfer_cli_bad_option(prog, c, argv);
        }
    }
    if (optind < argc)
        xfer_cli_usage_error(prog, "unexpected argument \"%s\"", argv[optind]);
    if (o.orders == ORD_RANDOM && !o.seeded)
        xfer_cli_usage_error(prog, "--orders random needs --seed");
    if (o.delay_ms > 0 && !o.seeded)
        xfer_cli_usage_error(prog, "--delay-ms needs --seed");
    if (o.bad_step < 0)
        o.bad_step = o.bad_blocks && strcmp(o.bad_blocks, "mismatch") == 0 ? 1 : 0;
    if ((o.move || o.bad_blocks || o.bk * o.bl > 1) && o.bind)
        xfer_cli_usage_error(prog, "--blocks, --move and --bad-blocks put several blocks: not "
                                   "with --bind (a bound buffer holds one)");
}

/* M x N: declare what this rank receives of each dataset (the file's selection: user). With
 * --select, every received dataset gets that pick; with --seed, each dataset under
 * `selection: user` gets a box drawn for the rank (empty, whole, or any box inside). */
static void declare_selections(void)
{
    int i, j, k;
    for (i = 0; i < cfg->nchannels; i++)
        for (j = 0; chs[i].h && j < cfg->channels[i].ndatasets; j++) {
            const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
            uint64_t st0[XFER_MAX_DIMS], c0[XFER_MAX_DIMS];
            if (d->from == comp)
                continue;
            if (d->joined) { /* boxes of rows, clipped to each step (tools/synth/joined.c) */
                (void) synth_joined_declare(i, j, o.select);
                continue;
            }
            if (d->variable) { /* clipped to each step's shape (tools/synth/variable.c) */
                (void) synth_variable_declare(i, j, o.select);
                continue;
            }
            if (o.select) {
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
            } else if (o.seeded && d->selection == XFER_SELECT_USER) {
                const uint64_t kind = synth_draw(R_SELECT, (uint64_t) comp, (uint64_t) crank,
                                                 (uint64_t) i, (uint64_t) j);
                for (k = 0; k < d->ndims; k++) {
                    const uint64_t r1 = synth_draw(R_SELECT, kind, (uint64_t) k, 1, 0),
                                   r2 = synth_draw(R_SELECT, kind, (uint64_t) k, 2, 0);
                    st0[k] = kind % 6 == 1 ? 0 : r1 % d->dims[k];
                    c0[k] = kind % 6 == 0   ? 0 /* nothing at all */
                            : kind % 6 == 1 ? d->dims[k]
                                            : 1 + r2 % (d->dims[k] - st0[k]);
                }
            } else {
                continue;
            }
            XCHECK(xfer_select(chs[i].h, d->name, st0, c0));
        }
}

/* zero copy: every dataset sent from, or received into, a buffer of this program's own */
static void bind_buffers(void)
{
    int i, j;
    nbnd = 2 * cfg->nchannels * NDS_MAX; /* (the configuration goes with the context) */
    bnd = xchecked(calloc((size_t) nbnd + 1, sizeof(*bnd)));
    for (i = 0; o.bind && i < cfg->nchannels; i++)
        for (j = 0; chs[i].h && j < cfg->channels[i].ndatasets; j++) {
            const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
            const char *cn = cfg->channels[i].name;
            uint64_t st0[XFER_MAX_DIMS], c0[XFER_MAX_DIMS];
            size_t n;
            if (d->joined) {
                n = synth_joined_bind_bytes(i, d, d->from == comp);
            } else if (d->variable) {
                n = synth_variable_bind_bytes(i, d, d->from == comp);
            } else if (d->from == comp) {
                synth_block_of(d, crank, csize, o.decomp, st0, c0);
                n = synth_box_bytes(cn, d, c0);
            } else {
                n = synth_box_bytes(cn, d, d->dims); /* a selection is no larger */
            }
            bnd[BND(i, j, 0)] = synth_data_alloc(cn, d, n, 0, "the buffer bound to it");
            if (o.bind == 2) /* the odd steps' buffer */
                bnd[BND(i, j, 1)] = synth_data_alloc(cn, d, n, 1, "the second buffer bound to it");
            XCHECK(xfer_bind_buffer(chs[i].h, d->name, bnd[BND(i, j, 0)], n));
        }
}

/* A run with joined or variable datasets draws their rows, shapes and blocks from the seed:
 * rank 0 says which, so that a failing case can be run again (and every failure names it). */
static void print_seed(void)
{
    int i, j, joined = 0, variable = 0;
    for (i = 0; i < cfg->nchannels; i++)
        for (j = 0; chs[i].h && j < cfg->channels[i].ndatasets; j++) {
            joined |= cfg->channels[i].datasets[j].joined;
            variable |= cfg->channels[i].datasets[j].variable != 0;
        }
    synth_seed_in_errors = joined || variable || o.seeded;
    if (joined && !o.quiet && crank == 0)
        printf("xfer-synth: %s: joined datasets: rows drawn from seed %" PRIu64 "\n", me, o.seed);
    if (variable && !o.quiet && crank == 0)
        printf("xfer-synth: %s: variable shapes: shapes and blocks drawn from seed %" PRIu64 "\n",
               me, o.seed);
}

/* The test hooks of the older options, at the start of step s. */
static void step_hooks(uint64_t s, MPI_Comm comm)
{
    if (o.exit_after >= 0 && s == (uint64_t) o.exit_after) {
        fprintf(stderr, "xfer-synth: %s rank %d: exiting early after %d steps (--exit-after)\n", me,
                crank, o.exit_after);
        fflush(stderr);
        exit(3);
    }
    if (o.kill_after >= 0 && s == (uint64_t) o.kill_after && crank == o.hook_rank) {
        /* kill -9 of the component: its launcher takes the other ranks down */
        fprintf(stderr, "xfer-synth: %s rank %d: SIGKILL to myself after %d steps\n", me, crank,
                o.kill_after);
        fflush(stderr);
        raise(SIGKILL);
    }
    if (o.sigstop_after >= 0 && s == (uint64_t) o.sigstop_after && crank == o.hook_rank) {
        /* a stall that stops everything, the heartbeat thread too (a hung node, a debugger):
         * only SIGKILL or SIGCONT end it */
        fprintf(stderr, "xfer-synth: %s rank %d: SIGSTOP to myself after %d steps\n", me, crank,
                o.sigstop_after);
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
}

/* Does component @p from wait, after its last step, for @p to (through a chain of such
 * waits)? A component waits there for the end of stream of each half-duplex channel it
 * receives on, which its sender sends only in xfer_finalize. */
static int waits_for(int from, int to, unsigned char *seen)
{
    int i;
    if (from == to)
        return 1;
    if (seen[from])
        return 0;
    seen[from] = 1;
    for (i = 0; i < cfg->nchannels; i++) {
        const xfer_cfg_channel_t *c = &cfg->channels[i];
        if (c->duplex == XFER_DUPLEX_HALF && c->to == from && waits_for(c->from, to, seen))
            return 1;
    }
    return 0;
}

/* After the last step: a receive-only channel ends with the sender's end of stream. Not where
 * the sender itself waits so for this component (a cycle of channels: each would wait for
 * the other's xfer_finalize): there xfer_finalize ends it. */
static void expect_end(void)
{
    unsigned char *seen = xchecked(calloc((size_t) cfg->ncomponents + 1, 1));
    int i;
    for (i = 0; i < cfg->nchannels; i++) {
        const xfer_cfg_dataset_t *d;
        xfer_status_t st;
        size_t n;
        char *buf;
        if (!synth_live(i) || chs[i].role != XFER_ROLE_RECV)
            continue;
        memset(seen, 0, (size_t) cfg->ncomponents);
        if (waits_for(cfg->channels[i].from, comp, seen))
            continue;
        if (synth_flow_on(i)) { /* steps it has not read yet may still come, then the end */
            synth_flow_drain(i, (uint64_t) o.steps);
            if (chs[i].end == END_EOS)
                chs[i].end = END_OK;
            continue;
        }
        d = &cfg->channels[i].datasets[0];
        n = synth_box_bytes(cfg->channels[i].name, d, d->dims);
        if (o.begin_ms >= -1) { /* a status, not an error */
            xfer_step_status_t ss = XFER_STEP_NOT_READY;
            while (ss == XFER_STEP_NOT_READY) {
                const double t0 = MPI_Wtime();
                st = xfer_step_begin(chs[i].h, o.begin_ms, &ss);
                if (st != XFER_SUCCESS) {
                    chs[i].end = END_FAILED;
                    chs[i].st = st;
                    FAIL("channel %s after step %d: xfer_step_begin: %s: %s (after %.0f ms)",
                         cfg->channels[i].name, o.steps - 1, xfer_status_name(st),
                         xfer_last_error(), 1e3 * (MPI_Wtime() - t0));
                }
            }
            if (ss != XFER_STEP_END_OF_STREAM) {
                chs[i].end = END_FAILED;
                chs[i].st = XFER_ERR_STATE;
                FAIL("channel %s: expected the end of the stream after %d steps, got step %s",
                     cfg->channels[i].name, o.steps, ss == XFER_STEP_OK ? "OK" : "?");
            }
            chs[i].end = END_OK;
            chs[i].saw_end = 1;
            continue;
        }
        buf = synth_data_alloc(cfg->channels[i].name, d, n, 0, "the get at the end of the stream");
        st = xfer_get(chs[i].h, d->name, buf, n, NULL);
        free(buf);
        if (st != XFER_ERR_END_OF_STREAM) {
            chs[i].end = END_FAILED;
            chs[i].st = st == XFER_SUCCESS ? XFER_ERR_STATE : st;
            FAIL("channel %s: expected the end of the stream after %d steps, got %s: %s",
                 cfg->channels[i].name, o.steps, xfer_status_name(st), xfer_last_error());
        }
        chs[i].end = END_OK;
        chs[i].saw_end = 1;
    }
    free(seen);
}

int main(int argc, char **argv)
{
    xfer_t *x = NULL;
    MPI_Comm comm;
    uint64_t s;
    int i, own = 0, stopped = 0;
    double t_steps;

    parse_options(argc, argv);
    if (!o.mpi_thread) /* the whole test suite may run on the progress thread */
        o.mpi_thread = getenv("XFER_SYNTH_MPI_THREAD");
    if (o.mpi_thread && strcmp(o.mpi_thread, "single") && strcmp(o.mpi_thread, "multiple")) {
        fprintf(stderr, "xfer-synth: --mpi-thread: expected single or multiple\n");
        return 2;
    }
    if (o.mpi_thread && strcmp(o.mpi_thread, "multiple") == 0) {
        /* libxfer's progress thread (progress: auto) moves steps while this computes */
        int provided = MPI_THREAD_SINGLE;
        if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
            fprintf(stderr, "xfer-synth: MPI_Init_thread failed\n");
            return 1;
        }
        if (provided != MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "xfer-synth: --mpi-thread multiple: MPI provides only level %d\n",
                    provided);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    } else if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "xfer-synth: MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (o.component || getenv("XFER_COMPONENT")) /* for the messages of xfer_init */
        snprintf(me, sizeof(me), "%s", o.component ? o.component : getenv("XFER_COMPONENT"));
    XCHECK(xfer_init(o.config, o.component, MPI_COMM_WORLD, &x));
    XCHECK(xfer_config_of(x, &cfg, &comp));
    XCHECK(xfer_comm(x, &comm));
    snprintf(me, sizeof(me), "%s", cfg->components[comp].name);
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    chs = xchecked(calloc((size_t) cfg->nchannels + 1, sizeof(*chs)));
    for (i = 0; i < cfg->nchannels; i++)
        if (cfg->channels[i].from == comp || cfg->channels[i].to == comp) {
            XCHECK(xfer_channel_open(x, cfg->channels[i].name, &chs[i].h));
            XCHECK(xfer_channel_role(chs[i].h, &chs[i].role));
            own++;
        }
    synth_flow_open();
    synth_decl = xchecked(calloc((size_t) cfg->nchannels * NDS_MAX + 1, sizeof(*synth_decl)));
    print_seed();
    declare_selections();
    bind_buffers();

    t_steps = MPI_Wtime();
    for (s = 0; s < (uint64_t) o.steps; s++) {
        int any = 0;
        at_step = (long long) s;
        if (o.stop_after >= 0 && s == (uint64_t) o.stop_after) {
            stopped = 1; /* a reader that stops early: finalize closes what is left */
            break;
        }
        for (i = 0; i < cfg->nchannels; i++)
            any |= synth_live(i);
        if (own > 0 && !any)
            break; /* every channel of this component ended */
        step_hooks(s, comm);
        synth_fault_point(AT_BEGIN, s);
        if (o.compute_ms > 0) /* a simulation's time step */
            synth_nap_ms(o.compute_ms);
        synth_delay(R_DELAY0, s);
        synth_begin_step(s);
        synth_run_step(s);
        synth_fault_point(AT_END, s);
        synth_delay(R_DELAY1, s);
    }
    at_step = -1;
    if (o.report_time && crank == 0)
        printf("xfer-synth: %s: %d steps in %.0f ms\n", me, (int) s, 1e3 * (MPI_Wtime() - t_steps));
    if (stopped)
        end_all(END_STOPPED);
    else
        expect_end();
    end_all(END_OK);
    synth_flow_check_counts();
    for (i = 0; !o.quiet && crank == 0 && i < cfg->nchannels; i++) {
        xfer_channel_stats_t cs;
        if (!chs[i].h)
            continue;
        XCHECK(xfer_channel_stats(chs[i].h, &cs));
        printf("xfer-synth: %s: channel %s: %" PRIu64 " steps, %" PRIu64 " bytes sent, %" PRIu64
               " received, %" PRIu64 " copied in, %" PRIu64 " copied out; on the wire %" PRIu64
               " sent, %" PRIu64 " received (rank 0)\n",
               me, cfg->channels[i].name, cs.steps, cs.bytes_sent, cs.bytes_received,
               cs.bytes_copied_in, cs.bytes_copied_out, cs.wire_bytes_sent, cs.wire_bytes_received);
    }
    synth_print_results(); /* (the configuration goes with the context) */
    XCHECK(xfer_finalize(&x));
    for (i = 0; i < nbnd; i++)
        free(bnd[i]);
    free(bnd);
    if (!o.quiet && crank == 0)
        printf("xfer-synth: %s: %d steps, %" PRIu64 " elements checked on rank 0: ok\n", me,
               (int) s, checked);
    if (!o.quiet && crank == 0 && synth_jbound_gets + synth_jcopied_gets > 0)
        printf("xfer-synth: %s: joined or variable: %" PRIu64
               " gets from the bound buffer, %" PRIu64 " copied (larger than it) on rank 0\n",
               me, synth_jbound_gets, synth_jcopied_gets);
    if (!o.quiet && crank == 0 && o.begin_ms >= -1)
        printf("xfer-synth: %s: xfer_step_begin(%d ms) said NOT_READY %" PRIu64 " times\n", me,
               o.begin_ms, synth_not_ready);
    free(chs);
    free(synth_decl);
    MPI_Finalize();
    return 0;
}