/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd's operations (docs/control-protocol.md): each request of a client is checked against
 * the registry (state.c), journaled before it is applied, so that what a client was told
 * survives a daemon restart, and answered; the status reply with each channel's byte rate; the
 * periodic tick (liveness, lookup deadlines). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "xferd.h"

static const char *state_names[] = {"waiting", "running", "done", "failed"};

/* ---- byte rate (live only: the journal keeps no rate) ------------------------------------- */

static void rate_add(xferd_t *d, xferd_chan_t *ch, int64_t bytes)
{
    int64_t sec = (xferd_now_ms() - d->start_ms) / 1000;
    int k = (int) (sec % XFERD_RATE_SLOTS);

    if (ch->rate_sec[k] != sec) {
        ch->rate_sec[k] = sec;
        ch->rate_bytes[k] = 0;
    }
    ch->rate_bytes[k] += bytes;
}

static int64_t rate_bps(const xferd_t *d, const xferd_chan_t *ch)
{
    int64_t up = xferd_now_ms() - d->start_ms, sec = up / 1000, sum = 0;
    int64_t win_ms = up < XFERD_RATE_WIN * 1000 ? up : XFERD_RATE_WIN * 1000;

    for (int k = 0; k < XFERD_RATE_SLOTS; k++)
        if (ch->rate_sec[k] >= 0 && ch->rate_sec[k] > sec - XFERD_RATE_WIN)
            sum += ch->rate_bytes[k];
    if (win_ms < 1000)
        win_ms = 1000;
    return (int64_t) ((double) sum * 1000.0 / (double) win_ms);
}

/* ---- the operations ----------------------------------------------------------------------- */

/* The component of the request's live session; -1 with @p res set otherwise. A request of the
 * session proves it alive and tells where its notices go. */
static int session_comp(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                        xferd_res_t *res)
{
    int64_t s = xfer_ctl_int(req, "session", 0);
    int64_t k = s >= 1 ? (s - 1) % XFERD_SLOTS : -1;
    xferd_comp_t *c;
    char sr[256];

    if (k < 0 || k >= d->ncomp || d->comp[k].session != s) {
        xferd_res_err(res, "unknown", "no session %" PRId64, s);
        return -1;
    }
    c = &d->comp[k];
    if (c->state == XFERD_DONE) {
        xferd_res_err(res, "order", "session %" PRId64 " of component %s said bye", s, c->name);
        return -1;
    }
    if (c->state == XFERD_FAILED) {
        xferd_res_err(res, "failed", "component %s was declared failed: %s", c->name,
                      xferd_safe(c->reason ? c->reason : "", sr, sizeof(sr)));
        return -1;
    }
    c->last_seen = xferd_now_ms();
    c->unconfirmed = 0;
    c->peer = *peer;
    return (int) k;
}

/* The channel named by the request, of which component @p k must be an end (*@p side: its
 * side). */
static int request_chan(xferd_t *d, const xfer_ctl_msg_t *req, int k, int *side, xferd_res_t *res)
{
    const char *name = xfer_ctl_str(req, "channel", "");
    int i = xferd_chan_index(d, name);
    char sn[256];

    if (i < 0) {
        xferd_res_err(res, "unknown", "no channel \"%s\" in workflow %s",
                      xferd_safe(name, sn, sizeof(sn)), d->cfg->workflow);
        return -1;
    }
    if (d->chan[i].from != k && d->chan[i].to != k) {
        xferd_res_err(res, "unknown", "component %s is not an end of channel %s", d->comp[k].name,
                      d->chan[i].name);
        return -1;
    }
    *side = d->chan[i].from == k ? 0 : 1;
    return i;
}

