/* SPDX-License-Identifier: BSD-3-Clause */
/* Log lines of programs that share their output with others (xfer-run, xferd and the
 * components of a workflow write to one terminal, pipe or file): each line is formatted first
 * and then written with one write(). POSIX makes a write of at most PIPE_BUF bytes to a pipe
 * atomic, so such a line is never cut by another process's; stdio gives no such promise (an
 * unbuffered stderr may emit "PROG: ", the text and "\n" as three writes). A longer line is
 * cut at PIPE_BUF bytes, its end marked "...". Needs POSIX.1-2008. */
#ifndef XFER_TOOLS_LOGLINE_H
#define XFER_TOOLS_LOGLINE_H

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define XFER_LOG_LINE_MAX PIPE_BUF /* bytes of a log line, its newline included */

/* All @p len bytes of @p buf to @p fd: one write() unless the kernel takes less (a terminal or
 * a file may); EINTR is retried and EAGAIN (a non-blocking descriptor) waited out. 0, or -1
 * with errno set. */
static inline int xfer_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd p = {fd, POLLOUT, 0};
            if (poll(&p, 1, -1) < 0 && errno != EINTR)
                return -1;
            continue;
        }
        if (w < 0)
            return -1;
        buf += w;
        len -= (size_t) w;
    }
    return 0;
}

/* @p prefix, @p tag and the formatted text as one line to @p fd, in one write. A newline or
 * carriage return in the text becomes a space: one event, one line. Errors are ignored (there
 * is nowhere left to report them). */
static inline void xfer_log_vline(int fd, const char *prefix, const char *tag, const char *fmt,
                                  va_list ap)
{
    char line[XFER_LOG_LINE_MAX];
    const size_t cap = sizeof(line) - 1; /* the newline always fits */
    size_t n, head;
    int k;

    k = snprintf(line, cap + 1, "%s%s", prefix, tag);
    head = n = k < 0 ? 0 : (size_t) k < cap ? (size_t) k : cap;
    k = vsnprintf(line + n, cap + 1 - n, fmt, ap);
    if (k > 0 && (size_t) k > cap - n) { /* cut: mark it */
        n = cap;
        memcpy(line + cap - 3, "...", 3);
    } else if (k > 0) {
        n += (size_t) k;
    }
    for (size_t i = head; i < n; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[n++] = '\n';
    (void) xfer_write_all(fd, line, n);
}

static inline void xfer_log_line(int fd, const char *prefix, const char *tag, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline void xfer_log_line(int fd, const char *prefix, const char *tag, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    xfer_log_vline(fd, prefix, tag, fmt, ap);
    va_end(ap);
}

#endif /* XFER_TOOLS_LOGLINE_H */
