/* SPDX-License-Identifier: BSD-3-Clause */
/* A block's frame (codec.h): the header, the raw frame, and each codec's encode and decode. */
#include "codec.h"

#include <math.h>
#include <string.h>

#include "../core/core.h"

#ifdef XFER_HAVE_LZ4
#include <lz4frame.h>
#endif
#ifdef XFER_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef XFER_HAVE_ZFP
#include <zfp.h>
#endif

#define CODEC_MAGIC 0x315a4658u /* "XFZ1" */
#define ZSTD_LEVEL  1

typedef struct frame_hdr {
    uint32_t magic;
    uint8_t codec;
    uint8_t shuffle; /* lz4, zstd: the element size the bytes were shuffled by (0: none) */
    uint8_t pad[2];
    uint64_t raw;     /* bytes decoded */
    uint64_t payload; /* bytes after the header */
    double tolerance; /* zfp: the error bound it was encoded with (its decoder needs it) */
} frame_hdr_t;

_Static_assert(sizeof(frame_hdr_t) == XFER_CODEC_HDR, "a frame's header is XFER_CODEC_HDR bytes");

/* ---- the byte shuffle ---------------------------------------------------------------------- */

/* The element size lz4 and zstd shuffle a block by: a numeric element's bytes (2, 4 or 8), else
 * 0 (bytes, records). Shuffled, byte k of every element comes before byte k + 1 of any: the
 * exponents and high bytes of a field, which change slowly, sit together (HDF5's shuffle filter
 * does the same; on the coupled example's fields zstd keeps 87 % of the bytes unshuffled). */
static size_t shuffle_of(const xfer_codec_block_t *b)
{
    const size_t es = b->type == XFER_TYPE_RECORD ? 0 : xfer_type_size(b->type);
    return (es == 2 || es == 4 || es == 8) && b->bytes % es == 0 ? es : 0;
}

/* @p src as a rows x cols byte matrix, transposed into @p dst. Shuffling n bytes of es-byte
 * elements is (n / es) x es -> es x (n / es); unshuffling the other way round. */
static void transpose(const unsigned char *src, unsigned char *dst, size_t rows, size_t cols)
{
    size_t r, c;
    for (c = 0; c < cols; c++)
        for (r = 0; r < rows; r++)
            dst[c * rows + r] = src[r * cols + c];
}

/* ---- zfp ------------------------------------------------------------------------------------ */

#ifdef XFER_HAVE_ZFP
/* The block as zfp's field: nx the fastest dimension; past the fourth, the slowest ones fold into
 * the fourth. */
static zfp_field *zfp_field_of(const xfer_codec_block_t *b, void *data)
{
    const zfp_type t = b->type == XFER_TYPE_FLOAT32 ? zfp_type_float : zfp_type_double;
    size_t n[4] = {1, 1, 1, 1};
    int d, k, used = 0;
    for (d = b->ndims - 1; d >= 0; d--) {
        k = used < 4 ? used : 3;
        n[k] *= (size_t) b->count[d];
        used++;
    }
    switch (used < 4 ? used : 4) {
    case 1:
        return zfp_field_1d(data, t, n[0]);
    case 2:
        return zfp_field_2d(data, t, n[0], n[1]);
    case 3:
        return zfp_field_3d(data, t, n[0], n[1], n[2]);
    default:
        return zfp_field_4d(data, t, n[0], n[1], n[2], n[3]);
    }
}

static int all_finite(const xfer_codec_block_t *b, const void *src)
{
    size_t i, n = b->bytes / (b->type == XFER_TYPE_FLOAT32 ? 4 : 8);
    if (b->type == XFER_TYPE_FLOAT32) {
        const float *x = src;
        for (i = 0; i < n; i++)
            if (!isfinite(x[i]))
                return 0;
    } else {
        const double *x = src;
        for (i = 0; i < n; i++)
            if (!isfinite(x[i]))
                return 0;
    }
    return 1;
}

