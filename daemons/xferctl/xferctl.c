/* SPDX-License-Identifier: BSD-3-Clause */
/* xferctl: look at and stop a workflow's control daemon, xferd (docs/xferctl.md).
 *
 *   xferctl [--config WF.yaml | --endpoint EP --workflow NAME] [--token-file F] [--run-dir D]
 *           [--timeout MS] status [--json] | watch [--interval MS] [--count N] | stop
 *
 * Exit status: 0 done, 1 the daemon answered with an error, 2 usage or local setup (options,
 * workflow file, token file), 3 no answer within --timeout, 4 refused (wrong token or
 * workflow). Only public libxfer headers are used. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfer/config.h>
#include <xfer/control.h>
#include <xfer/status.h>

#include "common/cli.h"

enum {
    EXIT_OK = 0,
    EXIT_REPLY = 1,    /* the daemon answered with an error */
    EXIT_USAGE = 2,    /* options, workflow file, token file */
    EXIT_NOANSWER = 3, /* no reply within --timeout */
    EXIT_DENIED = 4    /* wrong token or workflow */
};

#define XFER_XALLOC_PROG "xferctl"
#define XFER_XALLOC_EXIT EXIT_REPLY
#include "common/xalloc.h"

#define DEFAULT_TIMEOUT_MS  5000
#define DEFAULT_INTERVAL_MS 1000
#define SLEEP_SLICE_MS      100 /* how soon watch notices Ctrl-C while it waits */

typedef struct opts {
    const char *config, *endpoint, *workflow, *token_file, *run_dir;
    int timeout_ms;
    const char *command;
    int json;
    int interval_ms;
    long count; /* 0: until stopped */
} opts_t;

/* What a connection needs, resolved from the options, the environment and the workflow file. */
typedef struct target {
    char *endpoint;
    char *workflow;
    char *token_file;
    char *server_key; /* NULL: no CURVE */
} target_t;

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void) sig;
    interrupted = 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: xferctl [--config WF.yaml | --endpoint EP --workflow NAME] [--token-file F]\n"
            "               [--run-dir D] [--timeout MS] COMMAND\n"
            "\n"
            "commands:\n"
            "  status [--json]                      the workflow's components, channels, failures\n"
            "  watch [--interval MS] [--count N]    refresh the status every MS ms (default %d)\n"
            "  stop                                 ask xferd to shut down\n"
            "\n"
            "options:\n"
            "  --config FILE      the workflow file: name, control.endpoint, token, CURVE key\n"
            "  --endpoint EP      xferd's endpoint (default: control.endpoint, else\n"
            "                     ipc://RUN_DIR/xferd.sock)\n"
            "  --workflow NAME    workflow name (default: the file's)\n"
            "  --token-file F     token (default: $XFER_CONTROL_TOKEN_FILE, else\n"
            "                     control.token_file, else RUN_DIR/token)\n"
            "  --run-dir D        run directory (default: $XFER_RUN_DIR, else the file's run_dir)\n"
            "  --timeout MS       wait for each reply at most MS ms (default %d)\n"
            "\n"
            "exit status: 0 ok, 1 error reply, 2 usage or setup, 3 no answer, 4 refused\n",
            DEFAULT_INTERVAL_MS, DEFAULT_TIMEOUT_MS);
}

