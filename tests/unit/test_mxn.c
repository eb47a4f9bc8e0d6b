/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * M x N schedules (runtime/mxn.c) through the simulator: every receiving rank must end with
 * exactly its selection of every dataset it receives, and each sender's header in the slot of
 * every sender it hears from -- and nothing anywhere else. The reference is computed here
 * element by element (which sender's block holds the element, where in its contribution),
 * independently of the builder's intersections and runs.
 *
 * Shapes: p, q in 1..5; a 1-D, a 2-D and a 3-D dataset from side 0 and, in full duplex, a 2-D
 * one from side 1; senders decomposed by rows, columns or blocks; every receiving rank picks
 * its own selection: all, rows, columns, block, the middle third (overlapping), a corner, or
 * nothing. Messages are cut small (7 and 64 bytes) as well as left whole, so the cuts that
 * keep a step under MPI's int counts are exercised; half the worlds carry attributes after
 * sender 0's header, and a third of them leave headers and attributes out of the streams (the
 * hybrid path's no_hdr: the plan brings them, so nothing may land there). Each geometry also with
 * several blocks per sender (its block cut into up to three uneven slabs, the first sender of a
 * side holding none). Then negative controls: a
 * receive piece moved by one element, and a sender that skips one receiver, must fail.
 * `--quick`: every third seed of the receivers' selections only (the valgrind run checks memory
 * behaviour on fewer geometries, the plain run covers them all).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/workflow.h>

#include "../support/unit.h"
#include "runtime/mxn.h"
#include "sched/sim.h"

static long checks;

enum { MAXR = 5, NDS = 4, MAXB = 3 * MAXR };

typedef struct world {
    int n[2];
    int nds;
    xfer_mxn_dset_t ds[NDS];
    uint64_t dims[NDS][3];
    uint64_t bs[NDS][MAXB * 3], bc[NDS][MAXB * 3], ss[NDS][MAXR * 3], sc[NDS][MAXR * 3];
    size_t boff[NDS][MAXB], soff[NDS][MAXR], bfirst[NDS][MAXR + 1];
    size_t send[2][MAXR], recv[2][MAXR]; /* contribution and receive area per rank */
    size_t smax;
    int nodes[2][MAXR];
    xfer_mxn_t m;
    int fault; /* 0 none, 1 a shifted receive piece, 2 a missing stream, 3 a forward that does
                  not wait for the owner's receives */
} world_t;

static uint64_t vol(int nd, const uint64_t *c)
{
    uint64_t v = 1;
    for (int d = 0; d < nd; d++)
        v *= c[d];
    return v;
}

/* Receiver c's selection: one of seven kinds, chosen per rank and dataset. */
static void selection(const uint64_t *dims, int nd, int q, int c, int kind, uint64_t *s,
                      uint64_t *n)
{
    switch (kind % 7) {
    case 0:
        xfer_decompose(XFER_SELECT_ALL, nd, dims, q, c, s, n);
        break;
    case 1:
        xfer_decompose(XFER_SELECT_ROWS, nd, dims, q, c, s, n);
        break;
    case 2:
        xfer_decompose(XFER_SELECT_COLUMNS, nd, dims, q, c, s, n);
        break;
    case 3:
        xfer_decompose(XFER_SELECT_BLOCK, nd, dims, q, c, s, n);
        break;
    case 4: /* the middle third: overlaps the others' */
        for (int d = 0; d < nd; d++) {
            s[d] = dims[d] / 3;
            n[d] = dims[d] - 2 * (dims[d] / 3);
        }
        break;
    case 5: /* a corner box */
        for (int d = 0; d < nd; d++) {
            s[d] = 0;
            n[d] = (dims[d] + 1) / 2;
        }
        break;
    default: /* nothing */
        for (int d = 0; d < nd; d++) {
            s[d] = 0;
            n[d] = 0;
        }
        break;
    }
}

/* Several blocks per sender (@p split): its block cut into up to three slabs of the first
 * dimension, uneven, the first rank of a side holding none when it has more than one. */
static int pieces(const world_t *w, int from, int r, int split, uint64_t len)
{
    if (!split)
        return 1;
    if (r == 0 && w->n[from] > 1)
        return 0;
    return (int) (len < 3 ? len : 3);
}

