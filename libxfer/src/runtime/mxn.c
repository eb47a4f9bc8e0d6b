/* SPDX-License-Identifier: BSD-3-Clause */
/* M x N: the direct schedule of a step (mxn.h). */
#include "mxn.h"

#include <stdlib.h>

#include "../core/core.h"

uint64_t xfer_mxn_overlap(int nd, const uint64_t *bs, const uint64_t *bc, const uint64_t *ss,
                          const uint64_t *sc, uint64_t *lo, uint64_t *n)
{
    uint64_t v = 1;
    int i;
    for (i = 0; i < nd; i++) {
        const uint64_t a = XFER_MAX(bs[i], ss[i]);
        const uint64_t b = XFER_MIN(bs[i] + bc[i], ss[i] + sc[i]);
        if (b <= a)
            return 0;
        if (lo)
            lo[i] = a;
        if (n)
            n[i] = b - a;
        v *= b - a;
    }
    return v;
}

/* Rank r's blocks of dataset @p d: b0 .. b1 - 1. */
static void blocks_of(const xfer_mxn_dset_t *d, int r, size_t *b0, size_t *b1)
{
    *b0 = d->bfirst ? d->bfirst[r] : (size_t) r;
    *b1 = d->bfirst ? d->bfirst[r + 1] : (size_t) r + 1;
}

/* The intersection of block b with rank c's selection for dataset @p d. */
static uint64_t isect(const xfer_mxn_dset_t *d, size_t b, int c, uint64_t lo[], uint64_t n[])
{
    const int nd = d->ndims;
    return xfer_mxn_overlap(nd, d->bstart + b * nd, d->bcount + b * nd, d->sstart + (size_t) c * nd,
                            d->scount + (size_t) c * nd, lo, n);
}

static int side_sends(const xfer_mxn_t *m, int k)
{
    int i;
    for (i = 0; i < m->nds; i++)
        if (m->ds[i].from == k)
            return 1;
    return 0;
}

int xfer_mxn_pair(const xfer_mxn_t *m, int k, int r, int c)
{
    uint64_t lo[XFER_MAX_DIMS], n[XFER_MAX_DIMS];
    size_t b, b0, b1;
    int i;
    if (!side_sends(m, k))
        return 0;
    if (r == 0 && !m->no_hdr)
        return 1;
    for (i = 0; i < m->nds; i++) {
        if (m->ds[i].from != k)
            continue;
        blocks_of(&m->ds[i], r, &b0, &b1);
        for (b = b0; b < b1; b++)
            if (isect(&m->ds[i], b, c, lo, n) > 0)
                return 1;
    }
    return 0;
}

/* ---- node staging: who owns an element --------------------------------------------------------
 */

/* The receiving ranks of one side and their nodes. */
typedef struct nodes {
    int kr;    /* the receiving side */
    int *prev; /* the next lower receiving rank on the same node, -1: none (NULL: no staging) */
    uint64_t (*cut)[2], (*out)[2]; /* scratch: n[kr] + 1 intervals each */
} nodes_t;

static int same_node(const xfer_mxn_t *m, int k, int a, int b)
{
    return m->node[k] && m->node[k][a] == m->node[k][b];
}

typedef struct node_rank {
    int node, rank;
} node_rank_t;

static int by_node(const void *pa, const void *pb)
{
    const node_rank_t *a = pa, *b = pb;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static xfer_status_t nodes_init(nodes_t *z, const xfer_mxn_t *m, int kr)
{
    const int n = m->n[kr];
    node_rank_t *order = NULL;
    int i, shared = 0;
    memset(z, 0, sizeof(*z));
    z->kr = kr;
    if (!m->node[kr])
        return XFER_SUCCESS;
    order = xfer_malloc((size_t) n * sizeof(*order));
    z->prev = xfer_malloc((size_t) n * sizeof(int));
    z->cut = xfer_malloc(((size_t) n + 1) * sizeof(*z->cut));
    z->out = xfer_malloc(((size_t) n + 1) * sizeof(*z->out));
    if (!order || !z->prev || !z->cut || !z->out) {
        xfer_free(order);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "mxn: node staging of %d ranks", n);
    }
    for (i = 0; i < n; i++) {
        order[i].node = m->node[kr][i];
        order[i].rank = i;
    }
    qsort(order, (size_t) n, sizeof(*order), by_node);
    for (i = 0; i < n; i++) {
        const int prev = i > 0 && order[i - 1].node == order[i].node ? order[i - 1].rank : -1;
        z->prev[order[i].rank] = prev;
        shared |= prev >= 0;
    }
    xfer_free(order);
    if (!shared) { /* one receiving rank per node: nothing to stage */
        xfer_free(z->prev);
        xfer_free(z->cut);
        xfer_free(z->out);
        z->prev = NULL;
        z->cut = z->out = NULL;
    }
    return XFER_SUCCESS;
}

