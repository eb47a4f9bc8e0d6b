/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the MPI tests: intercommunicator construction, data patterns, checks
 * whose failures name the rank, and a collective verdict for the exit code. */
#ifndef XFER_TEST_MPITEST_H
#define XFER_TEST_MPITEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mt_failures;
static long mt_checks;
static int mt_world_rank;

#define MT_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        mt_checks++;                                                                               \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "[world rank %d] %s:%d: check failed: %s: ", mt_world_rank, __FILE__,  \
                    __LINE__, #cond);                                                              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            if (++mt_failures > 10)                                                                \
                MPI_Abort(MPI_COMM_WORLD, 1);                                                      \
        }                                                                                          \
    } while (0)

#define MT_MPI(call)                                                                               \
    do {                                                                                           \
        int mt_rc_ = (call);                                                                       \
        if (mt_rc_ != MPI_SUCCESS) {                                                               \
            fprintf(stderr, "[world rank %d] %s:%d: %s failed (%d)\n", mt_world_rank, __FILE__,    \
                    __LINE__, #call, mt_rc_);                                                      \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                          \
        }                                                                                          \
    } while (0)

/* A libxfer call succeeded, or failed with status @p want and words holding @p words (the test
 * includes xfer.h). */
#define MT_XFER_OK(call)                                                                           \
    do {                                                                                           \
        xfer_status_t mt_st_ = (call);                                                             \
        MT_CHECK(mt_st_ == XFER_SUCCESS, "%s: %s: %s", #call, xfer_status_name(mt_st_),            \
                 xfer_last_error());                                                               \
    } while (0)
#define MT_XFER_ERR(call, want, words)                                                             \
    do {                                                                                           \
        xfer_status_t mt_st_ = (call);                                                             \
        MT_CHECK(mt_st_ == (want) && strstr(xfer_last_error(), (words)) != NULL,                   \
                 "%s: %s: \"%s\", expected %s with \"%s\"", #call, xfer_status_name(mt_st_),       \
                 xfer_last_error(), xfer_status_name(want), (words));                              \
    } while (0)

typedef struct mt_inter {
    MPI_Comm local, inter;
    int group; /* 0: group A, 1: group B */
    int rank;  /* in the local group */
    int nlocal, nremote;
} mt_inter_t;

/* Split MPI_COMM_WORLD into group A (p ranks) and group B (the rest). layout "block": world
 * ranks 0..p-1 form A; "interleaved": world ranks alternate A, B, A, B ... until one group is
 * full, so group order differs from world order. */
static inline void mt_make_inter(int p, const char *layout, mt_inter_t *ic)
{
    int wsize, wrank, i, na = 0, nb = 0, remote_leader = -1, *in_a;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    mt_world_rank = wrank;
    if (p < 1 || p >= wsize) {
        if (wrank == 0)
            fprintf(stderr, "need 1 <= p < world size (p=%d, size=%d)\n", p, wsize);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    in_a = malloc((size_t) wsize * sizeof(int));
    for (i = 0; i < wsize; i++) {
        if (strcmp(layout, "interleaved") == 0)
            in_a[i] = (i % 2 == 0 && na < p) || nb == wsize - p;
        else
            in_a[i] = i < p;
        na += in_a[i];
        nb += !in_a[i];
    }
    for (i = 0; i < wsize && remote_leader < 0; i++)
        if (in_a[i] != in_a[wrank])
            remote_leader = i;
    ic->group = in_a[wrank] ? 0 : 1;
    free(in_a);
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, ic->group, wrank, &ic->local));
    MT_MPI(MPI_Intercomm_create(ic->local, 0, MPI_COMM_WORLD, remote_leader, 4242, &ic->inter));
    MPI_Comm_rank(ic->local, &ic->rank);
    MPI_Comm_size(ic->local, &ic->nlocal);
    MPI_Comm_remote_size(ic->inter, &ic->nremote);
}

/* MPI_Init, then --p P and --layout block|interleaved from the command line, then the
 * intercommunicator. */
static inline void mt_init(int *argc, char ***argv, int default_p, mt_inter_t *ic)
{
    const char *layout = "block";
    int p = default_p, i;
    MPI_Init(argc, argv);
    for (i = 1; i < *argc; i++) {
        if (strcmp((*argv)[i], "--p") == 0 && i + 1 < *argc)
            p = atoi((*argv)[++i]);
        else if (strcmp((*argv)[i], "--layout") == 0 && i + 1 < *argc)
            layout = (*argv)[++i];
    }
    mt_make_inter(p, layout, ic);
}

static inline void mt_free_inter(mt_inter_t *ic)
{
    MPI_Comm_free(&ic->inter);
    MPI_Comm_free(&ic->local);
}

/* Deterministic content: element i of (group, rank) in call number `salt`. */
static inline int mt_value(int group, int rank, int i, int salt)
{
    return (group ? -1 : 1) * (1 + rank * 100003 + i * 7 + salt * 31337);
}

/* Collective verdict over MPI_COMM_WORLD; returns the process exit code. */
static inline int mt_finish(const char *name)
{
    int total = 0;
    long checks = 0;
    MPI_Allreduce(&mt_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(&mt_checks, &checks, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (mt_world_rank == 0) {
        if (total)
            fprintf(stderr, "%s: %d failure(s)\n", name, total);
        else
            printf("%s: %ld checks passed\n", name, checks);
    }
    return total ? 1 : 0;
}

#endif
