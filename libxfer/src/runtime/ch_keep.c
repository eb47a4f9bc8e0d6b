/* SPDX-License-Identifier: BSD-3-Clause */
/* Steps a detachable stream's sending side keeps for a reader that attaches late or comes back
 * (docs/runtime.md, "Readers that attach late or come back"; ch_attach.c attaches it), under
 * start: oldest:
 *   spill       the steps the reader has not released (ACKed: the stream's credit), in memory,
 *               at most max_in_flight_steps + 1 of them; once the reader is lost, from the
 *               side's first round on (ch_attach.c), those and every step ended while detached
 *               go to one file per step and rank, spill.<component>.<rank>.<step> in the
 *               file transport's folder (XFER_TRANSPORT_DIR, file.dir, xfer-steps; then
 *               <workflow>/<channel>), bounded by spill.max_steps and spill.max_bytes over the
 *               whole side since the loss: past them the step's end fails on every rank with
 *               XFER_ERR_SPILL_FULL and the step is not ended (its end may be called again);
 *   history: K  the last K steps ended, attached or not, in memory.
 * A step is kept as the application gave it: each put (its descriptor and its block's bytes, as
 * the put read them: a bound buffer's too, which the sender leaves alone until the step's end)
 * and its attributes. At an attach the side replays the kept steps, oldest first, through the
 * core's own calls (puts, attributes, the step's end) on the new stream, each with its own step
 * number, then the application's steps go on. A replayed step counts as sent, once. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"

#define KEEP_MAGIC 0x5846534bu /* "XFSK" */
#define PAD8(n)    (((n) + 7) & ~(size_t) 7)

/* A record: this header, then each put (kput_t and its block, padded to 8), then the step's
 * attributes (ch_attr.c's encoding, without the step number, which the replay adds). */
typedef struct khdr {
    uint32_t magic, nput;
    uint64_t puts_len, attr_len, bytes;
} khdr_t;

typedef struct kput {
    int32_t ds, type, ndims, pad;
    uint64_t dims[XFER_MAX_DIMS], start[XFER_MAX_DIMS], count[XFER_MAX_DIMS];
    uint64_t bytes;
} kput_t;

xfer_status_t xfer_ch_keep_open(xfer_channel_t *ch, const xfer_channel_flow_t *eff)
{
    xfer_rt_keep_t *k = &ch->keep;
    const char *base = xfer_env_str("XFER_TRANSPORT_DIR");
    int n;
    memset(k, 0, sizeof(*k));
    if (eff->start != XFER_START_OLDEST) /* (start: latest: nothing is replayed) */
        return XFER_SUCCESS;
    k->on = 1;
    k->spill = eff->on_reader_loss == XFER_LOSS_SPILL;
    k->history = k->spill ? 0 : eff->history;
    if (!base)
        base = ch->cfg->file.dir && ch->cfg->file.dir[0] ? ch->cfg->file.dir : "xfer-steps";
    n = snprintf(k->dir, sizeof(k->dir), "%s/%s/%s", base, ch->x->cfg->workflow, ch->cfg->name);
    if (n < 0 || (size_t) n + 64 >= sizeof(k->dir))
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: on_reader_loss: spill: the folder %s is "
                        "too long",
                        ch->cfg->name, base);
    return XFER_SUCCESS;
}

static void file_of(const xfer_channel_t *ch, uint64_t label, char *buf, size_t len)
{
    snprintf(buf, len, "%s/spill.%s.%d.%llu", ch->keep.dir,
             ch->x->cfg->components[ch->x->comp].name, ch->me, (unsigned long long) label);
}

static void drop(xfer_channel_t *ch, xfer_rt_kept_t *e)
{
    char path[900];
    if (e->on_disk) {
        file_of(ch, e->label, path, sizeof(path));
        unlink(path);
    }
    xfer_free(e->rec);
    memset(e, 0, sizeof(*e));
}

