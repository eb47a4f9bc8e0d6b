/* SPDX-License-Identifier: BSD-3-Clause */
/* What the Gray-Scott simulation and its analysis share: the per-step statistics (computed the
 * same way on both sides, so the analysis' results can be checked against the simulation's
 * own), their CSV form, the workflow file's description of the fields, and small helpers. */
#ifndef GS_COMMON_H
#define GS_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <xfer/xfer.h>

#define GS_DEFAULT_OUTPUT  "./coupled-output"
#define GS_DEFAULT_CHANNEL "fields"
#define GS_DEFAULT_BINS    32
#define GS_HIST_LO         0.0 /* the histogram of V covers [GS_HIST_LO, GS_HIST_HI] */
#define GS_HIST_HI         1.0
/* The files that are not the user's (the simulation's reference statistics, which the tests
 * compare with the analysis', and the analysis' gnuplot script with its data) go to this
 * subdirectory of the output directory. */
#define GS_CHECK_SUBDIR ".check"

/** Statistics of U and V over a set of cells; after gs_stats_reduce, over the whole grid. */
typedef struct gs_stats {
    int bins;
    uint64_t cells;
    double umin, umax, usum;
    double vmin, vmax, vsum;
    uint64_t *hist; /* bins counts of V; values outside the range count in the end bins */
} gs_stats_t;

int gs_stats_init(gs_stats_t *s, int bins);
void gs_stats_reset(gs_stats_t *s);
void gs_stats_free(gs_stats_t *s);
/** Add @p rows x @p cols cells of U and V, rows @p stride elements apart. */
void gs_stats_add(gs_stats_t *s, const double *u, const double *v, size_t rows, size_t cols,
                  size_t stride);
/** Combine every rank's statistics on rank 0 of @p comm (collective). Returns an MPI code. */
int gs_stats_reduce(gs_stats_t *s, MPI_Comm comm);
/** The bin of value @p v among @p bins over [GS_HIST_LO, GS_HIST_HI], clamped. */
int gs_hist_bin(double v, int bins);

/** The CSV: a header line, then one row per coupled step (doubles with 17 digits). */
void gs_stats_csv_header(FILE *f, int bins);
void gs_stats_csv_row(FILE *f, uint64_t step, double time, const gs_stats_t *s);

/** The fields as the workflow file declares them: channel @p channel carries float64 U and V
 * of one 2-D shape and a float64 time of shape [1]. On error, a message in @p err. */
int gs_fields_shape(const xfer_config_t *cfg, const char *channel, uint64_t *ny, uint64_t *nx,
                    char *err, size_t errlen);

/* Failure reports of both programs: "<gs_program>: rank <gs_rank>: message", then
 * gs_on_failure (when set) and exit(1): the launcher stops the other ranks; MPI_Abort can lose
 * this output. Each program sets gs_program at start; gs_rank is its rank (in MPI_COMM_WORLD,
 * then in its component), which the programs use as theirs. */
extern const char *gs_program;
extern int gs_rank;
extern void (*gs_on_failure)(void);
void gs_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#define FAIL(...) gs_fail(__VA_ARGS__)

#define XCHECK(call)                                                                               \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        if (st_ != XFER_SUCCESS)                                                                   \
            FAIL("%s: %s: %s", #call, xfer_status_name(st_), xfer_last_error());                   \
    } while (0)

#define MCHECK(call)                                                                               \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            char msg_[MPI_MAX_ERROR_STRING];                                                       \
            int len_ = 0;                                                                          \
            MPI_Error_string(rc_, msg_, &len_);                                                    \
            FAIL("%s: %s", #call, msg_);                                                           \
        }                                                                                          \
    } while (0)

/** mkdir -p. Returns 0 or -1 with errno set. */
int gs_mkdir_p(const char *path);

#endif /* GS_COMMON_H */
