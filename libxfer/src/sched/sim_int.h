/* SPDX-License-Identifier: BSD-3-Clause */
/* The simulator's internal state, shared by sim.c (set-up, driver), sim_queue.c (events),
 * sim_round.c (rounds, copies, messages), sim_coll.c (local collectives), sim_check.c (round
 * checks, final checks, messages) and sim_node.c (hierarchies: node windows, flags, stripes). */
#ifndef XFER_SIM_INT_H
#define XFER_SIM_INT_H

#include "../core/core.h"
#include "hmap.h"
#include "sim.h"
#include "sim_labels.h"

enum { XFER_SIM_NFLAGS = 8 };
enum { XFER_SIM_MAX_RANKS = 1 << 22 }; /* room for the window's flag kinds (topo/shwin.h) */

enum { ST_IDLE = 0, ST_POSTED, ST_DONE };

/* One buffer range an operation reads or writes (the race check). */
typedef struct {
    int buf, write;
    size_t off, len;
} access_t;

typedef struct access_acc {
    access_t *a[2];
    int cap;
} access_acc_t;

/* The simulator's state of one operation of a rank's current round. */
typedef struct sim_opstate {
    double post;  /* when the op was posted */
    double end;   /* when it completed */
    int wait;     /* chain predecessor and explicit dependencies not complete */
    int st;       /* ST_* */
    runvec_t cap; /* labels a posted send carries */
} sim_opstate_t;

/* A rank. The fields of every round come first, and an operation's state is one record: at
 * p + q = 8192 the ranks' states outgrow the caches, and each line a round touches costs. */
typedef struct sim_rank {
    xfer_sched_t *s;
    xfer_round_view_t view;
    int round, pending, npend, active_rounds;
    sim_opstate_t *state; /* per op of the view; one allocation with scratch and pend */
    int *pend;            /* posted point-to-point ops not yet matched, in posting order */
    double clock, send_free, recv_free;
    size_t sent, recvd;
    runvec_t map[XFER_NBUFS];
    xfer_op_t *scratch; /* a generated round's operations */
    access_acc_t acc;   /* the race check's accesses of combined messages (pieces) */
    int call;           /* hierarchies: the call in progress (0 .. calls-1) */
    int node, slot;     /* hierarchies: the rank's node (both groups' nodes numbered together) */
} sim_rank_t;

/* An operation whose waits are all satisfied, to be posted at time t. */
typedef struct ready {
    double t;
    int rank, k;
    int finish; /* 0: post the op; 1: finish a local op posted earlier (jitter) */
} ready_t;

/* The event queue (sim_queue.c): operations in the order of the times they become ready, ties
 * in the order they became ready. Events of one time share a bucket, an array in arrival
 * order; the buckets are a min-heap by time. Most events of a round-based schedule share a
 * handful of times, so this order costs O(1) per event where a heap of events cost O(log n)
 * comparisons, and a bucket is read in the order it was written. Bucket links are indices + 1
 * (0: none), so a zeroed queue is an empty one. */
typedef struct sim_event {
    double t;
    int rank, k, finish;
} sim_event_t;

typedef struct sim_bucket {
    double t;
    sim_event_t *ev;  /* kept when the bucket is free, for its next time */
    int head, n, cap; /* ev[head .. n) are queued */
    int next_free;
} sim_bucket_t;

typedef struct sim_queue {
    sim_bucket_t *b;
    int b_cap, b_free;
    int *heap; /* live buckets (indices), earliest first; room for b_cap */
    int nheap;
    xfer_hmap_t at; /* time (its bits) -> live bucket + 1 */
    int last; /* the bucket of the last event queued + 1: the next one most likely goes there */
} sim_queue_t;

typedef struct coll_inst {
    int posted;
    int *rank, *op;
} coll_inst_t;

/* An operation waiting on a node (FLAG_WAIT, BARRIER). */
typedef struct sim_waiter {
    int rank, k;
} sim_waiter_t;

/* A node of a hierarchy: its shared window (both parities) and control flags. */
typedef struct sim_node {
    int g, m, size;     /* group, node index in it, ranks */
    runvec_t win[2][2]; /* [parity][NODE_S, NODE_R] */
    long *flags;        /* [parity][kind][index], 2 * XFER_SIM_NFLAGS * size */
    sim_waiter_t *wait; /* flag waits and barrier arrivals not yet satisfied */
    int nwait, wait_cap;
    int barrier_in; /* ranks in the node barrier */
} sim_node_t;

