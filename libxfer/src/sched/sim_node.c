/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulator's hierarchies (node staging, coll/hier.c): ranks of both groups on nodes, each
 * node with the shared window of the executor (NODE_S and NODE_R of two parities, control flags
 * per parity), stripe communicators and node barriers; several consecutive calls of the same
 * schedules, the window's epoch advancing per call as xfer_hier_begin advances it.
 *
 * Flag semantics are the executor's (exec.c, topo/shwin.h): FLAG_PUT sets flag `peer` of kind
 * `buf2` on the call's parity to epoch + aux, and a flag only grows (a put that would lower one
 * is a violation: its writers are not ordered); FLAG_WAIT completes once flags [peer, peer + len)
 * reach epoch + aux. Labels of call c are groups 2c and 2c + 1, so data left from an earlier
 * call, or read before it was deposited, is caught by the availability and order checks.
 */
#include <stdio.h>
#include <string.h>

#include "../topo/shwin.h"
#include "sim_int.h"

_Static_assert((int) XFER_NFLAGS <= (int) XFER_SIM_NFLAGS,
               "the simulator has room for every flag kind");

static long *flag(sim_node_t *n, int parity, int kind, int index)
{
    return &n->flags[((size_t) parity * XFER_SIM_NFLAGS + (size_t) kind) * (size_t) n->size +
                     (size_t) index];
}

static long epoch_of(const sim_rank_t *R)
{
    return (long) R->call + 1; /* the window's first use is epoch 1 */
}

runvec_t *sim_node_window(sim_t *m, int rank, int buf)
{
    const sim_rank_t *R = &m->r[rank];
    return &m->nodes[R->node].win[epoch_of(R) & 1][buf - XFER_BUF_NODE_S];
}

/* Merged rank of stripe rank @p x of the stripe of slot @p slot (rank = node, group 0 low), or
 * -1. */
static int stripe_member(const sim_t *m, int slot, int x)
{
    const xfer_sim_layout_t *N = &m->hier->nodes;
    const int g = x < N->nnodes[0] ? 0 : 1, node = g ? x - N->nnodes[0] : x;
    int first;
    if (x < 0 || node >= N->nnodes[g])
        return -1;
    first = N->node_first[g][node];
    if (slot < 0 || first + slot >= N->node_first[g][node + 1])
        return -1;
    return xfer_merged_rank(m->shape, g, N->members[g][first + slot]);
}

int sim_stripe_peer(const sim_t *m, int rank, const xfer_op_t *op)
{
    if (op->comm == XFER_COMM_STRIPE && m->hier)
        return stripe_member(m, m->r[rank].slot, op->peer);
    return -1;
}

int sim_member(const sim_t *m, int rank, const xfer_group_t *g, int i)
{
    const int x = xfer_group_member(g, i);
    if (g->comm == XFER_COMM_MAIN)
        return x;
    return m->hier ? stripe_member(m, m->r[rank].slot, x) : -1;
}

static int reached(sim_t *m, int rank, const xfer_op_t *op)
{
    sim_rank_t *R = &m->r[rank];
    sim_node_t *n = &m->nodes[R->node];
    const long target = epoch_of(R) + op->aux;
    size_t i;
    for (i = 0; i < op->len; i++)
        if (*flag(n, (int) (epoch_of(R) & 1), op->buf2, op->peer + (int) i) < target)
            return 0;
    return 1;
}

static int add_waiter(sim_t *m, sim_node_t *n, int rank, int k)
{
    if (n->nwait == n->wait_cap) {
        int cap = n->wait_cap ? 2 * n->wait_cap : 16;
        sim_waiter_t *w = xfer_realloc_array(n->wait, (size_t) cap, sizeof(*w));
        if (!w) {
            sim_fail(m, XFER_ERR_NO_MEMORY, "simulator node waiters");
            return 0;
        }
        n->wait = w;
        n->wait_cap = cap;
    }
    n->wait[n->nwait].rank = rank;
    n->wait[n->nwait].k = k;
    n->nwait++;
    return 1;
}

