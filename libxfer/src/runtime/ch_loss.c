/* SPDX-License-Identifier: BSD-3-Clause */
/* Readers that fail or leave (docs/runtime.md, "Readers that fail or leave"): a half-duplex
 * channel's `on_reader_loss`, acted on by its sending side.
 *   fail       the default: the sender's calls fail with XFER_ERR_PEER_FAILED naming the reader
 *              (ch_health.c), and a reader that closed early ends the sender's stream
 *              (XFER_STEP_END_OF_STREAM, XFER_ERR_END_OF_STREAM).
 *   continue   once the reader is gone (xferd declared it failed, an MPI failure xferd explains,
 *              or it closed the channel) the sender's calls succeed and send nothing: puts are
 *              checked and dropped, steps begin and end and are counted (steps_unsent), and
 *              xfer_finalize finishes the channel without waiting for the reader. Rank 0 says
 *              so in one line on stderr.
 * Where it takes effect: the stream, at the call on which each rank learns it (nothing more is
 * posted to the peer), but where a step's commit is an exchange among the side's ranks (ch_step.c,
 * xfer_ch_side_agrees) at such a commit, which they agree on first: a reader's close, and its
 * failure, which each rank learns on its own (rank 0 from xferd, the others from rank 0), so
 * that no rank leaves the others' exchange behind. A rank that switched alone before (at a put,
 * a begin, a commit's end) still says so at the side's next such commit, where the others
 * switch with it; the side's exchanges of a commit it agreed on complete on every rank. The file
 * transport, whose commit is collective over the side: at the commit every rank agrees on
 * (file.c: the commit's agreement carries it), so no rank is left alone in a collective write. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "channel.h"

/* The stream under continue: the MPI library may write to a dead reader's connection before
 * xferd declares it failed (Open MPI's TCP transport between separate jobs does, writev to a
 * closed socket), and SIGPIPE's default action would end the very sender the loss is to spare.
 * Ignored then, process-wide, unless the application chose its own disposition; the write fails
 * instead, and so does the step's collective, which the loss takes (docs/runtime.md). */
static void spare_sigpipe(void)
{
    struct sigaction sa;
    if (sigaction(SIGPIPE, NULL, &sa) != 0 || (sa.sa_flags & SA_SIGINFO) ||
        sa.sa_handler != SIG_DFL)
        return;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    (void) sigaction(SIGPIPE, &sa, NULL); /* (a failure leaves the default: nothing worse) */
}

xfer_status_t xfer_ch_loss_open(xfer_channel_t *ch)
{
    const char *e = xfer_env_str("XFER_ON_READER_LOSS");
    int cont = ch->cfg->on_reader_loss == XFER_LOSS_CONTINUE;
    if (e) {
        if (strcmp(e, "fail") == 0)
            cont = 0;
        else if (strcmp(e, "continue") == 0)
            cont = 1;
        else
            return XFER_ERR(XFER_ERR_CONFIG, "XFER_ON_READER_LOSS=%s: fail or continue", e);
    }
    /* a full-duplex side reads too (the file refuses the key there; the variable is ignored) */
    ch->loss.cont = cont && ch->role == XFER_ROLE_SEND;
    if (ch->loss.cont && ch->ctl_inter != MPI_COMM_NULL) /* (the stream) */
        spare_sigpipe();
    return XFER_SUCCESS;
}

void xfer_ch_loss_snap(const xfer_channel_t *ch, xfer_ch_loss_snap_t *snap)
{
    memset(snap, 0, sizeof(*snap));
    if (!ch)
        return;
    snap->cur = ch->cur;
    snap->steps = ch->stats.steps;
    snap->sent = ch->stats.steps_sent;
    snap->app = ch->flow.app;
}

int xfer_ch_loss_known(xfer_channel_t *ch)
{
    return ch->loss.cont && ch->health.peer_failed;
}

/* Does @p st say that the reader is gone? Its failure as xferd declared it (an MPI failure was
 * explained into it), or its close (the only end of stream a half-duplex sender meets). */
static int reader_gone(const xfer_channel_t *ch, xfer_status_t st)
{
    if (st == XFER_ERR_PEER_FAILED)
        return ch->health.peer_failed;
    return st == XFER_ERR_END_OF_STREAM;
}

/* The switch: nothing more goes onto the channel from step `from` of the application on (the
 * step in hand, or the next one when @p past: its commit went through). */
static void lose(xfer_channel_t *ch, int closed, int past)
{
    xfer_rt_loss_t *l = &ch->loss;
    uint64_t from = (ch->flow.on ? ch->flow.app : ch->cur) + (past ? 1 : 0);
    l->lost = 1;
    l->closed = closed;
    ch->health.ended = 0; /* (the sender's calls go on; the transport is not touched again) */
    ch->cur_committed = 0;
    /* A failed reader: the channel sits out xfer_finalize's passes and its frees are local (the
     * peer is gone). One that closed finishes as usual: it waits in its own xfer_finalize. */
    if (!closed)
        ch->health.failed = 1;
    ch->begun = 0;
    if (ch->above)
        ch->above->lost(ch, &from);
    l->from = from;
    if (ch->me == 0) {
        if (closed)
            fprintf(stderr,
                    "libxfer: channel %s: reader %s closed the channel; on_reader_loss: continue: "
                    "steps from %llu on are not sent\n",
                    ch->cfg->name, xfer_ch_peer_name(ch), (unsigned long long) from);
        else
            fprintf(stderr,
                    "libxfer: channel %s: reader %s failed (xferd: %s); on_reader_loss: "
                    "continue: steps from %llu on are not sent\n",
                    ch->cfg->name, xfer_ch_peer_name(ch),
                    ch->health.peer_why[0] ? ch->health.peer_why : "declared failed",
                    (unsigned long long) from);
        fflush(stderr);
    }
    xfer_clear_error();
}

