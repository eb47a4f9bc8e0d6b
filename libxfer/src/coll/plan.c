/* SPDX-License-Identifier: BSD-3-Clause */
#include <limits.h>
#include <string.h>

#include "../core/core.h"
#include "coll.h"

/* ---- argument validation (local, no communication) ------------------------------------------ */

xfer_status_t xfer_plan_validate(xfer_plan_t *p)
{
    const xfer_call_t *c = &p->call;
    const int nr = p->topo->n[1 - p->topo->group];
    xfer_status_t st;
    size_t rbytes = 0;
    int i;

    XFER_CHECK_GOTO(xfer_dtype_query(c->stype, "sendtype", &p->sinfo), st, out);
    XFER_CHECK_GOTO(xfer_dtype_query(c->rtype, "recvtype", &p->rinfo), st, out);
    if (c->sbuf == MPI_IN_PLACE)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "MPI_IN_PLACE is not valid for an intercommunicator %s",
                        c->kind == XFER_CALL_ALLGATHER ? "allgather" : "allgatherv");
    if (c->scount < 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "sendcount is negative (%d)", c->scount);
    p->my_bytes = (size_t) c->scount * (size_t) p->sinfo.size;
    if (!c->sbuf && p->my_bytes > 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "sendbuf is NULL but sendcount is %d", c->scount);
    if (c->kind == XFER_CALL_ALLGATHER) {
        if (c->rcount < 0)
            return XFER_ERR(XFER_ERR_INVALID_ARG, "recvcount is negative (%d)", c->rcount);
        rbytes = (size_t) c->rcount * (size_t) p->rinfo.size * (size_t) nr;
    } else {
        if (!c->rcounts || !c->rdispls)
            return XFER_ERR(XFER_ERR_INVALID_ARG, "recvcounts or displs is NULL");
        for (i = 0; i < nr; i++) {
            if (c->rcounts[i] < 0)
                return XFER_ERR(XFER_ERR_INVALID_ARG, "recvcounts[%d] is negative (%d)", i,
                                c->rcounts[i]);
            rbytes += (size_t) c->rcounts[i] * (size_t) p->rinfo.size;
        }
    }
    if (!c->rbuf && rbytes > 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "recvbuf is NULL but %zu bytes are to be received",
                        rbytes);
    st = XFER_SUCCESS;
out:
    return st;
}

/* ---- shape ------------------------------------------------------------------------------------
 */

xfer_status_t xfer_plan_alloc_counts(xfer_plan_t *p, int g)
{
    p->cnt[g] = xfer_calloc((size_t) p->topo->n[g], sizeof(size_t));
    p->pre[g] = xfer_calloc((size_t) p->topo->n[g] + 1, sizeof(size_t));
    if (!p->cnt[g] || !p->pre[g])
        return XFER_ERR(XFER_ERR_NO_MEMORY, "count arrays for %d ranks", p->topo->n[g]);
    return XFER_SUCCESS;
}

void xfer_plan_finish_counts(xfer_plan_t *p, int g)
{
    int i;
    p->pre[g][0] = 0;
    for (i = 0; i < p->topo->n[g]; i++)
        p->pre[g][i + 1] = p->pre[g][i] + p->cnt[g][i];
    p->shape.cnt[g] = p->cnt[g];
    p->shape.pre[g] = p->pre[g];
    p->shape.total[g] = p->pre[g][p->topo->n[g]];
}

/* Every rank needs the byte counts of both groups. The remote group's come from the receive
 * arguments; the local group's are uniform for allgather and exchanged for allgatherv. A rank
 * whose own arguments are invalid (@p local_err) still takes part, contributing 0. */
