/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer._core.Workflow and xfer._core.Channel (docs/bindings.md): what the files of the workflow
 * API share. workflow.c holds both types, the step calls and attributes; put.c a sending rank's
 * put; get.c a receiving rank's get, shapes, selections and bound buffers. */
#ifndef XFER_PY_CHANNEL_H
#define XFER_PY_CHANNEL_H

#include "core.h"

typedef struct {
    PyObject_HEAD xfer_t *x; /* NULL once finalized (or before init) */
    const xfer_config_t *cfg;
    int comp;
} XpyWorkflow;

typedef struct {
    PyObject_HEAD XpyWorkflow *wf;
    xfer_channel_t *ch;
    const xfer_cfg_channel_t *cfg; /* owned by the workflow: valid while wf->x is */
    char name[256];                /* the channel's name, for messages after finalize */
    PyObject *held;                /* list: arrays a bound sender's puts gave in this step */
    PyObject *bound; /* dict: dataset -> [array of this step, array of the next or None] */
    int touched;     /* a step was begun or data put or got: the next bind is for the next step */
    int closed;      /* close() ran (xfer_channel_close): every call but close() raises */
} XpyChannel;

/* The channel is open (not closed) and its workflow not finalized; else an exception and 0. */
int xpy_ch_usable(XpyChannel *self);
/* The dataset @p name of the channel, and whether this component sends it (NULL: an exception
 * naming the channel's datasets). */
const xfer_cfg_dataset_t *xpy_ch_dataset(XpyChannel *self, const char *name, int *sends);
/* The dtype of dataset @p ds: its scalar type's, or its record's aligned one. New reference. */
PyArray_Descr *xpy_ds_dtype(const xfer_cfg_dataset_t *ds);
/* A record dataset: @p got has the declared layout, read into @p layout (its fields in
 * @p fields) when not NULL; else an exception naming the first field that differs. */
int xpy_check_record(XpyChannel *self, const xfer_cfg_dataset_t *ds, PyArray_Descr *got,
                     const char *what, xfer_record_t *layout, xfer_record_field_t *fields);
/* @p arr's dtype is the dataset's, in native byte order: else an exception naming both. */
int xpy_check_dtype(XpyChannel *self, const xfer_cfg_dataset_t *ds, PyArrayObject *arr,
                    const char *what);
/* "(3, 4)": a numpy shape (@p shape) or libxfer's extents (@p u, when @p shape is NULL). */
void xpy_fmt_shape(char *buf, size_t len, int nd, const npy_intp *shape, const uint64_t *u);

/* The Channel methods of put.c and get.c (workflow.c's method table lists them). */
PyObject *xpy_ch_put(XpyChannel *self, PyObject *args, PyObject *kw);
PyObject *xpy_ch_get(XpyChannel *self, PyObject *args, PyObject *kw);
PyObject *xpy_ch_select(XpyChannel *self, PyObject *args, PyObject *kw);
PyObject *xpy_ch_selection(XpyChannel *self, PyObject *args);
PyObject *xpy_ch_get_shape(XpyChannel *self, PyObject *args);
PyObject *xpy_ch_get_rows(XpyChannel *self, PyObject *args);
PyObject *xpy_ch_dtype_of(XpyChannel *self, PyObject *args);
PyObject *xpy_ch_bind(XpyChannel *self, PyObject *args);

#endif
