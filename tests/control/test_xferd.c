/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd's behaviour through the client API (plus a raw DEALER where the API will not do):
 *   test_xferd CASE --xferd PATH
 * CASE: basic (register, heartbeat, publish, lookups, status), order, auth, liveness (a lost
 * heartbeat reaches the peer as a failure notice in time), exited, stop, sigterm, restart (kill
 * -9, a restart from the journal keeps sessions and steps, a torn tail is tolerated), endpoint
 * (ephemeral tcp ports; refusals at start-up), curve, ahead (a release reported before the
 * announcements it depends on: held, applied as they come, never logged as refused), flow (a
 * sending side's flow policy: its own step numbers, steps dropped and skipped, shown beside the
 * wire steps, only forward, kept across restarts and compactions). Each case starts its own
 * daemon in a scratch directory. */
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "fixture.h"

#define TOKEN   "0123456789abcdef0123456789abcdef"
#define WAIT_MS 10000 /* bound on a reply (a sanitizer build is slow) */

static fx_daemon_t D;
static char g_err[64], g_msg[600];

static void workflow(char *buf, size_t cap, int hb_ms)
{
    snprintf(buf, cap,
             "workflow: w\n"
             "control: {heartbeat_ms: %d}\n"
             "components:\n"
             "  - {name: a, nprocs: 1, cmd: [x]}\n"
             "  - {name: b, nprocs: 2, cmd: [x]}\n"
             "  - {name: x, nprocs: 1, cmd: [x]}\n"
             "channels:\n"
             "  - {name: c, from: a, to: b, datasets: [{name: d, type: float64, dims: [4]}]}\n"
             "  - {name: f, from: b, to: a, duplex: full, datasets: [{name: e, type: int8, "
             "dims: [2]}, {name: g, type: int8, dims: [2], from: a}]}\n",
             hb_ms);
}

static int start(int hb_ms)
{
    char yaml[1024];

    workflow(yaml, sizeof(yaml), hb_ms);
    if (fx_setup(&D, D.xferd, yaml, TOKEN) != 0 || fx_start(&D, NULL) != 0) {
        fx_failures++;
        return -1;
    }
    return 0;
}

static xfer_ctl_t *client_as(const char *wf, const char *tok)
{
    xfer_ctl_opts_t o = {D.endpoint, wf, tok, NULL};
    xfer_ctl_t *c = NULL;

    CHECK(xfer_ctl_connect(&o, &c) == XFER_SUCCESS, "connect: %s", xfer_last_error());
    return c;
}

static xfer_ctl_t *client(void)
{
    return client_as("w", TOKEN);
}

static xfer_ctl_msg_t *msg(const char *op)
{
    xfer_ctl_msg_t *m = NULL;
    CHECK(xfer_ctl_msg_new(op, &m) == XFER_SUCCESS, "msg_new");
    return m;
}

/* Send @p req (consumed) and wait for the reply; g_err/g_msg hold its err and msg ("" ok). */
static xfer_status_t rq(xfer_ctl_t *c, xfer_ctl_msg_t *req, xfer_ctl_msg_t **reply)
{
    xfer_ctl_msg_t *r = NULL;
    xfer_status_t st = xfer_ctl_request(c, req, WAIT_MS, &r);

    snprintf(g_err, sizeof(g_err), "%s", r ? xfer_ctl_str(r, "err", "") : "(no reply)");
    snprintf(g_msg, sizeof(g_msg), "%s", r ? xfer_ctl_str(r, "msg", "") : xfer_last_error());
    if (reply)
        *reply = r;
    else
        xfer_ctl_msg_free(&r);
    xfer_ctl_msg_free(&req);
    return st;
}

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

static int64_t reg(xfer_ctl_t *c, const char *comp, int nprocs)
{
    xfer_ctl_msg_t *m = msg("register"), *r = NULL;
    int64_t s = -1;

    xfer_ctl_set_str(m, "component", comp);
    xfer_ctl_set_int(m, "nprocs", nprocs);
    xfer_ctl_set_int(m, "pid", getpid());
    xfer_ctl_set_str(m, "host", "testhost");
    if (rq(c, m, &r) == XFER_SUCCESS)
        s = xfer_ctl_int(r, "session", -1);
    CHECK(s >= 1, "register %s: %s %s", comp, g_err, g_msg);
    xfer_ctl_msg_free(&r);
    return s;
}

static xfer_ctl_msg_t *with_session(const char *op, int64_t session)
{
    xfer_ctl_msg_t *m = msg(op);
    xfer_ctl_set_int(m, "session", session);
    return m;
}

static xfer_status_t heartbeat(xfer_ctl_t *c, int64_t s)
{
    return rq(c, with_session("heartbeat", s), NULL);
}

/* Rank @p rank of the component of session @p s beats. */
static xfer_status_t beat(xfer_ctl_t *c, int64_t s, int rank)
{
    xfer_ctl_msg_t *m = with_session("beat", s);
    if (xfer_ctl_set_int(m, "rank", rank) != XFER_SUCCESS ||
        xfer_ctl_set_int(m, "pid", 4242) != XFER_SUCCESS ||
        xfer_ctl_set_str(m, "host", "here") != XFER_SUCCESS)
        return XFER_ERR_NO_MEMORY;
    return rq(c, m, NULL);
}

static xfer_status_t publish(xfer_ctl_t *c, int64_t s, const char *ch, const char *port)
{
    xfer_ctl_msg_t *m = with_session("publish", s);
    xfer_ctl_set_str(m, "channel", ch);
    xfer_ctl_set_str(m, "port", port);
    return rq(c, m, NULL);
}

static xfer_ctl_msg_t *lookup_msg(int64_t s, const char *ch, int wait_ms)
{
    xfer_ctl_msg_t *m = with_session("lookup", s);
    xfer_ctl_set_str(m, "channel", ch);
    xfer_ctl_set_int(m, "wait_ms", wait_ms);
    return m;
}

/* lookup; *port (when given) receives the port ("" none) */
static xfer_status_t lookup(xfer_ctl_t *c, int64_t s, const char *ch, int wait_ms, char *port,
                            size_t cap)
{
    xfer_ctl_msg_t *r = NULL;
    xfer_status_t st = rq(c, lookup_msg(s, ch, wait_ms), &r);

    if (port)
        snprintf(port, cap, "%s", xfer_ctl_str(r, "port", ""));
    xfer_ctl_msg_free(&r);
    return st;
}

static xfer_status_t step(xfer_ctl_t *c, int64_t s, const char *ch, int side, int64_t k,
                          int64_t bytes)
{
    xfer_ctl_msg_t *m = with_session("step", s);
    xfer_ctl_set_str(m, "channel", ch);
    xfer_ctl_set_int(m, "side", side);
    xfer_ctl_set_int(m, "step", k);
    xfer_ctl_set_int(m, "bytes", bytes);
    return rq(c, m, NULL);
}

