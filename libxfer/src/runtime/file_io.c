/* SPDX-License-Identifier: BSD-3-Clause */
/* The file transport's files (file.h): where they go, the HDF5 adapter that writes and reads
 * them, the manifest and marker files, a step's file written (file_read.c reads it). */
#define _GNU_SOURCE /* dladdr */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xfer/adapter.h>

#include "file.h"

#define MANIFEST_MAGIC "xfer file transport 1"

/* ---- the adapter ------------------------------------------------------------------------ */

/* Loaded once per process and never unloaded: HDF5 registers exit handlers of its own. */
static pthread_mutex_t adapter_lock = PTHREAD_MUTEX_INITIALIZER;
static const xfer_adapter_ops_t *adapter_ops;
static const char *(*adapter_err)(void);
static char adapter_why[2048];

static int try_adapter(const char *path)
{
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const xfer_adapter_ops_t *(*fn)(void);
    const size_t o = strlen(adapter_why);
    if (!dl) {
        snprintf(adapter_why + o, sizeof(adapter_why) - o, "%s%s", o ? "; " : "", dlerror());
        return 0;
    }
    *(void **) &fn = dlsym(dl, "xfer_adapter_hdf5");
    *(void **) &adapter_err = dlsym(dl, "xfer_adapter_error");
    if (!fn || !adapter_err || !(adapter_ops = fn())) {
        snprintf(adapter_why + o, sizeof(adapter_why) - o, "%s%s: not libxfer's HDF5 adapter",
                 o ? "; " : "", path);
        adapter_ops = NULL;
        dlclose(dl);
        return 0;
    }
    return 1; /* dl stays open for the life of the process */
}

/* XFER_HDF5_ADAPTER, else beside libxfer.so (installed), else in the build tree's layout, else
 * the dynamic linker's search. */
static void find_adapter(void)
{
    const char *env = xfer_env_str("XFER_HDF5_ADAPTER");
    Dl_info info;
    char path[4096];
    if (env) {
        try_adapter(env);
        return;
    }
    if (dladdr((void *) (uintptr_t) xfer_init, &info) && info.dli_fname &&
        strchr(info.dli_fname, '/')) {
        const char *slash = strrchr(info.dli_fname, '/');
        const int n = (int) (slash - info.dli_fname);
        snprintf(path, sizeof(path), "%.*s/libxfer_hdf5.so", n, info.dli_fname);
        if (try_adapter(path))
            return;
        snprintf(path, sizeof(path), "%.*s/../adapters/hdf5/libxfer_hdf5.so", n, info.dli_fname);
        if (try_adapter(path))
            return;
    }
    try_adapter("libxfer_hdf5.so");
}

void xfer_file_rows_of(const xfer_channel_t *ch, int j, uint64_t *total, uint64_t *first)
{
    const xfer_file_t *f = ch->file;
    int r;
    *total = *first = 0;
    for (r = 0; r < ch->nlocal; r++) {
        if (r == ch->me)
            *first = *total;
        *total += f->rows[(size_t) r * (size_t) f->njoined + (size_t) j];
    }
}

xfer_status_t xfer_file_load_adapter(xfer_channel_t *ch)
{
    pthread_mutex_lock(&adapter_lock);
    if (!adapter_ops && !adapter_why[0])
        find_adapter();
    ch->file->ops = adapter_ops;
    ch->file->adapter_error = adapter_err;
    pthread_mutex_unlock(&adapter_lock);
    if (!ch->file->ops)
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                        "channel %s: transport: file needs libxfer's HDF5 adapter "
                        "(libxfer_hdf5.so, built where parallel HDF5 is found; XFER_HDF5_ADAPTER "
                        "names it): %s",
                        ch->cfg->name, adapter_why);
    return XFER_SUCCESS;
}

/* The adapter's failure as this channel's error. */
xfer_status_t xfer_file_adapter_fail(const xfer_channel_t *ch, xfer_status_t st, const char *what)
{
    return xfer_err_raw(st, "channel %s: %s: %s", ch->cfg->name, what, ch->file->adapter_error());
}

/* HDF5's metadata in a step's file: at most this much, and this much per dataset */
#define RESERVE_BASE        (16u << 10)
#define RESERVE_PER_DATASET (4u << 10)

