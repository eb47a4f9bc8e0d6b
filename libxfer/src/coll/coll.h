/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective layer: turns a user call (buffers, counts, MPI datatypes, options) into a shape,
 * selects an algorithm, builds and runs its schedule. Sits above select/ and below pmpi/. */
#ifndef XFER_COLL_INTERNAL_H
#define XFER_COLL_INTERNAL_H

#include <mpi.h>
#include <stdint.h>

#include <xfer/coll.h>

#include "../sched/exec.h"
#include "hier.h"
#include "../sched/sched.h"
#include "../select/select.h"
#include "../select/selector.h"
#include "../topo/topo.h"

enum { XFER_CALL_ALLGATHER = 1, XFER_CALL_ALLGATHERV = 2 };

/* The user's arguments, as given. */
typedef struct xfer_call {
    int kind;
    const void *sbuf;
    int scount;
    MPI_Datatype stype;
    void *rbuf;
    int rcount;         /* ALLGATHER */
    const int *rcounts; /* ALLGATHERV */
    const int *rdispls; /* ALLGATHERV */
    MPI_Datatype rtype;
    MPI_Comm inter;
} xfer_call_t;

/* Options after applying the environment. */
typedef struct xfer_resolved_opts {
    const char *algorithm; /* NULL: auto */
    int algorithm_from_env;
    xfer_duplex_t duplex;
    int fallback_warn;
    int fallback_from_env;
    int check;
    int timeout_ms;
    int hier;               /* node-hierarchical staging asked for ("hier", "hier:<inner>") */
    const char *hier_inner; /* NULL: auto at node level */
    int hier_senders;
    int hier_sync;       /* XFER_HIER_FLAGS or XFER_HIER_BARRIER */
    int intra_allgather; /* XFER_INTRA_MPI, _RING or _AUTO (exec.h): opts.intra_allgather's values
                          */
    int no_auto_hier;    /* opts.hier_auto < 0: the automatic choice stays flat */
    int hier_measured;   /* hier_inner is auto's measured preference (XFER_TUNING): when it cannot
                            run the node-level shape, the model chooses instead */
    size_t win_s_min, win_r_min; /* node staging: reserve at least this much room (S and R per
                                    parity), for recounts (xfer_plan_recount) */
    int reselect; /* auto's choice: a flat plan's recount chooses again for the new counts, among
                     the algorithms that never split the groups (xfer_plan_recount) */
    int learn;    /* xfer_coll_learn_t: FROM_ENV leaves it to the selector (XFER_LEARN) */
    int once;     /* the plan is started once: it learns at its creation, as a blocking call */
} xfer_resolved_opts_t;

typedef struct xfer_dtype_info {
    MPI_Datatype type;
    int size;
    MPI_Aint lb, extent, true_lb, true_extent;
    int contiguous; /* n elements occupy n*size bytes from buf + true_lb */
} xfer_dtype_info_t;

xfer_status_t xfer_dtype_query(MPI_Datatype type, const char *what, xfer_dtype_info_t *out);
/* Hash of the type signature of @p count elements of @p type (the sequence of basic types,
 * independent of layout): equal for matching send and receive types. */
xfer_status_t xfer_dtype_signature(MPI_Datatype type, int count, uint64_t *hash);

struct xfer_plan {
    xfer_call_t call;
    int *rcounts_copy, *rdispls_copy; /* persistent allgatherv owns copies */
    xfer_resolved_opts_t opts;
    xfer_topo_t *topo;
    const xfer_algo_t *algo;
    int persistent;
    xfer_dtype_info_t sinfo, rinfo;
    size_t my_bytes;

    xfer_shape_t shape;
    size_t *cnt[2], *pre[2];

    xfer_sched_t *sched;
    MPI_Comm merged;            /* topo's (blocking) or the plan's own duplicate (persistent) */
    MPI_Comm comm[XFER_NCOMMS]; /* point-to-point communicators of the schedule (op->comm) */
    MPI_Comm *gcomm;            /* per schedule group */
    MPI_Comm local[2];          /* the group's own (main, stripe): its LOCAL groups' */
    MPI_Comm *owned;            /* communicators this plan created */
    int nowned;
    xfer_exec_t exec;
    int exec_ready;

    const void *send_ptr; /* packed contribution: user memory or stage_send */
    void *recv_ptr;       /* packed result: user memory or stage_recv */
    unsigned char *stage_send, *stage_recv, *tmp;
    MPI_Request native_req;       /* native: the MPI library's request */
    xfer_exec_task_t native_task; /* native: the schedule's one task */
    int active;                   /* the caller's operation: started, not yet completed */
    int running;       /* this plan's executor runs (for a learning plan, the plan p->run does) */
    xfer_hier_t *hier; /* node-hierarchical staging state (its schedule is sched) */
    char name[64];     /* algorithm name reported by xfer_plan_algorithm */
    xfer_op_stats_t stats;

    /* auto's learning (plan_learn.c) */
    xfer_selector_t *sel;
    int learn_due;      /* xfer_plan_select left the learned choice to be made */
    xfer_pick_t pick;   /* a plan made for one call: where its time goes */
    xfer_learn_t learn; /* a persistent plan's own state over its starts */
    xfer_learn_carrier_t carrier;
    struct xfer_plan **alt; /* the other candidates' plans (learn.cand[1..]), built alike */
    int nalt;
    struct xfer_plan *run; /* the plan running the current (or last) start: this or an alt */
    int run_slot;
    double learn_ref; /* the volume the plan's times are scaled to */
};

