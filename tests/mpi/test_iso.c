/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Isomorphic neighbourhood allgather and all-to-all against MPI_Neighbor_allgather /
 * MPI_Neighbor_alltoall on the equivalent distributed-graph communicator, byte for byte, for
 * every algorithm (straight, torus, direct, auto), blocking and persistent (three operations
 * with new data each), block sizes 0, 1, 13 and 4096 bytes and a strided datatype; von Neumann,
 * Moore, asymmetric, long-offset, duplicate/self and s = 1 neighbourhoods. Also: a
 * non-periodic dimension (straightforward algorithm against the expected pattern, combining
 * refused on every rank) and mismatched offset lists (an error on every rank, no hang).
 *
 *   test_iso --dims 2,3       torus extents (product = number of processes)
 *   test_iso --mismatch       only the argument-agreement cases
 *   test_iso --quick          torus and direct, blocks of 1 and 13 bytes (memcheck runs)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

#include "../support/mpitest.h"

#define MAXS 64

/* PMPI interposition: libxfer's sends and packs pass through here, so a test can count the
 * messages of one operation (one send per round) and check that nothing is packed. */
static long n_isend, n_pack;

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    n_isend++;
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

int MPI_Pack(const void *in, int incount, MPI_Datatype type, void *out, int outsize, int *pos,
             MPI_Comm comm)
{
    n_pack++;
    return PMPI_Pack(in, incount, type, out, outsize, pos, comm);
}

static int rank, size, d, dims[8];

static int coord_rank(const int *c)
{
    int r = 0;
    for (int j = 0; j < d; j++)
        r = r * dims[j] + c[j];
    return r;
}

/* R + sign * C, periodic in every dimension whose period flag is set; -1 when off the grid. */
static int shift(int r, const int *vec, int sign, const int *periods)
{
    int c[8], x = r;
    for (int j = d - 1; j >= 0; j--) {
        c[j] = x % dims[j];
        x /= dims[j];
    }
    for (int j = 0; j < d; j++) {
        int v = c[j] + sign * vec[j];
        if (periods[j])
            v = ((v % dims[j]) + dims[j]) % dims[j];
        else if (v < 0 || v >= dims[j])
            return -1;
        c[j] = v;
    }
    return coord_rank(c);
}

static unsigned char pattern(int origin, int block, int k, int salt)
{
    return (unsigned char) (origin * 131 + block * 17 + k * 7 + salt * 29 + 1);
}

typedef struct nbh {
    const char *name;
    int s;
    int off[MAXS * 3];
} nbh_t;