static void make_world(world_t *w, int p, int q, int full, int pmode, int seed, size_t msg_max,
                       size_t attr, int no_hdr, int nsz, int split)
{
    static const uint64_t shapes[NDS][3] = {{37, 1, 1}, {13, 9, 1}, {5, 4, 3}, {6, 7, 1}};
    static const int nds[NDS] = {1, 2, 3, 2};
    static const size_t es[NDS] = {8, 4, 1, 2};
    static const xfer_selection_mode_t pm[3] = {XFER_SELECT_ROWS, XFER_SELECT_COLUMNS,
                                                XFER_SELECT_BLOCK};
    memset(w, 0, sizeof(*w));
    w->n[0] = p;
    w->n[1] = q;
    w->nds = full ? 4 : 3;
    for (int k = 0; k < 2; k++)
        for (int r = 0; r < w->n[k]; r++) {
            w->send[k][r] = XFER_MXN_HDR + (r == 0 ? attr : 0);
            w->recv[k][r] = (size_t) w->n[1 - k] * XFER_MXN_HDR + attr;
        }
    for (int i = 0; i < w->nds; i++) {
        xfer_mxn_dset_t *d = &w->ds[i];
        const int from = i == 3 ? 1 : 0, ns = w->n[from], nr = w->n[1 - from];
        d->ndims = nds[i];
        memcpy(w->dims[i], shapes[i], sizeof(w->dims[i]));
        d->dims = w->dims[i];
        d->esize = es[i];
        d->from = from;
        for (int r = 0, b = 0; r < ns; r++) {
            uint64_t s0[3], c0[3];
            int np, k;
            xfer_decompose(pm[(pmode + i) % 3], d->ndims, d->dims, ns, r, s0, c0);
            np = pieces(w, from, r, split, c0[0]);
            w->bfirst[i][r] = (size_t) b;
            for (k = 0; k < np; k++, b++) { /* slab k of np: weights 1, 2, 3 */
                const uint64_t lo = c0[0] * (uint64_t) (k * (k + 1) / 2) /
                                    (uint64_t) (np * (np + 1) / 2),
                               hi = c0[0] * (uint64_t) ((k + 1) * (k + 2) / 2) /
                                    (uint64_t) (np * (np + 1) / 2);
                memcpy(w->bs[i] + b * d->ndims, s0, (size_t) d->ndims * sizeof(uint64_t));
                memcpy(w->bc[i] + b * d->ndims, c0, (size_t) d->ndims * sizeof(uint64_t));
                w->bs[i][b * d->ndims] = s0[0] + lo;
                w->bc[i][b * d->ndims] = hi - lo;
                w->boff[i][b] = w->send[from][r];
                w->send[from][r] +=
                    ((size_t) vol(d->ndims, w->bc[i] + b * d->ndims) * d->esize + 7) & ~(size_t) 7;
            }
            w->bfirst[i][r + 1] = (size_t) b;
        }
        d->bfirst = split ? w->bfirst[i] : NULL;
        for (int c = 0; c < nr; c++) {
            selection(d->dims, d->ndims, nr, c, seed + 3 * c + i, w->ss[i] + c * d->ndims,
                      w->sc[i] + c * d->ndims);
            w->soff[i][c] = w->recv[1 - from][c];
            w->recv[1 - from][c] +=
                ((size_t) vol(d->ndims, w->sc[i] + c * d->ndims) * d->esize + 7) & ~(size_t) 7;
        }
        d->bstart = w->bs[i];
        d->bcount = w->bc[i];
        d->boff = w->boff[i];
        d->sstart = w->ss[i];
        d->scount = w->sc[i];
        d->soff = w->soff[i];
    }
    for (int k = 0; k < 2; k++)
        for (int r = 0; r < w->n[k]; r++)
            w->smax = w->smax > w->send[k][r] ? w->smax : w->send[k][r];
    w->m.n[0] = p;
    w->m.n[1] = q;
    w->m.nds = w->nds;
    w->m.ds = w->ds;
    w->m.msg_max = msg_max;
    w->m.attr = attr;
    w->m.no_hdr = no_hdr;
    for (int k = 0; k < 2; k++) { /* nodes of nsz consecutive ranks (1: no staging) */
        for (int r = 0; r < w->n[k]; r++)
            w->nodes[k][r] = r / nsz;
        w->m.node[k] = nsz > 1 ? w->nodes[k] : NULL;
    }
}

