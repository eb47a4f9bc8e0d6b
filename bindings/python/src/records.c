/* SPDX-License-Identifier: BSD-3-Clause */
/* Record datasets as numpy structured dtypes (docs/bindings.md, "Records").
 *
 * A record's layout (xfer_record_t) is the C struct's: each field aligned to its scalar's size,
 * the size rounded up to the largest alignment. numpy's np.dtype([...], align=True) of the same
 * fields lays them out by the same rule on the ABIs libxfer builds for, so the dtype a get
 * returns is built from the declaration's offsets and size with aligned=True, and a put accepts
 * any dtype with the declared fields, types, counts and offsets and the declared itemsize,
 * whatever its field order or alignment flag. The dtype is read through its Python attributes
 * (fields, names, itemsize, base, shape), which numpy 1.x and 2.x both keep. */
#include "core.h"

#include <string.h>

PyArray_Descr *xpy_record_dtype(const xfer_record_t *r)
{
    PyObject *names = PyList_New(r->nfields), *formats = PyList_New(r->nfields);
    PyObject *offsets = PyList_New(r->nfields), *spec = NULL;
    PyArray_Descr *out = NULL;
    int i;

    if (!names || !formats || !offsets)
        goto out;
    for (i = 0; i < r->nfields; i++) {
        const xfer_record_field_t *f = &r->fields[i];
        PyArray_Descr *base = PyArray_DescrFromType(xpy_npy_type(f->type));
        PyObject *fmt;
        if (!base)
            goto out;
        fmt = f->count == 1 ? (PyObject *) base
                            : Py_BuildValue("(N(I))", (PyObject *) base, (unsigned) f->count);
        if (!fmt)
            goto out;
        PyList_SET_ITEM(formats, i, fmt);
        PyList_SET_ITEM(names, i, PyUnicode_FromString(f->name));
        PyList_SET_ITEM(offsets, i, PyLong_FromSize_t(f->offset));
        if (!PyList_GET_ITEM(names, i) || !PyList_GET_ITEM(offsets, i))
            goto out;
    }
    spec = Py_BuildValue("{s:O,s:O,s:O,s:n,s:O}", "names", names, "formats", formats, "offsets",
                         offsets, "itemsize", (Py_ssize_t) r->size, "aligned", Py_True);
    if (spec && !PyArray_DescrConverter(spec, &out))
        out = NULL;
out:
    Py_XDECREF(spec);
    Py_XDECREF(names);
    Py_XDECREF(formats);
    Py_XDECREF(offsets);
    return out;
}

void xpy_record_str(const xfer_record_t *r, char *buf, size_t len)
{
    size_t o = (size_t) snprintf(buf, len, "{");
    int i;
    for (i = 0; i < r->nfields && o < len; i++) {
        const xfer_record_field_t *f = &r->fields[i];
        if (f->count == 1)
            o += (size_t) snprintf(buf + o, len - o, "%s%s: %s", i ? ", " : "", f->name,
                                   xfer_type_name(f->type));
        else
            o += (size_t) snprintf(buf + o, len - o, "%s%s: [%s, %u]", i ? ", " : "", f->name,
                                   xfer_type_name(f->type), (unsigned) f->count);
    }
    if (o < len)
        snprintf(buf + o, len - o, "}");
}

/* "float64[3]" / "float64" of a field, or numpy's name of a dtype libxfer has no type for. */
static void field_str(char *buf, size_t len, xfer_type_t t, uint64_t count, PyObject *npy)
{
    if (t && count == 1) {
        snprintf(buf, len, "%s", xfer_type_name(t));
    } else if (t) {
        snprintf(buf, len, "%s[%llu]", xfer_type_name(t), (unsigned long long) count);
    } else {
        PyObject *s = npy ? PyObject_Str(npy) : NULL;
        const char *u = s ? PyUnicode_AsUTF8(s) : NULL;
        snprintf(buf, len, "numpy %s", u ? u : "?");
        Py_XDECREF(s);
        PyErr_Clear();
    }
}

/* A field's dtype as libxfer sees it: its scalar type (0: none, or not native byte order) and
 * its element count (a 1-D subarray; ndim > 1 gives 0 elements). -1 on a Python error. */
