/* SPDX-License-Identifier: BSD-3-Clause */
/* Slots and steps: progress of a channel's collectives, bounded waits, the puts of a step,
 * its commit and its end. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../coll/coll.h"
#include "../sched/exec.h"
#include "stream.h"

/* The peer failed or the control plane is lost. */
static int peer_gone(const xfer_channel_t *ch)
{
    return ch->health.peer_failed || ch->health.ctl_lost;
}

/* Can this rank start the collective of step ch->started now? */
static int can_start(xfer_channel_t *ch)
{
    const uint64_t s = ch->started;
    xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, s);
    int k;
    if (s >= xfer_ch_run_limit(ch))
        return 0;
    for (k = 0; k < 2; k++)
        if (ch->sends[k] && ch->proto.ann[k] <= s)
            return 0;
    if (xfer_ch_this_sends(ch)) {
        return s < ch->committed && sl->state == XFER_SLOT_COMMITTED && sl->step == s;
    }
    /* receive only: a free slot inside the window of steps the application has not released */
    /* (bound receive buffers hold one step: the next lands once this one is released) */
    return sl->state == XFER_SLOT_FREE &&
           s < ch->proto.released + (uint64_t) (ch->path.bound_recv ? 1 : ch->nslots);
}

/* Bound buffers of the step about to start: receiving datasets rebound during the previous
 * step move now (a bound receiver starts a step only once the previous one is released, so its
 * gets have read where it landed); the executor rebuilds its datatypes if anything moved. The
 * joined and variable datasets land where the slot's second phase finds them bound. */
static void rebind(xfer_channel_t *ch, xfer_rt_slot_t *sl)
{
    int i, moved = 0;
    for (i = 0; i < ch->nds; i++) {
        xfer_rt_dset_t *d = &ch->ds[i];
        if (!d->next_bound)
            continue;
        moved |= d->next_bound != d->bound && !xfer_ch_jroute(d);
        d->bound = d->next_bound;
        d->bound_size = d->next_bound_size;
        d->next_bound = NULL;
    }
    if (moved)
        xfer_ch_bound_refresh(ch);
    if (sl->ex && sl->bound_gen != ch->path.bound_gen) {
        xfer_exec_remap(sl->ex, XFER_BUF_SEND, ch->path.seg[0], ch->path.nseg[0]);
        xfer_exec_remap(sl->ex, XFER_BUF_RECV, ch->path.seg[1], ch->path.nseg[1]);
        sl->bound_gen = ch->path.bound_gen;
    }
}

static xfer_status_t start_next(xfer_channel_t *ch)
{
    xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, ch->started);
    xfer_status_t st = XFER_SUCCESS;
    sl->step = ch->started;
    sl->state = XFER_SLOT_ACTIVE;
    if (!xfer_ch_this_sends(ch)) /* (a sending rank's began at its fill) */
        xfer_ch_joined_reset(ch, sl);
    if (ch->path.bound_send || ch->path.bound_recv)
        rebind(ch, sl);
    sl->ex_done = sl->plan_done = 0;
    if (sl->ex) /* the direct schedule */
        XFER_CHECK_GOTO(xfer_exec_start(sl->ex, 0), st, out);
    if (sl->plan) /* the allgatherv plan */
        XFER_CHECK_GOTO(xfer_start(sl->plan), st, out);
    ch->started++;
out:
    if (st != XFER_SUCCESS)
        xfer_ch_fail_keep(ch, st);
    return st;
}

static void slot_done(xfer_channel_t *ch, xfer_rt_slot_t *sl)
{
    if (xfer_ch_this_recvs(ch)) {
        ch->stats.bytes_received += ch->path.step_recv;
        ch->stats.wire_bytes_received += ch->path.step_recv;
    }
    sl->state = XFER_SLOT_DONE;
    if (!xfer_ch_this_recvs(ch) || sl->step < ch->proto.released)
        sl->state = XFER_SLOT_FREE;
}