/* zfp's stream over @p buf for @p field; NULL when out of memory. */
static zfp_stream *zfp_open(const xfer_codec_block_t *b, void *buf, size_t cap, bitstream **bs)
{
    zfp_stream *z = zfp_stream_open(NULL);
    if (!z)
        return NULL;
    zfp_stream_set_accuracy(z, b->tolerance);
    if (buf) {
        if (!(*bs = stream_open(buf, cap))) {
            zfp_stream_close(z);
            return NULL;
        }
        zfp_stream_set_bit_stream(z, *bs);
        zfp_stream_rewind(z);
    }
    return z;
}

static size_t zfp_bound(const xfer_codec_block_t *b)
{
    zfp_field *f = zfp_field_of(b, NULL);
    zfp_stream *z = f ? zfp_open(b, NULL, 0, NULL) : NULL;
    size_t n = z ? zfp_stream_maximum_size(z, f) : 0;
    if (z)
        zfp_stream_close(z);
    if (f)
        zfp_field_free(f);
    return n;
}

/* zfp over the block's field at @p data and the stream of @p cap bytes at @p buf: compress into
 * the stream (*@p out its bytes) or, with @p decode, decompress from it. */
static xfer_status_t zfp_code(const xfer_codec_block_t *b, void *data, void *buf, size_t cap,
                              int decode, size_t *out)
{
    bitstream *bs = NULL;
    zfp_field *f = zfp_field_of(b, data);
    zfp_stream *z = f ? zfp_open(b, buf, cap, &bs) : NULL;
    xfer_status_t st = XFER_SUCCESS;
    if (!f || !z) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "zfp: a stream of %zu bytes", cap);
        goto out;
    }
    if (!(*out = decode ? zfp_decompress(z, f) : zfp_compress(z, f)))
        st = decode
                 ? XFER_ERR(XFER_ERR_PROTOCOL, "zfp_decompress failed on a frame of %zu bytes", cap)
                 : XFER_ERR(XFER_ERR_INTERNAL, "zfp_compress failed on a block of %zu bytes",
                            b->bytes);
out:
    if (z)
        zfp_stream_close(z);
    if (bs)
        stream_close(bs);
    if (f)
        zfp_field_free(f);
    return st;
}

/* zfp's fixed accuracy holds as far as its block transform's precision reaches (30 bits of a
 * float32 block's largest exponent, 62 of a float64's): a tolerance finer than that, next to
 * values large enough, is missed. Decoded here and compared, every element: *@p ok says whether
 * the frame keeps the bound (if not, the block goes raw). */
static xfer_status_t zfp_verify(const xfer_codec_block_t *b, const void *src, const void *body,
                                size_t n, int *ok)
{
    void *back = xfer_malloc(b->bytes);
    size_t used;
    size_t i, k = b->bytes / (b->type == XFER_TYPE_FLOAT32 ? 4 : 8);
    xfer_status_t st;
    *ok = 0;
    if (!back)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "zfp: %zu bytes to check a frame", b->bytes);
    if ((st = zfp_code(b, back, (void *) body, n, 1, &used)) != XFER_SUCCESS)
        goto out;
    if (b->type == XFER_TYPE_FLOAT32) {
        const float *x = src, *y = back;
        for (i = 0; i < k && fabs((double) x[i] - (double) y[i]) <= b->tolerance; i++)
            ;
    } else {
        const double *x = src, *y = back;
        for (i = 0; i < k && fabs(x[i] - y[i]) <= b->tolerance; i++)
            ;
    }
    *ok = i == k;
out:
    xfer_free(back);
    return st;
}

#endif /* XFER_HAVE_ZFP */

/* ---- lz4 (its frame format: any size) ------------------------------------------------------- */

#ifdef XFER_HAVE_LZ4
static xfer_status_t lz4_decode(const void *src, size_t n, void *dst, size_t raw)
{
    LZ4F_dctx *dc = NULL;
    size_t in = 0, at = 0, hint = 1, r;
    xfer_status_t st = XFER_SUCCESS;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dc, LZ4F_VERSION)))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "lz4: a decompression context");
    while (hint != 0 && (in < n || at < raw)) {
        size_t sn = n - in, dn = raw - at;
        r = LZ4F_decompress(dc, (char *) dst + at, &dn, (const char *) src + in, &sn, NULL);
        if (LZ4F_isError(r)) {
            st = XFER_ERR(XFER_ERR_PROTOCOL, "lz4: %s", LZ4F_getErrorName(r));
            goto out;
        }
        if (sn == 0 && dn == 0)
            break; /* no progress: truncated */
        in += sn;
        at += dn;
        hint = r;
    }
    if (hint != 0 || at != raw)
        st = XFER_ERR(XFER_ERR_PROTOCOL, "lz4: the frame decoded to %zu of %zu bytes", at, raw);
