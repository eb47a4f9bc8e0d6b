/* SPDX-License-Identifier: BSD-3-Clause */
/* nc_records: records (XFER_TYPE_RECORD) through the netCDF adapter's own API, on every rank of
 * MPI_COMM_WORLD (1 or 2: writes are funnelled to rank 0, each rank gives its slab):
 *
 *  - each layout (same, a step dimension, a group per step) writes a 1-D and a 2-D record
 *    variable, {id: int64, pos: [float64, 3], q: float32, kind: int8} laid out as the C struct
 *    below (padding filled with garbage), as a netCDF-4 compound type "<var>_t"; the root-group
 *    layouts are read back with vars()/read() and read_record() (another layout), the group
 *    layout with the library (the adapter reads the root group only), field by field;
 *  - a file whose compound has the fields in another order, packed: vars() reports the layout
 *    netCDF reads into, read_record() with the struct's record reads every field right;
 *  - refusals: a field the file lacks, a record that changes between steps, a compound with a
 *    2-D array field and a variable-length type (skipped with their reasons).
 *
 *   nc_records DIR           (DIR/same.nc is left for ncdump)
 *   nc_records --input FILE  one rank: an input for xfer-ncstream, written with the library (the
 *                            ncgen of netCDF 4.9.0 writes wrong data after the first element of
 *                            a compound variable): particles(n) of the struct below, its
 *                            compound named particles_t, an attribute, and T(n, m) float64
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <netcdf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/adapter.h>
#include <xfer/adapter_netcdf.h>

#include "adapter_common.h"

typedef struct particle {
    int64_t id;
    double pos[3];
    float q;
    int8_t kind;
} particle_t;

#define N1   13 /* elements of particles */
#define ROWS 6  /* cells: ROWS x COLS */
#define COLS 5

static int rank, nranks, checks;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "nc_records: rank %d: %s:%d: %s: ", rank, __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " [adapter: %s]\n", xfer_adapter_error());                             \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#define OK(call) CHECK((call) == XFER_SUCCESS, "%s", #call)
#define NC(call) CHECK((call) == NC_NOERR, "%s", #call)

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

/* A record of the fields @p names of particle_t, in that order, laid out by libxfer. */
static xfer_record_t *record_of(int n, const char *const *names)
{
    xfer_record_t *r = xfer_adapter_record_new(n);
    int i;
    CHECK(r != NULL, "out of memory");
    for (i = 0; i < n; i++) {
        const char *f = names[i];
        r->fields[i].name = strdup(f);
        r->fields[i].type = !strcmp(f, "id")    ? XFER_TYPE_INT64
                            : !strcmp(f, "pos") ? XFER_TYPE_FLOAT64
                            : !strcmp(f, "q")   ? XFER_TYPE_FLOAT32
                                                : XFER_TYPE_INT8;
        r->fields[i].count = !strcmp(f, "pos") ? 3 : 1;
    }
    OK(xfer_record_layout(r));
    return r;
}

static xfer_record_t *particle_record(void)
{
    static const char *const names[4] = {"id", "pos", "q", "kind"};
    xfer_record_t *r = record_of(4, names);
    CHECK(r->size == sizeof(particle_t) && r->fields[1].offset == offsetof(particle_t, pos) &&
              r->fields[2].offset == offsetof(particle_t, q) &&
              r->fields[3].offset == offsetof(particle_t, kind),
          "xfer_record_layout differs from the C struct");
    return r;
}

static int var_index(int n, const xfer_adapter_var_t *vars, const char *name)
{
    int i;
    for (i = 0; i < n && strcmp(vars[i].name, name) != 0; i++)
        ;
    CHECK(i < n, "no variable %s", name);
    return i;
}

static void my_slab(uint64_t rows, uint64_t cols, uint64_t *start, uint64_t *count)
{
    xfer_adapter_split(rows, nranks, rank, &start[0], &count[0]);
    start[1] = 0;
    count[1] = cols;
}

