/* SPDX-License-Identifier: BSD-3-Clause */
/* What libxfer knows about one inter-group allgather(v) algorithm, kept in one place: each
 * allgatherv_inter_<name>.c ends with its descriptor (name, summary, restrictions, builder,
 * cost model, flags) and the registry (select/registry.c) is the list of them. Everything
 * else -- the automatic choice, the workflow file's checks and reference, the runtime,
 * xfer-info -- reads the descriptors, never a list of names. */
#ifndef XFER_ALGO_H
#define XFER_ALGO_H

#include <stddef.h>

#include <xfer/coll.h> /* the XFER_ALGO_* flags */

#include "../sched/sched.h"

typedef struct xfer_algo {
    const char *name;         /* YAML `algorithm:`, XFER_ALGORITHM */
    const char *summary;      /* one line, for xfer-info */
    const char *restrictions; /* shapes it refuses, "none" if any */
    xfer_builder_fn build;    /* NULL for native */
    xfer_builder_fn model;    /* what the simulator runs: build, or a model of native */
    unsigned flags;           /* xfer_algo_flag_t bits */
    /* NULL when any shape is fine; otherwise 0 (and *why) for a shape it refuses. A
     * XFER_ALGO_HALF_ONLY algorithm need not check the duplex mode: the registry does. */
    int (*supports)(const xfer_shape_t *shape, const char **why);
    /* predicted time (s) under latency a (s) and time per byte b (s/B), one link per rank */
    double (*cost)(const xfer_shape_t *shape, double a, double b);
    /* bytes received over all ranks (what ranks sharing a node's memory system pay for) */
    double (*volume)(const xfer_shape_t *shape);
} xfer_algo_t;

/* The descriptors, one per algorithm file. */
extern const xfer_algo_t xfer_algo_native;
extern const xfer_algo_t xfer_algo_root_gather;
extern const xfer_algo_t xfer_algo_fc_half;
extern const xfer_algo_t xfer_algo_fc_full;
extern const xfer_algo_t xfer_algo_fc_full_v;
extern const xfer_algo_t xfer_algo_ring_half;
extern const xfer_algo_t xfer_algo_ring_full;
extern const xfer_algo_t xfer_algo_ring;
extern const xfer_algo_t xfer_algo_fc_direct;
extern const xfer_algo_t xfer_algo_relay;
extern const xfer_algo_t xfer_algo_relay_full;

/* ---- cost-model terms several descriptors share (cost.c unless noted) -------------------- */

/* ceil(log2 n), 0 for n <= 1. */
double xfer_cost_lg(int n);

/* The largest block group g contributes. */
size_t xfer_cost_max_count(const xfer_shape_t *s, int g);

/* Scatter-allgather broadcast, binomial gather and allgather of @p bytes over @p n ranks. */
double xfer_cost_bcast(int n, size_t bytes, double a, double b);
double xfer_cost_gather(int n, size_t bytes, double a, double b);
double xfer_cost_allgather(int n, size_t bytes, double a, double b);

/* The segmentation exchange of Kang et al. 2019, Alg. 2 (allgatherv_inter_fc_full_v.c). */
double xfer_cost_segmented(const xfer_shape_t *s, double a, double b);

/* The minimum volume: every rank receives the whole of the other group's data. */
double xfer_volume_optimal(const xfer_shape_t *s);

/* Gather at the roots, root exchange, broadcast (allgatherv_inter_root_gather.c). */
double xfer_volume_root_gather(const xfer_shape_t *s);

#endif /* XFER_ALGO_H */
