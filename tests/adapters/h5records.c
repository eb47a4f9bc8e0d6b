/* SPDX-License-Identifier: BSD-3-Clause */
/* h5records: records (XFER_TYPE_RECORD) through the HDF5 adapter's own API, on every rank of
 * MPI_COMM_WORLD (1 or 2: the writes are collective, each rank its slab):
 *
 *  - each layout (same paths, a group per step, a step dimension) writes a 1-D and a 2-D record
 *    variable, {id: int64, pos: [float64, 3], q: float32, kind: int8} laid out as the C struct
 *    below, whose padding bytes the writer fills with garbage; the file is read back with
 *    vars()/read(): the record's fields and offsets, then every element field by field;
 *  - read_record() into another layout (a subset of the fields, in another order);
 *  - a file written with plain HDF5 calls whose compound holds the members in another order,
 *    packed, two of them big-endian: vars() reports the native layout in member order, and
 *    read_record() with the struct's record reads every field right;
 *  - refusals: a field the file lacks, a field of another type, a record without fields, a
 *    step-dimension variable whose record changes; compounds that are no record (a string
 *    member, a member name that is no C identifier) are skipped with their reason;
 *  - the XDMF side-car names the records in a comment and shows the scalar variable only.
 *
 *   h5records DIR     (files DIR/same.h5, group.h5, stepdim.h5 are left for h5dump)
 */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/adapter.h>

#include "adapter_common.h"

typedef struct particle {
    int64_t id;
    double pos[3];
    float q;
    int8_t kind;
} particle_t;

#define N1   13 /* elements of /swarm/particles */
#define ROWS 6  /* /grid/cells: ROWS x COLS */
#define COLS 5

static int rank, nranks, checks;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "h5records: rank %d: %s:%d: %s: ", rank, __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " [adapter: %s]\n", xfer_adapter_error());                             \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#define OK(call) CHECK((call) == XFER_SUCCESS, "%s", #call)

/* The value of element @p g of step @p s. */
static particle_t value(int64_t g, uint64_t s)
{
    particle_t p;
    memset(&p, 0xA5, sizeof(p)); /* padding: garbage the reader need not reproduce */
    p.id = 1000 * (int64_t) s + g;
    p.pos[0] = (double) g + 0.25;
    p.pos[1] = -(double) g;
    p.pos[2] = 0.5 * (double) s;
    p.q = (float) g / 3.0f + (float) s;
    p.kind = (int8_t) (g * 7 - (int64_t) s);
    return p;
}

/* Elements at @p buf laid out as @p r equal value(g0 + i, s), field by field. */
static void compare(const xfer_record_t *r, const void *buf, size_t n, int64_t g0, uint64_t s,
                    const char *what)
{
    size_t i;
    int f;
    for (i = 0; i < n; i++) {
        const particle_t want = value(g0 + (int64_t) i, s);
        const unsigned char *e = (const unsigned char *) buf + i * r->size;
        for (f = 0; f < r->nfields; f++) {
            const xfer_record_field_t *fd = &r->fields[f];
            const void *exp = !strcmp(fd->name, "id")    ? (const void *) &want.id
                              : !strcmp(fd->name, "pos") ? (const void *) want.pos
                              : !strcmp(fd->name, "q")   ? (const void *) &want.q
                                                         : (const void *) &want.kind;
            CHECK(memcmp(e + fd->offset, exp, xfer_type_size(fd->type) * fd->count) == 0,
                  "%s: element %lld, step %llu: field %s differs", what,
                  (long long) (g0 + (int64_t) i), (unsigned long long) s, fd->name);
        }
    }
}

