/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: the launch plan: the launch mode, commands, the run directory, the control plane. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "run.h"

/* launch: auto -> separate where the MPI library can open ports, else mpmd. MPI_Get_library_
 * version may be called before MPI_Init (MPI-3.1 sec. 8.1.1); xfer-run never initializes MPI. */
static xfer_launch_t auto_launch(int slurm)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len = 0;
    xfer_launch_t mode = XFER_LAUNCH_MPMD;

    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) {
        run_note("launch auto: cannot read the MPI library version; using mpmd");
        return XFER_LAUNCH_MPMD;
    }
    if (strstr(version, "Open MPI") && slurm) {
        /* separate srun jobs have no ompi-server to meet at (direct launch, PMIx in slurmd) */
        mode = XFER_LAUNCH_MPMD;
        run_verbose("launch auto: mpmd (Open MPI under srun: no ompi-server to meet at)");
    } else if (strstr(version, "Open MPI")) {
        char *server = find_in_path("ompi-server");
        if (server) {
            mode = XFER_LAUNCH_SEPARATE;
            run_verbose("launch auto: separate (Open MPI, ompi-server is %s)", server);
        } else {
            run_note("launch auto: ompi-server not found in PATH; using mpmd");
        }
        free(server);
    } else if (strstr(version, "MPICH")) {
        /* ch4:ucx (Debian's build) cannot open ports; ch3 can */
        char *dev = mpich_device(version);
        if (dev && strncmp(dev, "ch3", 3) == 0)
            mode = XFER_LAUNCH_SEPARATE;
        run_verbose("launch auto: %s (MPICH device %s: %s)",
                    mode == XFER_LAUNCH_SEPARATE ? "separate" : "mpmd", dev ? dev : "unknown",
                    mode == XFER_LAUNCH_SEPARATE ? "it opens ports" : "it cannot open ports");
        free(dev);
    }
    return mode;
}

int loss_continue(const xfer_config_t *cfg, int k)
{
    const char *e = getenv("XFER_ON_READER_LOSS");
    if (cfg->channels[k].duplex != XFER_DUPLEX_HALF)
        return 0;
    if (e && *e) /* (spill goes on as continue does) */
        return strcmp(e, "continue") == 0 || strcmp(e, "spill") == 0;
    return cfg->channels[k].on_reader_loss != XFER_LOSS_FAIL;
}

int reader_expendable(const xfer_config_t *cfg, int c, char *names, size_t len)
{
    size_t o = 0;
    int k, n = 0;
    if (len)
        names[0] = '\0';
    for (k = 0; k < cfg->nchannels; k++) {
        const xfer_cfg_channel_t *ch = &cfg->channels[k];
        if (ch->from != c && ch->to != c)
            continue;
        if (ch->to != c || !loss_continue(cfg, k))
            return 0; /* it sends, or a sender of its fails for it */
        if (o < len)
            o += (size_t) snprintf(names + o, len - o, "%s%s", n ? ", " : "", ch->name);
        n++;
    }
    return n > 0;
}

/* The channels that ask on_reader_loss: continue (their first name into @p first), and whether
 * every channel travels through files (which connect nothing: separate launches work with any
 * MPI). */
static int loss_channels(const opts_t *o, const xfer_config_t *cfg, const char **first,
                         int *all_file)
{
    int k, n = 0;
    *first = NULL;
    *all_file = 1;
    for (k = 0; k < cfg->nchannels; k++) {
        const int file = o->transport ? strcmp(o->transport, "file") == 0
                                      : cfg->channels[k].transport == XFER_TRANSPORT_FILE;
        *all_file &= file;
        if (loss_continue(cfg, k)) {
            if (!n)
                *first = cfg->channels[k].name;
            n++;
        }
    }
    return n;
}

