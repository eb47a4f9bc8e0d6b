/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad input gives a clear status and message, never a crash, a hang or a corrupted buffer:
 * invalid arguments, an intracommunicator, unknown or unsuitable forced algorithms, duplex
 * contradictions; with XFER_CHECK, mismatched counts, types, algorithms and one rank's own bad
 * arguments are reported on every rank and leave receive buffers untouched; a peer that does
 * not show up makes the call time out naming it.
 *
 * Usage: mpiexec -n 4 test_bad_input --p 2   (the timeout case needs p = q)
 */
#include <xfer/xfer.h>

#include "../support/mpitest.h"

#define K 16

static int *rbuf, *sbuf, rcounts[64], displs[64];

static void reset(const mt_inter_t *ic)
{
    int i;
    for (i = 0; i < K; i++)
        sbuf[i] = mt_value(ic->group, ic->rank, i, 5);
    memset(rbuf, 0x11, (size_t) K * (size_t) ic->nremote * sizeof(int));
    for (i = 0; i < ic->nremote; i++) {
        rcounts[i] = K;
        displs[i] = i * K;
    }
}

static int untouched(const mt_inter_t *ic)
{
    size_t i, n = (size_t) K * (size_t) ic->nremote * sizeof(int);
    for (i = 0; i < n; i++)
        if (((unsigned char *) rbuf)[i] != 0x11)
            return 0;
    return 1;
}

#define EXPECT(call, want, what)                                                                   \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        MT_CHECK(st_ == (want), "%s: got %s, want %s (%s)", what, xfer_status_name(st_),           \
                 xfer_status_name(want), xfer_last_error());                                       \
        MT_CHECK(strlen(xfer_last_error()) > 10, "%s: no message", what);                          \
    } while (0)

static void local_errors(const mt_inter_t *ic)
{
    xfer_coll_opts_t o;

    /* Each of these is detected before any communication, identically on every rank. */
    reset(ic);
    EXPECT(xfer_allgather_inter(sbuf, -1, MPI_INT, rbuf, K, MPI_INT, ic->inter, NULL),
           XFER_ERR_INVALID_ARG, "negative sendcount");
    MT_CHECK(strstr(xfer_last_error(), "sendcount is negative") != NULL, "message: %s",
             xfer_last_error());
    EXPECT(xfer_allgather_inter(NULL, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, NULL),
           XFER_ERR_INVALID_ARG, "NULL sendbuf");
    EXPECT(xfer_allgather_inter(sbuf, K, MPI_INT, NULL, K, MPI_INT, ic->inter, NULL),
           XFER_ERR_INVALID_ARG, "NULL recvbuf");
    EXPECT(xfer_allgather_inter(MPI_IN_PLACE, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, NULL),
           XFER_ERR_INVALID_ARG, "MPI_IN_PLACE");
    EXPECT(xfer_allgather_inter(sbuf, K, MPI_DATATYPE_NULL, rbuf, K, MPI_INT, ic->inter, NULL),
           XFER_ERR_INVALID_ARG, "MPI_DATATYPE_NULL");
    rcounts[ic->nremote - 1] = -4;
    EXPECT(xfer_allgatherv_inter(sbuf, K, MPI_INT, rbuf, rcounts, displs, MPI_INT, ic->inter, NULL),
           XFER_ERR_INVALID_ARG, "negative recvcounts");
    EXPECT(xfer_allgatherv_inter(sbuf, K, MPI_INT, rbuf, NULL, displs, MPI_INT, ic->inter, NULL),
           XFER_ERR_INVALID_ARG, "NULL recvcounts");
    EXPECT(xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, MPI_COMM_WORLD, NULL),
           XFER_ERR_NOT_INTERCOMM, "intracommunicator");
    MT_CHECK(strstr(xfer_last_error(), "intracommunicator") != NULL, "message: %s",
             xfer_last_error());
    EXPECT(xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, MPI_COMM_NULL, NULL),
           XFER_ERR_INVALID_ARG, "MPI_COMM_NULL");

    xfer_coll_opts_init(&o);
    o.algorithm = "fastest_please";
    EXPECT(xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, &o),
           XFER_ERR_UNKNOWN_ALGORITHM, "unknown algorithm");
    MT_CHECK(strstr(xfer_last_error(), "fc_full") != NULL, "message lists algorithms: %s",
             xfer_last_error());
    xfer_coll_opts_init(&o);
    o.duplex = (xfer_duplex_t) 9;
    EXPECT(xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, &o),
           XFER_ERR_INVALID_ARG, "invalid duplex value");
    xfer_coll_opts_init(&o);
    o.hier_sync = (xfer_hier_sync_t) 7;
    EXPECT(xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, &o),
           XFER_ERR_INVALID_ARG, "invalid hier_sync value");
    MT_CHECK(strstr(xfer_last_error(), "opts->hier_sync") != NULL, "message: %s",
             xfer_last_error());
    memset(&o, 0, sizeof(o)); /* never initialised: no struct_size */
    EXPECT(xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, &o),
           XFER_ERR_INVALID_ARG, "options without struct_size");
    MT_CHECK(strstr(xfer_last_error(), "struct_size") != NULL, "message: %s", xfer_last_error());
    MT_CHECK(untouched(ic), "a rejected call wrote the receive buffer");
}

