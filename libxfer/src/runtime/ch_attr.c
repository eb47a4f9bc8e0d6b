/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-step attributes (xfer_put_attr, xfer_get_attr): encoded records that travel after the
 * sending side's rank 0 header, in the room its contribution reserves (attributes_bytes).
 *
 * Record: u16 name length (without NUL), u8 kind (0 values, 1 string), u8 type, u32 count,
 * the name and its NUL, the values; padded to 8 bytes. */
#include <string.h>

#include "channel.h"

enum { ATTR_VALUES = 0, ATTR_STRING = 1, ATTR_FRAME = 8, ATTR_NAME_MAX = 255 };

static size_t rec_len(size_t name_len, size_t bytes)
{
    return (ATTR_FRAME + name_len + 1 + bytes + 7) & ~(size_t) 7;
}

typedef struct rec {
    const char *name;
    int kind;
    xfer_type_t type;
    size_t count, bytes, len;
    const char *values;
} rec_t;

/* The record at @p p (0: malformed). */
static int parse(const char *p, size_t left, rec_t *r)
{
    uint16_t nl;
    uint32_t cnt;
    if (left < ATTR_FRAME)
        return 0;
    memcpy(&nl, p, 2);
    memcpy(&cnt, p + 4, 4);
    r->kind = (unsigned char) p[2];
    r->type = (xfer_type_t) (unsigned char) p[3];
    r->count = cnt;
    r->bytes = r->kind == ATTR_STRING ? cnt : cnt * xfer_type_size(r->type);
    r->len = rec_len(nl, r->bytes);
    if (r->len > left || p[ATTR_FRAME + nl] != '\0')
        return 0;
    r->name = p + ATTR_FRAME;
    r->values = p + ATTR_FRAME + nl + 1;
    return 1;
}

int xfer_ch_attr_next(const char *buf, size_t len, size_t *o, xfer_ch_attr_t *a)
{
    rec_t r;
    if (*o >= len || !parse(buf + *o, len - *o, &r))
        return 0;
    a->name = r.name;
    a->is_string = r.kind == ATTR_STRING;
    a->type = r.type;
    a->count = r.count;
    a->bytes = r.bytes;
    a->values = r.values;
    *o += r.len;
    return 1;
}

/* Encode one record at @p p (rec_len(strlen(name), bytes) bytes, zeroed by the caller). */
static void encode(char *p, const char *name, size_t nl, int kind, xfer_type_t type, size_t count,
                   const void *values, size_t bytes)
{
    const uint16_t n16 = (uint16_t) nl;
    const uint32_t c32 = (uint32_t) count;
    memcpy(p, &n16, 2);
    p[2] = (char) kind;
    p[3] = (char) type;
    memcpy(p + 4, &c32, 4);
    memcpy(p + ATTR_FRAME, name, nl + 1);
    if (bytes)
        memcpy(p + ATTR_FRAME + nl + 1, values, bytes);
}

xfer_status_t xfer_ch_attr_append(char **buf, size_t *len, size_t *cap, const xfer_ch_attr_t *a)
{
    const size_t nl = strlen(a->name);
    size_t need;
    if (nl == 0 || nl > ATTR_NAME_MAX || a->count > UINT32_MAX)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "attribute \"%.40s\": name of 1 to %d characters, "
                        "at most 2^32 - 1 values",
                        a->name, ATTR_NAME_MAX);
    need = rec_len(nl, a->bytes);
    if (*len + need > *cap) {
        size_t nc = *cap ? *cap : 256;
        char *nb;
        while (nc < *len + need)
            nc *= 2;
        if (!(nb = xfer_realloc_array(*buf, nc, 1)))
            return XFER_ERR(XFER_ERR_NO_MEMORY, "attributes");
        *buf = nb;
        *cap = nc;
    }
    memset(*buf + *len, 0, need);
    encode(*buf + *len, a->name, nl, a->is_string ? ATTR_STRING : ATTR_VALUES, a->type, a->count,
           a->values, a->bytes);
    *len += need;
    return XFER_SUCCESS;
}

