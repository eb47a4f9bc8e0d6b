/* SPDX-License-Identifier: BSD-3-Clause */
/* The machinery of the workflow-file reader (cfg_parse.c): the small value helpers, the error
 * list (every error in file order, the first XFER_CONFIG_MAX_ERRORS kept), "did you mean"
 * suggestions, key paths and the record of every value's position, and the bounded stream of
 * libyaml events. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"

/* ---- small helpers ------------------------------------------------------------------------ */

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
    case YAML_ALIAS_EVENT:
        return "an alias";
    default:
        return "nothing";
    }
}

/* ---- errors ------------------------------------------------------------------------------ */

static int pos_before(int line, int col, const cfg_error_t *e)
{
    return line < e->line || (line == e->line && col < e->col);
}

int xfer_cfg_shown(const cfg_parser_t *p, int line, int col)
{
    return p->nerrs < XFER_CONFIG_MAX_ERRORS || pos_before(line, col, &p->errs[p->nerrs - 1]);
}

/* Count an error at @p line:@p col of the value at key path @p path, keep its text while it is
 * among the first of the file, and mark the value as found wrong. */
XFER_PRINTF(5, 0)
static xfer_status_t add_error(cfg_parser_t *p, const char *path, int line, int col,
                               const char *fmt, va_list ap)
{
    char msg[CFG_MSG_MAX];
    cfg_rec_t *r;
    cfg_error_t *e;
    char *text;
    int n, i;

    if (path && (r = xfer_cfg_find_rec(p, path)))
        r->bad = 1;
    if (p->alias_line && line == p->alias_line && col == p->alias_col)
        return XFER_ERR_CONFIG; /* the alias itself was reported: it is not a value */
    p->nerrors++;
    if (!xfer_cfg_shown(p, line, col))
        return XFER_ERR_CONFIG;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (path && *path)
        n = snprintf(NULL, 0, "%s:%d:%d: %s: %s", p->file, line, col, path, msg);
    else
        n = snprintf(NULL, 0, "%s:%d:%d: %s", p->file, line, col, msg);
    if (n < 0 || !(text = xfer_malloc((size_t) n + 1))) {
        p->stop = 1;
        return XFER_ERR(XFER_ERR_NO_MEMORY, "error message");
    }
    if (path && *path)
        snprintf(text, (size_t) n + 1, "%s:%d:%d: %s: %s", p->file, line, col, path, msg);
    else
        snprintf(text, (size_t) n + 1, "%s:%d:%d: %s", p->file, line, col, msg);
    if (p->nerrs == XFER_CONFIG_MAX_ERRORS) /* the last in the file makes room */
        xfer_free(p->errs[--p->nerrs].text);
    for (i = p->nerrs; i > 0 && pos_before(line, col, &p->errs[i - 1]); i--)
        p->errs[i] = p->errs[i - 1];
    e = &p->errs[i];
    e->line = line;
    e->col = col;
    e->seq = p->nerrors;
    e->text = text;
    p->nerrs++;
    return XFER_ERR_CONFIG;
}

xfer_status_t xfer_cfg_fail(cfg_parser_t *p, yaml_mark_t mark, const char *fmt, ...)
{
    xfer_status_t st;
    va_list ap;

    va_start(ap, fmt);
    st = add_error(p, p->kp, (int) mark.line + 1, (int) mark.column + 1, fmt, ap);
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
    st = add_error(p, p->kp, r ? r->line : 1, r ? r->col : 1, fmt, ap);
    va_end(ap);
    xfer_cfg_pop(p, len);
    return st;
}

/* An error that ends the reading: nothing after it can be trusted. */
static xfer_status_t fail_stop(cfg_parser_t *p, int line, int col, const char *fmt, ...)
    XFER_PRINTF(4, 5);

static xfer_status_t fail_stop(cfg_parser_t *p, int line, int col, const char *fmt, ...)
{
    xfer_status_t st;
    va_list ap;

    va_start(ap, fmt);
    st = add_error(p, NULL, line, col, fmt, ap);
    va_end(ap);
    p->stop = 1;
    return st;
}

