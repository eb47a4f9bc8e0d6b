/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libxfer_pmpi.so: LD_PRELOAD it under an unmodified MPI program and its MPI_Allgather and
 * MPI_Allgatherv calls on intercommunicators run the libxfer algorithm XFER_ALGORITHM names
 * (default auto). Calls on intracommunicators, and every other MPI function, go straight to the
 * MPI library through the profiling interface. libxfer itself reaches the MPI library's
 * collectives through PMPI_ names, so nothing recurses.
 *
 * A forced algorithm that cannot handle a call falls back to the automatic choice with a
 * warning here (XFER_FALLBACK=error to make it an error instead): an unmodified program should
 * keep working. Errors are raised through the communicator's error handler, as MPI would.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <xfer/xfer.h>

static int is_inter(MPI_Comm comm)
{
    int flag = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &flag) != MPI_SUCCESS)
        return 0; /* let the MPI library report the bad communicator itself */
    return flag;
}

static void interposer_opts(xfer_coll_opts_t *o)
{
    xfer_coll_opts_init(o);
    if (!getenv("XFER_FALLBACK"))
        o->fallback = XFER_FALLBACK_WARN;
}

static int report(const char *fn, MPI_Comm comm, xfer_status_t st)
{
    int cls = st == XFER_ERR_INVALID_ARG ? MPI_ERR_ARG
              : st == XFER_ERR_MPI       ? xfer_last_mpi_error_class()
              : st == XFER_ERR_NO_MEMORY ? MPI_ERR_NO_MEM
              : st == XFER_ERR_MISMATCH  ? MPI_ERR_TRUNCATE
                                         : MPI_ERR_OTHER;
    fprintf(stderr, "libxfer_pmpi: %s failed: %s\n", fn, xfer_last_error());
    if (cls == MPI_SUCCESS)
        cls = MPI_ERR_OTHER;
    /* Returns only if the handler returns (not MPI_ERRORS_ARE_FATAL); the class is our answer
     * either way. */
    (void) PMPI_Comm_call_errhandler(comm, cls);
    return cls;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    xfer_coll_opts_t o;
    xfer_status_t st;

    if (!is_inter(comm))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    interposer_opts(&o);
    st = xfer_allgather_inter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &o);
    return st == XFER_SUCCESS ? MPI_SUCCESS : report("MPI_Allgather", comm, st);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    xfer_coll_opts_t o;
    xfer_status_t st;

    if (!is_inter(comm))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm);
    interposer_opts(&o);
    st = xfer_allgatherv_inter(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, &o);
    return st == XFER_SUCCESS ? MPI_SUCCESS : report("MPI_Allgatherv", comm, st);
}
