/* SPDX-License-Identifier: BSD-3-Clause */
#include <limits.h>
#include <sched.h>
#include <string.h>

#include "../core/core.h"
#include "exec.h"

static int is_coll(int kind)
{
    return kind == XFER_OP_ALLGATHERV || kind == XFER_OP_BCAST || kind == XFER_OP_GATHERV;
}

static int is_transfer(int kind)
{
    return kind == XFER_OP_SEND || kind == XFER_OP_RECV || is_coll(kind) || kind == XFER_OP_TASK;
}

/* ---- preparation ---------------------------------------------------------------------------- */

/* Does stored op @p i wait for the rounds before its own? */
static int has_barrier(const xfer_exec_t *e, int i)
{
    return !e->s->gen && e->round_of[i] > 0 && !(e->ops[i].flags & XFER_OPF_NO_BARRIER);
}

/* Dependency counts and successor lists of the graph e->ops[0 .. n): explicit dependencies
 * (stored schedules), the previous operation of the same chain in the same round, and the
 * round barrier (counted here, released in advance_rounds). */
static xfer_status_t build_graph(xfer_exec_t *e, const int *round_start, int nrounds)
{
    const xfer_sched_t *s = e->s;
    const int n = e->n;
    int i, r, d, maxchain = 0, *last = NULL, *fill = NULL, *prev = NULL;
    xfer_status_t st = XFER_SUCCESS;

    for (i = 0; i < n; i++)
        maxchain = XFER_MAX(maxchain, e->ops[i].chain);
    last = xfer_malloc(((size_t) maxchain + 1) * sizeof(int));
    prev = xfer_malloc(((size_t) n + 1) * sizeof(int));
    fill = xfer_malloc(((size_t) n + 1) * sizeof(int));
    if (!last || !prev || !fill) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "dependency lists of %d operations", n);
        goto out;
    }
    memset(e->succ0, 0, ((size_t) n + 1) * sizeof(int));
    for (r = 0; r < nrounds; r++) {
        for (i = 0; i <= maxchain; i++)
            last[i] = -1;
        for (i = round_start[r]; i < round_start[r + 1]; i++) {
            const xfer_op_t *op = &e->ops[i];
            prev[i] = op->chain ? last[op->chain] : -1;
            if (op->chain)
                last[op->chain] = i;
            e->npending0[i] = (prev[i] >= 0) + has_barrier(e, i);
            if (prev[i] >= 0)
                e->succ0[prev[i] + 1]++;
            if (!e->s->gen)
                for (d = 0; d < op->ndeps; d++) {
                    const int dep = s->deps[op->dep0 + d];
                    if (dep < 0 || dep >= i) {
                        st = XFER_ERR(XFER_ERR_INTERNAL, "%s: op %d depends on op %d", s->algo, i,
                                      dep);
                        goto out;
                    }
                    e->npending0[i]++;
                    e->succ0[dep + 1]++;
                }
        }
    }
    for (i = 0; i < n; i++)
        e->succ0[i + 1] += e->succ0[i];
    memcpy(fill, e->succ0, (size_t) n * sizeof(int));
    for (i = 0; i < n; i++) {
        const xfer_op_t *op = &e->ops[i];
        if (prev[i] >= 0)
            e->succ[fill[prev[i]]++] = i;
        if (!e->s->gen)
            for (d = 0; d < op->ndeps; d++)
                e->succ[fill[s->deps[op->dep0 + d]]++] = i;
    }
out:
    xfer_free(last);
    xfer_free(prev);
    xfer_free(fill);
    return st;
}

