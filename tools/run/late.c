/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: components that start later or come back (docs/launcher.md, "Late and returning
 * components"). --without C launches the workflow without C and tells the others
 * (XFER_ABSENT); --attach C starts C alone into a running workflow, with what that run's
 * xfer-run wrote in RUN_DIR/RUN_ENV_FILE: the environment every component of it gets. Only a
 * component that only reads can be absent: on channels whose sender goes on without it
 * (on_reader_loss: continue or spill), or whose step files wait for it (transport: file with
 * keep: true). */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

int channel_file(const plan_t *pl, int k)
{
    return pl->transport ? strcmp(pl->transport, "file") == 0
                         : pl->cfg->channels[k].transport == XFER_TRANSPORT_FILE;
}

static int find_component(const xfer_config_t *cfg, const char *name, const char *opt)
{
    char list[512];
    size_t o = 0;
    int c;
    for (c = 0; c < cfg->ncomponents; c++)
        if (strcmp(cfg->components[c].name, name) == 0)
            return c;
    list[0] = '\0';
    for (c = 0; c < cfg->ncomponents && o < sizeof(list); c++)
        o += (size_t) snprintf(list + o, sizeof(list) - o, "%s%s", c ? ", " : "",
                               cfg->components[c].name);
    run_error("%s %s: workflow %s has no component %s (its components: %s)", opt, name,
              cfg->workflow, name, list);
    return -1;
}

/* Can component @p c be absent while the others run: does it only read, on channels whose
 * senders do not need it (@p sends_only: does it only read)? -1 (said, naming the channel and
 * the fix) when not. */
static int may_be_absent(const plan_t *pl, int c, const char *opt, int sends_only)
{
    const xfer_config_t *cfg = pl->cfg;
    const char *name = cfg->components[c].name;
    int k;

    for (k = 0; k < cfg->nchannels; k++) {
        const xfer_cfg_channel_t *ch = &cfg->channels[k];
        if (ch->from == c || (ch->to == c && ch->duplex != XFER_DUPLEX_HALF)) {
            run_error("%s %s: component %s sends on channel %s (to %s): a sender cannot be "
                      "absent, its readers wait for its steps; only a component that only reads "
                      "can start later or come back",
                      opt, name, name, ch->name,
                      cfg->components[ch->from == c ? ch->to : ch->from].name);
            return -1;
        }
        if (sends_only || ch->to != c || loss_detachable(cfg, k) ||
            (channel_file(pl, k) && ch->file.keep))
            continue; /* its sender goes on without it, or its kept step files wait for it */
        run_error("%s %s: channel %s (%s -> %s) has on_reader_loss: fail: its sender fails "
                  "without its reader; set on_reader_loss: continue or spill on it (or "
                  "XFER_ON_READER_LOSS), or keep its step files for a later reader (transport: "
                  "file with file: {keep: true})",
                  opt, name, ch->name, cfg->components[ch->from].name, name);
        return -1;
    }
    return 0;
}

int plan_late(plan_t *pl, const opts_t *o)
{
    const xfer_config_t *cfg = pl->cfg;
    size_t len = 0;
    int i, c, left;

    pl->attach = -1;
    pl->absent = xchecked(calloc((size_t) cfg->ncomponents, 1));
    if (o->attach) {
        if (o->nwithout) {
            run_error("--attach and --without: --attach starts one component into a running "
                      "workflow, --without launches a workflow without some");
            return -1;
        }
        if ((c = find_component(cfg, o->attach, "--attach")) < 0 ||
            may_be_absent(pl, c, "--attach", 1) != 0)
            return -1;
        for (i = 0; i < cfg->ncomponents; i++)
            pl->absent[i] = i != c;
        pl->attach = c;
        return 0; /* checked with the running workflow's transport (attach_env) */
    }
    for (i = 0; i < o->nwithout; i++) {
        if ((c = find_component(cfg, o->without[i], "--without")) < 0 ||
            may_be_absent(pl, c, "--without", 0) != 0)
            return -1;
        if (pl->absent[c])
            continue;
        pl->absent[c] = 1;
        len += strlen(o->without[i]) + 1;
    }
    for (c = 0, left = 0; c < cfg->ncomponents; c++)
        left += !pl->absent[c];
    if (!left) {
        run_error("--without: every component of workflow %s is left out: nothing to launch",
                  cfg->workflow);
        return -1;
    }
    if (len) {
        pl->absent_names = xchecked(calloc(len, 1));
        for (c = 0; c < cfg->ncomponents; c++)
            if (pl->absent[c]) {
                if (pl->absent_names[0])
                    strcat(pl->absent_names, ",");
                strcat(pl->absent_names, cfg->components[c].name);
            }
    }
    return 0;
}

/* ---- RUN_DIR/RUN_ENV_FILE ------------------------------------------------------------------ */

/* NAME='value' with the shell's quoting (a ' as '\''), so that `. FILE` reads it back. */
static void put_var(FILE *f, const char *name, const char *value)
{
    const char *p;
    fprintf(f, "%s='", name);
    for (p = value; *p; p++)
        if (*p == '\'')
            fputs("'\\''", f);
        else
            fputc(*p, f);
    fputs("'\n", f);
}

int write_run_env(const plan_t *pl)
{
    char host[256] = "", cwd[PATH_MAX] = "", pid[32];
    char *tmp = xasprintf("%s.tmp", pl->env_file);
    FILE *f = fopen(tmp, "w");
    int rc = 0;

    if (!f) {
        run_error("cannot write %s: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    if (gethostname(host, sizeof(host) - 1) != 0)
        snprintf(host, sizeof(host), "unknown");
    if (!getcwd(cwd, sizeof(cwd)))
        cwd[0] = '\0';
    snprintf(pid, sizeof(pid), "%ld", (long) getpid());
    fprintf(f,
            "# written by xfer-run for workflow %s: the environment of its components; "
            "`xfer-run --attach COMPONENT --run-dir DIR FILE` starts one into this run with it\n"
            "# (docs/launcher.md, \"Late and returning components\"). By hand: set -a; . this "
            "file; set +a; then XFER_COMPONENT=NAME mpiexec ... in XFER_RUN_CWD\n",
            pl->cfg->workflow);
    put_var(f, "XFER_CONFIG", pl->config_path);
    put_var(f, "XFER_RUN_DIR", pl->run_dir);
    put_var(f, "XFER_RUN_ID", pl->run_id);
    put_var(f, "XFER_LAUNCH", "separate"); /* what a component started later runs as */
    if (pl->transport)
        put_var(f, "XFER_TRANSPORT", pl->transport);
    if (pl->transport_dir)
        put_var(f, "XFER_TRANSPORT_DIR", pl->transport_dir);
    if (pl->endpoint) {
        put_var(f, "XFER_CONTROL_ENDPOINT", pl->endpoint);
        if (pl->token_file)
            put_var(f, "XFER_CONTROL_TOKEN_FILE", pl->token_file);
    }
    /* xfer-run's own: where and whether the run lives, what it started for it */
    put_var(f, "XFER_RUN_PID", pid);
    put_var(f, "XFER_RUN_HOST", host);
    put_var(f, "XFER_RUN_CWD", cwd);
    put_var(f, "XFER_RUN_XFERD", pl->xferd.n ? "own" : pl->endpoint ? "external" : "none");
    if (pl->uri)
        put_var(f, "XFER_RUN_OMPI_SERVER", pl->uri);
    if (pl->absent_names)
        put_var(f, "XFER_RUN_WITHOUT", pl->absent_names);
    if (ferror(f))
        rc = -1;
    if (fclose(f) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, pl->env_file) != 0)
        rc = -1;
    if (rc != 0) {
        run_error("cannot write %s: %s", pl->env_file, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

/* At the end of the run: a component attached later has no run to join (its xferd is gone). */
void end_run_env(const plan_t *pl, int code)
{
    char text[16];
    FILE *f = fopen(pl->env_file, "a");
    snprintf(text, sizeof(text), "%d", code);
    if (f) {
        put_var(f, "XFER_RUN_ENDED", text);
        if (fclose(f) == 0)
            return;
    }
    run_note("cannot mark the run's end in %s: %s", pl->env_file, strerror(errno));
}

/* One NAME='value' (or NAME=value) line into "NAME=value"; NULL for others. */
static char *parse_var(const char *line)
{
    const char *eq = strchr(line, '='), *p;
    char *out, *o;
    if (!eq || eq == line || line[0] == '#')
        return NULL;
    out = o = xchecked(malloc(strlen(line) + 1));
    memcpy(o, line, (size_t) (eq - line + 1));
    o += eq - line + 1;
    for (p = eq + 1; *p && *p != '\n';) {
        if (*p != '\'') {
            *o++ = *p++;
            continue;
        }
        for (p++; *p && *p != '\''; p++) /* quoted: literal up to the next quote */
            *o++ = *p;
        if (*p)
            p++;
        if (p[0] == '\\' && p[1] == '\'') { /* '\'' : a quote */
            *o++ = '\'';
            p += 2;
        }
    }
    *o = '\0';
    return out;
}

static const char *env_get(const strv_t *env, const char *name)
{
    size_t i, n = strlen(name);
    for (i = 0; i < env->n; i++)
        if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=')
            return env->v[i] + n + 1;
    return NULL;
}

int attach_run_alive(const plan_t *pl)
{
    const char *host = env_get(&pl->run_env, "XFER_RUN_HOST");
    char me[256] = "";
    if (env_get(&pl->run_env, "XFER_RUN_ENDED"))
        return 0;
    if (pl->run_pid <= 0 || !host || gethostname(me, sizeof(me) - 1) != 0 || strcmp(me, host))
        return 1; /* on another host: it cannot be told from here */
    return kill((pid_t) pl->run_pid, 0) == 0 || errno == EPERM;
}

int attach_env(plan_t *pl, const opts_t *o)
{
    const char *v, *mine;
    char line[8192], *a = NULL, *b = NULL;
    FILE *f;
    int rc = -1;

    pl->env_file = xasprintf("%s/" RUN_ENV_FILE, pl->run_dir);
    if (!(f = fopen(pl->env_file, "r"))) {
        run_error("--attach %s: cannot read %s (%s): is the workflow running in this run "
                  "directory? xfer-run writes that file when it starts (and prints the "
                  "directory)",
                  o->attach, pl->env_file, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        char *var = parse_var(line);
        if (var)
            sv_take(&pl->run_env, var);
    }
    fclose(f);
    if (!env_get(&pl->run_env, "XFER_RUN_ID") || !(v = env_get(&pl->run_env, "XFER_CONFIG"))) {
        run_error("--attach %s: %s has no XFER_RUN_ID or XFER_CONFIG: not written by xfer-run",
                  o->attach, pl->env_file);
        return -1;
    }
    a = realpath(v, NULL);
    b = realpath(pl->config_path, NULL);
    if (!a || !b || strcmp(a, b) != 0) {
        run_error("--attach %s: the workflow running in %s is %s, not %s: give the file it runs",
                  o->attach, pl->run_dir, v, pl->config_path);
        goto out;
    }
    free(pl->run_id);
    pl->run_id = xstrdup(env_get(&pl->run_env, "XFER_RUN_ID"));
    mine = pl->transport;
    pl->transport = env_get(&pl->run_env, "XFER_TRANSPORT");
    if (mine && (!pl->transport || strcmp(mine, pl->transport) != 0)) {
        run_error("--attach %s: --transport %s (or XFER_TRANSPORT), but the running workflow's "
                  "components %s",
                  o->attach, mine,
                  pl->transport ? "have XFER_TRANSPORT=" : "take each channel's transport");
        goto out;
    }
    pl->transport_dir = env_get(&pl->run_env, "XFER_TRANSPORT_DIR");
    if ((v = env_get(&pl->run_env, "XFER_RUN_PID")))
        pl->run_pid = strtol(v, NULL, 10);
    if ((v = env_get(&pl->run_env, "XFER_RUN_CWD")) && *v)
        pl->cwd = xstrdup(v);
    v = env_get(&pl->run_env, "XFER_RUN_XFERD");
    if (!attach_run_alive(pl) && v && strcmp(v, "external") != 0) {
        /* its xferd and ompi-server went with it; kept step files are still there to read */
        run_note("--attach %s: the run in %s has ended (xfer-run pid %ld): starting %s without "
                 "its control plane",
                 o->attach, pl->run_dir, pl->run_pid, o->attach);
    } else {
        if ((v = env_get(&pl->run_env, "XFER_CONTROL_ENDPOINT")))
            pl->endpoint = xstrdup(v);
        if ((v = env_get(&pl->run_env, "XFER_CONTROL_TOKEN_FILE")))
            pl->token_file = xstrdup(v);
        if ((v = env_get(&pl->run_env, "XFER_RUN_OMPI_SERVER")))
            pl->uri = xstrdup(v);
    }
    rc = may_be_absent(pl, pl->attach, "--attach", 0);
out:
    free(a);
    free(b);
    return rc;
}
