/* SPDX-License-Identifier: BSD-3-Clause */
/* A channel's life cycle, whatever its transport: creation (its transport's open follows:
 * transport.h), the finish (ends, drain, goodbye, close) through its table, one channel's early
 * end (xfer_channel_close), and the free; small accessors. The stream's open is stream_open.c,
 * its finish and free stream_finish.c. */
#include "channel.h"

xfer_status_t xfer_rt_channel_new(struct xfer *x, int index, const xfer_transport_ops_t *ops,
                                  MPI_Comm inter, int disconnect, xfer_channel_t **out)
{
    const xfer_cfg_channel_t *c = &x->cfg->channels[index];
    xfer_channel_t *ch;
    xfer_status_t st = XFER_SUCCESS;
    int i, bits[2] = {0, 0};

    ch = xfer_calloc(1, sizeof(*ch));
    if (!ch)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel");
    ch->x = x;
    ch->ops = ops;
    ch->index = index;
    ch->cfg = c;
    ch->inter = inter;
    ch->disconnect = disconnect;
    ch->ctl_inter = ch->ctl_local = MPI_COMM_NULL;
    ch->gat.comm = MPI_COMM_NULL;
    ch->gat.req = MPI_REQUEST_NULL;
    ch->side = c->from == x->comp ? 0 : 1;
    ch->peer = ch->side == 0 ? c->to : c->from;
    ch->proto.eos[0] = ch->proto.eos[1] = -1;
    ch->health.lost_step = UINT64_MAX;
    ch->role = c->duplex == XFER_DUPLEX_FULL ? XFER_ROLE_BOTH
               : ch->side == 0               ? XFER_ROLE_SEND
                                             : XFER_ROLE_RECV;
    /* (and the room of the sender's step number, carried under a flow policy: ch_flow.c) */
    ch->lay.attr_cap = (((size_t) c->attributes_bytes + 7) & ~(size_t) 7) + XFER_CH_LABEL_BYTES;
    ch->lay.attr_user = (size_t) c->attributes_bytes;
    ch->nds = c->ndatasets;
    ch->ds = xfer_calloc((size_t) ch->nds, sizeof(*ch->ds));
    if (!ch->ds) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel");
        goto fail;
    }
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
    XFER_CHECK_GOTO(xfer_ch_blocks_open(ch), st, fail);
    XFER_CHECK_GOTO(xfer_ch_flow_open(ch), st, fail);
    ch->loss.comm = MPI_COMM_NULL;
    XFER_CHECK_GOTO(xfer_ch_loss_open(ch), st, fail);
    *out = ch;
    return XFER_SUCCESS;
fail:
    ch->inter = MPI_COMM_NULL; /* the caller still owns it */
    xfer_rt_channel_free(&ch, 0);
    return st;
}

/* ---- the finish (xfer_finalize, context.c): four passes over every channel at once ----------
 * (stream_finish.c says what the stream does in each) */

/* (Each pass's failure that says the reader is gone is absorbed under on_reader_loss:
 * continue, ch_loss.c: the channel then sits out the rest.) */
static xfer_status_t channel_end(xfer_channel_t *ch)
{
    /* the flush's outcome first (receivers that closed the channel before the last step took
     * none: the finish goes on, as after a commit that met the end) */
    xfer_status_t st = ch->flow.flush_st, end;
    ch->ending = 1; /* (a channel never set up sets up its step 0 now, to drain it) */
    end = xfer_ch_loss_finish(ch, ch->ops->end(ch));
    xfer_ch_flow_report(ch, 1); /* xferd's counts: the steps skipped after the last one sent */
    return st != XFER_SUCCESS ? st : end;
}

/* (1) Every channel ends at once, none waiting: one under a flow policy first sends the steps it
 * holds (ch_flow.c), the newest once its receivers have room, and ends as soon as that is done,
 * whatever the other channels wait for (its receivers may read it to its end before they read
 * another channel). xfer_channel_close ends its channel alone (@p arg). */
static xfer_status_t ended(struct xfer *x, void *arg, int *met)
{
    const xfer_channel_t *only = arg;
    int i, all = 1;
    for (i = 0; i < x->nch; i++) {
        xfer_channel_t *ch = x->ch[i];
        int done = 1;
        if (!ch || ch->ending || (only && ch != only))
            continue;
        xfer_ch_flow_flush_step(ch, &done);
        if (!done) {
            all = 0;
            continue;
        }
        if ((ch->end_st = channel_end(ch)) != XFER_SUCCESS)
            snprintf(ch->end_why, sizeof(ch->end_why), "%s", xfer_last_error());
    }
    *met = all;
    return XFER_SUCCESS;
}

xfer_status_t xfer_rt_channels_end(struct xfer *x, xfer_channel_t *only)
{
    const xfer_ch_wait_all_t w = {
        .cond = ended, .arg = only, .what = "sending the steps flow policies hold", .only = only};
    return xfer_ch_wait_all(x, &w);
}

xfer_status_t xfer_rt_channel_ended(const xfer_channel_t *ch)
{
    return ch->end_st == XFER_SUCCESS ? XFER_SUCCESS : xfer_err_raw(ch->end_st, "%s", ch->end_why);
}

