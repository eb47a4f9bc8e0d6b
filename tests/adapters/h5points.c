/* SPDX-License-Identifier: BSD-3-Clause */
/* h5points: joined datasets (xfer_adapter_var_t.joined: a step's rows, their number changing)
 * through the HDF5 adapter's API on every rank of MPI_COMM_WORLD, in the group-per-step layout
 * (chunked), and their XDMF description (docs/adapters.md, "XDMF for joined datasets").
 * DIR/points.h5 holds 4 steps; rank r puts rows(s, r) rows of each joined dataset in step s
 * (none at all in step 1, none on rank 1 in step 3), global row g holding the values below
 * (xdmf_points.py computes the same):
 *
 *   /swarm/particles {id: int64, pos: [float64, 3], q: float32, kind: int8}   XYZ from pos
 *   /swarm/tags      {id: int64, w: float32}                                  no geometry
 *   /flat/points     {x: float32, y: float32, t: int32, vel: [float32, 2]}    XY from x, y
 *   /cloud/xyz       float32 [joined, 3]                                      XYZ itself
 *   /cloud/ids       int64 [joined], the rows of /cloud/xyz                   its attribute
 *   /cloud/mass      float64 [joined], one row more on rank 0 in step 2       no grid
 *   /odd/pts         {pos: [float64, 2]}, from step 2 {pos: [float32, 2]}     changed: no grid
 *   /cloud/grid      int32 [4, 5], not joined                                 not described
 *
 * Here: the writes, a joined dataset refused by the step-dimension layout (nothing kept), a
 * group-per-step file without joined datasets gets no .xmf, and points.h5 read back with
 * vars() lists no copy nor the vertex list (the adapter's, skipped). xdmf_points.py checks the
 * .xmf against the file and the values.
 *
 *   h5points DIR
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfer/adapter.h>

#include "adapter_common.h"

#define NSTEPS 4

typedef struct particle {
    int64_t id;
    double pos[3];
    float q;
    int8_t kind;
} particle_t;

typedef struct tag {
    int64_t id;
    float w;
} tag_t;

typedef struct flat {
    float x, y;
    int32_t t;
    float vel[2];
} flat_t;

static int rank, nranks, checks;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "h5points: rank %d: %s:%d: %s: ", rank, __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " [adapter: %s]\n", xfer_adapter_error());                             \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#define OK(call) CHECK((call) == XFER_SUCCESS, "%s", #call)

/* Rank @p r's rows in step @p s (xdmf_points.py: rows()). */
static uint64_t rows(uint64_t s, int r)
{
    if (s == 1 || (s == 3 && r == 1))
        return 0;
    return (5 * s + 3 * (uint64_t) r + 2) % 7;
}

/* The step's rows on ranks before @p r, and on all. */
static uint64_t first_row(uint64_t s, int r)
{
    uint64_t n = 0;
    int k;
    for (k = 0; k < r; k++)
        n += rows(s, k);
    return n;
}

/* A record of @p n fields laid out by libxfer as a workflow file's would be. */
static xfer_record_t *record(int n, const char *const *names, const xfer_type_t *types,
                             const uint32_t *counts, size_t size)
{
    xfer_record_t *r = xfer_adapter_record_new(n);
    int i;
    CHECK(r != NULL, "out of memory");
    for (i = 0; i < n; i++) {
        r->fields[i].name = strdup(names[i]);
        r->fields[i].type = types[i];
        r->fields[i].count = counts[i];
    }
    OK(xfer_record_layout(r));
    CHECK(r->size == size, "record of %zu bytes, the C struct %zu", r->size, size);
    return r;
}

/* Write this rank's @p n rows (of @p total, from @p first) of joined dataset @p name. */
static xfer_status_t put(void *h, uint64_t s, const char *name, xfer_type_t type,
                         const xfer_record_t *rec, int ndims, uint64_t width, uint64_t total,
                         uint64_t first, uint64_t n, const void *buf)
{
    xfer_adapter_var_t v;
    uint64_t start[2] = {first, 0}, count[2] = {n, width};
    memset(&v, 0, sizeof(v));
    snprintf(v.name, sizeof(v.name), "%s", name);
    v.type = type;
    v.record = rec;
    v.ndims = ndims;
    v.dims[0] = total;
    v.dims[1] = width;
    v.joined = 1;
    return xfer_adapter_hdf5()->write(h, s, &v, start, count, buf);
}

