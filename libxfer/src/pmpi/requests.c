/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requests of libxfer_pmpi.so's nonblocking and persistent intercommunicator allgathers, and
 * the MPI calls that start, complete and free requests (design: pmpi.c's opening comment).
 *
 * Every operation is a node of one list. The lock guards the list and the operations' fields;
 * it is never taken inside a callback of the MPI library: the free callback of a generalized
 * request only sets the operation's greq_freed flag, and the next holder of the lock (reap)
 * acts on it. (A callback taking the lock could deadlock against a thread holding it and
 * waiting for the MPI library's own lock.) An operation's memory is freed by reap once the MPI
 * library has freed its generalized request and the program has let go of its handle.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <xfer/xfer.h>

#include "pmpi.h"

typedef struct xp_op {
    struct xp_op *prev, *next;
    xfer_plan_t *plan;     /* NULL once a nonblocking operation has completed */
    MPI_Comm comm;         /* the program's intercommunicator: its error handler */
    const char *fn;        /* the MPI call that made it, for messages */
    MPI_Request handle;    /* what the program holds: the generalized request (nonblocking) or the
                              placeholder (persistent); MPI_REQUEST_NULL once it let go */
    MPI_Request greq;      /* the running or completed activation, else MPI_REQUEST_NULL */
    atomic_int greq_freed; /* the MPI library freed greq (greq_free) */
    int persistent;
    int active;   /* the plan's operation runs */
    int err;      /* MPI error class of the last completed operation */
    int released; /* MPI_Request_free while running: release it when it completes */
} xp_op_t;

_Thread_local int xp_in_engine;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static xp_op_t *ops;    /* every live operation */
static atomic_int nops; /* length of ops: 0 lets every call pass straight through */
static int nactive;     /* operations running */

/* ---- the list ---------------------------------------------------------------------------- */

static void link_op(xp_op_t *op)
{
    op->prev = NULL;
    op->next = ops;
    if (ops)
        ops->prev = op;
    ops = op;
    atomic_fetch_add(&nops, 1);
}

static void unlink_op(xp_op_t *op)
{
    if (op->prev)
        op->prev->next = op->next;
    else
        ops = op->next;
    if (op->next)
        op->next->prev = op->prev;
    atomic_fetch_sub(&nops, 1);
}

/* Act on the MPI library's frees of generalized requests; free the operations nobody holds. */
static void reap(void)
{
    xp_op_t *op, *next;

    for (op = ops; op; op = next) {
        next = op->next;
        if (atomic_load(&op->greq_freed) && !op->active) {
            atomic_store(&op->greq_freed, 0);
            if (!op->persistent)
                op->handle = MPI_REQUEST_NULL; /* it was greq: the value may be reused now */
            op->greq = MPI_REQUEST_NULL;
        }
        if (!op->active && op->greq == MPI_REQUEST_NULL && op->handle == MPI_REQUEST_NULL) {
            unlink_op(op);
            free(op);
        }
    }
}

static void op_lock(void)
{
    (void) pthread_mutex_lock(&lock);
    reap();
}

static void op_unlock(void)
{
    (void) pthread_mutex_unlock(&lock);
}

static xp_op_t *find(MPI_Request r)
{
    xp_op_t *op;
    if (r == MPI_REQUEST_NULL)
        return NULL;
    for (op = ops; op; op = op->next)
        if (op->handle == r)
            return op;
    return NULL;
}

/* Nothing of ours is involved: the MPI library's call, untouched. */
static int passthrough(void)
{
    return xp_in_engine > 0 || atomic_load(&nops) == 0;
}

int xp_busy(void)
{
    int n;
    if (passthrough())
        return 0;
    op_lock();
    n = nactive;
    op_unlock();
    return n > 0;
}

/* ---- generalized requests ----------------------------------------------------------------- */

/* A completed collective's status: empty, as the MPI library's own. */
static int greq_query(void *state, MPI_Status *status)
{
    int rc;
    (void) state;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    rc = PMPI_Status_set_elements(status, MPI_BYTE, 0);
    return rc == MPI_SUCCESS ? PMPI_Status_set_cancelled(status, 0) : rc;
}

/* Called by the MPI library, possibly holding its own lock: no lock here (see the top). */
static int greq_free(void *state)
{
    xp_op_t *op = state;
    atomic_store(&op->greq_freed, 1);
    return MPI_SUCCESS;
}

/* A collective cannot be cancelled: MPI_Test_cancelled then reports false. */
static int greq_cancel(void *state, int complete)
{
    (void) state;
    (void) complete;
    return MPI_SUCCESS;
}

/* ---- operations (lock held) --------------------------------------------------------------- */

/* Start the plan behind a new generalized request. Returns the error class, printed, for the
 * caller to raise once it let go of the lock (an error handler may call MPI). */
static int activate(xp_op_t *op)
{
    xfer_status_t st;
    int rc;

    XP_ENGINE(st = xfer_start(op->plan));
    if (st != XFER_SUCCESS) {
        fprintf(stderr, "libxfer_pmpi: %s failed: %s\n", op->fn, xfer_last_error());
        return xp_error_class(st);
    }
    rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, op, &op->greq);
    if (rc != MPI_SUCCESS) {
        /* the other ranks run the operation: finish it here too before giving up */
        XP_ENGINE(st = xfer_wait(op->plan));
        (void) st;
        op->greq = MPI_REQUEST_NULL;
        fprintf(stderr, "libxfer_pmpi: %s: MPI_Grequest_start failed (%d)\n", op->fn, rc);
        return rc;
    }
    op->active = 1;
    nactive++;
    return MPI_SUCCESS;
}

/* The program is done with @p op (MPI_Request_free, MPI_Finalize): free what it holds; reap
 * frees @p op itself. Not running. Failures are printed here too, for the callers that have
 * nobody to return them to. */
static int release(xp_op_t *op)
{
    MPI_Request r;
    xfer_status_t st = XFER_SUCCESS;
    int rc = MPI_SUCCESS, rc2 = MPI_SUCCESS;

    op->released = 0;
    if (op->greq != MPI_REQUEST_NULL && !atomic_load(&op->greq_freed)) {
        r = op->greq; /* a copy: the MPI library writes MPI_REQUEST_NULL into it */
        rc = PMPI_Request_free(&r);
    }
    if (op->plan)
        XP_ENGINE(st = xfer_plan_free(&op->plan));
    if (st != XFER_SUCCESS)
        fprintf(stderr, "libxfer_pmpi: freeing the plan of %s failed: %s\n", op->fn,
                xfer_last_error());
    if (op->persistent && op->handle != MPI_REQUEST_NULL) {
        r = op->handle;
        rc2 = PMPI_Request_free(&r);
    }
    op->handle = MPI_REQUEST_NULL;
    rc = rc != MPI_SUCCESS ? rc : rc2;
    if (rc != MPI_SUCCESS)
        fprintf(stderr, "libxfer_pmpi: releasing the request of %s failed (%d)\n", op->fn, rc);
    return rc;
}

/* The plan's operation ended (@p st): complete its request. */
static void finish(xp_op_t *op, xfer_status_t st)
{
    int rc;

    op->active = 0;
    nactive--;
    op->err = MPI_SUCCESS;
    if (st != XFER_SUCCESS) {
        op->err = xp_error_class(st);
        fprintf(stderr, "libxfer_pmpi: %s failed: %s\n", op->fn, xfer_last_error());
    }
    if (!op->persistent) {
        XP_ENGINE(st = xfer_plan_free(&op->plan));
        if (st != XFER_SUCCESS)
            fprintf(stderr, "libxfer_pmpi: freeing the plan of %s failed: %s\n", op->fn,
                    xfer_last_error());
    }
    rc = PMPI_Grequest_complete(op->greq);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "libxfer_pmpi: %s: MPI_Grequest_complete failed (%d)\n", op->fn, rc);
        if (op->err == MPI_SUCCESS)
            op->err = rc;
    }
    if (op->released)
        (void) release(op);
}

