/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd-load: many clients against one xferd (docs/xferctl.md, "Load test").
 *
 *   xferd-load --make-config FILE N
 *       write a workflow file with N components (c0 .. cN-1) and no channels
 *   xferd-load --config WF.yaml --endpoint EP --token-file F [--clients N] [--polls K]
 *              [--threads T] [--status-every S] [--timeout MS]
 *       N clients, each its own connection (one xfer_ctl_t), spread over T threads that own
 *       them; each registers as component i of the file, then sends K requests: heartbeats,
 *       every S-th one a status instead (0: heartbeats only). One request is in flight per
 *       thread (the client API is synchronous). Prints throughput and latency percentiles and
 *       checks with one final status that all N components are registered as running.
 *
 * Exit status: 0 all requests answered and no registration lost, 1 otherwise, 2 usage. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <xfer/config.h>
#include <xfer/control.h>
#include <xfer/status.h>

#include "common/cli.h"

enum { OP_REGISTER = 0, OP_HEARTBEAT = 1, OP_STATUS = 2, NOPS = 3 };
static const char *const op_name[NOPS] = {"register", "heartbeat", "status"};

typedef struct lat {
    double *ms;
    size_t n, cap;
} lat_t;

typedef struct shared {
    const xfer_config_t *cfg;
    const char *endpoint, *token;
    int clients, polls, threads, status_every, timeout_ms;
    pthread_barrier_t ready; /* every thread connected: the clock starts */
} shared_t;

typedef struct worker {
    shared_t *sh;
    int index;
    pthread_t tid;
    int first, count; /* its clients: components first .. first + count - 1 */
    xfer_ctl_t **cl;
    int64_t *session;
    lat_t lat[NOPS];
    long errors;
    char first_error[512];
    int connect_failed;
} worker_t;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: xferd-load --make-config FILE N\n"
                 "       xferd-load --config WF.yaml --endpoint EP --token-file F [--clients N]\n"
                 "                  [--polls K] [--threads T] [--status-every S] [--timeout MS]\n"
                 "       xferd-load -h|--help | --version\n"
                 "defaults: --clients 500 --polls 10 --threads 4 --status-every 5 "
                 "--timeout 30000\n");
}

static int lat_add(lat_t *l, double ms)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        double *p = realloc(l->ms, cap * sizeof(*p));
        if (!p)
            return -1;
        l->ms = p;
        l->cap = cap;
    }
    l->ms[l->n++] = ms;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted @p v. */