/* Resolve options (NULL allowed) against the environment. */
xfer_status_t xfer_opts_resolve(const xfer_coll_opts_t *opts, xfer_resolved_opts_t *out);

/* The plan's algorithm (p->algo, and p->opts.hier for node staging): the one named in its
 * options, or auto's choice. Sets p->name. Collective when a hierarchy is weighed. */
xfer_status_t xfer_plan_select(xfer_plan_t *p);

/* Does auto learn for this plan (opts.learn, else the selector's XFER_LEARN)? */
int xfer_plan_learns(const xfer_plan_t *p);

/* auto's learned choice, after xfer_plan_select and the argument check (when xfer_plan_select
 * left p->learn_due): collective over both groups when an agreement is due. */
xfer_status_t xfer_plan_select_learned(xfer_plan_t *p);

/* ---- a persistent plan's learning over its starts (plan_learn.c) ---- */

/* The plan named @p algo for @p call, persistent, without the check handshake: a learning plan's
 * other candidate. Collective over both groups. */
xfer_status_t xfer_plan_create_forced(const xfer_call_t *call, const xfer_coll_opts_t *opts,
                                      const char *algo, xfer_plan_t **out);

/* After @p p is prepared: its other candidates' plans. Collective over both groups. */
xfer_status_t xfer_plan_learn_build(xfer_plan_t *p, const xfer_call_t *call,
                                    const xfer_coll_opts_t *opts);

/* At a start: the agreement the last start carried is applied, a due one posted, and the plan
 * that runs this start chosen (p or an alt). */
xfer_status_t xfer_plan_learn_begin(xfer_plan_t *p, xfer_plan_t **run);

/* The carried agreement of the running start: *@p done when it completed (or there is none). */
xfer_status_t xfer_plan_learn_progress(xfer_plan_t *p, int blocking, int *done);

/* A start of @p p ran for @p seconds (its plan p->run). */
void xfer_plan_learn_record(xfer_plan_t *p, double seconds);

/* Learning ends (after a recount one candidate cannot take): the plan runs candidate 0. */
void xfer_plan_learn_stop(xfer_plan_t *p);

/* The other candidates' plans go (with @p mpi, their communicators too). */
void xfer_plan_learn_release(xfer_plan_t *p, int mpi);

/* Build a plan for @p call. Collective over both groups. */
xfer_status_t xfer_plan_create(const xfer_call_t *call, const xfer_coll_opts_t *opts,
                               int persistent, xfer_plan_t **out);

/* A persistent allgatherv plan whose node staging window (if it stages) holds at least @p win_s
 * and @p win_r bytes per parity, so that xfer_plan_recount can take larger node aggregates than
 * this call's. Collective over both groups. */
xfer_status_t xfer_plan_create_reserved(const xfer_call_t *call, const xfer_coll_opts_t *opts,
                                        size_t win_s, size_t win_r, xfer_plan_t **out);

/* The same persistent allgatherv plan for other buffers and byte counts, without any
 * communication: the algorithm, the communicators and the staging window stay; the schedule is
 * rebuilt for the new counts (its groups of the whole local group use the plan's local
 * communicator whether or not the first schedule had them; its split groups must be the first
 * schedule's). @p local_bytes: every rank of this group's contribution (what a plan's creation
 * would exchange). XFER_ERR_NOT_SUPPORTED when the plan cannot carry them (its algorithm does
 * not support the new shape, the schedule would need other split communicators, node staging
 * needs more room or another inner algorithm): the plan must then be freed. For a flat plan
 * whose algorithm never splits the groups (no XFER_ALGO_SPLITS) the verdict depends on the
 * counts only, so it is the same on every rank. The plan must not be active. Local. */
/* After a failure: the plan's memory goes; its communicators and windows, which ranks that
 * may be gone share, are left to MPI_Finalize (freeing them is collective and could wait for
 * ever). An active plan is left whole. */
void xfer_plan_abandon(xfer_plan_t **plan);

xfer_status_t xfer_plan_recount(xfer_plan_t *p, const void *sbuf, int scount, void *rbuf,
                                const int rcounts[], const int rdispls[],
                                const size_t local_bytes[]);

/* plan.c, for plan_recount.c: a plan's argument checks, its counts per group (allocated, then
 * their prefix sums and totals), its staging buffers; the tag of its point-to-point messages */
#define XFER_P2P_TAG 0x5846
xfer_status_t xfer_plan_validate(xfer_plan_t *p);
xfer_status_t xfer_plan_alloc_counts(xfer_plan_t *p, int g);
void xfer_plan_finish_counts(xfer_plan_t *p, int g);
xfer_status_t xfer_plan_setup_buffers(xfer_plan_t *p);

/* hier.c: the node staging of a recount (geometry and schedule for p->shape, the same inner
 * algorithm and window) */
xfer_status_t xfer_hier_recount(xfer_plan_t *p);

/* Run one blocking operation on a freshly created (transient) plan. */
xfer_status_t xfer_plan_run_blocking(xfer_plan_t *p);

/* The "algorithm index" the check handshake reports for hierarchical calls. */
#define XFER_CHECK_HIER 1000

/* XFER_CHECK handshake: both groups compare what the other group actually sends (bytes and
 * type signature per rank) with what each rank expects, and the algorithm each chose.
 * @p local_error is this rank's own argument error (XFER_SUCCESS if none); it is reported to
 * every rank so that nobody is left waiting. Collective over both groups. */
xfer_status_t xfer_check_args(xfer_topo_t *t, const xfer_call_t *call, xfer_status_t local_error,
                              int algo_index);

#endif /* XFER_COLL_INTERNAL_H */
