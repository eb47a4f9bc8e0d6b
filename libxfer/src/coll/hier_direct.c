/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hier:direct: the arrival-imbalance aware transfer between node staging windows
 * (seed-hierarchical §10-11, §14). It replaces the inner algorithm of `hier` by a direct
 * node-to-node exchange whose roles follow the arrival order, on both sides:
 *
 *   producer side (fan-in)   each rank deposits its block; the first ranks of a node to arrive
 *                            claim the stripes of the node's aggregate (an atomic compare-and-swap
 *                            per stripe and call) and ship every block of their stripe as soon as
 *                            it is deposited -- maximal runs of ready blocks, one message each,
 *                            tagged with the run's first slot. Everybody else deposits and leaves:
 *                            a late producer delays only its own block, whatever its slot;
 *   consumer side (fan-out)  the first ranks of a node to arrive claim the stripes of the result,
 *                            announce themselves to every rank of every producer node that has
 *                            data in that stripe (whichever of them ships it), and receive into
 *                            the shared result R with matched probes; the others wait on the
 *                            stripes' validity flags, copy out and leave.
 *
 * Announcements are small messages (call number, stripe) on a control duplicate of the
 * intercommunicator. Every producer rank takes in whatever has arrived for it whenever it is in a
 * call and keeps, per remote node, stripe and parity of the call number, the latest one (an
 * xfer_dstream_t: blocking calls share the topology's, persistent plans have their own, told
 * apart by tag). A shipper for call s waits for the entry of call s; an entry can not be
 * overwritten by call s+2 before it is used, because the remote node cannot reach call s+2 before
 * it has received this stripe of call s. Copies that reach ranks which do not ship are absorbed
 * in their next call. Message count per call: every consumer claimant sends one announcement to
 * each rank of the producer nodes, as many as the data messages in the worst case.
 *
 * A rank may hold both roles (full duplex): one loop progresses both, so two nodes that wait for
 * each other cannot deadlock. With node barriers (XFER_HIER_SYNC=barrier) the roles are static
 * (slot l) and every block is ready at once: one message per pair of nodes and stripe, the
 * classical scheme, for comparison.
 *
 * Message matching stays unambiguous although sources are wildcards: a consumer node's claimant
 * for call s+1 can only exist once every rank of the node has left call s, which needed all of
 * that call's messages matched; data messages reach only a claimant that announced itself for
 * the current call.
 *
 * Cost: producer claimant: q_n messages of its stripe segment (q_n consumer nodes); consumer
 *       claimant: p_n segments. Per node link: max(q_n * m_a, p_n * m_b) / L per stripe, which is
 *       the lower bound when p_n = q_n or in half duplex when q_n <= p_n.
 * Restrictions: slot indices must be valid tags (< MPI_TAG_UB).
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
    const xfer_nodes_t *N = &p->topo->hm->nodes[gg];
    const int r = N->members[N->node_first[a] + j];
    const size_t A = h->agg[gg][a], s0 = xfer_seg_start(A, h->senders, l);
    const size_t s1 = s0 + xfer_seg_len(A, h->senders, l);
    const size_t b0 = h->agg_off[gg][r], b1 = b0 + xfer_shape_count(&p->shape, gg, r);
    *lo = XFER_MAX(b0, s0);
    *hi = XFER_MAX(*lo, XFER_MIN(b1, s1));
}

static xfer_status_t dstream_init(xfer_dstream_t *s, int tag, int nr, int nl)
{
    const size_t n = 2 * (size_t) nr * (size_t) nl;
    if (s->seen)
        return XFER_SUCCESS;
    s->tag = tag;
    s->seq = 0;
    s->nr = nr;
    s->nl = nl;
    s->seen = xfer_calloc(n, sizeof(long));
    s->src = xfer_calloc(n, sizeof(int));
    if (!s->seen || !s->src) {
        xfer_dstream_free(s);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "hier:direct announcements for %d remote nodes", nr);
    }
    return XFER_SUCCESS;
}

typedef struct dx {
    xfer_plan_t *p;
    xfer_hier_t *h;
    xfer_shwin_t *w;
    long e;   /* window epoch (this node's count) */
    long seq; /* exchange number (the same on every rank of both groups) */
    int b, g, o, nr, barrier;
    int nsreq;
    /* producer role */
    int pl, pserved_static, pclaims_over; /* stripe being shipped (-1: none) */
    int prod_left;                        /* pieces still to send, over all consumer nodes */
    /* consumer role */
    int cons_l, cons_phase; /* stripe being received (-1: none), 0: R not free yet, 1: receiving */
    int served_static, claims_over;
    size_t cons_left; /* bytes not matched yet */
    int nrreq, maxrreq;
    int roles;
} dx_t;