static void write_points(const char *dir)
{
    static const char *const pn[] = {"id", "pos", "q", "kind"}, *const tn[] = {"id", "w"};
    static const char *const fn[] = {"x", "y", "t", "vel"}, *const on[] = {"pos"};
    static const xfer_type_t pt[] = {XFER_TYPE_INT64, XFER_TYPE_FLOAT64, XFER_TYPE_FLOAT32,
                                     XFER_TYPE_INT8};
    static const xfer_type_t tt[] = {XFER_TYPE_INT64, XFER_TYPE_FLOAT32};
    static const xfer_type_t ft[] = {XFER_TYPE_FLOAT32, XFER_TYPE_FLOAT32, XFER_TYPE_INT32,
                                     XFER_TYPE_FLOAT32};
    static const xfer_type_t o64[] = {XFER_TYPE_FLOAT64}, o32[] = {XFER_TYPE_FLOAT32};
    static const uint32_t pc[] = {1, 3, 1, 1}, tc[] = {1, 1}, fc[] = {1, 1, 1, 2}, oc[] = {2};
    const xfer_adapter_ops_t *ops = xfer_adapter_hdf5();
    xfer_record_t *prec = record(4, pn, pt, pc, sizeof(particle_t));
    xfer_record_t *trec = record(2, tn, tt, tc, sizeof(tag_t));
    xfer_record_t *frec = record(4, fn, ft, fc, sizeof(flat_t));
    xfer_record_t *orec64 = record(1, on, o64, oc, 2 * sizeof(double));
    xfer_record_t *orec32 = record(1, on, o32, oc, 2 * sizeof(float));
    xfer_adapter_wopts_t o;
    char path[1024];
    void *h = NULL;
    uint64_t s, i;
    memset(&o, 0, sizeof(o));
    o.layout = XFER_ADAPTER_GROUP_PER_STEP;
    o.chunked = 1; /* a step without rows is written contiguous all the same */
    snprintf(path, sizeof(path), "%s/points.h5", dir);
    OK(ops->create(path, MPI_COMM_WORLD, &o, &h));
    for (s = 0; s < NSTEPS; s++) {
        const uint64_t n = rows(s, rank), first = first_row(s, rank);
        const uint64_t total = first_row(s, nranks), mextra = s == 2 && rank == 0;
        particle_t *p = calloc(n + 1, sizeof(*p));
        tag_t *t = calloc(n + 1, sizeof(*t));
        flat_t *f = calloc(n + 1, sizeof(*f));
        float *xyz = calloc(3 * n + 1, sizeof(float));
        int64_t *ids = calloc(n + 1, sizeof(int64_t));
        double *mass = calloc(n + 2, sizeof(double)), *o64v = calloc(2 * n + 1, sizeof(double));
        float *o32v = calloc(2 * n + 1, sizeof(float));
        int32_t grid[20];
        uint64_t gstart[2] = {0, 0}, gcount[2] = {0, 5};
        xfer_adapter_var_t gv;
        CHECK(p && t && f && xyz && ids && mass && o64v && o32v, "out of memory");
        for (i = 0; i < n; i++) {
            const int64_t g = (int64_t) (first + i), id = 1000 * (int64_t) s + g;
            const double dg = (double) g;
            memset(&p[i], 0xA5, sizeof(p[i])); /* padding: garbage */
            p[i].id = id;
            p[i].pos[0] = dg + 0.25;
            p[i].pos[1] = -dg;
            p[i].pos[2] = 0.5 * (double) s;
            p[i].q = (float) g / 3.0f + (float) s;
            p[i].kind = (int8_t) (g * 7 - (int64_t) s);
            t[i].id = id;
            t[i].w = 0.5f * (float) g;
            f[i].x = (float) g + 0.5f;
            f[i].y = (float) s - (float) g;
            f[i].t = (int32_t) (g * (int64_t) s);
            f[i].vel[0] = (float) g;
            f[i].vel[1] = -(float) s;
            xyz[3 * i] = (float) g;
            xyz[3 * i + 1] = 2.0f * (float) g;
            xyz[3 * i + 2] = (float) s + 0.125f;
            ids[i] = id;
            mass[i] = 1.5 * dg;
            o64v[2 * i] = o32v[2 * i] = (float) g;
            o64v[2 * i + 1] = o32v[2 * i + 1] = (float) s;
        }
        mass[n] = -1.0; /* rank 0, step 2: one row more than /cloud/xyz */
        OK(ops->set_time(h, s, 0.5 * (double) (s + 1)));
        OK(put(h, s, "/swarm/particles", XFER_TYPE_RECORD, prec, 1, 0, total, first, n, p));
        OK(put(h, s, "/swarm/tags", XFER_TYPE_RECORD, trec, 1, 0, total, first, n, t));
        OK(put(h, s, "/flat/points", XFER_TYPE_RECORD, frec, 1, 0, total, first, n, f));
        OK(put(h, s, "/cloud/xyz", XFER_TYPE_FLOAT32, NULL, 2, 3, total, first, n, xyz));
        OK(put(h, s, "/cloud/ids", XFER_TYPE_INT64, NULL, 1, 0, total, first, n, ids));
        OK(put(h, s, "/cloud/mass", XFER_TYPE_FLOAT64, NULL, 1, 0, total + (s == 2),
               first + (s == 2 && rank > 0), n + mextra, mass));
        if (s < 2)
            OK(put(h, s, "/odd/pts", XFER_TYPE_RECORD, orec64, 1, 0, total, first, n, o64v));
        else
            OK(put(h, s, "/odd/pts", XFER_TYPE_RECORD, orec32, 1, 0, total, first, n, o32v));
        memset(&gv, 0, sizeof(gv)); /* not joined: rank 0 writes it all */
        snprintf(gv.name, sizeof(gv.name), "/cloud/grid");
        gv.type = XFER_TYPE_INT32;
        gv.ndims = 2;
        gv.dims[0] = 4;
        gv.dims[1] = 5;
        gcount[0] = rank == 0 ? 4 : 0;
        for (i = 0; i < 20; i++)
            grid[i] = (int32_t) (100 * s + i);
        OK(ops->write(h, s, &gv, gstart, gcount, grid));
        OK(ops->end_step(h, s));
        free(p);
        free(t);
        free(f);
        free(xyz);
        free(ids);
        free(mass);
        free(o64v);
        free(o32v);
    }
    OK(ops->commit(&h));
    xfer_adapter_record_free(&prec);
    xfer_adapter_record_free(&trec);
    xfer_adapter_record_free(&frec);
    xfer_adapter_record_free(&orec64);
    xfer_adapter_record_free(&orec32);
}

