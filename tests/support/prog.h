/* SPDX-License-Identifier: BSD-3-Clause */
/* What the test programs of coupled runs share (runtime/loss_prog.c, attach_prog.c,
 * file_attach_prog.c): the wall clock their lines print, a nap, and a checked libxfer call that
 * ends the process with exit status 1 and the call's words on stderr. */
#ifndef XFER_TEST_PROG_H
#define XFER_TEST_PROG_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <xfer/xfer.h>

static inline int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&ts, &ts) != 0)
        ;
}

/* @p leave: exit, or _exit where atexit handlers must not run */
#define PROG_XCALL(prog, who, call, leave)                                                         \
    do {                                                                                           \
        const xfer_status_t st_ = (call);                                                          \
        if (st_ != XFER_SUCCESS) {                                                                 \
            fprintf(stderr, "%s: %s: %s: %s: %s\n", prog, who, #call, xfer_status_name(st_),       \
                    xfer_last_error());                                                            \
            fflush(stderr);                                                                        \
            leave(1);                                                                              \
        }                                                                                          \
    } while (0)

#endif /* XFER_TEST_PROG_H */
