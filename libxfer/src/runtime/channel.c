/* SPDX-License-Identifier: BSD-3-Clause */
/* A channel's life cycle: creation, the handshake of both sides' descriptions, the finish
 * (ends, drain, goodbye) and the free; small accessors. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../coll/coll.h"
#include "../sched/exec.h"
#include "../select/select.h"
#include "ch_file.h"

xfer_status_t xfer_rt_channel_new(struct xfer *x, int index, MPI_Comm inter, int disconnect,
                                  xfer_channel_t **out)
{
    const xfer_cfg_channel_t *c = &x->cfg->channels[index];
    xfer_channel_t *ch;
    xfer_status_t st = XFER_SUCCESS;
    const char *env_alg = xfer_env_str("XFER_ALGORITHM");
    const xfer_algo_t *ring;
    int i, bits[2] = {0, 0};

    ch = xfer_calloc(1, sizeof(*ch));
    if (!ch)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel");
    ch->x = x;
    ch->ops = &xfer_stream_ops; /* xfer_chf_open makes it a file channel */
    ch->index = index;
    ch->cfg = c;
    ch->inter = inter;
    ch->disconnect = disconnect;
    ch->ctl_inter = ch->ctl_local = MPI_COMM_NULL;
    ch->side = c->from == x->comp ? 0 : 1;
    ch->peer = ch->side == 0 ? c->to : c->from;
    ch->proto.eos[0] = ch->proto.eos[1] = -1;
    ch->health.lost_step = UINT64_MAX;
    ch->role = c->duplex == XFER_DUPLEX_FULL ? XFER_ROLE_BOTH
               : ch->side == 0               ? XFER_ROLE_SEND
                                             : XFER_ROLE_RECV;
    /* Precedence: file < environment. A ring topology keeps the automatic choice on rings;
     * the plan's selector does not know the workflow's topology, so the registry names the
     * ring algorithm for the duplex mode now. */
    snprintf(ch->algorithm, sizeof(ch->algorithm), "%s", env_alg ? env_alg : c->algorithm);
    if (!env_alg && strcmp(c->algorithm, "auto") == 0 && x->cfg->topology == XFER_TOPOLOGY_RING &&
        (ring = xfer_select_ring_default(c->duplex == XFER_DUPLEX_FULL)))
        snprintf(ch->algorithm, sizeof(ch->algorithm), "%s", ring->name);
    ch->lay.attr_cap = ((size_t) c->attributes_bytes + 7) & ~(size_t) 7;
    ch->lay.attr_user = (size_t) c->attributes_bytes;
    ch->nds = c->ndatasets;
    ch->ds = xfer_calloc((size_t) ch->nds, sizeof(*ch->ds));
    ch->nslots = c->max_in_flight_steps + 1;
    ch->slots = xfer_calloc((size_t) ch->nslots, sizeof(*ch->slots));
    if (!ch->ds || !ch->slots) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel");
        goto fail;
    }
    for (i = 0; i < ch->nslots; i++)
        ch->slots[i].comm = ch->slots[i].merged = MPI_COMM_NULL;
    for (i = 0; i < ch->nds; i++) {
        xfer_rt_dset_t *d = &ch->ds[i];
        const int k = c->datasets[i].from == c->from ? 0 : 1;
        d->cfg = &c->datasets[i];
        d->out = k == ch->side;
        d->bit = bits[k]++;
        d->esize = xfer_cfg_dataset_esize(d->cfg);
        d->dyn = d->cfg->joined || d->cfg->variable;
        d->sstep = UINT64_MAX;
        ch->sends[k] = 1;
    }
    if (inter == MPI_COMM_NULL) { /* the file transport: no intercommunicator */
        XFER_MPI_GOTO(MPI_Comm_rank(x->comm, &ch->me), st, fail);
        XFER_MPI_GOTO(MPI_Comm_size(x->comm, &ch->nlocal), st, fail);
        ch->nremote = x->cfg->components[ch->peer].nprocs;
    } else {
        XFER_MPI_GOTO(MPI_Comm_rank(inter, &ch->me), st, fail);
        XFER_MPI_GOTO(MPI_Comm_size(inter, &ch->nlocal), st, fail);
        XFER_MPI_GOTO(MPI_Comm_remote_size(inter, &ch->nremote), st, fail);
        XFER_MPI_GOTO(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN), st, fail);
    }
    if (inter != MPI_COMM_NULL) /* the stream's: after the datasets, before the layout */
        XFER_CHECK_GOTO(xfer_ch_joined_new(ch), st, fail);
    for (i = 0; i < ch->nds; i++)
        if (ch->ds[i].cfg->joined && !ch->ds[i].out &&
            !(ch->ds[i].srows = xfer_calloc((size_t) ch->nremote, sizeof(uint64_t)))) {
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel");
            goto fail;
        }
    if (ch->me == 0 && ch->sends[ch->side] &&
        !(ch->proto.rel_of = xfer_calloc((size_t) ch->nremote, sizeof(uint64_t)))) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel");
        goto fail;
    }
    if (inter != MPI_COMM_NULL)
        XFER_MPI_GOTO(MPI_Comm_dup(inter, &ch->ctl_inter), st, fail);
    XFER_MPI_GOTO(MPI_Comm_dup(x->comm, &ch->ctl_local), st, fail);
    *out = ch;
    return XFER_SUCCESS;
