/* SPDX-License-Identifier: BSD-3-Clause */
/* The generic writers: the effective configuration (YAML that xfer_config_load() reads back
 * to the same structs) and the Markdown reference, both from the descriptor tables. */
#include <inttypes.h>
#include <string.h>

#include "cfg.h"

/* Length of the UTF-8 character at @p u and its code point; 0 if it is not valid UTF-8. */
static int utf8_char(const unsigned char *u, uint32_t *cp)
{
    int n, i;

    if (u[0] < 0x80) {
        *cp = u[0];
        return 1;
    }
    if ((u[0] & 0xE0) == 0xC0) {
        n = 2;
        *cp = u[0] & 0x1Fu;
    } else if ((u[0] & 0xF0) == 0xE0) {
        n = 3;
        *cp = u[0] & 0x0Fu;
    } else if ((u[0] & 0xF8) == 0xF0) {
        n = 4;
        *cp = u[0] & 0x07u;
    } else {
        return 0;
    }
    for (i = 1; i < n; i++) {
        if ((u[i] & 0xC0) != 0x80)
            return 0;
        *cp = (*cp << 6) | (u[i] & 0x3Fu);
    }
    return n;
}

void xfer_cfg_print_str(FILE *out, const char *s)
{
    const unsigned char *u = (const unsigned char *) s;

    putc('"', out);
    while (*u) {
        uint32_t cp;
        const int n = utf8_char(u, &cp);
        if (n == 0) { /* not from libyaml, which only hands out UTF-8 */
            fprintf(out, "\\x%02x", *u++);
            continue;
        }
        if (cp == '"' || cp == '\\')
            fprintf(out, "\\%c", (char) cp);
        else if (cp == '\n')
            fputs("\\n", out);
        else if (cp == '\t')
            fputs("\\t", out);
        else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
            fprintf(out, "\\x%02x", (unsigned) cp);
        else if (cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF)
            fprintf(out, "\\u%04x", (unsigned) cp); /* line breaks and non-characters */
        else
            fwrite(u, 1, (size_t) n, out);
        u += n;
    }
    putc('"', out);
}

const char *xfer_cfg_expected(const cfg_key_t *k, char *buf, size_t size)
{
    const cfg_enum_t *e;
    size_t o = 0;

    switch (k->kind) {
    case CFG_STR:
        return "a string";
    case CFG_NAME:
        return "a name ([A-Za-z0-9_.-]+)";
    case CFG_INT:
        snprintf(buf, size, "%s%san integer in %lld..%lld", k->word ? k->word : "",
                 k->word ? " or " : "", (long long) k->min, (long long) k->max);
        return buf;
    case CFG_U64:
        snprintf(buf, size, "an integer in %lld..%lld", (long long) k->min, (long long) k->max);
        return buf;
    case CFG_REAL:
        return "a finite number >= 0";
    case CFG_ENUM:
        buf[0] = '\0';
        for (e = k->names; e->name && o < size; e++)
            o += (size_t) snprintf(buf + o, size - o, "%s%s", o ? "|" : "", e->name);
        return buf;
    case CFG_COMPREF:
        return "the name of a component";
    case CFG_MAP:
        return "a mapping";
    case CFG_LIST:
        return "a sequence of mappings";
    case CFG_CUSTOM:
        if (!k->names)
            return k->handler->expected;
        buf[0] = '\0'; /* the words, then what else the handler takes */
        for (e = k->names; e->name && o < size; e++)
            o += (size_t) snprintf(buf + o, size - o, "%s%s", o ? "|" : "", e->name);
        if (o < size)
            snprintf(buf + o, size - o, ", or %s", k->handler->expected);
        return buf;
    }
    return "?";
}

/* ---- the effective configuration ------------------------------------------------------- */

static const char *enum_name(const cfg_enum_t *e, int value)
{
    for (; e->name; e++)
        if (e->value == value)
            return e->name;
    return "?";
}

