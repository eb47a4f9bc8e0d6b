/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every schedule builder, executed symbolically for every rank of every shape with p, q in
 * 1..MAXN, for equal block sizes (allgather) and many count patterns (allgatherv: zeros,
 * skew, totals smaller than the group). The simulator moves real bytes with rendezvous
 * semantics and checks each rank's result byte for byte; on top of that we check the traffic
 * properties the papers prove (seed-intergroup §7). A deliberately broken builder shows the
 * simulator does catch wrong schedules.
 */
#include <string.h>

#include <xfer/sim.h>

#include "../support/unit.h"
#include "algos/algos.h"
#include "sched/sim.h"
#include "select/select.h"

#define MAXN 12

static long checks;

typedef struct {
    xfer_shape_t s;
    size_t cnt[2][64], pre[2][65];
} shape_buf_t;

static void make_uniform(shape_buf_t *b, int p, int q, size_t ka, size_t kb)
{
    memset(b, 0, sizeof(*b));
    b->s.n[0] = p;
    b->s.n[1] = q;
    b->s.ucnt[0] = ka;
    b->s.ucnt[1] = kb;
    b->s.total[0] = ka * (size_t) p;
    b->s.total[1] = kb * (size_t) q;
}

static void make_v(shape_buf_t *b, int p, int q)
{
    int g, i;
    b->s.n[0] = p;
    b->s.n[1] = q;
    for (g = 0; g < 2; g++) {
        b->pre[g][0] = 0;
        for (i = 0; i < b->s.n[g]; i++)
            b->pre[g][i + 1] = b->pre[g][i] + b->cnt[g][i];
        b->s.cnt[g] = b->cnt[g];
        b->s.pre[g] = b->pre[g];
        b->s.total[g] = b->pre[g][b->s.n[g]];
    }
}

static unsigned long long rng = 88172645463325252ULL;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned) (rng % n);
}

/* Count patterns for allgatherv. */
static void fill_pattern(shape_buf_t *b, int p, int q, int pat)
{
    int g, i;
    memset(b, 0, sizeof(*b));
    for (g = 0; g < 2; g++) {
        int n = g ? q : p;
        for (i = 0; i < n; i++) {
            size_t c = 0;
            switch (pat) {
            case 0:
                c = rnd(50);
                break; /* random, zeros likely */
            case 1:
                c = (size_t) (i + 1) * 5;
                break; /* arithmetic (P settings 6, 8) */
            case 2:
                c = i == n - 1 ? 97 : 1;
                break; /* one large block */
            case 3:
                c = rnd(4) == 0 ? 1 : 0;
                break; /* K < n: empty segments */
            case 4:
                c = g == 0 ? rnd(30) + 1 : 0;
                break; /* half duplex A -> B, skewed */
            case 5:
                c = g == 1 ? (size_t) (3 * i % 7) : 0;
                break; /* half duplex B -> A */
            case 6:
                c = rnd(2) ? 64 : 0;
                break; /* holes */
            default:
                c = 13; /* equal, through the v path */
            }
            b->cnt[g][i] = c;
        }
    }
    make_v(b, p, q);
}
#define NPATTERNS 8

static size_t ceil_div(size_t a, size_t b)
{
    return b ? (a + b - 1) / b : 0;
}

static size_t max_count(const xfer_shape_t *s, int g)
{
    size_t m = 0;
    int i;
    for (i = 0; i < s->n[g]; i++)
        m = XFER_MAX(m, xfer_shape_count(s, g, i));
    return m;
}