/* Per plan: the announcement stream, the communicators, and the call in progress. */
struct xfer_hier_direct {
    MPI_Comm dcomm[2];  /* control and data duplicates of the intercommunicator (borrowed) */
    xfer_dstream_t *ds; /* announcements: the topology's, or own_ds for a persistent plan */
    xfer_dstream_t own_ds;
    xfer_topo_t *dtopo;        /* where own_ds leaves the announcements still due when freed */
    int *d_recv;               /* [remote nodes] receiver announced by each consumer node, or -1 */
    long *d_idout;             /* [2 * senders] our announcements (call, stripe) */
    unsigned char *d_sent;     /* [remote nodes * node size] block shipped to that node */
    unsigned char *d_ready;    /* [node size] 0 not deposited, 1 deposited, 2 not in this stripe */
    unsigned char *d_pclaimed; /* [senders] S stripes this rank shipped in this call */
    MPI_Request *d_sreq;       /* sends: blocks and announcements */
    int d_maxsreq;
    size_t *d_got;       /* [remote nodes] bytes received from each */
    MPI_Request *d_rreq; /* receives of the runs matched so far */
    int d_maxrreq;
    dx_t x;    /* the call in progress */
    int phase; /* 0 exchanging, 1 completing our sends, 2 publishing S, 3 done */
};

static xfer_status_t direct_post(void *arg);
static xfer_status_t direct_progress(void *arg, int *done);
static void direct_abort(void *arg);

xfer_status_t xfer_hier_direct_prepare(xfer_plan_t *p, xfer_exec_task_t *task)
{
    xfer_hier_t *h = p->hier;
    xfer_topo_t *t = p->topo;
    const int g = t->group, o = 1 - g, nr = t->hm->nodes[o].nnodes, ns = h->node_size;
    xfer_status_t st = XFER_SUCCESS;
    int flag, *ub = NULL, m, tag;

    h->dx = xfer_calloc(1, sizeof(*h->dx));
    if (!h->dx)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "hier:direct state");
    task->post = direct_post;
    task->progress = direct_progress;
    task->abort = direct_abort;
    task->arg = p;
    task->what = "hier:direct's exchange (a rank of the other group did not arrive?)";

    XFER_CHECK_GOTO(xfer_topo_direct_comms(t, h->dx->dcomm), st, out);
    h->dx->dtopo = t;
    if (p->persistent) { /* its own stream: its calls interleave freely with others' */
        h->dx->ds = &h->dx->own_ds;
        tag = ++t->hm->dstream_tags;
    } else {
        h->dx->ds = &t->hm->dstream;
        tag = 0;
    }
    XFER_MPI_GOTO(MPI_Comm_get_attr(h->dx->dcomm[0], MPI_TAG_UB, &ub, &flag), st, out);
    if (flag && (*ub < t->max_ppn || *ub < tag))
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                        "hier:direct tags slots and plans, but MPI_TAG_UB is %d", *ub);
    for (m = 0; m < t->hm->nodes[0].nnodes; m++)
        if (h->agg[0][m] > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE, "a node aggregate exceeds INT_MAX bytes");
    for (m = 0; m < t->hm->nodes[1].nnodes; m++)
        if (h->agg[1][m] > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE, "a node aggregate exceeds INT_MAX bytes");
    XFER_CHECK_GOTO(dstream_init(h->dx->ds, tag, nr, t->hm->nodes[g].max_ppn), st, out);
    h->dx->d_recv = xfer_malloc((size_t) nr * sizeof(int));
    h->dx->d_idout = xfer_malloc(2 * (size_t) h->senders * sizeof(long));
    h->dx->d_sent = xfer_malloc((size_t) nr * (size_t) ns);
    h->dx->d_ready = xfer_malloc((size_t) ns);
    h->dx->d_pclaimed = xfer_malloc((size_t) h->senders);
    /* per stripe claimed (at most all of them, on each side): a run per block and remote node,
     * an announcement per remote rank */
    h->dx->d_maxsreq = h->senders * (nr * ns + t->n[o]);
    h->dx->d_sreq = xfer_malloc((size_t) h->dx->d_maxsreq * sizeof(MPI_Request));
    h->dx->d_got = xfer_malloc((size_t) nr * sizeof(size_t));
    h->dx->d_maxrreq = nr * t->hm->nodes[o].max_ppn; /* runs: at most one per block */
    h->dx->d_rreq = xfer_malloc((size_t) h->dx->d_maxrreq * sizeof(MPI_Request));
    if (!h->dx->d_recv || !h->dx->d_idout || !h->dx->d_sent || !h->dx->d_ready ||
        !h->dx->d_pclaimed || !h->dx->d_sreq || !h->dx->d_got || !h->dx->d_rreq)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "hier:direct state for %d remote nodes", nr);
