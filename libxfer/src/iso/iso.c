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
    /* schedules built so far, by algorithm and operation: they depend on the offsets only */
    xfer_iso_sched_t *scheds[XFER_ISO_NALGOS][2];
};

typedef struct iso_step {
    int dst, src; /* ranks or MPI_PROC_NULL */
    void *sptr, *rptr;
    int scount, rcount;
    MPI_Datatype stype, rtype; /* committed struct types when owned */
    int owned;                 /* 1: stype/rtype are ours to free */
} iso_step_t;

struct xfer_iso_req {
    xfer_iso_t *iso;
    const xfer_iso_sched_t *sched; /* the neighbourhood's, shared */
    iso_step_t *steps;
    int nsteps, rounds;
    void *tmp;
    int tag, timeout_ms;
    int active, broken;
    MPI_Request *rq; /* 2 per step in flight: one step, or all of them (concurrent schedules) */
    MPI_Status *sts;
    int nrq;
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

static uint64_t fnv(uint64_t h, long v)
{
    for (int b = 0; b < 8; b++) {
        h ^= (uint64_t) ((unsigned long) v >> (8 * b)) & 0xffu;
        h *= 1099511628211ull;
    }
    return h;
}

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
    unsigned long long v[3], h = 14695981039346656037ull;
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
        h = fnv(h, ndims);
        for (int j = 0; j < ndims; j++)
            h = fnv(fnv(h, nbh.dims[j]), nbh.periods[j]);
        h = fnv(h, s);
        for (long i = 0; i < (long) s * ndims; i++)
            h = fnv(h, nbh.off[i]);
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

/* The schedule of algorithm @p name for @p op, built on first use and kept with @p x: every
 * request of the same algorithm and operation runs the same one. */
static xfer_status_t cached_sched(xfer_iso_t *x, const char *name, int op,
                                  const xfer_iso_sched_t **out)
{
    xfer_iso_sched_t sc, *keep;
    xfer_status_t st;
    for (int a = 0; a < XFER_ISO_NALGOS; a++) {
        if (x->scheds[a][op] && strcmp(x->scheds[a][op]->algo, name) == 0) {
            *out = x->scheds[a][op];
            return XFER_SUCCESS;
        }
    }
    if ((st = xfer_iso_sched_build(&x->nbh, name, op, &sc)) != XFER_SUCCESS)
        return st;
    if (!(keep = xfer_malloc(sizeof(*keep)))) {
        xfer_iso_sched_fini(&sc);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "isomorphic schedule");
    }
    *keep = sc;
    x->scheds[sc.algo_id][op] = keep;
    *out = keep;
    return XFER_SUCCESS;
}

static void free_steps(xfer_iso_req_t *r)
{
    for (int t = 0; t < r->nsteps; t++) {
        if (r->steps[t].owned) {
            MPI_Type_free(&r->steps[t].stype); /* nothing to do on failure but go on */
            MPI_Type_free(&r->steps[t].rtype);
        }
    }
    xfer_free(r->steps);
    r->steps = NULL;
    r->nsteps = 0;
}

typedef struct bufs {
    char *base[3];
    MPI_Aint stride[3]; /* bytes between consecutive slots */
    int count[3];
    MPI_Datatype type[3];
} bufs_t;

static void *slot_ptr(const bufs_t *b, int buf, int slot)
{
    return b->base[buf] + (MPI_Aint) slot * b->stride[buf];
}

/* One step's send or receive side: the single part itself, or a struct type over all parts. */
static xfer_status_t side_type(const xfer_iso_sched_t *s, const xfer_iso_step_t *stp,
                               const bufs_t *b, int recv, void **ptr, int *count,
                               MPI_Datatype *type, MPI_Aint *disp, int *blen, MPI_Datatype *types)
{
    xfer_status_t st = XFER_SUCCESS;
    if (stp->nparts == 1) {
        const xfer_iso_part_t *p = &s->parts[stp->first];
        int buf = recv ? p->rbuf : p->sbuf;
        *ptr = slot_ptr(b, buf, recv ? p->rslot : p->sslot);
        *count = b->count[buf];
        *type = b->type[buf];
        return XFER_SUCCESS;
    }
    for (int k = 0; k < stp->nparts; k++) {
        const xfer_iso_part_t *p = &s->parts[stp->first + k];
        int buf = recv ? p->rbuf : p->sbuf;
        XFER_MPI_GOTO(MPI_Get_address(slot_ptr(b, buf, recv ? p->rslot : p->sslot), &disp[k]), st,
                      out);
        blen[k] = b->count[buf];
        types[k] = b->type[buf];
    }
    XFER_MPI_GOTO(MPI_Type_create_struct(stp->nparts, blen, disp, types, type), st, out);
    {
        int rc = MPI_Type_commit(type);
        if (rc != MPI_SUCCESS) {
            MPI_Type_free(type);
            st = xfer_err_mpi(rc, __func__, "MPI_Type_commit");
            goto out;
        }
    }
    *ptr = MPI_BOTTOM;
    *count = 1;
out:
    return st;
}

