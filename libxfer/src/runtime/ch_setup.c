/* SPDX-License-Identifier: BSD-3-Clause */
/* Step 0's set-up: the blocks of every sending rank are exchanged, contributions laid out,
 * stages allocated, the persistent plans built, after an agreement round of both sides. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../coll/coll.h"
#include "../sched/exec.h"
#include "../topo/topo.h"
#include "mxn.h"
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
    /* The peer may need this rank's part of another channel's steps before it comes here
     * (several channels between the same components): keep them moving. */
    xfer_ch_progress_others(ch);
    XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out); /* a failed peer, a lost control plane */
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
    o->algorithm = ch->algorithm;
    o->hier_auto = h->enabled == 0   ? XFER_HIER_AUTO_NEVER
                   : h->enabled == 1 ? XFER_HIER_AUTO_ALWAYS /* forced node staging */
                                     : XFER_HIER_AUTO_ALLOW;
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
    if (!ch->lay.stage0 || ch->lay.stage0_len != ch->lay.my_bytes)
        return 0;
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        if (d->staged && (d->st_off != d->my_off || d->st_len != d->my_bytes))
            return 0;
    }
    return 1;
}

/* This rank's selection of received dataset @p d: declared, or the dataset's mode. */
xfer_status_t xfer_ch_own_selection(xfer_channel_t *ch, xfer_rt_dset_t *d)
{
    const xfer_cfg_dataset_t *c = d->cfg;
    xfer_status_t st;
    if (d->sel_declared || d->sel_resolved)
        return XFER_SUCCESS;
    if (c->selection == XFER_SELECT_USER)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s has selection: user, but rank %d of %s did not "
                        "call xfer_select for it before step 0",
                        ch->cfg->name, c->name, ch->me, xfer_ch_side_name(ch, ch->side));
    st = xfer_decompose(c->selection, c->ndims, c->dims, ch->nlocal, ch->me, d->sel_start,
                        d->sel_count);
    d->sel_resolved = st == XFER_SUCCESS; /* fixed for the run: once */
    return st;
}

/* Every receiving rank's selection of the datasets side @p k receives, from their geometry
 * records: whether every one takes a dataset whole (d->whole); sets *@p partial when some rank
 * holds less than the whole of a dataset. */
static xfer_status_t read_selections(xfer_channel_t *ch, int k, int nranks, const uint64_t *geo,
                                     int *partial)
{
    const int len = xfer_ch_geo_len(ch);
    int i, r, e;
    for (i = 0; i < ch->nds; i++) {
        xfer_rt_dset_t *d = &ch->ds[i];
        const int nd = d->cfg->ndims, pos = xfer_ch_geo_pos(ch, i);
        if (xfer_ch_dset_side(ch, d) == k)
            continue; /* side k sends it */
        d->gs_start = xfer_calloc((size_t) nranks * (size_t) nd, sizeof(uint64_t));
        d->gs_count = xfer_calloc((size_t) nranks * (size_t) nd, sizeof(uint64_t));
        d->gs_off = xfer_calloc((size_t) nranks, sizeof(size_t));
        if (!d->gs_start || !d->gs_count || !d->gs_off)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "selections");
        d->whole = 1;
        for (r = 0; r < nranks; r++) {
            const uint64_t *s0 = geo + (size_t) r * (size_t) len + pos, *c0 = s0 + nd;
            memcpy(d->gs_start + (size_t) r * nd, s0, (size_t) nd * sizeof(uint64_t));
            memcpy(d->gs_count + (size_t) r * nd, c0, (size_t) nd * sizeof(uint64_t));
            for (e = 0; e < nd; e++)
                if (s0[e] != 0 || c0[e] != d->cfg->dims[e])
                    d->whole = 0;
        }
        *partial |= !d->whole;
    }
    return XFER_SUCCESS;
}

/* Where each receiving rank of side @p k holds its selections of the datasets the direct
 * schedule brings it: one after the other from @p base of its receive area. */
static void place_selections(xfer_channel_t *ch, int k, int nranks, size_t base)
{
    int i, r;
    for (r = 0; r < nranks; r++) {
        size_t area = base;
        for (i = 0; i < ch->nds; i++) {
            xfer_rt_dset_t *d = &ch->ds[i];
            const int nd = d->cfg->ndims;
            if (xfer_ch_dset_side(ch, d) == k || xfer_ch_by_plan(ch, d))
                continue;
            d->gs_off[r] = area;
            area += ((size_t) xfer_ch_volume(nd, d->gs_count + (size_t) r * nd) * d->esize + 7) &
                    ~(size_t) 7;
        }
        if (k == ch->side && r == ch->me) /* this side's receive area */
            ch->path.r_area = area;
    }
}

