/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * netCDF-4 specifics of the netCDF adapter (libxfer_netcdf, xfer_adapter_netcdf()): what the
 * shared ops table cannot say about a netCDF file — its named (and unlimited) dimensions, its
 * global attributes, scalar variables and the variables it had to skip. They travel in-band as
 * an attribute table (xfer_adapter_table_pack(), docs/adapters.md) so that a consumer can
 * write a file equivalent to the producer's input.
 *
 * Table layout, in order (names starting with '/' cannot be netCDF names, so they never clash
 * with a variable):
 *   "/"              type 0, ndims 0: the global attributes;
 *   "/dim/<name>"    type 0, ndims 1, dims[0] = length; attribute "unlimited" (uint8 0|1);
 *   "/dimids/<var>"  type 0, ndims = the variable's netCDF rank (0: scalar), dims[k] = index
 *                    of its k-th dimension among the "/dim/" objects;
 *   "<var>"          the variable (as vars() lists it: a scalar has shape [1]) with its
 *                    attributes. Each "/dimids/" object precedes its variable.
 */
#ifndef XFER_ADAPTER_NETCDF_H
#define XFER_ADAPTER_NETCDF_H

#include <stddef.h>
#include <stdint.h>

#include <xfer/adapter.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Producer: the attribute table of the file open in @p h (a handle of open_read), every
 * listed variable included. Deterministic: the same file gives the same bytes. Local.
 * Caller owns *@p buf (free()).
 */
XFER_PUBLIC xfer_status_t xfer_netcdf_table(void *h, uint8_t **buf, size_t *len);

/**
 * Producer: why variable @p name of the open file is not among vars() ("type NC_CHAR is not
 * supported ..."), or NULL when it is listed or the file has no such variable.
 */
XFER_PUBLIC const char *xfer_netcdf_unsupported(void *h, const char *name);

/** Producer: what open_read skipped or could not carry (one line each; "" when nothing). */
XFER_PUBLIC const char *xfer_netcdf_notes(void *h);

/**
 * Consumer: before the first write, take the producer's table: its global attributes are
 * written, and with @p same != 0 (use it with XFER_ADAPTER_SAME_PATHS) its dimensions are
 * defined under their own names (unlimited ones unlimited) and variables written with them, the
 * file then holding exactly one step (the input's equivalent). Collective over the create
 * communicator.
 */
XFER_PUBLIC xfer_status_t xfer_netcdf_define(void *h, const uint8_t *table, size_t len, int same);

#ifdef __cplusplus
}
#endif

#endif /* XFER_ADAPTER_NETCDF_H */
