/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-ncstream: stream the variables of a netCDF file through a libxfer channel into another
 * netCDF file (docs/adapters.md "netCDF").
 *
 *   xfer-ncstream config IN.nc -o WF.yaml [--variables a,b] [--producers P] [--consumers Q]
 *                        [--out OUT.nc] [--layout stepdim|group|same] [--steps N]
 *                        [--timeout-ms MS]
 *   xfer-ncstream send IN.nc [--steps N] [--config WF.yaml] [--component NAME]
 *   xfer-ncstream recv OUT.nc [--layout stepdim|group|same] [--config WF.yaml]
 *                        [--component NAME]
 *
 * config writes a workflow file: a producer running "send", a consumer running "recv", and one
 * channel "nc" whose datasets are the selected variables plus "xfer-meta", a uint8 dataset
 * holding the file's attribute table (names, dimensions, attributes: xfer/adapter_netcdf.h).
 * Dataset names are the variable names with characters outside [A-Za-z0-9_.-] replaced by
 * '_' ("-2", "-3" ... make them unique); the table maps them back. Producer ranks read slabs
 * of the slowest dimension; consumer ranks take their slab and the adapter funnels it to rank
 * 0, which writes it. --steps N sends the file N times, step s with s added to every element
 * (a time series for tests). Exit status: 0 done, 1 failure (the message names the file, the
 * variable and the call), 2 usage.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfer/adapter.h>
#include <xfer/adapter_netcdf.h>
#include <xfer/xfer.h>

#include "common/cli.h"

#include "adapter_common.h"

#define SCHEMA_DATASET "xfer-meta"
#define CHANNEL        "nc"

static int wrank;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "xfer-ncstream: ");                                                        \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        fflush(stderr);                                                                            \
        exit(1); /* the launcher stops the other ranks */                                          \
    } while (0)

#define XCHECK(call)                                                                               \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        if (st_ != XFER_SUCCESS)                                                                   \
            FAIL("rank %d: %s: %s: %s", wrank, #call, xfer_status_name(st_), xfer_last_error());   \
    } while (0)

#define ACHECK(call)                                                                               \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        if (st_ != XFER_SUCCESS)                                                                   \
            FAIL("%s", xfer_adapter_error());                                                      \
    } while (0)

typedef struct opts {
    const char *mode, *file, *wf, *vars, *out, *layout, *config, *component;
    int producers, consumers, steps, timeout_ms;
} opts_t;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: xfer-ncstream config IN.nc -o WF.yaml [--variables a,b] [--producers P]\n"
        "                            [--consumers Q] [--out OUT.nc]\n"
        "                            [--layout stepdim|group|same] [--steps N] [--timeout-ms MS]\n"
        "       xfer-ncstream send IN.nc [--steps N] [--config WF.yaml] [--component NAME]\n"
        "       xfer-ncstream recv OUT.nc [--layout stepdim|group|same] [--config WF.yaml]\n"
        "                            [--component NAME]\n"
        "       xfer-ncstream -h|--help | --version\n"
        "Streams a netCDF-4 file's variables between MPI components, step by step\n"
        "(docs/adapters.md).\n");
}

/* Dataset names of variables: [A-Za-z0-9_.-], unique, never the schema's. */
static char (*dataset_names(int n, const xfer_adapter_var_t *v))[XFER_ADAPTER_MAX_NAME]
{
    char(*dn)[XFER_ADAPTER_MAX_NAME] = calloc((size_t) n + 1, sizeof(*dn));
    int i, j, k, again;
    if (!dn)
        FAIL("out of memory");
    for (i = 0; i < n; i++) {
        char base[XFER_ADAPTER_MAX_NAME - 16];
        if (snprintf(base, sizeof(base), "%s", v[i].name) >= (int) sizeof(base))
            base[sizeof(base) - 1] = '\0'; /* a long name: cut, made unique below */
        for (k = 0; base[k]; k++) {
            const char c = base[k];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-'))
                base[k] = '_';
        }
        snprintf(dn[i], sizeof(dn[i]), "%s", base);
        for (k = 2, again = 1; again; k++) {
            again = strcmp(dn[i], SCHEMA_DATASET) == 0;
            for (j = 0; j < i && !again; j++)
                again = strcmp(dn[i], dn[j]) == 0;
            if (again)
                snprintf(dn[i], sizeof(dn[i]), "%s-%d", base, k);
        }
    }
    return dn;
}

