/* SPDX-License-Identifier: BSD-3-Clause */
/* The codecs of compressed datasets without MPI (libxfer/src/codec/codec.h). Checked, for every
 * type each codec takes, on seeded blocks of several shapes and kinds (smooth, mostly flat,
 * noise): lz4 and zstd give back every byte; zfp gives back every element within the tolerance;
 * a block a codec does not shrink, and a zfp block with a value that is not finite, travel raw
 * and come back exact; the codec a frame names is what was used; zfp refuses integers and
 * records, and a missing tolerance, with words that say so; a damaged or truncated frame, one
 * for another block size, and too little room are refused. Seeded (--seed N; a failure prints
 * it). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/unit.h"
#include "codec/codec_auto.h"
#include "codec/codec.h"

static unsigned long long rng;
static long checks;

static double uniform01(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double) (rng >> 11) / (double) (1ULL << 53);
}

enum { SMOOTH, FLAT, NOISE, NKINDS };
static const char *kind_name[] = {"smooth", "flat", "noise"};

/* Element i of a block of @p kind as a double (the caller converts it to the type). */
static double value(int kind, size_t i, size_t n)
{
    const double x = (double) i / (double) (n ? n : 1);
    switch (kind) {
    case SMOOTH:
        return 100.0 * sin(6.0 * x) + 20.0 * cos(31.0 * x);
    case FLAT:
        return x < 0.1 ? 1.0 + sin(60.0 * x) : 0.0; /* the example's V: 0 over most */
    default:
        return (uniform01() - 0.5) * 1e6;
    }
}

static void fill(xfer_type_t t, int kind, void *buf, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        const double v = value(kind, i, n);
        switch (t) {
        case XFER_TYPE_INT8:
            ((int8_t *) buf)[i] = (int8_t) ((long) v % 100);
            break;
        case XFER_TYPE_UINT8:
            ((uint8_t *) buf)[i] = (uint8_t) ((long) fabs(v) % 200);
            break;
        case XFER_TYPE_INT16:
            ((int16_t *) buf)[i] = (int16_t) ((long) v % 30000);
            break;
        case XFER_TYPE_UINT16:
            ((uint16_t *) buf)[i] = (uint16_t) ((long) fabs(v) % 60000);
            break;
        case XFER_TYPE_INT32:
            ((int32_t *) buf)[i] = (int32_t) v;
            break;
        case XFER_TYPE_UINT32:
            ((uint32_t *) buf)[i] = (uint32_t) fabs(v);
            break;
        case XFER_TYPE_INT64:
            ((int64_t *) buf)[i] = (int64_t) (v * 1e6);
            break;
        case XFER_TYPE_UINT64:
            ((uint64_t *) buf)[i] = (uint64_t) fabs(v * 1e6);
            break;
        case XFER_TYPE_FLOAT32:
            ((float *) buf)[i] = (float) v;
            break;
        case XFER_TYPE_FLOAT64:
            ((double *) buf)[i] = v;
            break;
        default:
            break;
        }
    }
}

static size_t tsize(xfer_type_t t)
{
    return t == XFER_TYPE_RECORD ? 24 : xfer_type_size(t);
}

static size_t elems(int nd, const uint64_t *count)
{
    size_t n = 1;
    int d;
    for (d = 0; d < nd; d++)
        n *= (size_t) count[d];
    return n;
}

/* Encode by @p c and decode; *@p used the codec the frame names, *@p ratio its bytes over raw. */
static int round_trip(xfer_compression_t c, const xfer_codec_block_t *b, const void *src, void *out,
                      xfer_compression_t *used, double *ratio)
{
    const size_t cap = xfer_codec_bound(c, b);
    char *frame = malloc(cap);
    size_t n = 0;
    xfer_compression_t peek;
    uint64_t raw = 0;
    int ok = 1;
    xfer_status_t st = xfer_codec_encode(c, b, src, frame, cap, &n, used);
    UCHECK(st == XFER_SUCCESS, "seed %llu: %s encode: %s", rng, xfer_codec_name(c),
           xfer_status_string(st));
    ok &= st == XFER_SUCCESS;
    if (ok) {
        UCHECK(n <= cap && n >= XFER_CODEC_HDR, "%s: a frame of %zu bytes, bound %zu",
               xfer_codec_name(c), n, cap);
        st = xfer_codec_peek(frame, n, &peek, &raw);
        UCHECK(st == XFER_SUCCESS && peek == *used && raw == b->bytes,
               "%s: the frame names %s and %llu bytes, encode said %s and %zu", xfer_codec_name(c),
               xfer_codec_name(peek), (unsigned long long) raw, xfer_codec_name(*used), b->bytes);
        st = xfer_codec_decode(b, frame, n, out);
        UCHECK(st == XFER_SUCCESS, "seed %llu: %s decode: %s", rng, xfer_codec_name(c),
               xfer_status_string(st));
        ok &= st == XFER_SUCCESS;
        *ratio = (double) n / (double) (b->bytes ? b->bytes : 1);
    }
    free(frame);
    checks++;
    return ok;
}

