/* SPDX-License-Identifier: BSD-3-Clause */
/* The control-plane codec (no daemon): round trips of every operation, every bound at its
 * limit and one past it, malformed input (duplicate keys, wrong types, trailing bytes, every
 * truncation of a valid message, foreign versions), schema checks naming operation and field,
 * the JSON form, token files and error codes. Only the public API. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xfer/control.h>

static int failures = 0;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define OK(call)                                                                                   \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        CHECK(st_ == XFER_SUCCESS, "%s -> %s: %s", #call, xfer_status_name(st_),                   \
              xfer_last_error());                                                                  \
    } while (0)

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

/* ---- helpers ------------------------------------------------------------------------------ */

static xfer_ctl_msg_t *request(const char *op)
{
    xfer_ctl_msg_t *m = NULL;
    OK(xfer_ctl_msg_new(op, &m));
    OK(xfer_ctl_set_int(m, "id", 1));
    OK(xfer_ctl_set_str(m, "wf", "w"));
    OK(xfer_ctl_set_str(m, "tok", "0123456789abcdef0123"));
    return m;
}

/* encode, decode, compare the JSON forms; validate both when @p valid */
static void round_trip(const xfer_ctl_msg_t *m, int valid, const char *what)
{
    void *buf = NULL;
    size_t len = 0;
    xfer_ctl_msg_t *back = NULL;
    char *j1, *j2;

    if (valid)
        OK(xfer_ctl_validate(m));
    OK(xfer_ctl_encode(m, XFER_CTL_MAX_REPLY, &buf, &len));
    OK(xfer_ctl_decode(buf, len, XFER_CTL_MAX_REPLY, &back));
    j1 = xfer_ctl_to_json(m);
    j2 = xfer_ctl_to_json(back);
    CHECK(j1 && j2 && strcmp(j1, j2) == 0, "%s: %s != %s", what, j1 ? j1 : "-", j2 ? j2 : "-");
    if (valid && back)
        OK(xfer_ctl_validate(back));
    free(j1);
    free(j2);
    free(buf);
    xfer_ctl_msg_free(&back);
}

/* ---- the tests ---------------------------------------------------------------------------- */

