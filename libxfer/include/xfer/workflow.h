/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file workflow.h
 * @brief Workflow layer: components joined by channels that move datasets step by step.
 *
 * A component is one MPI application of a workflow file (see config.h). xfer_init() joins it
 * to the components it shares channels with: one intercommunicator per channel, formed by
 * MPI_Comm_connect/accept between separately launched jobs, by MPI_Intercomm_create inside
 * one MPMD launch, or supplied by the application. A channel moves its datasets in numbered
 * steps (0, 1, ...): the sending side puts its block of each dataset and commits the step
 * with xfer_step_end(); the receiving side gets the whole array (or a selection of it) in
 * global layout, then releases the step with xfer_step_end(). Full-duplex channels do both
 * on both sides, in the same step. See docs/workflow.md.
 */
#ifndef XFER_WORKFLOW_H
#define XFER_WORKFLOW_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include <xfer/config.h>
#include <xfer/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque workflow context of one component. */
typedef struct xfer xfer_t;

/** Opaque channel handle (owned by its xfer_t). */
typedef struct xfer_channel xfer_channel_t;

/**
 * A dataset as one call sees it. For xfer_put: the dataset's name, type and global shape
 * (checked against the workflow file) and the calling rank's block, start[d] .. start[d] +
 * count[d] - 1 in each dimension (an empty block has some count[d] == 0). For xfer_get:
 * filled in with the global shape, the selection returned and the step.
 */
typedef struct xfer_dataset_desc {
    const char *name;
    xfer_type_t type;
    int ndims;
    uint64_t dims[XFER_MAX_DIMS];
    uint64_t start[XFER_MAX_DIMS];
    uint64_t count[XFER_MAX_DIMS];
    uint64_t step; /**< xfer_get: the step the data belongs to */
    /** A record dataset (type XFER_TYPE_RECORD). xfer_put: NULL, or the layout of the caller's
     *  struct (fields' names, types, counts and offsets, and its size: xfer_record_layout
     *  computes them from types and counts), checked against the workflow file's declaration;
     *  xfer_get: the declaration (owned by the configuration). */
    const xfer_record_t *record;
} xfer_dataset_desc_t;

/** Role of a component in a channel. */
typedef enum xfer_role {
    XFER_ROLE_SEND = 1, /**< half-duplex sender */
    XFER_ROLE_RECV = 2, /**< half-duplex receiver */
    XFER_ROLE_BOTH = 3  /**< full duplex: sends and receives */
} xfer_role_t;

/**
 * Join the workflow as component @p component (NULL: the XFER_COMPONENT environment variable,
 * else, in an MPMD launch, the component whose index in the file is MPI_APPNUM). @p yaml_path
 * NULL means the XFER_CONFIG environment variable. @p comm holds every process of this launch
 * (MPI_COMM_WORLD): the component itself for a separate launch, all components for an MPMD one.
 *
 * Collective over @p comm. Forms the intercommunicator of every channel of this component, in
 * file order, and checks the channel's datasets, duplex and algorithm against the peer's: a
 * mismatch fails on both sides with XFER_ERR_MISMATCH naming the dataset and both shapes.
 * Waits for a peer last as long as the peer lives (see "Liveness" in docs/runtime.md): with
 * the control plane (xferd), a peer's death or stall (missed heartbeats) ends them within
 * about twice control.heartbeat_timeout_ms; in one MPMD launch a dead process ends the job;
 * separate launches without xferd fall back to control.timeout_ms as a clock.
 * Forming the channels (port files, lookups) is bounded by control.timeout_ms.
 * When MPI was initialised with MPI_THREAD_MULTIPLE (and the file's `progress` is auto or
 * thread), starts a progress thread that moves committed steps while the application computes;
 * every call on a channel then holds the context's lock (docs/runtime.md, Progress). Channel
 * calls of one context are not meant to be made from two application threads at once.
 * Caller owns *@p x and releases it with xfer_finalize().
 */
XFER_PUBLIC xfer_status_t xfer_init(const char *yaml_path, const char *component, MPI_Comm comm,
                                    xfer_t **x);

/** The component's own communicator (its ranks only). Owned by @p x: do not free it. */
XFER_PUBLIC xfer_status_t xfer_comm(const xfer_t *x, MPI_Comm *comm);

