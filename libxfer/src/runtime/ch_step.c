/* SPDX-License-Identifier: BSD-3-Clause */
/* The channel core's step state machine (transport.h): the public data calls after their
 * checks, whatever the transport. A sending side fills step cur with puts and commits it (at
 * xfer_step_end, or a full-duplex side's first get); a receiving side waits for step cur to
 * arrive, reads it and releases it; xfer_step_begin waits for either in advance, and a sender
 * that began a step never waits at its end. The transport moves the data (ch->ops). */
#include <math.h>
#include <string.h>

#include "channel.h"

static xfer_status_t wait_room(xfer_channel_t *ch, const char *what, double until, int resumable,
                               int *met)
{
    const xfer_ch_wait_t w = {.cond = ch->ops->room,
                              .arg = NULL,
                              .what = what,
                              .until = until,
                              .need = 0, /* a sender's waits need no step of their own */
                              .resumable = resumable,
                              .force = 1};
    return xfer_ch_wait(ch, &w, met);
}

static xfer_status_t wait_arrived(xfer_channel_t *ch, uint64_t *s, double until, int resumable,
                                  int *met)
{
    const xfer_ch_wait_t w = {.cond = ch->ops->arrived,
                              .arg = s,
                              .what = "waiting for a step",
                              .until = until,
                              .need = *s,
                              .resumable = resumable,
                              .force = 1};
    return xfer_ch_wait(ch, &w, met);
}

xfer_status_t xfer_ch_wait_step(xfer_channel_t *ch, uint64_t s)
{
    int met;
    return wait_arrived(ch, &s, HUGE_VAL, 1, &met);
}

int xfer_ch_side_agrees(const xfer_channel_t *ch)
{
    if (!xfer_ch_this_sends(ch) || (ch->ops->flags & XFER_TP_COLLECTIVE_COMMIT))
        return 0;
    return xfer_ch_blocks_gather_due(ch) || (ch->ops->side_commit && ch->ops->side_commit(ch));
}

int xfer_ch_over_here(xfer_channel_t *ch, uint64_t s)
{
    return !xfer_ch_side_agrees(ch) && ch->ops->over(ch, s);
}

/* What a rank brings to its side's agreement before a commit its ranks make together, or-ed
 * over the side: the stream ended (the announcer's reader closed it; a full-duplex peer's end),
 * the reader failed (known under on_reader_loss: continue, ch_loss.c). */
enum { AGREE_ENDED = 1, AGREE_LOST = 2 };

/* Post this rank's word @p mine and wait for the side's, *@p all. On the blocks' communicator
 * (ch_blocks.c), whose collectives every rank makes in its commits' order: every rank of the side
 * posts it, one whose reader is gone too (xfer_ch_agree_lost), so none waits for the reader's
 * failure here, which would leave the others' exchange behind. */
static xfer_status_t agree(xfer_channel_t *ch, int mine, int *all)
{
    xfer_rt_gather_t *g = &ch->gat;
    const xfer_ch_wait_t w = {.cond = xfer_ch_req_done,
                              .arg = &g->req,
                              .what = "agreeing on the end of the stream with this side's ranks",
                              .until = HUGE_VAL,
                              .need = UINT64_MAX,
                              .resumable = 0,
                              .force = 0,
                              .aside = ch->loss.lost,
                              .side = 1};
    xfer_status_t st = XFER_SUCCESS;
    int met;
    g->ended = mine;
    XFER_MPI_GOTO(MPI_Iallreduce(MPI_IN_PLACE, &g->ended, 1, MPI_INT, MPI_BOR, g->comm, &g->req),
                  st, out);
    XFER_CHECK_GOTO(xfer_ch_wait(ch, &w, &met), st, out);
    *all = g->ended;
out:
    return st;
}

/* The side's verdict on the end, before a commit its ranks make together: a rank that knows the
 * stream ended before step cur ends it for every rank, at this step, and so does one that knows
 * the reader failed (under on_reader_loss: continue every rank then switches here, none alone
 * in the side's exchanges that follow). Else every rank commits the step, whatever it learns
 * meanwhile (ch->committing: a step past the end never runs; the side's exchanges of the commit
 * complete on every rank). */
