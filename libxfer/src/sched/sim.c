/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "../core/core.h"
#include "hmap.h"
#include "sim.h"

enum { ST_IDLE = 0, ST_POSTED, ST_DONE };

typedef struct sim_rank {
    xfer_sched_t *s;
    unsigned char *buf[XFER_NBUFS];
    unsigned char *opst; /* per op state */
    int round;           /* current round, nrounds when finished */
    int pending;         /* ops of the current round not yet done */
    size_t sent, recvd;
} sim_rank_t;

typedef struct coll_inst {
    int posted;
    int *rank; /* merged rank of each member, by member index */
    int *op;   /* op index in that rank's schedule */
} coll_inst_t;

typedef struct sim {
    const xfer_shape_t *shape;
    int N;
    sim_rank_t *r;
    int *queue; /* pairs (rank, op) to post */
    size_t qhead, qtail, qcap;
    xfer_hmap_t pair_seq; /* (src,dst,dir) -> next sequence number */
    xfer_hmap_t posted;   /* (src,dst,seq,dir) -> rank/op of the posted side */
    xfer_hmap_t coll_seq; /* (rank, slot, color) -> next call index */
    xfer_hmap_t coll;     /* (slot, color, call) -> coll_inst_t index + 1 */
    coll_inst_t *insts;
    int ninsts, insts_cap;
    xfer_sim_stats_t st;
    xfer_status_t err;
} sim_t;

static xfer_status_t fail(sim_t *m, xfer_status_t st, const char *what)
{
    if (m->err == XFER_SUCCESS)
        m->err = XFER_ERR(st, "%s", what);
    return m->err;
}

static void enqueue(sim_t *m, int rank, int op)
{
    if (m->qtail + 2 > m->qcap) {
        size_t live = m->qtail - m->qhead, cap = m->qcap ? m->qcap * 2 : 1024;
        int *q;
        if (m->qhead > 0 && live + 2 <= m->qcap) { /* compact */
            memmove(m->queue, m->queue + m->qhead, live * sizeof(int));
            m->qhead = 0;
            m->qtail = live;
        } else {
            q = xfer_realloc_array(m->queue, cap, sizeof(int));
            if (!q) {
                fail(m, XFER_ERR_NO_MEMORY, "simulator queue");
                return;
            }
            m->queue = q;
            m->qcap = cap;
        }
    }
    m->queue[m->qtail++] = rank;
    m->queue[m->qtail++] = op;
}

static int round_begin(const xfer_sched_t *s, int round)
{
    return s->round_start[round];
}

static int round_end(const xfer_sched_t *s, int round)
{
    return s->round_start[round + 1];
}

/* Post the ops of rank @p rank's current round that may start now. */
static void start_round(sim_t *m, int rank)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_sched_t *s = R->s;
    int i, j, b, e;

    while (R->round < s->nrounds) {
        b = round_begin(s, R->round);
        e = round_end(s, R->round);
        R->pending = e - b;
        if (R->pending > 0)
            break;
        R->round++;
    }
    if (R->round >= s->nrounds)
        return;
    for (i = b; i < e; i++) {
        int first = 1;
        if (s->ops[i].chain != 0)
            for (j = b; j < i; j++)
                if (s->ops[j].chain == s->ops[i].chain)
                    first = 0;
        if (first)
            enqueue(m, rank, i);
    }
}

static void complete(sim_t *m, int rank, int op)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_sched_t *s = R->s;
    int chain = s->ops[op].chain, e = round_end(s, R->round), i;

    R->opst[op] = ST_DONE;
    if (chain != 0)
        for (i = op + 1; i < e; i++)
            if (s->ops[i].chain == chain) {
                enqueue(m, rank, i);
                break;
            }
    if (--R->pending == 0) {
        R->round++;
        start_round(m, rank);
    }
}

#define KEY_RANK_BITS 21

static uint64_t pair_key(int src, int dst, int dir)
{
    return ((uint64_t) src << (KEY_RANK_BITS + 1)) | ((uint64_t) dst << 1) | (uint64_t) dir;
}