static double pct(const double *v, size_t n, double p)
{
    size_t k;
    if (n == 0)
        return 0.0;
    k = (size_t) (p / 100.0 * (double) n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

static void note_error(worker_t *w, const char *what, int client)
{
    if (w->errors++ == 0)
        snprintf(w->first_error, sizeof(w->first_error), "client %d: %s: %s", client, what,
                 xfer_last_error());
}

/* One timed request of kind @p op for client @p k of worker @p w. */
static void timed(worker_t *w, int k, int op)
{
    shared_t *sh = w->sh;
    const int comp = w->first + k;
    xfer_ctl_msg_t *req = NULL, *reply = NULL;
    xfer_status_t st;
    char host[256] = "localhost";
    double t0;

    st = xfer_ctl_msg_new(op_name[op], &req);
    if (st == XFER_SUCCESS && op == OP_REGISTER) {
        gethostname(host, sizeof(host) - 1);
        if ((st = xfer_ctl_set_str(req, "component", sh->cfg->components[comp].name)) ==
                XFER_SUCCESS &&
            (st = xfer_ctl_set_int(req, "nprocs", sh->cfg->components[comp].nprocs)) ==
                XFER_SUCCESS &&
            (st = xfer_ctl_set_int(req, "pid", (int64_t) getpid())) == XFER_SUCCESS)
            st = xfer_ctl_set_str(req, "host", host);
    } else if (st == XFER_SUCCESS && op == OP_HEARTBEAT) {
        st = xfer_ctl_set_int(req, "session", w->session[k]);
    }
    if (st != XFER_SUCCESS) {
        note_error(w, "building the request", comp);
        xfer_ctl_msg_free(&req);
        return;
    }
    t0 = now_ms();
    st = xfer_ctl_request(w->cl[k], req, sh->timeout_ms, &reply);
    if (lat_add(&w->lat[op], now_ms() - t0) != 0) {
        xfer_ctl_msg_free(&req);
        xfer_ctl_msg_free(&reply);
        note_error(w, "out of memory", comp);
        return;
    }
    if (st != XFER_SUCCESS)
        note_error(w, op_name[op], comp);
    else if (op == OP_REGISTER)
        w->session[k] = xfer_ctl_int(reply, "session", 0);
    xfer_ctl_msg_free(&req);
    xfer_ctl_msg_free(&reply);
}

static void *run_worker(void *arg)
{
    worker_t *w = arg;
    shared_t *sh = w->sh;
    xfer_ctl_opts_t co = {sh->endpoint, sh->cfg->workflow, sh->token,
                          sh->cfg->curve_public_key[0] ? sh->cfg->curve_public_key : NULL};
    int k, p;

    for (k = 0; k < w->count && !w->connect_failed; k++)
        if (xfer_ctl_connect(&co, &w->cl[k]) != XFER_SUCCESS) {
            note_error(w, "connect", w->first + k);
            w->connect_failed = 1;
        }
    pthread_barrier_wait(&sh->ready); /* main takes the start time */
    pthread_barrier_wait(&sh->ready);
    if (w->connect_failed)
        return NULL;
    for (k = 0; k < w->count; k++)
        timed(w, k, OP_REGISTER);
    for (p = 1; p <= sh->polls; p++)
        for (k = 0; k < w->count; k++)
            timed(w, k,
                  sh->status_every > 0 && p % sh->status_every == 0 ? OP_STATUS : OP_HEARTBEAT);
    return NULL;
}

static int make_config(const char *path, long n)
{
    FILE *f = fopen(path, "w");
    long i;
    if (!f) {
        fprintf(stderr, "xferd-load: %s: %s\n", path, strerror(errno));
        return 2;
    }
    /* a generous liveness timeout: a client may wait its turn among many for its next
     * heartbeat (one request in flight per thread) */
    fprintf(f,
            "# written by xferd-load --make-config: %ld components, no channels\n"
            "workflow: xferd_load\n"
            "control: {heartbeat_ms: 500, heartbeat_timeout_ms: 120000}\n"
            "components:\n",
            n);
    for (i = 0; i < n; i++)
        fprintf(f, "  - {name: c%ld, nprocs: 1, cmd: [\"true\"]}\n", i);
    if (fclose(f) != 0) {
        fprintf(stderr, "xferd-load: %s: %s\n", path, strerror(errno));
        return 2;
    }
    return 0;
}

/* Each client holds a ZeroMQ context (its I/O and reaper threads and their descriptors) and a
 * socket: raise the soft descriptor limit to the hard one. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* The final status: components c0 .. c(N-1) should all be running. Returns how many are not,
 * or -1 when the status request failed. */
static long lost_registrations(const shared_t *sh, xfer_ctl_t *c)
{
    xfer_ctl_msg_t *req = NULL, *reply = NULL;
    long lost = 0;
    int i, n;

    if (xfer_ctl_msg_new("status", &req) != XFER_SUCCESS ||
        xfer_ctl_request(c, req, sh->timeout_ms, &reply) != XFER_SUCCESS) {
        fprintf(stderr, "xferd-load: final status: %s\n", xfer_last_error());
        xfer_ctl_msg_free(&req);
        xfer_ctl_msg_free(&reply);
        return -1;
    }
    n = xfer_ctl_nitems(reply, "components");
    for (i = 0; i < sh->clients; i++) {
        const char *name = sh->cfg->components[i].name;
        const xfer_ctl_msg_t *it = NULL;
        int j;
        for (j = 0; j < n && !it; j++) {
            const xfer_ctl_msg_t *c2 = xfer_ctl_item(reply, "components", j);
            const char *nm = xfer_ctl_str(c2, "name", "");
            if (!strcmp(nm, name))
                it = c2;
        }
        if (!it || strcmp(xfer_ctl_str(it, "state", ""), "running") != 0) {
            if (lost < 5)
                fprintf(stderr, "xferd-load: component %s is %s\n", name,
                        it ? xfer_ctl_str(it, "state", "?") : "missing from the status");
            lost++;
        }
    }
    xfer_ctl_msg_free(&req);
    xfer_ctl_msg_free(&reply);
    return lost;
}

int main(int argc, char **argv)
{
    const char *config = NULL, *token_file = NULL;
    shared_t sh;
    worker_t *w = NULL;
    xfer_config_t *cfg = NULL;
    xfer_ctl_t *probe = NULL;
    char *token = NULL;
    lat_t all = {NULL, 0, 0};
    long errors = 0, lost;
    double t0, wall;
    int i, op, rc = 1, barrier = 0;

    memset(&sh, 0, sizeof(sh));
    sh.clients = 500;
    sh.polls = 10;
    sh.threads = 4;
    sh.status_every = 5;
    sh.timeout_ms = 30000;
    {
        enum {
            O_MAKE = 256,
            O_CONFIG,
            O_ENDPOINT,
            O_TOKEN,
            O_CLIENTS,
            O_POLLS,
            O_THREADS,
            O_STATUS,
            O_TIMEOUT,
            O_VERSION
        };
        static const struct option longopts[] = {
            {"make-config", required_argument, NULL, O_MAKE},
            {"config", required_argument, NULL, O_CONFIG},
            {"endpoint", required_argument, NULL, O_ENDPOINT},
            {"token-file", required_argument, NULL, O_TOKEN},
            {"clients", required_argument, NULL, O_CLIENTS},
            {"polls", required_argument, NULL, O_POLLS},
            {"threads", required_argument, NULL, O_THREADS},
            {"status-every", required_argument, NULL, O_STATUS},
            {"timeout", required_argument, NULL, O_TIMEOUT},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, O_VERSION},
            {NULL, 0, NULL, 0}};
        const char *prog = "xferd-load", *make = NULL;
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
            switch (c) {
            case 'h':
                usage(stdout);
                return 0;
            case O_VERSION:
                xfer_cli_version(prog);
                return 0;
            case O_MAKE:
                make = optarg;
                break;
            case O_CONFIG:
                config = optarg;
                break;
            case O_ENDPOINT:
                sh.endpoint = optarg;
                break;
            case O_TOKEN:
                token_file = optarg;
                break;
            case O_CLIENTS:
                sh.clients = (int) xfer_cli_long(prog, "--clients", optarg, 1, 4096);
                break;
            case O_POLLS:
                sh.polls = (int) xfer_cli_long(prog, "--polls", optarg, 0, 1000000);
                break;
            case O_THREADS:
                sh.threads = (int) xfer_cli_long(prog, "--threads", optarg, 1, 1024);
                break;
            case O_STATUS:
                sh.status_every = (int) xfer_cli_long(prog, "--status-every", optarg, 0, 1000000);
                break;
            case O_TIMEOUT:
                sh.timeout_ms = (int) xfer_cli_long(prog, "--timeout", optarg, 1, 86400000);
                break;
            default:
                xfer_cli_bad_option(prog, c, argv);
            }
        }
        if (make) { /* --make-config FILE N */
            if (optind + 1 != argc)
                xfer_cli_usage_error(prog, "--make-config FILE needs N, the number of components");
            return make_config(make, xfer_cli_long(prog, "N", argv[optind], 1, 4096));
        }
        if (optind < argc)
            xfer_cli_usage_error(prog, "unexpected argument \"%s\"", argv[optind]);
        if (!config || !sh.endpoint || !token_file)
            xfer_cli_usage_error(prog, "--config, --endpoint and --token-file are required");
    }

    if (xfer_config_load(config, &cfg) != XFER_SUCCESS) {
        fprintf(stderr, "xferd-load: %s\n", xfer_last_error());
        return 2;
    }
    if (cfg->ncomponents < sh.clients) {
        fprintf(stderr,
                "xferd-load: %s has %d components, fewer than --clients %d (make one with "
                "--make-config FILE %d)\n",
                config, cfg->ncomponents, sh.clients, sh.clients);
        rc = 2;
        goto out;
    }
    if (xfer_ctl_read_token(token_file, &token) != XFER_SUCCESS) {
        fprintf(stderr, "xferd-load: %s\n", xfer_last_error());
        rc = 2;
        goto out;
    }
    if (sh.threads > sh.clients)
        sh.threads = sh.clients;
    raise_fd_limit();
    sh.cfg = cfg;
    sh.token = token;

    w = calloc((size_t) sh.threads, sizeof(*w));
    if (!w || pthread_barrier_init(&sh.ready, NULL, (unsigned) sh.threads + 1) != 0) {
        fprintf(stderr, "xferd-load: out of memory\n");
        goto out;
    }
    barrier = 1;
    for (i = 0; i < sh.threads; i++) {
        /* contiguous blocks of clients, sizes differing by at most one */
        w[i].sh = &sh;
        w[i].index = i;
        w[i].first = (int) ((int64_t) sh.clients * i / sh.threads);
        w[i].count = (int) ((int64_t) sh.clients * (i + 1) / sh.threads) - w[i].first;
        w[i].cl = calloc((size_t) w[i].count, sizeof(*w[i].cl));
        w[i].session = calloc((size_t) w[i].count, sizeof(*w[i].session));
        if (!w[i].cl || !w[i].session) {
            fprintf(stderr, "xferd-load: out of memory\n");
            sh.threads = i; /* the barrier is never reached: give up before starting any */
            goto out;
        }
    }
    for (i = 0; i < sh.threads; i++)
        if (pthread_create(&w[i].tid, NULL, run_worker, &w[i]) != 0) {
            fprintf(stderr, "xferd-load: cannot start thread %d: %s\n", i, strerror(errno));
            exit(1); /* the barrier would never open */
        }
    pthread_barrier_wait(&sh.ready);
    t0 = now_ms();
    pthread_barrier_wait(&sh.ready);
    for (i = 0; i < sh.threads; i++)
        pthread_join(w[i].tid, NULL);
    wall = now_ms() - t0;

    printf("xferd-load: endpoint %s, workflow %s\n", sh.endpoint, cfg->workflow);
    printf("clients: %d (one connection each, %d threads, peak RSS of this process %ld KiB)\n",
           sh.clients, sh.threads, peak_rss_kib());
    for (op = 0; op < NOPS; op++) {
        lat_t one = {NULL, 0, 0};
        for (i = 0; i < sh.threads; i++) {
            size_t j;
            for (j = 0; j < w[i].lat[op].n; j++)
                if (lat_add(&one, w[i].lat[op].ms[j]) != 0 ||
                    lat_add(&all, w[i].lat[op].ms[j]) != 0) {
                    fprintf(stderr, "xferd-load: out of memory\n");
                    free(one.ms);
                    goto out;
                }
        }
        if (!one.n)
            continue;
        qsort(one.ms, one.n, sizeof(double), cmp_double);
        printf("  %-9s %7zu requests  p50 %.3f ms  p99 %.3f ms  max %.3f ms\n", op_name[op], one.n,
               pct(one.ms, one.n, 50), pct(one.ms, one.n, 99), pct(one.ms, one.n, 100));
        free(one.ms);
    }
    qsort(all.ms, all.n, sizeof(double), cmp_double);
    printf("total requests: %zu\n", all.n);
    printf("wall time: %.3f s\n", wall / 1e3);
    printf("throughput: %.0f requests/s\n", wall > 0 ? (double) all.n / (wall / 1e3) : 0.0);
    printf("latency ms: p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n", pct(all.ms, all.n, 50),
           pct(all.ms, all.n, 90), pct(all.ms, all.n, 99), pct(all.ms, all.n, 100));
    for (i = 0; i < sh.threads; i++) {
        if (w[i].errors && errors == 0)
            fprintf(stderr, "xferd-load: first error: %s\n", w[i].first_error);
        errors += w[i].errors;
    }
    printf("failed requests: %ld\n", errors);

    {
        xfer_ctl_opts_t co = {sh.endpoint, cfg->workflow, token,
                              cfg->curve_public_key[0] ? cfg->curve_public_key : NULL};
        if (xfer_ctl_connect(&co, &probe) != XFER_SUCCESS) {
            fprintf(stderr, "xferd-load: %s\n", xfer_last_error());
            goto out;
        }
    }
    lost = lost_registrations(&sh, probe);
    if (lost < 0)
        goto out;
    printf("lost registrations: %ld\n", lost);
    rc = lost == 0 && errors == 0 ? 0 : 1;
out:
    xfer_ctl_close(&probe);
    for (i = 0; w && i < sh.threads; i++) {
        int k;
        for (k = 0; w[i].cl && k < w[i].count; k++)
            xfer_ctl_close(&w[i].cl[k]);
        for (op = 0; op < NOPS; op++)
            free(w[i].lat[op].ms);
        free(w[i].cl);
        free(w[i].session);
    }
    free(w);
    free(all.ms);
    if (barrier)
        pthread_barrier_destroy(&sh.ready);
    if (token) {
        memset(token, 0, strlen(token));
        free(token);
    }
    xfer_config_free(&cfg);
    return rc;
}
