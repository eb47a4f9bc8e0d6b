/* SPDX-License-Identifier: BSD-3-Clause */
/* The file transport's step protocol (file.h): the channel calls of a channel whose steps
 * travel as files. The semantics are the stream's (workflow.h); what differs:
 *  - a sending side writes step s when it commits it (xfer_step_end, or a full-duplex side's
 *    first xfer_get), collectively, and the file appears under its final name when complete;
 *  - a receiving rank reads its selections of step s when it begins it, on its own, as soon as
 *    the file is there; the step's end is the peer's end marker;
 *  - flow control: the sender runs at most max_in_flight_steps files ahead of the receiver's
 *    releases (keep: false, the receiver removes each step's file once all its ranks released
 *    it; keep: true, the files stay and the receiver's rank 0 writes RECEIVER.released; a
 *    receiver not launched with this run, which may run later, holds nothing until it reads);
 *  - a sending side learns that the receiver closed at its next commit, which all its ranks
 *    agree on (a local check could split the side's collective write); under on_reader_loss:
 *    continue or spill, that agreement also detaches and attaches readers (file_attach.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../codec/codec.h"
#include "file.h"

#define NAP_MIN_NS 100000L /* a wait polls the directory, backing off from 0.1 ms ... */
#define NAP_MAX_NS                                                                                 \
    20000000L /* ... to 20 ms between polls (the file appears when the peer's                      \
                 step is complete) */

/* ---- waits ------------------------------------------------------------------------------- */

/* The peer's failure, as the control plane reports it (file.h): rank 0 asks xferd and tells its
 * side's other ranks (NOTE_FAIL on the side's own communicator, the only notes a file channel
 * has). */
xfer_status_t xfer_file_check_peer(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    if (ch->me == 0) {
        XFER_CHECK_GOTO(xfer_ch_check_peer(ch), st, out);
    } else {
        int flag = 1;
        while (flag && !ch->health.peer_failed && !ch->health.ctl_lost) {
            MPI_Status s;
            note_t n;
            XFER_MPI_GOTO(MPI_Iprobe(0, XFER_NOTE_TAG, ch->ctl_local, &flag, &s), st, out);
            if (!flag)
                break;
            XFER_MPI_GOTO(
                MPI_Recv(&n, 2, MPI_INT64_T, 0, XFER_NOTE_TAG, ch->ctl_local, MPI_STATUS_IGNORE),
                st, out);
            if (n.type == NOTE_FAIL)
                XFER_CHECK_GOTO(xfer_ch_take_fail(ch, n.value, 0), st, out);
        }
    }
    XFER_CHECK_GOTO(xfer_ch_notes_reap(ch, 0), st, out);
    if (ch->health.peer_failed)
        return xfer_ch_peer_failed_error(ch);
    if (ch->health.ctl_lost)
        return xfer_ch_ctl_lost_error(ch);
out:
    return st;
}

/* The file's poll (transport.h): a wait on this channel asks whether the peer failed; the
 * other waits' passes have nothing to move (a step is written or read whole by its call). */
static xfer_status_t file_poll(xfer_channel_t *ch, int force, int *busy)
{
    *busy = 0;
    return force ? xfer_file_check_peer(ch) : XFER_SUCCESS;
}

static const char *file_where(const xfer_channel_t *ch)
{
    return ch->file->dir;
}

/* Wait on @p cond (channel.h, xfer_ch_wait): a file channel loses no step to a failed
 * collective, so no lost step ends its waits. */
static xfer_status_t wait_on(xfer_channel_t *ch, xfer_ch_cond_fn cond, void *arg, const char *what,
                             double until, int resumable, int *met)
{
    const xfer_ch_wait_t w = {.cond = cond,
                              .arg = arg,
                              .what = what,
                              .until = until,
                              .need = UINT64_MAX,
                              .resumable = resumable,
                              .force = 1};
    return xfer_ch_wait(ch, &w, met);
}

/* This side's barrier is done, unless xferd declared this component failed (a sibling will not
 * come). */
typedef struct barrier {
    MPI_Request req;
    const char *what;
} barrier_t;

