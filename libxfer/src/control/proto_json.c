/* SPDX-License-Identifier: BSD-3-Clause */
/* The JSON form of a control message (xfer_ctl_to_json), for logs and xferctl. The output is
 * always valid JSON whatever the message holds: strings are escaped, bytes that are not UTF-8
 * become U+FFFD, and floats JSON cannot write (NaN, infinities) become null. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/control.h>

#include "proto_int.h"

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
