/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 adapter: parallel HDF5 (MPI-IO driver) under the ops table of <xfer/adapter.h>.
 *
 * Producer: the file is opened read-only by every rank of the communicator; its hard links are
 * visited in name order, groups before their members; datasets of native integer and float types
 * with 1..XFER_MAX_DIMS non-zero extents are listed, with their attributes (numeric, fixed and
 * variable-length strings); the rest is listed by skipped(). Reads are collective hyperslabs.
 *
 * Consumer: the file is created as PATH.tmp and renamed to PATH by commit. Every step end writes
 * the root attribute xfer_steps_complete and flushes the file (H5Fflush, global scope), so the
 * file on disk holds every completed step. abort() drops the step in progress (its group, or the
 * last index of the step dimension), closes, checks the result from one rank and renames it to
 * PATH when it holds at least one complete step; otherwise PATH.tmp is removed (no step) or left
 * for inspection (unreadable). See docs/adapters.md for what a reader finds after each failure.
 *
 * Errors are agreed on by all ranks (a write can fail on the I/O aggregators only) and name the
 * file, the object and the HDF5 call, with the innermost message of HDF5's error stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "adapter_common.h"

#define STEPS_ATTR "xfer_steps_complete"

/* ---- errors ------------------------------------------------------------------------------ */

typedef struct h5walk {
    char outer[256];
    char inner[512];
} h5walk_t;

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    h5walk_t *w = data;
    if (n == 0)
        snprintf(w->outer, sizeof(w->outer), "%s", e->desc ? e->desc : "");
    snprintf(w->inner, sizeof(w->inner), "%s(): %s", e->func_name ? e->func_name : "?",
             e->desc ? e->desc : "");
    return 0;
}

/* The HDF5 error stack of this thread, in one line, then cleared. */
static void h5_message(char *out, size_t cap)
{
    h5walk_t w = {"", ""};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, &w);
    H5Eclear2(H5E_DEFAULT);
    if (w.outer[0] && w.inner[0] && strlen(w.outer) + strlen(w.inner) + 4 <= cap)
        snprintf(out, cap, "%.255s [%.511s]", w.outer, w.inner);
    else
        snprintf(out, cap, "%s", w.outer[0] ? w.outer : "no HDF5 error message");
}

/* "FILE: OBJECT: CALL failed: message" (OBJECT may be ""). */
static xfer_status_t h5_fail(xfer_status_t st, const char *file, const char *obj, const char *call)
{
    char msg[800];
    h5_message(msg, sizeof(msg));
    xfer_adapter_set_error("%s: %s%s%s failed: %s", file, obj, obj[0] ? ": " : "", call, msg);
    return st;
}

/* Every rank gets the same status and the text of the lowest failing rank. */
static xfer_status_t agree(MPI_Comm comm, xfer_status_t st)
{
    int in[2], out[2], rank;
    MPI_Comm_rank(comm, &rank);
    in[0] = (int) st;
    in[1] = rank;
    if (MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MINLOC, comm) != MPI_SUCCESS) {
        xfer_adapter_set_error("MPI_Allreduce failed while agreeing on an HDF5 status");
        return XFER_ERR_MPI;
    }
    if (out[0] != XFER_SUCCESS) {
        char text[1024];
        snprintf(text, sizeof(text), "%s", xfer_adapter_error());
        MPI_Bcast(text, (int) sizeof(text), MPI_CHAR, out[1], comm);
        if (rank != out[1])
            xfer_adapter_set_error("%s", text);
    }
    return (xfer_status_t) out[0];
}

static hid_t native_of(xfer_type_t t)
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
    }
    return H5I_INVALID_HID;
}

static const char *class_name(H5T_class_t c)
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
static xfer_type_t type_of(hid_t t, char *why, size_t cap)
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
             class_name(c), size);
    return (xfer_type_t) 0;
}

/* ---- producer ------------------------------------------------------------------------------ */

typedef struct h5read {
    char *path;
    MPI_Comm comm;
    int rank;
    hid_t file;
    int nvars, capvars;
    xfer_adapter_var_t *vars;
    int ngroups, capgroups;
    xfer_adapter_var_t *groups;
    int nskipped, capskipped;
    char **skipped;
    xfer_status_t st; /* first failure of a visit */
} h5read_t;

static int grow(void **p, int *cap, int n, size_t elem)
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

static void skip(h5read_t *r, const char *name, const char *why)
{
    char line[XFER_ADAPTER_MAX_NAME + 256];
    if (grow((void **) &r->skipped, &r->capskipped, r->nskipped, sizeof(char *)) != 0)
        return;
    snprintf(line, sizeof(line), "%s: %s", name, why);
    r->skipped[r->nskipped] = strdup(line);
    if (r->skipped[r->nskipped])
        r->nskipped++;
}

typedef struct attr_walk {
    h5read_t *r;
    const char *obj;
    xfer_adapter_var_t *v;
    int cap;
} attr_walk_t;