xfer_status_t xfer_exec_init(xfer_exec_t *e, const xfer_sched_t *s, const MPI_Comm comm[],
                             MPI_Comm *gcomm, xfer_exec_task_t *tasks, int tag, int intra)
{
    xfer_status_t st = XFER_SUCCESS;
    const int cap = XFER_MAX(XFER_MAX(s->nops, s->gen ? s->gen_max_ops : 0), 1);
    const size_t edges = (size_t) cap + (size_t) s->ndeps;
    int i, r;

    memset(e, 0, sizeof(*e));
    e->s = s;
    for (i = 0; i < XFER_NCOMMS; i++)
        e->comm[i] = comm[i];
    e->gcomm = gcomm;
    e->tasks = tasks;
    e->tag = tag;
    e->intra = intra;
    e->cap = cap;
    e->succ0 = xfer_malloc(((size_t) cap + 1) * sizeof(int));
    e->succ = xfer_malloc(edges * sizeof(int));
    e->npending0 = xfer_malloc((size_t) cap * sizeof(int));
    e->npending = xfer_malloc((size_t) cap * sizeof(int));
    e->ready = xfer_malloc((size_t) cap * sizeof(int));
    e->live = xfer_malloc((size_t) cap * sizeof(int));
    e->req = xfer_malloc((size_t) cap * sizeof(MPI_Request));
    e->polled = xfer_malloc((size_t) cap * sizeof(int));
    e->deferred = xfer_malloc((size_t) cap * sizeof(int));
    e->indices = xfer_malloc((size_t) cap * sizeof(int));
    e->statuses = xfer_malloc((size_t) cap * sizeof(MPI_Status));
    e->done = xfer_malloc((size_t) cap);
    e->t_poll = xfer_malloc((size_t) cap * sizeof(double));
    e->scratch = s->gen ? xfer_malloc((size_t) cap * sizeof(xfer_op_t)) : NULL;
    e->icounts = xfer_calloc((size_t) XFER_MAX(s->nops, 1), sizeof(int *));
    e->idispls = xfer_calloc((size_t) XFER_MAX(s->nops, 1), sizeof(int *));
    e->round_of = !s->gen ? xfer_malloc((size_t) cap * sizeof(int)) : NULL;
    e->round_left = !s->gen ? xfer_malloc(((size_t) s->nrounds + 1) * sizeof(int)) : NULL;
    for (i = 0; i < XFER_NBUFS; i++) {
        e->unit_type[i] = MPI_BYTE;
        e->unit_count[i] = 1;
        e->unit_stride[i] = 1;
    }
    if (s->npieces > 0) {
        if (!(e->vtype = xfer_malloc((size_t) s->nops * sizeof(MPI_Datatype)))) {
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "datatypes of %d operations", s->nops);
            goto fail;
        }
        for (i = 0; i < s->nops; i++)
            e->vtype[i] = MPI_DATATYPE_NULL;
        e->vstale = 1;
    }
    if (!e->succ0 || !e->succ || !e->npending0 || !e->npending || !e->ready || !e->live ||
        !e->req || !e->polled || !e->deferred || !e->indices || !e->statuses || !e->done ||
        !e->t_poll || (s->gen && !e->scratch) || !e->icounts || !e->idispls ||
        (!s->gen && (!e->round_of || !e->round_left))) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "executor state for %d operations", cap);
        goto fail;
    }
    for (i = 0; i < s->nops; i++) { /* stored operations; generated ones are checked as made */
        const xfer_op_t *op = &s->ops[i];
        if (op->kind <= XFER_OP_GATHERV && op->npieces == 0 && op->len > INT_MAX) {
            st = XFER_ERR(XFER_ERR_TOO_LARGE,
                          "%s/%s: a %s of %zu bytes exceeds MPI's int count limit", s->algo,
                          s->variant, xfer_op_name(op->kind), op->len);
            goto fail;
        }
        if (op->kind == XFER_OP_ALLGATHERV || op->kind == XFER_OP_GATHERV)
            XFER_CHECK_GOTO(xfer_exec_int_counts(e, i), st, fail);
        if (is_coll(op->kind) && (op->group < 0 || gcomm[op->group] == MPI_COMM_NULL)) {
            st = XFER_ERR(XFER_ERR_INTERNAL, "%s: collective without a communicator", s->algo);
            goto fail;
        }
        if ((op->kind == XFER_OP_SEND || op->kind == XFER_OP_RECV || op->kind == XFER_OP_BARRIER) &&
            (op->comm >= XFER_NCOMMS || comm[op->comm] == MPI_COMM_NULL)) {
            st = XFER_ERR(XFER_ERR_INTERNAL, "%s: %s on a communicator this rank lacks", s->algo,
                          xfer_op_name(op->kind));
            goto fail;
        }
        if (op->kind == XFER_OP_TASK && (!tasks || op->peer < 0 || op->peer >= s->ntasks)) {
            st = XFER_ERR(XFER_ERR_INTERNAL, "%s: task %d not provided", s->algo, op->peer);
            goto fail;
        }
    }
    if (!s->gen) { /* one graph for the whole schedule */
        e->ops = s->ops;
        e->n = s->nops;
        for (r = 0; r < s->nrounds; r++)
            for (i = s->round_start[r]; i < s->round_start[r + 1]; i++)
                e->round_of[i] = r;
        XFER_CHECK_GOTO(build_graph(e, s->round_start, s->nrounds), st, fail);
    }
    return XFER_SUCCESS;
