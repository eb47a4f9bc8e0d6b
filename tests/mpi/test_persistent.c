/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Persistent plans: bound once, run many times with changing data; polled with xfer_test;
 * two plans active at once on one intercommunicator; state errors; the copied count arrays;
 * the schedule dump. Every result is compared with native MPI_Allgatherv on the same data.
 *
 * Usage: mpiexec -n P+Q test_persistent --p P
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <xfer/xfer.h>

#include "../support/mpitest.h"

#define ITERS 20

typedef struct {
    int scount, *rcounts, *displs, rlen;
    int *sbuf, *rbuf, *rref;
} vbufs_t;

/* Skewed counts; block `skip` sends nothing; displacements reversed with gaps. */
static void vb_init(vbufs_t *b, const mt_inter_t *ic, int sender_groups, int scrambled)
{
    int i, off = 0;
    const int g = ic->group;
    b->scount = (sender_groups >> g) & 1 ? (ic->rank % 3 == 1 ? 0 : 40 * (ic->rank + 1)) : 0;
    b->rcounts = calloc((size_t) ic->nremote, sizeof(int));
    b->displs = calloc((size_t) ic->nremote, sizeof(int));
    for (i = 0; i < ic->nremote; i++)
        b->rcounts[i] = (sender_groups >> (1 - g)) & 1 ? (i % 3 == 1 ? 0 : 40 * (i + 1)) : 0;
    for (i = 0; i < ic->nremote; i++) {
        int j = scrambled ? ic->nremote - 1 - i : i;
        b->displs[j] = off;
        off += b->rcounts[j] + (scrambled ? 5 : 0);
    }
    b->rlen = off + 1;
    b->sbuf = calloc((size_t) b->scount + 1, sizeof(int));
    b->rbuf = calloc((size_t) b->rlen, sizeof(int));
    b->rref = calloc((size_t) b->rlen, sizeof(int));
    memset(b->rbuf, 0x33, (size_t) b->rlen * sizeof(int)); /* as vb_reference does */
}

static void vb_fill(vbufs_t *b, const mt_inter_t *ic, int salt)
{
    int j;
    for (j = 0; j < b->scount; j++)
        b->sbuf[j] = mt_value(ic->group, ic->rank, j, salt);
}

static void vb_reference(vbufs_t *b, const mt_inter_t *ic)
{
    memset(b->rref, 0x33, (size_t) b->rlen * sizeof(int));
    MT_MPI(MPI_Allgatherv(b->sbuf, b->scount, MPI_INT, b->rref, b->rcounts, b->displs, MPI_INT,
                          ic->inter));
}

static void vb_free(vbufs_t *b)
{
    free(b->sbuf);
    free(b->rbuf);
    free(b->rref);
    free(b->rcounts);
    free(b->displs);
}

