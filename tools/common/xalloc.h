/* SPDX-License-Identifier: BSD-3-Clause */
/* Allocation for command-line programs that cannot go on without memory: a failure prints
 * "PROG: out of memory" to stderr and exits. Each program has its own exit status for it, so
 * the includer defines XFER_XALLOC_PROG (its name, a string) and XFER_XALLOC_EXIT (the status)
 * before including this header. Needs POSIX.1-2008 (strdup, strndup). */
#ifndef XFER_TOOLS_XALLOC_H
#define XFER_TOOLS_XALLOC_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/logline.h"

#if !defined(XFER_XALLOC_PROG) || !defined(XFER_XALLOC_EXIT)
#error "define XFER_XALLOC_PROG and XFER_XALLOC_EXIT before including common/xalloc.h"
#endif

static inline void xalloc_die(const char *what) __attribute__((noreturn));
static inline void xalloc_die(const char *what)
{
    xfer_log_line(2, XFER_XALLOC_PROG, ": ", "%s", what); /* one write: stderr may be shared */
    exit(XFER_XALLOC_EXIT);
}

/* @p p, the result of an allocation, or exit when it is NULL. */
static inline void *xchecked(void *p)
{
    if (!p)
        xalloc_die("out of memory");
    return p;
}

static inline char *xstrdup(const char *s)
{
    return xchecked(strdup(s));
}

static inline char *xstrndup(const char *s, size_t n)
{
    return xchecked(strndup(s, n));
}

/* A formatted string in new memory (caller frees). */
static inline char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        xalloc_die("cannot format a string");
    s = xchecked(malloc((size_t) n + 1));
    va_start(ap, fmt);
    vsnprintf(s, (size_t) n + 1, fmt, ap);
    va_end(ap);
    return s;
}

#endif /* XFER_TOOLS_XALLOC_H */
