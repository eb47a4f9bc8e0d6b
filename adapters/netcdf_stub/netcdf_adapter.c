/* SPDX-License-Identifier: BSD-3-Clause */
/* The netCDF-4 adapter (xfer_adapter_netcdf(), docs/adapters.md "netCDF").
 *
 * Debian's libnetcdf is serial (built on serial HDF5). Producer ranks each open the file
 * read-only and read their own hyperslab independently. Consumer writes are funnelled: every
 * rank sends its slab of one variable to rank 0 of the create communicator, one slab at a time,
 * and rank 0 writes it with nc_put_vara; memory stays bounded by the largest slab. The file is
 * created as "<path>.tmp" and renamed to <path> on commit; end_step is an nc_sync, so a
 * failure keeps every completed step: abort renames the file to "<path>.partial".
 *
 * Records (XFER_TYPE_RECORD) are netCDF-4 compound types: written as one compound per record
 * layout, its fields at their offsets (the C struct's layout); a compound variable of scalar and
 * 1-D array fields is listed as a record in the layout nc_get_vara fills, and read_record moves
 * the fields into the caller's layout by name.
 *
 * Every call that takes a communicator agrees on one status (the first failing rank's error
 * text is broadcast), so ranks never disagree about success. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfer/adapter_netcdf.h>

#include "adapter_common.h"

#define MSG_CHUNK   (1 << 30) /* bytes per MPI message of a slab (counts are ints) */
#define TAG_SLAB    7301
#define ERR_TEXT    1024
#define STEP_FORMAT "step_%06" PRIu64

/* ---- shared helpers ------------------------------------------------------------------------ */

static xfer_status_t nca_fail(int rc, const char *call, const char *file, const char *var)
{
    xfer_adapter_set_error("netcdf: %s(\"%s\"%s%s%s): %s", call, file, var ? ", variable \"" : "",
                           var ? var : "", var ? "\"" : "", nc_strerror(rc));
    return XFER_ERR_INTERNAL;
}

static nc_type nca_type_of(xfer_type_t t)
{
    switch (t) {
    case XFER_TYPE_INT8:
        return NC_BYTE;
    case XFER_TYPE_UINT8:
        return NC_UBYTE;
    case XFER_TYPE_INT16:
        return NC_SHORT;
    case XFER_TYPE_UINT16:
        return NC_USHORT;
    case XFER_TYPE_INT32:
        return NC_INT;
    case XFER_TYPE_UINT32:
        return NC_UINT;
    case XFER_TYPE_INT64:
        return NC_INT64;
    case XFER_TYPE_UINT64:
        return NC_UINT64;
    case XFER_TYPE_FLOAT32:
        return NC_FLOAT;
    case XFER_TYPE_FLOAT64:
        return NC_DOUBLE;
    case XFER_TYPE_RECORD: /* a compound type of its own: def_record_type */
        break;
    }
    return NC_NAT;
}

static xfer_type_t xfer_type_of(nc_type t)
{
    int k;
    for (k = XFER_TYPE_INT8; k <= XFER_TYPE_FLOAT64; k++)
        if (nca_type_of((xfer_type_t) k) == t)
            return (xfer_type_t) k;
    return (xfer_type_t) 0;
}

static const char *nca_type_name(nc_type t, char *buf, size_t cap)
{
    static const char *names[] = {"NC_NAT",   "NC_BYTE",   "NC_CHAR",  "NC_SHORT",  "NC_INT",
                                  "NC_FLOAT", "NC_DOUBLE", "NC_UBYTE", "NC_USHORT", "NC_UINT",
                                  "NC_INT64", "NC_UINT64", "NC_STRING"};
    if (t >= 0 && t <= NC_STRING)
        return names[t];
    snprintf(buf, cap, "user-defined type %d", (int) t);
    return buf;
}

/* @p prefix then @p name into @p dst, cut at @p cap (netCDF names fit XFER_ADAPTER_MAX_NAME). */
static void name_copy(char *dst, size_t cap, const char *prefix, const char *name)
{
    if (snprintf(dst, cap, "%s%s", prefix, name) >= (int) cap)
        dst[cap - 1] = '\0';
}

static void to_size(int nd, const uint64_t *in, size_t *out)
{
    int d;
    for (d = 0; d < nd; d++)
        out[d] = (size_t) in[d];
}

/* ---- producer ------------------------------------------------------------------------------ */

typedef struct nca_reader {
    char path[PATH_MAX];
    int ncid;
    int nvars;
    xfer_adapter_var_t *vars;
    int *varids;
    int (*vdims)[XFER_MAX_DIMS]; /* indices into dims */
    int *vrank;                  /* netCDF rank: 0 for a scalar */
    int ndims;
    xfer_adapter_var_t *dims; /* "/dim/<name>" objects */
    xfer_adapter_var_t global;
    xfer_record_t **records; /* of vars[] that are records (NULL for the others) */
    int nskip;
    char (*skip_name)[NC_MAX_NAME + 1];
    char (*skip_why)[320];
    char *notes; /* one line each */
    size_t notes_len;
    int nlines;
    char **lines;     /* nca_skipped: the notes as lines ... */
    char *lines_text; /* ... split in this copy */
} nca_reader_t;

static void note(nca_reader_t *r, const char *fmt, const char *a, const char *b, const char *c)
{
    char line[512];
    char *p;
    const int n = snprintf(line, sizeof(line), fmt, a, b, c);
    if (n < 0)
        return;
    p = realloc(r->notes, r->notes_len + (size_t) n + 2);
    if (!p)
        return;
    r->notes = p;
    memcpy(p + r->notes_len, line, (size_t) n);
    r->notes_len += (size_t) n;
    p[r->notes_len++] = '\n';
    p[r->notes_len] = '\0';
}

/* The attributes of @p varid (NC_GLOBAL for the file's). Text and numeric ones are kept,
 * others (NC_STRING, user types) are noted. */
