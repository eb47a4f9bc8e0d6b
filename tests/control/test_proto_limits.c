/* SPDX-License-Identifier: BSD-3-Clause */
/* The codec's bounds and malformed input: every bound (fields, key and string lengths, list
 * entries, message size, int64 range) at its limit and one past it, when set, encoded and
 * decoded; hand-made MessagePack that must be refused (duplicate keys, wrong types, nesting,
 * trailing bytes, foreign versions) and every truncation of a valid message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_proto.h"

/* ---- a MessagePack writer for hand-made (and malformed) input ---------------------------- */

typedef struct bb {
    unsigned char *b;
    size_t n, cap;
} bb_t;

static void put(bb_t *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->b = realloc(b->b, b->cap);
        if (!b->b)
            abort();
    }
    memcpy(b->b + b->n, p, n);
    b->n += n;
}

static void u8(bb_t *b, unsigned v)
{
    unsigned char c = (unsigned char) v;
    put(b, &c, 1);
}

static void be(bb_t *b, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--)
        u8(b, (unsigned) (v >> (8 * i)) & 0xff);
}

static void mp_map(bb_t *b, uint32_t n)
{
    if (n < 16) {
        u8(b, 0x80 | n);
    } else {
        u8(b, 0xdf);
        be(b, n, 4);
    }
}

static void mp_arr(bb_t *b, uint32_t n)
{
    if (n < 16) {
        u8(b, 0x90 | n);
    } else {
        u8(b, 0xdd);
        be(b, n, 4);
    }
}

static void mp_strn(bb_t *b, const char *s, size_t n)
{
    if (n < 32) {
        u8(b, 0xa0 | (unsigned) n);
    } else {
        u8(b, 0xdb);
        be(b, n, 4);
    }
    put(b, s, n);
}

static void mp_str(bb_t *b, const char *s)
{
    mp_strn(b, s, strlen(s));
}

static void mp_int(bb_t *b, int64_t v)
{
    if (v >= 0 && v < 128) {
        u8(b, (unsigned) v);
    } else {
        u8(b, 0xd3);
        be(b, (uint64_t) v, 8);
    }
}

/* "v": 1, "op": op: the two fields every message starts with here */
static void mp_head(bb_t *b, const char *op)
{
    mp_str(b, "v");
    mp_int(b, 1);
    mp_str(b, "op");
    mp_str(b, op);
}

static void bb_free(bb_t *b)
{
    free(b->b);
    memset(b, 0, sizeof(*b));
}

/* Decode @p b; when @p want is NULL expect success, else failure with @p want in the error. */
static void expect_decode(const bb_t *b, size_t max, const char *want, const char *what)
{
    xfer_ctl_msg_t *m = NULL;
    xfer_status_t st = xfer_ctl_decode(b->b, b->n, max, &m);

    if (!want) {
        CHECK(st == XFER_SUCCESS && m, "%s: %s", what, xfer_last_error());
    } else {
        CHECK(st == XFER_ERR_PROTOCOL, "%s: got %s", what, xfer_status_name(st));
        CHECK(strstr(xfer_last_error(), want), "%s: error \"%s\" lacks \"%s\"", what,
              xfer_last_error(), want);
        CHECK(!m, "%s: a message was handed over", what);
    }
    xfer_ctl_msg_free(&m);
}

/* ---- the tests ---------------------------------------------------------------------------- */

