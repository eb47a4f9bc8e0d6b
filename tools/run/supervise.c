/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: running the plan: servers, xferd, the launches, supervision to the end. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <xfer/control.h>

#include "run.h"
#include "runner.h"

void stop_jobs(runner_t *r, int sig)
{
    int j;

    for (j = 0; j < r->njobs; j++)
        if (r->jobs[j].pid > 0)
            kill(-r->jobs[j].pid, sig);
    r->stop_at = now_ms();
}

void reap(runner_t *r)
{
    int st, j;
    pid_t pid;

    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        int code = status_code(st);
        if (pid == r->server) {
            r->server = 0;
            if (!r->server_stopped)
                run_note("ompi-server exited early (exit code %d)", code);
            continue;
        }
        if (pid == r->xferd) {
            r->xferd = 0;
            if (r->xferd_stopped)
                continue;
            /* The components keep their sessions: the new daemon reads the journal and ZeroMQ
             * reconnects them. Its ready file is not awaited: nobody needs it now. */
            if (r->running > 0 && r->xferd_restarts < XFERD_RESTARTS) {
                r->xferd_restarts++;
                run_note("xferd exited early (exit code %d); restarting it from its journal "
                         "(%d of %d)",
                         code, r->xferd_restarts, XFERD_RESTARTS);
                if (spawn(r->pl->xferd.v, r->devnull, r->devnull, -1, &r->xferd) != 0)
                    r->xferd = 0;
            } else {
                run_note("xferd exited early (exit code %d)", code);
            }
            continue;
        }
        for (j = 0; j < r->njobs && r->jobs[j].pid != pid; j++)
            ;
        if (j == r->njobs)
            continue; /* a leftover re-parented to us */
        r->jobs[j].pid = 0;
        r->running--;
        close_fd(&r->jobs[j].stdin_w);
        report_exit(r, j, code);
        if (code == 0 || r->result >= 0)
            continue; /* later exits of a stopping run are consequences, not causes */
        if (r->report_components) {
            char how[96];
            how_ended(WIFSIGNALED(st) ? 128 + WTERMSIG(st) : code, how, sizeof(how));
            if (reader_lost(r, j, how))
                continue; /* a reader the others go on without */
        }
        r->result = code;
        if (!r->report_components) {
            run_note("%s exited with code %d", r->jobs[j].name, code);
            report_errors(r);
        } else
            report_first(r, j, WIFSIGNALED(st) ? 128 + WTERMSIG(st) : code);
        if (r->running > 0 && r->grace_ms > 0 && peers_registered(r, j) > 0)
            r->stop_due = now_ms() + r->grace_ms; /* the peers fail on their own first */
        else
            stop_jobs(r, SIGTERM);
    }
}

/* A process of component @p c ended abnormally (its wrapper's report): the component failed,
 * whatever its launcher makes of it (Hydra waits for ever when a process ends before MPI_Init).
 * xferd hears of it, the peers get the grace to fail on their own, then the run stops. */
/* A process of component @p c died at a Python import: its interpreter is the usual suspect
 * (the python3 first in PATH need not be the package's). Name it, and the check. */
static void import_hint(runner_t *r, int c, const char *import_err)
{
    const char *py = r->pl->python[c];
    char *who;

    if (!import_err[0])
        return;
    who = py ? xasprintf("%s: its Python, %s,", r->pl->cfg->components[c].name, py)
             : xstrdup(r->pl->cfg->components[c].name);
    run_error("component %s died at import (%s); `xfer-run --check %s` tries each Python "
              "component's interpreter and names the fix",
              who, import_err, r->pl->config_path);
    free(who);
}

