/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <xfer/coll.h>

#include "../algos/algos.h"
#include "../core/core.h"
#include "select.h"

/* ---- cost models (see each algorithm file's header comment) ---------------------------- */

static double lg(int n)
{
    return (double) xfer_ceil_log2((uint64_t) (n > 0 ? n : 1));
}

static size_t max_count(const xfer_shape_t *s, int g)
{
    size_t m = 0;
    int i;
    if (!s->cnt[g])
        return s->ucnt[g];
    for (i = 0; i < s->n[g]; i++)
        m = XFER_MAX(m, s->cnt[g][i]);
    return m;
}

/* Scatter-allgather broadcast of @p bytes over @p n ranks. */
static double bcast_cost(int n, size_t bytes, double a, double b)
{
    return n > 1 && bytes ? 2 * lg(n) * a + 2.0 * (double) bytes * b : 0.0;
}

static double gather_cost(int n, size_t bytes, double a, double b)
{
    return n > 1 && bytes ? lg(n) * a + (double) bytes * (n - 1) / n * b : 0.0;
}

static double allgather_cost(int n, size_t bytes, double a, double b)
{
    return n > 1 && bytes ? lg(n) * a + (double) bytes * (n - 1) / n * b : 0.0;
}

static double cost_root_gather(const xfer_shape_t *s, double a, double b)
{
    double g =
        XFER_MAX(gather_cost(s->n[0], s->total[0], a, b), gather_cost(s->n[1], s->total[1], a, b));
    double x = a + (double) XFER_MAX(s->total[0], s->total[1]) * b;
    double c =
        XFER_MAX(bcast_cost(s->n[0], s->total[1], a, b), bcast_cost(s->n[1], s->total[0], a, b));
    return g + x + c;
}

/* MPICH's intercomm allgather: root_gather with the two directions serialised. */
static double cost_native(const xfer_shape_t *s, double a, double b)
{
    double g =
        XFER_MAX(gather_cost(s->n[0], s->total[0], a, b), gather_cost(s->n[1], s->total[1], a, b));
    double d0 =
        s->total[0] ? a + (double) s->total[0] * b + bcast_cost(s->n[1], s->total[0], a, b) : 0.0;
    double d1 =
        s->total[1] ? a + (double) s->total[1] * b + bcast_cost(s->n[0], s->total[1], a, b) : 0.0;
    return g + d0 + d1;
}

static double cost_segmented(const xfer_shape_t *s, double a, double b)
{
    double t = 0.0;
    int g;
    for (g = 0; g < 2; g++) { /* direction g -> 1-g, both at once: take the slower */
        const int n = s->n[1 - g];
        const size_t K = s->total[g], seg = K / (size_t) n + (K % (size_t) n ? 1 : 0);
        const size_t kmax = max_count(s, g);
        double targets = seg ? (double) (kmax / seg + 2) : 1.0;
        double x = K ? targets * a + (double) (kmax + seg) * b : 0.0;
        t = XFER_MAX(t, x + allgather_cost(n, K, a, b));
    }
    return lg(XFER_MAX(s->n[0], s->n[1])) * a + t; /* + the count exchange */
}

static double cost_fc_full(const xfer_shape_t *s, double a, double b)
{
    int L, S, P, Q, c;
    size_t kL, kS;
    if (!xfer_shape_uniform(s, 0) || !xfer_shape_uniform(s, 1))
        return cost_segmented(s, a, b);
    L = s->n[0] >= s->n[1] ? 0 : 1;
    S = 1 - L;
    P = s->n[L];
    Q = s->n[S];
    c = (P + Q - 1) / Q;
    kL = xfer_shape_count(s, L, 0);
    kS = xfer_shape_count(s, S, 0);
    return c * a + (double) XFER_MAX((size_t) c * kL, kS) * b +
           XFER_MAX(allgather_cost(P, (size_t) Q * kS, a, b),
                    allgather_cost(Q, (size_t) P * kL, a, b));
}

static double cost_fc_half(const xfer_shape_t *s, double a, double b)
{
    int sg, p, q;
    size_t k, T;
    if (s->total[0] == 0 && s->total[1] == 0)
        return 0.0;
    sg = s->total[0] > 0 ? 0 : 1;
    if (!xfer_shape_uniform(s, sg))
        return cost_segmented(s, a, b);
    p = s->n[sg];
    q = s->n[1 - sg];
    k = xfer_shape_count(s, sg, 0);
    T = s->total[sg];
    if (p >= q)
        return (1 + lg(p)) * a + (double) T * b;
    return (lg(p) + 2 * lg(q / p + 1)) * a + (double) (T + k) * b +
           (q % p ? a + (double) (p - q % p) * (double) k * b : 0.0);
}

/* ---- volume: bytes received over all ranks --------------------------------------------- */

/* The minimum: every rank receives the whole of the other group's data. */
static double volume_optimal(const xfer_shape_t *s)
{
    return (double) s->n[1] * (double) s->total[0] + (double) s->n[0] * (double) s->total[1];
}