static void post_p2p(sim_t *m, int rank, int op)
{
    const xfer_op_t *o = &m->r[rank].s->ops[op];
    const int dir = o->kind == XFER_OP_SEND ? 0 : 1;
    const int src = dir == 0 ? rank : o->peer, dst = dir == 0 ? o->peer : rank;
    uint64_t *seq, *other, mine;
    uint64_t base;

    if (o->peer < 0 || o->peer >= m->N || o->peer == rank) {
        fail(m, XFER_ERR_VERIFY, "point-to-point operation with an invalid peer");
        return;
    }
    seq = xfer_hmap_slot(&m->pair_seq, pair_key(src, dst, dir));
    if (!seq) {
        fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
        return;
    }
    if (*seq >= ((uint64_t) 1 << KEY_RANK_BITS)) {
        fail(m, XFER_ERR_NOT_SUPPORTED, "more than 2^21 messages between one pair of ranks");
        return;
    }
    /* exact key of message number seq from src to dst; the two sides differ in the low bit */
    base = ((uint64_t) src << (2 * KEY_RANK_BITS + 1)) | ((uint64_t) dst << (KEY_RANK_BITS + 1)) |
           (*seq << 1);
    (*seq)++;
    other = xfer_hmap_find(&m->posted, base ^ (uint64_t) (1 - dir));
    mine = ((uint64_t) rank << 32) | (uint64_t) op;
    if (!other) {
        uint64_t *slot = xfer_hmap_slot(&m->posted, base ^ (uint64_t) dir);
        if (!slot) {
            fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
            return;
        }
        *slot = mine;
        return;
    }
    {
        int orank = (int) (*other >> 32), oop = (int) (*other & 0xffffffffu);
        const xfer_op_t *so = dir == 0 ? o : &m->r[orank].s->ops[oop];
        const xfer_op_t *ro = dir == 0 ? &m->r[orank].s->ops[oop] : o;
        int srank = dir == 0 ? rank : orank, rrank = dir == 0 ? orank : rank;
        xfer_hmap_erase(&m->posted, base ^ (uint64_t) (1 - dir));
        if (so->len != ro->len) {
            char msg[256];
            snprintf(msg, sizeof(msg),
                     "message %d -> %d: sender sends %zu bytes, receiver expects %zu", srank, rrank,
                     so->len, ro->len);
            fail(m, XFER_ERR_VERIFY, msg);
            return;
        }
        memcpy(m->r[rrank].buf[ro->buf] + ro->off, m->r[srank].buf[so->buf] + so->off, so->len);
        m->r[srank].sent += so->len;
        m->r[rrank].recvd += so->len;
        m->st.messages++;
        complete(m, srank, dir == 0 ? op : oop);
        complete(m, rrank, dir == 0 ? oop : op);
    }
}

static int same_counts(const xfer_counts_t *a, const xfer_counts_t *b)
{
    int i;
    if (a->n != b->n)
        return 0;
    for (i = 0; i < a->n; i++)
        if (xfer_counts_get(a, i) != xfer_counts_get(b, i))
            return 0;
    return 1;
}

