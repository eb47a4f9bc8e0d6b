/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prefix trie of an isomorphic neighbourhood (seed-isomorphic §7): offsets sharing their first
 * coordinates share a path, so an allgather moves the block once per trie edge instead of once
 * per offset. Dimension order: fewest distinct coordinate values first (then the most offsets
 * sharing one value), which makes shared prefixes long.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "iso_sched.h"

typedef struct sort_ctx {
    const xfer_iso_nbh_t *n;
    const int *perm;
} sort_ctx_t;

/* qsort has no context argument: the comparison reads the neighbourhood through this. The
 * builders run on one thread at a time per process in practice, but keep it thread-local. */
static _Thread_local sort_ctx_t sort_ctx;

static int cmp_offsets(const void *a, const void *b)
{
    int i = *(const int *) a, k = *(const int *) b;
    const xfer_iso_nbh_t *n = sort_ctx.n;
    for (int L = 0; L < n->d; L++) {
        int x = n->off[i * n->d + sort_ctx.perm[L]], y = n->off[k * n->d + sort_ctx.perm[L]];
        if (x != y)
            return x < y ? -1 : 1;
    }
    return (i > k) - (i < k);
}

static void choose_order(const xfer_iso_nbh_t *n, int *perm)
{
    int distinct[XFER_ISO_MAXDIMS], most[XFER_ISO_MAXDIMS];
    for (int j = 0; j < n->d; j++) {
        distinct[j] = most[j] = 0;
        for (int i = 0; i < n->s; i++) {
            int v = n->off[i * n->d + j], seen = 0, same = 0;
            for (int k = 0; k < n->s; k++) {
                if (n->off[k * n->d + j] == v) {
                    same++;
                    if (k < i)
                        seen = 1;
                }
            }
            distinct[j] += !seen;
            most[j] = XFER_MAX(most[j], same);
        }
        perm[j] = j;
    }
    for (int a = 1; a < n->d; a++) { /* insertion sort: d is small */
        int x = perm[a], b = a - 1;
        while (b >= 0 && (distinct[perm[b]] > distinct[x] ||
                          (distinct[perm[b]] == distinct[x] && most[perm[b]] < most[x]))) {
            perm[b + 1] = perm[b];
            b--;
        }
        perm[b + 1] = x;
    }
}

static int same_prefix(const xfer_iso_nbh_t *n, const int *perm, int i, int k, int len)
{
    for (int L = 0; L < len; L++)
        if (n->off[i * n->d + perm[L]] != n->off[k * n->d + perm[L]])
            return 0;
    return 1;
}

xfer_status_t xfer_iso_trie_build(const xfer_iso_nbh_t *n, xfer_iso_trie_t *t)
{
    int *order = NULL, *at = NULL, *zleaf = NULL;
    xfer_status_t st = XFER_SUCCESS;
    size_t cap = (size_t) n->s * (size_t) n->d + 1;

    memset(t, 0, sizeof(*t));
    t->d = n->d;
    t->s = n->s;
    choose_order(n, t->perm);
    order = xfer_malloc(sizeof(int) * ((size_t) n->s + 1));
    at = xfer_malloc(sizeof(int) * ((size_t) n->s + 1));
    zleaf = xfer_malloc(sizeof(int) * cap);
    t->leaf = xfer_malloc(sizeof(int) * ((size_t) n->s + 1));
    t->nodes = xfer_calloc(cap, sizeof(*t->nodes));
    if (!order || !at || !zleaf || !t->leaf || !t->nodes) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "isomorphic trie: %d offsets", n->s);
        goto out;
    }
    for (int i = 0; i < n->s; i++)
        order[i] = i;
    sort_ctx.n = n;
    sort_ctx.perm = t->perm;
    if (n->s > 1)
        qsort(order, (size_t) n->s, sizeof(int), cmp_offsets);

    /* Root, then one level per dimension; at[k] is the node of order[k] at the last level. */
    t->nodes[0] = (xfer_iso_trie_node_t){.parent = -1, .level = 0, .rep = n->s ? order[0] : -1};
    t->nnodes = 1;
    t->level_start[0] = 0;
    for (int k = 0; k < n->s; k++)
        at[k] = 0;
    for (int L = 1; L <= n->d; L++) {
        t->level_start[L] = t->nnodes;
        for (int k = 0; k < n->s; k++) {
            if (k == 0 || !same_prefix(n, t->perm, order[k - 1], order[k], L)) {
                xfer_iso_trie_node_t *nd = &t->nodes[t->nnodes];
                nd->parent = at[k];
                nd->level = L;
                nd->val = n->off[order[k] * n->d + t->perm[L - 1]];
                nd->rep = order[k];
                t->nnodes++;
            }
            at[k] = t->nnodes - 1;
        }
    }
    t->level_start[n->d + 1] = t->nnodes;
    for (int k = 0; k < n->s; k++)
        t->leaf[order[k]] = at[k];

    /* Zero chains, bottom up: the leaf offset a node's block ends in without moving. */
    for (int v = t->nnodes - 1; v >= 0; v--)
        zleaf[v] = t->nodes[v].level == n->d ? t->nodes[v].rep : -1;
    for (int v = t->nnodes - 1; v > 0; v--) {
        xfer_iso_trie_node_t *nd = &t->nodes[v];
        int dir = nd->val > 0 ? 0 : 1, mag = nd->val > 0 ? nd->val : -nd->val;
        if (nd->val == 0)
            zleaf[nd->parent] = zleaf[v];
        t->nodes[nd->parent].dirmax[dir] = XFER_MAX(t->nodes[nd->parent].dirmax[dir], mag);
    }
    /* Storage, top down. */
    t->nodes[0].buf = XFER_ISO_SEND;
    t->nodes[0].slot = 0;
    for (int v = 1; v < t->nnodes; v++) {
        xfer_iso_trie_node_t *nd = &t->nodes[v];
        if (nd->val == 0) {
            nd->buf = t->nodes[nd->parent].buf;
            nd->slot = t->nodes[nd->parent].slot;
        } else if (zleaf[v] >= 0) {
            nd->buf = XFER_ISO_RECV;
            nd->slot = zleaf[v];
        } else {
            nd->buf = XFER_ISO_TMP;
            nd->slot = t->ninterior++;
        }
    }
out:
    xfer_free(order);
    xfer_free(at);
    xfer_free(zleaf);
    if (st != XFER_SUCCESS)
        xfer_iso_trie_free(t);
    return st;
}

void xfer_iso_trie_free(xfer_iso_trie_t *t)
{
    xfer_free(t->nodes);
    xfer_free(t->leaf);
    t->nodes = NULL;
    t->leaf = NULL;
    t->nnodes = 0;
}

void xfer_iso_trie_finish(const xfer_iso_trie_t *t, xfer_iso_sched_t *s)
{
    int zero[XFER_ISO_MAXDIMS] = {0};
    xfer_iso_sched_step(s, zero);
    for (int i = 0; i < t->s; i++) {
        const xfer_iso_trie_node_t *nd = &t->nodes[t->leaf[i]];
        if (nd->buf != XFER_ISO_RECV || nd->slot != i)
            xfer_iso_sched_part(s, i, nd->buf, nd->slot, XFER_ISO_RECV, i);
    }
    xfer_iso_sched_close(s);
}