static void op_register(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                        xferd_res_t *res, xfer_ctl_msg_t *reply, int *who)
{
    const char *name = xfer_ctl_str(req, "component", "");
    const char *host = xfer_ctl_str(req, "host", "");
    int64_t nprocs = xfer_ctl_int(req, "nprocs", 1), pid = xfer_ctl_int(req, "pid", 0);
    int64_t now = xferd_now_ms(), session;
    int k = xferd_comp_index(d, name);
    xferd_comp_t *c;
    xfer_ctl_msg_t *r;
    xfer_status_t st = XFER_ERR_NO_MEMORY;
    char sn[256], sh[256];

    if (k < 0) {
        xferd_res_err(res, "unknown", "no component \"%s\" in workflow %s",
                      xferd_safe(name, sn, sizeof(sn)), d->cfg->workflow);
        return;
    }
    c = &d->comp[k];
    if (c->state == XFERD_RUNNING && !c->unconfirmed && now - c->last_seen <= d->hb_timeout_ms) {
        xferd_res_err(
            res, "exists",
            "component %s is running: session %" PRId64 " (pid %" PRId64 " on %s) is alive",
            c->name, c->session, c->pid, xferd_safe(c->host ? c->host : "", sh, sizeof(sh)));
        return;
    }
    if (c->state == XFERD_RUNNING) {
        /* the old incarnation is gone: its peers hear of it before the new one is known (a
         * sender that runs on acts on the failure, then on the new one's attach) */
        char why[400];
        snprintf(why, sizeof(why),
                 "session %" PRId64 " (pid %" PRId64
                 ") replaced by a new registration (pid %" PRId64 " on %s)",
                 c->session, c->pid, pid, xferd_safe(host, sh, sizeof(sh)));
        xferd_declare_failure(d, k, why); /* (journaled before the registration) */
    }
    session = d->gen * XFERD_SLOTS + k + 1;
    r = xferd_rec_new("register");
    if (r && (st = xfer_ctl_set_str(r, "component", c->name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "session", session)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "nprocs", nprocs)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "pid", pid)) == XFER_SUCCESS)
        st = xfer_ctl_set_str(r, "host", host);
    if (xferd_rec_journal(d, r, st, 1) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal the registration of %s", c->name);
        return;
    }
    xferd_lookups_drop_comp(d, k);
    xferd_apply_register(d, k, session, nprocs, pid, host);
    c->peer = *peer;
    if (nprocs != d->cfg->components[k].nprocs)
        xferd_log(d, XFERD_WARN,
                  "component %s registers %" PRId64 " processes, the workflow says %d", c->name,
                  nprocs, d->cfg->components[k].nprocs);
    xferd_log(d, XFERD_INFO, "component %s registered: session %" PRId64 ", pid %" PRId64 " on %s",
              c->name, session, pid, xferd_safe(host, sh, sizeof(sh)));
    if (xfer_ctl_set_int(reply, "session", session) != XFER_SUCCESS ||
        xfer_ctl_set_int(reply, "heartbeat_ms", d->hb_ms) != XFER_SUCCESS ||
        xfer_ctl_set_int(reply, "heartbeat_timeout_ms", d->hb_timeout_ms) != XFER_SUCCESS)
        xferd_res_err(res, "internal", "no memory for the reply");
    *who = k;
}

static void op_publish(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                       xferd_res_t *res, int *who)
{
    const char *port = xfer_ctl_str(req, "port", "");
    int k = session_comp(d, peer, req, res), side = 0, i;
    xfer_ctl_msg_t *r;
    xfer_status_t st = XFER_ERR_NO_MEMORY;
    xferd_res_t ok;

    if (k < 0)
        return;
    *who = k;
    if ((i = request_chan(d, req, k, &side, res)) < 0)
        return;
    if (side != 0) {
        xferd_res_err(res, "order", "component %s receives on channel %s: %s publishes",
                      d->comp[k].name, d->chan[i].name, d->comp[d->chan[i].from].name);
        return;
    }
    r = xferd_rec_new("publish");
    if (r && (st = xfer_ctl_set_str(r, "channel", d->chan[i].name)) == XFER_SUCCESS)
        st = xfer_ctl_set_str(r, "port", port);
    if (xferd_rec_journal(d, r, st, 1) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal the port of channel %s", d->chan[i].name);
        return;
    }
    xferd_set_str(&d->chan[i].port, port);
    xferd_log(d, XFERD_INFO, "channel %s published by %s", d->chan[i].name, d->comp[k].name);
    memset(&ok, 0, sizeof(ok));
    for (int j = d->nlook - 1; j >= 0; j--)
        if (d->look[j].chan == i)
            xferd_lookup_answer(d, j, &ok, port);
}

