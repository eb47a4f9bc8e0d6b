/* SPDX-License-Identifier: BSD-3-Clause */
/* A channel's flow and reader-loss settings in effect (xfer_config_channel_flow): the one place
 * that reads the environment's overrides of the workflow file's `policy`, `stride` and
 * `on_reader_loss`, for the library's both sides (ch_flow.c, ch_loss.c), xfer-run's choice of a
 * launch and xfer-synth's expectations. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/config.h>

#include "../core/core.h"

static xfer_status_t env_policy(xfer_flow_policy_t *policy)
{
    const char *p = xfer_env_str("XFER_POLICY");
    if (!p)
        return XFER_SUCCESS;
    if (strcmp(p, "block") == 0)
        *policy = XFER_POLICY_BLOCK;
    else if (strcmp(p, "latest") == 0)
        *policy = XFER_POLICY_LATEST;
    else
        return XFER_ERR(XFER_ERR_CONFIG, "XFER_POLICY=%s: block or latest", p);
    return XFER_SUCCESS;
}

static xfer_status_t env_stride(int *stride)
{
    const char *s = xfer_env_str("XFER_STRIDE");
    unsigned long long v;
    char *end;
    if (!s)
        return XFER_SUCCESS;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > 1000000 || s[0] == '-')
        return XFER_ERR(XFER_ERR_CONFIG, "XFER_STRIDE=%s: a whole number from 1 to 1000000", s);
    *stride = (int) v;
    return XFER_SUCCESS;
}

static xfer_status_t env_loss(xfer_reader_loss_t *loss)
{
    const char *e = xfer_env_str("XFER_ON_READER_LOSS");
    if (!e)
        return XFER_SUCCESS;
    if (strcmp(e, "fail") == 0)
        *loss = XFER_LOSS_FAIL;
    else if (strcmp(e, "continue") == 0)
        *loss = XFER_LOSS_CONTINUE;
    else if (strcmp(e, "spill") == 0)
        *loss = XFER_LOSS_SPILL;
    else
        return XFER_ERR(XFER_ERR_CONFIG, "XFER_ON_READER_LOSS=%s: fail, continue or spill", e);
    return XFER_SUCCESS;
}

xfer_status_t xfer_config_channel_flow(const xfer_config_t *cfg, int index,
                                       xfer_channel_flow_t *flow)
{
    const xfer_cfg_channel_t *c;
    xfer_status_t st;

    if (!cfg || !flow)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "%s is NULL", !cfg ? "cfg" : "flow");
    if (index < 0 || index >= cfg->nchannels)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "no channel %d in %s (%d channels)", index, cfg->path,
                        cfg->nchannels);
    c = &cfg->channels[index];
    memset(flow, 0, sizeof(*flow));
    flow->policy = XFER_POLICY_BLOCK;
    flow->stride = 1;
    flow->on_reader_loss = XFER_LOSS_FAIL;
    flow->start = c->start == XFER_START_OLDEST ? XFER_START_OLDEST : XFER_START_LATEST;
    flow->history = c->history;
    if (c->duplex != XFER_DUPLEX_HALF)
        return XFER_SUCCESS;
    flow->policy = c->policy;
    flow->stride = c->stride;
    flow->on_reader_loss = c->on_reader_loss;
    if ((st = env_policy(&flow->policy)) != XFER_SUCCESS ||
        (st = env_stride(&flow->stride)) != XFER_SUCCESS ||
        (st = env_loss(&flow->on_reader_loss)) != XFER_SUCCESS)
        return st;
    return XFER_SUCCESS;
}
