/* SPDX-License-Identifier: BSD-3-Clause */
/* `compression: auto` (codec_auto.h): trials, the link rate, the choice. */
#include "codec_auto.h"

#include <stdlib.h>
#include <string.h>

#include "../core/core.h"

#define EWMA 0.5 /* weight of the newest figure */

static const xfer_compression_t lossless[] = {XFER_COMPRESSION_LZ4, XFER_COMPRESSION_ZSTD};

void xfer_codec_auto_init(xfer_codec_auto_t *a)
{
    memset(a, 0, sizeof(*a));
    a->pick = XFER_COMPRESSION_NONE;
}

static double blend(double old, double now)
{
    return old > 0.0 ? (1.0 - EWMA) * old + EWMA * now : now;
}

double xfer_codec_auto_cost(const xfer_codec_auto_t *a, xfer_compression_t c)
{
    if (a->link <= 0.0)
        return c == XFER_COMPRESSION_NONE ? 0.0 : 1.0; /* nothing measured: raw */
    if (c == XFER_COMPRESSION_NONE)
        return 1.0 / a->link;
    if ((c != XFER_COMPRESSION_LZ4 && c != XFER_COMPRESSION_ZSTD) || a->cspeed[c] <= 0.0 ||
        a->dspeed[c] <= 0.0)
        return 1e300;
    return 1.0 / a->cspeed[c] + a->ratio[c] / a->link + 1.0 / a->dspeed[c];
}

/* Each lossless codec on up to 4 samples of the block spread over it: ratio and speeds. */
static xfer_status_t trial(xfer_codec_auto_t *a, const xfer_codec_block_t *b, const void *src)
{
    const size_t whole = b->bytes, one = XFER_ZAUTO_SAMPLE;
    const int ns = whole <= 4 * one ? 1 : 4;
    const size_t len = ns == 1 ? whole : one;
    char *frame = NULL, *back = NULL;
    xfer_status_t st = XFER_SUCCESS;
    /* the block's type, so that the trial shuffles as the frames will (records: bytes); a
     * sample is whole elements (the block, or 64 KiB at an 8-byte offset) */
    const xfer_type_t t = b->type == XFER_TYPE_RECORD ? XFER_TYPE_UINT8 : b->type;
    uint64_t count[1] = {len / xfer_type_size(t)};
    xfer_codec_block_t s = {t, 1, count, len, 0.0};
    size_t cap = 0;
    int i, k;

    for (i = 0; i < 2; i++)
        if (xfer_codec_built(lossless[i]))
            cap = XFER_MAX(cap, xfer_codec_bound(lossless[i], &s));
    if (!cap)
        return XFER_SUCCESS; /* no lossless codec built: raw */
    if (!(frame = xfer_malloc(cap)) || !(back = xfer_malloc(len ? len : 1))) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "compression auto: %zu bytes for a trial", cap + len);
        goto out;
    }
    for (i = 0; i < 2; i++) {
        const xfer_compression_t c = lossless[i];
        double tc = 0.0, td = 0.0, in = 0.0, outb = 0.0, t0;
        if (!xfer_codec_built(c))
            continue;
        for (k = 0; k < ns; k++) {
            /* samples at the start, a third, two thirds and the end, 8-byte aligned */
            const size_t at = ns == 1 ? 0 : ((whole - len) / 3 * (size_t) k) & ~(size_t) 7;
            xfer_compression_t used;
            size_t n;
            t0 = xfer_now();
            XFER_CHECK_GOTO(
                xfer_codec_encode(c, &s, (const char *) src + at, frame, cap, &n, &used), st, out);
            tc += xfer_now() - t0;
            t0 = xfer_now();
            XFER_CHECK_GOTO(xfer_codec_decode(&s, frame, n, back), st, out);
            td += xfer_now() - t0;
            in += (double) len;
            outb += (double) (n - XFER_CODEC_HDR);
        }
        a->ratio[c] = in > 0.0 ? outb / in : 1.0;
        a->cspeed[c] = in / (tc > 1e-9 ? tc : 1e-9);
        a->dspeed[c] = in / (td > 1e-9 ? td : 1e-9);
    }
    a->measured = 1;
