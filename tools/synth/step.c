/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-synth: one step of every channel of the component (synth.h): the blocks it puts, the
 * commits, the gets checked element by element against the pattern, the releases, in the
 * orders --orders draws from --seed, and the faults of --fault where they fall. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/size.h"
#include "synth.h"
#include "synth_pattern.h"
#define XFER_XALLOC_PROG "xfer-synth"
#define XFER_XALLOC_EXIT 1
#include "common/xalloc.h"

int synth_ch_result(int i, uint64_t s, xfer_status_t st, const char *what, double t0)
{
    chan_t *c = &chs[i];
    const char *name = cfg->channels[i].name, *msg = xfer_last_error(), *p;
    int named = 0;
    if (st == XFER_SUCCESS) {
        if (msg[0]) /* a success leaves no words behind */
            FAIL("%s succeeded, but xfer_last_error() says \"%s\"", what, msg);
        return 1;
    }
    if (st == XFER_ERR_END_OF_STREAM) {
        c->end = END_EOS;
        c->saw_end = c->role != XFER_ROLE_SEND;
        c->eos_where = what;
        return 0;
    }
    c->end = END_FAILED;
    c->st = st;
    for (p = msg; !named && (p = strstr(p, "channel ")); p++) /* does it name the channel? */
        named = strncmp(p + 8, name, strlen(name)) == 0 && strchr(":, )", p[8 + strlen(name)]);
    (void) s; /* (the step is at_step: synth_die names it) */
    FAIL("%s: %s: %s%s%s%s (after %.0f ms)", what, xfer_status_name(st), named ? "" : "channel ",
         named ? "" : name, named ? "" : ": ", msg, 1e3 * (MPI_Wtime() - t0));
}

/* ---- what --seed draws ------------------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t synth_draw(uint64_t what, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mix64(mix64(mix64(mix64(mix64(o.seed ^ what) ^ a) ^ b) ^ c) ^ d);
}

/* Shuffle v[0..n) with the stream keyed by @p key (Fisher-Yates). */
static void shuffle(int *v, int n, uint64_t key)
{
    int k;
    for (k = n - 1; k > 0; k--) {
        const int r = (int) (mix64(key + (uint64_t) k) % (uint64_t) (k + 1)), t = v[k];
        v[k] = v[r];
        v[r] = t;
    }
}

void synth_nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&ts, &ts) != 0)
        ; /* interrupted: sleep the rest */
}

/* A delay of 0..delay_ms drawn for this rank and step (the generated workload's "compute"). */
void synth_delay(int which, uint64_t s)
{
    if (o.seeded && o.delay_ms > 0)
        synth_nap_ms((int) (synth_draw((uint64_t) which, (uint64_t) comp, (uint64_t) crank, s, 0) %
                            (uint64_t) (o.delay_ms + 1)));
}

/* --fault: the victim rank prints what it has done so far, then sends itself the signal. */
void synth_fault_point(int at, uint64_t s)
{
    static const char *const ats[] = {"begin", "commit", "end"};
    const int sig = o.fault_sig;
    if (!sig || o.fault_at != at || o.fault_step != (int64_t) s || o.fault_rank != crank)
        return;
    o.fault_sig = 0; /* once: a stopped rank that is continued goes on */
    printf("xfer-synth-fault component=%s rank=%d signal=%s step=%" PRIu64 " at=%s\n", me, crank,
           sig == SIGKILL ? "KILL" : "STOP", s, ats[at]);
    if (sig == SIGKILL) {
        int i;
        for (i = 0; i < cfg->nchannels; i++)
            if (synth_live(i))
                chs[i].end = END_KILLED;
        synth_print_results();
    }
    fflush(stdout);
    fprintf(stderr, "xfer-synth: %s rank %d: SIG%s to myself in step %" PRIu64 " at %s (--fault)\n",
            me, crank, sig == SIGKILL ? "KILL" : "STOP", s, ats[at]);
    fflush(stderr);
    raise(sig);
}

