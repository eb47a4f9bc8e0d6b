/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hierarchical schedules (node staging) through the simulator on virtual nodes: every inner
 * algorithm that builds a schedule, shapes with p, q in 1..7, node sizes 1-4, block and
 * round-robin placement, 1 and 2 senders, flags and barriers, zero-byte sides, three consecutive
 * calls (both window parities, and their reuse); `--max N` stops p and q at N (the valgrind run
 * checks memory behaviour on fewer shapes, the plain run covers them all). Then the negative
 * controls: the same schedules
 * with one synchronisation removed or mis-aimed must fail -- a leader that does not wait for the
 * node's deposits, receivers that do not wait for the result, a leader that refills R before
 * the previous use of that parity was copied out, a flag published with the wrong epoch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/unit.h"
#include "algos/algos.h"
#include "coll/hier.h"
#include "sched/sim.h"
#include "topo/shwin.h"

static long checks;

typedef struct {
    xfer_shape_t s;
    size_t cnt[2][16], pre[2][17];
} shape_buf_t;

static void make_shape(shape_buf_t *b, int p, int q, int mode, int varied)
{
    int g, i;
    memset(b, 0, sizeof(*b));
    b->s.n[0] = p;
    b->s.n[1] = q;
    for (g = 0; g < 2; g++) {
        const int sends = mode == 2 || mode == g;
        b->pre[g][0] = 0;
        for (i = 0; i < b->s.n[g]; i++) {
            b->cnt[g][i] = !sends ? 0 : varied ? (size_t) ((i * 7 + g * 3) % 5) * 3 : 16;
            b->pre[g][i + 1] = b->pre[g][i] + b->cnt[g][i];
        }
        b->s.cnt[g] = b->cnt[g];
        b->s.pre[g] = b->pre[g];
        b->s.total[g] = b->pre[g][b->s.n[g]];
    }
}

static void test_all(int max)
{
    static const char *inner[] = {"fc_half",   "fc_full", "fc_full_v", "ring_half",
                                  "ring_full", "ring",    "fc_direct", "root_gather"};
    const int ninner = (int) (sizeof(inner) / sizeof(inner[0]));
    long ran = 0, skipped = 0;
    int p, q, ns, mode, a, variant;

    for (p = 1; p <= max; p++)
        for (q = 1; q <= max; q++)
            for (ns = 1; ns <= 4; ns++)
                for (mode = 0; mode < 3; mode++)
                    for (variant = 0; variant < 4; variant++)
                        for (a = 0; a < ninner; a++) {
                            shape_buf_t b;
                            xfer_hier_virtual_t v;
                            xfer_status_t st;
                            memset(&v, 0, sizeof(v));
                            v.node_size[0] = ns;
                            v.node_size[1] = variant == 3 ? 1 + (ns % 3) : ns;
                            v.roundrobin = variant == 1;
                            v.barrier = variant == 2;
                            v.senders = variant == 3 && ns >= 2 && v.node_size[1] >= 2 ? 2 : 1;
                            v.inner = inner[a];
                            make_shape(&b, p, q, mode, variant & 1);
                            xfer_sim_opts_t o;
                            xfer_sim_opts_default(&o);
                            if (variant != 2 && (p + q + ns + a) % 3 == 0) { /* other orders */
                                o.jitter = 1e-4;
                                o.seed = (unsigned long) (p * 131 + q * 17 + ns + a);
                            }
                            st = xfer_hier_simulate(&b.s, &v, 3, &o, NULL);
                            if (st == XFER_ERR_NOT_SUPPORTED) {
                                skipped++;
                                continue;
                            }
                            UCHECK(st == XFER_SUCCESS,
                                   "hier:%s p=%d q=%d nodes %d/%d senders %d%s%s mode %d: %s",
                                   inner[a], p, q, v.node_size[0], v.node_size[1], v.senders,
                                   v.roundrobin ? " roundrobin" : "", v.barrier ? " barrier" : "",
                                   mode, xfer_last_error());
                            ran++;
                        }
    /* (most combinations apply: 15775 of 18816 at p, q <= 7) */
    UCHECK(ran > 2 * skipped, "only %ld hierarchies simulated (%ld not applicable)", ran, skipped);
    checks += ran;
}

/* ---- negative controls: one synchronisation of the built schedules removed ------------------ */

enum { DROP_READY, DROP_VALID, DROP_COPIED, PUT_EARLY, NFAULTS };
static const char *fault_name[] = {
    "leader skips the deposits' ready flags", "receivers skip the valid flags",
    "leader skips the copied flags (R reuse)", "sent flag published for the next call"};

