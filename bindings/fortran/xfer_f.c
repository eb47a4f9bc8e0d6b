/* SPDX-License-Identifier: BSD-3-Clause */
/* The C side of the Fortran module `xfer` (xfer.f90, docs/bindings.md).
 *
 * Arrays arrive as C descriptors (ISO_Fortran_binding.h: assumed-type, assumed-rank dummies), so
 * one routine takes every type and rank. Fortran arrays are column-major: a Fortran array of
 * shape (n1, ..., nr) is the C-order array of shape (nr, ..., n1), the same bytes. So the
 * dataset's dims, and every start and count, are reversed here: Fortran callers give and get
 * them in Fortran order (fastest dimension first), as 0-based offsets. Non-contiguous arrays
 * (sections) are packed into, or unpacked from, a contiguous copy.
 *
 * Communicators are Fortran handles (MPI_Fint: `use mpi` integers, mpi_f08's MPI_VAL). Every
 * routine returns an xfer_status_t; xfer_f_error_message gives the words of the last failure. */
#include <ISO_Fortran_binding.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

#include "xfer_f.h"

static _Thread_local char f_err[2048];

/* A new call: no words of an earlier failure. */
void xfer_f_clear(void)
{
    f_err[0] = '\0';
}

int xfer_f_fail(int st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f_err, sizeof(f_err), fmt, ap);
    va_end(ap);
    return st;
}

/* A libxfer status: its words kept for xfer_f_error_message. */
int xfer_f_lib(xfer_status_t st)
{
    if (st != XFER_SUCCESS)
        snprintf(f_err, sizeof(f_err), "%s", xfer_last_error());
    return st;
}

/* A C string into a blank-padded Fortran string of @p len characters. */
void xfer_f_to_fstr(char *buf, size_t len, const char *s)
{
    size_t n = strlen(s);
    if (n > len)
        n = len;
    memcpy(buf, s, n);
    memset(buf + n, ' ', len - n);
}

/* A failure found on the Fortran side (an argument's size): its words, for the message. */
int xfer_f_set_error(int st, const char *msg)
{
    snprintf(f_err, sizeof(f_err), "%s", msg);
    return st;
}

void xfer_f_error_message(char *buf, size_t len)
{
    xfer_f_to_fstr(buf, len, f_err);
}

void xfer_f_status_name(int st, char *buf, size_t len)
{
    xfer_f_to_fstr(buf, len, xfer_status_name((xfer_status_t) st));
}

/* ---- the workflow ------------------------------------------------------------------------ */

int xfer_f_init(const char *config, const char *component, int has_comm, MPI_Fint comm, void **x)
{
    MPI_Comm c = has_comm ? MPI_Comm_f2c(comm) : MPI_COMM_WORLD;
    xfer_f_clear();
    *x = NULL;
    return xfer_f_lib(
        xfer_init(config[0] ? config : NULL, component[0] ? component : NULL, c, (xfer_t **) x));
}

int xfer_f_finalize(void **x)
{
    xfer_f_clear();
    return xfer_f_lib(xfer_finalize((xfer_t **) x));
}

int xfer_f_comm(void *x, MPI_Fint *comm)
{
    MPI_Comm c;
    xfer_status_t st = xfer_comm((const xfer_t *) x, &c);
    if (st == XFER_SUCCESS)
        *comm = MPI_Comm_c2f(c);
    return xfer_f_lib(st);
}

int xfer_f_channel_open(void *x, const char *name, void **ch, int *index)
{
    const xfer_config_t *cfg;
    xfer_status_t st;
    int comp;
    xfer_f_clear();
    if (!x)
        return xfer_f_fail(XFER_ERR_STATE, "xfer_channel_open: the workflow is not initialised");
    if ((st = xfer_channel_open((xfer_t *) x, name, (xfer_channel_t **) ch)) != XFER_SUCCESS ||
        (st = xfer_config_of((const xfer_t *) x, &cfg, &comp)) != XFER_SUCCESS ||
        (st = xfer_config_channel(cfg, name, index)) != XFER_SUCCESS)
        return xfer_f_lib(st);
    return XFER_SUCCESS;
}

