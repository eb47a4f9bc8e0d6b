/* SPDX-License-Identifier: BSD-3-Clause */
/* Step 0's set-up (runtime.h, xfer_rt_setup_t): every rank's geometry record (its blocks, its
 * selections, its node) is exchanged, contributions are laid out, the path of the steps is
 * chosen, the stages are allocated and the allgatherv plans are recounted or the direct schedule
 * is built, with two votes of every rank of both sides. Nothing here blocks: each progress pass
 * advances it. What needs communicators (the slots' duplicates, the plans) was made when the
 * channel formed, in xfer_init's file order (xfer_ch_prepare, stream_open.c). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../coll/coll.h"
#include "../sched/exec.h"
#include "../topo/topo.h"
#include "mxn.h"
#include "stream.h"

/* The flags word of a rank's geometry record: what makes every rank choose the direct path
 * (GEO_BOUND: a bound buffer of a dataset in the contributions), or the joined and variable
 * datasets' point-to-point one (GEO_JBOUND: a bound buffer of one of those, stream_jplan.c). */
enum { GEO_BOUND = 1, GEO_DIRECT = 2, GEO_NO_HYBRID = 4, GEO_NO_STAGE = 8, GEO_JBOUND = 16 };

/* ---- the geometry ---------------------------------------------------------------------------- */

/* Every receiving rank's selection of the datasets side @p k receives, from their geometry
 * records: whether every one takes a dataset whole (d->whole); sets *@p partial when some rank
 * holds less than the whole of a dataset. */
static xfer_status_t read_selections(xfer_channel_t *ch, int k, int nranks, const uint64_t *geo,
                                     int *partial)
{
    const int len = xfer_ch_geo_len(ch);
    xfer_status_t st = XFER_SUCCESS;
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
            if (xfer_ch_jroute(d)) { /* a rule, not a box: nothing of it in the contributions */
                XFER_CHECK_GOTO(xfer_ch_joined_rule_in(ch, d, r, nranks, s0), st, out);
                continue;
            }
            memcpy(d->gs_start + (size_t) r * nd, s0, (size_t) nd * sizeof(uint64_t));
            memcpy(d->gs_count + (size_t) r * nd, c0, (size_t) nd * sizeof(uint64_t));
            for (e = 0; e < nd; e++)
                if (s0[e] != 0 || c0[e] != d->cfg->dims[e])
                    d->whole = 0;
        }
        *partial |= !d->whole;
    }
out:
    return st;
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

/* What a bound buffer of @p d carries: the rank's block, or its selection. */
static size_t bound_len(const xfer_rt_dset_t *d)
{
    return d->out ? d->my_bytes : xfer_ch_sel_bytes(d);
}

/* Bound buffers must hold what they carry (a joined or variable dataset's selection changes
 * every step: a step it does not fit lands in the library's buffer, stream_joined.c). */
static xfer_status_t check_bound(xfer_channel_t *ch)
{
    int i;
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        const size_t need = d->dyn ? 0 : bound_len(d);
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
        if (d->bound && !xfer_ch_jroute(d))
            ch->path.seg[dir][n[dir]++].ptr = d->bound;
    }
    ch->path.bound_gen++;
}

/* The ranges of the contribution (0) and the receive area (1) that live in bound buffers (the
 * datasets of the slots' second phase have none: stream_joined.c binds them itself). */
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
        if (!d->bound || xfer_ch_jroute(d))
            continue;
        g = &ch->path.seg[dir][ch->path.nseg[dir]++];
        g->ptr = d->bound;
        g->off = d->out ? d->my_off : d->gs_off[ch->me];
        g->len = bound_len(d);
    }
    return XFER_SUCCESS;
}

/* The direct schedule (direct and hybrid paths): this rank's schedule (one for every slot) and
 * each slot's executor over the merged communicator of its own that the channel made when it
 * formed (steps in flight never share a message space). Local. */
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
        md[n].bfirst = d->g_first;
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
        comms[XFER_COMM_MAIN] = s->merged; /* made when the channel formed */
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

/* ---- step 0 ---------------------------------------------------------------------------------- */

