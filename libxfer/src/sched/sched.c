/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "sched.h"

int xfer_shape_uniform(const xfer_shape_t *s, int g)
{
    int i;
    if (!s->cnt[g])
        return 1;
    for (i = 1; i < s->n[g]; i++)
        if (s->cnt[g][i] != s->cnt[g][0])
            return 0;
    return 1;
}

/* An empty schedule of rank @p rank with the defaults both kinds share, or NULL. */
static xfer_sched_t *new_sched(int rank, size_t send, size_t recv, const char *unit)
{
    xfer_sched_t *s = xfer_calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->algo = "?";
    s->variant = "";
    s->rank = rank;
    s->send_bytes = send;
    s->recv_bytes = recv;
    s->max_ports = 1;
    s->unit = unit;
    return s;
}

xfer_status_t xfer_sched_create(const xfer_shape_t *shape, int group, int rank, xfer_sched_t **out)
{
    xfer_sched_t *s;

    *out = NULL;
    if (group < 0 || group > 1 || rank < 0 || rank >= shape->n[group])
        return XFER_ERR(XFER_ERR_INVALID_ARG, "no rank %d in group %d of a %d x %d shape", rank,
                        group, shape->n[0], shape->n[1]);
    s = new_sched(rank, xfer_shape_count(shape, group, rank), shape->total[1 - group], "bytes");
    if (!s)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "schedule object");
    s->group = group;
    s->n[0] = shape->n[0];
    s->n[1] = shape->n[1];
    s->shape = shape;
    *out = s;
    return XFER_SUCCESS;
}

xfer_status_t xfer_sched_create_flat(int nranks, int rank, size_t send, size_t recv,
                                     xfer_sched_t **out)
{
    xfer_sched_t *s;

    *out = NULL;
    if (rank < 0 || rank >= nranks)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "no rank %d of %d", rank, nranks);
    s = new_sched(rank, send, recv, "blocks");
    if (!s)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "schedule object");
    s->n[0] = nranks;
    *out = s;
    return XFER_SUCCESS;
}

static void free_counts(xfer_sched_t *s)
{
    int i;
    for (i = 0; i < s->ncounts; i++)
        xfer_free(s->counts[i].v);
    s->ncounts = 0;
}

void xfer_sched_reset(xfer_sched_t *s)
{
    free_counts(s);
    s->nops = s->nrounds = s->ngroups = 0;
    s->tmp_bytes = 0;
    s->nslots = s->nslots_stripe = 0;
    s->ndeps = s->ntasks = s->uses_node = s->npieces = 0;
    s->error = XFER_SUCCESS;
    s->gen = NULL;
    s->gen_max_ops = 0;
    s->max_ports = 1;
    s->ring_only = 0;
}

void xfer_sched_destroy(xfer_sched_t **ps)
{
    xfer_sched_t *s = ps ? *ps : NULL;
    if (!s)
        return;
    free_counts(s);
    xfer_free(s->counts);
    xfer_free(s->ops);
    xfer_free(s->round_start);
    xfer_free(s->groups);
    xfer_free(s->deps);
    xfer_free(s->pieces);
    xfer_free(s);
    *ps = NULL;
}

/* Grow *arr (of *cap elements of @p size) to hold at least @p need; sticky error on failure. */
static int grow(xfer_sched_t *s, void **arr, int *cap, int need, size_t size)
{
    if (xfer_grow_array(arr, cap, need, size))
        return 1;
    if (s->error == XFER_SUCCESS)
        s->error = XFER_ERR(XFER_ERR_NO_MEMORY, "growing a schedule to %d entries", need);
    return 0;
}

