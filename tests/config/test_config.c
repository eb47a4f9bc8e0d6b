/* SPDX-License-Identifier: BSD-3-Clause */
/* The workflow file parser (no MPI): every field and default of the shipped examples and of a
 * file that sets every key; load -> print -> load -> print gives the same text and the same
 * structs; error messages word for word; every file of tests/configs fails with the message
 * its first line announces; every algorithm is allowed or refused as its flags say;
 * docs/workflow.md carries the reference the tables generate.
 *
 *   test_config --src DIR      all of the above (DIR: the source tree; run in a scratch dir)
 *   test_config --invalid FILE FILE must fail with "FILE:" + the text after "# expect: "
 *   test_config --valid FILE   FILE loads and survives the round trip
 *   test_config --doc          print the reference (the generated part of docs/workflow.md)
 *   test_config --print FILE   print the effective configuration of FILE
 * Joined and variable datasets and records: test_config_shapes.c; the algorithms' flags:
 * test_config_algos.c. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfer/config.h>

#include "../support/unit.h"
#include "config/cfg.h"
#include "test_config.h"

long checks;

/* ---- files -------------------------------------------------------------------------------- */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0, got;

    if (!f)
        return NULL;
    do {
        if (cap - n < 4096) {
            char *b = realloc(buf, cap += 65536);
            if (!b) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    UCHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
}

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

/* ---- comparing configurations -------------------------------------------------------------- */

#define DIFF(cond, ...)                                                                            \
    do {                                                                                           \
        if (cond) {                                                                                \
            snprintf(why, n, __VA_ARGS__);                                                         \
            return 0;                                                                              \
        }                                                                                          \
    } while (0)

/* 1 when @p a and @p b hold the same configuration (path aside); else why not. */
int cfg_equal(const xfer_config_t *a, const xfer_config_t *b, char *why, size_t n)
{
    int i, j, d;

    DIFF(strcmp(a->workflow, b->workflow), "workflow");
    DIFF(strcmp(a->control_endpoint, b->control_endpoint), "control.endpoint");
    DIFF(a->heartbeat_ms != b->heartbeat_ms, "control.heartbeat_ms");
    DIFF(a->timeout_ms != b->timeout_ms, "control.timeout_ms");
    DIFF(a->topology != b->topology, "topology.kind");
    DIFF(a->ranks_per_node != b->ranks_per_node, "topology.ranks_per_node");
    DIFF(a->launch != b->launch, "launch");
    DIFF(strcmp(a->run_dir, b->run_dir), "run_dir");
    DIFF(a->ncomponents != b->ncomponents, "ncomponents");
    for (i = 0; i < a->ncomponents; i++) {
        const xfer_cfg_component_t *x = &a->components[i], *y = &b->components[i];
        DIFF(strcmp(x->name, y->name), "components[%d].name", i);
        DIFF(x->nprocs != y->nprocs, "components[%d].nprocs", i);
        DIFF(x->argc != y->argc || x->argv[x->argc] || y->argv[y->argc], "components[%d].argc", i);
        for (j = 0; j < x->argc; j++)
            DIFF(strcmp(x->argv[j], y->argv[j]), "components[%d].cmd[%d]", i, j);
        DIFF(x->nenv != y->nenv, "components[%d].nenv", i);
        for (j = 0; j < x->nenv; j++)
            DIFF(strcmp(x->env[j], y->env[j]), "components[%d].env[%d]", i, j);
    }
    DIFF(a->nchannels != b->nchannels, "nchannels");
    for (i = 0; i < a->nchannels; i++) {
        const xfer_cfg_channel_t *x = &a->channels[i], *y = &b->channels[i];
        DIFF(strcmp(x->name, y->name), "channels[%d].name", i);
        DIFF(x->from != y->from || x->to != y->to, "channels[%d].from/to", i);
        DIFF(x->duplex != y->duplex, "channels[%d].duplex", i);
        DIFF(strcmp(x->algorithm, y->algorithm), "channels[%d].algorithm", i);
        DIFF(memcmp(&x->hier, &y->hier, sizeof(x->hier)), "channels[%d].hierarchical", i);
        DIFF(x->max_in_flight_steps != y->max_in_flight_steps, "channels[%d].max_in_flight", i);
        DIFF(x->ndatasets != y->ndatasets, "channels[%d].ndatasets", i);
        for (j = 0; j < x->ndatasets; j++) {
            const xfer_cfg_dataset_t *u = &x->datasets[j], *v = &y->datasets[j];
            DIFF(strcmp(u->name, v->name), "channels[%d].datasets[%d].name", i, j);
            DIFF(u->type != v->type, "channels[%d].datasets[%d].type", i, j);
            DIFF(u->from != v->from, "channels[%d].datasets[%d].from", i, j);
            DIFF(u->ndims != v->ndims, "channels[%d].datasets[%d].ndims", i, j);
            for (d = 0; d < u->ndims; d++)
                DIFF(u->dims[d] != v->dims[d], "channels[%d].datasets[%d].dims[%d]", i, j, d);
            DIFF(u->joined != v->joined || u->variable != v->variable,
                 "channels[%d].datasets[%d]: joined/variable", i, j);
            DIFF(u->max_rows != v->max_rows, "channels[%d].datasets[%d].max_rows", i, j);
            DIFF(u->selection != v->selection, "channels[%d].datasets[%d].selection", i, j);
            DIFF(!u->record != !v->record, "channels[%d].datasets[%d]: a record in one only", i, j);
            if (u->record && v->record) {
                const xfer_record_t *r = u->record, *t = v->record;
                DIFF(r->nfields != t->nfields || r->size != t->size || r->align != t->align,
                     "channels[%d].datasets[%d]: record layout", i, j);
                for (d = 0; d < r->nfields; d++)
                    DIFF(strcmp(r->fields[d].name, t->fields[d].name) ||
                             r->fields[d].type != t->fields[d].type ||
                             r->fields[d].count != t->fields[d].count ||
                             r->fields[d].offset != t->fields[d].offset,
                         "channels[%d].datasets[%d]: record field %d", i, j, d);
            }
        }
    }
    return 1;
}

static char *print_to(const xfer_config_t *c, const char *path)
{
    FILE *f = fopen(path, "w");
    xfer_status_t st;

    UCHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return NULL;
    st = xfer_config_print(c, f);
    UCHECK(st == XFER_SUCCESS, "print: %s", xfer_last_error());
    UCHECK(fclose(f) == 0, "close %s", path);
    return read_text(path);
}

/* load -> print -> load -> print: the same text after the comment line, the same structs. */
int round_trip(const char *path, const char *scratch)
{
    xfer_config_t *a = NULL, *b = NULL;
    char n1[64], n2[64], *p1, *p2;
    char *t1 = NULL, *t2 = NULL, head[1024], why[256];
    const int failures = unit_failures;
    xfer_status_t st;

    /* per process: ctest runs several round trips in one directory at once */
    snprintf(n1, sizeof(n1), "rt1.%ld.yaml", (long) getpid());
    snprintf(n2, sizeof(n2), "rt2.%ld.yaml", (long) getpid());
    p1 = path_in(scratch, n1);
    p2 = path_in(scratch, n2);
    checks++;
    st = xfer_config_load(path, &a);
    UCHECK(st == XFER_SUCCESS, "%s: %s", path, xfer_last_error());
    if (st == XFER_SUCCESS) {
        t1 = print_to(a, p1);
        st = xfer_config_load(p1, &b);
        UCHECK(st == XFER_SUCCESS, "reloading the print of %s: %s", path, xfer_last_error());
    }
    if (t1 && b) {
        t2 = print_to(b, p2);
        snprintf(head, sizeof(head), "# effective configuration of %s\n", path);
        UCHECK(strncmp(t1, head, strlen(head)) == 0, "first line of the print: %.80s", t1);
        UCHECK(t2 && strcmp(strchr(t1, '\n'), strchr(t2, '\n')) == 0,
               "%s: print -> load -> print differs:\n%s\n----\n%s", path, t1, t2 ? t2 : "");
        UCHECK(cfg_equal(a, b, why, sizeof(why)), "%s: reloaded print differs in %s", path, why);
    }
    free(t1);
    free(t2);
    remove(p1);
    remove(p2);
    free(p1);
    free(p2);
    xfer_config_free(&a);
    xfer_config_free(&b);
    return unit_failures != failures;
}

/* ---- invalid files ------------------------------------------------------------------------- */

static const char expect_tag[] = "# expect: ";

/* @p file must fail with the errors its first lines announce, one "# expect: <line>:<col>: ..."
 * line per error in file order, each matched as "<file>:" + the text after the tag ("... and N
 * more errors" as it is). */
static int check_invalid(const char *file)
{
    char *text = read_text(file), *expected = NULL, *line, *next, *eol;
    const size_t tag = strlen(expect_tag);
    xfer_config_t *c = NULL;
    size_t o = 0;
    xfer_status_t st;
    int bad = 1;

    checks++;
    if (!text || strncmp(text, expect_tag, tag) != 0) {
        fprintf(stderr, "%s: the first line must be \"%s<message>\"\n", file, expect_tag);
        free(text);
        return 1;
    }
    expected = malloc(strlen(text) * 2 + 1 + strlen(file) * (strlen(text) / tag + 1));
    for (line = text; strncmp(line, expect_tag, tag) == 0; line = next) {
        const char *msg = line + tag;
        if ((eol = strchr(line, '\n'))) {
            next = eol + 1;
            *eol = '\0';
            if (eol > line && eol[-1] == '\r')
                eol[-1] = '\0';
        } else {
            next = line + strlen(line);
        }
        if (strncmp(msg, "... ", 4) == 0)
            o += (size_t) sprintf(expected + o, "%s%s", o ? "\n" : "", msg);
        else
            o += (size_t) sprintf(expected + o, "%s%s:%s", o ? "\n" : "", file, msg);
    }
    st = xfer_config_load(file, &c);
    if (st != XFER_ERR_CONFIG || c)
        fprintf(stderr, "%s: FAIL: status %s (expected XFER_ERR_CONFIG)\n", file,
                xfer_status_name(st));
    else if (strcmp(xfer_last_error(), expected) != 0)
        fprintf(stderr, "%s: FAIL\n  expected: %s\n  got:      %s\n", file, expected,
                xfer_last_error());
    else
        bad = 0;
    if (!bad)
        printf("%s: ok\n", file);
    xfer_config_free(&c);
    free(expected);
    free(text);
    return bad;
}

static void check_invalid_dir(const char *dir)
{
    struct dirent *e;
    DIR *d = opendir(dir);
    int nfiles = 0;

    UCHECK(d != NULL, "cannot open %s", dir);
    if (!d)
        return;
    while ((e = readdir(d))) {
        const size_t len = strlen(e->d_name);
        char *p;
        if (len < 5 || strcmp(e->d_name + len - 5, ".yaml") != 0)
            continue;
        p = path_in(dir, e->d_name);
        UCHECK(check_invalid(p) == 0, "%s", p);
        free(p);
        nfiles++;
    }
    closedir(d);
    UCHECK(nfiles >= 20, "only %d invalid files in %s", nfiles, dir);
}

/* @p text in @p name must fail with exactly "<name>:<msg>". */
void expect_error(const char *name, const char *text, const char *msg)
{
    xfer_config_t *c = NULL;
    char expected[2048];
    xfer_status_t st;

    checks++;
    write_text(name, text);
    snprintf(expected, sizeof(expected), "%s:%s", name, msg);
    st = xfer_config_load(name, &c);
    UCHECK(st == XFER_ERR_CONFIG && !c, "%s: status %s", name, xfer_status_name(st));
    UCHECK(strcmp(xfer_last_error(), expected) == 0, "\n  expected: %s\n  got:      %s", expected,
           xfer_last_error());
    xfer_config_free(&c);
}

xfer_config_t *load_ok(const char *path)
{
    xfer_config_t *c = NULL;
    xfer_status_t st = xfer_config_load(path, &c);
    checks++;
    UCHECK(st == XFER_SUCCESS && c, "%s: %s", path, xfer_last_error());
    return c;
}

/* ---- the shipped examples ----------------------------------------------------------------- */

static void check_component(const xfer_cfg_component_t *c, const char *name, int nprocs,
                            const char *steps)
{
    checks++;
    UCHECK(strcmp(c->name, name) == 0, "component %s: name %s", name, c->name);
    UCHECK(c->nprocs == nprocs, "%s: nprocs %d", name, c->nprocs);
    UCHECK(c->argc == 3 && strcmp(c->argv[0], "xfer-synth") == 0 &&
               strcmp(c->argv[1], "--steps") == 0 && strcmp(c->argv[2], steps) == 0 &&
               c->argv[3] == NULL,
           "%s: cmd", name);
}

static void check_dataset(const xfer_cfg_dataset_t *d, const char *name, xfer_type_t type, int from,
                          int ndims, uint64_t d0, uint64_t d1, uint64_t d2)
{
    checks++;
    UCHECK(strcmp(d->name, name) == 0, "dataset %s: name %s", name, d->name);
    UCHECK(d->type == type, "%s: type %d", name, d->type);
    UCHECK(d->from == from, "%s: from %d", name, d->from);
    UCHECK(d->ndims == ndims, "%s: ndims %d", name, d->ndims);
    UCHECK(d->dims[0] == d0 && (ndims < 2 || d->dims[1] == d1) && (ndims < 3 || d->dims[2] == d2),
           "%s: dims", name);
}

/* The defaults every example relies on. */
static void check_channel_defaults(const xfer_cfg_channel_t *ch)
{
    checks++;
    UCHECK(strcmp(ch->algorithm, "auto") == 0, "%s: algorithm %s", ch->name, ch->algorithm);
    UCHECK(ch->hier.enabled == -1 && ch->hier.leaders_per_node == 1 && !ch->hier.multi_sender &&
               ch->hier.sync == 1,
           "%s: hierarchical defaults", ch->name);
}

static void check_top_defaults(const xfer_config_t *c)
{
    checks++;
    UCHECK(strcmp(c->control_endpoint, "") == 0, "endpoint %s", c->control_endpoint);
    UCHECK(c->heartbeat_ms == 500 && c->timeout_ms == 30000 && c->heartbeat_timeout_ms == 0,
           "control defaults");
    UCHECK(strcmp(c->token_file, "") == 0 && strcmp(c->curve_public_key, "") == 0 &&
               strcmp(c->curve_secret_key_file, "") == 0,
           "control security defaults");
    UCHECK(c->launch == XFER_LAUNCH_AUTO, "launch %d", c->launch);
    UCHECK(c->run_dir && c->run_dir[0] == '\0', "run_dir");
}

static void test_examples(const char *src)
{
    static const char *const names[] = {"coupled", "full_duplex", "chain",
                                        "fanout",  "fanin",       "ring"};
    char path[4096];
    xfer_config_t *c;
    int i, j, ranks;

    for (i = 0; i < (int) (sizeof(names) / sizeof(names[0])); i++) {
        snprintf(path, sizeof(path), "%s/config/%s.yaml", src, names[i]);
        round_trip(path, ".");
        if (!(c = load_ok(path)))
            continue;
        for (ranks = 0, j = 0; j < c->ncomponents; j++)
            ranks += c->components[j].nprocs;
        UCHECK(ranks <= 8, "%s: %d ranks", path, ranks);
        check_top_defaults(c);
        for (j = 0; j < c->ncomponents; j++)
            UCHECK(c->components[j].nenv == (strcmp(names[i], "fanout") == 0 && j == 2),
                   "%s: env of %s", path, c->components[j].name);
        xfer_config_free(&c);
    }

    snprintf(path, sizeof(path), "%s/config/coupled.yaml", src);
    if ((c = load_ok(path))) {
        UCHECK(strcmp(c->path, path) == 0, "path %s", c->path);
        UCHECK(strcmp(c->workflow, "coupled_sim_analysis") == 0, "workflow %s", c->workflow);
        UCHECK(c->topology == XFER_TOPOLOGY_FULLY_CONNECTED && c->ranks_per_node == 0, "topology");
        UCHECK(c->ncomponents == 2 && c->nchannels == 1, "counts");
        if (c->ncomponents == 2 && c->nchannels == 1) {
            const xfer_cfg_channel_t *ch = &c->channels[0];
            const xfer_cfg_component_t *sim = &c->components[0], *ana = &c->components[1];
            UCHECK(strcmp(sim->name, "simulation") == 0 && sim->nprocs == 4 && sim->argc == 9 &&
                       strcmp(sim->argv[0], "gray-scott-sim") == 0 &&
                       strcmp(sim->argv[2], "2000") == 0 && strcmp(sim->argv[4], "200") == 0 &&
                       strcmp(sim->argv[5], "--particles") == 0 &&
                       strcmp(sim->argv[6], "2000") == 0 && sim->argv[9] == NULL,
                   "simulation component");
            UCHECK(strcmp(ana->name, "analysis") == 0 && ana->nprocs == 2 && ana->argc == 5 &&
                       strcmp(ana->argv[0], "gray-scott-analysis") == 0 && ana->argv[5] == NULL,
                   "analysis component");
            UCHECK(c->components[0].nenv == 0 && c->components[0].env == NULL, "env");
            UCHECK(c->components[0].line == 21 && c->components[0].col == 5, "position %d:%d",
                   c->components[0].line, c->components[0].col);
            UCHECK(strcmp(ch->name, "fields") == 0 && ch->from == 0 && ch->to == 1 &&
                       ch->duplex == XFER_DUPLEX_HALF && ch->max_in_flight_steps == 2,
                   "channel");
            UCHECK(ch->line == 30 && ch->col == 5, "channel position %d:%d", ch->line, ch->col);
            check_channel_defaults(ch);
            UCHECK(ch->ndatasets == 4, "ndatasets %d", ch->ndatasets);
            if (ch->ndatasets == 4) {
                const xfer_cfg_dataset_t *p = &ch->datasets[3];
                check_dataset(&ch->datasets[0], "U", XFER_TYPE_FLOAT64, 0, 2, 256, 256, 0);
                check_dataset(&ch->datasets[1], "V", XFER_TYPE_FLOAT64, 0, 2, 256, 256, 0);
                check_dataset(&ch->datasets[2], "time", XFER_TYPE_FLOAT64, 0, 1, 1, 0, 0);
                check_dataset(p, "particles", XFER_TYPE_RECORD, 0, 1, 0, 0, 0);
                UCHECK(ch->datasets[1].line == 40 && ch->datasets[1].col == 9,
                       "dataset position %d:%d", ch->datasets[1].line, ch->datasets[1].col);
                /* the tracer particles: {id: int64, pos: [float64, 2], v: float64}, joined */
                UCHECK(p->joined && p->selection == XFER_SELECT_ROWS && p->record &&
                           p->record->nfields == 3 && p->record->size == 32 &&
                           p->record->fields[1].count == 2 && p->record->fields[1].offset == 8 &&
                           p->record->fields[2].offset == 24,
                       "particles: a joined record of 32 bytes, selection rows");
            }
        }
        xfer_config_free(&c);
        UCHECK(c == NULL, "free does not clear the pointer");
    }

    snprintf(path, sizeof(path), "%s/config/full_duplex.yaml", src);
    if ((c = load_ok(path))) {
        UCHECK(c->ncomponents == 2 && c->nchannels == 1 && c->channels[0].ndatasets == 2, "counts");
        if (c->nchannels == 1 && c->channels[0].ndatasets == 2) {
            const xfer_cfg_channel_t *ch = &c->channels[0];
            check_component(&c->components[0], "ocean", 3, "20");
            check_component(&c->components[1], "atmosphere", 2, "20");
            UCHECK(ch->duplex == XFER_DUPLEX_FULL && ch->max_in_flight_steps == 2, "coupling");
            check_channel_defaults(ch);
            check_dataset(&ch->datasets[0], "sst", XFER_TYPE_FLOAT32, 0, 2, 64, 128, 0);
            check_dataset(&ch->datasets[1], "flux", XFER_TYPE_FLOAT64, 1, 3, 32, 16, 8);
        }
        xfer_config_free(&c);
    }

    snprintf(path, sizeof(path), "%s/config/chain.yaml", src);
    if ((c = load_ok(path))) {
        UCHECK(c->ncomponents == 3 && c->nchannels == 2, "counts");
        if (c->ncomponents == 3 && c->nchannels == 2) {
            check_component(&c->components[2], "visualization", 1, "10");
            UCHECK(c->channels[0].from == 0 && c->channels[0].to == 1, "raw");
            UCHECK(c->channels[1].from == 1 && c->channels[1].to == 2, "reduced");
            UCHECK(c->channels[1].max_in_flight_steps == 1, "reduced in flight");
            UCHECK(c->channels[1].ndatasets == 2, "reduced datasets");
            check_dataset(&c->channels[1].datasets[0], "histogram", XFER_TYPE_UINT64, 1, 1, 256, 0,
                          0);
        }
        xfer_config_free(&c);
    }

    snprintf(path, sizeof(path), "%s/config/fanout.yaml", src);
    if ((c = load_ok(path))) {
        UCHECK(c->ncomponents == 3 && c->nchannels == 2, "counts");
        if (c->ncomponents == 3 && c->nchannels == 2) {
            check_component(&c->components[0], "producer", 2, "8");
            check_component(&c->components[1], "analysis", 3, "8");
            check_component(&c->components[2], "checkpoint", 1, "8");
            UCHECK(c->components[2].nenv == 1 &&
                       strcmp(c->components[2].env[0], "XFER_TRACE=1") == 0,
                   "env");
            for (j = 0; j < 2; j++) {
                UCHECK(c->channels[j].from == 0 && c->channels[j].to == j + 1, "fanout ends");
                check_dataset(&c->channels[j].datasets[0], "density", XFER_TYPE_FLOAT32, 0, 2, 128,
                              128, 0);
                check_dataset(&c->channels[j].datasets[1], "labels", XFER_TYPE_INT32, 0, 1, 128, 0,
                              0);
            }
        }
        xfer_config_free(&c);
    }

    snprintf(path, sizeof(path), "%s/config/fanin.yaml", src);
    if ((c = load_ok(path))) {
        UCHECK(c->ncomponents == 3 && c->nchannels == 2, "counts");
        if (c->ncomponents == 3 && c->nchannels == 2) {
            check_component(&c->components[0], "fluid", 2, "12");
            check_component(&c->components[1], "particles", 1, "12");
            check_component(&c->components[2], "analysis", 2, "12");
            UCHECK(c->channels[0].from == 0 && c->channels[0].to == 2, "fluid_fields");
            UCHECK(c->channels[1].from == 1 && c->channels[1].to == 2, "particle_data");
            check_dataset(&c->channels[1].datasets[0], "positions", XFER_TYPE_FLOAT32, 1, 2, 4096,
                          3, 0);
            check_dataset(&c->channels[1].datasets[1], "ids", XFER_TYPE_INT64, 1, 1, 4096, 0, 0);
        }
        xfer_config_free(&c);
    }

    snprintf(path, sizeof(path), "%s/config/ring.yaml", src);
    if ((c = load_ok(path))) {
        UCHECK(c->topology == XFER_TOPOLOGY_RING && c->ranks_per_node == 1, "ring topology");
        UCHECK(c->nchannels == 1 && strcmp(c->channels[0].algorithm, "auto") == 0, "ring algo");
        xfer_config_free(&c);
    }
}

/* ---- every key, and every default ------------------------------------------------------------ */

const char all_keys_yaml[] =
    "# every key set to something other than its default\n"
    "workflow: all.keys-1\n"
    "control:\n"
    "  endpoint: \"ipc:///tmp/x \\\"q\\\" \\\\ \\u00e9\"\n"
    "  heartbeat_ms: 3600000\n"
    "  timeout_ms: \"1\"\n"
    "topology: {kind: fully_connected, ranks_per_node: 65536}\n"
    "components:\n"
    "  - name: a\n"
    "    nprocs: 1048576\n"
    "    cmd: [prog, 'arg with space', '', \"tab\\there\", \"nl\\nx\", 'quote\"', "
    "\"back\\\\slash\", \"\\u2028\\x85\\x01\", ü]\n"
    "    env: {OMP_NUM_THREADS: 4, _X1: \"a=b\", EMPTY: ''}\n"
    "  - {name: b, nprocs: 1, cmd: [b]}\n"
    "channels:\n"
    "  - name: c1\n"
    "    from: b\n"
    "    to: a\n"
    "    duplex: full\n"
    "    algorithm: fc_full\n"
    "    hierarchical: {enabled: true, leaders_per_node: 2, multi_sender: true, sync: barrier}\n"
    "    max_in_flight_steps: 64\n"
    "    datasets:\n"
    "      - {name: x, type: int8, dims: [1]}\n"
    "      - {name: y, type: uint64, dims: [1, 2, 3, 4, 5, 6, 7, 8], from: a}\n"
    "      - name: z\n"
    "        type: float32\n"
    "        dims: [1152921504606846976]\n" /* exactly 2^62 bytes */
    "        from: b\n"
    "  - name: c2\n"
    "    from: a\n"
    "    to: b\n"
    "    algorithm: ring_half\n"
    "    hierarchical: {enabled: false}\n"
    "    datasets: [{name: x, type: int16, dims: [3]}]\n"
    "launch: separate\n"
    "run_dir: /tmp/run dir\n";

static void test_all_keys(void)
{
    static const char *const argv[] = {
        "prog",        "arg with space",           "",        "tab\there", "nl\nx", "quote\"",
        "back\\slash", "\xe2\x80\xa8\xc2\x85\x01", "\xc3\xbc"};
    xfer_config_t *c;
    int i;

    write_text("all.yaml", all_keys_yaml);
    round_trip("all.yaml", ".");
    if (!(c = load_ok("all.yaml")))
        return;
    UCHECK(strcmp(c->workflow, "all.keys-1") == 0, "workflow");
    UCHECK(strcmp(c->control_endpoint, "ipc:///tmp/x \"q\" \\ \xc3\xa9") == 0, "endpoint %s",
           c->control_endpoint);
    UCHECK(c->heartbeat_ms == 3600000 && c->timeout_ms == 1, "control");
    UCHECK(c->topology == XFER_TOPOLOGY_FULLY_CONNECTED && c->ranks_per_node == 65536, "topology");
    UCHECK(c->launch == XFER_LAUNCH_SEPARATE && strcmp(c->run_dir, "/tmp/run dir") == 0, "launch");
    UCHECK(c->ncomponents == 2 && c->nchannels == 2, "counts");
    if (c->ncomponents != 2 || c->nchannels != 2) {
        xfer_config_free(&c);
        return;
    }
    UCHECK(c->components[0].nprocs == 1048576, "nprocs");
    UCHECK(c->components[0].argc == 9 && c->components[0].argv[9] == NULL, "argc %d",
           c->components[0].argc);
    for (i = 0; i < 9 && i < c->components[0].argc; i++)
        UCHECK(strcmp(c->components[0].argv[i], argv[i]) == 0, "argv[%d] %s", i,
               c->components[0].argv[i]);
    UCHECK(c->components[0].nenv == 3 &&
               strcmp(c->components[0].env[0], "OMP_NUM_THREADS=4") == 0 &&
               strcmp(c->components[0].env[1], "_X1=a=b") == 0 &&
               strcmp(c->components[0].env[2], "EMPTY=") == 0,
           "env");
    UCHECK(c->components[1].line == 13 && c->components[1].col == 5, "flow position %d:%d",
           c->components[1].line, c->components[1].col);
    {
        const xfer_cfg_channel_t *ch = &c->channels[0], *c2 = &c->channels[1];
        UCHECK(ch->from == 1 && ch->to == 0 && ch->duplex == XFER_DUPLEX_FULL, "c1 ends");
        UCHECK(strcmp(ch->algorithm, "fc_full") == 0, "c1 algorithm");
        UCHECK(ch->hier.enabled == 1 && ch->hier.leaders_per_node == 2 && ch->hier.multi_sender &&
                   ch->hier.sync == 2,
               "c1 hierarchical");
        UCHECK(ch->max_in_flight_steps == 64 && ch->ndatasets == 3, "c1");
        if (ch->ndatasets == 3) {
            check_dataset(&ch->datasets[0], "x", XFER_TYPE_INT8, 1, 1, 1, 0, 0);
            check_dataset(&ch->datasets[1], "y", XFER_TYPE_UINT64, 0, 8, 1, 2, 3);
            UCHECK(ch->datasets[1].dims[7] == 8, "dims[7]");
            check_dataset(&ch->datasets[2], "z", XFER_TYPE_FLOAT32, 1, 1, (uint64_t) 1 << 60, 0, 0);
            UCHECK(ch->datasets[0].line == 23 && ch->datasets[0].col == 9, "dataset position");
            UCHECK(ch->datasets[2].line == 25 && ch->datasets[2].col == 9, "dataset position");
        }
        UCHECK(c2->from == 0 && c2->to == 1 && c2->duplex == XFER_DUPLEX_HALF, "c2");
        UCHECK(strcmp(c2->algorithm, "ring_half") == 0 && c2->hier.enabled == 0 &&
                   c2->hier.leaders_per_node == 1 && c2->max_in_flight_steps == 2,
               "c2 defaults");
        UCHECK(c2->ndatasets == 1 && c2->datasets[0].from == 0, "c2 dataset");
    }
    xfer_config_free(&c);
}

static void test_defaults(void)
{
    xfer_config_t *c;

    write_text("min.yaml", "workflow: w\n"
                           "components: [{name: a, nprocs: 1, cmd: [a]}]\n");
    round_trip("min.yaml", ".");
    if (!(c = load_ok("min.yaml")))
        return;
    check_top_defaults(c);
    UCHECK(c->topology == XFER_TOPOLOGY_FULLY_CONNECTED && c->ranks_per_node == 0, "topology");
    UCHECK(c->nchannels == 0 && c->channels == NULL, "channels default to none");
    UCHECK(c->components[0].nenv == 0, "env defaults to none");
    xfer_config_free(&c);
}

/* ---- the rest of the API --------------------------------------------------------------------- */

static void test_api(const char *src)
{
    static const char *const tn[] = {"int8",   "uint8", "int16",  "uint16",  "int32",
                                     "uint32", "int64", "uint64", "float32", "float64"};
    static const size_t ts[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    char path[4096];
    xfer_config_t *c;
    int i, idx = -7;

    for (i = 0; i < 10; i++) {
        UCHECK(strcmp(xfer_type_name((xfer_type_t) (i + 1)), tn[i]) == 0, "type name %d", i);
        UCHECK(xfer_type_size((xfer_type_t) (i + 1)) == ts[i], "type size %d", i);
        checks++;
    }
    UCHECK(xfer_type_size((xfer_type_t) 0) == 0 && xfer_type_size((xfer_type_t) 11) == 0,
           "invalid type size");
    UCHECK(strcmp(xfer_type_name((xfer_type_t) 0), "?") == 0, "invalid type name");

    UCHECK(xfer_config_load(NULL, &c) == XFER_ERR_INVALID_ARG, "NULL path");
    UCHECK(xfer_config_load("x", NULL) == XFER_ERR_INVALID_ARG, "NULL cfg");
    UCHECK(xfer_config_free(NULL) == XFER_ERR_INVALID_ARG, "free NULL");
    c = NULL;
    UCHECK(xfer_config_free(&c) == XFER_SUCCESS, "free of NULL");
    UCHECK(xfer_config_print(NULL, stdout) == XFER_ERR_INVALID_ARG, "print NULL");

    snprintf(path, sizeof(path), "%s/config/chain.yaml", src);
    if (!(c = load_ok(path)))
        return;
    UCHECK(xfer_config_print(c, NULL) == XFER_ERR_INVALID_ARG, "print to NULL");
    UCHECK(xfer_config_component(c, "analysis", &idx) == XFER_SUCCESS && idx == 1, "component");
    UCHECK(xfer_config_component(c, "nope", &idx) == XFER_ERR_NOT_FOUND && idx == 1,
           "unknown component");
    UCHECK(xfer_config_channel(c, "reduced", &idx) == XFER_SUCCESS && idx == 1, "channel");
    UCHECK(xfer_config_channel(c, "analysis", &idx) == XFER_ERR_NOT_FOUND, "unknown channel");
    UCHECK(xfer_config_channel(c, NULL, &idx) == XFER_ERR_INVALID_ARG, "NULL name");
    UCHECK(xfer_config_component(NULL, "a", &idx) == XFER_ERR_INVALID_ARG, "NULL cfg");
    UCHECK(xfer_config_component(c, "a", NULL) == XFER_ERR_INVALID_ARG, "NULL index");
    checks += 8;
    xfer_config_free(&c);
}

/* ---- docs/workflow.md --------------------------------------------------------------------- */

static void test_doc(const char *src)
{
    static const char *const keys[] = {"workflow",     "control",        "endpoint",
                                       "heartbeat_ms", "timeout_ms",     "topology",
                                       "kind",         "ranks_per_node", "components",
                                       "name",         "nprocs",         "cmd",
                                       "env",          "channels",       "from",
                                       "to",           "duplex",         "algorithm",
                                       "hierarchical", "enabled",        "leaders_per_node",
                                       "multi_sender", "sync",           "max_in_flight_steps",
                                       "datasets",     "type",           "dims",
                                       "max_rows",     "launch",         "run_dir"};
    char path[4096], key[64];
    char *doc, *gen;
    FILE *f;
    size_t i;

    snprintf(path, sizeof(path), "%s/docs/workflow.md", src);
    doc = read_text(path);
    UCHECK(doc != NULL, "cannot read %s", path);
    f = fopen("reference.md", "w");
    UCHECK(f && xfer_config_doc(f) == XFER_SUCCESS && fclose(f) == 0, "xfer_config_doc");
    gen = read_text("reference.md");
    if (!doc || !gen) {
        free(doc);
        free(gen);
        return;
    }
    checks++;
    UCHECK(strstr(doc, gen) != NULL,
           "docs/workflow.md does not hold the current reference: regenerate it with "
           "test_config --doc");
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        snprintf(key, sizeof(key), "| `%s` |", keys[i]);
        UCHECK(strstr(gen, key) != NULL, "the reference lacks %s", keys[i]);
        UCHECK(strstr(doc, key) != NULL, "docs/workflow.md lacks %s", keys[i]);
        checks++;
    }
    free(doc);
    free(gen);
}

int main(int argc, char **argv)
{
    char path[4096];
    xfer_config_t *c = NULL;

    if (argc == 3 && strcmp(argv[1], "--invalid") == 0)
        return check_invalid(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--valid") == 0) {
        round_trip(argv[2], ".");
        return unit_finish(argv[2], checks);
    }
    if (argc == 2 && strcmp(argv[1], "--doc") == 0)
        return xfer_config_doc(stdout) == XFER_SUCCESS ? 0 : 1;
    if (argc == 3 && strcmp(argv[1], "--print") == 0) {
        if (xfer_config_load(argv[2], &c) != XFER_SUCCESS) {
            fprintf(stderr, "%s\n", xfer_last_error());
            return 1;
        }
        xfer_config_print(c, stdout);
        xfer_config_free(&c);
        return 0;
    }
    if (argc != 3 || strcmp(argv[1], "--src") != 0) {
        fprintf(stderr,
                "usage: %s --src DIR | --invalid FILE | --valid FILE | --doc | --print "
                "FILE\n",
                argv[0]);
        return 2;
    }
    test_examples(argv[2]);
    test_all_keys();
    test_defaults();
    test_errors();
    test_algorithm_flags();
    test_flow_keys();
    test_every_error();
    test_cannot_open();
    test_api(argv[2]);
    test_shapes();
    test_doc(argv[2]);
    snprintf(path, sizeof(path), "%s/tests/configs", argv[2]);
    check_invalid_dir(path);
    return unit_finish("test_config", checks);
}
