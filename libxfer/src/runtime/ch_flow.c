/* SPDX-License-Identifier: BSD-3-Clause */
/* Flow policies of a channel's sending side (docs/runtime.md, "Flow policies"), between the
 * public calls and the step state machine: the application's steps (flow.app) are not the
 * transport's (ch->cur).
 *   stride: N    only the application's steps 0, N, 2N, ... reach the transport; the calls of the
 *                others return at once (their puts are checked, nothing is copied or sent).
 *   latest       the sender never waits for its receivers. Each step's puts are copied into a
 *                hold. Every step's end is a round: rank 0 of the side drops every held step but
 *                the newest, and sends the newest if the transport has room for it now
 *                (max_in_flight_steps), else keeps it for the next round; its verdict reaches
 *                the side's other ranks by one MPI_Ibcast a round, and each rank carries it out
 *                in the same call (the step's end), replaying the held step as the application
 *                put it. A rank other than 0 thus waits at each step's end for rank 0 to reach
 *                it (as the side's collectives do), never for the receivers; and a transport
 *                whose commit is collective over the side (the file's, step 0's blocks, joined
 *                rows) meets every rank in it, whatever the application does between its calls
 *                (its own collectives included). The last step is never dropped: xfer_finalize
 *                sends it (xfer_ch_flow_flush_step). A held step moves at the sender's next
 *                step end, not while it computes.
 * Receivers see the sender's step numbers: every step of a flow carries the hidden attribute
 * xfer.step (ch_attr.c), read when the step arrived (xfer_ch_step_label). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"

enum { HOLD_FREE = 0, HOLD_PUTTING, HOLD_HELD };

/* A round's verdict: 2 * (held steps dropped, oldest first) + (the newest sent); or the reader
 * is gone, as rank 0 knows it: every rank of the side stops sending at this same round. */
#define VERDICT(drops, send) ((int64_t) (drops) *2 + ((send) ? 1 : 0))
#define VERDICT_FAILED       ((int64_t) -1) /* xferd declared it failed */
#define VERDICT_CLOSED       ((int64_t) -2) /* it closed the channel */
#define VERDICT_CTL_LOST     ((int64_t) -3) /* the control plane is lost */

#define PAD8(n) (((n) + 7) & ~(size_t) 7)

static const xfer_ch_layer_ops_t layer; /* (below) */

/* ---- set-up --------------------------------------------------------------------------------- */

