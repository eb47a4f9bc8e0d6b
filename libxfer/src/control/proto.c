/* SPDX-License-Identifier: BSD-3-Clause */
/* Control-plane messages (docs/control-protocol.md): the in-memory form, the MessagePack codec,
 * the per-operation schemas, tokens and error codes.
 *
 * Decoding untrusted input happens in three passes. A bounded scan walks the raw bytes first and
 * checks the shape against the limits of control.h (types, counts, lengths, nesting) before
 * anything is allocated, so that a few bytes declaring a list of 2^32 entries cannot make
 * msgpack-c reserve memory for them. msgpack_unpack_next() then parses the checked bytes and the
 * result is converted, checking what the scan does not see (keys, NUL bytes, integer range).
 *
 * One deviation from "no message on failure": a message that decodes cleanly but carries an
 * unsupported "v" fails with XFER_ERR_PROTOCOL and still hands the message over in *m, so that
 * a server can answer the request's "id" with err "version". Callers free *m either way. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <msgpack.h>

#include <xfer/control.h>

#include "../core/core.h"

typedef struct ctl_list {
    xfer_ctl_msg_t **v;
    int n, cap;
} ctl_list_t;

typedef struct ctl_field {
    char key[XFER_CTL_MAX_KEY + 1];
    xfer_ctl_type_t type;
    union {
        int64_t i;
        double d;
        int b;
        char *s;
        ctl_list_t l;
    } u;
} ctl_field_t;

struct xfer_ctl_msg {
    int item; /* an entry of a list: no "v"/"op", scalars only */
    int n, cap;
    ctl_field_t *f;
};

/* ---- helpers ------------------------------------------------------------------------------ */

/* Printable, bounded rendering of untrusted bytes for error messages. */
static void safe_text(char *out, size_t cap, const char *s, size_t len)
{
    size_t o = 0;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) s[i];
        if (o + 8 >= cap) {
            memcpy(out + o, "...", 4);
            return;
        }
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            out[o++] = (char) c;
        else
            o += (size_t) snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o] = '\0';
}

static const char *type_name(xfer_ctl_type_t t)
{
    switch (t) {
    case XFER_CTL_INT:
        return "an integer";
    case XFER_CTL_DBL:
        return "a float";
    case XFER_CTL_BOOL:
        return "a boolean";
    case XFER_CTL_STR:
        return "a string";
    case XFER_CTL_LIST:
        return "a list";
    case XFER_CTL_NONE:
        break;
    }
    return "absent";
}

static ctl_field_t *find(const xfer_ctl_msg_t *m, const char *key)
{
    if (!m || !key)
        return NULL;
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->f[i].key, key) == 0)
            return &m->f[i];
    return NULL;
}

static void msg_destroy(xfer_ctl_msg_t *m);

static void field_clear(ctl_field_t *f)
{
    if (f->type == XFER_CTL_STR) {
        xfer_free(f->u.s);
    } else if (f->type == XFER_CTL_LIST) {
        for (int i = 0; i < f->u.l.n; i++)
            msg_destroy(f->u.l.v[i]);
        xfer_free(f->u.l.v);
    }
    f->type = XFER_CTL_NONE;
}

static void msg_destroy(xfer_ctl_msg_t *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n; i++)
        field_clear(&m->f[i]);
    xfer_free(m->f);
    xfer_free(m);
}

static xfer_status_t check_key(const char *key)
{
    size_t n;

    if (!key)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "key is NULL");
    n = strlen(key);
    if (n == 0 || n > XFER_CTL_MAX_KEY)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "key \"%.40s\" has %zu bytes (1 to %d allowed)", key,
                        n, XFER_CTL_MAX_KEY);
    return XFER_SUCCESS;
}

/* The field called @p key, cleared for a new value; appended when absent. */
static xfer_status_t slot(xfer_ctl_msg_t *m, const char *key, ctl_field_t **out)
{
    xfer_status_t st;
    ctl_field_t *f;

    if (!m)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "message is NULL");
    XFER_CHECK_GOTO(check_key(key), st, out_err);
    f = find(m, key);
    if (f) {
        field_clear(f);
        *out = f;
        return XFER_SUCCESS;
    }
    if (m->n >= XFER_CTL_MAX_FIELDS)
        return XFER_ERR(XFER_ERR_TOO_LARGE, "cannot add field \"%s\": a message has at most %d",
                        key, XFER_CTL_MAX_FIELDS);
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 8;
        ctl_field_t *nf = xfer_realloc_array(m->f, (size_t) cap, sizeof(*nf));
        if (!nf)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for field \"%s\"", key);
        m->f = nf;
        m->cap = cap;
    }
    f = &m->f[m->n++];
    memset(f, 0, sizeof(*f));
    memcpy(f->key, key, strlen(key) + 1);
    *out = f;
    return XFER_SUCCESS;
out_err:
    return st;
}

/* ---- building and reading ----------------------------------------------------------------- */

XFER_PUBLIC xfer_status_t xfer_ctl_msg_new(const char *op, xfer_ctl_msg_t **m)
{
    xfer_status_t st;
    xfer_ctl_msg_t *msg;

    if (!m)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "m is NULL");
    *m = NULL;
    msg = xfer_calloc(1, sizeof(*msg));
    if (!msg)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for a message");
    if (!op) {
        msg->item = 1;
    } else {
        XFER_CHECK_GOTO(xfer_ctl_set_int(msg, "v", XFER_CTL_PROTOCOL), st, fail);
        XFER_CHECK_GOTO(xfer_ctl_set_str(msg, "op", op), st, fail);
    }
    *m = msg;
    return XFER_SUCCESS;
fail:
    msg_destroy(msg);
    return st;
}

