/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer._core: the module, libxfer's status codes, the workflow file, the algorithm registry and
 * decompositions. Its exceptions are in errors.c, the conversions (types, the workflow file as
 * a dict) in convert.c, MPI and communicators in mpi.c. */
#define XFER_PY_MODULE_C
#include "core.h"

#include <stdarg.h>
#include <string.h>

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

/* The libxfer this module loaded, which may not be the one it was compiled against. */
static PyObject *py_library(PyObject *self, PyObject *noargs)
{
    const char *version = NULL, *flavor = NULL, *path = NULL;
    (void) self;
    (void) noargs;
    if (xfer_library_version(&version, &flavor) != XFER_SUCCESS)
        return xpy_raise(XFER_ERR_INTERNAL, "xfer_library_version");
    if (xfer_library_path(&path) != XFER_SUCCESS)
        path = NULL;
    return Py_BuildValue("{s:s,s:s,s:z}", "version", version, "mpi_flavor", flavor, "path", path);
}

static PyMethodDef methods[] = {
    {"library", py_library, METH_NOARGS,
     "the loaded libxfer: {'version', 'mpi_flavor', 'path' (None when unknown)}"},
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
    if (xpy_exceptions_add(m) < 0 || xpy_workflow_types_ready(m) < 0 || xpy_mpi_add(m) < 0 ||
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