/* Line and column (1-based, in characters) of byte @p offset: libyaml's reader errors carry
 * only the offset. */
static void byte_position(const cfg_parser_t *p, size_t offset, int *line, int *col)
{
    size_t i;

    *line = 1;
    *col = 1;
    for (i = 0; i < offset && i < p->input_len; i++) {
        const unsigned char c = p->input[i];
        if (c == '\n') {
            ++*line;
            *col = 1;
        } else if ((c & 0xC0) != 0x80) {
            ++*col;
        }
    }
}

static xfer_status_t syntax_error(cfg_parser_t *p)
{
    const yaml_parser_t *y = &p->yaml;
    const char *problem = y->problem ? y->problem : "unknown error";
    int line, col;

    p->stop = 1;
    switch (y->error) {
    case YAML_MEMORY_ERROR:
        return XFER_ERR(XFER_ERR_NO_MEMORY, "libyaml ran out of memory reading %s", p->file);
    case YAML_READER_ERROR:
        byte_position(p, y->problem_offset, &line, &col);
        if (y->problem_value != -1)
            return fail_stop(p, line, col, "YAML syntax error: %s (byte 0x%02x)", problem,
                             (unsigned) y->problem_value);
        return fail_stop(p, line, col, "YAML syntax error: %s", problem);
    default:
        line = (int) y->problem_mark.line + 1;
        col = (int) y->problem_mark.column + 1;
        if (y->context)
            return fail_stop(p, line, col, "YAML syntax error: %s (%s)", problem, y->context);
        return fail_stop(p, line, col, "YAML syntax error: %s", problem);
    }
}

/* ---- suggestions ---------------------------------------------------------------------------- */

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Optimal string alignment distance of @p a and @p b (ASCII case ignored), both at most
 * CFG_SUGGEST_LEN bytes; any value above @p limit once every alignment is past it. */
