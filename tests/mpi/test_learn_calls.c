/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auto that learns, on real calls: blocking calls, persistent plans, plans started once (the
 * PMPI drop-in's nonblocking calls) and two such plans in flight at once. Each mode runs on a
 * fresh intercommunicator (a fresh selector); group A's ranks arrive late by different amounts
 * (a busy wait, not a sleep: arrival skew is what is tested, no race is hidden), so the ranks'
 * own times differ. Checked at every call: the result is MPI_Allgather(v)'s, and every rank of
 * both groups ran the same algorithm (xfer_last_op_algorithm); over the calls: the learning
 * tried more than one algorithm where the model cannot tell them apart, and with learning off
 * every call ran one algorithm.
 *
 *   mpiexec -n 6 test_learn_calls --p 3 [--calls N] [--count N]
 */
#include <stdlib.h>

#include <xfer/xfer.h>

#include "../support/mpitest.h"

static mt_inter_t ic;
static MPI_Comm all; /* both groups, to compare the ranks' algorithms */
static int calls = 14, count = 16384;

enum { NAME = 48 };

static void skew(int call)
{
    const double until = MPI_Wtime() + (ic.group == 0 ? 0.001 * ((ic.rank + call) % 3) : 0.0);
    while (MPI_Wtime() < until)
        ;
}

/* Every rank ran @p name; the number of distinct names so far goes up in *@p distinct. */
static void same_everywhere(const char *mode, int call, const char *name, char seen[][NAME],
                            int *distinct)
{
    int n, i;
    char mine[NAME], *every;
    MPI_Comm_size(all, &n);
    memset(mine, 0, sizeof(mine));
    snprintf(mine, sizeof(mine), "%s", name);
    every = calloc((size_t) n, NAME);
    MT_MPI(MPI_Allgather(mine, NAME, MPI_CHAR, every, NAME, MPI_CHAR, all));
    for (i = 0; i < n; i++)
        MT_CHECK(strcmp(every + (size_t) i * NAME, mine) == 0,
                 "%s call %d: this rank ran %s, merged rank %d ran %s", mode, call, mine, i,
                 every + (size_t) i * NAME);
    free(every);
    for (i = 0; i < *distinct; i++)
        if (strcmp(seen[i], mine) == 0)
            break;
    if (i == *distinct && *distinct < 8)
        snprintf(seen[(*distinct)++], NAME, "%s", mine);
}

typedef struct buffers {
    int *s, *r, *ref, *rc, *rd;
    int mine, total;
} buffers_t;

/* allgatherv with skew: rank i of a group sends count * (1 + i % 2) ints, so the heaviest rank
 * carries about twice the average when v is set. */
static void fill(buffers_t *b, int v, int call)
{
    int i;
    b->mine = v ? count * (1 + ic.rank % 2) : count;
    b->total = 0;
    for (i = 0; i < ic.nremote; i++) {
        b->rc[i] = v ? count * (1 + i % 2) : count;
        b->rd[i] = b->total;
        b->total += b->rc[i];
    }
    for (i = 0; i < b->mine; i++)
        b->s[i] = mt_value(ic.group, ic.rank, i, call);
    memset(b->r, 0, sizeof(int) * (size_t) b->total);
    MT_MPI(MPI_Allgatherv(b->s, b->mine, MPI_INT, b->ref, b->rc, b->rd, MPI_INT, ic.inter));
}

static void check_result(const buffers_t *b, const char *mode, int call, const char *name)
{
    MT_CHECK(!memcmp(b->r, b->ref, sizeof(int) * (size_t) b->total),
             "%s call %d (%s): result differs from MPI_Allgatherv", mode, call, name);
}

/* @p mode: blocking, persistent, once, overlap. Returns the number of algorithms seen. */
static int run(const char *mode, int v, xfer_coll_learn_t learn)
{
    MPI_Comm inter;
    buffers_t b[2];
    xfer_coll_opts_t o;
    xfer_plan_t *plan = NULL, *pl[2];
    char seen[8][NAME], names[2][NAME];
    const char *name = "";
    int distinct = 0, c, k;

    MT_MPI(MPI_Comm_dup(ic.inter, &inter));
    xfer_coll_opts_init(&o);
    o.learn = learn;
    for (k = 0; k < 2; k++) {
        b[k].s = malloc(sizeof(int) * (size_t) (2 * count));
        b[k].r = malloc(sizeof(int) * (size_t) (2 * count * ic.nremote));
        b[k].ref = malloc(sizeof(int) * (size_t) (2 * count * ic.nremote));
        b[k].rc = malloc(sizeof(int) * (size_t) ic.nremote);
        b[k].rd = malloc(sizeof(int) * (size_t) ic.nremote);
    }
    if (!strcmp(mode, "persistent")) {
        fill(&b[0], v, 0);
        MT_XFER_OK(xfer_allgatherv_inter_init(b[0].s, b[0].mine, MPI_INT, b[0].r, b[0].rc, b[0].rd,
                                              MPI_INT, inter, &o, &plan));
    }
    for (c = 0; c < calls; c++) {
        if (!strcmp(mode, "blocking")) {
            fill(&b[0], v, c);
            skew(c);
            MT_XFER_OK(xfer_allgatherv_inter(b[0].s, b[0].mine, MPI_INT, b[0].r, b[0].rc, b[0].rd,
                                             MPI_INT, inter, &o));
            MT_XFER_OK(xfer_last_op_algorithm(&name));
            check_result(&b[0], mode, c, name);
        } else if (!strcmp(mode, "persistent")) {
            fill(&b[0], v, c); /* the same counts every call: the plan's buffers, new contents */
            skew(c);
            MT_XFER_OK(xfer_start(plan));
            MT_XFER_OK(xfer_wait(plan));
            MT_XFER_OK(xfer_plan_algorithm(plan, &name));
            check_result(&b[0], mode, c, name);
            {
                const char *last = "";
                MT_XFER_OK(xfer_last_op_algorithm(&last));
                MT_CHECK(!strcmp(last, name), "persistent call %d: plan ran %s, last op %s", c,
                         name, last);
            }
        } else { /* once: the PMPI drop-in's nonblocking calls; overlap: two of them in flight */
            const int n = !strcmp(mode, "overlap") ? 2 : 1;
            o.once = 1;
            for (k = 0; k < n; k++) {
                fill(&b[k], v, 2 * c + k);
                MT_XFER_OK(xfer_allgatherv_inter_init(b[k].s, b[k].mine, MPI_INT, b[k].r, b[k].rc,
                                                      b[k].rd, MPI_INT, inter, &o, &pl[k]));
            }
            skew(c);
            for (k = 0; k < n; k++)
                MT_XFER_OK(xfer_start(pl[k]));
            for (k = n - 1; k >= 0; k--) { /* completed in the other order */
                MT_XFER_OK(xfer_wait(pl[k]));
                MT_XFER_OK(xfer_plan_algorithm(pl[k], &name));
                snprintf(names[k], NAME, "%s", name);
                check_result(&b[k], mode, c, name);
                MT_XFER_OK(xfer_plan_free(&pl[k]));
            }
            for (k = 0; k + 1 < n; k++)
                same_everywhere(mode, c, names[k], seen, &distinct);
            name = names[n - 1];
        }
        same_everywhere(mode, c, name, seen, &distinct);
    }
    if (plan)
        MT_XFER_OK(xfer_plan_free(&plan));
    for (k = 0; k < 2; k++) {
        free(b[k].s);
        free(b[k].r);
        free(b[k].ref);
        free(b[k].rc);
        free(b[k].rd);
    }
    MT_MPI(MPI_Comm_free(&inter));
    return distinct;
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"blocking", "persistent", "once", "overlap"};
    int i, v, n;

    mt_init(&argc, &argv, 3, &ic);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = atoi(argv[++i]);
    }
    MT_MPI(MPI_Intercomm_merge(ic.inter, ic.group, &all));
    for (v = 0; v < 2; v++)
        for (i = 0; i < 4; i++) {
            n = run(modes[i], v, XFER_COLL_LEARN_ON);
            /* full duplex, p = q: the model cannot tell fc_full from fc_direct (their costs are
             * within 1 %), so the learning tries both */
            if (ic.nlocal == ic.nremote)
                MT_CHECK(n >= 2, "%s%s: only %d algorithm(s) tried", modes[i], v ? " (v)" : "", n);
            n = run(modes[i], v, XFER_COLL_LEARN_OFF);
            MT_CHECK(n == 1, "%s%s with learning off: %d algorithms", modes[i], v ? " (v)" : "", n);
        }
    MPI_Comm_free(&all);
    mt_free_inter(&ic);
    {
        int rc = mt_finish("test_learn_calls");
        MPI_Finalize();
        return rc;
    }
}
