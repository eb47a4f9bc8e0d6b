/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd's registry: components and their sessions, channels (published port, steps, releases,
 * byte rate), declared failures and pending lookups, and the operations of
 * docs/control-protocol.md on them. Every state change is journaled before it is applied, so
 * that what a client was told survives a daemon restart; the apply_* functions are shared with
 * the journal's replay. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "xferd.h"

static const char *state_names[] = {"waiting", "running", "done", "failed"};

/* Printable, bounded copy of a client's string for messages and logs. */
static const char *safe(const char *s, char *buf, size_t cap)
{
    size_t o = 0;

    for (; *s; s++) {
        unsigned char c = (unsigned char) *s;
        if (o + 8 >= cap) {
            memcpy(buf + o, "...", 4);
            return buf;
        }
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            buf[o++] = (char) c;
        else
            o += (size_t) snprintf(buf + o, cap - o, "\\x%02x", c);
    }
    buf[o] = '\0';
    return buf;
}

xfer_status_t xferd_state_init(xferd_t *d, const xfer_config_t *cfg)
{
    d->cfg = cfg;
    d->ncomp = cfg->ncomponents;
    d->nchan = cfg->nchannels;
    if (d->ncomp > XFERD_SLOTS - 1) {
        xferd_log(d, XFERD_ERROR, "%d components: at most %d supported", d->ncomp, XFERD_SLOTS - 1);
        return XFER_ERR_CONFIG;
    }
    d->comp = calloc((size_t) d->ncomp + 1, sizeof(*d->comp));
    d->chan = calloc((size_t) d->nchan + 1, sizeof(*d->chan));
    d->fail = calloc(XFERD_MAX_FAILURES, sizeof(*d->fail));
    d->look = calloc(XFERD_MAX_LOOKUPS, sizeof(*d->look));
    if (!d->comp || !d->chan || !d->fail || !d->look)
        return XFER_ERR_NO_MEMORY;
    for (int i = 0; i < d->ncomp; i++) {
        xferd_comp_t *c = &d->comp[i];
        c->name = cfg->components[i].name;
        c->nprocs = cfg->components[i].nprocs;
        c->last_seen = -1;
        c->last_failure = -1;
    }
    for (int i = 0; i < d->nchan; i++) {
        xferd_chan_t *ch = &d->chan[i];
        ch->name = cfg->channels[i].name;
        ch->from = cfg->channels[i].from;
        ch->to = cfg->channels[i].to;
        for (int j = 0; j < cfg->channels[i].ndatasets; j++)
            ch->sends[cfg->channels[i].datasets[j].from == ch->from ? 0 : 1] = 1;
        ch->step[0] = ch->step[1] = -1;
        ch->app_step[0] = ch->app_step[1] = -1;
        for (int k = 0; k < XFERD_RATE_SLOTS; k++)
            ch->rate_sec[k] = -1;
    }
    d->start_ms = xferd_now_ms();
    return XFER_SUCCESS;
}

void xferd_state_free(xferd_t *d)
{
    for (int i = 0; d->comp && i < d->ncomp; i++) {
        free(d->comp[i].host);
        free(d->comp[i].reason);
        xferd_liveness_reset(&d->comp[i], 0);
    }
    for (int i = 0; d->chan && i < d->nchan; i++)
        free(d->chan[i].port);
    for (int i = 0; d->fail && i < d->nfail; i++)
        free(d->fail[i].reason);
    free(d->comp);
    free(d->chan);
    free(d->fail);
    free(d->look);
    d->comp = NULL;
    d->chan = NULL;
    d->fail = NULL;
    d->look = NULL;
}

static int shares_channel(const xferd_t *d, int a, int b)
{
    for (int i = 0; i < d->nchan; i++)
        if ((d->chan[i].from == a && d->chan[i].to == b) ||
            (d->chan[i].from == b && d->chan[i].to == a))
            return 1;
    return 0;
}

static int comp_index(const xferd_t *d, const char *name)
{
    int k;
    return xfer_config_component(d->cfg, name, &k) == XFER_SUCCESS ? k : -1;
}

