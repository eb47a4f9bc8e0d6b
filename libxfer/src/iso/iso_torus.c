/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Message-combining torus schedules: blocks travel one hop at a time along the torus
 * dimensions, dimension after dimension, positive coordinates first, then negative ones; all
 * blocks moving in one step form one message. All-to-all routes each block over ||C^i|| hops,
 * alternating between the TMP and RECV slot of its index so that it lands in RECV on its last
 * hop (Algorithm 1 with the first-hop test corrected, erratum E2). Allgather routes the prefix
 * trie instead: a node's block moves once and is dropped off at each child on its way.
 *
 * Cost: D alpha + V beta m (all-to-all), D alpha + W beta m (allgather), with
 *       D = sum_j (max_i max(c_j^i, 0) + max_i max(-c_j^i, 0)) (erratum E1) and V = sum_i ||C^i||.
 * Restrictions: dimensions in which an offset is nonzero must be periodic (xfer_iso_sched_build
 * checks it for every builder that needs it).
 * Preferred when: m < alpha (s - D) / (beta (V - s)) (erratum E3) and D < s.
 * Source: seed-isomorphic §6-8, §13.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "iso_sched.h"

/* The parity rule: a block with @p hops hops left (this one included) is read from SEND on its
 * first hop, else from the slot it was received into on the previous hop; it is written to
 * RECV when this is an odd-numbered hop from the end (its last one included). */
void xfer_iso_a2a_part(xfer_iso_sched_t *s, int i, int hops, int first)
{
    int sbuf = first ? XFER_ISO_SEND : (hops % 2 == 0 ? XFER_ISO_RECV : XFER_ISO_TMP);
    xfer_iso_sched_part(s, i, sbuf, i, hops % 2 == 1 ? XFER_ISO_RECV : XFER_ISO_TMP, i);
}

void xfer_iso_a2a_self(const xfer_iso_nbh_t *n, xfer_iso_sched_t *s)
{
    int zero[XFER_ISO_MAXDIMS] = {0};
    xfer_iso_sched_step(s, zero);
    for (int i = 0; i < n->s; i++) {
        int z = 1;
        for (int j = 0; j < n->d; j++)
            z &= n->off[i * n->d + j] == 0;
        if (z)
            xfer_iso_sched_part(s, i, XFER_ISO_SEND, i, XFER_ISO_RECV, i);
    }
    xfer_iso_sched_close(s);
}

static xfer_status_t alltoall(const xfer_iso_nbh_t *n, xfer_iso_sched_t *s)
{
    int *hops = xfer_calloc((size_t) n->s + 1, sizeof(int));
    char *moved = xfer_calloc((size_t) n->s + 1, 1);
    if (!hops || !moved) {
        xfer_free(hops);
        xfer_free(moved);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "isomorphic torus schedule: %d offsets", n->s);
    }
    for (int i = 0; i < n->s; i++)
        for (int j = 0; j < n->d; j++)
            hops[i] += abs(n->off[i * n->d + j]);
    for (int j = 0; j < n->d; j++) {
        for (int dir = 1; dir >= -1; dir -= 2) {
            int H = 0, vec[XFER_ISO_MAXDIMS] = {0};
            vec[j] = dir;
            for (int i = 0; i < n->s; i++)
                H = XFER_MAX(H, dir * n->off[i * n->d + j]);
            for (int h = 0; h < H; h++) {
                xfer_iso_sched_step(s, vec);
                for (int i = 0; i < n->s; i++) {
                    if (dir * n->off[i * n->d + j] > h) {
                        xfer_iso_a2a_part(s, i, hops[i], !moved[i]);
                        hops[i]--;
                        moved[i] = 1;
                    }
                }
            }
        }
    }
    xfer_free(hops);
    xfer_free(moved);
    xfer_iso_a2a_self(n, s);
    return s->error;
}

/* Transit slots of the allgather: TMP slots above the trie's interior ones, reused once sent. */
typedef struct pool {
    int *free_slots;
    int nfree, next;
} pool_t;

