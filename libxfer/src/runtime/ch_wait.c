/* SPDX-License-Identifier: BSD-3-Clause */
/* The one wait loop of a channel (channel.h, xfer_ch_wait): every wait of every transport polls
 * the context's other channels and its own through their tables (transport.h, ops->poll), looks
 * at what it waits for, then at the step it needs, its clock, the application's interrupt check
 * and the liveness deadline, and naps as its transport paces it. */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "channel.h"

/* A wait on one channel must not starve the others: a pipeline's middle component waits on one
 * while the next one needs its notes, and several channels between the same components need
 * each other's steps (docs/runtime.md, "Several channels"). Their errors surface on their own
 * calls. */
void xfer_ch_progress_others(xfer_channel_t *ch)
{
    int i;
    for (i = 0; i < ch->x->nch; i++) {
        xfer_channel_t *o = ch->x->ch[i];
        int busy = 0;
        if (o && o != ch && !o->health.failed && !o->health.finished && !o->loss.lost) {
            (void) o->ops->poll(o, 0, &busy);
        }
    }
}

/* One pass of the progress thread over a channel (progress.c), under the context's lock, through
 * its transport's poll (the file's has nothing to move between calls). A failure is kept, with
 * its words, for the application's next call on the channel. */
void xfer_ch_progress_background(xfer_channel_t *ch, int *active)
{
    xfer_errh_guard_t g;
    xfer_status_t st;
    int busy = 0;
    if (ch->health.failed || ch->health.finished || ch->health.peer_failed || ch->health.ctl_lost)
        return;
    xfer_errh_guard_begin(&g);
    st = xfer_errh_guard_end(&g, ch->ops->poll(ch, 0, &busy));
    if (st != XFER_SUCCESS && !ch->health.peer_failed && !ch->health.ctl_lost)
        xfer_ch_fail_keep(ch, st);
    *active |= busy;
}

xfer_status_t xfer_ch_ask_interrupt(xfer_channel_t *ch, const char *what, double now, double *asked)
{
    const struct xfer *x = ch->x;
    if (!x->intr_fn || now - *asked < XFER_RT_INTR_S)
        return XFER_SUCCESS;
    *asked = now;
    if (x->intr_fn(x->intr_arg))
        return XFER_ERR(XFER_ERR_INTERRUPTED,
                        "channel %s: %s: interrupted by the application; nothing changed, the "
                        "call may be made again",
                        ch->cfg->name, what);
    return XFER_SUCCESS;
}

xfer_status_t xfer_ch_wait_timeout_error(const xfer_channel_t *ch, const char *what,
                                         const char *dir)
{
    return XFER_ERR(XFER_ERR_TIMEOUT,
                    "channel %s: %s: nothing from %s%s%s within %d ms (separate jobs without "
                    "xferd: nothing tells a computing peer from a dead one, so control.timeout_ms "
                    "bounds every wait; run with xferd to wait as long as the peer lives)",
                    ch->cfg->name, what, xfer_ch_peer_name(ch), dir ? " in " : "", dir ? dir : "",
                    ch->x->timeout_ms);
}

xfer_status_t xfer_ch_wait(xfer_channel_t *ch, const xfer_ch_wait_t *w, int *met)
{
    const xfer_transport_ops_t *o = ch->ops;
    const double deadline = xfer_rt_deadline(ch->x), t0 = MPI_Wtime();
    double idle_since = t0, asked = t0;
    long nap_ns = o->nap_min_ns;
    xfer_status_t st, cst;
    int peer_off = 0; /* (the reader's loss met in a wait on the side: deferred) */

    *met = 0;
    if (!w->side && !w->aside && (st = xfer_ch_loss_late(ch)) != XFER_SUCCESS)
        return st;               /* (a wait on the reader: the loss a wait on the side met) */
    if (w->force && !ch->ending) /* a wait on the channel: this rank's step 0 began (runtime.h) */
        ch->x->began = 1;
    for (;;) {
        double now;
        int busy = 0;
        /* this channel last: its failure's words stay its own (xfer-chaos seeds 1520, 1570) */
        xfer_ch_progress_others(ch);
        st = (w->aside && ch->loss.lost) || peer_off ? XFER_SUCCESS : o->poll(ch, w->force, &busy);
        if (w->aside || (w->side && st == XFER_ERR_PEER_FAILED && xfer_ch_loss_known(ch)))
            st = XFER_SUCCESS;
        /* the side's ranks wait for each other whatever became of the reader (ch3 fails a
         * send to a dead reader at once, on one rank): the loss waits for the next call */
        if (st != XFER_SUCCESS && w->side && xfer_ch_loss_defer(ch, st)) {
            peer_off = 1;
            st = XFER_SUCCESS;
        }
        /* what the wait is for counts first: a step that arrived before its sender failed is
         * delivered (docs/runtime.md, "What a receiver gets when its sender dies") */
        if ((cst = w->cond(ch, w->arg, met)) != XFER_SUCCESS)
            return cst;
        if (*met)
            return XFER_SUCCESS;
        if (st != XFER_SUCCESS)
            return st;
        if (w->need != UINT64_MAX && ch->health.lost_step <= w->need)
            return xfer_err_raw(ch->health.lost_st, "%s", ch->health.lost_why);
        now = MPI_Wtime();
        if (now > w->until)
            return XFER_SUCCESS;
        if (w->resumable && (st = xfer_ch_ask_interrupt(ch, w->what, now, &asked)) != XFER_SUCCESS)
            return st;
        if (now > deadline)
            return xfer_ch_wait_timeout_error(ch, w->what, o->where ? o->where(ch) : NULL);
        /* The peer computes: nothing moves until it acts. Poll gently (a waiting analysis must
         * not take the cores of a simulation sharing its node), but spin while data is in
         * flight, where every poll drives the transfer. */
        if (busy) {
            idle_since = now;
            nap_ns = o->nap_min_ns;
        } else if (now - idle_since >= o->spin_s) {
            const struct timespec nap = {0, nap_ns};
            nanosleep(&nap, NULL);
            nap_ns = nap_ns * 2 > o->nap_max_ns ? o->nap_max_ns : nap_ns * 2;
        }
    }
}

