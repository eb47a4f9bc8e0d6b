/* SPDX-License-Identifier: BSD-3-Clause */
/* The control protocol's vocabulary (docs/control-protocol.md): one table of the operations
 * with their required fields, types and integer ranges, which xfer_ctl_validate() checks a
 * decoded message against, and the table of the error codes a reply's "err" carries. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include <xfer/control.h>

#include "../core/core.h"
#include "proto_int.h"

/* ---- validation --------------------------------------------------------------------------- */

enum { OP_REQUEST, OP_REPLY, OP_NOTICE };

typedef struct fspec {
    const char *key;
    xfer_ctl_type_t type;
    int64_t min, max;
} fspec_t;

#define ANY_INT INT64_MIN, INT64_MAX
#define STR_    XFER_CTL_STR, 0, 0
#define SESSION                                                                                    \
    {                                                                                              \
        "session", XFER_CTL_INT, 1, INT64_MAX                                                      \
    }
#define CHANNEL                                                                                    \
    {                                                                                              \
        "channel", STR_                                                                            \
    }
#define SIDE                                                                                       \
    {                                                                                              \
        "side", XFER_CTL_INT, 0, 1                                                                 \
    }

typedef struct opspec {
    const char *op;
    int kind;
    fspec_t f[6];
} opspec_t;

static const opspec_t op_table[] = {
    {"register",
     OP_REQUEST,
     {{"component", STR_},
      {"nprocs", XFER_CTL_INT, 1, INT64_MAX},
      {"pid", XFER_CTL_INT, ANY_INT},
      {"host", STR_}}},
    {"heartbeat", OP_REQUEST, {SESSION}},
    {"beat",
     OP_REQUEST,
     {SESSION,
      {"rank", XFER_CTL_INT, 1, INT64_MAX},
      {"pid", XFER_CTL_INT, ANY_INT},
      {"host", STR_}}},
    {"error", OP_REQUEST, {SESSION, {"rank", XFER_CTL_INT, 0, INT64_MAX}, {"text", STR_}}},
    {"publish", OP_REQUEST, {SESSION, CHANNEL, {"port", STR_}}},
    {"attach", OP_REQUEST, {SESSION, CHANNEL, {"port", STR_}}},
    {"lookup", OP_REQUEST, {SESSION, CHANNEL, {"wait_ms", XFER_CTL_INT, 0, INT64_MAX}}},
    {"step",
     OP_REQUEST,
     {SESSION,
      CHANNEL,
      SIDE,
      {"step", XFER_CTL_INT, 0, INT64_MAX},
      {"bytes", XFER_CTL_INT, 0, INT64_MAX}}},
    {"ack", OP_REQUEST, {SESSION, CHANNEL, SIDE, {"released", XFER_CTL_INT, 0, INT64_MAX}}},
    {"flow",
     OP_REQUEST,
     {SESSION,
      CHANNEL,
      SIDE,
      {"app_step", XFER_CTL_INT, -1, INT64_MAX},
      {"dropped", XFER_CTL_INT, 0, INT64_MAX},
      {"skipped", XFER_CTL_INT, 0, INT64_MAX}}},
    {"bye", OP_REQUEST, {SESSION}},
    {"exited", OP_REQUEST, {{"component", STR_}, {"code", XFER_CTL_INT, ANY_INT}}},
    {"fail", OP_REQUEST, {SESSION, {"reason", STR_}}},
    {"status", OP_REQUEST, {{NULL, XFER_CTL_NONE, 0, 0}}},
    {"stop", OP_REQUEST, {{NULL, XFER_CTL_NONE, 0, 0}}},
    {"reply", OP_REPLY, {{"id", XFER_CTL_INT, 0, INT64_MAX}, {"ok", XFER_CTL_BOOL, 0, 0}}},
    {"failure", OP_NOTICE, {{"component", STR_}, {"reason", STR_}}},
    {"shutdown", OP_NOTICE, {{"reason", STR_}}},
    {"attaching",
     OP_NOTICE,
     {CHANNEL, {"component", STR_}, {"session", XFER_CTL_INT, 1, INT64_MAX}, {"port", STR_}}},
};

static const fspec_t request_fields[] = {
    {"id", XFER_CTL_INT, 1, INT64_MAX}, {"wf", STR_}, {"tok", STR_}};
static const fspec_t error_fields[] = {{"err", STR_}, {"msg", STR_}};

