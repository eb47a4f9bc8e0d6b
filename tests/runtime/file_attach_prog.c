/* SPDX-License-Identifier: BSD-3-Clause */
/* Readers that attach late or come back (docs/runtime.md), for runtime/file_attach_test.sh:
 * component a sends channel c, component b receives it.
 *
 *   file_attach_prog --steps S [--send-ms A] [--recv-ms B] [--leave-at K --leave kill|close]
 *               [--rank R] [--gate PATH --gate-step G] [--log PATH]
 *
 * a puts dataset v (int64, 8 per rank: step * 1000000 + global index) in each of its S steps,
 * napping A ms in each. At step G rank 0 says "at the gate" and waits until PATH exists (the test
 * creates it once a reader announced itself), then the side goes on together. A commit refused
 * with XFER_ERR_SPILL_FULL is said once (rank 0, with its words) and committed again every 10 ms
 * until it goes through (a reader attached). Any other error is said (every rank), the channel
 * finalized (the reader then sees the end of the stream) and a exits 1. At the end each rank
 * says its counters; rank 0 the longest of its step calls and when it ended (ms, wall clock).
 * b checks every byte of each step it gets and that the sender's step numbers rise; rank 0
 * appends each step it released to the log (one number a line) and says when xfer_init began and
 * when its first step arrived. After K steps rank R of b kills itself with SIGKILL (--leave
 * kill), or every rank closes the channel (xfer_channel_close), finalizes and exits 0. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xfer/xfer.h>

#include "../support/prog.h"

#define PER_RANK 8

#define XCALL(who, call) PROG_XCALL("attach_prog", who, call, _exit)

typedef struct opts {
    int steps, send_ms, recv_ms, leave_at, leave_kill, victim, gate_step;
    const char *gate, *log;
} opts_t;

static void send_steps(const opts_t *o, xfer_t **x, xfer_channel_t *ch, int crank, int csize,
                       MPI_Comm comp)
{
    int64_t v[PER_RANK], longest = -1, longest_end = 0;
    int s, i, longest_step = -1;
    xfer_channel_stats_t cs;

    for (s = 0; s < o->steps; s++) {
        xfer_step_status_t ss;
        xfer_dataset_desc_t d;
        xfer_status_t st;
        int64_t t0;
        int said = 0;
        if (o->gate && s == o->gate_step) {
            if (crank == 0) {
                printf("attach_prog: a rank 0: at the gate, step %d\n", s);
                fflush(stdout);
                while (access(o->gate, F_OK) != 0)
                    nap_ms(2); /* (the test's signal: a reader announced itself) */
            }
            MPI_Barrier(comp);
        }
        memset(&d, 0, sizeof(d));
        d.name = "v";
        d.type = XFER_TYPE_INT64;
        d.ndims = 1;
        d.dims[0] = (uint64_t) csize * PER_RANK;
        d.start[0] = (uint64_t) crank * PER_RANK;
        d.count[0] = PER_RANK;
        for (i = 0; i < PER_RANK; i++)
            v[i] = (int64_t) s * 1000000 + crank * PER_RANK + i;
        t0 = wall_ms();
        st = xfer_step_begin(ch, -1, &ss);
        if (st == XFER_SUCCESS)
            st = xfer_put(ch, &d, v);
        if (st == XFER_SUCCESS)
            st = xfer_step_end(ch);
        while (st == XFER_ERR_SPILL_FULL) { /* nothing lost: commit it again */
            if (crank == 0 && !said++) {
                printf("attach_prog: a rank 0: step %d: XFER_ERR_SPILL_FULL: %s\n", s,
                       xfer_last_error());
                fflush(stdout);
            }
            nap_ms(10);
            st = xfer_step_end(ch);
        }
        if (st != XFER_SUCCESS) {
            fprintf(stderr, "attach_prog: a rank %d: step %d: %s: %s\n", crank, s,
                    xfer_status_name(st), xfer_last_error());
            fflush(stderr);
            xfer_finalize(x);
            _exit(1);
        }
        if (!said && wall_ms() - t0 > longest) {
            longest = wall_ms() - t0;
            longest_end = wall_ms();
            longest_step = s;
        }
        nap_ms(o->send_ms);
    }
    XCALL("a", xfer_channel_stats(ch, &cs));
    printf("attach_prog: a rank %d: %" PRIu64 " steps ended, %" PRIu64 " sent, %" PRIu64
           " unsent\n",
           crank, cs.steps, cs.steps_sent, cs.steps_unsent);
    if (crank == 0)
        printf("attach_prog: a rank 0: longest step call %" PRId64
               " ms (step %d), ended at %" PRId64 " ms\n",
               longest, longest_step, longest_end);
    fflush(stdout);
    XCALL("a", xfer_finalize(x));
    printf("attach_prog: a rank %d: finalized\n", crank);
    fflush(stdout);
}

