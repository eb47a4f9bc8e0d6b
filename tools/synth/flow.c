/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-synth: flow policies (docs/runtime.md, "Flow policies"). A channel's sender may send only
 * every stride-th step and, under `policy: latest`, drop steps its readers had no room for, so a
 * reader's steps are not its own: each step read carries the sender's number (xfer_channel_step
 * once it arrived, a get's desc.step), and that number, not the reader's count, keys the pattern,
 * the shapes drawn from the seed and the attributes. Here: each channel's policy and stride as
 * the library decides them (xfer_config_channel_flow: the file, then XFER_POLICY and
 * XFER_STRIDE; the library refused a bad value at xfer_init, so none is met here), the order each
 * policy promises (block with a stride: 0, N, 2N, ... every one; latest: strictly increasing
 * multiples of the stride), and the counters of xfer_channel_stats in each rank's result line,
 * which tools/xfer-chaos and the tests hold against the peer's (what a sender sent and held, its
 * readers received; docs/testing.md).
 *
 * When a reader reads: a reader whose sender never waits for it through the workflow's other
 * channels reads every step of its own, as soon as a newer step came (a slow analysis beside a
 * simulation); one in a cycle of channels reads only in its steps 0, N, 2N, ..., the steps its
 * sender sends, since a sender that waits for its reader's next step through another channel
 * would never reach its next step sent while the reader waits for it. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#define XFER_XALLOC_PROG "xfer-synth"
#define XFER_XALLOC_EXIT 1
#include "common/xalloc.h"

/* Channel k's policy and stride in force, as the library applies them. */
static void flow_of(int k, int *latest, uint64_t *stride)
{
    xfer_channel_flow_t f;
    if (xfer_config_channel_flow(cfg, k, &f) != XFER_SUCCESS) {
        fprintf(stderr, "xfer-synth: %s\n", xfer_last_error());
        exit(2);
    }
    *latest = f.policy == XFER_POLICY_LATEST;
    *stride = (uint64_t) f.stride;
}

/* May component @p from wait for component @p to through channels other than @p skip? A
 * receiver waits for its sender, a sender for its receivers unless it never does (latest), a
 * full-duplex side for the other. */
static int may_wait(int from, int to, int skip, unsigned char *seen)
{
    int k;
    if (from == to)
        return 1;
    if (seen[from])
        return 0;
    seen[from] = 1;
    for (k = 0; k < cfg->nchannels; k++) {
        const xfer_cfg_channel_t *c = &cfg->channels[k];
        int latest;
        uint64_t stride;
        if (k == skip)
            continue;
        flow_of(k, &latest, &stride);
        if (c->to == from && may_wait(c->from, to, skip, seen))
            return 1;
        if (c->from == from && (c->duplex == XFER_DUPLEX_FULL || !latest) &&
            may_wait(c->to, to, skip, seen))
            return 1;
    }
    return 0;
}

void synth_flow_open(void)
{
    unsigned char *seen = xchecked(calloc((size_t) cfg->ncomponents + 1, 1));
    int i;
    for (i = 0; i < cfg->nchannels; i++) {
        chan_t *c = &chs[i];
        c->first_q = c->last_q = -1;
        if (!c->h)
            continue;
        flow_of(i, &c->latest, &c->stride);
        memset(seen, 0, (size_t) cfg->ncomponents);
        c->eager = !may_wait(cfg->channels[i].from, comp, i, seen);
    }
    free(seen);
}

int synth_flow_on(int i)
{
    return chs[i].role == XFER_ROLE_RECV && (chs[i].latest || chs[i].stride > 1);
}

int synth_flow_reads(int i, uint64_t s)
{
    return !synth_flow_on(i) || chs[i].eager || s % chs[i].stride == 0;
}

void synth_flow_adopt(int i, uint64_t q)
{
    chan_t *c = &chs[i];
    const char *cn = cfg->channels[i].name;
    if (!c->latest) { /* every stride-th step, each one */
        const uint64_t want = c->last_q < 0 ? 0 : (uint64_t) c->last_q + c->stride;
        if (q != want) {
            c->end = END_WRONG;
            FAIL("channel %s: received the sender's step %" PRIu64 ", expected %" PRIu64
                 " (stride %" PRIu64 ": every stride-th step from 0, each once)",
                 cn, q, want, c->stride);
        }
    } else if ((c->last_q >= 0 && q <= (uint64_t) c->last_q) || q % c->stride != 0) {
        c->end = END_WRONG;
        FAIL("channel %s: received the sender's step %" PRIu64 " after its step %" PRId64
             " (policy latest, stride %" PRIu64 ": strictly increasing multiples of the stride)",
             cn, q, c->last_q, c->stride);
    }
    c->q = q;
    c->has_q = 1;
    if (c->first_q < 0)
        c->first_q = (int64_t) q;
    c->last_q = (int64_t) q;
}

/* Does reading channel i begin each step with xfer_step_begin and take its number from
 * xfer_channel_step? Where a dataset's shape is drawn for the step, or its attributes are
 * checked, the number is needed before any get; else drawn per channel (the first get's
 * desc.step says it). */
