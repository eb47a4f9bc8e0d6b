/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file sim.h
 * @brief Build and simulate schedules without MPI (the engine behind `xfer-sched`).
 *
 * A shape is p ranks in group A and q in group B; each rank contributes a number of bytes,
 * given either per rank (an array) or as one value for the whole group. Simulation runs the
 * schedule of every rank symbolically and checks message availability, completeness in rank
 * order, the single-port constraint, ring-neighbour links for ring algorithms, races and
 * deadlock; it reports rounds, traffic and the alpha-beta time next to the lower bound.
 */
#ifndef XFER_SIM_H_PUBLIC
#define XFER_SIM_H_PUBLIC

#include <stddef.h>
#include <stdint.h>

#include <xfer/coll.h>
#include <xfer/config.h>
#include <xfer/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One side of a shape: @p n ranks, each sending counts[i] bytes, or @p k each if counts is
 *  NULL. */
typedef struct xfer_side {
    int n;
    const size_t *counts;
    size_t k;
} xfer_side_t;

typedef struct xfer_sim_params {
    double alpha;    /**< latency, s (default 2e-6) */
    double beta;     /**< time per byte, s/B (default 1e-10, i.e. 10 GB/s) */
    int check_ports; /**< enforce the single-port constraint (default 1) */
    int network;     /**< the groups' ranks on different nodes: relay pipelines cut their
                          segments as across a network, as plans do then (default 0) */
} xfer_sim_params_t;

typedef struct xfer_sim_report {
    int steps;         /**< rounds of the longest schedule (ring steps included when idle) */
    int rounds;        /**< most rounds in which one rank does something */
    long messages;     /**< point-to-point messages */
    size_t max_sent;   /**< most point-to-point bytes sent by one rank */
    size_t max_recv;   /**< most point-to-point bytes received by one rank */
    size_t total_sent; /**< point-to-point bytes over all ranks */
    size_t max_tmp;    /**< largest scratch buffer of a rank */
    int collectives;   /**< local collective calls */
    double predicted;  /**< alpha-beta time of the slowest rank, s */
    double bound;      /**< alpha + max(p k_A, q k_B) beta, s: no algorithm beats it */
} xfer_sim_report_t;

/** Defaults for @p params. */
XFER_PUBLIC xfer_status_t xfer_sim_params_init(xfer_sim_params_t *params);

/**
 * Simulate @p algorithm (a registry name; `native` runs a model of MPICH's algorithm) on the
 * shape (@p a, @p b). Returns XFER_ERR_VERIFY or XFER_ERR_DEADLOCK when a property fails,
 * with the first violation (round, ranks, block) in xfer_last_error(). @p params may be NULL.
 */
XFER_PUBLIC xfer_status_t xfer_simulate(const char *algorithm, const xfer_side_t *a,
                                        const xfer_side_t *b, const xfer_sim_params_t *params,
                                        xfer_sim_report_t *report);

/**
 * The cost model's time for @p algorithm on the shape (@p a, @p b), in *@p seconds: the closed
 * form `auto` ranks its candidates by (docs/algorithms.md), at @p params' alpha and beta, one
 * rank per node; and, if @p bound is not NULL, the bound xfer_simulate() reports beside it. No
 * schedule is built, so a shape of any size answers at once (xfer_simulate() runs the
 * schedules, and is bounded by their messages). Fails as xfer_simulate() does for an unknown
 * algorithm or one that cannot run the shape. @p params may be NULL.
 */
XFER_PUBLIC xfer_status_t xfer_sim_model(const char *algorithm, const xfer_side_t *a,
                                         const xfer_side_t *b, const xfer_sim_params_t *params,
                                         double *seconds, double *bound);

/**
 * The schedule rank @p rank of group @p group (0 = A, 1 = B) runs for @p algorithm on the
 * shape (@p a, @p b), for printing with xfer_sched_dump(). Caller owns *@p sched and frees it
 * with xfer_sched_free().
 */
