/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file iso.h
 * @brief Isomorphic sparse collectives: neighbourhood allgather and all-to-all with
 *        message-combining schedules (Träff et al. 2016; docs/isomorphic.md).
 *
 * The processes of an intracommunicator are laid out on a d-dimensional torus (row-major
 * coordinates, as MPI_Cart_create without reordering). Every process declares the same ordered
 * list of s relative offsets C^0..C^{s-1}: it sends block i to the process at R + C^i and
 * receives block i from R - C^i. The result equals MPI_Neighbor_alltoall / allgather on a
 * distributed-graph communicator whose sources are R - C^i and destinations R + C^i, in that
 * order; in a non-periodic dimension a neighbour outside the grid is MPI_PROC_NULL (its receive
 * block is left untouched).
 *
 * Algorithms:
 *  - `straight`: s rounds, one block each (the baseline);
 *  - `posted`: the same s exchanges posted at once (as MPI_Neighbor_* implementations do);
 *  - `torus`: D rounds of combined messages, blocks forwarded one hop per round along the
 *    dimensions (D = sum over dimensions of the largest positive plus the largest negative
 *    coordinate); allgather forwards shared offset prefixes once;
 *  - `direct`: one round per distinct nonzero coordinate value per dimension;
 *  - `auto`: across nodes, torus or direct below the alpha-beta cut-off
 *    m < alpha (s - D) / (beta (V - s)) and posted above it; on one shared-memory node, posted
 *    (messages there are memory copies: combining saves nothing; docs/PERFORMANCE.md).
 * Each round is one send and one receive whose MPI datatypes point straight into the send,
 * receive and scratch buffers; persistent operations build them once.
 */
#ifndef XFER_ISO_H
#define XFER_ISO_H

#include <mpi.h>

#include <xfer/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque neighbourhood: a torus embedding of a communicator and an offset list. */
typedef struct xfer_iso xfer_iso_t;

/** A schedule of the engine (xfer/coll.h); declared here as well for xfer_iso_schedule(). */
typedef struct xfer_sched xfer_sched_t;

/** Opaque persistent isomorphic operation. */
typedef struct xfer_iso_req xfer_iso_req_t;

/** Options of an isomorphic operation. Initialise with xfer_iso_opts_init(). */
typedef struct xfer_iso_opts {
    const char *algorithm; /**< "auto", "straight", "posted", "torus" or "direct"; NULL:
                                XFER_ISO_ALGORITHM, else auto */
    double alpha;          /**< model latency, s; <= 0: XFER_ALPHA, default 2e-6 */
    double beta;           /**< model time per byte, s/B; <= 0: XFER_BETA, default 1e-10 */
    int timeout_ms;        /**< -1: XFER_TIMEOUT_MS (default none); 0: none; > 0: bound on one
                                operation, then XFER_ERR_TIMEOUT */
    int one_node;          /**< auto on one shared-memory node: -1 (default): detected at
                                xfer_iso_create; 1: assume it; 0: decide by the alpha-beta
                                model as across nodes. On one node auto takes posted */
} xfer_iso_opts_t;

/** Figures of a neighbourhood, in blocks per process. */
typedef struct xfer_iso_info {
    int s;             /**< offsets */
    int D;             /**< torus rounds */
    long V;            /**< torus all-to-all volume: sum of ||C^i||_1 */
    long W;            /**< torus allgather volume (prefix trie with drop-off) */
    int direct_rounds; /**< torus-direct rounds */
    long direct_V;     /**< torus-direct all-to-all volume: sum of nonzero coordinates */
    long direct_W;     /**< torus-direct allgather volume: nonzero trie edges */
} xfer_iso_info_t;

/** Defaults for @p opts (everything from the environment or automatic). */
XFER_PUBLIC xfer_status_t xfer_iso_opts_init(xfer_iso_opts_t *opts);

/**
 * Attach a torus embedding and an offset list to a duplicate of @p comm. Collective over the
 * intracommunicator @p comm. @p dims (@p ndims extents, product = size of @p comm) and
 * @p periods (nonzero: periodic; NULL: all periodic) describe the torus; @p offsets holds
 * @p s rows of @p ndims relative coordinates. All processes must pass identical arguments: a
 * hash of them is compared at creation and a difference is XFER_ERR_MISMATCH on every process
 * (naming a differing rank), never a deadlock. Caller owns *@p iso (xfer_iso_free()).
 */
XFER_PUBLIC xfer_status_t xfer_iso_create(MPI_Comm comm, int ndims, const int dims[],
                                          const int periods[], int s, const int offsets[],
                                          xfer_iso_t **iso);

/** Release @p *iso (NULL accepted) and set it to NULL. Collective over its communicator.
 *  Requests made from it must be freed first. */
XFER_PUBLIC xfer_status_t xfer_iso_free(xfer_iso_t **iso);

/** The figures of @p iso's neighbourhood (local, no communication). */
XFER_PUBLIC xfer_status_t xfer_iso_get_info(const xfer_iso_t *iso, xfer_iso_info_t *info);

/**
 * Isomorphic all-to-all: block i of @p sbuf (@p scount elements of @p stype, blocks
 * consecutive by extent) goes to R + C^i; block i of @p rbuf comes from R - C^i. Collective
 * over @p iso. The type signatures of scount x stype and rcount x rtype must match.
 */
