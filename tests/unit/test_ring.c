/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The half-duplex ring generator (Kang et al. Alg. 1 and 3 with the corrections, our p > q
 * formulation), checked in position space for every even p <= 64, q <= 128:
 *   - against a literal transcription of the verified reference generator (seed-intergroup
 *     Appendix A): same transfers, step by step;
 *   - the O(1) per-position query returns exactly the step's transfers at that position;
 *   - the paper's properties: neighbour links only, the sender holds the message, at most one
 *     send and one receive per position per step, p + q/2 steps, every receiver ends with
 *     every message (and for p >= q receives each exactly once).
 * Also the printed Algorithm 3 guard (2j > 2i + p/2) is shown to be incomplete at (2, 6),
 * as the erratum says, so this test would notice a regression to it.
 */
#include <stdlib.h>
#include <string.h>

#include "../support/unit.h"
#include "algos/patterns/ring.h"

static long checks;

/* ---- reference (Appendix A, transcribed) ---------------------------------------------- */
typedef struct {
    int src, dst, msg;
} tr_t;
typedef struct {
    tr_t *t;
    int n, cap;
} trs_t;

static void emit(trs_t *v, int s, int d, int m)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 64;
        v->t = realloc(v->t, (size_t) v->cap * sizeof(tr_t));
    }
    v->t[v->n].src = s;
    v->t[v->n].dst = d;
    v->t[v->n].msg = m;
    v->n++;
}

static int md(int a, int n)
{
    int r = a % n;
    return r < 0 ? r + n : r;
}

static void ref_step(int p, int q, int step, trs_t *v, int printed_guard)
{
    int N = p + q, i, j;
    if (p >= q) {
        int g = q / 2;
        if (step < g) {
            i = step;
            for (j = g; j < p; j++)
                emit(v, j + i, j + i + 1, j);
            for (j = 0; j < g; j++)
                emit(v, md(j - i, N), md(j - i - 1, N), j);
            for (j = 0; j < i; j++)
                emit(v, g - i + 2 * j, g - i + 2 * j + 1, g - i + j);
        } else if (step < p) {
            i = step - g;
            for (j = g; j < p; j++)
                if (g + j + i + 1 < N)
                    emit(v, g + j + i, g + j + i + 1, j);
            for (j = 0; j < g; j++)
                emit(v, 2 * j + i, 2 * j + i + 1, j);
        } else {
            i = step - p;
            for (j = g; j < p; j++)
                if (p + j + i + 1 < N)
                    emit(v, p + j + i, p + j + i + 1, j);
            for (j = 1; j <= i; j++)
                emit(v, p + g - i + 2 * j - 1, p + g - i + 2 * j - 2, j - 1);
            for (j = 0; j < g; j++)
                emit(v, p - g + i + 2 * j, p - g + i + 2 * j + 1, j);
        }
    } else {
        int h = p / 2, g = q / 2;
        if (step < h) {
            i = step;
            for (j = h; j < p; j++)
                emit(v, j + i, j + i + 1, j);
            for (j = 0; j < h; j++)
                emit(v, md(j - i, N), md(j - i - 1, N), j);
            for (j = 0; j < i; j++)
                emit(v, h - i + 2 * j, h - i + 2 * j + 1, h - i + j);
            for (j = h; j < h + i; j++)
                emit(v, 2 * j - i - h + 1, 2 * j - i - h, j);
        } else if (step < h + g) {
            int c;
            i = step - h;
            c = (i + 1) / 2;
            for (j = h; j < p; j++)
                emit(v, h + j + i, h + j + i + 1, j);
            if (i < g - h)
                for (j = 0; j < h; j++)
                    emit(v, h + q - i + j, h + q - i + j - 1, j);
            for (j = 0; j < h; j++)
                emit(v, 2 * j + i, 2 * j + i + 1, j);
            for (j = h + c; j < p; j++)
                emit(v, 2 * j - i - p + 1, 2 * j - i - p, j);
            for (j = h; j < h + c && j < p; j++)
                if (printed_guard ? 2 * j > 2 * i + h : 2 * j > 2 * i + 3 * h - q)
                    emit(v, md(2 * j - i + q + 1, N), md(2 * j - i + q, N), j);
        } else {
            i = step - h - g;
            for (j = h; j < p; j++)
                if (j + i + 1 < h + g)
                    emit(v, h + g + j + i, h + g + j + i + 1, j);
            for (j = 1; j <= i; j++)
                emit(v, g + p - i + 2 * j - 1, g + p - i + 2 * j - 2, j - 1);
            for (j = 0; j < h; j++)
                emit(v, g + i + 2 * j, g + i + 2 * j + 1, j);
        }
    }
}

static int cmp_tr(const void *a, const void *b)
{
    const tr_t *x = a, *y = b;
    if (x->src != y->src)
        return x->src - y->src;
    if (x->dst != y->dst)
        return x->dst - y->dst;
    return x->msg - y->msg;
}

/* Run the reference over all steps checking the schedule properties; returns completeness. */
static int ref_complete(int p, int q, int printed_guard)
{
    const int N = p + q, steps = p + q / 2;
    unsigned char *have = calloc((size_t) N * (size_t) p, 1);
    int s, i, ok = 1;
    trs_t v = {0};
    for (i = 0; i < p; i++)
        have[i * p + i] = 1;
    for (s = 0; s < steps; s++) {
        v.n = 0;
        ref_step(p, q, s, &v, printed_guard);
        for (i = 0; i < v.n; i++)
            have[v.t[i].dst * p + v.t[i].msg] = 1;
    }
    for (i = p; i < N && ok; i++)
        for (s = 0; s < p; s++)
            ok = ok && have[i * p + s];
    free(have);
    free(v.t);
    return ok;
}

