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
 *   spill      as continue, but the steps committed while no reader is attached are still
 *              kept, up to spill's bounds, for a reader that comes back: written by the file
 *              transport, kept by the stream's sending side and replayed (ch_keep.c).
 * On the file transport continue and spill make the channel detachable (loss.detach): the
 * transport takes the reader's loss, close and return itself, at the commits its side agrees on
 * (file_attach.c), and the switch below is never made; under policy latest the rounds take the
 * loss as on the stream, and nothing attaches again to a file channel (a stream channel's reader
 * does: ch_attach.c).
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
#include "transport.h"

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
    const int file = ch->ops == &xfer_file_ops;
    xfer_channel_flow_t eff; /* the file's keys after XFER_ON_READER_LOSS and XFER_POLICY */
    xfer_reader_loss_t mode;
    xfer_status_t st;

    ch->loss.comm = MPI_COMM_NULL;
    ch->loss.enter = MPI_REQUEST_NULL;
    if ((st = xfer_config_channel_flow(ch->x->cfg, ch->index, &eff)) != XFER_SUCCESS)
        return st;
    /* a full-duplex channel has none (the file refuses the key there; the variable is ignored) */
    mode = eff.on_reader_loss;
    if (ch->cfg->duplex == XFER_DUPLEX_FULL || mode == XFER_LOSS_FAIL)
        return XFER_SUCCESS;
    if (mode == XFER_LOSS_SPILL && eff.policy == XFER_POLICY_LATEST)
        return XFER_ERR(XFER_ERR_CONFIG,
                        "channel %s: on_reader_loss: spill keeps every step for a reader that "
                        "comes back, and policy: latest (XFER_POLICY) drops steps: choose one",
                        ch->cfg->name);
    if (eff.history > 0 && eff.policy == XFER_POLICY_LATEST) /* (XFER_POLICY over the file) */
        return XFER_ERR(XFER_ERR_CONFIG,
                        "channel %s: history: %d keeps the last steps sent, and policy: latest "
                        "(XFER_POLICY) drops steps: choose one",
                        ch->cfg->name, eff.history);
    ch->loss.cont = ch->role == XFER_ROLE_SEND;
    ch->loss.spill = mode == XFER_LOSS_SPILL && ch->role == XFER_ROLE_SEND;
    /* a reader of a file channel may attach late or come back (file_attach.c); under policy
     * latest the rounds take the reader's loss (ch_flow.c), and nothing attaches again to a file
     * channel (a stream channel's reader attaches: ch_attach.c). Both sides decide it alike
     * (xfer_config_channel_flow reads the policy on either) */
    ch->loss.detach = file && eff.policy != XFER_POLICY_LATEST;
    if (ch->loss.cont && !file && xfer_rt_detachable(ch->x, ch->index)) {
        if (MPI_Comm_dup(ch->x->comm, &ch->loss.comm) != MPI_SUCCESS)
            return XFER_ERR(XFER_ERR_MPI, "channel %s: the side's rounds", ch->cfg->name);
        ch->loss.attachable = 1;
    }
    /* the stream keeps steps only for a reader that can attach (ch_keep.c) */
    if (ch->loss.cont && !file && (ch->loss.spill || eff.history > 0)) {
        if (!ch->loss.attachable)
            return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                            "channel %s: %s over the stream keeps steps for a reader that attaches "
                            "late or comes back, and only a channel between separate launches "
                            "(launch: separate) with stride: 1 takes one: "
                            "use transport: file, or on_reader_loss: continue without history",
                            ch->cfg->name, ch->loss.spill ? "on_reader_loss: spill" : "history");
        XFER_CHECK_GOTO(xfer_ch_keep_open(ch, &eff), st, out);
    }
    if (ch->loss.cont && !file) /* (the stream) */
        spare_sigpipe();
    return XFER_SUCCESS;
out:
    return st;
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
    /* without xferd an attachable side has only the MPI's word, or its silence past
     * control.timeout_ms (docs/runtime.md, "Readers that attach late or come back") */
    if (ch->loss.attachable && (st == XFER_ERR_MPI || st == XFER_ERR_TIMEOUT))
        return 1;
    if (st == XFER_ERR_PEER_FAILED)
        return ch->health.peer_failed;
    return st == XFER_ERR_END_OF_STREAM;
}