/* This rank's bound buffers in its record's flags: of a dataset in the contributions
 * (GEO_BOUND), of one that moves in the slots' second phase (GEO_JBOUND). */
static uint64_t bound_flags(const xfer_channel_t *ch)
{
    uint64_t f = 0;
    int i;
    for (i = 0; i < ch->nds; i++)
        if (ch->ds[i].bound)
            f |= xfer_ch_jroute(&ch->ds[i]) ? GEO_JBOUND : GEO_BOUND;
    return f;
}

/* This rank's own failure during set-up: the first one is kept, with its words, and voted. */
static void own_failure(xfer_channel_t *ch, xfer_status_t st)
{
    if (st == XFER_SUCCESS || ch->su.st != XFER_SUCCESS)
        return;
    ch->su.st = st;
    snprintf(ch->su.why, sizeof(ch->su.why), "%s", xfer_last_error());
}

xfer_status_t xfer_ch_setup_post(xfer_channel_t *ch)
{
    const int k = ch->side, len = xfer_ch_geo_len(ch);
    xfer_rt_setup_t *su = &ch->su;
    xfer_status_t st = XFER_SUCCESS;
    size_t w;
    int i;

    if (ch->setup || su->state != XFER_SU_IDLE)
        return XFER_SUCCESS;
    su->req[0] = su->req[1] = MPI_REQUEST_NULL;
    su->mine = xfer_calloc((size_t) len + 1, sizeof(uint64_t));
    su->own_all = xfer_calloc((size_t) ch->nlocal * (size_t) len + 1, sizeof(uint64_t));
    su->rem_all = xfer_calloc((size_t) ch->nremote * (size_t) len + 1, sizeof(uint64_t));
    if (!su->mine || !su->own_all || !su->rem_all) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: set-up", ch->cfg->name);
        goto out;
    }
    /* This rank's record: the number of its blocks of each dataset it sends (the first step's,
     * which follow in the second exchange), its selection of each one it receives. A missing
     * selection is an error every rank learns at the first vote. */
    for (i = 0; i < ch->nds; i++) {
        xfer_rt_dset_t *d = &ch->ds[i];
        const int nd = d->cfg->ndims, pos = xfer_ch_geo_pos(ch, i);
        if (xfer_ch_dset_side(ch, d) != k) {
            xfer_status_t s2 = xfer_ch_own_selection(ch, d);
            own_failure(ch, s2);
            if (s2 != XFER_SUCCESS)
                continue;
            if (xfer_ch_jroute(d)) { /* its rule: each step's share follows from it */
                xfer_ch_rule_of(d, su->mine + pos);
                continue;
            }
            memcpy(su->mine + pos, d->sel_start, (size_t) nd * sizeof(uint64_t));
            memcpy(su->mine + pos + nd, d->sel_count, (size_t) nd * sizeof(uint64_t));
        } else if (!xfer_ch_jroute(d)) {         /* (joined, variable, per_step: none in the
                                                    contributions, stream_joined.c) */
            su->mine[pos] = (uint64_t) d->fix.n; /* 0 until the first commit */
        }
    }
    if (!(su->mybx =
              xfer_calloc((size_t) xfer_ch_geo_blocks(ch, k, su->mine) + 1, sizeof(uint64_t)))) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: set-up", ch->cfg->name);
        goto out;
    }
    for (i = 0, w = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        const size_t words = (size_t) d->fix.n * 2 * (size_t) d->cfg->ndims;
        if (xfer_ch_dset_side(ch, d) == k && !xfer_ch_jroute(d) && words) {
            memcpy(su->mybx + w, d->fix.box, words * sizeof(uint64_t));
            w += words;
        }
    }
    su->mine[len - 2] = (uint64_t) ch->node_key;
    su->mine[len - 1] = bound_flags(ch) |
                        (xfer_env_long("XFER_RT_DIRECT", 0) > 0 ? GEO_DIRECT : 0) |
                        (xfer_env_long("XFER_RT_HYBRID", 1) == 0 ? GEO_NO_HYBRID : 0) |
                        (xfer_env_long("XFER_RT_NODE_STAGE", 1) == 0 ? GEO_NO_STAGE : 0);
    /* the records of this side (both sides check the tiling: both report the same error) and of
     * the other side, at once */
    XFER_MPI_GOTO(MPI_Iallgather(su->mine, len, MPI_UINT64_T, su->own_all, len, MPI_UINT64_T,
                                 ch->ctl_local, &su->req[0]),
                  st, out);
    XFER_MPI_GOTO(MPI_Iallgather(su->mine, len, MPI_UINT64_T, su->rem_all, len, MPI_UINT64_T,
                                 ch->ctl_inter, &su->req[1]),
                  st, out);
    su->state = XFER_SU_EXCHANGE;