static xfer_status_t barrier_cond(xfer_channel_t *ch, void *arg, int *met)
{
    barrier_t *b = arg;
    char why[256];
    if (MPI_Test(&b->req, met, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return XFER_ERR(XFER_ERR_MPI, "channel %s: %s: MPI_Test of this side's barrier failed",
                        ch->cfg->name, b->what);
    if (!*met && xfer_rt_ctl_failed(ch->x, ch->x->comp, why, sizeof(why)))
        return XFER_ERR(XFER_ERR_PEER_FAILED,
                        "channel %s: %s: xferd declared this component (%s) failed: %s",
                        ch->cfg->name, b->what, xfer_ch_side_name(ch, ch->side), why);
    return XFER_SUCCESS;
}

/* A barrier of this side's ranks that keeps the other channels moving while it waits: a
 * sibling may wait on another channel for what only this rank passes on (rank 0 relays a
 * peer's failure), and a blocking barrier would hold it for ever (xfer-chaos seed 5246,
 * MPICH). Ends with the barrier, at the deadline (XFER_LIVE_CLOCK), or when xferd declared this
 * component failed. The peer's failure does not end it (force 0): this side's ranks all come. */
static xfer_status_t barrier_moving(xfer_channel_t *ch, const char *what)
{
    barrier_t b = {MPI_REQUEST_NULL, what};
    xfer_status_t st = XFER_SUCCESS;
    int met = 0;
    XFER_MPI_GOTO(MPI_Ibarrier(ch->ctl_local, &b.req), st, out);
    {
        const xfer_ch_wait_t w = {.cond = barrier_cond,
                                  .arg = &b,
                                  .what = what,
                                  .until = HUGE_VAL,
                                  .need = UINT64_MAX,
                                  .resumable = 0,
                                  .force = 0};
        st = xfer_ch_wait(ch, &w, &met);
    }
out:
    if (st != XFER_SUCCESS) /* the barrier may stay posted: no collective of this side follows */
        ch->health.failed = 1;
    return st;
}

/* ---- conditions -------------------------------------------------------------------------- */

/* Receiving: step *arg is read (f->have), or the peer ended before it. */
static xfer_status_t recv_cond(xfer_channel_t *ch, void *arg, int *met)
{
    xfer_file_t *f = ch->file;
    uint64_t s = *(const uint64_t *) arg;
    char path[1200];
    xfer_status_t st;
    int found, i, again = 2;

    *met = f->have && f->have_step == s;
    if (*met)
        return XFER_SUCCESS;
    if (!f->peer.run[0]) {
        XFER_CHECK_GOTO(xfer_file_read_manifest(ch, &found), st, out);
        if (!found)
            return XFER_SUCCESS;
    }
    for (i = 0; i < ch->nds; i++) /* fixed for the run from here on */
        if (!ch->ds[i].out)
            XFER_CHECK_GOTO(xfer_ch_own_selection(ch, &ch->ds[i]), st, out);
    if (ch->loss.detach) { /* where this reader begins (file_attach.c) */
        XFER_CHECK_GOTO(xfer_file_att_reader(ch, &s, &found), st, out);
        *(uint64_t *) arg = s;
        if (!found)
            return XFER_SUCCESS;
    }
    while (again--) {
        XFER_CHECK_GOTO(xfer_file_read_step(ch, s, &found), st, out);
        if (found) {
            f->have = 1;
            f->have_step = s;
            ch->started = s + 1;
            *met = 1;
            return XFER_SUCCESS;
        }
        if (f->peer_end < 0) { /* written after the last step's file: checked after it */
            xfer_file_path(ch, &f->peer, "end", path, sizeof(path));
            (void) xfer_file_read_marker(ch, path, f->peer.run, &f->peer_end);
        }
        /* a step not kept for this reader is skipped (its number is the sender's) */
        if (!ch->loss.detach || !xfer_file_att_gap(ch, &s))
            break;
        *(uint64_t *) arg = s;
    }
    *met = f->peer_end >= 0 && s >= (uint64_t) f->peer_end;
out:
    return st;
}

/* Sending: may step cur be written? Once the receiver released the step max_in_flight_steps + 1
 * before it (keep: false, its file is gone; keep: true, its `released` marker says so), or
 * closed the channel. With keep: true a receiver launched with this run (one MPMD launch, or
 * XFER_RUN_ID, as xfer-run gives) holds the sender back from the first step; one launched on its
 * own, which may run later or never, only once it released a step of this run. */
static xfer_status_t send_cond(xfer_channel_t *ch, void *arg, int *met)
{
    const xfer_file_t *f = ch->file;
    const uint64_t s = ch->cur, w = (uint64_t) ch->cfg->max_in_flight_steps;
    char path[1200];
    int64_t released = 0;
    (void) arg;
    *met = 1;
    if (ch->loss.detach) /* (a reader that may come and go: its room counts from its attach) */
        return xfer_file_att_room(ch, met);
    if (s <= w)
        return XFER_SUCCESS;
    if (f->keep) {
        xfer_file_path(ch, &f->peer, "released", path, sizeof(path));
        if (!xfer_file_read_marker(ch, path, f->run, &released) && !ch->x->run_id[0])
            return XFER_SUCCESS; /* a receiver of another launch, which may run later */
        if (released >= (int64_t) (s - w))
            return XFER_SUCCESS;
    } else {
        xfer_file_step_path(ch, &f->own, s - w - 1, path, sizeof(path));
        if (access(path, F_OK) != 0)
            return XFER_SUCCESS;
    }
    xfer_file_path(ch, &f->peer, "closed", path, sizeof(path));
    *met = xfer_file_read_marker(ch, path, f->run, NULL);
    return XFER_SUCCESS;
}

/* ---- helpers ----------------------------------------------------------------------------- */

static xfer_status_t ended(xfer_channel_t *ch, uint64_t step)
{
    const xfer_file_t *f = ch->file;
    (void) step; /* the words name the current step */
    ch->health.ended = 1;
    if (f->closed_seen)
        return XFER_ERR(XFER_ERR_END_OF_STREAM,
                        "channel %s: %s closed the channel; step %llu is not sent", ch->cfg->name,
                        xfer_ch_peer_name(ch), (unsigned long long) ch->cur);
    return XFER_ERR(XFER_ERR_END_OF_STREAM, "channel %s: %s ended the channel after %lld step%s",
                    ch->cfg->name, xfer_ch_peer_name(ch), (long long) f->peer_end,
                    f->peer_end == 1 ? "" : "s");
}

/* Wait for the peer's step cur (a receiving rank). */
static xfer_status_t have_step(xfer_channel_t *ch, int resumable)
{
    uint64_t s = ch->cur;
    xfer_status_t st;
    int met;
    XFER_CHECK_GOTO(wait_on(ch, recv_cond, &s, "waiting for a step", HUGE_VAL, resumable, &met), st,
                    out);
    if (!ch->file->have)
        return ended(ch, s);
out:
    return st;
}

static int file_has(xfer_channel_t *ch, uint64_t s)
{
    return ch->file->have && ch->file->have_step == s;
}

/* A sending side learns that the receiver closed at its commit (file.h); a receiving one that
 * the sender ended from its end marker. */
static int file_over(xfer_channel_t *ch, uint64_t s)
{
    return !xfer_ch_this_sends(ch) && !file_has(ch, s);
}

/* Every rank's rows of each joined dataset of the step (zero where it put none), and the bound
 * a dataset's max_rows sets, which every rank checks alike before anything is written. */
static xfer_status_t gather_rows(xfer_channel_t *ch)
{
    xfer_file_t *f = ch->file;
    uint64_t mine[XFER_MAX_DATASETS];
    xfer_status_t st = XFER_SUCCESS;
    int i, j;
    if (!f->njoined)
        return XFER_SUCCESS;
    for (i = 0, j = 0; i < ch->nds; i++)
        if (ch->ds[i].out && ch->ds[i].cfg->joined)
            mine[j++] = f->mask >> ch->ds[i].bit & 1u ? ch->ds[i].count[0] : 0;
    XFER_MPI_GOTO(MPI_Allgather(mine, f->njoined, MPI_UINT64_T, f->rows, f->njoined, MPI_UINT64_T,
                                ch->ctl_local),
                  st, out);
    for (i = 0, j = 0; i < ch->nds; i++) {
        const xfer_cfg_dataset_t *c = ch->ds[i].cfg;
        uint64_t rows, first;
        if (!ch->ds[i].out || !c->joined)
            continue;
        xfer_file_rows_of(ch, j++, &rows, &first);
        if (c->max_rows && rows > c->max_rows)
            return XFER_ERR(XFER_ERR_TOO_LARGE,
                            "channel %s: dataset %s: step %llu holds %llu rows in all, more than "
                            "its max_rows, %llu (the step is not committed: put fewer rows and "
                            "commit it again)",
                            ch->cfg->name, c->name, (unsigned long long) ch->cur,
                            (unsigned long long) rows, (unsigned long long) c->max_rows);
    }
out:
    return st;
}

/* Every rank's block and shape of each variable dataset of the step: the ranks that put it agree
 * on its shape and their blocks tile it, checked alike on every rank before anything is
 * written; the shape goes to the dataset's sdims. */
static xfer_status_t gather_shapes(xfer_channel_t *ch)
{
    xfer_file_t *f = ch->file;
    xfer_status_t st = XFER_SUCCESS;
    int i, at = 0;
    if (!f->vrec_len)
        return XFER_SUCCESS;
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        const int nd = d->cfg->ndims;
        uint64_t *x = f->vone + at;
        if (!d->out || !d->cfg->variable)
            continue;
        x[0] = f->mask >> d->bit & 1u;
        memcpy(x + 1, d->pdims, (size_t) nd * sizeof(uint64_t));
        memcpy(x + 1 + nd, d->start, (size_t) nd * sizeof(uint64_t));
        memcpy(x + 1 + 2 * nd, d->count, (size_t) nd * sizeof(uint64_t));
        if (!x[0])
            memset(x, 0, (size_t) (1 + 3 * nd) * sizeof(uint64_t));
        at += 1 + 3 * nd;
    }
    XFER_MPI_GOTO(MPI_Allgather(f->vone, f->vrec_len, MPI_UINT64_T, f->vrec, f->vrec_len,
                                MPI_UINT64_T, ch->ctl_local),
                  st, out);
    for (i = 0, at = 0; i < ch->nds; i++) {
        xfer_rt_dset_t *d = &ch->ds[i];
        const int w = 1 + 3 * d->cfg->ndims;
        if (!d->out || !d->cfg->variable)
            continue;
        XFER_CHECK_GOTO(xfer_ch_check_step_blocks(ch, d, ch->side, ch->nlocal, f->vrec + at,
                                                  (size_t) f->vrec_len, ch->cur, d->sdims),
                        st, out);
        at += w;
    }
out:
    return st;
}

/* The commit's agreement (v: the datasets put, then what rank 0 found): the reader closed (1)
 * or, under on_reader_loss: continue, failed (2), so that every rank stops at this step. */
static xfer_status_t agree_loss(xfer_channel_t *ch, uint64_t v[2])
{
    const xfer_file_t *f = ch->file;
    xfer_status_t st = XFER_SUCCESS;
    if (ch->me == 0) {
        char path[1200];
        xfer_file_path(ch, &f->peer, "closed", path, sizeof(path));
        v[1] = (uint64_t) xfer_file_read_marker(ch, path, f->run, NULL);
    }
    /* on_reader_loss: continue: whether the reader failed, as this rank knows it now (rank 0
     * asks xferd); the agreement makes every rank stop sending at this same step (ch_loss.c) */
    if (ch->loss.cont) {
        if (xfer_file_check_peer(ch) != XFER_SUCCESS)
            xfer_clear_error();
        if (xfer_ch_loss_known(ch))
            v[1] |= 2;
    }
    XFER_MPI_GOTO(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_BOR, ch->ctl_local), st, out);
    if (v[1] & 2 && ch->me != 0 && !ch->health.peer_failed) {
        /* rank 0 knew, and sent every other rank the notice and its words before it came here:
         * taken now, none is left unmatched */
        note_t n = {0, 0};
        while (!ch->health.peer_failed && st == XFER_SUCCESS) {
            XFER_MPI_GOTO(
                MPI_Recv(&n, 2, MPI_INT64_T, 0, XFER_NOTE_TAG, ch->ctl_local, MPI_STATUS_IGNORE),
                st, out);
            if (n.type == NOTE_FAIL)
                st = xfer_ch_take_fail(ch, n.value, 0);
        }
    }
out:
    return st;
}

