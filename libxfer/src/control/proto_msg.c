/* SPDX-License-Identifier: BSD-3-Clause */
/* Control messages (docs/control-protocol.md): the in-memory model, a bounded set of named
 * fields, and the calls that build and read it. The limits of control.h hold here as they do
 * in the decoder, so that whatever is built can be encoded and read back. */
#include <stdio.h>
#include <string.h>

#include <xfer/control.h>

#include "../core/core.h"
#include "proto_int.h"

/* ---- helpers ------------------------------------------------------------------------------ */

/* Printable, bounded rendering of untrusted bytes for error messages. */
void ctl_safe_text(char *out, size_t cap, const char *s, size_t len)
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

const char *ctl_type_name(xfer_ctl_type_t t)
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

ctl_field_t *ctl_find(const xfer_ctl_msg_t *m, const char *key)
{
    if (!m || !key)
        return NULL;
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->f[i].key, key) == 0)
            return &m->f[i];
    return NULL;
}

static void field_clear(ctl_field_t *f)
{
    if (f->type == XFER_CTL_STR) {
        xfer_free(f->u.s);
    } else if (f->type == XFER_CTL_LIST) {
        for (int i = 0; i < f->u.l.n; i++)
            ctl_msg_destroy(f->u.l.v[i]);
        xfer_free(f->u.l.v);
    }
    f->type = XFER_CTL_NONE;
}

void ctl_msg_destroy(xfer_ctl_msg_t *m)
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
    f = ctl_find(m, key);
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
    ctl_msg_destroy(msg);
    return st;
}

XFER_PUBLIC void xfer_ctl_msg_free(xfer_ctl_msg_t **m)
{
    if (!m)
        return;
    ctl_msg_destroy(*m);
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
    copy = xfer_strndup(v, n);
    if (!copy)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "no memory for a string of %zu bytes", n);
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
    f = ctl_find(m, key);
    if (f && f->type != XFER_CTL_LIST)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "field \"%s\" is %s, not a list", key,
                        ctl_type_name(f->type));
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
    const ctl_field_t *f = m && !m->item ? ctl_find(m, "op") : NULL;
    return f && f->type == XFER_CTL_STR ? f->u.s : "";
}

XFER_PUBLIC xfer_ctl_type_t xfer_ctl_type(const xfer_ctl_msg_t *m, const char *key)
{
    const ctl_field_t *f = ctl_find(m, key);
    return f ? f->type : XFER_CTL_NONE;
}

XFER_PUBLIC const char *xfer_ctl_str(const xfer_ctl_msg_t *m, const char *key, const char *dflt)
{
    const ctl_field_t *f = ctl_find(m, key);
    return f && f->type == XFER_CTL_STR ? f->u.s : dflt;
}

XFER_PUBLIC int64_t xfer_ctl_int(const xfer_ctl_msg_t *m, const char *key, int64_t dflt)
{
    const ctl_field_t *f = ctl_find(m, key);
    return f && f->type == XFER_CTL_INT ? f->u.i : dflt;
}

XFER_PUBLIC double xfer_ctl_dbl(const xfer_ctl_msg_t *m, const char *key, double dflt)
{
    const ctl_field_t *f = ctl_find(m, key);
    if (f && f->type == XFER_CTL_DBL)
        return f->u.d;
    if (f && f->type == XFER_CTL_INT)
        return (double) f->u.i;
    return dflt;
}

XFER_PUBLIC int xfer_ctl_bool(const xfer_ctl_msg_t *m, const char *key, int dflt)
{
    const ctl_field_t *f = ctl_find(m, key);
    return f && f->type == XFER_CTL_BOOL ? f->u.b : dflt;
}

XFER_PUBLIC int xfer_ctl_nitems(const xfer_ctl_msg_t *m, const char *key)
{
    const ctl_field_t *f = ctl_find(m, key);
    return f && f->type == XFER_CTL_LIST ? f->u.l.n : 0;
}

XFER_PUBLIC const xfer_ctl_msg_t *xfer_ctl_item(const xfer_ctl_msg_t *m, const char *key, int i)
{
    const ctl_field_t *f = ctl_find(m, key);
    if (!f || f->type != XFER_CTL_LIST || i < 0 || i >= f->u.l.n)
        return NULL;
    return f->u.l.v[i];
}