fail:
    ch->inter = MPI_COMM_NULL; /* the caller still owns it */
    xfer_rt_channel_free(&ch, 0);
    return st;
}

/* One line per dataset, the same text on both sides when they agree. */
static void describe(const xfer_channel_t *ch, int i, char *buf, size_t len)
{
    const xfer_cfg_dataset_t *d = &ch->cfg->datasets[i];
    size_t o = (size_t) snprintf(buf, len, "%s", xfer_type_name(d->type));
    int k;
    for (k = 0; d->record && k < d->record->nfields && o < len; k++) { /* {id:int64@0,...} */
        const xfer_record_field_t *f = &d->record->fields[k];
        o += (size_t) snprintf(buf + o, len - o, "%s%s:%s*%u@%zu%s", k ? "," : "{", f->name,
                               xfer_type_name(f->type), (unsigned) f->count, f->offset,
                               k == d->record->nfields - 1 ? "}" : "");
    }
    if (o < len)
        o += (size_t) snprintf(buf + o, len - o, "[");
    for (k = 0; k < d->ndims && o < len; k++) /* "[joined,3]", "[variable,64]", "[13,9]" */
        if ((k == 0 && d->joined) || (d->variable >> k & 1u))
            o += (size_t) snprintf(buf + o, len - o, "%s%s", k ? "," : "",
                                   k == 0 && d->joined ? "joined" : "variable");
        else
            o += (size_t) snprintf(buf + o, len - o, "%s%llu", k ? "," : "",
                                   (unsigned long long) d->dims[k]);
    static const char *const sel[] = {"all", "rows", "columns", "block", "user", "channel"};
    if (o < len)
        snprintf(buf + o, len - o, "] from %s, selection %s", ch->x->cfg->components[d->from].name,
                 (unsigned) d->selection < 6 ? sel[d->selection] : "?");
}

/* What one side sends the other at formation: a text table, compared line by line. */
static size_t channel_table(const xfer_channel_t *ch, char *buf, size_t len)
{
    size_t o = 0;
    int i;
    o += (size_t) snprintf(
        buf + o, len - o, "duplex %s\nalgorithm %s\nhier %d %d %d\ndirect path %s\n",
        ch->cfg->duplex == XFER_DUPLEX_FULL ? "full" : "half", ch->algorithm, ch->cfg->hier.enabled,
        ch->cfg->hier.leaders_per_node, ch->cfg->hier.sync,
        xfer_env_long("XFER_RT_DIRECT", 0) > 0 ? "forced (XFER_RT_DIRECT)" : "when needed");
    for (i = 0; i < ch->nds && o < len; i++) {
        char d[2048];
        describe(ch, i, d, sizeof(d));
        o += (size_t) snprintf(buf + o, len - o, "dataset %s %s\n", ch->cfg->datasets[i].name, d);
    }
    return o < len ? o : len;
}