static void make_nbhs(nbh_t *n, int *count)
{
    int k = 0;
    /* von Neumann: 2d */
    n[k].name = "von-neumann";
    n[k].s = 0;
    for (int j = 0; j < d; j++)
        for (int sg = 1; sg >= -1; sg -= 2) {
            memset(&n[k].off[n[k].s * d], 0, sizeof(int) * (size_t) d);
            n[k].off[n[k].s * d + j] = sg;
            n[k].s++;
        }
    k++;
    /* Moore: 3^d - 1 */
    n[k].name = "moore";
    n[k].s = 0;
    {
        int total = 1;
        for (int j = 0; j < d; j++)
            total *= 3;
        for (int x = 0; x < total; x++) {
            int y = x, zero = 1;
            for (int j = 0; j < d; j++) {
                n[k].off[n[k].s * d + j] = y % 3 - 1;
                zero &= y % 3 == 1;
                y /= 3;
            }
            if (!zero)
                n[k].s++;
        }
    }
    k++;
    /* asymmetric: positive Moore of radius 1 plus one far offset */
    n[k].name = "asymmetric";
    n[k].s = 0;
    {
        int total = 1;
        for (int j = 0; j < d; j++)
            total *= 2;
        for (int x = 1; x < total; x++) {
            for (int j = 0; j < d; j++)
                n[k].off[n[k].s * d + j] = (x >> j) & 1;
            n[k].s++;
        }
        for (int j = 0; j < d; j++)
            n[k].off[n[k].s * d + j] = j == 0 ? -2 : 0;
        n[k].s++;
    }
    k++;
    /* long offsets: more than one hop, first coordinate of magnitude >= 2 (erratum E2) */
    n[k].name = "far";
    n[k].s = 0;
    {
        static const int far[][3] = {{2, 0, 1}, {-3, 1, 0}, {0, -2, 2}, {3, 3, -1}, {1, 0, 0}};
        for (int i = 0; i < 5; i++) {
            for (int j = 0; j < d; j++)
                n[k].off[n[k].s * d + j] = far[i][j];
            n[k].s++;
        }
    }
    k++;
    /* duplicates and self offsets */
    n[k].name = "dup-self";
    n[k].s = 0;
    {
        static const int dup[][3] = {{1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {-1, 1, 1}, {0, 0, 0}};
        for (int i = 0; i < 5; i++) {
            for (int j = 0; j < d; j++)
                n[k].off[n[k].s * d + j] = dup[i][j];
            n[k].s++;
        }
    }
    k++;
    n[k].name = "s=1";
    n[k].s = 1;
    for (int j = 0; j < d; j++)
        n[k].off[j] = j == d - 1 ? -1 : 1;
    k++;
    *count = k;
}

/* The reference: MPI's neighbourhood collective on the distributed graph of the offsets. */
static void reference(const nbh_t *n, int allgather, const void *sbuf, int scount,
                      MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype)
{
    int src[MAXS], dst[MAXS], ones[MAXS], periods[8];
    MPI_Comm g;
    for (int j = 0; j < d; j++)
        periods[j] = 1;
    for (int i = 0; i < n->s; i++) {
        src[i] = shift(rank, &n->off[i * d], -1, periods);
        dst[i] = shift(rank, &n->off[i * d], 1, periods);
        ones[i] = 1;
    }
    MT_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n->s, src, ones, n->s, dst, ones,
                                          MPI_INFO_NULL, 0, &g));
    if (allgather)
        MT_MPI(MPI_Neighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, g));
    else
        MT_MPI(MPI_Neighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, g));
    MT_MPI(MPI_Comm_free(&g));
}

/* Fill the send blocks (nblocks of m bytes, or of the strided type) with the pattern. */
static void fill(unsigned char *sbuf, int nblocks, int m, int salt)
{
    for (int i = 0; i < nblocks; i++)
        for (int k = 0; k < m; k++)
            sbuf[(size_t) i * (size_t) m + (size_t) k] = pattern(rank, i, k, salt);
}

static void check_expected(const char *what, const nbh_t *n, int allgather,
                           const unsigned char *rbuf, int m, int salt, const int *periods)
{
    for (int i = 0; i < n->s; i++) {
        int from = shift(rank, &n->off[i * d], -1, periods), bad = -1;
        for (int k = 0; k < m && bad < 0; k++) {
            unsigned char want = from < 0 ? 0xEE : pattern(from, allgather ? 0 : i, k, salt);
            if (rbuf[(size_t) i * (size_t) m + (size_t) k] != want)
                bad = k;
        }
        MT_CHECK(bad < 0, "%s: block %d (from rank %d) byte %d wrong", what, i, from, bad);
    }
}

/* Block i's source sends this process more than one block (duplicated offsets, or offsets
 * that wrap onto the same process): parallel edges of the graph. MPI leaves their matching order
 * to the implementation (MPICH does not follow the list order), so those blocks are checked
 * against the pattern only; the isomorphic definition fixes them (block i of R - C^i). */
static int aliased(const nbh_t *n, int i)
{
    int periods[8];
    for (int j = 0; j < d; j++)
        periods[j] = 1;
    for (int k = 0; k < n->s; k++)
        if (k != i &&
            shift(rank, &n->off[k * d], -1, periods) == shift(rank, &n->off[i * d], -1, periods))
            return 1;
    return 0;
}

