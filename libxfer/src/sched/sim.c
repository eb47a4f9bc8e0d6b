/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim_int.h"

static int earlier(const ready_t *a, const ready_t *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* Post operations in the order of the times they become ready, so that the ports' free times
 * are claimed in time order and the predicted time of a pipelined schedule holds. */
static void enqueue_at(sim_t *m, int rank, int k, double t, int finish)
{
    ready_t x;
    size_t i;
    if (m->nheap == m->heap_cap) {
        size_t cap = m->heap_cap ? m->heap_cap * 2 : 4096;
        ready_t *h = xfer_realloc_array(m->heap, cap, sizeof(*h));
        if (!h) {
            sim_fail(m, XFER_ERR_NO_MEMORY, "simulator queue");
            return;
        }
        m->heap = h;
        m->heap_cap = cap;
    }
    x.t = t;
    x.seq = m->seq++;
    x.rank = rank;
    x.k = k;
    x.finish = finish;
    for (i = m->nheap++; i > 0 && earlier(&x, &m->heap[(i - 1) / 2]); i = (i - 1) / 2)
        m->heap[i] = m->heap[(i - 1) / 2];
    m->heap[i] = x;
}

static void enqueue(sim_t *m, int rank, int k)
{
    enqueue_at(m, rank, k, m->r[rank].post[k], 0);
}

void sim_defer(sim_t *m, int rank, int k, double t)
{
    enqueue_at(m, rank, k, t, 1);
}

static double rand01(sim_t *m)
{
    m->rng ^= m->rng << 13; /* xorshift64 */
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return (double) (m->rng >> 11) / 9007199254740992.0;
}

double sim_delay(sim_t *m, int rank)
{
    return m->o.jitter > 0 && m->slow ? m->o.jitter * m->slow[rank] * rand01(m) : 0.0;
}

static ready_t dequeue(sim_t *m)
{
    const ready_t top = m->heap[0], last = m->heap[--m->nheap];
    size_t i = 0, c;
    while ((c = 2 * i + 1) < m->nheap) {
        if (c + 1 < m->nheap && earlier(&m->heap[c + 1], &m->heap[c]))
            c++;
        if (!earlier(&m->heap[c], &last))
            break;
        m->heap[i] = m->heap[c];
        i = c;
    }
    if (m->nheap > 0)
        m->heap[i] = last;
    return top;
}

/* ---- rounds, posting, completion ----------------------------------------------------------------
 */

static void start_round(sim_t *m, int rank)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_sched_t *s = R->s;
    int k, j;

    for (;;) {
        while (R->round < s->nrounds && m->err == XFER_SUCCESS) {
            xfer_status_t st = xfer_sched_round_view(s, R->round, R->scratch, &R->view);
            if (st != XFER_SUCCESS) {
                m->err = st;
                return;
            }
            if (R->view.n > 0)
                break;
            R->round++;
        }
        if (m->err != XFER_SUCCESS)
            return;
        if (R->round < s->nrounds)
            break;
        if (!sim_next_call(m, rank)) /* a hierarchy's next call runs the schedule again */
            return;
    }
    R->active_rounds++;
    R->pending = R->view.n;
    R->npend = 0;
    for (k = 0; k < R->view.n; k++) {
        R->st[k] = ST_IDLE;
        R->post[k] = R->end[k] = R->clock;
        R->cap[k].n = 0;
    }
    sim_check_round(m, rank);
    for (k = 0; k < R->view.n; k++) {
        const xfer_op_t *op = &R->view.ops[k];
        int first = 1, d;
        if (op->chain != 0)
            for (j = 0; j < k && first; j++)
                first = R->view.ops[j].chain != op->chain;
        R->wait[k] = !first + op->ndeps;
        for (d = 0; d < op->ndeps; d++) {
            const int dep = s->deps[op->dep0 + d] - R->view.first;
            if (R->view.first < 0 || dep < 0 || dep >= k || (op->flags & XFER_OPF_NO_BARRIER)) {
                sim_fail(m, XFER_ERR_NOT_SUPPORTED,
                         "%s: round %d: operation %d depends on an operation of another round; the "
                         "simulator follows dependencies inside a round only",
                         s->algo, R->round, R->view.first + k);
                return;
            }
        }
        if (R->wait[k] == 0)
            enqueue(m, rank, k);
    }
}

