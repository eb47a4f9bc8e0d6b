/* SPDX-License-Identifier: BSD-3-Clause */
/* The C side of the Fortran module `xfer` (xfer_f.c): step attributes, the datasets the
 * workflow file declares, decompositions. */
#include <ISO_Fortran_binding.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

#include "xfer_f.h"

/* ---- attributes -------------------------------------------------------------------------- */

static xfer_type_t attr_type(const CFI_cdesc_t *a)
{
    const int cat = a->type & CFI_type_mask;
    if (cat == CFI_type_Real)
        return a->elem_len == 4 ? XFER_TYPE_FLOAT32 : a->elem_len == 8 ? XFER_TYPE_FLOAT64 : 0;
    if (cat == CFI_type_Integer)
        switch (a->elem_len) {
        case 1:
            return XFER_TYPE_INT8;
        case 2:
            return XFER_TYPE_INT16;
        case 4:
            return XFER_TYPE_INT32;
        case 8:
            return XFER_TYPE_INT64;
        }
    return (xfer_type_t) 0;
}

int xfer_f_put_attr(void *ch, const char *name, const CFI_cdesc_t *a, int is_unsigned)
{
    xfer_type_t t = attr_type(a);
    size_t n = a->rank ? (size_t) a->dim[0].extent : 1;
    char *packed = NULL;
    int st;
    xfer_f_clear();
    if (!t || a->rank > 1)
        return xfer_f_fail(
            XFER_ERR_INVALID_ARG,
            "attribute %s: expected an integer or real scalar or 1-D array, got %s of "
            "rank %d",
            name, xfer_f_type_word(a), (int) a->rank);
    if (is_unsigned && t != XFER_TYPE_FLOAT32 && t != XFER_TYPE_FLOAT64)
        t = (xfer_type_t) (t + 1); /* each unsigned type follows its signed one */
    if (!CFI_is_contiguous(a)) {
        if (!(packed = malloc(n * a->elem_len + 1)))
            return xfer_f_fail(XFER_ERR_NO_MEMORY, "attribute %s: out of memory", name);
        xfer_f_strided_copy(a, packed, 1);
    }
    st = xfer_f_lib(
        xfer_put_attr((xfer_channel_t *) ch, name, t, n, packed ? packed : a->base_addr));
    free(packed);
    return st;
}

int xfer_f_put_attr_string(void *ch, const char *name, const char *value)
{
    xfer_f_clear();
    return xfer_f_lib(xfer_put_attr_string((xfer_channel_t *) ch, name, value));
}

int xfer_f_get_attr(void *ch, const char *name, CFI_cdesc_t *a)
{
    const xfer_type_t want = attr_type(a);
    const size_t n = a->rank ? (size_t) a->dim[0].extent : 1;
    xfer_type_t t = 0;
    size_t count = 0;
    char *buf;
    int st;
    xfer_f_clear();
    if (!want || a->rank > 1)
        return xfer_f_fail(
            XFER_ERR_INVALID_ARG,
            "attribute %s: expected an integer or real scalar or 1-D array, got %s of "
            "rank %d",
            name, xfer_f_type_word(a), (int) a->rank);
    if ((st = xfer_f_lib(xfer_get_attr((xfer_channel_t *) ch, name, &t, &count, NULL, 0))) !=
        XFER_SUCCESS)
        return st;
    if (xfer_type_size(t) != a->elem_len ||
        (want == XFER_TYPE_FLOAT32) != (t == XFER_TYPE_FLOAT32) ||
        (want == XFER_TYPE_FLOAT64) != (t == XFER_TYPE_FLOAT64) || count != n)
        return xfer_f_fail(
            XFER_ERR_INVALID_ARG,
            "attribute %s is %zu value%s of %s; the argument holds %zu of %s %zu bytes", name,
            count, count == 1 ? "" : "s", xfer_type_name(t), n, xfer_f_type_word(a), a->elem_len);
    if (!(buf = malloc(n * a->elem_len + 1)))
        return xfer_f_fail(XFER_ERR_NO_MEMORY, "attribute %s: out of memory", name);
    st = xfer_f_lib(xfer_get_attr((xfer_channel_t *) ch, name, NULL, NULL, buf, n * a->elem_len));
    if (st == XFER_SUCCESS)
        xfer_f_strided_copy(a, buf, 0);
    free(buf);
    return st;
}

