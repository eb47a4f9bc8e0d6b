/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulator's execution of rounds: a rank starts its next round (checked first), posts the
 * operations whose waits are satisfied, moves labels for copies and point-to-point messages
 * (matched with rendezvous semantics in posting order per pair, timed under alpha-beta), and
 * completes operations, which releases chains, dependents and the next round.
 */
#include <stdio.h>
#include <string.h>

#include "sim_int.h"

void sim_start_round(sim_t *m, int rank)
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
        R->state[k].st = ST_IDLE;
        R->state[k].post = R->state[k].end = R->clock;
        R->state[k].cap.n = 0;
    }
    sim_check_round(m, rank);
    for (k = 0; k < R->view.n; k++) {
        const xfer_op_t *op = &R->view.ops[k];
        int first = 1, d;
        if (op->chain != 0)
            for (j = 0; j < k && first; j++)
                first = R->view.ops[j].chain != op->chain;
        R->state[k].wait = !first + op->ndeps;
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
        if (R->state[k].wait == 0)
            sim_enqueue(m, rank, k);
    }
}

/* Op @p j of the view had one of its waits satisfied at time @p t. */
static void satisfy(sim_t *m, int rank, int j, double t)
{
    sim_rank_t *R = &m->r[rank];
    R->state[j].post = XFER_MAX(R->state[j].post, t);
    if (--R->state[j].wait == 0)
        sim_enqueue(m, rank, j);
}

void sim_complete(sim_t *m, int rank, int k, double t)
{
    sim_rank_t *R = &m->r[rank];
    const int chain = R->view.ops[k].chain;
    int j;

    R->state[k].st = ST_DONE;
    R->state[k].end = t;
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
            R->clock = XFER_MAX(R->clock, R->state[j].end);
        R->round++;
        sim_start_round(m, rank);
    }
}

/* Labels of @p len bytes at (buf, off) of @p rank into m->tmp, or a violation. */
int sim_take(sim_t *m, int rank, int buf, size_t off, size_t len, const char *what)
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
    size_t pos = 0, gap = 0;
    int j;
    out->n = 0;
    for (j = 0; j < n; j++) {
        const int buf = pc ? pc[j].buf : op->buf;
        const size_t off = pc ? pc[j].off : op->off, len = pc ? pc[j].len : op->len;
        /* straight into out, at the piece's position; sim_take names what is missing */
        if (!xfer_rv_get(sim_bufmap(m, rank, buf), off, len, pos, out, &gap)) {
            if (gap == (size_t) -1)
                sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
            else
                sim_take(m, rank, buf, off, len, "sends");
            return 0;
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
    if (m->nodes && !same_labels(&m->tmp2, &S->state[ks].cap)) {
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
            if (!xfer_rv_get(&S->state[ks].cap, pos, pc->len, 0, &m->tmp2, &gap) ||
                !xfer_rv_put(sim_bufmap(m, rrank, pc->buf), pc->off, pc->len, &m->tmp2)) {
                sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
                return;
            }
            pos += pc->len;
        }
    } else if (!xfer_rv_put(sim_bufmap(m, rrank, ro->buf), ro->off, ro->len, &S->state[ks].cap)) {
        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
        return;
    }
    t0 = XFER_MAX(XFER_MAX(S->state[ks].post, R->state[kr].post),
                  XFER_MAX(S->send_free, R->recv_free));
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
    if (op->kind == XFER_OP_SEND && !capture(m, rank, k, &R->state[k].cap)) /* as it holds it now */
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

/* A local operation deferred by jitter ends at time @p t. */
void sim_finish(sim_t *m, int rank, int k, double t)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_op_t *op = &R->view.ops[k];
    if (op->kind == XFER_OP_FLAG_PUT) {
        sim_finish_put(m, rank, k, t);
        return;
    }
    if (sim_take(m, rank, op->buf, op->off, op->len, "copies") &&
        !xfer_rv_put(sim_bufmap(m, rank, op->buf2), op->off2, op->len, &m->tmp))
        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
    if (m->err == XFER_SUCCESS)
        sim_complete(m, rank, k, t);
}

void sim_post(sim_t *m, int rank, int k)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_op_t *op = &R->view.ops[k];

    if (R->state[k].st != ST_IDLE) {
        sim_fail(m, XFER_ERR_INTERNAL, "simulator posted an operation twice");
        return;
    }
    R->state[k].st = ST_POSTED;
    switch (op->kind) {
    case XFER_OP_COPY:
        if (m->o.jitter > 0) { /* it takes a while: the labels move when it ends */
            sim_defer(m, rank, k, R->state[k].post + sim_delay(m, rank));
            break;
        }
        if (sim_take(m, rank, op->buf, op->off, op->len, "copies") &&
            !xfer_rv_put(sim_bufmap(m, rank, op->buf2), op->off2, op->len, &m->tmp))
            sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
        if (m->err == XFER_SUCCESS)
            sim_complete(m, rank, k, R->state[k].post);
        break;
    case XFER_OP_SEND:
    case XFER_OP_RECV:
        post_p2p(m, rank, k);
        break;
    case XFER_OP_ALLGATHERV:
    case XFER_OP_BCAST:
    case XFER_OP_GATHERV:
        sim_post_coll(m, rank, k);
        break;
    default: /* node staging */
        sim_post_node(m, rank, k);
        break;
    }
}
