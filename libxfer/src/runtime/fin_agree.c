/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer_finalize's agreements (runtime.h): the ranks of a component learn of a failure at
 * different moments (one from xferd, another from a failed collective, a third from its
 * announcer's NOTE_FAIL), so no rank may choose a collective of its own side by what it alone
 * knows: one rank would wait in it for ever while another has gone on. Twice during the finish
 * every rank puts in what it knows and every rank acts on the sum: before the goodbye (which
 * channels still say it, and each side's ACK total) and before the frees (whether any channel
 * failed: a collective free could wait for a peer that is gone). The agreements run on a
 * duplicate of the component's communicator that nothing else uses, nonblocking, while the
 * channels keep moving (a rank still draining may need this one's notes). */
#include <stdio.h>
#include <string.h>

#include "channel.h"

/* What this rank knows of @p ch: failed (or the peer did). */
static int knows_failed(const xfer_channel_t *ch)
{
    if (ch->loss.lost) /* its reader is gone, and the sender goes on (ch_loss.c) */
        return 0;
    return ch->health.failed || ch->health.peer_failed;
}

static xfer_status_t known_status(const xfer_channel_t *ch)
{
    if (ch->health.peer_failed)
        return XFER_ERR_PEER_FAILED;
    if (ch->health.fail_st != XFER_SUCCESS)
        return ch->health.fail_st;
    return XFER_ERR_STATE;
}

/* The words of a failed channel, as this rank knows them. */
static xfer_status_t failure_of(const xfer_channel_t *ch)
{
    if (ch->health.peer_failed && !ch->health.fail_why[0])
        return xfer_ch_peer_failed_error(ch);
    return xfer_ch_failed_error(ch);
}

typedef struct agreement {
    MPI_Request *req;
    int n;
    const char *what;
} agreement_t;

/* The reductions are done; unless xferd declared this component failed (a rank of it will not
 * come). */
static xfer_status_t agreed_cond(struct xfer *x, void *arg, int *met)
{
    agreement_t *a = arg;
    MPI_Status sts[2]; /* n <= 2 (MPI_STATUSES_IGNORE trips gcc's access check with MPICH) */
    char why[256];
    if (MPI_Testall(a->n, a->req, met, sts) != MPI_SUCCESS)
        return XFER_ERR(XFER_ERR_MPI, "xfer_finalize: %s: MPI_Testall failed on component %s",
                        a->what, x->cfg->components[x->comp].name);
    if (!*met && xfer_rt_ctl_failed(x, x->comp, why, sizeof(why)))
        return XFER_ERR(XFER_ERR_PEER_FAILED,
                        "xfer_finalize: %s: xferd declared this component (%s) failed: %s", a->what,
                        x->cfg->components[x->comp].name, why);
    return XFER_SUCCESS;
}

/* Wait for @p n nonblocking reductions on x->fin, moving the channels meanwhile (a channel that
 * fails keeps its words for the next agreement). Ends with them done, or with an error: the
 * deadline (XFER_LIVE_CLOCK), or xferd declared this component failed. */
static xfer_status_t wait_agreement(struct xfer *x, MPI_Request *req, int n, const char *what)
{
    agreement_t a = {req, n, what};
    const xfer_ch_wait_all_t w = {.cond = agreed_cond, .arg = &a, .what = what};
    return xfer_ch_wait_all(x, &w);
}

/* A channel whose transport has a goodbye (the file's finishes in finalize's first pass). */
static int says_goodbye(const xfer_channel_t *ch)
{
    return ch && ch->ops->goodbye;
}

/* Returns the first failed channel's error (the whole component returns it from
 * xfer_finalize), or the agreement's own. */
xfer_status_t xfer_rt_fin_agree_channels(struct xfer *x)
{
    xfer_status_t st = XFER_SUCCESS;
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    uint64_t *acks = NULL;
    int *worst = NULL; /* per channel: failed on rank r (r + 1, 0: none), minus its status */
    int i, agreed = 0, n = x->nch > 0 ? x->nch : 1;

    acks = xfer_calloc((size_t) n, sizeof(*acks));
    worst = xfer_calloc((size_t) n * 2, sizeof(*worst));
    if (!acks || !worst) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "xfer_finalize: agreement of %d channels", n);
        goto out;
    }
    for (i = 0; i < x->nch; i++) {
        const xfer_channel_t *ch = x->ch[i];
        if (!says_goodbye(ch))
            continue;
        acks[i] = ch->proto.acks_sent;
        if (knows_failed(ch)) {
            worst[2 * i] = x->rank + 1;
            worst[2 * i + 1] = -(int) known_status(ch);
        }
    }
    XFER_MPI_GOTO(MPI_Iallreduce(MPI_IN_PLACE, acks, n, MPI_UINT64_T, MPI_SUM, x->fin, &req[0]), st,
                  out);
    XFER_MPI_GOTO(MPI_Iallreduce(MPI_IN_PLACE, worst, 2 * n, MPI_INT, MPI_MAX, x->fin, &req[1]), st,
                  out);
    XFER_CHECK_GOTO(wait_agreement(x, req, 2, "agreeing on the channels' state"), st, out);
    agreed = 1;
    for (i = 0; i < x->nch; i++) {
        xfer_channel_t *ch = x->ch[i];
        if (!says_goodbye(ch))
            continue;
        ch->proto.acks_total = acks[i];
        if (!worst[2 * i])
            continue;
        ch->proto.bye_failed = 1;
        if (!knows_failed(ch)) { /* another rank knew: this one says so */
            ch->health.fail_st = (xfer_status_t) -worst[2 * i + 1];
            snprintf(ch->health.fail_why, sizeof(ch->health.fail_why),
                     "channel %s failed on rank %d of %s (that rank's error says why)",
                     ch->cfg->name, worst[2 * i] - 1, x->cfg->components[x->comp].name);
        }
        ch->health.failed = 1;
        if (st == XFER_SUCCESS) /* the first one's words */
            st = failure_of(ch);
    }
out:
    /* A request that never completed stays with MPI: a collective's cannot be freed. Without
     * the agreement no channel says goodbye (the error says why). */
    for (i = 0; !agreed && i < x->nch; i++)
        if (says_goodbye(x->ch[i]) && !x->ch[i]->proto.bye_failed) {
            x->ch[i]->proto.bye_failed = 1;
            x->ch[i]->health.failed = 1;
        }
    xfer_free(acks);
    xfer_free(worst);
    return st;
}

xfer_status_t xfer_rt_fin_agree_failed(struct xfer *x, int *failed)
{
    xfer_status_t st = XFER_SUCCESS;
    MPI_Request req = MPI_REQUEST_NULL;
    int i, any = 0;
    for (i = 0; i < x->nch; i++)
        if (x->ch[i] && knows_failed(x->ch[i]))
            any = 1;
    *failed = 1; /* unless every rank says otherwise */
    XFER_MPI_GOTO(MPI_Iallreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, x->fin, &req), st, out);
    XFER_CHECK_GOTO(wait_agreement(x, &req, 1, "agreeing on how to free the channels"), st, out);
    *failed = any;
out:
    return st;
}