/* Drive every running operation once, without blocking. */
static void progress_all(void)
{
    xp_op_t *op;

    for (op = ops; op; op = op->next) {
        xfer_status_t st;
        int done = 0;
        if (!op->active)
            continue;
        XP_ENGINE(st = xfer_test(op->plan, &done));
        if (st != XFER_SUCCESS || done)
            finish(op, st);
    }
}

int xp_nonblocking(xfer_plan_t **plan, MPI_Comm comm, const char *fn, MPI_Request *request)
{
    xp_op_t *op = calloc(1, sizeof(*op));
    int rc;

    *request = MPI_REQUEST_NULL;
    if (!op) {
        XP_ENGINE((void) xfer_plan_free(plan));
        fprintf(stderr, "libxfer_pmpi: %s: out of memory\n", fn);
        return xp_raise(comm, MPI_ERR_NO_MEM);
    }
    op->plan = *plan;
    *plan = NULL;
    op->comm = comm;
    op->fn = fn;
    op->handle = op->greq = MPI_REQUEST_NULL;
    op_lock();
    rc = activate(op);
    if (rc == MPI_SUCCESS) {
        op->handle = *request = op->greq;
        link_op(op);
    }
    op_unlock();
    if (rc != MPI_SUCCESS) {
        XP_ENGINE((void) xfer_plan_free(&op->plan));
        free(op);
        return xp_raise(comm, rc);
    }
    return MPI_SUCCESS;
}

