/* SPDX-License-Identifier: BSD-3-Clause */
/* Core layer: error recording, logging, environment and small helpers. No MPI types here
 * except in the MPI-check helper, so the pure layers (sched, algos) stay MPI-free. */
#ifndef XFER_CORE_H
#define XFER_CORE_H

#include <stddef.h>
#include <stdint.h>

#include <xfer/status.h>

#define XFER_MIN(a, b) ((a) < (b) ? (a) : (b))
#define XFER_MAX(a, b) ((a) > (b) ? (a) : (b))

#if defined(__GNUC__)
#define XFER_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define XFER_PRINTF(f, a)
#endif

/* Record a detailed message for xfer_last_error() and return @p status. */
xfer_status_t xfer_err_set(xfer_status_t status, const char *func, const char *fmt, ...)
    XFER_PRINTF(3, 4);

/* Record a message meant for users as it is (no function or status prefix), e.g. a
 * configuration error "wf.yaml:3:5: key: problem", and return @p status. */
xfer_status_t xfer_err_raw(xfer_status_t status, const char *fmt, ...) XFER_PRINTF(2, 3);

/* Record @p text, of any length and possibly several lines (every error of a workflow file), as
 * it is for xfer_last_error() and return @p status. Out of memory, its first 1023 bytes. */
xfer_status_t xfer_err_text(xfer_status_t status, const char *text);

/* Record an MPI failure: the MPI error class and MPI_Error_string text are kept. */
xfer_status_t xfer_err_mpi(int mpi_rc, const char *func, const char *call);

#define XFER_ERR(status, ...) xfer_err_set((status), __func__, __VA_ARGS__)

/* The end of a public call: a success leaves no words behind (xfer_last_error). */
static inline xfer_status_t xfer_done(xfer_status_t st)
{
    if (st == XFER_SUCCESS)
        xfer_clear_error();
    return st;
}

/* Jump to @p label with @p st holding the status if @p expr fails. */
#define XFER_CHECK_GOTO(expr, st, label)                                                           \
    do {                                                                                           \
        (st) = (expr);                                                                             \
        if ((st) != XFER_SUCCESS)                                                                  \
            goto label;                                                                            \
    } while (0)

/* Check an MPI call; on failure record it and jump to @p label. */
#define XFER_MPI_GOTO(call, st, label)                                                             \
    do {                                                                                           \
        int xfer_mpi_rc_ = (call);                                                                 \
        if (xfer_mpi_rc_ != 0 /* MPI_SUCCESS */) {                                                 \
            (st) = xfer_err_mpi(xfer_mpi_rc_, __func__, #call);                                    \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)

/* ---- logging ---------------------------------------------------------------------------- */

enum { XFER_LOG_ERROR = 0, XFER_LOG_WARN = 1, XFER_LOG_TRACE = 2, XFER_LOG_DEBUG = 3 };

/* Trace level from XFER_TRACE: 0 off, 1 choices on each group's rank 0, 2 every rank. */
int xfer_trace_level(void);
void xfer_log(int level, const char *fmt, ...) XFER_PRINTF(2, 3);

/* ---- environment ------------------------------------------------------------------------ */

/* Integer from the environment; @p dflt when unset. An unparsable value is reported once as a
 * warning and the default is used. */
long xfer_env_long(const char *name, long dflt);
double xfer_env_double(const char *name, double dflt);
/* String from the environment, NULL when unset or empty. */
const char *xfer_env_str(const char *name);

/* ---- memory ----------------------------------------------------------------------------- */

void *xfer_malloc(size_t n);
void *xfer_calloc(size_t n, size_t size);
void *xfer_realloc_array(void *p, size_t n, size_t size);
void xfer_free(void *p);

/* Copies of @p s (not NULL) to free with xfer_free; NULL when memory runs out. xfer_strndup
 * copies at most @p n bytes, stopping at a NUL, and always terminates the copy. */
char *xfer_strdup(const char *s);
char *xfer_strndup(const char *s, size_t n);

/* Grow the array *@p arr of *@p cap elements of @p size bytes, doubling from 16, to hold at
 * least @p need; 0 when memory or the size runs out (the array is then unchanged). */
int xfer_grow_array(void **arr, int *cap, int need, size_t size);

/* Overflow-checked a*b; returns 0 on overflow. */
int xfer_mul_size(size_t a, size_t b, size_t *out);

/* a mod n in [0, n) for any sign of a (n > 0). */
static inline int xfer_mod(long a, int n)
{
    const long r = a % n;
    return (int) (r < 0 ? r + n : r);
}

/* ---- hashing ---------------------------------------------------------------------------- */

#define XFER_FNV_OFFSET 14695981039346656037ULL /* 64-bit FNV offset basis */

/* 64-bit FNV-1a of the @p n bytes at @p p, continuing from @p h (XFER_FNV_OFFSET to start).
 * For comparing values across the ranks of one build, not for storing. */
uint64_t xfer_fnv1a(uint64_t h, const void *p, size_t n);

/* xfer_fnv1a of the 8 bytes of @p v, least significant first: the same on any byte order. */
static inline uint64_t xfer_fnv1a_u64(uint64_t h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char) (v >> (8 * i));
    return xfer_fnv1a(h, b, sizeof(b));
}

/* ---- numbers ---------------------------------------------------------------------------- */

/* ceil(log2(n)) for n >= 1. */
int xfer_ceil_log2(uint64_t n);

/* Monotonic wall-clock seconds (no MPI needed). */
double xfer_now(void);

/* The same in milliseconds. */
static inline double xfer_now_ms(void)
{
    return 1e3 * xfer_now();
}

#endif /* XFER_CORE_H */