/* Commit the step being filled: every rank of the side writes its part of the step's file. */
static xfer_status_t commit(xfer_channel_t *ch)
{
    xfer_file_t *f = ch->file;
    uint64_t v[2], bytes = 0, whole = 0, len;
    char *attrs = NULL;
    xfer_status_t st = XFER_SUCCESS;
    int i, j, write = 1;

    if (ch->cur_committed)
        return XFER_SUCCESS;
    v[0] = f->mask; /* (the core waited for room: XFER_TP_ROOM_AT_COMMIT) */
    v[1] = 0;
    if (ch->loss.detach) {
        /* a reader that may come and go: its loss, close or announcement (file_attach.c) */
        XFER_CHECK_GOTO(xfer_file_att_agree(ch, &v[0]), st, out);
    } else {
        XFER_CHECK_GOTO(agree_loss(ch, v), st, out);
        if (v[1] & 2) {
            ch->health.peer_failed = 1;
            return xfer_ch_peer_failed_error(ch);
        }
        if (v[1]) {
            f->closed_seen = 1;
            return ended(ch, ch->cur);
        }
    }
    XFER_CHECK_GOTO(gather_rows(ch), st, out);
    XFER_CHECK_GOTO(gather_shapes(ch), st, out);
    /* the step's attributes travel from rank 0 */
    len = ch->me == 0 ? ch->attr_out.len : 0;
    XFER_MPI_GOTO(MPI_Bcast(&len, 1, MPI_UINT64_T, 0, ch->ctl_local), st, out);
    if (len) {
        attrs = ch->me == 0 ? ch->attr_out.buf : xfer_calloc(1, (size_t) len);
        st = xfer_rt_agree(ch->ctl_local,
                           attrs ? XFER_SUCCESS : XFER_ERR(XFER_ERR_NO_MEMORY, "attributes"));
        if (st != XFER_SUCCESS)
            goto out;
        XFER_MPI_GOTO(MPI_Bcast(attrs, (int) len, MPI_BYTE, 0, ch->ctl_local), st, out);
    }
    for (i = 0, j = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        uint64_t rows, first;
        if (d->out && (f->mask >> d->bit & 1u))
            bytes += (d->dyn ? xfer_ch_volume(d->cfg->ndims, d->count) : d->put.vol) * d->esize;
        if (d->out && d->cfg->joined) {
            xfer_file_rows_of(ch, j++, &rows, &first);
            whole += rows * xfer_ch_volume(d->cfg->ndims - 1, d->cfg->dims + 1) * d->esize;
        } else if (d->out && (v[0] >> d->bit & 1u)) {
            whole += xfer_ch_volume(d->cfg->ndims, d->cfg->variable ? d->sdims : d->cfg->dims) *
                     d->esize;
        }
    }
    /* no reader attached: the step is spilled, kept in history's ring, or not written at all;
     * beyond spill's bounds it is refused (not committed: the application may commit it again) */
    if (ch->loss.detach)
        XFER_CHECK_GOTO(xfer_file_att_keep(ch, whole, &write), st, out);
    if (write && (st = xfer_file_write_step(ch, v[0], attrs, (size_t) len)) != XFER_SUCCESS) {
        ch->health.failed = 1;
        goto out;
    }
    if (ch->loss.detach)
        XFER_CHECK_GOTO(xfer_file_att_kept(ch, write), st, out);
    if (write) {
        ch->stats.bytes_sent += bytes;
        ch->stats.wire_bytes_sent += bytes;
        if (ch->me == 0)
            xfer_rt_ctl_step(ch->x, ch->index, ch->side, ch->cur, whole);
    }
    ch->committed = ch->cur + 1;
    ch->cur_committed = 1;
    f->mask = 0;
    ch->attr_out.len = 0;
out:
    if (attrs && attrs != ch->attr_out.buf)
        xfer_free(attrs);
    return st;
}

