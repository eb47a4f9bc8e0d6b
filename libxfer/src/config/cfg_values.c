/* SPDX-License-Identifier: BSD-3-Clause */
/* The workflow file's values that a table entry cannot describe (cfg.h, CFG_CUSTOM): a
 * component's command (a sequence of strings), its environment (a mapping of NAME: value) and a
 * dataset's dimensions (a dataset's `type`, scalar or record: cfg_record.c). Each handler reads,
 * prints and releases its value. */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "cfg.h"

#define STR_(x) #x
#define STR(x)  STR_(x)

#define DIMS_EXPECTED                                                                              \
    "a sequence of 1.." STR(XFER_MAX_DIMS) " extents: positive integers or variable, or joined "   \
                                           "first"

/* The value is not of the handler's shape: report it and read past it. */
static xfer_status_t not_a(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *ev)
{
    char got[96];
    xfer_status_t st = xfer_cfg_fail(p, ev->start_mark, "expected %s, got %s", k->handler->expected,
                                     xfer_cfg_got(ev, got, sizeof(got)));
    xfer_status_t st2 = xfer_cfg_fatal(p, st) ? st : xfer_cfg_skip(p, ev);

    return st2 != XFER_SUCCESS ? st2 : st;
}

/* The item that @p ev began was found wrong (@p st): remember it in @p ret and read past the
 * item. Returns what to go on with: success, or a fatal status. */
static xfer_status_t past_item(cfg_parser_t *p, const yaml_event_t *ev, xfer_status_t st,
                               xfer_status_t *ret)
{
    *ret = st;
    return xfer_cfg_fatal(p, st) ? st : xfer_cfg_skip(p, ev);
}

/* cmd: a sequence of at most k->nmax strings into char **argv (NULL-terminated) and int argc. */
static xfer_status_t parse_strings(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *start,
                                   void *base)
{
    char ***argv = CFG_FIELD(base, k->off, char **);
    int *argc = CFG_FIELD(base, k->count_off, int);
    xfer_status_t st = XFER_SUCCESS, ret = XFER_SUCCESS;
    size_t len = (size_t) -1;
    int cap = 0, n;
    yaml_event_t ev;

    if (start->type != YAML_SEQUENCE_START_EVENT)
        return not_a(p, k, start);
    memset(&ev, 0, sizeof(ev));
    for (n = 0;; n++) {
        char *s;
        XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out);
        if (ev.type == YAML_SEQUENCE_END_EVENT)
            break;
        if ((len = xfer_cfg_push_index(p, n)) == (size_t) -1) {
            st = XFER_ERR_NO_MEMORY;
            goto out;
        }
        st = xfer_cfg_scalar(p, &ev, "a string");
        if (st == XFER_SUCCESS && n >= k->nmax) /* said once; the rest is counted */
            st = n == k->nmax ? xfer_cfg_fail(p, ev.start_mark, "more than %d strings", k->nmax)
                              : XFER_ERR_CONFIG;
        if (st != XFER_SUCCESS) {
            XFER_CHECK_GOTO(past_item(p, &ev, st, &ret), st, out);
        } else {
            if (!xfer_grow_array((void **) argv, &cap, *argc + 2, sizeof(**argv))) {
                st = XFER_ERR(XFER_ERR_NO_MEMORY, "%d arguments", *argc + 1);
                goto out;
            }
            if (!(s = xfer_strdup((const char *) ev.data.scalar.value))) {
                st = XFER_ERR(XFER_ERR_NO_MEMORY, "argument");
                goto out;
            }
            (*argv)[(*argc)++] = s;
            (*argv)[*argc] = NULL;
        }
        yaml_event_delete(&ev);
        xfer_cfg_pop(p, len);
        len = (size_t) -1;
    }
    if (n < k->nmin)
        ret = xfer_cfg_fail(p, start->start_mark,
                            "expected at least %d string%s (the program to run), got %d", k->nmin,
                            k->nmin == 1 ? "" : "s", n);
    st = ret;
out:
    if (len != (size_t) -1)
        xfer_cfg_pop(p, len);
    yaml_event_delete(&ev);
    return st;
}

static void print_strings(FILE *out, const cfg_key_t *k, const void *base)
{
    char *const *argv = *CFG_CFIELD(base, k->off, char **);
    const int argc = *CFG_CFIELD(base, k->count_off, int);
    int i;

    putc('[', out);
    for (i = 0; i < argc; i++) {
        if (i)
            fputs(", ", out);
        xfer_cfg_print_str(out, argv[i]);
    }
    putc(']', out);
}

static void release_strings(const cfg_key_t *k, void *base)
{
    char ***list = CFG_FIELD(base, k->off, char **);
    int *n = CFG_FIELD(base, k->count_off, int);
    int i;

    for (i = 0; i < *n; i++)
        xfer_free((*list)[i]);
    xfer_free(*list);
    *list = NULL;
    *n = 0;
}

