/* SPDX-License-Identifier: BSD-3-Clause */
/* Flow policies of a channel's sending side (docs/runtime.md, "Flow policies"), between the
 * public calls and the step state machine: the application's steps (flow.app) are not the
 * transport's (ch->cur).
 *   stride: N    only the application's steps 0, N, 2N, ... reach the transport; the calls of the
 *                others return at once (their puts are checked, nothing is copied or sent).
 *   latest       the sender never waits for its receivers. Each step's puts are copied into a
 *                hold; when the step ends, rank 0 of the side gives its verdict on the oldest held
 *                step: SEND once the transport has room for it (max_in_flight_steps), DROP when a
 *                newer step is held. The verdicts reach every rank of the side by one MPI_Ibcast
 *                each, in step order, so each rank hands the same steps to the transport in the
 *                same order, replayed as the application put them; a rank that runs more than two
 *                held steps ahead of rank 0 waits for its verdicts (for its own side, never for
 *                the receivers). The last step is never dropped: xfer_finalize sends it
 *                (xfer_ch_flow_flush).
 * Receivers see the sender's step numbers: every step of a flow carries the hidden attribute
 * xfer.step (ch_attr.c), read when the step arrived (xfer_ch_step_label). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"

enum { HOLD_FREE = 0, HOLD_PUTTING, HOLD_HELD };

enum { FLOW_SEND = 1, FLOW_DROP = 2 };

#define PAD8(n) (((n) + 7) & ~(size_t) 7)

/* ---- set-up --------------------------------------------------------------------------------- */

/* An environment override of a channel's key: XFER_POLICY, XFER_STRIDE. */
static xfer_status_t env_overrides(int *latest, uint64_t *stride)
{
    const char *p = xfer_env_str("XFER_POLICY"), *s = xfer_env_str("XFER_STRIDE");
    if (p) {
        if (strcmp(p, "block") == 0)
            *latest = 0;
        else if (strcmp(p, "latest") == 0)
            *latest = 1;
        else
            return XFER_ERR(XFER_ERR_CONFIG, "XFER_POLICY=%s: block or latest", p);
    }
    if (s) {
        char *end;
        unsigned long long v;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || end == s || *end || v < 1 || v > 1000000 || s[0] == '-')
            return XFER_ERR(XFER_ERR_CONFIG, "XFER_STRIDE=%s: a whole number from 1 to 1000000", s);
        *stride = v;
    }
    return XFER_SUCCESS;
}

xfer_status_t xfer_ch_flow_open(xfer_channel_t *ch)
{
    xfer_rt_flow_t *f = &ch->flow;
    xfer_status_t st;
    int latest = ch->cfg->policy == XFER_POLICY_LATEST, i;
    uint64_t stride = (uint64_t) ch->cfg->stride;

    f->comm = f->fin = MPI_COMM_NULL;
    f->agree = MPI_REQUEST_NULL;
    f->last_sent = -1;
    for (i = 0; i < XFER_RT_HOLDS; i++)
        f->hold[i].req = MPI_REQUEST_NULL;
    XFER_CHECK_GOTO(env_overrides(&latest, &stride), st, out);
    /* a full-duplex step moves both ways at once (the file refuses these keys there) */
    if (ch->role != XFER_ROLE_SEND)
        return XFER_SUCCESS;
    f->latest = latest;
    f->stride = stride;
    f->on = latest || stride > 1;
    if (f->latest) {
        XFER_MPI_GOTO(MPI_Comm_dup(ch->x->comm, &f->comm), st, out);
        XFER_MPI_GOTO(MPI_Comm_dup(ch->x->comm, &f->fin), st, out);
    }
    return XFER_SUCCESS;
out:
    return st;
}

void xfer_ch_flow_free(xfer_channel_t *ch, int collective)
{
    xfer_rt_flow_t *f = &ch->flow;
    int i;
    for (i = 0; i < XFER_RT_HOLDS; i++) {
        xfer_rt_hold_t *h = &f->hold[i];
        if (h->req != MPI_REQUEST_NULL && collective)
            MPI_Wait(&h->req, MPI_STATUS_IGNORE);
        xfer_free(h->put);
        xfer_free(h->data);
        xfer_free(h->attrs);
        memset(h, 0, sizeof(*h));
        h->req = MPI_REQUEST_NULL;
    }
    if (f->comm != MPI_COMM_NULL && collective)
        MPI_Comm_free(&f->comm);
    if (f->fin != MPI_COMM_NULL && collective)
        MPI_Comm_free(&f->fin);
}