XFER_PUBLIC void xfer_ctl_msg_free(xfer_ctl_msg_t **m)
{
    if (!m)
        return;
    msg_destroy(*m);
    *m = NULL;
}

XFER_PUBLIC xfer_status_t xfer_ctl_set_str(xfer_ctl_msg_t *m, const char *key, const char *v)
{
    xfer_status_t st;
    ctl_field_t *f;
    size_t n;
    char *copy;

    if (!v)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "value of \"%.40s\" is NULL", key ? key : "");
    n = strlen(v);
    if (n > XFER_CTL_MAX_STR)
        return XFER_ERR(XFER_ERR_TOO_LARGE, "value of \"%.40s\": %zu bytes (at most %d)",
                        key ? key : "", n, XFER_CTL_MAX_STR);
    /* Copy first: @p v may be the field's current value. */
    copy = xfer_malloc(n + 1);
    if (!copy)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for a string of %zu bytes", n);
    memcpy(copy, v, n + 1);
    st = slot(m, key, &f);
    if (st != XFER_SUCCESS) {
        xfer_free(copy);
        return st;
    }
    f->type = XFER_CTL_STR;
    f->u.s = copy;
    return XFER_SUCCESS;
}

XFER_PUBLIC xfer_status_t xfer_ctl_set_int(xfer_ctl_msg_t *m, const char *key, int64_t v)
{
    ctl_field_t *f;
    xfer_status_t st = slot(m, key, &f);

    if (st != XFER_SUCCESS)
        return st;
    f->type = XFER_CTL_INT;
    f->u.i = v;
    return XFER_SUCCESS;
}

XFER_PUBLIC xfer_status_t xfer_ctl_set_dbl(xfer_ctl_msg_t *m, const char *key, double v)
{
    ctl_field_t *f;
    xfer_status_t st = slot(m, key, &f);

    if (st != XFER_SUCCESS)
        return st;
    f->type = XFER_CTL_DBL;
    f->u.d = v;
    return XFER_SUCCESS;
}

XFER_PUBLIC xfer_status_t xfer_ctl_set_bool(xfer_ctl_msg_t *m, const char *key, int v)
{
    ctl_field_t *f;
    xfer_status_t st = slot(m, key, &f);

    if (st != XFER_SUCCESS)
        return st;
    f->type = XFER_CTL_BOOL;
    f->u.b = v != 0;
    return XFER_SUCCESS;
}

XFER_PUBLIC xfer_status_t xfer_ctl_add_item(xfer_ctl_msg_t *m, const char *key,
                                            xfer_ctl_msg_t **item)
{
    xfer_status_t st;
    ctl_field_t *f;
    ctl_list_t *l;
    xfer_ctl_msg_t *it;

    if (!m || !item)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "message or item is NULL");
    *item = NULL;
    if (m->item)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "list items hold scalars only (nesting depth is at most 2)");
    XFER_CHECK_GOTO(check_key(key), st, out);
    f = find(m, key);
    if (f && f->type != XFER_CTL_LIST)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "field \"%s\" is %s, not a list", key,
                        type_name(f->type));
    if (!f) {
        XFER_CHECK_GOTO(slot(m, key, &f), st, out);
        f->type = XFER_CTL_LIST;
    }
    l = &f->u.l;
    if (l->n >= XFER_CTL_MAX_ITEMS)
        return XFER_ERR(XFER_ERR_TOO_LARGE, "list \"%s\" has %d entries already (at most %d)", key,
                        l->n, XFER_CTL_MAX_ITEMS);
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        xfer_ctl_msg_t **nv = xfer_realloc_array(l->v, (size_t) cap, sizeof(*nv));
        if (!nv)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for list \"%s\"", key);
        l->v = nv;
        l->cap = cap;
    }
    XFER_CHECK_GOTO(xfer_ctl_msg_new(NULL, &it), st, out);
    l->v[l->n++] = it;
    *item = it;
    return XFER_SUCCESS;
out:
    return st;
}

XFER_PUBLIC const char *xfer_ctl_op(const xfer_ctl_msg_t *m)
{
    const ctl_field_t *f = m && !m->item ? find(m, "op") : NULL;
    return f && f->type == XFER_CTL_STR ? f->u.s : "";
}

XFER_PUBLIC xfer_ctl_type_t xfer_ctl_type(const xfer_ctl_msg_t *m, const char *key)
{
    const ctl_field_t *f = find(m, key);
    return f ? f->type : XFER_CTL_NONE;
}

XFER_PUBLIC const char *xfer_ctl_str(const xfer_ctl_msg_t *m, const char *key, const char *dflt)
{
    const ctl_field_t *f = find(m, key);
    return f && f->type == XFER_CTL_STR ? f->u.s : dflt;
}

XFER_PUBLIC int64_t xfer_ctl_int(const xfer_ctl_msg_t *m, const char *key, int64_t dflt)
{
    const ctl_field_t *f = find(m, key);
    return f && f->type == XFER_CTL_INT ? f->u.i : dflt;
}

XFER_PUBLIC double xfer_ctl_dbl(const xfer_ctl_msg_t *m, const char *key, double dflt)
{
    const ctl_field_t *f = find(m, key);
    if (f && f->type == XFER_CTL_DBL)
        return f->u.d;
    if (f && f->type == XFER_CTL_INT)
        return (double) f->u.i;
    return dflt;
}

XFER_PUBLIC int xfer_ctl_bool(const xfer_ctl_msg_t *m, const char *key, int dflt)
{
    const ctl_field_t *f = find(m, key);
    return f && f->type == XFER_CTL_BOOL ? f->u.b : dflt;
}

XFER_PUBLIC int xfer_ctl_nitems(const xfer_ctl_msg_t *m, const char *key)
{
    const ctl_field_t *f = find(m, key);
    return f && f->type == XFER_CTL_LIST ? f->u.l.n : 0;
}

