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
 *              [--kill-after K] [--sigstop-after K] [--compute-ms MS]
 *              [--begin TIMEOUT_MS [--deadline-ms MS]] [--quiet]
 *              [--seed S] [--orders phased|file|random] [--delay-ms MAX] [--stop-after K]
 *              [--fault kill|stop:RANK:STEP:begin|commit|end] [--report]
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
 * channel: the component goes on with its others. Every failing call is reported with its
 * channel, step, status, message and how long it ran. Unless --quiet, every rank ends with one
 * line per channel (docs/testing.md):
 *   xfer-synth-result component=C rank=R channel=CH role=send|recv|full steps=N [got=G] end=WHY
 *                     [status=S]
 * (steps: xfer_step_end calls that succeeded; got: steps received whole and right)
 * and --report adds a line per step and channel as it completes (xfer-synth-step ...).
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

#include <xfer/xfer.h>

#include "common/cli.h"
#include "synth_pattern.h"
#define XFER_XALLOC_PROG "xfer-synth"
#define XFER_XALLOC_EXIT 1
#include "common/xalloc.h"

enum { ORD_PHASED, ORD_FILE, ORD_RANDOM };
enum { AT_BEGIN, AT_COMMIT, AT_END };

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
    int sigstop_after;      /* rank 0 sends itself SIGSTOP after this many steps (-1: never) */
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
    int seeded;            /* --seed given */
    uint64_t seed;         /* orders, delays and user selections are drawn from it */
    int orders;            /* ORD_* */
    int delay_ms;          /* before and after each step, a delay drawn in 0..delay_ms */
    int stop_after;        /* finalize after this many steps (-1: run them all) */
    int fault_sig;         /* --fault: 0 none, SIGKILL or SIGSTOP */
    int fault_rank, fault_at;
    int64_t fault_step;
    int report; /* a line per completed step and channel */
} opts_t;

/* How a channel ended for this rank (the summary's end=). */
enum { END_RUNNING, END_OK, END_EOS, END_STOPPED, END_FAILED, END_WRONG, END_ABORTED, END_KILLED };
static const char *const end_names[] = {"running", "ok",         "eos",     "stopped",
                                        "failed",  "wrong-data", "aborted", "killed"};

typedef struct chan {
    xfer_channel_t *h; /* NULL: not a channel of this component */
    xfer_role_t role;
    int end;               /* END_* */
    uint64_t steps;        /* step_end calls that returned XFER_SUCCESS */
    uint64_t got;          /* steps whose data this rank received whole and found right */
    xfer_status_t st;      /* the failure (END_FAILED) */
    const char *eos_where; /* the call that met the end of the stream */
} chan_t;

static int wrank;
static char me[64] = "?";
static opts_t o = {.steps = 4,
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
                   .fault_step = -1};
static const xfer_config_t *cfg;
static int comp, crank = -1, csize;
static chan_t *chs;
static uint64_t checked;
static int results_printed; /* once: xfer_finalize frees the configuration */
static void **bnd;
static int nbnd;

