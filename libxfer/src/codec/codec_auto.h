/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `compression: auto` of one dataset on one sending rank, without MPI (docs/runtime.md,
 * "Compression"): lz4, zstd or none, whichever makes the dataset's bytes cross soonest.
 *
 * A trial compresses and decompresses samples of the rank's block with lz4 and with zstd and
 * times them: each codec's ratio (frame bytes over raw) and its speeds on this data, on this
 * machine. The transport reports each step's measured link rate L (this rank's frames' bytes
 * over the time the step took to cross from it). Per raw byte, sending raw costs 1 / L;
 * sending by a codec costs 1 / (compression speed) + ratio / L + 1 / (decompression speed).
 * The cheapest wins; a codec takes over from another choice only when it is cheaper by
 * XFER_ZAUTO_MARGIN, and raw takes over from a codec as soon as the codec costs more.
 *
 * The first step goes raw (nothing is measured yet) after a trial. Then a trial runs every
 * XFER_ZAUTO_TRIAL_EVERY steps, and at once when the ratio the chosen codec reaches drifts past
 * XFER_ZAUTO_DRIFT of the trial's; steps that compress also refresh the chosen codec's ratio
 * and compression speed. Blocks under XFER_ZAUTO_MIN_BYTES go raw. Each rank decides alone: a
 * frame names its codec, so receivers need no agreement.
 */
#ifndef XFER_CODEC_AUTO_H
#define XFER_CODEC_AUTO_H

#include "codec.h"

#define XFER_ZAUTO_MARGIN      0.95       /* a new choice costs at most this much of the old */
#define XFER_ZAUTO_TRIAL_EVERY 16         /* steps between trials */
#define XFER_ZAUTO_DRIFT       1.25       /* ratio grown or shrunk by this factor: a trial */
#define XFER_ZAUTO_MIN_BYTES   4096       /* smaller blocks go raw */
#define XFER_ZAUTO_SAMPLE      (64 << 10) /* bytes of one sample of a trial (4 of them at most) */

typedef struct xfer_codec_auto {
    xfer_compression_t pick; /* what the next step uses: none, lz4 or zstd */
    int measured;            /* the codecs' figures come from a trial */
    double link;             /* bytes per second across (0: not measured yet) */
    /* by codec (index: xfer_compression_t; lz4 and zstd): frame bytes over raw, bytes per
     * second compressing and decompressing */
    double ratio[3], cspeed[3], dspeed[3];
    double trial_ratio; /* the chosen codec's ratio at the last trial */
    uint64_t steps;     /* steps decided */
    uint64_t last_trial;
    int drifted;    /* the ratio moved: a trial at the next step */
    int fixed_link; /* XFER_COMPRESSION_LINK gave the link: nothing measured replaces it */
} xfer_codec_auto_t;

void xfer_codec_auto_init(xfer_codec_auto_t *a);

/* The same, with the link taken from XFER_COMPRESSION_LINK (bytes per second) when it is set:
 * the rate the choice assumes instead of the one it measures (a known link, or tests). */
void xfer_codec_auto_init_env(xfer_codec_auto_t *a);

/* The codec of this step's block @p b (contents @p src): a trial first when one is due. */
xfer_status_t xfer_codec_auto_choose(xfer_codec_auto_t *a, const xfer_codec_block_t *b,
                                     const void *src, xfer_compression_t *c);

/* The step's block went by @p c: @p raw bytes made @p wire frame bytes in @p seconds. */
void xfer_codec_auto_seen(xfer_codec_auto_t *a, xfer_compression_t c, size_t raw, size_t wire,
                          double seconds);

/* The transport measured the link: @p bytes crossed in @p seconds. */
void xfer_codec_auto_link(xfer_codec_auto_t *a, double bytes, double seconds);

/* The cost per raw byte (seconds) of @p c by the current figures (none: 1 / link). */
double xfer_codec_auto_cost(const xfer_codec_auto_t *a, xfer_compression_t c);

#endif /* XFER_CODEC_AUTO_H */
