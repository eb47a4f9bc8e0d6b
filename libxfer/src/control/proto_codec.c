/* SPDX-License-Identifier: BSD-3-Clause */
/* The control messages' MessagePack codec (docs/control-protocol.md): encoding, and decoding.
 *
 * Decoding untrusted input happens in three passes. The bounded scan (pass 1, proto_scan.c)
 * checks the raw bytes against the limits of control.h before anything is allocated.
 * msgpack_unpack_next() then parses the checked bytes (pass 2) and the result is converted
 * (pass 3, here), checking what the scan does not see (keys, NUL bytes, integer range).
 *
 * One deviation from "no message on failure": a message that decodes cleanly but carries an
 * unsupported "v" fails with XFER_ERR_PROTOCOL and still hands the message over in *m, so that
 * a server can answer the request's "id" with err "version". Callers free *m either way. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include <xfer/control.h>

#include "../core/core.h"
#include "proto_int.h"

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
        f->u.s = xfer_strndup(v->via.str.ptr, v->via.str.size);
        if (!f->u.s)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for field \"%s\"", kname);
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
        ctl_safe_text(kname, sizeof(kname), k->via.str.ptr, k->via.str.size);
        if (memchr(k->via.str.ptr, '\0', k->via.str.size)) {
            st = XFER_ERR(XFER_ERR_PROTOCOL, "%skey \"%s\" holds a NUL byte", where, kname);
            goto fail;
        }
        memcpy(f->key, k->via.str.ptr, k->via.str.size);
        f->key[k->via.str.size] = '\0';
        if (ctl_find(m, f->key)) {
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
    ctl_msg_destroy(m);
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
    XFER_CHECK_GOTO(ctl_scan(buf, len), st, out);

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

    v = ctl_find(msg, "v");
    if (!v) {
        st = XFER_ERR(XFER_ERR_PROTOCOL, "missing \"v\" (the protocol version)");
        goto fail;
    }
    if (v->type != XFER_CTL_INT) {
        st = XFER_ERR(XFER_ERR_PROTOCOL, "\"v\" is %s, not an integer", ctl_type_name(v->type));
        goto fail;
    }
    if (v->u.i != XFER_CTL_PROTOCOL) {
        /* handed over: the caller answers with err "version" */
        *m = msg;
        return XFER_ERR(XFER_ERR_PROTOCOL,
                        "protocol version %" PRId64 " is not supported (this side speaks %d)",
                        v->u.i, XFER_CTL_PROTOCOL);
    }
    op = ctl_find(msg, "op");
    if (!op) {
        st = XFER_ERR(XFER_ERR_PROTOCOL, "missing \"op\"");
        goto fail;
    }
    if (op->type != XFER_CTL_STR) {
        st = XFER_ERR(XFER_ERR_PROTOCOL, "\"op\" is %s, not a string", ctl_type_name(op->type));
        goto fail;
    }
    *m = msg;
    return XFER_SUCCESS;
fail:
    ctl_msg_destroy(msg);
out:
    return st;
}
