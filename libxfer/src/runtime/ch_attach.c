/* SPDX-License-Identifier: BSD-3-Clause */
/* Readers that attach late or come back, on the stream (docs/runtime.md, "Readers that attach
 * late or come back"). A detachable channel (half duplex, on_reader_loss: continue or spill,
 * separate launches, stride 1, any policy) joins in the other direction than form_separate: the
 * reader opens a port, announces it (with xferd: an "attach" request, which xferd offers to the
 * sender's session while it holds the reader alive; without: <run dir>/<channel>.attach, port,
 * pid, host) and waits in MPI_Comm_accept (bounded by its own watchdog); the sender connects.
 * Measured on Open MPI 4.1.4 and MPICH ch3: an accept whose reader never connects, or died
 * connecting, waits for ever on both, while a connect is only started on an announcement of a
 * reader this host sees alive (and MPICH bounds it by the info key "timeout"); so the sender never
 * waits for a reader that may not come. At xfer_init the sender waits for an announcement up to
 * control.timeout_ms (none when XFER_ABSENT names the reader), then goes on detached with one line
 * from rank 0. While detached (never attached, or the reader failed), every step's end is a round:
 * rank 0 looks for an announcement, one MPI_Bcast tells the side, and on one the side connects in
 *   that same call, forms a new stream for this channel alone (the open's handshake and plans,
 *   stream_open.c) and moves it under the application's handle; the old one is dropped locally,
 *   never waited on. Step numbers stay the sender's: every step after an attach carries the
 *   sender's number (xfer.step), the reader's xfer_step_begin reports it.
 *   Ranks learn of a loss at different steps: before its first round the side agrees, once, from
 *   which step end on it holds rounds (ch_loss.c posts the agreement when a rank learns). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "transport.h"

int xfer_rt_detachable(const struct xfer *x, int index)
{
    const xfer_cfg_channel_t *c = &x->cfg->channels[index];
    const char *loss = xfer_env_str("XFER_ON_READER_LOSS");
    int cont = c->on_reader_loss == XFER_LOSS_CONTINUE || c->on_reader_loss == XFER_LOSS_SPILL;
    long stride = xfer_env_long("XFER_STRIDE", c->stride);
    xfer_transport_t t;
    if (loss)
        cont = strcmp(loss, "continue") == 0 || strcmp(loss, "spill") == 0;
    if (!cont || c->duplex == XFER_DUPLEX_FULL || x->launch != XFER_LAUNCH_SEPARATE)
        return 0;
    if (xfer_rt_transport(x, index, &t) != XFER_SUCCESS || t != XFER_TRANSPORT_STREAM)
        return 0;
    return stride <= 1; /* (policy latest too: its rounds carry over, transplant below) */
}

/* ---- the announcement: <run dir>/<channel>.attach -------------------------------------------- */

static void attach_path(const struct xfer *x, int index, char *dir, size_t dlen, char *path,
                        size_t plen)
{
    xfer_rt_run_dir(x, dir, dlen);
    snprintf(path, plen, "%s/%s.attach", dir, x->cfg->channels[index].name);
}

/* Rank 0 of the reader: the port, then its pid and host (write, then rename: whole or none). */
static xfer_status_t announce(const char *path, const char *port)
{
    char tmp[1100], host[256] = "";
    FILE *f;
    gethostname(host, sizeof(host) - 1);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long) getpid());
    if (!(f = fopen(tmp, "w")))
        return XFER_ERR(XFER_ERR_INVALID_ARG, "cannot write %s: %s", tmp, strerror(errno));
    if (fprintf(f, "%s\n%ld %s\n", port, (long) getpid(), host) < 0 || fclose(f) != 0) {
        unlink(tmp);
        return XFER_ERR(XFER_ERR_INVALID_ARG, "cannot write %s", tmp);
    }
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return XFER_ERR(XFER_ERR_INVALID_ARG, "cannot rename %s to %s: %s", tmp, path,
                        strerror(errno));
    }
    return XFER_SUCCESS;
}

/* Rank 0 of the sender: an announcement of a live reader? It is taken (removed) either way; one
 * whose process this host knows is gone is dropped with a line. */