/* Bytes of this rank's selection of @p d (what lands here per step on the direct path). */
static size_t sel_bytes(const xfer_rt_dset_t *d)
{
    return (size_t) xfer_ch_volume(d->cfg->ndims, d->sel_count) * d->esize;
}

/* What a bound buffer of @p d carries: the rank's block, or its selection. */
static size_t bound_len(const xfer_rt_dset_t *d)
{
    return d->out ? d->my_bytes : sel_bytes(d);
}

/* Bound buffers must hold what they carry. */
static xfer_status_t check_bound(xfer_channel_t *ch)
{
    int i;
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        const size_t need = bound_len(d);
        if (d->bound && d->bound_size < need)
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: the buffer bound on rank %d holds %zu bytes, "
                            "its %s needs %zu",
                            ch->cfg->name, d->cfg->name, ch->me, d->bound_size,
                            d->out ? "block" : "selection", need);
    }
    return XFER_SUCCESS;
}

/* The bound buffers' pointers into the ranges (same order as bound_segments). */
void xfer_ch_bound_refresh(xfer_channel_t *ch)
{
    int i, n[2] = {0, 0};
    if (!ch->path.seg[0] || !ch->path.seg[1])
        return;
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        const int dir = d->out ? 0 : 1;
        if (d->bound)
            ch->path.seg[dir][n[dir]++].ptr = d->bound;
    }
    ch->path.bound_gen++;
}

/* The ranges of the contribution (0) and the receive area (1) that live in bound buffers. */
static xfer_status_t bound_segments(xfer_channel_t *ch)
{
    int i, k;
    for (k = 0; k < 2; k++) {
        ch->path.seg[k] = xfer_calloc((size_t) ch->nds + 1, sizeof(xfer_exec_seg_t));
        if (!ch->path.seg[k])
            return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: bound buffers", ch->cfg->name);
    }
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        const int dir = d->out ? 0 : 1;
        xfer_exec_seg_t *g;
        if (!d->bound)
            continue;
        g = &ch->path.seg[dir][ch->path.nseg[dir]++];
        g->ptr = d->bound;
        g->off = d->out ? d->my_off : d->gs_off[ch->me];
        g->len = bound_len(d);
    }
    return XFER_SUCCESS;
}

/* The direct schedule (direct and hybrid paths): this rank's schedule (one for every slot) and
 * each slot's executor over a merged communicator of its own (steps in flight never share a
 * message space). */
static xfer_status_t setup_direct(xfer_channel_t *ch)
{
    const int k = ch->side, n0 = k == 0 ? ch->nlocal : ch->nremote;
    xfer_mxn_dset_t *md = xfer_calloc((size_t) ch->nds, sizeof(*md));
    xfer_mxn_t m;
    xfer_status_t st = XFER_SUCCESS;
    int i, n = 0;

    if (!md)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: direct schedule", ch->cfg->name);
    for (i = 0; i < ch->nds; i++) { /* the datasets the plan does not move */
        const xfer_rt_dset_t *d = &ch->ds[i];
        if (xfer_ch_by_plan(ch, d))
            continue;
        md[n].ndims = d->cfg->ndims;
        md[n].dims = d->cfg->dims;
        md[n].esize = d->esize;
        md[n].from = xfer_ch_dset_side(ch, d);
        md[n].bstart = d->g_start;
        md[n].bcount = d->g_count;
        md[n].boff = d->g_off;
        md[n].sstart = d->gs_start;
        md[n].scount = d->gs_count;
        md[n].soff = d->gs_off;
        n++;
    }
    m.n[k] = ch->nlocal;
    m.n[1 - k] = ch->nremote;
    m.nds = n;
    m.ds = md;
    m.msg_max = 0;
    m.attr = ch->lay.attr_cap;
    m.no_hdr = ch->path.hybrid; /* the plan brings the headers and the attributes */
    m.node[0] = ch->path.node[0];
    m.node[1] = ch->path.node[1];
    XFER_CHECK_GOTO(xfer_mxn_build(&m, k == 0 ? ch->me : n0 + ch->me, ch->lay.my_bytes,
                                   ch->path.r_area, &ch->path.mxn),
                    st, out);
    XFER_CHECK_GOTO(bound_segments(ch), st, out);
    for (i = 0; i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        MPI_Comm comms[XFER_NCOMMS] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
        XFER_MPI_GOTO(MPI_Comm_dup(ch->inter, &s->comm), st, out);
        XFER_MPI_GOTO(MPI_Intercomm_merge(s->comm, k, &s->merged), st, out);
        XFER_MPI_GOTO(MPI_Comm_set_errhandler(s->merged, MPI_ERRORS_RETURN), st, out);
        comms[XFER_COMM_MAIN] = s->merged;
        s->ex = xfer_calloc(1, sizeof(*s->ex));
        if (!s->ex) {
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: executor", ch->cfg->name);
            goto out;
        }
        XFER_CHECK_GOTO(xfer_exec_init(s->ex, ch->path.mxn, comms, NULL, NULL, XFER_RT_EXEC_TAG,
                                       XFER_INTRA_MPI),
                        st, out);
        xfer_exec_bind(s->ex, s->sbuf, s->rbuf, NULL);
        xfer_exec_remap(s->ex, XFER_BUF_SEND, ch->path.seg[0], ch->path.nseg[0]);
        xfer_exec_remap(s->ex, XFER_BUF_RECV, ch->path.seg[1], ch->path.nseg[1]);
    }
out:
    xfer_free(md);
    return st;
}

