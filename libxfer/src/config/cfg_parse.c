/* SPDX-License-Identifier: BSD-3-Clause */
/* The generic reader behind xfer_config_load(): libyaml events in, structs described by
 * cfg_table_t out. One pass over the events checks shapes, types, ranges and keys (unknown,
 * duplicate, missing) and fills defaults; then one walk over the tables runs their checks
 * (cross references, rules between keys). Every value's position is recorded by key path
 * during the pass so that the walk can point at the value at fault.
 *
 * Every error of the file is reported, not only the first: a reader that finds one reports it,
 * reads past the value at fault, gives it its default and goes on, and the checks leave alone the
 * values already found wrong (cfg_rec_t.bad) so that one mistake is said once. Only a YAML syntax
 * error, too deep a nesting or a lack of memory ends the reading. The first
 * XFER_CONFIG_MAX_ERRORS errors in file order are kept and shown, the others counted.
 *
 * The input is untrusted (tests/config/fuzz_load.c): it is at most XFER_CONFIG_MAX_BYTES, nested
 * at most CFG_MAX_DEPTH deep, aliases are never expanded, every list has a bound, and no step
 * costs more than a bounded amount per value.
 *
 * This file reads values, mappings and lists and runs the checks; the error list, suggestions,
 * value records and the event stream are in cfg_reader.c. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"

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
        if (!(d = xfer_strdup(s)))
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
    case CFG_U64:
        if (xfer_cfg_u64(s, &v) != 0 || v < (uint64_t) k->min || v > (uint64_t) k->max)
            return 1;
        *CFG_FIELD(base, k->off, uint64_t) = v;
        return 0;
    case CFG_REAL: {
        double x;
        char *end;
        errno = 0;
        x = strtod(s, &end);
        if (!*s || *end || errno || !isfinite(x) || x < 0.0)
            return 1;
        *CFG_FIELD(base, k->off, double) = x;
        return 0;
    }
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

/* The default of @p k into @p base: the value of a key the file leaves out, and of one whose
 * value was found wrong (so that the checks see a consistent struct). */