static int take(const char *channel, const char *reader, const char *path, char *port, size_t len)
{
    char line[512] = "", host[256] = "", me[256] = "";
    long pid = 0;
    FILE *f = fopen(path, "r");
    int ok;
    if (!f)
        return 0;
    ok = fgets(port, (int) len, f) != NULL && fgets(line, sizeof(line), f) != NULL;
    fclose(f);
    port[strcspn(port, "\n")] = '\0';
    if (!ok || sscanf(line, "%ld %255s", &pid, host) != 2 || !port[0])
        return 0; /* (not written whole yet: the rename makes this rare) */
    unlink(path);
    gethostname(me, sizeof(me) - 1);
    if (strcmp(host, me) == 0 && pid > 0 && kill((pid_t) pid, 0) != 0 && errno == ESRCH) {
        fprintf(stderr,
                "libxfer: channel %s: reader %s announced itself (pid %ld) and is gone: not "
                "attached\n",
                channel, reader, pid);
        fflush(stderr);
        return 0;
    }
    return 1;
}

/* Rank 0 of the sender: a reader's offer, from xferd when the run has one (it offers only a
 * live reader's, and drops it when that reader is declared failed; *@p session: the reader's
 * session), else from the run directory. */
static int take_offer(struct xfer *x, int index, char *port, size_t len, int64_t *session)
{
    const xfer_cfg_channel_t *c = &x->cfg->channels[index];
    char dir[512], path[1024];
    *session = 0;
    if (x->use_ctl)
        return xfer_rt_ctl_take_offer(x, index, port, len, session);
    attach_path(x, index, dir, sizeof(dir), path, sizeof(path));
    return take(c->name, x->cfg->components[c->to].name, path, port, len);
}

/* Collective over @p comm: connect to the reader's port (MPICH bounds it by "timeout"). */
static xfer_status_t connect_reader(struct xfer *x, const xfer_cfg_channel_t *c, MPI_Comm comm,
                                    const char *port, MPI_Comm *inter)
{
    MPI_Info info = MPI_INFO_NULL;
    char secs[32];
    int rc;
    snprintf(secs, sizeof(secs), "%d", x->timeout_ms / 1000 > 0 ? x->timeout_ms / 1000 : 1);
    if (MPI_Info_create(&info) != MPI_SUCCESS || MPI_Info_set(info, "timeout", secs) != MPI_SUCCESS)
        return XFER_ERR(XFER_ERR_MPI, "channel %s: MPI_Info for the connect", c->name);
    rc = MPI_Comm_connect(port, info, 0, comm, inter);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS)
        return xfer_err_mpi(rc, __func__, "MPI_Comm_connect");
    return MPI_Comm_set_errhandler(*inter, MPI_ERRORS_RETURN) == MPI_SUCCESS
               ? XFER_SUCCESS
               : XFER_ERR(XFER_ERR_MPI, "channel %s: errhandler", c->name);
}

/* Is component @p name in XFER_ABSENT (comma separated)? */
static int absent(const char *name)
{
    const char *e = xfer_env_str("XFER_ABSENT"), *p;
    size_t n = strlen(name);
    for (p = e; p && *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && strncmp(p, name, n) == 0)
            return 1;
        p += k + (p[k] == ',');
    }
    return 0;
}