/* Every rank's last words per channel: one machine-readable line each (docs/testing.md). */
static void print_results(void)
{
    int i;
    static const char *const roles[] = {"send", "recv", "full"};
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
        printf("\n");
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

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    /* the rank in its component once known (the world's rank before) */
    fprintf(stderr, "xfer-synth: %s rank %d: ", me, crank >= 0 ? crank : wrank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    if (!results_printed) {
        end_all(END_ABORTED);
        print_results();
    }
    exit(1); /* the launcher stops the other ranks; MPI_Abort can lose this output */
}

#define FAIL(...) die(__VA_ARGS__)

#define XCHECK(call)                                                                               \
    do {                                                                                           \
        const double t0_ = MPI_Wtime();                                                            \
        xfer_status_t st_ = (call);                                                                \
        if (st_ != XFER_SUCCESS)                                                                   \
            FAIL("%s: %s: %s (after %.0f ms)", #call, xfer_status_name(st_), xfer_last_error(),    \
                 1e3 * (MPI_Wtime() - t0_));                                                       \
    } while (0)

/* A call on channel i in step s: 1 on success; 0 when it met the end of the stream (the channel
 * ends for this rank, the others go on); a failure names the channel and the step, and ends the
 * process. */
static int ch_result(int i, uint64_t s, xfer_status_t st, const char *what, double t0)
{
    chan_t *c = &chs[i];
    if (st == XFER_SUCCESS)
        return 1;
    if (st == XFER_ERR_END_OF_STREAM) {
        c->end = END_EOS;
        c->eos_where = what;
        return 0;
    }
    c->end = END_FAILED;
    c->st = st;
    die("channel %s step %" PRIu64 ": %s: %s: %s (after %.0f ms)", cfg->channels[i].name, s, what,
        xfer_status_name(st), xfer_last_error(), 1e3 * (MPI_Wtime() - t0));
}

#define CHCALL(ok, i, s, call)                                                                     \
    do {                                                                                           \
        const double t0_ = MPI_Wtime();                                                            \
        const xfer_status_t st_ = (call);                                                          \
        (ok) = ch_result((i), (s), st_, #call, t0_);                                               \
    } while (0)

static int live(int i)
{
    return chs[i].h && chs[i].end == END_RUNNING;
}

/* ---- what --seed draws: one mix of (seed, what, component, rank, step, item) ------------------
 */
enum { R_PUT = 1, R_ORDER, R_FULL, R_DELAY0, R_DELAY1, R_SELECT, R_DSORDER };

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t draw(uint64_t what, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mix64(mix64(mix64(mix64(mix64(o.seed ^ what) ^ a) ^ b) ^ c) ^ d);
}

/* Shuffle v[0..n) with the stream keyed by @p key (Fisher-Yates). */
static void shuffle(int *v, int n, uint64_t key)
{
    int k;
    for (k = n - 1; k > 0; k--) {
        const int r = (int) (mix64(key + (uint64_t) k) % (uint64_t) (k + 1)), t = v[k];
        v[k] = v[r];
        v[r] = t;
    }
}

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&ts, &ts) != 0)
        ; /* interrupted: sleep the rest */
}

/* A delay of 0..delay_ms drawn for this rank and step (the generated workload's "compute"). */
static void delay(int which, uint64_t s)
{
    if (o.seeded && o.delay_ms > 0)
        nap_ms((int) (draw((uint64_t) which, (uint64_t) comp, (uint64_t) crank, s, 0) %
                      (uint64_t) (o.delay_ms + 1)));
}

/* --fault: the victim rank prints what it has done so far, then sends itself the signal. */
static void fault_point(int at, uint64_t s)
{
    static const char *const ats[] = {"begin", "commit", "end"};
    const int sig = o.fault_sig;
    if (!sig || o.fault_at != at || o.fault_step != (int64_t) s || o.fault_rank != crank)
        return;
    o.fault_sig = 0; /* once: a stopped rank that is continued goes on */
    printf("xfer-synth-fault component=%s rank=%d signal=%s step=%" PRIu64 " at=%s\n", me, crank,
           sig == SIGKILL ? "KILL" : "STOP", s, ats[at]);
    if (sig == SIGKILL) {
        int i;
        for (i = 0; i < cfg->nchannels; i++)
            if (live(i))
                chs[i].end = END_KILLED;
        print_results();
    }
    fflush(stdout);
    fprintf(stderr, "xfer-synth: %s rank %d: SIG%s to myself in step %" PRIu64 " at %s (--fault)\n",
            me, crank, sig == SIGKILL ? "KILL" : "STOP", s, ats[at]);
    fflush(stderr);
    raise(sig);
}

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

/* ---- one step of one channel --------------------------------------------------------------- */

/* After a successful xfer_step_end of channel i in step s. */
static void step_done(int i, uint64_t s)
{
    static const char *const roles[] = {"send", "recv", "full"};
    chan_t *c = &chs[i];
    c->steps++;
    if (o.report) {
        printf("xfer-synth-step component=%s rank=%d channel=%s role=%s step=%" PRIu64 "\n", me,
               crank, cfg->channels[i].name,
               roles[c->role == XFER_ROLE_SEND   ? 0
                     : c->role == XFER_ROLE_RECV ? 1
                                                 : 2],
               s);
        fflush(stdout);
    }
    if (c->role != XFER_ROLE_RECV)
        fault_point(AT_COMMIT, s);
}

