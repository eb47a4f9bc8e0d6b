/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Isomorphic sparse collectives over MPI: neighbourhood creation with its consistency check,
 * algorithm choice, and the executor of iso_sched.h schedules. Each step of a schedule becomes
 * one send and one receive; a step with several parts is described by an MPI struct datatype
 * over absolute addresses (sent from MPI_BOTTOM) built once per request, so no byte is packed
 * or copied by libxfer (seed-isomorphic §8).
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include <xfer/iso.h>

#include "../core/core.h"
#include "../sched/exec.h"
#include "../sched/sched.h"
#include "iso_sched.h"

enum { ISO_MAX_COORD = 1 << 20 };

struct xfer_iso {
    MPI_Comm comm;
    int rank, size;
    xfer_iso_nbh_t nbh;
    int *off; /* owned copy, s * d */
    xfer_iso_counts_t counts;
    int one_node;   /* every process on one shared-memory node */
    int combinable; /* torus and direct apply (no offset moves along an open dimension) */
    int nreqs;      /* live requests */
    int next_tag;   /* requests made so far: each gets its own tag */
    /* schedules built so far, by algorithm and operation: they depend on the offsets only;
     * lowered: this process's schedule of the engine for each */
    xfer_iso_sched_t *scheds[XFER_ISO_NALGOS][2];
    xfer_sched_t *lowered[XFER_ISO_NALGOS][2];
};

struct xfer_iso_req {
    xfer_iso_t *iso;
    const xfer_iso_sched_t *sched; /* the neighbourhood's step list, shared */
    const xfer_sched_t *lowered;   /* this process's schedule of it, shared */
    xfer_exec_t ex;                /* the one executor, bound to this request's buffers */
    int has_ex;                    /* ex initialised (not for empty blocks) */
    void *tmp;
    int tag, timeout_ms, rounds;
    int active, broken;
    const char *algo;
};

/* ---- options --------------------------------------------------------------------------------- */

xfer_status_t xfer_iso_opts_init(xfer_iso_opts_t *opts)
{
    if (!opts)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "opts is NULL");
    memset(opts, 0, sizeof(*opts));
    opts->timeout_ms = -1;
    opts->one_node = -1;
    return XFER_SUCCESS;
}

/* ---- creation -------------------------------------------------------------------------------- */

/* The neighbourhood the arguments describe, in @p n (which points at @p offsets), checked
 * locally: a recorded message when they cannot describe one. *@p procs is the product of the
 * extents, counted up to the first one that takes it past @p cap. */
static xfer_status_t nbh_from_args(int ndims, const int dims[], const int periods[], int s,
                                   const int offsets[], long cap, xfer_iso_nbh_t *n, long *procs)
{
    long p = 1;
    if (ndims < 1 || ndims > XFER_ISO_MAXDIMS)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "ndims %d: must be 1 to %d", ndims, XFER_ISO_MAXDIMS);
    if (!dims)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "dims is NULL");
    if (s < 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "s = %d offsets: must not be negative", s);
    if (s > 0 && !offsets)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "offsets is NULL for s = %d", s);
    memset(n, 0, sizeof(*n));
    n->d = ndims;
    n->s = s;
    n->off = offsets;
    for (int j = 0; j < ndims; j++) {
        if (dims[j] < 1)
            return XFER_ERR(XFER_ERR_INVALID_ARG, "dims[%d] = %d: extents must be positive", j,
                            dims[j]);
        n->dims[j] = dims[j];
        n->periods[j] = periods ? periods[j] != 0 : 1;
        if (p <= cap)
            p *= dims[j];
    }
    *procs = p;
    for (long i = 0; i < (long) s * ndims; i++)
        if (offsets[i] <= -ISO_MAX_COORD || offsets[i] >= ISO_MAX_COORD)
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "offset %ld coordinate %ld = %d: magnitude must stay below %d",
                            i / ndims, i % ndims, offsets[i], ISO_MAX_COORD);
    return XFER_SUCCESS;
}