void synth_split(uint64_t len, int n, int i, const char *mode, uint64_t *start, uint64_t *count)
{
    uint64_t wsum = 0, wpre = 0;
    int k;
    if (strcmp(mode, "empty") == 0 && n > 1) {
        if (i == 0) {
            *start = *count = 0;
            return;
        }
        synth_split(len, n - 1, i - 1, "even", start, count);
        return;
    }
    for (k = 0; k < n; k++) {
        uint64_t w = strcmp(mode, "uneven") == 0 ? (uint64_t) k + 1 : 1;
        wsum += w;
        if (k < i)
            wpre += w;
    }
    *start = len * wpre / wsum;
    *count = len * (wpre + (strcmp(mode, "uneven") == 0 ? (uint64_t) i + 1 : 1)) / wsum - *start;
}

/* This rank's block: a px x py grid over the first two dimensions when the dataset has two or
 * more and the rank count factors, else slabs of the first dimension. */
void synth_block_of(const xfer_cfg_dataset_t *d, int rank, int nranks, const char *mode,
                    uint64_t *start, uint64_t *count)
{
    int px = 1, k;
    for (k = 0; k < d->ndims; k++) {
        start[k] = 0;
        count[k] = d->dims[k];
    }
    if (d->ndims >= 2)
        for (k = 1; k * k <= nranks; k++)
            if (nranks % k == 0)
                px = k;
    if (px > 1) {
        synth_split(d->dims[0], px, rank % px, mode, &start[0], &count[0]);
        synth_split(d->dims[1], nranks / px, rank / px, mode, &start[1], &count[1]);
    } else {
        synth_split(d->dims[0], nranks, rank, mode, &start[0], &count[0]);
    }
}

uint64_t synth_vol(int nd, const uint64_t *c)
{
    uint64_t v = 1;
    int k;
    for (k = 0; k < nd; k++)
        v *= c[k];
    return v;
}

size_t synth_box_bytes(const char *ch, const xfer_cfg_dataset_t *d, const uint64_t *count)
{
    uint64_t b;

    if (xsize_box(d->ndims, count, xfer_cfg_dataset_esize(d), &b) != 0 || b > SIZE_MAX - 1)
        FAIL("channel %s, dataset %s: a block of more than %zu bytes cannot be addressed here", ch,
             d->name, (size_t) SIZE_MAX - 1);
    return (size_t) b;
}

void *synth_data_alloc(const char *ch, const xfer_cfg_dataset_t *d, size_t bytes, int zero,
                       const char *what)
{
    void *p = zero ? calloc(1, bytes + 1) : malloc(bytes + 1);
    char h[32];

    if (!p) /* as xfer-run --check names them when a step outgrows the host */
        FAIL("channel %s, dataset %s: cannot allocate %s (%zu bytes) for %s: %s (xfer-run "
             "--check FILE compares each step with this host's memory)",
             ch, d->name, xsize_human(h, sizeof(h), (double) bytes), bytes, what,
             strerror(errno ? errno : ENOMEM));
    return p;
}

void synth_fill(const xfer_cfg_dataset_t *d, const uint64_t *dims, int ch, int di, uint64_t s,
                const uint64_t *start, const uint64_t *count, char *buf)
{
    const size_t es = xfer_cfg_dataset_esize(d);
    uint64_t idx[XFER_MAX_DIMS] = {0}, n = synth_vol(d->ndims, count), e;
    int k;
    if (d->record) /* padding is not data: a sender's holds junk, a receiver never looks at it */
        memset(buf, 0xee, (size_t) n * es);
    for (e = 0; e < n; e++) {
        uint64_t g = 0;
        for (k = 0; k < d->ndims; k++)
            g = g * dims[k] + start[k] + idx[k];
        if (d->record)
            xfer_synth_record(d->record, (uint64_t) ch, (uint64_t) di, s, g, buf + e * es);
        else
            xfer_synth_element(d->type, (uint64_t) ch, (uint64_t) di, s, g, buf + e * es);
        for (k = d->ndims - 1; k >= 0; k--) {
            if (++idx[k] < count[k])
                break;
            idx[k] = 0;
        }
    }
}

