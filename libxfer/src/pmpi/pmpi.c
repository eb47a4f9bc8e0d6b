/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libxfer_pmpi.so: LD_PRELOAD it under an unmodified MPI program and its MPI_Allgather,
 * MPI_Allgatherv, MPI_Iallgather and MPI_Iallgatherv calls on intercommunicators, and
 * MPI_Allgather_init / MPI_Allgatherv_init where the MPI library has them (MPI-4), run the
 * libxfer algorithm XFER_ALGORITHM names (default auto). Calls on intracommunicators, and every
 * other MPI function, go straight to the MPI library through the profiling interface. libxfer
 * reaches the MPI library's collectives through PMPI_ names, and its other MPI calls pass through
 * the interceptors untouched (xp_in_engine), so nothing recurses.
 *
 * A forced algorithm that cannot handle a call falls back to the automatic choice with a
 * warning here (XFER_FALLBACK=error to make it an error instead): an unmodified program should
 * keep working. Errors are raised through the communicator's error handler, as MPI would.
 *
 * Requests (requests.c). MPI_Iallgather(v) builds a persistent libxfer plan, which owns
 * duplicates of its communicators (so any number of operations may be outstanding on one
 * intercommunicator), starts it, and returns a generalized request (MPI_Grequest_start) that
 * is completed (MPI_Grequest_complete) when libxfer's executor finishes the operation; the plan
 * is freed then. MPI_Allgather(v)_init returns a placeholder, an inert persistent request of the
 * MPI library (a send to MPI_PROC_NULL); MPI_Start(all) runs the plan behind a fresh generalized
 * request per activation, and the completion calls see that request in the placeholder's stead
 * (MPI_REQUEST_NULL while inactive, so an inactive request completes at once with an empty
 * status).
 *
 * Why generalized requests: the program holds genuine MPI requests, so it can mix them with its
 * own in any array, and the MPI library itself implements what the completion calls promise
 * (MPI_REQUEST_NULL and inactive entries, statuses and MPI_STATUS(ES)_IGNORE, the index and
 * outcount rules, freeing completed requests, MPI_Request_get_status); the interposer only has
 * to make progress and complete its requests. Handles of our own, translated at every call,
 * would mean re-implementing each completion call over mixed arrays; MPICH's extended
 * generalized requests (a poll callback) would let the library progress them alone, but Open
 * MPI has no such thing.
 *
 * Progress: whoever owns a generalized request completes it, so the calls that wait for or test
 * requests are intercepted (MPI_Wait, MPI_Test, MPI_Waitall/any/some, MPI_Testall/any/some,
 * MPI_Request_get_status). While an operation runs, such a call drives every running operation
 * -- all of them: the program may wait for them in any order and its peers may be blocked in
 * another one -- then asks the MPI library, without blocking, whether the call is satisfied,
 * and repeats (yielding the processor in between); once none runs it blocks in the library's
 * own call. With no operation outstanding every call passes straight through. A blocking
 * intercommunicator allgather made while operations run is run as a nonblocking one for the
 * same reason, and MPI_Finalize completes what is still running.
 *
 * Errors: failures at the call (invalid arguments, plan construction) are raised at once.
 * A failure while an operation runs is printed when it happens and raised through the
 * communicator's error handler by the completion call that completes the request, which then
 * returns its class (MPI_ERR_IN_STATUS, the class in the status, for the calls that complete
 * several).
 *
 * Restrictions: (1) building a plan is collective and blocking (communicator duplication, the
 * algorithm choice), so MPI_Iallgather(v) returns only once every rank of both groups has
 * called it: a program that starts nonblocking collectives on different communicators in
 * different orders on different ranks deadlocks here. (2) Nonblocking and persistent calls run
 * flat algorithms: node staging's shared windows are freed collectively, which a request
 * completed or freed at any time on each rank cannot do (XFER_ALGORITHM=hier:<inner> runs
 * <inner> here, with a warning). (3) Progress happens in the calls above, not inside other
 * blocking MPI calls (MPI_Recv, MPI_Barrier ...). (4) MPI_Cancel does nothing to these requests
 * (MPI makes it erroneous); MPI_Request_free of a running operation (erroneous too for a
 * nonblocking collective) releases it when it completes. (5) The large-count (_c) variants pass
 * through to the MPI library.
 */
#include <mpi.h>
#include <stdio.h>

#include <xfer/xfer.h>

#include "pmpi.h"

static int is_inter(MPI_Comm comm)
{
    int flag = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &flag) != MPI_SUCCESS)
        return 0; /* let the MPI library report the bad communicator itself */
    return flag;
}

/* Ours to run: an intercommunicator call that does not come from libxfer itself. */
static int ours(MPI_Comm comm)
{
    return !xp_in_engine && is_inter(comm);
}

/* XFER_FALLBACK decides, else a warning: an unmodified program should run. */
static void interposer_opts(xfer_coll_opts_t *o)
{
    xfer_coll_opts_init(o);
    o->fallback = XFER_FALLBACK_FROM_ENV_ELSE_WARN;
}

/* Nonblocking and persistent operations stay flat (restriction 2 above): XFER_ALGORITHM=hier:X
 * runs X, with one warning (the library's option). */
static void flat_opts(xfer_coll_opts_t *o)
{
    interposer_opts(o);
    o->hier_auto = XFER_HIER_AUTO_FLAT;
}

