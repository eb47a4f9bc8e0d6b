/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer._core: the module, its exceptions, MPI start-up and communicators as Fortran handles.
 *
 * Communicators cross the Python boundary as MPI Fortran handles (MPI_Comm_c2f): a plain int
 * that means the same to libxfer, to mpi4py (Comm.py2f / Comm.f2py) and to a Fortran code,
 * whatever the MPI library's C handle type is. */
#define XFER_PY_MODULE_C
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

static int add_exceptions(PyObject *m)
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

/* ---- types ------------------------------------------------------------------------------- */

static const struct {
    xfer_type_t t;
    int npy;
} type_map[] = {
    {XFER_TYPE_INT8, NPY_INT8},       {XFER_TYPE_UINT8, NPY_UINT8},
    {XFER_TYPE_INT16, NPY_INT16},     {XFER_TYPE_UINT16, NPY_UINT16},
    {XFER_TYPE_INT32, NPY_INT32},     {XFER_TYPE_UINT32, NPY_UINT32},
    {XFER_TYPE_INT64, NPY_INT64},     {XFER_TYPE_UINT64, NPY_UINT64},
    {XFER_TYPE_FLOAT32, NPY_FLOAT32}, {XFER_TYPE_FLOAT64, NPY_FLOAT64},
};

int xpy_npy_type(xfer_type_t t)
{
    size_t i;
    for (i = 0; i < sizeof(type_map) / sizeof(type_map[0]); i++)
        if (type_map[i].t == t)
            return type_map[i].npy;
    return -1;
}

xfer_type_t xpy_xfer_type(int npy_type)
{
    size_t i;
    /* numpy's C long and long long are distinct type numbers of the same size */
    if (npy_type == NPY_LONGLONG && sizeof(long long) == 8)
        npy_type = NPY_INT64;
    if (npy_type == NPY_ULONGLONG && sizeof(long long) == 8)
        npy_type = NPY_UINT64;
    for (i = 0; i < sizeof(type_map) / sizeof(type_map[0]); i++)
        if (PyArray_EquivTypenums(type_map[i].npy, npy_type))
            return type_map[i].t;
    return (xfer_type_t) 0;
}

int xpy_u64_seq(PyObject *seq, int n, uint64_t *out, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, "");
    Py_ssize_t i;
    if (!fast) {
        PyErr_Clear();
        xpy_invalid("%s: expected a sequence of %d integers", what, n);
        return 0;
    }
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        xpy_invalid("%s: expected %d integers, got %zd", what, n, PySequence_Fast_GET_SIZE(fast));
        Py_DECREF(fast);
        return 0;
    }
    for (i = 0; i < n; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(fast, i);
        unsigned long long v;
        if (!PyIndex_Check(it)) {
            xpy_invalid("%s[%zd]: expected an integer", what, i);
            Py_DECREF(fast);
            return 0;
        }
        it = PyNumber_Index(it);
        if (!it) {
            Py_DECREF(fast);
            return 0;
        }
        v = PyLong_AsUnsignedLongLong(it);
        Py_DECREF(it);
        if (v == (unsigned long long) -1 && PyErr_Occurred()) {
            PyErr_Clear();
            xpy_invalid("%s[%zd]: expected a non-negative integer", what, i);
            Py_DECREF(fast);
            return 0;
        }
        out[i] = (uint64_t) v;
    }
    Py_DECREF(fast);
    return 1;
}

/* ---- MPI ---------------------------------------------------------------------------------- */

int xpy_mpi_ready(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        return 1;
    raise_msg(XFER_ERR_STATE, fin ? "MPI was finalized: libxfer cannot be used any more"
                                  : "MPI is not initialised (xfer.init initialises it)");
    return 0;
}

int xpy_interrupt_check(void *arg)
{
    PyGILState_STATE g;
    int r;
    (void) arg;
    g = PyGILState_Ensure();
    r = PyErr_CheckSignals(); /* runs Python's handlers: SIGINT raises KeyboardInterrupt */
    PyGILState_Release(g);
    return r < 0;
}