int xfer_ch_flow_on(const xfer_channel_t *ch)
{
    return ch->flow.on;
}

/* Tell xferd how the flow goes: the sender's number of the last step sent, the steps dropped and
 * skipped so far (only the component's leader, rank 0 of the side, holds a control plane). Each
 * step sent is reported (@p force), after the transport's step report of it, and so is the
 * channel's end; a drop or a skip alone at most every XFER_CH_FLOW_REPORT_MS, so that the steps
 * a stride makes nearly free stay so (the next report, or the end's, carries the counts). */
#define XFER_CH_FLOW_REPORT_MS 100.0

void xfer_ch_flow_report(xfer_channel_t *ch, int force)
{
    xfer_rt_flow_t *f = &ch->flow;
    double now;

    if (!f->on || !ch->x->ctl)
        return;
    if (f->reported && f->rep_sent == f->last_sent && f->rep_dropped == ch->stats.steps_dropped &&
        f->rep_skipped == f->skipped)
        return;
    now = xfer_now_ms();
    if (!force && f->reported && now - f->rep_ms < XFER_CH_FLOW_REPORT_MS)
        return;
    xfer_rt_ctl_flow(ch->x, ch->index, ch->side, f->last_sent, ch->stats.steps_dropped, f->skipped);
    f->reported = 1;
    f->rep_sent = f->last_sent;
    f->rep_dropped = ch->stats.steps_dropped;
    f->rep_skipped = f->skipped;
    f->rep_ms = now;
}

/* Is the application's step being put one the transport never sees (stride)? */
int xfer_ch_flow_skips(const xfer_channel_t *ch)
{
    return ch->flow.on && ch->flow.app % ch->flow.stride != 0;
}

/* ---- the holds (policy: latest) ---------------------------------------------------------- */

static xfer_rt_hold_t *held(xfer_channel_t *ch, int i)
{
    return &ch->flow.hold[(ch->flow.first + i) % XFER_RT_HOLDS];
}

static void hold_clear(xfer_rt_hold_t *h)
{
    h->state = HOLD_FREE;
    h->nput = 0;
    h->len = 0;
    h->attr_len = 0;
}

/* One held step less: the oldest's verdict was carried out. */
static void pop_oldest(xfer_channel_t *ch)
{
    hold_clear(held(ch, 0));
    ch->flow.first = (ch->flow.first + 1) % XFER_RT_HOLDS;
    ch->flow.n--;
}

/* The transport has room for a step now (a pass over the channel first: the notes that give it
 * may have arrived). */
static xfer_status_t room_now(xfer_channel_t *ch, int *met)
{
    xfer_status_t st;
    int busy;
    XFER_CHECK_GOTO(ch->ops->poll(ch, 0, &busy), st, out);
    XFER_CHECK_GOTO(ch->ops->room(ch, NULL, met), st, out);
out:
    return st;
}

/* Hand held step @p h to the transport as the application put it: the puts, the attributes, the
 * step's end. Waits for room: on rank 0 there is (its verdict said so); elsewhere the notes
 * that say so, and this rank's own part of earlier steps, may still be on their way. */
static xfer_status_t replay(xfer_channel_t *ch, xfer_rt_hold_t *h)
{
    const xfer_ch_wait_t w = {.cond = ch->ops->room,
                              .arg = NULL,
                              .what = "sending a held step (policy: latest)",
                              .until = HUGE_VAL,
                              .need = 0,
                              .resumable = 0,
                              .force = 1};
    xfer_status_t st;
    int i, met;

    if (ch->health.ended || ch->ops->over(ch, ch->cur))
        return ch->ops->ended(ch, ch->cur);
    XFER_CHECK_GOTO(xfer_ch_wait(ch, &w, &met), st, out);
    ch->begun = 1; /* (its end then never waits: the room is there) */
    for (i = 0; i < h->nput; i++) {
        const xfer_rt_hput_t *p = &h->put[i];
        xfer_dataset_desc_t d;
        memset(&d, 0, sizeof(d));
        d.name = ch->ds[p->ds].cfg->name;
        d.type = p->type;
        d.ndims = p->ndims;
        memcpy(d.dims, p->dims, sizeof(d.dims));
        memcpy(d.start, p->start, sizeof(d.start));
        memcpy(d.count, p->count, sizeof(d.count));
        XFER_CHECK_GOTO(xfer_ch_put(ch, &d, p->bytes ? h->data + p->at : NULL), st, out);
    }
    XFER_CHECK_GOTO(xfer_ch_attr_restore(ch, h->attrs, h->attr_len), st, out);
    XFER_CHECK_GOTO(xfer_ch_end_step(ch, h->step), st, out);
out:
    return st;
}