static int chan_index(const xferd_t *d, const char *name)
{
    int k;
    return xfer_config_channel(d->cfg, name, &k) == XFER_SUCCESS ? k : -1;
}

/* ---- state changes (live and replayed) ---------------------------------------------------- */

static void set_str(char **dst, const char *s)
{
    char *p = s ? strdup(s) : NULL;
    free(*dst);
    *dst = p;
}

static void apply_register(xferd_t *d, int k, int64_t session, int64_t nprocs, int64_t pid,
                           const char *host)
{
    xferd_comp_t *c = &d->comp[k];

    c->state = XFERD_RUNNING;
    c->session = session;
    c->nprocs = nprocs;
    c->pid = pid;
    set_str(&c->host, host);
    set_str(&c->reason, NULL);
    c->last_seen = xferd_now_ms();
    xferd_liveness_reset(c, c->last_seen);
    c->unconfirmed = 0;
    c->notified = 0; /* a new session hears of peers that are down now */
    c->peer.len = 0;
    if (session / XFERD_SLOTS >= d->gen)
        d->gen = session / XFERD_SLOTS + 1;
    /* a new instance publishes anew */
    for (int i = 0; i < d->nchan; i++)
        if (d->chan[i].from == k)
            set_str(&d->chan[i].port, NULL);
}

static void apply_failed(xferd_t *d, int k, const char *reason, int64_t at_ms)
{
    xferd_comp_t *c = &d->comp[k];

    c->state = XFERD_FAILED;
    set_str(&c->reason, reason);
    if (d->nfail < XFERD_MAX_FAILURES) {
        d->fail[d->nfail].comp = k;
        d->fail[d->nfail].reason = strdup(reason);
        d->fail[d->nfail].at_ms = at_ms;
        c->last_failure = d->nfail++;
    }
}

/* The releases of @p side that the other side's announcements cover. */
static void settle(xferd_chan_t *ch, int side)
{
    const int64_t covered = ch->step[1 - side] + 1;

    ch->released[side] = ch->acked[side] < covered ? ch->acked[side] : covered;
}

static void apply_step(xferd_chan_t *ch, int side, int64_t step, int64_t total)
{
    ch->step[side] = step;
    ch->bytes = total;
    settle(ch, 1 - side); /* releases that ran ahead of this announcement */
}

static void apply_ack(xferd_chan_t *ch, int side, int64_t acked)
{
    ch->acked[side] = acked;
    settle(ch, side);
}

static void apply_flow(xferd_chan_t *ch, int side, int64_t app_step, int64_t dropped,
                       int64_t skipped)
{
    ch->flow[side] = 1;
    ch->app_step[side] = app_step;
    ch->dropped[side] = dropped;
    ch->skipped[side] = skipped;
}

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

/* ---- journal records ---------------------------------------------------------------------- */

/* A record: one message, its op naming the change. NULL when out of memory. */
static xfer_ctl_msg_t *rec_new(const char *op)
{
    xfer_ctl_msg_t *r = NULL;
    xfer_ctl_msg_new(op, &r);
    return r;
}

/* Journal @p r (consumed); XFER_SUCCESS or the failure, logged. */
static xfer_status_t journal(xferd_t *d, xfer_ctl_msg_t *r, xfer_status_t built, int sync)
{
    xfer_status_t st = built;

    if (!r)
        st = XFER_ERR_NO_MEMORY;
    if (st == XFER_SUCCESS)
        st = xferd_journal_append(d, r, sync);
    if (st != XFER_SUCCESS)
        xferd_log(d, XFERD_ERROR, "journal: cannot record \"%s\" (%s)", xfer_ctl_op(r),
                  xfer_status_string(st));
    xfer_ctl_msg_free(&r);
    return st;
}

/* ---- notices and lookups ------------------------------------------------------------------ */