/* Element @p e of box @p start/@p count as "[i, j, ...]" in @p out (its global coordinates). */
static void coords(int nd, const uint64_t *start, const uint64_t *count, uint64_t e, char *out,
                   size_t len)
{
    uint64_t c[XFER_MAX_DIMS];
    size_t n = 0;
    int k;
    for (k = nd - 1; k >= 0; k--) {
        c[k] = start[k] + (count[k] ? e % count[k] : 0);
        e = count[k] ? e / count[k] : 0;
    }
    for (k = 0; k < nd && n < len; k++)
        n += (size_t) snprintf(out + n, len - n, "%s%" PRIu64, k ? ", " : "[", c[k]);
    if (n < len)
        snprintf(out + n, len - n, "]");
}

int synth_same(const xfer_cfg_dataset_t *d, const char *got, const char *want, uint64_t n,
               uint64_t *bad, int *field)
{
    const size_t es = xfer_cfg_dataset_esize(d);
    uint64_t e;
    int f;
    *field = -1;
    if (d->compression == XFER_COMPRESSION_ZFP) { /* every element within the tolerance */
        for (e = 0; e < n; e++) {
            double x, y;
            if (d->type == XFER_TYPE_FLOAT32) {
                float fx, fy;
                memcpy(&fx, got + e * es, 4);
                memcpy(&fy, want + e * es, 4);
                x = fx;
                y = fy;
            } else {
                memcpy(&x, got + e * es, 8);
                memcpy(&y, want + e * es, 8);
            }
            if (!(fabs(x - y) <= d->tolerance)) {
                *bad = e;
                return 0;
            }
        }
        return 1;
    }
    if (!d->record) { /* every byte is data */
        if (memcmp(got, want, (size_t) n * es) == 0)
            return 1;
        for (e = 0; e < n && memcmp(got + e * es, want + e * es, es) == 0; e++)
            ;
        *bad = e;
        return 0;
    }
    for (e = 0; e < n; e++) /* field by field: padding is not data */
        for (f = 0; f < d->record->nfields; f++) {
            const xfer_record_field_t *fl = &d->record->fields[f];
            const size_t at = (size_t) e * es + fl->offset;
            if (memcmp(got + at, want + at, fl->count * xfer_type_size(fl->type)) != 0) {
                *bad = e;
                *field = f;
                return 0;
            }
        }
    return 1;
}

void synth_check_data(int i, int j, uint64_t s, const char *what, const uint64_t *dims,
                      const uint64_t *start, const uint64_t *count, const char *got,
                      const char *want, const char *more)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const uint64_t n = synth_vol(d->ndims, count);
    uint64_t e = 0;
    char at[256], shape[256], fld[128] = "";
    int f;
    if (n && d->compression != XFER_COMPRESSION_NONE && d->compression != XFER_COMPRESSION_AUTO)
        chs[i].zgot = 1;
    if (synth_same(d, got, want, n, &e, &f))
        return;
    coords(d->ndims, start, count, e, at, sizeof(at));
    {
        size_t m = 0;
        int k;
        for (k = 0; k < d->ndims && m < sizeof(shape); k++)
            m += (size_t) snprintf(shape + m, sizeof(shape) - m, "%s%" PRIu64, k ? ", " : "[",
                                   dims[k]);
        if (m < sizeof(shape))
            snprintf(shape + m, sizeof(shape) - m, "]");
    }
    if (f >= 0)
        snprintf(fld, sizeof(fld), ", field %s", d->record->fields[f].name);
    chs[i].end = END_WRONG;
    FAIL("channel %s dataset %s step %" PRIu64 ": %s differs from the pattern: element %" PRIu64
         " of %" PRIu64 " held, at %s of the step's shape %s%s%s%s",
         cfg->channels[i].name, d->name, s, what, e, n, at, shape, fld, more && more[0] ? "; " : "",
         more ? more : "");
}

