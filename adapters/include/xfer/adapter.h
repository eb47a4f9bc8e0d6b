/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * File adapters: one small operations table shared by the HDF5 adapter (adapters/hdf5) and the
 * netCDF-4 adapter (adapters/netcdf_stub). A producer reads the variables of a file, each rank
 * its hyperslab, and puts them into a channel; a consumer writes what it receives into a file.
 * Each adapter is its own library (libxfer_hdf5, libxfer_netcdf): Debian's netCDF is built on
 * serial HDF5, which cannot share a process with parallel HDF5, so no program links both.
 *
 * Every call that takes a communicator is collective over it. Errors return a status and leave
 * a message in xfer_last_error()-style text (xfer_adapter_error()) naming the file, the variable
 * and the library call.
 */
#ifndef XFER_ADAPTER_H
#define XFER_ADAPTER_H

#include <errno.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include <xfer/config.h>
#include <xfer/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XFER_ADAPTER_MAX_NAME 256 /* bytes of a variable's full name, NUL included */
/** Longest axis name (dim_names), terminating NUL included. */
#define XFER_ADAPTER_MAX_DIMNAME 32

/** An attribute: numeric (a small array of @c type) or text. */
typedef struct xfer_adapter_attr {
    char name[XFER_ADAPTER_MAX_NAME];
    int is_text;      /**< 1: @c data holds @c count bytes of text (no NUL); 2: the same, stored
                           as a variable-length string (HDF5); 0: numeric */
    xfer_type_t type; /**< numeric attributes */
    size_t count;     /**< elements (text: bytes) */
    void *data;
    /* Added for HDF5 (zero-filled by older code: a one-dimensional array of count elements). */
    int shape_set;                /**< 1: ndims/dims give the shape (ndims 0: a scalar) */
    int ndims;                    /**< numeric attributes with shape_set */
    uint64_t dims[XFER_MAX_DIMS]; /**< product = count */
} xfer_adapter_attr_t;

/** A variable of a file: what travels through a channel as one dataset. */
typedef struct xfer_adapter_var {
    char name[XFER_ADAPTER_MAX_NAME]; /**< HDF5: path ("/fields/U"); netCDF: variable name */
    xfer_type_t type;
    int ndims;
    uint64_t dims[XFER_MAX_DIMS];
    int nattrs;
    xfer_adapter_attr_t *attrs;
    /** Optional names of the axes ("y", "x"): writers that keep coordinates (HDF5, step
     *  dimension) name the dimension scales so; "" gives VAR_dK. Variables of a group that name
     *  an axis alike share it. */
    char dim_names[XFER_MAX_DIMS][XFER_ADAPTER_MAX_DIMNAME];
    /** type == XFER_TYPE_RECORD: the fields of one element (names, scalar types, counts,
     *  offsets) and its size, padding included; NULL otherwise. Added for records (issue 30):
     *  older callers zero-fill it. On write, the caller's (it stays the caller's; the buffer
     *  holds elements laid out so); from vars(), the adapter's, built from the file's type with
     *  the layout read() fills (HDF5: the file's compound type made native, a C struct of its
     *  members in member order), owned by the handle until close_read. Field names are C
     *  identifiers, as in a workflow file. */
    const xfer_record_t *record;
    /** On write: 1 when the variable is a joined dataset (dims: [joined, ...]): dims[0] is the
     *  step's rows, a number that changes from step to step. Added for the XDMF description of
     *  joined datasets: older callers zero-fill it. HDF5: the group-per-step layout describes
     *  such variables in OUT.xmf as points (docs/adapters.md, "XDMF for joined datasets"); the
     *  step-dimension layout refuses them. Not set by vars(). */
    int joined;
    /** On write: 1-9 stores the variable compressed, losslessly: HDF5 chunks it and runs its
     *  own shuffle and deflate filters at this level (parallel HDF5 filters a dataset only in a
     *  collective write, which is how this adapter writes everything); 0 stores it as it is.
     *  Added for the file transport's compressed datasets: older callers zero-fill it. A build
     *  of HDF5 without deflate writes XFER_ERR_NOT_SUPPORTED naming the variable. Not set by
     *  vars(). The netCDF adapter ignores it. */
    int deflate;
} xfer_adapter_var_t;

/** How received steps are laid out in the output file. */
typedef enum xfer_adapter_layout {
    XFER_ADAPTER_GROUP_PER_STEP = 0, /**< /step_000000/<name>, /step_000001/<name>, ... */
    XFER_ADAPTER_STEP_DIM = 1,       /**< one variable per name with a leading step dimension */
    XFER_ADAPTER_SAME_PATHS = 2      /**< one step only, variables under their own names (a copy
                                          that h5diff/ncdump compare directly with the input) */
} xfer_adapter_layout_t;

typedef struct xfer_adapter_wopts {
    xfer_adapter_layout_t layout;
    int chunked;                   /**< 0: contiguous (GROUP_PER_STEP only), 1: chunked */
    uint64_t chunk[XFER_MAX_DIMS]; /**< chunk shape (0: the adapter picks) */
    /** 1: no free-space check before each step (HDF5; tests of a disk that fills mid-step) */
    int no_space_check;
    /** Bytes to reserve on the file system when the file is created (0: none). HDF5: taken
     *  with fallocate before anything is written, so a disk without that much room fails in
     *  create() on every rank alike, never inside a collective write (docs/adapters.md). */
    uint64_t reserve_bytes;
} xfer_adapter_wopts_t;