static void lossless(unsigned long long seed)
{
    static const uint64_t shapes[][3] = {{1, 1, 1}, {1, 1, 1000}, {3, 40, 50}, {1, 7, 1}};
    const xfer_compression_t codecs[] = {XFER_COMPRESSION_LZ4, XFER_COMPRESSION_ZSTD};
    int t, kind, s, c;
    for (t = XFER_TYPE_INT8; t <= XFER_TYPE_RECORD; t++)
        for (s = 0; s < 4; s++)
            for (kind = 0; kind < NKINDS; kind++)
                for (c = 0; c < 2; c++) {
                    const uint64_t *count = shapes[s];
                    const size_t n = elems(3, count), bytes = n * tsize((xfer_type_t) t);
                    char *src = malloc(bytes + 1), *out = malloc(bytes + 1);
                    xfer_codec_block_t b = {(xfer_type_t) t, 3, count, bytes, 0.0};
                    xfer_compression_t used;
                    double ratio = 0;
                    rng = seed + (unsigned long long) (t * 100 + s * 10 + kind);
                    if (t == XFER_TYPE_RECORD) { /* a record: a double, an int32, 12 bytes */
                        size_t i;
                        for (i = 0; i < bytes; i++)
                            src[i] = (char) (kind == NOISE  ? (int) (uniform01() * 256)
                                             : kind == FLAT ? (i < bytes / 10 ? (int) (i % 24) : 0)
                                                            : (int) (i % 24));
                    } else {
                        fill((xfer_type_t) t, kind, src, n);
                    }
                    if (!xfer_codec_built(codecs[c])) {
                        free(src);
                        free(out);
                        continue;
                    }
                    if (round_trip(codecs[c], &b, src, out, &used, &ratio))
                        UCHECK(memcmp(src, out, bytes) == 0,
                               "seed %llu: %s on %s %s [%llu,%llu,%llu]: bytes differ", seed,
                               xfer_codec_name(codecs[c]), xfer_type_name((xfer_type_t) t),
                               kind_name[kind], (unsigned long long) count[0],
                               (unsigned long long) count[1], (unsigned long long) count[2]);
                    /* flat blocks of some size shrink; noise of 8-byte types never does */
                    if (kind == FLAT && bytes >= 8000)
                        UCHECK(used == codecs[c] && ratio < 0.2,
                               "%s on a flat %s block of %zu bytes: %s, ratio %.3f",
                               xfer_codec_name(codecs[c]), xfer_type_name((xfer_type_t) t), bytes,
                               xfer_codec_name(used), ratio);
                    if (used == XFER_COMPRESSION_NONE)
                        UCHECK(fabs(ratio * (double) bytes - (double) (bytes + XFER_CODEC_HDR)) <
                                       0.5 ||
                                   bytes == 0,
                               "a raw frame of %.0f bytes for %zu", ratio * (double) bytes, bytes);
                    free(src);
                    free(out);
                }
}

/* lz4 and zstd shuffle 2-, 4- and 8-byte elements (the frame's sixth byte says by what): a
 * smooth float64 field with noise in its low mantissa bytes (the coupled example's U and V)
 * shrinks more than the same bytes as uint8; records and bytes are not shuffled; a frame that
 * names a shuffle it cannot have is refused. */
