/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd: the control-plane daemon of one workflow (docs/control-protocol.md).
 *
 *   xferd --config WORKFLOW.yaml [--endpoint EP] [--run-dir DIR] [--journal FILE]
 *         [--token-file FILE] [--allow-remote] [--log FILE] [--quiet] [--ready-file FILE]
 *
 * One ROUTER socket, one thread: zmq_poll waits on the socket and a signalfd (SIGTERM, SIGINT)
 * with a timeout of the next liveness check or lookup deadline. Every message is decoded,
 * checked (version, workflow and token, schema) and carried out by ops.c; no client input
 * ends or crashes the daemon. Exit status: 0 after stop or a signal, 2 for a bad command line
 * or configuration, 1 when serving fails. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "common/cli.h"
#include "common/logline.h"
#include "xferd.h"

typedef struct opts {
    const char *config, *endpoint, *run_dir, *journal, *token_file, *log, *ready;
    int allow_remote, quiet;
} opts_t;

/* ---- logging ------------------------------------------------------------------------------ */

/* One write per line (common/logline.h): xferd's stderr is usually xfer-run's, shared with
 * xfer-run and the components, and a line written in pieces could be cut by theirs. */
static void vlog_line(xferd_t *d, const char *tag, const char *fmt, va_list ap)
{
    xfer_log_vline(fileno(d->log ? d->log : stderr), "xferd: ", tag, fmt, ap);
}

void xferd_log(xferd_t *d, int level, const char *fmt, ...)
{
    va_list ap;

    if (level == XFERD_INFO && d->quiet)
        return;
    va_start(ap, fmt);
    vlog_line(d,
              level == XFERD_ERROR  ? "error: "
              : level == XFERD_WARN ? "warning: "
                                    : "",
              fmt, ap);
    va_end(ap);
}

void xferd_log_refused(xferd_t *d, const char *fmt, ...)
{
    int64_t sec = xferd_now_ms() / 1000;
    va_list ap;

    if (sec != d->rl_sec) {
        if (d->rl_dropped)
            xferd_log(d, XFERD_WARN, "%ld more refused messages not logged", d->rl_dropped);
        d->rl_sec = sec;
        d->rl_lines = 0;
        d->rl_dropped = 0;
    }
    if (d->rl_lines >= 20) {
        d->rl_dropped++;
        return;
    }
    d->rl_lines++;
    va_start(ap, fmt);
    vlog_line(d, "warning: ", fmt, ap);
    va_end(ap);
}

const char *xferd_peer_hex(const xferd_peer_t *p, char *buf, size_t cap)
{
    size_t o = 0, n = p->len < 8 ? p->len : 8;

    buf[0] = '\0';
    for (size_t i = 0; i < n && o + 3 < cap; i++)
        o += (size_t) snprintf(buf + o, cap - o, "%02x", p->id[i]);
    if (p->len > n && o + 4 < cap)
        snprintf(buf + o, cap - o, "...");
    if (p->len == 0)
        snprintf(buf, cap, "-");
    return buf;
}

int64_t xferd_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* xfer_last_error() without its "function: STATUS: " prefix: the part a client can use. */
static const char *err_detail(void)
{
    const char *e = xfer_last_error(), *p = strstr(e, ": XFER_");

    if (p && (p = strstr(p + 2, ": ")) != NULL)
        return p + 2;
    return e;
}

void xferd_res_err(xferd_res_t *res, const char *err, const char *fmt, ...)
{
    va_list ap;

    res->err = err;
    va_start(ap, fmt);
    vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
    va_end(ap);
}

/* ---- sending ------------------------------------------------------------------------------ */

