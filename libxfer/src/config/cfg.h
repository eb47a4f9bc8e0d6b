/* SPDX-License-Identifier: BSD-3-Clause */
/* Config layer internals: the descriptor tables that describe the workflow file, and the
 * generic engine that reads (cfg_parse.c), checks, prints and documents (cfg_print.c) any
 * structure described by them. config.c holds the tables themselves and the checks a table
 * entry cannot express, cfg_values.c the handlers of the values it cannot describe. */
#ifndef XFER_CFG_H
#define XFER_CFG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <yaml.h>

#include <xfer/config.h>

#include "../core/core.h"

typedef enum cfg_kind {
    CFG_STR,     /* char *: any scalar */
    CFG_NAME,    /* char *: [A-Za-z0-9_.-]+ */
    CFG_INT,     /* int in min..max, or the word `word` stored as 0 */
    CFG_U64,     /* uint64_t in min..max */
    CFG_REAL,    /* double: a finite number >= 0 */
    CFG_ENUM,    /* int: the value of one of `names` */
    CFG_COMPREF, /* int: a component's index, resolved by the table's check (-1 until then) */
    CFG_MAP,     /* nested mapping: `sub`, its offsets relative to base + off */
    CFG_LIST,    /* sequence of mappings `sub`: array pointer at off, int count at count_off */
    CFG_CUSTOM   /* `handler` reads, prints and releases the value */
} cfg_kind_t;

typedef struct cfg_enum {
    const char *name;
    int value;
} cfg_enum_t;

struct cfg_parser;
struct cfg_key;
struct cfg_table;

typedef struct cfg_handler {
    const char *expected; /* what the value is, for messages and the reference */
    /* Read the value that begins with @p ev (the caller deletes @p ev) into @p base. */
    xfer_status_t (*parse)(struct cfg_parser *p, const struct cfg_key *k, const yaml_event_t *ev,
                           void *base);
    /* Write the value (one line, after "key:") */
    void (*print)(FILE *out, const struct cfg_key *k, const void *base);
    void (*release)(const struct cfg_key *k, void *base);
} cfg_handler_t;

/* cfg_values.c: the custom values of the workflow file */
extern const cfg_handler_t xfer_cfg_strings_handler; /* a command: a sequence of strings */
extern const cfg_handler_t xfer_cfg_env_handler;     /* a mapping of NAME: value */
/* The handlers below are a dataset's: they fill fields of xfer_cfg_dataset_t beside the
 * key's own. */
extern const cfg_handler_t xfer_cfg_dims_handler; /* dims, ndims, joined, variable */
/* cfg_record.c: type and record (the key's names: the scalar types) */
extern const cfg_handler_t xfer_cfg_type_handler;

/* Release a record made by the type handler (NULL accepted). */
void xfer_cfg_record_free(xfer_record_t *r);

#define XFER_CFG_MAX_SIZE_LOG2 62 /* largest dataset: 2^62 bytes */

/* One key of a mapping. The same entry drives reading, defaults, checks, the effective
 * configuration dump and the reference in docs/workflow.md. */
typedef struct cfg_key {
    const char *key;
    cfg_kind_t kind;
    const char *dflt;     /* default as YAML text; scalar kinds are filled by parsing it */
    const char *dflt_doc; /* default for the reference when it is not a constant */
    int required;
    int unique;              /* CFG_NAME of a list element: unique among the list's elements */
    int set_only;            /* the effective configuration leaves it out while 0 (a key that
                                only some elements take: max_rows of a joined dataset) */
    size_t off;              /* field in the table's struct */
    size_t count_off;        /* CFG_LIST, sequence handlers: the int holding the length */
    int64_t min, max;        /* CFG_INT, CFG_U64, handler elements: value range */
    int nmin, nmax;          /* CFG_LIST, sequence handlers: length range */
    const char *word;        /* CFG_INT: accepted instead of a number, stored as 0 */
    const cfg_enum_t *names; /* CFG_ENUM, the type handler: ends with {NULL, 0} */
    const struct cfg_table *sub;
    const cfg_handler_t *handler;
    const char *doc; /* one line for the reference */
    /* instead of doc, when the line depends on something else (the algorithm registry) */
    const char *(*doc_fn)(char *buf, size_t size);
} cfg_key_t;

/* The keys of one kind of mapping and the struct they fill. */
typedef struct cfg_table {
    const char *path; /* in the reference: "channels[].datasets[]" ("" for the top level) */
    const char *noun; /* list elements: "dataset" for "duplicate dataset name" */
    const cfg_key_t *keys;
    int nkeys;
    size_t size; /* list elements: size of one element */
    int has_pos; /* the struct has int line, col at line_off, col_off */
    size_t line_off, col_off;
    /* Cross-field and cross-reference rules, run once the whole file is read and every
     * default is filled. @p parent is the struct holding this mapping or list. */
    xfer_status_t (*check)(struct cfg_parser *p, void *base, const void *parent);
    const char *doc; /* a sentence for the reference */
} cfg_table_t;

