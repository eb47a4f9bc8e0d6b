/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer-run: start the components of a workflow file and supervise them (docs/launcher.md).
 *
 * mpmd: one mpiexec, one application context per component in file order (the runtime takes a
 * rank's component from MPI_APPNUM). separate: one mpiexec per component, each in its own
 * process group; the runtime joins them with MPI_Comm_connect/accept (Open MPI through one
 * ompi-server that xfer-run starts). Output lines carry a "[component] " prefix. The first
 * component to fail stops the others, and xfer-run exits with its code.
 *
 * No orphans: Hydra and ORTE start their ranks in sessions of their own (measured), so a signal
 * to a launcher's process group never reaches the ranks. A launcher cleans up its ranks when it
 * gets SIGTERM; for everything that escapes it, xfer-run is a child subreaper (Linux), so what a
 * dying launcher leaves behind is re-parented here, and the final sweep stops every remaining
 * descendant (TERM, 5 s, KILL) and reaps it.
 */
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <xfer/control.h>
#include <xfer/xfer.h>

#include "run_memory.h"

#ifndef XFER_RUN_MPIEXEC
#error "the build defines XFER_RUN_MPIEXEC, the launcher of the MPI flavour"
#endif

enum {
    EXIT_USAGE = 2,     /* bad options, invalid file, command not found, start failure */
    EXIT_WALLTIME = 124 /* --walltime exceeded */
};

#define KILL_AFTER_MS     5000  /* SIGTERM (or the forwarded signal), then SIGKILL after this */
#define LEFTOVER_GRACE_MS 2000  /* leftovers of a finished launch may exit on their own first */
#define SERVER_WAIT_MS    10000 /* bound on ompi-server writing its URI, xferd its ready file */
#define XFERD_STOP_MS     3000  /* bound on xferd answering "stop" */
#define XFERD_RESTARTS    3     /* a crashed xferd is restarted (from its journal) this often */
#define LINE_MAX_BYTES    65536 /* longer output lines are split */

static int quiet;

/* ---- small helpers ------------------------------------------------------------------------ */

static void run_note(const char *fmt, ...)
{
    va_list ap;

    if (quiet)
        return;
    va_start(ap, fmt);
    fputs("xfer-run: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void run_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("xfer-run: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Only the planning stage allocates; running out of memory there ends the program before
 * anything was started. */
static void *checked(void *p)
{
    if (!p) {
        run_error("out of memory");
        exit(EXIT_USAGE);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    return checked(strdup(s));
}

static char *xprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        run_error("cannot format a string");
        exit(EXIT_USAGE);
    }
    s = checked(malloc((size_t) n + 1));
    va_start(ap, fmt);
    vsnprintf(s, (size_t) n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* A growing, NULL-terminated argument vector that owns its strings. */
typedef struct strv {
    char **v;
    size_t n, cap;
} strv_t;

static void sv_take(strv_t *s, char *str)
{
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        s->v = checked(realloc(s->v, cap * sizeof(char *)));
        s->cap = cap;
    }
    s->v[s->n++] = str;
    s->v[s->n] = NULL;
}

static void sv_push(strv_t *s, const char *str)
{
    sv_take(s, xstrdup(str));
}

static void sv_free(strv_t *s)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int set_cloexec(int fd)
{
    int flags = fcntl(fd, F_GETFD);

    return flags < 0 ? -1 : fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

static int cloexec_pipe(int p[2])
{
    if (pipe(p) != 0)
        return -1;
    if (set_cloexec(p[0]) != 0 || set_cloexec(p[1]) != 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    return 0;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Exit code of a wait status: the status itself, or 128 + signal number. */
static int status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 1;
}

static int is_exec_file(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* @p path made absolute without resolving symbolic links; "./" components dropped. */
static char *abs_path(const char *path)
{
    char cwd[PATH_MAX], *out, *w;
    const char *r;

    if (path[0] == '/') {
        out = xstrdup(path);
    } else {
        if (!getcwd(cwd, sizeof cwd)) {
            run_error("cannot get the working directory: %s", strerror(errno));
            exit(EXIT_USAGE);
        }
        out = xprintf("%s/%s", cwd, path);
    }
    /* drop "." components */
    for (r = out, w = out; *r;) {
        if (r[0] == '/' && r[1] == '.' && (r[2] == '/' || r[2] == '\0')) {
            r += 2;
            continue;
        }
        *w++ = *r++;
    }
    if (w == out)
        *w++ = '/';
    *w = '\0';
    return out;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return checked(strndup(path, (size_t) (slash - path)));
}

/* First executable @p name in PATH (absolute), NULL if none. */
static char *find_in_path(const char *name)
{
    const char *path = getenv("PATH"), *p, *end;
    char *cand;

    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (p = path;; p = end + 1) {
        end = strchr(p, ':');
        if (!end)
            end = p + strlen(p);
        if (end == p)
            cand = abs_path(name); /* an empty element is the working directory */
        else
            cand = xprintf("%.*s/%s", (int) (end - p), p, name);
        if (is_exec_file(cand)) {
            char *a = abs_path(cand);
            free(cand);
            return a;
        }
        free(cand);
        if (*end == '\0')
            return NULL;
    }
}

/* ---- output forwarding: "[name] " before every line --------------------------------------- */

typedef struct stream {
    int fd;             /* read end; -1 at EOF */
    int dest;           /* 1 or 2 */
    const char *prefix; /* "[name] " */
    char *buf;          /* the pending partial line */
    size_t len;
} stream_t;

static int dest_broken[3]; /* a reader went away (EPIPE): drop that output, keep draining */

static void emit(stream_t *s, const char *data, size_t len, int add_newline)
{
    struct iovec iov[3];
    int n = 0, i;

    if (dest_broken[s->dest])
        return;
    if (s->prefix) {
        iov[n].iov_base = (void *) s->prefix;
        iov[n++].iov_len = strlen(s->prefix);
    }
    iov[n].iov_base = (void *) data;
    iov[n++].iov_len = len;
    if (add_newline) {
        iov[n].iov_base = "\n";
        iov[n++].iov_len = 1;
    }
    /* one writev per line keeps lines whole when several sources share the destination */
    i = 0;
    while (i < n) {
        ssize_t w = writev(s->dest, iov + i, n - i);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            dest_broken[s->dest] = 1;
            return;
        }
        while (i < n && (size_t) w >= iov[i].iov_len)
            w -= (ssize_t) iov[i++].iov_len;
        if (i < n) {
            iov[i].iov_base = (char *) iov[i].iov_base + w;
            iov[i].iov_len -= (size_t) w;
        }
    }
}

/* Read what is available on @p s and forward the complete lines. Returns 1 at EOF (the
 * partial last line is flushed and the fd closed), 0 otherwise. */
static int stream_pump(stream_t *s)
{
    ssize_t n;
    size_t start = 0, i, old = s->len;

    n = read(s->fd, s->buf + s->len, LINE_MAX_BYTES - s->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0) {
        if (s->len)
            emit(s, s->buf, s->len, 1);
        s->len = 0;
        close_fd(&s->fd);
        return 1;
    }
    s->len += (size_t) n;
    for (i = old; i < s->len; i++) {
        if (s->buf[i] == '\n') {
            emit(s, s->buf + start, i + 1 - start, 0);
            start = i + 1;
        }
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
    if (s->len == LINE_MAX_BYTES) {
        emit(s, s->buf, s->len, 1);
        s->len = 0;
    }
    return 0;
}

static int stream_init(stream_t *s, int fd, int dest, const char *prefix)
{
    s->fd = fd;
    s->dest = dest;
    s->prefix = prefix;
    s->len = 0;
    s->buf = malloc(LINE_MAX_BYTES);
    return s->buf ? 0 : -1;
}

/* ---- internal mode: --exec-prefixed NAME -- CMD ARGS ------------------------------------ */

/* Close every descriptor but 1, 2, @p a and @p b (the prefixer must not hold the launcher's
 * sockets or the application's files open after the application exits). */
static void close_other_fds(int a, int b)
{
    int fds[256], n, i;

    do {
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        int dfd;

        if (!d)
            return;
        dfd = dirfd(d);
        n = 0;
        while ((e = readdir(d)) != NULL && n < (int) (sizeof fds / sizeof fds[0])) {
            int fd = atoi(e->d_name);
            if (e->d_name[0] < '0' || e->d_name[0] > '9')
                continue;
            if (fd != 1 && fd != 2 && fd != a && fd != b && fd != dfd)
                fds[n++] = fd;
        }
        closedir(d);
        for (i = 0; i < n; i++)
            close(fds[i]);
    } while (n == (int) (sizeof fds / sizeof fds[0]));
}

/* A pseudo-terminal whose slave passes bytes unchanged (no "\n" -> "\r\n", no echo):
 * p[0] the master (read end), p[1] the slave (write end). */
static int raw_pty(int p[2])
{
    struct termios t;
    const char *name;
    int m = posix_openpt(O_RDWR | O_NOCTTY), s = -1;

    if (m < 0)
        return -1;
    if (grantpt(m) != 0 || unlockpt(m) != 0 || !(name = ptsname(m)) ||
        (s = open(name, O_RDWR | O_NOCTTY)) < 0 || tcgetattr(s, &t) != 0)
        goto fail;
    t.c_oflag &= ~(tcflag_t) OPOST;
    t.c_lflag &= ~(tcflag_t) (ECHO | ICANON | ISIG | IEXTEN);
    if (tcsetattr(s, TCSANOW, &t) != 0)
        goto fail;
    p[0] = m;
    p[1] = s;
    return 0;
fail:
    if (s >= 0)
        close(s);
    close(m);
    return -1;
}

/* The channel that replaces descriptor @p fd of the application: a terminal where the launcher
 * gave it one (Open MPI does, so stdout stays line-buffered), else a pipe. */
static int output_channel(int fd, int p[2])
{
    return isatty(fd) ? raw_pty(p) : pipe(p);
}

static void prefixer(const char *prefix, int out_fd, int err_fd)
{
    stream_t s[2];
    struct pollfd pfd[2];
    int open_streams = 2, i;

    signal(SIGPIPE, SIG_IGN);
    close_other_fds(out_fd, err_fd);
    if (stream_init(&s[0], out_fd, 1, prefix) != 0 || stream_init(&s[1], err_fd, 2, prefix) != 0)
        _exit(1);
    while (open_streams > 0) {
        for (i = 0; i < 2; i++) {
            pfd[i].fd = s[i].fd;
            pfd[i].events = POLLIN;
            pfd[i].revents = 0;
        }
        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        for (i = 0; i < 2; i++)
            if (s[i].fd >= 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                open_streams -= stream_pump(&s[i]);
    }
    _exit(0);
}

/* The wrapper of one MPMD application context: the forked child prefixes the output, this
 * process becomes the application (mpiexec keeps tracking the pid it started). */
static int exec_prefixed(int argc, char **argv)
{
    int po[2], pe[2];
    pid_t pid;
    char *prefix;

    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        run_error("usage: xfer-run --exec-prefixed NAME -- COMMAND [ARGS...]");
        return EXIT_USAGE;
    }
    prefix = xprintf("[%s] ", argv[2]);
    if (output_channel(1, po) != 0 || output_channel(2, pe) != 0) {
        run_error("%s: cannot make the output channels: %s", argv[2], strerror(errno));
        return EXIT_USAGE;
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        run_error("%s: fork: %s", argv[2], strerror(errno));
        return EXIT_USAGE;
    }
    if (pid == 0) {
        close(po[1]);
        close(pe[1]);
        prefixer(prefix, po[0], pe[0]);
    }
    close(po[0]);
    close(pe[0]);
    if (dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0) {
        run_error("%s: dup2: %s", argv[2], strerror(errno));
        return EXIT_USAGE;
    }
    close(po[1]);
    close(pe[1]);
    execv(argv[4], argv + 4);
    run_error("component %s: cannot run %s: %s", argv[2], argv[4], strerror(errno));
    return 127;
}

/* ---- the descendants of this process (from /proc) ---------------------------------------- */

typedef struct proc {
    pid_t pid, ppid;
    char state;
} proc_t;

/* Signal every live descendant of this process with @p sig (0: only count them). Returns the
 * number of live (not zombie) descendants. */
static int signal_descendants(int sig)
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

static int sig_pipe[2] = {-1, -1};
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

static int install_signals(void)
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
static int spawn(char *const argv[], int in_fd, int out_fd, int err_fd, pid_t *pid_out)
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

/* ---- the launch plan ---------------------------------------------------------------------- */

typedef struct opts {
    const char *file;
    const char *mpiexec;
    const char *mpiexec_flags;
    const char *run_dir;
    const char *launch;
    const char *walltime_text;
    const char *xferd;
    double walltime;
    int check, print_config, dry_run, keep_run_dir, no_daemon;
} opts_t;

typedef struct plan {
    const xfer_config_t *cfg;
    xfer_launch_t mode;
    int openmpi;
    char *self;        /* this executable, absolute */
    char *config_path; /* the workflow file, absolute */
    char *run_dir;     /* absolute */
    int run_dir_tmp;   /* made by mkdtemp: removed at the end */
    char *uri;         /* ompi-server's URI file (Open MPI, separate) */
    strv_t server;     /* the ompi-server command */
    strv_t *lines;     /* the mpiexec commands: one (mpmd) or one per component (separate) */
    int nlines;
    strv_t rootenv; /* NAME=value xfer-run adds to its own environment */
    /* the control plane: xferd, started here unless the file names a running one */
    char *endpoint;    /* NULL: no control plane */
    char *token_file;  /* the workflow token */
    int make_token;    /* xfer-run writes a fresh token there */
    char *ready;       /* xferd writes its endpoint here once it serves */
    char *journal;     /* xferd's journal */
    strv_t xferd;      /* the xferd command (empty: none to start) */
    int hb_timeout_ms; /* xferd's failure detection bound */
} plan_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xfer-run [options] FILE.yaml\n"
            "Start the components of a workflow file and supervise them.\n\n"
            "  --check                 validate FILE and exit\n"
            "  --print-config          print the effective configuration and exit\n"
            "  --dry-run               print the commands that would run and exit\n"
            "  --launch MODE           auto | mpmd | separate (overrides the file's launch)\n"
            "  --mpiexec PATH          launcher (default %s)\n"
            "  --mpiexec-flags FLAGS   extra launcher flags, split on spaces\n"
            "                          (default: $XFER_RUN_MPIEXEC_FLAGS)\n"
            "  --run-dir DIR           rendezvous directory (default: the file's run_dir, else\n"
            "                          a fresh $TMPDIR/xfer-run.XXXXXX removed at the end)\n"
            "  --keep-run-dir          do not remove the fresh run directory\n"
            "  --walltime SEC          stop everything after SEC seconds (exit 124)\n"
            "  --xferd PATH            the control daemon (default: next to xfer-run, then\n"
            "                          the build tree, then PATH)\n"
            "  --no-daemon             run without the control plane (port files, no\n"
            "                          heartbeats or failure notices)\n"
            "  -q, --quiet             no output prefixes, no launcher notes\n"
            "  -h, --help              this text\n"
            "  --version               version and MPI flavour\n\n"
            "exit status: 0 all components succeeded; the first failing component's code;\n"
            "124 walltime exceeded; 128+N signal N; 2 usage, configuration or start errors\n",
            XFER_RUN_MPIEXEC);
}

/* Returns 0 to go on, 1 to exit 0 (help, version), -1 on a usage error. */
static int parse_args(int argc, char **argv, opts_t *o)
{
    int i;

    memset(o, 0, sizeof *o);
    o->mpiexec = XFER_RUN_MPIEXEC;
    o->mpiexec_flags = getenv("XFER_RUN_MPIEXEC_FLAGS");
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL, *eq;
        char key[64];
        int takes_value;

        if (strcmp(a, "--") == 0) {
            if (i + 1 < argc && !o->file && i + 2 == argc) {
                o->file = argv[i + 1];
                break;
            }
            run_error("expected one FILE after --");
            return -1;
        }
        if (a[0] != '-' || a[1] == '\0') {
            if (o->file) {
                run_error("more than one workflow file: %s and %s", o->file, a);
                return -1;
            }
            o->file = a;
            continue;
        }
        /* --key=value or --key value */
        eq = strchr(a, '=');
        if (eq && strncmp(a, "--", 2) == 0 && (size_t) (eq - a) < sizeof key) {
            memcpy(key, a, (size_t) (eq - a));
            key[eq - a] = '\0';
            val = eq + 1;
        } else {
            snprintf(key, sizeof key, "%s", a);
        }
        takes_value = !strcmp(key, "--launch") || !strcmp(key, "--mpiexec") ||
                      !strcmp(key, "--mpiexec-flags") || !strcmp(key, "--run-dir") ||
                      !strcmp(key, "--walltime") || !strcmp(key, "--xferd");
        if (takes_value && !val) {
            if (i + 1 >= argc) {
                run_error("%s needs a value", key);
                return -1;
            }
            val = argv[++i];
        } else if (!takes_value && val) {
            run_error("%s takes no value", key);
            return -1;
        }
        if (!strcmp(key, "-h") || !strcmp(key, "--help")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(key, "--version")) {
            printf("xfer-run (libxfer %s, MPI flavour %s)\n", XFER_VERSION_STRING, XFER_MPI_FLAVOR);
            return 1;
        } else if (!strcmp(key, "--check")) {
            o->check = 1;
        } else if (!strcmp(key, "--print-config")) {
            o->print_config = 1;
        } else if (!strcmp(key, "--dry-run")) {
            o->dry_run = 1;
        } else if (!strcmp(key, "--keep-run-dir")) {
            o->keep_run_dir = 1;
        } else if (!strcmp(key, "--no-daemon")) {
            o->no_daemon = 1;
        } else if (!strcmp(key, "--xferd")) {
            o->xferd = val;
        } else if (!strcmp(key, "-q") || !strcmp(key, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(key, "--launch")) {
            if (strcmp(val, "auto") && strcmp(val, "mpmd") && strcmp(val, "separate")) {
                run_error("--launch: expected auto|mpmd|separate, got \"%s\"", val);
                return -1;
            }
            o->launch = val;
        } else if (!strcmp(key, "--mpiexec")) {
            o->mpiexec = val;
        } else if (!strcmp(key, "--mpiexec-flags")) {
            o->mpiexec_flags = val;
        } else if (!strcmp(key, "--run-dir")) {
            if (!*val) {
                run_error("--run-dir: empty directory name");
                return -1;
            }
            o->run_dir = val;
        } else if (!strcmp(key, "--walltime")) {
            char *end;
            errno = 0;
            o->walltime = strtod(val, &end);
            if (errno || end == val || *end || !(o->walltime > 0) || o->walltime > 1e9) {
                run_error("--walltime: expected a positive number of seconds, got \"%s\"", val);
                return -1;
            }
            o->walltime_text = val;
        } else {
            run_error("unknown option %s (see xfer-run --help)", a);
            return -1;
        }
    }
    if (!o->file) {
        run_error("no workflow file (see xfer-run --help)");
        return -1;
    }
    return 0;
}

/* The device line of MPICH's version text, e.g. "ch4:ucx" (NULL when absent). */
static char *mpich_device(const char *version)
{
    const char *p = strstr(version, "MPICH Device:"), *end;

    if (!p)
        return NULL;
    p += strlen("MPICH Device:");
    p += strspn(p, " \t");
    end = p + strcspn(p, " \t\r\n");
    return checked(strndup(p, (size_t) (end - p)));
}

/* launch: auto -> separate where the MPI library can open ports, else mpmd. MPI_Get_library_
 * version may be called before MPI_Init (MPI-3.1 sec. 8.1.1); xfer-run never initializes MPI. */
static xfer_launch_t auto_launch(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len = 0;
    xfer_launch_t mode = XFER_LAUNCH_MPMD;

    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) {
        run_note("launch auto: cannot read the MPI library version; using mpmd");
        return XFER_LAUNCH_MPMD;
    }
    if (strstr(version, "Open MPI")) {
        char *server = find_in_path("ompi-server");
        if (server)
            mode = XFER_LAUNCH_SEPARATE;
        else
            run_note("launch auto: ompi-server not found in PATH; using mpmd");
        free(server);
    } else if (strstr(version, "MPICH")) {
        /* ch4:ucx (Debian's build) cannot open ports; ch3 can */
        char *dev = mpich_device(version);
        if (dev && strncmp(dev, "ch3", 3) == 0)
            mode = XFER_LAUNCH_SEPARATE;
        free(dev);
    }
    return mode;
}

static int choose_launch(const opts_t *o, const xfer_config_t *cfg, xfer_launch_t *mode)
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
    *mode = want == XFER_LAUNCH_AUTO ? auto_launch() : want;
    return 0;
}

static char *resolve_command(const char *component, const char *cmd, const char *self_dir,
                             const char *yaml_dir)
{
    char *path;

    if (strchr(cmd, '/')) {
        char *joined = cmd[0] == '/' ? xstrdup(cmd) : xprintf("%s/%s", yaml_dir, cmd);
        path = abs_path(joined);
        free(joined);
        if (!is_exec_file(path)) {
            run_error("component %s: command \"%s\" (%s): %s", component, cmd, path,
                      access(path, F_OK) != 0 ? strerror(errno) : "not an executable file");
            free(path);
            return NULL;
        }
        return path;
    }
    path = xprintf("%s/%s", self_dir, cmd);
    if (is_exec_file(path))
        return path;
    free(path);
    path = find_in_path(cmd);
    if (!path)
        run_error("component %s: command \"%s\" not found (looked in %s and PATH)", component, cmd,
                  self_dir);
    return path;
}

/* The environment flags of one application context: -x NAME=VALUE (Open MPI) or
 * -env NAME VALUE (MPICH/Hydra). */
static void add_env(strv_t *s, int openmpi, const char *name, const char *value)
{
    if (openmpi) {
        sv_push(s, "-x");
        sv_take(s, xprintf("%s=%s", name, value));
    } else {
        sv_push(s, "-env");
        sv_push(s, name);
        sv_push(s, value);
    }
}

static void add_context(const plan_t *pl, int c, const char *cmd, strv_t *s)
{
    const xfer_cfg_component_t *k = &pl->cfg->components[c];
    int i;

    sv_push(s, "-n");
    sv_take(s, xprintf("%d", k->nprocs));
    add_env(s, pl->openmpi, "XFER_CONFIG", pl->config_path);
    add_env(s, pl->openmpi, "XFER_COMPONENT", k->name);
    add_env(s, pl->openmpi, "XFER_RUN_DIR", pl->run_dir);
    add_env(s, pl->openmpi, "XFER_LAUNCH", pl->mode == XFER_LAUNCH_MPMD ? "mpmd" : "separate");
    if (pl->endpoint) {
        add_env(s, pl->openmpi, "XFER_CONTROL_ENDPOINT", pl->endpoint);
        if (pl->token_file)
            add_env(s, pl->openmpi, "XFER_CONTROL_TOKEN_FILE", pl->token_file);
    }
    for (i = 0; i < k->nenv; i++) {
        const char *eq = strchr(k->env[i], '=');
        char *name;
        if (!eq)
            continue; /* the parser only hands out NAME=value */
        name = checked(strndup(k->env[i], (size_t) (eq - k->env[i])));
        add_env(s, pl->openmpi, name, eq + 1);
        free(name);
    }
    if (pl->mode == XFER_LAUNCH_MPMD && !quiet) {
        sv_push(s, pl->self);
        sv_push(s, "--exec-prefixed");
        sv_push(s, k->name);
        sv_push(s, "--");
    }
    sv_push(s, cmd);
    for (i = 1; i < k->argc; i++)
        sv_push(s, k->argv[i]);
}

/* mpiexec and the flags every launch of this run shares. */
static void add_launcher(const plan_t *pl, const opts_t *o, strv_t *s)
{
    const char *f = o->mpiexec_flags ? o->mpiexec_flags : "";
    int oversubscribe = 0;

    sv_push(s, o->mpiexec);
    while (*f) {
        size_t n;
        f += strspn(f, " \t");
        n = strcspn(f, " \t");
        if (n) {
            sv_take(s, checked(strndup(f, n)));
            if (!strcmp(s->v[s->n - 1], "--oversubscribe"))
                oversubscribe = 1;
        }
        f += n;
    }
    if (pl->openmpi && !oversubscribe)
        sv_push(s, "--oversubscribe"); /* more ranks than cores is the normal case here */
    if (pl->openmpi && pl->mode == XFER_LAUNCH_SEPARATE) {
        sv_push(s, "--ompi-server");
        sv_take(s, xprintf("file:%s", pl->uri));
    }
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
    tmpl = xprintf("%s/xfer-run.XXXXXX", tmp);
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

/* xferd: --xferd, $XFER_XFERD, next to this executable, the build tree, PATH. */
static char *find_xferd(const opts_t *o, const char *self_dir)
{
    const char *env = getenv("XFER_XFERD");
    char *p;

    if (o->xferd)
        return is_exec_file(o->xferd) ? abs_path(o->xferd) : NULL;
    if (env && *env)
        return is_exec_file(env) ? abs_path(env) : NULL;
    p = xprintf("%s/xferd", self_dir);
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
    pl->endpoint = xprintf("ipc://%s/xferd.sock", pl->run_dir);
    if (strlen(pl->endpoint) > 100) { /* sockaddr_un.sun_path holds 108 bytes */
        run_error("run directory %s is too long for xferd's ipc socket (at most 86 characters): "
                  "choose a shorter --run-dir, or run xferd yourself and set control.endpoint",
                  pl->run_dir);
        free(path);
        return -1;
    }
    if (!pl->token_file) {
        pl->token_file = xprintf("%s/token", pl->run_dir);
        pl->make_token = 1;
    }
    pl->ready = xprintf("%s/xferd.ready", pl->run_dir);
    pl->journal = xprintf("%s/xferd.journal", pl->run_dir);
    sv_take(&pl->xferd, path);
    sv_push(&pl->xferd, "--config");
    sv_push(&pl->xferd, pl->config_path);
    sv_push(&pl->xferd, "--run-dir");
    sv_push(&pl->xferd, pl->run_dir);
    sv_push(&pl->xferd, "--endpoint");
    sv_push(&pl->xferd, pl->endpoint);
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

static int build_plan(plan_t *pl, const opts_t *o, const xfer_config_t *cfg)
{
    char self[PATH_MAX], *self_dir = NULL, *yaml_dir = NULL, **cmds = NULL;
    ssize_t n;
    int c, rc = -1;

    memset(pl, 0, sizeof *pl);
    pl->cfg = cfg;
    pl->openmpi = strcmp(XFER_MPI_FLAVOR, "openmpi") == 0;
    if (choose_launch(o, cfg, &pl->mode) != 0)
        return -1;
    n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0) {
        run_error("cannot find this executable (/proc/self/exe): %s", strerror(errno));
        return -1;
    }
    self[n] = '\0';
    pl->self = xstrdup(self);
    self_dir = dir_of(self);
    pl->config_path = abs_path(o->file);
    yaml_dir = dir_of(pl->config_path);

    /* everything is checked before anything starts */
    if (!is_exec_file(o->mpiexec)) {
        run_error("launcher %s: %s", o->mpiexec,
                  access(o->mpiexec, F_OK) != 0 ? strerror(errno) : "not an executable file");
        goto out;
    }
    cmds = checked(calloc((size_t) cfg->ncomponents, sizeof(char *)));
    for (c = 0; c < cfg->ncomponents; c++) {
        cmds[c] = resolve_command(cfg->components[c].name, cfg->components[c].argv[0], self_dir,
                                  yaml_dir);
        if (!cmds[c])
            goto out;
    }
    if (pl->openmpi && pl->mode == XFER_LAUNCH_SEPARATE) {
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
    if (pl->server.n) {
        pl->uri = xprintf("%s/ompi-server.uri", pl->run_dir);
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
            sv_take(&pl->rootenv, xprintf("%s=1", names[i]));
        }
    }

    if (pl->mode == XFER_LAUNCH_MPMD) {
        pl->nlines = 1;
        pl->lines = checked(calloc(1, sizeof(strv_t)));
        add_launcher(pl, o, &pl->lines[0]);
        for (c = 0; c < cfg->ncomponents; c++) {
            if (c > 0)
                sv_push(&pl->lines[0], ":");
            add_context(pl, c, cmds[c], &pl->lines[0]);
        }
    } else {
        pl->nlines = cfg->ncomponents;
        pl->lines = checked(calloc((size_t) cfg->ncomponents, sizeof(strv_t)));
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

static void free_plan(plan_t *pl, int keep_run_dir)
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
    free(pl->token_file);
    free(pl->ready);
    free(pl->journal);
    free(pl->uri);
    free(pl->run_dir);
    free(pl->config_path);
    free(pl->self);
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

static void print_command(const strv_t *env, const strv_t *cmd)
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

/* ---- running ------------------------------------------------------------------------------ */

typedef struct job {
    const char *name; /* the component (separate) or "mpiexec" (mpmd) */
    char *prefix;
    pid_t pid; /* > 0 while running */
    stream_t out, err;
    int stdin_w; /* Hydra, separate: the write end of its stdin, held open while it runs */
} job_t;

typedef struct runner {
    job_t *jobs;
    int njobs, running;
    int report_components; /* separate: name the failing component */
    pid_t server;
    int server_stopped;
    pid_t xferd;
    int xferd_stopped;
    int xferd_restarts;
    xfer_ctl_t *ctl;  /* xfer-run's connection to xferd: it reports exits */
    int grace_ms;     /* with xferd: a failure's peers get this long to fail on their own */
    int64_t stop_due; /* when the others are stopped after a failure (0: not pending) */
    const plan_t *pl;
    int devnull;
    int result;        /* exit code, fixed by the first cause; -1 while none */
    int64_t stop_at;   /* when the stop signal went out (0: not stopping) */
    int64_t walltime;  /* deadline (0: none) */
    int64_t leftovers; /* when the launch ended with processes left (0: not yet) */
    const char *walltime_text;
} runner_t;

static void stop_jobs(runner_t *r, int sig)
{
    int j;

    for (j = 0; j < r->njobs; j++)
        if (r->jobs[j].pid > 0)
            kill(-r->jobs[j].pid, sig);
    r->stop_at = now_ms();
}

/* Tell xferd that a job's components ended: it declares those that did not say goodbye failed
 * and notifies their peers. */
static void report_exit(runner_t *r, int j, int code)
{
    int c, c0 = j, c1 = j + 1;

    if (!r->ctl)
        return;
    if (!r->report_components) { /* mpmd: the one job held every component */
        c0 = 0;
        c1 = r->pl->cfg->ncomponents;
    }
    for (c = c0; c < c1; c++) {
        xfer_ctl_msg_t *m = NULL;
        if (xfer_ctl_msg_new("exited", &m) != XFER_SUCCESS ||
            xfer_ctl_set_str(m, "component", r->pl->cfg->components[c].name) != XFER_SUCCESS ||
            xfer_ctl_set_int(m, "code", code) != XFER_SUCCESS ||
            xfer_ctl_send(r->ctl, m) != XFER_SUCCESS)
            run_note("cannot report the exit of %s to xferd: %s", r->pl->cfg->components[c].name,
                     xfer_last_error());
        xfer_ctl_msg_free(&m);
    }
}

/* After component @p failed failed: do running peers of it hold a session with xferd? They
 * then learn of the failure from xferd and end with an error naming it; give them that
 * chance before stopping them. */
static int peers_registered(runner_t *r, int failed)
{
    const xfer_config_t *cfg = r->pl->cfg;
    xfer_ctl_msg_t *req = NULL, *rep = NULL;
    int i, k, n = 0;

    if (!r->ctl || !r->report_components || xfer_ctl_msg_new("status", &req) != XFER_SUCCESS)
        return 0;
    if (xfer_ctl_request(r->ctl, req, 1000, &rep) == XFER_SUCCESS) {
        for (i = 0; i < xfer_ctl_nitems(rep, "components"); i++) {
            const xfer_ctl_msg_t *it = xfer_ctl_item(rep, "components", i);
            const char *name = xfer_ctl_str(it, "name", "");
            if (strcmp(xfer_ctl_str(it, "state", ""), "running") != 0)
                continue;
            for (k = 0; k < cfg->nchannels; k++) {
                const xfer_cfg_channel_t *ch = &cfg->channels[k];
                int other = ch->from == failed ? ch->to : ch->to == failed ? ch->from : -1;
                if (other >= 0 && strcmp(cfg->components[other].name, name) == 0 &&
                    r->jobs[other].pid > 0) {
                    n++;
                    break;
                }
            }
        }
    }
    xfer_ctl_msg_free(&req);
    xfer_ctl_msg_free(&rep);
    return n;
}

static void reap(runner_t *r)
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
        r->result = code;
        if (!r->report_components) {
            run_note("mpiexec exited with code %d", code);
        } else if (WIFSIGNALED(st)) {
            run_error("component %s failed (signal %d, %s); stopping the others", r->jobs[j].name,
                      WTERMSIG(st), strsignal(WTERMSIG(st)));
        } else {
            run_error("component %s failed (exit code %d); stopping the others", r->jobs[j].name,
                      code);
        }
        if (r->running > 0 && r->grace_ms > 0 && peers_registered(r, j) > 0)
            r->stop_due = now_ms() + r->grace_ms; /* the peers fail on their own first */
        else
            stop_jobs(r, SIGTERM);
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
static void handle_signals(runner_t *r)
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

/* Supervise until every launcher has exited, the output is drained and no descendant is left. */
static void supervise(runner_t *r, struct pollfd *pfd)
{
    for (;;) {
        int64_t now, deadline = 0;
        int nfd = 0, j, timeout, alive = 0;

        reap(r);
        now = now_ms();
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
        if (r->running == 0) {
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
        for (j = 0; j < r->njobs; j++) {
            if (r->jobs[j].out.fd >= 0 && (pfd[1 + 2 * j].revents & (POLLIN | POLLHUP | POLLERR)))
                stream_pump(&r->jobs[j].out);
            if (r->jobs[j].err.fd >= 0 && (pfd[2 + 2 * j].revents & (POLLIN | POLLHUP | POLLERR)))
                stream_pump(&r->jobs[j].err);
        }
    }
}

/* Start ompi-server and wait (bounded) for its URI file. */
static int start_server(runner_t *r, const plan_t *pl, int devnull)
{
    int64_t deadline;

    unlink(pl->uri);
    if (spawn(pl->server.v, devnull, devnull, -1, &r->server) != 0)
        return -1;
    deadline = now_ms() + SERVER_WAIT_MS;
    for (;;) {
        struct pollfd pfd = {sig_pipe[0], POLLIN, 0};
        struct stat sb;
        FILE *f;

        /* ready when the URI line is complete */
        if (stat(pl->uri, &sb) == 0 && sb.st_size > 0 && (f = fopen(pl->uri, "r")) != NULL) {
            int c, last = EOF;
            while ((c = fgetc(f)) != EOF)
                last = c;
            fclose(f);
            if (last == '\n')
                return 0;
        }
        reap(r);
        if (r->server == 0) {
            run_error("ompi-server exited before writing %s", pl->uri);
            return -1;
        }
        if (now_ms() >= deadline) {
            run_error("ompi-server did not write %s within %d s", pl->uri, SERVER_WAIT_MS / 1000);
            return -1;
        }
        if (poll(&pfd, 1, 20) > 0) {
            handle_signals(r);
            if (r->stop_at)
                return -1;
        }
    }
}

/* A fresh workflow token, readable by the owner only. */
static int write_token(const char *path)
{
    char tok[65];
    int fd;

    if (xfer_ctl_make_token(tok, 32) != XFER_SUCCESS) {
        run_error("cannot make a workflow token: %s", xfer_last_error());
        return -1;
    }
    unlink(path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, tok, 64) != 64 || write(fd, "\n", 1) != 1) {
        run_error("cannot write the workflow token %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return close(fd) == 0 ? 0 : -1;
}

/* Start xferd when the plan has one and wait (bounded) for its ready file; then connect. */
static int start_xferd(runner_t *r, const plan_t *pl, int devnull)
{
    xfer_ctl_opts_t co;
    char *token = NULL;
    int64_t deadline;
    int rc;

    if (!pl->endpoint)
        return 0;
    if (pl->xferd.n) {
        if (pl->make_token && write_token(pl->token_file) != 0)
            return -1;
        unlink(pl->ready);
        /* a journal of an earlier run in a reused run directory is not this run's state */
        if (pl->journal && unlink(pl->journal) != 0 && errno != ENOENT) {
            run_error("cannot remove the old journal %s: %s", pl->journal, strerror(errno));
            return -1;
        }
        if (spawn(pl->xferd.v, devnull, devnull, -1, &r->xferd) != 0)
            return -1;
        deadline = now_ms() + SERVER_WAIT_MS;
        for (;;) {
            struct pollfd pfd = {sig_pipe[0], POLLIN, 0};
            if (access(pl->ready, F_OK) == 0) /* written whole, then renamed */
                break;
            reap(r);
            if (r->xferd == 0) {
                run_error("xferd exited before it was ready (see its messages above)");
                return -1;
            }
            if (now_ms() >= deadline) {
                run_error("xferd did not write %s within %d s", pl->ready, SERVER_WAIT_MS / 1000);
                return -1;
            }
            if (poll(&pfd, 1, 20) > 0) {
                handle_signals(r);
                if (r->stop_at)
                    return -1;
            }
        }
    }
    if (xfer_ctl_read_token(pl->token_file, &token) != XFER_SUCCESS) {
        run_error("%s", xfer_last_error());
        return -1;
    }
    co.endpoint = pl->endpoint;
    co.workflow = pl->cfg->workflow;
    co.token = token;
    co.server_key = pl->cfg->curve_public_key;
    rc = xfer_ctl_connect(&co, &r->ctl) == XFER_SUCCESS ? 0 : -1;
    if (rc != 0)
        run_error("cannot reach xferd at %s: %s", pl->endpoint, xfer_last_error());
    free(token);
    return rc;
}

static int run(const plan_t *pl, const opts_t *o)
{
    runner_t r;
    struct pollfd *pfd = NULL;
    int devnull = -1, stdin_fd, j;

    memset(&r, 0, sizeof r);
    r.result = -1;
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

    r.jobs = calloc((size_t) r.njobs, sizeof(job_t));
    pfd = calloc((size_t) (1 + 2 * r.njobs), sizeof *pfd);
    if (!r.jobs || !pfd) {
        run_error("out of memory");
        r.result = EXIT_USAGE;
        goto out;
    }
    for (j = 0; j < r.njobs; j++) {
        job_t *jb = &r.jobs[j];
        jb->name = pl->mode == XFER_LAUNCH_SEPARATE ? pl->cfg->components[j].name : "mpiexec";
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
    for (j = 0; j < r.njobs && !r.stop_at; j++) {
        job_t *jb = &r.jobs[j];
        int po[2] = {-1, -1}, pe[2] = {-1, -1}, rc;

        handle_signals(&r); /* a signal now: start no more */
        if (r.stop_at)
            break;

        if (pl->mode == XFER_LAUNCH_SEPARATE && !quiet) {
            jb->prefix = xprintf("[%s] ", jb->name);
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
         * MPICH launch gets an empty stdin that ends only when it has exited. */
        if (pl->mode == XFER_LAUNCH_SEPARATE && !pl->openmpi) {
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

out:
    for (j = 0; r.jobs && j < r.njobs; j++) {
        close_fd(&r.jobs[j].out.fd);
        close_fd(&r.jobs[j].err.fd);
        close_fd(&r.jobs[j].stdin_w);
        free(r.jobs[j].out.buf);
        free(r.jobs[j].err.buf);
        free(r.jobs[j].prefix);
    }
    free(r.jobs);
    free(pfd);
    xfer_ctl_close(&r.ctl);
    close_fd(&devnull);
    return r.result < 0 ? 0 : r.result;
}

int main(int argc, char **argv)
{
    opts_t o;
    xfer_config_t *cfg = NULL;
    plan_t pl;
    int rc, i;
    xfer_status_t st;

    if (argc >= 2 && strcmp(argv[1], "--exec-prefixed") == 0)
        return exec_prefixed(argc, argv);
    rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : EXIT_USAGE;

    st = xfer_config_load(o.file, &cfg);
    if (st != XFER_SUCCESS) {
        const char *msg = xfer_last_error();
        if (msg && *msg)
            fprintf(stderr, "%s\n", msg);
        else
            fprintf(stderr, "%s: %s\n", o.file, xfer_status_string(st));
        return EXIT_USAGE;
    }
    rc = 0;
    if (o.check) {
        printf("%s: ok (workflow %s: %d components, %d channels)\n", o.file, cfg->workflow,
               cfg->ncomponents, cfg->nchannels);
        fflush(stdout);
        xfer_run_memory_check(cfg, stdout, stderr); /* warnings only: the file is valid */
    }
    if (o.print_config) {
        fflush(stdout);
        st = xfer_config_print(cfg, stdout);
        if (st != XFER_SUCCESS) {
            run_error("cannot print the configuration: %s", xfer_last_error());
            rc = EXIT_USAGE;
        }
    }
    if (o.check || o.print_config)
        goto out;

    if (build_plan(&pl, &o, cfg) != 0) {
        rc = EXIT_USAGE;
        goto plan_out;
    }
    if (o.dry_run) {
        if (pl.server.n)
            print_command(&pl.rootenv, &pl.server);
        if (pl.xferd.n)
            print_command(&pl.rootenv, &pl.xferd);
        for (i = 0; i < pl.nlines; i++)
            print_command(&pl.rootenv, &pl.lines[i]);
        goto plan_out;
    }
    fflush(NULL);
    rc = run(&pl, &o);

plan_out:
    free_plan(&pl, o.keep_run_dir);
out:
    if (fflush(stdout) != 0 && rc == 0)
        rc = EXIT_USAGE;
    xfer_config_free(&cfg);
    return rc;
}