int xfer_f_channel_close(void **ch)
{
    xfer_f_clear();
    return xfer_f_lib(xfer_channel_close((xfer_channel_t **) ch));
}

int xfer_f_step_begin(void *ch, int timeout_ms, int *status)
{
    xfer_step_status_t s = XFER_STEP_NOT_READY;
    xfer_status_t st;
    xfer_f_clear();
    st = xfer_step_begin((xfer_channel_t *) ch, timeout_ms, &s);
    *status = (int) s;
    return xfer_f_lib(st);
}

int xfer_f_step_end(void *ch)
{
    xfer_f_clear();
    return xfer_f_lib(xfer_step_end((xfer_channel_t *) ch));
}

/* ---- datasets ---------------------------------------------------------------------------- */

/* Dataset @p name of channel @p index and whether this component sends it. */
static const xfer_cfg_dataset_t *dataset(void *x, int index, const char *name, int *sends)
{
    const xfer_config_t *cfg;
    const xfer_cfg_channel_t *c;
    int comp, i;
    if (!x || xfer_config_of((const xfer_t *) x, &cfg, &comp) != XFER_SUCCESS || index < 0 ||
        index >= cfg->nchannels) {
        xfer_f_fail(XFER_ERR_STATE, "the workflow is not initialised, or the channel not open");
        return NULL;
    }
    c = &cfg->channels[index];
    for (i = 0; i < c->ndatasets; i++)
        if (strcmp(c->datasets[i].name, name) == 0) {
            *sends = c->datasets[i].from == comp;
            return &c->datasets[i];
        }
    xfer_f_fail(XFER_ERR_NOT_FOUND, "channel %s has no dataset \"%s\"", c->name, name);
    return NULL;
}

/* The array's element type is the dataset's: a Fortran integer of its size (signed or not:
 * Fortran has no unsigned integers), a real of its size, or for a record a derived type of the
 * record's size (bind(c): gfortran says CFI_type_struct; CFI_type_other is let through too). */
static int type_ok(const CFI_cdesc_t *a, const xfer_cfg_dataset_t *d)
{
    const int cat = a->type & CFI_type_mask;
    const size_t es = xfer_cfg_dataset_esize(d);
    if (a->elem_len != es)
        return 0;
    if (d->type == XFER_TYPE_RECORD)
        return a->type == CFI_type_struct || a->type == CFI_type_other;
    if (d->type == XFER_TYPE_FLOAT32 || d->type == XFER_TYPE_FLOAT64)
        return cat == CFI_type_Real;
    return cat == CFI_type_Integer;
}

/* What the dataset's elements are, for messages: "float64", "a record of 40 bytes". */
static const char *elem_word(const xfer_cfg_dataset_t *d)
{
    static _Thread_local char buf[64];
    if (d->type != XFER_TYPE_RECORD)
        return xfer_type_name(d->type);
    snprintf(buf, sizeof(buf), "a record of %zu bytes (a bind(c) derived type)", d->record->size);
    return buf;
}

const char *xfer_f_type_word(const CFI_cdesc_t *a)
{
    switch (a->type & CFI_type_mask) {
    case CFI_type_Integer:
        return "integer";
    case CFI_type_Real:
        return "real";
    case CFI_type_Logical:
        return "logical";
    case CFI_type_Complex:
        return "complex";
    case CFI_type_Character:
        return "character";
    default:
        return "derived or other";
    }
}

static uint64_t volume(int n, const uint64_t *c)
{
    uint64_t v = 1;
    int i;
    for (i = 0; i < n; i++)
        v *= c[i];
    return v;
}

