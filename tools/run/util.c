/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: small helpers: messages, allocation, argument vectors, time, descriptors, paths. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/logline.h"
#include "run.h"

int quiet;
int verbose;

/* ---- small helpers ------------------------------------------------------------------------ */

/* xfer-run's messages share stderr with xferd and the components: one write per line
 * (common/logline.h), so that no other process's line lands inside one. */
void run_note(const char *fmt, ...)
{
    va_list ap;

    if (quiet)
        return;
    va_start(ap, fmt);
    xfer_log_vline(2, "xfer-run: ", "", fmt, ap);
    va_end(ap);
}

/* -v: what xfer-run chose and why (the launch, the yield helper, the interpreters). */
void run_verbose(const char *fmt, ...)
{
    va_list ap;

    if (!verbose || quiet)
        return;
    va_start(ap, fmt);
    xfer_log_vline(2, "xfer-run: ", "", fmt, ap);
    va_end(ap);
}

void run_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    xfer_log_vline(2, "xfer-run: ", "", fmt, ap);
    va_end(ap);
}

void sv_take(strv_t *s, char *str)
{
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        s->v = xchecked(realloc(s->v, cap * sizeof(char *)));
        s->cap = cap;
    }
    s->v[s->n++] = str;
    s->v[s->n] = NULL;
}

void sv_push(strv_t *s, const char *str)
{
    sv_take(s, xstrdup(str));
}

void sv_free(strv_t *s)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int set_cloexec(int fd)
{
    int flags = fcntl(fd, F_GETFD);

    return flags < 0 ? -1 : fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

int cloexec_pipe(int p[2])
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

void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Exit code of a wait status: the status itself, or 128 + signal number. */
int status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 1;
}

int is_exec_file(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* @p path made absolute without resolving symbolic links; "./" components dropped. */
char *abs_path(const char *path)
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
        out = xasprintf("%s/%s", cwd, path);
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

char *self_exe(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

    if (n < 0) {
        run_error("cannot find this executable (/proc/self/exe): %s", strerror(errno));
        exit(EXIT_USAGE);
    }
    self[n] = '\0';
    return xstrdup(self);
}

char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t) (slash - path));
}

/* First executable @p name in PATH (absolute), NULL if none. */
char *find_in_path(const char *name)
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
            cand = xasprintf("%.*s/%s", (int) (end - p), p, name);
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
