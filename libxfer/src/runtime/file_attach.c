/* SPDX-License-Identifier: BSD-3-Clause */
/* Readers that attach late or come back, on the file transport (docs/runtime.md, "Readers that
 * attach late or come back"; file.h). The sending side of a file channel under
 * on_reader_loss: continue or spill (ch->loss.detach) runs with its reader attached or not:
 *  - a reader announces itself: its rank 0 removes the `closed` marker of an earlier incarnation
 *    and writes RECEIVER.attach (the run, its incarnation, whether it is the run's first reader);
 *    each of its ranks then waits for the sender's answer, SENDER.attached;
 *  - the sender acts at a commit only: rank 0 reads the reader's failure (xferd), its close and
 *    its announcement, and the commit's agreement (file.c, collective over the side) carries
 *    them to every rank, so that the whole side detaches or attaches at that one step;
 *  - detached, a commit writes (spill: every step, up to spill's bounds; continue with history
 *    K: a ring of the last K step files) or writes nothing (continue), and never waits; attached,
 *    the sender's room counts the reader's releases since it began (a backlog it reads first is
 *    its progress, not held against the sender).
 * SENDER.attached: `reader -` (the run's first reader, launched with the sender, begins at step
 * 0), `reader none` (no reader attached), or `reader INC`, `from F`, `at A`: incarnation INC
 * attached at the commit of step A and begins at F (start: latest, F = A; oldest, the oldest
 * step kept for it); a file missing below A is a step not kept, which the reader skips. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file.h"

/* What rank 0 found at a commit (bits of the agreement's second word). */
enum { EV_CLOSED = 1, EV_FAILED = 2, EV_ATTACH = 4, EV_ADOPT = 8 };

static int step_there(const xfer_channel_t *ch, const xfer_file_side_t *s, uint64_t step)
{
    char path[1200];
    xfer_file_step_path(ch, s, step, path, sizeof(path));
    return access(path, F_OK) == 0;
}