xfer_status_t xfer_iso_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                              int s, const int offsets[], xfer_iso_t **iso)
{
    xfer_status_t st = XFER_SUCCESS, local;
    int inter = 0, size = 0, rank = 0;
    unsigned long long v[3], h = XFER_FNV_OFFSET;
    unsigned long long *all = NULL;
    xfer_iso_t *x = NULL;
    xfer_iso_nbh_t nbh;
    long procs = 0;

    if (iso)
        *iso = NULL;
    if (comm == MPI_COMM_NULL)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "comm is MPI_COMM_NULL");
    XFER_MPI_GOTO(MPI_Comm_test_inter(comm, &inter), st, fail);
    if (inter)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "isomorphic neighbourhoods need an intracommunicator (merge the "
                        "intercommunicator first)");
    XFER_MPI_GOTO(MPI_Comm_size(comm, &size), st, fail);
    XFER_MPI_GOTO(MPI_Comm_rank(comm, &rank), st, fail);

    /* Every process takes part in the agreement below whatever its own arguments, so a bad
     * argument on one process is an error everywhere instead of a hang. */
    local = iso ? nbh_from_args(ndims, dims, periods, s, offsets, size, &nbh, &procs)
                : XFER_ERR(XFER_ERR_INVALID_ARG, "iso is NULL");
    if (local == XFER_SUCCESS && procs != size)
        local = XFER_ERR(XFER_ERR_INVALID_ARG,
                         "the torus extents multiply to %ld%s, the communicator has %d processes",
                         procs, procs > size ? " or more" : "", size);
    if (local == XFER_SUCCESS) {
        h = xfer_fnv1a_u64(h, (uint64_t) ndims);
        for (int j = 0; j < ndims; j++)
            h = xfer_fnv1a_u64(xfer_fnv1a_u64(h, (uint64_t) nbh.dims[j]),
                               (uint64_t) nbh.periods[j]);
        h = xfer_fnv1a_u64(h, (uint64_t) s);
        for (long i = 0; i < (long) s * ndims; i++)
            h = xfer_fnv1a_u64(h, (uint64_t) nbh.off[i]);
    }
    v[0] = h;
    v[1] = ~h;
    v[2] = local != XFER_SUCCESS;
    XFER_MPI_GOTO(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm), st,
                  fail);
    if (local != XFER_SUCCESS)
        return local;
    if (v[2])
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "another process passed invalid arguments to xfer_iso_create");
    if (v[0] != h || v[1] != ~h) {
        int first = -1;
        if (!(all = xfer_malloc(sizeof(*all) * (size_t) size)))
            return XFER_ERR(XFER_ERR_NO_MEMORY, "hash table of %d processes", size);
        XFER_MPI_GOTO(
            MPI_Allgather(&h, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, comm), st,
            fail);
        for (int r = 1; r < size && first < 0; r++)
            if (all[r] != all[0])
                first = r;
        xfer_free(all);
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "the torus or offset list of rank %d differs from rank 0's: all processes "
                        "must pass the same dims, periods and offsets in the same order",
                        first);
    }

    if (!(x = xfer_calloc(1, sizeof(*x))) ||
        !(x->off = xfer_malloc(sizeof(int) * ((size_t) s * (size_t) ndims + 1)))) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "neighbourhood of %d offsets", s);
        goto fail;
    }
    x->comm = MPI_COMM_NULL;
    x->rank = rank;
    x->size = size;
    x->nbh = nbh;
    if (s > 0)
        memcpy(x->off, offsets, sizeof(int) * (size_t) s * (size_t) ndims);
    x->nbh.off = x->off;
    XFER_CHECK_GOTO(xfer_iso_counts(&x->nbh, &x->counts), st, fail);
    x->combinable = xfer_iso_need_periodic(&x->nbh, "torus") == XFER_SUCCESS;
    if (!x->combinable)
        xfer_clear_error();
    XFER_MPI_GOTO(MPI_Comm_dup(comm, &x->comm), st, fail);
    {
        MPI_Comm node;
        int nsize = 0;
        XFER_MPI_GOTO(MPI_Comm_split_type(x->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
                      st, fail_comm);
        if (MPI_Comm_size(node, &nsize) != MPI_SUCCESS)
            nsize = 0;
        XFER_MPI_GOTO(MPI_Comm_free(&node), st, fail_comm);
        x->one_node = nsize == size;
    }
    *iso = x;
    return XFER_SUCCESS;
fail_comm:
    MPI_Comm_free(&x->comm);
fail:
    if (x) {
        xfer_free(x->off);
        xfer_free(x);
    }
    return st;
}