/* The flags word of a rank's geometry record: what makes every rank choose the direct path. */
enum { GEO_BOUND = 1, GEO_DIRECT = 2, GEO_NO_HYBRID = 4, GEO_NO_STAGE = 8 };

/* This rank's node among its component's ranks, placed as node staging places them
 * (xfer_node_split: MPI_COMM_TYPE_SHARED, or XFER_NODE_SIZE virtual nodes). */
static xfer_status_t node_key(xfer_channel_t *ch, int *key)
{
    MPI_Comm nc = MPI_COMM_NULL;
    int is_virtual;
    xfer_status_t st = xfer_node_split(ch->ctl_local, ch->me, ch->nlocal, &nc, key, &is_virtual);
    xfer_comm_release(&nc);
    return st;
}

/* The node keys of side k's @p nranks ranks from their geometry records (node staging of the
 * direct schedule), unless some rank turned it off. */
static xfer_status_t node_keys(xfer_channel_t *ch, int k, int nranks, const uint64_t *geo,
                               int flags)
{
    const int len = xfer_ch_geo_len(ch);
    int r;
    if (flags & GEO_NO_STAGE)
        return XFER_SUCCESS;
    ch->path.node[k] = xfer_malloc((size_t) nranks * sizeof(int));
    if (!ch->path.node[k])
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: node keys", ch->cfg->name);
    for (r = 0; r < nranks; r++)
        ch->path.node[k][r] = (int) geo[(size_t) r * (size_t) len + (size_t) len - 2];
    return XFER_SUCCESS;
}

/* The path of the channel's steps (runtime.h), the same verdict on every rank of both sides:
 * all of them know every block, every selection and every rank's flags (@p flags, or-ed). The
 * allgatherv plan moves its part of each contribution with int counts and displacements. */
static void choose_path(xfer_channel_t *ch, int partial, int flags, const size_t tot[2],
                        const size_t plan_tot[2])
{
    int i, some_whole = 0;
    for (i = 0; i < ch->nds; i++)
        some_whole |= ch->ds[i].whole && !ch->ds[i].never;
    ch->path.direct = 1;
    ch->path.hybrid = 0;
    if (flags & (GEO_BOUND | GEO_DIRECT))
        ; /* bound buffers receive in place: only the direct schedule does */
    else if (!partial && tot[0] <= INT_MAX && tot[1] <= INT_MAX)
        ch->path.direct = 0;
    else if (partial && some_whole && !(flags & GEO_NO_HYBRID) && plan_tot[0] <= INT_MAX &&
             plan_tot[1] <= INT_MAX)
        ch->path.hybrid = 1;
}

/* What the allgatherv plan moves of a contribution of side @p k (@p bytes, of which @p lead
 * come before the datasets taken in parts): all of it, its lead (hybrid), or nothing. */
static size_t plan_part(const xfer_channel_t *ch, int k, size_t bytes, size_t lead)
{
    if (!ch->sends[k] || (ch->path.direct && !ch->path.hybrid))
        return 0;
    return ch->path.hybrid ? lead : bytes;
}