static xfer_status_t check_field(const xfer_ctl_msg_t *m, const char *op, const fspec_t *fs)
{
    const ctl_field_t *f = ctl_find(m, fs->key);

    if (!f)
        return XFER_ERR(XFER_ERR_PROTOCOL, "%s: field \"%s\" is missing", op, fs->key);
    if (f->type != fs->type)
        return XFER_ERR(XFER_ERR_PROTOCOL, "%s: field \"%s\" is %s, expected %s", op, fs->key,
                        ctl_type_name(f->type), ctl_type_name(fs->type));
    if (fs->type == XFER_CTL_INT && (f->u.i < fs->min || f->u.i > fs->max)) {
        if (fs->max == INT64_MAX)
            return XFER_ERR(XFER_ERR_PROTOCOL,
                            "%s: field \"%s\" is %" PRId64 ", expected an integer >= %" PRId64, op,
                            fs->key, f->u.i, fs->min);
        return XFER_ERR(XFER_ERR_PROTOCOL,
                        "%s: field \"%s\" is %" PRId64 ", expected %" PRId64 " to %" PRId64, op,
                        fs->key, f->u.i, fs->min, fs->max);
    }
    return XFER_SUCCESS;
}

XFER_PUBLIC xfer_status_t xfer_ctl_validate(const xfer_ctl_msg_t *m)
{
    xfer_status_t st = XFER_SUCCESS;
    const opspec_t *spec = NULL;
    const char *op;
    char opname[3 * 40 + 8];

    if (!m)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "message is NULL");
    if (m->item)
        return XFER_ERR(XFER_ERR_PROTOCOL, "a list entry is not a message");
    if (xfer_ctl_int(m, "v", -1) != XFER_CTL_PROTOCOL)
        return XFER_ERR(XFER_ERR_PROTOCOL, "\"v\" is not %d", XFER_CTL_PROTOCOL);
    op = xfer_ctl_op(m);
    for (size_t i = 0; i < sizeof(op_table) / sizeof(op_table[0]); i++)
        if (strcmp(op_table[i].op, op) == 0)
            spec = &op_table[i];
    if (!spec) {
        ctl_safe_text(opname, sizeof(opname), op, strlen(op));
        return XFER_ERR(XFER_ERR_PROTOCOL, "unknown op \"%s\"", opname);
    }
    if (spec->kind == OP_REQUEST)
        for (size_t i = 0; i < sizeof(request_fields) / sizeof(request_fields[0]); i++)
            XFER_CHECK_GOTO(check_field(m, op, &request_fields[i]), st, out);
    for (int i = 0; i < 6 && spec->f[i].key; i++)
        XFER_CHECK_GOTO(check_field(m, op, &spec->f[i]), st, out);
    if (spec->kind == OP_REPLY && !xfer_ctl_bool(m, "ok", 0))
        for (size_t i = 0; i < sizeof(error_fields) / sizeof(error_fields[0]); i++)
            XFER_CHECK_GOTO(check_field(m, op, &error_fields[i]), st, out);
out:
    return st;
}

/* ---- error codes -------------------------------------------------------------------------- */

static const struct {
    const char *name;
    xfer_status_t st;
} err_table[] = {
    {"protocol", XFER_ERR_PROTOCOL},  {"version", XFER_ERR_PROTOCOL}, {"denied", XFER_ERR_DENIED},
    {"unknown", XFER_ERR_NOT_FOUND},  {"order", XFER_ERR_PROTOCOL},   {"exists", XFER_ERR_STATE},
    {"failed", XFER_ERR_PEER_FAILED}, {"timeout", XFER_ERR_TIMEOUT},  {"busy", XFER_ERR_STATE},
    {"internal", XFER_ERR_INTERNAL},
};

/* An unknown code is the peer speaking something this side does not: a protocol error. */
XFER_PUBLIC xfer_status_t xfer_ctl_err_status(const char *err)
{
    for (size_t i = 0; err && i < sizeof(err_table) / sizeof(err_table[0]); i++)
        if (strcmp(err_table[i].name, err) == 0)
            return err_table[i].st;
    return XFER_ERR_PROTOCOL;
}

/* The first code of the table mapping to @p st; argument and size errors are the protocol's,
 * anything else is "internal". */
XFER_PUBLIC const char *xfer_ctl_err_name(xfer_status_t st)
{
    if (st == XFER_ERR_INVALID_ARG || st == XFER_ERR_TOO_LARGE)
        return "protocol";
    for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
        if (err_table[i].st == st)
            return err_table[i].name;
    return "internal";
}
