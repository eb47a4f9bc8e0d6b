/* SPDX-License-Identifier: BSD-3-Clause */
/* The public data calls (xfer_put, xfer_step_end, xfer_get*): error handlers guarded, MPI
 * failures explained with the control plane's verdict. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "channel.h"

/* An MPI failure on a channel is most often the peer going away: the MPI library may see it
 * (ch3 does, at once) before xferd does. With a control plane, wait (bounded by twice xferd's
 * detection time) for the verdict (xfer_ch_await_verdict). Either way the error names the channel
 * and the peer. */
static xfer_status_t explain(xfer_channel_t *ch, xfer_status_t st)
{
    char mpi_msg[700];
    int wait_ms;

    if (st != XFER_ERR_MPI || !ch)
        return st;
    snprintf(mpi_msg, sizeof(mpi_msg), "%s", xfer_last_error());
    ch->health.failed = 1;
    if (!ch->x->use_ctl)
        return xfer_err_raw(st, "channel %s: communication with component %s failed: %s",
                            ch->cfg->name, xfer_ch_peer_name(ch), mpi_msg);
    if (xfer_ch_await_verdict(ch, &wait_ms))
        return xfer_ch_peer_failed_error(ch);
    return xfer_err_raw(st,
                        "channel %s: communication with component %s failed, and xferd "
                        "declared no failure within %d ms: %s",
                        ch->cfg->name, xfer_ch_peer_name(ch), wait_ms, mpi_msg);
}

/* A data call: the context's lock held (the progress thread waits), error handlers guarded, an
 * MPI failure explained; refused on a closed channel. */
#define DATA_CALL(ch, call)                                                                        \
    do {                                                                                           \
        xfer_errh_guard_t g_;                                                                      \
        xfer_status_t st_;                                                                         \
        struct xfer *x_ = (ch) ? (ch)->x : NULL;                                                   \
        xfer_rt_lock(x_);                                                                          \
        xfer_errh_guard_begin(&g_);                                                                \
        st_ = (ch) && (ch)->closed ? xfer_ch_closed_error(ch) : explain((ch), (call));             \
        st_ = xfer_rt_done(x_, xfer_errh_guard_end(&g_, st_));                                     \
        xfer_rt_unlock(x_);                                                                        \
        return st_;                                                                                \
    } while (0)

/* A sending call: as a data call, and once explained, a failure that says the reader is gone
 * (on_reader_loss: continue) is taken as the end of what this channel sends (ch_loss.c); a
 * channel whose reader is gone answers without its transport. @p kept, once the call succeeded:
 * what the channel keeps of it for a reader that attaches (ch_keep.c). */
#define SEND_CALL(ch, at, status, lost_call, call, kept)                                           \
    do {                                                                                           \
        xfer_errh_guard_t g_;                                                                      \
        xfer_status_t st_;                                                                         \
        xfer_ch_loss_snap_t snap_;                                                                 \
        struct xfer *x_ = (ch) ? (ch)->x : NULL;                                                   \
        xfer_rt_lock(x_);                                                                          \
        xfer_errh_guard_begin(&g_);                                                                \
        if ((ch) && (ch)->closed) {                                                                \
            st_ = xfer_ch_closed_error(ch);                                                        \
        } else if ((ch) && (ch)->loss.lost) {                                                      \
            st_ = (lost_call);                                                                     \
        } else {                                                                                   \
            xfer_ch_loss_snap((ch), &snap_);                                                       \
            st_ = explain((ch), (call));                                                           \
            st_ = xfer_ch_loss_after((ch), st_, (at), &snap_, (status));                           \
        }                                                                                          \
        if (st_ == XFER_SUCCESS)                                                                   \
            st_ = (kept);                                                                          \
        st_ = xfer_rt_done(x_, xfer_errh_guard_end(&g_, st_));                                     \
        xfer_rt_unlock(x_);                                                                        \
        return st_;                                                                                \
    } while (0)

/* A sending side under a flow policy (policy: latest, stride) goes through ch_flow.c. */
static int flow(const xfer_channel_t *ch)
{
    return ch && xfer_ch_flow_on(ch);
}

xfer_status_t xfer_put(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block)
{
    SEND_CALL(ch, XFER_LOSS_AT_PUT, NULL, xfer_ch_loss_put(ch, d, block),
              flow(ch) ? xfer_ch_flow_put(ch, d, block) : xfer_ch_put(ch, d, block),
              xfer_ch_keep_put(ch, d, block));
}

xfer_status_t xfer_step_begin(xfer_channel_t *ch, int timeout_ms, xfer_step_status_t *status)
{
    SEND_CALL(ch, XFER_LOSS_AT_BEGIN, status, xfer_ch_loss_begin(ch, timeout_ms, status),
              flow(ch) ? xfer_ch_flow_begin(ch, timeout_ms, status)
                       : xfer_ch_step_begin(ch, timeout_ms, status),
              XFER_SUCCESS);
}

xfer_status_t xfer_step_end(xfer_channel_t *ch)
{
    SEND_CALL(ch, XFER_LOSS_AT_END, NULL, xfer_ch_loss_end(ch),
              flow(ch) ? xfer_ch_flow_end(ch) : xfer_ch_step_end(ch), XFER_SUCCESS);
}

xfer_status_t xfer_get_selection(xfer_channel_t *ch, const char *dataset, const uint64_t start[],
                                 const uint64_t count[], void *buf, size_t bufsize,
                                 xfer_dataset_desc_t *out)
{
    DATA_CALL(ch, xfer_ch_get(ch, dataset, start, count, buf, bufsize, out));
}

xfer_status_t xfer_get(xfer_channel_t *ch, const char *dataset, void *buf, size_t bufsize,
                       xfer_dataset_desc_t *out)
{
    return xfer_get_selection(ch, dataset, NULL, NULL, buf, bufsize, out);
}

xfer_status_t xfer_get_shape(xfer_channel_t *ch, const char *dataset, xfer_dataset_desc_t *out)
{
    DATA_CALL(ch, xfer_ch_get_shape(ch, dataset, out));
}

xfer_status_t xfer_get_rows(xfer_channel_t *ch, const char *dataset, uint64_t *rows, int n,
                            int *nsenders)
{
    DATA_CALL(ch, xfer_ch_get_rows(ch, dataset, rows, n, nsenders));
}

xfer_status_t xfer_channel_progress(xfer_channel_t *ch, int *busy)
{
    SEND_CALL(ch, XFER_LOSS_AT_POLL, NULL, xfer_ch_loss_poll(ch, busy),
              xfer_ch_channel_progress(ch, busy), XFER_SUCCESS);
}
