/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 adapter (hdf5_adapter.c): errors, types (records as compounds), growing arrays,
 * selections. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "hdf5_internal.h"

/* ---- errors ------------------------------------------------------------------------------ */

typedef struct h5walk {
    char outer[256];
    char inner[512];
    int io; /* an entry says the file system or MPI-IO failed */
} h5walk_t;

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    h5walk_t *w = data;
    if (e->maj_num == H5E_IO || e->min_num == H5E_WRITEERROR || e->min_num == H5E_READERROR ||
        e->min_num == H5E_SEEKERROR || e->min_num == H5E_MPI || e->min_num == H5E_MPIERRSTR)
        w->io = 1;
    if (n == 0)
        snprintf(w->outer, sizeof(w->outer), "%s", e->desc ? e->desc : "");
    snprintf(w->inner, sizeof(w->inner), "%s(): %s", e->func_name ? e->func_name : "?",
             e->desc ? e->desc : "");
    return 0;
}

/* The HDF5 error stack of this thread in one line, then cleared; 1 when it tells of a failed
 * read or write (the file system, MPI-IO). */
static int stack_message(char *out, size_t cap)
{
    h5walk_t w = {"", "", 0};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, &w);
    H5Eclear2(H5E_DEFAULT);
    if (w.outer[0] && w.inner[0] && strlen(w.outer) + strlen(w.inner) + 4 <= cap)
        snprintf(out, cap, "%.255s [%.511s]", w.outer, w.inner);
    else
        snprintf(out, cap, "%s", w.outer[0] ? w.outer : "no HDF5 error message");
    return w.io;
}

void h5_message(char *out, size_t cap)
{
    (void) stack_message(out, cap);
}

/* "FILE: OBJECT: CALL failed: message" (OBJECT may be ""). An internal error whose stack tells
 * of a failed read or write is XFER_ERR_IO: a full disk, a quota, an I/O error. */
xfer_status_t h5_fail(xfer_status_t st, const char *file, const char *obj, const char *call)
{
    char msg[800];
    const int io = stack_message(msg, sizeof(msg));
    xfer_adapter_set_error("%s: %s%s%s failed: %s", file, obj, obj[0] ? ": " : "", call, msg);
    return st == XFER_ERR_INTERNAL && io ? XFER_ERR_IO : st;
}

/* The ranks agree on *@p st before the next collective HDF5 call: 1 when every rank succeeded
 * so far. Every rank makes each collective call of a file, or none does: a rank that failed
 * alone (a full disk met by its own write, an allocation, a reservation) and went on to the
 * agreement while the others entered the call would leave both waiting for ever. */
int h5_agreed(MPI_Comm comm, xfer_status_t *st)
{
    *st = xfer_adapter_agree(comm, *st);
    return *st == XFER_SUCCESS;
}

/* A transfer property list for collective MPI-IO, or H5I_INVALID_HID (the caller closes it). */
void h5_close_ids(const hid_t *ids, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        if (ids[i] < 0)
            continue;
        switch (H5Iget_type(ids[i])) {
        case H5I_DATASET:
            H5Dclose(ids[i]);
            break;
        case H5I_DATASPACE:
            H5Sclose(ids[i]);
            break;
        case H5I_GENPROP_LST:
            H5Pclose(ids[i]);
            break;
        case H5I_DATATYPE:
            H5Tclose(ids[i]);
            break;
        case H5I_GROUP:
            H5Gclose(ids[i]);
            break;
        default: /* not ours to close */
            break;
        }
    }
}

hid_t h5_collective_dxpl(void)
{
    hid_t dx = H5Pcreate(H5P_DATASET_XFER);
    if (dx >= 0 && H5Pset_dxpl_mpio(dx, H5FD_MPIO_COLLECTIVE) < 0) {
        H5Pclose(dx);
        dx = H5I_INVALID_HID;
    }
    return dx;
}

hid_t h5_native_of(xfer_type_t t)
{
    switch (t) {
    case XFER_TYPE_INT8:
        return H5T_NATIVE_INT8;
    case XFER_TYPE_UINT8:
        return H5T_NATIVE_UINT8;
    case XFER_TYPE_INT16:
        return H5T_NATIVE_INT16;
    case XFER_TYPE_UINT16:
        return H5T_NATIVE_UINT16;
    case XFER_TYPE_INT32:
        return H5T_NATIVE_INT32;
    case XFER_TYPE_UINT32:
        return H5T_NATIVE_UINT32;
    case XFER_TYPE_INT64:
        return H5T_NATIVE_INT64;
    case XFER_TYPE_UINT64:
        return H5T_NATIVE_UINT64;
    case XFER_TYPE_FLOAT32:
        return H5T_NATIVE_FLOAT;
    case XFER_TYPE_FLOAT64:
        return H5T_NATIVE_DOUBLE;
    case XFER_TYPE_RECORD: /* a compound type of its own: h5_mem_type */
        break;
    }
    return H5I_INVALID_HID;
}

