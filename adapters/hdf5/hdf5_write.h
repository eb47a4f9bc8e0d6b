/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 adapter's consumer side: its handle, shared by hdf5_write.c (create, the steps'
 * writes and ends) and hdf5_commit.c (commit, abort). */
#ifndef XFER_HDF5_WRITE_H
#define XFER_HDF5_WRITE_H

#include "hdf5_internal.h"

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
    double *times; /* each completed step's time */
    uint64_t captimes;
    double step_time; /* set_time for the current step */
    int step_time_set;
} h5write_t;

/* hdf5_write.c */
/* The directory of @p path ("." for a bare name, "/" for a file in the root). */
void h5w_dir_of(const char *path, char *dir, size_t cap);
/* The root's step counter set to @p n (collective; the status agreed). */
xfer_status_t h5w_step_count(h5write_t *w, uint64_t n);

/* hdf5_commit.c */
/* Free the handle (the file already closed), its reservation's descriptor too. */
void h5w_free(h5write_t *w);

#endif
