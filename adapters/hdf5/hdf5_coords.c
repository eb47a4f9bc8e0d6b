/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 adapter (hdf5_adapter.c): coordinates of what the consumer side writes in the
 * step-dimension layout, so that netCDF-4 readers (xarray with h5netcdf, ncdump) and ParaView
 * see a time series:
 *  - /time, a dimension scale of the steps (float64, one value per completed step: the time the
 *    writer gave with set_time, else the step number), attached to axis 0 of every variable;
 *  - a dimension scale per spatial axis, named by the variable (dim_names) or VAR_dK, beside the
 *    variable in its group (indices 0 .. n-1; variables of one group that name an axis alike
 *    share it);
 *  - PATH.xmf beside PATH (XDMF 3, written when the file gets its final name): a temporal
 *    collection of uniform grids over the 2-D and 3-D variables of the most common shape, each
 *    step a hyperslab of the step dimension of the HDF5 datasets. Records (compound datasets)
 *    are named in a comment, not shown: XDMF cannot read a compound's members. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5_hl.h>

#include "hdf5_internal.h"

#define TIME_NAME "/time"

/* Create the /time scale (empty, unlimited) at the file's creation (collective over @p comm;
 * each collective call is made once every rank succeeded so far: h5_agreed). */
xfer_status_t h5c_create_time(hid_t file, const char *where, MPI_Comm comm)
{
    hsize_t dims = 0, maxd = H5S_UNLIMITED, chunk = 256;
    hid_t sp = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, ds = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    static const char desc[] = "the time of each step: what the writer gave (set_time), else "
                               "the step number";
    if ((sp = H5Screate_simple(1, &dims, &maxd)) < 0 ||
        (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_chunk(dcpl, 1, &chunk) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, TIME_NAME, "H5Pset_chunk");
    if (h5_agreed(comm, &st) && (ds = H5Dcreate2(file, TIME_NAME, H5T_NATIVE_DOUBLE, sp,
                                                 H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, TIME_NAME, "H5Dcreate2");
    if (h5_agreed(comm, &st) && H5DSset_scale(ds, "time") < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, TIME_NAME, "H5DSset_scale");
    if (h5_agreed(comm, &st) && H5LTset_attribute_string(file, TIME_NAME, "long_name", desc) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, TIME_NAME, "H5LTset_attribute_string");
    if (h5_agreed(comm, &st) &&
        H5LTset_attribute_string(file, TIME_NAME, XFER_COORD_ATTR, "time") < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, TIME_NAME, "H5LTset_attribute_string");
    H5_CLOSE(ds, dcpl, sp);
    return xfer_adapter_agree(comm, st);
}

/* Append the time of step @p step to /time (collective; rank 0 writes the value). */
xfer_status_t h5c_time_step(hid_t file, const char *where, uint64_t step, double t, MPI_Comm comm)
{
    hsize_t dims = step + 1, start = step, one = 1;
    hid_t ds = H5I_INVALID_HID, fs = H5I_INVALID_HID, ms = H5I_INVALID_HID, dx = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) {
        xfer_adapter_set_error("%s: %s: MPI_Comm_rank failed", where, TIME_NAME);
        st = XFER_ERR_MPI;
    }
    if (h5_agreed(comm, &st) && (ds = H5Dopen2(file, TIME_NAME, H5P_DEFAULT)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, TIME_NAME, "H5Dopen2");
    if (h5_agreed(comm, &st) && H5Dset_extent(ds, &dims) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, TIME_NAME, "H5Dset_extent");
    if (h5_agreed(comm, &st) &&
        ((fs = H5Dget_space(ds)) < 0 || (ms = H5Screate_simple(1, &one, NULL)) < 0 ||
         (dx = h5_collective_dxpl()) < 0 ||
         (rank == 0 ? H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &one, NULL) < 0
                    : (H5Sselect_none(fs) < 0 || H5Sselect_none(ms) < 0))))
        st = h5_fail(XFER_ERR_INTERNAL, where, TIME_NAME, "H5Sselect_hyperslab");
    if (h5_agreed(comm, &st) && H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, dx, &t) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, TIME_NAME, "H5Dwrite (collective)");
    H5_CLOSE(dx, ms, fs, ds);
    return xfer_adapter_agree(comm, st);
}

/* The group part of a dataset path ("/fields/U" -> "/fields", "/U" -> ""). */
static void group_of(const char *name, char *out, size_t cap)
{
    const char *slash = strrchr(name, '/');
    size_t n = slash ? (size_t) (slash - name) : 0;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, name, n);
    out[n] = '\0';
}