/* A flag of node @p n changed at time @p t: complete the waits it satisfies. */
static void wake(sim_t *m, sim_node_t *n, double t)
{
    int i = 0;
    while (i < n->nwait && m->err == XFER_SUCCESS) {
        const sim_waiter_t w = n->wait[i];
        sim_rank_t *W = &m->r[w.rank];
        const xfer_op_t *op = &W->view.ops[w.k];
        if (op->kind == XFER_OP_FLAG_WAIT && reached(m, w.rank, op)) {
            n->wait[i] = n->wait[--n->nwait];
            sim_complete(m, w.rank, w.k, XFER_MAX(W->state[w.k].post, t));
        } else {
            i++;
        }
    }
}

static void barrier(sim_t *m, sim_node_t *n, int rank, int k)
{
    double t = 0.0;
    int i, j;
    if (!add_waiter(m, n, rank, k) || ++n->barrier_in < n->size)
        return;
    for (i = 0; i < n->nwait; i++)
        if (m->r[n->wait[i].rank].view.ops[n->wait[i].k].kind == XFER_OP_BARRIER)
            t = XFER_MAX(t, m->r[n->wait[i].rank].state[n->wait[i].k].post);
    n->barrier_in = 0;
    for (i = 0, j = 0; i < n->nwait; i++) { /* the arrivals leave, together */
        const sim_waiter_t w = n->wait[i];
        if (m->r[w.rank].view.ops[w.k].kind == XFER_OP_BARRIER)
            sim_complete(m, w.rank, w.k, t);
        else
            n->wait[j++] = w;
    }
    n->nwait = j;
}

void sim_finish_put(sim_t *m, int rank, int k, double t)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_op_t *op = &R->view.ops[k];
    sim_node_t *n = &m->nodes[R->node];
    long *f = flag(n, (int) (epoch_of(R) & 1), op->buf2, op->peer);
    const long v = epoch_of(R) + op->aux;
    char me[16];
    if (v < *f) {
        sim_rank_name(m, rank, me, sizeof(me));
        sim_fail(m, XFER_ERR_VERIFY,
                 "%s: round %d of call %d: %s lowers %s flag %d of its node from %ld to %ld (the "
                 "flag's writers are not ordered)",
                 R->s->algo, R->round, R->call + 1, me, xfer_flag_name(op->buf2), op->peer, *f, v);
        return;
    }
    *f = v;
    sim_complete(m, rank, k, t);
    wake(m, n, t);
}

void sim_post_node(sim_t *m, int rank, int k)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_op_t *op = &R->view.ops[k];
    sim_node_t *n = m->nodes ? &m->nodes[R->node] : NULL;
    char me[16];

    sim_rank_name(m, rank, me, sizeof(me));
    if (op->kind == XFER_OP_TASK) {
        sim_fail(m, XFER_ERR_NOT_SUPPORTED,
                 "%s/%s: %s runs a task (hier:direct's exchange, hier:native's MPI allgatherv): "
                 "tasks are outside the simulator",
                 R->s->algo, R->s->variant, me);
        return;
    }
    if (!n) {
        sim_fail(m, XFER_ERR_NOT_SUPPORTED,
                 "%s: %s: node staging operations are simulated in hierarchies only "
                 "(xfer_sim_run_hier)",
                 R->s->algo, xfer_op_name(op->kind));
        return;
    }
    if ((op->kind == XFER_OP_FLAG_PUT || op->kind == XFER_OP_FLAG_WAIT) &&
        (op->buf2 >= XFER_SIM_NFLAGS || op->peer < 0 ||
         op->peer + (op->kind == XFER_OP_FLAG_WAIT ? (int) op->len : 1) > n->size)) {
        sim_fail(m, XFER_ERR_VERIFY, "%s: round %d: %s names %s flags [%d, %d) of a node of %d",
                 R->s->algo, R->round, me, xfer_flag_name(op->buf2), op->peer,
                 op->peer + (op->kind == XFER_OP_FLAG_WAIT ? (int) op->len : 1), n->size);
        return;
    }
    switch (op->kind) {
    case XFER_OP_FLAG_PUT:
        if (m->o.jitter > 0) /* published a while later */
            sim_defer(m, rank, k, R->state[k].post + sim_delay(m, rank));
        else
            sim_finish_put(m, rank, k, R->state[k].post);
        break;
    case XFER_OP_FLAG_WAIT:
        if (reached(m, rank, op))
            sim_complete(m, rank, k, R->state[k].post);
        else
            add_waiter(m, n, rank, k);
        break;
    case XFER_OP_BARRIER:
        barrier(m, n, rank, k);
        break;
    default:
        sim_fail(m, XFER_ERR_INTERNAL, "simulator: operation kind %d", op->kind);
        break;
    }
}