static void print_value(FILE *out, const xfer_config_t *cfg, const cfg_key_t *k, const void *base,
                        int indent)
{
    const char *s;
    int v, i;

    switch (k->kind) {
    case CFG_STR:
    case CFG_NAME:
        s = *CFG_CFIELD(base, k->off, char *);
        putc(' ', out);
        xfer_cfg_print_str(out, s ? s : "");
        putc('\n', out);
        break;
    case CFG_INT:
        v = *CFG_CFIELD(base, k->off, int);
        if (k->word && v == 0)
            fprintf(out, " %s\n", k->word);
        else
            fprintf(out, " %d\n", v);
        break;
    case CFG_U64:
        fprintf(out, " %" PRIu64 "\n", *CFG_CFIELD(base, k->off, uint64_t));
        break;
    case CFG_REAL:
        fprintf(out, " %.17g\n", *CFG_CFIELD(base, k->off, double));
        break;
    case CFG_ENUM:
        fprintf(out, " %s\n", enum_name(k->names, *CFG_CFIELD(base, k->off, int)));
        break;
    case CFG_COMPREF:
        v = *CFG_CFIELD(base, k->off, int);
        putc(' ', out);
        xfer_cfg_print_str(out, v >= 0 && v < cfg->ncomponents ? cfg->components[v].name : "");
        putc('\n', out);
        break;
    case CFG_MAP:
        putc('\n', out);
        xfer_cfg_print_map(out, cfg, k->sub, (const char *) base + k->off, indent + 2, 0);
        break;
    case CFG_LIST: {
        const int n = *CFG_CFIELD(base, k->count_off, int);
        const char *arr;
        memcpy(&arr, (const char *) base + k->off, sizeof(arr));
        if (n == 0) {
            fputs(" []\n", out);
            break;
        }
        putc('\n', out);
        for (i = 0; i < n; i++)
            xfer_cfg_print_map(out, cfg, k->sub, arr + (size_t) i * k->sub->size, indent + 4, 1);
        break;
    }
    case CFG_CUSTOM:
        putc(' ', out);
        k->handler->print(out, k, base);
        putc('\n', out);
        break;
    }
}

/* A set_only key at 0: not printed. */
static int unset(const cfg_key_t *k, const void *base)
{
    if (!k->set_only)
        return 0;
    switch (k->kind) {
    case CFG_U64:
        return *CFG_CFIELD(base, k->off, uint64_t) == 0;
    case CFG_REAL:
        return *CFG_CFIELD(base, k->off, double) == 0.0;
    case CFG_INT:
    case CFG_ENUM:
        return *CFG_CFIELD(base, k->off, int) == 0;
    default:
        return 0;
    }
}

void xfer_cfg_print_map(FILE *out, const xfer_config_t *cfg, const cfg_table_t *t, const void *base,
                        int indent, int dash)
{
    int i, first = 1;

    for (i = 0; i < t->nkeys; i++) {
        if (unset(&t->keys[i], base))
            continue;
        if (first && dash)
            fprintf(out, "%*s- ", indent - 2, "");
        else
            fprintf(out, "%*s", indent, "");
        first = 0;
        fprintf(out, "%s:", t->keys[i].key);
        print_value(out, cfg, &t->keys[i], base, indent);
    }
}

/* ---- the reference ----------------------------------------------------------------------- */

/* A Markdown table cell: '|' would end it. */
static void cell(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            putc('\\', out);
        putc(*s, out);
    }
}

void xfer_cfg_doc(FILE *out, const cfg_table_t *t)
{
    char buf[256], line[1024];
    int i;

    if (*t->path)
        fprintf(out, "### `%s`\n\n%s\n\n", t->path, t->doc);
    else
        fprintf(out, "### Top level\n\n%s\n\n", t->doc);
    fputs("| key | type | default | meaning |\n| --- | --- | --- | --- |\n", out);
    for (i = 0; i < t->nkeys; i++) {
        const cfg_key_t *k = &t->keys[i];
        fprintf(out, "| `%s` | ", k->key);
        if (k->kind == CFG_MAP)
            fprintf(out, "mapping, see `%s`", k->sub->path);
        else if (k->kind == CFG_LIST)
            fprintf(out, "sequence of %d to %d mappings, see `%s`", k->nmin, k->nmax, k->sub->path);
        else
            cell(out, xfer_cfg_expected(k, buf, sizeof(buf)));
        fputs(" | ", out);
        if (k->required)
            fputs("required", out);
        else if (k->dflt_doc)
            cell(out, k->dflt_doc);
        else if (k->kind == CFG_MAP)
            fputs("all defaults", out);
        else if (k->dflt && (k->kind == CFG_STR || k->kind == CFG_NAME))
            fprintf(out, "`\"%s\"`", k->dflt);
        else if (k->dflt)
            fprintf(out, "`%s`", k->dflt);
        else
            fputs("-", out);
        fputs(" | ", out);
        cell(out, k->doc_fn ? k->doc_fn(line, sizeof(line)) : k->doc);
        fputs(" |\n", out);
    }
    putc('\n', out);
    for (i = 0; i < t->nkeys; i++)
        if (t->keys[i].kind == CFG_MAP || t->keys[i].kind == CFG_LIST)
            xfer_cfg_doc(out, t->keys[i].sub);
}