static xfer_status_t read_attrs(nca_reader_t *r, int varid, const char *owner,
                                xfer_adapter_var_t *v)
{
    int natts, a, rc;
    rc = nc_inq_varnatts(r->ncid, varid, &natts);
    if (rc != NC_NOERR)
        return nca_fail(rc, "nc_inq_varnatts", r->path, owner);
    v->attrs = natts ? calloc((size_t) natts, sizeof(*v->attrs)) : NULL;
    if (natts && !v->attrs)
        return XFER_ERR_NO_MEMORY;
    for (a = 0; a < natts; a++) {
        xfer_adapter_attr_t *at = &v->attrs[v->nattrs];
        char name[NC_MAX_NAME + 1], tb[48];
        nc_type t;
        size_t len, es;
        rc = nc_inq_attname(r->ncid, varid, a, name);
        if (rc == NC_NOERR)
            rc = nc_inq_att(r->ncid, varid, name, &t, &len);
        if (rc != NC_NOERR)
            return nca_fail(rc, "nc_inq_att", r->path, owner);
        if (t != NC_CHAR && !xfer_type_of(t)) {
            note(r, "attribute \"%s\" of %s: type %s is not carried", name, owner,
                 nca_type_name(t, tb, sizeof(tb)));
            continue;
        }
        name_copy(at->name, sizeof(at->name), "", name);
        at->is_text = t == NC_CHAR;
        at->type = at->is_text ? (xfer_type_t) 0 : xfer_type_of(t);
        at->count = len;
        es = at->is_text ? 1 : xfer_type_size(at->type);
        at->data = malloc(len * es + 1);
        if (!at->data)
            return XFER_ERR_NO_MEMORY;
        v->nattrs++;
        rc = nc_get_att(r->ncid, varid, name, at->data);
        if (rc != NC_NOERR)
            return nca_fail(rc, "nc_get_att", r->path, owner);
    }
    return XFER_SUCCESS;
}

static void reader_free(nca_reader_t *r)
{
    int i;
    if (!r)
        return;
    for (i = 0; i < r->nvars; i++)
        xfer_adapter_var_clear(&r->vars[i]);
    for (i = 0; r->records && i <= r->nvars; i++) /* the last: one being listed */
        xfer_adapter_record_free(&r->records[i]);
    free(r->records);
    xfer_adapter_var_clear(&r->global);
    for (i = 0; i < r->ndims; i++)
        xfer_adapter_var_clear(&r->dims[i]);
    free(r->vars);
    free(r->varids);
    free(r->vdims);
    free(r->vrank);
    free(r->dims);
    free(r->skip_name);
    free(r->skip_why);
    free(r->notes);
    free(r->lines);
    free(r->lines_text);
    free(r);
}

static xfer_status_t list_dims(nca_reader_t *r, int *dimids)
{
    int unlim[NC_MAX_DIMS], nunlim = 0, i, k, rc;
    rc = nc_inq_dimids(r->ncid, &r->ndims, dimids, 0);
    if (rc == NC_NOERR)
        rc = nc_inq_unlimdims(r->ncid, &nunlim, unlim);
    if (rc != NC_NOERR)
        return nca_fail(rc, "nc_inq_dimids", r->path, NULL);
    r->dims = calloc((size_t) r->ndims + 1, sizeof(*r->dims));
    if (!r->dims)
        return XFER_ERR_NO_MEMORY;
    for (i = 0; i < r->ndims; i++) {
        xfer_adapter_var_t *d = &r->dims[i];
        char name[NC_MAX_NAME + 1];
        size_t len;
        uint8_t u = 0;
        rc = nc_inq_dim(r->ncid, dimids[i], name, &len);
        if (rc != NC_NOERR)
            return nca_fail(rc, "nc_inq_dim", r->path, NULL);
        for (k = 0; k < nunlim; k++)
            u |= unlim[k] == dimids[i];
        name_copy(d->name, sizeof(d->name), "/dim/", name);
        d->ndims = 1;
        d->dims[0] = len;
        d->attrs = calloc(1, sizeof(*d->attrs));
        if (!d->attrs)
            return XFER_ERR_NO_MEMORY;
        d->nattrs = 1;
        snprintf(d->attrs[0].name, sizeof(d->attrs[0].name), "unlimited");
        d->attrs[0].type = XFER_TYPE_UINT8;
        d->attrs[0].count = 1;
        d->attrs[0].data = malloc(1);
        if (!d->attrs[0].data)
            return XFER_ERR_NO_MEMORY;
        *(uint8_t *) d->attrs[0].data = u;
    }
    return XFER_SUCCESS;
}

static void skip_var(nca_reader_t *r, const char *name, const char *why)
{
    snprintf(r->skip_name[r->nskip], sizeof(r->skip_name[0]), "%s", name);
    snprintf(r->skip_why[r->nskip], sizeof(r->skip_why[0]), "%s", why);
    r->nskip++;
    note(r, "variable \"%s\" skipped: %s%s", name, why, "");
}

/* The record of user-defined type @p t: 0 (*out the caller's), 1 not a record of scalar and
 * one-dimensional array fields (@p why), or a status < 0 (netCDF's error). The offsets and size
 * are what netCDF reports for the file, the native layout nc_get_vara fills (a C struct of the
 * fields in order, whatever the writer's padding). */
static int record_of(nca_reader_t *r, nc_type t, const char *var, xfer_record_t **out, char *why,
                     size_t cap)
{
    char tname[NC_MAX_NAME + 1], tb[48];
    size_t size, nfields, k;
    nc_type base;
    int cls, rc;
    xfer_record_t *rec;
    *out = NULL;
    rc = nc_inq_user_type(r->ncid, t, tname, &size, &base, &nfields, &cls);
    if (rc != NC_NOERR)
        return (int) nca_fail(rc, "nc_inq_user_type", r->path, var);
    if (cls != NC_COMPOUND) {
        snprintf(why, cap, "type %.64s (%s) is not supported (numeric types and compounds only)",
                 tname,
                 cls == NC_VLEN   ? "variable-length"
                 : cls == NC_ENUM ? "enum"
                                  : "opaque");
        return 1;
    }
    if (nfields < 1 || nfields > XFER_RECORD_MAX_FIELDS) {
        snprintf(why, cap, "compound %.64s has %zu fields (a record 1 to %d)", tname, nfields,
                 XFER_RECORD_MAX_FIELDS);
        return 1;
    }
    if (!(rec = xfer_adapter_record_new((int) nfields))) {
        xfer_adapter_set_error("netcdf: out of memory");
        return (int) XFER_ERR_NO_MEMORY;
    }
    rec->size = size;
    rec->align = 1;
    for (k = 0; k < nfields; k++) {
        xfer_record_field_t *f = &rec->fields[k];
        char fname[NC_MAX_NAME + 1];
        int nd, fdims[NC_MAX_VAR_DIMS];
        nc_type ft;
        rc = nc_inq_compound_field(r->ncid, t, (int) k, fname, &f->offset, &ft, &nd, fdims);
        if (rc != NC_NOERR) {
            xfer_adapter_record_free(&rec);
            return (int) nca_fail(rc, "nc_inq_compound_field", r->path, var);
        }
        if (!(f->name = strdup(fname))) {
            xfer_adapter_record_free(&rec);
            xfer_adapter_set_error("netcdf: out of memory");
            return (int) XFER_ERR_NO_MEMORY;
        }
        f->type = xfer_type_of(ft);
        f->count = nd == 1 && fdims[0] > 0 ? (uint32_t) fdims[0] : 1;
        if (!f->type || nd > 1 || (nd == 1 && fdims[0] < 1)) {
            snprintf(why, cap,
                     "compound %.40s: field %.40s of type %s%s is not supported (scalar "
                     "numbers and 1-D arrays of them)",
                     tname, fname, nca_type_name(ft, tb, sizeof(tb)),
                     nd > 1 ? ", a multi-dimensional array" : "");
            xfer_adapter_record_free(&rec);
            return 1;
        }
        if (xfer_type_size(f->type) > rec->align)
            rec->align = xfer_type_size(f->type);
    }
    {
        char fault[200];
        if (xfer_adapter_record_check(rec, fault, sizeof(fault)) != 0) {
            snprintf(why, cap, "compound %.40s: %.110s", tname, fault);
            xfer_adapter_record_free(&rec);
            return 1;
        }
    }
    *out = rec;
    return 0;
}