static xfer_status_t ack(xfer_ctl_t *c, int64_t s, const char *ch, int side, int64_t released)
{
    xfer_ctl_msg_t *m = with_session("ack", s);
    xfer_ctl_set_str(m, "channel", ch);
    xfer_ctl_set_int(m, "side", side);
    xfer_ctl_set_int(m, "released", released);
    return rq(c, m, NULL);
}

static xfer_status_t flow(xfer_ctl_t *c, int64_t s, const char *ch, int side, int64_t app,
                          int64_t dropped, int64_t skipped)
{
    xfer_ctl_msg_t *m = with_session("flow", s);
    xfer_ctl_set_str(m, "channel", ch);
    xfer_ctl_set_int(m, "side", side);
    xfer_ctl_set_int(m, "app_step", app);
    xfer_ctl_set_int(m, "dropped", dropped);
    xfer_ctl_set_int(m, "skipped", skipped);
    return rq(c, m, NULL);
}

static xfer_status_t exited(xfer_ctl_t *c, const char *comp, int code)
{
    xfer_ctl_msg_t *m = msg("exited");
    xfer_ctl_set_str(m, "component", comp);
    xfer_ctl_set_int(m, "code", code);
    return rq(c, m, NULL);
}

static xfer_ctl_msg_t *get_status(xfer_ctl_t *c)
{
    xfer_ctl_msg_t *r = NULL;
    EXPECT_OK(rq(c, msg("status"), &r));
    return r;
}

static const xfer_ctl_msg_t *find_item(const xfer_ctl_msg_t *st, const char *list, const char *name)
{
    for (int i = 0; i < xfer_ctl_nitems(st, list); i++)
        if (strcmp(xfer_ctl_str(xfer_ctl_item(st, list, i), "name", ""), name) == 0)
            return xfer_ctl_item(st, list, i);
    return NULL;
}

/* The next notice within @p ms, NULL when none. */
static xfer_ctl_msg_t *notice(xfer_ctl_t *c, int ms)
{
    xfer_ctl_msg_t *n = NULL;
    if (xfer_ctl_recv(c, ms, &n) != XFER_SUCCESS)
        return NULL;
    return n;
}

/* ---- cases -------------------------------------------------------------------------------- */

static void case_basic(void)
{
    xfer_ctl_t *ca = client(), *cb = client(), *cs = client();
    xfer_ctl_msg_t *r = NULL, *st;
    const xfer_ctl_msg_t *it;
    fx_raw_t raw = {0};
    int64_t sa, sb, t0;
    char port[256];

    sa = reg(ca, "a", 1);
    sb = reg(cb, "b", 2);
    CHECK(sa != sb, "sessions differ");
    EXPECT_OK(heartbeat(ca, sa));
    EXPECT_OK(heartbeat(cb, sb));

    /* lookups before the publish: at once, then after a wait */
    EXPECT_ERR(lookup(cb, sb, "c", 0, NULL, 0), XFER_ERR_TIMEOUT, "timeout");
    t0 = fx_now_ms();
    EXPECT_ERR(lookup(cb, sb, "c", 200, NULL, 0), XFER_ERR_TIMEOUT, "timeout");
    CHECK(fx_now_ms() - t0 >= 190, "lookup timed out after %lld ms, asked 200",
          (long long) (fx_now_ms() - t0));

    /* a lookup that waits for the publish: the heartbeat sent after it on the same
     * connection is answered first, so the lookup is known to be pending */
    if (fx_raw_open(&raw, D.endpoint) == 0) {
        xfer_ctl_msg_t *m = lookup_msg(sb, "c", WAIT_MS);
        xfer_ctl_set_int(m, "id", 41);
        xfer_ctl_set_str(m, "wf", "w");
        xfer_ctl_set_str(m, "tok", TOKEN);
        fx_raw_send(&raw, m);
        xfer_ctl_msg_free(&m);
        m = with_session("heartbeat", sb);
        xfer_ctl_set_int(m, "id", 42);
        xfer_ctl_set_str(m, "wf", "w");
        xfer_ctl_set_str(m, "tok", TOKEN);
        fx_raw_send(&raw, m);
        xfer_ctl_msg_free(&m);
        m = fx_raw_recv(&raw, WAIT_MS);
        CHECK(m && xfer_ctl_int(m, "id", 0) == 42 && xfer_ctl_bool(m, "ok", 0),
              "heartbeat answered before the pending lookup");
        xfer_ctl_msg_free(&m);
        EXPECT_OK(publish(ca, sa, "c", "port-name-1"));
        m = fx_raw_recv(&raw, WAIT_MS);
        CHECK(m && xfer_ctl_int(m, "id", 0) == 41 && xfer_ctl_bool(m, "ok", 0) &&
                  strcmp(xfer_ctl_str(m, "port", ""), "port-name-1") == 0,
              "pending lookup answered with the port");
        xfer_ctl_msg_free(&m);
    }
    fx_raw_close(&raw);
    EXPECT_OK(lookup(cb, sb, "c", 0, port, sizeof(port)));
    CHECK(strcmp(port, "port-name-1") == 0, "port %s", port);

    /* steps and releases, then the status */
    for (int k = 0; k < 3; k++)
        EXPECT_OK(step(ca, sa, "c", 0, k, 1000));
    EXPECT_OK(ack(cb, sb, "c", 1, 2));
    st = get_status(cs);
    CHECK(strcmp(xfer_ctl_str(st, "workflow", ""), "w") == 0, "workflow");
    CHECK(xfer_ctl_int(st, "protocol", 0) == 1, "protocol");
    CHECK(xfer_ctl_int(st, "uptime_ms", -1) >= 0, "uptime");
    CHECK(xfer_ctl_bool(st, "recovered", 1) == 0, "not recovered");
    CHECK(xfer_ctl_nitems(st, "components") == 3, "3 components");
    it = find_item(st, "components", "a");
    CHECK(it && strcmp(xfer_ctl_str(it, "state", ""), "running") == 0, "a running");
    CHECK(it && xfer_ctl_int(it, "pid", 0) == getpid(), "a pid");
    CHECK(it && strcmp(xfer_ctl_str(it, "host", ""), "testhost") == 0, "a host");
    CHECK(it && xfer_ctl_int(it, "last_seen_ms", -1) >= 0 &&
              xfer_ctl_int(it, "last_seen_ms", -1) < 4000,
          "a last seen");
    it = find_item(st, "components", "b");
    CHECK(it && xfer_ctl_int(it, "nprocs", 0) == 2, "b nprocs");
    it = find_item(st, "components", "x");
    CHECK(it && strcmp(xfer_ctl_str(it, "state", ""), "waiting") == 0 &&
              xfer_ctl_int(it, "last_seen_ms", 0) == -1,
          "x waiting, never seen");
    it = find_item(st, "channels", "c");
    CHECK(it && strcmp(xfer_ctl_str(it, "from", ""), "a") == 0 &&
              strcmp(xfer_ctl_str(it, "to", ""), "b") == 0,
          "channel ends");
    CHECK(it && xfer_ctl_bool(it, "published", 0) == 1, "published");
    CHECK(it && xfer_ctl_int(it, "step0", -9) == 2 && xfer_ctl_int(it, "step1", -9) == -1, "steps");
    CHECK(it && xfer_ctl_int(it, "released0", -9) == 0 && xfer_ctl_int(it, "released1", -9) == 2,
          "released");
    CHECK(it && xfer_ctl_int(it, "bytes", 0) == 3000, "bytes");
    CHECK(it && xfer_ctl_int(it, "rate_bps", 0) > 0, "rate_bps %lld",
          it ? (long long) xfer_ctl_int(it, "rate_bps", 0) : -1LL);
    CHECK(xfer_ctl_nitems(st, "failures") == 0, "no failures");
    xfer_ctl_msg_free(&st);

    /* bye ends the session */
    EXPECT_OK(rq(ca, with_session("bye", sa), NULL));
    EXPECT_ERR(heartbeat(ca, sa), XFER_ERR_PROTOCOL, "order");
    st = get_status(cs);
    it = find_item(st, "components", "a");
    CHECK(it && strcmp(xfer_ctl_str(it, "state", ""), "done") == 0, "a done");
    xfer_ctl_msg_free(&st);
    xfer_ctl_msg_free(&r);
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cb);
    xfer_ctl_close(&cs);
    fx_stop(&D, SIGTERM);
}

