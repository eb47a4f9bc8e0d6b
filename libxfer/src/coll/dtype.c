/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "coll.h"

xfer_status_t xfer_dtype_query(MPI_Datatype type, const char *what, xfer_dtype_info_t *out)
{
    xfer_status_t st = XFER_SUCCESS;

    memset(out, 0, sizeof(*out));
    out->type = type;
    if (type == MPI_DATATYPE_NULL)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "%s is MPI_DATATYPE_NULL", what);
    XFER_MPI_GOTO(MPI_Type_size(type, &out->size), st, out);
    XFER_MPI_GOTO(MPI_Type_get_extent(type, &out->lb, &out->extent), st, out);
    XFER_MPI_GOTO(MPI_Type_get_true_extent(type, &out->true_lb, &out->true_extent), st, out);
    out->contiguous = (MPI_Aint) out->size == out->extent && out->true_extent == out->extent &&
                      out->true_lb == out->lb;
out:
    return st;
}

/* ---- type signatures -------------------------------------------------------------------- */

/* Basic types are identified by their position in this table (the handles themselves differ
 * between MPI libraries but are equal within one). Unknown named types hash by size. */
static MPI_Datatype basic_types[40];
static int nbasic;

static void init_basic(void)
{
    MPI_Datatype t[] = {MPI_CHAR,
                        MPI_SIGNED_CHAR,
                        MPI_UNSIGNED_CHAR,
                        MPI_BYTE,
                        MPI_SHORT,
                        MPI_UNSIGNED_SHORT,
                        MPI_INT,
                        MPI_UNSIGNED,
                        MPI_LONG,
                        MPI_UNSIGNED_LONG,
                        MPI_LONG_LONG,
                        MPI_UNSIGNED_LONG_LONG,
                        MPI_FLOAT,
                        MPI_DOUBLE,
                        MPI_LONG_DOUBLE,
                        MPI_WCHAR,
                        MPI_C_BOOL,
                        MPI_INT8_T,
                        MPI_INT16_T,
                        MPI_INT32_T,
                        MPI_INT64_T,
                        MPI_UINT8_T,
                        MPI_UINT16_T,
                        MPI_UINT32_T,
                        MPI_UINT64_T,
                        MPI_AINT,
                        MPI_OFFSET,
                        MPI_COUNT,
                        MPI_C_FLOAT_COMPLEX,
                        MPI_C_DOUBLE_COMPLEX,
                        MPI_PACKED,
                        MPI_FLOAT_INT,
                        MPI_DOUBLE_INT,
                        MPI_LONG_INT,
                        MPI_2INT,
                        MPI_SHORT_INT,
                        MPI_LONG_DOUBLE_INT};
    nbasic = (int) (sizeof(t) / sizeof(t[0]));
    memcpy(basic_types, t, sizeof(t));
}

static uint64_t basic_id(MPI_Datatype t)
{
    int i, size = 0;
    if (nbasic == 0)
        init_basic();
    for (i = 0; i < nbasic; i++)
        if (basic_types[i] == t)
            return (uint64_t) i + 1;
    if (MPI_Type_size(t, &size) != MPI_SUCCESS)
        size = 0;
    return 1000 + (uint64_t) size;
}

/* Streaming hash over runs (type id, count); adjacent runs of one type merge, so equal
 * signatures give equal hashes whatever their nesting. The words go in byte by byte, so the
 * high bits of a count reach the low bits of the hash too. */
typedef struct {
    uint64_t h, pend_id, pend_n;
    int err;
} sig_acc_t;

static void acc_flush(sig_acc_t *a)
{
    if (a->pend_n == 0)
        return;
    a->h = xfer_fnv1a_u64(xfer_fnv1a_u64(a->h, a->pend_id), a->pend_n);
    a->pend_n = 0;
}

static void acc_feed(sig_acc_t *a, uint64_t id, uint64_t n)
{
    if (n == 0)
        return;
    if (a->pend_n && a->pend_id != id)
        acc_flush(a);
    a->pend_id = id;
    a->pend_n += n;
}

typedef struct {
    int ni, na, nd, comb;
    int *ints;
    MPI_Aint *addrs;
    MPI_Datatype *types;
} contents_t;

static int get_contents(MPI_Datatype t, contents_t *c)
{
    memset(c, 0, sizeof(*c));
    if (MPI_Type_get_envelope(t, &c->ni, &c->na, &c->nd, &c->comb) != MPI_SUCCESS)
        return 0;
    if (c->comb == MPI_COMBINER_NAMED)
        return 1;
    c->ints = xfer_calloc((size_t) c->ni + 1, sizeof(int));
    c->addrs = xfer_calloc((size_t) c->na + 1, sizeof(MPI_Aint));
    c->types = xfer_calloc((size_t) c->nd + 1, sizeof(MPI_Datatype));
    if (!c->ints || !c->addrs || !c->types)
        return 0;
    return MPI_Type_get_contents(t, c->ni, c->na, c->nd, c->ints, c->addrs, c->types) ==
           MPI_SUCCESS;
}