out:
    if (st != XFER_SUCCESS)
        ch->health.failed = 1;
    return st;
}

/* After the records: every sending rank's blocks, as many as its record says, on both sides
 * (the same counts on every rank: a count beyond int fails every rank alike at the first
 * vote). */
static xfer_status_t post_blocks(xfer_channel_t *ch)
{
    const int k = ch->side, ko = 1 - k, len = xfer_ch_geo_len(ch);
    xfer_rt_setup_t *su = &ch->su;
    xfer_status_t st = XFER_SUCCESS;
    size_t tot[2] = {0, 0};
    int r, big = 0;

    su->own_rc = xfer_calloc((size_t) ch->nlocal + 1, sizeof(int));
    su->own_rd = xfer_calloc((size_t) ch->nlocal + 1, sizeof(int));
    su->rem_rc = xfer_calloc((size_t) ch->nremote + 1, sizeof(int));
    su->rem_rd = xfer_calloc((size_t) ch->nremote + 1, sizeof(int));
    if (!su->own_rc || !su->own_rd || !su->rem_rc || !su->rem_rd)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: set-up", ch->cfg->name);
    for (r = 0; r < ch->nlocal; r++) {
        const size_t n = (size_t) xfer_ch_geo_blocks(ch, k, su->own_all + (size_t) r * len);
        su->own_rd[r] = (int) tot[0];
        su->own_rc[r] = (int) n;
        big |= n > INT_MAX || tot[0] > INT_MAX - n;
        tot[0] += n;
    }
    for (r = 0; r < ch->nremote; r++) {
        const size_t n = (size_t) xfer_ch_geo_blocks(ch, ko, su->rem_all + (size_t) r * len);
        su->rem_rd[r] = (int) tot[1];
        su->rem_rc[r] = (int) n;
        big |= n > INT_MAX || tot[1] > INT_MAX - n;
        tot[1] += n;
    }
    if (big) { /* every rank alike: nothing moves, the vote fails */
        own_failure(ch, XFER_ERR(XFER_ERR_TOO_LARGE,
                                 "channel %s: the blocks of the first step take more than %d words",
                                 ch->cfg->name, INT_MAX));
        memset(su->own_rc, 0, (size_t) ch->nlocal * sizeof(int));
        memset(su->own_rd, 0, (size_t) ch->nlocal * sizeof(int));
        memset(su->rem_rc, 0, (size_t) ch->nremote * sizeof(int));
        memset(su->rem_rd, 0, (size_t) ch->nremote * sizeof(int));
        tot[0] = tot[1] = 0;
    }
    su->own_bx = xfer_calloc(tot[0] + 1, sizeof(uint64_t));
    su->rem_bx = xfer_calloc(tot[1] + 1, sizeof(uint64_t));
    if (!su->own_bx || !su->rem_bx)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: set-up", ch->cfg->name);
    XFER_MPI_GOTO(MPI_Iallgatherv(su->mybx, su->own_rc[ch->me], MPI_UINT64_T, su->own_bx,
                                  su->own_rc, su->own_rd, MPI_UINT64_T, ch->ctl_local, &su->req[0]),
                  st, out);
    XFER_MPI_GOTO(MPI_Iallgatherv(su->mybx, su->own_rc[ch->me], MPI_UINT64_T, su->rem_bx,
                                  su->rem_rc, su->rem_rd, MPI_UINT64_T, ch->ctl_inter, &su->req[1]),
                  st, out);
out:
    return st;
}