/* ---- the channel calls ------------------------------------------------------------------- */

xfer_status_t xfer_file_open(xfer_channel_t *ch)
{
    const struct xfer *x = ch->x;
    const char *base = xfer_env_str("XFER_TRANSPORT_DIR");
    xfer_file_t *f;
    xfer_status_t st = XFER_SUCCESS;
    int n;

    if (!(f = ch->file = xfer_calloc(1, sizeof(*f))))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s", ch->cfg->name);
    f->peer_end = -1;
    f->keep = ch->cfg->file.keep;
    f->own.name = x->cfg->components[x->comp].name;
    f->peer.name = x->cfg->components[ch->peer].name;
    f->blk = xfer_calloc((size_t) ch->nds, sizeof(*f->blk));
    f->blk_cap = xfer_calloc((size_t) ch->nds, sizeof(*f->blk_cap));
    f->blk_at = xfer_calloc((size_t) ch->nds, sizeof(*f->blk_at));
    f->sel = xfer_calloc((size_t) ch->nds, sizeof(*f->sel));
    f->sel_cap = xfer_calloc((size_t) ch->nds, sizeof(*f->sel_cap));
    f->landed = xfer_calloc((size_t) ch->nds, sizeof(*f->landed));
    for (n = 0; n < ch->nds; n++) {
        f->njoined += ch->ds[n].out && ch->ds[n].cfg->joined;
        f->vrec_len += ch->ds[n].out && ch->ds[n].cfg->variable ? 1 + 3 * ch->ds[n].cfg->ndims : 0;
    }
    f->vrec = xfer_calloc((size_t) (f->vrec_len + 1) * (size_t) ch->nlocal, sizeof(*f->vrec));
    f->vone = xfer_calloc((size_t) f->vrec_len + 1, sizeof(*f->vone));
    f->rows =
        xfer_calloc((size_t) (f->njoined ? f->njoined : 1) * (size_t) ch->nlocal, sizeof(*f->rows));
    if (!f->blk || !f->blk_cap || !f->blk_at || !f->sel || !f->sel_cap || !f->landed || !f->rows ||
        !f->vrec || !f->vone)
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s", ch->cfg->name);
    if (!base)
        base = ch->cfg->file.dir && ch->cfg->file.dir[0] ? ch->cfg->file.dir : "xfer-steps";
    n = snprintf(f->dir, sizeof(f->dir), "%s/%s/%s", base, x->cfg->workflow, ch->cfg->name);
    if (st == XFER_SUCCESS &&
        (n < 0 || (size_t) n + strlen(f->own.name) + strlen(f->peer.name) + 32 >= sizeof(f->dir)))
        st = XFER_ERR(XFER_ERR_INVALID_ARG,
                      "channel %s: transport: file: the directory %s is "
                      "too long",
                      ch->cfg->name, base);
    if (st == XFER_SUCCESS)
        st = xfer_file_load_adapter(ch);
    st = xfer_rt_agree(x->comm, st);
    if (st == XFER_SUCCESS && xfer_ch_this_recvs(ch)) {
        if (ch->me == 0)
            st = xfer_file_start_receiver(ch);
        st = xfer_rt_agree(x->comm, st);
        if (st == XFER_SUCCESS && !xfer_ch_this_sends(ch))
            st = xfer_file_att_open(ch); /* (a reader that may attach late: its incarnation) */
    }
    if (st != XFER_SUCCESS || !xfer_ch_this_sends(ch))
        return st;
    /* a sending side: its run id (this run's, or one of its own), then its manifest */
    if (x->run_id[0]) {
        snprintf(f->run, sizeof(f->run), "%s", x->run_id);
    } else if (ch->me == 0) {
        char host[64] = "host";
        struct timespec ts;
        gethostname(host, sizeof(host) - 1);
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(f->run, sizeof(f->run), "%s-%ld-%lld.%09ld", host, (long) getpid(),
                 (long long) ts.tv_sec, ts.tv_nsec);
    }
    XFER_MPI_GOTO(MPI_Bcast(f->run, (int) sizeof(f->run), MPI_CHAR, 0, ch->ctl_local), st, out);
    if (ch->me == 0)
        st = xfer_file_start_side(ch);
    st = xfer_rt_agree(x->comm, st);
    if (st == XFER_SUCCESS) /* attached to the reader launched with it, or absent */
        st = xfer_rt_agree(x->comm, xfer_file_att_open(ch));
out:
    return st;
}