void xfer_ch_keep_free(xfer_channel_t *ch)
{
    xfer_rt_keep_t *k = &ch->keep;
    int i;
    for (i = 0; i < k->n; i++) /* (no reader can come once the sender is gone) */
        drop(ch, &k->e[i]);
    xfer_free(k->e);
    xfer_free(k->pend);
    k->e = NULL;
    k->pend = NULL;
    k->n = k->cap = 0;
    k->plen = k->pcap = 0;
}

static xfer_status_t pend_room(xfer_channel_t *ch, size_t more)
{
    xfer_rt_keep_t *k = &ch->keep;
    size_t nc = k->pcap ? k->pcap : 4096;
    char *np;
    if (!k->pend) {
        k->plen = k->pputs = sizeof(khdr_t);
        k->pnput = 0;
    }
    if (k->pend && k->plen + more <= k->pcap)
        return XFER_SUCCESS;
    while (nc < k->plen + more)
        nc *= 2;
    if (!(np = xfer_realloc_array(k->pend, nc, 1)))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: a kept step: %zu bytes", ch->cfg->name,
                        nc);
    k->pend = np;
    k->pcap = nc;
    return XFER_SUCCESS;
}

xfer_status_t xfer_ch_keep_put(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block)
{
    xfer_rt_keep_t *k = &ch->keep;
    xfer_rt_dset_t *ds;
    kput_t p;
    size_t bytes;
    xfer_status_t st;
    if (!k->on || !(ds = xfer_ch_find_dset(ch, d->name)))
        return XFER_SUCCESS;
    bytes = (size_t) xfer_ch_volume(d->ndims, d->count) * ds->esize;
    XFER_CHECK_GOTO(pend_room(ch, sizeof(p) + PAD8(bytes)), st, out);
    if (k->pputs != k->plen) /* (attributes of an end that failed: taken again at the end) */
        k->plen = k->pputs;
    memset(&p, 0, sizeof(p));
    p.ds = (int32_t) (ds - ch->ds);
    p.type = (int32_t) d->type;
    p.ndims = d->ndims;
    memcpy(p.dims, d->dims, sizeof(p.dims));
    memcpy(p.start, d->start, sizeof(p.start));
    memcpy(p.count, d->count, sizeof(p.count));
    p.bytes = bytes;
    memcpy(k->pend + k->plen, &p, sizeof(p));
    if (bytes)
        memcpy(k->pend + k->plen + sizeof(p), block, bytes);
    k->plen += sizeof(p) + PAD8(bytes);
    k->pputs = k->plen;
    k->pnput++;
out:
    return st;
}

/* The pending record's header, as it stands. */
static void seal(xfer_rt_keep_t *k)
{
    khdr_t h;
    memset(&h, 0, sizeof(h));
    h.magic = KEEP_MAGIC;
    h.nput = k->pnput;
    h.puts_len = k->pputs;
    h.attr_len = k->plen - k->pputs;
    h.bytes = k->plen;
    memcpy(k->pend, &h, sizeof(h));
}

xfer_status_t xfer_ch_keep_attrs(xfer_channel_t *ch)
{
    xfer_rt_keep_t *k = &ch->keep;
    size_t o = 0;
    xfer_ch_attr_t a;
    xfer_status_t st;
    if (!k->on)
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(pend_room(ch, 0), st, out);
    k->plen = k->pputs;
    while (xfer_ch_attr_next(ch->attr_out.buf, ch->attr_out.len, &o, &a))
        if (strcmp(a.name, XFER_CH_LABEL) != 0) /* (the replay numbers it) */
            XFER_CHECK_GOTO(xfer_ch_attr_append(&k->pend, &k->plen, &k->pcap, &a), st, out);
    seal(k);
out:
    return st;
}

/* Can the front step go? Released by the reader attached now (spill), or K steps back
 * (history). */
static int done_with(const xfer_channel_t *ch, const xfer_rt_kept_t *e)
{
    const xfer_rt_keep_t *k = &ch->keep;
    if (k->spill)
        return e->idx != UINT64_MAX && e->idx < ch->proto.credit;
    return e->label + (uint64_t) k->history < k->next;
}

