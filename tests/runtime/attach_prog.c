/* SPDX-License-Identifier: BSD-3-Clause */
/* Readers that attach late or come back on the stream (docs/runtime.md), for
 * runtime/attach_test.sh: component a sends channel c, component b receives it.
 *
 *   attach_prog --steps S [--send-ms A] [--kill-at K] [--kill-file F] [--retry-full 1]
 *               [--joined 1] [--recv-ms B]
 *
 * a puts dataset v (int64, 8 per rank: step * 1000000 + global index) in each of its S steps,
 * napping A ms in each; rank 0 prints "attach_prog: a: step N ended" after each step and, at
 * the end, every rank "attach_prog: a rank R: S steps ended, SENT sent, UNSENT unsent" and
 * "attach_prog: a rank R: DROPPED dropped, HELD held" (policy latest: xfer_finalize sends the
 * held one; and fails unless the counters say S steps, each sent, dropped, held or unsent). b,
 * napping B ms in each step it got, checks every byte of each step it gets against the step number
 * xfer_get reports (the sender's), and that the numbers increase strictly; rank 0 prints
 * "attach_prog: b: got step N" for each, and at the end of the stream "attach_prog: b: N steps,
 * first F, last L, steps_received R". With
 * --kill-at K, rank 1 of b kills itself with SIGKILL when it got its K-th step (counted from 1);
 * --kill-file F: K read from file F when it exists (a command line that stays the same: xfer-run
 * --attach starts the workflow file's).
 * For bench/attach-bench.sh, wall-clock times (ms): rank 0's entry into xfer_init, b's first
 * step, the SIGKILL, and a's first step not sent.
 * With --joined 1 a also puts joined dataset j (int64, dims [joined]): rank r's rows of step N
 * are (N + r) % 4, row i holds N * 1000000 + r * 1000 + i; and sets attribute "n" (uint64) to N;
 * b checks both every step (the rows, every value, the attribute).
 * With --retry-full 1 (on_reader_loss: spill), a step end that XFER_ERR_SPILL_FULL refuses is
 * said once on each rank of a ("attach_prog: a rank R: step N: XFER_ERR_SPILL_FULL: words") and
 * ended again every 10 ms until it goes (a reader attached); one that XFER_ERR_IO refuses (the
 * spill's disk is full) is said ("... step N: XFER_ERR_IO: words") and a stops there, cleanly.
 * Any error: its status and words, exit 1. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xfer/xfer.h>

#include "../support/prog.h"

#define PER_RANK 8

#define XCALL(who, call) PROG_XCALL("attach_prog", who, call, exit)

/* xfer_step_end, again every 10 ms while spill's bound refuses it (with @p retry); 1 when the
 * spill's disk refused it (with @p retry: said, and the sender stops). */
static int end_step(xfer_channel_t *ch, int rank, int s, int retry)
{
    xfer_status_t st;
    int said = 0;
    while ((st = xfer_step_end(ch)) == XFER_ERR_SPILL_FULL && retry) {
        if (!said) {
            printf("attach_prog: a rank %d: step %d: XFER_ERR_SPILL_FULL: %s\n", rank, s,
                   xfer_last_error());
            fflush(stdout);
        }
        said = 1;
        nap_ms(10);
    }
    if (st == XFER_ERR_IO && retry) {
        printf("attach_prog: a rank %d: step %d: XFER_ERR_IO: %s\n", rank, s, xfer_last_error());
        fflush(stdout);
        return 1;
    }
    if (st != XFER_SUCCESS) {
        fprintf(stderr, "attach_prog: a: xfer_step_end: %s: %s\n", xfer_status_name(st),
                xfer_last_error());
        exit(1);
    }
    if (said) {
        printf("attach_prog: a rank %d: step %d ended after XFER_ERR_SPILL_FULL\n", rank, s);
        fflush(stdout);
    }
    return 0;
}

#define JROWS(step, r) ((uint64_t) (((step) + (r)) % 4))

/* a's joined rows of step @p s and its attribute (--joined) */
static void put_joined(xfer_channel_t *ch, int rank, int s)
{
    int64_t rows[4];
    uint64_t n = (uint64_t) s, i;
    xfer_dataset_desc_t d;
    memset(&d, 0, sizeof(d));
    d.name = "j";
    d.type = XFER_TYPE_INT64;
    d.ndims = 1;
    d.count[0] = JROWS(s, rank);
    for (i = 0; i < d.count[0]; i++)
        rows[i] = (int64_t) s * 1000000 + rank * 1000 + (int64_t) i;
    XCALL("a", xfer_put(ch, &d, rows));
    XCALL("a", xfer_put_attr(ch, "n", XFER_TYPE_UINT64, 1, &n));
}