xfer_status_t xfer_iso_free(xfer_iso_t **iso)
{
    xfer_status_t st = XFER_SUCCESS;
    xfer_iso_t *x;
    if (!iso || !*iso)
        return XFER_SUCCESS;
    x = *iso;
    if (x->nreqs > 0)
        return XFER_ERR(XFER_ERR_STATE, "%d request(s) of this neighbourhood are still live",
                        x->nreqs);
    if (x->comm != MPI_COMM_NULL)
        XFER_MPI_GOTO(MPI_Comm_free(&x->comm), st, out);
out:
    for (int a = 0; a < XFER_ISO_NALGOS; a++)
        for (int op = 0; op < 2; op++) {
            if (x->scheds[a][op])
                xfer_iso_sched_fini(x->scheds[a][op]);
            xfer_free(x->scheds[a][op]);
            xfer_sched_destroy(&x->lowered[a][op]);
        }
    xfer_free(x->off);
    xfer_free(x);
    *iso = NULL;
    return st;
}

xfer_status_t xfer_iso_get_info(const xfer_iso_t *iso, xfer_iso_info_t *info)
{
    if (!iso || !info)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "%s is NULL", iso ? "info" : "iso");
    info->s = iso->counts.s;
    info->D = iso->counts.D;
    info->V = iso->counts.V;
    info->W = iso->counts.W;
    info->direct_rounds = iso->counts.direct_rounds;
    info->direct_V = iso->counts.direct_V;
    info->direct_W = iso->counts.direct_W;
    return XFER_SUCCESS;
}

/* ---- algorithm choice ------------------------------------------------------------------------ */

/* The alpha-beta cost of each algorithm for blocks of @p m bytes; the cheapest that applies
 * (torus and direct need periodic dimensions where offsets move). */
static const char *choose(const xfer_iso_t *x, int op, double m, double alpha, double beta,
                          int one_node)
{
    const xfer_iso_counts_t *c = &x->counts;
    double straight = c->s * (alpha + beta * m), torus, direct;
    long tv = op == XFER_ISO_OP_ALLTOALL ? c->V : c->W;
    long dv = op == XFER_ISO_OP_ALLTOALL ? c->direct_V : c->direct_W;
    const char *best = "posted"; /* above the cut-off: all exchanges at once, as MPI does */
    double cost = straight;
    if (one_node || !x->combinable)
        return best;
    torus = c->D * alpha + (double) tv * beta * m;
    direct = c->direct_rounds * alpha + (double) dv * beta * m;
    if (torus < cost)
        best = "torus", cost = torus;
    if (direct < cost) /* for offsets of at most one hop it is the torus schedule: keep that */
        best = "direct";
    return best;
}

/* ---- requests -------------------------------------------------------------------------------- */

/* The schedule of algorithm @p name for @p op, built on first use and kept with @p x (every
 * request of the same algorithm and operation runs the same one), and this process's lowering
 * of it to the engine. */
static xfer_status_t cached_sched(xfer_iso_t *x, const char *name, int op,
                                  const xfer_iso_sched_t **out, const xfer_sched_t **lowered)
{
    xfer_iso_sched_t sc, *keep;
    xfer_status_t st;
    int a;
    for (a = 0; a < XFER_ISO_NALGOS; a++)
        if (x->scheds[a][op] && strcmp(x->scheds[a][op]->algo, name) == 0)
            break;
    if (a == XFER_ISO_NALGOS) {
        if ((st = xfer_iso_sched_build(&x->nbh, name, op, &sc)) != XFER_SUCCESS)
            return st;
        if (!(keep = xfer_malloc(sizeof(*keep)))) {
            xfer_iso_sched_fini(&sc);
            return XFER_ERR(XFER_ERR_NO_MEMORY, "isomorphic schedule");
        }
        *keep = sc;
        a = sc.algo_id;
        x->scheds[a][op] = keep;
    }
    if (!x->lowered[a][op] && (st = xfer_iso_lower(&x->nbh, x->scheds[a][op], x->rank,
                                                   &x->lowered[a][op])) != XFER_SUCCESS)
        return st;
    *out = x->scheds[a][op];
    *lowered = x->lowered[a][op];
    return XFER_SUCCESS;
}