static xfer_status_t build_shape(xfer_plan_t *p, xfer_status_t local_err)
{
    const int g = p->topo->group, o = 1 - g;
    const xfer_call_t *c = &p->call;
    xfer_status_t st = XFER_SUCCESS;
    unsigned long long mine, *all = NULL;
    int i;

    memset(&p->shape, 0, sizeof(p->shape));
    p->shape.n[0] = p->topo->n[0];
    p->shape.n[1] = p->topo->n[1];
    /* across several nodes the network's eager limit decides the relays' segments (the same on
     * every rank: nnodes is agreed in topo.c) */
    p->shape.seg_cap = p->topo->nnodes > 1 ? XFER_NET_SEGMENT : 0;
    if (c->kind == XFER_CALL_ALLGATHER) {
        size_t k = local_err ? 0 : (size_t) c->rcount * (size_t) p->rinfo.size;
        p->shape.ucnt[g] = local_err ? 0 : p->my_bytes;
        p->shape.total[g] = p->shape.ucnt[g] * (size_t) p->topo->n[g];
        p->shape.ucnt[o] = k;
        p->shape.total[o] = k * (size_t) p->topo->n[o];
        return XFER_SUCCESS;
    }
    XFER_CHECK_GOTO(xfer_plan_alloc_counts(p, g), st, out);
    XFER_CHECK_GOTO(xfer_plan_alloc_counts(p, o), st, out);
    for (i = 0; !local_err && i < p->topo->n[o]; i++)
        p->cnt[o][i] = (size_t) c->rcounts[i] * (size_t) p->rinfo.size;
    xfer_plan_finish_counts(p, o);
    all = xfer_calloc((size_t) p->topo->n[g], sizeof(*all));
    if (!all) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "count exchange for %d ranks", p->topo->n[g]);
        goto out;
    }
    mine = local_err ? 0 : (unsigned long long) p->my_bytes;
    XFER_MPI_GOTO(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG,
                                p->topo->local),
                  st, out);
    for (i = 0; i < p->topo->n[g]; i++)
        p->cnt[g][i] = (size_t) all[i];
    xfer_plan_finish_counts(p, g);
out:
    xfer_free(all);
    return st;
}

/* ---- preparation --------------------------------------------------------------------------------
 */

static xfer_status_t own_comm(xfer_plan_t *p, MPI_Comm c)
{
    MPI_Comm *n = xfer_realloc_array(p->owned, (size_t) p->nowned + 1, sizeof(MPI_Comm));
    if (!n)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "communicator list");
    p->owned = n;
    p->owned[p->nowned++] = c;
    return XFER_SUCCESS;
}

/* A duplicate of @p c owned by the plan (persistent plans), or @p c itself (blocking calls). */
static xfer_status_t plan_comm(xfer_plan_t *p, MPI_Comm c, MPI_Comm *out)
{
    xfer_status_t st = XFER_SUCCESS;
    *out = c;
    if (!p->persistent || c == MPI_COMM_NULL)
        return XFER_SUCCESS;
    XFER_MPI_GOTO(MPI_Comm_dup(c, out), st, fail);
    XFER_CHECK_GOTO(own_comm(p, *out), st, fail);
    return XFER_SUCCESS;
fail:
    return st;
}

/* The split communicators of one merged communicator's slots (@p comm: XFER_COMM_MAIN or
 * XFER_COMM_STRIPE; @p t: whose cache blocking calls use). */
static xfer_status_t split_slots(xfer_plan_t *p, int comm, int nslots, MPI_Comm merged,
                                 xfer_topo_t *t)
{
    const xfer_sched_t *s = p->sched;
    xfer_status_t st = XFER_SUCCESS;
    int slot, i;

    for (slot = 0; slot < nslots; slot++) {
        int color = MPI_UNDEFINED, order = 0, gi = -1;
        char key[96];
        MPI_Comm c = MPI_COMM_NULL;
        for (i = 0; i < s->ngroups; i++)
            if (s->groups[i].slot == slot && s->groups[i].comm == comm) {
                gi = i;
                color = xfer_group_member(&s->groups[i], 0);
                order = s->groups[i].my_index;
            }
        if (p->persistent) {
            XFER_MPI_GOTO(MPI_Comm_split(merged, color, order, &c), st, out);
            if (c != MPI_COMM_NULL)
                XFER_CHECK_GOTO(own_comm(p, c), st, out);
        } else {
            xfer_sched_comm_key(s, comm, slot, key, sizeof(key));
            XFER_CHECK_GOTO(xfer_topo_split(t, key, color, order, &c), st, out);
        }
        if (gi >= 0)
            for (i = 0; i < s->ngroups; i++)
                if (s->groups[i].slot == slot && s->groups[i].comm == comm)
                    p->gcomm[i] = c;
    }
out:
    return st;
}

