/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The correctness matrix: every algorithm x {allgather, allgatherv} x {full duplex, A->B,
 * B->A} x count cases {0, 1, odd, 64 KiB; zero and skewed counts} x {contiguous MPI_INT, a
 * non-contiguous derived type} x {packed, scrambled displacements}, compared byte for byte
 * (whole receive buffer, gaps included) with the MPI library's own intercommunicator
 * MPI_Allgather(v) on the same arguments; the native result itself is checked against the
 * known data pattern. Forced algorithms that cannot handle a shape must say so
 * (XFER_ERR_NOT_SUPPORTED) on every rank.
 *
 * Usage: mpiexec -n P+Q test_coll_matrix --p P [--layout block|interleaved]
 */
#include <stdint.h>

#include <xfer/xfer.h>

#include "../support/mpitest.h"

/* "auto", then every registered algorithm but native (the reference) by the library's own
 * listing, so that a new one is tested as soon as it is registered; their flags */
#define MAX_ALGOS 32
static const char *algos[MAX_ALGOS];
static unsigned algo_flags[MAX_ALGOS];
static int NALGOS;

static void list_algorithms(void)
{
    xfer_algo_info_t info;
    unsigned flags;
    int n, i;
    algos[NALGOS++] = "auto";
    MT_CHECK(xfer_algorithm_count(&n) == XFER_SUCCESS, "xfer_algorithm_count");
    for (i = 0; i < n && NALGOS < MAX_ALGOS; i++) {
        MT_CHECK(xfer_algorithm_info(i, &info) == XFER_SUCCESS &&
                     xfer_algorithm_flags(i, &flags) == XFER_SUCCESS,
                 "algorithm %d's listing", i);
        if (flags & XFER_ALGO_NATIVE)
            continue;
        algo_flags[NALGOS] = flags;
        algos[NALGOS++] = info.name;
    }
    MT_CHECK(NALGOS >= 10, "only %d algorithms listed", NALGOS);
}

enum { DUP_FULL = 0, DUP_A2B, DUP_B2A, NDUP };
static const char *dup_name[] = {"full", "A->B", "B->A"};

#define NKCASES 4
static const int kcases[NKCASES] = {0, 1, 7, 16384}; /* 16384 ints = 64 KiB */

/* allgatherv count patterns, in elements */
#define NVCASES 4
static int vcount(int pat, int g, int r)
{
    switch (pat) {
    case 0:
        return r % 3 == 1 ? 0 : (r + 1) * 5 + g; /* zeros and skew */
    case 1:
        return 0; /* nothing at all */
    case 2:
        return r == 0 ? 16384 : 3; /* one 64 KiB block */
    default:
        return (r * 7 + g * 3) % 5; /* small, some zero */
    }
}

typedef struct {
    MPI_Datatype type; /* element type used on both sides */
    int ints_per_elem; /* extent in ints (1 contiguous, 2 with a gap) */
    const char *name;
} dtype_case_t;

static int sends(int dup, int group)
{
    return dup == DUP_FULL || (dup == DUP_A2B && group == 0) || (dup == DUP_B2A && group == 1);
}

typedef struct {
    int kind; /* 0 allgather, 1 allgatherv */
    int dup, kc, dt, scrambled, salt;
} config_t;

static void describe(const config_t *c, const dtype_case_t *dt, char *out, size_t len)
{
    snprintf(out, len, "%s %s %s%d %s%s", c->kind ? "allgatherv" : "allgather", dup_name[c->dup],
             c->kind ? "pattern " : "k=", c->kind ? c->kc : kcases[c->kc], dt->name,
             c->scrambled ? " scrambled-displs" : "");
}

