/* SPDX-License-Identifier: BSD-3-Clause */
/* h5gen: input files for the xfer-h5stream tests, and a checker for outputs h5diff cannot
 * compare directly (a step dimension, steps kept after a failure). Serial HDF5 calls only.
 *
 *   h5gen input FILE [--perturb | --perturb-attr | --only a,b]
 *                                   datasets of 1..3 dimensions and ten types, in a group
 *                                   hierarchy, with numeric and string attributes; --perturb
 *                                   changes one element of /fields/U, --perturb-attr the root
 *                                   attribute "version" (negative controls); --only keeps the
 *                                   listed datasets (paths or xfer-h5stream names)
 *   h5gen bad FILE                  the same plus a compound with a string member (no record)
 *                                   and a string dataset
 *   h5gen records FILE [--perturb]  compound datasets (records): the C struct's layout, and
 *                                   another member order, packed, partly big-endian
 *   h5gen check OUT IN --layout group|stepdim --steps N
 *                                   every dataset of IN is in OUT in each of N steps, equal;
 *                                   the step counter says N; no step N
 *   h5gen big FILE MIB              MIB MiB of contiguous data for the xfer-h5stream benchmark
 *                                   (bench/h5stream-bench.sh): /data/{T f64 2-D: 1/2, U f32
 *                                   3-D: 1/4, N i32 2-D: 1/8, B u8 1-D: 1/8}, with attributes
 */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if ((x) < 0) {                                                                             \
            fprintf(stderr, "h5gen: %s:%d: %s failed\n", __FILE__, __LINE__, #x);                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void attr_str(hid_t loc, const char *name, const char *val, int variable)
{
    hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a;
    CHECK(t);
    CHECK(H5Tset_size(t, variable ? H5T_VARIABLE : strlen(val) + 1));
    CHECK(a = H5Acreate2(loc, name, t, s, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Awrite(a, t, variable ? (const void *) &val : (const void *) val));
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
}

static void attr_num(hid_t loc, const char *name, hid_t type, int nd, const hsize_t *dims,
                     const void *val)
{
    hid_t s = nd ? H5Screate_simple(nd, dims, NULL) : H5Screate(H5S_SCALAR), a;
    CHECK(a = H5Acreate2(loc, name, type, s, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Awrite(a, type, val));
    H5Aclose(a);
    H5Sclose(s);
}

/* Element @p i of @p buf, of @p es bytes (floating point when @p fl), from the value @p v:
 * v / 3 for floats, v wrapped by the integer type (64-bit ones: v * 1000003). */
static void put_value(unsigned char *buf, hsize_t i, size_t es, int fl, long long v)
{
    if (fl && es == 4)
        ((float *) buf)[i] = (float) v / 3.0f;
    else if (fl)
        ((double *) buf)[i] = (double) v / 3.0;
    else if (es == 1)
        buf[i] = (unsigned char) v;
    else if (es == 2)
        ((short *) buf)[i] = (short) v;
    else if (es == 4)
        ((int *) buf)[i] = (int) v;
    else
        ((long long *) buf)[i] = v * 1000003LL;
}

/* A dataset of @p type filled with a pattern (element i: i * 7 + seed, wrapped by the type). */
static hid_t dataset(hid_t loc, const char *name, hid_t type, int nd, const hsize_t *dims,
                     int chunked, int seed, int perturb)
{
    hsize_t n = 1, i, chunk[3];
    const size_t es = H5Tget_size(type);
    const int fl = H5Tget_class(type) == H5T_FLOAT;
    hid_t s = H5Screate_simple(nd, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;
    unsigned char *buf;
    int k;
    for (k = 0; k < nd; k++) {
        n *= dims[k];
        chunk[k] = dims[k] > 2 ? dims[k] / 2 : dims[k];
    }
    if (chunked)
        CHECK(H5Pset_chunk(dcpl, nd, chunk));
    buf = malloc(n * es);
    for (i = 0; i < n; i++) {
        long long v = (long long) i * 7 + seed - (long long) n;
        if (perturb && i == n / 2)
            v += 1;
        put_value(buf, i, es, fl, v);
    }
    CHECK(d = H5Dcreate2(loc, name, type, s, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    free(buf);
    H5Pclose(dcpl);
    H5Sclose(s);
    return d;
}

static int make_input(const char *path, int perturb, int bad, int perturb_attr)
{
    hid_t f, g, sub, ints, empty, d;
    const hsize_t d1[1] = {37}, d2[2] = {13, 9}, d3[3] = {5, 4, 3}, d3b[3] = {7, 3, 2};
    const hsize_t a2[2] = {2, 3}, r2[1] = {2};
    const double mat[6] = {1, 2, 3, 4, 5, 6.5};
    const long long version = perturb_attr ? 8 : 7;
    const int range[2] = {0, 100};
    const double scale = 2.5;
    CHECK(f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    attr_str(f, "title", "xfer-h5stream test input", 0);
    attr_num(f, "version", H5T_NATIVE_LLONG, 0, NULL, &version);
    attr_num(f, "matrix", H5T_NATIVE_DOUBLE, 2, a2, mat);
    d = dataset(f, "line", H5T_NATIVE_DOUBLE, 1, d1, 0, 1, 0);
    attr_str(d, "units", "m", 0);
    attr_num(d, "scale", H5T_NATIVE_DOUBLE, 0, NULL, &scale);
    H5Dclose(d);
    CHECK(g = H5Gcreate2(f, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    attr_str(g, "about", "two-dimensional fields", 1);
    d = dataset(g, "U", H5T_NATIVE_FLOAT, 2, d2, 1, 2, perturb);
    attr_str(d, "description", "u field (variable-length string)", 1);
    attr_num(d, "range", H5T_NATIVE_INT, 1, r2, range);
    H5Dclose(d);
    H5Dclose(dataset(g, "V", H5T_NATIVE_DOUBLE, 2, d2, 0, 3, 0));
    CHECK(sub = H5Gcreate2(g, "sub", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Dclose(dataset(sub, "cube", H5T_NATIVE_UCHAR, 3, d3, 0, 4, 0));
    H5Dclose(dataset(sub, "cube2", H5T_NATIVE_SHORT, 3, d3b, 1, 5, 0));
    CHECK(ints = H5Gcreate2(f, "ints", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    {
        const hsize_t e11[1] = {11}, e65[2] = {6, 5}, e9[1] = {9}, e44[2] = {4, 4}, e10[1] = {10};
        H5Dclose(dataset(ints, "i8", H5T_NATIVE_SCHAR, 1, e11, 0, 6, 0));
        H5Dclose(dataset(ints, "u16", H5T_NATIVE_USHORT, 2, e65, 0, 7, 0));
        H5Dclose(dataset(ints, "i64", H5T_NATIVE_LLONG, 1, e9, 0, 8, 0));
        H5Dclose(dataset(ints, "u32", H5T_NATIVE_UINT, 2, e44, 0, 9, 0));
        H5Dclose(dataset(ints, "u64", H5T_NATIVE_ULLONG, 1, e10, 0, 10, 0));
        H5Dclose(dataset(ints, "i32.odd-name", H5T_NATIVE_INT, 1, e10, 0, 11, 0));
        H5Dclose(dataset(ints, "i8b", H5T_NATIVE_SCHAR, 1, e11, 0, 12, 0)); /* 1 row/rank */
    }
    CHECK(empty = H5Gcreate2(f, "empty", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    attr_num(empty, "answer", H5T_NATIVE_INT, 0, NULL, &range[1]);
    if (bad) {
        /* a compound with a string member: no record (a compound of numbers would be one) */
        typedef struct pt {
            int x;
            double y;
            char label[4];
        } pt_t;
        const hsize_t n4[1] = {4}, n3[1] = {3};
        pt_t pts[4] = {{1, 1.5, "a"}, {2, 2.5, "b"}, {3, 3.5, "c"}, {4, 4.5, "d"}};
        hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(pt_t)), s = H5Screate_simple(1, n4, NULL);
        hid_t st = H5Tcopy(H5T_C_S1), s3 = H5Screate_simple(1, n3, NULL);
        const char words[3][4] = {"abc", "def", "ghi"};
        CHECK(H5Tset_size(st, 4));
        CHECK(H5Tinsert(ct, "x", HOFFSET(pt_t, x), H5T_NATIVE_INT));
        CHECK(H5Tinsert(ct, "y", HOFFSET(pt_t, y), H5T_NATIVE_DOUBLE));
        CHECK(H5Tinsert(ct, "label", HOFFSET(pt_t, label), st));
        CHECK(d = H5Dcreate2(f, "points", ct, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Dwrite(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, pts));
        H5Dclose(d);
        CHECK(d = H5Dcreate2(f, "words", st, s3, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Dwrite(d, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, words));
        H5Dclose(d);
        H5Tclose(ct);
        H5Tclose(st);
        H5Sclose(s);
        H5Sclose(s3);
    }
    H5Gclose(empty);
    H5Gclose(ints);
    H5Gclose(sub);
    H5Gclose(g);
    CHECK(H5Fclose(f));
    return 0;
}

/* ---- check --------------------------------------------------------------------------------- */

typedef struct chk {
    hid_t out;
    int stepdim;
    long long steps;
    int bad, ndatasets;
} chk_t;

static herr_t check_cb(hid_t in, const char *name, const H5L_info_t *info, void *data)
{
    chk_t *c = data;
    H5O_info_t oi;
    hid_t di, ti, nt, si, dout, so;
    hsize_t dims[H5S_MAX_RANK], odims[H5S_MAX_RANK + 1];
    size_t n = 1, es;
    int nd, k;
    long long s;
    unsigned char *a, *b;
    (void) info;
    CHECK(H5Oget_info_by_name(in, name, &oi, H5P_DEFAULT));
    if (oi.type != H5O_TYPE_DATASET)
        return 0;
    c->ndatasets++;
    CHECK(di = H5Dopen2(in, name, H5P_DEFAULT));
    CHECK(ti = H5Dget_type(di));
    CHECK(nt = H5Tget_native_type(ti, H5T_DIR_DEFAULT));
    CHECK(si = H5Dget_space(di));
    nd = H5Sget_simple_extent_ndims(si);
    H5Sget_simple_extent_dims(si, dims, NULL);
    for (k = 0; k < nd; k++)
        n *= dims[k];
    es = H5Tget_size(nt);
    a = malloc(n * es);
    b = malloc(n * es);
    CHECK(H5Dread(di, nt, H5S_ALL, H5S_ALL, H5P_DEFAULT, a));
    for (s = 0; s < c->steps; s++) {
        char path[1024];
        hid_t fs, ms;
        hsize_t st[H5S_MAX_RANK + 1] = {0}, ct[H5S_MAX_RANK + 1];
        if (c->stepdim)
            snprintf(path, sizeof(path), "/%s", name);
        else
            snprintf(path, sizeof(path), "/step_%06lld/%s", s, name);
        if ((dout = H5Dopen2(c->out, path, H5P_DEFAULT)) < 0) {
            fprintf(stderr, "h5gen check: %s missing\n", path);
            c->bad = 1;
            break;
        }
        CHECK(so = H5Dget_space(dout));
        CHECK(H5Sget_simple_extent_dims(so, odims, NULL));
        if (c->stepdim) {
            if (H5Sget_simple_extent_ndims(so) != nd + 1 || odims[0] != (hsize_t) c->steps) {
                fprintf(stderr, "h5gen check: %s: %d dimensions, %llu steps; expected %d, %lld\n",
                        path, H5Sget_simple_extent_ndims(so), (unsigned long long) odims[0], nd + 1,
                        c->steps);
                c->bad = 1;
            }
            st[0] = (hsize_t) s;
            ct[0] = 1;
            for (k = 0; k < nd; k++)
                ct[k + 1] = dims[k];
            CHECK(H5Sselect_hyperslab(so, H5S_SELECT_SET, st, NULL, ct, NULL));
            fs = so;
        } else {
            fs = H5S_ALL;
        }
        CHECK(ms = H5Screate_simple(nd, dims, NULL));
        if (!c->bad && H5Dread(dout, nt, ms, fs, H5P_DEFAULT, b) < 0) {
            fprintf(stderr, "h5gen check: %s: read failed\n", path);
            c->bad = 1;
        }
        if (!c->bad && memcmp(a, b, n * es) != 0) {
            fprintf(stderr, "h5gen check: %s (step %lld) differs from the input\n", path, s);
            c->bad = 1;
        }
        H5Sclose(ms);
        H5Sclose(so);
        H5Dclose(dout);
    }
    free(a);
    free(b);
    H5Sclose(si);
    H5Tclose(nt);
    H5Tclose(ti);
    H5Dclose(di);
    return 0;
}

static int check(const char *outp, const char *inp, int stepdim, long long steps)
{
    chk_t c = {H5I_INVALID_HID, stepdim, steps, 0, 0};
    hid_t in, at;
    unsigned long long marker = 0;
    char next[64];
    if ((c.out = H5Fopen(outp, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
        fprintf(stderr, "h5gen check: cannot open %s\n", outp);
        return 1;
    }
    CHECK(in = H5Fopen(inp, H5F_ACC_RDONLY, H5P_DEFAULT));
    if ((at = H5Aopen(c.out, "xfer_steps_complete", H5P_DEFAULT)) < 0 ||
        H5Aread(at, H5T_NATIVE_ULLONG, &marker) < 0 || marker != (unsigned long long) steps) {
        fprintf(stderr, "h5gen check: %s: xfer_steps_complete is %llu, expected %lld\n", outp,
                marker, steps);
        c.bad = 1;
    }
    if (at >= 0)
        H5Aclose(at);
    snprintf(next, sizeof(next), "/step_%06lld", steps);
    if (!stepdim && H5Lexists(c.out, next, H5P_DEFAULT) > 0) {
        fprintf(stderr, "h5gen check: %s: %s (an incomplete step) is present\n", outp, next);
        c.bad = 1;
    }
    CHECK(H5Lvisit(in, H5_INDEX_NAME, H5_ITER_INC, check_cb, &c));
    H5Fclose(in);
    H5Fclose(c.out);
    if (!c.bad)
        printf("h5gen check: %s: %lld step(s) of %d dataset(s) equal to %s\n", outp, steps,
               c.ndatasets, inp);
    return c.bad;
}

/* ---- --only: drop the datasets not listed --------------------------------------------------- */

typedef struct names {
    int n;
    char list[64][256];
} names_t;

static herr_t collect_cb(hid_t loc, const char *name, const H5L_info_t *info, void *data)
{
    names_t *nm = data;
    H5O_info_t oi;
    (void) info;
    CHECK(H5Oget_info_by_name(loc, name, &oi, H5P_DEFAULT));
    if (oi.type == H5O_TYPE_DATASET && nm->n < 64)
        snprintf(nm->list[nm->n++], sizeof(nm->list[0]), "%s", name);
    return 0;
}

/* "fields/sub/cube" is listed as /fields/sub/cube, fields/sub/cube or fields.sub.cube */
static int listed(const char *name, const char *sel)
{
    char copy[1024], *tok, *save = NULL;
    snprintf(copy, sizeof(copy), "%s", sel);
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char dotted[256];
        size_t i;
        if (tok[0] == '/')
            tok++;
        snprintf(dotted, sizeof(dotted), "%s", name);
        for (i = 0; dotted[i]; i++)
            if (dotted[i] == '/')
                dotted[i] = '.';
        if (strcmp(tok, name) == 0 || strcmp(tok, dotted) == 0)
            return 1;
    }
    return 0;
}

static int keep_only(const char *path, const char *sel)
{
    names_t nm;
    hid_t f;
    int i;
    nm.n = 0;
    CHECK(f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT));
    CHECK(H5Lvisit(f, H5_INDEX_NAME, H5_ITER_INC, collect_cb, &nm));
    for (i = 0; i < nm.n; i++)
        if (!listed(nm.list[i], sel))
            CHECK(H5Ldelete(f, nm.list[i], H5P_DEFAULT));
    CHECK(H5Fclose(f));
    return 0;
}

/* One dataset of the big file, written 8 MiB at a time along its first dimension. */
static void big_dataset(hid_t g, const char *name, hid_t type, int nd, const hsize_t *dims,
                        int seed)
{
    const size_t es = H5Tget_size(type);
    const int fl = H5Tget_class(type) == H5T_FLOAT;
    hsize_t row = 1, rows, r0, i, start[3] = {0, 0, 0}, count[3];
    hid_t s = H5Screate_simple(nd, dims, NULL), d, ms, fs;
    unsigned char *buf;
    int k;
    for (k = 1; k < nd; k++)
        row *= dims[k];
    rows = (8u << 20) / (row * es);
    if (rows == 0)
        rows = 1;
    buf = malloc(rows * row * es);
    CHECK(buf ? 0 : -1);
    CHECK(d = H5Dcreate2(g, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    for (r0 = 0; r0 < dims[0]; r0 += rows) {
        const hsize_t nr = dims[0] - r0 < rows ? dims[0] - r0 : rows;
        for (i = 0; i < nr * row; i++)
            put_value(buf, i, es, fl, (long long) ((r0 * row + i) * 7) + seed);
        for (k = 0; k < nd; k++)
            count[k] = dims[k];
        start[0] = r0;
        count[0] = nr;
        CHECK(fs = H5Dget_space(d));
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(ms = H5Screate_simple(nd, count, NULL));
        CHECK(H5Dwrite(d, type, ms, fs, H5P_DEFAULT, buf));
        H5Sclose(ms);
        H5Sclose(fs);
    }
    attr_str(d, "units", "arbitrary", 0);
    attr_num(d, "seed", H5T_NATIVE_INT, 0, NULL, &seed);
    H5Dclose(d);
    H5Sclose(s);
    free(buf);
}

/* ---- records ------------------------------------------------------------------------------- */

/* Compound datasets that are records: /particles [13], the C struct {id int64, pos float64[3],
 * q float32, kind int8} (natural layout, padding included), with an attribute; /grid/cells
 * [6, 5], members kind, q, pos, id packed (37 bytes) with id and pos big-endian; /grid/T [6, 5]
 * float64 beside them. @p perturb changes one field of one element of /grid/cells (a negative
 * control for h5diff). */
static int make_records(const char *path, int perturb)
{
    typedef struct particle {
        long long id;
        double pos[3];
        float q;
        signed char kind;
    } particle_t;
    const hsize_t n1[1] = {13}, n2[2] = {6, 5}, three = 3;
    particle_t p[30];
    double t[30];
    hid_t f, g, sp1, sp2, mt, marr, ft, farr, d;
    const double scale = 0.5;
    int i;
    for (i = 0; i < 30; i++) {
        memset(&p[i], 0, sizeof(p[i]));
        p[i].id = 1000003LL * i - 7;
        p[i].pos[0] = i + 0.25;
        p[i].pos[1] = -i;
        p[i].pos[2] = i / 3.0;
        p[i].q = (float) i / 7.0f;
        p[i].kind = (signed char) (i * 9);
        t[i] = i * 1.5;
    }
    CHECK(f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(mt = H5Tcreate(H5T_COMPOUND, sizeof(particle_t)));
    CHECK(marr = H5Tarray_create2(H5T_NATIVE_DOUBLE, 1, &three));
    CHECK(H5Tinsert(mt, "id", HOFFSET(particle_t, id), H5T_NATIVE_LLONG));
    CHECK(H5Tinsert(mt, "pos", HOFFSET(particle_t, pos), marr));
    CHECK(H5Tinsert(mt, "q", HOFFSET(particle_t, q), H5T_NATIVE_FLOAT));
    CHECK(H5Tinsert(mt, "kind", HOFFSET(particle_t, kind), H5T_NATIVE_SCHAR));
    CHECK(sp1 = H5Screate_simple(1, n1, NULL));
    CHECK(sp2 = H5Screate_simple(2, n2, NULL));
    CHECK(d = H5Dcreate2(f, "particles", mt, sp1, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, p));
    attr_num(d, "scale", H5T_NATIVE_DOUBLE, 0, NULL, &scale);
    H5Dclose(d);
    CHECK(g = H5Gcreate2(f, "grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(ft = H5Tcreate(H5T_COMPOUND, 1 + 4 + 24 + 8));
    CHECK(farr = H5Tarray_create2(H5T_IEEE_F64BE, 1, &three));
    CHECK(H5Tinsert(ft, "kind", 0, H5T_STD_I8LE));
    CHECK(H5Tinsert(ft, "q", 1, H5T_IEEE_F32LE));
    CHECK(H5Tinsert(ft, "pos", 5, farr));
    CHECK(H5Tinsert(ft, "id", 29, H5T_STD_I64BE));
    if (perturb)
        p[17].q += 1.0f;
    CHECK(d = H5Dcreate2(g, "cells", ft, sp2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, p)); /* HDF5 converts by name */
    H5Dclose(d);
    CHECK(d = H5Dcreate2(g, "T", H5T_NATIVE_DOUBLE, sp2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t));
    H5Dclose(d);
    H5Tclose(farr);
    H5Tclose(ft);
    H5Tclose(marr);
    H5Tclose(mt);
    H5Sclose(sp2);
    H5Sclose(sp1);
    H5Gclose(g);
    CHECK(H5Fclose(f));
    return 0;
}

/* The benchmark's input: @p mib MiB in four datasets of four types (see the usage above). */
static int make_big(const char *path, long long mib)
{
    const hsize_t m = (hsize_t) mib;
    const hsize_t t[2] = {m * 64, 1024}, u[3] = {m, 256, 256}, n[2] = {m * 32, 1024},
                  b[1] = {m * 131072};
    hid_t f, g;
    if (mib < 1) {
        fprintf(stderr, "h5gen: big: MIB must be at least 1\n");
        return 2;
    }
    CHECK(f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    attr_str(f, "title", "xfer-h5stream benchmark input", 0);
    CHECK(g = H5Gcreate2(f, "data", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    big_dataset(g, "T", H5T_NATIVE_DOUBLE, 2, t, 1);
    big_dataset(g, "U", H5T_NATIVE_FLOAT, 3, u, 2);
    big_dataset(g, "N", H5T_NATIVE_INT, 2, n, 3);
    big_dataset(g, "B", H5T_NATIVE_UCHAR, 1, b, 4);
    H5Gclose(g);
    CHECK(H5Fclose(f));
    return 0;
}

int main(int argc, char **argv)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (argc == 5 && strcmp(argv[1], "input") == 0 && strcmp(argv[3], "--only") == 0)
        return make_input(argv[2], 0, 0, 0) || keep_only(argv[2], argv[4]);
    if (argc >= 3 && strcmp(argv[1], "input") == 0)
        return make_input(argv[2], argc > 3 && strcmp(argv[3], "--perturb") == 0, 0,
                          argc > 3 && strcmp(argv[3], "--perturb-attr") == 0);
    if (argc == 4 && strcmp(argv[1], "big") == 0)
        return make_big(argv[2], atoll(argv[3]));
    if (argc == 3 && strcmp(argv[1], "bad") == 0)
        return make_input(argv[2], 0, 1, 0);
    if (argc >= 3 && strcmp(argv[1], "records") == 0)
        return make_records(argv[2], argc > 3 && strcmp(argv[3], "--perturb") == 0);
    if (argc == 8 && strcmp(argv[1], "check") == 0 && strcmp(argv[4], "--layout") == 0 &&
        strcmp(argv[6], "--steps") == 0)
        return check(argv[2], argv[3], strcmp(argv[5], "stepdim") == 0, atoll(argv[7]));
    fprintf(stderr, "usage: h5gen input FILE [--perturb] | bad FILE | records FILE [--perturb] |\n"
                    "       h5gen check OUT IN --layout group|stepdim --steps N |\n"
                    "       h5gen big FILE MIB\n");
    return 2;
}
