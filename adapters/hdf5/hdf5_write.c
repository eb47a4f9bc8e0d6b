/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 adapter (hdf5_adapter.c): the consumer side: write received steps.
 *
 * Every collective HDF5 call on the file (creating and opening objects, attributes, extents,
 * H5Dwrite, H5Fflush, H5Fclose) is made by every rank or by none: the ranks agree on the
 * status of what came before (h5_agreed) before each such call, so a failure on one rank makes
 * them all skip the call together. Rank 0 reserves the file's blocks (fallocate, reserve_to)
 * when it creates the file (what the caller expects to write) and before each collective data
 * write: a full disk then fails there, outside HDF5, on every rank alike, instead of inside a
 * collective write that the ranks would leave at different points (docs/adapters.md, "A full
 * disk"). Closing the file (commit, abort) is in hdf5_commit.c. */
#define _GNU_SOURCE /* fallocate */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "hdf5_internal.h"
#include "hdf5_write.h"

/* ---- consumer ------------------------------------------------------------------------------ */

/* A step-dimension variable's shape, under its path, for the XDMF description. */
static xfer_status_t remember_var(h5write_t *w, const char *path, const xfer_adapter_var_t *v)
{
    const size_t len = strlen(path);
    if (w->nvars == w->capvars) {
        const int cap = w->capvars ? 2 * w->capvars : 16;
        xfer_adapter_var_t *nv = realloc(w->vars, (size_t) cap * sizeof(*nv));
        if (!nv) {
            xfer_adapter_set_error("%s: %s: out of memory", w->tmp, path);
            return XFER_ERR_NO_MEMORY;
        }
        w->vars = nv;
        w->capvars = cap;
    }
    if (len >= sizeof(w->vars[0].name)) {
        xfer_adapter_set_error("%s: %s: path longer than %zu bytes", w->tmp, path,
                               sizeof(w->vars[0].name) - 1);
        return XFER_ERR_INVALID_ARG;
    }
    w->vars[w->nvars] = *v;
    w->vars[w->nvars].nattrs = 0;
    w->vars[w->nvars].attrs = NULL;
    w->vars[w->nvars].record = NULL; /* the caller's; the XDMF file needs only the type */
    memcpy(w->vars[w->nvars].name, path, len + 1);
    w->nvars++;
    return XFER_SUCCESS;
}

/* Steps are written in order, one at a time; the same-paths layout holds one. */
static xfer_status_t check_step(h5write_t *w, uint64_t step, const char *what)
{
    if (w->file < 0) {
        xfer_adapter_set_error("%s: %s: the file is closed", w->tmp, what);
        return XFER_ERR_STATE;
    }
    if (step != w->completed) {
        xfer_adapter_set_error("%s: %s: step %llu written while step %llu is the current one",
                               w->tmp, what, (unsigned long long) step,
                               (unsigned long long) w->completed);
        return XFER_ERR_STATE;
    }
    if (w->o.layout == XFER_ADAPTER_SAME_PATHS && step > 0) {
        xfer_adapter_set_error("%s: %s: the same-paths layout holds one step (step %llu given)",
                               w->tmp, what, (unsigned long long) step);
        return XFER_ERR_INVALID_ARG;
    }
    return XFER_SUCCESS;
}

/* The directory of @p path ("." for a bare name, "/" for a file in the root). */
void h5w_dir_of(const char *path, char *dir, size_t cap)
{
    char *slash;
    snprintf(dir, cap, "%s", path);
    slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        snprintf(dir, cap, ".");
}

/* Bytes allocated to @p path on its file system (0 if it cannot be told). */
static uint64_t allocated(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t) sb.st_blocks * 512u : 0;
}

/* Rank 0: reserve the file's first @p end bytes on its file system (fallocate, the size kept),
 * so that the collective writes within them cannot meet a full disk. A file system that cannot
 * reserve gets no reservation (and its writes keep the risk). The caller agrees on the result
 * before its next collective call. */