static void run_config(const mt_inter_t *ic, const config_t *c, const dtype_case_t *dt)
{
    const int g = ic->group, o = 1 - g, nr = ic->nremote, ipe = dt->ints_per_elem;
    int scount, *rcounts, *displs, i, j, a, rcount = 0, total_elems = 0, extent_elems = 0;
    int *sbuf, *rref, *rbuf;
    long long tot[2] = {0, 0};
    size_t rbytes;
    char what[160];

    describe(c, dt, what, sizeof(what));
    rcounts = calloc((size_t) nr, sizeof(int));
    displs = calloc((size_t) nr, sizeof(int));
    /* counts of every rank, as every rank can compute them */
    if (c->kind == 0) {
        scount = sends(c->dup, g) ? kcases[c->kc] : 0;
        rcount = sends(c->dup, o) ? kcases[c->kc] : 0;
        for (i = 0; i < nr; i++) {
            rcounts[i] = rcount;
            displs[i] = i * rcount;
        }
        tot[g] = (long long) scount * ic->nlocal;
        tot[o] = (long long) rcount * nr;
    } else {
        scount = sends(c->dup, g) ? vcount(c->kc, g, ic->rank) : 0;
        for (i = 0; i < ic->nlocal; i++)
            tot[g] += sends(c->dup, g) ? vcount(c->kc, g, i) : 0;
        for (i = 0; i < nr; i++) {
            rcounts[i] = sends(c->dup, o) ? vcount(c->kc, o, i) : 0;
            tot[o] += rcounts[i];
        }
        if (c->scrambled) { /* reverse order, 3-element gaps */
            int off = 0;
            for (i = nr - 1; i >= 0; i--) {
                displs[i] = off;
                off += rcounts[i] + 3;
            }
        } else {
            for (i = 0, total_elems = 0; i < nr; i++) {
                displs[i] = total_elems;
                total_elems += rcounts[i];
            }
        }
    }
    for (i = 0; i < nr; i++)
        if (rcounts[i] > 0 && displs[i] + rcounts[i] > extent_elems)
            extent_elems = displs[i] + rcounts[i];
    extent_elems += 2; /* a tail that nobody may write */
    rbytes = (size_t) extent_elems * (size_t) ipe * sizeof(int);

    sbuf = malloc((size_t) (scount + 1) * (size_t) ipe * sizeof(int));
    rref = malloc(rbytes);
    rbuf = malloc(rbytes);
    for (j = 0; j < scount * ipe; j++) /* values in the used slots, junk in gaps */
        sbuf[j] = j % ipe == 0 ? mt_value(g, ic->rank, j / ipe, c->salt) : 0x7eadbeef;
    memset(rref, 0x5A, rbytes);

    /* the oracle: the MPI library's own intercommunicator collective */
    if (c->kind == 0)
        MT_MPI(MPI_Allgather(sbuf, scount, dt->type, rref, rcount, dt->type, ic->inter));
    else
        MT_MPI(MPI_Allgatherv(sbuf, scount, dt->type, rref, rcounts, displs, dt->type, ic->inter));
    for (i = 0; i < nr; i++) /* and the oracle checked against the pattern */
        for (j = 0; j < rcounts[i]; j++) {
            int got = rref[(size_t) (displs[i] + j) * (size_t) ipe];
            if (got != mt_value(o, i, j, c->salt)) {
                MT_CHECK(0, "%s: native result wrong at remote %d element %d", what, i, j);
                i = nr;
                break;
            }
        }

    for (a = 0; a < NALGOS; a++) {
        xfer_coll_opts_t opts;
        xfer_status_t st, want = XFER_SUCCESS;
        xfer_coll_opts_init(&opts);
        opts.algorithm = algos[a];
        opts.fallback = XFER_FALLBACK_ERROR;
        if ((algo_flags[a] & XFER_ALGO_HALF_ONLY) && tot[0] > 0 && tot[1] > 0)
            want = XFER_ERR_NOT_SUPPORTED;
        memset(rbuf, 0x5A, rbytes);
        if (c->kind == 0)
            st = xfer_allgather_inter(sbuf, scount, dt->type, rbuf, rcount, dt->type, ic->inter,
                                      &opts);
        else
            st = xfer_allgatherv_inter(sbuf, scount, dt->type, rbuf, rcounts, displs, dt->type,
                                       ic->inter, &opts);
        MT_CHECK(st == want, "%s %s: status %s, expected %s (%s)", algos[a], what,
                 xfer_status_name(st), xfer_status_name(want), xfer_last_error());
        if (st == XFER_SUCCESS && memcmp(rbuf, rref, rbytes) != 0) {
            size_t b = 0;
            while (((unsigned char *) rbuf)[b] == ((unsigned char *) rref)[b])
                b++;
            MT_CHECK(0, "%s %s: result differs from native at byte %zu of %zu", algos[a], what, b,
                     rbytes);
        }
    }
    free(sbuf);
    free(rref);
    free(rbuf);
    free(rcounts);
    free(displs);
}

int main(int argc, char **argv)
{
    int i, kind, dup, kc, dt, sc, salt = 0;
    mt_inter_t ic;
    dtype_case_t dts[2];
    MPI_Datatype gapped;

    mt_init(&argc, &argv, 1, &ic);
    list_algorithms();

    /* an int followed by a 4-byte hole: non-contiguous in both buffers */
    MT_MPI(MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint) sizeof(int), &gapped));
    MT_MPI(MPI_Type_commit(&gapped));
    dts[0].type = MPI_INT;
    dts[0].ints_per_elem = 1;
    dts[0].name = "MPI_INT";
    dts[1].type = gapped;
    dts[1].ints_per_elem = 2;
    dts[1].name = "resized(int,extent 8)";

    for (kind = 0; kind < 2; kind++)
        for (dup = 0; dup < NDUP; dup++)
            for (kc = 0; kc < (kind ? NVCASES : NKCASES); kc++)
                for (dt = 0; dt < 2; dt++)
                    for (sc = 0; sc < (kind ? 2 : 1); sc++) {
                        config_t c;
                        c.kind = kind;
                        c.dup = dup;
                        c.kc = kc;
                        c.dt = dt;
                        c.scrambled = sc;
                        c.salt = ++salt;
                        run_config(&ic, &c, &dts[dt]);
                    }
    MPI_Type_free(&gapped);
    mt_free_inter(&ic);
    i = mt_finish("test_coll_matrix");
    MPI_Finalize();
    return i;
}