static void run(const xfer_algo_t *a, const xfer_shape_t *s, const char *what)
{
    xfer_sim_stats_t st;
    const char *why;
    xfer_status_t rc;

    if (!xfer_algo_supports(a, s, &why))
        return;
    rc = xfer_sim_run(s, a->model, NULL, &st);
    checks++;
    UCHECK(rc == XFER_SUCCESS, "%s p=%d q=%d %s: %s", a->name, s->n[0], s->n[1], what,
           xfer_last_error());
    if (rc != XFER_SUCCESS)
        return;

    if (strcmp(a->name, "fc_full_v") == 0) {
        /* Alg. 2: a receiver's exchange bytes are its segment (<= ceil(K/n)); a sender sends
         * exactly its own block. */
        size_t seg = XFER_MAX(ceil_div(s->total[0], (size_t) s->n[1]),
                              ceil_div(s->total[1], (size_t) s->n[0]));
        UCHECK(st.max_recv <= seg, "%s p=%d q=%d %s: a rank receives %zu > segment %zu", a->name,
               s->n[0], s->n[1], what, st.max_recv, seg);
        UCHECK(st.max_sent == XFER_MAX(max_count(s, 0), max_count(s, 1)),
               "%s p=%d q=%d %s: max sent %zu", a->name, s->n[0], s->n[1], what, st.max_sent);
        UCHECK(st.total_sent == s->total[0] + s->total[1], "%s: total sent %zu", a->name,
               st.total_sent);
    }
    if (strcmp(a->name, "fc_full") == 0 && !s->cnt[0] && !s->cnt[1]) {
        /* Alg. 1: ceil(P/Q) exchange rounds + one allgather; each byte crosses once. */
        int P = XFER_MAX(s->n[0], s->n[1]), Q = XFER_MIN(s->n[0], s->n[1]);
        UCHECK(st.max_rounds <= (P + Q - 1) / Q + 1, "%s p=%d q=%d %s: %d rounds", a->name, s->n[0],
               s->n[1], what, st.max_rounds);
        UCHECK(st.total_sent == s->total[0] + s->total[1], "%s p=%d q=%d %s: total sent %zu",
               a->name, s->n[0], s->n[1], what, st.total_sent);
    }
    if (strcmp(a->name, "fc_half") == 0 && !s->cnt[0] && !s->cnt[1]) {
        const int sg = s->total[0] ? 0 : 1;
        const int p = s->n[sg], q = s->n[1 - sg];
        const size_t k = s->ucnt[sg];
        if (p >= q && k > 0) { /* H-FC-EQ/GT: one message of k per active sender, 2 rounds */
            UCHECK(st.max_rounds <= 2, "fc_half p>=q: %d rounds", st.max_rounds);
            UCHECK(st.messages == q && st.max_sent == k, "fc_half p>=q: %ld msgs, max %zu",
                   st.messages, st.max_sent);
        }
    }
    { /* ring schedules: the step counts the derivations promise */
        const int pa = s->n[0] + s->n[0] % 2, pb = s->n[1] + s->n[1] % 2;
        const int tab = pa + pb / 2, tba = pb + pa / 2;
        if (strcmp(a->name, "ring") == 0)
            UCHECK(st.steps == s->n[0] + s->n[1] - 1, "ring p=%d q=%d: %d steps", s->n[0], s->n[1],
                   st.steps);
        if (strcmp(a->name, "ring_half") == 0 && (s->total[0] || s->total[1]))
            UCHECK(st.steps == (s->total[0] ? tab : tba), "ring_half p=%d q=%d: %d steps", s->n[0],
                   s->n[1], st.steps);
        if (strcmp(a->name, "ring_full") == 0)
            UCHECK(st.steps == (s->total[0] ? tab : 0) + (s->total[1] ? tba : 0),
                   "ring_full p=%d q=%d %s: %d steps", s->n[0], s->n[1], what, st.steps);
    }
    if (strcmp(a->name, "root_gather") == 0) /* the roots' exchange carries everything */
        UCHECK(st.max_sent >= XFER_MAX(s->total[0], s->total[1]) || st.messages == 0,
               "root_gather: max sent %zu", st.max_sent);
}

/* A wrong schedule: fc_full_v whose receivers drop their last receive. */
static xfer_status_t broken_builder(const xfer_shape_t *shape, xfer_sched_t *s)
{
    xfer_status_t st = xfer_build_fc_full_v(shape, s);
    int i;
    for (i = s->nops - 1; i >= 0 && st == XFER_SUCCESS; i--)
        if (s->ops[i].kind == XFER_OP_RECV) {
            s->ops[i].off = 0; /* lands in the wrong place */
            break;
        }
    return st;
}

static xfer_status_t deadlock_builder(const xfer_shape_t *shape, xfer_sched_t *s)
{
    /* Both group roots receive first, in separate rounds from their send: a classic cycle. */
    s->algo = "deadlock";
    if (s->rank == 0) {
        int peer = xfer_merged_rank(shape, 1 - s->group, 0);
        xfer_sched_recv(s, peer, XFER_BUF_RECV, 0, shape->total[1 - s->group], 0);
        xfer_sched_round(s);
        xfer_sched_send(s, peer, XFER_BUF_SEND, 0, s->send_bytes, 0);
    }
    return xfer_sched_finish(s);
}

/* Every rank sends its block to both neighbours at once: two sends in one round. */
static xfer_status_t two_ports_builder(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const int N = shape->n[0] + shape->n[1], me = xfer_merged_rank(shape, s->group, s->rank);
    s->algo = "two_ports";
    xfer_sched_send(s, (me + 1) % N, XFER_BUF_SEND, 0, s->send_bytes, 0);
    xfer_sched_send(s, (me + N - 1) % N, XFER_BUF_SEND, 0, s->send_bytes, 0);
    return xfer_sched_finish(s);
}

