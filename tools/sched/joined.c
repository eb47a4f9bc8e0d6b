/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer-sched joined: the schedules of a joined dataset (docs/runtime.md, "Joined datasets"),
 * step by step, without MPI (docs/simulator.md, "Joined datasets").
 *
 * The dataset is [joined, B] of one-byte elements (--row-bytes B). Each step every sending rank
 * holds a number of rows drawn from --seed: first the hard cases, every run (every rank empty;
 * every row on the last, the first, one drawn rank; zero rows on every other rank; one row in
 * all; one row on each rank), then --steps drawn steps (zeros among them). Every receiving rank
 * must end each step with exactly its rows, byte for byte:
 *  - its box is the runtime's (xfer_sim_joined_box runs the stream transport's rule code), checked
 *    against the documented selection: inside the step; all, the whole step; rows, contiguous
 *    shares in rank order, no two more than a row apart, the longer first; columns and block, a
 *    partition of the step; user, the declared box's part of the step;
 *  - point to point (what the stream does unless every receiving rank takes every row, and when
 *    a plan's recount refuses a step): each sending rank sends each receiving rank the
 *    intersection of its rows with that rank's box; the pieces must cover the box exactly once,
 *    each from rows its sender holds, each byte the step's byte at its place;
 *  - selection all: the inter-group allgatherv of the step's byte counts (each sender's rows,
 *    padded to 8 bytes, as stream_jplan.c counts them), as every registry algorithm that takes
 *    them builds it (and hier:INNER on virtual nodes with --node-size), simulated (availability,
 *    completeness in rank order, races, deadlock: xfer_simulate), each sender's rows inside its
 *    bytes there. The point-to-point path is checked too.
 * A violation prints the seed, the step, every sender's rows and the receiving rank and row at
 * fault, and exits 1. --corrupt KIND (hidden; for the tests that prove the checks fire) spoils
 * the first piece sent: drop its last row, add a row past it (extra), read it one row further on
 * in its sender (shift); or give the plan one sender's bytes less one (short, selection all).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xfer/xfer.h>

#include "common/cli.h"
#define XFER_XALLOC_PROG "xfer-sched"
#define XFER_XALLOC_EXIT 2
#include "common/xalloc.h"
#include "sched.h"

#define PROG      "xfer-sched"
#define NHARD     7                    /* the hard cases, steps 0 .. NHARD - 1 of every run */
#define MAX_BYTES ((uint64_t) 1 << 24) /* the largest step the byte-for-byte check holds */

/* A sending rank's bytes in the plan: its rows, padded to 8 bytes (stream_jplan.c). */
#define PAD8(b) (((b) + 7) & ~(uint64_t) 7)

enum { C_NONE, C_DROP, C_EXTRA, C_SHIFT, C_SHORT };

static const char *const hard_case[NHARD] = {
    "every rank empty",      "every row on the last rank",    "every row on the first rank",
    "every row on one rank", "zero rows on every other rank", "one row in all",
    "one row on every rank"};

static const char *const sel_name[] = {"all", "rows", "columns", "block", "user"};

typedef struct jopts {
    int p, q, steps, max_rows, full, reverse, verbose, corrupt;
    uint64_t row_bytes, seed;
    xfer_selection_mode_t sel;
    const char *algo;
    xfer_sim_nodes_t nodes;
    int nodes_set;
} jopts_t;

/* One direction: group @c from (0 = A, 1 = B) sends its rows to the other. */
typedef struct dir {
    int from, ns, nr;
    uint64_t *rows;      /* [ns] this step's rows of each sending rank */
    uint64_t *off;       /* [ns + 1] each sending rank's first row; off[ns] the step's rows */
    uint64_t (*decl)[4]; /* [nr] user: the declared box (start rows, bytes; count rows, bytes) */
    uint64_t (*box)[4];  /* [nr] this step's box of each receiving rank, the same way */
} dir_t;

