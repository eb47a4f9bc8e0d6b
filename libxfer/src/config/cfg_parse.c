/* SPDX-License-Identifier: BSD-3-Clause */
/* The generic reader behind xfer_config_load(): libyaml events in, structs described by
 * cfg_table_t out. One pass over the events checks shapes, types, ranges and keys (unknown,
 * duplicate, missing) and fills defaults; then one walk over the tables runs their checks
 * (cross references, rules between keys). Every value's position is recorded by key path
 * during the pass so that the walk can point at the value at fault. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "cfg.h"

#define CFG_MAX_KEYS 32 /* keys of one table */
#define CFG_MSG_MAX  900
#define CFG_SHOW_MAX 96 /* a value quoted in a message */
#define CFG_KEY_SHOW 64 /* a key in a key path */

/* ---- small helpers ------------------------------------------------------------------------ */

char *xfer_cfg_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xfer_malloc(n);

    if (d)
        memcpy(d, s, n);
    return d;
}

int xfer_cfg_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    int overflow = 0;

    if (!*s)
        return -1;
    for (; *s; s++) {
        const unsigned d = (unsigned) (*s - '0');
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (UINT64_MAX - d) / 10)
            overflow = 1;
        else
            v = v * 10 + d;
    }
    *out = v;
    return overflow;
}

const char *xfer_cfg_quote(const char *s, char *buf, size_t size)
{
    const size_t room = size - 8; /* the closing quote, "...", an escape and the NUL */
    size_t o = 0;

    buf[o++] = '"';
    for (; *s; s++) {
        const unsigned char c = (unsigned char) *s;
        /* cut only before the first byte of a character */
        if (o + 4 >= room && (c & 0xC0) != 0x80) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char) c;
        } else if (c == '\n') {
            memcpy(buf + o, "\\n", 2);
            o += 2;
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(buf + o, size - o, "\\x%02x", c);
            o += 4;
        } else {
            buf[o++] = (char) c;
        }
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}

const char *xfer_cfg_got(const yaml_event_t *ev, char *buf, size_t size)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        if (!ev->data.scalar.length && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
            return "an empty value";
        return xfer_cfg_quote((const char *) ev->data.scalar.value, buf, size);
    case YAML_SEQUENCE_START_EVENT:
        return "a sequence";
    case YAML_MAPPING_START_EVENT:
        return "a mapping";
    default:
        return "nothing";
    }
}

/* Pointer fields of any type, read and written without type punning. */
static void *get_ptr(const void *base, size_t off)
{
    void *p;
    memcpy(&p, (const char *) base + off, sizeof(p));
    return p;
}

static void set_ptr(void *base, size_t off, void *p)
{
    memcpy((char *) base + off, &p, sizeof(p));
}

