/* SPDX-License-Identifier: BSD-3-Clause */
/* Test fixture of the control-plane tests: an xferd of its own in a scratch directory (started
 * with fork/exec, ready when its --ready-file appears, stopped and reaped with bounded waits),
 * and a raw DEALER socket for what the client API will not send. */
#ifndef XFER_TEST_CONTROL_FIXTURE_H
#define XFER_TEST_CONTROL_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <xfer/control.h>

#include "check.h"

typedef struct fx_daemon {
    const char *xferd;
    char dir[256]; /* scratch directory */
    char cfg[320], tok_file[320], ready[320], log[320], run_dir[320], journal[320];
    char endpoint[512];
    pid_t pid;
} fx_daemon_t;

/* Scratch directory with the workflow file @p yaml and a token file (mode 0600). */
int fx_setup(fx_daemon_t *d, const char *xferd, const char *yaml, const char *token);
/* Start xferd (extra arguments: NULL-terminated, may be NULL) and wait for its ready file. */
int fx_start(fx_daemon_t *d, const char *const *extra);
/* Run xferd with exactly @p args (after argv[0]; NULL-terminated) to its end (bounded); its
 * wait status, -1 when it did not end. For start-up refusals. */
int fx_run(fx_daemon_t *d, const char *const *args);
/* Wait up to @p timeout_ms for xferd to exit; 0 and its wait status, -1 when it did not. */
int fx_wait_exit(fx_daemon_t *d, int timeout_ms, int *status);
/* Signal xferd, wait for it (bounded) and check it exited with 0. */
int fx_stop(fx_daemon_t *d, int sig);
void fx_dump_log(const fx_daemon_t *d);
/* Kill a daemon still running, print its log when a check failed, remove the directory. */
void fx_cleanup(fx_daemon_t *d);
int64_t fx_now_ms(void);
/* Whether the daemon's log holds @p text. */
int fx_log_has(const fx_daemon_t *d, const char *text);

typedef struct fx_raw {
    void *ctx, *sock;
} fx_raw_t;

int fx_raw_open(fx_raw_t *r, const char *endpoint);
int fx_raw_send_bytes(fx_raw_t *r, const void *buf, size_t len, int more);
/* Encode @p m as it is (no fields added) and send it. */
int fx_raw_send(fx_raw_t *r, const xfer_ctl_msg_t *m);
/* The next message within @p timeout_ms, decoded; NULL when none came. */
xfer_ctl_msg_t *fx_raw_recv(fx_raw_t *r, int timeout_ms);
void fx_raw_close(fx_raw_t *r);

#endif
