/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the file adapters: error text and its agreement, types, the slab split and the
 * in-band attribute table (see adapter_common.h and docs/adapters.md). */
#include "adapter_common.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char adapter_err[1024];

const char *xfer_adapter_error(void)
{
    return adapter_err;
}

void xfer_adapter_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(adapter_err, sizeof(adapter_err), fmt, ap);
    va_end(ap);
    for (char *c = adapter_err; *c; c++) /* one line: MPI error strings hold newlines */
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

void xfer_adapter_clear_error(void)
{
    adapter_err[0] = '\0';
}

static xfer_status_t agree_failed(int rc, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof(text), "MPI error %d", rc);
    xfer_adapter_set_error("%s failed while agreeing on a status: %s", call, text);
    return XFER_ERR_MPI;
}

xfer_status_t xfer_adapter_agree(MPI_Comm comm, xfer_status_t st)
{
    int in[2], out[2], rc; /* MPI_2INT: the status, the rank */
    char text[sizeof(adapter_err)];

    if ((rc = MPI_Comm_rank(comm, &in[1])) != MPI_SUCCESS)
        return agree_failed(rc, "MPI_Comm_rank");
    in[0] = (int) st;
    if ((rc = MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MINLOC, comm)) != MPI_SUCCESS)
        return agree_failed(rc, "MPI_Allreduce");
    if (out[0] == XFER_SUCCESS)
        return XFER_SUCCESS;
    memcpy(text, adapter_err, sizeof(text));
    if (MPI_Bcast(text, (int) sizeof(text), MPI_CHAR, out[1], comm) != MPI_SUCCESS)
        snprintf(text, sizeof(text), "rank %d failed (MPI_Bcast of its error failed)", out[1]);
    if (in[1] != out[1])
        xfer_adapter_set_error("%s", text);
    return (xfer_status_t) out[0];
}

size_t xfer_adapter_volume(int ndims, const uint64_t count[])
{
    size_t v = 1;
    int d;
    for (d = 0; d < ndims; d++) {
        if (count[d] != 0 && v > SIZE_MAX / count[d])
            return 0;
        v *= (size_t) count[d];
    }
    return v;
}

int xfer_adapter_layout_parse(const char *name, xfer_adapter_layout_t *layout)
{
    if (strcmp(name, "group") == 0)
        *layout = XFER_ADAPTER_GROUP_PER_STEP;
    else if (strcmp(name, "stepdim") == 0)
        *layout = XFER_ADAPTER_STEP_DIM;
    else if (strcmp(name, "same") == 0)
        *layout = XFER_ADAPTER_SAME_PATHS;
    else
        return -1;
    return 0;
}

xfer_type_t xfer_adapter_type_from_name(const char *name)
{
    int t;
    for (t = XFER_TYPE_INT8; t <= XFER_TYPE_FLOAT64; t++)
        if (strcmp(xfer_type_name((xfer_type_t) t), name) == 0)
            return (xfer_type_t) t;
    return (xfer_type_t) 0;
}

void xfer_adapter_split(uint64_t len, int parts, int index, uint64_t *start, uint64_t *count)
{
    const uint64_t p = (uint64_t) parts, i = (uint64_t) index;
    const uint64_t base = len / p, extra = len % p;
    *start = i * base + (i < extra ? i : extra);
    *count = base + (i < extra ? 1 : 0);
}

void xfer_adapter_var_clear(xfer_adapter_var_t *v)
{
    int a;
    for (a = 0; a < v->nattrs; a++)
        free(v->attrs[a].data);
    free(v->attrs);
    v->attrs = NULL;
    v->nattrs = 0;
}

/* ---- records ------------------------------------------------------------------------------ */

size_t xfer_adapter_var_esize(const xfer_adapter_var_t *v)
{
    if (v->type == XFER_TYPE_RECORD)
        return v->record ? v->record->size : 0;
    return xfer_type_size(v->type);
}

