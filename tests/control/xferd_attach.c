/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd and readers that attach to a sender that runs on (docs/control-protocol.md, "attach"):
 * the reader's offer reaches the sender's session as an "attaching" notice, only the channel's
 * reader may offer, a reader declared failed that registers again is running again (its new
 * session), the failure notice names the failed incarnation's session, its offers end with it,
 * the channel's steps count anew from an attach, and a restart from the journal neither loses an
 * offer nor makes it again. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "xferd_client.h"

static xfer_status_t attach(xfer_ctl_t *c, int64_t s, const char *ch, const char *port)
{
    xfer_ctl_msg_t *m = with_session("attach", s);
    xfer_ctl_set_str(m, "channel", ch);
    xfer_ctl_set_str(m, "port", port);
    return rq(c, m, NULL);
}

/* The next notice on @p c (heartbeating @p s meanwhile), NULL when none within 2 s. */
static xfer_ctl_msg_t *next_notice(xfer_ctl_t *c, int64_t s)
{
    xfer_ctl_msg_t *n = NULL;
    for (int i = 0; i < 20 && !n; i++) {
        EXPECT_OK(heartbeat(c, s));
        n = notice(c, 100);
    }
    return n;
}

static void expect_offer(xfer_ctl_t *ca, int64_t sa, int64_t sb, const char *port)
{
    xfer_ctl_msg_t *n = next_notice(ca, sa);
    CHECK(n && strcmp(xfer_ctl_op(n), "attaching") == 0 &&
              strcmp(xfer_ctl_str(n, "channel", ""), "c") == 0 &&
              strcmp(xfer_ctl_str(n, "component", ""), "b") == 0 &&
              xfer_ctl_int(n, "session", 0) == sb && strcmp(xfer_ctl_str(n, "port", ""), port) == 0,
          "a is offered b's port %s (session %lld): got %s %s session %lld port %s", port,
          (long long) sb, n ? xfer_ctl_op(n) : "nothing", n ? xfer_ctl_str(n, "component", "") : "",
          n ? (long long) xfer_ctl_int(n, "session", 0) : 0LL,
          n ? xfer_ctl_str(n, "port", "") : "");
    xfer_ctl_msg_free(&n);
}

void case_attach(void)
{
    xfer_ctl_t *ca = client(), *cb = client(), *cb2 = client(), *cs = client();
    int64_t sa = reg(ca, "a", 1), sb = reg(cb, "b", 2), sb2;
    xfer_ctl_msg_t *n, *st;
    const xfer_ctl_msg_t *it;

    /* only the channel's reader offers; the sender is told, once */
    EXPECT_ERR(attach(ca, sa, "c", "p0"), XFER_ERR_PROTOCOL, "order");
    EXPECT_ERR(attach(cb, sb, "nope", "p0"), XFER_ERR_NOT_FOUND, "unknown");
    for (int k = 0; k < 5; k++)
        EXPECT_OK(step(ca, sa, "c", 0, k, 10));
    EXPECT_OK(attach(cb, sb, "c", "port-1"));
    expect_offer(ca, sa, sb, "port-1");
    EXPECT_OK(heartbeat(ca, sa));
    n = notice(ca, 200);
    CHECK(!n, "a second offer of the same port");
    xfer_ctl_msg_free(&n);
    /* the stream is formed anew: its steps count from 0 again */
    EXPECT_OK(step(ca, sa, "c", 0, 0, 10));
    EXPECT_OK(ack(cb, sb, "c", 1, 1));

    /* b dies (its launcher reports it): the failure names the incarnation, the offer ends */
    EXPECT_OK(exited(cs, "b", 137));
    n = next_notice(ca, sa);
    CHECK(n && strcmp(xfer_ctl_op(n), "failure") == 0 &&
              strcmp(xfer_ctl_str(n, "component", ""), "b") == 0 &&
              xfer_ctl_int(n, "session", 0) == sb,
          "failure of b's session %lld: got %s session %lld", (long long) sb,
          n ? xfer_ctl_op(n) : "nothing", n ? (long long) xfer_ctl_int(n, "session", 0) : 0LL);
    xfer_ctl_msg_free(&n);
    EXPECT_ERR(attach(cb, sb, "c", "port-dead"), XFER_ERR_PEER_FAILED, "failed");

    /* b comes back: a new incarnation, running, its offer goes to a */
    sb2 = reg(cb2, "b", 2);
    CHECK(sb2 > sb, "b's new session %lld after %lld", (long long) sb2, (long long) sb);
    CHECK(comp_in_state(cs, "b", "running"), "b is running again");
    EXPECT_ERR(heartbeat(cb, sb), XFER_ERR_NOT_FOUND, "unknown"); /* the old one stays gone */
    EXPECT_OK(attach(cb2, sb2, "c", "port-2"));
    expect_offer(ca, sa, sb2, "port-2");
    st = get_status(cs);
    it = find_item(st, "channels", "c");
    CHECK(it && xfer_ctl_int(it, "step0", -9) == -1, "steps anew after the second attach");
    xfer_ctl_msg_free(&st);

    /* a restart from the journal: b's old failure and the told offer are kept; nothing is
     * offered again */
    crash();
    if (restart() != 0)
        return;
    EXPECT_OK(heartbeat(cb2, sb2));
    EXPECT_OK(heartbeat(ca, sa));
    n = notice(ca, 300);
    CHECK(!n || strcmp(xfer_ctl_op(n), "attaching") != 0, "offered again after the restart");
    xfer_ctl_msg_free(&n);
    st = get_status(cs);
    it = find_item(st, "components", "b");
    CHECK(it && strcmp(xfer_ctl_str(it, "state", ""), "running") == 0 &&
              xfer_ctl_int(it, "session", 0) == sb2,
          "b running in its new session after the restart");
    it = NULL;
    for (int i = 0; xfer_ctl_item(st, "failures", i); i++)
        if (strcmp(xfer_ctl_str(xfer_ctl_item(st, "failures", i), "component", ""), "b") == 0)
            it = xfer_ctl_item(st, "failures", i);
    CHECK(it && strstr(xfer_ctl_str(it, "reason", ""), "137"),
          "b's old failure is in the status after the restart");
    xfer_ctl_msg_free(&st);
    /* an offer made while the daemon was down reaches a after it */
    EXPECT_OK(attach(cb2, sb2, "c", "port-3"));
    expect_offer(ca, sa, sb2, "port-3");
    /* b2 fails: a is told with its session, and a later offer of a failed b is refused */
    EXPECT_OK(exited(cs, "b", 9));
    n = next_notice(ca, sa);
    CHECK(n && strcmp(xfer_ctl_op(n), "failure") == 0 && xfer_ctl_int(n, "session", 0) == sb2,
          "failure of b's session %lld", (long long) sb2);
    xfer_ctl_msg_free(&n);
    xfer_ctl_close(&ca);
    xfer_ctl_close(&cb);
    xfer_ctl_close(&cb2);
    xfer_ctl_close(&cs);
    fx_stop(&D, SIGTERM);
}