int xfer_ch_loss_take(xfer_channel_t *ch, xfer_status_t st)
{
    if (!ch || !ch->loss.cont)
        return 0;
    if (ch->loss.lost)
        return 1;
    if (st == XFER_ERR_MPI && ch->x->use_ctl) { /* the peer going away, most often */
        int wait_ms;
        (void) xfer_ch_await_verdict(ch, &wait_ms);
        if (ch->health.peer_failed)
            st = XFER_ERR_PEER_FAILED;
    }
    if (!reader_gone(ch, st))
        return 0;
    lose(ch, st == XFER_ERR_END_OF_STREAM, 0);
    return 1;
}

xfer_status_t xfer_ch_loss_after(xfer_channel_t *ch, xfer_status_t st, int at,
                                 const xfer_ch_loss_snap_t *snap, xfer_step_status_t *status)
{
    int committed;
    if (!ch || !ch->loss.cont || ch->loss.lost)
        return st;
    if (st == XFER_SUCCESS) {
        /* the stream: a reader that closed ends the sender's steps at its begin */
        if (at == XFER_LOSS_AT_BEGIN && status && *status == XFER_STEP_END_OF_STREAM) {
            lose(ch, 1, 0);
            *status = XFER_STEP_OK;
        }
        return st;
    }
    if (!reader_gone(ch, st))
        return st;
    if (at == XFER_LOSS_AT_BEGIN && st == XFER_ERR_PEER_FAILED &&
        (ch->ops->flags & XFER_TP_COLLECTIVE_COMMIT)) {
        /* not here: the step's commit, which every rank of the side agrees on, takes it */
        ch->begun = 1;
        if (status)
            *status = XFER_STEP_OK;
        xfer_clear_error();
        return XFER_SUCCESS;
    }
    /* (whether the step's commit went through before the failure) */
    committed = ch->cur != snap->cur || ch->cur_committed;
    lose(ch, st == XFER_ERR_END_OF_STREAM,
         at == XFER_LOSS_AT_END && committed &&
             (ch->flow.on ? ch->flow.app == snap->app : ch->cur == snap->cur));
    if (at == XFER_LOSS_AT_END && ch->stats.steps == snap->steps) {
        /* the step ended for the application; sent if its commit went through, else unsent */
        ch->stats.steps++;
        if (ch->flow.on && ch->flow.app == snap->app)
            ch->flow.app++;
        if (!committed)
            ch->stats.steps_unsent++;
        else if (ch->stats.steps_sent == snap->sent) /* (it failed once it went through) */
            ch->stats.steps_sent++;
        xfer_ch_attr_drop(ch);
        xfer_ch_blocks_next(ch);
    }
    if (status)
        *status = XFER_STEP_OK;
    return XFER_SUCCESS;
}

xfer_status_t xfer_ch_loss_put(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block)
{
    xfer_rt_dset_t *ds;
    uint64_t v;
    int of;
    if (ch->health.finished)
        return XFER_ERR(XFER_ERR_STATE, "channel %s was finalized", ch->cfg->name);
    return xfer_ch_put_check(ch, d, block, &ds, &v, &of); /* checked; nothing is kept */
}

xfer_status_t xfer_ch_loss_begin(xfer_channel_t *ch, int timeout_ms, xfer_step_status_t *status)
{
    const xfer_status_t st = xfer_ch_begin_args(ch, timeout_ms, status);
    if (st != XFER_SUCCESS)
        return st;
    if (ch->health.finished)
        return XFER_ERR(XFER_ERR_STATE, "channel %s was finalized", ch->cfg->name);
    *status = XFER_STEP_OK;
    return XFER_SUCCESS;
}

/* Does this step's end of a rank whose reader is gone owe its side the word (xfer_ch_agree_lost)?
 * A reader that failed, not agreed on yet, at a step whose commit the side makes together (one a
 * stride sends; policy latest: rank 0's round says it to every rank at once). */
static int owes_word(const xfer_channel_t *ch)
{
    if (ch->loss.closed || ch->loss.agreed || !xfer_ch_side_agrees(ch))
        return 0;
    return !ch->flow.on || (!ch->flow.latest && !xfer_ch_flow_skips(ch));
}

xfer_status_t xfer_ch_loss_end(xfer_channel_t *ch)
{
    xfer_status_t st;
    if (ch->health.finished)
        return XFER_ERR(XFER_ERR_STATE, "channel %s was finalized", ch->cfg->name);
    if (owes_word(ch) && (st = xfer_ch_agree_lost(ch)) != XFER_SUCCESS)
        return st;
    xfer_ch_attr_drop(ch);
    xfer_ch_blocks_next(ch);
    if (ch->flow.on)
        ch->flow.app++;
    ch->stats.steps++;
    ch->stats.steps_unsent++;
    return ch->above && ch->above->lost_end ? ch->above->lost_end(ch) : XFER_SUCCESS;
}

xfer_status_t xfer_ch_loss_poll(xfer_channel_t *ch, int *busy)
{
    (void) ch;
    if (busy)
        *busy = 0;
    return XFER_SUCCESS;
}

xfer_status_t xfer_ch_loss_finish(xfer_channel_t *ch, xfer_status_t st)
{
    if (st == XFER_SUCCESS || !xfer_ch_loss_take(ch, st))
        return st;
    return XFER_SUCCESS;
}