/* The scale at @p path when it is a one-dimensional scale of @p n points (else none: taken by
 * something else). Collective; *@p st agreed. */
static hid_t existing_scale(hid_t file, const char *path, hsize_t n, MPI_Comm comm,
                            xfer_status_t *st)
{
    hid_t sc = H5Dopen2(file, path, H5P_DEFAULT), s2 = H5I_INVALID_HID;
    hsize_t len = 0;
    int fits = sc >= 0;
    if (fits) {
        s2 = H5Dget_space(sc);
        fits = s2 >= 0 && H5Sget_simple_extent_ndims(s2) == 1 &&
               H5Sget_simple_extent_dims(s2, &len, NULL) >= 0 && len == n;
    }
    if (s2 >= 0)
        H5Sclose(s2);
    /* what a rank found decides its next calls: every rank takes the same way */
    if (*st == XFER_SUCCESS &&
        MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
        xfer_adapter_set_error("%s: MPI_Allreduce failed", path);
        *st = XFER_ERR_MPI;
    }
    if (h5_agreed(comm, st) && fits) /* H5DSis_scale reads attributes: collective */
        fits = H5DSis_scale(sc) > 0;
    H5Eclear2(H5E_DEFAULT);
    if (!fits && sc >= 0) {
        H5Dclose(sc);
        sc = H5I_INVALID_HID;
    }
    return sc;
}

/* A new scale of @p n points (0 .. n-1, written by rank 0) at @p path. Collective; the
 * returned status is agreed. */
static xfer_status_t new_scale(hid_t file, const char *path, hsize_t n, MPI_Comm comm, int rank,
                               const char *where, hid_t *scp)
{
    const char *label = strrchr(path, '/') + 1;
    int64_t *vals = rank == 0 ? malloc((size_t) n * sizeof(int64_t) + 1) : NULL;
    hid_t sc = H5I_INVALID_HID, sp = H5I_INVALID_HID, dx = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    hsize_t i;
    if (rank == 0 && !vals) {
        xfer_adapter_set_error("%s: %s: out of memory", where, path);
        st = XFER_ERR_NO_MEMORY;
    }
    for (i = 0; vals && i < n; i++)
        vals[i] = (int64_t) i;
    if (st == XFER_SUCCESS &&
        ((sp = H5Screate_simple(1, &n, NULL)) < 0 || (dx = h5_collective_dxpl()) < 0 ||
         (rank != 0 && H5Sselect_none(sp) < 0)))
        st = h5_fail(XFER_ERR_INTERNAL, where, path, "H5Screate_simple");
    if (h5_agreed(comm, &st) && (sc = H5Dcreate2(file, path, H5T_NATIVE_INT64, sp, H5P_DEFAULT,
                                                 H5P_DEFAULT, H5P_DEFAULT)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, path, "H5Dcreate2");
    if (h5_agreed(comm, &st) && H5Dwrite(sc, H5T_NATIVE_INT64, sp, sp, dx, vals) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, path, "H5Dwrite (collective)");
    if (h5_agreed(comm, &st) && H5DSset_scale(sc, label) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, path, "H5DSset_scale");
    if (h5_agreed(comm, &st) && H5LTset_attribute_string(file, path, XFER_COORD_ATTR, "axis") < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, path, "H5LTset_attribute_string");
    st = xfer_adapter_agree(comm, st);
    free(vals);
    if (dx >= 0)
        H5Pclose(dx);
    if (sp >= 0)
        H5Sclose(sp);
    if (st != XFER_SUCCESS && sc >= 0) {
        H5Dclose(sc);
        sc = H5I_INVALID_HID;
    }
    *scp = sc;
    return st;
}

/* A scale for axis @p axis (of @p n points) of variable @p v written as dataset @p ds: the
 * group's scale of the axis' name, made on first use, or the variable's own when the name is
 * taken by a scale of another length (collective). */
static xfer_status_t attach_axis(hid_t file, hid_t ds, const char *dsname,
                                 const xfer_adapter_var_t *v, int axis, hsize_t n, MPI_Comm comm,
                                 int rank, const char *where)
{
    char grp[XFER_ADAPTER_MAX_NAME], base[XFER_ADAPTER_MAX_NAME], path[3 * XFER_ADAPTER_MAX_NAME];
    const char *slash = strrchr(dsname, '/');
    hid_t sc = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    int attempt;

    group_of(dsname, grp, sizeof grp);
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : dsname);
    for (attempt = 0; attempt < 2 && sc < 0 && st == XFER_SUCCESS; attempt++) {
        htri_t there;
        if (attempt == 0 && v->dim_names[axis][0])
            snprintf(path, sizeof path, "%s/%s", grp, v->dim_names[axis]);
        else
            snprintf(path, sizeof path, "%s/%s_d%d", grp, base, axis);
        there = H5Lexists(file, path, H5P_DEFAULT); /* a collective read: alike on every rank */
        if (there < 0)
            st = h5_fail(XFER_ERR_INTERNAL, where, path, "H5Lexists");
        if (!h5_agreed(comm, &st))
            break;
        if (there > 0)
            sc = existing_scale(file, path, n, comm, &st);
        else
            st = new_scale(file, path, n, comm, rank, where, &sc);
    }
    if (st == XFER_SUCCESS && sc < 0) {
        xfer_adapter_set_error("%s: %s: no dimension scale for axis %d", where, dsname, axis);
        st = XFER_ERR_INTERNAL;
    }
    if (st == XFER_SUCCESS && H5DSattach_scale(ds, sc, (unsigned) (axis + 1)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, dsname, "H5DSattach_scale");
    if (sc >= 0)
        H5Dclose(sc);
    return xfer_adapter_agree(comm, st);
}

/* A new step-dimension variable: /time on axis 0, a scale on every other (collective). */
xfer_status_t h5c_attach(hid_t file, hid_t ds, const char *dsname, const xfer_adapter_var_t *v,
                         MPI_Comm comm, const char *where)
{
    hid_t t = H5I_INVALID_HID;
    xfer_status_t st = XFER_SUCCESS;
    int d, rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) {
        xfer_adapter_set_error("%s: %s: MPI_Comm_rank failed", where, dsname);
        st = XFER_ERR_MPI;
    }
    if (h5_agreed(comm, &st) && (t = H5Dopen2(file, TIME_NAME, H5P_DEFAULT)) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, dsname, "H5Dopen2 (time)");
    if (h5_agreed(comm, &st) && H5DSattach_scale(ds, t, 0) < 0)
        st = h5_fail(XFER_ERR_INTERNAL, where, dsname, "H5DSattach_scale (time)");
    if (t >= 0)
        H5Dclose(t);
    for (d = 0; h5_agreed(comm, &st) && d < v->ndims; d++)
        st = attach_axis(file, ds, dsname, v, d, (hsize_t) v->dims[d], comm, rank, where);
    return st;
}

