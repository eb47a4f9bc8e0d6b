/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hier:direct: the arrival-imbalance aware transfer between node staging windows
 * (seed-hierarchical §10-11, §14). It replaces the inner algorithm of `hier` by a direct
 * node-to-node exchange whose roles follow the arrival order:
 *
 *   producer side (fan-in)   each rank deposits its block and, unless its group also receives,
 *                            leaves. Stripe leader l (slot l) ships the blocks of its stripe
 *                            segment as soon as they are deposited -- maximal runs of ready
 *                            blocks, one message each, tagged with the run's first slot -- so a
 *                            late producer only delays its own block;
 *   consumer side (fan-out)  the first ranks of a node to arrive claim the stripes (an atomic
 *                            compare-and-swap per stripe and call), tell every producer leader of
 *                            that stripe who they are (a small message on a control duplicate of
 *                            the intercommunicator, received with MPI_ANY_SOURCE and a tag naming
 *                            the consumer node) and receive into the shared result R with matched
 *                            probes; the others wait on the stripes' validity flags, copy out
 *                            and leave.
 *
 * A rank may hold both roles (full duplex): one loop progresses both, so two nodes that wait for
 * each other cannot deadlock. With node barriers (XFER_HIER_SYNC=barrier) the roles are static
 * (slot l) and every block is ready at once: one message per pair of nodes and stripe, the
 * classical scheme, for comparison.
 *
 * Message matching stays unambiguous although sources are wildcards: a consumer node's claimant
 * for call e+1 can only exist once every rank of the node has left call e, which needed all of
 * that call's messages matched; data messages reach only a claimant that announced itself for
 * the current call.
 *
 * Cost: producer leader: q_n messages of its stripe segment (q_n consumer nodes); consumer
 *       claimant: p_n segments. Per node link: max(q_n * m_a, p_n * m_b) / L per stripe, which is
 *       the lower bound when p_n = q_n or in half duplex when q_n <= p_n.
 * Restrictions: node and slot indices must be valid tags (< MPI_TAG_UB).
 * Preferred when: arrivals are imbalanced and node counts are alike on both sides.
 */
#include <limits.h>
#include <sched.h>
#include <string.h>

#include "../core/core.h"
#include "../topo/shwin.h"
#include "coll.h"
#include "hier.h"

/* Bounds of slot j's piece of stripe l in node a's aggregate (group gg), relative to the
 * aggregate; empty pieces have lo == hi. */
static void piece(const xfer_plan_t *p, int gg, int a, int l, int j, size_t *lo, size_t *hi)
{
    const xfer_hier_t *h = p->hier;
    const xfer_nodes_t *N = &p->topo->nodes[gg];
    const int r = N->members[N->node_first[a] + j];
    const size_t A = h->agg[gg][a], s0 = xfer_seg_start(A, h->senders, l);
    const size_t s1 = s0 + xfer_seg_len(A, h->senders, l);
    const size_t b0 = h->agg_off[gg][r], b1 = b0 + xfer_shape_count(&p->shape, gg, r);
    *lo = XFER_MAX(b0, s0);
    *hi = XFER_MAX(*lo, XFER_MIN(b1, s1));
}

xfer_status_t xfer_hier_direct_prepare(xfer_plan_t *p)
{
    xfer_hier_t *h = p->hier;
    xfer_topo_t *t = p->topo;
    const int o = 1 - t->group, nr = t->nodes[o].nnodes, ns = h->node_size;
    xfer_status_t st = XFER_SUCCESS;
    int flag, *ub = NULL, m;

    XFER_CHECK_GOTO(xfer_topo_direct_comms(t, h->dcomm), st, out);
    XFER_MPI_GOTO(MPI_Comm_get_attr(h->dcomm[0], MPI_TAG_UB, &ub, &flag), st, out);
    if (flag && (*ub < t->nodes[0].nnodes || *ub < t->nodes[1].nnodes || *ub < t->max_ppn))
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                        "hier:direct tags nodes and slots, but MPI_TAG_UB is %d", *ub);
    for (m = 0; m < t->nodes[0].nnodes; m++)
        if (h->agg[0][m] > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE, "a node aggregate exceeds INT_MAX bytes");
    for (m = 0; m < t->nodes[1].nnodes; m++)
        if (h->agg[1][m] > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE, "a node aggregate exceeds INT_MAX bytes");
    h->d_recv = xfer_malloc((size_t) nr * sizeof(int));
    h->d_idreq = xfer_malloc((size_t) nr * sizeof(MPI_Request));
    h->d_idbuf = xfer_malloc((size_t) nr * sizeof(int));
    h->d_idout = xfer_malloc((size_t) nr * sizeof(int));
    h->d_sent = xfer_malloc((size_t) nr * (size_t) ns);
    h->d_ready = xfer_malloc((size_t) ns);
    h->d_sreq = xfer_malloc(((size_t) nr * (size_t) ns + (size_t) nr) * sizeof(MPI_Request));
    h->d_got = xfer_malloc((size_t) nr * sizeof(size_t));
    h->d_maxrreq = nr * t->nodes[o].max_ppn; /* runs: at most one per block */
    h->d_rreq = xfer_malloc((size_t) h->d_maxrreq * sizeof(MPI_Request));
    if (!h->d_recv || !h->d_idreq || !h->d_idbuf || !h->d_idout || !h->d_sent || !h->d_ready ||
        !h->d_sreq || !h->d_got || !h->d_rreq)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "hier:direct state for %d remote nodes", nr);
