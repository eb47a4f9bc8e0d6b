/* SPDX-License-Identifier: BSD-3-Clause */
/* Public collective entry points: argument packaging only; the work is in plan.c. */
#include "../core/core.h"
#include "coll.h"

static xfer_status_t run_blocking(const xfer_call_t *call, const xfer_coll_opts_t *opts)
{
    xfer_plan_t *p = NULL;
    xfer_status_t st;

    XFER_CHECK_GOTO(xfer_plan_create(call, opts, 0, &p), st, out);
    st = xfer_plan_run_blocking(p);
out:
    xfer_plan_free(&p);
    return st;
}

static void make_call(xfer_call_t *c, int kind, const void *sbuf, int scount, MPI_Datatype stype,
                      void *rbuf, int rcount, const int *rcounts, const int *rdispls,
                      MPI_Datatype rtype, MPI_Comm inter)
{
    c->kind = kind;
    c->sbuf = sbuf;
    c->scount = scount;
    c->stype = stype;
    c->rbuf = rbuf;
    c->rcount = rcount;
    c->rcounts = rcounts;
    c->rdispls = rdispls;
    c->rtype = rtype;
    c->inter = inter;
}

xfer_status_t xfer_allgather_inter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                   int rcount, MPI_Datatype rtype, MPI_Comm inter,
                                   const xfer_coll_opts_t *opts)
{
    xfer_call_t c;
    make_call(&c, XFER_CALL_ALLGATHER, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, inter);
    return xfer_done(run_blocking(&c, opts));
}

xfer_status_t xfer_allgatherv_inter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                    const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                                    MPI_Comm inter, const xfer_coll_opts_t *opts)
{
    xfer_call_t c;
    make_call(&c, XFER_CALL_ALLGATHERV, sbuf, scount, stype, rbuf, 0, rcounts, rdispls, rtype,
              inter);
    return xfer_done(run_blocking(&c, opts));
}

xfer_status_t xfer_allgather_inter_init(const void *sbuf, int scount, MPI_Datatype stype,
                                        void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm inter,
                                        const xfer_coll_opts_t *opts, xfer_plan_t **plan)
{
    xfer_call_t c;
    if (!plan)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "plan is NULL");
    make_call(&c, XFER_CALL_ALLGATHER, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, inter);
    return xfer_done(xfer_plan_create(&c, opts, 1, plan));
}

xfer_status_t xfer_allgatherv_inter_init(const void *sbuf, int scount, MPI_Datatype stype,
                                         void *rbuf, const int rcounts[], const int rdispls[],
                                         MPI_Datatype rtype, MPI_Comm inter,
                                         const xfer_coll_opts_t *opts, xfer_plan_t **plan)
{
    xfer_call_t c;
    if (!plan)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "plan is NULL");
    make_call(&c, XFER_CALL_ALLGATHERV, sbuf, scount, stype, rbuf, 0, rcounts, rdispls, rtype,
              inter);
    return xfer_done(xfer_plan_create(&c, opts, 1, plan));
}