/* First byte where @p a and the MPI result @p b differ outside aliased blocks, -1 if none. */
static long diff_mpi(const nbh_t *n, const unsigned char *a, const unsigned char *b, int m)
{
    for (int i = 0; i < n->s; i++) {
        if (aliased(n, i))
            continue;
        for (int k = 0; k < m; k++)
            if (a[(size_t) i * (size_t) m + (size_t) k] != b[(size_t) i * (size_t) m + (size_t) k])
                return (long) i * m + k;
    }
    return -1;
}

static void run_case(const nbh_t *n, xfer_iso_t *iso, const char *algo, int allgather, int m)
{
    int nsend = allgather ? 1 : n->s;
    size_t rbytes = (size_t) n->s * (size_t) m + 1;
    unsigned char *sbuf = malloc((size_t) nsend * (size_t) m + 1), *rbuf = malloc(rbytes),
                  *ref = malloc(rbytes);
    xfer_iso_opts_t o;
    xfer_iso_req_t *req = NULL;
    xfer_status_t st;
    char what[160];
    int periods[8];
    for (int j = 0; j < d; j++)
        periods[j] = 1;
    xfer_iso_opts_init(&o);
    o.algorithm = algo;
    snprintf(what, sizeof(what), "%s %s %s m=%d", n->name, algo,
             allgather ? "allgather" : "alltoall", m);

    /* blocking */
    fill(sbuf, nsend, m, 1);
    memset(rbuf, 0xEE, rbytes);
    memset(ref, 0xEE, rbytes);
    reference(n, allgather, sbuf, m, MPI_BYTE, ref, m, MPI_BYTE);
    st = allgather ? xfer_iso_allgather(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o)
                   : xfer_iso_alltoall(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o);
    MT_CHECK(st == XFER_SUCCESS, "%s blocking: %s", what, xfer_last_error());
    MT_CHECK(diff_mpi(n, rbuf, ref, m) < 0, "%s blocking: differs from MPI_Neighbor_* at byte %ld",
             what, diff_mpi(n, rbuf, ref, m));
    check_expected(what, n, allgather, rbuf, m, 1, periods);

    /* persistent: three operations, new data each time */
    st = allgather ? xfer_iso_allgather_init(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o, &req)
                   : xfer_iso_alltoall_init(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o, &req);
    MT_CHECK(st == XFER_SUCCESS, "%s init: %s", what, xfer_last_error());
    for (int it = 0; it < 3 && st == XFER_SUCCESS; it++) {
        fill(sbuf, nsend, m, 10 + it);
        memset(rbuf, 0xEE, rbytes);
        memset(ref, 0xEE, rbytes);
        reference(n, allgather, sbuf, m, MPI_BYTE, ref, m, MPI_BYTE);
        st = xfer_iso_start(req);
        if (st == XFER_SUCCESS)
            st = xfer_iso_wait(req);
        MT_CHECK(st == XFER_SUCCESS, "%s persistent #%d: %s", what, it, xfer_last_error());
        MT_CHECK(diff_mpi(n, rbuf, ref, m) < 0, "%s persistent #%d: differs from MPI at byte %ld",
                 what, it, diff_mpi(n, rbuf, ref, m));
        check_expected(what, n, allgather, rbuf, m, 10 + it, periods);
    }
    if (req) {
        const char *name = NULL;
        int rounds = -1, local = 0;
        xfer_iso_info_t info;
        xfer_iso_req_algorithm(req, &name, &rounds);
        xfer_iso_get_info(iso, &info);
        /* one send per round (and one for the local step that self and duplicated offsets
         * need), nothing packed */
        for (int i = 0; i < n->s; i++)
            for (int k = 0; k < n->s; k++) {
                int zero = 1;
                for (int j = 0; j < d; j++)
                    zero &= n->off[i * d + j] == 0;
                if ((k == i && zero) ||
                    (k < i && allgather &&
                     !memcmp(&n->off[i * d], &n->off[k * d], sizeof(int) * (size_t) d)))
                    local = 1;
            }
        if (m > 0 && strcmp(name, "posted") != 0 && strcmp(name, "straight") != 0) {
            long sends = n_isend, packs = n_pack;
            MT_CHECK(xfer_iso_start(req) == XFER_SUCCESS && xfer_iso_wait(req) == XFER_SUCCESS,
                     "%s: counted run: %s", what, xfer_last_error());
            MT_CHECK(n_isend - sends == rounds + local && n_pack == packs,
                     "%s: %ld sends and %ld packs for %d rounds (+%d local)", what, n_isend - sends,
                     n_pack - packs, rounds, local);
        }
        if (strcmp(algo, "torus") == 0 && m > 0)
            MT_CHECK(strcmp(name, "torus") == 0 && rounds == info.D, "%s: %s in %d rounds, D %d",
                     what, name, rounds, info.D);
        MT_CHECK(xfer_iso_req_free(&req) == XFER_SUCCESS && !req, "%s: free", what);
    }
    free(sbuf);
    free(rbuf);
    free(ref);
}