void test_set_bounds(void)
{
    char key[XFER_CTL_MAX_KEY + 2], *s = malloc(XFER_CTL_MAX_STR + 2);
    xfer_ctl_msg_t *m = NULL, *it;

    OK(xfer_ctl_msg_new("status", &m));
    for (int i = 2; i < XFER_CTL_MAX_FIELDS; i++) {
        snprintf(key, sizeof(key), "f%d", i);
        OK(xfer_ctl_set_int(m, key, i));
    }
    CHECK(xfer_ctl_set_int(m, "one-too-many", 1) == XFER_ERR_TOO_LARGE, "33rd field");
    OK(xfer_ctl_set_int(m, "f5", 55)); /* replacing is fine when full */
    xfer_ctl_msg_free(&m);

    OK(xfer_ctl_msg_new("status", &m));
    memset(key, 'k', sizeof(key));
    key[XFER_CTL_MAX_KEY] = '\0';
    OK(xfer_ctl_set_int(m, key, 1));
    key[XFER_CTL_MAX_KEY] = 'k';
    key[XFER_CTL_MAX_KEY + 1] = '\0';
    CHECK(xfer_ctl_set_int(m, key, 1) == XFER_ERR_INVALID_ARG, "key of 33 bytes");
    CHECK(xfer_ctl_set_int(m, "", 1) == XFER_ERR_INVALID_ARG, "empty key");
    memset(s, 's', XFER_CTL_MAX_STR + 1);
    s[XFER_CTL_MAX_STR] = '\0';
    OK(xfer_ctl_set_str(m, "s", s));
    s[XFER_CTL_MAX_STR] = 's';
    s[XFER_CTL_MAX_STR + 1] = '\0';
    CHECK(xfer_ctl_set_str(m, "s", s) == XFER_ERR_TOO_LARGE, "string of 1025 bytes");
    for (int i = 0; i < XFER_CTL_MAX_ITEMS; i++)
        OK(xfer_ctl_add_item(m, "l", &it));
    CHECK(xfer_ctl_add_item(m, "l", &it) == XFER_ERR_TOO_LARGE, "8193rd entry");
    CHECK(xfer_ctl_nitems(m, "l") == XFER_CTL_MAX_ITEMS, "nitems at the bound");
    round_trip(m, 0, "message at the bounds");
    xfer_ctl_msg_free(&m);
    free(s);
}

void test_decode_bounds(void)
{
    char key[XFER_CTL_MAX_KEY + 2], *s = malloc(XFER_CTL_MAX_STR + 2);
    bb_t b = {0};

    /* fields per map */
    for (int extra = 0; extra < 2; extra++) {
        mp_map(&b, (uint32_t) XFER_CTL_MAX_FIELDS + (uint32_t) extra);
        mp_head(&b, "status");
        for (int i = 2; i < XFER_CTL_MAX_FIELDS + extra; i++) {
            snprintf(key, sizeof(key), "f%d", i);
            mp_str(&b, key);
            mp_int(&b, i);
        }
        expect_decode(&b, XFER_CTL_MAX_MSG, extra ? "33 fields" : NULL, "fields");
        bb_free(&b);
    }
    /* fields per list item */
    for (int extra = 0; extra < 2; extra++) {
        mp_map(&b, 3);
        mp_head(&b, "status");
        mp_str(&b, "l");
        mp_arr(&b, 1);
        mp_map(&b, (uint32_t) XFER_CTL_MAX_FIELDS + (uint32_t) extra);
        for (int i = 0; i < XFER_CTL_MAX_FIELDS + extra; i++) {
            snprintf(key, sizeof(key), "f%d", i);
            mp_str(&b, key);
            mp_int(&b, i);
        }
        expect_decode(&b, XFER_CTL_MAX_MSG, extra ? "33 fields" : NULL, "item fields");
        bb_free(&b);
    }
    /* key length */
    for (int extra = 0; extra < 2; extra++) {
        mp_map(&b, 3);
        mp_head(&b, "status");
        memset(key, 'k', sizeof(key));
        mp_strn(&b, key, (size_t) XFER_CTL_MAX_KEY + (size_t) extra);
        mp_int(&b, 1);
        expect_decode(&b, XFER_CTL_MAX_MSG, extra ? "33 bytes" : NULL, "key length");
        bb_free(&b);
    }
    /* string length */
    memset(s, 's', XFER_CTL_MAX_STR + 1);
    for (int extra = 0; extra < 2; extra++) {
        mp_map(&b, 3);
        mp_head(&b, "status");
        mp_str(&b, "s");
        mp_strn(&b, s, (size_t) XFER_CTL_MAX_STR + (size_t) extra);
        expect_decode(&b, XFER_CTL_MAX_MSG, extra ? "1025 bytes" : NULL, "string length");
        bb_free(&b);
    }
    /* list length */
    for (int extra = 0; extra < 2; extra++) {
        mp_map(&b, 3);
        mp_head(&b, "status");
        mp_str(&b, "l");
        mp_arr(&b, (uint32_t) XFER_CTL_MAX_ITEMS + (uint32_t) extra);
        for (int i = 0; i < XFER_CTL_MAX_ITEMS + extra; i++)
            mp_map(&b, 0);
        expect_decode(&b, XFER_CTL_MAX_MSG, extra ? "8193 entries" : NULL, "list length");
        bb_free(&b);
    }
    /* message size: at the bound and one under */
    mp_map(&b, 3);
    mp_head(&b, "status");
    mp_str(&b, "s");
    mp_str(&b, "0123456789");
    expect_decode(&b, b.n, NULL, "size at the bound");
    expect_decode(&b, b.n - 1, "at most", "size past the bound");
    bb_free(&b);
    /* integers: int64 range */
    mp_map(&b, 4);
    mp_head(&b, "status");
    mp_str(&b, "max");
    u8(&b, 0xcf);
    be(&b, (uint64_t) INT64_MAX, 8);
    mp_str(&b, "min");
    mp_int(&b, INT64_MIN);
    expect_decode(&b, XFER_CTL_MAX_MSG, NULL, "int64 range");
    bb_free(&b);
    mp_map(&b, 3);
    mp_head(&b, "status");
    mp_str(&b, "big");
    u8(&b, 0xcf);
    be(&b, (uint64_t) INT64_MAX + 1, 8);
    expect_decode(&b, XFER_CTL_MAX_MSG, "does not fit", "uint64 past int64");
    bb_free(&b);
    free(s);
}