/* Post a vote: the worst status and whether every rank's plans carry the contributions, over
 * both sides (each side's minimum and the other side's, at once). */
static xfer_status_t vote(xfer_channel_t *ch, int plans_ok)
{
    xfer_rt_setup_t *su = &ch->su;
    xfer_status_t st = XFER_SUCCESS;
    su->vote[0] = (int) su->st;
    su->vote[1] = plans_ok;
    XFER_MPI_GOTO(
        MPI_Iallreduce(su->vote, su->got_local, 2, MPI_INT, MPI_MIN, ch->ctl_local, &su->req[0]),
        st, out);
    XFER_MPI_GOTO(
        MPI_Iallreduce(su->vote, su->got_remote, 2, MPI_INT, MPI_MIN, ch->ctl_inter, &su->req[1]),
        st, out);
out:
    return st;
}

/* The vote's outcome, the same on every rank of both sides: success, or this rank's own error,
 * or one naming where the failure was. */
static xfer_status_t verdict(xfer_channel_t *ch)
{
    const xfer_rt_setup_t *su = &ch->su;
    if (su->st != XFER_SUCCESS)
        return xfer_err_raw(su->st, "%s", su->why);
    if (su->got_local[0] != XFER_SUCCESS)
        return XFER_ERR((xfer_status_t) su->got_local[0],
                        "channel %s: setting up the first step failed on another rank of %s",
                        ch->cfg->name, xfer_ch_side_name(ch, ch->side));
    if (su->got_remote[0] != XFER_SUCCESS)
        return XFER_ERR(XFER_ERR_PEER_FAILED,
                        "channel %s: setting up the first step failed at %s (%s): see its error",
                        ch->cfg->name, xfer_ch_peer_name(ch),
                        xfer_status_name((xfer_status_t) su->got_remote[0]));
    return XFER_SUCCESS;
}

/* What the path decides: the allgatherv plan's part of every contribution, the direct path's
 * node keys and receive areas, what lands here per step. Run again when the plans cannot carry
 * the contributions and every rank falls back to the direct path. */
static xfer_status_t layout_path(xfer_channel_t *ch)
{
    const int k = ch->side, ko = 1 - k;
    xfer_rt_setup_t *su = &ch->su;
    xfer_status_t st = XFER_SUCCESS;
    int i, r;

    ch->lay.my_plan = plan_part(ch, k, su->own_bytes[ch->me], su->own_pre[ch->me]);
    ch->lay.r_pre[0] = 0;
    for (r = 0; r < ch->nremote; r++) {
        ch->lay.r_plan[r] = plan_part(ch, ko, ch->lay.r_bytes[r], su->rem_pre[r]);
        ch->lay.r_pre[r + 1] = ch->lay.r_pre[r] + ch->lay.r_plan[r];
    }
    if (ch->path.direct && !ch->path.node[0] && !ch->path.node[1]) {
        XFER_CHECK_GOTO(node_keys(ch, k, ch->nlocal, su->own_all, su->flags), st, out);
        XFER_CHECK_GOTO(node_keys(ch, ko, ch->nremote, su->rem_all, su->flags), st, out);
    }
    /* the direct schedule's selections: after the headers and the attributes, or after the
     * plan's region (hybrid) */
    if (ch->path.direct && ch->sends[ko])
        place_selections(ch, k, ch->nlocal,
                         ch->path.hybrid
                             ? ch->lay.r_pre[ch->nremote]
                             : (size_t) ch->nremote * sizeof(xfer_rt_hdr_t) + ch->lay.attr_cap);
    if (ch->path.direct && ch->sends[k])
        place_selections(ch, ko, ch->nremote,
                         ch->path.hybrid
                             ? su->plan_tot[k]
                             : (size_t) ch->nlocal * sizeof(xfer_rt_hdr_t) + ch->lay.attr_cap);
    ch->path.step_recv = ch->lay.r_pre[ch->nremote];
    for (i = 0; ch->path.direct && i < ch->nds; i++)
        if (!ch->ds[i].out && !xfer_ch_by_plan(ch, &ch->ds[i]))
            ch->path.step_recv += xfer_ch_sel_bytes(&ch->ds[i]);
out:
    return st;
}