static void component_ended(runner_t *r, int c, int code, const char *import_err)
{
    xfer_ctl_msg_t *m = NULL;
    if (r->ended && r->ended[c])
        return; /* another process of it ended first */
    if (r->ended)
        r->ended[c] = 1;
    if (r->ctl &&
        (xfer_ctl_msg_new("exited", &m) != XFER_SUCCESS ||
         xfer_ctl_set_str(m, "component", r->pl->cfg->components[c].name) != XFER_SUCCESS ||
         xfer_ctl_set_int(m, "code", code) != XFER_SUCCESS ||
         xfer_ctl_send(r->ctl, m) != XFER_SUCCESS))
        run_note("cannot report the end of %s to xferd: %s", r->pl->cfg->components[c].name,
                 xfer_last_error());
    xfer_ctl_msg_free(&m);
    if (r->result >= 0 || r->stop_at) {
        import_hint(r, c, import_err); /* its launcher's exit may have been reported first */
        return;                        /* a consequence of an earlier cause */
    }
    {
        char how[96];
        how_ended(code, how, sizeof(how));
        if (reader_lost(r, c, how))
            return; /* a reader the others go on without */
    }
    r->result = code;
    report_first(r, c, code);
    import_hint(r, c, import_err);
    if (r->running > 0 && r->grace_ms > 0 && peers_registered(r, c) > 0)
        r->stop_due = now_ms() + r->grace_ms;
    else
        stop_jobs(r, SIGTERM);
}

/* Lines "NAME PID CODE[ IMPORT_ERROR]" from the wrappers (output.c). */
static void read_exits(runner_t *r)
{
    ssize_t n;
    char *nl;
    while ((n = read(r->exits_fd, r->exits_buf + r->exits_len,
                     sizeof r->exits_buf - 1 - r->exits_len)) > 0) {
        r->exits_len += (size_t) n;
        r->exits_buf[r->exits_len] = '\0';
        while ((nl = strchr(r->exits_buf, '\n'))) {
            char name[256];
            long pid;
            int code, c, used = 0;
            *nl = '\0';
            if (sscanf(r->exits_buf, "%255s %ld %d%n", name, &pid, &code, &used) == 3) {
                const char *import_err = r->exits_buf + used + (r->exits_buf[used] == ' ');
                for (c = 0; c < r->pl->cfg->ncomponents; c++)
                    if (!strcmp(r->pl->cfg->components[c].name, name) && code != 0)
                        component_ended(r, c, code, import_err);
            }
            r->exits_len -= (size_t) (nl + 1 - r->exits_buf);
            memmove(r->exits_buf, nl + 1, r->exits_len + 1);
        }
        if (r->exits_len == sizeof r->exits_buf - 1)
            r->exits_len = 0; /* not ours: no line is that long */
    }
}

/* A signal to xfer-run: forward it, then the usual stop; a second one kills at once. */
static void on_user_signal(runner_t *r, int sig)
{
    if (r->stop_at) {
        signal_descendants(SIGKILL);
        return;
    }
    if (r->result < 0)
        r->result = 128 + sig;
    run_note("%s received; stopping all components", sig == SIGINT    ? "SIGINT"
                                                     : sig == SIGTERM ? "SIGTERM"
                                                                      : "SIGHUP");
    stop_jobs(r, sig);
}

/* Drain the self-pipe and act on the signals it carried. */
void handle_signals(runner_t *r)
{
    unsigned char buf[64];
    ssize_t n, i;

    while ((n = read(sig_pipe[0], buf, sizeof buf)) > 0)
        for (i = 0; i < n; i++)
            if (buf[i] != SIGCHLD)
                on_user_signal(r, buf[i]);
}

static int streams_open(const runner_t *r)
{
    int j;

    for (j = 0; j < r->njobs; j++)
        if (r->jobs[j].out.fd >= 0 || r->jobs[j].err.fd >= 0)
            return 1;
    return 0;
}

static int64_t earlier(int64_t a, int64_t b)
{
    return a == 0 ? b : (b == 0 || b > a) ? a : b;
}

