/* SPDX-License-Identifier: BSD-3-Clause */
/* The netCDF-4 adapter, producer side (netcdf_adapter.c): every rank opens the file read-only
 * and reads its own hyperslabs; compound variables are listed as records. */
#include "netcdf_internal.h"

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
        if (t != NC_CHAR && !nca_xfer_type(t)) {
            note(r, "attribute \"%s\" of %s: type %s is not carried", name, owner,
                 nca_type_name(t, tb, sizeof(tb)));
            continue;
        }
        nca_name_copy(at->name, sizeof(at->name), "", name);
        at->is_text = t == NC_CHAR;
        at->type = at->is_text ? (xfer_type_t) 0 : nca_xfer_type(t);
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
        nca_name_copy(d->name, sizeof(d->name), "/dim/", name);
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
        f->type = nca_xfer_type(ft);
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
        } else if (!nca_xfer_type(t)) {
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
        nca_name_copy(v->name, sizeof(v->name), "", name);
        v->type = r->records[r->nvars] ? XFER_TYPE_RECORD : nca_xfer_type(t);
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

xfer_status_t nca_open_read(const char *path, MPI_Comm comm, void **h)
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

xfer_status_t nca_vars(void *h, int *n, const xfer_adapter_var_t **vars)
{
    nca_reader_t *r = h;
    *n = r->nvars;
    *vars = r->vars;
    return XFER_SUCCESS;
}

/* Independent reads (the serial library has no collective I/O); local: no communication.
 * Records in another layout than the file's (@p as) are read into the file's and then moved
 * field by field, by name: netCDF converts no compound. */
xfer_status_t nca_read_record(void *h, int var, const xfer_record_t *as, const uint64_t start[],
                              const uint64_t count[], void *buf)
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
    nca_to_size(v->ndims, start, s);
    nca_to_size(v->ndims, count, c);
    rc = r->vrank[var] == 0 ? nc_get_var(r->ncid, r->varids[var], tmp ? tmp : buf)
                            : nc_get_vara(r->ncid, r->varids[var], s, c, tmp ? tmp : buf);
    if (rc != NC_NOERR)
        st = nca_fail(rc, "nc_get_vara", r->path, v->name);
    else if (tmp)
        xfer_adapter_record_convert(v->record, as, n, tmp, buf);
    free(tmp);
    return st;
}

xfer_status_t nca_read(void *h, int var, const uint64_t start[], const uint64_t count[], void *buf)
{
    return nca_read_record(h, var, NULL, start, count, buf);
}

xfer_status_t nca_close_read(void **h)
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
        nca_name_copy(d->name, sizeof(d->name), "/dimids/", r->vars[i].name);
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
xfer_status_t nca_groups(void *h, int *n, const xfer_adapter_var_t **groups)
{
    nca_reader_t *r = h;
    *n = 1;
    *groups = &r->global;
    return XFER_SUCCESS;
}

xfer_status_t nca_lookup(void *h, const char *name)
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

xfer_status_t nca_skipped(void *h, int *n, const char *const **lines)
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
