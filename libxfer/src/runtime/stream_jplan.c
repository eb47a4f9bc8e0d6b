/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's joined and variable datasets, when every receiving rank takes all of each
 * (stream_jtable.h): each slot's second phase is one inter-group allgatherv plan, made when the
 * channel forms and recounted for each step's counts without any communication. */
#include <limits.h>
#include <string.h>

#include "../coll/coll.h"
#include "stream_jtable.h"

/* What rank @p r of side @p k is taken to contribute when the plans form (their recount fits
 * them, and auto's choice, to each step's rows): of each joined dataset the side
 * sends, max_rows shared out, else 64 rows; of each variable one, 4 KiB. */
static size_t predicted(const xfer_channel_t *ch, int k)
{
    const xfer_rt_joined_t *jn = ch->jn;
    size_t b = 0;
    int j;
    for (j = 0; j < jn->nj[k]; j++) {
        const xfer_rt_dset_t *d = &ch->ds[jn->idx[k][j]];
        const uint64_t n = (uint64_t) side_ranks(ch, k);
        const uint64_t rows = d->cfg->max_rows ? (d->cfg->max_rows + n - 1) / n : 64;
        b += d->cfg->joined ? PAD8((size_t) rows * row_bytes(d)) : 4096; /* (variable, per_step) */
    }
    return b > INT_MAX / 2 ? INT_MAX / 2 : b;
}

/* The most bytes side @p k's ranks may put of their joined datasets in one step, all together
 * (each rank's block padded), when every such dataset of either side is joined with a max_rows;
 * else 0: a step's bytes are unbounded. */
static size_t side_most(const xfer_channel_t *ch, int k)
{
    const xfer_rt_joined_t *jn = ch->jn;
    size_t b = 0;
    int j, e;
    for (e = 0; e < 2; e++)
        for (j = 0; j < jn->nj[e]; j++) {
            const xfer_cfg_dataset_t *c = dset_at(ch, e, j)->cfg;
            if (!c->joined || !c->max_rows || zipped(dset_at(ch, e, j)))
                return 0; /* (a compressed one's frames may pass its raw bytes) */
        }
    for (j = 0; j < jn->nj[k]; j++) {
        const xfer_rt_dset_t *d = dset_at(ch, k, j);
        b += (size_t) d->cfg->max_rows * row_bytes(d) + 8 * (size_t) side_ranks(ch, k);
    }
    return b;
}

/* One slot's plan, by algorithm @p algo (NULL: the channel's); node staging as the channel says
 * when @p staged, its windows reserved for the most a step can hold. */
static xfer_status_t slot_plan(xfer_channel_t *ch, xfer_rt_jslot_t *js, const char *algo,
                               int staged)
{
    static char dummy[8];
    xfer_coll_opts_t o;
    xfer_call_t c;
    xfer_status_t st = XFER_SUCCESS;
    int r;
    for (r = 0; r < ch->nremote; r++) {
        js->rc[r] = (int) predicted(ch, 1 - ch->side);
        js->rd[r + 1] = js->rd[r] + js->rc[r];
    }
    XFER_CHECK_GOTO(xfer_ch_plan_opts(ch, &o), st, out);
    if (!staged)
        o.hier_auto = XFER_HIER_AUTO_NEVER;
    if (algo)
        o.algorithm = algo;
    memset(&c, 0, sizeof(c));
    c.kind = XFER_CALL_ALLGATHERV;
    c.sbuf = dummy;
    c.scount = (int) predicted(ch, ch->side);
    c.stype = MPI_BYTE;
    c.rbuf = dummy;
    c.rcounts = js->rc;
    c.rdispls = js->rd;
    c.rtype = MPI_BYTE;
    if (js->pcomm == MPI_COMM_NULL) {
        XFER_MPI_GOTO(MPI_Comm_dup(ch->inter, &js->pcomm), st, out);
        XFER_MPI_GOTO(MPI_Comm_set_errhandler(js->pcomm, MPI_ERRORS_RETURN), st, out);
    }
    c.inter = js->pcomm;
    if (staged)
        XFER_CHECK_GOTO(xfer_plan_create_reserved(&c, &o, side_most(ch, ch->side),
                                                  side_most(ch, 1 - ch->side), &js->plan),
                        st, out);
    else
        XFER_CHECK_GOTO(xfer_plan_create(&c, &o, 1, &js->plan), st, out);
out:
    return st;
}

/* May the slot's plan carry every step's counts with the same verdict on every rank? Flat: if its
 * algorithm never splits the groups. Node staging: if its inner algorithm does not either (the
 * windows hold any step: side_most); its inner algorithm is then kept for every recount (auto
 * would re-choose it from each step's node aggregates and the plan could not follow). */