/* Communicators for the schedule: point-to-point (the call's merged communicator, a leader's
 * stripe, the node) and the groups' collectives. Blocking calls use the communicators cached on
 * the intercommunicator; a persistent plan gets its own duplicates so that several active plans
 * never match each other's messages or collectives. */
static xfer_status_t setup_comms(xfer_plan_t *p)
{
    const xfer_sched_t *s = p->sched;
    xfer_topo_t *stt = p->hier ? p->hier->stripe_topo : NULL;
    xfer_status_t st = XFER_SUCCESS;
    MPI_Comm local, slocal = MPI_COMM_NULL;
    int i;

    p->gcomm = xfer_calloc((size_t) XFER_MAX(s->ngroups, 1), sizeof(MPI_Comm));
    if (!p->gcomm)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "group communicator table");
    for (i = 0; i < s->ngroups; i++)
        p->gcomm[i] = MPI_COMM_NULL;
    for (i = 0; i < XFER_NCOMMS; i++)
        p->comm[i] = MPI_COMM_NULL;
    XFER_CHECK_GOTO(plan_comm(p, p->topo->merged, &p->merged), st, out);
    p->comm[XFER_COMM_MAIN] = p->merged;
    XFER_CHECK_GOTO(plan_comm(p, p->topo->local, &local), st, out);
    if (p->hier)
        XFER_CHECK_GOTO(plan_comm(p, p->topo->hm->node_comm, &p->comm[XFER_COMM_NODE]), st, out);
    if (stt) {
        XFER_CHECK_GOTO(plan_comm(p, stt->merged, &p->comm[XFER_COMM_STRIPE]), st, out);
        XFER_CHECK_GOTO(plan_comm(p, stt->local, &slocal), st, out);
    }
    XFER_CHECK_GOTO(split_slots(p, XFER_COMM_MAIN, s->nslots, p->merged, p->topo), st, out);
    if (stt)
        XFER_CHECK_GOTO(
            split_slots(p, XFER_COMM_STRIPE, s->nslots_stripe, p->comm[XFER_COMM_STRIPE], stt), st,
            out);
    p->local[0] = local;
    p->local[1] = slocal;
    for (i = 0; i < s->ngroups; i++)
        if (s->groups[i].slot == XFER_SLOT_LOCAL)
            p->gcomm[i] = s->groups[i].comm == XFER_COMM_STRIPE ? slocal : local;
    for (i = 0; i < p->nowned; i++)
        XFER_MPI_GOTO(MPI_Comm_set_errhandler(p->owned[i], MPI_ERRORS_RETURN), st, out);
out:
    return st;
}

/* Where the packed result can live: straight in the user's buffer when the receive type is
 * contiguous and the blocks are laid out back to back (zero-count blocks may point anywhere). */
static int recv_direct(const xfer_plan_t *p, MPI_Aint *base_elems)
{
    const xfer_call_t *c = &p->call;
    const int nr = p->topo->n[1 - p->topo->group];
    long long pre = 0, d0 = 0;
    int i, first = 1;

    *base_elems = 0;
    if (!p->rinfo.contiguous)
        return 0;
    if (c->kind == XFER_CALL_ALLGATHER)
        return 1;
    for (i = 0; i < nr; i++) {
        if (c->rcounts[i] > 0) {
            if (first) {
                d0 = (long long) c->rdispls[i] - pre;
                first = 0;
            } else if ((long long) c->rdispls[i] != d0 + pre) {
                return 0;
            }
        }
        pre += c->rcounts[i];
    }
    *base_elems = (MPI_Aint) d0;
    return 1;
}

