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
        xpy_error(XFER_ERR_MPI, "MPI_Type_contiguous of %zd bytes failed", itemsize);
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

/* What both collectives check and hold: the buffers, their element size and counts, the
 * element type, the options. */
typedef struct coll_call {
    const char *name;
    Py_buffer sb, rb;
    Py_ssize_t isz, scount, rtotal;
    int rsize;
    MPI_Datatype t;
    xfer_coll_opts_t opts;
} coll_call_t;

static void call_end(coll_call_t *c)
{
    free_type(&c->t);
    release(&c->sb);
    release(&c->rb);
}

/* 1, or 0 with an exception set and nothing held. */
static int call_begin(coll_call_t *c, const char *name, PyObject *so, PyObject *ro, MPI_Comm comm,
                      const char *algorithm)
{
    char what[64];
    int inter = 0;
    memset(c, 0, sizeof(*c));
    c->name = name;
    c->t = MPI_DATATYPE_NULL;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || !inter) {
        xpy_error(XFER_ERR_NOT_INTERCOMM, "%s: comm is not an intercommunicator", name);
        return 0;
    }
    MPI_Comm_remote_size(comm, &c->rsize);
    snprintf(what, sizeof(what), "%s: sendbuf", name);
    if (!get_buffer(so, &c->sb, 0, what))
        return 0;
    snprintf(what, sizeof(what), "%s: recvbuf", name);
    if (!get_buffer(ro, &c->rb, 1, what) || !item_size(&c->sb, &c->rb, &c->isz))
        goto fail;
    c->scount = c->sb.obj ? c->sb.len / c->isz : 0;
    c->rtotal = c->rb.obj ? c->rb.len / c->isz : 0;
    if (c->scount > INT_MAX) {
        xpy_error(XFER_ERR_TOO_LARGE, "%s: sendbuf beyond INT_MAX elements", name);
        goto fail;
    }
    if (!item_type(c->isz, &c->t))
        goto fail;
    if (xfer_coll_opts_init(&c->opts) != XFER_SUCCESS) {
        xpy_error(XFER_ERR_INTERNAL, "%s: xfer_coll_opts_init failed", name);
        goto fail;
    }
    c->opts.algorithm = algorithm;
    return 1;
fail:
    call_end(c);
    return 0;
}

static PyObject *py_allgather_inter(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"sendbuf", "recvbuf", "comm", "algorithm", NULL};
    PyObject *so, *ro;
    const char *algorithm = NULL;
    MPI_Comm comm;
    coll_call_t c;
    xfer_status_t st;
    (void) self;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO&|z", kwlist, &so, &ro, xpy_comm_converter,
                                     &comm, &algorithm) ||
        !call_begin(&c, "allgather_inter", so, ro, comm, algorithm))
        return NULL;
    if (c.rtotal % c.rsize) {
        xpy_invalid("allgather_inter: recvbuf holds %zd elements, not a multiple of the %d "
                    "ranks of the other group",
                    c.rtotal, c.rsize);
        call_end(&c);
        return NULL;
    }
    if (c.rtotal / c.rsize > INT_MAX) {
        xpy_error(XFER_ERR_TOO_LARGE, "allgather_inter: more than INT_MAX elements per rank");
        call_end(&c);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS st = xfer_allgather_inter(
        c.sb.buf, (int) c.scount, c.t, c.rb.buf, (int) (c.rtotal / c.rsize), c.t, comm, &c.opts);
    Py_END_ALLOW_THREADS call_end(&c);
    if (st != XFER_SUCCESS)
        return xpy_raise(st, "allgather_inter");
    Py_RETURN_NONE;
}

static PyObject *py_allgatherv_inter(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"sendbuf", "recvbuf", "counts", "displs", "comm", "algorithm", NULL};
    PyObject *so, *ro, *co, *dobj, *result = NULL;
    const char *algorithm = NULL;
    MPI_Comm comm;
    coll_call_t c;
    xfer_status_t st;
    uint64_t *c64 = NULL, *d64 = NULL;
    int *counts = NULL, *displs = NULL, i;
    (void) self;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO&|z", kwlist, &so, &ro, &co, &dobj,
                                     xpy_comm_converter, &comm, &algorithm) ||
        !call_begin(&c, "allgatherv_inter", so, ro, comm, algorithm))
        return NULL;
    c64 = PyMem_Calloc((size_t) c.rsize, sizeof(uint64_t));
    d64 = PyMem_Calloc((size_t) c.rsize, sizeof(uint64_t));
    counts = PyMem_Calloc((size_t) c.rsize, sizeof(int));
    displs = PyMem_Calloc((size_t) c.rsize, sizeof(int));
    if (!c64 || !d64 || !counts || !displs) {
        PyErr_NoMemory();
        goto out;
    }
    if (!xpy_u64_seq(co, c.rsize, c64,
                     "allgatherv_inter: counts (one per rank of the other "
                     "group)"))
        goto out;
    if (dobj != Py_None && !xpy_u64_seq(dobj, c.rsize, d64,
                                        "allgatherv_inter: displs (one per rank of the other "
                                        "group)"))
        goto out;
    for (i = 1; dobj == Py_None && i < c.rsize; i++)
        d64[i] = d64[i - 1] + c64[i - 1];
    for (i = 0; i < c.rsize; i++) {
        if (c64[i] > INT_MAX || d64[i] > INT_MAX) {
            xpy_error(XFER_ERR_TOO_LARGE, "allgatherv_inter: a count or displacement beyond "
                                          "INT_MAX elements");
            goto out;
        }
        if (c64[i] && c64[i] + d64[i] > (uint64_t) c.rtotal) {
            xpy_invalid("allgatherv_inter: rank %d of the other group: counts[%d] = %llu at "
                        "displs[%d] = %llu ends past recvbuf's %zd elements",
                        i, i, (unsigned long long) c64[i], i, (unsigned long long) d64[i],
                        c.rtotal);
            goto out;
        }
        counts[i] = (int) c64[i];
        displs[i] = (int) d64[i];
    }
    Py_BEGIN_ALLOW_THREADS st = xfer_allgatherv_inter(c.sb.buf, (int) c.scount, c.t, c.rb.buf,
                                                      counts, displs, c.t, comm, &c.opts);
    Py_END_ALLOW_THREADS if (st != XFER_SUCCESS) xpy_raise(st, "allgatherv_inter");
    else result = Py_NewRef(Py_None);
out:
    call_end(&c);
    PyMem_Free(c64);
    PyMem_Free(d64);
    PyMem_Free(counts);
    PyMem_Free(displs);
    return result;
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