/* Copy between a (non-contiguous) array and a contiguous buffer in Fortran element order. */
void xfer_f_strided_copy(const CFI_cdesc_t *a, char *buf, int to_buf)
{
    CFI_index_t idx[CFI_MAX_RANK] = {0};
    const int r = a->rank;
    const uint64_t n = r ? (uint64_t) a->dim[0].extent : 1;
    uint64_t total = 1, e;
    int k;
    for (k = 0; k < r; k++)
        total *= (uint64_t) a->dim[k].extent;
    for (e = 0; e < total; e += n) {
        char *p = (char *) a->base_addr;
        uint64_t i;
        for (k = 1; k < r; k++)
            p += idx[k] * a->dim[k].sm;
        for (i = 0; i < n; i++) {
            char *el = p + (r ? (CFI_index_t) i * a->dim[0].sm : 0);
            if (to_buf)
                memcpy(buf + (e + i) * a->elem_len, el, a->elem_len);
            else
                memcpy(el, buf + (e + i) * a->elem_len, a->elem_len);
        }
        for (k = 1; k < r; k++) {
            if (++idx[k] < a->dim[k].extent)
                break;
            idx[k] = 0;
        }
    }
}

/* The array's shape in C order (reversed), checked against the dataset's rank. */
static int c_shape(const CFI_cdesc_t *a, const xfer_cfg_dataset_t *d, uint64_t *count,
                   const char *what)
{
    int k;
    if (a->rank == 0) { /* a scalar: one element */
        for (k = 0; k < d->ndims; k++)
            count[k] = 1;
        return 1;
    }
    if (a->rank != d->ndims) {
        xfer_f_fail(
            XFER_ERR_INVALID_ARG,
            "dataset %s: %s has rank %d, the dataset %d dimensions (a Fortran array of shape "
            "(n1, ..., nr) is the dataset of dims [nr, ..., n1])",
            d->name, what, (int) a->rank, d->ndims);
        return 0;
    }
    for (k = 0; k < d->ndims; k++)
        count[k] = (uint64_t) a->dim[d->ndims - 1 - k].extent;
    return 1;
}

static void fmt_fortran(char *buf, size_t len, int n, const uint64_t *c_order)
{
    size_t o = 0;
    int k;
    o += (size_t) snprintf(buf, len, "(");
    for (k = n - 1; k >= 0 && o < len; k--)
        o += (size_t) snprintf(buf + o, len - o, "%llu%s", (unsigned long long) c_order[k],
                               k ? ", " : ")");
}

/* "(4, variable)": dataset @p d's shape as the workflow file gives it, in Fortran order. */
static void fmt_declared(char *buf, size_t len, const xfer_cfg_dataset_t *d)
{
    size_t o = (size_t) snprintf(buf, len, "(");
    int k;
    for (k = d->ndims - 1; k >= 0 && o < len; k--) {
        const char *end = k ? ", " : ")";
        if (k == 0 && d->joined)
            o += (size_t) snprintf(buf + o, len - o, "rows%s", end);
        else if (d->variable >> k & 1u)
            o += (size_t) snprintf(buf + o, len - o, "variable%s", end);
        else
            o +=
                (size_t) snprintf(buf + o, len - o, "%llu%s", (unsigned long long) d->dims[k], end);
    }
}

/* A joined dataset's block: whole rows, the rows the LAST Fortran dimension (the slowest C
 * one), any number of them. @p count is the array's C-order shape. */
static int joined_rows(const CFI_cdesc_t *a, const xfer_cfg_dataset_t *d, const uint64_t *count,
                       const char *what)
{
    int k, ok = a->rank == d->ndims;
    for (k = 1; ok && k < d->ndims; k++)
        ok = count[k] == d->dims[k];
    if (!ok) {
        char want[160], got[128];
        uint64_t w[XFER_MAX_DIMS];
        size_t o;
        memcpy(w, d->dims, sizeof(w));
        w[0] = 0;
        fmt_fortran(want, sizeof(want), d->ndims, w);
        o = strlen(want);
        if (o >= 2 && want[o - 2] == '0') /* the rows: "(3, rows)" */
            snprintf(want + o - 2, sizeof(want) - (o - 2), "rows)");
        if (a->rank == d->ndims)
            fmt_fortran(got, sizeof(got), d->ndims, count);
        else
            snprintf(got, sizeof(got), "of rank %d", (int) a->rank);
        xfer_f_fail(
            XFER_ERR_INVALID_ARG,
            "dataset %s is joined: %s is %s; it holds whole rows, an array of shape %s (Fortran "
            "order: the rows are the last dimension, any number of them)",
            d->name, what, got, want);
        return 0;
    }
    return 1;
}