/* Op @p j of the view had one of its waits satisfied at time @p t. */
static void satisfy(sim_t *m, int rank, int j, double t)
{
    sim_rank_t *R = &m->r[rank];
    R->post[j] = XFER_MAX(R->post[j], t);
    if (--R->wait[j] == 0)
        enqueue(m, rank, j);
}

void sim_complete(sim_t *m, int rank, int k, double t)
{
    sim_rank_t *R = &m->r[rank];
    const int chain = R->view.ops[k].chain;
    int j;

    R->st[k] = ST_DONE;
    R->end[k] = t;
    if (chain != 0)
        for (j = k + 1; j < R->view.n; j++)
            if (R->view.ops[j].chain == chain) {
                satisfy(m, rank, j, t);
                break;
            }
    if (R->s->ndeps > 0 && R->view.first >= 0) /* explicit dependents (in this round) */
        for (j = k + 1; j < R->view.n; j++) {
            const xfer_op_t *o = &R->view.ops[j];
            int d;
            for (d = 0; d < o->ndeps; d++)
                if (R->s->deps[o->dep0 + d] == R->view.first + k)
                    satisfy(m, rank, j, t);
        }
    if (--R->pending == 0) {
        for (j = 0; j < R->view.n; j++)
            R->clock = XFER_MAX(R->clock, R->end[j]);
        R->round++;
        start_round(m, rank);
    }
}

/* Labels of @p len bytes at (buf, off) of @p rank into m->tmp, or a violation. */
static int take(sim_t *m, int rank, int buf, size_t off, size_t len, const char *what)
{
    sim_rank_t *R = &m->r[rank];
    size_t gap = 0;
    char me[16], b[96];

    m->tmp.n = 0;
    if (xfer_rv_get(sim_bufmap(m, rank, buf), off, len, 0, &m->tmp, &gap))
        return 1;
    if (gap == (size_t) -1) {
        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
        return 0;
    }
    sim_rank_name(m, rank, me, sizeof(me));
    snprintf(b, sizeof(b), "byte %zu", gap);
    if (buf == XFER_BUF_RECV && !m->flat)
        sim_block_name(m, R->s->group == 0 ? 1 : 0, gap, b, sizeof(b));
    sim_fail(m, XFER_ERR_VERIFY,
             "%s: round %d: %s %s %s[%zu..%zu) but does not hold %s there (message availability)",
             R->s->algo, R->round, me, what, xfer_buf_name(buf), off, off + len, b);
    return 0;
}

/* The labels send @p k of @p rank carries (a combined message: its pieces one after the other)
 * into @p out; 0 on a violation. */
static int capture(sim_t *m, int rank, int k, runvec_t *out)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_op_t *op = &R->view.ops[k];
    const xfer_piece_t *pc = op->npieces > 0 ? &R->s->pieces[op->piece0] : NULL;
    const int n = op->npieces > 0 ? op->npieces : 1;
    size_t pos = 0;
    int i, j;
    out->n = 0;
    for (j = 0; j < n; j++) {
        const int buf = pc ? pc[j].buf : op->buf;
        const size_t off = pc ? pc[j].off : op->off, len = pc ? pc[j].len : op->len;
        if (!take(m, rank, buf, off, len, "sends"))
            return 0;
        for (i = 0; i < m->tmp.n; i++) {
            run_t x = m->tmp.r[i];
            x.off += pos;
            if (!xfer_rv_push(out, x)) {
                sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
                return 0;
            }
        }
        pos += len;
    }
    if (pos != op->len) {
        sim_fail(m, XFER_ERR_VERIFY,
                 "%s: round %d: a combined message of %zu units has pieces of %zu", R->s->algo,
                 R->round, op->len, pos);
        return 0;
    }
    return 1;
}

static int same_labels(const runvec_t *a, const runvec_t *b)
{
    int i;
    if (a->n != b->n)
        return 0;
    for (i = 0; i < a->n; i++)
        if (a->r[i].off != b->r[i].off || a->r[i].len != b->r[i].len ||
            a->r[i].goff != b->r[i].goff || a->r[i].grp != b->r[i].grp)
            return 0;
    return 1;
}

