/* SPDX-License-Identifier: BSD-3-Clause */
/* A dataset's `type` (cfg.h, CFG_CUSTOM): one of the scalar types of the key's names, or a
 * record, a mapping of field name to a scalar type or to [type, count] in the order written
 * (`{id: int64, pos: [float64, 3], q: float32}`), laid out like the equivalent C struct
 * (xfer_record_layout). Every error of a record is reported; a record with one is not kept, and
 * the dataset's type stays 0 so that the checks leave its size alone. */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "cfg.h"

#define COUNT_MAX INT_MAX /* MPI_Type_create_struct's block lengths are ints */

/* The scalar type names of @p k, "|"-separated. */
static const char *type_names(const cfg_key_t *k, char *buf, size_t size)
{
    const cfg_enum_t *e;
    size_t o = 0;

    buf[0] = '\0';
    for (e = k->names; e->name && o < size; e++)
        o += (size_t) snprintf(buf + o, size - o, "%s%s", o ? "|" : "", e->name);
    return buf;
}

/* A scalar type's name at @p ev into *@p type; else the error the scalar types always gave
 * ("expected int8|...|float64, got ..."), with the names it was probably meant to be. */
static xfer_status_t scalar_type(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *ev,
                                 xfer_type_t *type)
{
    char want[256], got[CFG_SHOW_MAX], hint[2 * CFG_SHOW_MAX];
    const cfg_enum_t *e;
    cfg_suggest_t s;
    xfer_status_t st;
    const char *v;

    if ((st = xfer_cfg_scalar(p, ev, type_names(k, want, sizeof(want)))) != XFER_SUCCESS)
        return st;
    v = (const char *) ev->data.scalar.value;
    for (e = k->names; e->name; e++)
        if (strcmp(v, e->name) == 0) {
            *type = (xfer_type_t) e->value;
            return XFER_SUCCESS;
        }
    xfer_cfg_suggest_init(&s, p, v);
    for (e = k->names; e->name; e++)
        xfer_cfg_suggest_add(&s, e->name);
    return xfer_cfg_fail(p, ev->start_mark, "expected %s, got %s%s", want,
                         xfer_cfg_got(ev, got, sizeof(got)),
                         xfer_cfg_suggestion(&s, hint, sizeof(hint)));
}

/* A fixed-length field, [type, count], that @p start opened. */
static xfer_status_t array_field(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *start,
                                 xfer_record_field_t *f)
{
    xfer_status_t st = XFER_SUCCESS, ret = XFER_SUCCESS;
    size_t len = (size_t) -1;
    char got[CFG_SHOW_MAX];
    yaml_event_t ev;
    int n;

    memset(&ev, 0, sizeof(ev));
    for (n = 0;; n++) {
        XFER_CHECK_GOTO(xfer_cfg_next(p, &ev), st, out);
        if (ev.type == YAML_SEQUENCE_END_EVENT)
            break;
        if ((len = xfer_cfg_push_index(p, n)) == (size_t) -1) {
            st = XFER_ERR_NO_MEMORY;
            goto out;
        }
        if (n == 0) {
            st = scalar_type(p, k, &ev, &f->type);
        } else if (n == 1) {
            uint64_t v = 0;
            st = xfer_cfg_scalar(p, &ev, "a count");
            if (st == XFER_SUCCESS && (xfer_cfg_u64((const char *) ev.data.scalar.value, &v) != 0 ||
                                       v < 1 || v > COUNT_MAX))
                st = xfer_cfg_fail(p, ev.start_mark, "expected a count in 1..%d, got %s", COUNT_MAX,
                                   xfer_cfg_got(&ev, got, sizeof(got)));
            f->count = (uint32_t) v;
        }
        if (st != XFER_SUCCESS) {
            ret = st;
            if (xfer_cfg_fatal(p, st))
                goto out;
        }
        XFER_CHECK_GOTO(xfer_cfg_skip(p, &ev), st, out);
        yaml_event_delete(&ev);
        xfer_cfg_pop(p, len);
        len = (size_t) -1;
    }
    if (n != 2)
        ret = xfer_cfg_fail(p, start->start_mark,
                            "expected [type, count] (a fixed-length field), got %d entr%s", n,
                            n == 1 ? "y" : "ies");
    st = ret;
out:
    if (len != (size_t) -1)
        xfer_cfg_pop(p, len);
    yaml_event_delete(&ev);
    return st;
}

