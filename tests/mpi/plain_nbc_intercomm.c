/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An ordinary MPI program that knows nothing of libxfer: intercommunicator MPI_Iallgather and
 * MPI_Iallgatherv, and (MPI-4 libraries) MPI_Allgather_init / MPI_Allgatherv_init, for the
 * interposer to take over. Every result is compared byte for byte, gaps included, with the
 * MPI library's own answer (its blocking PMPI_ call on the same arguments, which no interposer
 * touches), and a checksum of each is printed by world rank 0 so that a plain run and one under
 * LD_PRELOAD=libxfer_pmpi.so can be compared.
 *
 * It covers: full and half duplex, zero counts, skewed counts with reversed displacements and
 * gaps, a derived send type; each request completed by a different call (MPI_Wait, MPI_Test,
 * MPI_Waitall/any/some, MPI_Testall/any/some, MPI_Request_get_status) in arrays that mix it with
 * the program's own point-to-point requests, MPI_REQUEST_NULL, and statuses or
 * MPI_STATUS(ES)_IGNORE; three operations outstanding at once on two intercommunicators,
 * completed in opposite orders by the two groups with nothing but MPI_Wait; a blocking
 * intercommunicator MPI_Allgather while one is outstanding; persistent requests started
 * repeatedly (MPI_Start, MPI_Startall with the program's own persistent requests), completed and
 * inactive (MPI_Wait, MPI_Test, MPI_Testany, MPI_Waitany, MPI_Request_get_status on an inactive
 * request return at once with an empty status) and freed; an invalid argument raised through the
 * communicator's error handler.
 *
 * The persistent part runs alone, with --persistent: MPICH 4.0.2's own intercommunicator
 * MPI_Allgather_init reads the send buffer at initialisation, not at MPI_Start, its never-started
 * persistent collectives hang in MPI_Wait, and its MPI_Testany/MPI_Waitany return the index of
 * an inactive one; the MPI library's answer is its blocking call then, and the part is run under
 * the interposer only.
 *
 * Usage: mpiexec -n P+Q plain_nbc_intercomm --p P [--persistent]
 */
#include <stdint.h>

#include "../support/mpitest.h"

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *) 1, and GCC 11 and later then warn that
 * the array parameter is too small (pmodels/mpich#5687): a false positive. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define MAX_SUMS 256
#define FILL     0x5a

static uint64_t sums[MAX_SUMS];
static int nsums, wrong, wsize;

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ULL;
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

/* One collective call: its arguments, its receive buffer and the MPI library's answer. */
typedef struct call {
    int v; /* MPI_Allgatherv */
    MPI_Comm comm;
    MPI_Datatype stype;
    int *sbuf, scount, rcount, *rcounts, *displs;
    unsigned char *rbuf, *ref;
    size_t rbytes;
} call_t;

static MPI_Datatype pair; /* ints 0 and 3 of each 4-int extent */

/* @p mode 0: both groups send, 1: A to B only, 2: B to A only. @p k elements per rank; an
 * allgatherv skews them (odd ranks send nothing) and lays them out backwards with gaps. With
 * @p derived the send type is `pair`. */
static void setup(call_t *c, const mt_inter_t *ic, MPI_Comm comm, int v, int k, int mode,
                  int derived, int salt)
{
    const int g = ic->group, nr = ic->nremote;
    const int me_sends = mode == 0 || mode == 1 + g, they_send = mode == 0 || mode == 2 - g;
    const int ke = derived ? 2 * k : k; /* ints per remote rank */
    int i, off = 0;

    memset(c, 0, sizeof(*c));
    c->v = v;
    c->comm = comm;
    c->stype = derived ? pair : MPI_INT;
    c->sbuf = malloc((size_t) (4 * k + 1) * sizeof(int));
    for (i = 0; i < 4 * k + 1; i++)
        c->sbuf[i] = mt_value(g, ic->rank, i, salt);
    c->rcounts = malloc((size_t) nr * sizeof(int));
    c->displs = malloc((size_t) nr * sizeof(int));
    if (!v) {
        c->scount = me_sends ? k : 0;
        c->rcount = they_send ? ke : 0;
        off = nr * ke;
    } else {
        c->scount = me_sends && ic->rank % 2 == 0 ? k - ic->rank / 2 : 0;
        if (c->scount < 0)
            c->scount = 0;
        for (i = nr - 1; i >= 0; i--) {
            int n = they_send && i % 2 == 0 ? k - i / 2 : 0;
            c->rcounts[i] = (n < 0 ? 0 : n) * (derived ? 2 : 1);
            c->displs[i] = off;
            off += c->rcounts[i] + 1;
        }
    }
    c->rbytes = (size_t) (off + 1) * sizeof(int);
    c->rbuf = malloc(c->rbytes);
    c->ref = malloc(c->rbytes);
    memset(c->rbuf, FILL, c->rbytes);
    memset(c->ref, FILL, c->rbytes);
    /* the MPI library's answer, straight from it */
    if (v)
        MT_MPI(PMPI_Allgatherv(c->sbuf, c->scount, c->stype, c->ref, c->rcounts, c->displs, MPI_INT,
                               comm));
    else
        MT_MPI(PMPI_Allgather(c->sbuf, c->scount, c->stype, c->ref, c->rcount, MPI_INT, comm));
}

static void start(call_t *c, MPI_Request *r)
{
    if (c->v)
        MT_MPI(MPI_Iallgatherv(c->sbuf, c->scount, c->stype, c->rbuf, c->rcounts, c->displs,
                               MPI_INT, c->comm, r));
    else
        MT_MPI(
            MPI_Iallgather(c->sbuf, c->scount, c->stype, c->rbuf, c->rcount, MPI_INT, c->comm, r));
}

/* Compare with the MPI library's answer, record the checksum, release the call. */
static void verify(call_t *c, const char *what)
{
    size_t i, bad = 0;
    for (i = 0; i < c->rbytes; i++)
        bad += c->rbuf[i] != c->ref[i];
    MT_CHECK(bad == 0, "%s: %zu of %zu bytes differ from the MPI library's result", what, bad,
             c->rbytes);
    wrong += bad != 0;
    if (nsums < MAX_SUMS)
        sums[nsums++] = fnv(c->rbuf, c->rbytes);
    free(c->sbuf);
    free(c->rcounts);
    free(c->displs);
    free(c->rbuf);
    free(c->ref);
}

/* The program's own requests beside ours: an int around the world ring. */
typedef struct ring {
    int in, out, left;
} ring_t;

static void ring_post(ring_t *x, int salt, MPI_Request *rr, MPI_Request *sr)
{
    const int w = mt_world_rank;
    x->left = (w + wsize - 1) % wsize;
    x->out = w * 7 + salt;
    x->in = -1;
    MT_MPI(MPI_Irecv(&x->in, 1, MPI_INT, x->left, 99, MPI_COMM_WORLD, rr));
    MT_MPI(MPI_Isend(&x->out, 1, MPI_INT, (w + 1) % wsize, 99, MPI_COMM_WORLD, sr));
}

static void ring_check(const ring_t *x, int salt)
{
    MT_CHECK(x->in == x->left * 7 + salt, "ring value %d, expected %d", x->in, x->left * 7 + salt);
}

/* Complete req[0..n) -- ours at @p mine, the rest the program's own or MPI_REQUEST_NULL -- with
 * completion method @p how; @p left is the index of the ring receive (-1 if none). */
static void complete(int how, int n, MPI_Request *req, int mine, int left, const char *what)
{
    MPI_Status st[8];
    int idx[8], i, flag = 0, cnt, done = 0, polls = 0, empty = 0;

    switch (how) {
    case 0: /* MPI_Wait on each, with a status */
        for (i = 0; i < n; i++)
            MT_MPI(MPI_Wait(&req[i], &st[i]));
        break;
    case 1: /* MPI_Test on each until done */
        for (i = 0; i < n; i++)
            for (flag = 0; !flag; polls++)
                MT_MPI(MPI_Test(&req[i], &flag, i == left ? &st[i] : MPI_STATUS_IGNORE));
        break;
    case 2:
        MT_MPI(MPI_Waitall(n, req, st));
        break;
    case 3: /* MPI_Waitany until every entry is inactive */
        for (;;) {
            MT_MPI(MPI_Waitany(n, req, &i, MPI_STATUS_IGNORE));
            if (i == MPI_UNDEFINED)
                break;
            MT_CHECK(i >= 0 && i < n && req[i] == MPI_REQUEST_NULL, "%s: Waitany index %d", what,
                     i);
            done++;
        }
        break;
    case 4:
        for (;;) {
            MT_MPI(MPI_Waitsome(n, req, &cnt, idx, st));
            if (cnt == MPI_UNDEFINED)
                break;
            empty += cnt == 0;
            done += cnt;
        }
        MT_CHECK(empty == 0, "%s: Waitsome returned nothing %d times", what, empty);
        break;
    case 5:
        for (flag = 0; !flag; polls++)
            MT_MPI(MPI_Testall(n, req, &flag, MPI_STATUSES_IGNORE));
        break;
    case 6:
        for (;;) {
            MT_MPI(MPI_Testany(n, req, &i, &flag, &st[0]));
            if (flag && i == MPI_UNDEFINED)
                break;
            done += flag;
        }
        break;
    case 7:
        for (;;) {
            MT_MPI(MPI_Testsome(n, req, &cnt, idx, MPI_STATUSES_IGNORE));
            if (cnt == MPI_UNDEFINED)
                break;
            done += cnt;
        }
        break;
    default: /* MPI_Request_get_status until it completed, then MPI_Wait frees it */
        for (flag = 0; !flag; polls++)
            MT_MPI(MPI_Request_get_status(req[mine], &flag, MPI_STATUS_IGNORE));
        MT_CHECK(req[mine] != MPI_REQUEST_NULL, "%s: get_status freed the request", what);
        MT_MPI(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
        break;
    }
    for (i = 0; i < n; i++)
        MT_CHECK(req[i] == MPI_REQUEST_NULL, "%s: method %d left request %d", what, how, i);
    if ((how == 0 || how == 2) && left >= 0)
        MT_CHECK(st[left].MPI_SOURCE == (mt_world_rank + wsize - 1) % wsize,
                 "%s: receive status source %d", what, st[left].MPI_SOURCE);
    (void) polls;
    (void) done;
}

/* Nonblocking calls of every shape, each completed by the next method, beside ring requests. */
static void shapes(const mt_inter_t *ic)
{
    static const int ks[] = {0, 1, 7, 300, 3001};
    int call = 0, v, ki, mode;
    char what[96];

    for (v = 0; v < 2; v++)
        for (ki = 0; ki < 5; ki++)
            for (mode = 0; mode < 3; mode++, call++) {
                const int how = call % 9, derived = call % 7 == 3;
                MPI_Request req[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                                      MPI_REQUEST_NULL};
                ring_t x;
                call_t c;
                snprintf(what, sizeof(what), "I%s k=%d mode %d%s method %d",
                         v ? "allgatherv" : "allgather", ks[ki], mode, derived ? " pair" : "", how);
                setup(&c, ic, ic->inter, v, ks[ki], mode, derived, call);
                /* [ring recv, ours, null, ring send] */
                ring_post(&x, call, &req[0], &req[3]);
                start(&c, &req[1]);
                MT_CHECK(req[1] != MPI_REQUEST_NULL, "%s: no request", what);
                complete(how, 4, req, 1, 0, what);
                ring_check(&x, call);
                verify(&c, what);
            }
}

/* Three operations outstanding on two intercommunicators, completed in opposite orders by the
 * groups with MPI_Wait alone; then a blocking intercommunicator allgather while one runs. */
static void outstanding(const mt_inter_t *ic, MPI_Comm inter2)
{
    call_t c[3];
    MPI_Request r[3];
    int i;

    setup(&c[0], ic, ic->inter, 0, 40, 0, 0, 500);
    setup(&c[1], ic, inter2, 1, 33, 0, 0, 501);
    setup(&c[2], ic, ic->inter, 1, 20, 1, 0, 502);
    for (i = 0; i < 3; i++)
        start(&c[i], &r[i]);
    for (i = 0; i < 3; i++)
        MT_MPI(MPI_Wait(&r[ic->group ? 2 - i : i], MPI_STATUS_IGNORE));
    verify(&c[0], "outstanding 0");
    verify(&c[1], "outstanding 1");
    verify(&c[2], "outstanding 2");

    { /* the blocking call needs both groups while the nonblocking one is still open */
        call_t b;
        setup(&c[0], ic, ic->inter, 1, 25, 0, 0, 503);
        setup(&b, ic, inter2, 0, 17, 2, 0, 504);
        start(&c[0], &r[0]);
        MT_MPI(MPI_Allgather(b.sbuf, b.scount, MPI_INT, b.rbuf, b.rcount, MPI_INT, inter2));
        MT_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        verify(&b, "blocking beside outstanding");
        verify(&c[0], "outstanding beside blocking");
    }
}

/* A communicator error handler that counts. */
static int handler_calls;
static void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void) comm;
    (void) code;
    handler_calls++;
}