/* Read one attribute of object w->obj into w->v (numeric or scalar string); skip the others. */
static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    attr_walk_t *w = data;
    h5read_t *r = w->r;
    xfer_adapter_attr_t a;
    char where[2 * XFER_ADAPTER_MAX_NAME], why[160];
    hid_t at = H5I_INVALID_HID, ft = H5I_INVALID_HID, sp = H5I_INVALID_HID;
    hssize_t npts;
    herr_t rc = 0;
    (void) info;
    memset(&a, 0, sizeof(a));
    snprintf(where, sizeof(where), "%s@%s", w->obj, name);
    if (strlen(name) >= sizeof(a.name)) {
        skip(r, where, "attribute name too long");
        return 0;
    }
    snprintf(a.name, sizeof(a.name), "%s", name);
    if ((at = H5Aopen(loc, name, H5P_DEFAULT)) < 0 || (ft = H5Aget_type(at)) < 0 ||
        (sp = H5Aget_space(at)) < 0 || (npts = H5Sget_simple_extent_npoints(sp)) < 0) {
        r->st = h5_fail(XFER_ERR_INTERNAL, r->path, where, "H5Aopen/H5Aget_type/H5Aget_space");
        rc = -1;
        goto out;
    }
    if (npts == 0 || H5Sget_simple_extent_type(sp) == H5S_NULL) {
        skip(r, where, "empty attribute not supported");
        goto out;
    }
    if (H5Tget_class(ft) == H5T_STRING) {
        const htri_t vl = H5Tis_variable_str(ft);
        if (npts != 1 || vl < 0) {
            skip(r, where, "string attributes must hold one string");
            goto out;
        }
        if (vl) {
            char *s = NULL;
            hid_t mt = H5Tcopy(H5T_C_S1);
            if (mt < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 || H5Aread(at, mt, &s) < 0) {
                r->st = h5_fail(XFER_ERR_INTERNAL, r->path, where, "H5Aread (variable string)");
                if (mt >= 0)
                    H5Tclose(mt);
                rc = -1;
                goto out;
            }
            a.is_text = 2;
            a.count = s ? strlen(s) : 0;
            a.data = malloc(a.count + 1);
            if (a.data && a.count)
                memcpy(a.data, s, a.count);
            H5free_memory(s);
            H5Tclose(mt);
        } else {
            a.is_text = 1;
            a.count = H5Tget_size(ft);
            a.data = malloc(a.count + 1);
            if (a.data && H5Aread(at, ft, a.data) < 0) {
                r->st = h5_fail(XFER_ERR_INTERNAL, r->path, where, "H5Aread (fixed string)");
                free(a.data);
                rc = -1;
                goto out;
            }
        }
    } else {
        hsize_t dims[XFER_MAX_DIMS];
        const int nd = H5Sget_simple_extent_ndims(sp);
        int d;
        a.type = type_of(ft, why, sizeof(why));
        if (a.type == 0) {
            skip(r, where, why);
            goto out;
        }
        if (nd < 0 || nd > XFER_MAX_DIMS || H5Sget_simple_extent_dims(sp, dims, NULL) < 0) {
            skip(r, where, "attribute dataspace not supported");
            goto out;
        }
        a.shape_set = 1;
        a.ndims = nd;
        for (d = 0; d < nd; d++)
            a.dims[d] = dims[d];
        a.count = (size_t) npts;
        a.data = malloc(a.count * xfer_type_size(a.type) + 1);
        if (a.data && H5Aread(at, native_of(a.type), a.data) < 0) {
            r->st = h5_fail(XFER_ERR_INTERNAL, r->path, where, "H5Aread");
            free(a.data);
            rc = -1;
            goto out;
        }
    }
    if (!a.data || grow((void **) &w->v->attrs, &w->cap, w->v->nattrs, sizeof(a)) != 0) {
        free(a.data);
        xfer_adapter_set_error("%s: %s: out of memory", r->path, where);
        r->st = XFER_ERR_NO_MEMORY;
        rc = -1;
        goto out;
    }
    w->v->attrs[w->v->nattrs++] = a;
out:
    if (sp >= 0)
        H5Sclose(sp);
    if (ft >= 0)
        H5Tclose(ft);
    if (at >= 0)
        H5Aclose(at);
    return rc;
}

static int read_attrs(h5read_t *r, hid_t obj, const char *name, xfer_adapter_var_t *v)
{
    attr_walk_t w = {r, name, v, 0};
    if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, NULL, attr_cb, &w) < 0) {
        if (r->st == XFER_SUCCESS)
            r->st = h5_fail(XFER_ERR_INTERNAL, r->path, name, "H5Aiterate2");
        return -1;
    }
    return 0;
}

static int add_group(h5read_t *r, hid_t g, const char *name)
{
    xfer_adapter_var_t *v;
    if (grow((void **) &r->groups, &r->capgroups, r->ngroups, sizeof(*v)) != 0) {
        xfer_adapter_set_error("%s: out of memory", r->path);
        r->st = XFER_ERR_NO_MEMORY;
        return -1;
    }
    v = &r->groups[r->ngroups++];
    snprintf(v->name, sizeof(v->name), "%s", name);
    return read_attrs(r, g, name, v);
}

static int add_dataset(h5read_t *r, hid_t ds, const char *name)
{
    xfer_adapter_var_t v;
    hsize_t dims[XFER_MAX_DIMS];
    hid_t t = H5I_INVALID_HID, sp = H5I_INVALID_HID;
    char why[160];
    int nd, d, rc = 0;
    memset(&v, 0, sizeof(v));
    snprintf(v.name, sizeof(v.name), "%s", name);
    if ((t = H5Dget_type(ds)) < 0 || (sp = H5Dget_space(ds)) < 0) {
        r->st = h5_fail(XFER_ERR_INTERNAL, r->path, name, "H5Dget_type/H5Dget_space");
        rc = -1;
        goto out;
    }
    v.type = type_of(t, why, sizeof(why));
    if (v.type == 0) {
        skip(r, name, why);
        goto out;
    }
    nd = H5Sget_simple_extent_type(sp) == H5S_SIMPLE ? H5Sget_simple_extent_ndims(sp) : 0;
    if (nd < 1 || nd > XFER_MAX_DIMS) {
        snprintf(why, sizeof(why), "%s not supported (1 to %d dimensions)",
                 nd == 0 ? "a scalar or empty dataspace" : "more dimensions", XFER_MAX_DIMS);
        skip(r, name, why);
        goto out;
    }
    if (H5Sget_simple_extent_dims(sp, dims, NULL) < 0) {
        r->st = h5_fail(XFER_ERR_INTERNAL, r->path, name, "H5Sget_simple_extent_dims");
        rc = -1;
        goto out;
    }
    v.ndims = nd;
    for (d = 0; d < nd; d++) {
        v.dims[d] = dims[d];
        if (dims[d] == 0) {
            skip(r, name, "an extent of 0 (an empty dataset) not supported");
            goto out;
        }
    }
    if (read_attrs(r, ds, name, &v) != 0) {
        xfer_adapter_var_clear(&v);
        rc = -1;
        goto out;
    }
    if (grow((void **) &r->vars, &r->capvars, r->nvars, sizeof(v)) != 0) {
        xfer_adapter_var_clear(&v);
        xfer_adapter_set_error("%s: out of memory", r->path);
        r->st = XFER_ERR_NO_MEMORY;
        rc = -1;
        goto out;
    }
    r->vars[r->nvars++] = v;
out:
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    return rc;
}