static void send_raw(xferd_t *d, const xferd_peer_t *peer, const void *buf, size_t len,
                     const char *what)
{
    char hex[40];

    if (peer->len == 0)
        return;
    if (zmq_send(d->sock, peer->id, peer->len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
        zmq_send(d->sock, buf, len, ZMQ_DONTWAIT) < 0)
        xferd_log_refused(d, "peer %s: %s not delivered: %s",
                          xferd_peer_hex(peer, hex, sizeof(hex)), what,
                          errno == EHOSTUNREACH ? "the peer is gone" : zmq_strerror(errno));
}

void xferd_send(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *m)
{
    void *buf;
    size_t len;

    if (xfer_ctl_encode(m, XFER_CTL_MAX_MSG, &buf, &len) != XFER_SUCCESS) {
        xferd_log(d, XFERD_ERROR, "cannot encode a \"%s\" notice: %s", xfer_ctl_op(m),
                  xfer_last_error());
        return;
    }
    send_raw(d, peer, buf, len, xfer_ctl_op(m));
    free(buf);
}

void xferd_reply(xferd_t *d, const xferd_peer_t *peer, int64_t id, const xferd_res_t *res,
                 xfer_ctl_msg_t *reply)
{
    xfer_ctl_msg_t *own = NULL, *r = reply;
    xfer_status_t st;
    void *buf = NULL;
    size_t len = 0;

    if (!r && xfer_ctl_msg_new("reply", &own) != XFER_SUCCESS)
        return;
    if (!r)
        r = own;
    st = xfer_ctl_set_int(r, "id", id);
    if (st == XFER_SUCCESS)
        st = xfer_ctl_set_bool(r, "ok", res->err == NULL);
    if (st == XFER_SUCCESS && res->err && (st = xfer_ctl_set_str(r, "err", res->err)) == 0)
        st = xfer_ctl_set_str(r, "msg", res->msg);
    if (st == XFER_SUCCESS)
        st = xfer_ctl_encode(r, XFER_CTL_MAX_REPLY, &buf, &len);
    xfer_ctl_msg_free(&own);
    if (st != XFER_SUCCESS) {
        /* a status too large for one reply, or no memory: say so in a small reply */
        xferd_res_t fallback;
        xferd_log(d, XFERD_ERROR, "cannot encode a reply: %s", xfer_last_error());
        if (res->err && strcmp(res->err, "internal") == 0)
            return;
        memset(&fallback, 0, sizeof(fallback));
        xferd_res_err(&fallback, "internal", "the reply cannot be encoded: %s", err_detail());
        xferd_reply(d, peer, id, &fallback, NULL);
        return;
    }
    send_raw(d, peer, buf, len, "reply");
    free(buf);
}

/* ---- receiving ---------------------------------------------------------------------------- */

/* Constant-time in the expected token: how far a guess matches is not observable. */
static int token_equal(const char *expected, const char *given)
{
    size_t le = strlen(expected), lg = strlen(given);
    unsigned char diff = le != lg;

    for (size_t i = 0; i < le; i++)
        diff |= (unsigned char) expected[i] ^ (unsigned char) (i < lg ? given[i] : 0);
    return diff == 0;
}

static int64_t request_id(const xfer_ctl_msg_t *m)
{
    int64_t id = xfer_ctl_int(m, "id", 0);
    return id >= 1 ? id : 0;
}

static void refuse(xferd_t *d, const xferd_peer_t *peer, int64_t id, const char *what,
                   const xferd_res_t *res)
{
    char hex[40];

    xferd_reply(d, peer, id, res, NULL);
    xferd_log_refused(d, "peer %s: %s refused: %s: %s", xferd_peer_hex(peer, hex, sizeof(hex)),
                      what, res->err, res->msg);
}

static void on_message(xferd_t *d, const xferd_peer_t *peer, const void *buf, size_t len,
                       int frames)
{
    xfer_ctl_msg_t *m = NULL;
    xferd_res_t res;
    const char *wf, *tok;
    int64_t id;
    char op[80];

    memset(&res, 0, sizeof(res));
    if (frames != 1) {
        xferd_res_err(&res, "protocol", "a message is one frame, this one has %d", frames);
        refuse(d, peer, 0, "message", &res);
        return;
    }
    if (xfer_ctl_decode(buf, len, XFER_CTL_MAX_MSG, &m) != XFER_SUCCESS) {
        /* decoded but of another version: m is handed over to answer its id */
        xferd_res_err(&res, m ? "version" : "protocol", "%s", err_detail());
        refuse(d, peer, m ? request_id(m) : 0, "message", &res);
        xfer_ctl_msg_free(&m);
        return;
    }
    id = request_id(m);
    snprintf(op, sizeof(op), "%s", xfer_ctl_op(m));
    for (char *p = op; *p; p++)
        if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7f)
            *p = '?';
    wf = xfer_ctl_str(m, "wf", NULL);
    tok = xfer_ctl_str(m, "tok", NULL);
    if (!wf || strcmp(wf, d->cfg->workflow) != 0)
        xferd_res_err(&res, "denied", "%s: not a request of workflow %s",
                      wf ? "wrong workflow" : "no workflow", d->cfg->workflow);
    else if (!tok || !token_equal(d->token, tok))
        xferd_res_err(&res, "denied", "%s", tok ? "wrong token" : "no token");
    else if (xfer_ctl_validate(m) != XFER_SUCCESS)
        xferd_res_err(&res, "protocol", "%s", err_detail());
    if (res.err)
        refuse(d, peer, id, op, &res);
    else
        xferd_request(d, peer, m);
    xfer_ctl_msg_free(&m);
}

