/* SPDX-License-Identifier: BSD-3-Clause */
/* auto's learning without MPI: simulated ranks, each with its own state and its own (skewed,
 * noisy) timings, agree through a MAX over their packed vectors as MPI_Allreduce would. Checked:
 * every rank runs the same candidate at every call, blocking agreements and the persistent
 * plans' agreements one call late; exploration ends on the fastest candidate within MAX + 1
 * calls; a candidate far ahead is explored by nobody; a choice that slows down is re-decided;
 * a choice fast only in the call exploration saw is given up after its median;
 * a measurement missing on one rank repeats the round; the tuning file seeds the candidates.
 * Seeded (--seed N; a failure prints it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/unit.h"
#include "../support/unit_shape.h"
#include "select/learn.h"
#include "select/selector.h"

enum { NR = 7 };

static unsigned long long rng;

static double uniform01(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double) (rng >> 11) / (double) (1ULL << 53);
}

typedef struct world {
    xfer_learn_t l[NR];
    double skew[NR];             /* rank r's times are skew[r] times the call's */
    double base[XFER_LEARN_MAX]; /* each candidate's true time */
    double noise;                /* +- this fraction */
    int late;                    /* agreements one call late (persistent plans) */
    double pending[XFER_LEARN_MAX];
    int have_pending;
    int missing_rank; /* this rank does not report its next measurement (-1: none) */
    int bimodal;      /* this candidate is 1.5x slower except in every third call (-1: none) */
    int given[XFER_LEARN_MAX + 1]; /* probing: the candidates ranked again after the probe */
    int ngiven;
} world_t;

static void world_init(world_t *w, int n, const double *base, double noise, int late)
{
    int cand[XFER_LEARN_MAX] = {10, 20, 30, 40}, r, k;
    memset(w, 0, sizeof(*w));
    for (r = 0; r < NR; r++) {
        xfer_learn_init(&w->l[r], cand, n, 1);
        w->skew[r] = 1.0 + 0.6 * uniform01(); /* a slow rank sees a slower call */
    }
    for (k = 0; k < n; k++)
        w->base[k] = base[k];
    w->noise = noise;
    w->late = late;
    w->missing_rank = -1;
    w->bimodal = -1;
}

static void reduce(world_t *w, double *agreed)
{
    double v[XFER_LEARN_MAX];
    int r, k, n = xfer_learn_len(&w->l[0]);
    for (k = 0; k < n; k++)
        agreed[k] = -1.0;
    for (r = 0; r < NR; r++) {
        xfer_learn_pack(&w->l[r], v);
        for (k = 0; k < n; k++)
            agreed[k] = v[k] > agreed[k] ? v[k] : agreed[k];
    }
}

/* One call on every rank; returns the candidate they ran (checked identical). */
static int call(world_t *w, unsigned long long seed, long i)
{
    double agreed[XFER_LEARN_MAX];
    int r, k = -1, kr;

    if (w->late && w->have_pending) { /* the last call carried it */
        for (r = 0; r < NR; r++)
            xfer_learn_apply(&w->l[r], w->pending);
        w->have_pending = 0;
    }
    if (xfer_learn_due(&w->l[0])) {
        for (r = 1; r < NR; r++)
            UCHECK(xfer_learn_due(&w->l[r]), "seed %llu call %ld: rank %d not due", seed, i, r);
        reduce(w, agreed);
        if (w->late) {
            memcpy(w->pending, agreed, sizeof(agreed));
            w->have_pending = 1;
        } else {
            for (r = 0; r < NR; r++)
                xfer_learn_apply(&w->l[r], agreed);
        }
        if (w->l[0].state == XFER_LEARN_PROBED)
            for (r = 0; r < NR; r++) {
                UCHECK(w->l[r].state == XFER_LEARN_PROBED, "seed %llu call %ld: rank %d not probed",
                       seed, i, r);
                xfer_learn_begin(&w->l[r], w->given, w->ngiven);
            }
    }
    for (r = 0; r < NR; r++) {
        kr = xfer_learn_choose(&w->l[r]);
        if (r == 0)
            k = kr;
        UCHECK(kr == k, "seed %llu call %ld: rank %d runs candidate %d, rank 0 %d", seed, i, r, kr,
               k);
    }
    for (r = 0; r < NR; r++) {
        const double slow = k == w->bimodal && i % 3 != 1 ? 1.5 : 1.0;
        const double t =
            slow * w->base[k] * w->skew[r] * (1.0 + w->noise * (2.0 * uniform01() - 1.0));
        if (r == w->missing_rank) {
            w->missing_rank = -1;
            continue;
        }
        xfer_learn_record(&w->l[r], k, i == 0 ? 3.0 * t : t); /* the first call pays set-up */
    }
    return k;
}