/* May this rank post its part of step 0's set-up now (stream_setup.c)? A sending rank posts at its
 * first commit (its blocks are fixed then), a receive-only rank once its step 0 began on any
 * channel (x->began: its selections are fixed then) or at a wait on this very channel
 * (@p force), every rank in xfer_finalize once it ended the channel. Not at its first call on
 * this channel only: a sender that sends from a bound buffer waits in xfer_step_end for this
 * part, while this rank may wait on another channel for a step that sender commits later (a
 * cycle of channels, two channels read in the other order: xfer-synth --bind, seeds 5 and 3). */
static int may_post(const xfer_channel_t *ch, int force)
{
    if (ch->ending)
        return 1;
    return xfer_ch_this_sends(ch) ? ch->committed > 0 : force || ch->x->began;
}

/* A step's collective failed: the steps before it are still delivered, a wait for it or a later
 * one fails with these words (the peer going away is the usual cause: explain() in ch_api.c
 * asks xferd). */
static void lose(xfer_channel_t *ch, xfer_rt_slot_t *sl, xfer_status_t st)
{
    sl->lost = 1;
    if (sl->step >= ch->health.lost_step)
        return;
    ch->health.lost_step = sl->step;
    ch->health.lost_st = st;
    snprintf(ch->health.lost_why, sizeof(ch->health.lost_why),
             "channel %s: step %llu between %s and %s failed: %.600s", ch->cfg->name,
             (unsigned long long) sl->step, xfer_ch_side_name(ch, 0), xfer_ch_side_name(ch, 1),
             xfer_last_error());
}

/* One pass over a channel: notes, step 0's set-up, collectives that can start, collectives that
 * finished. @p force: a wait on this very channel. Never blocks. Once the peer failed (or the
 * control plane is lost) nothing new starts, but the collectives in flight keep moving: a step
 * whose data all arrived is still delivered; the pass then returns the failure, which a wait
 * reports only when what it waits for did not happen (xfer_ch_wait_for). */
static xfer_status_t progress(xfer_channel_t *ch, int force)
{
    xfer_status_t st;
    uint64_t lim;
    int i, gone;

    if (ch->health.failed)
        return xfer_ch_failed_error(ch);
    XFER_CHECK_GOTO(xfer_ch_poll_notes(ch), st, out);
    gone = ch->health.peer_failed || ch->health.ctl_lost;
    if (!ch->setup && !gone) {
        if (ch->su.state == XFER_SU_IDLE && may_post(ch, force))
            XFER_CHECK_GOTO(xfer_ch_setup_post(ch), st, out);
        XFER_CHECK_GOTO(xfer_ch_setup_advance(ch), st, out);
    }
    /* Committed steps past the end of the channel will never run. */
    lim = xfer_ch_run_limit(ch);
    for (i = 0; i < ch->nslots; i++) {
        xfer_rt_slot_t *sl = &ch->slots[i];
        if (sl->state == XFER_SLOT_COMMITTED && sl->step >= lim)
            sl->state = XFER_SLOT_FREE;
    }
    while (!gone && ch->setup && can_start(ch))
        XFER_CHECK_GOTO(start_next(ch), st, out);
    for (i = 0; i < ch->nslots; i++) { /* in step order: oldest first */
        xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, ch->started + (uint64_t) i);
        if (sl->state != XFER_SLOT_ACTIVE || sl->lost)
            continue;
        st = XFER_SUCCESS;
        if (sl->ex && !sl->ex_done) /* the direct schedule */
            st = xfer_exec_progress(sl->ex, 0, &sl->ex_done);
        if (st == XFER_SUCCESS && sl->plan && !sl->plan_done)
            st = xfer_test(sl->plan, &sl->plan_done); /* never blocks, whatever the plan */
        if (st == XFER_SUCCESS && (!sl->ex || sl->ex_done) && (!sl->plan || sl->plan_done)) {
            int jdone; /* the joined rows, once the fixed part brought their tables */
            st = xfer_ch_joined_progress(ch, sl, &jdone);
            if (st == XFER_SUCCESS && jdone)
                slot_done(ch, sl);
        }
        if (st != XFER_SUCCESS)
            lose(ch, sl, st);
    }
    if (ch->health.peer_failed)
        return xfer_ch_peer_failed_error(ch);
    if (ch->health.ctl_lost)
        return xfer_ch_ctl_lost_error(ch);
    return XFER_SUCCESS;