/* Compare the two tables; the first difference, in words, into @p msg. */
static int compare_tables(const xfer_channel_t *ch, const char *mine, const char *theirs, char *msg,
                          size_t len)
{
    const char *me = ch->x->cfg->components[ch->x->comp].name, *peer = xfer_ch_peer_name(ch);
    const char *p;
    char line[2048], key[128];
    /* every line of mine must be in theirs; then the reverse */
    int pass;
    for (pass = 0; pass < 2; pass++) {
        const char *a = pass == 0 ? mine : theirs, *b = pass == 0 ? theirs : mine;
        p = a;
        while (*p) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t) (nl - p) : strlen(p);
            const char *q;
            size_t kn;
            snprintf(line, sizeof(line), "%.*s", (int) n, p);
            p += n + (nl ? 1 : 0);
            /* the key: first two words for datasets, first word otherwise */
            q = strchr(line, ' ');
            if (q && strncmp(line, "dataset ", 8) == 0)
                q = strchr(q + 1, ' ');
            kn = q ? (size_t) (q - line) : strlen(line);
            snprintf(key, sizeof(key), "%.*s", (int) kn, line);
            {
                const char *found = NULL, *s = b;
                char other[2048];
                while (*s) {
                    const char *nl2 = strchr(s, '\n');
                    size_t n2 = nl2 ? (size_t) (nl2 - s) : strlen(s);
                    if (n2 >= kn && strncmp(s, key, kn) == 0 && (n2 == kn || s[kn] == ' ')) {
                        found = s;
                        snprintf(other, sizeof(other), "%.*s", (int) n2, s);
                        break;
                    }
                    s += n2 + (nl2 ? 1 : 0);
                }
                if (!found) {
                    snprintf(msg, len, "%s: declared at %s, missing at %s", key,
                             pass == 0 ? me : peer, pass == 0 ? peer : me);
                    return 1;
                }
                if (strcmp(other, line) != 0) {
                    const char *va = line + kn + (line[kn] ? 1 : 0);
                    const char *vb = other + kn + (other[kn] ? 1 : 0);
                    snprintf(msg, len, "%s: %s at %s, %s at %s", key, pass == 0 ? va : vb, me,
                             pass == 0 ? vb : va, peer);
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* Both sides check that they describe the channel alike: duplex, algorithm, datasets. */
xfer_status_t xfer_rt_channel_handshake(xfer_channel_t *ch)
{
    enum { TABLE = 16384 };
    char *mine = NULL, *theirs = NULL, msg[600] = "";
    int lens[2] = {0, 0}, bad = 0;
    MPI_Request req[2];
    xfer_status_t st = XFER_SUCCESS;

    mine = xfer_calloc(1, TABLE);
    theirs = xfer_calloc(1, TABLE);
    if (!mine || !theirs) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "handshake");
        goto out;
    }
    lens[0] = (int) channel_table(ch, mine, TABLE);
    if (ch->me == 0) {
        XFER_MPI_GOTO(MPI_Irecv(theirs, TABLE - 1, MPI_CHAR, 0, 1, ch->ctl_inter, &req[0]), st,
                      out);
        XFER_MPI_GOTO(MPI_Isend(mine, lens[0], MPI_CHAR, 0, 1, ch->ctl_inter, &req[1]), st, out);
        st = xfer_ch_wait_req(ch, &req[0], "exchanging the channel description");
        if (st == XFER_SUCCESS)
            st = xfer_ch_wait_req(ch, &req[1], "exchanging the channel description");
        if (st == XFER_SUCCESS)
            bad = compare_tables(ch, mine, theirs, msg, sizeof(msg));
    }
    {
        int v[2] = {(int) st, bad};
        XFER_MPI_GOTO(MPI_Bcast(v, 2, MPI_INT, 0, ch->ctl_local), st, out);
        XFER_MPI_GOTO(MPI_Bcast(msg, (int) sizeof(msg), MPI_CHAR, 0, ch->ctl_local), st, out);
        if (v[0] != XFER_SUCCESS)
            return ch->me == 0 ? (xfer_status_t) v[0]
                               : XFER_ERR((xfer_status_t) v[0],
                                          "channel %s: the handshake with %s failed on rank 0",
                                          ch->cfg->name, xfer_ch_peer_name(ch));
        if (v[1])
            st = XFER_ERR(XFER_ERR_MISMATCH, "channel %s: %s", ch->cfg->name, msg);
    }
out:
    xfer_free(mine);
    xfer_free(theirs);
    if (st != XFER_SUCCESS)
        ch->health.failed = 1;
    return st;
}

/* ---- the finish (xfer_finalize, context.c) ------------------------------------------------
 * Finalize finishes every channel of the context together, in four passes, so that no
 * component waits on one channel while its peer waits on another (docs/runtime.md, "Several
 * channels"): (1) every channel says it ends, without waiting: the sending sides announce their
 * last step (EOS), a receive-only side asks its sender to stop (CLOSE); (2) every step that was
 * announced completes, on all channels at once; (3) both rank 0s of each channel say goodbye
 * (FIN), all channels at once; (4) the last notes and a barrier per channel, in file order. */

xfer_status_t xfer_rt_channel_end(xfer_channel_t *ch)
{
    return ch->ops->end(ch);
}

static int drained(xfer_channel_t *ch)
{
    return ch->ops->drained(ch);
}

static int parted(xfer_channel_t *ch)
{
    return ch->ops->parted(ch);
}

/* (2) every channel's steps in flight, all at once */
xfer_status_t xfer_rt_channels_drain(struct xfer *x)
{
    const xfer_ch_wait_all_t w = {.each = drained, .what = "finishing the steps in flight"};
    return xfer_ch_wait_all(x, &w);
}

xfer_status_t xfer_rt_channel_goodbye(xfer_channel_t *ch)
{
    return ch->ops->goodbye ? ch->ops->goodbye(ch) : XFER_SUCCESS;
}

/* (3) the peers' goodbyes, all at once */
xfer_status_t xfer_rt_channels_part(struct xfer *x)
{
    const xfer_ch_wait_all_t w = {.each = parted, .what = "saying goodbye"};
    return xfer_ch_wait_all(x, &w);
}

xfer_status_t xfer_rt_channel_close(xfer_channel_t *ch)
{
    return ch->ops->close ? ch->ops->close(ch) : XFER_SUCCESS;
}

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

void xfer_rt_channel_free(xfer_channel_t **pch, int collective)
{
    xfer_channel_t *ch = pch ? *pch : NULL;
    int i;
    if (!ch)
        return;
    if (ch->ops && ch->ops->free)
        ch->ops->free(ch);
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
        xfer_free(ch->ds[i].g_start);
        xfer_free(ch->ds[i].g_count);
        xfer_free(ch->ds[i].g_off);
        xfer_free(ch->ds[i].gs_start);
        xfer_free(ch->ds[i].gs_count);
        xfer_free(ch->ds[i].gs_off);
    }
    xfer_free(ch->lay.stage0);
    xfer_free(ch->attr_out.buf);
    xfer_ch_notes_reap(ch, collective);
    for (i = 0; i < ch->proto.nout; i++)
        xfer_free(ch->proto.out[i]); /* abandoned after a failure */
    xfer_free(ch->proto.out);
    if (collective) {
        if (ch->ctl_local != MPI_COMM_NULL)
            MPI_Comm_free(&ch->ctl_local);
        if (ch->ctl_inter != MPI_COMM_NULL) {
            if (ch->disconnect)
                MPI_Comm_disconnect(&ch->ctl_inter);
            else
                MPI_Comm_free(&ch->ctl_inter);
        }
        if (ch->inter != MPI_COMM_NULL) {
            if (ch->disconnect)
                MPI_Comm_disconnect(&ch->inter);
            else
                MPI_Comm_free(&ch->inter);
        }
    }
    xfer_sched_destroy(&ch->path.mxn);
    xfer_free(ch->path.seg[0]);
    xfer_free(ch->path.seg[1]);
    xfer_free(ch->lay.r_bytes);
    xfer_free(ch->lay.r_plan);
    xfer_free(ch->path.node[0]);
    xfer_free(ch->path.node[1]);
    xfer_free(ch->lay.r_pre);
    xfer_free(ch->proto.rel_of);
    xfer_free(ch->proto.why_req);
    xfer_ch_joined_free(ch, collective);
    for (i = 0; ch->ds && i < ch->nds; i++) {
        xfer_free(ch->ds[i].srows);
        xfer_free(ch->ds[i].jrule);
    }
    xfer_free(ch->ds);
    xfer_free(ch->slots);
    xfer_free(ch);
    *pch = NULL;
}

/* ---- small accessors --------------------------------------------------------------------- */

xfer_status_t xfer_channel_role(const xfer_channel_t *ch, xfer_role_t *role)
{
    if (!ch || !role)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or output is NULL");
    *role = ch->role;
    return xfer_done(XFER_SUCCESS);
}

xfer_status_t xfer_channel_step(const xfer_channel_t *ch, uint64_t *step)
{
    if (!ch || !step)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or output is NULL");
    *step = ch->cur;
    return xfer_done(XFER_SUCCESS);
}

xfer_status_t xfer_channel_intercomm(const xfer_channel_t *ch, MPI_Comm *inter)
{
    if (!ch || !inter)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or output is NULL");
    *inter = ch->inter;
    return xfer_done(XFER_SUCCESS);
}