/* Receive what is queued (a bounded batch, so that deadlines are not starved). */
static void drain(xferd_t *d)
{
    for (int n = 0; n < 1000 && !d->stopping; n++) {
        zmq_msg_t id, body;
        xferd_peer_t peer;
        int frames = 1, more;

        zmq_msg_init(&id);
        if (zmq_msg_recv(&id, d->sock, ZMQ_DONTWAIT) < 0) {
            if (errno != EAGAIN && errno != EINTR)
                xferd_log(d, XFERD_ERROR, "receive: %s", zmq_strerror(errno));
            zmq_msg_close(&id);
            return;
        }
        if (!zmq_msg_more(&id)) { /* a ROUTER always delivers the routing id first */
            zmq_msg_close(&id);
            continue;
        }
        peer.len = zmq_msg_size(&id) < XFERD_MAX_IDENT ? zmq_msg_size(&id) : XFERD_MAX_IDENT;
        memcpy(peer.id, zmq_msg_data(&id), peer.len);
        zmq_msg_close(&id);
        zmq_msg_init(&body);
        /* the frames of one message arrive together */
        if (zmq_msg_recv(&body, d->sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&body);
            continue;
        }
        more = zmq_msg_more(&body);
        while (more) {
            zmq_msg_t extra;
            zmq_msg_init(&extra);
            if (zmq_msg_recv(&extra, d->sock, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close(&extra);
                break;
            }
            more = zmq_msg_more(&extra);
            zmq_msg_close(&extra);
            frames++;
        }
        on_message(d, &peer, zmq_msg_data(&body), zmq_msg_size(&body), frames);
        zmq_msg_close(&body);
    }
}

/* ---- start-up ----------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xferd --config WORKFLOW.yaml [--endpoint EP] [--run-dir DIR] "
            "[--journal FILE]\n"
            "             [--token-file FILE] [--allow-remote] [--log FILE] [--quiet] "
            "[--ready-file FILE]\n"
            "       xferd -h|--help | --version\n"
            "The control daemon of a workflow (docs/control-protocol.md); xfer-run starts it.\n");
}

static int parse_opts(int argc, char **argv, opts_t *o)
{
    static const struct option longs[] = {
        {"config", required_argument, NULL, 'c'},     {"endpoint", required_argument, NULL, 'e'},
        {"run-dir", required_argument, NULL, 'r'},    {"journal", required_argument, NULL, 'j'},
        {"token-file", required_argument, NULL, 't'}, {"allow-remote", no_argument, NULL, 'a'},
        {"log", required_argument, NULL, 'l'},        {"quiet", no_argument, NULL, 'q'},
        {"ready-file", required_argument, NULL, 'R'}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},          {NULL, 0, NULL, 0}};
    int c;

    memset(o, 0, sizeof(*o));
    opterr = 0;
    while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longs, NULL)) != -1) {
        switch (c) {
        case 'c':
            o->config = optarg;
            break;
        case 'e':
            o->endpoint = optarg;
            break;
        case 'r':
            o->run_dir = optarg;
            break;
        case 'j':
            o->journal = optarg;
            break;
        case 't':
            o->token_file = optarg;
            break;
        case 'a':
            o->allow_remote = 1;
            break;
        case 'l':
            o->log = optarg;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'R':
            o->ready = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case 'V':
            xfer_cli_version("xferd");
            exit(0);
        default:
            xfer_cli_bad_option("xferd", c, argv);
        }
    }
    if (optind < argc)
        xfer_cli_usage_error("xferd", "unexpected argument \"%s\"", argv[optind]);
    if (!o->config)
        xfer_cli_usage_error("xferd", "--config is required");
    return 0;
}

/* mkdir -p with mode 0700 for what it creates. */
static int make_dirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);

    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        buf[i] = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return -1;
        buf[i] = i < n ? '/' : '\0';
    }
    return 0;
}