static xfer_status_t req_init(int op, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                              int rcount, MPI_Datatype rtype, xfer_iso_t *iso,
                              const xfer_iso_opts_t *opts, int agree, xfer_iso_req_t **req)
{
    xfer_status_t st = XFER_SUCCESS;
    xfer_iso_req_t *r = NULL;
    const char *name =
        opts && opts->algorithm ? opts->algorithm : xfer_env_str("XFER_ISO_ALGORITHM");
    int ssize = 0, rsize = 0, maxparts = 1, r_tag;
    MPI_Aint lb, sext, rext, tlb, text, *disp = NULL;
    int *blen = NULL;
    MPI_Datatype *types = NULL;
    double m, alpha, beta;
    bufs_t b;

    memset(&b, 0, sizeof(b));

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
        st = cached_sched(iso, name, op, &r->sched);
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

    XFER_MPI_GOTO(MPI_Type_get_extent(stype, &lb, &sext), st, fail);
    XFER_MPI_GOTO(MPI_Type_get_extent(rtype, &lb, &rext), st, fail);
    XFER_MPI_GOTO(MPI_Type_get_true_extent(rtype, &tlb, &text), st, fail);
    b.base[XFER_ISO_SEND] = (char *) (uintptr_t) sbuf;
    b.base[XFER_ISO_RECV] = rbuf;
    b.stride[XFER_ISO_SEND] = sext * scount;
    b.stride[XFER_ISO_RECV] = rext * rcount;
    b.stride[XFER_ISO_TMP] = rcount > 0 ? (rcount - 1) * rext + text : 0;
    b.count[XFER_ISO_SEND] = scount;
    b.count[XFER_ISO_RECV] = b.count[XFER_ISO_TMP] = rcount;
    b.type[XFER_ISO_SEND] = stype;
    b.type[XFER_ISO_RECV] = b.type[XFER_ISO_TMP] = rtype;
    if (r->sched->ntmp > 0) {
        size_t bytes;
        if (!xfer_mul_size((size_t) b.stride[XFER_ISO_TMP], (size_t) r->sched->ntmp, &bytes) ||
            !(r->tmp = xfer_malloc(bytes))) {
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "scratch of %d blocks of %ld bytes", r->sched->ntmp,
                          (long) b.stride[XFER_ISO_TMP]);
            goto fail;
        }
    }
    b.base[XFER_ISO_TMP] = (char *) r->tmp - tlb;

    for (int t = 0; t < r->sched->nsteps; t++)
        maxparts = XFER_MAX(maxparts, r->sched->steps[t].nparts);
    disp = xfer_malloc(sizeof(*disp) * (size_t) maxparts);
    blen = xfer_malloc(sizeof(*blen) * (size_t) maxparts);
    types = xfer_malloc(sizeof(*types) * (size_t) maxparts);
    r->steps = xfer_calloc((size_t) r->sched->nsteps + 1, sizeof(*r->steps));
    if (!disp || !blen || !types || !r->steps) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "datatypes of %d steps", r->sched->nsteps);
        goto fail;
    }
    for (int t = 0; t < r->sched->nsteps; t++) {
        const xfer_iso_step_t *stp = &r->sched->steps[t];
        iso_step_t *e = &r->steps[t];
        int dst = xfer_iso_shift(&iso->nbh, iso->rank, stp->vec, 1);
        int src = xfer_iso_shift(&iso->nbh, iso->rank, stp->vec, -1);
        e->dst = dst < 0 ? MPI_PROC_NULL : dst;
        e->src = src < 0 ? MPI_PROC_NULL : src;
        XFER_CHECK_GOTO(
            side_type(r->sched, stp, &b, 0, &e->sptr, &e->scount, &e->stype, disp, blen, types), st,
            fail);
        if (stp->nparts > 1)
            e->owned = 1; /* the send type exists: free it even if the receive type fails */
        st = side_type(r->sched, stp, &b, 1, &e->rptr, &e->rcount, &e->rtype, disp, blen, types);
        if (st != XFER_SUCCESS) {
            if (e->owned)
                MPI_Type_free(&e->stype);
            e->owned = 0;
            goto fail;
        }
        r->nsteps++;
    }
    r->nrq = 2 * (r->sched->concurrent ? r->nsteps : 1);
    r->rq = xfer_malloc(sizeof(*r->rq) * (size_t) r->nrq);
    r->sts = xfer_malloc(sizeof(*r->sts) * (size_t) r->nrq);
    if (!r->rq || !r->sts) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "%d requests", r->nrq);
        goto fail;
    }
    xfer_free(disp);
    xfer_free(blen);
    xfer_free(types);
    iso->nreqs++;
    *req = r;
    return XFER_SUCCESS;
