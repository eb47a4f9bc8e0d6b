/* SPDX-License-Identifier: BSD-3-Clause */
/* The particles' record, their statistics and the analysis' check (gs_particles.h). */
#include "gs_particles.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void gs_particle_record(xfer_record_t *r, xfer_record_field_t f[3])
{
    f[0] = (xfer_record_field_t){"id", XFER_TYPE_INT64, 1, offsetof(gs_particle_t, id)};
    f[1] = (xfer_record_field_t){"pos", XFER_TYPE_FLOAT64, 2, offsetof(gs_particle_t, pos)};
    f[2] = (xfer_record_field_t){"v", XFER_TYPE_FLOAT64, 1, offsetof(gs_particle_t, v)};
    r->nfields = 3;
    r->fields = f;
    r->size = sizeof(gs_particle_t);
    r->align = _Alignof(gs_particle_t);
}

int gs_particles_declared(const xfer_config_t *cfg, const char *channel, char *err, size_t errlen)
{
    const xfer_cfg_dataset_t *d = NULL;
    xfer_record_field_t f[3];
    xfer_record_t want;
    int i, ok;

    for (i = 0; i < cfg->nchannels; i++)
        if (strcmp(cfg->channels[i].name, channel) == 0) {
            const xfer_cfg_channel_t *ch = &cfg->channels[i];
            int k;
            for (k = 0; k < ch->ndatasets; k++)
                if (strcmp(ch->datasets[k].name, GS_PARTICLES_DATASET) == 0)
                    d = &ch->datasets[k];
        }
    if (!d)
        return 0;
    gs_particle_record(&want, f);
    ok = d->type == XFER_TYPE_RECORD && d->joined && d->ndims == 1 && d->record &&
         d->record->nfields == want.nfields && d->record->size == want.size;
    for (i = 0; ok && i < want.nfields; i++) {
        const xfer_record_field_t *g = &d->record->fields[i];
        ok = strcmp(g->name, f[i].name) == 0 && g->type == f[i].type && g->count == f[i].count &&
             g->offset == f[i].offset;
    }
    if (!ok) {
        snprintf(err, errlen,
                 "%s: channel %s: dataset " GS_PARTICLES_DATASET
                 " must be declared as {name: " GS_PARTICLES_DATASET
                 ", type: {id: int64, pos: [float64, 2], v: float64}, "
                 "dims: [joined]} (or left out: no particles)",
                 cfg->path, channel);
        return -1;
    }
    return 1;
}

int gs_pstats_init(gs_pstats_t *s, int nsenders)
{
    memset(s, 0, sizeof(*s));
    s->nsenders = nsenders;
    s->rows = calloc((size_t) nsenders + 1, sizeof(*s->rows));
    return s->rows ? 0 : -1;
}

void gs_pstats_free(gs_pstats_t *s)
{
    free(s->rows);
    s->rows = NULL;
}

void gs_pstats_add(gs_pstats_t *s, const gs_particle_t *p, size_t n)
{
    size_t k;
    for (k = 0; k < n; k++) {
        s->xsum += p[k].pos[0];
        s->ysum += p[k].pos[1];
        s->vsum += p[k].v;
    }
    s->count += n;
}

int gs_pstats_reduce(gs_pstats_t *s, MPI_Comm comm)
{
    double sums[3] = {s->xsum, s->ysum, s->vsum};
    uint64_t count = s->count;
    int rank, rc;

    MPI_Comm_rank(comm, &rank);
    if ((rc = MPI_Reduce(rank == 0 ? MPI_IN_PLACE : sums, sums, 3, MPI_DOUBLE, MPI_SUM, 0, comm)) ||
        (rc = MPI_Reduce(rank == 0 ? MPI_IN_PLACE : &count, &count, 1, MPI_UINT64_T, MPI_SUM, 0,
                         comm)))
        return rc;
    if (rank == 0) {
        s->xsum = sums[0];
        s->ysum = sums[1];
        s->vsum = sums[2];
        s->count = count;
    }
    return MPI_SUCCESS;
}

void gs_pstats_csv_header(FILE *f, int nsenders)
{
    int r;
    fprintf(f, "step,time,particles,x_mean,y_mean,v_mean");
    for (r = 0; r < nsenders; r++)
        fprintf(f, ",rows_%d", r);
    fprintf(f, "\n");
}