/* A record's layout as the caller's derived type has it: the declared fields at the caller's
 * @p offsets (bytes, one per field), of the array's element size; into @p r, for libxfer's
 * check of a put (or compared here, for a get). */
static int record_of(const xfer_cfg_dataset_t *d, const CFI_cdesc_t *a, const int64_t *offsets,
                     int n, xfer_record_t *r, xfer_record_field_t *f)
{
    int i;
    if (d->type != XFER_TYPE_RECORD)
        return xfer_f_fail(XFER_ERR_INVALID_ARG, "dataset %s is %s, not a record: no offsets",
                           d->name, xfer_type_name(d->type));
    if (n != d->record->nfields)
        return xfer_f_fail(XFER_ERR_INVALID_ARG,
                           "dataset %s: offsets has %d entries, the record %d fields", d->name, n,
                           d->record->nfields);
    for (i = 0; i < n; i++) {
        if (offsets[i] < 0)
            return xfer_f_fail(XFER_ERR_INVALID_ARG, "dataset %s: offsets(%d) is negative", d->name,
                               i + 1);
        f[i] = d->record->fields[i];
        f[i].offset = (size_t) offsets[i];
    }
    r->nfields = n;
    r->fields = f;
    r->size = a->elem_len;
    r->align = d->record->align;
    return XFER_SUCCESS;
}