static void recv_steps(const opts_t *o, xfer_t **x, xfer_channel_t *ch, int crank, int64_t t_init)
{
    int64_t *all = NULL, last = -1, first = -1;
    int n = 0, i;
    for (;;) {
        xfer_step_status_t ss;
        xfer_dataset_desc_t d;
        size_t len;
        if (n == o->leave_at && o->leave_kill && crank == o->victim) {
            printf("attach_prog: b rank %d: SIGKILL after %d steps at %" PRId64 " ms\n", crank, n,
                   wall_ms());
            fflush(stdout);
            kill(getpid(), SIGKILL);
        }
        if (n == o->leave_at && !o->leave_kill) {
            XCALL("b", xfer_channel_close(&ch));
            XCALL("b", xfer_finalize(x));
            printf("attach_prog: b rank %d: closed the channel after %d steps\n", crank, n);
            fflush(stdout);
            free(all);
            MPI_Finalize();
            exit(0);
        }
        XCALL("b", xfer_step_begin(ch, -1, &ss));
        if (ss == XFER_STEP_END_OF_STREAM)
            break;
        XCALL("b", xfer_get_shape(ch, "v", &d));
        len = (size_t) d.count[0];
        all = realloc(all, len * sizeof(*all));
        XCALL("b", xfer_get(ch, "v", all, len * sizeof(*all), &d));
        for (i = 0; i < (int) len; i++)
            if (all[i] != (int64_t) d.step * 1000000 + (int64_t) (d.start[0] + (uint64_t) i)) {
                fprintf(stderr,
                        "attach_prog: b rank %d: step %" PRIu64 ": element %d is %" PRId64
                        " (differs)\n",
                        crank, d.step, i, all[i]);
                _exit(1);
            }
        if ((int64_t) d.step <= last) {
            fprintf(stderr, "attach_prog: b rank %d: step %" PRIu64 " after step %" PRId64 "\n",
                    crank, d.step, last);
            _exit(1);
        }
        if (first < 0) {
            first = (int64_t) d.step;
            if (crank == 0)
                printf("attach_prog: b rank 0: init at %" PRId64 " ms, first step %" PRId64
                       " at %" PRId64 " ms\n",
                       t_init, first, wall_ms());
        }
        last = (int64_t) d.step;
        XCALL("b", xfer_step_end(ch));
        if (crank == 0 && o->log) {
            FILE *fp = fopen(o->log, "a");
            if (!fp || fprintf(fp, "%" PRId64 "\n", last) < 0 || fclose(fp) != 0) {
                fprintf(stderr, "attach_prog: cannot append to %s\n", o->log);
                _exit(1);
            }
        }
        n++;
        nap_ms(o->recv_ms);
    }
    printf("attach_prog: b rank %d: %d steps received, first %" PRId64 ", last %" PRId64 "\n",
           crank, n, first, last);
    fflush(stdout);
    free(all);
    XCALL("b", xfer_finalize(x));
}

int main(int argc, char **argv)
{
    opts_t o = {20, 0, 0, -1, 1, 0, -1, NULL, NULL};
    int provided, crank, csize, i;
    xfer_t *x = NULL;
    xfer_channel_t *ch = NULL;
    xfer_role_t role;
    MPI_Comm comp;
    int64_t t_init;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            o.steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--send-ms") && i + 1 < argc)
            o.send_ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--recv-ms") && i + 1 < argc)
            o.recv_ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--leave-at") && i + 1 < argc)
            o.leave_at = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--leave") && i + 1 < argc)
            o.leave_kill = strcmp(argv[++i], "close") != 0;
        else if (!strcmp(argv[i], "--rank") && i + 1 < argc)
            o.victim = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--gate") && i + 1 < argc)
            o.gate = argv[++i];
        else if (!strcmp(argv[i], "--gate-step") && i + 1 < argc)
            o.gate_step = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--log") && i + 1 < argc)
            o.log = argv[++i];
        else {
            fprintf(stderr, "attach_prog: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    t_init = wall_ms();
    XCALL("init", xfer_init(NULL, NULL, MPI_COMM_WORLD, &x));
    XCALL("init", xfer_comm(x, &comp));
    MPI_Comm_rank(comp, &crank);
    MPI_Comm_size(comp, &csize);
    XCALL("init", xfer_channel_open(x, "c", &ch));
    XCALL("init", xfer_channel_role(ch, &role));
    if (role == XFER_ROLE_SEND)
        send_steps(&o, &x, ch, crank, csize, comp);
    else
        recv_steps(&o, &x, ch, crank, t_init);
    MPI_Finalize();
    return 0;
}
