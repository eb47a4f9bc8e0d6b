/* SPDX-License-Identifier: BSD-3-Clause */
/* CHECK of the control-plane tests: a failed condition is printed with its place and a message,
 * and counted in fx_failures (fixture.c defines it; test_proto.c, which needs no daemon, too). */
#ifndef XFER_TEST_CONTROL_CHECK_H
#define XFER_TEST_CONTROL_CHECK_H

#include <stdio.h>

extern int fx_failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            fx_failures++;                                                                         \
        }                                                                                          \
    } while (0)

#endif
