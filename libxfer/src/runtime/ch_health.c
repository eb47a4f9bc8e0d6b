/* SPDX-License-Identifier: BSD-3-Clause */
/* A channel's health, whatever its transport: its control notes going out and reaped, the
 * peer-failure notice from the leader and its words, whether a call may go on, its datasets by
 * name, and the guard of the MPI error handlers while a call of ours runs. The stream's own
 * notes are in stream_notes.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* The leader (rank 0, which holds the connection to xferd) learns that the peer failed and
 * tells the other ranks of its side; their pending and later calls fail with PEER_FAILED. */
xfer_status_t xfer_ch_check_peer(xfer_channel_t *ch)
{
    int value;
    if (ch->health.peer_failed || ch->health.ctl_lost || !ch->x->ctl || ch->me != 0 ||
        ch->loss.away)
        return XFER_SUCCESS;
    if (xfer_rt_ctl_failed_since(ch->x, ch->peer, ch->health.peer_session, ch->health.peer_why,
                                 sizeof(ch->health.peer_why))) {
        ch->health.peer_failed = 1;
        value = ch->peer;
    } else if (xfer_rt_ctl_lost(ch->x, ch->health.ctl_why, sizeof(ch->health.ctl_why))) {
        ch->health.ctl_lost = 1;
        value = -1;
    } else {
        return XFER_SUCCESS;
    }
    return xfer_ch_tell_side(ch, value);
}