fail:
    xfer_exec_fini(e);
    return st;
}

void xfer_exec_fini(xfer_exec_t *e)
{
    int i;
    xfer_exec_free_types(e);
    xfer_free(e->vtype);
    if (e->icounts)
        for (i = 0; i < e->s->nops; i++)
            xfer_free(e->icounts[i]);
    if (e->idispls)
        for (i = 0; i < e->s->nops; i++)
            xfer_free(e->idispls[i]);
    xfer_free(e->icounts);
    xfer_free(e->idispls);
    xfer_free(e->succ0);
    xfer_free(e->succ);
    xfer_free(e->npending0);
    xfer_free(e->npending);
    xfer_free(e->ready);
    xfer_free(e->live);
    xfer_free(e->req);
    xfer_free(e->polled);
    xfer_free(e->deferred);
    xfer_free(e->indices);
    xfer_free(e->statuses);
    xfer_free(e->done);
    xfer_free(e->t_poll);
    xfer_free(e->scratch);
    xfer_free(e->round_of);
    xfer_free(e->round_left);
    memset(e, 0, sizeof(*e));
}

void xfer_exec_bind(xfer_exec_t *e, const void *send, void *recv, void *tmp)
{
    /* SEND is only ever read (MPI_Isend, memcpy source, collective send buffer). */
    e->buf[XFER_BUF_SEND] = (unsigned char *) (uintptr_t) send;
    e->buf[XFER_BUF_RECV] = recv;
    e->buf[XFER_BUF_TMP] = tmp;
    e->vstale = 1;
}

void xfer_exec_remap(xfer_exec_t *e, int buf, const xfer_exec_seg_t *seg, int n)
{
    e->remap[buf] = seg;
    e->nremap[buf] = n;
    e->vstale = 1;
}

void xfer_exec_set_unit(xfer_exec_t *e, int buf, MPI_Datatype type, int count, MPI_Aint stride)
{
    e->unit_type[buf] = type;
    e->unit_count[buf] = count;
    e->unit_stride[buf] = stride;
    e->vstale = 1;
}

void xfer_exec_bind_node(xfer_exec_t *e, xfer_shwin_t *win, long epoch)
{
    e->win = win;
    e->epoch = epoch;
    e->buf[XFER_BUF_NODE_S] = win ? xfer_shwin_S(win, (int) (epoch & 1)) : NULL;
    e->buf[XFER_BUF_NODE_R] = win ? xfer_shwin_R(win, (int) (epoch & 1)) : NULL;
}

/* ---- the graph ------------------------------------------------------------------------------- */

static void make_ready(xfer_exec_t *e, int k)
{
    e->ready[e->nready++] = k;
}

/* Rounds whose operations have all completed release the barrier of the next round. */
static void advance_rounds(xfer_exec_t *e)
{
    const xfer_sched_t *s = e->s;
    while (e->rounds_done < s->nrounds && e->round_left[e->rounds_done] == 0) {
        int i;
        e->rounds_done++;
        if (e->rounds_done == s->nrounds)
            break;
        for (i = s->round_start[e->rounds_done]; i < s->round_start[e->rounds_done + 1]; i++)
            if (has_barrier(e, i) && --e->npending[i] == 0)
                make_ready(e, i);
    }
}

static void complete(xfer_exec_t *e, int k)
{
    const int kind = e->ops[k].kind;
    int j;
    e->done[k] = 1;
    e->left--;
    if (is_transfer(kind))
        e->t_last = MPI_Wtime();
    if (kind == XFER_OP_FLAG_WAIT || kind == XFER_OP_BARRIER)
        e->times.wait_s += MPI_Wtime() - e->t_poll[k];
    if (kind == XFER_OP_BARRIER && e->win)
        MPI_Win_sync(e->win->win); /* the node's stores before the barrier become visible */
    for (j = e->succ0[k]; j < e->succ0[k + 1]; j++)
        if (--e->npending[e->succ[j]] == 0)
            make_ready(e, e->succ[j]);
    if (!e->s->gen) {
        e->round_left[e->round_of[k]]--;
        advance_rounds(e);
    }
}