static void shuffled(unsigned long long seed)
{
    enum { N = 1 << 15 };
    const xfer_compression_t codecs[] = {XFER_COMPRESSION_LZ4, XFER_COMPRESSION_ZSTD};
    double *src = malloc(N * sizeof(double)), *out = malloc(N * sizeof(double));
    uint64_t count[1] = {N}, bytes_count[1] = {N * sizeof(double)};
    xfer_codec_block_t f64 = {XFER_TYPE_FLOAT64, 1, count, N * sizeof(double), 0.0};
    xfer_codec_block_t u8 = {XFER_TYPE_UINT8, 1, bytes_count, N * sizeof(double), 0.0};
    const size_t cap = xfer_codec_bound(XFER_COMPRESSION_LZ4, &f64) +
                       xfer_codec_bound(XFER_COMPRESSION_ZSTD, &f64);
    char *frame = malloc(cap);
    int c, i;
    rng = seed;
    for (i = 0; i < N; i++)
        src[i] = 0.5 + 0.25 * sin(i * 0.001) + 1e-9 * uniform01();
    for (c = 0; c < 2; c++) {
        xfer_compression_t used;
        double r64 = 0, r8 = 0;
        size_t n = 0;
        if (!xfer_codec_built(codecs[c]))
            continue;
        if (round_trip(codecs[c], &f64, src, out, &used, &r64))
            UCHECK(!memcmp(src, out, N * sizeof(double)), "%s shuffled: bytes differ",
                   xfer_codec_name(codecs[c]));
        round_trip(codecs[c], &u8, src, out, &used, &r8);
        UCHECK(r64 < 0.9 * r8, "%s: float64 shuffled %.3f, as bytes %.3f",
               xfer_codec_name(codecs[c]), r64, r8);
        UCHECK(xfer_codec_encode(codecs[c], &f64, src, frame, cap, &n, &used) == XFER_SUCCESS &&
                   used == codecs[c] && frame[5] == 8,
               "%s: a float64 frame shuffled by %d", xfer_codec_name(codecs[c]), frame[5]);
        frame[5] = 3; /* no element has 3 bytes */
        UCHECK(xfer_codec_decode(&f64, frame, n, out) == XFER_ERR_PROTOCOL &&
                   strstr(xfer_last_error(), "shuffled by 3"),
               "%s: a frame shuffled by 3: %s", xfer_codec_name(codecs[c]), xfer_last_error());
        UCHECK(xfer_codec_encode(codecs[c], &u8, src, frame, cap, &n, &used) == XFER_SUCCESS &&
                   frame[5] == 0,
               "%s: a uint8 frame shuffled by %d", xfer_codec_name(codecs[c]), frame[5]);
        checks += 3;
    }
    free(frame);
    free(src);
    free(out);
}

static void zfp_bounds(unsigned long long seed)
{
    static const uint64_t shapes[][5] = {{1000, 0, 0, 0, 0},
                                         {40, 50, 0, 0, 0},
                                         {10, 12, 14, 0, 0},
                                         {4, 5, 6, 7, 0},
                                         {3, 4, 5, 6, 7}};
    static const double tols[] = {1e-1, 1e-4, 1e-7};
    int t, s, k, kind;
    if (!xfer_codec_built(XFER_COMPRESSION_ZFP)) {
        printf("test_codec: this build has no zfp: its cases skipped\n");
        return;
    }
    for (t = XFER_TYPE_FLOAT32; t <= XFER_TYPE_FLOAT64; t++)
        for (s = 0; s < 5; s++)
            for (k = 0; k < 3; k++)
                for (kind = 0; kind < NKINDS; kind++) {
                    const int nd = s + 1;
                    const size_t n = elems(nd, shapes[s]), es = xfer_type_size((xfer_type_t) t);
                    char *src = malloc(n * es), *out = malloc(n * es);
                    xfer_codec_block_t b = {(xfer_type_t) t, nd, shapes[s], n * es, tols[k]};
                    xfer_compression_t used;
                    double ratio = 0, worst = 0;
                    size_t i;
                    rng = seed + (unsigned long long) (t * 100 + s * 10 + k);
                    fill((xfer_type_t) t, kind, src, n);
                    if (round_trip(XFER_COMPRESSION_ZFP, &b, src, out, &used, &ratio)) {
                        for (i = 0; i < n; i++) {
                            const double a =
                                t == XFER_TYPE_FLOAT32 ? ((float *) src)[i] : ((double *) src)[i];
                            const double r =
                                t == XFER_TYPE_FLOAT32 ? ((float *) out)[i] : ((double *) out)[i];
                            worst = fabs(a - r) > worst ? fabs(a - r) : worst;
                        }
                        UCHECK(worst <= tols[k],
                               "seed %llu: zfp %s %dD %s tolerance %g: an "
                               "element off by %g",
                               seed, xfer_type_name((xfer_type_t) t), nd, kind_name[kind], tols[k],
                               worst);
                        if (kind == FLAT && n >= 1000 && tols[k] >= 1e-4)
                            UCHECK(used == XFER_COMPRESSION_ZFP && ratio < 0.5,
                                   "zfp on a flat %s block %dD: %s, ratio %.3f",
                                   xfer_type_name((xfer_type_t) t), nd, xfer_codec_name(used),
                                   ratio);
                    }
                    free(src);
                    free(out);
                }
}