/* Rounds are opened lazily: the first op after a round boundary opens one. */
static xfer_op_t *append(xfer_sched_t *s, int kind)
{
    xfer_op_t *op;

    if (s->error != XFER_SUCCESS)
        return NULL;
    if (s->nrounds == 0 || s->round_start[s->nrounds] != -1) {
        /* round_start[nrounds] == -1 marks "current round open" */
        if (!grow(s, (void **) &s->round_start, &s->rounds_cap, s->nrounds + 2, sizeof(int)))
            return NULL;
        s->round_start[s->nrounds] = s->nops;
        s->nrounds++;
        s->round_start[s->nrounds] = -1;
    }
    if (!grow(s, (void **) &s->ops, &s->ops_cap, s->nops + 1, sizeof(xfer_op_t)))
        return NULL;
    op = &s->ops[s->nops++];
    memset(op, 0, sizeof(*op));
    op->kind = (uint8_t) kind;
    op->group = -1;
    op->counts = -1;
    if (kind == XFER_OP_FLAG_WAIT || kind == XFER_OP_FLAG_PUT)
        s->uses_node = 1;
    return op;
}

int xfer_sched_last(const xfer_sched_t *s)
{
    return s->nops - 1;
}

void xfer_sched_dep(xfer_sched_t *s, int dep)
{
    xfer_op_t *op;
    if (dep < 0 || s->error != XFER_SUCCESS || s->nops == 0)
        return;
    op = &s->ops[s->nops - 1];
    if (dep >= s->nops - 1) {
        s->error = XFER_ERR(XFER_ERR_INTERNAL, "%s: operation %d cannot wait for operation %d",
                            s->algo, s->nops - 1, dep);
        return;
    }
    if (op->ndeps == 0)
        op->dep0 = s->ndeps;
    else if (op->dep0 + op->ndeps != s->ndeps) {
        s->error = XFER_ERR(XFER_ERR_INTERNAL, "%s: dependencies of an earlier operation", s->algo);
        return;
    }
    if (!grow(s, (void **) &s->deps, &s->deps_cap, s->ndeps + 1, sizeof(int)))
        return;
    s->deps[s->ndeps++] = dep;
    op->ndeps++;
}

void xfer_sched_lane(xfer_sched_t *s, int lane)
{
    xfer_op_t *op;
    if (s->error != XFER_SUCCESS || s->nops == 0)
        return;
    op = &s->ops[s->nops - 1];
    if ((op->kind != XFER_OP_SEND && op->kind != XFER_OP_RECV) || lane < 0 || lane >= XFER_LANES) {
        s->error = XFER_ERR(XFER_ERR_INTERNAL, "%s: lane %d for a %s operation", s->algo, lane,
                            xfer_op_name(op->kind));
        return;
    }
    op->aux = lane;
}

void xfer_sched_no_barrier(xfer_sched_t *s)
{
    if (s->error == XFER_SUCCESS && s->nops > 0)
        s->ops[s->nops - 1].flags |= XFER_OPF_NO_BARRIER;
}

void xfer_sched_flag_wait(xfer_sched_t *s, int kind, int first, int count, int epoch_offset)
{
    xfer_op_t *op;
    if (count <= 0)
        return;
    op = append(s, XFER_OP_FLAG_WAIT);
    if (!op)
        return;
    op->buf2 = (uint8_t) kind;
    op->peer = first;
    op->len = (size_t) count;
    op->aux = epoch_offset;
}

void xfer_sched_flag_put(xfer_sched_t *s, int kind, int index, int epoch_offset, int on_failure)
{
    xfer_op_t *op = append(s, XFER_OP_FLAG_PUT);
    if (!op)
        return;
    op->buf2 = (uint8_t) kind;
    op->peer = index;
    op->len = 1;
    op->aux = epoch_offset;
    if (on_failure)
        op->flags |= XFER_OPF_ON_FAILURE;
}

void xfer_sched_barrier(xfer_sched_t *s, int comm)
{
    xfer_op_t *op = append(s, XFER_OP_BARRIER);
    if (op)
        op->comm = (uint8_t) comm;
}

void xfer_sched_task(xfer_sched_t *s, int task)
{
    xfer_op_t *op = append(s, XFER_OP_TASK);
    if (!op)
        return;
    op->peer = task;
    if (task >= s->ntasks)
        s->ntasks = task + 1;
}

void xfer_sched_round(xfer_sched_t *s)
{
    if (s->nrounds > 0 && s->round_start[s->nrounds] == -1)
        s->round_start[s->nrounds] = s->nops;
}