int xfer_f_put(void *x, void *ch, int index, const char *name, const CFI_cdesc_t *a,
               const int64_t *start, int nstart, const int64_t *offsets, int noffsets,
               const int64_t *dims, int ndims)
{
    const xfer_cfg_dataset_t *d;
    xfer_record_field_t fields[XFER_RECORD_MAX_FIELDS];
    xfer_record_t layout;
    xfer_dataset_desc_t desc;
    char *packed = NULL;
    const void *data;
    int sends, k, st;

    xfer_f_clear();
    if (!(d = dataset(x, index, name, &sends)))
        return XFER_ERR_NOT_FOUND;
    if (!sends)
        return xfer_f_fail(XFER_ERR_INVALID_ARG,
                           "dataset %s is received by this component, not sent", name);
    if (!type_ok(a, d))
        return xfer_f_fail(
            XFER_ERR_INVALID_ARG,
            "dataset %s: the array is %s of %zu bytes, the dataset %s; nothing was sent", name,
            xfer_f_type_word(a), a->elem_len, elem_word(d));
    memset(&desc, 0, sizeof(desc));
    desc.name = d->name;
    desc.type = d->type;
    desc.ndims = d->ndims;
    memcpy(desc.dims, d->dims, (size_t) d->ndims * sizeof(uint64_t));
    if (ndims && d->joined)
        return xfer_f_fail(
            XFER_ERR_INVALID_ARG,
            "dataset %s is joined: a put gives this rank's rows (the array's last "
            "dimension) and no dims (a step's rows are every sending rank's together); "
            "nothing was sent",
            name);
    if (ndims) { /* the step's global shape: libxfer checks the fixed extents, the commit the rest
                  */
        if (ndims != d->ndims)
            return xfer_f_fail(XFER_ERR_INVALID_ARG,
                               "dataset %s: dims has %d entries, the dataset %d dimensions", name,
                               ndims, d->ndims);
        for (k = 0; k < d->ndims; k++) {
            if (dims[k] < 0)
                return xfer_f_fail(XFER_ERR_INVALID_ARG, "dataset %s: dims(%d) is negative", name,
                                   k + 1);
            desc.dims[d->ndims - 1 - k] = (uint64_t) dims[k];
        }
    } else if (d->variable && nstart) {
        char want[160];
        fmt_declared(want, sizeof(want), d);
        return xfer_f_fail(
            XFER_ERR_INVALID_ARG,
            "dataset %s has a variable shape, %s: a block at a start is put with dims, "
            "the step's global shape (Fortran order, every sending rank giving the same); "
            "nothing was sent",
            name, want);
    }
    if (noffsets) { /* libxfer checks the layout against the workflow file */
        if ((st = record_of(d, a, offsets, noffsets, &layout, fields)) != XFER_SUCCESS)
            return st;
        desc.record = &layout;
    }
    if (!c_shape(a, d, desc.count, "the block"))
        return XFER_ERR_INVALID_ARG;
    if (d->variable && !ndims) /* (and no start) the block is the whole step */
        memcpy(desc.dims, desc.count, sizeof(desc.dims));
    if (d->joined) {
        if (nstart)
            return xfer_f_fail(
                XFER_ERR_INVALID_ARG,
                "dataset %s is joined: a put gives this rank's rows (the array's last "
                "dimension) and no start; nothing was sent",
                name);
        if (!joined_rows(a, d, desc.count, "the block"))
            return XFER_ERR_INVALID_ARG;
        desc.dims[0] = 0;
    } else if (nstart) {
        if (nstart != d->ndims)
            return xfer_f_fail(XFER_ERR_INVALID_ARG,
                               "dataset %s: start has %d entries, the dataset %d dimensions", name,
                               nstart, d->ndims);
        for (k = 0; k < d->ndims; k++) {
            if (start[k] < 0)
                return xfer_f_fail(XFER_ERR_INVALID_ARG, "dataset %s: start(%d) is negative", name,
                                   k + 1);
            desc.start[d->ndims - 1 - k] = (uint64_t) start[k];
        }
    } else {
        for (k = 0; k < d->ndims; k++)
            if (desc.count[k] != desc.dims[k]) {
                char got[128], want[128];
                fmt_fortran(got, sizeof(got), d->ndims, desc.count);
                fmt_fortran(want, sizeof(want), d->ndims, desc.dims);
                return xfer_f_fail(
                    XFER_ERR_INVALID_ARG,
                    "dataset %s: a block of shape %s is part of the %s %s: give start "
                    "(0-based, Fortran order); nothing was sent",
                    name, got, ndims ? "step's shape" : "dataset's", want);
            }
    }
    data = a->base_addr;
    if (!CFI_is_contiguous(a)) {
        packed = malloc((size_t) volume(d->ndims, desc.count) * a->elem_len + 1);
        if (!packed)
            return xfer_f_fail(XFER_ERR_NO_MEMORY, "dataset %s: out of memory for a copy", name);
        xfer_f_strided_copy(a, packed, 1);
        data = packed;
    }
    st = xfer_f_lib(xfer_put((xfer_channel_t *) ch, &desc, data));
    free(packed);
    return st;
}

/* A get's record layout, when the caller gives its offsets: the first field that differs. */
static int record_check(const xfer_cfg_dataset_t *d, const CFI_cdesc_t *a, const int64_t *offsets,
                        int n)
{
    xfer_record_field_t fields[XFER_RECORD_MAX_FIELDS];
    xfer_record_t got;
    int i, st;
    if ((st = record_of(d, a, offsets, n, &got, fields)) != XFER_SUCCESS)
        return st;
    for (i = 0; i < n; i++)
        if (fields[i].offset != d->record->fields[i].offset)
            return xfer_f_fail(
                XFER_ERR_MISMATCH,
                "dataset %s: field %s of the derived type is at offset %zu, the workflow "
                "file's record has it at %zu; nothing was received",
                d->name, fields[i].name, fields[i].offset, d->record->fields[i].offset);
    return XFER_SUCCESS;
}