xfer_status_t xfer_plan_setup_buffers(xfer_plan_t *p)
{
    const xfer_call_t *c = &p->call;
    const size_t rtotal = p->shape.total[1 - p->topo->group];
    MPI_Aint d0 = 0;
    int psize = 0;
    xfer_status_t st = XFER_SUCCESS;

    if (p->my_bytes == 0) {
        p->send_ptr = NULL;
    } else if (p->sinfo.contiguous) {
        p->send_ptr = (const char *) c->sbuf + p->sinfo.true_lb;
    } else {
        XFER_MPI_GOTO(MPI_Pack_size(c->scount, c->stype, p->merged, &psize), st, out);
        if ((size_t) psize != p->my_bytes)
            return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                            "this MPI packs %d x sendtype into %d bytes, not %zu; non-contiguous "
                            "types need the raw packed format",
                            c->scount, psize, p->my_bytes);
        p->stage_send = xfer_malloc(p->my_bytes);
        if (!p->stage_send)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "send staging of %zu bytes", p->my_bytes);
        p->send_ptr = p->stage_send;
    }
    if (rtotal == 0) {
        p->recv_ptr = NULL;
    } else if (recv_direct(p, &d0)) {
        p->recv_ptr = (char *) c->rbuf + p->rinfo.true_lb + d0 * p->rinfo.extent;
    } else {
        p->stage_recv = xfer_malloc(rtotal);
        if (!p->stage_recv)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "receive staging of %zu bytes", rtotal);
        p->recv_ptr = p->stage_recv;
    }
    if (p->sched && p->sched->tmp_bytes > 0) {
        p->tmp = xfer_malloc(p->sched->tmp_bytes);
        if (!p->tmp)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "scratch of %zu bytes", p->sched->tmp_bytes);
    }
out:
    return st;
}

/* ---- native: the MPI library's intercommunicator collective, as the one task of a schedule -- */

/* The MPI library's call: nonblocking into *@p r, or blocking with @p r NULL. PMPI_ entry
 * points: they reach the MPI library even under our own interposer. */
static xfer_status_t native_call(xfer_plan_t *p, MPI_Request *r)
{
    const xfer_call_t *c = &p->call;
    xfer_status_t st = XFER_SUCCESS;
    int rc;
    if (c->kind == XFER_CALL_ALLGATHER)
        rc = r ? PMPI_Iallgather(c->sbuf, c->scount, c->stype, c->rbuf, c->rcount, c->rtype,
                                 c->inter, r)
               : PMPI_Allgather(c->sbuf, c->scount, c->stype, c->rbuf, c->rcount, c->rtype,
                                c->inter);
    else
        rc = r ? PMPI_Iallgatherv(c->sbuf, c->scount, c->stype, c->rbuf, c->rcounts, c->rdispls,
                                  c->rtype, c->inter, r)
               : PMPI_Allgatherv(c->sbuf, c->scount, c->stype, c->rbuf, c->rcounts, c->rdispls,
                                 c->rtype, c->inter);
    XFER_MPI_GOTO(rc, st, out);
out:
    return st;
}

static xfer_status_t native_post(void *arg)
{
    xfer_plan_t *p = arg;
    return native_call(p, &p->native_req);
}

static xfer_status_t native_progress(void *arg, int *done)
{
    xfer_plan_t *p = arg;
    xfer_status_t st = XFER_SUCCESS;
    XFER_MPI_GOTO(MPI_Test(&p->native_req, done, MPI_STATUS_IGNORE), st, out);
out:
    return st;
}

/* The blocking call, when it is all there is to do (better tuned than the nonblocking one). */
static xfer_status_t native_run(void *arg)
{
    return native_call(arg, NULL);
}