static void deliver(sim_t *m, int srank, int ks, int rrank, int kr)
{
    sim_rank_t *S = &m->r[srank], *R = &m->r[rrank];
    const xfer_op_t *so = &S->view.ops[ks], *ro = &R->view.ops[kr];
    double t0, t1;

    if (so->len != ro->len) {
        char a[16], b[16];
        sim_rank_name(m, srank, a, sizeof(a));
        sim_rank_name(m, rrank, b, sizeof(b));
        sim_fail(m, XFER_ERR_VERIFY,
                 "%s: round %d/%d: %s sends %zu bytes to %s, which posted a receive of %zu",
                 S->s->algo, S->round, R->round, a, so->len, b, ro->len);
        return;
    }
    /* Nothing may write a send's buffer while it is in flight (between its post and its
     * match). Only another rank can, through a node's shared window: a rank's own writes in
     * the same round are the race check's, and rounds wait for their sends. So the labels are
     * taken again in hierarchies only (the other worlds' hot path stays one capture). */
    if (m->nodes && !capture(m, srank, ks, &m->tmp2))
        return;
    if (m->nodes && !same_labels(&m->tmp2, &S->cap[ks])) {
        char a[16], b[16];
        sim_rank_name(m, srank, a, sizeof(a));
        sim_rank_name(m, rrank, b, sizeof(b));
        sim_fail(m, XFER_ERR_VERIFY,
                 "%s: round %d: %s's send of %s[%zu..%zu) to %s was overwritten while in flight "
                 "(a write raced the send)",
                 S->s->algo, S->round, a,
                 xfer_buf_name(so->npieces > 0 ? S->s->pieces[so->piece0].buf : so->buf), so->off,
                 so->off + so->len, b);
        return;
    }
    if (ro->npieces > 0) { /* scattered over the receive's pieces, in order */
        size_t pos = 0, gap = 0;
        int j;
        for (j = 0; j < ro->npieces; j++)
            pos += R->s->pieces[ro->piece0 + j].len;
        if (pos != ro->len) {
            sim_fail(m, XFER_ERR_VERIFY,
                     "%s: round %d: a combined receive of %zu units has pieces of %zu", R->s->algo,
                     R->round, ro->len, pos);
            return;
        }
        for (j = 0, pos = 0; j < ro->npieces; j++) {
            const xfer_piece_t *pc = &R->s->pieces[ro->piece0 + j];
            m->tmp2.n = 0;
            if (!xfer_rv_get(&S->cap[ks], pos, pc->len, 0, &m->tmp2, &gap) ||
                !xfer_rv_put(sim_bufmap(m, rrank, pc->buf), pc->off, pc->len, &m->tmp2)) {
                sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
                return;
            }
            pos += pc->len;
        }
    } else if (!xfer_rv_put(sim_bufmap(m, rrank, ro->buf), ro->off, ro->len, &S->cap[ks])) {
        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
        return;
    }
    t0 = XFER_MAX(XFER_MAX(S->post[ks], R->post[kr]), XFER_MAX(S->send_free, R->recv_free));
    t1 = t0 + m->o.alpha + (double) so->len * m->o.beta;
    S->send_free = R->recv_free = t1;
    S->sent += so->len;
    R->recvd += so->len;
    m->st.messages++;
    sim_complete(m, srank, ks, t1);
    sim_complete(m, rrank, kr, t1);
}

static void post_p2p(sim_t *m, int rank, int k)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_op_t *op = &R->view.ops[k];
    const int want = op->kind == XFER_OP_SEND ? XFER_OP_RECV : XFER_OP_SEND;
    const int peer = sim_peer(m, rank, op); /* merged rank (stripe ranks translated) */
    sim_rank_t *P;
    int i;

    /* a flat world's local steps may be messages to self (MPI allows them) */
    if (peer < 0 || peer >= m->N || (peer == rank && !m->flat)) {
        sim_fail(m, XFER_ERR_VERIFY, "%s: round %d: point-to-point operation with peer %d",
                 R->s->algo, R->round, op->peer);
        return;
    }
    if (op->kind == XFER_OP_SEND && !capture(m, rank, k, &R->cap[k])) /* as it holds it now */
        return;
    P = &m->r[peer];
    for (i = 0; i < P->npend; i++) { /* the peer's first matching operation, in post order */
        const int kp = P->pend[i];
        const xfer_op_t *po = &P->view.ops[kp];
        if (po->kind == want && po->comm == op->comm && sim_peer(m, peer, po) == rank &&
            po->aux == op->aux) { /* same communicator, same lane */
            memmove(&P->pend[i], &P->pend[i + 1], (size_t) (P->npend - i - 1) * sizeof(int));
            P->npend--;
            if (op->kind == XFER_OP_SEND)
                deliver(m, rank, k, peer, kp);
            else
                deliver(m, peer, kp, rank, k);
            return;
        }
    }
    R->pend[R->npend++] = k;
}