int xfer_f_get(void *x, void *ch, int index, const char *name, CFI_cdesc_t *a, const int64_t *start,
               const int64_t *count, int nbox, const int64_t *offsets, int noffsets)
{
    const xfer_cfg_dataset_t *d;
    uint64_t s[XFER_MAX_DIMS], c[XFER_MAX_DIMS], shape[XFER_MAX_DIMS];
    xfer_dataset_desc_t out;
    char *buf = NULL;
    size_t bytes;
    int sends, k, st;

    xfer_f_clear();
    if (!(d = dataset(x, index, name, &sends)))
        return XFER_ERR_NOT_FOUND;
    if (sends)
        return xfer_f_fail(XFER_ERR_INVALID_ARG,
                           "dataset %s is sent by this component, not received", name);
    if (!type_ok(a, d))
        return xfer_f_fail(XFER_ERR_INVALID_ARG,
                           "dataset %s: the array is %s of %zu bytes, the dataset %s; nothing was "
                           "received",
                           name, xfer_f_type_word(a), a->elem_len, elem_word(d));
    if (noffsets && (st = record_check(d, a, offsets, noffsets)) != XFER_SUCCESS)
        return st;
    if (nbox) {
        if (nbox != d->ndims)
            return xfer_f_fail(
                XFER_ERR_INVALID_ARG,
                "dataset %s: start and count have %d entries, the dataset %d dimensions", name,
                nbox, d->ndims);
        for (k = 0; k < d->ndims; k++) {
            if (start[k] < 0 || count[k] < 0)
                return xfer_f_fail(XFER_ERR_INVALID_ARG, "dataset %s: a negative start or count",
                                   name);
            s[d->ndims - 1 - k] = (uint64_t) start[k];
            c[d->ndims - 1 - k] = (uint64_t) count[k];
        }
    } else if (d->joined || d->variable) { /* the step's selection: waits for the step */
        if ((st = xfer_f_lib(xfer_get_shape((xfer_channel_t *) ch, name, &out))) != XFER_SUCCESS)
            return st;
        memcpy(s, out.start, sizeof(s));
        memcpy(c, out.count, sizeof(c));
    } else if ((st = xfer_f_lib(xfer_selection_of((xfer_channel_t *) ch, name, s, c))) !=
               XFER_SUCCESS) {
        return st;
    }
    if (!c_shape(a, d, shape, "the array"))
        return XFER_ERR_INVALID_ARG;
    for (k = 0; k < d->ndims; k++)
        if (shape[k] != c[k]) {
            char got[128], want[128];
            fmt_fortran(got, sizeof(got), d->ndims, shape);
            fmt_fortran(want, sizeof(want), d->ndims, c);
            return xfer_f_fail(
                XFER_ERR_INVALID_ARG,
                "dataset %s: the array has shape %s, the %sselection %s (Fortran order); "
                "nothing was received",
                name, got, d->joined || d->variable ? "step's " : "", want);
        }
    bytes = (size_t) volume(d->ndims, c) * a->elem_len;
    if (!CFI_is_contiguous(a) && !(buf = malloc(bytes + 1)))
        return xfer_f_fail(XFER_ERR_NO_MEMORY, "dataset %s: out of memory for a copy", name);
    st = xfer_f_lib(xfer_get_selection((xfer_channel_t *) ch, name, nbox ? s : NULL,
                                       nbox ? c : NULL, buf ? buf : a->base_addr, bytes, &out));
    if (st == XFER_SUCCESS && buf)
        xfer_f_strided_copy(a, buf, 0);
    free(buf);
    return st;
}