/* A ring schedule that skips a neighbour. */
static xfer_status_t far_builder(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const int N = shape->n[0] + shape->n[1], me = xfer_merged_rank(shape, s->group, s->rank);
    s->algo = "far";
    s->ring_only = 1;
    xfer_sched_send(s, (me + 2) % N, XFER_BUF_SEND, 0, s->send_bytes, 0);
    xfer_sched_recv(s, (me + N - 2) % N, XFER_BUF_RECV, 0, s->send_bytes, 0);
    return xfer_sched_finish(s);
}

/* Forwards RECV[0..k) in the same round it receives into it. */
static xfer_status_t race_builder(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const int peer = xfer_merged_rank(shape, 1 - s->group, 0);
    s->algo = "race";
    if (s->rank == 0) {
        xfer_sched_recv(s, peer, XFER_BUF_RECV, 0, 4, 0);
        xfer_sched_send(s, peer, XFER_BUF_RECV, 0, 4, 0);
    }
    return xfer_sched_finish(s);
}

/* Sends a block it never received. */
static xfer_status_t unheld_builder(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const int peer = xfer_merged_rank(shape, 1 - s->group, 0);
    s->algo = "unheld";
    if (s->rank == 0 && s->group == 0)
        xfer_sched_send(s, peer, XFER_BUF_RECV, 0, 4, 0);
    if (s->rank == 0 && s->group == 1)
        xfer_sched_recv(s, peer, XFER_BUF_TMP, 0, 4, 0);
    s->tmp_bytes = 4;
    return xfer_sched_finish(s);
}

/* p = 2, q = 1, half duplex: B0 gets both blocks, but in swapped places. */
static xfer_status_t swap_builder(const xfer_shape_t *shape, xfer_sched_t *s)
{
    const size_t k = shape->ucnt[0];
    s->algo = "swap";
    if (s->group == 0)
        xfer_sched_send(s, xfer_merged_rank(shape, 1, 0), XFER_BUF_SEND, 0, k, 0);
    else { /* one receive per round, to respect the single port */
        xfer_sched_recv(s, 0, XFER_BUF_RECV, k, k, 0);
        xfer_sched_round(s);
        xfer_sched_recv(s, 1, XFER_BUF_RECV, 0, k, 0);
    }
    return xfer_sched_finish(s);
}

/* Does nothing at all. */
static xfer_status_t idle_builder(const xfer_shape_t *shape, xfer_sched_t *s)
{
    (void) shape;
    s->algo = "idle";
    return xfer_sched_finish(s);
}

static void expect_violation(xfer_builder_fn b, const xfer_shape_t *sh, xfer_status_t want,
                             const char *needle)
{
    xfer_status_t rc = xfer_sim_run(sh, b, NULL, NULL);
    UCHECK(rc == want && strstr(xfer_last_error(), needle), "expected %s mentioning \"%s\": %s",
           xfer_status_name(want), needle, xfer_last_error());
    checks++;
}

static void test_simulator_catches_errors(void)
{
    shape_buf_t b;
    xfer_status_t rc;

    fill_pattern(&b, 3, 2, 1);
    rc = xfer_sim_run(&b.s, broken_builder, NULL, NULL);
    UCHECK(rc == XFER_ERR_VERIFY, "misplaced receive not detected (%s)", xfer_status_name(rc));
    make_uniform(&b, 1, 1, 8, 8);
    rc = xfer_sim_run(&b.s, deadlock_builder, NULL, NULL);
    UCHECK(rc == XFER_ERR_DEADLOCK, "deadlock not detected (%s)", xfer_status_name(rc));
    checks += 2;
    make_uniform(&b, 3, 3, 8, 8);
    expect_violation(two_ports_builder, &b.s, XFER_ERR_VERIFY, "single-port");
    expect_violation(far_builder, &b.s, XFER_ERR_VERIFY, "not its ring neighbour");
    expect_violation(race_builder, &b.s, XFER_ERR_VERIFY, "at the same time");
    expect_violation(unheld_builder, &b.s, XFER_ERR_VERIFY, "message availability");
    expect_violation(idle_builder, &b.s, XFER_ERR_VERIFY, "never receives block 0 of group");
    make_uniform(&b, 2, 1, 8, 0);
    expect_violation(swap_builder, &b.s, XFER_ERR_VERIFY, "wrong data");
    fill_pattern(&b, 3, 2, 1);
    expect_violation(broken_builder, &b.s, XFER_ERR_VERIFY, "block 1 of group");
}

