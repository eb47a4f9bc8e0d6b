/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 adapter's files: what they share. hdf5_adapter.c: the ops table; hdf5_common.c: errors
 * and types; hdf5_read.c: the producer side; hdf5_write.c: the consumer side, hdf5_commit.c its
 * commit and abort (hdf5_write.h: their handle); hdf5_coords.c: dimension scales, the time
 * coordinate and the XDMF description of what hdf5_write.c writes. */
#ifndef XFER_HDF5_INTERNAL_H
#define XFER_HDF5_INTERNAL_H

#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>

#include <xfer/adapter.h>

#include "adapter_common.h"

#define STEPS_ATTR "xfer_steps_complete"
/* on the coordinates the writer makes (hdf5_coords.c): the reader leaves them out */
#define XFER_COORD_ATTR "xfer_coordinate"

/* hdf5_common.c */
void h5_message(char *out, size_t cap);
xfer_status_t h5_fail(xfer_status_t st, const char *file, const char *obj, const char *call);
int h5_agreed(MPI_Comm comm, xfer_status_t *st);
hid_t h5_native_of(xfer_type_t t);
hid_t h5_collective_dxpl(void);
/* Close every valid handle of @p ids (datasets, dataspaces, property lists, types, groups, in
 * that order of the array); invalid ones (negative) are skipped. */
void h5_close_ids(const hid_t *ids, int n);
#define H5_CLOSE(...)                                                                              \
    do {                                                                                           \
        const hid_t h5_ids_[] = {__VA_ARGS__};                                                     \
        h5_close_ids(h5_ids_, (int) (sizeof(h5_ids_) / sizeof(h5_ids_[0])));                       \
    } while (0)
const char *h5_class_name(H5T_class_t c);
xfer_type_t h5_type_of(hid_t t, char *why, size_t cap);
/* the memory (and file) type of a variable: a copy of the native scalar, or a record's compound;
 * the caller closes it */
hid_t h5_mem_type(const xfer_adapter_var_t *v);
hid_t h5_record_mem_type(const xfer_record_t *r);
/* the record of compound type @p ft: 0 (*out the caller's), 1 not a record (why), -1 an error */
int h5_record_of(hid_t ft, xfer_record_t **out, char *why, size_t cap);
int h5_grow(void **p, int *cap, int n, size_t elem);
hid_t h5_select_box(hid_t fs, int lead, uint64_t step, int ndims, const uint64_t start[],
                    const uint64_t count[], int *empty);

/* hdf5_read.c: the producer side */
xfer_status_t h5_open_read(const char *path, MPI_Comm comm, void **hp);
xfer_status_t h5_vars(void *h, int *n, const xfer_adapter_var_t **vars);
xfer_status_t h5_read(void *h, int var, const uint64_t start[], const uint64_t count[], void *buf);
xfer_status_t h5_read_record(void *h, int var, const xfer_record_t *as, const uint64_t start[],
                             const uint64_t count[], void *buf);
xfer_status_t h5_close_read(void **hp);
xfer_status_t h5_groups(void *h, int *n, const xfer_adapter_var_t **groups);
xfer_status_t h5_lookup(void *h, const char *name);
xfer_status_t h5_skipped(void *h, int *n, const char *const **lines);

/* hdf5_write.c, hdf5_commit.c: the consumer side */
xfer_status_t h5_create(const char *path, MPI_Comm comm, const xfer_adapter_wopts_t *o, void **hp);
xfer_status_t h5_write(void *h, uint64_t step, const xfer_adapter_var_t *v, const uint64_t start[],
                       const uint64_t count[], const void *buf);
xfer_status_t h5_write_boxes(void *h, uint64_t step, const xfer_adapter_var_t *v, int n,
                             const uint64_t start[], const uint64_t count[],
                             const void *const bufs[]);
xfer_status_t h5_end_step(void *h, uint64_t step);
xfer_status_t h5_commit(void **hp);
void h5_abort(void **hp);
xfer_status_t h5_write_group(void *h, uint64_t step, const xfer_adapter_var_t *g);
xfer_status_t h5_set_time(void *h, uint64_t step, double t);

/* hdf5_coords.c: dimension scales, the time coordinate, XDMF */
xfer_status_t h5c_create_time(hid_t file, const char *where, MPI_Comm comm);
xfer_status_t h5c_time_step(hid_t file, const char *where, uint64_t step, double t, MPI_Comm comm);
xfer_status_t h5c_attach(hid_t file, hid_t ds, const char *dsname, const xfer_adapter_var_t *v,
                         MPI_Comm comm, const char *where);
int h5c_write_xdmf(const char *xmf, const char *h5name, const xfer_adapter_var_t *vars, int n,
                   uint64_t nsteps, const double *times, char *why, size_t cap);
/* XDMF's NumberType of @p t, its Precision in @p precision */
const char *h5c_xdmf_number(xfer_type_t t, int *precision);
/* @p text inside an XML comment ("--" written "-_") */
void h5c_comment(FILE *f, const char *text);

#endif