void xfer_sched_p2p_on(xfer_sched_t *s, int kind, int comm, int peer, int buf, size_t off,
                       size_t len, int chain)
{
    xfer_op_t *op;

    if (len == 0)
        return; /* zero-byte transfers are skipped; builders skip them on both sides */
    op = append(s, kind);
    if (!op)
        return;
    op->comm = (uint8_t) comm;
    op->peer = peer;
    op->buf = (uint8_t) buf;
    op->off = off;
    op->len = len;
    op->chain = (uint16_t) chain;
}

static int push_piece(xfer_sched_t *s, int buf, size_t off, size_t len)
{
    xfer_piece_t *pc;
    if (!grow(s, (void **) &s->pieces, &s->pieces_cap, s->npieces + 1, sizeof(*s->pieces)))
        return 0;
    pc = &s->pieces[s->npieces++];
    pc->buf = (uint8_t) buf;
    pc->off = off;
    pc->len = len;
    return 1;
}

void xfer_sched_piece(xfer_sched_t *s, int buf, size_t off, size_t len)
{
    xfer_op_t *op;
    if (s->error != XFER_SUCCESS || len == 0)
        return;
    op = s->nops > 0 ? &s->ops[s->nops - 1] : NULL;
    if (!op || (op->kind != XFER_OP_SEND && op->kind != XFER_OP_RECV)) {
        s->error = XFER_ERR(XFER_ERR_INTERNAL, "%s: a piece without a send or receive", s->algo);
        return;
    }
    if (op->npieces == 0) { /* the operation's own range becomes its first piece */
        if (!push_piece(s, op->buf, op->off, op->len))
            return;
        op->piece0 = s->npieces - 1;
        op->npieces = 1;
    } else if (op->piece0 + op->npieces != s->npieces) {
        s->error = XFER_ERR(XFER_ERR_INTERNAL, "%s: pieces of an earlier operation", s->algo);
        return;
    }
    if (!push_piece(s, buf, off, len))
        return;
    op->npieces++;
    op->len += len;
}

void xfer_sched_send(xfer_sched_t *s, int peer, int buf, size_t off, size_t len, int chain)
{
    xfer_sched_p2p_on(s, XFER_OP_SEND, XFER_COMM_MAIN, peer, buf, off, len, chain);
}

void xfer_sched_recv(xfer_sched_t *s, int peer, int buf, size_t off, size_t len, int chain)
{
    xfer_sched_p2p_on(s, XFER_OP_RECV, XFER_COMM_MAIN, peer, buf, off, len, chain);
}

void xfer_sched_copy(xfer_sched_t *s, int src, size_t soff, int dst, size_t doff, size_t len)
{
    xfer_op_t *op;
    if (len == 0)
        return;
    op = append(s, XFER_OP_COPY);
    if (!op)
        return;
    op->buf = (uint8_t) src;
    op->off = soff;
    op->buf2 = (uint8_t) dst;
    op->off2 = doff;
    op->len = len;
    if (src >= XFER_BUF_NODE_S || dst >= XFER_BUF_NODE_S)
        s->uses_node = 1;
}

static int add_group(xfer_sched_t *s, int slot, int nranges, const xfer_range_t *ranges, int me)
{
    xfer_group_t *g;
    int i, size = 0;

    if (s->error != XFER_SUCCESS)
        return -1;
    if (nranges < 1 || nranges > 2) {
        s->error = XFER_ERR(XFER_ERR_INTERNAL, "a group takes 1 or 2 ranges, got %d", nranges);
        return -1;
    }
    if (!grow(s, (void **) &s->groups, &s->groups_cap, s->ngroups + 1, sizeof(xfer_group_t)))
        return -1;
    g = &s->groups[s->ngroups];
    memset(g, 0, sizeof(*g));
    g->slot = slot;
    g->nranges = nranges;
    for (i = 0; i < nranges; i++) {
        g->ranges[i] = ranges[i];
        size += ranges[i].count;
    }
    g->size = size;
    g->my_index = xfer_group_index_of(g, me);
    if (g->my_index < 0) {
        s->error =
            XFER_ERR(XFER_ERR_INTERNAL, "%s: rank %d is not in the group it joins", s->algo, me);
        return -1;
    }
    g->comm = s->group_comm;
    if (slot >= 0 && g->comm == XFER_COMM_STRIPE && slot >= s->nslots_stripe)
        s->nslots_stripe = slot + 1;
    else if (slot >= 0 && g->comm == XFER_COMM_MAIN && slot >= s->nslots)
        s->nslots = slot + 1;
    return s->ngroups++;
}