/* Put this rank's block of dataset j of channel i in step s. 0: the channel ended. */
static int put_dataset(int i, int j, uint64_t s)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    xfer_dataset_desc_t desc;
    size_t bytes;
    char *blk;
    int ok = 1;
    if (d->from != comp || (o.skip && strcmp(o.skip, d->name) == 0))
        return 1;
    memset(&desc, 0, sizeof(desc));
    desc.name = d->name;
    desc.type = d->type;
    desc.ndims = d->ndims;
    memcpy(desc.dims, d->dims, sizeof(desc.dims));
    block_of(d, crank, csize, o.decomp, desc.start, desc.count);
    bytes = vol(d->ndims, desc.count) * xfer_type_size(d->type);
    blk = o.bind ? bnd[BND(i, j, s)] : xchecked(malloc(bytes + 1));
    if (strcmp(o.put_order, "twice") == 0) { /* the second put must replace it */
        memset(blk, 0xa5, bytes);
        CHCALL(ok, i, s, xfer_put(chs[i].h, &desc, blk));
    }
    if (ok) {
        fill(d, i, j, s, desc.start, desc.count, blk);
        CHCALL(ok, i, s, xfer_put(chs[i].h, &desc, blk));
    }
    if (!o.bind)
        free(blk);
    return ok;
}

/* This step's attributes on a channel this rank sends on (--attrs). 0: the channel ended. */
static int put_attrs(int i, uint64_t s)
{
    xfer_channel_t *h = chs[i].h;
    char label[96];
    const double t = 0.5 * (double) s;
    const int32_t v3[3] = {(int32_t) s, (int32_t) s + 1, (int32_t) s + 2};
    int ok;
    if (!o.attrs || chs[i].role == XFER_ROLE_RECV)
        return 1;
    snprintf(label, sizeof(label), "%s step %" PRIu64, me, s);
    CHCALL(ok, i, s, xfer_put_attr(h, "step", XFER_TYPE_UINT64, 1, &s));
    if (ok)
        CHCALL(ok, i, s, xfer_put_attr(h, "time", XFER_TYPE_FLOAT64, 1, &t));
    if (ok)
        CHCALL(ok, i, s, xfer_put_attr(h, "v3", XFER_TYPE_INT32, 3, v3));
    if (ok)
        CHCALL(ok, i, s, xfer_put_attr_string(h, "label", "replaced below"));
    if (ok)
        CHCALL(ok, i, s, xfer_put_attr_string(h, "label", label));
    return ok;
}

/* Every block of channel i this rank sends in step s, datasets in the order of --put-order
 * (or, seeded with --orders random, in an order drawn for this rank and step). */
static int put_channel(int i, uint64_t s)
{
    const int n = cfg->channels[i].ndatasets;
    int *ord = xchecked(calloc((size_t) n + 1, sizeof(*ord))), jj, ok = 1;
    for (jj = 0; jj < n; jj++)
        ord[jj] = strcmp(o.put_order, "reverse") == 0 ? n - 1 - jj : jj;
    if (o.orders == ORD_RANDOM)
        shuffle(ord, n, draw(R_PUT, (uint64_t) comp, (uint64_t) crank, s, (uint64_t) i));
    for (jj = 0; ok && jj < n; jj++)
        ok = put_dataset(i, ord[jj], s);
    free(ord);
    return ok && put_attrs(i, s);
}