static void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err(const char *fmt, ...)
{
    va_list ap;
    fputs("xferctl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* The global options up to COMMAND (getopt_long stops there: "+"), then COMMAND's own. */
static void parse_args(int argc, char **argv, opts_t *o)
{
    enum {
        O_CONFIG = 256,
        O_ENDPOINT,
        O_WORKFLOW,
        O_TOKEN,
        O_RUNDIR,
        O_TIMEOUT,
        O_VERSION,
        O_JSON,
        O_INTERVAL,
        O_COUNT
    };
    static const struct option global[] = {{"config", required_argument, NULL, O_CONFIG},
                                           {"endpoint", required_argument, NULL, O_ENDPOINT},
                                           {"workflow", required_argument, NULL, O_WORKFLOW},
                                           {"token-file", required_argument, NULL, O_TOKEN},
                                           {"run-dir", required_argument, NULL, O_RUNDIR},
                                           {"timeout", required_argument, NULL, O_TIMEOUT},
                                           {"help", no_argument, NULL, 'h'},
                                           {"version", no_argument, NULL, O_VERSION},
                                           {NULL, 0, NULL, 0}};
    static const struct option status_opts[] = {
        {"json", no_argument, NULL, O_JSON}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    static const struct option watch_opts[] = {{"interval", required_argument, NULL, O_INTERVAL},
                                               {"count", required_argument, NULL, O_COUNT},
                                               {"help", no_argument, NULL, 'h'},
                                               {NULL, 0, NULL, 0}};
    static const struct option stop_opts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const struct option *cmd_opts;
    int c;

    memset(o, 0, sizeof(*o));
    o->timeout_ms = DEFAULT_TIMEOUT_MS;
    o->interval_ms = DEFAULT_INTERVAL_MS;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+" XFER_CLI_OPTS "h", global, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            exit(EXIT_OK);
        case O_VERSION:
            xfer_cli_version("xferctl");
            exit(EXIT_OK);
        case O_CONFIG:
            o->config = optarg;
            break;
        case O_ENDPOINT:
            o->endpoint = optarg;
            break;
        case O_WORKFLOW:
            o->workflow = optarg;
            break;
        case O_TOKEN:
            o->token_file = optarg;
            break;
        case O_RUNDIR:
            o->run_dir = optarg;
            break;
        case O_TIMEOUT:
            o->timeout_ms = (int) xfer_cli_long("xferctl", "--timeout", optarg, 1, 86400000);
            break;
        default:
            xfer_cli_bad_option("xferctl", c, argv);
        }
    }
    if (optind >= argc)
        xfer_cli_usage_error("xferctl", "a command is required: status, watch or stop");
    o->command = argv[optind];
    if (!strcmp(o->command, "status"))
        cmd_opts = status_opts;
    else if (!strcmp(o->command, "watch"))
        cmd_opts = watch_opts;
    else if (!strcmp(o->command, "stop"))
        cmd_opts = stop_opts;
    else
        xfer_cli_usage_error("xferctl", "unknown command \"%s\": expected status, watch or stop",
                             o->command);
    argc -= optind;
    argv += optind;
    optind = 1;
    while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", cmd_opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            exit(EXIT_OK);
        case O_JSON:
            o->json = 1;
            break;
        case O_INTERVAL:
            o->interval_ms = (int) xfer_cli_long("xferctl", "--interval", optarg, 1, 86400000);
            break;
        case O_COUNT:
            o->count = xfer_cli_long("xferctl", "--count", optarg, 1, 1000000000L);
            break;
        default:
            xfer_cli_bad_option("xferctl", c, argv);
        }
    }
    if (optind < argc)
        xfer_cli_usage_error("xferctl", "%s: unexpected argument \"%s\"", o->command, argv[optind]);
}

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* Endpoint, workflow, token file and CURVE key, in the documented order of precedence.
 * Returns an exit status (EXIT_OK when resolved). */