static xfer_status_t reserve_to(h5write_t *w, uint64_t end, const char *obj, const char *what)
{
    if (w->rank != 0 || w->resfd < 0 || end <= w->reserved)
        return XFER_SUCCESS;
    if (fallocate(w->resfd, FALLOC_FL_KEEP_SIZE, 0, (off_t) end) != 0) {
        const int e = errno;
        if (e == EOPNOTSUPP || e == ENOSYS) {
            close(w->resfd);
            w->resfd = -1;
            return XFER_SUCCESS;
        }
        xfer_adapter_set_error("%s: %s%sno room for %s: reserving %llu bytes failed: %s", w->tmp,
                               obj, obj[0] ? ": " : "", what, (unsigned long long) end,
                               strerror(e));
        return xfer_adapter_errno_status(e);
    }
    w->reserved = end;
    return XFER_SUCCESS;
}

/* Rank 0, before the collective write of dataset @p ds: room for the file up to the end of the
 * dataset's data, and RESERVE_SLACK past it for the metadata HDF5 places after it and writes
 * when the step ends. Contiguous datasets only: a chunked one has no single place (H5Dget_offset
 * tells none), and relies on create()'s reservation. */
#define RESERVE_SLACK (16u << 10)
xfer_status_t h5w_reserve_data(h5write_t *w, hid_t ds, const char *obj)
{
    haddr_t off;
    if (w->rank != 0 || w->resfd < 0)
        return XFER_SUCCESS;
    if ((off = H5Dget_offset(ds)) == HADDR_UNDEF) {
        H5Eclear2(H5E_DEFAULT);
        return XFER_SUCCESS;
    }
    return reserve_to(w, (uint64_t) off + H5Dget_storage_size(ds) + RESERVE_SLACK, obj,
                      "the collective write (H5Dwrite)");
}

/* Before the first write of a step after step 0: does the file system hold another step as
 * large as the largest so far, with a quarter and 16 KiB to spare? A step refused here leaves
 * the file as the last step end flushed it. Why: a full disk met inside HDF5 1.10 with several
 * writer ranks can leave the ranks in different collective calls (an error path that skips one)
 * and hang them; met here, the failure is agreed before any HDF5 call (docs/adapters.md). */
static xfer_status_t space_check(h5write_t *w, uint64_t step)
{
    xfer_status_t st = XFER_SUCCESS;
    if (w->in_step || step == 0 || w->o.no_space_check)
        return XFER_SUCCESS;
    if (w->rank == 0) {
        const uint64_t need = w->growth_max + w->growth_max / 4 + (16u << 10);
        char dir[4096];
        struct statvfs fs;
        h5w_dir_of(w->tmp, dir, sizeof(dir));
        if (statvfs(dir, &fs) == 0 && (uint64_t) fs.f_bavail * fs.f_frsize < need) {
            xfer_adapter_set_error("%s: step %llu not started: %llu bytes free on its file system, "
                                   "the largest step so far took %llu (No space left on device)",
                                   w->tmp, (unsigned long long) step,
                                   (unsigned long long) fs.f_bavail * fs.f_frsize,
                                   (unsigned long long) w->growth_max);
            st = XFER_ERR_INTERNAL;
        }
    }
    return xfer_adapter_agree(w->comm, st);
}

/* Where object @p name of step @p step lives in the output file. */
static void out_name(const h5write_t *w, uint64_t step, const char *name, char *out, size_t cap)
{
    if (w->o.layout == XFER_ADAPTER_GROUP_PER_STEP)
        snprintf(out, cap, "/step_%06llu%s", (unsigned long long) step,
                 strcmp(name, "/") == 0 ? "" : name);
    else
        snprintf(out, cap, "%s", name);
}