XFER_PUBLIC const xfer_ctl_msg_t *xfer_ctl_item(const xfer_ctl_msg_t *m, const char *key, int i)
{
    const ctl_field_t *f = find(m, key);
    if (!f || f->type != XFER_CTL_LIST || i < 0 || i >= f->u.l.n)
        return NULL;
    return f->u.l.v[i];
}

/* ---- encoding ----------------------------------------------------------------------------- */

typedef struct enc_buf {
    char *p;
    size_t len, cap, max;
    int over, nomem;
} enc_buf_t;

/* msgpack-c write callback: a growing buffer that refuses to pass @c max bytes. */
static int enc_write(void *data, const char *buf, size_t len)
{
    enc_buf_t *b = data;

    if (len > b->max - b->len) {
        b->over = 1;
        return -1;
    }
    if (len > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 256;
        char *np;
        while (cap - b->len < len)
            cap *= 2;
        if (cap > b->max)
            cap = b->max;
        np = realloc(b->p, cap);
        if (!np) {
            b->nomem = 1;
            return -1;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, buf, len);
    b->len += len;
    return 0;
}

static int pack_str(msgpack_packer *pk, const char *s)
{
    size_t n = strlen(s);
    if (msgpack_pack_str(pk, n) != 0)
        return -1;
    return msgpack_pack_str_body(pk, s, n);
}

static int pack_map(msgpack_packer *pk, const xfer_ctl_msg_t *m)
{
    if (msgpack_pack_map(pk, (size_t) m->n) != 0)
        return -1;
    for (int i = 0; i < m->n; i++) {
        const ctl_field_t *f = &m->f[i];
        int rc = pack_str(pk, f->key);
        if (rc != 0)
            return rc;
        switch (f->type) {
        case XFER_CTL_INT:
            rc = msgpack_pack_int64(pk, f->u.i);
            break;
        case XFER_CTL_DBL:
            rc = msgpack_pack_double(pk, f->u.d);
            break;
        case XFER_CTL_BOOL:
            rc = f->u.b ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
            break;
        case XFER_CTL_STR:
            rc = pack_str(pk, f->u.s);
            break;
        case XFER_CTL_LIST:
            rc = msgpack_pack_array(pk, (size_t) f->u.l.n);
            for (int j = 0; rc == 0 && j < f->u.l.n; j++)
                rc = pack_map(pk, f->u.l.v[j]);
            break;
        case XFER_CTL_NONE:
            rc = -1;
            break;
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

XFER_PUBLIC xfer_status_t xfer_ctl_encode(const xfer_ctl_msg_t *m, size_t max, void **buf,
                                          size_t *len)
{
    enc_buf_t b = {NULL, 0, 0, max, 0, 0};
    msgpack_packer pk;

    if (!m || !buf || !len)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "message, buf or len is NULL");
    *buf = NULL;
    *len = 0;
    msgpack_packer_init(&pk, &b, enc_write);
    if (pack_map(&pk, m) != 0) {
        free(b.p);
        if (b.nomem)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory to encode \"%s\"", xfer_ctl_op(m));
        if (b.over)
            return XFER_ERR(XFER_ERR_TOO_LARGE, "message \"%s\" encodes to more than %zu bytes",
                            xfer_ctl_op(m), max);
        return XFER_ERR(XFER_ERR_INTERNAL, "cannot encode \"%s\"", xfer_ctl_op(m));
    }
    *buf = b.p;
    *len = b.len;
    return XFER_SUCCESS;
}

/* ---- decoding, pass 1: the bounded scan -------------------------------------------------- */

typedef enum mp_kind {
    MP_NIL,
    MP_BOOL,
    MP_INT,
    MP_FLOAT,
    MP_STR,
    MP_BIN,
    MP_ARRAY,
    MP_MAP,
    MP_EXT
} mp_kind_t;

static const char *mp_kind_name(mp_kind_t k)
{
    static const char *names[] = {"nil",     "a boolean", "an integer",
                                  "a float", "a string",  "binary data",
                                  "a list",  "a map",     "an extension"};
    return names[k];
}

typedef struct scan {
    const uint8_t *p;
    size_t len, pos;
} scan_t;

static xfer_status_t need(const scan_t *s, uint64_t n)
{
    if (n > s->len - s->pos)
        return XFER_ERR(XFER_ERR_PROTOCOL,
                        "truncated: %" PRIu64 " bytes needed at offset %zu of a %zu-byte message",
                        n, s->pos, s->len);
    return XFER_SUCCESS;
}

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Read one header at s->pos. Scalars (nil, bool, int, float) are consumed whole; for str, bin
 * and ext *n is the payload size and s->pos is left at the payload; for lists and maps *n is
 * the count. */
static xfer_status_t scan_head(scan_t *s, mp_kind_t *kind, uint64_t *n)
{
    xfer_status_t st;
    int w = 0;        /* width of the length or count that follows */
    size_t fixed = 0; /* payload bytes of fixed-size types */
    uint8_t b;

    XFER_CHECK_GOTO(need(s, 1), st, out);
    b = s->p[s->pos++];
    *n = 0;
    if (b <= 0x7f || b >= 0xe0) {
        *kind = MP_INT;
        return XFER_SUCCESS;
    }
    if (b <= 0x8f) {
        *kind = MP_MAP;
        *n = b & 0x0f;
        return XFER_SUCCESS;
    }
    if (b <= 0x9f) {
        *kind = MP_ARRAY;
        *n = b & 0x0f;
        return XFER_SUCCESS;
    }
    if (b <= 0xbf) {
        *kind = MP_STR;
        *n = b & 0x1f;
        return XFER_SUCCESS;
    }
    switch (b) {
    case 0xc0:
        *kind = MP_NIL;
        return XFER_SUCCESS;
    case 0xc2:
    case 0xc3:
        *kind = MP_BOOL;
        return XFER_SUCCESS;
    case 0xc4:
    case 0xc5:
    case 0xc6:
        *kind = MP_BIN;
        w = 1 << (b - 0xc4);
        break;
    case 0xc7:
    case 0xc8:
    case 0xc9:
        *kind = MP_EXT;
        w = 1 << (b - 0xc7);
        break;
    case 0xca:
    case 0xcb:
        *kind = MP_FLOAT;
        fixed = b == 0xca ? 4 : 8;
        break;
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf:
        *kind = MP_INT;
        fixed = (size_t) 1 << (b - 0xcc);
        break;
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3:
        *kind = MP_INT;
        fixed = (size_t) 1 << (b - 0xd0);
        break;
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8:
        *kind = MP_EXT;
        *n = (uint64_t) 1 << (b - 0xd4);
        return XFER_SUCCESS;
    case 0xd9:
    case 0xda:
    case 0xdb:
        *kind = MP_STR;
        w = 1 << (b - 0xd9);
        break;
    case 0xdc:
    case 0xdd:
        *kind = MP_ARRAY;
        w = b == 0xdc ? 2 : 4;
        break;
    case 0xde:
    case 0xdf:
        *kind = MP_MAP;
        w = b == 0xde ? 2 : 4;
        break;
    default: /* 0xc1 */
        return XFER_ERR(XFER_ERR_PROTOCOL, "byte 0x%02x at offset %zu is not MessagePack", b,
                        s->pos - 1);
    }
    if (fixed) {
        XFER_CHECK_GOTO(need(s, fixed), st, out);
        s->pos += fixed;
        return XFER_SUCCESS;
    }
    XFER_CHECK_GOTO(need(s, (uint64_t) w), st, out);
    *n = be(s->p + s->pos, w);
    s->pos += (size_t) w;
    return XFER_SUCCESS;
out:
    return st;
}

/* Scan the @p n entries of a map whose header was just read: the top level or (@p item) an
 * entry of a list. @p where prefixes messages ("" or "field \"k\"[3]: "). */
static xfer_status_t scan_map(scan_t *s, uint64_t n, int item, const char *where)
{
    xfer_status_t st = XFER_SUCCESS;
    char kname[3 * XFER_CTL_MAX_KEY + 16];
    char sub[sizeof(kname) + 48];

    if (n > XFER_CTL_MAX_FIELDS)
        return XFER_ERR(XFER_ERR_PROTOCOL, "%sa map of %" PRIu64 " fields (at most %d)", where, n,
                        XFER_CTL_MAX_FIELDS);
    for (uint64_t i = 0; i < n; i++) {
        mp_kind_t kind;
        uint64_t len;

        XFER_CHECK_GOTO(scan_head(s, &kind, &len), st, out);
        if (kind != MP_STR)
            return XFER_ERR(XFER_ERR_PROTOCOL, "%skey #%" PRIu64 " is %s, not a string", where,
                            i + 1, mp_kind_name(kind));
        if (len == 0 || len > XFER_CTL_MAX_KEY)
            return XFER_ERR(XFER_ERR_PROTOCOL,
                            "%skey #%" PRIu64 " has %" PRIu64 " bytes (1 to %d allowed)", where,
                            i + 1, len, XFER_CTL_MAX_KEY);
        XFER_CHECK_GOTO(need(s, len), st, out);
        safe_text(kname, sizeof(kname), (const char *) s->p + s->pos, (size_t) len);
        s->pos += (size_t) len;

        XFER_CHECK_GOTO(scan_head(s, &kind, &len), st, out);
        switch (kind) {
        case MP_INT:
        case MP_FLOAT:
        case MP_BOOL:
            break;
        case MP_STR:
            if (len > XFER_CTL_MAX_STR)
                return XFER_ERR(XFER_ERR_PROTOCOL,
                                "%sfield \"%s\": string of %" PRIu64 " bytes (at most %d)", where,
                                kname, len, XFER_CTL_MAX_STR);
            XFER_CHECK_GOTO(need(s, len), st, out);
            s->pos += (size_t) len;
            break;
        case MP_ARRAY:
            if (item)
                return XFER_ERR(XFER_ERR_PROTOCOL,
                                "%sfield \"%s\": a list inside a list entry (nesting deeper "
                                "than 2)",
                                where, kname);
            if (len > XFER_CTL_MAX_ITEMS)
                return XFER_ERR(XFER_ERR_PROTOCOL,
                                "field \"%s\": a list of %" PRIu64 " entries (at most %d)", kname,
                                len, XFER_CTL_MAX_ITEMS);
            /* every entry takes at least one byte */
            XFER_CHECK_GOTO(need(s, len), st, out);
            for (uint64_t j = 0; j < len; j++) {
                mp_kind_t ek;
                uint64_t en;
                snprintf(sub, sizeof(sub), "field \"%s\"[%" PRIu64 "]: ", kname, j);
                XFER_CHECK_GOTO(scan_head(s, &ek, &en), st, out);
                if (ek != MP_MAP)
                    return XFER_ERR(XFER_ERR_PROTOCOL, "%s%s, not a map", sub, mp_kind_name(ek));
                XFER_CHECK_GOTO(scan_map(s, en, 1, sub), st, out);
            }
            break;
        case MP_MAP:
            return XFER_ERR(XFER_ERR_PROTOCOL,
                            "%sfield \"%s\": a map is not allowed here (only lists of maps nest)",
                            where, kname);
        case MP_NIL:
            return XFER_ERR(XFER_ERR_PROTOCOL, "%sfield \"%s\": nil is not allowed", where, kname);
        case MP_BIN:
            return XFER_ERR(XFER_ERR_PROTOCOL,
                            "%sfield \"%s\": binary data is not allowed (strings only)", where,
                            kname);
        case MP_EXT:
            return XFER_ERR(XFER_ERR_PROTOCOL,
                            "%sfield \"%s\": a MessagePack extension type is not allowed", where,
                            kname);
        }
    }
out:
    return st;
}

static xfer_status_t scan_msg(const void *buf, size_t len)
{
    scan_t s = {buf, len, 0};
    xfer_status_t st;
    mp_kind_t kind;
    uint64_t n;

    XFER_CHECK_GOTO(scan_head(&s, &kind, &n), st, out);
    if (kind != MP_MAP)
        return XFER_ERR(XFER_ERR_PROTOCOL, "the message is %s, not a map", mp_kind_name(kind));
    XFER_CHECK_GOTO(scan_map(&s, n, 0, ""), st, out);
    if (s.pos != len)
        return XFER_ERR(XFER_ERR_PROTOCOL, "%zu trailing bytes after the %zu-byte message",
                        len - s.pos, s.pos);
out:
    return st;
}

/* ---- decoding, pass 3: conversion --------------------------------------------------------- */

static xfer_status_t conv_map(const msgpack_object *o, int item, const char *where,
                              xfer_ctl_msg_t **out);

/* @p kname: the field's key made printable, for messages */
static xfer_status_t conv_value(const msgpack_object *v, ctl_field_t *f, const char *kname,
                                const char *where)
{
    xfer_status_t st;
    char sub[3 * XFER_CTL_MAX_KEY + 64];

    switch (v->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        if (v->via.u64 > (uint64_t) INT64_MAX)
            return XFER_ERR(XFER_ERR_PROTOCOL,
                            "%sfield \"%s\": integer %" PRIu64 " does not fit in 64 signed bits",
                            where, kname, v->via.u64);
        f->type = XFER_CTL_INT;
        f->u.i = (int64_t) v->via.u64;
        return XFER_SUCCESS;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        f->type = XFER_CTL_INT;
        f->u.i = v->via.i64;
        return XFER_SUCCESS;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        f->type = XFER_CTL_DBL;
        f->u.d = v->via.f64;
        return XFER_SUCCESS;
    case MSGPACK_OBJECT_BOOLEAN:
        f->type = XFER_CTL_BOOL;
        f->u.b = v->via.boolean ? 1 : 0;
        return XFER_SUCCESS;
    case MSGPACK_OBJECT_STR:
        if (memchr(v->via.str.ptr, '\0', v->via.str.size))
            return XFER_ERR(XFER_ERR_PROTOCOL, "%sfield \"%s\": string holds a NUL byte", where,
                            kname);
        f->u.s = xfer_malloc(v->via.str.size + 1);
        if (!f->u.s)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for field \"%s\"", kname);
        memcpy(f->u.s, v->via.str.ptr, v->via.str.size);
        f->u.s[v->via.str.size] = '\0';
        f->type = XFER_CTL_STR;
        return XFER_SUCCESS;
    case MSGPACK_OBJECT_ARRAY:
        f->type = XFER_CTL_LIST;
        f->u.l.v = xfer_calloc(v->via.array.size, sizeof(*f->u.l.v));
        if (!f->u.l.v)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for list \"%s\"", kname);
        f->u.l.cap = (int) v->via.array.size;
        for (uint32_t j = 0; j < v->via.array.size; j++) {
            snprintf(sub, sizeof(sub), "field \"%s\"[%u]: ", kname, (unsigned) j);
            XFER_CHECK_GOTO(conv_map(&v->via.array.ptr[j], 1, sub, &f->u.l.v[j]), st, out);
            f->u.l.n++;
        }
        return XFER_SUCCESS;
    default:
        break;
    }
    /* the scan admits nothing else */
    return XFER_ERR(XFER_ERR_PROTOCOL, "%sfield \"%s\": unexpected MessagePack type %d", where,
                    kname, (int) v->type);
out:
    return st;
}