/* The file's stage (transport.h): a copy of the block (or the bound block), written when the
 * step commits; a fixed-shape dataset's after the rank's others of the step, as ds->put lays
 * them out (ch_blocks.c). */
static xfer_status_t file_stage(xfer_channel_t *ch, xfer_rt_dset_t *ds, const void *block,
                                uint64_t v)
{
    xfer_file_t *f = ch->file;
    const int i = (int) (ds - ch->ds);
    const size_t bytes = (size_t) v * ds->esize;
    const size_t at = !ds->dyn && bytes ? ds->put.pk[ds->put.n - 1] : 0;

    if (ds->bound) { /* written straight from the caller's block when the step commits */
        f->blk_at[i] = block;
    } else if (bytes) {
        if (f->blk_cap[i] < at + bytes) {
            void *nb = xfer_realloc_array(f->blk[i], at + bytes, 1);
            if (!nb)
                return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: dataset %s: %zu bytes",
                                ch->cfg->name, ds->cfg->name, at + bytes);
            f->blk[i] = nb;
            f->blk_cap[i] = at + bytes;
        }
        memcpy((char *) f->blk[i] + at, block, bytes);
        f->blk_at[i] = f->blk[i];
        ch->stats.bytes_copied_in += bytes;
    }
    f->mask |= (uint64_t) 1 << ds->bit;
    return XFER_SUCCESS;
}

