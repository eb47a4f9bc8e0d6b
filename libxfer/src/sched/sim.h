/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The schedule simulator: builds the schedule of every rank of a shape and executes them all
 * symbolically. Every buffer is a map of labels ("bytes [a, b) here hold group g's global bytes
 * [o, o + b - a)"), so it checks, without moving data:
 *   - message availability: a rank only sends or copies bytes it holds;
 *   - completeness and order: every rank ends holding the other group's bytes, each at its
 *     global offset in RECV (i.e. in rank order);
 *   - single port: a round starts at most max_ports sends and max_ports receives at once
 *     (operations of one chain count once: they run one after the other);
 *   - ring links: schedules marked ring_only talk to merged-rank neighbours only;
 *   - races: no round writes a buffer range another of its operations reads or writes;
 *   - deadlock: point-to-point operations match with rendezvous semantics (a send completes
 *     only when its receive is posted, the strictest case), in posting order per pair (MPI's
 *     non-overtaking rule); collectives match per group in call order and must agree on
 *     counts and root.
 * It also times the run under the alpha-beta model: a transfer of n bytes takes a + n b once
 * both ends have posted it and both ports are free; local collectives are costed by formula.
 * The first violation is reported (round, ranks, block) through xfer_last_error().
 */
#ifndef XFER_SIM_H
#define XFER_SIM_H

#include "sched.h"

typedef struct xfer_sim_opts {
    double alpha, beta; /* s and s/B for the predicted time */
    int check_ports;    /* enforce max_ports (default 1) */
    double
        jitter;         /* > 0: local operations (copies, flag publications) take a random time
                           up to jitter x the rank's slowness (1 .. 128, about log-uniform), and ranks
                           start up to      4 jitter apart: other interleavings, to expose missing waits */
    unsigned long seed; /* the jitter's generator */
} xfer_sim_opts_t;

typedef struct xfer_sim_stats {
    int steps;         /* most rounds of any rank, empty generated rounds included */
    int max_rounds;    /* most rounds in which a rank has something to do */
    long messages;     /* point-to-point messages */
    size_t max_sent;   /* most point-to-point bytes one rank sends */
    size_t max_recv;   /* most point-to-point bytes one rank receives */
    size_t total_sent; /* point-to-point bytes over all ranks */
    size_t max_tmp;    /* largest scratch buffer */
    int collectives;   /* local collective calls (per group instance) */
    double predicted;  /* alpha-beta time of the slowest rank */
    double bound;      /* a + max(p k_A, q k_B) b: no algorithm can be faster */
} xfer_sim_stats_t;

void xfer_sim_opts_default(xfer_sim_opts_t *opts);

/* No algorithm beats alpha + max(total A, total B) beta: each rank of B takes in A's bytes,
 * each rank of A B's (0 when nothing moves). */
double xfer_sim_bound(const xfer_shape_t *shape, double alpha, double beta);

/* Build and run @p build for every rank of @p shape. XFER_ERR_VERIFY or XFER_ERR_DEADLOCK
 * (message in xfer_last_error) when a property fails. @p opts and @p stats may be NULL. */
xfer_status_t xfer_sim_run(const xfer_shape_t *shape, xfer_builder_fn build,
                           const xfer_sim_opts_t *opts, xfer_sim_stats_t *stats);

/*
 * A world of flat schedules (xfer_sched_create_flat: the isomorphic collectives): n processes,
 * offsets and lengths in blocks. Process r's SEND buffer starts out holding the global blocks
 * [r * send, (r + 1) * send) (send = its schedule's send_bytes); at the end RECV block u of
 * process r must hold global block *want when expect() returns 1, and nothing when it returns 0
 * (a neighbour beyond a non-periodic edge: the caller's block stays untouched). Combined
 * messages (pieces) move their pieces in order. The same checks and costing as xfer_sim_run
 * (beta is per block).
 */
typedef struct xfer_sim_flat {
    int n;
    void *ctx;
    xfer_status_t (*build)(void *ctx, int rank, xfer_sched_t **out);
    int (*expect)(void *ctx, int rank, size_t block, size_t *want);
} xfer_sim_flat_t;

xfer_status_t xfer_sim_run_flat(const xfer_sim_flat_t *world, const xfer_sim_opts_t *opts,
                                xfer_sim_stats_t *stats);

/*
 * Hierarchical schedules (node staging, coll/hier.c) on virtual nodes: the ranks of both groups
 * laid out on nodes (node_of, slot_of per rank; node m's ranks members[node_first[m] ..] in slot
 * order), each node with a shared window (NODE_S, NODE_R and the control flags of both
 * parities), STRIPE communicators joining the slot-l ranks of every node (stripe rank = node,
 * group 0 low) and node barriers. @p calls consecutive calls run the same schedules, the
 * window's epoch and parity advancing per call as the executor advances them; the data of call
 * c carries labels of its own, so a rank that reads a stale or torn window is caught. Tasks
 * (hier:direct, hier:native) are refused.
 */
typedef struct xfer_sim_layout {
    int nnodes[2];
    const int *node_of[2], *slot_of[2], *node_first[2], *members[2];
} xfer_sim_layout_t;

typedef struct xfer_sim_hier {
    xfer_sim_layout_t nodes;
    int calls;
    void *ctx;
    xfer_status_t (*build)(void *ctx, int g, int r, xfer_sched_t **out);
} xfer_sim_hier_t;

xfer_status_t xfer_sim_run_hier(const xfer_shape_t *shape, const xfer_sim_hier_t *h,
                                const xfer_sim_opts_t *opts, xfer_sim_stats_t *stats);

#endif /* XFER_SIM_H */