static void case_order(void)
{
    xfer_ctl_t *ca = client(), *cb = client();
    int64_t sa = reg(ca, "a", 1), sb = reg(cb, "b", 1);

    EXPECT_OK(step(ca, sa, "c", 0, 3, 10));
    EXPECT_ERR(step(ca, sa, "c", 0, 2, 10), XFER_ERR_PROTOCOL, "order");
    EXPECT_OK(step(ca, sa, "c", 0, 3, 10)); /* a repeat is harmless */
    EXPECT_OK(step(ca, sa, "c", 0, 4, 10));
    EXPECT_ERR(step(cb, sb, "c", 0, 9, 10), XFER_ERR_PROTOCOL, "order"); /* b is side 1 */
    EXPECT_ERR(step(ca, sa, "c", 1, 0, 10), XFER_ERR_PROTOCOL, "order"); /* a is side 0 */
    EXPECT_OK(ack(cb, sb, "c", 1, 5)); /* (acks ahead of the announcements: case ahead) */
    EXPECT_ERR(ack(cb, sb, "c", 1, 4), XFER_ERR_PROTOCOL, "order"); /* backwards */
    EXPECT_ERR(ack(ca, sa, "c", 0, 1), XFER_ERR_PROTOCOL, "order"); /* b sends nothing on c */
    EXPECT_ERR(publish(cb, sb, "c", "p"), XFER_ERR_PROTOCOL, "order");
    EXPECT_ERR(lookup(ca, sa, "c", 0, NULL, 0), XFER_ERR_PROTOCOL, "order");
    EXPECT_OK(rq(cb, with_session("bye", sb), NULL));
    EXPECT_ERR(ack(cb, sb, "c", 1, 5), XFER_ERR_PROTOCOL, "order");
    EXPECT_ERR(heartbeat(cb, sb), XFER_ERR_PROTOCOL, "order");
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cb);
    fx_stop(&D, SIGTERM);
}

static void case_auth(void)
{
    xfer_ctl_t *bad_tok = client_as("w", "0123456789abcdef0123456789abcdeX");
    xfer_ctl_t *bad_wf = client_as("other", TOKEN), *ca = client(), *cx = client(), *ca2 = client();
    fx_raw_t raw = {0};
    int64_t sa, sx;

    EXPECT_ERR(rq(bad_tok, msg("status"), NULL), XFER_ERR_DENIED, "denied");
    EXPECT_ERR(rq(bad_wf, msg("status"), NULL), XFER_ERR_DENIED, "denied");
    EXPECT_ERR(rq(bad_tok, msg("stop"), NULL), XFER_ERR_DENIED, "denied");
    /* the version is checked first and answered with the request's id */
    if (fx_raw_open(&raw, D.endpoint) == 0) {
        xfer_ctl_msg_t *m = msg("status"), *r;
        xfer_ctl_set_int(m, "v", 2);
        xfer_ctl_set_int(m, "id", 17);
        xfer_ctl_set_str(m, "wf", "w");
        xfer_ctl_set_str(m, "tok", TOKEN);
        fx_raw_send(&raw, m);
        xfer_ctl_msg_free(&m);
        r = fx_raw_recv(&raw, WAIT_MS);
        CHECK(r && strcmp(xfer_ctl_str(r, "err", ""), "version") == 0 &&
                  xfer_ctl_int(r, "id", 0) == 17,
              "v 2 answered with err version and id 17");
        CHECK(r && strstr(xfer_ctl_str(r, "msg", ""), "2") &&
                  strstr(xfer_ctl_str(r, "msg", ""), "1"),
              "the message names both versions: %s", r ? xfer_ctl_str(r, "msg", "") : "-");
        xfer_ctl_msg_free(&r);
    }
    fx_raw_close(&raw);

    sa = reg(ca, "a", 1);
    sx = reg(cx, "x", 1);
    {
        xfer_ctl_msg_t *m = msg("register");
        xfer_ctl_set_str(m, "component", "nosuch");
        xfer_ctl_set_int(m, "nprocs", 1);
        xfer_ctl_set_int(m, "pid", 1);
        xfer_ctl_set_str(m, "host", "h");
        EXPECT_ERR(rq(ca2, m, NULL), XFER_ERR_NOT_FOUND, "unknown");
        m = msg("register");
        xfer_ctl_set_str(m, "component", "a");
        xfer_ctl_set_int(m, "nprocs", 1);
        xfer_ctl_set_int(m, "pid", 1);
        xfer_ctl_set_str(m, "host", "h");
        EXPECT_ERR(rq(ca2, m, NULL), XFER_ERR_STATE, "exists");
    }
    EXPECT_ERR(step(ca, sa, "nosuch", 0, 0, 0), XFER_ERR_NOT_FOUND, "unknown");
    EXPECT_ERR(step(cx, sx, "c", 0, 0, 0), XFER_ERR_NOT_FOUND, "unknown"); /* x is no end */
    EXPECT_ERR(heartbeat(ca, sa + 8192), XFER_ERR_NOT_FOUND, "unknown");
    EXPECT_ERR(exited(ca, "nosuch", 1), XFER_ERR_NOT_FOUND, "unknown");
    /* schema errors are the protocol's */
    {
        xfer_ctl_msg_t *m = with_session("step", sa);
        xfer_ctl_set_str(m, "channel", "c");
        xfer_ctl_set_int(m, "side", 0);
        xfer_ctl_set_int(m, "step", -1);
        xfer_ctl_set_int(m, "bytes", 0);
        EXPECT_ERR(rq(ca, m, NULL), XFER_ERR_PROTOCOL, "protocol");
        CHECK(strstr(g_msg, "step") && strstr(g_msg, "-1"), "names op and field: %s", g_msg);
    }
    EXPECT_OK(heartbeat(ca, sa));
    xfer_ctl_close(&bad_tok);
    xfer_ctl_close(&bad_wf);
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cx);
    xfer_ctl_close(&ca2);
    fx_stop(&D, SIGTERM);
    CHECK(fx_log_has(&D, "wrong token"), "the log names the refusal");
}

