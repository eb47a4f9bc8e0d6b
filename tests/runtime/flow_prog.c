/* SPDX-License-Identifier: BSD-3-Clause */
/* The flow policies of a channel (docs/runtime.md, "Flow policies"), checked end to end: one MPMD
 * launch of component a (sends channel c) and component b (receives it); the workflow file's
 * `policy` and `stride` (or XFER_POLICY, XFER_STRIDE) decide what b gets.
 *
 *   flow_prog --steps S [--send-ms A] [--recv-ms B] [--begin] [--reader-waits]
 *             [--channels K [--reverse] [--sequential]] [--app-collective]
 *             [--refuse R] --expect block|stride:N|latest [--stride N (latest with a stride)]
 *
 * a puts dataset v (int64, 8 per rank: step * 1000000 + global index) and attribute t (the
 * step) in each of its S steps, napping A ms in each; b gets every step that comes, napping B ms,
 * and checks each byte against the sender's step number the step says it is, the attribute, that
 * the library's own attribute is not listed, and the order: block, every step; stride:N, steps
 * 0, N, 2N, ...; latest, strictly increasing with the last step S - 1 always there. At the end
 * both sides' counters (xfer_channel_stats) must agree: what a sent (and rank 0 held at the end,
 * which xfer_finalize sends), b received; sent plus dropped plus skipped is S. --reader-waits
 * (latest): b reads nothing until every rank of a has ended all its steps, which only a sender that
 * never waits for its reader gets through. --channels K: a sends the same steps on channels c, c1,
 * ..., c<K-1> (each its own policy's verdicts), b reads them in turn, one step of each channel
 * that has not ended per round, and with --reverse from the last channel to the first (the
 * order a sender's xfer_finalize does not finish them in); --sequential (latest): each channel to
 * its end before the next, which only a sender that never waits for its reader lets through, and
 * whose finish ends each channel whatever the others wait for. --app-collective: a's ranks call
 * MPI_Allreduce on their own communicator after every step, as a simulation does between its
 * outputs (a held step's collective commit must not wait for a rank inside it). --refuse R: a's
 * end of step 0 is refused R times first (half a block each time), then goes through whole.
 * Prints one line per
 * rank; exit 0 when every check holds.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xfer/xfer.h>

#define PER_RANK 8
#define TAG_DONE 77

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "flow_prog: FAIL: " __VA_ARGS__);                                      \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define XCALL(call)                                                                                \
    do {                                                                                           \
        const xfer_status_t st_ = (call);                                                          \
        if (st_ != XFER_SUCCESS) {                                                                 \
            fprintf(stderr, "flow_prog: %s: %s: %s\n", #call, xfer_status_name(st_),               \
                    xfer_last_error());                                                            \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&ts, &ts) != 0)
        ;
}

#define MAX_CH 4

typedef struct opts {
    int steps, send_ms, recv_ms, begin, reader_waits, nch, reverse, sequential, app_coll;
    int latest, refuse;
    uint64_t stride;
} opts_t;

/* --refuse R: put half of this rank's block and end the step, R times: each end is refused
 * (a hole: XFER_ERR_INVALID_ARG), forgets the puts and leaves the step open, with the step's
 * own attributes as they were (the library's step number too: labelled once, whatever the
 * number of ends). */
static void refused_ends(xfer_channel_t *ch, const xfer_dataset_desc_t *whole, const int64_t *v,
                         int rank, int r)
{
    xfer_dataset_desc_t half = *whole;
    xfer_status_t st;
    int i;
    half.count[0] = PER_RANK / 2;
    for (i = 0; i < r; i++) {
        XCALL(xfer_put(ch, &half, v));
        st = xfer_step_end(ch);
        CHECK(st == XFER_ERR_INVALID_ARG,
              "rank %d: step 0's end %d of a half block gave status %d (%s), not "
              "XFER_ERR_INVALID_ARG",
              rank, i + 1, (int) st, xfer_last_error());
    }
}