static xfer_status_t write_step(void *h, uint64_t s, const xfer_record_t *rec)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_netcdf();
    xfer_adapter_var_t v;
    uint64_t start[2], count[2], i;
    particle_t buf[ROWS * COLS + N1];
    double t[ROWS * COLS];
    xfer_status_t st;
    memset(&v, 0, sizeof(v));
    snprintf(v.name, sizeof(v.name), "particles");
    v.type = XFER_TYPE_RECORD;
    v.record = rec;
    v.ndims = 1;
    v.dims[0] = N1;
    my_slab(N1, 0, start, count);
    for (i = 0; i < count[0]; i++)
        buf[i] = value((int64_t) (start[0] + i), s);
    if ((st = ops->write(h, s, &v, start, count, buf)) != XFER_SUCCESS)
        return st;
    snprintf(v.name, sizeof(v.name), "cells");
    v.ndims = 2;
    v.dims[0] = ROWS;
    v.dims[1] = COLS;
    my_slab(ROWS, COLS, start, count);
    for (i = 0; i < count[0] * COLS; i++)
        buf[i] = value((int64_t) (start[0] * COLS + i), s);
    if ((st = ops->write(h, s, &v, start, count, buf)) != XFER_SUCCESS)
        return st;
    snprintf(v.name, sizeof(v.name), "T");
    v.type = XFER_TYPE_FLOAT64;
    v.record = NULL;
    for (i = 0; i < count[0] * COLS; i++)
        t[i] = (double) (start[0] * COLS + i) + 0.5 * (double) s;
    return ops->write(h, s, &v, start, count, t);
}

static void write_file(const char *path, xfer_adapter_layout_t layout, uint64_t nsteps,
                       const xfer_record_t *rec)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_netcdf();
    xfer_adapter_wopts_t o;
    void *h = NULL;
    uint64_t s;
    memset(&o, 0, sizeof(o));
    o.layout = layout;
    OK(ops->create(path, MPI_COMM_WORLD, &o, &h));
    for (s = 0; s < nsteps; s++) {
        OK(write_step(h, s, rec));
        OK(ops->end_step(h, s));
    }
    OK(ops->commit(&h));
}

/* Same paths or a step dimension: read back through the adapter, every step. */
static void read_back(const char *path, int lead, uint64_t nsteps, const xfer_record_t *rec)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_netcdf();
    const xfer_adapter_var_t *vars;
    static const char *const sub[2] = {"kind", "id"};
    xfer_record_t *as = record_of(2, sub);
    particle_t buf[ROWS * COLS + N1];
    uint64_t start[3], count[3], s;
    char why[256];
    void *h = NULL;
    int n, k;
    OK(ops->open_read(path, MPI_COMM_WORLD, &h));
    OK(ops->vars(h, &n, &vars));
    for (s = 0; s < nsteps; s++)
        for (k = 0; k < 2; k++) {
            const char *name = k == 0 ? "particles" : "cells";
            const uint64_t rows = k == 0 ? N1 : ROWS, cols = k == 0 ? 1 : COLS;
            const int idx = var_index(n, vars, name);
            const xfer_adapter_var_t *v = &vars[idx];
            CHECK(v->type == XFER_TYPE_RECORD && v->record, "%s: not a record", name);
            CHECK(xfer_adapter_record_diff(v->record, rec, why, sizeof(why)) == 0,
                  "%s: the file's record differs from the one written: %s", name, why);
            CHECK(v->ndims == lead + 1 + k && (!lead || v->dims[0] == nsteps) &&
                      v->dims[lead] == rows,
                  "%s: shape", name);
            start[0] = s;
            count[0] = 1;
            my_slab(rows, cols, start + lead, count + lead);
            memset(buf, 0x5A, sizeof(buf));
            OK(ops->read(h, idx, start, count, buf));
            compare(v->record, buf, (size_t) (count[lead] * cols), (int64_t) (start[lead] * cols),
                    s, name);
            memset(buf, 0x5A, sizeof(buf));
            OK(ops->read_record(h, idx, as, start, count, buf));
            compare(as, buf, (size_t) (count[lead] * cols), (int64_t) (start[lead] * cols), s,
                    name);
        }
    OK(ops->close_read(&h));
    xfer_adapter_record_free(&as);
}

/* A group per step: the library reads step_00000S/particles and /cells into the struct. */
static void read_groups(const char *path, uint64_t nsteps)
{
    particle_t buf[ROWS * COLS];
    int nc, grp, var, k;
    uint64_t s;
    if (rank != 0)
        return;
    NC(nc_open(path, NC_NOWRITE, &nc));
    for (s = 0; s < nsteps; s++) {
        char g[32];
        snprintf(g, sizeof(g), "step_%06llu", (unsigned long long) s);
        NC(nc_inq_grp_ncid(nc, g, &grp));
        for (k = 0; k < 2; k++) {
            xfer_record_t *rec = particle_record();
            NC(nc_inq_varid(grp, k == 0 ? "particles" : "cells", &var));
            memset(buf, 0x5A, sizeof(buf));
            NC(nc_get_var(grp, var, buf));
            compare(rec, buf, k == 0 ? N1 : ROWS * COLS, 0, s, g);
            xfer_adapter_record_free(&rec);
        }
    }
    NC(nc_close(nc));
}