out:
    return st;
}

xfer_status_t xfer_ch_progress_one(xfer_channel_t *ch, int force)
{
    return progress(ch, force);
}

/* Progress every channel of the context (a wait on one channel must not starve the others:
 * a pipeline's middle component waits on one while the next one needs its notes). @p ch goes
 * last: the others' failures surface on their own calls, and their words must not stand in for
 * this channel's (xfer-chaos seeds 1520 and 1570: a get on ch2 failed with ch1's words). */
xfer_status_t xfer_ch_progress_all(xfer_channel_t *ch, int force)
{
    xfer_ch_progress_others(ch);
    return progress(ch, force);
}

/* Is any collective of this channel in flight? */
int xfer_ch_busy(const xfer_channel_t *ch)
{
    int i;
    for (i = 0; i < ch->nslots; i++)
        if (ch->slots[i].state == XFER_SLOT_ACTIVE)
            return 1;
    return 0;
}

/* The stream's poll (transport.h): one pass of progress(). */
xfer_status_t xfer_ch_stream_poll(xfer_channel_t *ch, int force, int *busy)
{
    xfer_status_t st = progress(ch, force);
    *busy = xfer_ch_busy(ch);
    return st;
}

/* ---- the application's calls ------------------------------------------------------------- */

xfer_status_t xfer_ch_ended(xfer_channel_t *ch, uint64_t step)
{
    const uint64_t lim = xfer_ch_run_limit(ch);
    int k, who = 1 - ch->side;
    for (k = 0; k < 2; k++)
        if (ch->sends[k] && ch->proto.eos[k] >= 0 && (uint64_t) ch->proto.eos[k] == lim)
            who = k;
    ch->health.ended = 1;
    if (who == ch->side && xfer_ch_this_sends(ch) && !xfer_ch_this_recvs(ch) &&
        ch->proto.close_seen)
        return XFER_ERR(XFER_ERR_END_OF_STREAM,
                        "channel %s: %s closed the channel after step %lld; step %llu is not sent",
                        ch->cfg->name, xfer_ch_peer_name(ch), (long long) lim - 1,
                        (unsigned long long) step);
    return XFER_ERR(XFER_ERR_END_OF_STREAM, "channel %s: %s ended the channel after %llu step%s",
                    ch->cfg->name, xfer_ch_side_name(ch, who), (unsigned long long) lim,
                    lim == 1 ? "" : "s");
}

/* The slot of step *arg is free, or the step will never run; not a step of a commit the side
 * makes together (xfer_ch_side_agrees), whose end only the side's agreement says: its slot is
 * freed, as every step before the end completes. */
static xfer_status_t slot_free_cond(xfer_channel_t *ch, void *arg, int *met)
{
    const uint64_t s = *(uint64_t *) arg;
    *met = xfer_ch_slot_of(ch, s)->state == XFER_SLOT_FREE ||
           (!ch->committing && !xfer_ch_side_agrees(ch) && xfer_ch_run_limit(ch) <= s);
    return XFER_SUCCESS;
}

/* The slot of the current step, ready for puts. */
static xfer_status_t fill_slot(xfer_channel_t *ch, xfer_rt_slot_t **out)
{
    xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, ch->cur);
    xfer_status_t st;
    uint64_t s = ch->cur;
    if (sl->state == XFER_SLOT_FILLING && sl->step == ch->cur) {
        *out = sl;
        return XFER_SUCCESS;
    }
    if (sl->state != XFER_SLOT_FREE) {
        const xfer_ch_wait_t w = {.cond = slot_free_cond,
                                  .arg = &s,
                                  .what = "waiting for a free step slot",
                                  .until = HUGE_VAL,
                                  .need = 0,
                                  .resumable = 1,
                                  .force = 1};
        int met;
        XFER_CHECK_GOTO(xfer_ch_wait(ch, &w, &met), st, out_err);
    }
    if (sl->state != XFER_SLOT_FREE)
        return xfer_ch_ended(ch, s);
    sl->state = XFER_SLOT_FILLING;
    sl->step = ch->cur;
    sl->mask = 0;
    xfer_ch_joined_reset(ch, sl);
    *out = sl;
    return XFER_SUCCESS;