/* Check this step's attributes (--attrs) on a channel this rank receives on. */
static int check_attrs(int i, uint64_t s)
{
    const int peer = cfg->channels[i].from == comp ? cfg->channels[i].to : cfg->channels[i].from;
    xfer_channel_t *h = chs[i].h;
    uint64_t got_s = 0;
    double got_t = 0;
    int32_t got_v[3] = {0, 0, 0};
    char label[96] = "", want_label[96];
    xfer_type_t ty = XFER_TYPE_INT8;
    size_t cnt = 0;
    int na = 0, ok;
    if (!o.attrs)
        return 1;
    CHCALL(ok, i, s, xfer_attr_count(h, &na));
    if (ok)
        CHCALL(ok, i, s, xfer_get_attr(h, "step", &ty, &cnt, &got_s, sizeof(got_s)));
    if (ok)
        CHCALL(ok, i, s, xfer_get_attr(h, "time", NULL, NULL, &got_t, sizeof(got_t)));
    if (ok)
        CHCALL(ok, i, s, xfer_get_attr(h, "v3", NULL, NULL, got_v, sizeof(got_v)));
    if (ok)
        CHCALL(ok, i, s, xfer_get_attr_string(h, "label", label, sizeof(label)));
    if (!ok)
        return 0;
    snprintf(want_label, sizeof(want_label), "%s step %" PRIu64, cfg->components[peer].name, s);
    if (na != 4 || ty != XFER_TYPE_UINT64 || cnt != 1 || got_s != s || got_t != 0.5 * (double) s ||
        got_v[0] != (int32_t) s || got_v[2] != (int32_t) s + 2 || strcmp(label, want_label) != 0) {
        chs[i].end = END_WRONG;
        FAIL("channel %s step %" PRIu64 ": attributes differ (%d of them, step %" PRIu64
             ", label \"%s\")",
             cfg->channels[i].name, s, na, got_s, label);
    }
    return 1;
}

/* Get dataset j of channel i in step s (what this rank holds, and a hyperslab inside it) and
 * compare both with the pattern. 0: the channel ended. */
static int get_dataset(int i, int j, uint64_t s)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const size_t es = xfer_type_size(d->type);
    const uint64_t n = vol(d->ndims, d->dims);
    uint64_t st0[XFER_MAX_DIMS] = {0}, c0[XFER_MAX_DIMS] = {0};
    char *got, *want;
    xfer_dataset_desc_t out;
    xfer_channel_stats_t cs0, cs1;
    uint64_t held;
    int k, ok;
    if (d->from == comp)
        return 1;
    got = o.bind ? bnd[BND(i, j, s)] : xchecked(malloc(n * es + 1));
    want = xchecked(malloc(n * es + 1));
    memset(&out, 0, sizeof(out));
    /* what this rank receives: the whole dataset, or its selection */
    CHCALL(ok, i, s, xfer_channel_stats(chs[i].h, &cs0));
    if (ok)
        CHCALL(ok, i, s, xfer_get(chs[i].h, d->name, got, n * es, &out));
    if (ok)
        CHCALL(ok, i, s, xfer_channel_stats(chs[i].h, &cs1));
    if (!ok)
        goto out;
    if (o.bind && cs1.bytes_copied_out != cs0.bytes_copied_out) {
        chs[i].end = END_WRONG;
        FAIL("channel %s dataset %s step %" PRIu64 ": did not land in the buffer bound for it "
             "(xfer_get copied %" PRIu64 " bytes)",
             cfg->channels[i].name, d->name, s, cs1.bytes_copied_out - cs0.bytes_copied_out);
    }
    fill(d, i, j, s, out.start, out.count, want);
    held = vol(d->ndims, out.count);
    if (out.step != s || memcmp(got, want, held * es) != 0) {
        uint64_t e = 0;
        while (out.step == s && e < held && memcmp(got + e * es, want + e * es, es) == 0)
            e++;
        chs[i].end = END_WRONG;
        FAIL("channel %s dataset %s step %" PRIu64 ": data differs from the pattern (step %" PRIu64
             " received, first wrong element %" PRIu64 " of %" PRIu64 " held)",
             cfg->channels[i].name, d->name, s, out.step, e, held);
    }
    /* a hyperslab: the middle third of every dimension (at least one element), within what
     * this rank holds */
    for (k = 0; k < d->ndims; k++) {
        uint64_t lo = d->dims[k] / 3, hi = d->dims[k] - d->dims[k] / 3;
        lo = lo > out.start[k] ? lo : out.start[k];
        hi = hi < out.start[k] + out.count[k] ? hi : out.start[k] + out.count[k];
        st0[k] = lo;
        c0[k] = hi > lo ? hi - lo : 0;
    }
    if (vol(d->ndims, c0) > 0) {
        /* into a buffer of its own: a bound one holds the step's selection */
        char *hs = xchecked(malloc(n * es + 1));
        CHCALL(ok, i, s, xfer_get_selection(chs[i].h, d->name, st0, c0, hs, n * es, &out));
        if (ok) {
            fill(d, i, j, s, st0, c0, want);
            k = memcmp(hs, want, vol(d->ndims, c0) * es);
        }
        free(hs);
        if (ok && k != 0) {
            chs[i].end = END_WRONG;
            FAIL("channel %s dataset %s step %" PRIu64 ": hyperslab differs", cfg->channels[i].name,
                 d->name, s);
        }
        if (!ok)
            goto out;
    }
    checked += held + vol(d->ndims, c0);
    if (o.bind == 2) {
        /* the next step lands in the other buffer: wipe it first, so that only the step itself
         * can make it match */
        char *next = bnd[BND(i, j, s + 1)];
        memset(next, 0, held * es);
        CHCALL(ok, i, s, xfer_bind_buffer(chs[i].h, d->name, next, held * es));
    }