out:
    return st;
}

void xfer_hier_direct_free(xfer_hier_t *h)
{
    if (!h->dx)
        return;
    /* this plan's announcements still due are taken in when the topology goes (they stay
     * unmatched on the control duplicate until then; no other stream reads their tag) */
    if (h->dx->ds == &h->dx->own_ds && h->dx->own_ds.seen && h->dx->dtopo)
        h->dx->dtopo->hm->dstream_orphans += h->dx->own_ds.expected - h->dx->own_ds.received;
    xfer_dstream_free(&h->dx->own_ds);
    xfer_free(h->dx->d_recv);
    xfer_free(h->dx->d_idout);
    xfer_free(h->dx->d_sent);
    xfer_free(h->dx->d_ready);
    xfer_free(h->dx->d_pclaimed);
    xfer_free(h->dx->d_sreq);
    xfer_free(h->dx->d_got);
    xfer_free(h->dx->d_rreq);
    xfer_free(h->dx);
    h->dx = NULL;
}

/* ---- one exchange ------------------------------------------------------------------------- */

/* Entry of the announcement table for call @p seq, remote node @p c, stripe @p l. */
static size_t ds_entry(const xfer_dstream_t *s, long seq, int c, int l)
{
    return ((size_t) (seq & 1) * (size_t) s->nr + (size_t) c) * (size_t) s->nl + (size_t) l;
}

/* Take in every announcement that has arrived for this rank. */
static xfer_status_t take_announcements(dx_t *x)
{
    xfer_hier_t *h = x->h;
    xfer_dstream_t *s = h->dx->ds;
    const xfer_nodes_t *R = &x->p->topo->hm->nodes[x->o];
    xfer_status_t st = XFER_SUCCESS;

    for (;;) {
        MPI_Message msg;
        MPI_Status sts;
        int flag, n, c, l;
        long id[2] = {0, -1};
        size_t k;
        XFER_MPI_GOTO(MPI_Improbe(MPI_ANY_SOURCE, s->tag, h->dx->dcomm[0], &flag, &msg, &sts), st,
                      out);
        if (!flag)
            break;
        XFER_MPI_GOTO(MPI_Mrecv(id, 2, MPI_LONG, &msg, &sts), st, out);
        XFER_MPI_GOTO(MPI_Get_count(&sts, MPI_LONG, &n), st, out);
        c = sts.MPI_SOURCE >= 0 && sts.MPI_SOURCE < x->p->topo->n[x->o] ? R->node_of[sts.MPI_SOURCE]
                                                                        : -1;
        l = (int) id[1];
        if (n != 2 || c < 0 || c >= s->nr || l < 0 || l >= s->nl || id[0] < 1)
            return XFER_ERR(XFER_ERR_INTERNAL,
                            "hier:direct: malformed announcement (%d values, call %ld, stripe %ld) "
                            "from remote rank %d",
                            n, id[0], id[1], sts.MPI_SOURCE);
        s->received++;
        k = ds_entry(s, id[0], c, l);
        if (id[0] > s->seen[k]) {
            s->seen[k] = id[0];
            s->src[k] = sts.MPI_SOURCE;
        }
    }
out:
    return st;
}

/* Claim a stripe (@p kind: XFER_FLAG_PCLAIM to ship S, XFER_FLAG_CLAIM to receive R): the first
 * arrivers in flags mode, trying from stripe @p first on; slot l once with barriers. A producer
 * starts at the stripe holding its own block (ready, since it deposited it), so that the stripe
 * of a late rank is left to it only when nobody else is there. */