void synth_record_desc(const xfer_cfg_dataset_t *d, uint64_t s, xfer_dataset_desc_t *desc,
                       synth_layout_t *own)
{
    xfer_status_t st;
    int f;
    desc->record = NULL;
    if (!d->record || s % 2 == 1)
        return;
    memset(own, 0, sizeof(*own));
    own->r.nfields = d->record->nfields;
    own->r.fields = own->f;
    for (f = 0; f < d->record->nfields && f < XFER_RECORD_MAX_FIELDS; f++) {
        own->f[f].name = d->record->fields[f].name;
        own->f[f].type = d->record->fields[f].type;
        own->f[f].count = d->record->fields[f].count;
    }
    if ((st = xfer_record_layout(&own->r)) != XFER_SUCCESS)
        FAIL("dataset %s: xfer_record_layout: %s: %s", d->name, xfer_status_name(st),
             xfer_last_error());
    desc->record = &own->r;
}

void synth_check_record_desc(int i, int j, uint64_t s, const xfer_dataset_desc_t *out)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const xfer_record_t *w = d->record, *g = out->record;
    int f, same;
    if (!w)
        return;
    same = g && out->type == XFER_TYPE_RECORD && g->nfields == w->nfields && g->size == w->size;
    for (f = 0; same && f < w->nfields; f++)
        same = strcmp(g->fields[f].name, w->fields[f].name) == 0 &&
               g->fields[f].type == w->fields[f].type && g->fields[f].count == w->fields[f].count &&
               g->fields[f].offset == w->fields[f].offset;
    if (!same) {
        chs[i].end = END_WRONG;
        FAIL("channel %s dataset %s step %" PRIu64 ": xfer_get's desc.record is %s, not the "
             "declaration (%d fields, %zu bytes)",
             cfg->channels[i].name, d->name, s, g ? "another layout" : "NULL", w->nfields, w->size);
    }
}

/* ---- one step of one channel --------------------------------------------------------------- */

/* After a successful xfer_step_end of channel i in step s. */
static void step_done(int i, uint64_t s)
{
    static const char *const roles[] = {"send", "recv", "full"};
    chan_t *c = &chs[i];
    c->steps++;
    if (o.report) {
        printf("xfer-synth-step component=%s rank=%d channel=%s role=%s step=%" PRIu64, me, crank,
               cfg->channels[i].name,
               roles[c->role == XFER_ROLE_SEND   ? 0
                     : c->role == XFER_ROLE_RECV ? 1
                                                 : 2],
               s);
        if (synth_flow_on(i)) /* the sender's number of the step read */
            printf(" sender=%" PRIu64, c->q);
        printf("\n");
        fflush(stdout);
    }
    if (c->role != XFER_ROLE_RECV)
        synth_fault_point(AT_COMMIT, s);
}

/* Put this rank's block of dataset j of channel i in step s. 0: the channel ended. */
static int put_dataset(int i, int j, uint64_t s)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    xfer_dataset_desc_t desc;
    synth_layout_t own;
    size_t bytes;
    char *blk;
    int ok = 1;
    if (d->from != comp || (o.skip && strcmp(o.skip, d->name) == 0))
        return 1;
    if (d->joined)
        return synth_joined_put(i, j, s);
    if (d->variable)
        return synth_variable_put(i, j, s);
    if (synth_blocks_on() && !o.bind) /* several blocks (tools/synth/blocks.c) */
        return synth_blocks_put(i, j, s);
    memset(&desc, 0, sizeof(desc));
    desc.name = d->name;
    desc.type = d->type;
    desc.ndims = d->ndims;
    memcpy(desc.dims, d->dims, sizeof(desc.dims));
    synth_record_desc(d, s, &desc, &own);
    synth_block_of(d, crank, csize, o.decomp, desc.start, desc.count);
    bytes = synth_box_bytes(cfg->channels[i].name, d, desc.count);
    blk = o.bind ? bnd[BND(i, j, s)]
                 : synth_data_alloc(cfg->channels[i].name, d, bytes, 0, "this rank's block");
    synth_fill(d, d->dims, i, j, s, desc.start, desc.count, blk);
    CHCALL(ok, i, s, xfer_put(chs[i].h, &desc, blk));
    if (!o.bind)
        free(blk);
    return ok;
}

