/* SPDX-License-Identifier: BSD-3-Clause */
/* The control plane (xferd) as a component sees it (docs/control-protocol.md, docs/runtime.md).
 *
 * The component's rank 0, its leader, talks to xferd with two connections: the heartbeat
 * thread's (it registers, so failure notices come to it; it sends heartbeats and receives
 * notices) and the main thread's (publish, lookup, step and ack reports, bye). Every other rank
 * has a thread of its own that only beats (`beat`, with the leader's session and its rank), so
 * that a stalled or dead rank of any rank number makes its component fail in xferd's eyes. The
 * threads never call MPI. A failure notice sets a flag the main thread reads in its wait loops;
 * the leader then tells its component's other ranks over MPI (ch_health.c, NOTE_FAIL). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfer/control.h>

#include "runtime.h"

#define CTL_SLICE_MS 50 /* the thread checks for stop at least this often */
#define CTL_ASK_MS                                                                                 \
    1000                 /* publish and lookup ask again this often: a daemon that died with       \
                          * the request unanswered is restarted from its journal, and the          \
                          * request must reach the new one */
#define CTL_TRIP_MS 2000 /* beyond a lookup's wait: the way to the daemon and back */

struct xfer_rt_ctl {
    xfer_ctl_t *main; /* the main thread's connection */
    xfer_ctl_t *hb;   /* the heartbeat thread's */
    int64_t session;
    int heartbeat_ms;
    int ncomp;
    pthread_t thread;
    int started;
    atomic_int stop;
    atomic_int nfailed;  /* failure notices received (a cheap check for the main thread) */
    atomic_int shutdown; /* the daemon said it stops */
    atomic_llong heard;  /* when xferd was last heard from, either connection (xfer_now_ms) */
    char endpoint[256];
    pthread_mutex_t lock;    /* guards reason[], failed_session[], offer[] */
    char **reason;           /* per component: why xferd declared it failed (NULL: alive) */
    int64_t *failed_session; /* ... and the session (incarnation) it failed in (0: unknown) */
    struct ctl_offer {       /* per channel: a reader's offer to attach (xferd's "attaching") */
        char *port;          /* NULL: none */
        int64_t session;     /* the reader's session */
    } * offer;
    const xfer_config_t *cfg;
    double main_polled; /* when the main thread last read its own connection */
};

/* Is the reader's offer @p o of a session declared failed? (under c->lock) */
static int offer_dead(const xfer_rt_ctl_t *c, int comp, const struct ctl_offer *o)
{
    return c->reason[comp] &&
           (c->failed_session[comp] == 0 || c->failed_session[comp] >= o->session);
}

/* A failure notice: the verdict on the component's incarnation named by "session" (a daemon
 * before it sends none: the verdict stands for every incarnation). A later incarnation's verdict
 * replaces an earlier one's; the offers of the failed incarnation are dropped. */
static void note_failure(xfer_rt_ctl_t *c, const xfer_config_t *cfg, const xfer_ctl_msg_t *m)
{
    const char *comp = xfer_ctl_str(m, "component", "");
    const char *why = xfer_ctl_str(m, "reason", "no reason given");
    const int64_t session = xfer_ctl_int(m, "session", 0);
    int i, j;
    for (i = 0; i < cfg->ncomponents; i++) {
        if (strcmp(cfg->components[i].name, comp) != 0)
            continue;
        pthread_mutex_lock(&c->lock);
        if (!c->reason[i] || (c->failed_session[i] > 0 && session > c->failed_session[i])) {
            free(c->reason[i]);
            c->reason[i] = xfer_strdup(why);
            c->failed_session[i] = session;
        }
        for (j = 0; j < cfg->nchannels; j++)
            if (cfg->channels[j].to == i && c->offer[j].port && offer_dead(c, i, &c->offer[j])) {
                free(c->offer[j].port);
                c->offer[j].port = NULL;
            }
        pthread_mutex_unlock(&c->lock);
        atomic_fetch_add(&c->nfailed, 1);
        return;
    }
}