/* A value that is not finite: zfp cannot bound it, the block goes raw and comes back exact. */
static void zfp_not_finite(void)
{
    const uint64_t count[2] = {16, 16};
    double src[256], out[256];
    xfer_codec_block_t b = {XFER_TYPE_FLOAT64, 2, count, sizeof(src), 1e-3};
    xfer_compression_t used;
    double ratio;
    int i, which;
    if (!xfer_codec_built(XFER_COMPRESSION_ZFP))
        return;
    for (which = 0; which < 3; which++) {
        for (i = 0; i < 256; i++)
            src[i] = 0.0;
        src[77] = which == 0 ? NAN : which == 1 ? INFINITY : -INFINITY;
        if (round_trip(XFER_COMPRESSION_ZFP, &b, src, out, &used, &ratio))
            UCHECK(used == XFER_COMPRESSION_NONE && memcmp(src, out, sizeof(src)) == 0,
                   "zfp with a value that is not finite (%d): %s, not the raw block back", which,
                   xfer_codec_name(used));
    }
}

static void refusals(void)
{
    const uint64_t count[1] = {64};
    int32_t ints[64] = {0};
    char frame[4096], out[512];
    xfer_codec_block_t b = {XFER_TYPE_INT32, 1, count, sizeof(ints), 0.5};
    xfer_compression_t used, c;
    size_t n;
    uint64_t raw;
    const char *why;
    xfer_status_t st;
    int t;

    for (t = XFER_TYPE_INT8; t <= XFER_TYPE_RECORD; t++) {
        why = xfer_codec_refuses(XFER_COMPRESSION_ZFP, (xfer_type_t) t, 0.5);
        if (t == XFER_TYPE_FLOAT32 || t == XFER_TYPE_FLOAT64)
            UCHECK(!why || !xfer_codec_built(XFER_COMPRESSION_ZFP), "zfp refuses %s: %s",
                   xfer_type_name((xfer_type_t) t), why);
        else
            UCHECK(why && (strstr(why, "float32 and float64") || strstr(why, "no zfp")),
                   "zfp on %s: %s", xfer_type_name((xfer_type_t) t), why ? why : "(accepted)");
        checks++;
    }
    if (xfer_codec_built(XFER_COMPRESSION_ZFP)) {
        why = xfer_codec_refuses(XFER_COMPRESSION_ZFP, XFER_TYPE_FLOAT64, 0.0);
        UCHECK(why && strstr(why, "tolerance"), "zfp without tolerance: %s", why ? why : "ok");
        st = xfer_codec_encode(XFER_COMPRESSION_ZFP, &b, ints, frame, sizeof(frame), &n, &used);
        UCHECK(st == XFER_ERR_NOT_SUPPORTED, "zfp encodes int32: %s", xfer_status_string(st));
    }
    why = xfer_codec_refuses(XFER_COMPRESSION_LZ4, XFER_TYPE_FLOAT64, 0.5);
    UCHECK(why && strstr(why, "tolerance"), "lz4 with a tolerance: %s", why ? why : "ok");
    UCHECK(!xfer_codec_refuses(XFER_COMPRESSION_AUTO, XFER_TYPE_RECORD, 0.0) &&
               !xfer_codec_refuses(XFER_COMPRESSION_NONE, XFER_TYPE_INT8, 0.0),
           "auto or none refused");

    /* frames: too little room, damaged, truncated, for another block */
    b.tolerance = 0.0;
    for (t = 0; t < 64; t++)
        ints[t] = t % 3;
    st = xfer_codec_encode(XFER_COMPRESSION_NONE, &b, ints, frame, XFER_CODEC_HDR + 10, &n, &used);
    UCHECK(st == XFER_ERR_INVALID_ARG, "a frame in too little room: %s", xfer_status_string(st));
    st = xfer_codec_encode(xfer_codec_built(XFER_COMPRESSION_ZSTD) ? XFER_COMPRESSION_ZSTD
                                                                   : XFER_COMPRESSION_NONE,
                           &b, ints, frame, sizeof(frame), &n, &used);
    UCHECK(st == XFER_SUCCESS, "encode: %s", xfer_status_string(st));
    st = xfer_codec_decode(&b, frame, n - 1, out);
    UCHECK(st == XFER_ERR_PROTOCOL, "a truncated frame: %s", xfer_status_string(st));
    st = xfer_codec_peek(frame, 3, &c, &raw);
    UCHECK(st == XFER_ERR_PROTOCOL, "a frame of 3 bytes: %s", xfer_status_string(st));
    {
        xfer_codec_block_t other = b;
        other.bytes = sizeof(ints) - 4;
        st = xfer_codec_decode(&other, frame, n, out);
        UCHECK(st == XFER_ERR_PROTOCOL, "a frame for another block: %s", xfer_status_string(st));
    }
    frame[0] ^= 0x55;
    st = xfer_codec_decode(&b, frame, n, out);
    UCHECK(st == XFER_ERR_PROTOCOL, "a frame without its magic: %s", xfer_status_string(st));
    frame[0] ^= 0x55;
    if (used != XFER_COMPRESSION_NONE) { /* the codec's own bytes damaged */
        memset(frame + XFER_CODEC_HDR, 0xff, n - XFER_CODEC_HDR);
        st = xfer_codec_decode(&b, frame, n, out);
        UCHECK(st == XFER_ERR_PROTOCOL, "a damaged zstd frame: %s", xfer_status_string(st));
    }
    checks += 8;
}

