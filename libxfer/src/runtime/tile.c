/* SPDX-License-Identifier: BSD-3-Clause */
/* Does a set of boxes tile an array exactly (tile.h)? */
#include "tile.h"

#include <stdlib.h>
#include <string.h>

#include "../core/core.h"

int xfer_boxes_meet(int nd, const uint64_t *as, const uint64_t *ac, const uint64_t *bs,
                    const uint64_t *bc)
{
    int d;
    for (d = 0; d < nd; d++)
        if (as[d] + ac[d] <= bs[d] || bs[d] + bc[d] <= as[d])
            return 0;
    return 1;
}

static uint64_t volume(int nd, const uint64_t *c)
{
    uint64_t v = 1;
    int d;
    for (d = 0; d < nd; d++)
        v *= c[d];
    return v;
}

typedef struct by_first {
    uint64_t key;
    size_t b;
} by_first_t;

static int cmp_first(const void *pa, const void *pb)
{
    const by_first_t *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

static int cmp_u64(const void *pa, const void *pb)
{
    const uint64_t a = *(const uint64_t *) pa, b = *(const uint64_t *) pb;
    return (a > b) - (a < b);
}

/* The rank that owns box @p b. */
static int owner(const xfer_tiles_t *t, size_t b)
{
    int r = 0;
    while (r + 1 < t->nranks && t->first[r + 1] <= b)
        r++;
    return r;
}

/* The first overlap among the non-empty boxes @p e (m of them), sorted by first coordinate: each
 * is compared with the boxes that start before it ends in dimension 0. */
static int overlap(const xfer_tiles_t *t, by_first_t *e, size_t m, xfer_tile_fault_t *f)
{
    const int nd = t->nd;
    size_t i, j;
    qsort(e, m, sizeof(*e), cmp_first);
    for (i = 0; i < m; i++) {
        const size_t bi = e[i].b;
        const uint64_t end = t->start[bi * nd] + t->count[bi * nd];
        for (j = i + 1; j < m && e[j].key < end; j++) {
            const size_t bj = e[j].b;
            if (!xfer_boxes_meet(nd, t->start + bi * nd, t->count + bi * nd, t->start + bj * nd,
                                 t->count + bj * nd))
                continue;
            f->kind = XFER_TILE_OVERLAP;
            f->a = bi > bj ? bi : bj;
            f->b = bi > bj ? bj : bi;
            f->ra = owner(t, f->a);
            f->rb = owner(t, f->b);
            return 1;
        }
    }
    return 0;
}

/* The first element in row-major order that no box holds, coordinates from dimension @p d on
 * into @p p (those before fixed), among the boxes @p act that hold p's coordinates before d.
 * Each coordinate of that element is 0 or the end of a box that holds the element just before
 * it in that dimension, so only those are tried. Scratch: sub and cand per dimension, @p stride
 * entries each (one more than the boxes). */
static int hole_at(const xfer_tiles_t *t, int d, const size_t *act, size_t nact, uint64_t *p,
                   size_t *subs, uint64_t *cands, size_t stride)
{
    const int nd = t->nd;
    size_t *sub = subs + (size_t) d * stride;
    uint64_t *cand = cands + (size_t) d * stride;
    size_t nc = 0, i, k, ns;

    cand[nc++] = 0;
    for (i = 0; i < nact; i++) {
        const uint64_t e = t->start[act[i] * nd + d] + t->count[act[i] * nd + d];
        if (e < t->dims[d])
            cand[nc++] = e;
    }
    qsort(cand, nc, sizeof(*cand), cmp_u64);
    for (k = 0; k < nc; k++) {
        const uint64_t x = cand[k];
        if (k > 0 && x == cand[k - 1])
            continue;
        ns = 0;
        for (i = 0; i < nact; i++) {
            const uint64_t s = t->start[act[i] * nd + d], c = t->count[act[i] * nd + d];
            if (s <= x && x < s + c)
                sub[ns++] = act[i];
        }
        p[d] = x;
        if (d == nd - 1 ? ns == 0 : hole_at(t, d + 1, sub, ns, p, subs, cands, stride))
            return 1;
    }
    return 0;
}

/* The hole at @p p grown into a box no box holds: the last dimension first, each as far as the
 * first box in its way (or the array's end). */
static void grow(const xfer_tiles_t *t, size_t nbox, xfer_tile_fault_t *f)
{
    const int nd = t->nd;
    int d, e;
    size_t b;
    for (d = 0; d < nd; d++)
        f->hc[d] = 1;
    for (d = nd - 1; d >= 0; d--) {
        uint64_t lim = t->dims[d];
        for (b = 0; b < nbox; b++) {
            const uint64_t *s = t->start + b * nd, *c = t->count + b * nd;
            int across = 1;
            for (e = 0; e < nd && across; e++)
                across = e == d || (s[e] < f->hs[e] + f->hc[e] && f->hs[e] < s[e] + c[e]);
            if (across && volume(nd, c) && s[d] > f->hs[d] && s[d] < lim)
                lim = s[d];
        }
        f->hc[d] = lim - f->hs[d];
    }
    f->rn = -1;
    for (b = 0; b < nbox && f->rn < 0; b++) { /* a box that touches it, for the words */
        const uint64_t *s = t->start + b * nd, *c = t->count + b * nd;
        if (!volume(nd, c))
            continue;
        for (d = 0; d < nd && f->rn < 0; d++) {
            int across = s[d] + c[d] == f->hs[d] || s[d] == f->hs[d] + f->hc[d];
            for (e = 0; e < nd && across; e++)
                across = e == d || (s[e] < f->hs[e] + f->hc[e] && f->hs[e] < s[e] + c[e]);
            if (across) {
                f->n = b;
                f->rn = owner(t, b);
            }
        }
    }
}

xfer_tile_kind_t xfer_tiles_check(const xfer_tiles_t *t, xfer_tile_fault_t *f)
{
    const int nd = t->nd;
    const size_t nbox = t->first[t->nranks];
    by_first_t *e = NULL;
    size_t b, m = 0;

    memset(f, 0, sizeof(*f));
    f->rn = -1;
    f->whole = volume(nd, t->dims);
    for (b = 0; b < nbox; b++) {
        const uint64_t v = volume(nd, t->count + b * nd);
        f->covered = v > UINT64_MAX - f->covered ? UINT64_MAX : f->covered + v;
        m += v > 0;
    }
    if (f->covered == 0) /* nobody put it */
        return XFER_TILE_OK;
    e = xfer_malloc(m * sizeof(*e));
    if (e) {
        m = 0;
        for (b = 0; b < nbox; b++)
            if (volume(nd, t->count + b * nd)) {
                e[m].key = t->start[b * nd];
                e[m++].b = b;
            }
        if (overlap(t, e, m, f)) {
            xfer_free(e);
            return f->kind;
        }
        xfer_free(e);
    } else { /* out of memory: every pair */
        size_t a;
        for (a = 0; a < nbox; a++)
            for (b = 0; b < a; b++)
                if (volume(nd, t->count + a * nd) && volume(nd, t->count + b * nd) &&
                    xfer_boxes_meet(nd, t->start + a * nd, t->count + a * nd, t->start + b * nd,
                                    t->count + b * nd)) {
                    f->kind = XFER_TILE_OVERLAP;
                    f->a = a;
                    f->b = b;
                    f->ra = owner(t, a);
                    f->rb = owner(t, b);
                    return f->kind;
                }
    }
    if (f->covered == f->whole)
        return XFER_TILE_OK;
    f->kind = XFER_TILE_HOLE;
    {
        size_t *subs = xfer_malloc(((size_t) nd + 1) * (nbox + 1) * sizeof(size_t));
        uint64_t *cands = xfer_malloc(((size_t) nd + 1) * (nbox + 1) * sizeof(uint64_t));
        size_t *all = subs ? subs + (size_t) nd * (nbox + 1) : NULL;
        if (subs && cands) {
            size_t n = 0;
            for (b = 0; b < nbox; b++)
                if (volume(nd, t->count + b * nd))
                    all[n++] = b;
            f->hole_known = hole_at(t, 0, all, n, f->hs, subs, cands, nbox + 1);
            if (f->hole_known)
                grow(t, nbox, f);
        }
        xfer_free(subs);
        xfer_free(cands);
    }
    return f->kind;
}