static int choose_launch(const opts_t *o, const xfer_config_t *cfg, int slurm, xfer_launch_t *mode)
{
    xfer_launch_t want = cfg->launch;

    if (o->launch)
        want = !strcmp(o->launch, "mpmd")       ? XFER_LAUNCH_MPMD
               : !strcmp(o->launch, "separate") ? XFER_LAUNCH_SEPARATE
                                                : XFER_LAUNCH_AUTO;
    if (want == XFER_LAUNCH_USER) {
        run_error("launch: user: the application forms its intercommunicators itself; start it "
                  "with mpiexec");
        return -1;
    }
    *mode = want == XFER_LAUNCH_AUTO ? auto_launch(slurm) : want;
    /* One MPMD job cannot lose a component: when one of its processes dies, mpiexec (Hydra,
     * Open MPI) ends all of it. A reader the senders may lose needs separate launches: the MPI
     * connects them (what auto_launch found), or every channel travels through files. */
    if (want == XFER_LAUNCH_AUTO) {
        const char *first;
        int all_file, n = loss_channels(o, cfg, &first, &all_file);
        if (n && *mode == XFER_LAUNCH_SEPARATE)
            run_verbose("launch auto: separate also keeps a reader's loss from ending the run "
                        "(channel %s asks on_reader_loss: continue)",
                        first);
        else if (n && all_file && !slurm) {
            *mode = XFER_LAUNCH_SEPARATE;
            run_verbose("launch auto: separate (channel %s asks on_reader_loss: continue, and one "
                        "MPMD job cannot lose a component; every channel travels through files, "
                        "which connect nothing, so separate launches work with this MPI)",
                        first);
        } else if (n) {
            run_note("launch auto: mpmd: channel %s asks on_reader_loss: continue, but in one "
                     "MPMD job the death of a process ends the whole job, and this MPI cannot "
                     "connect separate launches (transport: file on every channel can)",
                     first);
        }
    }
    if (slurm && *mode == XFER_LAUNCH_SEPARATE && strcmp(XFER_MPI_FLAVOR, "openmpi") == 0) {
        run_error("launch: separate under Slurm with Open MPI: separately started srun jobs "
                  "cannot connect (direct launch has no ompi-server to meet at); use launch: "
                  "mpmd (one srun for every component)");
        return -1;
    }
    return 0;
}

/* --launcher auto: Slurm's srun inside an allocation, else mpiexec. */
static int choose_launcher(const opts_t *o, plan_t *pl)
{
    const char *job = getenv("SLURM_JOB_ID");
    char *srun = NULL;

    pl->in_allocation = job && *job;
    if (!strcmp(o->launcher, "mpiexec"))
        return 0;
    if (o->srun)
        srun = is_exec_file(o->srun) ? abs_path(o->srun) : NULL;
    else
        srun = find_in_path("srun");
    if (!strcmp(o->launcher, "auto")) {
        pl->slurm = pl->in_allocation && srun;
        if (pl->slurm) {
            run_note("inside Slurm job %s: launching with %s (--launcher mpiexec to use mpiexec)",
                     job, srun);
            pl->srun = srun;
        } else {
            free(srun);
        }
        return 0;
    }
    if (!srun) {
        run_error("--launcher slurm: srun %s",
                  o->srun ? "is not an executable file" : "not found in PATH (--srun PATH)");
        return -1;
    }
    pl->slurm = 1;
    pl->srun = srun;
    return 0;
}

char *resolve_command(const char *cmd, const char *self_dir, const char *yaml_dir, char **why)
{
    char *path;

    if (strchr(cmd, '/')) {
        char *joined = cmd[0] == '/' ? xstrdup(cmd) : xasprintf("%s/%s", yaml_dir, cmd);
        path = abs_path(joined);
        free(joined);
        if (!is_exec_file(path)) {
            *why = xasprintf("command \"%s\" (%s): %s", cmd, path,
                             access(path, F_OK) != 0 ? strerror(errno) : "not an executable file");
            free(path);
            return NULL;
        }
        return path;
    }
    path = xasprintf("%s/%s", self_dir, cmd);
    if (is_exec_file(path))
        return path;
    free(path);
    path = find_in_path(cmd);
    if (!path)
        *why = xasprintf("command \"%s\" not found (looked in %s and PATH)", cmd, self_dir);
    return path;
}

static int make_dir(const char *dir)
{
    struct stat sb;

    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        run_error("cannot create the run directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        run_error("run directory %s: not a directory", dir);
        return -1;
    }
    return 0;
}