int xfer_sched_group_local(xfer_sched_t *s, const xfer_shape_t *shape)
{
    xfer_range_t r;
    int i;

    /* One local-group descriptor per schedule is enough. */
    for (i = 0; i < s->ngroups; i++)
        if (s->groups[i].slot == XFER_SLOT_LOCAL && s->groups[i].comm == s->group_comm)
            return i;
    r.start = xfer_merged_rank(shape, s->group, 0);
    r.stride = 1;
    r.count = shape->n[s->group];
    return add_group(s, XFER_SLOT_LOCAL, 1, &r, xfer_merged_rank(shape, s->group, s->rank));
}

int xfer_sched_group(xfer_sched_t *s, int slot, int nranges, const xfer_range_t *ranges)
{
    int me = s->group == 0 ? s->rank : s->n[0] + s->rank;
    if (slot < 0) {
        s->error = XFER_ERR(XFER_ERR_INTERNAL, "split slots are >= 0");
        return -1;
    }
    return add_group(s, slot, nranges, ranges, me);
}

static int add_counts(xfer_sched_t *s, xfer_counts_kind_t kind, int n, size_t k)
{
    xfer_counts_t *c;
    if (s->error != XFER_SUCCESS)
        return -1;
    if (!grow(s, (void **) &s->counts, &s->counts_cap, s->ncounts + 1, sizeof(xfer_counts_t)))
        return -1;
    c = &s->counts[s->ncounts];
    c->kind = kind;
    c->n = n;
    c->k = k;
    c->v = NULL;
    c->m = 0;
    return s->ncounts++;
}

int xfer_sched_counts_uniform(xfer_sched_t *s, int n, size_t k)
{
    return add_counts(s, XFER_COUNTS_UNIFORM, n, k);
}

int xfer_sched_counts_segments(xfer_sched_t *s, int n, size_t total)
{
    return add_counts(s, XFER_COUNTS_SEGMENTS, n, total);
}

int xfer_sched_counts_pieces(xfer_sched_t *s, int P, int Q, size_t k)
{
    int idx = add_counts(s, XFER_COUNTS_PIECES, P, k);
    if (idx >= 0)
        s->counts[idx].m = Q;
    return idx;
}

int xfer_sched_counts_blocks(xfer_sched_t *s, int P, int Q, size_t k)
{
    int idx = add_counts(s, XFER_COUNTS_BLOCKS, Q, k);
    if (idx >= 0)
        s->counts[idx].m = P;
    return idx;
}

int xfer_sched_counts_array(xfer_sched_t *s, int n, size_t **v)
{
    int idx = add_counts(s, XFER_COUNTS_ARRAY, n, 0);
    *v = NULL;
    if (idx < 0)
        return -1;
    s->counts[idx].v = xfer_calloc((size_t) n, sizeof(size_t));
    if (!s->counts[idx].v) {
        s->error = XFER_ERR(XFER_ERR_NO_MEMORY, "counts array of %d entries", n);
        s->ncounts--;
        return -1;
    }
    *v = s->counts[idx].v;
    return idx;
}

static int check_coll(xfer_sched_t *s, int group, int counts)
{
    if (s->error != XFER_SUCCESS)
        return 0;
    if (group < 0 || group >= s->ngroups ||
        (counts != -2 && (counts < 0 || counts >= s->ncounts))) {
        s->error =
            XFER_ERR(XFER_ERR_INTERNAL, "%s: collective with a bad group/counts index", s->algo);
        return 0;
    }
    if (counts >= 0 && s->counts[counts].n != s->groups[group].size) {
        s->error = XFER_ERR(XFER_ERR_INTERNAL, "%s: %d counts for a group of %d", s->algo,
                            s->counts[counts].n, s->groups[group].size);
        return 0;
    }
    return 1;
}