static void test_repeated(const mt_inter_t *ic, const char *algo, int senders, int scrambled)
{
    vbufs_t b;
    xfer_plan_t *plan = NULL;
    xfer_coll_opts_t o;
    xfer_status_t st;
    const char *name = NULL;
    int it;

    vb_init(&b, ic, senders, scrambled);
    xfer_coll_opts_init(&o);
    o.algorithm = algo;
    st = xfer_allgatherv_inter_init(b.sbuf, b.scount, MPI_INT, b.rbuf, b.rcounts, b.displs, MPI_INT,
                                    ic->inter, &o, &plan);
    MT_CHECK(st == XFER_SUCCESS, "%s init: %s", algo, xfer_last_error());
    if (st != XFER_SUCCESS) {
        vb_free(&b);
        return;
    }
    {
        /* auto must notice the duplex mode: never a half-duplex-only algorithm in full duplex;
         * in half duplex a fully connected schedule (fc_half, relay, or fc_full, fc_direct or
         * relay_full in their one-directional forms) in which the group that contributes
         * nothing never sends across */
        const xfer_sched_t *sched = NULL;
        int half_ok = 1;
        MT_CHECK(xfer_plan_algorithm(plan, &name) == XFER_SUCCESS, "plan algorithm");
        if (strcmp(algo, "auto") != 0)
            MT_CHECK(strcmp(name, algo) == 0, "plan runs %s, not %s", name, algo);
        else if (senders == 3)
            MT_CHECK(!strcmp(name, "fc_full") || !strcmp(name, "fc_direct") ||
                         !strcmp(name, "relay_full"),
                     "auto chose %s for full duplex", name);
        else
            MT_CHECK(!strcmp(name, "fc_half") || !strcmp(name, "fc_full") ||
                         !strcmp(name, "fc_direct") || !strcmp(name, "relay") ||
                         !strcmp(name, "relay_full"),
                     "auto chose %s for half duplex", name);
        if (senders != 3 && strcmp(name, "ring") != 0 && /* ring forwards everything */
            xfer_plan_sched(plan, &sched) == XFER_SUCCESS && sched &&
            !((senders >> ic->group) & 1)) {
            char *text = NULL;
            size_t len = 0;
            FILE *mem = open_memstream(&text, &len);
            xfer_sched_dump(sched, mem);
            fclose(mem);
            half_ok = strstr(text, ic->group == 0 ? "send to B" : "send to A") == NULL;
            MT_CHECK(half_ok, "%s: the silent group sends across in half duplex:\n%s", name, text);
            free(text);
        }
    }
    /* the plan copied the count arrays: later changes by the caller do not matter */
    if (ic->nremote > 0)
        b.rcounts[0] += 1000;
    for (it = 0; it < ITERS; it++) {
        int done = 0, polls = 0;
        vb_fill(&b, ic, it * 7 + 1);
        MT_CHECK(xfer_start(plan) == XFER_SUCCESS, "%s start: %s", algo, xfer_last_error());
        if (it % 2) { /* poll */
            while (!done && xfer_test(plan, &done) == XFER_SUCCESS)
                polls++;
            MT_CHECK(done, "%s: xfer_test failed: %s", algo, xfer_last_error());
        } else {
            MT_CHECK(xfer_wait(plan) == XFER_SUCCESS, "%s wait: %s", algo, xfer_last_error());
        }
        if (ic->nremote > 0)
            b.rcounts[0] -= 1000;
        vb_reference(&b, ic);
        if (ic->nremote > 0)
            b.rcounts[0] += 1000;
        MT_CHECK(memcmp(b.rbuf, b.rref, (size_t) b.rlen * sizeof(int)) == 0,
                 "%s iteration %d (senders %d, scrambled %d): result differs from native", algo, it,
                 senders, scrambled);
    }
    if (ic->nremote > 0)
        b.rcounts[0] -= 1000;
    MT_CHECK(xfer_plan_free(&plan) == XFER_SUCCESS && plan == NULL, "plan_free");
    vb_free(&b);
}

/* Two plans on one intercommunicator, active at the same time, completed in reverse order. */
static void test_concurrent(const mt_inter_t *ic)
{
    vbufs_t b1, b2;
    xfer_plan_t *p1 = NULL, *p2 = NULL;
    xfer_coll_opts_t o1, o2;
    int it;

    vb_init(&b1, ic, 3, 0);
    vb_init(&b2, ic, 1, 1);
    xfer_coll_opts_init(&o1);
    xfer_coll_opts_init(&o2);
    o1.algorithm = "fc_full";
    o2.algorithm = "root_gather";
    MT_CHECK(xfer_allgatherv_inter_init(b1.sbuf, b1.scount, MPI_INT, b1.rbuf, b1.rcounts, b1.displs,
                                        MPI_INT, ic->inter, &o1, &p1) == XFER_SUCCESS,
             "init 1: %s", xfer_last_error());
    MT_CHECK(xfer_allgatherv_inter_init(b2.sbuf, b2.scount, MPI_INT, b2.rbuf, b2.rcounts, b2.displs,
                                        MPI_INT, ic->inter, &o2, &p2) == XFER_SUCCESS,
             "init 2: %s", xfer_last_error());
    for (it = 0; it < 5 && p1 && p2; it++) {
        vb_fill(&b1, ic, 100 + it);
        vb_fill(&b2, ic, 200 + it);
        MT_CHECK(xfer_start(p1) == XFER_SUCCESS, "start 1");
        MT_CHECK(xfer_start(p2) == XFER_SUCCESS, "start 2");
        MT_CHECK(xfer_wait(p2) == XFER_SUCCESS, "wait 2: %s", xfer_last_error());
        MT_CHECK(xfer_wait(p1) == XFER_SUCCESS, "wait 1: %s", xfer_last_error());
        vb_reference(&b1, ic);
        vb_reference(&b2, ic);
        MT_CHECK(memcmp(b1.rbuf, b1.rref, (size_t) b1.rlen * sizeof(int)) == 0,
                 "concurrent plan 1 wrong (iteration %d)", it);
        MT_CHECK(memcmp(b2.rbuf, b2.rref, (size_t) b2.rlen * sizeof(int)) == 0,
                 "concurrent plan 2 wrong (iteration %d)", it);
    }
    xfer_plan_free(&p1);
    xfer_plan_free(&p2);
    vb_free(&b1);
    vb_free(&b2);
}

