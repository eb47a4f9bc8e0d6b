/* SPDX-License-Identifier: BSD-3-Clause */
/* What xferd knows of each rank of a component: whether it lives, and the first error one of
 * them reported.
 *
 * Liveness (docs/control-protocol.md, "Liveness"): a component is alive while every one of its
 * ranks is. Its leader proves itself with `heartbeat` and its other requests (last_seen), each
 * other rank with `beat` (rank_seen); a component whose leader or any rank stays silent for
 * heartbeat_timeout_ms is declared failed, naming the rank. A rank that never beat counts from
 * its leader's registration (or the daemon's restart). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xferd.h"

/* The per-rank arrays of a running component (allocated at its first beat): NULL on failure. */
static int64_t *rank_arrays(xferd_comp_t *c)
{
    if (!c->rank_seen && c->nprocs > 1 && c->nprocs <= XFERD_MAX_RANKS) {
        c->rank_seen = malloc((size_t) c->nprocs * sizeof(int64_t));
        c->rank_pid = calloc((size_t) c->nprocs, sizeof(int64_t));
        if (!c->rank_seen || !c->rank_pid) {
            free(c->rank_seen);
            free(c->rank_pid);
            c->rank_seen = c->rank_pid = NULL;
            return NULL;
        }
        for (int64_t r = 0; r < c->nprocs; r++)
            c->rank_seen[r] = -1;
    }
    return c->rank_seen;
}

void xferd_liveness_reset(xferd_comp_t *c, int64_t now)
{
    free(c->rank_seen);
    free(c->rank_pid);
    free(c->error);
    c->rank_seen = c->rank_pid = NULL;
    c->error = NULL;
    c->registered = now;
}

/* The component of the request's session (any state), or NULL with @p res set. */
static xferd_comp_t *of_session(xferd_t *d, const xfer_ctl_msg_t *req, xferd_res_t *res)
{
    const int64_t s = xfer_ctl_int(req, "session", 0);
    const int64_t k = s >= 1 ? (s - 1) % XFERD_SLOTS : -1;
    if (k < 0 || k >= d->ncomp || d->comp[k].session != s) {
        xferd_res_err(res, "unknown", "no session %" PRId64, s);
        return NULL;
    }
    return &d->comp[k];
}

void xferd_op_error(xferd_t *d, const xfer_ctl_msg_t *req, xferd_res_t *res)
{
    xferd_comp_t *c = of_session(d, req, res);
    char line[1100];
    if (!c || c->error) /* the first one says what went wrong; the rest follow from it */
        return;
    snprintf(line, sizeof(line), "rank %" PRId64 ": %s", xfer_ctl_int(req, "rank", 0),
             xfer_ctl_str(req, "text", ""));
    c->error = strdup(line);
    if (!c->error)
        xferd_res_err(res, "internal", "no memory for the error of component %s", c->name);
    else
        xferd_log(d, XFERD_INFO, "component %s reports: %s", c->name, line);
}

void xferd_op_beat(xferd_t *d, const xfer_ctl_msg_t *req, xferd_res_t *res)
{
    const int64_t rank = xfer_ctl_int(req, "rank", 0);
    xferd_comp_t *c = of_session(d, req, res);

    if (!c)
        return;
    if (c->state == XFERD_FAILED) {
        xferd_res_err(res, "failed", "component %s was declared failed", c->name);
        return;
    }
    if (c->state != XFERD_RUNNING) { /* said bye: the ranks stop soon after */
        xferd_res_err(res, "order", "the session of component %s ended", c->name);
        return;
    }
    if (rank < 1 || rank >= c->nprocs) {
        xferd_res_err(res, "protocol",
                      "rank %" PRId64 " of component %s, which has %" PRId64 " ranks", rank,
                      c->name, c->nprocs);
        return;
    }
    if (!rank_arrays(c)) {
        xferd_res_err(res, "internal", "no memory for the ranks of component %s", c->name);
        return;
    }
    c->rank_seen[rank] = xferd_now_ms();
    c->rank_pid[rank] = xfer_ctl_int(req, "pid", 0);
}

void xferd_liveness_shift(xferd_t *d, int64_t stall, int64_t now)
{
    for (int k = 0; k < d->ncomp; k++) {
        xferd_comp_t *c = &d->comp[k];
        if (c->state != XFERD_RUNNING)
            continue;
        if (c->last_seen >= 0)
            c->last_seen = c->last_seen + stall < now ? c->last_seen + stall : now;
        c->registered = c->registered + stall < now ? c->registered + stall : now;
        for (int64_t r = 1; c->rank_seen && r < c->nprocs; r++)
            if (c->rank_seen[r] >= 0)
                c->rank_seen[r] = c->rank_seen[r] + stall < now ? c->rank_seen[r] + stall : now;
    }
}

void xferd_liveness_check(xferd_t *d, int64_t now)
{
    char reason[256];

    for (int k = 0; k < d->ncomp; k++) {
        xferd_comp_t *c = &d->comp[k];
        if (c->state != XFERD_RUNNING)
            continue;
        if (now - c->last_seen > d->hb_timeout_ms) {
            snprintf(reason, sizeof(reason),
                     "rank 0 (pid %" PRId64 ") sent no heartbeat for %" PRId64
                     " ms (timeout %d ms): stopped, hung or dead",
                     c->pid, now - c->last_seen, d->hb_timeout_ms);
            xferd_declare_failure(d, k, reason);
            continue;
        }
        if (c->unconfirmed || c->nprocs < 2)
            continue;
        for (int64_t r = 1; r < c->nprocs; r++) {
            const int64_t seen = c->rank_seen ? c->rank_seen[r] : -1;
            if (seen >= 0 && now - seen > d->hb_timeout_ms) {
                snprintf(reason, sizeof(reason),
                         "rank %" PRId64 " (pid %" PRId64 ") sent no heartbeat for %" PRId64
                         " ms (timeout %d ms): stopped, hung or dead",
                         r, c->rank_pid[r], now - seen, d->hb_timeout_ms);
            } else if (seen < 0 && now - c->registered > 2 * (int64_t) d->hb_timeout_ms) {
                snprintf(reason, sizeof(reason),
                         "rank %" PRId64 " sent no heartbeat in the %" PRId64
                         " ms since rank 0 registered (timeout %d ms): is it running, and can it "
                         "reach xferd?",
                         r, now - c->registered, d->hb_timeout_ms);
            } else {
                continue;
            }
            xferd_declare_failure(d, k, reason);
            break;
        }
    }
}