static double volume_root_gather(const xfer_shape_t *s)
{
    double v = (double) s->total[0] + (double) s->total[1]; /* the roots' exchange */
    int g;
    for (g = 0; g < 2; g++) {
        const int n = s->n[g];
        v += (double) (s->total[g] - xfer_shape_count(s, g, 0)); /* gather at the root */
        v += (double) (n - 1) * (double) s->total[1 - g];        /* broadcast of the result */
    }
    return v;
}

static double volume_fc_half(const xfer_shape_t *s)
{
    int sg, p, q, f, r;
    double k;
    if (s->total[0] == 0 && s->total[1] == 0)
        return 0.0;
    sg = s->total[0] > 0 ? 0 : 1;
    if (!xfer_shape_uniform(s, sg))
        return volume_optimal(s);
    p = s->n[sg];
    q = s->n[1 - sg];
    k = (double) xfer_shape_count(s, sg, 0);
    if (p == q)
        return q * k + (double) q * (q - 1) * k;
    if (p > q) /* the extra senders receive the whole result too */
        return q * k + (double) p * (p - 1) * k;
    f = q / p;
    r = q % p;
    return q * k + (double) f * p * (p - 1) * k + (double) r * (r - 1) * k +
           (double) r * (p - r) * k;
}

/* Ring algorithms: every step costs a latency and its largest block. */
static double cost_ring_half(const xfer_shape_t *s, double a, double b)
{
    int sg, p, q;
    if (s->total[0] == 0 && s->total[1] == 0)
        return 0.0;
    sg = s->total[0] > 0 ? 0 : 1;
    p = s->n[sg] + s->n[sg] % 2;
    q = s->n[1 - sg] + s->n[1 - sg] % 2;
    return (p + q / 2) * (a + (double) max_count(s, sg) * b);
}

static double cost_ring_full(const xfer_shape_t *s, double a, double b)
{
    const int p = s->n[0] + s->n[0] % 2, q = s->n[1] + s->n[1] % 2;
    double t = 0.0;
    if (s->total[0])
        t += (p + q / 2) * (a + (double) max_count(s, 0) * b);
    if (s->total[1])
        t += (q + p / 2) * (a + (double) max_count(s, 1) * b);
    return t;
}

static double cost_ring(const xfer_shape_t *s, double a, double b)
{
    return (s->n[0] + s->n[1] - 1) * (a + (double) XFER_MAX(max_count(s, 0), max_count(s, 1)) * b);
}

/* Ring volume: every step moves about one block per rank. */
static double volume_ring_half(const xfer_shape_t *s)
{
    const int sg = s->total[0] > 0 ? 0 : 1;
    return (double) (s->n[0] + s->n[1]) * cost_ring_half(s, 0.0, 1.0) /
           (double) XFER_MAX(1, s->n[sg]) * 0.5;
}

static double volume_ring_full(const xfer_shape_t *s)
{
    return (double) (s->n[0] + s->n[1]) * cost_ring_full(s, 0.0, 1.0) * 0.5;
}

static double volume_ring(const xfer_shape_t *s)
{
    return (double) (s->n[0] + s->n[1] - 1) * (double) (s->total[0] + s->total[1]);
}

static int supports_half_only(const xfer_shape_t *s, const char **why)
{
    if (s->total[0] > 0 && s->total[1] > 0) {
        *why = "both groups contribute data (full duplex); this algorithm needs one side to "
               "send 0 bytes";
        return 0;
    }
    return 1;
}

/* ---- the registry -------------------------------------------------------------------------- */

static const xfer_algo_t registry[] = {
    {"native", "the MPI library's own intercommunicator MPI_Allgather(v)", "none", NULL,
     xfer_build_native_model, XFER_ALGO_NATIVE, NULL, cost_native, volume_root_gather},
    {"root_gather",
     "gather at each group's root, concurrent root exchange, broadcast (the MPI baseline)", "none",
     xfer_build_root_gather, xfer_build_root_gather, 0, NULL, cost_root_gather, volume_root_gather},
    {"fc_half",
     "half duplex, fully connected (Kang et al.): pairwise send + allgather, extra senders "
     "join, broadcast groups when p < q",
     "one group must send 0 bytes", xfer_build_fc_half, xfer_build_fc_half, XFER_ALGO_AUTO_HALF,
     supports_half_only, cost_fc_half, volume_fc_half},
    {"fc_full",
     "full duplex, fully connected, message segmentation (Kang, Traeff et al. 2019, Alg. 1; "
     "Alg. 2 when block sizes differ)",
     "none", xfer_build_fc_full, xfer_build_fc_full, XFER_ALGO_AUTO_HALF | XFER_ALGO_AUTO_FULL,
     NULL, cost_fc_full, volume_optimal},
    {"fc_full_v",
     "full duplex, fully connected, global-byte-index segmentation (2019 Alg. 2) for any counts",
     "none", xfer_build_fc_full_v, xfer_build_fc_full_v, 0, NULL, cost_segmented, volume_optimal},
    {"ring_half",
     "half duplex on a ring (Kang et al. Alg. 1/3, corrected; p > q derived): p + q/2 steps "
     "between ring neighbours",
     "one group must send 0 bytes", xfer_build_ring_half, xfer_build_ring_half,
     XFER_ALGO_RING | XFER_ALGO_AUTO_HALF, supports_half_only, cost_ring_half, volume_ring_half},
    {"ring_full",
     "full duplex on a ring (ours): the two half-duplex ring passes, heavier direction first",
     "none", xfer_build_ring_full, xfer_build_ring_full, XFER_ALGO_RING | XFER_ALGO_AUTO_FULL, NULL,
     cost_ring_full, volume_ring_full},
    {"ring", "ring allgather over all p + q ranks (the papers' ring baseline)", "none",
     xfer_build_ring, xfer_build_ring, XFER_ALGO_RING | XFER_ALGO_AUTO_FULL, NULL, cost_ring,
     volume_ring},
};