static xfer_status_t agree_end(xfer_channel_t *ch)
{
    xfer_status_t st;
    int all = 0;
    ch->committing = 1; /* (from here on the announcer keeps its side's end for after it) */
    XFER_CHECK_GOTO(agree(ch,
                          (ch->health.ended || ch->ops->over(ch, ch->cur) ? AGREE_ENDED : 0) |
                              (xfer_ch_loss_known(ch) ? AGREE_LOST : 0),
                          &all),
                    st, out);
    if (all & AGREE_LOST) { /* (only under continue: a rank that knew it said so) */
        ch->committing = 0;
        ch->loss.agreed = 1;
        XFER_CHECK_GOTO(xfer_ch_take_notice(ch), st, out);
        return xfer_ch_peer_failed_error(ch); /* taken by the sending call (ch_loss.c) */
    }
    if (all & AGREE_ENDED) {
        ch->committing = 0;
        return ch->ops->ended(ch, ch->cur);
    }
out:
    return st;
}

xfer_status_t xfer_ch_agree_lost(xfer_channel_t *ch)
{
    xfer_status_t st;
    int all = 0;
    XFER_CHECK_GOTO(agree(ch, AGREE_LOST, &all), st, out);
    ch->loss.agreed = 1;
out:
    return st;
}

/* Commit the step being filled, once: a sender that did not begin it waits for room first
 * where its transport waits at the commit (XFER_TP_ROOM_AT_COMMIT); the side agrees on the end
 * first where its ranks commit together (xfer_ch_side_agrees); its blocks are checked
 * (ch_blocks.c) before the transport commits. */
xfer_status_t xfer_ch_commit_step(xfer_channel_t *ch)
{
    xfer_status_t st;
    int met;
    if (ch->cur_committed)
        return XFER_SUCCESS;
    ch->x->began = 1; /* (runtime.h) */
    if (xfer_ch_side_agrees(ch)) {
        st = agree_end(ch);
        if (st == XFER_SUCCESS) {
            st = xfer_ch_blocks_commit(ch);
            if (st == XFER_SUCCESS)
                st = ch->ops->commit(ch);
            /* The side agreed to commit the step, and its other ranks may have: a reader's loss
             * this rank meets now counts the step committed here too (sent to a reader that was
             * gone; kept for the next one under spill), and the loss begins at the next step on
             * every rank (ch_loss.c). */
            if (st != XFER_SUCCESS && xfer_ch_loss_is_reader(ch, st))
                ch->cur_committed = 1;
        }
        ch->committing = 0;
        return st;
    }
    if ((ch->ops->flags & XFER_TP_ROOM_AT_COMMIT) && !ch->begun) {
        st = wait_room(ch, "waiting for the receiver to catch up (max_in_flight_steps)", HUGE_VAL,
                       0, &met);
        /* a reader gone under on_reader_loss: continue: the commit, which the side agrees on,
         * takes it (ch_loss.c) */
        if (st != XFER_SUCCESS && !(st == XFER_ERR_PEER_FAILED && xfer_ch_loss_known(ch)))
            goto out;
    }
    /* the blocks of the step, checked before anything is sent (refused: not committed) */
    XFER_CHECK_GOTO(xfer_ch_blocks_commit(ch), st, out);
    return ch->ops->commit(ch);
out:
    return st;
}

xfer_status_t xfer_ch_put(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block)
{
    xfer_rt_dset_t *ds;
    xfer_status_t st;
    uint64_t v;
    int of, pushed = 0;

    XFER_CHECK_GOTO(xfer_ch_put_check(ch, d, block, &ds, &v, &of), st, out);
    if (ch->health.ended || xfer_ch_over_here(ch, ch->cur))
        return ch->ops->ended(ch, ch->cur);
    if (!ds->dyn) { /* the step's blocks of the rank: one more (the transport places it) */
        XFER_CHECK_GOTO(xfer_ch_block_push(ds, d, v, of), st, out);
        pushed = 1;
    }
    if ((st = ch->ops->stage(ch, ds, block, v)) != XFER_SUCCESS && pushed)
        xfer_ch_block_pop(ds, v);
out:
    return st;
}

