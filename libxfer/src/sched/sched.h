/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Schedules are data. An algorithm *builder* appends, for one rank, rounds of operations to a
 * schedule; nothing here communicates. The MPI executor (exec.c) runs a schedule, the
 * simulator (sim.c) executes the schedules of every rank symbolically, and xfer_sched_dump()
 * prints one. All three read the same object.
 *
 * Rank space. Both groups of the intercommunicator are numbered in one "merged" space:
 * group 0 (the low group of MPI_Intercomm_merge) holds merged ranks 0..n0-1, group 1 holds
 * n0..n0+n1-1. Point-to-point peers are merged ranks.
 *
 * Buffers. Operations address byte ranges of three buffers:
 *   SEND  the rank's own packed contribution (cnt[g][r] bytes);
 *   RECV  the packed result: the other group's blocks concatenated in rank order;
 *   TMP   scratch owned by the executor, sched->tmp_bytes long.
 * A schedule built with xfer_sched_create_flat() (the isomorphic collectives) counts offsets and
 * lengths in blocks instead (sched->unit): the executor is told each buffer's block datatype.
 * A SEND or RECV may combine several pieces into one message (xfer_sched_piece).
 *
 * Order. Operations carry explicit dependencies; rounds and chains are shorthands for the common
 * ones. By default an operation of round r waits for every operation of rounds < r (a round
 * barrier); operations sharing a chain c > 0 inside a round run one after the other in append
 * order. An operation marked XFER_OPF_NO_BARRIER waits only for its explicit dependencies (and
 * its chain), which is how a builder pipelines segments across rounds. The executor (exec.c)
 * starts whatever is ready and never blocks inside a test call.
 *
 * Local collectives (ALLGATHERV, BCAST, GATHERV) run over a *group*: the local group
 * (slot XFER_SLOT_LOCAL) or a subset of the merged ranks created by MPI_Comm_split in a
 * numbered *slot*. In each slot a rank belongs to at most one group. Every rank of a shape
 * gets the same number of slots (sched->nslots), so the executor can make the collective
 * split calls in lockstep.
 *
 * Communicators. Point-to-point operations and groups name the communicator whose merged rank
 * space they use (op->comm, group->comm): XFER_COMM_MAIN, the call's merged communicator, or
 * XFER_COMM_STRIPE, the merged communicator of the node-level stripe a hierarchical schedule
 * runs its inner algorithm over. XFER_COMM_NODE is the rank's node (BARRIER).
 *
 * Node staging. A hierarchical schedule also addresses the node's shared window: NODE_S and
 * NODE_R are the S and R areas of the window's parity for the call, bound when the call starts,
 * and FLAG_WAIT / FLAG_PUT read and publish the window's control flags relative to the call's
 * epoch (shwin.h), so the same schedule serves every call.
 */
#ifndef XFER_SCHED_H
#define XFER_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <xfer/status.h>

typedef struct xfer_sched xfer_sched_t;

enum {
    XFER_BUF_SEND = 0,
    XFER_BUF_RECV = 1,
    XFER_BUF_TMP = 2,
    XFER_BUF_NODE_S = 3, /* the node window's S area of the call's parity */
    XFER_BUF_NODE_R = 4, /* the node window's R area of the call's parity */
    XFER_NBUFS = 5
};

enum { XFER_COMM_MAIN = 0, XFER_COMM_STRIPE = 1, XFER_COMM_NODE = 2, XFER_NCOMMS = 3 };

typedef enum xfer_op_kind {
    XFER_OP_SEND = 0,   /* peer, buf[off, off+len) */
    XFER_OP_RECV,       /* peer, buf[off, off+len) */
    XFER_OP_COPY,       /* buf[off, off+len) -> buf2[off2, ...) */
    XFER_OP_ALLGATHERV, /* group, counts; in place in buf at base off (packed displacements) */
    XFER_OP_BCAST,      /* group, root = member index peer, buf[off, off+len) */
    XFER_OP_GATHERV,    /* group, root, counts: buf[off, off+len) -> at root buf2 base off2 */
    XFER_OP_FLAG_WAIT,  /* node window flags [peer, peer+len) of kind buf2 reach epoch + aux */
    XFER_OP_FLAG_PUT,   /* node window flag peer of kind buf2 := epoch + aux */
    XFER_OP_BARRIER,    /* barrier over communicator comm (the node) */
    XFER_OP_TASK        /* task peer of the executor's task table (post, then progress) */
} xfer_op_kind_t;