out:
    if (!o.bind)
        free(got);
    free(want);
    return ok;
}

/* Everything channel i receives in step s, checked. 0: the channel ended. */
static int get_channel(int i, uint64_t s)
{
    const int n = cfg->channels[i].ndatasets;
    int *ord = xchecked(calloc((size_t) n + 1, sizeof(*ord))), jj, ok;
    ok = check_attrs(i, s);
    for (jj = 0; jj < n; jj++)
        ord[jj] = jj;
    if (o.orders == ORD_RANDOM)
        shuffle(ord, n, draw(R_DSORDER, (uint64_t) comp, (uint64_t) crank, s, (uint64_t) i));
    for (jj = 0; ok && jj < n; jj++)
        ok = get_dataset(i, ord[jj], s);
    free(ord);
    if (ok)
        chs[i].got++; /* (a release that fails later does not undo it) */
    if (ok && o.get) {
        char tiny[8];
        CHCALL(ok, i, s, xfer_get(chs[i].h, o.get, tiny, sizeof(tiny), NULL));
    }
    return ok;
}

/* xfer_step_end of channel i in step s: the commit of a sending side, the release of a
 * receiving one. */
static void end_channel(int i, uint64_t s)
{
    int ok;
    CHCALL(ok, i, s, xfer_step_end(chs[i].h));
    if (ok)
        step_done(i, s);
}

/* The channels of @p role class (send: this side only sends; else: it receives) in the order
 * of this step: the file's, or (--orders random) one drawn for the component and step, the
 * same on all its ranks. Full-duplex channels keep one order per step that every component
 * shares, wherever they fall among the others: a component waits in a full-duplex get for
 * its peer's commit, so two of them must not meet such channels in opposite orders. */
static int step_order(int *ord, int send, uint64_t s, uint64_t what)
{
    int i, n = 0, nf = 0, k;
    int *full = xchecked(calloc((size_t) cfg->nchannels + 1, sizeof(*full)));
    for (i = 0; i < cfg->nchannels; i++)
        if (live(i) && (chs[i].role == XFER_ROLE_SEND) == send)
            ord[n++] = i;
    if (o.orders == ORD_RANDOM) {
        shuffle(ord, n, draw(R_ORDER, (uint64_t) comp, what, s, 0));
        for (i = 0; i < n; i++)
            if (cfg->channels[ord[i]].duplex == XFER_DUPLEX_FULL)
                full[nf++] = ord[i];
        /* the full-duplex ones by their shared key (insertion sort: a handful) */
        for (i = 1; i < nf; i++)
            for (k = i; k > 0 && draw(R_FULL, 0, 0, s, (uint64_t) full[k - 1]) >
                                     draw(R_FULL, 0, 0, s, (uint64_t) full[k]);
                 k--) {
                const int t = full[k];
                full[k] = full[k - 1];
                full[k - 1] = t;
            }
        for (i = 0, k = 0; i < n; i++)
            if (cfg->channels[ord[i]].duplex == XFER_DUPLEX_FULL)
                ord[i] = full[k++];
    }
    free(full);
    return n;
}