/* Exploration over random candidate times ends on the fastest within MAX + 1 (blocking) or
 * MAX + 2 (late) calls, and stays there. */
static void settles(unsigned long long seed, int late)
{
    world_t w;
    double base[XFER_LEARN_MAX];
    int n = 2 + (int) (uniform01() * (XFER_LEARN_MAX - 1)), k, best = 0, last = -1;
    long i;
    for (k = 0; k < n; k++) {
        base[k] = 0.5 + uniform01();
        if (base[k] < base[best])
            best = k;
    }
    /* clearly apart: noise of 2 % cannot reorder candidates 10 % apart */
    for (k = 0; k < n; k++)
        if (k != best && base[k] < base[best] * 1.1)
            base[k] = base[best] * 1.1;
    world_init(&w, n, base, 0.02, late);
    for (i = 0; i < 40; i++) {
        last = call(&w, seed, i);
        if (i >= n + 1 + late)
            UCHECK(last == best, "seed %llu (%s): call %ld runs %d, the fastest is %d", seed,
                   late ? "late" : "blocking", i, last, best);
    }
    UCHECK(w.l[0].state == XFER_LEARN_SETTLED && w.l[0].rounds == 1,
           "seed %llu: state %d after %d rounds", seed, w.l[0].state, w.l[0].rounds);
}

static void drift(unsigned long long seed, int late)
{
    world_t w;
    double base[XFER_LEARN_MAX] = {1.0, 1.3, 1.6};
    long i;
    world_init(&w, 3, base, 0.01, late);
    for (i = 0; i < 12; i++)
        call(&w, seed, i);
    UCHECK(w.l[0].state == XFER_LEARN_SETTLED && w.l[0].pick == 0, "seed %llu: not settled on 0",
           seed);
    w.base[0] = 2.0; /* the network under it changed */
    for (; i < 12 + 2 * XFER_LEARN_WATCH + 6; i++)
        call(&w, seed, i);
    UCHECK(w.l[0].state == XFER_LEARN_SETTLED && w.l[0].pick == 1 && w.l[0].rounds == 2,
           "seed %llu (%s): after the drift state %d pick %d rounds %d", seed,
           late ? "late" : "blocking", w.l[0].state, w.l[0].pick, w.l[0].rounds);
    /* steady again: no further round */
    for (; i < 120; i++)
        call(&w, seed, i);
    UCHECK(w.l[0].rounds == 2, "seed %llu: %d rounds on steady times", seed, w.l[0].rounds);
}

/* Candidate 1 was fast in the one call exploration saw (call 1), but is 1.5x slower in two
 * calls of three: its median, agreed after XFER_LEARN_CONFIRM calls, hands the choice to the
 * fastest steady candidate, which stays. */
static void bimodal(unsigned long long seed, int late)
{
    world_t w;
    double base[XFER_LEARN_MAX] = {1.08, 1.0, 1.03};
    long i;
    world_init(&w, 3, base, 0.005, late);
    w.bimodal = 1;
    for (i = 0; i < 5 + late; i++)
        call(&w, seed, i);
    UCHECK(w.l[0].state == XFER_LEARN_SETTLED && w.l[0].pick == 1,
           "seed %llu: exploration did not take the lucky call (pick %d)", seed, w.l[0].pick);
    for (; i < 5 + late + XFER_LEARN_CONFIRM + 2; i++)
        call(&w, seed, i);
    UCHECK(w.l[0].pick == 2 && w.l[0].switches == 1,
           "seed %llu (%s): after its median, pick %d, %d switches", seed,
           late ? "late" : "blocking", w.l[0].pick, w.l[0].switches);
    for (; i < 80; i++)
        UCHECK(call(&w, seed, i) == 2, "seed %llu: call %ld left the steady candidate", seed, i);
    UCHECK(w.l[0].rounds == 1 && w.l[0].switches == 1, "seed %llu: %d rounds, %d switches", seed,
           w.l[0].rounds, w.l[0].switches);
}