static void run_coll(sim_t *m, coll_inst_t *ci, const xfer_group_t *g)
{
    const xfer_sched_t *s0 = m->r[ci->rank[0]].s;
    const xfer_op_t *o0 = &s0->ops[ci->op[0]];
    const xfer_counts_t *c0 = o0->counts >= 0 ? &s0->counts[o0->counts] : NULL;
    int i, j;

    for (i = 1; i < g->size; i++) {
        const xfer_sched_t *si = m->r[ci->rank[i]].s;
        const xfer_op_t *oi = &si->ops[ci->op[i]];
        if (oi->kind != o0->kind || (c0 && !same_counts(c0, &si->counts[oi->counts])) ||
            (o0->kind != XFER_OP_ALLGATHERV && oi->peer != o0->peer) ||
            (o0->kind == XFER_OP_BCAST && oi->len != o0->len)) {
            fail(m, XFER_ERR_VERIFY, "members of a group disagree on a collective call");
            return;
        }
    }
    switch (o0->kind) {
    case XFER_OP_ALLGATHERV:
        for (i = 0; i < g->size; i++) { /* block i from member i to everybody */
            const xfer_op_t *oi = &m->r[ci->rank[i]].s->ops[ci->op[i]];
            size_t off = xfer_counts_offset(c0, i), len = xfer_counts_get(c0, i);
            for (j = 0; j < g->size; j++) {
                const xfer_op_t *oj = &m->r[ci->rank[j]].s->ops[ci->op[j]];
                if (j != i)
                    memcpy(m->r[ci->rank[j]].buf[oj->buf] + oj->off + off,
                           m->r[ci->rank[i]].buf[oi->buf] + oi->off + off, len);
            }
        }
        break;
    case XFER_OP_BCAST: {
        int root = o0->peer;
        const xfer_op_t *ro = &m->r[ci->rank[root]].s->ops[ci->op[root]];
        for (j = 0; j < g->size; j++) {
            const xfer_op_t *oj = &m->r[ci->rank[j]].s->ops[ci->op[j]];
            if (j != root)
                memcpy(m->r[ci->rank[j]].buf[oj->buf] + oj->off,
                       m->r[ci->rank[root]].buf[ro->buf] + ro->off, ro->len);
        }
        break;
    }
    case XFER_OP_GATHERV: {
        int root = o0->peer;
        const xfer_op_t *ro = &m->r[ci->rank[root]].s->ops[ci->op[root]];
        for (i = 0; i < g->size; i++) {
            const xfer_op_t *oi = &m->r[ci->rank[i]].s->ops[ci->op[i]];
            if (oi->len != xfer_counts_get(c0, i)) {
                fail(m, XFER_ERR_VERIFY, "gatherv: a member sends a different count");
                return;
            }
            memcpy(m->r[ci->rank[root]].buf[ro->buf2] + ro->off2 + xfer_counts_offset(c0, i),
                   m->r[ci->rank[i]].buf[oi->buf] + oi->off, oi->len);
        }
        break;
    }
    default:
        break;
    }
    m->st.collectives++;
    for (i = 0; i < g->size; i++)
        complete(m, ci->rank[i], ci->op[i]);
}

static void post_coll(sim_t *m, int rank, int op)
{
    const xfer_sched_t *s = m->r[rank].s;
    const xfer_group_t *g = &s->groups[s->ops[op].group];
    const int color = xfer_group_member(g, 0), slot = g->slot + 1;
    uint64_t *seq, *inst, key;
    coll_inst_t *ci;
    int i;

    seq = xfer_hmap_slot(&m->coll_seq,
                         ((uint64_t) rank << 40) | ((uint64_t) slot << 24) | (uint64_t) color);
    if (!seq) {
        fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
        return;
    }
    key = ((uint64_t) slot << 56) | ((uint64_t) color << 32) | (*seq & 0xffffffffu);
    (*seq)++;
    inst = xfer_hmap_slot(&m->coll, key);
    if (!inst) {
        fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
        return;
    }
    if (*inst == 0) {
        if (m->ninsts == m->insts_cap) {
            int cap = m->insts_cap ? m->insts_cap * 2 : 64;
            coll_inst_t *p = xfer_realloc_array(m->insts, (size_t) cap, sizeof(*p));
            if (!p) {
                fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
                return;
            }
            m->insts = p;
            m->insts_cap = cap;
        }
        ci = &m->insts[m->ninsts];
        ci->posted = 0;
        ci->rank = xfer_calloc((size_t) g->size, sizeof(int));
        ci->op = xfer_calloc((size_t) g->size, sizeof(int));
        if (!ci->rank || !ci->op) {
            xfer_free(ci->rank);
            xfer_free(ci->op);
            fail(m, XFER_ERR_NO_MEMORY, "simulator tables");
            return;
        }
        for (i = 0; i < g->size; i++)
            ci->op[i] = -1;
        *inst = (uint64_t) ++m->ninsts;
    }
    ci = &m->insts[*inst - 1];
    if (g->my_index < 0 || g->my_index >= g->size || ci->op[g->my_index] != -1 ||
        xfer_group_member(g, g->my_index) != rank) {
        fail(m, XFER_ERR_VERIFY, "inconsistent group membership in a collective");
        return;
    }
    ci->rank[g->my_index] = rank;
    ci->op[g->my_index] = op;
    ci->posted++;
    if (ci->posted == g->size) {
        run_coll(m, ci, g);
        xfer_hmap_erase(&m->coll, key);
    }
}