/* A reader offers to attach to a channel of ours (xferd only offers a live one's). */
static void note_offer(xfer_rt_ctl_t *c, const xfer_config_t *cfg, const xfer_ctl_msg_t *m)
{
    const char *name = xfer_ctl_str(m, "channel", ""), *port = xfer_ctl_str(m, "port", "");
    const struct ctl_offer o = {NULL, xfer_ctl_int(m, "session", 0)};
    int j;
    for (j = 0; j < cfg->nchannels; j++) {
        char *copy;
        if (strcmp(cfg->channels[j].name, name) != 0)
            continue;
        copy = xfer_strdup(port);
        pthread_mutex_lock(&c->lock);
        if (copy && !offer_dead(c, cfg->channels[j].to, &o) &&
            (!c->offer[j].port || o.session >= c->offer[j].session)) {
            free(c->offer[j].port);
            c->offer[j].port = copy;
            c->offer[j].session = o.session;
            copy = NULL;
        }
        pthread_mutex_unlock(&c->lock);
        free(copy);
        return;
    }
}

/* A message xferd sent unasked, on either connection (the daemon sends notices to the
 * connection that last spoke for the session). */
static void on_notice(xfer_rt_ctl_t *c, const xfer_ctl_msg_t *m)
{
    if (strcmp(xfer_ctl_op(m), "failure") == 0)
        note_failure(c, c->cfg, m);
    else if (strcmp(xfer_ctl_op(m), "attaching") == 0)
        note_offer(c, c->cfg, m);
    else if (strcmp(xfer_ctl_op(m), "shutdown") == 0)
        atomic_store(&c->shutdown, 1);
}

/* A connection's owner records when xferd last spoke on it (replies count: a heartbeat's reply
 * is what proves the daemon alive). */
static void note_heard(xfer_rt_ctl_t *c, const xfer_ctl_t *conn)
{
    double t = 0;
    if (xfer_ctl_last_heard(conn, &t) == XFER_SUCCESS && (long long) t > atomic_load(&c->heard))
        atomic_store(&c->heard, (long long) t);
}

/* The main thread reads its connection: notices, and replies to reports nobody waits for. */
static void drain_main(xfer_rt_ctl_t *c)
{
    xfer_ctl_msg_t *m = NULL;
    c->main_polled = xfer_now_ms();
    while (xfer_ctl_recv(c->main, 0, &m) == XFER_SUCCESS && m) {
        on_notice(c, m);
        xfer_ctl_msg_free(&m);
    }
    note_heard(c, c->main);
}

static void *heartbeat_main(void *arg)
{
    xfer_rt_ctl_t *c = arg;
    double next = xfer_now_ms() + c->heartbeat_ms;

    while (!atomic_load(&c->stop)) {
        xfer_ctl_msg_t *m = NULL;
        double left = next - xfer_now_ms();
        xfer_status_t st;
        if (left <= 0) {
            xfer_ctl_msg_t *hb = NULL;
            if (xfer_ctl_msg_new("heartbeat", &hb) == XFER_SUCCESS &&
                xfer_ctl_set_int(hb, "session", c->session) == XFER_SUCCESS)
                (void) xfer_ctl_send(c->hb, hb); /* a lost beat is what liveness is about */
            xfer_ctl_msg_free(&hb);
            next = xfer_now_ms() + c->heartbeat_ms;
            continue;
        }
        st = xfer_ctl_recv(c->hb, left < CTL_SLICE_MS ? (int) left + 1 : CTL_SLICE_MS, &m);
        note_heard(c, c->hb);
        if (st != XFER_SUCCESS || !m)
            continue;
        on_notice(c, m);
        xfer_ctl_msg_free(&m);
    }
    return NULL;
}

/* ---- the other ranks' beats ----------------------------------------------------------------- */

struct xfer_rt_beat {
    pthread_mutex_t mu; /* the connection: the thread's beats, the main thread's error reports */
    xfer_ctl_t *conn;
    int64_t session;
    int rank, heartbeat_ms;
    char host[256];
    pthread_t thread;
    int started;
    atomic_int stop;
};