static void run_step(uint64_t s)
{
    const int nch = cfg->nchannels;
    int *ord = xchecked(calloc((size_t) nch + 1, sizeof(*ord)));
    int i, k, n;

    if (o.orders == ORD_FILE) { /* each channel whole, in the file's order */
        for (i = 0; i < nch; i++) {
            if (live(i) && chs[i].role != XFER_ROLE_RECV && !put_channel(i, s))
                continue;
            if (live(i) && chs[i].role != XFER_ROLE_SEND && !get_channel(i, s))
                continue;
            if (live(i))
                end_channel(i, s);
        }
        free(ord);
        return;
    }
    /* puts never wait for a peer: every channel this rank sends on, in the order drawn for
     * it (--orders random) or the file's */
    for (i = 0; i < nch; i++)
        ord[i] = i;
    if (o.orders == ORD_RANDOM)
        shuffle(ord, nch, draw(R_PUT, (uint64_t) comp, (uint64_t) crank, s, 1000));
    for (k = 0; k < nch; k++)
        if (live(ord[k]) && chs[ord[k]].role != XFER_ROLE_RECV)
            (void) put_channel(ord[k], s);
    /* commit what this component only sends before waiting for anything: with channels in
     * both directions, a component that got first would wait for a peer that gets first too */
    n = step_order(ord, 1, s, 1);
    for (k = 0; k < n; k++)
        if (live(ord[k]))
            end_channel(ord[k], s);
    n = step_order(ord, 0, s, 2);
    for (k = 0; k < n; k++)
        if (live(ord[k]))
            (void) get_channel(ord[k], s);
    n = step_order(ord, 0, s, 3);
    for (k = 0; k < n; k++)
        if (live(ord[k]))
            end_channel(ord[k], s);
    free(ord);
}

static uint64_t not_ready_count;

/* The step-status API (--begin): begin each channel's step, polling with the timeout. */
static void begin_step(uint64_t s)
{
    int i, ok;
    for (i = 0; o.begin_ms >= -1 && i < cfg->nchannels; i++) {
        const double t0 = MPI_Wtime();
        xfer_step_status_t ss = XFER_STEP_NOT_READY;
        while (live(i) && ss == XFER_STEP_NOT_READY) {
            CHCALL(ok, i, s, xfer_step_begin(chs[i].h, o.begin_ms, &ss));
            if (ok && ss == XFER_STEP_NOT_READY)
                not_ready_count++;
            if (ok && ss == XFER_STEP_NOT_READY && o.deadline_ms > 0 &&
                MPI_Wtime() - t0 > 1e-3 * o.deadline_ms)
                FAIL("channel %s: step %" PRIu64 " did not begin within %d ms (%s)",
                     cfg->channels[i].name, s, o.deadline_ms, "--deadline-ms");
        }
        if (live(i) && ss == XFER_STEP_END_OF_STREAM) {
            chs[i].end = END_EOS;
            chs[i].eos_where = "xfer_step_begin";
        }
    }
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
                   "                  [--sigstop-after K]\n"
                   "                  [--compute-ms MS] [--put-order forward|reverse|twice]\n"
                   "                  [--begin TIMEOUT_MS [--deadline-ms MS]]\n"
                   "                  [--select overlap|mixed|corner|none|all] [--attrs]\n"
                   "                  [--bind | --bind-alternate]\n"
                   "                  [--mpi-thread single|multiple] [--quiet]\n"
                   "                  [--seed S] [--orders phased|file|random] [--delay-ms MAX]\n"
                   "                  [--stop-after K] [--report]\n"
                   "                  [--fault kill|stop:RANK:STEP:begin|commit|end]\n"
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
                const uint64_t kind =
                    draw(R_SELECT, (uint64_t) comp, (uint64_t) crank, (uint64_t) i, (uint64_t) j);
                for (k = 0; k < d->ndims; k++) {
                    const uint64_t r1 = draw(R_SELECT, kind, (uint64_t) k, 1, 0),
                                   r2 = draw(R_SELECT, kind, (uint64_t) k, 2, 0);
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
            const size_t es = xfer_type_size(d->type);
            uint64_t st0[XFER_MAX_DIMS], c0[XFER_MAX_DIMS];
            size_t n = (size_t) vol(d->ndims, d->dims) * es; /* a selection is no larger */
            if (d->from == comp) {
                block_of(d, crank, csize, o.decomp, st0, c0);
                n = (size_t) vol(d->ndims, c0) * es;
            }
            bnd[BND(i, j, 0)] = xchecked(malloc(n + 1));
            if (o.bind == 2) /* the odd steps' buffer */
                bnd[BND(i, j, 1)] = xchecked(calloc(1, n + 1));
            XCHECK(xfer_bind_buffer(chs[i].h, d->name, bnd[BND(i, j, 0)], n));
        }
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
    if (o.kill_after >= 0 && s == (uint64_t) o.kill_after && crank == 0) {
        /* kill -9 of the component: its launcher takes the other ranks down */
        fprintf(stderr, "xfer-synth: %s rank %d: SIGKILL to myself after %d steps\n", me, crank,
                o.kill_after);
        fflush(stderr);
        raise(SIGKILL);
    }
    if (o.sigstop_after >= 0 && s == (uint64_t) o.sigstop_after && crank == 0) {
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
        if (!live(i) || chs[i].role != XFER_ROLE_RECV)
            continue;
        memset(seen, 0, (size_t) cfg->ncomponents);
        if (waits_for(cfg->channels[i].from, comp, seen))
            continue;
        d = &cfg->channels[i].datasets[0];
        n = vol(d->ndims, d->dims) * xfer_type_size(d->type);
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
            continue;
        }
        buf = xchecked(malloc(n + 1));
        st = xfer_get(chs[i].h, d->name, buf, n, NULL);
        free(buf);
        if (st != XFER_ERR_END_OF_STREAM) {
            chs[i].end = END_FAILED;
            chs[i].st = st == XFER_SUCCESS ? XFER_ERR_STATE : st;
            FAIL("channel %s: expected the end of the stream after %d steps, got %s: %s",
                 cfg->channels[i].name, o.steps, xfer_status_name(st), xfer_last_error());
        }
        chs[i].end = END_OK;
    }
    free(seen);
}

