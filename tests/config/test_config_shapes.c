/* SPDX-License-Identifier: BSD-3-Clause */
/* test_config's tests of the datasets whose shape changes and of records (issue 30): every
 * spelling read to its exact values, the layout of records against the C compiler's, the
 * effective configuration printed in the same spelling and read back, every error word for word,
 * and the record calls of the API. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/config.h>

#include "../support/unit.h"
#include "test_config.h"

#define HEAD                                                                                       \
    "workflow: w\n"                                                                                \
    "components: [{name: a, nprocs: 2, cmd: [a]}, {name: b, nprocs: 3, cmd: [b]}]\n"               \
    "channels:\n"                                                                                  \
    "  - name: c\n"                                                                                \
    "    from: a\n"                                                                                \
    "    to: b\n"                                                                                  \
    "    datasets:\n"

/* Every spelling once; line 8 is the first dataset. */
static const char shapes_yaml[] =
    HEAD "      - {name: particles, type: {id: int64, pos: [float64, 3], v: [float64, 3], q: "
         "float32, kind: int8}, dims: [joined], max_rows: 100000}\n"
         "      - {name: rows3, type: float32, dims: [joined, 3], compression: zfp, tolerance: "
         "0.25}\n"
         "      - {name: grid, type: int8, dims: [variable, 64], compression: lz4}\n"
         "      - {name: any, type: uint16, dims: [variable, variable], selection: rows, "
         "compression: auto}\n"
         "      - name: pair\n"
         "        type:\n"
         "          a: int8\n"
         "          b: float64\n"
         "        dims: [4, 5]\n"
         "      - {name: bytes, type: {a: int8, b: int8}, dims: [7]}\n"
         "      - {name: tri, type: {x: [int16, 3], y: int8}, dims: [joined, 2]}\n"
         "      - {name: one, type: {u: [uint32, 1]}, dims: [3, variable]}\n";

/* The C structs whose layout the records must have. */
struct particle {
    int64_t id;
    double pos[3];
    double v[3];
    float q;
    int8_t kind;
};
struct pair {
    int8_t a;
    double b;
};
struct bytes {
    int8_t a, b;
};
struct tri {
    int16_t x[3];
    int8_t y;
};

typedef struct want_field {
    const char *name;
    xfer_type_t type;
    uint32_t count;
    size_t offset;
} want_field_t;

static void check_record(const xfer_cfg_dataset_t *d, const want_field_t *w, int n, size_t size,
                         size_t align)
{
    const xfer_record_t *r = d->record;
    int i;

    checks++;
    UCHECK(d->type == XFER_TYPE_RECORD && r, "%s: type %d, record %p", d->name, d->type,
           (const void *) r);
    if (!r)
        return;
    UCHECK(r->nfields == n, "%s: %d fields", d->name, r->nfields);
    for (i = 0; i < n && i < r->nfields; i++)
        UCHECK(strcmp(r->fields[i].name, w[i].name) == 0 && r->fields[i].type == w[i].type &&
                   r->fields[i].count == w[i].count && r->fields[i].offset == w[i].offset,
               "%s.%s: %s type %d count %u at %zu (want %d, %u at %zu)", d->name, w[i].name,
               r->fields[i].name, r->fields[i].type, (unsigned) r->fields[i].count,
               r->fields[i].offset, w[i].type, (unsigned) w[i].count, w[i].offset);
    UCHECK(r->size == size && r->align == align, "%s: size %zu align %zu (want %zu, %zu)", d->name,
           r->size, r->align, size, align);
    UCHECK(xfer_cfg_dataset_esize(d) == size, "%s: esize %zu", d->name, xfer_cfg_dataset_esize(d));
}

static void check_dims(const xfer_cfg_dataset_t *d, int ndims, const uint64_t *dims, int joined,
                       unsigned variable, uint64_t max_rows)
{
    int i;

    checks++;
    UCHECK(d->ndims == ndims, "%s: ndims %d", d->name, d->ndims);
    for (i = 0; i < ndims && i < d->ndims; i++)
        UCHECK(d->dims[i] == dims[i], "%s: dims[%d] %llu", d->name, i,
               (unsigned long long) d->dims[i]);
    UCHECK(d->joined == joined && d->variable == variable && d->max_rows == max_rows,
           "%s: joined %d variable 0x%x max_rows %llu", d->name, d->joined, d->variable,
           (unsigned long long) d->max_rows);
}