static int is_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++) {
        const char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

/* ---- errors ------------------------------------------------------------------------------ */

XFER_PRINTF(5, 0)
static xfer_status_t fail_v(cfg_parser_t *p, const char *path, int line, int col, const char *fmt,
                            va_list ap)
{
    char msg[CFG_MSG_MAX];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (path && *path)
        return xfer_err_raw(XFER_ERR_CONFIG, "%s:%d:%d: %s: %s", p->file, line, col, path, msg);
    return xfer_err_raw(XFER_ERR_CONFIG, "%s:%d:%d: %s", p->file, line, col, msg);
}

xfer_status_t xfer_cfg_fail(cfg_parser_t *p, yaml_mark_t mark, const char *fmt, ...)
{
    xfer_status_t st;
    va_list ap;

    va_start(ap, fmt);
    st = fail_v(p, p->kp, (int) mark.line + 1, (int) mark.column + 1, fmt, ap);
    va_end(ap);
    return st;
}

xfer_status_t xfer_cfg_fail_key(cfg_parser_t *p, const char *key, const char *fmt, ...)
{
    const cfg_rec_t *r = key ? xfer_cfg_find(p, key) : NULL;
    const size_t len = p->kp_len;
    xfer_status_t st;
    va_list ap;

    if (!r)
        r = xfer_cfg_find(p, NULL); /* not in the file: point at the mapping */
    if (key && xfer_cfg_push_key(p, key) == (size_t) -1)
        return XFER_ERR_NO_MEMORY;
    va_start(ap, fmt);
    st = fail_v(p, p->kp, r ? r->line : 1, r ? r->col : 1, fmt, ap);
    va_end(ap);
    xfer_cfg_pop(p, len);
    return st;
}

/* Line and column (1-based, in characters) of byte @p offset: libyaml's reader errors carry
 * only the offset. */
static void byte_position(const char *file, size_t offset, int *line, int *col)
{
    FILE *f = fopen(file, "rb");
    size_t i;
    int c;

    *line = 1;
    *col = 1;
    if (!f)
        return;
    for (i = 0; i < offset && (c = getc(f)) != EOF; i++) {
        if (c == '\n') {
            ++*line;
            *col = 1;
        } else if ((c & 0xC0) != 0x80) {
            ++*col;
        }
    }
    fclose(f);
}

static xfer_status_t syntax_error(cfg_parser_t *p)
{
    const yaml_parser_t *y = &p->yaml;
    const char *problem = y->problem ? y->problem : "unknown error";
    int line, col;

    switch (y->error) {
    case YAML_MEMORY_ERROR:
        return XFER_ERR(XFER_ERR_NO_MEMORY, "libyaml ran out of memory reading %s", p->file);
    case YAML_READER_ERROR:
        if (strcmp(problem, "input error") == 0) /* fread failed: errno says why */
            return xfer_err_raw(XFER_ERR_CONFIG, "%s: cannot read: %s", p->file, strerror(errno));
        byte_position(p->file, y->problem_offset, &line, &col);
        if (y->problem_value != -1)
            return xfer_err_raw(XFER_ERR_CONFIG, "%s:%d:%d: YAML syntax error: %s (byte 0x%02x)",
                                p->file, line, col, problem, (unsigned) y->problem_value);
        return xfer_err_raw(XFER_ERR_CONFIG, "%s:%d:%d: YAML syntax error: %s", p->file, line, col,
                            problem);
    default:
        line = (int) y->problem_mark.line + 1;
        col = (int) y->problem_mark.column + 1;
        if (y->context)
            return xfer_err_raw(XFER_ERR_CONFIG, "%s:%d:%d: YAML syntax error: %s (%s)", p->file,
                                line, col, problem, y->context);
        return xfer_err_raw(XFER_ERR_CONFIG, "%s:%d:%d: YAML syntax error: %s", p->file, line, col,
                            problem);
    }
}

/* ---- key path and records ---------------------------------------------------------------- */

static size_t kp_append(cfg_parser_t *p, const char *s, size_t n)
{
    const size_t old = p->kp_len;
    size_t i;

    if (p->kp_len + n + 1 > p->kp_cap) {
        const size_t cap = 2 * (p->kp_len + n + 1);
        char *kp = xfer_realloc_array(p->kp, cap, 1);
        if (!kp) {
            XFER_ERR(XFER_ERR_NO_MEMORY, "key path of %zu bytes", cap);
            return (size_t) -1;
        }
        p->kp = kp;
        p->kp_cap = cap;
    }
    /* keys come from the file: keep the message on one line */
    for (i = 0; i < n; i++)
        p->kp[p->kp_len++] = (unsigned char) s[i] < 0x20 ? '?' : s[i];
    p->kp[p->kp_len] = '\0';
    return old;
}

size_t xfer_cfg_push_key(cfg_parser_t *p, const char *key)
{
    const size_t old = p->kp_len, n = strlen(key);

    if (old && kp_append(p, ".", 1) == (size_t) -1)
        return (size_t) -1;
    if (n > CFG_KEY_SHOW) {
        if (kp_append(p, key, CFG_KEY_SHOW) == (size_t) -1 || kp_append(p, "...", 3) == (size_t) -1)
            return (size_t) -1;
    } else if (kp_append(p, key, n) == (size_t) -1) {
        return (size_t) -1;
    }
    return old;
}

size_t xfer_cfg_push_index(cfg_parser_t *p, int index)
{
    char s[24];
    const int n = snprintf(s, sizeof(s), "[%d]", index);

    return kp_append(p, s, (size_t) n);
}

void xfer_cfg_pop(cfg_parser_t *p, size_t len)
{
    p->kp_len = len;
    p->kp[len] = '\0';
}

static unsigned rec_bucket(const char *path)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *path; path++)
        h = (h ^ (unsigned char) *path) * 16777619u;
    return h % CFG_NBUCKETS;
}

