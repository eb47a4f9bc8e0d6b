/* SPDX-License-Identifier: BSD-3-Clause */
/* The file transport's step files, read (file.h): the step's identity, its attributes, and
 * this rank's selections of each dataset (a joined one's rows and counts, a variable shape, a
 * record's compound checked against the declaration). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfer/adapter.h>

#include "file.h"

/* The encoded attributes of group @p g into the channel's buffer (the adapter's text has no NUL:
 * a string gets one back). */
static xfer_status_t encode_attrs(xfer_file_t *f, const xfer_adapter_var_t *g)
{
    int i;
    f->attrs_len = 0;
    for (i = 0; g && i < g->nattrs; i++) {
        const xfer_adapter_attr_t *t = &g->attrs[i];
        xfer_ch_attr_t a;
        char *s = NULL;
        xfer_status_t st;
        memset(&a, 0, sizeof(a));
        a.name = t->name;
        if (t->is_text) {
            if (!(s = xfer_calloc(1, t->count + 1)))
                return XFER_ERR(XFER_ERR_NO_MEMORY, "attributes");
            memcpy(s, t->data, t->count);
            a.is_string = 1;
            a.type = XFER_TYPE_INT8;
            a.count = a.bytes = t->count + 1;
            a.values = s;
        } else {
            a.type = t->type;
            a.count = t->count;
            a.bytes = t->count * xfer_type_size(t->type);
            a.values = t->data;
        }
        st = xfer_ch_attr_append(&f->attrs, &f->attrs_len, &f->attrs_cap, &a);
        xfer_free(s);
        if (st != XFER_SUCCESS)
            return st;
    }
    return XFER_SUCCESS;
}

static const xfer_adapter_attr_t *find_attr(const xfer_adapter_var_t *g, const char *name)
{
    int i;
    for (i = 0; g && i < g->nattrs; i++)
        if (!strcmp(g->attrs[i].name, name))
            return &g->attrs[i];
    return NULL;
}

/* The identity of the step's file: of this run (*ok), its step and datasets. */
static xfer_status_t check_meta(xfer_channel_t *ch, const xfer_adapter_var_t *g, uint64_t step,
                                const char *path, int *ok, uint64_t *mask)
{
    const xfer_file_t *f = ch->file;
    const xfer_adapter_attr_t *run = find_attr(g, "run"), *s = find_attr(g, "step"),
                              *m = find_attr(g, "datasets_put");
    *ok = 0;
    if (!run || !run->is_text || !s || s->is_text || s->count != 1 || !m || m->is_text ||
        m->count != 1)
        return XFER_ERR(XFER_ERR_PROTOCOL, "channel %s: %s is not a step file of libxfer's",
                        ch->cfg->name, path);
    if (run->count != strlen(f->peer.run) || memcmp(run->data, f->peer.run, run->count) != 0)
        return XFER_SUCCESS; /* an earlier run's, about to be replaced */
    if (xfer_type_size(s->type) != 8 || xfer_type_size(m->type) != 8 ||
        *(const uint64_t *) s->data != step)
        return XFER_ERR(XFER_ERR_PROTOCOL, "channel %s: %s does not hold step %llu", ch->cfg->name,
                        path, (unsigned long long) step);
    *mask = *(const uint64_t *) m->data;
    *ok = 1;
    return XFER_SUCCESS;
}

/* A joined dataset of step @p step (variable @p v of the file; NULL with @p put 0 when the
 * sender did not put it): its rows, each sending rank's count (the xfer_rows attribute), and
 * this rank's selection of them. */
static xfer_status_t joined_shape(xfer_channel_t *ch, xfer_rt_dset_t *d, uint64_t step,
                                  const char *path, const xfer_adapter_var_t *v, int put)
{
    const xfer_cfg_dataset_t *c = d->cfg;
    uint64_t dims[XFER_MAX_DIMS], sum = 0;
    const xfer_adapter_attr_t *rows = NULL;
    int a, r;

    memcpy(dims, c->dims, (size_t) c->ndims * sizeof(uint64_t));
    dims[0] = 0;
    if (!put) { /* nothing of it this step (xfer_get says so) */
        memset(d->srows, 0, (size_t) ch->nremote * sizeof(uint64_t));
        return xfer_ch_step_selection(ch, d, step, dims);
    }
    for (a = 0; v && a < v->nattrs && !rows; a++)
        if (!strcmp(v->attrs[a].name, JOINED_ROWS))
            rows = &v->attrs[a];
    if (!v || v->type != c->type || v->ndims != c->ndims ||
        memcmp(v->dims + 1, c->dims + 1, (size_t) (c->ndims - 1) * sizeof(uint64_t)) != 0 ||
        !rows || rows->is_text || rows->type != XFER_TYPE_UINT64 ||
        rows->count != (size_t) ch->nremote)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: step %llu: %s: dataset %s is not the joined %s the workflow "
                        "file declares, with %d sending ranks' rows",
                        ch->cfg->name, (unsigned long long) step, path, c->name,
                        xfer_type_name(c->type), ch->nremote);
    for (r = 0; r < ch->nremote; r++)
        sum += ((const uint64_t *) rows->data)[r];
    if (sum != v->dims[0])
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: step %llu: %s: dataset %s holds %llu rows, its senders' "
                        "counts add up to %llu",
                        ch->cfg->name, (unsigned long long) step, path, c->name,
                        (unsigned long long) v->dims[0], (unsigned long long) sum);
    memcpy(d->srows, rows->data, (size_t) ch->nremote * sizeof(uint64_t));
    dims[0] = v->dims[0];
    return xfer_ch_step_selection(ch, d, step, dims);
}