static herr_t visit_cb(hid_t root, const char *rel, const H5L_info_t *info, void *data)
{
    h5read_t *r = data;
    char name[XFER_ADAPTER_MAX_NAME];
    H5I_type_t kind;
    hid_t obj;
    int rc = 0;
    if (strlen(rel) + 2 > sizeof(name)) {
        skip(r, rel, "path too long");
        return 0;
    }
    snprintf(name, sizeof(name), "/%s", rel);
    if (info->type != H5L_TYPE_HARD) {
        skip(r, name, "soft or external link (not followed)");
        return 0;
    }
    if ((obj = H5Oopen(root, rel, H5P_DEFAULT)) < 0) {
        r->st = h5_fail(XFER_ERR_INTERNAL, r->path, name, "H5Oopen");
        return -1;
    }
    kind = H5Iget_type(obj);
    if (kind == H5I_GROUP)
        rc = add_group(r, obj, name);
    else if (kind == H5I_DATASET)
        rc = add_dataset(r, obj, name);
    else
        skip(r, name, "named datatype (not a dataset)");
    H5Oclose(obj);
    return rc < 0 ? -1 : 0;
}

static xfer_status_t h5_close_read(void **hp)
{
    h5read_t *r = hp ? *hp : NULL;
    xfer_status_t st = XFER_SUCCESS;
    int i;
    if (!r)
        return XFER_SUCCESS;
    if (r->file >= 0 && H5Fclose(r->file) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, r->path, "", "H5Fclose");
    for (i = 0; i < r->nvars; i++)
        xfer_adapter_var_clear(&r->vars[i]);
    for (i = 0; i < r->ngroups; i++)
        xfer_adapter_var_clear(&r->groups[i]);
    for (i = 0; i < r->nskipped; i++)
        free(r->skipped[i]);
    free(r->vars);
    free(r->groups);
    free(r->skipped);
    free(r->path);
    free(r);
    *hp = NULL;
    return st;
}

static xfer_status_t h5_open_read(const char *path, MPI_Comm comm, void **hp)
{
    h5read_t *r = calloc(1, sizeof(*r));
    hid_t fapl = H5I_INVALID_HID, root = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    *hp = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported through the status */
    if (!r || !(r->path = strdup(path))) {
        free(r);
        xfer_adapter_set_error("%s: out of memory", path);
        return agree(comm, XFER_ERR_NO_MEMORY);
    }
    r->comm = comm;
    r->file = H5I_INVALID_HID;
    MPI_Comm_rank(comm, &r->rank);
    if (access(path, R_OK) != 0) {
        xfer_adapter_set_error("%s: cannot open for reading: %s", path, strerror(errno));
        st = XFER_ERR_NOT_FOUND;
        goto out;
    }
    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
        H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0) {
        st = h5_fail(XFER_ERR_INTERNAL, path, "", "H5Pset_fapl_mpio");
        goto out;
    }
    if ((r->file = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0) {
        st = h5_fail(XFER_ERR_INVALID_ARG, path, "", "H5Fopen (read-only, MPI-IO)");
        goto out;
    }
    if ((root = H5Gopen2(r->file, "/", H5P_DEFAULT)) < 0) {
        st = h5_fail(XFER_ERR_INTERNAL, path, "/", "H5Gopen2");
        goto out;
    }
    if (add_group(r, root, "/") != 0 ||
        H5Lvisit(root, H5_INDEX_NAME, H5_ITER_INC, visit_cb, r) < 0) {
        st = r->st != XFER_SUCCESS ? r->st : h5_fail(XFER_ERR_INTERNAL, path, "/", "H5Lvisit");
        goto out;
    }
out:
    if (root >= 0)
        H5Gclose(root);
    if (fapl >= 0)
        H5Pclose(fapl);
    st = agree(comm, st);
    if (st != XFER_SUCCESS) {
        char keep[1024];
        void *tmp = r;
        snprintf(keep, sizeof(keep), "%s", xfer_adapter_error());
        h5_close_read(&tmp);
        xfer_adapter_set_error("%s", keep);
        return st;
    }
    *hp = r;
    return XFER_SUCCESS;
}

static xfer_status_t h5_vars(void *h, int *n, const xfer_adapter_var_t **vars)
{
    h5read_t *r = h;
    *n = r->nvars;
    *vars = r->vars;
    return XFER_SUCCESS;
}

static xfer_status_t h5_groups(void *h, int *n, const xfer_adapter_var_t **groups)
{
    h5read_t *r = h;
    *n = r->ngroups;
    *groups = r->groups;
    return XFER_SUCCESS;
}

static xfer_status_t h5_skipped(void *h, int *n, const char *const **lines)
{
    h5read_t *r = h;
    *n = r->nskipped;
    *lines = (const char *const *) r->skipped;
    return XFER_SUCCESS;
}