enum {
    XFER_OPF_NO_BARRIER = 1, /* waits only for its dependencies, not for earlier rounds */
    XFER_OPF_ON_FAILURE = 2  /* FLAG_PUT: if the operation fails before it, publish -epoch */
};

typedef struct xfer_op {
    uint8_t kind;
    uint8_t buf;
    uint8_t buf2;
    uint8_t comm; /* XFER_COMM_* of peer (SEND, RECV) or of the barrier */
    uint16_t chain;
    uint16_t flags; /* XFER_OPF_* */
    int peer;   /* merged rank (SEND/RECV), root member index (BCAST/GATHERV), flag index, task */
    int group;  /* index into sched->groups (collectives), -1 otherwise */
    int counts; /* index into sched->counts (ALLGATHERV/GATHERV), -1 otherwise */
    int aux;    /* FLAG ops: epoch offset (0: this call, -2: the window's previous use);
                   SEND/RECV: lane (0 .. XFER_LANES-1), see xfer_sched_lane */
    int dep0, ndeps;     /* explicit dependencies: op indices sched->deps[dep0 .. dep0 + ndeps) */
    int piece0, npieces; /* SEND/RECV of several pieces: sched->pieces[piece0 .. +npieces) */
    size_t off, len, off2;
} xfer_op_t;

/* One piece of a combined message: a SEND or RECV with npieces > 0 moves all its pieces, in
 * order, as one message (an MPI struct datatype over their addresses: nothing is packed).
 * op->buf/off are then unused and op->len is the pieces' total. */
typedef struct xfer_piece {
    uint8_t buf;
    size_t off, len;
} xfer_piece_t;

#define XFER_SLOT_LOCAL (-1)

/* A strided run of merged ranks: start, start+stride, ..., count of them. */
typedef struct xfer_range {
    int start, stride, count;
} xfer_range_t;

/* A group of merged ranks, ordered: ranges[0] then ranges[1]. */
typedef struct xfer_group {
    int slot; /* XFER_SLOT_LOCAL or a split slot >= 0 */
    int comm; /* XFER_COMM_MAIN or XFER_COMM_STRIPE: whose merged ranks, split or local group */
    int nranges;
    xfer_range_t ranges[2];
    int size;     /* total members */
    int my_index; /* this rank's position in the group */
} xfer_group_t;

typedef enum xfer_counts_kind {
    XFER_COUNTS_UNIFORM = 0, /* every member contributes k bytes */
    XFER_COUNTS_SEGMENTS,    /* K bytes cut into n near-equal segments (first K mod n larger) */
    XFER_COUNTS_ARRAY,       /* explicit per-member byte counts (owned by the schedule) */
    XFER_COUNTS_PIECES,      /* n members in m contiguous subgroups (xfer_split); member t of
                                subgroup i holds piece t of that subgroup's k-byte block */
    XFER_COUNTS_BLOCKS       /* n subgroups of a split of m members; subgroup i holds
                                size(i) blocks of k bytes */
} xfer_counts_kind_t;

typedef struct xfer_counts {
    xfer_counts_kind_t kind;
    int n;
    size_t k;  /* UNIFORM: per member; SEGMENTS: total; PIECES/BLOCKS: block size */
    size_t *v; /* ARRAY */
    int m;     /* PIECES: subgroups; BLOCKS: members split */
} xfer_counts_t;

/* P members split into Q contiguous subgroups, the first P mod Q of ceil(P/Q) members and the
 * rest of floor(P/Q) (Kang et al. 2019, Alg. 1). */
int xfer_split_size(int P, int Q, int i);
int xfer_split_start(int P, int Q, int i);
int xfer_split_owner(int P, int Q, int x);
/* floor(i n / m): where the i-th of m points spread evenly over n positions falls (the chain
 * heads of fc_half's relay, the slot offsets of fc_direct). */