/* The library's own attributes (XFER_CH_ATTR_RESERVED): never the application's, never listed. */
static int reserved(const char *name)
{
    return strncmp(name, XFER_CH_ATTR_RESERVED, sizeof(XFER_CH_ATTR_RESERVED) - 1) == 0;
}

void xfer_ch_attr_drop(xfer_channel_t *ch)
{
    ch->attr_out.len = 0;
}

static xfer_status_t out_area(xfer_channel_t *ch)
{
    if (!ch->attr_out.buf && !(ch->attr_out.buf = xfer_calloc(1, ch->lay.attr_cap)))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: attributes", ch->cfg->name);
    return XFER_SUCCESS;
}

xfer_status_t xfer_ch_attr_restore(xfer_channel_t *ch, const char *buf, size_t len)
{
    xfer_status_t st;
    if (len > ch->lay.attr_user)
        return XFER_ERR(XFER_ERR_INTERNAL, "channel %s: a held step's attributes take %zu bytes",
                        ch->cfg->name, len);
    XFER_CHECK_GOTO(out_area(ch), st, out);
    if (len)
        memcpy(ch->attr_out.buf, buf, len);
    ch->attr_out.len = len;
out:
    return st;
}

/* Drop the step's value of attribute @p name, if it has one. */
static void unset(xfer_channel_t *ch, const char *name)
{
    size_t o = 0;
    rec_t r;
    while (o < ch->attr_out.len && parse(ch->attr_out.buf + o, ch->attr_out.len - o, &r)) {
        if (strcmp(r.name, name) == 0) {
            memmove(ch->attr_out.buf + o, ch->attr_out.buf + o + r.len,
                    ch->attr_out.len - o - r.len);
            ch->attr_out.len -= r.len;
            return;
        }
        o += r.len;
    }
}

xfer_status_t xfer_ch_attr_label(xfer_channel_t *ch, uint64_t label)
{
    const size_t nl = sizeof(XFER_CH_LABEL) - 1, need = rec_len(nl, sizeof(label));
    xfer_status_t st;
    XFER_CHECK_GOTO(out_area(ch), st, out);
    unset(ch, XFER_CH_LABEL); /* (a step end called again after a refused commit) */
    if (need > XFER_CH_LABEL_BYTES || ch->attr_out.len + need > ch->lay.attr_cap)
        return XFER_ERR(XFER_ERR_INTERNAL, "channel %s: no room for the step's number",
                        ch->cfg->name);
    memset(ch->attr_out.buf + ch->attr_out.len, 0, need);
    encode(ch->attr_out.buf + ch->attr_out.len, XFER_CH_LABEL, nl, ATTR_VALUES, XFER_TYPE_UINT64, 1,
           &label, sizeof(label));
    ch->attr_out.len += need;
out:
    return st;
}

