/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node-hierarchical staging, run under virtual nodes (XFER_NODE_SIZE, XFER_NODE_MAP set by the
 * test driver), compared byte for byte with the MPI library's intercommunicator collective:
 *   - every inner algorithm x {flags, barrier} x {allgather, allgatherv} x {full, A->B, B->A}
 *     x counts (0, odd, 16 KiB; zeros and skew) x {MPI_INT, a non-contiguous type};
 *   - 100 back-to-back calls with changing data, blocking and persistent interleaved (the
 *     double buffering must never show stale or torn data although early ranks leave), with the
 *     model's inner algorithm and with hier:direct;
 *   - random arrival delays (fixed seed per rank), flags and barrier, with a timeout so that a
 *     hang fails the test instead of stalling it;
 *   - hier:direct: the first arrivers ship and receive; a late static leader rarely does;
 *   - statistics: ranks that move no data between the groups spend no time in the inter phase.
 *
 * Usage: mpiexec -n P+Q test_hier --p P [--senders L] [--quick]
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include <xfer/xfer.h>

#include "../support/mpitest.h"

static const char *inners[] = {"auto",        "fc_half",   "fc_full",  "fc_full_v",
                               "ring_half",   "ring_full", "ring",     "native",
                               "root_gather", "direct",    "fc_direct"};
#define NINNER ((int) (sizeof(inners) / sizeof(inners[0])))

static int senders = 1;
static int quick = 0; /* --quick: fewer variants, for valgrind */

static int sends(int dup, int group)
{
    return dup == 0 || (dup == 1 && group == 0) || (dup == 2 && group == 1);
}

static int vcount(int pat, int g, int r)
{
    switch (pat) {
    case 0:
        return 0;
    case 1:
        return 7;
    case 2:
        return 4096;
    case 3:
        return r % 2 ? 0 : 11 * (r + 1) + g; /* zeros and skew */
    default:
        return r == 0 ? 4096 : r % 3; /* one large block */
    }
}

static void opts_for(xfer_coll_opts_t *o, const char *inner, xfer_hier_sync_t sync, char *name,
                     size_t len)
{
    xfer_coll_opts_init(o);
    snprintf(name, len, "hier:%s", inner);
    o->algorithm = name;
    o->fallback = XFER_FALLBACK_ERROR;
    o->hier_senders = senders;
    o->hier_sync = sync;
    o->timeout_ms = 20000; /* a hang fails instead of stalling the suite */
}

