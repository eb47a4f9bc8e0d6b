/* SPDX-License-Identifier: BSD-3-Clause */
/* M x N: the direct schedule of a step (mxn.h). */
#include "mxn.h"

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

/* The intersection of rank r's block with rank c's selection for dataset @p d. */
static uint64_t isect(const xfer_mxn_dset_t *d, int r, int c, uint64_t lo[], uint64_t n[])
{
    const int nd = d->ndims;
    return xfer_mxn_overlap(nd, d->bstart + (size_t) r * nd, d->bcount + (size_t) r * nd,
                            d->sstart + (size_t) c * nd, d->scount + (size_t) c * nd, lo, n);
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
    int i;
    if (!side_sends(m, k))
        return 0;
    if (r == 0 && !m->no_hdr)
        return 1;
    for (i = 0; i < m->nds; i++)
        if (m->ds[i].from == k && isect(&m->ds[i], r, c, lo, n) > 0)
            return 1;
    return 0;
}

/* One end of a stream, appended to the schedule as messages of pieces: contiguous pieces
 * merge, and a message ends every XFER_MXN_MSG_MAX bytes of the stream. */
typedef struct stream {
    xfer_sched_t *s;
    int kind, peer;
    size_t max; /* bytes per message */
    size_t pos; /* stream bytes so far */
    int open;   /* the schedule's last operation is this stream's message, still open */
    int has;    /* a pending piece */
    int pbuf;   /* the pending piece */
    size_t poff, plen;
} stream_t;

static void flush(stream_t *t)
{
    if (!t->has)
        return;
    if (!t->open) {
        xfer_sched_p2p_on(t->s, t->kind, XFER_COMM_MAIN, t->peer, t->pbuf, t->poff, t->plen, 0);
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

/* The elements of box (lo, n) in row-major order, as runs of the layout box (o, ext) stored at
 * @p base of buffer @p buf. */
static void put_box(stream_t *t, int buf, size_t base, size_t esize, int nd, const uint64_t *o,
                    const uint64_t *ext, const uint64_t *lo, const uint64_t *n)
{
    uint64_t idx[XFER_MAX_DIMS] = {0};
    const size_t run = (size_t) n[nd - 1] * esize;
    int d;
    for (;;) {
        uint64_t lin = 0;
        for (d = 0; d < nd; d++)
            lin = lin * ext[d] + (lo[d] + (d < nd - 1 ? idx[d] : 0) - o[d]);
        put(t, buf, base + (size_t) lin * esize, run);
        for (d = nd - 2; d >= 0; d--) {
            if (++idx[d] < n[d])
                break;
            idx[d] = 0;
        }
        if (d < 0)
            break;
    }
}

/* The stream from rank r of side k to rank c of the other side, at the end @p kind. */
static void stream(xfer_sched_t *s, const xfer_mxn_t *m, int kind, int k, int r, int c)
{
    const int peer = kind == XFER_OP_SEND ? xfer_mxn_merged(m, 1 - k, c) : xfer_mxn_merged(m, k, r);
    stream_t t = {s, kind, peer, m->msg_max ? m->msg_max : XFER_MXN_MSG_MAX, 0, 0, 0, 0, 0, 0};
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
        if (d->from != k || isect(d, r, c, lo, n) == 0)
            continue;
        flush(&t); /* no piece spans two datasets: each may live elsewhere (xfer_bind_buffer) */
        if (kind == XFER_OP_SEND)
            put_box(&t, XFER_BUF_SEND, d->boff[r], d->esize, nd, d->bstart + (size_t) r * nd,
                    d->bcount + (size_t) r * nd, lo, n);
        else
            put_box(&t, XFER_BUF_RECV, d->soff[c], d->esize, nd, d->sstart + (size_t) c * nd,
                    d->scount + (size_t) c * nd, lo, n);
    }
    flush(&t);
}

xfer_status_t xfer_mxn_build(const xfer_mxn_t *m, int me, size_t send_bytes, size_t recv_bytes,
                             xfer_sched_t **out)
{
    const int k = me < m->n[0] ? 0 : 1, r = k ? me - m->n[0] : me, ko = 1 - k;
    xfer_sched_t *s = NULL;
    xfer_status_t st;
    int j;

    *out = NULL;
    XFER_CHECK_GOTO(xfer_sched_create_flat(m->n[0] + m->n[1], me, send_bytes, recv_bytes, &s), st,
                    fail);
    s->algo = "mxn";
    s->variant = "direct";
    /* everything at once, each end starting at a different peer so that the first messages of
     * all ranks spread over the receivers */
    for (j = 0; j < m->n[ko]; j++) {
        const int c = (r + j) % m->n[ko];
        if (xfer_mxn_pair(m, k, r, c))
            stream(s, m, XFER_OP_SEND, k, r, c);
    }
    for (j = 0; j < m->n[ko]; j++) {
        const int rr = (r + j) % m->n[ko];
        if (xfer_mxn_pair(m, ko, rr, r))
            stream(s, m, XFER_OP_RECV, ko, rr, r);
    }
    xfer_sched_round(s);
    s->max_ports = XFER_MAX(1, s->nops); /* multi-port: every message at once */
    XFER_CHECK_GOTO(xfer_sched_status(s), st, fail);
    *out = s;
    return XFER_SUCCESS;
fail:
    xfer_sched_destroy(&s);
    return st;
}