static xfer_status_t fill_default(cfg_parser_t *p, const cfg_key_t *k, void *base)
{
    xfer_status_t st;
    int i, rc;

    switch (k->kind) {
    case CFG_MAP:
        for (i = 0; i < k->sub->nkeys; i++) {
            st = fill_default(p, &k->sub->keys[i], (char *) base + k->off);
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
        if (rc == 0)
            return XFER_SUCCESS;
        p->stop = 1;
        if (rc < 0)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "default of %s", k->key);
        return XFER_ERR(XFER_ERR_INTERNAL, "default \"%s\" of %s is not valid", k->dflt, k->key);
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

/* Read past a key the mapping does not take: its value is not looked at. */
static xfer_status_t skip_value(cfg_parser_t *p)
{
    xfer_status_t st;
    yaml_event_t ev;

    if ((st = xfer_cfg_next_event(p, &ev)) != XFER_SUCCESS)
        return st;
    st = xfer_cfg_skip(p, &ev);
    yaml_event_delete(&ev);
    return st;
}

/* An unknown key @p name in a mapping of @p t: report it, with the key it was probably meant to
 * be, and mark that key in @p hinted (its absence is then not reported again). */
static xfer_status_t unknown_key(cfg_parser_t *p, const cfg_table_t *t, const yaml_event_t *key,
                                 int *hinted)
{
    char keys[256], hint[2 * CFG_SHOW_MAX];
    cfg_suggest_t s;
    int i;

    xfer_cfg_suggest_init(&s, p, (const char *) key->data.scalar.value);
    for (i = 0; i < t->nkeys; i++)
        xfer_cfg_suggest_add(&s, t->keys[i].key);
    for (i = 0; i < s.ncand && i < 2 && s.ncand <= 2; i++)
        hinted[find_key(t, s.cand[i])] = 1;
    return xfer_cfg_fail(p, key->start_mark, "unknown key (expected %s)%s",
                         key_list(t, 0, keys, sizeof(keys)),
                         xfer_cfg_suggestion(&s, hint, sizeof(hint)));
}

/* The mapping that @p start opened, read into @p base as @p t describes; then defaults. */
static xfer_status_t parse_map(cfg_parser_t *p, const cfg_table_t *t, void *base,
                               const yaml_event_t *start)
{
    int seen[CFG_MAX_KEYS] = {0};   /* line of each key read, 0: not read */
    int hinted[CFG_MAX_KEYS] = {0}; /* what an unknown key was probably meant to be */
    char shown[CFG_SHOW_MAX];
    yaml_event_t key, val;
    xfer_status_t st = XFER_SUCCESS, ret = XFER_SUCCESS;
    const char *name;
    size_t len = (size_t) -1;
    int i;

    memset(&key, 0, sizeof(key));
    memset(&val, 0, sizeof(val));
    if (t->nkeys > CFG_MAX_KEYS) {
        p->stop = 1;
        return XFER_ERR(XFER_ERR_INTERNAL, "table %s has %d keys", t->path, t->nkeys);
    }
    for (;;) {
        XFER_CHECK_GOTO(xfer_cfg_next(p, &key), st, out);
        if (key.type == YAML_MAPPING_END_EVENT)
            break;
        if ((st = xfer_cfg_scalar(p, &key, "a key")) != XFER_SUCCESS) {
            ret = st;
            if (xfer_cfg_fatal(p, st) || (st = xfer_cfg_skip(p, &key)) != XFER_SUCCESS ||
                (st = skip_value(p)) != XFER_SUCCESS)
                goto out;
            yaml_event_delete(&key);
            continue;
        }
        name = (const char *) key.data.scalar.value;
        i = find_key(t, name);
        if ((len = xfer_cfg_push_key(p, name)) == (size_t) -1) {
            st = XFER_ERR_NO_MEMORY;
            goto out;
        }
        if (i < 0)
            st = unknown_key(p, t, &key, hinted);
        else if (seen[i])
            st = xfer_cfg_fail(p, key.start_mark, "duplicate key %s (first at line %d)",
                               xfer_cfg_quote(name, shown, sizeof(shown)), seen[i]);
        if (st != XFER_SUCCESS) {
            ret = st;
            if (xfer_cfg_fatal(p, st) || (st = skip_value(p)) != XFER_SUCCESS)
                goto out;
        } else {
            seen[i] = (int) key.start_mark.line + 1;
            XFER_CHECK_GOTO(xfer_cfg_next(p, &val), st, out);
            if ((st = parse_value(p, &t->keys[i], &val, base)) != XFER_SUCCESS) {
                ret = st;
                if (xfer_cfg_fatal(p, st))
                    goto out;
            }
            yaml_event_delete(&val);
        }
        yaml_event_delete(&key);
        xfer_cfg_pop(p, len);
        len = (size_t) -1;
    }
    for (i = 0; i < t->nkeys; i++) {
        if (seen[i])
            continue;
        if (t->keys[i].required && !hinted[i]) {
            st = xfer_cfg_fail(p, start->start_mark, "missing required key \"%s\"", t->keys[i].key);
            ret = st;
            if (xfer_cfg_fatal(p, st))
                goto out;
        }
        XFER_CHECK_GOTO(fill_default(p, &t->keys[i], base), st, out);
    }
    st = ret;
out:
    if (len != (size_t) -1)
        xfer_cfg_pop(p, len);
    yaml_event_delete(&key);
    yaml_event_delete(&val);
    return st;
}

/* The sequence of mappings that @p start opened: an array of k->sub->size elements. An element
 * that is not a mapping is reported and kept as an empty one, so that the indices of the others
 * stay those of the file. */
static xfer_status_t parse_list(cfg_parser_t *p, const cfg_key_t *k, void *base,
                                const yaml_event_t *start)
{
    const cfg_table_t *t = k->sub;
    int *count = CFG_FIELD(base, k->count_off, int);
    char got[CFG_SHOW_MAX];
    xfer_status_t st = XFER_SUCCESS, ret = XFER_SUCCESS;
    size_t cap = 0, len = (size_t) -1;
    yaml_event_t ev;
    int over = 0, i;
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
        if (*count >= k->nmax) { /* said once; the rest is not read */
            if (!over && (ret = xfer_cfg_fail(p, ev.start_mark, "more than %d %ss", k->nmax,
                                              t->noun)) != XFER_ERR_CONFIG) {
                st = ret;
                goto out;
            }
            over = 1;
            XFER_CHECK_GOTO(xfer_cfg_skip(p, &ev), st, out);
            goto next;
        }
        if ((size_t) *count == cap) {
            void *a;
            cap = cap ? 2 * cap : 4;
            if (!(a = xfer_realloc_array(get_ptr(base, k->off), cap, t->size))) {
                p->stop = 1;
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
        XFER_CHECK_GOTO(xfer_cfg_record(p, &ev), st, out);
        if (ev.type == YAML_MAPPING_START_EVENT) {
            st = parse_map(p, t, elem, &ev);
        } else {
            st = xfer_cfg_fail(p, ev.start_mark, "expected a mapping (one %s), got %s", t->noun,
                               xfer_cfg_got(&ev, got, sizeof(got)));
            if (!xfer_cfg_fatal(p, st)) {
                xfer_status_t st2 = xfer_cfg_skip(p, &ev);
                for (i = 0; i < t->nkeys && st2 == XFER_SUCCESS; i++)
                    st2 = fill_default(p, &t->keys[i], elem);
                if (st2 != XFER_SUCCESS)
                    st = st2;
            }
        }
        if (st != XFER_SUCCESS) {
            ret = st;
            if (xfer_cfg_fatal(p, st))
                goto out;
        }
    next:
        yaml_event_delete(&ev);
        xfer_cfg_pop(p, len);
        len = (size_t) -1;
    }
    if (*count < k->nmin)
        ret = xfer_cfg_fail(p, start->start_mark, "expected at least %d %s%s, got %d", k->nmin,
                            t->noun, k->nmin == 1 ? "" : "s", *count);
    st = ret;
out:
    if (len != (size_t) -1)
        xfer_cfg_pop(p, len);
    yaml_event_delete(&ev);
    return st;
}

/* A value that is not what @p k takes: say what is expected (and, for a misspelt word, the
 * word meant), read past it and give @p k its default. */
static xfer_status_t wrong_value(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *ev,
                                 void *base)
{
    char want[256], got[CFG_SHOW_MAX], hint[2 * CFG_SHOW_MAX] = "";
    xfer_status_t st, st2;

    if (ev->type == YAML_SCALAR_EVENT && (k->kind == CFG_ENUM || (k->kind == CFG_INT && k->word))) {
        cfg_suggest_t s;
        const cfg_enum_t *e;
        xfer_cfg_suggest_init(&s, p, (const char *) ev->data.scalar.value);
        if (k->kind == CFG_ENUM)
            for (e = k->names; e->name; e++)
                xfer_cfg_suggest_add(&s, e->name);
        else
            xfer_cfg_suggest_add(&s, k->word);
        xfer_cfg_suggestion(&s, hint, sizeof(hint));
    }
    st = xfer_cfg_fail(p, ev->start_mark, "expected %s, got %s%s",
                       xfer_cfg_expected(k, want, sizeof(want)), xfer_cfg_got(ev, got, sizeof(got)),
                       hint);
    if (xfer_cfg_fatal(p, st))
        return st;
    if ((st2 = xfer_cfg_skip(p, ev)) != XFER_SUCCESS ||
        (st2 = fill_default(p, k, base)) != XFER_SUCCESS)
        return st2;
    return st;
}

static xfer_status_t parse_value(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *ev,
                                 void *base)
{
    xfer_status_t st = xfer_cfg_record(p, ev);
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
        if ((st = xfer_cfg_scalar(p, ev, "a scalar")) != XFER_SUCCESS) {
            if (!xfer_cfg_fatal(p, st)) {
                xfer_status_t st2 = fill_default(p, k, base);
                if (st2 != XFER_SUCCESS)
                    return st2;
            }
            return st;
        }
        rc = convert(k, (const char *) ev->data.scalar.value, base);
        if (rc < 0) {
            p->stop = 1;
            return XFER_ERR(XFER_ERR_NO_MEMORY, "value of %s", k->key);
        }
        if (rc == 0)
            return XFER_SUCCESS;
        break;
    }
    return wrong_value(p, k, ev, base);
}

/* STREAM-START DOCUMENT-START <mapping> DOCUMENT-END STREAM-END, nothing else. What is not a
 * mapping at the top leaves nothing to read on: it ends the reading. */
static xfer_status_t parse_stream(cfg_parser_t *p, const cfg_table_t *top, xfer_config_t *cfg)
{
    char keys[256], got[CFG_SHOW_MAX];
    xfer_status_t st = XFER_SUCCESS, ret;
    yaml_event_t ev;

    memset(&ev, 0, sizeof(ev));
    XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out); /* stream start */
    yaml_event_delete(&ev);
    XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out);
    if (ev.type == YAML_STREAM_END_EVENT) {
        st = xfer_cfg_fail(p, ev.start_mark, "empty file (expected a mapping with the keys %s)",
                           key_list(top, 1, keys, sizeof(keys)));
        p->stop = 1;
        goto out;
    }
    yaml_event_delete(&ev); /* document start */
    XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out);
    if (ev.type == YAML_SCALAR_EVENT && !ev.data.scalar.length &&
        ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        st = xfer_cfg_fail(p, ev.start_mark, "empty document (expected a mapping with the keys %s)",
                           key_list(top, 1, keys, sizeof(keys)));
        p->stop = 1;
        goto out;
    }
    if (ev.type != YAML_MAPPING_START_EVENT) {
        st = xfer_cfg_fail(p, ev.start_mark, "expected a mapping at the top level, got %s",
                           xfer_cfg_got(&ev, got, sizeof(got)));
        p->stop = 1;
        goto out;
    }
    XFER_CHECK_GOTO(xfer_cfg_record(p, &ev), st, out);
    ret = parse_map(p, top, cfg, &ev);
    if (xfer_cfg_fatal(p, ret)) {
        st = ret;
        goto out;
    }
    yaml_event_delete(&ev);
    XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out); /* document end */
    yaml_event_delete(&ev);
    XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out);
    if (ev.type == YAML_DOCUMENT_START_EVENT)
        ret = xfer_cfg_fail(p, ev.start_mark,
                            "a second YAML document: a workflow file holds exactly one");
    st = ret; /* the first document is checked all the same */