void xfer_sched_allgatherv(xfer_sched_t *s, int group, int counts, int buf, size_t base)
{
    xfer_op_t *op;
    if (!check_coll(s, group, counts) || s->groups[group].size < 2 ||
        xfer_counts_total(&s->counts[counts]) == 0)
        return; /* a single member, or nothing to move: every member skips alike */
    op = append(s, XFER_OP_ALLGATHERV);
    if (!op)
        return;
    op->group = group;
    op->counts = counts;
    op->buf = (uint8_t) buf;
    op->off = base;
    op->len = xfer_counts_total(&s->counts[counts]);
}

void xfer_sched_bcast(xfer_sched_t *s, int group, int root, int buf, size_t off, size_t len)
{
    xfer_op_t *op;
    if (!check_coll(s, group, -2) || s->groups[group].size < 2 || len == 0)
        return;
    op = append(s, XFER_OP_BCAST);
    if (!op)
        return;
    op->group = group;
    op->peer = root;
    op->buf = (uint8_t) buf;
    op->off = off;
    op->len = len;
}

void xfer_sched_gatherv(xfer_sched_t *s, int group, int root, int counts, int sbuf, size_t soff,
                        size_t slen, int rbuf, size_t rbase)
{
    xfer_op_t *op;
    if (!check_coll(s, group, counts) || xfer_counts_total(&s->counts[counts]) == 0)
        return;
    op = append(s, XFER_OP_GATHERV);
    if (!op)
        return;
    op->group = group;
    op->peer = root;
    op->counts = counts;
    op->buf = (uint8_t) sbuf;
    op->off = soff;
    op->len = slen;
    op->buf2 = (uint8_t) rbuf;
    op->off2 = rbase;
}

static size_t buf_size(const xfer_sched_t *s, int buf)
{
    switch (buf) {
    case XFER_BUF_SEND:
        return s->send_bytes;
    case XFER_BUF_RECV:
        return s->recv_bytes;
    case XFER_BUF_TMP:
        return s->tmp_bytes;
    default:
        return s->node_bytes[buf - XFER_BUF_NODE_S];
    }
}

static int in_bounds(const xfer_sched_t *s, int buf, size_t off, size_t len)
{
    size_t size;
    if (buf < 0 || buf >= XFER_NBUFS)
        return 0;
    size = buf_size(s, buf);
    return off <= size && len <= size - off;
}

int xfer_sched_op_in_bounds(const xfer_sched_t *s, const xfer_op_t *op)
{
    int ok;
    if (op->kind == XFER_OP_FLAG_WAIT || op->kind == XFER_OP_FLAG_PUT ||
        op->kind == XFER_OP_BARRIER || op->kind == XFER_OP_TASK)
        return 1; /* no buffer */
    if (op->npieces > 0) {
        if (op->piece0 < 0 || op->piece0 + op->npieces > s->npieces)
            return 0;
        for (int i = op->piece0; i < op->piece0 + op->npieces; i++)
            if (!in_bounds(s, s->pieces[i].buf, s->pieces[i].off, s->pieces[i].len))
                return 0;
        return 1;
    }
    ok = in_bounds(s, op->buf, op->off, op->len);
    if (op->kind == XFER_OP_COPY)
        ok = ok && in_bounds(s, op->buf2, op->off2, op->len);
    if (op->kind == XFER_OP_GATHERV && s->groups[op->group].my_index == op->peer)
        ok = ok && in_bounds(s, op->buf2, op->off2, xfer_counts_total(&s->counts[op->counts]));
    return ok;
}

/* Explicit counts that turned out all equal become UNIFORM: no O(n) array per schedule, and a
 * cheap comparison in the simulator (p = q = 65,536 would otherwise hold 2^17 such arrays). */
