/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compression of one block of a dataset (docs/runtime.md, "Compression"), without MPI.
 *
 * A compressed block travels as a frame: a header of XFER_CODEC_HDR bytes (magic, the codec, the
 * raw bytes, the frame's payload bytes, zfp's tolerance) and the codec's bytes. The frame names
 * its codec, so a receiver needs no agreement with the sender on what was used: a frame of codec
 * none holds the raw bytes (auto chose not to compress, compressing did not shrink the block, or
 * zfp met a value that is not finite and cannot bound its error).
 *
 * lz4 (its frame format, any size) and zstd (level 1) are lossless and take any type, records
 * too. zfp runs in fixed-accuracy mode: every element decoded is within the tolerance of the
 * one encoded; it takes float32 and float64 only, the block's shape as zfp's field (the fastest
 * dimension first, dimensions past the fourth folded into it).
 *
 * Which codecs a build has depends on the libraries CMake found (liblz4, libzstd, libzfp):
 * xfer_codec_built. A codec the build lacks is refused where the workflow file is checked.
 */
#ifndef XFER_CODEC_H
#define XFER_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include <xfer/config.h>
#include <xfer/status.h>

#define XFER_CODEC_HDR 32 /* bytes of a frame's header */

/* One block: its type and shape, and the raw bytes it holds. */
typedef struct xfer_codec_block {
    xfer_type_t type;      /* element type (records: XFER_TYPE_RECORD) */
    int ndims;             /* 1 .. XFER_MAX_DIMS */
    const uint64_t *count; /* its shape, slowest dimension first */
    size_t bytes;          /* raw bytes: the elements of count times their size */
    double tolerance;      /* zfp: the absolute error bound (> 0) to encode with (a frame carries
                              its own to decode with) */
} xfer_codec_block_t;

/* "none", "lz4", "zstd", "zfp", "auto". */
const char *xfer_codec_name(xfer_compression_t c);

/* Does this build compress with @p c (none and auto: always)? */
int xfer_codec_built(xfer_compression_t c);

/* Why @p c cannot compress a dataset of @p type (and @p tolerance), in words for the workflow
 * file's error, or NULL when it can. */
const char *xfer_codec_refuses(xfer_compression_t c, xfer_type_t type, double tolerance);

/* The most bytes a frame of @p b compressed by @p c can take (header included). */
size_t xfer_codec_bound(xfer_compression_t c, const xfer_codec_block_t *b);

/* Compress @p src (b->bytes) by @p c into the frame at @p dst (@p cap bytes, at least
 * xfer_codec_bound); *@p out its bytes. A block the codec does not shrink, or (zfp) one holding
 * a value that is not finite, goes as a raw frame; *@p used says which codec the frame names. */
xfer_status_t xfer_codec_encode(xfer_compression_t c, const xfer_codec_block_t *b, const void *src,
                                void *dst, size_t cap, size_t *out, xfer_compression_t *used);

/* A frame's codec and the raw bytes it holds, checked against its length @p n. */
xfer_status_t xfer_codec_peek(const void *frame, size_t n, xfer_compression_t *codec,
                              uint64_t *raw);

/* The bytes of the frame that starts at @p frame, of at most @p avail: frames follow each other
 * (a sender's blocks, each padded to 8 bytes), the header says where one ends. */
xfer_status_t xfer_codec_frame_bytes(const void *frame, size_t avail, size_t *len);

/* Decompress the frame at @p frame (@p n bytes) of block @p b into @p dst (b->bytes): a frame that
 * is not one, or whose raw bytes are not b->bytes, is refused (XFER_ERR_PROTOCOL). */
xfer_status_t xfer_codec_decode(const xfer_codec_block_t *b, const void *frame, size_t n,
                                void *dst);

#endif /* XFER_CODEC_H */
