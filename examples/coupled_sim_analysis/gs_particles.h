/* SPDX-License-Identifier: BSD-3-Clause */
/* The tracer particles of the coupled example (docs/example.md, "Tracer particles"): the record
 * both programs exchange each coupled step as the joined dataset `particles`, what both compute
 * of a step's particles (gs_particles.c: count, means, each simulation rank's rows, and the
 * analysis' check that every particle arrived exactly once), and the simulation's motion of them
 * (gs_tracers.c: seeding, a drift up the gradient of V with Brownian noise, migration to the rank
 * whose block holds each particle). */
#ifndef GS_PARTICLES_H
#define GS_PARTICLES_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <xfer/xfer.h>

#define GS_PARTICLES_DATASET "particles"
/* A step attribute (int64) the simulation's rank 0 puts with the particles: how many it seeded,
 * the count the analysis checks each step against. */
#define GS_PARTICLES_ATTR    "n_particles"
#define GS_DEFAULT_PARTICLES 2000
#define GS_DEFAULT_CHI       4.0  /* drift up the gradient of V: velocity chi grad V */
#define GS_DEFAULT_DP        0.05 /* the particles' diffusivity (cells^2 per unit time) */

/** One tracer particle: `type: {id: int64, pos: [float64, 2], v: float64}` in the workflow file,
 * the layout of this struct (natural alignment: id 0, pos 8, v 24; 32 bytes). */
typedef struct gs_particle {
    int64_t id;    /**< 0 .. N - 1, fixed for the run */
    double pos[2]; /**< x (along a row, the column axis), y (the row axis), in cells: cell (i, j)
                      holds [j, j + 1) x [i, i + 1); periodic in [0, nx) x [0, ny) */
    double v;      /**< V in the particle's cell at the step put */
} gs_particle_t;

/** The layout of gs_particle_t as a record (from offsetof and sizeof), for desc.record of a put
 * and xfer_record_mpi_type; @p f holds its 3 fields. */
void gs_particle_record(xfer_record_t *r, xfer_record_field_t f[3]);

/** Does channel @p channel of @p cfg declare the particles? 1: yes, a joined 1-D record dataset
 * whose fields are gs_particle_t's; 0: not declared (the example runs without particles); -1:
 * declared otherwise, a message in @p err. */
int gs_particles_declared(const xfer_config_t *cfg, const char *channel, char *err, size_t errlen);

/** A step's particles in numbers, as both programs compute them: the count, the sums of x, y
 * and v over the particles, and each sending (simulation) rank's particles. */
typedef struct gs_pstats {
    int nsenders;
    uint64_t count;
    double xsum, ysum, vsum;
    uint64_t *rows; /* nsenders of them */
} gs_pstats_t;

int gs_pstats_init(gs_pstats_t *s, int nsenders);
void gs_pstats_free(gs_pstats_t *s);
/** Count @p n particles and add their sums (rows untouched). */
void gs_pstats_add(gs_pstats_t *s, const gs_particle_t *p, size_t n);
/** Sum count and sums on rank 0 of @p comm (collective; rows untouched). An MPI code. */
int gs_pstats_reduce(gs_pstats_t *s, MPI_Comm comm);
/** The CSV `step,time,particles,x_mean,y_mean,v_mean,rows_0,..`: a header, then one row per
 * coupled step (doubles with 17 digits). */
void gs_pstats_csv_header(FILE *f, int nsenders);
void gs_pstats_csv_row(FILE *f, uint64_t step, double time, const gs_pstats_t *s);

/** The analysis' particle check of one step, collective over @p comm (the analysis' ranks): each
 * rank passes its share (@p p, @p n) of the step's @p total particles (the joined dims[0]),
 * @p rows (each of the @p nsenders simulation ranks' particles, as xfer_get_rows gives them) and
 * @p seeded, the particles the simulation seeded. It checks that total == seeded, that the rows
 * add up to total, that every id 0 .. seeded - 1 arrived exactly once over all ranks (the counts
 * of every id, summed with MPI_Allreduce: 4 x seeded bytes on each rank) and that every position
 * is finite and inside the grid (@p ny x @p nx). 0 when it passes; else -1 on every rank alike,
 * with a message in @p err; an MPI error code as is. */
int gs_particles_check(const gs_particle_t *p, size_t n, uint64_t total, const uint64_t *rows,
                       int nsenders, uint64_t seeded, uint64_t ny, uint64_t nx, MPI_Comm comm,
                       char *err, size_t errlen);

/* ---- the simulation's particles (gs_tracers.c) -------------------------------------------- */

/** The simulation's block of the grid: rows r0 .. r0 + nr - 1, columns c0 .. c0 + nc - 1 of an
 * ny x nx grid; dims and coords of the process grid (MPI_Cart_create). */
typedef struct gs_block {
    uint64_t ny, nx, r0, c0, nr, nc;
    int dims[2], coords[2];
} gs_block_t;

/** The particles this rank owns (those in its block) and the means to move them. */
typedef struct gs_tracers {
    gs_block_t b;
    uint64_t total, seed;
    double chi, dp, dt;
    gs_particle_t *p; /* the particles this rank owns, n of them (room for cap) */
    size_t n, cap;
    gs_particle_t *send; /* the leaving ones, grouped by neighbour (room for send_cap) */
    size_t send_cap;
    unsigned char *dest;   /* per particle: its neighbour's place in the graph, 0xff: stays */
    MPI_Comm graph;        /* the block's neighbours, a distributed graph over cart */
    int nnbrs;             /* the other ranks among the 8 neighbouring blocks, each once */
    unsigned char slot[8]; /* the neighbour at each offset: its place in the graph, or 0xff */
    MPI_Datatype type;     /* one gs_particle_t (xfer_record_mpi_type) */
    uint64_t migrated;     /* particles this rank sent to a neighbour, all steps */
    int64_t stray;         /* gs_tracers_step returned -2: the id of a particle that arrived
                              at this rank from outside the block's neighbourhood (a bug) */
} gs_tracers_t;

/** Seed @p total particles uniformly over the grid from @p seed (the same positions for any rank
 * count); this rank keeps those in its block. @p cart: the simulation's periodic Cartesian
 * communicator (collective over it: builds the neighbour graph). An MPI code, or -1 out of
 * memory. */
int gs_tracers_init(gs_tracers_t *t, MPI_Comm cart, const gs_block_t *b, uint64_t total,
                    uint64_t seed, double chi, double dp, double dt);
/** Step @p step (1, 2, ...): move every particle by chi grad V dt + sqrt(2 dp dt) xi (xi two
 * standard normals drawn from the seed, the id and the step; each component limited to one
 * cell), with grad V by central differences in the particle's cell, then hand the particles
 * that left the block to the neighbour that holds them (collective over the graph). @p v: V
 * with its halo, the block's cell (i, j) at v[(i + 1) * stride + j + 1]. An MPI code, -1 out
 * of memory, or -2 when a particle arrived that this block does not hold (t->stray). */
int gs_tracers_step(gs_tracers_t *t, const double *v, size_t stride, uint64_t step);
/** Set every particle's v to V in its cell (@p v as for gs_tracers_step). */
void gs_tracers_sample(gs_tracers_t *t, const double *v, size_t stride);
void gs_tracers_free(gs_tracers_t *t);

#endif /* GS_PARTICLES_H */