xfer_status_t xfer_ch_flow_open(xfer_channel_t *ch)
{
    xfer_rt_flow_t *f = &ch->flow;
    xfer_channel_flow_t eff;
    xfer_status_t st;
    int i;

    f->comm = f->fin = MPI_COMM_NULL;
    f->agree = MPI_REQUEST_NULL;
    f->last_sent = -1;
    for (i = 0; i < XFER_RT_ROUNDS; i++)
        f->rreq[i] = MPI_REQUEST_NULL;
    /* the keys after XFER_POLICY and XFER_STRIDE; a full-duplex channel has none of them */
    XFER_CHECK_GOTO(xfer_config_channel_flow(ch->x->cfg, ch->index, &eff), st, out);
    if (ch->role != XFER_ROLE_SEND)
        return XFER_SUCCESS;
    f->latest = eff.policy == XFER_POLICY_LATEST;
    f->stride = (uint64_t) eff.stride;
    f->on = f->latest || f->stride > 1;
    ch->above = f->on ? &layer : NULL;
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
    for (i = 0; i < XFER_RT_ROUNDS; i++)
        if (f->rreq[i] != MPI_REQUEST_NULL && collective)
            MPI_Wait(&f->rreq[i], MPI_STATUS_IGNORE);
    for (i = 0; i < XFER_RT_HOLDS; i++) {
        xfer_rt_hold_t *h = &f->hold[i];
        xfer_free(h->put);
        xfer_free(h->data);
        xfer_free(h->attrs);
        memset(h, 0, sizeof(*h));
    }
    if (f->comm != MPI_COMM_NULL && collective)
        MPI_Comm_free(&f->comm);
    if (f->fin != MPI_COMM_NULL && collective)
        MPI_Comm_free(&f->fin);
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

/* ---- the holds and the rounds (policy: latest) ------------------------------------------ */

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

/* Put @p i of held step @p arg. */
static void held_put(const xfer_channel_t *ch, void *arg, int i, xfer_dataset_desc_t *d,
                     const void **block)
{
    const xfer_rt_hold_t *h = arg;
    const xfer_rt_hput_t *p = &h->put[i];
    d->name = ch->ds[p->ds].cfg->name;
    d->type = p->type;
    d->ndims = p->ndims;
    memcpy(d->dims, p->dims, sizeof(d->dims));
    memcpy(d->start, p->start, sizeof(d->start));
    memcpy(d->count, p->count, sizeof(d->count));
    *block = p->bytes ? h->data + p->at : NULL;
}

/* Hand held step @p h to the transport as the application put it: the puts, the attributes, the
 * step's end. Waits for room: on rank 0 there is (its verdict said so); elsewhere the notes
 * that say so, and this rank's own part of earlier steps, may still be on their way. */
static xfer_status_t replay(xfer_channel_t *ch, xfer_rt_hold_t *h)
{
    xfer_status_t st;
    XFER_CHECK_GOTO(xfer_ch_send_recorded(ch, "sending a held step (policy: latest)", h->nput,
                                          held_put, h, h->attrs, h->attr_len, h->step),
                    st, out);
    ch->flow.last_sent = (int64_t) h->step; /* (its step report went out with the commit) */
    xfer_ch_flow_report(ch, 1);
out:
    return st;
}

/* A round's verdict @p v carried out: the oldest held steps dropped, the newest sent or kept. */
static xfer_status_t carry_out(xfer_channel_t *ch, int64_t v)
{
    xfer_rt_flow_t *f = &ch->flow;
    int64_t drops = v / 2;
    uint64_t sent;
    xfer_status_t st = XFER_SUCCESS;

    if (ch->loss.lost) /* (this rank switched already: it only keeps the rounds' count) */
        return XFER_SUCCESS;
    if (v == VERDICT_FAILED || v == VERDICT_CTL_LOST) {
        /* rank 0 sent this rank xferd's notice and its words before it gave this verdict */
        if ((st = xfer_ch_take_notice(ch)) != XFER_SUCCESS)
            return st;
        if (v == VERDICT_CTL_LOST) {
            ch->health.ctl_lost = 1;
            return xfer_ch_ctl_lost_error(ch);
        }
        ch->health.peer_failed = 1;
        return xfer_ch_peer_failed_error(ch);
    }
    if (v == VERDICT_CLOSED)
        return XFER_ERR(XFER_ERR_END_OF_STREAM, "channel %s: %s closed the channel", ch->cfg->name,
                        xfer_ch_peer_name(ch));
    if (v < 0 || drops + v % 2 > f->n)
        return XFER_ERR(XFER_ERR_INTERNAL,
                        "channel %s: rank 0's verdict %lld on %d held steps of rank %d (policy: "
                        "latest): the side's ranks ended different steps",
                        ch->cfg->name, (long long) v, f->n, ch->me);
    for (; drops > 0; drops--) {
        pop_oldest(ch);
        ch->stats.steps_dropped++;
        xfer_ch_flow_report(ch, 0);
    }
    sent = ch->stats.steps_sent;
    if (v % 2 == 0)
        return XFER_SUCCESS;
    if (!f->gone_here) {
        st = replay(ch, held(ch, 0));
        if (st == XFER_SUCCESS || !xfer_ch_loss_is_reader(ch, st)) {
            if (st == XFER_SUCCESS) /* (else it stays held: a loss counts it unsent) */
                pop_oldest(ch);
            return st;
        }
    }
    /* The round sends it on every rank of the side: a reader's loss this rank met sending it (ch3
     * fails a send to a dead reader at once) counts it sent here too, as the others count it; and
     * only rank 0 switches the side, at a round: another rank tells it and sends no more until
     * the verdict that the reader is gone. */
    if (ch->stats.steps_sent == sent)
        ch->stats.steps_sent++;
    pop_oldest(ch);
    if (ch->me == 0)
        return st;
    if (!f->gone_here)
        xfer_ch_loss_tell(ch);
    f->gone_here = 1;
    return XFER_SUCCESS;
}

/* Rank 0 of a side that takes readers back, without xferd: has the reader been silent (no room
 * for the newest held step, @p met) for more than @p limit_ms? Under policy block the wait for
 * room is bounded by control.timeout_ms, and its end is the reader's loss; under latest nothing
 * waits, so that the rounds alone would never meet the death of a reader without xferd. */
static int silent(xfer_channel_t *ch, int met, double limit_ms)
{
    xfer_rt_flow_t *f = &ch->flow;
    const double now = xfer_now_ms();
    if (met || f->n == 0 || !ch->loss.attachable || ch->x->use_ctl || ch->loss.lost) {
        f->stall_ms = 0;
        return 0;
    }
    if (f->stall_ms == 0)
        f->stall_ms = now;
    return now - f->stall_ms > limit_ms;
}

/* ... then it is lost, on rank 0 first (ch_loss.c tells the side's other ranks, and the verdict
 * of this round says so to all of them). */
static void lose_silent(xfer_channel_t *ch)
{
    (void) XFER_ERR(XFER_ERR_TIMEOUT,
                    "channel %s: %s took no step within %d ms (policy: latest: the newest held "
                    "step found no room)",
                    ch->cfg->name, xfer_ch_peer_name(ch), ch->x->timeout_ms);
    (void) xfer_ch_loss_take(ch, XFER_ERR_TIMEOUT);
    ch->flow.stall_ms = 0;
}

/* Post this round's broadcast (rank 0: its verdict, the newest step sent with @p send_newest or
 * when the transport has room now; an earlier round's broadcast from the same slot done first:
 * rank 0 runs at most XFER_RT_ROUNDS rounds ahead of the others). *@p slot: the round's. */
static xfer_status_t post_round(xfer_channel_t *ch, int send_newest, int *slot)
{
    xfer_rt_flow_t *f = &ch->flow;
    const int i = (int) (f->rounds % XFER_RT_ROUNDS);
    xfer_status_t st = XFER_SUCCESS;
    int met = send_newest;

    if (f->rreq[i] != MPI_REQUEST_NULL)
        XFER_CHECK_GOTO(xfer_ch_wait_until(ch, xfer_ch_req_done, &f->rreq[i],
                                           "broadcasting a verdict on held steps (policy: "
                                           "latest)",
                                           0),
                        st, out);
    if (ch->me == 0) {
        /* what xferd says of the reader first (a reader that died leaves no room, and a sender
         * that holds its steps would never meet its failure) */
        if (!ch->loss.lost)
            XFER_CHECK_GOTO(xfer_ch_check_peer(ch), st, out);
        if (ch->loss.lost)
            f->rv[i] = ch->loss.closed ? VERDICT_CLOSED : VERDICT_FAILED;
        else if (ch->health.peer_failed)
            f->rv[i] = VERDICT_FAILED;
        else if (ch->health.ctl_lost)
            f->rv[i] = VERDICT_CTL_LOST;
        else {
            if (f->n > 0 && !met)
                XFER_CHECK_GOTO(room_now(ch, &met), st, out);
            if (silent(ch, met, ch->x->timeout_ms))
                lose_silent(ch);
            f->rv[i] = ch->loss.lost ? VERDICT_FAILED : f->n > 0 ? VERDICT(f->n - 1, met) : 0;
        }
    }
    XFER_MPI_GOTO(MPI_Ibcast(&f->rv[i], 1, MPI_INT64_T, 0, f->comm, &f->rreq[i]), st, out);
    f->rounds++;
    *slot = i;
out:
    return st;
}

/* A rank other than 0: rank 0's verdict of round @p i. Only rank 0 decides that the reader is
 * gone (a rank that learns it first must not stop sending alone): the channel's own failure is
 * not this wait's, which ends with the verdict (or the context's deadline). */
static xfer_status_t await_verdict(xfer_channel_t *ch, int i)
{
    const xfer_ch_wait_t w = {.cond = xfer_ch_req_done,
                              .arg = &ch->flow.rreq[i],
                              .what = "waiting for rank 0's verdict on held steps (policy: latest)",
                              .until = HUGE_VAL,
                              .need = UINT64_MAX,
                              .resumable = 0,
                              .force = 0,
                              .aside = 1};
    int met;
    return xfer_ch_wait(ch, &w, &met);
}

/* A step's end: the round, carried out on every rank in this call (the others wait for rank 0's
 * verdict: for their own side, never for the receivers). */
static xfer_status_t round_now(xfer_channel_t *ch)
{
    xfer_status_t st;
    int i;
    XFER_CHECK_GOTO(post_round(ch, 0, &i), st, out);
    if (ch->me != 0)
        XFER_CHECK_GOTO(await_verdict(ch, i), st, out);
    st = carry_out(ch, ch->flow.rv[i]);
out:
    return st;
}

/* A step ended on a channel whose reader is gone (ch_loss.c): the round still (the side's
 * other ranks may learn it only from rank 0's verdict), counted as the side's other ranks count
 * theirs (a rank that switched a round before the others, or a reader that attaches later: the
 * finish agrees on the count). */
static xfer_status_t layer_lost_end(xfer_channel_t *ch)
{
    if (!ch->flow.latest)
        return XFER_SUCCESS;
    ch->flow.sealed++;
    return round_now(ch);
}

/* The reader is gone (ch_loss.c): the held steps are not sent (counted unsent). */
static void layer_lost(xfer_channel_t *ch, uint64_t *from)
{
    xfer_rt_flow_t *f = &ch->flow;
    if (f->n > 0)
        *from = held(ch, 0)->step;
    ch->stats.steps_unsent += (uint64_t) f->n;
    /* (a round's broadcast may stay posted: the channel's frees are local from here on, or a
     * reader attaches and the rounds go on, ch_attach.c) */
    f->n = 0;
    f->open = 0;
    f->stall_ms = 0;
    f->gone_here = 0;
}

static const xfer_ch_layer_ops_t layer = {.lost = layer_lost, .lost_end = layer_lost_end};

/* The hold of the step being put (after each round at most one step is held: two holds). */
static xfer_rt_hold_t *hold_for_puts(xfer_channel_t *ch)
{
    xfer_rt_flow_t *f = &ch->flow;
    xfer_rt_hold_t *h = held(ch, f->n);
    if (h->state != HOLD_PUTTING) {
        hold_clear(h);
        h->state = HOLD_PUTTING;
        h->step = f->app;
    }
    return h;
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
    h = hold_for_puts(ch);
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
        f->last_sent = (int64_t) f->app; /* (its step report went out with the commit) */
        xfer_ch_flow_report(ch, 1);
    } else {
        /* held: the attributes with the blocks; then the round */
        h = hold_for_puts(ch);
        XFER_CHECK_GOTO(grow((void **) &h->attrs, &h->attr_cap, ch->attr_out.len, 1), st, out);
        if (ch->attr_out.len)
            memcpy(h->attrs, ch->attr_out.buf, ch->attr_out.len);
        h->attr_len = ch->attr_out.len;
        xfer_ch_attr_drop(ch);
        xfer_ch_blocks_next(ch);
        h->state = HOLD_HELD;
        f->n++;
        f->sealed++;
    }
    f->app++;
    f->open = 0;
    ch->stats.steps++;
    if (f->latest)
        st = round_now(ch);
out:
    return st;
}

