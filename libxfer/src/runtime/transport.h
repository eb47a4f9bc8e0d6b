/* SPDX-License-Identifier: BSD-3-Clause */
/* A channel's transport (docs/runtime.md, "Stream or file"): the operations the channel calls
 * through its table, one table per transport (the stream's over MPI, stream_ops.c; the file's
 * through HDF5 files, ch_file.c), as an adapter implements xfer_adapter_ops_t. The public data
 * calls (ch_api.c, ch_attr.c) and finalize's first pass (channel.c) reach a transport only
 * through ch->ops. */
#ifndef XFER_RT_TRANSPORT_H
#define XFER_RT_TRANSPORT_H

#include <xfer/xfer.h>

struct xfer_channel;

typedef struct xfer_transport_ops {
    const char *name; /* as the workflow file's `transport` says it */
    /* The public data calls, after the context's lock and the error-handler guard. */
    xfer_status_t (*put)(struct xfer_channel *ch, const xfer_dataset_desc_t *d, const void *block);
    xfer_status_t (*step_begin)(struct xfer_channel *ch, int timeout_ms,
                                xfer_step_status_t *status);
    xfer_status_t (*step_end)(struct xfer_channel *ch);
    xfer_status_t (*get)(struct xfer_channel *ch, const char *dataset, const uint64_t start[],
                         const uint64_t count[], void *buf, size_t bufsize,
                         xfer_dataset_desc_t *out);
    /* The current step's attributes on the receiving side (waits for the step as get does). */
    xfer_status_t (*attrs)(struct xfer_channel *ch, const char **p, size_t *len);
    /* xfer_channel_progress: one pass, never blocking; *busy when something is in flight. */
    xfer_status_t (*progress)(struct xfer_channel *ch, int *busy);
    /* Finalize's first pass: say the channel ends, without waiting for the peer. */
    xfer_status_t (*end)(struct xfer_channel *ch);
    /* The transport's own state (NULL: none apart from the channel's). */
    void (*free)(struct xfer_channel *ch);
} xfer_transport_ops_t;

extern const xfer_transport_ops_t xfer_stream_ops; /* stream_ops.c */
extern const xfer_transport_ops_t xfer_file_ops;   /* ch_file.c */

#endif /* XFER_RT_TRANSPORT_H */
