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

/** mkdir -p. Returns 0 or -1 with errno set. */
int gs_mkdir_p(const char *path);

#endif /* GS_COMMON_H */