xfer_status_t xfer_ch_begin_args(const xfer_channel_t *ch, int timeout_ms,
                                 const xfer_step_status_t *status)
{
    if (!ch || !status)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or status is NULL");
    if (timeout_ms < -1)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: timeout %d ms (0: poll, -1: wait as long as the peer lives)",
                        ch->cfg->name, timeout_ms);
    return XFER_SUCCESS;
}

/* The start of xfer_step_begin, whatever the transport: the arguments, a failed channel, an
 * ended one (END_OF_STREAM), a step already begun (OK). 1: answered (*status, *st); 0: go on
 * waiting until *until. */
static int begin_start(xfer_channel_t *ch, int timeout_ms, xfer_step_status_t *status,
                       double *until, xfer_status_t *st)
{
    if ((*st = xfer_ch_begin_args(ch, timeout_ms, status)) != XFER_SUCCESS)
        return 1;
    *status = XFER_STEP_NOT_READY;
    if ((*st = xfer_ch_check_usable(ch)) != XFER_SUCCESS)
        return 1;
    if (ch->health.ended || ch->begun) {
        *status = ch->health.ended ? XFER_STEP_END_OF_STREAM : XFER_STEP_OK;
        return 1;
    }
    *until = timeout_ms < 0 ? HUGE_VAL : MPI_Wtime() + 1e-3 * timeout_ms;
    return 0;
}

xfer_status_t xfer_ch_step_begin(xfer_channel_t *ch, int timeout_ms, xfer_step_status_t *status)
{
    xfer_status_t st;
    double until;
    uint64_t s;
    int met = 0;

    if (begin_start(ch, timeout_ms, status, &until, &st))
        return st;
    s = ch->cur;
    if (xfer_ch_this_sends(ch)) /* full duplex too: the data is awaited by xfer_get */
        XFER_CHECK_GOTO(wait_room(ch, "waiting for a step", until, 1, &met), st, out);
    else
        XFER_CHECK_GOTO(wait_arrived(ch, &s, until, 1, &met), st, out);
    if (!met)
        return XFER_SUCCESS;
    if (xfer_ch_over_here(ch, s)) {
        ch->health.ended = 1;
        *status = XFER_STEP_END_OF_STREAM;
        return XFER_SUCCESS;
    }
    ch->begun = 1;
    *status = XFER_STEP_OK;
out:
    return st;
}

xfer_status_t xfer_ch_step_end(xfer_channel_t *ch)
{
    xfer_status_t st;

    if (!ch)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel is NULL");
    XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out);
    XFER_CHECK_GOTO(xfer_ch_keep_attrs(ch), st, out); /* (steps kept for a reader: ch_keep.c) */
    XFER_CHECK_GOTO(xfer_ch_end_step(ch, ch->loss.base + ch->cur), st, out);
    st = xfer_ch_keep_ended(ch, 1, ch->cur - 1, 0);
    ch->stats.steps++;
out:
    return st;
}