static xfer_status_t build(void *ctx, int me, xfer_sched_t **out)
{
    world_t *w = ctx;
    const int k = me < w->n[0] ? 0 : 1, r = k ? me - w->n[0] : me;
    xfer_mxn_t m = w->m;
    xfer_mxn_dset_t skip[NDS];
    xfer_status_t st;

    if (w->fault == 2 && k == 0 && r == 0) {
        /* sender 0 believes receiver 0 (which selects all of it) selected nothing of dataset 0 */
        static uint64_t none[MAXR * 3];
        memcpy(skip, w->ds, sizeof(skip));
        memcpy(none, w->sc[0], sizeof(none));
        for (int d = 0; d < skip[0].ndims; d++)
            none[d] = 0;
        skip[0].scount = none;
        m.ds = skip;
    }
    st = xfer_mxn_build(&m, me, w->smax, w->recv[k][r], out);
    if (st == XFER_SUCCESS && w->fault == 1 && k == 1 && r == 0) {
        xfer_sched_t *s = *out; /* receiver 0's first data piece lands one element later */
        for (int i = 0; i < s->npieces; i++)
            if (s->pieces[i].off >= (size_t) w->n[0] * XFER_MXN_HDR) {
                s->pieces[i].off += 1;
                break;
            }
        for (int i = 0; i < s->nops; i++)
            if (s->ops[i].npieces == 0 && s->ops[i].kind == XFER_OP_RECV &&
                s->ops[i].off >= (size_t) w->n[0] * XFER_MXN_HDR) {
                s->ops[i].off += 1;
                break;
            }
    }
    if (st == XFER_SUCCESS && w->fault == 3 && k == 1 && r == 0) {
        xfer_sched_t *s = *out; /* receiver 0 forwards without waiting for its own receives */
        int n = 0;
        for (int i = 0; i < s->nops; i++)
            if (s->ops[i].kind == XFER_OP_SEND && s->ops[i].ndeps > 0) {
                s->ops[i].ndeps = 0;
                n++;
            }
        UCHECK(n > 0, "fault 3: receiver 0 forwards nothing");
    }
    return st;
}

/* Byte u of receiver (side 1 - ks, rank c)'s area: which sender byte, or none. */
static int expect(void *ctx, int me, size_t u, size_t *want)
{
    world_t *w = ctx;
    const int k = me < w->n[0] ? 0 : 1, c = k ? me - w->n[0] : me, ks = 1 - k;
    const size_t hdrs = (size_t) w->n[ks] * XFER_MXN_HDR;
    const int sends = w->nds == 4 || ks == 0;

    if (w->m.no_hdr && u < hdrs + w->m.attr)
        return 0; /* the plan's, not the streams' */
    if (u < hdrs) {
        const int r = (int) (u / XFER_MXN_HDR);
        if (!sends || !xfer_mxn_pair(&w->m, ks, r, c))
            return 0;
        *want = (size_t) xfer_mxn_merged(&w->m, ks, r) * w->smax + u % XFER_MXN_HDR;
        return 1;
    }
    if (u < hdrs + w->m.attr) { /* the sending side's attributes, from its rank 0 */
        if (!sends)
            return 0;
        *want = (size_t) xfer_mxn_merged(&w->m, ks, 0) * w->smax + XFER_MXN_HDR + (u - hdrs);
        return 1;
    }
    for (int i = 0; i < w->nds; i++) {
        const xfer_mxn_dset_t *d = &w->ds[i];
        const int nd = d->ndims;
        const uint64_t *s0 = d->sstart + c * nd, *sn = d->scount + c * nd;
        const size_t len = (size_t) vol(nd, sn) * d->esize;
        uint64_t g[3], e;
        if (d->from != ks || u < d->soff[c] || u >= d->soff[c] + len)
            continue;
        e = (u - d->soff[c]) / d->esize;
        for (int x = nd - 1; x >= 0; x--) { /* the element's global index */
            g[x] = s0[x] + e % sn[x];
            e /= sn[x];
        }
        for (int r = 0; r < w->n[ks]; r++) { /* the sender whose block holds it */
            const size_t b0 = d->bfirst ? d->bfirst[r] : (size_t) r;
            const size_t b1 = d->bfirst ? d->bfirst[r + 1] : (size_t) r + 1;
            for (size_t b = b0; b < b1; b++) {
                const uint64_t *p0 = d->bstart + b * nd, *bn = d->bcount + b * nd;
                uint64_t lin = 0;
                int in = 1;
                for (int x = 0; x < nd; x++) {
                    in &= g[x] >= p0[x] && g[x] < p0[x] + bn[x];
                    lin = lin * bn[x] + (g[x] - p0[x]);
                }
                if (!in)
                    continue;
                *want = (size_t) xfer_mxn_merged(&w->m, ks, r) * w->smax + d->boff[b] +
                        (size_t) lin * d->esize + (u - d->soff[c]) % d->esize;
                return 1;
            }
        }
    }
    return 0; /* padding */
}