int xp_error_class(xfer_status_t st)
{
    int cls = st == XFER_ERR_INVALID_ARG ? MPI_ERR_ARG
              : st == XFER_ERR_MPI       ? xfer_last_mpi_error_class()
              : st == XFER_ERR_NO_MEMORY ? MPI_ERR_NO_MEM
              : st == XFER_ERR_MISMATCH  ? MPI_ERR_TRUNCATE
                                         : MPI_ERR_OTHER;
    return cls == MPI_SUCCESS ? MPI_ERR_OTHER : cls;
}

int xp_raise(MPI_Comm comm, int cls)
{
    /* Returns only if the handler returns (not MPI_ERRORS_ARE_FATAL); the class is our answer
     * either way. */
    (void) PMPI_Comm_call_errhandler(comm, cls);
    return cls;
}

int xp_report(const char *fn, MPI_Comm comm, xfer_status_t st)
{
    int cls = xp_error_class(st);
    fprintf(stderr, "libxfer_pmpi: %s failed: %s\n", fn, xfer_last_error());
    return xp_raise(comm, cls);
}

/* The plan of an allgather (@p v 0: @p rcount) or an allgatherv (@p rcounts, @p displs) that
 * runs behind a request; failures are reported as @p fn's. A nonblocking call's plan runs
 * @p once: auto learns for it as for a blocking call, the persistent ones over their starts. */
static int build(const char *fn, int v, int once, const void *sbuf, int scount, MPI_Datatype stype,
                 void *rbuf, int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype,
                 MPI_Comm comm, xfer_plan_t **plan)
{
    xfer_coll_opts_t o;
    xfer_status_t st;

    flat_opts(&o);
    o.once = once;
    if (v)
        XP_ENGINE(st = xfer_allgatherv_inter_init(sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                                                  comm, &o, plan));
    else
        XP_ENGINE(st = xfer_allgather_inter_init(sbuf, scount, stype, rbuf, rcount, rtype, comm, &o,
                                                 plan));
    return st == XFER_SUCCESS ? MPI_SUCCESS : xp_report(fn, comm, st);
}

/* A nonblocking operation, *@p request, for the arguments (xp_nonblocking). */
static int start(const char *fn, int v, const void *sbuf, int scount, MPI_Datatype stype,
                 void *rbuf, int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype,
                 MPI_Comm comm, MPI_Request *request)
{
    xfer_plan_t *plan = NULL;
    int rc =
        build(fn, v, 1, sbuf, scount, stype, rbuf, rcount, rcounts, displs, rtype, comm, &plan);

    *request = MPI_REQUEST_NULL;
    return rc == MPI_SUCCESS ? xp_nonblocking(&plan, comm, fn, request) : rc;
}

/* A blocking call while operations of ours run: as a nonblocking one, so that the wait keeps
 * them progressing (a peer may need one of them before it can join this call). */
static int blocking_while_busy(const char *fn, int v, const void *sbuf, int scount,
                               MPI_Datatype stype, void *rbuf, int rcount, const int *rcounts,
                               const int *displs, MPI_Datatype rtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc = start(fn, v, sbuf, scount, stype, rbuf, rcount, rcounts, displs, rtype, comm, &r);
    return rc == MPI_SUCCESS ? xp_wait(&r) : rc;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    xfer_coll_opts_t o;
    xfer_status_t st;

    if (!ours(comm))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (xp_busy())
        return blocking_while_busy("MPI_Allgather", 0, sendbuf, sendcount, sendtype, recvbuf,
                                   recvcount, NULL, NULL, recvtype, comm);
    interposer_opts(&o);
    XP_ENGINE(st = xfer_allgather_inter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                        comm, &o));
    return st == XFER_SUCCESS ? MPI_SUCCESS : xp_report("MPI_Allgather", comm, st);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    xfer_coll_opts_t o;
    xfer_status_t st;

    if (!ours(comm))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm);
    if (xp_busy())
        return blocking_while_busy("MPI_Allgatherv", 1, sendbuf, sendcount, sendtype, recvbuf, 0,
                                   recvcounts, displs, recvtype, comm);
    interposer_opts(&o);
    XP_ENGINE(st = xfer_allgatherv_inter(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                         recvtype, comm, &o));
    return st == XFER_SUCCESS ? MPI_SUCCESS : xp_report("MPI_Allgatherv", comm, st);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!ours(comm) || !request)
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               request);
    return start("MPI_Iallgather", 0, sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL,
                 recvtype, comm, request);
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    if (!ours(comm) || !request)
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                comm, request);
    return start("MPI_Iallgatherv", 1, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs,
                 recvtype, comm, request);
}

#ifdef XFER_PMPI_PERSISTENT_COLL
/* The info argument carries hints only: libxfer takes its options from the environment. */
int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    xfer_plan_t *plan = NULL;
    int rc;

    if (!ours(comm) || !request)
        return PMPI_Allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                   info, request);
    *request = MPI_REQUEST_NULL;
    rc = build("MPI_Allgather_init", 0, 0, sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
               NULL, recvtype, comm, &plan);
    return rc == MPI_SUCCESS ? xp_persistent(&plan, comm, "MPI_Allgather_init", request) : rc;
}

int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    xfer_plan_t *plan = NULL;
    int rc;

    if (!ours(comm) || !request)
        return PMPI_Allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                    recvtype, comm, info, request);
    *request = MPI_REQUEST_NULL;
    rc = build("MPI_Allgatherv_init", 1, 0, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
               displs, recvtype, comm, &plan);
    return rc == MPI_SUCCESS ? xp_persistent(&plan, comm, "MPI_Allgatherv_init", request) : rc;
}
#endif