typedef struct run {
    const jopts_t *o;
    dir_t dir[2];
    int ndir;
    uint64_t state; /* the random stream */
    int step;
    int corrupted;
    char **algos; /* selection all: the plans checked */
    int nalgos;
    /* one receiving rank's check, grown as needed */
    uint32_t *hits;
    int *src;
    uint64_t *got, cap;
    uint64_t rows, pieces, bytes, sims, na;
} run_t;

/* splitmix64: the same stream for a seed on every machine. */
static uint64_t rnd(run_t *R)
{
    uint64_t z = (R->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 0 .. n - 1 (0 when n is 0). */
static uint64_t below(run_t *R, uint64_t n)
{
    return n ? rnd(R) % n : 0;
}

static char gname(int g)
{
    return g ? 'B' : 'A';
}

static const char *step_kind(int step)
{
    return step < NHARD ? hard_case[step] : "drawn";
}

/* A violation: the seed, the step, every sender's rows, the receiving rank @p r's box (r >= 0)
 * and the words; returns 1 (the exit status). */
static int fail(const run_t *R, const dir_t *d, int r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(const run_t *R, const dir_t *d, int r, const char *fmt, ...)
{
    va_list ap;
    int s;
    printf("joined: FAILED: seed %" PRIu64 ", step %d (%s), %c -> %c, selection %s: ", R->o->seed,
           R->step, step_kind(R->step), gname(d->from), gname(1 - d->from), sel_name[R->o->sel]);
    if (r >= 0)
        printf("receiving rank %c%d: ", gname(1 - d->from), r);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n  rows of each sending rank (%" PRIu64 " in all):", d->off[d->ns]);
    for (s = 0; s < d->ns; s++)
        printf(" %c%d=%" PRIu64, gname(d->from), s, d->rows[s]);
    printf("\n");
    if (r >= 0)
        printf("  box of %c%d: rows [%" PRIu64 ", %" PRIu64 "), bytes [%" PRIu64 ", %" PRIu64
               ") of each row\n",
               gname(1 - d->from), r, d->box[r][0], d->box[r][0] + d->box[r][2], d->box[r][1],
               d->box[r][1] + d->box[r][3]);
    return 1;
}

/* This step's rows of each sending rank of @p d: a hard case, or drawn. */
static void draw(run_t *R, dir_t *d)
{
    const uint64_t m = (uint64_t) R->o->max_rows, n = (uint64_t) d->ns;
    uint64_t *x = d->rows;
    int i;

    memset(x, 0, n * sizeof(*x));
    switch (R->step < NHARD ? R->step : NHARD) {
    case 0: /* every rank empty */
        break;
    case 1:
        x[n - 1] = 1 + below(R, m * n);
        break;
    case 2:
        x[0] = 1 + below(R, m * n);
        break;
    case 3:
        x[below(R, n)] = 1 + below(R, m * n);
        break;
    case 4: /* the even ranks empty */
        for (i = 1; i < d->ns; i += 2)
            x[i] = 1 + below(R, m);
        break;
    case 5:
        x[below(R, n)] = 1;
        break;
    case 6:
        for (i = 0; i < d->ns; i++)
            x[i] = 1;
        break;
    default: { /* a scale for the step, and a share of empty ranks (none .. three quarters) */
        const uint64_t top = 1 + below(R, m), zeros = below(R, 4);
        for (i = 0; i < d->ns; i++)
            x[i] = below(R, 4) < zeros ? 0 : 1 + below(R, top);
    }
    }
    d->off[0] = 0;
    for (i = 0; i < d->ns; i++)
        d->off[i + 1] = d->off[i] + x[i];
}

/* selection user: each receiving rank's box, declared once before step 0 (as xfer_select does),
 * of a kind drawn per run and then in turn, so that any two neighbours hold a box with rows in
 * it: every row, rows past every step, rows drawn (some reaching past every step), nothing, rows
 * and some bytes of each row drawn. */
static void declare(run_t *R, dir_t *d)
{
    const uint64_t B = R->o->row_bytes, tmax = (uint64_t) d->ns * (uint64_t) R->o->max_rows + 1;
    const uint64_t first = below(R, 5);
    int r;
    for (r = 0; r < d->nr; r++) {
        uint64_t *u = d->decl[r];
        u[0] = u[1] = 0;
        u[2] = UINT64_MAX; /* every row: xfer_select(ch, name, NULL, NULL) */
        u[3] = B;
        switch ((first + (uint64_t) r) % 5) {
        case 0:
            break;
        case 1: /* past every step */
            u[0] = tmax + below(R, tmax);
            u[2] = 1 + below(R, tmax);
            break;
        case 3:
            u[0] = below(R, tmax);
            u[2] = 0;
            break;
        case 4: /* some bytes of each row */
            u[3] = 1 + below(R, B);
            u[1] = below(R, B - u[3] + 1);
            /* fall through */
        case 2: /* (where most steps have rows) */
            u[0] = below(R, tmax / 4 + 1);
            u[2] = below(R, 4) == 0 ? UINT64_MAX : 1 + below(R, tmax / 2);
            break;
        }
    }
}

static uint64_t min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Elements of box @p b (start[2], count[2]). */
static uint64_t volume(const uint64_t *b)
{
    return b[2] * b[3];
}

/* Do two boxes share an element? */
static int overlap(const uint64_t *a, const uint64_t *b)
{
    int e;
    if (!volume(a) || !volume(b))
        return 0;
    for (e = 0; e < 2; e++)
        if (a[e] >= b[e] + b[2 + e] || b[e] >= a[e] + a[2 + e])
            return 0;
    return 1;
}

/* Every receiving rank's box of the step, by the runtime's rule code, and what the documented
 * selection says of them. Returns 0, 1 (a violation) or 2 (the library refused). */
static int boxes(run_t *R, dir_t *d)
{
    const jopts_t *o = R->o;
    const uint64_t T = d->off[d->ns], B = o->row_bytes, dims[2] = {T, B};
    uint64_t next = 0, sum = 0, lo = UINT64_MAX, hi = 0;
    int r, k, e;

    for (r = 0; r < d->nr; r++) {
        uint64_t *b = d->box[r], s[2], c[2];
        if (xfer_sim_joined_box(2, dims, o->sel, d->decl[r], d->decl[r] + 2, d->nr, r, s, c) !=
            XFER_SUCCESS) {
            fprintf(stderr, "xfer-sched: %s\n", xfer_last_error());
            return 2;
        }
        b[0] = s[0];
        b[1] = s[1];
        b[2] = c[0];
        b[3] = c[1];
        for (e = 0; e < 2 && volume(b); e++)
            if (b[e] > dims[e] || b[2 + e] > dims[e] - b[e])
                return fail(R, d, r,
                            "its box reaches past the step (%" PRIu64 " rows of %" PRIu64 " bytes)",
                            T, B);
        sum += volume(b);
        switch (o->sel) {
        case XFER_SELECT_ALL:
            if (b[0] || b[1] || b[2] != T || b[3] != B)
                return fail(R, d, r, "its box is not the whole step");
            break;
        case XFER_SELECT_ROWS: /* contiguous, in rank order, whole rows */
            if ((b[2] && b[0] != next) || b[1] || b[3] != B)
                return fail(R, d, r,
                            "its share should start at row %" PRIu64
                            " (after the lower ranks') and hold whole rows",
                            next);
            if (r > 0 && b[2] > d->box[r - 1][2])
                return fail(R, d, r, "it holds more rows than rank %d", r - 1);
            next += b[2];
            lo = min64(lo, b[2]);
            hi = b[2] > hi ? b[2] : hi;
            break;
        case XFER_SELECT_USER: { /* the declared rows and bytes that the step holds */
            const uint64_t *u = d->decl[r];
            uint64_t want[4];
            for (e = 0; e < 2; e++) {
                const uint64_t end = u[2 + e] > UINT64_MAX - u[e] ? UINT64_MAX : u[e] + u[2 + e];
                want[e] = min64(u[e], dims[e]);
                want[2 + e] = min64(end, dims[e]) - want[e];
            }
            if (volume(want) != volume(b) || (volume(b) && memcmp(want, b, sizeof(want)) != 0))
                return fail(R, d, r,
                            "it declared rows [%" PRIu64 ", +%" PRIu64 "), bytes [%" PRIu64
                            ", +%" PRIu64 "), whose part of the step is rows [%" PRIu64 ", %" PRIu64
                            "), bytes [%" PRIu64 ", %" PRIu64 ")",
                            u[0], u[2], u[1], u[3], want[0], want[0] + want[2], want[1],
                            want[1] + want[3]);
            break;
        }
        default: /* columns, block: disjoint (and below, covering the step) */
            for (k = 0; k < r; k++)
                if (overlap(b, d->box[k]))
                    return fail(R, d, r, "its box overlaps rank %d's", k);
        }
    }
    if (o->sel == XFER_SELECT_ROWS && (next != T || (T && hi - lo > 1)))
        return fail(R, d, -1,
                    "the shares hold %" PRIu64 " of %" PRIu64 " rows, %" PRIu64 " to %" PRIu64
                    " each (near-equal: at most one apart)",
                    next, T, lo, hi);
    if ((o->sel == XFER_SELECT_COLUMNS || o->sel == XFER_SELECT_BLOCK) && sum != T * B)
        return fail(R, d, -1, "the boxes hold %" PRIu64 " of the step's %" PRIu64 " bytes", sum,
                    T * B);
    return 0;
}

/* Point to point: each sending rank sends each receiving rank the intersection of its rows with
 * that rank's box (stream_joined.c); the pieces must cover the box exactly once, byte for byte. */
static int pieces(run_t *R, dir_t *d)
{
    const jopts_t *o = R->o;
    const uint64_t B = o->row_bytes;
    const char sg = gname(d->from);
    int r, s;

    for (r = 0; r < d->nr; r++) {
        const uint64_t *b = d->box[r], cells = volume(b);
        uint64_t i;
        if (cells > R->cap) {
            free(R->hits);
            free(R->src);
            free(R->got);
            R->hits = xchecked(malloc(cells * sizeof(*R->hits)));
            R->src = xchecked(malloc(cells * sizeof(*R->src)));
            R->got = xchecked(malloc(cells * sizeof(*R->got)));
            R->cap = cells;
        }
        if (cells)
            memset(R->hits, 0, cells * sizeof(*R->hits));
        for (s = 0; s < d->ns && cells; s++) {
            const uint64_t first = d->off[s], n = d->rows[s];
            /* its rows inside the box (of each row, the box's bytes: a sender holds whole rows) */
            uint64_t lo0 = first > b[0] ? first : b[0], hi0 = min64(first + n, b[0] + b[2]);
            uint64_t from = first, row, col;
            if (!n || hi0 <= lo0)
                continue;
            if (o->corrupt && o->corrupt != C_SHORT && !R->corrupted) {
                R->corrupted = 1;
                hi0 += o->corrupt == C_EXTRA ? 1 : 0;
                hi0 -= o->corrupt == C_DROP ? 1 : 0;
                from -= o->corrupt == C_SHIFT ? 1 : 0; /* reads one row further on */
            }
            R->pieces++;
            for (row = lo0; row < hi0; row++) {
                const uint64_t local = row - from;
                if (row >= b[0] + b[2])
                    return fail(R, d, r, "%c%d sends row %" PRIu64 ", outside the box", sg, s, row);
                if (local >= n)
                    return fail(R, d, r,
                                "%c%d sends its row %" PRIu64 " as the step's row %" PRIu64
                                ", but holds %" PRIu64 " rows (the step's %" PRIu64 "..%" PRIu64
                                ")",
                                sg, s, local, row, n, first, first + n - 1);
                for (col = b[1]; col < b[1] + b[3]; col++) {
                    const uint64_t at = (row - b[0]) * b[3] + (col - b[1]);
                    if (R->hits[at]++)
                        return fail(R, d, r,
                                    "row %" PRIu64 " (byte %" PRIu64 ") arrives twice: from %c%d "
                                    "and %c%d",
                                    row, col, sg, R->src[at], sg, s);
                    R->src[at] = s;
                    R->got[at] = (first + local) * B + col; /* the step's byte it holds there */
                }
            }
        }
        for (i = 0; i < cells; i++) {
            const uint64_t row = b[0] + i / b[3], col = b[1] + i % b[3];
            if (!R->hits[i])
                return fail(R, d, r, "row %" PRIu64 " (byte %" PRIu64 ") never arrives", row, col);
            if (R->got[i] != row * B + col)
                return fail(R, d, r,
                            "row %" PRIu64 " byte %" PRIu64 " holds the step's row %" PRIu64
                            " byte %" PRIu64 " (from %c%d)",
                            row, col, R->got[i] / B, R->got[i] % B, sg, R->src[i]);
        }
        R->bytes += cells;
    }
    return 0;
}

/* selection all: the step's inter-group allgatherv by every algorithm checked. Each group's byte
 * counts are its ranks' rows, padded (nothing from a group that sends no joined rows). */
static int plans(run_t *R)
{
    const jopts_t *o = R->o;
    size_t *cnt[2];
    int g, k, s, rc = 0;

    for (g = 0; g < 2; g++)
        cnt[g] = xchecked(calloc((size_t) (g ? o->q : o->p), sizeof(size_t)));
    for (k = 0; k < R->ndir; k++) {
        const dir_t *d = &R->dir[k];
        for (s = 0; s < d->ns; s++)
            cnt[d->from][s] = (size_t) PAD8(d->rows[s] * o->row_bytes);
    }
    for (k = 0; k < R->ndir && o->corrupt == C_SHORT && !R->corrupted; k++)
        for (s = 0; s < R->dir[k].ns && !R->corrupted; s++)
            if (R->dir[k].rows[s]) {
                cnt[R->dir[k].from][s] = (size_t) (R->dir[k].rows[s] * o->row_bytes - 1);
                R->corrupted = 1;
            }
    /* every receiving rank finds sender s's rows at s's place in the result (stream_jplan.c's
     * fetch): they must lie inside the bytes s contributes there */
    for (k = 0; k < R->ndir && !rc; k++) {
        const dir_t *d = &R->dir[k];
        for (s = 0; s < d->ns && !rc; s++)
            if (d->rows[s] * o->row_bytes > cnt[d->from][s])
                rc = fail(R, d, -1,
                          "every receiving rank: the step's row %" PRIu64 " (%c%d's last) ends "
                          "at byte %" PRIu64 " of the %zu bytes %c%d contributes to the "
                          "allgatherv",
                          d->off[s + 1] - 1, gname(d->from), s, d->rows[s] * o->row_bytes,
                          cnt[d->from][s], gname(d->from), s);
    }
    for (k = 0; k < R->nalgos && !rc; k++) {
        const char *name = R->algos[k];
        const xfer_side_t a = {.n = o->p, .counts = cnt[0], .k = 0};
        const xfer_side_t b = {.n = o->q, .counts = cnt[1], .k = 0};
        xfer_sim_report_t rep;
        xfer_status_t st = !strncmp(name, "hier:", 5)
                               ? xfer_simulate_hier(name + 5, &a, &b, &o->nodes, NULL, &rep)
                               : xfer_simulate(name, &a, &b, NULL, &rep);
        R->sims++;
        if (st == XFER_ERR_NOT_SUPPORTED) {
            R->na++;
            if (o->verbose)
                printf("  %s: not applicable (%s)\n", name, xfer_last_error());
        } else if (st == XFER_ERR_VERIFY || st == XFER_ERR_DEADLOCK) {
            rc = fail(R, &R->dir[0], -1, "the allgatherv by %s: %s", name, xfer_last_error());
            for (g = 1; g < R->ndir; g++) { /* (full duplex: the other group's rows too) */
                printf("  rows of each rank of %c:", gname(R->dir[g].from));
                for (s = 0; s < R->dir[g].ns; s++)
                    printf(" %c%d=%" PRIu64, gname(R->dir[g].from), s, R->dir[g].rows[s]);
                printf("\n");
            }
        } else if (st != XFER_SUCCESS) {
            fprintf(stderr, "xfer-sched: %s: %s\n", name, xfer_last_error());
            rc = 2;
        }
    }
    free(cnt[0]);
    free(cnt[1]);
    return rc;
}

/* The plans checked for selection all: --algo NAME, or every registry algorithm, and with
 * virtual nodes hier:INNER for each one that builds a schedule. */
static void list_algos(run_t *R)
{
    const jopts_t *o = R->o;
    int n = 0, i;
    xfer_algo_info_t info;
    if (strcmp(o->algo, "all") != 0) {
        R->algos = xchecked(calloc(1, sizeof(char *)));
        R->algos[R->nalgos++] = xstrdup(o->algo);
        return;
    }
    xfer_algorithm_count(&n);
    R->algos = xchecked(calloc(2 * (size_t) n + 1, sizeof(char *)));
    for (i = 0; i < n; i++) {
        if (xfer_algorithm_info(i, &info) != XFER_SUCCESS)
            continue;
        R->algos[R->nalgos++] = xstrdup(info.name);
        if (o->nodes_set && strcmp(info.name, "native") != 0)
            R->algos[R->nalgos++] = xasprintf("hier:%s", info.name);
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xfer-sched joined --p P --q Q [--row-bytes B] [--steps S] [--seed N]\n"
            "                         [--max-rows R] [--selection all|rows|columns|block|user]\n"
            "                         [--algo NAME|all] [--duplex half|full] [--reverse]\n"
            "                         [--node-size K] [--node-size-b K] [--roundrobin]\n"
            "                         [--senders L] [--hier-sync flags|barrier] [--calls C]\n"
            "                         [--jitter RUNS] [--verbose]\n"
            "Every step each sending rank's rows are drawn from --seed (default 1): the %d hard\n"
            "cases first, then --steps S drawn steps (default 32) of up to --max-rows R rows\n"
            "per rank (default 16), rows of --row-bytes B one-byte elements (default 8).\n"
            "Every receiving rank must end with exactly its rows, byte for byte: its share\n"
            "of the --selection (default all) by the runtime's rule code, the pieces each\n"
            "sending rank sends it point to point, and with selection all the allgatherv\n"
            "schedules of the step's counts by --algo (default all: every registry algorithm\n"
            "that takes them; the node options add hier:INNER on virtual nodes, as for\n"
            "verify). --duplex full: both groups send rows. Exit status: 0 every step holds,\n"
            "1 a violation (seed, step, each sender's rows, receiving rank, row), 2 usage.\n",
            NHARD);
}

static void parse(int argc, char **argv, jopts_t *o)
{
    enum {
        O_P = 256,
        O_Q,
        O_ROWB,
        O_STEPS,
        O_SEED,
        O_MAXR,
        O_SEL,
        O_ALGO,
        O_DUPLEX,
        O_REVERSE,
        O_VERBOSE,
        O_CORRUPT
    };
    static const struct option longopts[] = {{"p", required_argument, NULL, O_P},
                                             {"q", required_argument, NULL, O_Q},
                                             {"row-bytes", required_argument, NULL, O_ROWB},
                                             {"steps", required_argument, NULL, O_STEPS},
                                             {"seed", required_argument, NULL, O_SEED},
                                             {"max-rows", required_argument, NULL, O_MAXR},
                                             {"selection", required_argument, NULL, O_SEL},
                                             {"algo", required_argument, NULL, O_ALGO},
                                             {"duplex", required_argument, NULL, O_DUPLEX},
                                             {"reverse", no_argument, NULL, O_REVERSE},
                                             XFER_SCHED_NODE_LONGOPTS,
                                             {"verbose", no_argument, NULL, O_VERBOSE},
                                             {"corrupt", required_argument, NULL, O_CORRUPT},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    static const char *const corrupt[] = {"", "drop", "extra", "shift", "short"};
    int c, i, algo_set = 0;

    memset(o, 0, sizeof(*o));
    o->row_bytes = 8;
    o->steps = 32;
    o->seed = 1;
    o->max_rows = 16;
    o->sel = XFER_SELECT_ALL;
    o->algo = "all";
    xfer_sim_nodes_init(&o->nodes);
    optind = 2;
    opterr = 0;
    while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            exit(0);
        case O_P:
            o->p = (int) xfer_cli_long(PROG, "--p", optarg, 1, 1 << 16);
            break;
        case O_Q:
            o->q = (int) xfer_cli_long(PROG, "--q", optarg, 1, 1 << 16);
            break;
        case O_ROWB:
            o->row_bytes = (uint64_t) xfer_cli_long(PROG, "--row-bytes", optarg, 1, 1 << 16);
            break;
        case O_STEPS:
            o->steps = (int) xfer_cli_long(PROG, "--steps", optarg, 0, 1 << 24);
            break;
        case O_SEED:
            o->seed = (uint64_t) xfer_cli_long(PROG, "--seed", optarg, 0, 0x7fffffffL);
            break;
        case O_MAXR:
            o->max_rows = (int) xfer_cli_long(PROG, "--max-rows", optarg, 1, 1 << 20);
            break;
        case O_SEL:
            for (i = 0; i < 5 && strcmp(optarg, sel_name[i]); i++)
                ;
            if (i == 5)
                xfer_cli_usage_error(PROG,
                                     "--selection: expected all, rows, columns, block or user, "
                                     "got \"%s\"",
                                     optarg);
            o->sel = (xfer_selection_mode_t) i; /* (the names are in the modes' order) */
            break;
        case O_ALGO:
            o->algo = optarg;
            algo_set = 1;
            break;
        case O_DUPLEX:
            if (strcmp(optarg, "half") && strcmp(optarg, "full"))
                xfer_cli_usage_error(PROG, "--duplex: expected half or full, got \"%s\"", optarg);
            o->full = !strcmp(optarg, "full");
            break;
        case O_REVERSE:
            o->reverse = 1;
            break;
        case O_VERBOSE:
            o->verbose = 1;
            break;
        case O_CORRUPT:
            for (i = 1; i < 5 && strcmp(optarg, corrupt[i]); i++)
                ;
            if (i == 5)
                xfer_cli_usage_error(PROG, "--corrupt: expected drop, extra, shift or short");
            o->corrupt = i;
            break;
        default:
            if (!xfer_sched_node_opt(PROG, c, optarg, &o->nodes))
                xfer_cli_bad_option(PROG, c, argv);
            o->nodes_set = 1;
        }
    }
    if (optind < argc)
        xfer_cli_usage_error(PROG, "unexpected argument \"%s\"", argv[optind]);
    if (o->p < 1 || o->q < 1)
        xfer_cli_usage_error(PROG, "joined needs --p P and --q Q (>= 1)");
    if ((algo_set || o->nodes_set) && o->sel != XFER_SELECT_ALL)
        xfer_cli_usage_error(PROG,
                             "--algo and the node options choose the allgatherv schedules "
                             "of selection all; selection %s goes point to point",
                             sel_name[o->sel]);
    if (o->corrupt == C_SHORT && o->sel != XFER_SELECT_ALL)
        xfer_cli_usage_error(PROG, "--corrupt short spoils the allgatherv of selection all");
    if ((uint64_t) (o->p > o->q ? o->p : o->q) * (uint64_t) o->max_rows * o->row_bytes > MAX_BYTES)
        xfer_cli_usage_error(PROG,
                             "a step of up to %d x %d rows of %" PRIu64
                             " bytes: more than the %" PRIu64 " bytes the check holds",
                             o->p > o->q ? o->p : o->q, o->max_rows, o->row_bytes, MAX_BYTES);
}

static void dir_init(dir_t *d, int from, const jopts_t *o)
{
    d->from = from;
    d->ns = from ? o->q : o->p;
    d->nr = from ? o->p : o->q;
    d->rows = xchecked(calloc((size_t) d->ns, sizeof(uint64_t)));
    d->off = xchecked(calloc((size_t) d->ns + 1, sizeof(uint64_t)));
    d->decl = xchecked(calloc((size_t) d->nr, sizeof(*d->decl)));
    d->box = xchecked(calloc((size_t) d->nr, sizeof(*d->box)));
}

static void dir_free(dir_t *d)
{
    free(d->rows);
    free(d->off);
    free(d->decl);
    free(d->box);
}

int xfer_sched_joined(int argc, char **argv)
{
    jopts_t o;
    run_t R;
    double t0 = xfer_sched_now();
    int k, i, rc = 0;

    parse(argc, argv, &o);
    memset(&R, 0, sizeof(R));
    R.o = &o;
    R.state = o.seed;
    if (o.full) {
        dir_init(&R.dir[R.ndir++], 0, &o);
        dir_init(&R.dir[R.ndir++], 1, &o);
    } else {
        dir_init(&R.dir[R.ndir++], o.reverse, &o);
    }
    for (k = 0; k < R.ndir; k++)
        declare(&R, &R.dir[k]); /* (drawn for every selection: the same rows for a seed) */
    if (o.sel == XFER_SELECT_ALL)
        list_algos(&R);
    for (R.step = 0; R.step < NHARD + o.steps && !rc; R.step++) {
        for (k = 0; k < R.ndir; k++) {
            draw(&R, &R.dir[k]);
            R.rows += R.dir[k].off[R.dir[k].ns];
        }
        for (k = 0; o.verbose && k < R.ndir; k++) {
            const dir_t *d = &R.dir[k];
            printf("step %d (%s), %c -> %c:", R.step, step_kind(R.step), gname(d->from),
                   gname(1 - d->from));
            for (i = 0; i < d->ns; i++)
                printf(" %" PRIu64, d->rows[i]);
            printf("\n");
        }
        for (k = 0; k < R.ndir && !rc; k++)
            if (!(rc = boxes(&R, &R.dir[k])))
                rc = pieces(&R, &R.dir[k]);
        if (!rc && o.sel == XFER_SELECT_ALL)
            rc = plans(&R);
    }
    if (!rc && o.corrupt && !R.corrupted) {
        fprintf(stderr, "xfer-sched: --corrupt: no step had anything to spoil\n");
        rc = 2;
    }
    if (!rc) {
        printf("joined p=%d q=%d, rows of %" PRIu64 " bytes, selection %s, seed %" PRIu64
               ", %s: %d steps (%d hard cases, %d drawn), %" PRIu64 " rows, %" PRIu64
               " pieces, %" PRIu64 " bytes received",
               o.p, o.q, o.row_bytes, sel_name[o.sel], o.seed,
               o.full      ? "full duplex"
               : o.reverse ? "B -> A"
                           : "A -> B",
               NHARD + o.steps, NHARD, o.steps, R.rows, R.pieces, R.bytes);
        if (o.sel == XFER_SELECT_ALL)
            printf("; %d allgatherv schedules x %d steps: %" PRIu64 " simulations (%" PRIu64
                   " not applicable)",
                   R.nalgos, NHARD + o.steps, R.sims, R.na);
        printf(": ok, every receiving rank holds exactly its rows (%.2f s)\n",
               xfer_sched_now() - t0);
    }
    for (k = 0; k < R.ndir; k++)
        dir_free(&R.dir[k]);
    for (i = 0; i < R.nalgos; i++)
        free(R.algos[i]);
    free(R.algos);
    free(R.hits);
    free(R.src);
    free(R.got);
    return rc;
}