static xfer_status_t carry_out(xfer_channel_t *ch, xfer_rt_hold_t *h, int64_t verdict)
{
    xfer_status_t st = XFER_SUCCESS;
    if (verdict == FLOW_SEND) {
        st = replay(ch, h);
    } else {
        ch->stats.steps_dropped++;
        xfer_ch_flow_report(ch, 0);
    }
    return st;
}

/* Rank 0: the verdict on the oldest held step, broadcast, carried out. The hold keeps the
 * verdict until its broadcast completed (hold_for_puts waits for that before reusing it). */
static xfer_status_t give(xfer_channel_t *ch, int64_t verdict)
{
    xfer_rt_hold_t *h = held(ch, 0);
    xfer_status_t st;
    h->verdict = verdict;
    XFER_MPI_GOTO(MPI_Ibcast(&h->verdict, 1, MPI_INT64_T, 0, ch->flow.comm, &h->req), st, out);
    st = carry_out(ch, h, verdict);
    pop_oldest(ch);
out:
    return st;
}

/* Rank 0's verdicts: every held step but the newest is dropped; the newest is sent when the
 * transport has room now, or at once with @p last (xfer_finalize: the last step, sent whatever
 * it waits for). */
static xfer_status_t decide(xfer_channel_t *ch, int last)
{
    xfer_status_t st = XFER_SUCCESS;
    int met = 0;
    while (ch->flow.n > 1 && st == XFER_SUCCESS)
        st = give(ch, FLOW_DROP);
    if (st != XFER_SUCCESS || ch->flow.n == 0)
        return st;
    if (!last)
        XFER_CHECK_GOTO(room_now(ch, &met), st, out);
    if (met || last)
        st = give(ch, FLOW_SEND);
out:
    return st;
}

