/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: the descendants of this process, signals as poll events, spawning. */
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"

/* ---- the descendants of this process (from /proc) ---------------------------------------- */

typedef struct proc {
    pid_t pid, ppid;
    char state;
} proc_t;

/* Signal every live descendant of this process with @p sig (0: only count them). Returns the
 * number of live (not zombie) descendants. */
int signal_descendants(int sig)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    proc_t *ps = NULL;
    size_t n = 0, cap = 0, i;
    char *mark = NULL;
    int changed, alive = 0;
    pid_t self = getpid();

    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char path[64], line[512], *rp;
        FILE *f;
        proc_t p;

        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%ld/stat", atol(e->d_name));
        f = fopen(path, "r");
        if (!f)
            continue;
        rp = fgets(line, sizeof line, f);
        fclose(f);
        /* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
        if (!rp || !(rp = strrchr(line, ')')))
            continue;
        p.pid = (pid_t) atol(line);
        if (sscanf(rp + 1, " %c %d", &p.state, &p.ppid) != 2)
            continue;
        if (n == cap) {
            proc_t *np;
            cap = cap ? 2 * cap : 256;
            np = realloc(ps, cap * sizeof *ps);
            if (!np)
                break;
            ps = np;
        }
        ps[n++] = p;
    }
    closedir(d);
    mark = calloc(n ? n : 1, 1);
    if (!mark) {
        free(ps);
        return 0;
    }
    do {
        changed = 0;
        for (i = 0; i < n; i++) {
            size_t j;
            if (mark[i])
                continue;
            if (ps[i].ppid == self) {
                mark[i] = changed = 1;
                continue;
            }
            for (j = 0; j < n; j++) {
                if (mark[j] && ps[j].pid == ps[i].ppid) {
                    mark[i] = changed = 1;
                    break;
                }
            }
        }
    } while (changed);
    for (i = 0; i < n; i++) {
        if (!mark[i] || ps[i].state == 'Z' || ps[i].state == 'X')
            continue;
        alive++;
        if (sig)
            kill(ps[i].pid, sig);
    }
    free(mark);
    free(ps);
    return alive;
}

/* ---- signals: a self-pipe turns them into poll events ------------------------------------ */

int sig_pipe[2] = {-1, -1};
static const int handled_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE};
#define NHANDLED ((int) (sizeof handled_signals / sizeof handled_signals[0]))
static struct sigaction saved_actions[NHANDLED];

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char c = (unsigned char) sig;
    ssize_t rc = write(sig_pipe[1], &c, 1); /* full pipe: the loop is awake anyway */

    (void) rc;
    errno = saved;
}

int install_signals(void)
{
    struct sigaction sa;
    int i;

    if (cloexec_pipe(sig_pipe) != 0 || fcntl(sig_pipe[0], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK) != 0)
        return -1;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (i = 0; i < NHANDLED; i++) {
        sa.sa_handler = handled_signals[i] == SIGPIPE ? SIG_IGN : on_signal;
        if (sigaction(handled_signals[i], &sa, &saved_actions[i]) != 0)
            return -1;
        /* under nohup, stay deaf to hang-ups */
        if (handled_signals[i] == SIGHUP && saved_actions[i].sa_handler == SIG_IGN &&
            sigaction(SIGHUP, &saved_actions[i], NULL) != 0)
            return -1;
    }
    return 0;
}

/* In a forked child, before exec: the dispositions xfer-run found, nothing blocked. */
static void restore_signals(void)
{
    sigset_t none;
    int i;

    for (i = 0; i < NHANDLED; i++)
        sigaction(handled_signals[i], &saved_actions[i], NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Start @p argv in a new process group with the given stdin/stdout/stderr (-1: inherit). An
 * exec failure is reported through a close-on-exec pipe, so it is known when this returns. */
int spawn(char *const argv[], int in_fd, int out_fd, int err_fd, pid_t *pid_out)
{
    int ep[2], child_errno = 0;
    ssize_t n;
    pid_t pid;

    if (cloexec_pipe(ep) != 0) {
        run_error("pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        run_error("fork: %s", strerror(errno));
        close(ep[0]);
        close(ep[1]);
        return -1;
    }
    if (pid == 0) {
        int e;
        setpgid(0, 0);
        restore_signals();
        if ((in_fd >= 0 && dup2(in_fd, 0) < 0) || (out_fd >= 0 && dup2(out_fd, 1) < 0) ||
            (err_fd >= 0 && dup2(err_fd, 2) < 0)) {
            e = errno;
        } else {
            execv(argv[0], argv);
            e = errno;
        }
        n = write(ep[1], &e, sizeof e);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: no window in which a signal to the group misses it */
    close(ep[1]);
    do {
        n = read(ep[0], &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    close(ep[0]);
    if (n == (ssize_t) sizeof child_errno) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        run_error("cannot run %s: %s", argv[0], strerror(child_errno));
        return -1;
    }
    *pid_out = pid;
    return 0;
}