static void check_shape(int p, int q)
{
    const int N = p + q, steps = xfer_ring_half_nsteps(p, q);
    unsigned char *have = calloc((size_t) N * (size_t) p, 1);
    unsigned char *nrecv = calloc((size_t) N * (size_t) p, 1);
    int *sends = malloc((size_t) N * sizeof(int)), *recvs = malloc((size_t) N * sizeof(int));
    xfer_ring_xfer_t *got = malloc((size_t) (4 * N + 8) * sizeof(xfer_ring_xfer_t));
    tr_t *mine = malloc((size_t) (4 * N + 8) * sizeof(tr_t));
    trs_t ref = {0};
    int s, i, x, n;

    UCHECK(steps == p + q / 2, "p=%d q=%d: %d steps", p, q, steps);
    for (i = 0; i < p; i++)
        have[i * p + i] = 1;
    for (s = 0; s < steps; s++) {
        ref.n = 0;
        ref_step(p, q, s, &ref, 0);
        n = xfer_ring_half_step(p, q, s, got, 4 * N + 8);
        UCHECK(n == ref.n, "p=%d q=%d step %d: %d transfers, reference %d", p, q, s, n, ref.n);
        if (n != ref.n)
            break;
        for (i = 0; i < n; i++) {
            mine[i].src = got[i].src;
            mine[i].dst = got[i].dst;
            mine[i].msg = got[i].msg;
        }
        qsort(mine, (size_t) n, sizeof(tr_t), cmp_tr);
        qsort(ref.t, (size_t) n, sizeof(tr_t), cmp_tr);
        UCHECK(memcmp(mine, ref.t, (size_t) n * sizeof(tr_t)) == 0,
               "p=%d q=%d step %d differs from the reference", p, q, s);
        /* per-position queries */
        for (x = 0; x < N; x++) {
            xfer_ring_xfer_t at[XFER_RING_MAX_AT];
            int na = xfer_ring_half_at(p, q, s, x, at), want = 0, k, j;
            for (k = 0; k < n; k++)
                want += got[k].src == x || got[k].dst == x;
            UCHECK(na == want, "p=%d q=%d step %d position %d: %d transfers, want %d", p, q, s, x,
                   na, want);
            for (k = 0; k < na; k++) {
                int found = 0;
                for (j = 0; j < n && !found; j++)
                    found = got[j].key == at[k].key && got[j].src == at[k].src &&
                            got[j].dst == at[k].dst && got[j].msg == at[k].msg;
                UCHECK(found, "p=%d q=%d step %d position %d: unknown transfer", p, q, s, x);
            }
            checks++;
        }
        /* properties */
        memset(sends, 0, (size_t) N * sizeof(int));
        memset(recvs, 0, (size_t) N * sizeof(int));
        for (i = 0; i < n; i++) {
            const int a = got[i].src, b = got[i].dst, m = got[i].msg, d = md(a - b, N);
            UCHECK(d == 1 || d == N - 1, "p=%d q=%d step %d: %d -> %d not neighbours", p, q, s, a,
                   b);
            UCHECK(m >= 0 && m < p && have[a * p + m], "p=%d q=%d step %d: %d sends m%d unheld", p,
                   q, s, a, m);
            UCHECK(++sends[a] == 1 && ++recvs[b] == 1, "p=%d q=%d step %d: port used twice", p, q,
                   s);
        }
        for (i = 0; i < n; i++) {
            have[got[i].dst * p + got[i].msg] = 1;
            if (got[i].dst >= p && nrecv[got[i].dst * p + got[i].msg] < 255)
                nrecv[got[i].dst * p + got[i].msg]++;
        }
    }
    for (x = p; x < N; x++)
        for (i = 0; i < p; i++) {
            UCHECK(have[x * p + i], "p=%d q=%d: receiver %d misses m%d", p, q, x - p, i);
            if (p >= q)
                UCHECK(nrecv[x * p + i] == 1, "p=%d q=%d: receiver %d gets m%d %d times", p, q,
                       x - p, i, nrecv[x * p + i]);
        }
    checks++;
    free(have);
    free(nrecv);
    free(sends);
    free(recvs);
    free(got);
    free(mine);
    free(ref.t);
}

int main(int argc, char **argv)
{
    /* every even p <= 64, q <= 128; `--max-p P` stops at P (and q at 2P): the valgrind run
     * checks memory behaviour on fewer shapes, the plain run covers them all */
    const int pmax = argc == 3 && strcmp(argv[1], "--max-p") == 0 ? atoi(argv[2]) : 64;
    int p, q;
    for (p = 2; p <= pmax; p += 2)
        for (q = 2; q <= (p < 64 ? (2 * pmax < 128 ? 2 * pmax : 128) : 64); q += 2)
            check_shape(p, q);
    /* the erratum: the guard as printed loses messages once q >= 3p/2 + 2 */
    UCHECK(!ref_complete(2, 6, 1), "printed guard unexpectedly complete at (2, 6)");
    UCHECK(!ref_complete(4, 8, 1), "printed guard unexpectedly complete at (4, 8)");
    UCHECK(ref_complete(4, 6, 1), "printed guard should be complete at (4, 6)");
    UCHECK(ref_complete(2, 6, 0) && ref_complete(4, 8, 0), "corrected guard incomplete");
    checks += 4;
    return unit_finish("test_ring", checks);
}