static const cfg_rec_t *find_path(const cfg_parser_t *p, const char *path)
{
    const cfg_rec_t *r;
    for (r = p->recs[rec_bucket(path)]; r; r = r->next)
        if (strcmp(r->path, path) == 0)
            return r;
    return NULL;
}

const cfg_rec_t *xfer_cfg_find(const cfg_parser_t *p, const char *key)
{
    char path[512];

    if (!key)
        return find_path(p, p->kp);
    snprintf(path, sizeof(path), "%s%s%s", p->kp, p->kp_len ? "." : "", key);
    return find_path(p, path);
}

/* Remember where the value at the current key path is (and its text, for scalars). */
static xfer_status_t record(cfg_parser_t *p, const yaml_event_t *ev)
{
    cfg_rec_t *r = xfer_calloc(1, sizeof(*r));
    unsigned b;

    if (!r)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "position record");
    r->line = (int) ev->start_mark.line + 1;
    r->col = (int) ev->start_mark.column + 1;
    r->path = xfer_cfg_strdup(p->kp);
    if (ev->type == YAML_SCALAR_EVENT)
        r->text = xfer_cfg_strdup((const char *) ev->data.scalar.value);
    if (!r->path || (ev->type == YAML_SCALAR_EVENT && !r->text)) {
        xfer_free(r->path);
        xfer_free(r->text);
        xfer_free(r);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "position record");
    }
    b = rec_bucket(r->path);
    r->next = p->recs[b];
    p->recs[b] = r;
    return XFER_SUCCESS;
}

static void free_records(cfg_parser_t *p)
{
    int b;
    for (b = 0; b < CFG_NBUCKETS; b++) {
        while (p->recs[b]) {
            cfg_rec_t *r = p->recs[b];
            p->recs[b] = r->next;
            xfer_free(r->path);
            xfer_free(r->text);
            xfer_free(r);
        }
    }
}

/* ---- events ------------------------------------------------------------------------------ */

xfer_status_t xfer_cfg_next(cfg_parser_t *p, yaml_event_t *ev)
{
    const yaml_char_t *anchor = NULL, *tag = NULL;
    xfer_status_t st;

    if (!yaml_parser_parse(&p->yaml, ev)) {
        memset(ev, 0, sizeof(*ev));
        return syntax_error(p);
    }
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        st = xfer_cfg_fail(p, ev->start_mark,
                           "aliases (*%.64s) are not supported: write the value out",
                           (const char *) ev->data.alias.anchor);
        yaml_event_delete(ev);
        return st;
    case YAML_SCALAR_EVENT:
        anchor = ev->data.scalar.anchor;
        tag = ev->data.scalar.tag;
        break;
    case YAML_SEQUENCE_START_EVENT:
        anchor = ev->data.sequence_start.anchor;
        tag = ev->data.sequence_start.tag;
        break;
    case YAML_MAPPING_START_EVENT:
        anchor = ev->data.mapping_start.anchor;
        tag = ev->data.mapping_start.tag;
        break;
    default:
        break;
    }
    if (anchor)
        st = xfer_cfg_fail(p, ev->start_mark, "anchors (&%.64s) are not supported",
                           (const char *) anchor);
    else if (tag)
        st = xfer_cfg_fail(p, ev->start_mark, "tags (%.64s) are not supported", (const char *) tag);
    else
        return XFER_SUCCESS;
    yaml_event_delete(ev);
    return st;
}

xfer_status_t xfer_cfg_scalar(cfg_parser_t *p, const yaml_event_t *ev, const char *what)
{
    char got[CFG_SHOW_MAX];

    if (ev->type != YAML_SCALAR_EVENT)
        return xfer_cfg_fail(p, ev->start_mark, "expected %s, got %s", what,
                             xfer_cfg_got(ev, got, sizeof(got)));
    if (strlen((const char *) ev->data.scalar.value) != ev->data.scalar.length)
        return xfer_cfg_fail(p, ev->start_mark, "NUL characters are not allowed");
    return XFER_SUCCESS;
}

