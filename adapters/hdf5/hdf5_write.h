/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 adapter's consumer side: its handle, shared by hdf5_write.c (create, the steps'
 * writes and ends) and hdf5_commit.c (commit, abort). */
#ifndef XFER_HDF5_WRITE_H
#define XFER_HDF5_WRITE_H

#include "hdf5_internal.h"

typedef struct h5points h5points_t; /* hdf5_points.c */

typedef struct h5write {
    char *path, *tmp;
    MPI_Comm comm;
    int rank;
    hid_t file;
    int resfd;         /* rank 0: the file, for reservations (-1: none, or not supported) */
    uint64_t reserved; /* rank 0: bytes of the file reserved so far */
    xfer_adapter_wopts_t o;
    uint64_t completed; /* steps ended */
    int in_step;        /* something of step `completed` was written */
    /* rank 0: the file's allocated bytes after the last completed step, and the most a step
     * has added to them (the free-space check before each step) */
    uint64_t alloc_last, growth_max;
    int nnames, capnames;
    char **names; /* STEP_DIM: the datasets, created in step 0 */
    /* STEP_DIM: the coordinates (hdf5_coords.c) */
    xfer_adapter_var_t *vars; /* the datasets' shapes, by their paths, for the XDMF file */
    int nvars, capvars;
    double *times; /* STEP_DIM, GROUP_PER_STEP: each completed step's time */
    uint64_t captimes;
    h5points_t *points; /* GROUP_PER_STEP: the joined datasets, for the XDMF file */
    double step_time;   /* set_time for the current step */
    int step_time_set;
} h5write_t;

/* hdf5_write.c */
/* The directory of @p path ("." for a bare name, "/" for a file in the root). */
void h5w_dir_of(const char *path, char *dir, size_t cap);
/* The root's step counter set to @p n (collective; the status agreed). */
xfer_status_t h5w_step_count(h5write_t *w, uint64_t n);

/* Rank 0, before the collective write of contiguous dataset @p ds: its room on the disk
 * (the caller agrees on the result before its next collective call). */
xfer_status_t h5w_reserve_data(h5write_t *w, hid_t ds, const char *obj);
/* A link creation list that creates missing groups (the caller closes it). */
hid_t h5w_intermediate_lcpl(void);

/* hdf5_points.c: joined datasets of the group-per-step layout */
/* Step @p step's variable @p v, just written at @p path (its rows @p start[0], @p count[0] of
 * this rank in @p buf): noted for the XDMF file; when its geometry is found the vertex list
 * grows to its rows, and a record gets numeric copies of its fields beside it, at
 * PATH.xdmf/FIELD (collective; the status agreed). */
xfer_status_t h5p_joined(h5write_t *w, uint64_t step, const char *path, const xfer_adapter_var_t *v,
                         const uint64_t start[], const uint64_t count[], const void *buf);
/* Rank 0: @p xmf, the XDMF description of the joined datasets of the completed steps of
 * @p h5name (nothing when it has none). 0, or -1 with the reason in @p why. */
int h5p_write_xdmf(const h5write_t *w, const char *xmf, const char *h5name, char *why, size_t cap);
void h5p_free(h5points_t *p);

/* hdf5_commit.c */
/* Free the handle (the file already closed), its reservation's descriptor too. */
void h5w_free(h5write_t *w);

#endif