/* What to do about a file system that failed the sending side. */
#define ROOM_HINT                                                                                  \
    "free space there, or point the channel's file.dir (or XFER_TRANSPORT_DIR) at a file "         \
    "system with room"

/* A marker that could not be written at @p path (errno @p e), with what to do about it. */
static xfer_status_t marker_fail(const xfer_channel_t *ch, const char *path, int e)
{
    const xfer_status_t st = xfer_adapter_errno_status(e);
    return XFER_ERR(st, "channel %s: cannot write %s: %s%s%s", ch->cfg->name, path, strerror(e),
                    st == XFER_ERR_IO ? "; " : "", st == XFER_ERR_IO ? ROOM_HINT : "");
}

/* The adapter's failure to write a step's file: a file system's failure says what to do. */
static xfer_status_t write_fail(const xfer_channel_t *ch, xfer_status_t st, const char *what)
{
    if (st != XFER_ERR_IO)
        return xfer_file_adapter_fail(ch, st, what);
    /* the adapter's words shortened, if need be, so that the hint fits in an error message */
    const int room = 1000 - (int) (strlen(ch->cfg->name) + strlen(what) + sizeof(ROOM_HINT));
    return xfer_err_raw(st, "channel %s: %s: %.*s; %s", ch->cfg->name, what,
                        room > 200 ? room : 200, ch->file->adapter_error(), ROOM_HINT);
}

/* ---- paths and markers ------------------------------------------------------------------ */

void xfer_file_path(const xfer_channel_t *ch, const xfer_file_side_t *s, const char *what,
                    char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s.%s", ch->file->dir, s->name, what);
}

void xfer_file_step_path(const xfer_channel_t *ch, const xfer_file_side_t *s, uint64_t step,
                         char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s.%06llu.h5", ch->file->dir, s->name, (unsigned long long) step);
}

/* mkdir -p */
xfer_status_t xfer_file_make_dir(xfer_channel_t *ch)
{
    char p[sizeof(ch->file->dir)];
    size_t i;
    snprintf(p, sizeof(p), "%s", ch->file->dir);
    for (i = 1; p[i]; i++) {
        if (p[i] != '/')
            continue;
        p[i] = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            break;
        p[i] = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        const int e = errno;
        return XFER_ERR(xfer_adapter_errno_status(e),
                        "channel %s: transport: file: cannot create the directory %s: %s",
                        ch->cfg->name, p, strerror(e));
    }
    return XFER_SUCCESS;
}

/* A marker is written to PATH.tmp, then renamed. The tmp file is not truncated first: room
 * taken for it earlier (reserve_marker) is reused, so a disk that filled since cannot refuse
 * it; it is cut to the text's length after. */
xfer_status_t xfer_file_write_marker(xfer_channel_t *ch, const char *path, const char *run,
                                     const char *extra)
{
    char tmp[1200], *text;
    size_t len, done = 0;
    int fd, e = 0;
    const int n = snprintf(NULL, 0, "run %s\n%s", run, extra);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (n < 0 || !(text = xfer_calloc(1, (size_t) n + 1)))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: marker %s", ch->cfg->name, path);
    len = (size_t) snprintf(text, (size_t) n + 1, "run %s\n%s", run, extra);
    if ((fd = open(tmp, O_WRONLY | O_CREAT, 0644)) < 0) {
        e = errno;
        xfer_free(text);
        return marker_fail(ch, tmp, e);
    }
    while (done < len && !e) {
        const ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno != EINTR)
            e = errno;
        else if (w > 0)
            done += (size_t) w;
    }
    if (!e && (ftruncate(fd, (off_t) len) != 0 || fsync(fd) != 0))
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) != 0)
        e = errno;
    xfer_free(text);
    if (e) {
        unlink(tmp);
        return marker_fail(ch, path, e);
    }
    return XFER_SUCCESS;
}

/* Room for a marker written later (its PATH.tmp, MARKER_ROOM bytes taken now): the end marker
 * is the receiver's only word that the steps ended; were the disk full by then, it would wait
 * for it for ever while this side, still alive, waits for the receiver on another channel. */