static int field_type(PyObject *fdt, xfer_type_t *t, uint64_t *count)
{
    PyObject *base = PyObject_GetAttrString(fdt, "base");
    PyObject *shape = PyObject_GetAttrString(fdt, "shape");
    int rc = -1;
    *t = (xfer_type_t) 0;
    *count = 0;
    if (!base || !shape || !PyArray_DescrCheck(base) || !PyTuple_Check(shape))
        goto out;
    if (PyArray_ISNBO(((PyArray_Descr *) base)->byteorder))
        *t = xpy_xfer_type(((PyArray_Descr *) base)->type_num);
    if (PyTuple_GET_SIZE(shape) == 0)
        *count = 1;
    else if (PyTuple_GET_SIZE(shape) == 1)
        *count = (uint64_t) PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(shape, 0));
    rc = PyErr_Occurred() ? -1 : 0;
out:
    Py_XDECREF(base);
    Py_XDECREF(shape);
    return rc;
}

int xpy_record_match(PyArray_Descr *got, const xfer_record_t *want, xfer_record_field_t *out,
                     char *why, size_t len)
{
    PyObject *fields = PyObject_GetAttrString((PyObject *) got, "fields");
    PyObject *names = PyObject_GetAttrString((PyObject *) got, "names");
    PyObject *itemsize = PyObject_GetAttrString((PyObject *) got, "itemsize");
    Py_ssize_t size;
    int i, rc = -1;

    if (!fields || !names || !itemsize)
        goto out;
    if (fields == Py_None || !PyTuple_Check(names)) {
        PyObject *s = PyObject_Str((PyObject *) got);
        snprintf(why, len, "it is numpy %s, not a structured dtype",
                 s && PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : "?");
        Py_XDECREF(s);
        rc = PyErr_Occurred() ? -1 : 0;
        goto out;
    }
    for (i = 0; i < want->nfields; i++) {
        const xfer_record_field_t *w = &want->fields[i];
        PyObject *entry = PyMapping_GetItemString(fields, w->name);
        char a[96], b[96];
        Py_ssize_t off;
        xfer_type_t t;
        uint64_t count;
        if (!entry) {
            if (!PyErr_ExceptionMatches(PyExc_KeyError))
                goto out;
            PyErr_Clear();
            snprintf(why, len, "it has no field %s (declared %s at offset %zu)", w->name,
                     xfer_type_name(w->type), w->offset);
            rc = 0;
            goto out;
        }
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 2 ||
            field_type(PyTuple_GET_ITEM(entry, 0), &t, &count) < 0 ||
            (off = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 1))) < 0) {
            Py_DECREF(entry);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "a dtype's field is not (dtype, offset)");
            goto out;
        }
        if (t != w->type || count != w->count || (size_t) off != w->offset) {
            field_str(a, sizeof(a), t, count, PyTuple_GET_ITEM(entry, 0));
            field_str(b, sizeof(b), w->type, w->count, NULL);
            snprintf(why, len, "field %s is %s at offset %zd, declared %s at offset %zu", w->name,
                     a, off, b, w->offset);
            Py_DECREF(entry);
            rc = 0;
            goto out;
        }
        Py_DECREF(entry);
        out[i].name = w->name;
        out[i].type = t;
        out[i].count = (uint32_t) count;
        out[i].offset = (size_t) off;
    }
    if (PyTuple_GET_SIZE(names) != want->nfields) {
        const char *extra = "?";
        Py_ssize_t k;
        for (k = 0; k < PyTuple_GET_SIZE(names); k++) {
            const char *n = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, k));
            int j, known = 0;
            if (!n)
                goto out;
            for (j = 0; j < want->nfields; j++)
                known |= strcmp(n, want->fields[j].name) == 0;
            if (!known) {
                extra = n;
                break;
            }
        }
        snprintf(why, len,
                 "it has %zd fields, the record %d (field %s is not "
                 "declared)",
                 PyTuple_GET_SIZE(names), want->nfields, extra);
        rc = 0;
        goto out;
    }
    if ((size = PyLong_AsSsize_t(itemsize)) < 0)
        goto out;
    if ((size_t) size != want->size) {
        snprintf(why, len,
                 "its itemsize is %zd bytes, the declared record's %zu (the C struct's, with its "
                 "padding: numpy's align=True)",
                 size, want->size);
        rc = 0;
        goto out;
    }
    rc = 1;
out:
    Py_XDECREF(fields);
    Py_XDECREF(names);
    Py_XDECREF(itemsize);
    return rc;
}
