/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-h5stream: stream the datasets of an HDF5 file through a libxfer channel into another HDF5
 * file. One program, three modes (docs/adapters.md):
 *
 *   xfer-h5stream config IN.h5 -o WF.yaml [--datasets a,b] [--producers P] [--consumers Q]
 *                 [--steps N] [--output OUT.h5] [--layout group|stepdim|same] [--chunked]
 *                 [--timeout-ms MS]
 *   xfer-h5stream send IN.h5 [--datasets a,b] [--steps N] [--config WF] [--component NAME]
 *   xfer-h5stream recv OUT.h5 [--layout group|stepdim|same] [--chunked] [--chunk c0,c1,..]
 *                 [--config WF] [--component NAME]
 *
 * Dataset names of a workflow file allow [A-Za-z0-9_.-] only: an HDF5 path maps to a name by
 * dropping the leading '/', turning '/' into '.' and any other character (including '.' and
 * '-') into '_'; a name already taken gets "-2", "-3" ... appended. config and send compute the
 * mapping over all supported datasets of the file in visit order, so they agree on it; send puts
 * the table in the channel's order, and recv takes the names from the channel. Besides
 * the file's datasets the channel carries "xfer-meta" (uint8): the table of the file's groups
 * and the selected datasets with their HDF5 paths, types, shapes and attributes, sent by rank 0
 * each step, so that names and attributes travel in-band.
 *
 * A compound dataset of numbers (scalars or 1-D arrays) is a record: config declares it with its
 * members in order ("type: {id: int64, pos: [float64, 3]}"), send reads it into that declared
 * layout (the file's members matched by name), recv writes it back as a compound.
 *
 * send: each rank reads its slab of the slowest dimension (collective read) once and puts it
 * every step. recv: each rank gets its own slab of each dataset (xfer_get_selection) and writes
 * it collectively. A failure on the receiving side keeps the completed steps (the adapter's
 * abort), drains the stream so the sender ends cleanly, and exits 1.
 *
 * The names and the producer's view of a file (open, select, the in-band table) are in
 * h5stream_src.c, shared through h5stream.h.
 */
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <xfer/adapter.h>
#include <xfer/xfer.h>

#include "common/cli.h"

#include "adapter_common.h"
#include "h5stream.h"

typedef struct opts {
    const char *mode, *file, *yaml, *output, *config, *component, *datasets, *layout;
    int producers, consumers, steps, chunked, timeout_ms;
    uint64_t chunk[XFER_MAX_DIMS];
    long long max_file_size; /* recv, tests: RLIMIT_FSIZE, a full disk */
    int no_space_check;      /* recv, tests: no free-space check before each step */
} opts_t;

int wrank;                   /* the rank that speaks for its component: 0 */
static int finalized_ok = 1; /* 0 once xfer_init ran until xfer_finalize succeeds */
static int aborted;          /* the output was aborted: see main() */

static void abort_output(const xfer_adapter_ops_t *ops, void **h)
{
    ops->abort(h);
    aborted = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: xfer-h5stream config IN.h5 -o WF.yaml [--datasets a,b] [--producers P]\n"
               "                     [--consumers Q] [--steps N] [--output OUT.h5]\n"
               "                     [--layout group|stepdim|same] [--chunked] [--timeout-ms MS]\n"
               "       xfer-h5stream send IN.h5 [--datasets a,b] [--steps N] [--config WF]\n"
               "                     [--component NAME]\n"
               "       xfer-h5stream recv OUT.h5 [--layout group|stepdim|same] [--chunked]\n"
               "                     [--chunk c0,c1,...] [--config WF] [--component NAME]\n"
               "       xfer-h5stream -h|--help | --version\n"
               "Streams an HDF5 file's datasets between MPI components, step by step\n"
               "(docs/adapters.md).\n");
}

/* ---- config -------------------------------------------------------------------------------- */

static void yaml_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static char *absolute(const char *p)
{
    char cwd[PATH_MAX], *out;
    if (p[0] == '/' || !getcwd(cwd, sizeof(cwd)))
        return strdup(p);
    out = malloc(strlen(cwd) + strlen(p) + 2);
    if (out)
        sprintf(out, "%s/%s", cwd, p);
    return out;
}