int xp_persistent(xfer_plan_t **plan, MPI_Comm comm, const char *fn, MPI_Request *request)
{
    xp_op_t *op = calloc(1, sizeof(*op));
    int rc = MPI_ERR_NO_MEM;

    *request = MPI_REQUEST_NULL;
    if (op)
        rc = PMPI_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &op->handle);
    if (rc != MPI_SUCCESS) {
        XP_ENGINE((void) xfer_plan_free(plan));
        free(op);
        fprintf(stderr, "libxfer_pmpi: %s: no placeholder request (%d)\n", fn, rc);
        return xp_raise(comm, rc);
    }
    op->plan = *plan;
    *plan = NULL;
    op->comm = comm;
    op->fn = fn;
    op->persistent = 1;
    op->greq = MPI_REQUEST_NULL;
    op_lock();
    link_op(op);
    op_unlock();
    *request = op->handle;
    return MPI_SUCCESS;
}

/* ---- starting and freeing ----------------------------------------------------------------- */

/* MPI_Start of @p op; lock held. Returns the class to raise on *@p comm. */
static int start_one(xp_op_t *op, MPI_Comm *comm)
{
    *comm = op->comm;
    if (!op->persistent || op->greq != MPI_REQUEST_NULL) {
        fprintf(stderr, "libxfer_pmpi: MPI_Start: %s\n",
                op->persistent ? "the persistent request is active" : "not a persistent request");
        return MPI_ERR_REQUEST;
    }
    return activate(op);
}

int MPI_Start(MPI_Request *request)
{
    xp_op_t *op;
    MPI_Comm comm = MPI_COMM_NULL;
    int rc = MPI_SUCCESS;

    if (passthrough() || !request)
        return PMPI_Start(request);
    op_lock();
    op = find(*request);
    if (op)
        rc = start_one(op, &comm);
    op_unlock();
    if (!op)
        return PMPI_Start(request);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : xp_raise(comm, rc);
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    int i, rc = MPI_SUCCESS;

    if (passthrough() || count <= 0 || !array_of_requests)
        return PMPI_Startall(count, array_of_requests);
    for (i = 0; i < count && rc == MPI_SUCCESS; i++) {
        MPI_Comm comm = MPI_COMM_NULL;
        xp_op_t *op;
        op_lock();
        op = find(array_of_requests[i]);
        if (op)
            rc = start_one(op, &comm);
        op_unlock();
        if (!op)
            rc = PMPI_Start(&array_of_requests[i]);
        else if (rc != MPI_SUCCESS)
            rc = xp_raise(comm, rc);
    }
    return rc;
}

int MPI_Request_free(MPI_Request *request)
{
    xp_op_t *op;
    int rc = MPI_SUCCESS;

    if (passthrough() || !request)
        return PMPI_Request_free(request);
    op_lock();
    op = find(*request);
    if (op && op->active)
        op->released = 1;
    else if (op)
        rc = release(op);
    op_unlock();
    if (!op)
        return PMPI_Request_free(request);
    *request = MPI_REQUEST_NULL;
    return rc;
}

