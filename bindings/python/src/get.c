/* SPDX-License-Identifier: BSD-3-Clause */
/* A receiving rank's calls of Channel: get (into a new, a given or the bound array), the step's
 * shape and each sender's rows (joined datasets), selections and bound buffers. */
#include "channel.h"

#include <string.h>

/* ---- Channel: get --------------------------------------------------------------------------- */

static PyObject *u64_tuple(int n, const uint64_t *v)
{
    PyObject *t = PyTuple_New(n);
    int i;
    for (i = 0; t && i < n; i++)
        PyTuple_SET_ITEM(t, i, PyLong_FromUnsignedLongLong(v[i]));
    return t;
}

static uint64_t volume(int nd, const uint64_t *c)
{
    uint64_t v = 1;
    int i;
    for (i = 0; i < nd; i++)
        v *= c[i];
    return v;
}

/* The box of a get: the rank's selection (start/count None), or the one given. A joined
 * dataset's selection is the step's: it waits for the step (as the get would). */
static int get_box(XpyChannel *self, const xfer_cfg_dataset_t *ds, PyObject *start_o,
                   PyObject *count_o, uint64_t *start, uint64_t *count, int *given)
{
    xfer_status_t st;
    *given = start_o != Py_None || count_o != Py_None;
    if (*given) {
        if (start_o == Py_None || count_o == Py_None) {
            xpy_invalid("channel %s: dataset %s: give both start and count, or neither (the "
                        "rank's selection)",
                        self->cfg->name, ds->name);
            return 0;
        }
        return xpy_u64_seq(start_o, ds->ndims, start, "start") &&
               xpy_u64_seq(count_o, ds->ndims, count, "count");
    }
    if (ds->joined || ds->variable) {
        xfer_dataset_desc_t d;
        Py_BEGIN_ALLOW_THREADS st = xfer_get_shape(self->ch, ds->name, &d);
        Py_END_ALLOW_THREADS if (st != XFER_SUCCESS)
        {
            xpy_raise(st, NULL);
            return 0;
        }
        memcpy(start, d.start, (size_t) ds->ndims * sizeof(uint64_t));
        memcpy(count, d.count, (size_t) ds->ndims * sizeof(uint64_t));
        return 1;
    }
    st = xfer_selection_of(self->ch, ds->name, start, count);
    if (st != XFER_SUCCESS) {
        xpy_raise(st, NULL);
        return 0;
    }
    return 1;
}

/* A joined or variable dataset's step lands packed at the start of the bound array @p b when its
 * selection fits (libxfer's rule, by bytes): a view of @p b's first elements in the selection's
 * @p shape (a joined one's first rows when @p b holds rows of the selection's columns). New
 * reference. */