static int do_config(const opts_t *o)
{
    src_t s;
    char self[PATH_MAX], *in = NULL, *out = NULL, *outdefault = NULL;
    FILE *f = NULL;
    ssize_t n;
    int i, d, rc = 1;
    xfer_adapter_layout_t layout;
    if (!o->yaml) {
        SAY("config: -o WF.yaml is required");
        return 2;
    }
    if (xfer_adapter_layout_parse(o->layout, &layout) != 0) {
        SAY("--layout: expected group, stepdim or same, got \"%s\"", o->layout);
        return 2;
    }
    if (layout == XFER_ADAPTER_SAME_PATHS && o->steps != 1) {
        SAY("--layout same holds one step (--steps %d given)", o->steps);
        return 2;
    }
    if (src_open(&s, o->file, MPI_COMM_WORLD) != 0)
        return 1;
    if (src_select(&s, o->datasets, o->file) != 0 || src_table(&s) != 0)
        goto out;
    if (s.nsel + 1 > XFER_MAX_DATASETS) {
        SAY("%s: %d datasets selected; a channel carries at most %d (%d with the table): choose "
            "with --datasets",
            o->file, s.nsel, XFER_MAX_DATASETS, XFER_MAX_DATASETS - 1);
        goto out;
    }
    rc = 0;
    if (wrank != 0)
        goto out;
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = '\0';
    in = absolute(o->file);
    if (!o->output) {
        outdefault = malloc(strlen(o->file) + 16);
        if (outdefault)
            sprintf(outdefault, "%s.copy.h5", o->file);
    }
    out = absolute(o->output ? o->output : outdefault ? outdefault : "out.h5");
    if (!(f = fopen(o->yaml, "w"))) {
        SAY("%s: cannot write: %s", o->yaml, strerror(errno));
        rc = 1;
        goto out;
    }
    fprintf(f, "# written by xfer-h5stream config from %s\nworkflow: h5stream\n", in);
    if (o->timeout_ms > 0)
        fprintf(f, "control: {timeout_ms: %d}\n", o->timeout_ms);
    fprintf(f, "components:\n  - name: send\n    nprocs: %d\n    cmd: [", o->producers);
    yaml_str(f, self);
    fprintf(f, ", send, ");
    yaml_str(f, in);
    fprintf(f, ", --steps, \"%d\"]\n  - name: recv\n    nprocs: %d\n    cmd: [", o->steps,
            o->consumers);
    yaml_str(f, self);
    fprintf(f, ", recv, ");
    yaml_str(f, out);
    fprintf(f, ", --layout, %s%s]\n", o->layout, o->chunked ? ", --chunked" : "");
    fprintf(f, "channels:\n  - name: h5\n    from: send\n    to: recv\n    datasets:\n");
    fprintf(f, "      - {name: %s, type: uint8, dims: [%zu]} # names, shapes, attributes\n",
            META_NAME, s.table_len);
    for (i = 0; i < s.nsel; i++) {
        const xfer_adapter_var_t *v = &s.vars[s.sel[i]];
        fprintf(f, "      - {name: %s, type: ", s.names[s.sel[i]]);
        if (v->type == XFER_TYPE_RECORD) { /* the compound's members, in order */
            const size_t len = xfer_adapter_record_yaml(v->record, NULL, 0);
            char *t = malloc(len + 1);
            if (!t) {
                SAY("out of memory");
                fclose(f);
                rc = 1;
                goto out;
            }
            xfer_adapter_record_yaml(v->record, t, len + 1);
            fputs(t, f);
            free(t);
        } else {
            fputs(xfer_type_name(v->type), f);
        }
        fprintf(f, ", dims: [");
        for (d = 0; d < v->ndims; d++)
            fprintf(f, "%s%llu", d ? ", " : "", (unsigned long long) v->dims[d]);
        fprintf(f, "]} # %s\n", v->name);
    }
    if (fclose(f) != 0) {
        SAY("%s: write failed: %s", o->yaml, strerror(errno));
        rc = 1;
        goto out;
    }
    SAY("wrote %s: %d dataset(s) of %s, %d -> %d ranks, %d step(s), output %s", o->yaml, s.nsel,
        o->file, o->producers, o->consumers, o->steps, out);
out:
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(in);
    free(out);
    free(outdefault);
    src_close(&s);
    return rc;
}