/* Rank 0, plain netCDF: "reordered", step 3's particles in a compound of kind, q, pos, id,
 * packed; "flat", a compound with a 2-D array field; "ragged", a variable-length type. */
static void write_foreign(const char *path)
{
    const size_t packed = 1 + 4 + 24 + 8;
    unsigned char raw[37 * N1];
    int nc, tid, dim, var, three = 3, twobytwo[2] = {2, 2};
    nc_type ft, vt;
    size_t i;
    for (i = 0; i < N1; i++) {
        const particle_t p = value((int64_t) i, 3);
        memcpy(raw + i * packed, &p.kind, 1);
        memcpy(raw + i * packed + 1, &p.q, 4);
        memcpy(raw + i * packed + 5, p.pos, 24);
        memcpy(raw + i * packed + 29, &p.id, 8);
    }
    NC(nc_create(path, NC_NETCDF4 | NC_CLOBBER, &nc));
    NC(nc_def_compound(nc, packed, "shuffled_t", &tid));
    NC(nc_insert_compound(nc, tid, "kind", 0, NC_BYTE));
    NC(nc_insert_compound(nc, tid, "q", 1, NC_FLOAT));
    NC(nc_insert_array_compound(nc, tid, "pos", 5, NC_DOUBLE, 1, &three));
    NC(nc_insert_compound(nc, tid, "id", 29, NC_INT64));
    NC(nc_def_dim(nc, "n", N1, &dim));
    NC(nc_def_var(nc, "reordered", tid, 1, &dim, &var));
    NC(nc_def_compound(nc, 32, "flat_t", &ft));
    NC(nc_insert_array_compound(nc, ft, "m", 0, NC_DOUBLE, 2, twobytwo));
    NC(nc_def_var(nc, "flat", ft, 1, &dim, &var));
    NC(nc_def_vlen(nc, "ragged_t", NC_INT, &vt));
    NC(nc_def_var(nc, "ragged", vt, 1, &dim, &var));
    NC(nc_inq_varid(nc, "reordered", &var));
    NC(nc_put_var(nc, var, raw));
    NC(nc_close(nc));
}

static void foreign_file(const char *dir, const xfer_record_t *rec)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_netcdf();
    const xfer_adapter_var_t *vars;
    static const char *const order[4] = {"kind", "q", "pos", "id"};
    xfer_record_t *native = record_of(4, order), *bad;
    particle_t buf[N1];
    uint64_t start[1], count[1];
    char path[1024], why[256];
    const char *notes;
    void *h = NULL;
    int n, idx;
    snprintf(path, sizeof(path), "%s/foreign.nc", dir);
    if (rank == 0)
        write_foreign(path);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(ops->open_read(path, MPI_COMM_WORLD, &h));
    OK(ops->vars(h, &n, &vars));
    idx = var_index(n, vars, "reordered");
    CHECK(vars[idx].type == XFER_TYPE_RECORD &&
              xfer_adapter_record_diff(vars[idx].record, native, why, sizeof(why)) == 0,
          "reordered: not the fields' native layout in field order: %s", why);
    xfer_adapter_split(N1, nranks, rank, &start[0], &count[0]);
    memset(buf, 0x5A, sizeof(buf));
    OK(ops->read(h, idx, start, count, buf));
    compare(vars[idx].record, buf, (size_t) count[0], (int64_t) start[0], 3, "reordered (own)");
    memset(buf, 0x5A, sizeof(buf));
    OK(ops->read_record(h, idx, rec, start, count, buf));
    compare(rec, buf, (size_t) count[0], (int64_t) start[0], 3, "reordered (as the struct)");
    bad = particle_record();
    free(bad->fields[0].name);
    bad->fields[0].name = strdup("serial");
    CHECK(ops->read_record(h, idx, bad, start, count, buf) == XFER_ERR_MISMATCH &&
              strstr(xfer_adapter_error(), "variable \"reordered\": cannot read its records as the "
                                           "caller's: field serial is not in the file's record"),
          "a field the file lacks: %s", xfer_adapter_error());
    xfer_adapter_record_free(&bad);
    notes = xfer_netcdf_notes(h);
    CHECK(strstr(notes, "variable \"flat\" skipped: compound flat_t: field m of type NC_DOUBLE, "
                        "a multi-dimensional array is not supported") != NULL,
          "no note for flat: %s", notes);
    CHECK(strstr(notes, "variable \"ragged\" skipped: type ragged_t (variable-length) is not "
                        "supported") != NULL,
          "no note for ragged: %s", notes);
    CHECK(ops->lookup(h, "flat") == XFER_ERR_NOT_SUPPORTED, "lookup(flat)");
    OK(ops->close_read(&h));
    xfer_adapter_record_free(&native);
}