/* Where each value of the file was read, by key path ("channels[0].to"). */
typedef struct cfg_rec {
    char *path;
    char *text; /* scalars; NULL for mappings and sequences */
    int line, col;
    int bad; /* an error was reported at this value: the checks leave it alone */
    struct cfg_rec *next;
} cfg_rec_t;

/* One error found, kept while it is among the XFER_CONFIG_MAX_ERRORS first of the file. */
typedef struct cfg_error {
    int line, col;
    long seq;   /* order of finding: errors at one position keep it */
    char *text; /* "file:line:col: keypath: problem" */
} cfg_error_t;

/* A component name of the file and its index, sorted by name for the references. */
typedef struct cfg_name {
    const char *name;
    int index;
} cfg_name_t;

#define CFG_MAX_DEPTH 64 /* mappings and sequences open at once (the schema needs 6) */

typedef struct cfg_parser {
    yaml_parser_t yaml;
    const char *file; /* the name in messages */
    const unsigned char *input;
    size_t input_len;
    xfer_config_t *cfg;
    char *kp; /* key path of the value being read or checked */
    size_t kp_len, kp_cap;
    cfg_rec_t **recs; /* hash table of the records, grown with them */
    size_t nbuckets, nrecs;
    int depth; /* mappings and sequences open */
    int stop;  /* the rest of the file cannot be read (syntax, nesting, nothing to read) */
    int alias_line, alias_col; /* the alias just reported: nothing more is said of it */
    cfg_error_t errs[XFER_CONFIG_MAX_ERRORS]; /* the first in the file, in file order */
    int nerrs;
    long nerrors;        /* every error reported */
    long suggest_budget; /* characters the suggestions may still compare */
    cfg_name_t *names;   /* components by name (config.c builds it on first use) */
    int nnames;
} cfg_parser_t;

#define CFG_FIELD(base, off, type)  ((type *) (void *) ((char *) (base) + (off)))
#define CFG_CFIELD(base, off, type) ((type const *) (const void *) ((const char *) (base) + (off)))

/* ---- engine: reading (cfg_parse.c) ----------------------------------------------------- */

/* Read, fill defaults and check the workflow file @p text (@p len bytes, called @p name in
 * messages) into @p cfg (zeroed by the caller) as described by @p top. Every error is reported,
 * not only the first: on failure xfer_last_error() holds up to XFER_CONFIG_MAX_ERRORS lines
 * "name:line:col: keypath: problem" in file order, then "... and N more errors". */
xfer_status_t xfer_cfg_parse(const char *name, const void *text, size_t len, const cfg_table_t *top,
                             xfer_config_t *cfg);

/* The whole of file @p path (at most XFER_CONFIG_MAX_BYTES) into *@p text (NUL-terminated, the
 * caller frees it with xfer_free) and *@p len. */
xfer_status_t xfer_cfg_read_file(const char *path, char **text, size_t *len);

/* Release everything @p t describes in @p base (not @p base itself). */
void xfer_cfg_release(const cfg_table_t *t, void *base);

/* How the readers go on after an error. A reader reports what is wrong (xfer_cfg_fail), reads
 * past the rest of the value at fault (xfer_cfg_skip) and carries on, so that one pass finds
 * every error of the file; it returns XFER_ERR_CONFIG when it reported something. Only what
 * xfer_cfg_fatal() says ends the reading: out of memory, a YAML syntax error, too deep a
 * nesting. */
static inline int xfer_cfg_fatal(const cfg_parser_t *p, xfer_status_t st)
{
    return st != XFER_SUCCESS && (st != XFER_ERR_CONFIG || p->stop);
}

/* The next event. Syntax errors are fatal; aliases, anchors and tags are reported, and the event
 * is handed over all the same (an alias as a value that is not there: nothing more is said of
 * it). On failure @p ev is left empty (deleting it again is harmless). */
xfer_status_t xfer_cfg_next(cfg_parser_t *p, yaml_event_t *ev);

/* Read past the rest of the value that @p start began (nothing for a scalar or an alias). */
xfer_status_t xfer_cfg_skip(cfg_parser_t *p, const yaml_event_t *start);

/* A configuration error at @p mark for the current key path; returns XFER_ERR_CONFIG (or
 * XFER_ERR_NO_MEMORY). */
xfer_status_t xfer_cfg_fail(cfg_parser_t *p, yaml_mark_t mark, const char *fmt, ...)
    XFER_PRINTF(3, 4);

/* A configuration error at the value of @p key under the current key path (NULL: the current
 * value itself), positioned where that value was read. */
xfer_status_t xfer_cfg_fail_key(cfg_parser_t *p, const char *key, const char *fmt, ...)
    XFER_PRINTF(3, 4);

/* Whether an error at @p line:@p col would be shown (among the first XFER_CONFIG_MAX_ERRORS). */
int xfer_cfg_shown(const cfg_parser_t *p, int line, int col);

/* Extend the key path by ".key" or "[index]"; returns the length to restore with
 * xfer_cfg_pop(), or (size_t) -1 when out of memory (an error is recorded). */
size_t xfer_cfg_push_key(cfg_parser_t *p, const char *key);
size_t xfer_cfg_push_index(cfg_parser_t *p, int index);
void xfer_cfg_pop(cfg_parser_t *p, size_t len);