int xfer_cfg_is_identifier(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

/* env: a mapping of at most k->nmax NAME: value into "NAME=value" strings. */
static xfer_status_t parse_env(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *start,
                               void *base)
{
    char ***env = CFG_FIELD(base, k->off, char **);
    int *n = CFG_FIELD(base, k->count_off, int);
    int *lines = NULL; /* where each name was set, for duplicates */
    xfer_status_t st = XFER_SUCCESS, ret = XFER_SUCCESS, bad;
    int cap = 0, lcap = 0, nread, i;
    size_t len = (size_t) -1;
    yaml_event_t key, val;
    char shown[96];

    if (start->type != YAML_MAPPING_START_EVENT)
        return not_a(p, k, start);
    memset(&key, 0, sizeof(key));
    memset(&val, 0, sizeof(val));
    for (nread = 0;; nread++) {
        const char *name, *value;
        size_t nlen;
        char *s;
        XFER_CHECK_GOTO(xfer_cfg_next(p, &key), st, out);
        if (key.type == YAML_MAPPING_END_EVENT)
            break;
        if ((bad = xfer_cfg_scalar(p, &key, "a variable name")) != XFER_SUCCESS) {
            /* no name: past the key and its value */
            XFER_CHECK_GOTO(past_item(p, &key, bad, &ret), st, out);
            XFER_CHECK_GOTO(xfer_cfg_next(p, &val), st, out);
            XFER_CHECK_GOTO(xfer_cfg_skip(p, &val), st, out);
            goto next;
        }
        name = (const char *) key.data.scalar.value;
        nlen = strlen(name);
        if ((len = xfer_cfg_push_key(p, name)) == (size_t) -1) {
            st = XFER_ERR_NO_MEMORY;
            goto out;
        }
        if (nread >= k->nmax) /* said once; the rest is read past */
            bad = nread == k->nmax
                      ? xfer_cfg_fail(p, key.start_mark, "more than %d variables", k->nmax)
                      : XFER_ERR_CONFIG;
        else if (!xfer_cfg_is_identifier(name))
            bad =
                xfer_cfg_fail(p, key.start_mark,
                              "not an environment variable name (expected [A-Za-z_][A-Za-z0-9_]*)");
        for (i = 0; i < *n && bad == XFER_SUCCESS; i++)
            if (strncmp((*env)[i], name, nlen) == 0 && (*env)[i][nlen] == '=')
                bad = xfer_cfg_fail(p, key.start_mark, "duplicate key %s (first at line %d)",
                                    xfer_cfg_quote(name, shown, sizeof(shown)), lines[i]);
        if (xfer_cfg_fatal(p, bad)) {
            st = bad;
            goto out;
        }
        XFER_CHECK_GOTO(xfer_cfg_next(p, &val), st, out);
        if (bad == XFER_SUCCESS)
            bad = xfer_cfg_scalar(p, &val, "a string");
        if (bad != XFER_SUCCESS) {
            XFER_CHECK_GOTO(past_item(p, &val, bad, &ret), st, out);
            goto next;
        }
        value = (const char *) val.data.scalar.value;
        if (!xfer_grow_array((void **) &lines, &lcap, *n + 1, sizeof(*lines)) ||
            !xfer_grow_array((void **) env, &cap, *n + 1, sizeof(**env)) ||
            !(s = xfer_malloc(nlen + strlen(value) + 2))) {
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "environment");
            goto out;
        }
        sprintf(s, "%s=%s", name, value);
        lines[*n] = (int) key.start_mark.line + 1;
        (*env)[(*n)++] = s;
    next:
        yaml_event_delete(&key);
        yaml_event_delete(&val);
        if (len != (size_t) -1)
            xfer_cfg_pop(p, len);
        len = (size_t) -1;
    }
    st = ret;
out:
    if (len != (size_t) -1)
        xfer_cfg_pop(p, len);
    yaml_event_delete(&key);
    yaml_event_delete(&val);
    xfer_free(lines);
    return st;
}

static void print_env(FILE *out, const cfg_key_t *k, const void *base)
{
    char *const *env = *CFG_CFIELD(base, k->off, char **);
    const int n = *CFG_CFIELD(base, k->count_off, int);
    char name[256];
    int i;

    putc('{', out);
    for (i = 0; i < n; i++) {
        const char *eq = strchr(env[i], '=');
        const size_t nlen = (size_t) (eq - env[i]);
        /* names are [A-Za-z_][A-Za-z0-9_]*: no escaping, only a bound */
        snprintf(name, sizeof(name), "%.*s", (int) nlen, env[i]);
        fprintf(out, "%s\"%s\": ", i ? ", " : "", name);
        xfer_cfg_print_str(out, eq + 1);
    }
    putc('}', out);
}

/* One entry of dims, at index @p n: an extent into *@p v, or a word: `joined` (first only) sets
 * *@p joined, `variable` bit n of *@p variable; the extent of a word is 0. */
