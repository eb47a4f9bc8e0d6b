/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: output forwarding ("[name] " before every line) and the --exec-prefixed mode. */
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "run.h"

/* ---- output forwarding: "[name] " before every line --------------------------------------- */

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
int exec_prefixed(int argc, char **argv)
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
