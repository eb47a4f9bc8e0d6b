/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's finish (transport.h: xfer_finalize's passes, channel.c) and the free of its
 * state: slots, plans, executors, the path and the layout, the joined datasets' state.
 * Finalize finishes every channel of the context together, in four passes, so that no component
 * waits on one channel while its peer waits on another (docs/runtime.md, "Several channels"):
 * (1) every channel says it ends, without waiting: the sending sides announce their last step
 * (EOS), a receive-only side asks its sender to stop (CLOSE); (2) every step that was announced
 * completes, on all channels at once; (3) both rank 0s of each channel say goodbye (FIN), all
 * channels at once; (4) the last notes and a barrier per channel, in file order. */
#include "../coll/coll.h"
#include "../sched/exec.h"
#include "stream.h"

/* The stream's pass (1): EOS from a sending side, CLOSE from a receive-only one. */
xfer_status_t xfer_ch_stream_end(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    int i;

    if (ch->health.failed || ch->health.finished)
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(xfer_ch_poll_notes(ch), st, out);
    if (ch->health.peer_failed) { /* nobody to finish with */
        st = xfer_ch_peer_failed_error(ch);
        goto out;
    }
    /* An uncommitted step's puts are dropped. */
    for (i = 0; i < ch->nslots; i++)
        if (ch->slots[i].state == XFER_SLOT_FILLING)
            ch->slots[i].state = XFER_SLOT_FREE;
    if (xfer_ch_this_sends(ch))
        XFER_CHECK_GOTO(xfer_ch_end_own_side(ch), st, out);
    else if (ch->me == 0 && xfer_ch_run_limit(ch) == UINT64_MAX && !ch->proto.close_sent) {
        XFER_CHECK_GOTO(xfer_ch_note_send(ch, ch->ctl_inter, 0, NOTE_CLOSE, 0), st, out);
        ch->proto.close_sent = 1;
    }
    ch->proto.released = UINT64_MAX / 2; /* receive what was announced, for nobody */
    for (i = 0; i < ch->nslots; i++)
        if (ch->slots[i].state == XFER_SLOT_DONE)
            ch->slots[i].state = XFER_SLOT_FREE;
out:
    if (st != XFER_SUCCESS)
        ch->health.failed = 1;
    return st;
}

/* The stream's (2): every sending side said its last word and every step announced has
 * completed. */
int xfer_ch_stream_drained(xfer_channel_t *ch)
{
    const uint64_t lim = xfer_ch_run_limit(ch);
    int i, k;
    for (k = 0; k < 2; k++)
        if (ch->sends[k] && ch->proto.eos[k] < 0)
            return 0; /* a sending side has not said its last word (its notes still come) */
    if (ch->started < lim && ch->setup)
        return 0;
    if (!ch->setup && (lim > 0 || ch->su.state != XFER_SU_IDLE))
        return 0; /* step 0's set-up completes (its collectives), even with no step to run */
    for (i = 0; i < ch->nslots; i++)
        if (ch->slots[i].state == XFER_SLOT_ACTIVE)
            return 0;
    return 1;
}

/* (3) Rank 0 tells the other side's rank 0 how many ACKs this side sent it (the total of every
 * rank's, agreed by xfer_rt_fin_agree_channels, which also told every rank whether the channel
 * still says goodbye). */
xfer_status_t xfer_ch_stream_goodbye(xfer_channel_t *ch)
{
    xfer_status_t st;
    if (ch->health.failed || ch->health.finished || ch->me != 0)
        return XFER_SUCCESS;
    st = xfer_ch_note_send(ch, ch->ctl_inter, 0, NOTE_FIN, (int64_t) ch->proto.acks_total);
    if (st != XFER_SUCCESS)
        ch->health.failed = 1;
    return st;
}

/* The other side's goodbye, and every ACK sent before it (they come from several ranks: no
 * order); only rank 0 hears it. */
int xfer_ch_stream_parted(xfer_channel_t *ch)
{
    if (ch->me != 0)
        return 1;
    return ch->proto.fin_seen &&
           (!xfer_ch_is_announcer(ch) || (int64_t) ch->proto.acks_recv >= ch->proto.fin_acks);
}

static xfer_status_t end_cond(xfer_channel_t *ch, void *arg, int *met)
{
    (void) arg;
    *met = ch->proto.end_seen;
    return XFER_SUCCESS;
}

/* (4) The announcer's notes to its own side end with END: drain them all; then no note is in
 * flight and the communicators may go (after xfer_finalize's last agreement, which every rank
 * reaches). Every rank of a channel whose goodbye was agreed comes here, whatever it learned
 * since: the announcer sends END even then, so no rank waits for it in vain. */
xfer_status_t xfer_ch_stream_close(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    int r;
    if (ch->proto.bye_failed || ch->health.finished)
        return XFER_SUCCESS;
    if (xfer_ch_is_announcer(ch)) {
        for (r = 1; r < ch->nlocal; r++)
            XFER_CHECK_GOTO(xfer_ch_note_send(ch, ch->ctl_local, r, NOTE_END, 0), st, out);
    } else if (xfer_ch_this_sends(ch) && !ch->health.failed) {
        XFER_CHECK_GOTO(xfer_ch_wait_until(ch, end_cond, NULL, "finishing", 0), st, out);
    }
    XFER_CHECK_GOTO(xfer_ch_notes_reap(ch, !ch->health.failed), st, out);
    if (!ch->health.failed)
        ch->health.finished = 1;
out:
    if (st != XFER_SUCCESS)
        ch->health.failed = 1;
    return st;
}

void xfer_ch_stream_free(xfer_channel_t *ch, int collective)
{
    int i;
    xfer_ch_setup_release(ch);
    for (i = 0; ch->slots && i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        if (collective && s->plan)
            xfer_plan_free(&s->plan);
        else
            xfer_plan_abandon(&s->plan);
        if (s->ex) {
            xfer_exec_fini(s->ex);
            xfer_free(s->ex);
        }
        if (collective && s->merged != MPI_COMM_NULL)
            MPI_Comm_free(&s->merged);
        if (collective && s->comm != MPI_COMM_NULL) {
            if (ch->disconnect)
                MPI_Comm_disconnect(&s->comm);
            else
                MPI_Comm_free(&s->comm);
        }
        xfer_free(s->sbuf);
        xfer_free(s->rbuf);
    }
    for (i = 0; ch->ds && i < ch->nds; i++) {
        xfer_free(ch->ds[i].g_first);
        xfer_free(ch->ds[i].g_start);
        xfer_free(ch->ds[i].g_count);
        xfer_free(ch->ds[i].g_off);
        xfer_free(ch->ds[i].gs_start);
        xfer_free(ch->ds[i].gs_count);
        xfer_free(ch->ds[i].gs_off);
    }
    xfer_free(ch->lay.stage0);
    xfer_sched_destroy(&ch->path.mxn);
    xfer_free(ch->path.seg[0]);
    xfer_free(ch->path.seg[1]);
    xfer_free(ch->lay.r_bytes);
    xfer_free(ch->lay.r_plan);
    xfer_free(ch->path.node[0]);
    xfer_free(ch->path.node[1]);
    xfer_free(ch->lay.r_pre);
    xfer_ch_joined_free(ch, collective);
    xfer_free(ch->slots);
    ch->slots = NULL;
}
