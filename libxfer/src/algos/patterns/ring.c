/* SPDX-License-Identifier: BSD-3-Clause */
#include "../../core/core.h"
#include "ring.h"

enum { GUARD_NONE = 0, GUARD_SRC_LT_N, GUARD_2J_GT };

typedef struct {
    int lo, hi; /* j in [lo, hi) */
    int a, c;   /* src = a + c*j (reduced mod N when mod) */
    int dir;    /* dst = src + dir */
    int mod;
    int m0; /* message = m0 + j */
    int guard, t;
} seq_t;

static void add(seq_t *d, int *n, int lo, int hi, int a, int c, int dir, int mod, int m0, int guard,
                int t)
{
    seq_t *s = &d[(*n)++];
    s->lo = lo;
    s->hi = hi;
    s->a = a;
    s->c = c;
    s->dir = dir;
    s->mod = mod;
    s->m0 = m0;
    s->guard = guard;
    s->t = t;
}

/* The sequences of one step (seed-intergroup Appendix A, corrected). */
static int sequences(int p, int q, int step, seq_t *d)
{
    int n = 0, i;
    if (p >= q) {
        const int g = q / 2;
        if (step < g) { /* stage 1 */
            i = step;
            add(d, &n, g, p, i, 1, +1, 0, 0, GUARD_NONE, 0);         /* #1 */
            add(d, &n, 0, g, -i, 1, -1, 1, 0, GUARD_NONE, 0);        /* #2, around the wrap */
            add(d, &n, 0, i, g - i, 2, +1, 0, g - i, GUARD_NONE, 0); /* #3 */
        } else if (step < p) {                                       /* stage 2 */
            i = step - g;
            add(d, &n, g, p, g + i, 1, +1, 0, 0, GUARD_SRC_LT_N, 0);
            add(d, &n, 0, g, i, 2, +1, 0, 0, GUARD_NONE, 0);
        } else { /* stage 3 */
            i = step - p;
            add(d, &n, g, p, p + i, 1, +1, 0, 0, GUARD_SRC_LT_N, 0);
            add(d, &n, 1, i + 1, p + g - i - 1, 2, -1, 0, -1, GUARD_NONE, 0);
            add(d, &n, 0, g, p - g + i, 2, +1, 0, 0, GUARD_NONE, 0);
        }
    } else {
        const int h = p / 2, g = q / 2;
        if (step < h) { /* stage 1 */
            i = step;
            add(d, &n, h, p, i, 1, +1, 0, 0, GUARD_NONE, 0);
            add(d, &n, 0, h, -i, 1, -1, 1, 0, GUARD_NONE, 0);
            add(d, &n, 0, i, h - i, 2, +1, 0, h - i, GUARD_NONE, 0);
            add(d, &n, h, h + i, 1 - i - h, 2, -1, 0, 0, GUARD_NONE, 0); /* #4 */
        } else if (step < h + g) {                                       /* stage 2 */
            const int c = ((step - h) + 1) / 2;
            i = step - h;
            add(d, &n, h, p, h + i, 1, +1, 0, 0, GUARD_NONE, 0);
            if (i < g - h)
                add(d, &n, 0, h, h + q - i, 1, -1, 0, 0, GUARD_NONE, 0);
            add(d, &n, 0, h, i, 2, +1, 0, 0, GUARD_NONE, 0);
            add(d, &n, h + c, p, 1 - i - p, 2, -1, 0, 0, GUARD_NONE, 0); /* #4-1 */
            /* #4-2 with the corrected guard and j capped below p */
            add(d, &n, h, h + c < p ? h + c : p, q + 1 - i, 2, -1, 1, 0, GUARD_2J_GT,
                2 * i + 3 * h - q);
        } else { /* stage 3 */
            i = step - h - g;
            add(d, &n, h, p, h + g + i, 1, +1, 0, 0, GUARD_SRC_LT_N, 0);
            add(d, &n, 1, i + 1, g + p - i - 1, 2, -1, 0, -1, GUARD_NONE, 0);
            add(d, &n, 0, h, g + i, 2, +1, 0, 0, GUARD_NONE, 0); /* line 58, 004 form */
        }
    }
    return n;
}