/* One call of every inner algorithm on the same arguments, each compared with native. */
static void matrix(const mt_inter_t *ic)
{
    const int g = ic->group, o = 1 - g, nr = ic->nremote;
    MPI_Datatype gapped;
    int kind, dup, pat, dt, a, i, salt = 0;
    xfer_hier_sync_t sync;

    MT_MPI(MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint) sizeof(int), &gapped));
    MT_MPI(MPI_Type_commit(&gapped));
    for (kind = 0; kind < 2; kind++)
        for (dup = 0; dup < 3; dup++)
            for (pat = 0; pat < (kind ? 5 : 3); pat++)
                for (dt = 0; dt < 2; dt++) {
                    const MPI_Datatype type = dt ? gapped : MPI_INT;
                    const int ipe = dt ? 2 : 1;
                    int scount, *rcounts = calloc((size_t) nr, sizeof(int));
                    int *displs = calloc((size_t) nr, sizeof(int)), len = 2, tot_a = 0, tot_b = 0;
                    int *sbuf, *rref, *rbuf;
                    size_t rbytes;

                    salt++;
                    scount = sends(dup, g) ? vcount(pat, g, kind ? ic->rank : 0) : 0;
                    for (i = 0; i < nr; i++) {
                        rcounts[i] = sends(dup, o) ? vcount(pat, o, kind ? i : 0) : 0;
                        displs[i] = len - 2;
                        len += rcounts[i];
                    }
                    for (i = 0; i < ic->nlocal; i++) /* totals, to know what is supported */
                        tot_a += sends(dup, g) ? vcount(pat, g, kind ? i : 0) : 0;
                    for (i = 0; i < nr; i++)
                        tot_b += rcounts[i];
                    rbytes = (size_t) len * (size_t) ipe * sizeof(int);
                    sbuf = calloc((size_t) (scount + 1) * (size_t) ipe, sizeof(int));
                    rref = malloc(rbytes);
                    rbuf = malloc(rbytes);
                    for (i = 0; i < scount * ipe; i++)
                        sbuf[i] = i % ipe == 0 ? mt_value(g, ic->rank, i / ipe, salt) : -1;
                    memset(rref, 0x5A, rbytes);
                    if (kind == 0)
                        MT_MPI(
                            MPI_Allgather(sbuf, scount, type, rref, rcounts[0], type, ic->inter));
                    else
                        MT_MPI(MPI_Allgatherv(sbuf, scount, type, rref, rcounts, displs, type,
                                              ic->inter));
                    for (sync = XFER_HIER_SYNC_FLAGS; sync <= XFER_HIER_SYNC_BARRIER; sync++)
                        for (a = 0; a < NINNER; a++) {
                            const char *only = getenv("XFER_TEST_INNER"); /* for debugging */
                            xfer_coll_opts_t op;
                            char name[64];
                            xfer_status_t st, want = XFER_SUCCESS;
                            const int half_only =
                                !strcmp(inners[a], "fc_half") || !strcmp(inners[a], "ring_half");
                            if (only && strcmp(only, inners[a]) != 0)
                                continue;
                            if (quick && strcmp(inners[a], "direct") &&
                                strcmp(inners[a], "fc_full"))
                                continue;
                            if (half_only && tot_a > 0 && tot_b > 0)
                                want = XFER_ERR_NOT_SUPPORTED;
                            opts_for(&op, inners[a], sync, name, sizeof(name));
                            memset(rbuf, 0x5A, rbytes);
                            if (kind == 0)
                                st = xfer_allgather_inter(sbuf, scount, type, rbuf, rcounts[0],
                                                          type, ic->inter, &op);
                            else
                                st = xfer_allgatherv_inter(sbuf, scount, type, rbuf, rcounts,
                                                           displs, type, ic->inter, &op);
                            MT_CHECK(st == want,
                                     "%s %s kind %d dup %d pattern %d type %d: %s, want %s (%s)",
                                     name, sync == XFER_HIER_SYNC_FLAGS ? "flags" : "barrier", kind,
                                     dup, pat, dt, xfer_status_name(st), xfer_status_name(want),
                                     xfer_last_error());
                            if (st == XFER_SUCCESS && (tot_a > 0 || tot_b > 0)) {
                                xfer_op_stats_t ss;
                                xfer_last_op_stats(&ss);
                                MT_CHECK(ss.hier == 1,
                                         "%s: the call did not go through the "
                                         "hierarchy",
                                         name);
                            }
                            if (st == XFER_SUCCESS)
                                MT_CHECK(memcmp(rbuf, rref, rbytes) == 0,
                                         "%s %s kind %d dup %d pattern %d type %d: result "
                                         "differs from native",
                                         name, sync == XFER_HIER_SYNC_FLAGS ? "flags" : "barrier",
                                         kind, dup, pat, dt);
                        }
                    free(sbuf);
                    free(rref);
                    free(rbuf);
                    free(rcounts);
                    free(displs);
                }
    MPI_Type_free(&gapped);
}

/* 100 calls with changing data; every 10th goes through a persistent plan. In half duplex
 * (A -> B) the producer ranks that lead their node arrive late, so the others deposit and leave
 * up to two calls ahead: a missing guard on the double buffer shows up as stale or torn data. */
static void repeated(const mt_inter_t *ic, const char *inner, xfer_hier_sync_t sync, int half)
{
    const int g = ic->group, o = 1 - g, nr = ic->nremote, k = 257;
    const int scount = half && g == 1 ? 0 : k, rcount = half && g == 0 ? 0 : k;
    int *sbuf = malloc((size_t) k * sizeof(int)), *rbuf = malloc((size_t) k * nr * sizeof(int));
    xfer_plan_t *plan = NULL;
    xfer_coll_opts_t op;
    xfer_op_stats_t stats;
    char name[64];
    int it, i, j, bad = 0, late = 0;

    opts_for(&op, inner, sync, name, sizeof(name));
    MT_CHECK(xfer_allgather_inter_init(sbuf, scount, MPI_INT, rbuf, rcount, MPI_INT, ic->inter, &op,
                                       &plan) == XFER_SUCCESS,
             "persistent init: %s", xfer_last_error());
    for (it = 0; it < (quick ? 20 : 100) && !bad; it++) {
        xfer_status_t st;
        if (late) {
            struct timespec ts = {0, 300000L};
            nanosleep(&ts, NULL);
        }
        for (i = 0; i < k; i++)
            sbuf[i] = mt_value(g, ic->rank, i, 1000 + it);
        memset(rbuf, 0, (size_t) k * nr * sizeof(int));
        if (it % 10 == 9) {
            st = xfer_start(plan);
            if (st == XFER_SUCCESS)
                st = xfer_wait(plan);
        } else {
            st = xfer_allgather_inter(sbuf, scount, MPI_INT, rbuf, rcount, MPI_INT, ic->inter, &op);
        }
        MT_CHECK(st == XFER_SUCCESS, "call %d: %s", it, xfer_last_error());
        xfer_last_op_stats(&stats);
        late = half && g == 0 && stats.leader;
        for (j = 0; j < nr && rcount && !bad; j++)
            for (i = 0; i < k; i++)
                if (rbuf[j * k + i] != mt_value(o, j, i, 1000 + it)) {
                    MT_CHECK(0, "%s %s call %d: element %d of rank %d stale or torn", name,
                             half ? "A->B" : "full", it, i, j);
                    bad = 1;
                    break;
                }
    }
    xfer_plan_free(&plan);
    free(sbuf);
    free(rbuf);
}

