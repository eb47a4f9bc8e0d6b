/* SPDX-License-Identifier: BSD-3-Clause */
/* The codec's unit test, test_proto, by stage: the messages (test_proto.c, with main), the
 * bounds and malformed input (test_proto_limits.c), token files and error codes
 * (test_proto_tokens.c). */
#ifndef XFER_TEST_CONTROL_TEST_PROTO_H
#define XFER_TEST_CONTROL_TEST_PROTO_H

#include <xfer/control.h>

#include "check.h"

#define OK(call)                                                                                   \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        CHECK(st_ == XFER_SUCCESS, "%s -> %s: %s", #call, xfer_status_name(st_),                   \
              xfer_last_error());                                                                  \
    } while (0)

/* A request @p op with an id, wf and tok. */
xfer_ctl_msg_t *request(const char *op);
/* encode, decode, compare the JSON forms; validate both when @p valid */
void round_trip(const xfer_ctl_msg_t *m, int valid, const char *what);

/* test_proto.c: the messages */
void test_ops(void);
void test_accessors(void);
void test_validate(void);
void test_json(void);
/* test_proto_limits.c: every bound at its limit and one past it; malformed input */
void test_set_bounds(void);
void test_decode_bounds(void);
void test_encode_bound(void);
void test_malformed(void);
void test_truncation(void);
/* test_proto_tokens.c: token files and error codes */
void test_tokens(void);
void test_errs(void);

#endif
