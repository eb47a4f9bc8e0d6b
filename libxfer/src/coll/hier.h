/* SPDX-License-Identifier: BSD-3-Clause */
/* Node-hierarchical staging (hier.c). */
#ifndef XFER_HIER_H
#define XFER_HIER_H

#include <xfer/coll.h>

#include "../select/select.h"
#include "../topo/shwin.h"
#include "../topo/topo.h"

enum { XFER_HIER_FLAGS = 1, XFER_HIER_BARRIER = 2 }; /* opts.hier_sync's values */

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
    /* hier:direct (hier_direct.c) */
    int direct;
    MPI_Comm dcomm[2];  /* control and data duplicates of the intercommunicator (borrowed) */
    xfer_dstream_t *ds; /* announcements: the topology's, or own_ds for a persistent plan */
    xfer_dstream_t own_ds;
    xfer_topo_t *dtopo;        /* where own_ds leaves the announcements still due when freed */
    int *d_recv;               /* [remote nodes] receiver announced by each consumer node, or -1 */
    long *d_idout;             /* [2 * senders] our announcements (call, stripe) */
    unsigned char *d_sent;     /* [remote nodes * node size] block shipped to that node */
    unsigned char *d_ready;    /* [node size] 0 not deposited, 1 deposited, 2 not in this stripe */
    unsigned char *d_pclaimed; /* [senders] S stripes this rank shipped in this call */
    MPI_Request *d_sreq;       /* sends: blocks and announcements */
    int d_maxsreq;
    size_t *d_got;       /* [remote nodes] bytes received from each */
    MPI_Request *d_rreq; /* receives of the runs matched so far */
    int d_maxrreq;
} xfer_hier_t;

struct xfer_plan;
xfer_status_t xfer_hier_prepare(struct xfer_plan *p);
xfer_status_t xfer_hier_run(struct xfer_plan *p);
void xfer_hier_free(xfer_hier_t **h);
void xfer_stats_record(const xfer_op_stats_t *s);

/* Predicted time of node staging for a call of shape @p s on @p t's nodes (layouts computed):
 * the best node-level transfer (an inner algorithm, or direct in flags mode) with one link per
 * node, plus the copies through shared memory at m->gamma. */
struct xfer_topo;
xfer_status_t xfer_hier_predict(const struct xfer_topo *t, const xfer_shape_t *s,
                                const xfer_model_t *m, int sync, double *predicted,
                                const char **inner);

xfer_status_t xfer_hier_direct_prepare(struct xfer_plan *p);
/* The transfer between the groups for call @p epoch on window parity @p parity: ships and
 * receives, and publishes the sent / valid flags of the stripes this rank served. */
xfer_status_t xfer_hier_direct_exchange(struct xfer_plan *p, long epoch, int parity,
                                        xfer_op_stats_t *stats);
void xfer_hier_direct_free(xfer_hier_t *h);

#endif /* XFER_HIER_H */