static void *beat_main(void *arg)
{
    struct xfer_rt_beat *b = arg;
    double next = xfer_now_ms();

    while (!atomic_load(&b->stop)) {
        xfer_ctl_msg_t *m = NULL;
        double left = next - xfer_now_ms();
        pthread_mutex_lock(&b->mu);
        if (left <= 0) {
            xfer_ctl_msg_t *hb = NULL;
            if (xfer_ctl_msg_new("beat", &hb) == XFER_SUCCESS &&
                xfer_ctl_set_int(hb, "session", b->session) == XFER_SUCCESS &&
                xfer_ctl_set_int(hb, "rank", b->rank) == XFER_SUCCESS &&
                xfer_ctl_set_int(hb, "pid", (int64_t) getpid()) == XFER_SUCCESS &&
                xfer_ctl_set_str(hb, "host", b->host) == XFER_SUCCESS)
                (void) xfer_ctl_send(b->conn, hb); /* a lost beat is what liveness is about */
            xfer_ctl_msg_free(&hb);
            next = xfer_now_ms() + b->heartbeat_ms;
        } else if (xfer_ctl_recv(b->conn, left < CTL_SLICE_MS ? (int) left + 1 : CTL_SLICE_MS,
                                 &m) == XFER_SUCCESS &&
                   m) {
            xfer_ctl_msg_free(&m); /* the replies: the leader hears of failures */
        }
        pthread_mutex_unlock(&b->mu);
        if (left > 0 && !m)
            sched_yield(); /* let an error report have the connection */
    }
    return NULL;
}

static void beat_stop(struct xfer *x)
{
    struct xfer_rt_beat *b = x->beat;
    if (!b)
        return;
    if (b->started) {
        atomic_store(&b->stop, 1);
        pthread_join(b->thread, NULL);
    }
    xfer_ctl_close(&b->conn);
    pthread_mutex_destroy(&b->mu);
    xfer_free(b);
    x->beat = NULL;
}

/* Endpoint and token: the environment (xfer-run) first, then the file. */
static const char *ctl_endpoint(const xfer_config_t *cfg)
{
    const char *e = xfer_env_str("XFER_CONTROL_ENDPOINT");
    if (e && e[0])
        return e;
    return cfg->control_endpoint && cfg->control_endpoint[0] ? cfg->control_endpoint : NULL;
}

/* The workflow's token (XFER_CONTROL_TOKEN_FILE, else control.token_file): caller frees. */
static xfer_status_t read_token(const xfer_config_t *cfg, const char *endpoint, char **token)
{
    const char *tf = xfer_env_str("XFER_CONTROL_TOKEN_FILE");
    if (!tf || !tf[0])
        tf = cfg->token_file;
    if (!tf || !tf[0])
        return XFER_ERR(XFER_ERR_CONFIG,
                        "control plane at %s: no workflow token (set control.token_file or "
                        "XFER_CONTROL_TOKEN_FILE; xfer-run makes one)",
                        endpoint);
    return xfer_ctl_read_token(tf, token);
}

/* A rank other than the leader beats with the leader's session. */
static xfer_status_t beat_start(struct xfer *x, const char *endpoint, int64_t session, int rank,
                                int heartbeat_ms)
{
    xfer_ctl_opts_t o = {endpoint, x->cfg->workflow, NULL, x->cfg->curve_public_key};
    struct xfer_rt_beat *b;
    char *token = NULL;
    xfer_status_t st;

    XFER_CHECK_GOTO(read_token(x->cfg, endpoint, &token), st, out);
    o.token = token;
    b = xfer_calloc(1, sizeof(*b));
    if (!b) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "control plane");
        goto out;
    }
    x->beat = b;
    pthread_mutex_init(&b->mu, NULL);
    b->session = session;
    b->rank = rank;
    b->heartbeat_ms = heartbeat_ms;
    gethostname(b->host, sizeof(b->host) - 1);
    atomic_init(&b->stop, 0);
    XFER_CHECK_GOTO(xfer_ctl_connect(&o, &b->conn), st, out);
    if (pthread_create(&b->thread, NULL, beat_main, b) != 0) {
        st = XFER_ERR(XFER_ERR_INTERNAL, "cannot start the heartbeat thread of rank %d", rank);
        goto out;
    }
    b->started = 1;
out:
    free(token);
    return st;
}

