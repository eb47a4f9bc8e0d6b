/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 adapter (hdf5_adapter.c): the consumer side's end: commit (the file closed, renamed
 * to its final name, its XDMF description written beside it) and abort (the step in progress
 * dropped, the completed steps checked and kept under the final name, or the file removed).
 * Writing the steps is hdf5_write.c's. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hdf5_internal.h"
#include "hdf5_write.h"

/* Rank 0, the file closed: give back what the reservations hold past its end. A failure
 * only leaves those blocks allocated until the file is removed. */
static void release_reserve(h5write_t *w)
{
    struct stat sb;
    if (w->resfd < 0)
        return;
    if (fstat(w->resfd, &sb) == 0 && ftruncate(w->resfd, sb.st_size) != 0)
        errno = 0; /* see above */
    close(w->resfd);
    w->resfd = -1;
}

/* One rank reopens the closed file (serial driver) and checks that its completed steps are
 * there: the step counter and, per layout, each step's group or the step extent. */
static int verify_kept(const h5write_t *w, char *why, size_t cap)
{
    hid_t f, at;
    uint64_t n = 0;
    int ok = 1, i;
    if ((f = H5Fopen(w->tmp, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
        h5_message(why, cap);
        return 0;
    }
    if (w->o.layout != XFER_ADAPTER_SAME_PATHS) {
        if ((at = H5Aopen(f, STEPS_ATTR, H5P_DEFAULT)) < 0 ||
            H5Aread(at, H5T_NATIVE_UINT64, &n) < 0 || n < w->completed) {
            snprintf(why, cap, "step counter missing or short");
            ok = 0;
        }
        if (at >= 0)
            H5Aclose(at);
    }
    if (ok && w->o.layout == XFER_ADAPTER_GROUP_PER_STEP) {
        char g[64];
        snprintf(g, sizeof(g), "/step_%06llu", (unsigned long long) (w->completed - 1));
        if (H5Lexists(f, g, H5P_DEFAULT) <= 0) {
            snprintf(why, cap, "%s missing", g);
            ok = 0;
        }
    }
    for (i = 0; ok && w->o.layout == XFER_ADAPTER_STEP_DIM && i < w->nnames; i++) {
        hid_t ds = H5Dopen2(f, w->names[i], H5P_DEFAULT), sp = -1;
        hsize_t dims[XFER_MAX_DIMS + 1];
        if (ds < 0 || (sp = H5Dget_space(ds)) < 0 || H5Sget_simple_extent_dims(sp, dims, 0) < 0 ||
            dims[0] < w->completed) {
            snprintf(why, cap, "%s unreadable or short", w->names[i]);
            ok = 0;
        }
        if (sp >= 0)
            H5Sclose(sp);
        if (ds >= 0)
            H5Dclose(ds);
    }
    H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    return ok;
}

/* Drop what the step in progress left: its group, or its index of the step dimension, and
 * set the counter back (a failed end_step may have raised it). */
static void drop_partial(h5write_t *w)
{
    char g[64];
    xfer_status_t st = XFER_SUCCESS; /* each decision is agreed: the calls stay collective */
    int i;
    if (w->o.layout != XFER_ADAPTER_SAME_PATHS)
        st = h5w_step_count(w, w->completed); /* agreed */
    if (st == XFER_SUCCESS && w->o.layout == XFER_ADAPTER_GROUP_PER_STEP) {
        htri_t ex;
        snprintf(g, sizeof(g), "/step_%06llu", (unsigned long long) w->completed);
        if ((ex = H5Lexists(w->file, g, H5P_DEFAULT)) < 0)
            st = XFER_ERR_INTERNAL;
        if (h5_agreed(w->comm, &st) && ex > 0 && H5Ldelete(w->file, g, H5P_DEFAULT) < 0)
            st = XFER_ERR_INTERNAL;
        st = xfer_adapter_agree(w->comm, st);
    }
    for (i = 0; st == XFER_SUCCESS && w->o.layout == XFER_ADAPTER_STEP_DIM && i < w->nnames; i++) {
        hid_t ds = H5Dopen2(w->file, w->names[i], H5P_DEFAULT), sp = H5I_INVALID_HID;
        hsize_t dims[XFER_MAX_DIMS + 1];
        int cut = 0;
        if (ds < 0 || (sp = H5Dget_space(ds)) < 0 || H5Sget_simple_extent_dims(sp, dims, NULL) < 0)
            st = XFER_ERR_INTERNAL;
        else
            cut = dims[0] > w->completed;
        if (h5_agreed(w->comm, &st) && cut) {
            dims[0] = w->completed;
            if (H5Dset_extent(ds, dims) < 0)
                st = XFER_ERR_INTERNAL;
        }
        if (sp >= 0)
            H5Sclose(sp);
        if (ds >= 0)
            H5Dclose(ds);
        st = xfer_adapter_agree(w->comm, st);
    }
    H5Eclear2(H5E_DEFAULT);
}

void h5w_free(h5write_t *w)
{
    int i;
    if (w->resfd >= 0)
        close(w->resfd);
    for (i = 0; i < w->nnames; i++)
        free(w->names[i]);
    free(w->names);
    free(w->vars);
    free(w->times);
    h5p_free(w->points);
    free(w->path);
    free(w->tmp);
    free(w);
}

/* Rank 0: PATH.xmf (PATH without .h5/.hdf5), the XDMF description of the completed steps,
 * beside the file that now has its final name: of the step dimension's grids, or of a group
 * per step's joined datasets (hdf5_points.c). */
static int write_xdmf(const h5write_t *w, char *why, size_t cap)
{
    char xmf[4200];
    const char *base = strrchr(w->path, '/') ? strrchr(w->path, '/') + 1 : w->path;
    size_t n = strlen(w->path);
    if (w->o.layout == XFER_ADAPTER_SAME_PATHS ||
        (w->o.layout == XFER_ADAPTER_GROUP_PER_STEP && !w->points))
        return 1;
    if (n > 3 && !strcmp(w->path + n - 3, ".h5"))
        n -= 3;
    else if (n > 5 && !strcmp(w->path + n - 5, ".hdf5"))
        n -= 5;
    snprintf(xmf, sizeof(xmf), "%.*s.xmf", (int) n, w->path);
    if (w->o.layout == XFER_ADAPTER_GROUP_PER_STEP)
        return h5p_write_xdmf(w, xmf, base, why, cap) == 0;
    return h5c_write_xdmf(xmf, base, w->vars, w->nvars, w->completed, w->times, why, cap) == 0;
}

/* Rank 0 gives the closed temporary file its final name (and syncs the directory), then writes
 * its XDMF description: a failure there (the disk just filled up) loses no data, the file stays
 * under its final name, and leaves the reason in @p xwhy. */
static int rename_final(const h5write_t *w, char *why, size_t cap, char *xwhy, size_t xcap)
{
    char dir[4096];
    int fd;
    if (rename(w->tmp, w->path) != 0) {
        snprintf(why, cap, "rename(%s, %s): %s", w->tmp, w->path, strerror(errno));
        return 0;
    }
    h5w_dir_of(w->path, dir, sizeof(dir));
    if ((fd = open(dir, O_RDONLY)) >= 0) {
        fsync(fd);
        close(fd);
    }
    if (!write_xdmf(w, xwhy, xcap) && !xwhy[0])
        snprintf(xwhy, xcap, "cannot write its XDMF description");
    return 1;
}

xfer_status_t h5_commit(void **hp)
{
    h5write_t *w = *hp;
    xfer_status_t st = XFER_SUCCESS;
    char why[512] = "", xwhy[512] = "";
    int ok = 1;
    if (w->in_step) {
        xfer_adapter_set_error("%s: commit with step %llu incomplete", w->tmp,
                               (unsigned long long) w->completed);
        st = XFER_ERR_STATE;
    }
    st = xfer_adapter_agree(w->comm, st);
    if (st != XFER_SUCCESS)
        return st; /* the handle stays: the caller aborts, keeping the completed steps */
    if (H5Fclose(w->file) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, w->tmp, "", "H5Fclose");
    w->file = H5I_INVALID_HID;
    if (w->rank == 0)
        release_reserve(w);
    st = xfer_adapter_agree(w->comm, st);
    if (st == XFER_SUCCESS) {
        if (w->rank == 0)
            ok = rename_final(w, why, sizeof(why), xwhy, sizeof(xwhy));
        MPI_Bcast(&ok, 1, MPI_INT, 0, w->comm);
        if (!ok) {
            MPI_Bcast(why, (int) sizeof(why), MPI_CHAR, 0, w->comm);
            xfer_adapter_set_error("%s", why);
            return XFER_ERR_INTERNAL; /* the caller aborts: the handle stays for abort() */
        }
        /* the data is in place under its final name; only the description may be missing */
        MPI_Bcast(xwhy, (int) sizeof(xwhy), MPI_CHAR, 0, w->comm);
        if (xwhy[0]) {
            xfer_adapter_set_error("%s: all %llu step(s) written, but %s", w->path,
                                   (unsigned long long) w->completed, xwhy);
            st = XFER_ERR_INTERNAL;
        }
        h5w_free(w);
        *hp = NULL; /* nothing left to abort */
    }
    return st; /* on failure before the rename the caller aborts: the handle stays */
}

void h5_abort(void **hp)
{
    h5write_t *w = hp ? *hp : NULL;
    char err[1024], why[512] = "", xwhy[512] = "", outcome[1200];
    int kept = 0;
    if (!w)
        return;
    snprintf(err, sizeof(err), "%s", xfer_adapter_error());
    if (w->file >= 0) {
        if (w->completed > 0 && w->in_step)
            drop_partial(w);
        H5Fclose(w->file); /* a failure here is judged by reading the file back */
        H5Eclear2(H5E_DEFAULT);
        w->file = H5I_INVALID_HID;
    }
    if (w->rank == 0)
        release_reserve(w);
    MPI_Barrier(w->comm);
    if (w->rank == 0) {
        if (w->completed == 0) {
            unlink(w->tmp);
            snprintf(outcome, sizeof(outcome), "no step completed: nothing kept");
        } else if (verify_kept(w, why, sizeof(why)) &&
                   rename_final(w, why, sizeof(why), xwhy, sizeof(xwhy))) {
            kept = 1;
            snprintf(outcome, sizeof(outcome), "kept the %llu completed step(s) in %s%s%s%s",
                     (unsigned long long) w->completed, w->path, xwhy[0] ? " (" : "", xwhy,
                     xwhy[0] ? ")" : "");
        } else {
            snprintf(outcome, sizeof(outcome), "%s left for inspection, not readable: %s", w->tmp,
                     why);
        }
    }
    MPI_Bcast(outcome, (int) sizeof(outcome), MPI_CHAR, 0, w->comm);
    MPI_Bcast(&kept, 1, MPI_INT, 0, w->comm);
    xfer_adapter_set_error("%s%s%s", err, err[0] ? "; " : "", outcome);
    h5w_free(w);
    *hp = NULL;
}