/* The record of particle_t, laid out by libxfer as a workflow file's would be. */
static xfer_record_t *particle_record(void)
{
    xfer_record_t *r = xfer_adapter_record_new(4);
    static const char *names[4] = {"id", "pos", "q", "kind"};
    static const xfer_type_t types[4] = {XFER_TYPE_INT64, XFER_TYPE_FLOAT64, XFER_TYPE_FLOAT32,
                                         XFER_TYPE_INT8};
    static const uint32_t counts[4] = {1, 3, 1, 1};
    int i;
    CHECK(r != NULL, "out of memory");
    for (i = 0; i < 4; i++) {
        r->fields[i].name = strdup(names[i]);
        r->fields[i].type = types[i];
        r->fields[i].count = counts[i];
    }
    OK(xfer_record_layout(r));
    CHECK(r->size == sizeof(particle_t) && r->fields[0].offset == offsetof(particle_t, id) &&
              r->fields[1].offset == offsetof(particle_t, pos) &&
              r->fields[2].offset == offsetof(particle_t, q) &&
              r->fields[3].offset == offsetof(particle_t, kind),
          "xfer_record_layout differs from the C struct");
    return r;
}

/* A record of the fields @p names of particle_t, in that order, as xfer_record_layout lays them
 * out. */
static xfer_record_t *subset_record(int n, const char *const *names)
{
    xfer_record_t *full = particle_record(), *r = xfer_adapter_record_new(n);
    int i, k;
    for (i = 0; i < n; i++) {
        for (k = 0; k < full->nfields && strcmp(full->fields[k].name, names[i]) != 0; k++)
            ;
        r->fields[i] = full->fields[k];
        r->fields[i].name = strdup(names[i]);
    }
    OK(xfer_record_layout(r));
    xfer_adapter_record_free(&full);
    return r;
}

static const xfer_adapter_var_t *find(int n, const xfer_adapter_var_t *vars, const char *name)
{
    int i;
    for (i = 0; i < n; i++)
        if (!strcmp(vars[i].name, name))
            return &vars[i];
    return NULL;
}

static int var_index(int n, const xfer_adapter_var_t *vars, const char *name)
{
    const xfer_adapter_var_t *v = find(n, vars, name);
    CHECK(v != NULL, "no variable %s", name);
    return (int) (v - vars);
}

/* This rank's slab of the slowest dimension of a [rows, cols] variable (cols 0: 1-D). */
static void my_slab(uint64_t rows, uint64_t cols, uint64_t *start, uint64_t *count)
{
    xfer_adapter_split(rows, nranks, rank, &start[0], &count[0]);
    start[1] = 0;
    count[1] = cols;
}

/* Write step @p s of the three variables: /swarm/particles [N1], /grid/cells [ROWS, COLS]
 * (records) and /grid/T [ROWS, COLS] (float64). */
static xfer_status_t write_step(const xfer_adapter_ops_t *ops, void *h, uint64_t s,
                                const xfer_record_t *rec)
{
    xfer_adapter_var_t v;
    uint64_t start[2], count[2];
    particle_t *buf = malloc(sizeof(particle_t) * N1 + sizeof(particle_t) * ROWS * COLS);
    double *t = malloc(sizeof(double) * ROWS * COLS);
    xfer_status_t st;
    uint64_t i;
    CHECK(buf && t, "out of memory");
    memset(&v, 0, sizeof(v));
    snprintf(v.name, sizeof(v.name), "/swarm/particles");
    v.type = XFER_TYPE_RECORD;
    v.record = rec;
    v.ndims = 1;
    v.dims[0] = N1;
    my_slab(N1, 0, start, count);
    for (i = 0; i < count[0]; i++)
        buf[i] = value((int64_t) (start[0] + i), s);
    if ((st = ops->write(h, s, &v, start, count, buf)) != XFER_SUCCESS)
        goto out;
    snprintf(v.name, sizeof(v.name), "/grid/cells");
    v.ndims = 2;
    v.dims[0] = ROWS;
    v.dims[1] = COLS;
    snprintf(v.dim_names[0], sizeof(v.dim_names[0]), "y");
    snprintf(v.dim_names[1], sizeof(v.dim_names[1]), "x");
    my_slab(ROWS, COLS, start, count);
    for (i = 0; i < count[0] * COLS; i++)
        buf[i] = value((int64_t) (start[0] * COLS + i), s);
    if ((st = ops->write(h, s, &v, start, count, buf)) != XFER_SUCCESS)
        goto out;
    snprintf(v.name, sizeof(v.name), "/grid/T");
    v.type = XFER_TYPE_FLOAT64;
    v.record = NULL;
    for (i = 0; i < count[0] * COLS; i++)
        t[i] = (double) (start[0] * COLS + i) + 0.5 * (double) s;
    st = ops->write(h, s, &v, start, count, t);
out:
    free(buf);
    free(t);
    return st;
}