/* The reader: open a port, announce it, accept (bounded by the watchdog). */
static xfer_status_t offer(struct xfer *x, int index, MPI_Comm *inter, int *disconnect)
{
    const xfer_cfg_channel_t *c = &x->cfg->channels[index];
    const char *peer = x->cfg->components[c->from].name;
    char dir[512], path[1024], what[1400], port[MPI_MAX_PORT_NAME + 1] = "", msg[1024] = "";
    int status = XFER_SUCCESS, rank = 0, rc, bound;
    xfer_status_t st = XFER_SUCCESS;
    xfer_rt_watch_t *w;

    XFER_MPI_GOTO(MPI_Comm_rank(x->comm, &rank), st, out);
    attach_path(x, index, dir, sizeof(dir), path, sizeof(path));
    if (x->use_ctl)
        snprintf(path, sizeof(path), "xferd");
    if (rank == 0) {
        xfer_errh_guard_t g;
        if (!x->use_ctl && mkdir(dir, 0700) != 0 && errno != EEXIST)
            st = XFER_ERR(XFER_ERR_INVALID_ARG, "channel %s: cannot create run directory %s: %s",
                          c->name, dir, strerror(errno));
        xfer_errh_guard_begin(&g); /* MPI_Open_port reports on no communicator */
        if (st == XFER_SUCCESS && (rc = MPI_Open_port(MPI_INFO_NULL, port)) != MPI_SUCCESS)
            st = XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                          "channel %s: MPI_Open_port failed: this MPI cannot connect separately "
                          "launched jobs (launch as one MPMD job, or use Open MPI with "
                          "ompi-server or MPICH ch3)",
                          c->name);
        st = xfer_errh_guard_end(&g, st);
        if (st == XFER_SUCCESS)
            st = x->use_ctl ? xfer_rt_ctl_attach(x, index, port) : announce(path, port);
        status = (int) st;
        if (st != XFER_SUCCESS)
            snprintf(msg, sizeof(msg), "%s", xfer_last_error());
    }
    XFER_MPI_GOTO(MPI_Bcast(&status, 1, MPI_INT, 0, x->comm), st, out);
    if (status != XFER_SUCCESS) {
        XFER_MPI_GOTO(MPI_Bcast(msg, (int) sizeof(msg), MPI_CHAR, 0, x->comm), st, out);
        return rank == 0 ? (xfer_status_t) status : xfer_err_raw((xfer_status_t) status, "%s", msg);
    }
    /* The sender comes to this channel only after forming those before it (chaos.flows seed
     * 1027: a sender still forming an earlier channel through ompi-server when a bound of
     * control.timeout_ms ended its reader). */
    bound = xfer_rt_form_bound(x, index);
    snprintf(what, sizeof(what),
             "channel %s: announced to component %s (through %s), waiting for it to connect at "
             "its next step",
             c->name, peer, path);
    if (!(w = xfer_rt_watch_begin(bound, what)))
        return XFER_ERR(XFER_ERR_INTERNAL, "cannot start the connection watchdog");
    rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, x->comm, inter);
    xfer_rt_watch_end(w);
    if (rank == 0)
        MPI_Close_port(port);
    if (rc != MPI_SUCCESS)
        return xfer_err_mpi(rc, __func__, "MPI_Comm_accept");
    *disconnect = 1;
out:
    return st;
}

/* The channel's on_reader_loss (continue or spill: detachable), after XFER_ON_READER_LOSS. */
static const char *loss_word(const xfer_cfg_channel_t *c)
{
    const char *e = xfer_env_str("XFER_ON_READER_LOSS");
    if (e)
        return strcmp(e, "spill") == 0 ? "spill" : "continue";
    return c->on_reader_loss == XFER_LOSS_SPILL ? "spill" : "continue";
}

xfer_status_t xfer_rt_attach_form(struct xfer *x, int index, MPI_Comm *inter, int *disconnect)
{
    const xfer_cfg_channel_t *c = &x->cfg->channels[index];
    const char *reader = x->cfg->components[c->to].name;
    char port[MPI_MAX_PORT_NAME + 1] = "";
    int found = 0, rank = 0, gone;
    int64_t session = 0;
    xfer_status_t st = XFER_SUCCESS;

    if (c->from != x->comp)
        return offer(x, index, inter, disconnect);
    XFER_MPI_GOTO(MPI_Comm_rank(x->comm, &rank), st, out);
    gone = absent(reader);
    if (rank == 0 && !gone) { /* (a bounded wait for an offer another job makes) */
        const double deadline = MPI_Wtime() + 1e-3 * x->timeout_ms;
        const struct timespec nap = {0, 10 * 1000 * 1000};
        while (!(found = take_offer(x, index, port, sizeof(port), &session)) &&
               MPI_Wtime() < deadline)
            nanosleep(&nap, NULL);
    }
    XFER_MPI_GOTO(MPI_Bcast(&found, 1, MPI_INT, 0, x->comm), st, out);
    if (!found) {
        if (rank == 0) {
            if (gone)
                fprintf(stderr,
                        "libxfer: channel %s: reader %s is absent (XFER_ABSENT); "
                        "on_reader_loss: %s: detached until it attaches\n",
                        c->name, reader, loss_word(c));
            else
                fprintf(stderr,
                        "libxfer: channel %s: no reader %s within %d ms; on_reader_loss: "
                        "%s: detached until it attaches\n",
                        c->name, reader, x->timeout_ms, loss_word(c));
            fflush(stderr);
        }
        return XFER_SUCCESS; /* *inter stays MPI_COMM_NULL: the channel starts detached */
    }
    XFER_CHECK_GOTO(connect_reader(x, c, x->comm, port, inter), st, out);
    *disconnect = 1;
out:
    return st;
}