/* A block larger than lz4's blocks and zstd's windows: many of each. */
static void large(void)
{
    const size_t n = (size_t) 3 << 20;
    const uint64_t count[1] = {n};
    float *src = malloc(n * 4), *out = malloc(n * 4);
    xfer_codec_block_t b = {XFER_TYPE_FLOAT32, 1, count, n * 4, 0.0};
    const xfer_compression_t codecs[] = {XFER_COMPRESSION_LZ4, XFER_COMPRESSION_ZSTD};
    xfer_compression_t used;
    double ratio;
    int c;
    rng = 99;
    fill(XFER_TYPE_FLOAT32, FLAT, src, n);
    for (c = 0; c < 2; c++)
        if (xfer_codec_built(codecs[c]) && round_trip(codecs[c], &b, src, out, &used, &ratio))
            UCHECK(memcmp(src, out, n * 4) == 0 && used == codecs[c],
                   "%s on 12 MiB: differs or not compressed (%s)", xfer_codec_name(codecs[c]),
                   xfer_codec_name(used));
    free(src);
    free(out);
}

/* auto: raw before a link is measured, and for small blocks; a codec on a slow link with data
 * that compresses; raw on a fast link, and for noise on any link; a drift of the ratio brings a
 * trial; a codec kept against one barely cheaper. */