static int same_counts(const xfer_counts_t *a, const xfer_counts_t *b)
{
    int i;
    if (a->n != b->n)
        return 0;
    if (a->kind == b->kind && a->kind != XFER_COUNTS_ARRAY)
        return a->k == b->k && a->m == b->m;
    for (i = 0; i < a->n; i++)
        if (xfer_counts_get(a, i) != xfer_counts_get(b, i))
            return 0;
    return 1;
}

static double log2c(int n)
{
    return (double) xfer_ceil_log2((uint64_t) (n > 0 ? n : 1));
}

static size_t oi_len(const sim_t *m, const coll_inst_t *ci, int i)
{
    return m->r[ci->rank[i]].view.ops[ci->op[i]].len;
}

static void run_coll(sim_t *m, coll_inst_t *ci, int size)
{
    sim_rank_t *R0 = &m->r[ci->rank[0]];
    const xfer_op_t *o0 = &R0->view.ops[ci->op[0]];
    const xfer_counts_t *c0 = o0->counts >= 0 ? &R0->s->counts[o0->counts] : NULL;
    runvec_t res = {0};
    double t = 0.0, cost = 0.0;
    size_t total = o0->len;
    int i;

    for (i = 0; i < size; i++) {
        const sim_rank_t *Ri = &m->r[ci->rank[i]];
        const xfer_op_t *oi = &Ri->view.ops[ci->op[i]];
        t = XFER_MAX(t, Ri->post[ci->op[i]]);
        if (oi->kind != o0->kind || (c0 && !same_counts(c0, &Ri->s->counts[oi->counts])) ||
            (o0->kind != XFER_OP_ALLGATHERV && oi->peer != o0->peer) ||
            (o0->kind == XFER_OP_BCAST && oi->len != o0->len)) {
            char a[16];
            sim_rank_name(m, ci->rank[i], a, sizeof(a));
            sim_fail(m, XFER_ERR_VERIFY,
                     "%s: round %d: %s disagrees with the other members of a %s on its arguments",
                     Ri->s->algo, Ri->round, a, xfer_op_name(o0->kind));
            return;
        }
    }
    switch (o0->kind) {
    case XFER_OP_ALLGATHERV: { /* every member's block, concatenated, to every member */
        size_t off = 0;        /* running offset: O(1) per member whatever the counts kind */
        for (i = 0; i < size && m->err == XFER_SUCCESS; i++) {
            const xfer_op_t *oi = &m->r[ci->rank[i]].view.ops[ci->op[i]];
            size_t len = xfer_counts_get(c0, i), gap = 0;
            if (!xfer_rv_get(sim_bufmap(m, ci->rank[i], oi->buf), oi->off + off, len, off, &res,
                             &gap))
                take(m, ci->rank[i], oi->buf, oi->off + off, len, "contributes");
            off += len;
        }
        for (i = 0; i < size && m->err == XFER_SUCCESS; i++) {
            const xfer_op_t *oi = &m->r[ci->rank[i]].view.ops[ci->op[i]];
            if (!xfer_rv_put(sim_bufmap(m, ci->rank[i], oi->buf), oi->off, total, &res))
                sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
        }
        cost = log2c(size) * m->o.alpha + (double) total * (size - 1) / size * m->o.beta;
        break;
    }
    case XFER_OP_BCAST: {
        const int root = o0->peer;
        const xfer_op_t *ro = &m->r[ci->rank[root]].view.ops[ci->op[root]];
        if (take(m, ci->rank[root], ro->buf, ro->off, ro->len, "broadcasts")) {
            for (i = 0; i < m->tmp.n; i++)
                xfer_rv_push(&res, m->tmp.r[i]);
            for (i = 0; i < size; i++)
                if (i != root) {
                    const xfer_op_t *oi = &m->r[ci->rank[i]].view.ops[ci->op[i]];
                    if (!xfer_rv_put(sim_bufmap(m, ci->rank[i], oi->buf), oi->off, oi->len, &res))
                        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
                }
        }
        cost = o0->len >= 8192 ? 2 * log2c(size) * m->o.alpha + 2.0 * (double) o0->len * m->o.beta
                               : log2c(size) * (m->o.alpha + (double) o0->len * m->o.beta);
        break;
    }
    case XFER_OP_GATHERV: {
        const int root = o0->peer;
        const xfer_op_t *ro = &m->r[ci->rank[root]].view.ops[ci->op[root]];
        size_t off = 0;
        total = xfer_counts_total(c0);
        for (i = 0; i < size && m->err == XFER_SUCCESS; off += oi_len(m, ci, i), i++) {
            const xfer_op_t *oi = &m->r[ci->rank[i]].view.ops[ci->op[i]];
            if (oi->len != xfer_counts_get(c0, i)) {
                sim_fail(m, XFER_ERR_VERIFY,
                         "%s: gatherv member %d sends %zu bytes, root expects %zu",
                         m->r[ci->rank[i]].s->algo, i, oi->len, xfer_counts_get(c0, i));
                break;
            }
            if (take(m, ci->rank[i], oi->buf, oi->off, oi->len, "gathers") &&
                !xfer_rv_put(sim_bufmap(m, ci->rank[root], ro->buf2), ro->off2 + off, oi->len,
                             &m->tmp))
                sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
        }
        cost = log2c(size) * m->o.alpha + (double) total * (size - 1) / size * m->o.beta;
        break;
    }
    default:
        break;
    }
    xfer_rv_free(&res);
    if (m->err != XFER_SUCCESS)
        return;
    m->st.collectives++;
    for (i = 0; i < size; i++) {
        sim_rank_t *Ri = &m->r[ci->rank[i]];
        Ri->send_free = Ri->recv_free = XFER_MAX(Ri->send_free, t + cost);
        sim_complete(m, ci->rank[i], ci->op[i], t + cost);
    }
}