/* The slots' stages: receive areas as the path wants them; send stages for a rank whose first
 * commit did not allocate them; the steps committed before the set-up (laid out with the
 * datasets in channel order, xfer_ch_stage_first) moved to the contribution's layout. */
static xfer_status_t stages(xfer_channel_t *ch, const size_t *nat)
{
    const size_t rlen = ch->path.direct ? ch->path.r_area : ch->lay.r_total;
    char *tmp = NULL;
    int i, j, moved = 0;

    for (j = 0; nat && j < ch->nds; j++)
        moved |= ch->ds[j].out && ch->ds[j].my_bytes && nat[j] != ch->ds[j].my_off;
    if (moved && !(tmp = xfer_malloc(ch->lay.my_bytes)))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: send stage of %zu bytes", ch->cfg->name,
                        ch->lay.my_bytes);
    for (i = 0; i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        xfer_free(s->rbuf);
        s->rbuf = NULL;
        if (rlen && !(s->rbuf = xfer_malloc(rlen))) {
            xfer_free(tmp);
            return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: receive stage of %zu bytes",
                            ch->cfg->name, rlen);
        }
        if (!s->sbuf && ch->lay.my_bytes && !(s->sbuf = xfer_calloc(1, ch->lay.my_bytes))) {
            xfer_free(tmp);
            return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: send stage of %zu bytes",
                            ch->cfg->name, ch->lay.my_bytes);
        }
        if (moved && (s->state == XFER_SLOT_FILLING || s->state == XFER_SLOT_COMMITTED)) {
            memcpy(tmp, s->sbuf, ch->lay.my_bytes);
            for (j = 0; j < ch->nds; j++) {
                const xfer_rt_dset_t *d = &ch->ds[j];
                if (d->out && d->my_bytes && !d->bound)
                    memcpy(s->sbuf + d->my_off, tmp + nat[j], d->my_bytes);
            }
        }
    }
    xfer_free(tmp);
    return XFER_SUCCESS;
}

/* Recount every slot's plan for the real contributions' plan parts: 1 when all of them carry
 * them (a plan that cannot is freed). */
static int recount_plans(xfer_channel_t *ch)
{
    const int k = ch->side;
    size_t *local = xfer_calloc((size_t) ch->nlocal + 1, sizeof(size_t));
    int *rc = xfer_calloc((size_t) ch->nremote + 1, sizeof(int));
    int *rd = xfer_calloc((size_t) ch->nremote + 1, sizeof(int));
    int i, r, ok = local && rc && rd;

    for (r = 0; ok && r < ch->nlocal; r++)
        local[r] = plan_part(ch, k, ch->su.own_bytes[r], ch->su.own_pre[r]);
    for (r = 0; ok && r < ch->nremote; r++) {
        rc[r] = (int) ch->lay.r_plan[r];
        rd[r] = (int) ch->lay.r_pre[r];
    }
    for (i = 0; i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        if (ok && s->plan &&
            xfer_plan_recount(s->plan, s->sbuf, (int) ch->lay.my_plan, s->rbuf, rc, rd, local) ==
                XFER_SUCCESS)
            continue;
        if (ok && ch->me == 0 && xfer_trace_level() > 0)
            xfer_log(XFER_LOG_TRACE, "channel %s at %s: %s; the direct path moves the steps",
                     ch->cfg->name, xfer_ch_side_name(ch, k),
                     s->plan ? xfer_last_error() : "no plan for these contributions");
        ok = 0;
    }
    xfer_free(local);
    xfer_free(rc);
    xfer_free(rd);
    return ok;
}

/* After the exchange: the tiling, the layout of every contribution, the path, the stages, the
 * plans; then the first vote. */