static void nodes_fini(nodes_t *z)
{
    xfer_free(z->prev);
    xfer_free(z->cut);
    xfer_free(z->out);
}

/* Does rank c's selection of @p d overlap that of a lower rank of its node? (Else c owns all of
 * its selection.) */
static int shares(const nodes_t *z, const xfer_mxn_dset_t *d, int c)
{
    const int nd = d->ndims;
    int o;
    if (!z->prev)
        return 0;
    for (o = z->prev[c]; o >= 0; o = z->prev[o])
        if (xfer_mxn_overlap(nd, d->sstart + (size_t) o * nd, d->scount + (size_t) o * nd,
                             d->sstart + (size_t) c * nd, d->scount + (size_t) c * nd, NULL,
                             NULL) > 0)
            return 1;
    return 0;
}

/* Is the row g (indices of every dimension but the last) inside rank c's selection? Its
 * interval of the last dimension into [*a, *b). */
static int row_in(const xfer_mxn_dset_t *d, int c, const uint64_t *g, uint64_t *a, uint64_t *b)
{
    const int nd = d->ndims;
    const uint64_t *s = d->sstart + (size_t) c * nd, *n = d->scount + (size_t) c * nd;
    int i;
    for (i = 0; i < nd - 1; i++)
        if (g[i] < s[i] || g[i] >= s[i] + n[i])
            return 0;
    *a = s[nd - 1];
    *b = s[nd - 1] + n[nd - 1];
    return n[nd - 1] > 0;
}