static void test_spellings(void)
{
    static const uint64_t j1[] = {0}, j3[] = {0, 3}, v64[] = {0, 64}, vv[] = {0, 0}, f45[] = {4, 5},
                          f7[] = {7}, j2[] = {0, 2}, f3v[] = {3, 0};
    const want_field_t particle[] = {{"id", XFER_TYPE_INT64, 1, offsetof(struct particle, id)},
                                     {"pos", XFER_TYPE_FLOAT64, 3, offsetof(struct particle, pos)},
                                     {"v", XFER_TYPE_FLOAT64, 3, offsetof(struct particle, v)},
                                     {"q", XFER_TYPE_FLOAT32, 1, offsetof(struct particle, q)},
                                     {"kind", XFER_TYPE_INT8, 1, offsetof(struct particle, kind)}};
    const want_field_t pair[] = {{"a", XFER_TYPE_INT8, 1, offsetof(struct pair, a)},
                                 {"b", XFER_TYPE_FLOAT64, 1, offsetof(struct pair, b)}};
    const want_field_t bytes[] = {{"a", XFER_TYPE_INT8, 1, 0}, {"b", XFER_TYPE_INT8, 1, 1}};
    const want_field_t tri[] = {{"x", XFER_TYPE_INT16, 3, offsetof(struct tri, x)},
                                {"y", XFER_TYPE_INT8, 1, offsetof(struct tri, y)}};
    const want_field_t one[] = {{"u", XFER_TYPE_UINT32, 1, 0}};
    const xfer_cfg_dataset_t *d;
    xfer_config_t *c;

    /* the numbers of issue 30 and the brief, and the compiler's own layout of the same structs */
    UCHECK(offsetof(struct particle, pos) == 8 && offsetof(struct particle, v) == 32 &&
               offsetof(struct particle, q) == 56 && offsetof(struct particle, kind) == 60 &&
               sizeof(struct particle) == 64,
           "the C layout of struct particle");
    UCHECK(offsetof(struct pair, b) == 8 && sizeof(struct pair) == 16 &&
               sizeof(struct bytes) == 2 && sizeof(struct tri) == 8 && offsetof(struct tri, y) == 6,
           "the C layout of the small structs");

    write_text("shapes.yaml", shapes_yaml);
    round_trip("shapes.yaml", ".");
    if (!(c = load_ok("shapes.yaml")))
        return;
    UCHECK(c->nchannels == 1 && c->channels[0].ndatasets == 8, "datasets");
    if (c->nchannels != 1 || c->channels[0].ndatasets != 8) {
        xfer_config_free(&c);
        return;
    }
    d = c->channels[0].datasets;
    check_dims(&d[0], 1, j1, 1, 0, 100000);
    check_record(&d[0], particle, 5, sizeof(struct particle), 8);
    UCHECK(d[0].line == 8 && d[0].col == 9, "position %d:%d", d[0].line, d[0].col);
    check_dims(&d[1], 2, j3, 1, 0, 0);
    UCHECK(d[1].type == XFER_TYPE_FLOAT32 && !d[1].record && xfer_cfg_dataset_esize(&d[1]) == 4,
           "rows3: a scalar type");
    check_dims(&d[2], 2, v64, 0, 1u, 0);
    check_dims(&d[3], 2, vv, 0, 3u, 0);
    UCHECK(d[1].compression == XFER_COMPRESSION_ZFP && d[1].tolerance == 0.25 &&
               d[2].compression == XFER_COMPRESSION_LZ4 && d[2].tolerance == 0.0 &&
               d[3].compression == XFER_COMPRESSION_AUTO && d[0].compression == 0,
           "compression: %d %g, %d, %d", d[1].compression, d[1].tolerance, d[2].compression,
           d[3].compression);
    UCHECK(d[3].selection == XFER_SELECT_ROWS && xfer_cfg_dataset_esize(&d[3]) == 2, "any");
    check_dims(&d[4], 2, f45, 0, 0, 0);
    check_record(&d[4], pair, 2, sizeof(struct pair), 8); /* a block mapping */
    check_dims(&d[5], 1, f7, 0, 0, 0);
    check_record(&d[5], bytes, 2, sizeof(struct bytes), 1);
    check_dims(&d[6], 2, j2, 1, 0, 0);
    check_record(&d[6], tri, 2, sizeof(struct tri), 2);
    check_dims(&d[7], 2, f3v, 0, 2u, 0);
    check_record(&d[7], one, 1, 4, 4);
    xfer_config_free(&c);
}