static void op_lookup(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                      xferd_res_t *res, xfer_ctl_msg_t *reply, int *who)
{
    int64_t wait = xfer_ctl_int(req, "wait_ms", 0);
    int k = session_comp(d, peer, req, res), side = 0, i;
    const xferd_comp_t *from;
    xferd_lookup_t *l;
    char sr[256];

    if (k < 0)
        return;
    *who = k;
    if ((i = request_chan(d, req, k, &side, res)) < 0)
        return;
    from = &d->comp[d->chan[i].from];
    if (side != 1) {
        xferd_res_err(res, "order", "component %s publishes channel %s: %s looks it up",
                      d->comp[k].name, d->chan[i].name, d->comp[d->chan[i].to].name);
    } else if (d->chan[i].port) {
        if (xfer_ctl_set_str(reply, "port", d->chan[i].port) != XFER_SUCCESS)
            xferd_res_err(res, "internal", "no memory for the reply");
    } else if (from->state == XFERD_FAILED) {
        xferd_res_err(res, "failed", "component %s failed: %s", from->name,
                      xferd_safe(from->reason ? from->reason : "", sr, sizeof(sr)));
    } else if (wait == 0) {
        xferd_res_err(res, "timeout", "channel %s is not published", d->chan[i].name);
    } else if (d->nlook >= XFERD_MAX_LOOKUPS) {
        xferd_res_err(res, "busy", "%d lookups are pending already", d->nlook);
    } else {
        l = &d->look[d->nlook++];
        l->peer = *peer;
        l->id = xfer_ctl_int(req, "id", 0);
        l->comp = k;
        l->chan = i;
        l->deadline = xferd_now_ms() + (wait < XFERD_MAX_WAIT ? wait : XFERD_MAX_WAIT);
        res->deferred = 1;
    }
}

/* A reader offers to attach to a sender that runs on (docs/runtime.md, "Readers that attach
 * late or come back"): its port is kept for its session and offered to the sender's live
 * session (xferd_deliver_notices), at most once per sender session. */
void xferd_op_attach(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                     xferd_res_t *res, int *who)
{
    const char *port = xfer_ctl_str(req, "port", "");
    int k = session_comp(d, peer, req, res), side = 0, i;
    xfer_ctl_msg_t *r;
    xfer_status_t st = XFER_ERR_NO_MEMORY;

    if (k < 0)
        return;
    *who = k;
    if ((i = request_chan(d, req, k, &side, res)) < 0)
        return;
    if (side != 1) {
        xferd_res_err(res, "order", "component %s sends on channel %s: %s attaches",
                      d->comp[k].name, d->chan[i].name, d->comp[d->chan[i].to].name);
        return;
    }
    r = xferd_rec_new("attach");
    if (r && (st = xfer_ctl_set_str(r, "channel", d->chan[i].name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "session", d->comp[k].session)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_str(r, "port", port)) == XFER_SUCCESS)
        st = xfer_ctl_set_bool(r, "anew", 1);
    if (xferd_rec_journal(d, r, st, 1) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal the attach of %s", d->comp[k].name);
        return;
    }
    xferd_apply_attach(&d->chan[i], d->comp[k].session, port);
    xferd_apply_anew(&d->chan[i]); /* (the sender reports its new stream's steps from 0) */
    xferd_log(d, XFERD_INFO, "channel %s: %s (session %" PRId64 ") offers to attach",
              d->chan[i].name, d->comp[k].name, d->comp[k].session);
    xferd_deliver_notices(d, d->chan[i].from);
}

/* A progress report (step, ack): the session's component, the channel it names and the side
 * it claims, which must be its own. NULL (with @p res set) when any of them is wrong. */
static xferd_chan_t *side_request(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                                  xferd_res_t *res, int *who, int64_t side)
{
    int k = session_comp(d, peer, req, res), myside = 0, i;

    if (k < 0)
        return NULL;
    *who = k;
    if ((i = request_chan(d, req, k, &myside, res)) < 0)
        return NULL;
    if (side != myside) {
        xferd_res_err(res, "order", "component %s is side %d of channel %s, not side %" PRId64,
                      d->comp[k].name, myside, d->chan[i].name, side);
        return NULL;
    }
    return &d->chan[i];
}

/* A report only a sending side makes (step, flow): side_request's checks, and that the side
 * sends; @p why ends the refusal's words. */
