/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 adapter (hdf5_adapter.c): joined datasets (xfer_adapter_var_t.joined: a step's rows,
 * a number that changes from step to step) in the group-per-step layout, and their XDMF
 * description. Only that layout holds them: each step's dataset has its own extent (the
 * step-dimension layout, one extent for every step, refuses them in hdf5_write.c).
 *
 * When the file gets its final name, PATH.xmf describes each joined dataset whose geometry is
 * found as a temporal collection of Polyvertex grids, one per step that holds it, of that
 * step's rows:
 *  - numeric rows of 2 or 3 floats are their own geometry (XY, XYZ); the other numeric joined
 *    datasets of the same group with the same rows in every step are its attributes;
 *  - a record of one dimension: its field pos or position (2 or 3 floats), else its fields x,
 *    y (and z) of one float type, are the geometry, its other fields the attributes. XDMF
 *    cannot address a member of a compound, so each step also holds numeric copies of those
 *    fields beside the compound, at PATH.xdmf/FIELD (x, y, z together at PATH.xdmf/x,y,z, a
 *    name no field has), marked as the adapter's (xfer_coordinate = "xdmf": the reader leaves
 *    them out). The compound stays the record of truth.
 * A grid's topology lists its vertices, 0 .. rows-1 (a reader makes a vertex cell of each; XDMF
 * 3's readers make none without the list): a hyperslab of /xfer_xdmf_vertices, 0, 1, 2, ... as
 * far as the most rows of a step, grown when a step has more (marked like the copies).
 * A joined dataset without geometry gets no grid, and a comment in the .xmf saying why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5_hl.h>

#include "hdf5_internal.h"
#include "hdf5_write.h"

#define NO_ROWS  UINT64_MAX /* rows[] of a step that does not hold the dataset */
#define VERTICES "/xfer_xdmf_vertices"

typedef enum geom { GEOM_NONE, GEOM_SELF, GEOM_FIELD, GEOM_XYZ } geom_t;

typedef struct pfield {
    char *name;
    xfer_type_t type;
    uint32_t count;
    size_t offset;
} pfield_t;

/* One joined dataset, as its first step wrote it, and its rows in every step. */
typedef struct pvar {
    char name[XFER_ADAPTER_MAX_NAME]; /* its path within a step ("/swarm/particles") */
    xfer_type_t type;
    int ndims;
    uint64_t dims[XFER_MAX_DIMS]; /* dims[0]: see rows[] */
    int nfields;
    pfield_t *fields; /* a record's, copied */
    size_t rsize;
    geom_t geom;
    int gf[3], ngf;   /* the geometry's fields: pos (1), or x, y (, z) */
    char why[160];    /* GEOM_NONE: why */
    uint64_t changed; /* 0, or 1 + the step whose type or shape differs from the first one's */
    uint64_t *rows;   /* each step's rows, NO_ROWS where absent */
    uint64_t nrows;
} pvar_t;

struct h5points {
    int n, cap;
    pvar_t *v;
    uint64_t nvert; /* the extent of VERTICES (0: not created) */
};

static int is_float(xfer_type_t t)
{
    return t == XFER_TYPE_FLOAT32 || t == XFER_TYPE_FLOAT64;
}

static int field_named(const pvar_t *p, const char *name)
{
    int i;
    for (i = 0; i < p->nfields; i++)
        if (strcmp(p->fields[i].name, name) == 0)
            return i;
    return -1;
}