/* A hold's broadcast completed: its slot may take another step. */
static xfer_status_t reaped(xfer_rt_hold_t *h, int *done)
{
    int flag = 1;
    if (h->req != MPI_REQUEST_NULL && MPI_Test(&h->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return XFER_ERR(XFER_ERR_MPI, "the verdict on a held step (policy: latest)");
    *done = flag;
    return XFER_SUCCESS;
}

/* Another rank: the verdicts that arrived, carried out in order (never waits for a verdict; a
 * step sent waits for its transport, as rank 0's did). Never inside itself: a replay's wait
 * follows the other channels' verdicts (xfer_ch_flow_follow_other), which may wait in turn. */
static xfer_status_t follow(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    if (ch->flow.following)
        return XFER_SUCCESS;
    ch->flow.following = 1;
    while (ch->flow.n > 0 && st == XFER_SUCCESS) {
        xfer_rt_hold_t *h = held(ch, 0);
        int done = 0;
        XFER_CHECK_GOTO(reaped(h, &done), st, out);
        if (!done)
            break;
        st = carry_out(ch, h, h->verdict);
        pop_oldest(ch);
    }
out:
    ch->flow.following = 0;
    return st;
}

/* Rank 0 replays a step it sends at once, and the transport's commit may wait for the side's
 * other ranks (the blocks' gather of a first or per-step commit, the file's collective write);
 * they replay it when they follow the verdict. A rank waiting on another channel (that one's
 * commit waiting for rank 0, which waits for this one) follows it there. A failure is kept for
 * the application's next call on the channel, as the progress thread's are. */
void xfer_ch_flow_follow_other(xfer_channel_t *ch)
{
    xfer_status_t st;
    if (!ch->flow.latest || ch->me == 0 || ch->flow.open || ch->flow.following || ch->flow.n == 0 ||
        ch->health.failed || ch->health.ended || ch->health.finished)
        return;
    st = follow(ch);
    if (st != XFER_SUCCESS && st != XFER_ERR_END_OF_STREAM && !ch->health.failed) {
        ch->health.failed = 1;
        ch->health.fail_st = st;
        snprintf(ch->health.fail_why, sizeof(ch->health.fail_why), "%s", xfer_last_error());
    }
}

/* Whatever can move now, never waiting for the receivers: rank 0 decides, the others follow.
 * Only between the application's steps (a step being put keeps the transport's step empty). */
static xfer_status_t advance(xfer_channel_t *ch)
{
    if (!ch->flow.latest || ch->flow.open)
        return XFER_SUCCESS;
    return ch->me == 0 ? decide(ch, 0) : follow(ch);
}

/* A free hold for the step being put: on a rank that runs ahead of rank 0, after the verdict on
 * its oldest held step (rank 0 gives it at its own next step at the latest). */
static xfer_status_t hold_for_puts(xfer_channel_t *ch, xfer_rt_hold_t **out)
{
    xfer_rt_flow_t *f = &ch->flow;
    xfer_rt_hold_t *h = held(ch, f->n);
    xfer_status_t st = XFER_SUCCESS;
    int done = 0;

    if (h->state == HOLD_PUTTING) {
        *out = h;
        return XFER_SUCCESS;
    }
    while (f->n >= XFER_RT_HOLDS - 1 && st == XFER_SUCCESS) {
        st = follow(ch);
        if (st == XFER_SUCCESS && f->n >= XFER_RT_HOLDS - 1)
            st = xfer_ch_wait_until(ch, xfer_ch_flow_verdict_in, NULL,
                                    "waiting for rank 0's verdict on a held step (policy: latest)",
                                    0);
    }
    if (st != XFER_SUCCESS)
        return st;
    h = held(ch, f->n);
    /* (rank 0: the broadcast of an earlier verdict from this slot may still be in flight) */
    while (st == XFER_SUCCESS && (st = reaped(h, &done)) == XFER_SUCCESS && !done)
        st = xfer_ch_wait_until(ch, xfer_ch_flow_slot_free, h,
                                "broadcasting a verdict on a held step (policy: latest)", 0);
    if (st != XFER_SUCCESS)
        return st;
    hold_clear(h);
    h->state = HOLD_PUTTING;
    h->step = f->app;
    *out = h;
    return XFER_SUCCESS;
}

/* Wait conditions: the oldest held step's verdict arrived; hold *arg's broadcast completed. */
xfer_status_t xfer_ch_flow_verdict_in(xfer_channel_t *ch, void *arg, int *met)
{
    (void) arg;
    *met = 1;
    if (ch->flow.n > 0)
        return reaped(held(ch, 0), met);
    return XFER_SUCCESS;
}

xfer_status_t xfer_ch_flow_slot_free(xfer_channel_t *ch, void *arg, int *met)
{
    (void) ch;
    return reaped(arg, met);
}

static xfer_status_t grow(void **p, size_t *cap, size_t need, size_t size)
{
    size_t nc = *cap ? *cap : 4;
    void *np;
    if (need <= *cap)
        return XFER_SUCCESS;
    while (nc < need)
        nc *= 2;
    if (!(np = xfer_realloc_array(*p, nc, size)))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "a held step (policy: latest): %zu bytes", nc * size);
    *p = np;
    *cap = nc;
    return XFER_SUCCESS;
}

/* ---- the public calls of a sending side under a flow policy ------------------------------- */

xfer_status_t xfer_ch_flow_begin(xfer_channel_t *ch, int timeout_ms, xfer_step_status_t *status)
{
    xfer_status_t st;
    if (!ch->flow.latest && !xfer_ch_flow_skips(ch))
        return xfer_ch_step_begin(ch, timeout_ms, status); /* (stride: a step that is sent) */
    XFER_CHECK_GOTO(xfer_ch_begin_args(ch, timeout_ms, status), st, out);
    XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out);
    XFER_CHECK_GOTO(advance(ch), st, out);
    *status = ch->health.ended ? XFER_STEP_END_OF_STREAM : XFER_STEP_OK;
out:
    return st;
}

