/* SPDX-License-Identifier: BSD-3-Clause */
/* Record types (xfer_record_t): the C struct layout of their fields and their MPI datatype. The
 * layout is the one a C compiler gives the equivalent struct on the ABIs libxfer runs on (x86-64
 * and AArch64 System V, where every scalar type's alignment is its size): each field at the next
 * multiple of its scalar's size, the record's size rounded up to the largest of them. numpy's
 * dtype(..., align=True) and a Fortran bind(c) type follow the same rule. (A dataset's element
 * size, whatever its type, is config.c's.) */
#include <limits.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include <xfer/config.h>

#include "cfg.h"

/* The rule above, checked where it is relied on. */
_Static_assert(alignof(int8_t) == 1 && alignof(int16_t) == 2 && alignof(int32_t) == 4 &&
                   alignof(int64_t) == 8 && alignof(float) == 4 && alignof(double) == 8,
               "every scalar type is aligned to its size on this ABI");

/* A field of @p r that cannot be laid out or described to MPI: why, else NULL. */
static const char *bad_field(const xfer_record_field_t *f)
{
    if (xfer_type_size(f->type) == 0)
        return "is not a scalar type (int8 .. float64; records do not nest)";
    if (f->count < 1 || f->count > INT_MAX)
        return "count is outside 1..INT_MAX";
    return NULL;
}

static xfer_status_t check_fields(const xfer_record_t *r)
{
    const char *why;
    int i;

    if (!r)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "record is NULL");
    if (r->nfields < 1 || r->nfields > XFER_RECORD_MAX_FIELDS || !r->fields)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "a record has 1..%d fields (XFER_RECORD_MAX_FIELDS), this one %d%s",
                        XFER_RECORD_MAX_FIELDS, r->nfields, r->fields ? "" : " and fields NULL");
    for (i = 0; i < r->nfields; i++)
        if ((why = bad_field(&r->fields[i])))
            return XFER_ERR(XFER_ERR_INVALID_ARG, "record field %d (%.64s): type %d, count %u: %s",
                            i, r->fields[i].name ? r->fields[i].name : "no name",
                            (int) r->fields[i].type, (unsigned) r->fields[i].count, why);
    return XFER_SUCCESS;
}

xfer_status_t xfer_record_layout(xfer_record_t *r)
{
    size_t off = 0, align = 1;
    xfer_status_t st;
    int i;

    if ((st = check_fields(r)) != XFER_SUCCESS)
        return st;
    for (i = 0; i < r->nfields; i++) {
        xfer_record_field_t *f = &r->fields[i];
        const size_t a = xfer_type_size(f->type);
        off = (off + a - 1) / a * a;
        f->offset = off;
        off += a * f->count; /* at most 64 fields of 8 x INT_MAX bytes: no overflow */
        align = a > align ? a : align;
    }
    r->size = (off + align - 1) / align * align;
    r->align = align;
    return XFER_SUCCESS;
}

static MPI_Datatype mpi_scalar(xfer_type_t t)
{
    switch (t) {
    case XFER_TYPE_INT8:
        return MPI_INT8_T;
    case XFER_TYPE_UINT8:
        return MPI_UINT8_T;
    case XFER_TYPE_INT16:
        return MPI_INT16_T;
    case XFER_TYPE_UINT16:
        return MPI_UINT16_T;
    case XFER_TYPE_INT32:
        return MPI_INT32_T;
    case XFER_TYPE_UINT32:
        return MPI_UINT32_T;
    case XFER_TYPE_INT64:
        return MPI_INT64_T;
    case XFER_TYPE_UINT64:
        return MPI_UINT64_T;
    case XFER_TYPE_FLOAT32:
        return MPI_FLOAT;
    case XFER_TYPE_FLOAT64:
        return MPI_DOUBLE;
    default:
        return MPI_DATATYPE_NULL;
    }
}

xfer_status_t xfer_record_mpi_type(const xfer_record_t *r, MPI_Datatype *t)
{
    int len[XFER_RECORD_MAX_FIELDS];
    MPI_Aint disp[XFER_RECORD_MAX_FIELDS];
    MPI_Datatype types[XFER_RECORD_MAX_FIELDS], st_type = MPI_DATATYPE_NULL;
    xfer_status_t st;
    int i;

    if (!t)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "t is NULL");
    *t = MPI_DATATYPE_NULL;
    if ((st = check_fields(r)) != XFER_SUCCESS)
        return st;
    if (r->size > (size_t) INT64_MAX)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "record size %zu", r->size);
    for (i = 0; i < r->nfields; i++) {
        const xfer_record_field_t *f = &r->fields[i];
        const size_t bytes = xfer_type_size(f->type) * f->count;
        if (f->offset > r->size || bytes > r->size - f->offset)
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "record field %d (%.64s): bytes %zu..%zu lie outside the record's "
                            "%zu bytes (xfer_record_layout lays a record out)",
                            i, f->name ? f->name : "no name", f->offset, f->offset + bytes,
                            r->size);
        len[i] = (int) f->count;
        disp[i] = (MPI_Aint) f->offset;
        types[i] = mpi_scalar(f->type);
    }
    XFER_MPI_GOTO(MPI_Type_create_struct(r->nfields, len, disp, types, &st_type), st, out);
    XFER_MPI_GOTO(MPI_Type_create_resized(st_type, 0, (MPI_Aint) r->size, t), st, out);
    XFER_MPI_GOTO(MPI_Type_commit(t), st, out);
out:
    if (st_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&st_type);
    if (st != XFER_SUCCESS && *t != MPI_DATATYPE_NULL)
        MPI_Type_free(t);
    return st;
}

void xfer_cfg_record_free(xfer_record_t *r)
{
    int i;

    if (!r)
        return;
    for (i = 0; r->fields && i < r->nfields; i++)
        xfer_free(r->fields[i].name);
    xfer_free(r->fields);
    xfer_free(r);
}
