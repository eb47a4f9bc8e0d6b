/* SPDX-License-Identifier: BSD-3-Clause */
/* Schedule-layer primitives: segmentation arithmetic, group descriptors, count descriptors,
 * the hash map, and the round/chain bookkeeping of the builder interface. */
#include <string.h>

#include "../support/unit.h"
#include "sched/hmap.h"
#include "sched/sched.h"

static long checks;

static void test_segments(void)
{
    size_t K;
    int n, j;
    for (K = 0; K < 70; K++)
        for (n = 1; n < 20; n++) {
            size_t sum = 0;
            for (j = 0; j < n; j++) {
                size_t len = xfer_seg_len(K, n, j), start = xfer_seg_start(K, n, j), b;
                UCHECK(start == sum, "K=%zu n=%d j=%d start %zu != %zu", K, n, j, start, sum);
                UCHECK(len == K / n || len == K / n + 1, "K=%zu n=%d j=%d len %zu", K, n, j, len);
                for (b = start; b < start + len; b++)
                    UCHECK(xfer_seg_index(K, n, b) == j, "K=%zu n=%d byte %zu -> %d not %d", K, n,
                           b, xfer_seg_index(K, n, b), j);
                sum += len;
                checks++;
            }
            UCHECK(sum == K, "K=%zu n=%d segments sum to %zu", K, n, sum);
        }
}

static void test_groups(void)
{
    xfer_group_t g;
    int i;
    memset(&g, 0, sizeof(g));
    g.nranges = 2;
    g.ranges[0].start = 10;
    g.ranges[0].stride = 1;
    g.ranges[0].count = 3; /* 10 11 12 */
    g.ranges[1].start = 3;
    g.ranges[1].stride = 5;
    g.ranges[1].count = 3; /* 3 8 13 */
    g.size = 6;
    {
        int want[] = {10, 11, 12, 3, 8, 13};
        for (i = 0; i < 6; i++) {
            UCHECK(xfer_group_member(&g, i) == want[i], "member %d", i);
            UCHECK(xfer_group_index_of(&g, want[i]) == i, "index of %d", want[i]);
            checks++;
        }
    }
    UCHECK(xfer_group_index_of(&g, 4) == -1, "non-member 4");
    UCHECK(xfer_group_index_of(&g, 18) == -1, "non-member 18 (past the range)");
    UCHECK(xfer_group_member(&g, 6) == -1, "member past the end");
}

static void test_hmap(void)
{
    xfer_hmap_t m;
    uint64_t k;
    UCHECK(xfer_hmap_init(&m, 4), "init");
    for (k = 0; k < 5000; k++)
        *xfer_hmap_slot(&m, k * 7919) = k + 1;
    for (k = 0; k < 5000; k += 2)
        xfer_hmap_erase(&m, k * 7919);
    for (k = 0; k < 5000; k++) {
        uint64_t *v = xfer_hmap_find(&m, k * 7919);
        if (k % 2)
            UCHECK(v && *v == k + 1, "key %llu", (unsigned long long) k);
        else
            UCHECK(!v, "erased key %llu still present", (unsigned long long) k);
        checks++;
    }
    for (k = 0; k < 5000; k += 2) /* reinsert over tombstones */
        *xfer_hmap_slot(&m, k * 7919) = 1;
    UCHECK(m.used == 5000, "used %zu", m.used);
    xfer_hmap_fini(&m);
}

static void test_rounds_and_chains(void)
{
    xfer_shape_t sh;
    xfer_sched_t *s = NULL;
    memset(&sh, 0, sizeof(sh));
    sh.n[0] = 2;
    sh.n[1] = 3;
    sh.ucnt[0] = 8;
    sh.ucnt[1] = 4;
    sh.total[0] = 16;
    sh.total[1] = 12;
    UCHECK(xfer_sched_create(&sh, 1, 2, &s) == XFER_SUCCESS, "create");
    UCHECK(s->send_bytes == 4 && s->recv_bytes == 16, "buffer sizes %zu %zu", s->send_bytes,
           s->recv_bytes);
    xfer_sched_round(s); /* empty: no round */
    xfer_sched_send(s, 0, XFER_BUF_SEND, 0, 4, 1);
    xfer_sched_send(s, 1, XFER_BUF_SEND, 0, 0, 1); /* zero bytes: dropped */
    xfer_sched_recv(s, 0, XFER_BUF_RECV, 0, 8, 2);
    xfer_sched_round(s);
    xfer_sched_round(s);
    xfer_sched_copy(s, XFER_BUF_RECV, 0, XFER_BUF_RECV, 8, 8);
    UCHECK(xfer_sched_finish(s) == XFER_SUCCESS, "finish");
    UCHECK(s->nrounds == 2 && s->nops == 3, "rounds %d ops %d", s->nrounds, s->nops);
    UCHECK(s->round_start[0] == 0 && s->round_start[1] == 2 && s->round_start[2] == 3,
           "round starts");
    xfer_sched_reset(s);
    xfer_sched_recv(s, 0, XFER_BUF_RECV, 10, 8, 0); /* overruns RECV (16 bytes) */
    UCHECK(xfer_sched_finish(s) == XFER_ERR_INTERNAL, "out-of-bounds op accepted");
    xfer_sched_destroy(&s);
    UCHECK(s == NULL, "destroy nulls the pointer");
    checks += 6;
}

int main(void)
{
    test_segments();
    test_groups();
    test_hmap();
    test_rounds_and_chains();
    return unit_finish("test_sched_basics", checks);
}
