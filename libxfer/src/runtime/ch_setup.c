/* SPDX-License-Identifier: BSD-3-Clause */
/* Step 0's set-up: the blocks of every sending rank are exchanged, contributions laid out,
 * stages allocated, the persistent plans built, after an agreement round of both sides. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../coll/coll.h"
#include "channel.h"

/* One poll of a set-up wait on @p req: done, or still alive (the peer's failure, a lost control
 * plane or, in XFER_LIVE_CLOCK, the timeout end it with an error). */
static xfer_status_t setup_poll(xfer_channel_t *ch, MPI_Request *req, double deadline,
                                const char *what, int *flag)
{
    xfer_status_t st = XFER_SUCCESS;
    XFER_MPI_GOTO(MPI_Test(req, flag, MPI_STATUS_IGNORE), st, out);
    if (*flag)
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(xfer_ch_poll_notes(ch), st, out);
    if (ch->peer_failed)
        return xfer_ch_peer_failed_error(ch);
    if (ch->ctl_lost)
        return xfer_ch_ctl_lost_error(ch);
    if (MPI_Wtime() > deadline)
        return XFER_ERR(XFER_ERR_TIMEOUT, "channel %s: %s: no answer from %s within %d ms",
                        ch->cfg->name, what, xfer_ch_peer_name(ch), ch->x->timeout_ms);
out:
    return st;
}

/* Every rank of both sides reaches the same verdict: the worst status of all. */
xfer_status_t xfer_ch_agree(xfer_channel_t *ch, xfer_status_t st, const char *what)
{
    int mine = (int) st, local = 0, remote = 0, flag = 0;
    double deadline = xfer_rt_deadline(ch->x);
    MPI_Request req;
    xfer_status_t rc = XFER_SUCCESS;

    XFER_MPI_GOTO(MPI_Allreduce(&mine, &local, 1, MPI_INT, MPI_MIN, ch->ctl_local), rc, out);
    XFER_MPI_GOTO(MPI_Iallreduce(&local, &remote, 1, MPI_INT, MPI_MIN, ch->ctl_inter, &req), rc,
                  out);
    while (!flag)
        XFER_CHECK_GOTO(setup_poll(ch, &req, deadline, what, &flag), rc, out);
    if (st != XFER_SUCCESS)
        return st;
    if (local != XFER_SUCCESS)
        return XFER_ERR((xfer_status_t) local, "channel %s: %s failed on another rank of %s",
                        ch->cfg->name, what, xfer_ch_side_name(ch, ch->side));
    if (remote != XFER_SUCCESS)
        return XFER_ERR(XFER_ERR_PEER_FAILED, "channel %s: %s failed at %s (%s): see its error",
                        ch->cfg->name, what, xfer_ch_peer_name(ch),
                        xfer_status_name((xfer_status_t) remote));
out:
    return rc;
}

xfer_status_t xfer_ch_wait_req(xfer_channel_t *ch, MPI_Request *req, const char *what)
{
    double deadline = xfer_rt_deadline(ch->x);
    xfer_status_t st = XFER_SUCCESS;
    int flag = 0;
    while (!flag)
        XFER_CHECK_GOTO(setup_poll(ch, req, deadline, what, &flag), st, out);
out:
    return st;
}

static xfer_status_t plan_opts(const xfer_channel_t *ch, xfer_coll_opts_t *o)
{
    const xfer_cfg_hier_t *h = &ch->cfg->hier;
    xfer_coll_opts_init(o);
    o->duplex = ch->cfg->duplex;
    o->check = XFER_CHECK_OFF; /* the handshake and the setup checked both sides */
    o->fallback = XFER_FALLBACK_WARN;
    o->algorithm = ch->plan_algorithm;
    o->hier_auto = h->enabled == 0 ? XFER_HIER_AUTO_NEVER : XFER_HIER_AUTO_ALLOW;
    o->hier_senders = h->leaders_per_node;
    o->hier_sync = (xfer_hier_sync_t) h->sync; /* XFER_HIER_SYNC_FLAGS or _BARRIER */
    /* Every plan progresses in xfer_test and our own waits bound them by the peer's liveness:
     * a collective started early must not expire while the peer legitimately computes. */
    o->timeout_ms = XFER_TIMEOUT_NONE;
    return XFER_SUCCESS;
}

/* After lay_out: may stage0 serve as this rank's contribution as it is? Only when every block
 * sits where the contribution has it: blocks put out of the channel's order, put again with
 * another size (appended anew) or missing move the offsets or the length. */
static int stage0_fits(const xfer_channel_t *ch)
{
    int i;
    if (!ch->stage0 || ch->stage0_len != ch->my_bytes)
        return 0;
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        if (d->staged && (d->st_off != d->my_off || d->st_len != d->my_bytes))
            return 0;
    }
    return 1;
}