int main(int argc, char **argv)
{
    xfer_t *x = NULL;
    MPI_Comm comm;
    uint64_t s;
    int i, own = 0, stopped = 0;

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
    declare_selections();
    bind_buffers();

    for (s = 0; s < (uint64_t) o.steps; s++) {
        int any = 0;
        if (o.stop_after >= 0 && s == (uint64_t) o.stop_after) {
            stopped = 1; /* a reader that stops early: finalize closes what is left */
            break;
        }
        for (i = 0; i < cfg->nchannels; i++)
            any |= live(i);
        if (own > 0 && !any)
            break; /* every channel of this component ended */
        step_hooks(s, comm);
        fault_point(AT_BEGIN, s);
        if (o.compute_ms > 0) /* a simulation's time step */
            nap_ms(o.compute_ms);
        delay(R_DELAY0, s);
        begin_step(s);
        run_step(s);
        fault_point(AT_END, s);
        delay(R_DELAY1, s);
    }
    if (stopped)
        end_all(END_STOPPED);
    else
        expect_end();
    end_all(END_OK);
    for (i = 0; !o.quiet && crank == 0 && i < cfg->nchannels; i++) {
        xfer_channel_stats_t cs;
        if (!chs[i].h)
            continue;
        XCHECK(xfer_channel_stats(chs[i].h, &cs));
        printf("xfer-synth: %s: channel %s: %" PRIu64 " steps, %" PRIu64 " bytes sent, %" PRIu64
               " received, %" PRIu64 " copied in, %" PRIu64 " copied out (rank 0)\n",
               me, cfg->channels[i].name, cs.steps, cs.bytes_sent, cs.bytes_received,
               cs.bytes_copied_in, cs.bytes_copied_out);
    }
    print_results(); /* (the configuration goes with the context) */
    XCHECK(xfer_finalize(&x));
    for (i = 0; i < nbnd; i++)
        free(bnd[i]);
    free(bnd);
    if (!o.quiet && crank == 0)
        printf("xfer-synth: %s: %d steps, %" PRIu64 " elements checked on rank 0: ok\n", me,
               (int) s, checked);
    if (!o.quiet && crank == 0 && o.begin_ms >= -1)
        printf("xfer-synth: %s: xfer_step_begin(%d ms) said NOT_READY %" PRIu64 " times\n", me,
               o.begin_ms, not_ready_count);
    free(chs);
    MPI_Finalize();
    return 0;
}