out:
    LZ4F_freeDecompressionContext(dc);
    return st;
}
#endif

/* ---- the frame ------------------------------------------------------------------------------ */

#if defined(XFER_HAVE_LZ4) || defined(XFER_HAVE_ZSTD)
/* lz4's or zstd's body (@p n bytes) into @p dst (@p raw bytes), unshuffled by @p es when set. */
static xfer_status_t lossless_decode(xfer_compression_t c, size_t es, const char *body, size_t n,
                                     void *dst, size_t raw)
{
    unsigned char *tmp = NULL;
    void *to = dst;
    xfer_status_t st = XFER_SUCCESS;
    if (es && raw) {
        if (!(tmp = xfer_malloc(raw)))
            return XFER_ERR(XFER_ERR_NO_MEMORY, "%s: a shuffled copy of %zu bytes",
                            xfer_codec_name(c), raw);
        to = tmp;
    }
    switch (c) {
#ifdef XFER_HAVE_LZ4
    case XFER_COMPRESSION_LZ4:
        st = lz4_decode(body, n, to, raw);
        break;
#endif
#ifdef XFER_HAVE_ZSTD
    case XFER_COMPRESSION_ZSTD: {
        size_t r = ZSTD_decompress(to, raw, body, n);
        if (ZSTD_isError(r))
            st = XFER_ERR(XFER_ERR_PROTOCOL, "zstd: %s", ZSTD_getErrorName(r));
        else if (r != raw)
            st = XFER_ERR(XFER_ERR_PROTOCOL, "zstd: the frame decoded to %zu of %zu bytes", r, raw);
        break;
    }
#endif
    default:
        st = XFER_ERR(XFER_ERR_NOT_SUPPORTED, "a frame compressed by %s, which this build has not",
                      xfer_codec_name(c));
        break;
    }
    if (tmp && st == XFER_SUCCESS)
        transpose(tmp, dst, es, raw / es);
    xfer_free(tmp);
    return st;
}
#endif

size_t xfer_codec_bound(xfer_compression_t c, const xfer_codec_block_t *b)
{
    size_t n = b->bytes;
    switch (b->bytes ? c : XFER_COMPRESSION_NONE) {
#ifdef XFER_HAVE_LZ4
    case XFER_COMPRESSION_LZ4:
        n = XFER_MAX(n, LZ4F_compressFrameBound(b->bytes, NULL));
        break;
#endif
#ifdef XFER_HAVE_ZSTD
    case XFER_COMPRESSION_ZSTD:
        n = XFER_MAX(n, ZSTD_compressBound(b->bytes));
        break;
#endif
#ifdef XFER_HAVE_ZFP
    case XFER_COMPRESSION_ZFP:
        n = XFER_MAX(n, zfp_bound(b));
        break;
#endif
    default:
        break;
    }
    return XFER_CODEC_HDR + n;
}

static void put_hdr(void *dst, xfer_compression_t c, size_t es, uint64_t raw, uint64_t payload,
                    double tol)
{
    frame_hdr_t h;
    memset(&h, 0, sizeof(h));
    h.magic = CODEC_MAGIC;
    h.codec = (uint8_t) c;
    h.shuffle = (uint8_t) es;
    h.raw = raw;
    h.payload = payload;
    h.tolerance = tol;
    memcpy(dst, &h, sizeof(h));
}