/* The value of one field: a scalar type or [type, count]. */
static xfer_status_t field_value(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *ev,
                                 xfer_record_field_t *f)
{
    char want[256], got[CFG_SHOW_MAX];
    xfer_status_t st;

    f->count = 1;
    if (ev->type == YAML_SEQUENCE_START_EVENT)
        return array_field(p, k, ev, f);
    if (ev->type == YAML_SCALAR_EVENT || ev->type == YAML_ALIAS_EVENT)
        return scalar_type(p, k, ev, &f->type);
    st = xfer_cfg_fail(p, ev->start_mark,
                       "expected %s or [type, count] (records do not nest), got %s",
                       type_names(k, want, sizeof(want)), xfer_cfg_got(ev, got, sizeof(got)));
    if (!xfer_cfg_fatal(p, st)) {
        xfer_status_t st2 = xfer_cfg_skip(p, ev);
        if (st2 != XFER_SUCCESS)
            return st2;
    }
    return st;
}

/* The record that the mapping @p start opened into *@p out (NULL when it has an error). */
static xfer_status_t parse_record(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *start,
                                  xfer_record_t **out)
{
    xfer_record_t *r = NULL;
    int lines[XFER_RECORD_MAX_FIELDS]; /* where each field was named, for duplicates */
    xfer_status_t st = XFER_SUCCESS, ret = XFER_SUCCESS, bad;
    size_t len = (size_t) -1;
    yaml_event_t key, val;
    char shown[CFG_SHOW_MAX];
    int nread, i;

    *out = NULL;
    memset(&key, 0, sizeof(key));
    memset(&val, 0, sizeof(val));
    if (!(r = xfer_calloc(1, sizeof(*r))) ||
        !(r->fields = xfer_calloc(XFER_RECORD_MAX_FIELDS, sizeof(*r->fields)))) {
        p->stop = 1;
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "a record");
        goto out;
    }
    for (nread = 0;; nread++) {
        xfer_record_field_t f = {NULL, (xfer_type_t) 0, 1, 0};
        const char *name;
        XFER_CHECK_GOTO(xfer_cfg_next(p, &key), st, out);
        if (key.type == YAML_MAPPING_END_EVENT)
            break;
        if ((bad = xfer_cfg_scalar(p, &key, "a field name")) != XFER_SUCCESS) {
            ret = bad; /* no name: past the key and its value */
            if (xfer_cfg_fatal(p, bad)) {
                st = bad;
                goto out;
            }
            XFER_CHECK_GOTO(xfer_cfg_skip(p, &key), st, out);
            XFER_CHECK_GOTO(xfer_cfg_next(p, &val), st, out);
            XFER_CHECK_GOTO(xfer_cfg_skip(p, &val), st, out);
            goto next;
        }
        name = (const char *) key.data.scalar.value;
        if ((len = xfer_cfg_push_key(p, name)) == (size_t) -1) {
            st = XFER_ERR_NO_MEMORY;
            goto out;
        }
        if (nread >= XFER_RECORD_MAX_FIELDS) /* said once; the rest is read past */
            bad = nread == XFER_RECORD_MAX_FIELDS
                      ? xfer_cfg_fail(p, key.start_mark,
                                      "more than %d fields in a record (XFER_RECORD_MAX_FIELDS)",
                                      XFER_RECORD_MAX_FIELDS)
                      : XFER_ERR_CONFIG;
        else if (!xfer_cfg_is_identifier(name))
            bad = xfer_cfg_fail(p, key.start_mark,
                                "field name %s is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)",
                                xfer_cfg_quote(name, shown, sizeof(shown)));
        for (i = 0; i < r->nfields && bad == XFER_SUCCESS; i++)
            if (strcmp(r->fields[i].name, name) == 0)
                bad = xfer_cfg_fail(p, key.start_mark, "duplicate field %s (first at line %d)",
                                    xfer_cfg_quote(name, shown, sizeof(shown)), lines[i]);
        if (xfer_cfg_fatal(p, bad)) {
            st = bad;
            goto out;
        }
        XFER_CHECK_GOTO(xfer_cfg_next(p, &val), st, out);
        if (bad != XFER_SUCCESS) {
            ret = bad;
            XFER_CHECK_GOTO(xfer_cfg_skip(p, &val), st, out);
            goto next;
        }
        /* a field found wrong is kept all the same, for its name: a record with an error is
         * not laid out, but a second field of that name is still a duplicate */
        if ((bad = field_value(p, k, &val, &f)) != XFER_SUCCESS) {
            ret = bad;
            if (xfer_cfg_fatal(p, bad)) {
                st = bad;
                goto out;
            }
        }
        if (!(f.name = xfer_strdup(name))) {
            p->stop = 1;
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "a field name");
            goto out;
        }
        lines[r->nfields] = (int) key.start_mark.line + 1;
        r->fields[r->nfields++] = f;
    next:
        yaml_event_delete(&key);
        yaml_event_delete(&val);
        if (len != (size_t) -1)
            xfer_cfg_pop(p, len);
        len = (size_t) -1;
    }
    if (nread == 0)
        ret = xfer_cfg_fail(p, start->start_mark,
                            "a record needs at least one field (got an empty mapping)");
    if (ret == XFER_SUCCESS && (st = xfer_record_layout(r)) != XFER_SUCCESS) {
        p->stop = 1; /* the fields were checked: a bug */
        goto out;
    }
    st = ret;
    if (st == XFER_SUCCESS) {
        *out = r;
        r = NULL;
    }
