/* SPDX-License-Identifier: BSD-3-Clause */
/* The figures of gray-scott-analysis (gs_figures.c): each rank's bounded sample of V (and of the
 * particles' positions) and, on rank 0 at the end, the gnuplot script and its rendering. */
#ifndef GS_FIGURES_H
#define GS_FIGURES_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "gs_particles.h"

#define GS_PANELS         6    /* panels of V_steps.png */
#define GS_SNAP_SLOTS     12   /* steps of V each rank keeps for them (see snaps_t) */
#define GS_PANEL_MAX      256  /* a panel's longer side in cells: larger grids are shown as means */
#define GS_MARKED_STEPS   50   /* stats.png marks each step with a point up to so many steps */
#define GS_PLOT_PARTICLES 2000 /* particles.png shows the particles whose id is below it */

/* V for the small multiple (V_steps.png). The analysis does not know how many steps will come,
 * and keeping every step's rows would grow without bound, so each rank keeps an evenly spaced
 * sample of its rows of V: every stride-th step in GS_SNAP_SLOTS slots; when they are full every
 * other one goes and the stride doubles (once thinned, 7 to 12 steps, the stride a power of two),
 * and one more slot holds the latest step. The rows are kept as block sums on a panel of at most
 * GS_PANEL_MAX x GS_PANEL_MAX cells (blocks of f x f cells; f = 1 up to 256 x 256), so a rank
 * holds GS_SNAP_SLOTS + 1 copies of its share of a panel, whatever the grid and the step count.
 * At the end the GS_PANELS sampled steps nearest to evenly spaced targets, the first and the
 * last step among them, are summed on rank 0 (MPI_Reduce) and divided into block means.
 * With particles (particles.png), each slot also holds the positions of the particles of id
 * below np = min(N, GS_PLOT_PARTICLES), indexed by id: this rank's share of them, zeros for the
 * others', so that the sum over the ranks is every one of them (each id arrives once: checked).
 * analysis.py keeps and picks the same steps. */
typedef struct snaps {
    uint64_t f, cy, cx; /* the panel: cy x cx blocks of f x f cells */
    uint64_t c0, nrows; /* this rank's rows of the panel: c0 .. c0 + nrows - 1 */
    uint64_t stride, nkept, nseen;
    uint64_t seen[GS_SNAP_SLOTS + 1], step[GS_SNAP_SLOTS + 1]; /* arrival index, channel step */
    double time[GS_SNAP_SLOTS + 1];
    double *sums; /* GS_SNAP_SLOTS + 1 slots of nrows x cx block sums; the last: the latest step */
    uint64_t np;  /* particles kept: ids 0 .. np - 1 (0: none) */
    double *pos;  /* GS_SNAP_SLOTS + 1 slots of np x (x, y) */
} snaps_t;

/* What the figures show, on rank 0 at the end. */
typedef struct plot {
    const char *dir;    /* the output directory */
    uint64_t ny, nx, f; /* the grid; the panels show means of f x f cells */
    uint64_t cy, cx;    /* the panels' shape */
    int npanels;
    uint64_t pstep[GS_PANELS]; /* the panels' steps and simulated times */
    double ptime[GS_PANELS];
    double vmax; /* the top of the common colour scale */
    uint64_t nsteps;
    double t_first, t_last;
    int bins, top;           /* histogram bins; the highest one with a count in any step */
    uint64_t hmax;           /* the largest count */
    int particles;           /* draw particles.png */
    uint64_t np, nparticles; /* the particles it shows (ids 0 .. np - 1), of how many */
} plot_t;

/* The sample of V (see gs_figures.c for each call): set up for this rank's rows r0 .. r0 + nr - 1
 * of an ny x nx grid (0, or -1 out of memory), keep the particles of id below np too (before the
 * first step: 0, or -1 out of memory), add a step (with this rank's n particles p, if kept),
 * pick the panels' slots (how many), gather them as block means on rank 0 and the particles'
 * positions (collective; an MPI code, or -1 out of memory), free. */
int gs_snaps_init(snaps_t *s, uint64_t ny, uint64_t nx, uint64_t r0, uint64_t nr);
int gs_snaps_particles(snaps_t *s, uint64_t np);
void gs_snaps_add(snaps_t *s, uint64_t step, double time, const double *v, uint64_t r0, uint64_t nr,
                  uint64_t nx, const gs_particle_t *p, size_t n);
int gs_snaps_pick(const snaps_t *s, uint64_t *pick);
int gs_snaps_gather(const snaps_t *s, const uint64_t *pick, int np, uint64_t ny, uint64_t nx,
                    MPI_Comm comm, double *out, double *pos_out);
void gs_snaps_free(snaps_t *s);
/* Write the gnuplot script and the panels' data (and the particles' positions, p->np of them per
 * panel, when p->np > 0) and run gnuplot: 0, or -1 and a message in err. */
int gs_render_figures(const plot_t *p, const double *panels, const double *pos, char *err,
                      size_t errlen);

#endif /* GS_FIGURES_H */
