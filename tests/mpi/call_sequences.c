/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sequences of intercommunicator MPI_Allgather / MPI_Allgatherv calls whose shapes change from
 * call to call, as an ordinary MPI program (linked against MPI only) runs them; meant to be run
 * under LD_PRELOAD=libxfer_pmpi.so with XFER_ALGORITHM=hier (or hier:direct) and virtual nodes.
 * Every result is checked against the data the other group is known to send.
 *
 *   --issue N         the sequence that hung node staging at random (issue 18), N times over:
 *                     a call in which neither group moves anything, then twice a call in which
 *                     group 1 sends one MPI_SIGNED_CHAR per rank and group 0 only receives;
 *   --random SEED N   N calls, each of a kind drawn from {nothing moves, A->B, B->A, both ways}
 *                     and MPI_Allgather or MPI_Allgatherv with counts drawn per rank (zeros
 *                     included); the draws depend only on SEED and the call number, so every
 *                     rank makes the same call.
 *
 * With XFER_TIMEOUT_MS set, a call that would hang returns an error instead; the program then
 * fails (MPI_ERRORS_ARE_FATAL on the intercommunicator).
 *
 * Usage: mpiexec -n P+Q call_sequences [--p P] (--issue N | --random SEED N)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int world_rank, errors;

#define CHECK_MPI(call)                                                                            \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            fprintf(stderr, "[world rank %d] %s failed (%d)\n", world_rank, #call, rc_);           \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                          \
        }                                                                                          \
    } while (0)

/* splitmix64: the same stream on every rank for the same seed */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static unsigned draw(uint64_t seed, long call, int what, unsigned n)
{
    return (unsigned) (mix(seed * 1000003ULL + (uint64_t) call * 97ULL + (uint64_t) what) % n);
}

static signed char value(int group, int rank, int i, long call)
{
    return (signed char) (group * 53 + rank * 7 + i * 3 + call * 11);
}

/* Element counts of rank r of group g in call @p call (0 when the group does not send). */
static int count_of(uint64_t seed, long call, int kind, int g, int r)
{
    const int sends = kind == 3 || (kind == 1 && g == 0) || (kind == 2 && g == 1);
    if (!sends)
        return 0;
    if (draw(seed, call, 1, 2) == 0) /* MPI_Allgather: one count per group */
        return 1 + (int) draw(seed, call, 10 + g, 9);
    return (int) draw(seed, call, 100 + 17 * g + r, 6) * (int) draw(seed, call, 50, 200);
}

/* One call: kind 0 nothing moves, 1 A->B, 2 B->A, 3 both ways. */
static void one_call(MPI_Comm inter, int group, int rank, int nremote, uint64_t seed, long call,
                     int kind, int allgatherv, int fixed_count)
{
    const int o = 1 - group;
    int scount, *rcounts = malloc((size_t) nremote * sizeof(int));
    int *displs = malloc((size_t) nremote * sizeof(int)), total = 0, i, j;
    signed char *sbuf, *rbuf;

    if (fixed_count >= 0) /* the issue's sequence */
        scount =
            (kind == 3 || (kind == 2 && group == 1) || (kind == 1 && group == 0)) ? fixed_count : 0;
    else
        scount = count_of(seed, call, kind, group, rank);
    for (i = 0; i < nremote; i++) {
        rcounts[i] =
            fixed_count >= 0
                ? ((kind == 3 || (kind == 2 && o == 1) || (kind == 1 && o == 0)) ? fixed_count : 0)
                : count_of(seed, call, kind, o, i);
        displs[i] = total + (allgatherv ? i % 3 : 0); /* gaps between blocks for allgatherv */
        total = displs[i] + rcounts[i];
    }
    sbuf = malloc((size_t) scount + 1);
    rbuf = malloc((size_t) total + 1);
    for (j = 0; j < scount; j++)
        sbuf[j] = value(group, rank, j, call);
    memset(rbuf, 0x7f, (size_t) total + 1);
    if (allgatherv) {
        CHECK_MPI(MPI_Allgatherv(sbuf, scount, MPI_SIGNED_CHAR, rbuf, rcounts, displs,
                                 MPI_SIGNED_CHAR, inter));
    } else {
        CHECK_MPI(MPI_Allgather(sbuf, scount, MPI_SIGNED_CHAR, rbuf, nremote ? rcounts[0] : 0,
                                MPI_SIGNED_CHAR, inter));
        for (i = 0; i < nremote; i++)
            displs[i] = i * rcounts[0];
    }
    for (i = 0; i < nremote; i++)
        for (j = 0; j < rcounts[i]; j++)
            if (rbuf[displs[i] + j] != value(o, i, j, call) && errors++ < 10)
                fprintf(stderr,
                        "[world rank %d] call %ld (kind %d, %s): element %d of remote rank %d is "
                        "%d, expected %d\n",
                        world_rank, call, kind, allgatherv ? "allgatherv" : "allgather", j, i,
                        rbuf[displs[i] + j], value(o, i, j, call));
    free(sbuf);
    free(rbuf);
    free(rcounts);
    free(displs);
}

int main(int argc, char **argv)
{
    int wsize, p = -1, group, rank, nremote, a, issue = 0, failed;
    long ncalls = 0, call = 0, c;
    uint64_t seed = 0;
    MPI_Comm local, inter;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--p") == 0 && a + 1 < argc) {
            p = atoi(argv[++a]);
        } else if (strcmp(argv[a], "--issue") == 0 && a + 1 < argc) {
            issue = 1;
            ncalls = atol(argv[++a]);
        } else if (strcmp(argv[a], "--random") == 0 && a + 2 < argc) {
            seed = strtoull(argv[++a], NULL, 10);
            ncalls = atol(argv[++a]);
        } else {
            if (world_rank == 0)
                fprintf(stderr, "usage: call_sequences [--p P] (--issue N | --random SEED N)\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (p < 0)
        p = wsize / 2;
    if (p < 1 || p >= wsize || ncalls <= 0) {
        if (world_rank == 0)
            fprintf(stderr, "call_sequences: need 1 <= p < %d and a positive count\n", wsize);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    group = world_rank < p ? 0 : 1;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, group, world_rank, &local));
    CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, group ? 0 : p, 7, &inter));
    CHECK_MPI(MPI_Comm_rank(local, &rank));
    CHECK_MPI(MPI_Comm_remote_size(inter, &nremote));

    for (c = 0; c < ncalls; c++) {
        if (issue) { /* zero, then twice group 1 -> group 0 with one element per rank */
            one_call(inter, group, rank, nremote, 0, call++, 0, 0, 0);
            one_call(inter, group, rank, nremote, 0, call++, 2, 0, 1);
            one_call(inter, group, rank, nremote, 0, call++, 2, 0, 1);
        } else {
            one_call(inter, group, rank, nremote, seed, call, (int) draw(seed, call, 0, 4),
                     (int) draw(seed, call, 1, 2), -1);
            call++;
        }
    }
    CHECK_MPI(MPI_Allreduce(&errors, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (world_rank == 0)
        printf("call_sequences: %ld calls, %s\n", call, failed ? "FAILED" : "all results correct");
    CHECK_MPI(MPI_Comm_free(&inter));
    CHECK_MPI(MPI_Comm_free(&local));
    MPI_Finalize();
    return failed ? 1 : 0;
}