#define MARKER_ROOM 4096
xfer_status_t xfer_file_reserve_marker(xfer_channel_t *ch, const char *path)
{
    char tmp[2048];
    int fd, e;
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
        e = errno;
        return marker_fail(ch, tmp, e);
    }
    e = posix_fallocate(fd, 0, MARKER_ROOM);
    if (e == EOPNOTSUPP || e == EINVAL) { /* a file system without it: zeros take the room */
        static const char zeros[MARKER_ROOM];
        e = write(fd, zeros, sizeof(zeros)) == (ssize_t) sizeof(zeros) ? 0 : (errno ? errno : EIO);
    }
    if (close(fd) != 0 && !e)
        e = errno;
    if (e) {
        unlink(tmp);
        return marker_fail(ch, tmp, e);
    }
    return XFER_SUCCESS;
}

xfer_status_t xfer_file_start_receiver(xfer_channel_t *ch)
{
    xfer_file_t *f = ch->file;
    char path[sizeof(f->dir) + 300];
    xfer_status_t st;
    XFER_CHECK_GOTO(xfer_file_make_dir(ch), st, out);
    xfer_file_path(ch, &f->own, "closed", path, sizeof(path));
    XFER_CHECK_GOTO(xfer_file_reserve_marker(ch, path), st, out);
    if (f->keep) {
        xfer_file_path(ch, &f->own, "released", path, sizeof(path));
        st = xfer_file_reserve_marker(ch, path);
    }
out:
    return st;
}

void xfer_file_drop_reserved(xfer_channel_t *ch)
{
    static const char *const what[] = {"end.tmp", "closed.tmp", "released.tmp"};
    char path[sizeof(ch->file->dir) + 300];
    size_t i;
    for (i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
        xfer_file_path(ch, &ch->file->own, what[i], path, sizeof(path));
        unlink(path);
    }
}