/* The file's unput (transport.h): the step's file will not hold the rank's block of @p ds. */
static void file_unput(xfer_channel_t *ch, xfer_rt_dset_t *ds)
{
    ch->file->mask &= ~((uint64_t) 1 << ds->bit);
}

/* The file's release (transport.h): the step is released as a whole, once every rank has it
 * (or the peer ended); then its file goes (keep: false) or the `released` marker says so. */
static xfer_status_t file_release(xfer_channel_t *ch)
{
    xfer_file_t *f = ch->file;
    xfer_status_t st;

    XFER_CHECK_GOTO(have_step(ch, 0), st, out);
    f->have = 0;
    XFER_CHECK_GOTO(barrier_moving(ch, "waiting for this side's other ranks to release the "
                                       "step"),
                    st, out);
    if (ch->me == 0) { /* the sender may write the step max_in_flight_steps ahead */
        char path[1200], extra[64];
        if (!f->keep) {
            xfer_file_step_path(ch, &f->peer, ch->cur, path, sizeof(path));
            unlink(path);
        } else {
            snprintf(extra, sizeof(extra), "steps %llu\n", (unsigned long long) ch->cur + 1);
            xfer_file_path(ch, &f->own, "released", path, sizeof(path));
            XFER_CHECK_GOTO(xfer_file_write_marker(ch, path, f->peer.run, extra), st, out);
            /* room for the next one (a disk full now fails that write, with its words) */
            if (xfer_file_reserve_marker(ch, path) != XFER_SUCCESS)
                xfer_clear_error();
        }
    }
    if (ch->me == 0)
        xfer_rt_ctl_ack(ch->x, ch->index, ch->side, ch->cur + 1);
out:
    return st;
}

