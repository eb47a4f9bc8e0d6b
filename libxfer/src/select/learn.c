/* SPDX-License-Identifier: BSD-3-Clause */
/* auto's online learning for one call signature (learn.h): exploration rounds, agreed decisions,
 * the watch for drift. No MPI: the caller reduces the packed vectors. */
#include <string.h>

#include "learn.h"

static void new_round(xfer_learn_t *l)
{
    int k;
    l->state = XFER_LEARN_EXPLORE;
    l->round = l->calls;
    for (k = 0; k < l->ncand; k++)
        l->best[k] = XFER_LEARN_MISSING;
}

void xfer_learn_init(xfer_learn_t *l, const int *cand, int n, int learn)
{
    int k;
    memset(l, 0, sizeof(*l));
    l->ncand = n < 1 ? 1 : n > XFER_LEARN_MAX ? XFER_LEARN_MAX : n;
    for (k = 0; k < l->ncand; k++)
        l->cand[k] = k < n ? cand[k] : cand[0];
    if (l->ncand > 1 && learn)
        new_round(l);
    else
        l->state = XFER_LEARN_FIXED;
}

void xfer_learn_probe(xfer_learn_t *l, int first)
{
    memset(l, 0, sizeof(*l));
    l->ncand = 1;
    l->cand[0] = first;
    l->best[0] = XFER_LEARN_MISSING;
    l->state = XFER_LEARN_PROBE;
}

void xfer_learn_begin(xfer_learn_t *l, const int *cand, int n)
{
    const double mine = l->best[0]; /* (new_round forgets it; the agreed est[0] stays) */
    int k, m = 1;
    for (k = 0; k < n && m < XFER_LEARN_MAX; k++)
        if (cand[k] != l->cand[0])
            l->cand[m++] = cand[k];
    l->ncand = m;
    if (m == 1) {
        l->state = XFER_LEARN_FIXED;
        return;
    }
    new_round(l);
    l->round = l->calls - 1; /* the probe was this round's first call */
    l->best[0] = mine;
}

int xfer_learn_len(const xfer_learn_t *l)
{
    return l->ncand;
}

int xfer_learn_due(const xfer_learn_t *l)
{
    const long k = l->calls - l->round;
    if (l->asked)
        return 0;
    if (l->state == XFER_LEARN_PROBE)
        return k >= 1;
    if (l->state == XFER_LEARN_EXPLORE)
        return k >= l->ncand + 1; /* every candidate, then the first one again */
    return l->state == XFER_LEARN_SETTLED && k >= l->window;
}

static double median(const double *x, int n)
{
    double y[XFER_LEARN_WATCH], t;
    int i, j;
    for (i = 0; i < n; i++) { /* insertion sort of at most XFER_LEARN_WATCH */
        t = x[i];
        for (j = i; j > 0 && y[j - 1] > t; j--)
            y[j] = y[j - 1];
        y[j] = t;
    }
    return n % 2 ? y[n / 2] : 0.5 * (y[n / 2 - 1] + y[n / 2]);
}

void xfer_learn_pack(xfer_learn_t *l, double *v)
{
    int k;
    for (k = 0; k < l->ncand; k++)
        v[k] = XFER_LEARN_MISSING;
    if (l->state == XFER_LEARN_EXPLORE || l->state == XFER_LEARN_PROBE)
        for (k = 0; k < l->ncand; k++)
            v[k] = l->best[k];
    else if (l->state == XFER_LEARN_SETTLED && l->watch_n > 0)
        v[l->pick] = median(l->watch, l->watch_n);
    l->asked = 1;
}

/* The candidate with the lowest estimate, model's order on ties. */
static int lowest(const xfer_learn_t *l)
{
    int k, b = 0;
    for (k = 1; k < l->ncand; k++)
        if (l->est[k] < l->est[b])
            b = k;
    return b;
}

static void settle_on(xfer_learn_t *l, int k)
{
    l->pick = k;
    l->settled = 0.0; /* the next watch sets it */
    l->window = XFER_LEARN_CONFIRM;
    l->state = XFER_LEARN_SETTLED;
}

void xfer_learn_apply(xfer_learn_t *l, const double *agreed)
{
    int k;
    l->asked = 0;
    if (l->state == XFER_LEARN_PROBE) {
        if (agreed[0] < XFER_LEARN_MISSING) { /* the caller ranks again, then xfer_learn_begin */
            l->est[0] = agreed[0];
            l->state = XFER_LEARN_PROBED;
        }
    } else if (l->state == XFER_LEARN_EXPLORE) {
        for (k = 0; k < l->ncand; k++)
            if (agreed[k] >= XFER_LEARN_MISSING) { /* not measured everywhere yet: again */
                new_round(l);
                return;
            }
        for (k = 0; k < l->ncand; k++)
            l->est[k] = agreed[k];
        settle_on(l, lowest(l));
        l->rounds++;
    } else if (l->state == XFER_LEARN_SETTLED) {
        const double t = agreed[l->pick];
        if (t < XFER_LEARN_MISSING) {
            int k2;
            if (l->settled > 0.0 && t > l->settled * XFER_LEARN_DRIFT) {
                new_round(l); /* the choice itself got slower: measure everything again */
                return;
            }
            /* its median replaces the fastest single call exploration saw: one lucky call of
             * an algorithm whose calls vary is not the choice for long */
            l->est[l->pick] = t;
            k2 = lowest(l);
            if (k2 != l->pick && l->est[k2] * XFER_LEARN_SWITCH < t) {
                settle_on(l, k2);
                l->switches++;
            } else {
                if (l->settled <= 0.0 || t < l->settled)
                    l->settled = t;
                l->window = XFER_LEARN_WATCH;
            }
        }
    }
    l->round = l->calls;
    l->watch_n = 0;
}

int xfer_learn_choose(xfer_learn_t *l)
{
    const long k = l->calls - l->round;
    int c = 0;
    if (l->state == XFER_LEARN_EXPLORE)
        c = k < l->ncand ? (int) k : 0; /* then the first again, and while the agreement runs */
    else if (l->state == XFER_LEARN_SETTLED)
        c = l->pick;
    l->calls++;
    return c;
}

void xfer_learn_record(xfer_learn_t *l, int k, double seconds)
{
    if (k < 0 || k >= l->ncand || seconds < 0.0)
        return;
    if ((l->state == XFER_LEARN_EXPLORE || l->state == XFER_LEARN_PROBE) && seconds < l->best[k])
        l->best[k] = seconds;
    else if (l->state == XFER_LEARN_SETTLED && k == l->pick && l->watch_n < XFER_LEARN_WATCH)
        l->watch[l->watch_n++] = seconds;
}
