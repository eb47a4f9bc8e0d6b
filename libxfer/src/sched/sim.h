/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Symbolic execution of a whole algorithm: the schedules of every rank of a shape are built
 * and run together, moving real bytes between per-rank buffers. Point-to-point transfers use
 * rendezvous semantics (a send completes only when its receive is posted), the strictest
 * matching, so a schedule that completes here cannot deadlock under MPI whatever its eager
 * limit. Sends and receives between a pair match in posting order (MPI's non-overtaking
 * rule); collectives match per group in call order and must agree on counts and root.
 * Afterwards every rank's result must equal the other group's blocks in rank order.
 */
#ifndef XFER_SIM_H
#define XFER_SIM_H

#include "sched.h"

typedef struct xfer_sim_stats {
    int max_rounds;    /* most rounds any rank runs */
    long messages;     /* point-to-point messages */
    size_t max_sent;   /* most point-to-point bytes one rank sends */
    size_t max_recv;   /* most point-to-point bytes one rank receives */
    size_t total_sent; /* point-to-point bytes over all ranks */
    size_t max_tmp;    /* largest scratch buffer */
    int collectives;   /* local collective calls (per group instance) */
} xfer_sim_stats_t;

/* Build and run @p build for every rank of @p shape. XFER_ERR_DEADLOCK or XFER_ERR_VERIFY
 * (message in xfer_last_error) when the schedules are wrong. @p stats may be NULL. */
xfer_status_t xfer_sim_run(const xfer_shape_t *shape, xfer_builder_fn build,
                           xfer_sim_stats_t *stats);

/* The byte rank @p r of group @p g contributes at offset @p i (tests use it too). */
static inline unsigned char xfer_sim_pattern(int g, int r, size_t i)
{
    return (unsigned char) (1 + g * 131 + r * 31 + i * 7 + (i >> 8) * 13);
}

#endif /* XFER_SIM_H */