/* A dataset of variable shape of step @p step (variable @p v of the file; NULL when the sender
 * did not put it): its shape, and this rank's selection of it. */
static xfer_status_t variable_shape(xfer_channel_t *ch, xfer_rt_dset_t *d, uint64_t step,
                                    const char *path, const xfer_adapter_var_t *v)
{
    const xfer_cfg_dataset_t *c = d->cfg;
    uint64_t dims[XFER_MAX_DIMS];
    int i;
    if (!v) { /* nothing of it this step (xfer_get says so) */
        memset(dims, 0, sizeof(dims));
        return xfer_ch_step_selection(ch, d, step, dims);
    }
    for (i = 0; i < c->ndims && v->ndims == c->ndims; i++)
        if (!(c->variable >> i & 1u) && v->dims[i] != c->dims[i])
            break;
    if (v->type != c->type || v->ndims != c->ndims || i < c->ndims)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: step %llu: %s: dataset %s is not the %s of variable shape "
                        "the workflow file declares",
                        ch->cfg->name, (unsigned long long) step, path, c->name,
                        xfer_type_name(c->type));
    return xfer_ch_step_selection(ch, d, step, v->dims);
}

/* A record dataset's variable @p v of step @p step: its record (the file's compound made
 * native) must lay its elements out as the workflow file's declaration does, field by field,
 * since the step lands in the receiver's buffer as it is read. */
static xfer_status_t check_record(const xfer_channel_t *ch, uint64_t step, const char *path,
                                  const xfer_cfg_dataset_t *c, const xfer_adapter_var_t *v)
{
    const xfer_record_t *want = c->record, *got = v->record;
    char why[200] = "";
    int i;
    if (!got)
        snprintf(why, sizeof(why), "it holds no record");
    else if (got->size != want->size)
        snprintf(why, sizeof(why), "a record of %zu bytes, the declaration's %zu", got->size,
                 want->size);
    for (i = 0; !why[0] && i < want->nfields && i < got->nfields; i++) {
        const xfer_record_field_t *w = &want->fields[i], *g = &got->fields[i];
        if (strcmp(w->name, g->name) || w->type != g->type || w->count != g->count ||
            w->offset != g->offset)
            snprintf(why, sizeof(why),
                     "field %d is %.64s [%s, %u] at byte %zu, declared %.64s "
                     "[%s, %u] at byte %zu",
                     i, g->name, xfer_type_name(g->type), (unsigned) g->count, g->offset, w->name,
                     xfer_type_name(w->type), (unsigned) w->count, w->offset);
    }
    if (!why[0] && got->nfields != want->nfields)
        snprintf(why, sizeof(why), "%d fields, the declaration's %d (field %d: %.64s)",
                 got->nfields, want->nfields, i,
                 got->nfields > want->nfields ? got->fields[i].name : want->fields[i].name);
    if (!why[0])
        return XFER_SUCCESS;
    return XFER_ERR(XFER_ERR_MISMATCH,
                    "channel %s: step %llu: %s: dataset %s is not the record the workflow file "
                    "declares: %s",
                    ch->cfg->name, (unsigned long long) step, path, c->name, why);
}

