/* SPDX-License-Identifier: BSD-3-Clause */
/* Node-hierarchical staging (hier.c, hier_direct.c): builders of schedules for the one executor. */
#ifndef XFER_HIER_H
#define XFER_HIER_H

#include <xfer/coll.h>

#include "../sched/exec.h"
#include "../select/select.h"
#include "../topo/shwin.h"
#include "../topo/topo.h"

enum { XFER_HIER_FLAGS = 1, XFER_HIER_BARRIER = 2 }; /* opts.hier_sync's values */

struct xfer_hier_direct;

typedef struct xfer_hier {
    const xfer_algo_t *inner; /* resolved (never auto); NULL for direct */
    int senders, sync;
    int node, slot, node_size; /* this rank */
    MPI_Comm stripe;           /* this rank's stripe (borrowed from the topology cache) */
    xfer_topo_t *stripe_topo;  /* its merged and local communicators (leaders, inner algorithm) */
    xfer_shwin_t *win;
    int own_win;
    long epoch;             /* the window use of the call in progress */
    size_t *agg[2];         /* [nnodes] node aggregate bytes, both groups */
    size_t *agg_off[2];     /* [n] offset of each rank's block in its node aggregate */
    size_t *stripe_base;    /* [senders + 1] stripe areas in R */
    size_t *node_off;       /* [senders * remote nnodes] node segment offsets within stripe areas */
    int *rcounts, *rdispls; /* hier:native: this rank's stripe, for MPI_Iallgatherv */
    MPI_Request native_req;
    size_t s_bytes, r_bytes;
    xfer_exec_task_t *tasks; /* task 0: hier:direct's exchange or hier:native's allgatherv */
    int roles;               /* hier:direct: roles this rank took in the last call */
    int direct;
    struct xfer_hier_direct *dx; /* hier:direct state (hier_direct.c) */
} xfer_hier_t;

struct xfer_plan;
/* Geometry, inner algorithm, staging window and this rank's schedule (p->sched). */
xfer_status_t xfer_hier_prepare(struct xfer_plan *p);
/* A call starts: its epoch on the window (bind it to the executor). */
long xfer_hier_begin(struct xfer_plan *p);
/* Fill hierarchical fields of @p stats after a call (times already set by the executor). */
void xfer_hier_stats(const struct xfer_plan *p, xfer_op_stats_t *stats);
void xfer_hier_free(xfer_hier_t **h);
/* xfer_hier_free, or without @p mpi its memory only: the window is left to MPI_Finalize. */
void xfer_hier_release(xfer_hier_t **h, int mpi);

/* Predicted time of node staging for a call of shape @p s on @p t's nodes (layouts computed):
 * the best node-level transfer (an inner algorithm, or direct in flags mode) with one link per
 * node, plus the copies through shared memory at m->gamma. */
struct xfer_topo;
xfer_status_t xfer_hier_predict(const struct xfer_topo *t, const xfer_shape_t *s,
                                const xfer_model_t *m, int sync, double *predicted,
                                const char **inner);

/* The schedule rank @p r of group @p g of a hierarchical plan runs, built without MPI on virtual
 * nodes (the simulator's and xfer-sched's hierarchies): both groups on nodes of node_size[g]
 * ranks, placed as XFER_NODE_SIZE / XFER_NODE_MAP place them, stripes numbered as
 * xfer_topo_stripes numbers them (by node, group 0 low). The inner algorithm must be given and
 * be a schedule builder: native and direct run as tasks the simulator cannot follow. */
typedef struct xfer_hier_virtual {
    int node_size[2];  /* ranks per node, each group */
    int roundrobin;    /* XFER_NODE_MAP=roundrobin placement */
    int senders;       /* stripes: at most the smallest node */
    int barrier;       /* node barriers instead of flags */
    const char *inner; /* registry name */
} xfer_hier_virtual_t;

xfer_status_t xfer_hier_sched_virtual(const xfer_shape_t *shape, const xfer_hier_virtual_t *v,
                                      int g, int r, xfer_sched_t **out);

/* Build every rank's schedule on virtual nodes and run @p calls consecutive calls of them through
 * the simulator (sched/sim.h, xfer_sim_run_hier). @p opts, @p stats may be NULL. */
struct xfer_sim_opts;
struct xfer_sim_stats;
xfer_status_t xfer_hier_simulate(const xfer_shape_t *shape, const xfer_hier_virtual_t *v, int calls,
                                 const struct xfer_sim_opts *opts, struct xfer_sim_stats *stats);

/* hier:direct: the exchange between the node windows of both groups, roles by arrival, as the
 * task @p task of the schedule. */
xfer_status_t xfer_hier_direct_prepare(struct xfer_plan *p, xfer_exec_task_t *task);
void xfer_hier_direct_free(xfer_hier_t *h);

#endif /* XFER_HIER_H */