static xfer_status_t h5_lookup(void *h, const char *name)
{
    h5read_t *r = h;
    const size_t len = strlen(name);
    int i;
    for (i = 0; i < r->nvars; i++)
        if (strcmp(r->vars[i].name, name) == 0)
            return XFER_SUCCESS;
    for (i = 0; i < r->nskipped; i++)
        if (strncmp(r->skipped[i], name, len) == 0 && strncmp(r->skipped[i] + len, ": ", 2) == 0) {
            xfer_adapter_set_error("%s: dataset %s", r->path, r->skipped[i]);
            return XFER_ERR_NOT_SUPPORTED;
        }
    for (i = 0; i < r->ngroups; i++)
        if (strcmp(r->groups[i].name, name) == 0) {
            xfer_adapter_set_error("%s: %s is a group, not a dataset", r->path, name);
            return XFER_ERR_NOT_SUPPORTED;
        }
    xfer_adapter_set_error("%s: no dataset %s", r->path, name);
    return XFER_ERR_NOT_FOUND;
}

/* Select start/count in @p fs, after @p lead leading indices fixed at @p step (the step
 * dimension), or nothing when the box is empty; returns the matching memory space. */
static hid_t select_box(hid_t fs, int lead, uint64_t step, int ndims, const uint64_t start[],
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

static xfer_status_t h5_read(void *h, int var, const uint64_t start[], const uint64_t count[],
                             void *buf)
{
    h5read_t *r = h;
    const xfer_adapter_var_t *v;
    hid_t ds = H5I_INVALID_HID, fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
    hid_t dx = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    char dummy[16];
    int empty;
    if (var < 0 || var >= r->nvars) {
        xfer_adapter_set_error("%s: no variable %d", r->path, var);
        return agree(r->comm, XFER_ERR_INVALID_ARG);
    }
    v = &r->vars[var];
    if ((ds = H5Dopen2(r->file, v->name, H5P_DEFAULT)) < 0) {
        st = h5_fail(XFER_ERR_INTERNAL, r->path, v->name, "H5Dopen2");
        goto out;
    }
    if ((fs = H5Dget_space(ds)) < 0 ||
        (ms = select_box(fs, 0, 0, v->ndims, start, count, &empty)) < 0) {
        st = h5_fail(XFER_ERR_INVALID_ARG, r->path, v->name, "H5Sselect_hyperslab");
        goto out;
    }
    if ((dx = H5Pcreate(H5P_DATASET_XFER)) < 0 || H5Pset_dxpl_mpio(dx, H5FD_MPIO_COLLECTIVE) < 0) {
        st = h5_fail(XFER_ERR_INTERNAL, r->path, v->name, "H5Pset_dxpl_mpio");
        goto out;
    }
    if (H5Dread(ds, native_of(v->type), ms, fs, dx, empty || !buf ? (void *) dummy : buf) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, r->path, v->name, "H5Dread (collective)");
out:
    if (dx >= 0)
        H5Pclose(dx);
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    if (ds >= 0)
        H5Dclose(ds);
    return agree(r->comm, st);
}

/* ---- consumer ------------------------------------------------------------------------------ */

typedef struct h5write {
    char *path, *tmp;
    MPI_Comm comm;
    int rank;
    hid_t file;
    xfer_adapter_wopts_t o;
    uint64_t completed; /* steps ended */
    int in_step;        /* something of step `completed` was written */
    /* rank 0: the file's allocated bytes after the last completed step, and the most a step
     * has added to them (the free-space check before each step) */
    uint64_t alloc_last, growth_max;
    int nnames, capnames;
    char **names; /* STEP_DIM: the datasets, created in step 0 */
} h5write_t;

/* Steps are written in order, one at a time; the same-paths layout holds one. */
static xfer_status_t check_step(h5write_t *w, uint64_t step, const char *what)
{
    if (w->file < 0) {
        xfer_adapter_set_error("%s: %s: the file is closed", w->tmp, what);
        return XFER_ERR_STATE;
    }
    if (step != w->completed) {
        xfer_adapter_set_error("%s: %s: step %llu written while step %llu is the current one",
                               w->tmp, what, (unsigned long long) step,
                               (unsigned long long) w->completed);
        return XFER_ERR_STATE;
    }
    if (w->o.layout == XFER_ADAPTER_SAME_PATHS && step > 0) {
        xfer_adapter_set_error("%s: %s: the same-paths layout holds one step (step %llu given)",
                               w->tmp, what, (unsigned long long) step);
        return XFER_ERR_INVALID_ARG;
    }
    return XFER_SUCCESS;
}

/* The directory of @p path ("." for a bare name, "/" for a file in the root). */
static void dir_of(const char *path, char *dir, size_t cap)
{
    char *slash;
    snprintf(dir, cap, "%s", path);
    slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        snprintf(dir, cap, ".");
}

/* Bytes allocated to @p path on its file system (0 if it cannot be told). */
static uint64_t allocated(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t) sb.st_blocks * 512u : 0;
}

/* Before the first write of a step after step 0: does the file system hold another step as
 * large as the largest so far, with a quarter and 16 KiB to spare? A step refused here leaves
 * the file as the last step end flushed it. Why: a full disk met inside HDF5 1.10 with several
 * writer ranks can leave the ranks in different collective calls (an error path that skips one)
 * and hang them; met here, the failure is agreed before any HDF5 call (docs/adapters.md). */
