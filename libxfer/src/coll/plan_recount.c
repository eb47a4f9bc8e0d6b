/* SPDX-License-Identifier: BSD-3-Clause */
/* A persistent allgatherv plan recounted for other counts (coll.h, xfer_plan_recount). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "coll.h"

/* Are two groups the same ranks in the same order (so one communicator serves both)? */
static int same_group(const xfer_group_t *x, const xfer_group_t *y)
{
    int k;
    if (x->slot != y->slot || x->comm != y->comm || x->nranges != y->nranges ||
        x->size != y->size || x->my_index != y->my_index)
        return 0;
    for (k = 0; k < x->nranges; k++)
        if (x->ranges[k].start != y->ranges[k].start ||
            x->ranges[k].stride != y->ranges[k].stride || x->ranges[k].count != y->ranges[k].count)
            return 0;
    return 1;
}

/* The communicators of a recount's schedule @p s into @p gcomm (s->ngroups entries): a LOCAL
 * group's is the plan's local communicator (it exists whether or not the first schedule used
 * it), a split group's the one the plan made for the same group of @p old. 0 when one has none. */
static int regroup(const xfer_plan_t *p, const xfer_sched_t *old, const xfer_sched_t *s,
                   MPI_Comm *gcomm)
{
    int i, j;
    for (i = 0; i < s->ngroups; i++) {
        const xfer_group_t *g = &s->groups[i];
        gcomm[i] = MPI_COMM_NULL;
        if (g->slot == XFER_SLOT_LOCAL) {
            gcomm[i] = p->local[g->comm == XFER_COMM_STRIPE];
            if (gcomm[i] == MPI_COMM_NULL)
                return 0;
            continue;
        }
        for (j = 0; old && j < old->ngroups; j++)
            if (same_group(&old->groups[j], g)) {
                gcomm[i] = p->gcomm[j];
                break;
            }
        if (!old || j == old->ngroups)
            return 0;
    }
    return 1;
}

/* auto's choice for the new counts (opts.reselect), among the algorithms a recount can run:
 * those that never split the groups, native excepted (its task is the first call's). The shape
 * and the model are the same on every rank, so is the choice. Traced as a plan's choice is
 * (XFER_TRACE=1: each group's rank 0; 2: every rank), with the algorithm it replaces. */
static void reselect(xfer_plan_t *p)
{
    const xfer_algo_t *was = p->algo;
    const int lvl = xfer_trace_level();
    xfer_model_t m;
    char how[512], what[80] = "";

    m = *xfer_selector_base_model(p->sel);
    m.exclude = XFER_ALGO_SPLITS | XFER_ALGO_NATIVE;
    p->algo = xfer_select_auto(&p->shape, &m, how, sizeof(how), NULL);
    snprintf(p->name, sizeof(p->name), "%s", p->algo->name);
    if (lvl < 1 || (lvl < 2 && p->topo->rank != 0))
        return;
    if (p->algo != was)
        snprintf(what, sizeof(what), " (was %s)", was->name);
    xfer_log(XFER_LOG_TRACE, "recount group %d rank %d: bytes %zu|%zu -> %s%s [%s]", p->topo->group,
             p->topo->rank, p->shape.total[0], p->shape.total[1], p->algo->name, what, how);
}

