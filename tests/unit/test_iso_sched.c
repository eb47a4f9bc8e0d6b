/* SPDX-License-Identifier: BSD-3-Clause */
/* Isomorphic schedules (seed-isomorphic §6-9, §12-13): the figures of the digest's table, and a
 * symbolic run of every algorithm on small tori (Moore, von Neumann, asymmetric, long offsets,
 * duplicates, self offsets, s > p, extents 1 and 2, random neighbourhoods). `--quick`: the first
 * 100 of the 300 random neighbourhoods (the valgrind run checks memory behaviour on fewer, the
 * plain run covers them all). */
#include <stdlib.h>
#include <string.h>

#include <xfer/iso.h>

#include "../support/unit.h"
#include "iso/iso_sched.h"
#include "sched/sched.h"
#include "sched/sim.h"

static long checks;

/* A small deterministic generator (rand_r is not C11). */
static unsigned next_rand(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 16) & 0x7fff;
}

/* Moore neighbourhood of radius r in d dimensions (all nonzero vectors with |c_j| <= r);
 * positive: coordinates in 0..r only. Returns s. */
static int moore(int d, int r, int positive, int *off)
{
    int s = 0, lo = positive ? 0 : -r, w = r - lo + 1, total = 1;
    for (int j = 0; j < d; j++)
        total *= w;
    for (int k = 0; k < total; k++) {
        int x = k, zero = 1;
        for (int j = 0; j < d; j++) {
            off[s * d + j] = lo + x % w;
            zero &= off[s * d + j] == 0;
            x /= w;
        }
        if (!zero)
            s++;
    }
    return s;
}

static int von_neumann(int d, int *off)
{
    int s = 0;
    for (int j = 0; j < d; j++)
        for (int sign = 1; sign >= -1; sign -= 2) {
            for (int k = 0; k < d; k++)
                off[s * d + k] = k == j ? sign : 0;
            s++;
        }
    return s;
}

static xfer_iso_nbh_t nbh(int d, const int *dims, int s, const int *off)
{
    xfer_iso_nbh_t n;
    memset(&n, 0, sizeof(n));
    n.d = d;
    n.s = s;
    n.off = off;
    for (int j = 0; j < d; j++) {
        n.dims[j] = dims[j];
        n.periods[j] = 1;
    }
    return n;
}

/* The table of seed-isomorphic §12 (W is the drop-off volume of the torus allgather). */
static void test_table(void)
{
    static const struct {
        int d, r, positive, s, D;
        long V, W;
        int dr;
        long dv;
    } row[] = {
        {2, 1, 0, 8, 4, 12, 8, 4, 12},          {3, 1, 0, 26, 6, 54, 26, 6, 54},
        {4, 1, 0, 80, 8, 216, 80, 8, 216},      {5, 1, 0, 242, 10, 810, 242, 10, 810},
        {3, 3, 0, 342, 18, 1764, 342, 18, 882}, {3, 3, 1, 63, 9, 288, 63, 9, 144},
        {3, 1, 1, 7, 3, 12, 7, 3, 12},
    };
    static int off[400 * 5];
    int dims[5] = {4, 4, 4, 4, 4};
    for (size_t k = 0; k < sizeof(row) / sizeof(row[0]); k++) {
        int s = moore(row[k].d, row[k].r, row[k].positive, off);
        xfer_iso_nbh_t n = nbh(row[k].d, dims, s, off);
        xfer_iso_counts_t c;
        UCHECK(s == row[k].s, "d=%d r=%d: s %d", row[k].d, row[k].r, s);
        UCHECK(xfer_iso_counts(&n, &c) == XFER_SUCCESS, "counts");
        UCHECK(c.D == row[k].D, "d=%d r=%d%s: D %d, expected %d", row[k].d, row[k].r,
               row[k].positive ? "+" : "", c.D, row[k].D);
        UCHECK(c.V == row[k].V, "d=%d r=%d: V %ld, expected %ld", row[k].d, row[k].r, c.V,
               row[k].V);
        UCHECK(c.W == row[k].W, "d=%d r=%d%s: W %ld, expected %ld", row[k].d, row[k].r,
               row[k].positive ? "+" : "", c.W, row[k].W);
        UCHECK(c.direct_rounds == row[k].dr && c.direct_V == row[k].dv,
               "d=%d r=%d: direct %d rounds %ld blocks", row[k].d, row[k].r, c.direct_rounds,
               c.direct_V);
        UCHECK(c.direct_W == s, "d=%d r=%d: direct allgather volume %ld, s %d", row[k].d, row[k].r,
               c.direct_W, s);
        checks++;
    }
    /* The 27-point stencil: 26 messages become 6 rounds, not the 3 of the printed formula. */
    {
        int s = moore(3, 1, 0, off);
        xfer_iso_nbh_t n = nbh(3, dims, s, off);
        xfer_iso_counts_t c;
        xfer_iso_counts(&n, &c);
        UCHECK(c.D == 6, "27-point stencil: D %d", c.D);
        checks++;
    }
}