/* A schedule of one task on the user's buffers: no packing, no communicators of our own. */
static xfer_status_t prepare_native(xfer_plan_t *p)
{
    xfer_status_t st;
    int i;

    XFER_CHECK_GOTO(xfer_sched_create(&p->shape, p->topo->group, p->topo->rank, &p->sched), st,
                    out);
    p->sched->algo = "native";
    xfer_sched_task(p->sched, 0);
    XFER_CHECK_GOTO(xfer_sched_finish(p->sched), st, out);
    p->native_task.post = native_post;
    p->native_task.progress = native_progress;
    p->native_task.run = native_run;
    p->native_task.arg = p;
    p->native_task.what = "the MPI library's intercommunicator allgather";
    for (i = 0; i < XFER_NCOMMS; i++)
        p->comm[i] = MPI_COMM_NULL;
    p->comm[XFER_COMM_MAIN] = p->merged = p->topo->merged;
    XFER_CHECK_GOTO(xfer_exec_init(&p->exec, p->sched, p->comm, NULL, &p->native_task, XFER_P2P_TAG,
                                   p->opts.intra_allgather),
                    st, out);
    p->exec_ready = 1;
out:
    return st;
}

static xfer_status_t prepare(xfer_plan_t *p)
{
    xfer_status_t st;

    if (!p->opts.hier && (p->algo->flags & XFER_ALGO_NATIVE))
        return prepare_native(p);
    if (p->opts.hier) { /* node staging: geometry, window and this rank's schedule */
        XFER_CHECK_GOTO(xfer_hier_prepare(p), st, out);
        snprintf(p->name, sizeof(p->name), "hier:%s",
                 p->hier->direct ? "direct" : p->hier->inner->name);
    } else {
        XFER_CHECK_GOTO(xfer_sched_create(&p->shape, p->topo->group, p->topo->rank, &p->sched), st,
                        out);
        XFER_CHECK_GOTO(p->algo->build(&p->shape, p->sched), st, out);
    }
    XFER_CHECK_GOTO(setup_comms(p), st, out);
    XFER_CHECK_GOTO(xfer_plan_setup_buffers(p), st, out);
    XFER_CHECK_GOTO(xfer_exec_init(&p->exec, p->sched, p->comm, p->gcomm,
                                   p->hier ? p->hier->tasks : NULL, XFER_P2P_TAG,
                                   p->opts.intra_allgather),
                    st, out);
    p->exec_ready = 1;
out:
    return st;
}