/* Are the channel's frees collective? Not once its reader failed (continue): it is gone. */
int xfer_rt_channel_collective(const xfer_channel_t *ch)
{
    return !ch || !ch->loss.lost || ch->loss.closed;
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
    return ch->ops->goodbye ? xfer_ch_loss_finish(ch, ch->ops->goodbye(ch)) : XFER_SUCCESS;
}

/* (3) the peers' goodbyes, all at once */
xfer_status_t xfer_rt_channels_part(struct xfer *x)
{
    const xfer_ch_wait_all_t w = {.each = parted, .what = "saying goodbye"};
    return xfer_ch_wait_all(x, &w);
}

xfer_status_t xfer_rt_channel_close(xfer_channel_t *ch)
{
    return ch->ops->close ? xfer_ch_loss_finish(ch, ch->ops->close(ch)) : XFER_SUCCESS;
}

void xfer_rt_channel_free(xfer_channel_t **pch, int collective)
{
    xfer_channel_t *ch = pch ? *pch : NULL;
    int i;
    if (!ch)
        return;
    if (ch->ops && ch->ops->free)
        ch->ops->free(ch, collective);
    xfer_free(ch->attr_out.buf);
    xfer_ch_flow_free(ch, collective);
    xfer_ch_keep_free(ch);
    xfer_ch_blocks_free(ch, collective);
    xfer_ch_notes_reap(ch, collective);
    if (collective && ch->loss.comm != MPI_COMM_NULL) /* (ch_attach.c's rounds) */
        MPI_Comm_free(&ch->loss.comm);
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
    xfer_free(ch->proto.rel_of);
    xfer_free(ch->proto.why_req);
    for (i = 0; ch->ds && i < ch->nds; i++) {
        xfer_free(ch->ds[i].srows);
        xfer_free(ch->ds[i].jrule);
    }
    xfer_free(ch->ds);
    xfer_free(ch);
    *pch = NULL;
}

/* ---- xfer_channel_close: one channel ends now ----------------------------------------------
 * Of the finish's passes, only the end waits for nothing but this component (the flush under
 * policy latest: the receivers' room, as a put under policy block does); the others wait for the
 * peer: its part of the steps in flight, its goodbye, MPI_Comm_disconnect. A wait for one
 * channel's peer while the component's other channels go on could hold both components for
 * ever (the peer waiting on another channel for what this one would send after the close), the
 * very thing xfer_finalize's all-at-once passes avoid. So the channel ends here: its peer sees
 * the end at its next call (a reader's close, CLOSE or the `closed` marker: on_reader_loss; a
 * sender's, EOS or the `end` marker after its last step); the steps still in flight move in every
 * pass over the context (a wait on another channel, the progress thread); and xfer_finalize
 * finishes it with the other channels, its end pass done (docs/runtime.md, "Closing a
 * channel"). */

xfer_status_t xfer_ch_closed_error(const xfer_channel_t *ch)
{
    return XFER_ERR(XFER_ERR_STATE,
                    "channel %s was closed (xfer_channel_close): this copy of its handle is no "
                    "longer valid",
                    ch->cfg->name);
}

xfer_status_t xfer_channel_close(xfer_channel_t **pch)
{
    xfer_channel_t *ch = pch ? *pch : NULL;
    struct xfer *x;
    xfer_errh_guard_t g;
    xfer_status_t st;

    if (!pch)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "xfer_channel_close: the handle's address is NULL");
    if (!ch)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "xfer_channel_close: the channel handle is NULL (closed already? the "
                        "close sets it to NULL)");
    x = ch->x;
    *pch = NULL;
    xfer_rt_lock(x);
    if (ch->closed) {
        st = xfer_rt_done(x, XFER_ERR(XFER_ERR_STATE,
                                      "xfer_channel_close: channel %s was closed already "
                                      "(through another copy of its handle)",
                                      ch->cfg->name));
        goto out;
    }
    ch->closed = 1; /* whatever the end's outcome: the application is done with it */
    xfer_errh_guard_begin(&g);
    st = xfer_rt_channels_end(x, ch);
    if (st == XFER_SUCCESS)
        st = xfer_rt_channel_ended(ch);
    st = xfer_rt_done(x, xfer_errh_guard_end(&g, st));
out:
    xfer_rt_unlock(x);
    return st;
}

/* ---- small accessors --------------------------------------------------------------------- */

xfer_status_t xfer_channel_role(const xfer_channel_t *ch, xfer_role_t *role)
{
    if (!ch || !role)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or output is NULL");
    if (ch->closed)
        return xfer_ch_closed_error(ch);
    *role = ch->role;
    return xfer_done(XFER_SUCCESS);
}

xfer_status_t xfer_channel_step(const xfer_channel_t *ch, uint64_t *step)
{
    if (!ch || !step)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or output is NULL");
    if (ch->closed)
        return xfer_ch_closed_error(ch);
    *step = xfer_ch_step_now(ch);
    return xfer_done(XFER_SUCCESS);
}

xfer_status_t xfer_channel_intercomm(const xfer_channel_t *ch, MPI_Comm *inter)
{
    if (!ch || !inter)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or output is NULL");
    if (ch->closed)
        return xfer_ch_closed_error(ch);
    *inter = ch->inter;
    return xfer_done(XFER_SUCCESS);
}