static void req_release(xfer_iso_req_t *r)
{
    if (r->has_ex)
        xfer_exec_fini(&r->ex);
    xfer_free(r->tmp);
    xfer_free(r);
}

static xfer_status_t req_init(int op, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                              int rcount, MPI_Datatype rtype, xfer_iso_t *iso,
                              const xfer_iso_opts_t *opts, int agree, xfer_iso_req_t **req)
{
    xfer_status_t st = XFER_SUCCESS;
    xfer_iso_req_t *r = NULL;
    const char *name =
        opts && opts->algorithm ? opts->algorithm : xfer_env_str("XFER_ISO_ALGORITHM");
    int ssize = 0, rsize = 0, r_tag;
    MPI_Aint lb, sext, rext, tlb, text;
    double m, alpha, beta;

    if (req)
        *req = NULL;
    if (!iso || !req)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "%s is NULL", iso ? "req" : "iso");
    /* Local checks and the schedule first; with @p agree every process then takes part in one
     * agreement, so that a bad argument or a different choice on one process is an error on
     * all of them instead of a hang. */
    if (scount < 0 || rcount < 0)
        st =
            XFER_ERR(XFER_ERR_INVALID_ARG, "negative count (scount %d, rcount %d)", scount, rcount);
    else if (stype == MPI_DATATYPE_NULL || rtype == MPI_DATATYPE_NULL)
        st = XFER_ERR(XFER_ERR_INVALID_ARG, "%s is MPI_DATATYPE_NULL",
                      stype == MPI_DATATYPE_NULL ? "stype" : "rtype");
    else if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
        st = XFER_ERR(XFER_ERR_INVALID_ARG,
                      "MPI_IN_PLACE is not allowed (as for MPI_Neighbor_alltoall/allgather)");
    if (st == XFER_SUCCESS) {
        int rc = MPI_Type_size(stype, &ssize);
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_size(rtype, &rsize);
        if (rc != MPI_SUCCESS)
            st = xfer_err_mpi(rc, __func__, "MPI_Type_size");
        else if ((long long) ssize * scount != (long long) rsize * rcount)
            st = XFER_ERR(XFER_ERR_INVALID_ARG,
                          "send block is %lld bytes, receive block %lld: they must match",
                          (long long) ssize * scount, (long long) rsize * rcount);
    }
    m = (double) rsize * rcount;
    if (st == XFER_SUCCESS) {
        alpha = opts && opts->alpha > 0 ? opts->alpha : xfer_env_double("XFER_ALPHA", 2e-6);
        beta = opts && opts->beta > 0 ? opts->beta : xfer_env_double("XFER_BETA", 1e-10);
        if (!name || strcmp(name, "auto") == 0)
            name = choose(iso, op, m, alpha, beta,
                          opts && opts->one_node >= 0 ? opts->one_node : iso->one_node);
        if (!(r = xfer_calloc(1, sizeof(*r))))
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "isomorphic request");
    }
    if (st == XFER_SUCCESS) {
        r->iso = iso;
        r->timeout_ms = opts && opts->timeout_ms >= 0 ? opts->timeout_ms
                                                      : (int) xfer_env_long("XFER_TIMEOUT_MS", 0);
        st = cached_sched(iso, name, op, &r->sched, &r->lowered);
    }
    r_tag = iso->next_tag++ % 32000;
    if (agree) {
        long v[5] = {0, 0, (long) m, -(long) m, st != XFER_SUCCESS};
        if (st == XFER_SUCCESS)
            v[0] = r->sched->algo_id, v[1] = -v[0];
        XFER_MPI_GOTO(MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_LONG, MPI_MAX, iso->comm), st, fail);
        if (st == XFER_SUCCESS && v[4])
            st = XFER_ERR(XFER_ERR_INVALID_ARG,
                          "another process failed to set up this isomorphic operation");
        else if (st == XFER_SUCCESS && (v[0] != -v[1] || v[2] != -v[3]))
            st = XFER_ERR(XFER_ERR_MISMATCH,
                          "processes chose different isomorphic algorithms or block sizes (give "
                          "the same algorithm, XFER_ALPHA and XFER_BETA everywhere)");
    }
    if (st != XFER_SUCCESS)
        goto fail;
    r->tag = r_tag;
    r->algo = r->sched->algo;
    r->rounds = xfer_iso_sched_rounds(r->sched);
    if (m == 0) { /* empty blocks: nothing moves */
        iso->nreqs++;
        *req = r;
        return XFER_SUCCESS;
    }

    /* Blocks: scount elements of stype in SEND, rcount of rtype in RECV and TMP, consecutive
     * blocks one block's extent apart (TMP holds ntmp of them from its true lower bound). */
    XFER_MPI_GOTO(MPI_Type_get_extent(stype, &lb, &sext), st, fail);
    XFER_MPI_GOTO(MPI_Type_get_extent(rtype, &lb, &rext), st, fail);
    XFER_MPI_GOTO(MPI_Type_get_true_extent(rtype, &tlb, &text), st, fail);
    if (r->sched->ntmp > 0) {
        size_t bytes = 0, stride = (size_t) (rext * rcount), body;
        if (rext < 0 || text < 0 || !xfer_mul_size(stride, (size_t) r->sched->ntmp - 1, &body) ||
            (bytes = body + (size_t) ((rcount - 1) * rext + text)) < body ||
            !(r->tmp = xfer_malloc(XFER_MAX(bytes, 1)))) {
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "scratch of %d blocks of %ld bytes", r->sched->ntmp,
                          (long) (rext * rcount));
            goto fail;
        }
    }
    {
        const MPI_Comm comms[XFER_NCOMMS] = {iso->comm, MPI_COMM_NULL, MPI_COMM_NULL};
        XFER_CHECK_GOTO(
            xfer_exec_init(&r->ex, r->lowered, comms, NULL, NULL, r->tag, XFER_INTRA_MPI), st,
            fail);
    }
    r->has_ex = 1;
    xfer_exec_set_unit(&r->ex, XFER_BUF_SEND, stype, scount, sext * scount);
    xfer_exec_set_unit(&r->ex, XFER_BUF_RECV, rtype, rcount, rext * rcount);
    xfer_exec_set_unit(&r->ex, XFER_BUF_TMP, rtype, rcount, rext * rcount);
    xfer_exec_bind(&r->ex, sbuf, rbuf, r->tmp ? (char *) r->tmp - tlb : NULL);
    iso->nreqs++;
    *req = r;
    return XFER_SUCCESS;