static xfer_status_t conv_map(const msgpack_object *o, int item, const char *where,
                              xfer_ctl_msg_t **out)
{
    xfer_status_t st;
    xfer_ctl_msg_t *m;
    char kname[3 * XFER_CTL_MAX_KEY + 16];

    if (o->type != MSGPACK_OBJECT_MAP)
        return XFER_ERR(XFER_ERR_PROTOCOL, "%snot a map", where);
    m = xfer_calloc(1, sizeof(*m));
    if (!m)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for a message");
    m->item = item;
    m->f = xfer_calloc(o->via.map.size, sizeof(*m->f));
    if (!m->f) {
        xfer_free(m);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for a message");
    }
    m->cap = (int) o->via.map.size;
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *k = &o->via.map.ptr[i].key;
        ctl_field_t *f = &m->f[m->n];

        if (k->type != MSGPACK_OBJECT_STR || k->via.str.size == 0 ||
            k->via.str.size > XFER_CTL_MAX_KEY) {
            st = XFER_ERR(XFER_ERR_PROTOCOL, "%skey #%u is not a string of 1 to %d bytes", where,
                          (unsigned) i + 1, XFER_CTL_MAX_KEY);
            goto fail;
        }
        safe_text(kname, sizeof(kname), k->via.str.ptr, k->via.str.size);
        if (memchr(k->via.str.ptr, '\0', k->via.str.size)) {
            st = XFER_ERR(XFER_ERR_PROTOCOL, "%skey \"%s\" holds a NUL byte", where, kname);
            goto fail;
        }
        memcpy(f->key, k->via.str.ptr, k->via.str.size);
        f->key[k->via.str.size] = '\0';
        if (find(m, f->key)) {
            st = XFER_ERR(XFER_ERR_PROTOCOL, "%sduplicate key \"%s\"", where, kname);
            goto fail;
        }
        /* count the field before filling it so that a failure frees what it holds */
        m->n++;
        XFER_CHECK_GOTO(conv_value(&o->via.map.ptr[i].val, f, kname, where), st, fail);
    }
    *out = m;
    return XFER_SUCCESS;