/* The endpoint to bind: ipc:// or loopback tcp:// unless remote ones are allowed; "localhost"
 * becomes 127.0.0.1 (ZeroMQ binds addresses, not names) and port 0 an ephemeral port. */
static int bind_endpoint(const char *ep, int allow_remote, char *out, size_t cap, char *why,
                         size_t wcap)
{
    if (strncmp(ep, "ipc://", 6) == 0) {
        if (ep[6] == '\0') {
            snprintf(why, wcap, "endpoint \"%s\" has no path", ep);
            return -1;
        }
        snprintf(out, cap, "%s", ep);
        return 0;
    }
    if (strncmp(ep, "tcp://", 6) == 0) {
        const char *host = ep + 6, *colon = strrchr(host, ':');
        const char *port = colon ? colon + 1 : "";
        int hl = colon ? (int) (colon - host) : 0;
        if (!colon || hl == 0 || *port == '\0') {
            snprintf(why, wcap, "endpoint \"%s\": expected tcp://HOST:PORT", ep);
            return -1;
        }
        if (strcmp(port, "0") == 0)
            port = "*";
        if (hl == 9 && strncmp(host, "localhost", 9) == 0) {
            host = "127.0.0.1";
            hl = 9;
        }
        if (!(hl == 9 && strncmp(host, "127.0.0.1", 9) == 0) && !allow_remote) {
            snprintf(why, wcap,
                     "refusing to bind \"%s\": not a loopback address (use --allow-remote)", ep);
            return -1;
        }
        snprintf(out, cap, "tcp://%.*s:%s", hl, host, port);
        return 0;
    }
    if (!allow_remote) {
        snprintf(why, wcap,
                 "refusing to bind \"%s\": only ipc:// and tcp://127.0.0.1 endpoints are served "
                 "(use --allow-remote)",
                 ep);
        return -1;
    }
    snprintf(out, cap, "%s", ep);
    return 0;
}

static int write_ready(const char *path, const char *endpoint)
{
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    FILE *f;
    int ok;

    if (!tmp)
        return -1;
    snprintf(tmp, n, "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f) {
        free(tmp);
        return -1;
    }
    ok = fprintf(f, "%s\n", endpoint) > 0;
    ok = (fclose(f) == 0) && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok)
        unlink(tmp);
    free(tmp);
    return ok ? 0 : -1;
}

static int set_curve(xferd_t *d, const char *file)
{
    char *key = NULL;
    int one = 1, rc = -1;

    if (!zmq_has("curve")) {
        xferd_log(d, XFERD_ERROR,
                  "control.curve_secret_key_file is set but this libzmq has no CURVE support");
        return -1;
    }
    if (xfer_ctl_read_token(file, &key) != XFER_SUCCESS) {
        xferd_log(d, XFERD_ERROR, "CURVE secret key: %s", err_detail());
        return -1;
    }
    if (strlen(key) != 40)
        xferd_log(d, XFERD_ERROR, "CURVE secret key %s: expected 40 Z85 characters, got %zu", file,
                  strlen(key));
    else if (zmq_setsockopt(d->sock, ZMQ_CURVE_SERVER, &one, sizeof(one)) != 0 ||
             zmq_setsockopt(d->sock, ZMQ_CURVE_SECRETKEY, key, 40) != 0)
        xferd_log(d, XFERD_ERROR, "CURVE secret key %s: %s", file, zmq_strerror(errno));
    else
        rc = 0;
    memset(key, 0, strlen(key));
    free(key);
    return rc;
}