/* Strided send blocks: every other int of 3, received contiguous. */
static void run_strided(const nbh_t *n, xfer_iso_t *iso, const char *algo)
{
    MPI_Datatype vec;
    int *sbuf = malloc(sizeof(int) * (size_t) n->s * 6 + 1), *rbuf, *ref;
    size_t rb = sizeof(int) * (size_t) n->s * 3 + 1;
    xfer_iso_opts_t o;
    xfer_status_t st;
    rbuf = malloc(rb);
    ref = malloc(rb);
    MT_MPI(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
    {
        MPI_Datatype r;
        MT_MPI(MPI_Type_create_resized(vec, 0, 6 * (MPI_Aint) sizeof(int), &r));
        MT_MPI(MPI_Type_free(&vec));
        vec = r;
    }
    MT_MPI(MPI_Type_commit(&vec));
    for (int i = 0; i < n->s * 6; i++)
        sbuf[i] = rank * 1000 + i;
    memset(rbuf, 0xEE, rb);
    memset(ref, 0xEE, rb);
    xfer_iso_opts_init(&o);
    o.algorithm = algo;
    reference(n, 0, sbuf, 1, vec, ref, 3, MPI_INT);
    st = xfer_iso_alltoall(sbuf, 1, vec, rbuf, 3, MPI_INT, iso, &o);
    MT_CHECK(st == XFER_SUCCESS, "%s %s strided: %s", n->name, algo, xfer_last_error());
    MT_CHECK(diff_mpi(n, (unsigned char *) rbuf, (unsigned char *) ref, 3 * (int) sizeof(int)) < 0,
             "%s %s strided: differs from MPI", n->name, algo);
    for (int i = 0; i < n->s; i++) {
        int from = shift(rank, &n->off[i * d], -1, (int[8]){1, 1, 1, 1, 1, 1, 1, 1});
        for (int k = 0; k < 3; k++)
            MT_CHECK(rbuf[i * 3 + k] == from * 1000 + i * 6 + 2 * k,
                     "%s %s strided: block %d element %d is %d", n->name, algo, i, k,
                     rbuf[i * 3 + k]);
    }
    MT_MPI(MPI_Type_free(&vec));
    free(sbuf);
    free(rbuf);
    free(ref);
}

static void run_nonperiodic(void)
{
    int periods[8], s = 2, m = 5, o3[2 * 3] = {0};
    xfer_iso_t *iso = NULL;
    xfer_iso_req_t *req = NULL;
    unsigned char sbuf[16], rbuf[16];
    xfer_iso_opts_t o;
    xfer_status_t st;
    nbh_t n;
    /* dimension 0 is not periodic; offsets (1, -1, 0) and (-1, 0, 0) (first d coordinates) */
    for (int j = 0; j < d; j++)
        periods[j] = j != 0;
    o3[0] = 1;
    if (d > 1)
        o3[1] = -1;
    o3[d] = -1;
    n.name = "non-periodic";
    n.s = s;
    memcpy(n.off, o3, sizeof(int) * (size_t) (s * d));
    st = xfer_iso_create(MPI_COMM_WORLD, d, dims, periods, s, o3, &iso);
    MT_CHECK(st == XFER_SUCCESS, "non-periodic create: %s", xfer_last_error());
    if (st != XFER_SUCCESS)
        return;
    xfer_iso_opts_init(&o);
    for (int op = 0; op < 2; op++) {
        fill(sbuf, op ? 1 : s, m, 3);
        memset(rbuf, 0xEE, sizeof(rbuf));
        st = op ? xfer_iso_allgather(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o)
                : xfer_iso_alltoall(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o);
        MT_CHECK(st == XFER_SUCCESS, "non-periodic auto: %s", xfer_last_error());
        check_expected("non-periodic auto", &n, op, rbuf, m, 3, periods);
    }
    o.algorithm = "torus";
    st = xfer_iso_alltoall_init(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o, &req);
    MT_CHECK(st == XFER_ERR_NOT_SUPPORTED && !req, "torus on a non-periodic offset: %d (%s)", st,
             xfer_last_error());
    MT_CHECK(xfer_iso_free(&iso) == XFER_SUCCESS && !iso, "free");
}

/* auto: combining below the cut-off m* = alpha (s - D) / (beta (V - s)), straightforward above
 * (posted; 2-D Moore: s 8, D 4, V 12, m* = alpha / beta); the allgather's W = s makes combining
 * win at
 * every size. */
static void run_selection(const nbh_t *moore2d)
{
    static char sb[8 * 40000], rb[8 * 40000];
    static const struct {
        int allgather, m;
        const char *want;
    } c[] = {{0, 64, "torus"}, {0, 19000, "torus"}, {0, 21000, "posted"}, {1, 21000, "torus"}};
    xfer_iso_t *iso = NULL;
    xfer_iso_opts_t o;
    MT_CHECK(xfer_iso_create(MPI_COMM_WORLD, d, dims, NULL, moore2d->s, moore2d->off, &iso) ==
                 XFER_SUCCESS,
             "create: %s", xfer_last_error());
    xfer_iso_opts_init(&o);
    o.alpha = 2e-6;
    o.beta = 1e-10;
    o.one_node = 0; /* the model as across nodes (the test runs on one) */
    for (size_t k = 0; iso && k < sizeof(c) / sizeof(c[0]); k++) {
        xfer_iso_req_t *req = NULL;
        const char *name = "";
        xfer_status_t st =
            c[k].allgather
                ? xfer_iso_allgather_init(sb, c[k].m, MPI_BYTE, rb, c[k].m, MPI_BYTE, iso, &o, &req)
                : xfer_iso_alltoall_init(sb, c[k].m, MPI_BYTE, rb, c[k].m, MPI_BYTE, iso, &o, &req);
        MT_CHECK(st == XFER_SUCCESS, "auto init: %s", xfer_last_error());
        xfer_iso_req_algorithm(req, &name, NULL);
        MT_CHECK(name && strcmp(name, c[k].want) == 0, "auto %s m=%d chose %s, expected %s",
                 c[k].allgather ? "allgather" : "alltoall", c[k].m, name ? name : "?", c[k].want);
        xfer_iso_req_free(&req);
    }
    o.one_node = 1; /* on one node auto posts every exchange at once */
    if (iso) {
        xfer_iso_req_t *req = NULL;
        const char *name = "";
        MT_CHECK(xfer_iso_alltoall_init(sb, 64, MPI_BYTE, rb, 64, MPI_BYTE, iso, &o, &req) ==
                     XFER_SUCCESS,
                 "init: %s", xfer_last_error());
        xfer_iso_req_algorithm(req, &name, NULL);
        MT_CHECK(name && strcmp(name, "posted") == 0, "auto on one node chose %s", name);
        xfer_iso_req_free(&req);
    }
    xfer_iso_free(&iso);
}

static void run_mismatch(void)
{
    int off[] = {1, -1, 2, 0}, swapped[] = {-1, 1, 2, 0}, dims1[] = {size}, bad_dims[] = {0};
    xfer_iso_t *iso = NULL;
    xfer_status_t st;
    /* rank 1 (the last rank on one process) lists the offsets in another order */
    st = xfer_iso_create(MPI_COMM_WORLD, 1, dims1, NULL, 4,
                         rank == (size > 1 ? 1 : 0) && size > 1 ? swapped : off, &iso);
    if (size > 1)
        MT_CHECK(st == XFER_ERR_MISMATCH && !iso && strstr(xfer_last_error(), "rank 1"),
                 "reordered offsets on rank 1: status %d (%s)", st, xfer_last_error());
    xfer_iso_free(&iso);
    /* invalid extents on the last rank only: an error everywhere */
    st =
        xfer_iso_create(MPI_COMM_WORLD, 1, rank == size - 1 ? bad_dims : dims1, NULL, 4, off, &iso);
    MT_CHECK(st == XFER_ERR_INVALID_ARG && !iso, "bad dims on rank %d: status %d (%s)", size - 1,
             st, xfer_last_error());
    xfer_iso_free(&iso);
    /* a persistent operation whose algorithm differs on one rank is refused everywhere */
    st = xfer_iso_create(MPI_COMM_WORLD, 1, dims1, NULL, 4, off, &iso);
    MT_CHECK(st == XFER_SUCCESS, "create: %s", xfer_last_error());
    if (st == XFER_SUCCESS && size > 1) {
        char sb[4 * 8], rb[4 * 8];
        xfer_iso_opts_t o;
        xfer_iso_req_t *req = NULL;
        xfer_iso_opts_init(&o);
        o.algorithm = rank == 0 ? "straight" : "torus";
        st = xfer_iso_alltoall_init(sb, 8, MPI_BYTE, rb, 8, MPI_BYTE, iso, &o, &req);
        MT_CHECK(st == XFER_ERR_MISMATCH && !req, "different algorithms: status %d (%s)", st,
                 xfer_last_error());
        o.algorithm = rank == 0 ? "nonsense" : "torus";
        st = xfer_iso_alltoall_init(sb, 8, MPI_BYTE, rb, 8, MPI_BYTE, iso, &o, &req);
        MT_CHECK(st != XFER_SUCCESS && !req, "unknown algorithm on rank 0: status %d", st);
        if (rank == 0)
            MT_CHECK(st == XFER_ERR_UNKNOWN_ALGORITHM, "rank 0: %d", st);
    }
    xfer_iso_free(&iso);
}

/* xfer_iso_test never blocks: rank 0 starts only once every other rank's first xfer_iso_test
 * call has returned (each tells it so by a message), so a call that waited for rank 0 would
 * never return: rank 0 then reports it after 20 s and starts anyway (no hang). The result must
 * match MPI's. (Causal, not timed: a bound on each call's duration failed under load.) */
static void run_late(const nbh_t *n, const char *algo)
{
    const int m = 4096;
    size_t rbytes = (size_t) n->s * (size_t) m;
    unsigned char *sbuf = malloc((size_t) n->s * (size_t) m), *rbuf = malloc(rbytes),
                  *ref = malloc(rbytes);
    xfer_iso_t *iso = NULL;
    xfer_iso_req_t *req = NULL;
    xfer_iso_opts_t o;
    const int tag = 0x15A7;
    long polls = 0;
    int flag = 0, i, token = 1;
    xfer_status_t st;

    MT_CHECK(xfer_iso_create(MPI_COMM_WORLD, d, dims, NULL, n->s, n->off, &iso) == XFER_SUCCESS,
             "late: create: %s", xfer_last_error());
    xfer_iso_opts_init(&o);
    o.algorithm = algo;
    o.timeout_ms = 20000;
    fill(sbuf, n->s, m, 77);
    memset(rbuf, 0xEE, rbytes);
    memset(ref, 0xEE, rbytes);
    reference(n, 0, sbuf, m, MPI_BYTE, ref, m, MPI_BYTE);
    st = xfer_iso_alltoall_init(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o, &req);
    MT_CHECK(st == XFER_SUCCESS, "late %s: init: %s", algo, xfer_last_error());
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) { /* arrive late on purpose: after everyone's first xfer_iso_test returned */
        const double deadline = MPI_Wtime() + 20;
        for (i = 1; i < size; i++) {
            MPI_Request r;
            int got = 0;
            MT_MPI(MPI_Irecv(&token, 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &r));
            while (!got && MPI_Wtime() < deadline)
                MT_MPI(MPI_Test(&r, &got, MPI_STATUS_IGNORE));
            if (!got) {
                MT_CHECK(0,
                         "late %s: %d rank(s) still in their first xfer_iso_test after 20 s: "
                         "it waits for the late rank",
                         algo, size - i);
                MT_MPI(MPI_Cancel(&r));
                MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
                break;
            }
        }
    }
    st = xfer_iso_start(req);
    while (st == XFER_SUCCESS && !flag) {
        st = xfer_iso_test(req, &flag);
        if (++polls == 1 && rank != 0)
            MT_MPI(MPI_Send(&token, 1, MPI_INT, 0, tag, MPI_COMM_WORLD));
    }
    if (rank != 0 && polls == 0) /* (a failed start) */
        MT_MPI(MPI_Send(&token, 1, MPI_INT, 0, tag, MPI_COMM_WORLD));
    MT_CHECK(st == XFER_SUCCESS, "late %s: %s", algo, xfer_last_error());
    MT_CHECK(diff_mpi(n, rbuf, ref, m) < 0, "late %s: differs from MPI at byte %ld", algo,
             diff_mpi(n, rbuf, ref, m));
    MT_CHECK(xfer_iso_test(req, &flag) == XFER_ERR_STATE, "late %s: test after completion", algo);
    MT_CHECK(xfer_iso_req_free(&req) == XFER_SUCCESS, "late %s: free", algo);
    MT_CHECK(xfer_iso_free(&iso) == XFER_SUCCESS, "late %s: free iso", algo);
    free(sbuf);
    free(rbuf);
    free(ref);
}