static void compact_counts(xfer_sched_t *s)
{
    int i, m;
    for (i = 0; i < s->ncounts; i++) {
        xfer_counts_t *c = &s->counts[i];
        if (c->kind != XFER_COUNTS_ARRAY)
            continue;
        for (m = 1; m < c->n && c->v[m] == c->v[0]; m++)
            ;
        if (m >= c->n) {
            c->k = c->n > 0 ? c->v[0] : 0;
            c->kind = XFER_COUNTS_UNIFORM;
            xfer_free(c->v);
            c->v = NULL;
        }
    }
}

xfer_status_t xfer_sched_finish(xfer_sched_t *s)
{
    int i;

    xfer_sched_round(s);
    if (s->error != XFER_SUCCESS)
        return s->error;
    compact_counts(s);
    for (i = 0; i < s->nops; i++)
        if (!xfer_sched_op_in_bounds(s, &s->ops[i]))
            return s->error = XFER_ERR(
                       XFER_ERR_INTERNAL, "%s/%s: op %d (%s) of rank (%d,%d) overruns its buffer",
                       s->algo, s->variant, i, xfer_op_name(s->ops[i].kind), s->group, s->rank);
    return XFER_SUCCESS;
}

xfer_status_t xfer_sched_round_view(const xfer_sched_t *s, int round, xfer_op_t *scratch,
                                    xfer_round_view_t *v)
{
    if (round < 0 || round >= s->nrounds)
        return XFER_ERR(XFER_ERR_INTERNAL, "round %d of %d", round, s->nrounds);
    if (s->gen) {
        xfer_status_t st;
        int i;
        v->first = -1;
        v->ops = scratch;
        v->n = 0;
        st = s->gen(s, round, scratch, &v->n);
        if (st != XFER_SUCCESS)
            return st;
        for (i = 0; i < v->n; i++)
            if (scratch[i].kind > XFER_OP_COPY || !xfer_sched_op_in_bounds(s, &scratch[i]))
                return XFER_ERR(XFER_ERR_INTERNAL,
                                "%s/%s: generated op %d of round %d (rank %d,%d) is invalid",
                                s->algo, s->variant, i, round, s->group, s->rank);
        return XFER_SUCCESS;
    }
    v->first = s->round_start[round];
    v->ops = s->ops + v->first;
    v->n = s->round_start[round + 1] - v->first;
    return XFER_SUCCESS;
}

int xfer_sched_widest_round(const xfer_sched_t *s)
{
    int i, w = 1;
    if (s->gen)
        return XFER_MAX(s->gen_max_ops, 1);
    for (i = 0; i < s->nrounds; i++)
        w = XFER_MAX(w, s->round_start[i + 1] - s->round_start[i]);
    return w;
}

const char *xfer_buf_name(int buf)
{
    static const char *names[] = {"SEND", "RECV", "TMP", "NODE_S", "NODE_R"};
    return buf >= 0 && buf < XFER_NBUFS ? names[buf] : "?";
}

const char *xfer_op_name(int kind)
{
    static const char *names[] = {"send",    "recv",      "copy",     "allgatherv", "bcast",
                                  "gatherv", "flag-wait", "flag-put", "barrier",    "task"};
    return kind >= 0 && kind <= XFER_OP_TASK ? names[kind] : "?";
}

void xfer_sched_comm_key(const xfer_sched_t *s, int comm, int slot, char *key, size_t keylen)
{
    if (comm == XFER_COMM_STRIPE)
        snprintf(key, keylen, "%s/%d", s->stripe_layout, slot);
    else
        snprintf(key, keylen, "%s/%s/%d", s->algo, s->variant, slot);
}

/* ---- embedding one schedule in another ----------------------------------------------------- */

static int uses_buf(int kind)
{
    return kind <= XFER_OP_GATHERV;
}

