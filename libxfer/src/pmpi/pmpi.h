/* SPDX-License-Identifier: BSD-3-Clause */
/* libxfer_pmpi.so's two halves: pmpi.c intercepts the collectives and builds their plans,
 * requests.c owns the requests of the nonblocking and persistent ones and intercepts the calls
 * that start, complete and free requests. The design is in pmpi.c's opening comment. */
#ifndef XFER_PMPI_INTERNAL_H
#define XFER_PMPI_INTERNAL_H

#include <mpi.h>

#include <xfer/xfer.h>

/* Only the MPI_ functions are exported from the interposer. */
#define XP_INTERNAL __attribute__((visibility("hidden")))

/* Depth of this thread's calls into libxfer. libxfer's own MPI calls (MPI_Testsome in its
 * executor, MPI_Test, MPI_Request_free ...) reach this library's interceptors as well and must
 * go straight to the MPI library. */
extern XP_INTERNAL _Thread_local int xp_in_engine;

#define XP_ENGINE(stmt)                                                                            \
    do {                                                                                           \
        xp_in_engine++;                                                                            \
        stmt;                                                                                      \
        xp_in_engine--;                                                                            \
    } while (0)

/* The MPI error class of a libxfer failure. Call it right after the failure: it reads the
 * thread's last error. */
XP_INTERNAL int xp_error_class(xfer_status_t st);

/* Raise @p cls through @p comm's error handler, as the MPI library would; returns @p cls (the
 * handler returns only if it is not MPI_ERRORS_ARE_FATAL). */
XP_INTERNAL int xp_raise(MPI_Comm comm, int cls);

/* Print the libxfer failure @p st of @p fn and raise its class on @p comm; returns the class. */
XP_INTERNAL int xp_report(const char *fn, MPI_Comm comm, xfer_status_t st);

/* Run *@p plan's operation once behind a new generalized request, *@p request, which the
 * completion calls drive; the plan is freed when the operation completes. Takes *@p plan (set
 * to NULL) whatever happens. @p fn names the call in messages. */
XP_INTERNAL int xp_nonblocking(xfer_plan_t **plan, MPI_Comm comm, const char *fn,
                               MPI_Request *request);

/* An inactive persistent request, *@p request, for *@p plan: MPI_Start(all) starts it,
 * MPI_Request_free frees it. Takes *@p plan (set to NULL) whatever happens. */
XP_INTERNAL int xp_persistent(xfer_plan_t **plan, MPI_Comm comm, const char *fn,
                              MPI_Request *request);

/* MPI_Wait for a request xp_nonblocking made (whatever the MPI_Wait symbol resolves to). */
XP_INTERNAL int xp_wait(MPI_Request *request);

/* Some operation of this library is running: a blocking call must keep it progressing. */
XP_INTERNAL int xp_busy(void);

#endif /* XFER_PMPI_INTERNAL_H */