/* ---- values ------------------------------------------------------------------------------ */

/* Store scalar @p s as the value of @p k: 0 stored, 1 not a valid value, -1 out of memory. */
static int convert(const cfg_key_t *k, const char *s, void *base)
{
    const cfg_enum_t *e;
    uint64_t v;
    char *d;

    switch (k->kind) {
    case CFG_NAME:
    case CFG_STR:
        if (k->kind == CFG_NAME && !is_name(s))
            return 1;
        if (!(d = xfer_cfg_strdup(s)))
            return -1;
        *CFG_FIELD(base, k->off, char *) = d;
        return 0;
    case CFG_INT:
        if (k->word && strcmp(s, k->word) == 0)
            v = 0;
        else if (xfer_cfg_u64(s, &v) != 0 || v < (uint64_t) k->min || v > (uint64_t) k->max)
            return 1;
        *CFG_FIELD(base, k->off, int) = (int) v;
        return 0;
    case CFG_ENUM:
        for (e = k->names; e->name; e++) {
            if (strcmp(s, e->name) == 0) {
                *CFG_FIELD(base, k->off, int) = e->value;
                return 0;
            }
        }
        return 1;
    case CFG_COMPREF:
        *CFG_FIELD(base, k->off, int) = -1;
        return 0;
    default:
        return 1;
    }
}

static xfer_status_t fill_default(const cfg_key_t *k, void *base)
{
    xfer_status_t st;
    int i, rc;

    switch (k->kind) {
    case CFG_MAP:
        for (i = 0; i < k->sub->nkeys; i++) {
            st = fill_default(&k->sub->keys[i], (char *) base + k->off);
            if (st != XFER_SUCCESS)
                return st;
        }
        return XFER_SUCCESS;
    case CFG_LIST:
    case CFG_CUSTOM:
        return XFER_SUCCESS; /* empty: the struct starts zeroed */
    default:
        if (!k->dflt && k->kind != CFG_COMPREF)
            return XFER_SUCCESS;
        rc = convert(k, k->dflt ? k->dflt : "", base);
        if (rc < 0)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "default of %s", k->key);
        if (rc > 0)
            return XFER_ERR(XFER_ERR_INTERNAL, "default \"%s\" of %s is not valid", k->dflt,
                            k->key);
        return XFER_SUCCESS;
    }
}

static xfer_status_t parse_value(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *ev,
                                 void *base);

static int find_key(const cfg_table_t *t, const char *key)
{
    int i;
    for (i = 0; i < t->nkeys; i++)
        if (strcmp(t->keys[i].key, key) == 0)
            return i;
    return -1;
}

static const char *key_list(const cfg_table_t *t, int required_only, char *buf, size_t size)
{
    size_t o = 0;
    int i;

    buf[0] = '\0';
    for (i = 0; i < t->nkeys && o < size; i++)
        if (!required_only || t->keys[i].required)
            o += (size_t) snprintf(buf + o, size - o, "%s%s", o ? ", " : "", t->keys[i].key);
    return buf;
}