xfer_status_t xfer_ch_tell_side(xfer_channel_t *ch, int value)
{
    xfer_status_t st = XFER_SUCCESS;
    int r;
    if (ch->proto.why_req) /* (told once) */
        return XFER_SUCCESS;
    /* the other ranks get the notice and its words (they report them as their own) */
    ch->proto.why_req = xfer_calloc((size_t) ch->nlocal, sizeof(MPI_Request));
    if (!ch->proto.why_req && ch->nlocal > 1)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: failure notice", ch->cfg->name);
    for (r = 0; r < ch->nlocal && st == XFER_SUCCESS; r++) {
        const char *why = value >= 0 ? ch->health.peer_why : ch->health.ctl_why;
        if (r == ch->me)
            continue;
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

xfer_status_t xfer_ch_take_notice(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    /* (from any rank: without xferd the rank that met the reader's loss first told the others,
     * rank 0 among them, whose verdict then says it; ch_loss.c) */
    while (ch->me != 0 && !ch->health.peer_failed && !ch->health.ctl_lost && st == XFER_SUCCESS) {
        note_t n = {0, 0};
        MPI_Status s;
        XFER_MPI_GOTO(
            MPI_Recv(&n, 2, MPI_INT64_T, MPI_ANY_SOURCE, XFER_NOTE_TAG, ch->ctl_local, &s), st,
            out);
        if (n.type == NOTE_FAIL)
            st = xfer_ch_take_fail(ch, n.value, s.MPI_SOURCE);
    }
out:
    return st;
}

/* An MPI failure on a channel with a control plane: wait (bounded by twice xferd's detection
 * time, *wait_ms) for xferd's verdict on the peer: the leader asks its connection, the other
 * ranks wait for the leader's NOTE_FAIL. 1: the peer failed (ch->health.peer_why says why). */
int xfer_ch_await_verdict(xfer_channel_t *ch, int *wait_ms)
{
    const xfer_config_t *cfg = ch->x->cfg;
    double deadline;

    *wait_ms =
        2 * (cfg->heartbeat_timeout_ms > 0 ? cfg->heartbeat_timeout_ms : 4 * cfg->heartbeat_ms) +
        cfg->heartbeat_ms;
    deadline = MPI_Wtime() + 1e-3 * *wait_ms;
    while (!ch->health.peer_failed && MPI_Wtime() < deadline) {
        const struct timespec nap = {0, 2 * 1000 * 1000};
        if (ch->me == 0) {
            (void) xfer_ch_check_peer(ch); /* telling the side's other ranks is best effort here */
        } else {
            int flag = 0;
            MPI_Status ms;
            note_t n;
            while (!ch->health.peer_failed &&
                   MPI_Iprobe(0, XFER_NOTE_TAG, ch->ctl_local, &flag, &ms) == MPI_SUCCESS && flag &&
                   MPI_Recv(&n, 2, MPI_INT64_T, 0, XFER_NOTE_TAG, ch->ctl_local,
                            MPI_STATUS_IGNORE) == MPI_SUCCESS)
                if (n.type == NOTE_FAIL)
                    (void) xfer_ch_take_fail(ch, n.value, 0);
        }
        if (!ch->health.peer_failed)
            nanosleep(&nap, NULL); /* polling interval of a bounded wait */
    }
    return ch->health.peer_failed;
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
    if (!ch->x->use_ctl) /* a rank of this side met the failure and told the others */
        return xfer_err_raw(XFER_ERR_PEER_FAILED,
                            "channel %s: component %s failed (%s): %s rank %d learned it from "
                            "its side",
                            ch->cfg->name, xfer_ch_peer_name(ch), why,
                            xfer_ch_side_name(ch, ch->side), ch->me);
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

void xfer_ch_fail_keep(xfer_channel_t *ch, xfer_status_t st)
{
    ch->health.failed = 1;
    if (ch->health.fail_why[0] || st == XFER_SUCCESS)
        return;
    ch->health.fail_st = st;
    snprintf(ch->health.fail_why, sizeof(ch->health.fail_why), "%s", xfer_last_error());
}

/* A channel failed earlier: in the progress thread (its words were kept) or in a call. */
xfer_status_t xfer_ch_failed_error(const xfer_channel_t *ch)
{
    if (ch->health.fail_why[0])
        return xfer_err_raw(ch->health.fail_st, "%s", ch->health.fail_why);
    return XFER_ERR(XFER_ERR_STATE, "channel %s failed earlier; it cannot be used", ch->cfg->name);
}

/* Whether a call may go on: a failed or finalized channel cannot be used. A failed peer (or the
 * lost control plane) fails the waits that need it, not the calls on steps that arrived. */
xfer_status_t xfer_ch_check_usable(xfer_channel_t *ch)
{
    if (ch->loss.lost && !ch->health.finished)
        return XFER_SUCCESS; /* its reader is gone: the sender's calls go on (ch_loss.c) */
    if (ch->health.failed)
        return xfer_ch_failed_error(ch);
    if (ch->health.finished)
        return XFER_ERR(XFER_ERR_STATE, "channel %s was finalized", ch->cfg->name);
    return XFER_SUCCESS;
}

xfer_rt_dset_t *xfer_ch_find_dset(xfer_channel_t *ch, const char *name)
{
    int i;
    for (i = 0; i < ch->nds; i++)
        if (strcmp(ch->ds[i].cfg->name, name) == 0)
            return &ch->ds[i];
    return NULL;
}

xfer_status_t xfer_ch_no_such_dataset(xfer_channel_t *ch, const char *name)
{
    char list[400];
    size_t o = 0;
    int i;
    list[0] = '\0';
    for (i = 0; i < ch->nds && o < sizeof(list); i++)
        o += (size_t) snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "",
                               ch->ds[i].cfg->name);
    return XFER_ERR(XFER_ERR_NOT_FOUND, "channel %s has no dataset \"%s\" (datasets: %s)",
                    ch->cfg->name, name, list);
}

/* MPICH reports a failed request of MPI_Testany/Waitall through MPI_COMM_WORLD's error
 * handler, not the request's communicator: while a call of ours runs, failures must come back
 * as codes (the application's handlers are restored on return). */
void xfer_errh_guard_begin(xfer_errh_guard_t *g)
{
    g->set = MPI_Comm_get_errhandler(MPI_COMM_WORLD, &g->world) == MPI_SUCCESS;
    if (g->set && MPI_Comm_get_errhandler(MPI_COMM_SELF, &g->self) != MPI_SUCCESS) {
        MPI_Errhandler_free(&g->world);
        g->set = 0;
    }
    if (g->set) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    }
}

xfer_status_t xfer_errh_guard_end(xfer_errh_guard_t *g, xfer_status_t st)
{
    if (g->set) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, g->world);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, g->self);
        MPI_Errhandler_free(&g->world);
        MPI_Errhandler_free(&g->self);
    }
    return st;
}

void xfer_ch_abandon_coll(MPI_Request *req)
{
    xfer_errh_guard_t g;
    int done = 0, rc;
    if (*req == MPI_REQUEST_NULL)
        return;
    xfer_errh_guard_begin(&g); /* (MPICH reports a failed request through MPI_COMM_WORLD's) */
    rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    (void) xfer_errh_guard_end(&g, XFER_SUCCESS);
    if (rc != MPI_SUCCESS || !done)
        *req = MPI_REQUEST_NULL; /* (pending, or failed: MPI_Finalize's) */
}