/** The status of a failed system call on a file (docs/adapters.md, "Statuses"), alike in the
 *  adapters and the file transport: a name that cannot be used as given is the caller's
 *  (XFER_ERR_INVALID_ARG); everything else, a full disk (ENOSPC), a quota (EDQUOT), a size
 *  limit (EFBIG), an I/O error, a read-only file system, is the file system's (XFER_ERR_IO). */
static inline xfer_status_t xfer_adapter_errno_status(int e)
{
    switch (e) {
    case ENOENT:
    case ENOTDIR:
    case ENAMETOOLONG:
    case ELOOP:
    case EISDIR:
    case EACCES:
    case EPERM:
        return XFER_ERR_INVALID_ARG;
    default:
        return XFER_ERR_IO;
    }
}

/** The operations of one file format. Handles are opaque. */
typedef struct xfer_adapter_ops {
    const char *name; /**< "hdf5", "netcdf" */
    /* producer side */
    xfer_status_t (*open_read)(const char *path, MPI_Comm comm, void **h);
    /** The file's variables of supported types (others are reported by name, not listed): a
     *  compound type of scalar or one-dimensional array members is a record (type
     *  XFER_TYPE_RECORD, record set). */
    xfer_status_t (*vars)(void *h, int *n, const xfer_adapter_var_t **vars);
    /** Read a hyperslab of variable @p var collectively (a rank may read nothing: count 0). */
    xfer_status_t (*read)(void *h, int var, const uint64_t start[], const uint64_t count[],
                          void *buf);
    xfer_status_t (*close_read)(void **h);
    /* consumer side: written under a temporary name; completed steps survive a failure */
    xfer_status_t (*create)(const char *path, MPI_Comm comm, const xfer_adapter_wopts_t *o,
                            void **h);
    /** Write this rank's hyperslab of one variable of step @p step (collective). A record
     *  variable (v->record) becomes the format's compound type of the record's fields at their
     *  offsets, of the record's size: @p buf holds the elements as the C struct lays them out. */
    xfer_status_t (*write)(void *h, uint64_t step, const xfer_adapter_var_t *v,
                           const uint64_t start[], const uint64_t count[], const void *buf);
    /** The step is complete: make it durable and readable. */
    xfer_status_t (*end_step)(void *h, uint64_t step);
    /** Close and give the file its final name. */
    xfer_status_t (*commit)(void **h);
    /** Close after a failure, keeping what completed steps made durable. */
    void (*abort)(void **h);
    /* Optional operations (NULL when a format has no use for them); added after the first
     * version, so tables with designated initializers that omit them stay valid. */
    /** Producer: the groups of the file with their attributes, "/" first (ndims 0, type 0). */
    xfer_status_t (*groups)(void *h, int *n, const xfer_adapter_var_t **groups);
    /** Producer: why @p name is not among vars(): XFER_ERR_NOT_FOUND (no such variable) or
     * XFER_ERR_NOT_SUPPORTED (its type or shape is not supported; the error text says which). */
    xfer_status_t (*lookup)(void *h, const char *name);
    /** Consumer: create group @p g (its name relative to the step's root) with its attributes
     * in step @p step, before the step's writes (collective). */
    xfer_status_t (*write_group)(void *h, uint64_t step, const xfer_adapter_var_t *g);
    /** Producer: what open_read left out, one "NAME: reason" line each (attributes too). */
    xfer_status_t (*skipped)(void *h, int *n, const char *const **lines);
    /** Consumer: the time of step @p step (before its end), kept as the file's time coordinate
     *  (HDF5, step dimension: /time; the step number when not given). */
    xfer_status_t (*set_time)(void *h, uint64_t step, double t);
    /** Producer, records: read() of record variable @p var into elements laid out as @p as,
     *  the caller's record (NULL: the variable's own, as read() does). Fields are matched by
     *  name, so a file whose member order or padding differs from the caller's declaration
     *  reads right; every field of @p as must be a field of the file's record with the same
     *  type and count (XFER_ERR_MISMATCH naming the first one that is not); fields of the file
     *  that @p as leaves out are not read. Padding bytes of @p buf are unspecified. Collective
     *  like read(). */
    xfer_status_t (*read_record)(void *h, int var, const xfer_record_t *as, const uint64_t start[],
                                 const uint64_t count[], void *buf);
    /** Consumer: write @p n hyperslabs of this rank of one variable of step @p step, as write()
     *  writes one (collective; ranks may give different @p n, 0 included): box b at
     *  start[b * ndims] and count[b * ndims], its elements in C order at bufs[b]. The boxes of
     *  all ranks do not overlap. Several blocks per rank (docs/runtime.md): the file transport
     *  calls it when some rank put more than one block of a dataset in a step. Not for a
     *  joined variable. */
    xfer_status_t (*write_boxes)(void *h, uint64_t step, const xfer_adapter_var_t *v, int n,
                                 const uint64_t start[], const uint64_t count[],
                                 const void *const bufs[]);
} xfer_adapter_ops_t;

/** The adapters (each defined by its own library). */
XFER_PUBLIC const xfer_adapter_ops_t *xfer_adapter_hdf5(void);
XFER_PUBLIC const xfer_adapter_ops_t *xfer_adapter_netcdf(void);

/** The last adapter error of the calling thread ("" if none). */
XFER_PUBLIC const char *xfer_adapter_error(void);

#ifdef __cplusplus
}
#endif

#endif /* XFER_ADAPTER_H */
