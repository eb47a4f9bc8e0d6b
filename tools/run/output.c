/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: output forwarding ("[name] " before every line) and the --exec-prefixed mode. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "common/logline.h"
#include "run.h"

/* ---- output forwarding: "[name] " before every line --------------------------------------- */

static int dest_broken[3]; /* a reader went away (EPIPE): drop that output, keep draining */

/* One line (its prefix, @p data, a newline when @p add_newline) in one write: a line written
 * in pieces (a writev's parts may reach the reader apart, through a terminal especially) can
 * be cut by another writer of the destination. A pipe takes up to PIPE_BUF bytes at once; a
 * longer line (rare: up to LINE_MAX_BYTES) is still one call, which a full pipe may split. */
static void emit(stream_t *s, const char *data, size_t len, int add_newline)
{
    size_t n = s->plen;

    if (dest_broken[s->dest])
        return;
    memcpy(s->line + n, data, len);
    n += len;
    if (add_newline)
        s->line[n++] = '\n';
    if (xfer_write_all(s->dest, s->line, n) != 0)
        dest_broken[s->dest] = 1;
}

/* A Python interpreter's last words when an import failed: kept for xfer-run, which names the
 * component's interpreter beside them (supervise.c). */
static void catch_import_error(stream_t *s, const char *line, size_t len)
{
    static const char *const kinds[] = {"ModuleNotFoundError: ", "ImportError: "};
    size_t i, n;

    if (!s->import_err || s->import_err[0])
        return;
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    for (i = 0; i < 2; i++) {
        n = strlen(kinds[i]);
        if (len > n && !strncmp(line, kinds[i], n)) {
            n = len < IMPORT_ERR_MAX - 1 ? len : IMPORT_ERR_MAX - 1;
            memcpy(s->import_err, line, n);
            s->import_err[n] = '\0';
            return;
        }
    }
}

/* Read what is available on @p s and forward the complete lines. Returns 1 at EOF (the
 * partial last line is flushed and the fd closed), 0 otherwise. */
int stream_pump(stream_t *s)
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
            catch_import_error(s, s->buf + start, i + 1 - start);
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

int stream_init(stream_t *s, int fd, int dest, const char *prefix)
{
    s->fd = fd;
    s->dest = dest;
    s->prefix = prefix;
    s->plen = prefix ? strlen(prefix) : 0;
    s->len = 0;
    s->import_err = NULL;
    s->buf = malloc(LINE_MAX_BYTES);
    s->line = malloc(s->plen + LINE_MAX_BYTES + 1); /* the prefix, a line, its newline */
    if (s->line && s->plen)
        memcpy(s->line, prefix, s->plen);
    return s->buf && s->line ? 0 : -1;
}

void stream_free(stream_t *s)
{
    free(s->buf);
    free(s->line);
    s->buf = s->line = NULL;
}

/* ---- internal mode: --exec-prefixed NAME -- CMD ARGS ------------------------------------ */

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

/* Forward "[prefix] "-prefixed lines from @p out_fd and @p err_fd until both end; the first
 * Python import error on stderr goes to @p import_err (IMPORT_ERR_MAX bytes). */
