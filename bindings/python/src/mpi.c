/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer._core: MPI start-up and communicators as Fortran handles.
 *
 * Communicators cross the Python boundary as MPI Fortran handles (MPI_Comm_c2f): a plain int
 * that means the same to libxfer, to mpi4py (Comm.py2f / Comm.f2py) and to a Fortran code,
 * whatever the MPI library's C handle type is. */
#include "core.h"

#include <string.h>

/* ---- MPI ---------------------------------------------------------------------------------- */

int xpy_mpi_ready(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        return 1;
    xpy_error(XFER_ERR_STATE, fin ? "MPI was finalized: libxfer cannot be used any more"
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
        return xpy_error(XFER_ERR_STATE, "MPI was finalized and cannot be initialised again");
    if (init) {
        MPI_Query_thread(&provided);
        return Py_BuildValue("(ii)", provided, 0);
    }
    Py_BEGIN_ALLOW_THREADS rc = MPI_Init_thread(NULL, NULL, want, &provided);
    Py_END_ALLOW_THREADS if (rc != MPI_SUCCESS) return xpy_error(XFER_ERR_MPI,
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
        return xpy_error(XFER_ERR_MPI, "MPI_Finalize failed");
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
        return xpy_error(XFER_ERR_MPI, "MPI_Get_library_version failed");
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
    return xpy_error(XFER_ERR_MPI, "%s", msg);
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

PyMethodDef xpy_mpi_methods[] = {
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
    {NULL, NULL, 0, NULL}};

int xpy_mpi_add(PyObject *m)
{
    return PyModule_AddFunctions(m, xpy_mpi_methods);
}
