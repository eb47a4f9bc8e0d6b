/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tiling check of several blocks per rank (runtime/tile.c) against a brute-force reference,
 * element by element: arrays of 1 to 3 dimensions cut into boxes at drawn places (a grid, then
 * some boxes cut again), dealt to 1 to 5 ranks (some of them holding none), in a drawn order.
 * Every exact tiling passes; with a box taken out, the check reports a hole whose box no box
 * holds, that starts at the first element in row-major order no box holds, with the count of
 * elements held and a box that touches it; with a box added that meets another one, it reports
 * two boxes that share an element. No box at all passes (nobody put the dataset).
 */
#include <stdint.h>
#include <string.h>

#include "../support/unit.h"
#include "runtime/tile.h"

static long checks;

enum { MAXB = 256, MAXE = 12 * 12 * 12 };

typedef struct set {
    int nd, nranks;
    uint64_t dims[3];
    size_t first[8];
    uint64_t s[MAXB * 3], c[MAXB * 3];
    int n;
} set_t;

static uint64_t rng;

static uint64_t draw(uint64_t n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (rng >> 33) % n;
}

static uint64_t vol(int nd, const uint64_t *c)
{
    uint64_t v = 1;
    for (int d = 0; d < nd; d++)
        v *= c[d];
    return v;
}

/* Cuts of [0, len) into parts: sorted cut points, 0 and len included. */
static int cuts(uint64_t len, uint64_t *at)
{
    int n = 1;
    at[0] = 0;
    for (uint64_t x = 1; x < len; x++)
        if (draw(3) == 0)
            at[n++] = x;
    at[n++] = len;
    return n;
}

/* An exact tiling: a grid, the boxes dealt to ranks by draw (rank order kept by sorting). */
static void make(set_t *t, int nd, int nranks)
{
    uint64_t at[3][16];
    int na[3] = {1, 1, 1}, owner[MAXB], k = 0;
    static uint64_t s[MAXB * 3], c[MAXB * 3];
    memset(t, 0, sizeof(*t));
    t->nd = nd;
    t->nranks = nranks;
    for (int d = 0; d < 3; d++) {
        t->dims[d] = d < nd ? 1 + draw(nd == 1 ? 12 : nd == 2 ? 10 : 6) : 1;
        if (d < nd)
            na[d] = cuts(t->dims[d], at[d]);
        else {
            at[d][0] = 0;
            at[d][1] = 1;
            na[d] = 2;
        }
    }
    for (int a = 0; a + 1 < na[0]; a++)
        for (int b = 0; b + 1 < na[1]; b++)
            for (int e = 0; e + 1 < na[2]; e++) {
                const uint64_t lo[3] = {at[0][a], at[1][b], at[2][e]};
                const uint64_t hi[3] = {at[0][a + 1], at[1][b + 1], at[2][e + 1]};
                for (int d = 0; d < nd; d++) {
                    s[k * nd + d] = lo[d];
                    c[k * nd + d] = hi[d] - lo[d];
                }
                owner[k++] = (int) draw((uint64_t) nranks);
            }
    for (int r = 0; r < nranks; r++) { /* rank by rank, in their drawn order */
        t->first[r] = (size_t) t->n;
        for (int b = 0; b < k; b++)
            if (owner[b] == r) {
                memcpy(t->s + t->n * nd, s + b * nd, (size_t) nd * sizeof(uint64_t));
                memcpy(t->c + t->n * nd, c + b * nd, (size_t) nd * sizeof(uint64_t));
                t->n++;
            }
    }
    t->first[nranks] = (size_t) t->n;
}

/* How many boxes hold element g. */
static int held(const set_t *t, const uint64_t *g)
{
    int n = 0;
    for (int b = 0; b < t->n; b++) {
        int in = 1;
        for (int d = 0; d < t->nd; d++)
            in &= g[d] >= t->s[b * t->nd + d] && g[d] < t->s[b * t->nd + d] + t->c[b * t->nd + d];
        n += in;
    }
    return n;
}

static void coords(const set_t *t, uint64_t e, uint64_t *g)
{
    for (int d = t->nd - 1; d >= 0; d--) {
        g[d] = e % t->dims[d];
        e /= t->dims[d];
    }
}

static xfer_tile_kind_t check(const set_t *t, xfer_tile_fault_t *f)
{
    const xfer_tiles_t x = {t->nd, t->dims, t->nranks, t->first, t->s, t->c};
    return xfer_tiles_check(&x, f);
}

/* Take box @p b out (its rank keeps the others). */
static void drop(set_t *t, int b)
{
    const int nd = t->nd;
    memmove(t->s + b * nd, t->s + (b + 1) * nd, (size_t) (t->n - b - 1) * nd * sizeof(uint64_t));
    memmove(t->c + b * nd, t->c + (b + 1) * nd, (size_t) (t->n - b - 1) * nd * sizeof(uint64_t));
    for (int r = 1; r <= t->nranks; r++)
        if (t->first[r] > (size_t) b)
            t->first[r]--;
    t->n--;
}