static void post_coll(sim_t *m, int rank, int k)
{
    const sim_rank_t *R = &m->r[rank];
    const xfer_group_t *g = &R->s->groups[R->view.ops[k].group];
    /* instances: per communicator, slot and group (its first member, as a merged rank) */
    const int color = sim_member(m, rank, g, 0), slot = (g->slot + 1) | (g->comm << 12);
    uint64_t *seq, *inst, key;
    coll_inst_t *ci;
    int i;

    seq = xfer_hmap_slot(&m->coll_seq,
                         ((uint64_t) rank << 40) | ((uint64_t) slot << 24) | (uint64_t) color);
    if (!seq) {
        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
        return;
    }
    key = ((uint64_t) slot << 56) | ((uint64_t) color << 32) | (*seq & 0xffffffffu);
    (*seq)++;
    inst = xfer_hmap_slot(&m->coll, key);
    if (!inst) {
        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
        return;
    }
    if (*inst == 0) {
        if (m->ninsts == m->insts_cap) {
            int cap = m->insts_cap ? m->insts_cap * 2 : 64;
            coll_inst_t *p = xfer_realloc_array(m->insts, (size_t) cap, sizeof(*p));
            if (!p) {
                sim_fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
                return;
            }
            m->insts = p;
            m->insts_cap = cap;
        }
        ci = &m->insts[m->ninsts];
        ci->posted = 0;
        ci->rank = xfer_malloc((size_t) g->size * sizeof(int));
        ci->op = xfer_malloc((size_t) g->size * sizeof(int));
        if (!ci->rank || !ci->op) {
            xfer_free(ci->rank);
            xfer_free(ci->op);
            sim_fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
            return;
        }
        for (i = 0; i < g->size; i++)
            ci->op[i] = -1;
        *inst = (uint64_t) ++m->ninsts;
    }
    ci = &m->insts[*inst - 1];
    if (g->my_index < 0 || g->my_index >= g->size || ci->op[g->my_index] != -1 ||
        sim_member(m, rank, g, g->my_index) != rank) {
        sim_fail(m, XFER_ERR_VERIFY, "%s: round %d: inconsistent group membership in a %s",
                 R->s->algo, R->round, xfer_op_name(R->view.ops[k].kind));
        return;
    }
    ci->rank[g->my_index] = rank;
    ci->op[g->my_index] = k;
    if (++ci->posted == g->size) {
        run_coll(m, ci, g->size);
        xfer_free(ci->rank);
        xfer_free(ci->op);
        ci->rank = ci->op = NULL;
        xfer_hmap_erase(&m->coll, key);
    }
}