/* ---- completion calls --------------------------------------------------------------------- */

typedef enum {
    C_WAIT,
    C_TEST,
    C_WAITALL,
    C_TESTALL,
    C_WAITANY,
    C_TESTANY,
    C_WAITSOME,
    C_TESTSOME
} call_kind_t;

/* One of our requests in a completion call's array. What the MPI library may free during the
 * call is copied out first: the operation may be gone afterwards. */
typedef struct mine {
    int i;              /* its index */
    xp_op_t *op;        /* valid until the MPI library's call */
    MPI_Request handle; /* the program's handle (persistent: the placeholder to restore) */
    MPI_Comm comm;
    int persistent;
    int err; /* the class to raise if the call completes it */
} mine_t;

typedef struct ccall {
    call_kind_t kind;
    int n;
    MPI_Request *user; /* the program's array */
    MPI_Request *reqs; /* what the MPI library sees: user, or a copy with the placeholders
                          replaced by their activations */
    int *flag, *index, *outcount, *indices;
    MPI_Status *status, *statuses;
    mine_t *mine;
    int nmine;
} ccall_t;

static int is_wait(call_kind_t k)
{
    return k == C_WAIT || k == C_WAITALL || k == C_WAITANY || k == C_WAITSOME;
}

/* Find our requests in the array; lock held. */
static int prepare(ccall_t *c)
{
    int i, k = 0, npers = 0;

    c->mine = NULL;
    c->nmine = 0;
    c->reqs = c->user;
    for (i = 0; i < c->n; i++) {
        xp_op_t *op = find(c->user[i]);
        c->nmine += op != NULL;
        npers += op && op->persistent;
    }
    if (c->nmine == 0)
        return MPI_SUCCESS;
    c->mine = malloc((size_t) c->nmine * sizeof(*c->mine));
    if (npers && c->mine)
        c->reqs = malloc((size_t) c->n * sizeof(*c->reqs));
    if (!c->mine || !c->reqs) {
        free(c->mine);
        c->mine = NULL;
        c->reqs = c->user;
        fprintf(stderr, "libxfer_pmpi: out of memory in a completion call\n");
        return MPI_ERR_NO_MEM;
    }
    for (i = 0; i < c->n; i++) {
        xp_op_t *op = find(c->user[i]);
        if (npers)
            c->reqs[i] = op && op->persistent ? op->greq : c->user[i];
        if (!op)
            continue;
        c->mine[k].i = i;
        c->mine[k].op = op;
        c->mine[k].handle = op->handle;
        c->mine[k].comm = op->comm;
        c->mine[k].persistent = op->persistent;
        c->mine[k].err = MPI_SUCCESS;
        k++;
    }
    return MPI_SUCCESS;
}

/* Errors of the operations that have completed, before the MPI library may free them. */
static void snapshot(ccall_t *c)
{
    int k;
    for (k = 0; k < c->nmine; k++) {
        const xp_op_t *op = c->mine[k].op;
        c->mine[k].err = op->greq != MPI_REQUEST_NULL && !op->active ? op->err : MPI_SUCCESS;
    }
}

/* The MPI library's call, or (@p blocking 0) its nonblocking form for a Wait: *@p sat tells
 * whether the call is satisfied. */
static int native(ccall_t *c, int blocking, int *sat)
{
    int rc = MPI_SUCCESS;

    *sat = 1;
    switch (c->kind) {
    case C_WAIT:
        rc = blocking ? PMPI_Wait(c->reqs, c->status) : PMPI_Test(c->reqs, sat, c->status);
        break;
    case C_TEST:
        rc = PMPI_Test(c->reqs, c->flag, c->status);
        break;
    case C_WAITALL:
        rc = blocking ? PMPI_Waitall(c->n, c->reqs, c->statuses)
                      : PMPI_Testall(c->n, c->reqs, sat, c->statuses);
        break;
    case C_TESTALL:
        rc = PMPI_Testall(c->n, c->reqs, c->flag, c->statuses);
        break;
    case C_WAITANY:
        rc = blocking ? PMPI_Waitany(c->n, c->reqs, c->index, c->status)
                      : PMPI_Testany(c->n, c->reqs, c->index, sat, c->status);
        break;
    case C_TESTANY:
        rc = PMPI_Testany(c->n, c->reqs, c->index, c->flag, c->status);
        break;
    case C_WAITSOME:
        if (blocking) {
            rc = PMPI_Waitsome(c->n, c->reqs, c->outcount, c->indices, c->statuses);
        } else {
            rc = PMPI_Testsome(c->n, c->reqs, c->outcount, c->indices, c->statuses);
            *sat = rc != MPI_SUCCESS || *c->outcount != 0; /* MPI_UNDEFINED: nothing active */
        }
        break;
    case C_TESTSOME:
        rc = PMPI_Testsome(c->n, c->reqs, c->outcount, c->indices, c->statuses);
        break;
    }
    return rc;
}

