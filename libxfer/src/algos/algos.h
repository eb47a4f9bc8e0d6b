/* SPDX-License-Identifier: BSD-3-Clause */
/* Algorithm builders. Each appends, for the rank named by the schedule, the operations of
 * one inter-group allgather(v) algorithm; none communicates. A builder returns
 * XFER_ERR_NOT_SUPPORTED for a shape it cannot handle (the registry checks support before
 * building, so this is a safety net). */
#ifndef XFER_ALGOS_H
#define XFER_ALGOS_H

#include "../core/core.h"
#include "../sched/sched.h"
#include "algo.h"

xfer_status_t xfer_build_root_gather(const xfer_shape_t *shape, xfer_sched_t *s);
xfer_status_t xfer_build_fc_half(const xfer_shape_t *shape, xfer_sched_t *s);
xfer_status_t xfer_build_fc_full(const xfer_shape_t *shape, xfer_sched_t *s);
xfer_status_t xfer_build_fc_full_v(const xfer_shape_t *shape, xfer_sched_t *s);
xfer_status_t xfer_build_ring_half(const xfer_shape_t *shape, xfer_sched_t *s);
xfer_status_t xfer_build_ring_full(const xfer_shape_t *shape, xfer_sched_t *s);
xfer_status_t xfer_build_ring(const xfer_shape_t *shape, xfer_sched_t *s);
xfer_status_t xfer_build_fc_direct(const xfer_shape_t *shape, xfer_sched_t *s);
xfer_status_t xfer_build_relay(const xfer_shape_t *shape, xfer_sched_t *s);
xfer_status_t xfer_build_relay_full(const xfer_shape_t *shape, xfer_sched_t *s);
/* A schedule modelling MPICH's own intercommunicator allgather (for the simulator's cost
 * comparisons; `native` itself calls the MPI library). */
xfer_status_t xfer_build_native_model(const xfer_shape_t *shape, xfer_sched_t *s);

/* The segmentation exchange of Kang et al. 2019, Alg. 2, appended to @p s without touching
 * s->algo; shared by fc_full_v, fc_full (unequal counts) and fc_half (unequal counts). */
xfer_status_t xfer_append_segmented(const xfer_shape_t *shape, xfer_sched_t *s);

/* Counts descriptor for ranks [first, first+n) of group g: uniform when the shape is. */
int xfer_algo_group_counts(xfer_sched_t *s, const xfer_shape_t *shape, int g, int first, int n);

#endif /* XFER_ALGOS_H */
