/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-sched's commands that live in files of their own: tools/xfer-sched.c dispatches to them
 * (argv[1] is the command; each parses its own options and returns the exit status). */
#ifndef XFER_TOOLS_SCHED_H
#define XFER_TOOLS_SCHED_H

#include <time.h>

/* Seconds on the monotonic clock, for the commands' timings. */
static inline double xfer_sched_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* tools/sched/joined.c: the joined datasets' schedules, step by step from a seed. */
int xfer_sched_joined(int argc, char **argv);

#endif /* XFER_TOOLS_SCHED_H */