static int resolve(const opts_t *o, target_t *t)
{
    xfer_config_t *cfg = NULL;
    const char *run_dir;
    int rc = EXIT_USAGE;

    memset(t, 0, sizeof(*t));
    if (!o->config && (!o->endpoint || !o->workflow)) {
        err("which workflow? give --config WF.yaml, or --endpoint EP and --workflow NAME");
        return EXIT_USAGE;
    }
    if (o->config && xfer_config_load(o->config, &cfg) != XFER_SUCCESS) {
        err("%s", xfer_last_error());
        return EXIT_USAGE;
    }
    run_dir = o->run_dir ? o->run_dir : env_nonempty("XFER_RUN_DIR");
    if (!run_dir && cfg && cfg->run_dir[0])
        run_dir = cfg->run_dir;

    if (o->endpoint)
        t->endpoint = xstrdup(o->endpoint);
    else if (cfg->control_endpoint[0])
        t->endpoint = xstrdup(cfg->control_endpoint);
    else if (run_dir)
        t->endpoint = xasprintf("ipc://%s/xferd.sock", run_dir);
    else {
        err("%s sets neither control.endpoint nor run_dir: give --endpoint or --run-dir (or set "
            "XFER_RUN_DIR)",
            o->config);
        goto out;
    }
    t->workflow = xstrdup(o->workflow ? o->workflow : cfg->workflow);

    if (o->token_file)
        t->token_file = xstrdup(o->token_file);
    else if (env_nonempty("XFER_CONTROL_TOKEN_FILE"))
        t->token_file = xstrdup(env_nonempty("XFER_CONTROL_TOKEN_FILE"));
    else if (cfg && cfg->token_file[0])
        t->token_file = xstrdup(cfg->token_file);
    else if (run_dir)
        t->token_file = xasprintf("%s/token", run_dir);
    else {
        err("no token file: give --token-file or --run-dir (or set XFER_CONTROL_TOKEN_FILE)");
        goto out;
    }
    if (cfg && cfg->curve_public_key[0])
        t->server_key = xstrdup(cfg->curve_public_key);
    rc = EXIT_OK;
out:
    xfer_config_free(&cfg);
    return rc;
}

static void target_free(target_t *t)
{
    free(t->endpoint);
    free(t->workflow);
    free(t->token_file);
    free(t->server_key);
}

static int connect_target(const target_t *t, xfer_ctl_t **c)
{
    xfer_ctl_opts_t co;
    char *token = NULL;
    xfer_status_t st;

    st = xfer_ctl_read_token(t->token_file, &token);
    if (st != XFER_SUCCESS) {
        err("%s", xfer_last_error());
        return EXIT_USAGE;
    }
    co.endpoint = t->endpoint;
    co.workflow = t->workflow;
    co.token = token;
    co.server_key = t->server_key;
    st = xfer_ctl_connect(&co, c);
    /* the client keeps its own copy; wipe ours */
    memset(token, 0, strlen(token));
    free(token);
    if (st != XFER_SUCCESS) {
        err("%s", xfer_last_error());
        return st == XFER_ERR_CONFIG || st == XFER_ERR_NOT_SUPPORTED ? EXIT_USAGE : EXIT_REPLY;
    }
    return EXIT_OK;
}

/* Send @p op and wait for its reply. */
static xfer_status_t ask(xfer_ctl_t *c, const char *op, int timeout_ms, xfer_ctl_msg_t **reply)
{
    xfer_ctl_msg_t *req = NULL;
    xfer_status_t st;

    *reply = NULL;
    st = xfer_ctl_msg_new(op, &req);
    if (st == XFER_SUCCESS)
        st = xfer_ctl_request(c, req, timeout_ms, reply);
    xfer_ctl_msg_free(&req);
    return st;
}

/* Say why request @p op failed with @p st and return the exit status for it; frees *@p reply. */
static int explain(xfer_status_t st, xfer_ctl_msg_t **reply, const target_t *t, const char *op,
                   int timeout_ms)
{
    int rc = EXIT_REPLY;
    if (st == XFER_ERR_TIMEOUT && !*reply) {
        err("no answer from xferd at %s within %d ms (is the workflow running?)", t->endpoint,
            timeout_ms);
        rc = EXIT_NOANSWER;
    } else if (st == XFER_ERR_DENIED) {
        err("xferd at %s refused \"%s\": %s (check the token file %s and the workflow name "
            "\"%s\")",
            t->endpoint, op, *reply ? xfer_ctl_str(*reply, "msg", "denied") : xfer_last_error(),
            t->token_file, t->workflow);
        rc = EXIT_DENIED;
    } else {
        err("%s", xfer_last_error());
    }
    xfer_ctl_msg_free(reply);
    return rc;
}