static int uniform(xfer_plan_t *p)
{
    const xfer_hier_t *h = p->hier;
    if (!h)
        return !(p->algo->flags & XFER_ALGO_SPLITS);
    if (!h->direct && (h->inner->flags & XFER_ALGO_SPLITS))
        return 0;
    if (!p->opts.hier_inner)
        p->opts.hier_inner = h->direct ? "direct" : h->inner->name;
    return 1;
}

/* Receivers that take all of every such dataset (their modes all) get them through an
 * inter-group allgatherv plan of each slot, recounted every step without any communication. No
 * rank may then take another path than its peers, so the recount's verdict must be the same on
 * every rank (uniform): the plan's algorithm is one that never splits the groups
 * (XFER_ALGO_SPLITS: a recount that needs other subgroups is refused on the ranks whose groups
 * change and not on the others), and node staging, whose windows are sized per node, is used
 * only when every such dataset is joined with a max_rows, which sizes the windows for any step.
 * The channel's algorithm, or auto's choice for the predicted counts, when it qualifies; else
 * fc_direct, flat. A flat plan of auto's chooses again for each step's counts when it is
 * recounted (among the algorithms that never split the groups: the counts are the same on every
 * rank, so is the choice). Every rank sees the same algorithm, so every rank makes the same
 * plans.
 * Collective over both sides. */
xfer_status_t xfer_ch_jplan_create(xfer_channel_t *ch)
{
    xfer_rt_joined_t *jn = ch->jn;
    xfer_status_t st = XFER_SUCCESS;
    const int staged = side_most(ch, 0) + side_most(ch, 1) > 0;
    int s, k, i;

    jn->plans = 1;
    for (k = 0; k < 2; k++)
        for (i = 0; i < jn->nj[k]; i++)
            jn->plans &= ch->ds[jn->idx[k][i]].cfg->selection == XFER_SELECT_ALL;
    if (!jn->plans)
        return XFER_SUCCESS;
    for (s = 0; s < ch->nslots; s++) {
        xfer_rt_jslot_t *js = &jn->js[s];
        int chosen;
        XFER_CHECK_GOTO(slot_plan(ch, js, NULL, staged), st, out);
        chosen = !js->plan->opts.algorithm; /* auto's */
        if (!uniform(js->plan)) {           /* (named, or auto's choice) */
            XFER_CHECK_GOTO(xfer_plan_free(&js->plan), st, out);
            XFER_CHECK_GOTO(slot_plan(ch, js, "fc_direct", 0), st, out);
        }
        js->plan->opts.reselect = chosen && !js->plan->hier;
    }
    if (ch->me == 0 && xfer_trace_level() > 0)
        xfer_log(XFER_LOG_TRACE, "channel %s at %s: joined and variable datasets by %s",
                 ch->cfg->name, xfer_ch_side_name(ch, ch->side), jn->js[0].plan->name);
out:
    return st;
}

/* Is the plan's output on a receiving rank of side @p k's datasets this rank's selection of
 * them, as it lands: one joined dataset, whose ranks' rows (unpadded: block_bytes) arrive
 * concatenated in rank order? (Then a buffer bound to it may receive the rows in place.) */
static int lands_whole(const xfer_channel_t *ch, int k)
{
    return ch->jn->nj[k] == 1 && dset_at(ch, k, 0)->cfg->joined && !zipped(dset_at(ch, k, 0));
}

/* Does every receiving rank take every row of every joined dataset (its mode all, nothing
 * declared)? The same answer on every rank: the set-up's records carried every rule. When a
 * rank bound one of these datasets (every rank knows it from the set-up's records), the plan
 * carries the steps only if it moves each side's rows from where the puts give them to where
 * they land (one joined dataset per side: lands_whole); otherwise they go point to point, which
 * sends from the caller's block and lands any selection in place (subarray datatypes), as a
 * bound fixed dataset takes the direct path. */