/* b's check of step @p step's joined rows and attribute (--joined) */
static void check_joined(xfer_channel_t *ch, int rank, int nsend, uint64_t step)
{
    int64_t all[4 * 64];
    uint64_t rows[64], n = 0, total = 0;
    xfer_dataset_desc_t d;
    xfer_type_t t;
    size_t cnt = 0;
    int ns = 0, r, at = 0;
    uint64_t i;
    XCALL("b", xfer_get_rows(ch, "j", rows, nsend, &ns));
    for (r = 0; r < ns; r++) {
        if (rows[r] != JROWS(step, r)) {
            fprintf(stderr,
                    "attach_prog: b rank %d: step %" PRIu64 ": j: rank %d put %" PRIu64
                    " rows, expected %" PRIu64 "\n",
                    rank, step, r, rows[r], JROWS(step, r));
            exit(1);
        }
        total += rows[r];
    }
    XCALL("b", xfer_get(ch, "j", all, sizeof(all), &d));
    for (r = 0; r < ns; r++)
        for (i = 0; i < rows[r]; i++, at++)
            if (all[at] != (int64_t) step * 1000000 + r * 1000 + (int64_t) i) {
                fprintf(stderr, "attach_prog: b rank %d: step %" PRIu64 ": j[%d] = %" PRId64 "\n",
                        rank, step, at, all[at]);
                exit(1);
            }
    XCALL("b", xfer_get_attr(ch, "n", &t, &cnt, &n, sizeof(n)));
    if (d.dims[0] != total || n != step || cnt != 1) {
        fprintf(stderr,
                "attach_prog: b rank %d: step %" PRIu64 ": j has %" PRIu64
                " rows (expected %" PRIu64 "), attribute n %" PRIu64 "\n",
                rank, step, d.dims[0], total, n);
        exit(1);
    }
}

static int send_steps(xfer_t *x, int rank, int size, int steps, int send_ms, int retry, int joined)
{
    xfer_channel_t *ch;
    xfer_channel_stats_t cs;
    int64_t v[PER_RANK];
    uint64_t unsent = 0;
    int s, i;
    XCALL("a", xfer_channel_open(x, "c", &ch));
    for (s = 0; s < steps; s++) {
        xfer_dataset_desc_t d;
        memset(&d, 0, sizeof(d));
        d.name = "v";
        d.type = XFER_TYPE_INT64;
        d.ndims = 1;
        d.dims[0] = (uint64_t) size * PER_RANK;
        d.start[0] = (uint64_t) rank * PER_RANK;
        d.count[0] = PER_RANK;
        for (i = 0; i < PER_RANK; i++)
            v[i] = (int64_t) s * 1000000 + (int64_t) d.start[0] + i;
        nap_ms(send_ms);
        XCALL("a", xfer_put(ch, &d, v));
        if (joined)
            put_joined(ch, rank, s);
        if (end_step(ch, rank, s, retry))
            break; /* (the spill's disk is full: the sender stops, cleanly) */
        if (rank == 0) {
            XCALL("a", xfer_channel_stats(ch, &cs));
            if (cs.steps_unsent > unsent && unsent == 0) /* (the bench's time of going on) */
                printf("attach_prog: a: unsent from step %d at %" PRId64 " ms\n", s, wall_ms());
            unsent = cs.steps_unsent;
            printf("attach_prog: a: step %d ended\n", s);
            fflush(stdout);
        }
    }
    XCALL("a", xfer_channel_stats(ch, &cs));
    printf("attach_prog: a rank %d: %" PRIu64 " steps ended, %" PRIu64 " sent, %" PRIu64
           " unsent\n",
           rank, cs.steps, cs.steps_sent, cs.steps_unsent);
    printf("attach_prog: a rank %d: %" PRIu64 " dropped, %" PRIu64 " held\n", rank,
           cs.steps_dropped, cs.steps_held);
    fflush(stdout);
    (void) size;
    if (cs.steps != (uint64_t) s ||
        cs.steps_sent + cs.steps_dropped + cs.steps_held + cs.steps_unsent != cs.steps) {
        fprintf(stderr,
                "attach_prog: a rank %d: FAIL: %d steps ended, the counters say %" PRIu64
                " steps, %" PRIu64 " sent + %" PRIu64 " dropped + %" PRIu64 " held + %" PRIu64
                " unsent\n",
                rank, s, cs.steps, cs.steps_sent, cs.steps_dropped, cs.steps_held, cs.steps_unsent);
        return 1;
    }
    return 0;
}

