/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer._core, the CPython extension behind the `xfer` package (docs/bindings.md): what its
 * files share. module.c holds the module and the exceptions; mpi.c MPI and communicators;
 * workflow.c, put.c and get.c the Workflow and Channel types (channel.h); records.c record dtypes;
 * coll.c the collectives. The package's Python layer (xfer/__init__.py) adds steps as context
 * managers, iteration and attribute mappings. */
#ifndef XFER_PY_CORE_H
#define XFER_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API  NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL xfer_py_ARRAY_API
#ifndef XFER_PY_MODULE_C
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>
#ifndef PyDataType_ELSIZE /* numpy 2 reads a dtype's item size through this macro */
#define PyDataType_ELSIZE(d) ((npy_intp) (d)->elsize)
#endif

#include <mpi.h>
#include <xfer/xfer.h>

/* Raise the exception class of @p st (xfer.XferError or a subclass) with libxfer's message of
 * the failed call, prefixed by @p what when it is not NULL; returns NULL. */
PyObject *xpy_raise(xfer_status_t st, const char *what);
/* Raise xfer.InvalidArgumentError (a ValueError) with a formatted message; returns NULL. */
PyObject *xpy_invalid(const char *fmt, ...);
/* Raise the exception class of @p st with a formatted message; returns NULL. */
PyObject *xpy_error(xfer_status_t st, const char *fmt, ...);

/* The numpy type number of a libxfer element type (-1: none), and back (0: none). */
int xpy_npy_type(xfer_type_t t);
xfer_type_t xpy_xfer_type(int npy_type);

/* records.c: record datasets as numpy structured dtypes. The aligned dtype of record @p r (new
 * reference, NULL with an exception). */
PyArray_Descr *xpy_record_dtype(const xfer_record_t *r);
/* Does dtype @p got have @p want's fields (types, counts, offsets) and size? 1: yes, and @p out
 * (want->nfields entries) holds the layout read from @p got, for xfer_dataset_desc_t.record;
 * 0: no, and @p why says how, naming the first field that differs; -1: a Python error. */
int xpy_record_match(PyArray_Descr *got, const xfer_record_t *want, xfer_record_field_t *out,
                     char *why, size_t len);
/* "{id: int64, pos: [float64, 3]}": the record as the workflow file writes it. */
void xpy_record_str(const xfer_record_t *r, char *buf, size_t len);

/* A communicator argument: an xfer.Comm, an mpi4py communicator or a Fortran handle (int). */
int xpy_comm_converter(PyObject *o, void *out /* MPI_Comm * */);

/* MPI is usable: initialised and not finalised (else an exception is set and 0 returned). */
int xpy_mpi_ready(void);

/* The interrupt check libxfer calls in its resumable waits (xfer_set_interrupt): Python's
 * signal handlers run there, and a KeyboardInterrupt ends the wait. */
int xpy_interrupt_check(void *arg);

/* A Python integer sequence of @p n entries into @p out (uint64); 0 and an exception on error.
 * @p what names the argument in the message. */
int xpy_u64_seq(PyObject *seq, int n, uint64_t *out, const char *what);

extern PyTypeObject XpyWorkflow_Type;
extern PyTypeObject XpyChannel_Type;

int xpy_workflow_types_ready(PyObject *module);
/* errors.c: XferError and its subclasses into @p module */
int xpy_exceptions_add(PyObject *module);
/* convert.c: the validated workflow file as plain Python data */
PyObject *xpy_config_dict(const xfer_config_t *cfg);
int xpy_mpi_add(PyObject *module);
int xpy_coll_add(PyObject *module);
extern PyMethodDef xpy_mpi_methods[];
extern PyMethodDef xpy_coll_methods[];

#endif