fail:
    if (r)
        req_release(r);
    return st;
}

xfer_status_t xfer_iso_start(xfer_iso_req_t *r)
{
    xfer_status_t st = XFER_SUCCESS;
    if (!r)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "req is NULL");
    if (r->broken)
        return XFER_ERR(XFER_ERR_STATE, "an earlier operation of this request failed; free it");
    if (r->active)
        return XFER_ERR(XFER_ERR_STATE, "the request is already active (xfer_iso_wait first)");
    if (r->has_ex)
        st = xfer_exec_start(&r->ex, r->timeout_ms > 0 ? r->timeout_ms : 0);
    if (st != XFER_SUCCESS)
        r->broken = 1;
    else
        r->active = 1;
    return st;
}

/* Progress the active operation of @p r (to the end with @p blocking); *@p done when over. */
static xfer_status_t drive(xfer_iso_req_t *r, int blocking, int *done)
{
    xfer_status_t st = XFER_SUCCESS;
    *done = 1;
    if (r->has_ex)
        st = xfer_exec_progress(&r->ex, blocking, done);
    if (st != XFER_SUCCESS)
        r->broken = 1, *done = 1;
    if (*done)
        r->active = 0;
    return st;
}

xfer_status_t xfer_iso_wait(xfer_iso_req_t *r)
{
    int done;
    if (!r)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "req is NULL");
    if (!r->active)
        return XFER_ERR(XFER_ERR_STATE, "the request is not active (xfer_iso_start first)");
    return drive(r, 1, &done);
}