/* A local operation deferred by jitter ends at time @p t. */
static void finish(sim_t *m, int rank, int k, double t)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_op_t *op = &R->view.ops[k];
    if (op->kind == XFER_OP_FLAG_PUT) {
        sim_finish_put(m, rank, k, t);
        return;
    }
    if (take(m, rank, op->buf, op->off, op->len, "copies") &&
        !xfer_rv_put(sim_bufmap(m, rank, op->buf2), op->off2, op->len, &m->tmp))
        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
    if (m->err == XFER_SUCCESS)
        sim_complete(m, rank, k, t);
}

static void post(sim_t *m, int rank, int k)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_op_t *op = &R->view.ops[k];

    if (R->st[k] != ST_IDLE) {
        sim_fail(m, XFER_ERR_INTERNAL, "simulator posted an operation twice");
        return;
    }
    R->st[k] = ST_POSTED;
    switch (op->kind) {
    case XFER_OP_COPY:
        if (m->o.jitter > 0) { /* it takes a while: the labels move when it ends */
            sim_defer(m, rank, k, R->post[k] + sim_delay(m, rank));
            break;
        }
        if (take(m, rank, op->buf, op->off, op->len, "copies") &&
            !xfer_rv_put(sim_bufmap(m, rank, op->buf2), op->off2, op->len, &m->tmp))
            sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
        if (m->err == XFER_SUCCESS)
            sim_complete(m, rank, k, R->post[k]);
        break;
    case XFER_OP_SEND:
    case XFER_OP_RECV:
        post_p2p(m, rank, k);
        break;
    case XFER_OP_ALLGATHERV:
    case XFER_OP_BCAST:
    case XFER_OP_GATHERV:
        post_coll(m, rank, k);
        break;
    default: /* node staging */
        sim_post_node(m, rank, k);
        break;
    }
}

/* ---- setup and driver ----------------------------------------------------------------------- */

void sim_free(sim_t *m)
{
    int i, b, k, w;
    if (m->r)
        for (i = 0; i < m->N; i++) {
            sim_rank_t *R = &m->r[i];
            w = R->s ? xfer_sched_widest_round(R->s) : 0;
            for (b = 0; b < XFER_NBUFS; b++)
                xfer_rv_free(&R->map[b]);
            if (R->cap)
                for (k = 0; k < w; k++)
                    xfer_rv_free(&R->cap[k]);
            xfer_sched_destroy(&R->s);
            xfer_free(R->scratch);
            xfer_free(R->st);
            xfer_free(R->post);
            xfer_free(R->end);
            xfer_free(R->cap);
            xfer_free(R->pend);
            xfer_free(R->wait);
            xfer_free(R->acc.a[0]);
            xfer_free(R->acc.a[1]);
        }
    for (i = 0; i < m->ninsts; i++) {
        xfer_free(m->insts[i].rank);
        xfer_free(m->insts[i].op);
    }
    xfer_free(m->insts);
    xfer_free(m->r);
    xfer_free(m->heap);
    sim_nodes_free(m);
    xfer_free(m->slow);
    xfer_rv_free(&m->tmp);
    xfer_rv_free(&m->tmp2);
    xfer_hmap_fini(&m->coll_seq);
    xfer_hmap_fini(&m->coll);
}