static void post(sim_t *m, int rank, int op)
{
    sim_rank_t *R = &m->r[rank];
    const xfer_op_t *o = &R->s->ops[op];

    if (R->opst[op] != ST_IDLE) {
        fail(m, XFER_ERR_INTERNAL, "simulator posted an operation twice");
        return;
    }
    R->opst[op] = ST_POSTED;
    switch (o->kind) {
    case XFER_OP_COPY:
        memmove(R->buf[o->buf2] + o->off2, R->buf[o->buf] + o->off, o->len);
        complete(m, rank, op);
        break;
    case XFER_OP_SEND:
    case XFER_OP_RECV:
        post_p2p(m, rank, op);
        break;
    default:
        post_coll(m, rank, op);
        break;
    }
}

static void describe_stuck(sim_t *m)
{
    char msg[512];
    int rank;
    for (rank = 0; rank < m->N; rank++) {
        sim_rank_t *R = &m->r[rank];
        int i;
        if (R->round >= R->s->nrounds)
            continue;
        for (i = round_begin(R->s, R->round); i < round_end(R->s, R->round); i++)
            if (R->opst[i] == ST_POSTED) {
                const xfer_op_t *o = &R->s->ops[i];
                snprintf(msg, sizeof(msg),
                         "%s/%s: merged rank %d stuck in round %d on %s (peer/root %d, %zu "
                         "bytes)",
                         R->s->algo, R->s->variant, rank, R->round, xfer_op_name(o->kind), o->peer,
                         o->len);
                fail(m, XFER_ERR_DEADLOCK, msg);
                return;
            }
    }
    fail(m, XFER_ERR_DEADLOCK, "schedules stopped with ranks unfinished");
}

static void verify(sim_t *m)
{
    const xfer_shape_t *sh = m->shape;
    char msg[256];
    int rank;

    for (rank = 0; rank < m->N && m->err == XFER_SUCCESS; rank++) {
        const int g = rank < sh->n[0] ? 0 : 1, o = 1 - g;
        const unsigned char *rb = m->r[rank].buf[XFER_BUF_RECV];
        int x;
        for (x = 0; x < sh->n[o]; x++) {
            size_t off = xfer_shape_offset(sh, o, x), len = xfer_shape_count(sh, o, x), i;
            for (i = 0; i < len; i++)
                if (rb[off + i] != xfer_sim_pattern(o, x, i)) {
                    snprintf(msg, sizeof(msg),
                             "rank %d of group %d: byte %zu of remote block %d is wrong",
                             rank - (g ? sh->n[0] : 0), g, i, x);
                    fail(m, XFER_ERR_VERIFY, msg);
                    return;
                }
        }
    }
}

static void sim_free(sim_t *m)
{
    int i, b;
    if (m->r)
        for (i = 0; i < m->N; i++) {
            xfer_sched_destroy(&m->r[i].s);
            for (b = 0; b < XFER_NBUFS; b++)
                xfer_free(m->r[i].buf[b]);
            xfer_free(m->r[i].opst);
        }
    for (i = 0; i < m->ninsts; i++) {
        xfer_free(m->insts[i].rank);
        xfer_free(m->insts[i].op);
    }
    xfer_free(m->insts);
    xfer_free(m->r);
    xfer_free(m->queue);
    xfer_hmap_fini(&m->pair_seq);
    xfer_hmap_fini(&m->posted);
    xfer_hmap_fini(&m->coll_seq);
    xfer_hmap_fini(&m->coll);
}

