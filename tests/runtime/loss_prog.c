/* SPDX-License-Identifier: BSD-3-Clause */
/* A reader that dies or leaves mid-stream (docs/runtime.md, "Readers that fail or leave"), for
 * runtime/loss_test.sh under xfer-run: component a sends channel c, component b receives it.
 *
 *   loss_prog --steps S [--send-ms A] [--recv-ms B] [--at K | --seed N] [--rank R]
 *             [--leave kill|finalize|stop]
 *
 * a puts dataset v (int64, 8 per rank: step * 1000000 + global index) in each of its S steps,
 * napping A ms in each, and counts its steps; at the end each rank prints
 * "loss_prog: a rank R: S steps ended, SENT sent, UNSENT unsent" and, on rank 0, the wall-clock
 * time (ms) at which its first step went unsent ("unsent from step K at T ms"). b checks every
 * byte of each step it gets, napping B ms; at step K (given, or drawn from seed N in [1, S/2],
 * printed) rank R of b kills itself with SIGKILL (--leave kill, the default; the time printed
 * first) or every rank of b leaves cleanly: xfer_finalize, exit 0 (--leave finalize), or rank R
 * stops itself with SIGSTOP (--leave stop: a reader that stalls, its heartbeats too, until the
 * test sends SIGCONT or SIGKILL; the time printed first).
 * A reader's close reaches a under on_reader_loss: fail as the end of its stream (a status
 * END_OF_STREAM, or XFER_ERR_END_OF_STREAM): a says "the reader closed the channel at step K"
 * and stops its loop. Any other error of a's is printed with its status and words; a then exits
 * 1. */
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

/* a's errors end it with exit 1 (its words on stderr); b's abort */
#define XCALL(who, call) PROG_XCALL("loss_prog", who, call, _exit)

int main(int argc, char **argv)
{
    int steps = 20, send_ms = 0, recv_ms = 0, at = -1, victim = 0, leave_kill = 1, leave_stop = 0,
        provided;
    int crank, csize, i, s;
    long seed = -1;
    xfer_t *x = NULL;
    xfer_channel_t *ch = NULL;
    xfer_role_t role;
    MPI_Comm comp;
    int64_t v[PER_RANK], *all = NULL;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--send-ms") && i + 1 < argc)
            send_ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--recv-ms") && i + 1 < argc)
            recv_ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--at") && i + 1 < argc)
            at = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = atol(argv[++i]);
        else if (!strcmp(argv[i], "--rank") && i + 1 < argc)
            victim = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--leave") && i + 1 < argc) {
            leave_kill = strcmp(argv[++i], "finalize") != 0;
            leave_stop = strcmp(argv[i], "stop") == 0;
        } else {
            fprintf(stderr, "loss_prog: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (at < 0 && seed >= 0) {
        srand((unsigned) seed);
        at = 1 + rand() % (steps / 2 > 1 ? steps / 2 : 1);
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    XCALL("init", xfer_init(NULL, NULL, MPI_COMM_WORLD, &x));
    XCALL("init", xfer_comm(x, &comp));
    MPI_Comm_rank(comp, &crank);
    MPI_Comm_size(comp, &csize);
    XCALL("init", xfer_channel_open(x, "c", &ch));
    XCALL("init", xfer_channel_role(ch, &role));
    if (role == XFER_ROLE_SEND) {
        xfer_channel_stats_t cs;
        int64_t unsent_at = -1;
        int unsent_step = -1;
        for (s = 0; s < steps; s++) {
            xfer_step_status_t ss;
            xfer_dataset_desc_t d;
            memset(&d, 0, sizeof(d));
            d.name = "v";
            d.type = XFER_TYPE_INT64;
            d.ndims = 1;
            d.dims[0] = (uint64_t) csize * PER_RANK;
            d.start[0] = (uint64_t) crank * PER_RANK;
            d.count[0] = PER_RANK;
            for (i = 0; i < PER_RANK; i++)
                v[i] = (int64_t) s * 1000000 + crank * PER_RANK + i;
            xfer_status_t st = xfer_step_begin(ch, -1, &ss);
            if (st == XFER_SUCCESS && ss == XFER_STEP_END_OF_STREAM)
                st = XFER_ERR_END_OF_STREAM;
            if (st == XFER_SUCCESS)
                st = xfer_put(ch, &d, v);
            if (st == XFER_SUCCESS)
                st = xfer_step_end(ch);
            if (st == XFER_ERR_END_OF_STREAM) {
                printf("loss_prog: a rank %d: the reader closed the channel at step %d\n", crank,
                       s);
                break;
            }
            XCALL("a", st);
            XCALL("a", xfer_channel_stats(ch, &cs));
            if (cs.steps_unsent > 0 && unsent_at < 0) {
                unsent_at = wall_ms();
                unsent_step = s;
            }
            nap_ms(send_ms);
        }
        XCALL("a", xfer_channel_stats(ch, &cs));
        printf("loss_prog: a rank %d: %" PRIu64 " steps ended, %" PRIu64 " sent, %" PRIu64
               " unsent\n",
               crank, cs.steps, cs.steps_sent, cs.steps_unsent);
        if (crank == 0 && unsent_at >= 0)
            printf("loss_prog: a rank 0: unsent from step %d at %" PRId64 " ms\n", unsent_step,
                   unsent_at);
        fflush(stdout);
        XCALL("a", xfer_finalize(&x));
        printf("loss_prog: a rank %d: finalized\n", crank);
        fflush(stdout);
    } else {
        if (crank == 0 && at >= 0)
            printf("loss_prog: seed %ld: b leaves at step %d (%s, rank %d)\n", seed, at,
                   leave_stop   ? "SIGSTOP"
                   : leave_kill ? "SIGKILL"
                                : "xfer_finalize",
                   victim);
        fflush(stdout);
        for (s = 0;; s++) {
            xfer_step_status_t ss;
            xfer_dataset_desc_t d;
            size_t n;
            if (s == at && leave_kill && crank == victim) {
                printf("loss_prog: b rank %d: %s at step %d at %" PRId64 " ms\n", crank,
                       leave_stop ? "SIGSTOP" : "SIGKILL", s, wall_ms());
                fflush(stdout);
                kill(getpid(), leave_stop ? SIGSTOP : SIGKILL);
            }
            if (s == at && !leave_kill) {
                XCALL("b", xfer_finalize(&x));
                printf("loss_prog: b rank %d: left at step %d\n", crank, s);
                fflush(stdout);
                free(all);
                MPI_Finalize();
                return 0;
            }
            XCALL("b", xfer_step_begin(ch, -1, &ss));
            if (ss == XFER_STEP_END_OF_STREAM)
                break;
            XCALL("b", xfer_get_shape(ch, "v", &d));
            n = (size_t) d.count[0];
            all = realloc(all, n * sizeof(*all));
            XCALL("b", xfer_get(ch, "v", all, n * sizeof(*all), &d));
            for (i = 0; i < (int) n; i++)
                if (all[i] != (int64_t) d.step * 1000000 + (int64_t) (d.start[0] + (uint64_t) i)) {
                    fprintf(stderr, "loss_prog: b rank %d: step %d: element %d is %" PRId64 "\n",
                            crank, s, i, all[i]);
                    _exit(1);
                }
            XCALL("b", xfer_step_end(ch));
            nap_ms(recv_ms);
        }
        printf("loss_prog: b rank %d: %d steps received\n", crank, s);
        fflush(stdout);
        XCALL("b", xfer_finalize(&x));
    }
    free(all);
    MPI_Finalize();
    return 0;
}