void test_encode_bound(void)
{
    xfer_ctl_msg_t *m = NULL;
    void *buf = NULL;
    size_t len = 0, len2 = 0;

    OK(xfer_ctl_msg_new("status", &m));
    OK(xfer_ctl_set_str(m, "x", "some text"));
    OK(xfer_ctl_encode(m, XFER_CTL_MAX_MSG, &buf, &len));
    free(buf);
    buf = NULL;
    OK(xfer_ctl_encode(m, len, &buf, &len2));
    CHECK(len2 == len, "same size");
    free(buf);
    buf = NULL;
    CHECK(xfer_ctl_encode(m, len - 1, &buf, &len2) == XFER_ERR_TOO_LARGE && !buf, "one byte short");
    xfer_ctl_msg_free(&m);
}

void test_malformed(void)
{
    bb_t b = {0};
    xfer_ctl_msg_t *m = NULL;
    xfer_status_t st;

    CHECK(xfer_ctl_decode("", 0, XFER_CTL_MAX_MSG, &m) == XFER_ERR_PROTOCOL, "empty");
    u8(&b, 0xc1);
    expect_decode(&b, XFER_CTL_MAX_MSG, "not MessagePack", "0xc1");
    bb_free(&b);
    mp_arr(&b, 1);
    mp_int(&b, 1);
    expect_decode(&b, XFER_CTL_MAX_MSG, "a list, not a map", "array top level");
    bb_free(&b);

#define ONE_FIELD(desc, want, ...)                                                                 \
    do {                                                                                           \
        mp_map(&b, 3);                                                                             \
        mp_head(&b, "status");                                                                     \
        __VA_ARGS__;                                                                               \
        expect_decode(&b, XFER_CTL_MAX_MSG, want, desc);                                           \
        bb_free(&b);                                                                               \
    } while (0)
    ONE_FIELD("duplicate key", "duplicate key \"op\"", mp_str(&b, "op"); mp_str(&b, "stop"));
    ONE_FIELD("integer key", "not a string", mp_int(&b, 5); mp_int(&b, 1));
    ONE_FIELD("NUL in a key", "NUL", mp_strn(&b, "a\0b", 3); mp_int(&b, 1));
    ONE_FIELD("NUL in a string", "NUL", mp_str(&b, "s"); mp_strn(&b, "a\0b", 3));
    ONE_FIELD("nil", "nil", mp_str(&b, "x"); u8(&b, 0xc0));
    ONE_FIELD("bin", "binary", mp_str(&b, "x"); u8(&b, 0xc4); u8(&b, 1); u8(&b, 7));
    ONE_FIELD("ext", "extension", mp_str(&b, "x"); u8(&b, 0xd4); u8(&b, 1); u8(&b, 7));
    ONE_FIELD("map in map", "map is not allowed", mp_str(&b, "m"); mp_map(&b, 0));
    ONE_FIELD("list of ints", "not a map", mp_str(&b, "l"); mp_arr(&b, 1); mp_int(&b, 1));
    ONE_FIELD("list in an item", "nesting deeper than 2", mp_str(&b, "l"); mp_arr(&b, 1);
              mp_map(&b, 1); mp_str(&b, "k"); mp_arr(&b, 0));
    ONE_FIELD("declared string past the end", "truncated", mp_str(&b, "s"); u8(&b, 0xdb);
              be(&b, 1000, 4));
    ONE_FIELD("huge declared string", "4294967295 bytes", mp_str(&b, "s"); u8(&b, 0xdb);
              be(&b, 0xffffffffu, 4));
    ONE_FIELD("huge declared list", "4294967295 entries", mp_str(&b, "l"); u8(&b, 0xdd);
              be(&b, 0xffffffffu, 4));
#undef ONE_FIELD
    u8(&b, 0xdf);
    be(&b, 0xffffffffu, 4);
    expect_decode(&b, XFER_CTL_MAX_MSG, "4294967295 fields", "huge declared map");
    bb_free(&b);

    mp_map(&b, 2);
    mp_head(&b, "status");
    u8(&b, 0);
    expect_decode(&b, XFER_CTL_MAX_MSG, "1 trailing bytes", "trailing byte");
    bb_free(&b);

    mp_map(&b, 1);
    mp_str(&b, "op");
    mp_str(&b, "status");
    expect_decode(&b, XFER_CTL_MAX_MSG, "missing \"v\"", "no v");
    bb_free(&b);
    mp_map(&b, 2);
    mp_str(&b, "v");
    mp_str(&b, "1");
    mp_str(&b, "op");
    mp_str(&b, "status");
    expect_decode(&b, XFER_CTL_MAX_MSG, "not an integer", "v a string");
    bb_free(&b);
    mp_map(&b, 1);
    mp_str(&b, "v");
    mp_int(&b, 1);
    expect_decode(&b, XFER_CTL_MAX_MSG, "missing \"op\"", "no op");
    bb_free(&b);
    mp_map(&b, 2);
    mp_str(&b, "v");
    mp_int(&b, 1);
    mp_str(&b, "op");
    mp_int(&b, 1);
    expect_decode(&b, XFER_CTL_MAX_MSG, "\"op\" is an integer", "op an integer");
    bb_free(&b);

    /* another version: refused, naming both, and handed over (the id can be answered) */
    mp_map(&b, 3);
    mp_str(&b, "v");
    mp_int(&b, 2);
    mp_str(&b, "op");
    mp_str(&b, "status");
    mp_str(&b, "id");
    mp_int(&b, 9);
    st = xfer_ctl_decode(b.b, b.n, XFER_CTL_MAX_MSG, &m);
    CHECK(st == XFER_ERR_PROTOCOL, "v 2: %s", xfer_status_name(st));
    CHECK(strstr(xfer_last_error(), "version 2") && strstr(xfer_last_error(), "speaks 1"),
          "v 2: %s", xfer_last_error());
    CHECK(m && xfer_ctl_int(m, "id", 0) == 9, "v 2: message handed over");
    CHECK(m && xfer_ctl_validate(m) == XFER_ERR_PROTOCOL, "v 2 does not validate");
    xfer_ctl_msg_free(&m);
    bb_free(&b);

    /* float32 reads as a double */
    mp_map(&b, 3);
    mp_head(&b, "status");
    mp_str(&b, "f");
    u8(&b, 0xca);
    be(&b, 0x3fc00000u, 4);
    st = xfer_ctl_decode(b.b, b.n, XFER_CTL_MAX_MSG, &m);
    CHECK(st == XFER_SUCCESS && xfer_ctl_type(m, "f") == XFER_CTL_DBL &&
              xfer_ctl_dbl(m, "f", 0) == 1.5,
          "float32");
    xfer_ctl_msg_free(&m);
    bb_free(&b);
}

