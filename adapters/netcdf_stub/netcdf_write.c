/* SPDX-License-Identifier: BSD-3-Clause */
/* The netCDF-4 adapter, consumer side (netcdf_adapter.c): rank 0 writes every rank's slabs,
 * records as compound types. */
#include "netcdf_internal.h"

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

xfer_status_t nca_create_w(const char *path, MPI_Comm comm, const xfer_adapter_wopts_t *o, void **h)
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
    nca_name_copy(d->name, sizeof(d->name), "", v->name);
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
    nca_to_size(v->ndims, start, s + off);
    nca_to_size(v->ndims, count, c + off);
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

xfer_status_t nca_write(void *h, uint64_t step, const xfer_adapter_var_t *v, const uint64_t start[],
                        const uint64_t count[], const void *buf)
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

xfer_status_t nca_end_step(void *h, uint64_t step)
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

xfer_status_t nca_commit(void **h)
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
void nca_abort(void **h)
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