static PyObject *py_mpi_init(PyObject *self, PyObject *args)
{
    int want = MPI_THREAD_MULTIPLE, provided = MPI_THREAD_SINGLE, init = 0, fin = 0, rc;
    (void) self;
    if (!PyArg_ParseTuple(args, "|i", &want))
        return NULL;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (fin)
        return raise_msg(XFER_ERR_STATE, "MPI was finalized and cannot be initialised again");
    if (init) {
        MPI_Query_thread(&provided);
        return Py_BuildValue("(ii)", provided, 0);
    }
    Py_BEGIN_ALLOW_THREADS rc = MPI_Init_thread(NULL, NULL, want, &provided);
    Py_END_ALLOW_THREADS if (rc != MPI_SUCCESS) return raise_msg(XFER_ERR_MPI,
                                                                 "MPI_Init_thread failed");
    return Py_BuildValue("(ii)", provided, 1);
}

static PyObject *py_mpi_finalize(PyObject *self, PyObject *noargs)
{
    int init = 0, fin = 0, rc = MPI_SUCCESS;
    (void) self;
    (void) noargs;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) {
        Py_BEGIN_ALLOW_THREADS rc = MPI_Finalize();
        Py_END_ALLOW_THREADS
    }
    if (rc != MPI_SUCCESS)
        return raise_msg(XFER_ERR_MPI, "MPI_Finalize failed");
    Py_RETURN_NONE;
}

static PyObject *py_mpi_state(PyObject *self, PyObject *noargs)
{
    int init = 0, fin = 0, level = -1;
    (void) self;
    (void) noargs;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Query_thread(&level);
    return Py_BuildValue("(iii)", init, fin, level);
}

static PyObject *py_mpi_abort(PyObject *self, PyObject *args)
{
    int code = 1, init = 0, fin = 0;
    (void) self;
    if (!PyArg_ParseTuple(args, "|i", &code))
        return NULL;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Abort(MPI_COMM_WORLD, code);
    Py_RETURN_NONE;
}

static PyObject *py_mpi_library_version(PyObject *self, PyObject *noargs)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    (void) self;
    (void) noargs;
    if (MPI_Get_library_version(v, &len) != MPI_SUCCESS)
        return raise_msg(XFER_ERR_MPI, "MPI_Get_library_version failed");
    return PyUnicode_DecodeLatin1(v, len, "replace");
}

/* ---- communicators ------------------------------------------------------------------------ */

int xpy_comm_converter(PyObject *o, void *out)
{
    MPI_Comm *c = out;
    PyObject *h = NULL;
    long v;
    if (PyLong_Check(o)) {
        h = o;
        Py_INCREF(h);
    } else if (PyObject_HasAttrString(o, "py2f")) { /* xfer.Comm and mpi4py communicators */
        h = PyObject_CallMethod(o, "py2f", NULL);
        if (!h)
            return 0;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "expected a communicator (xfer.Comm, an mpi4py communicator or a Fortran "
                     "handle), got %.100s",
                     Py_TYPE(o)->tp_name);
        return 0;
    }
    v = PyLong_AsLong(h);
    Py_DECREF(h);
    if (v == -1 && PyErr_Occurred())
        return 0;
    if (!xpy_mpi_ready())
        return 0;
    *c = MPI_Comm_f2c((MPI_Fint) v);
    if (*c == MPI_COMM_NULL) {
        xpy_invalid("the communicator is MPI_COMM_NULL");
        return 0;
    }
    return 1;
}

static PyObject *fhandle(MPI_Comm c)
{
    return PyLong_FromLong((long) MPI_Comm_c2f(c));
}

static PyObject *mpi_fail(int rc, const char *call)
{
    char s[MPI_MAX_ERROR_STRING], msg[MPI_MAX_ERROR_STRING + 64];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof(s), "error %d", rc);
    snprintf(msg, sizeof(msg), "%s failed: %s", call, s);
    return raise_msg(XFER_ERR_MPI, msg);
}

