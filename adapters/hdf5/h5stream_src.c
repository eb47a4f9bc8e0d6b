/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-h5stream (xfer-h5stream.c): the workflow names of an HDF5 file's datasets and the
 * producer's view of the file (config and send): open it, select datasets, pack the in-band
 * table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/adapter.h>

#include "adapter_common.h"
#include "h5stream.h"

/* ---- names --------------------------------------------------------------------------------- */

static void base_name(const char *path, char *out, size_t cap)
{
    size_t i, k = 0;
    for (i = path[0] == '/' ? 1 : 0; path[i] && k + 1 < cap; i++) {
        const char c = path[i];
        if (c == '/')
            out[k++] = '.';
        else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_')
            out[k++] = c;
        else
            out[k++] = '_';
    }
    if (k == 0)
        out[k++] = '_';
    out[k] = '\0';
}

/* Workflow names of @p n datasets (caller frees the array and its strings). */
static char **map_names(int n, const xfer_adapter_var_t *vars)
{
    char **names = calloc((size_t) n + 1, sizeof(char *));
    int i, j, k;
    if (!names)
        return NULL;
    for (i = 0; i < n; i++) {
        char base[XFER_ADAPTER_MAX_NAME], cand[XFER_ADAPTER_MAX_NAME + 16];
        base_name(vars[i].name, base, sizeof(base));
        snprintf(cand, sizeof(cand), "%s", base);
        for (k = 2;; k++) {
            for (j = 0; j < i && strcmp(names[j], cand) != 0; j++)
                ;
            if (j == i)
                break;
            snprintf(cand, sizeof(cand), "%s-%d", base, k);
        }
        if (!(names[i] = strdup(cand))) {
            for (j = 0; j < i; j++)
                free(names[j]);
            free(names);
            return NULL;
        }
    }
    return names;
}

void free_names(int n, char **names)
{
    int i;
    for (i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

/* ---- the producer's view of a file --------------------------------------------------------- */

void src_close(src_t *s)
{
    free_names(s->nvars, s->names);
    free(s->table);
    if (s->h)
        s->ops->close_read(&s->h);
}

int src_open(src_t *s, const char *path, MPI_Comm comm)
{
    xfer_status_t st;
    int n, i;
    const char *const *lines;
    memset(s, 0, sizeof(*s));
    s->ops = xfer_adapter_hdf5();
    st = s->ops->open_read(path, comm, &s->h);
    if (st != XFER_SUCCESS) {
        SAY("%s", xfer_adapter_error());
        return -1;
    }
    s->ops->vars(s->h, &s->nvars, &s->vars);
    s->ops->groups(s->h, &s->ngroups, &s->groups);
    s->ops->skipped(s->h, &n, &lines);
    for (i = 0; i < n; i++)
        SAY("%s: skipped %s", path, lines[i]);
    if (!(s->names = map_names(s->nvars, s->vars))) {
        SAY("out of memory");
        return -1;
    }
    return 0;
}

static int empty_var(const xfer_adapter_var_t *v)
{
    int d;
    for (d = 0; d < v->ndims; d++)
        if (v->dims[d] == 0)
            return 1;
    return 0;
}

/* Select the datasets of a comma-separated list (HDF5 paths, with or without the leading '/',
 * or workflow names); NULL selects every supported dataset. */
int src_select(src_t *s, const char *list, const char *path)
{
    char *copy, *tok, *save = NULL;
    int i, rc = 0;
    s->nsel = 0;
    if (!list) {
        for (i = 0; i < s->nvars && s->nsel < MAX_SEL; i++)
            if (!empty_var(&s->vars[i]))
                s->sel[s->nsel++] = i;
            else
                SAY("%s: skipped %s: an extent of 0 (an empty dataset: a workflow dataset has "
                    "a positive size)",
                    path, s->vars[i].name);
        if (s->nsel == 0) {
            SAY("%s: no dataset of a supported type", path);
            return -1;
        }
        return 0;
    }
    if (!(copy = strdup(list)))
        return -1;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char full[XFER_ADAPTER_MAX_NAME + 1];
        snprintf(full, sizeof(full), "%s%s", tok[0] == '/' ? "" : "/", tok);
        for (i = 0; i < s->nvars; i++)
            if (strcmp(s->vars[i].name, full) == 0 || strcmp(s->names[i], tok) == 0)
                break;
        if (i == s->nvars) {
            const xfer_status_t st = s->ops->lookup(s->h, full);
            SAY("%s (%s)", xfer_adapter_error(),
                st == XFER_ERR_NOT_SUPPORTED ? "unsupported type" : "missing dataset");
            rc = -1;
            break;
        }
        if (empty_var(&s->vars[i])) {
            SAY("%s: %s has an extent of 0 (an empty dataset: a workflow dataset has a positive "
                "size)",
                path, s->vars[i].name);
            rc = -1;
            break;
        }
        if (s->nsel == MAX_SEL) {
            SAY("too many datasets selected (at most %d)", MAX_SEL);
            rc = -1;
            break;
        }
        s->sel[s->nsel++] = i;
    }
    free(copy);
    if (rc == 0 && s->nsel == 0) {
        SAY("--datasets: empty selection");
        rc = -1;
    }
    return rc;
}

/* The in-band table: the file's groups, then the selected datasets. */
int src_table(src_t *s)
{
    xfer_adapter_var_t *objs = calloc((size_t) (s->ngroups + s->nsel) + 1, sizeof(*objs));
    int i;
    if (!objs)
        return -1;
    for (i = 0; i < s->ngroups; i++)
        objs[i] = s->groups[i];
    for (i = 0; i < s->nsel; i++)
        objs[s->ngroups + i] = s->vars[s->sel[i]];
    i = xfer_adapter_table_pack(s->ngroups + s->nsel, objs, &s->table, &s->table_len);
    free(objs);
    if (i != XFER_SUCCESS) {
        SAY("%s", xfer_adapter_error());
        return -1;
    }
    return 0;
}