out_err:
    return st;
}

/* Step 0: keep block @p b of @p ds in stage0 (see runtime.h) until the contribution is laid out
 * (its offset in ds->put.at[b]). */
static xfer_status_t stage_block(xfer_channel_t *ch, xfer_rt_dset_t *ds, int b, const void *block,
                                 size_t bytes)
{
    const size_t padded = (bytes + 7) & ~(size_t) 7;
    size_t base = ch->lay.stage0_len ? ch->lay.stage0_len
                                     : sizeof(xfer_rt_hdr_t) + (ch->me == 0 ? ch->lay.attr_cap : 0);
    char *grown;
    if (padded > SIZE_MAX - base)
        return XFER_ERR(XFER_ERR_TOO_LARGE, "staging dataset %s", ds->cfg->name);
    /* exactly the size needed: glibc grows large blocks with mremap, without copying */
    grown = xfer_realloc_array(ch->lay.stage0, base + padded, 1);
    if (!grown)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "staging dataset %s (%zu bytes)", ds->cfg->name, bytes);
    if (!ch->lay.stage0)
        memset(grown, 0, base); /* the header's room */
    ch->lay.stage0 = grown;
    memcpy(grown + base, block, bytes);
    memset(grown + base + bytes, 0, padded - bytes);
    ds->put.at[b] = base;
    ch->lay.stage0_len = base + padded;
    return XFER_SUCCESS;
}

/* The stream's stage (transport.h): into the slot of step cur (step 0: kept aside until the
 * contribution is laid out), or nothing for a bound dataset. The block is the last of the
 * rank's in the step (ds->put, ch_blocks.c); after the first step, where its block of the first
 * step sits (ds->fix). */
xfer_status_t xfer_ch_stream_stage(xfer_channel_t *ch, xfer_rt_dset_t *ds, const void *block,
                                   uint64_t v)
{
    const int b = ds->put.n - 1;
    xfer_status_t st;
    xfer_rt_slot_t *sl;

    XFER_CHECK_GOTO(fill_slot(ch, &sl), st, out);
    if (xfer_ch_jroute(ds)) { /* it moves in the slot's second phase (stream_joined.c) */
        XFER_CHECK_GOTO(xfer_ch_joined_stage(ch, sl, ds, block, v), st, out);
        sl->mask |= (uint64_t) 1 << ds->bit;
        return XFER_SUCCESS;
    }
    if (ds->bound && v > 0 && block != ds->bound) {
        /* a bound dataset is sent from wherever this step's put says: the caller leaves the
         * block alone until xfer_step_end returns (a bound sender has one step in flight) */
        ds->bound = (void *) block;
        ds->bound_size = (size_t) v * ds->esize;
        xfer_ch_bound_refresh(ch);
    }
    sl->mask |= (uint64_t) 1 << ds->bit;
    if (ds->bound) /* sent from the caller's buffer by the step's schedule */
        return XFER_SUCCESS;
    ch->stats.bytes_copied_in += v * ds->esize;
    if (v > 0) {
        if (!sl->sbuf) /* before the first step is set up: keep the block until then */
            return stage_block(ch, ds, b, block, (size_t) v * ds->esize);
        memcpy(sl->sbuf + ds->my_off + ds->fix.pk[ds->put.of[b]], block, (size_t) v * ds->esize);
    }
    return XFER_SUCCESS;
out:
    return st;
}

/* The stream's unput (transport.h): the step being filled no longer holds @p ds. */
void xfer_ch_stream_unput(xfer_channel_t *ch, xfer_rt_dset_t *ds)
{
    xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, ch->cur);
    if (sl->state == XFER_SLOT_FILLING && sl->step == ch->cur)
        sl->mask &= ~((uint64_t) 1 << ds->bit);
}

