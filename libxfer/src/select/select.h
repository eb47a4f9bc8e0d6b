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
    XFER_ALGO_AUTO_FULL = 1u << 2  /* candidate for auto when both groups send */
};

typedef struct xfer_algo {
    const char *name;
    const char *summary;
    const char *restrictions;
    xfer_builder_fn build; /* NULL for native */
    unsigned flags;
    /* NULL when any shape is fine; otherwise 0 (and *why) for a shape it refuses */
    int (*supports)(const xfer_shape_t *shape, const char **why);
    /* predicted time (s) under latency a (s) and time per byte b (s/B) */
    double (*cost)(const xfer_shape_t *shape, double a, double b);
} xfer_algo_t;

int xfer_algo_count(void);
const xfer_algo_t *xfer_algo_at(int index);
const xfer_algo_t *xfer_algo_find(const char *name);
int xfer_algo_index(const xfer_algo_t *algo);
int xfer_algo_supports(const xfer_algo_t *algo, const xfer_shape_t *shape, const char **why);

/* The automatic choice for @p shape: the cheapest auto candidate by the alpha-beta model
 * (XFER_ALPHA, XFER_BETA). @p why receives a one-line account of the choice. */
const xfer_algo_t *xfer_select_auto(const xfer_shape_t *shape, char *why, size_t whylen);

/* Latency and time per byte the cost model uses. */
void xfer_model_params(double *alpha, double *beta);

#endif /* XFER_SELECT_H */