fail:
    msg_destroy(m);
    return st;
}

XFER_PUBLIC xfer_status_t xfer_ctl_decode(const void *buf, size_t len, size_t max,
                                          xfer_ctl_msg_t **m)
{
    xfer_status_t st;
    msgpack_unpacked up;
    msgpack_unpack_return rc;
    xfer_ctl_msg_t *msg = NULL;
    size_t off = 0;
    const ctl_field_t *v, *op;

    if (!m || (!buf && len))
        return XFER_ERR(XFER_ERR_INVALID_ARG, "buf or m is NULL");
    *m = NULL;
    if (len == 0)
        return XFER_ERR(XFER_ERR_PROTOCOL, "empty message");
    if (len > max)
        return XFER_ERR(XFER_ERR_PROTOCOL, "message of %zu bytes (at most %zu)", len, max);
    XFER_CHECK_GOTO(scan_msg(buf, len), st, out);

    msgpack_unpacked_init(&up);
    rc = msgpack_unpack_next(&up, buf, len, &off);
    if (rc != MSGPACK_UNPACK_SUCCESS || off != len) {
        msgpack_unpacked_destroy(&up);
        return XFER_ERR(rc == MSGPACK_UNPACK_NOMEM_ERROR ? XFER_ERR_NO_MEMORY : XFER_ERR_PROTOCOL,
                        "msgpack-c cannot parse the message (code %d, %zu of %zu bytes)", (int) rc,
                        off, len);
    }
    st = conv_map(&up.data, 0, "", &msg);
    msgpack_unpacked_destroy(&up);
    if (st != XFER_SUCCESS)
        goto out;

    v = find(msg, "v");
    if (!v) {
        st = XFER_ERR(XFER_ERR_PROTOCOL, "missing \"v\" (the protocol version)");
        goto fail;
    }
    if (v->type != XFER_CTL_INT) {
        st = XFER_ERR(XFER_ERR_PROTOCOL, "\"v\" is %s, not an integer", type_name(v->type));
        goto fail;
    }
    if (v->u.i != XFER_CTL_PROTOCOL) {
        /* handed over: the caller answers with err "version" */
        *m = msg;
        return XFER_ERR(XFER_ERR_PROTOCOL,
                        "protocol version %" PRId64 " is not supported (this side speaks %d)",
                        v->u.i, XFER_CTL_PROTOCOL);
    }
    op = find(msg, "op");
    if (!op) {
        st = XFER_ERR(XFER_ERR_PROTOCOL, "missing \"op\"");
        goto fail;
    }
    if (op->type != XFER_CTL_STR) {
        st = XFER_ERR(XFER_ERR_PROTOCOL, "\"op\" is %s, not a string", type_name(op->type));
        goto fail;
    }
    *m = msg;
    return XFER_SUCCESS;
fail:
    msg_destroy(msg);
out:
    return st;
}