static xfer_status_t leader_start(struct xfer *x, const char *endpoint)
{
    const xfer_config_t *cfg = x->cfg;
    xfer_ctl_opts_t o = {endpoint, cfg->workflow, NULL, cfg->curve_public_key};
    xfer_ctl_msg_t *req = NULL, *rep = NULL;
    xfer_rt_ctl_t *c;
    char host[256] = "";
    char *token = NULL;
    xfer_status_t st;

    XFER_CHECK_GOTO(read_token(cfg, endpoint, &token), st, out);
    o.token = token;
    c = xfer_calloc(1, sizeof(*c));
    if (!c) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "control plane");
        goto out;
    }
    x->ctl = c;
    pthread_mutex_init(&c->lock, NULL);
    c->ncomp = cfg->ncomponents;
    c->cfg = cfg;
    c->reason = xfer_calloc((size_t) c->ncomp, sizeof(*c->reason));
    c->failed_session = xfer_calloc((size_t) c->ncomp, sizeof(*c->failed_session));
    c->offer = xfer_calloc((size_t) cfg->nchannels + 1, sizeof(*c->offer));
    if (!c->reason || !c->failed_session || !c->offer) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "control plane");
        goto out;
    }
    c->heartbeat_ms = cfg->heartbeat_ms;
    XFER_CHECK_GOTO(xfer_ctl_connect(&o, &c->main), st, out);
    XFER_CHECK_GOTO(xfer_ctl_connect(&o, &c->hb), st, out);
    gethostname(host, sizeof(host) - 1);
    XFER_CHECK_GOTO(xfer_ctl_msg_new("register", &req), st, out);
    XFER_CHECK_GOTO(xfer_ctl_set_str(req, "component", cfg->components[x->comp].name), st, out);
    XFER_CHECK_GOTO(xfer_ctl_set_int(req, "nprocs", x->size), st, out);
    XFER_CHECK_GOTO(xfer_ctl_set_int(req, "pid", (int64_t) getpid()), st, out);
    XFER_CHECK_GOTO(xfer_ctl_set_str(req, "host", host), st, out);
    /* registered through the heartbeat connection: notices come to the thread */
    st = xfer_ctl_request(c->hb, req, x->timeout_ms, &rep);
    if (st != XFER_SUCCESS) {
        st = xfer_err_raw(st, "component %s: registering with xferd at %s: %s",
                          cfg->components[x->comp].name, endpoint, xfer_last_error());
        goto out;
    }
    atomic_store(&c->heard, (long long) xfer_now_ms());
    snprintf(c->endpoint, sizeof(c->endpoint), "%s", endpoint);
    c->session = xfer_ctl_int(rep, "session", 0);
    c->heartbeat_ms = (int) xfer_ctl_int(rep, "heartbeat_ms", cfg->heartbeat_ms);
    if (c->session < 1 || c->heartbeat_ms < 1) {
        st = XFER_ERR(XFER_ERR_PROTOCOL, "xferd at %s: register reply without a session", endpoint);
        goto out;
    }
    if (pthread_create(&c->thread, NULL, heartbeat_main, c) != 0) {
        st = XFER_ERR(XFER_ERR_INTERNAL, "cannot start the heartbeat thread");
        goto out;
    }
    c->started = 1;
out:
    xfer_ctl_msg_free(&req);
    xfer_ctl_msg_free(&rep);
    free(token);
    return st;
}

xfer_status_t xfer_rt_ctl_start(struct xfer *x)
{
    const char *endpoint = ctl_endpoint(x->cfg);
    xfer_status_t st = XFER_SUCCESS;
    int rank = 0;

    x->use_ctl = endpoint != NULL;
    if (!x->use_ctl)
        return XFER_SUCCESS;
    if (MPI_Comm_rank(x->comm, &rank) != MPI_SUCCESS)
        return XFER_ERR(XFER_ERR_MPI, "MPI_Comm_rank failed");
    if (rank != 0)
        return XFER_SUCCESS;
    st = leader_start(x, endpoint);
    if (st != XFER_SUCCESS)
        xfer_rt_ctl_stop(x, 0);
    return st;
}

xfer_status_t xfer_rt_ctl_ranks(struct xfer *x)
{
    int64_t v[2] = {0, 0}; /* the leader's session, the heartbeat period */
    xfer_status_t st = XFER_SUCCESS;
    int rank = 0;

    if (!x->use_ctl)
        return XFER_SUCCESS;
    XFER_MPI_GOTO(MPI_Comm_rank(x->comm, &rank), st, out);
    if (rank == 0 && x->ctl) {
        v[0] = x->ctl->session;
        v[1] = x->ctl->heartbeat_ms;
    }
    XFER_MPI_GOTO(MPI_Bcast(v, 2, MPI_INT64_T, 0, x->comm), st, out);
    if (rank != 0 && v[0] > 0)
        st = beat_start(x, ctl_endpoint(x->cfg), v[0], rank, (int) v[1]);
out:
    return st;
}