out:
    return st;
}

void xfer_hier_direct_free(xfer_hier_t *h)
{
    xfer_free(h->d_recv);
    xfer_free(h->d_idreq);
    xfer_free(h->d_idbuf);
    xfer_free(h->d_idout);
    xfer_free(h->d_sent);
    xfer_free(h->d_ready);
    xfer_free(h->d_sreq);
    xfer_free(h->d_got);
    xfer_free(h->d_rreq);
}

/* ---- one exchange ------------------------------------------------------------------------- */

typedef struct dx {
    xfer_plan_t *p;
    xfer_hier_t *h;
    xfer_shwin_t *w;
    long e;
    int b, g, o, nr, barrier;
    int nsreq;
    /* producer role */
    int producing, prod_left; /* pieces still to send, over all consumer nodes */
    size_t s0;                /* this stripe's segment in the node aggregate */
    /* consumer role */
    int cons_l, cons_phase; /* stripe being received (-1: none), 0: R not free yet, 1: receiving */
    int served_static, claims_over;
    size_t cons_left; /* bytes not matched yet */
    int nrreq, maxrreq;
    int roles;
} dx_t;

static xfer_status_t producer_start(dx_t *x)
{
    xfer_hier_t *h = x->h;
    const int l = h->slot, a = h->node, ns = h->node_size;
    xfer_status_t st = XFER_SUCCESS;
    int c, j;

    x->s0 = xfer_seg_start(h->agg[x->g][a], h->senders, l);
    x->prod_left = 0;
    memset(h->d_ready, 0, (size_t) ns);
    for (j = 0; j < ns; j++) {
        size_t lo, hi;
        piece(x->p, x->g, a, l, j, &lo, &hi);
        h->d_ready[j] = hi > lo ? 0 : 2; /* 2: nothing of this slot in the stripe */
        x->prod_left += hi > lo;
    }
    x->prod_left *= x->nr;
    for (c = 0; c < x->nr; c++) {
        h->d_recv[c] = -1;
        h->d_idreq[c] = MPI_REQUEST_NULL;
        memset(h->d_sent + (size_t) c * ns, 0, (size_t) ns);
        if (x->prod_left)
            XFER_MPI_GOTO(MPI_Irecv(&h->d_idbuf[c], 1, MPI_INT, MPI_ANY_SOURCE, c, h->dcomm[0],
                                    &h->d_idreq[c]),
                          st, out);
    }
    x->producing = x->prod_left > 0;
out:
    return st;
}

/* Post every run of deposited, unsent blocks to every consumer node whose receiver is known. */
static xfer_status_t producer_progress(dx_t *x, int *progressed)
{
    xfer_hier_t *h = x->h;
    const int ns = h->node_size, l = h->slot, a = h->node;
    const unsigned char *S = xfer_shwin_S(x->w, x->b);
    xfer_status_t st = XFER_SUCCESS;
    int c, j, k, idx;

    for (;;) { /* receivers that announced themselves */
        int flag;
        MPI_Status sts;
        XFER_MPI_GOTO(MPI_Testany(x->nr, h->d_idreq, &idx, &flag, &sts), st, out);
        if (!flag || idx == MPI_UNDEFINED)
            break;
        h->d_recv[idx] = sts.MPI_SOURCE;
        *progressed = 1;
    }
    for (j = 0; j < ns; j++) /* deposits (the barrier mode has them all) */
        if (!h->d_ready[j] &&
            (x->barrier || xfer_flag_load(x->w, x->b, XFER_FLAG_READY, j) >= x->e)) {
            h->d_ready[j] = 1;
            *progressed = 1;
        }
    for (c = 0; c < x->nr; c++) {
        unsigned char *sent = h->d_sent + (size_t) c * ns;
        if (h->d_recv[c] < 0)
            continue;
        for (j = 0; j < ns;) {
            size_t lo, hi, lo2, hi2;
            if (h->d_ready[j] != 1 || sent[j]) {
                j++;
                continue;
            }
            piece(x->p, x->g, a, l, j, &lo, &hi);
            for (k = j; k < ns && (h->d_ready[k] == 2 || (h->d_ready[k] == 1 && !sent[k])); k++)
                if (h->d_ready[k] == 1) {
                    sent[k] = 1;
                    x->prod_left--;
                    piece(x->p, x->g, a, l, k, &lo2, &hi2);
                    hi = hi2;
                }
            XFER_MPI_GOTO(MPI_Isend(S + lo, (int) (hi - lo), MPI_BYTE, h->d_recv[c], j, h->dcomm[1],
                                    &h->d_sreq[x->nsreq]),
                          st, out);
            x->nsreq++;
            *progressed = 1;
            j = k;
        }
    }
    if (x->prod_left == 0)
        x->producing = 0;
out:
    return st;
}