static xfer_status_t list_vars(nca_reader_t *r, const int *dimids)
{
    int nvars, i, k, rc, ngrps;
    int *ids;
    xfer_status_t st = XFER_SUCCESS;
    rc = nc_inq_varids(r->ncid, &nvars, NULL);
    if (rc != NC_NOERR)
        return nca_fail(rc, "nc_inq_varids", r->path, NULL);
    ids = malloc(((size_t) nvars + 1) * sizeof(*ids));
    r->vars = calloc((size_t) nvars + 1, sizeof(*r->vars));
    r->varids = calloc((size_t) nvars + 1, sizeof(*r->varids));
    r->vdims = calloc((size_t) nvars + 1, sizeof(*r->vdims));
    r->vrank = calloc((size_t) nvars + 1, sizeof(*r->vrank));
    r->skip_name = calloc((size_t) nvars + 1, sizeof(*r->skip_name));
    r->skip_why = calloc((size_t) nvars + 1, sizeof(*r->skip_why));
    r->records = calloc((size_t) nvars + 1, sizeof(*r->records));
    if (!ids || !r->vars || !r->varids || !r->vdims || !r->vrank || !r->skip_name || !r->skip_why ||
        !r->records) {
        free(ids);
        return XFER_ERR_NO_MEMORY;
    }
    rc = nc_inq_varids(r->ncid, &nvars, ids);
    if (rc != NC_NOERR) {
        free(ids);
        return nca_fail(rc, "nc_inq_varids", r->path, NULL);
    }
    for (i = 0; i < nvars && st == XFER_SUCCESS; i++) {
        xfer_adapter_var_t *v = &r->vars[r->nvars];
        char name[NC_MAX_NAME + 1], why[320], tb[48];
        int vd[NC_MAX_VAR_DIMS], nd, empty = 0;
        nc_type t;
        rc = nc_inq_var(r->ncid, ids[i], name, &t, &nd, NULL, NULL);
        if (rc == NC_NOERR && nd <= NC_MAX_VAR_DIMS)
            rc = nc_inq_vardimid(r->ncid, ids[i], vd);
        if (rc != NC_NOERR) {
            st = nca_fail(rc, "nc_inq_var", r->path, NULL);
            break;
        }
        xfer_adapter_record_free(&r->records[r->nvars]); /* a skipped variable's */
        if (t > NC_MAX_ATOMIC_TYPE) {                    /* user-defined: a compound is a record */
            rc = record_of(r, t, name, &r->records[r->nvars], why, sizeof(why));
            if (rc < 0) {
                st = (xfer_status_t) rc;
                break;
            }
            if (rc > 0) {
                skip_var(r, name, why);
                continue;
            }
        } else if (!xfer_type_of(t)) {
            snprintf(why, sizeof(why),
                     "type %s is not supported (numeric types and compounds only: NC_BYTE .. "
                     "NC_DOUBLE)",
                     nca_type_name(t, tb, sizeof(tb)));
            skip_var(r, name, why);
            continue;
        }
        if (nd > XFER_MAX_DIMS) {
            snprintf(why, sizeof(why), "%d dimensions (at most %d)", nd, XFER_MAX_DIMS);
            skip_var(r, name, why);
            continue;
        }
        name_copy(v->name, sizeof(v->name), "", name);
        v->type = r->records[r->nvars] ? XFER_TYPE_RECORD : xfer_type_of(t);
        v->record = r->records[r->nvars];
        v->ndims = nd ? nd : 1;
        v->dims[0] = 1;
        for (k = 0; k < nd; k++) {
            int j;
            for (j = 0; j < r->ndims && dimids[j] != vd[k]; j++)
                ;
            if (j == r->ndims) { /* a dimension of a parent group: not ours */
                empty = -1;
                break;
            }
            r->vdims[r->nvars][k] = j;
            v->dims[k] = r->dims[j].dims[0];
            if (v->dims[k] == 0)
                empty = 1;
        }
        if (empty) {
            skip_var(r, name,
                     empty > 0 ? "a dimension has length 0 (an empty unlimited dimension?)"
                               : "uses a dimension of another group");
            continue;
        }
        r->varids[r->nvars] = ids[i];
        r->vrank[r->nvars] = nd;
        r->nvars++;
        st = read_attrs(r, ids[i], v->name, v);
    }
    free(ids);
    if (st == XFER_SUCCESS && nc_inq_grps(r->ncid, &ngrps, NULL) == NC_NOERR && ngrps > 0) {
        char n[16];
        snprintf(n, sizeof(n), "%d", ngrps);
        note(r, "%s sub-group(s) of %s skipped: only the root group is read%s", n, r->path, "");
    }
    return st;
}

static xfer_status_t nca_open_read(const char *path, MPI_Comm comm, void **h)
{
    nca_reader_t *r = calloc(1, sizeof(*r));
    xfer_status_t st = XFER_SUCCESS;
    int *dimids = NULL, nd, rc;
    *h = NULL;
    if (!r) {
        xfer_adapter_set_error("netcdf: out of memory opening \"%s\"", path);
        st = XFER_ERR_NO_MEMORY;
        goto out;
    }
    r->ncid = -1;
    snprintf(r->path, sizeof(r->path), "%s", path);
    snprintf(r->global.name, sizeof(r->global.name), "/");
    rc = nc_open(path, NC_NOWRITE, &r->ncid);
    if (rc != NC_NOERR) {
        r->ncid = -1;
        st = nca_fail(rc, "nc_open", path, NULL);
        goto out;
    }
    rc = nc_inq_ndims(r->ncid, &nd);
    if (rc != NC_NOERR) {
        st = nca_fail(rc, "nc_inq_ndims", path, NULL);
        goto out;
    }
    dimids = malloc(((size_t) nd + 1) * sizeof(*dimids));
    if (!dimids) {
        st = XFER_ERR_NO_MEMORY;
        goto out;
    }
    st = list_dims(r, dimids);
    if (st == XFER_SUCCESS)
        st = list_vars(r, dimids);
    if (st == XFER_SUCCESS)
        st = read_attrs(r, NC_GLOBAL, "the file", &r->global);
    if (st == XFER_ERR_NO_MEMORY)
        xfer_adapter_set_error("netcdf: out of memory reading the metadata of \"%s\"", path);
out:
    free(dimids);
    st = xfer_adapter_agree(comm, st);
    if (st != XFER_SUCCESS) {
        if (r && r->ncid >= 0)
            nc_close(r->ncid);
        reader_free(r);
        return st;
    }
    *h = r;
    return XFER_SUCCESS;
}