xfer_status_t xfer_sched_embed(xfer_sched_t *dst, const xfer_sched_t *src,
                               const xfer_embed_map_t *map)
{
    const int gbase = dst->ngroups, cbase = dst->ncounts, obase = dst->nops;
    xfer_op_t *scratch = NULL;
    int i, r;

    if (dst->error != XFER_SUCCESS)
        return dst->error;
    if (src->gen && !(scratch = xfer_malloc((size_t) src->gen_max_ops * sizeof(xfer_op_t))))
        return dst->error = XFER_ERR(XFER_ERR_NO_MEMORY, "embedding %s", src->algo);
    if (!grow(dst, (void **) &dst->groups, &dst->groups_cap, gbase + src->ngroups,
              sizeof(xfer_group_t)) ||
        !grow(dst, (void **) &dst->counts, &dst->counts_cap, cbase + src->ncounts,
              sizeof(xfer_counts_t)))
        goto out;
    for (i = 0; i < src->ngroups; i++) {
        xfer_group_t *g = &dst->groups[dst->ngroups++];
        *g = src->groups[i];
        g->comm = map->comm;
    }
    /* every rank of the shape makes the same split calls, member of a group or not */
    if (map->comm == XFER_COMM_STRIPE) {
        dst->nslots_stripe = XFER_MAX(dst->nslots_stripe, src->nslots);
        snprintf(dst->stripe_layout, sizeof(dst->stripe_layout), "%s/%s", src->algo, src->variant);
    } else
        dst->nslots = XFER_MAX(dst->nslots, src->nslots);
    dst->max_ports = XFER_MAX(dst->max_ports, src->max_ports); /* its messages in flight */
    for (i = 0; i < src->ncounts; i++) {
        xfer_counts_t *c = &dst->counts[dst->ncounts];
        *c = src->counts[i];
        if (c->v) {
            c->v = xfer_malloc((size_t) c->n * sizeof(size_t));
            if (!c->v) {
                dst->error = XFER_ERR(XFER_ERR_NO_MEMORY, "embedding %s's counts", src->algo);
                goto out;
            }
            memcpy(c->v, src->counts[i].v, (size_t) c->n * sizeof(size_t));
        }
        dst->ncounts++;
    }
    for (r = 0; r < src->nrounds && dst->error == XFER_SUCCESS; r++) {
        xfer_round_view_t v;
        xfer_status_t st = xfer_sched_round_view(src, r, scratch, &v);
        if (st != XFER_SUCCESS) {
            dst->error = st;
            break;
        }
        xfer_sched_round(dst);
        for (i = 0; i < v.n; i++) {
            const xfer_op_t *so = &v.ops[i];
            xfer_op_t *op = append(dst, so->kind);
            int d;
            if (!op)
                break;
            *op = *so;
            op->ndeps = 0;
            if (uses_buf(so->kind)) {
                op->buf = (uint8_t) map->buf[so->buf];
                op->off = so->off + map->base[so->buf];
                if (so->kind == XFER_OP_COPY || so->kind == XFER_OP_GATHERV) {
                    op->buf2 = (uint8_t) map->buf[so->buf2];
                    op->off2 = so->off2 + map->base[so->buf2];
                }
                if (op->buf >= XFER_BUF_NODE_S || op->buf2 >= XFER_BUF_NODE_S)
                    dst->uses_node = 1;
            }
            if (so->kind == XFER_OP_SEND || so->kind == XFER_OP_RECV)
                op->comm = (uint8_t) map->comm;
            op->piece0 = dst->npieces;
            for (d = 0; d < so->npieces; d++) {
                const xfer_piece_t *pc = &src->pieces[so->piece0 + d];
                if (!push_piece(dst, map->buf[pc->buf], pc->off + map->base[pc->buf], pc->len))
                    break;
                if (map->buf[pc->buf] >= XFER_BUF_NODE_S)
                    dst->uses_node = 1;
            }
            if (so->group >= 0)
                op->group = so->group + gbase;
            if (so->counts >= 0)
                op->counts = so->counts + cbase;
            for (d = 0; d < so->ndeps; d++) /* stored sources only: generated ops have none */
                xfer_sched_dep(dst, obase + src->deps[so->dep0 + d]);
        }
    }
    xfer_sched_round(dst);
out:
    xfer_free(scratch);
    return dst->error;
}
