/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd's registry: components and their sessions, channels (published port, steps, releases),
 * declared failures and pending lookups. The changes to it (xferd_apply_*) are shared by the
 * operations (ops.c), which journal each one before they apply it, and the journal's replay
 * (replay.c); here too are the journal records, the failure notices and the lookup answers.
 * Neither ops.c nor replay.c is called from here. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "xferd.h"

const char *xferd_safe(const char *s, char *buf, size_t cap)
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
    for (int i = 0; d->chan && i < d->nchan; i++) {
        free(d->chan[i].port);
        free(d->chan[i].attach_port);
    }
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

int xferd_comp_index(const xferd_t *d, const char *name)
{
    int k;
    return xfer_config_component(d->cfg, name, &k) == XFER_SUCCESS ? k : -1;
}

int xferd_chan_index(const xferd_t *d, const char *name)
{
    int k;
    return xfer_config_channel(d->cfg, name, &k) == XFER_SUCCESS ? k : -1;
}

/* ---- state changes (live and replayed) ---------------------------------------------------- */

void xferd_set_str(char **dst, const char *s)
{
    char *p = s ? strdup(s) : NULL;
    free(*dst);
    *dst = p;
}

void xferd_apply_register(xferd_t *d, int k, int64_t session, int64_t nprocs, int64_t pid,
                          const char *host)
{
    xferd_comp_t *c = &d->comp[k];

    c->state = XFERD_RUNNING;
    c->session = session;
    c->nprocs = nprocs;
    c->pid = pid;
    xferd_set_str(&c->host, host);
    xferd_set_str(&c->reason, NULL);
    c->last_seen = xferd_now_ms();
    xferd_liveness_reset(c, c->last_seen);
    c->unconfirmed = 0;
    c->notified = 0; /* a new session hears of peers that are down now */
    c->peer.len = 0;
    if (session / XFERD_SLOTS >= d->gen)
        d->gen = session / XFERD_SLOTS + 1;
    /* a new instance publishes anew, and offers anew to attach */
    for (int i = 0; i < d->nchan; i++) {
        if (d->chan[i].from == k)
            xferd_set_str(&d->chan[i].port, NULL);
        if (d->chan[i].to == k)
            xferd_apply_attach(&d->chan[i], 0, NULL);
    }
}

void xferd_apply_anew(xferd_chan_t *ch)
{
    for (int s = 0; s < 2; s++) {
        ch->step[s] = -1;
        ch->acked[s] = ch->released[s] = 0;
    }
}

void xferd_apply_attach(xferd_chan_t *ch, int64_t session, const char *port)
{
    xferd_set_str(&ch->attach_port, port);
    ch->attach_session = port ? session : 0;
    ch->attach_told = 0;
}

void xferd_apply_failed(xferd_t *d, int k, const char *reason, int64_t at_ms, int64_t session)
{
    xferd_comp_t *c = &d->comp[k];

    c->state = XFERD_FAILED;
    c->failed_session = session;
    xferd_set_str(&c->reason, reason);
    for (int i = 0; i < d->nchan; i++) /* its offers to attach end with it */
        if (d->chan[i].to == k)
            xferd_apply_attach(&d->chan[i], 0, NULL);
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

void xferd_apply_step(xferd_chan_t *ch, int side, int64_t step, int64_t total)
{
    ch->step[side] = step;
    ch->bytes = total;
    settle(ch, 1 - side); /* releases that ran ahead of this announcement */
}

void xferd_apply_ack(xferd_chan_t *ch, int side, int64_t acked)
{
    ch->acked[side] = acked;
    settle(ch, side);
}

void xferd_apply_flow(xferd_chan_t *ch, int side, int64_t app_step, int64_t dropped,
                      int64_t skipped)
{
    ch->flow[side] = 1;
    ch->app_step[side] = app_step;
    ch->dropped[side] = dropped;
    ch->skipped[side] = skipped;
}

/* ---- journal records ---------------------------------------------------------------------- */

xfer_ctl_msg_t *xferd_rec_new(const char *op)
{
    xfer_ctl_msg_t *r = NULL;
    xfer_ctl_msg_new(op, &r);
    return r;
}

xfer_status_t xferd_rec_journal(xferd_t *d, xfer_ctl_msg_t *r, xfer_status_t built, int sync)
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
        xfer_ctl_set_str(n, "reason", reason) == XFER_SUCCESS &&
        xfer_ctl_set_int(n, "session", d->comp[failed].failed_session) == XFER_SUCCESS) {
        xferd_log(d, XFERD_INFO, "failure notice: %s told that %s failed", d->comp[to].name,
                  d->comp[failed].name);
        xferd_send(d, &d->comp[to].peer, n);
    }
    xfer_ctl_msg_free(&n);
}

/* A live reader's offer to attach (its channel @p i) to the sender's session, once; journaled,
 * so that a restarted daemon does not offer a port whose accept may be over. */
