/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
#include "gs_common.h"

#include <stdarg.h>
#include <stdlib.h>

const char *gs_program = "gray-scott";
int gs_rank = -1;
void (*gs_on_failure)(void);

void gs_fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: rank %d: ", gs_program, gs_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    if (gs_on_failure)
        gs_on_failure();
    exit(1);
}

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int gs_stats_init(gs_stats_t *s, int bins)
{
    memset(s, 0, sizeof(*s));
    s->bins = bins;
    s->hist = calloc((size_t) bins, sizeof(*s->hist));
    if (!s->hist)
        return -1;
    gs_stats_reset(s);
    return 0;
}

void gs_stats_reset(gs_stats_t *s)
{
    s->cells = 0;
    s->umin = s->vmin = INFINITY;
    s->umax = s->vmax = -INFINITY;
    s->usum = s->vsum = 0.0;
    memset(s->hist, 0, (size_t) s->bins * sizeof(*s->hist));
}

void gs_stats_free(gs_stats_t *s)
{
    free(s->hist);
    s->hist = NULL;
}

int gs_hist_bin(double v, int bins)
{
    double x = (v - GS_HIST_LO) / (GS_HIST_HI - GS_HIST_LO) * bins;
    if (!(x >= 0.0)) /* NaN too */
        return 0;
    if (x >= (double) bins)
        return bins - 1;
    return (int) x;
}

void gs_stats_add(gs_stats_t *s, const double *u, const double *v, size_t rows, size_t cols,
                  size_t stride)
{
    size_t i, j;
    for (i = 0; i < rows; i++) {
        const double *ur = u + i * stride, *vr = v + i * stride;
        for (j = 0; j < cols; j++) {
            s->umin = ur[j] < s->umin ? ur[j] : s->umin;
            s->umax = ur[j] > s->umax ? ur[j] : s->umax;
            s->vmin = vr[j] < s->vmin ? vr[j] : s->vmin;
            s->vmax = vr[j] > s->vmax ? vr[j] : s->vmax;
            s->usum += ur[j];
            s->vsum += vr[j];
            s->hist[gs_hist_bin(vr[j], s->bins)]++;
        }
    }
    s->cells += rows * cols;
}

int gs_stats_reduce(gs_stats_t *s, MPI_Comm comm)
{
    double mins[2] = {s->umin, s->vmin}, maxs[2] = {s->umax, s->vmax};
    double sums[2] = {s->usum, s->vsum};
    uint64_t cells = s->cells;
    int rank, rc;

    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        if ((rc = MPI_Reduce(MPI_IN_PLACE, mins, 2, MPI_DOUBLE, MPI_MIN, 0, comm)) ||
            (rc = MPI_Reduce(MPI_IN_PLACE, maxs, 2, MPI_DOUBLE, MPI_MAX, 0, comm)) ||
            (rc = MPI_Reduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, 0, comm)) ||
            (rc = MPI_Reduce(MPI_IN_PLACE, &cells, 1, MPI_UINT64_T, MPI_SUM, 0, comm)) ||
            (rc = MPI_Reduce(MPI_IN_PLACE, s->hist, s->bins, MPI_UINT64_T, MPI_SUM, 0, comm)))
            return rc;
        s->umin = mins[0];
        s->vmin = mins[1];
        s->umax = maxs[0];
        s->vmax = maxs[1];
        s->usum = sums[0];
        s->vsum = sums[1];
        s->cells = cells;
        return MPI_SUCCESS;
    }
    if ((rc = MPI_Reduce(mins, NULL, 2, MPI_DOUBLE, MPI_MIN, 0, comm)) ||
        (rc = MPI_Reduce(maxs, NULL, 2, MPI_DOUBLE, MPI_MAX, 0, comm)) ||
        (rc = MPI_Reduce(sums, NULL, 2, MPI_DOUBLE, MPI_SUM, 0, comm)) ||
        (rc = MPI_Reduce(&cells, NULL, 1, MPI_UINT64_T, MPI_SUM, 0, comm)) ||
        (rc = MPI_Reduce(s->hist, NULL, s->bins, MPI_UINT64_T, MPI_SUM, 0, comm)))
        return rc;
    return MPI_SUCCESS;
}

void gs_stats_csv_header(FILE *f, int bins)
{
    int b;
    fprintf(f, "step,time,u_min,u_max,u_mean,v_min,v_max,v_mean");
    for (b = 0; b < bins; b++)
        fprintf(f, ",v_hist_%d", b);
    fprintf(f, "\n");
}

void gs_stats_csv_row(FILE *f, uint64_t step, double time, const gs_stats_t *s)
{
    const double n = s->cells ? (double) s->cells : 1.0;
    int b;
    fprintf(f, "%" PRIu64 ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g", step, time, s->umin,
            s->umax, s->usum / n, s->vmin, s->vmax, s->vsum / n);
    for (b = 0; b < s->bins; b++)
        fprintf(f, ",%" PRIu64, s->hist[b]);
    fprintf(f, "\n");
}

static const xfer_cfg_dataset_t *find_dataset(const xfer_cfg_channel_t *ch, const char *name)
{
    int i;
    for (i = 0; i < ch->ndatasets; i++)
        if (strcmp(ch->datasets[i].name, name) == 0)
            return &ch->datasets[i];
    return NULL;
}

int gs_fields_shape(const xfer_config_t *cfg, const char *channel, uint64_t *ny, uint64_t *nx,
                    char *err, size_t errlen)
{
    static const char *const fields[] = {"U", "V"};
    const xfer_cfg_channel_t *ch = NULL;
    const xfer_cfg_dataset_t *d;
    int i;

    for (i = 0; i < cfg->nchannels; i++)
        if (strcmp(cfg->channels[i].name, channel) == 0)
            ch = &cfg->channels[i];
    if (!ch) {
        snprintf(err, errlen, "%s: no channel \"%s\"", cfg->path, channel);
        return -1;
    }
    for (i = 0; i < 2; i++) {
        d = find_dataset(ch, fields[i]);
        if (!d || d->type != XFER_TYPE_FLOAT64 || d->ndims != 2) {
            snprintf(err, errlen, "%s: channel %s needs a dataset %s of type float64 with 2 dims",
                     cfg->path, channel, fields[i]);
            return -1;
        }
        if (i == 0) {
            *ny = d->dims[0];
            *nx = d->dims[1];
        } else if (d->dims[0] != *ny || d->dims[1] != *nx) {
            snprintf(err, errlen, "%s: channel %s: U and V must have the same shape", cfg->path,
                     channel);
            return -1;
        }
    }
    d = find_dataset(ch, "time");
    if (!d || d->type != XFER_TYPE_FLOAT64 || d->ndims != 1 || d->dims[0] != 1) {
        snprintf(err, errlen, "%s: channel %s needs a dataset time of type float64, dims [1]",
                 cfg->path, channel);
        return -1;
    }
    return 0;
}

int gs_mkdir_p(const char *path)
{
    char buf[4096];
    size_t n = strlen(path), i;

    if (n == 0 || n >= sizeof(buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        buf[i] = path[i];
    }
    return 0;
}