static xfer_status_t nca_vars(void *h, int *n, const xfer_adapter_var_t **vars)
{
    nca_reader_t *r = h;
    *n = r->nvars;
    *vars = r->vars;
    return XFER_SUCCESS;
}

/* Independent reads (the serial library has no collective I/O); local: no communication.
 * Records in another layout than the file's (@p as) are read into the file's and then moved
 * field by field, by name: netCDF converts no compound. */
static xfer_status_t nca_read_record(void *h, int var, const xfer_record_t *as,
                                     const uint64_t start[], const uint64_t count[], void *buf)
{
    nca_reader_t *r = h;
    size_t s[XFER_MAX_DIMS], c[XFER_MAX_DIMS], n;
    const xfer_adapter_var_t *v;
    xfer_status_t st = XFER_SUCCESS;
    char why[256];
    void *tmp = NULL;
    int rc;
    if (var < 0 || var >= r->nvars) {
        xfer_adapter_set_error("netcdf: \"%s\": no variable number %d", r->path, var);
        return XFER_ERR_INVALID_ARG;
    }
    v = &r->vars[var];
    if (as && v->type != XFER_TYPE_RECORD) {
        xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\" read as a record, but it holds %s",
                               r->path, v->name, xfer_type_name(v->type));
        return XFER_ERR_MISMATCH;
    }
    if (as && (xfer_adapter_record_check(as, why, sizeof(why)) != 0 ||
               xfer_adapter_record_fits(v->record, as, why, sizeof(why)) != 0)) {
        xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\": cannot read its records as the "
                               "caller's: %s",
                               r->path, v->name, why);
        return XFER_ERR_MISMATCH;
    }
    if (as && xfer_adapter_record_diff(v->record, as, why, sizeof(why)) == 0)
        as = NULL; /* the file's own layout: read in place */
    n = xfer_adapter_volume(v->ndims, count);
    if (n == 0)
        return XFER_SUCCESS;
    if (as && !(tmp = malloc(n * v->record->size))) {
        xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\": no memory for %zu records",
                               r->path, v->name, n);
        return XFER_ERR_NO_MEMORY;
    }
    to_size(v->ndims, start, s);
    to_size(v->ndims, count, c);
    rc = r->vrank[var] == 0 ? nc_get_var(r->ncid, r->varids[var], tmp ? tmp : buf)
                            : nc_get_vara(r->ncid, r->varids[var], s, c, tmp ? tmp : buf);
    if (rc != NC_NOERR)
        st = nca_fail(rc, "nc_get_vara", r->path, v->name);
    else if (tmp)
        xfer_adapter_record_convert(v->record, as, n, tmp, buf);
    free(tmp);
    return st;
}

static xfer_status_t nca_read(void *h, int var, const uint64_t start[], const uint64_t count[],
                              void *buf)
{
    return nca_read_record(h, var, NULL, start, count, buf);
}

static xfer_status_t nca_close_read(void **h)
{
    nca_reader_t *r = h ? *h : NULL;
    xfer_status_t st = XFER_SUCCESS;
    int rc;
    if (!r)
        return XFER_SUCCESS;
    rc = nc_close(r->ncid);
    if (rc != NC_NOERR)
        st = nca_fail(rc, "nc_close", r->path, NULL);
    reader_free(r);
    *h = NULL;
    return st;
}

xfer_status_t xfer_netcdf_table(void *h, uint8_t **buf, size_t *len)
{
    nca_reader_t *r = h;
    const int n = 1 + r->ndims + 2 * r->nvars;
    xfer_adapter_var_t *objs = calloc((size_t) n, sizeof(*objs));
    xfer_status_t st;
    int i, k, o = 0;
    if (!objs) {
        xfer_adapter_set_error("netcdf: out of memory");
        return XFER_ERR_NO_MEMORY;
    }
    objs[o++] = r->global;
    for (i = 0; i < r->ndims; i++)
        objs[o++] = r->dims[i];
    for (i = 0; i < r->nvars; i++) {
        xfer_adapter_var_t *d = &objs[o++];
        name_copy(d->name, sizeof(d->name), "/dimids/", r->vars[i].name);
        d->ndims = r->vrank[i];
        for (k = 0; k < d->ndims; k++)
            d->dims[k] = (uint64_t) r->vdims[i][k];
        objs[o++] = r->vars[i];
    }
    st = xfer_adapter_table_pack(n, objs, buf, len);
    free(objs); /* shallow: the attributes belong to the reader */
    return st;
}

const char *xfer_netcdf_unsupported(void *h, const char *name)
{
    nca_reader_t *r = h;
    int i;
    for (i = 0; i < r->nskip; i++)
        if (strcmp(r->skip_name[i], name) == 0)
            return r->skip_why[i];
    return NULL;
}

const char *xfer_netcdf_notes(void *h)
{
    nca_reader_t *r = h;
    return r->notes ? r->notes : "";
}

/* Only the root group is read: its attributes are the file's global ones. */
static xfer_status_t nca_groups(void *h, int *n, const xfer_adapter_var_t **groups)
{
    nca_reader_t *r = h;
    *n = 1;
    *groups = &r->global;
    return XFER_SUCCESS;
}

static xfer_status_t nca_lookup(void *h, const char *name)
{
    nca_reader_t *r = h;
    const char *why = xfer_netcdf_unsupported(h, name);
    if (why) {
        xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\": %s", r->path, name, why);
        return XFER_ERR_NOT_SUPPORTED;
    }
    xfer_adapter_set_error("netcdf: \"%s\": no variable \"%s\"", r->path, name);
    return XFER_ERR_NOT_FOUND;
}

static xfer_status_t nca_skipped(void *h, int *n, const char *const **lines)
{
    nca_reader_t *r = h;
    char *p;
    int k = 0;
    if (!r->lines && r->notes) {
        for (p = r->notes; *p; p++)
            k += *p == '\n';
        r->lines = calloc((size_t) k + 1, sizeof(*r->lines));
        r->lines_text = strdup(r->notes);
        if (!r->lines || !r->lines_text) {
            xfer_adapter_set_error("netcdf: out of memory");
            return XFER_ERR_NO_MEMORY;
        }
        for (p = r->lines_text, k = 0; *p; k++) {
            char *nl = strchr(p, '\n');
            r->lines[k] = p;
            *nl = '\0';
            p = nl + 1;
        }
        r->nlines = k;
    }
    *n = r->nlines;
    *lines = (const char *const *) r->lines;
    return XFER_SUCCESS;
}

