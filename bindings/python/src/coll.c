/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer._core.allgather_inter / allgatherv_inter: the inter-group collectives on buffers.
 *
 * Buffers come through the buffer protocol, C-contiguous (the package makes contiguous copies
 * of other layouts). They move as elements of their item size (a contiguous MPI type of that
 * many bytes), so the counts are elements, as numpy users count, and the groups agree on bytes
 * as MPI's type matching requires of MPI_BYTE sequences. */
#include "core.h"

#include <limits.h>
#include <string.h>

/* A contiguous type of @p itemsize bytes (MPI_BYTE for 1); freed by free_type. */
static int item_type(Py_ssize_t itemsize, MPI_Datatype *t)
{
    if (itemsize == 1) {
        *t = MPI_BYTE;
        return 1;
    }
    if (MPI_Type_contiguous((int) itemsize, MPI_BYTE, t) != MPI_SUCCESS ||
        MPI_Type_commit(t) != MPI_SUCCESS) {
        xpy_raise(XFER_ERR_MPI, "MPI_Type_contiguous");
        return 0;
    }
    return 1;
}

static void free_type(MPI_Datatype *t)
{
    if (*t != MPI_BYTE && *t != MPI_DATATYPE_NULL)
        MPI_Type_free(t);
}

/* Get @p o's buffer (None: an empty one); writable for a receive buffer. */
static int get_buffer(PyObject *o, Py_buffer *b, int writable, const char *what)
{
    memset(b, 0, sizeof(*b));
    if (o == Py_None) {
        b->itemsize = 0;
        return 1;
    }
    if (PyObject_GetBuffer(
            o, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0) {
        PyErr_Clear();
        xpy_invalid("%s: expected %sC-contiguous buffer (a numpy array)", what,
                    writable ? "a writable " : "a ");
        return 0;
    }
    return 1;
}

static void release(Py_buffer *b)
{
    if (b->obj)
        PyBuffer_Release(b);
}

/* The element size both buffers share (one of them may be empty). */
static int item_size(const Py_buffer *s, const Py_buffer *r, Py_ssize_t *out)
{
    Py_ssize_t is = s->obj ? s->itemsize : 0, ir = r->obj ? r->itemsize : 0;
    if (is && ir && is != ir) {
        xpy_invalid("sendbuf has %zd-byte elements, recvbuf %zd-byte ones: use one dtype", is, ir);
        return 0;
    }
    *out = is ? is : ir ? ir : 1;
    return 1;
}

static int set_opts(xfer_coll_opts_t *o, const char *algorithm)
{
    if (xfer_coll_opts_init(o) != XFER_SUCCESS) {
        xpy_raise(XFER_ERR_INTERNAL, "xfer_coll_opts_init");
        return 0;
    }
    o->algorithm = algorithm;
    return 1;
}

static PyObject *py_allgather_inter(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"sendbuf", "recvbuf", "comm", "algorithm", NULL};
    PyObject *so, *ro;
    const char *algorithm = NULL;
    MPI_Comm comm;
    Py_buffer sb, rb;
    Py_ssize_t isz, scount, rtotal;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    xfer_coll_opts_t opts;
    xfer_status_t st;
    int inter = 0, rsize = 0;
    (void) self;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO&|z", kwlist, &so, &ro, xpy_comm_converter,
                                     &comm, &algorithm))
        return NULL;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || !inter)
        return xpy_raise(XFER_ERR_NOT_INTERCOMM, "allgather_inter: comm is not an "
                                                 "intercommunicator");
    MPI_Comm_remote_size(comm, &rsize);
    if (!get_buffer(so, &sb, 0, "allgather_inter: sendbuf"))
        return NULL;
    if (!get_buffer(ro, &rb, 1, "allgather_inter: recvbuf")) {
        release(&sb);
        return NULL;
    }
    if (!item_size(&sb, &rb, &isz))
        goto fail;
    scount = sb.obj ? sb.len / isz : 0;
    rtotal = rb.obj ? rb.len / isz : 0;
    if (rtotal % rsize) {
        xpy_invalid("allgather_inter: recvbuf holds %zd elements, not a multiple of the %d "
                    "ranks of the other group",
                    rtotal, rsize);
        goto fail;
    }
    if (scount > INT_MAX || rtotal / rsize > INT_MAX) {
        xpy_raise(XFER_ERR_TOO_LARGE, "allgather_inter: more than INT_MAX elements per rank");
        goto fail;
    }
    if (!item_type(isz, &t) || !set_opts(&opts, algorithm))
        goto fail;
    Py_BEGIN_ALLOW_THREADS st = xfer_allgather_inter(sb.buf, (int) scount, t, rb.buf,
                                                     (int) (rtotal / rsize), t, comm, &opts);
    Py_END_ALLOW_THREADS free_type(&t);
    release(&sb);
    release(&rb);
    if (st != XFER_SUCCESS)
        return xpy_raise(st, "allgather_inter");
    Py_RETURN_NONE;
fail:
    free_type(&t);
    release(&sb);
    release(&rb);
    return NULL;
}