static int begins(int i)
{
    int j;
    if (o.begin_ms >= -1 || o.attrs)
        return 1;
    for (j = 0; j < cfg->channels[i].ndatasets; j++)
        if (cfg->channels[i].datasets[j].from != comp &&
            (cfg->channels[i].datasets[j].joined || cfg->channels[i].datasets[j].variable))
            return 1;
    return o.seeded && synth_draw(R_FLOW, (uint64_t) comp, (uint64_t) i, 0, 0) % 2 == 0;
}

int synth_flow_learn(int i, uint64_t s)
{
    chan_t *c = &chs[i];
    xfer_step_status_t ss = XFER_STEP_NOT_READY;
    uint64_t q = 0;
    int ok = 1;
    c->has_q = 0;
    if (!synth_flow_on(i)) { /* the sender's step is this one (a get checks desc.step) */
        c->q = s;
        c->has_q = 1;
        if (c->first_q < 0)
            c->first_q = (int64_t) s;
        c->last_q = (int64_t) s;
        return 1;
    }
    if (!begins(i))
        return 1; /* the first get adopts its desc.step */
    while (ok && ss == XFER_STEP_NOT_READY)
        CHCALL(ok, i, s, xfer_step_begin(c->h, o.begin_ms >= -1 ? o.begin_ms : -1, &ss));
    if (!ok)
        return 0;
    if (ss == XFER_STEP_END_OF_STREAM) {
        c->end = END_EOS;
        c->eos_where = "xfer_step_begin";
        c->saw_end = 1;
        return 0;
    }
    CHCALL(ok, i, s, xfer_channel_step(c->h, &q));
    if (ok)
        synth_flow_adopt(i, q);
    return ok;
}

void synth_flow_result(int i, char *line, size_t len)
{
    const chan_t *c = &chs[i];
    xfer_channel_stats_t cs;
    size_t n = 0;
    line[0] = '\0';
    if (cfg->channels[i].duplex != XFER_DUPLEX_HALF ||
        xfer_channel_stats(c->h, &cs) != XFER_SUCCESS)
        return;
    if (c->role == XFER_ROLE_SEND)
        n = (size_t) snprintf(
            line, len, " sent=%" PRIu64 " dropped=%" PRIu64 " held=%" PRIu64 " unsent=%" PRIu64,
            cs.steps_sent, cs.steps_dropped, cs.steps_held, cs.steps_unsent);
    else
        n = (size_t) snprintf(line, len,
                              " received=%" PRIu64 " first=%" PRId64 " last=%" PRId64 " ended=%d",
                              cs.steps_received, c->first_q, c->last_q, c->saw_end);
    if (n < len)
        snprintf(line + n, len - n, " policy=%s stride=%" PRIu64, c->latest ? "latest" : "block",
                 c->stride);
}

void synth_flow_check_counts(void)
{
    int i;
    for (i = 0; i < cfg->nchannels; i++) {
        const chan_t *c = &chs[i];
        const char *cn = cfg->channels[i].name;
        const char *tr = getenv("XFER_TRANSPORT");
        xfer_channel_stats_t cs;
        if (!c->h)
            continue;
        XCHECK(xfer_channel_stats(c->h, &cs));
        /* --expect-frames: a dataset compressed by lz4, zstd or zfp whose elements came on the
         * stream came as frames, whose headers make the bytes on the wire differ from the
         * payload's (unless a codec saved exactly the headers' bytes: datasets of some size) */
        if (o.expect_frames && c->zgot && cs.wire_bytes_received == cs.bytes_received &&
            (tr ? strcmp(tr, "stream") == 0 : cfg->channels[i].transport == XFER_TRANSPORT_STREAM))
            FAIL("channel %s: %" PRIu64 " bytes received, as many on the wire: its compressed "
                 "datasets came uncompressed",
                 cn, cs.bytes_received);
        if (cfg->channels[i].duplex != XFER_DUPLEX_HALF)
            continue;
        if (c->role == XFER_ROLE_SEND && c->end == END_OK && cs.steps_unsent == 0) {
            /* each step ended is sent, dropped, held or skipped by the stride */
            const uint64_t due = (cs.steps + c->stride - 1) / c->stride;
            if (cs.steps_sent + cs.steps_dropped + cs.steps_held != due ||
                (!c->latest && (cs.steps_dropped || cs.steps_held)) || cs.steps_held > 1)
                FAIL("channel %s: %" PRIu64 " steps ended, %" PRIu64 " sent, %" PRIu64
                     " dropped, %" PRIu64 " held: expected %" PRIu64
                     " sent, dropped or held (policy %s, stride %" PRIu64 ")",
                     cn, cs.steps, cs.steps_sent, cs.steps_dropped, cs.steps_held, due,
                     c->latest ? "latest" : "block", c->stride);
        }
        if (c->role == XFER_ROLE_RECV && c->saw_end && cs.steps_received != c->got)
            FAIL("channel %s: %" PRIu64 " steps received (xfer_channel_stats), %" PRIu64
                 " read to the end of the stream",
                 cn, cs.steps_received, c->got);
    }
}