/* The front @p i kept steps go. */
static void drop_front(xfer_channel_t *ch, int i)
{
    xfer_rt_keep_t *k = &ch->keep;
    int j;
    for (j = 0; j < i; j++)
        drop(ch, &k->e[j]);
    if (i > 0) {
        memmove(k->e, k->e + i, (size_t) (k->n - i) * sizeof(*k->e));
        k->n -= i;
    }
}

static void trim(xfer_channel_t *ch)
{
    int i = 0;
    while (i < ch->keep.n && done_with(ch, &ch->keep.e[i]))
        i++;
    drop_front(ch, i);
}

xfer_status_t xfer_ch_keep_ended(xfer_channel_t *ch, int sent, uint64_t idx, int on_disk)
{
    xfer_rt_keep_t *k = &ch->keep;
    xfer_rt_kept_t *e;
    xfer_status_t st;
    if (!k->on)
        return XFER_SUCCESS;
    if (ch->loss.lost && (ch->loss.closed || !ch->loss.attachable)) {
        xfer_ch_keep_free(ch); /* nobody attaches any more (a reader that closed the channel) */
        k->on = 0;
        return XFER_SUCCESS;
    }
    XFER_CHECK_GOTO(pend_room(ch, 0), st, out); /* (a step without puts: its record) */
    seal(k);
    if (k->n == k->cap) {
        int nc = k->cap ? 2 * k->cap : 8;
        xfer_rt_kept_t *ne = xfer_realloc_array(k->e, (size_t) nc, sizeof(*ne));
        if (!ne)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: kept steps", ch->cfg->name);
        k->e = ne;
        k->cap = nc;
    }
    e = &k->e[k->n++];
    memset(e, 0, sizeof(*e));
    e->label = ch->stats.steps;
    e->idx = idx;
    e->sent = sent;
    e->len = k->plen;
    e->on_disk = on_disk;
    if (on_disk)
        xfer_free(k->pend);
    else
        e->rec = k->pend;
    k->pend = NULL;
    k->plen = k->pcap = k->pputs = 0;
    k->pnput = 0;
    k->next = e->label + 1;
    trim(ch);
out:
    return st;
}

/* (write(2), not stdio: what a full disk refuses is seen at once, whole) */
static xfer_status_t write_rec(xfer_channel_t *ch, uint64_t label, const char *rec, size_t len)
{
    char path[900];
    size_t done = 0;
    int fd, e = 0;
    file_of(ch, label, path, sizeof(path));
    if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0)
        e = errno;
    while (fd >= 0 && !e && done < len) {
        const ssize_t n = write(fd, rec + done, len - done);
        if (n < 0 && errno != EINTR)
            e = errno;
        else if (n > 0)
            done += (size_t) n;
    }
    if (fd >= 0 && close(fd) != 0 && !e)
        e = errno;
    if (!e)
        return XFER_SUCCESS;
    unlink(path);
    return XFER_ERR(XFER_ERR_IO, "channel %s: on_reader_loss: spill: cannot write %s: %s",
                    ch->cfg->name, path, strerror(e));
}

static xfer_status_t make_dir(xfer_channel_t *ch)
{
    char p[sizeof(ch->keep.dir)];
    size_t i;
    snprintf(p, sizeof(p), "%s", ch->keep.dir);
    for (i = 1; p[i]; i++)
        if (p[i] == '/') {
            p[i] = '\0';
            (void) mkdir(p, 0777); /* (the last one's failure says why) */
            p[i] = '/';
        }
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
        return XFER_ERR(XFER_ERR_IO, "channel %s: on_reader_loss: spill: cannot create %s: %s",
                        ch->cfg->name, p, strerror(errno));
    return XFER_SUCCESS;
}