static xfer_status_t write_attr(h5write_t *w, hid_t loc, const char *obj,
                                const xfer_adapter_attr_t *a)
{
    char where[2 * XFER_ADAPTER_MAX_NAME];
    hid_t ty = H5I_INVALID_HID, sp = H5I_INVALID_HID, at = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    char *text = NULL;
    snprintf(where, sizeof(where), "%s@%s", obj, a->name);
    if (a->is_text) {
        text = calloc(1, a->count + 1);
        if (!text) {
            xfer_adapter_set_error("%s: %s: out of memory", w->tmp, where);
            return xfer_adapter_agree(w->comm, XFER_ERR_NO_MEMORY);
        }
        if (a->count)
            memcpy(text, a->data, a->count);
        if ((ty = H5Tcopy(H5T_C_S1)) < 0 ||
            H5Tset_size(ty, a->is_text == 2 ? H5T_VARIABLE : (a->count ? a->count : 1)) < 0 ||
            (sp = H5Screate(H5S_SCALAR)) < 0)
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, where, "H5Tset_size");
    } else {
        hsize_t dims[XFER_MAX_DIMS];
        int d, nd = a->shape_set ? a->ndims : 1;
        for (d = 0; d < nd; d++)
            dims[d] = a->shape_set ? a->dims[d] : a->count;
        if ((ty = H5Tcopy(h5_native_of(a->type))) < 0 ||
            (sp = nd == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(nd, dims, NULL)) < 0)
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, where, "H5Screate");
    }
    if (h5_agreed(w->comm, &st) &&
        (at = H5Acreate2(loc, a->name, ty, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, where, "H5Acreate2");
    if (h5_agreed(w->comm, &st) && H5Awrite(at, ty,
                                            a->is_text == 2 ? (const void *) &text
                                            : a->is_text    ? text
                                                            : a->data) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, where, "H5Awrite");
    st = xfer_adapter_agree(w->comm, st);
    if (at >= 0)
        H5Aclose(at);
    if (sp >= 0)
        H5Sclose(sp);
    if (ty >= 0)
        H5Tclose(ty);
    free(text);
    return st;
}

static xfer_status_t write_attrs(h5write_t *w, hid_t loc, const char *obj,
                                 const xfer_adapter_var_t *v)
{
    int a;
    for (a = 0; a < v->nattrs; a++) {
        const xfer_status_t st = write_attr(w, loc, obj, &v->attrs[a]);
        if (st != XFER_SUCCESS)
            return st;
    }
    return XFER_SUCCESS;
}

hid_t h5w_intermediate_lcpl(void)
{
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    if (lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) < 0) {
        H5Pclose(lcpl);
        return H5I_INVALID_HID;
    }
    return lcpl;
}

