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