xfer_status_t xfer_ch_stage_first(xfer_channel_t *ch)
{
    size_t off = sizeof(xfer_rt_hdr_t) + (ch->me == 0 ? ch->lay.attr_cap : 0);
    int i, b;

    for (i = 0; i < ch->nds; i++) {
        xfer_rt_dset_t *d = &ch->ds[i];
        if (!d->out)
            continue;
        d->my_off = off;
        d->my_bytes = xfer_ch_jroute(d) ? 0 : xfer_ch_region(d);
        off += (d->my_bytes + 7) & ~(size_t) 7;
    }
    ch->lay.my_bytes = off;
    for (i = 0; i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        if (s->sbuf)
            continue;
        if (s == xfer_ch_slot_of(ch, ch->cur) && ch->lay.stage0 && ch->lay.stage0_len == off) {
            int j, fits = 1;
            for (j = 0; j < ch->nds; j++) /* put in the channel's order: laid out already */
                for (b = 0; !xfer_ch_jroute(&ch->ds[j]) && b < ch->ds[j].put.n; b++)
                    fits &= ch->ds[j].put.at[b] == ch->ds[j].my_off + ch->ds[j].fix.pk[b];
            if (fits) {
                s->sbuf = ch->lay.stage0;
                ch->lay.stage0 = NULL;
                continue;
            }
        }
        if (!(s->sbuf = xfer_calloc(1, off)))
            return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: send stage of %zu bytes",
                            ch->cfg->name, off);
    }
    if (ch->lay.stage0) { /* the blocks of step 0, put before this: into place */
        char *sbuf = xfer_ch_slot_of(ch, ch->cur)->sbuf;
        for (i = 0; i < ch->nds; i++) {
            const xfer_rt_dset_t *d = &ch->ds[i];
            for (b = 0; d->out && !xfer_ch_jroute(d) && !d->bound && b < d->put.n; b++)
                memcpy(sbuf + d->my_off + d->fix.pk[b], ch->lay.stage0 + d->put.at[b],
                       d->put.pk[b + 1] - d->put.pk[b]);
        }
        xfer_free(ch->lay.stage0);
        ch->lay.stage0 = NULL;
    }
    ch->lay.natural = 1;
    return XFER_SUCCESS;
}

/* Commit the current step of a sending rank: header, announcement, start when possible. */
/* What a step of this side moves, for xferd's throughput figures: the datasets put in it,
 * whole (the sending ranks' blocks tile them). */
static uint64_t step_bytes(const xfer_channel_t *ch, uint64_t mask)
{
    uint64_t b = 0;
    int i;
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        if (d->out && (mask >> d->bit & 1u))
            b += xfer_ch_volume(d->cfg->ndims, d->cfg->dims) * d->esize;
    }
    return b;
}

/* A commit the side agreed on (ch->committing, on_reader_loss: continue) whose rank met the
 * reader's loss, @p st, before the side's exchange of the step (joined rows): the exchange is
 * made, as every other rank of the side makes it, and the commit fails with @p st and its words
 * (the step counts as committed all the same: ch_step.c, xfer_ch_commit_step). */
static xfer_status_t late_failure(xfer_channel_t *ch, xfer_status_t st)
{
    char why[1024];
    xfer_rt_slot_t *sl;
    snprintf(why, sizeof(why), "%s", xfer_last_error());
    xfer_clear_error();
    if (fill_slot(ch, &sl) == XFER_SUCCESS)
        (void) xfer_ch_joined_commit(ch, sl); /* (the slot is never announced) */
    xfer_clear_error();
    return xfer_err_raw(st, "%s", why);
}