/* 1 when flags [first, first+count) of the op reached their epoch; an error when a flag carries
 * the failure of the rank that should have published it. */
static xfer_status_t flags_reached(xfer_exec_t *e, int k, int *reached)
{
    const xfer_op_t *op = &e->ops[k];
    const long target = e->epoch + op->aux;
    const int parity = (int) (e->epoch & 1);
    size_t i;

    *reached = 0;
    for (i = 0; i < op->len; i++) {
        const int idx = op->peer + (int) i;
        const long v = xfer_flag_load(e->win, parity, op->buf2, idx);
        if (v >= target)
            continue;
        if (v < 0 && -v >= target)
            return XFER_ERR(XFER_ERR_PEER_FAILED,
                            "node staging: the rank publishing %s flag %d of this node failed in "
                            "call %ld of its staging window (waiting for call %ld)",
                            xfer_flag_name(op->buf2), idx, -v, target);
        return XFER_SUCCESS;
    }
    *reached = 1;
    return XFER_SUCCESS;
}

static xfer_status_t start_op(xfer_exec_t *e, int k)
{
    const xfer_op_t *op = &e->ops[k];
    xfer_status_t st = XFER_SUCCESS;
    MPI_Request *r = &e->req[e->nlive];
    double t;
    int reached;

    const int p2p = op->kind == XFER_OP_SEND || op->kind == XFER_OP_RECV;
    void *ptr = NULL;
    MPI_Datatype type = MPI_BYTE;
    int count = 0;

    if (p2p && op->npieces > 0) { /* a combined message: its struct type from MPI_BOTTOM */
        ptr = MPI_BOTTOM;
        type = e->vtype[k];
        count = 1;
    } else if (p2p) {
        ptr = xfer_exec_addr(e, op->buf, op->off);
        type = e->unit_type[op->buf];
        count = xfer_exec_count(e, op->buf, op->len);
    } else if (op->kind <= XFER_OP_GATHERV &&
               (e->unit_count[op->buf] != 1 || e->unit_type[op->buf] != MPI_BYTE))
        return XFER_ERR(XFER_ERR_INTERNAL, "%s: %s on a buffer of blocks", e->s->algo,
                        xfer_op_name(op->kind));
    if (count < 0 || (!p2p && op->kind <= XFER_OP_GATHERV && op->len > INT_MAX))
        return XFER_ERR(XFER_ERR_TOO_LARGE, "%s: a %s of %zu %s exceeds MPI's int counts",
                        e->s->algo, xfer_op_name(op->kind), op->len, e->s->unit);
    if (is_transfer(op->kind) && e->t_first == 0.0)
        e->t_first = MPI_Wtime();
    switch (op->kind) {
    case XFER_OP_SEND:
        XFER_MPI_GOTO(MPI_Isend(ptr, count, type, op->peer, e->tag + op->aux, e->comm[op->comm], r),
                      st, out);
        e->live[e->nlive++] = k;
        break;
    case XFER_OP_RECV:
        XFER_MPI_GOTO(MPI_Irecv(ptr, count, type, op->peer, e->tag + op->aux, e->comm[op->comm], r),
                      st, out);
        e->live[e->nlive++] = k;
        break;
    case XFER_OP_BARRIER:
        e->t_poll[k] = MPI_Wtime();
        XFER_MPI_GOTO(MPI_Ibarrier(e->comm[op->comm], r), st, out);
        e->live[e->nlive++] = k;
        break;
    case XFER_OP_ALLGATHERV:
    case XFER_OP_BCAST:
    case XFER_OP_GATHERV:
        e->deferred[e->ndeferred++] = k; /* started by progress: blocking there if it can */
        break;
    case XFER_OP_COPY:
        t = MPI_Wtime();
        memmove(e->buf[op->buf2] + op->off2, e->buf[op->buf] + op->off, op->len);
        e->times.intra_s += MPI_Wtime() - t;
        complete(e, k);
        break;
    case XFER_OP_FLAG_PUT:
        xfer_flag_store(e->win, (int) (e->epoch & 1), op->buf2, op->peer, e->epoch + op->aux);
        complete(e, k);
        break;
    case XFER_OP_FLAG_WAIT:
        e->t_poll[k] = MPI_Wtime();
        XFER_CHECK_GOTO(flags_reached(e, k, &reached), st, out);
        if (reached)
            complete(e, k);
        else
            e->polled[e->npolled++] = k;
        break;
    case XFER_OP_TASK:
        if (e->tasks[op->peer].run) { /* started by progress: blocking there if it can */
            e->deferred[e->ndeferred++] = k;
            break;
        }
        XFER_CHECK_GOTO(e->tasks[op->peer].post(e->tasks[op->peer].arg), st, out);
        e->polled[e->npolled++] = k;
        break;
    default:
        st = XFER_ERR(XFER_ERR_INTERNAL, "unknown operation kind %d", op->kind);
    }
out:
    return st;
}