/* Random arrival delays (fixed seed per rank) in half duplex A -> B and full duplex. */
static void delays(const mt_inter_t *ic, const char *inner, xfer_hier_sync_t sync)
{
    const int g = ic->group, o = 1 - g, nr = ic->nremote, k = 1024;
    int *sbuf = malloc((size_t) k * sizeof(int)), *rbuf = malloc((size_t) k * nr * sizeof(int));
    unsigned seed = 1234u + (unsigned) mt_world_rank * 7919u;
    xfer_coll_opts_t op;
    xfer_op_stats_t stats;
    char name[64];
    int it, i, j, full, bad = 0;

    opts_for(&op, inner, sync, name, sizeof(name));
    for (it = 0; it < 30 && !bad; it++) {
        struct timespec ts;
        full = it % 2;
        seed = seed * 1103515245u + 12345u;
        ts.tv_sec = 0;
        ts.tv_nsec = (long) ((seed >> 8) % 3000u) * 1000L; /* 0-3 ms late */
        nanosleep(&ts, NULL);
        for (i = 0; i < k; i++)
            sbuf[i] = mt_value(g, ic->rank, i, 5000 + it);
        memset(rbuf, 0, (size_t) k * nr * sizeof(int));
        MT_CHECK(xfer_allgather_inter(sbuf, full || g == 0 ? k : 0, MPI_INT, rbuf,
                                      full || g == 1 ? k : 0, MPI_INT, ic->inter,
                                      &op) == XFER_SUCCESS,
                 "%s delayed call %d: %s", name, it, xfer_last_error());
        xfer_last_op_stats(&stats);
        MT_CHECK(stats.hier == 1 && (stats.leader || stats.inter_s == 0.0),
                 "call %d: a non-leader spent time between the groups", it);
        if (full || g == 1)
            for (j = 0; j < nr && !bad; j++)
                for (i = 0; i < k; i++)
                    if (rbuf[j * k + i] != mt_value(o, j, i, 5000 + it)) {
                        MT_CHECK(0, "%s delayed call %d: wrong byte from rank %d", name, it, j);
                        bad = 1;
                        break;
                    }
    }
    free(sbuf);
    free(rbuf);
}

/* hier:direct, A -> B: the first ranks of a node to arrive ship (producers) or receive
 * (consumers) for it. The lowest rank of every node (the static leader of the other variants)
 * arrives 5 ms late -- the producers' in even calls, the consumers' in odd ones: each node must
 * still have had 1..senders shippers or receivers, and on nodes with company the late rank must
 * rarely be one (it may, when the others were descheduled: the check is on the majority). */