/* ---- validation --------------------------------------------------------------------------- */

enum { OP_REQUEST, OP_REPLY, OP_NOTICE };

typedef struct fspec {
    const char *key;
    xfer_ctl_type_t type;
    int64_t min, max;
} fspec_t;

#define ANY_INT INT64_MIN, INT64_MAX
#define STR_    XFER_CTL_STR, 0, 0
#define SESSION                                                                                    \
    {                                                                                              \
        "session", XFER_CTL_INT, 1, INT64_MAX                                                      \
    }
#define CHANNEL                                                                                    \
    {                                                                                              \
        "channel", STR_                                                                            \
    }
#define SIDE                                                                                       \
    {                                                                                              \
        "side", XFER_CTL_INT, 0, 1                                                                 \
    }

typedef struct opspec {
    const char *op;
    int kind;
    fspec_t f[6];
} opspec_t;

static const opspec_t op_table[] = {
    {"register",
     OP_REQUEST,
     {{"component", STR_},
      {"nprocs", XFER_CTL_INT, 1, INT64_MAX},
      {"pid", XFER_CTL_INT, ANY_INT},
      {"host", STR_}}},
    {"heartbeat", OP_REQUEST, {SESSION}},
    {"publish", OP_REQUEST, {SESSION, CHANNEL, {"port", STR_}}},
    {"lookup", OP_REQUEST, {SESSION, CHANNEL, {"wait_ms", XFER_CTL_INT, 0, INT64_MAX}}},
    {"step",
     OP_REQUEST,
     {SESSION,
      CHANNEL,
      SIDE,
      {"step", XFER_CTL_INT, 0, INT64_MAX},
      {"bytes", XFER_CTL_INT, 0, INT64_MAX}}},
    {"ack", OP_REQUEST, {SESSION, CHANNEL, SIDE, {"released", XFER_CTL_INT, 0, INT64_MAX}}},
    {"bye", OP_REQUEST, {SESSION}},
    {"exited", OP_REQUEST, {{"component", STR_}, {"code", XFER_CTL_INT, ANY_INT}}},
    {"fail", OP_REQUEST, {SESSION, {"reason", STR_}}},
    {"status", OP_REQUEST, {{NULL, XFER_CTL_NONE, 0, 0}}},
    {"stop", OP_REQUEST, {{NULL, XFER_CTL_NONE, 0, 0}}},
    {"reply", OP_REPLY, {{"id", XFER_CTL_INT, 0, INT64_MAX}, {"ok", XFER_CTL_BOOL, 0, 0}}},
    {"failure", OP_NOTICE, {{"component", STR_}, {"reason", STR_}}},
    {"shutdown", OP_NOTICE, {{"reason", STR_}}},
};

