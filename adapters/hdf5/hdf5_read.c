/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 adapter (hdf5_adapter.c): the producer side: list a file's variables, read them. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "hdf5_internal.h"

/* ---- producer ------------------------------------------------------------------------------ */

typedef struct h5read {
    char *path;
    MPI_Comm comm;
    int rank;
    int serial; /* a communicator of one process: HDF5's POSIX driver, no MPI-IO */
    hid_t file;
    int nvars, capvars;
    xfer_adapter_var_t *vars;
    int ngroups, capgroups;
    xfer_adapter_var_t *groups;
    int nskipped, capskipped;
    char **skipped;
    int nrecords, caprecords;
    xfer_record_t **records; /* the records of vars[], owned here */
    xfer_status_t st;        /* first failure of a visit */
} h5read_t;

static void skip(h5read_t *r, const char *name, const char *why)
{
    char line[XFER_ADAPTER_MAX_NAME + 256];
    if (h5_grow((void **) &r->skipped, &r->capskipped, r->nskipped, sizeof(char *)) != 0)
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
        a.type = h5_type_of(ft, why, sizeof(why));
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
        if (a.data && H5Aread(at, h5_native_of(a.type), a.data) < 0) {
            r->st = h5_fail(XFER_ERR_INTERNAL, r->path, where, "H5Aread");
            free(a.data);
            rc = -1;
            goto out;
        }
    }
    if (!a.data || h5_grow((void **) &w->v->attrs, &w->cap, w->v->nattrs, sizeof(a)) != 0) {
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
    if (h5_grow((void **) &r->groups, &r->capgroups, r->ngroups, sizeof(*v)) != 0) {
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
    if (H5Aexists(ds, XFER_COORD_ATTR) > 0) { /* one the adapter wrote: not the stream's */
        skip(r, name,
             "written by the HDF5 adapter for readers (time, axis indices, or a record's "
             "fields copied for XDMF)");
        goto out;
    }
    if (H5Tget_class(t) == H5T_COMPOUND) {
        xfer_record_t *rec = NULL;
        const int k = h5_record_of(t, &rec, why, sizeof(why));
        if (k < 0) {
            r->st = h5_fail(XFER_ERR_INTERNAL, r->path, name, "H5Tget_native_type (compound)");
            rc = -1;
            goto out;
        }
        if (k > 0) {
            char line[sizeof(why) + 64];
            snprintf(line, sizeof(line), "compound type not supported as a record: %s", why);
            skip(r, name, line);
            goto out;
        }
        if (h5_grow((void **) &r->records, &r->caprecords, r->nrecords, sizeof(rec)) != 0) {
            xfer_adapter_record_free(&rec);
            xfer_adapter_set_error("%s: out of memory", r->path);
            r->st = XFER_ERR_NO_MEMORY;
            rc = -1;
            goto out;
        }
        r->records[r->nrecords++] = rec; /* freed with the handle, listed or not */
        v.type = XFER_TYPE_RECORD;
        v.record = rec;
    } else if ((v.type = h5_type_of(t, why, sizeof(why))) == 0) {
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
    for (d = 0; d < nd; d++) /* (an extent of 0: a joined step without rows, say) */
        v.dims[d] = dims[d];
    if (read_attrs(r, ds, name, &v) != 0) {
        xfer_adapter_var_clear(&v);
        rc = -1;
        goto out;
    }
    if (h5_grow((void **) &r->vars, &r->capvars, r->nvars, sizeof(v)) != 0) {
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

xfer_status_t h5_close_read(void **hp)
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
    for (i = 0; i < r->nrecords; i++)
        xfer_adapter_record_free(&r->records[i]);
    free(r->records);
    free(r->vars);
    free(r->groups);
    free(r->skipped);
    free(r->path);
    free(r);
    *hp = NULL;
    return st;
}

xfer_status_t h5_open_read(const char *path, MPI_Comm comm, void **hp)
{
    h5read_t *r = calloc(1, sizeof(*r));
    hid_t fapl = H5I_INVALID_HID, root = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    *hp = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported through the status */
    if (!r || !(r->path = strdup(path))) {
        free(r);
        xfer_adapter_set_error("%s: out of memory", path);
        return xfer_adapter_agree(comm, XFER_ERR_NO_MEMORY);
    }
    r->comm = comm;
    r->file = H5I_INVALID_HID;
    MPI_Comm_rank(comm, &r->rank);
    MPI_Comm_size(comm, &r->serial);
    /* One process reads on its own (a file channel's receiving rank): through the POSIX
     * driver, which needs nothing of MPI. MPI-IO would, and on Open MPI a job that is being
     * torn down (a peer died) fails its file opens (the shared file pointer's files go with
     * the session directory) while the file itself is whole. */
    r->serial = r->serial == 1;
    /* what one rank finds (a file its node does not see) is agreed before the collective open */
    if (access(path, R_OK) != 0) {
        xfer_adapter_set_error("%s: cannot open for reading: %s", path, strerror(errno));
        st = XFER_ERR_NOT_FOUND;
    } else if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
               (!r->serial && H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0)) {
        st = h5_fail(XFER_ERR_INTERNAL, path, "", "H5Pset_fapl_mpio");
    }
    if (!h5_agreed(comm, &st))
        goto out;
    if ((r->file = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0)
        st = h5_fail(XFER_ERR_INVALID_ARG, path, "",
                     r->serial ? "H5Fopen (read-only)" : "H5Fopen (read-only, MPI-IO)");
    if (!h5_agreed(comm, &st))
        goto out;
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
    st = xfer_adapter_agree(comm, st);
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

xfer_status_t h5_vars(void *h, int *n, const xfer_adapter_var_t **vars)
{
    h5read_t *r = h;
    *n = r->nvars;
    *vars = r->vars;
    return XFER_SUCCESS;
}

xfer_status_t h5_groups(void *h, int *n, const xfer_adapter_var_t **groups)
{
    h5read_t *r = h;
    *n = r->ngroups;
    *groups = r->groups;
    return XFER_SUCCESS;
}

xfer_status_t h5_skipped(void *h, int *n, const char *const **lines)
{
    h5read_t *r = h;
    *n = r->nskipped;
    *lines = (const char *const *) r->skipped;
    return XFER_SUCCESS;
}

xfer_status_t h5_lookup(void *h, const char *name)
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

/* Read with the memory type of the caller's record @p as (or the variable's own): HDF5 converts
 * a compound member by member, matched by name, so the file's member order and padding do not
 * matter; each of the caller's fields is checked against the file's first. */
xfer_status_t h5_read_record(void *h, int var, const xfer_record_t *as, const uint64_t start[],
                             const uint64_t count[], void *buf)
{
    h5read_t *r = h;
    const xfer_adapter_var_t *v;
    hid_t ds = H5I_INVALID_HID, fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
    hid_t dx = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    char dummy[16], why[256];
    int empty;
    if (var < 0 || var >= r->nvars) {
        xfer_adapter_set_error("%s: no variable %d", r->path, var);
        return xfer_adapter_agree(r->comm, XFER_ERR_INVALID_ARG);
    }
    v = &r->vars[var];
    if (as && v->type != XFER_TYPE_RECORD) {
        xfer_adapter_set_error("%s: %s: read as a record, but it holds %s", r->path, v->name,
                               xfer_type_name(v->type));
        return xfer_adapter_agree(r->comm, XFER_ERR_MISMATCH);
    }
    if (as && (xfer_adapter_record_check(as, why, sizeof(why)) != 0 ||
               xfer_adapter_record_fits(v->record, as, why, sizeof(why)) != 0)) {
        xfer_adapter_set_error("%s: %s: cannot read its records as the caller's: %s", r->path,
                               v->name, why);
        return xfer_adapter_agree(r->comm, XFER_ERR_MISMATCH);
    }
    /* the open and the selection are each rank's own: agreed before the collective read */
    if ((mt = as ? h5_record_mem_type(as) : h5_mem_type(v)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, r->path, v->name, "H5Tcreate (memory type)");
    else if ((ds = H5Dopen2(r->file, v->name, H5P_DEFAULT)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, r->path, v->name, "H5Dopen2");
    else if ((fs = H5Dget_space(ds)) < 0 ||
             (ms = h5_select_box(fs, 0, 0, v->ndims, start, count, &empty)) < 0)
        st = h5_fail(XFER_ERR_INVALID_ARG, r->path, v->name, "H5Sselect_hyperslab");
    else if (!r->serial && (dx = h5_collective_dxpl()) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, r->path, v->name, "H5Pset_dxpl_mpio");
    if (h5_agreed(r->comm, &st) && H5Dread(ds, mt, ms, fs, r->serial ? H5P_DEFAULT : dx,
                                           empty || !buf ? (void *) dummy : buf) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, r->path, v->name,
                     r->serial ? "H5Dread" : "H5Dread (collective)");
    H5_CLOSE(mt, dx, ms, fs, ds);
    return xfer_adapter_agree(r->comm, st);
}

xfer_status_t h5_read(void *h, int var, const uint64_t start[], const uint64_t count[], void *buf)
{
    return h5_read_record(h, var, NULL, start, count, buf);
}