out:
    if (len != (size_t) -1)
        xfer_cfg_pop(p, len);
    yaml_event_delete(&key);
    yaml_event_delete(&val);
    xfer_cfg_record_free(r);
    return st;
}

static xfer_status_t parse_type(cfg_parser_t *p, const cfg_key_t *k, const yaml_event_t *start,
                                void *base)
{
    xfer_cfg_dataset_t *d = base;
    char want[512], got[CFG_SHOW_MAX];
    xfer_type_t type = (xfer_type_t) 0;
    xfer_status_t st;

    d->type = (xfer_type_t) 0;
    d->record = NULL;
    if (start->type == YAML_MAPPING_START_EVENT) {
        if ((st = parse_record(p, k, start, &d->record)) == XFER_SUCCESS)
            d->type = XFER_TYPE_RECORD;
        return st;
    }
    if (start->type == YAML_SCALAR_EVENT || start->type == YAML_ALIAS_EVENT) {
        if ((st = scalar_type(p, k, start, &type)) == XFER_SUCCESS)
            d->type = type;
        return st;
    }
    st = xfer_cfg_fail(p, start->start_mark, "expected %s, got %s",
                       xfer_cfg_expected(k, want, sizeof(want)),
                       xfer_cfg_got(start, got, sizeof(got)));
    if (!xfer_cfg_fatal(p, st)) {
        xfer_status_t st2 = xfer_cfg_skip(p, start);
        if (st2 != XFER_SUCCESS)
            return st2;
    }
    return st;
}

static void print_type(FILE *out, const cfg_key_t *k, const void *base)
{
    const xfer_cfg_dataset_t *d = base;
    int i;

    (void) k;
    if (d->type != XFER_TYPE_RECORD || !d->record) {
        fputs(xfer_type_name(d->type), out);
        return;
    }
    putc('{', out);
    for (i = 0; i < d->record->nfields; i++) { /* C identifiers: plain scalars */
        const xfer_record_field_t *f = &d->record->fields[i];
        fprintf(out, "%s%s: ", i ? ", " : "", f->name);
        if (f->count == 1)
            fputs(xfer_type_name(f->type), out);
        else
            fprintf(out, "[%s, %" PRIu32 "]", xfer_type_name(f->type), f->count);
    }
    putc('}', out);
}

static void release_type(const cfg_key_t *k, void *base)
{
    xfer_cfg_dataset_t *d = base;

    (void) k;
    xfer_cfg_record_free(d->record);
    d->record = NULL;
}

const cfg_handler_t xfer_cfg_type_handler = {"a record {field: type or [type, count], ...}",
                                             parse_type, print_type, release_type};