static void send_failure(xferd_t *d, int to, int failed, const char *reason)
{
    xfer_ctl_msg_t *n = NULL;

    if (xfer_ctl_msg_new("failure", &n) == XFER_SUCCESS &&
        xfer_ctl_set_str(n, "component", d->comp[failed].name) == XFER_SUCCESS &&
        xfer_ctl_set_str(n, "reason", reason) == XFER_SUCCESS) {
        xferd_log(d, XFERD_INFO, "failure notice: %s told that %s failed", d->comp[to].name,
                  d->comp[failed].name);
        xferd_send(d, &d->comp[to].peer, n);
    }
    xfer_ctl_msg_free(&n);
}

/* Failure notices component @p y has not had yet: the current failure of each failed peer, once
 * per session. Waits until the session's routing id is known (after a daemon restart). */
static void deliver_notices(xferd_t *d, int y)
{
    xferd_comp_t *c = &d->comp[y];

    if (c->state != XFERD_RUNNING || c->peer.len == 0)
        return;
    for (int k = c->notified; k < d->nfail; k++) {
        int x = d->fail[k].comp;
        if (x != y && d->comp[x].state == XFERD_FAILED && d->comp[x].last_failure == k &&
            shares_channel(d, x, y))
            send_failure(d, y, x, d->fail[k].reason);
    }
    c->notified = d->nfail;
}

static void lookup_remove(xferd_t *d, int i)
{
    d->look[i] = d->look[--d->nlook];
}

static void lookup_answer(xferd_t *d, int i, const xferd_res_t *res, const char *port)
{
    xfer_ctl_msg_t *reply = NULL;

    if (port && xfer_ctl_msg_new("reply", &reply) == XFER_SUCCESS)
        xfer_ctl_set_str(reply, "port", port);
    xferd_reply(d, &d->look[i].peer, d->look[i].id, res, reply);
    xfer_ctl_msg_free(&reply);
    lookup_remove(d, i);
}

/* Drop the pending lookups of component @p k (its session ended or was replaced). */
static void lookups_drop_comp(xferd_t *d, int k)
{
    for (int i = d->nlook - 1; i >= 0; i--)
        if (d->look[i].comp == k)
            lookup_remove(d, i);
}