/* Start the ready operations in the order they became ready (first in, first out), which is
 * append order among those one completion releases: two messages to the same peer on the same
 * tag are then posted in schedule order, as MPI's non-overtaking rule and the simulator need.
 * Each operation becomes ready once per run, so e->ready never holds more than the graph. */
static xfer_status_t run_ready(xfer_exec_t *e)
{
    xfer_status_t st = XFER_SUCCESS;
    int head = 0;
    while (head < e->nready && st == XFER_SUCCESS)
        st = start_op(e, e->ready[head++]);
    e->nready = 0;
    return st;
}

/* Load generated round e->gen_round as the graph. */
static xfer_status_t load_round(xfer_exec_t *e)
{
    xfer_round_view_t v;
    int start[2], i;
    xfer_status_t st = xfer_sched_round_view(e->s, e->gen_round, e->scratch, &v);
    if (st != XFER_SUCCESS)
        return st;
    e->ops = v.ops;
    e->n = v.n;
    start[0] = 0;
    start[1] = v.n;
    XFER_CHECK_GOTO(build_graph(e, start, 1), st, out);
    e->left = v.n;
    for (i = 0; i < v.n; i++) {
        e->done[i] = 0;
        e->npending[i] = e->npending0[i];
        if (e->npending[i] == 0)
            make_ready(e, i);
    }
out:
    return st;
}

/* ---- operation ------------------------------------------------------------------------------ */

xfer_status_t xfer_exec_start(xfer_exec_t *e, int timeout_ms)
{
    const xfer_sched_t *s = e->s;
    xfer_status_t st = XFER_SUCCESS;
    int i, r;

    if (e->active)
        return XFER_ERR(XFER_ERR_STATE, "operation already active");
    if (s->uses_node && !e->win)
        return XFER_ERR(XFER_ERR_INTERNAL, "%s: node staging without a window", s->algo);
    if (e->vtype && e->vstale)
        XFER_CHECK_GOTO(xfer_exec_make_types(e), st, out);
    e->active = 1;
    e->timeout_ms = timeout_ms;
    e->deadline = timeout_ms > 0 ? MPI_Wtime() + 1e-3 * timeout_ms : 0.0;
    e->nready = e->nlive = e->npolled = e->ndeferred = 0;
    e->t_first = e->t_last = 0.0;
    memset(&e->times, 0, sizeof(e->times));
    if (s->gen) {
        e->gen_round = 0;
        e->left = 0;
        if (s->nrounds > 0)
            XFER_CHECK_GOTO(load_round(e), st, fail);
    } else {
        e->left = e->n;
        e->rounds_done = 0;
        for (r = 0; r < s->nrounds; r++)
            e->round_left[r] = s->round_start[r + 1] - s->round_start[r];
        for (i = 0; i < e->n; i++) {
            e->done[i] = 0;
            e->npending[i] = e->npending0[i];
        }
        for (i = 0; i < e->n; i++)
            if (e->npending[i] == 0)
                make_ready(e, i);
    }
    XFER_CHECK_GOTO(run_ready(e), st, fail);
    return XFER_SUCCESS;
fail:
    e->active = 0;
out:
    return st;
}