/* Build, verify and compare rounds and volume with the figures, for every algorithm and op. */
static void run_all(const char *what, const xfer_iso_nbh_t *n)
{
    static const char *algos[] = {"straight", "torus", "direct", "posted"};
    xfer_iso_counts_t c;
    UCHECK(xfer_iso_counts(n, &c) == XFER_SUCCESS, "%s: counts", what);
    for (int a = 0; a < 4; a++) {
        for (int op = 0; op < 2; op++) {
            xfer_iso_sched_t s;
            xfer_status_t st = xfer_iso_sched_build(n, algos[a], op, &s);
            int rounds;
            long vol;
            UCHECK(st == XFER_SUCCESS, "%s %s op %d: build %d: %s", what, algos[a], op, st,
                   xfer_last_error());
            if (st != XFER_SUCCESS)
                continue;
            st = xfer_iso_sched_verify(n, &s);
            UCHECK(st == XFER_SUCCESS, "%s %s %s: %s", what, algos[a],
                   op ? "allgather" : "alltoall", xfer_last_error());
            /* the lowered schedules of every process, through the engine's simulator */
            st = xfer_iso_sched_simulate(n, &s, NULL, NULL);
            UCHECK(st == XFER_SUCCESS, "%s %s %s: engine simulation: %s", what, algos[a],
                   op ? "allgather" : "alltoall", xfer_last_error());
            rounds = xfer_iso_sched_rounds(&s);
            vol = xfer_iso_sched_volume(&s);
            if (a == 0 || a == 3) { /* posted: the same messages in one round */
                int want = a == 0 ? c.s - c.self : c.s > c.self;
                UCHECK(rounds == want && vol == c.s - c.self, "%s %s: %d rounds", what, algos[a],
                       rounds);
            } else if (a == 1) {
                UCHECK(rounds == c.D, "%s torus op %d: %d rounds, D = %d", what, op, rounds, c.D);
                UCHECK(vol == (op ? c.W : c.V), "%s torus op %d: volume %ld", what, op, vol);
                if (op == 1)
                    UCHECK(c.W <= c.V, "%s: W %ld > V %ld", what, c.W, c.V);
            } else {
                UCHECK(rounds == c.direct_rounds, "%s direct op %d: %d rounds, expected %d", what,
                       op, rounds, c.direct_rounds);
                if (op == 0)
                    UCHECK(vol == c.direct_V, "%s direct: volume %ld", what, vol);
            }
            xfer_iso_sched_fini(&s);
            checks++;
        }
    }
}

static void test_shapes(void)
{
    static int off[400 * 3];
    int s;
    {
        int dims[] = {5};
        int o[] = {1, -1, 2, -3, 0, 1, 7};
        xfer_iso_nbh_t n = nbh(1, dims, 7, o);
        run_all("1-D mixed", &n);
    }
    for (int d = 1; d <= 3; d++) {
        int dims3[3][3] = {{5, 1, 1}, {4, 3, 1}, {3, 2, 4}};
        for (int r = 1; r <= 2; r++) {
            s = moore(d, r, 0, off);
            xfer_iso_nbh_t n = nbh(d, dims3[d - 1], s, off);
            run_all("Moore", &n);
            s = moore(d, r, 1, off);
            n = nbh(d, dims3[d - 1], s, off);
            run_all("positive Moore", &n);
        }
        s = von_neumann(d, off);
        xfer_iso_nbh_t n = nbh(d, dims3[d - 1], s, off);
        run_all("von Neumann", &n);
    }
    { /* Algorithm 1 regression: |first nonzero coordinate| >= 2 (erratum E2) */
        int dims[] = {6, 5};
        int o[] = {2, 0, -3, 1};
        xfer_iso_nbh_t n = nbh(2, dims, 2, o);
        run_all("{(2,0),(-3,1)}", &n);
    }
    { /* duplicates, self offsets, s > p, extents 1 and 2 */
        int dims[] = {2, 1, 2};
        int o[] = {1, 0, 0, 1, 0, 0, 0, 0, 0, -1, 3, 1, 0, 0, 0, 2, 0, -2, 1, 1, 1, -1, -1, -1};
        xfer_iso_nbh_t n = nbh(3, dims, 8, o);
        run_all("duplicates and self, s > p", &n);
    }
    { /* s = 1 */
        int dims[] = {3, 3};
        int o[] = {1, -1};
        xfer_iso_nbh_t n = nbh(2, dims, 1, o);
        run_all("s = 1", &n);
    }
}