/* Read back step @p s of an output (its variables under @p prefix, "" or "/step_00000S"; @p lead:
 * a leading step dimension) and compare every element. */
static void read_back(const xfer_adapter_ops_t *ops, void *h, int lead, uint64_t nsteps, uint64_t s,
                      const char *prefix, const xfer_record_t *rec)
{
    const xfer_adapter_var_t *vars;
    uint64_t start[3], count[3];
    unsigned char *buf = malloc(sizeof(particle_t) * ROWS * COLS + sizeof(particle_t) * N1);
    char why[256], name[128];
    int n, k, i;
    CHECK(buf != NULL, "out of memory");
    OK(ops->vars(h, &n, &vars));
    for (k = 0; k < 2; k++) {
        const uint64_t rows = k == 0 ? N1 : ROWS, cols = k == 0 ? 1 : COLS;
        const xfer_adapter_var_t *v;
        int idx;
        snprintf(name, sizeof(name), "%s%s", prefix, k == 0 ? "/swarm/particles" : "/grid/cells");
        idx = var_index(n, vars, name);
        v = &vars[idx];
        CHECK(v->type == XFER_TYPE_RECORD && v->record, "%s: not a record", name);
        CHECK(xfer_adapter_record_diff(v->record, rec, why, sizeof(why)) == 0,
              "%s: the file's record differs from the one written: %s", name, why);
        CHECK(v->ndims == lead + 1 + k, "%s: %d dimensions", name, v->ndims);
        if (lead)
            CHECK(v->dims[0] == nsteps, "%s: %llu steps", name, (unsigned long long) v->dims[0]);
        CHECK(v->dims[lead] == rows && (k == 0 || v->dims[lead + 1] == cols), "%s: shape", name);
        start[0] = s;
        count[0] = 1;
        my_slab(rows, cols, start + lead, count + lead);
        memset(buf, 0x5A, sizeof(particle_t) * count[lead] * cols);
        OK(ops->read(h, idx, start, count, buf));
        compare(v->record, buf, (size_t) (count[lead] * cols), (int64_t) (start[lead] * cols), s,
                name);
        /* another layout: two fields, another order, another padding */
        {
            static const char *const sub[2] = {"kind", "id"};
            xfer_record_t *as = subset_record(2, sub);
            memset(buf, 0x5A, as->size * count[lead] * cols);
            OK(ops->read_record(h, idx, as, start, count, buf));
            compare(as, buf, (size_t) (count[lead] * cols), (int64_t) (start[lead] * cols), s,
                    name);
            xfer_adapter_record_free(&as);
        }
    }
    /* the scalar variable beside them is untouched by all this */
    {
        double t[ROWS * COLS];
        int idx;
        snprintf(name, sizeof(name), "%s/grid/T", prefix);
        idx = var_index(n, vars, name);
        start[0] = s;
        count[0] = 1;
        my_slab(ROWS, COLS, start + lead, count + lead);
        CHECK(vars[idx].type == XFER_TYPE_FLOAT64 && vars[idx].record == NULL, "T: type");
        OK(ops->read(h, idx, start, count, t));
        for (i = 0; i < (int) (count[lead] * COLS); i++)
            CHECK(t[i] == (double) (start[lead] * COLS + (uint64_t) i) + 0.5 * (double) s,
                  "T: element %d", i);
    }
    free(buf);
}

