/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer._core.Workflow and xfer._core.Channel: the workflow API on numpy arrays. This file holds
 * the two types, steps and attributes; put.c and get.c the data calls (channel.h).
 *
 * Every call that may wait or copy releases the GIL; the waits libxfer can resume
 * (xfer_set_interrupt) run Python's signal handlers about every 50 ms, so Ctrl-C raises
 * KeyboardInterrupt in a blocked get. Arrays libxfer reads after the call returns (a bound
 * sender's blocks until the step ends, bound buffers while bound) are kept alive here. */
#include "channel.h"

#include <string.h>

/* ---- Workflow ----------------------------------------------------------------------------- */

static int wf_init(XpyWorkflow *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"config", "component", "comm", NULL};
    PyObject *cfg_o = Py_None, *comp_o = Py_None, *comm_o = Py_None, *cfg_b = NULL;
    const char *path = NULL, *component = NULL;
    MPI_Comm comm = MPI_COMM_WORLD;
    xfer_status_t st;
    xfer_t *x = NULL;

    if (self->x)
        return xpy_invalid("Workflow.__init__: already initialised"), -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOO", kwlist, &cfg_o, &comp_o, &comm_o))
        return -1;
    if (!xpy_mpi_ready())
        return -1;
    if (cfg_o != Py_None) {
        if (!PyUnicode_FSConverter(cfg_o, &cfg_b))
            return -1;
        path = PyBytes_AS_STRING(cfg_b);
    }
    if (comp_o != Py_None) {
        if (!PyUnicode_Check(comp_o)) {
            Py_XDECREF(cfg_b);
            PyErr_SetString(PyExc_TypeError, "component: expected a str or None");
            return -1;
        }
        component = PyUnicode_AsUTF8(comp_o);
    }
    if (comm_o != Py_None && !xpy_comm_converter(comm_o, &comm)) {
        Py_XDECREF(cfg_b);
        return -1;
    }
    Py_BEGIN_ALLOW_THREADS st = xfer_init(path, component, comm, &x);
    Py_END_ALLOW_THREADS Py_XDECREF(cfg_b);
    if (st != XFER_SUCCESS)
        return xpy_raise(st, NULL), -1;
    self->x = x;
    if ((st = xfer_config_of(x, &self->cfg, &self->comp)) != XFER_SUCCESS ||
        (st = xfer_set_interrupt(x, xpy_interrupt_check, NULL)) != XFER_SUCCESS)
        return xpy_raise(st, NULL), -1;
    return 0;
}

static int wf_open(XpyWorkflow *self)
{
    if (self->x)
        return 1;
    xpy_error(XFER_ERR_STATE, "the workflow was finalized (or never initialised)");
    return 0;
}

static PyObject *wf_finalize(XpyWorkflow *self, PyObject *noargs)
{
    xfer_status_t st;
    (void) noargs;
    if (!self->x)
        Py_RETURN_NONE; /* idempotent, as a context manager's exit may follow a finalize */
    Py_BEGIN_ALLOW_THREADS st = xfer_finalize(&self->x);
    Py_END_ALLOW_THREADS self->x = NULL;
    self->cfg = NULL;
    if (st != XFER_SUCCESS)
        return xpy_raise(st, "finalize");
    Py_RETURN_NONE;
}