/* ---- xfer_finalize: every channel's held steps at once ------------------------------------ */

/* One step of a channel's flush (channel.c runs every channel's until each is done, and ends
 * each as soon as its own is): the side's ranks check they ended as many steps, then the last
 * round sends the newest held step once the transport has room for it, waiting for the
 * receivers only in the finish's one loop, whichever channel they read first. A step being put
 * and never ended is forgotten, as without a policy. */
void xfer_ch_flow_flush_step(xfer_channel_t *ch, int *done)
{
    xfer_rt_flow_t *f = &ch->flow;
    xfer_status_t st = XFER_SUCCESS;
    int flag = 0, met = 0, i;

    *done = 1;
    if (!f->latest || f->flush == 3)
        return;
    /* (a failure of its own: it sits out the finish; a reader gone: the side's ranks still make
     * the last round together, some may not know it yet) */
    if (!ch->loss.lost && (ch->health.failed || ch->health.finished)) {
        f->flush = 3;
        return;
    }
    *done = 0;
    if (f->flush == 0) {
        if (f->open) {
            xfer_ch_attr_drop(ch);
            xfer_ch_blocks_next(ch);
            hold_clear(held(ch, f->n));
            f->open = 0;
        }
        f->span[0] = (int64_t) f->sealed;
        f->span[1] = -(int64_t) f->sealed;
        XFER_MPI_GOTO(
            MPI_Iallreduce(MPI_IN_PLACE, f->span, 2, MPI_INT64_T, MPI_MAX, f->fin, &f->agree), st,
            out);
        f->flush = 1;
    }
    if (f->flush == 1) {
        if (MPI_Test(&f->agree, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            st = XFER_ERR(XFER_ERR_MPI, "channel %s: agreeing on the held steps", ch->cfg->name);
            goto out;
        }
        if (!flag)
            goto out;
        if (f->span[0] != -f->span[1]) {
            st = XFER_ERR(XFER_ERR_STATE,
                          "channel %s: the ranks of %s ended from %lld to %lld steps (this rank "
                          "%llu): under policy latest every rank of a side ends the same steps",
                          ch->cfg->name, xfer_ch_side_name(ch, ch->side), (long long) -f->span[1],
                          (long long) f->span[0], (unsigned long long) f->sealed);
            goto out;
        }
        f->flush = 2;
        f->last = -1;
        if (ch->me != 0) /* (the last round's verdict, awaited below) */
            XFER_CHECK_GOTO(post_round(ch, 1, &f->last), st, out);
    }
    if (ch->me == 0) {
        /* the last round once the newest held step has room (nothing held, or the reader gone:
         * at once) */
        if (f->n > 0 && !ch->loss.lost)
            XFER_CHECK_GOTO(room_now(ch, &met), st, out);
        /* (a silent reader: within half the finish's own bound, which the other ranks wait in) */
        if (silent(ch, met, 0.5 * ch->x->timeout_ms))
            lose_silent(ch);
        if (f->n > 0 && !ch->loss.lost && !met)
            goto out;
        XFER_CHECK_GOTO(post_round(ch, 1, &i), st, out);
        XFER_CHECK_GOTO(carry_out(ch, f->rv[i]), st, out);
    } else {
        if (MPI_Test(&f->rreq[f->last], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            st = XFER_ERR(XFER_ERR_MPI, "channel %s: rank 0's last verdict on held steps",
                          ch->cfg->name);
            goto out;
        }
        if (!flag)
            goto out;
        XFER_CHECK_GOTO(carry_out(ch, f->rv[f->last]), st, out);
    }
    f->flush = 3;
out:
    if (st != XFER_SUCCESS) {
        st = xfer_ch_loss_finish(ch, st);
        /* receivers that closed the channel before the last step take no step: as after a
         * commit that met the end, the finish goes on */
        f->flush_st = st == XFER_ERR_END_OF_STREAM ? XFER_SUCCESS : st;
        f->flush = 3;
    }
    *done = f->flush == 3;
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
    return ch->loss.base + ch->cur; /* (a sender's, after a reader attached: ch_attach.c) */
}
