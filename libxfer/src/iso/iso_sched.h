/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Isomorphic sparse collectives: schedules as data (seed-isomorphic §6-9, with errata E1-E3).
 *
 * Every process of a d-dimensional torus declares the same ordered list of s relative offsets
 * C^0..C^{s-1}. Process R sends its block i to R + C^i and receives block i from R - C^i. A
 * schedule is the same list of steps on every process (it depends on the offsets only), so the
 * part k a process sends in a step is the part k its peer receives in that step.
 *
 * A step moves one combined message: the process sends parts to R + vec and receives the same
 * list of parts from R - vec. Each part names a slot to read (send side) and a slot to write
 * (receive side) in three buffers, each slot one block:
 *   SEND  the caller's send blocks (s of them for all-to-all, one for allgather)
 *   RECV  the caller's receive blocks (s of them), also transit storage
 *   TMP   scratch slots owned by the executor (ntmp of them)
 * A step whose vector is zero is a local step (a copy; not a round). Builders: iso_straight.c,
 * iso_torus.c, iso_direct.c. Nothing here communicates: iso_lower.c turns the step list into
 * each process's schedule of the one engine (sched/exec.c runs it), xfer_iso_sched_verify()
 * checks the step list on every process of the torus.
 */
#ifndef XFER_ISO_SCHED_H
#define XFER_ISO_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include <xfer/status.h>

enum { XFER_ISO_SEND = 0, XFER_ISO_RECV = 1, XFER_ISO_TMP = 2 };
enum { XFER_ISO_OP_ALLTOALL = 0, XFER_ISO_OP_ALLGATHER = 1 };
enum { XFER_ISO_MAXDIMS = 8 };
enum { XFER_ISO_NALGOS = 4 }; /* straight, posted, torus, direct */

/* The neighbourhood, shared by all processes (the builders' input). */
typedef struct xfer_iso_nbh {
    int d;                         /* dimensions */
    int dims[XFER_ISO_MAXDIMS];    /* torus extents */
    int periods[XFER_ISO_MAXDIMS]; /* 1: periodic */
    int s;                         /* offsets */
    const int *off;                /* s * d, row i is C^i */
} xfer_iso_nbh_t;

typedef struct xfer_iso_part {
    uint8_t sbuf, rbuf; /* XFER_ISO_SEND/RECV/TMP */
    int sslot, rslot;   /* block slots in those buffers */
    int block;          /* the offset index the data belongs to (reports, checks) */
} xfer_iso_part_t;

typedef struct xfer_iso_step {
    int vec[XFER_ISO_MAXDIMS]; /* send to R + vec, receive from R - vec; all zero: local */
    int first, nparts;         /* parts[first .. first + nparts) */
} xfer_iso_step_t;

typedef struct xfer_iso_sched {
    const char *algo; /* "straight", "posted", "torus", "direct" */
    int algo_id;      /* its index among those (the processes' agreement compares it) */
    int op;           /* XFER_ISO_OP_* */
    int concurrent;   /* steps are independent: the executor may run them all at once */
    int d, s;
    xfer_iso_step_t *steps;
    int nsteps, steps_cap;
    xfer_iso_part_t *parts;
    int nparts, parts_cap;
    int ntmp; /* TMP slots the executor must provide */
    xfer_status_t error;
} xfer_iso_sched_t;

/* Figures of a neighbourhood (seed-isomorphic §11, corrected D). */
typedef struct xfer_iso_counts {
    int s;
    int D;  /* torus rounds: sum over dims of (max positive + max |negative|) */
    long V; /* all-to-all torus volume in blocks: sum of ||C^i||_1 */
    long W; /* allgather torus volume (drop-off trie) */
    int direct_rounds;
    long direct_V; /* all-to-all direct volume: sum of nnz(C^i) */
    long direct_W; /* allgather direct volume: nonzero trie edges */
    int self;      /* offsets equal to zero (local copies) */
} xfer_iso_counts_t;

typedef xfer_status_t (*xfer_iso_builder_fn)(const xfer_iso_nbh_t *n, int op, xfer_iso_sched_t *s);

xfer_status_t xfer_iso_build_straight(const xfer_iso_nbh_t *n, int op, xfer_iso_sched_t *s);
xfer_status_t xfer_iso_build_posted(const xfer_iso_nbh_t *n, int op, xfer_iso_sched_t *s);
xfer_status_t xfer_iso_build_torus(const xfer_iso_nbh_t *n, int op, xfer_iso_sched_t *s);
xfer_status_t xfer_iso_build_direct(const xfer_iso_nbh_t *n, int op, xfer_iso_sched_t *s);

