/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-h5stream's parts (xfer-h5stream.c: the modes; h5stream_src.c: the workflow names of a
 * file's datasets and the producer's view of the file). */
#ifndef XFER_H5STREAM_H
#define XFER_H5STREAM_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include <xfer/adapter.h>
#include <xfer/xfer.h>

#define META_NAME "xfer-meta"
#define MAX_SEL   256

extern int wrank; /* the rank that speaks for its component: 0 */

#define SAY(...)                                                                                   \
    do {                                                                                           \
        if (wrank == 0) {                                                                          \
            fprintf(stderr, "xfer-h5stream: " __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                                   \
            fflush(stderr);                                                                        \
        }                                                                                          \
    } while (0)

typedef struct src {
    const xfer_adapter_ops_t *ops;
    void *h;
    int nvars, ngroups;
    const xfer_adapter_var_t *vars, *groups;
    char **names; /* workflow names of vars */
    int nsel;
    int sel[MAX_SEL]; /* selected vars, in order */
    /* send: the workflow file's record of each selected record dataset, the layout it is read
     * into (the file's members matched by name); NULL otherwise */
    const xfer_record_t *as[MAX_SEL];
    uint8_t *table;
    size_t table_len;
} src_t;

/* Free @p n names and their array (NULL allowed). */
void free_names(int n, char **names);
/* Open @p path on every rank of @p comm (collective): its variables, groups and their workflow
 * names; the skipped objects are reported. 0, or -1 (said). */
int src_open(src_t *s, const char *path, MPI_Comm comm);
void src_close(src_t *s);
/* Select the datasets of a comma-separated list (HDF5 paths, with or without the leading '/',
 * or workflow names); NULL selects every supported dataset. 0, or -1 (said). */
int src_select(src_t *s, const char *list, const char *path);
/* The in-band table: the file's groups, then the selected datasets. 0, or -1 (said). */
int src_table(src_t *s);

#endif