static xfer_status_t put(xfer_channel_t *ch, const char *name, int kind, xfer_type_t type,
                         size_t count, const void *values, size_t bytes)
{
    size_t nl, need;
    xfer_status_t st;
    char *p;

    if (!ch || !name || (bytes && !values))
        return XFER_ERR(XFER_ERR_INVALID_ARG, "xfer_put_attr: channel, name or values is NULL");
    XFER_CHECK_GOTO(xfer_ch_check_usable(ch), st, out);
    nl = strlen(name);
    if (nl == 0 || nl > ATTR_NAME_MAX)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: attribute name \"%.40s\" (1 to %d characters)", ch->cfg->name,
                        name, ATTR_NAME_MAX);
    if (kind == ATTR_VALUES && xfer_type_size(type) == 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel %s: attribute %s: no such type %d",
                        ch->cfg->name, name, (int) type);
    if (!xfer_ch_this_sends(ch))
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: attribute %s: %s only receives on this channel", ch->cfg->name,
                        name, xfer_ch_side_name(ch, ch->side));
    if (ch->cur_committed)
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s: attribute %s: step %llu was committed by its first xfer_get",
                        ch->cfg->name, name, (unsigned long long) ch->cur);
    if (count > UINT32_MAX)
        return XFER_ERR(XFER_ERR_TOO_LARGE, "channel %s: attribute %s: %zu values", ch->cfg->name,
                        name, count);
    if (reserved(name))
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: attribute %s: names that begin with \"" XFER_CH_ATTR_RESERVED
                        "\" are the library's (" XFER_CH_LABEL " carries the sender's step number)",
                        ch->cfg->name, name);
    if (xfer_ch_flow_skips(ch)) /* a step stride does not send: checked, nothing kept */
        return XFER_SUCCESS;
    if (ch->flow.latest)
        ch->flow.open = 1; /* (a held step is not replayed over these: ch_flow.c) */
    unset(ch, name);       /* an earlier value of the name */
    need = rec_len(nl, bytes);
    if (ch->attr_out.len + need > ch->lay.attr_user)
        return XFER_ERR(XFER_ERR_TOO_LARGE,
                        "channel %s: attribute %s: the attributes of step %llu would take %zu "
                        "bytes, the channel's attributes_bytes is %d (raise it in the workflow "
                        "file)",
                        ch->cfg->name, name, (unsigned long long) ch->cur, ch->attr_out.len + need,
                        ch->cfg->attributes_bytes);
    XFER_CHECK_GOTO(out_area(ch), st, out);
    p = ch->attr_out.buf + ch->attr_out.len;
    memset(p, 0, need);
    encode(p, name, nl, kind, type, count, values, bytes);
    ch->attr_out.len += need;
    return XFER_SUCCESS;
out:
    return st;
}

static xfer_status_t put_attr_locked(xfer_channel_t *ch, const char *name, xfer_type_t type,
                                     size_t count, const void *values)
{
    return put(ch, name, ATTR_VALUES, type, count, values, count * xfer_type_size(type));
}

static xfer_status_t put_attr_string_locked(xfer_channel_t *ch, const char *name, const char *value)
{
    if (!value)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "xfer_put_attr_string: value is NULL");
    return put(ch, name, ATTR_STRING, XFER_TYPE_INT8, strlen(value) + 1, value, strlen(value) + 1);
}

/* The current step's attributes on the receiving side (waiting for the step as xfer_get). */
static xfer_status_t area(xfer_channel_t *ch, const char **p, size_t *len)
{
    if (!ch)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel is NULL");
    return xfer_ch_attrs(ch, p, len);
}

static xfer_status_t find(xfer_channel_t *ch, const char *name, rec_t *r)
{
    const char *p;
    size_t len, o = 0;
    xfer_status_t st;
    if (!name)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "attribute name is NULL");
    XFER_CHECK_GOTO(area(ch, &p, &len), st, out);
    while (o < len && parse(p + o, len - o, r)) {
        if (strcmp(r->name, name) == 0 && !reserved(r->name))
            return XFER_SUCCESS;
        o += r->len;
    }
    return XFER_ERR(XFER_ERR_NOT_FOUND, "channel %s: step %llu has no attribute \"%s\"",
                    ch->cfg->name, (unsigned long long) ch->cur, name);
out:
    return st;
}

static xfer_status_t get_attr_locked(xfer_channel_t *ch, const char *name, xfer_type_t *type,
                                     size_t *count, void *buf, size_t bufsize)
{
    xfer_status_t st;
    rec_t r;
    XFER_CHECK_GOTO(find(ch, name, &r), st, out);
    if (r.kind == ATTR_STRING)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: attribute %s is a string: read it with xfer_get_attr_string",
                        ch->cfg->name, name);
    if (buf && r.bytes > bufsize)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: attribute %s: %zu %s values need %zu bytes, the buffer "
                        "holds %zu",
                        ch->cfg->name, name, r.count, xfer_type_name(r.type), r.bytes, bufsize);
    if (type)
        *type = r.type;
    if (count)
        *count = r.count;
    if (buf && r.bytes)
        memcpy(buf, r.values, r.bytes);