/* The allgatherv plan of every slot (allgatherv and hybrid paths): each rank's plan part. */
static xfer_status_t setup_plans(xfer_channel_t *ch)
{
    int *rcounts = xfer_calloc((size_t) ch->nremote, sizeof(int));
    int *rdispls = xfer_calloc((size_t) ch->nremote, sizeof(int));
    xfer_status_t st = XFER_SUCCESS;
    int i, r;

    if (!rcounts || !rdispls) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel setup");
        goto out;
    }
    for (r = 0; r < ch->nremote; r++) {
        rcounts[r] = (int) ch->lay.r_plan[r];
        rdispls[r] = (int) ch->lay.r_pre[r];
    }
    for (i = 0; i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        xfer_coll_opts_t o;
        plan_opts(ch, &o);
        if (s->comm == MPI_COMM_NULL)
            XFER_MPI_GOTO(MPI_Comm_dup(ch->inter, &s->comm), st, out);
        XFER_CHECK_GOTO(xfer_allgatherv_inter_init(s->sbuf, (int) ch->lay.my_plan, MPI_BYTE,
                                                   s->rbuf, rcounts, rdispls, MPI_BYTE, s->comm, &o,
                                                   &s->plan),
                        st, out);
    }
out:
    xfer_free(rcounts);
    xfer_free(rdispls);
    return st;
}

static xfer_status_t setup(xfer_channel_t *ch);

xfer_status_t xfer_ch_setup(xfer_channel_t *ch)
{
    const int nested = ch->x->in_setup;
    xfer_status_t st;
    if (ch->setup)
        return XFER_SUCCESS;
    ch->x->in_setup = 1;
    st = setup(ch);
    ch->x->in_setup = nested;
    return st;
}