static const fspec_t request_fields[] = {
    {"id", XFER_CTL_INT, 1, INT64_MAX}, {"wf", STR_}, {"tok", STR_}};
static const fspec_t error_fields[] = {{"err", STR_}, {"msg", STR_}};

static xfer_status_t check_field(const xfer_ctl_msg_t *m, const char *op, const fspec_t *fs)
{
    const ctl_field_t *f = find(m, fs->key);

    if (!f)
        return XFER_ERR(XFER_ERR_PROTOCOL, "%s: field \"%s\" is missing", op, fs->key);
    if (f->type != fs->type)
        return XFER_ERR(XFER_ERR_PROTOCOL, "%s: field \"%s\" is %s, expected %s", op, fs->key,
                        type_name(f->type), type_name(fs->type));
    if (fs->type == XFER_CTL_INT && (f->u.i < fs->min || f->u.i > fs->max)) {
        if (fs->max == INT64_MAX)
            return XFER_ERR(XFER_ERR_PROTOCOL,
                            "%s: field \"%s\" is %" PRId64 ", expected an integer >= %" PRId64, op,
                            fs->key, f->u.i, fs->min);
        return XFER_ERR(XFER_ERR_PROTOCOL,
                        "%s: field \"%s\" is %" PRId64 ", expected %" PRId64 " to %" PRId64, op,
                        fs->key, f->u.i, fs->min, fs->max);
    }
    return XFER_SUCCESS;
}

XFER_PUBLIC xfer_status_t xfer_ctl_validate(const xfer_ctl_msg_t *m)
{
    xfer_status_t st = XFER_SUCCESS;
    const opspec_t *spec = NULL;
    const char *op;
    char opname[3 * 40 + 8];

    if (!m)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "message is NULL");
    if (m->item)
        return XFER_ERR(XFER_ERR_PROTOCOL, "a list entry is not a message");
    if (xfer_ctl_int(m, "v", -1) != XFER_CTL_PROTOCOL)
        return XFER_ERR(XFER_ERR_PROTOCOL, "\"v\" is not %d", XFER_CTL_PROTOCOL);
    op = xfer_ctl_op(m);
    for (size_t i = 0; i < sizeof(op_table) / sizeof(op_table[0]); i++)
        if (strcmp(op_table[i].op, op) == 0)
            spec = &op_table[i];
    if (!spec) {
        safe_text(opname, sizeof(opname), op, strlen(op));
        return XFER_ERR(XFER_ERR_PROTOCOL, "unknown op \"%s\"", opname);
    }
    if (spec->kind == OP_REQUEST)
        for (size_t i = 0; i < sizeof(request_fields) / sizeof(request_fields[0]); i++)
            XFER_CHECK_GOTO(check_field(m, op, &request_fields[i]), st, out);
    for (int i = 0; i < 6 && spec->f[i].key; i++)
        XFER_CHECK_GOTO(check_field(m, op, &spec->f[i]), st, out);
    if (spec->kind == OP_REPLY && !xfer_ctl_bool(m, "ok", 0))
        for (size_t i = 0; i < sizeof(error_fields) / sizeof(error_fields[0]); i++)
            XFER_CHECK_GOTO(check_field(m, op, &error_fields[i]), st, out);
out:
    return st;
}

/* ---- JSON --------------------------------------------------------------------------------- */

typedef struct jbuf {
    char *p;
    size_t len, cap;
    int fail;
} jbuf_t;

static void jput(jbuf_t *j, const char *s, size_t n)
{
    if (j->fail)
        return;
    if (n >= j->cap - j->len) {
        size_t cap = j->cap ? j->cap : 256;
        char *np;
        while (n >= cap - j->len)
            cap *= 2;
        np = realloc(j->p, cap);
        if (!np) {
            j->fail = 1;
            return;
        }
        j->p = np;
        j->cap = cap;
    }
    memcpy(j->p + j->len, s, n);
    j->len += n;
    j->p[j->len] = '\0';
}