int xfer_ch_loss_is_reader(const xfer_channel_t *ch, xfer_status_t st)
{
    return ch->loss.cont && !ch->loss.lost && reader_gone(ch, st);
}

int xfer_ch_loss_defer(xfer_channel_t *ch, xfer_status_t st)
{
    xfer_rt_loss_t *l = &ch->loss;
    if (!xfer_ch_loss_is_reader(ch, st))
        return 0;
    if (l->late_st == XFER_SUCCESS) {
        l->late_st = st;
        snprintf(l->late_why, sizeof(l->late_why), "%s", xfer_last_error());
    }
    xfer_clear_error();
    return 1;
}

xfer_status_t xfer_ch_loss_late(const xfer_channel_t *ch)
{
    if (ch->loss.lost || ch->loss.late_st == XFER_SUCCESS)
        return XFER_SUCCESS;
    return xfer_err_raw(ch->loss.late_st, "%s", ch->loss.late_why);
}

/* Without xferd each rank meets the loss alone (Open MPI: its own control.timeout_ms, one after
 * the other): the first one tells the others (@p why), which stop waiting for the reader. */
static void tell(xfer_channel_t *ch, const char *why)
{
    if (!ch->loss.attachable || ch->x->use_ctl || ch->health.peer_failed)
        return;
    snprintf(ch->health.peer_why, sizeof(ch->health.peer_why), "%s rank %d: %.200s",
             xfer_ch_side_name(ch, ch->side), ch->me, why);
    if (xfer_ch_tell_side(ch, ch->peer) != XFER_SUCCESS)
        xfer_clear_error(); /* (the others then meet it themselves) */
}

void xfer_ch_loss_tell(xfer_channel_t *ch)
{
    char why[600];
    snprintf(why, sizeof(why), "%s", xfer_last_error());
    tell(ch, why);
    xfer_clear_error();
    ch->loss.late_st = XFER_SUCCESS; /* (not deferred either: the side's switch takes it) */
}

/* The switch: nothing more goes onto the channel from step `from` of the application on (the
 * step in hand, or the next one when @p past: its commit went through). */