/* The effective configuration writes every shape as the file does, and max_rows only where it is
 * set. */
static void test_print(void)
{
    static const char *const lines[] = {
        "        type: {id: int64, pos: [float64, 3], v: [float64, 3], q: float32, kind: int8}\n"
        "        dims: [joined]\n",
        "        selection: all\n        max_rows: 100000\n      - name: \"rows3\"\n",
        "        dims: [joined, 3]\n",
        "        dims: [variable, 64]\n",
        "        dims: [variable, variable]\n",
        "        type: {a: int8, b: float64}\n        dims: [4, 5]\n",
        "        type: {x: [int16, 3], y: int8}\n        dims: [joined, 2]\n",
        "        type: {u: uint32}\n        dims: [3, variable]\n"};
    xfer_config_t *c;
    char *text = NULL, *s;
    size_t len = 0;
    FILE *f;
    int n = 0;
    size_t i;

    write_text("shapes.yaml", shapes_yaml);
    if (!(c = load_ok("shapes.yaml")))
        return;
    f = open_memstream(&text, &len);
    UCHECK(f && xfer_config_print(c, f) == XFER_SUCCESS && fclose(f) == 0, "print");
    xfer_config_free(&c);
    if (!text)
        return;
    for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++, checks++)
        UCHECK(strstr(text, lines[i]) != NULL, "the print lacks\n%s\nin\n%s", lines[i], text);
    for (s = text; (s = strstr(s, "max_rows:")); s++)
        n++;
    UCHECK(n == 1, "max_rows printed %d times:\n%s", n, text);
    free(text);
}

#define DS(x) HEAD "      - " x "\n"