static void send_offer(xferd_t *d, int i)
{
    xferd_chan_t *ch = &d->chan[i];
    const xferd_comp_t *s = &d->comp[ch->from], *r = &d->comp[ch->to];
    xfer_ctl_msg_t *n = NULL, *rec = xferd_rec_new("attach");
    xfer_status_t st = XFER_ERR_NO_MEMORY;

    if (rec && (st = xfer_ctl_set_str(rec, "channel", ch->name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(rec, "session", ch->attach_session)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_str(rec, "port", ch->attach_port)) == XFER_SUCCESS)
        st = xfer_ctl_set_int(rec, "told", s->session);
    if (xferd_rec_journal(d, rec, st, 0) != XFER_SUCCESS)
        return; /* (offered again at the sender's next request) */
    ch->attach_told = s->session;
    if (xfer_ctl_msg_new("attaching", &n) == XFER_SUCCESS &&
        xfer_ctl_set_str(n, "channel", ch->name) == XFER_SUCCESS &&
        xfer_ctl_set_str(n, "component", r->name) == XFER_SUCCESS &&
        xfer_ctl_set_int(n, "session", ch->attach_session) == XFER_SUCCESS &&
        xfer_ctl_set_str(n, "port", ch->attach_port) == XFER_SUCCESS) {
        xferd_log(d, XFERD_INFO, "channel %s: %s told that %s (session %" PRId64 ") attaches",
                  ch->name, s->name, r->name, ch->attach_session);
        xferd_send(d, &s->peer, n);
    }
    xfer_ctl_msg_free(&n);
}

/* Failure notices component @p y has not had yet: the current failure of each failed peer, once
 * per session; then the offers to attach to its channels of readers alive now. Waits until the
 * session's routing id is known (after a daemon restart). */
void xferd_deliver_notices(xferd_t *d, int y)
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
    for (int i = 0; i < d->nchan; i++) {
        const xferd_chan_t *ch = &d->chan[i];
        const xferd_comp_t *r = &d->comp[ch->to];
        if (ch->from == y && ch->attach_port && ch->attach_told != c->session &&
            r->state == XFERD_RUNNING && r->session == ch->attach_session)
            send_offer(d, i);
    }
}

static void lookup_remove(xferd_t *d, int i)
{
    d->look[i] = d->look[--d->nlook];
}

void xferd_lookup_answer(xferd_t *d, int i, const xferd_res_t *res, const char *port)
{
    xfer_ctl_msg_t *reply = NULL;

    if (port && xfer_ctl_msg_new("reply", &reply) == XFER_SUCCESS)
        xfer_ctl_set_str(reply, "port", port);
    xferd_reply(d, &d->look[i].peer, d->look[i].id, res, reply);
    xfer_ctl_msg_free(&reply);
    lookup_remove(d, i);
}

void xferd_lookups_drop_comp(xferd_t *d, int k)
{
    for (int i = d->nlook - 1; i >= 0; i--)
        if (d->look[i].comp == k)
            lookup_remove(d, i);
}

void xferd_declare_failure(xferd_t *d, int k, const char *reason)
{
    int64_t at = xferd_now_ms() - d->start_ms;
    xfer_ctl_msg_t *r = xferd_rec_new("failed");
    xfer_status_t st = XFER_ERR_NO_MEMORY;
    xferd_res_t res;
    int recorded;
    char sr[256];

    if (r && (st = xfer_ctl_set_str(r, "component", d->comp[k].name)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_str(r, "reason", reason)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(r, "session", d->comp[k].session)) == XFER_SUCCESS)
        st = xfer_ctl_set_int(r, "at_ms", at);
    /* a failure is declared even when the journal cannot keep it */
    xferd_rec_journal(d, r, st, 1);
    recorded = d->nfail;
    xferd_apply_failed(d, k, reason, at, d->comp[k].session);
    recorded = d->nfail > recorded;
    xferd_log(d, XFERD_WARN, "component %s failed: %s", d->comp[k].name,
              xferd_safe(reason, sr, sizeof(sr)));

    memset(&res, 0, sizeof(res));
    xferd_res_err(&res, "failed", "component %s failed: %s", d->comp[k].name, sr);
    for (int i = d->nlook - 1; i >= 0; i--) {
        const xferd_chan_t *ch = &d->chan[d->look[i].chan];
        if (ch->from == k || ch->to == k)
            xferd_lookup_answer(d, i, &res, NULL);
    }
    if (recorded) {
        for (int y = 0; y < d->ncomp; y++)
            if (y != k)
                xferd_deliver_notices(d, y);
    } else {
        /* not recorded (the failure list is full): tell the live peers directly */
        for (int y = 0; y < d->ncomp; y++)
            if (y != k && d->comp[y].state == XFERD_RUNNING && d->comp[y].peer.len &&
                shares_channel(d, k, y))
                send_failure(d, y, k, reason);
    }
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