static int all_taken(xfer_channel_t *ch)
{
    xfer_rt_joined_t *jn = ch->jn;
    int k, j, r;
    if (jn->all_taken)
        return jn->all_taken > 0;
    jn->all_taken = 1;
    for (k = 0; k < 2; k++)
        for (j = 0; j < jn->nj[k]; j++) {
            const xfer_rt_dset_t *d = &ch->ds[jn->idx[k][j]];
            const int nd = d->cfg->ndims;
            for (r = 0; r < side_ranks(ch, 1 - k); r++)
                if (!d->jrule || d->jrule[(size_t) r * 2 * (size_t) nd] != UINT64_MAX ||
                    d->jrule[(size_t) r * 2 * (size_t) nd + (size_t) nd] != XFER_SELECT_ALL)
                    jn->all_taken = -1;
        }
    for (k = 0; jn->bound && jn->all_taken > 0 && k < 2; k++)
        if (jn->nj[k] && !lands_whole(ch, k)) {
            jn->all_taken = -1;
            if (ch->me == 0 && xfer_trace_level() > 0)
                xfer_log(XFER_LOG_TRACE,
                         "channel %s at %s: a bound buffer: joined and variable datasets go "
                         "point to point (the plan would stage them)",
                         ch->cfg->name, xfer_ch_side_name(ch, ch->side));
        }
    return jn->all_taken > 0;
}

/* Side @p k's rank @p r's bytes of its dataset @p j in the step, padded (a per_step dataset's
 * blocks one after the other, each padded: its entry says), but for a side's only dataset:
 * nothing follows it, and a joined one's rows then land concatenated in rank order. With
 * @p wire, a compressed dataset's are its frames' (each padded). */
static size_t block_bytes(const xfer_channel_t *ch, const xfer_rt_jslot_t *js, int k, int r, int j,
                          int wire)
{
    const xfer_rt_dset_t *d = dset_at(ch, k, j);
    uint64_t bs[XFER_MAX_DIMS], bc[XFER_MAX_DIMS];
    size_t b;
    if (wire && zipped(d) && !zraw_at(ch, js->tab[k], k, r, j))
        return (size_t) zbytes_at(ch, js->tab[k], k, r, j);
    if (per_step(d)) {
        const uint64_t *x = entry_at(ch, js->tab[k], k, r, j);
        return x[0] ? (size_t) x[2] : 0;
    }
    xfer_ch_jblock(ch, js, k, j, r, bs, bc);
    b = (size_t) xfer_ch_volume(d->cfg->ndims, bc) * d->esize;
    return ch->jn->nj[k] == 1 ? b : PAD8(b);
}

/* Side @p k's rank @p r's bytes in the plan: its block of each dataset, one after the other
 * (@p wire: compressed ones' frames; else the payload's bytes). */
static size_t plan_bytes(const xfer_channel_t *ch, const xfer_rt_jslot_t *js, int k, int r,
                         int wire)
{
    size_t b = 0;
    int j;
    for (j = 0; j < ch->jn->nj[k]; j++)
        b += block_bytes(ch, js, k, r, j, wire);
    return b;
}

const char *xfer_ch_jplan_at(const xfer_channel_t *ch, const xfer_rt_jslot_t *js, int k, int r,
                             int j, size_t *bytes)
{
    size_t at = (size_t) js->rd[r];
    int e;
    for (e = 0; e < j; e++)
        at += block_bytes(ch, js, k, r, e, 1);
    *bytes = block_bytes(ch, js, k, r, j, 1);
    return js->rland + at;
}

/* The step by the slot's plan, when it carries it (*ok); else (more than int counts, or a shape
 * its algorithm does not take: the same verdict everywhere) the rows go point to point. A
 * bound receiving buffer that holds every row of the step (lands_whole) receives them; a
 * bound sending rank's rows go from its block. */