fail:
    xfer_free(disp);
    xfer_free(blen);
    xfer_free(types);
    if (r) {
        free_steps(r);
        xfer_free(r->tmp);
        xfer_free(r->rq);
        xfer_free(r->sts);
        xfer_free(r);
    }
    return st;
}

/* Post step @p t into requests 2k and 2k + 1. */
static xfer_status_t post(xfer_iso_req_t *r, int t, int k)
{
    xfer_status_t st = XFER_SUCCESS;
    iso_step_t *e = &r->steps[t];
    MPI_Comm c = r->iso->comm;
    XFER_MPI_GOTO(MPI_Irecv(e->rptr, e->rcount, e->rtype, e->src, r->tag, c, &r->rq[2 * k]), st,
                  out);
    XFER_MPI_GOTO(MPI_Isend(e->sptr, e->scount, e->stype, e->dst, r->tag, c, &r->rq[2 * k + 1]), st,
                  out);
out:
    return st;
}

/* Complete the first @p n requests; @p t names the step for a timeout report (-1: all). */
static xfer_status_t complete(xfer_iso_req_t *r, int n, int t, double deadline)
{
    xfer_status_t st = XFER_SUCCESS;
    if (deadline <= 0) {
        XFER_MPI_GOTO(MPI_Waitall(n, r->rq, r->sts), st, out);
        return XFER_SUCCESS;
    }
    for (;;) {
        int done = 0;
        XFER_MPI_GOTO(MPI_Testall(n, r->rq, &done, r->sts), st, out);
        if (done)
            return XFER_SUCCESS;
        if (MPI_Wtime() > deadline) {
            /* Abandon the operation: the peer may never come. */
            for (int k = 0; k < n; k++) {
                if (r->rq[k] == MPI_REQUEST_NULL)
                    continue;
                if (k % 2 == 0)
                    MPI_Cancel(&r->rq[k]);
                MPI_Request_free(&r->rq[k]);
            }
            if (t < 0)
                return XFER_ERR(XFER_ERR_TIMEOUT,
                                "isomorphic %s: the %d exchanges did not complete within %d ms",
                                r->algo, r->nsteps, r->timeout_ms);
            return XFER_ERR(XFER_ERR_TIMEOUT,
                            "isomorphic %s: round %d of %d (send to rank %d, receive from rank "
                            "%d) did not complete within %d ms",
                            r->algo, t, r->nsteps, r->steps[t].dst, r->steps[t].src, r->timeout_ms);
        }
    }
out:
    return st;
}

xfer_status_t xfer_iso_start(xfer_iso_req_t *r)
{
    xfer_status_t st;
    if (!r)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "req is NULL");
    if (r->broken)
        return XFER_ERR(XFER_ERR_STATE, "an earlier operation of this request failed; free it");
    if (r->active)
        return XFER_ERR(XFER_ERR_STATE, "the request is already active (xfer_iso_wait first)");
    r->active = 1;
    if (r->nsteps == 0)
        return XFER_SUCCESS;
    if (r->sched->concurrent) {
        st = XFER_SUCCESS;
        for (int t = 0; t < r->nsteps && st == XFER_SUCCESS; t++)
            st = post(r, t, t);
    } else {
        st = post(r, 0, 0);
    }
    if (st != XFER_SUCCESS)
        r->broken = 1, r->active = 0;
    return st;
}

xfer_status_t xfer_iso_wait(xfer_iso_req_t *r)
{
    xfer_status_t st = XFER_SUCCESS;
    double deadline;
    if (!r)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "req is NULL");
    if (!r->active)
        return XFER_ERR(XFER_ERR_STATE, "the request is not active (xfer_iso_start first)");
    deadline = r->timeout_ms > 0 ? MPI_Wtime() + 1e-3 * r->timeout_ms : 0;
    if (r->sched->concurrent && r->nsteps > 0)
        st = complete(r, r->nrq, -1, deadline);
    for (int t = 0; !r->sched->concurrent && t < r->nsteps && st == XFER_SUCCESS; t++) {
        if (t > 0)
            st = post(r, t, 0);
        if (st == XFER_SUCCESS)
            st = complete(r, 2, t, deadline);
    }
    r->active = 0;
    if (st != XFER_SUCCESS)
        r->broken = 1;
    return st;
}

xfer_status_t xfer_iso_req_free(xfer_iso_req_t **req)
{
    xfer_iso_req_t *r;
    if (!req || !*req)
        return XFER_SUCCESS;
    r = *req;
    if (r->active)
        return XFER_ERR(XFER_ERR_STATE, "the request is active (xfer_iso_wait first)");
    free_steps(r);
    xfer_free(r->tmp);
    xfer_free(r->rq);
    xfer_free(r->sts);
    r->iso->nreqs--;
    xfer_free(r);
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
    if (rounds)
        *rounds = xfer_iso_sched_rounds(&sc);
    if (volume)
        *volume = xfer_iso_sched_volume(&sc);
    xfer_iso_sched_fini(&sc);
    return st;
}
