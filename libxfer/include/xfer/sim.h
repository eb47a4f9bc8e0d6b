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

#include <xfer/coll.h>
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
 * The schedule rank @p rank of group @p group (0 = A, 1 = B) runs for @p algorithm on the
 * shape (@p a, @p b), for printing with xfer_sched_dump(). Caller owns *@p sched and frees it
 * with xfer_sched_free().
 */
XFER_PUBLIC xfer_status_t xfer_sched_build(const char *algorithm, const xfer_side_t *a,
                                           const xfer_side_t *b, int group, int rank,
                                           xfer_sched_t **sched);

/** Free a schedule from xfer_sched_build() (NULL accepted) and set it to NULL. */
XFER_PUBLIC xfer_status_t xfer_sched_free(xfer_sched_t **sched);

#ifdef __cplusplus
}
#endif

#endif /* XFER_SIM_H_PUBLIC */