/* Per-rank simulator state for the schedule already in R->s. */
xfer_status_t sim_setup_state(sim_rank_t *R, int rank)
{
    const int w = xfer_sched_widest_round(R->s);
    int k, most = 0;

    R->scratch = R->s->gen ? xfer_malloc((size_t) w * sizeof(xfer_op_t)) : NULL;
    R->st = xfer_malloc((size_t) w);
    R->post = xfer_malloc((size_t) w * sizeof(double));
    R->end = xfer_malloc((size_t) w * sizeof(double));
    R->cap = xfer_calloc((size_t) w, sizeof(runvec_t));
    R->pend = xfer_malloc((size_t) w * sizeof(int));
    R->wait = xfer_malloc((size_t) w * sizeof(int));
    if ((R->s->gen && !R->scratch) || !R->st || !R->post || !R->end || !R->cap || !R->pend ||
        !R->wait)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "simulator state of rank %d", rank);
    if (R->s->npieces > 0) { /* room for the widest combined message's accesses */
        for (k = 0; k < R->s->nops; k++)
            most = XFER_MAX(most, R->s->ops[k].npieces);
        R->acc.a[0] = xfer_malloc((size_t) most * sizeof(access_t));
        R->acc.a[1] = xfer_malloc((size_t) most * sizeof(access_t));
        if (!R->acc.a[0] || !R->acc.a[1])
            return XFER_ERR(XFER_ERR_NO_MEMORY, "simulator state of rank %d", rank);
        R->acc.cap = most;
    }
    return XFER_SUCCESS;
}

xfer_status_t sim_send_labels(sim_t *m, int rank)
{
    sim_rank_t *R = &m->r[rank];
    const size_t n = R->s->send_bytes;
    run_t x = {0, n, 0, 0};
    if (m->flat) { /* global blocks [rank * send, (rank + 1) * send) */
        x.goff = (size_t) rank * n;
    } else { /* the rank's own block at its global offset, labelled with its call */
        x.goff = xfer_shape_offset(m->shape, R->s->group, R->s->rank);
        x.grp = R->s->group + 2 * R->call;
    }
    R->map[XFER_BUF_SEND].n = 0;
    if (n && !xfer_rv_push(&R->map[XFER_BUF_SEND], x))
        return sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
    return XFER_SUCCESS;
}

static xfer_status_t setup_rank(sim_t *m, int rank)
{
    const xfer_shape_t *sh = m->shape;
    const int g = rank < sh->n[0] ? 0 : 1, r = g ? rank - sh->n[0] : rank;
    sim_rank_t *R = &m->r[rank];
    xfer_status_t st;

    XFER_CHECK_GOTO(xfer_sched_create(sh, g, r, &R->s), st, out);
    XFER_CHECK_GOTO(m->build(sh, R->s), st, out);
    XFER_CHECK_GOTO(sim_setup_state(R, rank), st, out);
    st = sim_send_labels(m, rank);
out:
    return st;
}

static xfer_status_t setup_flat_rank(sim_t *m, int rank)
{
    sim_rank_t *R = &m->r[rank];
    xfer_status_t st;

    XFER_CHECK_GOTO(m->flat->build(m->flat->ctx, rank, &R->s), st, out);
    if (!R->s || R->s->n[0] != m->N || R->s->rank != rank) {
        st = XFER_ERR(XFER_ERR_VERIFY,
                      "flat world of %d: the schedule built for process %d is "
                      "not one of its own",
                      m->N, rank);
        goto out;
    }
    XFER_CHECK_GOTO(sim_setup_state(R, rank), st, out);
    st = sim_send_labels(m, rank);
out:
    return st;
}

void xfer_sim_opts_default(xfer_sim_opts_t *o)
{
    o->alpha = 2e-6;
    o->beta = 1e-10;
    o->check_ports = 1;
    o->jitter = 0.0;
    o->seed = 0;
}