static xfer_status_t space_check(h5write_t *w, uint64_t step)
{
    xfer_status_t st = XFER_SUCCESS;
    if (w->in_step || step == 0 || w->o.no_space_check)
        return XFER_SUCCESS;
    if (w->rank == 0) {
        const uint64_t need = w->growth_max + w->growth_max / 4 + (16u << 10);
        char dir[4096];
        struct statvfs fs;
        dir_of(w->tmp, dir, sizeof(dir));
        if (statvfs(dir, &fs) == 0 && (uint64_t) fs.f_bavail * fs.f_frsize < need) {
            xfer_adapter_set_error("%s: step %llu not started: %llu bytes free on its file system, "
                                   "the largest step so far took %llu (No space left on device)",
                                   w->tmp, (unsigned long long) step,
                                   (unsigned long long) fs.f_bavail * fs.f_frsize,
                                   (unsigned long long) w->growth_max);
            st = XFER_ERR_INTERNAL;
        }
    }
    return agree(w->comm, st);
}

/* Where object @p name of step @p step lives in the output file. */
static void out_name(const h5write_t *w, uint64_t step, const char *name, char *out, size_t cap)
{
    if (w->o.layout == XFER_ADAPTER_GROUP_PER_STEP)
        snprintf(out, cap, "/step_%06llu%s", (unsigned long long) step,
                 strcmp(name, "/") == 0 ? "" : name);
    else
        snprintf(out, cap, "%s", name);
}

static xfer_status_t write_attr(h5write_t *w, hid_t loc, const char *obj,
                                const xfer_adapter_attr_t *a)
{
    char where[2 * XFER_ADAPTER_MAX_NAME];
    hid_t ty = H5I_INVALID_HID, sp = H5I_INVALID_HID, at = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    char *text = NULL;
    snprintf(where, sizeof(where), "%s@%s", obj, a->name);
    if (a->is_text) {
        text = calloc(1, a->count + 1);
        if (!text) {
            xfer_adapter_set_error("%s: %s: out of memory", w->tmp, where);
            return XFER_ERR_NO_MEMORY;
        }
        if (a->count)
            memcpy(text, a->data, a->count);
        if ((ty = H5Tcopy(H5T_C_S1)) < 0 ||
            H5Tset_size(ty, a->is_text == 2 ? H5T_VARIABLE : (a->count ? a->count : 1)) < 0 ||
            (sp = H5Screate(H5S_SCALAR)) < 0) {
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, where, "H5Tset_size");
            goto out;
        }
    } else {
        hsize_t dims[XFER_MAX_DIMS];
        int d, nd = a->shape_set ? a->ndims : 1;
        for (d = 0; d < nd; d++)
            dims[d] = a->shape_set ? a->dims[d] : a->count;
        if ((ty = H5Tcopy(native_of(a->type))) < 0 ||
            (sp = nd == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(nd, dims, NULL)) < 0) {
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, where, "H5Screate");
            goto out;
        }
    }
    if ((at = H5Acreate2(loc, a->name, ty, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, where, "H5Acreate2");
        goto out;
    }
    if (H5Awrite(at, ty, a->is_text == 2 ? (const void *) &text : a->is_text ? text : a->data) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, where, "H5Awrite");
out:
    if (at >= 0)
        H5Aclose(at);
    if (sp >= 0)
        H5Sclose(sp);
    if (ty >= 0)
        H5Tclose(ty);
    free(text);
    return st;
}

static xfer_status_t write_attrs(h5write_t *w, hid_t loc, const char *obj,
                                 const xfer_adapter_var_t *v)
{
    int a;
    for (a = 0; a < v->nattrs; a++) {
        const xfer_status_t st = write_attr(w, loc, obj, &v->attrs[a]);
        if (st != XFER_SUCCESS)
            return st;
    }
    return XFER_SUCCESS;
}

static hid_t intermediate_lcpl(void)
{
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    if (lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) < 0) {
        H5Pclose(lcpl);
        return H5I_INVALID_HID;
    }
    return lcpl;
}