static void test_shape_errors(void)
{
    /* joined: the first entry only; not with variable; the words misspelt */
    expect_error("sh.yaml", DS("{name: d, type: int8, dims: [3, joined]}"),
                 "8:41: channels[0].datasets[0].dims[1]: joined is the first entry only (dims: "
                 "[joined, d1, ...]), not entry 1");
    expect_error("sh.yaml", DS("{name: d, type: int8, dims: [4, 4, joined]}"),
                 "8:44: channels[0].datasets[0].dims[2]: joined is the first entry only (dims: "
                 "[joined, d1, ...]), not entry 2");
    expect_error("sh.yaml", DS("{name: d, type: int8, dims: [joined, variable]}"),
                 "8:37: channels[0].datasets[0].dims: joined and variable together: a joined "
                 "dataset's rows change every step already, its other extents are fixed (dims: "
                 "[joined, d1, ...] or [variable, ...])");
    expect_error("sh.yaml", DS("{name: d, type: int8, dims: [joind, 3]}"),
                 "8:38: channels[0].datasets[0].dims[0]: expected a positive integer, variable or "
                 "joined, got \"joind\"; did you mean \"joined\"?");
    expect_error("sh.yaml", DS("{name: d, type: int8, dims: [2, Variable]}"),
                 "8:41: channels[0].datasets[0].dims[1]: expected a positive integer, variable or "
                 "joined, got \"Variable\"; did you mean \"variable\"?");
    expect_error("sh.yaml", DS("{name: d, type: int8, dims: [joined, 0]}"),
                 "8:46: channels[0].datasets[0].dims[1]: expected a positive integer, got \"0\"");
    expect_error("sh.yaml", DS("{name: d, type: int8, dims: [joined, [2]]}"),
                 "8:46: channels[0].datasets[0].dims[1]: expected a positive integer, variable or "
                 "joined, got a sequence");

    /* max_rows: joined datasets only, positive, within the size bound */
    expect_error("sh.yaml", DS("{name: d, type: int8, dims: [4, 4], max_rows: 10}"),
                 "8:55: channels[0].datasets[0].max_rows: max_rows 10 is for joined datasets only "
                 "(dims: [joined, ...]), and dataset \"d\" has dims [4, 4]");
    expect_error("sh.yaml", DS("{name: d, type: int8, dims: [variable], max_rows: 10}"),
                 "8:59: channels[0].datasets[0].max_rows: max_rows 10 is for joined datasets only "
                 "(dims: [joined, ...]), and dataset \"d\" has dims [variable]");
    expect_error("sh.yaml", DS("{name: d, type: int8, dims: [joined], max_rows: 0}"),
                 "8:57: channels[0].datasets[0].max_rows: expected an integer in "
                 "1..4611686018427387904, got \"0\"");
    expect_error("sh.yaml", DS("{name: d, type: int8, dims: [joined], max_rows: many}"),
                 "8:57: channels[0].datasets[0].max_rows: expected an integer in "
                 "1..4611686018427387904, got \"many\"");
    expect_error("sh.yaml",
                 DS("{name: d, type: float64, dims: [joined, 1099511627776], max_rows: "
                    "1073741824}"),
                 "8:75: channels[0].datasets[0].max_rows: impossible size: max_rows 1073741824 "
                 "of [joined, 1099511627776] float64 is more than 2^62 bytes");
    expect_error("sh.yaml", DS("{name: d, type: float64, dims: [variable, 1152921504606846976]}"),
                 "8:40: channels[0].datasets[0].dims: impossible size: [variable, "
                 "1152921504606846976] float64 is more than 2^62 bytes");
    expect_error("sh.yaml",
                 DS("{name: d, type: {a: [float64, 2147483647], b: [float64, 2147483647]}, "
                    "dims: [1073741824]}"),
                 "8:85: channels[0].datasets[0].dims: impossible size: [1073741824] record of "
                 "34359738352 bytes is more than 2^62 bytes");

    /* records */
    expect_error("sh.yaml", DS("{name: d, type: {}, dims: [3]}"),
                 "8:25: channels[0].datasets[0].type: a record needs at least one field (got an "
                 "empty mapping)");
    expect_error("sh.yaml", DS("{name: d, type: {a: int8, b: int8, a: int16}, dims: [3]}"),
                 "8:44: channels[0].datasets[0].type.a: duplicate field \"a\" (first at line 8)");
    expect_error("sh.yaml", DS("{name: d, type: {a: float16}, dims: [3]}"),
                 "8:29: channels[0].datasets[0].type.a: expected "
                 "int8|uint8|int16|uint16|int32|uint32|int64|uint64|float32|float64, got "
                 "\"float16\"; did you mean \"float32\" or \"float64\"?");
    expect_error("sh.yaml", DS("{name: d, type: {a: [flaot64, 3]}, dims: [3]}"),
                 "8:30: channels[0].datasets[0].type.a[0]: expected "
                 "int8|uint8|int16|uint16|int32|uint32|int64|uint64|float32|float64, got "
                 "\"flaot64\"; did you mean \"float64\"?");
    expect_error("sh.yaml", DS("{name: d, type: {a: [int8, 0]}, dims: [3]}"),
                 "8:36: channels[0].datasets[0].type.a[1]: expected a count in 1..2147483647, got "
                 "\"0\"");
    expect_error("sh.yaml", DS("{name: d, type: {a: [int8, 2147483648]}, dims: [3]}"),
                 "8:36: channels[0].datasets[0].type.a[1]: expected a count in 1..2147483647, got "
                 "\"2147483648\"");
    expect_error("sh.yaml", DS("{name: d, type: {a: [int8, -2]}, dims: [3]}"),
                 "8:36: channels[0].datasets[0].type.a[1]: expected a count in 1..2147483647, got "
                 "\"-2\"");
    expect_error("sh.yaml", DS("{name: d, type: {a: [int8]}, dims: [3]}"),
                 "8:29: channels[0].datasets[0].type.a: expected [type, count] (a fixed-length "
                 "field), got 1 entry");
    expect_error("sh.yaml", DS("{name: d, type: {a: [int8, 3, 4]}, dims: [3]}"),
                 "8:29: channels[0].datasets[0].type.a: expected [type, count] (a fixed-length "
                 "field), got 3 entries");
    expect_error("sh.yaml", DS("{name: d, type: {a: {b: int8}}, dims: [3]}"),
                 "8:29: channels[0].datasets[0].type.a: expected "
                 "int8|uint8|int16|uint16|int32|uint32|int64|uint64|float32|float64 or [type, "
                 "count] (records do not nest), got a mapping");
    expect_error("sh.yaml", DS("{name: d, type: {a: record}, dims: [3]}"),
                 "8:29: channels[0].datasets[0].type.a: expected "
                 "int8|uint8|int16|uint16|int32|uint32|int64|uint64|float32|float64, got "
                 "\"record\"");
    expect_error("sh.yaml", DS("{name: d, type: {1x: int8}, dims: [3]}"),
                 "8:26: channels[0].datasets[0].type.1x: field name \"1x\" is not a C identifier "
                 "([A-Za-z_][A-Za-z0-9_]*)");
    expect_error("sh.yaml", DS("{name: d, type: {\"a.b\": int8}, dims: [3]}"),
                 "8:26: channels[0].datasets[0].type.a.b: field name \"a.b\" is not a C "
                 "identifier ([A-Za-z_][A-Za-z0-9_]*)");
    expect_error("sh.yaml", DS("{name: d, type: {[a]: int8}, dims: [3]}"),
                 "8:26: channels[0].datasets[0].type: expected a field name, got a sequence");
    expect_error("sh.yaml", DS("{name: d, type: [int8, 3], dims: [3]}"),
                 "8:25: channels[0].datasets[0].type: expected "
                 "int8|uint8|int16|uint16|int32|uint32|int64|uint64|float32|float64, or a record "
                 "{field: type or [type, count], ...}, got a sequence");
    expect_error("sh.yaml", DS("{name: d, type: float16, dims: [3]}"),
                 "8:25: channels[0].datasets[0].type: expected "
                 "int8|uint8|int16|uint16|int32|uint32|int64|uint64|float32|float64, got "
                 "\"float16\"; did you mean \"float32\" or \"float64\"?");
}