void xfer_rt_ctl_stop(struct xfer *x, int clean)
{
    xfer_rt_ctl_t *c = x ? x->ctl : NULL;
    int i;
    if (x)
        beat_stop(x);
    if (!c)
        return;
    if (c->started) {
        atomic_store(&c->stop, 1);
        pthread_join(c->thread, NULL);
    }
    if (clean && c->main && c->session > 0 && !atomic_load(&c->shutdown)) {
        xfer_ctl_msg_t *req = NULL;
        if (xfer_ctl_msg_new("bye", &req) == XFER_SUCCESS &&
            xfer_ctl_set_int(req, "session", c->session) == XFER_SUCCESS &&
            xfer_ctl_request(c->main, req, XFER_MIN(x->timeout_ms, 5000), NULL) != XFER_SUCCESS)
            xfer_log(XFER_LOG_WARN, "xferd did not confirm the goodbye: %s", xfer_last_error());
        xfer_ctl_msg_free(&req);
    }
    xfer_ctl_close(&c->main);
    xfer_ctl_close(&c->hb);
    for (i = 0; c->reason && i < c->ncomp; i++)
        free(c->reason[i]);
    for (i = 0; c->offer && i < c->cfg->nchannels; i++)
        free(c->offer[i].port);
    xfer_free(c->reason);
    xfer_free(c->failed_session);
    xfer_free(c->offer);
    pthread_mutex_destroy(&c->lock);
    xfer_free(c);
    x->ctl = NULL;
}

/* A request of the main thread that carries the session and a channel name. */
static xfer_status_t channel_req(struct xfer *x, const char *op, int index, xfer_ctl_msg_t **req)
{
    xfer_status_t st;
    XFER_CHECK_GOTO(xfer_ctl_msg_new(op, req), st, out);
    XFER_CHECK_GOTO(xfer_ctl_set_int(*req, "session", x->ctl->session), st, out);
    st = xfer_ctl_set_str(*req, "channel", x->cfg->channels[index].name);
out:
    return st;
}

/* An idempotent request about channel @p index's port (op publish or attach: the same session,
 * channel and port): without a reply within CTL_ASK_MS it is sent again, until x->timeout_ms. */
static xfer_status_t port_request(struct xfer *x, const char *op, int index, const char *port)
{
    const double deadline = xfer_now_ms() + x->timeout_ms;
    xfer_ctl_msg_t *req = NULL;
    xfer_status_t st;
    XFER_CHECK_GOTO(channel_req(x, op, index, &req), st, out);
    XFER_CHECK_GOTO(xfer_ctl_set_str(req, "port", port), st, out);
    for (;;) {
        const double left = deadline - xfer_now_ms();
        st = xfer_ctl_request(x->ctl->main, req, left < CTL_ASK_MS ? (int) left + 1 : CTL_ASK_MS,
                              NULL);
        if (st != XFER_ERR_TIMEOUT || xfer_now_ms() >= deadline)
            break;
    }
out:
    xfer_ctl_msg_free(&req);
    return st;
}

xfer_status_t xfer_rt_ctl_publish(struct xfer *x, int index, const char *port)
{
    xfer_status_t st = port_request(x, "publish", index, port);
    if (st == XFER_ERR_TIMEOUT)
        st = xfer_err_raw(st, "channel %s: publishing the port: xferd did not answer within %d ms",
                          x->cfg->channels[index].name, x->timeout_ms);
    else if (st != XFER_SUCCESS)
        st = xfer_err_raw(st, "channel %s: publishing the port with xferd: %s",
                          x->cfg->channels[index].name, xfer_last_error());
    return st;
}

/* A reader offers its port to the channel's sender; asked again like publish. */
xfer_status_t xfer_rt_ctl_attach(struct xfer *x, int index, const char *port)
{
    xfer_status_t st = port_request(x, "attach", index, port);
    if (st != XFER_SUCCESS)
        st = xfer_err_raw(st, "channel %s: offering to attach through xferd at %s: %s",
                          x->cfg->channels[index].name, x->ctl->endpoint, xfer_last_error());
    return st;
}