static int open_socket(xferd_t *d, void *ctx, const char *ep, const char *curve_file, char *actual,
                       size_t cap)
{
    int64_t maxmsg = XFER_CTL_MAX_MSG;
    int one = 1, zero = 0;
    size_t len = cap;

    d->sock = zmq_socket(ctx, ZMQ_ROUTER);
    if (!d->sock) {
        xferd_log(d, XFERD_ERROR, "zmq_socket: %s", zmq_strerror(errno));
        return -1;
    }
    if (zmq_setsockopt(d->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) != 0 ||
        zmq_setsockopt(d->sock, ZMQ_ROUTER_MANDATORY, &one, sizeof(one)) != 0 ||
        zmq_setsockopt(d->sock, ZMQ_LINGER, &zero, sizeof(zero)) != 0) {
        xferd_log(d, XFERD_ERROR, "zmq_setsockopt: %s", zmq_strerror(errno));
        return -1;
    }
    if (curve_file && *curve_file && set_curve(d, curve_file) != 0)
        return -1;
    if (zmq_bind(d->sock, ep) != 0) {
        xferd_log(d, XFERD_ERROR, "cannot bind %s: %s", ep, zmq_strerror(errno));
        return -1;
    }
    if (zmq_getsockopt(d->sock, ZMQ_LAST_ENDPOINT, actual, &len) != 0) {
        xferd_log(d, XFERD_ERROR, "ZMQ_LAST_ENDPOINT: %s", zmq_strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- main --------------------------------------------------------------------------------- */

static int serve(xferd_t *d, int sfd)
{
    zmq_pollitem_t items[2] = {{d->sock, 0, ZMQ_POLLIN, 0}, {NULL, sfd, ZMQ_POLLIN, 0}};
    int64_t next = xferd_tick(d);

    while (!d->stopping) {
        int64_t now = xferd_now_ms();
        long timeout = next > now ? (long) (next - now) : 0;

        if (zmq_poll(items, 2, timeout) < 0) {
            if (errno == EINTR)
                continue;
            xferd_log(d, XFERD_ERROR, "zmq_poll: %s", zmq_strerror(errno));
            return 1;
        }
        if (items[1].revents & ZMQ_POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
                d->stopping = 1;
                snprintf(d->stop_reason, sizeof(d->stop_reason), "signal %s",
                         si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
            }
        }
        if (items[0].revents & ZMQ_POLLIN)
            drain(d);
        /* cheap: also picks up the deadlines of lookups that came in just now */
        next = xferd_tick(d);
        xferd_journal_maintain(d);
    }
    return 0;
}

int main(int argc, char **argv)
{
    xferd_t d;
    opts_t o;
    xfer_config_t *cfg = NULL;
    sigset_t mask;
    void *ctx = NULL;
    const char *token_file, *run_env;
    char run_dir[4096], ep_default[4200], bind_ep[4200], actual[4200], why[4400];
    char journal[4200];
    const char *ep;
    int sfd = -1, rc = 2, linger;

    memset(&d, 0, sizeof(d));
    d.log = stderr;
    /* signals become readable on a descriptor: nothing runs in a handler */
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0 ||
        (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
        xfer_log_line(2, "xferd: ", "", "signalfd: %s", strerror(errno));
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    if (parse_opts(argc, argv, &o) != 0)
        return 2;
    d.quiet = o.quiet;
    if (o.log) {
        int fd = open(o.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0 || !(d.log = fdopen(fd, "a"))) {
            xfer_log_line(2, "xferd: ", "", "cannot open log %s: %s", o.log, strerror(errno));
            return 2;
        }
    }
    if (o.ready)
        unlink(o.ready); /* a stale one must not announce this daemon */

    if (xfer_config_load(o.config, &cfg) != XFER_SUCCESS) {
        xferd_log(&d, XFERD_ERROR, "%s", xfer_last_error());
        goto out;
    }
    d.hb_ms = cfg->heartbeat_ms;
    d.hb_timeout_ms =
        cfg->heartbeat_timeout_ms > 0 ? cfg->heartbeat_timeout_ms : 4 * cfg->heartbeat_ms;

    run_env = getenv("XFER_RUN_DIR");
    if (o.run_dir)
        snprintf(run_dir, sizeof(run_dir), "%s", o.run_dir);
    else if (run_env && *run_env)
        snprintf(run_dir, sizeof(run_dir), "%s", run_env);
    else if (cfg->run_dir && *cfg->run_dir)
        snprintf(run_dir, sizeof(run_dir), "%s", cfg->run_dir);
    else
        snprintf(run_dir, sizeof(run_dir), "./xfer-run.%s", cfg->workflow);
    if (make_dirs(run_dir) != 0) {
        xferd_log(&d, XFERD_ERROR, "cannot create the run directory %s: %s", run_dir,
                  strerror(errno));
        goto out;
    }

    token_file = o.token_file;
    if (!token_file && getenv("XFER_CONTROL_TOKEN_FILE") && *getenv("XFER_CONTROL_TOKEN_FILE"))
        token_file = getenv("XFER_CONTROL_TOKEN_FILE");
    if (!token_file && cfg->token_file && *cfg->token_file)
        token_file = cfg->token_file;
    if (!token_file) {
        xferd_log(&d, XFERD_ERROR,
                  "no workflow token: pass --token-file, set XFER_CONTROL_TOKEN_FILE or "
                  "control.token_file in %s",
                  o.config);
        goto out;
    }
    if (xfer_ctl_read_token(token_file, &d.token) != XFER_SUCCESS) {
        xferd_log(&d, XFERD_ERROR, "workflow token: %s", err_detail());
        goto out;
    }

    snprintf(ep_default, sizeof(ep_default), "ipc://%s/xferd.sock", run_dir);
    ep = o.endpoint                                          ? o.endpoint
         : (cfg->control_endpoint && *cfg->control_endpoint) ? cfg->control_endpoint
                                                             : ep_default;
    if (bind_endpoint(ep, o.allow_remote, bind_ep, sizeof(bind_ep), why, sizeof(why)) != 0) {
        xferd_log(&d, XFERD_ERROR, "%s", why);
        goto out;
    }

    if (xferd_state_init(&d, cfg) != XFER_SUCCESS) {
        xferd_log(&d, XFERD_ERROR, "cannot set up the registry (out of memory)");
        goto out;
    }
    snprintf(journal, sizeof(journal), "%s", o.journal ? o.journal : "");
    if (!o.journal)
        snprintf(journal, sizeof(journal), "%s/xferd.journal", run_dir);
    if (xferd_journal_open(&d, journal) != XFER_SUCCESS)
        goto out;

    rc = 1;
    ctx = zmq_ctx_new();
    if (!ctx) {
        xferd_log(&d, XFERD_ERROR, "zmq_ctx_new: %s", zmq_strerror(errno));
        goto out;
    }
    if (open_socket(&d, ctx, bind_ep, cfg->curve_secret_key_file, actual, sizeof(actual)) != 0) {
        rc = 2;
        goto out;
    }
    /* said before the ready file appears: whoever waits for that file finds the line */
    xferd_log(&d, XFERD_INFO,
              "serving workflow %s on %s (%d components, %d channels, heartbeat %d ms, timeout "
              "%d ms%s%s)",
              cfg->workflow, actual, d.ncomp, d.nchan, d.hb_ms, d.hb_timeout_ms,
              d.recovered ? ", recovered" : "",
              cfg->curve_secret_key_file && *cfg->curve_secret_key_file ? ", CURVE" : "");
    if (o.ready && write_ready(o.ready, actual) != 0) {
        xferd_log(&d, XFERD_ERROR, "cannot write the ready file %s: %s", o.ready, strerror(errno));
        goto out;
    }

    rc = serve(&d, sfd);
    if (d.stopping) {
        xferd_log(&d, XFERD_INFO, "stopping: %s", d.stop_reason);
        xferd_shutdown_notices(&d, d.stop_reason);
    }

out:
    xferd_journal_close(&d);
    if (d.sock) {
        /* give the last replies and shutdown notices a moment to leave */
        linger = d.stopping ? 1000 : 0;
        zmq_setsockopt(d.sock, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_close(d.sock);
    }
    if (ctx)
        zmq_ctx_term(ctx);
    if (o.ready && rc == 0)
        unlink(o.ready);
    xferd_state_free(&d);
    if (d.token) {
        memset(d.token, 0, strlen(d.token));
        free(d.token);
    }
    xfer_config_free(&cfg);
    if (sfd >= 0)
        close(sfd);
    if (d.log && d.log != stderr)
        fclose(d.log);
    return rc;
}