/* Which columns are the positions: the rules of the file's comment, never a guess beyond. */
static void find_geometry(pvar_t *p)
{
    static const char *const named[] = {"pos", "position"};
    unsigned k;
    if (p->type != XFER_TYPE_RECORD) {
        if (p->ndims == 2 && (p->dims[1] == 2 || p->dims[1] == 3) && is_float(p->type))
            p->geom = GEOM_SELF;
        else if (p->ndims == 2)
            snprintf(p->why, sizeof p->why, "rows of %llu %s, not of 2 or 3 floats",
                     (unsigned long long) p->dims[1], xfer_type_name(p->type));
        else
            snprintf(p->why, sizeof p->why, "rows of %s, not of 2 or 3 floats",
                     p->ndims == 1 ? "one number" : "more than one dimension");
        return;
    }
    if (p->ndims != 1) {
        snprintf(p->why, sizeof p->why, "a record of %d dimensions (points are rows of one)",
                 p->ndims);
        return;
    }
    for (k = 0; k < sizeof named / sizeof named[0]; k++) {
        const int i = field_named(p, named[k]);
        if (i >= 0 && (p->fields[i].count == 2 || p->fields[i].count == 3) &&
            is_float(p->fields[i].type)) {
            p->geom = GEOM_FIELD;
            p->gf[0] = i;
            p->ngf = 1;
            return;
        }
    }
    p->gf[0] = field_named(p, "x");
    p->gf[1] = field_named(p, "y");
    p->gf[2] = field_named(p, "z");
    p->ngf = p->gf[2] >= 0 ? 3 : 2;
    for (k = 0; k < (unsigned) p->ngf; k++)
        if (p->gf[k] < 0 || p->fields[p->gf[k]].count != 1 || !is_float(p->fields[p->gf[k]].type) ||
            p->fields[p->gf[k]].type != p->fields[p->gf[0]].type)
            break;
    if (k == (unsigned) p->ngf) {
        p->geom = GEOM_XYZ;
        return;
    }
    p->ngf = 0;
    snprintf(p->why, sizeof p->why,
             "no field pos or position of 2 or 3 floats, nor fields x, y (and z) of one float "
             "type");
}

static int is_geometry(const pvar_t *p, int field)
{
    int k;
    for (k = 0; k < p->ngf; k++)
        if (p->gf[k] == field)
            return 1;
    return 0;
}

/* Does @p v have the type and shape (rows apart) the dataset's first step had? */
static int same_kind(const pvar_t *p, const xfer_adapter_var_t *v)
{
    int i;
    if (v->type != p->type || v->ndims != p->ndims ||
        memcmp(v->dims + 1, p->dims + 1, (size_t) (p->ndims - 1) * sizeof(uint64_t)))
        return 0;
    if (p->type != XFER_TYPE_RECORD)
        return 1;
    if (v->record->nfields != p->nfields || v->record->size != p->rsize)
        return 0;
    for (i = 0; i < p->nfields; i++) {
        const xfer_record_field_t *f = &v->record->fields[i];
        const pfield_t *g = &p->fields[i];
        if (strcmp(f->name, g->name) || f->type != g->type || f->count != g->count ||
            f->offset != g->offset)
            return 0;
    }
    return 1;
}

static void free_var(pvar_t *p)
{
    int i;
    for (i = 0; p->fields && i < p->nfields; i++)
        free(p->fields[i].name);
    free(p->fields);
    free(p->rows);
}

/* A new entry for @p v: its kind (a record's fields copied) and its geometry; -1 out of memory. */
static int add_var(h5points_t *ps, const xfer_adapter_var_t *v)
{
    pvar_t *p;
    int i;
    if (h5_grow((void **) &ps->v, &ps->cap, ps->n, sizeof(pvar_t)) != 0)
        return -1;
    p = &ps->v[ps->n];
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof p->name, "%s", v->name);
    p->type = v->type;
    p->ndims = v->ndims;
    memcpy(p->dims, v->dims, sizeof p->dims);
    if (v->type == XFER_TYPE_RECORD) {
        if (!(p->fields = calloc((size_t) v->record->nfields, sizeof(pfield_t))))
            return -1;
        p->nfields = v->record->nfields;
        p->rsize = v->record->size;
        for (i = 0; i < p->nfields; i++) {
            const xfer_record_field_t *f = &v->record->fields[i];
            p->fields[i].type = f->type;
            p->fields[i].count = f->count;
            p->fields[i].offset = f->offset;
            if (!(p->fields[i].name = strdup(f->name))) {
                free_var(p);
                return -1;
            }
        }
    }
    find_geometry(p);
    ps->n++;
    return 0;
}

/* Note step @p step's rows of @p v (the same on every rank: its shape is collective). */
static pvar_t *note(h5write_t *w, const xfer_adapter_var_t *v, uint64_t step)
{
    h5points_t *ps = w->points;
    pvar_t *p;
    int i;
    if (!ps && !(ps = w->points = calloc(1, sizeof(*ps))))
        return NULL;
    for (i = 0; i < ps->n && strcmp(ps->v[i].name, v->name) != 0; i++)
        ;
    if (i == ps->n && add_var(ps, v) != 0)
        return NULL;
    p = &ps->v[i];
    if (step >= p->nrows) {
        const uint64_t n = step + 1 > 2 * p->nrows ? step + 1 : 2 * p->nrows;
        uint64_t *nr = realloc(p->rows, (size_t) n * sizeof(uint64_t)), k;
        if (!nr)
            return NULL;
        for (k = p->nrows; k < n; k++)
            nr[k] = NO_ROWS;
        p->rows = nr;
        p->nrows = n;
    }
    p->rows[step] = v->dims[0];
    if (!p->changed && !same_kind(p, v))
        p->changed = step + 1;
    return p;
}