/* Claim a stripe to receive: the first arrivers in flags mode, slot l with barriers. */
static int consumer_claim(dx_t *x)
{
    xfer_hier_t *h = x->h;
    int l;
    if (x->barrier) {
        if (x->served_static || h->slot >= h->senders)
            return -1;
        x->served_static = 1;
        return h->slot;
    }
    for (l = 0; l < h->senders; l++)
        if (xfer_flag_claim(x->w, x->b, l, x->e))
            return l;
    return -1;
}

static xfer_status_t consumer_progress(dx_t *x, int *progressed)
{
    xfer_hier_t *h = x->h;
    const xfer_nodes_t *R = &x->p->topo->nodes[x->o];
    const int l = x->cons_l, nn = R->nnodes;
    xfer_status_t st = XFER_SUCCESS;
    int a, i;

    if (x->cons_phase == 0) { /* R of this parity is free once its use two calls ago is over */
        for (i = 0; i < h->node_size; i++)
            if (xfer_flag_load(x->w, x->b, XFER_FLAG_COPIED, i) < x->e - 2)
                return XFER_SUCCESS;
        x->cons_left = 0;
        for (a = 0; a < nn; a++) {
            const size_t len = xfer_seg_len(h->agg[x->o][a], h->senders, l);
            h->d_got[a] = 0;
            if (len == 0)
                continue;
            x->cons_left += len;
            h->d_idout[a] = (int) (x->e & INT_MAX);
            XFER_MPI_GOTO(MPI_Isend(&h->d_idout[a], 1, MPI_INT, R->members[R->node_first[a] + l],
                                    h->node, h->dcomm[0], &h->d_sreq[x->nsreq]),
                          st, out);
            x->nsreq++;
        }
        x->cons_phase = 1;
        x->roles |= 2;
        *progressed = 1;
    }
    /* match every run as it comes and receive them all at once (a blocking receive would
     * serialise the producers behind one another) */
    while (x->cons_left > 0) {
        MPI_Message msg;
        MPI_Status s;
        int flag, n, j, src;
        size_t lo, hi, off, len;
        XFER_MPI_GOTO(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, h->dcomm[1], &flag, &msg, &s), st,
                      out);
        if (!flag)
            break;
        src = s.MPI_SOURCE;
        j = s.MPI_TAG;
        a = R->node_of[src];
        XFER_MPI_GOTO(MPI_Get_count(&s, MPI_BYTE, &n), st, out);
        len = a >= 0 && j >= 0 && j < R->node_size[a] ? xfer_seg_len(h->agg[x->o][a], h->senders, l)
                                                      : 0;
        if (len) {
            piece(x->p, x->o, a, l, j, &lo, &hi);
            off = lo - xfer_seg_start(h->agg[x->o][a], h->senders, l);
        }
        if (R->slot_of[src] != l || len == 0 || n <= 0 || off + (size_t) n > len ||
            h->d_got[a] + (size_t) n > len || x->nrreq == x->maxrreq) {
            MPI_Mrecv(NULL, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
            return XFER_ERR(XFER_ERR_INTERNAL,
                            "hier:direct: unexpected message of %d bytes from remote rank %d (tag "
                            "%d) while receiving stripe %d",
                            n, src, j, l);
        }
        XFER_MPI_GOTO(MPI_Imrecv(xfer_shwin_R(x->w, x->b) + h->stripe_base[l] +
                                     h->node_off[(size_t) l * nn + a] + off,
                                 n, MPI_BYTE, &msg, &h->d_rreq[x->nrreq]),
                      st, out);
        x->nrreq++;
        h->d_got[a] += (size_t) n;
        x->cons_left -= (size_t) n;
        *progressed = 1;
    }
    if (x->cons_left == 0) {
        int done;
        for (done = 1, i = 0; i < x->nrreq && done; i++)
            XFER_MPI_GOTO(MPI_Test(&h->d_rreq[i], &done, MPI_STATUS_IGNORE), st, out);
        if (done) {
            x->nrreq = 0;
            xfer_flag_store(x->w, x->b, XFER_FLAG_VALID, l, x->e);
            x->cons_l = -1;
            *progressed = 1;
        }
    }
out:
    return st;
}

