/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generic MPI executor: runs one rank's schedule with nonblocking MPI operations, round
 * by round, honouring chains. Persistent: xfer_exec_init() converts counts to MPI's int
 * arrays once; each operation is xfer_exec_start() then xfer_exec_progress() until done.
 * Point-to-point peers are ranks of @p merged; collectives run on the communicator the caller
 * supplies for each of the schedule's groups.
 */
#ifndef XFER_EXEC_H
#define XFER_EXEC_H

#include <mpi.h>

#include "sched.h"

/* How a group-internal ALLGATHERV runs when it is alone in its round and the call waits
 * without a timeout (with one, MPI_Iallgatherv runs so that the bound holds): the MPI library's
 * MPI_Allgatherv, libxfer's ring of MPI_Sendrecv (bandwidth-optimal whatever the library
 * picks; n - 1 steps; one exchange for two ranks), or the ring for blocks of
 * XFER_INTRA_RING_MIN bytes and more (mean). */
enum { XFER_INTRA_MPI = 1, XFER_INTRA_RING = 2, XFER_INTRA_AUTO = 3 }; /* opts.intra_allgather */
#define XFER_INTRA_RING_MIN 65536

typedef struct xfer_exec {
    const xfer_sched_t *s;
    MPI_Comm merged;
    MPI_Comm *gcomm; /* per schedule group (borrowed) */
    int **icounts;   /* per op: int counts for ALLGATHERV/GATHERV, else NULL */
    int **idispls;
    unsigned char *buf[XFER_NBUFS];
    MPI_Request *req;       /* one slot per op of the widest round */
    xfer_op_t *scratch;     /* holds a generated round */
    xfer_round_view_t view; /* the current round's operations */
    int round;              /* current round; s->nrounds when idle or finished */
    int loaded;             /* view holds the current round */
    int posted;             /* the current round's operations have been started */
    int active;
    int timeout_ms;
    int tag;
    int intra;       /* XFER_INTRA_* */
    double deadline; /* MPI_Wtime() bound, 0 for none */
} xfer_exec_t;

xfer_status_t xfer_exec_init(xfer_exec_t *e, const xfer_sched_t *s, MPI_Comm merged,
                             MPI_Comm *gcomm, int tag, int intra);
void xfer_exec_fini(xfer_exec_t *e);

/* Bind the buffers for the next operation (SEND may be read-only user memory). */
void xfer_exec_bind(xfer_exec_t *e, const void *send, void *recv, void *tmp);

/* Begin: posts the first round. @p timeout_ms > 0 bounds the whole operation. */
xfer_status_t xfer_exec_start(xfer_exec_t *e, int timeout_ms);

/* Drive the operation; with @p blocking it returns only when done (or on error/timeout).
 * *@p done is set to 1 when the schedule has completed. */
xfer_status_t xfer_exec_progress(xfer_exec_t *e, int blocking, int *done);

#endif /* XFER_EXEC_H */
