/* SPDX-License-Identifier: BSD-3-Clause */
/* The netCDF-4 adapter (xfer_adapter_netcdf(), docs/adapters.md "netCDF").
 *
 * Debian's libnetcdf is serial (built on serial HDF5). Producer ranks each open the file
 * read-only and read their own hyperslab independently. Consumer writes are funnelled: every
 * rank sends its slab of one variable to rank 0 of the create communicator, one slab at a time,
 * and rank 0 writes it with nc_put_vara; memory stays bounded by the largest slab. The file is
 * created as "<path>.tmp" and renamed to <path> on commit; end_step is an nc_sync, so a
 * failure keeps every completed step: abort renames the file to "<path>.partial".
 *
 * Records (XFER_TYPE_RECORD) are netCDF-4 compound types: written as one compound per record
 * layout, its fields at their offsets (the C struct's layout); a compound variable of scalar and
 * 1-D array fields is listed as a record in the layout nc_get_vara fills, and read_record moves
 * the fields into the caller's layout by name.
 *
 * Every call that takes a communicator agrees on one status (the first failing rank's error
 * text is broadcast), so ranks never disagree about success. */
#include "netcdf_internal.h"

/* ---- shared helpers ------------------------------------------------------------------------ */

xfer_status_t nca_fail(int rc, const char *call, const char *file, const char *var)
{
    xfer_adapter_set_error("netcdf: %s(\"%s\"%s%s%s): %s", call, file, var ? ", variable \"" : "",
                           var ? var : "", var ? "\"" : "", nc_strerror(rc));
    return XFER_ERR_INTERNAL;
}

nc_type nca_type_of(xfer_type_t t)
{
    switch (t) {
    case XFER_TYPE_INT8:
        return NC_BYTE;
    case XFER_TYPE_UINT8:
        return NC_UBYTE;
    case XFER_TYPE_INT16:
        return NC_SHORT;
    case XFER_TYPE_UINT16:
        return NC_USHORT;
    case XFER_TYPE_INT32:
        return NC_INT;
    case XFER_TYPE_UINT32:
        return NC_UINT;
    case XFER_TYPE_INT64:
        return NC_INT64;
    case XFER_TYPE_UINT64:
        return NC_UINT64;
    case XFER_TYPE_FLOAT32:
        return NC_FLOAT;
    case XFER_TYPE_FLOAT64:
        return NC_DOUBLE;
    case XFER_TYPE_RECORD: /* a compound type of its own: def_record_type */
        break;
    }
    return NC_NAT;
}

xfer_type_t nca_xfer_type(nc_type t)
{
    int k;
    for (k = XFER_TYPE_INT8; k <= XFER_TYPE_FLOAT64; k++)
        if (nca_type_of((xfer_type_t) k) == t)
            return (xfer_type_t) k;
    return (xfer_type_t) 0;
}

const char *nca_type_name(nc_type t, char *buf, size_t cap)
{
    static const char *names[] = {"NC_NAT",   "NC_BYTE",   "NC_CHAR",  "NC_SHORT",  "NC_INT",
                                  "NC_FLOAT", "NC_DOUBLE", "NC_UBYTE", "NC_USHORT", "NC_UINT",
                                  "NC_INT64", "NC_UINT64", "NC_STRING"};
    if (t >= 0 && t <= NC_STRING)
        return names[t];
    snprintf(buf, cap, "user-defined type %d", (int) t);
    return buf;
}

/* @p prefix then @p name into @p dst, cut at @p cap (netCDF names fit XFER_ADAPTER_MAX_NAME). */
void nca_name_copy(char *dst, size_t cap, const char *prefix, const char *name)
{
    if (snprintf(dst, cap, "%s%s", prefix, name) >= (int) cap)
        dst[cap - 1] = '\0';
}

void nca_to_size(int nd, const uint64_t *in, size_t *out)
{
    int d;
    for (d = 0; d < nd; d++)
        out[d] = (size_t) in[d];
}

static const xfer_adapter_ops_t netcdf_ops = {
    .name = "netcdf",
    .open_read = nca_open_read,
    .vars = nca_vars,
    .read = nca_read,
    .close_read = nca_close_read,
    .create = nca_create_w,
    .write = nca_write,
    .end_step = nca_end_step,
    .commit = nca_commit,
    .abort = nca_abort,
    .groups = nca_groups,
    .lookup = nca_lookup,
    .write_group = NULL, /* global attributes: xfer_netcdf_define() */
    .skipped = nca_skipped,
    .read_record = nca_read_record,
};

const xfer_adapter_ops_t *xfer_adapter_netcdf(void)
{
    return &netcdf_ops;
}
