/* SPDX-License-Identifier: BSD-3-Clause */
/* Minimal assertion helpers for the unit tests (no MPI). */
#ifndef XFER_TEST_UNIT_H
#define XFER_TEST_UNIT_H

#include <stdio.h>
#include <stdlib.h>

static int unit_failures;

#define UCHECK(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            if (++unit_failures > 20)                                                              \
                exit(1);                                                                           \
        }                                                                                          \
    } while (0)

static inline int unit_finish(const char *name, long checks)
{
    if (unit_failures) {
        fprintf(stderr, "%s: %d failure(s)\n", name, unit_failures);
        return 1;
    }
    printf("%s: %ld cases passed\n", name, checks);
    return 0;
}

#endif