static void test_ops(void)
{
    static const char *with_session[] = {"heartbeat", "bye"};
    xfer_ctl_msg_t *m, *it;

    m = request("register");
    OK(xfer_ctl_set_str(m, "component", "sim"));
    OK(xfer_ctl_set_int(m, "nprocs", 4));
    OK(xfer_ctl_set_int(m, "pid", 12345));
    OK(xfer_ctl_set_str(m, "host", "node-01"));
    round_trip(m, 1, "register");
    xfer_ctl_msg_free(&m);

    for (int i = 0; i < 2; i++) {
        m = request(with_session[i]);
        OK(xfer_ctl_set_int(m, "session", 8193));
        round_trip(m, 1, with_session[i]);
        xfer_ctl_msg_free(&m);
    }
    m = request("publish");
    OK(xfer_ctl_set_int(m, "session", 1));
    OK(xfer_ctl_set_str(m, "channel", "c"));
    OK(xfer_ctl_set_str(m, "port", "tag#0$connentry#0200A4B2C0A8000B0000000000000000$"));
    round_trip(m, 1, "publish");
    xfer_ctl_msg_free(&m);

    m = request("lookup");
    OK(xfer_ctl_set_int(m, "session", 1));
    OK(xfer_ctl_set_str(m, "channel", "c"));
    OK(xfer_ctl_set_int(m, "wait_ms", 0));
    round_trip(m, 1, "lookup");
    xfer_ctl_msg_free(&m);

    m = request("step");
    OK(xfer_ctl_set_int(m, "session", 1));
    OK(xfer_ctl_set_str(m, "channel", "c"));
    OK(xfer_ctl_set_int(m, "side", 1));
    OK(xfer_ctl_set_int(m, "step", INT64_MAX));
    OK(xfer_ctl_set_int(m, "bytes", 0));
    round_trip(m, 1, "step");
    xfer_ctl_msg_free(&m);

    m = request("ack");
    OK(xfer_ctl_set_int(m, "session", 1));
    OK(xfer_ctl_set_str(m, "channel", "c"));
    OK(xfer_ctl_set_int(m, "side", 0));
    OK(xfer_ctl_set_int(m, "released", 7));
    round_trip(m, 1, "ack");
    xfer_ctl_msg_free(&m);

    m = request("flow"); /* (app_step -1: no step sent yet) */
    OK(xfer_ctl_set_int(m, "session", 1));
    OK(xfer_ctl_set_str(m, "channel", "c"));
    OK(xfer_ctl_set_int(m, "side", 0));
    OK(xfer_ctl_set_int(m, "app_step", -1));
    OK(xfer_ctl_set_int(m, "dropped", 3));
    OK(xfer_ctl_set_int(m, "skipped", INT64_MAX));
    round_trip(m, 1, "flow");
    xfer_ctl_msg_free(&m);

    m = request("exited");
    OK(xfer_ctl_set_str(m, "component", "sim"));
    OK(xfer_ctl_set_int(m, "code", -9));
    round_trip(m, 1, "exited");
    xfer_ctl_msg_free(&m);

    m = request("fail");
    OK(xfer_ctl_set_int(m, "session", 1));
    OK(xfer_ctl_set_str(m, "reason", "MPI_Recv failed: truncated"));
    round_trip(m, 1, "fail");
    xfer_ctl_msg_free(&m);

    m = request("status");
    round_trip(m, 1, "status");
    xfer_ctl_msg_free(&m);
    m = request("stop");
    round_trip(m, 1, "stop");
    xfer_ctl_msg_free(&m);

    /* replies: ok with a status body (lists, every type), and an error */
    OK(xfer_ctl_msg_new("reply", &m));
    OK(xfer_ctl_set_int(m, "id", 0));
    OK(xfer_ctl_set_bool(m, "ok", 1));
    OK(xfer_ctl_set_str(m, "workflow", "w"));
    OK(xfer_ctl_set_dbl(m, "ratio", 0.1));
    OK(xfer_ctl_set_int(m, "min", INT64_MIN));
    for (int i = 0; i < 3; i++) {
        OK(xfer_ctl_add_item(m, "components", &it));
        OK(xfer_ctl_set_str(it, "name", i ? "b" : "a"));
        OK(xfer_ctl_set_int(it, "last_seen_ms", -1));
        OK(xfer_ctl_set_bool(it, "published", i & 1));
        OK(xfer_ctl_set_dbl(it, "x", -1.5e300));
    }
    OK(xfer_ctl_add_item(m, "failures", &it)); /* an empty item */
    round_trip(m, 1, "status reply");
    CHECK(xfer_ctl_nitems(m, "components") == 3, "nitems");
    CHECK(strcmp(xfer_ctl_str(xfer_ctl_item(m, "components", 1), "name", ""), "b") == 0, "item");
    xfer_ctl_msg_free(&m);

    OK(xfer_ctl_msg_new("reply", &m));
    OK(xfer_ctl_set_int(m, "id", 3));
    OK(xfer_ctl_set_bool(m, "ok", 0));
    OK(xfer_ctl_set_str(m, "err", "order"));
    OK(xfer_ctl_set_str(m, "msg", "step 2 goes backwards"));
    round_trip(m, 1, "error reply");
    xfer_ctl_msg_free(&m);

    OK(xfer_ctl_msg_new("failure", &m));
    OK(xfer_ctl_set_str(m, "component", "a"));
    OK(xfer_ctl_set_str(m, "reason", "no heartbeat"));
    round_trip(m, 1, "failure");
    xfer_ctl_msg_free(&m);
    OK(xfer_ctl_msg_new("shutdown", &m));
    OK(xfer_ctl_set_str(m, "reason", "signal SIGTERM"));
    round_trip(m, 1, "shutdown");
    xfer_ctl_msg_free(&m);
}