static int cmp_iv(const void *pa, const void *pb)
{
    const uint64_t *a = pa, *b = pb;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* The parts of [a, b) of row g that rank t owns: inside t's selection and outside that of every
 * lower rank of t's node. Returns how many, in z->out. */
static int owned(nodes_t *z, const xfer_mxn_dset_t *d, int t, const uint64_t *g, uint64_t a,
                 uint64_t b)
{
    uint64_t ta, tb, x;
    int o, nc = 0, no = 0, i;
    if (!row_in(d, t, g, &ta, &tb))
        return 0;
    a = XFER_MAX(a, ta);
    b = XFER_MIN(b, tb);
    if (a >= b)
        return 0;
    for (o = z->prev[t]; o >= 0; o = z->prev[o]) {
        uint64_t oa, ob;
        if (row_in(d, o, g, &oa, &ob) && oa < b && ob > a) {
            z->cut[nc][0] = oa;
            z->cut[nc][1] = ob;
            nc++;
        }
    }
    qsort(z->cut, (size_t) nc, sizeof(*z->cut), cmp_iv);
    x = a;
    for (i = 0; i < nc && x < b; i++) {
        if (z->cut[i][0] > x) {
            z->out[no][0] = x;
            z->out[no][1] = XFER_MIN(z->cut[i][0], b);
            no++;
        }
        x = XFER_MAX(x, z->cut[i][1]);
    }
    if (x < b) {
        z->out[no][0] = x;
        z->out[no][1] = b;
        no++;
    }
    return no;
}

/* ---- streams ------------------------------------------------------------------------------ */

/* One end of a stream, appended to the schedule as messages of pieces: contiguous pieces
 * merge, and a message ends every XFER_MXN_MSG_MAX bytes of the stream. A message may go on a
 * lane and wait for operations (a forward: the owner's own receives). */
typedef struct stream {
    xfer_sched_t *s;
    int kind, peer;
    size_t max; /* bytes per message */
    size_t pos; /* stream bytes so far */
    int open;   /* the schedule's last operation is this stream's message, still open */
    int has;    /* a pending piece */
    int pbuf;   /* the pending piece */
    size_t poff, plen;
    int lane;
    const int *deps; /* every message waits for these operations */
    int ndeps;
} stream_t;

static void flush(stream_t *t)
{
    int i;
    if (!t->has)
        return;
    if (!t->open) {
        xfer_sched_p2p_on(t->s, t->kind, XFER_COMM_MAIN, t->peer, t->pbuf, t->poff, t->plen, 0);
        if (t->lane)
            xfer_sched_lane(t->s, t->lane);
        for (i = 0; i < t->ndeps; i++)
            xfer_sched_dep(t->s, t->deps[i]);
        t->open = 1;
    } else {
        xfer_sched_piece(t->s, t->pbuf, t->poff, t->plen);
    }
    t->has = 0;
}

static void put(stream_t *t, int buf, size_t off, size_t len)
{
    while (len > 0) {
        const size_t room = t->max - t->pos % t->max;
        const size_t take = XFER_MIN(len, room);
        if (t->has && t->pbuf == buf && t->poff + t->plen == off) {
            t->plen += take;
        } else {
            flush(t);
            t->has = 1;
            t->pbuf = buf;
            t->poff = off;
            t->plen = take;
        }
        t->pos += take;
        off += take;
        len -= take;
        if (t->pos % t->max == 0) { /* the message is full */
            flush(t);
            t->open = 0;
        }
    }
}

/* Which elements of a box a stream carries: all, or those rank @p t owns (node staging). */
typedef struct own {
    nodes_t *z;
    const xfer_mxn_dset_t *d;
    int t;
} own_t;

/* The elements of box (lo, n) in row-major order (those @p own lets through, if given), as
 * runs of the layout box (o, ext) stored at @p base of buffer @p buf. */
static void put_box(stream_t *t, int buf, size_t base, size_t esize, int nd, const uint64_t *o,
                    const uint64_t *ext, const uint64_t *lo, const uint64_t *n, own_t *own)
{
    uint64_t idx[XFER_MAX_DIMS] = {0}, g[XFER_MAX_DIMS];
    const size_t run = (size_t) n[nd - 1] * esize;
    int d, i;
    for (;;) {
        uint64_t lin = 0;
        for (d = 0; d < nd; d++) {
            g[d] = lo[d] + (d < nd - 1 ? idx[d] : 0);
            lin = lin * ext[d] + (g[d] - o[d]);
        }
        if (!own) {
            put(t, buf, base + (size_t) lin * esize, run);
        } else {
            const uint64_t a = lo[nd - 1];
            const int np = owned(own->z, own->d, own->t, g, a, a + n[nd - 1]);
            for (i = 0; i < np; i++)
                put(t, buf, base + (size_t) (lin + (own->z->out[i][0] - a)) * esize,
                    (size_t) (own->z->out[i][1] - own->z->out[i][0]) * esize);
        }
        for (d = nd - 2; d >= 0; d--) {
            if (++idx[d] < n[d])
                break;
            idx[d] = 0;
        }
        if (d < 0)
            break;
    }
}

/* The stream from rank r of side k to rank c of the other side, at the end @p kind: the
 * elements of r's blocks in c's selections that c owns, block after block. */
static void stream(xfer_sched_t *s, const xfer_mxn_t *m, nodes_t *z, int kind, int k, int r, int c)
{
    const int peer = kind == XFER_OP_SEND ? xfer_mxn_merged(m, 1 - k, c) : xfer_mxn_merged(m, k, r);
    stream_t t = {s, kind, peer, m->msg_max ? m->msg_max : XFER_MXN_MSG_MAX, 0, 0, 0, 0, 0, 0,
                  0, NULL, 0};
    uint64_t lo[XFER_MAX_DIMS], n[XFER_MAX_DIMS];
    int i;

    if (m->no_hdr) {
        /* the elements only */
    } else if (kind == XFER_OP_SEND) {
        put(&t, XFER_BUF_SEND, 0, XFER_MXN_HDR + (r == 0 ? m->attr : 0));
    } else {
        put(&t, XFER_BUF_RECV, (size_t) r * XFER_MXN_HDR, XFER_MXN_HDR);
        if (r == 0)
            put(&t, XFER_BUF_RECV, (size_t) m->n[k] * XFER_MXN_HDR, m->attr);
    }
    for (i = 0; i < m->nds; i++) {
        const xfer_mxn_dset_t *d = &m->ds[i];
        const int nd = d->ndims;
        own_t own = {z, d, c};
        size_t b, b0, b1;
        if (d->from != k)
            continue;
        blocks_of(d, r, &b0, &b1);
        for (b = b0; b < b1; b++) {
            if (isect(d, b, c, lo, n) == 0)
                continue;
            flush(&t); /* no piece spans two datasets: each may live elsewhere (xfer_bind_buffer) */
            if (kind == XFER_OP_SEND)
                put_box(&t, XFER_BUF_SEND, d->boff[b], d->esize, nd, d->bstart + b * nd,
                        d->bcount + b * nd, lo, n, shares(z, d, c) ? &own : NULL);
            else
                put_box(&t, XFER_BUF_RECV, d->soff[c], d->esize, nd, d->sstart + (size_t) c * nd,
                        d->scount + (size_t) c * nd, lo, n, shares(z, d, c) ? &own : NULL);
        }
    }
    flush(&t);
}

/* The forward stream from owner @p o to its node mate @p c (receiving side z->kr), at the end
 * @p kind: for every sender in order, the elements of its blocks in c's selections that o
 * owns, read from o's selections and written into c's. The sends wait for @p deps. */
static void forward(xfer_sched_t *s, const xfer_mxn_t *m, nodes_t *z, int kind, int o, int c,
                    const int *deps, int ndeps)
{
    const int kr = z->kr, ks = 1 - kr;
    const int peer = xfer_mxn_merged(m, kr, kind == XFER_OP_SEND ? c : o);
    stream_t t = {s, kind, peer, m->msg_max ? m->msg_max : XFER_MXN_MSG_MAX, 0, 0, 0, 0, 0, 0,
                  1, deps, ndeps};
    uint64_t lo[XFER_MAX_DIMS], n[XFER_MAX_DIMS];
    int r, i;

    for (r = 0; r < m->n[ks]; r++)
        for (i = 0; i < m->nds; i++) {
            const xfer_mxn_dset_t *d = &m->ds[i];
            const int nd = d->ndims, at = kind == XFER_OP_SEND ? o : c;
            own_t own = {z, d, o};
            size_t b, b0, b1;
            if (d->from != ks || !shares(z, d, c))
                continue;
            blocks_of(d, r, &b0, &b1);
            for (b = b0; b < b1; b++) {
                if (isect(d, b, c, lo, n) == 0)
                    continue;
                flush(&t);
                put_box(&t, XFER_BUF_RECV, d->soff[at], d->esize, nd, d->sstart + (size_t) at * nd,
                        d->scount + (size_t) at * nd, lo, n, &own);
            }
        }
    flush(&t);
}

xfer_status_t xfer_mxn_build(const xfer_mxn_t *m, int me, size_t send_bytes, size_t recv_bytes,
                             xfer_sched_t **out)
{
    const int k = me < m->n[0] ? 0 : 1, r = k ? me - m->n[0] : me, ko = 1 - k;
    xfer_sched_t *s = NULL;
    nodes_t zo, zk; /* the other side's receivers (this rank sends to), this side's */
    xfer_status_t st;
    int j, first_recv, *deps = NULL, ndeps;

    *out = NULL;
    memset(&zo, 0, sizeof(zo));
    memset(&zk, 0, sizeof(zk));
    XFER_CHECK_GOTO(nodes_init(&zo, m, ko), st, fail);
    XFER_CHECK_GOTO(nodes_init(&zk, m, k), st, fail);
    XFER_CHECK_GOTO(xfer_sched_create_flat(m->n[0] + m->n[1], me, send_bytes, recv_bytes, &s), st,
                    fail);
    s->algo = "mxn";
    s->variant = zo.prev || zk.prev ? "direct, node-staged" : "direct";
    /* everything at once, each end starting at a different peer so that the first messages of
     * all ranks spread over the receivers */
    for (j = 0; j < m->n[ko]; j++) {
        const int c = (r + j) % m->n[ko];
        if (xfer_mxn_pair(m, k, r, c))
            stream(s, m, &zo, XFER_OP_SEND, k, r, c);
    }
    first_recv = s->nops;
    for (j = 0; j < m->n[ko]; j++) {
        const int rr = (r + j) % m->n[ko];
        if (xfer_mxn_pair(m, ko, rr, r))
            stream(s, m, &zk, XFER_OP_RECV, ko, rr, r);
    }
    if (zk.prev) { /* node staging of what this side receives */
        int o;
        ndeps = s->nops - first_recv;
        deps = xfer_malloc((size_t) XFER_MAX(ndeps, 1) * sizeof(int));
        if (!deps) {
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "mxn: forwards");
            goto fail;
        }
        for (j = 0; j < ndeps; j++) /* (this rank's receives from the senders) */
            deps[j] = first_recv + j;
        for (j = 0; j < m->n[k]; j++) /* to the mates above: what this rank owns */
            if (j > r && same_node(m, k, j, r))
                forward(s, m, &zk, XFER_OP_SEND, r, j, deps, ndeps);
        for (o = zk.prev[r]; o >= 0; o = zk.prev[o]) /* from the mates below */
            forward(s, m, &zk, XFER_OP_RECV, o, r, NULL, 0);
    }
    xfer_sched_round(s);
    s->max_ports = XFER_MAX(1, s->nops); /* multi-port: every message at once */
    XFER_CHECK_GOTO(xfer_sched_status(s), st, fail);
    *out = s;
    nodes_fini(&zo);
    nodes_fini(&zk);
    xfer_free(deps);
    return XFER_SUCCESS;
fail:
    nodes_fini(&zo);
    nodes_fini(&zk);
    xfer_free(deps);
    xfer_sched_destroy(&s);
    return st;
}