/* xfer_sim_model, the cost model's closed form (xfer-sched model): never under the bound, the
 * simulated time of the fully connected schedules (which it prices exactly), any size at once,
 * and the simulator's refusals. */
static void test_model(void)
{
    static const int shapes[][2] = {{4, 4}, {6, 2}, {2, 6}, {16, 16}, {24, 8}};
    xfer_sim_params_t prm;
    xfer_sim_report_t rep;
    xfer_side_t a, b;
    double t;
    int i, d, ai, n = 0;

    xfer_sim_params_init(&prm);
    prm.alpha = 3.6e-5;
    prm.beta = 1.67e-7;
    prm.network = 1;
    xfer_algorithm_count(&n);
    for (i = 0; i < 5; i++)
        for (d = 0; d < 2; d++) { /* full duplex, then A to B */
            a = (xfer_side_t){shapes[i][0], NULL, 262144};
            b = (xfer_side_t){shapes[i][1], NULL, d ? 0 : 262144};
            for (ai = 0; ai < n; ai++) {
                xfer_algo_info_t info;
                xfer_status_t st;
                xfer_algorithm_info(ai, &info);
                st = xfer_sim_model(info.name, &a, &b, &prm, &t, NULL);
                if (st == XFER_ERR_NOT_SUPPORTED)
                    continue;
                UCHECK(st == XFER_SUCCESS, "model %s %dx%d: %s", info.name, a.n, b.n,
                       xfer_last_error());
                UCHECK(xfer_simulate(info.name, &a, &b, &prm, &rep) == XFER_SUCCESS,
                       "simulate %s %dx%d: %s", info.name, a.n, b.n, xfer_last_error());
                UCHECK(t >= rep.bound * (1 - 1e-9), "%s %dx%d %s: model %g s under the bound %g",
                       info.name, a.n, b.n, d ? "half" : "full", t, rep.bound);
                if (!strcmp(info.name, "fc_full") || !strcmp(info.name, "native"))
                    UCHECK(t > 0.99 * rep.predicted && t < 1.01 * rep.predicted,
                           "%s %dx%d %s: model %g s, simulated %g s", info.name, a.n, b.n,
                           d ? "half" : "full", t, rep.predicted);
                checks++;
            }
        }
    /* fc_direct by pieces (p <= q here), one way, the heaviest rank at twice the average: the
     * closed form counts the busiest sender's pieces, then the receivers' ring, as the schedule
     * runs them (it once overlapped the two: 1.19 of the bound at 2 x 6 where the schedule takes
     * 1.83). What it leaves out, the ring's first steps sharing the receivers' ports with the
     * last pieces, is up to 11 % at 16 x 16. */
    for (i = 0; i < 5; i++) {
        if (shapes[i][0] > shapes[i][1])
            continue;
        size_t cnt[32];
        const int p = shapes[i][0];
        for (d = 0; d < p; d++) /* 0 .. 2x the average, evenly */
            cnt[d] = (size_t) (262144.0 * (2.0 * d / (p - 1)));
        a = (xfer_side_t){p, cnt, 0};
        b = (xfer_side_t){shapes[i][1], NULL, 0};
        UCHECK(xfer_sim_model("fc_direct", &a, &b, &prm, &t, NULL) == XFER_SUCCESS &&
                   xfer_simulate("fc_direct", &a, &b, &prm, &rep) == XFER_SUCCESS,
               "fc_direct skewed %dx%d: %s", a.n, b.n, xfer_last_error());
        UCHECK(t > 0.85 * rep.predicted && t < 1.02 * rep.predicted,
               "fc_direct skewed %dx%d half: model %g s, simulated %g s", a.n, b.n, t,
               rep.predicted);
        checks++;
    }
    /* fc_direct in full duplex, one direction by pieces, the other by whole blocks: the senders
     * of whole blocks also forward the pieces' segments round their ring. The closed form adds
     * the two (without it, 1.00 of the bound at 6 x 2 with skew 1, where the schedule takes
     * 1.41 and the emulated link 1.47). Both groups from 0 to 2x the average (skew 1), or from
     * 0.5x to 1.5x (skew 0.5). */
    {
        static const struct {
            int p, q;
            double skew;
        } mixed[] = {{6, 2, 1.0}, {2, 6, 1.0}, {5, 3, 0.5}, {3, 5, 0.5}, {4, 2, 0.5}, {8, 4, 0.5}};
        for (i = 0; i < (int) (sizeof(mixed) / sizeof(mixed[0])); i++) {
            size_t ca[16], cb[16];
            const int p = mixed[i].p, q = mixed[i].q;
            for (d = 0; d < p; d++)
                ca[d] = (size_t) (262144.0 * (1.0 + mixed[i].skew * (2.0 * d / (p - 1) - 1.0)));
            for (d = 0; d < q; d++)
                cb[d] = (size_t) (262144.0 * (1.0 + mixed[i].skew * (2.0 * d / (q - 1) - 1.0)));
            a = (xfer_side_t){p, ca, 0};
            b = (xfer_side_t){q, cb, 0};
            UCHECK(xfer_sim_model("fc_direct", &a, &b, &prm, &t, NULL) == XFER_SUCCESS &&
                       xfer_simulate("fc_direct", &a, &b, &prm, &rep) == XFER_SUCCESS,
                   "fc_direct mixed %dx%d: %s", p, q, xfer_last_error());
            UCHECK(t > 0.85 * rep.predicted && t < 1.1 * rep.predicted,
                   "fc_direct %dx%d full, skew %.1f: model %g s, simulated %g s", p, q,
                   mixed[i].skew, t, rep.predicted);
            checks++;
        }
    }
    a = (xfer_side_t){32768, NULL, 262144};
    b = (xfer_side_t){32768, NULL, 262144};
    UCHECK(xfer_sim_model("fc_full", &a, &b, &prm, &t, NULL) == XFER_SUCCESS &&
               t < 1.01 * (prm.alpha + 32768.0 * 262144 * prm.beta),
           "fc_full at 32768 x 32768: %g s", t);
    UCHECK(xfer_sim_model("nosuch", &a, &b, &prm, &t, NULL) == XFER_ERR_UNKNOWN_ALGORITHM &&
               strstr(xfer_last_error(), "nosuch"),
           "an unknown algorithm: %s", xfer_last_error());
    UCHECK(xfer_sim_model("fc_half", &a, &b, &prm, &t, NULL) == XFER_ERR_NOT_SUPPORTED,
           "fc_half in full duplex: %s", xfer_last_error());
    UCHECK(xfer_sim_model("fc_full", &a, &b, &prm, NULL, NULL) == XFER_ERR_INVALID_ARG,
           "NULL seconds");
    checks += 4;
}