/* ---- the rounds of a detached sending side --------------------------------------------------- */

/* Post this rank's part of the side's agreement on where the rounds begin (ch_loss.c, when this
 * rank learns of the loss; @p final: in xfer_finalize, no round is held at all). */
void xfer_ch_attach_enter(xfer_channel_t *ch, int final)
{
    xfer_rt_loss_t *l = &ch->loss;
    if (!l->attachable || l->entered || l->comm == MPI_COMM_NULL)
        return;
    l->enter_in[0] = ch->stats.steps;
    l->enter_in[1] = (uint64_t) final;
    if (MPI_Iallreduce(l->enter_in, l->enter_out, 2, MPI_UINT64_T, MPI_MAX, l->comm, &l->enter) !=
        MPI_SUCCESS) {
        l->attachable = 0; /* (stays detached: said once, by rank 0) */
        return;
    }
    l->entered = 1;
}

/* The side's agreement: every rank posted it once it learned of the loss, which each rank does
 * within control.timeout_ms of the loss (its own waits on the reader end then); rounds begin two
 * step ends after the last rank's (the step it learned in ends, then one more). */
static xfer_status_t entered(xfer_channel_t *ch)
{
    xfer_rt_loss_t *l = &ch->loss;
    if (l->entered == 0)
        xfer_ch_attach_enter(ch, 0);
    if (l->entered != 1)
        return XFER_SUCCESS;
    if (MPI_Wait(&l->enter, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return XFER_ERR(XFER_ERR_MPI, "channel %s: the side's agreement on its rounds",
                        ch->cfg->name);
    l->entered = 2;
    l->first_round = l->enter_out[1] ? UINT64_MAX : l->enter_out[0] + 2;
    return XFER_SUCCESS;
}

xfer_status_t xfer_ch_attach_due(xfer_channel_t *ch, int ahead, int *due)
{
    xfer_rt_loss_t *l = &ch->loss;
    xfer_status_t st = XFER_SUCCESS;
    *due = 0;
    if (!l->attachable || l->closed || !l->lost)
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(entered(ch), st, out);
    *due = l->entered == 2 && ch->stats.steps + (uint64_t) ahead >= l->first_round;
out:
    return st;
}

/* Move the new stream @p fresh under the application's handle @p ch; the old state ends in
 * @p fresh, freed locally (its reader is gone: nothing is waited on). The flow state stays with
 * the handle (policy latest: its rounds' communicators, the broadcasts rank 0 may still have in
 * flight on them and the rounds' count, the same on every rank of the side; nothing is held, the
 * loss counted the held steps unsent): the new stream's own, never used, is freed here, as every
 * rank of the side is. */
static void transplant(xfer_channel_t *ch, xfer_channel_t *fresh)
{
    xfer_channel_t old = *ch;
    MPI_Comm spare = fresh->loss.comm;
    xfer_rt_keep_t none = fresh->keep; /* (empty: the kept steps stay with the handle) */
    xfer_rt_flow_t unused = fresh->flow;
    *ch = *fresh;
    *fresh = old;
    ch->stats = old.stats;
    ch->loss = old.loss;
    ch->keep = old.keep;
    ch->flow = old.flow;
    fresh->keep = none;
    fresh->flow = unused;
    if (unused.comm != MPI_COMM_NULL && MPI_Comm_free(&fresh->flow.comm) != MPI_SUCCESS)
        fresh->flow.comm = MPI_COMM_NULL; /* (left to the MPI: nothing waits on it) */
    if (unused.fin != MPI_COMM_NULL && MPI_Comm_free(&fresh->flow.fin) != MPI_SUCCESS)
        fresh->flow.fin = MPI_COMM_NULL;
    ch->loss.lost = 0;
    ch->loss.never = 0;
    ch->loss.agreed = 0; /* (the next loss is agreed on anew at a commit the side makes together) */
    ch->loss.late_st = XFER_SUCCESS;
    ch->loss.attaches++;
    ch->loss.base = old.stats.steps;
    ch->loss.entered = 0;
    fresh->loss.comm = spare;
    if (spare != MPI_COMM_NULL) /* (the new one's duplicate: every rank of the side is here) */
        MPI_Comm_free(&fresh->loss.comm);
}

xfer_status_t xfer_ch_attach_round(xfer_channel_t *ch, int pending)
{
    xfer_rt_loss_t *l = &ch->loss;
    struct xfer *x = ch->x;
    const xfer_cfg_channel_t *c = ch->cfg;
    const char *reader = xfer_ch_peer_name(ch);
    char port[MPI_MAX_PORT_NAME + 1] = "";
    xfer_channel_t *fresh = NULL;
    MPI_Comm inter = MPI_COMM_NULL;
    int found = 0;
    int64_t session = 0;
    xfer_status_t st;

    if (!l->attachable || l->closed || !l->lost)
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(entered(ch), st, out);
    if (l->entered != 2 || ch->stats.steps + (uint64_t) pending < l->first_round)
        return XFER_SUCCESS;
    if (ch->me == 0)
        found = take_offer(x, ch->index, port, sizeof(port), &session);
    XFER_MPI_GOTO(MPI_Bcast(&found, 1, MPI_INT, 0, l->comm), st, out);
    if (!found)
        return XFER_SUCCESS;
    /* the side connects, then forms the channel's stream anew with the reader (collective) */
    st = xfer_rt_agree(l->comm, connect_reader(x, c, l->comm, port, &inter));
    if (st == XFER_SUCCESS)
        st = xfer_rt_agree(l->comm, xfer_rt_channel_new(x, ch->index, ch->ops, inter, 1, &fresh));
    if (st == XFER_SUCCESS) {
        inter = MPI_COMM_NULL; /* (the channel owns it) */
        /* xferd's verdicts on this incarnation only, from the open on (rank 0 asks xferd) */
        fresh->health.peer_session = session;
        st = xfer_rt_agree(l->comm, fresh->ops->open(fresh));
    }
    if (st != XFER_SUCCESS) {
        if (ch->me == 0) {
            fprintf(stderr, "libxfer: channel %s: reader %s could not attach: %s\n", c->name,
                    reader, xfer_last_error());
            fflush(stderr);
        }
        xfer_rt_channel_free(&fresh, 0);
        xfer_clear_error();
        return XFER_SUCCESS; /* still detached; a later announcement may attach */
    }
    transplant(ch, fresh);
    xfer_rt_channel_free(&fresh, 0);
    XFER_CHECK_GOTO(xfer_ch_keep_agree(ch, l->comm), st, out);
    if (ch->me == 0) {
        const uint64_t at = ch->loss.base, from = xfer_ch_keep_first(ch);
        if (!ch->keep.on)
            fprintf(stderr,
                    "libxfer: channel %s: reader %s attached at step %llu (start: latest)\n",
                    c->name, reader, (unsigned long long) at);
        else if (from < at)
            fprintf(stderr,
                    "libxfer: channel %s: reader %s attached at step %llu (start: oldest: steps "
                    "%llu..%llu from %s first)\n",
                    c->name, reader, (unsigned long long) at, (unsigned long long) from,
                    (unsigned long long) at - 1, ch->keep.spill ? "spill" : "history");
        else
            fprintf(stderr,
                    "libxfer: channel %s: reader %s attached at step %llu (start: oldest: nothing "
                    "kept before it)\n",
                    c->name, reader, (unsigned long long) at);
        fflush(stderr);
    }
    /* the kept steps first (start: oldest), each with its own number; then the step in hand */
    return xfer_ch_keep_replay(ch, pending);
out:
    return st;
}

xfer_status_t xfer_ch_attach_detached(xfer_channel_t *ch)
{
    xfer_rt_loss_t *l = &ch->loss;
    ch->health.failed = 1; /* no stream yet: the finish's passes leave it out */
    l->lost = 1;
    l->never = 1;
    l->from = 0;
    l->entered = 2; /* every rank starts detached at step 0: rounds from the first step end */
    l->first_round = 1;
    return XFER_SUCCESS;
}
