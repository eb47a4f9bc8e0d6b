/* SPDX-License-Identifier: BSD-3-Clause */
/* What the build's codecs are and take (codec.h), apart from the codecs themselves: the workflow
 * file's checks need these without linking the compression libraries. */
#include <math.h>
#include <stddef.h>

#include "codec.h"

const char *xfer_codec_name(xfer_compression_t c)
{
    switch (c) {
    case XFER_COMPRESSION_NONE:
        return "none";
    case XFER_COMPRESSION_LZ4:
        return "lz4";
    case XFER_COMPRESSION_ZSTD:
        return "zstd";
    case XFER_COMPRESSION_ZFP:
        return "zfp";
    case XFER_COMPRESSION_AUTO:
        return "auto";
    }
    return "?";
}

int xfer_codec_built(xfer_compression_t c)
{
    switch (c) {
    case XFER_COMPRESSION_NONE:
    case XFER_COMPRESSION_AUTO:
        return 1;
#ifdef XFER_HAVE_LZ4
    case XFER_COMPRESSION_LZ4:
        return 1;
#endif
#ifdef XFER_HAVE_ZSTD
    case XFER_COMPRESSION_ZSTD:
        return 1;
#endif
#ifdef XFER_HAVE_ZFP
    case XFER_COMPRESSION_ZFP:
        return 1;
#endif
    default:
        return 0;
    }
}

const char *xfer_codec_refuses(xfer_compression_t c, xfer_type_t type, double tolerance)
{
    if (!xfer_codec_built(c))
        return c == XFER_COMPRESSION_LZ4 ? "this build has no lz4 (install liblz4-dev and rebuild)"
               : c == XFER_COMPRESSION_ZSTD
                   ? "this build has no zstd (install libzstd-dev and rebuild)"
                   : "this build has no zfp (install libzfp-dev and rebuild)";
    if (c == XFER_COMPRESSION_ZFP) {
        if (type != XFER_TYPE_FLOAT32 && type != XFER_TYPE_FLOAT64)
            return "zfp compresses float32 and float64 only (use lz4 or zstd for integers and "
                   "records: they are lossless)";
        if (!(tolerance > 0.0) || !isfinite(tolerance))
            return "zfp needs `tolerance`, the absolute error bound of every element (a finite "
                   "number > 0)";
    } else if (tolerance != 0.0) {
        return "`tolerance` is zfp's error bound: lz4, zstd and auto are lossless";
    }
    return NULL;
}
