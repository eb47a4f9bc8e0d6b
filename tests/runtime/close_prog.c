/* SPDX-License-Identifier: BSD-3-Clause */
/* One channel closed early while another goes on (docs/runtime.md, "Closing a channel"):
 * component a sends channels c1 and c2 to component b, S steps each, one step of c1 then one of
 * c2; at step K one side closes c1 with xfer_channel_close and both go on with c2 to its end.
 *
 *   close_prog --steps S --at K --closer reader|sender [--loss fail|continue] [--latest]
 *              [--reader-waits] [--send-ms A] [--recv-ms B]
 *
 * Dataset v of each channel (int64, 8 per sending rank) holds channel * 1e9 + step * 1e6 +
 * global index, where step is the sender's number of the step; every receiving rank checks
 * every element of its selection of every step it gets, byte for byte.
 *   --closer reader: b reads steps 0 .. K-1 of c1, then closes it. --loss fail (what the
 *     channel says): a's next call on c1 sees the end (END_OF_STREAM: a status, or
 *     XFER_ERR_END_OF_STREAM) at a step E, K <= E < S, never an error; a ends E steps of c1,
 *     all sent. --loss continue: a ends all S steps of c1, each sent or unsent, some unsent.
 *   --closer sender: a ends steps 0 .. K-1 of c1, then closes it; b gets c1's steps up to K-1
 *     (all of them; --latest, the channels' policy: strictly increasing, the last one K-1: the
 *     held last step is sent by the close), then END_OF_STREAM. --reader-waits (one MPMD launch,
 *     --latest): b reads nothing until every rank of a ended its K steps, so a holds step K-1
 *     and dropped some when it closes c1.
 * Either way b gets every step of c2, 0 .. S-1 (--latest: strictly increasing, the last S-1). The
 * closing side then checks the handle's errors: the handle is NULL, a second close of it and a
 * close of NULL say XFER_ERR_INVALID_ARG, a close of another copy of it, a call on that copy and
 * xfer_channel_open of c1 say XFER_ERR_STATE. Each rank prints its counts ("close_prog: a rank R:
 * c1: N steps ended, SENT sent, UNSENT unsent"; "close_prog: b rank R: c1: N steps, c2: M steps")
 * and exits 1 on any failure, with its words. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xfer/xfer.h>

#define PER_RANK 8
#define NCH      2
#define TAG_GO   77 /* --reader-waits: a's rank 0 -> b's, on MPI_COMM_WORLD (one MPMD launch) */

static const char *who = "?";
static int crank;

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&ts, &ts) != 0)
        ;
}

static void die(const char *what, xfer_status_t st)
{
    fprintf(stderr, "close_prog: %s rank %d: %s: %s: %s\n", who, crank, what, xfer_status_name(st),
            xfer_last_error());
    fflush(stderr);
    _exit(1);
}