static xferd_chan_t *sending_side(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                                  xferd_res_t *res, int *who, int64_t side, const char *why)
{
    xferd_chan_t *ch = side_request(d, peer, req, res, who, side);
    if (ch && !ch->sends[side]) {
        xferd_res_err(res, "order", "side %" PRId64 " of channel %s sends nothing: %s", side,
                      ch->name, why);
        return NULL;
    }
    return ch;
}

static void op_step(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                    xferd_res_t *res, int *who)
{
    int64_t side = xfer_ctl_int(req, "side", 0), step = xfer_ctl_int(req, "step", 0);
    int64_t bytes = xfer_ctl_int(req, "bytes", 0), total;
    xferd_chan_t *ch = sending_side(d, peer, req, res, who, side, "it announces no steps");
    xfer_ctl_msg_t *r;
    xfer_status_t st = XFER_ERR_NO_MEMORY;

    if (!ch)
        return;
    if (step < ch->step[side]) {
        xferd_res_err(res, "order",
                      "step %" PRId64 " of side %" PRId64
                      " of channel %s goes backwards (last %" PRId64 ")",
                      step, side, ch->name, ch->step[side]);
        return;
    }
    if (step == ch->step[side])
        return; /* a repeat (a client retrying across a daemon restart) */
    total = bytes > INT64_MAX - ch->bytes ? INT64_MAX : ch->bytes + bytes;
    r = xferd_rec_new("step");
    if (r && (st = xfer_ctl_set_str(r, "channel", ch->name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "side", side)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "step", step)) == XFER_SUCCESS)
        st = xfer_ctl_set_int(r, "bytes", total);
    if (xferd_rec_journal(d, r, st, 0) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal step %" PRId64 " of channel %s", step,
                      ch->name);
        return;
    }
    xferd_apply_step(ch, (int) side, step, total);
    rate_add(d, ch, bytes);
}

/* An ack beyond the other side's announcements is held (settle): the announcements come on
 * the other leader's connection and may still be on their way. Only what no ordering explains
 * is refused: fewer releases than before, a side that receives nothing, releases beyond the
 * steps of a side that said bye (all of its reports came before its bye, on one connection). */
static void op_ack(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                   xferd_res_t *res, int *who)
{
    int64_t side = xfer_ctl_int(req, "side", 0), rel = xfer_ctl_int(req, "released", 0);
    xferd_chan_t *ch = side_request(d, peer, req, res, who, side);
    const xferd_comp_t *sender;
    xfer_ctl_msg_t *r;
    xfer_status_t st = XFER_ERR_NO_MEMORY;

    if (!ch)
        return;
    sender = &d->comp[side == 0 ? ch->to : ch->from];
    if (!ch->sends[1 - side]) {
        xferd_res_err(res, "order",
                      "side %" PRId64 " of channel %s receives nothing: side %" PRId64
                      " sends no datasets",
                      side, ch->name, 1 - side);
        return;
    }
    if (rel < ch->acked[side]) {
        xferd_res_err(res, "order",
                      "side %" PRId64 " of channel %s releases %" PRId64
                      " steps, fewer than before (%" PRId64 ")",
                      side, ch->name, rel, ch->acked[side]);
        return;
    }
    if (rel == ch->acked[side])
        return;
    if (sender->state == XFERD_DONE && rel > ch->step[1 - side] + 1) {
        xferd_res_err(res, "order",
                      "side %" PRId64 " of channel %s releases %" PRId64 " steps: side %" PRId64
                      " (%s) announced %" PRId64 " before it said bye",
                      side, ch->name, rel, 1 - side, sender->name, ch->step[1 - side] + 1);
        return;
    }
    r = xferd_rec_new("ack");
    if (r && (st = xfer_ctl_set_str(r, "channel", ch->name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "side", side)) == XFER_SUCCESS)
        st = xfer_ctl_set_int(r, "released", rel);
    if (xferd_rec_journal(d, r, st, 0) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal a release on channel %s", ch->name);
        return;
    }
    xferd_apply_ack(ch, (int) side, rel);
}

/* A sending side's flow policy: the sender's number of the last step it sent, the steps dropped
 * and skipped. Beside the wire steps of "step", never instead of them (their ordering rules
 * stay theirs). The side's leader sends these on the connection of its step reports, in order:
 * each count only goes forward. */
