/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd's state to and from its journal (journal.c): a record read back on start is applied
 * through the same xferd_apply_* as the live operation (state.c); after the replay, running
 * components get a fresh liveness deadline; a snapshot gives the records that rebuild the
 * current state, for compaction. */
#include <stdlib.h>
#include <string.h>

#include "xferd.h"

int xferd_apply_record(xferd_t *d, const xfer_ctl_msg_t *rec)
{
    const char *op = xfer_ctl_op(rec);
    int k = xferd_comp_index(d, xfer_ctl_str(rec, "component", "")), i;
    int64_t side = xfer_ctl_int(rec, "side", -1);

    i = xferd_chan_index(d, xfer_ctl_str(rec, "channel", ""));
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
        xferd_apply_register(d, k, s, xfer_ctl_int(rec, "nprocs", 1), xfer_ctl_int(rec, "pid", 0),
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
            xferd_apply_register(d, k, s, xfer_ctl_int(rec, "nprocs", 1),
                                 xfer_ctl_int(rec, "pid", 0), xfer_ctl_str(rec, "host", ""));
        c->state = (xferd_cstate_t) cs;
        c->failed_session = xfer_ctl_int(rec, "failed_session", 0);
        xferd_set_str(&c->reason, xfer_ctl_str(rec, "reason", NULL));
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
            xferd_apply_failed(d, k, reason, at, xfer_ctl_int(rec, "session", 0));
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
    if (strcmp(op, "attach") == 0) { /* a reader's offer; "told": the sender's session told */
        xferd_apply_attach(&d->chan[i], xfer_ctl_int(rec, "session", 0),
                           xfer_ctl_str(rec, "port", NULL));
        d->chan[i].attach_told = xfer_ctl_int(rec, "told", 0);
        if (xfer_ctl_bool(rec, "anew", 0)) /* (the offer itself; not its snapshot) */
            xferd_apply_anew(&d->chan[i]);
        return 1;
    }
    if (strcmp(op, "publish") == 0) {
        xferd_set_str(&d->chan[i].port, xfer_ctl_str(rec, "port", ""));
        return 1;
    }
    if (strcmp(op, "step") == 0 && (side == 0 || side == 1)) {
        xferd_apply_step(&d->chan[i], (int) side, xfer_ctl_int(rec, "step", -1),
                         xfer_ctl_int(rec, "bytes", 0));
        return 1;
    }
    if (strcmp(op, "ack") == 0 && (side == 0 || side == 1)) {
        xferd_apply_ack(&d->chan[i], (int) side, xfer_ctl_int(rec, "released", 0));
        return 1;
    }
    if (strcmp(op, "flow") == 0 && (side == 0 || side == 1)) {
        xferd_apply_flow(&d->chan[i], (int) side, xfer_ctl_int(rec, "app_step", -1),
                         xfer_ctl_int(rec, "dropped", 0), xfer_ctl_int(rec, "skipped", 0));
        return 1;
    }
    if (strcmp(op, "chan") == 0) {
        static const char *const fkey[2][3] = {{"app_step0", "dropped0", "skipped0"},
                                               {"app_step1", "dropped1", "skipped1"}};
        xferd_chan_t *ch = &d->chan[i];
        xferd_set_str(&ch->port, xfer_ctl_str(rec, "port", NULL));
        ch->step[0] = xfer_ctl_int(rec, "step0", -1);
        ch->step[1] = xfer_ctl_int(rec, "step1", -1);
        ch->bytes = xfer_ctl_int(rec, "bytes", 0);
        for (int s = 0; s < 2; s++) /* (a side without a flow policy has no such keys) */
            if (xfer_ctl_int(rec, fkey[s][1], -1) >= 0)
                xferd_apply_flow(ch, s, xfer_ctl_int(rec, fkey[s][0], -1),
                                 xfer_ctl_int(rec, fkey[s][1], 0),
                                 xfer_ctl_int(rec, fkey[s][2], 0));
        /* a snapshot of before acked0/acked1: what was applied is all that was reported */
        xferd_apply_ack(ch, 0, xfer_ctl_int(rec, "acked0", xfer_ctl_int(rec, "released0", 0)));
        xferd_apply_ack(ch, 1, xfer_ctl_int(rec, "acked1", xfer_ctl_int(rec, "released1", 0)));
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
        if (c->failed_session)
            SET(xfer_ctl_set_int(r, "failed_session", c->failed_session));
        SET(put(ctx, r));
        xfer_ctl_msg_free(&r);
    }
    /* after the components: registering clears the ports of the channels they publish */
    for (int i = 0; i < d->nchan; i++) {
        const xferd_chan_t *ch = &d->chan[i];
        if (!ch->port && ch->step[0] < 0 && ch->step[1] < 0 && !ch->acked[0] && !ch->acked[1] &&
            !ch->bytes && !ch->flow[0] && !ch->flow[1] && !ch->attach_port)
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
        if (ch->attach_port) { /* after its chan record: a reader's offer to attach */
            SET(xfer_ctl_msg_new("attach", &r));
            SET(xfer_ctl_set_str(r, "channel", ch->name));
            SET(xfer_ctl_set_int(r, "session", ch->attach_session));
            SET(xfer_ctl_set_str(r, "port", ch->attach_port));
            SET(xfer_ctl_set_int(r, "told", ch->attach_told));
            SET(put(ctx, r));
            xfer_ctl_msg_free(&r);
        }
    }
#undef SET
out:
    xfer_ctl_msg_free(&r);
    return st;
}