xfer_status_t xfer_file_read_step(xfer_channel_t *ch, uint64_t step, int *found)
{
    xfer_file_t *f = ch->file;
    const xfer_adapter_ops_t *ops = f->ops;
    const xfer_adapter_var_t *vars = NULL, *groups = NULL, *meta = NULL, *root = NULL;
    char path[1200], what[1300];
    void *h = NULL;
    xfer_status_t st;
    uint64_t mask = 0;
    int nv = 0, ng = 0, i, j, ok;

    *found = 0;
    xfer_file_step_path(ch, &f->peer, step, path, sizeof(path));
    if (access(path, F_OK) != 0)
        return XFER_SUCCESS;
    snprintf(what, sizeof(what), "step %llu: reading %s", (unsigned long long) step, path);
    if ((st = ops->open_read(path, MPI_COMM_SELF, &h)) != XFER_SUCCESS) {
        if (access(path, F_OK) != 0)
            return XFER_SUCCESS; /* an earlier run's, removed as it was opened */
        return xfer_file_adapter_fail(ch, st, what);
    }
    if ((st = ops->vars(h, &nv, &vars)) != XFER_SUCCESS ||
        (st = ops->groups(h, &ng, &groups)) != XFER_SUCCESS) {
        st = xfer_file_adapter_fail(ch, st, what);
        goto out;
    }
    for (i = 0; i < ng; i++) {
        if (!strcmp(groups[i].name, "/"))
            root = &groups[i];
        else if (!strcmp(groups[i].name, META_GROUP))
            meta = &groups[i];
    }
    if (!meta) {
        st = XFER_ERR(XFER_ERR_PROTOCOL, "channel %s: %s has no %s group: not a step file",
                      ch->cfg->name, path, META_GROUP);
        goto out;
    }
    XFER_CHECK_GOTO(check_meta(ch, meta, step, path, &ok, &mask), st, out);
    if (!ok)
        goto out; /* not this run's: wait for it */
    for (i = 0; i < ch->nds; i++) {
        xfer_rt_dset_t *d = &ch->ds[i];
        const xfer_adapter_var_t *v = NULL;
        uint64_t vol = xfer_ch_volume(d->cfg->ndims, d->sel_count);
        size_t bytes = (size_t) vol * d->esize;
        void *dst;
        if (d->out || (!(mask >> d->bit & 1u) && !d->dyn))
            continue;
        for (j = 0; (mask >> d->bit & 1u) && j < nv && !v; j++)
            if (vars[j].name[0] == '/' && !strcmp(vars[j].name + 1, d->cfg->name))
                v = &vars[j];
        if (v && v->type == XFER_TYPE_RECORD && d->cfg->type == XFER_TYPE_RECORD)
            XFER_CHECK_GOTO(check_record(ch, step, path, d->cfg, v), st, out);
        if (d->dyn) {
            if (d->cfg->joined)
                XFER_CHECK_GOTO(joined_shape(ch, d, step, path, v, mask >> d->bit & 1u), st, out);
            else
                XFER_CHECK_GOTO(variable_shape(ch, d, step, path, v), st, out);
            vol = xfer_ch_volume(d->cfg->ndims, d->sel_count);
            bytes = (size_t) vol * d->esize;
            f->landed[i] = NULL;
            if (!v)
                continue;
        } else if (!v || v->type != d->cfg->type || v->ndims != d->cfg->ndims ||
                   memcmp(v->dims, d->cfg->dims, (size_t) v->ndims * sizeof(uint64_t)) != 0) {
            st = XFER_ERR(XFER_ERR_MISMATCH,
                          "channel %s: step %llu: %s: dataset %s is not the %s the workflow "
                          "file declares",
                          ch->cfg->name, (unsigned long long) step, path, d->cfg->name,
                          xfer_type_name(d->cfg->type));
            goto out;
        }
        if (vol == 0)
            continue;
        if (d->bound && d->next_bound) { /* rebound during the last step: this one lands there */
            d->bound = d->next_bound;
            d->bound_size = d->next_bound_size;
            d->next_bound = NULL;
        }
        if (d->bound && (d->bound_size >= bytes || !d->dyn)) {
            if (d->bound_size < bytes) {
                st = XFER_ERR(XFER_ERR_INVALID_ARG,
                              "channel %s: dataset %s: step %llu: the buffer bound on rank %d "
                              "holds %zu bytes, the rank's selection needs %zu",
                              ch->cfg->name, d->cfg->name, (unsigned long long) step, ch->me,
                              d->bound_size, bytes);
                goto out;
            }
            dst = d->bound;
        } else { /* (a joined step larger than the bound buffer lands here: xfer_get copies) */
            if (f->sel_cap[i] < bytes) {
                void *nb = xfer_realloc_array(f->sel[i], bytes, 1);
                if (!nb) {
                    st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: dataset %s: %zu bytes",
                                  ch->cfg->name, d->cfg->name, bytes);
                    goto out;
                }
                f->sel[i] = nb;
                f->sel_cap[i] = bytes;
            }
            dst = f->sel[i];
        }
        f->landed[i] = dst;
        if ((st = ops->read(h, (int) (v - vars), d->sel_start, d->sel_count, dst)) !=
            XFER_SUCCESS) {
            st = xfer_file_adapter_fail(ch, st, what);
            goto out;
        }
        ch->stats.bytes_received += bytes;
        ch->stats.wire_bytes_received += bytes;
    }
    XFER_CHECK_GOTO(encode_attrs(f, root), st, out);
    f->rmask = mask;
    *found = 1;
out:
    if (h) {
        xfer_status_t st2 = ops->close_read(&h);
        if (st == XFER_SUCCESS && st2 != XFER_SUCCESS)
            st = xfer_file_adapter_fail(ch, st2, what);
    }
    return st;
}