void test_truncation(void)
{
    xfer_ctl_msg_t *m = request("register"), *it, *out = NULL;
    void *buf = NULL;
    size_t len = 0;
    int bad = 0;

    OK(xfer_ctl_set_str(m, "component", "a"));
    OK(xfer_ctl_set_int(m, "nprocs", 70000));
    OK(xfer_ctl_set_int(m, "pid", -1));
    OK(xfer_ctl_set_str(m, "host", "a host name longer than thirty-one bytes"));
    OK(xfer_ctl_set_dbl(m, "d", 2.5));
    OK(xfer_ctl_set_bool(m, "b", 1));
    OK(xfer_ctl_add_item(m, "l", &it));
    OK(xfer_ctl_set_int(it, "k", 1 << 20));
    OK(xfer_ctl_encode(m, XFER_CTL_MAX_MSG, &buf, &len));
    for (size_t n = 0; n < len; n++) {
        xfer_status_t st = xfer_ctl_decode(buf, n, XFER_CTL_MAX_MSG, &out);
        if (st != XFER_ERR_PROTOCOL || out)
            bad++;
        xfer_ctl_msg_free(&out);
    }
    CHECK(bad == 0, "%d of %zu prefixes decoded or failed otherwise", bad, len);
    OK(xfer_ctl_decode(buf, len, XFER_CTL_MAX_MSG, &out));
    xfer_ctl_msg_free(&out);
    free(buf);
    xfer_ctl_msg_free(&m);
}