/* This rank's kept steps still in memory and step @p label being ended, to their files. */
static xfer_status_t write_all(xfer_channel_t *ch, uint64_t label)
{
    xfer_rt_keep_t *k = &ch->keep;
    xfer_status_t st;
    int i;
    XFER_CHECK_GOTO(make_dir(ch), st, out);
    for (i = 0; i < k->n; i++) {
        xfer_rt_kept_t *e = &k->e[i];
        if (e->on_disk)
            continue;
        XFER_CHECK_GOTO(write_rec(ch, e->label, e->rec, e->len), st, out);
        e->on_disk = 1;
        xfer_free(e->rec);
        e->rec = NULL;
    }
    st = write_rec(ch, label, k->pend, k->plen);
out:
    return st;
}

xfer_status_t xfer_ch_keep_spill(xfer_channel_t *ch, int *on_disk)
{
    xfer_rt_keep_t *k = &ch->keep;
    const uint64_t label = ch->stats.steps;
    uint64_t v[2], s;
    xfer_status_t st;
    char path[900];
    int due = 0;

    *on_disk = 0;
    if (!k->on || !k->spill)
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(xfer_ch_keep_attrs(ch), st, out);
    XFER_CHECK_GOTO(xfer_ch_attach_due(ch, 1, &due), st, out);
    if (!due) { /* (the side's ranks learn of the loss at different steps: counted at its first
                   round, which every rank holds at the same step end) */
        k->unsynced++;
        k->unsynced_bytes += k->plen;
        return XFER_SUCCESS;
    }
    v[0] = k->unsynced_bytes;
    v[1] = k->plen;
    XFER_MPI_GOTO(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_SUM, ch->loss.comm), st, out);
    if (!k->synced) {
        s = k->unsynced;
        XFER_MPI_GOTO(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_UINT64_T, MPI_MAX, ch->loss.comm), st,
                      out);
        k->spilled += s;
        k->synced = 1;
    }
    k->spilled_bytes += v[0];
    k->unsynced = k->unsynced_bytes = 0;
    XFER_CHECK_GOTO(
        xfer_ch_spill_bounds(ch, k->spilled, k->spilled_bytes, ch->loss.from, label, v[1]), st,
        out);
    /* every rank writes, then the side agrees: a step one rank could not write is not ended on
     * any (the others' files of it go) */
    st = xfer_rt_agree(ch->loss.comm, write_all(ch, label));
    if (st != XFER_SUCCESS) {
        file_of(ch, label, path, sizeof(path));
        unlink(path);
        return st;
    }
    k->spilled++;
    k->spilled_bytes += v[1];
    *on_disk = 1;
out:
    return st;
}

/* Kept step @p e's record (read from its file; *@p own: the caller frees it). */
static xfer_status_t load(xfer_channel_t *ch, const xfer_rt_kept_t *e, char **rec, int *own)
{
    char path[900];
    FILE *f;
    *own = 0;
    *rec = e->rec;
    if (!e->on_disk)
        return XFER_SUCCESS;
    file_of(ch, e->label, path, sizeof(path));
    if (!(*rec = xfer_malloc(e->len ? e->len : 1)))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: a spilled step", ch->cfg->name);
    *own = 1;
    if (!(f = fopen(path, "rb")) || fread(*rec, 1, e->len, f) != e->len) {
        const int err = errno;
        if (f)
            fclose(f);
        return XFER_ERR(XFER_ERR_IO, "channel %s: on_reader_loss: spill: cannot read %s: %s",
                        ch->cfg->name, path, f ? "short file" : strerror(err));
    }
    fclose(f);
    return XFER_SUCCESS;
}

/* A walk over a kept record's puts (kput_t then the block, one after the other), in order. */
typedef struct kwalk {
    const char *rec;
    size_t o; /* the offset of put `at` */
    int at;
} kwalk_t;

