/* SPDX-License-Identifier: BSD-3-Clause */
/* The algorithm registry and the selector. Selection depends only on the call's shape (the
 * same on every rank of both groups) and on options that both groups must share, so every
 * rank picks the same algorithm without communicating. */
#ifndef XFER_SELECT_H
#define XFER_SELECT_H

#include <stddef.h>

#include "../algos/algo.h"
#include "../sched/sched.h"
#include "tuning.h"

/* Model parameters: alpha-beta per link, plus gamma (s/B) for traffic that ranks on one node
 * share (memory copies); nnodes and max_ppn come from the topology. */
typedef struct xfer_model {
    double alpha, beta, gamma;
    int beta_measured; /* beta was measured (XFER_BETA, the tuning file, a probe), not a default */
    int nnodes, max_ppn;
    int ring; /* the topology is a ring (XFER_TOPOLOGY=ring): only ring algorithms qualify */
    unsigned exclude; /* algorithms with any of these flags are no candidates (0 after init) */
    const xfer_tuning_t *tuning; /* measured best algorithms (XFER_TUNING), or NULL */
} xfer_model_t;

int xfer_algo_count(void);
const xfer_algo_t *xfer_algo_at(int index);
const xfer_algo_t *xfer_algo_find(const char *name);
int xfer_algo_index(const xfer_algo_t *algo);
/* Can @p algo run @p shape? 0 (and *why) if not: a XFER_ALGO_HALF_ONLY algorithm refuses a
 * call in which both groups send, and the descriptor's own supports() may refuse more. */
int xfer_algo_supports(const xfer_algo_t *algo, const xfer_shape_t *shape, const char **why);

/* The algorithm an `auto` channel runs when the workflow's topology is a ring: the runtime
 * fixes it when the channel opens, before any shape is known, as the first ring-capable
 * (XFER_ALGO_RING) auto candidate for the duplex mode in registry order. */
const xfer_algo_t *xfer_select_ring_default(int full_duplex);

/* Predicted time of @p algo: alpha-beta cost, plus gamma times the share of the received
 * volume that lands on the busiest node when ranks share nodes. */
double xfer_algo_predict(const xfer_algo_t *algo, const xfer_shape_t *shape, const xfer_model_t *m);

/* The automatic choice for @p shape: the measured best (m->tuning) when an entry matches the
 * call and that algorithm can run it (*@p measured = 1; @p measured may be NULL), else the
 * cheapest auto candidate under @p m. @p why receives a one-line account of the choice. */
/* The XFER_TUNING entry measured for a call of @p shape (any algorithm name, "hier:..."
 * included), or NULL. */
const xfer_tuning_best_t *xfer_select_measured(const xfer_shape_t *shape, const xfer_model_t *m);

const xfer_algo_t *xfer_select_auto(const xfer_shape_t *shape, const xfer_model_t *m, char *why,
                                    size_t whylen, int *measured);

#endif /* XFER_SELECT_H */