/* ---- the workflow side ------------------------------------------------------------------- */

#define XTRY(call, label)                                                                          \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        if (st_ != XFER_SUCCESS) {                                                                 \
            fprintf(stderr, "xfer-h5stream: rank %d: %s: %s: %s\n", wrank, #call,                  \
                    xfer_status_name(st_), xfer_last_error());                                     \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)

/* The channel of this component that carries xfer-meta, in direction @p sending. */
static const xfer_cfg_channel_t *find_channel(const xfer_config_t *cfg, int comp, int sending,
                                              const xfer_cfg_dataset_t **meta)
{
    int c, d;
    for (c = 0; c < cfg->nchannels; c++) {
        const xfer_cfg_channel_t *ch = &cfg->channels[c];
        if ((sending ? ch->from : ch->to) != comp)
            continue;
        for (d = 0; d < ch->ndatasets; d++)
            if (strcmp(ch->datasets[d].name, META_NAME) == 0 && ch->datasets[d].ndims == 1 &&
                ch->datasets[d].type == XFER_TYPE_UINT8) {
                *meta = &ch->datasets[d];
                return ch;
            }
    }
    return NULL;
}

static int do_send(const opts_t *o)
{
    const xfer_config_t *cfg;
    const xfer_cfg_channel_t *chc;
    const xfer_cfg_dataset_t *meta = NULL;
    xfer_channel_t *ch;
    xfer_t *x = NULL;
    MPI_Comm comm;
    src_t s;
    void **blocks = NULL;
    uint64_t(*starts)[XFER_MAX_DIMS] = NULL, (*counts)[XFER_MAX_DIMS] = NULL;
    int comp, rank, size, i, j, d, step, bad = 0, rc = 1, opened = 0;
    double t_read = 0, t_stream; /* seconds: reading the slabs, then the steps (max over ranks) */
    uint64_t bytes = 0;
    finalized_ok = 0;
    XTRY(xfer_init(o->config, o->component, MPI_COMM_WORLD, &x), fail);
    XTRY(xfer_config_of(x, &cfg, &comp), fail);
    XTRY(xfer_comm(x, &comm), fail);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    wrank = rank;
    if (!(chc = find_channel(cfg, comp, 1, &meta))) {
        SAY("send: component %s sends no channel with a %s dataset (write the workflow with "
            "xfer-h5stream config)",
            cfg->components[comp].name, META_NAME);
        goto fail;
    }
    XTRY(xfer_channel_open(x, chc->name, &ch), fail);
    bad = src_open(&s, o->file, comm) != 0;
    opened = !bad;
    /* the channel's datasets, by workflow name; --datasets (if given) must name the same ones */
    if (!bad && o->datasets) {
        bad = src_select(&s, o->datasets, o->file) != 0;
        if (!bad && s.nsel != chc->ndatasets - 1) {
            SAY("send: --datasets selects %d dataset(s), the workflow's channel %s carries %d",
                s.nsel, chc->name, chc->ndatasets - 1);
            bad = 1;
        }
    }
    s.nsel = 0;
    for (j = 0; !bad && j < chc->ndatasets; j++) {
        const xfer_cfg_dataset_t *cd = &chc->datasets[j];
        if (cd == meta)
            continue;
        for (i = 0; i < s.nvars && strcmp(s.names[i], cd->name) != 0; i++)
            ;
        if (i == s.nvars) {
            SAY("send: %s: no supported dataset for the workflow's dataset %s (missing dataset)",
                o->file, cd->name);
            bad = 1;
            break;
        }
        if (s.vars[i].type != cd->type || s.vars[i].ndims != cd->ndims ||
            memcmp(s.vars[i].dims, cd->dims, sizeof(uint64_t) * (size_t) cd->ndims) != 0) {
            SAY("send: %s: %s (%s) differs from the workflow's %s in type or shape", o->file,
                s.vars[i].name, xfer_type_name(s.vars[i].type), cd->name);
            bad = 1;
            break;
        }
        if (cd->type == XFER_TYPE_RECORD) { /* read into the declared layout, fields by name */
            char why[256];
            if (xfer_adapter_record_fits(s.vars[i].record, cd->record, why, sizeof(why)) != 0) {
                SAY("send: %s: %s cannot fill the workflow's record %s: %s", o->file,
                    s.vars[i].name, cd->name, why);
                bad = 1;
                break;
            }
        }
        s.as[s.nsel] = cd->record;
        s.sel[s.nsel++] = i;
    }
    if (!bad && (bad = src_table(&s) != 0) == 0 && s.table_len != meta->dims[0]) {
        SAY("send: the table of %s holds %zu bytes, the workflow declares %llu: the file changed "
            "since xfer-h5stream config; write the workflow again",
            o->file, s.table_len, (unsigned long long) meta->dims[0]);
        bad = 1;
    }
    if (!bad) {
        blocks = calloc((size_t) s.nsel + 1, sizeof(void *));
        starts = calloc((size_t) s.nsel + 1, sizeof(*starts));
        counts = calloc((size_t) s.nsel + 1, sizeof(*counts));
        bad = !blocks || !starts || !counts;
    }
    t_read = MPI_Wtime();
    for (i = 0; !bad && i < s.nsel; i++) { /* each rank its slab, read once */
        const xfer_adapter_var_t *v = &s.vars[s.sel[i]];
        size_t nb;
        for (d = 0; d < v->ndims; d++) {
            starts[i][d] = 0;
            counts[i][d] = v->dims[d];
        }
        xfer_adapter_split(v->dims[0], size, rank, &starts[i][0], &counts[i][0]);
        nb = xfer_adapter_volume(v->ndims, counts[i]) *
             (s.as[i] ? s.as[i]->size : xfer_type_size(v->type));
        blocks[i] = malloc(nb ? nb : 1);
        bytes += nb;
        if (!blocks[i] ||
            (s.as[i] ? s.ops->read_record(s.h, s.sel[i], s.as[i], starts[i], counts[i], blocks[i])
                     : s.ops->read(s.h, s.sel[i], starts[i], counts[i], blocks[i])) != 0) {
            SAY("send: %s", blocks[i] ? xfer_adapter_error() : "out of memory");
            bad = 1;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
    if (bad)
        goto done; /* the receiver sees the end of the stream without a step */
    t_stream = MPI_Wtime();
    t_read = t_stream - t_read;
    for (step = 0; step < o->steps; step++) {
        xfer_dataset_desc_t dd;
        memset(&dd, 0, sizeof(dd));
        dd.name = META_NAME;
        dd.type = XFER_TYPE_UINT8;
        dd.ndims = 1;
        dd.dims[0] = s.table_len;
        dd.count[0] = rank == 0 ? s.table_len : 0;
        XTRY(xfer_put(ch, &dd, rank == 0 ? s.table : NULL), fail);
        for (i = 0; i < s.nsel; i++) {
            const xfer_adapter_var_t *v = &s.vars[s.sel[i]];
            memset(&dd, 0, sizeof(dd));
            dd.name = s.names[s.sel[i]];
            dd.type = v->type;
            dd.ndims = v->ndims;
            memcpy(dd.dims, v->dims, sizeof(dd.dims));
            memcpy(dd.start, starts[i], sizeof(dd.start));
            memcpy(dd.count, counts[i], sizeof(dd.count));
            XTRY(xfer_put(ch, &dd, blocks[i]), fail);
        }
        XTRY(xfer_step_end(ch), fail);
    }
    t_stream = MPI_Wtime() - t_stream;
    {
        double t[2] = {t_read, t_stream};
        MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, comm);
        MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UINT64_T, MPI_SUM, comm);
        SAY("send: %d step(s) of %d dataset(s) from %s: read %.1f MiB in %.3f s, put %d step(s) "
            "in %.3f s",
            o->steps, s.nsel, o->file, (double) bytes / 1048576.0, t[0], o->steps, t[1]);
    }
    rc = 0;
done:
    XTRY(xfer_finalize(&x), fail);
    finalized_ok = 1;
    if (bad)
        rc = 1;
fail:
    for (i = 0; blocks && i < s.nsel; i++)
        free(blocks[i]);
    free(blocks);
    free(starts);
    free(counts);
    if (opened)
        src_close(&s);
    return rc;
}