xfer_status_t h5_write_group(void *h, uint64_t step, const xfer_adapter_var_t *g)
{
    h5write_t *w = h;
    char name[XFER_ADAPTER_MAX_NAME + 32];
    hid_t grp = H5I_INVALID_HID, lcpl = H5I_INVALID_HID;
    xfer_status_t st = check_step(w, step, g->name);
    if (st != XFER_SUCCESS)
        return xfer_adapter_agree(w->comm, st);
    if ((st = space_check(w, step)) != XFER_SUCCESS)
        return st;
    w->in_step = 1;
    if (w->o.layout == XFER_ADAPTER_STEP_DIM && step > 0)
        return xfer_adapter_agree(
            w->comm, XFER_SUCCESS); /* groups and their attributes exist since step 0 */
    out_name(w, step, g->name, name, sizeof(name));
    if (strcmp(name, "/") != 0 && (lcpl = h5w_intermediate_lcpl()) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Pset_create_intermediate_group");
    if (h5_agreed(w->comm, &st) &&
        (grp = strcmp(name, "/") == 0
                   ? H5Gopen2(w->file, "/", H5P_DEFAULT)
                   : H5Gcreate2(w->file, name, lcpl, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Gcreate2");
    if (h5_agreed(w->comm, &st))
        st = write_attrs(w, grp, name, g);
    if (grp >= 0)
        H5Gclose(grp);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    return xfer_adapter_agree(w->comm, st);
}

/* Can this HDF5 deflate (a build without zlib has the filter unregistered or decode-only)? */
static int deflate_ok(void)
{
    unsigned info = 0;
    return H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 &&
           H5Zget_filter_info(H5Z_FILTER_DEFLATE, &info) >= 0 &&
           (info & H5Z_FILTER_CONFIG_ENCODE_ENABLED);
}

/* The chunk shape: the options' (clipped to the extents) or the whole extents, halved along the
 * slowest dimensions until a chunk holds at most 1 MiB. */
static void chunk_of(const h5write_t *w, const xfer_adapter_var_t *v, hsize_t *c)
{
    const size_t es = xfer_adapter_var_esize(v);
    uint64_t bytes = es;
    int d;
    for (d = 0; d < v->ndims; d++) {
        c[d] = w->o.chunk[d] && w->o.chunk[d] < v->dims[d] ? w->o.chunk[d] : v->dims[d];
        bytes *= c[d];
    }
    for (d = 0; d < v->ndims && bytes > (1u << 20); d++)
        while (c[d] > 1 && bytes > (1u << 20)) {
            bytes /= c[d];
            c[d] = (c[d] + 1) / 2;
            bytes *= c[d];
        }
}

static int remember(h5write_t *w, const char *name)
{
    if (h5_grow((void **) &w->names, &w->capnames, w->nnames, sizeof(char *)) != 0 ||
        !(w->names[w->nnames] = strdup(name)))
        return -1;
    w->nnames++;
    return 0;
}

/* One run of contiguous elements of a rank's boxes: where it starts in the dataset's row-major
 * order, where its bytes are. */
typedef struct run {
    uint64_t lin;
    const char *src;
    size_t len;
} run_t;

static int by_lin(const void *pa, const void *pb)
{
    const run_t *a = pa, *b = pb;
    return (a->lin > b->lin) - (a->lin < b->lin);
}

/* The union of @p n boxes (box b at start[b * nd], count[b * nd], its elements at bufs[b]) as the
 * selection of file space @p fs (after the step's index when @p lead), and their elements packed
 * in the order the selection visits them, the dataset's row-major order (boxes that do not
 * overlap: runs of the last dimension sorted by where they start), into *@p packed (NULL: no
 * element). Returns the memory space, or an invalid id with *@p why the call that failed. */
static hid_t select_boxes(hid_t fs, int lead, uint64_t step, const xfer_adapter_var_t *v, int n,
                          const uint64_t start[], const uint64_t count[], const void *const bufs[],
                          char **packed, const char **why)
{
    const int nd = v->ndims;
    const size_t es = xfer_adapter_var_esize(v);
    hsize_t st[XFER_MAX_DIMS + 1], ct[XFER_MAX_DIMS + 1], total = 0;
    size_t nrun = 0, k, row;
    run_t *runs = NULL;
    hid_t ms = H5I_INVALID_HID;
    int b, d, first = 1;

    *packed = NULL;
    *why = "H5Sselect_hyperslab";
    if (H5Sselect_none(fs) < 0)
        return H5I_INVALID_HID;
    for (b = 0; b < n; b++) {
        const uint64_t *c = count + (size_t) b * nd;
        const size_t vol = xfer_adapter_volume(nd, c);
        if (!vol)
            continue;
        st[0] = step;
        ct[0] = 1;
        for (d = 0; d < nd; d++) {
            st[lead + d] = start[(size_t) b * nd + d];
            ct[lead + d] = c[d];
        }
        if (H5Sselect_hyperslab(fs, first ? H5S_SELECT_SET : H5S_SELECT_OR, st, NULL, ct, NULL) < 0)
            return H5I_INVALID_HID;
        first = 0;
        total += vol;
        nrun += vol / c[nd - 1];
    }
    *why = "out of memory packing the blocks";
    if (total && (!(runs = malloc(nrun * sizeof(*runs))) || !(*packed = malloc(total * es)))) {
        free(runs);
        return H5I_INVALID_HID;
    }
    for (b = 0, k = 0; b < n; b++) { /* every row of every box */
        const uint64_t *s0 = start + (size_t) b * nd, *c = count + (size_t) b * nd;
        const size_t rows = xfer_adapter_volume(nd, c) / (c[nd - 1] ? c[nd - 1] : 1);
        for (row = 0; xfer_adapter_volume(nd, c) && row < rows; row++, k++) {
            uint64_t lin = 0, rest = row, idx[XFER_MAX_DIMS];
            for (d = nd - 2; d >= 0; d--) {
                idx[d] = rest % c[d];
                rest /= c[d];
            }
            for (d = 0; d < nd; d++)
                lin = lin * v->dims[d] + s0[d] + (d < nd - 1 ? idx[d] : 0);
            runs[k].lin = lin;
            runs[k].src = (const char *) bufs[b] + row * c[nd - 1] * es;
            runs[k].len = c[nd - 1] * es;
        }
    }
    if (total) {
        qsort(runs, nrun, sizeof(*runs), by_lin);
        for (k = 0, row = 0; k < nrun; k++) { /* (row: bytes so far) */
            memcpy(*packed + row, runs[k].src, runs[k].len);
            row += runs[k].len;
        }
    }
    free(runs);
    *why = "H5Screate_simple";
    if (total == 0) {
        hsize_t one = 1;
        if ((ms = H5Screate_simple(1, &one, NULL)) >= 0 && H5Sselect_none(ms) < 0) {
            H5Sclose(ms);
            ms = H5I_INVALID_HID;
        }
        return ms;
    }
    return H5Screate_simple(1, &total, NULL);
}

/* Write @p n boxes of this rank (h5_write: one, maybe empty; h5_write_boxes: any number). */
static xfer_status_t write_boxes(void *h, uint64_t step, const xfer_adapter_var_t *v, int n,
                                 const uint64_t start[], const uint64_t count[],
                                 const void *const bufs[])
{
    h5write_t *w = h;
    const int lead = w->o.layout == XFER_ADAPTER_STEP_DIM;
    hsize_t dims[XFER_MAX_DIMS + 1], maxd[XFER_MAX_DIMS + 1], chunk[XFER_MAX_DIMS + 1];
    hid_t ds = H5I_INVALID_HID, sp = H5I_INVALID_HID, fs = H5I_INVALID_HID;
    hid_t ms = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, lcpl = H5I_INVALID_HID;
    hid_t dx = H5I_INVALID_HID, mt = H5I_INVALID_HID, ft = H5I_INVALID_HID;
    char name[XFER_ADAPTER_MAX_NAME + 32], dummy[16], why[256], *packed = NULL;
    const char *failed = "H5Sselect_hyperslab";
    const void *buf = n == 1 ? bufs[0] : NULL;
    xfer_status_t st = check_step(w, step, v->name);
    int d, empty = 1, empty_all, deflate;
    if (st != XFER_SUCCESS)
        return xfer_adapter_agree(w->comm, st);
    if (v->deflate < 0 || v->deflate > 9) {
        xfer_adapter_set_error("%s: %s: deflate level %d (expected 0 to 9)", w->tmp, v->name,
                               v->deflate);
        return xfer_adapter_agree(w->comm, XFER_ERR_INVALID_ARG);
    }
    if (v->ndims < 1 || v->ndims > XFER_MAX_DIMS || xfer_adapter_var_esize(v) == 0) {
        xfer_adapter_set_error("%s: %s: invalid type or shape%s", w->tmp, v->name,
                               v->type == XFER_TYPE_RECORD ? " (a record without its fields)" : "");
        return xfer_adapter_agree(w->comm, XFER_ERR_INVALID_ARG);
    }
    if (v->type == XFER_TYPE_RECORD &&
        xfer_adapter_record_check(v->record, why, sizeof(why)) != 0) {
        xfer_adapter_set_error("%s: %s: invalid record: %s", w->tmp, v->name, why);
        return xfer_adapter_agree(w->comm, XFER_ERR_INVALID_ARG);
    }
    if (v->joined && lead) { /* its rows change: one extent per step would not hold them */
        xfer_adapter_set_error("%s: %s: a joined dataset (its rows change from step to step) "
                               "cannot have a step dimension: write it with a group per step",
                               w->tmp, v->name);
        return xfer_adapter_agree(w->comm, XFER_ERR_NOT_SUPPORTED);
    }
    if ((st = space_check(w, step)) != XFER_SUCCESS)
        return st;
    /* a record is a compound of its fields at their offsets, of its size: the file holds the C
     * struct's layout, padding included, and needs no conversion either way */
    if ((mt = h5_mem_type(v)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, v->name, "H5Tcreate (compound)");
    w->in_step = 1;
    out_name(w, step, v->name, name, sizeof(name));
    /* A dataset of no element (a joined step without rows, a variable extent of 0) has no
     * storage to write to: every rank skips the write alike (the shape is the same on all),
     * and it cannot be chunked (a chunk has positive extents): it is contiguous. */
    for (d = 0, empty_all = 0; d < v->ndims; d++)
        empty_all |= v->dims[d] == 0;
    deflate = empty_all ? 0 : v->deflate; /* (no storage, nothing to filter) */
    dims[0] = maxd[0] = chunk[0] = step + 1;
    for (d = 0; d < v->ndims; d++)
        dims[lead + d] = maxd[lead + d] = v->dims[d];
    if (!lead || step == 0) {
        if (lead) {
            maxd[0] = H5S_UNLIMITED;
            chunk[0] = 1;
        }
        chunk_of(w, v, chunk + lead);
        if (st == XFER_SUCCESS && deflate && !deflate_ok()) {
            xfer_adapter_set_error("%s: %s: this HDF5 cannot write deflate-compressed data "
                                   "(H5Z_FILTER_DEFLATE not available for encoding)",
                                   w->tmp, name);
            st = XFER_ERR_NOT_SUPPORTED;
        }
        if (st != XFER_SUCCESS)
            ; /* the memory type failed: agreed below */
        else if ((sp = H5Screate_simple(v->ndims + lead, dims, maxd)) < 0 ||
                 (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 ||
                 ((lead || ((w->o.chunked || deflate) && !empty_all)) &&
                  H5Pset_chunk(dcpl, v->ndims + lead, chunk) < 0) ||
                 (deflate && (H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, deflate) < 0)) ||
                 H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 ||
                 (lcpl = h5w_intermediate_lcpl()) < 0)
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Pset_chunk");
        if (h5_agreed(w->comm, &st) &&
            (ds = H5Dcreate2(w->file, name, mt, sp, lcpl, dcpl, H5P_DEFAULT)) < 0)
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Dcreate2");
        if (h5_agreed(w->comm, &st))
            st = write_attrs(w, ds, name, v); /* agreed */
        if (st == XFER_SUCCESS && lead)
            st = h5c_attach(w->file, ds, name, v, w->comm, w->tmp); /* agreed */
        if (st == XFER_SUCCESS && lead && (st = remember_var(w, name, v)) == XFER_SUCCESS &&
            remember(w, name) != 0) {
            xfer_adapter_set_error("%s: %s: out of memory", w->tmp, name);
            st = XFER_ERR_NO_MEMORY;
        }
    } else {
        hsize_t cur[XFER_MAX_DIMS + 1];
        if (h5_agreed(w->comm, &st) && (ds = H5Dopen2(w->file, name, H5P_DEFAULT)) < 0)
            st = h5_fail(XFER_ERR_NOT_FOUND, w->tmp, name, "H5Dopen2 (not written in step 0)");
        if (st == XFER_SUCCESS &&
            ((ft = H5Dget_type(ds)) < 0 || H5Tequal(ft, mt) <= 0)) { /* a record's fields too */
            H5Eclear2(H5E_DEFAULT);
            xfer_adapter_set_error("%s: %s: type differs from step 0", w->tmp, name);
            st = XFER_ERR_MISMATCH;
        }
        if (h5_agreed(w->comm, &st) &&
            ((sp = H5Dget_space(ds)) < 0 || H5Sget_simple_extent_ndims(sp) != v->ndims + 1 ||
             H5Sget_simple_extent_dims(sp, cur, NULL) < 0)) {
            xfer_adapter_set_error("%s: %s: shape differs from step 0", w->tmp, name);
            st = XFER_ERR_MISMATCH;
        }
        for (d = 0; st == XFER_SUCCESS && d < v->ndims; d++)
            if (cur[1 + d] != dims[1 + d]) {
                xfer_adapter_set_error("%s: %s: shape differs from step 0", w->tmp, name);
                st = XFER_ERR_MISMATCH;
            }
        if (h5_agreed(w->comm, &st) && cur[0] < step + 1 && H5Dset_extent(ds, dims) < 0)
            st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Dset_extent");
    }
    /* the selection and the transfer list are this rank's own; the reservation rank 0's */
    if (h5_agreed(w->comm, &st) && (fs = H5Dget_space(ds)) < 0)
        st = h5_fail(XFER_ERR_INVALID_ARG, w->tmp, name, "H5Dget_space");
    if (st == XFER_SUCCESS && n == 1 &&
        (ms = h5_select_box(fs, lead, step, v->ndims, start, count, &empty)) < 0)
        st = h5_fail(XFER_ERR_INVALID_ARG, w->tmp, name, "H5Sselect_hyperslab");
    if (st == XFER_SUCCESS && n != 1) { /* several boxes: their union, packed in its order */
        if ((ms = select_boxes(fs, lead, step, v, n, start, count, bufs, &packed, &failed)) < 0)
            st = h5_fail(XFER_ERR_INVALID_ARG, w->tmp, name, failed);
        empty = !packed;
        buf = packed;
    }
    if (st == XFER_SUCCESS && (dx = h5_collective_dxpl()) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Pset_dxpl_mpio");
    if (st == XFER_SUCCESS)
        st = h5w_reserve_data(w, ds, name);
    if (h5_agreed(w->comm, &st) && !empty_all &&
        H5Dwrite(ds, mt, ms, fs, dx, empty || !buf ? (const void *) dummy : buf) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, name, "H5Dwrite (collective)");
    if (h5_agreed(w->comm, &st) && v->joined && w->o.layout == XFER_ADAPTER_GROUP_PER_STEP)
        st = h5p_joined(w, step, name, v, start, count, empty ? NULL : buf); /* agreed */
    H5_CLOSE(ft, mt, dx, ms, fs, ds, lcpl, dcpl, sp);
    free(packed);
    return xfer_adapter_agree(w->comm, st);
}

xfer_status_t h5_write(void *h, uint64_t step, const xfer_adapter_var_t *v, const uint64_t start[],
                       const uint64_t count[], const void *buf)
{
    const void *bufs[1] = {buf};
    return write_boxes(h, step, v, 1, start, count, bufs);
}

xfer_status_t h5_write_boxes(void *h, uint64_t step, const xfer_adapter_var_t *v, int n,
                             const uint64_t start[], const uint64_t count[],
                             const void *const bufs[])
{
    h5write_t *w = h;
    if (n < 0 || (n > 0 && (!start || !count || !bufs)) || v->joined) {
        xfer_adapter_set_error("%s: %s: %d boxes%s", w->tmp, v->name, n,
                               v->joined ? " of a joined dataset (one block a rank)" : "");
        return xfer_adapter_agree(w->comm, XFER_ERR_INVALID_ARG);
    }
    return write_boxes(h, step, v, n, start, count, bufs);
}

/* The root's step counter set to @p n (collective; the status agreed). */
xfer_status_t h5w_step_count(h5write_t *w, uint64_t n)
{
    hid_t sp = H5I_INVALID_HID, at = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    const htri_t ex = H5Aexists(w->file, STEPS_ATTR); /* a collective read: alike everywhere */
    if (ex < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, "/@" STEPS_ATTR, "H5Aexists");
    else if (!ex && (sp = H5Screate(H5S_SCALAR)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, "/@" STEPS_ATTR, "H5Screate");
    if (h5_agreed(w->comm, &st) && (at = ex ? H5Aopen(w->file, STEPS_ATTR, H5P_DEFAULT)
                                            : H5Acreate2(w->file, STEPS_ATTR, H5T_NATIVE_UINT64, sp,
                                                         H5P_DEFAULT, H5P_DEFAULT)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, "/@" STEPS_ATTR, "H5Aopen/H5Acreate2");
    if (h5_agreed(w->comm, &st) && H5Awrite(at, H5T_NATIVE_UINT64, &n) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, "/@" STEPS_ATTR, "H5Awrite");
    st = xfer_adapter_agree(w->comm, st);
    if (at >= 0)
        H5Aclose(at);
    if (sp >= 0)
        H5Sclose(sp);
    return st;
}

xfer_status_t h5_end_step(void *h, uint64_t step)
{
    h5write_t *w = h;
    xfer_status_t st = check_step(w, step, "end of step");
    const double t = w->step_time_set ? w->step_time : (double) step;
    if (st == XFER_SUCCESS && w->o.layout != XFER_ADAPTER_SAME_PATHS) {
        if (step >= w->captimes) {
            const uint64_t cap = w->captimes ? 2 * w->captimes : 64;
            double *nt = realloc(w->times, (size_t) cap * sizeof(double));
            if (!nt) {
                xfer_adapter_set_error("%s: out of memory", w->tmp);
                st = XFER_ERR_NO_MEMORY;
            } else {
                w->times = nt;
                w->captimes = cap;
            }
        }
        if (st == XFER_SUCCESS)
            w->times[step] = t;
        if (h5_agreed(w->comm, &st) && w->o.layout == XFER_ADAPTER_STEP_DIM)
            st = h5c_time_step(w->file, w->tmp, step, t, w->comm); /* agreed */
    }
    if (st == XFER_SUCCESS && w->o.layout != XFER_ADAPTER_SAME_PATHS)
        st = h5w_step_count(w, step + 1); /* agreed */
    if (h5_agreed(w->comm, &st) && H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, "", "H5Fflush (end of step)");
    st = xfer_adapter_agree(w->comm, st);
    if (st == XFER_SUCCESS) {
        w->completed++;
        w->in_step = 0;
        w->step_time_set = 0;
        if (w->rank == 0) {
            const uint64_t a = allocated(w->tmp);
            if (a > w->alloc_last && a - w->alloc_last > w->growth_max)
                w->growth_max = a - w->alloc_last;
            w->alloc_last = a;
        }
    }
    return st;
}

xfer_status_t h5_set_time(void *h, uint64_t step, double t)
{
    h5write_t *w = h;
    xfer_status_t st = check_step(w, step, "set_time");
    if (st == XFER_SUCCESS) {
        w->step_time = t;
        w->step_time_set = 1;
    }
    return st; /* local: no file access */
}

xfer_status_t h5_create(const char *path, MPI_Comm comm, const xfer_adapter_wopts_t *o, void **hp)
{
    h5write_t *w = calloc(1, sizeof(*w));
    hid_t fapl = H5I_INVALID_HID;
    MPI_Info info = MPI_INFO_NULL;
    xfer_status_t st = XFER_SUCCESS;
    *hp = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (!w || !(w->path = strdup(path)) || !(w->tmp = malloc(strlen(path) + 5))) {
        if (w)
            free(w->path);
        free(w);
        xfer_adapter_set_error("%s: out of memory", path);
        return xfer_adapter_agree(comm, XFER_ERR_NO_MEMORY);
    }
    sprintf(w->tmp, "%s.tmp", path);
    w->comm = comm;
    w->file = H5I_INVALID_HID;
    w->resfd = -1;
    MPI_Comm_rank(comm, &w->rank);
    w->o = *o;
    if (o->layout != XFER_ADAPTER_GROUP_PER_STEP && o->layout != XFER_ADAPTER_STEP_DIM &&
        o->layout != XFER_ADAPTER_SAME_PATHS) {
        xfer_adapter_set_error("%s: unknown layout %d", path, (int) o->layout);
        st = XFER_ERR_INVALID_ARG;
        goto out;
    }
    /* Rank 0 makes the file, empty (H5Fcreate truncates only a file that is not), and reserves
     * what the caller expects to write: a disk without that room fails here, before HDF5 holds
     * anything it must write at its close. */
    if (w->rank == 0) {
        if ((w->resfd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0) {
            const int e = errno;
            xfer_adapter_set_error("%s: cannot create: %s", w->tmp, strerror(e));
            st = xfer_adapter_errno_status(e);
        } else {
            st = reserve_to(w, o->reserve_bytes, "", "the data to write");
        }
    }
    if (!h5_agreed(comm, &st))
        goto out;
    /* Collective metadata writes: a failing write (a full disk) fails on every rank alike.
     * ROMIO: collective buffering for every collective write, whose failure ROMIO then reports
     * on every rank (its independent path reports it on the failing rank only, and HDF5 1.10
     * then skips the collective MPI_File_set_view that ends the write on that rank alone); no
     * data sieving for writes, whose fcntl lock a failed write leaves held (another rank then
     * waits on it for ever). HDF5 writes few strided pieces; OMPIO ignores both hints. */
    if (MPI_Info_create(&info) != MPI_SUCCESS ||
        MPI_Info_set(info, "romio_cb_write", "enable") != MPI_SUCCESS ||
        MPI_Info_set(info, "romio_ds_write", "disable") != MPI_SUCCESS) {
        xfer_adapter_set_error("%s: MPI_Info_create/MPI_Info_set failed", w->tmp);
        st = XFER_ERR_MPI;
    }
    if (st == XFER_SUCCESS &&
        ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 || H5Pset_fapl_mpio(fapl, comm, info) < 0 ||
         H5Pset_coll_metadata_write(fapl, 1) < 0 || H5Pset_all_coll_metadata_ops(fapl, 1) < 0))
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, "", "H5Pset_fapl_mpio");
    if (h5_agreed(comm, &st) && (w->file = H5Fcreate(w->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
        st = h5_fail(XFER_ERR_IO, w->tmp, "", "H5Fcreate (MPI-IO)");
    if (h5_agreed(comm, &st) && o->layout == XFER_ADAPTER_STEP_DIM)
        st = h5c_create_time(w->file, w->tmp, comm); /* agreed */
    if (w->rank == 0)
        w->alloc_last = allocated(w->tmp);
out:
    if (fapl >= 0)
        H5Pclose(fapl);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    st = xfer_adapter_agree(comm, st);
    if (st != XFER_SUCCESS) {
        if (w->file >= 0)
            H5Fclose(w->file);
        if (w->rank == 0 && (w->file >= 0 || w->resfd >= 0))
            unlink(w->tmp);
        h5w_free(w);
        return st;
    }
    *hp = w;
    return XFER_SUCCESS;
}