xfer_status_t xfer_ch_commit(xfer_channel_t *ch)
{
    xfer_rt_slot_t *sl;
    xfer_rt_hdr_t h;
    xfer_status_t st;
    int i;

    if (ch->cur_committed)
        return XFER_SUCCESS;
    if ((st = xfer_ch_loss_late(ch)) != XFER_SUCCESS ||
        (st = xfer_ch_poll_notes(ch)) != XFER_SUCCESS) {
        /* (ch3 fails a note to a dead reader at once; or a wait on the side met it) a commit
         * the side agreed on under continue makes its side's exchange first, as the other
         * ranks do, then fails */
        if (!(ch->committing && ch->loss.cont))
            goto out;
        return late_failure(ch, st);
    }
    /* nobody to deliver it to: not committed; but a commit the side agreed on (ch->committing)
     * makes its side's exchanges on every rank (a rank that learns it now switches after them,
     * ch_loss.c) */
    if (ch->health.peer_failed && !(ch->committing && ch->loss.cont))
        return xfer_ch_peer_failed_error(ch);
    if (ch->health.ctl_lost)
        return xfer_ch_ctl_lost_error(ch);
    if (!ch->committing && xfer_ch_run_limit(ch) <= ch->cur) /* (agreed: committed anyway) */
        return xfer_ch_ended(ch, ch->cur);
    XFER_CHECK_GOTO(fill_slot(ch, &sl), st, out);
    /* joined rows: every sibling's counts, max_rows checked, before the step is announced */
    XFER_CHECK_GOTO(xfer_ch_joined_commit(ch, sl), st, out);
    if (xfer_ch_is_announcer(ch)) {
        ch->proto.ann[ch->side] = ch->cur + 1;
        XFER_CHECK_GOTO(xfer_ch_announce(ch, NOTE_ANN, (int64_t) ch->cur), st, out);
        xfer_rt_ctl_step(ch->x, ch->index, ch->side, ch->cur, step_bytes(ch, sl->mask));
    }
    if (!ch->setup && !ch->lay.natural) {
        /* The first commit: this rank's blocks are fixed. Its steps are staged in channel
         * order until step 0's set-up (which it posts now, and which no commit waits for)
         * knows the contributions' layout. */
        XFER_CHECK_GOTO(xfer_ch_stage_first(ch), st, out);
        XFER_CHECK_GOTO(xfer_ch_setup_post(ch), st, out);
    }
    memset(&h, 0, sizeof(h));
    h.magic = XFER_RT_MAGIC;
    h.step = ch->cur;
    h.mask = sl->mask;
    h.rank = (uint64_t) ch->me;
    if (ch->me == 0 && ch->attr_out.len) { /* the step's attributes travel after rank 0's header */
        memcpy(sl->sbuf + sizeof(h), ch->attr_out.buf, ch->attr_out.len);
        h.attr_len = (uint32_t) ch->attr_out.len;
    }
    ch->attr_out.len = 0;
    memcpy(sl->sbuf, &h, sizeof(h));
    for (i = 0; i < ch->nds; i++)
        if (ch->ds[i].out && !xfer_ch_jroute(&ch->ds[i]) && (sl->mask >> ch->ds[i].bit & 1u)) {
            ch->stats.bytes_sent += ch->ds[i].put.vol * ch->ds[i].esize;
            ch->stats.wire_bytes_sent += ch->ds[i].put.vol * ch->ds[i].esize;
        }
    xfer_ch_joined_table_out(ch, sl);
    sl->state = XFER_SLOT_COMMITTED;
    ch->committed = ch->cur + 1;
    ch->cur_committed = 1;
    st = xfer_ch_progress_all(ch, 0);
    xfer_rt_progress_kick(ch->x); /* the step moves on while the application computes */
out:
    return st;
}

static int step_ready(xfer_channel_t *ch, uint64_t s)
{
    const xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, s);
    return (sl->state == XFER_SLOT_DONE && sl->step == s) || xfer_ch_run_limit(ch) <= s;
}

xfer_status_t xfer_ch_step_ready(xfer_channel_t *ch, void *arg, int *met)
{
    *met = step_ready(ch, *(uint64_t *) arg);
    return XFER_SUCCESS;
}

static int ahead_ok(xfer_channel_t *ch, uint64_t next)
{
    const uint64_t w = (uint64_t) ch->cfg->max_in_flight_steps;
    if (xfer_ch_run_limit(ch) <= next)
        return 1;
    return xfer_ch_slot_of(ch, next)->state == XFER_SLOT_FREE && ch->proto.credit + w >= next;
}