/* The value of line "KEY value" of a marker or manifest (NULL: none) */
static const char *line_value(const char *text, const char *key, char *buf, size_t len)
{
    const size_t kl = strlen(key);
    const char *p = text;
    while (p && *p) {
        if (strncmp(p, key, kl) == 0 && p[kl] == ' ') {
            const char *e = strchr(p, '\n');
            snprintf(buf, len, "%.*s", (int) (e ? (size_t) (e - p - kl - 1) : strlen(p + kl + 1)),
                     p + kl + 1);
            return buf;
        }
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return NULL;
}

/* A small text file whole, NUL-terminated (NULL: not there or unreadable). */
static char *slurp(const char *path, size_t cap)
{
    FILE *fp = fopen(path, "r");
    char *buf;
    size_t n;
    if (!fp)
        return NULL;
    buf = xfer_calloc(1, cap + 1);
    n = buf ? fread(buf, 1, cap, fp) : 0;
    fclose(fp);
    if (buf)
        buf[n] = '\0';
    return buf;
}

int xfer_file_read_marker(const xfer_channel_t *ch, const char *path, const char *run, int64_t *n)
{
    char *text = slurp(path, 4096), v[160];
    int ok = 0;
    (void) ch;
    if (!text)
        return 0;
    if (line_value(text, "run", v, sizeof(v)) && strcmp(v, run) == 0) {
        ok = 1;
        if (n)
            *n = line_value(text, "steps", v, sizeof(v)) ? strtoll(v, NULL, 10) : -1;
    }
    xfer_free(text);
    return ok;
}

int xfer_file_marker_value(const char *path, const char *run, const char *key, char *val,
                           size_t len)
{
    char *text = slurp(path, 4096), v[160];
    int ok = 0;
    if (len)
        val[0] = '\0';
    if (!text)
        return 0;
    if (line_value(text, "run", v, sizeof(v)) && strcmp(v, run) == 0) {
        ok = 1;
        if (!line_value(text, key, val, len) && len)
            val[0] = '\0';
    }
    xfer_free(text);
    return ok;
}

/* ---- the manifest ------------------------------------------------------------------------ */

/* "dataset NAME TYPE[d0,d1,...]" of dataset @p i, as both sides write it. */
static void dataset_line(const xfer_channel_t *ch, int i, char *buf, size_t len)
{
    const xfer_cfg_dataset_t *d = &ch->cfg->datasets[i];
    size_t o = (size_t) snprintf(buf, len, "dataset %s %s[", d->name, xfer_type_name(d->type));
    int k;
    for (k = 0; k < d->ndims && o < len; k++)
        o += (size_t) snprintf(buf + o, len - o, "%s%llu", k ? "," : "",
                               (unsigned long long) d->dims[k]);
    if (o < len)
        snprintf(buf + o, len - o, "]");
}

/* Is @p name a file of side @p s: NAME.run, NAME.end, NAME.DIGITS.h5 (or one of their .tmp)? */
static int is_side_file(const char *file, const char *name)
{
    const size_t nl = strlen(name);
    const char *p;
    if (strncmp(file, name, nl) != 0 || file[nl] != '.')
        return 0;
    p = file + nl + 1;
    if (!strcmp(p, "run") || !strcmp(p, "end") || !strcmp(p, "run.tmp") || !strcmp(p, "end.tmp") ||
        !strcmp(p, "attached") || !strcmp(p, "attached.tmp"))
        return 1;
    if (*p < '0' || *p > '9')
        return 0;
    while (*p >= '0' && *p <= '9')
        p++;
    return !strcmp(p, ".h5") || !strcmp(p, ".h5.tmp");
}

xfer_status_t xfer_file_start_side(xfer_channel_t *ch)
{
    xfer_file_t *f = ch->file;
    char path[sizeof(f->dir) + 300], *table = NULL;
    size_t o = 0, cap = 4096;
    xfer_status_t st;
    DIR *dir;
    struct dirent *e;
    int i;

    XFER_CHECK_GOTO(xfer_file_make_dir(ch), st, out);
    /* an earlier run's files of this side go, as an output file is overwritten */
    if ((dir = opendir(f->dir))) {
        while ((e = readdir(dir)))
            if (is_side_file(e->d_name, f->own.name)) {
                snprintf(path, sizeof(path), "%s/%s", f->dir, e->d_name);
                if (unlink(path) != 0 && errno != ENOENT) {
                    st = XFER_ERR(xfer_adapter_errno_status(errno),
                                  "channel %s: cannot remove %s, a step file of an earlier run: "
                                  "%s",
                                  ch->cfg->name, path, strerror(errno));
                    closedir(dir);
                    goto out;
                }
            }
        closedir(dir);
    }
    if (!(table = xfer_calloc(1, cap))) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "manifest");
        goto out;
    }
    o += (size_t) snprintf(table + o, cap - o, "workflow %s\nchannel %s\nsender %s\n",
                           ch->x->cfg->workflow, ch->cfg->name, f->own.name);
    for (i = 0; i < ch->nds && o < cap; i++) {
        char line[300];
        if (!ch->ds[i].out)
            continue;
        dataset_line(ch, i, line, sizeof(line));
        o += (size_t) snprintf(table + o, cap - o, "%s\n", line);
    }
    if (o < cap)
        snprintf(table + o, cap - o, "%s\n", MANIFEST_MAGIC);
    xfer_file_path(ch, &f->own, "end", path, sizeof(path));
    XFER_CHECK_GOTO(xfer_file_reserve_marker(ch, path), st, out);
    xfer_file_path(ch, &f->own, "run", path, sizeof(path));
    st = xfer_file_write_marker(ch, path, f->run, table);
out:
    xfer_free(table);
    return st;
}