static void case_liveness(void)
{
    const int hb = 100, timeout = 4 * hb, slack = 250;
    xfer_ctl_t *ca = client(), *cb = client(), *cx = client();
    int64_t sa = reg(ca, "a", 1), sb = reg(cb, "b", 2), sx = reg(cx, "x", 1), t_last, deadline;
    xfer_ctl_msg_t *n = NULL, *st;
    const xfer_ctl_msg_t *it;

    /* a falls silent; b and x keep heartbeating and b waits for the notice */
    EXPECT_OK(heartbeat(ca, sa));
    t_last = fx_now_ms();
    deadline = t_last + 10 * timeout;
    while (!n && fx_now_ms() < deadline) {
        EXPECT_OK(heartbeat(cb, sb));
        EXPECT_OK(beat(cb, sb, 1)); /* b's other rank */
        EXPECT_OK(heartbeat(cx, sx));
        n = notice(cb, hb / 2);
    }
    CHECK(n != NULL, "no failure notice within %d ms", 10 * timeout);
    if (n) {
        int64_t after = fx_now_ms() - t_last;
        printf("failure notice %lld ms after a's last heartbeat (timeout %d + heartbeat %d)\n",
               (long long) after, timeout, hb);
        CHECK(strcmp(xfer_ctl_op(n), "failure") == 0 &&
                  strcmp(xfer_ctl_str(n, "component", ""), "a") == 0,
              "notice %s about %s", xfer_ctl_op(n), xfer_ctl_str(n, "component", ""));
        CHECK(strstr(xfer_ctl_str(n, "reason", ""), "heartbeat"), "reason %s",
              xfer_ctl_str(n, "reason", ""));
        CHECK(after >= timeout, "declared after %lld ms, before the timeout", (long long) after);
        CHECK(after <= timeout + hb + slack, "declared after %lld ms", (long long) after);
    }
    xfer_ctl_msg_free(&n);
    /* once only, and not to x (no channel with a) */
    EXPECT_OK(heartbeat(cb, sb));
    EXPECT_OK(beat(cb, sb, 1));
    EXPECT_OK(heartbeat(cx, sx));
    n = notice(cb, 0);
    CHECK(!n, "a second notice to b");
    xfer_ctl_msg_free(&n);
    n = notice(cx, 0);
    CHECK(!n, "x was told: it shares no channel with a");
    xfer_ctl_msg_free(&n);
    EXPECT_ERR(heartbeat(ca, sa), XFER_ERR_PEER_FAILED, "failed");
    EXPECT_ERR(lookup(cb, sb, "c", 0, NULL, 0), XFER_ERR_PEER_FAILED, "failed");
    st = get_status(cb);
    it = find_item(st, "components", "a");
    CHECK(it && strcmp(xfer_ctl_str(it, "state", ""), "failed") == 0 &&
              strstr(xfer_ctl_str(it, "reason", ""), "heartbeat"),
          "a failed in the status");
    CHECK(xfer_ctl_nitems(st, "failures") == 1 &&
              strcmp(xfer_ctl_str(xfer_ctl_item(st, "failures", 0), "component", ""), "a") == 0,
          "one failure");
    xfer_ctl_msg_free(&st);
    /* a failed component may register anew */
    sa = reg(ca, "a", 1);
    EXPECT_OK(heartbeat(ca, sa));
    EXPECT_OK(heartbeat(cb, sb));
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cb);
    xfer_ctl_close(&cx);
    fx_stop(&D, SIGTERM);
}

/* Every rank counts: a component whose rank 1 stops beating fails, named, while its rank 0 beats
 * on; one whose rank never beat fails after twice the timeout; beats that cannot be are refused. */
static void case_ranks(void)
{
    const int hb = 100, timeout = 4 * hb, slack = 250;
    xfer_ctl_t *ca = client(), *cb = client();
    int64_t sa = reg(ca, "a", 1), sb = reg(cb, "b", 3), t_last, deadline;
    xfer_ctl_msg_t *n = NULL, *st;
    const xfer_ctl_msg_t *it;

    EXPECT_ERR(beat(cb, sb, 3), XFER_ERR_PROTOCOL, "protocol"); /* b has ranks 0-2 */
    EXPECT_ERR(beat(cb, sb + 1, 1), XFER_ERR_NOT_FOUND, "unknown");
    /* b's ranks 1 and 2 beat, then rank 2 stops; a waits for the notice */
    EXPECT_OK(beat(cb, sb, 1));
    EXPECT_OK(beat(cb, sb, 2));
    t_last = fx_now_ms();
    deadline = t_last + 10 * timeout;
    while (!n && fx_now_ms() < deadline) { /* (b's beats are refused once it failed) */
        EXPECT_OK(heartbeat(ca, sa));
        (void) heartbeat(cb, sb);
        (void) beat(cb, sb, 1);
        n = notice(ca, hb / 2);
    }
    CHECK(n != NULL, "no failure notice within %d ms", 10 * timeout);
    if (n) {
        int64_t after = fx_now_ms() - t_last;
        const char *why = xfer_ctl_str(n, "reason", "");
        printf("failure notice %lld ms after rank 2's last beat: %s\n", (long long) after, why);
        CHECK(strcmp(xfer_ctl_str(n, "component", ""), "b") == 0, "notice about %s",
              xfer_ctl_str(n, "component", ""));
        CHECK(strstr(why, "rank 2 (pid 4242)") && strstr(why, "no heartbeat"), "reason %s", why);
        CHECK(after >= timeout && after <= timeout + hb + slack, "declared after %lld ms",
              (long long) after);
    }
    xfer_ctl_msg_free(&n);
    EXPECT_ERR(beat(cb, sb, 1), XFER_ERR_PEER_FAILED, "failed");
    /* a component whose rank 1 never beats */
    sb = reg(cb, "b", 2);
    t_last = fx_now_ms();
    deadline = t_last + 10 * timeout;
    while (!n && fx_now_ms() < deadline) {
        EXPECT_OK(heartbeat(ca, sa));
        (void) heartbeat(cb, sb);
        n = notice(ca, hb / 2);
    }
    CHECK(n != NULL, "no failure notice for a rank that never beat");
    if (n) {
        int64_t after = fx_now_ms() - t_last;
        CHECK(strstr(xfer_ctl_str(n, "reason", ""), "rank 1 sent no heartbeat"), "reason %s",
              xfer_ctl_str(n, "reason", ""));
        CHECK(after >= 2 * timeout && after <= 2 * timeout + hb + slack,
              "declared after %lld ms (2 x %d)", (long long) after, timeout);
    }
    xfer_ctl_msg_free(&n);
    st = get_status(ca);
    it = find_item(st, "components", "b");
    CHECK(it && strcmp(xfer_ctl_str(it, "state", ""), "failed") == 0, "b failed in the status");
    xfer_ctl_msg_free(&st);
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cb);
    fx_stop(&D, SIGTERM);
}