/* This step's attributes on a channel this rank sends on (--attrs). 0: the channel ended. */
static int put_attrs(int i, uint64_t s)
{
    xfer_channel_t *h = chs[i].h;
    char label[96];
    const double t = 0.5 * (double) s;
    const int32_t v3[3] = {(int32_t) s, (int32_t) s + 1, (int32_t) s + 2};
    int ok;
    if (!o.attrs || chs[i].role == XFER_ROLE_RECV)
        return 1;
    snprintf(label, sizeof(label), "%s step %" PRIu64, me, s);
    CHCALL(ok, i, s, xfer_put_attr(h, "step", XFER_TYPE_UINT64, 1, &s));
    if (ok)
        CHCALL(ok, i, s, xfer_put_attr(h, "time", XFER_TYPE_FLOAT64, 1, &t));
    if (ok)
        CHCALL(ok, i, s, xfer_put_attr(h, "v3", XFER_TYPE_INT32, 3, v3));
    if (ok)
        CHCALL(ok, i, s, xfer_put_attr_string(h, "label", "replaced below"));
    if (ok)
        CHCALL(ok, i, s, xfer_put_attr_string(h, "label", label));
    return ok;
}

/* Every block of channel i this rank sends in step s, datasets in the order of --put-order
 * (or, seeded with --orders random, in an order drawn for this rank and step). */
static int put_channel(int i, uint64_t s)
{
    const int n = cfg->channels[i].ndatasets;
    int *ord = xchecked(calloc((size_t) n + 1, sizeof(*ord))), jj, ok = 1;
    for (jj = 0; jj < n; jj++)
        ord[jj] = strcmp(o.put_order, "reverse") == 0 ? n - 1 - jj : jj;
    if (o.orders == ORD_RANDOM)
        shuffle(ord, n, synth_draw(R_PUT, (uint64_t) comp, (uint64_t) crank, s, (uint64_t) i));
    for (jj = 0; ok && jj < n; jj++)
        ok = put_dataset(i, ord[jj], s);
    free(ord);
    return ok && put_attrs(i, s);
}

/* Check this step's attributes (--attrs) on a channel this rank receives on. */
static int check_attrs(int i, uint64_t s)
{
    const int peer = cfg->channels[i].from == comp ? cfg->channels[i].to : cfg->channels[i].from;
    xfer_channel_t *h = chs[i].h;
    uint64_t got_s = 0;
    double got_t = 0;
    int32_t got_v[3] = {0, 0, 0};
    char label[96] = "", want_label[96];
    xfer_type_t ty = XFER_TYPE_INT8;
    size_t cnt = 0;
    int na = 0, ok;
    if (!o.attrs)
        return 1;
    CHCALL(ok, i, s, xfer_attr_count(h, &na));
    if (ok)
        CHCALL(ok, i, s, xfer_get_attr(h, "step", &ty, &cnt, &got_s, sizeof(got_s)));
    if (ok)
        CHCALL(ok, i, s, xfer_get_attr(h, "time", NULL, NULL, &got_t, sizeof(got_t)));
    if (ok)
        CHCALL(ok, i, s, xfer_get_attr(h, "v3", NULL, NULL, got_v, sizeof(got_v)));
    if (ok)
        CHCALL(ok, i, s, xfer_get_attr_string(h, "label", label, sizeof(label)));
    if (!ok)
        return 0;
    snprintf(want_label, sizeof(want_label), "%s step %" PRIu64, cfg->components[peer].name, s);
    if (na != 4 || ty != XFER_TYPE_UINT64 || cnt != 1 || got_s != s || got_t != 0.5 * (double) s ||
        got_v[0] != (int32_t) s || got_v[2] != (int32_t) s + 2 || strcmp(label, want_label) != 0) {
        chs[i].end = END_WRONG;
        FAIL("channel %s step %" PRIu64 ": attributes differ (%d of them, step %" PRIu64
             ", label \"%s\")",
             cfg->channels[i].name, s, na, got_s, label);
    }
    return 1;
}