int xfer_spread(int n, int m, int i);

/*
 * The shape of one call as every rank sees it (identical on all ranks of both groups).
 * Counts are bytes. cnt[g] may be NULL when group g is uniform (ucnt[g] each); pre[g] is the
 * exclusive prefix sum (n[g] + 1 entries) when cnt[g] is given.
 */
typedef struct xfer_shape {
    int n[2];
    const size_t *cnt[2];
    const size_t *pre[2];
    size_t ucnt[2];
    size_t total[2];
    size_t seg_cap; /* relay pipelines cut segments of at most this many bytes (0: the model's
                       size); plans set XFER_NET_SEGMENT when the call crosses a network */
} xfer_shape_t;

/* Under the MPI libraries' eager limits for TCP (Open MPI: 64 KiB), so a relayed segment goes
 * out without a rendezvous handshake (docs/algorithms.md, fc_half). */
#define XFER_NET_SEGMENT 32768

static inline size_t xfer_shape_count(const xfer_shape_t *s, int g, int r)
{
    return s->cnt[g] ? s->cnt[g][r] : s->ucnt[g];
}

static inline size_t xfer_shape_offset(const xfer_shape_t *s, int g, int r)
{
    return s->cnt[g] ? s->pre[g][r] : s->ucnt[g] * (size_t) r;
}

/* 1 when every rank of group g contributes the same number of bytes. */
int xfer_shape_uniform(const xfer_shape_t *s, int g);

static inline int xfer_merged_rank(const xfer_shape_t *s, int g, int r)
{
    return g == 0 ? r : s->n[0] + r;
}

/* ---- schedule object ----------------------------------------------------------------------- */

/* Generated rounds: a builder may, instead of storing operations, give a function that produces
 * the operations of one round on demand (ring schedules: O(1) memory per rank however many
 * rounds). Generated rounds hold point-to-point and copy operations only. */
typedef xfer_status_t (*xfer_round_gen_fn)(const xfer_sched_t *s, int round, xfer_op_t *ops,
                                           int *nops);

struct xfer_sched {
    /* First the fields the executor and the simulator read in every round, together: the
     * simulator holds every rank's schedule, and at p + q = 8192 each line a round touches is
     * a cache miss. */
    int group, rank; /* whose schedule this is */
    int n[2];
    size_t send_bytes, recv_bytes, tmp_bytes;
    int nrounds;
    int max_ports; /* sends (and receives) one round may have in flight at once (single-port: 1) */
    int ring_only; /* point-to-point peers must be neighbours on the merged-rank ring */
    int gen_max_ops;           /* most operations one generated round can hold */
    const xfer_shape_t *shape; /* the shape it was built for; must outlive the schedule */
    xfer_round_gen_fn gen;     /* non-NULL: rounds are generated, ops[] is unused */
    long gen_param[8];         /* the generator's parameters, set by the builder */
    int *round_start;          /* round i spans ops [round_start[i], round_start[i+1]) */
    xfer_op_t *ops;
    int nops, ops_cap;
    int *deps; /* explicit dependencies of all operations (op->dep0, op->ndeps) */
    int ndeps, deps_cap;
    xfer_piece_t *pieces; /* pieces of combined messages (op->piece0, op->npieces) */
    int npieces, pieces_cap;

    const char *algo;    /* registry name of the builder */
    const char *variant; /* which case of the algorithm (e.g. "p>q"), for dumps and cache keys */
    int nslots;
    int rounds_cap;
    xfer_group_t *groups;
    int ngroups, groups_cap;
    xfer_counts_t *counts;
    int ncounts, counts_cap;
    const char *unit;       /* what off and len count: "bytes", or "blocks" when the executor is
                               given a block type per buffer (isomorphic schedules) */
    int ntasks;             /* TASK operations refer to tasks 0 .. ntasks-1 the executor is given */
    int uses_node;          /* NODE_S/NODE_R buffers or FLAG operations: needs a node window */
    size_t node_bytes[2];   /* room the schedule uses in NODE_S and NODE_R */
    int nslots_stripe;      /* split slots over XFER_COMM_STRIPE (nslots counts XFER_COMM_MAIN's) */
    int group_comm;         /* communicator of groups added now (xfer_sched_embed sets it) */
    char stripe_layout[64]; /* algo/variant of the schedule embedded on XFER_COMM_STRIPE */