int xfer_rt_ctl_take_offer(struct xfer *x, int index, char *port, size_t len, int64_t *session)
{
    xfer_rt_ctl_t *c = x->ctl;
    int found = 0;
    if (!c)
        return 0;
    if (xfer_now_ms() - c->main_polled > CTL_SLICE_MS)
        drain_main(c);
    pthread_mutex_lock(&c->lock);
    if (c->offer[index].port) {
        found = strlen(c->offer[index].port) < len;
        if (found) {
            memcpy(port, c->offer[index].port, strlen(c->offer[index].port) + 1);
            *session = c->offer[index].session;
        }
        free(c->offer[index].port);
        c->offer[index].port = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    return found;
}

xfer_status_t xfer_rt_ctl_lookup(struct xfer *x, int index, int bound_ms, char *port, size_t len)
{
    const xfer_cfg_channel_t *ch = &x->cfg->channels[index];
    xfer_ctl_msg_t *req = NULL, *rep = NULL;
    xfer_status_t st;
    const char *p;
    const double deadline = xfer_now_ms() + bound_ms;

    XFER_CHECK_GOTO(channel_req(x, "lookup", index, &req), st, out);
    /* The daemon holds a lookup until the port is published or the lookup's wait passes
     * ("timeout"). Each waits CTL_ASK_MS at most, and is asked again until @p bound_ms: a
     * lookup the daemon lost as it died (it is restarted from its journal) is asked again of
     * the new one. */
    for (;;) {
        const double left = deadline - xfer_now_ms();
        const int wait = left < CTL_ASK_MS ? (int) (left > 0 ? left : 0) : CTL_ASK_MS;
        XFER_CHECK_GOTO(xfer_ctl_set_int(req, "wait_ms", wait), st, out);
        st = xfer_ctl_request(x->ctl->main, req, wait + CTL_TRIP_MS, &rep);
        if (st != XFER_ERR_TIMEOUT || xfer_now_ms() >= deadline)
            break;
        xfer_ctl_msg_free(&rep);
    }
    if (st == XFER_ERR_TIMEOUT)
        st = xfer_err_raw(st,
                          "channel %s: no port published by component %s within %d ms (is it "
                          "running, with the same control endpoint?)",
                          ch->name, x->cfg->components[ch->from].name, bound_ms);
    else if (st != XFER_SUCCESS)
        st = xfer_err_raw(st, "channel %s: looking up the port of component %s: %s", ch->name,
                          x->cfg->components[ch->from].name, xfer_last_error());
    if (st != XFER_SUCCESS)
        goto out;
    p = xfer_ctl_str(rep, "port", NULL);
    if (!p || strlen(p) >= len) {
        st = XFER_ERR(XFER_ERR_PROTOCOL, "channel %s: xferd's lookup reply has no usable port",
                      ch->name);
        goto out;
    }
    memcpy(port, p, strlen(p) + 1);
out:
    xfer_ctl_msg_free(&req);
    xfer_ctl_msg_free(&rep);
    return st;
}

/* Reports for status and throughput: sent without waiting; replies are drained here. */
static void report(struct xfer *x, const char *op, int index, int side, const char *key,
                   uint64_t value, uint64_t bytes)
{
    xfer_ctl_msg_t *req = NULL;
    if (channel_req(x, op, index, &req) == XFER_SUCCESS &&
        xfer_ctl_set_int(req, "side", side) == XFER_SUCCESS &&
        xfer_ctl_set_int(req, key, (int64_t) value) == XFER_SUCCESS &&
        (strcmp(op, "step") != 0 ||
         xfer_ctl_set_int(req, "bytes", (int64_t) bytes) == XFER_SUCCESS))
        (void) xfer_ctl_send(x->ctl->main, req);
    xfer_ctl_msg_free(&req);
    drain_main(x->ctl);
}

void xfer_rt_ctl_step(struct xfer *x, int index, int side, uint64_t step, uint64_t bytes)
{
    if (x->ctl)
        report(x, "step", index, side, "step", step, bytes);
}

void xfer_rt_ctl_ack(struct xfer *x, int index, int side, uint64_t released)
{
    if (x->ctl)
        report(x, "ack", index, side, "released", released, 0);
}

/* A sending side's flow policy: the sender's number of the last step sent (-1: none yet), the
 * steps dropped and skipped so far. On the connection of the step reports, after them. */
void xfer_rt_ctl_flow(struct xfer *x, int index, int side, int64_t app_step, uint64_t dropped,
                      uint64_t skipped)
{
    xfer_ctl_msg_t *req = NULL;
    if (!x->ctl)
        return;
    if (channel_req(x, "flow", index, &req) == XFER_SUCCESS &&
        xfer_ctl_set_int(req, "side", side) == XFER_SUCCESS &&
        xfer_ctl_set_int(req, "app_step", app_step) == XFER_SUCCESS &&
        xfer_ctl_set_int(req, "dropped", (int64_t) dropped) == XFER_SUCCESS &&
        xfer_ctl_set_int(req, "skipped", (int64_t) skipped) == XFER_SUCCESS)
        (void) xfer_ctl_send(x->ctl->main, req);
    xfer_ctl_msg_free(&req);
    drain_main(x->ctl);
}

/* What the notices received so far say of component @p comp (any thread). */
static int verdict(xfer_rt_ctl_t *c, int comp, int64_t since, char *why, size_t len)
{
    int failed = 0;
    if (atomic_load(&c->nfailed) == 0 || comp < 0 || comp >= c->ncomp)
        return 0;
    pthread_mutex_lock(&c->lock);
    if (c->reason[comp] &&
        (since == 0 || c->failed_session[comp] == 0 || c->failed_session[comp] >= since)) {
        failed = 1;
        if (why && len)
            snprintf(why, len, "%s", c->reason[comp]);
    }
    pthread_mutex_unlock(&c->lock);
    return failed;
}

int xfer_rt_ctl_failed(struct xfer *x, int comp, char *why, size_t len)
{
    return xfer_rt_ctl_failed_since(x, comp, 0, why, len);
}

int xfer_rt_ctl_failed_since(struct xfer *x, int comp, int64_t since, char *why, size_t len)
{
    xfer_rt_ctl_t *c = x->ctl;
    if (!c)
        return 0;
    if (xfer_now_ms() - c->main_polled > CTL_SLICE_MS)
        drain_main(c);
    return verdict(c, comp, since, why, len);
}

int xfer_rt_ctl_failed_in_wait(struct xfer *x, int comp, char *why, size_t len)
{
    if (!x->ctl)
        return 0;
    drain_main(x->ctl);
    return verdict(x->ctl, comp, 0, why, len);
}

void xfer_rt_ctl_forget(struct xfer *x, int comp)
{
    xfer_rt_ctl_t *c = x->ctl;
    if (!c || comp < 0 || comp >= c->ncomp)
        return;
    pthread_mutex_lock(&c->lock);
    free(c->reason[comp]);
    c->reason[comp] = NULL;
    pthread_mutex_unlock(&c->lock);
}

int xfer_rt_ctl_lost(struct xfer *x, char *why, size_t len)
{
    xfer_rt_ctl_t *c = x->ctl;
    long long silent;
    if (!c)
        return 0;
    if (atomic_load(&c->shutdown)) {
        snprintf(why, len, "xferd at %s shut down", c->endpoint);
        return 1;
    }
    silent = (long long) xfer_now_ms() - atomic_load(&c->heard);
    if (silent <= x->timeout_ms)
        return 0;
    snprintf(why, len,
             "xferd at %s has not answered for %lld ms (heartbeats every %d ms, bound %d ms)",
             c->endpoint, silent, c->heartbeat_ms, x->timeout_ms);
    return 1;
}

void xfer_rt_ctl_error(struct xfer *x, const char *text)
{
    xfer_ctl_msg_t *req = NULL;
    struct xfer_rt_beat *b = x ? x->beat : NULL;
    xfer_ctl_t *conn = x && x->ctl ? x->ctl->main : b ? b->conn : NULL;
    const int64_t session = x && x->ctl ? x->ctl->session : b ? b->session : 0;
    char msg[1000];

    if (!conn || session < 1 || x->nreported >= XFER_RT_ERRORS_REPORTED)
        return;
    x->nreported++;
    snprintf(msg, sizeof(msg), "%s", text); /* (strings of the protocol: 1024 bytes at most) */
    if (b)
        pthread_mutex_lock(&b->mu);
    /* a request, not a send: its reply proves it arrived before the application may abort */
    if (xfer_ctl_msg_new("error", &req) == XFER_SUCCESS &&
        xfer_ctl_set_int(req, "session", session) == XFER_SUCCESS &&
        xfer_ctl_set_int(req, "rank", b ? b->rank : 0) == XFER_SUCCESS &&
        xfer_ctl_set_str(req, "text", msg) == XFER_SUCCESS)
        (void) xfer_ctl_request(conn, req, XFER_MIN(x->timeout_ms, 1000), NULL);
    if (b)
        pthread_mutex_unlock(&b->mu);
    xfer_ctl_msg_free(&req);
}