static int claim(dx_t *x, int kind, int first, int *served_static)
{
    xfer_hier_t *h = x->h;
    int i;
    if (x->barrier) {
        if (*served_static || h->slot >= h->senders)
            return -1;
        *served_static = 1;
        return h->slot;
    }
    for (i = 0; i < h->senders; i++) {
        const int l = (first + i) % h->senders;
        if (xfer_flag_claim(x->w, x->b, kind, l, x->e))
            return l;
    }
    return -1;
}

static void producer_start(dx_t *x, int l)
{
    xfer_hier_t *h = x->h;
    const int a = h->node, ns = h->node_size;
    int c, j;

    x->pl = l;
    h->dx->d_pclaimed[l] = 1;
    x->prod_left = 0;
    for (j = 0; j < ns; j++) {
        size_t lo, hi;
        piece(x->p, x->g, a, l, j, &lo, &hi);
        h->dx->d_ready[j] = hi > lo ? 0 : 2; /* 2: nothing of this slot in the stripe */
        x->prod_left += hi > lo;
    }
    x->prod_left *= x->nr;
    for (c = 0; c < x->nr; c++)
        h->dx->d_recv[c] = -1;
    memset(h->dx->d_sent, 0, (size_t) x->nr * (size_t) ns);
    if (x->prod_left == 0)
        x->pl = -1; /* nothing of this node in the stripe */
}

/* Post every run of deposited, unsent blocks to every consumer node whose receiver is known. */
static xfer_status_t producer_progress(dx_t *x, int *progressed)
{
    xfer_hier_t *h = x->h;
    xfer_dstream_t *ds = h->dx->ds;
    const int ns = h->node_size, l = x->pl, a = h->node;
    const unsigned char *S = xfer_shwin_S(x->w, x->b);
    xfer_status_t st = XFER_SUCCESS;
    int c, j, k;

    XFER_CHECK_GOTO(take_announcements(x), st, out);
    for (c = 0; c < x->nr; c++) { /* receivers that announced themselves for this call */
        const size_t i = ds_entry(ds, x->seq, c, l);
        if (h->dx->d_recv[c] >= 0 || ds->seen[i] < x->seq)
            continue;
        if (ds->seen[i] > x->seq)
            return XFER_ERR(XFER_ERR_INTERNAL,
                            "hier:direct: remote node %d announced call %ld while this one ships "
                            "call %ld",
                            c, ds->seen[i], x->seq);
        h->dx->d_recv[c] = ds->src[i];
        *progressed = 1;
    }
    for (j = 0; j < ns; j++) /* deposits (the barrier mode has them all) */
        if (!h->dx->d_ready[j] &&
            (x->barrier || xfer_flag_load(x->w, x->b, XFER_FLAG_READY, j) >= x->e)) {
            h->dx->d_ready[j] = 1;
            *progressed = 1;
        }
    for (c = 0; c < x->nr; c++) {
        unsigned char *sent = h->dx->d_sent + (size_t) c * ns;
        if (h->dx->d_recv[c] < 0)
            continue;
        for (j = 0; j < ns;) {
            size_t lo, hi, lo2, hi2;
            if (h->dx->d_ready[j] != 1 || sent[j]) {
                j++;
                continue;
            }
            piece(x->p, x->g, a, l, j, &lo, &hi);
            for (k = j; k < ns && (h->dx->d_ready[k] == 2 || (h->dx->d_ready[k] == 1 && !sent[k]));
                 k++)
                if (h->dx->d_ready[k] == 1) {
                    sent[k] = 1;
                    x->prod_left--;
                    piece(x->p, x->g, a, l, k, &lo2, &hi2);
                    hi = hi2;
                }
            if (x->nsreq == h->dx->d_maxsreq)
                return XFER_ERR(XFER_ERR_INTERNAL, "hier:direct: more sends than planned");
            XFER_MPI_GOTO(MPI_Isend(S + lo, (int) (hi - lo), MPI_BYTE, h->dx->d_recv[c], j,
                                    h->dx->dcomm[1], &h->dx->d_sreq[x->nsreq]),
                          st, out);
            x->nsreq++;
            *progressed = 1;
            j = k;
        }
    }
    if (x->prod_left == 0)
        x->pl = -1;
out:
    return st;
}