/* The workflow names of the table's datasets: the channel's, in order (the sender builds the
 * table in channel order); NULL when they do not match in number, type or shape. A record
 * dataset's var gets the workflow's record (the table does not carry fields): the layout its
 * elements arrive in, and the compound written. */
static char **channel_names(const xfer_cfg_channel_t *chc, const xfer_cfg_dataset_t *meta, int n,
                            xfer_adapter_var_t *vars)
{
    char **names;
    int i = 0, j;
    if (chc->ndatasets - 1 != n || !(names = calloc((size_t) n + 1, sizeof(char *))))
        return NULL;
    for (j = 0; j < chc->ndatasets; j++) {
        const xfer_cfg_dataset_t *cd = &chc->datasets[j];
        if (cd == meta)
            continue;
        if (vars[i].type != cd->type || vars[i].ndims != cd->ndims ||
            memcmp(vars[i].dims, cd->dims, sizeof(uint64_t) * (size_t) cd->ndims) != 0 ||
            !(names[i] = strdup(cd->name))) {
            free_names(n, names);
            return NULL;
        }
        vars[i].record = cd->record;
        i++;
    }
    return names;
}

/* Receive (and forget) every remaining step, so that the sender ends cleanly. */
static void drain(xfer_channel_t *ch, size_t meta_len)
{
    uint8_t *buf = malloc(meta_len ? meta_len : 1);
    while (buf && xfer_get(ch, META_NAME, buf, meta_len, NULL) == XFER_SUCCESS &&
           xfer_step_end(ch) == XFER_SUCCESS)
        ;
    free(buf);
}