/* Did the (successful) call complete entry @p i? */
static int completed(const ccall_t *c, int i)
{
    int k;
    switch (c->kind) {
    case C_WAIT:
    case C_WAITALL:
        return 1;
    case C_TEST:
    case C_TESTALL:
        return *c->flag;
    case C_WAITANY:
        return *c->index == i;
    case C_TESTANY:
        return *c->flag && *c->index == i;
    case C_WAITSOME:
    case C_TESTSOME:
        for (k = 0; *c->outcount != MPI_UNDEFINED && k < *c->outcount; k++)
            if (c->indices[k] == i)
                return 1;
        return 0;
    }
    return 0;
}

/* The error of entry @p i if the call completed it. */
static int entry_error(const ccall_t *c, int i)
{
    int k;
    for (k = 0; k < c->nmine; k++)
        if (c->mine[k].i == i)
            return c->mine[k].err;
    return MPI_SUCCESS;
}

/* Give the program its array back and raise the errors of the operations completed. */
static int conclude(ccall_t *c, int rc)
{
    int k, i, failed = MPI_SUCCESS;

    if (c->reqs != c->user) {
        for (i = 0; i < c->n; i++)
            c->user[i] = c->reqs[i];
        for (k = 0; k < c->nmine; k++)
            if (c->mine[k].persistent)
                c->user[c->mine[k].i] = c->mine[k].handle; /* persistent requests stay */
    }
    if (rc != MPI_SUCCESS)
        return rc;
    for (k = 0; k < c->nmine; k++) {
        if (c->mine[k].err == MPI_SUCCESS || !completed(c, c->mine[k].i))
            continue;
        (void) xp_raise(c->mine[k].comm, c->mine[k].err);
        if (failed == MPI_SUCCESS)
            failed = c->mine[k].err;
    }
    if (failed == MPI_SUCCESS)
        return MPI_SUCCESS;
    switch (c->kind) {
    case C_WAITALL:
    case C_TESTALL:
        for (i = 0; c->statuses != MPI_STATUSES_IGNORE && i < c->n; i++)
            c->statuses[i].MPI_ERROR = entry_error(c, i);
        return MPI_ERR_IN_STATUS;
    case C_WAITSOME:
    case C_TESTSOME:
        for (k = 0; c->statuses != MPI_STATUSES_IGNORE && k < *c->outcount; k++)
            c->statuses[k].MPI_ERROR = entry_error(c, c->indices[k]);
        return MPI_ERR_IN_STATUS;
    default:
        return failed;
    }
}

/* Progress our operations until the call is satisfied (design: pmpi.c). */
static int run(ccall_t *c)
{
    const int wait = is_wait(c->kind);
    int rc, sat = 0, busy;

    op_lock();
    rc = prepare(c);
    if (rc != MPI_SUCCESS) {
        op_unlock();
        return xp_raise(MPI_COMM_WORLD, rc); /* no communicator of its own */
    }
    for (;;) {
        progress_all();
        busy = nactive > 0;
        snapshot(c);
        op_unlock();
        /* An unsatisfied nonblocking call frees nothing: the operations stay valid. */
        rc = native(c, wait && !busy, &sat);
        if (rc != MPI_SUCCESS || sat || !wait)
            break;
        sched_yield(); /* the rank we wait for may need this core */
        op_lock();
    }
    rc = conclude(c, rc);
    if (c->reqs != c->user)
        free(c->reqs);
    free(c->mine);
    return rc;
}

