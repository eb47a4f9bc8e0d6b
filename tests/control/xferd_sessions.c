/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd's sessions and their security: basic (register, heartbeat, publish, lookups, status),
 * order (requests out of order or from the wrong side), auth (tokens, versions, unknown names,
 * schema errors), endpoint (ephemeral tcp ports; refusals at start-up), curve. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zmq.h>

#include "xferd_client.h"

/* Send @p m (consumed) raw, with the id @p id and the credentials the client API would add. */
static void raw_send(fx_raw_t *raw, xfer_ctl_msg_t *m, int64_t id)
{
    xfer_ctl_set_int(m, "id", id);
    xfer_ctl_set_str(m, "wf", "w");
    xfer_ctl_set_str(m, "tok", TOKEN);
    fx_raw_send(raw, m);
    xfer_ctl_msg_free(&m);
}

void case_basic(void)
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
        xfer_ctl_msg_t *m;
        raw_send(&raw, lookup_msg(sb, "c", WAIT_MS), 41);
        raw_send(&raw, with_session("heartbeat", sb), 42);
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
    CHECK(comp_in_state(cs, "a", "done"), "a done");
    xfer_ctl_msg_free(&r);
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cb);
    xfer_ctl_close(&cs);
    fx_stop(&D, SIGTERM);
}

void case_order(void)
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

void case_auth(void)
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
        raw_send(&raw, m, 17);
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

/* Refusals at start-up: exit status 2 and a line naming the problem. */
static void expect_refused(const char *const *args, const char *text)
{
    int status = fx_run(&D, args);

    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 2, "xferd %s ...: status 0x%x, expected 2",
          args[0], status);
    CHECK(fx_log_has(&D, text), "the log lacks \"%s\"", text);
}

void case_endpoint(void)
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

void case_curve(void)
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
        raw_send(&raw, msg("status"), 1);
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