static int do_recv(const opts_t *o)
{
    const xfer_config_t *cfg;
    const xfer_cfg_channel_t *chc;
    const xfer_cfg_dataset_t *meta = NULL;
    const xfer_adapter_ops_t *ops = xfer_adapter_hdf5();
    xfer_adapter_wopts_t wo;
    xfer_channel_t *ch = NULL;
    xfer_t *x = NULL;
    MPI_Comm comm;
    xfer_adapter_var_t *objs = NULL;
    char **names = NULL;
    void *h = NULL;
    uint8_t *table = NULL;
    void *buf = NULL;
    size_t bufcap = 0;
    uint64_t step = 0, bytes = 0;
    int comp, rank, size, nobj = 0, ngroups = 0, i, d, rc = 1, failed = 0;
    /* seconds: waiting for the first step, getting the datasets, writing them */
    double t_first = 0, t_get = 0, t_write = 0, t0;
    xfer_status_t st;
    memset(&wo, 0, sizeof(wo));
    if (xfer_adapter_layout_parse(o->layout, &wo.layout) != 0) {
        SAY("--layout: expected group, stepdim or same, got \"%s\"", o->layout);
        return 2;
    }
    wo.chunked = o->chunked;
    wo.no_space_check = o->no_space_check;
    memcpy(wo.chunk, o->chunk, sizeof(wo.chunk));
    finalized_ok = 0;
    XTRY(xfer_init(o->config, o->component, MPI_COMM_WORLD, &x), fail);
    XTRY(xfer_config_of(x, &cfg, &comp), fail);
    XTRY(xfer_comm(x, &comm), fail);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    wrank = rank;
    if (!(chc = find_channel(cfg, comp, 0, &meta))) {
        SAY("recv: component %s receives no channel with a %s dataset (write the workflow with "
            "xfer-h5stream config)",
            cfg->components[comp].name, META_NAME);
        goto fail;
    }
    XTRY(xfer_channel_open(x, chc->name, &ch), fail);
    if (o->max_file_size > 0) { /* tests: a disk that fills up */
        struct rlimit rl = {(rlim_t) o->max_file_size, (rlim_t) o->max_file_size};
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &rl);
    }
    if (!(table = malloc(meta->dims[0]))) {
        SAY("recv: out of memory");
        goto fail;
    }
    /* the output exists before the first step: an unwritable place fails at once */
    if ((st = ops->create(o->file, comm, &wo, &h)) != XFER_SUCCESS) {
        SAY("recv: %s", xfer_adapter_error());
        failed = 1;
        drain(ch, meta->dims[0]);
        goto done;
    }
    for (;; step++) {
        xfer_step_status_t ss = XFER_STEP_NOT_READY;
        t0 = MPI_Wtime();
        /* as long as the sender lives; the end of the stream is a status */
        st = xfer_step_begin(ch, -1, &ss);
        if (st == XFER_SUCCESS && ss == XFER_STEP_OK)
            st = xfer_get(ch, META_NAME, table, meta->dims[0], NULL);
        if (step == 0)
            t_first = MPI_Wtime() - t0;
        else
            t_get += MPI_Wtime() - t0;
        if (st == XFER_SUCCESS && ss == XFER_STEP_END_OF_STREAM)
            break;
        XTRY(st, fail_abort);
        if (step == 0) {
            if (xfer_adapter_table_unpack(table, meta->dims[0], &nobj, &objs) != XFER_SUCCESS) {
                SAY("recv: %s", xfer_adapter_error());
                goto fail_abort;
            }
            for (ngroups = 0; ngroups < nobj && objs[ngroups].ndims == 0; ngroups++)
                ;
            if (!(names = channel_names(chc, meta, nobj - ngroups, objs + ngroups))) {
                SAY("recv: the table of %s does not match the channel's datasets", META_NAME);
                goto fail_abort;
            }
        }
        for (i = 0; i < ngroups && !failed; i++)
            failed = ops->write_group(h, step, &objs[i]) != XFER_SUCCESS;
        for (i = ngroups; i < nobj && !failed; i++) {
            const xfer_adapter_var_t *v = &objs[i];
            uint64_t start[XFER_MAX_DIMS], count[XFER_MAX_DIMS];
            size_t need;
            for (d = 0; d < v->ndims; d++) {
                start[d] = 0;
                count[d] = v->dims[d];
            }
            xfer_adapter_split(v->dims[0], size, rank, &start[0], &count[0]);
            need = xfer_adapter_volume(v->ndims, count) * xfer_adapter_var_esize(v);
            if (need > bufcap) {
                void *nb = realloc(buf, need);
                if (!nb) {
                    SAY("recv: out of memory");
                    goto fail_abort;
                }
                buf = nb;
                bufcap = need;
            }
            t0 = MPI_Wtime();
            XTRY(xfer_get_selection(ch, names[i - ngroups], start, count, buf, bufcap, NULL),
                 fail_abort);
            t_get += MPI_Wtime() - t0;
            t0 = MPI_Wtime();
            failed = ops->write(h, step, v, start, count, buf) != XFER_SUCCESS;
            t_write += MPI_Wtime() - t0;
            bytes += need;
        }
        t0 = MPI_Wtime();
        if (!failed)
            failed = ops->end_step(h, step) != XFER_SUCCESS;
        t_write += MPI_Wtime() - t0;
        if (failed) {
            abort_output(ops, &h);
            SAY("recv: step %llu: %s", (unsigned long long) step, xfer_adapter_error());
            XTRY(xfer_step_end(ch), fail);
            drain(ch, meta->dims[0]);
            goto done;
        }
        XTRY(xfer_step_end(ch), fail_abort);
    }
    if (step == 0) {
        SAY("recv: the sender ended the stream without a step: no output written");
        abort_output(ops, &h);
        failed = 1;
        goto done;
    }
    t0 = MPI_Wtime();
    if (ops->commit(&h) != XFER_SUCCESS) {
        abort_output(ops, &h);
        SAY("recv: %s", xfer_adapter_error());
        failed = 1;
        goto done;
    }
    t_write += MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UINT64_T, MPI_SUM, comm);
    {
        double t[3] = {t_first, t_get, t_write};
        MPI_Allreduce(MPI_IN_PLACE, t, 3, MPI_DOUBLE, MPI_MAX, comm);
        SAY("recv: wrote %llu step(s) of %d dataset(s), %llu bytes, to %s (layout %s): first "
            "step after %.3f s, then getting %.3f s, writing %.3f s (%.1f MiB/s)",
            (unsigned long long) step, nobj - ngroups, (unsigned long long) bytes, o->file,
            o->layout, t[0], t[1], t[2],
            t[1] + t[2] > 0 ? (double) bytes / 1048576.0 / (t[1] + t[2]) : 0.0);
    }