void gs_pstats_csv_row(FILE *f, uint64_t step, double time, const gs_pstats_t *s)
{
    const double n = s->count ? (double) s->count : 1.0;
    int r;
    fprintf(f, "%" PRIu64 ",%.17g,%" PRIu64 ",%.17g,%.17g,%.17g", step, time, s->count, s->xsum / n,
            s->ysum / n, s->vsum / n);
    for (r = 0; r < s->nsenders; r++)
        fprintf(f, ",%" PRIu64, s->rows[r]);
    fprintf(f, "\n");
}

/* What one rank found wrong in its share: how many ids out of range, positions outside the
 * grid, and the first of each (INT64_MAX: none), so that every rank can name the same ones. */
enum { BAD_IDS, BAD_POS, BAD_COUNTS };

int gs_particles_check(const gs_particle_t *p, size_t n, uint64_t total, const uint64_t *rows,
                       int nsenders, uint64_t seeded, uint64_t ny, uint64_t nx, MPI_Comm comm,
                       char *err, size_t errlen)
{
    uint64_t bad[BAD_COUNTS] = {0, 0}, sum = 0, missing = 0, extra = 0, k;
    int64_t first[BAD_COUNTS] = {INT64_MAX, INT64_MAX}, first_missing = -1, first_extra = -1;
    uint32_t *seen = NULL;
    size_t i;
    int r, rc;

    err[0] = '\0';
    for (r = 0; r < nsenders; r++)
        sum += rows[r];
    if (total != seeded) {
        snprintf(err, errlen,
                 "the step holds %" PRIu64 " particles, the simulation seeded %" PRIu64, total,
                 seeded);
        return -1; /* every rank sees the same total and attribute: no communication needed */
    }
    if (sum != total) {
        snprintf(err, errlen,
                 "the %d simulation ranks' rows add up to %" PRIu64 ", the step holds %" PRIu64,
                 nsenders, sum, total);
        return -1;
    }
    if (seeded > (uint64_t) INT32_MAX ||
        !(seen = calloc(seeded ? (size_t) seeded : 1, sizeof(*seen)))) {
        snprintf(err, errlen, "no memory for the counts of %" PRIu64 " ids", seeded);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const double x = p[i].pos[0], y = p[i].pos[1];
        if (p[i].id < 0 || (uint64_t) p[i].id >= seeded) {
            bad[BAD_IDS]++;
            first[BAD_IDS] = p[i].id < first[BAD_IDS] ? p[i].id : first[BAD_IDS];
            continue;
        }
        seen[p[i].id]++;
        if (!(x >= 0.0 && x < (double) nx && y >= 0.0 && y < (double) ny)) { /* NaN too */
            bad[BAD_POS]++;
            first[BAD_POS] = p[i].id < first[BAD_POS] ? p[i].id : first[BAD_POS];
        }
    }
    if ((rc = MPI_Allreduce(MPI_IN_PLACE, seen, (int) seeded, MPI_UINT32_T, MPI_SUM, comm)) ||
        (rc = MPI_Allreduce(MPI_IN_PLACE, bad, BAD_COUNTS, MPI_UINT64_T, MPI_SUM, comm)) ||
        (rc = MPI_Allreduce(MPI_IN_PLACE, first, BAD_COUNTS, MPI_INT64_T, MPI_MIN, comm))) {
        free(seen);
        return rc;
    }
    for (k = 0; k < seeded; k++) {
        if (seen[k] == 0 && missing++ == 0)
            first_missing = (int64_t) k;
        if (seen[k] > 1 && extra++ == 0)
            first_extra = (int64_t) k;
    }
    if (bad[BAD_IDS])
        snprintf(err, errlen,
                 "%" PRIu64 " particles carry an id outside 0 .. %" PRIu64 " (the least %" PRId64
                 ")",
                 bad[BAD_IDS], seeded - 1, first[BAD_IDS]);
    else if (extra)
        snprintf(err, errlen,
                 "id %" PRId64 " arrived %" PRIu32 " times (ids more than once: %" PRIu64
                 ", not at all: %" PRIu64 ")",
                 first_extra, seen[first_extra], extra, missing);
    else if (missing)
        snprintf(err, errlen, "id %" PRId64 " did not arrive (ids missing: %" PRIu64 ")",
                 first_missing, missing);
    else if (bad[BAD_POS])
        snprintf(err, errlen,
                 "%" PRIu64 " particles lie outside the %" PRIu64 " x %" PRIu64
                 " grid (the first: id %" PRId64 ")",
                 bad[BAD_POS], ny, nx, first[BAD_POS]);
    free(seen);
    return err[0] ? -1 : 0;
}