static void hole_case(set_t *t)
{
    xfer_tile_fault_t f;
    uint64_t g[3], whole = vol(t->nd, t->dims), covered = 0, first = whole;
    for (uint64_t e = 0; e < whole; e++) {
        coords(t, e, g);
        if (held(t, g))
            covered++;
        else if (first == whole)
            first = e;
    }
    if (covered == 0) {
        UCHECK(check(t, &f) == XFER_TILE_OK, "no box: not a hole");
        checks++;
        return;
    }
    UCHECK(check(t, &f) == XFER_TILE_HOLE, "nd %d: a box taken out: %d", t->nd, (int) f.kind);
    UCHECK(f.covered == covered && f.whole == whole, "covered %llu of %llu, want %llu",
           (unsigned long long) f.covered, (unsigned long long) f.whole,
           (unsigned long long) covered);
    UCHECK(f.hole_known, "the hole not found");
    coords(t, first, g);
    for (int d = 0; d < t->nd; d++)
        UCHECK(f.hs[d] == g[d] && f.hc[d] > 0, "hole starts at %llu in dim %d, want %llu",
               (unsigned long long) f.hs[d], d, (unsigned long long) g[d]);
    for (uint64_t e = 0; e < vol(t->nd, f.hc); e++) { /* no box holds any of it */
        uint64_t x = e, h[3];
        for (int d = t->nd - 1; d >= 0; d--) {
            h[d] = f.hs[d] + x % f.hc[d];
            x /= f.hc[d];
        }
        UCHECK(held(t, h) == 0, "an element of the hole is held");
    }
    UCHECK(f.rn >= 0 && (size_t) f.rn < (size_t) t->nranks && f.n < (size_t) t->n &&
               f.n >= t->first[f.rn] && f.n < t->first[f.rn + 1],
           "a box beside the hole: rank %d box %zu", f.rn, f.n);
    checks++;
}

static void overlap_case(set_t *t)
{
    xfer_tile_fault_t f;
    const int nd = t->nd, b = (int) draw((uint64_t) t->n), r = (int) draw((uint64_t) t->nranks);
    uint64_t s[3], c[3];
    if (t->n + 1 > MAXB)
        return;
    for (int d = 0; d < nd; d++) { /* a box that meets box b */
        const uint64_t lo = t->s[b * nd + d], n = t->c[b * nd + d];
        s[d] = lo + draw(n);
        c[d] = 1 + draw(t->dims[d] - s[d]);
    }
    /* into rank r's boxes, after its others */
    memmove(t->s + (t->first[r + 1] + 1) * nd, t->s + t->first[r + 1] * nd,
            (t->n - t->first[r + 1]) * nd * sizeof(uint64_t));
    memmove(t->c + (t->first[r + 1] + 1) * nd, t->c + t->first[r + 1] * nd,
            (t->n - t->first[r + 1]) * nd * sizeof(uint64_t));
    memcpy(t->s + t->first[r + 1] * nd, s, (size_t) nd * sizeof(uint64_t));
    memcpy(t->c + t->first[r + 1] * nd, c, (size_t) nd * sizeof(uint64_t));
    for (int q = r + 1; q <= t->nranks; q++)
        t->first[q]++;
    t->n++;
    UCHECK(check(t, &f) == XFER_TILE_OVERLAP, "nd %d: a box added: %d", nd, (int) f.kind);
    {
        int meet = 1;
        for (int d = 0; d < nd; d++)
            meet &= t->s[f.a * nd + d] < t->s[f.b * nd + d] + t->c[f.b * nd + d] &&
                    t->s[f.b * nd + d] < t->s[f.a * nd + d] + t->c[f.a * nd + d];
        UCHECK(meet && f.a != f.b, "boxes %zu and %zu do not meet", f.a, f.b);
        UCHECK(f.a >= t->first[f.ra] && f.a < t->first[f.ra + 1] && f.b >= t->first[f.rb] &&
                   f.b < t->first[f.rb + 1],
               "owners %d, %d", f.ra, f.rb);
    }
    checks++;
}

int main(void)
{
    static set_t t;
    xfer_tile_fault_t f;
    for (int seed = 0; seed < 400; seed++)
        for (int nd = 1; nd <= 3; nd++) {
            const int nranks = 1 + seed % 5;
            rng = (uint64_t) seed * 1000 + (uint64_t) nd;
            make(&t, nd, nranks);
            UCHECK(check(&t, &f) == XFER_TILE_OK, "seed %d nd %d: an exact tiling refused (%d)",
                   seed, nd, (int) f.kind);
            checks++;
            if (seed % 2) {
                overlap_case(&t);
            } else {
                drop(&t, (int) draw((uint64_t) t.n));
                if (seed % 4 == 2 && t.n > 1)
                    drop(&t, (int) draw((uint64_t) t.n)); /* two holes: the first found */
                hole_case(&t);
            }
        }
    t.n = 0; /* nobody put it */
    memset(t.first, 0, sizeof(t.first));
    UCHECK(check(&t, &f) == XFER_TILE_OK, "no box at all");
    return unit_finish("test_tile", checks + 1);
}