/* ---- consumer ------------------------------------------------------------------------------ */

typedef struct nca_def {
    char name[XFER_ADAPTER_MAX_NAME];
    xfer_type_t type;
    nc_type nctype;
    int gid, varid, ndims;
    uint64_t dims[XFER_MAX_DIMS];
} nca_def_t;

typedef struct nca_writer {
    MPI_Comm comm;
    int rank, size;
    char path[PATH_MAX], tmp[PATH_MAX + 16];
    int ncid; /* rank 0 only; -1 when closed */
    xfer_adapter_wopts_t o;
    int same;
    int ntbl;
    xfer_adapter_var_t *tbl; /* the producer's table (same layout) */
    int *tbl_dimid;          /* netCDF id of each "/dim/" object, in table order */
    int step_dim;            /* STEP_DIM: the "step" dimension, -1 before the first write */
    int group, group_valid;  /* GROUP_PER_STEP: the current step's group */
    uint64_t group_step;
    uint64_t steps_done; /* steps end_step made durable */
    int ndefs, capdefs;
    nca_def_t *defs;
    int nrtypes;
    struct nca_rtype { /* the compound types defined, one per record layout */
        nc_type id;
        xfer_record_t *record; /* a copy */
    } * rtypes;
} nca_writer_t;

static void writer_free(nca_writer_t *w)
{
    if (!w)
        return;
    xfer_adapter_table_free(w->ntbl, &w->tbl);
    free(w->tbl_dimid);
    free(w->defs);
    while (w->nrtypes > 0)
        xfer_adapter_record_free(&w->rtypes[--w->nrtypes].record);
    free(w->rtypes);
    if (w->comm != MPI_COMM_NULL)
        MPI_Comm_free(&w->comm);
    free(w);
}

/* After a failed create: the netCDF text (HDF5's) can be vague, so say what is wrong with the
 * output's directory when something is. */
static void dir_reason(const char *file)
{
    char dir[PATH_MAX + 16], prev[ERR_TEXT];
    char *slash;
    snprintf(dir, sizeof(dir), "%s", file);
    slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (access(dir, W_OK | X_OK) == 0)
        return;
    snprintf(prev, sizeof(prev), "%s", xfer_adapter_error());
    xfer_adapter_set_error("%s (output directory \"%s\": %s)", prev, dir, strerror(errno));
}

static xfer_status_t nca_create_w(const char *path, MPI_Comm comm, const xfer_adapter_wopts_t *o,
                                  void **h)
{
    nca_writer_t *w = calloc(1, sizeof(*w));
    xfer_status_t st = XFER_SUCCESS;
    int rc;
    *h = NULL;
    if (!w) {
        xfer_adapter_set_error("netcdf: out of memory creating \"%s\"", path);
        st = XFER_ERR_NO_MEMORY;
    } else {
        w->comm = MPI_COMM_NULL;
        w->ncid = -1;
        w->step_dim = -1;
        if (o)
            w->o = *o;
        else
            w->o.layout = XFER_ADAPTER_STEP_DIM;
        snprintf(w->path, sizeof(w->path), "%s", path);
        snprintf(w->tmp, sizeof(w->tmp), "%s.tmp", path);
        if (MPI_Comm_dup(comm, &w->comm) != MPI_SUCCESS) {
            xfer_adapter_set_error("netcdf: MPI_Comm_dup failed creating \"%s\"", path);
            st = XFER_ERR_MPI;
        } else {
            MPI_Comm_rank(w->comm, &w->rank);
            MPI_Comm_size(w->comm, &w->size);
        }
    }
    if (st == XFER_SUCCESS && w->rank == 0) {
        rc = nc_create(w->tmp, NC_NETCDF4 | NC_CLOBBER, &w->ncid);
        if (rc != NC_NOERR) {
            w->ncid = -1;
            st = nca_fail(rc, "nc_create", w->tmp, NULL);
            dir_reason(w->tmp);
        }
    }
    st = xfer_adapter_agree(comm, st);
    if (st != XFER_SUCCESS) {
        if (w && w->ncid >= 0) {
            nc_close(w->ncid);
            unlink(w->tmp);
        }
        writer_free(w);
        return st;
    }
    *h = w;
    return XFER_SUCCESS;
}

static xfer_status_t put_attrs(nca_writer_t *w, int gid, int varid, const char *owner, int n,
                               const xfer_adapter_attr_t *a)
{
    int i, rc;
    for (i = 0; i < n; i++) {
        if (a[i].is_text)
            rc = nc_put_att_text(gid, varid, a[i].name, a[i].count, a[i].data);
        else
            rc = nc_put_att(gid, varid, a[i].name, nca_type_of(a[i].type), a[i].count, a[i].data);
        if (rc != NC_NOERR) {
            xfer_adapter_set_error("netcdf: nc_put_att(\"%s\", %s, attribute \"%s\"): %s", w->tmp,
                                   owner, a[i].name, nc_strerror(rc));
            return XFER_ERR_INTERNAL;
        }
    }
    return XFER_SUCCESS;
}

/* Rank 0: the table's dimensions and global attributes. */
static xfer_status_t define_from_table(nca_writer_t *w)
{
    int i, nd = 0, rc;
    xfer_status_t st;
    for (i = 0; i < w->ntbl; i++)
        nd += strncmp(w->tbl[i].name, "/dim/", 5) == 0;
    w->tbl_dimid = calloc((size_t) nd + 1, sizeof(int));
    if (!w->tbl_dimid) {
        xfer_adapter_set_error("netcdf: out of memory");
        return XFER_ERR_NO_MEMORY;
    }
    if (w->ntbl == 0 || strcmp(w->tbl[0].name, "/") != 0) {
        xfer_adapter_set_error("netcdf: the attribute table does not start with \"/\"");
        return XFER_ERR_PROTOCOL;
    }
    st = put_attrs(w, w->ncid, NC_GLOBAL, "global", w->tbl[0].nattrs, w->tbl[0].attrs);
    if (st != XFER_SUCCESS || !w->same)
        return st;
    for (i = 0, nd = 0; i < w->ntbl; i++) {
        const xfer_adapter_var_t *d = &w->tbl[i];
        int unlim;
        if (strncmp(d->name, "/dim/", 5) != 0)
            continue;
        unlim = d->nattrs > 0 && d->attrs[0].count == 1 && *(uint8_t *) d->attrs[0].data;
        rc = nc_def_dim(w->ncid, d->name + 5, unlim ? NC_UNLIMITED : (size_t) d->dims[0],
                        &w->tbl_dimid[nd++]);
        if (rc != NC_NOERR)
            return nca_fail(rc, "nc_def_dim", w->tmp, d->name + 5);
    }
    return XFER_SUCCESS;
}