static void op_flow(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                    xferd_res_t *res, int *who)
{
    int64_t side = xfer_ctl_int(req, "side", 0), app = xfer_ctl_int(req, "app_step", -1);
    int64_t dropped = xfer_ctl_int(req, "dropped", 0), skipped = xfer_ctl_int(req, "skipped", 0);
    xferd_chan_t *ch = sending_side(d, peer, req, res, who, side, "it has no flow policy");
    xfer_ctl_msg_t *r;
    xfer_status_t st = XFER_ERR_NO_MEMORY;

    if (!ch)
        return;
    if (ch->flow[side] &&
        (app < ch->app_step[side] || dropped < ch->dropped[side] || skipped < ch->skipped[side])) {
        xferd_res_err(res, "order",
                      "the flow of side %" PRId64 " of channel %s goes backwards: step %" PRId64
                      ", %" PRId64 " dropped, %" PRId64 " skipped after step %" PRId64 ", %" PRId64
                      " dropped, %" PRId64 " skipped",
                      side, ch->name, app, dropped, skipped, ch->app_step[side], ch->dropped[side],
                      ch->skipped[side]);
        return;
    }
    if (ch->flow[side] && app == ch->app_step[side] && dropped == ch->dropped[side] &&
        skipped == ch->skipped[side])
        return; /* a repeat */
    r = xferd_rec_new("flow");
    if (r && (st = xfer_ctl_set_str(r, "channel", ch->name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "side", side)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "app_step", app)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "dropped", dropped)) == XFER_SUCCESS)
        st = xfer_ctl_set_int(r, "skipped", skipped);
    if (xferd_rec_journal(d, r, st, 0) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal the flow of channel %s", ch->name);
        return;
    }
    xferd_apply_flow(ch, (int) side, app, dropped, skipped);
}

/* Component @p k said bye: its step reports are all in. A release of its peer still held
 * beyond them is one no ordering explains (a wrong ack, or a step report that was lost). */
static void check_held(xferd_t *d, int k)
{
    for (int i = 0; i < d->nchan; i++) {
        const xferd_chan_t *ch = &d->chan[i];
        for (int s = 0; s < 2; s++)
            if ((s == 0 ? ch->from : ch->to) == k && ch->acked[1 - s] > ch->released[1 - s])
                xferd_log(d, XFERD_WARN,
                          "side %d of channel %s released %" PRId64 " steps, but side %d (%s) "
                          "announced %" PRId64 " before it said bye: a wrong release or a lost "
                          "step report",
                          1 - s, ch->name, ch->acked[1 - s], s, d->comp[k].name, ch->step[s] + 1);
    }
}

static void op_bye(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                   xferd_res_t *res)
{
    int k = session_comp(d, peer, req, res);
    xfer_ctl_msg_t *r;
    xfer_status_t st = XFER_ERR_NO_MEMORY;

    if (k < 0)
        return;
    r = xferd_rec_new("bye");
    if (r)
        st = xfer_ctl_set_str(r, "component", d->comp[k].name);
    if (xferd_rec_journal(d, r, st, 1) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal the bye of %s", d->comp[k].name);
        return;
    }
    d->comp[k].state = XFERD_DONE;
    xferd_lookups_drop_comp(d, k);
    xferd_log(d, XFERD_INFO, "component %s said bye", d->comp[k].name);
    check_held(d, k);
}

static void op_exited(xferd_t *d, const xfer_ctl_msg_t *req, xferd_res_t *res)
{
    const char *name = xfer_ctl_str(req, "component", "");
    int64_t code = xfer_ctl_int(req, "code", 0);
    int k = xferd_comp_index(d, name);
    xferd_comp_t *c;
    char reason[96], sn[256];

    if (k < 0) {
        xferd_res_err(res, "unknown", "no component \"%s\" in workflow %s",
                      xferd_safe(name, sn, sizeof(sn)), d->cfg->workflow);
        return;
    }
    c = &d->comp[k];
    xferd_log(d, XFERD_INFO, "component %s exited with code %" PRId64 " (%s)", c->name, code,
              state_names[c->state]);
    if (c->state == XFERD_FAILED || (code == 0 && c->state == XFERD_DONE))
        return;
    if (code == 0 && c->state == XFERD_WAITING) { /* never used the control plane: done */
        c->state = XFERD_DONE;
        return;
    }
    if (code != 0)
        snprintf(reason, sizeof(reason), "exited with code %" PRId64, code);
    else
        snprintf(reason, sizeof(reason), "exited with code 0 without bye");
    xferd_declare_failure(d, k, reason);
}

