/* SPDX-License-Identifier: BSD-3-Clause */
/* Node-hierarchical staging (hier.c). */
#ifndef XFER_HIER_H
#define XFER_HIER_H

#include <xfer/coll.h>

#include "../select/select.h"
#include "../topo/shwin.h"

enum { XFER_HIER_FLAGS = 1, XFER_HIER_BARRIER = 2 };

typedef struct xfer_hier {
    const xfer_algo_t *inner; /* resolved (never auto) */
    int senders, sync;
    int node, slot, node_size; /* this rank */
    MPI_Comm stripe;           /* this rank's stripe (borrowed from the topology cache) */
    xfer_shwin_t *win;
    int own_win;
    size_t *agg[2];         /* [nnodes] node aggregate bytes, both groups */
    size_t *agg_off[2];     /* [n] offset of each rank's block in its node aggregate */
    size_t *stripe_base;    /* [senders + 1] stripe areas in R */
    size_t *node_off;       /* [senders * remote nnodes] node segment offsets within stripe areas */
    int *rcounts, *rdispls; /* this rank's stripe, for the inner allgatherv */
    size_t s_bytes, r_bytes;
    xfer_plan_t *inner_plan[2]; /* persistent plans: one per window parity */
} xfer_hier_t;

struct xfer_plan;
xfer_status_t xfer_hier_prepare(struct xfer_plan *p);
xfer_status_t xfer_hier_run(struct xfer_plan *p);
void xfer_hier_free(xfer_hier_t **h);
void xfer_stats_record(const xfer_op_stats_t *s);

#endif /* XFER_HIER_H */