static xfer_status_t after_exchange(xfer_channel_t *ch)
{
    const int k = ch->side, ko = 1 - k;
    xfer_rt_setup_t *su = &ch->su;
    const int len = xfer_ch_geo_len(ch);
    size_t *nat = NULL;
    int plans_ok = 1, r, i;
    xfer_status_t st = XFER_SUCCESS;

    su->own_bytes = xfer_calloc((size_t) ch->nlocal + 1, sizeof(size_t));
    su->own_pre = xfer_calloc((size_t) ch->nlocal + 1, sizeof(size_t));
    su->rem_pre = xfer_calloc((size_t) ch->nremote + 1, sizeof(size_t));
    ch->lay.r_bytes = xfer_calloc((size_t) ch->nremote + 1, sizeof(size_t));
    ch->lay.r_plan = xfer_calloc((size_t) ch->nremote + 1, sizeof(size_t));
    ch->lay.r_pre = xfer_calloc((size_t) ch->nremote + 1, sizeof(size_t));
    nat = xfer_calloc((size_t) ch->nds + 1, sizeof(size_t));
    if (!su->own_bytes || !su->own_pre || !su->rem_pre || !ch->lay.r_bytes || !ch->lay.r_plan ||
        !ch->lay.r_pre || !nat) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: set-up", ch->cfg->name);
        goto out;
    }
    for (i = 0; i < ch->nds; i++) /* where the first commit put this rank's blocks */
        nat[i] = ch->ds[i].my_off;
    if (su->st != XFER_SUCCESS)
        goto out;
    /* The selections first: the datasets taken whole lead the contributions. */
    if (ch->sends[ko]) /* what this side receives */
        XFER_CHECK_GOTO(read_selections(ch, k, ch->nlocal, su->own_all, &su->partial), st, out);
    if (ch->sends[k]) /* what the other side receives */
        XFER_CHECK_GOTO(read_selections(ch, ko, ch->nremote, su->rem_all, &su->partial), st, out);
    if (ch->sends[k])
        XFER_CHECK_GOTO(xfer_ch_lay_out(ch, k, ch->nlocal, su->own_all, su->own_bx, su->own_rd,
                                        su->own_bytes, su->own_pre),
                        st, out);
    if (ch->sends[ko])
        XFER_CHECK_GOTO(xfer_ch_lay_out(ch, ko, ch->nremote, su->rem_all, su->rem_bx, su->rem_rd,
                                        ch->lay.r_bytes, su->rem_pre),
                        st, out);
    ch->lay.my_bytes = ch->sends[k] ? su->own_bytes[ch->me] : 0;
    ch->lay.r_total = 0;
    for (r = 0; r < ch->nremote; r++)
        ch->lay.r_total += ch->sends[ko] ? ch->lay.r_bytes[r] : 0;
    for (r = 0; r < ch->nlocal; r++) {
        su->tot[k] += ch->sends[k] ? su->own_bytes[r] : 0;
        su->plan_tot[k] += ch->sends[k] ? su->own_pre[r] : 0;
        su->flags |= (int) su->own_all[(size_t) r * (size_t) len + (size_t) len - 1];
    }
    su->tot[ko] = ch->lay.r_total;
    for (r = 0; r < ch->nremote; r++) {
        su->plan_tot[ko] += ch->sends[ko] ? su->rem_pre[r] : 0;
        su->flags |= (int) su->rem_all[(size_t) r * (size_t) len + (size_t) len - 1];
    }
    choose_path(ch, su->partial, su->flags, su->tot, su->plan_tot);
    if (ch->jn)
        ch->jn->bound = (su->flags & GEO_JBOUND) != 0;
    XFER_CHECK_GOTO(layout_path(ch), st, out);
    XFER_CHECK_GOTO(check_bound(ch), st, out);
    XFER_CHECK_GOTO(stages(ch, ch->lay.natural ? nat : NULL), st, out);
    if (!ch->path.direct || ch->path.hybrid)
        plans_ok = recount_plans(ch);
out:
    own_failure(ch, st);
    xfer_free(nat);
    return vote(ch, plans_ok);
}

/* After the first vote: the direct path for every rank when some rank's plans could not carry
 * the contributions; the direct schedule where the path has one; then the second vote. */
