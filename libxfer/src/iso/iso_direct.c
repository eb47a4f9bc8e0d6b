/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Torus-direct schedules: per dimension, one step per distinct nonzero coordinate value c,
 * sending straight to R + c e_j the blocks whose coordinate there is c, combined. A block makes
 * one hop per nonzero coordinate instead of ||C^i||, alternating TMP and RECV slots as in the
 * torus schedule. Allgather sends each prefix-trie edge directly.
 *
 * Cost: R alpha + V' beta m, R = sum_j #distinct nonzero c_j^i, V' = sum_i nnz(C^i)
 *       (allgather: nonzero trie edges).
 * Restrictions: dimensions in which an offset is nonzero must be periodic (xfer_iso_sched_build
 * checks it for every builder that needs it).
 * Preferred when: offsets reach further than one hop (for radius 1 it equals the torus
 *       schedule), on networks that are not tori.
 * Source: seed-isomorphic §9 (the "(2 + 2)d = 12" rounds of the text are wrong, erratum E5).
 */
#include <stdlib.h>

#include "../core/core.h"
#include "iso_sched.h"

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}

/* Distinct nonzero values of @p col (n entries, sorted in place); returns how many, in col. */
static int distinct_nonzero(int *col, int n)
{
    int m = 0;
    if (n > 1)
        qsort(col, (size_t) n, sizeof(int), cmp_int);
    for (int i = 0; i < n; i++)
        if (col[i] != 0 && (m == 0 || col[m - 1] != col[i]))
            col[m++] = col[i];
    return m;
}

static xfer_status_t alltoall(const xfer_iso_nbh_t *n, xfer_iso_sched_t *s)
{
    int *hops = xfer_calloc((size_t) n->s + 1, sizeof(int));
    char *moved = xfer_calloc((size_t) n->s + 1, 1);
    int *col = xfer_malloc(sizeof(int) * ((size_t) n->s + 1));
    if (!hops || !moved || !col) {
        xfer_free(hops);
        xfer_free(moved);
        xfer_free(col);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "isomorphic direct schedule: %d offsets", n->s);
    }
    for (int i = 0; i < n->s; i++)
        for (int j = 0; j < n->d; j++)
            hops[i] += n->off[i * n->d + j] != 0;
    for (int j = 0; j < n->d; j++) {
        int m;
        for (int i = 0; i < n->s; i++)
            col[i] = n->off[i * n->d + j];
        m = distinct_nonzero(col, n->s);
        for (int k = 0; k < m; k++) {
            int vec[XFER_ISO_MAXDIMS] = {0};
            vec[j] = col[k];
            xfer_iso_sched_step(s, vec);
            for (int i = 0; i < n->s; i++) {
                if (n->off[i * n->d + j] == col[k]) {
                    xfer_iso_a2a_part(s, i, hops[i], !moved[i]);
                    hops[i]--;
                    moved[i] = 1;
                }
            }
        }
    }
    xfer_free(hops);
    xfer_free(moved);
    xfer_free(col);
    xfer_iso_a2a_self(n, s);
    return s->error;
}

static xfer_status_t allgather(const xfer_iso_nbh_t *n, xfer_iso_sched_t *s)
{
    xfer_iso_trie_t t;
    xfer_status_t st = xfer_iso_trie_build(n, &t);
    int *col = NULL;
    if (st != XFER_SUCCESS)
        return st;
    if (!(col = xfer_malloc(sizeof(int) * ((size_t) t.nnodes + 1)))) {
        xfer_iso_trie_free(&t);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "isomorphic direct allgather: %d nodes", t.nnodes);
    }
    for (int L = 0; L < n->d; L++) {
        int c0 = t.level_start[L + 1], c1 = t.level_start[L + 2], m;
        for (int c = c0; c < c1; c++)
            col[c - c0] = t.nodes[c].val;
        m = distinct_nonzero(col, c1 - c0);
        for (int k = 0; k < m; k++) {
            int vec[XFER_ISO_MAXDIMS] = {0};
            vec[t.perm[L]] = col[k];
            xfer_iso_sched_step(s, vec);
            for (int c = c0; c < c1; c++) {
                const xfer_iso_trie_node_t *ch = &t.nodes[c], *pa = &t.nodes[ch->parent];
                if (ch->val == col[k])
                    xfer_iso_sched_part(s, ch->rep, pa->buf, pa->slot, ch->buf, ch->slot);
            }
        }
    }
    xfer_iso_trie_finish(&t, s);
    st = s->error;
    xfer_free(col);
    xfer_iso_trie_free(&t);
    return st;
}

xfer_status_t xfer_iso_build_direct(const xfer_iso_nbh_t *n, int op, xfer_iso_sched_t *s)
{
    return op == XFER_ISO_OP_ALLTOALL ? alltoall(n, s) : allgather(n, s);
}