static int distance(const char *a, int la, const char *b, int lb, int limit)
{
    int rows[3][CFG_SUGGEST_LEN + 1];
    int *pp = rows[0], *prev = rows[1], *cur = rows[2];
    int i, j;

    for (j = 0; j <= lb; j++)
        prev[j] = j;
    for (i = 1; i <= la; i++) {
        int *t, low;
        cur[0] = low = i;
        for (j = 1; j <= lb; j++) {
            const int same = lower(a[i - 1]) == lower(b[j - 1]);
            int d = XFER_MIN(prev[j] + 1, cur[j - 1] + 1);
            d = XFER_MIN(d, prev[j - 1] + !same);
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
                lower(a[i - 2]) == lower(b[j - 1]))
                d = XFER_MIN(d, pp[j - 2] + 1); /* two neighbours swapped */
            cur[j] = d;
            low = XFER_MIN(low, d);
        }
        if (low > limit)
            return limit + 1;
        t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

void xfer_cfg_suggest_init(cfg_suggest_t *s, cfg_parser_t *p, const char *input)
{
    const size_t len = strlen(input);

    memset(s, 0, sizeof(*s));
    s->input = input;
    s->best = -1;
    s->budget = &p->suggest_budget;
    s->len = len > 0 && len <= CFG_SUGGEST_LEN && *s->budget > 0 ? (int) len : -1;
}

void xfer_cfg_suggest_add(cfg_suggest_t *s, const char *cand)
{
    const size_t lc = strlen(cand);
    int limit, d, i;

    if (s->len < 0 || lc == 0 || lc > CFG_SUGGEST_LEN || *s->budget <= 0)
        return;
    *s->budget -= (long) (s->len * lc);
    limit = XFER_MAX(1, XFER_MAX(s->len, (int) lc) / 3);
    limit = XFER_MIN(limit, XFER_MIN(s->len, (int) lc) - 1);
    d = limit >= 0 && abs((int) lc - s->len) <= limit
            ? distance(s->input, s->len, cand, (int) lc, limit)
            : limit + 1;
    if (d > limit) {
        /* "heartbeat" for heartbeat_ms: ranks after every candidate within the distance */
        for (i = 0; i < s->len && lower(s->input[i]) == lower(cand[i]); i++)
            ;
        if (s->len < 3 || i < s->len)
            return;
        d = CFG_SUGGEST_LEN + 1;
    }
    if (s->best >= 0 && d > s->best)
        return;
    if (s->best < 0 || d < s->best) {
        s->best = d;
        s->ncand = 0;
    }
    if (s->ncand < 2)
        s->cand[s->ncand] = cand;
    s->ncand++;
}

const char *xfer_cfg_suggestion(const cfg_suggest_t *s, char *buf, size_t size)
{
    char a[CFG_SHOW_MAX], b[CFG_SHOW_MAX];

    buf[0] = '\0';
    if (s->len < 0 || s->ncand < 1 || s->ncand > 2)
        return buf;
    if (s->ncand == 1)
        snprintf(buf, size, "; did you mean %s?", xfer_cfg_quote(s->cand[0], a, sizeof(a)));
    else
        snprintf(buf, size, "; did you mean %s or %s?", xfer_cfg_quote(s->cand[0], a, sizeof(a)),
                 xfer_cfg_quote(s->cand[1], b, sizeof(b)));
    return buf;
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
            p->stop = 1;
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

static size_t rec_hash(const char *path)
{
    return (size_t) xfer_fnv1a(XFER_FNV_OFFSET, path, strlen(path));
}

cfg_rec_t *xfer_cfg_find_rec(const cfg_parser_t *p, const char *path)
{
    cfg_rec_t *r;

    if (!p->nbuckets)
        return NULL;
    for (r = p->recs[rec_hash(path) % p->nbuckets]; r; r = r->next)
        if (strcmp(r->path, path) == 0)
            return r;
    return NULL;
}

const cfg_rec_t *xfer_cfg_find(const cfg_parser_t *p, const char *key)
{
    char path[512];

    if (!key)
        return xfer_cfg_find_rec(p, p->kp);
    snprintf(path, sizeof(path), "%s%s%s", p->kp, p->kp_len ? "." : "", key);
    return xfer_cfg_find_rec(p, path);
}

const cfg_rec_t *xfer_cfg_find_up(const cfg_parser_t *p, int up, const char *key)
{
    size_t n = p->kp_len;
    char path[512];

    /* keys are shown without '.' or '[' of their own only up to CFG_KEY_SHOW: the levels above
     * a table's value are the schema's keys and indices, which have none */
    for (; up > 0 && n > 0; up--) {
        while (n > 0 && p->kp[n - 1] != '.' && p->kp[n - 1] != '[')
            n--;
        if (n > 0)
            n--;
    }
    if (up > 0)
        return NULL;
    snprintf(path, sizeof(path), "%.*s%s%s", (int) n, p->kp, n ? "." : "", key);
    return xfer_cfg_find_rec(p, path);
}

int xfer_cfg_bad(const cfg_parser_t *p, const char *key)
{
    const cfg_rec_t *r = xfer_cfg_find(p, key);
    return r && r->bad;
}

/* Twice the buckets when the records outnumber them twice: lookups stay short in any file. */
int xfer_cfg_grow_records(cfg_parser_t *p)
{
    const size_t nb = p->nbuckets ? 2 * p->nbuckets : 256;
    cfg_rec_t **recs = xfer_calloc(nb, sizeof(*recs));
    size_t b;

    if (!recs)
        return 0;
    for (b = 0; b < p->nbuckets; b++) {
        while (p->recs[b]) {
            cfg_rec_t *r = p->recs[b];
            const size_t h = rec_hash(r->path) % nb;
            p->recs[b] = r->next;
            r->next = recs[h];
            recs[h] = r;
        }
    }
    xfer_free(p->recs);
    p->recs = recs;
    p->nbuckets = nb;
    return 1;
}

/* Remember where the value at the current key path is (and its text, for scalars). */
xfer_status_t xfer_cfg_record(cfg_parser_t *p, const yaml_event_t *ev)
{
    cfg_rec_t *r;
    size_t b;

    if (p->nrecs >= 2 * p->nbuckets && !xfer_cfg_grow_records(p)) {
        p->stop = 1;
        return XFER_ERR(XFER_ERR_NO_MEMORY, "position records");
    }
    if (!(r = xfer_calloc(1, sizeof(*r)))) {
        p->stop = 1;
        return XFER_ERR(XFER_ERR_NO_MEMORY, "position record");
    }
    r->line = (int) ev->start_mark.line + 1;
    r->col = (int) ev->start_mark.column + 1;
    r->path = xfer_strdup(p->kp);
    if (ev->type == YAML_SCALAR_EVENT)
        r->text = xfer_strdup((const char *) ev->data.scalar.value);
    if (!r->path || (ev->type == YAML_SCALAR_EVENT && !r->text)) {
        xfer_free(r->path);
        xfer_free(r->text);
        xfer_free(r);
        p->stop = 1;
        return XFER_ERR(XFER_ERR_NO_MEMORY, "position record");
    }
    b = rec_hash(r->path) % p->nbuckets;
    r->next = p->recs[b];
    p->recs[b] = r;
    p->nrecs++;
    return XFER_SUCCESS;
}

void xfer_cfg_free_records(cfg_parser_t *p)
{
    size_t b;
    for (b = 0; b < p->nbuckets; b++) {
        while (p->recs[b]) {
            cfg_rec_t *r = p->recs[b];
            p->recs[b] = r->next;
            xfer_free(r->path);
            xfer_free(r->text);
            xfer_free(r);
        }
    }
    xfer_free(p->recs);
    p->recs = NULL;
    p->nbuckets = p->nrecs = 0;
}

/* ---- events ------------------------------------------------------------------------------ */

/* The next event, with the nesting counted and bounded. */
xfer_status_t xfer_cfg_next_event(cfg_parser_t *p, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&p->yaml, ev)) {
        memset(ev, 0, sizeof(*ev));
        return syntax_error(p);
    }
    p->alias_line = 0;
    switch (ev->type) {
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (++p->depth > CFG_MAX_DEPTH) {
            const int line = (int) ev->start_mark.line + 1, col = (int) ev->start_mark.column + 1;
            yaml_event_delete(ev);
            return fail_stop(p, line, col, "nested deeper than %d levels", CFG_MAX_DEPTH);
        }
        break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        p->depth--;
        break;
    default:
        break;
    }
    return XFER_SUCCESS;
}