int synth_check_hyperslab(int i, int j, uint64_t s, const uint64_t *dims,
                          const xfer_dataset_desc_t *out, uint64_t *n)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    uint64_t st0[XFER_MAX_DIMS] = {0}, c0[XFER_MAX_DIMS] = {0};
    xfer_dataset_desc_t hout;
    size_t bytes;
    char *hs, *want;
    int k, ok;
    /* the middle third of every dimension (at least one element), within what this rank holds */
    for (k = 0; k < d->ndims; k++) {
        uint64_t lo = dims[k] / 3, hi = dims[k] - dims[k] / 3;
        lo = lo > out->start[k] ? lo : out->start[k];
        hi = hi < out->start[k] + out->count[k] ? hi : out->start[k] + out->count[k];
        st0[k] = lo;
        c0[k] = hi > lo ? hi - lo : 0;
    }
    *n = synth_vol(d->ndims, c0);
    if (*n == 0)
        return 1;
    /* into a buffer of its own: a bound one holds the step's selection */
    bytes = synth_box_bytes(cfg->channels[i].name, d, c0);
    hs = synth_data_alloc(cfg->channels[i].name, d, bytes, 0, "a hyperslab of it");
    want = synth_data_alloc(cfg->channels[i].name, d, bytes, 0, "the pattern it is compared with");
    CHCALL(ok, i, s, xfer_get_selection(chs[i].h, d->name, st0, c0, hs, bytes, &hout));
    if (ok) {
        synth_fill(d, dims, i, j, s, st0, c0, want);
        synth_check_data(i, j, s, "hyperslab", dims, st0, c0, hs, want, NULL);
    }
    free(hs);
    free(want);
    return ok;
}

/* Get dataset j of channel i in step s (what this rank holds, and a hyperslab inside it) and
 * compare both with the pattern. 0: the channel ended. */
static int get_dataset(int i, int j, uint64_t s)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const char *cn = cfg->channels[i].name;
    const size_t es = xfer_cfg_dataset_esize(d);
    size_t whole; /* the dataset's bytes: what this rank gets is no more */
    char *got, *want;
    xfer_dataset_desc_t out;
    xfer_channel_stats_t cs0, cs1;
    uint64_t held, nh = 0;
    int ok;
    if (d->from == comp)
        return 1;
    if (d->joined)
        return synth_joined_get(i, j, s);
    if (d->variable)
        return synth_variable_get(i, j, s);
    whole = synth_box_bytes(cn, d, d->dims);
    got =
        o.bind ? bnd[RBND(i, j, 0)] : synth_data_alloc(cn, d, whole, 0, "the dataset as received");
    want = synth_data_alloc(cn, d, whole, 0, "the pattern it is compared with");
    memset(&out, 0, sizeof(out));
    /* what this rank receives: the whole dataset, or its selection */
    CHCALL(ok, i, s, xfer_channel_stats(chs[i].h, &cs0));
    if (ok)
        CHCALL(ok, i, s, xfer_get(chs[i].h, d->name, got, whole, &out));
    if (ok)
        CHCALL(ok, i, s, xfer_channel_stats(chs[i].h, &cs1));
    if (!ok)
        goto out;
    if (o.bind && cs1.bytes_copied_out != cs0.bytes_copied_out) {
        chs[i].end = END_WRONG;
        FAIL("channel %s dataset %s step %" PRIu64 ": did not land in the buffer bound for it "
             "(xfer_get copied %" PRIu64 " bytes)",
             cfg->channels[i].name, d->name, s, cs1.bytes_copied_out - cs0.bytes_copied_out);
    }
    if (!chs[i].has_q) /* the first get of a step a flow policy sent says which it is */
        synth_flow_adopt(i, out.step);
    s = chs[i].q;
    synth_fill(d, d->dims, i, j, s, out.start, out.count, want);
    held = synth_vol(d->ndims, out.count);
    if (out.step != s) {
        chs[i].end = END_WRONG;
        FAIL("channel %s dataset %s step %" PRIu64 ": xfer_get says step %" PRIu64,
             cfg->channels[i].name, d->name, s, out.step);
    }
    synth_check_record_desc(i, j, s, &out);
    synth_check_data(i, j, s, "data", d->dims, out.start, out.count, got, want, NULL);
    if (!(ok = synth_check_hyperslab(i, j, s, d->dims, &out, &nh)))
        goto out;
    checked += held + nh;
    if (o.bind == 2) {
        /* the next step lands in the other buffer: wipe it first, so that only the step itself
         * can make it match */
        char *next = bnd[RBND(i, j, 1)];
        memset(next, 0, held * es);
        CHCALL(ok, i, s, xfer_bind_buffer(chs[i].h, d->name, next, held * es));
    }