int sim_next_call(sim_t *m, int rank)
{
    sim_rank_t *R = &m->r[rank];
    if (!m->hier || R->call + 1 >= m->hier->calls)
        return 0;
    sim_verify_rank(m, rank); /* this call's result, before the next one overwrites it */
    if (m->err != XFER_SUCCESS)
        return 0;
    R->call++;
    R->round = 0;
    return sim_send_labels(m, rank) == XFER_SUCCESS;
}

void sim_nodes_free(sim_t *m)
{
    int i, p, b;
    for (i = 0; i < m->nnodes; i++) {
        for (p = 0; p < 2; p++)
            for (b = 0; b < 2; b++)
                xfer_rv_free(&m->nodes[i].win[p][b]);
        xfer_free(m->nodes[i].flags);
        xfer_free(m->nodes[i].wait);
    }
    xfer_free(m->nodes);
    m->nodes = NULL;
    m->nnodes = 0;
}

static xfer_status_t setup_nodes(sim_t *m)
{
    const xfer_sim_layout_t *N = &m->hier->nodes;
    int g, i, x = 0;
    m->nnodes = N->nnodes[0] + N->nnodes[1];
    m->nodes = xfer_calloc((size_t) m->nnodes, sizeof(sim_node_t));
    if (!m->nodes)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "simulator nodes");
    for (g = 0; g < 2; g++)
        for (i = 0; i < N->nnodes[g]; i++, x++) {
            sim_node_t *n = &m->nodes[x];
            n->g = g;
            n->m = i;
            n->size = N->node_first[g][i + 1] - N->node_first[g][i];
            n->flags = xfer_calloc(2 * XFER_SIM_NFLAGS * (size_t) n->size, sizeof(long));
            if (n->size < 1 || !n->flags)
                return XFER_ERR(XFER_ERR_NO_MEMORY, "simulator node of %d ranks", n->size);
        }
    return XFER_SUCCESS;
}

static xfer_status_t setup_hier_rank(sim_t *m, int rank)
{
    const xfer_shape_t *shape = m->shape;
    const xfer_sim_hier_t *h = m->hier;
    const int g = rank < shape->n[0] ? 0 : 1, r = g ? rank - shape->n[0] : rank;
    sim_rank_t *R = &m->r[rank];
    xfer_status_t st;

    XFER_CHECK_GOTO(h->build(h->ctx, g, r, &R->s), st, out);
    if (!R->s || R->s->group != g || R->s->rank != r) {
        st = XFER_ERR(XFER_ERR_VERIFY,
                      "hierarchy: the schedule built for rank %d of group %d is not its own", r, g);
        goto out;
    }
    R->node = (g ? h->nodes.nnodes[0] : 0) + h->nodes.node_of[g][r];
    R->slot = h->nodes.slot_of[g][r];
    XFER_CHECK_GOTO(sim_setup_state(R, rank), st, out);
    st = sim_send_labels(m, rank);
out:
    return st;
}

xfer_status_t xfer_sim_run_hier(const xfer_shape_t *shape, const xfer_sim_hier_t *h,
                                const xfer_sim_opts_t *opts, xfer_sim_stats_t *stats)
{
    sim_t m;

    memset(&m, 0, sizeof(m));
    m.shape = shape;
    m.hier = h;
    if (!h || !h->build || h->calls < 1 || shape->n[0] < 1 || shape->n[1] < 1 ||
        shape->n[0] + shape->n[1] >= XFER_SIM_MAX_RANKS)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "simulator: hierarchy of %d x %d ranks, %d calls",
                        shape->n[0], shape->n[1], h ? h->calls : 0);
    return sim_run(&m, shape->n[0] + shape->n[1], opts, setup_nodes, setup_hier_rank, stats);
}
