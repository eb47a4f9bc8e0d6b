/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer._core: the module, its exceptions, libxfer's types and status codes, the workflow file
 * as a dict, the algorithm registry and decompositions. MPI and communicators are in mpi.c. */
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
            PyObject *dims = PyTuple_New(d->ndims), *var = PyTuple_New(d->ndims), *e, *rec;
            if (!dims || !var) {
                Py_XDECREF(dims);
                Py_XDECREF(var);
                Py_DECREF(dsets);
                goto fail;
            }
            for (k = 0; k < d->ndims; k++) {
                PyObject *v = d->variable >> k & 1u ? Py_True : Py_False;
                Py_INCREF(v);
                PyTuple_SET_ITEM(dims, k, PyLong_FromUnsignedLongLong(d->dims[k]));
                PyTuple_SET_ITEM(var, k, v);
            }
            if (!(rec = record_list(d->record))) {
                Py_DECREF(dims);
                Py_DECREF(var);
                Py_DECREF(dsets);
                goto fail;
            }
            e = Py_BuildValue("{s:s,s:s,s:N,s:s,s:s,s:O,s:N,s:K,s:N}", "name", d->name, "type",
                              xfer_type_name(d->type), "dims", dims, "from",
                              cfg->components[d->from].name, "selection",
                              selection_names[d->selection], "joined",
                              d->joined ? Py_True : Py_False, "variable", var, "max_rows",
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
    if (add_exceptions(m) < 0 || xpy_workflow_types_ready(m) < 0 || xpy_mpi_add(m) < 0 ||
        xpy_coll_add(m) < 0)
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