/* Run the schedules already set up, then check and summarise. */
xfer_status_t sim_drive(sim_t *m, xfer_sim_stats_t *stats)
{
    int rank, nslots = -1;

    for (rank = 0; rank < m->N; rank++) {
        if (nslots >= 0 && m->r[rank].s->nslots != nslots)
            return XFER_ERR(XFER_ERR_VERIFY, "%s: ranks disagree on the number of split slots",
                            m->r[rank].s->algo);
        nslots = m->r[rank].s->nslots;
    }
    if (m->o.jitter > 0) { /* each rank's slowness, and a start time of its own */
        m->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t) m->o.seed;
        m->slow = xfer_malloc((size_t) m->N * sizeof(double));
        if (!m->slow)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "simulator jitter");
        for (rank = 0; rank < m->N; rank++) {
            int e = (int) (6.0 * rand01(m)); /* about log-uniform, 1 .. 128 */
            m->slow[rank] = 1.0 + rand01(m);
            while (e-- > 0)
                m->slow[rank] *= 2.0;
            m->r[rank].clock = 4.0 * sim_delay(m, rank);
        }
    }
    for (rank = 0; rank < m->N && m->err == XFER_SUCCESS; rank++)
        start_round(m, rank);
    while (m->nheap > 0 && m->err == XFER_SUCCESS) {
        const ready_t x = dequeue(m);
        if (x.finish)
            finish(m, x.rank, x.k, x.t);
        else
            post(m, x.rank, x.k);
    }
    if (m->err == XFER_SUCCESS)
        for (rank = 0; rank < m->N; rank++)
            if (m->r[rank].round < m->r[rank].s->nrounds) {
                sim_describe_stuck(m);
                break;
            }
    if (m->err == XFER_SUCCESS) {
        if (m->flat)
            sim_verify_flat(m);
        else
            sim_verify(m);
    }
    if (m->err == XFER_SUCCESS && stats) {
        memset(stats, 0, sizeof(*stats));
        stats->messages = m->st.messages;
        stats->collectives = m->st.collectives;
        for (rank = 0; rank < m->N; rank++) {
            const sim_rank_t *R = &m->r[rank];
            stats->steps = XFER_MAX(stats->steps, R->s->nrounds);
            stats->max_rounds = XFER_MAX(stats->max_rounds, R->active_rounds);
            stats->max_sent = XFER_MAX(stats->max_sent, R->sent);
            stats->max_recv = XFER_MAX(stats->max_recv, R->recvd);
            stats->max_tmp = XFER_MAX(stats->max_tmp, R->s->tmp_bytes);
            stats->total_sent += R->sent;
            stats->predicted = XFER_MAX(stats->predicted, R->clock);
        }
        /* each rank of B must receive p k_A = total[0] bytes, each rank of A total[1] */
        if (m->shape)
            stats->bound = (m->shape->total[0] || m->shape->total[1] ? m->o.alpha : 0.0) +
                           m->o.beta * (double) XFER_MAX(m->shape->total[0], m->shape->total[1]);
    }
    return m->err;
}

xfer_status_t sim_run(sim_t *m, int N, const xfer_sim_opts_t *opts,
                      xfer_status_t (*prepare)(sim_t *m),
                      xfer_status_t (*setup)(sim_t *m, int rank), xfer_sim_stats_t *stats)
{
    xfer_status_t st;
    int rank;

    m->N = N;
    if (opts)
        m->o = *opts;
    else
        xfer_sim_opts_default(&m->o);
    m->r = xfer_calloc((size_t) N, sizeof(sim_rank_t));
    if (!m->r || !xfer_hmap_init(&m->coll_seq, 64) || !xfer_hmap_init(&m->coll, 64)) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "simulator state for %d ranks", N);
        goto out;
    }
    if (prepare)
        XFER_CHECK_GOTO(prepare(m), st, out);
    for (rank = 0; rank < m->N; rank++)
        XFER_CHECK_GOTO(setup(m, rank), st, out);
    st = sim_drive(m, stats);
out:
    sim_free(m);
    return st;
}

xfer_status_t xfer_sim_run(const xfer_shape_t *shape, xfer_builder_fn build,
                           const xfer_sim_opts_t *opts, xfer_sim_stats_t *stats)
{
    sim_t m;

    memset(&m, 0, sizeof(m));
    m.shape = shape;
    m.build = build;
    if (shape->n[0] < 1 || shape->n[1] < 1 || shape->n[0] + shape->n[1] >= XFER_SIM_MAX_RANKS)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "simulator shape %d x %d out of range", shape->n[0],
                        shape->n[1]);
    return sim_run(&m, shape->n[0] + shape->n[1], opts, NULL, setup_rank, stats);
}

xfer_status_t xfer_sim_run_flat(const xfer_sim_flat_t *world, const xfer_sim_opts_t *opts,
                                xfer_sim_stats_t *stats)
{
    sim_t m;

    memset(&m, 0, sizeof(m));
    m.flat = world;
    if (!world || !world->build || !world->expect || world->n < 1 || world->n >= XFER_SIM_MAX_RANKS)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "simulator: flat world of %d processes",
                        world ? world->n : 0);
    return sim_run(&m, world->n, opts, NULL, setup_flat_rank, stats);
}
