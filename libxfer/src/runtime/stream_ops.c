/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream transport's table (transport.h): its steps move over MPI, through the allgatherv
 * plans or the direct M x N schedule of each slot (ch_steps.c, ch_setup.c, ch_get.c); finalize's
 * first pass is in channel.c. */
#include "channel.h"

/* The current step's attributes: rank 0's header of the step, in the receive area. */
static xfer_status_t stream_attrs(xfer_channel_t *ch, const char **p, size_t *len)
{
    const xfer_rt_hdr_t *h;
    const xfer_rt_slot_t *sl;
    xfer_status_t st;
    uint64_t s;

    XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out);
    if (!xfer_ch_this_recvs(ch))
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel %s: %s only sends on this channel",
                        ch->cfg->name, xfer_ch_side_name(ch, ch->side));
    if (ch->health.ended)
        return xfer_ch_ended(ch, ch->cur);
    if (xfer_ch_this_sends(ch))
        XFER_CHECK_GOTO(xfer_ch_commit(ch), st, out); /* full duplex: as the first xfer_get */
    s = ch->cur;
    XFER_CHECK_GOTO(xfer_ch_wait_resumable(ch, xfer_ch_step_ready, &s, "waiting for a step"), st,
                    out);
    sl = xfer_ch_slot_of(ch, s);
    if (!(sl->state == XFER_SLOT_DONE && sl->step == s))
        return xfer_ch_ended(ch, s);
    h = (const xfer_rt_hdr_t *) (sl->rbuf + xfer_ch_hdr_at(ch, 0)); /* first on every path */
    if (h->magic != XFER_RT_MAGIC || h->step != s || h->attr_len > ch->lay.attr_cap)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: step %llu: rank 0's header of %s is not of this step",
                        ch->cfg->name, (unsigned long long) s, xfer_ch_peer_name(ch));
    *p = (const char *) sl->rbuf + xfer_ch_attr_at(ch);
    *len = h->attr_len;
out:
    return st;
}

const xfer_transport_ops_t xfer_stream_ops = {
    .name = "stream",
    .put = xfer_ch_put_impl,
    .step_begin = xfer_ch_step_begin_impl,
    .step_end = xfer_ch_step_end_impl,
    .get = xfer_ch_get_impl,
    .attrs = stream_attrs,
    .progress = xfer_ch_channel_progress_impl,
    .end = xfer_ch_stream_end,
    .free = NULL,
};