/* Transfer of sequence @p s for @p j, if its guard lets it through. */
static int emit(const seq_t *s, int si, int j, int N, xfer_ring_xfer_t *x)
{
    long raw = (long) s->a + (long) s->c * j;
    if (j < s->lo || j >= s->hi)
        return 0;
    if (s->guard == GUARD_SRC_LT_N && !(raw + 1 < N))
        return 0;
    if (s->guard == GUARD_2J_GT && !(2 * j > s->t))
        return 0;
    if (s->mod) {
        x->src = xfer_mod(raw, N);
        x->dst = xfer_mod(raw + s->dir, N);
    } else {
        if (raw < 0 || raw >= N || raw + s->dir < 0 || raw + s->dir >= N)
            return 0; /* cannot happen for a correct table; never emit off the ring */
        x->src = (int) raw;
        x->dst = (int) (raw + s->dir);
    }
    x->msg = s->m0 + j;
    x->key = (long) si * N + j;
    return 1;
}

int xfer_ring_half_nsteps(int p, int q)
{
    return p + q / 2;
}

int xfer_ring_half_step(int p, int q, int step, xfer_ring_xfer_t *out, int cap)
{
    seq_t d[8];
    const int N = p + q, nd = sequences(p, q, step, d);
    int si, j, n = 0;
    for (si = 0; si < nd; si++)
        for (j = d[si].lo; j < d[si].hi; j++) {
            if (n >= cap)
                return -1;
            n += emit(&d[si], si, j, N, &out[n]);
        }
    return n;
}

/* j values for which src(j) == v (mod N when the sequence wraps): at most two. */
static int solve(const seq_t *s, long v, int N, int js[2])
{
    int n = 0;
    if (!s->mod) {
        long w = v - s->a;
        if (s->c == 1)
            js[n++] = (int) w;
        else if (w % 2 == 0)
            js[n++] = (int) (w / 2);
        return n;
    }
    {
        long w = xfer_mod(v - s->a, N); /* c*j == w (mod N), 0 <= c*j < 2N for j < N */
        if (s->c == 1) {
            js[n++] = (int) w;
        } else {
            if (w % 2 == 0)
                js[n++] = (int) (w / 2);
            if ((w + N) % 2 == 0)
                js[n++] = (int) ((w + N) / 2);
        }
    }
    return n;
}

/* Can a transfer of sequence @p s start or end at @p x? An unwrapped sequence's sources lie in
 * [src(lo), src(hi - 1)] (c > 0) and its destinations one off, and most of a step's sequences
 * miss a given position: this keeps the per-position query from solving them. */
static int may_touch(const seq_t *s, long x)
{
    if (s->lo >= s->hi)
        return 0;
    return s->mod || (x >= (long) s->a + (long) s->c * s->lo - 1 &&
                      x <= (long) s->a + (long) s->c * (s->hi - 1) + 1);
}

int xfer_ring_half_at(int p, int q, int step, int x, xfer_ring_xfer_t *out)
{
    seq_t d[8];
    const int N = p + q, nd = sequences(p, q, step, d);
    int si, k, n = 0;

    for (si = 0; si < nd; si++) {
        int js[2], nj, role;
        if (!may_touch(&d[si], x))
            continue;
        for (role = 0; role < 2; role++) { /* 0: x sends, 1: x receives */
            nj = solve(&d[si], role == 0 ? x : (long) x - d[si].dir, N, js);
            for (k = 0; k < nj && n < XFER_RING_MAX_AT; k++) {
                xfer_ring_xfer_t t;
                if (emit(&d[si], si, js[k], N, &t) && (role == 0 ? t.src : t.dst) == x)
                    out[n++] = t;
            }
        }
    }
    return n;
}
