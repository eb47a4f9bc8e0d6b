/* SPDX-License-Identifier: BSD-3-Clause */
/* The control plane's client: one ZeroMQ DEALER socket to xferd (docs/control-protocol.md).
 * Requests are matched to replies by "id"; notices that arrive while a request waits are kept
 * in a small queue for xfer_ctl_recv(). One thread uses one client. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include <xfer/control.h>

#include "../core/core.h"

#define CTL_MAX_QUEUED 64 /* notices kept while nobody reads them (oldest dropped) */

struct xfer_ctl {
    void *zctx;
    void *sock;
    char *endpoint;
    char *wf;
    char *tok;
    int64_t next_id;
    xfer_ctl_msg_t *queue[CTL_MAX_QUEUED];
    int qhead, qlen;
    double heard; /* xfer_now_ms() of the last message received */
};

static xfer_status_t zerr(const xfer_ctl_t *c, const char *what)
{
    return XFER_ERR(XFER_ERR_INTERNAL, "xferd at %s: %s: %s", c ? c->endpoint : "?", what,
                    zmq_strerror(zmq_errno()));
}

xfer_status_t xfer_ctl_connect(const xfer_ctl_opts_t *o, xfer_ctl_t **out)
{
    const int linger = 0;
    const int64_t maxmsg = XFER_CTL_MAX_REPLY;
    xfer_status_t st = XFER_SUCCESS;
    xfer_ctl_t *c;

    if (!o || !out || !o->endpoint || !o->endpoint[0] || !o->workflow || !o->token)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "endpoint, workflow and token are required");
    *out = NULL;
    c = xfer_calloc(1, sizeof(*c));
    if (!c)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "control client");
    c->next_id = 1;
    c->endpoint = xfer_strdup(o->endpoint);
    c->wf = xfer_strdup(o->workflow);
    c->tok = xfer_strdup(o->token);
    if (!c->endpoint || !c->wf || !c->tok) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "control client");
        goto fail;
    }
    c->zctx = zmq_ctx_new();
    if (!c->zctx) {
        st = zerr(c, "zmq_ctx_new");
        goto fail;
    }
    c->sock = zmq_socket(c->zctx, ZMQ_DEALER);
    if (!c->sock) {
        st = zerr(c, "zmq_socket(DEALER)");
        goto fail;
    }
    if (zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof(linger)) != 0 ||
        zmq_setsockopt(c->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) != 0) {
        st = zerr(c, "zmq_setsockopt");
        goto fail;
    }
    if (o->server_key && o->server_key[0]) {
        char pub[41], sec[41];
        if (!zmq_has("curve")) {
            st = XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                          "xferd at %s: CURVE keys are configured but this libzmq has no CURVE",
                          c->endpoint);
            goto fail;
        }
        if (strlen(o->server_key) != 40) {
            st = XFER_ERR(XFER_ERR_CONFIG,
                          "control.curve_public_key: expected 40 Z85 characters, got %zu",
                          strlen(o->server_key));
            goto fail;
        }
        /* a fresh key pair per connection: clients are authenticated by the token */
        if (zmq_curve_keypair(pub, sec) != 0 ||
            zmq_setsockopt(c->sock, ZMQ_CURVE_SERVERKEY, o->server_key, 40) != 0 ||
            zmq_setsockopt(c->sock, ZMQ_CURVE_PUBLICKEY, pub, 40) != 0 ||
            zmq_setsockopt(c->sock, ZMQ_CURVE_SECRETKEY, sec, 40) != 0) {
            st = zerr(c, "CURVE setup");
            goto fail;
        }
    }
    if (zmq_connect(c->sock, c->endpoint) != 0) {
        st = XFER_ERR(XFER_ERR_CONFIG, "xferd endpoint \"%s\": %s", c->endpoint,
                      zmq_strerror(zmq_errno()));
        goto fail;
    }
    *out = c;
    return XFER_SUCCESS;
