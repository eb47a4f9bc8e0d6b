/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * root_gather: the baseline production MPI libraries use, as our own implementation.
 * Each group gathers its blocks at its local rank 0; the two roots exchange the gathered
 * data concurrently (one send and one receive each, as Open MPI's coll/inter does; MPICH
 * serialises the two directions); each root broadcasts what it received in its group.
 * A side that contributes nothing skips its gather and its send.
 *
 * Cost: with T_A = p*k_A, T_B = q*k_B (bytes each group contributes),
 *   gather  max(log p*a + (p-1)/p*T_A*b, log q*a + (q-1)/q*T_B*b)
 *   exchange a + max(T_A, T_B)*b
 *   bcast   max(2 log p*a + 2*T_B*b, 2 log q*a + 2*T_A*b)   (scatter-allgather bcast)
 *   ~ (log p + 2 log q) a + 4 p k b for large p, q (seed-intergroup Table I).
 * Restrictions: none.
 * Preferred when: never by model; it is the reference the fc/ring algorithms must beat.
 * Source: seed-intergroup §1.5, §2.1.
 */
#include "algos.h"

xfer_status_t xfer_build_root_gather(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const int g = s->group, n = shape->n[g];
    const size_t T = shape->total[g], R = shape->total[1 - g];
    const int root = s->rank == 0, peer_root = xfer_merged_rank(shape, 1 - g, 0);
    int local = xfer_sched_group_local(s, shape);
    int src_buf = XFER_BUF_SEND;

    s->algo = "root_gather";
    s->variant = "";
    if (T > 0 && n > 1) {
        int counts = xfer_algo_group_counts(s, shape, g, 0, n);
        if (root)
            s->tmp_bytes = T;
        xfer_sched_gatherv(s, local, 0, counts, XFER_BUF_SEND, 0, s->send_bytes, XFER_BUF_TMP, 0);
        xfer_sched_round(s);
        src_buf = XFER_BUF_TMP;
    }
    if (root) {
        xfer_sched_send(s, peer_root, src_buf, 0, T, 0);
        xfer_sched_recv(s, peer_root, XFER_BUF_RECV, 0, R, 0);
        xfer_sched_round(s);
    }
    xfer_sched_bcast(s, local, 0, XFER_BUF_RECV, 0, R);
    return xfer_sched_finish(s);
}

/* ---- descriptor ------------------------------------------------------------------------- */

static double cost_root_gather(const xfer_shape_t *s, double a, double b)
{
    double g = XFER_MAX(xfer_cost_gather(s->n[0], s->total[0], a, b),
                        xfer_cost_gather(s->n[1], s->total[1], a, b));
    double x = a + (double) XFER_MAX(s->total[0], s->total[1]) * b;
    double c = XFER_MAX(xfer_cost_bcast(s->n[0], s->total[1], a, b),
                        xfer_cost_bcast(s->n[1], s->total[0], a, b));
    return g + x + c;
}

double xfer_volume_root_gather(const xfer_shape_t *s)
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

const xfer_algo_t xfer_algo_root_gather = {
    .name = "root_gather",
    .summary =
        "gather at each group's root, concurrent root exchange, broadcast (the MPI baseline)",
    .restrictions = "none",
    .build = xfer_build_root_gather,
    .model = xfer_build_root_gather,
    .flags = 0, /* the reference, never auto's choice */
    .cost = cost_root_gather,
    .volume = xfer_volume_root_gather,
};
