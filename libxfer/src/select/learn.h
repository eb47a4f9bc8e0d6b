/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auto's online learning, without MPI: the state of one call signature (the same communicator,
 * group sizes, direction and size class, repeated), its candidates in the model's order, this
 * rank's measurements and the decisions taken from measurements that every rank agreed on.
 *
 * A round of exploration runs each candidate once in the model's order, then the model's first
 * choice again (its first run paid for connections and caches), then asks for an agreement: every
 * rank packs its fastest time per candidate, the caller reduces the vectors with MPI_MAX over both
 * groups (a call is as slow as its slowest rank) and applies the result. The decision depends
 * only on the reduced vector and the call count, so it is the same on every rank. A candidate a
 * rank has not measured (a nonblocking call still in flight) packs XFER_LEARN_MISSING and the
 * round is run again. Settled, the choice is watched: after XFER_LEARN_CONFIRM calls, then every
 * XFER_LEARN_WATCH calls, the ranks agree on its median time over those calls (the slowest
 * rank's). The median replaces the choice's estimate from exploration (its fastest call): when
 * another candidate's estimate is lower by the switch factor, that one is chosen and confirmed
 * the same way (an algorithm whose calls vary, fast only sometimes, is not kept for one lucky
 * call). The first median of a choice that stays sets its reference, and a later one grown
 * past it by the drift factor opens a new round. Medians against a median: a few slow calls on
 * a busy machine re-open nothing.
 *
 * The caller agrees either at once (blocking, at the call's creation: xfer_learn_due, pack,
 * reduce, apply, then choose) or one call late (persistent plans: the reduction is posted at the
 * start of the call that found it due and applied at the next start); the call that asked runs
 * the settled choice, or the model's first while exploring.
 */
#ifndef XFER_LEARN_H
#define XFER_LEARN_H

#include <float.h>

/* candidates: exploration costs at most MAX + 1 calls, so auto settles by its 6th call. Four:
 * where the model cannot tell five or six algorithms apart (half duplex, p = q: fc_half, fc_full,
 * fc_direct, relay, relay_full within 4 %), three left relay out, the fastest at 16 hosts. */
enum { XFER_LEARN_MAX = 4 };
enum { XFER_LEARN_WATCH = 8 };     /* settled: calls between agreements on the choice's time */
enum { XFER_LEARN_CONFIRM = 3 };   /* a new choice's first agreement, after this many calls */
#define XFER_LEARN_SWITCH  1.05    /* another candidate this much faster than the choice's median */
#define XFER_LEARN_DRIFT   1.3     /* settled: a median this many times the reference re-opens */
#define XFER_LEARN_MISSING DBL_MAX /* a time this rank has not measured (MPI_MAX keeps it) */

/* PROBE: the model's first choice runs alone once and its agreed time goes back to the caller
 * (PROBED), who ranks the candidates again with a model that knows this network's bandwidth
 * (selector.c) and hands them to xfer_learn_begin: the probe counts as the round's first call. */
enum {
    XFER_LEARN_FIXED = 0,
    XFER_LEARN_EXPLORE = 1,
    XFER_LEARN_SETTLED = 2,
    XFER_LEARN_PROBE = 3,
    XFER_LEARN_PROBED = 4
};

typedef struct xfer_learn {
    int ncand;
    int cand[XFER_LEARN_MAX];    /* the caller's identifiers, model's first choice first */
    int state;                   /* XFER_LEARN_* */
    long calls;                  /* calls chosen so far */
    long round;                  /* the call that began the current round (or watch window) */
    int asked;                   /* an agreement was packed and is not applied yet */
    int pick;                    /* settled: the candidate (index into cand) */
    double settled;              /* settled: the agreed median of its first watch (0: none yet) */
    int window;                  /* settled: calls until the next agreement */
    double est[XFER_LEARN_MAX];  /* agreed: each candidate's time (fastest call, or a median) */
    double best[XFER_LEARN_MAX]; /* this rank's fastest time per candidate in this round */
    double watch[XFER_LEARN_WATCH]; /* settled: the choice's times in the current window */
    int watch_n;
    int rounds;   /* exploration rounds completed (for the trace and tests) */
    int switches; /* choices given up after their median (trace and tests) */
} xfer_learn_t;

/* A fresh state for @p n candidates @p cand (n >= 1; more than XFER_LEARN_MAX are cut). One
 * candidate, or @p learn 0, never explores. */
void xfer_learn_init(xfer_learn_t *l, const int *cand, int n, int learn);

/* A state that runs @p first alone and asks for one agreement on its time (PROBE). */
void xfer_learn_probe(xfer_learn_t *l, int first);

/* PROBED: explore @p n candidates @p cand (the probed one first whether or not among them: its
 * time is known; at most XFER_LEARN_MAX in all). The probe was the round's first call, so the
 * round ends, as any, after every candidate and the first one again. */
void xfer_learn_begin(xfer_learn_t *l, const int *cand, int n);

/* Is an agreement due before this call's choice? */
int xfer_learn_due(const xfer_learn_t *l);

/* This rank's vector for the agreement into @p v (xfer_learn_len entries); marks it asked. */
void xfer_learn_pack(xfer_learn_t *l, double *v);
int xfer_learn_len(const xfer_learn_t *l);

/* The vector reduced with MPI_MAX over every rank of both groups. */
void xfer_learn_apply(xfer_learn_t *l, const double *agreed);

/* The candidate (index into cand) this call runs; counts the call. */
int xfer_learn_choose(xfer_learn_t *l);

/* This rank's time of a call that ran candidate @p k, in seconds (scaled by the caller to the
 * signature's reference size). */
void xfer_learn_record(xfer_learn_t *l, int k, double seconds);

#endif /* XFER_LEARN_H */