static PyObject *py_allgatherv_inter(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"sendbuf", "recvbuf", "counts", "displs", "comm", "algorithm", NULL};
    PyObject *so, *ro, *co, *dobj;
    const char *algorithm = NULL;
    MPI_Comm comm;
    Py_buffer sb, rb;
    Py_ssize_t isz, scount, rtotal;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    xfer_coll_opts_t opts;
    xfer_status_t st;
    uint64_t *c64 = NULL, *d64 = NULL;
    int *counts = NULL, *displs = NULL, inter = 0, rsize = 0, i;
    (void) self;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO&|z", kwlist, &so, &ro, &co, &dobj,
                                     xpy_comm_converter, &comm, &algorithm))
        return NULL;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || !inter)
        return xpy_raise(XFER_ERR_NOT_INTERCOMM, "allgatherv_inter: comm is not an "
                                                 "intercommunicator");
    MPI_Comm_remote_size(comm, &rsize);
    c64 = PyMem_Calloc((size_t) rsize, sizeof(uint64_t));
    d64 = PyMem_Calloc((size_t) rsize, sizeof(uint64_t));
    counts = PyMem_Calloc((size_t) rsize, sizeof(int));
    displs = PyMem_Calloc((size_t) rsize, sizeof(int));
    if (!c64 || !d64 || !counts || !displs) {
        PyMem_Free(c64);
        PyMem_Free(d64);
        PyMem_Free(counts);
        PyMem_Free(displs);
        return PyErr_NoMemory();
    }
    memset(&sb, 0, sizeof(sb));
    memset(&rb, 0, sizeof(rb));
    if (!xpy_u64_seq(co, rsize, c64,
                     "allgatherv_inter: counts (one per rank of the other "
                     "group)"))
        goto fail;
    if (dobj != Py_None && !xpy_u64_seq(dobj, rsize, d64,
                                        "allgatherv_inter: displs (one per rank of the other "
                                        "group)"))
        goto fail;
    if (dobj == Py_None)
        for (i = 1; i < rsize; i++)
            d64[i] = d64[i - 1] + c64[i - 1];
    if (!get_buffer(so, &sb, 0, "allgatherv_inter: sendbuf") ||
        !get_buffer(ro, &rb, 1, "allgatherv_inter: recvbuf"))
        goto fail;
    if (!item_size(&sb, &rb, &isz))
        goto fail;
    scount = sb.obj ? sb.len / isz : 0;
    rtotal = rb.obj ? rb.len / isz : 0;
    for (i = 0; i < rsize; i++) {
        if (c64[i] > INT_MAX || d64[i] > INT_MAX) {
            xpy_raise(XFER_ERR_TOO_LARGE, "allgatherv_inter: a count or displacement beyond "
                                          "INT_MAX elements");
            goto fail;
        }
        if (c64[i] && c64[i] + d64[i] > (uint64_t) rtotal) {
            xpy_invalid("allgatherv_inter: rank %d of the other group: counts[%d] = %llu at "
                        "displs[%d] = %llu ends past recvbuf's %zd elements",
                        i, i, (unsigned long long) c64[i], i, (unsigned long long) d64[i], rtotal);
            goto fail;
        }
        counts[i] = (int) c64[i];
        displs[i] = (int) d64[i];
    }
    if (scount > INT_MAX) {
        xpy_raise(XFER_ERR_TOO_LARGE, "allgatherv_inter: sendbuf beyond INT_MAX elements");
        goto fail;
    }
    if (!item_type(isz, &t) || !set_opts(&opts, algorithm))
        goto fail;
    Py_BEGIN_ALLOW_THREADS st =
        xfer_allgatherv_inter(sb.buf, (int) scount, t, rb.buf, counts, displs, t, comm, &opts);
    Py_END_ALLOW_THREADS free_type(&t);
    release(&sb);
    release(&rb);
    PyMem_Free(c64);
    PyMem_Free(d64);
    PyMem_Free(counts);
    PyMem_Free(displs);
    if (st != XFER_SUCCESS)
        return xpy_raise(st, "allgatherv_inter");
    Py_RETURN_NONE;
fail:
    free_type(&t);
    release(&sb);
    release(&rb);
    PyMem_Free(c64);
    PyMem_Free(d64);
    PyMem_Free(counts);
    PyMem_Free(displs);
    return NULL;
}

PyMethodDef xpy_coll_methods[] = {
    {"allgather_inter", (PyCFunction) (void (*)(void)) py_allgather_inter,
     METH_VARARGS | METH_KEYWORDS,
     "allgather_inter(sendbuf, recvbuf, comm, algorithm=None): MPI_Allgather on an "
     "intercommunicator with libxfer's algorithms."},
    {"allgatherv_inter", (PyCFunction) (void (*)(void)) py_allgatherv_inter,
     METH_VARARGS | METH_KEYWORDS,
     "allgatherv_inter(sendbuf, recvbuf, counts, displs, comm, algorithm=None): MPI_Allgatherv "
     "on an intercommunicator; counts and displs in elements, one per rank of the other group "
     "(displs None: packed in rank order)."},
    {NULL, NULL, 0, NULL}};

int xpy_coll_add(PyObject *m)
{
    return PyModule_AddFunctions(m, xpy_coll_methods);
}
