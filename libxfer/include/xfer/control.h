/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The control plane's messages and client (docs/control-protocol.md).
 *
 * The workflow's daemon, xferd, serves a ZeroMQ ROUTER socket; clients (the components' leader
 * ranks, xfer-run, xferctl) use DEALER sockets. Every message is one ZeroMQ frame holding one
 * MessagePack map (msgpack-c encodes and decodes it). A message is a bounded set of named fields
 * (string, integer, float, boolean, or a list of nested messages) with "v" (protocol version)
 * and "op" (what it is) always present.
 *
 * Nothing here needs MPI. The decoder is the daemon's first line of defence: it accepts at most
 * XFER_CTL_MAX_MSG bytes, XFER_CTL_MAX_FIELDS fields per map, strings of at most
 * XFER_CTL_MAX_STR bytes, lists of at most XFER_CTL_MAX_ITEMS entries, nesting depth 2, and
 * reports what it refused; xfer_ctl_validate() then checks an operation's required fields.
 */
#ifndef XFER_CONTROL_H
#define XFER_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include <xfer/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XFER_CTL_PROTOCOL   1       /**< protocol version carried in "v" */
#define XFER_CTL_MAX_MSG    65536   /**< bytes of one encoded request or notice */
#define XFER_CTL_MAX_REPLY  4194304 /**< bytes of one encoded reply (status lists) */
#define XFER_CTL_MAX_STR    1024    /**< bytes of one string (an MPI port name fits) */
#define XFER_CTL_MAX_KEY    32      /**< bytes of one field name */
#define XFER_CTL_MAX_FIELDS 32      /**< fields of one map */
#define XFER_CTL_MAX_ITEMS  8192    /**< entries of one list */
#define XFER_CTL_TOKEN_MIN  16      /**< shortest accepted workflow token */

/** Kind of a field's value. */
typedef enum xfer_ctl_type {
    XFER_CTL_NONE = 0, /**< no such field */
    XFER_CTL_INT,      /**< signed 64-bit integer */
    XFER_CTL_DBL,      /**< double */
    XFER_CTL_BOOL,
    XFER_CTL_STR, /**< UTF-8 or binary-safe text without NUL */
    XFER_CTL_LIST /**< a list of nested messages (maps) */
} xfer_ctl_type_t;

/** One message: an ordered set of distinct named fields. */
typedef struct xfer_ctl_msg xfer_ctl_msg_t;

/** New message with "v" = XFER_CTL_PROTOCOL and "op" = @p op (NULL: an item of a list). */
XFER_PUBLIC xfer_status_t xfer_ctl_msg_new(const char *op, xfer_ctl_msg_t **m);
XFER_PUBLIC void xfer_ctl_msg_free(xfer_ctl_msg_t **m);

/** Set a field (replacing one of the same name). Keys and strings are bounded as above. */
XFER_PUBLIC xfer_status_t xfer_ctl_set_str(xfer_ctl_msg_t *m, const char *key, const char *v);
XFER_PUBLIC xfer_status_t xfer_ctl_set_int(xfer_ctl_msg_t *m, const char *key, int64_t v);
XFER_PUBLIC xfer_status_t xfer_ctl_set_dbl(xfer_ctl_msg_t *m, const char *key, double v);
XFER_PUBLIC xfer_status_t xfer_ctl_set_bool(xfer_ctl_msg_t *m, const char *key, int v);
/** Append a new empty item to list field @p key (created when absent); *@p item belongs to @p m. */
XFER_PUBLIC xfer_status_t xfer_ctl_add_item(xfer_ctl_msg_t *m, const char *key,
                                            xfer_ctl_msg_t **item);

/** "op" of the message ("" for list items). */
XFER_PUBLIC const char *xfer_ctl_op(const xfer_ctl_msg_t *m);
/** Type of field @p key (XFER_CTL_NONE when absent). */
XFER_PUBLIC xfer_ctl_type_t xfer_ctl_type(const xfer_ctl_msg_t *m, const char *key);
/** Field accessors: return @p dflt (NULL for strings) when the field is absent or of another
 * type. Integers read as doubles convert; nothing else converts. */
XFER_PUBLIC const char *xfer_ctl_str(const xfer_ctl_msg_t *m, const char *key, const char *dflt);
XFER_PUBLIC int64_t xfer_ctl_int(const xfer_ctl_msg_t *m, const char *key, int64_t dflt);
XFER_PUBLIC double xfer_ctl_dbl(const xfer_ctl_msg_t *m, const char *key, double dflt);
XFER_PUBLIC int xfer_ctl_bool(const xfer_ctl_msg_t *m, const char *key, int dflt);
/** Entries of list field @p key (0 when absent) and entry @p i (NULL when out of range). */
XFER_PUBLIC int xfer_ctl_nitems(const xfer_ctl_msg_t *m, const char *key);
XFER_PUBLIC const xfer_ctl_msg_t *xfer_ctl_item(const xfer_ctl_msg_t *m, const char *key, int i);

/** Encode @p m into a malloc'ed buffer (release with free()). XFER_ERR_TOO_LARGE past @p max
 * bytes. */