static xfer_status_t plan_step(xfer_channel_t *ch, xfer_rt_jslot_t *js, int *ok)
{
    static char dummy[8];
    xfer_rt_joined_t *jn = ch->jn;
    const int k = ch->side, ko = 1 - k;
    size_t tot[2] = {0, 0}, off = 0, payload_in = 0;
    const void *sbuf = dummy;
    const xfer_rt_dset_t *in = lands_whole(ch, ko) ? dset_at(ch, ko, 0) : NULL;
    xfer_status_t st = XFER_SUCCESS;
    int r, j;

    *ok = 0;
    for (r = 0; r < ch->nlocal; r++)
        tot[k] += js->lb[r] = plan_bytes(ch, js, k, r, 1);
    for (r = 0; r < ch->nremote; r++) {
        const size_t b = plan_bytes(ch, js, ko, r, 1);
        tot[ko] += b;
        payload_in += plan_bytes(ch, js, ko, r, 0);
        js->rc[r] = b > INT_MAX ? 0 : (int) b;
    }
    if (tot[0] > INT_MAX || tot[1] > INT_MAX)
        return XFER_SUCCESS;
    for (r = 0; r < ch->nremote; r++)
        js->rd[r + 1] = js->rd[r] + js->rc[r];
    js->rland = in && in->bound && tot[ko] > 0 && tot[ko] <= in->bound_size ? in->bound : NULL;
    if (!js->rland && js->rbuf_cap < tot[ko] + 8) {
        char *nb = xfer_realloc_array(js->rbuf, tot[ko] + 8, 1);
        if (!nb)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: %zu bytes of rows", ch->cfg->name,
                            tot[ko]);
        js->rbuf = nb;
        js->rbuf_cap = tot[ko] + 8;
    }
    if (!js->rland)
        js->rland = js->rbuf;
    if (jn->nj[k] == 1 && js->lb[ch->me]) { /* sent straight from the put's copy, or bound block */
        sbuf = zipped(dset_at(ch, k, 0)) && !js->zskip[0] ? js->z[0] : js->from[0];
    } else if (jn->nj[k] > 1 && js->lb[ch->me]) {
        if (js->pack_cap < js->lb[ch->me]) {
            char *nb = xfer_realloc_array(js->pack, js->lb[ch->me], 1);
            if (!nb)
                return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: %zu bytes of rows", ch->cfg->name,
                                js->lb[ch->me]);
            js->pack = nb;
            js->pack_cap = js->lb[ch->me];
        }
        for (j = 0; j < jn->nj[k]; j++) {
            const size_t b = block_bytes(ch, js, k, ch->me, j, 1);
            if (b)
                memcpy(js->pack + off,
                       zipped(dset_at(ch, k, j)) && !js->zskip[j] ? js->z[j] : js->from[j], b);
            off += b;
        }
        sbuf = js->pack;
    }
    st = xfer_plan_recount(js->plan, sbuf, (int) js->lb[ch->me], js->rland, js->rc, js->rd, js->lb);
    if (st == XFER_ERR_NOT_SUPPORTED) { /* for good: the plan cannot be used again */
        if (ch->me == 0 && xfer_trace_level() > 0)
            xfer_log(XFER_LOG_TRACE,
                     "channel %s at %s: %s; joined and variable datasets go "
                     "point to point from now on",
                     ch->cfg->name, xfer_ch_side_name(ch, ch->side), xfer_last_error());
        xfer_clear_error();
        xfer_plan_abandon(&js->plan);
        return XFER_SUCCESS;
    }
    XFER_CHECK_GOTO(st, st, out);
    XFER_CHECK_GOTO(xfer_start(js->plan), st, out);
    ch->stats.bytes_sent += plan_bytes(ch, js, k, ch->me, 0);
    ch->stats.wire_bytes_sent += js->lb[ch->me];
    ch->stats.bytes_received += payload_in;
    ch->stats.wire_bytes_received += tot[ko];
    *ok = 1;
out:
    return st;
}

xfer_status_t xfer_ch_jplan_step(xfer_channel_t *ch, xfer_rt_jslot_t *js, int *ok)
{
    xfer_rt_joined_t *jn = ch->jn;
    xfer_status_t st = XFER_SUCCESS;
    int j;
    *ok = 0;
    if (!js->plan || !all_taken(ch))
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(plan_step(ch, js, ok), st, out);
    for (j = 0; *ok && j < jn->nj[1 - ch->side]; j++) { /* all of it, in place */
        uint64_t *bs = js->bs + (size_t) j * XFER_MAX_DIMS,
                 *bc = js->bc + (size_t) j * XFER_MAX_DIMS;
        memset(bs, 0, XFER_MAX_DIMS * sizeof(uint64_t));
        xfer_ch_jdims(ch, js, 1 - ch->side, j, bc);
    }
out:
    return st;
}

void xfer_ch_jplan_fetch(xfer_channel_t *ch, const xfer_rt_jslot_t *js, xfer_rt_dset_t *ds,
                         const uint64_t *start, const uint64_t *count, void *buf)
{
    const int j = jindex(ch, ds), k = xfer_ch_dset_side(ch, ds), nd = ds->cfg->ndims;
    uint64_t bs[XFER_MAX_DIMS], bc[XFER_MAX_DIMS];
    int r, e, b;
    for (r = 0; r < ch->nremote; r++) { /* each sending rank's blocks, where the plan put them */
        size_t at = (size_t) js->rd[r];
        for (e = 0; e < j; e++)
            at += block_bytes(ch, js, k, r, e, 1);
        for (b = 0; b < xfer_ch_jnblk(ch, js->tab[k], k, r, j); b++) {
            uint64_t v;
            xfer_ch_jbox(ch, js, k, j, r, b, bs, bc);
            v = xfer_ch_volume(nd, bc);
            if (v)
                xfer_ch_copy_box(buf, start, count, js->rland + at, bs, bc, nd, ds->esize);
            at += PAD8((size_t) v * ds->esize);
        }
    }
}
