/* SPDX-License-Identifier: BSD-3-Clause */
/* Measurement core of xfer-demo and xfer-bench (see xbench.h). */
#define _POSIX_C_SOURCE 200809L
#include "xbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

double xb_median(double *x, int n)
{
    qsort(x, (size_t) n, sizeof(double), cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* "64K", "4M", "1G" -> bytes; -1 when malformed. */
static long parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s)
        return -1;
    const char *units = "KMG";
    const char *u = *end ? strchr(units, *end == 'k' ? 'K' : *end == 'm' ? 'M' : *end) : NULL;
    if (u) { /* K, M, G: binary multiples; "4M", "4MiB" */
        v *= (double) (1L << (10 * (u - units + 1)));
        end++;
        if (end[0] == 'i' && end[1] == 'B')
            end += 2;
    } else if (*end == 'B')
        end++;
    return *end || v < 0 || v > 1e15 ? -1 : (long) v;
}

int xb_split_list(char *s, char **out, int max)
{
    int n = 0;
    char *save = NULL, *tok = strtok_r(s, ",", &save);
    while (tok) {
        if (n == max)
            return -1;
        out[n++] = tok;
        tok = strtok_r(NULL, ",", &save);
    }
    return n;
}

int xb_parse_sizes(char *list, long *sizes, long *maxsize)
{
    char *sz[XB_MAXSIZES];
    const int n = xb_split_list(list, sz, XB_MAXSIZES);
    int s;
    *maxsize = 0;
    for (s = 0; s < n; s++) {
        sizes[s] = parse_size(sz[s]);
        if (sizes[s] <= 0 || sizes[s] > (1L << 30))
            return -1;
        if (sizes[s] > *maxsize)
            *maxsize = sizes[s];
    }
    return n;
}

const char *xb_human(long b, char *buf, size_t len)
{
    if (b >= 1024 * 1024 && b % (1024 * 1024) == 0)
        snprintf(buf, len, "%ld MiB", b / (1024 * 1024));
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%ld KiB", b / 1024);
    else
        snprintf(buf, len, "%ld B", b);
    return buf;
}

unsigned char xb_pattern(int group, int rank, long i)
{
    return (unsigned char) (group * 97 + rank * 31 + i * 7 + (i >> 10));
}

/* "name[+barrier|+flags][+sN][+impi|+iring][+model|+learn]" -> options (fallback: error): node
 * sync, senders per node, the group-internal allgather, whether auto learns (+model: the cost
 * model's or the tuning file's choice, every call). @p name receives the base name. */
static void algo_opts(const char *spec, xfer_coll_opts_t *o, char *name, size_t len)
{
    char *plus;
    xfer_coll_opts_init(o);
    snprintf(name, len, "%s", spec);
    while ((plus = strrchr(name, '+')) != NULL) {
        if (!strcmp(plus, "+barrier"))
            o->hier_sync = XFER_HIER_SYNC_BARRIER;
        else if (!strcmp(plus, "+flags"))
            o->hier_sync = XFER_HIER_SYNC_FLAGS;
        else if (!strcmp(plus, "+impi"))
            o->intra_allgather = XFER_INTRA_ALLGATHER_MPI;
        else if (!strcmp(plus, "+iring"))
            o->intra_allgather = XFER_INTRA_ALLGATHER_RING;
        else if (!strcmp(plus, "+model"))
            o->learn = XFER_COLL_LEARN_OFF;
        else if (!strcmp(plus, "+learn"))
            o->learn = XFER_COLL_LEARN_ON;
        else if (plus[1] == 's')
            o->hier_senders = atoi(plus + 2);
        *plus = '\0';
    }
    o->algorithm = name;
    o->fallback = XFER_FALLBACK_ERROR;
}