static int setup_run_dir(plan_t *pl, const opts_t *o)
{
    const char *tmp = getenv("TMPDIR");
    char *tmpl;

    if (o->run_dir || pl->cfg->run_dir[0]) {
        const char *d = o->run_dir ? o->run_dir : pl->cfg->run_dir;
        /* relative to the working directory, which the ranks share: the runtime, started
         * without xfer-run, reads the file's run_dir the same way */
        pl->run_dir = abs_path(d);
        return o->dry_run ? 0 : make_dir(pl->run_dir);
    }
    if (!tmp || !*tmp)
        tmp = "/tmp";
    /* Slurm: the nodes share the working directory (the submit directory), not /tmp; the
     * token, the port files and the multi-prog file live in the run directory */
    tmpl = pl->slurm ? xstrdup("xfer-run.XXXXXX") : xasprintf("%s/xfer-run.XXXXXX", tmp);
    pl->run_dir = abs_path(tmpl);
    free(tmpl);
    if (o->dry_run)
        return 0; /* shown as the template; nothing is created */
    if (!mkdtemp(pl->run_dir)) {
        run_error("cannot create a run directory from %s: %s", pl->run_dir, strerror(errno));
        return -1;
    }
    pl->run_dir_tmp = 1;
    return 0;
}

/* Do the components run on other hosts than this one? Under Slurm, when the allocation has
 * several nodes, or srun makes its own (outside an allocation: perhaps on other nodes). */
static int multi_node(const plan_t *pl)
{
    const char *n = getenv("SLURM_JOB_NUM_NODES");
    if (!pl->slurm)
        return 0;
    if (!pl->in_allocation)
        return 1;
    return n && atoi(n) > 1;
}