#define NALGOS ((int) (sizeof(registry) / sizeof(registry[0])))

int xfer_algo_count(void)
{
    return NALGOS;
}

const xfer_algo_t *xfer_algo_at(int index)
{
    return index >= 0 && index < NALGOS ? &registry[index] : NULL;
}

const xfer_algo_t *xfer_algo_find(const char *name)
{
    int i;
    for (i = 0; name && i < NALGOS; i++)
        if (strcmp(registry[i].name, name) == 0)
            return &registry[i];
    return NULL;
}

int xfer_algo_index(const xfer_algo_t *algo)
{
    return algo ? (int) (algo - registry) : -1;
}

int xfer_algo_supports(const xfer_algo_t *algo, const xfer_shape_t *shape, const char **why)
{
    *why = "";
    return !algo->supports || algo->supports(shape, why);
}

void xfer_model_init(xfer_model_t *m, int nnodes, int max_ppn)
{
    const char *topo;
    m->alpha = xfer_env_double("XFER_ALPHA", 2e-6);
    m->beta = xfer_env_double("XFER_BETA", 1e-10);
    m->gamma = xfer_env_double("XFER_GAMMA", 2.5e-10);
    m->nnodes = nnodes > 0 ? nnodes : 1;
    m->max_ppn = max_ppn > 0 ? max_ppn : 1;
    topo = xfer_env_str("XFER_TOPOLOGY");
    m->ring = topo && strcmp(topo, "ring") == 0;
    if (topo && !m->ring && strcmp(topo, "fully_connected") != 0)
        xfer_log(XFER_LOG_WARN, "XFER_TOPOLOGY=\"%s\": expected fully_connected or ring", topo);
}

double xfer_algo_predict(const xfer_algo_t *al, const xfer_shape_t *s, const xfer_model_t *m)
{
    double t = al->cost(s, m->alpha, m->beta);
    if (m->max_ppn > 1) { /* ranks share a node: its memory system carries their traffic */
        const int nranks = s->n[0] + s->n[1];
        t += m->gamma * al->volume(s) * XFER_MIN(1.0, (double) m->max_ppn / nranks);
    }
    return t;
}

const xfer_algo_t *xfer_select_auto(const xfer_shape_t *shape, const xfer_model_t *m, char *why,
                                    size_t whylen)
{
    const int half = shape->total[0] == 0 || shape->total[1] == 0;
    const unsigned want = half ? XFER_ALGO_AUTO_HALF : XFER_ALGO_AUTO_FULL;
    const xfer_algo_t *best = NULL;
    double best_cost = 0.0;
    int i, w;
    const char *dummy;

    w = snprintf(why, whylen, "auto: %s duplex, %s, %d node(s), <= %d ranks/node, predicted",
                 half ? "half" : "full", m->ring ? "ring" : "fully connected", m->nnodes,
                 m->max_ppn);
    for (i = 0; i < NALGOS; i++) {
        const xfer_algo_t *al = &registry[i];
        const int ok = xfer_algo_supports(al, shape, &dummy);
        double c = ok ? xfer_algo_predict(al, shape, m) : 0.0;
        if (w > 0 && (size_t) w < whylen)
            w += ok ? snprintf(why + w, whylen - (size_t) w, " %s=%.3g", al->name, c)
                    : snprintf(why + w, whylen - (size_t) w, " %s=n/a", al->name);
        if (!(al->flags & want) || !ok || !(al->flags & XFER_ALGO_RING) != !m->ring)
            continue;
        if (!best || c < best_cost) {
            best = al;
            best_cost = c;
        }
    }
    return best ? best : xfer_algo_find("root_gather");
}

/* ---- public listing ------------------------------------------------------------------------- */

xfer_status_t xfer_algorithm_count(int *count)
{
    if (!count)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "count is NULL");
    *count = NALGOS;
    return XFER_SUCCESS;
}

xfer_status_t xfer_algorithm_info(int index, xfer_algo_info_t *info)
{
    if (!info || index < 0 || index >= NALGOS)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "no algorithm %d (there are %d)", index, NALGOS);
    info->name = registry[index].name;
    info->summary = registry[index].summary;
    info->restrictions = registry[index].restrictions;
    return XFER_SUCCESS;
}
