/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run --check: what each receiving rank will hold per step, against this host's memory
 * (run_memory.h). */
#define _POSIX_C_SOURCE 200809L
#include "memory.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/size.h"

static uint64_t mem_total(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t) kb * 1024;
}

/* A joined dataset's rows change every step: only max_rows bounds them. A variable shape is
 * whatever the senders put: nothing in the file bounds it. */
static void shape_notes(const xfer_config_t *cfg, FILE *out)
{
    int c, i;
    for (c = 0; c < cfg->nchannels; c++)
        for (i = 0; i < cfg->channels[c].ndatasets; i++) {
            const xfer_cfg_dataset_t *d = &cfg->channels[c].datasets[i];
            if (d->joined && !d->max_rows)
                fprintf(out,
                        "%s:%d:%d: note: channel %s: dataset %s is joined: a step's rows are "
                        "unbounded without max_rows, so they are not counted below\n",
                        cfg->path, d->line, d->col, cfg->channels[c].name, d->name);
            else if (d->variable)
                fprintf(out,
                        "%s:%d:%d: note: channel %s: dataset %s has a variable shape: its "
                        "extents are the senders' each step, so it is not counted below\n",
                        cfg->path, d->line, d->col, cfg->channels[c].name, d->name);
        }
}

/* What channel @p c's sender keeps for readers that attach later (docs/runtime.md): history: K
 * copies of each rank's blocks of its last K steps, in memory; spill: the steps committed while
 * no reader is attached, in step files, bounded by spill.max_steps and spill.max_bytes (on the
 * stream also the steps the reader has not released, in memory). @p step: a step's bytes. */
static void kept_steps(const xfer_config_t *cfg, int c, uint64_t step, uint64_t mem, FILE *out,
                       FILE *err, int *warnings)
{
    const xfer_cfg_channel_t *ch = &cfg->channels[c];
    const char *from = cfg->components[ch->from].name, *to = cfg->components[ch->to].name;
    const int p = cfg->components[ch->from].nprocs;
    char a[32], b[32], m[32];

    if (ch->history > 0) {
        const double each = (double) ch->history * (double) step / p;
        xsize_human(a, sizeof(a), each);
        fprintf(out,
                "%s: channel %s, %s: history %d: each rank of %s also holds %d copies of its own "
                "blocks of a step, the last %d steps for readers that attach later (%s on each "
                "of its %d ranks when the step is split evenly)\n",
                cfg->path, ch->name, from, ch->history, from, ch->history, ch->history, a, p);
        if (mem && each > (double) mem) {
            xsize_human(m, sizeof(m), (double) mem);
            fprintf(err,
                    "%s: warning: channel %s: history %d holds %s on a rank of %s, more than this "
                    "host's %s: lower history, or run %s on more ranks\n",
                    cfg->path, ch->name, ch->history, a, from, m, from);
            (*warnings)++;
        }
    }
    if (ch->on_reader_loss == XFER_LOSS_SPILL) {
        const double all = (double) ch->spill.max_steps * (double) step;
        const int by_bytes = ch->spill.max_bytes && (double) ch->spill.max_bytes < all;
        xsize_human(a, sizeof(a), (double) step);
        xsize_human(b, sizeof(b), by_bytes ? (double) ch->spill.max_bytes : all);
        fprintf(out,
                "%s: channel %s, %s -> %s: on_reader_loss: spill: while %s is detached, %s "
                "writes its steps to step files, up to %d steps (spill.max_steps) of %s each: at "
                "most %s on disk%s; the commit of one more fails (XFER_ERR_SPILL_FULL)\n",
                cfg->path, ch->name, from, to, to, from, ch->spill.max_steps, a, b,
                by_bytes ? " (spill.max_bytes)" : "");
        if (ch->transport == XFER_TRANSPORT_STREAM) { /* (ch_keep.c) */
            xsize_human(m, sizeof(m), (double) (ch->max_in_flight_steps + 1) * (double) step / p);
            fprintf(out,
                    "%s: channel %s, %s: on_reader_loss: spill over the stream: each rank of %s "
                    "also holds in memory the steps %s has not released, at most %d "
                    "(max_in_flight_steps + 1: %s on each of its %d ranks when the step is split "
                    "evenly), and writes them too once %s is lost\n",
                    cfg->path, ch->name, from, from, to, ch->max_in_flight_steps + 1, m, p, to);
        }
    }
}