/* A TCP port free now (the kernel's choice), for xferd to bind in a moment. */
static int free_tcp_port(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;
    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(fd, (struct sockaddr *) &a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *) &a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* xferd: --xferd, $XFER_XFERD, next to this executable, the build tree, PATH. */
static char *find_xferd(const opts_t *o, const char *self_dir)
{
    const char *env = getenv("XFER_XFERD");
    char *p;

    if (o->xferd)
        return is_exec_file(o->xferd) ? abs_path(o->xferd) : NULL;
    if (env && *env)
        return is_exec_file(env) ? abs_path(env) : NULL;
    p = xasprintf("%s/xferd", self_dir);
    if (is_exec_file(p))
        return p;
    free(p);
#ifdef XFER_RUN_XFERD_BUILD
    if (is_exec_file(XFER_RUN_XFERD_BUILD))
        return xstrdup(XFER_RUN_XFERD_BUILD);
#endif
    return find_in_path("xferd");
}

/* The control plane: a running xferd the file names, or one started here in the run
 * directory (ipc socket, a fresh token), or none with --no-daemon. */
static int plan_daemon(plan_t *pl, const opts_t *o, const char *self_dir)
{
    const xfer_config_t *cfg = pl->cfg;
    const char *env_tf = getenv("XFER_CONTROL_TOKEN_FILE");
    char *path;

    pl->hb_timeout_ms =
        cfg->heartbeat_timeout_ms > 0 ? cfg->heartbeat_timeout_ms : 4 * cfg->heartbeat_ms;
    if (o->no_daemon)
        return 0;
    if (cfg->token_file[0])
        pl->token_file = abs_path(cfg->token_file);
    else if (env_tf && *env_tf)
        pl->token_file = abs_path(env_tf);
    if (cfg->control_endpoint[0]) { /* somebody runs it: components and xfer-run connect */
        pl->endpoint = xstrdup(cfg->control_endpoint);
        if (!pl->token_file) {
            run_error("control.endpoint %s is given, but no token: set control.token_file or "
                      "XFER_CONTROL_TOKEN_FILE",
                      cfg->control_endpoint);
            return -1;
        }
        return 0;
    }
    path = find_xferd(o, self_dir);
    if (!path) {
        run_error("xferd not found (%s): pass --xferd PATH, or --no-daemon to run without the "
                  "control plane",
                  o->xferd ? o->xferd : "looked next to xfer-run, in the build tree and in PATH");
        return -1;
    }
    if (multi_node(pl)) { /* components on other nodes: TCP on this host's name */
        char host[256];
        int port = free_tcp_port();
        if (gethostname(host, sizeof host) != 0 || port <= 0) {
            run_error("cannot choose xferd's TCP endpoint (%s); set control.endpoint",
                      strerror(errno));
            free(path);
            return -1;
        }
        host[sizeof host - 1] = '\0';
        pl->endpoint = xasprintf("tcp://%s:%d", host, port);
        pl->bind = xasprintf("tcp://0.0.0.0:%d", port);
    } else {
        pl->endpoint = xasprintf("ipc://%s/xferd.sock", pl->run_dir);
    }
    if (strlen(pl->endpoint) > 100) { /* sockaddr_un.sun_path holds 108 bytes */
        run_error("run directory %s is too long for xferd's ipc socket (at most 86 characters): "
                  "choose a shorter --run-dir, or run xferd yourself and set control.endpoint",
                  pl->run_dir);
        free(path);
        return -1;
    }
    if (!pl->token_file) {
        pl->token_file = xasprintf("%s/token", pl->run_dir);
        pl->make_token = 1;
    }
    pl->ready = xasprintf("%s/xferd.ready", pl->run_dir);
    pl->journal = xasprintf("%s/xferd.journal", pl->run_dir);
    sv_take(&pl->xferd, path);
    sv_push(&pl->xferd, "--config");
    sv_push(&pl->xferd, pl->config_path);
    sv_push(&pl->xferd, "--run-dir");
    sv_push(&pl->xferd, pl->run_dir);
    sv_push(&pl->xferd, "--endpoint");
    sv_push(&pl->xferd, pl->bind ? pl->bind : pl->endpoint);
    if (pl->bind)
        sv_push(&pl->xferd, "--allow-remote"); /* the token guards it; components are remote */
    sv_push(&pl->xferd, "--token-file");
    sv_push(&pl->xferd, pl->token_file);
    sv_push(&pl->xferd, "--ready-file");
    sv_push(&pl->xferd, pl->ready);
    sv_push(&pl->xferd, "--journal");
    sv_push(&pl->xferd, pl->journal);
    if (quiet)
        sv_push(&pl->xferd, "--quiet");
    return 0;
}

int build_plan(plan_t *pl, const opts_t *o, const xfer_config_t *cfg)
{
    char *self_dir = NULL, *yaml_dir = NULL, **cmds = NULL;
    int c, rc = -1;

    memset(pl, 0, sizeof *pl);
    pl->cfg = cfg;
    pl->openmpi = strcmp(XFER_MPI_FLAVOR, "openmpi") == 0;
    if (choose_launcher(o, pl) != 0 || choose_launch(o, cfg, pl->slurm, &pl->mode) != 0)
        return -1;
    pl->self = self_exe();
    self_dir = dir_of(pl->self);
    pl->config_path = abs_path(o->file);
    yaml_dir = dir_of(pl->config_path);

    if (plan_yield(pl, o, self_dir) != 0)
        goto out;

    /* everything is checked before anything starts */
    if (!pl->slurm && !is_exec_file(o->mpiexec)) {
        run_error("launcher %s: %s", o->mpiexec,
                  access(o->mpiexec, F_OK) != 0 ? strerror(errno) : "not an executable file");
        goto out;
    }
    cmds = xchecked(calloc((size_t) cfg->ncomponents, sizeof(char *)));
    pl->python = xchecked(calloc((size_t) cfg->ncomponents, sizeof(char *)));
    for (c = 0; c < cfg->ncomponents; c++) {
        char *why = NULL;
        py_interp_t py;
        cmds[c] = resolve_command(cfg->components[c].argv[0], self_dir, yaml_dir, &why);
        if (!cmds[c]) {
            run_error("component %s: %s", cfg->components[c].name, why);
            free(why);
            goto out;
        }
        if (python_of(cmds[c], &cfg->components[c], &py)) { /* named if it dies at import */
            run_verbose("component %s: Python %s%s%s", cfg->components[c].name, py.path,
                        py.script ? ", from the #! line of " : "", py.script ? py.script : "");
            pl->python[c] = py.path;
            py.path = NULL;
            python_free(&py);
        }
    }
    if (pl->openmpi && pl->mode == XFER_LAUNCH_SEPARATE && !pl->slurm) {
        char *server = find_in_path("ompi-server");
        if (!server) {
            run_error("launch separate with Open MPI needs ompi-server in PATH");
            goto out;
        }
        sv_take(&pl->server, server);
        sv_push(&pl->server, "--no-daemonize");
        sv_push(&pl->server, "-r");
    }
    if (setup_run_dir(pl, o) != 0)
        goto out;
    {
        char host[64] = "host";
        struct timespec ts;
        gethostname(host, sizeof host - 1);
        clock_gettime(CLOCK_REALTIME, &ts);
        pl->run_id = xasprintf("xfer-run-%s-%ld-%lld.%09ld", host, (long) getpid(),
                               (long long) ts.tv_sec, ts.tv_nsec);
    }
    pl->transport = o->transport;
    pl->transport_dir = getenv("XFER_TRANSPORT_DIR");
    if (pl->transport_dir && !*pl->transport_dir)
        pl->transport_dir = NULL;
    if (pl->server.n) {
        pl->uri = xasprintf("%s/ompi-server.uri", pl->run_dir);
        sv_push(&pl->server, pl->uri);
    }
    if (plan_daemon(pl, o, self_dir) != 0)
        goto out;
    if (pl->openmpi && geteuid() == 0) {
        /* Open MPI refuses to run as root without these; set for xfer-run's children */
        static const char *const names[] = {"OMPI_ALLOW_RUN_AS_ROOT",
                                            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"};
        size_t i;
        for (i = 0; i < 2; i++) {
            if (getenv(names[i]))
                continue;
            if (setenv(names[i], "1", 0) != 0) {
                run_error("setenv %s: %s", names[i], strerror(errno));
                goto out;
            }
            sv_take(&pl->rootenv, xasprintf("%s=1", names[i]));
        }
    }

    if (world_check(pl) != 0)
        goto out;
    if (pl->slurm) {
        if (!(pl->env = find_in_path("env"))) {
            run_error("env(1) not found in PATH: srun needs it to set each component's "
                      "environment");
            goto out;
        }
        if (slurm_lines(pl, o, (const char *const *) cmds) != 0)
            goto out;
    } else if (pl->mode == XFER_LAUNCH_MPMD) {
        pl->nlines = 1;
        pl->lines = xchecked(calloc(1, sizeof(strv_t)));
        add_launcher(pl, o, &pl->lines[0]);
        for (c = 0; c < cfg->ncomponents; c++) {
            if (c > 0)
                sv_push(&pl->lines[0], ":");
            add_context(pl, c, cmds[c], &pl->lines[0]);
        }
    } else {
        pl->nlines = cfg->ncomponents;
        pl->lines = xchecked(calloc((size_t) cfg->ncomponents, sizeof(strv_t)));
        for (c = 0; c < cfg->ncomponents; c++) {
            add_launcher(pl, o, &pl->lines[c]);
            add_context(pl, c, cmds[c], &pl->lines[c]);
        }
    }
    rc = 0;
out:
    if (cmds)
        for (c = 0; c < cfg->ncomponents; c++)
            free(cmds[c]);
    free(cmds);
    free(self_dir);
    free(yaml_dir);
    return rc;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void) sb;
    (void) type;
    (void) ftw;
    if (remove(path) != 0)
        run_error("cannot remove %s: %s", path, strerror(errno));
    return 0;
}

void free_plan(plan_t *pl, int keep_run_dir)
{
    int i;

    if (pl->run_dir_tmp) {
        if (keep_run_dir)
            run_note("run directory kept: %s", pl->run_dir);
        else
            nftw(pl->run_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    } else if (pl->uri) {
        unlink(pl->uri); /* stale once the server is gone */
    }
    for (i = 0; i < pl->nlines; i++)
        sv_free(&pl->lines[i]);
    free(pl->lines);
    sv_free(&pl->server);
    sv_free(&pl->rootenv);
    sv_free(&pl->xferd);
    free(pl->endpoint);
    free(pl->bind);
    free(pl->multiprog);
    free(pl->srun);
    free(pl->env);
    sv_free(&pl->mp_lines);
    free(pl->token_file);
    free(pl->ready);
    free(pl->journal);
    free(pl->uri);
    free(pl->run_dir);
    free(pl->run_id);
    free(pl->config_path);
    free(pl->self);
    free(pl->yield_lib);
    if (pl->python)
        for (i = 0; i < pl->cfg->ncomponents; i++)
            free(pl->python[i]);
    free(pl->python);
}

static void print_quoted(const char *s)
{
    const char *safe = "@%+=:,./_-";
    const char *p;
    int plain = *s != '\0';

    for (p = s; *p && plain; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr(safe, *p)))
            plain = 0;
    if (plain) {
        fputs(s, stdout);
        return;
    }
    putchar('\'');
    for (p = s; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*p);
    }
    putchar('\'');
}

void print_command(const strv_t *env, const strv_t *cmd)
{
    size_t i;

    for (i = 0; i < env->n; i++) {
        fputs(env->v[i], stdout);
        putchar(' ');
    }
    for (i = 0; i < cmd->n; i++) {
        if (i)
            putchar(' ');
        print_quoted(cmd->v[i]);
    }
    putchar('\n');
}
