/* SPDX-License-Identifier: BSD-3-Clause */
/* The simulator's view of a joined dataset's selections (xfer_sim_joined_box, sim.h): a thin
 * wrapper that runs the stream transport's own rule code -- the rule a receiving rank's set-up
 * record carries (xfer_ch_rule_of) and the box a sending rank derives from it for each step
 * (xfer_ch_rule_box, as stream_joined.c's box_of does) -- on a dataset built for the purpose, so
 * that xfer-sched checks the shares the runtime computes, not a copy of their arithmetic. */
#include <string.h>

#include <xfer/sim.h>

#include "channel.h"

xfer_status_t xfer_sim_joined_box(int ndims, const uint64_t dims[], xfer_selection_mode_t mode,
                                  const uint64_t ustart[], const uint64_t ucount[], int nrecv,
                                  int r, uint64_t start[], uint64_t count[])
{
    xfer_cfg_dataset_t cfg;
    xfer_rt_dset_t d;
    uint64_t rule[2 * XFER_MAX_DIMS];

    if (ndims < 1 || ndims > XFER_MAX_DIMS || !dims || !start || !count)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "xfer_sim_joined_box: %d dimensions (1 .. %d), and dims, start and count "
                        "are required",
                        ndims, XFER_MAX_DIMS);
    if (nrecv < 1 || r < 0 || r >= nrecv)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "xfer_sim_joined_box: rank %d of %d receiving ranks",
                        r, nrecv);
    if (mode == XFER_SELECT_USER && (!ustart || !ucount))
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "xfer_sim_joined_box: selection user needs the declared box (ustart, "
                        "ucount)");
    if (mode == XFER_SELECT_CHANNEL)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "xfer_sim_joined_box: a dataset's selection is never \"channel\" once "
                        "loaded (give the channel's mode)");
    memset(&cfg, 0, sizeof(cfg));
    memset(&d, 0, sizeof(d));
    cfg.ndims = ndims;
    cfg.joined = 1;
    cfg.selection = mode;
    memcpy(cfg.dims + 1, dims + 1, (size_t) (ndims - 1) * sizeof(uint64_t)); /* dims[0]: joined */
    d.cfg = &cfg;
    d.dyn = 1;
    if (mode == XFER_SELECT_USER) { /* as xfer_select records it */
        d.sel_declared = 1;
        memcpy(d.usr_start, ustart, (size_t) ndims * sizeof(uint64_t));
        memcpy(d.usr_count, ucount, (size_t) ndims * sizeof(uint64_t));
    }
    xfer_ch_rule_of(&d, rule);
    return xfer_ch_rule_box(ndims, rule, dims, nrecv, r, start, count);
}