static PyObject *py_comm_world(PyObject *self, PyObject *noargs)
{
    (void) self;
    (void) noargs;
    if (!xpy_mpi_ready())
        return NULL;
    return fhandle(MPI_COMM_WORLD);
}

static PyObject *py_comm_info(PyObject *self, PyObject *args)
{
    MPI_Comm c;
    int rank = 0, size = 0, inter = 0, rsize = 0, rc;
    (void) self;
    if (!PyArg_ParseTuple(args, "O&", xpy_comm_converter, &c))
        return NULL;
    if ((rc = MPI_Comm_rank(c, &rank)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(c, &size)) != MPI_SUCCESS ||
        (rc = MPI_Comm_test_inter(c, &inter)) != MPI_SUCCESS ||
        (inter && (rc = MPI_Comm_remote_size(c, &rsize)) != MPI_SUCCESS))
        return mpi_fail(rc, "MPI_Comm_rank/size/test_inter");
    return Py_BuildValue("(iiii)", rank, size, inter, rsize);
}

static PyObject *py_comm_split(PyObject *self, PyObject *args)
{
    MPI_Comm c, out;
    int color, key, rc;
    (void) self;
    if (!PyArg_ParseTuple(args, "O&ii", xpy_comm_converter, &c, &color, &key))
        return NULL;
    Py_BEGIN_ALLOW_THREADS rc = MPI_Comm_split(c, color < 0 ? MPI_UNDEFINED : color, key, &out);
    Py_END_ALLOW_THREADS if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Comm_split");
    if (out == MPI_COMM_NULL)
        Py_RETURN_NONE;
    return fhandle(out);
}

static PyObject *py_comm_dup(PyObject *self, PyObject *args)
{
    MPI_Comm c, out;
    int rc;
    (void) self;
    if (!PyArg_ParseTuple(args, "O&", xpy_comm_converter, &c))
        return NULL;
    Py_BEGIN_ALLOW_THREADS rc = MPI_Comm_dup(c, &out);
    Py_END_ALLOW_THREADS if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Comm_dup");
    return fhandle(out);
}

static PyObject *py_comm_free(PyObject *self, PyObject *args)
{
    MPI_Comm c;
    int rc;
    (void) self;
    if (!PyArg_ParseTuple(args, "O&", xpy_comm_converter, &c))
        return NULL;
    if (c == MPI_COMM_WORLD || c == MPI_COMM_SELF)
        return xpy_invalid("MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed");
    Py_BEGIN_ALLOW_THREADS rc = MPI_Comm_free(&c);
    Py_END_ALLOW_THREADS if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Comm_free");
    Py_RETURN_NONE;
}

static PyObject *py_intercomm_create(PyObject *self, PyObject *args)
{
    MPI_Comm local, peer, out;
    int local_leader, remote_leader, tag, rc;
    (void) self;
    if (!PyArg_ParseTuple(args, "O&iO&ii", xpy_comm_converter, &local, &local_leader,
                          xpy_comm_converter, &peer, &remote_leader, &tag))
        return NULL;
    Py_BEGIN_ALLOW_THREADS rc =
        MPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, &out);
    Py_END_ALLOW_THREADS if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Intercomm_create");
    return fhandle(out);
}

static PyObject *py_barrier(PyObject *self, PyObject *args)
{
    MPI_Comm c;
    int rc;
    (void) self;
    if (!PyArg_ParseTuple(args, "O&", xpy_comm_converter, &c))
        return NULL;
    Py_BEGIN_ALLOW_THREADS rc = MPI_Barrier(c);
    Py_END_ALLOW_THREADS if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Barrier");
    Py_RETURN_NONE;
}

/* allreduce(array, op, comm) -> a new array: MPI_Allreduce of a numeric array (sum, min, max),
 * for analyses that reduce their statistics without mpi4py. */