/* Drop what an aborted exchange left: announcements nobody will send, our own sends. */
static void abandon(dx_t *x)
{
    xfer_hier_t *h = x->h;
    int c, i;
    for (c = 0; c < x->nr && x->producing; c++)
        if (h->d_idreq[c] != MPI_REQUEST_NULL) {
            MPI_Cancel(&h->d_idreq[c]);
            MPI_Request_free(&h->d_idreq[c]);
        }
    for (i = 0; i < x->nsreq; i++)
        if (h->d_sreq[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&h->d_sreq[i]);
    for (i = 0; i < x->nrreq; i++) /* matched already: they complete on their own */
        if (h->d_rreq[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&h->d_rreq[i]);
}

xfer_status_t xfer_hier_direct_exchange(xfer_plan_t *p, long e, int b, xfer_op_stats_t *stats)
{
    xfer_hier_t *h = p->hier;
    const int g = p->topo->group, tmo = p->opts.timeout_ms;
    const int uses_s = p->shape.total[g] > 0, uses_r = p->shape.total[1 - g] > 0;
    const int prod_leader = uses_s && h->slot < h->senders;
    const double t0 = xfer_now();
    xfer_status_t st = XFER_SUCCESS;
    double t_active = 0.0;
    dx_t x;
    int i;

    memset(&x, 0, sizeof(x));
    x.p = p;
    x.h = h;
    x.w = h->win;
    x.e = e;
    x.b = b;
    x.g = g;
    x.o = 1 - g;
    x.nr = p->topo->nodes[x.o].nnodes;
    x.barrier = h->sync == XFER_HIER_BARRIER;
    x.cons_l = -1;
    x.maxrreq = h->d_maxrreq;
    if (prod_leader) {
        XFER_CHECK_GOTO(producer_start(&x), st, fail);
        x.roles |= 1;
    }
    for (;;) {
        int progressed = 0;
        if (uses_r && x.cons_l < 0 && !x.claims_over) {
            x.cons_l = consumer_claim(&x); /* -1: every stripe has its receiver */
            x.claims_over = x.cons_l < 0;
            x.cons_phase = 0;
        }
        if (x.cons_l >= 0)
            XFER_CHECK_GOTO(consumer_progress(&x, &progressed), st, fail);
        if (x.producing)
            XFER_CHECK_GOTO(producer_progress(&x, &progressed), st, fail);
        if (!x.producing && x.cons_l < 0 && (!uses_r || x.claims_over))
            break;
        if (!progressed) {
            if (tmo > 0 && xfer_now() - t0 > 1e-3 * tmo) {
                st = XFER_ERR(XFER_ERR_TIMEOUT,
                              "hier:direct: no progress for %d ms (%s%s); a rank of the other "
                              "group did not arrive",
                              tmo, x.producing ? "blocks still to ship" : "",
                              x.cons_l >= 0 ? (x.cons_phase ? " data still to receive"
                                                            : " the result area still in use")
                                            : "");
                goto fail;
            }
            sched_yield();
        }
    }
    for (i = 0; i < x.nsreq; i++) /* our sends, matched by now; local completion */
        XFER_MPI_GOTO(MPI_Wait(&h->d_sreq[i], MPI_STATUS_IGNORE), st, fail);
    t_active = xfer_now() - t0;
    if (h->slot < h->senders) /* whether or not this group sent anything */
        xfer_flag_store(x.w, b, XFER_FLAG_SENT, h->slot, e);
    stats->inter_s += x.roles ? t_active : 0.0;
    stats->wait_s += x.roles ? 0.0 : t_active;
    stats->leader = x.roles != 0;
    stats->roles = x.roles;
    return XFER_SUCCESS;
fail:
    abandon(&x);
    if (prod_leader)
        xfer_flag_store(x.w, b, XFER_FLAG_SENT, h->slot, -e);
    if (x.cons_l >= 0)
        xfer_flag_store(x.w, b, XFER_FLAG_VALID, x.cons_l, -e);
    stats->roles = x.roles;
    return st;
}