static PyArrayObject *bound_view(PyArrayObject *b, int nd, npy_intp *shape)
{
    PyArray_Descr *dt = PyArray_DESCR(b);
    PyArrayObject *v;
    Py_INCREF(dt);
    v = (PyArrayObject *) PyArray_NewFromDescr(&PyArray_Type, dt, nd, shape, NULL, PyArray_DATA(b),
                                               NPY_ARRAY_CARRAY, NULL);
    if (!v)
        return NULL;
    Py_INCREF(b);
    if (PyArray_SetBaseObject(v, (PyObject *) b) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

/* A new array of dataset @p ds's dtype and @p shape. */
static PyArrayObject *new_array(const xfer_cfg_dataset_t *ds, int nd, npy_intp *shape)
{
    PyArray_Descr *dt = xpy_ds_dtype(ds);
    if (!dt)
        return NULL;
    return (PyArrayObject *) PyArray_NewFromDescr(&PyArray_Type, dt, nd, shape, NULL, NULL, 0,
                                                  NULL);
}

PyObject *xpy_ch_get(XpyChannel *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", "out", "start", "count", NULL};
    const char *name;
    PyObject *out_o = Py_None, *start_o = Py_None, *count_o = Py_None, *bound;
    const xfer_cfg_dataset_t *ds;
    uint64_t start[XFER_MAX_DIMS], count[XFER_MAX_DIMS];
    npy_intp shape[XFER_MAX_DIMS];
    PyArrayObject *dst = NULL, *result;
    xfer_dataset_desc_t d;
    xfer_status_t st;
    size_t bytes;
    int sends, given, nd, i, direct, dyn;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|OOO", kwlist, &name, &out_o, &start_o, &count_o))
        return NULL;
    if (!xpy_ch_usable(self) || !(ds = xpy_ch_dataset(self, name, &sends)))
        return NULL;
    if (sends)
        return xpy_invalid("channel %s: dataset %s is sent by %s (this component), not received",
                           self->cfg->name, name, self->wf->cfg->components[self->wf->comp].name);
    nd = ds->ndims;
    dyn = ds->joined || ds->variable;
    if (!get_box(self, ds, start_o, count_o, start, count, &given))
        return NULL;
    for (i = 0; i < nd; i++)
        shape[i] = (npy_intp) count[i];
    bytes = (size_t) volume(nd, count) * xfer_cfg_dataset_esize(ds);
    bound = PyDict_GetItemString(self->bound, name);

    if (out_o == Py_None && bound && !given &&
        (!dyn || bytes <= (size_t) PyArray_NBYTES((PyArrayObject *) PyList_GET_ITEM(bound, 0)))) {
        /* the step is in the bound buffer: no copy (a joined or variable one's: packed first) */
        PyArrayObject *b = (PyArrayObject *) PyList_GET_ITEM(bound, 0);
        if (dyn) {
            result = bound_view(b, nd, shape);
        } else {
            result = b;
            Py_INCREF(result);
        }
        if (!result)
            return NULL;
        dst = result;
        direct = 1;
    } else if (out_o == Py_None) {
        if (!(result = new_array(ds, nd, shape)))
            return NULL;
        dst = result;
        direct = 1;
    } else {
        if (!PyArray_Check(out_o))
            return xpy_invalid("channel %s: dataset %s: out must be a numpy array, got %s; "
                               "nothing was received",
                               self->cfg->name, name, Py_TYPE(out_o)->tp_name);
        result = (PyArrayObject *) out_o;
        if (!PyArray_ISWRITEABLE(result))
            return xpy_invalid("channel %s: dataset %s: the output array is not writable; "
                               "nothing was received",
                               self->cfg->name, name);
        if (!xpy_check_dtype(self, ds, result, "the output array"))
            return NULL;
        if (PyArray_NDIM(result) != nd || !PyArray_CompareLists(PyArray_SHAPE(result), shape, nd)) {
            char got[128], want[128];
            xpy_fmt_shape(got, sizeof(got), PyArray_NDIM(result), PyArray_SHAPE(result), NULL);
            xpy_fmt_shape(want, sizeof(want), nd, NULL, count);
            return xpy_invalid("channel %s: dataset %s: the output array has shape %s, the "
                               "selection %s; nothing was received",
                               self->cfg->name, name, got, want);
        }
        Py_INCREF(result);
        direct = PyArray_IS_C_CONTIGUOUS(result) && PyArray_ISALIGNED(result);
        if (direct) {
            dst = result;
        } else if (!(dst = new_array(ds, nd, shape))) {
            Py_DECREF(result);
            return NULL;
        }
    }
    Py_BEGIN_ALLOW_THREADS st = xfer_get_selection(
        self->ch, name, given ? start : NULL, given ? count : NULL, PyArray_DATA(dst), bytes, &d);
    Py_END_ALLOW_THREADS if (st == XFER_SUCCESS && !direct && PyArray_CopyInto(result, dst) < 0)
    {
        Py_DECREF(dst);
        Py_DECREF(result);
        return NULL;
    }
    if (!direct)
        Py_DECREF(dst);
    if (st != XFER_SUCCESS) {
        Py_DECREF(result);
        return xpy_raise(st, NULL);
    }
    self->touched = 1;
    return (PyObject *) result;
}

/* ---- Channel: selections and bound buffers ------------------------------------------------- */

PyObject *xpy_ch_select(XpyChannel *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", "start", "count", NULL};
    const char *name;
    PyObject *start_o = Py_None, *count_o = Py_None;
    const xfer_cfg_dataset_t *ds;
    uint64_t start[XFER_MAX_DIMS], count[XFER_MAX_DIMS];
    xfer_status_t st;
    int sends;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|OO", kwlist, &name, &start_o, &count_o))
        return NULL;
    if (!xpy_ch_usable(self) || !(ds = xpy_ch_dataset(self, name, &sends)))
        return NULL;
    if ((start_o == Py_None) != (count_o == Py_None))
        return xpy_invalid("channel %s: dataset %s: give both start and count, or neither (the "
                           "whole dataset)",
                           self->cfg->name, name);
    if (start_o != Py_None && (!xpy_u64_seq(start_o, ds->ndims, start, "start") ||
                               !xpy_u64_seq(count_o, ds->ndims, count, "count")))
        return NULL;
    st = xfer_select(self->ch, name, start_o == Py_None ? NULL : start,
                     start_o == Py_None ? NULL : count);
    if (st != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    Py_RETURN_NONE;
}

PyObject *xpy_ch_selection(XpyChannel *self, PyObject *args)
{
    const char *name;
    const xfer_cfg_dataset_t *ds;
    uint64_t start[XFER_MAX_DIMS], count[XFER_MAX_DIMS];
    xfer_status_t st;
    int sends;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    if (!xpy_ch_usable(self) || !(ds = xpy_ch_dataset(self, name, &sends)))
        return NULL;
    st = xfer_selection_of(self->ch, name, start, count);
    if (st != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    return Py_BuildValue("(NN)", u64_tuple(ds->ndims, start), u64_tuple(ds->ndims, count));
}

/* The step's shape of a received dataset: (dims, start, count, step), waiting for the step. */
PyObject *xpy_ch_get_shape(XpyChannel *self, PyObject *args)
{
    const char *name;
    const xfer_cfg_dataset_t *ds;
    xfer_dataset_desc_t d;
    xfer_status_t st;
    int sends;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    if (!xpy_ch_usable(self) || !(ds = xpy_ch_dataset(self, name, &sends)))
        return NULL;
    Py_BEGIN_ALLOW_THREADS st = xfer_get_shape(self->ch, name, &d);
    Py_END_ALLOW_THREADS if (st != XFER_SUCCESS) return xpy_raise(st, NULL);
    self->touched = 1;
    return Py_BuildValue("(NNNK)", u64_tuple(d.ndims, d.dims), u64_tuple(d.ndims, d.start),
                         u64_tuple(d.ndims, d.count), (unsigned long long) d.step);
}

/* Each sending rank's rows of a joined dataset in this step: a new uint64 array. */
PyObject *xpy_ch_get_rows(XpyChannel *self, PyObject *args)
{
    const char *name;
    const xfer_cfg_dataset_t *ds;
    PyArrayObject *rows;
    uint64_t none[1]; /* (rows may be NULL with n 0, but memcpy's arguments may not) */
    xfer_status_t st;
    npy_intp n;
    int sends, nsenders = 0;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    if (!xpy_ch_usable(self) || !(ds = xpy_ch_dataset(self, name, &sends)))
        return NULL;
    Py_BEGIN_ALLOW_THREADS st = xfer_get_rows(self->ch, name, none, 0, &nsenders);
    Py_END_ALLOW_THREADS if (st != XFER_SUCCESS) return xpy_raise(st, NULL);
    n = (npy_intp) nsenders;
    if (!(rows = (PyArrayObject *) PyArray_SimpleNew(1, &n, NPY_UINT64)))
        return NULL;
    if ((st = xfer_get_rows(self->ch, name, PyArray_DATA(rows), nsenders, NULL)) != XFER_SUCCESS) {
        Py_DECREF(rows);
        return xpy_raise(st, NULL);
    }
    self->touched = 1;
    return (PyObject *) rows;
}

PyObject *xpy_ch_dtype_of(XpyChannel *self, PyObject *args)
{
    const char *name;
    const xfer_cfg_dataset_t *ds;
    int sends;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    if (!xpy_ch_usable(self) || !(ds = xpy_ch_dataset(self, name, &sends)))
        return NULL;
    return (PyObject *) xpy_ds_dtype(ds);
}

PyObject *xpy_ch_bind(XpyChannel *self, PyObject *args)
{
    const char *name;
    PyArrayObject *arr;
    PyObject *entry;
    const xfer_cfg_dataset_t *ds;
    xfer_status_t st;
    int sends;
    if (!PyArg_ParseTuple(args, "sO!", &name, &PyArray_Type, &arr))
        return NULL;
    if (!xpy_ch_usable(self) || !(ds = xpy_ch_dataset(self, name, &sends)))
        return NULL;
    if (!xpy_check_dtype(self, ds, arr, sends ? "the block" : "the output array"))
        return NULL;
    if (!PyArray_IS_C_CONTIGUOUS(arr) || !PyArray_ISALIGNED(arr))
        return xpy_invalid("channel %s: dataset %s: a bound buffer must be C-contiguous and "
                           "aligned (numpy.ascontiguousarray)",
                           self->cfg->name, name);
    if (!sends && !PyArray_ISWRITEABLE(arr))
        return xpy_invalid("channel %s: dataset %s: a bound receive buffer must be writable",
                           self->cfg->name, name);
    if (!sends && ds->joined) { /* get returns its first rows: any number of rows */
        uint64_t start[XFER_MAX_DIMS], box[XFER_MAX_DIMS];
        int i, whole = PyArray_NDIM(arr) == ds->ndims, boxed;
        /* whole rows, or rows of the rank's declared box's columns (select before bind) */
        boxed = PyArray_NDIM(arr) == ds->ndims &&
                xfer_selection_of(self->ch, name, start, box) == XFER_SUCCESS;
        for (i = 1; whole && i < ds->ndims; i++)
            whole = (uint64_t) PyArray_DIM(arr, i) == ds->dims[i];
        for (i = 1; boxed && i < ds->ndims; i++)
            boxed = (uint64_t) PyArray_DIM(arr, i) == box[i];
        if (!whole && !boxed) {
            char got[128], want[160];
            size_t o = (size_t) snprintf(want, sizeof(want), "(rows");
            for (i = 1; i < ds->ndims && o < sizeof(want); i++)
                o += (size_t) snprintf(want + o, sizeof(want) - o, ", %llu",
                                       (unsigned long long) ds->dims[i]);
            if (o < sizeof(want))
                snprintf(want + o, sizeof(want) - o, "%s)", ds->ndims == 1 ? "," : "");
            xpy_fmt_shape(got, sizeof(got), PyArray_NDIM(arr), PyArray_SHAPE(arr), NULL);
            return xpy_invalid("channel %s: dataset %s is joined: the bound array has shape %s; "
                               "it holds whole rows, %s, or rows of the box the rank declared, "
                               "as many as a step's selection may need",
                               self->cfg->name, name, got, want);
        }
    } else if (!sends && ds->variable) { /* get returns a view of its first elements */
        if (PyArray_NDIM(arr) != ds->ndims) {
            char got[128];
            xpy_fmt_shape(got, sizeof(got), PyArray_NDIM(arr), PyArray_SHAPE(arr), NULL);
            return xpy_invalid("channel %s: dataset %s has a variable shape: the bound array has "
                               "shape %s; it has the dataset's %d dimensions and as many "
                               "elements as a step's selection may need",
                               self->cfg->name, name, got, ds->ndims);
        }
    } else if (!sends) { /* get returns the bound array itself: the selection's shape */
        uint64_t start[XFER_MAX_DIMS], count[XFER_MAX_DIMS];
        npy_intp shape[XFER_MAX_DIMS];
        int i;
        if ((st = xfer_selection_of(self->ch, name, start, count)) != XFER_SUCCESS)
            return xpy_raise(st, NULL);
        for (i = 0; i < ds->ndims; i++)
            shape[i] = (npy_intp) count[i];
        if (PyArray_NDIM(arr) != ds->ndims ||
            !PyArray_CompareLists(PyArray_SHAPE(arr), shape, ds->ndims)) {
            char got[128], want[128];
            xpy_fmt_shape(got, sizeof(got), PyArray_NDIM(arr), PyArray_SHAPE(arr), NULL);
            xpy_fmt_shape(want, sizeof(want), ds->ndims, NULL, count);
            return xpy_invalid("channel %s: dataset %s: the bound array has shape %s, the "
                               "rank's selection %s",
                               self->cfg->name, name, got, want);
        }
    }
    Py_BEGIN_ALLOW_THREADS st =
        xfer_bind_buffer(self->ch, name, PyArray_DATA(arr), (size_t) PyArray_NBYTES(arr));
    Py_END_ALLOW_THREADS if (st != XFER_SUCCESS) return xpy_raise(st, NULL);
    entry = PyDict_GetItemString(self->bound, name);
    if (!entry || !self->touched) { /* before step 0: the buffer of every step until rebound */
        PyObject *l = Py_BuildValue("[OO]", (PyObject *) arr, Py_None);
        if (!l || PyDict_SetItemString(self->bound, name, l) < 0) {
            Py_XDECREF(l);
            return NULL;
        }
        Py_DECREF(l);
    } else { /* during a step: the buffer of the next step */
        Py_INCREF(arr);
        if (PyList_SetItem(entry, 1, (PyObject *) arr) < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}