/** The workflow configuration in use and this component's index in it. */
XFER_PUBLIC xfer_status_t xfer_config_of(const xfer_t *x, const xfer_config_t **cfg,
                                         int *component);

/**
 * launch: user only: use @p inter (this component's side) as channel @p channel's
 * intercommunicator. Collective over @p inter; the peer attaches the same channel. libxfer
 * duplicates @p inter; the caller keeps ownership of it.
 */
XFER_PUBLIC xfer_status_t xfer_channel_attach(xfer_t *x, const char *channel, MPI_Comm inter);

/** Handle of channel @p channel (local; the channel was formed by xfer_init or attach). */
XFER_PUBLIC xfer_status_t xfer_channel_open(xfer_t *x, const char *channel, xfer_channel_t **ch);

/**
 * Finish channel *@p ch now, as xfer_finalize() finishes it, while the component's other
 * channels go on and the process continues (docs/runtime.md, "Closing a channel"):
 * - a receiving side leaves the channel cleanly: the sender's next call on it sees the end, never
 *   XFER_ERR_PEER_FAILED: under on_reader_loss: fail its stream ends (XFER_STEP_END_OF_STREAM,
 *   XFER_ERR_END_OF_STREAM), under continue it goes on without sending, as when the reader
 *   calls xfer_finalize early. Steps still in flight are received for nobody, into the rank's
 *   bound buffers too (xfer_bind_buffer): keep those until xfer_finalize.
 * - a sending side ends its stream: the receivers get every step it committed, then
 *   XFER_STEP_END_OF_STREAM. An uncommitted step's puts are dropped; under policy latest the held
 *   last step is sent first, which waits, as a put under policy block does, until the receivers
 *   have room for it.
 * - a full-duplex side does both: the peer's stream ends after the steps this side committed.
 * Collective over the component's ranks (each calls it at the same point of its calls on the
 * channel). Apart from that flush it waits for no peer: the parting (the peer's goodbye, the
 * intercommunicators' frees) is xfer_finalize's, which finishes the closed channel with the
 * others. Sets *@p ch to NULL; a call on another copy of the handle fails with XFER_ERR_STATE
 * (a second close too), as does xfer_channel_open of the channel. XFER_ERR_INVALID_ARG when
 * @p ch or *@p ch is NULL. Handles die with their context: none is valid after xfer_finalize.
 */
XFER_PUBLIC xfer_status_t xfer_channel_close(xfer_channel_t **ch);

/** This component's role in @p ch. */
XFER_PUBLIC xfer_status_t xfer_channel_role(const xfer_channel_t *ch, xfer_role_t *role);

/** The step the next put or get of @p ch belongs to. */
XFER_PUBLIC xfer_status_t xfer_channel_step(const xfer_channel_t *ch, uint64_t *step);

/** The channel's intercommunicator (owned by libxfer: do not free it). */
XFER_PUBLIC xfer_status_t xfer_channel_intercomm(const xfer_channel_t *ch, MPI_Comm *inter);

/** What xfer_step_begin() found: a status, not an error. */
typedef enum xfer_step_status {
    XFER_STEP_OK = 0,           /**< the step began: put (sending side), get (receiving side) */
    XFER_STEP_NOT_READY = 1,    /**< not within the timeout; nothing changed: call again */
    XFER_STEP_END_OF_STREAM = 2 /**< the channel ended: no step comes any more */
} xfer_step_status_t;

/**
 * Begin the current step of @p ch, waiting at most @p timeout_ms (0: poll once, -1: as long
 * as the peer lives). Receiving side: OK once the step's data arrived (xfer_get then returns
 * at once). Sending side: OK once the step has a free slot within max_in_flight_steps of the
 * receiver's progress (xfer_step_end then never waits: the next xfer_step_begin does).
 * Full duplex: as the sending side; the data is awaited by xfer_get. END_OF_STREAM once the
 * peer ended the channel and every step it sent was begun; NOT_READY when the timeout
 * passed first. Local: ranks of a component may see NOT_READY at different times, and every
 * rank must come back until OK or END_OF_STREAM. Calling it again after OK for the same step
 * returns OK. Errors (a failed peer, a lost control plane) are returned as statuses as usual.
 */
XFER_PUBLIC xfer_status_t xfer_step_begin(xfer_channel_t *ch, int timeout_ms,
                                          xfer_step_status_t *status);