static void sender(xfer_channel_t **chs, MPI_Comm comp, const opts_t *o, int64_t *counts)
{
    int64_t v[PER_RANK];
    int rank, size, s, k, c;
    xfer_channel_stats_t cs;
    double t0;

    MPI_Comm_rank(comp, &rank);
    MPI_Comm_size(comp, &size);
    t0 = MPI_Wtime();
    for (s = 0; s < o->steps; s++) {
        for (c = 0; c < o->nch; c++) {
            xfer_channel_t *ch = chs[c];
            xfer_dataset_desc_t d;
            uint64_t now;
            const int64_t t = s;
            XCALL(xfer_channel_step(ch, &now));
            CHECK(now == (uint64_t) s, "rank %d: xfer_channel_step says %" PRIu64 " in step %d",
                  rank, now, s);
            if (o->begin) {
                xfer_step_status_t ss;
                XCALL(xfer_step_begin(ch, -1, &ss));
                CHECK(ss == XFER_STEP_OK, "rank %d: step %d began with status %d", rank, s,
                      (int) ss);
            }
            memset(&d, 0, sizeof(d));
            d.name = "v";
            d.type = XFER_TYPE_INT64;
            d.ndims = 1;
            d.dims[0] = (uint64_t) size * PER_RANK;
            d.start[0] = (uint64_t) rank * PER_RANK;
            d.count[0] = PER_RANK;
            for (k = 0; k < PER_RANK; k++)
                v[k] = (int64_t) s * 1000000 + rank * PER_RANK + k;
            if (s == 0) /* step 0's end refused R times over (a hole), then ended whole */
                refused_ends(ch, &d, v, rank, o->refuse);
            XCALL(xfer_put(ch, &d, v));
            memset(v, 0xff, sizeof(v)); /* the library kept its own copy (or sent it) */
            XCALL(xfer_put_attr(ch, "t", XFER_TYPE_INT64, 1, &t));
            if (c == o->nch - 1)
                nap_ms(o->send_ms);
            XCALL(xfer_step_end(ch));
        }
        if (o->app_coll) {
            int one = 1, all = 0;
            MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, comp);
            CHECK(all == size, "rank %d: the application's MPI_Allreduce gave %d", rank, all);
        }
    }
    for (c = 0; c < o->nch; c++) {
        XCALL(xfer_channel_stats(chs[c], &cs));
        printf("flow_prog: a rank %d: channel %d: %d steps in %.0f ms: sent %" PRIu64
               ", dropped %" PRIu64 ", held %" PRIu64 "\n",
               rank, c, o->steps, 1e3 * (MPI_Wtime() - t0), cs.steps_sent, cs.steps_dropped,
               cs.steps_held);
        CHECK(cs.steps == (uint64_t) o->steps, "rank %d: stats count %" PRIu64 " steps, not %d",
              rank, cs.steps, o->steps);
        /* rank 0 gives the verdicts: it holds one step at most, which xfer_finalize sends */
        if (rank == 0)
            CHECK(cs.steps_held <= (o->latest ? 1u : 0u), "rank 0 holds %" PRIu64 " steps",
                  cs.steps_held);
        counts[0] += (int64_t) (cs.steps_sent + cs.steps_held);
        counts[1] += (int64_t) cs.steps_dropped;
    }
}

/* What b has of one channel. */
typedef struct rstate {
    int64_t prev, *v;
    int n, ended;
} rstate_t;