static void errors(const mt_inter_t *ic)
{
    MPI_Errhandler eh;
    MPI_Request r = MPI_REQUEST_NULL;
    int sbuf[4] = {0}, rbuf[64], rc;

    MT_MPI(MPI_Comm_create_errhandler(count_errors, &eh));
    MT_MPI(MPI_Comm_set_errhandler(ic->inter, eh));
    rc = MPI_Iallgather(sbuf, -1, MPI_INT, rbuf, 1, MPI_INT, ic->inter, &r);
    MT_CHECK(rc != MPI_SUCCESS, "a negative count was accepted");
    MT_CHECK(handler_calls == 1, "the error handler ran %d times", handler_calls);
    MT_MPI(MPI_Comm_set_errhandler(ic->inter, MPI_ERRORS_ARE_FATAL));
    MT_MPI(MPI_Errhandler_free(&eh));
}

#if MPI_VERSION >= 4
static void expect_empty(const MPI_Status *st, const char *what)
{
    int n = -1;
    MT_MPI(MPI_Get_count(st, MPI_INT, &n));
    MT_CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && n == 0,
             "%s: status not empty (source %d tag %d count %d)", what, st->MPI_SOURCE, st->MPI_TAG,
             n);
}

/* Inactive persistent requests complete at once, with an empty status, and stay. */
static void inactive(MPI_Request *p)
{
    MPI_Request arr[2] = {*p, MPI_REQUEST_NULL};
    MPI_Status st;
    int flag = 0, idx = 0;

    MT_MPI(MPI_Wait(p, &st));
    expect_empty(&st, "Wait on an inactive request");
    MT_MPI(MPI_Test(p, &flag, &st));
    MT_CHECK(flag, "Test on an inactive request: flag 0");
    expect_empty(&st, "Test on an inactive request");
    MT_MPI(MPI_Request_get_status(*p, &flag, &st));
    MT_CHECK(flag, "Request_get_status on an inactive request: flag 0");
    MT_MPI(MPI_Testany(2, arr, &idx, &flag, MPI_STATUS_IGNORE));
    MT_CHECK(flag && idx == MPI_UNDEFINED, "Testany on inactive: flag %d index %d", flag, idx);
    MT_MPI(MPI_Waitany(2, arr, &idx, MPI_STATUS_IGNORE));
    MT_CHECK(idx == MPI_UNDEFINED, "Waitany on inactive: index %d", idx);
    MT_MPI(MPI_Waitall(2, arr, MPI_STATUSES_IGNORE));
    MT_CHECK(*p != MPI_REQUEST_NULL && arr[0] == *p, "an inactive persistent request was freed");
}