done:
    XTRY(xfer_finalize(&x), fail);
    finalized_ok = 1;
    rc = failed ? 1 : 0;
    goto fail;
fail_abort:
    if (h) {
        abort_output(ops, &h);
        SAY("recv: %s", xfer_adapter_error());
    }
fail:
    free(buf);
    free(table);
    free_names(nobj - ngroups, names);
    xfer_adapter_table_free(nobj, &objs);
    return rc;
}

int main(int argc, char **argv)
{
    enum {
        O_CHUNKED = 256,
        O_NOSPACE,
        O_OUTPUT,
        O_DATASETS,
        O_CONFIG,
        O_COMPONENT,
        O_LAYOUT,
        O_PRODUCERS,
        O_CONSUMERS,
        O_STEPS,
        O_TIMEOUT,
        O_MAXFILE,
        O_CHUNK,
        O_VERSION
    };
    static const struct option longopts[] = {
        {"chunked", no_argument, NULL, O_CHUNKED},
        {"no-space-check", no_argument, NULL, O_NOSPACE}, /* recv, tests: a full disk hits HDF5 */
        {"output", required_argument, NULL, O_OUTPUT},
        {"datasets", required_argument, NULL, O_DATASETS},
        {"config", required_argument, NULL, O_CONFIG},
        {"component", required_argument, NULL, O_COMPONENT},
        {"layout", required_argument, NULL, O_LAYOUT},
        {"producers", required_argument, NULL, O_PRODUCERS},
        {"consumers", required_argument, NULL, O_CONSUMERS},
        {"steps", required_argument, NULL, O_STEPS},
        {"timeout-ms", required_argument, NULL, O_TIMEOUT},
        {"max-file-size", required_argument, NULL, O_MAXFILE},
        {"chunk", required_argument, NULL, O_CHUNK},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0}};
    const char *prog = "xfer-h5stream";
    opts_t o;
    int c, rc;
    memset(&o, 0, sizeof(o));
    o.producers = o.consumers = o.steps = 1;
    o.layout = "group";
    opterr = 0;
    while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case O_VERSION:
            xfer_cli_version(prog);
            return 0;
        case O_CHUNKED:
            o.chunked = 1;
            break;
        case O_NOSPACE:
            o.no_space_check = 1;
            break;
        case 'o':
            o.yaml = optarg;
            break;
        case O_OUTPUT:
            o.output = optarg;
            break;
        case O_DATASETS:
            o.datasets = optarg;
            break;
        case O_CONFIG:
            o.config = optarg;
            break;
        case O_COMPONENT:
            o.component = optarg;
            break;
        case O_LAYOUT:
            o.layout = optarg;
            break;
        case O_PRODUCERS:
            o.producers = (int) xfer_cli_long(prog, "--producers", optarg, 1, 1 << 20);
            break;
        case O_CONSUMERS:
            o.consumers = (int) xfer_cli_long(prog, "--consumers", optarg, 1, 1 << 20);
            break;
        case O_STEPS:
            o.steps = (int) xfer_cli_long(prog, "--steps", optarg, 1, INT_MAX);
            break;
        case O_TIMEOUT:
            o.timeout_ms = (int) xfer_cli_long(prog, "--timeout-ms", optarg, 1, 86400000);
            break;
        case O_MAXFILE:
            o.max_file_size = xfer_cli_long(prog, "--max-file-size", optarg, 1, LONG_MAX);
            break;
        case O_CHUNK: {
            const char *p = optarg;
            int d = 0;
            while (*p) {
                char *end;
                if (d == XFER_MAX_DIMS)
                    xfer_cli_usage_error(prog, "--chunk: more than %d dimensions", XFER_MAX_DIMS);
                o.chunk[d] = strtoull(p, &end, 10);
                if (end == p || o.chunk[d] == 0 || (*end && *end != ','))
                    xfer_cli_usage_error(prog,
                                         "--chunk: expected positive integers c0,c1,..., "
                                         "got \"%s\"",
                                         optarg);
                d++;
                p = *end ? end + 1 : end;
            }
            break;
        }
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
    /* a failure in the middle of the workflow leaves peers behind: no MPI_Finalize then, as in
     * xfer-synth; the launcher ends the job */
    /* HDF5 1.10 closes its files again at MPI_Finalize and at exit; a file whose close failed (a
     * full disk) crashes it there (H5F__close_cb). After an abort the output is settled and the
     * stream drained: leave without either. */
    if (aborted) {
        fflush(NULL);
        _exit(rc);
    }
    if (finalized_ok)
        MPI_Finalize();
    return rc;
}