xfer_status_t xfer_cfg_next(cfg_parser_t *p, yaml_event_t *ev)
{
    const yaml_char_t *anchor = NULL, *tag = NULL;
    xfer_status_t st = xfer_cfg_next_event(p, ev);

    if (st != XFER_SUCCESS)
        return st;
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        /* never expanded: a file of aliases costs no more than its own size */
        st = xfer_cfg_fail(p, ev->start_mark,
                           "aliases (*%.64s) are not supported: write the value out",
                           (const char *) ev->data.alias.anchor);
        p->alias_line = (int) ev->start_mark.line + 1;
        p->alias_col = (int) ev->start_mark.column + 1;
        break;
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
    if (tag && !xfer_cfg_fatal(p, st))
        st = xfer_cfg_fail(p, ev->start_mark, "tags (%.64s) are not supported", (const char *) tag);
    if (xfer_cfg_fatal(p, st)) {
        yaml_event_delete(ev);
        return st;
    }
    return XFER_SUCCESS; /* reported, and read on as if it were not there */
}

xfer_status_t xfer_cfg_skip(cfg_parser_t *p, const yaml_event_t *start)
{
    const int depth = p->depth - 1; /* before @p start */
    xfer_status_t st;
    yaml_event_t ev;

    if (start->type != YAML_SEQUENCE_START_EVENT && start->type != YAML_MAPPING_START_EVENT)
        return XFER_SUCCESS;
    while (p->depth > depth) {
        if ((st = xfer_cfg_next_event(p, &ev)) != XFER_SUCCESS)
            return st;
        yaml_event_delete(&ev);
    }
    return XFER_SUCCESS;
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