xfer_status_t xfer_codec_encode(xfer_compression_t c, const xfer_codec_block_t *b, const void *src,
                                void *dst, size_t cap, size_t *out, xfer_compression_t *used)
{
    char *body = (char *) dst + XFER_CODEC_HDR;
    const size_t es = c == XFER_COMPRESSION_LZ4 || c == XFER_COMPRESSION_ZSTD ? shuffle_of(b) : 0;
    unsigned char *tmp = NULL;
    size_t n = 0, room;
    const char *why;
    xfer_status_t st = XFER_SUCCESS;

    *out = 0;
    *used = XFER_COMPRESSION_NONE;
    if (cap < xfer_codec_bound(c, b))
        return XFER_ERR(XFER_ERR_INVALID_ARG, "%s: %zu bytes of room, a frame may take %zu",
                        xfer_codec_name(c), cap, xfer_codec_bound(c, b));
    if (c != XFER_COMPRESSION_NONE && (why = xfer_codec_refuses(c, b->type, b->tolerance)))
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED, "%s", why);
    room = cap - XFER_CODEC_HDR;
    if (es && b->bytes && xfer_codec_built(c)) { /* the codec reads the shuffled copy */
        if (!(tmp = xfer_malloc(b->bytes)))
            return XFER_ERR(XFER_ERR_NO_MEMORY, "%s: a shuffled copy of %zu bytes",
                            xfer_codec_name(c), b->bytes);
        transpose(src, tmp, b->bytes / es, es);
    }
    switch (b->bytes ? c : XFER_COMPRESSION_NONE) {
#ifdef XFER_HAVE_LZ4
    case XFER_COMPRESSION_LZ4: {
        LZ4F_preferences_t pr;
        memset(&pr, 0, sizeof(pr));
        pr.frameInfo.blockSizeID = LZ4F_max1MB;
        n = LZ4F_compressFrame(body, room, tmp ? (const void *) tmp : src, b->bytes, &pr);
        if (LZ4F_isError(n))
            st = XFER_ERR(XFER_ERR_INTERNAL, "lz4: %s", LZ4F_getErrorName(n));
        break;
    }
#endif
#ifdef XFER_HAVE_ZSTD
    case XFER_COMPRESSION_ZSTD:
        n = ZSTD_compress(body, room, tmp ? (const void *) tmp : src, b->bytes, ZSTD_LEVEL);
        if (ZSTD_isError(n))
            st = XFER_ERR(XFER_ERR_INTERNAL, "zstd: %s", ZSTD_getErrorName(n));
        break;
#endif
#ifdef XFER_HAVE_ZFP
    case XFER_COMPRESSION_ZFP:
        if (!all_finite(b, src)) {
            n = SIZE_MAX; /* zfp bounds finite values only: the block goes raw */
            break;
        }
        if ((st = zfp_code(b, (void *) src, body, room, 0, &n)) != XFER_SUCCESS)
            return st;
        if (n < b->bytes) {
            int ok;
            if ((st = zfp_verify(b, src, body, n, &ok)) != XFER_SUCCESS)
                return st;
            if (!ok)
                n = SIZE_MAX; /* beyond zfp's precision here: the block goes raw */
        }
        break;
#endif
    default:
        n = SIZE_MAX;
        break;
    }
    xfer_free(tmp);
    if (st != XFER_SUCCESS)
        return st;
    if (n >= b->bytes) { /* not smaller: the raw block */
        if (b->bytes)
            memcpy(body, src, b->bytes);
        put_hdr(dst, XFER_COMPRESSION_NONE, 0, b->bytes, b->bytes, 0.0);
        *out = XFER_CODEC_HDR + b->bytes;
        return XFER_SUCCESS;
    }
    put_hdr(dst, c, es, b->bytes, n, c == XFER_COMPRESSION_ZFP ? b->tolerance : 0.0);
    *out = XFER_CODEC_HDR + n;
    *used = c;
    return XFER_SUCCESS;
}