/* The mapping that @p start opened, read into @p base as @p t describes; then defaults. */
static xfer_status_t parse_map(cfg_parser_t *p, const cfg_table_t *t, void *base,
                               const yaml_event_t *start)
{
    int seen[CFG_MAX_KEYS] = {0}; /* line of each key read, 0: not read */
    char buf[256], shown[CFG_SHOW_MAX];
    yaml_event_t key, val;
    xfer_status_t st = XFER_SUCCESS;
    const char *name;
    size_t len;
    int i;

    memset(&key, 0, sizeof(key));
    memset(&val, 0, sizeof(val));
    if (t->nkeys > CFG_MAX_KEYS)
        return XFER_ERR(XFER_ERR_INTERNAL, "table %s has %d keys", t->path, t->nkeys);
    for (;;) {
        XFER_CHECK_GOTO(xfer_cfg_next(p, &key), st, out);
        if (key.type == YAML_MAPPING_END_EVENT)
            break;
        XFER_CHECK_GOTO(xfer_cfg_scalar(p, &key, "a key"), st, out);
        name = (const char *) key.data.scalar.value;
        i = find_key(t, name);
        if ((len = xfer_cfg_push_key(p, name)) == (size_t) -1) {
            st = XFER_ERR_NO_MEMORY;
            goto out;
        }
        if (i < 0) {
            st = xfer_cfg_fail(p, key.start_mark, "unknown key (expected %s)",
                               key_list(t, 0, buf, sizeof(buf)));
            goto out;
        }
        if (seen[i]) {
            st = xfer_cfg_fail(p, key.start_mark, "duplicate key %s (first at line %d)",
                               xfer_cfg_quote(name, shown, sizeof(shown)), seen[i]);
            goto out;
        }
        seen[i] = (int) key.start_mark.line + 1;
        yaml_event_delete(&key);
        XFER_CHECK_GOTO(xfer_cfg_next(p, &val), st, out);
        XFER_CHECK_GOTO(parse_value(p, &t->keys[i], &val, base), st, out);
        yaml_event_delete(&val);
        xfer_cfg_pop(p, len);
    }
    for (i = 0; i < t->nkeys; i++) {
        if (seen[i])
            continue;
        if (t->keys[i].required) {
            st = xfer_cfg_fail(p, start->start_mark, "missing required key \"%s\"", t->keys[i].key);
            goto out;
        }
        XFER_CHECK_GOTO(fill_default(&t->keys[i], base), st, out);
    }
out:
    yaml_event_delete(&key);
    yaml_event_delete(&val);
    return st;
}

/* The sequence of mappings that @p start opened: an array of k->sub->size elements. */
static xfer_status_t parse_list(cfg_parser_t *p, const cfg_key_t *k, void *base,
                                const yaml_event_t *start)
{
    const cfg_table_t *t = k->sub;
    int *count = CFG_FIELD(base, k->count_off, int);
    char got[CFG_SHOW_MAX];
    xfer_status_t st = XFER_SUCCESS;
    size_t cap = 0, len;
    yaml_event_t ev;
    char *elem;

    memset(&ev, 0, sizeof(ev));
    for (;;) {
        XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out);
        if (ev.type == YAML_SEQUENCE_END_EVENT)
            break;
        if ((len = xfer_cfg_push_index(p, *count)) == (size_t) -1) {
            st = XFER_ERR_NO_MEMORY;
            goto out;
        }
        if (*count >= k->nmax) {
            st = xfer_cfg_fail(p, ev.start_mark, "more than %d %ss", k->nmax, t->noun);
            goto out;
        }
        if (ev.type != YAML_MAPPING_START_EVENT) {
            st = xfer_cfg_fail(p, ev.start_mark, "expected a mapping (one %s), got %s", t->noun,
                               xfer_cfg_got(&ev, got, sizeof(got)));
            goto out;
        }
        if ((size_t) *count == cap) {
            void *a;
            cap = cap ? 2 * cap : 4;
            if (!(a = xfer_realloc_array(get_ptr(base, k->off), cap, t->size))) {
                st = XFER_ERR(XFER_ERR_NO_MEMORY, "%zu %ss", cap, t->noun);
                goto out;
            }
            set_ptr(base, k->off, a);
        }
        elem = (char *) get_ptr(base, k->off) + (size_t) *count * t->size;
        memset(elem, 0, t->size);
        ++*count;
        if (t->has_pos) {
            *CFG_FIELD(elem, t->line_off, int) = (int) ev.start_mark.line + 1;
            *CFG_FIELD(elem, t->col_off, int) = (int) ev.start_mark.column + 1;
        }
        XFER_CHECK_GOTO(record(p, &ev), st, out);
        XFER_CHECK_GOTO(parse_map(p, t, elem, &ev), st, out);
        yaml_event_delete(&ev);
        xfer_cfg_pop(p, len);
    }
    if (*count < k->nmin)
        st = xfer_cfg_fail(p, start->start_mark, "expected at least %d %s%s, got %d", k->nmin,
                           t->noun, k->nmin == 1 ? "" : "s", *count);
out:
    yaml_event_delete(&ev);
    return st;
}