/* The file's fetch (transport.h): out of this rank's selection, read when the step arrived. */
static xfer_status_t file_fetch(xfer_channel_t *ch, xfer_rt_dset_t *ds, const uint64_t *start,
                                const uint64_t *count, void *buf, uint64_t bytes, uint64_t s)
{
    const xfer_file_t *f = ch->file;
    const int nd = ds->cfg->ndims, i = (int) (ds - ch->ds);

    if (!(f->rmask >> ds->bit & 1u))
        return XFER_ERR(XFER_ERR_NOT_FOUND, "channel %s: %s did not put dataset %s in step %llu",
                        ch->cfg->name, xfer_ch_peer_name(ch), ds->cfg->name,
                        (unsigned long long) s);
    if (bytes > 0) {
        const char *src = f->landed[i];
        if (src != buf || memcmp(start, ds->sel_start, (size_t) nd * sizeof(uint64_t)) != 0 ||
            memcmp(count, ds->sel_count, (size_t) nd * sizeof(uint64_t)) != 0) {
            xfer_ch_copy_box(buf, start, count, src, ds->sel_start, ds->sel_count, nd, ds->esize);
            ch->stats.bytes_copied_out += bytes;
        }
    }
    return XFER_SUCCESS;
}

static xfer_status_t file_attrs(xfer_channel_t *ch, uint64_t s, const char **p, size_t *len)
{
    (void) s;
    *p = ch->file->attrs;
    *len = ch->file->attrs_len;
    return XFER_SUCCESS;
}