static void case_exited(void)
{
    xfer_ctl_t *ca = client(), *cb = client(), *cx = client(), *launcher = client();
    int64_t sb, sx;
    xfer_ctl_msg_t *n, *st;
    const xfer_ctl_msg_t *it;

    reg(ca, "a", 1);
    sb = reg(cb, "b", 1);
    sx = reg(cx, "x", 1);
    /* b waits for a's port while a dies */
    EXPECT_OK(exited(launcher, "a", 1));
    n = notice(cb, WAIT_MS);
    CHECK(n && strcmp(xfer_ctl_op(n), "failure") == 0 &&
              strcmp(xfer_ctl_str(n, "component", ""), "a") == 0 &&
              strstr(xfer_ctl_str(n, "reason", ""), "code 1"),
          "failure notice to b");
    xfer_ctl_msg_free(&n);
    EXPECT_ERR(lookup(cb, sb, "c", 5000, NULL, 0), XFER_ERR_PEER_FAILED, "failed");
    CHECK(strstr(g_msg, "a"), "names the failed component: %s", g_msg);
    /* code 0 after bye is clean; code 0 without bye is a failure */
    EXPECT_OK(rq(cx, with_session("bye", sx), NULL));
    EXPECT_OK(exited(launcher, "x", 0));
    EXPECT_OK(exited(launcher, "b", 0));
    st = get_status(launcher);
    it = find_item(st, "components", "x");
    CHECK(it && strcmp(xfer_ctl_str(it, "state", ""), "done") == 0, "x done");
    it = find_item(st, "components", "b");
    CHECK(it && strcmp(xfer_ctl_str(it, "state", ""), "failed") == 0 &&
              strstr(xfer_ctl_str(it, "reason", ""), "without bye"),
          "b failed: exited 0 without bye");
    CHECK(xfer_ctl_nitems(st, "failures") == 2, "two failures");
    xfer_ctl_msg_free(&st);
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cb);
    xfer_ctl_close(&cx);
    xfer_ctl_close(&launcher);
    fx_stop(&D, SIGTERM);
}

static void case_stop(int by_signal)
{
    xfer_ctl_t *cb = client(), *ctl = client();
    xfer_ctl_msg_t *n;
    int status = -1;

    reg(cb, "b", 1);
    if (by_signal)
        kill(D.pid, SIGTERM);
    else
        EXPECT_OK(rq(ctl, msg("stop"), NULL));
    n = notice(cb, WAIT_MS);
    CHECK(n && strcmp(xfer_ctl_op(n), "shutdown") == 0, "shutdown notice");
    CHECK(n && strstr(xfer_ctl_str(n, "reason", ""), by_signal ? "SIGTERM" : "stop"), "reason %s",
          n ? xfer_ctl_str(n, "reason", "") : "-");
    xfer_ctl_msg_free(&n);
    CHECK(fx_wait_exit(&D, 20000, &status) == 0, "xferd did not exit");
    CHECK(status == 0, "exit status 0x%x", status);
    xfer_ctl_close(&cb);
    xfer_ctl_close(&ctl);
}

static int restart(void)
{
    if (fx_start(&D, NULL) != 0) {
        fx_failures++;
        return -1;
    }
    return 0;
}

static void case_restart(void)
{
    xfer_ctl_t *ca = client(), *cb = client(), *cs = client();
    int64_t sa = reg(ca, "a", 1), sb = reg(cb, "b", 1);
    xfer_ctl_msg_t *st;
    const xfer_ctl_msg_t *it;
    char port[64];
    FILE *f;
    int status;

    EXPECT_OK(publish(ca, sa, "c", "port-before-crash"));
    for (int k = 0; k < 5; k++)
        EXPECT_OK(step(ca, sa, "c", 0, k, 100));
    EXPECT_OK(ack(cb, sb, "c", 1, 3));

    kill(D.pid, SIGKILL);
    CHECK(fx_wait_exit(&D, 20000, &status) == 0, "xferd did not die");
    if (restart() != 0)
        return;
    /* the clients carry on with their sessions: ZeroMQ reconnects them */
    EXPECT_OK(heartbeat(ca, sa));
    EXPECT_OK(heartbeat(cb, sb));
    EXPECT_OK(lookup(cb, sb, "c", 0, port, sizeof(port)));
    CHECK(strcmp(port, "port-before-crash") == 0, "port %s", port);
    st = get_status(cs);
    CHECK(xfer_ctl_bool(st, "recovered", 0) == 1, "recovered");
    it = find_item(st, "channels", "c");
    CHECK(it && xfer_ctl_int(it, "step0", -9) == 4 && xfer_ctl_int(it, "released1", -9) == 3 &&
              xfer_ctl_int(it, "bytes", 0) == 500,
          "steps recovered");
    it = find_item(st, "components", "a");
    CHECK(it && strcmp(xfer_ctl_str(it, "state", ""), "running") == 0 &&
              xfer_ctl_int(it, "session", 0) == sa,
          "a running with its session");
    xfer_ctl_msg_free(&st);
    EXPECT_OK(step(ca, sa, "c", 0, 4, 100)); /* a retry across the restart */
    EXPECT_OK(step(ca, sa, "c", 0, 5, 100));
    EXPECT_ERR(step(ca, sa, "c", 0, 3, 100), XFER_ERR_PROTOCOL, "order");

    /* a torn tail: a record length promising more than there is */
    kill(D.pid, SIGKILL);
    CHECK(fx_wait_exit(&D, 20000, &status) == 0, "xferd did not die");
    f = fopen(D.journal, "ab");
    CHECK(f != NULL, "open %s", D.journal);
    if (f) {
        fwrite("\x00\x00\x00\x40\x8a\xa1v\x01", 1, 8, f);
        fclose(f);
    }
    if (restart() != 0)
        return;
    EXPECT_OK(heartbeat(ca, sa));
    st = get_status(cs);
    it = find_item(st, "channels", "c");
    CHECK(xfer_ctl_bool(st, "recovered", 0) == 1 && it && xfer_ctl_int(it, "step0", -9) == 5 &&
              xfer_ctl_int(it, "bytes", 0) == 600,
          "recovered past the torn record");
    xfer_ctl_msg_free(&st);
    CHECK(fx_log_has(&D, "torn"), "the torn record is logged");
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cb);
    xfer_ctl_close(&cs);
    fx_stop(&D, SIGTERM);
}

/* The progress of channel @p ch in the status (-9: no such channel). */
static void chan_progress(xfer_ctl_t *cs, const char *ch, int64_t *step0, int64_t *released1,
                          int64_t *step1, int64_t *released0)
{
    xfer_ctl_msg_t *st = get_status(cs);
    const xfer_ctl_msg_t *it = find_item(st, "channels", ch);

    *step0 = it ? xfer_ctl_int(it, "step0", -9) : -9;
    *step1 = it ? xfer_ctl_int(it, "step1", -9) : -9;
    *released0 = it ? xfer_ctl_int(it, "released0", -9) : -9;
    *released1 = it ? xfer_ctl_int(it, "released1", -9) : -9;
    xfer_ctl_msg_free(&st);
}