static xfer_status_t recount_one(xfer_plan_t *p, const void *sbuf, int scount, void *rbuf,
                                 const int rcounts[], const int rdispls[],
                                 const size_t local_bytes[])
{
    const int g = p->topo->group, o = 1 - g, nr = p->topo->n[o];
    xfer_sched_t *old = NULL;
    MPI_Comm *gcomm = NULL;
    size_t *old_cnt[2] = {NULL, NULL}, *old_pre[2] = {NULL, NULL};
    xfer_status_t st;
    int i;

    if (p->active)
        return XFER_ERR(XFER_ERR_STATE, "recount of an active plan");
    if (!p->persistent || p->call.kind != XFER_CALL_ALLGATHERV || !p->rcounts_copy)
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED, "only a persistent allgatherv plan recounts");
    if (p->exec_ready) {
        xfer_exec_fini(&p->exec);
        p->exec_ready = 0;
    }
    for (i = 0; i < nr; i++) {
        p->rcounts_copy[i] = rcounts[i];
        p->rdispls_copy[i] = rdispls[i];
    }
    p->call.sbuf = sbuf;
    p->call.scount = scount;
    p->call.rbuf = rbuf;
    XFER_CHECK_GOTO(xfer_plan_validate(p), st, out);
    if (local_bytes[p->topo->rank] != p->my_bytes)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "recount: this rank sends %zu bytes, not %zu",
                        p->my_bytes, local_bytes[p->topo->rank]);
    /* the new shape, in new arrays: the old schedule refers to the old ones until it goes */
    old = p->sched;
    p->sched = NULL;
    for (i = 0; i < 2; i++) {
        old_cnt[i] = p->cnt[i];
        old_pre[i] = p->pre[i];
        p->cnt[i] = p->pre[i] = NULL;
    }
    XFER_CHECK_GOTO(xfer_plan_alloc_counts(p, g), st, out);
    XFER_CHECK_GOTO(xfer_plan_alloc_counts(p, o), st, out);
    for (i = 0; i < nr; i++)
        p->cnt[o][i] = (size_t) rcounts[i] * (size_t) p->rinfo.size;
    for (i = 0; i < p->topo->n[g]; i++)
        p->cnt[g][i] = local_bytes[i];
    xfer_plan_finish_counts(p, o);
    xfer_plan_finish_counts(p, g);
    if (p->opts.hier) {
        XFER_CHECK_GOTO(xfer_hier_recount(p), st, out);
    } else {
        const char *why = "";
        if (p->opts.reselect)
            reselect(p);
        if (!xfer_algo_supports(p->algo, &p->shape, &why) ||
            ((p->shape.total[0] > INT_MAX || p->shape.total[1] > INT_MAX) &&
             !(p->algo->flags & XFER_ALGO_NATIVE))) {
            st = XFER_ERR(XFER_ERR_NOT_SUPPORTED, "recount: %s cannot run the new counts: %s",
                          p->algo->name, why[0] ? why : "more than INT_MAX bytes");
            goto out;
        }
        XFER_CHECK_GOTO(xfer_sched_create(&p->shape, g, p->topo->rank, &p->sched), st, out);
        if (p->algo->flags & XFER_ALGO_NATIVE) {
            p->sched->algo = "native";
            xfer_sched_task(p->sched, 0);
            XFER_CHECK_GOTO(xfer_sched_finish(p->sched), st, out);
        } else {
            XFER_CHECK_GOTO(p->algo->build(&p->shape, p->sched), st, out);
        }
    }
    gcomm = xfer_calloc((size_t) XFER_MAX(p->sched->ngroups, 1), sizeof(MPI_Comm));
    if (!gcomm) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "recount: group communicator table");
        goto out;
    }
    if (!regroup(p, old, p->sched, gcomm)) {
        st = XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                      "recount: %s's schedule for the new counts needs other groups", p->name);
        goto out;
    }
    xfer_free(p->gcomm);
    p->gcomm = gcomm;
    gcomm = NULL;
    xfer_free(p->stage_send);
    xfer_free(p->stage_recv);
    xfer_free(p->tmp);
    p->stage_send = p->stage_recv = p->tmp = NULL;
    XFER_CHECK_GOTO(xfer_plan_setup_buffers(p), st, out);
    XFER_CHECK_GOTO(
        xfer_exec_init(&p->exec, p->sched, p->comm, p->gcomm,
                       p->hier ? p->hier->tasks
                               : (p->algo->flags & XFER_ALGO_NATIVE ? &p->native_task : NULL),
                       XFER_P2P_TAG, p->opts.intra_allgather),
        st, out);
    p->exec_ready = 1;
out:
    xfer_free(gcomm);
    xfer_sched_destroy(&old); /* before the arrays of its shape */
    for (i = 0; i < 2; i++) {
        xfer_free(old_cnt[i]);
        xfer_free(old_pre[i]);
    }
    return st;
}

xfer_status_t xfer_plan_recount(xfer_plan_t *p, const void *sbuf, int scount, void *rbuf,
                                const int rcounts[], const int rdispls[],
                                const size_t local_bytes[])
{
    xfer_status_t st;
    int k;

    st = recount_one(p, sbuf, scount, rbuf, rcounts, rdispls, local_bytes);

    /* a learning plan's other candidates never split the groups: whether one can take the
     * counts is the same on every rank, and so is the end of the learning (whose plans are
     * freed collectively; a plan that re-chooses at every recount never learns: plan_select.c) */
    for (k = 0; st == XFER_SUCCESS && k < p->nalt; k++)
        if (recount_one(p->alt[k], sbuf, scount, rbuf, rcounts, rdispls, local_bytes) !=
            XFER_SUCCESS) {
            xfer_plan_learn_stop(p);
            break;
        }
    return st;
}