/* A joined dataset cannot have a step dimension: refused, and nothing is kept. */
static void stepdim_refused(const char *dir)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_hdf5();
    xfer_adapter_wopts_t o;
    char path[1024];
    float xyz[3] = {1, 2, 3};
    void *h = NULL;
    memset(&o, 0, sizeof(o));
    o.layout = XFER_ADAPTER_STEP_DIM;
    snprintf(path, sizeof(path), "%s/stepdim.h5", dir);
    OK(ops->create(path, MPI_COMM_WORLD, &o, &h));
    CHECK(put(h, 0, "/cloud/xyz", XFER_TYPE_FLOAT32, NULL, 2, 3, (uint64_t) nranks, (uint64_t) rank,
              1, xyz) == XFER_ERR_NOT_SUPPORTED,
          "a joined dataset written with a step dimension");
    CHECK(strstr(xfer_adapter_error(), "/cloud/xyz: a joined dataset (its rows change from step "
                                       "to step) cannot have a step dimension: write it with a "
                                       "group per step"),
          "the refusal says why");
    ops->abort(&h);
    CHECK(access(path, F_OK) != 0, "%s kept after a refused first step", path);
}

/* A group per step without joined datasets: no .xmf, as before. */
static void plain_group(const char *dir)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_hdf5();
    xfer_adapter_wopts_t o;
    xfer_adapter_var_t v;
    char path[1024], xmf[1024];
    double x[4] = {1, 2, 3, 4};
    uint64_t start = 0, count = rank == 0 ? 4 : 0, s;
    void *h = NULL;
    memset(&o, 0, sizeof(o));
    memset(&v, 0, sizeof(v));
    o.layout = XFER_ADAPTER_GROUP_PER_STEP;
    snprintf(v.name, sizeof(v.name), "/x");
    v.type = XFER_TYPE_FLOAT64;
    v.ndims = 1;
    v.dims[0] = 4;
    snprintf(path, sizeof(path), "%s/plain.h5", dir);
    snprintf(xmf, sizeof(xmf), "%s/plain.xmf", dir);
    OK(ops->create(path, MPI_COMM_WORLD, &o, &h));
    for (s = 0; s < 2; s++) {
        OK(ops->write(h, s, &v, &start, &count, x));
        OK(ops->end_step(h, s));
    }
    OK(ops->commit(&h));
    CHECK(access(path, F_OK) == 0 && access(xmf, F_OK) != 0, "%s written, or %s missing", xmf,
          path);
}

/* points.h5 as a producer sees it: the datasets written, none of the copies. */
static void read_back(const char *dir)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_hdf5();
    const xfer_adapter_var_t *vars;
    const char *const *lines;
    char path[1024];
    void *h = NULL;
    int n, i, copies = 0;
    snprintf(path, sizeof(path), "%s/points.h5", dir);
    OK(ops->open_read(path, MPI_COMM_WORLD, &h));
    OK(ops->vars(h, &n, &vars));
    for (i = 0; i < n; i++)
        CHECK(!strstr(vars[i].name, ".xdmf/") && strcmp(vars[i].name, "/xfer_xdmf_vertices"),
              "%s listed as a variable", vars[i].name);
    OK(ops->skipped(h, &n, &lines));
    for (i = 0; i < n; i++)
        copies += strstr(lines[i], ".xdmf/") && strstr(lines[i], "fields copied for XDMF");
    /* each step: pos, id, q, kind of /swarm/particles, x,y, t, vel of /flat/points; /odd/pts: pos
     * until its record changed */
    CHECK(copies == NSTEPS * 7 + 2, "%d copies skipped, expected %d", copies, NSTEPS * 7 + 2);
    OK(ops->close_read(&h));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 2) {
        fprintf(stderr, "usage: h5points DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    write_points(argv[1]);
    stepdim_refused(argv[1]);
    plain_group(argv[1]);
    read_back(argv[1]);
    MPI_Allreduce(MPI_IN_PLACE, &checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("h5points: %d checks passed on %d rank(s)\n", checks, nranks);
    MPI_Finalize();
    return 0;
}