fail:
    xfer_ctl_close(&c);
    return st;
}

void xfer_ctl_close(xfer_ctl_t **pc)
{
    xfer_ctl_t *c = pc ? *pc : NULL;
    int i;
    if (!c)
        return;
    for (i = 0; i < c->qlen; i++)
        xfer_ctl_msg_free(&c->queue[(c->qhead + i) % CTL_MAX_QUEUED]);
    if (c->sock)
        zmq_close(c->sock);
    if (c->zctx)
        zmq_ctx_term(c->zctx);
    xfer_free(c->endpoint);
    xfer_free(c->wf);
    xfer_free(c->tok);
    xfer_free(c);
    *pc = NULL;
}

int xfer_ctl_fd(xfer_ctl_t *c)
{
    int fd = -1;
    size_t len = sizeof(fd);
    if (!c || zmq_getsockopt(c->sock, ZMQ_FD, &fd, &len) != 0)
        return -1;
    return fd;
}

static void enqueue(xfer_ctl_t *c, xfer_ctl_msg_t *m)
{
    if (c->qlen == CTL_MAX_QUEUED) { /* drop the oldest: notices are idempotent */
        xfer_ctl_msg_free(&c->queue[c->qhead]);
        c->qhead = (c->qhead + 1) % CTL_MAX_QUEUED;
        c->qlen--;
    }
    c->queue[(c->qhead + c->qlen) % CTL_MAX_QUEUED] = m;
    c->qlen++;
}

static xfer_ctl_msg_t *dequeue(xfer_ctl_t *c)
{
    xfer_ctl_msg_t *m;
    if (!c->qlen)
        return NULL;
    m = c->queue[c->qhead];
    c->qhead = (c->qhead + 1) % CTL_MAX_QUEUED;
    c->qlen--;
    return m;
}

static xfer_status_t stamp_and_send(xfer_ctl_t *c, xfer_ctl_msg_t *req, int64_t *id)
{
    void *buf = NULL;
    size_t len = 0;
    xfer_status_t st;

    *id = c->next_id++;
    XFER_CHECK_GOTO(xfer_ctl_set_int(req, "id", *id), st, out);
    XFER_CHECK_GOTO(xfer_ctl_set_str(req, "wf", c->wf), st, out);
    XFER_CHECK_GOTO(xfer_ctl_set_str(req, "tok", c->tok), st, out);
    XFER_CHECK_GOTO(xfer_ctl_encode(req, XFER_CTL_MAX_MSG, &buf, &len), st, out);
    if (zmq_send(c->sock, buf, len, ZMQ_DONTWAIT) < 0)
        st = zmq_errno() == EAGAIN
                 ? XFER_ERR(XFER_ERR_TIMEOUT, "xferd at %s: send queue full (daemon unreachable?)",
                            c->endpoint)
                 : zerr(c, "zmq_send");
out:
    free(buf);
    return st;
}

/* Receive one message within @p timeout_ms (-1: none came). Undecodable input from the daemon
 * is an error: the daemon is ours and speaks the protocol. */
static xfer_status_t recv_one(xfer_ctl_t *c, int timeout_ms, xfer_ctl_msg_t **m)
{
    zmq_pollitem_t it = {c->sock, 0, ZMQ_POLLIN, 0};
    zmq_msg_t z;
    xfer_status_t st;
    int rc;

    *m = NULL;
    rc = zmq_poll(&it, 1, timeout_ms);
    if (rc < 0)
        return zmq_errno() == EINTR ? XFER_SUCCESS : zerr(c, "zmq_poll");
    if (rc == 0)
        return XFER_SUCCESS;
    zmq_msg_init(&z);
    if (zmq_msg_recv(&z, c->sock, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&z);
        return zmq_errno() == EAGAIN || zmq_errno() == EINTR ? XFER_SUCCESS
                                                             : zerr(c, "zmq_msg_recv");
    }
    c->heard = xfer_now_ms();
    st = xfer_ctl_decode(zmq_msg_data(&z), zmq_msg_size(&z), XFER_CTL_MAX_REPLY, m);
    zmq_msg_close(&z);
    if (st != XFER_SUCCESS)
        xfer_ctl_msg_free(m); /* another version is handed over too */
    if (st != XFER_SUCCESS)
        return XFER_ERR(st, "xferd at %s sent an unreadable message: %s", c->endpoint,
                        xfer_last_error());
    return XFER_SUCCESS;
}

