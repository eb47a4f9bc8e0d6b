/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer._core's conversions: libxfer's element types and numpy's, sequences of integers, the
 * workflow file as plain Python data. */
#include "core.h"

#include <stdarg.h>
#include <string.h>

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

/* ---- the workflow file ------------------------------------------------------------------ */

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
            e = Py_BuildValue("{s:s,s:s,s:N,s:s,s:s,s:O,s:N,s:K,s:N,s:s}", "name", d->name, "type",
                              xfer_type_name(d->type), "dims", dims, "from",
                              cfg->components[d->from].name, "selection",
                              selection_names[d->selection], "joined",
                              d->joined ? Py_True : Py_False, "variable", var, "max_rows",
                              (unsigned long long) d->max_rows, "record", rec, "blocks",
                              d->blocks == XFER_BLOCKS_PER_STEP ? "per_step" : "fixed");
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