int xfer_f_get_shape(void *x, void *ch, int index, const char *name, int64_t *dims, int64_t *start,
                     int64_t *count, int n, int *ndims, int64_t *step)
{
    const xfer_cfg_dataset_t *d;
    xfer_dataset_desc_t out;
    int sends, k, st;
    xfer_f_clear();
    if (!(d = dataset(x, index, name, &sends)))
        return XFER_ERR_NOT_FOUND;
    if (n < d->ndims)
        return xfer_f_fail(XFER_ERR_INVALID_ARG,
                           "xfer_get_shape %s: dims, start and count need %d entries", name,
                           d->ndims);
    if ((st = xfer_f_lib(xfer_get_shape((xfer_channel_t *) ch, name, &out))) != XFER_SUCCESS)
        return st;
    for (k = 0; k < d->ndims; k++) {
        dims[k] = (int64_t) out.dims[d->ndims - 1 - k];
        start[k] = (int64_t) out.start[d->ndims - 1 - k];
        count[k] = (int64_t) out.count[d->ndims - 1 - k];
    }
    *ndims = d->ndims;
    *step = (int64_t) out.step;
    return XFER_SUCCESS;
}

int xfer_f_get_rows(void *ch, const char *name, int64_t *rows, int n, int *nsenders)
{
    /* uint64_t and int64_t have one size: the rows land in place (no count comes near 2^63) */
    uint64_t none[1];
    xfer_f_clear();
    return xfer_f_lib(xfer_get_rows((xfer_channel_t *) ch, name, n > 0 ? (uint64_t *) rows : none,
                                    n > 0 ? n : 0, nsenders));
}

int xfer_f_record(void *x, int index, const char *name, int64_t *offsets, int n, int *nfields,
                  int64_t *size)
{
    const xfer_cfg_dataset_t *d;
    int sends, i;
    xfer_f_clear();
    if (!(d = dataset(x, index, name, &sends)))
        return XFER_ERR_NOT_FOUND;
    if (d->type != XFER_TYPE_RECORD)
        return xfer_f_fail(XFER_ERR_INVALID_ARG, "dataset %s is %s, not a record", name,
                           xfer_type_name(d->type));
    for (i = 0; i < d->record->nfields && i < n; i++)
        offsets[i] = (int64_t) d->record->fields[i].offset;
    *nfields = d->record->nfields;
    *size = (int64_t) d->record->size;
    return XFER_SUCCESS;
}

size_t xfer_f_offset(const void *record, const void *field)
{
    return (size_t) ((const char *) field - (const char *) record);
}

int xfer_f_select(void *ch, const char *name, const int64_t *start, const int64_t *count, int n)
{
    uint64_t s[XFER_MAX_DIMS], c[XFER_MAX_DIMS];
    int k;
    xfer_f_clear();
    if (n < 0 || n > XFER_MAX_DIMS)
        return xfer_f_fail(XFER_ERR_INVALID_ARG, "xfer_select: %d dimensions", n);
    for (k = 0; k < n; k++) {
        if (start[k] < 0 || count[k] < 0)
            return xfer_f_fail(XFER_ERR_INVALID_ARG, "xfer_select %s: a negative start or count",
                               name);
        s[n - 1 - k] = (uint64_t) start[k];
        c[n - 1 - k] = (uint64_t) count[k];
    }
    return xfer_f_lib(xfer_select((xfer_channel_t *) ch, name, n ? s : NULL, n ? c : NULL));
}

int xfer_f_selection(void *x, void *ch, int index, const char *name, int64_t *start, int64_t *count,
                     int n, int *ndims)
{
    const xfer_cfg_dataset_t *d;
    uint64_t s[XFER_MAX_DIMS], c[XFER_MAX_DIMS];
    int sends, k, st;
    xfer_f_clear();
    if (!(d = dataset(x, index, name, &sends)))
        return XFER_ERR_NOT_FOUND;
    if (n < d->ndims)
        return xfer_f_fail(XFER_ERR_INVALID_ARG,
                           "xfer_selection %s: start and count need %d entries", name, d->ndims);
    if ((st = xfer_f_lib(xfer_selection_of((xfer_channel_t *) ch, name, s, c))) != XFER_SUCCESS)
        return st;
    for (k = 0; k < d->ndims; k++) {
        start[k] = (int64_t) s[d->ndims - 1 - k];
        count[k] = (int64_t) c[d->ndims - 1 - k];
    }
    *ndims = d->ndims;
    return XFER_SUCCESS;
}
