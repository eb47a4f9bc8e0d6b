/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 adapter: parallel HDF5 (MPI-IO driver) under the ops table of <xfer/adapter.h>.
 *
 * Producer: the file is opened read-only by every rank of the communicator; its hard links are
 * visited in name order, groups before their members; datasets of native integer and float types
 * with 1..XFER_MAX_DIMS non-zero extents are listed, with their attributes (numeric, fixed and
 * variable-length strings), and so are compounds of such members (scalars or 1-D arrays), as
 * records in the members' native layout; the rest is listed by skipped(). Reads are collective
 * hyperslabs; a record is read in the caller's layout, member by member by name (read_record).
 *
 * Consumer: the file is created as PATH.tmp and renamed to PATH by commit; a record variable is
 * written as a compound of its fields at their offsets, of the record's size (the C struct's
 * layout, no packing). Every step end writes the root attribute xfer_steps_complete and flushes
 * the file (H5Fflush, global scope), so the file on disk holds every completed step. abort()
 * drops the step in progress (its group, or the last index of the step dimension), closes,
 * checks the result from one rank and renames it to PATH when it holds at least one complete
 * step; otherwise PATH.tmp is removed (no step) or left for inspection (unreadable). See
 * docs/adapters.md for what a reader finds after each failure.
 *
 * Errors are agreed on by all ranks (a write can fail on the I/O aggregators only) and name the
 * file, the object and the HDF5 call, with the innermost message of HDF5's error stack.
 */
#include "hdf5_internal.h"

static const xfer_adapter_ops_t hdf5_ops = {
    .name = "hdf5",
    .open_read = h5_open_read,
    .vars = h5_vars,
    .read = h5_read,
    .close_read = h5_close_read,
    .create = h5_create,
    .write = h5_write,
    .end_step = h5_end_step,
    .commit = h5_commit,
    .abort = h5_abort,
    .groups = h5_groups,
    .lookup = h5_lookup,
    .write_group = h5_write_group,
    .skipped = h5_skipped,
    .set_time = h5_set_time,
    .read_record = h5_read_record,
    .write_boxes = h5_write_boxes,
};

const xfer_adapter_ops_t *xfer_adapter_hdf5(void)
{
    return &hdf5_ops;
}