/* Put @p i of the record @p arg walks (the puts are asked for in order). */
static void kept_put(const xfer_channel_t *ch, void *arg, int i, xfer_dataset_desc_t *d,
                     const void **block)
{
    kwalk_t *w = arg;
    kput_t p;
    memcpy(&p, w->rec + w->o, sizeof(p));
    for (; w->at < i; w->at++) {
        w->o += sizeof(p) + PAD8((size_t) p.bytes);
        memcpy(&p, w->rec + w->o, sizeof(p));
    }
    d->name = ch->ds[p.ds].cfg->name;
    d->type = (xfer_type_t) p.type;
    d->ndims = p.ndims;
    memcpy(d->dims, p.dims, sizeof(d->dims));
    memcpy(d->start, p.start, sizeof(d->start));
    memcpy(d->count, p.count, sizeof(d->count));
    *block = p.bytes ? w->rec + w->o + sizeof(p) : NULL;
}

/* One kept step onto the stream, as the application gave it, numbered base + cur; waits for
 * room like any step (policy block: the reader catching up). */
static xfer_status_t send_rec(xfer_channel_t *ch, const char *rec)
{
    kwalk_t w = {rec, sizeof(khdr_t), 0};
    khdr_t h;
    memcpy(&h, rec, sizeof(h));
    if (h.magic != KEEP_MAGIC)
        return XFER_ERR(XFER_ERR_INTERNAL, "channel %s: a kept step's record is damaged",
                        ch->cfg->name);
    return xfer_ch_send_recorded(ch, "replaying a kept step to a reader that attached",
                                 (int) h.nput, kept_put, &w, rec + h.puts_len, (size_t) h.attr_len,
                                 ch->loss.base + ch->cur);
}

uint64_t xfer_ch_keep_first(const xfer_channel_t *ch)
{
    return ch->keep.on && ch->keep.n > 0 ? ch->keep.e[0].label : ch->stats.steps;
}

xfer_status_t xfer_ch_keep_agree(xfer_channel_t *ch, MPI_Comm side)
{
    xfer_rt_keep_t *k = &ch->keep;
    uint64_t first = xfer_ch_keep_first(ch);
    xfer_status_t st = XFER_SUCCESS;
    int i = 0;
    if (!k->on)
        return XFER_SUCCESS;
    /* A reader's releases reach rank 0 of the side, which passes them on: a rank the loss cut off
     * first may still keep a step the reader released (the side's ranks one step apart). The
     * furthest rank knows best. */
    XFER_MPI_GOTO(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_UINT64_T, MPI_MAX, side), st, out);
    while (i < k->n && k->e[i].label < first)
        i++;
    drop_front(ch, i);
out:
    return st;
}

xfer_status_t xfer_ch_keep_replay(xfer_channel_t *ch, int pending)
{
    xfer_rt_keep_t *k = &ch->keep;
    xfer_status_t st = XFER_SUCCESS;
    char *rec;
    int i, own;

    if (!k->on)
        return XFER_SUCCESS;
    k->spilled = k->spilled_bytes = k->unsynced = k->unsynced_bytes = 0;
    k->synced = 0;
    for (i = 0; i < k->n; i++)
        k->e[i].idx = UINT64_MAX;
    ch->loss.base = xfer_ch_keep_first(ch); /* (the fresh stream's step 0) */
    for (i = 0; i < k->n; i++) {
        xfer_rt_kept_t *e = &k->e[i];
        XFER_CHECK_GOTO(load(ch, e, &rec, &own), st, lost);
        st = send_rec(ch, rec);
        if (own)
            xfer_free(rec);
        if (st != XFER_SUCCESS)
            goto lost;
        e->idx = ch->cur - 1;
        if (e->sent)
            ch->stats.steps_sent--; /* (counted when it was first sent) */
        else
            ch->stats.steps_unsent--;
        e->sent = 1;
    }
    if (pending) { /* the step whose end spill's bound refused: the application's, sent now */
        XFER_CHECK_GOTO(send_rec(ch, k->pend), st, lost);
        XFER_CHECK_GOTO(xfer_ch_keep_ended(ch, 1, ch->cur - 1, 0), st, lost);
        ch->stats.steps++;
    }
    trim(ch);
    return XFER_SUCCESS;
lost:
    /* the new reader went away in turn: detached again, what is kept stays */
    return xfer_ch_loss_take(ch, st) ? XFER_SUCCESS : st;
}