int xfer_f_get_attr_string(void *ch, const char *name, char *buf, size_t len)
{
    char *tmp = malloc(len + 1);
    int st;
    xfer_f_clear();
    if (!tmp)
        return xfer_f_fail(XFER_ERR_NO_MEMORY, "attribute %s: out of memory", name);
    st = xfer_f_lib(xfer_get_attr_string((xfer_channel_t *) ch, name, tmp, len + 1));
    if (st == XFER_SUCCESS)
        xfer_f_to_fstr(buf, len, tmp);
    free(tmp);
    return st;
}

/* ---- the channel's datasets, decompositions ------------------------------------------------ */

int xfer_f_ndatasets(void *x, int index, int *n)
{
    const xfer_config_t *cfg;
    int comp;
    xfer_f_clear();
    if (!x || xfer_config_of((const xfer_t *) x, &cfg, &comp) != XFER_SUCCESS || index < 0 ||
        index >= cfg->nchannels)
        return xfer_f_fail(XFER_ERR_STATE,
                           "the workflow is not initialised, or the channel not open");
    *n = cfg->channels[index].ndatasets;
    return XFER_SUCCESS;
}

int xfer_f_dataset(void *x, int index, int i, char *name, size_t namelen, int *type, int *ndims,
                   int64_t *dims, int *sent)
{
    const xfer_config_t *cfg;
    const xfer_cfg_dataset_t *d;
    int comp, k;
    xfer_f_clear();
    if (!x || xfer_config_of((const xfer_t *) x, &cfg, &comp) != XFER_SUCCESS || index < 0 ||
        index >= cfg->nchannels)
        return xfer_f_fail(XFER_ERR_STATE,
                           "the workflow is not initialised, or the channel not open");
    if (i < 1 || i > cfg->channels[index].ndatasets)
        return xfer_f_fail(XFER_ERR_INVALID_ARG, "xfer_dataset: index %d of %d datasets", i,
                           cfg->channels[index].ndatasets);
    d = &cfg->channels[index].datasets[i - 1];
    xfer_f_to_fstr(name, namelen, d->name);
    *type = (int) d->type;
    *ndims = d->ndims;
    for (k = 0; k < d->ndims; k++)
        dims[k] = (int64_t) d->dims[d->ndims - 1 - k];
    *sent = d->from == comp;
    return XFER_SUCCESS;
}

int xfer_f_decompose(int mode, int ndims, const int64_t *dims, int nranks, int rank, int64_t *start,
                     int64_t *count)
{
    uint64_t dc[XFER_MAX_DIMS], s[XFER_MAX_DIMS], c[XFER_MAX_DIMS];
    int k, st;
    xfer_f_clear();
    if (ndims < 1 || ndims > XFER_MAX_DIMS)
        return xfer_f_fail(XFER_ERR_INVALID_ARG, "xfer_decompose: %d dimensions", ndims);
    for (k = 0; k < ndims; k++) {
        if (dims[k] < 0)
            return xfer_f_fail(XFER_ERR_INVALID_ARG, "xfer_decompose: dims(%d) is negative", k + 1);
        dc[ndims - 1 - k] = (uint64_t) dims[k];
    }
    if ((st = xfer_f_lib(xfer_decompose((xfer_selection_mode_t) mode, ndims, dc, nranks, rank, s,
                                        c))) != XFER_SUCCESS)
        return st;
    for (k = 0; k < ndims; k++) {
        start[k] = (int64_t) s[ndims - 1 - k];
        count[k] = (int64_t) c[ndims - 1 - k];
    }
    return XFER_SUCCESS;
}