xfer_status_t xfer_netcdf_define(void *h, const uint8_t *table, size_t len, int same)
{
    nca_writer_t *w = h;
    xfer_status_t st = XFER_SUCCESS;
    if (w->ntbl || w->ndefs) {
        xfer_adapter_set_error("netcdf: \"%s\": xfer_netcdf_define after data or twice", w->path);
        st = XFER_ERR_STATE;
    }
    w->same = same;
    if (st == XFER_SUCCESS && w->rank == 0) {
        st = xfer_adapter_table_unpack(table, len, &w->ntbl, &w->tbl);
        if (st == XFER_SUCCESS)
            st = define_from_table(w);
    }
    return xfer_adapter_agree(w->comm, st);
}

static const xfer_adapter_var_t *table_obj(const nca_writer_t *w, const char *prefix,
                                           const char *name)
{
    const size_t pl = strlen(prefix);
    int i;
    for (i = 0; i < w->ntbl; i++)
        if (strncmp(w->tbl[i].name, prefix, pl) == 0 && strcmp(w->tbl[i].name + pl, name) == 0)
            return &w->tbl[i];
    return NULL;
}

/* Rank 0: the dimensions of a new variable. */
static xfer_status_t def_dims(nca_writer_t *w, int gid, const xfer_adapter_var_t *v, int *nd,
                              int *dimids)
{
    int k, rc;
    *nd = 0;
    if (w->same) {
        const xfer_adapter_var_t *ids = table_obj(w, "/dimids/", v->name);
        if (!ids) {
            xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\" is not in the producer's "
                                   "table (layout same)",
                                   w->tmp, v->name);
            return XFER_ERR_NOT_FOUND;
        }
        for (k = 0; k < ids->ndims; k++)
            dimids[(*nd)++] = w->tbl_dimid[ids->dims[k]];
        return XFER_SUCCESS;
    }
    if (w->o.layout == XFER_ADAPTER_STEP_DIM) {
        if (w->step_dim < 0) {
            rc = nc_def_dim(w->ncid, "step", NC_UNLIMITED, &w->step_dim);
            if (rc != NC_NOERR)
                return nca_fail(rc, "nc_def_dim", w->tmp, "step");
        }
        dimids[(*nd)++] = w->step_dim;
    }
    for (k = 0; k < v->ndims; k++) {
        char dn[NC_MAX_NAME + 1];
        if (snprintf(dn, sizeof(dn), "%s_d%d", v->name, k) >= (int) sizeof(dn)) {
            xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\": name too long for its "
                                   "dimension names (<var>_d%d)",
                                   w->tmp, v->name, k);
            return XFER_ERR_INVALID_ARG;
        }
        rc = nc_def_dim(gid, dn, (size_t) v->dims[k], &dimids[*nd]);
        if (rc != NC_NOERR)
            return nca_fail(rc, "nc_def_dim", w->tmp, dn);
        (*nd)++;
    }
    return XFER_SUCCESS;
}

/* The record of compound type @p id defined by this writer (NULL: none). */
static const xfer_record_t *record_of_type(const nca_writer_t *w, nc_type id)
{
    int i;
    for (i = 0; i < w->nrtypes; i++)
        if (w->rtypes[i].id == id)
            return w->rtypes[i].record;
    return NULL;
}

/* Rank 0: the compound type of record variable @p v in the root group (visible to the step
 * groups): its fields at their offsets, of the record's size, so that the file holds the C
 * struct's layout. One type per layout, named after the first variable of it ("<var>_t"):
 * netCDF tells types apart by their HDF5 layout when it reads a file, so two types of one
 * layout would read back as the first of them anyway. */
static xfer_status_t def_record_type(nca_writer_t *w, const xfer_adapter_var_t *v, nc_type *id)
{
    char tname[NC_MAX_NAME + 1], why[256];
    struct nca_rtype *nt;
    int i, k, rc;
    if (xfer_adapter_record_check(v->record, why, sizeof(why)) != 0) {
        xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\": invalid record: %s", w->tmp,
                               v->name, why);
        return XFER_ERR_INVALID_ARG;
    }
    for (i = 0; i < w->nrtypes; i++)
        if (xfer_adapter_record_diff(v->record, w->rtypes[i].record, why, sizeof(why)) == 0) {
            *id = w->rtypes[i].id;
            return XFER_SUCCESS;
        }
    for (k = 1;; k++) { /* a name no type of the file has */
        nc_type there;
        const int n = k == 1 ? snprintf(tname, sizeof(tname), "%s_t", v->name)
                             : snprintf(tname, sizeof(tname), "%s_t%d", v->name, k);
        if (n >= (int) sizeof(tname)) {
            xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\": name too long for its "
                                   "type's name (<var>_t)",
                                   w->tmp, v->name);
            return XFER_ERR_INVALID_ARG;
        }
        if (nc_inq_typeid(w->ncid, tname, &there) != NC_NOERR)
            break;
    }
    nt = realloc(w->rtypes, (size_t) (w->nrtypes + 1) * sizeof(*nt));
    if (!nt) {
        xfer_adapter_set_error("netcdf: out of memory");
        return XFER_ERR_NO_MEMORY;
    }
    w->rtypes = nt;
    nt = &w->rtypes[w->nrtypes];
    memset(nt, 0, sizeof(*nt));
    rc = nc_def_compound(w->ncid, v->record->size, tname, &nt->id);
    if (rc != NC_NOERR)
        return nca_fail(rc, "nc_def_compound", w->tmp, tname);
    for (i = 0; i < v->record->nfields; i++) {
        const xfer_record_field_t *f = &v->record->fields[i];
        const int count = (int) f->count;
        rc = f->count == 1
                 ? nc_insert_compound(w->ncid, nt->id, f->name, f->offset, nca_type_of(f->type))
                 : nc_insert_array_compound(w->ncid, nt->id, f->name, f->offset,
                                            nca_type_of(f->type), 1, &count);
        if (rc != NC_NOERR)
            return nca_fail(rc, "nc_insert_compound", w->tmp, f->name);
    }
    if (!(nt->record = xfer_adapter_record_copy(v->record))) {
        xfer_adapter_set_error("netcdf: out of memory");
        return XFER_ERR_NO_MEMORY;
    }
    w->nrtypes++;
    *id = nt->id;
    return XFER_SUCCESS;
}