/**
 * Stage the calling rank's block of dataset @p d->name for the current step. @p block holds
 * prod(count) elements, contiguous, slowest dimension first (NULL allowed for an empty block).
 * The block is copied: the caller may reuse it on return. The decomposition is fixed by the
 * first step: a later step must put the same block. Local; never waits for the peer.
 *
 * A joined dataset (`dims: [joined, ...]` in the workflow file) takes this rank's rows of the
 * step instead: count[0] rows (0 allowed; the count may change every step) of whole rows
 * (count[d] == dims[d] for d >= 1), start all 0, dims[0] 0 (or the rows). The step holds every
 * sending rank's rows in rank order (docs/runtime.md, "Joined datasets").
 */
XFER_PUBLIC xfer_status_t xfer_put(xfer_channel_t *ch, const xfer_dataset_desc_t *d,
                                   const void *block);

/**
 * Commit (sending side) and release (receiving side) the current step, then move on to the
 * next. Without xfer_step_begin, a sender waits here when max_in_flight_steps committed steps
 * are still in flight (as long as the receiver lives); after it, never. Collective over the
 * component's ranks (each calls it once per step).
 */
XFER_PUBLIC xfer_status_t xfer_step_end(xfer_channel_t *ch);

/**
 * Receive the whole dataset @p dataset of the current step into @p buf (global layout,
 * slowest dimension first), waiting for it as long as the peer lives (after xfer_step_begin
 * said OK: at once). @p bufsize is checked: a buffer too small fails with XFER_ERR_INVALID_ARG
 * and writes nothing. @p out (may be NULL) receives the shape and step. Without
 * xfer_step_begin, returns XFER_ERR_END_OF_STREAM once the sender has ended the channel and
 * every step it committed was received (xfer_step_begin reports that as a status instead);
 * XFER_ERR_NOT_FOUND when the channel has no such dataset or the sender did not put it in this
 * step.
 */
XFER_PUBLIC xfer_status_t xfer_get(xfer_channel_t *ch, const char *dataset, void *buf,
                                   size_t bufsize, xfer_dataset_desc_t *out);

/** As xfer_get, for the hyperslab start[d] .. start[d] + count[d] - 1 only (packed in @p buf). */
XFER_PUBLIC xfer_status_t xfer_get_selection(xfer_channel_t *ch, const char *dataset,
                                             const uint64_t start[], const uint64_t count[],
                                             void *buf, size_t bufsize, xfer_dataset_desc_t *out);

/**
 * The shape of received dataset @p dataset in the current step, waiting for the step as
 * xfer_get does: @p out gets the global dims (a joined dataset: dims[0] is the step's rows, all
 * sending ranks' together), this rank's selection of the step in start/count (what xfer_get
 * returns: a joined dataset's `rows` share, its `all`, or the box xfer_select declared, clipped
 * to the step) and the step. For sizing the buffer of a joined dataset's get.
 */
XFER_PUBLIC xfer_status_t xfer_get_shape(xfer_channel_t *ch, const char *dataset,
                                         xfer_dataset_desc_t *out);

/**
 * Each sending rank's rows of joined dataset @p dataset in the current step (waiting for the step
 * as xfer_get does): rows[r] for sending rank r, the first @p n of them (@p rows may be NULL with
 * @p n 0); *@p nsenders (may be NULL) gets the number of sending ranks. Rank r's rows start at the
 * sum of rows[0 .. r-1] in the step's rows.
 */
XFER_PUBLIC xfer_status_t xfer_get_rows(xfer_channel_t *ch, const char *dataset, uint64_t *rows,
                                        int n, int *nsenders);

/**
 * Attach attribute @p name to the current step of the sending side: @p count values of
 * @p type (a scalar: 1; a small array: more). Attributes travel in-band with the step, from
 * the side's rank 0 (put them on rank 0, or on every rank: rank 0's travel), and are the
 * step's own: the next step starts with none. Putting a name again replaces its value.
 * XFER_ERR_TOO_LARGE when the step's attributes would exceed the channel's attributes_bytes
 * (each takes its name, its values and 8 bytes, rounded up to 8). Before the step's commit.
 */
XFER_PUBLIC xfer_status_t xfer_put_attr(xfer_channel_t *ch, const char *name, xfer_type_t type,
                                        size_t count, const void *values);