static void free_contents(contents_t *c)
{
    int i;
    for (i = 0; c->types && i < c->nd; i++) {
        int ni, na, nd, comb;
        if (MPI_Type_get_envelope(c->types[i], &ni, &na, &nd, &comb) == MPI_SUCCESS &&
            comb != MPI_COMBINER_NAMED && MPI_Type_free(&c->types[i]) != MPI_SUCCESS)
            xfer_log(XFER_LOG_WARN, "MPI_Type_free failed on a decoded datatype");
    }
    xfer_free(c->ints);
    xfer_free(c->addrs);
    xfer_free(c->types);
}

/* If every element of @p t is one basic type, store its id and element count. */
static int single_basic(MPI_Datatype t, uint64_t *id, uint64_t *n);

static void feed_type(sig_acc_t *a, MPI_Datatype t, uint64_t reps, int depth)
{
    contents_t c;
    uint64_t id, n, r;
    int i;

    if (reps == 0 || a->err)
        return;
    if (depth > 32) {
        a->err = 1;
        return;
    }
    if (single_basic(t, &id, &n)) {
        acc_feed(a, id, n * reps);
        return;
    }
    if (!get_contents(t, &c)) {
        free_contents(&c);
        a->err = 1;
        return;
    }
    for (r = 0; r < reps && !a->err; r++) {
        switch (c.comb) {
        case MPI_COMBINER_STRUCT:
            for (i = 0; i < c.ints[0]; i++)
                feed_type(a, c.types[i], (uint64_t) c.ints[1 + i], depth + 1);
            break;
        case MPI_COMBINER_INDEXED:
        case MPI_COMBINER_HINDEXED:
            for (i = 0; i < c.ints[0]; i++)
                feed_type(a, c.types[0], (uint64_t) c.ints[1 + i], depth + 1);
            break;
        case MPI_COMBINER_INDEXED_BLOCK:
        case MPI_COMBINER_HINDEXED_BLOCK:
            feed_type(a, c.types[0], (uint64_t) c.ints[0] * (uint64_t) c.ints[1], depth + 1);
            break;
        case MPI_COMBINER_CONTIGUOUS:
            feed_type(a, c.types[0], (uint64_t) c.ints[0], depth + 1);
            break;
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_HVECTOR:
            feed_type(a, c.types[0], (uint64_t) c.ints[0] * (uint64_t) c.ints[1], depth + 1);
            break;
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_RESIZED:
            feed_type(a, c.types[0], 1, depth + 1);
            break;
        default: { /* subarray, darray, f90 types: elements of the old type, by size */
            int size = 0, osize = 1;
            if (MPI_Type_size(t, &size) != MPI_SUCCESS ||
                (c.nd > 0 && MPI_Type_size(c.types[c.nd - 1], &osize) != MPI_SUCCESS)) {
                a->err = 1;
                break;
            }
            if (c.nd > 0 && osize > 0)
                feed_type(a, c.types[c.nd - 1], (uint64_t) size / (uint64_t) osize, depth + 1);
            else
                acc_feed(a, 2000 + (uint64_t) c.comb, (uint64_t) size);
        }
        }
    }
    free_contents(&c);
}

static int single_basic(MPI_Datatype t, uint64_t *id, uint64_t *n)
{
    contents_t c;
    int ok = 0, i;
    uint64_t cid = 0, cn = 0, sum = 0;

    if (!get_contents(t, &c)) {
        free_contents(&c);
        return 0;
    }
    if (c.comb == MPI_COMBINER_NAMED) {
        *id = basic_id(t);
        *n = 1;
        return 1;
    }
    switch (c.comb) {
    case MPI_COMBINER_STRUCT:
        ok = 1;
        for (i = 0; i < c.ints[0] && ok; i++) {
            uint64_t ei, en;
            if (c.ints[1 + i] == 0)
                continue;
            ok = single_basic(c.types[i], &ei, &en) && (cid == 0 || ei == cid);
            cid = ei;
            sum += en * (uint64_t) c.ints[1 + i];
        }
        *id = cid;
        *n = sum;
        ok = ok && cid != 0;
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        for (i = 0; i < c.ints[0]; i++)
            sum += (uint64_t) c.ints[1 + i];
        ok = single_basic(c.types[0], &cid, &cn);
        *id = cid;
        *n = cn * sum;
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        ok = single_basic(c.types[0], &cid, &cn);
        *id = cid;
        *n = cn * (uint64_t) c.ints[0] * (uint64_t) c.ints[1];
        break;
    case MPI_COMBINER_CONTIGUOUS:
        ok = single_basic(c.types[0], &cid, &cn);
        *id = cid;
        *n = cn * (uint64_t) c.ints[0];
        break;
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        ok = single_basic(c.types[0], id, n);
        break;
    default:
        ok = 0;
    }
    free_contents(&c);
    return ok;
}

xfer_status_t xfer_dtype_signature(MPI_Datatype type, int count, uint64_t *hash)
{
    sig_acc_t a;
    memset(&a, 0, sizeof(a));
    a.h = XFER_FNV_OFFSET;
    if (count > 0 && type != MPI_DATATYPE_NULL)
        feed_type(&a, type, (uint64_t) count, 0);
    acc_flush(&a);
    *hash = a.h;
    if (a.err)
        return XFER_ERR(XFER_ERR_INTERNAL, "could not decode a derived datatype's signature");
    return XFER_SUCCESS;
}