static void shape_errors(const mt_inter_t *ic)
{
    xfer_coll_opts_t o;

    /* consistent on every rank: both groups send, so no half-duplex algorithm applies */
    reset(ic);
    xfer_coll_opts_init(&o);
    o.algorithm = "fc_half";
    o.fallback = XFER_FALLBACK_ERROR;
    EXPECT(xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, &o),
           XFER_ERR_NOT_SUPPORTED, "fc_half on a full-duplex call");
    MT_CHECK(strstr(xfer_last_error(), "fc_half") != NULL, "message: %s", xfer_last_error());
    xfer_coll_opts_init(&o);
    o.duplex = XFER_DUPLEX_HALF;
    EXPECT(xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, &o),
           XFER_ERR_INVALID_ARG, "duplex=half with both sides sending");
    MT_CHECK(untouched(ic), "a rejected call wrote the receive buffer");

    /* with fallback=warn the same forced algorithm degrades to auto and works */
    xfer_coll_opts_init(&o);
    o.algorithm = "fc_half";
    o.fallback = XFER_FALLBACK_WARN;
    MT_CHECK(xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, &o) ==
                 XFER_SUCCESS,
             "fallback=warn: %s", xfer_last_error());
    MT_CHECK(rbuf[0] == mt_value(1 - ic->group, 0, 0, 5), "fallback result");
}

