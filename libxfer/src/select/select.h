/* SPDX-License-Identifier: BSD-3-Clause */
/* The algorithm registry and the selector. Selection depends only on the call's shape (the
 * same on every rank of both groups) and on options that both groups must share, so every
 * rank picks the same algorithm without communicating. */
#ifndef XFER_SELECT_H
#define XFER_SELECT_H

#include <stddef.h>

#include "../sched/sched.h"

enum {
    XFER_ALGO_NATIVE = 1u << 0,    /* the MPI library's own collective; no schedule */
    XFER_ALGO_AUTO_HALF = 1u << 1, /* candidate for auto when one group sends nothing */
    XFER_ALGO_AUTO_FULL = 1u << 2, /* candidate for auto when both groups send */
    XFER_ALGO_RING = 1u << 3       /* talks to ring neighbours only: auto's choice on rings */
};

typedef struct xfer_algo {
    const char *name;
    const char *summary;
    const char *restrictions;
    xfer_builder_fn build; /* NULL for native */
    xfer_builder_fn model; /* what the simulator runs: build, or a model of native */
    unsigned flags;
    /* NULL when any shape is fine; otherwise 0 (and *why) for a shape it refuses */
    int (*supports)(const xfer_shape_t *shape, const char **why);
    /* predicted time (s) under latency a (s) and time per byte b (s/B), one link per rank */
    double (*cost)(const xfer_shape_t *shape, double a, double b);
    /* bytes received over all ranks (what ranks sharing a node's memory system pay for) */
    double (*volume)(const xfer_shape_t *shape);
} xfer_algo_t;

/* Model parameters: alpha-beta per link, plus gamma (s/B) for traffic that ranks on one node
 * share (memory copies); nnodes and max_ppn come from the topology. */
typedef struct xfer_model {
    double alpha, beta, gamma;
    int nnodes, max_ppn;
    int ring; /* the topology is a ring (XFER_TOPOLOGY=ring): only ring algorithms qualify */
} xfer_model_t;

int xfer_algo_count(void);
const xfer_algo_t *xfer_algo_at(int index);
const xfer_algo_t *xfer_algo_find(const char *name);
int xfer_algo_index(const xfer_algo_t *algo);
int xfer_algo_supports(const xfer_algo_t *algo, const xfer_shape_t *shape, const char **why);

/* Predicted time of @p algo: alpha-beta cost, plus gamma times the share of the received
 * volume that lands on the busiest node when ranks share nodes. */
double xfer_algo_predict(const xfer_algo_t *algo, const xfer_shape_t *shape, const xfer_model_t *m);

/* The automatic choice for @p shape: the cheapest auto candidate under @p m. @p why receives a
 * one-line account of the choice. */
const xfer_algo_t *xfer_select_auto(const xfer_shape_t *shape, const xfer_model_t *m, char *why,
                                    size_t whylen);

/* Model parameters from the environment (XFER_ALPHA, XFER_BETA, XFER_GAMMA, XFER_TOPOLOGY)
 * and the node count. */
void xfer_model_init(xfer_model_t *m, int nnodes, int max_ppn);

#endif /* XFER_SELECT_H */