/* Every error of a record is said, in file order, with the rest of the file's; one record with
 * too many fields is said once. */
static void test_record_report(void)
{
    const char *text =
        DS("{name: d, type: {a: float16, b: [int8, 0], a: int8, c: [int8]}, "
           "dims: [joined, 3, joined], max_rows: 5}") "      - {name: e, type: {x: int8}, dims: "
                                                      "[4], max_rows: 3}\n";
    xfer_config_t *c = (xfer_config_t *) &c;
    char *big;
    size_t o;
    int i;

    checks++;
    UCHECK(xfer_config_load_buffer("rep.yaml", text, strlen(text), &c) == XFER_ERR_CONFIG && !c,
           "a file of record errors loads");
    UCHECK(strcmp(xfer_last_error(),
                  "rep.yaml:8:29: channels[0].datasets[0].type.a: expected "
                  "int8|uint8|int16|uint16|int32|uint32|int64|uint64|float32|float64, got "
                  "\"float16\"; did you mean \"float32\" or \"float64\"?\n"
                  "rep.yaml:8:48: channels[0].datasets[0].type.b[1]: expected a count in "
                  "1..2147483647, got \"0\"\n"
                  "rep.yaml:8:52: channels[0].datasets[0].type.a: duplicate field \"a\" (first at "
                  "line 8)\n"
                  "rep.yaml:8:64: channels[0].datasets[0].type.c: expected [type, count] (a "
                  "fixed-length field), got 1 entry\n"
                  "rep.yaml:8:91: channels[0].datasets[0].dims[2]: joined is the first entry only "
                  "(dims: [joined, d1, ...]), not entry 2\n"
                  "rep.yaml:9:57: channels[0].datasets[1].max_rows: max_rows 3 is for joined "
                  "datasets only (dims: [joined, ...]), and dataset \"e\" has dims [4]") == 0,
           "%s", xfer_last_error());

    big = malloc(8192);
    o = (size_t) snprintf(big, 8192, DS("{name: d, dims: [3], type: {"));
    o -= 1; /* before the line's end: into the mapping */
    for (i = 0; i < XFER_RECORD_MAX_FIELDS + 3; i++)
        o += (size_t) snprintf(big + o, 8192 - o, "%sf%d: int8", i ? ", " : "", i);
    snprintf(big + o, 8192 - o, "}}\n");
    checks++;
    UCHECK(xfer_config_load_buffer("many.yaml", big, strlen(big), &c) == XFER_ERR_CONFIG,
           "65 fields load");
    UCHECK(strstr(xfer_last_error(), "channels[0].datasets[0].type.f64: more than 64 fields in a "
                                     "record (XFER_RECORD_MAX_FIELDS)") &&
               !strchr(xfer_last_error(), '\n'),
           "%s", xfer_last_error());
    /* exactly 64 fields load */
    o = (size_t) snprintf(big, 8192, DS("{name: d, dims: [3], type: {"));
    o -= 1;
    for (i = 0; i < XFER_RECORD_MAX_FIELDS; i++)
        o += (size_t) snprintf(big + o, 8192 - o, "%sf%d: int8", i ? ", " : "", i);
    snprintf(big + o, 8192 - o, "}}\n");
    checks++;
    UCHECK(xfer_config_load_buffer("max.yaml", big, strlen(big), &c) == XFER_SUCCESS &&
               c->channels[0].datasets[0].record->nfields == 64 &&
               c->channels[0].datasets[0].record->size == 64,
           "64 fields: %s", xfer_last_error());
    xfer_config_free(&c);
    free(big);
}