static PyObject *py_allreduce(PyObject *self, PyObject *args)
{
    static const struct {
        int npy;
        MPI_Datatype t;
    } types[] = {{NPY_FLOAT64, MPI_DOUBLE},  {NPY_FLOAT32, MPI_FLOAT}, {NPY_INT64, MPI_INT64_T},
                 {NPY_UINT64, MPI_UINT64_T}, {NPY_INT32, MPI_INT32_T}, {NPY_UINT32, MPI_UINT32_T}};
    PyObject *o;
    PyArrayObject *in, *out;
    const char *opname;
    MPI_Comm c;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Op op;
    size_t i;
    int rc;
    (void) self;
    if (!PyArg_ParseTuple(args, "OsO&", &o, &opname, xpy_comm_converter, &c))
        return NULL;
    if (strcmp(opname, "sum") == 0)
        op = MPI_SUM;
    else if (strcmp(opname, "min") == 0)
        op = MPI_MIN;
    else if (strcmp(opname, "max") == 0)
        op = MPI_MAX;
    else
        return xpy_invalid("allreduce: op %s: expected sum, min or max", opname);
    if (!(in = (PyArrayObject *) PyArray_FROM_OF(o, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED)))
        return NULL;
    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (PyArray_EquivTypenums(PyArray_TYPE(in), types[i].npy) && PyArray_ISNOTSWAPPED(in))
            t = types[i].t;
    if (t == MPI_DATATYPE_NULL || PyArray_SIZE(in) > INT32_MAX) {
        PyObject *r = xpy_invalid("allreduce: expected float64, float32, int64, uint64, int32 or "
                                  "uint32 values (at most 2^31 - 1), got %s",
                                  PyArray_DESCR(in)->typeobj->tp_name);
        Py_DECREF(in);
        return r;
    }
    out = (PyArrayObject *) PyArray_NewLikeArray(in, NPY_CORDER, NULL, 0);
    if (!out) {
        Py_DECREF(in);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS rc =
        MPI_Allreduce(PyArray_DATA(in), PyArray_DATA(out), (int) PyArray_SIZE(in), t, op, c);
    Py_END_ALLOW_THREADS Py_DECREF(in);
    if (rc != MPI_SUCCESS) {
        Py_DECREF(out);
        return mpi_fail(rc, "MPI_Allreduce");
    }
    return (PyObject *) out;
}

static PyObject *py_appnum(PyObject *self, PyObject *noargs)
{
    int *v = NULL, flag = 0;
    (void) self;
    (void) noargs;
    if (!xpy_mpi_ready())
        return NULL;
    if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag) != MPI_SUCCESS || !flag || !v)
        Py_RETURN_NONE;
    return PyLong_FromLong(*v);
}

/* ---- status codes, types, configuration --------------------------------------------------- */

static PyObject *py_status_name(PyObject *self, PyObject *args)
{
    int st;
    (void) self;
    if (!PyArg_ParseTuple(args, "i", &st))
        return NULL;
    return Py_BuildValue("(ss)", xfer_status_name((xfer_status_t) st),
                         xfer_status_string((xfer_status_t) st));
}

static PyObject *status_dict(void)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
#define XPY_STATUS_(name, value, desc)                                                             \
    do {                                                                                           \
        PyObject *v_ = PyLong_FromLong(value);                                                     \
        if (!v_ || PyDict_SetItemString(d, #name, v_) < 0) {                                       \
            Py_XDECREF(v_);                                                                        \
            Py_DECREF(d);                                                                          \
            return NULL;                                                                           \
        }                                                                                          \
        Py_DECREF(v_);                                                                             \
    } while (0);
    XFER_STATUS_LIST(XPY_STATUS_)
#undef XPY_STATUS_
    return d;
}

static const char *const selection_names[] = {"all", "rows", "columns", "block", "user", "channel"};