/* A record variable whose record changes between steps: refused, on every rank. */
static void changed_record(const char *dir, const xfer_record_t *rec)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_netcdf();
    static const char *const two[2] = {"id", "q"};
    xfer_record_t *other = record_of(2, two);
    xfer_adapter_wopts_t o;
    xfer_adapter_var_t v;
    uint64_t start[1] = {0}, count[1] = {0};
    char path[1024];
    void *h = NULL;
    memset(&o, 0, sizeof(o));
    o.layout = XFER_ADAPTER_STEP_DIM;
    snprintf(path, sizeof(path), "%s/changed.nc", dir);
    OK(ops->create(path, MPI_COMM_WORLD, &o, &h));
    memset(&v, 0, sizeof(v));
    snprintf(v.name, sizeof(v.name), "r");
    v.type = XFER_TYPE_RECORD;
    v.record = rec;
    v.ndims = 1;
    v.dims[0] = 4;
    OK(ops->write(h, 0, &v, start, count, NULL));
    OK(ops->end_step(h, 0));
    v.record = other;
    CHECK(ops->write(h, 1, &v, start, count, NULL) == XFER_ERR_MISMATCH &&
              strstr(xfer_adapter_error(), "variable \"r\" changed its record at step 1 (this "
                                           "write's, the file's): record size 16 here, 40 there"),
          "a record that changes: %s", xfer_adapter_error());
    ops->abort(&h);
    xfer_adapter_record_free(&other);
}

/* The xfer-ncstream input (see the usage above). */
static void write_input(const char *path)
{
    particle_t p[7];
    double t[7 * 3];
    int nc, tid, dims[2], var, three = 3, i;
    for (i = 0; i < 7; i++)
        p[i] = value(i * 11 - 20, 0);
    for (i = 0; i < 21; i++)
        t[i] = i * 0.5;
    NC(nc_create(path, NC_NETCDF4 | NC_CLOBBER, &nc));
    NC(nc_def_compound(nc, sizeof(particle_t), "particles_t", &tid));
    NC(nc_insert_compound(nc, tid, "id", offsetof(particle_t, id), NC_INT64));
    NC(nc_insert_array_compound(nc, tid, "pos", offsetof(particle_t, pos), NC_DOUBLE, 1, &three));
    NC(nc_insert_compound(nc, tid, "q", offsetof(particle_t, q), NC_FLOAT));
    NC(nc_insert_compound(nc, tid, "kind", offsetof(particle_t, kind), NC_BYTE));
    NC(nc_def_dim(nc, "n", 7, &dims[0]));
    NC(nc_def_dim(nc, "m", 3, &dims[1]));
    NC(nc_def_var(nc, "particles", tid, 1, dims, &var));
    NC(nc_put_att_text(nc, var, "long_name", 16, "tracer particles"));
    NC(nc_put_var(nc, var, p));
    NC(nc_def_var(nc, "T", NC_DOUBLE, 2, dims, &var));
    NC(nc_put_var(nc, var, t));
    NC(nc_close(nc));
}

int main(int argc, char **argv)
{
    xfer_record_t *rec;
    char path[1024];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc == 3 && !strcmp(argv[1], "--input")) {
        write_input(argv[2]);
        MPI_Finalize();
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: nc_records DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    rec = particle_record();
    snprintf(path, sizeof(path), "%s/same.nc", argv[1]);
    write_file(path, XFER_ADAPTER_SAME_PATHS, 1, rec);
    read_back(path, 0, 1, rec);
    snprintf(path, sizeof(path), "%s/stepdim.nc", argv[1]);
    write_file(path, XFER_ADAPTER_STEP_DIM, 3, rec);
    read_back(path, 1, 3, rec);
    snprintf(path, sizeof(path), "%s/group.nc", argv[1]);
    write_file(path, XFER_ADAPTER_GROUP_PER_STEP, 2, rec);
    read_groups(path, 2);
    foreign_file(argv[1], rec);
    changed_record(argv[1], rec);
    xfer_adapter_record_free(&rec);
    MPI_Allreduce(MPI_IN_PLACE, &checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("nc_records: %d checks passed on %d rank(s)\n", checks, nranks);
    MPI_Finalize();
    return 0;
}