/* One step of channel @p ch, checked; 0 once the channel ended. */
static int receive_one(xfer_channel_t *ch, int rank, const opts_t *o, rstate_t *r)
{
    xfer_step_status_t ss;
    xfer_dataset_desc_t d;
    int64_t t = -1, step;
    size_t cnt = 0;
    int nattr = -1, k;
    uint64_t now;

    XCALL(xfer_step_begin(ch, -1, &ss));
    if (ss == XFER_STEP_END_OF_STREAM)
        return 0;
    XCALL(xfer_get_shape(ch, "v", &d));
    r->v = realloc(r->v, (size_t) d.dims[0] * sizeof(*r->v));
    XCALL(xfer_get(ch, "v", r->v, (size_t) d.dims[0] * sizeof(*r->v), &d));
    step = (int64_t) d.step;
    XCALL(xfer_channel_step(ch, &now));
    CHECK(now == d.step, "rank %d: xfer_channel_step says %" PRIu64 ", the step is %" PRId64, rank,
          now, step);
    for (k = 0; k < (int) d.dims[0]; k++)
        if (r->v[k] != step * 1000000 + k) {
            CHECK(0, "rank %d: step %" PRId64 ": v[%d] = %" PRId64 ", not %" PRId64, rank, step, k,
                  r->v[k], step * 1000000 + k);
            break;
        }
    XCALL(xfer_get_attr(ch, "t", NULL, &cnt, &t, sizeof(t)));
    CHECK(t == step, "rank %d: step %" PRId64 " carries attribute t = %" PRId64, rank, step, t);
    XCALL(xfer_attr_count(ch, &nattr));
    CHECK(nattr == 1, "rank %d: step %" PRId64 " lists %d attributes, not 1", rank, step, nattr);
    CHECK(step > r->prev, "rank %d: step %" PRId64 " after step %" PRId64, rank, step, r->prev);
    CHECK(step % (int64_t) o->stride == 0, "rank %d: step %" PRId64 " (stride %" PRIu64 ")", rank,
          step, o->stride);
    if (!o->latest)
        CHECK(r->prev < 0 ? step == 0 : step == r->prev + (int64_t) o->stride,
              "rank %d: step %" PRId64 " after step %" PRId64 " (stride %" PRIu64 ")", rank, step,
              r->prev, o->stride);
    r->prev = step;
    r->n++;
    nap_ms(o->recv_ms);
    XCALL(xfer_step_end(ch));
    return 1;
}

static void receiver(xfer_channel_t **chs, MPI_Comm comp, const opts_t *o, int64_t *counts)
{
    rstate_t r[MAX_CH];
    xfer_channel_stats_t cs;
    int rank, c, left = o->nch;

    MPI_Comm_rank(comp, &rank);
    memset(r, 0, sizeof(r));
    for (c = 0; c < o->nch; c++)
        r[c].prev = -1;
    while (left > 0)
        for (c = 0; c < o->nch; c++) {
            const int i = o->reverse ? o->nch - 1 - c : c;
            while (!r[i].ended) {
                if (!receive_one(chs[i], rank, o, &r[i])) {
                    r[i].ended = 1;
                    left--;
                }
                if (!o->sequential)
                    break;
            }
        }
    for (c = 0; c < o->nch; c++) {
        free(r[c].v);
        XCALL(xfer_channel_stats(chs[c], &cs));
        printf("flow_prog: b rank %d: channel %d: received %d steps, the last %" PRId64 "\n", rank,
               c, r[c].n, r[c].prev);
        CHECK(cs.steps_received == (uint64_t) r[c].n,
              "rank %d: channel %d: stats say %" PRIu64 " received, not %d", rank, c,
              cs.steps_received, r[c].n);
        /* the last step to send is always there (latest never drops it) */
        CHECK(r[c].prev == (int64_t) (((uint64_t) o->steps - 1) / o->stride * o->stride),
              "rank %d: channel %d: the last step received is %" PRId64, rank, c, r[c].prev);
        counts[0] += r[c].n;
    }
}

