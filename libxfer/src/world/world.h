/* SPDX-License-Identifier: BSD-3-Clause */
/* libxfer_world: MPI_COMM_WORLD per component in an MPMD launch (world.c). Shared by world.c
 * and the interceptors gen_world.py generates from the MPI library's mpi.h. */
#ifndef XFER_WORLD_H
#define XFER_WORLD_H

#include <mpi.h>
#include <stddef.h>

typedef void (*xw_fn_t)(void);

typedef struct xw_fn_info {
    const char *name; /* an intercepted MPI function */
    int collective;   /* refused on the job-wide world under mpi_world: job */
} xw_fn_info_t;

/* The generated interceptors, NULL-terminated. */
extern const xw_fn_info_t xw_generated[];

/* The communicator to pass on for @p comm, an argument of @p fn: the component's world for
 * MPI_COMM_WORLD under mpi_world: component; under mpi_world: job, MPI_COMM_NULL (the call then
 * fails at once, after a message naming it and the fix) when @p collective; else @p comm. */
MPI_Comm xw_comm(MPI_Comm comm, const char *fn, int collective);

/* An attribute's communicator: @p comm itself for a predefined key (MPI attaches those to the
 * job's world), else as xw_comm. */
MPI_Comm xw_attr_comm(MPI_Comm comm, int keyval);

/* The component's world under mpi_world: component, else MPI_COMM_NULL (world_errh.c: an error
 * handler called with it gives the program MPI_COMM_WORLD). */
MPI_Comm xw_comp_world(void);

/* The same as xw_comm for a Fortran handle. */
MPI_Fint xw_fcomm(MPI_Fint comm, const char *fn, int collective);

/* The same as xw_attr_comm for a Fortran handle and key. */
MPI_Fint xw_fattr_comm(MPI_Fint comm, MPI_Fint keyval);

/* The next definition of @p name (the MPI library's), looked up once into *@p cache. */
xw_fn_t xw_next(xw_fn_t *cache, const char *name);

/* libxfer's way to the job-wide world: 1 and a duplicate of it in *@p job when the component's
 * world stands in for MPI_COMM_WORLD, else 0. Found by libxfer with dlsym. */
int xfer_world_job(MPI_Comm *job);

#endif /* XFER_WORLD_H */
