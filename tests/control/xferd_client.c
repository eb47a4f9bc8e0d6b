/* SPDX-License-Identifier: BSD-3-Clause */
/* The client side of the xferd tests (xferd_client.h): the daemon under test, started on the
 * workflow every case uses, and one helper per request of the protocol. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "xferd_client.h"

fx_daemon_t D;
char g_err[64], g_msg[600];

void workflow(char *buf, size_t cap, int hb_ms)
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

int start(int hb_ms)
{
    char yaml[1024];

    workflow(yaml, sizeof(yaml), hb_ms);
    if (fx_setup(&D, D.xferd, yaml, TOKEN) != 0 || fx_start(&D, NULL) != 0) {
        fx_failures++;
        return -1;
    }
    return 0;
}

xfer_ctl_t *client_as(const char *wf, const char *tok)
{
    xfer_ctl_opts_t o = {D.endpoint, wf, tok, NULL};
    xfer_ctl_t *c = NULL;

    CHECK(xfer_ctl_connect(&o, &c) == XFER_SUCCESS, "connect: %s", xfer_last_error());
    return c;
}

xfer_ctl_t *client(void)
{
    return client_as("w", TOKEN);
}

xfer_ctl_msg_t *msg(const char *op)
{
    xfer_ctl_msg_t *m = NULL;
    CHECK(xfer_ctl_msg_new(op, &m) == XFER_SUCCESS, "msg_new");
    return m;
}

xfer_status_t rq(xfer_ctl_t *c, xfer_ctl_msg_t *req, xfer_ctl_msg_t **reply)
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

int64_t reg(xfer_ctl_t *c, const char *comp, int nprocs)
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

xfer_ctl_msg_t *with_session(const char *op, int64_t session)
{
    xfer_ctl_msg_t *m = msg(op);
    xfer_ctl_set_int(m, "session", session);
    return m;
}

xfer_status_t heartbeat(xfer_ctl_t *c, int64_t s)
{
    return rq(c, with_session("heartbeat", s), NULL);
}

xfer_status_t beat(xfer_ctl_t *c, int64_t s, int rank)
{
    xfer_ctl_msg_t *m = with_session("beat", s);
    if (xfer_ctl_set_int(m, "rank", rank) != XFER_SUCCESS ||
        xfer_ctl_set_int(m, "pid", 4242) != XFER_SUCCESS ||
        xfer_ctl_set_str(m, "host", "here") != XFER_SUCCESS)
        return XFER_ERR_NO_MEMORY;
    return rq(c, m, NULL);
}

xfer_status_t publish(xfer_ctl_t *c, int64_t s, const char *ch, const char *port)
{
    xfer_ctl_msg_t *m = with_session("publish", s);
    xfer_ctl_set_str(m, "channel", ch);
    xfer_ctl_set_str(m, "port", port);
    return rq(c, m, NULL);
}

xfer_ctl_msg_t *lookup_msg(int64_t s, const char *ch, int wait_ms)
{
    xfer_ctl_msg_t *m = with_session("lookup", s);
    xfer_ctl_set_str(m, "channel", ch);
    xfer_ctl_set_int(m, "wait_ms", wait_ms);
    return m;
}

xfer_status_t lookup(xfer_ctl_t *c, int64_t s, const char *ch, int wait_ms, char *port, size_t cap)
{
    xfer_ctl_msg_t *r = NULL;
    xfer_status_t st = rq(c, lookup_msg(s, ch, wait_ms), &r);

    if (port)
        snprintf(port, cap, "%s", xfer_ctl_str(r, "port", ""));
    xfer_ctl_msg_free(&r);
    return st;
}

xfer_status_t step(xfer_ctl_t *c, int64_t s, const char *ch, int side, int64_t k, int64_t bytes)
{
    xfer_ctl_msg_t *m = with_session("step", s);
    xfer_ctl_set_str(m, "channel", ch);
    xfer_ctl_set_int(m, "side", side);
    xfer_ctl_set_int(m, "step", k);
    xfer_ctl_set_int(m, "bytes", bytes);
    return rq(c, m, NULL);
}

xfer_status_t ack(xfer_ctl_t *c, int64_t s, const char *ch, int side, int64_t released)
{
    xfer_ctl_msg_t *m = with_session("ack", s);
    xfer_ctl_set_str(m, "channel", ch);
    xfer_ctl_set_int(m, "side", side);
    xfer_ctl_set_int(m, "released", released);
    return rq(c, m, NULL);
}

xfer_status_t flow(xfer_ctl_t *c, int64_t s, const char *ch, int side, int64_t app, int64_t dropped,
                   int64_t skipped)
{
    xfer_ctl_msg_t *m = with_session("flow", s);
    xfer_ctl_set_str(m, "channel", ch);
    xfer_ctl_set_int(m, "side", side);
    xfer_ctl_set_int(m, "app_step", app);
    xfer_ctl_set_int(m, "dropped", dropped);
    xfer_ctl_set_int(m, "skipped", skipped);
    return rq(c, m, NULL);
}

xfer_status_t exited(xfer_ctl_t *c, const char *comp, int code)
{
    xfer_ctl_msg_t *m = msg("exited");
    xfer_ctl_set_str(m, "component", comp);
    xfer_ctl_set_int(m, "code", code);
    return rq(c, m, NULL);
}

xfer_ctl_msg_t *get_status(xfer_ctl_t *c)
{
    xfer_ctl_msg_t *r = NULL;
    EXPECT_OK(rq(c, msg("status"), &r));
    return r;
}

const xfer_ctl_msg_t *find_item(const xfer_ctl_msg_t *st, const char *list, const char *name)
{
    for (int i = 0; i < xfer_ctl_nitems(st, list); i++)
        if (strcmp(xfer_ctl_str(xfer_ctl_item(st, list, i), "name", ""), name) == 0)
            return xfer_ctl_item(st, list, i);
    return NULL;
}

int comp_in_state(xfer_ctl_t *c, const char *comp, const char *state)
{
    xfer_ctl_msg_t *st = get_status(c);
    const xfer_ctl_msg_t *it = find_item(st, "components", comp);
    int yes = it && strcmp(xfer_ctl_str(it, "state", ""), state) == 0;

    xfer_ctl_msg_free(&st);
    return yes;
}

xfer_ctl_msg_t *notice(xfer_ctl_t *c, int ms)
{
    xfer_ctl_msg_t *n = NULL;
    if (xfer_ctl_recv(c, ms, &n) != XFER_SUCCESS)
        return NULL;
    return n;
}

int restart(void)
{
    if (fx_start(&D, NULL) != 0) {
        fx_failures++;
        return -1;
    }
    return 0;
}

void crash(void)
{
    int status;

    kill(D.pid, SIGKILL);
    CHECK(fx_wait_exit(&D, 20000, &status) == 0, "xferd did not die");
}
