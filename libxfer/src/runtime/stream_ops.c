/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream transport's table (transport.h): its steps move over MPI, through the allgatherv
 * plans or the direct M x N schedule of each slot (stream.c, stream_setup.c, stream_get.c); its
 * open is stream_open.c, its finish and free stream_finish.c. */
#include "stream.h"

/* The current step's attributes: rank 0's header of the step, in the receive area. */
static xfer_status_t stream_attrs(xfer_channel_t *ch, uint64_t s, const char **p, size_t *len)
{
    const xfer_rt_slot_t *sl = xfer_ch_slot_of(ch, s);
    const xfer_rt_hdr_t *h = (const xfer_rt_hdr_t *) (sl->rbuf + xfer_ch_hdr_at(ch, 0));
    /* (rank 0's header is first on every path) */
    if (h->magic != XFER_RT_MAGIC || h->step != s ||
        h->attr_len > ch->lay.attr_user + XFER_CH_LABEL_BYTES)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: step %llu: rank 0's header of %s is not of this step",
                        ch->cfg->name, (unsigned long long) s, xfer_ch_peer_name(ch));
    *p = (const char *) sl->rbuf + xfer_ch_attr_at(ch);
    *len = h->attr_len;
    return XFER_SUCCESS;
}

const xfer_transport_ops_t xfer_stream_ops = {
    .name = "stream",
    .flags = 0,
    .open = xfer_ch_stream_open,
    .room = xfer_ch_stream_room,
    .arrived = xfer_ch_step_ready,
    .has = xfer_ch_stream_has,
    .over = xfer_ch_stream_over,
    .ended = xfer_ch_ended,
    .stage = xfer_ch_stream_stage,
    .unput = xfer_ch_stream_unput,
    .commit = xfer_ch_commit,
    .side_commit = xfer_ch_joined_side_commit,
    .release = xfer_ch_stream_release,
    .sent = xfer_ch_stream_sent,
    .after_end = xfer_ch_stream_after_end,
    .fetch = xfer_ch_stream_fetch,
    .shape = xfer_ch_joined_shape,
    .attrs = stream_attrs,
    .pending = xfer_ch_stream_pending,
    .end = xfer_ch_stream_end,
    .drained = xfer_ch_stream_drained,
    .goodbye = xfer_ch_stream_goodbye,
    .parted = xfer_ch_stream_parted,
    .close = xfer_ch_stream_close,
    .free = xfer_ch_stream_free,
    .poll = xfer_ch_stream_poll,
    .where = NULL,
    .spin_s = XFER_RT_SPIN_S,
    .nap_min_ns = XFER_RT_NAP_NS,
    .nap_max_ns = XFER_RT_NAP_NS,
};