static xfer_status_t h5_write_group(void *h, uint64_t step, const xfer_adapter_var_t *g)
{
    h5write_t *w = h;
    char name[XFER_ADAPTER_MAX_NAME + 32];
    hid_t grp = H5I_INVALID_HID, lcpl = H5I_INVALID_HID;
    xfer_status_t st = check_step(w, step, g->name);
    if (st != XFER_SUCCESS)
        return agree(w->comm, st);
    if ((st = space_check(w, step)) != XFER_SUCCESS)
        return st;
    w->in_step = 1;
    if (w->o.layout == XFER_ADAPTER_STEP_DIM && step > 0)
        return agree(w->comm, XFER_SUCCESS); /* groups and their attributes exist since step 0 */
    out_name(w, step, g->name, name, sizeof(name));
    if (strcmp(name, "/") == 0)
        grp = H5Gopen2(w->file, "/", H5P_DEFAULT);
    else if ((lcpl = intermediate_lcpl()) >= 0)
        grp = H5Gcreate2(w->file, name, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    if (grp < 0) {
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Gcreate2");
        goto out;
    }
    st = write_attrs(w, grp, name, g);
out:
    if (grp >= 0)
        H5Gclose(grp);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    return agree(w->comm, st);
}

/* The chunk shape: the options' (clipped to the extents) or the whole extents, halved along the
 * slowest dimensions until a chunk holds at most 1 MiB. */
static void chunk_of(const h5write_t *w, const xfer_adapter_var_t *v, hsize_t *c)
{
    const size_t es = xfer_type_size(v->type);
    uint64_t bytes = es;
    int d;
    for (d = 0; d < v->ndims; d++) {
        c[d] = w->o.chunk[d] && w->o.chunk[d] < v->dims[d] ? w->o.chunk[d] : v->dims[d];
        bytes *= c[d];
    }
    for (d = 0; d < v->ndims && bytes > (1u << 20); d++)
        while (c[d] > 1 && bytes > (1u << 20)) {
            bytes /= c[d];
            c[d] = (c[d] + 1) / 2;
            bytes *= c[d];
        }
}

static int remember(h5write_t *w, const char *name)
{
    if (grow((void **) &w->names, &w->capnames, w->nnames, sizeof(char *)) != 0 ||
        !(w->names[w->nnames] = strdup(name)))
        return -1;
    w->nnames++;
    return 0;
}

static xfer_status_t h5_write(void *h, uint64_t step, const xfer_adapter_var_t *v,
                              const uint64_t start[], const uint64_t count[], const void *buf)
{
    h5write_t *w = h;
    const int lead = w->o.layout == XFER_ADAPTER_STEP_DIM;
    hsize_t dims[XFER_MAX_DIMS + 1], maxd[XFER_MAX_DIMS + 1], chunk[XFER_MAX_DIMS + 1];
    hid_t ds = H5I_INVALID_HID, sp = H5I_INVALID_HID, fs = H5I_INVALID_HID;
    hid_t ms = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, lcpl = H5I_INVALID_HID;
    hid_t dx = H5I_INVALID_HID;
    char name[XFER_ADAPTER_MAX_NAME + 32], dummy[16];
    xfer_status_t st = check_step(w, step, v->name);
    int d, empty;
    if (st != XFER_SUCCESS)
        return agree(w->comm, st);
    if (v->ndims < 1 || v->ndims > XFER_MAX_DIMS || xfer_type_size(v->type) == 0) {
        xfer_adapter_set_error("%s: %s: invalid type or shape", w->tmp, v->name);
        return agree(w->comm, XFER_ERR_INVALID_ARG);
    }
    if ((st = space_check(w, step)) != XFER_SUCCESS)
        return st;
    w->in_step = 1;
    out_name(w, step, v->name, name, sizeof(name));
    dims[0] = maxd[0] = chunk[0] = step + 1;
    for (d = 0; d < v->ndims; d++)
        dims[lead + d] = maxd[lead + d] = v->dims[d];
    if (!lead || step == 0) {
        if (lead) {
            maxd[0] = H5S_UNLIMITED;
            chunk[0] = 1;
        }
        chunk_of(w, v, chunk + lead);
        if ((sp = H5Screate_simple(v->ndims + lead, dims, maxd)) < 0 ||
            (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 ||
            ((lead || w->o.chunked) && H5Pset_chunk(dcpl, v->ndims + lead, chunk) < 0) ||
            H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 || (lcpl = intermediate_lcpl()) < 0) {
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Pset_chunk");
            goto out;
        }
        if ((ds = H5Dcreate2(w->file, name, native_of(v->type), sp, lcpl, dcpl, H5P_DEFAULT)) < 0) {
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Dcreate2");
            goto out;
        }
        if ((st = write_attrs(w, ds, name, v)) != XFER_SUCCESS)
            goto out;
        if (lead && remember(w, name) != 0) {
            xfer_adapter_set_error("%s: %s: out of memory", w->tmp, name);
            st = XFER_ERR_NO_MEMORY;
            goto out;
        }
    } else {
        hsize_t cur[XFER_MAX_DIMS + 1];
        if ((ds = H5Dopen2(w->file, name, H5P_DEFAULT)) < 0) {
            st = h5_fail(XFER_ERR_NOT_FOUND, w->tmp, name, "H5Dopen2 (not written in step 0)");
            goto out;
        }
        if ((sp = H5Dget_space(ds)) < 0 || H5Sget_simple_extent_ndims(sp) != v->ndims + 1 ||
            H5Sget_simple_extent_dims(sp, cur, NULL) < 0) {
            xfer_adapter_set_error("%s: %s: shape differs from step 0", w->tmp, name);
            st = XFER_ERR_MISMATCH;
            goto out;
        }
        for (d = 0; d < v->ndims; d++)
            if (cur[1 + d] != dims[1 + d]) {
                xfer_adapter_set_error("%s: %s: shape differs from step 0", w->tmp, name);
                st = XFER_ERR_MISMATCH;
                goto out;
            }
        if (cur[0] < step + 1 && H5Dset_extent(ds, dims) < 0) {
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Dset_extent");
            goto out;
        }
    }
    if ((fs = H5Dget_space(ds)) < 0 ||
        (ms = select_box(fs, lead, step, v->ndims, start, count, &empty)) < 0) {
        st = h5_fail(XFER_ERR_INVALID_ARG, w->tmp, name, "H5Sselect_hyperslab");
        goto out;
    }
    if ((dx = H5Pcreate(H5P_DATASET_XFER)) < 0 || H5Pset_dxpl_mpio(dx, H5FD_MPIO_COLLECTIVE) < 0) {
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Pset_dxpl_mpio");
        goto out;
    }
    if (H5Dwrite(ds, native_of(v->type), ms, fs, dx, empty || !buf ? (const void *) dummy : buf) <
        0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Dwrite (collective)");
out:
    if (dx >= 0)
        H5Pclose(dx);
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    if (ds >= 0)
        H5Dclose(ds);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (sp >= 0)
        H5Sclose(sp);
    return agree(w->comm, st);
}

static xfer_status_t write_step_count(h5write_t *w, uint64_t n)
{
    hid_t sp = H5I_INVALID_HID, at = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    const htri_t ex = H5Aexists(w->file, STEPS_ATTR);
    if (ex < 0) {
        return h5_fail(XFER_ERR_INTERNAL, w->tmp, "/@" STEPS_ATTR, "H5Aexists");
    } else if (ex) {
        at = H5Aopen(w->file, STEPS_ATTR, H5P_DEFAULT);
    } else if ((sp = H5Screate(H5S_SCALAR)) >= 0) {
        at = H5Acreate2(w->file, STEPS_ATTR, H5T_NATIVE_UINT64, sp, H5P_DEFAULT, H5P_DEFAULT);
    }
    if (at < 0 || H5Awrite(at, H5T_NATIVE_UINT64, &n) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, "/@" STEPS_ATTR, "H5Acreate2/H5Awrite");
    if (at >= 0)
        H5Aclose(at);
    if (sp >= 0)
        H5Sclose(sp);
    return st;
}

static xfer_status_t h5_end_step(void *h, uint64_t step)
{
    h5write_t *w = h;
    xfer_status_t st = check_step(w, step, "end of step");
    if (st == XFER_SUCCESS && w->o.layout != XFER_ADAPTER_SAME_PATHS)
        st = write_step_count(w, step + 1);
    if (st == XFER_SUCCESS && H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, "", "H5Fflush (end of step)");
    st = agree(w->comm, st);
    if (st == XFER_SUCCESS) {
        w->completed++;
        w->in_step = 0;
        if (w->rank == 0) {
            const uint64_t a = allocated(w->tmp);
            if (a > w->alloc_last && a - w->alloc_last > w->growth_max)
                w->growth_max = a - w->alloc_last;
            w->alloc_last = a;
        }
    }
    return st;
}

/* One rank reopens the closed file (serial driver) and checks that its completed steps are
 * there: the step counter and, per layout, each step's group or the step extent. */
static int verify_kept(const h5write_t *w, char *why, size_t cap)
{
    hid_t f, at;
    uint64_t n = 0;
    int ok = 1, i;
    if ((f = H5Fopen(w->tmp, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
        h5_message(why, cap);
        return 0;
    }
    if (w->o.layout != XFER_ADAPTER_SAME_PATHS) {
        if ((at = H5Aopen(f, STEPS_ATTR, H5P_DEFAULT)) < 0 ||
            H5Aread(at, H5T_NATIVE_UINT64, &n) < 0 || n < w->completed) {
            snprintf(why, cap, "step counter missing or short");
            ok = 0;
        }
        if (at >= 0)
            H5Aclose(at);
    }
    if (ok && w->o.layout == XFER_ADAPTER_GROUP_PER_STEP) {
        char g[64];
        snprintf(g, sizeof(g), "/step_%06llu", (unsigned long long) (w->completed - 1));
        if (H5Lexists(f, g, H5P_DEFAULT) <= 0) {
            snprintf(why, cap, "%s missing", g);
            ok = 0;
        }
    }
    for (i = 0; ok && w->o.layout == XFER_ADAPTER_STEP_DIM && i < w->nnames; i++) {
        hid_t ds = H5Dopen2(f, w->names[i], H5P_DEFAULT), sp = -1;
        hsize_t dims[XFER_MAX_DIMS + 1];
        if (ds < 0 || (sp = H5Dget_space(ds)) < 0 || H5Sget_simple_extent_dims(sp, dims, 0) < 0 ||
            dims[0] < w->completed) {
            snprintf(why, cap, "%s unreadable or short", w->names[i]);
            ok = 0;
        }
        if (sp >= 0)
            H5Sclose(sp);
        if (ds >= 0)
            H5Dclose(ds);
    }
    H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    return ok;
}

/* Drop what the step in progress left: its group, or its index of the step dimension, and
 * set the counter back (a failed end_step may have raised it). */
static xfer_status_t write_step_count(h5write_t *w, uint64_t n);

static void drop_partial(h5write_t *w)
{
    char g[64];
    int i;
    if (w->o.layout != XFER_ADAPTER_SAME_PATHS)
        write_step_count(w, w->completed);
    if (w->o.layout == XFER_ADAPTER_GROUP_PER_STEP) {
        snprintf(g, sizeof(g), "/step_%06llu", (unsigned long long) w->completed);
        if (H5Lexists(w->file, g, H5P_DEFAULT) > 0)
            H5Ldelete(w->file, g, H5P_DEFAULT);
    }
    for (i = 0; w->o.layout == XFER_ADAPTER_STEP_DIM && i < w->nnames; i++) {
        hid_t ds = H5Dopen2(w->file, w->names[i], H5P_DEFAULT), sp = -1;
        hsize_t dims[XFER_MAX_DIMS + 1];
        if (ds >= 0 && (sp = H5Dget_space(ds)) >= 0 &&
            H5Sget_simple_extent_dims(sp, dims, NULL) >= 0 && dims[0] > w->completed) {
            dims[0] = w->completed;
            H5Dset_extent(ds, dims);
        }
        if (sp >= 0)
            H5Sclose(sp);
        if (ds >= 0)
            H5Dclose(ds);
    }
    H5Eclear2(H5E_DEFAULT);
}

static void free_write(h5write_t *w)
{
    int i;
    for (i = 0; i < w->nnames; i++)
        free(w->names[i]);
    free(w->names);
    free(w->path);
    free(w->tmp);
    free(w);
}

/* Rank 0 gives the closed temporary file its final name (and syncs the directory). */
static int rename_final(const h5write_t *w, char *why, size_t cap)
{
    char dir[4096];
    int fd;
    if (rename(w->tmp, w->path) != 0) {
        snprintf(why, cap, "rename(%s, %s): %s", w->tmp, w->path, strerror(errno));
        return 0;
    }
    dir_of(w->path, dir, sizeof(dir));
    if ((fd = open(dir, O_RDONLY)) >= 0) {
        fsync(fd);
        close(fd);
    }
    return 1;
}

static xfer_status_t h5_commit(void **hp)
{
    h5write_t *w = *hp;
    xfer_status_t st = XFER_SUCCESS;
    char why[512] = "";
    int ok = 1;
    if (w->in_step) {
        xfer_adapter_set_error("%s: commit with step %llu incomplete", w->tmp,
                               (unsigned long long) w->completed);
        st = XFER_ERR_STATE;
    }
    st = agree(w->comm, st);
    if (st != XFER_SUCCESS)
        return st; /* the handle stays: the caller aborts, keeping the completed steps */
    if (H5Fclose(w->file) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, "", "H5Fclose");
    w->file = H5I_INVALID_HID;
    st = agree(w->comm, st);
    if (st == XFER_SUCCESS) {
        if (w->rank == 0)
            ok = rename_final(w, why, sizeof(why));
        MPI_Bcast(&ok, 1, MPI_INT, 0, w->comm);
        if (!ok) {
            MPI_Bcast(why, (int) sizeof(why), MPI_CHAR, 0, w->comm);
            xfer_adapter_set_error("%s", why);
            st = XFER_ERR_INTERNAL;
        }
    }
    if (st == XFER_SUCCESS) {
        free_write(w);
        *hp = NULL;
    }
    return st; /* on failure the caller aborts: the handle stays for abort() */
}

static void h5_abort(void **hp)
{
    h5write_t *w = hp ? *hp : NULL;
    char err[1024], why[512] = "", outcome[1024];
    int kept = 0;
    if (!w)
        return;
    snprintf(err, sizeof(err), "%s", xfer_adapter_error());
    if (w->file >= 0) {
        if (w->completed > 0 && w->in_step)
            drop_partial(w);
        H5Fclose(w->file); /* a failure here is judged by reading the file back */
        H5Eclear2(H5E_DEFAULT);
        w->file = H5I_INVALID_HID;
    }
    MPI_Barrier(w->comm);
    if (w->rank == 0) {
        if (w->completed == 0) {
            unlink(w->tmp);
            snprintf(outcome, sizeof(outcome), "no step completed: nothing kept");
        } else if (verify_kept(w, why, sizeof(why)) && rename_final(w, why, sizeof(why))) {
            kept = 1;
            snprintf(outcome, sizeof(outcome), "kept the %llu completed step(s) in %s",
                     (unsigned long long) w->completed, w->path);
        } else {
            snprintf(outcome, sizeof(outcome), "%s left for inspection, not readable: %s", w->tmp,
                     why);
        }
    }
    MPI_Bcast(outcome, (int) sizeof(outcome), MPI_CHAR, 0, w->comm);
    MPI_Bcast(&kept, 1, MPI_INT, 0, w->comm);
    xfer_adapter_set_error("%s%s%s", err, err[0] ? "; " : "", outcome);
    free_write(w);
    *hp = NULL;
}

static xfer_status_t h5_create(const char *path, MPI_Comm comm, const xfer_adapter_wopts_t *o,
                               void **hp)
{
    h5write_t *w = calloc(1, sizeof(*w));
    hid_t fapl = H5I_INVALID_HID;
    MPI_Info info = MPI_INFO_NULL;
    xfer_status_t st = XFER_SUCCESS;
    *hp = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (!w || !(w->path = strdup(path)) || !(w->tmp = malloc(strlen(path) + 5))) {
        if (w)
            free(w->path);
        free(w);
        xfer_adapter_set_error("%s: out of memory", path);
        return agree(comm, XFER_ERR_NO_MEMORY);
    }
    sprintf(w->tmp, "%s.tmp", path);
    w->comm = comm;
    w->file = H5I_INVALID_HID;
    MPI_Comm_rank(comm, &w->rank);
    w->o = *o;
    if (o->layout != XFER_ADAPTER_GROUP_PER_STEP && o->layout != XFER_ADAPTER_STEP_DIM &&
        o->layout != XFER_ADAPTER_SAME_PATHS) {
        xfer_adapter_set_error("%s: unknown layout %d", path, (int) o->layout);
        st = XFER_ERR_INVALID_ARG;
        goto out;
    }
    /* Collective metadata writes: a failing write (a full disk) fails on every rank alike.
     * ROMIO: no data sieving for writes, whose fcntl lock a failed write leaves held (another
     * rank then waits on it for ever); HDF5 writes few strided pieces, and OMPIO ignores it. */
    if (MPI_Info_create(&info) != MPI_SUCCESS ||
        MPI_Info_set(info, "romio_ds_write", "disable") != MPI_SUCCESS) {
        xfer_adapter_set_error("%s: MPI_Info_create/MPI_Info_set failed", w->tmp);
        st = XFER_ERR_MPI;
        goto out;
    }
    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 || H5Pset_fapl_mpio(fapl, comm, info) < 0 ||
        H5Pset_coll_metadata_write(fapl, 1) < 0 || H5Pset_all_coll_metadata_ops(fapl, 1) < 0) {
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, "", "H5Pset_fapl_mpio");
        goto out;
    }
    if ((w->file = H5Fcreate(w->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0) {
        st = h5_fail(XFER_ERR_INVALID_ARG, w->tmp, "", "H5Fcreate (MPI-IO)");
        goto out;
    }
    if (w->rank == 0)
        w->alloc_last = allocated(w->tmp);
out:
    if (fapl >= 0)
        H5Pclose(fapl);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    st = agree(comm, st);
    if (st != XFER_SUCCESS) {
        if (w->file >= 0)
            H5Fclose(w->file);
        if (w->rank == 0 && w->file >= 0)
            unlink(w->tmp);
        free_write(w);
        return st;
    }
    *hp = w;
    return XFER_SUCCESS;
}

static const xfer_adapter_ops_t hdf5_ops = {
    .name = "hdf5",
    .open_read = h5_open_read,
    .vars = h5_vars,
    .read = h5_read,
    .close_read = h5_close_read,
    .create = h5_create,
    .write = h5_write,
    .end_step = h5_end_step,
    .commit = h5_commit,
    .abort = h5_abort,
    .groups = h5_groups,
    .lookup = h5_lookup,
    .write_group = h5_write_group,
    .skipped = h5_skipped,
};

const xfer_adapter_ops_t *xfer_adapter_hdf5(void)
{
    return &hdf5_ops;
}