static void test_random(int count)
{
    static int off[30 * 4];
    unsigned seed = 12345;
    for (int k = 0; k < count; k++) {
        int d = 1 + (int) (next_rand(&seed) % 4), s = 1 + (int) (next_rand(&seed) % 30), dims[4];
        char what[64];
        for (int j = 0; j < d; j++)
            dims[j] = 1 + (int) (next_rand(&seed) % 4);
        for (int i = 0; i < s * d; i++)
            off[i] = (int) (next_rand(&seed) % 7) - 3;
        xfer_iso_nbh_t n = nbh(d, dims, s, off);
        snprintf(what, sizeof(what), "random #%d (d=%d s=%d)", k, d, s);
        run_all(what, &n);
    }
}

/* The checker must be able to fail: a wrong slot, a missing step, the literal first-hop test. */
static void test_verify_fails(void)
{
    int dims[] = {6, 5};
    int o[] = {2, 0, -3, 1, 1, 1};
    xfer_iso_nbh_t n = nbh(2, dims, 3, o);
    xfer_iso_sched_t s;
    UCHECK(xfer_iso_sched_build(&n, "torus", XFER_ISO_OP_ALLTOALL, &s) == XFER_SUCCESS, "build");
    s.parts[s.nparts - 1].rslot = (s.parts[s.nparts - 1].rslot + 1) % 3;
    UCHECK(xfer_iso_sched_verify(&n, &s) == XFER_ERR_VERIFY, "wrong slot not caught");
    xfer_iso_sched_fini(&s);

    UCHECK(xfer_iso_sched_build(&n, "torus", XFER_ISO_OP_ALLTOALL, &s) == XFER_SUCCESS, "build");
    s.nsteps--;
    UCHECK(xfer_iso_sched_verify(&n, &s) == XFER_ERR_VERIFY, "missing step not caught");
    xfer_iso_sched_fini(&s);

    /* Algorithm 1 as printed: every step of the first nonzero dimension reads SEND. */
    UCHECK(xfer_iso_sched_build(&n, "torus", XFER_ISO_OP_ALLTOALL, &s) == XFER_SUCCESS, "build");
    for (int t = 0; t < s.nsteps; t++) {
        for (int k = 0; k < s.steps[t].nparts; k++) {
            xfer_iso_part_t *p = &s.parts[s.steps[t].first + k];
            int first = 0;
            while (o[p->block * 2 + first] == 0)
                first++;
            if (s.steps[t].vec[first] != 0)
                p->sbuf = XFER_ISO_SEND;
        }
    }
    UCHECK(xfer_iso_sched_verify(&n, &s) == XFER_ERR_VERIFY, "literal first-hop test not caught");
    xfer_iso_sched_fini(&s);

    /* Combining needs periodic dimensions; the straightforward algorithm does not. */
    n.periods[1] = 0;
    UCHECK(xfer_iso_sched_build(&n, "torus", XFER_ISO_OP_ALLTOALL, &s) == XFER_ERR_NOT_SUPPORTED,
           "torus accepted a non-periodic dimension");
    for (int op = 0; op < 2; op++) {
        UCHECK(xfer_iso_sched_build(&n, "straight", op, &s) == XFER_SUCCESS, "straight");
        UCHECK(xfer_iso_sched_verify(&n, &s) == XFER_SUCCESS, "straight non-periodic: %s",
               xfer_last_error());
        xfer_iso_sched_fini(&s);
    }
    checks += 5;
}

/* The engine's simulator catches faults in the lowered schedules themselves (what the executor
 * runs), not only in the step list: a receive into the wrong slot, a message to the wrong
 * process, and a send whose pieces go out in the wrong order. */
typedef struct bad_world {
    const xfer_iso_nbh_t *n;
    const xfer_iso_sched_t *s;
    int fault; /* 0 wrong peer, 1 pieces swapped */
} bad_world_t;