/* Persistent allgather and allgatherv, started again and again with new data. */
static void persistent(const mt_inter_t *ic, MPI_Comm inter2)
{
    call_t a, b;
    MPI_Request req[4], ra, rb, rs, rr;
    ring_t x = {0, 0, 0};
    const int w = mt_world_rank;
    int it, i;
    char what[64];

    setup(&a, ic, ic->inter, 0, 50, 0, 0, 600);
    setup(&b, ic, inter2, 1, 9, 2, 0, 601);
    MT_MPI(MPI_Allgather_init(a.sbuf, a.scount, MPI_INT, a.rbuf, a.rcount, MPI_INT, ic->inter,
                              MPI_INFO_NULL, &ra));
    MT_MPI(MPI_Allgatherv_init(b.sbuf, b.scount, MPI_INT, b.rbuf, b.rcounts, b.displs, MPI_INT,
                               inter2, MPI_INFO_NULL, &rb));
    inactive(&ra); /* never started */
    inactive(&rb);
    x.left = (w + wsize - 1) % wsize;
    MT_MPI(MPI_Recv_init(&x.in, 1, MPI_INT, x.left, 98, MPI_COMM_WORLD, &rr));
    MT_MPI(MPI_Send_init(&x.out, 1, MPI_INT, (w + 1) % wsize, 98, MPI_COMM_WORLD, &rs));
    for (it = 0; it < 6; it++) {
        /* new data, and the MPI library's answer for it */
        for (i = 0; i < 4 * 50 + 1; i++)
            a.sbuf[i] = mt_value(ic->group, ic->rank, i, 700 + it);
        for (i = 0; i < 4 * 9 + 1; i++)
            b.sbuf[i] = mt_value(ic->group, ic->rank, i, 800 + it);
        memset(a.rbuf, FILL, a.rbytes);
        memset(b.rbuf, FILL, b.rbytes);
        memset(a.ref, FILL, a.rbytes);
        memset(b.ref, FILL, b.rbytes);
        MT_MPI(PMPI_Allgather(a.sbuf, a.scount, MPI_INT, a.ref, a.rcount, MPI_INT, ic->inter));
        MT_MPI(PMPI_Allgatherv(b.sbuf, b.scount, MPI_INT, b.ref, b.rcounts, b.displs, MPI_INT,
                               inter2));
        x.out = w * 7 + it;
        x.in = -1;
        snprintf(what, sizeof(what), "persistent iteration %d", it);
        if (it % 3 == 2) { /* MPI_Start each, completed one by one */
            MT_MPI(MPI_Start(&rr));
            MT_MPI(MPI_Start(&ra));
            MT_MPI(MPI_Start(&rb));
            MT_MPI(MPI_Start(&rs));
            MT_MPI(MPI_Wait(ic->group ? &rb : &ra, MPI_STATUS_IGNORE));
            MT_MPI(MPI_Wait(ic->group ? &ra : &rb, MPI_STATUS_IGNORE));
            MT_MPI(MPI_Wait(&rr, MPI_STATUS_IGNORE));
            MT_MPI(MPI_Wait(&rs, MPI_STATUS_IGNORE));
        } else { /* with the program's own persistent requests */
            MPI_Status st[4];
            int flag = 0, cnt, idx[4], n = 0, none = 0;
            req[0] = rr;
            req[1] = ra;
            req[2] = rb;
            req[3] = rs;
            MT_MPI(MPI_Startall(4, req));
            if (it % 3 == 0) {
                MT_MPI(MPI_Waitall(4, req, st));
                MT_CHECK(st[0].MPI_SOURCE == x.left, "%s: receive source %d", what,
                         st[0].MPI_SOURCE);
            } else {
                while (n < 4) {
                    MT_MPI(MPI_Testsome(4, req, &cnt, idx, st));
                    none += cnt == MPI_UNDEFINED;
                    n += cnt == MPI_UNDEFINED ? 4 : cnt;
                }
                MT_CHECK(none == 0, "%s: Testsome saw nothing active", what);
                MT_MPI(MPI_Testall(4, req, &flag, MPI_STATUSES_IGNORE)); /* all inactive now */
                MT_CHECK(flag, "%s: Testall on inactive requests", what);
            }
            MT_CHECK(req[0] == rr && req[1] == ra && req[2] == rb && req[3] == rs,
                     "%s: a persistent request changed", what);
        }
        ring_check(&x, it);
        MT_CHECK(memcmp(a.rbuf, a.ref, a.rbytes) == 0, "%s: allgather differs", what);
        MT_CHECK(memcmp(b.rbuf, b.ref, b.rbytes) == 0, "%s: allgatherv differs", what);
        wrong += memcmp(a.rbuf, a.ref, a.rbytes) != 0 || memcmp(b.rbuf, b.ref, b.rbytes) != 0;
        if (nsums + 2 <= MAX_SUMS) {
            sums[nsums++] = fnv(a.rbuf, a.rbytes);
            sums[nsums++] = fnv(b.rbuf, b.rbytes);
        }
    }
    inactive(&ra);
    MT_MPI(MPI_Request_free(&ra));
    MT_MPI(MPI_Request_free(&rb));
    MT_MPI(MPI_Request_free(&rr));
    MT_MPI(MPI_Request_free(&rs));
    MT_CHECK(ra == MPI_REQUEST_NULL && rb == MPI_REQUEST_NULL, "Request_free left the handle");
    verify(&a, "persistent allgather");
    verify(&b, "persistent allgatherv");
}
#endif

