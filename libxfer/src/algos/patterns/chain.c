/* SPDX-License-Identifier: BSD-3-Clause */
#include "../../core/core.h"
#include "chain.h"

/* sqrt without libm (Newton; x > 0) */
static double root(double x)
{
    double r = x > 1.0 ? x / 2.0 : 1.0;
    int i;
    for (i = 0; i < 64; i++)
        r = 0.5 * (r + x / r);
    return r;
}

int xfer_chain_segments(size_t len, int hops)
{
    const double a = xfer_env_double("XFER_ALPHA", 2e-6), b = xfer_env_double("XFER_BETA", 1e-10);
    const long fixed = xfer_env_long("XFER_SEGMENT_BYTES", 0);
    double seg;
    long n;

    if (len == 0)
        return 1;
    if (fixed > 0)
        seg = (double) fixed;
    else if (hops < 2 || a <= 0 || b <= 0)
        seg = (double) len; /* one link: nothing to overlap */
    else
        seg = root((double) len * a / ((double) (hops - 1) * b));
    seg = XFER_MAX(seg, 8192.0);
    n = (long) ((double) len / seg + 0.999999);
    return (int) XFER_MIN(XFER_MAX(n, 1L), 256L);
}

void xfer_chain_bcast(xfer_sched_t *s, const xfer_group_t *members, int buf, size_t off, size_t len,
                      int nseg)
{
    const int me = members->my_index, n = members->size;
    const int prev = me > 0 ? xfer_group_member(members, me - 1) : -1;
    const int next = me + 1 < n ? xfer_group_member(members, me + 1) : -1;
    int j;

    for (j = 0; j < nseg; j++) {
        const size_t so = off + xfer_seg_start(len, nseg, j), sl = xfer_seg_len(len, nseg, j);
        int got = -1;
        if (prev >= 0) {
            xfer_sched_recv(s, prev, buf, so, sl, 1);
            got = xfer_sched_last(s);
        }
        if (next >= 0) {
            xfer_sched_send(s, next, buf, so, sl, 2);
            xfer_sched_dep(s, got); /* forward segment j once it is in */
        }
    }
}