typedef struct {
    const xfer_shape_t *shape;
    xfer_hier_virtual_t v;
    int fault;
} bad_t;

static xfer_status_t bad_build(void *ctx, int g, int r, xfer_sched_t **out)
{
    const bad_t *b = ctx;
    xfer_status_t st = xfer_hier_sched_virtual(b->shape, &b->v, g, r, out);
    int k;
    if (st != XFER_SUCCESS)
        return st;
    for (k = 0; k < (*out)->nops; k++) {
        xfer_op_t *op = &(*out)->ops[k];
        const int wait = op->kind == XFER_OP_FLAG_WAIT;
        if ((b->fault == DROP_READY && wait && op->buf2 == XFER_FLAG_READY) ||
            (b->fault == DROP_VALID && wait && op->buf2 == XFER_FLAG_VALID) ||
            (b->fault == DROP_COPIED && wait && op->buf2 == XFER_FLAG_COPIED))
            op->len = 0; /* waits for nothing */
        if (b->fault == PUT_EARLY && op->kind == XFER_OP_FLAG_PUT && op->buf2 == XFER_FLAG_SENT)
            op->aux += 2; /* a later call's value: the next writer lowers it */
    }
    return XFER_SUCCESS;
}

static void test_faults(void)
{
    int fault;
    for (fault = 0; fault < NFAULTS; fault++) {
        shape_buf_t b;
        bad_t bad;
        xfer_nodes_t L[2];
        xfer_sim_hier_t h;
        xfer_status_t st;
        unsigned long seed;
        int g, caught;

        /* half duplex for the reuse faults: in full duplex every rank deposits each call, which
         * already holds a leader back until its node has finished the call before */
        make_shape(&b, 6, 4, fault == DROP_COPIED || fault == PUT_EARLY ? 0 : 2, 0);
        memset(&bad, 0, sizeof(bad));
        bad.shape = &b.s;
        bad.v.node_size[0] = bad.v.node_size[1] = 2;
        bad.v.senders = 1;
        bad.v.inner = "fc_full";
        bad.fault = fault;
        memset(&h, 0, sizeof(h));
        for (g = 0; g < 2; g++) {
            UCHECK(xfer_nodes_virtual(&L[g], b.s.n[g], 2, 0) == XFER_SUCCESS, "layout");
            h.nodes.nnodes[g] = L[g].nnodes;
            h.nodes.node_of[g] = L[g].node_of;
            h.nodes.slot_of[g] = L[g].slot_of;
            h.nodes.node_first[g] = L[g].node_first;
            h.nodes.members[g] = L[g].members;
        }
        h.calls = 6; /* a sent flag two calls early needs a call five */
        h.ctx = &bad;
        h.build = bad_build;
        /* the same interleavings the correct schedules pass (test_all), until one exposes it */
        for (seed = 1, caught = 0; seed <= 64 && !caught; seed++) {
            xfer_sim_opts_t o;
            xfer_sim_opts_default(&o);
            o.jitter = 1e-4;
            o.seed = seed;
            st = xfer_sim_run_hier(&b.s, &h, &o, NULL);
            UCHECK(st == XFER_SUCCESS || st == XFER_ERR_VERIFY || st == XFER_ERR_DEADLOCK, "%s: %s",
                   fault_name[fault], xfer_last_error());
            caught = st != XFER_SUCCESS;
        }
        UCHECK(caught, "%s: not caught in 64 interleavings", fault_name[fault]);
        if (getenv("XFER_TEST_VERBOSE"))
            fprintf(stderr, "%s: seed %lu: %s\n", fault_name[fault], seed - 1, xfer_last_error());
        xfer_nodes_free(&L[0]);
        xfer_nodes_free(&L[1]);
        checks++;
    }
    /* tasks are refused with a message, not simulated wrongly */
    {
        shape_buf_t b;
        xfer_hier_virtual_t v;
        make_shape(&b, 4, 4, 2, 0);
        memset(&v, 0, sizeof(v));
        v.node_size[0] = v.node_size[1] = 2;
        v.senders = 1;
        v.inner = "native";
        UCHECK(xfer_hier_simulate(&b.s, &v, 1, NULL, NULL) == XFER_ERR_NOT_SUPPORTED,
               "hier:native simulated");
        checks++;
    }
}

int main(int argc, char **argv)
{
    const int max = argc == 3 && strcmp(argv[1], "--max") == 0 ? atoi(argv[2]) : 7;
    UCHECK(max >= 1 && max <= 7, "--max %d: 1 to 7", max);
    test_all(max);
    test_faults();
    return unit_finish("test_hier_sim", checks);
}
