/* SPDX-License-Identifier: BSD-3-Clause */
#include "../algos.h"
#include "ring.h"

void xfer_ring_pass_init(xfer_ring_pass_t *r, const xfer_shape_t *shape, int sg)
{
    r->sg = sg;
    r->p = shape->n[sg];
    r->q = shape->n[1 - sg];
    r->pp = r->p + (r->p % 2);
    r->qq = r->q + (r->q % 2);
}

int xfer_ring_pass_nsteps(const xfer_ring_pass_t *r)
{
    return xfer_ring_half_nsteps(r->pp, r->qq);
}

/* Real merged rank playing position @p x. */
static int host_of(const xfer_ring_pass_t *r, const xfer_shape_t *sh, int x)
{
    if (x < r->p)
        return xfer_merged_rank(sh, r->sg, x);
    if (x < r->pp) /* the virtual sender */
        return xfer_merged_rank(sh, r->sg, r->p - 1);
    if (x < r->pp + r->q)
        return xfer_merged_rank(sh, 1 - r->sg, x - r->pp);
    return xfer_merged_rank(sh, 1 - r->sg, r->q - 1); /* the virtual receiver */
}

/* Positions played by rank @p rank of group @p g: its own and, for a host, the dummy one. */
static int positions_of(const xfer_ring_pass_t *r, int g, int rank, int pos[2])
{
    int n = 0;
    if (g == r->sg) {
        pos[n++] = rank;
        if (r->pp > r->p && rank == r->p - 1)
            pos[n++] = r->p;
    } else {
        pos[n++] = r->pp + rank;
        if (r->qq > r->q && rank == r->q - 1)
            pos[n++] = r->pp + r->q;
    }
    return n;
}

static int positions(const xfer_ring_pass_t *r, const xfer_sched_t *s, int pos[2])
{
    return positions_of(r, s->group, s->rank, pos);
}

/* The transfers of @p step at the positions in @p pos, ordered by key, duplicates removed. */
static int step_at(const xfer_ring_pass_t *r, int step, const int *pos, int np, xfer_ring_xfer_t *t)
{
    int i, k, nt = 0, u = 0;
    for (i = 0; i < np; i++)
        nt += xfer_ring_half_at(r->pp, r->qq, step, pos[i], t + nt);
    for (i = 1; i < nt; i++)
        for (k = i; k > 0 && t[k - 1].key > t[k].key; k--) {
            xfer_ring_xfer_t x = t[k];
            t[k] = t[k - 1];
            t[k - 1] = x;
        }
    for (i = 0; i < nt; i++) /* a transfer between two of our positions is seen twice */
        if (u == 0 || t[u - 1].key != t[i].key)
            t[u++] = t[i];
    return u;
}

/*
 * A host plays two positions with one storage, so in one step it may be sent the same block
 * by both neighbours, or be sent a block it sends on in the same step (so already holds).
 * Receiving twice into the same bytes would be a race: the host keeps the receive of block
 * @p msg with key @p key only if it sends no copy of msg in this step and no receive of msg has
 * a smaller key. Both ends evaluate this rule, so sender and receiver agree.
 */
static int host_keeps(const xfer_ring_pass_t *r, const xfer_shape_t *sh, int step, int g, int rank,
                      long key, int msg)
{
    xfer_ring_xfer_t t[2 * XFER_RING_MAX_AT];
    int pos[2], np = positions_of(r, g, rank, pos), nt, i;
    const int me = xfer_merged_rank(sh, g, rank);
    long first = -1;

    if (np < 2)
        return 1;
    nt = step_at(r, step, pos, np, t);
    for (i = 0; i < nt; i++) {
        const int src = host_of(r, sh, t[i].src), dst = host_of(r, sh, t[i].dst);
        if (t[i].msg != msg || src == dst)
            continue;
        if (src == me)
            return 0; /* it holds the block already */
        if (dst == me && first < 0)
            first = t[i].key;
    }
    return first == key;
}

int xfer_ring_pass_hosts(const xfer_ring_pass_t *r, const xfer_sched_t *s)
{
    int pos[2];
    return positions(r, s, pos) > 1;
}

/* Where block @p j is kept at this rank. */
static void place(const xfer_ring_pass_t *r, const xfer_sched_t *s, int j, int *buf, size_t *off)
{
    if (s->group != r->sg) {
        *buf = XFER_BUF_RECV;
        *off = xfer_shape_offset(s->shape, r->sg, j);
    } else if (j == s->rank) {
        *buf = XFER_BUF_SEND;
        *off = 0;
    } else {
        *buf = XFER_BUF_TMP;
        *off = xfer_shape_offset(s->shape, r->sg, j);
    }
}

xfer_status_t xfer_ring_pass_ops(const xfer_ring_pass_t *r, const xfer_sched_t *s, int step,
                                 xfer_op_t *ops, int *n)
{
    const xfer_shape_t *sh = s->shape;
    const int me = xfer_merged_rank(sh, s->group, s->rank);
    xfer_ring_xfer_t t[2 * XFER_RING_MAX_AT];
    int pos[2], np, i, nt;

    /* Both ends order a step's transfers by the generator's key, so that two messages
     * between the same pair in one step match in the same order (MPI non-overtaking). */
    np = positions(r, s, pos);
    nt = step_at(r, step, pos, np, t);
    for (i = 0; i < nt; i++) {
        const int src = host_of(r, sh, t[i].src), dst = host_of(r, sh, t[i].dst);
        const int peer = src == me ? dst : src;
        const int pg = peer < sh->n[0] ? 0 : 1, pr = pg ? peer - sh->n[0] : peer;
        size_t len, off;
        int buf;

        if (src == dst || t[i].msg >= r->p)
            continue; /* inside a host, or the dummy sender's empty message */
        if (!host_keeps(r, sh, step, dst == me ? s->group : pg, dst == me ? s->rank : pr, t[i].key,
                        t[i].msg))
            continue; /* a duplicate copy to a host */
        len = xfer_shape_count(sh, r->sg, t[i].msg);
        if (len == 0)
            continue;
        if (*n >= XFER_RING_PASS_MAX_OPS)
            return XFER_ERR(XFER_ERR_INTERNAL, "ring step %d: too many operations", step);
        place(r, s, t[i].msg, &buf, &off);
        xfer_op_p2p(&ops[(*n)++], src == me ? XFER_OP_SEND : XFER_OP_RECV, peer, buf, off, len);
    }
    return XFER_SUCCESS;
}