    xfer_status_t error; /* sticky: first failure while building */
    void *owned;         /* freed by whoever set it (xfer_sched_free), not by destroy */
};

/* One round's operations, stored or generated. */
typedef struct xfer_round_view {
    const xfer_op_t *ops;
    int n;
    int first; /* index of ops[0] in s->ops, -1 for a generated round */
} xfer_round_view_t;

/* The operations of @p round. A generated round is written to @p scratch, which must hold
 * s->gen_max_ops operations and stays in use until the next call with it. */
xfer_status_t xfer_sched_round_view(const xfer_sched_t *s, int round, xfer_op_t *scratch,
                                    xfer_round_view_t *view);

/* Fill @p op as a point-to-point operation (for round generators). */
static inline void xfer_op_p2p(xfer_op_t *op, int kind, int peer, int buf, size_t off, size_t len)
{
    memset(op, 0, sizeof(*op));
    op->kind = (uint8_t) kind;
    op->buf = (uint8_t) buf;
    op->peer = peer;
    op->group = op->counts = -1;
    op->off = off;
    op->len = len;
}

/* Most operations any round of @p s holds (the size of a view scratch or request array). */
int xfer_sched_widest_round(const xfer_sched_t *s);

/* Check that @p op stays inside the buffers of @p s (used by builders and generators). */
int xfer_sched_op_in_bounds(const xfer_sched_t *s, const xfer_op_t *op);

/* A builder appends one rank's operations for @p shape (see algos/). */
typedef xfer_status_t (*xfer_builder_fn)(const xfer_shape_t *shape, xfer_sched_t *s);

/* Start an empty schedule for (group, rank) of @p shape. */
xfer_status_t xfer_sched_create(const xfer_shape_t *shape, int group, int rank, xfer_sched_t **out);
/* Start an empty schedule over one communicator of @p nranks ranks with no second group (the
 * isomorphic collectives): buffers of @p send and @p recv units, no shape. */
xfer_status_t xfer_sched_create_flat(int nranks, int rank, size_t send, size_t recv,
                                     xfer_sched_t **out);
void xfer_sched_destroy(xfer_sched_t **s);
/* Forget all operations (keeps allocations); used when a builder restarts. */
void xfer_sched_reset(xfer_sched_t *s);

/* Builder interface. Each call records failures in s->error (sticky) so a builder can append
 * many operations and check once with xfer_sched_status(). */
void xfer_sched_round(xfer_sched_t *s); /* close the current round (no-op if it is empty) */
void xfer_sched_send(xfer_sched_t *s, int peer, int buf, size_t off, size_t len, int chain);
void xfer_sched_recv(xfer_sched_t *s, int peer, int buf, size_t off, size_t len, int chain);
void xfer_sched_copy(xfer_sched_t *s, int src, size_t soff, int dst, size_t doff, size_t len);
/* Groups: returns the index to use in collectives, -1 on failure. */
int xfer_sched_group_local(xfer_sched_t *s, const xfer_shape_t *shape);
int xfer_sched_group(xfer_sched_t *s, int slot, int nranges, const xfer_range_t *ranges);
int xfer_sched_counts_uniform(xfer_sched_t *s, int n, size_t k);
int xfer_sched_counts_segments(xfer_sched_t *s, int n, size_t total);
int xfer_sched_counts_pieces(xfer_sched_t *s, int P, int Q, size_t k);
int xfer_sched_counts_blocks(xfer_sched_t *s, int P, int Q, size_t k);
/* Explicit counts: returns the index and lets the builder fill *v (n entries). */
int xfer_sched_counts_array(xfer_sched_t *s, int n, size_t **v);
void xfer_sched_allgatherv(xfer_sched_t *s, int group, int counts, int buf, size_t base);
void xfer_sched_bcast(xfer_sched_t *s, int group, int root, int buf, size_t off, size_t len);
void xfer_sched_gatherv(xfer_sched_t *s, int group, int root, int counts, int sbuf, size_t soff,
                        size_t slen, int rbuf, size_t rbase);
