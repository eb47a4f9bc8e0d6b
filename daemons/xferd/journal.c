/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd's journal: one record per state change, a 4-byte big-endian length and a MessagePack
 * map (the codec of the control messages). Read back on start (a torn or corrupt tail ends the
 * replay and is dropped), then rewritten compactly (a temporary file renamed over the journal)
 * and appended to; records that a client acts on (register, publish, bye, failed) reach the
 * disk before the reply, steps and releases only the kernel. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xferd.h"

/* Past this many appended bytes the journal is compacted while running. */
#define JOURNAL_COMPACT_BYTES ((int64_t) 64 << 20)

struct xferd_journal {
    char *path;
    int fd;
    int64_t size; /* bytes in the file */
    int64_t base; /* size right after the last compaction */
};

static xfer_status_t write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return XFER_ERR_INTERNAL;
        p += w;
        n -= (size_t) w;
    }
    return XFER_SUCCESS;
}

/* Encode @p rec as one length-prefixed record into a malloc'ed buffer. */
static xfer_status_t frame(const xfer_ctl_msg_t *rec, unsigned char **out, size_t *len)
{
    void *body;
    size_t n;
    unsigned char *p;
    xfer_status_t st = xfer_ctl_encode(rec, XFER_CTL_MAX_MSG, &body, &n);

    if (st != XFER_SUCCESS)
        return st;
    p = malloc(n + 4);
    if (!p) {
        free(body);
        return XFER_ERR_NO_MEMORY;
    }
    p[0] = (unsigned char) (n >> 24);
    p[1] = (unsigned char) (n >> 16);
    p[2] = (unsigned char) (n >> 8);
    p[3] = (unsigned char) n;
    memcpy(p + 4, body, n);
    free(body);
    *out = p;
    *len = n + 4;
    return XFER_SUCCESS;
}

typedef struct put_ctx {
    xferd_t *d;
    int fd;
    int64_t size;
} put_ctx_t;

static xfer_status_t put(void *ctx, xfer_ctl_msg_t *rec)
{
    put_ctx_t *pc = ctx;
    unsigned char *buf;
    size_t len;
    xfer_status_t st = frame(rec, &buf, &len);

    if (st != XFER_SUCCESS)
        return st;
    st = write_all(pc->fd, buf, len);
    free(buf);
    if (st == XFER_SUCCESS)
        pc->size += (int64_t) len;
    return st;
}