#define EXPECT_PROGRESS(cs, ch, s0, r1, s1, r0)                                                    \
    do {                                                                                           \
        int64_t s0_, r1_, s1_, r0_;                                                                \
        chan_progress(cs, ch, &s0_, &r1_, &s1_, &r0_);                                             \
        CHECK(s0_ == (s0) && r1_ == (r1) && s1_ == (s1) && r0_ == (r0),                            \
              "channel %s: step0 %lld released1 %lld step1 %lld released0 %lld, expected %d %d "   \
              "%d %d",                                                                             \
              ch, (long long) s0_, (long long) r1_, (long long) s1_, (long long) r0_, s0, r1, s1,  \
              r0);                                                                                 \
    } while (0)

/* The receiving leader reports its releases on its own connection, the sending leader its
 * announcements on another, and the data travels over MPI: an ack may reach xferd before the
 * step reports it depends on. Such an ack is legal: it is held and applied as the steps come
 * (the status never shows more released than announced), and it is not logged as refused.
 * Acks that no ordering explains are still refused: backwards, from a side that receives
 * nothing, beyond the steps of a side that said bye (all of its reports precede its bye). */
static void case_ahead(void)
{
    xfer_ctl_t *ca = client(), *cb = client(), *cs = client();
    int64_t sa = reg(ca, "a", 1), sb = reg(cb, "b", 1);
    int status;

    /* b released step 0 before xferd heard a announce it */
    EXPECT_OK(ack(cb, sb, "c", 1, 1));
    EXPECT_PROGRESS(cs, "c", -1, 0, -1, 0);
    EXPECT_OK(step(ca, sa, "c", 0, 0, 10));
    EXPECT_PROGRESS(cs, "c", 0, 1, -1, 0);
    /* several steps ahead; a repeat of the held value changes nothing */
    EXPECT_OK(ack(cb, sb, "c", 1, 4));
    EXPECT_OK(ack(cb, sb, "c", 1, 4));
    EXPECT_PROGRESS(cs, "c", 0, 1, -1, 0);
    EXPECT_OK(step(ca, sa, "c", 0, 1, 10));
    EXPECT_PROGRESS(cs, "c", 1, 2, -1, 0);
    EXPECT_OK(step(ca, sa, "c", 0, 3, 10)); /* a step report may skip (lost or coalesced) */
    EXPECT_PROGRESS(cs, "c", 3, 4, -1, 0);
    /* backwards: against what the side reported, not what was applied */
    EXPECT_OK(ack(cb, sb, "c", 1, 7));
    EXPECT_ERR(ack(cb, sb, "c", 1, 6), XFER_ERR_PROTOCOL, "order");
    EXPECT_PROGRESS(cs, "c", 3, 4, -1, 0);
    /* still malformed: the wrong side, a side that receives nothing, unknown channels */
    EXPECT_ERR(ack(cb, sb, "c", 0, 1), XFER_ERR_PROTOCOL, "order");
    EXPECT_ERR(ack(ca, sa, "c", 0, 1), XFER_ERR_PROTOCOL, "order");      /* c: a only sends */
    EXPECT_ERR(step(cb, sb, "c", 1, 0, 10), XFER_ERR_PROTOCOL, "order"); /* c: b only receives */
    EXPECT_ERR(ack(cb, sb, "nope", 1, 1), XFER_ERR_NOT_FOUND, "unknown");

    /* full duplex: both sides announce and both release, each possibly ahead */
    EXPECT_OK(ack(ca, sa, "f", 1, 2)); /* a is side 1 of f */
    EXPECT_OK(ack(cb, sb, "f", 0, 1));
    EXPECT_PROGRESS(cs, "f", -1, 0, -1, 0);
    EXPECT_OK(step(cb, sb, "f", 0, 0, 2));
    EXPECT_OK(step(ca, sa, "f", 1, 0, 2));
    EXPECT_PROGRESS(cs, "f", 0, 1, 0, 1);
    EXPECT_OK(step(cb, sb, "f", 0, 1, 2));
    EXPECT_PROGRESS(cs, "f", 1, 2, 0, 1);

    /* a held ack survives a daemon restart (replayed from the journal) */
    kill(D.pid, SIGKILL);
    CHECK(fx_wait_exit(&D, 20000, &status) == 0, "xferd did not die");
    if (restart() != 0)
        return;
    EXPECT_PROGRESS(cs, "c", 3, 4, -1, 0);
    EXPECT_OK(step(ca, sa, "c", 0, 5, 10));
    EXPECT_PROGRESS(cs, "c", 5, 6, -1, 0);
    EXPECT_OK(step(ca, sa, "c", 0, 7, 10));
    EXPECT_PROGRESS(cs, "c", 7, 7, -1, 0);
    /* and a compaction (the next restart rewrites the journal from a snapshot) */
    EXPECT_OK(ack(cb, sb, "c", 1, 10));
    kill(D.pid, SIGKILL);
    CHECK(fx_wait_exit(&D, 20000, &status) == 0, "xferd did not die");
    if (restart() != 0)
        return;
    kill(D.pid, SIGKILL);
    CHECK(fx_wait_exit(&D, 20000, &status) == 0, "xferd did not die");
    if (restart() != 0)
        return;
    EXPECT_PROGRESS(cs, "c", 7, 8, -1, 0);
    EXPECT_OK(step(ca, sa, "c", 0, 8, 10));
    EXPECT_PROGRESS(cs, "c", 8, 9, -1, 0);

    /* (the refusals above are of other kinds) */
    CHECK(!fx_log_has(&D, "steps: side 0 announced") && !fx_log_has(&D, "steps: side 1 announced"),
          "an ack ahead of the announcements was logged as refused");

    /* a's bye: every report of a came before it, so the held release of step 9 (10 steps)
     * is one no ordering explains: logged; and a later ack past a's steps is refused */
    EXPECT_OK(rq(ca, with_session("bye", sa), NULL));
    CHECK(fx_log_has(&D, "side 1 of channel c released 10 steps, but side 0 (a) announced 9"),
          "a held release past the steps of a side that said bye is logged");
    EXPECT_ERR(ack(cb, sb, "c", 1, 11), XFER_ERR_PROTOCOL, "order");
    CHECK(strstr(g_msg, "said bye") != NULL, "message: %s", g_msg);
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cb);
    xfer_ctl_close(&cs);
    fx_stop(&D, SIGTERM);
}

/* The flow keys of side @p side of channel @p ch in the status: app_step, dropped, skipped and
 * the other side's received (-9: absent); *@p step the side's wire step. */