xfer_status_t xfer_ch_flow_put(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block)
{
    xfer_rt_hold_t *h;
    xfer_rt_hput_t *p;
    xfer_rt_dset_t *ds;
    xfer_status_t st;
    uint64_t v;
    size_t bytes;
    int of;

    if (!ch->flow.latest && !xfer_ch_flow_skips(ch))
        return xfer_ch_put(ch, d, block);
    XFER_CHECK_GOTO(xfer_ch_put_check(ch, d, block, &ds, &v, &of), st, out);
    if (ch->health.ended)
        return ch->ops->ended(ch, ch->cur);
    if (xfer_ch_flow_skips(ch))
        return XFER_SUCCESS; /* (checked; nothing is kept) */
    /* latest: the block copied into the step's hold; the step's blocks recorded so that a put
     * that overlaps another is refused now (ch_blocks.c), forgotten at the step's end */
    XFER_CHECK_GOTO(hold_for_puts(ch, &h), st, out);
    bytes = (size_t) v * ds->esize;
    XFER_CHECK_GOTO(grow((void **) &h->put, &h->cap_put, (size_t) h->nput + 1, sizeof(*h->put)), st,
                    out);
    XFER_CHECK_GOTO(grow((void **) &h->data, &h->cap, h->len + PAD8(bytes), 1), st, out);
    if (!ds->dyn)
        XFER_CHECK_GOTO(xfer_ch_block_push(ds, d, v, of), st, out);
    p = &h->put[h->nput++];
    memset(p, 0, sizeof(*p));
    p->ds = (int) (ds - ch->ds);
    p->type = d->type;
    p->ndims = d->ndims;
    memcpy(p->dims, d->dims, (size_t) d->ndims * sizeof(uint64_t));
    memcpy(p->start, d->start, (size_t) d->ndims * sizeof(uint64_t));
    memcpy(p->count, d->count, (size_t) d->ndims * sizeof(uint64_t));
    p->at = h->len;
    p->bytes = bytes;
    if (bytes)
        memcpy(h->data + h->len, block, bytes);
    h->len += PAD8(bytes);
    ch->flow.open = 1;
    ch->stats.bytes_copied_in += bytes;
out:
    return st;
}

/* The application's step ends: skipped (stride), sent (stride, policy block), or held and judged
 * (latest). */
xfer_status_t xfer_ch_flow_end(xfer_channel_t *ch)
{
    xfer_rt_flow_t *f = &ch->flow;
    xfer_rt_hold_t *h;
    xfer_status_t st = XFER_SUCCESS;

    XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out);
    if (ch->health.ended)
        return ch->ops->ended(ch, ch->cur);
    if (xfer_ch_flow_skips(ch)) {
        xfer_ch_attr_drop(ch);
        xfer_ch_blocks_next(ch);
        f->skipped++;
        xfer_ch_flow_report(ch, 0);
    } else if (!f->latest) {
        XFER_CHECK_GOTO(xfer_ch_end_step(ch, f->app), st, out);
    } else {
        /* held: the attributes with the blocks; the verdict asked for (rank 0 gives it) */
        XFER_CHECK_GOTO(hold_for_puts(ch, &h), st, out);
        XFER_CHECK_GOTO(grow((void **) &h->attrs, &h->attr_cap, ch->attr_out.len, 1), st, out);
        if (ch->attr_out.len)
            memcpy(h->attrs, ch->attr_out.buf, ch->attr_out.len);
        h->attr_len = ch->attr_out.len;
        xfer_ch_attr_drop(ch);
        xfer_ch_blocks_next(ch);
        h->state = HOLD_HELD;
        f->n++;
        f->sealed++;
        f->open = 0;
        if (ch->me != 0)
            XFER_MPI_GOTO(MPI_Ibcast(&h->verdict, 1, MPI_INT64_T, 0, f->comm, &h->req), st, out);
    }
    f->app++;
    f->open = 0;
    ch->stats.steps++;
    st = advance(ch);
out:
    return st;
}

xfer_status_t xfer_ch_flow_progress(xfer_channel_t *ch)
{
    return ch->flow.on ? advance(ch) : XFER_SUCCESS;
}

void xfer_ch_flow_lost(xfer_channel_t *ch, uint64_t *from)
{
    xfer_rt_flow_t *f = &ch->flow;
    if (f->n > 0)
        *from = held(ch, 0)->step;
    ch->stats.steps_unsent += (uint64_t) f->n;
    /* (a broadcast of a verdict may stay posted: the channel's frees are local from here on) */
    f->n = 0;
    f->open = 0;
}

/* The flush's agreement completed, or (a rank other than 0) the oldest held step's verdict
 * arrived. */
