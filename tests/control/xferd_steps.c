/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd's step accounting: ahead (a release reported before the announcements it depends on:
 * held, applied as they come, never logged as refused) and flow (a sending side's flow policy:
 * its own step numbers, steps dropped and skipped, shown beside the wire steps, only forward,
 * kept across restarts and compactions). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "xferd_client.h"

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
void case_ahead(void)
{
    xfer_ctl_t *ca = client(), *cb = client(), *cs = client();
    int64_t sa = reg(ca, "a", 1), sb = reg(cb, "b", 1);

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
    crash();
    if (restart() != 0)
        return;
    EXPECT_PROGRESS(cs, "c", 3, 4, -1, 0);
    EXPECT_OK(step(ca, sa, "c", 0, 5, 10));
    EXPECT_PROGRESS(cs, "c", 5, 6, -1, 0);
    EXPECT_OK(step(ca, sa, "c", 0, 7, 10));
    EXPECT_PROGRESS(cs, "c", 7, 7, -1, 0);
    /* and a compaction (the next restart rewrites the journal from a snapshot) */
    EXPECT_OK(ack(cb, sb, "c", 1, 10));
    crash();
    if (restart() != 0)
        return;
    crash();
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
void case_flow(void)
{
    xfer_ctl_t *ca = client(), *cb = client(), *cs = client();
    int64_t sa = reg(ca, "a", 1), sb = reg(cb, "b", 1);

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
    crash();
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
        crash();
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