static xfer_status_t setup(xfer_channel_t *ch)
{
    const int k = ch->side, ko = 1 - k;
    const int len = xfer_ch_geo_len(ch);
    uint64_t *mine = NULL, *own_all = NULL, *rem_all = NULL;
    size_t *own_bytes = NULL, *own_pre = NULL, *rem_pre = NULL, tot[2] = {0, 0};
    size_t plan_tot[2] = {0, 0};
    int partial = 0, flags = 0, key = 0;
    xfer_status_t st = XFER_SUCCESS, st2;
    MPI_Request req;
    int i, r, pos = 0;

    if (ch->setup)
        return XFER_SUCCESS;
    mine = xfer_calloc((size_t) len + 1, sizeof(uint64_t));
    own_all = xfer_calloc((size_t) ch->nlocal * (size_t) len + 1, sizeof(uint64_t));
    rem_all = xfer_calloc((size_t) ch->nremote * (size_t) len + 1, sizeof(uint64_t));
    own_bytes = xfer_calloc((size_t) ch->nlocal, sizeof(size_t));
    own_pre = xfer_calloc((size_t) ch->nlocal, sizeof(size_t));
    rem_pre = xfer_calloc((size_t) ch->nremote, sizeof(size_t));
    ch->lay.r_bytes = xfer_calloc((size_t) ch->nremote, sizeof(size_t));
    ch->lay.r_plan = xfer_calloc((size_t) ch->nremote, sizeof(size_t));
    ch->lay.r_pre = xfer_calloc((size_t) ch->nremote + 1, sizeof(size_t));
    if (!mine || !own_all || !rem_all || !own_bytes || !own_pre || !rem_pre || !ch->lay.r_bytes ||
        !ch->lay.r_plan || !ch->lay.r_pre) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel setup");
        goto out;
    }
    /* This rank's record: its block of each dataset it sends, its selection of each one it
     * receives. A missing selection is an error all ranks learn at the agreement below. */
    for (i = 0; i < ch->nds; i++) {
        xfer_rt_dset_t *d = &ch->ds[i];
        const int nd = d->cfg->ndims;
        pos = xfer_ch_geo_pos(ch, i);
        if (xfer_ch_dset_side(ch, d) != k) {
            xfer_status_t s2 = xfer_ch_own_selection(ch, d);
            if (s2 != XFER_SUCCESS) {
                if (st == XFER_SUCCESS)
                    st = s2;
                continue;
            }
            memcpy(mine + pos, d->sel_start, (size_t) nd * sizeof(uint64_t));
            memcpy(mine + pos + nd, d->sel_count, (size_t) nd * sizeof(uint64_t));
        } else if (d->declared) { /* undeclared: an empty block */
            memcpy(mine + pos, d->start, (size_t) nd * sizeof(uint64_t));
            memcpy(mine + pos + nd, d->count, (size_t) nd * sizeof(uint64_t));
        }
    }
    if (st == XFER_SUCCESS)
        st = node_key(ch, &key);
    mine[len - 2] = (uint64_t) key;
    mine[len - 1] = (ch->path.bound_send || ch->path.bound_recv ? GEO_BOUND : 0) |
                    (xfer_env_long("XFER_RT_DIRECT", 0) > 0 ? GEO_DIRECT : 0) |
                    (xfer_env_long("XFER_RT_HYBRID", 1) == 0 ? GEO_NO_HYBRID : 0) |
                    (xfer_env_long("XFER_RT_NODE_STAGE", 1) == 0 ? GEO_NO_STAGE : 0);
    /* Records of this side (to check the tiling here too: both sides report the same error)
     * and of the other side. */
    XFER_MPI_GOTO(MPI_Allgather(mine, len, MPI_UINT64_T, own_all, len, MPI_UINT64_T, ch->ctl_local),
                  st2, fail_mpi);
    XFER_MPI_GOTO(
        MPI_Iallgather(mine, len, MPI_UINT64_T, rem_all, len, MPI_UINT64_T, ch->ctl_inter, &req),
        st2, fail_mpi);
    XFER_CHECK_GOTO(xfer_ch_wait_req(ch, &req, "exchanging the dataset blocks"), st2, fail_mpi);

    /* The selections first: the datasets taken whole lead the contributions. */
    if (st == XFER_SUCCESS && ch->sends[ko]) /* what this side receives */
        st = read_selections(ch, k, ch->nlocal, own_all, &partial);
    if (st == XFER_SUCCESS && ch->sends[k]) /* what the other side receives */
        st = read_selections(ch, ko, ch->nremote, rem_all, &partial);
    if (st == XFER_SUCCESS && ch->sends[k])
        st = xfer_ch_lay_out(ch, k, ch->nlocal, own_all, own_bytes, own_pre, 1);
    if (st == XFER_SUCCESS && ch->sends[ko])
        st = xfer_ch_lay_out(ch, ko, ch->nremote, rem_all, ch->lay.r_bytes, rem_pre, 1);
    if (st == XFER_SUCCESS) {
        ch->lay.my_bytes = ch->sends[k] ? own_bytes[ch->me] : 0;
        ch->lay.r_total = 0;
        for (r = 0; r < ch->nremote; r++)
            ch->lay.r_total += ch->sends[ko] ? ch->lay.r_bytes[r] : 0;
        for (r = 0; r < ch->nlocal; r++) {
            tot[k] += ch->sends[k] ? own_bytes[r] : 0;
            plan_tot[k] += ch->sends[k] ? own_pre[r] : 0;
        }
        tot[ko] = ch->lay.r_total;
        for (r = 0; r < ch->nremote; r++)
            plan_tot[ko] += ch->sends[ko] ? rem_pre[r] : 0;
        for (r = 0; r < ch->nlocal; r++)
            flags |= (int) own_all[(size_t) r * (size_t) len + (size_t) len - 1];
        for (r = 0; r < ch->nremote; r++)
            flags |= (int) rem_all[(size_t) r * (size_t) len + (size_t) len - 1];
        choose_path(ch, partial, flags, tot, plan_tot);
        if (ch->path.direct)
            st = node_keys(ch, k, ch->nlocal, own_all, flags);
        if (st == XFER_SUCCESS && ch->path.direct)
            st = node_keys(ch, ko, ch->nremote, rem_all, flags);
        ch->lay.my_plan = plan_part(ch, k, own_bytes[ch->me], own_pre[ch->me]);
        for (r = 0; r < ch->nremote; r++) {
            ch->lay.r_plan[r] = plan_part(ch, ko, ch->lay.r_bytes[r], rem_pre[r]);
            ch->lay.r_pre[r + 1] = ch->lay.r_pre[r] + ch->lay.r_plan[r];
        }
        /* the direct schedule's selections: after the headers and the attributes, or after
         * the plan's region (hybrid) */
        if (ch->path.direct && ch->sends[ko])
            place_selections(ch, k, ch->nlocal,
                             ch->path.hybrid
                                 ? ch->lay.r_pre[ch->nremote]
                                 : (size_t) ch->nremote * sizeof(xfer_rt_hdr_t) + ch->lay.attr_cap);
        if (ch->path.direct && ch->sends[k])
            place_selections(ch, ko, ch->nremote,
                             ch->path.hybrid
                                 ? plan_tot[k]
                                 : (size_t) ch->nlocal * sizeof(xfer_rt_hdr_t) + ch->lay.attr_cap);
        if (st == XFER_SUCCESS)
            st = check_bound(ch);
    }
    /* what lands here per step */
    ch->path.step_recv = ch->lay.r_pre[ch->nremote];
    for (i = 0; st == XFER_SUCCESS && ch->path.direct && i < ch->nds; i++)
        if (!ch->ds[i].out && !xfer_ch_by_plan(ch, &ch->ds[i]))
            ch->path.step_recv += sel_bytes(&ch->ds[i]);
    for (i = 0; st == XFER_SUCCESS && i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        const size_t rlen = ch->path.direct ? ch->path.r_area : ch->lay.r_total;
        if (i == 0 && stage0_fits(ch)) { /* slot 0 holds step 0, its blocks in place already */
            s->sbuf = ch->lay.stage0;
            ch->lay.stage0 = NULL;
        } else if (ch->lay.my_bytes && !(s->sbuf = xfer_calloc(1, ch->lay.my_bytes)))
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: send stage of %zu bytes", ch->cfg->name,
                          ch->lay.my_bytes);
        if (rlen && !(s->rbuf = xfer_malloc(rlen)))
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: receive stage of %zu bytes",
                          ch->cfg->name, rlen);
    }
    st2 = xfer_ch_agree(ch, st, "setting up the first step");
    if (st2 != XFER_SUCCESS) {
        st = st2;
        goto out;
    }
    if (ch->path.direct)
        XFER_CHECK_GOTO(setup_direct(ch), st, out);
    if (!ch->path.direct || ch->path.hybrid)
        XFER_CHECK_GOTO(setup_plans(ch), st, out);
    if (ch->me == 0 && xfer_trace_level() > 0) {
        const char *alg = "", *mxn = ch->path.mxn ? ch->path.mxn->variant : "";
        if (!ch->path.direct || ch->path.hybrid)
            xfer_plan_algorithm(ch->slots[0].plan, &alg);
        xfer_log(XFER_LOG_TRACE,
                 "channel %s at %s: %s%s%s%s%s, %zu bytes per step from this rank (%zu by the "
                 "plan), %zu in",
                 ch->cfg->name, xfer_ch_side_name(ch, k), ch->path.hybrid ? "hybrid: " : "", alg,
                 ch->path.hybrid ? " and " : "", mxn, ch->path.direct ? " (M x N)" : "",
                 ch->lay.my_bytes, ch->lay.my_plan,
                 ch->path.direct ? ch->path.r_area : ch->lay.r_total);
    }
    ch->setup = 1;