static void layout_roundtrip(const char *dir, xfer_adapter_layout_t layout, const char *lname,
                             uint64_t nsteps, const xfer_record_t *rec)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_hdf5();
    xfer_adapter_wopts_t o;
    char path[1024], prefix[64];
    void *h = NULL;
    uint64_t s;
    memset(&o, 0, sizeof(o));
    o.layout = layout;
    o.chunked = layout == XFER_ADAPTER_GROUP_PER_STEP;
    snprintf(path, sizeof(path), "%s/%s.h5", dir, lname);
    OK(ops->create(path, MPI_COMM_WORLD, &o, &h));
    for (s = 0; s < nsteps; s++) {
        OK(write_step(ops, h, s, rec));
        OK(ops->end_step(h, s));
    }
    OK(ops->commit(&h));
    OK(ops->open_read(path, MPI_COMM_WORLD, &h));
    for (s = 0; s < nsteps; s++) {
        if (layout == XFER_ADAPTER_GROUP_PER_STEP)
            snprintf(prefix, sizeof(prefix), "/step_%06llu", (unsigned long long) s);
        else
            prefix[0] = '\0';
        read_back(ops, h, layout == XFER_ADAPTER_STEP_DIM, nsteps, s, prefix, rec);
    }
    OK(ops->close_read(&h));
}

/* Rank 0, plain HDF5: /reordered, the particles of step 3 in a compound whose members are
 * kind, q, pos, id (another order), packed (no padding), id and pos big-endian; /stringy, a
 * compound with a string member; /spaced, a member name with a space. */