out:
    return st;
}

static xfer_status_t get_attr_string_locked(xfer_channel_t *ch, const char *name, char *buf,
                                            size_t bufsize)
{
    xfer_status_t st;
    rec_t r;
    XFER_CHECK_GOTO(find(ch, name, &r), st, out);
    if (r.kind != ATTR_STRING)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: attribute %s holds %zu %s values, not a string", ch->cfg->name,
                        name, r.count, xfer_type_name(r.type));
    if (!buf || r.bytes > bufsize)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: attribute %s: the string needs %zu bytes, the buffer holds "
                        "%zu",
                        ch->cfg->name, name, r.bytes, buf ? bufsize : 0);
    memcpy(buf, r.values, r.bytes);
out:
    return st;
}

/* The current step's attribute number @p i (-1: none; *@p n counts them all). Returns
 * XFER_SUCCESS with *@p found set when there is one. */
static xfer_status_t walk(xfer_channel_t *ch, int i, int *n, rec_t *r, int *found)
{
    const char *p;
    size_t len, o = 0;
    xfer_status_t st;
    *n = 0;
    *found = 0;
    XFER_CHECK_GOTO(area(ch, &p, &len), st, out);
    while (o < len && parse(p + o, len - o, r)) {
        if (!reserved(r->name) && (*n)++ == i) {
            *found = 1;
            break;
        }
        o += r->len;
    }
out:
    return st;
}

static xfer_status_t attr_count_locked(xfer_channel_t *ch, int *count)
{
    rec_t r;
    int found;
    if (!count)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "count is NULL");
    return walk(ch, -1, count, &r, &found);
}

static xfer_status_t attr_name_locked(xfer_channel_t *ch, int i, const char **name)
{
    xfer_status_t st;
    rec_t r;
    int n, found;
    if (!name)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "name is NULL");
    XFER_CHECK_GOTO(walk(ch, i, &n, &r, &found), st, out);
    if (found) {
        *name = r.name;
        return XFER_SUCCESS;
    }
    return XFER_ERR(XFER_ERR_NOT_FOUND, "channel %s: step %llu has %d attributes, no number %d",
                    ch->cfg->name, (unsigned long long) ch->cur, n, i);
out:
    return st;
}

/* The public calls: under the context's lock (the progress thread, progress.c). */
xfer_status_t xfer_put_attr(xfer_channel_t *ch, const char *name, xfer_type_t type, size_t count,
                            const void *values)
{
    XFER_CH_LOCKED(ch, put_attr_locked(ch, name, type, count, values));
}

xfer_status_t xfer_put_attr_string(xfer_channel_t *ch, const char *name, const char *value)
{
    XFER_CH_LOCKED(ch, put_attr_string_locked(ch, name, value));
}

xfer_status_t xfer_get_attr(xfer_channel_t *ch, const char *name, xfer_type_t *type, size_t *count,
                            void *buf, size_t bufsize)
{
    XFER_CH_LOCKED(ch, get_attr_locked(ch, name, type, count, buf, bufsize));
}

xfer_status_t xfer_get_attr_string(xfer_channel_t *ch, const char *name, char *buf, size_t bufsize)
{
    XFER_CH_LOCKED(ch, get_attr_string_locked(ch, name, buf, bufsize));
}

xfer_status_t xfer_attr_count(xfer_channel_t *ch, int *count)
{
    XFER_CH_LOCKED(ch, attr_count_locked(ch, count));
}

xfer_status_t xfer_attr_name(xfer_channel_t *ch, int i, const char **name)
{
    XFER_CH_LOCKED(ch, attr_name_locked(ch, i, name));
}