static void dynamic_roles(const mt_inter_t *ic)
{
    const int g = ic->group, o = 1 - g, nr = ic->nremote, k = 300, calls = 20;
    const long ns = getenv("XFER_NODE_SIZE") ? atol(getenv("XFER_NODE_SIZE")) : 1;
    const int rr = getenv("XFER_NODE_MAP") && !strcmp(getenv("XFER_NODE_MAP"), "roundrobin");
    const int nn = (int) ((ic->nlocal + ns - 1) / ns);
    const int node = rr ? ic->rank % nn : (int) (ic->rank / ns);
    const int first = rr ? ic->rank < nn : ic->rank % ns == 0;
    int *sbuf = malloc((size_t) k * sizeof(int)), *rbuf = malloc((size_t) k * nr * sizeof(int));
    int *cnt = malloc((size_t) nn * sizeof(int)), *size = malloc((size_t) nn * sizeof(int));
    int it, i, j, late = 0, m;
    xfer_coll_opts_t op;
    xfer_op_stats_t stats;
    char name[64];

    opts_for(&op, "direct", XFER_HIER_SYNC_FLAGS, name, sizeof(name));
    for (m = 0; m < nn; m++)
        size[m] = 0;
    size[node] = 1;
    MT_MPI(MPI_Allreduce(MPI_IN_PLACE, size, nn, MPI_INT, MPI_SUM, ic->local));
    for (it = 0; it < calls; it++) {
        int is_late;
        for (i = 0; i < k; i++)
            sbuf[i] = mt_value(g, ic->rank, i, 7000 + it);
        /* calls start together, so that who arrives first depends on this call's delay only */
        MT_MPI(MPI_Barrier(ic->inter));
        if (first && (it & 1) == g) { /* the static leader of every node comes late: the
                                       * producers' in even calls, the consumers' in odd ones */
            /* 30 ms: several scheduler time slices, so that on an oversubscribed, loaded
             * machine (8 ranks on 2 cores under ASan) the others have really arrived */
            struct timespec ts = {0, 30000000L};
            nanosleep(&ts, NULL);
        }
        MT_CHECK(xfer_allgather_inter(sbuf, g == 0 ? k : 0, MPI_INT, rbuf, g == 1 ? k : 0, MPI_INT,
                                      ic->inter, &op) == XFER_SUCCESS,
                 "%s call %d: %s", name, it, xfer_last_error());
        xfer_last_op_stats(&stats);
        for (m = 0; m < nn; m++)
            cnt[m] = 0;
        cnt[node] = (stats.roles & (g == 0 ? 1 : 2)) != 0;
        MT_MPI(MPI_Allreduce(MPI_IN_PLACE, cnt, nn, MPI_INT, MPI_SUM, ic->local));
        for (m = 0; m < nn; m++)
            MT_CHECK(cnt[m] >= 1 && cnt[m] <= senders,
                     "%s call %d: node %d had %d %s ranks (1..%d expected)", name, it, m, cnt[m],
                     g == 0 ? "shipping" : "receiving", senders);
        if (g == 1) {
            MT_CHECK((stats.roles & 1) == 0, "%s call %d: a consumer shipped", name, it);
            for (j = 0; j < nr; j++)
                for (i = 0; i < k; i++)
                    if (rbuf[j * k + i] != mt_value(o, j, i, 7000 + it)) {
                        MT_CHECK(0, "%s call %d: wrong element %d from rank %d", name, it, i, j);
                        j = nr;
                        break;
                    }
        } else {
            MT_CHECK((stats.roles & 2) == 0, "%s call %d: a producer received", name, it);
        }
        is_late = first && (stats.roles & (g == 0 ? 1 : 2)) != 0;
        late += size[node] > 1 && is_late && (it & 1) == g;
    }
    MT_MPI(MPI_Allreduce(MPI_IN_PLACE, &late, 1, MPI_INT, MPI_SUM, ic->local));
    {
        int crowded = 0;
        for (m = 0; m < nn; m++)
            crowded += size[m] > 1;
        MT_CHECK(2 * late <= crowded * (calls / 2),
                 "%s: the late rank %s in %d of %d node-calls although others had arrived", name,
                 g == 0 ? "shipped" : "received", late, crowded * (calls / 2));
    }
    free(sbuf);
    free(rbuf);
    free(cnt);
    free(size);
}

int main(int argc, char **argv)
{
    mt_inter_t ic;
    int i, rc;

    for (i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--senders") && i + 1 < argc)
            senders = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
    mt_init(&argc, &argv, 3, &ic);
    matrix(&ic);
    for (i = quick; i < 2; i++) { /* the model's choice, and the arrival-order protocol */
        const char *inner = i ? "direct" : "auto";
        repeated(&ic, inner, XFER_HIER_SYNC_FLAGS, 0);
        repeated(&ic, inner, XFER_HIER_SYNC_BARRIER, 0);
        repeated(&ic, inner, XFER_HIER_SYNC_FLAGS, 1);
        repeated(&ic, inner, XFER_HIER_SYNC_BARRIER, 1);
        if (quick)
            break;
        delays(&ic, inner, XFER_HIER_SYNC_FLAGS);
        delays(&ic, inner, XFER_HIER_SYNC_BARRIER);
    }
    if (!quick)
        dynamic_roles(&ic);
    mt_free_inter(&ic);
    rc = mt_finish("test_hier");
    MPI_Finalize();
    return rc;
}