static xfer_status_t after_vote1(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    int i;

    if (ch->path.direct && !ch->path.hybrid)
        for (i = 0; i < ch->nslots; i++) /* the plans have nothing to move */
            xfer_plan_free(&ch->slots[i].plan);
    if ((!ch->path.direct || ch->path.hybrid) &&
        (ch->su.got_local[1] == 0 || ch->su.got_remote[1] == 0)) {
        for (i = 0; i < ch->nslots; i++)
            xfer_plan_free(&ch->slots[i].plan);
        ch->path.direct = 1;
        ch->path.hybrid = 0;
        XFER_CHECK_GOTO(layout_path(ch), st, out);
        XFER_CHECK_GOTO(stages(ch, NULL), st, out);
    }
    if (ch->path.direct)
        XFER_CHECK_GOTO(setup_direct(ch), st, out);
out:
    own_failure(ch, st);
    return vote(ch, 1);
}

static void trace_path(const xfer_channel_t *ch)
{
    const char *alg = "", *mxn = ch->path.mxn ? ch->path.mxn->variant : "";
    if (ch->me != 0 || xfer_trace_level() <= 0)
        return;
    if (!ch->path.direct || ch->path.hybrid)
        xfer_plan_algorithm(ch->slots[0].plan, &alg);
    xfer_log(XFER_LOG_TRACE,
             "channel %s at %s: %s%s%s%s%s, %zu bytes per step from this rank (%zu by the plan), "
             "%zu in",
             ch->cfg->name, xfer_ch_side_name(ch, ch->side), ch->path.hybrid ? "hybrid: " : "", alg,
             ch->path.hybrid ? " and " : "", mxn, ch->path.direct ? " (M x N)" : "",
             ch->lay.my_bytes, ch->lay.my_plan,
             ch->path.direct ? ch->path.r_area : ch->lay.r_total);
}

void xfer_ch_setup_release(xfer_channel_t *ch)
{
    xfer_rt_setup_t *su = &ch->su;
    int i;
    for (i = 0; i < 2; i++)
        if (su->state != XFER_SU_IDLE && su->state != XFER_SU_DONE)
            xfer_ch_abandon_coll(&su->req[i]); /* abandoned after a failure */
    xfer_free(su->mine);
    xfer_free(su->own_all);
    xfer_free(su->rem_all);
    xfer_free(su->mybx);
    xfer_free(su->own_bx);
    xfer_free(su->rem_bx);
    xfer_free(su->own_rc);
    xfer_free(su->own_rd);
    xfer_free(su->rem_rc);
    xfer_free(su->rem_rd);
    su->mybx = su->own_bx = su->rem_bx = NULL;
    su->own_rc = su->own_rd = su->rem_rc = su->rem_rd = NULL;
    xfer_free(su->own_bytes);
    xfer_free(su->own_pre);
    xfer_free(su->rem_pre);
    su->mine = su->own_all = su->rem_all = NULL;
    su->own_bytes = su->own_pre = su->rem_pre = NULL;
}

xfer_status_t xfer_ch_setup_advance(xfer_channel_t *ch)
{
    xfer_rt_setup_t *su = &ch->su;
    xfer_status_t st = XFER_SUCCESS;
    MPI_Status sts[2];
    int done = 0;

    while (!ch->setup && su->state != XFER_SU_IDLE) {
        XFER_MPI_GOTO(MPI_Testall(2, su->req, &done, sts), st, out);
        if (!done)
            return XFER_SUCCESS;
        switch (su->state) {
        case XFER_SU_EXCHANGE:
            XFER_CHECK_GOTO(post_blocks(ch), st, out);
            su->state = XFER_SU_BLOCKS;
            break;
        case XFER_SU_BLOCKS:
            XFER_CHECK_GOTO(after_exchange(ch), st, out);
            su->state = XFER_SU_VOTE1;
            break;
        case XFER_SU_VOTE1:
            XFER_CHECK_GOTO(verdict(ch), st, out);
            XFER_CHECK_GOTO(after_vote1(ch), st, out);
            su->state = XFER_SU_VOTE2;
            break;
        default: /* XFER_SU_VOTE2 */
            XFER_CHECK_GOTO(verdict(ch), st, out);
            su->state = XFER_SU_DONE;
            ch->setup = 1;
            xfer_ch_setup_release(ch);
            trace_path(ch);
            break;
        }
    }
out:
    if (st != XFER_SUCCESS)
        ch->health.failed = 1;
    return st;
}