static void init_call(ccall_t *c, call_kind_t kind, int n, MPI_Request *reqs)
{
    c->kind = kind;
    c->n = n;
    c->user = c->reqs = reqs;
    c->flag = c->index = c->outcount = c->indices = NULL;
    c->status = MPI_STATUS_IGNORE;
    c->statuses = MPI_STATUSES_IGNORE;
}

int xp_wait(MPI_Request *request)
{
    ccall_t c;
    init_call(&c, C_WAIT, 1, request);
    return run(&c);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    ccall_t c;
    if (passthrough() || !request)
        return PMPI_Wait(request, status);
    init_call(&c, C_WAIT, 1, request);
    c.status = status;
    return run(&c);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    ccall_t c;
    if (passthrough() || !request || !flag)
        return PMPI_Test(request, flag, status);
    init_call(&c, C_TEST, 1, request);
    c.flag = flag;
    c.status = status;
    return run(&c);
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    ccall_t c;
    if (passthrough() || count <= 0 || !array_of_requests)
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    init_call(&c, C_WAITALL, count, array_of_requests);
    c.statuses = array_of_statuses;
    return run(&c);
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[])
{
    ccall_t c;
    if (passthrough() || count <= 0 || !array_of_requests || !flag)
        return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    init_call(&c, C_TESTALL, count, array_of_requests);
    c.flag = flag;
    c.statuses = array_of_statuses;
    return run(&c);
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
    ccall_t c;
    if (passthrough() || count <= 0 || !array_of_requests || !indx)
        return PMPI_Waitany(count, array_of_requests, indx, status);
    init_call(&c, C_WAITANY, count, array_of_requests);
    c.index = indx;
    c.status = status;
    return run(&c);
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *indx, int *flag,
                MPI_Status *status)
{
    ccall_t c;
    if (passthrough() || count <= 0 || !array_of_requests || !indx || !flag)
        return PMPI_Testany(count, array_of_requests, indx, flag, status);
    init_call(&c, C_TESTANY, count, array_of_requests);
    c.index = indx;
    c.flag = flag;
    c.status = status;
    return run(&c);
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    ccall_t c;
    if (passthrough() || incount <= 0 || !array_of_requests || !outcount || !array_of_indices)
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    init_call(&c, C_WAITSOME, incount, array_of_requests);
    c.outcount = outcount;
    c.indices = array_of_indices;
    c.statuses = array_of_statuses;
    return run(&c);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    ccall_t c;
    if (passthrough() || incount <= 0 || !array_of_requests || !outcount || !array_of_indices)
        return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    init_call(&c, C_TESTSOME, incount, array_of_requests);
    c.outcount = outcount;
    c.indices = array_of_indices;
    c.statuses = array_of_statuses;
    return run(&c);
}

/* Progress, then the MPI library answers for the request (an inactive persistent one as
 * MPI_REQUEST_NULL: flag 1, empty status). Errors surface in the call that completes it. */
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    xp_op_t *op;
    MPI_Request r = request;

    if (passthrough())
        return PMPI_Request_get_status(request, flag, status);
    op_lock();
    progress_all();
    op = find(request);
    if (op && op->persistent)
        r = op->greq;
    op_unlock();
    return PMPI_Request_get_status(r, flag, status);
}

/* Complete what still runs (the peers may be waiting for it), free what the program left. */
int MPI_Finalize(void)
{
    xp_op_t *op, *next;
    int rc;

    if (passthrough())
        return PMPI_Finalize();
    op_lock();
    for (;;) {
        progress_all();
        if (nactive == 0)
            break;
        op_unlock();
        sched_yield();
        op_lock();
    }
    for (op = ops; op; op = op->next)
        (void) release(op);
    reap();
    op_unlock();
    rc = PMPI_Finalize();
    /* The MPI library calls nothing back any more: what it never freed goes now. */
    (void) pthread_mutex_lock(&lock);
    for (op = ops; op; op = next) {
        next = op->next;
        unlink_op(op);
        free(op);
    }
    (void) pthread_mutex_unlock(&lock);
    return rc;
}