out:
    yaml_event_delete(&ev);
    return st;
}

/* ---- checks ------------------------------------------------------------------------------ */

static xfer_status_t check_map(cfg_parser_t *p, const cfg_table_t *t, void *base,
                               const void *parent);

/* Unique keys of each element against the elements before it, then the element's checks. */
static xfer_status_t check_list(cfg_parser_t *p, const cfg_key_t *k, void *base)
{
    const cfg_table_t *t = k->sub;
    const int n = *CFG_FIELD(base, k->count_off, int);
    char *arr = get_ptr(base, k->off);
    char path[512], shown[CFG_SHOW_MAX];
    const size_t list_len = p->kp_len;
    xfer_status_t st, ret = XFER_SUCCESS;
    int i, j, u;

    for (j = 0; j < n; j++) {
        char *elem = arr + (size_t) j * t->size;
        const size_t len = xfer_cfg_push_index(p, j);
        if (len == (size_t) -1)
            return XFER_ERR_NO_MEMORY;
        for (u = 0; u < t->nkeys; u++) {
            const cfg_key_t *uk = &t->keys[u];
            const char *v;
            if (!uk->unique || !(v = *CFG_FIELD(elem, uk->off, char *)))
                continue; /* a name left out or found wrong is reported already */
            for (i = 0; i < j; i++) {
                const char *w = *CFG_FIELD(arr + (size_t) i * t->size, uk->off, char *);
                const cfg_rec_t *first;
                if (!w || strcmp(v, w) != 0)
                    continue;
                snprintf(path, sizeof(path), "%.*s[%d].%s", (int) list_len, p->kp, i, uk->key);
                first = xfer_cfg_find_rec(p, path);
                ret = xfer_cfg_fail_key(p, uk->key, "duplicate %s %s %s (first at line %d)",
                                        t->noun, uk->key, xfer_cfg_quote(v, shown, sizeof(shown)),
                                        first ? first->line : 0);
                if (xfer_cfg_fatal(p, ret)) {
                    xfer_cfg_pop(p, len);
                    return ret;
                }
                break;
            }
        }
        st = check_map(p, t, elem, base);
        xfer_cfg_pop(p, len);
        if (st != XFER_SUCCESS) {
            ret = st;
            if (xfer_cfg_fatal(p, st))
                return st;
        }
    }
    return ret;
}

