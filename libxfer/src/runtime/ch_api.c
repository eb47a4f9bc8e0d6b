/* SPDX-License-Identifier: BSD-3-Clause */
/* The public data calls (xfer_put, xfer_step_end, xfer_get*): error handlers guarded, MPI
 * failures explained with the control plane's verdict. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "channel.h"

/* An MPI failure on a channel is most often the peer going away: the MPI library may see it
 * (ch3 does, at once) before xferd does. With a control plane, wait (bounded by twice xferd's
 * detection time) for the verdict: the leader asks its connection, the other ranks wait for
 * the leader's NOTE_FAIL. Either way the error names the channel and the peer. */
static xfer_status_t explain(xfer_channel_t *ch, xfer_status_t st)
{
    const xfer_config_t *cfg;
    char mpi_msg[700];
    double deadline;
    int wait_ms;

    if (st != XFER_ERR_MPI || !ch)
        return st;
    cfg = ch->x->cfg;
    snprintf(mpi_msg, sizeof(mpi_msg), "%s", xfer_last_error());
    ch->health.failed = 1;
    if (!ch->x->use_ctl)
        return xfer_err_raw(st, "channel %s: communication with component %s failed: %s",
                            ch->cfg->name, xfer_ch_peer_name(ch), mpi_msg);
    wait_ms =
        2 * (cfg->heartbeat_timeout_ms > 0 ? cfg->heartbeat_timeout_ms : 4 * cfg->heartbeat_ms) +
        cfg->heartbeat_ms;
    deadline = MPI_Wtime() + 1e-3 * wait_ms;
    while (!ch->health.peer_failed && MPI_Wtime() < deadline) {
        const struct timespec nap = {0, 2 * 1000 * 1000};
        if (ch->me == 0) {
            (void) xfer_ch_check_peer(ch); /* telling the side's other ranks is best effort here */
        } else {
            int flag = 0;
            MPI_Status ms;
            note_t n;
            while (!ch->health.peer_failed &&
                   MPI_Iprobe(0, XFER_NOTE_TAG, ch->ctl_local, &flag, &ms) == MPI_SUCCESS && flag &&
                   MPI_Recv(&n, 2, MPI_INT64_T, 0, XFER_NOTE_TAG, ch->ctl_local,
                            MPI_STATUS_IGNORE) == MPI_SUCCESS)
                if (n.type == NOTE_FAIL)
                    (void) xfer_ch_take_fail(ch, n.value, 0);
        }
        if (!ch->health.peer_failed)
            nanosleep(&nap, NULL); /* polling interval of a bounded wait */
    }
    if (ch->health.peer_failed)
        return xfer_ch_peer_failed_error(ch);
    return xfer_err_raw(st,
                        "channel %s: communication with component %s failed, and xferd "
                        "declared no failure within %d ms: %s",
                        ch->cfg->name, xfer_ch_peer_name(ch), wait_ms, mpi_msg);
}

/* A data call: the context's lock held (the progress thread waits), error handlers guarded, an
 * MPI failure explained. */
#define DATA_CALL(ch, call)                                                                        \
    do {                                                                                           \
        xfer_errh_guard_t g_;                                                                      \
        xfer_status_t st_;                                                                         \
        struct xfer *x_ = (ch) ? (ch)->x : NULL;                                                   \
        xfer_rt_lock(x_);                                                                          \
        xfer_errh_guard_begin(&g_);                                                                \
        st_ = xfer_rt_done(x_, xfer_errh_guard_end(&g_, explain((ch), (call))));                   \
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
    DATA_CALL(ch, flow(ch) ? xfer_ch_flow_put(ch, d, block) : xfer_ch_put(ch, d, block));
}

xfer_status_t xfer_step_begin(xfer_channel_t *ch, int timeout_ms, xfer_step_status_t *status)
{
    DATA_CALL(ch, flow(ch) ? xfer_ch_flow_begin(ch, timeout_ms, status)
                           : xfer_ch_step_begin(ch, timeout_ms, status));
}

xfer_status_t xfer_step_end(xfer_channel_t *ch)
{
    DATA_CALL(ch, flow(ch) ? xfer_ch_flow_end(ch) : xfer_ch_step_end(ch));
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
    DATA_CALL(ch, xfer_ch_channel_progress(ch, busy));
}
