/* SPDX-License-Identifier: BSD-3-Clause */
/* Channel.put: a sending rank's block of a dataset for the current step, from a numpy array (or
 * what numpy converts), checked against the dataset before anything is sent: its dtype (a
 * record's layout), its shape, a joined dataset's rows, a variable one's step shape (shape=).
 * A C-contiguous array is handed to xfer_put as it is; a bound dataset's arrays are kept alive
 * until the step ends. */
#include "channel.h"

#include <string.h>

/* ---- Channel: put --------------------------------------------------------------------------- */

/* @p data as an array of the dataset's type: arrays must have it already; other objects (lists,
 * scalars; a record's tuples) are converted when numpy's same_kind casting allows. New
 * reference. */
static PyArrayObject *as_array(XpyChannel *self, const xfer_cfg_dataset_t *ds, PyObject *data)
{
    PyArrayObject *arr;
    if (PyArray_Check(data)) {
        arr = (PyArrayObject *) data;
        /* (a record's dtype is checked by the put, which reads its layout) */
        if (ds->type != XFER_TYPE_RECORD && !xpy_check_dtype(self, ds, arr, "the block"))
            return NULL;
        Py_INCREF(arr);
        return arr;
    }
    if (ds->type == XFER_TYPE_RECORD) { /* tuples of the fields, in the declared order */
        PyArray_Descr *rd = xpy_ds_dtype(ds);
        return rd ? (PyArrayObject *) PyArray_FromAny(
                        data, rd, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL)
                  : NULL;
    }
    arr = (PyArrayObject *) PyArray_FROM_O(data);
    if (!arr)
        return NULL;
    {
        PyArray_Descr *to = PyArray_DescrFromType(xpy_npy_type(ds->type));
        PyArrayObject *cast;
        if (!to) {
            Py_DECREF(arr);
            return NULL;
        }
        if (!PyArray_CanCastArrayTo(arr, to, NPY_SAME_KIND_CASTING)) {
            xpy_invalid("channel %s: dataset %s: cannot convert %s values to %s without losing "
                        "their kind; nothing was sent",
                        self->cfg->name, ds->name, PyArray_DESCR(arr)->typeobj->tp_name,
                        xfer_type_name(ds->type));
            Py_DECREF(to);
            Py_DECREF(arr);
            return NULL;
        }
        cast = (PyArrayObject *) PyArray_FromArray(
            arr, to, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST);
        Py_DECREF(arr);
        return cast;
    }
}

/* A joined dataset's block: @p arr holds this rank's rows of the step, shape (rows, *the row's
 * shape), any number of rows (0 included); into @p d's dims (dims[0] 0) and count. */
static int joined_rows(XpyChannel *self, const xfer_cfg_dataset_t *ds, PyArrayObject *arr,
                       xfer_dataset_desc_t *d)
{
    int i, ok = PyArray_NDIM(arr) == ds->ndims;
    for (i = 1; ok && i < ds->ndims; i++)
        ok = (uint64_t) PyArray_DIM(arr, i) == ds->dims[i];
    if (!ok) {
        char got[128], want[160];
        size_t o = (size_t) snprintf(want, sizeof(want), "(rows");
        for (i = 1; i < ds->ndims && o < sizeof(want); i++)
            o += (size_t) snprintf(want + o, sizeof(want) - o, ", %llu",
                                   (unsigned long long) ds->dims[i]);
        if (o < sizeof(want))
            snprintf(want + o, sizeof(want) - o, "%s)", ds->ndims == 1 ? "," : "");
        xpy_fmt_shape(got, sizeof(got), PyArray_NDIM(arr), PyArray_SHAPE(arr), NULL);
        xpy_invalid("channel %s: dataset %s is joined: the block has shape %s, this rank's rows "
                    "are an array of shape %s (any number of rows, 0 included); nothing was sent",
                    self->cfg->name, ds->name, got, want);
        return 0;
    }
    d->dims[0] = 0;
    for (i = 0; i < ds->ndims; i++)
        d->count[i] = (uint64_t) PyArray_DIM(arr, i);
    return 1;
}

/* "(variable, 4)": dataset @p ds's shape as the workflow file gives it. */
static void file_shape(char *buf, size_t len, const xfer_cfg_dataset_t *ds)
{
    size_t o = (size_t) snprintf(buf, len, "(");
    int i;
    for (i = 0; i < ds->ndims && o < len; i++) {
        const char *sep = i ? ", " : "";
        if (i == 0 && ds->joined)
            o += (size_t) snprintf(buf + o, len - o, "%sjoined", sep);
        else if (ds->variable >> i & 1u)
            o += (size_t) snprintf(buf + o, len - o, "%svariable", sep);
        else
            o += (size_t) snprintf(buf + o, len - o, "%s%llu", sep,
                                   (unsigned long long) ds->dims[i]);
    }
    if (o < len)
        snprintf(buf + o, len - o, "%s)", ds->ndims == 1 ? "," : "");
}