static void sync_dir(const char *path)
{
    char *copy = strdup(path);
    int fd;

    if (!copy)
        return;
    fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

/* Write the current state to PATH.tmp, rename it over PATH and append to it from then on. */
static xfer_status_t compact(xferd_t *d, xferd_journal_t *jr)
{
    size_t n = strlen(jr->path) + 8;
    char *tmp = malloc(n);
    xfer_ctl_msg_t *hdr = NULL;
    put_ctx_t pc = {d, -1, 0};
    xfer_status_t st = XFER_ERR_NO_MEMORY;
    int fd;

    if (!tmp)
        return st;
    snprintf(tmp, n, "%s.tmp", jr->path);
    pc.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (pc.fd < 0) {
        xferd_log(d, XFERD_ERROR, "journal: cannot create %s: %s", tmp, strerror(errno));
        free(tmp);
        return XFER_ERR_INTERNAL;
    }
    if ((st = xfer_ctl_msg_new("xferd", &hdr)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_str(hdr, "wf", d->cfg->workflow)) == XFER_SUCCESS &&
        (st = xfer_ctl_set_int(hdr, "gen", d->gen)) == XFER_SUCCESS &&
        (st = put(&pc, hdr)) == XFER_SUCCESS)
        st = xferd_snapshot(d, put, &pc);
    xfer_ctl_msg_free(&hdr);
    if (st == XFER_SUCCESS && fsync(pc.fd) != 0)
        st = XFER_ERR_INTERNAL;
    if (close(pc.fd) != 0 && st == XFER_SUCCESS)
        st = XFER_ERR_INTERNAL;
    if (st == XFER_SUCCESS && rename(tmp, jr->path) != 0)
        st = XFER_ERR_INTERNAL;
    if (st != XFER_SUCCESS) {
        xferd_log(d, XFERD_ERROR, "journal: cannot rewrite %s: %s", jr->path,
                  errno ? strerror(errno) : xfer_status_string(st));
        unlink(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    sync_dir(jr->path);
    fd = open(jr->path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        xferd_log(d, XFERD_ERROR, "journal: cannot open %s: %s", jr->path, strerror(errno));
        return XFER_ERR_INTERNAL;
    }
    if (jr->fd >= 0)
        close(jr->fd);
    jr->fd = fd;
    jr->size = jr->base = pc.size;
    return XFER_SUCCESS;
}

/* Read @p path back into @p d. A missing file is a fresh start; a file of another workflow is
 * refused; a torn or corrupt record ends the replay (what follows is dropped by compaction). */
static xfer_status_t replay(xferd_t *d, const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char hdr[4], *buf = NULL;
    long records = 0, skipped = 0, off = 0;
    const char *torn = NULL;
    xfer_status_t st = XFER_SUCCESS;

    if (!f) {
        if (errno == ENOENT)
            return XFER_SUCCESS;
        xferd_log(d, XFERD_ERROR, "journal: cannot open %s: %s", path, strerror(errno));
        return XFER_ERR_INTERNAL;
    }
    buf = malloc(XFER_CTL_MAX_MSG);
    if (!buf) {
        fclose(f);
        return XFER_ERR_NO_MEMORY;
    }
    for (;;) {
        xfer_ctl_msg_t *rec = NULL;
        size_t got = fread(hdr, 1, 4, f);
        uint32_t len;

        if (got == 0 && feof(f))
            break;
        if (got < 4) {
            torn = "a torn record length";
            break;
        }
        len = (uint32_t) hdr[0] << 24 | (uint32_t) hdr[1] << 16 | (uint32_t) hdr[2] << 8 | hdr[3];
        if (len == 0 || len > XFER_CTL_MAX_MSG) {
            torn = "an impossible record length";
            break;
        }
        if (fread(buf, 1, len, f) != len) {
            torn = "a torn record";
            break;
        }
        if (xfer_ctl_decode(buf, len, XFER_CTL_MAX_MSG, &rec) != XFER_SUCCESS) {
            xfer_ctl_msg_free(&rec);
            torn = "an unreadable record";
            break;
        }
        if (records == 0) {
            const char *wf = xfer_ctl_str(rec, "wf", "");
            if (strcmp(xfer_ctl_op(rec), "xferd") != 0) {
                xfer_ctl_msg_free(&rec);
                torn = "no journal header";
                break;
            }
            if (strcmp(wf, d->cfg->workflow) != 0) {
                xferd_log(d, XFERD_ERROR,
                          "journal %s belongs to workflow \"%.64s\", not \"%s\": remove it or "
                          "pass another --journal",
                          path, wf, d->cfg->workflow);
                xfer_ctl_msg_free(&rec);
                st = XFER_ERR_CONFIG;
                break;
            }
        }
        if (!xferd_apply_record(d, rec))
            skipped++;
        xfer_ctl_msg_free(&rec);
        records++;
        off += 4 + (long) len;
    }
    free(buf);
    fclose(f);
    if (st != XFER_SUCCESS)
        return st;
    if (torn)
        xferd_log(d, XFERD_WARN, "journal %s: %s at offset %ld: the rest is dropped", path, torn,
                  off);
    if (skipped)
        xferd_log(d, XFERD_WARN, "journal %s: %ld records do not fit this workflow (skipped)", path,
                  skipped);
    if (records > 0) {
        d->recovered = 1;
        xferd_after_replay(d);
        xferd_log(d, XFERD_INFO, "journal %s: recovered from %ld records", path, records);
    }
    return XFER_SUCCESS;
}

xfer_status_t xferd_journal_open(xferd_t *d, const char *path)
{
    xferd_journal_t *jr = calloc(1, sizeof(*jr));
    xfer_status_t st;

    if (!jr || !(jr->path = strdup(path))) {
        free(jr);
        return XFER_ERR_NO_MEMORY;
    }
    jr->fd = -1;
    d->jr = jr;
    if ((st = replay(d, path)) != XFER_SUCCESS || (st = compact(d, jr)) != XFER_SUCCESS) {
        xferd_journal_close(d);
        return st;
    }
    return XFER_SUCCESS;
}

xfer_status_t xferd_journal_append(xferd_t *d, const xfer_ctl_msg_t *rec, int sync)
{
    xferd_journal_t *jr = d->jr;
    unsigned char *buf;
    size_t len;
    xfer_status_t st;

    if (!jr || jr->fd < 0)
        return XFER_ERR_STATE;
    if ((st = frame(rec, &buf, &len)) != XFER_SUCCESS)
        return st;
    st = write_all(jr->fd, buf, len);
    free(buf);
    if (st == XFER_SUCCESS && sync && fdatasync(jr->fd) != 0)
        st = XFER_ERR_INTERNAL;
    if (st != XFER_SUCCESS) {
        xferd_log(d, XFERD_ERROR, "journal %s: cannot append: %s", jr->path, strerror(errno));
        /* no torn record in the middle: later records must stay readable */
        if (ftruncate(jr->fd, (off_t) jr->size) != 0)
            xferd_log(d, XFERD_ERROR, "journal %s: cannot truncate: %s", jr->path, strerror(errno));
        return st;
    }
    jr->size += (int64_t) len;
    return XFER_SUCCESS;
}

void xferd_journal_maintain(xferd_t *d)
{
    xferd_journal_t *jr = d->jr;

    if (!jr || jr->fd < 0 || jr->size - jr->base <= JOURNAL_COMPACT_BYTES)
        return;
    xferd_log(d, XFERD_INFO, "journal %s: compacting %" PRId64 " bytes", jr->path, jr->size);
    /* on failure the old journal stays in use (nothing is lost); try again much later */
    if (compact(d, jr) != XFER_SUCCESS)
        jr->base = jr->size;
}

void xferd_journal_close(xferd_t *d)
{
    xferd_journal_t *jr = d->jr;

    if (!jr)
        return;
    if (jr->fd >= 0) {
        fdatasync(jr->fd);
        close(jr->fd);
    }
    free(jr->path);
    free(jr);
    d->jr = NULL;
}