static xfer_status_t parse_value(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *ev,
                                 void *base)
{
    char want[256], got[CFG_SHOW_MAX];
    xfer_status_t st = record(p, ev);
    int rc;

    if (st != XFER_SUCCESS)
        return st;
    switch (k->kind) {
    case CFG_MAP:
        if (ev->type == YAML_MAPPING_START_EVENT)
            return parse_map(p, k->sub, (char *) base + k->off, ev);
        break;
    case CFG_LIST:
        if (ev->type == YAML_SEQUENCE_START_EVENT)
            return parse_list(p, k, base, ev);
        break;
    case CFG_CUSTOM:
        return k->handler->parse(p, k, ev, base);
    default:
        if (ev->type != YAML_SCALAR_EVENT)
            break;
        st = xfer_cfg_scalar(p, ev, "a scalar");
        if (st != XFER_SUCCESS)
            return st;
        rc = convert(k, (const char *) ev->data.scalar.value, base);
        if (rc < 0)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "value of %s", k->key);
        if (rc == 0)
            return XFER_SUCCESS;
        break;
    }
    return xfer_cfg_fail(p, ev->start_mark, "expected %s, got %s",
                         xfer_cfg_expected(k, want, sizeof(want)),
                         xfer_cfg_got(ev, got, sizeof(got)));
}

/* STREAM-START DOCUMENT-START <mapping> DOCUMENT-END STREAM-END, nothing else. */
static xfer_status_t parse_stream(cfg_parser_t *p, const cfg_table_t *top, xfer_config_t *cfg)
{
    char keys[256], got[CFG_SHOW_MAX];
    xfer_status_t st = XFER_SUCCESS;
    yaml_event_t ev;

    memset(&ev, 0, sizeof(ev));
    XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out); /* stream start */
    yaml_event_delete(&ev);
    XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out);
    if (ev.type == YAML_STREAM_END_EVENT) {
        st = xfer_cfg_fail(p, ev.start_mark, "empty file (expected a mapping with the keys %s)",
                           key_list(top, 1, keys, sizeof(keys)));
        goto out;
    }
    yaml_event_delete(&ev); /* document start */
    XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out);
    if (ev.type == YAML_SCALAR_EVENT && !ev.data.scalar.length &&
        ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        st = xfer_cfg_fail(p, ev.start_mark, "empty document (expected a mapping with the keys %s)",
                           key_list(top, 1, keys, sizeof(keys)));
        goto out;
    }
    if (ev.type != YAML_MAPPING_START_EVENT) {
        st = xfer_cfg_fail(p, ev.start_mark, "expected a mapping at the top level, got %s",
                           xfer_cfg_got(&ev, got, sizeof(got)));
        goto out;
    }
    XFER_CHECK_GOTO(record(p, &ev), st, out);
    XFER_CHECK_GOTO(parse_map(p, top, cfg, &ev), st, out);
    yaml_event_delete(&ev);
    XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out); /* document end */
    yaml_event_delete(&ev);
    XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out);
    if (ev.type == YAML_DOCUMENT_START_EVENT)
        st = xfer_cfg_fail(p, ev.start_mark,
                           "a second YAML document: a workflow file holds exactly one");
out:
    yaml_event_delete(&ev);
    return st;
}

/* ---- checks ------------------------------------------------------------------------------ */

static xfer_status_t check_map(cfg_parser_t *p, const cfg_table_t *t, void *base,
                               const void *parent);