static void chan_flow(xfer_ctl_t *cs, const char *ch, int side, int64_t v[4], int64_t *step)
{
    static const char *const key[2][4] = {{"app_step0", "dropped0", "skipped0", "received1"},
                                          {"app_step1", "dropped1", "skipped1", "received0"}};
    xfer_ctl_msg_t *st = get_status(cs);
    const xfer_ctl_msg_t *it = find_item(st, "channels", ch);

    for (int k = 0; k < 4; k++)
        v[k] = it && xfer_ctl_type(it, key[side][k]) == XFER_CTL_INT
                   ? xfer_ctl_int(it, key[side][k], -9)
                   : -9;
    *step = it ? xfer_ctl_int(it, side ? "step1" : "step0", -9) : -9;
    xfer_ctl_msg_free(&st);
}

#define EXPECT_FLOW(cs, ch, side, wire, app, dropped, skipped, received)                           \
    do {                                                                                           \
        int64_t v_[4], w_;                                                                         \
        chan_flow(cs, ch, side, v_, &w_);                                                          \
        CHECK(w_ == (wire) && v_[0] == (app) && v_[1] == (dropped) && v_[2] == (skipped) &&        \
                  v_[3] == (received),                                                             \
              "channel %s side %d: step %lld app_step %lld dropped %lld skipped %lld received "    \
              "%lld, expected %d %d %d %d %d",                                                     \
              ch, side, (long long) w_, (long long) v_[0], (long long) v_[1], (long long) v_[2],   \
              (long long) v_[3], wire, app, dropped, skipped, received);                           \
    } while (0)

/* A sending side under a flow policy reports its own step numbers and the steps it dropped and
 * skipped ("flow"), beside the wire steps of "step": the status shows them only for such a
 * side; they only go forward, only a side that sends reports them, and a restart keeps them
 * (the journal's records, then the compaction's snapshot). */
static void case_flow(void)
{
    xfer_ctl_t *ca = client(), *cb = client(), *cs = client();
    int64_t sa = reg(ca, "a", 1), sb = reg(cb, "b", 1);
    int status;

    /* no policy: the status is as it was */
    EXPECT_OK(step(ca, sa, "c", 0, 0, 10));
    EXPECT_OK(ack(cb, sb, "c", 1, 1));
    EXPECT_FLOW(cs, "c", 0, 0, -9, -9, -9, -9);
    EXPECT_FLOW(cs, "f", 0, -1, -9, -9, -9, -9);
    EXPECT_FLOW(cs, "f", 1, -1, -9, -9, -9, -9);
    /* dropped before anything was sent under the policy (app_step -1), then a step sent */
    EXPECT_OK(flow(ca, sa, "c", 0, -1, 2, 0));
    EXPECT_FLOW(cs, "c", 0, 0, -1, 2, 0, 1);
    EXPECT_OK(step(ca, sa, "c", 0, 1, 10));
    EXPECT_OK(flow(ca, sa, "c", 0, 5, 4, 1));
    EXPECT_OK(ack(cb, sb, "c", 1, 2));
    EXPECT_FLOW(cs, "c", 0, 1, 5, 4, 1, 2);
    EXPECT_FLOW(cs, "f", 1, -1, -9, -9, -9, -9);
    EXPECT_OK(flow(ca, sa, "c", 0, 5, 4, 1)); /* a repeat changes nothing */
    /* backwards, each count; the wrong side; a side that sends nothing; no such channel */
    EXPECT_ERR(flow(ca, sa, "c", 0, 4, 4, 1), XFER_ERR_PROTOCOL, "order");
    CHECK(strstr(g_msg, "goes backwards") != NULL, "message: %s", g_msg);
    EXPECT_ERR(flow(ca, sa, "c", 0, 5, 3, 1), XFER_ERR_PROTOCOL, "order");
    EXPECT_ERR(flow(ca, sa, "c", 0, 5, 4, 0), XFER_ERR_PROTOCOL, "order");
    EXPECT_ERR(flow(cb, sb, "c", 0, 9, 9, 9), XFER_ERR_PROTOCOL, "order"); /* b is side 1 */
    EXPECT_ERR(flow(cb, sb, "c", 1, 9, 9, 9), XFER_ERR_PROTOCOL, "order"); /* b only receives */
    CHECK(strstr(g_msg, "sends nothing") != NULL, "message: %s", g_msg);
    EXPECT_ERR(flow(ca, sa, "nope", 0, 9, 9, 9), XFER_ERR_NOT_FOUND, "unknown");
    EXPECT_FLOW(cs, "c", 0, 1, 5, 4, 1, 2);
    /* full duplex: a is side 1 of f and sends g there; side 0 (b) shows nothing */
    EXPECT_OK(step(ca, sa, "f", 1, 0, 2));
    EXPECT_OK(flow(ca, sa, "f", 1, 6, 0, 5));
    EXPECT_FLOW(cs, "f", 1, 0, 6, 0, 5, 0);
    EXPECT_FLOW(cs, "f", 0, -1, -9, -9, -9, -9);

    /* kill -9: the restarted daemon replays the flow records */
    kill(D.pid, SIGKILL);
    CHECK(fx_wait_exit(&D, 20000, &status) == 0, "xferd did not die");
    if (restart() != 0)
        return;
    EXPECT_OK(heartbeat(ca, sa));
    EXPECT_FLOW(cs, "c", 0, 1, 5, 4, 1, 2);
    EXPECT_FLOW(cs, "f", 1, 0, 6, 0, 5, 0);
    EXPECT_FLOW(cs, "f", 0, -1, -9, -9, -9, -9);
    EXPECT_ERR(flow(ca, sa, "c", 0, 5, 3, 1), XFER_ERR_PROTOCOL, "order");
    EXPECT_OK(step(ca, sa, "c", 0, 2, 10));
    EXPECT_OK(flow(ca, sa, "c", 0, 9, 6, 2));
    /* twice more: the second replays the compaction's snapshot ("chan" with the flow keys) */
    for (int k = 0; k < 2; k++) {
        kill(D.pid, SIGKILL);
        CHECK(fx_wait_exit(&D, 20000, &status) == 0, "xferd did not die");
        if (restart() != 0)
            return;
    }
    EXPECT_OK(heartbeat(ca, sa));
    EXPECT_FLOW(cs, "c", 0, 2, 9, 6, 2, 2);
    EXPECT_FLOW(cs, "f", 1, 0, 6, 0, 5, 0);
    EXPECT_FLOW(cs, "f", 0, -1, -9, -9, -9, -9);
    EXPECT_ERR(flow(ca, sa, "c", 0, 9, 6, 1), XFER_ERR_PROTOCOL, "order");
    EXPECT_OK(flow(ca, sa, "c", 0, 9, 7, 2)); /* a drop after the last step sent */
    EXPECT_FLOW(cs, "c", 0, 2, 9, 7, 2, 2);
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cb);
    xfer_ctl_close(&cs);
    fx_stop(&D, SIGTERM);
}

/* Refusals at start-up: exit status 2 and a line naming the problem. */
static void expect_refused(const char *const *args, const char *text)
{
    int status = fx_run(&D, args);

    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 2, "xferd %s ...: status 0x%x, expected 2",
          args[0], status);
    CHECK(fx_log_has(&D, text), "the log lacks \"%s\"", text);
}