static void test_accessors(void)
{
    xfer_ctl_msg_t *m = NULL, *it = NULL, *item0 = NULL;

    OK(xfer_ctl_msg_new("status", &m));
    CHECK(strcmp(xfer_ctl_op(m), "status") == 0, "op");
    CHECK(xfer_ctl_int(m, "v", 0) == XFER_CTL_PROTOCOL, "v");
    OK(xfer_ctl_set_int(m, "n", 3));
    CHECK(xfer_ctl_dbl(m, "n", 0) == 3.0, "ints read as doubles");
    CHECK(xfer_ctl_str(m, "n", NULL) == NULL, "no conversion to string");
    CHECK(xfer_ctl_bool(m, "n", -1) == -1, "no conversion to bool");
    CHECK(xfer_ctl_type(m, "n") == XFER_CTL_INT && xfer_ctl_type(m, "zz") == XFER_CTL_NONE, "type");
    OK(xfer_ctl_set_str(m, "n", "now a string")); /* replaces, other type */
    CHECK(xfer_ctl_type(m, "n") == XFER_CTL_STR && xfer_ctl_int(m, "n", 9) == 9, "replace");
    OK(xfer_ctl_set_str(m, "n", xfer_ctl_str(m, "n", ""))); /* set from its own value */
    CHECK(strcmp(xfer_ctl_str(m, "n", ""), "now a string") == 0, "self-assignment");
    OK(xfer_ctl_set_bool(m, "b", 42));
    CHECK(xfer_ctl_bool(m, "b", 0) == 1, "bool");
    OK(xfer_ctl_add_item(m, "l", &item0));
    CHECK(strcmp(xfer_ctl_op(item0), "") == 0, "items have no op");
    CHECK(xfer_ctl_item(m, "l", 1) == NULL && xfer_ctl_item(m, "l", -1) == NULL, "range");
    CHECK(xfer_ctl_nitems(m, "b") == 0 && xfer_ctl_nitems(m, "none") == 0, "nitems");
    CHECK(xfer_ctl_add_item(m, "b", &it) == XFER_ERR_INVALID_ARG, "add_item on a bool field");
    CHECK(xfer_ctl_add_item(item0, "x", &it) == XFER_ERR_INVALID_ARG, "a list inside an item");
    xfer_ctl_msg_free(&m);
    xfer_ctl_msg_free(&m); /* NULL is fine */
    xfer_ctl_msg_free(NULL);
}

static void test_set_bounds(void)
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

static void test_decode_bounds(void)
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

static void test_encode_bound(void)
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

static void test_malformed(void)
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

static void test_truncation(void)
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

static void expect_invalid(xfer_ctl_msg_t *m, const char *want)
{
    xfer_status_t st = xfer_ctl_validate(m);

    CHECK(st == XFER_ERR_PROTOCOL, "validate(%s): %s", want, xfer_status_name(st));
    CHECK(strstr(xfer_last_error(), want), "validate: \"%s\" lacks \"%s\"", xfer_last_error(),
          want);
    xfer_ctl_msg_free(&m);
}

static xfer_ctl_msg_t *valid_register(void)
{
    xfer_ctl_msg_t *m = request("register");
    OK(xfer_ctl_set_str(m, "component", "a"));
    OK(xfer_ctl_set_int(m, "nprocs", 1));
    OK(xfer_ctl_set_int(m, "pid", 1));
    OK(xfer_ctl_set_str(m, "host", "h"));
    return m;
}

static xfer_ctl_msg_t *valid_step(void)
{
    xfer_ctl_msg_t *m = request("step");
    OK(xfer_ctl_set_int(m, "session", 1));
    OK(xfer_ctl_set_str(m, "channel", "c"));
    OK(xfer_ctl_set_int(m, "side", 0));
    OK(xfer_ctl_set_int(m, "step", 0));
    OK(xfer_ctl_set_int(m, "bytes", 0));
    return m;
}

static xfer_ctl_msg_t *valid_flow(void)
{
    xfer_ctl_msg_t *m = request("flow");
    OK(xfer_ctl_set_int(m, "session", 1));
    OK(xfer_ctl_set_str(m, "channel", "c"));
    OK(xfer_ctl_set_int(m, "side", 0));
    OK(xfer_ctl_set_int(m, "app_step", 410));
    OK(xfer_ctl_set_int(m, "dropped", 37));
    OK(xfer_ctl_set_int(m, "skipped", 4));
    return m;
}