XFER_PUBLIC xfer_status_t xfer_iso_alltoall(const void *sbuf, int scount, MPI_Datatype stype,
                                            void *rbuf, int rcount, MPI_Datatype rtype,
                                            xfer_iso_t *iso, const xfer_iso_opts_t *opts);

/** Isomorphic allgather: the one block of @p sbuf goes to every R + C^i; block i of @p rbuf
 *  comes from R - C^i. Collective over @p iso. */
XFER_PUBLIC xfer_status_t xfer_iso_allgather(const void *sbuf, int scount, MPI_Datatype stype,
                                             void *rbuf, int rcount, MPI_Datatype rtype,
                                             xfer_iso_t *iso, const xfer_iso_opts_t *opts);

/**
 * Persistent all-to-all: the algorithm is chosen, the schedule built and every round's
 * datatypes committed once; each xfer_iso_start/xfer_iso_wait pair performs one operation.
 * Collective over @p iso. @p sbuf and @p rbuf must stay valid until xfer_iso_req_free().
 * Caller owns *@p req.
 */
XFER_PUBLIC xfer_status_t xfer_iso_alltoall_init(const void *sbuf, int scount, MPI_Datatype stype,
                                                 void *rbuf, int rcount, MPI_Datatype rtype,
                                                 xfer_iso_t *iso, const xfer_iso_opts_t *opts,
                                                 xfer_iso_req_t **req);

/** Persistent allgather (see xfer_iso_alltoall_init()). */
XFER_PUBLIC xfer_status_t xfer_iso_allgather_init(const void *sbuf, int scount, MPI_Datatype stype,
                                                  void *rbuf, int rcount, MPI_Datatype rtype,
                                                  xfer_iso_t *iso, const xfer_iso_opts_t *opts,
                                                  xfer_iso_req_t **req);

/** Begin one operation of @p req: its first round is posted. */
XFER_PUBLIC xfer_status_t xfer_iso_start(xfer_iso_req_t *req);

/** Complete the operation begun by xfer_iso_start(); the receive buffer then holds the
 *  result. A failure or timeout leaves the request unusable (free it). */
XFER_PUBLIC xfer_status_t xfer_iso_wait(xfer_iso_req_t *req);

/** Progress the operation begun by xfer_iso_start() without blocking: *@p flag is 1 when it
 *  has completed (the receive buffer then holds the result; start it again or free it), 0 when
 *  it is still running. Never waits for a peer. A failure or timeout leaves the request
 *  unusable (free it). */
XFER_PUBLIC xfer_status_t xfer_iso_test(xfer_iso_req_t *req, int *flag);

/** Release @p *req (NULL accepted; not while an operation is active) and set it to NULL. */
XFER_PUBLIC xfer_status_t xfer_iso_req_free(xfer_iso_req_t **req);

/** The algorithm @p req runs and its number of communication rounds. */
XFER_PUBLIC xfer_status_t xfer_iso_req_algorithm(const xfer_iso_req_t *req, const char **name,
                                                 int *rounds);

/** Standard neighbourhoods for xfer_iso_stencil(). */
typedef enum xfer_iso_stencil {
    XFER_ISO_MOORE = 0,          /**< every nonzero vector with |c_j| <= r: (2r + 1)^d - 1 */
    XFER_ISO_MOORE_POSITIVE = 1, /**< every nonzero vector with 0 <= c_j <= r: (r + 1)^d - 1 */
    XFER_ISO_VON_NEUMANN = 2     /**< one nonzero coordinate, |c_j| <= r: 2rd */
} xfer_iso_stencil_t;

/**
 * The offsets of a standard neighbourhood of @p radius in @p ndims dimensions, for
 * xfer_iso_create(): written to @p offsets (room for @p max rows of @p ndims), their number to
 * *@p s. Order: coordinate 0 varies fastest, from -r (0 for the positive kind) up. No MPI needed.
 * XFER_ERR_TOO_LARGE when more than @p max rows would be needed (*@p s then says how many).
 */
XFER_PUBLIC xfer_status_t xfer_iso_stencil(xfer_iso_stencil_t kind, int ndims, int radius, int max,
                                           int offsets[], int *s);

/**
 * Build the schedule of @p algorithm ("straight", "posted", "torus", "direct") for all-to-all
 * (@p allgather 0) or allgather (1) on the given torus and offsets, and run it symbolically on
 * every process: each block must reach R + C^i and no step may read a slot before it holds
 * data or touch a slot twice. No MPI needed. *@p rounds and *@p volume (blocks sent per
 * process) may be NULL. XFER_ERR_VERIFY names the first violation.
 */
XFER_PUBLIC xfer_status_t xfer_iso_simulate(const char *algorithm, int allgather, int ndims,
                                            const int dims[], const int periods[], int s,
                                            const int offsets[], int *rounds, long *volume);

/**
 * The schedule process @p rank (row-major torus coordinates) runs for @p algorithm, as the
 * engine executes it (offsets and lengths in blocks), for printing with xfer_sched_dump().
 * No MPI needed. Caller owns *@p sched and frees it with xfer_sched_free() (xfer/sim.h).
 */
XFER_PUBLIC xfer_status_t xfer_iso_schedule(const char *algorithm, int allgather, int ndims,
                                            const int dims[], const int periods[], int s,
                                            const int offsets[], int rank, xfer_sched_t **sched);

#ifdef __cplusplus
}
#endif

#endif /* XFER_ISO_H */