static void auto_choice(void)
{
    const size_t n = 1 << 17; /* 1 MiB of float64 */
    const uint64_t count[1] = {n}, small_count[1] = {64};
    double *flat = malloc(n * 8), *noise = malloc(n * 8);
    xfer_codec_block_t b = {XFER_TYPE_FLOAT64, 1, count, n * 8, 0.0};
    xfer_codec_block_t small = {XFER_TYPE_FLOAT64, 1, small_count, 64 * 8, 0.0};
    xfer_codec_auto_t a;
    xfer_compression_t c;
    xfer_status_t st;
    int i;
    if (!xfer_codec_built(XFER_COMPRESSION_LZ4) && !xfer_codec_built(XFER_COMPRESSION_ZSTD))
        return;
    rng = 5;
    fill(XFER_TYPE_FLOAT64, FLAT, flat, n);
    for (i = 0; i < (int) n * 8; i++) /* random bytes: nothing to gain (zstd takes 10 % off noisy
                                          doubles' exponents, which may pay on a slow link) */
        ((unsigned char *) noise)[i] = (unsigned char) (uniform01() * 256);

    xfer_codec_auto_init(&a);
    st = xfer_codec_auto_choose(&a, &b, flat, &c);
    UCHECK(st == XFER_SUCCESS && c == XFER_COMPRESSION_NONE && a.measured,
           "first step, no link measured: %s (trial %d)", xfer_codec_name(c), a.measured);
    xfer_codec_auto_link(&a, 2e6, 1.0); /* 16 Mbit/s (valgrind slows the codecs 50-fold) */
    st = xfer_codec_auto_choose(&a, &b, flat, &c);
    UCHECK(st == XFER_SUCCESS && (c == XFER_COMPRESSION_LZ4 || c == XFER_COMPRESSION_ZSTD),
           "flat data at 16 Mbit/s: %s (ratio lz4 %.3f zstd %.3f, speeds %.3g %.3g)",
           xfer_codec_name(c), a.ratio[1], a.ratio[2], a.cspeed[1], a.cspeed[2]);
    UCHECK(xfer_codec_auto_cost(&a, c) < xfer_codec_auto_cost(&a, XFER_COMPRESSION_NONE),
           "the choice costs more than raw");
    st = xfer_codec_auto_choose(&a, &small, flat, &c);
    UCHECK(st == XFER_SUCCESS && c == XFER_COMPRESSION_NONE, "a small block: %s",
           xfer_codec_name(c));

    xfer_codec_auto_init(&a); /* noise: raw whatever the link */
    xfer_codec_auto_link(&a, 1e6, 1.0);
    for (i = 0; i < 3; i++)
        st = xfer_codec_auto_choose(&a, &b, noise, &c);
    UCHECK(st == XFER_SUCCESS && c == XFER_COMPRESSION_NONE, "noise at 1 MB/s: %s (ratio %.3f)",
           xfer_codec_name(c), a.ratio[XFER_COMPRESSION_LZ4]);

    xfer_codec_auto_init(&a); /* a link far faster than any codec: raw */
    xfer_codec_auto_link(&a, 1e13, 1.0);
    for (i = 0; i < 3; i++)
        st = xfer_codec_auto_choose(&a, &b, flat, &c);
    UCHECK(st == XFER_SUCCESS && c == XFER_COMPRESSION_NONE, "flat at 10 TB/s: %s",
           xfer_codec_name(c));

    /* the data turns to noise while a codec is chosen: the ratio drifts, a trial, raw */
    xfer_codec_auto_init(&a);
    xfer_codec_auto_link(&a, 2e6, 1.0);
    for (i = 0; i < 2; i++)
        xfer_codec_auto_choose(&a, &b, flat, &c);
    UCHECK(c != XFER_COMPRESSION_NONE, "flat, then: %s", xfer_codec_name(c));
    xfer_codec_auto_seen(&a, c, b.bytes, b.bytes + XFER_CODEC_HDR, 0.001);
    UCHECK(a.drifted, "a ratio of 1 after %.3f: no drift seen", a.trial_ratio);
    xfer_codec_auto_choose(&a, &b, noise, &c);
    UCHECK(c == XFER_COMPRESSION_NONE && !a.drifted, "noise after a drift: %s", xfer_codec_name(c));

    /* hysteresis: a codec barely cheaper than the choice does not take over */
    xfer_codec_auto_init(&a);
    a.measured = 1;
    a.last_trial = a.steps = 1;
    a.link = 1e6;
    a.pick = XFER_COMPRESSION_LZ4;
    a.ratio[1] = 0.5;
    a.ratio[2] = 0.48;
    a.cspeed[1] = a.cspeed[2] = a.dspeed[1] = a.dspeed[2] = 1e9;
    xfer_codec_auto_choose(&a, &b, flat, &c);
    UCHECK(c == XFER_COMPRESSION_LZ4, "lz4 kept against a zstd 4 %% cheaper: %s",
           xfer_codec_name(c));
    checks += 8;
    free(flat);
    free(noise);
}

int main(int argc, char **argv)
{
    unsigned long long seed = 1;
    int i, quick = 0; /* --quick: not the 12 MiB blocks (valgrind's run) */
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
    }
    printf("test_codec: seed %llu; built: lz4 %d, zstd %d, zfp %d\n", seed,
           xfer_codec_built(XFER_COMPRESSION_LZ4), xfer_codec_built(XFER_COMPRESSION_ZSTD),
           xfer_codec_built(XFER_COMPRESSION_ZFP));
    lossless(seed);
    shuffled(seed);
    zfp_bounds(seed);
    zfp_not_finite();
    refusals();
    auto_choice();
    if (!quick)
        large();
    return unit_finish("test_codec", checks);
}