/* Every component ended: xferd may go ("stop", then SIGTERM if it does not answer). */
static void stop_xferd(runner_t *r)
{
    xfer_ctl_msg_t *req = NULL;
    r->xferd_stopped = 1;
    if (!r->ctl || xfer_ctl_msg_new("stop", &req) != XFER_SUCCESS ||
        xfer_ctl_request(r->ctl, req, XFERD_STOP_MS, NULL) != XFER_SUCCESS) {
        run_note("xferd did not answer \"stop\" (%s); terminating it",
                 r->ctl ? xfer_last_error() : "no connection");
        kill(-r->xferd, SIGTERM);
    }
    xfer_ctl_msg_free(&req);
}

/* Every launch here ended, but xferd says a component another xfer-run started into this run
 * (--attach) is running: xferd and ompi-server, which it uses, stay until it ends (asked every
 * WATCH_MS; its end, or xferd's verdict on it, ends the hold). Not while stopping. */
static int holds_run(runner_t *r, int64_t now)
{
    char name[256] = "";
    if (r->stop_at || r->xferd <= 0 || r->xferd_stopped || !r->ctl)
        return 0;
    if (r->hold_at && now < r->hold_at)
        return 1;
    r->hold_at = 0;
    if (!others_running(r, name, sizeof(name)))
        return 0;
    if (!r->held)
        run_note("component %s, started into this run by another xfer-run (--attach), is running: "
                 "%s until it ends",
                 name, r->server > 0 ? "xferd and ompi-server stay" : "xferd stays");
    r->held = 1;
    r->hold_at = now + WATCH_MS;
    return 1;
}

/* Supervise until every launcher has exited, the output is drained and no descendant is left. */
static void supervise(runner_t *r, struct pollfd *pfd)
{
    for (;;) {
        int64_t now, deadline = 0;
        int nfd = 0, j, timeout, alive = 0;

        reap(r);
        now = now_ms();
        watch_xferd(r, now);
        if (r->ctl && r->running > 0 && (r->result < 0 || r->hung) && !r->stop_at && !r->stop_due)
            deadline = earlier(deadline, r->watch_at);
        if (r->walltime && r->running > 0 && !r->stop_at && now >= r->walltime) {
            run_error("walltime of %s s exceeded; stopped all components", r->walltime_text);
            if (r->result < 0)
                r->result = EXIT_WALLTIME;
            stop_jobs(r, SIGTERM);
        }
        if (r->stop_due && !r->stop_at && r->running > 0 && now >= r->stop_due)
            stop_jobs(r, SIGTERM);
        if (r->stop_due && !r->stop_at && r->running > 0)
            deadline = earlier(deadline, r->stop_due);
        if (r->running == 0 && holds_run(r, now)) {
            deadline = earlier(deadline, r->hold_at); /* a component started later runs */
        } else if (r->running == 0) {
            if (r->server > 0 && !r->server_stopped) {
                r->server_stopped = 1;
                kill(-r->server, SIGTERM);
            }
            if (r->xferd > 0 && !r->xferd_stopped)
                stop_xferd(r);
            alive = signal_descendants(0);
            if (!alive && !streams_open(r))
                return;
            if (alive && !r->leftovers)
                r->leftovers = now;
            if (alive && !r->stop_at && now >= r->leftovers + LEFTOVER_GRACE_MS) {
                signal_descendants(SIGTERM);
                r->stop_at = now;
            }
            if (!r->stop_at)
                deadline = earlier(deadline, r->leftovers + LEFTOVER_GRACE_MS);
            /* what is left is not always our child (no SIGCHLD): look again soon */
            deadline = earlier(deadline, now + 100);
        }
        if (r->stop_at) {
            if (now >= r->stop_at + KILL_AFTER_MS) {
                signal_descendants(SIGKILL);
                deadline = earlier(deadline, now + 50);
            } else {
                deadline = earlier(deadline, r->stop_at + KILL_AFTER_MS);
            }
        } else if (r->walltime && r->running > 0) {
            deadline = earlier(deadline, r->walltime);
        }

        pfd[nfd].fd = sig_pipe[0];
        pfd[nfd++].events = POLLIN;
        pfd[nfd].fd = r->exits_fd; /* -1 is ignored */
        pfd[nfd++].events = POLLIN;
        for (j = 0; j < r->njobs; j++) {
            pfd[nfd].fd = r->jobs[j].out.fd; /* -1 is ignored by poll */
            pfd[nfd++].events = POLLIN;
            pfd[nfd].fd = r->jobs[j].err.fd;
            pfd[nfd++].events = POLLIN;
        }
        for (j = 0; j < nfd; j++)
            pfd[j].revents = 0;
        timeout = deadline ? (int) (deadline > now ? deadline - now : 0) : -1;
        if (poll(pfd, (nfds_t) nfd, timeout) < 0 && errno != EINTR) {
            run_error("poll: %s", strerror(errno));
            if (r->result < 0)
                r->result = EXIT_USAGE;
            if (!r->stop_at)
                stop_jobs(r, SIGTERM);
            continue;
        }
        if (pfd[0].revents & POLLIN)
            handle_signals(r);
        if (pfd[1].revents & POLLIN)
            read_exits(r);
        for (j = 0; j < r->njobs; j++) {
            if (r->jobs[j].out.fd >= 0 && (pfd[2 + 2 * j].revents & (POLLIN | POLLHUP | POLLERR)))
                stream_pump(&r->jobs[j].out);
            if (r->jobs[j].err.fd >= 0 && (pfd[3 + 2 * j].revents & (POLLIN | POLLHUP | POLLERR)))
                stream_pump(&r->jobs[j].err);
        }
    }
}

