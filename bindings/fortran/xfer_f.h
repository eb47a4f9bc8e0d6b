/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran binding's C side (xfer_f.c, xfer_f_attr.c): what its files share. */
#ifndef XFER_F_H
#define XFER_F_H

#include <ISO_Fortran_binding.h>
#include <stddef.h>

#include <xfer/xfer.h>

#include <mpi.h>
#include <stdint.h>

/* Prototypes: these are called from Fortran only (bind(C) interfaces in xfer.f90). */
int xfer_f_init(const char *config, const char *component, int has_comm, MPI_Fint comm, void **x);
int xfer_f_finalize(void **x);
int xfer_f_comm(void *x, MPI_Fint *comm);
int xfer_f_channel_open(void *x, const char *name, void **ch, int *index);
int xfer_f_channel_close(void **ch);
int xfer_f_step_begin(void *ch, int timeout_ms, int *status);
int xfer_f_step_end(void *ch);
int xfer_f_put(void *x, void *ch, int index, const char *name, const CFI_cdesc_t *a,
               const int64_t *start, int nstart, const int64_t *offsets, int noffsets,
               const int64_t *dims, int ndims);
int xfer_f_get(void *x, void *ch, int index, const char *name, CFI_cdesc_t *a, const int64_t *start,
               const int64_t *count, int nbox, const int64_t *offsets, int noffsets);
int xfer_f_get_shape(void *x, void *ch, int index, const char *name, int64_t *dims, int64_t *start,
                     int64_t *count, int n, int *ndims, int64_t *step);
int xfer_f_get_rows(void *ch, const char *name, int64_t *rows, int n, int *nsenders);
int xfer_f_record(void *x, int index, const char *name, int64_t *offsets, int n, int *nfields,
                  int64_t *size);
size_t xfer_f_offset(const void *record, const void *field);
int xfer_f_select(void *ch, const char *name, const int64_t *start, const int64_t *count, int n);
int xfer_f_selection(void *x, void *ch, int index, const char *name, int64_t *start, int64_t *count,
                     int n, int *ndims);
int xfer_f_put_attr(void *ch, const char *name, const CFI_cdesc_t *a, int is_unsigned);
int xfer_f_put_attr_string(void *ch, const char *name, const char *value);
int xfer_f_get_attr(void *ch, const char *name, CFI_cdesc_t *a);
int xfer_f_get_attr_string(void *ch, const char *name, char *buf, size_t len);
int xfer_f_ndatasets(void *x, int index, int *n);
int xfer_f_dataset(void *x, int index, int i, char *name, size_t namelen, int *type, int *ndims,
                   int64_t *dims, int *sent);
int xfer_f_decompose(int mode, int ndims, const int64_t *dims, int nranks, int rank, int64_t *start,
                     int64_t *count);
void xfer_f_error_message(char *buf, size_t len);
int xfer_f_set_error(int st, const char *msg);
void xfer_f_status_name(int st, char *buf, size_t len);

/* A new call: no words of an earlier failure. */
void xfer_f_clear(void);
/* Status @p st with the words of @p fmt kept for xfer_f_error_message. */
int xfer_f_fail(int st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A libxfer status: its words kept for xfer_f_error_message. */
int xfer_f_lib(xfer_status_t st);
/* A C string into a blank-padded Fortran string of @p len characters. */
void xfer_f_to_fstr(char *buf, size_t len, const char *s);
/* The Fortran kind of array @p a, in words. */
const char *xfer_f_type_word(const CFI_cdesc_t *a);
/* Copy between a (non-contiguous) array and a contiguous buffer in Fortran element order. */
void xfer_f_strided_copy(const CFI_cdesc_t *a, char *buf, int to_buf);

#endif /* XFER_F_H */