static int pool_get(pool_t *p)
{
    return p->nfree > 0 ? p->free_slots[--p->nfree] : p->next++;
}

static xfer_status_t allgather(const xfer_iso_nbh_t *n, xfer_iso_sched_t *s)
{
    xfer_iso_trie_t t;
    xfer_status_t st = xfer_iso_trie_build(n, &t);
    int *cur_buf = NULL, *cur_slot = NULL, *done = NULL, *kid = NULL;
    pool_t pool = {0};
    if (st != XFER_SUCCESS)
        return st;
    cur_buf = xfer_malloc(sizeof(int) * (size_t) t.nnodes);
    cur_slot = xfer_malloc(sizeof(int) * (size_t) t.nnodes);
    done = xfer_malloc(sizeof(int) * (size_t) t.nnodes);
    kid = xfer_malloc(sizeof(int) * (size_t) t.nnodes);
    pool.free_slots = xfer_malloc(sizeof(int) * 2 * (size_t) t.nnodes);
    pool.next = t.ninterior;
    if (!cur_buf || !cur_slot || !done || !kid || !pool.free_slots) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "isomorphic torus allgather: %d trie nodes", t.nnodes);
        goto out;
    }
    for (int L = 0; L < n->d; L++) {
        int c0 = t.level_start[L + 1], c1 = t.level_start[L + 2];
        for (int di = 0; di < 2; di++) {
            int dir = di == 0 ? 1 : -1, H = 0, vec[XFER_ISO_MAXDIMS] = {0};
            vec[t.perm[L]] = dir;
            for (int c = c1 - 1; c >= c0;
                 c--) /* first child of each node (siblings are adjacent) */
                kid[t.nodes[c].parent] = c;
            for (int v = t.level_start[L]; v < c0; v++) {
                H = XFER_MAX(H, t.nodes[v].dirmax[di]);
                cur_buf[v] = t.nodes[v].buf;
                cur_slot[v] = t.nodes[v].slot;
            }
            for (int h = 0; h < H; h++) {
                int nfreed = 0;
                xfer_iso_sched_step(s, vec);
                for (int v = t.level_start[L]; v < c0; v++) {
                    int rbuf = XFER_ISO_TMP, rslot = -1;
                    if (t.nodes[v].dirmax[di] <= h)
                        continue;
                    /* the child dropped off after this hop, if any */
                    for (int c = kid[v]; c < c1 && t.nodes[c].parent == v; c++) {
                        if (t.nodes[c].val == dir * (h + 1)) {
                            rbuf = t.nodes[c].buf;
                            rslot = t.nodes[c].slot;
                        }
                    }
                    if (rslot < 0)
                        rslot = pool_get(&pool);
                    xfer_iso_sched_part(s, t.nodes[v].rep, cur_buf[v], cur_slot[v], rbuf, rslot);
                    if (cur_buf[v] == XFER_ISO_TMP && cur_slot[v] >= t.ninterior)
                        done[nfreed++] = cur_slot[v]; /* sent: free after this step */
                    cur_buf[v] = rbuf;
                    cur_slot[v] = rslot;
                }
                for (int k = 0; k < nfreed; k++)
                    pool.free_slots[pool.nfree++] = done[k];
            }
            for (int v = t.level_start[L]; v < c0; v++)
                if (cur_buf[v] == XFER_ISO_TMP && cur_slot[v] >= t.ninterior &&
                    (cur_buf[v] != t.nodes[v].buf || cur_slot[v] != t.nodes[v].slot))
                    pool.free_slots[pool.nfree++] = cur_slot[v];
        }
    }
    xfer_iso_trie_finish(&t, s);
    st = s->error;
out:
    xfer_free(cur_buf);
    xfer_free(cur_slot);
    xfer_free(done);
    xfer_free(kid);
    xfer_free(pool.free_slots);
    xfer_iso_trie_free(&t);
    return st;
}

xfer_status_t xfer_iso_build_torus(const xfer_iso_nbh_t *n, int op, xfer_iso_sched_t *s)
{
    return op == XFER_ISO_OP_ALLTOALL ? alltoall(n, s) : allgather(n, s);
}