XFER_PUBLIC xfer_status_t xfer_sched_build(const char *algorithm, const xfer_side_t *a,
                                           const xfer_side_t *b, int group, int rank,
                                           xfer_sched_t **sched);

/**
 * Virtual nodes for the hierarchical schedules (`hier:INNER`): both groups laid out as
 * XFER_NODE_SIZE / XFER_NODE_MAP lay them out, staged through each node's shared window as
 * XFER_HIER_SENDERS / XFER_HIER_SYNC say, and @p calls consecutive calls simulated (the window's
 * two parities and its flags carry over from call to call, as in a run).
 */
typedef struct xfer_sim_nodes {
    int node_size[2]; /**< ranks per node, group A and group B (>= 1) */
    int roundrobin;   /**< place rank r on node r mod (nodes) instead of r / node_size */
    int senders;      /**< stripes per node (1 .. the smallest node) */
    int barrier;      /**< node barriers instead of the flag protocol */
    int calls;        /**< consecutive calls (>= 1; 3 exercises both parities and reuse) */
    int jitter_runs;  /**< runs besides the plain one in which copies and flag publications take
                           random times and ranks run at random speeds (other interleavings,
                           to expose a missing wait); the report is the plain run's */
} xfer_sim_nodes_t;

/** Defaults for @p nodes: nodes of 2 ranks, block placement, 1 sender, flags, 3 calls, 16
 *  jittered runs. */
XFER_PUBLIC xfer_status_t xfer_sim_nodes_init(xfer_sim_nodes_t *nodes);

/**
 * Simulate `hier:` @p inner (a registry algorithm that builds a schedule: not `native`, not
 * `direct`, whose exchanges are tasks) on the shape (@p a, @p b) over the virtual nodes
 * @p nodes: every rank's schedule, node windows, flags, stripes and node barriers; besides the
 * checks of xfer_simulate(), a flag lowered by an unordered writer and data left over from an
 * earlier call are violations. @p params may be NULL.
 */
XFER_PUBLIC xfer_status_t xfer_simulate_hier(const char *inner, const xfer_side_t *a,
                                             const xfer_side_t *b, const xfer_sim_nodes_t *nodes,
                                             const xfer_sim_params_t *params,
                                             xfer_sim_report_t *report);

/** The schedule rank @p rank of group @p group runs for `hier:` @p inner on @p nodes. */
XFER_PUBLIC xfer_status_t xfer_sched_build_hier(const char *inner, const xfer_side_t *a,
                                                const xfer_side_t *b, const xfer_sim_nodes_t *nodes,
                                                int group, int rank, xfer_sched_t **sched);

/**
 * Receiving rank @p r of @p nrecv's box of one step of a joined dataset (docs/runtime.md, "Joined
 * datasets") of @p ndims dimensions and step shape @p dims (dims[0]: the step's rows, every
 * sending rank's together), into @p start and @p count, computed by the stream transport's own
 * rule code (the rule the set-up records carry, and the box each rank derives from it for the
 * step): the dataset's selection @p mode over the step's shape, or, when @p mode is
 * XFER_SELECT_USER, the box (@p ustart, @p ucount) the rank declared with xfer_select, clipped to
 * the step (possibly nothing; start 0 and count UINT64_MAX in dimension 0 take every row, as
 * xfer_select(ch, name, NULL, NULL) declares). No MPI; for checking schedules (`xfer-sched
 * joined`).
 */
XFER_PUBLIC xfer_status_t xfer_sim_joined_box(int ndims, const uint64_t dims[],
                                              xfer_selection_mode_t mode, const uint64_t ustart[],
                                              const uint64_t ucount[], int nrecv, int r,
                                              uint64_t start[], uint64_t count[]);

/** Free a schedule from xfer_sched_build() or xfer_sched_build_hier() (NULL accepted) and set it to
 * NULL. */
XFER_PUBLIC xfer_status_t xfer_sched_free(xfer_sched_t **sched);

#ifdef __cplusplus
}
#endif

#endif /* XFER_SIM_H_PUBLIC */