/** As xfer_put_attr, for a string (its terminating NUL included). */
XFER_PUBLIC xfer_status_t xfer_put_attr_string(xfer_channel_t *ch, const char *name,
                                               const char *value);
/**
 * Read attribute @p name of the current step of the receiving side (waiting for the step as
 * xfer_get does): its type and count into *@p type and *@p count (either may be NULL), its
 * values into @p buf when @p buf is not NULL (@p bufsize is checked: too small fails with
 * XFER_ERR_INVALID_ARG and writes nothing). XFER_ERR_NOT_FOUND when the step has no such
 * attribute; XFER_ERR_MISMATCH for a string (use xfer_get_attr_string).
 */
XFER_PUBLIC xfer_status_t xfer_get_attr(xfer_channel_t *ch, const char *name, xfer_type_t *type,
                                        size_t *count, void *buf, size_t bufsize);
/** As xfer_get_attr, for a string attribute: NUL-terminated into @p buf. */
XFER_PUBLIC xfer_status_t xfer_get_attr_string(xfer_channel_t *ch, const char *name, char *buf,
                                               size_t bufsize);
/** The attributes of the current step of the receiving side: how many, and the i-th's name
 * (valid until the step ends). */
XFER_PUBLIC xfer_status_t xfer_attr_count(xfer_channel_t *ch, int *count);
XFER_PUBLIC xfer_status_t xfer_attr_name(xfer_channel_t *ch, int i, const char **name);

/**
 * The box rank @p rank of @p nranks holds of an array of @p ndims dimensions @p dims under
 * @p mode: all (the whole array), rows (near-equal slabs of dimension 0, the first dims[0] mod
 * nranks one longer), columns (the same over the last dimension) or block (a grid of nranks
 * over all dimensions, prime factors given to the dimensions with the most elements per part,
 * ranks in row-major grid order). The helper both sides of a channel use: producers may use it
 * for their blocks, and the channel's `selection` modes are defined by it.
 */
XFER_PUBLIC xfer_status_t xfer_decompose(xfer_selection_mode_t mode, int ndims,
                                         const uint64_t dims[], int nranks, int rank,
                                         uint64_t start[], uint64_t count[]);

/**
 * Declare the box of dataset @p dataset this rank receives (start[d] .. start[d] + count[d] - 1;
 * NULL start and count: the whole dataset; a count of 0: nothing). Overrides the channel's
 * `selection` mode for this rank and is required under `selection: user`. Only before step 0
 * begins, which is at this rank's first commit or first call that waits, on any of its channels
 * (the selections are fixed for the run, like the senders' decomposition): later,
 * XFER_ERR_STATE. Local.
 */
XFER_PUBLIC xfer_status_t xfer_select(xfer_channel_t *ch, const char *dataset,
                                      const uint64_t start[], const uint64_t count[]);

/**
 * The box of dataset @p dataset this rank receives: what xfer_get returns, start[d] ..
 * start[d] + count[d] - 1 (count 0 in some dimension: nothing). Before step 0 it is the box
 * declared with xfer_select, else the one the dataset's selection mode gives this rank;
 * XFER_ERR_INVALID_ARG for a dataset this side sends, or one under `selection: user` that this
 * rank has not declared yet. @p start and @p count hold the dataset's ndims entries. Local;
 * does not fix the selection.
 */
XFER_PUBLIC xfer_status_t xfer_selection_of(xfer_channel_t *ch, const char *dataset,
                                            uint64_t start[], uint64_t count[]);

/**
 * Send (sending side) or receive (receiving side) dataset @p dataset of every step straight
 * from or into the caller's @p buf, without the copies xfer_put and xfer_get make:
 * - sending: @p buf is this rank's block; each step is sent straight from the block its
 *   xfer_put gives (@p buf, or another buffer for that step). The block is read until
 *   xfer_step_end returns, which then waits until this rank's part of the step has been sent
 *   (MPI's nonblocking contract): do not modify it in between.
 * - receiving: @p buf (at least the rank's selection, checked at step 0) receives the
 *   selection of each step; it is valid from xfer_step_begin's OK (or xfer_get) until
 *   xfer_step_end, and xfer_get into it copies nothing. The rank then receives one step at
 *   a time: the next step lands only once this one is released. Binding again during a step
 *   (after step 0) gives the buffer the next step lands in: one buffer per step, or two in
 *   turn, still without a copy.
 * The first binding comes before step 0 begins (at this rank's first commit or first call that
 * waits, on any channel), like selections; the step then takes the direct path.
 */