/* One request; on failure says why and returns its exit status. */
static int request(xfer_ctl_t *c, const target_t *t, const char *op, int timeout_ms,
                   xfer_ctl_msg_t **reply)
{
    xfer_status_t st = ask(c, op, timeout_ms, reply);
    return st == XFER_SUCCESS ? EXIT_OK : explain(st, reply, t, op, timeout_ms);
}

/* ---- the status table --------------------------------------------------------------------- */

static void fmt_duration(char *buf, size_t cap, int64_t ms)
{
    int64_t s = ms / 1000;
    if (ms < 0)
        snprintf(buf, cap, "-");
    else if (ms < 60000)
        snprintf(buf, cap, "%.1fs", (double) ms / 1e3);
    else if (s < 3600)
        snprintf(buf, cap, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, cap, "%" PRId64 "h%02" PRId64 "m%02" PRId64 "s", s / 3600, s / 60 % 60,
                 s % 60);
    else
        snprintf(buf, cap, "%" PRId64 "d%02" PRId64 "h%02" PRId64 "m", s / 86400, s / 3600 % 24,
                 s / 60 % 60);
}

static void fmt_bytes(char *buf, size_t cap, int64_t b)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double) b;
    int u = -1;
    if (b < 1024) {
        snprintf(buf, cap, "%" PRId64 " B", b);
        return;
    }
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, cap, "%.1f %s", v, unit[u]);
}