static xfer_status_t setup_rank(sim_t *m, int rank, xfer_builder_fn build)
{
    const xfer_shape_t *sh = m->shape;
    const int g = rank < sh->n[0] ? 0 : 1, r = g ? rank - sh->n[0] : rank;
    sim_rank_t *R = &m->r[rank];
    xfer_status_t st;
    size_t i;

    st = xfer_sched_create(sh, g, r, &R->s);
    if (st != XFER_SUCCESS)
        return st;
    st = build(sh, R->s);
    if (st != XFER_SUCCESS)
        return st;
    R->buf[XFER_BUF_SEND] = xfer_malloc(R->s->send_bytes);
    R->buf[XFER_BUF_RECV] = xfer_malloc(R->s->recv_bytes);
    R->buf[XFER_BUF_TMP] = xfer_malloc(R->s->tmp_bytes);
    R->opst = xfer_calloc((size_t) R->s->nops, 1);
    if (!R->buf[0] || !R->buf[1] || !R->buf[2] || !R->opst)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "simulator buffers of rank %d", rank);
    for (i = 0; i < R->s->send_bytes; i++)
        R->buf[XFER_BUF_SEND][i] = xfer_sim_pattern(g, r, i);
    memset(R->buf[XFER_BUF_RECV], 0xEE, R->s->recv_bytes);
    memset(R->buf[XFER_BUF_TMP], 0xDD, R->s->tmp_bytes);
    return XFER_SUCCESS;
}

xfer_status_t xfer_sim_run(const xfer_shape_t *shape, xfer_builder_fn build,
                           xfer_sim_stats_t *stats)
{
    sim_t m;
    xfer_status_t st = XFER_SUCCESS;
    int rank, nslots = -1;

    memset(&m, 0, sizeof(m));
    m.shape = shape;
    m.N = shape->n[0] + shape->n[1];
    if (shape->n[0] < 1 || shape->n[1] < 1 || m.N >= (1 << KEY_RANK_BITS))
        return XFER_ERR(XFER_ERR_INVALID_ARG, "simulator shape %d x %d out of range", shape->n[0],
                        shape->n[1]);
    m.r = xfer_calloc((size_t) m.N, sizeof(sim_rank_t));
    if (!m.r || !xfer_hmap_init(&m.pair_seq, 64) || !xfer_hmap_init(&m.posted, 64) ||
        !xfer_hmap_init(&m.coll_seq, 64) || !xfer_hmap_init(&m.coll, 64)) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "simulator state for %d ranks", m.N);
        goto out;
    }
    for (rank = 0; rank < m.N; rank++) {
        XFER_CHECK_GOTO(setup_rank(&m, rank, build), st, out);
        if (nslots >= 0 && m.r[rank].s->nslots != nslots) {
            st = XFER_ERR(XFER_ERR_VERIFY, "%s: ranks disagree on the number of split slots",
                          m.r[rank].s->algo);
            goto out;
        }
        nslots = m.r[rank].s->nslots;
    }
    for (rank = 0; rank < m.N; rank++)
        start_round(&m, rank);
    while (m.qhead < m.qtail && m.err == XFER_SUCCESS) {
        int r = m.queue[m.qhead++], op = m.queue[m.qhead++];
        post(&m, r, op);
    }
    if (m.err == XFER_SUCCESS)
        for (rank = 0; rank < m.N; rank++)
            if (m.r[rank].round < m.r[rank].s->nrounds) {
                describe_stuck(&m);
                break;
            }
    if (m.err == XFER_SUCCESS)
        verify(&m);
    st = m.err;
    if (st == XFER_SUCCESS && stats) {
        memset(stats, 0, sizeof(*stats));
        stats->messages = m.st.messages;
        stats->collectives = m.st.collectives;
        for (rank = 0; rank < m.N; rank++) {
            const sim_rank_t *R = &m.r[rank];
            stats->max_rounds = XFER_MAX(stats->max_rounds, R->s->nrounds);
            stats->max_sent = XFER_MAX(stats->max_sent, R->sent);
            stats->max_recv = XFER_MAX(stats->max_recv, R->recvd);
            stats->max_tmp = XFER_MAX(stats->max_tmp, R->s->tmp_bytes);
            stats->total_sent += R->sent;
        }
    }
out:
    sim_free(&m);
    return st;
}