void xferd_declare_failure(xferd_t *d, int k, const char *reason)
{
    int64_t at = xferd_now_ms() - d->start_ms;
    xfer_ctl_msg_t *r = rec_new("failed");
    xfer_status_t st = XFER_ERR_NO_MEMORY;
    xferd_res_t res;
    int recorded;
    char sr[256];

    if (r && (st = xfer_ctl_set_str(r, "component", d->comp[k].name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_str(r, "reason", reason)) == XFER_SUCCESS)
        st = xfer_ctl_set_int(r, "at_ms", at);
    /* a failure is declared even when the journal cannot keep it */
    journal(d, r, st, 1);
    recorded = d->nfail;
    apply_failed(d, k, reason, at);
    recorded = d->nfail > recorded;
    xferd_log(d, XFERD_WARN, "component %s failed: %s", d->comp[k].name,
              safe(reason, sr, sizeof(sr)));

    memset(&res, 0, sizeof(res));
    xferd_res_err(&res, "failed", "component %s failed: %s", d->comp[k].name, sr);
    for (int i = d->nlook - 1; i >= 0; i--) {
        const xferd_chan_t *ch = &d->chan[d->look[i].chan];
        if (ch->from == k || ch->to == k)
            lookup_answer(d, i, &res, NULL);
    }
    if (recorded) {
        for (int y = 0; y < d->ncomp; y++)
            if (y != k)
                deliver_notices(d, y);
    } else {
        /* not recorded (the failure list is full): tell the live peers directly */
        for (int y = 0; y < d->ncomp; y++)
            if (y != k && d->comp[y].state == XFERD_RUNNING && d->comp[y].peer.len &&
                shares_channel(d, k, y))
                send_failure(d, y, k, reason);
    }
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
                      safe(c->reason ? c->reason : "", sr, sizeof(sr)));
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
    int i = chan_index(d, name);
    char sn[256];

    if (i < 0) {
        xferd_res_err(res, "unknown", "no channel \"%s\" in workflow %s",
                      safe(name, sn, sizeof(sn)), d->cfg->workflow);
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
    int k = comp_index(d, name);
    xferd_comp_t *c;
    xfer_ctl_msg_t *r;
    xfer_status_t st = XFER_ERR_NO_MEMORY;
    char sn[256], sh[256];

    if (k < 0) {
        xferd_res_err(res, "unknown", "no component \"%s\" in workflow %s",
                      safe(name, sn, sizeof(sn)), d->cfg->workflow);
        return;
    }
    c = &d->comp[k];
    if (c->state == XFERD_RUNNING && !c->unconfirmed && now - c->last_seen <= d->hb_timeout_ms) {
        xferd_res_err(res, "exists",
                      "component %s is running: session %" PRId64 " (pid %" PRId64
                      " on %s) is alive",
                      c->name, c->session, c->pid, safe(c->host ? c->host : "", sh, sizeof(sh)));
        return;
    }
    session = d->gen * XFERD_SLOTS + k + 1;
    r = rec_new("register");
    if (r && (st = xfer_ctl_set_str(r, "component", c->name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "session", session)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "nprocs", nprocs)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "pid", pid)) == XFER_SUCCESS)
        st = xfer_ctl_set_str(r, "host", host);
    if (journal(d, r, st, 1) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal the registration of %s", c->name);
        return;
    }
    if (c->state == XFERD_RUNNING)
        xferd_log(d, XFERD_WARN, "component %s: session %" PRId64 " replaced", c->name, c->session);
    lookups_drop_comp(d, k);
    apply_register(d, k, session, nprocs, pid, host);
    c->peer = *peer;
    if (nprocs != d->cfg->components[k].nprocs)
        xferd_log(d, XFERD_WARN,
                  "component %s registers %" PRId64 " processes, the workflow says %d", c->name,
                  nprocs, d->cfg->components[k].nprocs);
    xferd_log(d, XFERD_INFO, "component %s registered: session %" PRId64 ", pid %" PRId64 " on %s",
              c->name, session, pid, safe(host, sh, sizeof(sh)));
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
    r = rec_new("publish");
    if (r && (st = xfer_ctl_set_str(r, "channel", d->chan[i].name)) == XFER_SUCCESS)
        st = xfer_ctl_set_str(r, "port", port);
    if (journal(d, r, st, 1) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal the port of channel %s", d->chan[i].name);
        return;
    }
    set_str(&d->chan[i].port, port);
    xferd_log(d, XFERD_INFO, "channel %s published by %s", d->chan[i].name, d->comp[k].name);
    memset(&ok, 0, sizeof(ok));
    for (int j = d->nlook - 1; j >= 0; j--)
        if (d->look[j].chan == i)
            lookup_answer(d, j, &ok, port);
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
                      safe(from->reason ? from->reason : "", sr, sizeof(sr)));
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

