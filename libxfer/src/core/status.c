/* SPDX-License-Identifier: BSD-3-Clause */
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define XFER_ERRMSG_MAX 1024

static _Thread_local char err_msg[XFER_ERRMSG_MAX];
static _Thread_local int err_mpi_class = MPI_SUCCESS;

/* A longer text (xfer_err_text: every error of a workflow file) lives in a buffer of the thread's
 * own, which a thread-specific key frees when the thread ends; err_long_on says it is the last
 * error rather than err_msg. */
static _Thread_local char *err_long;
static _Thread_local size_t err_long_cap;
static _Thread_local int err_long_on;
static pthread_once_t err_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t err_key;
static int err_key_ok;

static void err_key_make(void)
{
    err_key_ok = pthread_key_create(&err_key, free) == 0;
}

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
    return err_long_on ? err_long : err_msg;
}

int xfer_last_mpi_error_class(void)
{
    return err_mpi_class;
}

void xfer_clear_error(void)
{
    err_msg[0] = '\0';
    err_long_on = 0;
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
     * the same status leave it alone. A caller adding context uses a different message. The
     * words are the user's: the status travels as the return value (callers print its name),
     * the function's name only in the debug log and in an internal error, which is a bug. */
    if (status == XFER_ERR_NO_MEMORY)
        snprintf(err_msg, sizeof(err_msg), "out of memory: %.960s", detail);
    else if (status == XFER_ERR_INTERNAL)
        snprintf(err_msg, sizeof(err_msg),
                 "internal error of libxfer in %.64s: %.800s (please report it)", func, detail);
    else
        snprintf(err_msg, sizeof(err_msg), "%s", detail);
    err_long_on = 0;
    if (status != XFER_ERR_MPI)
        err_mpi_class = MPI_SUCCESS;
    xfer_log(XFER_LOG_DEBUG, "%s: %s: %s", func, xfer_status_name(status), err_msg);
    return status;
}

xfer_status_t xfer_err_raw(xfer_status_t status, const char *fmt, ...)
{
    char text[sizeof(err_msg)];
    va_list ap;

    /* through a buffer of its own: an argument may be xfer_last_error() itself (a caller adding
     * its context to the words of the call that failed), which err_msg holds */
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    memcpy(err_msg, text, sizeof(err_msg));
    err_long_on = 0;
    if (status != XFER_ERR_MPI)
        err_mpi_class = MPI_SUCCESS;
    xfer_log(XFER_LOG_DEBUG, "%s", err_msg);
    return status;
}

xfer_status_t xfer_err_text(xfer_status_t status, const char *text)
{
    const size_t n = strlen(text) + 1;

    err_long_on = 0;
    err_mpi_class = MPI_SUCCESS;
    if (n > sizeof(err_msg) && n > err_long_cap) {
        char *b;
        pthread_once(&err_key_once, err_key_make);
        /* without the key the buffer could not be freed at thread exit: keep to err_msg */
        if (err_key_ok && (b = realloc(err_long, n)) != NULL) {
            err_long = b;
            err_long_cap = n;
            if (pthread_setspecific(err_key, b) != 0) {
                free(b);
                err_long = NULL;
                err_long_cap = 0;
            }
        }
    }
    if (n > sizeof(err_msg) && n <= err_long_cap) {
        memmove(err_long, text, n); /* text may be xfer_last_error() itself */
        err_long_on = 1;
    } else { /* short, or no memory: as much as the fixed buffer holds */
        if (text != err_msg)
            snprintf(err_msg, sizeof(err_msg), "%s", text);
    }
    xfer_log(XFER_LOG_DEBUG, "%s", xfer_last_error());
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
    /* the MPI function's name, not the expression of the call site */
    xfer_err_set(XFER_ERR_MPI, func, "%.*s failed: %s", (int) strcspn(call, "("), call, text);
    err_mpi_class = cls;
    return XFER_ERR_MPI;
}