static void relay(const char *prefix, int out_fd, int err_fd, char *import_err)
{
    stream_t s[2];
    struct pollfd pfd[2];
    int open_streams = 2, i;

    if (stream_init(&s[0], out_fd, 1, prefix) != 0 || stream_init(&s[1], err_fd, 2, prefix) != 0)
        return; /* out of memory: the application's output is lost, not its status */
    s[1].import_err = import_err;
    while (open_streams > 0) {
        for (i = 0; i < 2; i++) {
            pfd[i].fd = s[i].fd;
            pfd[i].events = POLLIN;
            pfd[i].revents = 0;
        }
        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (i = 0; i < 2; i++)
            if (s[i].fd >= 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                open_streams -= stream_pump(&s[i]);
    }
    stream_free(&s[0]);
    stream_free(&s[1]);
}

static volatile sig_atomic_t app_pid;

static void forward_signal(int sig)
{
    if (app_pid > 0)
        kill((pid_t) app_pid, sig);
}

/* An abnormal end of process @p pid of component @p name, for xfer-run (supervise.c reads
 * RUN_DIR/exits.fifo, or XFER_RUN_EXITS: --attach's own): "NAME PID CODE[ IMPORT_ERROR]". Best
 * effort: no reader, no report. */
static void report_end(const char *name, pid_t pid, int code, const char *import_err)
{
    const char *dir = getenv("XFER_RUN_DIR"), *own = getenv("XFER_RUN_EXITS");
    char path[4096], line[128 + IMPORT_ERR_MAX]; /* under PIPE_BUF: one atomic write */
    int fd, n;

    if (own && *own)
        snprintf(path, sizeof path, "%s", own);
    else if (!dir || snprintf(path, sizeof path, "%s/" EXITS_FIFO, dir) >= (int) sizeof path)
        return;
    if ((fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
        return;
    n = snprintf(line, sizeof line, "%.64s %ld %d%s%s\n", name, (long) pid, code,
                 import_err[0] ? " " : "", import_err);
    if (n > 0 && n < (int) sizeof line && write(fd, line, (size_t) n) != n)
        run_note("component %s: cannot report its end to xfer-run: %s", name, strerror(errno));
    close(fd);
}

/* The wrapper of every process of an mpiexec launch:
 *   xfer-run --exec-prefixed NAME [--lines | --plain] -- COMMAND [ARGS...]
 * It runs the application as its child and waits for it: the output gets "[NAME] " before every
 * line (--lines: passes on whole lines without a prefix, for a launch whose output xfer-run
 * prefixes itself; --plain: passes on as written), the launcher's signals go on to the
 * application, and an abnormal end
 * (a non-zero exit, a signal) is reported to xfer-run before the wrapper ends the same way.
 * Hydra does not end a job when one of its processes exits before MPI_Init (a Python import
 * error, a missing file): the others would wait in MPI_Init for ever, and only this report
 * lets xfer-run stop them. */
int exec_prefixed(int argc, char **argv)
{
    static const int fwd[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT};
    int po[2] = {-1, -1}, pe[2] = {-1, -1}, plain = 0, lines = 0, first = 3, st = 0, code;
    char import_err[IMPORT_ERR_MAX] = "";
    struct sigaction sa;
    const pid_t self = getpid();
    pid_t pid;
    char *prefix;
    size_t i;

    if (argc > first && strcmp(argv[first], "--plain") == 0) {
        plain = 1;
        first++;
    } else if (argc > first && strcmp(argv[first], "--lines") == 0) {
        lines = 1;
        first++;
    }
    if (argc < first + 2 || strcmp(argv[first], "--") != 0) {
        run_error("usage: xfer-run --exec-prefixed NAME [--lines | --plain] -- COMMAND [ARGS...]");
        return EXIT_USAGE;
    }
    /* whole lines matter even without a prefix: a launcher forwards what each process writes
     * as it comes (Python writes a line's text and its newline apart), so the lines of two
     * ranks would otherwise run into one another */
    prefix = lines ? NULL : xasprintf("[%s] ", argv[2]);
    if (!plain && (output_channel(1, po) != 0 || output_channel(2, pe) != 0)) {
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
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* the wrapper killed: the application goes too */
        if (getppid() != self)
            _exit(137);
#endif
        if (!plain) {
            if (dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0) {
                run_error("%s: dup2: %s", argv[2], strerror(errno));
                _exit(EXIT_USAGE);
            }
            close(po[0]);
            close(pe[0]);
            close(po[1]);
            close(pe[1]);
        }
        world_preload();
        execv(argv[first + 1], argv + first + 1);
        run_error("component %s: cannot run %s: %s", argv[2], argv[first + 1], strerror(errno));
        _exit(127);
    }
    app_pid = pid;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof fwd / sizeof fwd[0]; i++)
        sigaction(fwd[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (!plain) {
        close(po[1]);
        close(pe[1]);
        relay(prefix, po[0], pe[0], import_err);
        close(po[0]);
        close(pe[0]);
    }
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    app_pid = 0;
    free(prefix);
    code = status_code(st);
    if (code != 0)
        report_end(argv[2], pid, code, import_err);
    if (WIFSIGNALED(st)) { /* end as the application did, for the launcher's report */
        signal(WTERMSIG(st), SIG_DFL);
        raise(WTERMSIG(st));
    }
    return code;
}