typedef struct sim {
    const xfer_shape_t *shape;   /* inter-group schedules, or */
    const xfer_sim_flat_t *flat; /* a world of flat ones */
    const xfer_sim_hier_t *hier; /* with shape: hierarchical schedules on nodes */
    xfer_builder_fn build;       /* shape without hier: the builder of every rank's schedule */
    sim_node_t *nodes;
    int nnodes;
    xfer_sim_opts_t o;
    int N;
    sim_rank_t *r;
    sim_queue_t q;        /* operations to post */
    xfer_hmap_t coll_seq; /* (rank, slot, color) -> next call number */
    xfer_hmap_t coll;     /* (slot, color, call) -> instance + 1 */
    coll_inst_t *insts;
    int ninsts, insts_cap;
    runvec_t tmp, tmp2; /* scratch labels */
    xfer_sim_stats_t st;
    xfer_status_t err;
    uint64_t rng; /* jitter: the delays' generator */
    double *slow; /* jitter: each rank's slowness, 1 .. 8 */
} sim_t;

static inline int sim_is_coll(int kind)
{
    return kind == XFER_OP_ALLGATHERV || kind == XFER_OP_BCAST || kind == XFER_OP_GATHERV;
}

/* sim_check.c */
void sim_rank_name(const sim_t *m, int merged, char *out, size_t len);
void sim_block_name(const sim_t *m, int g, size_t byte, char *out, size_t len);
xfer_status_t sim_fail(sim_t *m, xfer_status_t st, const char *fmt, ...) XFER_PRINTF(3, 4);
void sim_check_round(sim_t *m, int rank);
void sim_describe_stuck(sim_t *m);
void sim_verify_rank(sim_t *m, int rank); /* RECV holds the other group's data of R->call */
void sim_verify(sim_t *m);
void sim_verify_flat(sim_t *m);

/* sim_queue.c */
void sim_enqueue(sim_t *m, int rank, int k); /* op k of the rank's view, at its post time */
int sim_dequeue(sim_t *m, ready_t *out);     /* the earliest; 0 when the queue is empty */
void sim_queue_free(sim_t *m);
double sim_rand01(sim_t *m); /* jitter: uniform in [0, 1) */
/* Jitter (opts.jitter > 0): a random delay for a local operation of @p rank (0 without), and
 * finishing a local operation at time @p t instead of when it is posted. */
double sim_delay(sim_t *m, int rank);
void sim_defer(sim_t *m, int rank, int k, double t);

/* sim_round.c */
void sim_start_round(sim_t *m, int rank); /* the rank's next non-empty round, or its next call */
void sim_post(sim_t *m, int rank, int k);
void sim_finish(sim_t *m, int rank, int k, double t); /* a deferred local operation ends */
void sim_complete(sim_t *m, int rank, int k, double t);
/* Labels of @p len bytes at (buf, off) of @p rank into m->tmp; 0 on a violation (message
 * availability: "@p rank @p what buf[..) but does not hold ..."). */
int sim_take(sim_t *m, int rank, int buf, size_t off, size_t len, const char *what);

/* sim_coll.c */
void sim_post_coll(sim_t *m, int rank, int k);

/* sim.c */
/* Set up @p N ranks (@p prepare first, if given, then @p setup for each), run them, check,
 * summarise, and free the state: the body of every xfer_sim_run* entry point. */
xfer_status_t sim_run(sim_t *m, int N, const xfer_sim_opts_t *opts,
                      xfer_status_t (*prepare)(sim_t *m),
                      xfer_status_t (*setup)(sim_t *m, int rank), xfer_sim_stats_t *stats);
/* Rank @p rank's SEND buffer holds its own data of its current call. */
xfer_status_t sim_send_labels(sim_t *m, int rank);
xfer_status_t sim_setup_state(sim_rank_t *R, int rank);     /* for the schedule in R->s */
xfer_status_t sim_drive(sim_t *m, xfer_sim_stats_t *stats); /* run, check, summarise */
void sim_free(sim_t *m);

/* sim_node.c */
runvec_t *sim_node_window(sim_t *m, int rank, int buf); /* NODE_S, NODE_R of the rank's node */
int sim_stripe_peer(const sim_t *m, int rank, const xfer_op_t *op);     /* merged rank, or -1 */
int sim_member(const sim_t *m, int rank, const xfer_group_t *g, int i); /* merged rank */
void sim_post_node(sim_t *m, int rank, int k);            /* FLAG_WAIT, FLAG_PUT, BARRIER, TASK */
void sim_finish_put(sim_t *m, int rank, int k, double t); /* a deferred FLAG_PUT lands */
int sim_next_call(sim_t *m, int rank);                    /* 1: the rank starts its next call */
void sim_nodes_free(sim_t *m);

/* The map of a buffer (node windows shared); inline: it runs for every message. */
static inline runvec_t *sim_bufmap(sim_t *m, int rank, int buf)
{
    if (m->nodes && (buf == XFER_BUF_NODE_S || buf == XFER_BUF_NODE_R))
        return sim_node_window(m, rank, buf);
    return &m->r[rank].map[buf];
}

/* The merged rank of a point-to-point operation's peer (stripe ranks translated), or -1. */
static inline int sim_peer(const sim_t *m, int rank, const xfer_op_t *op)
{
    return op->comm == XFER_COMM_MAIN ? op->peer : sim_stripe_peer(m, rank, op);
}

#endif /* XFER_SIM_INT_H */