static xfer_status_t plan_create(const xfer_call_t *call, const xfer_coll_opts_t *opts,
                                 int persistent, size_t win_s, size_t win_r, const char *force,
                                 xfer_plan_t **out)
{
    xfer_status_t st, local_err;
    xfer_plan_t *p;
    int nr, i;

    *out = NULL;
    p = xfer_calloc(1, sizeof(*p));
    if (!p)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "plan object");
    p->call = *call;
    p->persistent = persistent;
    p->native_req = MPI_REQUEST_NULL;
    p->merged = MPI_COMM_NULL;
    p->carrier.req = MPI_REQUEST_NULL;
    p->run = p;
    XFER_CHECK_GOTO(xfer_opts_resolve(opts, &p->opts), st, fail);
    p->opts.win_s_min = win_s;
    p->opts.win_r_min = win_r;
    if (force) { /* a learning plan's other candidate: exactly this algorithm, flat */
        p->opts.algorithm = force;
        p->opts.algorithm_from_env = p->opts.fallback_from_env = p->opts.fallback_warn = 0;
        p->opts.hier = 0;
        p->opts.hier_inner = NULL;
        p->opts.check = 0;
        p->opts.learn = XFER_COLL_LEARN_OFF;
    }
    XFER_CHECK_GOTO(xfer_topo_get(call->inter, &p->topo), st, fail);
    XFER_CHECK_GOTO(xfer_selector_get(p->topo, &p->sel), st, fail);

    /* From here on every rank makes the same collective calls even when its own arguments are
     * wrong, if XFER_CHECK asks for it, so that all ranks learn of the error together. */
    local_err = xfer_plan_validate(p);
    if (local_err != XFER_SUCCESS && !p->opts.check) {
        st = local_err;
        goto fail;
    }
    nr = p->topo->n[1 - p->topo->group];
    if (persistent && call->kind == XFER_CALL_ALLGATHERV && local_err == XFER_SUCCESS) {
        p->rcounts_copy = xfer_malloc((size_t) nr * sizeof(int));
        p->rdispls_copy = xfer_malloc((size_t) nr * sizeof(int));
        if (!p->rcounts_copy || !p->rdispls_copy) {
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "copies of recvcounts/displs");
            goto fail;
        }
        for (i = 0; i < nr; i++) {
            p->rcounts_copy[i] = call->rcounts[i];
            p->rdispls_copy[i] = call->rdispls[i];
        }
        p->call.rcounts = p->rcounts_copy;
        p->call.rdispls = p->rdispls_copy;
    }
    XFER_CHECK_GOTO(build_shape(p, local_err), st, fail);
    if (local_err == XFER_SUCCESS)
        local_err = xfer_plan_select(p);
    if (p->opts.check)
        XFER_CHECK_GOTO(xfer_check_args(p->topo, &p->call, local_err,
                                        p->opts.hier ? XFER_CHECK_HIER : xfer_algo_index(p->algo)),
                        st, fail);
    else if (local_err != XFER_SUCCESS) {
        st = local_err;
        goto fail;
    }
    XFER_CHECK_GOTO(xfer_plan_select_learned(p), st, fail);
    XFER_CHECK_GOTO(prepare(p), st, fail);
    if (persistent)
        XFER_CHECK_GOTO(xfer_plan_learn_build(p, call, opts), st, fail);
    *out = p;
    return XFER_SUCCESS;
fail:
    xfer_plan_free(&p);
    return st;
}

xfer_status_t xfer_plan_create(const xfer_call_t *call, const xfer_coll_opts_t *opts,
                               int persistent, xfer_plan_t **out)
{
    return plan_create(call, opts, persistent, 0, 0, NULL, out);
}

xfer_status_t xfer_plan_create_reserved(const xfer_call_t *call, const xfer_coll_opts_t *opts,
                                        size_t win_s, size_t win_r, xfer_plan_t **out)
{
    return plan_create(call, opts, 1, win_s, win_r, NULL, out);
}

xfer_status_t xfer_plan_create_forced(const xfer_call_t *call, const xfer_coll_opts_t *opts,
                                      const char *algo, xfer_plan_t **out)
{
    return plan_create(call, opts, 1, 0, 0, algo, out);
}

/* ---- execution ---------------------------------------------------------------------------- */

static xfer_status_t unpack_result(xfer_plan_t *p)
{
    const xfer_call_t *c = &p->call;
    const int nr = p->topo->n[1 - p->topo->group];
    const int total = (int) p->shape.total[1 - p->topo->group];
    xfer_status_t st = XFER_SUCCESS;
    int i, pos = 0;

    if (!p->stage_recv)
        return XFER_SUCCESS;
    for (i = 0; i < nr; i++) {
        int n = c->kind == XFER_CALL_ALLGATHER ? c->rcount : c->rcounts[i];
        MPI_Aint d = c->kind == XFER_CALL_ALLGATHER ? (MPI_Aint) i * c->rcount : c->rdispls[i];
        if (n == 0)
            continue;
        XFER_MPI_GOTO(MPI_Unpack(p->stage_recv, total, &pos, (char *) c->rbuf + d * p->rinfo.extent,
                                 n, c->rtype, p->merged),
                      st, out);
    }
out:
    return st;
}

static _Thread_local xfer_op_stats_t last_stats;

xfer_status_t xfer_last_op_stats(xfer_op_stats_t *out)
{
    if (!out)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "stats is NULL");
    *out = last_stats;
    return XFER_SUCCESS;
}