#define XCALL(call)                                                                                \
    do {                                                                                           \
        const xfer_status_t st_ = (call);                                                          \
        if (st_ != XFER_SUCCESS)                                                                   \
            die(#call, st_);                                                                       \
    } while (0)

static void fail(const char *fmt, const char *a, long long b, long long c)
{
    fprintf(stderr, "close_prog: %s rank %d: ", who, crank);
    fprintf(stderr, fmt, a, b, c);
    fputc('\n', stderr);
    fflush(stderr);
    _exit(1);
}

/* A call that must fail with @p want. */
static void expect(const char *what, xfer_status_t got, xfer_status_t want)
{
    if (got != want)
        fail("%s: %lld, expected %lld", what, (long long) got, (long long) want);
    if (crank == 0)
        printf("close_prog: %s rank 0: %s: %s: %s\n", who, what, xfer_status_name(got),
               xfer_last_error());
}

/* Close *@p ch, then every error its handle gives. */
static void close_and_check(xfer_t *x, xfer_channel_t **ch)
{
    xfer_channel_t *copy = *ch, *again = NULL;
    XCALL(xfer_channel_close(ch));
    if (*ch)
        fail("%s: the handle is not NULL after the close", "c1", 0, 0);
    expect("second close", xfer_channel_close(ch), XFER_ERR_INVALID_ARG);
    expect("close(NULL)", xfer_channel_close(NULL), XFER_ERR_INVALID_ARG);
    expect("close of another copy", xfer_channel_close(&copy), XFER_ERR_STATE);
    if (copy)
        fail("%s: the copy is not NULL after its close", "c1", 0, 0);
    copy = *ch = NULL;
    expect("open after close", xfer_channel_open(x, "c1", &again), XFER_ERR_STATE);
    if (again)
        fail("%s: open after close gave a handle", "c1", 0, 0);
    fflush(stdout);
}

/* The value element @p i (global) of channel @p c's step @p s holds. */
static int64_t value(int c, uint64_t s, uint64_t i)
{
    return (int64_t) (c + 1) * 1000000000 + (int64_t) s * 1000000 + (int64_t) i;
}

/* One step of channel @p c on a sending rank: XFER_SUCCESS, or the end (END_OF_STREAM: which
 * call said so in *@p how). */
static xfer_status_t send_step(xfer_channel_t *ch, int c, uint64_t s, int csize, const char **how)
{
    xfer_step_status_t ss = XFER_STEP_NOT_READY;
    xfer_dataset_desc_t d;
    int64_t v[PER_RANK];
    xfer_status_t st;
    int i;
    memset(&d, 0, sizeof(d));
    d.name = "v";
    d.type = XFER_TYPE_INT64;
    d.ndims = 1;
    d.dims[0] = (uint64_t) csize * PER_RANK;
    d.start[0] = (uint64_t) crank * PER_RANK;
    d.count[0] = PER_RANK;
    for (i = 0; i < PER_RANK; i++)
        v[i] = value(c, s, d.start[0] + (uint64_t) i);
    st = xfer_step_begin(ch, -1, &ss);
    if (st == XFER_SUCCESS && ss == XFER_STEP_END_OF_STREAM) {
        *how = "xfer_step_begin: XFER_STEP_END_OF_STREAM";
        return XFER_ERR_END_OF_STREAM;
    }
    *how = "xfer_put or xfer_step_end: XFER_ERR_END_OF_STREAM";
    if (st == XFER_SUCCESS)
        st = xfer_put(ch, &d, v);
    if (st == XFER_SUCCESS)
        st = xfer_step_end(ch);
    return st;
}

/* One step of channel @p c on a receiving rank: 1 and its step number in *@p step, or 0 at the
 * end of the stream; every element checked. */
static int recv_step(xfer_channel_t *ch, int c, uint64_t *step)
{
    xfer_step_status_t ss;
    xfer_dataset_desc_t d;
    int64_t *buf;
    size_t n, i;
    XCALL(xfer_step_begin(ch, -1, &ss));
    if (ss == XFER_STEP_END_OF_STREAM)
        return 0;
    XCALL(xfer_get_shape(ch, "v", &d));
    n = (size_t) d.count[0];
    buf = malloc((n ? n : 1) * sizeof(*buf));
    if (!buf)
        fail("%s: no memory for %lld elements", "v", (long long) n, 0);
    XCALL(xfer_get(ch, "v", buf, n * sizeof(*buf), &d));
    for (i = 0; i < n; i++)
        if (buf[i] != value(c, d.step, d.start[0] + i))
            fail("%s: step %lld: element %lld differs", c ? "c2" : "c1", (long long) d.step,
                 (long long) (d.start[0] + i));
    free(buf);
    *step = d.step;
    XCALL(xfer_step_end(ch));
    return 1;
}

int main(int argc, char **argv)
{
    int steps = 12, at = 4, closer_reader = 1, cont = 0, latest = 0, reader_waits = 0;
    int send_ms = 0, recv_ms = 0;
    int csize, provided, i, c;
    const char *names[NCH] = {"c1", "c2"};
    xfer_t *x = NULL;
    xfer_channel_t *ch[NCH];
    xfer_role_t role;
    MPI_Comm comp;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--at") && i + 1 < argc)
            at = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--closer") && i + 1 < argc)
            closer_reader = strcmp(argv[++i], "sender") != 0;
        else if (!strcmp(argv[i], "--loss") && i + 1 < argc)
            cont = strcmp(argv[++i], "continue") == 0;
        else if (!strcmp(argv[i], "--latest"))
            latest = 1;
        else if (!strcmp(argv[i], "--reader-waits"))
            reader_waits = 1;
        else if (!strcmp(argv[i], "--send-ms") && i + 1 < argc)
            send_ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--recv-ms") && i + 1 < argc)
            recv_ms = atoi(argv[++i]);
        else {
            fprintf(stderr, "close_prog: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    XCALL(xfer_init(NULL, NULL, MPI_COMM_WORLD, &x));
    XCALL(xfer_comm(x, &comp));
    MPI_Comm_rank(comp, &crank);
    MPI_Comm_size(comp, &csize);
    for (c = 0; c < NCH; c++)
        XCALL(xfer_channel_open(x, names[c], &ch[c]));
    XCALL(xfer_channel_role(ch[0], &role));
    if (role == XFER_ROLE_SEND) {
        xfer_channel_stats_t cs;
        int ended = -1; /* the step at which c1's stream ended (the reader closed it) */
        who = "a";
        for (i = 0; i < steps; i++) {
            if (!closer_reader && i == at) {
                if (reader_waits) { /* every rank of a ended its K steps: b may read */
                    MPI_Barrier(comp);
                    if (crank == 0)
                        MPI_Send(&at, 1, MPI_INT, csize, TAG_GO, MPI_COMM_WORLD);
                }
                XCALL(xfer_channel_stats(ch[0], &cs));
                printf("close_prog: a rank %d: c1 before the close: %" PRIu64
                       " steps ended, %" PRIu64 " sent, %" PRIu64 " dropped, %" PRIu64 " held\n",
                       crank, cs.steps, cs.steps_sent, cs.steps_dropped, cs.steps_held);
                if (reader_waits && (cs.steps_held != 1 || cs.steps_dropped == 0))
                    fail("%s: %lld held, %lld dropped before the close (b read nothing yet)", "c1",
                         (long long) cs.steps_held, (long long) cs.steps_dropped);
                close_and_check(x, &ch[0]);
            }
            for (c = 0; c < NCH; c++) {
                const char *how = "";
                xfer_status_t st;
                if (!ch[c] || (c == 0 && ended >= 0))
                    continue;
                st = send_step(ch[c], c, (uint64_t) i, csize, &how);
                if (st == XFER_ERR_END_OF_STREAM && c == 0 && closer_reader && !cont) {
                    ended = i;
                    printf("close_prog: a rank %d: c1 ended at step %d (%s) %s\n", crank, i, how,
                           xfer_last_error());
                    continue;
                }
                if (st != XFER_SUCCESS)
                    die(names[c], st);
            }
            nap_ms(send_ms);
        }
        if (ch[0]) {
            XCALL(xfer_channel_stats(ch[0], &cs));
            printf("close_prog: a rank %d: c1: %" PRIu64 " steps ended, %" PRIu64 " sent, %" PRIu64
                   " unsent\n",
                   crank, cs.steps, cs.steps_sent, cs.steps_unsent);
            if (!cont && ended < 0)
                fail("%s: the stream did not end within %lld steps (reader's close at %lld)", "c1",
                     steps, at);
            if (!cont && (ended < at || cs.steps != (uint64_t) ended || cs.steps_unsent))
                fail("%s: ended at step %lld, %lld steps ended", "c1", ended, (long long) cs.steps);
            if (cont && (cs.steps != (uint64_t) steps || cs.steps_unsent == 0 ||
                         cs.steps_sent + cs.steps_unsent != (uint64_t) steps ||
                         cs.steps_sent < (uint64_t) at))
                fail("%s: under continue %lld steps ended, %lld unsent", "c1", (long long) cs.steps,
                     (long long) cs.steps_unsent);
        }
        XCALL(xfer_channel_stats(ch[1], &cs));
        printf("close_prog: a rank %d: c2: %" PRIu64 " steps ended, %" PRIu64 " sent\n", crank,
               cs.steps, cs.steps_sent);
        if (cs.steps != (uint64_t) steps || (!latest && cs.steps_sent != (uint64_t) steps))
            fail("%s: %lld steps ended, %lld sent", "c2", (long long) cs.steps,
                 (long long) cs.steps_sent);
    } else {
        int got[NCH] = {0, 0}, open[NCH] = {1, 1};
        uint64_t last[NCH] = {0, 0};
        who = "b";
        if (reader_waits) {
            int go = 0;
            if (crank == 0)
                MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Bcast(&go, 1, MPI_INT, 0, comp);
        }
        for (i = 0; open[0] || open[1]; i++) {
            if (closer_reader && i == at && ch[0]) {
                close_and_check(x, &ch[0]);
                open[0] = 0;
            }
            for (c = 0; c < NCH; c++) {
                uint64_t s;
                if (!open[c])
                    continue;
                if (!recv_step(ch[c], c, &s)) {
                    open[c] = 0;
                    continue;
                }
                if ((got[c] > 0 && s <= last[c]) || (!latest && s != (uint64_t) got[c]))
                    fail("%s: step %lld after %lld", names[c], (long long) s, (long long) last[c]);
                last[c] = s;
                got[c]++;
            }
            nap_ms(recv_ms);
        }
        printf("close_prog: b rank %d: c1: %d steps, c2: %d steps\n", crank, got[0], got[1]);
        if ((!latest && got[1] != steps) || last[1] != (uint64_t) steps - 1)
            fail("%s: %lld steps, the last %lld", "c2", got[1], (long long) last[1]);
        if (closer_reader && got[0] != at)
            fail("%s: %lld steps before the close at %lld", "c1", got[0], at);
        if (!closer_reader &&
            (got[0] < 1 || last[0] != (uint64_t) at - 1 || (!latest && got[0] != at)))
            fail("%s: %lld steps, the last %lld (the sender closed after its step K - 1)", "c1",
                 got[0], (long long) last[0]);
    }
    fflush(stdout);
    XCALL(xfer_finalize(&x));
    printf("close_prog: %s rank %d: finalized\n", who, crank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