int main(int argc, char **argv)
{
    opts_t o = {.steps = 20, .stride = 1, .nch = 1};
    int i, wrank, crank, csize, is_a, provided;
    int64_t mine[2] = {0, 0}, other[2] = {0, 0};
    const xfer_config_t *cfg;
    xfer_channel_t *chs[MAX_CH];
    xfer_role_t role;
    MPI_Comm comp;
    xfer_t *x;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            o.steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--send-ms") && i + 1 < argc)
            o.send_ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--refuse") && i + 1 < argc)
            o.refuse = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--recv-ms") && i + 1 < argc)
            o.recv_ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--begin"))
            o.begin = 1;
        else if (!strcmp(argv[i], "--stride") && i + 1 < argc)
            o.stride = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reader-waits"))
            o.reader_waits = 1;
        else if (!strcmp(argv[i], "--channels") && i + 1 < argc)
            o.nch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reverse"))
            o.reverse = 1;
        else if (!strcmp(argv[i], "--sequential"))
            o.sequential = 1;
        else if (!strcmp(argv[i], "--app-collective"))
            o.app_coll = 1;
        else if (!strcmp(argv[i], "--expect") && i + 1 < argc) {
            const char *e = argv[++i];
            if (!strcmp(e, "latest"))
                o.latest = 1;
            else if (!strncmp(e, "stride:", 7))
                o.stride = strtoull(e + 7, NULL, 10);
            else if (strcmp(e, "block") != 0) {
                fprintf(stderr, "flow_prog: --expect block|stride:N|latest\n");
                return 2;
            }
        } else {
            fprintf(stderr, "flow_prog: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (o.nch < 1 || o.nch > MAX_CH) {
        fprintf(stderr, "flow_prog: --channels 1 to %d\n", MAX_CH);
        return 2;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    XCALL(xfer_init(NULL, NULL, MPI_COMM_WORLD, &x));
    XCALL(xfer_comm(x, &comp));
    XCALL(xfer_config_of(x, &cfg, &i));
    MPI_Comm_rank(comp, &crank);
    MPI_Comm_size(comp, &csize);
    for (i = 0; i < o.nch; i++) {
        char name[16] = "c";
        if (i > 0)
            snprintf(name, sizeof(name), "c%d", i);
        XCALL(xfer_channel_open(x, name, &chs[i]));
    }
    XCALL(xfer_channel_role(chs[0], &role));
    is_a = role == XFER_ROLE_SEND;
    if (is_a) {
        sender(chs, comp, &o, mine);
        if (o.reader_waits) { /* every rank of a is through its steps: b may read */
            MPI_Barrier(comp);
            if (crank == 0)
                MPI_Send(&o.steps, 1, MPI_INT, csize, TAG_DONE, MPI_COMM_WORLD);
        }
    } else {
        if (o.reader_waits) {
            int dummy = 0;
            if (crank == 0)
                MPI_Recv(&dummy, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Bcast(&dummy, 1, MPI_INT, 0, comp);
        }
        receiver(chs, comp, &o, mine);
    }
    XCALL(xfer_finalize(&x));
    /* the leaders compare: a sent what b received (a's dropped and skipped make up the rest) */
    if (crank == 0) {
        const int peer = is_a ? csize : 0;
        MPI_Sendrecv(mine, 2, MPI_INT64_T, peer, TAG_DONE + 1, other, 2, MPI_INT64_T, peer,
                     TAG_DONE + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (is_a) {
            const int64_t held =
                o.nch *
                (o.stride > 1 ? (o.steps + (int64_t) o.stride - 1) / (int64_t) o.stride : o.steps);
            CHECK(mine[0] == other[0], "a sent %" PRId64 " steps, b received %" PRId64, mine[0],
                  other[0]);
            CHECK(mine[0] + mine[1] == held,
                  "a sent %" PRId64 " and dropped %" PRId64 " of its %" PRId64 " steps to send",
                  mine[0], mine[1], held);
            if (!o.latest)
                CHECK(mine[1] == 0, "a dropped %" PRId64 " steps under policy block", mine[1]);
            if (o.reader_waits)
                CHECK(mine[1] > 0, "a dropped no step although b read nothing until a ended them "
                                   "all");
        }
    }
    printf("flow_prog: %s rank %d: %s\n", is_a ? "a" : "b", crank, failures ? "FAILED" : "ok");
    (void) wrank;
    MPI_Finalize();
    return failures ? 1 : 0;
}