const char *h5_class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER:
        return "integer";
    case H5T_FLOAT:
        return "float";
    case H5T_TIME:
        return "time";
    case H5T_STRING:
        return "string";
    case H5T_BITFIELD:
        return "bitfield";
    case H5T_OPAQUE:
        return "opaque";
    case H5T_COMPOUND:
        return "compound";
    case H5T_REFERENCE:
        return "reference";
    case H5T_ENUM:
        return "enum";
    case H5T_VLEN:
        return "variable-length";
    case H5T_ARRAY:
        return "array";
    default:
        return "unknown";
    }
}

/* The xfer type of an HDF5 integer or float type; 0 (and why) otherwise. */
xfer_type_t h5_type_of(hid_t t, char *why, size_t cap)
{
    const H5T_class_t c = H5Tget_class(t);
    const size_t size = H5Tget_size(t);
    if (c == H5T_INTEGER) {
        const int sgn = H5Tget_sign(t) == H5T_SGN_2;
        switch (size) {
        case 1:
            return sgn ? XFER_TYPE_INT8 : XFER_TYPE_UINT8;
        case 2:
            return sgn ? XFER_TYPE_INT16 : XFER_TYPE_UINT16;
        case 4:
            return sgn ? XFER_TYPE_INT32 : XFER_TYPE_UINT32;
        case 8:
            return sgn ? XFER_TYPE_INT64 : XFER_TYPE_UINT64;
        }
    } else if (c == H5T_FLOAT) {
        if (size == 4)
            return XFER_TYPE_FLOAT32;
        if (size == 8)
            return XFER_TYPE_FLOAT64;
    }
    snprintf(why, cap, "%s type of %zu bytes not supported (native integers and floats only)",
             h5_class_name(c), size);
    return (xfer_type_t) 0;
}

/* The memory type of a record: a compound of r->size bytes whose members are its fields at
 * their offsets, each a native scalar or a one-dimensional array of count of them, so that the
 * layout is the C struct's, padding included (the caller closes it; H5I_INVALID_HID on error). */
static hid_t record_type(const xfer_record_t *r)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, r->size);
    int i;
    for (i = 0; t >= 0 && i < r->nfields; i++) {
        const xfer_record_field_t *f = &r->fields[i];
        const hsize_t n = f->count;
        hid_t m = f->count == 1 ? H5Tcopy(h5_native_of(f->type))
                                : H5Tarray_create2(h5_native_of(f->type), 1, &n);
        if (m < 0 || H5Tinsert(t, f->name, f->offset, m) < 0) {
            H5Tclose(t);
            t = H5I_INVALID_HID;
        }
        if (m >= 0)
            H5Tclose(m);
    }
    return t;
}

hid_t h5_mem_type(const xfer_adapter_var_t *v)
{
    if (v->type == XFER_TYPE_RECORD)
        return v->record ? record_type(v->record) : H5I_INVALID_HID;
    return h5_native_of(v->type) >= 0 ? H5Tcopy(h5_native_of(v->type)) : H5I_INVALID_HID;
}

hid_t h5_record_mem_type(const xfer_record_t *r)
{
    return record_type(r);
}

/* One member of a compound: a scalar, or a one-dimensional array of scalars. */
static int member_of(hid_t mt, xfer_record_field_t *f, char *why, size_t cap)
{
    char sub[160];
    if (H5Tget_class(mt) == H5T_ARRAY) {
        hsize_t n = 0;
        hid_t base;
        int nd = H5Tget_array_ndims(mt);
        if (nd != 1 || H5Tget_array_dims2(mt, &n) != 1 || n < 1 || n > INT32_MAX) {
            snprintf(why, cap, "member %s: an array of %d dimensions (one only)", f->name, nd);
            return 1;
        }
        if ((base = H5Tget_super(mt)) < 0)
            return -1;
        f->type = h5_type_of(base, sub, sizeof(sub));
        H5Tclose(base);
        f->count = (uint32_t) n;
    } else {
        f->type = h5_type_of(mt, sub, sizeof(sub));
        f->count = 1;
    }
    if (f->type == 0) {
        snprintf(why, cap, "member %s: %s", f->name, sub);
        return 1;
    }
    return 0;
}