xfer_status_t xfer_iso_test(xfer_iso_req_t *r, int *flag)
{
    if (flag)
        *flag = 0;
    if (!r || !flag)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "%s is NULL", r ? "flag" : "req");
    if (!r->active)
        return XFER_ERR(XFER_ERR_STATE, "the request is not active (xfer_iso_start first)");
    return drive(r, 0, flag);
}

xfer_status_t xfer_iso_req_free(xfer_iso_req_t **req)
{
    xfer_iso_req_t *r;
    if (!req || !*req)
        return XFER_SUCCESS;
    r = *req;
    if (r->active)
        return XFER_ERR(XFER_ERR_STATE, "the request is active (xfer_iso_wait first)");
    r->iso->nreqs--;
    req_release(r);
    *req = NULL;
    return XFER_SUCCESS;
}

xfer_status_t xfer_iso_req_algorithm(const xfer_iso_req_t *req, const char **name, int *rounds)
{
    if (!req)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "req is NULL");
    if (name)
        *name = req->algo;
    if (rounds)
        *rounds = req->rounds;
    return XFER_SUCCESS;
}

xfer_status_t xfer_iso_alltoall_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                     int rcount, MPI_Datatype rtype, xfer_iso_t *iso,
                                     const xfer_iso_opts_t *opts, xfer_iso_req_t **req)
{
    return req_init(XFER_ISO_OP_ALLTOALL, sbuf, scount, stype, rbuf, rcount, rtype, iso, opts, 1,
                    req);
}

xfer_status_t xfer_iso_allgather_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                      int rcount, MPI_Datatype rtype, xfer_iso_t *iso,
                                      const xfer_iso_opts_t *opts, xfer_iso_req_t **req)
{
    return req_init(XFER_ISO_OP_ALLGATHER, sbuf, scount, stype, rbuf, rcount, rtype, iso, opts, 1,
                    req);
}

static xfer_status_t once(int op, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          int rcount, MPI_Datatype rtype, xfer_iso_t *iso,
                          const xfer_iso_opts_t *opts)
{
    xfer_iso_req_t *r = NULL;
    xfer_status_t st = req_init(op, sbuf, scount, stype, rbuf, rcount, rtype, iso, opts, 0, &r);
    if (st == XFER_SUCCESS)
        st = xfer_iso_start(r);
    if (st == XFER_SUCCESS)
        st = xfer_iso_wait(r);
    xfer_iso_req_free(&r); /* a failed start or wait leaves it inactive */
    return st;
}

xfer_status_t xfer_iso_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                int rcount, MPI_Datatype rtype, xfer_iso_t *iso,
                                const xfer_iso_opts_t *opts)
{
    return once(XFER_ISO_OP_ALLTOALL, sbuf, scount, stype, rbuf, rcount, rtype, iso, opts);
}

xfer_status_t xfer_iso_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                 int rcount, MPI_Datatype rtype, xfer_iso_t *iso,
                                 const xfer_iso_opts_t *opts)
{
    return once(XFER_ISO_OP_ALLGATHER, sbuf, scount, stype, rbuf, rcount, rtype, iso, opts);
}

/* ---- neighbourhoods and simulation (no MPI) -------------------------------------------------- */