/* The record of @p key under the current key path (NULL: the current path); NULL if the file
 * did not set it. */
const cfg_rec_t *xfer_cfg_find(const cfg_parser_t *p, const char *key);

/* The record of @p key in the mapping @p up levels above the current value ("[3]" and ".key"
 * are one level each): from channels[0].datasets[2], up 2 is channels[0]. */
const cfg_rec_t *xfer_cfg_find_up(const cfg_parser_t *p, int up, const char *key);

/* Whether the file set @p key under the current key path to a value found wrong. */
int xfer_cfg_bad(const cfg_parser_t *p, const char *key);

/* Check that @p ev is a scalar without NUL characters; else report "expected <what>". */
xfer_status_t xfer_cfg_scalar(cfg_parser_t *p, const yaml_event_t *ev, const char *what);

/* Describe a value for "got ...": "a mapping", "an empty value", "\"text\"" (escaped,
 * shortened). */
const char *xfer_cfg_got(const yaml_event_t *ev, char *buf, size_t size);
const char *xfer_cfg_quote(const char *s, char *buf, size_t size);

/* "did you mean": among the candidates offered, the ones closest to a misspelt key or value.
 * Close is an edit distance (insertions, deletions, substitutions and swaps of neighbours, case
 * ignored) of at most a third of the longer word, 1 for short words, and less than the shorter
 * one; or, lacking that, a candidate that begins with what the file says (3 characters or more).
 * Two equally close candidates are both named, more are none. */
/* cfg_check.c: the table checks of a channel, its node staging and a dataset (cfg_table_t's
 * check), and the algorithms' names for the reference. */
xfer_status_t xfer_cfg_check_channel(cfg_parser_t *p, void *base, const void *parent);
xfer_status_t xfer_cfg_check_hier(cfg_parser_t *p, void *base, const void *parent);
xfer_status_t xfer_cfg_check_dataset(cfg_parser_t *p, void *base, const void *parent);
const char *xfer_cfg_algorithm_doc(char *buf, size_t size);

/* A C identifier (letters, digits, '_', not starting with a digit): an environment variable's
 * name, a record field's (cfg_values.c). */
int xfer_cfg_is_identifier(const char *s);

typedef struct cfg_suggest {
    const char *input;
    int len;  /* of input; -1: no suggestion (too long, or the parser's budget spent) */
    int best; /* distance of cand[] (prefix matches rank after every distance) */
    int ncand;
    const char *cand[2];
    long *budget; /* the parser's: characters it may still compare */
} cfg_suggest_t;

void xfer_cfg_suggest_init(cfg_suggest_t *s, cfg_parser_t *p, const char *input);
void xfer_cfg_suggest_add(cfg_suggest_t *s, const char *candidate);
/* "; did you mean \"x\"?", "; did you mean \"x\" or \"y\"?" or "" */
const char *xfer_cfg_suggestion(const cfg_suggest_t *s, char *buf, size_t size);

/* Decimal digits only, no sign: 0 on success, -1 if not a number, 1 on overflow. */
int xfer_cfg_u64(const char *s, uint64_t *out);

/* ---- engine: writing (cfg_print.c) ----------------------------------------------------- */

/* The value of @p base as YAML, block style, keys in table order. */
void xfer_cfg_print_map(FILE *out, const xfer_config_t *cfg, const cfg_table_t *t, const void *base,
                        int indent, int dash);

/* A double-quoted YAML string. */
void xfer_cfg_print_str(FILE *out, const char *s);

/* What a value of @p k must be ("an integer in 1..64", "half|full", ...). */
const char *xfer_cfg_expected(const cfg_key_t *k, char *buf, size_t size);

/* Markdown reference of @p t and every table below it. */
void xfer_cfg_doc(FILE *out, const cfg_table_t *t);

/* ---- config.c ---------------------------------------------------------------------------- */

/* Write the reference of the workflow file format (the key tables of docs/workflow.md). */
xfer_status_t xfer_config_doc(FILE *out);

/* cfg_reader.c: the reader's machinery (records and events beside the calls above) */
#define CFG_MAX_KEYS    32 /* keys of one table */
#define CFG_MSG_MAX     900
#define CFG_SHOW_MAX    96 /* a value quoted in a message */
#define CFG_KEY_SHOW    64 /* a key in a key path */
#define CFG_SUGGEST_LEN 64 /* longest word a suggestion is looked for */
/* Characters compared for suggestions in one file (the cost of a few thousand): a file of
 * countless misspellings gets suggestions for the first ones only, and is read in bounded time. */
#define CFG_SUGGEST_BUDGET (1L << 26)
cfg_rec_t *xfer_cfg_find_rec(const cfg_parser_t *p, const char *path);
xfer_status_t xfer_cfg_record(cfg_parser_t *p, const yaml_event_t *ev);
xfer_status_t xfer_cfg_next_event(cfg_parser_t *p, yaml_event_t *ev);
int xfer_cfg_grow_records(cfg_parser_t *p);
void xfer_cfg_free_records(cfg_parser_t *p);

#endif /* XFER_CFG_H */
