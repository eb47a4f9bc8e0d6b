/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's joined datasets, when every receiving rank takes every row (stream_joined.h): each
 * slot's second phase is one inter-group allgatherv plan, made when the channel forms and
 * recounted for each step's counts without any communication. */
#include <limits.h>
#include <string.h>

#include "../coll/coll.h"
#include "stream_joined.h"

/* What rank @p r of side @p k is taken to contribute when the plans form (their recount fits
 * them to each step's rows; the algorithm auto picks stays): max_rows shared out, else 64 rows,
 * of each joined dataset the side sends. */
static size_t predicted(const xfer_channel_t *ch, int k)
{
    const xfer_rt_joined_t *jn = ch->jn;
    size_t b = 0;
    int j;
    for (j = 0; j < jn->nj[k]; j++) {
        const xfer_rt_dset_t *d = &ch->ds[jn->idx[k][j]];
        const uint64_t n = (uint64_t) side_ranks(ch, k);
        const uint64_t rows = d->cfg->max_rows ? (d->cfg->max_rows + n - 1) / n : 64;
        b += PAD8((size_t) rows * row_bytes(d));
    }
    return b > INT_MAX / 2 ? INT_MAX / 2 : b;
}

/* Receivers that take every row (every joined dataset's mode is all) get the rows through an
 * inter-group allgatherv plan of each slot, recounted every step without any communication. No
 * rank may then take another path than its peers, so the plan must carry any counts on every
 * rank alike: it is flat (no node staging, whose windows are sized per node), and its algorithm
 * is one whose schedule uses no groups (a recount of one that does can fail on the ranks whose
 * groups change and succeed on the others: fc_full hung a 2 x 3 channel so):
 * fc_direct, or native when the channel names it. Collective over both sides. */
xfer_status_t xfer_ch_jplan_create(xfer_channel_t *ch)
{
    static char dummy[8];
    xfer_rt_joined_t *jn = ch->jn;
    xfer_status_t st = XFER_SUCCESS;
    int s, r, k, i;

    jn->plans = 1;
    for (k = 0; k < 2; k++)
        for (i = 0; i < jn->nj[k]; i++)
            jn->plans &= ch->ds[jn->idx[k][i]].cfg->selection == XFER_SELECT_ALL;
    if (!jn->plans)
        return XFER_SUCCESS;
    for (s = 0; s < ch->nslots; s++) {
        xfer_rt_jslot_t *js = &jn->js[s];
        xfer_coll_opts_t o;
        xfer_call_t c;
        int mine = (int) predicted(ch, ch->side);
        for (r = 0; r < ch->nremote; r++) {
            js->rc[r] = (int) predicted(ch, 1 - ch->side);
            js->rd[r + 1] = js->rd[r] + js->rc[r];
        }
        xfer_ch_plan_opts(ch, &o);
        o.hier_auto = XFER_HIER_AUTO_NEVER;
        o.algorithm = strcmp(ch->algorithm, "native") == 0 ? "native" : "fc_direct";
        memset(&c, 0, sizeof(c));
        c.kind = XFER_CALL_ALLGATHERV;
        c.sbuf = dummy;
        c.scount = mine;
        c.stype = MPI_BYTE;
        c.rbuf = dummy;
        c.rcounts = js->rc;
        c.rdispls = js->rd;
        c.rtype = MPI_BYTE;
        XFER_MPI_GOTO(MPI_Comm_dup(ch->inter, &js->pcomm), st, out);
        XFER_MPI_GOTO(MPI_Comm_set_errhandler(js->pcomm, MPI_ERRORS_RETURN), st, out);
        c.inter = js->pcomm;
        XFER_CHECK_GOTO(xfer_plan_create(&c, &o, 1, &js->plan), st, out);
    }
    if (ch->me == 0 && xfer_trace_level() > 0 && ch->nslots > 0) { /* which algorithm: benchmarks */
        const char *alg = "?";
        (void) xfer_plan_algorithm(jn->js[0].plan, &alg);
        xfer_log(XFER_LOG_TRACE,
                 "channel %s at %s: joined rows by %s (a plan per slot, recounted each step)",
                 ch->cfg->name, xfer_ch_side_name(ch, ch->side), alg);
    }
out:
    return st;
}

/* Does every receiving rank take every row of every joined dataset (its mode all, nothing
 * declared)? The same answer on every rank: the set-up's records carried every rule. */
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
    return jn->all_taken > 0;
}

/* Side @p k's rank @p r's bytes in the plan: its rows of each joined dataset, each padded. */
static size_t plan_bytes(const xfer_channel_t *ch, const uint64_t *tab, int k, int r)
{
    const xfer_rt_joined_t *jn = ch->jn;
    size_t b = 0;
    int j;
    for (j = 0; j < jn->nj[k]; j++)
        b += PAD8((size_t) rows_at(tab, jn->nj[k], r, j) * row_bytes(&ch->ds[jn->idx[k][j]]));
    return b;
}

