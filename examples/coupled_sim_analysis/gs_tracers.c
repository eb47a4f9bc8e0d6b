/* SPDX-License-Identifier: BSD-3-Clause */
/* The simulation's tracer particles (gs_particles.h, docs/example.md "Tracer particles"). Each
 * particle is a Brownian walker drawn up the gradient of V, as bacteria up a chemoattractant
 * (the drift of the Keller-Segel model):
 *     dx = chi grad V dt + sqrt(2 Dp dt) xi,
 * xi two standard normals per particle and step (Box-Muller on a hash of the seed, the id and
 * the step: the same path for any rank count), grad V by central differences in the
 * particle's cell (the 5-point stencil's halo suffices), each component of a move limited to
 * one cell. A particle belongs to the rank whose block holds its cell; a move of at most one
 * cell per axis leaves the block at most into one of its 8 neighbours (a diagonal one too), so
 * migration is one neighbourhood exchange per step on a distributed graph of those neighbours
 * over the simulation's Cartesian communicator: the counts (MPI_Neighbor_alltoall), then the
 * particles (MPI_Neighbor_alltoallv, the record's MPI datatype). On a narrow process grid
 * several offsets lead to one rank (2 x 2: up and down), or to this one: the graph holds each
 * other rank once, so that no two edges join the same pair of ranks and a message's place in
 * the buffers never depends on how the MPI orders them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gs_particles.h"

#define NBRS   8
#define STAY   0xff
#define TWO_PI 6.283185307179586476925286766559
/* (row, column) offsets of the neighbours, as gray_scott_sim.c's halo: faces, then corners */
static const int nbr_offsets[NBRS][2] = {{-1, 0},  {1, 0},  {0, -1}, {0, 1},
                                         {-1, -1}, {-1, 1}, {1, -1}, {1, 1}};

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) from the seed, a particle and a draw k (splitmix64 rounds). */
static double uniform(uint64_t seed, uint64_t id, uint64_t k)
{
    uint64_t z = mix64(seed * 0x9E3779B97F4A7C15ull + 0x7472616365727321ull); /* "tracers!" */
    z = mix64(z + id * 0x9E3779B97F4A7C15ull);
    z = mix64(z + k);
    return (double) (z >> 11) * 0x1.0p-53;
}

/* x taken into [0, n) (periodic); a move is at most a cell, so one turn suffices. */
static double wrap(double x, double n)
{
    if (x < 0.0)
        x += n; /* may round up to n itself: the next line takes it to 0 */
    if (x >= n)
        x -= n;
    return x;
}

static double clamp1(double d)
{
    return d > 1.0 ? 1.0 : d < -1.0 ? -1.0 : d;
}

/* -1, 0 or 1: the neighbour, along one axis, whose block holds cell c, for a block of n cells
 * from c0 of an axis of len cells (c at most one cell outside the block). */
static int side(uint64_t c, uint64_t c0, uint64_t n, uint64_t len)
{
    const uint64_t rel = (c + len - c0) % len;
    if (rel < n)
        return 0;
    return rel == n ? 1 : -1;
}

static int grow(gs_particle_t **a, size_t *cap, size_t need)
{
    size_t c = *cap ? *cap : 64;
    gs_particle_t *q;
    if (need <= *cap)
        return 0;
    while (c < need)
        c *= 2;
    if (!(q = realloc(*a, c * sizeof(*q))))
        return -1;
    *a = q;
    *cap = c;
    return 0;
}