/* Index of the operation appended last (-1 if none): the handle for dependencies. Builders that
 * append a possibly empty transfer compare the count before and after. */
int xfer_sched_last(const xfer_sched_t *s);
/* The operation appended last also waits for operation @p op (ignored when @p op < 0). */
void xfer_sched_dep(xfer_sched_t *s, int op);
/* Lanes. Messages between two ranks match in the order they are posted (MPI's non-overtaking
 * rule on one tag), so a builder that wants two messages of one pair in flight at once, posted in
 * an order it does not control, puts them on different lanes: a lane is a tag of its own (the
 * executor's tag + lane), and the simulator matches within a lane only. */
#define XFER_LANES 4
/* The SEND or RECV appended last goes on lane @p lane (0 by default). */
void xfer_sched_lane(xfer_sched_t *s, int lane);

/* The operation appended last waits only for its explicit dependencies and chain. */
void xfer_sched_no_barrier(xfer_sched_t *s);

/* Node staging operations (see shwin.h for the flags). */
void xfer_sched_flag_wait(xfer_sched_t *s, int kind, int first, int count, int epoch_offset);
void xfer_sched_flag_put(xfer_sched_t *s, int kind, int index, int epoch_offset, int on_failure);
void xfer_sched_barrier(xfer_sched_t *s, int comm);
void xfer_sched_task(xfer_sched_t *s, int task);

/* Add a piece to the SEND or RECV appended last, making it a combined message (its own range
 * becomes the first piece). */
void xfer_sched_piece(xfer_sched_t *s, int buf, size_t off, size_t len);

/* Point-to-point on another communicator (xfer_sched_send/recv use XFER_COMM_MAIN). */
void xfer_sched_p2p_on(xfer_sched_t *s, int kind, int comm, int peer, int buf, size_t off,
                       size_t len, int chain);

/* Where an embedded schedule's buffers and communicator go (xfer_sched_embed). */
typedef struct xfer_embed_map {
    int comm;       /* communicator of its point-to-point operations and groups */
    int buf[3];     /* its SEND, RECV, TMP -> buffers of the host schedule */
    size_t base[3]; /* ... at these offsets */
} xfer_embed_map_t;

/* Append every round of @p src (stored or generated) to @p dst as rounds of its own, buffers and
 * communicator mapped by @p map (its groups keep their slots, on map->comm). Its first round
 * waits for what precedes it. */
xfer_status_t xfer_sched_embed(xfer_sched_t *dst, const xfer_sched_t *src,
                               const xfer_embed_map_t *map);

/* Close the last round and validate buffer bounds; returns the sticky status. */
xfer_status_t xfer_sched_finish(xfer_sched_t *s);

static inline xfer_status_t xfer_sched_status(const xfer_sched_t *s)
{
    return s->error;
}

/* ---- helpers on groups and counts ------------------------------------------------------------ */

int xfer_group_member(const xfer_group_t *g, int index);    /* merged rank of member @p index */
int xfer_group_index_of(const xfer_group_t *g, int merged); /* -1 if not a member */
size_t xfer_counts_get(const xfer_counts_t *c, int i);
size_t xfer_counts_offset(const xfer_counts_t *c, int i); /* exclusive prefix */
size_t xfer_counts_total(const xfer_counts_t *c);

/* Near-equal segmentation of K bytes into n parts (Kang et al. 2019, Alg. 2). */
size_t xfer_seg_len(size_t K, int n, int j);
size_t xfer_seg_start(size_t K, int n, int j);
int xfer_seg_index(size_t K, int n, size_t byte); /* segment holding @p byte (< K) */

const char *xfer_buf_name(int buf);
const char *xfer_op_name(int kind);

/* Stable identity of the communicator layout a schedule needs on @p comm, for caching split
 * comms. */
void xfer_sched_comm_key(const xfer_sched_t *s, int comm, int slot, char *key, size_t keylen);

#endif /* XFER_SCHED_H */
