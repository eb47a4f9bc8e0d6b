/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer._core's exceptions: XferError and a subclass per status (module.c adds them to the
 * module), and the calls every other file raises them with. */
#include "core.h"

#include <stdarg.h>
#include <string.h>

/* ---- exceptions -------------------------------------------------------------------------- */

static PyObject *XferError;
static PyObject *exc_by_status[32]; /* -status -> class; NULL: XferError */

typedef struct {
    xfer_status_t st;
    const char *name;
    PyObject *builtin; /* second base, or NULL */
    const char *doc;
} exc_def_t;

/* A class dict of default attributes: status, name (the instances raised here set their own,
 * and message). */
static PyObject *exc_dict(xfer_status_t st)
{
    return Py_BuildValue("{s:i,s:s,s:s}", "status", (int) st, "name", xfer_status_name(st),
                         "message", "");
}

int xpy_exceptions_add(PyObject *m)
{
    exc_def_t defs[] = {
        {XFER_ERR_INVALID_ARG, "InvalidArgumentError", PyExc_ValueError,
         "A bad argument: wrong dtype, shape or size, an unknown name, a call in the wrong "
         "place. Nothing was sent or written."},
        {XFER_ERR_NOT_FOUND, "NotFoundError", PyExc_LookupError,
         "No such component, channel, dataset, attribute or step."},
        {XFER_ERR_MISMATCH, "MismatchError", PyExc_ValueError,
         "The two sides of a channel or a collective disagree (shapes, types, algorithms)."},
        {XFER_ERR_TIMEOUT, "PeerTimeoutError", PyExc_TimeoutError,
         "A peer could not be reached within the bound (control.timeout_ms, or a timeout given "
         "to the call)."},
        {XFER_ERR_PEER_FAILED, "PeerFailedError", NULL,
         "The component at the other end of the channel failed; the message names it."},
        {XFER_ERR_STATE, "StateError", NULL,
         "The call is not valid now (a closed channel, a finalized workflow, a selection after "
         "step 0)."},
        {XFER_ERR_CONFIG, "ConfigError", NULL,
         "The workflow file is invalid; the message names the file, line, column and key."},
        {XFER_ERR_MPI, "MPIError", NULL, "An MPI call failed; the message carries MPI's text."},
        {XFER_ERR_TOO_LARGE, "TooLargeError", PyExc_OverflowError,
         "A size beyond what the call can express (int counts, attributes_bytes)."},
        {XFER_ERR_END_OF_STREAM, "EndOfStream", NULL,
         "The peer ended the channel: no step comes any more. Iterating over a channel ends "
         "quietly instead."},
        {XFER_ERR_IO, "FileSystemError", PyExc_OSError,
         "A file system operation failed: a full disk (ENOSPC), a quota, an I/O error. The "
         "message names the file and the cause."},
        {XFER_ERR_SPILL_FULL, "SpillFullError", NULL,
         "on_reader_loss: spill reached spill.max_steps or spill.max_bytes with no reader "
         "attached: the step was not committed (nothing was lost); attach a reader or stop."},
        {XFER_ERR_INTERRUPTED, "InterruptedWaitError", PyExc_InterruptedError,
         "A wait was interrupted; the Python exception of the signal (KeyboardInterrupt) is "
         "raised instead of this one."},
    };
    size_t i;
    PyObject *dict = exc_dict(XFER_ERR_INTERNAL);

    if (!dict)
        return -1;
    XferError = PyErr_NewExceptionWithDoc(
        "xfer.XferError",
        "A libxfer call failed. Attributes: status (the libxfer status code, an int), name "
        "(its symbolic name, e.g. 'XFER_ERR_MISMATCH') and message (libxfer's words).",
        PyExc_Exception, dict);
    Py_DECREF(dict);
    if (!XferError || PyModule_AddObjectRef(m, "XferError", XferError) < 0)
        return -1;
    for (i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
        char qual[96];
        PyObject *bases, *cls;
        snprintf(qual, sizeof(qual), "xfer.%s", defs[i].name);
        bases = defs[i].builtin ? PyTuple_Pack(2, XferError, defs[i].builtin)
                                : PyTuple_Pack(1, XferError);
        if (!bases || !(dict = exc_dict(defs[i].st))) {
            Py_XDECREF(bases);
            return -1;
        }
        cls = PyErr_NewExceptionWithDoc(qual, defs[i].doc, bases, dict);
        Py_DECREF(bases);
        Py_DECREF(dict);
        if (!cls || PyModule_AddObjectRef(m, defs[i].name, cls) < 0)
            return -1;
        exc_by_status[-defs[i].st] = cls; /* the module holds the reference */
        Py_DECREF(cls);
    }
    return 0;
}

static PyObject *raise_msg(xfer_status_t st, const char *msg)
{
    PyObject *cls = XferError, *exc, *v;
    if (st < 0 && -st < (int) (sizeof(exc_by_status) / sizeof(exc_by_status[0])) &&
        exc_by_status[-st])
        cls = exc_by_status[-st];
    exc = PyObject_CallFunction(cls, "s", msg);
    if (!exc)
        return NULL;
    if ((v = PyLong_FromLong(st)) != NULL) {
        PyObject_SetAttrString(exc, "status", v);
        Py_DECREF(v);
    }
    if ((v = PyUnicode_FromString(xfer_status_name(st))) != NULL) {
        PyObject_SetAttrString(exc, "name", v);
        Py_DECREF(v);
    }
    if ((v = PyUnicode_FromString(msg)) != NULL) {
        PyObject_SetAttrString(exc, "message", v);
        Py_DECREF(v);
    }
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *xpy_raise(xfer_status_t st, const char *what)
{
    char msg[4096];
    const char *detail = xfer_last_error();
    if (st == XFER_ERR_INTERRUPTED && PyErr_Occurred())
        return NULL; /* the signal's own exception (KeyboardInterrupt) stands */
    if (!detail || !detail[0])
        detail = xfer_status_string(st);
    if (what)
        snprintf(msg, sizeof(msg), "%s: %s", what, detail);
    else
        snprintf(msg, sizeof(msg), "%s", detail);
    return raise_msg(st, msg);
}

PyObject *xpy_error(xfer_status_t st, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return raise_msg(st, msg);
}

PyObject *xpy_invalid(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return raise_msg(XFER_ERR_INVALID_ARG, msg);
}