static void lose(xfer_channel_t *ch, int closed, int past)
{
    xfer_rt_loss_t *l = &ch->loss;
    uint64_t from = (ch->flow.on ? ch->flow.app : ch->loss.base + ch->cur) + (past ? 1 : 0);
    char why[600];
    l->lost = 1;
    l->closed = closed;
    l->late_st = XFER_SUCCESS;
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
    if (ch->x->use_ctl)
        snprintf(why, sizeof(why), "xferd: %s",
                 ch->health.peer_why[0] ? ch->health.peer_why : "declared failed");
    else
        snprintf(why, sizeof(why), "%s", xfer_last_error());
    if (!closed)
        tell(ch, why);
    xfer_ch_attach_enter(ch, 0);
    if (ch->me == 0) {
        if (closed)
            fprintf(stderr,
                    "libxfer: channel %s: reader %s closed the channel; on_reader_loss: continue: "
                    "steps from %llu on are not sent\n",
                    ch->cfg->name, xfer_ch_peer_name(ch), (unsigned long long) from);
        else if (ch->keep.on && ch->keep.spill)
            fprintf(stderr,
                    "libxfer: channel %s: reader %s failed (%s); on_reader_loss: spill: steps "
                    "from %llu on are kept, and %llu before them it had not released (spilled "
                    "to %s, spill.max_steps %d) until a reader attaches\n",
                    ch->cfg->name, xfer_ch_peer_name(ch), why, (unsigned long long) from,
                    (unsigned long long) (from - XFER_MIN(from, xfer_ch_keep_first(ch))),
                    ch->keep.dir, ch->cfg->spill.max_steps);
        else
            fprintf(stderr,
                    "libxfer: channel %s: reader %s failed (%s); on_reader_loss: "
                    "continue: steps from %llu on are not sent%s%s\n",
                    ch->cfg->name, xfer_ch_peer_name(ch), why, (unsigned long long) from,
                    l->attachable ? " until a reader attaches" : "",
                    ch->keep.on ? " (history: the last steps kept for it)" : "");
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
        if (ch->flow.on && ch->flow.app == snap->app)
            ch->flow.app++;
        if (!committed)
            ch->stats.steps_unsent++;
        else if (ch->stats.steps_sent == snap->sent) /* (it failed once it went through) */
            ch->stats.steps_sent++;
        /* (kept as it stands: its attributes were taken at the start of its end) */
        st = xfer_ch_keep_ended(ch, committed, committed ? snap->cur : UINT64_MAX, 0);
        ch->stats.steps++;
        xfer_ch_attr_drop(ch);
        xfer_ch_blocks_next(ch);
        if (st != XFER_SUCCESS)
            return st;
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

/* spill's bound, or the disk, refused step stats.steps (@p st, its words): a reader that
 * announced itself attaches all the same, and gets it after the kept steps; else the refusal
 * stands (the step did not end: its end may be called again). */
static xfer_status_t refused(xfer_channel_t *ch, xfer_status_t st)
{
    char why[1024];
    xfer_status_t rt;
    snprintf(why, sizeof(why), "%s", xfer_last_error());
    if ((rt = xfer_ch_attach_round(ch, 1)) != XFER_SUCCESS)
        return rt;
    if (!ch->loss.lost)
        return XFER_SUCCESS; /* (ended on the new stream: xfer_ch_keep_replay) */
    return xfer_err_raw(st, "%s", why);
}

xfer_status_t xfer_ch_loss_end(xfer_channel_t *ch)
{
    xfer_status_t st;
    int on_disk = 0;
    if (ch->health.finished)
        return XFER_ERR(XFER_ERR_STATE, "channel %s was finalized", ch->cfg->name);
    if (owes_word(ch) && (st = xfer_ch_agree_lost(ch)) != XFER_SUCCESS)
        return st;
    /* kept steps (spill, history): the step's record, to its file under spill */
    if ((st = xfer_ch_keep_attrs(ch)) != XFER_SUCCESS)
        return st;
    st = xfer_ch_keep_spill(ch, &on_disk);
    if (st == XFER_ERR_SPILL_FULL || st == XFER_ERR_IO) /* (every rank: the side agreed) */
        return refused(ch, st);
    if (st != XFER_SUCCESS)
        return st;
    if ((st = xfer_ch_keep_ended(ch, 0, UINT64_MAX, on_disk)) != XFER_SUCCESS)
        return st;
    xfer_ch_attr_drop(ch);
    xfer_ch_blocks_next(ch);
    if (ch->flow.on)
        ch->flow.app++;
    ch->stats.steps++;
    ch->stats.steps_unsent++;
    /* the layer's part first (policy latest: the side's round, which every rank makes at each
     * step end, lost or not, whose ranks learn of the loss at different rounds) */
    if (ch->above && ch->above->lost_end && (st = ch->above->lost_end(ch)) != XFER_SUCCESS)
        return st;
    if (ch->loss.attachable)
        return xfer_ch_attach_round(ch, 0); /* a reader that announced itself attaches here */
    return XFER_SUCCESS;
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

xfer_status_t xfer_ch_spill_bounds(const xfer_channel_t *ch, uint64_t spilled, uint64_t held,
                                   uint64_t since, uint64_t step, uint64_t bytes)
{
    const xfer_cfg_spill_t *b = &ch->cfg->spill;
    if (spilled + 1 > (uint64_t) b->max_steps)
        return XFER_ERR(XFER_ERR_SPILL_FULL,
                        "channel %s: on_reader_loss: spill: reader %s is not attached and "
                        "spill.max_steps, %d steps, were spilled since step %llu: step %llu is "
                        "not committed (nothing is lost: end it again once a reader attached, or "
                        "raise spill.max_steps)",
                        ch->cfg->name, xfer_ch_peer_name(ch), b->max_steps,
                        (unsigned long long) since, (unsigned long long) step);
    if (b->max_bytes && held + bytes > b->max_bytes)
        return XFER_ERR(XFER_ERR_SPILL_FULL,
                        "channel %s: on_reader_loss: spill: reader %s is not attached and the "
                        "%llu steps spilled since step %llu hold %llu bytes: step %llu (%llu "
                        "bytes) would pass spill.max_bytes, %llu, and is not committed (nothing "
                        "is lost: end it again once a reader attached, or raise "
                        "spill.max_bytes)",
                        ch->cfg->name, xfer_ch_peer_name(ch), (unsigned long long) spilled,
                        (unsigned long long) since, (unsigned long long) held,
                        (unsigned long long) step, (unsigned long long) bytes,
                        (unsigned long long) b->max_bytes);
    return XFER_SUCCESS;
}
