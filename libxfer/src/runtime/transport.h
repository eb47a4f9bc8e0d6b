/* SPDX-License-Identifier: BSD-3-Clause */
/* A channel's transport (docs/runtime.md, "Stream or file"): the operations the channel core
 * calls through its table, one table per transport (the stream's over MPI, stream_ops.c; the
 * file's through HDF5 files, file.c), as an adapter implements xfer_adapter_ops_t. The core
 * (ch_step.c) runs the step state machine of the public calls (the checks, the order of
 * commit, waits and release, the step counters) and reaches a transport only through ch->ops;
 * the waits are the core's one loop (ch_wait.c), paced by the table. */
#ifndef XFER_RT_TRANSPORT_H
#define XFER_RT_TRANSPORT_H

#include <xfer/xfer.h>

struct xfer_channel;
struct xfer_rt_dset;

/* What a wait is for: *met once it happened; an error ends the wait with it. */
typedef xfer_status_t (*xfer_ch_cond_fn)(struct xfer_channel *ch, void *arg, int *met);

enum {
    /* A sender waits for room (max_in_flight_steps) when it commits a step it did not begin,
     * not at the end of the step before: a file sender's last step must not wait for a reader
     * that lags or never reads. */
    XFER_TP_ROOM_AT_COMMIT = 1,
    /* The commit is collective over the sending side (the file's parallel write): a reader's
     * loss under on_reader_loss: continue takes effect at the commit every rank agrees on
     * (ch_loss.c), never where one rank alone learns it. */
    XFER_TP_COLLECTIVE_COMMIT = 2
};

typedef struct xfer_transport_ops {
    const char *name; /* as the workflow file's `transport` says it */
    unsigned flags;   /* XFER_TP_* */

    /* The transport's state of a channel xfer_rt_channel_new just made (xfer_init, attach): the
     * stream's handshake, communicators and plans (collective over both sides, in file order;
     * the caller agrees the outcome on each side); the file's folder and adapter (agreed). */
    xfer_status_t (*open)(struct xfer_channel *ch);

    /* The step state machine. Conditions (waits): room for the puts of step cur within
     * max_in_flight_steps (sending side), step *(uint64_t *) arg arrived (receiving side);
     * either also holds once the channel ended before that step. */
    xfer_ch_cond_fn room, arrived;
    int (*has)(struct xfer_channel *ch, uint64_t step);  /* step arrived (receiving) */
    int (*over)(struct xfer_channel *ch, uint64_t step); /* no step comes any more: it ended */
    xfer_status_t (*ended)(struct xfer_channel *ch, uint64_t step); /* its END_OF_STREAM words */
    /* A checked put: the block (@p vol elements of @p ds) into the step being filled. */
    xfer_status_t (*stage)(struct xfer_channel *ch, struct xfer_rt_dset *ds, const void *block,
                           uint64_t vol);
    /* The channel core refused the step's blocks of @p ds at the commit and forgot its puts
     * (ch_blocks.c): the step being filled no longer holds the dataset (NULL: nothing). */
    void (*unput)(struct xfer_channel *ch, struct xfer_rt_dset *ds);
    /* Commit the step being filled (sending side; once per step: ch->cur_committed). */
    xfer_status_t (*commit)(struct xfer_channel *ch);
    /* Does the commit of step cur exchange something among the sending side's ranks (the
     * stream's joined and variable datasets: their rows and shapes)? NULL: never. The side then
     * agrees on the end of the stream before it (ch_step.c), unless XFER_TP_COLLECTIVE_COMMIT. */
    int (*side_commit)(const struct xfer_channel *ch);
    /* Let step cur go (receiving side, xfer_step_end). */
    xfer_status_t (*release)(struct xfer_channel *ch);
    /* xfer_step_end, before the step counts as ended (NULL: nothing): the stream waits until a
     * bound sender's blocks were sent. */
    xfer_status_t (*sent)(struct xfer_channel *ch);
    /* xfer_step_end's last act (NULL: nothing): the stream moves the channels once more. */
    xfer_status_t (*after_end)(struct xfer_channel *ch);
    /* The box @p start/@p count (inside this rank's selection, @p bytes bytes) of received
     * dataset @p ds of arrived step @p step into @p buf. */
    xfer_status_t (*fetch)(struct xfer_channel *ch, struct xfer_rt_dset *ds, const uint64_t *start,
                           const uint64_t *count, void *buf, uint64_t bytes, uint64_t step);
    /* The shape of arrived step @p step's joined and variable datasets into their sdims, srows
     * and selections (NULL: the transport sets them as the step arrives). */
    void (*shape)(struct xfer_channel *ch, uint64_t step);
    /* The encoded attributes of arrived step @p step (ch_attr.c's records). */
    xfer_status_t (*attrs)(struct xfer_channel *ch, uint64_t step, const char **p, size_t *len);
    /* A committed step of this rank not yet delivered, or one in flight (xfer_channel_progress's
     * busy). */
    int (*pending)(const struct xfer_channel *ch);

    /* xfer_finalize's passes over every channel at once (channel.c): (1) say the channel ends,
     * without waiting for the peer; (2) every step announced completed (drained); (3) say
     * goodbye to the peer, and hear its goodbye (parted); (4) close. NULL drained, goodbye,
     * parted and close: the transport finishes a channel in its end (the file's does). */
    xfer_status_t (*end)(struct xfer_channel *ch);
    int (*drained)(struct xfer_channel *ch);
    xfer_status_t (*goodbye)(struct xfer_channel *ch);
    int (*parted)(struct xfer_channel *ch);
    xfer_status_t (*close)(struct xfer_channel *ch);
    /* The transport's own state (NULL: none apart from the channel's); @p collective: the peer
     * is there to free communicators with (xfer_rt_channel_free). */
    void (*free)(struct xfer_channel *ch, int collective);

    /* The waits (ch_wait.c). One pass that never blocks: @p force when the wait is on this
     * very channel (the stream then posts its part of step 0's set-up; the file asks whether
     * the peer failed); *busy when data is in flight (the wait spins instead of napping). A
     * failure of the peer is returned after the wait's condition was looked at: what already
     * arrived is delivered. */
    xfer_status_t (*poll)(struct xfer_channel *ch, int force, int *busy);
    /* Where the wait looks, for its timeout's words (the file's folder), or NULL. */
    const char *(*where)(const struct xfer_channel *ch);
    /* Pacing of a wait with nothing in flight: it spins spin_s, then naps nap_min_ns, doubling
     * up to nap_max_ns between polls. */
    double spin_s;
    long nap_min_ns, nap_max_ns;
} xfer_transport_ops_t;

extern const xfer_transport_ops_t xfer_stream_ops; /* stream_ops.c */
extern const xfer_transport_ops_t xfer_file_ops;   /* file.c */

#endif /* XFER_RT_TRANSPORT_H */