static int find_name(int n, char (*names)[XFER_ADAPTER_MAX_NAME], const char *name)
{
    int i;
    for (i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

static int find_var(int n, const xfer_adapter_var_t *v, const char *name)
{
    int i;
    for (i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return i;
    return -1;
}

/* YAML double-quoted scalar. */
static void yq(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* ---- config -------------------------------------------------------------------------------- */

static int do_config(const opts_t *o)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_netcdf();
    const xfer_adapter_var_t *vars;
    char(*dn)[XFER_ADAPTER_MAX_NAME];
    char self[PATH_MAX], in_abs[PATH_MAX], out_abs[2 * PATH_MAX + 16], out_def[PATH_MAX];
    char cwd[PATH_MAX];
    uint8_t *tbl;
    size_t tlen;
    int nv, i, k, *sel, nsel = 0;
    void *r;
    FILE *f;

    if (!o->wf)
        xfer_cli_usage_error("xfer-ncstream", "config needs -o WF.yaml");
    ACHECK(ops->open_read(o->file, MPI_COMM_SELF, &r));
    ACHECK(ops->vars(r, &nv, &vars));
    ACHECK(xfer_netcdf_table(r, &tbl, &tlen));
    sel = calloc((size_t) nv + 1, sizeof(*sel));
    if (!sel)
        FAIL("out of memory");
    if (o->vars) {
        char *list = strdup(o->vars), *save = NULL, *name;
        for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
            const char *why = xfer_netcdf_unsupported(r, name);
            k = find_var(nv, vars, name);
            if (why)
                FAIL("%s: variable \"%s\" cannot be streamed: %s", o->file, name, why);
            if (k < 0)
                FAIL("%s: no variable \"%s\" (--variables)", o->file, name);
            for (i = 0; i < nsel && sel[i] != k; i++)
                ;
            if (i == nsel)
                sel[nsel++] = k;
        }
        free(list);
    } else {
        const char *notes = xfer_netcdf_notes(r);
        if (*notes)
            fprintf(stderr, "xfer-ncstream: %s: note:\n%s", o->file, notes);
        for (k = 0; k < nv; k++)
            sel[nsel++] = k;
    }
    if (nsel == 0)
        FAIL("%s: no variable to stream", o->file);
    if (nsel > XFER_MAX_DATASETS - 1)
        FAIL("%s: %d variables selected; a channel carries at most %d (select some with "
             "--variables)",
             o->file, nsel, XFER_MAX_DATASETS - 1);
    dn = dataset_names(nv, vars);
    if (!realpath("/proc/self/exe", self))
        snprintf(self, sizeof(self), "xfer-ncstream");
    if (!realpath(o->file, in_abs))
        FAIL("%s: %s", o->file, strerror(errno));
    if (!o->out) {
        const char *b = strrchr(in_abs, '/');
        snprintf(out_def, sizeof(out_def), "%.*s", (int) strcspn(b + 1, "."), b + 1);
    }
    if (o->out && o->out[0] == '/')
        snprintf(out_abs, sizeof(out_abs), "%s", o->out);
    else if (!getcwd(cwd, sizeof(cwd)))
        FAIL("getcwd: %s", strerror(errno));
    else if (o->out) /* absolute: the components may start elsewhere */
        snprintf(out_abs, sizeof(out_abs), "%s/%s", cwd, o->out);
    else
        snprintf(out_abs, sizeof(out_abs), "%s/%s.out.nc", cwd, out_def);
    f = fopen(o->wf, "w");
    if (!f)
        FAIL("%s: cannot write: %s", o->wf, strerror(errno));
    fprintf(f, "# written by xfer-ncstream config from %s\n", in_abs);
    fprintf(f, "workflow: ncstream\n");
    if (o->timeout_ms > 0)
        fprintf(f, "control: {timeout_ms: %d}\n", o->timeout_ms);
    fprintf(f, "components:\n  - name: producer\n    nprocs: %d\n    cmd: [", o->producers);
    yq(f, self);
    fprintf(f, ", send, ");
    yq(f, in_abs);
    fprintf(f, ", --steps, \"%d\"]\n  - name: consumer\n    nprocs: %d\n    cmd: [", o->steps,
            o->consumers);
    yq(f, self);
    fprintf(f, ", recv, ");
    yq(f, out_abs);
    fprintf(f, ", --layout, %s]\n", o->layout);
    fprintf(f, "channels:\n  - name: " CHANNEL "\n    from: producer\n    to: consumer\n"
               "    datasets:\n");
    fprintf(f, "      - {name: " SCHEMA_DATASET ", type: uint8, dims: [%zu]}\n", tlen);
    for (i = 0; i < nsel; i++) {
        const xfer_adapter_var_t *v = &vars[sel[i]];
        fprintf(f, "      - {name: %s, type: ", dn[sel[i]]);
        if (v->type == XFER_TYPE_RECORD) { /* the compound's fields, in order */
            const size_t len = xfer_adapter_record_yaml(v->record, NULL, 0);
            char *t = malloc(len + 1);
            if (!t)
                FAIL("out of memory");
            xfer_adapter_record_yaml(v->record, t, len + 1);
            fputs(t, f);
            free(t);
        } else {
            fputs(xfer_type_name(v->type), f);
        }
        fprintf(f, ", dims: [");
        for (k = 0; k < v->ndims; k++)
            fprintf(f, "%s%" PRIu64, k ? ", " : "", v->dims[k]);
        fprintf(f, "]}\n");
    }
    if (fclose(f) != 0)
        FAIL("%s: write failed: %s", o->wf, strerror(errno));
    printf("xfer-ncstream: %s: %d variable(s) of %s, %d producer(s), %d consumer(s) -> %s\n", o->wf,
           nsel, o->file, o->producers, o->consumers, out_abs);
    free(dn);
    free(sel);
    free(tbl);
    ACHECK(ops->close_read(&r));
    return 0;
}

/* ---- send / recv --------------------------------------------------------------------------- */

/* The channel this component sends on (send) or receives on (recv). */
static xfer_channel_t *my_channel(xfer_t *x, int sending)
{
    const xfer_config_t *cfg;
    xfer_channel_t *ch;
    int comp, i;
    XCHECK(xfer_config_of(x, &cfg, &comp));
    for (i = 0; i < cfg->nchannels; i++)
        if ((sending ? cfg->channels[i].from : cfg->channels[i].to) == comp) {
            XCHECK(xfer_channel_open(x, cfg->channels[i].name, &ch));
            return ch;
        }
    FAIL("component %s: no channel %s it", cfg->components[comp].name, sending ? "from" : "to");
    return NULL;
}

static const xfer_cfg_channel_t *channel_cfg(xfer_t *x, xfer_channel_t *ch, int sending)
{
    const xfer_config_t *cfg;
    int comp, i;
    (void) ch;
    XCHECK(xfer_config_of(x, &cfg, &comp));
    for (i = 0; i < cfg->nchannels; i++)
        if ((sending ? cfg->channels[i].from : cfg->channels[i].to) == comp)
            return &cfg->channels[i];
    return NULL;
}

/* Step s of a test series: s added to every element, in the element's type. */
static void add_step(xfer_type_t t, void *buf, size_t n, uint64_t s)
{
    size_t i;
    for (i = 0; s > 0 && i < n; i++) {
        switch (t) {
        case XFER_TYPE_INT8:
        case XFER_TYPE_UINT8:
            ((uint8_t *) buf)[i] = (uint8_t) (((uint8_t *) buf)[i] + s);
            break;
        case XFER_TYPE_INT16:
        case XFER_TYPE_UINT16:
            ((uint16_t *) buf)[i] = (uint16_t) (((uint16_t *) buf)[i] + s);
            break;
        case XFER_TYPE_INT32:
        case XFER_TYPE_UINT32:
            ((uint32_t *) buf)[i] = (uint32_t) (((uint32_t *) buf)[i] + s);
            break;
        case XFER_TYPE_INT64:
        case XFER_TYPE_UINT64:
            ((uint64_t *) buf)[i] += s;
            break;
        case XFER_TYPE_FLOAT32:
            ((float *) buf)[i] += (float) s;
            break;
        case XFER_TYPE_FLOAT64:
            ((double *) buf)[i] += (double) s;
            break;
        case XFER_TYPE_RECORD: /* add_step_record, field by field */
            break;
        }
    }
}

/* The same for @p n records laid out as @p r: s added to every element of every field. */
static void add_step_record(const xfer_record_t *r, void *buf, size_t n, uint64_t s)
{
    size_t i;
    int f;
    for (i = 0; s > 0 && i < n; i++)
        for (f = 0; f < r->nfields; f++)
            add_step(r->fields[f].type, (char *) buf + i * r->size + r->fields[f].offset,
                     r->fields[f].count, s);
}

static void slab(const xfer_cfg_dataset_t *d, MPI_Comm comm, uint64_t *start, uint64_t *count)
{
    int rank, size, k;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (k = 0; k < d->ndims; k++) {
        start[k] = 0;
        count[k] = d->dims[k];
    }
    xfer_adapter_split(d->dims[0], size, rank, &start[0], &count[0]);
}

static int do_send(const opts_t *o)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_netcdf();
    const xfer_adapter_var_t *vars;
    const xfer_cfg_channel_t *cc;
    char(*dn)[XFER_ADAPTER_MAX_NAME];
    xfer_channel_t *ch;
    xfer_t *x = NULL;
    MPI_Comm comm;
    uint8_t *tbl;
    size_t tlen;
    int nv, i, rank, *which;
    uint64_t s;
    void *r;

    XCHECK(xfer_init(o->config, o->component, MPI_COMM_WORLD, &x));
    XCHECK(xfer_comm(x, &comm));
    MPI_Comm_rank(comm, &rank);
    ch = my_channel(x, 1);
    cc = channel_cfg(x, ch, 1);
    ACHECK(ops->open_read(o->file, comm, &r));
    ACHECK(ops->vars(r, &nv, &vars));
    ACHECK(xfer_netcdf_table(r, &tbl, &tlen));
    dn = dataset_names(nv, vars);
    which = calloc((size_t) cc->ndatasets + 1, sizeof(*which));
    if (!which)
        FAIL("out of memory");
    /* every dataset of the channel must be a variable of the file, as config saw it */
    for (i = 0; i < cc->ndatasets; i++) {
        const xfer_cfg_dataset_t *d = &cc->datasets[i];
        if (strcmp(d->name, SCHEMA_DATASET) == 0) {
            if (d->type != XFER_TYPE_UINT8 || d->ndims != 1 || d->dims[0] != tlen)
                FAIL("%s does not match the workflow file: its attribute table has %zu bytes, "
                     "dataset " SCHEMA_DATASET " %" PRIu64 " (run xfer-ncstream config again)",
                     o->file, tlen, d->dims[0]);
            which[i] = -1;
            continue;
        }
        which[i] = find_name(nv, dn, d->name);
        if (which[i] < 0)
            FAIL("%s: no variable for dataset \"%s\" of the workflow file%s%s", o->file, d->name,
                 xfer_netcdf_unsupported(r, d->name) ? ": " : "",
                 xfer_netcdf_unsupported(r, d->name) ? xfer_netcdf_unsupported(r, d->name) : "");
        if (vars[which[i]].type != d->type || vars[which[i]].ndims != d->ndims ||
            memcmp(vars[which[i]].dims, d->dims, (size_t) d->ndims * sizeof(uint64_t)) != 0)
            FAIL("%s: variable \"%s\" does not match dataset \"%s\" of the workflow file (type "
                 "or shape changed: run xfer-ncstream config again)",
                 o->file, vars[which[i]].name, d->name);
        if (d->type == XFER_TYPE_RECORD) { /* read into the declared layout, fields by name */
            char why[256];
            if (xfer_adapter_record_fits(vars[which[i]].record, d->record, why, sizeof(why)) != 0)
                FAIL("%s: variable \"%s\" cannot fill the record of dataset \"%s\": %s", o->file,
                     vars[which[i]].name, d->name, why);
        }
    }
    for (s = 0; s < (uint64_t) o->steps; s++) {
        for (i = 0; i < cc->ndatasets; i++) {
            const xfer_cfg_dataset_t *d = &cc->datasets[i];
            xfer_dataset_desc_t desc;
            size_t n;
            char *buf;
            memset(&desc, 0, sizeof(desc));
            desc.name = d->name;
            desc.type = d->type;
            desc.ndims = d->ndims;
            memcpy(desc.dims, d->dims, sizeof(desc.dims));
            if (which[i] < 0) { /* the table: from rank 0 */
                desc.count[0] = rank == 0 ? tlen : 0;
                XCHECK(xfer_put(ch, &desc, tbl));
                continue;
            }
            slab(d, comm, desc.start, desc.count);
            n = xfer_adapter_volume(d->ndims, desc.count);
            buf = malloc(n * xfer_cfg_dataset_esize(d) + 1);
            if (!buf)
                FAIL("rank %d: out of memory for a slab of \"%s\"", rank, vars[which[i]].name);
            if (d->type == XFER_TYPE_RECORD) {
                ACHECK(ops->read_record(r, which[i], d->record, desc.start, desc.count, buf));
                add_step_record(d->record, buf, n, s);
            } else {
                ACHECK(ops->read(r, which[i], desc.start, desc.count, buf));
                add_step(d->type, buf, n, s);
            }
            XCHECK(xfer_put(ch, &desc, buf));
            free(buf);
        }
        XCHECK(xfer_step_end(ch));
    }
    i = cc->ndatasets; /* cc belongs to x */
    ACHECK(ops->close_read(&r));
    XCHECK(xfer_finalize(&x));
    if (rank == 0)
        printf("xfer-ncstream: sent %d step(s) of %d dataset(s) from %s\n", o->steps, i, o->file);
    free(which);
    free(dn);
    free(tbl);
    return 0;
}

static void recv_fail(void **w, const char *fmt, const char *a, const char *b)
{
    xfer_adapter_netcdf()->abort(w);
    fprintf(stderr, "xfer-ncstream: rank %d: ", wrank);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    fflush(stderr);
    exit(1);
}

static int do_recv(const opts_t *o)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_netcdf();
    const xfer_cfg_channel_t *cc;
    xfer_adapter_wopts_t wo;
    xfer_adapter_var_t *objs = NULL;
    char(*dn)[XFER_ADAPTER_MAX_NAME] = NULL;
    xfer_adapter_var_t *vars = NULL;
    xfer_channel_t *ch;
    xfer_t *x = NULL;
    MPI_Comm comm;
    uint8_t *tbl = NULL;
    size_t tlen = 0;
    int nobj = 0, nv = 0, i, rank, same = strcmp(o->layout, "same") == 0;
    uint64_t step;
    void *w = NULL;
    xfer_status_t st;

    memset(&wo, 0, sizeof(wo));
    if (xfer_adapter_layout_parse(o->layout, &wo.layout) != 0)
        xfer_cli_usage_error("xfer-ncstream", "--layout: expected stepdim, group or same");
    XCHECK(xfer_init(o->config, o->component, MPI_COMM_WORLD, &x));
    XCHECK(xfer_comm(x, &comm));
    MPI_Comm_rank(comm, &rank);
    ch = my_channel(x, 0);
    cc = channel_cfg(x, ch, 0);
    for (i = 0; i < cc->ndatasets && strcmp(cc->datasets[i].name, SCHEMA_DATASET) != 0; i++)
        ;
    if (i == cc->ndatasets)
        FAIL("channel %s has no dataset " SCHEMA_DATASET " (write the workflow file with "
             "xfer-ncstream config)",
             cc->name);
    tlen = (size_t) cc->datasets[i].dims[0];
    tbl = malloc(tlen + 1);
    if (!tbl)
        FAIL("out of memory");
    ACHECK(ops->create(o->file, comm, &wo, &w));
    for (step = 0;; step++) {
        xfer_step_status_t ss = XFER_STEP_NOT_READY;
        /* as long as the sender lives; the end of the stream is a status */
        st = xfer_step_begin(ch, -1, &ss);
        if (st != XFER_SUCCESS)
            recv_fail(&w, "xfer_step_begin: %s: %s", xfer_status_name(st), xfer_last_error());
        if (ss == XFER_STEP_END_OF_STREAM)
            break;
        st = xfer_get(ch, SCHEMA_DATASET, tbl, tlen, NULL);
        if (st != XFER_SUCCESS)
            recv_fail(&w, "xfer_get(" SCHEMA_DATASET "): %s: %s", xfer_status_name(st),
                      xfer_last_error());
        if (step == 0) {
            int k;
            if (xfer_adapter_table_unpack(tbl, tlen, &nobj, &objs) != XFER_SUCCESS)
                recv_fail(&w, "%s%s", xfer_adapter_error(), "");
            vars = calloc((size_t) nobj + 1, sizeof(*vars));
            if (!vars)
                recv_fail(&w, "out of memory%s%s", "", "");
            for (k = 0; k < nobj; k++)
                if (objs[k].name[0] != '/')
                    vars[nv++] = objs[k]; /* shallow: objs owns the attributes */
            dn = dataset_names(nv, vars);
            if (xfer_netcdf_define(w, tbl, tlen, same) != XFER_SUCCESS)
                recv_fail(&w, "%s%s", xfer_adapter_error(), "");
        }
        for (i = 0; i < cc->ndatasets; i++) {
            const xfer_cfg_dataset_t *d = &cc->datasets[i];
            uint64_t start[XFER_MAX_DIMS], count[XFER_MAX_DIMS];
            size_t bytes;
            char *buf;
            int k;
            if (strcmp(d->name, SCHEMA_DATASET) == 0)
                continue;
            k = find_name(nv, dn, d->name);
            if (k < 0)
                recv_fail(&w, "dataset \"%s\": no such variable in the producer's table%s", d->name,
                          "");
            vars[k].record = d->record; /* the table carries no fields: the declaration's */
            slab(d, comm, start, count);
            bytes = xfer_adapter_volume(d->ndims, count) * xfer_cfg_dataset_esize(d);
            buf = malloc(bytes + 1);
            if (!buf)
                recv_fail(&w, "out of memory for a slab of \"%s\"%s", vars[k].name, "");
            st = xfer_get_selection(ch, d->name, start, count, buf, bytes, NULL);
            if (st != XFER_SUCCESS)
                recv_fail(&w, "xfer_get_selection: %s: %s", xfer_status_name(st),
                          xfer_last_error());
            if (ops->write(w, step, &vars[k], start, count, buf) != XFER_SUCCESS)
                recv_fail(&w, "%s%s", xfer_adapter_error(), "");
            free(buf);
        }
        if (ops->end_step(w, step) != XFER_SUCCESS)
            recv_fail(&w, "%s%s", xfer_adapter_error(), "");
        st = xfer_step_end(ch);
        if (st != XFER_SUCCESS)
            recv_fail(&w, "xfer_step_end: %s: %s", xfer_status_name(st), xfer_last_error());
    }
    if (step == 0)
        recv_fail(&w, "the stream ended before its first step; %s not written%s", o->file, "");
    i = cc->ndatasets - 1; /* cc belongs to x */
    ACHECK(ops->commit(&w));
    XCHECK(xfer_finalize(&x));
    if (rank == 0)
        printf("xfer-ncstream: wrote %" PRIu64 " step(s) of %d variable(s) to %s (layout %s)\n",
               step, i, o->file, o->layout);
    xfer_adapter_table_free(nobj, &objs);
    free(vars);
    free(dn);
    free(tbl);
    return 0;
}

