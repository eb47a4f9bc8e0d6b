/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The selector: the one owner of how an algorithm is chosen. It reads the environment
 * (XFER_ALGORITHM, XFER_FALLBACK, XFER_TUNING, XFER_ALPHA/BETA/GAMMA, XFER_TOPOLOGY, XFER_LEARN),
 * loads the tuning file, holds the cost model, and learns from the calls it has timed. Callers
 * pass options (a name they were given, or none for auto) and report each call's time; they never
 * read those variables themselves.
 *
 * One selector per intercommunicator, kept with its topology. Creating it is collective over both
 * groups (the first plan's creation): the groups compare their environments and tuning files, so
 * that every rank would choose alike, and the selector duplicates the merged communicator for its
 * agreements.
 *
 * Without a measured beta (XFER_BETA or the tuning file's), a new signature's first call probes:
 * the model's first choice runs alone, the ranks agree on its time, and the beta it implies ranks
 * the candidates of that signature and of every later one (docs/algorithms.md).
 */
#ifndef XFER_SELECTOR_H
#define XFER_SELECTOR_H

#include <mpi.h>
#include <stddef.h>

#include "../topo/topo.h"
#include "learn.h"
#include "select.h"

typedef struct xfer_selector xfer_selector_t;

/* The algorithm a caller asked for: @p given, else XFER_ALGORITHM (*@p from_env 1), else NULL
 * (auto). "auto" is NULL too. */
const char *xfer_select_named(const char *given, int *from_env);

/* XFER_FALLBACK: *@p warn 1 for "warn"; *@p set whether it is set. XFER_ERR_INVALID_ARG for
 * another value. */
xfer_status_t xfer_select_fallback_env(int *warn, int *set);

/* The algorithm a channel opens with (@p cfg_alg from the workflow file, XFER_ALGORITHM over it):
 * on a ring topology auto becomes the ring algorithm of the duplex mode (the plans do not see the
 * workflow's topology). Into @p out. */
void xfer_select_channel_algorithm(const char *cfg_alg, int ring_topology, int full_duplex,
                                   char *out, size_t len);

/* The selector of @p t, created on first use (collective over both groups then). */
xfer_status_t xfer_selector_get(xfer_topo_t *t, xfer_selector_t **out);

/* The groups were launched with different XFER_ALGORITHM or XFER_FALLBACK. */
int xfer_selector_env_mismatch(const xfer_selector_t *s);

/* The cost model auto uses, or XFER_ERR_MISMATCH when the ranks' tuning files or XFER_ALPHA/
 * BETA/GAMMA differ (they would choose differently). */
xfer_status_t xfer_selector_model(const xfer_selector_t *s, xfer_model_t *m);

/* auto's candidates for @p shape under @p m: the model's first choice, then the algorithms that
 * @p ranked (a model whose beta was measured on this network; NULL: @p m) cannot separate from the
 * best it predicts, cheapest first: within XFER_SELECT_WINDOW of it when beta is a default, within
 * XFER_SELECT_WINDOW_MEASURED when it was measured. The tuning file's measured best comes first
 * when it has one. At most XFER_LEARN_MAX, as registry indices into @p cand. Returns their number
 * (>= 1: root_gather when nothing else can run the call). The same on every rank. @p why gets
 * the account of the model's ranking.
 * Why two windows: the default beta (10 GB/s) is a guess that may be 1000x off (a 50 Mbit/s
 * link), and its latency terms then separate algorithms that the link does not; with a measured
 * beta the closed forms are within about 20 % of each other's measured order (docs/algorithms.md,
 * "How auto learns"), and a wider window only explores algorithms 1.4-1.9x slower. */
#define XFER_SELECT_WINDOW          1.5
#define XFER_SELECT_WINDOW_MEASURED 1.2
int xfer_select_candidates(const xfer_shape_t *shape, const xfer_model_t *m,
                           const xfer_model_t *ranked, int *cand, char *why, size_t whylen,
                           int *measured);

/* xfer_select_candidates with the selector's measured beta when a probe measured one. */
int xfer_selector_candidates(xfer_selector_t *s, const xfer_shape_t *shape, const xfer_model_t *m,
                             int *cand, char *why, size_t whylen, int *measured);

/* The model without the check (callers that passed xfer_selector_model before). Model
 * parameters: XFER_ALPHA, XFER_BETA, XFER_GAMMA when set, else the tuning file's measured values
 * when it has them, else defaults; XFER_TOPOLOGY; the node count. */
const xfer_model_t *xfer_selector_base_model(const xfer_selector_t *s);

/* Does this selector learn (XFER_LEARN, default on)? */
int xfer_selector_learns(const xfer_selector_t *s);

/* ---- one call's choice ---------------------------------------------------------------------- */

/* What auto chose for one call, and where its time goes. */
typedef struct xfer_pick {
    const xfer_algo_t *algo; /* NULL: the model's choice (the caller's) stands */
    xfer_learn_t *learn;     /* the learning state the call reports to, or NULL */
    int slot;                /* algo's index among learn->cand */
    double scale;            /* the call's seconds times this: seconds at the signature's size */
} xfer_pick_t;

/* (The caller has decided that the call learns: xfer_selector_learns, or its options.) */

/* auto's choice for a call that builds its plan now (blocking and nonblocking calls): from the
 * signature's learning state, with an agreement among all ranks first when one is due (then
 * collective over both groups, as the plan's creation is; bounded by @p timeout_ms when > 0:
 * XFER_ERR_TIMEOUT, and the selector agrees on nothing more). When the signature does not
 * learn (one candidate), pick->algo is NULL and the caller keeps the model's choice. @p how gets
 * the account of a learned choice. */
xfer_status_t xfer_selector_pick(xfer_selector_t *s, const xfer_shape_t *shape,
                                 const xfer_model_t *m, int timeout_ms, xfer_pick_t *pick,
                                 char *how, size_t len);

/* A call of @p pick took @p seconds on this rank. */
void xfer_pick_record(const xfer_pick_t *pick, double seconds);

/* The learning state a persistent plan keeps for itself, seeded from the signature's: settled
 * there, the plan starts settled. */
void xfer_selector_seed(xfer_selector_t *s, const xfer_shape_t *shape, const xfer_model_t *m,
                        const int *cand, int n, xfer_learn_t *out);

/* A persistent plan's agreement, one call late: posted (MPI_Iallreduce on the selector's
 * communicator) at the start of the call that found it due, completed with that call. */
typedef struct xfer_learn_carrier {
    MPI_Request req;
    double mine[XFER_LEARN_MAX], agreed[XFER_LEARN_MAX];
    int posted;
} xfer_learn_carrier_t;

xfer_status_t xfer_selector_post(xfer_selector_t *s, xfer_learn_t *l, xfer_learn_carrier_t *c);

/* The carrier's reduction completed: apply it (and trace the decision). */
void xfer_selector_apply(xfer_selector_t *s, xfer_learn_t *l, xfer_learn_carrier_t *c);

/* The trace of a decision (XFER_TRACE=1: each group's rank 0; 2: every rank). */
void xfer_selector_trace(const xfer_selector_t *s, const xfer_learn_t *l, const char *what);

/* The name of the algorithm the calling thread's last completed operation ran. */
void xfer_select_last_set(const char *name);

#endif /* XFER_SELECTOR_H */