static int file_pending(const xfer_channel_t *ch)
{
    (void) ch; /* a step is written or read whole by its call */
    return 0;
}

xfer_status_t xfer_file_finish(xfer_channel_t *ch)
{
    xfer_file_t *f = ch->file;
    const int failed = ch->health.failed;
    xfer_status_t st = XFER_SUCCESS;
    char path[1200], extra[192];

    /* A failed channel still says it ends (its failure was reported when it happened): a
     * receiver would otherwise wait for a step that never comes, for ever in one MPMD job. Every
     * rank comes to the agreement, failed or not: some may know of a failure the others do
     * not. */
    if (ch->health.finished)
        return XFER_SUCCESS;
    f->mask = 0; /* an uncommitted step's puts are dropped */
    ch->attr_out.len = 0;
    if (ch->me == 0 && xfer_ch_this_sends(ch)) {
        snprintf(extra, sizeof(extra), "steps %llu\n", (unsigned long long) ch->committed);
        xfer_file_path(ch, &f->own, "end", path, sizeof(path));
        st = xfer_file_write_marker(ch, path, f->run, extra);
    }
    if (st == XFER_SUCCESS && ch->me == 0 && xfer_ch_this_recvs(ch) &&
        (f->peer.run[0] || ch->x->run_id[0])) {
        /* a sender that waits for this side (keep: false) learns it stopped; one of this run
         * whose manifest this side never read (it closed before its first step) runs as the
         * run's identity */
        xfer_file_path(ch, &f->own, "closed", path, sizeof(path));
        snprintf(extra, sizeof(extra), "reader %s\n", f->att.me);
        st = xfer_file_write_marker(ch, path, f->peer.run[0] ? f->peer.run : ch->x->run_id,
                                    ch->loss.detach ? extra : "");
    }
    if (failed && st != XFER_SUCCESS) { /* best effort: the disk that failed it may be full */
        xfer_clear_error();
        st = XFER_SUCCESS;
    }
    st = xfer_rt_agree(ch->x->comm, st);
    if (st == XFER_SUCCESS && !failed)
        ch->health.finished = 1;
    else if (st != XFER_SUCCESS)
        ch->health.failed = 1;
    return st;
}

void xfer_file_free(xfer_channel_t *ch, int collective)
{
    xfer_file_t *f = ch->file;
    int i;
    (void) collective; /* nothing collective to free */
    if (!f)
        return;
    if (ch->me == 0 && f->dir[0])
        xfer_file_drop_reserved(ch);
    for (i = 0; i < ch->nds; i++) {
        if (f->blk)
            xfer_free(f->blk[i]);
        if (f->sel)
            xfer_free(f->sel[i]);
    }
    xfer_free(f->blk);
    xfer_free(f->blk_cap);
    xfer_free(f->blk_at);
    xfer_free(f->sel);
    xfer_free(f->sel_cap);
    xfer_free(f->landed);
    xfer_free(f->rows);
    xfer_free(f->vrec);
    xfer_free(f->vone);
    xfer_free(f->attrs);
    xfer_free(f);
    ch->file = NULL;
}

const xfer_transport_ops_t xfer_file_ops = {
    .name = "file",
    .flags = XFER_TP_ROOM_AT_COMMIT | XFER_TP_COLLECTIVE_COMMIT,
    .open = xfer_file_open,
    .room = send_cond,
    .arrived = recv_cond,
    .has = file_has,
    .over = file_over,
    .ended = ended,
    .stage = file_stage,
    .unput = file_unput,
    .commit = commit,
    .side_commit = NULL,
    .release = file_release,
    .sent = NULL,
    .after_end = NULL,
    .fetch = file_fetch,
    .shape = NULL,
    .attrs = file_attrs,
    .pending = file_pending,
    .end = xfer_file_finish,
    .free = xfer_file_free,
    .poll = file_poll,
    .where = file_where,
    .spin_s = 0,
    .nap_min_ns = NAP_MIN_NS,
    .nap_max_ns = NAP_MAX_NS,
};