int xfer_run_memory_check(const xfer_config_t *cfg, FILE *out, FILE *err)
{
    static const char *const unbounded_words[4] = {
        "", " (joined datasets without max_rows not counted)", " (variable datasets not counted)",
        " (variable datasets and joined ones without max_rows not counted)"};
    const uint64_t mem = mem_total();
    int c, k, warnings = 0;
    shape_notes(cfg, out);
    for (c = 0; c < cfg->nchannels; c++) {
        const xfer_cfg_channel_t *ch = &cfg->channels[c];
        for (k = 0; k < 2; k++) {
            const int from = k == 0 ? ch->from : ch->to, to = k == 0 ? ch->to : ch->from;
            const int q = cfg->components[to].nprocs, slots = ch->max_in_flight_steps + 1;
            uint64_t most = 0, step = 0;
            int r, i, user = 0, any = 0, unbounded = 0, at_max = 0;
            char a[32], b[32], t[32];
            for (r = 0; r < q; r++) {
                uint64_t held = 0;
                /* sums saturate: several datasets near the 2^62-byte bound would wrap */
                for (i = 0; i < ch->ndatasets; i++) {
                    const xfer_cfg_dataset_t *d = &ch->datasets[i];
                    uint64_t dims[XFER_MAX_DIMS], s0[XFER_MAX_DIMS], n0[XFER_MAX_DIMS], v;
                    if (d->from != from)
                        continue;
                    any = 1;
                    if (d->variable || (d->joined && !d->max_rows)) {
                        unbounded |= d->variable ? 2 : 1;
                        continue;
                    }
                    memcpy(dims, d->dims, sizeof(dims));
                    if (d->joined) { /* a step at its most: max_rows rows */
                        dims[0] = d->max_rows;
                        at_max = 1;
                    }
                    if (d->selection == XFER_SELECT_USER ||
                        xfer_decompose(d->selection, d->ndims, dims, q, r, s0, n0) !=
                            XFER_SUCCESS) {
                        user = 1; /* xfer_select decides: at most the whole */
                        memcpy(n0, dims, sizeof(n0));
                    }
                    (void) xsize_box(d->ndims, n0, xfer_cfg_dataset_esize(d), &v);
                    held = xsize_add_sat(held, v);
                    if (r == 0) {
                        (void) xsize_box(d->ndims, dims, xfer_cfg_dataset_esize(d), &v);
                        step = xsize_add_sat(step, v);
                    }
                }
                most = held > most ? held : most;
            }
            if (!any)
                continue;
            xsize_human(a, sizeof(a), (double) most);
            xsize_human(b, sizeof(b), (double) most * slots);
            xsize_human(t, sizeof(t), (double) step);
            fprintf(out,
                    "%s: channel %s, %s -> %s: a step is %s; each of the %d ranks of %s holds "
                    "up to %s of it%s, %s in its %d slots (max_in_flight_steps %d), plus its "
                    "own copy%s%s\n",
                    cfg->path, ch->name, cfg->components[from].name, cfg->components[to].name, t, q,
                    cfg->components[to].name, a,
                    user ? " (user selections: at most the whole)" : "", b, slots,
                    ch->max_in_flight_steps, at_max ? " (joined datasets at their max_rows)" : "",
                    unbounded_words[unbounded]);
            if (k == 0 && ch->policy == XFER_POLICY_LATEST) { /* ch_flow.c: two holds */
                const int p = cfg->components[from].nprocs;
                char e[32];
                xsize_human(e, sizeof(e), 2.0 * (double) step / p);
                fprintf(out,
                        "%s: channel %s, %s: policy latest: each rank of %s also holds up to 2 "
                        "copies of its own blocks of a step (%s on each of its %d ranks when the "
                        "step is split evenly)\n",
                        cfg->path, ch->name, cfg->components[from].name, cfg->components[from].name,
                        e, p);
            }
            if (k == 0)
                kept_steps(cfg, c, step, mem, out, err, &warnings);
            if (mem && (double) most * (slots + 1) > (double) mem) {
                char m[32], need[32];
                xsize_human(m, sizeof(m), (double) mem);
                xsize_human(need, sizeof(need), (double) most * (slots + 1));
                fprintf(err,
                        "%s: warning: channel %s: a rank of %s needs %s for %d slots and its "
                        "copy, more than this host's %s: lower max_in_flight_steps, select "
                        "less (selection: rows, columns, block) or run %s on more ranks\n",
                        cfg->path, ch->name, cfg->components[to].name, need, slots, m,
                        cfg->components[to].name);
                warnings++;
            } else if (mem && (double) most * (slots + 1) * q > (double) mem) {
                char m[32], all[32];
                xsize_human(m, sizeof(m), (double) mem);
                xsize_human(all, sizeof(all), (double) most * (slots + 1) * q);
                fprintf(err,
                        "%s: warning: channel %s: the %d ranks of %s need %s in all, more than "
                        "this host's %s: spread them over several hosts\n",
                        cfg->path, ch->name, q, cfg->components[to].name, all, m);
                warnings++;
            }
        }
    }
    return warnings;
}