out:
    xfer_free(mine);
    xfer_free(own_all);
    xfer_free(rem_all);
    xfer_free(own_bytes);
    xfer_free(own_pre);
    xfer_free(rem_pre);
    if (st != XFER_SUCCESS)
        ch->health.failed = 1;
    return st;
fail_mpi:
    st = st2;
    goto out;
}

static xfer_status_t select_locked(xfer_channel_t *ch, const char *dataset, const uint64_t start[],
                                   const uint64_t count[])
{
    xfer_rt_dset_t *d;
    int nd, i;

    if (!ch || !dataset)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "xfer_select: channel or dataset name is NULL");
    d = xfer_ch_find_dset(ch, dataset);
    if (!d)
        return xfer_ch_no_such_dataset(ch, dataset);
    if (d->out)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s is sent by %s (this component): only a receiving "
                        "rank selects",
                        ch->cfg->name, dataset, xfer_ch_side_name(ch, ch->side));
    if (ch->setup || ch->cur > 0 || ch->begun || ch->started > 0)
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s: dataset %s: selections are fixed once step 0 began; call "
                        "xfer_select before it",
                        ch->cfg->name, dataset);
    if ((start == NULL) != (count == NULL))
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s: give both start and count, or neither (the "
                        "whole dataset)",
                        ch->cfg->name, dataset);
    nd = d->cfg->ndims;
    for (i = 0; start && i < nd; i++)
        if (count[i] > d->cfg->dims[i] || start[i] > d->cfg->dims[i] - count[i])
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: selection start %llu count %llu in "
                            "dimension %d exceeds its size %llu",
                            ch->cfg->name, dataset, (unsigned long long) start[i],
                            (unsigned long long) count[i], i, (unsigned long long) d->cfg->dims[i]);
    for (i = 0; i < nd; i++) {
        d->sel_start[i] = start ? start[i] : 0;
        d->sel_count[i] = start ? count[i] : d->cfg->dims[i];
    }
    d->sel_declared = 1;
    return XFER_SUCCESS;
}

