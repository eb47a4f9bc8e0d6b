/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

/* ---- logging ---------------------------------------------------------------------------- */

int xfer_trace_level(void)
{
    return (int) xfer_env_long("XFER_TRACE", 0);
}

void xfer_log(int level, const char *fmt, ...)
{
    static const char *tag[] = {"error", "warning", "trace", "debug"};
    char line[1200];
    va_list ap;

    if (level >= XFER_LOG_TRACE && xfer_trace_level() < level - 1)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* One write per line so that lines of different ranks do not interleave mid-line. */
    fprintf(stderr, "libxfer %s [pid %ld]: %s\n", tag[level], (long) getpid(), line);
}

/* ---- environment ------------------------------------------------------------------------ */

const char *xfer_env_str(const char *name)
{
    const char *v = getenv(name);
    return (v && *v) ? v : NULL;
}

long xfer_env_long(const char *name, long dflt)
{
    const char *v = xfer_env_str(name);
    char *end = NULL;
    long x;

    if (!v)
        return dflt;
    errno = 0;
    x = strtol(v, &end, 10);
    if (errno || end == v || *end != '\0') {
        fprintf(stderr, "libxfer warning: %s=\"%s\" is not an integer; using %ld\n", name, v, dflt);
        return dflt;
    }
    return x;
}

double xfer_env_double(const char *name, double dflt)
{
    const char *v = xfer_env_str(name);
    char *end = NULL;
    double x;

    if (!v)
        return dflt;
    errno = 0;
    x = strtod(v, &end);
    if (errno || end == v || *end != '\0') {
        fprintf(stderr, "libxfer warning: %s=\"%s\" is not a number; using %g\n", name, v, dflt);
        return dflt;
    }
    return x;
}

/* ---- memory ----------------------------------------------------------------------------- */

void *xfer_malloc(size_t n)
{
    return malloc(n ? n : 1);
}

void *xfer_calloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size ? size : 1);
}

void *xfer_realloc_array(void *p, size_t n, size_t size)
{
    size_t bytes;
    if (!xfer_mul_size(n, size, &bytes))
        return NULL;
    return realloc(p, bytes ? bytes : 1);
}

void xfer_free(void *p)
{
    free(p);
}

char *xfer_strdup(const char *s)
{
    return xfer_strndup(s, strlen(s));
}

char *xfer_strndup(const char *s, size_t n)
{
    const size_t len = strnlen(s, n);
    char *d = xfer_malloc(len + 1);

    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

int xfer_grow_array(void **arr, int *cap, int need, size_t size)
{
    void *p;
    int ncap;
    if (need <= *cap)
        return 1;
    ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > INT_MAX / 2)
            return 0;
        ncap *= 2;
    }
    if (!(p = xfer_realloc_array(*arr, (size_t) ncap, size)))
        return 0;
    *arr = p;
    *cap = ncap;
    return 1;
}

int xfer_mul_size(size_t a, size_t b, size_t *out)
{
    if (a && b > (size_t) -1 / a)
        return 0;
    *out = a * b;
    return 1;
}

uint64_t xfer_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL; /* the 64-bit FNV prime */
    return h;
}

int xfer_ceil_log2(uint64_t n)
{
    int l = 0;
    while (((uint64_t) 1 << l) < n && l < 63)
        l++;
    return l;
}

double xfer_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}
