/* SPDX-License-Identifier: BSD-3-Clause */
/* The control messages' internal form (docs/control-protocol.md), shared by the files of the
 * codec, one per stage:
 *   proto_msg.c     the message model: building and reading fields;
 *   proto_scan.c    decoding, pass 1: the bounded scan of the raw bytes;
 *   proto_codec.c   encoding, and decoding: the scan, msgpack-c's parse, pass 3 (conversion);
 *   proto_schema.c  the per-operation schemas (xfer_ctl_validate) and the error codes;
 *   proto_json.c    the JSON form (logs, xferctl);
 *   proto_token.c   workflow tokens.
 * Nothing here leaves the library (hidden visibility); the public calls are in control.h. */
#ifndef XFER_PROTO_INT_H
#define XFER_PROTO_INT_H

#include <stddef.h>
#include <stdint.h>

#include <xfer/control.h>

typedef struct ctl_list {
    xfer_ctl_msg_t **v;
    int n, cap;
} ctl_list_t;

typedef struct ctl_field {
    char key[XFER_CTL_MAX_KEY + 1];
    xfer_ctl_type_t type;
    union {
        int64_t i;
        double d;
        int b;
        char *s;
        ctl_list_t l;
    } u;
} ctl_field_t;

struct xfer_ctl_msg {
    int item; /* an entry of a list: no "v"/"op", scalars only */
    int n, cap;
    ctl_field_t *f;
};

/* ---- proto_msg.c -------------------------------------------------------------------------- */

/* The field called @p key of @p m, NULL when absent (or @p m or @p key is NULL). */
ctl_field_t *ctl_find(const xfer_ctl_msg_t *m, const char *key);

/* Free @p m, its strings and its lists' entries; NULL is a no-op. */
void ctl_msg_destroy(xfer_ctl_msg_t *m);

/* "an integer", "a string", ... for messages; "absent" for XFER_CTL_NONE. */
const char *ctl_type_name(xfer_ctl_type_t t);

/* Printable, bounded rendering of untrusted bytes for error messages. */
void ctl_safe_text(char *out, size_t cap, const char *s, size_t len);

/* ---- proto_scan.c ------------------------------------------------------------------------- */

/* Check the @p len bytes at @p buf against the limits of control.h before anything is
 * allocated: one map, field types, counts, lengths, nesting, no trailing bytes. */
xfer_status_t ctl_scan(const void *buf, size_t len);

#endif /* XFER_PROTO_INT_H */
