/* SPDX-License-Identifier: BSD-3-Clause */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

#define XFER_ERRMSG_MAX 1024

static _Thread_local char err_msg[XFER_ERRMSG_MAX];
static _Thread_local int err_mpi_class = MPI_SUCCESS;

const char *xfer_status_string(xfer_status_t status)
{
    switch (status) {
#define XFER_STATUS_STR_(name, value, desc)                                                        \
    case name:                                                                                     \
        return desc;
        XFER_STATUS_LIST(XFER_STATUS_STR_)
#undef XFER_STATUS_STR_
    }
    return "unknown status";
}

const char *xfer_status_name(xfer_status_t status)
{
    switch (status) {
#define XFER_STATUS_NAME_(name, value, desc)                                                       \
    case name:                                                                                     \
        return #name;
        XFER_STATUS_LIST(XFER_STATUS_NAME_)
#undef XFER_STATUS_NAME_
    }
    return "XFER_STATUS_UNKNOWN";
}

const char *xfer_last_error(void)
{
    return err_msg;
}

int xfer_last_mpi_error_class(void)
{
    return err_mpi_class;
}

void xfer_clear_error(void)
{
    err_msg[0] = '\0';
    err_mpi_class = MPI_SUCCESS;
}

xfer_status_t xfer_err_set(xfer_status_t status, const char *func, const char *fmt, ...)
{
    char detail[XFER_ERRMSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    /* The innermost failure is the most specific one: keep it and let callers that propagate
     * the same status leave it alone. A caller adding context uses a different message. */
    snprintf(err_msg, sizeof(err_msg), "%.64s: %.32s: %.900s", func, xfer_status_name(status),
             detail);
    if (status != XFER_ERR_MPI)
        err_mpi_class = MPI_SUCCESS;
    xfer_log(XFER_LOG_DEBUG, "%s", err_msg);
    return status;
}

xfer_status_t xfer_err_raw(xfer_status_t status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err_msg, sizeof(err_msg), fmt, ap);
    va_end(ap);
    if (status != XFER_ERR_MPI)
        err_mpi_class = MPI_SUCCESS;
    xfer_log(XFER_LOG_DEBUG, "%s", err_msg);
    return status;
}

xfer_status_t xfer_err_mpi(int mpi_rc, const char *func, const char *call)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = MPI_ERR_UNKNOWN;

    /* These two only read tables; their own failure leaves the defaults above. */
    if (MPI_Error_class(mpi_rc, &cls) != MPI_SUCCESS)
        cls = MPI_ERR_UNKNOWN;
    if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof(text), "MPI error code %d", mpi_rc);
    xfer_err_set(XFER_ERR_MPI, func, "%s failed: %s", call, text);
    err_mpi_class = cls;
    return XFER_ERR_MPI;
}
