/* SPDX-License-Identifier: BSD-3-Clause */
/* The control-plane codec (no daemon), only through the public API. This file holds main() and
 * the messages: round trips of every operation, the accessors, schema checks naming operation
 * and field, the JSON form. The bounds and malformed input (duplicate keys, wrong types,
 * trailing bytes, every truncation of a valid message, foreign versions) are in
 * test_proto_limits.c, token files and error codes in test_proto_tokens.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_proto.h"

int fx_failures = 0;

/* ---- helpers ------------------------------------------------------------------------------ */

xfer_ctl_msg_t *request(const char *op)
{
    xfer_ctl_msg_t *m = NULL;
    OK(xfer_ctl_msg_new(op, &m));
    OK(xfer_ctl_set_int(m, "id", 1));
    OK(xfer_ctl_set_str(m, "wf", "w"));
    OK(xfer_ctl_set_str(m, "tok", "0123456789abcdef0123"));
    return m;
}

void round_trip(const xfer_ctl_msg_t *m, int valid, const char *what)
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

void test_ops(void)
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

void test_accessors(void)
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

void test_validate(void)
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

void test_json(void)
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
    if (fx_failures) {
        fprintf(stderr, "test_proto: %d checks failed\n", fx_failures);
        return 1;
    }
    printf("test_proto: all checks passed\n");
    return 0;
}