xfer_status_t xfer_file_read_manifest(xfer_channel_t *ch, int *found)
{
    xfer_file_t *f = ch->file;
    char path[1200], run[sizeof(ch->file->peer.run)], *text;
    const char *p;
    int i;

    *found = 0;
    xfer_file_path(ch, &f->peer, "run", path, sizeof(path));
    if (!(text = slurp(path, 1 << 20)))
        return XFER_SUCCESS;
    if (!strstr(text, MANIFEST_MAGIC "\n") || !line_value(text, "run", run, sizeof(run))) {
        xfer_free(text); /* being written over (an earlier run's): not this run's yet */
        return XFER_SUCCESS;
    }
    if (ch->x->run_id[0] && strcmp(run, ch->x->run_id) != 0) {
        xfer_free(text); /* an earlier run's: this run's sender has not started yet */
        return XFER_SUCCESS;
    }
    /* the datasets the peer sends, alike on both sides */
    for (i = 0; i < ch->nds; i++) {
        char line[300];
        if (ch->ds[i].out)
            continue;
        dataset_line(ch, i, line, sizeof(line));
        if (!(p = strstr(text, line)) || (p[strlen(line)] != '\n')) {
            char theirs[300] = "", key[300];
            const char *q;
            snprintf(key, sizeof(key), "dataset %s ", ch->cfg->datasets[i].name);
            if ((q = strstr(text, key))) {
                const char *e = strchr(q, '\n');
                snprintf(theirs, sizeof(theirs), "%.*s",
                         (int) (e ? (size_t) (e - q) : strlen(q)) - (int) strlen(key),
                         q + strlen(key));
            }
            xfer_free(text);
            return XFER_ERR(XFER_ERR_MISMATCH,
                            "channel %s: dataset %s: %s at %s, %s at %s (its manifest %s)",
                            ch->cfg->name, ch->cfg->datasets[i].name, line + strlen(key),
                            xfer_ch_side_name(ch, ch->side), theirs[0] ? theirs : "missing",
                            f->peer.name, path);
        }
    }
    for (p = text; (p = strstr(p, "\ndataset ")); p++) {
        char name[200];
        int known = 0;
        sscanf(p + 9, "%199s", name);
        for (i = 0; i < ch->nds; i++)
            known |= !ch->ds[i].out && !strcmp(ch->ds[i].cfg->name, name);
        if (!known) {
            xfer_free(text);
            return XFER_ERR(XFER_ERR_MISMATCH,
                            "channel %s: dataset %s: declared at %s (its manifest %s), missing "
                            "at %s",
                            ch->cfg->name, name, f->peer.name, path,
                            xfer_ch_side_name(ch, ch->side));
        }
    }
    snprintf(f->peer.run, sizeof(f->peer.run), "%s", run);
    xfer_free(text);
    *found = 1;
    return XFER_SUCCESS;
}

/* ---- a step's file ----------------------------------------------------------------------- */

/* This rank's blocks of fixed-shape dataset @p d in the step (@p mine: it put it): one write when
 * no rank of the side put more than one (every rank knows: d->side_max, ch_blocks.c), else the
 * adapter's write of several boxes. Collective over the side. */
static xfer_status_t write_fixed(xfer_channel_t *ch, void *h, const xfer_adapter_var_t *v,
                                 const xfer_rt_dset_t *d, int mine)
{
    const xfer_file_t *f = ch->file;
    const struct xfer_adapter_ops *ops = f->ops;
    const int nd = v->ndims, n = mine ? d->put.n : 0, i = (int) (d - ch->ds);
    const uint64_t z[XFER_MAX_DIMS] = {0};
    uint64_t *s = NULL, *c = NULL;
    const void **bufs = NULL;
    xfer_status_t st;
    int b;

    if (d->side_max <= 1)
        return ops->write(h, 0, v, n ? d->put.box : z, n ? d->put.box + nd : z,
                          n ? f->blk_at[i] : NULL);
    if (!ops->write_boxes) /* (every rank alike: side_max is the side's) */
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                        "channel %s: dataset %s: the %s adapter cannot write several blocks of a "
                        "rank",
                        ch->cfg->name, d->cfg->name, ops->name);
    s = xfer_calloc((size_t) n * (size_t) nd + 1, sizeof(uint64_t));
    c = xfer_calloc((size_t) n * (size_t) nd + 1, sizeof(uint64_t));
    bufs = xfer_calloc((size_t) n + 1, sizeof(*bufs));
    st = xfer_rt_agree(ch->x->comm, s && c && bufs ? XFER_SUCCESS
                                                   : XFER_ERR(XFER_ERR_NO_MEMORY,
                                                              "channel %s: dataset %s: %d blocks",
                                                              ch->cfg->name, d->cfg->name, n));
    for (b = 0; st == XFER_SUCCESS && b < n; b++) {
        memcpy(s + (size_t) b * nd, d->put.box + (size_t) b * 2 * nd, (size_t) nd * sizeof(*s));
        memcpy(c + (size_t) b * nd, d->put.box + (size_t) b * 2 * nd + nd,
               (size_t) nd * sizeof(*c));
        bufs[b] = (const char *) f->blk[i] + d->put.pk[b];
    }
    if (st == XFER_SUCCESS)
        st = ops->write_boxes(h, 0, v, n, s, c, bufs);
    xfer_free(s);
    xfer_free(c);
    xfer_free(bufs);
    return st;
}

