/* SPDX-License-Identifier: BSD-3-Clause */
/* The netCDF-4 adapter's parts (netcdf_adapter.c: the helpers and the table; netcdf_read.c: the
 * producer's reads; netcdf_write.c: the consumer's writes). */
#ifndef XFER_NETCDF_INTERNAL_H
#define XFER_NETCDF_INTERNAL_H

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xfer/adapter_netcdf.h>

#include "adapter_common.h"

#define MSG_CHUNK   (1 << 30) /* bytes per MPI message of a slab (counts are ints) */
#define TAG_SLAB    7301
#define ERR_TEXT    1024
#define STEP_FORMAT "step_%06" PRIu64

/* netcdf_adapter.c */
xfer_status_t nca_fail(int rc, const char *call, const char *file, const char *var);
nc_type nca_type_of(xfer_type_t t);
xfer_type_t nca_xfer_type(nc_type t);
void nca_name_copy(char *dst, size_t cap, const char *prefix, const char *name);
void nca_to_size(int nd, const uint64_t *in, size_t *out);
const char *nca_type_name(nc_type t, char *buf, size_t cap);

/* netcdf_read.c */
xfer_status_t nca_open_read(const char *path, MPI_Comm comm, void **h);
xfer_status_t nca_vars(void *h, int *n, const xfer_adapter_var_t **vars);
xfer_status_t nca_read(void *h, int var, const uint64_t start[], const uint64_t count[], void *buf);
xfer_status_t nca_close_read(void **h);
xfer_status_t nca_groups(void *h, int *n, const xfer_adapter_var_t **groups);
xfer_status_t nca_lookup(void *h, const char *name);
xfer_status_t nca_skipped(void *h, int *n, const char *const **lines);
xfer_status_t nca_read_record(void *h, int var, const xfer_record_t *as, const uint64_t start[],
                              const uint64_t count[], void *buf);

/* netcdf_write.c */
xfer_status_t nca_create_w(const char *path, MPI_Comm comm, const xfer_adapter_wopts_t *o,
                           void **h);
xfer_status_t nca_write(void *h, uint64_t step, const xfer_adapter_var_t *v, const uint64_t start[],
                        const uint64_t count[], const void *buf);
xfer_status_t nca_end_step(void *h, uint64_t step);
xfer_status_t nca_commit(void **h);
void nca_abort(void **h);

#endif /* XFER_NETCDF_INTERNAL_H */