/* The step by the slot's plan, when it carries it (*ok); else (more than int counts, or a shape
 * its algorithm does not take: the same verdict everywhere) the rows go point to point. */
static xfer_status_t plan_step(xfer_channel_t *ch, xfer_rt_jslot_t *js, int *ok)
{
    static char dummy[8];
    xfer_rt_joined_t *jn = ch->jn;
    const int k = ch->side, ko = 1 - k;
    size_t tot[2] = {0, 0}, off = 0;
    const void *sbuf = dummy;
    xfer_status_t st = XFER_SUCCESS;
    int r, j;

    *ok = 0;
    for (r = 0; r < ch->nlocal; r++)
        tot[k] += js->lb[r] = plan_bytes(ch, js->tab[k], k, r);
    for (r = 0; r < ch->nremote; r++) {
        const size_t b = plan_bytes(ch, js->tab[ko], ko, r);
        tot[ko] += b;
        js->rc[r] = b > INT_MAX ? 0 : (int) b;
    }
    if (tot[0] > INT_MAX || tot[1] > INT_MAX)
        return XFER_SUCCESS;
    for (r = 0; r < ch->nremote; r++)
        js->rd[r + 1] = js->rd[r] + js->rc[r];
    if (js->rbuf_cap < tot[ko] + 8) {
        char *nb = xfer_realloc_array(js->rbuf, tot[ko] + 8, 1);
        if (!nb)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: %zu bytes of rows", ch->cfg->name,
                            tot[ko]);
        js->rbuf = nb;
        js->rbuf_cap = tot[ko] + 8;
    }
    if (jn->nj[k] == 1 && js->lb[ch->me]) { /* sent straight from the put's copy */
        sbuf = js->blk[0];
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
            const size_t b = PAD8((size_t) rows_at(js->tab[k], jn->nj[k], ch->me, j) *
                                  row_bytes(&ch->ds[jn->idx[k][j]]));
            if (b)
                memcpy(js->pack + off, js->blk[j], b);
            off += b;
        }
        sbuf = js->pack;
    }
    st = xfer_plan_recount(js->plan, sbuf, (int) js->lb[ch->me], js->rbuf, js->rc, js->rd, js->lb);
    if (st == XFER_ERR_NOT_SUPPORTED) { /* for good: the plan cannot be used again */
        if (ch->me == 0 && xfer_trace_level() > 0)
            xfer_log(XFER_LOG_TRACE,
                     "channel %s at %s: joined rows: the plan cannot carry these counts (%s); "
                     "point to point from now on",
                     ch->cfg->name, xfer_ch_side_name(ch, ch->side), xfer_last_error());
        xfer_clear_error();
        xfer_plan_abandon(&js->plan);
        return XFER_SUCCESS;
    }
    XFER_CHECK_GOTO(st, st, out);
    XFER_CHECK_GOTO(xfer_start(js->plan), st, out);
    ch->stats.bytes_sent += js->lb[ch->me];
    ch->stats.bytes_received += tot[ko];
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
    for (j = 0; *ok && j < jn->nj[1 - ch->side]; j++) { /* every row, in place */
        const xfer_rt_dset_t *d = &ch->ds[jn->idx[1 - ch->side][j]];
        uint64_t *bs = js->bs + (size_t) j * XFER_MAX_DIMS,
                 *bc = js->bc + (size_t) j * XFER_MAX_DIMS;
        memset(bs, 0, XFER_MAX_DIMS * sizeof(uint64_t));
        memcpy(bc, d->cfg->dims, (size_t) d->cfg->ndims * sizeof(uint64_t));
        (void) offset_of(ch, js->tab[1 - ch->side], 1 - ch->side, j, 0, &bc[0]);
    }
out:
    return st;
}

void xfer_ch_jplan_fetch(xfer_channel_t *ch, const xfer_rt_jslot_t *js, xfer_rt_dset_t *ds,
                         const uint64_t *start, const uint64_t *count, void *buf)
{
    const int j = jindex(ch, ds), k = xfer_ch_dset_side(ch, ds), nd = ds->cfg->ndims,
              nj = ch->jn->nj[k];
    uint64_t bs[XFER_MAX_DIMS], bc[XFER_MAX_DIMS], total;
    int r, e;
    memset(bs, 0, sizeof(bs));
    memcpy(bc, ds->cfg->dims, (size_t) nd * sizeof(uint64_t));
    for (r = 0; r < ch->nremote; r++) { /* each sending rank's rows, where the plan put them */
        size_t at = (size_t) js->rd[r];
        for (e = 0; e < j; e++)
            at += PAD8((size_t) rows_at(js->tab[k], nj, r, e) *
                       row_bytes(&ch->ds[ch->jn->idx[k][e]]));
        bs[0] = offset_of(ch, js->tab[k], k, j, r, &total);
        bc[0] = rows_at(js->tab[k], nj, r, j);
        if (bc[0])
            xfer_ch_copy_box(buf, start, count, js->rbuf + at, bs, bc, nd, ds->esize);
    }
}