/* The collective of step *arg has completed on this rank (its sends are done). */
static xfer_status_t sent_cond(xfer_channel_t *ch, void *arg, int *met)
{
    const uint64_t s = *(uint64_t *) arg;
    const xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, s);
    *met = xfer_ch_run_limit(ch) <= s || sl->step != s || sl->state == XFER_SLOT_DONE ||
           sl->state == XFER_SLOT_FREE;
    return XFER_SUCCESS;
}

/* The stream's release (transport.h): a receive-only rank's part of step 0's set-up is fixed
 * now, if it was not; the slot is free; the sender gets its credit. */
xfer_status_t xfer_ch_stream_release(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    xfer_rt_slot_t *sl;

    if (!xfer_ch_this_sends(ch)) {
        st = xfer_ch_progress_all(ch, 1);
        if (st != XFER_SUCCESS && !peer_gone(ch))
            goto out; /* (a step that arrived before the peer failed is released: the next
                         wait reports the failure) */
    }
    sl = xfer_ch_slot_of(ch, ch->cur);
    ch->proto.released = ch->cur + 1;
    if (sl->step == ch->cur && sl->state == XFER_SLOT_DONE)
        sl->state = XFER_SLOT_FREE;
    /* credit for the sender: it may run max_in_flight_steps ahead of this. A receive-only
     * rank's step is released whatever becomes of the credit: a sender gone (MPICH ch3 fails
     * the send to a dead peer at once) is reported by the next wait, as above. */
    st = xfer_ch_note_send(ch, ch->ctl_inter, 0, NOTE_ACK, (int64_t) ch->proto.released);
    if (st != XFER_SUCCESS && !xfer_ch_this_sends(ch)) {
        xfer_clear_error();
        st = XFER_SUCCESS;
        goto out;
    }
    if (st != XFER_SUCCESS)
        goto out;
    ch->proto.acks_sent++;
    if (ch->me == 0)
        xfer_rt_ctl_ack(ch->x, ch->index, ch->side, ch->proto.released);
out:
    return st;
}

/* The caller's bound blocks are read until this step's sends are done. */
xfer_status_t xfer_ch_stream_sent(xfer_channel_t *ch)
{
    uint64_t cur = ch->cur;
    if (!ch->path.bound_send)
        return XFER_SUCCESS;
    return xfer_ch_wait_until(ch, sent_cond, &cur,
                              "sending from the bound buffers (xfer_bind_buffer)", 0);
}

/* The step moves on while the application computes. */
xfer_status_t xfer_ch_stream_after_end(xfer_channel_t *ch)
{
    xfer_status_t st = xfer_ch_progress_all(ch, 0);
    if (st != XFER_SUCCESS && peer_gone(ch) && !xfer_ch_this_sends(ch))
        st = XFER_SUCCESS; /* the next wait reports it */
    return st;
}

/* The stream's room (transport.h): step cur's slot is filling, or free within
 * max_in_flight_steps of the receivers' releases. */
xfer_status_t xfer_ch_stream_room(xfer_channel_t *ch, void *arg, int *met)
{
    const uint64_t s = ch->cur;
    const xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, s);
    (void) arg;
    *met = xfer_ch_run_limit(ch) <= s || (sl->state == XFER_SLOT_FILLING && sl->step == s) ||
           ahead_ok(ch, s);
    return XFER_SUCCESS;
}

int xfer_ch_stream_has(xfer_channel_t *ch, uint64_t s)
{
    const xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, s);
    return sl->state == XFER_SLOT_DONE && sl->step == s;
}

int xfer_ch_stream_over(xfer_channel_t *ch, uint64_t s)
{
    return xfer_ch_run_limit(ch) <= s;
}

int xfer_ch_stream_pending(const xfer_channel_t *ch)
{
    int i;
    for (i = 0; i < ch->nslots; i++)
        if (ch->slots[i].state == XFER_SLOT_ACTIVE || ch->slots[i].state == XFER_SLOT_COMMITTED)
            return 1;
    return 0;
}
