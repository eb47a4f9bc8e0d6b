/* SPDX-License-Identifier: BSD-3-Clause */
/* A persistent plan that learns over its starts (coll.h): one plan per candidate, built when the
 * plan is; each start runs the one the learning state chooses. The agreement a decision needs is
 * carried by a start (an MPI_Iallreduce on the selector's communicator, completed with the
 * start) and applied at the next, so no start blocks for it. Starts are collective in the same
 * order on every rank, and the decision depends on the agreed vector and the start count only:
 * every rank runs the same candidate at every start. */
#include "../core/core.h"
#include "coll.h"

xfer_status_t xfer_plan_learn_build(xfer_plan_t *p, const xfer_call_t *call,
                                    const xfer_coll_opts_t *opts)
{
    xfer_status_t st = XFER_SUCCESS;
    int k;

    if (p->learn.ncand < 2)
        return XFER_SUCCESS;
    p->learn_ref = (double) p->shape.total[0] + (double) p->shape.total[1];
    p->alt = xfer_calloc((size_t) p->learn.ncand - 1, sizeof(*p->alt));
    if (!p->alt)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "learning: %d candidate plans", p->learn.ncand - 1);
    for (k = 1; k < p->learn.ncand; k++) {
        XFER_CHECK_GOTO(xfer_plan_create_forced(call, opts, xfer_algo_at(p->learn.cand[k])->name,
                                                &p->alt[k - 1]),
                        st, out);
        p->nalt++;
    }
    xfer_selector_trace(p->sel, &p->learn, "persistent plan");
out:
    return st;
}

xfer_status_t xfer_plan_learn_begin(xfer_plan_t *p, xfer_plan_t **run)
{
    xfer_status_t st = XFER_SUCCESS;
    int k;

    if (p->carrier.posted) /* completed with the last start */
        xfer_selector_apply(p->sel, &p->learn, &p->carrier);
    if (p->nalt > 0 && xfer_learn_due(&p->learn))
        XFER_CHECK_GOTO(xfer_selector_post(p->sel, &p->learn, &p->carrier), st, out);
    k = p->nalt > 0 ? xfer_learn_choose(&p->learn) : 0;
    p->run_slot = k;
    p->run = k == 0 ? p : p->alt[k - 1];
    *run = p->run;
out:
    return st;
}

xfer_status_t xfer_plan_learn_progress(xfer_plan_t *p, int blocking, int *done)
{
    xfer_status_t st = XFER_SUCCESS;

    *done = 1;
    if (!p->carrier.posted || p->carrier.req == MPI_REQUEST_NULL)
        return XFER_SUCCESS;
    if (blocking)
        XFER_MPI_GOTO(MPI_Wait(&p->carrier.req, MPI_STATUS_IGNORE), st, out);
    else
        XFER_MPI_GOTO(MPI_Test(&p->carrier.req, done, MPI_STATUS_IGNORE), st, out);
out:
    return st;
}

void xfer_plan_learn_record(xfer_plan_t *p, double seconds)
{
    const double v = (double) p->run->shape.total[0] + (double) p->run->shape.total[1];
    if (p->nalt > 0 && v > 0.0)
        xfer_learn_record(&p->learn, p->run_slot, seconds * p->learn_ref / v);
}

void xfer_plan_learn_release(xfer_plan_t *p, int mpi)
{
    int k;
    for (k = 0; k < p->nalt; k++) {
        if (mpi)
            xfer_plan_free(&p->alt[k]);
        else
            xfer_plan_abandon(&p->alt[k]);
    }
    xfer_free(p->alt);
    p->alt = NULL;
    p->nalt = 0;
    p->run = p;
    p->run_slot = 0;
}

void xfer_plan_learn_stop(xfer_plan_t *p)
{
    const int first = p->learn.cand[0];
    xfer_plan_learn_release(p, 1);
    xfer_learn_init(&p->learn, &first, 1, 0);
    xfer_selector_trace(p->sel, &p->learn, "recount: learning ends");
}