int main(int argc, char **argv)
{
    enum {
        O_VARS = 256,
        O_OUT,
        O_LAYOUT,
        O_CONFIG,
        O_COMPONENT,
        O_PRODUCERS,
        O_CONSUMERS,
        O_TIMEOUT,
        O_STEPS,
        O_VERSION
    };
    static const struct option longopts[] = {{"variables", required_argument, NULL, O_VARS},
                                             {"out", required_argument, NULL, O_OUT},
                                             {"output", required_argument, NULL, O_OUT},
                                             {"layout", required_argument, NULL, O_LAYOUT},
                                             {"config", required_argument, NULL, O_CONFIG},
                                             {"component", required_argument, NULL, O_COMPONENT},
                                             {"producers", required_argument, NULL, O_PRODUCERS},
                                             {"consumers", required_argument, NULL, O_CONSUMERS},
                                             {"timeout-ms", required_argument, NULL, O_TIMEOUT},
                                             {"steps", required_argument, NULL, O_STEPS},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, O_VERSION},
                                             {NULL, 0, NULL, 0}};
    const char *prog = "xfer-ncstream";
    opts_t o = {NULL, NULL, NULL, NULL, NULL, "stepdim", NULL, NULL, 1, 1, 1, 0};
    xfer_adapter_layout_t lay;
    int c, rc;

    opterr = 0;
    while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case O_VERSION:
            xfer_cli_version(prog);
            return 0;
        case 'o':
            o.wf = optarg;
            break;
        case O_VARS:
            o.vars = optarg;
            break;
        case O_OUT:
            o.out = optarg;
            break;
        case O_LAYOUT:
            if (xfer_adapter_layout_parse(optarg, &lay) != 0)
                xfer_cli_usage_error(prog, "--layout: expected stepdim, group or same");
            o.layout = optarg;
            break;
        case O_CONFIG:
            o.config = optarg;
            break;
        case O_COMPONENT:
            o.component = optarg;
            break;
        case O_PRODUCERS:
            o.producers = (int) xfer_cli_long(prog, "--producers", optarg, 1, 1 << 20);
            break;
        case O_CONSUMERS:
            o.consumers = (int) xfer_cli_long(prog, "--consumers", optarg, 1, 1 << 20);
            break;
        case O_TIMEOUT:
            o.timeout_ms = (int) xfer_cli_long(prog, "--timeout-ms", optarg, 0, 86400000);
            break;
        case O_STEPS:
            o.steps = (int) xfer_cli_long(prog, "--steps", optarg, 1, 1 << 30);
            break;
        default:
            xfer_cli_bad_option(prog, c, argv);
        }
    }
    if (argc - optind != 2)
        xfer_cli_usage_error(prog, "expected a mode (config, send or recv) and a file");
    o.mode = argv[optind];
    o.file = argv[optind + 1];
    if (strcmp(o.mode, "config") && strcmp(o.mode, "send") && strcmp(o.mode, "recv"))
        xfer_cli_usage_error(prog, "unknown mode \"%s\" (config, send or recv)", o.mode);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (strcmp(o.mode, "config") == 0)
        rc = do_config(&o);
    else if (strcmp(o.mode, "send") == 0)
        rc = do_send(&o);
    else
        rc = do_recv(&o);
    MPI_Finalize();
    return rc;
}