static xfer_status_t dims_entry(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *ev, int n,
                                uint64_t *v, int *joined, unsigned *variable)
{
    char got[96], hint[2 * CFG_SHOW_MAX];
    xfer_status_t st = xfer_cfg_scalar(p, ev, "a positive integer, variable or joined");
    const char *s;
    cfg_suggest_t sg;
    int rc;

    if (st != XFER_SUCCESS)
        return st;
    s = (const char *) ev->data.scalar.value;
    if (strcmp(s, "joined") == 0) {
        if (n > 0)
            return xfer_cfg_fail(p, ev->start_mark,
                                 "joined is the first entry only (dims: [joined, d1, ...]), "
                                 "not entry %d",
                                 n);
        *joined = 1;
        *v = 0;
        return XFER_SUCCESS;
    }
    if (strcmp(s, "variable") == 0) {
        *variable |= n < (int) (8 * sizeof(*variable)) ? 1u << n : 0;
        *v = 0;
        return XFER_SUCCESS;
    }
    rc = xfer_cfg_u64(s, v);
    if (rc < 0) {
        xfer_cfg_suggest_init(&sg, p, s);
        xfer_cfg_suggest_add(&sg, "joined");
        xfer_cfg_suggest_add(&sg, "variable");
        return xfer_cfg_fail(
            p, ev->start_mark, "expected a positive integer, variable or joined, got %s%s",
            xfer_cfg_got(ev, got, sizeof(got)), xfer_cfg_suggestion(&sg, hint, sizeof(hint)));
    }
    if (rc == 0 && *v < (uint64_t) k->min)
        return xfer_cfg_fail(p, ev->start_mark, "expected a positive integer, got %s",
                             xfer_cfg_got(ev, got, sizeof(got)));
    if (rc > 0 || *v > (uint64_t) k->max)
        return xfer_cfg_fail(p, ev->start_mark, "impossible extent %s (more than 2^%d)",
                             xfer_cfg_got(ev, got, sizeof(got)), XFER_CFG_MAX_SIZE_LOG2);
    return XFER_SUCCESS;
}

/* dims: a sequence of extents into a dataset's dims[] and ndims, joined and variable (set only
 * when every entry is valid). */
static xfer_status_t parse_dims(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *start,
                                void *base)
{
    xfer_cfg_dataset_t *d = base;
    uint64_t dims[XFER_MAX_DIMS];
    xfer_status_t st = XFER_SUCCESS, ret = XFER_SUCCESS;
    size_t len = (size_t) -1;
    unsigned variable = 0;
    yaml_event_t ev;
    int n = 0, joined = 0;

    if (start->type != YAML_SEQUENCE_START_EVENT)
        return not_a(p, k, start);
    memset(&ev, 0, sizeof(ev));
    for (;; n++) {
        uint64_t v = 0;
        XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out);
        if (ev.type == YAML_SEQUENCE_END_EVENT)
            break;
        if ((len = xfer_cfg_push_index(p, n)) == (size_t) -1) {
            st = XFER_ERR_NO_MEMORY;
            goto out;
        }
        st = dims_entry(p, k, &ev, n, &v, &joined, &variable);
        if (st != XFER_SUCCESS)
            XFER_CHECK_GOTO(past_item(p, &ev, st, &ret), st, out);
        else if (n < k->nmax && n < XFER_MAX_DIMS)
            dims[n] = v;
        yaml_event_delete(&ev);
        xfer_cfg_pop(p, len);
        len = (size_t) -1;
    }
    if (n < k->nmin || n > k->nmax)
        ret = xfer_cfg_fail(p, start->start_mark, "expected %d..%d dimensions, got %d", k->nmin,
                            k->nmax, n);
    else if (joined && variable && ret == XFER_SUCCESS)
        ret = xfer_cfg_fail(p, start->start_mark,
                            "joined and variable together: a joined dataset's rows change "
                            "every step already, its other extents are fixed (dims: [joined, "
                            "d1, ...] or [variable, ...])");
    if (ret == XFER_SUCCESS) {
        memcpy(d->dims, dims, (size_t) n * sizeof(*dims));
        d->ndims = n;
        d->joined = joined;
        d->variable = variable;
    }
    st = ret;
out:
    if (len != (size_t) -1)
        xfer_cfg_pop(p, len);
    yaml_event_delete(&ev);
    return st;
}

static void print_dims(FILE *out, const cfg_key_t *k, const void *base)
{
    const xfer_cfg_dataset_t *d = base;
    int i;

    (void) k;
    putc('[', out);
    for (i = 0; i < d->ndims; i++) {
        if (i)
            fputs(", ", out);
        if (i == 0 && d->joined)
            fputs("joined", out);
        else if (d->variable & (1u << i))
            fputs("variable", out);
        else
            fprintf(out, "%" PRIu64, d->dims[i]);
    }
    putc(']', out);
}

static void release_nothing(const cfg_key_t *k, void *base)
{
    (void) k;
    (void) base;
}

const cfg_handler_t xfer_cfg_strings_handler = {"a sequence of strings", parse_strings,
                                                print_strings, release_strings};
const cfg_handler_t xfer_cfg_env_handler = {"a mapping of NAME: value", parse_env, print_env,
                                            release_strings};
const cfg_handler_t xfer_cfg_dims_handler = {DIMS_EXPECTED, parse_dims, print_dims,
                                             release_nothing};