static xfer_status_t timeout_error(xfer_exec_t *e)
{
    const int ng0 = e->s->n[0];
    const xfer_op_t *op = NULL;
    if (e->nlive)
        op = &e->ops[e->live[0]];
    else if (e->npolled)
        op = &e->ops[e->polled[0]];
    if (op && (op->kind == XFER_OP_SEND || op->kind == XFER_OP_RECV) && e->s->n[1] == 0)
        return XFER_ERR(XFER_ERR_TIMEOUT,
                        "%s: no progress within %d ms: %s of %zu %s %s rank %d still pending",
                        e->s->algo, e->timeout_ms, xfer_op_name(op->kind), op->len, e->s->unit,
                        op->kind == XFER_OP_SEND ? "to" : "from", op->peer);
    if (op && (op->kind == XFER_OP_SEND || op->kind == XFER_OP_RECV) && op->comm == XFER_COMM_MAIN)
        return XFER_ERR(XFER_ERR_TIMEOUT,
                        "%s/%s: no progress within %d ms: %s of %zu bytes %s group %d rank %d "
                        "still pending",
                        e->s->algo, e->s->variant, e->timeout_ms, xfer_op_name(op->kind), op->len,
                        op->kind == XFER_OP_SEND ? "to" : "from", op->peer < ng0 ? 0 : 1,
                        op->peer < ng0 ? op->peer : op->peer - ng0);
    if (op && op->kind == XFER_OP_FLAG_WAIT)
        return XFER_ERR(XFER_ERR_TIMEOUT,
                        "%s: node staging: %s flags %d..%d of this node still short of call %ld "
                        "after %d ms: a rank of this node did not arrive",
                        e->s->algo, xfer_flag_name(op->buf2), op->peer,
                        op->peer + (int) op->len - 1, e->epoch + op->aux, e->timeout_ms);
    if (op && op->kind == XFER_OP_TASK)
        return XFER_ERR(XFER_ERR_TIMEOUT, "%s: %s made no progress within %d ms", e->s->algo,
                        e->tasks[op->peer].what, e->timeout_ms);
    return XFER_ERR(XFER_ERR_TIMEOUT, "%s/%s: %s still pending after %d ms", e->s->algo,
                    e->s->variant, op ? xfer_op_name(op->kind) : "an operation", e->timeout_ms);
}

/* Complete what MPI reports done among the live requests (blocking: wait for at least one). */
static xfer_status_t test_live(xfer_exec_t *e, int wait, int *progressed)
{
    xfer_status_t st = XFER_SUCCESS;
    int outcount = 0, i, j;

    if (wait)
        XFER_MPI_GOTO(MPI_Waitsome(e->nlive, e->req, &outcount, e->indices, e->statuses), st, out);
    else
        XFER_MPI_GOTO(MPI_Testsome(e->nlive, e->req, &outcount, e->indices, e->statuses), st, out);
    if (outcount == MPI_UNDEFINED || outcount == 0)
        return XFER_SUCCESS;
    for (i = 0; i < outcount; i++) /* completed ops first, as op ids (compaction moves slots) */
        e->indices[i] = e->live[e->indices[i]];
    for (i = j = 0; i < e->nlive; i++)
        if (e->req[i] != MPI_REQUEST_NULL) {
            e->live[j] = e->live[i];
            e->req[j++] = e->req[i];
        }
    e->nlive = j;
    for (i = 0; i < outcount; i++)
        complete(e, e->indices[i]);
    *progressed = 1;
out:
    return st;
}

static xfer_status_t poll(xfer_exec_t *e, int *progressed)
{
    xfer_status_t st = XFER_SUCCESS;
    int i, j, nd = 0;

    for (i = j = 0; i < e->npolled; i++) {
        const int k = e->polled[i];
        const xfer_op_t *op = &e->ops[k];
        int reached = 0;
        if (op->kind == XFER_OP_FLAG_WAIT)
            st = flags_reached(e, k, &reached);
        else
            st = e->tasks[op->peer].progress(e->tasks[op->peer].arg, &reached);
        if (st != XFER_SUCCESS)
            return st;
        if (reached)
            e->indices[nd++] = k;
        else
            e->polled[j++] = k;
    }
    e->npolled = j;
    for (i = 0; i < nd; i++)
        complete(e, e->indices[i]);
    if (nd)
        *progressed = 1;
    return st;
}