static void op_fail(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                    xferd_res_t *res)
{
    int k = session_comp(d, peer, req, res);

    if (k >= 0)
        xferd_declare_failure(d, k, xfer_ctl_str(req, "reason", ""));
}

static xfer_status_t status_reply(xferd_t *d, xfer_ctl_msg_t *r)
{
    int64_t now = xferd_now_ms();
    xfer_status_t st;
    xfer_ctl_msg_t *it;

#define S(call)                                                                                    \
    do {                                                                                           \
        if ((st = (call)) != XFER_SUCCESS)                                                         \
            return st;                                                                             \
    } while (0)
    S(xfer_ctl_set_str(r, "workflow", d->cfg->workflow));
    S(xfer_ctl_set_int(r, "protocol", XFER_CTL_PROTOCOL));
    S(xfer_ctl_set_int(r, "uptime_ms", now - d->start_ms));
    S(xfer_ctl_set_bool(r, "recovered", d->recovered));
    for (int i = 0; i < d->ncomp; i++) {
        const xferd_comp_t *c = &d->comp[i];
        S(xfer_ctl_add_item(r, "components", &it));
        S(xfer_ctl_set_str(it, "name", c->name));
        S(xfer_ctl_set_int(it, "nprocs", c->nprocs));
        S(xfer_ctl_set_str(it, "state", state_names[c->state]));
        S(xfer_ctl_set_int(it, "session", c->session));
        S(xfer_ctl_set_int(it, "pid", c->pid));
        S(xfer_ctl_set_str(it, "host", c->host ? c->host : ""));
        S(xfer_ctl_set_int(it, "last_seen_ms", c->last_seen < 0 ? -1 : now - c->last_seen));
        if (c->state == XFERD_FAILED)
            S(xfer_ctl_set_str(it, "reason", c->reason ? c->reason : ""));
        if (c->error)
            S(xfer_ctl_set_str(it, "error", c->error));
    }
    for (int i = 0; i < d->nchan; i++) {
        const xferd_chan_t *ch = &d->chan[i];
        S(xfer_ctl_add_item(r, "channels", &it));
        S(xfer_ctl_set_str(it, "name", ch->name));
        S(xfer_ctl_set_str(it, "from", d->comp[ch->from].name));
        S(xfer_ctl_set_str(it, "to", d->comp[ch->to].name));
        S(xfer_ctl_set_bool(it, "published", ch->port != NULL));
        S(xfer_ctl_set_int(it, "step0", ch->step[0]));
        S(xfer_ctl_set_int(it, "step1", ch->step[1]));
        S(xfer_ctl_set_int(it, "released0", ch->released[0]));
        S(xfer_ctl_set_int(it, "released1", ch->released[1]));
        S(xfer_ctl_set_int(it, "bytes", ch->bytes));
        S(xfer_ctl_set_int(it, "rate_bps", rate_bps(d, ch)));
        /* a side under a flow policy: its own step numbers and what it did not send; the other
         * side's steps received (what it reported released) */
        for (int s = 0; s < 2; s++) {
            static const char *const key[2][4] = {
                {"app_step0", "dropped0", "skipped0", "received1"},
                {"app_step1", "dropped1", "skipped1", "received0"}};
            if (!ch->flow[s])
                continue;
            S(xfer_ctl_set_int(it, key[s][0], ch->app_step[s]));
            S(xfer_ctl_set_int(it, key[s][1], ch->dropped[s]));
            S(xfer_ctl_set_int(it, key[s][2], ch->skipped[s]));
            S(xfer_ctl_set_int(it, key[s][3], ch->acked[1 - s]));
        }
    }
    for (int i = 0; i < d->nfail; i++) {
        S(xfer_ctl_add_item(r, "failures", &it));
        S(xfer_ctl_set_str(it, "component", d->comp[d->fail[i].comp].name));
        S(xfer_ctl_set_str(it, "reason", d->fail[i].reason ? d->fail[i].reason : ""));
        S(xfer_ctl_set_int(it, "at_ms", d->fail[i].at_ms));
    }
#undef S
    return XFER_SUCCESS;
}