XFER_PUBLIC xfer_status_t xfer_ctl_encode(const xfer_ctl_msg_t *m, size_t max, void **buf,
                                          size_t *len);
/** Decode @p len bytes of untrusted input (at most @p max). Any deviation from the limits
 * above, a non-map top level, a duplicate or non-string key, a missing or non-integer "v", a
 * missing or non-string "op", trailing bytes: XFER_ERR_PROTOCOL with a message that says which.
 * Unsupported versions: XFER_ERR_PROTOCOL naming both versions, and *@p m is still set (the
 * daemon answers it with err "version"): free it; on every other failure *@p m is NULL. */
XFER_PUBLIC xfer_status_t xfer_ctl_decode(const void *buf, size_t len, size_t max,
                                          xfer_ctl_msg_t **m);

/** Check a decoded message against its operation's schema (docs/control-protocol.md): known
 * "op", required fields present with the right types, values in range (steps >= 0 ...).
 * XFER_ERR_PROTOCOL naming the operation and the field. */
XFER_PUBLIC xfer_status_t xfer_ctl_validate(const xfer_ctl_msg_t *m);

/** Text form for logs and `xferctl status --json`: a JSON object (strings escaped). Returns
 * malloc'ed text (NULL on no memory). */
XFER_PUBLIC char *xfer_ctl_to_json(const xfer_ctl_msg_t *m);

/* ---- the client -------------------------------------------------------------------------- */

/** A connection to xferd: one DEALER socket. Not thread-safe: one thread uses one client. */
typedef struct xfer_ctl xfer_ctl_t;

typedef struct xfer_ctl_opts {
    const char *endpoint;   /**< "tcp://127.0.0.1:5757", "ipc:///run/dir/xferd.sock" */
    const char *workflow;   /**< workflow name, sent as "wf" on every request */
    const char *token;      /**< the workflow token, sent as "tok" on every request */
    const char *server_key; /**< CURVE: the daemon's public key (Z85, 40 chars); NULL: none */
} xfer_ctl_opts_t;

/** Connect (ZeroMQ connects lazily: nothing is waited for here). */
XFER_PUBLIC xfer_status_t xfer_ctl_connect(const xfer_ctl_opts_t *o, xfer_ctl_t **c);
XFER_PUBLIC void xfer_ctl_close(xfer_ctl_t **c);

/**
 * Send request @p req (its "id", "wf" and "tok" are set here) and wait up to @p timeout_ms for
 * the reply with the same "id"; notices that arrive meanwhile are queued for xfer_ctl_recv().
 * An error reply ("ok": false) returns the status its "err" names with its "msg" as the last
 * error, and still hands the reply over. No reply in time: XFER_ERR_TIMEOUT naming the
 * endpoint. *@p reply may be NULL.
 */
XFER_PUBLIC xfer_status_t xfer_ctl_request(xfer_ctl_t *c, xfer_ctl_msg_t *req, int timeout_ms,
                                           xfer_ctl_msg_t **reply);
/** Send without waiting for the reply (it is dropped when it comes). */
XFER_PUBLIC xfer_status_t xfer_ctl_send(xfer_ctl_t *c, xfer_ctl_msg_t *req);
/** Next notice (a message the daemon sent unasked), waiting up to @p timeout_ms (0: poll).
 * XFER_ERR_TIMEOUT when none came; *@p notice NULL then. Replies are discarded. */
XFER_PUBLIC xfer_status_t xfer_ctl_recv(xfer_ctl_t *c, int timeout_ms, xfer_ctl_msg_t **notice);
/** When the daemon was last heard from on @p c (any message: replies, dropped ones included,
 * and notices), in ms of CLOCK_MONOTONIC; 0 before the first. Not thread safe: ask from the
 * thread that uses @p c. */
XFER_PUBLIC xfer_status_t xfer_ctl_last_heard(const xfer_ctl_t *c, double *mono_ms);
/** The socket's file descriptor for poll(2) (ZMQ_FD semantics: edge-triggered, check with
 * xfer_ctl_recv(c, 0, ...)). */
XFER_PUBLIC int xfer_ctl_fd(xfer_ctl_t *c);

/**
 * Read a token file: refused (XFER_ERR_DENIED) when group or others may read it, empty, longer
 * than XFER_CTL_MAX_STR or shorter than XFER_CTL_TOKEN_MIN; a trailing newline is dropped.
 * *@p token is malloc'ed.
 */
XFER_PUBLIC xfer_status_t xfer_ctl_read_token(const char *path, char **token);
/** Fill @p out (at least 2 * @p nbytes + 1 bytes) with a random token from getrandom(2). */
XFER_PUBLIC xfer_status_t xfer_ctl_make_token(char *out, size_t nbytes);

/** Map an error code name of a reply ("denied", "protocol", ...) to a status, and back. */
XFER_PUBLIC xfer_status_t xfer_ctl_err_status(const char *err);
XFER_PUBLIC const char *xfer_ctl_err_name(xfer_status_t st);

#ifdef __cplusplus
}
#endif

#endif /* XFER_CONTROL_H */