/* Is our stdin /dev/null, or closed: nothing for a launch to read? */
static int stdin_is_empty(void)
{
    struct stat in, null;
    if (fstat(0, &in) != 0)
        return 1;
    return S_ISCHR(in.st_mode) && stat("/dev/null", &null) == 0 && in.st_rdev == null.st_rdev;
}

int run_workflow(const plan_t *pl, const opts_t *o)
{
    runner_t r;
    struct pollfd *pfd = NULL;
    int devnull = -1, stdin_fd, j;

    memset(&r, 0, sizeof r);
    r.result = -1;
    r.exits_fd = -1;
    r.report_components = pl->mode == XFER_LAUNCH_SEPARATE;
    r.pl = pl;
    r.devnull = -1;
    /* a failure's peers: xferd's detection bound twice over, plus their exit */
    r.grace_ms = pl->endpoint ? 2 * pl->hb_timeout_ms + 2000 : 0;
    r.njobs = pl->nlines;
    r.walltime_text = o->walltime_text;
    if (o->walltime > 0)
        r.walltime = now_ms() + (int64_t) (o->walltime * 1000.0);
#ifdef __linux__
    /* whatever a launcher leaves behind becomes our child, so none of it outlives us */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
        run_note("cannot become a child subreaper: %s", strerror(errno));
#endif
    if (install_signals() != 0) {
        run_error("cannot install signal handlers: %s", strerror(errno));
        return EXIT_USAGE;
    }
    devnull = open("/dev/null", O_RDWR);
    r.devnull = devnull;
    if (devnull < 0 || set_cloexec(devnull) != 0) {
        run_error("/dev/null: %s", strerror(errno));
        return EXIT_USAGE;
    }
    /* one launch may read stdin as usual; several launchers may not compete for it */
    stdin_fd = (pl->mode == XFER_LAUNCH_MPMD && !isatty(0)) ? -1 : devnull;

    r.ended = calloc((size_t) pl->cfg->ncomponents, 1);
    r.lost = calloc((size_t) pl->cfg->ncomponents, 1);
    r.bye = calloc((size_t) pl->cfg->ncomponents, 1);
    r.jobs = calloc((size_t) r.njobs, sizeof(job_t));
    pfd = calloc((size_t) (2 + 2 * r.njobs), sizeof *pfd);
    if (!r.jobs || !pfd || !r.ended || !r.lost || !r.bye) {
        run_error("out of memory");
        r.result = EXIT_USAGE;
        goto out;
    }
    for (j = 0; j < r.njobs; j++) {
        job_t *jb = &r.jobs[j];
        jb->name = pl->mode == XFER_LAUNCH_SEPARATE ? pl->cfg->components[j].name
                   : pl->slurm                      ? "srun"
                                                    : "mpiexec";
        jb->out.fd = jb->err.fd = jb->stdin_w = -1;
    }

    if (pl->server.n && start_server(&r, pl, devnull) != 0) {
        if (r.result < 0)
            r.result = EXIT_USAGE;
        if (!r.stop_at)
            r.stop_at = now_ms();
    }
    if (!r.stop_at && start_xferd(&r, pl, devnull) != 0) {
        if (r.result < 0)
            r.result = EXIT_USAGE;
        if (!r.stop_at)
            r.stop_at = now_ms();
    }
    if (!r.stop_at && pl->env_file && pl->attach < 0) { /* for --attach (not its own) */
        if (write_run_env(pl) == 0) {
            r.env_written = 1;
        } else {
            r.result = EXIT_USAGE;
            r.stop_at = now_ms();
        }
    }
    if (!r.stop_at && pl->attach >= 0) {
        run_verbose("attaching %s to the run in %s (run id %s)",
                    pl->cfg->components[pl->attach].name, pl->run_dir, pl->run_id);
        if (pl->cwd && chdir(pl->cwd) != 0) /* relative paths (file.dir) mean the run's */
            run_note("cannot work in the run's directory %s (%s): relative paths of the "
                     "workflow file mean this one",
                     pl->cwd, strerror(errno));
    } else if (!r.stop_at) { /* where the run lives, and how to watch it */
        char *ep_default = xasprintf("ipc://%s/xferd.sock", pl->run_dir);
        for (j = 0; j < pl->cfg->ncomponents; j++)
            if (pl->absent[j])
                run_note("component %s is not launched (--without); start it into this run "
                         "with: xfer-run --attach %s --run-dir %s %s",
                         pl->cfg->components[j].name, pl->cfg->components[j].name, pl->run_dir,
                         pl->config_path);
        if (!pl->endpoint)
            run_note("run directory %s (no control plane: nothing to watch)", pl->run_dir);
        else if (!strcmp(pl->endpoint, ep_default))
            run_note("run directory %s; watch it with: xferctl --config %s --run-dir %s watch",
                     pl->run_dir, pl->config_path, pl->run_dir);
        else
            run_note("run directory %s; watch it with: xferctl --config %s --endpoint %s "
                     "--token-file %s watch",
                     pl->run_dir, pl->config_path, pl->endpoint, pl->token_file);
        free(ep_default);
    }
    if (!r.stop_at && !pl->slurm) { /* srun ends a step itself when a task fails */
        unlink(pl->exits);
        /* O_RDWR: the FIFO never reports an end of file while no wrapper writes */
        if (mkfifo(pl->exits, 0600) != 0 ||
            (r.exits_fd = open(pl->exits, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0)
            run_note("cannot make %s (%s): a process that ends before MPI_Init may leave the "
                     "others waiting",
                     pl->exits, strerror(errno));
    }
    for (j = 0; j < r.njobs && !r.stop_at; j++) {
        job_t *jb = &r.jobs[j];
        int po[2] = {-1, -1}, pe[2] = {-1, -1}, rc;

        if (!pl->lines[j].n)
            continue; /* not launched here (--without, --attach) */

        handle_signals(&r); /* a signal now: start no more */
        if (r.stop_at)
            break;

        /* The output of a launch comes through xfer-run in whole lines, each in one write, so
         * that xferd's lines and xfer-run's own never land inside one: a separate launch's
         * prefixed here; an MPMD launch's already prefixed by the wrappers, but its launcher
         * passes on chunks as they come, several lines and longer than PIPE_BUF, which other
         * writers of the same pipe may cut. With --quiet it goes out as written. */
        if (!quiet) {
            if (pl->mode == XFER_LAUNCH_SEPARATE)
                jb->prefix = xasprintf("[%s] ", jb->name);
            if (cloexec_pipe(po) != 0 || cloexec_pipe(pe) != 0) {
                run_error("pipe: %s", strerror(errno));
                close_fd(&po[0]);
                close_fd(&po[1]);
                r.result = EXIT_USAGE;
                stop_jobs(&r, SIGTERM);
                break;
            }
            /* both take their read end, so the cleanup below closes both */
            rc = stream_init(&jb->out, po[0], 1, jb->prefix);
            rc |= stream_init(&jb->err, pe[0], 2, jb->prefix);
            if (rc != 0) {
                run_error("out of memory");
                close_fd(&po[1]);
                close_fd(&pe[1]);
                r.result = EXIT_USAGE;
                stop_jobs(&r, SIGTERM);
                break;
            }
        }
        /* Hydra (MPICH) forwards the end of its stdin to the proxy of the job; when the proxy
         * has already gone, which concurrent launches make likely, mpiexec dies of SIGPIPE
         * (measured: 6 of 40 pairs of concurrent mpiexec.mpich < /dev/null). So each separate
         * MPICH launch gets an empty stdin that ends only when it has exited, and so does an
         * MPMD one whose stdin is empty anyway (/dev/null, as under ctest and batch systems;
         * measured under load: 1 of 2 quick MPMD runs died of SIGPIPE). A real input still
         * goes to the MPMD launch. */
        if (!pl->openmpi && (pl->mode == XFER_LAUNCH_SEPARATE || stdin_is_empty())) {
            int pi[2];
            if (cloexec_pipe(pi) != 0) {
                run_error("pipe: %s", strerror(errno));
                close_fd(&po[1]);
                close_fd(&pe[1]);
                r.result = EXIT_USAGE;
                stop_jobs(&r, SIGTERM);
                break;
            }
            jb->stdin_w = pi[1];
            rc = spawn(pl->lines[j].v, pi[0], po[1], pe[1], &jb->pid);
            close_fd(&pi[0]);
        } else {
            rc = spawn(pl->lines[j].v, stdin_fd, po[1], pe[1], &jb->pid);
        }
        close_fd(&po[1]);
        close_fd(&pe[1]);
        if (rc != 0) {
            jb->pid = 0;
            r.result = EXIT_USAGE;
            stop_jobs(&r, SIGTERM);
            break;
        }
        r.running++;
    }
    supervise(&r, pfd);
    reap(&r);
    if (r.result != 0)
        world_refusals(pl);

out:
    for (j = 0; r.jobs && j < r.njobs; j++) {
        close_fd(&r.jobs[j].out.fd);
        close_fd(&r.jobs[j].err.fd);
        close_fd(&r.jobs[j].stdin_w);
        stream_free(&r.jobs[j].out);
        stream_free(&r.jobs[j].err);
        free(r.jobs[j].prefix);
    }
    free(r.jobs);
    free(r.ended);
    free(r.lost);
    free(r.bye);
    free(pfd);
    if (r.exits_fd >= 0) {
        close_fd(&r.exits_fd);
        unlink(pl->exits);
    }
    xfer_ctl_close(&r.ctl);
    close_fd(&devnull);
    if (r.result < 0 && r.readers_lost) {
        run_note("the run completed without %d reader%s (on_reader_loss: continue or spill): "
                 "exit status %d",
                 r.readers_lost, r.readers_lost == 1 ? "" : "s", EXIT_READER_LOST);
        r.result = EXIT_READER_LOST;
    }
    if (r.result < 0)
        r.result = 0;
    if (pl->env_file && r.env_written) /* --attach: no run to join any more */
        end_run_env(pl, r.result);
    return r.result;
}