/* PATH.xdmf/@p cname: the fields @p fi[0..nf) of this rank's @p n records at @p buf (rows
 * @p first .. of @p rows), side by side in one numeric dataset (collective, the status agreed). */
static xfer_status_t write_copy(h5write_t *w, const pvar_t *p, const char *path, const char *cname,
                                const int *fi, int nf, uint64_t rows, uint64_t first, uint64_t n,
                                const void *buf)
{
    const xfer_type_t t = p->fields[fi[0]].type;
    const size_t ts = xfer_type_size(t);
    char name[2 * XFER_ADAPTER_MAX_NAME + 16];
    uint64_t width = 0, i, start[2], count[2];
    hsize_t dims[2];
    hid_t sp = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, lcpl = H5I_INVALID_HID;
    hid_t ds = H5I_INVALID_HID, fs = H5I_INVALID_HID, ms = H5I_INVALID_HID, dx = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    char *out, dummy[16];
    int k, nd, empty;
    for (k = 0; k < nf; k++)
        width += p->fields[fi[k]].count;
    nd = width > 1 ? 2 : 1;
    snprintf(name, sizeof name, "%s.xdmf/%s", path, cname);
    if (!(out = malloc((size_t) (n * width) * ts + 1))) {
        xfer_adapter_set_error("%s: %s: out of memory", w->tmp, name);
        st = XFER_ERR_NO_MEMORY;
    }
    for (i = 0; out && i < n; i++) { /* row i: the fields one after the other */
        char *o = out + (size_t) (i * width) * ts;
        for (k = 0; k < nf; k++) {
            const pfield_t *f = &p->fields[fi[k]];
            memcpy(o, (const char *) buf + (size_t) i * p->rsize + f->offset, f->count * ts);
            o += f->count * ts;
        }
    }
    dims[0] = rows;
    dims[1] = width;
    start[0] = first;
    count[0] = n;
    start[1] = 0;
    count[1] = width;
    if (st == XFER_SUCCESS &&
        ((sp = H5Screate_simple(nd, dims, NULL)) < 0 ||
         (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 ||
         H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 || (lcpl = h5w_intermediate_lcpl()) < 0))
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Screate_simple");
    if (h5_agreed(w->comm, &st) &&
        (ds = H5Dcreate2(w->file, name, h5_native_of(t), sp, lcpl, dcpl, H5P_DEFAULT)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Dcreate2");
    if (h5_agreed(w->comm, &st) &&
        H5LTset_attribute_string(w->file, name, XFER_COORD_ATTR, "xdmf") < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5LTset_attribute_string");
    if (h5_agreed(w->comm, &st) && ((fs = H5Dget_space(ds)) < 0 ||
                                    (ms = h5_select_box(fs, 0, 0, nd, start, count, &empty)) < 0 ||
                                    (dx = h5_collective_dxpl()) < 0))
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Sselect_hyperslab");
    if (st == XFER_SUCCESS)
        st = h5w_reserve_data(w, ds, name);
    if (h5_agreed(w->comm, &st) && rows > 0 &&
        H5Dwrite(ds, h5_native_of(t), ms, fs, dx, empty ? (const void *) dummy : out) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Dwrite (collective)");
    H5_CLOSE(dx, ms, fs, ds, lcpl, dcpl, sp);
    free(out);
    return xfer_adapter_agree(w->comm, st);
}

/* VERTICES holding 0 .. @p n - 1 at least: created, or extended by what it lacks, rank 0
 * writing the new values (collective, the status agreed). */
static xfer_status_t grow_vertices(h5write_t *w, uint64_t n)
{
    h5points_t *ps = w->points;
    hsize_t dims = n, maxd = H5S_UNLIMITED, chunk = 4096, start = ps->nvert, cnt = n - ps->nvert;
    hid_t sp = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, ds = H5I_INVALID_HID;
    hid_t fs = H5I_INVALID_HID, ms = H5I_INVALID_HID, dx = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    int64_t *vals = NULL;
    hsize_t i;
    if (n <= ps->nvert)
        return XFER_SUCCESS;
    if (w->rank == 0 && !(vals = malloc((size_t) cnt * sizeof(int64_t)))) {
        xfer_adapter_set_error("%s: %s: out of memory", w->tmp, VERTICES);
        st = XFER_ERR_NO_MEMORY;
    }
    for (i = 0; vals && i < cnt; i++)
        vals[i] = (int64_t) (start + i);
    if (h5_agreed(w->comm, &st) && ps->nvert == 0) {
        if ((sp = H5Screate_simple(1, &dims, &maxd)) < 0 ||
            (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_chunk(dcpl, 1, &chunk) < 0)
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, VERTICES, "H5Pset_chunk");
        if (h5_agreed(w->comm, &st) && (ds = H5Dcreate2(w->file, VERTICES, H5T_NATIVE_INT64, sp,
                                                        H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, VERTICES, "H5Dcreate2");
        if (h5_agreed(w->comm, &st) &&
            H5LTset_attribute_string(w->file, VERTICES, XFER_COORD_ATTR, "xdmf") < 0)
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, VERTICES, "H5LTset_attribute_string");
    } else if (st == XFER_SUCCESS) {
        if ((ds = H5Dopen2(w->file, VERTICES, H5P_DEFAULT)) < 0)
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, VERTICES, "H5Dopen2");
        if (h5_agreed(w->comm, &st) && H5Dset_extent(ds, &dims) < 0)
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, VERTICES, "H5Dset_extent");
    }
    if (h5_agreed(w->comm, &st) &&
        ((fs = H5Dget_space(ds)) < 0 || (ms = H5Screate_simple(1, &cnt, NULL)) < 0 ||
         (dx = h5_collective_dxpl()) < 0 ||
         (w->rank == 0 ? H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL) < 0
                       : (H5Sselect_none(fs) < 0 || H5Sselect_none(ms) < 0))))
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, VERTICES, "H5Sselect_hyperslab");
    if (h5_agreed(w->comm, &st) && H5Dwrite(ds, H5T_NATIVE_INT64, ms, fs, dx, vals) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, VERTICES, "H5Dwrite (collective)");
    st = xfer_adapter_agree(w->comm, st);
    if (st == XFER_SUCCESS)
        ps->nvert = n;
    H5_CLOSE(dx, ms, fs, ds, dcpl);
    if (sp >= 0)
        H5Sclose(sp);
    free(vals);
    return st;
}

xfer_status_t h5p_joined(h5write_t *w, uint64_t step, const char *path, const xfer_adapter_var_t *v,
                         const uint64_t start[], const uint64_t count[], const void *buf)
{
    xfer_status_t st = XFER_SUCCESS;
    const pvar_t *p = note(w, v, step);
    int i;
    if (!p) {
        xfer_adapter_set_error("%s: %s: out of memory", w->tmp, path);
        st = XFER_ERR_NO_MEMORY;
    }
    if (!h5_agreed(w->comm, &st) || p->changed || p->geom == GEOM_NONE)
        return st; /* not shown */
    if ((st = grow_vertices(w, v->dims[0])) != XFER_SUCCESS || p->geom == GEOM_SELF)
        return st; /* agreed; a numeric dataset is its own copy */
    st = write_copy(w, p, path,
                    p->geom == GEOM_FIELD ? p->fields[p->gf[0]].name
                    : p->ngf == 3         ? "x,y,z"
                                          : "x,y",
                    p->gf, p->ngf, v->dims[0], start[0], count[0], buf);
    for (i = 0; st == XFER_SUCCESS && i < p->nfields; i++)
        if (!is_geometry(p, i))
            st = write_copy(w, p, path, p->fields[i].name, &i, 1, v->dims[0], start[0], count[0],
                            buf);
    return st; /* agreed */
}

void h5p_free(h5points_t *ps)
{
    int i;
    if (!ps)
        return;
    for (i = 0; i < ps->n; i++)
        free_var(&ps->v[i]);
    free(ps->v);
    free(ps);
}

/* ---- XDMF ------------------------------------------------------------------------------------ */

/* @p s as XML text or attribute value. */
static void xml_put(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
}

static int group_len(const char *name)
{
    const char *slash = strrchr(name, '/');
    return slash ? (int) (slash - name) : 0;
}

/* Is @p a, a numeric joined dataset of @p g's group, an attribute of @p g's points: present in
 * the same completed steps with the same rows in each? */
static int attribute_of(const pvar_t *a, const pvar_t *g, uint64_t nsteps)
{
    uint64_t s;
    if (a == g || a->type == XFER_TYPE_RECORD || a->changed || a->ndims > 2 ||
        group_len(a->name) != group_len(g->name) ||
        strncmp(a->name, g->name, (size_t) group_len(g->name)) != 0)
        return 0;
    for (s = 0; s < nsteps; s++) {
        const uint64_t ra = s < a->nrows ? a->rows[s] : NO_ROWS;
        const uint64_t rg = s < g->nrows ? g->rows[s] : NO_ROWS;
        if (ra != rg)
            return 0;
    }
    return 1;
}

static int shown(const pvar_t *p)
{
    return p->geom != GEOM_NONE && !p->changed;
}

/* One HDF data item: rows x width numbers of type @p t at @p h5name:/step_S@p path@p tail. */
static void data_item(FILE *f, const char *indent, uint64_t rows, uint64_t width, xfer_type_t t,
                      const char *h5name, uint64_t s, const char *path, const char *tail)
{
    int prec;
    const char *num = h5c_xdmf_number(t, &prec);
    fprintf(f, "%s<DataItem Dimensions=\"%llu", indent, (unsigned long long) rows);
    if (width > 1)
        fprintf(f, " %llu", (unsigned long long) width);
    fprintf(f, "\" NumberType=\"%s\" Precision=\"%d\" Format=\"HDF\">", num, prec);
    xml_put(f, h5name);
    fprintf(f, ":/step_%06llu", (unsigned long long) s); /* hdf5_write.c's out_name */
    xml_put(f, path);
    xml_put(f, tail);
    fputs("</DataItem>\n", f);
}

static void attribute(FILE *f, const char *name, uint64_t width)
{
    fputs("    <Attribute Name=\"", f);
    xml_put(f, name);
    fprintf(f, "\" AttributeType=\"%s\" Center=\"Node\">\n",
            width == 1   ? "Scalar"
            : width == 3 ? "Vector"
                         : "Matrix");
}

/* The grid of joined dataset @p g in step @p s (@p n rows). */
static void step_grid(FILE *f, const h5points_t *ps, const pvar_t *g, uint64_t s, uint64_t n,
                      double t, const char *h5name, uint64_t nsteps)
{
    char tail[XFER_ADAPTER_MAX_NAME + 16];
    int i;
    fprintf(f,
            "   <Grid Name=\"step %llu\" GridType=\"Uniform\">\n    <Time Value=\"%.17g\"/>\n"
            "    <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"%llu\" "
            "NodesPerElement=\"1\"%s\n",
            (unsigned long long) s, t, (unsigned long long) n, n ? ">" : "/>");
    if (n) { /* vertex k is point k: the first n of VERTICES */
        fprintf(f,
                "     <DataItem ItemType=\"HyperSlab\" Dimensions=\"%llu\" Type=\"HyperSlab\">\n"
                "      <DataItem Dimensions=\"3 1\" Format=\"XML\">0 1 %llu</DataItem>\n"
                "      <DataItem Dimensions=\"%llu\" NumberType=\"Int\" Precision=\"8\" "
                "Format=\"HDF\">",
                (unsigned long long) n, (unsigned long long) n, (unsigned long long) ps->nvert);
        xml_put(f, h5name);
        fputs(":" VERTICES "</DataItem>\n     </DataItem>\n    </Topology>\n", f);
    }
    if (g->geom == GEOM_SELF) {
        fprintf(f, "    <Geometry GeometryType=\"%s\">\n", g->dims[1] == 3 ? "XYZ" : "XY");
        data_item(f, "     ", n, g->dims[1], g->type, h5name, s, g->name, "");
        fputs("    </Geometry>\n", f);
        for (i = 0; i < ps->n; i++) {
            const pvar_t *a = &ps->v[i];
            const uint64_t width = a->ndims == 2 ? a->dims[1] : 1;
            if (!attribute_of(a, g, nsteps))
                continue;
            attribute(f, a->name + group_len(a->name) + 1, width);
            data_item(f, "     ", n, width, a->type, h5name, s, a->name, "");
            fputs("    </Attribute>\n", f);
        }
    } else {
        const pfield_t *f0 = &g->fields[g->gf[0]];
        const uint64_t width = g->geom == GEOM_FIELD ? f0->count : (uint64_t) g->ngf;
        snprintf(tail, sizeof tail, ".xdmf/%s",
                 g->geom == GEOM_FIELD ? f0->name
                 : g->ngf == 3         ? "x,y,z"
                                       : "x,y");
        fprintf(f, "    <Geometry GeometryType=\"%s\">\n", width == 3 ? "XYZ" : "XY");
        data_item(f, "     ", n, width, f0->type, h5name, s, g->name, tail);
        fputs("    </Geometry>\n", f);
        for (i = 0; i < g->nfields; i++) {
            const pfield_t *a = &g->fields[i];
            if (is_geometry(g, i))
                continue;
            snprintf(tail, sizeof tail, ".xdmf/%s", a->name);
            attribute(f, a->name, a->count);
            data_item(f, "     ", n, a->count, a->type, h5name, s, g->name, tail);
            fputs("    </Attribute>\n", f);
        }
    }
    fputs("   </Grid>\n", f);
}

/* What the comment says of joined dataset @p p. */
static void describe(FILE *f, const h5points_t *ps, const pvar_t *p, const char *h5name,
                     uint64_t nsteps)
{
    int i;
    fputs("  <!-- ", f);
    h5c_comment(f, p->name);
    if (p->changed) {
        fprintf(f, ": no grid: its type or shape in step %llu differs from its first step's",
                (unsigned long long) p->changed - 1);
    } else if (p->geom == GEOM_NONE) {
        for (i = 0; i < ps->n; i++)
            if (ps->v[i].geom == GEOM_SELF && shown(&ps->v[i]) &&
                attribute_of(p, &ps->v[i], nsteps))
                break;
        fputs(": a joined dataset without geometry (", f);
        h5c_comment(f, p->why);
        fputs(i < ps->n ? "); an attribute of the points of " : "): no grid", f);
        if (i < ps->n)
            h5c_comment(f, ps->v[i].name);
    } else if (p->geom == GEOM_SELF) {
        fputs(": joined rows of positions; the other numeric joined datasets of its group with "
              "the same rows in every step are their attributes",
              f);
    } else {
        fputs(": a record (HDF5 compound type); XDMF cannot address its fields, so its grid "
              "reads their copies in STEP",
              f);
        h5c_comment(f, p->name);
        fputs(".xdmf/ (the compound in ", f);
        h5c_comment(f, h5name);
        fputs(" is the record of truth)", f);
    }
    fputs(" -->\n", f);
}

int h5p_write_xdmf(const h5write_t *w, const char *xmf, const char *h5name, char *why, size_t cap)
{
    const h5points_t *ps = w->points;
    char tmp[4200];
    uint64_t s;
    FILE *f;
    int i, bad;
    if (!ps || ps->n == 0 || w->completed == 0)
        return 0;
    snprintf(tmp, sizeof tmp, "%s.tmp", xmf);
    if (!(f = fopen(tmp, "w"))) {
        snprintf(why, cap, "cannot write %s", tmp);
        return -1;
    }
    fputs("<?xml version=\"1.0\" ?>\n<!-- written by libxfer's HDF5 adapter: the joined datasets "
          "of ",
          f);
    h5c_comment(f, h5name);
    fputs(", a group per step (STEP: /step_NNNNNN) -->\n<Xdmf Version=\"3.0\">\n <Domain>\n", f);
    for (i = 0; i < ps->n; i++)
        describe(f, ps, &ps->v[i], h5name, w->completed);
    for (i = 0; i < ps->n; i++) {
        const pvar_t *g = &ps->v[i];
        if (!shown(g))
            continue;
        fputs("  <Grid Name=\"", f);
        xml_put(f, g->name + 1);
        fputs("\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", f);
        for (s = 0; s < w->completed && s < g->nrows; s++)
            if (g->rows[s] != NO_ROWS)
                step_grid(f, ps, g, s, g->rows[s], w->times ? w->times[s] : (double) s, h5name,
                          w->completed);
        fputs("  </Grid>\n", f);
    }
    fputs(" </Domain>\n</Xdmf>\n", f);
    bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, xmf) != 0) {
        snprintf(why, cap, "cannot write %s", xmf);
        remove(tmp);
        return -1;
    }
    return 0;
}