static xfer_status_t bind_buffer_locked(xfer_channel_t *ch, const char *dataset, void *buf,
                                        size_t bufsize)
{
    xfer_rt_dset_t *d;
    if (!ch || !dataset || !buf)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "xfer_bind_buffer: channel, dataset name or buffer is NULL");
    d = xfer_ch_find_dset(ch, dataset);
    if (!d)
        return xfer_ch_no_such_dataset(ch, dataset);
    if (d->bound &&
        (ch->setup || ch->cur > 0 || ch->begun || ch->started > 0)) { /* after step 0 began */
        if (d->out)
            return XFER_ERR(XFER_ERR_STATE,
                            "channel %s: dataset %s: after step 0, a sending rank's block is "
                            "sent from where each xfer_put gives it",
                            ch->cfg->name, dataset);
        /* a buffer for the next step: where the step lands when its collective starts */
        if (ch->setup && bufsize < sel_bytes(d))
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: the buffer bound on rank %d holds %zu bytes, "
                            "the rank's selection needs %zu",
                            ch->cfg->name, d->cfg->name, ch->me, bufsize, sel_bytes(d));
        d->next_bound = buf;
        d->next_bound_size = bufsize;
        return XFER_SUCCESS;
    }
    if (ch->setup || ch->cur > 0 || ch->begun || ch->started > 0 || ch->committed > 0 ||
        d->staged || d->declared)
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s: dataset %s: bind a buffer before step 0 begins (and before "
                        "its first put)",
                        ch->cfg->name, dataset);
    if (!d->bound && d->out)
        ch->path.bound_send++;
    else if (!d->bound)
        ch->path.bound_recv++;
    d->bound = buf;
    d->bound_size = bufsize;
    return XFER_SUCCESS;
}

/* The public calls: under the context's lock (the progress thread, progress.c). */
static xfer_status_t selection_of_locked(xfer_channel_t *ch, const char *dataset, uint64_t start[],
                                         uint64_t count[])
{
    xfer_rt_dset_t *d;
    const xfer_cfg_dataset_t *c;

    if (!ch || !dataset || !start || !count)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "xfer_selection_of: channel, dataset name, start or count is NULL");
    d = xfer_ch_find_dset(ch, dataset);
    if (!d)
        return xfer_ch_no_such_dataset(ch, dataset);
    c = d->cfg;
    if (d->out)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s is sent by %s (this component), not received",
                        ch->cfg->name, dataset, xfer_ch_side_name(ch, ch->side));
    if (d->sel_declared || d->sel_resolved) {
        memcpy(start, d->sel_start, (size_t) c->ndims * sizeof(uint64_t));
        memcpy(count, d->sel_count, (size_t) c->ndims * sizeof(uint64_t));
        return XFER_SUCCESS;
    }
    if (c->selection == XFER_SELECT_USER)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s has selection: user, and rank %d of %s has not "
                        "declared its box with xfer_select yet",
                        ch->cfg->name, dataset, ch->me, xfer_ch_side_name(ch, ch->side));
    return xfer_decompose(c->selection, c->ndims, c->dims, ch->nlocal, ch->me, start, count);
}

xfer_status_t xfer_selection_of(xfer_channel_t *ch, const char *dataset, uint64_t start[],
                                uint64_t count[])
{
    XFER_CH_LOCKED(ch, selection_of_locked(ch, dataset, start, count));
}

xfer_status_t xfer_select(xfer_channel_t *ch, const char *dataset, const uint64_t start[],
                          const uint64_t count[])
{
    XFER_CH_LOCKED(ch, select_locked(ch, dataset, start, count));
}

xfer_status_t xfer_bind_buffer(xfer_channel_t *ch, const char *dataset, void *buf, size_t bufsize)
{
    XFER_CH_LOCKED(ch, bind_buffer_locked(ch, dataset, buf, bufsize));
}