int main(int argc, char **argv)
{
    static const size_t ks[] = {0, 1, 3, 7, 64};
    const int nk = (int) (sizeof(ks) / sizeof(ks[0]));
    /* `--max-n N`: p, q up to N only (the memcheck run: memory behaviour on fewer shapes; the
     * plain run covers every shape) */
    const int maxn = argc == 3 && strcmp(argv[1], "--max-n") == 0 ? atoi(argv[2]) : MAXN;
    int ai, p, q, i, j, pat;
    shape_buf_t b;
    char what[64];

    test_simulator_catches_errors();
    test_model();
    for (ai = 0; ai < xfer_algo_count(); ai++) {
        const xfer_algo_t *a = xfer_algo_at(ai);
        for (p = 1; p <= maxn; p++)
            for (q = 1; q <= maxn; q++) {
                for (i = 0; i < nk; i++)
                    for (j = 0; j < nk; j++) {
                        make_uniform(&b, p, q, ks[i], ks[j]);
                        snprintf(what, sizeof(what), "allgather kA=%zu kB=%zu", ks[i], ks[j]);
                        run(a, &b.s, what);
                    }
                for (pat = 0; pat < NPATTERNS; pat++) {
                    fill_pattern(&b, p, q, pat);
                    snprintf(what, sizeof(what), "allgatherv pattern %d", pat);
                    run(a, &b.s, what);
                }
            }
    }
    /* A few larger shapes, including p, q far apart. */
    for (ai = 0; ai < xfer_algo_count(); ai++) {
        const xfer_algo_t *a = xfer_algo_at(ai);
        static const int big[][2] = {{64, 3}, {3, 64}, {50, 14}, {17, 61}, {1, 64}, {64, 1}};
        for (i = 0; i < 6; i++) {
            make_uniform(&b, big[i][0], big[i][1], 5, 0);
            run(a, &b.s, "large allgather half");
            make_uniform(&b, big[i][0], big[i][1], 3, 11);
            run(a, &b.s, "large allgather full");
            fill_pattern(&b, big[i][0], big[i][1], 0);
            run(a, &b.s, "large allgatherv");
        }
    }
    return unit_finish("test_algos_sim", checks);
}