xfer_status_t xfer_ch_wait_until(xfer_channel_t *ch, xfer_ch_cond_fn cond, void *arg,
                                 const char *what, uint64_t need)
{
    const xfer_ch_wait_t w = {.cond = cond,
                              .arg = arg,
                              .what = what,
                              .until = HUGE_VAL,
                              .need = need,
                              .resumable = 0,
                              .force = 1};
    int met;
    return xfer_ch_wait(ch, &w, &met);
}

xfer_status_t xfer_ch_req_done(xfer_channel_t *ch, void *arg, int *met)
{
    if (MPI_Test((MPI_Request *) arg, met, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return XFER_ERR(XFER_ERR_MPI, "channel %s: MPI_Test failed", ch->cfg->name);
    return XFER_SUCCESS;
}

/* Not forced: the channel is forming, and nothing of its steps may be posted yet. */
xfer_status_t xfer_ch_wait_req(xfer_channel_t *ch, MPI_Request *req, const char *what)
{
    const xfer_ch_wait_t w = {.cond = xfer_ch_req_done,
                              .arg = req,
                              .what = what,
                              .until = HUGE_VAL,
                              .need = UINT64_MAX,
                              .resumable = 0,
                              .force = 0};
    int met;
    return xfer_ch_wait(ch, &w, &met);
}

/* A channel that finalize's later passes still move: not failed, not finished, and of a
 * transport that has such passes. */
static int in_finish(const xfer_channel_t *ch)
{
    return ch && !ch->health.failed && !ch->health.finished && ch->ops->drained;
}

/* Does wait @p w finish channel @p ch (all of them, or its only one)? */
static int finishes(const xfer_ch_wait_all_t *w, const xfer_channel_t *ch)
{
    return in_finish(ch) && (!w->only || ch == w->only);
}

xfer_status_t xfer_ch_wait_all(struct xfer *x, const xfer_ch_wait_all_t *w)
{
    const double deadline = xfer_rt_deadline(x), t0 = MPI_Wtime();
    const char *call = w->only ? "xfer_channel_close" : "xfer_finalize";
    double idle_since = t0;
    xfer_status_t first = XFER_SUCCESS, st;
    char msg[1024] = "";

    for (;;) {
        xfer_channel_t *late = NULL;
        int i, met = 0, active = 0;
        double now;
        if (w->cond) {
            if ((st = w->cond(x, w->arg, &met)) != XFER_SUCCESS)
                return st;
            if (met)
                break;
        }
        if (w->only) /* the channels that go on */
            xfer_ch_progress_others(w->only);
        for (i = 0; i < x->nch; i++) {
            xfer_channel_t *ch = x->ch[i];
            int busy = 0;
            if (!finishes(w, ch))
                continue;
            if ((st = ch->ops->poll(ch, 1, &busy)) != XFER_SUCCESS) {
                ch->health.failed = 1;
                if (xfer_ch_loss_take(ch, st))
                    continue; /* its reader is gone: the sender goes on (ch_loss.c) */
                if (w->each && first == XFER_SUCCESS) { /* the first failure's words, at the end */
                    first = st;
                    snprintf(msg, sizeof(msg), "%s", xfer_last_error());
                } else if (!w->each && !ch->health.fail_why[0]) { /* the channel's own */
                    ch->health.fail_st = st;
                    snprintf(ch->health.fail_why, sizeof(ch->health.fail_why), "%s",
                             xfer_last_error());
                }
                continue;
            }
            if (!w->each || !w->each(ch)) {
                late = late ? late : ch;
                active |= busy;
            }
        }
        if (w->each && !late)
            break;
        now = MPI_Wtime();
        if (now > deadline) {
            if (!w->each)
                return XFER_ERR(XFER_ERR_TIMEOUT,
                                "%s: %s: not every rank of component %s came within %d ms", call,
                                w->what, x->cfg->components[x->comp].name, x->timeout_ms);
            for (i = 0; i < x->nch; i++)
                if (finishes(w, x->ch[i]) && !w->each(x->ch[i]))
                    x->ch[i]->health.failed = 1;
            xfer_ch_wait_timeout_error(late, w->what, NULL);
            if (first == XFER_SUCCESS) {
                first = XFER_ERR_TIMEOUT;
                snprintf(msg, sizeof(msg), "%s", xfer_last_error());
            }
            break;
        }
        if (active) {
            idle_since = now;
        } else if (now - idle_since > XFER_RT_SPIN_S) {
            const struct timespec nap = {0, XFER_RT_NAP_NS};
            nanosleep(&nap, NULL);
        }
    }
    if (first != XFER_SUCCESS)
        return xfer_err_raw(first, "%s", msg);
    return XFER_SUCCESS;
}