int main(int argc, char **argv)
{
    mt_inter_t ic;
    MPI_Comm inter2;
    uint64_t *every = NULL;
    int total = 0, i, j, rc, persistent_only = 0;

    for (i = 1; i < argc; i++)
        persistent_only |= strcmp(argv[i], "--persistent") == 0;
    mt_init(&argc, &argv, 1, &ic);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MT_MPI(MPI_Comm_dup(ic.inter, &inter2));
    MT_MPI(MPI_Type_vector(2, 1, 3, MPI_INT, &pair));
    MT_MPI(MPI_Type_commit(&pair));

    if (!persistent_only) {
        shapes(&ic);
        outstanding(&ic, inter2);
        errors(&ic);
    }
#if MPI_VERSION >= 4
    if (persistent_only)
        persistent(&ic, inter2);
#endif

    if (mt_world_rank == 0)
        every = malloc((size_t) wsize * MAX_SUMS * sizeof(uint64_t));
    MT_MPI(
        MPI_Gather(sums, MAX_SUMS, MPI_UINT64_T, every, MAX_SUMS, MPI_UINT64_T, 0, MPI_COMM_WORLD));
    MT_MPI(MPI_Reduce(&wrong, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (mt_world_rank == 0) {
        for (i = 0; i < wsize; i++)
            for (j = 0; j < nsums; j++)
                printf("rank %d result %d checksum %016llx\n", i, j,
                       (unsigned long long) every[i * MAX_SUMS + j]);
        printf("wrong elements: %d\n", total);
        free(every);
    }
    MT_MPI(MPI_Type_free(&pair));
    MT_MPI(MPI_Comm_free(&inter2));
    rc = mt_finish("plain_nbc_intercomm");
    mt_free_inter(&ic);
    MPI_Finalize();
    return rc;
}