int main(int argc, char **argv)
{
    static const char *algos[] = {"straight", "torus", "direct", "auto", "posted"};
    static const int sizes[] = {0, 1, 13, 4096};
    int mismatch_only = 0, quick = 0, rc;
    nbh_t nb[8];
    int nnb;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mt_world_rank = rank;
    d = 1;
    dims[0] = size;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--dims") == 0 && a + 1 < argc) {
            char *p = argv[++a];
            d = 0;
            while (*p && d < 3) {
                dims[d++] = (int) strtol(p, &p, 10);
                if (*p == ',')
                    p++;
            }
        } else if (strcmp(argv[a], "--mismatch") == 0) {
            mismatch_only = 1;
        } else if (strcmp(argv[a], "--quick") == 0) {
            quick = 1;
        }
    }
    if (mismatch_only) {
        run_mismatch();
        rc = mt_finish("test_iso --mismatch");
        MPI_Finalize();
        return rc;
    }
    make_nbhs(nb, &nnb);
    for (int k = 0; k < nnb; k++) {
        xfer_iso_t *iso = NULL;
        xfer_status_t st = xfer_iso_create(MPI_COMM_WORLD, d, dims, NULL, nb[k].s, nb[k].off, &iso);
        MT_CHECK(st == XFER_SUCCESS, "%s: create: %s", nb[k].name, xfer_last_error());
        if (st != XFER_SUCCESS)
            continue;
        for (int a = quick ? 1 : 0; a < (quick ? 3 : 5); a++) {
            for (int z = quick ? 1 : 0; z < (quick ? 3 : 4); z++) {
                run_case(&nb[k], iso, algos[a], 0, sizes[z]);
                run_case(&nb[k], iso, algos[a], 1, sizes[z]);
            }
            run_strided(&nb[k], iso, algos[a]);
        }
        MT_CHECK(xfer_iso_free(&iso) == XFER_SUCCESS && !iso, "%s: free", nb[k].name);
    }
    if (d == 2)
        run_selection(&nb[1]);
    if (!quick) {
        run_late(&nb[1], "torus");
        run_late(&nb[1], "posted");
    }
    run_nonperiodic();
    rc = mt_finish("test_iso");
    MPI_Finalize();
    return rc;
}
