/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file coll.h
 * @brief Inter-group allgather / allgatherv on an MPI intercommunicator.
 *
 * Semantics are exactly those of MPI_Allgather / MPI_Allgatherv on an intercommunicator:
 * every rank of each group receives the concatenation, in rank order, of the blocks the
 * ranks of the *other* group contribute. Half duplex is the case where one group
 * contributes 0 bytes (scount = 0 there, rcount(s) = 0 on the other side).
 *
 * All calls are collective over both groups of the intercommunicator and must be made with
 * matching arguments, in the same order, on every rank, as for the MPI calls they replace.
 * The first call on an intercommunicator builds and caches derived communicators on it
 * (a merged communicator, the local group communicator); they are freed when the
 * intercommunicator is freed or at MPI_Finalize.
 */
#ifndef XFER_COLL_H
#define XFER_COLL_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

#include <xfer/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup xfer_coll_opts Options of a collective call
 *
 * Every option's value 0 means "not set here": the option's environment variable where it has
 * one, else its built-in default. xfer_coll_opts_init() sets every option to 0 (and records the
 * struct's size, which a merely zeroed struct lacks). Enumerated options name their 0
 * `..._FROM_ENV` (or `AUTO`/`ALLOW` when there is no environment variable); numeric ones have a
 * named constant for it (#XFER_TIMEOUT_FROM_ENV, #XFER_HIER_SENDERS_FROM_ENV).
 * @{
 */

/** Duplex mode requested by the caller. */
typedef enum xfer_duplex {
    XFER_DUPLEX_AUTO = 0, /**< derived from the counts: half when one side sends 0 bytes */
    XFER_DUPLEX_HALF = 1, /**< assert one side contributes nothing (error otherwise) */
    XFER_DUPLEX_FULL = 2  /**< both sides may contribute */
} xfer_duplex_t;

/** What to do when a forced algorithm cannot handle the call's shape. */
typedef enum xfer_fallback {
    XFER_FALLBACK_FROM_ENV = 0,          /**< XFER_FALLBACK (`error` or `warn`), else ERROR */
    XFER_FALLBACK_ERROR = 1,             /**< return XFER_ERR_NOT_SUPPORTED */
    XFER_FALLBACK_WARN = 2,              /**< print a warning and use the automatic choice */
    XFER_FALLBACK_FROM_ENV_ELSE_WARN = 3 /**< XFER_FALLBACK, else WARN (an interposer: an
                                              unmodified program should run) */
} xfer_fallback_t;

/** Former name of #XFER_FALLBACK_FROM_ENV (same value and meaning). */
#define XFER_FALLBACK_DEFAULT XFER_FALLBACK_FROM_ENV

/** The cross-group argument check (docs/collectives.md, "Errors and safety"). */
typedef enum xfer_check {
    XFER_CHECK_FROM_ENV = 0, /**< XFER_CHECK (nonzero: on), else off */
    XFER_CHECK_OFF = 1,      /**< no check */
    XFER_CHECK_ON = 2        /**< the groups compare their arguments before moving data */
} xfer_check_t;

/** How the ranks of a node synchronise around node-hierarchical staging. */
typedef enum xfer_hier_sync {
    XFER_HIER_SYNC_FROM_ENV = 0, /**< XFER_HIER_SYNC (`flags` or `barrier`), else FLAGS */
    XFER_HIER_SYNC_FLAGS = 1,    /**< per-stripe flags, no node barrier: early ranks leave */
    XFER_HIER_SYNC_BARRIER = 2   /**< node barriers around the exchange */
} xfer_hier_sync_t;

/** The allgather inside one group that fc_half, fc_full and others end with. */
typedef enum xfer_intra_allgather {
    XFER_INTRA_ALLGATHER_FROM_ENV = 0, /**< XFER_INTRA_ALLGATHER (`auto`, `mpi`, `ring`), else
                                            AUTO */
    XFER_INTRA_ALLGATHER_MPI = 1,      /**< the MPI library's MPI_Allgatherv */
    XFER_INTRA_ALLGATHER_RING = 2,     /**< libxfer's ring of MPI_Sendrecv */
    XFER_INTRA_ALLGATHER_AUTO = 3      /**< the ring for blocks of 64 KiB and more, else MPI */
} xfer_intra_allgather_t;

/** Whether the automatic choice (algorithm auto) may use node-hierarchical staging, or must. */
typedef enum xfer_hier_auto {
    XFER_HIER_AUTO_ALLOW = 0,  /**< the cost model may choose it (default; no environment
                                    variable) */
    XFER_HIER_AUTO_NEVER = 1,  /**< the automatic choice stays flat */
    XFER_HIER_AUTO_ALWAYS = 2, /**< stage through nodes around the algorithm named (or the
                                   automatic inner choice): as algorithm "hier:<name>" */
    XFER_HIER_AUTO_FLAT = 3    /**< never stage: as NEVER, and "hier:<name>" (named here or by
                                    XFER_ALGORITHM) runs <name> flat ("hier", "hier:auto" and
                                    "hier:direct" run auto), with one warning per process. For
                                    plans that cannot free node windows collectively (a
                                    nonblocking call's request may complete on each rank at
                                    any time) */
} xfer_hier_auto_t;

/** Whether auto learns from the calls it times: calls of one signature (intercommunicator,
 *  group sizes, direction, size class) try the algorithms the cost model cannot tell apart, and
 *  keep the one measured fastest on every rank (docs/PERFORMANCE.md, "auto that learns"). */
typedef enum xfer_coll_learn {
    XFER_COLL_LEARN_FROM_ENV = 0, /**< XFER_LEARN (0: off), else on */
    XFER_COLL_LEARN_OFF = 1,      /**< the model's (or the tuning file's) choice, every call */
    XFER_COLL_LEARN_ON = 2        /**< learn */
} xfer_coll_learn_t;

/** xfer_coll_opts_t.timeout_ms: XFER_TIMEOUT_MS, else no bound. */
#define XFER_TIMEOUT_FROM_ENV 0
/** xfer_coll_opts_t.timeout_ms: no bound, whatever XFER_TIMEOUT_MS says. */
#define XFER_TIMEOUT_NONE (-1)
/** xfer_coll_opts_t.hier_senders: XFER_HIER_SENDERS, else 1. */
#define XFER_HIER_SENDERS_FROM_ENV 0

/**
 * Options of a collective call. A NULL options pointer means "all defaults".
 *
 * Initialise with xfer_coll_opts_init(), which records the size of the struct the caller was
 * compiled with in @c struct_size, then set fields. Fields are only ever appended, and a newer
 * field's default is 0: the library reads only the fields within @c struct_size (an older
 * caller's struct) and takes defaults for the rest; a newer caller's struct is accepted when
 * the fields this library does not know are 0. A @c struct_size smaller than the first
 * layout (@c struct_size to @c timeout_ms) or implausibly large (a struct that was never
 * initialised) makes the call return XFER_ERR_INVALID_ARG.
 *
 * Precedence: built-in default < environment (XFER_ALGORITHM, XFER_FALLBACK, XFER_LEARN,
 * XFER_CHECK, XFER_TIMEOUT_MS, XFER_HIER_SENDERS, XFER_HIER_SYNC, XFER_INTRA_ALLGATHER) < a field
 * set here. A value outside its enumeration, a negative hier_senders or a timeout_ms below
 * #XFER_TIMEOUT_NONE returns XFER_ERR_INVALID_ARG naming the field.
 */
typedef struct xfer_coll_opts {
    size_t struct_size;         /**< sizeof(xfer_coll_opts_t) of the caller's build; set by
                                     xfer_coll_opts_init(), must stay first */
    const char *algorithm;      /**< registry name, "hier", "hier:<name>" or "auto"; NULL:
                                     XFER_ALGORITHM, else auto */
    xfer_duplex_t duplex;       /**< see xfer_duplex_t */
    xfer_fallback_t fallback;   /**< see xfer_fallback_t */
    xfer_check_t check;         /**< see xfer_check_t */
    int timeout_ms;             /**< bound on one operation in ms (> 0), #XFER_TIMEOUT_NONE or
                                     #XFER_TIMEOUT_FROM_ENV */
    int hier_senders;           /**< node staging: ranks per node moving data across the groups
                                     (> 0), or #XFER_HIER_SENDERS_FROM_ENV */
    xfer_hier_sync_t hier_sync; /**< see xfer_hier_sync_t */
    xfer_intra_allgather_t intra_allgather; /**< see xfer_intra_allgather_t; must be alike
                                                 within a group */
    xfer_hier_auto_t hier_auto;             /**< see xfer_hier_auto_t */
    xfer_coll_learn_t learn;                /**< see xfer_coll_learn_t; must be alike in both
                                                 groups */
    int once; /**< nonzero: a plan that will be started once (a nonblocking call made into a
                   plan). auto learns for it as for a blocking call, at its creation, instead of
                   trying candidates over the plan's own starts */
} xfer_coll_opts_t;

/**
 * Fill the first @p size bytes of @p opts with defaults (every field 0) and set
 * @c struct_size to @p size; nothing past @p size is written. Call it through
 * xfer_coll_opts_init(), which passes the size of the caller's own xfer_coll_opts_t.
 * @p size must be at least the first layout's (up to @c timeout_ms): XFER_ERR_INVALID_ARG
 * otherwise, as for a NULL @p opts.
 */
XFER_PUBLIC xfer_status_t xfer_coll_opts_init_sized(xfer_coll_opts_t *opts, size_t size);

/** Fill @p opts with defaults (everything taken from the environment or auto) and record the
 *  size of the struct this caller was compiled with (see xfer_coll_opts_t). */
static inline xfer_status_t xfer_coll_opts_init(xfer_coll_opts_t *opts)
{
    return xfer_coll_opts_init_sized(opts, sizeof(*opts));
}

/** @} */

/** The name of the algorithm the calling thread's last completed collective operation ran
 *  ("fc_full", "hier:direct", ...): with auto, what it chose for that call. The string stays
 *  valid while libxfer is initialised. */
XFER_PUBLIC xfer_status_t xfer_last_op_algorithm(const char **name);

/** Timing of the calling rank's last collective operation (all times MPI_Wtime seconds). */
typedef struct xfer_op_stats {
    double t_enter, t_exit; /**< entry and exit of the call (xfer_start/xfer_wait for plans) */
    double intra_s;         /**< node staging: copies in and out of shared memory */
    double inter_s;         /**< the transfer between the groups (leaders, or flat algorithms) */
    double wait_s;          /**< waiting for the node's other ranks (deposits, results) */
    int hier;               /**< the operation used node-hierarchical staging */
    int leader;             /**< this rank moved data between the groups */
    int roles;              /**< bit 1: it sent between the groups; bit 2: it received */
} xfer_op_stats_t;

/** Opaque persistent operation (see xfer_allgatherv_inter_init). */
typedef struct xfer_plan xfer_plan_t;

/** Opaque schedule: the rounds of operations one rank executes. */
typedef struct xfer_sched xfer_sched_t;

/**
 * Inter-group allgather. Collective over both groups of @p inter.
 * @p sbuf holds @p scount elements of @p stype; @p rbuf receives @p rcount elements of
 * @p rtype from each remote rank, in remote rank order. MPI_IN_PLACE is not allowed
 * (as in MPI for intercommunicators).
 */
XFER_PUBLIC xfer_status_t xfer_allgather_inter(const void *sbuf, int scount, MPI_Datatype stype,
                                               void *rbuf, int rcount, MPI_Datatype rtype,
                                               MPI_Comm inter, const xfer_coll_opts_t *opts);

/**
 * Inter-group allgatherv. Collective over both groups of @p inter. Remote rank i's block
 * lands at @p rbuf + rdispls[i] * extent(rtype) and holds rcounts[i] elements.
 */
XFER_PUBLIC xfer_status_t xfer_allgatherv_inter(const void *sbuf, int scount, MPI_Datatype stype,
                                                void *rbuf, const int rcounts[],
                                                const int rdispls[], MPI_Datatype rtype,
                                                MPI_Comm inter, const xfer_coll_opts_t *opts);

/**
 * Persistent inter-group allgather: arguments are bound once, the algorithm is chosen and
 * its schedule built once; each xfer_start/xfer_wait pair performs one operation.
 * Collective over @p inter. @p sbuf and @p rbuf must stay valid until xfer_plan_free().
 * Caller owns *@p plan and releases it with xfer_plan_free().
 */
XFER_PUBLIC xfer_status_t xfer_allgather_inter_init(const void *sbuf, int scount,
                                                    MPI_Datatype stype, void *rbuf, int rcount,
                                                    MPI_Datatype rtype, MPI_Comm inter,
                                                    const xfer_coll_opts_t *opts,
                                                    xfer_plan_t **plan);

/** Persistent inter-group allgatherv; @p rcounts and @p rdispls are copied. */
XFER_PUBLIC xfer_status_t xfer_allgatherv_inter_init(const void *sbuf, int scount,
                                                     MPI_Datatype stype, void *rbuf,
                                                     const int rcounts[], const int rdispls[],
                                                     MPI_Datatype rtype, MPI_Comm inter,
                                                     const xfer_coll_opts_t *opts,
                                                     xfer_plan_t **plan);

/** Begin one operation of @p plan. The send buffer is read from here on. */
XFER_PUBLIC xfer_status_t xfer_start(xfer_plan_t *plan);

/**
 * Complete the operation begun by xfer_start(). Communication progresses inside
 * xfer_wait()/xfer_test(). On return the receive buffer holds the result.
 */
XFER_PUBLIC xfer_status_t xfer_wait(xfer_plan_t *plan);

/** Progress the active operation without blocking; *@p done is 1 once it completed. */
XFER_PUBLIC xfer_status_t xfer_test(xfer_plan_t *plan, int *done);

/** Statistics of the calling thread's last completed operation. */
XFER_PUBLIC xfer_status_t xfer_last_op_stats(xfer_op_stats_t *stats);

/** Release @p *plan (NULL accepted) and set it to NULL. Collective over both groups (it frees
 *  the plan's communicators and, for hierarchical plans, its shared windows). */
XFER_PUBLIC xfer_status_t xfer_plan_free(xfer_plan_t **plan);

/** Name of the algorithm the plan runs (after automatic selection and fallback). */
XFER_PUBLIC xfer_status_t xfer_plan_algorithm(const xfer_plan_t *plan, const char **name);

/** The calling rank's schedule in @p plan (for `native`, one task: the MPI library's call). */
XFER_PUBLIC xfer_status_t xfer_plan_sched(const xfer_plan_t *plan, const xfer_sched_t **sched);

/** Print @p sched in a readable form: one line per operation, grouped by round. */
XFER_PUBLIC xfer_status_t xfer_sched_dump(const xfer_sched_t *sched, FILE *out);

/** Properties of a registered algorithm, for listings such as `xfer-info`. */
typedef struct xfer_algo_info {
    const char *name;         /**< user-facing name (YAML, XFER_ALGORITHM) */
    const char *summary;      /**< one line */
    const char *restrictions; /**< shapes it refuses, "none" if any */
} xfer_algo_info_t;

/** Number of registered algorithms. */
XFER_PUBLIC xfer_status_t xfer_algorithm_count(int *count);

/** Information on registered algorithm @p index (0 <= index < count). */
XFER_PUBLIC xfer_status_t xfer_algorithm_info(int index, xfer_algo_info_t *info);

/** Properties of a registered algorithm, one bit each (xfer_algorithm_flags). The workflow
 *  file's checks, the runtime and the automatic choice read them; `xfer-info` lists them. */
typedef enum xfer_algo_flag {
    XFER_ALGO_NATIVE = 1 << 0,    /**< the MPI library's own collective: libxfer builds no
                                       schedule */
    XFER_ALGO_AUTO_HALF = 1 << 1, /**< a candidate of `auto` when one group sends nothing */
    XFER_ALGO_AUTO_FULL = 1 << 2, /**< a candidate of `auto` when both groups send */
    XFER_ALGO_RING = 1 << 3,      /**< talks to ring neighbours only: usable on a ring topology
                                       (and auto's only candidates there) */
    XFER_ALGO_HALF_ONLY = 1 << 4, /**< moves data one way only: one group must send 0 bytes */
    XFER_ALGO_SPLITS = 1 << 5     /**< its schedules may split the groups into subgroups whose
                                       communicators a plan makes when it forms: a recount for
                                       other counts may need others */
} xfer_algo_flag_t;

/** Every flag this version defines (the bits of xfer_algo_flag_t). */
#define XFER_ALGO_FLAGS_ALL 0x3fu

/** The flags of registered algorithm @p index: a set of xfer_algo_flag_t bits. (A separate
 *  call rather than a field of xfer_algo_info_t, which callers allocate: growing it would
 *  make the library write past the end of an older program's struct.) */
XFER_PUBLIC xfer_status_t xfer_algorithm_flags(int index, unsigned *flags);

/** Name ("ring", "half_only", ...) and one-line meaning of one flag bit @p flag; either
 *  output may be NULL. XFER_ERR_INVALID_ARG if @p flag is not exactly one defined bit. */
XFER_PUBLIC xfer_status_t xfer_algorithm_flag_info(unsigned flag, const char **name,
                                                   const char **meaning);

#ifdef __cplusplus
}
#endif

#endif /* XFER_COLL_H */