/* Is @p name one of the comma-separated names of @p list? */
static int listed(const char *list, const char *name)
{
    const size_t n = strlen(name);
    const char *p = list;
    while (p && *p) {
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t) (e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* What happens to the sender's steps while no reader is attached, from step @p from on. */
static void loss_tail(const xfer_channel_t *ch, uint64_t from, char *buf, size_t len)
{
    const unsigned long long s = (unsigned long long) from;
    char bytes[64] = "";
    if (ch->cfg->spill.max_bytes)
        snprintf(bytes, sizeof(bytes), ", spill.max_bytes %llu",
                 (unsigned long long) ch->cfg->spill.max_bytes);
    if (ch->loss.spill)
        snprintf(buf, len,
                 "spill: steps from %llu on are spilled to %s until a reader attaches "
                 "(spill.max_steps %d%s)",
                 s, ch->file->dir, ch->cfg->spill.max_steps, bytes);
    else if (ch->cfg->history > 0)
        snprintf(buf, len,
                 "continue: steps from %llu on are not sent (the last %d kept in %s for a reader "
                 "that comes back)",
                 s, ch->cfg->history, ch->file->dir);
    else
        snprintf(buf, len, "continue: steps from %llu on are not sent", s);
}

static void say(const xfer_channel_t *ch, const char *what, uint64_t from)
{
    char tail[1400];
    loss_tail(ch, from, tail, sizeof(tail));
    fprintf(stderr, "libxfer: channel %s: reader %s %s; on_reader_loss: %s\n", ch->cfg->name,
            xfer_ch_peer_name(ch), what, tail);
    fflush(stderr);
}

/* Rank 0 of the sending side: the answer in SENDER.attached. */
static xfer_status_t answer(xfer_channel_t *ch, const char *reader, uint64_t from, uint64_t at)
{
    xfer_file_t *f = ch->file;
    char path[1200], extra[300];
    xfer_file_path(ch, &f->own, "attached", path, sizeof(path));
    snprintf(extra, sizeof(extra), "reader %s\nfrom %llu\nat %llu\n", reader,
             (unsigned long long) from, (unsigned long long) at);
    return xfer_file_write_marker(ch, path, f->run, extra);
}

xfer_status_t xfer_file_att_open(xfer_channel_t *ch)
{
    xfer_file_t *f = ch->file;
    xfer_file_att_t *a = &f->att;
    xfer_status_t st = XFER_SUCCESS;

    a->first = -1;
    if (!ch->loss.detach)
        return XFER_SUCCESS;
    if (!xfer_ch_this_sends(ch)) { /* a reader: its incarnation, alike on its ranks */
        if (ch->me == 0) {
            char host[64] = "host";
            struct timespec ts;
            gethostname(host, sizeof(host) - 1);
            clock_gettime(CLOCK_REALTIME, &ts);
            snprintf(a->me, sizeof(a->me), "%s-%ld-%lld.%09ld", host, (long) getpid(),
                     (long long) ts.tv_sec, ts.tv_nsec);
        }
        XFER_MPI_GOTO(MPI_Bcast(a->me, (int) sizeof(a->me), MPI_CHAR, 0, ch->ctl_local), st, out);
        return XFER_SUCCESS;
    }
    /* a sender never waits for its reader here (no intercommunicator): it starts attached (the
     * reader launched with it holds it back from step 0), or detached if XFER_ABSENT names it */
    a->attached = !listed(xfer_env_str("XFER_ABSENT"), f->peer.name);
    ch->loss.away = !a->attached;
    if (ch->me == 0) {
        st = answer(ch, a->attached ? "-" : "none", 0, 0);
        if (st == XFER_SUCCESS && !a->attached)
            say(ch, "is absent (XFER_ABSENT)", 0);
    }
out:
    return st;
}

static void say_detached(xfer_channel_t *ch, int ev)
{
    char what[400];
    if (ev & EV_FAILED)
        snprintf(what, sizeof(what), "failed (xferd: %s)",
                 ch->health.peer_why[0] ? ch->health.peer_why : "declared failed");
    else
        snprintf(what, sizeof(what), "closed the channel");
    say(ch, what, ch->cur);
    if (answer(ch, "none", 0, 0) != XFER_SUCCESS) /* (a reader that comes back asks anew) */
        xfer_clear_error();
}

/* Every rank of the side, at the commit of step cur: no reader attached from here on. */
static void detach(xfer_channel_t *ch, int ev)
{
    xfer_file_att_t *a = &ch->file->att;
    a->attached = 0;
    a->det = ch->cur;
    a->spilled = a->spilled_bytes = 0;
    ch->loss.away = 1; /* (xferd's verdict on it is not asked again until one attaches) */
    if (ch->me == 0 && ev & (EV_CLOSED | EV_FAILED))
        say_detached(ch, ev);
    /* not a failure of the channel's any more: its sender goes on (fin_agree.c, ch_wait.c) */
    ch->health.peer_failed = 0;
    ch->health.peer_why[0] = '\0';
}

/* Rank 0: where a reader attaching at the commit of step cur begins. */
static uint64_t begin_of(xfer_channel_t *ch)
{
    xfer_file_t *f = ch->file;
    const uint64_t at = ch->cur, k = (uint64_t) ch->cfg->history;
    uint64_t lo = k && at > k ? at - k : 0, s;
    char path[1200];
    int64_t released = 0;
    if (ch->cfg->start == XFER_START_LATEST)
        return at;
    /* kept files: after the last step an earlier incarnation released */
    xfer_file_path(ch, &f->peer, "released", path, sizeof(path));
    if (f->keep && xfer_file_read_marker(ch, path, f->run, &released) && released > (int64_t) lo)
        lo = (uint64_t) released;
    for (s = lo; s < at; s++)
        if (step_there(ch, &f->own, s))
            return s;
    return at;
}

/* Every rank, at the commit of step cur: a reader attached, beginning at step @p from (rank 0:
 * incarnation @p inc). xferd's verdict on an earlier one is forgotten. */
static xfer_status_t attach(xfer_channel_t *ch, uint64_t from, const char *inc)
{
    xfer_file_att_t *a = &ch->file->att;
    const uint64_t at = ch->cur;
    xfer_status_t st = XFER_SUCCESS;
    a->attached = 1;
    a->at = at;
    a->from = from;
    ch->loss.away = 0;
    ch->health.peer_failed = 0;
    ch->health.peer_why[0] = '\0';
    if (ch->me != 0)
        return XFER_SUCCESS;
    xfer_rt_ctl_forget(ch->x, ch->peer);
    /* the notice of the earlier failure reached every rank (the detach's agreement took it) */
    XFER_CHECK_GOTO(xfer_ch_notes_reap(ch, 1), st, out);
    xfer_free(ch->proto.why_req);
    ch->proto.why_req = NULL;
    ch->proto.nwhy = 0;
    snprintf(a->inc, sizeof(a->inc), "%s", inc);
    XFER_CHECK_GOTO(answer(ch, inc, from, at), st, out);
    if (from < at)
        fprintf(stderr,
                "libxfer: channel %s: reader %s attached at step %llu (start: oldest: steps "
                "%llu..%llu from %s first)\n",
                ch->cfg->name, xfer_ch_peer_name(ch), (unsigned long long) at,
                (unsigned long long) from, (unsigned long long) at - 1,
                ch->loss.spill         ? "spill"
                : ch->cfg->history > 0 ? "history"
                                       : "the kept files");
    else
        fprintf(stderr, "libxfer: channel %s: reader %s attached at step %llu (start: %s)\n",
                ch->cfg->name, xfer_ch_peer_name(ch), (unsigned long long) at,
                ch->cfg->start == XFER_START_LATEST ? "latest" : "oldest: nothing kept before it");
    fflush(stderr);
out:
    return st;
}

xfer_status_t xfer_file_att_agree(xfer_channel_t *ch, uint64_t *mask)
{
    xfer_file_t *f = ch->file;
    xfer_file_att_t *a = &f->att;
    uint64_t v[3] = {*mask, 0, 0};
    char path[1200], inc[sizeof(a->inc)] = "", val[160];
    xfer_status_t st = XFER_SUCCESS;

    if (a->attached) {
        /* its failure as this rank knows it (rank 0 asks xferd, the others hear from it) */
        if (xfer_file_check_peer(ch) != XFER_SUCCESS)
            xfer_clear_error();
        if (ch->health.peer_failed)
            v[1] |= EV_FAILED;
        xfer_file_path(ch, &f->peer, "closed", path, sizeof(path));
        /* (a `closed` of an earlier incarnation does not end this one) */
        if (ch->me == 0 && xfer_file_marker_value(path, f->run, "reader", val, sizeof(val)) &&
            (!a->inc[0] || !val[0] || strcmp(val, a->inc) == 0))
            v[1] |= EV_CLOSED;
    }
    if (ch->me == 0) {
        xfer_file_path(ch, &f->peer, "attach", path, sizeof(path));
        if (xfer_file_marker_value(path, f->run, "reader", inc, sizeof(inc)) && inc[0] &&
            strcmp(inc, a->inc) != 0) {
            (void) xfer_file_marker_value(path, f->run, "first", val, sizeof(val));
            if (a->attached && !a->inc[0] && strcmp(val, "1") == 0) {
                /* the run's first reader, attached from step 0 (if it failed or closed already,
                 * known by its incarnation, so that it is not attached again) */
                if (!(v[1] & (EV_CLOSED | EV_FAILED)))
                    v[1] |= EV_ADOPT;
                else
                    snprintf(a->inc, sizeof(a->inc), "%s", inc);
            } else {
                v[1] |= EV_ATTACH;
                v[2] = begin_of(ch);
            }
        }
    }
    XFER_MPI_GOTO(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_UINT64_T, MPI_BOR, ch->ctl_local), st, out);
    *mask = v[0];
    if (v[1] & EV_FAILED && ch->me != 0) {
        /* rank 0 knew, and sent every other rank the notice and its words before it came here:
         * taken now, none is left unmatched */
        while (!ch->health.peer_failed && st == XFER_SUCCESS) {
            note_t n = {0, 0};
            XFER_MPI_GOTO(
                MPI_Recv(&n, 2, MPI_INT64_T, 0, XFER_NOTE_TAG, ch->ctl_local, MPI_STATUS_IGNORE),
                st, out);
            if (n.type == NOTE_FAIL)
                st = xfer_ch_take_fail(ch, n.value, 0);
        }
    }
    if (v[1] & (EV_CLOSED | EV_FAILED) || (v[1] & EV_ATTACH && a->attached))
        detach(ch, (int) v[1]); /* (an announcement replaces an attached incarnation) */
    if (v[1] & EV_ATTACH)
        st = attach(ch, v[2], inc);
    if (v[1] & EV_ADOPT && ch->me == 0) {
        snprintf(a->inc, sizeof(a->inc), "%s", inc);
        st = answer(ch, inc, 0, 0);
    }
    if (v[1])
        st = xfer_rt_agree(ch->ctl_local, st);
out:
    return st;
}

xfer_status_t xfer_file_att_keep(xfer_channel_t *ch, uint64_t bytes, int *write)
{
    const xfer_file_att_t *a = &ch->file->att;
    *write = 1;
    if (a->attached)
        return XFER_SUCCESS;
    if (!ch->loss.spill) {
        *write = ch->cfg->history > 0;
        return XFER_SUCCESS;
    }
    return xfer_ch_spill_bounds(ch, a->spilled, a->spilled_bytes, a->det, ch->cur, bytes);
}

xfer_status_t xfer_file_att_kept(xfer_channel_t *ch, int wrote)
{
    xfer_file_t *f = ch->file;
    xfer_file_att_t *a = &f->att;
    const uint64_t k = (uint64_t) ch->cfg->history;
    xfer_status_t st = XFER_SUCCESS;
    char path[1200];

    if (a->attached)
        return XFER_SUCCESS;
    if (!wrote) {
        ch->loss.unsent = 1; /* (counted unsent by the core) */
        return XFER_SUCCESS;
    }
    if (ch->loss.spill) { /* the file's size, as rank 0 sees it, on every rank */
        uint64_t size = 0;
        struct stat sb;
        xfer_file_step_path(ch, &f->own, ch->cur, path, sizeof(path));
        if (ch->me == 0 && stat(path, &sb) == 0)
            size = (uint64_t) sb.st_size;
        XFER_MPI_GOTO(MPI_Bcast(&size, 1, MPI_UINT64_T, 0, ch->ctl_local), st, out);
        a->spilled++;
        a->spilled_bytes += size;
    } else if (k > 0 && ch->cur >= k && !f->keep) { /* history's ring: the step K back goes */
        const uint64_t old = ch->cur - k;
        xfer_file_step_path(ch, &f->own, old, path, sizeof(path));
        if (ch->me == 0)
            unlink(path);
        if (old >= a->det && ch->stats.steps_sent > 0) { /* written for nobody after all */
            ch->stats.steps_sent--;
            ch->stats.steps_unsent++;
        }
    }
out:
    return st;
}

xfer_status_t xfer_file_att_room(xfer_channel_t *ch, int *met)
{
    const xfer_file_t *f = ch->file;
    const xfer_file_att_t *a = &f->att;
    const uint64_t w = (uint64_t) ch->cfg->max_in_flight_steps;
    uint64_t k, need;
    char path[1200], val[160];
    int64_t released = 0;

    *met = 1;
    if (!a->attached || ch->cur < a->at || (k = ch->cur - a->at) <= w)
        return XFER_SUCCESS;
    need = a->from + k - w; /* the reader released this many steps' worth since it began */
    if (f->keep) {
        xfer_file_path(ch, &f->peer, "released", path, sizeof(path));
        if (!xfer_file_read_marker(ch, path, f->run, &released) && !ch->x->run_id[0])
            return XFER_SUCCESS; /* a receiver of another launch, which may run later */
        if (released >= (int64_t) need)
            return XFER_SUCCESS;
    } else if (!step_there(ch, &f->own, need - 1)) {
        return XFER_SUCCESS;
    }
    xfer_file_path(ch, &f->peer, "closed", path, sizeof(path));
    *met = xfer_file_marker_value(path, f->run, "reader", val, sizeof(val)) &&
           (!a->inc[0] || !val[0] || strcmp(val, a->inc) == 0);
    return XFER_SUCCESS;
}

/* A receiving rank: the sender's answer (SENDER.attached) for this incarnation; *@p got 1 with
 * where it begins in *@p from and *@p at. */
static void read_answer(xfer_channel_t *ch, uint64_t *from, uint64_t *at, int *got)
{
    xfer_file_t *f = ch->file;
    const xfer_file_att_t *a = &f->att;
    char path[1200], val[160];
    *got = 0;
    xfer_file_path(ch, &f->peer, "attached", path, sizeof(path));
    if (!xfer_file_marker_value(path, f->peer.run, "reader", val, sizeof(val)))
        return;
    if (!strcmp(val, "-") && a->first == 1) { /* launched with the sender: from step 0 */
        *from = *at = 0;
        *got = 1;
    } else if (!strcmp(val, a->me)) {
        (void) xfer_file_marker_value(path, f->peer.run, "from", val, sizeof(val));
        *from = strtoull(val, NULL, 10);
        (void) xfer_file_marker_value(path, f->peer.run, "at", val, sizeof(val));
        *at = strtoull(val, NULL, 10);
        *got = 1;
    }
}

xfer_status_t xfer_file_att_reader(xfer_channel_t *ch, uint64_t *s, int *ready)
{
    xfer_file_t *f = ch->file;
    xfer_file_att_t *a = &f->att;
    char path[1200], extra[300], val[160];
    uint64_t from = 0, at = 0;
    xfer_status_t st = XFER_SUCCESS;
    int got = 0;

    *ready = a->answered;
    if (a->answered)
        return XFER_SUCCESS;
    xfer_file_path(ch, &f->own, "attach", path, sizeof(path));
    if (a->first < 0) {
        if (ch->me == 0 && !a->told) {
            /* an incarnation of this run announced itself before: this one comes back */
            const int again = xfer_file_marker_value(path, f->peer.run, "reader", val, sizeof(val));
            char closed[1200];
            xfer_file_path(ch, &f->own, "closed", closed, sizeof(closed));
            unlink(closed); /* (an earlier incarnation's: it must not end this one) */
            snprintf(extra, sizeof(extra), "reader %s\nfirst %d\n", a->me, !again);
            XFER_CHECK_GOTO(xfer_file_write_marker(ch, path, f->peer.run, extra), st, out);
            a->told = 1;
        }
        if (!xfer_file_marker_value(path, f->peer.run, "reader", val, sizeof(val)) ||
            strcmp(val, a->me) != 0)
            return XFER_SUCCESS; /* (rank 0 has not announced it yet) */
        (void) xfer_file_marker_value(path, f->peer.run, "first", val, sizeof(val));
        a->first = strcmp(val, "1") == 0;
    }
    read_answer(ch, &from, &at, &got);
    if (!got) {
        /* a sender that ended answers no more: begin where the files say */
        int64_t end = -1, released = 0;
        xfer_file_path(ch, &f->peer, "end", path, sizeof(path));
        if (!xfer_file_read_marker(ch, path, f->peer.run, &end) || end < 0)
            return XFER_SUCCESS;
        read_answer(ch, &from, &at, &got); /* (it may have answered just before it ended) */
        if (!got) {
            xfer_file_path(ch, &f->own, "released", path, sizeof(path));
            at = (uint64_t) end;
            from = ch->cfg->start == XFER_START_LATEST ? at : 0;
            if (from == 0 && f->keep && xfer_file_read_marker(ch, path, f->peer.run, &released) &&
                released > 0)
                from = (uint64_t) released;
        }
    }
    a->answered = 1;
    a->upto = at;
    if (*s < from)
        *s = ch->cur = from;
    *ready = 1;
out:
    return st;
}

int xfer_file_att_gap(xfer_channel_t *ch, uint64_t *s)
{
    xfer_file_t *f = ch->file;
    uint64_t lim = f->att.upto, t;
    if (f->peer_end >= 0 && (uint64_t) f->peer_end > lim)
        lim = (uint64_t) f->peer_end; /* (every file there will be is there) */
    if (*s >= lim || step_there(ch, &f->peer, *s))
        return 0;
    for (t = *s + 1; t < lim; t++)
        if (step_there(ch, &f->peer, t))
            break;
    *s = ch->cur = t;
    return 1;
}