static xfer_status_t bad_build(void *ctx, int rank, xfer_sched_t **out)
{
    const bad_world_t *w = ctx;
    xfer_status_t st = xfer_iso_lower(w->n, w->s, rank, out);
    if (st != XFER_SUCCESS || rank != 1)
        return st;
    for (int k = 0; k < (*out)->nops; k++) {
        xfer_op_t *op = &(*out)->ops[k];
        if (op->kind != XFER_OP_SEND)
            continue;
        if (w->fault == 0) {
            op->peer = (op->peer + 1) % (*out)->n[0];
            break;
        }
        if (op->npieces >= 2) {
            xfer_piece_t t = (*out)->pieces[op->piece0];
            (*out)->pieces[op->piece0] = (*out)->pieces[op->piece0 + 1];
            (*out)->pieces[op->piece0 + 1] = t;
            break;
        }
    }
    return XFER_SUCCESS;
}

static int good_expect(void *ctx, int rank, size_t u, size_t *want)
{
    const bad_world_t *w = ctx;
    const int src = xfer_iso_shift(w->n, rank, &w->n->off[u * (size_t) w->n->d], -1);
    *want = (size_t) src * (size_t) w->n->s + u;
    return src >= 0;
}

static void test_engine_sim_fails(void)
{
    int dims[] = {4, 3};
    int o[] = {1, 0, 0, 1, 1, 1, -1, 1};
    xfer_iso_nbh_t n = nbh(2, dims, 4, o);
    xfer_iso_sched_t s;
    UCHECK(xfer_iso_sched_build(&n, "torus", XFER_ISO_OP_ALLTOALL, &s) == XFER_SUCCESS, "build");
    UCHECK(xfer_iso_sched_simulate(&n, &s, NULL, NULL) == XFER_SUCCESS, "torus: %s",
           xfer_last_error());
    for (int fault = 0; fault < 2; fault++) {
        bad_world_t w = {&n, &s, fault};
        xfer_sim_flat_t f = {xfer_iso_size(&n), &w, bad_build, good_expect};
        xfer_status_t st = xfer_sim_run_flat(&f, NULL, NULL);
        UCHECK(st == XFER_ERR_VERIFY || st == XFER_ERR_DEADLOCK, "fault %d not caught (%d)", fault,
               st);
    }
    s.parts[s.nparts - 1].rslot = (s.parts[s.nparts - 1].rslot + 1) % 4;
    UCHECK(xfer_iso_sched_simulate(&n, &s, NULL, NULL) == XFER_ERR_VERIFY,
           "wrong receive slot not caught by the engine simulation");
    xfer_iso_sched_fini(&s);
    checks += 4;
}

/* xfer_iso_stencil gives the neighbourhoods the generators above give, in the same order. */
static void test_stencil(void)
{
    static int want[400 * 3], got[400 * 3];
    for (int d = 1; d <= 3; d++) {
        for (int r = 1; r <= 2; r++) {
            for (int positive = 0; positive < 2; positive++) {
                int s = moore(d, r, positive, want), n = -1;
                xfer_iso_stencil_t kind = positive ? XFER_ISO_MOORE_POSITIVE : XFER_ISO_MOORE;
                UCHECK(xfer_iso_stencil(kind, d, r, 0, NULL, &n) == XFER_ERR_TOO_LARGE && n == s,
                       "d=%d r=%d: counted %d of %d", d, r, n, s);
                UCHECK(xfer_iso_stencil(kind, d, r, 400, got, &n) == XFER_SUCCESS && n == s &&
                           !memcmp(got, want, sizeof(int) * (size_t) (s * d)),
                       "d=%d r=%d%s: stencil differs", d, r, positive ? "+" : "");
                checks++;
            }
        }
        {
            int s = von_neumann(d, want), n = -1;
            UCHECK(xfer_iso_stencil(XFER_ISO_VON_NEUMANN, d, 1, 400, got, &n) == XFER_SUCCESS &&
                       n == s,
                   "von Neumann d=%d: %d offsets", d, n);
            /* the same set (von_neumann above lists them per axis) */
            for (int i = 0; i < s; i++) {
                int found = 0;
                for (int k = 0; k < n && !found; k++)
                    found = !memcmp(&got[k * d], &want[i * d], sizeof(int) * (size_t) d);
                UCHECK(found, "von Neumann d=%d: offset %d missing", d, i);
            }
            checks++;
        }
    }
    UCHECK(xfer_iso_stencil(XFER_ISO_MOORE, 0, 1, 0, NULL, &(int){0}) == XFER_ERR_INVALID_ARG,
           "ndims 0 accepted");
}

int main(int argc, char **argv)
{
    const int quick = argc == 2 && strcmp(argv[1], "--quick") == 0;
    test_table();
    test_shapes();
    test_random(quick ? 100 : 300);
    test_verify_fails();
    test_engine_sim_fails();
    test_stencil();
    return unit_finish("test_iso_sched", checks);
}