out:
    if (!o.bind)
        free(got);
    free(want);
    return ok;
}

/* Everything channel i receives in step s, checked. 0: the channel ended. */
static int get_channel(int i, uint64_t s)
{
    const int n = cfg->channels[i].ndatasets;
    int *ord, jj, ok;
    /* the sender's number of this step (a flow policy sends only some of its steps) keys what
     * is checked; the orders drawn stay this rank's own */
    if (!synth_flow_learn(i, s))
        return 0;
    ord = xchecked(calloc((size_t) n + 1, sizeof(*ord)));
    ok = check_attrs(i, chs[i].has_q ? chs[i].q : s);
    for (jj = 0; jj < n; jj++)
        ord[jj] = jj;
    if (o.orders == ORD_RANDOM)
        shuffle(ord, n, synth_draw(R_DSORDER, (uint64_t) comp, (uint64_t) crank, s, (uint64_t) i));
    for (jj = 0; ok && jj < n; jj++)
        ok = get_dataset(i, ord[jj], chs[i].has_q ? chs[i].q : s);
    free(ord);
    if (ok && o.recv_ms > 0) /* an analysis of the step, before its release */
        synth_nap_ms(o.recv_ms);
    if (ok)
        chs[i].got++; /* (a release that fails later does not undo it) */
    if (ok && o.get) {
        char tiny[8];
        CHCALL(ok, i, s, xfer_get(chs[i].h, o.get, tiny, sizeof(tiny), NULL));
    }
    return ok;
}

/* xfer_step_end of channel i in step s: the commit of a sending side, the release of a
 * receiving one. */
static void end_channel(int i, uint64_t s)
{
    int ok = synth_blocks_end(i, s); /* a step --bad-blocks spoils: refused, then put right */
    if (ok < 0)
        CHCALL(ok, i, s, xfer_step_end(chs[i].h));
    if (ok)
        step_done(i, s);
}

void synth_flow_drain(int i, uint64_t s)
{
    for (; synth_live(i); s++) {
        at_step = (long long) s;
        if (get_channel(i, s))
            end_channel(i, s);
    }
}

/* The channels of @p role class (send: this side only sends; else: it receives) in the order
 * of this step: the file's, or (--orders random) one drawn for the component and step, the
 * same on all its ranks. Full-duplex channels keep one order per step that every component
 * shares, wherever they fall among the others: a component waits in a full-duplex get for
 * its peer's commit, so two of them must not meet such channels in opposite orders. */