/* Rank 0: the group and variable that step @p step of @p v goes to, defined on first use. */
static xfer_status_t define_var(nca_writer_t *w, uint64_t step, const xfer_adapter_var_t *v,
                                nca_def_t **out)
{
    int gid = w->ncid, i, k, nd, rc = NC_NOERR, dimids[XFER_MAX_DIMS + 1];
    size_t chunk[XFER_MAX_DIMS + 1];
    nc_type type = NC_NAT;
    char why[256];
    nca_def_t *d;
    xfer_status_t st;
    if ((w->same || w->o.layout == XFER_ADAPTER_SAME_PATHS) && step > 0) {
        xfer_adapter_set_error("netcdf: \"%s\": layout same holds one step, step %" PRIu64
                               " arrived (use the stepdim or group layout)",
                               w->path, step);
        return XFER_ERR_STATE;
    }
    if (!w->same && w->o.layout == XFER_ADAPTER_GROUP_PER_STEP) {
        if (!w->group_valid || w->group_step != step) {
            char gname[32];
            snprintf(gname, sizeof(gname), STEP_FORMAT, step);
            rc = nc_def_grp(w->ncid, gname, &w->group);
            if (rc != NC_NOERR)
                return nca_fail(rc, "nc_def_grp", w->tmp, gname);
            w->group_valid = 1;
            w->group_step = step;
        }
        gid = w->group;
    }
    for (i = 0; i < w->ndefs; i++) {
        d = &w->defs[i];
        if (d->gid == gid && strcmp(d->name, v->name) == 0) {
            if (d->ndims != v->ndims || memcmp(d->dims, v->dims, sizeof(d->dims)) != 0) {
                xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\" changed its shape at "
                                       "step %" PRIu64,
                                       w->tmp, v->name, step);
                return XFER_ERR_MISMATCH;
            }
            if (d->type != v->type) {
                xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\" changed its type at "
                                       "step %" PRIu64,
                                       w->tmp, v->name, step);
                return XFER_ERR_MISMATCH;
            }
            if (v->type == XFER_TYPE_RECORD &&
                xfer_adapter_record_diff(v->record, record_of_type(w, d->nctype), why,
                                         sizeof(why)) != 0) {
                xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\" changed its record at "
                                       "step %" PRIu64 " (this write's, the file's): %s",
                                       w->tmp, v->name, step, why);
                return XFER_ERR_MISMATCH;
            }
            *out = d;
            return XFER_SUCCESS;
        }
    }
    if ((!nca_type_of(v->type) && v->type != XFER_TYPE_RECORD) || v->ndims < 1 ||
        v->ndims > XFER_MAX_DIMS) {
        xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\": invalid type or rank", w->tmp,
                               v->name);
        return XFER_ERR_INVALID_ARG;
    }
    if (v->type == XFER_TYPE_RECORD && (st = def_record_type(w, v, &type)) != XFER_SUCCESS)
        return st;
    if (v->type != XFER_TYPE_RECORD)
        type = nca_type_of(v->type);
    if (w->ndefs == w->capdefs) {
        const int cap = w->capdefs ? 2 * w->capdefs : 16;
        nca_def_t *nd2 = realloc(w->defs, (size_t) cap * sizeof(*nd2));
        if (!nd2) {
            xfer_adapter_set_error("netcdf: out of memory");
            return XFER_ERR_NO_MEMORY;
        }
        w->defs = nd2;
        w->capdefs = cap;
    }
    st = def_dims(w, gid, v, &nd, dimids);
    if (st != XFER_SUCCESS)
        return st;
    d = &w->defs[w->ndefs];
    memset(d, 0, sizeof(*d));
    name_copy(d->name, sizeof(d->name), "", v->name);
    d->gid = gid;
    d->type = v->type;
    d->nctype = type;
    d->ndims = v->ndims;
    memcpy(d->dims, v->dims, sizeof(d->dims));
    rc = nc_def_var(gid, v->name, type, nd, dimids, &d->varid);
    if (rc != NC_NOERR)
        return nca_fail(rc, "nc_def_var", w->tmp, v->name);
    if (!w->same && (w->o.layout == XFER_ADAPTER_STEP_DIM || w->o.chunked)) {
        /* one chunk per step by default (or the chunk shape asked for) */
        const int off = w->o.layout == XFER_ADAPTER_STEP_DIM;
        chunk[0] = 1;
        for (k = 0; k < v->ndims; k++)
            chunk[off + k] = (size_t) (w->o.chunk[k] ? w->o.chunk[k] : v->dims[k]);
        rc = nc_def_var_chunking(gid, d->varid, NC_CHUNKED, chunk);
    } else if (!w->same) {
        rc = nc_def_var_chunking(gid, d->varid, NC_CONTIGUOUS, NULL);
    }
    if (rc != NC_NOERR)
        return nca_fail(rc, "nc_def_var_chunking", w->tmp, v->name);
    st = put_attrs(w, gid, d->varid, v->name, v->nattrs, v->attrs);
    if (st != XFER_SUCCESS)
        return st;
    w->ndefs++;
    *out = d;
    return XFER_SUCCESS;
}

/* Rank 0: one slab into the file. */
static xfer_status_t put_slab(nca_writer_t *w, const nca_def_t *d, uint64_t step,
                              const xfer_adapter_var_t *v, const uint64_t *start,
                              const uint64_t *count, const void *buf)
{
    size_t s[XFER_MAX_DIMS + 1], c[XFER_MAX_DIMS + 1];
    const int off = !w->same && w->o.layout == XFER_ADAPTER_STEP_DIM;
    const xfer_adapter_var_t *ids = w->same ? table_obj(w, "/dimids/", v->name) : NULL;
    int rc;
    s[0] = (size_t) step;
    c[0] = 1;
    to_size(v->ndims, start, s + off);
    to_size(v->ndims, count, c + off);
    if (ids && ids->ndims == 0)
        rc = nc_put_var(d->gid, d->varid, buf);
    else
        rc = nc_put_vara(d->gid, d->varid, s, c, buf);
    if (rc != NC_NOERR)
        return nca_fail(rc, "nc_put_vara", w->tmp, v->name);
    return XFER_SUCCESS;
}

