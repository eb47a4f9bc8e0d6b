/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * native: the MPI library's own intercommunicator MPI_Allgather(v), called through its PMPI_
 * entry points (coll/plan.c); libxfer adds nothing. This file holds a *model* of what MPICH 4
 * does, used only by the simulator to cost native next to our algorithms: each group gathers
 * its blocks at its rank 0; the low group's root sends them to the high group's root, which
 * broadcasts them in its group; only then does the high root send its group's data back, and
 * the low root broadcasts it. (Open MPI's coll/inter exchanges the two roots' data
 * concurrently instead: that is our root_gather.)
 *
 * Cost (model): max(gather_A, gather_B) + a + p k_A b + bcast_B(p k_A) + a + q k_B b
 *       + bcast_A(q k_B); the directions are serialised through one pair of ranks.
 * Restrictions: none.
 * Preferred when: never by the model; it is what the MPI library gives.
 * Source: seed-intergroup §2.1 and anchors §1.1 (MPICH allgather_inter_local_gather_remote_bcast).
 */
#include "algos.h"

xfer_status_t xfer_build_native_model(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const int g = s->group, n = shape->n[g], root = s->rank == 0;
    const size_t T = shape->total[g], R = shape->total[1 - g];
    const int peer_root = xfer_merged_rank(shape, 1 - g, 0);
    const int local = xfer_sched_group_local(s, shape);
    int src_buf = XFER_BUF_SEND;

    s->algo = "native";
    s->variant = "MPICH model";
    if (T > 0 && n > 1) {
        if (root)
            s->tmp_bytes = T;
        xfer_sched_gatherv(s, local, 0, xfer_algo_group_counts(s, shape, g, 0, n), XFER_BUF_SEND, 0,
                           s->send_bytes, XFER_BUF_TMP, 0);
        xfer_sched_round(s);
        src_buf = XFER_BUF_TMP;
    }
    if (g == 0) { /* low group: send first, then receive and broadcast */
        if (root) {
            xfer_sched_send(s, peer_root, src_buf, 0, T, 0);
            xfer_sched_round(s);
            xfer_sched_recv(s, peer_root, XFER_BUF_RECV, 0, R, 0);
            xfer_sched_round(s);
        }
        xfer_sched_bcast(s, local, 0, XFER_BUF_RECV, 0, R);
    } else { /* high group: receive and broadcast, then send back */
        if (root)
            xfer_sched_recv(s, peer_root, XFER_BUF_RECV, 0, R, 0);
        xfer_sched_round(s);
        xfer_sched_bcast(s, local, 0, XFER_BUF_RECV, 0, R);
        xfer_sched_round(s);
        if (root)
            xfer_sched_send(s, peer_root, src_buf, 0, T, 0);
    }
    return xfer_sched_finish(s);
}

/* ---- descriptor ------------------------------------------------------------------------- */

/* MPICH's intercomm allgather: root_gather with the two directions serialised. */
static double cost_native(const xfer_shape_t *s, double a, double b)
{
    double g = XFER_MAX(xfer_cost_gather(s->n[0], s->total[0], a, b),
                        xfer_cost_gather(s->n[1], s->total[1], a, b));
    double d0 = s->total[0]
                    ? a + (double) s->total[0] * b + xfer_cost_bcast(s->n[1], s->total[0], a, b)
                    : 0.0;
    double d1 = s->total[1]
                    ? a + (double) s->total[1] * b + xfer_cost_bcast(s->n[0], s->total[1], a, b)
                    : 0.0;
    return g + d0 + d1;
}

const xfer_algo_t xfer_algo_native = {
    .name = "native",
    .summary = "the MPI library's own intercommunicator MPI_Allgather(v)",
    .restrictions = "none",
    .build = NULL, /* the MPI library runs it (coll/plan.c) */
    .model = xfer_build_native_model,
    /* not XFER_ALGO_RING: the library's collective talks to any rank it likes */
    .flags = XFER_ALGO_NATIVE,
    .cost = cost_native,
    .volume = xfer_volume_root_gather,
};