static PyObject *wf_comm(XpyWorkflow *self, void *closure)
{
    MPI_Comm c;
    xfer_status_t st;
    (void) closure;
    if (!wf_open(self))
        return NULL;
    if ((st = xfer_comm(self->x, &c)) != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    return PyLong_FromLong((long) MPI_Comm_c2f(c));
}

static PyObject *wf_component(XpyWorkflow *self, void *closure)
{
    (void) closure;
    if (!wf_open(self))
        return NULL;
    return PyUnicode_FromString(self->cfg->components[self->comp].name);
}

static PyObject *wf_config(XpyWorkflow *self, void *closure)
{
    (void) closure;
    if (!wf_open(self))
        return NULL;
    return xpy_config_dict(self->cfg);
}

static PyObject *wf_finalized(XpyWorkflow *self, void *closure)
{
    (void) closure;
    return PyBool_FromLong(self->x == NULL);
}

static void wf_dealloc(XpyWorkflow *self)
{
    /* Not finalized here: xfer_finalize is collective, and a collective call from the garbage
     * collector could hang. The package keeps open workflows alive and finalizes them at exit. */
    Py_TYPE(self)->tp_free((PyObject *) self);
}

static PyMethodDef wf_methods[] = {
    {"finalize", (PyCFunction) wf_finalize, METH_NOARGS,
     "Leave the workflow (collective over the component): every committed step is delivered, "
     "the peers are told, the channels close. Idempotent."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef wf_getset[] = {
    {"comm", (getter) wf_comm, NULL, "the component's communicator (Fortran handle)", NULL},
    {"component", (getter) wf_component, NULL, "this component's name", NULL},
    {"config", (getter) wf_config, NULL, "the workflow file in use, as a dict", NULL},
    {"finalized", (getter) wf_finalized, NULL, "True once finalize() ran", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject XpyWorkflow_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "xfer._core.Workflow",
    .tp_basicsize = sizeof(XpyWorkflow),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Workflow(config=None, component=None, comm=None): join a workflow (xfer_init).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc) wf_init,
    .tp_dealloc = (destructor) wf_dealloc,
    .tp_methods = wf_methods,
    .tp_getset = wf_getset,
};

/* ---- Channel: helpers --------------------------------------------------------------------- */

int xpy_ch_usable(XpyChannel *self)
{
    if (self->closed) {
        xpy_error(XFER_ERR_STATE, "channel %s was closed (Channel.close)", self->name);
        return 0;
    }
    if (self->wf && !self->wf->x) {
        xpy_error(XFER_ERR_STATE, "channel %s: the workflow was finalized; the channel is closed",
                  self->name);
        self->ch = NULL;
        self->cfg = NULL;
        return 0;
    }
    if (!self->ch || !self->wf)
        return xpy_invalid("the channel is not open (Channel(workflow, name) opens it)"), 0;
    return 1;
}

/* The dataset @p name of the channel, and whether this component sends it. */
const xfer_cfg_dataset_t *xpy_ch_dataset(XpyChannel *self, const char *name, int *sends)
{
    int i;
    for (i = 0; i < self->cfg->ndatasets; i++)
        if (strcmp(self->cfg->datasets[i].name, name) == 0) {
            *sends = self->cfg->datasets[i].from == self->wf->comp;
            return &self->cfg->datasets[i];
        }
    {
        char list[512];
        size_t o = 0;
        list[0] = '\0';
        for (i = 0; i < self->cfg->ndatasets && o < sizeof(list); i++)
            o += (size_t) snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "",
                                   self->cfg->datasets[i].name);
        xpy_error(XFER_ERR_NOT_FOUND, "channel %s has no dataset \"%s\" (datasets: %s)",
                  self->cfg->name, name, list);
    }
    return NULL;
}

static const char *dtype_str(int npy)
{
    PyArray_Descr *d = PyArray_DescrFromType(npy);
    static char buf[32];
    snprintf(buf, sizeof(buf), "%s", d ? d->typeobj->tp_name : "?");
    Py_XDECREF(d);
    return buf;
}

/* The dtype of dataset @p ds: its scalar type's, or its record's aligned one. New reference. */
PyArray_Descr *xpy_ds_dtype(const xfer_cfg_dataset_t *ds)
{
    if (ds->type == XFER_TYPE_RECORD)
        return xpy_record_dtype(ds->record);
    return PyArray_DescrFromType(xpy_npy_type(ds->type));
}

/* A record dataset: @p got has the declared layout, read into @p layout (its fields in
 * @p fields) when not NULL; else an exception naming the first field that differs. */
int xpy_check_record(XpyChannel *self, const xfer_cfg_dataset_t *ds, PyArray_Descr *got,
                     const char *what, xfer_record_t *layout, xfer_record_field_t *fields)
{
    xfer_record_field_t tmp[XFER_RECORD_MAX_FIELDS];
    char why[512], decl[512];
    int rc = xpy_record_match(got, ds->record, fields ? fields : tmp, why, sizeof(why));
    if (rc < 0)
        return 0;
    if (rc == 0) {
        xpy_record_str(ds->record, decl, sizeof(decl));
        xpy_error(XFER_ERR_MISMATCH,
                  "channel %s: dataset %s: %s's dtype is not the record the workflow file "
                  "declares, %s: %s (the dataset's dtype: Channel.dtype_of(\"%s\"), numpy's "
                  "np.dtype([...], align=True) of the fields); nothing was %s",
                  self->cfg->name, ds->name, what, decl, why, ds->name,
                  strcmp(what, "the output array") == 0 ? "received" : "sent");
        return 0;
    }
    if (layout) {
        layout->nfields = ds->record->nfields;
        layout->fields = fields;
        layout->size = (size_t) PyDataType_ELSIZE(got);
        layout->align = ds->record->align;
    }
    return 1;
}

/* @p arr's dtype is the dataset's, in native byte order: else an exception naming both. */
int xpy_check_dtype(XpyChannel *self, const xfer_cfg_dataset_t *ds, PyArrayObject *arr,
                    const char *what)
{
    const int want = xpy_npy_type(ds->type);
    if (ds->type == XFER_TYPE_RECORD)
        return xpy_check_record(self, ds, PyArray_DESCR(arr), what, NULL, NULL);
    if (xpy_xfer_type(PyArray_TYPE(arr)) == ds->type && PyArray_ISNOTSWAPPED(arr))
        return 1;
    xpy_invalid("channel %s: dataset %s: %s has dtype %s%s, the dataset is %s (numpy %s); "
                "nothing was %s",
                self->cfg->name, ds->name, what,
                PyArray_DESCR(arr)->typeobj ? PyArray_DESCR(arr)->typeobj->tp_name : "?",
                PyArray_ISNOTSWAPPED(arr) ? "" : " (byte-swapped)", xfer_type_name(ds->type),
                dtype_str(want), strcmp(what, "the output array") == 0 ? "received" : "sent");
    return 0;
}

void xpy_fmt_shape(char *buf, size_t len, int nd, const npy_intp *shape, const uint64_t *u)
{
    size_t o = 0;
    int i;
    o += (size_t) snprintf(buf + o, len - o, "(");
    for (i = 0; i < nd && o < len; i++)
        o += (size_t) snprintf(buf + o, len - o, "%s%lld", i ? ", " : "",
                               shape ? (long long) shape[i] : (long long) u[i]);
    if (o < len)
        snprintf(buf + o, len - o, "%s)", nd == 1 ? "," : "");
}

/* ---- Channel: life cycle ------------------------------------------------------------------ */

static int ch_init(XpyChannel *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"workflow", "name", NULL};
    XpyWorkflow *wf;
    const char *name;
    xfer_status_t st;
    int index;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!s", kwlist, &XpyWorkflow_Type, &wf, &name))
        return -1;
    if (!wf_open(wf))
        return -1;
    if ((st = xfer_channel_open(wf->x, name, &self->ch)) != XFER_SUCCESS)
        return xpy_raise(st, NULL), -1;
    if ((st = xfer_config_channel(wf->cfg, name, &index)) != XFER_SUCCESS)
        return xpy_raise(st, NULL), -1;
    Py_INCREF(wf);
    Py_XSETREF(self->wf, wf);
    self->cfg = &wf->cfg->channels[index];
    snprintf(self->name, sizeof(self->name), "%s", name);
    if (!self->held && !(self->held = PyList_New(0)))
        return -1;
    if (!self->bound && !(self->bound = PyDict_New()))
        return -1;
    return 0;
}

static int ch_traverse(XpyChannel *self, visitproc visit, void *arg)
{
    Py_VISIT(self->wf);
    Py_VISIT(self->held);
    Py_VISIT(self->bound);
    return 0;
}

static int ch_clear(XpyChannel *self)
{
    Py_CLEAR(self->wf);
    Py_CLEAR(self->held);
    Py_CLEAR(self->bound);
    return 0;
}

static void ch_dealloc(XpyChannel *self)
{
    PyObject_GC_UnTrack(self);
    ch_clear(self);
    Py_TYPE(self)->tp_free((PyObject *) self);
}

/* ---- Channel: steps ------------------------------------------------------------------------ */

static PyObject *ch_begin_step(XpyChannel *self, PyObject *args)
{
    int timeout_ms = -1;
    xfer_step_status_t ss = XFER_STEP_NOT_READY;
    xfer_status_t st;
    if (!PyArg_ParseTuple(args, "|i", &timeout_ms))
        return NULL;
    if (!xpy_ch_usable(self))
        return NULL;
    Py_BEGIN_ALLOW_THREADS st = xfer_step_begin(self->ch, timeout_ms, &ss);
    Py_END_ALLOW_THREADS if (st != XFER_SUCCESS) return xpy_raise(st, NULL);
    if (ss == XFER_STEP_OK)
        self->touched = 1;
    return PyLong_FromLong(ss);
}

/* After a step ended: bound buffers of the next step become this step's. */
static int advance_bound(XpyChannel *self)
{
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(self->bound, &pos, &key, &val)) {
        PyObject *next = PyList_GET_ITEM(val, 1);
        if (next != Py_None) {
            Py_INCREF(next);
            if (PyList_SetItem(val, 0, next) < 0)
                return -1;
            Py_INCREF(Py_None);
            if (PyList_SetItem(val, 1, Py_None) < 0)
                return -1;
        }
    }
    return 0;
}