static int is_reply(const xfer_ctl_msg_t *m)
{
    return strcmp(xfer_ctl_op(m), "reply") == 0;
}

xfer_status_t xfer_ctl_request(xfer_ctl_t *c, xfer_ctl_msg_t *req, int timeout_ms,
                               xfer_ctl_msg_t **reply)
{
    const double deadline = xfer_now_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
    xfer_status_t st;
    int64_t id;

    if (reply)
        *reply = NULL;
    if (!c || !req)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "client and request are required");
    XFER_CHECK_GOTO(stamp_and_send(c, req, &id), st, out);
    for (;;) {
        xfer_ctl_msg_t *m = NULL;
        double left = deadline - xfer_now_ms();
        if (left <= 0)
            return XFER_ERR(XFER_ERR_TIMEOUT, "xferd at %s: no reply to \"%s\" within %d ms",
                            c->endpoint, xfer_ctl_op(req), timeout_ms);
        XFER_CHECK_GOTO(recv_one(c, (int) left + 1, &m), st, out);
        if (!m)
            continue;
        if (!is_reply(m)) {
            enqueue(c, m);
            continue;
        }
        if (xfer_ctl_int(m, "id", -1) != id) { /* a reply to an earlier send or timed-out call */
            xfer_ctl_msg_free(&m);
            continue;
        }
        st = XFER_SUCCESS;
        if (!xfer_ctl_bool(m, "ok", 0)) {
            const char *err = xfer_ctl_str(m, "err", "internal");
            st = xfer_err_raw(xfer_ctl_err_status(err), "xferd: %s: %s", err,
                              xfer_ctl_str(m, "msg", "(no message)"));
        }
        if (reply)
            *reply = m;
        else
            xfer_ctl_msg_free(&m);
        return st;
    }
out:
    return st;
}

xfer_status_t xfer_ctl_send(xfer_ctl_t *c, xfer_ctl_msg_t *req)
{
    int64_t id;
    if (!c || !req)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "client and request are required");
    return stamp_and_send(c, req, &id);
}

xfer_status_t xfer_ctl_last_heard(const xfer_ctl_t *c, double *mono_ms)
{
    if (!c || !mono_ms)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "client and output are required");
    *mono_ms = c->heard;
    return XFER_SUCCESS;
}

xfer_status_t xfer_ctl_recv(xfer_ctl_t *c, int timeout_ms, xfer_ctl_msg_t **notice)
{
    const double deadline = xfer_now_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
    xfer_status_t st;

    if (!c || !notice)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "client and notice are required");
    *notice = dequeue(c);
    if (*notice)
        return XFER_SUCCESS;
    for (;;) {
        xfer_ctl_msg_t *m = NULL;
        double left = deadline - xfer_now_ms();
        XFER_CHECK_GOTO(recv_one(c, left > 0 ? (int) left + 1 : 0, &m), st, out);
        if (m && !is_reply(m)) {
            *notice = m;
            return XFER_SUCCESS;
        }
        if (m) { /* a reply to a send(): nobody waits for it */
            xfer_ctl_msg_free(&m);
            continue;
        }
        if (xfer_now_ms() >= deadline)
            return XFER_ERR(XFER_ERR_TIMEOUT, "xferd at %s: no notice within %d ms", c->endpoint,
                            timeout_ms);
    }
out:
    return st;
}