int gs_tracers_init(gs_tracers_t *t, MPI_Comm cart, const gs_block_t *b, uint64_t total,
                    uint64_t seed, double chi, double dp, double dt)
{
    xfer_record_field_t f[3];
    xfer_record_t rec;
    int nbr[NBRS], ones[NBRS], me, k, j, rc;
    uint64_t id;

    memset(t, 0, sizeof(*t));
    t->graph = MPI_COMM_NULL;
    t->type = MPI_DATATYPE_NULL;
    t->b = *b;
    t->total = total;
    t->seed = seed;
    t->chi = chi;
    t->dp = dp;
    t->dt = dt;
    for (id = 0; id < total; id++) {
        const double x = wrap(uniform(seed, id, 0) * (double) b->nx, (double) b->nx);
        const double y = wrap(uniform(seed, id, 1) * (double) b->ny, (double) b->ny);
        if (side((uint64_t) y, b->r0, b->nr, b->ny) || side((uint64_t) x, b->c0, b->nc, b->nx))
            continue;
        if (grow(&t->p, &t->cap, t->n + 1) != 0)
            return -1;
        t->p[t->n++] = (gs_particle_t){(int64_t) id, {x, y}, 0.0};
    }
    /* the ranks at the 8 offsets, each once and this one left out: the offsets are symmetric
     * (o and -o), so those a rank sends to are those it receives from, and one list serves as
     * both; slot[k]: the place in it of the rank at offset k, STAY for this rank */
    if ((rc = MPI_Comm_rank(cart, &me)))
        return rc;
    for (k = 0; k < NBRS; k++) {
        int at[2], r;
        at[0] = b->coords[0] + nbr_offsets[k][0];
        at[1] = b->coords[1] + nbr_offsets[k][1];
        if ((rc = MPI_Cart_rank(cart, at, &r)))
            return rc;
        for (j = 0; j < t->nnbrs && nbr[j] != r; j++)
            ;
        if (j == t->nnbrs && r != me) {
            ones[t->nnbrs] = 1; /* not MPI_UNWEIGHTED: GCC 12 flags Open MPI's (int *) 2 */
            nbr[t->nnbrs++] = r;
        }
        t->slot[k] = r == me ? STAY : (unsigned char) j;
    }
    if ((rc = MPI_Dist_graph_create_adjacent(cart, t->nnbrs, nbr, ones, t->nnbrs, nbr, ones,
                                             MPI_INFO_NULL, 0, &t->graph)))
        return rc;
    gs_particle_record(&rec, f);
    if (xfer_record_mpi_type(&rec, &t->type) != XFER_SUCCESS)
        return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

/* Hand the particles that left the block to their neighbours; take theirs. */
static int migrate(gs_tracers_t *t)
{
    int scount[NBRS] = {0}, sdispl[NBRS], rcount[NBRS], rdispl[NBRS], k, rc;
    size_t i, kept = 0, nsend = 0, nrecv = 0;

    for (i = 0; i < t->n; i++)
        if (t->dest[i] != STAY) {
            scount[t->dest[i]]++;
            nsend++;
        }
    if (grow(&t->send, &t->send_cap, nsend) != 0)
        return -1;
    for (k = 0, sdispl[0] = 0; k + 1 < t->nnbrs; k++)
        sdispl[k + 1] = sdispl[k] + scount[k];
    {
        int at[NBRS];
        memcpy(at, sdispl, sizeof(at));
        for (i = 0; i < t->n; i++) {
            if (t->dest[i] == STAY)
                t->p[kept++] = t->p[i];
            else
                t->send[at[t->dest[i]]++] = t->p[i];
        }
    }
    if ((rc = MPI_Neighbor_alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, t->graph)))
        return rc;
    for (k = 0; k < t->nnbrs; k++) {
        rdispl[k] = (int) nrecv;
        nrecv += (size_t) rcount[k];
    }
    if (grow(&t->p, &t->cap, kept + nrecv) != 0)
        return -1;
    if ((rc = MPI_Neighbor_alltoallv(t->send, scount, sdispl, t->type, t->p + kept, rcount, rdispl,
                                     t->type, t->graph)))
        return rc;
    t->migrated += nsend;
    for (i = kept; i < kept + nrecv; i++) /* what came is ours: a wrong move would show here */
        if (side((uint64_t) t->p[i].pos[1], t->b.r0, t->b.nr, t->b.ny) ||
            side((uint64_t) t->p[i].pos[0], t->b.c0, t->b.nc, t->b.nx)) {
            t->stray = t->p[i].id;
            return -2;
        }
    t->n = kept + nrecv;
    return MPI_SUCCESS;
}

int gs_tracers_step(gs_tracers_t *t, const double *v, size_t stride, uint64_t step)
{
    const gs_block_t *b = &t->b;
    const double sigma = sqrt(2.0 * t->dp * t->dt);
    unsigned char *dest;
    size_t i;

    if (!(dest = realloc(t->dest, t->cap ? t->cap : 1)))
        return -1;
    t->dest = dest;
    for (i = 0; i < t->n; i++) {
        gs_particle_t *p = &t->p[i];
        const uint64_t ci = (uint64_t) p->pos[1], cj = (uint64_t) p->pos[0];
        const double *c = v + (ci - b->r0 + 1) * stride + (cj - b->c0 + 1);
        const double gx = 0.5 * (c[1] - c[-1]), gy = 0.5 * (c[stride] - c[-(ptrdiff_t) stride]);
        const double u1 = 1.0 - uniform(t->seed, (uint64_t) p->id, 2 * step); /* (0, 1] */
        const double u2 = uniform(t->seed, (uint64_t) p->id, 2 * step + 1);
        const double r = sigma * sqrt(-2.0 * log(u1)), a = TWO_PI * u2;
        int oy, ox, k;

        p->pos[0] = wrap(p->pos[0] + clamp1(t->chi * gx * t->dt + r * cos(a)), (double) b->nx);
        p->pos[1] = wrap(p->pos[1] + clamp1(t->chi * gy * t->dt + r * sin(a)), (double) b->ny);
        oy = side((uint64_t) p->pos[1], b->r0, b->nr, b->ny);
        ox = side((uint64_t) p->pos[0], b->c0, b->nc, b->nx);
        dest[i] = STAY;
        for (k = 0; k < NBRS && (oy || ox); k++)
            if (nbr_offsets[k][0] == oy && nbr_offsets[k][1] == ox)
                dest[i] = t->slot[k];
    }
    return migrate(t);
}

void gs_tracers_sample(gs_tracers_t *t, const double *v, size_t stride)
{
    size_t i;
    for (i = 0; i < t->n; i++) {
        const uint64_t ci = (uint64_t) t->p[i].pos[1], cj = (uint64_t) t->p[i].pos[0];
        t->p[i].v = v[(ci - t->b.r0 + 1) * stride + (cj - t->b.c0 + 1)];
    }
}

void gs_tracers_free(gs_tracers_t *t)
{
    if (t->graph != MPI_COMM_NULL)
        MPI_Comm_free(&t->graph);
    if (t->type != MPI_DATATYPE_NULL)
        MPI_Type_free(&t->type);
    free(t->p);
    free(t->send);
    free(t->dest);
    memset(t, 0, sizeof(*t));
}