xfer_status_t xfer_iso_stencil(xfer_iso_stencil_t kind, int ndims, int radius, int max,
                               int offsets[], int *s)
{
    const int lo = kind == XFER_ISO_MOORE_POSITIVE ? 0 : -radius, w = radius - lo + 1;
    long total = 1;
    int n = 0, c[XFER_ISO_MAXDIMS];
    if (!s ||
        (kind != XFER_ISO_MOORE && kind != XFER_ISO_MOORE_POSITIVE && kind != XFER_ISO_VON_NEUMANN))
        return XFER_ERR(XFER_ERR_INVALID_ARG, "%s", s ? "unknown stencil kind" : "s is NULL");
    if (ndims < 1 || ndims > XFER_ISO_MAXDIMS || radius < 1 || radius >= ISO_MAX_COORD)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "stencil: ndims %d (1 to %d), radius %d (>= 1)",
                        ndims, XFER_ISO_MAXDIMS, radius);
    for (int j = 0; j < ndims; j++) {
        total *= w;
        if (total > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE, "stencil of radius %d in %d dimensions", radius,
                            ndims);
    }
    for (long k = 0; k < total; k++) {
        long x = k;
        int nz = 0;
        for (int j = 0; j < ndims; j++, x /= w) {
            c[j] = (int) (x % w) + lo;
            nz += c[j] != 0;
        }
        if (nz == 0 || (kind == XFER_ISO_VON_NEUMANN && nz != 1))
            continue;
        if (n < max && offsets)
            memcpy(&offsets[n * ndims], c, sizeof(int) * (size_t) ndims);
        n++;
    }
    *s = n;
    if (n > max || (n > 0 && !offsets))
        return XFER_ERR(XFER_ERR_TOO_LARGE, "stencil: %d offsets, room for %d", n,
                        offsets ? max : 0);
    return XFER_SUCCESS;
}

xfer_status_t xfer_iso_simulate(const char *algorithm, int allgather, int ndims, const int dims[],
                                const int periods[], int s, const int offsets[], int *rounds,
                                long *volume)
{
    xfer_iso_nbh_t n;
    xfer_iso_sched_t sc;
    long p = 0;
    xfer_status_t st = nbh_from_args(ndims, dims, periods, s, offsets, 1L << 20, &n, &p);
    if (st != XFER_SUCCESS)
        return st;
    if (!algorithm)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "algorithm is NULL");
    if (p > (1L << 20))
        return XFER_ERR(XFER_ERR_TOO_LARGE, "more than 2^20 processes to simulate");
    st = xfer_iso_sched_build(&n, algorithm,
                              allgather ? XFER_ISO_OP_ALLGATHER : XFER_ISO_OP_ALLTOALL, &sc);
    if (st != XFER_SUCCESS)
        return st;
    st = xfer_iso_sched_verify(&n, &sc);
    if (st == XFER_SUCCESS) /* and the schedules the executor runs, through the engine's
                             * simulator: every process's lowered schedule, together */
        st = xfer_iso_sched_simulate(&n, &sc, NULL, NULL);
    if (rounds)
        *rounds = xfer_iso_sched_rounds(&sc);
    if (volume)
        *volume = xfer_iso_sched_volume(&sc);
    xfer_iso_sched_fini(&sc);
    return st;
}

xfer_status_t xfer_iso_schedule(const char *algorithm, int allgather, int ndims, const int dims[],
                                const int periods[], int s, const int offsets[], int rank,
                                xfer_sched_t **sched)
{
    xfer_iso_nbh_t n;
    xfer_iso_sched_t sc;
    long p = 0;
    xfer_status_t st;
    if (!sched)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "sched is NULL");
    *sched = NULL;
    if ((st = nbh_from_args(ndims, dims, periods, s, offsets, INT_MAX, &n, &p)) != XFER_SUCCESS)
        return st;
    if (!algorithm)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "algorithm is NULL");
    if (p > INT_MAX || rank < 0 || rank >= p)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "rank %d: the torus has %ld processes", rank, p);
    st = xfer_iso_sched_build(&n, algorithm,
                              allgather ? XFER_ISO_OP_ALLGATHER : XFER_ISO_OP_ALLTOALL, &sc);
    if (st != XFER_SUCCESS)
        return st;
    st = xfer_iso_lower(&n, &sc, rank, sched);
    xfer_iso_sched_fini(&sc);
    return st;
}