/* After a failure: tasks in flight are told, flags this rank owes its node carry the failure
 * (their waiters return an error instead of waiting for a timeout). MPI requests in flight are
 * abandoned: the communicators of a failed operation must not be used again (coll.h). */
static void fail_op(xfer_exec_t *e)
{
    int i;
    for (i = 0; i < e->npolled; i++)
        if (e->ops[e->polled[i]].kind == XFER_OP_TASK && e->tasks[e->ops[e->polled[i]].peer].abort)
            e->tasks[e->ops[e->polled[i]].peer].abort(e->tasks[e->ops[e->polled[i]].peer].arg);
    if (!e->s->gen && e->win)
        for (i = 0; i < e->n; i++)
            if (e->ops[i].kind == XFER_OP_FLAG_PUT && (e->ops[i].flags & XFER_OPF_ON_FAILURE) &&
                !e->done[i])
                xfer_flag_store(e->win, (int) (e->epoch & 1), e->ops[i].buf2, e->ops[i].peer,
                                -(e->epoch + e->ops[i].aux));
    e->active = 0;
    e->nlive = e->npolled = e->nready = e->ndeferred = 0;
}

xfer_status_t xfer_exec_progress(xfer_exec_t *e, int blocking, int *done)
{
    xfer_status_t st = XFER_SUCCESS;
    const int bounded = e->deadline > 0;

    *done = 0;
    if (!e->active) {
        *done = 1;
        return XFER_SUCCESS;
    }
    for (;;) {
        int progressed = 0, i;

        XFER_CHECK_GOTO(run_ready(e), st, fail);
        if (e->left == 0) {
            if (e->s->gen && e->gen_round + 1 < e->s->nrounds) {
                e->gen_round++;
                XFER_CHECK_GOTO(load_round(e), st, fail);
                continue;
            }
            break;
        }
        if (e->ndeferred > 0) {
            /* A collective that is the only thing to do runs as the blocking MPI call (better
             * tuned than the nonblocking one in both MPICH and Open MPI). */
            if (blocking && !bounded && e->ndeferred == 1 && e->nlive == 0 && e->npolled == 0) {
                const int k = e->deferred[--e->ndeferred];
                if (e->ops[k].kind == XFER_OP_TASK)
                    XFER_CHECK_GOTO(e->tasks[e->ops[k].peer].run(e->tasks[e->ops[k].peer].arg), st,
                                    fail);
                else
                    XFER_CHECK_GOTO(xfer_exec_coll(e, k, NULL), st, fail);
                complete(e, k);
            } else {
                for (i = 0; i < e->ndeferred; i++) {
                    const int k = e->deferred[i];
                    if (e->ops[k].kind == XFER_OP_TASK) {
                        XFER_CHECK_GOTO(e->tasks[e->ops[k].peer].post(e->tasks[e->ops[k].peer].arg),
                                        st, fail);
                        e->polled[e->npolled++] = k;
                        continue;
                    }
                    XFER_CHECK_GOTO(xfer_exec_coll(e, k, &e->req[e->nlive]), st, fail);
                    e->live[e->nlive++] = k;
                }
                e->ndeferred = 0;
            }
            continue;
        }
        if (e->nlive > 0)
            XFER_CHECK_GOTO(test_live(e, 0, &progressed), st, fail);
        if (e->npolled > 0)
            XFER_CHECK_GOTO(poll(e, &progressed), st, fail);
        if (progressed)
            continue;
        if (e->nlive == 0 && e->npolled == 0 && e->nready == 0) {
            st = XFER_ERR(XFER_ERR_INTERNAL, "%s/%s: %d operations wait for nothing that runs",
                          e->s->algo, e->s->variant, e->left);
            goto fail;
        }
        if (!blocking)
            return XFER_SUCCESS;
        if (bounded && MPI_Wtime() > e->deadline) {
            st = timeout_error(e);
            goto fail;
        }
        if (!bounded && e->npolled == 0)
            XFER_CHECK_GOTO(test_live(e, 1, &progressed), st, fail);
        else if (e->npolled > 0)
            sched_yield(); /* the rank we wait for may need this core */
    }
    e->active = 0;
    if (e->t_first > 0.0)
        e->times.inter_s = e->t_last - e->t_first;
    *done = 1;
    return XFER_SUCCESS;
fail:
    fail_op(e);
    return st;
}