static void jputs(jbuf_t *j, const char *s)
{
    jput(j, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at @p s (0: invalid). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    uint32_t cp;
    size_t len;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        cp = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        cp = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

static void jstr(jbuf_t *j, const char *s)
{
    const unsigned char *u = (const unsigned char *) s;
    size_t n = strlen(s);
    char esc[8];

    jput(j, "\"", 1);
    for (size_t i = 0; i < n;) {
        size_t k;
        switch (u[i]) {
        case '"':
            jput(j, "\\\"", 2);
            i++;
            continue;
        case '\\':
            jput(j, "\\\\", 2);
            i++;
            continue;
        case '\n':
            jput(j, "\\n", 2);
            i++;
            continue;
        case '\r':
            jput(j, "\\r", 2);
            i++;
            continue;
        case '\t':
            jput(j, "\\t", 2);
            i++;
            continue;
        default:
            break;
        }
        if (u[i] < 0x20 || u[i] == 0x7f) {
            snprintf(esc, sizeof(esc), "\\u%04x", u[i]);
            jput(j, esc, 6);
            i++;
            continue;
        }
        k = utf8_len(u + i, n - i);
        if (k == 0) {
            jput(j, "\\ufffd", 6); /* not UTF-8: keep the output valid JSON */
            i++;
            continue;
        }
        jput(j, s + i, k);
        i += k;
    }
    jput(j, "\"", 1);
}

static void jmsg(jbuf_t *j, const xfer_ctl_msg_t *m)
{
    char num[40];

    jput(j, "{", 1);
    for (int i = 0; i < m->n; i++) {
        const ctl_field_t *f = &m->f[i];
        if (i)
            jput(j, ",", 1);
        jstr(j, f->key);
        jput(j, ":", 1);
        switch (f->type) {
        case XFER_CTL_INT:
            snprintf(num, sizeof(num), "%" PRId64, f->u.i);
            jputs(j, num);
            break;
        case XFER_CTL_DBL:
            if (isfinite(f->u.d)) {
                snprintf(num, sizeof(num), "%.17g", f->u.d);
                jputs(j, num);
            } else {
                jputs(j, "null"); /* JSON has no NaN or infinity */
            }
            break;
        case XFER_CTL_BOOL:
            jputs(j, f->u.b ? "true" : "false");
            break;
        case XFER_CTL_STR:
            jstr(j, f->u.s);
            break;
        case XFER_CTL_LIST:
            jput(j, "[", 1);
            for (int k = 0; k < f->u.l.n; k++) {
                if (k)
                    jput(j, ",", 1);
                jmsg(j, f->u.l.v[k]);
            }
            jput(j, "]", 1);
            break;
        case XFER_CTL_NONE:
            jputs(j, "null");
            break;
        }
    }
    jput(j, "}", 1);
}

XFER_PUBLIC char *xfer_ctl_to_json(const xfer_ctl_msg_t *m)
{
    jbuf_t j = {NULL, 0, 0, 0};

    if (!m)
        return NULL;
    jmsg(&j, m);
    if (j.fail) {
        free(j.p);
        return NULL;
    }
    return j.p;
}

/* ---- tokens ------------------------------------------------------------------------------- */

XFER_PUBLIC xfer_status_t xfer_ctl_read_token(const char *path, char **token)
{
    char buf[XFER_CTL_MAX_STR + 2];
    struct stat sb;
    size_t n = 0;
    int fd;

    if (!path || !token)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "path or token is NULL");
    *token = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return XFER_ERR(XFER_ERR_DENIED, "%s: cannot open: %s", path, strerror(errno));
    /* fstat on the open file: what is checked is what is read */
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return XFER_ERR(XFER_ERR_DENIED, "%s: not a regular file", path);
    }
    if (sb.st_mode & (S_IRWXG | S_IRWXO)) {
        close(fd);
        return XFER_ERR(XFER_ERR_DENIED,
                        "%s: group or others have access (mode %04o); chmod 600 it", path,
                        (unsigned) (sb.st_mode & 07777));
    }
    while (n < sizeof(buf)) {
        ssize_t r = read(fd, buf + n, sizeof(buf) - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return XFER_ERR(XFER_ERR_DENIED, "%s: cannot read: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t) r;
    }
    close(fd);
    if (n > 0 && buf[n - 1] == '\n')
        n--;
    if (n == 0)
        return XFER_ERR(XFER_ERR_DENIED, "%s: the file is empty", path);
    if (n > XFER_CTL_MAX_STR)
        return XFER_ERR(XFER_ERR_DENIED, "%s: longer than %d bytes", path, XFER_CTL_MAX_STR);
    if (memchr(buf, '\0', n))
        return XFER_ERR(XFER_ERR_DENIED, "%s: holds a NUL byte", path);
    if (n < XFER_CTL_TOKEN_MIN)
        return XFER_ERR(XFER_ERR_DENIED, "%s: a token of %zu characters is too short (at least %d)",
                        path, n, XFER_CTL_TOKEN_MIN);
    *token = xfer_malloc(n + 1);
    if (!*token)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for the token");
    memcpy(*token, buf, n);
    (*token)[n] = '\0';
    return XFER_SUCCESS;
}

XFER_PUBLIC xfer_status_t xfer_ctl_make_token(char *out, size_t nbytes)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char rnd[64];

    if (!out || nbytes == 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "out is NULL or nbytes is 0");
    for (size_t done = 0; done < nbytes;) {
        size_t want = XFER_MIN(sizeof(rnd), nbytes - done);
        ssize_t r = getrandom(rnd, want, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return XFER_ERR(XFER_ERR_INTERNAL, "getrandom: %s", strerror(errno));
        for (ssize_t i = 0; i < r; i++) {
            out[2 * (done + (size_t) i)] = hex[rnd[i] >> 4];
            out[2 * (done + (size_t) i) + 1] = hex[rnd[i] & 0x0f];
        }
        done += (size_t) r;
    }
    out[2 * nbytes] = '\0';
    return XFER_SUCCESS;
}

/* ---- error codes -------------------------------------------------------------------------- */

static const struct {
    const char *name;
    xfer_status_t st;
} err_table[] = {
    {"protocol", XFER_ERR_PROTOCOL},  {"version", XFER_ERR_PROTOCOL}, {"denied", XFER_ERR_DENIED},
    {"unknown", XFER_ERR_NOT_FOUND},  {"order", XFER_ERR_PROTOCOL},   {"exists", XFER_ERR_STATE},
    {"failed", XFER_ERR_PEER_FAILED}, {"timeout", XFER_ERR_TIMEOUT},  {"busy", XFER_ERR_STATE},
    {"internal", XFER_ERR_INTERNAL},
};

/* An unknown code is the peer speaking something this side does not: a protocol error. */
XFER_PUBLIC xfer_status_t xfer_ctl_err_status(const char *err)
{
    for (size_t i = 0; err && i < sizeof(err_table) / sizeof(err_table[0]); i++)
        if (strcmp(err_table[i].name, err) == 0)
            return err_table[i].st;
    return XFER_ERR_PROTOCOL;
}

/* The first code of the table mapping to @p st; argument and size errors are the protocol's,
 * anything else is "internal". */
XFER_PUBLIC const char *xfer_ctl_err_name(xfer_status_t st)
{
    if (st == XFER_ERR_INVALID_ARG || st == XFER_ERR_TOO_LARGE)
        return "protocol";
    for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
        if (err_table[i].st == st)
            return err_table[i].name;
    return "internal";
}