static xfer_status_t consumer_progress(dx_t *x, int *progressed)
{
    xfer_hier_t *h = x->h;
    const xfer_nodes_t *R = &x->p->topo->hm->nodes[x->o];
    const int l = x->cons_l, nn = R->nnodes;
    xfer_status_t st = XFER_SUCCESS;
    int a, i;

    if (x->cons_phase == 0) { /* R of this parity is free once its use two calls ago is over */
        long *id = h->dx->d_idout + 2 * (size_t) l;
        for (i = 0; i < h->node_size; i++)
            if (xfer_flag_load(x->w, x->b, XFER_FLAG_COPIED, i) < x->e - 2)
                return XFER_SUCCESS;
        x->cons_left = 0;
        id[0] = x->seq;
        id[1] = l;
        for (a = 0; a < nn; a++) {
            const size_t len = xfer_seg_len(h->agg[x->o][a], h->senders, l);
            h->dx->d_got[a] = 0;
            if (len == 0)
                continue;
            x->cons_left += len;
            for (i = 0; i < R->node_size[a]; i++) { /* whoever of them ships it */
                if (x->nsreq == h->dx->d_maxsreq)
                    return XFER_ERR(XFER_ERR_INTERNAL, "hier:direct: more sends than planned");
                XFER_MPI_GOTO(MPI_Isend(id, 2, MPI_LONG, R->members[R->node_first[a] + i],
                                        h->dx->ds->tag, h->dx->dcomm[0], &h->dx->d_sreq[x->nsreq]),
                              st, out);
                x->nsreq++;
            }
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
        XFER_MPI_GOTO(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, h->dx->dcomm[1], &flag, &msg, &s),
                      st, out);
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
        if (len == 0 || n <= 0 || off + (size_t) n > len || h->dx->d_got[a] + (size_t) n > len ||
            x->nrreq == x->maxrreq) {
            MPI_Mrecv(NULL, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
            return XFER_ERR(XFER_ERR_INTERNAL,
                            "hier:direct: unexpected message of %d bytes from remote rank %d (tag "
                            "%d) while receiving stripe %d",
                            n, src, j, l);
        }
        XFER_MPI_GOTO(MPI_Imrecv(xfer_shwin_R(x->w, x->b) + h->stripe_base[l] +
                                     h->node_off[(size_t) l * nn + a] + off,
                                 n, MPI_BYTE, &msg, &h->dx->d_rreq[x->nrreq]),
                      st, out);
        x->nrreq++;
        h->dx->d_got[a] += (size_t) n;
        x->cons_left -= (size_t) n;
        *progressed = 1;
    }
    if (x->cons_left == 0) {
        int done;
        for (done = 1, i = 0; i < x->nrreq && done; i++)
            XFER_MPI_GOTO(MPI_Test(&h->dx->d_rreq[i], &done, MPI_STATUS_IGNORE), st, out);
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

/* Publish the S stripes this rank shipped as reusable (@p epoch e), or as failed (-e); when the
 * group sends nothing, slot l's stripe l was never used and is free -- but only once its user of
 * two calls ago (a shipper that may still be completing its sends) has published: a store of
 * ours before that one would be lowered again by it, and the next user would wait forever.
 * *@p done is 0 while that user has not published yet (call again). */
static xfer_status_t release_s(dx_t *x, int uses_s, long epoch, int *done)
{
    xfer_hier_t *h = x->h;
    int l;
    *done = 1;
    if (!uses_s && h->slot < h->senders && epoch > 0) {
        const long v = xfer_flag_load(x->w, x->b, XFER_FLAG_SENT, h->slot);
        if (v < 0 && -v >= x->e - 2)
            return XFER_ERR(XFER_ERR_PEER_FAILED,
                            "hier:direct: the shipper of stripe %d of this node failed in call %ld "
                            "of its staging window",
                            h->slot, -v);
        if (v < x->e - 2) {
            *done = 0;
            return XFER_SUCCESS;
        }
    }
    for (l = 0; l < h->senders; l++)
        if (h->dx->d_pclaimed[l])
            xfer_flag_store(x->w, x->b, XFER_FLAG_SENT, l, epoch);
    if (!uses_s && h->slot < h->senders)
        xfer_flag_store(x->w, x->b, XFER_FLAG_SENT, h->slot, epoch > 0 ? x->e : -x->e);
    return XFER_SUCCESS;
}

/* Drop what an aborted exchange left: our own sends, receives already matched. */
static void abandon(dx_t *x)
{
    xfer_hier_t *h = x->h;
    int i;
    for (i = 0; i < x->nsreq; i++)
        if (h->dx->d_sreq[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&h->dx->d_sreq[i]);
    for (i = 0; i < x->nrreq; i++) /* matched already: they complete on their own */
        if (h->dx->d_rreq[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&h->dx->d_rreq[i]);
}

static int group_sends(const xfer_plan_t *p, int g)
{
    return p->shape.total[g] > 0;
}

/* Start the exchange of the call in progress (h->epoch). */
static xfer_status_t direct_post(void *arg)
{
    xfer_plan_t *p = arg;
    xfer_hier_t *h = p->hier;
    dx_t *x = &h->dx->x;
    const int g = p->topo->group;
    xfer_status_t st = XFER_SUCCESS;
    int l;

    memset(x, 0, sizeof(*x));
    x->p = p;
    x->h = h;
    x->w = h->win;
    x->e = h->epoch;
    x->seq = ++h->dx->ds->seq; /* every rank of both groups comes here once per call */
    x->b = (int) (h->epoch & 1);
    x->g = g;
    x->o = 1 - g;
    x->nr = p->topo->hm->nodes[x->o].nnodes;
    x->barrier = h->sync == XFER_HIER_BARRIER;
    x->cons_l = -1;
    x->pl = -1;
    x->maxrreq = h->dx->d_maxrreq;
    h->dx->phase = 0;
    h->roles = 0;
    memset(h->dx->d_pclaimed, 0, (size_t) h->senders);
    if (group_sends(p, g)) { /* one announcement per remote node and stripe with our data */
        const size_t A = h->agg[g][h->node];
        for (l = 0; l < h->senders; l++)
            h->dx->ds->expected += xfer_seg_len(A, h->senders, l) > 0 ? x->nr : 0;
        /* those that reached us after our last call */
        XFER_CHECK_GOTO(take_announcements(x), st, out);
    }
out:
    return st;
}

/* One step: claim, ship and receive whatever can go now; never waits. */
static xfer_status_t direct_progress(void *arg, int *done)
{
    xfer_plan_t *p = arg;
    xfer_hier_t *h = p->hier;
    dx_t *x = &h->dx->x;
    const int uses_s = group_sends(p, x->g), uses_r = group_sends(p, x->o);
    xfer_status_t st = XFER_SUCCESS;
    int progressed = 1, l, flag;

    *done = 0;
    while (h->dx->phase == 0 && progressed) {
        progressed = 0;
        if (uses_s && x->pl < 0 && !x->pclaims_over) {
            l = claim(x, XFER_FLAG_PCLAIM, (int) ((long) h->slot * h->senders / h->node_size),
                      &x->pserved_static); /* -1: every stripe has its shipper */
            x->pclaims_over = l < 0;
            if (l >= 0) {
                producer_start(x, l);
                x->roles |= 1;
                progressed = 1;
            }
        }
        if (uses_r && x->cons_l < 0 && !x->claims_over) {
            x->cons_l = claim(x, XFER_FLAG_CLAIM, 0, &x->served_static); /* -1: all taken */
            x->claims_over = x->cons_l < 0;
            x->cons_phase = 0;
        }
        if (x->cons_l >= 0)
            XFER_CHECK_GOTO(consumer_progress(x, &progressed), st, out);
        if (x->pl >= 0)
            XFER_CHECK_GOTO(producer_progress(x, &progressed), st, out);
        if (x->pl < 0 && (!uses_s || x->pclaims_over) && x->cons_l < 0 &&
            (!uses_r || x->claims_over))
            h->dx->phase = 1;
    }
    if (h->dx->phase == 1) { /* our sends, matched by now: local completion */
        int i;
        for (flag = 1, i = 0; i < x->nsreq && flag; i++)
            XFER_MPI_GOTO(MPI_Test(&h->dx->d_sreq[i], &flag, MPI_STATUS_IGNORE), st, out);
        if (flag)
            h->dx->phase = 2;
    }
    if (h->dx->phase == 2) {
        XFER_CHECK_GOTO(release_s(x, uses_s, x->e, &flag), st, out);
        if (flag) {
            h->dx->phase = 3;
            h->roles = x->roles;
            *done = 1;
        }
    }
out:
    return st;
}

static void direct_abort(void *arg)
{
    xfer_plan_t *p = arg;
    xfer_hier_t *h = p->hier;
    dx_t *x = &h->dx->x;
    int dummy;
    abandon(x);
    /* the node's waiters fail instead of timing out */
    (void) release_s(x, group_sends(p, x->g), -x->e, &dummy);
    if (x->cons_l >= 0)
        xfer_flag_store(x->w, x->b, XFER_FLAG_VALID, x->cons_l, -x->e);
    h->roles = x->roles;
}