/* Statistics of the operation that just completed. Flat operations: all of the call counts as
 * the transfer between the groups. Node staging: the executor's account of transfers, flag
 * waits and copies, and the roles this rank took. */
static void record_stats(xfer_plan_t *p)
{
    p->stats.t_exit = MPI_Wtime();
    if (p->hier) {
        p->stats.inter_s = p->exec.times.inter_s;
        p->stats.wait_s = p->exec.times.wait_s;
        p->stats.intra_s = p->exec.times.intra_s;
        xfer_hier_stats(p, &p->stats);
    } else {
        p->stats.inter_s = p->stats.t_exit - p->stats.t_enter;
        p->stats.roles = (p->shape.total[p->topo->group] > 0 ? 1 : 0) |
                         (p->shape.total[1 - p->topo->group] > 0 ? 2 : 0);
    }
    last_stats = p->stats;
    xfer_select_last_set(p->name);
    xfer_pick_record(&p->pick, p->stats.t_exit - p->stats.t_enter);
    if (p->hier && xfer_trace_level() >= 2)
        xfer_log(XFER_LOG_DEBUG,
                 "hier group %d rank %d (node %d slot %d%s) epoch %ld: %.6f s in call, intra "
                 "%.6f, inter %.6f, wait %.6f",
                 p->topo->group, p->topo->rank, p->hier->node, p->hier->slot,
                 p->stats.leader ? ", leader" : "", p->hier->epoch,
                 p->stats.t_exit - p->stats.t_enter, p->stats.intra_s, p->stats.inter_s,
                 p->stats.wait_s);
}

static xfer_status_t run_start(xfer_plan_t *p)
{
    xfer_status_t st = XFER_SUCCESS;
    int pos = 0;

    memset(&p->stats, 0, sizeof(p->stats));
    p->stats.t_enter = MPI_Wtime();
    p->stats.leader = 1;
    if (p->stage_send)
        XFER_MPI_GOTO(MPI_Pack(p->call.sbuf, p->call.scount, p->call.stype, p->stage_send,
                               (int) p->my_bytes, &pos, p->merged),
                      st, out);
    if (p->hier)
        xfer_exec_bind_node(&p->exec, p->hier->win, xfer_hier_begin(p));
    xfer_exec_bind(&p->exec, p->send_ptr, p->recv_ptr, p->tmp);
    XFER_CHECK_GOTO(xfer_exec_start(&p->exec, p->opts.timeout_ms), st, out);
    p->running = 1;
out:
    return st;
}

/* Drive the operation of the plan that runs it; never blocks unless @p blocking. */
static xfer_status_t run_progress(xfer_plan_t *p, int blocking, int *done)
{
    xfer_status_t st = XFER_SUCCESS;

    *done = 0;
    if (!p->running) {
        *done = 1;
        return XFER_SUCCESS;
    }
    st = xfer_exec_progress(&p->exec, blocking, done);
    if (st != XFER_SUCCESS) {
        p->running = 0;
        goto out;
    }
    if (*done) {
        p->running = 0;
        record_stats(p);
        st = unpack_result(p);
    }
out:
    return st;
}

/* A start of @p p: a learning plan runs the candidate its state chooses (plan_learn.c). */
static xfer_status_t plan_start(xfer_plan_t *p)
{
    xfer_status_t st;
    xfer_plan_t *r = p;

    if (p->active)
        return XFER_ERR(XFER_ERR_STATE, "the plan is already active: call xfer_wait first");
    if (p->persistent)
        XFER_CHECK_GOTO(xfer_plan_learn_begin(p, &r), st, out);
    XFER_CHECK_GOTO(run_start(r), st, out);
    p->active = 1;
out:
    return st;
}