static void op_step(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                    xferd_res_t *res, int *who)
{
    int64_t side = xfer_ctl_int(req, "side", 0), step = xfer_ctl_int(req, "step", 0);
    int64_t bytes = xfer_ctl_int(req, "bytes", 0), total;
    xferd_chan_t *ch = side_request(d, peer, req, res, who, side);
    xfer_ctl_msg_t *r;
    xfer_status_t st = XFER_ERR_NO_MEMORY;

    if (!ch)
        return;
    if (!ch->sends[side]) {
        xferd_res_err(res, "order",
                      "side %" PRId64 " of channel %s sends nothing: it announces no steps", side,
                      ch->name);
        return;
    }
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
    r = rec_new("step");
    if (r && (st = xfer_ctl_set_str(r, "channel", ch->name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "side", side)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "step", step)) == XFER_SUCCESS)
        st = xfer_ctl_set_int(r, "bytes", total);
    if (journal(d, r, st, 0) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal step %" PRId64 " of channel %s", step,
                      ch->name);
        return;
    }
    apply_step(ch, (int) side, step, total);
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
    r = rec_new("ack");
    if (r && (st = xfer_ctl_set_str(r, "channel", ch->name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "side", side)) == XFER_SUCCESS)
        st = xfer_ctl_set_int(r, "released", rel);
    if (journal(d, r, st, 0) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal a release on channel %s", ch->name);
        return;
    }
    apply_ack(ch, (int) side, rel);
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
    xferd_chan_t *ch = side_request(d, peer, req, res, who, side);
    xfer_ctl_msg_t *r;
    xfer_status_t st = XFER_ERR_NO_MEMORY;

    if (!ch)
        return;
    if (!ch->sends[side]) {
        xferd_res_err(res, "order",
                      "side %" PRId64 " of channel %s sends nothing: it has no flow policy", side,
                      ch->name);
        return;
    }
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
    r = rec_new("flow");
    if (r && (st = xfer_ctl_set_str(r, "channel", ch->name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "side", side)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "app_step", app)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "dropped", dropped)) == XFER_SUCCESS)
        st = xfer_ctl_set_int(r, "skipped", skipped);
    if (journal(d, r, st, 0) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal the flow of channel %s", ch->name);
        return;
    }
    apply_flow(ch, (int) side, app, dropped, skipped);
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
    r = rec_new("bye");
    if (r)
        st = xfer_ctl_set_str(r, "component", d->comp[k].name);
    if (journal(d, r, st, 1) != XFER_SUCCESS) {
        xferd_res_err(res, "internal", "cannot journal the bye of %s", d->comp[k].name);
        return;
    }
    d->comp[k].state = XFERD_DONE;
    lookups_drop_comp(d, k);
    xferd_log(d, XFERD_INFO, "component %s said bye", d->comp[k].name);
    check_held(d, k);
}

static void op_exited(xferd_t *d, const xfer_ctl_msg_t *req, xferd_res_t *res)
{
    const char *name = xfer_ctl_str(req, "component", "");
    int64_t code = xfer_ctl_int(req, "code", 0);
    int k = comp_index(d, name);
    xferd_comp_t *c;
    char reason[96], sn[256];

    if (k < 0) {
        xferd_res_err(res, "unknown", "no component \"%s\" in workflow %s",
                      safe(name, sn, sizeof(sn)), d->cfg->workflow);
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
        deliver_notices(d, who);
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
            lookup_answer(d, i, &res, NULL);
        } else if (d->look[i].deadline < next) {
            next = d->look[i].deadline;
        }
    }
    return next;
}

void xferd_shutdown_notices(xferd_t *d, const char *reason)
{
    xfer_ctl_msg_t *n = NULL;

    if (xfer_ctl_msg_new("shutdown", &n) != XFER_SUCCESS ||
        xfer_ctl_set_str(n, "reason", reason) != XFER_SUCCESS) {
        xfer_ctl_msg_free(&n);
        return;
    }
    for (int k = 0; k < d->ncomp; k++)
        if (d->comp[k].state == XFERD_RUNNING && d->comp[k].peer.len)
            xferd_send(d, &d->comp[k].peer, n);
    xfer_ctl_msg_free(&n);
}

/* ---- replay and snapshot ------------------------------------------------------------------ */