static PyObject *ch_end_step(XpyChannel *self, PyObject *noargs)
{
    xfer_status_t st;
    (void) noargs;
    if (!xpy_ch_usable(self))
        return NULL;
    Py_BEGIN_ALLOW_THREADS st = xfer_step_end(self->ch);
    Py_END_ALLOW_THREADS self->touched = 1;
    /* the blocks a bound sender gave were read until here */
    if (PyList_SetSlice(self->held, 0, PyList_GET_SIZE(self->held), NULL) < 0)
        return NULL;
    if (st != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    if (advance_bound(self) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ---- Channel: attributes -------------------------------------------------------------------- */

static PyObject *ch_put_attr(XpyChannel *self, PyObject *args)
{
    const char *name;
    PyObject *value;
    PyArrayObject *arr, *cont;
    xfer_type_t t;
    xfer_status_t st;
    if (!PyArg_ParseTuple(args, "sO", &name, &value))
        return NULL;
    if (!xpy_ch_usable(self))
        return NULL;
    if (PyUnicode_Check(value)) {
        const char *s = PyUnicode_AsUTF8(value);
        if (!s)
            return NULL;
        Py_BEGIN_ALLOW_THREADS st = xfer_put_attr_string(self->ch, name, s);
        Py_END_ALLOW_THREADS if (st != XFER_SUCCESS) return xpy_raise(st, NULL);
        Py_RETURN_NONE;
    }
    if (PyBool_Check(value))
        return xpy_invalid("channel %s: attribute %s: booleans have no libxfer type; give 0 or 1",
                           self->cfg->name, name);
    if (!(arr = (PyArrayObject *) PyArray_FROM_O(value)))
        return NULL;
    t = xpy_xfer_type(PyArray_TYPE(arr));
    if (!t || !PyArray_ISNOTSWAPPED(arr) || PyArray_NDIM(arr) > 1) {
        PyObject *r = xpy_invalid("channel %s: attribute %s: expected a str, a number or a 1-D "
                                  "array of int8..uint64, float32 or float64, got %s of %d "
                                  "dimension%s",
                                  self->cfg->name, name, PyArray_DESCR(arr)->typeobj->tp_name,
                                  PyArray_NDIM(arr), PyArray_NDIM(arr) == 1 ? "" : "s");
        Py_DECREF(arr);
        return r;
    }
    cont = (PyArrayObject *) PyArray_GETCONTIGUOUS(arr);
    Py_DECREF(arr);
    if (!cont)
        return NULL;
    Py_BEGIN_ALLOW_THREADS st =
        xfer_put_attr(self->ch, name, t, (size_t) PyArray_SIZE(cont), PyArray_DATA(cont));
    Py_END_ALLOW_THREADS Py_DECREF(cont);
    if (st != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    Py_RETURN_NONE;
}

static PyObject *ch_get_attr(XpyChannel *self, PyObject *args)
{
    const char *name;
    xfer_type_t t = 0;
    size_t count = 0;
    xfer_status_t st;
    PyArrayObject *arr;
    npy_intp n;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    if (!xpy_ch_usable(self))
        return NULL;
    Py_BEGIN_ALLOW_THREADS st = xfer_get_attr(self->ch, name, &t, &count, NULL, 0);
    Py_END_ALLOW_THREADS if (st == XFER_ERR_MISMATCH)
    { /* a string */
        size_t cap = 256;
        for (;;) {
            char *buf = PyMem_Malloc(cap);
            PyObject *s;
            if (!buf)
                return PyErr_NoMemory();
            Py_BEGIN_ALLOW_THREADS st = xfer_get_attr_string(self->ch, name, buf, cap);
            Py_END_ALLOW_THREADS if (st == XFER_SUCCESS)
            {
                s = PyUnicode_DecodeUTF8(buf, (Py_ssize_t) strlen(buf), "replace");
                PyMem_Free(buf);
                return s;
            }
            PyMem_Free(buf);
            if (st != XFER_ERR_INVALID_ARG || cap >= ((size_t) 2 << 20))
                return xpy_raise(st, NULL);
            cap *= 2;
        }
    }
    if (st != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    n = (npy_intp) count;
    if (!(arr = (PyArrayObject *) PyArray_SimpleNew(1, &n, xpy_npy_type(t))))
        return NULL;
    Py_BEGIN_ALLOW_THREADS st =
        xfer_get_attr(self->ch, name, NULL, NULL, PyArray_DATA(arr), (size_t) PyArray_NBYTES(arr));
    Py_END_ALLOW_THREADS if (st != XFER_SUCCESS)
    {
        Py_DECREF(arr);
        return xpy_raise(st, NULL);
    }
    if (count == 1) { /* a scalar: a Python number */
        PyObject *v = PyArray_GETITEM(arr, PyArray_DATA(arr));
        Py_DECREF(arr);
        return v;
    }
    return (PyObject *) arr;
}

static PyObject *ch_attr_names(XpyChannel *self, PyObject *noargs)
{
    PyObject *list;
    xfer_status_t st;
    int n = 0, i;
    (void) noargs;
    if (!xpy_ch_usable(self))
        return NULL;
    Py_BEGIN_ALLOW_THREADS st = xfer_attr_count(self->ch, &n);
    Py_END_ALLOW_THREADS if (st != XFER_SUCCESS) return xpy_raise(st, NULL);
    if (!(list = PyList_New(0)))
        return NULL;
    for (i = 0; i < n; i++) {
        const char *a = NULL;
        PyObject *s;
        if ((st = xfer_attr_name(self->ch, i, &a)) != XFER_SUCCESS) {
            Py_DECREF(list);
            return xpy_raise(st, NULL);
        }
        if (!(s = PyUnicode_FromString(a)) || PyList_Append(list, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(s);
    }
    return list;
}

/* ---- Channel: close -------------------------------------------------------------------------- */

/* xfer_channel_close. Idempotent (a context manager's exit may follow a close; a finalized
 * workflow closed its channels). The arrays a bound receiver gave stay referenced: steps still
 * in flight land in them for nobody until the workflow is finalized; once closed, a bound
 * sender's blocks of the dropped step are let go. */
static PyObject *ch_close(XpyChannel *self, PyObject *noargs)
{
    xfer_status_t st;
    (void) noargs;
    if (self->closed || (self->wf && !self->wf->x))
        Py_RETURN_NONE;
    if (!xpy_ch_usable(self))
        return NULL;
    Py_BEGIN_ALLOW_THREADS st = xfer_channel_close(&self->ch);
    Py_END_ALLOW_THREADS self->closed = 1;
    self->ch = NULL;
    if (st != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    if (PyList_SetSlice(self->held, 0, PyList_GET_SIZE(self->held), NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *ch_get_closed(XpyChannel *self, void *closure)
{
    (void) closure;
    return PyBool_FromLong(self->closed || (self->wf && !self->wf->x));
}

/* ---- Channel: the rest ---------------------------------------------------------------------- */

static PyObject *ch_progress(XpyChannel *self, PyObject *noargs)
{
    xfer_status_t st;
    int busy = 0;
    (void) noargs;
    if (!xpy_ch_usable(self))
        return NULL;
    Py_BEGIN_ALLOW_THREADS st = xfer_channel_progress(self->ch, &busy);
    Py_END_ALLOW_THREADS if (st != XFER_SUCCESS) return xpy_raise(st, NULL);
    return PyBool_FromLong(busy);
}

static PyObject *ch_stats(XpyChannel *self, PyObject *noargs)
{
    xfer_channel_stats_t s;
    xfer_status_t st;
    (void) noargs;
    if (!xpy_ch_usable(self))
        return NULL;
    if ((st = xfer_channel_stats(self->ch, &s)) != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    return Py_BuildValue(
        "{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "steps", (unsigned long long) s.steps,
        "bytes_sent", (unsigned long long) s.bytes_sent, "bytes_received",
        (unsigned long long) s.bytes_received, "bytes_copied_in",
        (unsigned long long) s.bytes_copied_in, "bytes_copied_out",
        (unsigned long long) s.bytes_copied_out, "steps_sent", (unsigned long long) s.steps_sent,
        "steps_dropped", (unsigned long long) s.steps_dropped, "steps_received",
        (unsigned long long) s.steps_received, "steps_held", (unsigned long long) s.steps_held,
        "steps_unsent", (unsigned long long) s.steps_unsent, "wire_bytes_sent",
        (unsigned long long) s.wire_bytes_sent, "wire_bytes_received",
        (unsigned long long) s.wire_bytes_received);
}

static PyObject *ch_get_name(XpyChannel *self, void *closure)
{
    (void) closure;
    if (!self->name[0])
        return xpy_invalid("the channel is not open");
    return PyUnicode_FromString(self->name);
}

static PyObject *ch_get_role(XpyChannel *self, void *closure)
{
    xfer_role_t r;
    xfer_status_t st;
    (void) closure;
    if (!xpy_ch_usable(self))
        return NULL;
    if ((st = xfer_channel_role(self->ch, &r)) != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    return PyUnicode_FromString(r == XFER_ROLE_SEND   ? "send"
                                : r == XFER_ROLE_RECV ? "recv"
                                                      : "both");
}

static PyObject *ch_get_step(XpyChannel *self, void *closure)
{
    uint64_t s = 0;
    xfer_status_t st;
    (void) closure;
    if (!xpy_ch_usable(self))
        return NULL;
    if ((st = xfer_channel_step(self->ch, &s)) != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    return PyLong_FromUnsignedLongLong(s);
}

static PyObject *ch_get_intercomm(XpyChannel *self, void *closure)
{
    MPI_Comm c;
    xfer_status_t st;
    (void) closure;
    if (!xpy_ch_usable(self))
        return NULL;
    if ((st = xfer_channel_intercomm(self->ch, &c)) != XFER_SUCCESS)
        return xpy_raise(st, NULL);
    return PyLong_FromLong((long) MPI_Comm_c2f(c));
}

static PyObject *ch_get_datasets(XpyChannel *self, void *closure)
{
    PyObject *d;
    int i, k;
    (void) closure;
    if (!xpy_ch_usable(self) || !(d = PyDict_New()))
        return NULL;
    for (i = 0; i < self->cfg->ndatasets; i++) {
        const xfer_cfg_dataset_t *ds = &self->cfg->datasets[i];
        PyObject *dims = PyTuple_New(ds->ndims), *e;
        if (!dims) {
            Py_DECREF(d);
            return NULL;
        }
        for (k = 0; k < ds->ndims; k++)
            PyTuple_SET_ITEM(dims, k, PyLong_FromUnsignedLongLong(ds->dims[k]));
        e = Py_BuildValue("(sNO)", xfer_type_name(ds->type), dims,
                          ds->from == self->wf->comp ? Py_True : Py_False);
        if (!e || PyDict_SetItemString(d, ds->name, e) < 0) {
            Py_XDECREF(e);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(e);
    }
    return d;
}

static PyObject *ch_get_workflow(XpyChannel *self, void *closure)
{
    (void) closure;
    if (!self->wf)
        Py_RETURN_NONE;
    Py_INCREF(self->wf);
    return (PyObject *) self->wf;
}

static PyMethodDef ch_methods[] = {
    {"begin_step", (PyCFunction) ch_begin_step, METH_VARARGS,
     "begin_step(timeout_ms=-1) -> STEP_OK | STEP_NOT_READY | STEP_END_OF_STREAM"},
    {"end_step", (PyCFunction) ch_end_step, METH_NOARGS,
     "Commit (sending side) or release (receiving side) the current step."},
    {"put", (PyCFunction) (void (*)(void)) xpy_ch_put, METH_VARARGS | METH_KEYWORDS,
     "put(name, data, start=None, shape=None): stage this rank's block of a dataset for the "
     "current step (shape: a variable dataset's global shape in this step)."},
    {"get", (PyCFunction) (void (*)(void)) xpy_ch_get, METH_VARARGS | METH_KEYWORDS,
     "get(name, out=None, start=None, count=None) -> array of the rank's selection."},
    {"select", (PyCFunction) (void (*)(void)) xpy_ch_select, METH_VARARGS | METH_KEYWORDS,
     "select(name, start=None, count=None): the box this rank receives (before step 0)."},
    {"selection", (PyCFunction) xpy_ch_selection, METH_VARARGS,
     "selection(name) -> (start, count) this rank receives."},
    {"get_shape", (PyCFunction) xpy_ch_get_shape, METH_VARARGS,
     "get_shape(name) -> (dims, start, count, step): the step's global dims (a joined dataset's "
     "rows in dims[0]) and this rank's selection of it; waits for the step as get does."},
    {"get_rows", (PyCFunction) xpy_ch_get_rows, METH_VARARGS,
     "get_rows(name) -> uint64 array: each sending rank's rows of a joined dataset in this "
     "step."},
    {"dtype_of", (PyCFunction) xpy_ch_dtype_of, METH_VARARGS,
     "dtype_of(name) -> numpy dtype of a dataset (a record's: the aligned structured dtype)."},
    {"bind", (PyCFunction) xpy_ch_bind, METH_VARARGS,
     "bind(name, array): send from or receive into this array without copies."},
    {"put_attr", (PyCFunction) ch_put_attr, METH_VARARGS,
     "put_attr(name, value): a str, a number or a small 1-D array, for this step."},
    {"get_attr", (PyCFunction) ch_get_attr, METH_VARARGS, "get_attr(name) -> str, number or array"},
    {"attr_names", (PyCFunction) ch_attr_names, METH_NOARGS, "names of this step's attributes"},
    {"progress", (PyCFunction) ch_progress, METH_NOARGS,
     "Drive the transfers once without waiting; True while a step is in flight."},
    {"close", (PyCFunction) ch_close, METH_NOARGS,
     "Finish the channel now (xfer_channel_close; collective over the component's ranks) while "
     "the others go on: a reader leaves cleanly, a sender ends its stream. Idempotent."},
    {"stats", (PyCFunction) ch_stats, METH_NOARGS,
     "steps and bytes moved and copied on this rank (steps sent, dropped by policy latest, held, "
     "received)"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef ch_getset[] = {
    {"name", (getter) ch_get_name, NULL, "the channel's name", NULL},
    {"role", (getter) ch_get_role, NULL, "'send', 'recv' or 'both' (full duplex)", NULL},
    {"step_index", (getter) ch_get_step, NULL, "the step the next put or get belongs to", NULL},
    {"intercomm", (getter) ch_get_intercomm, NULL, "the intercommunicator (Fortran handle)", NULL},
    {"dataset_info", (getter) ch_get_datasets, NULL,
     "{name: (type name, dims, sent by this component)}", NULL},
    {"workflow", (getter) ch_get_workflow, NULL, "the Workflow the channel belongs to", NULL},
    {"closed", (getter) ch_get_closed, NULL, "True once close() ran or the workflow finalized",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject XpyChannel_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "xfer._core.Channel",
    .tp_basicsize = sizeof(XpyChannel),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Channel(workflow, name): a channel of the workflow (xfer_channel_open).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc) ch_init,
    .tp_dealloc = (destructor) ch_dealloc,
    .tp_traverse = (traverseproc) ch_traverse,
    .tp_clear = (inquiry) ch_clear,
    .tp_methods = ch_methods,
    .tp_getset = ch_getset,
};

int xpy_workflow_types_ready(PyObject *m)
{
    if (PyType_Ready(&XpyWorkflow_Type) < 0 || PyType_Ready(&XpyChannel_Type) < 0)
        return -1;
    if (PyModule_AddObjectRef(m, "Workflow", (PyObject *) &XpyWorkflow_Type) < 0 ||
        PyModule_AddObjectRef(m, "Channel", (PyObject *) &XpyChannel_Type) < 0)
        return -1;
    return 0;
}
