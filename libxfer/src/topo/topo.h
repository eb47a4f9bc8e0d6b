/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-intercommunicator state, computed once and cached as an MPI attribute on the user's
 * intercommunicator: the merged communicator (group 0 = the low group, ranks 0..n0-1), the
 * local group communicator, this rank's coordinates and the split communicators algorithms
 * ask for, keyed by layout. Everything is freed when the intercommunicator is freed or at
 * MPI_Finalize, whichever comes first.
 */
#ifndef XFER_TOPO_H
#define XFER_TOPO_H

#include <mpi.h>

#include <xfer/status.h>

typedef struct xfer_subcomm {
    char key[96];
    MPI_Comm comm; /* MPI_COMM_NULL when this rank is in no group of that split */
    struct xfer_subcomm *next;
} xfer_subcomm_t;

/* One group's placement on (shared-memory) nodes. Nodes are numbered by their lowest rank;
 * slots order a node's ranks by rank. "block" when every node holds consecutive ranks. */
typedef struct xfer_nodes {
    int n, nnodes;
    int *node_of;    /* [n] */
    int *slot_of;    /* [n] */
    int *node_size;  /* [nnodes] */
    int *node_first; /* [nnodes + 1]: node m's ranks are members[node_first[m] ..] */
    int *members;    /* [n] ranks grouped by node, slot order */
    int block, min_ppn, max_ppn;
    int is_virtual; /* from XFER_NODE_SIZE rather than MPI_COMM_TYPE_SHARED */
} xfer_nodes_t;

/* Per-node shared-memory staging window (see shwin.c). */
typedef struct xfer_shwin xfer_shwin_t;

/* Leader-level intercommunicators for `senders` stripes: stripe l joins the slot-l ranks of
 * every node of both groups, ordered by node. */
typedef struct xfer_stripes {
    int senders;
    MPI_Comm comm; /* this rank's stripe (MPI_COMM_NULL if its slot >= senders) */
    struct xfer_stripes *next;
} xfer_stripes_t;

/* hier:direct announcements (hier_direct.c): the receiver each remote node named for each of
 * our stripes, by call. One stream per user of a staging window -- blocking calls share the
 * topology's, a persistent plan has its own -- told apart by the message tag on direct[0]. */
typedef struct xfer_dstream {
    int tag;    /* tag of this stream's announcements */
    long seq;   /* exchanges started so far (the same count on every rank of both groups) */
    int nr;     /* remote nodes */
    int nl;     /* room for stripes */
    long *seen; /* [2][nr][nl] latest call announced, by parity of the call */
    int *src;   /* [2][nr][nl] the remote rank that announced it */
    long expected, received; /* announcements addressed to this rank so far, taken in so far */
} xfer_dstream_t;

/* Node staging's state for one intercommunicator, kept beside the topology as Open MPI's han
 * keeps its module on the communicator: node layouts, the node communicator, stripes, the
 * staging window of blocking calls and hier:direct's announcement streams. */
typedef struct xfer_hier_module {
    int have_nodes;
    xfer_nodes_t nodes[2];
    MPI_Comm node_comm; /* this rank's node within its group (owned) */
    xfer_stripes_t *stripes;
    xfer_shwin_t *win;      /* staging window cached for blocking calls */
    MPI_Comm direct[2];     /* hier:direct: control and data duplicates of `inter` (owned) */
    xfer_dstream_t dstream; /* hier:direct announcements of blocking calls (tag 0) */
    int dstream_tags;       /* tags given to persistent plans' streams so far */
    long dstream_orphans;   /* announcements still due to freed persistent plans */
} xfer_hier_module_t;

typedef struct xfer_topo {
    MPI_Comm inter;  /* the user's intercommunicator (not owned) */
    MPI_Comm merged; /* owned */
    MPI_Comm local;  /* owned */
    int group;       /* 0: low group, 1: high group */
    int rank;        /* rank in the local group */
    int n[2];        /* group sizes */
    int merged_rank;
    int nnodes;        /* shared-memory nodes spanned by both groups */
    int max_ppn;       /* most ranks (of either group) on one node */
    int hier_possible; /* several ranks share nodes on several nodes, or virtual nodes */
    /* the selector (select/selector.h), which keeps its state here: made on first use by
     * select/, freed with the topology through the function it leaves */
    struct xfer_selector *selector;
    void (*selector_free)(struct xfer_selector *);
    xfer_subcomm_t *subs;
    struct xfer_topo *next_live; /* registry of live contexts, for MPI_Finalize */

    struct xfer_hier_module *hm; /* node staging's state (below): allocated with the topology,
                                    filled on first hierarchical use, freed with it */
} xfer_topo_t;

/* MPI_Comm_free for cleanup paths that cannot report an error: a failure is logged. */
void xfer_comm_release(MPI_Comm *comm);

/* The cached context of @p inter, created on first use (collective over both groups then).
 * XFER_ERR_NOT_INTERCOMM if @p inter is an intracommunicator. */
xfer_status_t xfer_topo_get(MPI_Comm inter, xfer_topo_t **out);

/* Split of t->merged for one slot of a schedule, cached under @p key. Collective over all
 * ranks of both groups; @p color is MPI_UNDEFINED for ranks outside every group. */
xfer_status_t xfer_topo_split(xfer_topo_t *t, const char *key, int color, int order, MPI_Comm *out);

/* Both groups' node layouts and this rank's node communicator. Collective over both groups on
 * first use. Nodes come from MPI_COMM_TYPE_SHARED on each group's local communicator, or, with
 * XFER_NODE_SIZE=k, from virtual nodes of k ranks (consecutive ranks, or every
 * ceil(n/k)-th rank with XFER_NODE_MAP=roundrobin) for testing a hierarchy on one host. */
xfer_status_t xfer_topo_nodes(xfer_topo_t *t);

/* The node of rank @p rank of the @p n ranks of @p local, as xfer_topo_nodes places them: its
 * communicator (*@p nc, the caller frees it) and key (the node's lowest rank, or the virtual
 * node's index), and whether the node is virtual. Collective over @p local. */
xfer_status_t xfer_node_split(MPI_Comm local, int rank, int n, MPI_Comm *nc, int *key,
                              int *is_virtual);

/* The stripe intercommunicator of this rank for @p senders stripes (collective over both
 * groups on first use; senders must not exceed any node's size). */
xfer_status_t xfer_topo_stripes(xfer_topo_t *t, int senders, MPI_Comm *out);

/* Two duplicates of the intercommunicator for hier:direct (identities of receivers, data), so
 * that its wildcard receives match nothing else. Collective over both groups on first use. */
xfer_status_t xfer_topo_direct_comms(xfer_topo_t *t, MPI_Comm out[2]);

/* The layout of @p n ranks on virtual nodes of @p k ranks, placed as XFER_NODE_SIZE=k and
 * XFER_NODE_MAP (@p roundrobin) place them, without MPI (the simulator's hierarchies). */
xfer_status_t xfer_nodes_virtual(xfer_nodes_t *L, int n, int k, int roundrobin);

void xfer_nodes_free(xfer_nodes_t *n);
void xfer_dstream_free(xfer_dstream_t *s);

#endif /* XFER_TOPO_H */