/* Shared-memory nodes of each group and the most ranks on one. */
static void node_layout(xb_setup_t *s)
{
    MPI_Comm node;
    int nsize, nrank, v[4] = {0, 0, 0, 0}, r[4];
    MPI_Comm_split_type(s->local, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_rank(node, &nrank);
    v[s->group] = nrank == 0;
    v[2 + s->group] = nsize;
    MPI_Allreduce(v, r, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(v + 2, r + 2, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    s->nodes[0] = r[0];
    s->nodes[1] = r[1];
    s->ppn[0] = r[2];
    s->ppn[1] = r[3];
    MPI_Comm_free(&node);
}

int xb_setup(xb_setup_t *s, int p)
{
    int in[2], cnt[2], lead[2], *app = NULL, flag = 0;
    memset(s, 0, sizeof(*s));
    s->delay_group = -1;
    s->seed = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &s->wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &s->wsize);
    if (p > 0)
        s->group = s->wrank >= p;
    else {
        int many = 0, anymany;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &app, &flag);
        s->group = flag && app ? *app != 0 : s->wrank >= s->wsize / 2;
        many = flag && app && *app > 1;
        MPI_Allreduce(&many, &anymany, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (anymany) {
            if (s->wrank == 0)
                fprintf(stderr, "xbench: MPMD launch with more than two applications\n");
            return -1;
        }
    }
    in[0] = s->group == 0;
    in[1] = s->group == 1;
    MPI_Allreduce(in, cnt, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    s->n[0] = cnt[0];
    s->n[1] = cnt[1];
    if (!cnt[0] || !cnt[1]) {
        if (s->wrank == 0)
            fprintf(stderr,
                    "xbench: both groups need ranks (A has %d, B has %d of %d; --p must be in "
                    "1..%d, or launch two MPMD applications)\n",
                    cnt[0], cnt[1], s->wsize, s->wsize - 1);
        return -1;
    }
    /* lowest world rank of each group leads it */
    in[0] = s->group == 0 ? s->wrank : s->wsize;
    in[1] = s->group == 1 ? s->wrank : s->wsize;
    MPI_Allreduce(in, lead, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, s->group, s->wrank, &s->local);
    MPI_Intercomm_create(s->local, 0, MPI_COMM_WORLD, lead[1 - s->group], 99, &s->inter);
    MPI_Comm_rank(s->local, &s->rank);
    node_layout(s);
    return 0;
}

void xb_teardown(xb_setup_t *s)
{
    MPI_Comm_free(&s->inter);
    MPI_Comm_free(&s->local);
}

int xb_case_init(xb_case_t *c, const xb_setup_t *s, long bytes, double skew, int full, int v)
{
    int g, i;
    memset(c, 0, sizeof(*c));
    c->full = full;
    c->v = v;
    for (g = 0; g < 2; g++) {
        long off = 0;
        c->counts[g] = malloc((size_t) s->n[g] * sizeof(int));
        c->displs[g] = malloc((size_t) s->n[g] * sizeof(int));
        if (!c->counts[g] || !c->displs[g])
            return -1;
        for (i = 0; i < s->n[g]; i++) {
            const double f = s->n[g] > 1 ? 1.0 + skew * (2.0 * i / (s->n[g] - 1) - 1.0) : 1.0;
            const long n = v ? lround((double) bytes * f) : bytes;
            if (n > 2147483647L || off > 2147483647L - n)
                return -1;
            c->counts[g][i] = (int) n;
            c->displs[g][i] = (int) off;
            off += n;
        }
    }
    return 0;
}

void xb_case_free(xb_case_t *c)
{
    int g;
    for (g = 0; g < 2; g++) {
        free(c->counts[g]);
        free(c->displs[g]);
    }
}

double xb_sent_by(const xb_case_t *c, const xb_setup_t *s, int g)
{
    double t = 0;
    int i;
    if (g == 1 && !c->full)
        return 0;
    for (i = 0; i < s->n[g]; i++)
        t += c->counts[g][i];
    return t;
}

double xb_busiest(const xb_case_t *c, const xb_setup_t *s)
{
    const double a = xb_sent_by(c, s, 0), b = xb_sent_by(c, s, 1);
    return a > b ? a : b;
}

/* Does @p spec ("fc_half", "hier:ring_half+s2", ...) name an algorithm flagged half_only, on
 * its own or inside node staging? */
static int half_only(const char *spec)
{
    const char *name = strncmp(spec, "hier:", 5) == 0 ? spec + 5 : spec;
    const size_t len = strcspn(name, "+");
    xfer_algo_info_t info;
    unsigned flags;
    int n = 0, i;

    xfer_algorithm_count(&n);
    for (i = 0; i < n; i++)
        if (xfer_algorithm_info(i, &info) == XFER_SUCCESS && strlen(info.name) == len &&
            strncmp(info.name, name, len) == 0)
            return xfer_algorithm_flags(i, &flags) == XFER_SUCCESS &&
                   (flags & XFER_ALGO_HALF_ONLY) != 0;
    return 0;
}

int xb_for_duplex(char **alg, int nalg, int full, char **run)
{
    int a, n = 0;
    for (a = 0; a < nalg; a++)
        if (!(full && half_only(alg[a])))
            run[n++] = alg[a];
    return n;
}

typedef struct {
    double t;       /* max over ranks of the call's time after the barrier (+ delay) */
    double after;   /* latest exit - latest entry */
    double mean_in; /* mean over ranks of exit - entry */
    double intra;   /* mean over ranks of the time in node copies (xfer_last_op_stats) */
    double inter;   /* max over ranks of the time moving data between the groups */
} timing_t;

/* Deterministic arrival delay of this rank in iteration @p it (microseconds). */
static long delay_for(const xb_setup_t *s, int it)
{
    unsigned x =
        s->seed * 2654435761u ^ (unsigned) (s->wrank + 1) * 40503u ^ (unsigned) (it + 7) * 69069u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    if (!s->delay_us || (s->delay_group >= 0 && s->group != s->delay_group))
        return 0;
    return (long) (x % (unsigned) (s->delay_us + 1));
}

/* The zero counts of a group that does not send in half duplex. */
static const int *recv_counts(const xb_case_t *c, const xb_setup_t *s, const int *zeros)
{
    const int rg = 1 - s->group;
    return rg == 1 && !c->full ? zeros : c->counts[rg];
}

static xfer_status_t one_call(const xb_setup_t *s, const xb_case_t *c, const char *algo,
                              const unsigned char *sbuf, unsigned char *rbuf, const int *zeros)
{
    xfer_coll_opts_t opts;
    char name[64];
    const int sends = c->full || s->group == 0, recvs = c->full || s->group == 1;
    const int scount = sends ? c->counts[s->group][s->rank] : 0;
    algo_opts(algo, &opts, name, sizeof(name));
    if (c->v)
        return xfer_allgatherv_inter(sbuf, scount, MPI_BYTE, rbuf, recv_counts(c, s, zeros),
                                     c->displs[1 - s->group], MPI_BYTE, s->inter, &opts);
    return xfer_allgather_inter(sbuf, scount, MPI_BYTE, rbuf,
                                recvs ? c->counts[1 - s->group][0] : 0, MPI_BYTE, s->inter, &opts);
}

/* One call, timed after a barrier; times are reduced over all ranks, the status is the worst
 * over all ranks. */
static xfer_status_t timed_call(const xb_setup_t *s, const xb_case_t *c, const char *algo,
                                const unsigned char *sbuf, unsigned char *rbuf, const int *zeros,
                                int it, timing_t *tm)
{
    double t0, t_in, t_out, v[2], mx[2], sum_in, in;
    xfer_op_stats_t stats;
    xfer_status_t st, worst;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (s->delay_us) {
        const long d = delay_for(s, it);
        struct timespec ts = {d / 1000000, (d % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    t_in = MPI_Wtime();
    st = one_call(s, c, algo, sbuf, rbuf, zeros);
    t_out = MPI_Wtime();
    v[0] = t_out - t0;
    v[1] = t_in;
    MPI_Allreduce(v, mx, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    xfer_last_op_stats(&stats);
    in = t_out - t_in;
    MPI_Allreduce(&in, &sum_in, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&stats.intra_s, &tm->intra, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&stats.inter_s, &tm->inter, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    tm->intra /= s->wsize;
    v[0] = t_out;
    MPI_Allreduce(v, &tm->after, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    tm->after -= mx[1];
    tm->t = mx[0];
    tm->mean_in = sum_in / s->wsize;
    MPI_Allreduce(&st, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return worst;
}

/* Every rank's result equal to the other group's pattern? (collective) */
static int verified(const xb_setup_t *s, const xb_case_t *c, const unsigned char *rbuf)
{
    const int rg = 1 - s->group, recvs = c->full || s->group == 1;
    int j, bad = 0, anybad = 0;
    long i;
    for (j = 0; recvs && j < s->n[rg] && !bad; j++) {
        const unsigned char *b = rbuf + c->displs[rg][j];
        for (i = 0; i < c->counts[rg][j]; i++)
            if (b[i] != xb_pattern(rg, j, i)) {
                bad = 1;
                break;
            }
    }
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return !anybad;
}

/* Reset the kernel's high-water mark of this process's RSS (Linux >= 4.0); 0 on success. */
static int reset_peak_rss(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    int ok;
    if (!f)
        return -1;
    ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Field @p key ("VmHWM:", "VmRSS:") of /proc/self/status in KiB, or -1. */
static long status_kb(const char *key)
{
    char line[256];
    long kb = -1;
    const size_t n = strlen(key);
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, key, n)) {
            kb = strtol(line + n, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

/* Max over ranks of the peak RSS during one more call of @p algo, and of its growth over the
 * RSS at the call's start (what the call itself made resident); -1 where the kernel cannot
 * reset the high-water mark (the result would be the process's lifetime peak). */
static void call_rss(const xb_setup_t *s, const xb_case_t *c, const char *algo,
                     const unsigned char *sbuf, unsigned char *rbuf, const int *zeros,
                     xb_result_t *r)
{
    long kb[2], mx[2], before;
    int can = reset_peak_rss() == 0, all;
    MPI_Allreduce(&can, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    before = status_kb("VmRSS:");
    MPI_Barrier(MPI_COMM_WORLD);
    (void) one_call(s, c, algo, sbuf, rbuf, zeros);
    kb[0] = all ? status_kb("VmHWM:") : -1;
    kb[1] = all && kb[0] >= 0 && before >= 0 ? kb[0] - before : -1;
    MPI_Allreduce(kb, mx, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    r->rss_kb = all ? mx[0] : -1;
    r->rss_growth_kb = all ? mx[1] : -1;
}

/* A permutation of 0..n-1 for round @p it of calls, the same on every rank (a fixed
 * xorshift sequence seeded by the round). */
static void shuffle(int *order, int n, int it)
{
    unsigned x = 2463534242u ^ (unsigned) (it + 1000) * 2654435761u;
    int i;
    for (i = 0; i < n; i++)
        order[i] = i;
    for (i = n - 1; i > 0; i--) {
        int j, tmp;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        j = (int) (x % (unsigned) (i + 1));
        tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
}

void xb_run(const xb_setup_t *s, const xb_case_t *c, char **alg, int nalg, int iters, int warmup,
            int rss, const unsigned char *sbuf, unsigned char *rbuf, xb_result_t *res)
{
    const int rg = 1 - s->group;
    const size_t rbytes = (size_t) xb_sent_by(c, s, rg);
    const size_t n = (size_t) nalg * (size_t) iters;
    double *t = calloc(5 * n, sizeof(double));
    double *ta = t + n, *tm_in = t + 2 * n, *tintra = t + 3 * n, *tinter = t + 4 * n;
    int *zeros = calloc((size_t) s->n[rg] + 1, sizeof(int));
    int order[XB_MAXALG];
    int it, a, o;

    if (!t || !zeros || nalg > XB_MAXALG) {
        fprintf(stderr, "xbench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(res, 0, (size_t) nalg * sizeof(*res));
    for (a = 0; a < nalg; a++)
        res[a].ok = 1;
    for (it = -warmup; it < iters; it++) {
        shuffle(order, nalg, it);
        for (o = 0; o < nalg; o++) {
            timing_t tm;
            size_t k;
            a = order[o];
            k = (size_t) a * (size_t) iters + (size_t) it;
            if (res[a].st != XFER_SUCCESS)
                continue;
            if (it >= 0)
                memset(rbuf, 0, rbytes);
            res[a].st = timed_call(s, c, alg[a], sbuf, rbuf, zeros, it, &tm);
            if (it >= 0) {
                t[k] = tm.t;
                ta[k] = tm.after;
                tm_in[k] = tm.mean_in;
                tintra[k] = tm.intra;
                tinter[k] = tm.inter;
                if (res[a].st == XFER_SUCCESS && !verified(s, c, rbuf))
                    res[a].ok = 0;
            }
        }
    }
    for (a = 0; a < nalg; a++) {
        const size_t k = (size_t) a * (size_t) iters;
        res[a].samples = malloc(sizeof(double) * (size_t) iters);
        if (!res[a].samples) {
            fprintf(stderr, "xbench: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memcpy(res[a].samples, t + k, sizeof(double) * (size_t) iters);
        res[a].median = xb_median(t + k, iters); /* sorts: min first, max last */
        res[a].min = t[k];
        res[a].max = t[k + (size_t) iters - 1];
        res[a].after = xb_median(ta + k, iters);
        res[a].mean_in = xb_median(tm_in + k, iters);
        res[a].intra = xb_median(tintra + k, iters);
        res[a].inter = xb_median(tinter + k, iters);
        res[a].rss_kb = res[a].rss_growth_kb = -1;
        if (rss && res[a].st == XFER_SUCCESS)
            call_rss(s, c, alg[a], sbuf, rbuf, zeros, &res[a]);
    }
    free(zeros);
    free(t);
}

void xb_results_free(xb_result_t *res, int nalg)
{
    int a;
    for (a = 0; a < nalg; a++) {
        free(res[a].samples);
        res[a].samples = NULL;
    }
}

double xb_copy_bandwidth(size_t bytes)
{
    double bw = 0;
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (bytes < 65536)
        bytes = 65536;
    if (wrank == 0) {
        unsigned char *a = malloc(bytes), *b = malloc(bytes);
        double t[9];
        int i;
        if (!a || !b) {
            fprintf(stderr, "xbench: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memset(a, 1, bytes);
        memset(b, 2, bytes);
        for (i = 0; i < 9; i++) {
            const double t0 = MPI_Wtime();
            memcpy(i % 2 ? a : b, i % 2 ? b : a, bytes);
            t[i] = MPI_Wtime() - t0;
        }
        bw = (double) bytes / xb_median(t, 9);
        if (a[bytes / 2] == 3) /* keep the copies observable */
            bw = 0;
        free(a);
        free(b);
    }
    MPI_Bcast(&bw, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return bw;
}