int h5_record_of(hid_t ft, xfer_record_t **out, char *why, size_t cap)
{
    const int n = H5Tget_nmembers(ft);
    xfer_record_t *r = NULL;
    hid_t nt = H5I_INVALID_HID;
    int i, rc = 0;
    *out = NULL;
    if (n < 1 || n > XFER_RECORD_MAX_FIELDS) {
        snprintf(why, cap, "a compound of %d members (records have 1 to %d fields)", n,
                 XFER_RECORD_MAX_FIELDS);
        return n < 0 ? -1 : 1;
    }
    /* the layout read() fills: the file's type made native, a C struct of its members in
     * member order (HDF5 aligns each to its native type and pads the end alike) */
    if (!(r = xfer_adapter_record_new(n)) || (nt = H5Tget_native_type(ft, H5T_DIR_ASCEND)) < 0) {
        rc = -1;
        goto out;
    }
    r->size = H5Tget_size(nt);
    r->align = 1;
    for (i = 0; i < n && rc == 0; i++) {
        xfer_record_field_t *f = &r->fields[i];
        char *name = H5Tget_member_name(nt, (unsigned) i);
        hid_t mt;
        if (!name || !(f->name = strdup(name))) {
            if (name)
                H5free_memory(name);
            rc = -1;
            break;
        }
        H5free_memory(name);
        if (!xfer_adapter_is_identifier(f->name)) {
            snprintf(why, cap, "member \"%.64s\": not a C identifier, as a record's fields are",
                     f->name);
            rc = 1;
            break;
        }
        if ((mt = H5Tget_member_type(nt, (unsigned) i)) < 0) {
            rc = -1;
            break;
        }
        rc = member_of(mt, f, why, cap);
        H5Tclose(mt);
        f->offset = H5Tget_member_offset(nt, (unsigned) i);
        if (rc == 0 && xfer_type_size(f->type) > r->align)
            r->align = xfer_type_size(f->type);
    }
    if (rc == 0 && xfer_adapter_record_check(r, why, cap) != 0)
        rc = 1;
out:
    if (nt >= 0)
        H5Tclose(nt);
    if (rc == 0)
        *out = r;
    else
        xfer_adapter_record_free(&r);
    if (rc < 0)
        snprintf(why, cap, "out of memory or an HDF5 error reading a compound type");
    return rc;
}

/* Make room for element @p n of the array *p of *cap elements (zeroed); -1 when out of memory. */
int h5_grow(void **p, int *cap, int n, size_t elem)
{
    if (n < *cap)
        return 0;
    {
        const int nc = *cap ? 2 * *cap : 16;
        void *np = realloc(*p, (size_t) nc * elem);
        if (!np)
            return -1;
        memset((char *) np + (size_t) *cap * elem, 0, (size_t) (nc - *cap) * elem);
        *p = np;
        *cap = nc;
    }
    return 0;
}

/* Select start/count in @p fs, after @p lead leading indices fixed at @p step (the step
 * dimension), or nothing when the box is empty; returns the matching memory space. */
hid_t h5_select_box(hid_t fs, int lead, uint64_t step, int ndims, const uint64_t start[],
                    const uint64_t count[], int *empty)
{
    hsize_t st[XFER_MAX_DIMS + 1], ct[XFER_MAX_DIMS + 1], one = 1;
    hid_t ms;
    int d;
    *empty = xfer_adapter_volume(ndims, count) == 0;
    if (*empty) {
        if (H5Sselect_none(fs) < 0 || (ms = H5Screate_simple(1, &one, NULL)) < 0)
            return H5I_INVALID_HID;
        if (H5Sselect_none(ms) < 0) {
            H5Sclose(ms);
            return H5I_INVALID_HID;
        }
        return ms;
    }
    if (lead) {
        st[0] = step;
        ct[0] = 1;
    }
    for (d = 0; d < ndims; d++) {
        st[lead + d] = start[d];
        ct[lead + d] = count[d];
    }
    if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, ct, NULL) < 0)
        return H5I_INVALID_HID;
    return H5Screate_simple(ndims, ct + lead, NULL);
}
