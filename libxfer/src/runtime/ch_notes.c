/* SPDX-License-Identifier: BSD-3-Clause */
/* Control notes of the step protocol (runtime.h): sending, reaping, announcing, taking
 * them in, and the peer-failure notice from the leader. */
#include <stdlib.h>
#include <string.h>

#include "channel.h"

/* An outgoing note and its request: each has its own storage so the buffer never moves. */
typedef struct note_out {
    MPI_Request req;
    note_t n;
} note_out_t;

xfer_status_t xfer_ch_note_send(xfer_channel_t *ch, MPI_Comm c, int dest, int type, int64_t value)
{
    xfer_status_t st = XFER_SUCCESS;
    note_out_t *o;

    if (c == ch->ctl_inter && ch->health.peer_failed)
        return XFER_SUCCESS; /* nobody there to take it */
    if (ch->proto.nout == ch->proto.cap_out) {
        int cap = ch->proto.cap_out ? 2 * ch->proto.cap_out : 16;
        void **grown = xfer_realloc_array(ch->proto.out, (size_t) cap, sizeof(*grown));
        if (!grown)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "control notes");
        ch->proto.out = grown;
        ch->proto.cap_out = cap;
    }
    o = xfer_malloc(sizeof(*o));
    if (!o)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "control note");
    o->n.type = type;
    o->n.value = value;
    XFER_MPI_GOTO(MPI_Isend(&o->n, 2, MPI_INT64_T, dest, XFER_NOTE_TAG, c, &o->req), st, fail);
    ch->proto.out[ch->proto.nout++] = o;
    return XFER_SUCCESS;
fail:
    xfer_free(o);
    return st;
}

/* Complete the notes that went out (they are small: the MPI library sends them eagerly). */
xfer_status_t xfer_ch_notes_reap(xfer_channel_t *ch, int wait)
{
    xfer_status_t st = XFER_SUCCESS;
    int i, k = 0;
    for (i = 0; i < ch->proto.nout; i++) {
        note_out_t *o = ch->proto.out[i];
        int flag = 0;
        if (st == XFER_SUCCESS) {
            int rc = wait ? MPI_Wait(&o->req, MPI_STATUS_IGNORE)
                          : MPI_Test(&o->req, &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                st = xfer_err_mpi(rc, __func__, "MPI_Test(control note)");
        }
        if (wait || flag)
            xfer_free(o);
        else
            ch->proto.out[k++] = o;
    }
    ch->proto.nout = k;
    for (i = 0; st == XFER_SUCCESS && i < ch->proto.nwhy; i++) {
        int flag = 0;
        int rc = wait ? MPI_Wait(&ch->proto.why_req[i], MPI_STATUS_IGNORE)
                      : MPI_Test(&ch->proto.why_req[i], &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            st = xfer_err_mpi(rc, __func__, "MPI_Test(failure words)");
    }
    return st;
}

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

/* The leader (rank 0, which holds the connection to xferd) learns that the peer failed and
 * tells the other ranks of its side; their pending and later calls fail with PEER_FAILED. */
xfer_status_t xfer_ch_check_peer(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    int r, value;
    if (ch->health.peer_failed || ch->health.ctl_lost || !ch->x->ctl || ch->me != 0)
        return XFER_SUCCESS;
    if (xfer_rt_ctl_failed(ch->x, ch->peer, ch->health.peer_why, sizeof(ch->health.peer_why))) {
        ch->health.peer_failed = 1;
        value = ch->peer;
    } else if (xfer_rt_ctl_lost(ch->x, ch->health.ctl_why, sizeof(ch->health.ctl_why))) {
        ch->health.ctl_lost = 1;
        value = -1;
    } else {
        return XFER_SUCCESS;
    }
    /* the other ranks get the notice and its words (they report them as their own) */
    ch->proto.why_req = xfer_calloc((size_t) ch->nlocal, sizeof(MPI_Request));
    if (!ch->proto.why_req && ch->nlocal > 1)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: failure notice", ch->cfg->name);
    for (r = 1; r < ch->nlocal && st == XFER_SUCCESS; r++) {
        const char *why = value >= 0 ? ch->health.peer_why : ch->health.ctl_why;
        st = xfer_ch_note_send(ch, ch->ctl_local, r, NOTE_FAIL, value);
        if (st == XFER_SUCCESS &&
            MPI_Isend(why, (int) strlen(why) + 1, MPI_CHAR, r, XFER_WHY_TAG, ch->ctl_local,
                      &ch->proto.why_req[ch->proto.nwhy]) == MPI_SUCCESS)
            ch->proto.nwhy++;
    }
    return st;
}

xfer_status_t xfer_ch_take_fail(xfer_channel_t *ch, int64_t value, int src)
{
    char *why = value >= 0 ? ch->health.peer_why : ch->health.ctl_why;
    xfer_status_t st = XFER_SUCCESS;
    if (value >= 0)
        ch->health.peer_failed = 1;
    else
        ch->health.ctl_lost = 1;
    /* its words follow at once (rank 0 sent them with the note) */
    XFER_MPI_GOTO(MPI_Recv(why, (int) sizeof(ch->health.peer_why), MPI_CHAR, src, XFER_WHY_TAG,
                           ch->ctl_local, MPI_STATUS_IGNORE),
                  st, out);
    why[sizeof(ch->health.peer_why) - 1] = '\0';
out:
    return st;
}

/* Without its control plane a wait for data could last for ever: the peer may compute or be
 * gone, and nothing tells which any more. */
xfer_status_t xfer_ch_ctl_lost_error(const xfer_channel_t *ch)
{
    return xfer_err_raw(XFER_ERR_TIMEOUT,
                        "channel %s: lost the control plane (%s): whether component %s is alive "
                        "can no longer be told",
                        ch->cfg->name,
                        ch->health.ctl_why[0] ? ch->health.ctl_why
                                              : "rank 0 of this component lost contact with xferd",
                        xfer_ch_peer_name(ch));
}

xfer_status_t xfer_ch_peer_failed_error(const xfer_channel_t *ch)
{
    const char *why = ch->health.peer_why[0] ? ch->health.peer_why : "declared failed";
    if (xfer_ch_this_recvs(ch))
        return xfer_err_raw(XFER_ERR_PEER_FAILED,
                            "channel %s: component %s failed (xferd: %s): step %llu did not "
                            "reach %s rank %d%s; stop this component",
                            ch->cfg->name, xfer_ch_peer_name(ch), why, (unsigned long long) ch->cur,
                            xfer_ch_side_name(ch, ch->side), ch->me,
                            ch->cur > 0 ? " (the steps before it did)" : "");
    return xfer_err_raw(XFER_ERR_PEER_FAILED,
                        "channel %s: component %s failed (xferd: %s): it released %llu of the "
                        "%llu steps %s rank %d committed; stop this component",
                        ch->cfg->name, xfer_ch_peer_name(ch), why,
                        (unsigned long long) ch->proto.credit, (unsigned long long) ch->committed,
                        xfer_ch_side_name(ch, ch->side), ch->me);
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
    if (ch->proto.close_seen)
        st = xfer_ch_end_own_side(ch);
    if (st == XFER_SUCCESS)
        st = xfer_ch_notes_reap(ch, 0);
out:
    return st;
}