int xferd_apply_record(xferd_t *d, const xfer_ctl_msg_t *rec)
{
    const char *op = xfer_ctl_op(rec);
    int k = comp_index(d, xfer_ctl_str(rec, "component", "")), i;
    int64_t side = xfer_ctl_int(rec, "side", -1);

    i = chan_index(d, xfer_ctl_str(rec, "channel", ""));
    if (strcmp(op, "xferd") == 0) {
        int64_t g = xfer_ctl_int(rec, "gen", 0);
        if (g > d->gen)
            d->gen = g;
        return 1;
    }
    if (strcmp(op, "register") == 0 && k >= 0) {
        int64_t s = xfer_ctl_int(rec, "session", 0);
        if (s < 1 || (s - 1) % XFERD_SLOTS != k)
            return 0;
        apply_register(d, k, s, xfer_ctl_int(rec, "nprocs", 1), xfer_ctl_int(rec, "pid", 0),
                       xfer_ctl_str(rec, "host", ""));
        return 1;
    }
    if (strcmp(op, "comp") == 0 && k >= 0) {
        int64_t s = xfer_ctl_int(rec, "session", 0), cs = xfer_ctl_int(rec, "state", -1);
        xferd_comp_t *c = &d->comp[k];
        if (s < 0 || (s > 0 && (s - 1) % XFERD_SLOTS != k) || cs < XFERD_WAITING ||
            cs > XFERD_FAILED)
            return 0;
        if (s > 0)
            apply_register(d, k, s, xfer_ctl_int(rec, "nprocs", 1), xfer_ctl_int(rec, "pid", 0),
                           xfer_ctl_str(rec, "host", ""));
        c->state = (xferd_cstate_t) cs;
        set_str(&c->reason, xfer_ctl_str(rec, "reason", NULL));
        return 1;
    }
    if (strcmp(op, "bye") == 0 && k >= 0) {
        d->comp[k].state = XFERD_DONE;
        return 1;
    }
    if ((strcmp(op, "failed") == 0 || strcmp(op, "failure") == 0) && k >= 0) {
        const char *reason = xfer_ctl_str(rec, "reason", "");
        int64_t at = xfer_ctl_int(rec, "at_ms", 0);
        if (op[6] == '\0') { /* "failed": the state change */
            apply_failed(d, k, reason, at);
        } else if (d->nfail < XFERD_MAX_FAILURES) { /* "failure": history only */
            d->fail[d->nfail].comp = k;
            d->fail[d->nfail].reason = strdup(reason);
            d->fail[d->nfail].at_ms = at;
            d->comp[k].last_failure = d->nfail++;
        }
        return 1;
    }
    if (i < 0)
        return 0;
    if (strcmp(op, "publish") == 0) {
        set_str(&d->chan[i].port, xfer_ctl_str(rec, "port", ""));
        return 1;
    }
    if (strcmp(op, "step") == 0 && (side == 0 || side == 1)) {
        apply_step(&d->chan[i], (int) side, xfer_ctl_int(rec, "step", -1),
                   xfer_ctl_int(rec, "bytes", 0));
        return 1;
    }
    if (strcmp(op, "ack") == 0 && (side == 0 || side == 1)) {
        apply_ack(&d->chan[i], (int) side, xfer_ctl_int(rec, "released", 0));
        return 1;
    }
    if (strcmp(op, "flow") == 0 && (side == 0 || side == 1)) {
        apply_flow(&d->chan[i], (int) side, xfer_ctl_int(rec, "app_step", -1),
                   xfer_ctl_int(rec, "dropped", 0), xfer_ctl_int(rec, "skipped", 0));
        return 1;
    }
    if (strcmp(op, "chan") == 0) {
        static const char *const fkey[2][3] = {{"app_step0", "dropped0", "skipped0"},
                                               {"app_step1", "dropped1", "skipped1"}};
        xferd_chan_t *ch = &d->chan[i];
        set_str(&ch->port, xfer_ctl_str(rec, "port", NULL));
        ch->step[0] = xfer_ctl_int(rec, "step0", -1);
        ch->step[1] = xfer_ctl_int(rec, "step1", -1);
        ch->bytes = xfer_ctl_int(rec, "bytes", 0);
        for (int s = 0; s < 2; s++) /* (a side without a flow policy has no such keys) */
            if (xfer_ctl_int(rec, fkey[s][1], -1) >= 0)
                apply_flow(ch, s, xfer_ctl_int(rec, fkey[s][0], -1),
                           xfer_ctl_int(rec, fkey[s][1], 0), xfer_ctl_int(rec, fkey[s][2], 0));
        /* a snapshot of before acked0/acked1: what was applied is all that was reported */
        apply_ack(ch, 0, xfer_ctl_int(rec, "acked0", xfer_ctl_int(rec, "released0", 0)));
        apply_ack(ch, 1, xfer_ctl_int(rec, "acked1", xfer_ctl_int(rec, "released1", 0)));
        return 1;
    }
    return 0;
}

