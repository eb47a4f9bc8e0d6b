/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-intercommunicator state, computed once and cached as an MPI attribute on the user's
 * intercommunicator: the merged communicator (group 0 = the low group, ranks 0..n0-1), the
 * local group communicator, this rank's coordinates and the split communicators algorithms
 * ask for, keyed by layout. Everything is freed when the intercommunicator is freed or at
 * MPI_Finalize, whichever comes first.
 */
#ifndef XFER_TOPO_H
#define XFER_TOPO_H

#include <mpi.h>

#include <xfer/status.h>

typedef struct xfer_subcomm {
    char key[96];
    MPI_Comm comm; /* MPI_COMM_NULL when this rank is in no group of that split */
    struct xfer_subcomm *next;
} xfer_subcomm_t;

typedef struct xfer_topo {
    MPI_Comm inter;  /* the user's intercommunicator (not owned) */
    MPI_Comm merged; /* owned */
    MPI_Comm local;  /* owned */
    int group;       /* 0: low group, 1: high group */
    int rank;        /* rank in the local group */
    int n[2];        /* group sizes */
    int merged_rank;
    int nnodes;       /* shared-memory nodes spanned by both groups */
    int max_ppn;      /* most ranks (of either group) on one node */
    int env_mismatch; /* the groups were launched with different XFER_ALGORITHM/XFER_FALLBACK */
    xfer_subcomm_t *subs;
    struct xfer_topo *next_live; /* registry of live contexts, for MPI_Finalize */
} xfer_topo_t;

/* MPI_Comm_free for cleanup paths that cannot report an error: a failure is logged. */
void xfer_comm_release(MPI_Comm *comm);

/* The cached context of @p inter, created on first use (collective over both groups then).
 * XFER_ERR_NOT_INTERCOMM if @p inter is an intracommunicator. */
xfer_status_t xfer_topo_get(MPI_Comm inter, xfer_topo_t **out);

/* Split of t->merged for one slot of a schedule, cached under @p key. Collective over all
 * ranks of both groups; @p color is MPI_UNDEFINED for ranks outside every group. */
xfer_status_t xfer_topo_split(xfer_topo_t *t, const char *key, int color, int order, MPI_Comm *out);

#endif /* XFER_TOPO_H */