static void fmt_int_or_dash(char *buf, size_t cap, int64_t v)
{
    if (v < 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%" PRId64, v);
}

/* A table is built cell by cell and printed with each column as wide as its widest cell. */
#define TAB_MAXCOL 8
#define CELL_MAX   256

typedef struct table {
    int ncol, nrow, cap;
    char (*cell)[CELL_MAX]; /* nrow * ncol, row 0 the header */
    int width[TAB_MAXCOL];
    int right[TAB_MAXCOL]; /* right-aligned (numbers) */
} table_t;

static int tab_init(table_t *tb, int ncol, int rows)
{
    memset(tb, 0, sizeof(*tb));
    tb->ncol = ncol;
    tb->cap = rows + 1;
    tb->cell = calloc((size_t) tb->cap * (size_t) ncol, sizeof(*tb->cell));
    return tb->cell ? 0 : -1;
}

static void tab_set(table_t *tb, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void tab_set(table_t *tb, int col, const char *fmt, ...)
{
    char *cell;
    va_list ap;
    int w;
    if (tb->nrow >= tb->cap)
        return;
    cell = tb->cell[tb->nrow * tb->ncol + col];
    va_start(ap, fmt);
    vsnprintf(cell, CELL_MAX, fmt, ap);
    va_end(ap);
    w = (int) strlen(cell);
    if (w > tb->width[col])
        tb->width[col] = w;
}

static void tab_next(table_t *tb)
{
    if (tb->nrow < tb->cap)
        tb->nrow++;
}

static void tab_print(const table_t *tb, FILE *out)
{
    int r, col;
    for (r = 0; r < tb->nrow; r++) {
        fputs("  ", out);
        for (col = 0; col < tb->ncol; col++) {
            const char *cell = tb->cell[r * tb->ncol + col];
            int last = col == tb->ncol - 1;
            if (tb->right[col])
                fprintf(out, "%*s", tb->width[col], cell);
            else if (last)
                fputs(cell, out);
            else
                fprintf(out, "%-*s", tb->width[col], cell);
            if (!last)
                fputs("  ", out);
        }
        fputc('\n', out);
    }
}

static void tab_free(table_t *tb)
{
    free(tb->cell);
    tb->cell = NULL;
}

static int print_components(const xfer_ctl_msg_t *r, FILE *out)
{
    static const char *const head[] = {"COMPONENT", "NPROCS", "STATE", "PID", "HOST", "LAST SEEN"};
    const int n = xfer_ctl_nitems(r, "components");
    table_t tb;
    int i, col;

    fprintf(out, "\ncomponents (%d)\n", n);
    if (n == 0)
        return 0;
    if (tab_init(&tb, 6, n) != 0)
        return -1;
    tb.right[1] = tb.right[3] = 1;
    for (col = 0; col < 6; col++)
        tab_set(&tb, col, "%s", head[col]);
    tab_next(&tb);
    for (i = 0; i < n; i++) {
        const xfer_ctl_msg_t *it = xfer_ctl_item(r, "components", i);
        const char *host = xfer_ctl_str(it, "host", NULL);
        int64_t seen = xfer_ctl_int(it, "last_seen_ms", -1);
        char buf[64];
        tab_set(&tb, 0, "%s", xfer_ctl_str(it, "name", "?"));
        tab_set(&tb, 1, "%" PRId64, xfer_ctl_int(it, "nprocs", 0));
        tab_set(&tb, 2, "%s", xfer_ctl_str(it, "state", "?"));
        fmt_int_or_dash(buf, sizeof(buf),
                        xfer_ctl_int(it, "pid", -1) > 0 ? xfer_ctl_int(it, "pid", -1) : -1);
        tab_set(&tb, 3, "%s", buf);
        tab_set(&tb, 4, "%s", host && *host ? host : "-");
        if (seen < 0) {
            tab_set(&tb, 5, "never");
        } else {
            fmt_duration(buf, sizeof(buf), seen);
            tab_set(&tb, 5, "%s ago", buf);
        }
        tab_next(&tb);
    }
    tab_print(&tb, out);
    tab_free(&tb);
    return 0;
}

static int print_channels(const xfer_ctl_msg_t *r, FILE *out)
{
    static const char *const head[] = {"CHANNEL",      "FROM -> TO", "PUBLISHED", "LAST STEP 0/1",
                                       "RELEASED 0/1", "BYTES",      "RATE"};
    const int n = xfer_ctl_nitems(r, "channels");
    table_t tb;
    int i, col;

    fprintf(out, "\nchannels (%d)\n", n);
    if (n == 0)
        return 0;
    if (tab_init(&tb, 7, n) != 0)
        return -1;
    tb.right[5] = tb.right[6] = 1;
    for (col = 0; col < 7; col++)
        tab_set(&tb, col, "%s", head[col]);
    tab_next(&tb);
    for (i = 0; i < n; i++) {
        const xfer_ctl_msg_t *it = xfer_ctl_item(r, "channels", i);
        char s0[32], s1[32], bytes[32];
        tab_set(&tb, 0, "%s", xfer_ctl_str(it, "name", "?"));
        tab_set(&tb, 1, "%s -> %s", xfer_ctl_str(it, "from", "?"), xfer_ctl_str(it, "to", "?"));
        tab_set(&tb, 2, "%s", xfer_ctl_bool(it, "published", 0) ? "yes" : "no");
        fmt_int_or_dash(s0, sizeof(s0), xfer_ctl_int(it, "step0", -1));
        fmt_int_or_dash(s1, sizeof(s1), xfer_ctl_int(it, "step1", -1));
        tab_set(&tb, 3, "%s / %s", s0, s1);
        tab_set(&tb, 4, "%" PRId64 " / %" PRId64, xfer_ctl_int(it, "released0", 0),
                xfer_ctl_int(it, "released1", 0));
        fmt_bytes(bytes, sizeof(bytes), xfer_ctl_int(it, "bytes", 0));
        tab_set(&tb, 5, "%s", bytes);
        tab_set(&tb, 6, "%.2f MB/s", xfer_ctl_dbl(it, "rate_bps", 0.0) / 1e6);
        tab_next(&tb);
    }
    tab_print(&tb, out);
    tab_free(&tb);
    return 0;
}

/* The channels whose sending side has a flow policy (the status has its app_stepN), one line
 * each: the last step sent with the sender's own number of it, the steps dropped and skipped,
 * the steps the other side received. Nothing without one. */
static void print_flows(const xfer_ctl_msg_t *r, FILE *out)
{
    static const char *const key[2][4] = {{"app_step0", "dropped0", "skipped0", "received1"},
                                          {"app_step1", "dropped1", "skipped1", "received0"}};
    const int n = xfer_ctl_nitems(r, "channels");
    int i, s, nflow = 0;

    for (i = 0; i < n; i++)
        for (s = 0; s < 2; s++)
            nflow += xfer_ctl_type(xfer_ctl_item(r, "channels", i), key[s][0]) == XFER_CTL_INT;
    if (nflow == 0)
        return;
    fprintf(out, "\nflow policies (%d)\n", nflow);
    for (i = 0; i < n; i++) {
        const xfer_ctl_msg_t *it = xfer_ctl_item(r, "channels", i);
        for (s = 0; s < 2; s++) {
            const char *sender = xfer_ctl_str(it, s == 0 ? "from" : "to", "?");
            const char *receiver = xfer_ctl_str(it, s == 0 ? "to" : "from", "?");
            const int64_t wire = xfer_ctl_int(it, s == 0 ? "step0" : "step1", -1);
            const int64_t app = xfer_ctl_int(it, key[s][0], -1);
            char sent[96];
            if (xfer_ctl_type(it, key[s][0]) != XFER_CTL_INT)
                continue;
            if (wire < 0 || app < 0)
                snprintf(sent, sizeof(sent), "no step sent");
            else
                snprintf(sent, sizeof(sent), "step %" PRId64 " (sender's %" PRId64 ")", wire, app);
            fprintf(out,
                    "  %s  %s: %s, %" PRId64 " dropped, %" PRId64 " skipped; %s: %" PRId64
                    " received\n",
                    xfer_ctl_str(it, "name", "?"), sender, sent, xfer_ctl_int(it, key[s][1], 0),
                    xfer_ctl_int(it, key[s][2], 0), receiver, xfer_ctl_int(it, key[s][3], 0));
        }
    }
}

static void print_failures(const xfer_ctl_msg_t *r, FILE *out)
{
    const int n = xfer_ctl_nitems(r, "failures");
    int i;

    if (n == 0) {
        fprintf(out, "\nfailures: none\n");
        return;
    }
    fprintf(out, "\nfailures (%d)\n", n);
    for (i = 0; i < n; i++) {
        const xfer_ctl_msg_t *it = xfer_ctl_item(r, "failures", i);
        char at[64];
        fmt_duration(at, sizeof(at), xfer_ctl_int(it, "at_ms", -1));
        fprintf(out, "  %s at %s: %s\n", xfer_ctl_str(it, "component", "?"), at,
                xfer_ctl_str(it, "reason", "(no reason given)"));
    }
}

static int print_status(const xfer_ctl_msg_t *r, FILE *out)
{
    char up[64];
    fmt_duration(up, sizeof(up), xfer_ctl_int(r, "uptime_ms", -1));
    fprintf(out, "workflow %s   uptime %s   recovered %s   protocol %" PRId64 "\n",
            xfer_ctl_str(r, "workflow", "?"), up,
            xfer_ctl_bool(r, "recovered", 0) ? "yes (journal replayed)" : "no",
            xfer_ctl_int(r, "protocol", 0));
    if (print_components(r, out) != 0 || print_channels(r, out) != 0) {
        err("out of memory");
        return EXIT_REPLY;
    }
    print_flows(r, out);
    print_failures(r, out);
    fflush(out);
    return EXIT_OK;
}

/* ---- commands ----------------------------------------------------------------------------- */

static int cmd_status(xfer_ctl_t *c, const target_t *t, const opts_t *o)
{
    xfer_ctl_msg_t *reply = NULL;
    int rc = request(c, t, "status", o->timeout_ms, &reply);
    if (rc != EXIT_OK)
        return rc;
    if (o->json) {
        char *js = xfer_ctl_to_json(reply);
        if (!js) {
            err("out of memory");
            rc = EXIT_REPLY;
        } else {
            printf("%s\n", js);
            free(js);
        }
    } else {
        rc = print_status(reply, stdout);
    }
    xfer_ctl_msg_free(&reply);
    return rc;
}

/* Notices the daemon sent unasked, waiting up to @p timeout_ms for the first: 1 when one
 * announces its shutdown. */
static int shutdown_noticed(xfer_ctl_t *c, int timeout_ms)
{
    xfer_ctl_msg_t *n = NULL;
    int down = 0;
    while (xfer_ctl_recv(c, timeout_ms, &n) == XFER_SUCCESS && n) {
        if (!strcmp(xfer_ctl_op(n), "shutdown")) {
            printf("xferd is shutting down: %s\n", xfer_ctl_str(n, "reason", "(no reason given)"));
            down = 1;
        }
        xfer_ctl_msg_free(&n);
        timeout_ms = 0;
    }
    xfer_clear_error();
    return down;
}

static int cmd_watch(xfer_ctl_t *c, const target_t *t, const opts_t *o)
{
    const int tty = isatty(STDOUT_FILENO);
    struct sigaction sa;
    long shown = 0;
    int rc = EXIT_OK;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigint; /* no SA_RESTART: waits end early */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);

    while (!interrupted) {
        xfer_ctl_msg_t *reply = NULL;
        xfer_status_t st = ask(c, "status", o->timeout_ms, &reply);
        int waited;

        if (interrupted) {
            xfer_ctl_msg_free(&reply);
            break;
        }
        if (st == XFER_ERR_TIMEOUT && !reply && shown > 0) {
            if (!shutdown_noticed(c, 0))
                printf("xferd at %s stopped answering (no reply within %d ms): the workflow has "
                       "ended\n",
                       t->endpoint, o->timeout_ms);
            return EXIT_OK;
        }
        if (st != XFER_SUCCESS)
            return explain(st, &reply, t, "status", o->timeout_ms);
        if (tty)
            fputs("\033[H\033[2J", stdout);
        else if (shown > 0)
            fputs("\n--------------------------------------------------------------------------"
                  "------\n\n",
                  stdout);
        rc = print_status(reply, stdout);
        xfer_ctl_msg_free(&reply);
        if (rc != EXIT_OK)
            return rc;
        shown++;
        if (shutdown_noticed(c, 0))
            return EXIT_OK;
        if (o->count && shown >= o->count)
            return EXIT_OK;
        /* sleep in slices: Ctrl-C and a shutdown notice end the wait */
        for (waited = 0; waited < o->interval_ms && !interrupted; waited += SLEEP_SLICE_MS) {
            int left = o->interval_ms - waited;
            if (shutdown_noticed(c, left < SLEEP_SLICE_MS ? left : SLEEP_SLICE_MS))
                return EXIT_OK;
        }
    }
    return EXIT_OK;
}

static int cmd_stop(xfer_ctl_t *c, const target_t *t, const opts_t *o)
{
    xfer_ctl_msg_t *reply = NULL;
    int rc = request(c, t, "stop", o->timeout_ms, &reply);
    xfer_ctl_msg_free(&reply);
    if (rc == EXIT_OK)
        printf("xferd stopped\n");
    return rc;
}

int main(int argc, char **argv)
{
    opts_t o;
    target_t t;
    xfer_ctl_t *c = NULL;
    int rc;

    parse_args(argc, argv, &o);
    rc = resolve(&o, &t);
    if (rc != EXIT_OK)
        goto out;
    rc = connect_target(&t, &c);
    if (rc != EXIT_OK)
        goto out;
    if (!strcmp(o.command, "status"))
        rc = cmd_status(c, &t, &o);
    else if (!strcmp(o.command, "watch"))
        rc = cmd_watch(c, &t, &o);
    else
        rc = cmd_stop(c, &t, &o);
out:
    xfer_ctl_close(&c);
    target_free(&t);
    return rc;
}
