/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Measurement core shared by xfer-demo and xfer-bench: group setup, interleaved timed calls of
 * several algorithms, verification against a known pattern, per-call peak RSS and lower bounds.
 * Not part of the library's API.
 */
#ifndef XFER_TOOLS_XBENCH_H
#define XFER_TOOLS_XBENCH_H

#include <mpi.h>
#include <stddef.h>

#include <xfer/xfer.h>

#define XB_MAXALG   24
#define XB_MAXSIZES 16

/** The two groups (collective setup, see xb_setup()). */
typedef struct xb_setup {
    MPI_Comm local, inter;
    int group;            /**< 0: A (producer), 1: B (consumer) */
    int rank;             /**< in the local group */
    int n[2];             /**< sizes of groups A and B (p, q) */
    int wrank, wsize;     /**< in MPI_COMM_WORLD */
    int nodes[2], ppn[2]; /**< shared-memory nodes of A and B, most ranks on one */
    long delay_us;        /**< arrival delays (xfer-demo): 0 = none */
    int delay_group;      /**< delayed group: 0 A, 1 B, -1 both */
    unsigned seed;
} xb_setup_t;

/** One measured case: who sends what. */
typedef struct xb_case {
    int full;       /**< both groups send (full duplex); else A -> B */
    int v;          /**< call xfer_allgatherv_inter (counts may differ) */
    int *counts[2]; /**< bytes of each rank of A and of B (what it sends when it sends) */
    int *displs[2]; /**< packed displacements of those blocks */
} xb_case_t;

typedef struct xb_result {
    double median, min, max; /**< max over ranks per call (after last arrival with delays) */
    double *samples;         /**< those per-call times in call order (iters of them; owned) */
    double after, mean_in;   /**< medians, with delays: after last arrival, mean time in call */
    double intra, inter;     /**< medians: mean node-copy time, longest time between the groups */
    long rss_kb;             /**< max over ranks of the peak RSS during one call (-1: unknown) */
    long rss_growth_kb;      /**< max over ranks of that peak less the RSS at the call's start */
    int ok;                  /**< every timed call's result verified on every rank */
    xfer_status_t st;        /**< worst status over ranks */
} xb_result_t;

/** Parse a comma-separated list of sizes (in place) into @p sizes (at most XB_MAXSIZES, each
 *  1 B .. 1 GiB); returns their number, or -1; *@p maxsize receives the largest. */
int xb_parse_sizes(char *list, long *sizes, long *maxsize);
/** Split a comma-separated list in place; -1 when it has more than @p max entries. */
int xb_split_list(char *s, char **out, int max);
/** "4 MiB", "32 KiB", "100 B" */
const char *xb_human(long bytes, char *buf, size_t len);
/** Byte i of the block of rank @p rank of group @p group. */
unsigned char xb_pattern(int group, int rank, long i);

/**
 * Form the groups (collective over MPI_COMM_WORLD): rank r is in A when @p p > 0 and r < p;
 * with @p p <= 0 the MPMD application number decides (app 0: A, app 1: B), and without one
 * the first half is A. Returns 0, or -1 with a message on stderr (rank 0) when the shape is
 * impossible.
 */
int xb_setup(xb_setup_t *s, int p);
void xb_teardown(xb_setup_t *s);

/** Fill a case with the mean @p bytes per rank and skew @p skew in [0, 1]: rank i of a group
 *  of n sends round(bytes * (1 + skew * (2i/(n-1) - 1))) bytes (skew 1: 0 .. 2*bytes, an
 *  arithmetic sequence). Returns 0, or -1 when a count would not fit an int. */
int xb_case_init(xb_case_t *c, const xb_setup_t *s, long bytes, double skew, int full, int v);
void xb_case_free(xb_case_t *c);
/** Total bytes group @p g sends in case @p c (0 when it does not send). */
double xb_sent_by(const xb_case_t *c, const xb_setup_t *s, int g);
/** Bytes the busiest receiving node takes in when the groups are on different nodes: all
 *  that the other group sends, max(A's total, B's total). */
double xb_busiest(const xb_case_t *c, const xb_setup_t *s);
/** The algorithms of @p alg that can run in this duplex mode (those flagged half_only, alone
 *  or inside hier:, cannot run full duplex) into @p run; returns their number. */
int xb_for_duplex(char **alg, int nalg, int full, char **run);

/**
 * Time every algorithm of @p alg on case @p c: @p warmup untimed then @p iters timed calls
 * each, interleaved (call 1 of every algorithm, then call 2, ...) in an order shuffled afresh
 * for every round of calls (the same on all ranks), so that slow spells of the machine and
 * whatever one algorithm leaves behind (queues, congestion windows) hit all alike; each call
 * starts after a barrier and its time is the maximum over ranks. Every timed call's result is
 * verified (the receive buffer is cleared before it, outside the timing); with @p rss one more
 * call per algorithm measures its peak RSS. @p sbuf holds this rank's pattern, @p rbuf has room
 * for the whole remote group. Collective. Free the results with xb_results_free().
 */
void xb_run(const xb_setup_t *s, const xb_case_t *c, char **alg, int nalg, int iters, int warmup,
            int rss, const unsigned char *sbuf, unsigned char *rbuf, xb_result_t *res);

void xb_results_free(xb_result_t *res, int nalg);

/** Median of the @p n values of @p x (sorted in place). */
double xb_median(double *x, int n);

/** Single-core memcpy bandwidth (bytes/s) of world rank 0, broadcast to all. Collective. */
double xb_copy_bandwidth(size_t bytes);

#endif