void xferd_request(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req)
{
    const char *op = xfer_ctl_op(req);
    int64_t id = xfer_ctl_int(req, "id", 0);
    xfer_ctl_msg_t *reply = NULL;
    xferd_res_t res;
    int who = -1;
    char hex[40];

    memset(&res, 0, sizeof(res));
    if (xfer_ctl_msg_new("reply", &reply) != XFER_SUCCESS)
        xferd_res_err(&res, "internal", "no memory for the reply");
    else if (strcmp(op, "register") == 0)
        op_register(d, peer, req, &res, reply, &who);
    else if (strcmp(op, "heartbeat") == 0)
        who = session_comp(d, peer, req, &res);
    else if (strcmp(op, "beat") == 0) /* another rank's: no notices go to it */
        xferd_op_beat(d, req, &res);
    else if (strcmp(op, "error") == 0)
        xferd_op_error(d, req, &res);
    else if (strcmp(op, "publish") == 0)
        op_publish(d, peer, req, &res, &who);
    else if (strcmp(op, "attach") == 0)
        xferd_op_attach(d, peer, req, &res, &who);
    else if (strcmp(op, "lookup") == 0)
        op_lookup(d, peer, req, &res, reply, &who);
    else if (strcmp(op, "step") == 0)
        op_step(d, peer, req, &res, &who);
    else if (strcmp(op, "ack") == 0)
        op_ack(d, peer, req, &res, &who);
    else if (strcmp(op, "flow") == 0)
        op_flow(d, peer, req, &res, &who);
    else if (strcmp(op, "bye") == 0)
        op_bye(d, peer, req, &res);
    else if (strcmp(op, "exited") == 0)
        op_exited(d, req, &res);
    else if (strcmp(op, "fail") == 0)
        op_fail(d, peer, req, &res);
    else if (strcmp(op, "status") == 0) {
        if (status_reply(d, reply) != XFER_SUCCESS)
            xferd_res_err(&res, "internal", "cannot build the status: %s", xfer_last_error());
    } else if (strcmp(op, "stop") == 0) {
        d->stopping = 1;
        snprintf(d->stop_reason, sizeof(d->stop_reason), "stop requested by peer %s",
                 xferd_peer_hex(peer, hex, sizeof(hex)));
    } else {
        xferd_res_err(&res, "protocol", "op \"%s\" is not a request", op);
    }
    if (!res.deferred)
        xferd_reply(d, peer, id, &res, reply);
    if (res.err)
        xferd_log_refused(d, "peer %s: %s refused: %s: %s", xferd_peer_hex(peer, hex, sizeof(hex)),
                          op, res.err, res.msg);
    else if (who >= 0)
        xferd_deliver_notices(d, who);
    xfer_ctl_msg_free(&reply);
}

int64_t xferd_tick(xferd_t *d)
{
    int64_t now = xferd_now_ms();
    int64_t next = now + (d->hb_ms / 2 > 0 ? d->hb_ms / 2 : 1);
    xferd_res_t res;

    /* A daemon that did not run for a while (a stopped or starved process: ticks come every
     * hb_ms / 2) heard nothing meanwhile: the silence is its own, not the components'. Their
     * beats of that time may still sit in ZeroMQ's queues; the stall is not held against them. */
    if (d->last_tick > 0 && now - d->last_tick > d->hb_ms) {
        const int64_t stall = now - d->last_tick - d->hb_ms / 2;
        xferd_log(d, XFERD_WARN,
                  "xferd did not run for %" PRId64 " ms: the components' "
                  "silence of that time is not held against them",
                  stall);
        xferd_liveness_shift(d, stall, now);
    }
    d->last_tick = now;
    xferd_liveness_check(d, now);
    for (int i = d->nlook - 1; i >= 0; i--) {
        if (d->look[i].deadline <= now) {
            memset(&res, 0, sizeof(res));
            xferd_res_err(&res, "timeout", "channel %s was not published in time",
                          d->chan[d->look[i].chan].name);
            xferd_lookup_answer(d, i, &res, NULL);
        } else if (d->look[i].deadline < next) {
            next = d->look[i].deadline;
        }
    }
    return next;
}