static void missing(unsigned long long seed)
{
    world_t w;
    double base[XFER_LEARN_MAX] = {1.0, 0.8};
    long i;
    world_init(&w, 2, base, 0.0, 0);
    call(&w, seed, 0);
    w.missing_rank = 3; /* rank 3's call of candidate 1 is still in flight at the agreement */
    call(&w, seed, 1);
    call(&w, seed, 2);
    call(&w, seed, 3); /* the agreement: candidate 1 missing on rank 3 */
    UCHECK(w.l[0].state == XFER_LEARN_EXPLORE && w.l[0].rounds == 0,
           "seed %llu: a round with a missing time settled", seed);
    for (i = 4; i < 12; i++)
        call(&w, seed, i);
    UCHECK(w.l[0].state == XFER_LEARN_SETTLED && w.l[0].pick == 1,
           "seed %llu: the repeated round did not settle on 1", seed);
}

static void model_of(xfer_model_t *m, double alpha, double beta)
{
    memset(m, 0, sizeof(*m));
    m->alpha = alpha;
    m->beta = beta;
    m->gamma = 2.5e-10;
    m->nnodes = 8;
    m->max_ppn = 1;
}

/* The candidates: the model's first choice first, only algorithms it cannot separate from it,
 * at most MAX; with a tuning file, its best first, then the model's (a stale file is found out:
 * on the emulated cluster a calibration's fc_direct at (6, 2) skewed, 1.5 s, hid relay_full's
 * 1.08 s when it came alone). */
static void candidates(const char *dir)
{
    xfer_model_t m;
    xfer_shape_t s = unit_uniform_shape(6, 2, 4 << 20, 4 << 20);
    char why[1024], path[600];
    int cand[XFER_LEARN_MAX], n, measured, k;
    xfer_tuning_t *tu = NULL;
    FILE *f;
    double c0;

    model_of(&m, 2e-6, 1e-10);
    n = xfer_select_candidates(&s, &m, NULL, cand, why, sizeof(why), &measured);
    UCHECK(n >= 1 && n <= XFER_LEARN_MAX && !measured, "%d candidates", n);
    UCHECK(xfer_algo_at(cand[0]) == xfer_select_auto(&s, &m, why, sizeof(why), &measured),
           "the first candidate is not the model's choice");
    c0 = xfer_algo_predict(xfer_algo_at(cand[0]), &s, &m);
    for (k = 1; k < n; k++)
        UCHECK(xfer_algo_predict(xfer_algo_at(cand[k]), &s, &m) <= c0 * XFER_SELECT_WINDOW,
               "candidate %s predicted beyond the window", xfer_algo_at(cand[k])->name);

    /* full duplex 7 x 7, 64 bytes: fc_full's pairwise round is far ahead of every other
     * algorithm's latency (fc_direct 1.75x); nothing is explored, the state never asks */
    s = unit_uniform_shape(7, 7, 64, 64);
    n = xfer_select_candidates(&s, &m, NULL, cand, why, sizeof(why), &measured);
    UCHECK(n == 1 && !strcmp(xfer_algo_at(cand[0])->name, "fc_full"),
           "7x7 full, 64 bytes: %d candidates, %s first (%s)", n, xfer_algo_at(cand[0])->name, why);
    {
        xfer_learn_t l;
        xfer_learn_init(&l, cand, n, 1);
        for (k = 0; k < 20; k++) {
            UCHECK(!xfer_learn_due(&l) && xfer_learn_choose(&l) == 0,
                   "a single candidate explores");
            xfer_learn_record(&l, 0, 1e-5);
        }
    }
    s = unit_uniform_shape(4, 4, 1 << 20, 0);

    /* a tuning file that measured relay best for half duplex 4 x 4, 1 MiB */
    snprintf(path, sizeof(path), "%s/test_learn.tuning", dir);
    f = fopen(path, "w");
    UCHECK(f != NULL, "cannot write %s", path);
    fprintf(f, "alpha 2e-6\nbeta 1e-10\nbest a-to-b 4 4 1 uniform 1048576 relay 0.5\n");
    fclose(f);
    UCHECK(xfer_tuning_load(path, &tu) == XFER_SUCCESS, "cannot load %s", path);
    m.tuning = tu;
    n = xfer_select_candidates(&s, &m, NULL, cand, why, sizeof(why), &measured);
    UCHECK(measured && n >= 2 && !strcmp(xfer_algo_at(cand[0])->name, "relay") &&
               !strcmp(xfer_algo_at(cand[1])->name, "fc_half"),
           "seeded: %d candidates, %s first", n, xfer_algo_at(cand[0])->name);
    xfer_tuning_free(&tu);
    remove(path);
}