/* ---- XDMF ------------------------------------------------------------------------------------ */

const char *h5c_xdmf_number(xfer_type_t t, int *precision)
{
    *precision = (int) xfer_type_size(t);
    switch (t) {
    case XFER_TYPE_FLOAT32:
    case XFER_TYPE_FLOAT64:
        return "Float";
    case XFER_TYPE_UINT8:
        return "UChar";
    case XFER_TYPE_INT8:
        return "Char";
    case XFER_TYPE_UINT16:
    case XFER_TYPE_UINT32:
    case XFER_TYPE_UINT64:
        return "UInt";
    default:
        return "Int";
    }
}

/* @p text inside an XML comment, which must not hold "--". */
void h5c_comment(FILE *f, const char *text)
{
    char prev = 0;
    for (; *text; prev = *text++)
        fputc(*text == '-' && prev == '-' ? '_' : *text, f);
}

/* Write @p xmf (via a temporary and a rename: readers never see half of it) describing the
 * @p nsteps steps of @p h5name's step-dimension variables @p vars (rank 0 only). Variables of
 * 2 or 3 dimensions of the most common shape become the grid's attributes; without any, no
 * file is written. Returns 0, or -1 with the reason in @p why. */
int h5c_write_xdmf(const char *xmf, const char *h5name, const xfer_adapter_var_t *vars, int n,
                   uint64_t nsteps, const double *times, char *why, size_t cap)
{
    char tmp[4200];
    int best = -1, bestn = 0, i, j;
    uint64_t s;
    FILE *f;

    for (i = 0; i < n; i++) { /* the most common 2-D or 3-D shape (of variables XDMF shows) */
        int same = 0;
        if (vars[i].ndims < 2 || vars[i].ndims > 3 || vars[i].type == XFER_TYPE_RECORD)
            continue;
        for (j = 0; j < n; j++)
            same += vars[j].type != XFER_TYPE_RECORD && vars[j].ndims == vars[i].ndims &&
                    !memcmp(vars[j].dims, vars[i].dims, (size_t) vars[i].ndims * sizeof(uint64_t));
        if (same > bestn) {
            best = i;
            bestn = same;
        }
    }
    if (best < 0 || nsteps == 0)
        return 0;
    snprintf(tmp, sizeof tmp, "%s.tmp", xmf);
    if (!(f = fopen(tmp, "w"))) {
        snprintf(why, cap, "cannot write %s", tmp);
        return -1;
    }
    {
        const xfer_adapter_var_t *g = &vars[best];
        const int nd = g->ndims;
        char shape[128];
        if (nd == 2)
            snprintf(shape, sizeof shape, "%llu %llu", (unsigned long long) g->dims[0],
                     (unsigned long long) g->dims[1]);
        else
            snprintf(shape, sizeof shape, "%llu %llu %llu", (unsigned long long) g->dims[0],
                     (unsigned long long) g->dims[1], (unsigned long long) g->dims[2]);
        fprintf(f,
                "<?xml version=\"1.0\" ?>\n<!-- written by libxfer's HDF5 adapter: the "
                "steps of %s -->\n<Xdmf Version=\"3.0\">\n <Domain>\n  <Grid Name=\"steps\" "
                "GridType=\"Collection\" CollectionType=\"Temporal\">\n",
                h5name);
        /* XDMF reads an HDF5 dataset whole, as one number type: it cannot address a member of
         * a compound. Copying each field to a dataset of its own would double what a step
         * writes, so records stay in the .h5 (h5py, h5dump) and are named here. */
        for (i = 0; i < n; i++)
            if (vars[i].type == XFER_TYPE_RECORD) {
                fputs("  <!-- ", f);
                h5c_comment(f, vars[i].name);
                fputs(": a record (HDF5 compound type), not shown: XDMF cannot address the "
                      "fields of a compound; read them from ",
                      f);
                h5c_comment(f, h5name);
                fputs(" -->\n", f);
            }
        for (s = 0; s < nsteps; s++) {
            fprintf(
                f,
                "   <Grid Name=\"step %llu\" GridType=\"Uniform\">\n    <Time Value=\"%.17g\"/>\n"
                "    <Topology TopologyType=\"%s\" Dimensions=\"%s\"/>\n"
                "    <Geometry GeometryType=\"%s\">\n"
                "     <DataItem Dimensions=\"%d\" Format=\"XML\">%s</DataItem>\n"
                "     <DataItem Dimensions=\"%d\" Format=\"XML\">%s</DataItem>\n"
                "    </Geometry>\n",
                (unsigned long long) s, times ? times[s] : (double) s,
                nd == 2 ? "2DCoRectMesh" : "3DCoRectMesh", shape,
                nd == 2 ? "ORIGIN_DXDY" : "ORIGIN_DXDYDZ", nd, nd == 2 ? "0 0" : "0 0 0", nd,
                nd == 2 ? "1 1" : "1 1 1");
            for (i = 0; i < n; i++) {
                const xfer_adapter_var_t *v = &vars[i];
                const char *num;
                int prec;
                if (v->type == XFER_TYPE_RECORD || v->ndims != nd ||
                    memcmp(v->dims, g->dims, (size_t) nd * sizeof(uint64_t)))
                    continue;
                num = h5c_xdmf_number(v->type, &prec);
                fprintf(f,
                        "    <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n"
                        "     <DataItem ItemType=\"HyperSlab\" Dimensions=\"%s\" "
                        "Type=\"HyperSlab\">\n"
                        "      <DataItem Dimensions=\"3 %d\" Format=\"XML\">%llu%s 1%s 1 %s"
                        "</DataItem>\n"
                        "      <DataItem Dimensions=\"%llu %s\" NumberType=\"%s\" "
                        "Precision=\"%d\" Format=\"HDF\">%s:%s</DataItem>\n"
                        "     </DataItem>\n    </Attribute>\n",
                        strrchr(v->name, '/') ? strrchr(v->name, '/') + 1 : v->name, shape, nd + 1,
                        (unsigned long long) s, nd == 2 ? " 0 0" : " 0 0 0",
                        nd == 2 ? " 1 1" : " 1 1 1", shape, (unsigned long long) nsteps, shape, num,
                        prec, h5name, v->name);
            }
            fprintf(f, "   </Grid>\n");
        }
        fprintf(f, "  </Grid>\n </Domain>\n</Xdmf>\n");
    }
    if (fclose(f) != 0 || rename(tmp, xmf) != 0) {
        snprintf(why, cap, "cannot write %s", xmf);
        remove(tmp);
        return -1;
    }
    return 0;
}