static void write_foreign(const char *path)
{
    const hsize_t n = N1, three = 3;
    const size_t packed = 1 + 4 + 24 + 8;
    hid_t f, t, arr, sp, d, mt;
    size_t i;
    CHECK((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0, "H5Fcreate");
    CHECK((t = H5Tcreate(H5T_COMPOUND, packed)) >= 0, "H5Tcreate");
    CHECK((arr = H5Tarray_create2(H5T_IEEE_F64BE, 1, &three)) >= 0, "H5Tarray_create2");
    CHECK(H5Tinsert(t, "kind", 0, H5T_STD_I8LE) >= 0 && H5Tinsert(t, "q", 1, H5T_IEEE_F32LE) >= 0 &&
              H5Tinsert(t, "pos", 5, arr) >= 0 && H5Tinsert(t, "id", 29, H5T_STD_I64BE) >= 0,
          "H5Tinsert");
    /* the values, through a memory type of the same order from the struct (HDF5 converts) */
    {
        particle_t *p = malloc(sizeof(particle_t) * N1);
        hid_t marr;
        CHECK(p != NULL, "out of memory");
        for (i = 0; i < N1; i++)
            p[i] = value((int64_t) i, 3);
        CHECK((mt = H5Tcreate(H5T_COMPOUND, sizeof(particle_t))) >= 0, "H5Tcreate");
        CHECK((marr = H5Tarray_create2(H5T_NATIVE_DOUBLE, 1, &three)) >= 0, "H5Tarray_create2");
        CHECK(H5Tinsert(mt, "id", offsetof(particle_t, id), H5T_NATIVE_INT64) >= 0 &&
                  H5Tinsert(mt, "pos", offsetof(particle_t, pos), marr) >= 0 &&
                  H5Tinsert(mt, "q", offsetof(particle_t, q), H5T_NATIVE_FLOAT) >= 0 &&
                  H5Tinsert(mt, "kind", offsetof(particle_t, kind), H5T_NATIVE_INT8) >= 0,
              "H5Tinsert");
        CHECK((sp = H5Screate_simple(1, &n, NULL)) >= 0, "H5Screate_simple");
        CHECK((d = H5Dcreate2(f, "reordered", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0,
              "H5Dcreate2");
        CHECK(H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, p) >= 0, "H5Dwrite");
        H5Dclose(d);
        H5Tclose(marr);
        H5Tclose(mt);
        free(p);
    }
    {
        hid_t s4 = H5Tcopy(H5T_C_S1), c2 = H5Tcreate(H5T_COMPOUND, 16), c3;
        CHECK(s4 >= 0 && H5Tset_size(s4, 4) >= 0 && c2 >= 0, "H5Tcopy");
        CHECK(H5Tinsert(c2, "x", 0, H5T_NATIVE_INT) >= 0 && H5Tinsert(c2, "label", 4, s4) >= 0,
              "H5Tinsert");
        CHECK((d = H5Dcreate2(f, "stringy", c2, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0,
              "H5Dcreate2");
        H5Dclose(d);
        CHECK((c3 = H5Tcreate(H5T_COMPOUND, 8)) >= 0, "H5Tcreate");
        CHECK(H5Tinsert(c3, "my field", 0, H5T_NATIVE_DOUBLE) >= 0, "H5Tinsert");
        CHECK((d = H5Dcreate2(f, "spaced", c3, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0,
              "H5Dcreate2");
        H5Dclose(d);
        H5Tclose(c3);
        H5Tclose(c2);
        H5Tclose(s4);
    }
    H5Sclose(sp);
    H5Tclose(arr);
    H5Tclose(t);
    CHECK(H5Fclose(f) >= 0, "H5Fclose");
}

static void foreign_file(const char *dir, const xfer_record_t *rec)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_hdf5();
    const xfer_adapter_var_t *vars;
    const char *const *lines;
    char path[1024], why[256];
    uint64_t start[1], count[1];
    void *h = NULL;
    unsigned char *buf = malloc(64 * N1);
    int n, nl, idx, i, seen = 0;
    static const char *const order[4] = {"kind", "q", "pos", "id"};
    xfer_record_t *native = subset_record(4, order), *bad;
    CHECK(buf != NULL, "out of memory");
    snprintf(path, sizeof(path), "%s/foreign.h5", dir);
    if (rank == 0)
        write_foreign(path);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(ops->open_read(path, MPI_COMM_WORLD, &h));
    OK(ops->vars(h, &n, &vars));
    idx = var_index(n, vars, "/reordered");
    /* member order, the native layout of the members: what a workflow file would declare */
    CHECK(vars[idx].type == XFER_TYPE_RECORD, "/reordered: not a record");
    CHECK(xfer_adapter_record_diff(vars[idx].record, native, why, sizeof(why)) == 0,
          "/reordered: the record is not the members' native layout in member order: %s", why);
    xfer_adapter_split(N1, nranks, rank, &start[0], &count[0]);
    memset(buf, 0x5A, 64 * N1);
    OK(ops->read(h, idx, start, count, buf));
    compare(vars[idx].record, buf, (size_t) count[0], (int64_t) start[0], 3, "/reordered (own)");
    memset(buf, 0x5A, 64 * N1);
    OK(ops->read_record(h, idx, rec, start, count, buf));
    compare(rec, buf, (size_t) count[0], (int64_t) start[0], 3, "/reordered (as the struct)");
    /* refusals, on every rank alike */
    bad = particle_record();
    free(bad->fields[2].name);
    bad->fields[2].name = strdup("mass");
    CHECK(ops->read_record(h, idx, bad, start, count, buf) == XFER_ERR_MISMATCH &&
              strstr(xfer_adapter_error(), "field mass is not in the file's record"),
          "a field the file lacks: %s", xfer_adapter_error());
    free(bad->fields[2].name);
    bad->fields[2].name = strdup("q");
    bad->fields[2].type = XFER_TYPE_FLOAT64;
    OK(xfer_record_layout(bad));
    CHECK(
        ops->read_record(h, idx, bad, start, count, buf) == XFER_ERR_MISMATCH &&
            strstr(xfer_adapter_error(), "field q is [float32, 1] in the file, [float64, 1] here"),
        "a field of another type: %s", xfer_adapter_error());
    xfer_adapter_record_free(&bad);
    /* compounds that are no record: skipped, with the reason */
    CHECK(find(n, vars, "/stringy") == NULL && find(n, vars, "/spaced") == NULL,
          "a compound that is no record was listed");
    OK(ops->skipped(h, &nl, &lines));
    for (i = 0; i < nl; i++) {
        if (!strcmp(lines[i], "/stringy: compound type not supported as a record: member label: "
                              "string type of 4 bytes not supported (native integers and floats "
                              "only)"))
            seen |= 1;
        if (!strcmp(lines[i], "/spaced: compound type not supported as a record: member \"my "
                              "field\": not a C identifier, as a record's fields are"))
            seen |= 2;
    }
    CHECK(seen == 3, "skipped() lacks a reason (%d lines, seen %d)", nl, seen);
    CHECK(ops->lookup(h, "/stringy") == XFER_ERR_NOT_SUPPORTED &&
              strstr(xfer_adapter_error(), "member label"),
          "lookup(/stringy)");
    OK(ops->close_read(&h));
    xfer_adapter_record_free(&native);
    free(buf);
}

/* Writes the adapter refuses, on every rank alike. */
static void write_refusals(const char *dir, const xfer_record_t *rec)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_hdf5();
    xfer_adapter_wopts_t o;
    xfer_adapter_var_t v;
    xfer_record_t *other;
    char path[1024];
    uint64_t start[1] = {0}, count[1] = {0};
    void *h = NULL;
    static const char *const two[2] = {"id", "q"};
    memset(&o, 0, sizeof(o));
    o.layout = XFER_ADAPTER_STEP_DIM;
    snprintf(path, sizeof(path), "%s/refusals.h5", dir);
    OK(ops->create(path, MPI_COMM_WORLD, &o, &h));
    memset(&v, 0, sizeof(v));
    snprintf(v.name, sizeof(v.name), "/r");
    v.type = XFER_TYPE_RECORD;
    v.ndims = 1;
    v.dims[0] = 4;
    CHECK(ops->write(h, 0, &v, start, count, NULL) == XFER_ERR_INVALID_ARG &&
              strstr(xfer_adapter_error(), "/r: invalid type or shape (a record without its "
                                           "fields)"),
          "a record without fields: %s", xfer_adapter_error());
    v.record = rec;
    OK(ops->write(h, 0, &v, start, count, NULL)); /* every rank writes nothing: still valid */
    OK(ops->end_step(h, 0));
    other = subset_record(2, two);
    v.record = other;
    CHECK(ops->write(h, 1, &v, start, count, NULL) == XFER_ERR_MISMATCH &&
              strstr(xfer_adapter_error(), "/r: type differs from step 0"),
          "a record that changes: %s", xfer_adapter_error());
    xfer_adapter_record_free(&other);
    ops->abort(&h); /* keeps step 0 */
}

/* The XDMF side-car of the step-dimension output: T shown, the records named in a comment. */
static void check_xdmf(const char *dir)
{
    char path[1024], text[16384];
    size_t len;
    FILE *f;
    if (rank != 0)
        return;
    snprintf(path, sizeof(path), "%s/stepdim.xmf", dir);
    CHECK((f = fopen(path, "r")) != NULL, "%s missing", path);
    len = fread(text, 1, sizeof(text) - 1, f);
    text[len] = '\0';
    fclose(f);
    CHECK(strstr(text, "<Attribute Name=\"T\"") != NULL, "T is not shown");
    CHECK(strstr(text, "<Attribute Name=\"cells\"") == NULL &&
              strstr(text, "<Attribute Name=\"particles\"") == NULL,
          "a record is shown as an attribute");
    CHECK(strstr(text, "<!-- /grid/cells: a record (HDF5 compound type), not shown: XDMF cannot "
                       "address the fields of a compound; read them from stepdim.h5 -->") &&
              strstr(text, "<!-- /swarm/particles: a record (HDF5 compound type), not shown"),
          "the records are not named in a comment");
}

int main(int argc, char **argv)
{
    xfer_record_t *rec;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 2) {
        fprintf(stderr, "usage: h5records DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    rec = particle_record();
    layout_roundtrip(argv[1], XFER_ADAPTER_SAME_PATHS, "same", 1, rec);
    layout_roundtrip(argv[1], XFER_ADAPTER_GROUP_PER_STEP, "group", 2, rec);
    layout_roundtrip(argv[1], XFER_ADAPTER_STEP_DIM, "stepdim", 3, rec);
    check_xdmf(argv[1]);
    foreign_file(argv[1], rec);
    write_refusals(argv[1], rec);
    xfer_adapter_record_free(&rec);
    MPI_Allreduce(MPI_IN_PLACE, &checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("h5records: %d checks passed on %d rank(s)\n", checks, nranks);
    MPI_Finalize();
    return 0;
}