static xfer_status_t check_map(cfg_parser_t *p, const cfg_table_t *t, void *base,
                               const void *parent)
{
    xfer_status_t st = t->check ? t->check(p, base, parent) : XFER_SUCCESS, ret = st;
    int i;

    for (i = 0; i < t->nkeys && !xfer_cfg_fatal(p, st); i++) {
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
        if (st != XFER_SUCCESS)
            ret = st;
    }
    return ret;
}

/* ---- entry points ------------------------------------------------------------------------ */

/* xfer_last_error(): the errors kept, in file order, and how many more there were. */
static xfer_status_t report(cfg_parser_t *p)
{
    size_t n = 64, o = 0;
    char *text;
    int i;

    for (i = 0; i < p->nerrs; i++)
        n += strlen(p->errs[i].text) + 1;
    if (!(text = xfer_malloc(n)))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "error report");
    text[0] = '\0';
    for (i = 0; i < p->nerrs; i++)
        o += (size_t) snprintf(text + o, n - o, "%s%s", i ? "\n" : "", p->errs[i].text);
    if (p->nerrors > p->nerrs)
        snprintf(text + o, n - o, "\n... and %ld more error%s", p->nerrors - p->nerrs,
                 p->nerrors - p->nerrs == 1 ? "" : "s");
    xfer_err_text(XFER_ERR_CONFIG, text);
    xfer_free(text);
    return XFER_ERR_CONFIG;
}