static void run(int p, int q, int full, int pmode, int seed, size_t msg_max, int nsz, int split)
{
    static world_t w;
    xfer_sim_flat_t f;
    xfer_status_t st;

    make_world(&w, p, q, full, pmode, seed, msg_max, (size_t) (seed % 2) * 24, seed % 3 == 2, nsz,
               split);
    f.n = p + q;
    f.ctx = &w;
    f.build = build;
    f.expect = expect;
    st = xfer_sim_run_flat(&f, NULL, NULL);
    UCHECK(st == XFER_SUCCESS,
           "p=%d q=%d full=%d pmode=%d seed=%d msg=%zu no_hdr=%d node size %d split %d: %s: %s", p,
           q, full, pmode, seed, msg_max, seed % 3 == 2, nsz, split, xfer_status_name(st),
           xfer_last_error());
    checks++;
}

static void negative(void)
{
    static world_t w;
    for (int fault = 1; fault <= 3; fault++) {
        xfer_sim_flat_t f;
        xfer_status_t st;
        make_world(&w, 3, 2, 0, 0, 0, 0, 8, fault == 2, fault == 3 ? 2 : 1, 0);
        w.fault = fault;
        f.n = 5;
        f.ctx = &w;
        f.build = build;
        f.expect = expect;
        st = xfer_sim_run_flat(&f, NULL, NULL);
        UCHECK(st == XFER_ERR_VERIFY || st == XFER_ERR_DEADLOCK, "fault %d not caught (%s)", fault,
               xfer_status_name(st));
        checks++;
    }
}

/* The decomposition helper: every mode tiles the array (block, rows, columns) exactly. */
static void tiling(void)
{
    static const uint64_t dims[3] = {7, 10, 3};
    uint64_t s[3], n[3];
    for (int nd = 1; nd <= 3; nd++)
        for (int mode = XFER_SELECT_ROWS; mode <= XFER_SELECT_BLOCK; mode++)
            for (int nr = 1; nr <= 12; nr++) {
                static int hits[7 * 10 * 3];
                memset(hits, 0, sizeof(hits));
                for (int r = 0; r < nr; r++) {
                    UCHECK(xfer_decompose((xfer_selection_mode_t) mode, nd, dims, nr, r, s, n) ==
                               XFER_SUCCESS,
                           "decompose");
                    for (uint64_t e = 0; e < vol(nd, n); e++) {
                        uint64_t x = e, lin = 0, g[3];
                        for (int d = nd - 1; d >= 0; d--) {
                            g[d] = s[d] + x % n[d];
                            x /= n[d];
                        }
                        for (int d = 0; d < nd; d++)
                            lin = lin * dims[d] + g[d];
                        hits[lin]++;
                    }
                }
                for (uint64_t e = 0; e < vol(nd, dims); e++)
                    UCHECK(hits[e] == 1, "mode %d nd %d nranks %d: element %llu held %d times",
                           mode, nd, nr, (unsigned long long) e, hits[e]);
                checks++;
            }
    UCHECK(xfer_decompose(XFER_SELECT_USER, 2, dims, 2, 0, s, n) == XFER_ERR_INVALID_ARG,
           "user has no decomposition");
}

int main(int argc, char **argv)
{
    static const size_t cuts[3] = {0, 7, 64};
    const int quick = argc == 2 && strcmp(argv[1], "--quick") == 0;
    tiling();
    for (int p = 1; p <= MAXR; p++)
        for (int q = 1; q <= MAXR; q++)
            for (int full = 0; full < 2; full++)
                for (int pmode = 0; pmode < 3; pmode++)
                    for (int seed = 0; seed < 7; seed += (quick || p + q > 6 ? 3 : 1))
                        for (int nsz = 1; nsz <= 3; nsz++)
                            for (int split = 0; split < 2; split++)
                                run(p, q, full, pmode, seed, cuts[(p + q + seed) % 3], nsz, split);
    negative();
    return unit_finish("test_mxn", checks);
}