xfer_status_t xfer_ch_setup(xfer_channel_t *ch)
{
    const int k = ch->side, ko = 1 - k;
    const int len_own = xfer_ch_geo_len(ch, k), len_rem = xfer_ch_geo_len(ch, ko);
    uint64_t *mine = NULL, *own_all = NULL, *rem_all = NULL;
    size_t *own_bytes = NULL;
    int *rcounts = NULL, *rdispls = NULL;
    xfer_status_t st = XFER_SUCCESS, st2;
    MPI_Request req;
    int i, r, pos = 0;

    if (ch->setup)
        return XFER_SUCCESS;
    mine = xfer_calloc((size_t) len_own + 1, sizeof(uint64_t));
    own_all = xfer_calloc((size_t) ch->nlocal * (size_t) len_own + 1, sizeof(uint64_t));
    rem_all = xfer_calloc((size_t) ch->nremote * (size_t) len_rem + 1, sizeof(uint64_t));
    own_bytes = xfer_calloc((size_t) ch->nlocal, sizeof(size_t));
    ch->r_bytes = xfer_calloc((size_t) ch->nremote, sizeof(size_t));
    if (!mine || !own_all || !rem_all || !own_bytes || !ch->r_bytes) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel setup");
        goto out;
    }
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        if (xfer_ch_dset_side(ch, d) != k)
            continue;
        if (d->declared) { /* undeclared: an empty block */
            memcpy(mine + pos, d->start, (size_t) d->cfg->ndims * sizeof(uint64_t));
            memcpy(mine + pos + d->cfg->ndims, d->count, (size_t) d->cfg->ndims * sizeof(uint64_t));
        }
        pos += 2 * d->cfg->ndims;
    }
    /* Blocks of this side (to check the tiling here too: both sides report the same error)
     * and of the other side, whose data this side receives. */
    XFER_MPI_GOTO(
        MPI_Allgather(mine, len_own, MPI_UINT64_T, own_all, len_own, MPI_UINT64_T, ch->ctl_local),
        st, out);
    XFER_MPI_GOTO(MPI_Iallgather(mine, len_own, MPI_UINT64_T, rem_all, len_rem, MPI_UINT64_T,
                                 ch->ctl_inter, &req),
                  st, out);
    XFER_CHECK_GOTO(xfer_ch_wait_req(ch, &req, "exchanging the dataset blocks"), st, out);

    if (ch->sends[k])
        st = xfer_ch_lay_out(ch, k, ch->nlocal, own_all, own_bytes, 0);
    if (st == XFER_SUCCESS && ch->sends[ko])
        st = xfer_ch_lay_out(ch, ko, ch->nremote, rem_all, ch->r_bytes, 1);
    if (st == XFER_SUCCESS) {
        ch->my_bytes = ch->sends[k] ? own_bytes[ch->me] : 0;
        ch->r_total = 0;
        for (r = 0; r < ch->nremote; r++)
            ch->r_total += ch->sends[ko] ? ch->r_bytes[r] : 0;
        if (ch->my_bytes > INT_MAX || ch->r_total > INT_MAX)
            st = XFER_ERR(XFER_ERR_TOO_LARGE,
                          "channel %s: one step moves %zu bytes per %s rank and %zu bytes in "
                          "all from %s; steps over 2 GiB are not supported (split the datasets "
                          "over more channels)",
                          ch->cfg->name, ch->my_bytes, xfer_ch_side_name(ch, k), ch->r_total,
                          xfer_ch_peer_name(ch));
    }
    for (i = 0; st == XFER_SUCCESS && i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        if (i == 0 && stage0_fits(ch)) { /* slot 0 holds step 0, its blocks in place already */
            s->sbuf = ch->stage0;
            ch->stage0 = NULL;
        } else if (ch->my_bytes && !(s->sbuf = xfer_calloc(1, ch->my_bytes)))
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: send stage", ch->cfg->name);
        if (ch->r_total && !(s->rbuf = xfer_malloc(ch->r_total)))
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: receive stage", ch->cfg->name);
    }
    st2 = xfer_ch_agree(ch, st, "setting up the first step");
    if (st2 != XFER_SUCCESS) {
        st = st2;
        goto out;
    }

    rcounts = xfer_calloc((size_t) ch->nremote, sizeof(int));
    rdispls = xfer_calloc((size_t) ch->nremote, sizeof(int));
    if (!rcounts || !rdispls) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel setup");
        goto out;
    }
    for (r = 0, pos = 0; r < ch->nremote; r++) {
        rcounts[r] = ch->sends[ko] ? (int) ch->r_bytes[r] : 0;
        rdispls[r] = pos;
        pos += rcounts[r];
    }
    for (i = 0; i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        xfer_coll_opts_t o;
        plan_opts(ch, &o);
        XFER_MPI_GOTO(MPI_Comm_dup(ch->inter, &s->comm), st, out);
        XFER_CHECK_GOTO(xfer_allgatherv_inter_init(s->sbuf, (int) ch->my_bytes, MPI_BYTE, s->rbuf,
                                                   rcounts, rdispls, MPI_BYTE, s->comm, &o,
                                                   &s->plan),
                        st, out);
    }
    if (ch->me == 0 && xfer_trace_level() > 0) {
        const char *alg = "?";
        xfer_plan_algorithm(ch->slots[0].plan, &alg);
        xfer_log(XFER_LOG_TRACE, "channel %s at %s: %s, %zu bytes per step from this rank, %zu in",
                 ch->cfg->name, xfer_ch_side_name(ch, k), alg, ch->my_bytes, ch->r_total);
    }
    ch->setup = 1;
out:
    xfer_free(mine);
    xfer_free(own_all);
    xfer_free(rem_all);
    xfer_free(own_bytes);
    xfer_free(rcounts);
    xfer_free(rdispls);
    if (st != XFER_SUCCESS)
        ch->failed = 1;
    return st;
}