/* Schedule object. */
void xfer_iso_sched_init(xfer_iso_sched_t *s, const char *algo, int op, int d, int sn);
void xfer_iso_sched_fini(xfer_iso_sched_t *s);
/* Open a step towards @p vec (d entries); parts appended next belong to it. */
void xfer_iso_sched_step(xfer_iso_sched_t *s, const int *vec);
void xfer_iso_sched_part(xfer_iso_sched_t *s, int block, int sbuf, int sslot, int rbuf, int rslot);
/* Drop the last step when it got no parts. */
void xfer_iso_sched_close(xfer_iso_sched_t *s);
/* Rounds: steps with a nonzero vector (1 for a concurrent schedule that has any). */
int xfer_iso_sched_rounds(const xfer_iso_sched_t *s);
/* Blocks sent over the network by one process (parts of non-local steps). */
long xfer_iso_sched_volume(const xfer_iso_sched_t *s);

/* Build the schedule of algorithm @p algo ("straight", "posted", "torus", "direct") for @p op. */
xfer_status_t xfer_iso_sched_build(const xfer_iso_nbh_t *n, const char *algo, int op,
                                   xfer_iso_sched_t *s);

xfer_status_t xfer_iso_counts(const xfer_iso_nbh_t *n, xfer_iso_counts_t *c);

/* Symbolic run of @p s on every process of the torus: checks that each part reads a slot that
 * holds data, that no slot is both read and written (or written twice) in one step, and that
 * every receive block ends holding the block of R - C^i (untouched where a non-periodic
 * neighbour is missing). XFER_ERR_VERIFY with the first violation in xfer_last_error(). */
xfer_status_t xfer_iso_sched_verify(const xfer_iso_nbh_t *n, const xfer_iso_sched_t *s);

/* Torus rank arithmetic (row-major coordinates, as MPI_Cart_create). -1 when @p rank + @p vec
 * leaves a non-periodic dimension. */
int xfer_iso_shift(const xfer_iso_nbh_t *n, int rank, const int *vec, int sign);
int xfer_iso_size(const xfer_iso_nbh_t *n);

/* ---- prefix trie of the offsets (allgather: shared prefixes move once) -------------------------
 * Dimensions are visited in the order perm[]; level L holds the distinct prefixes of length L of
 * the offsets sorted lexicographically in that order. A node at level L > 0 holds, at process R,
 * the block of R - (its prefix); the root holds the process's own block. Storage: the root is
 * SEND slot 0; a child reached by a zero coordinate shares its parent's slot; any other node
 * lives in the RECV slot of the leaf at the end of its chain of zero coordinates when there is
 * one, else in a TMP slot (0 .. ninterior-1). Siblings are in increasing coordinate order. */
typedef struct xfer_iso_trie_node {
    int parent, level, val; /* val: coordinate along dimension perm[level - 1] */
    int buf, slot;          /* storage */
    int rep;                /* lowest offset index below (for reports) */
    int dirmax[2];          /* largest child coordinate in + ([0]) and |-| ([1]) direction */
} xfer_iso_trie_node_t;

typedef struct xfer_iso_trie {
    int d, s;
    int perm[XFER_ISO_MAXDIMS];
    xfer_iso_trie_node_t *nodes;
    int nnodes;
    int level_start[XFER_ISO_MAXDIMS + 2]; /* level L: nodes [level_start[L], level_start[L+1]) */
    int *leaf;                             /* s entries: the leaf node of offset i */
    int ninterior;                         /* TMP slots taken by interior nodes */
} xfer_iso_trie_t;

xfer_status_t xfer_iso_trie_build(const xfer_iso_nbh_t *n, xfer_iso_trie_t *t);
void xfer_iso_trie_free(xfer_iso_trie_t *t);
/* The local step that puts every leaf's block into RECV slot i of each offset i mapping to it
 * (offsets equal to zero, duplicated offsets). */
void xfer_iso_trie_finish(const xfer_iso_trie_t *t, xfer_iso_sched_t *s);

/* The schedule of the engine (sched/sched.h) that process @p rank runs for @p is: one round per
 * step (one round in all for a concurrent schedule), each step a combined receive from R - vec
 * and send to R + vec, offsets and lengths in blocks (iso_lower.c). */
struct xfer_sched;
xfer_status_t xfer_iso_lower(const xfer_iso_nbh_t *n, const xfer_iso_sched_t *is, int rank,
                             struct xfer_sched **out);

/* Lower @p is for every process of the torus and run the schedules together through the
 * engine's simulator (sched/sim.h: availability, ports, races, deadlock, and every receive
 * block holding the right process's block, edges untouched). @p opts, @p stats may be NULL. */
struct xfer_sim_opts;
struct xfer_sim_stats;
xfer_status_t xfer_iso_sched_simulate(const xfer_iso_nbh_t *n, const xfer_iso_sched_t *is,
                                      const struct xfer_sim_opts *opts,
                                      struct xfer_sim_stats *stats);

/* Shared by the torus and direct builders. */
xfer_status_t xfer_iso_need_periodic(const xfer_iso_nbh_t *n, const char *algo);
void xfer_iso_a2a_part(xfer_iso_sched_t *s, int i, int hops, int first);
void xfer_iso_a2a_self(const xfer_iso_nbh_t *n, xfer_iso_sched_t *s);

#endif /* XFER_ISO_SCHED_H */
