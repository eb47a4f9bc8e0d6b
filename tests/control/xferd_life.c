/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd's liveness and life cycle: liveness (a lost heartbeat reaches the peer as a failure
 * notice in time), ranks (every rank's beat counts), exited, stop and sigterm (shutdown notices),
 * restart (kill -9, a restart from the journal keeps sessions and steps, a torn tail is
 * tolerated). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "xferd_client.h"

void case_liveness(void)
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
void case_ranks(void)
{
    const int hb = 100, timeout = 4 * hb, slack = 250;
    xfer_ctl_t *ca = client(), *cb = client();
    int64_t sa = reg(ca, "a", 1), sb = reg(cb, "b", 3), t_last, deadline;
    xfer_ctl_msg_t *n = NULL;

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
    CHECK(comp_in_state(ca, "b", "failed"), "b failed in the status");
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cb);
    fx_stop(&D, SIGTERM);
}

void case_exited(void)
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

void case_stop(int by_signal)
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

void case_restart(void)
{
    xfer_ctl_t *ca = client(), *cb = client(), *cs = client();
    int64_t sa = reg(ca, "a", 1), sb = reg(cb, "b", 1);
    xfer_ctl_msg_t *st;
    const xfer_ctl_msg_t *it;
    char port[64];
    FILE *f;

    EXPECT_OK(publish(ca, sa, "c", "port-before-crash"));
    for (int k = 0; k < 5; k++)
        EXPECT_OK(step(ca, sa, "c", 0, k, 100));
    EXPECT_OK(ack(cb, sb, "c", 1, 3));

    crash();
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
    crash();
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