/* xfer_record_layout on records built by hand, and what it refuses. */
static void test_layout_api(void)
{
    xfer_record_field_t f[3] = {{"x", XFER_TYPE_INT16, 3, 99}, {"y", XFER_TYPE_INT8, 1, 99}};
    xfer_record_field_t g[2] = {{"a", XFER_TYPE_INT8, 1, 0}, {"b", XFER_TYPE_FLOAT64, 1, 0}};
    xfer_record_t r = {2, f, 0, 0}, s = {2, g, 0, 0};
    xfer_cfg_dataset_t d;

    checks += 12;
    UCHECK(xfer_record_layout(&r) == XFER_SUCCESS && f[0].offset == 0 && f[1].offset == 6 &&
               r.size == 8 && r.align == 2,
           "{x: [int16, 3], y: int8}: %zu %zu, %zu/%zu", f[0].offset, f[1].offset, r.size, r.align);
    UCHECK(xfer_record_layout(&s) == XFER_SUCCESS && g[1].offset == 8 && s.size == 16 &&
               s.align == 8,
           "{a: int8, b: float64}");
    f[2] = (xfer_record_field_t){"z", XFER_TYPE_FLOAT32, 2, 0};
    r.nfields = 3;
    UCHECK(xfer_record_layout(&r) == XFER_SUCCESS && f[2].offset == 8 && r.size == 16 &&
               r.align == 4,
           "{x: [int16, 3], y: int8, z: [float32, 2]}");
    f[2].type = XFER_TYPE_RECORD;
    UCHECK(xfer_record_layout(&r) == XFER_ERR_INVALID_ARG &&
               strstr(xfer_last_error(), "record field 2 (z): type 11, count 2: is not a scalar "
                                         "type (int8 .. float64; records do not nest)"),
           "a nested record: %s", xfer_last_error());
    f[2].type = XFER_TYPE_FLOAT32;
    f[2].count = 0;
    UCHECK(xfer_record_layout(&r) == XFER_ERR_INVALID_ARG &&
               strstr(xfer_last_error(), "record field 2 (z): type 9, count 0: count is outside "
                                         "1..INT_MAX"),
           "count 0: %s", xfer_last_error());
    r.nfields = 0;
    UCHECK(xfer_record_layout(&r) == XFER_ERR_INVALID_ARG &&
               strstr(xfer_last_error(), "a record has 1..64 fields (XFER_RECORD_MAX_FIELDS), "
                                         "this one 0"),
           "no fields: %s", xfer_last_error());
    r.nfields = XFER_RECORD_MAX_FIELDS + 1;
    UCHECK(xfer_record_layout(&r) == XFER_ERR_INVALID_ARG, "65 fields");
    UCHECK(xfer_record_layout(NULL) == XFER_ERR_INVALID_ARG, "NULL");

    UCHECK(xfer_type_size(XFER_TYPE_RECORD) == 0 &&
               strcmp(xfer_type_name(XFER_TYPE_RECORD), "record") == 0,
           "XFER_TYPE_RECORD: size %zu, name %s", xfer_type_size(XFER_TYPE_RECORD),
           xfer_type_name(XFER_TYPE_RECORD));
    memset(&d, 0, sizeof(d));
    d.type = XFER_TYPE_RECORD;
    UCHECK(xfer_cfg_dataset_esize(&d) == 0, "a record dataset without its record");
    d.record = &s;
    UCHECK(xfer_cfg_dataset_esize(&d) == 16, "a record dataset: %zu", xfer_cfg_dataset_esize(&d));
    d.type = XFER_TYPE_UINT16;
    UCHECK(xfer_cfg_dataset_esize(&d) == 2 && xfer_cfg_dataset_esize(NULL) == 0, "scalar, NULL");
}

void test_shapes(void)
{
    test_spellings();
    test_print();
    test_shape_errors();
    test_record_report();
    test_layout_api();
}