static int step_order(int *ord, int send, uint64_t s, uint64_t what)
{
    int i, n = 0, nf = 0, k;
    int *full = xchecked(calloc((size_t) cfg->nchannels + 1, sizeof(*full)));
    for (i = 0; i < cfg->nchannels; i++)
        if (synth_live(i) && (chs[i].role == XFER_ROLE_SEND) == send && synth_flow_reads(i, s))
            ord[n++] = i;
    if (o.orders == ORD_RANDOM) {
        shuffle(ord, n, synth_draw(R_ORDER, (uint64_t) comp, what, s, 0));
        for (i = 0; i < n; i++)
            if (cfg->channels[ord[i]].duplex == XFER_DUPLEX_FULL)
                full[nf++] = ord[i];
        /* the full-duplex ones by their shared key (insertion sort: a handful) */
        for (i = 1; i < nf; i++)
            for (k = i; k > 0 && synth_draw(R_FULL, 0, 0, s, (uint64_t) full[k - 1]) >
                                     synth_draw(R_FULL, 0, 0, s, (uint64_t) full[k]);
                 k--) {
                const int t = full[k];
                full[k] = full[k - 1];
                full[k - 1] = t;
            }
        for (i = 0, k = 0; i < n; i++)
            if (cfg->channels[ord[i]].duplex == XFER_DUPLEX_FULL)
                ord[i] = full[k++];
    }
    free(full);
    return n;
}

void synth_run_step(uint64_t s)
{
    const int nch = cfg->nchannels;
    int *ord = xchecked(calloc((size_t) nch + 1, sizeof(*ord)));
    int i, k, n;

    if (o.orders == ORD_FILE) { /* each channel whole, in the file's order */
        for (i = 0; i < nch; i++) {
            if (synth_live(i) && chs[i].role != XFER_ROLE_RECV && !put_channel(i, s))
                continue;
            if (!synth_flow_reads(i, s)) /* a stride's step it does not send */
                continue;
            if (synth_live(i) && chs[i].role != XFER_ROLE_SEND && !get_channel(i, s))
                continue;
            if (synth_live(i))
                end_channel(i, s);
        }
        free(ord);
        return;
    }
    /* puts never wait for a peer: every channel this rank sends on, in the order drawn for
     * it (--orders random) or the file's */
    for (i = 0; i < nch; i++)
        ord[i] = i;
    if (o.orders == ORD_RANDOM)
        shuffle(ord, nch, synth_draw(R_PUT, (uint64_t) comp, (uint64_t) crank, s, 1000));
    for (k = 0; k < nch; k++)
        if (synth_live(ord[k]) && chs[ord[k]].role != XFER_ROLE_RECV)
            (void) put_channel(ord[k], s);
    /* commit what this component only sends before waiting for anything: with channels in
     * both directions, a component that got first would wait for a peer that gets first too */
    n = step_order(ord, 1, s, 1);
    for (k = 0; k < n; k++)
        if (synth_live(ord[k]))
            end_channel(ord[k], s);
    n = step_order(ord, 0, s, 2);
    for (k = 0; k < n; k++)
        if (synth_live(ord[k]))
            (void) get_channel(ord[k], s);
    n = step_order(ord, 0, s, 3);
    for (k = 0; k < n; k++)
        if (synth_live(ord[k]))
            end_channel(ord[k], s);
    free(ord);
}

uint64_t synth_not_ready;

void synth_begin_step(uint64_t s)
{
    int i, ok;
    for (i = 0; o.begin_ms >= -1 && i < cfg->nchannels; i++) {
        const double t0 = MPI_Wtime();
        xfer_step_status_t ss = XFER_STEP_NOT_READY;
        if (!synth_flow_reads(i, s)) /* a stride's step it does not send */
            continue;
        while (synth_live(i) && ss == XFER_STEP_NOT_READY) {
            CHCALL(ok, i, s, xfer_step_begin(chs[i].h, o.begin_ms, &ss));
            if (ok && ss == XFER_STEP_NOT_READY)
                synth_not_ready++;
            if (ok && ss == XFER_STEP_NOT_READY && o.deadline_ms > 0 &&
                MPI_Wtime() - t0 > 1e-3 * o.deadline_ms)
                FAIL("channel %s: step %" PRIu64 " did not begin within %d ms (%s)",
                     cfg->channels[i].name, s, o.deadline_ms, "--deadline-ms");
        }
        if (synth_live(i) && ss == XFER_STEP_END_OF_STREAM) {
            chs[i].end = END_EOS;
            chs[i].saw_end = chs[i].role != XFER_ROLE_SEND;
            chs[i].eos_where = "xfer_step_begin";
        }
    }
}