/* The step's attributes (encoded) as the adapter's: names and values point into @p enc. */
static xfer_status_t decode_attrs(const char *enc, size_t len, xfer_adapter_attr_t **out, int *n)
{
    xfer_ch_attr_t a;
    size_t o = 0;
    int k = 0;
    *out = NULL;
    *n = 0;
    while (xfer_ch_attr_next(enc, len, &o, &a))
        k++;
    if (k == 0)
        return XFER_SUCCESS;
    if (!(*out = xfer_calloc((size_t) k, sizeof(**out))))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "attributes");
    for (o = 0; xfer_ch_attr_next(enc, len, &o, &a); (*n)++) {
        xfer_adapter_attr_t *t = &(*out)[*n];
        snprintf(t->name, sizeof(t->name), "%s", a.name);
        t->is_text = a.is_string;
        t->type = a.type;
        t->count = a.is_string ? (a.count ? a.count - 1 : 0) : a.count; /* text: no NUL */
        t->data = (void *) (uintptr_t) a.values;
    }
    return XFER_SUCCESS;
}

xfer_status_t xfer_file_write_step(xfer_channel_t *ch, uint64_t mask, const char *attrs,
                                   size_t attrs_len)
{
    xfer_file_t *f = ch->file;
    const xfer_adapter_ops_t *ops = f->ops;
    xfer_adapter_wopts_t o;
    xfer_adapter_var_t root, meta;
    xfer_adapter_attr_t ma[4];
    char path[1200], what[1300];
    uint64_t step = ch->cur, z[XFER_MAX_DIMS] = {0};
    uint64_t *per_rank = NULL; /* a joined dataset's rows on each rank */
    void *h = NULL;
    xfer_status_t st;
    int i, j, r;

    memset(&o, 0, sizeof(o));
    o.layout = XFER_ADAPTER_SAME_PATHS;
    if (f->njoined && !(per_rank = xfer_calloc((size_t) ch->nlocal, sizeof(*per_rank))))
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: step %llu: %d ranks' rows", ch->cfg->name,
                      (unsigned long long) step, ch->nlocal);
    else
        st = XFER_SUCCESS;
    st = xfer_rt_agree(ch->x->comm, st);
    if (st != XFER_SUCCESS)
        return st;
    /* what the file will hold, reserved before anything is written: a disk without room fails
     * the step at its creation, on every rank alike (docs/runtime.md, "Stream or file"): the
     * datasets whole, the attributes, and room for HDF5's metadata */
    o.reserve_bytes = RESERVE_BASE + 2 * (uint64_t) attrs_len;
    for (i = 0, j = 0; i < ch->nds; i++) {
        const xfer_cfg_dataset_t *c = ch->ds[i].cfg;
        uint64_t rows = 0, first;
        if (ch->ds[i].out && c->joined)
            xfer_file_rows_of(ch, j++, &rows, &first);
        if (ch->ds[i].out && (mask >> ch->ds[i].bit & 1u)) {
            const uint64_t raw =
                ch->ds[i].esize * (c->joined     ? rows * xfer_ch_volume(c->ndims - 1, c->dims + 1)
                                   : c->variable ? xfer_ch_volume(c->ndims, ch->ds[i].sdims)
                                                 : xfer_ch_volume(c->ndims, c->dims));
            /* deflated: what data that does not compress may grow by (stored blocks, the
             * chunk index), on top of its raw size */
            o.reserve_bytes += RESERVE_PER_DATASET + raw +
                               (c->compression != XFER_COMPRESSION_NONE ? raw / 256 + 4096 : 0);
        }
    }
    memset(&root, 0, sizeof(root));
    memset(&meta, 0, sizeof(meta));
    memset(ma, 0, sizeof(ma));
    xfer_file_step_path(ch, &f->own, step, path, sizeof(path));
    { /* the step, its file and its datasets, for the messages */
        size_t len = (size_t) snprintf(what, sizeof(what), "step %llu: writing %s (datasets",
                                       (unsigned long long) step, path);
        const char *sep = " ";
        for (i = 0; i < ch->nds && len < sizeof(what); i++)
            if (ch->ds[i].out && (mask >> ch->ds[i].bit & 1u)) {
                len += (size_t) snprintf(what + len, sizeof(what) - len, "%s%s", sep,
                                         ch->ds[i].cfg->name);
                sep = ", ";
            }
        if (len < sizeof(what))
            snprintf(what + len, sizeof(what) - len, ")");
    }
    snprintf(root.name, sizeof(root.name), "/");
    st = xfer_rt_agree(ch->x->comm, decode_attrs(attrs, attrs_len, &root.attrs, &root.nattrs));
    if (st != XFER_SUCCESS) {
        xfer_free(root.attrs);
        xfer_free(per_rank);
        return st;
    }
    if ((st = ops->create(path, ch->x->comm, &o, &h)) != XFER_SUCCESS) {
        xfer_free(root.attrs);
        xfer_free(per_rank);
        return write_fail(ch, st, what);
    }
    if ((st = ops->write_group(h, 0, &root)) != XFER_SUCCESS)
        goto fail;
    snprintf(meta.name, sizeof(meta.name), META_GROUP);
    snprintf(ma[0].name, sizeof(ma[0].name), "run");
    ma[0].is_text = 1;
    ma[0].count = strlen(f->run);
    ma[0].data = f->run;
    snprintf(ma[1].name, sizeof(ma[1].name), "sender");
    ma[1].is_text = 1;
    ma[1].count = strlen(f->own.name);
    ma[1].data = (void *) (uintptr_t) f->own.name;
    snprintf(ma[2].name, sizeof(ma[2].name), "step");
    ma[2].type = XFER_TYPE_UINT64;
    ma[2].count = 1;
    ma[2].data = &step;
    snprintf(ma[3].name, sizeof(ma[3].name), "datasets_put");
    ma[3].type = XFER_TYPE_UINT64;
    ma[3].count = 1;
    ma[3].data = &mask;
    meta.nattrs = 4;
    meta.attrs = ma;
    if ((st = ops->write_group(h, 0, &meta)) != XFER_SUCCESS)
        goto fail;
    for (i = 0, j = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        const int mine = (int) (f->mask >> d->bit & 1u);
        uint64_t start[XFER_MAX_DIMS];
        xfer_adapter_attr_t rows;
        xfer_adapter_var_t v;
        if (!d->out || !(mask >> d->bit & 1u)) {
            j += d->out && d->cfg->joined;
            continue;
        }
        memset(&v, 0, sizeof(v));
        snprintf(v.name, sizeof(v.name), "/%s", d->cfg->name);
        v.type = d->cfg->type;
        v.record = d->cfg->record; /* a record: the adapter writes a compound of its fields */
        v.ndims = d->cfg->ndims;
        /* compressed: HDF5's deflate, lossless, whatever the codec (docs/runtime.md) */
        v.deflate = d->cfg->compression != XFER_COMPRESSION_NONE ? XFER_FILE_DEFLATE : 0;
        /* (a variable shape: the one the ranks agreed for the step at its commit) */
        memcpy(v.dims, d->cfg->variable ? d->sdims : d->cfg->dims,
               (size_t) v.ndims * sizeof(uint64_t));
        memcpy(start, mine && d->dyn ? d->start : z, (size_t) v.ndims * sizeof(uint64_t));
        if (d->cfg->joined) { /* the step's rows, in rank order; each rank's count beside them */
            xfer_file_rows_of(ch, j, &v.dims[0], &start[0]);
            memset(&rows, 0, sizeof(rows));
            snprintf(rows.name, sizeof(rows.name), JOINED_ROWS);
            rows.type = XFER_TYPE_UINT64;
            rows.count = (size_t) ch->nlocal;
            for (r = 0; r < ch->nlocal; r++)
                per_rank[r] = f->rows[(size_t) r * (size_t) f->njoined + (size_t) j];
            rows.data = per_rank;
            v.nattrs = 1;
            v.attrs = &rows;
            j++;
        }
        if (!d->dyn) /* a fixed shape: this rank's blocks of the step */
            st = write_fixed(ch, h, &v, d, mine);
        else
            st = ops->write(h, 0, &v, start, mine ? d->count : z, mine ? f->blk_at[i] : NULL);
        if (st != XFER_SUCCESS)
            goto fail;
    }
    if ((st = ops->end_step(h, 0)) != XFER_SUCCESS || (st = ops->commit(&h)) != XFER_SUCCESS)
        goto fail;
    xfer_free(root.attrs);
    xfer_free(per_rank);
    return XFER_SUCCESS;
fail:
    st = write_fail(ch, st, what);
    ops->abort(&h); /* no step completed: nothing is left under either name */
    xfer_free(root.attrs);
    xfer_free(per_rank);
    return st;
}
