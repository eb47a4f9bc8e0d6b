/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-synth's pattern (tools/xfer-synth.c), shared with the test components of the other
 * languages (tests/fortran; tests/python/synth.py computes the same in numpy). */
#ifndef XFER_SYNTH_PATTERN_H
#define XFER_SYNTH_PATTERN_H

#include <stdint.h>

#include <xfer/config.h>

/* The pattern: a hash of where an element is, written in the dataset's type. Both sides compute
 * it the same way, so a byte comparison is exact for floating-point types too. @p sub tells the
 * parts of one element apart (a record's fields and their elements; 0 for a scalar). */
static inline uint64_t xfer_synth_hash(uint64_t ch, uint64_t ds, uint64_t step, uint64_t g,
                                       uint64_t sub)
{
    uint64_t h = (ch + 1) * 0x9E3779B97F4A7C15ull ^ (ds + 1) * 0xC2B2AE3D27D4EB4Full ^
                 (step + 1) * 0x165667B19E3779F9ull ^ (g + 1) * 0x27D4EB2F165667C5ull ^
                 sub * 0x94D049BB133111EBull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return h;
}

/* @p h written as one value of scalar type @p t. */
static inline void xfer_synth_store(xfer_type_t t, uint64_t h, void *out)
{
    switch (t) {
    case XFER_TYPE_INT8:
    case XFER_TYPE_UINT8:
        *(uint8_t *) out = (uint8_t) h;
        break;
    case XFER_TYPE_INT16:
    case XFER_TYPE_UINT16:
        *(uint16_t *) out = (uint16_t) h;
        break;
    case XFER_TYPE_INT32:
    case XFER_TYPE_UINT32:
        *(uint32_t *) out = (uint32_t) h;
        break;
    case XFER_TYPE_INT64:
    case XFER_TYPE_UINT64:
        *(uint64_t *) out = h;
        break;
    case XFER_TYPE_FLOAT32:
        *(float *) out = (float) (h % 1000003) / 7.0f;
        break;
    case XFER_TYPE_FLOAT64:
        *(double *) out = (double) (h % 1000003) / 7.0;
        break;
    case XFER_TYPE_RECORD: /* a record is its fields: xfer_synth_record */
        break;
    }
}

static inline void xfer_synth_element(xfer_type_t t, uint64_t ch, uint64_t ds, uint64_t step,
                                      uint64_t g, void *out)
{
    xfer_synth_store(t, xfer_synth_hash(ch, ds, step, g, 0), out);
}

/* One record of layout @p r at @p out: element k of field f is the pattern of the field's type
 * keyed on the record's place @p g and on (f, k). Padding is not written: it is not data (the
 * file transport's HDF5 compounds do not keep it). */
static inline void xfer_synth_record(const xfer_record_t *r, uint64_t ch, uint64_t ds,
                                     uint64_t step, uint64_t g, void *out)
{
    int f;
    uint32_t k;
    for (f = 0; f < r->nfields; f++) {
        const xfer_record_field_t *fl = &r->fields[f];
        const size_t sz = xfer_type_size(fl->type);
        for (k = 0; k < fl->count; k++)
            xfer_synth_store(fl->type,
                             xfer_synth_hash(ch, ds, step, g, ((uint64_t) (f + 1) << 32) | k),
                             (char *) out + fl->offset + k * sz);
    }
}

#endif