xfer_status_t xfer_ch_end_step(xfer_channel_t *ch, uint64_t label)
{
    xfer_status_t st;
    int met;

    if (ch->health.ended)
        return ch->ops->ended(ch, ch->cur);
    if (xfer_ch_this_sends(ch)) {
        if ((ch->above || ch->loss.attaches) && !ch->cur_committed) /* the sender's number */
            XFER_CHECK_GOTO(xfer_ch_attr_label(ch, label), st, out);
        XFER_CHECK_GOTO(xfer_ch_commit_step(ch), st, out);
        if (ch->loss.unsent) /* no reader attached, nothing kept (file_attach.c) */
            ch->stats.steps_unsent++;
        else
            ch->stats.steps_sent++;
        ch->loss.unsent = 0;
    }
    if (xfer_ch_this_recvs(ch)) {
        ch->x->began = 1; /* (a release of a step not read: runtime.h) */
        XFER_CHECK_GOTO(ch->ops->release(ch), st, out);
        ch->stats.steps_received++;
    }
    if (ch->ops->sent)
        XFER_CHECK_GOTO(ch->ops->sent(ch), st, out);
    ch->cur++;
    ch->cur_committed = 0;
    xfer_ch_blocks_next(ch);
    /* Back-pressure: on return the peer has released every step up to cur - W, and the next
     * step has room for its puts. A caller of xfer_step_begin waits there instead, with its own
     * timeout; a transport that waits at the commit, there. */
    if (ch->begun)
        ch->begun = 0;
    else if (xfer_ch_this_sends(ch) && !(ch->ops->flags & XFER_TP_ROOM_AT_COMMIT))
        XFER_CHECK_GOTO(wait_room(ch, "waiting for the receiver to catch up (max_in_flight_steps)",
                                  HUGE_VAL, 0, &met),
                        st, out);
    if (ch->ops->after_end)
        XFER_CHECK_GOTO(ch->ops->after_end(ch), st, out);
out:
    return st;
}

/* Step cur on the receiving side, arrived: committed first when this side also sends (full
 * duplex: its first get ends its puts). */
static xfer_status_t arrived_step(xfer_channel_t *ch, uint64_t *s)
{
    xfer_status_t st;
    int met;
    if (ch->health.ended)
        return ch->ops->ended(ch, ch->cur);
    if (xfer_ch_this_sends(ch))
        XFER_CHECK_GOTO(xfer_ch_commit_step(ch), st, out);
    *s = ch->cur;
    XFER_CHECK_GOTO(wait_arrived(ch, s, HUGE_VAL, 1, &met), st, out);
    if (!ch->ops->has(ch, *s))
        return ch->ops->ended(ch, *s);
    if (ch->ops->shape)
        ch->ops->shape(ch, *s);
out:
    return st;
}

xfer_status_t xfer_ch_get(xfer_channel_t *ch, const char *dataset, const uint64_t start[],
                          const uint64_t count[], void *buf, size_t bufsize,
                          xfer_dataset_desc_t *out)
{
    xfer_rt_dset_t *ds = ch && dataset ? xfer_ch_find_dset(ch, dataset) : NULL;
    xfer_status_t st;
    uint64_t s, bytes;

    /* A joined or variable dataset's selection and shape are the step's: checked once it
     * arrived. */
    const int dyn = ds && ds->dyn && !ds->out;
    if (dyn) {
        XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out_err);
        XFER_CHECK_GOTO(arrived_step(ch, &s), st, out_err);
    }
    XFER_CHECK_GOTO(xfer_ch_get_check(ch, dataset, &start, &count, buf, bufsize, &ds, &bytes), st,
                    out_err);
    if (!dyn)
        XFER_CHECK_GOTO(arrived_step(ch, &s), st, out_err);
    XFER_CHECK_GOTO(ch->ops->fetch(ch, ds, start, count, buf, bytes, s), st, out_err);
    xfer_ch_get_desc(out, ds, start, count, xfer_ch_step_label(ch, s));
out_err:
    return st;
}

xfer_status_t xfer_ch_attrs(xfer_channel_t *ch, const char **p, size_t *len)
{
    xfer_status_t st;
    uint64_t s;

    XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out);
    if (!xfer_ch_this_recvs(ch))
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel %s: %s only sends on this channel",
                        ch->cfg->name, xfer_ch_side_name(ch, ch->side));
    XFER_CHECK_GOTO(arrived_step(ch, &s), st, out);
    return ch->ops->attrs(ch, s, p, len);
out:
    return st;
}

xfer_status_t xfer_ch_channel_progress(xfer_channel_t *ch, int *busy)
{
    xfer_status_t st;
    int b = 0;
    if (!ch)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel is NULL");
    XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out);
    xfer_ch_progress_others(ch);
    XFER_CHECK_GOTO(ch->ops->poll(ch, 0, &b), st, out);
    if (busy)
        *busy = ch->ops->pending(ch) || ch->flow.n > 0;