static void checked_mismatches(const mt_inter_t *ic)
{
    xfer_coll_opts_t o;
    xfer_status_t st;
    float *fbuf = calloc((size_t) K * (size_t) ic->nremote, sizeof(float));

    xfer_coll_opts_init(&o);
    o.check = XFER_CHECK_ON;

    /* group B expects one element more per rank than A sends */
    reset(ic);
    st = xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, ic->group == 1 ? K + 1 : K, MPI_INT,
                              ic->inter, &o);
    MT_CHECK(st == XFER_ERR_MISMATCH, "count mismatch: %s", xfer_status_name(st));
    if (ic->group == 1)
        MT_CHECK(strstr(xfer_last_error(), "sends 64 bytes but this rank expects 68"),
                 "message: %s", xfer_last_error());
    MT_CHECK(untouched(ic), "mismatched call wrote the receive buffer");

    /* same sizes, different types: A sends int, B receives float */
    reset(ic);
    if (ic->group == 1)
        st = xfer_allgather_inter(sbuf, K, MPI_INT, fbuf, K, MPI_FLOAT, ic->inter, &o);
    else
        st = xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, &o);
    MT_CHECK(st == XFER_ERR_MISMATCH, "type mismatch: %s", xfer_status_name(st));
    if (ic->group == 1)
        MT_CHECK(strstr(xfer_last_error(), "type signature"), "message: %s", xfer_last_error());

    /* a vector type and a contiguous type with the same signature are NOT a mismatch */
    {
        MPI_Datatype vec;
        int *wide = calloc(2 * K, sizeof(int)), i;
        MT_MPI(MPI_Type_vector(K, 1, 2, MPI_INT, &vec));
        MT_MPI(MPI_Type_commit(&vec));
        for (i = 0; i < K; i++)
            wide[2 * i] = sbuf[i];
        reset(ic);
        st = ic->group == 0
                 ? xfer_allgather_inter(wide, 1, vec, rbuf, K, MPI_INT, ic->inter, &o)
                 : xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, &o);
        MT_CHECK(st == XFER_SUCCESS, "equal signatures rejected: %s", xfer_last_error());
        MT_CHECK(rbuf[K - 1] == mt_value(1 - ic->group, 0, K - 1, 5), "vector result");
        MPI_Type_free(&vec);
        free(wide);
    }

    /* the two groups force different algorithms */
    reset(ic);
    o.algorithm = ic->group == 0 ? "fc_full" : "root_gather";
    st = xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, K, MPI_INT, ic->inter, &o);
    MT_CHECK(st == XFER_ERR_MISMATCH, "algorithm mismatch: %s", xfer_status_name(st));
    MT_CHECK(strstr(xfer_last_error(), "selected") || strstr(xfer_last_error(), "another rank"),
             "message: %s", xfer_last_error());
    o.algorithm = NULL;

    /* one rank's own arguments are invalid: it gets INVALID_ARG, every other rank MISMATCH */
    reset(ic);
    st = xfer_allgather_inter(sbuf, (ic->group == 0 && ic->rank == 0) ? -2 : K, MPI_INT, rbuf, K,
                              MPI_INT, ic->inter, &o);
    if (ic->group == 0 && ic->rank == 0)
        MT_CHECK(st == XFER_ERR_INVALID_ARG, "bad rank: %s", xfer_status_name(st));
    else
        MT_CHECK(st == XFER_ERR_MISMATCH, "other ranks: %s", xfer_status_name(st));
    MT_CHECK(untouched(ic), "call with an invalid rank wrote the receive buffer");

    /* and a correct call in check mode goes through */
    reset(ic);
    MT_CHECK(xfer_allgatherv_inter(sbuf, K, MPI_INT, rbuf, rcounts, displs, MPI_INT, ic->inter,
                                   &o) == XFER_SUCCESS,
             "checked call: %s", xfer_last_error());
    MT_CHECK(rbuf[K * ic->nremote - 1] == mt_value(1 - ic->group, ic->nremote - 1, K - 1, 5),
             "checked call result");
    free(fbuf);
}

/* Group B shows up late: group A, the receiving side, times out naming the missing peer. Then
 * B makes its (sending) call, which completes on its own: A's receive is still posted. */
static void timeout(const mt_inter_t *ic)
{
    xfer_coll_opts_t o;
    xfer_status_t st;

    if (ic->nlocal != ic->nremote)
        return;
    reset(ic);
    xfer_coll_opts_init(&o);
    o.algorithm = "fc_half";
    o.timeout_ms = 300;
    if (ic->group == 0) {
        double t0 = MPI_Wtime();
        st = xfer_allgather_inter(sbuf, 0, MPI_INT, rbuf, K, MPI_INT, ic->inter, &o);
        MT_CHECK(st == XFER_ERR_TIMEOUT, "missing peer: %s", xfer_status_name(st));
        MT_CHECK(strstr(xfer_last_error(), "from group 1 rank"), "message: %s", xfer_last_error());
        MT_CHECK(MPI_Wtime() - t0 < 10.0, "timeout took %.1f s", MPI_Wtime() - t0);
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (ic->group == 1) {
        o.timeout_ms = XFER_TIMEOUT_NONE;
        st = xfer_allgather_inter(sbuf, K, MPI_INT, rbuf, 0, MPI_INT, ic->inter, &o);
        MT_CHECK(st == XFER_SUCCESS, "late group: %s", xfer_last_error());
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int rc;
    mt_inter_t ic;

    mt_init(&argc, &argv, 2, &ic);
    sbuf = calloc(K, sizeof(int));
    rbuf = calloc((size_t) K * (size_t) ic.nremote, sizeof(int));
    local_errors(&ic);
    shape_errors(&ic);
    checked_mismatches(&ic);
    timeout(&ic);
    free(sbuf);
    free(rbuf);
    mt_free_inter(&ic);
    rc = mt_finish("test_bad_input");
    MPI_Finalize();
    return rc;
}