static void test_validate(void)
{
    xfer_ctl_msg_t *m;

    m = valid_register();
    OK(xfer_ctl_set_str(m, "future_field", "ignored")); /* unknown fields are fine */
    OK(xfer_ctl_validate(m));
    xfer_ctl_msg_free(&m);

    m = request("register");
    OK(xfer_ctl_set_str(m, "component", "a"));
    expect_invalid(m, "register: field \"nprocs\" is missing");
    m = valid_register();
    OK(xfer_ctl_set_str(m, "nprocs", "2"));
    expect_invalid(m, "register: field \"nprocs\" is a string, expected an integer");
    m = valid_register();
    OK(xfer_ctl_set_int(m, "nprocs", 0));
    expect_invalid(m, "register: field \"nprocs\" is 0, expected an integer >= 1");
    m = valid_register();
    OK(xfer_ctl_set_dbl(m, "pid", 1.0));
    expect_invalid(m, "register: field \"pid\" is a float");
    m = valid_step();
    OK(xfer_ctl_set_int(m, "step", -1));
    expect_invalid(m, "step: field \"step\" is -1");
    m = valid_step();
    OK(xfer_ctl_set_int(m, "side", 2));
    expect_invalid(m, "step: field \"side\" is 2, expected 0 to 1");
    m = valid_step();
    OK(xfer_ctl_set_int(m, "bytes", -1));
    expect_invalid(m, "step: field \"bytes\" is -1");
    m = valid_step();
    OK(xfer_ctl_set_int(m, "session", 0));
    expect_invalid(m, "step: field \"session\" is 0");
    m = valid_step();
    OK(xfer_ctl_set_int(m, "id", 0));
    expect_invalid(m, "step: field \"id\" is 0");
    m = request("lookup");
    OK(xfer_ctl_set_int(m, "session", 1));
    OK(xfer_ctl_set_str(m, "channel", "c"));
    OK(xfer_ctl_set_int(m, "wait_ms", -5));
    expect_invalid(m, "lookup: field \"wait_ms\" is -5");
    m = request("ack");
    OK(xfer_ctl_set_int(m, "session", 1));
    OK(xfer_ctl_set_str(m, "channel", "c"));
    OK(xfer_ctl_set_int(m, "side", 1));
    expect_invalid(m, "ack: field \"released\" is missing");
    m = valid_flow();
    OK(xfer_ctl_validate(m));
    xfer_ctl_msg_free(&m);
    m = valid_flow();
    OK(xfer_ctl_set_int(m, "app_step", -2));
    expect_invalid(m, "flow: field \"app_step\" is -2, expected an integer >= -1");
    m = valid_flow();
    OK(xfer_ctl_set_int(m, "dropped", -1));
    expect_invalid(m, "flow: field \"dropped\" is -1");
    m = valid_flow();
    OK(xfer_ctl_set_str(m, "skipped", "4"));
    expect_invalid(m, "flow: field \"skipped\" is a string, expected an integer");
    OK(xfer_ctl_msg_new("status", &m));
    OK(xfer_ctl_set_int(m, "id", 1));
    OK(xfer_ctl_set_str(m, "wf", "w"));
    expect_invalid(m, "status: field \"tok\" is missing");
    m = request("launch");
    expect_invalid(m, "unknown op \"launch\"");
    OK(xfer_ctl_msg_new("reply", &m));
    OK(xfer_ctl_set_int(m, "id", 1));
    OK(xfer_ctl_set_bool(m, "ok", 0));
    expect_invalid(m, "reply: field \"err\" is missing");
    OK(xfer_ctl_msg_new("failure", &m));
    OK(xfer_ctl_set_str(m, "component", "a"));
    expect_invalid(m, "failure: field \"reason\" is missing");
    OK(xfer_ctl_msg_new("shutdown", &m));
    OK(xfer_ctl_set_int(m, "reason", 3));
    expect_invalid(m, "shutdown: field \"reason\" is an integer, expected a string");
}

static void test_json(void)
{
    xfer_ctl_msg_t *m = NULL, *it;
    char *j;
    const char *want = "{\"v\":1,\"op\":\"x\\\"y\",\"s\":\"a\\\"b\\\\c\\nd\\u0001\\t\xc3\xa9"
                       "\\ufffd\\u007f\",\"i\":-5,\"d\":0.5,\"nan\":null,\"b\":true,"
                       "\"l\":[{\"k\":false},{}]}";

    OK(xfer_ctl_msg_new("x\"y", &m));
    OK(xfer_ctl_set_str(m, "s", "a\"b\\c\nd\x01\t\xc3\xa9\xff\x7f"));
    OK(xfer_ctl_set_int(m, "i", -5));
    OK(xfer_ctl_set_dbl(m, "d", 0.5));
    OK(xfer_ctl_set_dbl(m, "nan", NAN));
    OK(xfer_ctl_set_bool(m, "b", 1));
    OK(xfer_ctl_add_item(m, "l", &it));
    OK(xfer_ctl_set_bool(it, "k", 0));
    OK(xfer_ctl_add_item(m, "l", &it));
    j = xfer_ctl_to_json(m);
    CHECK(j && strcmp(j, want) == 0, "json:\n got  %s\n want %s", j ? j : "(null)", want);
    free(j);
    xfer_ctl_msg_free(&m);
    CHECK(xfer_ctl_to_json(NULL) == NULL, "NULL");
}

static void write_token(const char *path, const char *text, size_t n, mode_t mode)
{
    FILE *f;

    unlink(path);
    f = fopen(path, "w");
    if (!f || fwrite(text, 1, n, f) != n) {
        CHECK(0, "cannot write %s", path);
        if (f)
            fclose(f);
        return;
    }
    fclose(f);
    chmod(path, mode);
}

