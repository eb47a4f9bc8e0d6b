/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one executor: runs one rank's schedule -- flat algorithms, node staging, embedded inner
 * algorithms -- by dependencies. Every operation whose dependencies have completed is started
 * (nonblocking MPI, a copy, a flag publication, a task's post); progress tests what is in flight
 * and starts what that completion makes ready. A test call never blocks; a blocking wait sleeps
 * in MPI_Waitsome when only MPI requests are in flight and polls when node flags or tasks are.
 *
 * Persistent: xfer_exec_init() prepares counts and dependency lists once; each operation is
 * xfer_exec_bind(), xfer_exec_start(), then xfer_exec_progress() until done. Stored schedules
 * are executed as one graph; generated ones (rings) one round at a time (a round waits for the
 * previous one; they have neither explicit dependencies nor barrier exemptions).
 */
#ifndef XFER_EXEC_H
#define XFER_EXEC_H

#include <mpi.h>

#include "../topo/shwin.h"
#include "sched.h"

/* How a group-internal ALLGATHERV runs when it is the only thing to do and the call waits
 * without a timeout (otherwise MPI_Iallgatherv runs so that a bound holds): the MPI library's
 * MPI_Allgatherv, libxfer's ring of MPI_Sendrecv (bandwidth-optimal whatever the library
 * picks; n - 1 steps; one exchange for two ranks), or the ring for blocks of
 * XFER_INTRA_RING_MIN bytes and more (mean). */
enum { XFER_INTRA_MPI = 1, XFER_INTRA_RING = 2, XFER_INTRA_AUTO = 3 }; /* opts.intra_allgather */
#define XFER_INTRA_RING_MIN 65536

/* A TASK operation: work whose steps are decided at run time (hier:direct's arrival-order
 * roles). post() starts it, progress() advances it without blocking and sets *done; abort() is
 * called when the operation fails while the task is in flight. The MPI library's own
 * intercommunicator collective (`native`, `hier:native`) is such a task. */
typedef struct xfer_exec_task {
    xfer_status_t (*post)(void *arg);
    xfer_status_t (*progress)(void *arg, int *done);
    void (*abort)(void *arg);
    /* optional: the whole task as one blocking call, used as for collectives when it is the
     * only thing to do and the caller waits without a bound */
    xfer_status_t (*run)(void *arg);
    void *arg;
    const char *what; /* for error messages */
} xfer_exec_task_t;

/* A remapped range of a buffer: units [off, off + len) of it live at @p ptr instead (the
 * application's own memory: the runtime's zero-copy puts and gets). */
typedef struct xfer_exec_seg {
    size_t off, len;
    void *ptr;
} xfer_exec_seg_t;

/* What the executor measured of the last operation (for xfer_last_op_stats). */
typedef struct xfer_exec_times {
    double inter_s; /* first transfer or task started .. last one completed */
    double wait_s;  /* time node-flag waits and barriers were pending */
    double intra_s; /* time in copies */
} xfer_exec_times_t;

typedef struct xfer_exec {
    const xfer_sched_t *s;
    MPI_Comm comm[XFER_NCOMMS]; /* by op->comm */
    MPI_Comm *gcomm;            /* per schedule group (borrowed) */
    xfer_exec_task_t *tasks;    /* s->ntasks of them (borrowed) */
    xfer_shwin_t *win;          /* node window of the FLAG operations (bound per call) */
    long epoch;
    int **icounts; /* per op: int counts for ALLGATHERV/GATHERV, else NULL */
    int **idispls;
    unsigned char *buf[XFER_NBUFS];
    /* what one unit of op->off/len is in each buffer: bytes unless xfer_exec_set_unit() */
    MPI_Datatype unit_type[XFER_NBUFS];
    int unit_count[XFER_NBUFS];
    MPI_Aint unit_stride[XFER_NBUFS];
    MPI_Datatype *vtype; /* per op: the struct datatype of a combined message, or NULL type */
    int vstale;          /* buffers rebound since the struct datatypes were made */
    int tag;   /* point-to-point operations use tags tag .. tag + XFER_LANES - 1 (lanes) */
    int intra; /* XFER_INTRA_* */

    /* the graph: all stored operations, or the current generated round */
    int cap; /* room in the per-op arrays */
    const xfer_op_t *ops;
    int n;             /* operations in the graph */
    int *succ0, *succ; /* successors of op i: succ[succ0[i] .. succ0[i+1]) */
    int *npending0;    /* dependencies of op i (explicit, chain, round barrier) */
    int *npending;
    int *round_of;      /* stored schedules: round of op i */
    int *round_left;    /* stored schedules: operations of round r not complete */
    int rounds_done;    /* rounds 0 .. rounds_done-1 complete (stored) */
    int gen_round;      /* generated: the round in the graph */
    xfer_op_t *scratch; /* generated: its operations */
    int left;           /* operations of the graph not complete */
    int *ready, nready; /* ready, not started */
    int *live, nlive;   /* started, not complete, in MPI: their requests are req[0 .. nlive) */
    MPI_Request *req;
    int *polled, npolled;     /* started, not complete: flag waits and tasks */
    int *deferred, ndeferred; /* ready collectives not started (see progress) */
    int *indices;             /* MPI_Testsome output */
    MPI_Status *statuses;     /* (GCC checks the array MPICH's MPI_STATUSES_IGNORE stands for) */
    unsigned char *done;      /* op complete (FLAG_PUT with ON_FAILURE: published) */
    double *t_poll;           /* when a polled op or barrier started */

    int active;
    int timeout_ms;
    double deadline; /* MPI_Wtime() bound, 0 for none */
    double t_first, t_last;
    xfer_exec_times_t times;
    const xfer_exec_seg_t *remap[XFER_NBUFS]; /* borrowed; see xfer_exec_remap */
    int nremap[XFER_NBUFS];
} xfer_exec_t;

/* @p comm: the communicators of op->comm (XFER_COMM_MAIN required, others when used). */
xfer_status_t xfer_exec_init(xfer_exec_t *e, const xfer_sched_t *s, const MPI_Comm comm[],
                             MPI_Comm *gcomm, xfer_exec_task_t *tasks, int tag, int intra);
void xfer_exec_fini(xfer_exec_t *e);

/* Bind the buffers for the next operation (SEND may be read-only user memory). */
void xfer_exec_bind(xfer_exec_t *e, const void *send, void *recv, void *tmp);
/* Units of buffer @p buf: op->off and op->len count blocks of @p count elements of @p type,
 * consecutive blocks @p stride bytes apart (stride = count times the type's extent, so a run of
 * blocks is one MPI count). SEND and RECV only (no COPY or collective on such a buffer). */
void xfer_exec_set_unit(xfer_exec_t *e, int buf, MPI_Datatype type, int count, MPI_Aint stride);

/* Ranges of buffer @p buf (SEND or RECV) that live elsewhere (@p seg, borrowed, @p n of them,
 * disjoint): an operation's range or a piece must lie inside one of them or outside all. */
void xfer_exec_remap(xfer_exec_t *e, int buf, const xfer_exec_seg_t *seg, int n);
/* Bind the node window and the call's epoch (its parity selects NODE_S and NODE_R). */
void xfer_exec_bind_node(xfer_exec_t *e, xfer_shwin_t *win, long epoch);

/* Begin: starts every operation that is ready. @p timeout_ms > 0 bounds the whole operation. */
xfer_status_t xfer_exec_start(xfer_exec_t *e, int timeout_ms);

/* Drive the operation; with @p blocking it returns only when done (or on error/timeout).
 * *@p done is set to 1 when the schedule has completed. */
xfer_status_t xfer_exec_progress(xfer_exec_t *e, int blocking, int *done);

/* ---- internal to exec.c and exec_ops.c ---------------------------------------------------- */

/* Int count and displacement arrays of collective op @p i (ALLGATHERV, GATHERV). */
xfer_status_t xfer_exec_int_counts(xfer_exec_t *e, int i);
/* Address of unit @p off of buffer @p buf; MPI count of @p len units (-1 beyond an int). */
unsigned char *xfer_exec_addr(const xfer_exec_t *e, int buf, size_t off);
int xfer_exec_count(const xfer_exec_t *e, int buf, size_t len);
/* The struct datatypes of the combined messages over the buffers bound now; and their release. */
xfer_status_t xfer_exec_make_types(xfer_exec_t *e);
void xfer_exec_free_types(xfer_exec_t *e);
/* Start collective op @p k: nonblocking into *@p r, or with @p r NULL the blocking call. */
xfer_status_t xfer_exec_coll(xfer_exec_t *e, int k, MPI_Request *r);

#endif /* XFER_EXEC_H */
