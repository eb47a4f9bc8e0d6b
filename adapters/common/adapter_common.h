/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Helpers shared by the file adapters (libxfer_adapter.so, which the adapters and the tools
 * link: one copy of the per-thread error text behind xfer_adapter_error()), the ranks'
 * agreement on a status and its text, type and shape helpers, the slab decomposition both sides
 * use, and the attribute table that carries names, shapes and attributes in-band (a uint8
 * dataset, see docs/adapters.md). The header is not installed: the adapters' own API is
 * adapter.h.
 */
#ifndef XFER_ADAPTER_COMMON_H
#define XFER_ADAPTER_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include <xfer/adapter.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Set the text xfer_adapter_error() returns (printf format; truncated at 1 KiB). */
XFER_PUBLIC void xfer_adapter_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Forget the last adapter error of the calling thread. */
XFER_PUBLIC void xfer_adapter_clear_error(void);

/**
 * One status for every rank of @p comm: the lowest of the ranks' @p st (errors are negative),
 * and on every rank the adapter error text of the lowest rank that reported it. Collective over
 * @p comm. An MPI call that fails here gives XFER_ERR_MPI with a text naming it.
 */
XFER_PUBLIC xfer_status_t xfer_adapter_agree(MPI_Comm comm, xfer_status_t st);

/** Elements of a box of @p ndims extents @p count (1 for ndims == 0); 0 on overflow of size_t. */
XFER_PUBLIC size_t xfer_adapter_volume(int ndims, const uint64_t count[]);

/** The layout called @p name: group, stepdim or same. 0, or -1 for another name. */
XFER_PUBLIC int xfer_adapter_layout_parse(const char *name, xfer_adapter_layout_t *layout);

/** The type called @p name ("float64" ...); 0 when there is none. */
XFER_PUBLIC xfer_type_t xfer_adapter_type_from_name(const char *name);

/**
 * Part @p index of @p parts of an extent @p len: a contiguous range of near-equal size (the
 * first len % parts parts are one longer). Both sides of xfer-h5stream split the slowest
 * dimension this way.
 */
XFER_PUBLIC void xfer_adapter_split(uint64_t len, int parts, int index, uint64_t *start,
                                    uint64_t *count);

/** Free what a var's attributes own (not @p v itself); leaves nattrs 0 and attrs NULL. */
XFER_PUBLIC void xfer_adapter_var_clear(xfer_adapter_var_t *v);

/** Deep copy of @p n attributes (NULL for n == 0). XFER_ERR_NO_MEMORY on failure. */
XFER_PUBLIC xfer_status_t xfer_adapter_attrs_copy(int n, const xfer_adapter_attr_t *in,
                                                  xfer_adapter_attr_t **out);

/** Bytes of one element of @p v: its record's size (type XFER_TYPE_RECORD), else its scalar
 *  type's; 0 for an invalid type or a record variable without a record. */
XFER_PUBLIC size_t xfer_adapter_var_esize(const xfer_adapter_var_t *v);

/**
 * Is @p r a record a file can hold: 1 .. XFER_RECORD_MAX_FIELDS fields, each named by a C
 * identifier unique in the record, of a scalar type and a count >= 1, lying inside r->size.
 * 0, or -1 with the first fault in @p why (naming the field).
 */
XFER_PUBLIC int xfer_adapter_record_check(const xfer_record_t *r, char *why, size_t cap);

/** 1 when @p name is a C identifier ([A-Za-z_][A-Za-z0-9_]*), as a record's field names are. */
XFER_PUBLIC int xfer_adapter_is_identifier(const char *name);

/** A record of @p nfields zeroed fields (names NULL), or NULL when out of memory. Caller owns it
 *  and releases it with xfer_adapter_record_free() (which frees the field names too). */
XFER_PUBLIC xfer_record_t *xfer_adapter_record_new(int nfields);

/** Deep copy of @p in (NULL when out of memory). */
XFER_PUBLIC xfer_record_t *xfer_adapter_record_copy(const xfer_record_t *in);

/** Release a record of xfer_adapter_record_new/copy (NULL accepted); *@p r set to NULL. */
XFER_PUBLIC void xfer_adapter_record_free(xfer_record_t **r);

/**
 * Do @p a and @p b lay a record out alike: the same size and the same fields in the same order,
 * each of the same name, type, count and offset. 0, or -1 with the first difference in @p why
 * ("field 2 (q): offset 16 here, 20 there").
 */
XFER_PUBLIC int xfer_adapter_record_diff(const xfer_record_t *a, const xfer_record_t *b, char *why,
                                         size_t cap);

/**
 * Can elements laid out as @p from fill elements laid out as @p to, field by field by name:
 * every field of @p to is a field of @p from with the same type and count (order, offsets and
 * padding may differ; fields of @p from that @p to leaves out are dropped). 0, or -1 with the
 * first field of @p to that has no match in @p why.
 */
XFER_PUBLIC int xfer_adapter_record_fits(const xfer_record_t *from, const xfer_record_t *to,
                                         char *why, size_t cap);

/** Copy @p n elements from @p src (laid out as @p from) to @p dst (as @p to), field by field by
 *  name; the two must fit (xfer_adapter_record_fits). Padding bytes of @p dst are zeroed. */
XFER_PUBLIC void xfer_adapter_record_convert(const xfer_record_t *from, const xfer_record_t *to,
                                             size_t n, const void *src, void *dst);

/** The workflow file's spelling of @p r, "{id: int64, pos: [float64, 3]}", into @p out
 *  (truncated at @p cap, NUL-terminated when cap > 0; NULL with 0 only measures). Returns its
 *  length without the NUL, as snprintf: a result >= @p cap was truncated. */
XFER_PUBLIC size_t xfer_adapter_record_yaml(const xfer_record_t *r, char *out, size_t cap);

/**
 * Serialize a list of objects (groups have ndims 0 and type 0, datasets are typed) into one
 * byte string: "XFA1", then per object its name, type, shape and attributes, little-endian.
 * The encoding is deterministic: the same list gives the same bytes. Caller owns *@p buf.
 */
XFER_PUBLIC xfer_status_t xfer_adapter_table_pack(int n, const xfer_adapter_var_t *objs,
                                                  uint8_t **buf, size_t *len);

/**
 * Parse a table written by xfer_adapter_table_pack. Caller owns *@p objs and releases it with
 * xfer_adapter_table_free(). A malformed table is XFER_ERR_PROTOCOL with an error text.
 */
XFER_PUBLIC xfer_status_t xfer_adapter_table_unpack(const uint8_t *buf, size_t len, int *n,
                                                    xfer_adapter_var_t **objs);

/** Free a list from xfer_adapter_table_unpack (NULL accepted; *@p objs set to NULL). */
XFER_PUBLIC void xfer_adapter_table_free(int n, xfer_adapter_var_t **objs);

#ifdef __cplusplus
}
#endif

#endif /* XFER_ADAPTER_COMMON_H */