static void case_endpoint(void)
{
    const char *tcp[] = {"--endpoint", "tcp://localhost:0", NULL};
    const char *remote[] = {"--config",        D.cfg, "--token-file", D.tok_file, "--endpoint",
                            "tcp://0.0.0.0:0", NULL};
    const char *inproc[] = {"--config",   D.cfg, "--token-file", D.tok_file, "--endpoint",
                            "inproc://x", NULL};
    const char *notoken[] = {"--config", D.cfg, "--run-dir", D.run_dir, NULL};
    const char *open_token[] = {"--config", D.cfg, "--token-file", D.tok_file, NULL};
    xfer_ctl_t *c;
    xfer_ctl_msg_t *st;

    /* the default endpoint (ipc in the run directory) is served: stop it, serve tcp */
    CHECK(strncmp(D.endpoint, "ipc://", 6) == 0 && strstr(D.endpoint, "/run/xferd.sock"),
          "default endpoint %s", D.endpoint);
    fx_stop(&D, SIGTERM);
    if (fx_start(&D, tcp) != 0) {
        fx_failures++;
        return;
    }
    CHECK(strncmp(D.endpoint, "tcp://127.0.0.1:", 16) == 0 && atoi(D.endpoint + 16) > 0,
          "ephemeral port: %s", D.endpoint);
    c = client();
    st = get_status(c);
    CHECK(st && xfer_ctl_bool(st, "ok", 0), "status over tcp");
    xfer_ctl_msg_free(&st);
    xfer_ctl_close(&c);
    fx_stop(&D, SIGTERM);

    expect_refused(remote, "--allow-remote");
    expect_refused(inproc, "only ipc:// and tcp://127.0.0.1");
    unsetenv("XFER_CONTROL_TOKEN_FILE");
    expect_refused(notoken, "no workflow token");
    chmod(D.tok_file, 0644);
    expect_refused(open_token, "group or others");
}

static void case_curve(void)
{
    char pub[41], sec[41], key_file[400], yaml[2048];
    xfer_ctl_opts_t o = {NULL, "w", TOKEN, pub};
    xfer_ctl_t *c = NULL;
    xfer_ctl_msg_t *st, *m;
    fx_raw_t raw = {0};
    FILE *f;

    if (!zmq_has("curve")) {
        printf("libzmq without CURVE: nothing to test\n");
        return;
    }
    fx_stop(&D, SIGTERM);
    CHECK(zmq_curve_keypair(pub, sec) == 0, "zmq_curve_keypair");
    snprintf(key_file, sizeof(key_file), "%s/server.key", D.dir);
    f = fopen(key_file, "w");
    if (!f) {
        CHECK(0, "cannot write %s", key_file);
        return;
    }
    fprintf(f, "%s\n", sec);
    fclose(f);
    chmod(key_file, 0600);
    /* the workflow with the CURVE keys in its control mapping */
    workflow(yaml, sizeof(yaml), 1000);
    {
        char *p = strstr(yaml, "control: {heartbeat_ms: 1000}\n"), rest[1024];
        snprintf(rest, sizeof(rest), "%s", p + strlen("control: {heartbeat_ms: 1000}\n"));
        snprintf(p, sizeof(yaml) - (size_t) (p - yaml),
                 "control: {heartbeat_ms: 1000, curve_public_key: \"%s\", "
                 "curve_secret_key_file: \"%s\"}\n%s",
                 pub, key_file, rest);
    }
    f = fopen(D.cfg, "w");
    if (!f) {
        CHECK(0, "cannot write %s", D.cfg);
        return;
    }
    fputs(yaml, f);
    fclose(f);
    if (fx_start(&D, NULL) != 0) {
        fx_failures++;
        return;
    }
    CHECK(fx_log_has(&D, "CURVE"), "the log says CURVE");
    o.endpoint = D.endpoint;
    CHECK(xfer_ctl_connect(&o, &c) == XFER_SUCCESS, "connect: %s", xfer_last_error());
    st = get_status(c);
    CHECK(st && xfer_ctl_bool(st, "ok", 0), "status over CURVE");
    xfer_ctl_msg_free(&st);
    xfer_ctl_close(&c);
    /* plain text gets nothing back */
    if (fx_raw_open(&raw, D.endpoint) == 0) {
        m = msg("status");
        xfer_ctl_set_int(m, "id", 1);
        xfer_ctl_set_str(m, "wf", "w");
        xfer_ctl_set_str(m, "tok", TOKEN);
        fx_raw_send(&raw, m);
        xfer_ctl_msg_free(&m);
        m = fx_raw_recv(&raw, 300);
        CHECK(!m, "a plain-text client was answered");
        xfer_ctl_msg_free(&m);
    }
    fx_raw_close(&raw);
    fx_stop(&D, SIGTERM);
    /* a key file others may read is refused */
    chmod(key_file, 0640);
    {
        const char *args[] = {"--config", D.cfg, "--token-file", D.tok_file, NULL};
        expect_refused(args, "group or others");
    }
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    int hb = 1000;

    for (int i = 2; i + 1 < argc; i += 2)
        if (strcmp(argv[i], "--xferd") == 0)
            D.xferd = argv[i + 1];
    if (!D.xferd) {
        fprintf(stderr, "usage: test_xferd CASE --xferd PATH\n");
        return 2;
    }
    if (strcmp(c, "liveness") == 0 || strcmp(c, "ranks") == 0)
        hb = 100;
    {
        const char *xferd = D.xferd;
        memset(&D, 0, sizeof(D));
        D.xferd = xferd;
    }
    if (start(hb) != 0) {
        fx_cleanup(&D);
        return 1;
    }
    printf("xferd at %s\n", D.endpoint);
    if (strcmp(c, "basic") == 0)
        case_basic();
    else if (strcmp(c, "order") == 0)
        case_order();
    else if (strcmp(c, "auth") == 0)
        case_auth();
    else if (strcmp(c, "liveness") == 0)
        case_liveness();
    else if (strcmp(c, "ranks") == 0)
        case_ranks();
    else if (strcmp(c, "exited") == 0)
        case_exited();
    else if (strcmp(c, "stop") == 0)
        case_stop(0);
    else if (strcmp(c, "sigterm") == 0)
        case_stop(1);
    else if (strcmp(c, "restart") == 0)
        case_restart();
    else if (strcmp(c, "endpoint") == 0)
        case_endpoint();
    else if (strcmp(c, "curve") == 0)
        case_curve();
    else if (strcmp(c, "ahead") == 0)
        case_ahead();
    else if (strcmp(c, "flow") == 0)
        case_flow();
    else
        CHECK(0, "unknown case \"%s\"", c);
    fx_cleanup(&D);
    if (fx_failures) {
        fprintf(stderr, "test_xferd %s: %d checks failed\n", c, fx_failures);
        return 1;
    }
    printf("test_xferd %s: all checks passed\n", c);
    return 0;
}