static int slab_xfer(void *buf, size_t n, int peer, MPI_Comm comm, int send)
{
    char *p = buf;
    while (n > 0) {
        const int part = n > (size_t) MSG_CHUNK ? MSG_CHUNK : (int) n;
        const int rc = send ? MPI_Send(p, part, MPI_BYTE, peer, TAG_SLAB, comm)
                            : MPI_Recv(p, part, MPI_BYTE, peer, TAG_SLAB, comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
        p += part;
        n -= (size_t) part;
    }
    return MPI_SUCCESS;
}

static xfer_status_t nca_write(void *h, uint64_t step, const xfer_adapter_var_t *v,
                               const uint64_t start[], const uint64_t count[], const void *buf)
{
    nca_writer_t *w = h;
    const size_t es = xfer_adapter_var_esize(v);
    uint64_t box[2 * XFER_MAX_DIMS] = {0}, *boxes = NULL;
    nca_def_t *d = NULL;
    char *slab = NULL;
    size_t maxb = 0;
    xfer_status_t st = XFER_SUCCESS;
    int r, k;

    if (v->ndims < 1 || v->ndims > XFER_MAX_DIMS || es == 0) {
        xfer_adapter_set_error("netcdf: \"%s\": variable \"%s\": invalid type or rank", w->path,
                               v->name);
        st = XFER_ERR_INVALID_ARG;
    }
    for (k = 0; st == XFER_SUCCESS && k < v->ndims; k++) {
        box[k] = start[k];
        box[XFER_MAX_DIMS + k] = count[k];
    }
    if (w->rank == 0) {
        boxes = malloc((size_t) w->size * sizeof(box));
        if (!boxes) {
            xfer_adapter_set_error("netcdf: out of memory");
            st = XFER_ERR_NO_MEMORY;
        }
    }
    /* the shapes first: rank 0 defines the variable and sizes its receive buffer */
    if (MPI_Gather(box, 2 * XFER_MAX_DIMS, MPI_UINT64_T, boxes, 2 * XFER_MAX_DIMS, MPI_UINT64_T, 0,
                   w->comm) != MPI_SUCCESS) {
        xfer_adapter_set_error("netcdf: \"%s\": MPI_Gather of the slab shapes failed", w->path);
        st = XFER_ERR_MPI;
    }
    if (w->rank == 0 && st == XFER_SUCCESS) {
        st = define_var(w, step, v, &d);
        for (r = 1; r < w->size; r++)
            if (xfer_adapter_volume(v->ndims,
                                    boxes + (size_t) r * 2 * XFER_MAX_DIMS + XFER_MAX_DIMS) *
                    es >
                maxb)
                maxb = xfer_adapter_volume(v->ndims,
                                           boxes + (size_t) r * 2 * XFER_MAX_DIMS + XFER_MAX_DIMS) *
                       es;
        if (st == XFER_SUCCESS && maxb > 0 && !(slab = malloc(maxb))) {
            xfer_adapter_set_error("netcdf: \"%s\": no memory for a slab of %zu bytes of \"%s\"",
                                   w->path, maxb, v->name);
            st = XFER_ERR_NO_MEMORY;
        }
    }
    st = xfer_adapter_agree(w->comm, st);
    if (st != XFER_SUCCESS)
        goto out;
    /* then the data, one slab at a time; rank 0 keeps receiving after a failed put so that no
     * sender is left hanging */
    if (w->rank == 0) {
        if (xfer_adapter_volume(v->ndims, count) > 0)
            st = put_slab(w, d, step, v, start, count, buf);
        for (r = 1; r < w->size; r++) {
            const uint64_t *b = boxes + (size_t) r * 2 * XFER_MAX_DIMS;
            const size_t nb = xfer_adapter_volume(v->ndims, b + XFER_MAX_DIMS) * es;
            if (nb == 0)
                continue;
            if (slab_xfer(slab, nb, r, w->comm, 0) != MPI_SUCCESS) {
                xfer_adapter_set_error("netcdf: \"%s\": MPI_Recv of rank %d's slab failed", w->path,
                                       r);
                st = XFER_ERR_MPI;
                break;
            }
            if (st == XFER_SUCCESS)
                st = put_slab(w, d, step, v, b, b + XFER_MAX_DIMS, slab);
        }
    } else {
        const size_t nb = xfer_adapter_volume(v->ndims, count) * es;
        if (nb > 0 && slab_xfer((void *) buf, nb, 0, w->comm, 1) != MPI_SUCCESS) {
            xfer_adapter_set_error("netcdf: \"%s\": MPI_Send of the slab to rank 0 failed",
                                   w->path);
            st = XFER_ERR_MPI;
        }
    }
    st = xfer_adapter_agree(w->comm, st);
out:
    free(slab);
    free(boxes);
    return st;
}

static xfer_status_t nca_end_step(void *h, uint64_t step)
{
    nca_writer_t *w = h;
    xfer_status_t st = XFER_SUCCESS;
    int rc;
    if (w->rank == 0) {
        rc = nc_sync(w->ncid);
        if (rc != NC_NOERR)
            st = nca_fail(rc, "nc_sync", w->tmp, NULL);
    }
    st = xfer_adapter_agree(w->comm, st);
    if (st == XFER_SUCCESS)
        w->steps_done = step + 1;
    return st;
}

static xfer_status_t nca_commit(void **h)
{
    nca_writer_t *w = h ? *h : NULL;
    xfer_status_t st = XFER_SUCCESS;
    int rc;
    if (!w)
        return XFER_SUCCESS;
    if (w->rank == 0) {
        rc = nc_close(w->ncid);
        w->ncid = -1;
        if (rc != NC_NOERR) {
            st = nca_fail(rc, "nc_close", w->tmp, NULL);
        } else if (rename(w->tmp, w->path) != 0) {
            xfer_adapter_set_error("netcdf: rename(\"%s\", \"%s\"): %s", w->tmp, w->path,
                                   strerror(errno));
            st = XFER_ERR_INTERNAL;
        }
    }
    st = xfer_adapter_agree(w->comm, st);
    writer_free(w);
    *h = NULL;
    return st;
}

/* Local (no communication: the peers may be gone). The completed steps stay in
 * "<path>.partial"; a file without any completed step is removed. */
static void nca_abort(void **h)
{
    nca_writer_t *w = h ? *h : NULL;
    char kept[PATH_MAX + 16];
    if (!w)
        return;
    if (w->rank == 0 && w->ncid >= 0) {
        nc_close(w->ncid);
        if (w->steps_done > 0) {
            snprintf(kept, sizeof(kept), "%s.partial", w->path);
            if (rename(w->tmp, kept) != 0)
                unlink(w->tmp);
        } else {
            unlink(w->tmp);
        }
    }
    writer_free(w);
    *h = NULL;
}

static const xfer_adapter_ops_t netcdf_ops = {
    .name = "netcdf",
    .open_read = nca_open_read,
    .vars = nca_vars,
    .read = nca_read,
    .close_read = nca_close_read,
    .create = nca_create_w,
    .write = nca_write,
    .end_step = nca_end_step,
    .commit = nca_commit,
    .abort = nca_abort,
    .groups = nca_groups,
    .lookup = nca_lookup,
    .write_group = NULL, /* global attributes: xfer_netcdf_define() */
    .skipped = nca_skipped,
    .read_record = nca_read_record,
};

const xfer_adapter_ops_t *xfer_adapter_netcdf(void)
{
    return &netcdf_ops;
}
