/* SPDX-License-Identifier: BSD-3-Clause */
/* Decoding control messages, pass 1 (docs/control-protocol.md): the bounded scan. It walks the
 * raw MessagePack bytes and checks their shape against the limits of control.h (types, counts,
 * lengths, nesting, trailing bytes) before anything is allocated, so that a few bytes declaring
 * a list of 2^32 entries cannot make msgpack-c reserve memory for them. It allocates nothing
 * and reads no byte past @c len; proto_codec.c runs it before msgpack-c sees the message. */
#include <inttypes.h>
#include <stdio.h>

#include <xfer/control.h>

#include "../core/core.h"
#include "proto_int.h"

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
        ctl_safe_text(kname, sizeof(kname), (const char *) s->p + s->pos, (size_t) len);
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

/* scan_msg keeps its name: error messages carry it. */
xfer_status_t ctl_scan(const void *buf, size_t len)
{
    return scan_msg(buf, len);
}