static void expect_token(const char *path, const char *want_token, const char *want_err)
{
    char *tok = NULL;
    xfer_status_t st = xfer_ctl_read_token(path, &tok);

    if (want_token) {
        CHECK(st == XFER_SUCCESS && tok && strcmp(tok, want_token) == 0, "token: %s: %s",
              xfer_status_name(st), xfer_last_error());
    } else {
        CHECK(st == XFER_ERR_DENIED && !tok, "token refused: %s", xfer_status_name(st));
        CHECK(strstr(xfer_last_error(), path) && strstr(xfer_last_error(), want_err),
              "token error \"%s\" lacks the path or \"%s\"", xfer_last_error(), want_err);
    }
    free(tok);
}

static void test_tokens(void)
{
    char dir[] = "/tmp/xfer-token-test.XXXXXX", path[128], a[65], b[65], big[1100];

    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof(path), "%s/token", dir);

    OK(xfer_ctl_make_token(a, 32));
    OK(xfer_ctl_make_token(b, 32));
    CHECK(strlen(a) == 64 && strspn(a, "0123456789abcdef") == 64, "hex token: %s", a);
    CHECK(strcmp(a, b) != 0, "two tokens differ");
    CHECK(xfer_ctl_make_token(a, 0) == XFER_ERR_INVALID_ARG, "0 bytes");

    write_token(path, "0123456789abcdef\n", 17, 0600);
    expect_token(path, "0123456789abcdef", NULL);
    write_token(path, "0123456789abcdef\n\n", 18, 0600); /* one newline is dropped */
    expect_token(path, "0123456789abcdef\n", NULL);
    chmod(path, 0644);
    expect_token(path, NULL, "group or others");
    chmod(path, 0640);
    expect_token(path, NULL, "mode 0640");
    chmod(path, 0604);
    expect_token(path, NULL, "group or others");
    write_token(path, "", 0, 0600);
    expect_token(path, NULL, "empty");
    write_token(path, "\n", 1, 0600);
    expect_token(path, NULL, "empty");
    write_token(path, "0123456789abcde", 15, 0600);
    expect_token(path, NULL, "too short");
    memset(big, 't', sizeof(big));
    write_token(path, big, XFER_CTL_MAX_STR, 0600);
    big[XFER_CTL_MAX_STR] = '\0';
    expect_token(path, big, NULL);
    write_token(path, big, XFER_CTL_MAX_STR + 1, 0600);
    expect_token(path, NULL, "longer than 1024");
    write_token(path, "0123456789\0abcdef", 17, 0600);
    expect_token(path, NULL, "NUL");
    unlink(path);
    expect_token(path, NULL, "cannot open");
    rmdir(dir);
}

static void test_errs(void)
{
    static const struct {
        const char *name;
        xfer_status_t st;
    } t[] = {{"protocol", XFER_ERR_PROTOCOL},  {"version", XFER_ERR_PROTOCOL},
             {"denied", XFER_ERR_DENIED},      {"unknown", XFER_ERR_NOT_FOUND},
             {"order", XFER_ERR_PROTOCOL},     {"exists", XFER_ERR_STATE},
             {"failed", XFER_ERR_PEER_FAILED}, {"timeout", XFER_ERR_TIMEOUT},
             {"busy", XFER_ERR_STATE},         {"internal", XFER_ERR_INTERNAL}};

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        CHECK(xfer_ctl_err_status(t[i].name) == t[i].st, "err %s", t[i].name);
    CHECK(xfer_ctl_err_status("no-such-code") == XFER_ERR_PROTOCOL, "unknown code");
    CHECK(xfer_ctl_err_status(NULL) == XFER_ERR_PROTOCOL, "NULL code");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_PEER_FAILED), "failed") == 0, "failed");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_DENIED), "denied") == 0, "denied");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_NOT_FOUND), "unknown") == 0, "unknown");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_TIMEOUT), "timeout") == 0, "timeout");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_PROTOCOL), "protocol") == 0, "protocol");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_NO_MEMORY), "internal") == 0, "internal");
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        CHECK(xfer_ctl_err_status(xfer_ctl_err_name(t[i].st)) == t[i].st, "name/status %s",
              t[i].name);
}

int main(void)
{
    test_ops();
    test_accessors();
    test_set_bounds();
    test_decode_bounds();
    test_encode_bound();
    test_malformed();
    test_truncation();
    test_validate();
    test_json();
    test_tokens();
    test_errs();
    if (failures) {
        fprintf(stderr, "test_proto: %d checks failed\n", failures);
        return 1;
    }
    printf("test_proto: all checks passed\n");
    return 0;
}