static int recv_steps(xfer_t *x, int rank, int nsend, int kill_at, int joined, int recv_ms)
{
    xfer_channel_t *ch;
    xfer_channel_stats_t cs;
    const int n = nsend * PER_RANK;
    int64_t *all = calloc((size_t) n, sizeof(int64_t)), first = -1, last = -1;
    int got = 0, i;
    XCALL("b", xfer_channel_open(x, "c", &ch));
    for (;;) {
        xfer_step_status_t ss;
        xfer_dataset_desc_t d;
        XCALL("b", xfer_step_begin(ch, -1, &ss));
        if (ss == XFER_STEP_END_OF_STREAM)
            break;
        XCALL("b", xfer_get(ch, "v", all, (size_t) n * sizeof(int64_t), &d));
        for (i = 0; i < n; i++)
            if (all[i] != (int64_t) d.step * 1000000 + i) {
                fprintf(stderr,
                        "attach_prog: b rank %d: step %" PRIu64 ": v[%d] = %" PRId64
                        ", expected %" PRId64 "\n",
                        rank, d.step, i, all[i], (int64_t) d.step * 1000000 + i);
                exit(1);
            }
        if (joined)
            check_joined(ch, rank, nsend, d.step);
        if ((int64_t) d.step <= last) {
            fprintf(stderr, "attach_prog: b rank %d: step %" PRIu64 " after step %" PRId64 "\n",
                    rank, d.step, last);
            exit(1);
        }
        if (first < 0)
            first = (int64_t) d.step;
        last = (int64_t) d.step;
        got++;
        if (rank == 0 && got == 1)
            printf("attach_prog: b: first step at %" PRId64 " ms\n", wall_ms());
        if (rank == 0) {
            printf("attach_prog: b: got step %" PRIu64 "\n", d.step);
            fflush(stdout);
        }
        nap_ms(recv_ms);
        XCALL("b", xfer_step_end(ch));
        if (kill_at > 0 && got == kill_at && rank == 1) {
            printf("attach_prog: b rank 1: SIGKILL after step %" PRIu64 " at %" PRId64 " ms\n",
                   d.step, wall_ms());
            fflush(stdout);
            raise(SIGKILL);
        }
    }
    XCALL("b", xfer_channel_stats(ch, &cs));
    printf("attach_prog: b rank %d: %d steps, first %" PRId64 ", last %" PRId64
           ", steps_received %" PRIu64 "\n",
           rank, got, first, last, cs.steps_received);
    fflush(stdout);
    free(all);
    return 0;
}

int main(int argc, char **argv)
{
    int steps = 40, send_ms = 20, recv_ms = 0, kill_at = 0, retry = 0, joined = 0, rank, size, i,
        rc;
    const char *comp = getenv("XFER_COMPONENT");
    xfer_t *x = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps"))
            steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--send-ms"))
            send_ms = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--recv-ms"))
            recv_ms = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--joined"))
            joined = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--retry-full"))
            retry = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--kill-at"))
            kill_at = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--kill-file")) {
            FILE *f = fopen(argv[i + 1], "r");
            if (f && fscanf(f, "%d", &kill_at) != 1)
                kill_at = 0;
            if (f)
                fclose(f);
        }
    }
    if (rank == 0) /* (before the announcement, which xfer_init makes) */
        printf("attach_prog: %s: init at %" PRId64 " ms\n", comp ? comp : "?", wall_ms());
    XCALL(comp ? comp : "?", xfer_init(NULL, NULL, MPI_COMM_WORLD, &x));
    if (comp && !strcmp(comp, "a"))
        rc = send_steps(x, rank, size, steps, send_ms, retry, joined);
    else
        rc = recv_steps(x, rank, 2, kill_at, joined, recv_ms);
    XCALL(comp ? comp : "?", xfer_finalize(&x));
    printf("attach_prog: %s rank %d: finalized\n", comp ? comp : "?", rank);
    fflush(stdout);
    MPI_Finalize();
    return rc;
}