/* A probe runs the model's first choice alone, agrees once, and the candidates ranked again
 * (the probed one among them or not, anywhere) follow it: the probe counts as the round's first
 * call, so the fastest runs from call MAX + 1 on as without a probe; a measurement missing on
 * one rank probes again. */
static void probed(unsigned long long seed)
{
    world_t w;
    const int ids[XFER_LEARN_MAX + 1] = {10, 20, 30, 40, 50};
    double base[XFER_LEARN_MAX];
    int n, k, r, best = 0, last = -1, lose = uniform01() < 0.3;
    long i;

    memset(base, 0, sizeof(base));
    world_init(&w, 1, base, 0.02, 0);
    memcpy(w.given, ids, sizeof(ids)); /* a random order of 10 (the probe's) .. 50 */
    for (k = XFER_LEARN_MAX; k > 0; k--) {
        const int j = (int) (uniform01() * (k + 1)), t = w.given[k];
        w.given[k] = w.given[j];
        w.given[j] = t;
    }
    w.ngiven = 1 + (int) (uniform01() * XFER_LEARN_MAX); /* the first 1 .. MAX of it */
    for (r = 0; r < NR; r++)
        xfer_learn_probe(&w.l[r], 10);
    n = 1; /* begin keeps 10, then the others given, MAX in all */
    for (k = 0; k < w.ngiven; k++)
        n += w.given[k] != 10 && n < XFER_LEARN_MAX;
    for (k = 0; k < XFER_LEARN_MAX; k++) {
        base[k] = 0.5 + uniform01();
        if (k < n && base[k] < base[best])
            best = k;
    }
    for (k = 0; k < n; k++)
        if (k != best && base[k] < base[best] * 1.1)
            base[k] = base[best] * 1.1;
    memcpy(w.base, base, sizeof(base));
    if (lose)
        w.missing_rank = (int) (uniform01() * NR);
    for (i = 0; i < 40; i++) {
        last = call(&w, seed, i);
        if (i == 0 || (lose && i == 1))
            UCHECK(last == 0 && w.l[0].ncand == 1,
                   "seed %llu: call %ld runs %d among %d while probing", seed, i, last,
                   w.l[0].ncand);
        if (i >= n + 1 + lose && n > 1)
            UCHECK(last == best, "seed %llu (probe%s): call %ld runs %d, the fastest is %d", seed,
                   lose ? ", one lost" : "", i, last, best);
    }
    UCHECK(w.l[0].ncand == n, "seed %llu: %d candidates after the probe, expected %d", seed,
           w.l[0].ncand, n);
    UCHECK(n == 1 ? w.l[0].state == XFER_LEARN_FIXED
                  : w.l[0].state == XFER_LEARN_SETTLED && w.l[0].rounds == 1,
           "seed %llu: state %d after %d rounds (%d candidates)", seed, w.l[0].state, w.l[0].rounds,
           n);
}

static void fixed(void)
{
    xfer_learn_t l;
    int one = 5, k;
    xfer_learn_init(&l, &one, 1, 1);
    for (k = 0; k < 50; k++) {
        UCHECK(!xfer_learn_due(&l), "one candidate asks for an agreement");
        UCHECK(xfer_learn_choose(&l) == 0, "one candidate explores");
        xfer_learn_record(&l, 0, 1.0);
    }
    {
        int two[2] = {1, 2};
        xfer_learn_init(&l, two, 2, 0); /* learning off */
        for (k = 0; k < 50; k++)
            UCHECK(!xfer_learn_due(&l) && xfer_learn_choose(&l) == 0, "learning off explores");
    }
}

int main(int argc, char **argv)
{
    unsigned long long seed0 = 1, s;
    int runs = 200, i;
    const char *dir = ".";
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed0 = strtoull(argv[++i], NULL, 10);
            runs = 1;
        } else {
            dir = argv[i];
        }
    }
    for (s = seed0; s < seed0 + (unsigned long long) runs; s++) {
        rng = s;
        settles(s, 0);
        settles(s, 1);
        drift(s, 0);
        drift(s, 1);
        bimodal(s, 0);
        bimodal(s, 1);
        missing(s);
        probed(s);
    }
    fixed();
    candidates(dir);
    printf("test_learn: %d seeds from %llu\n", runs, seed0);
    return unit_finish("test_learn", (long) runs);
}