PyObject *xpy_ch_put(XpyChannel *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", "data", "start", "shape", NULL};
    const char *name;
    PyObject *data, *start_o = Py_None, *shape_o = Py_None, *bound;
    const xfer_cfg_dataset_t *ds;
    PyArrayObject *arr = NULL, *cont = NULL;
    xfer_record_field_t fields[XFER_RECORD_MAX_FIELDS];
    xfer_record_t layout;
    xfer_dataset_desc_t d;
    xfer_status_t st;
    int sends, nd, i;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "sO|OO", kwlist, &name, &data, &start_o, &shape_o))
        return NULL;
    if (!xpy_ch_usable(self) || !(ds = xpy_ch_dataset(self, name, &sends)))
        return NULL;
    if (!sends)
        return xpy_invalid("channel %s: dataset %s is received by %s, not sent: nothing was sent",
                           self->cfg->name, name, self->wf->cfg->components[self->wf->comp].name);
    if (ds->joined && start_o != Py_None)
        return xpy_invalid("channel %s: dataset %s is joined: a put gives this rank's rows (the "
                           "array's first dimension) and no start; nothing was sent",
                           self->cfg->name, name);
    if (ds->joined && shape_o != Py_None)
        return xpy_invalid("channel %s: dataset %s is joined: a put gives this rank's rows (the "
                           "array's first dimension) and no shape (a step's rows are every "
                           "sending rank's together); nothing was sent",
                           self->cfg->name, name);
    if (ds->variable && start_o != Py_None && shape_o == Py_None) {
        char want[160];
        file_shape(want, sizeof(want), ds);
        return xpy_invalid("channel %s: dataset %s has a variable shape, %s: a block at a start= "
                           "is put with shape=, the step's global shape (every sending rank "
                           "gives the same); nothing was sent",
                           self->cfg->name, name, want);
    }
    if (!(arr = as_array(self, ds, data)))
        return NULL;
    nd = ds->ndims;
    memset(&d, 0, sizeof(d));
    /* a record's layout as the array's dtype gives it: libxfer checks it against the file too */
    if (ds->type == XFER_TYPE_RECORD) {
        if (!xpy_check_record(self, ds, PyArray_DESCR(arr), "the block", &layout, fields)) {
            Py_DECREF(arr);
            return NULL;
        }
        d.record = &layout;
    }
    d.name = ds->name;
    d.type = ds->type;
    d.ndims = nd;
    memcpy(d.dims, ds->dims, (size_t) nd * sizeof(uint64_t));
    /* the step's global shape: a variable one's extents are the put's (libxfer checks the fixed
     * ones, and at the commit that every sending rank gave the same) */
    if (shape_o != Py_None && !xpy_u64_seq(shape_o, nd, d.dims, "shape")) {
        Py_DECREF(arr);
        return NULL;
    }
    if (ds->joined) {
        if (!joined_rows(self, ds, arr, &d)) {
            Py_DECREF(arr);
            return NULL;
        }
    } else if (PyArray_NDIM(arr) == 0) { /* a scalar: a block of one element */
        for (i = 0; i < nd; i++)
            d.count[i] = 1;
    } else if (PyArray_NDIM(arr) != nd) {
        char got[128], want[160];
        const int got_nd = PyArray_NDIM(arr);
        xpy_fmt_shape(got, sizeof(got), got_nd, PyArray_SHAPE(arr), NULL);
        file_shape(want, sizeof(want), ds);
        Py_DECREF(arr);
        return xpy_invalid("channel %s: dataset %s: the block has shape %s, %d dimension%s; the "
                           "dataset has %d, shape %s; nothing was sent",
                           self->cfg->name, name, got, got_nd, got_nd == 1 ? "" : "s", nd, want);
    } else {
        for (i = 0; i < nd; i++)
            d.count[i] = (uint64_t) PyArray_DIM(arr, i);
    }
    if (ds->variable && shape_o == Py_None) /* (and no start) the block is the whole step */
        memcpy(d.dims, d.count, (size_t) nd * sizeof(uint64_t));
    if (start_o != Py_None) {
        if (!xpy_u64_seq(start_o, nd, d.start, "start")) {
            Py_DECREF(arr);
            return NULL;
        }
    } else if (!ds->joined) {
        for (i = 0; i < nd; i++)
            if (d.count[i] != d.dims[i]) {
                char got[128], want[128];
                xpy_fmt_shape(got, sizeof(got), nd, NULL, d.count);
                xpy_fmt_shape(want, sizeof(want), nd, NULL, d.dims);
                Py_DECREF(arr);
                return xpy_invalid("channel %s: dataset %s: a block of shape %s is part of the "
                                   "%s %s: give its start= (its offset in each dimension); "
                                   "nothing was sent",
                                   self->cfg->name, name, got,
                                   shape_o != Py_None ? "step's shape" : "dataset's", want);
            }
    }
    if (PyArray_IS_C_CONTIGUOUS(arr) && PyArray_ISALIGNED(arr)) {
        cont = arr;
        Py_INCREF(cont);
    } else if (!(cont = (PyArrayObject *) PyArray_NewCopy(arr, NPY_CORDER))) {
        Py_DECREF(arr);
        return NULL;
    }
    Py_DECREF(arr);
    Py_BEGIN_ALLOW_THREADS st = xfer_put(self->ch, &d, PyArray_DATA(cont));
    Py_END_ALLOW_THREADS if (st != XFER_SUCCESS)
    {
        Py_DECREF(cont);
        return xpy_raise(st, NULL);
    }
    self->touched = 1;
    /* a bound dataset is sent straight from the block until the step ends: keep it alive */
    bound = PyDict_GetItemString(self->bound, name);
    if (bound && PyList_Append(self->held, (PyObject *) cont) < 0) {
        Py_DECREF(cont);
        return NULL;
    }
    Py_DECREF(cont);
    Py_RETURN_NONE;
}
