/* SPDX-License-Identifier: BSD-3-Clause */
/* The context's helpers that channels call (runtime.h): the end of a public call, the liveness
 * deadline of a wait, the agreement of a component's ranks, a channel's transport. They call
 * no channel function. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"

xfer_status_t xfer_rt_done(struct xfer *x, xfer_status_t st)
{
    char text[1100];
    if (st == XFER_SUCCESS) {
        xfer_clear_error(); /* no stale words after a success */
        return st;
    }
    if (st == XFER_ERR_END_OF_STREAM || st == XFER_ERR_INTERRUPTED || st == XFER_ERR_SPILL_FULL ||
        !x || !x->use_ctl)
        return st; /* what a loop expects (a full spill: commit again), or nobody to tell */
    snprintf(text, sizeof(text), "%s", xfer_last_error());
    {
        char line[1200];
        snprintf(line, sizeof(line), "%s: %s", xfer_status_name(st), text);
        xfer_rt_ctl_error(x, line);
    }
    return xfer_err_raw(st, "%s", text); /* (the report may have left words of its own) */
}

int xfer_rt_form_bound(const struct xfer *x, int index)
{
    return x->timeout_ms > INT_MAX / (index + 1) ? INT_MAX : x->timeout_ms * (index + 1);
}

double xfer_rt_deadline(const struct xfer *x)
{
    return x->live == XFER_LIVE_CLOCK ? MPI_Wtime() + 1e-3 * x->timeout_ms : HUGE_VAL;
}

xfer_status_t xfer_rt_agree(MPI_Comm comm, xfer_status_t st)
{
    struct {
        int st, rank;
    } in, res;
    char msg[1024];
    int rank;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return st != XFER_SUCCESS ? st : XFER_ERR(XFER_ERR_MPI, "MPI_Comm_rank failed");
    in.st = (int) st;
    in.rank = rank;
    if (MPI_Allreduce(&in, &res, 1, MPI_2INT, MPI_MINLOC, comm) != MPI_SUCCESS)
        return st != XFER_SUCCESS ? st : XFER_ERR(XFER_ERR_MPI, "MPI_Allreduce failed");
    if (res.st == XFER_SUCCESS)
        return XFER_SUCCESS;
    snprintf(msg, sizeof(msg), "%s", xfer_last_error());
    if (MPI_Bcast(msg, (int) sizeof(msg), MPI_CHAR, res.rank, comm) != MPI_SUCCESS)
        return st != XFER_SUCCESS ? st : XFER_ERR(XFER_ERR_MPI, "MPI_Bcast failed");
    if (st != XFER_SUCCESS)
        return st;
    return xfer_err_raw((xfer_status_t) res.st, "rank %d: %s", res.rank, msg);
}

xfer_status_t xfer_rt_transport(const struct xfer *x, int index, xfer_transport_t *t)
{
    const char *env = xfer_env_str("XFER_TRANSPORT");
    *t = x->cfg->channels[index].transport;
    if (!env)
        return XFER_SUCCESS;
    if (strcmp(env, "stream") == 0)
        *t = XFER_TRANSPORT_STREAM;
    else if (strcmp(env, "file") == 0)
        *t = XFER_TRANSPORT_FILE;
    else
        return XFER_ERR(XFER_ERR_CONFIG, "XFER_TRANSPORT=%s: stream or file", env);
    return XFER_SUCCESS;
}
