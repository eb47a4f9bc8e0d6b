/* SPDX-License-Identifier: BSD-3-Clause */
/* The client side of the xferd tests (test_xferd.c, its cases by stage in xferd_sessions.c,
 * xferd_life.c and xferd_steps.c): the daemon under test and the workflow it serves, clients of
 * the API, one helper per request that keeps the reply's err and msg for the checks, the status's
 * items, notices. */
#ifndef XFER_TEST_CONTROL_XFERD_CLIENT_H
#define XFER_TEST_CONTROL_XFERD_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fixture.h"

#define TOKEN   "0123456789abcdef0123456789abcdef"
#define WAIT_MS 10000 /* bound on a reply (a sanitizer build is slow) */

/* The daemon of the case; err and msg of the last reply ("" when it was ok). */
extern fx_daemon_t D;
extern char g_err[64], g_msg[600];

#define EXPECT_OK(call)                                                                            \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        CHECK(st_ == XFER_SUCCESS, "%s -> %s: %s %s", #call, xfer_status_name(st_), g_err, g_msg); \
    } while (0)

#define EXPECT_ERR(call, status, err)                                                              \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        CHECK(st_ == (status) && strcmp(g_err, err) == 0, "%s -> %s %s (%s), expected %s %s",      \
              #call, xfer_status_name(st_), g_err, g_msg, xfer_status_name(status), err);          \
    } while (0)

/* The workflow: a (1 rank) sends c to b (2 ranks), f full duplex between them, x on no channel. */
void workflow(char *buf, size_t cap, int hb_ms);
/* Start D on the workflow with heartbeats every @p hb_ms; -1 (a failure counted) when it did not.
 */
int start(int hb_ms);
/* Start D again in its directory (its journal kept); -1 (a failure counted) when it did not. */
int restart(void);
/* Kill D with SIGKILL (a crash) and wait for it; a failure counted when it does not die. */
void crash(void);

/* A client of D for workflow @p wf with token @p tok; client(): the workflow's own. */
xfer_ctl_t *client_as(const char *wf, const char *tok);
xfer_ctl_t *client(void);
xfer_ctl_msg_t *msg(const char *op);
xfer_ctl_msg_t *with_session(const char *op, int64_t session);
/* Send @p req (consumed) and wait for the reply; g_err/g_msg hold its err and msg ("" ok). */
xfer_status_t rq(xfer_ctl_t *c, xfer_ctl_msg_t *req, xfer_ctl_msg_t **reply);

/* The requests: each sent with rq(). reg() returns the session (-1, a failure counted). */
int64_t reg(xfer_ctl_t *c, const char *comp, int nprocs);
xfer_status_t heartbeat(xfer_ctl_t *c, int64_t s);
/* Rank @p rank of the component of session @p s beats. */
xfer_status_t beat(xfer_ctl_t *c, int64_t s, int rank);
xfer_status_t publish(xfer_ctl_t *c, int64_t s, const char *ch, const char *port);
xfer_ctl_msg_t *lookup_msg(int64_t s, const char *ch, int wait_ms);
/* lookup; *port (when given) receives the port ("" none) */
xfer_status_t lookup(xfer_ctl_t *c, int64_t s, const char *ch, int wait_ms, char *port, size_t cap);
xfer_status_t step(xfer_ctl_t *c, int64_t s, const char *ch, int side, int64_t k, int64_t bytes);
xfer_status_t ack(xfer_ctl_t *c, int64_t s, const char *ch, int side, int64_t released);
xfer_status_t flow(xfer_ctl_t *c, int64_t s, const char *ch, int side, int64_t app, int64_t dropped,
                   int64_t skipped);
xfer_status_t exited(xfer_ctl_t *c, const char *comp, int code);

/* The status (checked ok); the item of @p list named @p name, NULL when none. */
xfer_ctl_msg_t *get_status(xfer_ctl_t *c);
const xfer_ctl_msg_t *find_item(const xfer_ctl_msg_t *st, const char *list, const char *name);
/* Whether the status, asked on @p c, shows component @p comp in state @p state. */
int comp_in_state(xfer_ctl_t *c, const char *comp, const char *state);
/* The next notice within @p ms, NULL when none. */
xfer_ctl_msg_t *notice(xfer_ctl_t *c, int ms);

/* ---- the cases, by stage, dispatched by test_xferd.c's main ------------------------------- */

/* xferd_sessions.c: sessions and security */
void case_basic(void);
void case_order(void);
void case_auth(void);
void case_endpoint(void);
void case_curve(void);
/* xferd_life.c: liveness and life cycle */
void case_liveness(void);
void case_ranks(void);
void case_exited(void);
void case_stop(int by_signal);
void case_restart(void);
/* xferd_attach.c: readers that attach to a sender that runs on */
void case_attach(void);
/* xferd_steps.c: step accounting */
void case_ahead(void);
void case_flow(void);

#endif