out:
    xfer_free(frame);
    xfer_free(back);
    return st;
}

xfer_status_t xfer_codec_auto_choose(xfer_codec_auto_t *a, const xfer_codec_block_t *b,
                                     const void *src, xfer_compression_t *c)
{
    xfer_status_t st = XFER_SUCCESS;
    xfer_compression_t best = XFER_COMPRESSION_NONE;
    int i, fresh = 0;

    a->steps++;
    *c = XFER_COMPRESSION_NONE;
    if (b->bytes < XFER_ZAUTO_MIN_BYTES)
        return XFER_SUCCESS;
    if (!a->measured || a->drifted || a->steps - a->last_trial >= XFER_ZAUTO_TRIAL_EVERY) {
        if ((st = trial(a, b, src)) != XFER_SUCCESS)
            return st;
        a->last_trial = a->steps;
        a->drifted = 0;
        fresh = 1;
    }
    for (i = 0; i < 2; i++)
        if (xfer_codec_built(lossless[i]) &&
            xfer_codec_auto_cost(a, lossless[i]) < xfer_codec_auto_cost(a, best))
            best = lossless[i];
    /* a codec barely cheaper does not take over (no back and forth), but one dearer than raw
     * gives way to raw at once */
    if (best != a->pick &&
        (xfer_codec_auto_cost(a, best) < XFER_ZAUTO_MARGIN * xfer_codec_auto_cost(a, a->pick) ||
         (best == XFER_COMPRESSION_NONE &&
          xfer_codec_auto_cost(a, a->pick) > xfer_codec_auto_cost(a, best)))) {
        a->pick = best;
        fresh = 1;
    }
    /* the reference a drift is measured from: the ratio a trial found for the choice (not the
     * running one the steps blend in, which would follow a slow drift and never see it) */
    if (fresh && a->pick != XFER_COMPRESSION_NONE)
        a->trial_ratio = a->ratio[a->pick];
    *c = a->pick;
    return XFER_SUCCESS;
}

void xfer_codec_auto_seen(xfer_codec_auto_t *a, xfer_compression_t c, size_t raw, size_t wire,
                          double seconds)
{
    double r;
    if ((c != XFER_COMPRESSION_LZ4 && c != XFER_COMPRESSION_ZSTD) || raw < XFER_ZAUTO_MIN_BYTES)
        return;
    r = (double) (wire > XFER_CODEC_HDR ? wire - XFER_CODEC_HDR : 0) / (double) raw;
    a->ratio[c] = blend(a->ratio[c], r);
    if (seconds > 1e-9)
        a->cspeed[c] = blend(a->cspeed[c], (double) raw / seconds);
    if (a->trial_ratio > 0.0 &&
        (r > a->trial_ratio * XFER_ZAUTO_DRIFT || r * XFER_ZAUTO_DRIFT < a->trial_ratio))
        a->drifted = 1;
}

void xfer_codec_auto_link(xfer_codec_auto_t *a, double bytes, double seconds)
{
    if (bytes > 0.0 && seconds > 0.0 && !a->fixed_link)
        a->link = blend(a->link, bytes / seconds);
}

void xfer_codec_auto_init_env(xfer_codec_auto_t *a)
{
    const char *s = xfer_env_str("XFER_COMPRESSION_LINK");
    char *end;
    double v;
    xfer_codec_auto_init(a);
    if (!s || !*s)
        return;
    v = strtod(s, &end);
    if (*end || !(v > 0.0)) {
        xfer_log(XFER_LOG_WARN,
                 "XFER_COMPRESSION_LINK=%s: expected bytes per second (> 0); the "
                 "link is measured",
                 s);
        return;
    }
    a->link = v;
    a->fixed_link = 1;
}