static xfer_status_t read_hdr(const void *frame, size_t n, frame_hdr_t *out)
{
    frame_hdr_t h;
    if (n < XFER_CODEC_HDR)
        return XFER_ERR(XFER_ERR_PROTOCOL, "a compressed block of %zu bytes: no frame header", n);
    memcpy(&h, frame, sizeof(h));
    if (h.magic != CODEC_MAGIC)
        return XFER_ERR(XFER_ERR_PROTOCOL, "a compressed block without the frame's magic");
    if (h.payload != n - XFER_CODEC_HDR)
        return XFER_ERR(XFER_ERR_PROTOCOL, "a frame says %llu bytes follow its header, %zu do",
                        (unsigned long long) h.payload, n - XFER_CODEC_HDR);
    if (h.codec > XFER_COMPRESSION_ZFP)
        return XFER_ERR(XFER_ERR_PROTOCOL,
                        "a frame of codec %d, which is none of none, lz4, zstd "
                        "or zfp",
                        h.codec);
    if (h.codec == XFER_COMPRESSION_ZFP && !(h.tolerance > 0.0 && isfinite(h.tolerance)))
        return XFER_ERR(XFER_ERR_PROTOCOL, "a zfp frame without its tolerance");
    if (h.shuffle && ((h.shuffle != 2 && h.shuffle != 4 && h.shuffle != 8) ||
                      (h.codec != XFER_COMPRESSION_LZ4 && h.codec != XFER_COMPRESSION_ZSTD) ||
                      h.raw % h.shuffle))
        return XFER_ERR(XFER_ERR_PROTOCOL, "a %s frame of %llu bytes shuffled by %d",
                        xfer_codec_name((xfer_compression_t) h.codec), (unsigned long long) h.raw,
                        h.shuffle);
    *out = h;
    return XFER_SUCCESS;
}

xfer_status_t xfer_codec_peek(const void *frame, size_t n, xfer_compression_t *codec, uint64_t *raw)
{
    frame_hdr_t h;
    xfer_status_t st = read_hdr(frame, n, &h);
    if (st != XFER_SUCCESS)
        return st;
    *codec = (xfer_compression_t) h.codec;
    *raw = h.raw;
    return XFER_SUCCESS;
}

xfer_status_t xfer_codec_frame_bytes(const void *frame, size_t avail, size_t *len)
{
    frame_hdr_t h;
    if (avail < XFER_CODEC_HDR)
        return XFER_ERR(XFER_ERR_PROTOCOL, "%zu bytes left: no frame header", avail);
    memcpy(&h, frame, sizeof(h));
    if (h.magic != CODEC_MAGIC || h.payload > avail - XFER_CODEC_HDR)
        return XFER_ERR(XFER_ERR_PROTOCOL, "no frame here, or one past the %zu bytes left (%llu)",
                        avail, (unsigned long long) h.payload);
    *len = XFER_CODEC_HDR + (size_t) h.payload;
    return XFER_SUCCESS;
}

xfer_status_t xfer_codec_decode(const xfer_codec_block_t *b, const void *frame, size_t n, void *dst)
{
    const char *body = (const char *) frame + XFER_CODEC_HDR;
    xfer_compression_t c;
    uint64_t raw;
    frame_hdr_t h;
    xfer_status_t st;

    if ((st = read_hdr(frame, n, &h)) != XFER_SUCCESS)
        return st;
    c = (xfer_compression_t) h.codec;
    raw = h.raw;
    if (raw != b->bytes)
        return XFER_ERR(XFER_ERR_PROTOCOL, "a frame of %llu raw bytes for a block of %zu",
                        (unsigned long long) raw, b->bytes);
    n -= XFER_CODEC_HDR;
    switch (c) {
    case XFER_COMPRESSION_NONE:
        if (n != raw)
            return XFER_ERR(XFER_ERR_PROTOCOL, "a raw frame of %zu bytes for %llu", n,
                            (unsigned long long) raw);
        if (n)
            memcpy(dst, body, n);
        return XFER_SUCCESS;
#if defined(XFER_HAVE_LZ4) || defined(XFER_HAVE_ZSTD)
    case XFER_COMPRESSION_LZ4:
    case XFER_COMPRESSION_ZSTD:
        return lossless_decode(c, h.shuffle, body, n, dst, b->bytes);
#endif
#ifdef XFER_HAVE_ZFP
    case XFER_COMPRESSION_ZFP:
        if (b->type != XFER_TYPE_FLOAT32 && b->type != XFER_TYPE_FLOAT64)
            return XFER_ERR(XFER_ERR_PROTOCOL, "a zfp frame for a block of type %s",
                            xfer_type_name(b->type));
        {
            xfer_codec_block_t z = *b;
            size_t used;
            z.tolerance = h.tolerance;
            return zfp_code(&z, dst, (void *) body, n, 1, &used);
        }
#endif
    default:
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                        "a frame compressed by %s, which this build has "
                        "not",
                        xfer_codec_name(c));
    }
}