void xferd_after_replay(xferd_t *d)
{
    int64_t now = xferd_now_ms();

    for (int k = 0; k < d->ncomp; k++) {
        xferd_comp_t *c = &d->comp[k];
        if (c->state == XFERD_RUNNING) {
            c->last_seen = now;
            c->unconfirmed = 1;
            xferd_liveness_reset(c, now); /* its ranks count from now */
        } else {
            c->last_seen = -1;
        }
        c->notified = d->nfail; /* notices went out before the restart */
        c->peer.len = 0;
    }
}

xfer_status_t xferd_snapshot(xferd_t *d, xfer_status_t (*put)(void *ctx, xfer_ctl_msg_t *rec),
                             void *ctx)
{
    xfer_status_t st = XFER_SUCCESS;
    xfer_ctl_msg_t *r = NULL;

#define SET(call)                                                                                  \
    do {                                                                                           \
        if ((st = (call)) != XFER_SUCCESS)                                                         \
            goto out;                                                                              \
    } while (0)
    /* history first: the component records then leave the final state */
    for (int i = 0; i < d->nfail; i++) {
        SET(xfer_ctl_msg_new("failure", &r));
        SET(xfer_ctl_set_str(r, "component", d->comp[d->fail[i].comp].name));
        SET(xfer_ctl_set_str(r, "reason", d->fail[i].reason ? d->fail[i].reason : ""));
        SET(xfer_ctl_set_int(r, "at_ms", d->fail[i].at_ms));
        SET(put(ctx, r));
        xfer_ctl_msg_free(&r);
    }
    for (int k = 0; k < d->ncomp; k++) {
        const xferd_comp_t *c = &d->comp[k];
        if (c->state == XFERD_WAITING && c->session == 0)
            continue;
        SET(xfer_ctl_msg_new("comp", &r));
        SET(xfer_ctl_set_str(r, "component", c->name));
        SET(xfer_ctl_set_int(r, "state", c->state));
        SET(xfer_ctl_set_int(r, "session", c->session));
        SET(xfer_ctl_set_int(r, "nprocs", c->nprocs));
        SET(xfer_ctl_set_int(r, "pid", c->pid));
        SET(xfer_ctl_set_str(r, "host", c->host ? c->host : ""));
        if (c->reason)
            SET(xfer_ctl_set_str(r, "reason", c->reason));
        SET(put(ctx, r));
        xfer_ctl_msg_free(&r);
    }
    /* after the components: registering clears the ports of the channels they publish */
    for (int i = 0; i < d->nchan; i++) {
        const xferd_chan_t *ch = &d->chan[i];
        if (!ch->port && ch->step[0] < 0 && ch->step[1] < 0 && !ch->acked[0] && !ch->acked[1] &&
            !ch->bytes && !ch->flow[0] && !ch->flow[1])
            continue;
        SET(xfer_ctl_msg_new("chan", &r));
        SET(xfer_ctl_set_str(r, "channel", ch->name));
        if (ch->port)
            SET(xfer_ctl_set_str(r, "port", ch->port));
        SET(xfer_ctl_set_int(r, "step0", ch->step[0]));
        SET(xfer_ctl_set_int(r, "step1", ch->step[1]));
        SET(xfer_ctl_set_int(r, "released0", ch->released[0]));
        SET(xfer_ctl_set_int(r, "released1", ch->released[1]));
        SET(xfer_ctl_set_int(r, "acked0", ch->acked[0]));
        SET(xfer_ctl_set_int(r, "acked1", ch->acked[1]));
        SET(xfer_ctl_set_int(r, "bytes", ch->bytes));
        for (int s = 0; s < 2; s++) {
            static const char *const fkey[2][3] = {{"app_step0", "dropped0", "skipped0"},
                                                   {"app_step1", "dropped1", "skipped1"}};
            if (!ch->flow[s])
                continue;
            SET(xfer_ctl_set_int(r, fkey[s][0], ch->app_step[s]));
            SET(xfer_ctl_set_int(r, fkey[s][1], ch->dropped[s]));
            SET(xfer_ctl_set_int(r, fkey[s][2], ch->skipped[s]));
        }
        SET(put(ctx, r));
        xfer_ctl_msg_free(&r);
    }
#undef SET
out:
    xfer_ctl_msg_free(&r);
    return st;
}
