/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's control notes (stream.h, the step protocol): the announcer's notes to both
 * sides, the steps that will run, and taking the notes in (ANN, EOS, CLOSE, FIN, ACK, CREDIT,
 * END; a NOTE_FAIL is the core's, ch_health.c). */
#include "stream.h"

/* The announcer of this side tells every other rank of both sides. */
xfer_status_t xfer_ch_announce(xfer_channel_t *ch, int type, int64_t value)
{
    xfer_status_t st = XFER_SUCCESS;
    int r;
    for (r = 0; r < ch->nremote && st == XFER_SUCCESS; r++)
        st = xfer_ch_note_send(ch, ch->ctl_inter, r, type, value);
    for (r = 1; r < ch->nlocal && st == XFER_SUCCESS; r++)
        st = xfer_ch_note_send(ch, ch->ctl_local, r, type, value);
    return st;
}

int xfer_ch_is_announcer(const xfer_channel_t *ch)
{
    return ch->me == 0 && ch->sends[ch->side];
}

/* Steps that will run: the smallest end announced by a sending side (UINT64_MAX: open). */
uint64_t xfer_ch_run_limit(const xfer_channel_t *ch)
{
    uint64_t lim = UINT64_MAX;
    int k;
    for (k = 0; k < 2; k++)
        if (ch->sends[k] && ch->proto.eos[k] >= 0 && (uint64_t) ch->proto.eos[k] < lim)
            lim = (uint64_t) ch->proto.eos[k];
    return lim;
}

xfer_status_t xfer_ch_end_own_side(xfer_channel_t *ch)
{
    if (!xfer_ch_is_announcer(ch) || ch->proto.eos[ch->side] >= 0)
        return XFER_SUCCESS;
    ch->proto.eos[ch->side] = (int64_t) ch->proto.ann[ch->side];
    return xfer_ch_announce(ch, NOTE_EOS, ch->proto.eos[ch->side]);
}

xfer_status_t xfer_ch_poll_notes(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    int pass;
    XFER_CHECK_GOTO(xfer_ch_check_peer(ch), st, out);
    for (pass = 0; pass < 2; pass++) {
        MPI_Comm c = pass == 0 ? ch->ctl_inter : ch->ctl_local;
        const int side = pass == 0 ? 1 - ch->side : ch->side;
        for (;;) {
            int flag = 0;
            MPI_Status s;
            note_t n;
            XFER_MPI_GOTO(MPI_Iprobe(MPI_ANY_SOURCE, XFER_NOTE_TAG, c, &flag, &s), st, out);
            if (!flag)
                break;
            XFER_MPI_GOTO(
                MPI_Recv(&n, 2, MPI_INT64_T, s.MPI_SOURCE, XFER_NOTE_TAG, c, MPI_STATUS_IGNORE), st,
                out);
            switch (n.type) {
            case NOTE_ANN:
                if ((uint64_t) n.value + 1 > ch->proto.ann[side])
                    ch->proto.ann[side] = (uint64_t) n.value + 1;
                break;
            case NOTE_EOS:
                ch->proto.eos[side] = n.value;
                break;
            case NOTE_CLOSE:
                ch->proto.close_seen = 1;
                break;
            case NOTE_FIN:
                ch->proto.fin_seen = 1;
                ch->proto.fin_acks = n.value;
                break;
            case NOTE_ACK: /* announcer: remote rank s.MPI_SOURCE released n.value steps */
                ch->proto.acks_recv++;
                if (ch->proto.rel_of && s.MPI_SOURCE < ch->nremote &&
                    (uint64_t) n.value > ch->proto.rel_of[s.MPI_SOURCE]) {
                    uint64_t m = UINT64_MAX;
                    int r;
                    ch->proto.rel_of[s.MPI_SOURCE] = (uint64_t) n.value;
                    for (r = 0; r < ch->nremote; r++)
                        m = XFER_MIN(m, ch->proto.rel_of[r]);
                    if (m > ch->proto.credit) {
                        ch->proto.credit = m;
                        for (r = 1; r < ch->nlocal && st == XFER_SUCCESS; r++)
                            st = xfer_ch_note_send(ch, ch->ctl_local, r, NOTE_CREDIT, (int64_t) m);
                        if (st != XFER_SUCCESS)
                            goto out;
                    }
                }
                break;
            case NOTE_END:
                ch->proto.end_seen = 1;
                break;
            case NOTE_CREDIT:
                if ((uint64_t) n.value > ch->proto.credit)
                    ch->proto.credit = (uint64_t) n.value;
                break;
            case NOTE_FAIL: /* the peer failed, or (-1) the control plane is lost */
                XFER_CHECK_GOTO(xfer_ch_take_fail(ch, n.value, s.MPI_SOURCE), st, out);
                break;
            default:
                return XFER_ERR(XFER_ERR_INTERNAL, "channel %s: unknown control note %lld",
                                ch->cfg->name, (long long) n.type);
            }
        }
    }
    if (ch->proto.close_seen && !ch->committing) /* (not inside a commit its side agreed on) */
        st = xfer_ch_end_own_side(ch);
    if (st == XFER_SUCCESS)
        st = xfer_ch_notes_reap(ch, 0);
out:
    return st;
}