xfer_status_t xfer_cfg_parse(const char *name, const void *text, size_t len, const cfg_table_t *top,
                             xfer_config_t *cfg)
{
    xfer_status_t st;
    cfg_parser_t p;
    int i;

    memset(&p, 0, sizeof(p));
    p.file = name;
    p.input = text;
    p.input_len = len;
    p.cfg = cfg;
    p.suggest_budget = CFG_SUGGEST_BUDGET;
    if (len > XFER_CONFIG_MAX_BYTES)
        return xfer_err_raw(XFER_ERR_CONFIG, "%s: larger than a workflow file may be (%d MiB)",
                            name, XFER_CONFIG_MAX_BYTES >> 20);
    if (!(p.kp = xfer_calloc(64, 1)))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "key path");
    p.kp_cap = 64;
    if (!xfer_cfg_grow_records(&p)) {
        xfer_free(p.kp);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "position records");
    }
    if (!yaml_parser_initialize(&p.yaml)) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "yaml_parser_initialize failed");
        goto out;
    }
    yaml_parser_set_input_string(&p.yaml, p.input, len);
    st = parse_stream(&p, top, cfg);
    /* the checks need every value read: not after an error that ends the reading */
    if (!xfer_cfg_fatal(&p, st) && !p.stop)
        st = check_map(&p, top, cfg, NULL);
    yaml_parser_delete(&p.yaml);
    /* out of memory (or a bug) wins: its message is already the last error */
    if (st != XFER_SUCCESS && st != XFER_ERR_CONFIG)
        goto out;
    if (p.nerrors)
        st = report(&p);
    else if (st != XFER_SUCCESS)
        st = XFER_ERR(XFER_ERR_INTERNAL, "a configuration error without a message");
out:
    for (i = 0; i < p.nerrs; i++)
        xfer_free(p.errs[i].text);
    xfer_cfg_free_records(&p);
    xfer_free(p.names);
    xfer_free(p.kp);
    return st;
}

xfer_status_t xfer_cfg_read_file(const char *path, char **text, size_t *len)
{
    size_t n = 0, cap = 0, got;
    char *buf = NULL;
    FILE *f;

    *text = NULL;
    *len = 0;
    if (!(f = fopen(path, "rb")))
        return xfer_err_raw(XFER_ERR_CONFIG, "%s: cannot open: %s", path, strerror(errno));
    do {
        if (cap - n < 2) {
            char *b;
            cap = cap ? 2 * cap : 65536;
            if (!(b = xfer_realloc_array(buf, cap, 1))) {
                xfer_free(buf);
                fclose(f);
                return XFER_ERR(XFER_ERR_NO_MEMORY, "%zu bytes for %s", cap, path);
            }
            buf = b;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n > XFER_CONFIG_MAX_BYTES) {
            xfer_free(buf);
            fclose(f);
            return xfer_err_raw(XFER_ERR_CONFIG, "%s: larger than a workflow file may be (%d MiB)",
                                path, XFER_CONFIG_MAX_BYTES >> 20);
        }
    } while (got > 0);
    if (ferror(f)) {
        const int err = errno;
        xfer_free(buf);
        fclose(f);
        return xfer_err_raw(XFER_ERR_CONFIG, "%s: cannot read: %s", path, strerror(err));
    }
    fclose(f);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return XFER_SUCCESS;
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