int xfer_adapter_is_identifier(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

static size_t field_bytes(const xfer_record_field_t *f)
{
    return xfer_type_size(f->type) * f->count;
}

int xfer_adapter_record_check(const xfer_record_t *r, char *why, size_t cap)
{
    int i, j;
    if (!r || r->nfields < 1 || r->nfields > XFER_RECORD_MAX_FIELDS || !r->fields) {
        snprintf(why, cap, "a record has 1 to %d fields, this one %d", XFER_RECORD_MAX_FIELDS,
                 r ? r->nfields : 0);
        return -1;
    }
    for (i = 0; i < r->nfields; i++) {
        const xfer_record_field_t *f = &r->fields[i];
        const char *name = f->name ? f->name : "";
        if (!xfer_adapter_is_identifier(name)) {
            snprintf(why, cap, "field %d: name \"%.64s\" is not a C identifier", i, name);
            return -1;
        }
        if (xfer_type_size(f->type) == 0 || f->count < 1) {
            snprintf(why, cap,
                     "field %d (%.64s): type %d, count %u: not a scalar type with a count "
                     ">= 1",
                     i, name, (int) f->type, (unsigned) f->count);
            return -1;
        }
        if (f->offset > r->size || field_bytes(f) > r->size - f->offset) {
            snprintf(why, cap, "field %d (%.64s): bytes %zu..%zu lie outside the record's %zu", i,
                     name, f->offset, f->offset + field_bytes(f), r->size);
            return -1;
        }
        for (j = 0; j < i; j++) {
            const xfer_record_field_t *g = &r->fields[j];
            if (strcmp(g->name, name) == 0) {
                snprintf(why, cap, "field %d: name %.64s taken by field %d", i, name, j);
                return -1;
            }
            if (f->offset < g->offset + field_bytes(g) && g->offset < f->offset + field_bytes(f)) {
                snprintf(why, cap, "field %d (%.64s) overlaps field %d (%.64s)", i, name, j,
                         g->name);
                return -1;
            }
        }
    }
    return 0;
}

xfer_record_t *xfer_adapter_record_new(int nfields)
{
    xfer_record_t *r = calloc(1, sizeof(*r));
    if (!r || nfields < 1 || !(r->fields = calloc((size_t) nfields, sizeof(*r->fields)))) {
        free(r);
        return NULL;
    }
    r->nfields = nfields;
    return r;
}

void xfer_adapter_record_free(xfer_record_t **r)
{
    int i;
    if (!r || !*r)
        return;
    for (i = 0; (*r)->fields && i < (*r)->nfields; i++)
        free((*r)->fields[i].name);
    free((*r)->fields);
    free(*r);
    *r = NULL;
}

xfer_record_t *xfer_adapter_record_copy(const xfer_record_t *in)
{
    xfer_record_t *r = in ? xfer_adapter_record_new(in->nfields) : NULL;
    int i;
    if (!r)
        return NULL;
    r->size = in->size;
    r->align = in->align;
    for (i = 0; i < in->nfields; i++) {
        r->fields[i] = in->fields[i];
        if (!(r->fields[i].name = strdup(in->fields[i].name ? in->fields[i].name : ""))) {
            xfer_adapter_record_free(&r);
            return NULL;
        }
    }
    return r;
}

int xfer_adapter_record_diff(const xfer_record_t *a, const xfer_record_t *b, char *why, size_t cap)
{
    int i;
    if (a->size != b->size) {
        snprintf(why, cap, "record size %zu here, %zu there", a->size, b->size);
        return -1;
    }
    for (i = 0; i < a->nfields && i < b->nfields; i++) {
        const xfer_record_field_t *f = &a->fields[i], *g = &b->fields[i];
        if (strcmp(f->name, g->name) != 0)
            snprintf(why, cap, "field %d: %.64s here, %.64s there", i, f->name, g->name);
        else if (f->type != g->type || f->count != g->count)
            snprintf(why, cap, "field %d (%.64s): [%s, %u] here, [%s, %u] there", i, f->name,
                     xfer_type_name(f->type), (unsigned) f->count, xfer_type_name(g->type),
                     (unsigned) g->count);
        else if (f->offset != g->offset)
            snprintf(why, cap, "field %d (%.64s): offset %zu here, %zu there", i, f->name,
                     f->offset, g->offset);
        else
            continue;
        return -1;
    }
    if (a->nfields != b->nfields) {
        snprintf(why, cap, "%d fields here, %d there (field %d: %.64s)", a->nfields, b->nfields, i,
                 a->nfields > b->nfields ? a->fields[i].name : b->fields[i].name);
        return -1;
    }
    return 0;
}

/* The field of @p r called @p name, or -1. */
static int field_index(const xfer_record_t *r, const char *name)
{
    int i;
    for (i = 0; i < r->nfields; i++)
        if (strcmp(r->fields[i].name, name) == 0)
            return i;
    return -1;
}

int xfer_adapter_record_fits(const xfer_record_t *from, const xfer_record_t *to, char *why,
                             size_t cap)
{
    int i, k;
    for (i = 0; i < to->nfields; i++) {
        const xfer_record_field_t *g = &to->fields[i];
        if ((k = field_index(from, g->name)) < 0) {
            snprintf(why, cap, "field %.64s is not in the file's record", g->name);
            return -1;
        }
        if (from->fields[k].type != g->type || from->fields[k].count != g->count) {
            snprintf(why, cap, "field %.64s is [%s, %u] in the file, [%s, %u] here", g->name,
                     xfer_type_name(from->fields[k].type), (unsigned) from->fields[k].count,
                     xfer_type_name(g->type), (unsigned) g->count);
            return -1;
        }
    }
    return 0;
}

void xfer_adapter_record_convert(const xfer_record_t *from, const xfer_record_t *to, size_t n,
                                 const void *src, void *dst)
{
    size_t srcoff[XFER_RECORD_MAX_FIELDS], e;
    const unsigned char *s = src;
    unsigned char *d = dst;
    int i;
    for (i = 0; i < to->nfields && i < XFER_RECORD_MAX_FIELDS; i++) {
        const int k = field_index(from, to->fields[i].name);
        srcoff[i] = k < 0 ? SIZE_MAX : from->fields[k].offset; /* not fitting: left zero */
    }
    memset(dst, 0, n * to->size);
    for (e = 0; e < n; e++, s += from->size, d += to->size)
        for (i = 0; i < to->nfields && i < XFER_RECORD_MAX_FIELDS; i++)
            if (srcoff[i] != SIZE_MAX)
                memcpy(d + to->fields[i].offset, s + srcoff[i], field_bytes(&to->fields[i]));
}

/* Append to @p out (of @p cap bytes, NULL with 0: count only) at *@p o, as snprintf. */
static void append(char *out, size_t cap, size_t *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *out, size_t cap, size_t *o, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(out && *o < cap ? out + *o : NULL, out && *o < cap ? cap - *o : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *o += (size_t) n;
}

size_t xfer_adapter_record_yaml(const xfer_record_t *r, char *out, size_t cap)
{
    size_t o = 0;
    int i;
    if (out && cap)
        out[0] = '\0';
    append(out, cap, &o, "{");
    for (i = 0; i < r->nfields; i++) {
        const xfer_record_field_t *f = &r->fields[i];
        if (f->count == 1)
            append(out, cap, &o, "%s%s: %s", i ? ", " : "", f->name, xfer_type_name(f->type));
        else
            append(out, cap, &o, "%s%s: [%s, %u]", i ? ", " : "", f->name, xfer_type_name(f->type),
                   (unsigned) f->count);
    }
    append(out, cap, &o, "}");
    return o;
}

static size_t attr_bytes(const xfer_adapter_attr_t *a)
{
    return a->is_text ? a->count : a->count * xfer_type_size(a->type);
}

xfer_status_t xfer_adapter_attrs_copy(int n, const xfer_adapter_attr_t *in,
                                      xfer_adapter_attr_t **out)
{
    xfer_adapter_attr_t *c;
    int a;
    *out = NULL;
    if (n == 0)
        return XFER_SUCCESS;
    c = calloc((size_t) n, sizeof(*c));
    if (!c)
        return XFER_ERR_NO_MEMORY;
    for (a = 0; a < n; a++) {
        const size_t nb = attr_bytes(&in[a]);
        c[a] = in[a];
        c[a].data = malloc(nb ? nb : 1);
        if (!c[a].data) {
            while (a-- > 0)
                free(c[a].data);
            free(c);
            return XFER_ERR_NO_MEMORY;
        }
        if (nb)
            memcpy(c[a].data, in[a].data, nb);
    }
    *out = c;
    return XFER_SUCCESS;
}

/* ---- the table: a growing byte string ----------------------------------------------------- */

typedef struct wbuf {
    uint8_t *p;
    size_t len, cap;
    int failed;
} wbuf_t;

static void put_bytes(wbuf_t *w, const void *src, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        uint8_t *np;
        while (cap < w->len + n)
            cap *= 2;
        np = realloc(w->p, cap);
        if (!np) {
            w->failed = 1;
            return;
        }
        w->p = np;
        w->cap = cap;
    }
    memcpy(w->p + w->len, src, n);
    w->len += n;
}

static void put_u64(wbuf_t *w, uint64_t v)
{
    uint8_t b[8];
    int i;
    for (i = 0; i < 8; i++)
        b[i] = (uint8_t) (v >> (8 * i));
    put_bytes(w, b, 8);
}

static void put_str(wbuf_t *w, const char *s)
{
    const size_t n = strlen(s);
    put_u64(w, n);
    put_bytes(w, s, n);
}

xfer_status_t xfer_adapter_table_pack(int n, const xfer_adapter_var_t *objs, uint8_t **buf,
                                      size_t *len)
{
    wbuf_t w = {NULL, 0, 0, 0};
    int i, d, a;
    put_bytes(&w, "XFA1", 4);
    put_u64(&w, (uint64_t) n);
    for (i = 0; i < n; i++) {
        const xfer_adapter_var_t *v = &objs[i];
        put_str(&w, v->name);
        put_u64(&w, (uint64_t) v->type);
        put_u64(&w, (uint64_t) v->ndims);
        for (d = 0; d < v->ndims; d++)
            put_u64(&w, v->dims[d]);
        put_u64(&w, (uint64_t) v->nattrs);
        for (a = 0; a < v->nattrs; a++) {
            const xfer_adapter_attr_t *at = &v->attrs[a];
            put_str(&w, at->name);
            put_u64(&w, (uint64_t) at->is_text);
            put_u64(&w, (uint64_t) at->type);
            put_u64(&w, (uint64_t) at->count);
            put_u64(&w, (uint64_t) at->shape_set);
            put_u64(&w, (uint64_t) at->ndims);
            for (d = 0; d < at->ndims; d++)
                put_u64(&w, at->dims[d]);
            put_bytes(&w, at->data, attr_bytes(at));
        }
    }
    if (w.failed) {
        free(w.p);
        xfer_adapter_set_error("attribute table: out of memory");
        return XFER_ERR_NO_MEMORY;
    }
    *buf = w.p;
    *len = w.len;
    return XFER_SUCCESS;
}

typedef struct rbuf {
    const uint8_t *p;
    size_t len, off;
    int failed;
} rbuf_t;

static void get_bytes(rbuf_t *r, void *dst, size_t n)
{
    if (r->failed || n > r->len - r->off) {
        r->failed = 1;
        return;
    }
    memcpy(dst, r->p + r->off, n);
    r->off += n;
}

static uint64_t get_u64(rbuf_t *r)
{
    uint8_t b[8] = {0};
    uint64_t v = 0;
    int i;
    get_bytes(r, b, 8);
    for (i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

static void get_str(rbuf_t *r, char *dst, size_t cap)
{
    const uint64_t n = get_u64(r);
    if (n >= cap) {
        r->failed = 1;
        return;
    }
    get_bytes(r, dst, (size_t) n);
    dst[r->failed ? 0 : n] = '\0';
}

xfer_status_t xfer_adapter_table_unpack(const uint8_t *buf, size_t len, int *n,
                                        xfer_adapter_var_t **objs)
{
    rbuf_t r = {buf, len, 0, 0};
    xfer_adapter_var_t *o = NULL;
    char magic[4] = {0};
    uint64_t cnt;
    int i, d, a;
    *n = 0;
    *objs = NULL;
    get_bytes(&r, magic, 4);
    cnt = get_u64(&r);
    if (r.failed || memcmp(magic, "XFA1", 4) != 0 || cnt > len) {
        xfer_adapter_set_error("attribute table: not an XFA1 table (%zu bytes)", len);
        return XFER_ERR_PROTOCOL;
    }
    o = calloc(cnt ? (size_t) cnt : 1, sizeof(*o));
    if (!o)
        return XFER_ERR_NO_MEMORY;
    for (i = 0; i < (int) cnt && !r.failed; i++) {
        xfer_adapter_var_t *v = &o[i];
        uint64_t na;
        get_str(&r, v->name, sizeof(v->name));
        v->type = (xfer_type_t) get_u64(&r);
        v->ndims = (int) get_u64(&r);
        if (v->ndims < 0 || v->ndims > XFER_MAX_DIMS) {
            r.failed = 1;
            break;
        }
        for (d = 0; d < v->ndims; d++)
            v->dims[d] = get_u64(&r);
        na = get_u64(&r);
        if (r.failed || na > len)
            break;
        v->attrs = na ? calloc((size_t) na, sizeof(*v->attrs)) : NULL;
        if (na && !v->attrs) {
            r.failed = 1;
            break;
        }
        for (a = 0; a < (int) na && !r.failed; a++) {
            xfer_adapter_attr_t *at = &v->attrs[a];
            size_t nb;
            get_str(&r, at->name, sizeof(at->name));
            at->is_text = (int) get_u64(&r);
            at->type = (xfer_type_t) get_u64(&r);
            at->count = (size_t) get_u64(&r);
            at->shape_set = (int) get_u64(&r);
            at->ndims = (int) get_u64(&r);
            if (at->ndims < 0 || at->ndims > XFER_MAX_DIMS) {
                r.failed = 1;
                break;
            }
            for (d = 0; d < at->ndims; d++)
                at->dims[d] = get_u64(&r);
            nb = attr_bytes(at);
            if (r.failed || (!at->is_text && xfer_type_size(at->type) == 0) || nb > len) {
                r.failed = 1;
                break;
            }
            at->data = malloc(nb ? nb : 1);
            v->nattrs = a + 1;
            if (!at->data) {
                r.failed = 1;
                break;
            }
            get_bytes(&r, at->data, nb);
        }
    }
    if (r.failed || r.off != len) {
        xfer_adapter_table_free((int) cnt, &o);
        xfer_adapter_set_error("attribute table: malformed (%zu bytes)", len);
        return XFER_ERR_PROTOCOL;
    }
    *n = (int) cnt;
    *objs = o;
    return XFER_SUCCESS;
}

void xfer_adapter_table_free(int n, xfer_adapter_var_t **objs)
{
    int i;
    if (!objs || !*objs)
        return;
    for (i = 0; i < n; i++)
        xfer_adapter_var_clear(&(*objs)[i]);
    free(*objs);
    *objs = NULL;
}