/* A record's fields as [(name, type, count, offset), ...]; None for a scalar type. */
static PyObject *record_list(const xfer_record_t *r)
{
    PyObject *l;
    int i;
    if (!r)
        Py_RETURN_NONE;
    if (!(l = PyList_New(r->nfields)))
        return NULL;
    for (i = 0; i < r->nfields; i++) {
        const xfer_record_field_t *f = &r->fields[i];
        PyObject *t = Py_BuildValue("(ssIn)", f->name, xfer_type_name(f->type), (unsigned) f->count,
                                    (Py_ssize_t) f->offset);
        if (!t) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, t);
    }
    return l;
}

/* The validated workflow file as plain Python data. */
PyObject *xpy_config_dict(const xfer_config_t *cfg);
PyObject *xpy_config_dict(const xfer_config_t *cfg)
{
    PyObject *comps = PyList_New(0), *chans = PyList_New(0), *out = NULL;
    int i, j, k;
    if (!comps || !chans)
        goto fail;
    for (i = 0; i < cfg->ncomponents; i++) {
        const xfer_cfg_component_t *c = &cfg->components[i];
        PyObject *argv = PyList_New(0), *o;
        if (!argv)
            goto fail;
        for (j = 0; j < c->argc; j++) {
            PyObject *a = PyUnicode_DecodeFSDefault(c->argv[j]);
            if (!a || PyList_Append(argv, a) < 0) {
                Py_XDECREF(a);
                Py_DECREF(argv);
                goto fail;
            }
            Py_DECREF(a);
        }
        o = Py_BuildValue("{s:s,s:i,s:N}", "name", c->name, "nprocs", c->nprocs, "cmd", argv);
        if (!o || PyList_Append(comps, o) < 0) {
            Py_XDECREF(o);
            goto fail;
        }
        Py_DECREF(o);
    }
    for (i = 0; i < cfg->nchannels; i++) {
        const xfer_cfg_channel_t *c = &cfg->channels[i];
        PyObject *dsets = PyList_New(0), *o;
        if (!dsets)
            goto fail;
        for (j = 0; j < c->ndatasets; j++) {
            const xfer_cfg_dataset_t *d = &c->datasets[j];
            PyObject *dims = PyTuple_New(d->ndims), *e, *rec;
            if (!dims) {
                Py_DECREF(dsets);
                goto fail;
            }
            for (k = 0; k < d->ndims; k++)
                PyTuple_SET_ITEM(dims, k, PyLong_FromUnsignedLongLong(d->dims[k]));
            if (!(rec = record_list(d->record))) {
                Py_DECREF(dims);
                Py_DECREF(dsets);
                goto fail;
            }
            e = Py_BuildValue("{s:s,s:s,s:N,s:s,s:s,s:O,s:K,s:N}", "name", d->name, "type",
                              xfer_type_name(d->type), "dims", dims, "from",
                              cfg->components[d->from].name, "selection",
                              selection_names[d->selection], "joined",
                              d->joined ? Py_True : Py_False, "max_rows",
                              (unsigned long long) d->max_rows, "record", rec);
            if (!e || PyList_Append(dsets, e) < 0) {
                Py_XDECREF(e);
                Py_DECREF(dsets);
                goto fail;
            }
            Py_DECREF(e);
        }
        o = Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:i,s:s,s:N}", "name", c->name, "from",
                          cfg->components[c->from].name, "to", cfg->components[c->to].name,
                          "duplex", c->duplex == XFER_DUPLEX_FULL ? "full" : "half", "algorithm",
                          c->algorithm, "max_in_flight_steps", c->max_in_flight_steps, "selection",
                          selection_names[c->selection], "datasets", dsets);
        if (!o || PyList_Append(chans, o) < 0) {
            Py_XDECREF(o);
            goto fail;
        }
        Py_DECREF(o);
    }
    out = Py_BuildValue("{s:s,s:s,s:i,s:i,s:O,s:O}", "path", cfg->path, "workflow", cfg->workflow,
                        "timeout_ms", cfg->timeout_ms, "heartbeat_ms", cfg->heartbeat_ms,
                        "components", comps, "channels", chans);