out:
    return st;
}

/* A received dataset of the current step, arrived (joined and variable ones: with its shape). */
static xfer_status_t received_of(xfer_channel_t *ch, const char *dataset, xfer_rt_dset_t **out,
                                 uint64_t *s)
{
    xfer_rt_dset_t *ds;
    xfer_status_t st;
    if (!ch || !dataset)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or dataset name is NULL");
    XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out);
    if (!(ds = xfer_ch_find_dset(ch, dataset)))
        return xfer_ch_no_such_dataset(ch, dataset);
    if (ds->out)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s is sent by %s (this component), not received",
                        ch->cfg->name, dataset, xfer_ch_side_name(ch, ch->side));
    XFER_CHECK_GOTO(xfer_ch_own_selection(ch, ds), st, out);
    XFER_CHECK_GOTO(arrived_step(ch, s), st, out);
    *out = ds;
out:
    return st;
}

xfer_status_t xfer_ch_get_shape(xfer_channel_t *ch, const char *dataset, xfer_dataset_desc_t *out)
{
    xfer_rt_dset_t *ds;
    xfer_status_t st;
    uint64_t s;
    if (!out)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "xfer_get_shape: the descriptor is NULL");
    XFER_CHECK_GOTO(received_of(ch, dataset, &ds, &s), st, out);
    xfer_ch_get_desc(out, ds, ds->sel_start, ds->sel_count, xfer_ch_step_label(ch, s));
out:
    return st;
}

xfer_status_t xfer_ch_get_rows(xfer_channel_t *ch, const char *dataset, uint64_t *rows, int n,
                               int *nsenders)
{
    xfer_rt_dset_t *ds;
    xfer_status_t st;
    uint64_t s;
    XFER_CHECK_GOTO(received_of(ch, dataset, &ds, &s), st, out);
    if (!ds->cfg->joined)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s is not joined (dims: [joined, ...]): its senders' "
                        "blocks are fixed by step 0",
                        ch->cfg->name, dataset);
    if (n < 0 || (n > 0 && !rows))
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel %s: dataset %s: %d rows asked into %s",
                        ch->cfg->name, dataset, n, rows ? "a buffer" : "NULL");
    if (n > 0)
        memcpy(rows, ds->srows, (size_t) (n < ch->nremote ? n : ch->nremote) * sizeof(uint64_t));
    if (nsenders)
        *nsenders = ch->nremote;
out:
    return st;
}

xfer_status_t xfer_ch_send_recorded(xfer_channel_t *ch, const char *what, int nput,
                                    xfer_ch_rec_put_fn put, void *arg, const char *attrs,
                                    size_t attr_len, uint64_t label)
{
    xfer_status_t st;
    int i;

    if (ch->health.ended || xfer_ch_over_here(ch, ch->cur))
        return ch->ops->ended(ch, ch->cur);
    XFER_CHECK_GOTO(xfer_ch_wait_until(ch, ch->ops->room, NULL, what, 0), st, out);
    ch->begun = 1; /* (its end then never waits: the room is there) */
    for (i = 0; i < nput; i++) {
        xfer_dataset_desc_t d;
        const void *block;
        memset(&d, 0, sizeof(d));
        put(ch, arg, i, &d, &block);
        XFER_CHECK_GOTO(xfer_ch_put(ch, &d, block), st, out);
    }
    XFER_CHECK_GOTO(xfer_ch_attr_restore(ch, attrs, attr_len), st, out);
    XFER_CHECK_GOTO(xfer_ch_end_step(ch, label), st, out);
    return XFER_SUCCESS;
out:
    /* not sent (the reader gone, say): what it put and set is forgotten, as for a step the
     * application ends whose commit fails, so that the next step starts empty */
    xfer_ch_attr_drop(ch);
    xfer_ch_blocks_next(ch);
    return st;
}