static void test_states_and_dump(const mt_inter_t *ic)
{
    int s = ic->rank + 1, *r = calloc((size_t) ic->nremote, sizeof(int));
    xfer_plan_t *plan = NULL;
    xfer_coll_opts_t o;
    const xfer_sched_t *sched = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *mem;

    xfer_coll_opts_init(&o);
    o.algorithm = "fc_full";
    MT_CHECK(xfer_allgather_inter_init(&s, 1, MPI_INT, r, 1, MPI_INT, ic->inter, &o, &plan) ==
                 XFER_SUCCESS,
             "init: %s", xfer_last_error());
    MT_CHECK(xfer_wait(plan) == XFER_ERR_STATE, "wait before start accepted");
    MT_CHECK(xfer_start(plan) == XFER_SUCCESS, "start");
    MT_CHECK(xfer_start(plan) == XFER_ERR_STATE, "double start accepted");
    MT_CHECK(xfer_plan_free(&plan) == XFER_ERR_STATE && plan != NULL, "free of an active plan");
    MT_CHECK(xfer_wait(plan) == XFER_SUCCESS, "wait");
    for (s = 0; s < ic->nremote; s++)
        MT_CHECK(r[s] == s + 1, "allgather result %d at %d", r[s], s);

    MT_CHECK(xfer_plan_sched(plan, &sched) == XFER_SUCCESS && sched, "schedule");
    mem = open_memstream(&text, &len);
    MT_CHECK(xfer_sched_dump(sched, mem) == XFER_SUCCESS, "dump");
    fclose(mem);
    MT_CHECK(text && strstr(text, "schedule fc_full") && strstr(text, "round 0"), "dump text: %s",
             text ? text : "(null)");
    free(text);
    MT_CHECK(xfer_plan_free(&plan) == XFER_SUCCESS && plan == NULL, "free");
    MT_CHECK(xfer_plan_free(NULL) == XFER_SUCCESS, "free(NULL)");
    MT_CHECK(xfer_plan_free(&plan) == XFER_SUCCESS, "free(&NULL)");
    free(r);
}

int main(int argc, char **argv)
{
    static const char *algos[] = {"native",    "root_gather", "fc_full",   "fc_full_v",
                                  "ring_full", "ring",        "fc_direct", "auto"};
    int a, senders, rc;
    mt_inter_t ic;

    mt_init(&argc, &argv, 1, &ic);
    for (a = 0; a < (int) (sizeof(algos) / sizeof(algos[0])); a++)
        for (senders = 1; senders <= 3; senders++) /* A->B, B->A, both */
            test_repeated(&ic, algos[a], senders, senders == 3);
    test_repeated(&ic, "fc_half", 1, 1);
    test_repeated(&ic, "fc_half", 2, 0);
    test_repeated(&ic, "ring_half", 1, 0);
    test_repeated(&ic, "ring_half", 2, 1);
    test_concurrent(&ic);
    test_states_and_dump(&ic);
    mt_free_inter(&ic);
    rc = mt_finish("test_persistent");
    MPI_Finalize();
    return rc;
}