fail:
    Py_XDECREF(comps);
    Py_XDECREF(chans);
    return out;
}

static PyObject *py_load_config(PyObject *self, PyObject *args)
{
    xfer_config_t *cfg = NULL;
    PyObject *path, *out;
    xfer_status_t st;
    (void) self;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
        return NULL;
    st = xfer_config_load(PyBytes_AS_STRING(path), &cfg);
    Py_DECREF(path);
    if (st != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    out = xpy_config_dict(cfg);
    xfer_config_free(&cfg);
    return out;
}

static PyObject *py_algorithms(PyObject *self, PyObject *noargs)
{
    PyObject *list;
    int n = 0, i;
    (void) self;
    (void) noargs;
    if (xfer_algorithm_count(&n) != XFER_SUCCESS)
        return xpy_raise(XFER_ERR_INTERNAL, "xfer_algorithm_count");
    list = PyList_New(0);
    for (i = 0; list && i < n; i++) {
        xfer_algo_info_t info;
        unsigned flags = 0, f;
        PyObject *names = PyList_New(0), *o;
        if (!names || xfer_algorithm_info(i, &info) != XFER_SUCCESS ||
            xfer_algorithm_flags(i, &flags) != XFER_SUCCESS) {
            Py_XDECREF(names);
            Py_DECREF(list);
            return names ? xpy_raise(XFER_ERR_INTERNAL, "xfer_algorithm_info") : NULL;
        }
        for (f = 1; f != 0 && f <= XFER_ALGO_FLAGS_ALL; f <<= 1) {
            const char *fname;
            if ((flags & f) && xfer_algorithm_flag_info(f, &fname, NULL) == XFER_SUCCESS) {
                PyObject *s = PyUnicode_FromString(fname);
                if (!s || PyList_Append(names, s) < 0) {
                    Py_XDECREF(s);
                    Py_DECREF(names);
                    Py_DECREF(list);
                    return NULL;
                }
                Py_DECREF(s);
            }
        }
        o = Py_BuildValue("{s:s,s:s,s:s,s:N}", "name", info.name, "summary", info.summary,
                          "restrictions", info.restrictions, "flags", names);
        if (!o || PyList_Append(list, o) < 0) {
            Py_XDECREF(o);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(o);
    }
    return list;
}

static PyObject *py_decompose(PyObject *self, PyObject *args)
{
    static const char *const modes[] = {"all", "rows", "columns", "block"};
    const char *mode;
    PyObject *dims_o, *start, *count;
    uint64_t dims[XFER_MAX_DIMS], s[XFER_MAX_DIMS], c[XFER_MAX_DIMS];
    int nranks, rank, nd, m, i;
    xfer_status_t st;
    (void) self;
    if (!PyArg_ParseTuple(args, "sOii", &mode, &dims_o, &nranks, &rank))
        return NULL;
    for (m = 0; m < 4 && strcmp(modes[m], mode) != 0; m++)
        ;
    if (m == 4)
        return xpy_invalid("decompose: mode %s: expected all, rows, columns or block", mode);
    nd = (int) PySequence_Size(dims_o);
    if (nd < 1 || nd > XFER_MAX_DIMS) {
        PyErr_Clear();
        return xpy_invalid("decompose: dims must have 1 to %d entries", XFER_MAX_DIMS);
    }
    if (!xpy_u64_seq(dims_o, nd, dims, "dims"))
        return NULL;
    st = xfer_decompose((xfer_selection_mode_t) m, nd, dims, nranks, rank, s, c);
    if (st != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    start = PyTuple_New(nd);
    count = PyTuple_New(nd);
    if (!start || !count) {
        Py_XDECREF(start);
        Py_XDECREF(count);
        return NULL;
    }
    for (i = 0; i < nd; i++) {
        PyTuple_SET_ITEM(start, i, PyLong_FromUnsignedLongLong(s[i]));
        PyTuple_SET_ITEM(count, i, PyLong_FromUnsignedLongLong(c[i]));
    }
    return Py_BuildValue("(NN)", start, count);
}

static PyMethodDef methods[] = {
    {"mpi_init", py_mpi_init, METH_VARARGS,
     "mpi_init(thread_level=MPI_THREAD_MULTIPLE) -> (provided, initialised_here)"},
    {"mpi_finalize", py_mpi_finalize, METH_NOARGS, "MPI_Finalize, when MPI is initialised."},
    {"mpi_state", py_mpi_state, METH_NOARGS, "(initialized, finalized, thread_level or -1)"},
    {"mpi_abort", py_mpi_abort, METH_VARARGS, "MPI_Abort(MPI_COMM_WORLD, code)"},
    {"mpi_library_version", py_mpi_library_version, METH_NOARGS, "MPI_Get_library_version"},
    {"comm_world", py_comm_world, METH_NOARGS, "Fortran handle of MPI_COMM_WORLD"},
    {"comm_info", py_comm_info, METH_VARARGS, "(rank, size, is_inter, remote_size)"},
    {"comm_split", py_comm_split, METH_VARARGS, "MPI_Comm_split; None for a negative color"},
    {"comm_dup", py_comm_dup, METH_VARARGS, "MPI_Comm_dup"},
    {"comm_free", py_comm_free, METH_VARARGS, "MPI_Comm_free"},
    {"intercomm_create", py_intercomm_create, METH_VARARGS,
     "MPI_Intercomm_create(local, local_leader, peer, remote_leader, tag)"},
    {"barrier", py_barrier, METH_VARARGS, "MPI_Barrier"},
    {"allreduce", py_allreduce, METH_VARARGS,
     "allreduce(array, op, comm) -> array: MPI_Allreduce with sum, min or max"},
    {"appnum", py_appnum, METH_NOARGS, "MPI_APPNUM of this process, or None"},
    {"status_name", py_status_name, METH_VARARGS, "(symbolic name, description) of a status"},
    {"load_config", py_load_config, METH_VARARGS, "the validated workflow file as a dict"},
    {"algorithms", py_algorithms, METH_NOARGS, "the algorithm registry as a list of dicts"},
    {"decompose", py_decompose, METH_VARARGS,
     "decompose(mode, dims, nranks, rank) -> (start, count)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT,
    "xfer._core",
    "libxfer's C API for Python; use the `xfer` package, which wraps it.",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL};

PyMODINIT_FUNC PyInit__core(void);
PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m, *st;
    import_array();
    m = PyModule_Create(&moddef);
    if (!m)
        return NULL;
    if (add_exceptions(m) < 0 || xpy_workflow_types_ready(m) < 0 || xpy_coll_add(m) < 0)
        goto fail;
    if (!(st = status_dict()) || PyModule_AddObject(m, "STATUS", st) < 0) {
        Py_XDECREF(st);
        goto fail;
    }
    if (PyModule_AddStringConstant(m, "LIBXFER_VERSION", XFER_VERSION_STRING) < 0 ||
        PyModule_AddStringConstant(m, "MPI_FLAVOR", XFER_MPI_FLAVOR) < 0 ||
        PyModule_AddIntConstant(m, "THREAD_SINGLE", MPI_THREAD_SINGLE) < 0 ||
        PyModule_AddIntConstant(m, "THREAD_FUNNELED", MPI_THREAD_FUNNELED) < 0 ||
        PyModule_AddIntConstant(m, "THREAD_SERIALIZED", MPI_THREAD_SERIALIZED) < 0 ||
        PyModule_AddIntConstant(m, "THREAD_MULTIPLE", MPI_THREAD_MULTIPLE) < 0 ||
        PyModule_AddIntConstant(m, "STEP_OK", XFER_STEP_OK) < 0 ||
        PyModule_AddIntConstant(m, "STEP_NOT_READY", XFER_STEP_NOT_READY) < 0 ||
        PyModule_AddIntConstant(m, "STEP_END_OF_STREAM", XFER_STEP_END_OF_STREAM) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