XFER_PUBLIC xfer_status_t xfer_bind_buffer(xfer_channel_t *ch, const char *dataset, void *buf,
                                           size_t bufsize);

/**
 * Drive the transfers of @p ch (and of the context's other channels) once, without waiting:
 * for a program that waits elsewhere (its own MPI calls, a barrier) while a step is still in
 * flight. MPI has no asynchronous progress on most platforms: without libxfer's progress
 * thread (progress: calls, or MPI below MPI_THREAD_MULTIPLE) a step moves only while one of
 * its ranks is inside a libxfer call, and a sender that computes between steps delays the
 * step it ended until its next call (docs/runtime.md, Progress). *@p busy (may be NULL): 1
 * while a step of @p ch is in flight on this rank.
 */
XFER_PUBLIC xfer_status_t xfer_channel_progress(xfer_channel_t *ch, int *busy);

/** What a channel moved and copied on this rank so far (payload bytes, all steps). */
typedef struct xfer_channel_stats {
    uint64_t steps;               /**< steps this rank ended (xfer_step_end) */
    uint64_t bytes_sent;          /**< bytes of its blocks this rank sent */
    uint64_t bytes_received;      /**< bytes that landed on this rank (its selections, or every
                                       remote contribution on the allgatherv path) */
    uint64_t bytes_copied_in;     /**< bytes xfer_put copied into the library's stages */
    uint64_t bytes_copied_out;    /**< bytes xfer_get copied out of them */
    uint64_t steps_sent;          /**< sending side: steps that went to the receivers */
    uint64_t steps_dropped;       /**< sending side: steps `policy: latest` dropped (a newer one
                                       was held before the receivers had room for it) */
    uint64_t steps_received;      /**< receiving side: steps that arrived (a sender's step
                                       numbers show which: xfer_dataset_desc_t.step) */
    uint64_t steps_held;          /**< sending side, `policy: latest`: steps ended but neither sent
                                       nor dropped yet (xfer_finalize sends the last of them) */
    uint64_t steps_unsent;        /**< sending side, `on_reader_loss: continue`: steps ended after
                                       the reader failed or closed the channel (none was sent) */
    uint64_t wire_bytes_sent;     /**< bytes_sent as they crossed: compressed datasets' frames
                                       (docs/runtime.md, "Compression"), the others' as sent */
    uint64_t wire_bytes_received; /**< bytes_received as they crossed */
} xfer_channel_stats_t;

XFER_PUBLIC xfer_status_t xfer_channel_stats(const xfer_channel_t *ch, xfer_channel_stats_t *stats);

/** An application's check for an interruption, such as a pending signal: nonzero ends the wait. */
typedef int (*xfer_interrupt_fn)(void *arg);

/**
 * Let the waits for a peer on @p x's channels be interrupted, for language bindings whose
 * signals are handled outside the wait (Python's KeyboardInterrupt). While xfer_step_begin,
 * xfer_get, xfer_get_selection, xfer_get_attr, xfer_get_attr_string, xfer_attr_count or
 * xfer_attr_name waits for the step's data, or xfer_put or a sender's xfer_step_end waits for a
 * free slot, it calls @p fn(@p arg) about every 50 ms from the calling thread; when @p fn
 * returns nonzero, the call returns XFER_ERR_INTERRUPTED without having changed anything, and
 * making it again resumes the wait. The other waits (the rest of xfer_step_end, step 0's set-up,
 * xfer_init, xfer_finalize) are bounded by the peer's liveness and are not interrupted. @p fn
 * NULL removes the check. Local.
 */
XFER_PUBLIC xfer_status_t xfer_set_interrupt(xfer_t *x, xfer_interrupt_fn fn, void *arg);

/**
 * Leave the workflow: every committed step is delivered (bounded by the timeout), the peers
 * are told that no more steps come, and the intercommunicators are freed. Collective over
 * the component's ranks. Accepts NULL and sets *@p x to NULL.
 */
XFER_PUBLIC xfer_status_t xfer_finalize(xfer_t **x);

#ifdef __cplusplus
}
#endif

#endif /* XFER_WORKFLOW_H */