static xfer_status_t agreed_or_verdict(xfer_channel_t *ch, void *arg, int *met)
{
    int flag = 0;
    (void) arg;
    if (MPI_Test(&ch->flow.agree, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return XFER_ERR(XFER_ERR_MPI, "channel %s: agreeing on the held steps", ch->cfg->name);
    *met = flag;
    if (!flag && ch->me != 0 && ch->flow.n > 0)
        return reaped(held(ch, 0), met);
    return XFER_SUCCESS;
}

/* xfer_finalize, before the transport ends the channel: every held step judged, the newest sent
 * (it waits for the receivers, as the last step must reach them). The side's ranks agree first
 * how many steps were held (one that ended more steps than rank 0 gets verdicts for them too:
 * dropped). A step being put and never ended is forgotten, as without a policy. */
xfer_status_t xfer_ch_flow_flush(xfer_channel_t *ch)
{
    xfer_rt_flow_t *f = &ch->flow;
    xfer_status_t st = XFER_SUCCESS;
    uint64_t mine, most = 0;

    if (!f->latest)
        return XFER_SUCCESS;
    if (f->open) {
        xfer_ch_attr_drop(ch);
        xfer_ch_blocks_next(ch);
        hold_clear(held(ch, f->n));
        f->open = 0;
    }
    /* (a rank other than 0 follows the verdicts while the agreement is in flight: rank 0 may be
     * replaying a step whose transport commits collectively, the file's, and waits for it) */
    mine = f->sealed;
    XFER_MPI_GOTO(MPI_Iallreduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, f->fin, &f->agree), st,
                  out);
    while (st == XFER_SUCCESS && f->agree != MPI_REQUEST_NULL) {
        if (ch->me != 0)
            XFER_CHECK_GOTO(follow(ch), st, out);
        st = xfer_ch_wait_until(ch, agreed_or_verdict, NULL,
                                "agreeing on the held steps (policy: latest)", 0);
    }
    if (st != XFER_SUCCESS)
        return st;
    if (ch->me == 0) {
        st = decide(ch, 1);
        /* the steps other ranks ended and this one did not: dropped (their verdicts come after
         * every held step's, posted whatever became of those) */
        for (; mine < most; mine++) {
            int64_t drop = FLOW_DROP;
            MPI_Request r;
            if (MPI_Ibcast(&drop, 1, MPI_INT64_T, 0, f->comm, &r) != MPI_SUCCESS ||
                MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return XFER_ERR(XFER_ERR_MPI, "channel %s: the verdicts on held steps",
                                ch->cfg->name);
        }
        return st;
    }
    while (f->n > 0 && st == XFER_SUCCESS) {
        st = follow(ch);
        if (st == XFER_SUCCESS && f->n > 0)
            st = xfer_ch_wait_until(ch, xfer_ch_flow_verdict_in, NULL,
                                    "waiting for rank 0's verdict on a held step (policy: latest)",
                                    0);
    }
    for (; st == XFER_SUCCESS && mine < most; mine++) {
        int64_t v;
        MPI_Request r;
        XFER_MPI_GOTO(MPI_Ibcast(&v, 1, MPI_INT64_T, 0, f->comm, &r), st, out);
        XFER_MPI_GOTO(MPI_Wait(&r, MPI_STATUS_IGNORE), st, out);
    }
out:
    return st;
}

/* ---- the receiving side: the sender's step numbers ---------------------------------------- */

uint64_t xfer_ch_step_label(xfer_channel_t *ch, uint64_t s)
{
    xfer_rt_flow_t *f = &ch->flow;
    const char *p;
    size_t len, o = 0;
    xfer_ch_attr_t a;

    if (ch->flow.on)
        return f->app;
    if (f->label_set && f->label_of == s)
        return f->label;
    if (!ch->ops->has(ch, s) || ch->ops->attrs(ch, s, &p, &len) != XFER_SUCCESS)
        return s;
    f->label = s;
    while (xfer_ch_attr_next(p, len, &o, &a))
        if (!a.is_string && a.type == XFER_TYPE_UINT64 && a.count == 1 &&
            strcmp(a.name, XFER_CH_LABEL) == 0) {
            memcpy(&f->label, a.values, sizeof(f->label));
            break;
        }
    f->label_of = s;
    f->label_set = 1;
    return f->label;
}

uint64_t xfer_ch_step_now(const xfer_channel_t *ch)
{
    xfer_channel_t *c = (xfer_channel_t *) ch; /* (the label is cached on the channel) */
    /* under a flow policy the application's step; a receiver's step that arrived, its
     * sender's number (the step after the last one before it arrives) */
    if (ch->flow.on)
        return ch->flow.app;
    if (ch->ops->has(c, ch->cur))
        return xfer_ch_step_label(c, ch->cur);
    if (ch->cur > 0 && ch->flow.label_set)
        return ch->flow.label + 1;
    return ch->cur;
}