/* Unique keys of element @p j against the elements before it, then the element's checks. */
static xfer_status_t check_list(cfg_parser_t *p, const cfg_key_t *k, void *base)
{
    const cfg_table_t *t = k->sub;
    const int n = *CFG_FIELD(base, k->count_off, int);
    char *arr = get_ptr(base, k->off);
    char path[512], shown[CFG_SHOW_MAX];
    const size_t list_len = p->kp_len;
    xfer_status_t st = XFER_SUCCESS;
    int i, j, u;

    for (j = 0; j < n && st == XFER_SUCCESS; j++) {
        char *elem = arr + (size_t) j * t->size;
        const size_t len = xfer_cfg_push_index(p, j);
        if (len == (size_t) -1)
            return XFER_ERR_NO_MEMORY;
        for (u = 0; u < t->nkeys && st == XFER_SUCCESS; u++) {
            const cfg_key_t *uk = &t->keys[u];
            const char *v;
            if (!uk->unique)
                continue;
            v = *CFG_FIELD(elem, uk->off, char *);
            for (i = 0; i < j; i++) {
                const cfg_rec_t *first;
                if (strcmp(v, *CFG_FIELD(arr + (size_t) i * t->size, uk->off, char *)) != 0)
                    continue;
                snprintf(path, sizeof(path), "%.*s[%d].%s", (int) list_len, p->kp, i, uk->key);
                first = find_path(p, path);
                st = xfer_cfg_fail_key(p, uk->key, "duplicate %s %s %s (first at line %d)", t->noun,
                                       uk->key, xfer_cfg_quote(v, shown, sizeof(shown)),
                                       first ? first->line : 0);
                break;
            }
        }
        if (st == XFER_SUCCESS)
            st = check_map(p, t, elem, base);
        xfer_cfg_pop(p, len);
    }
    return st;
}

static xfer_status_t check_map(cfg_parser_t *p, const cfg_table_t *t, void *base,
                               const void *parent)
{
    xfer_status_t st = t->check ? t->check(p, base, parent) : XFER_SUCCESS;
    int i;

    for (i = 0; i < t->nkeys && st == XFER_SUCCESS; i++) {
        const cfg_key_t *k = &t->keys[i];
        size_t len;
        if (k->kind != CFG_MAP && k->kind != CFG_LIST)
            continue;
        if ((len = xfer_cfg_push_key(p, k->key)) == (size_t) -1)
            return XFER_ERR_NO_MEMORY;
        if (k->kind == CFG_MAP)
            st = check_map(p, k->sub, (char *) base + k->off, base);
        else
            st = check_list(p, k, base);
        xfer_cfg_pop(p, len);
    }
    return st;
}

/* ---- entry points ------------------------------------------------------------------------ */

xfer_status_t xfer_cfg_parse(const char *file, const cfg_table_t *top, xfer_config_t *cfg)
{
    xfer_status_t st;
    cfg_parser_t p;
    FILE *f;

    memset(&p, 0, sizeof(p));
    p.file = file;
    p.cfg = cfg;
    if (!(p.kp = xfer_calloc(64, 1)))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "key path");
    p.kp_cap = 64;
    if (!(f = fopen(file, "rb"))) {
        st = xfer_err_raw(XFER_ERR_CONFIG, "%s: cannot open: %s", file, strerror(errno));
        goto out_kp;
    }
    if (!yaml_parser_initialize(&p.yaml)) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "yaml_parser_initialize failed");
        goto out_file;
    }
    yaml_parser_set_input_file(&p.yaml, f);
    st = parse_stream(&p, top, cfg);
    if (st == XFER_SUCCESS)
        st = check_map(&p, top, cfg, NULL);
    yaml_parser_delete(&p.yaml);
    free_records(&p);
out_file:
    fclose(f);
out_kp:
    xfer_free(p.kp);
    return st;
}

void xfer_cfg_release(const cfg_table_t *t, void *base)
{
    int i, j;

    for (i = 0; i < t->nkeys; i++) {
        const cfg_key_t *k = &t->keys[i];
        switch (k->kind) {
        case CFG_STR:
        case CFG_NAME:
            xfer_free(*CFG_FIELD(base, k->off, char *));
            *CFG_FIELD(base, k->off, char *) = NULL;
            break;
        case CFG_MAP:
            xfer_cfg_release(k->sub, (char *) base + k->off);
            break;
        case CFG_LIST: {
            int *n = CFG_FIELD(base, k->count_off, int);
            char *arr = get_ptr(base, k->off);
            for (j = 0; j < *n; j++)
                xfer_cfg_release(k->sub, arr + (size_t) j * k->sub->size);
            xfer_free(arr);
            set_ptr(base, k->off, NULL);
            *n = 0;
            break;
        }
        case CFG_CUSTOM:
            k->handler->release(k, base);
            break;
        default:
            break;
        }
    }
}