static xfer_status_t plan_progress(xfer_plan_t *p, int blocking, int *done)
{
    xfer_plan_t *r = p->run; /* (p itself unless a learning plan runs another candidate) */
    xfer_status_t st = XFER_SUCCESS;

    *done = 0;
    if (!p->active) {
        *done = 1;
        return XFER_SUCCESS;
    }
    if (r->running) {
        st = run_progress(r, blocking, done);
        if (st != XFER_SUCCESS || !*done)
            goto out;
        if (r != p) /* an alt's statistics are the call's */
            p->stats = r->stats;
        if (p->persistent)
            xfer_plan_learn_record(p, r->stats.t_exit - r->stats.t_enter);
    }
    st = xfer_plan_learn_progress(p, blocking, done);
out:
    if (st != XFER_SUCCESS || *done)
        p->active = 0;
    return st;
}

/* ---- public entry points on plans ---------------------------------------------------------- */

xfer_status_t xfer_start(xfer_plan_t *p)
{
    if (!p)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "plan is NULL");
    return xfer_done(plan_start(p));
}

xfer_status_t xfer_wait(xfer_plan_t *p)
{
    int done;
    if (!p)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "plan is NULL");
    if (!p->active)
        return XFER_ERR(XFER_ERR_STATE, "the plan is not active: call xfer_start first");
    return xfer_done(plan_progress(p, 1, &done));
}

xfer_status_t xfer_test(xfer_plan_t *p, int *done)
{
    if (!p || !done)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "plan or done is NULL");
    return xfer_done(plan_progress(p, 0, done));
}

xfer_status_t xfer_plan_run_blocking(xfer_plan_t *p)
{
    xfer_status_t st;
    int done;
    XFER_CHECK_GOTO(plan_start(p), st, out);
    st = plan_progress(p, 1, &done);
out:
    return st;
}

/* The plan's memory; with @p mpi its communicators and windows too (collective calls). */
static void plan_release(xfer_plan_t *p, int mpi)
{
    int i;

    if (p->carrier.req != MPI_REQUEST_NULL) {
        /* a carried agreement still runs (the plan failed in its start): MPI may write into the
         * plan, which therefore stays */
        xfer_log(XFER_LOG_DEBUG, "plan with an agreement in flight left to MPI_Finalize");
        return;
    }
    xfer_plan_learn_release(p, mpi);
    if (p->exec_ready)
        xfer_exec_fini(&p->exec);
    xfer_hier_release(&p->hier, mpi);
    xfer_sched_destroy(&p->sched);
    for (i = 0; mpi && i < p->nowned; i++)
        xfer_comm_release(&p->owned[i]);
    xfer_free(p->owned);
    xfer_free(p->gcomm);
    for (i = 0; i < 2; i++) {
        xfer_free(p->cnt[i]);
        xfer_free(p->pre[i]);
    }
    xfer_free(p->stage_send);
    xfer_free(p->stage_recv);
    xfer_free(p->tmp);
    xfer_free(p->rcounts_copy);
    xfer_free(p->rdispls_copy);
    xfer_free(p);
}

xfer_status_t xfer_plan_free(xfer_plan_t **pp)
{
    xfer_plan_t *p = pp ? *pp : NULL;

    if (!p)
        return XFER_SUCCESS;
    if (p->active)
        return XFER_ERR(XFER_ERR_STATE, "the plan is active: complete it with xfer_wait first");
    plan_release(p, 1);
    *pp = NULL;
    return XFER_SUCCESS;
}

void xfer_plan_abandon(xfer_plan_t **pp)
{
    xfer_plan_t *p = pp ? *pp : NULL;

    if (!p || p->active)
        return; /* (an active plan's requests may still point into its memory) */
    plan_release(p, 0);
    *pp = NULL;
}

xfer_status_t xfer_plan_algorithm(const xfer_plan_t *p, const char **name)
{
    if (!p || !name)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "plan or name is NULL");
    *name = p->run->name;
    return XFER_SUCCESS;
}

xfer_status_t xfer_plan_sched(const xfer_plan_t *p, const xfer_sched_t **sched)
{
    if (!p || !sched)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "plan or sched is NULL");
    *sched = p->sched;
    return XFER_SUCCESS;
}
