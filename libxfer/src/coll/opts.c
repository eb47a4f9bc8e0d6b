/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective options: the caller's xfer_coll_opts_t (of the size its build declared), checked and
 * resolved against the environment into xfer_resolved_opts_t. */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "../core/core.h"
#include "../select/selector.h"
#include "coll.h"

/* ---- options -------------------------------------------------------------------------------- */

/* The caller's struct ends at least after the fields of the first layout (struct_size ..
 * timeout_ms). More than OPTS_MAX_SIZE bytes is no struct a libxfer build declared: most likely
 * one that was never initialised. */
#define OPTS_MIN_SIZE (offsetof(xfer_coll_opts_t, timeout_ms) + sizeof(int))
#define OPTS_MAX_SIZE ((size_t) 1024)

/* The resolved values are the internal ones (hier.h, exec.h): the public enums map 1:1. */
_Static_assert((int) XFER_HIER_SYNC_FLAGS == XFER_HIER_FLAGS &&
                   (int) XFER_HIER_SYNC_BARRIER == XFER_HIER_BARRIER,
               "xfer_hier_sync_t and hier.h disagree");
_Static_assert((int) XFER_INTRA_ALLGATHER_MPI == XFER_INTRA_MPI &&
                   (int) XFER_INTRA_ALLGATHER_RING == XFER_INTRA_RING &&
                   (int) XFER_INTRA_ALLGATHER_AUTO == XFER_INTRA_AUTO,
               "xfer_intra_allgather_t and exec.h disagree");

/* @p what (opts->struct_size, or the size given to xfer_coll_opts_init_sized) is @p size. */
static xfer_status_t check_struct_size(const char *what, size_t size)
{
    if (size < OPTS_MIN_SIZE)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "%s is %zu, less than the %zu bytes of the first xfer_coll_opts_t: "
                        "initialise the options with xfer_coll_opts_init()",
                        what, size, OPTS_MIN_SIZE);
    if (size > OPTS_MAX_SIZE)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "%s is %zu, no xfer_coll_opts_t is that large: initialise the options "
                        "with xfer_coll_opts_init()",
                        what, size);
    return XFER_SUCCESS;
}

xfer_status_t xfer_coll_opts_init_sized(xfer_coll_opts_t *opts, size_t size)
{
    if (!opts)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "opts is NULL");
    if (check_struct_size("the options' size", size) != XFER_SUCCESS)
        return XFER_ERR_INVALID_ARG;
    /* Every option's default is 0, also those of fields a newer caller has and we do not. */
    memset(opts, 0, size);
    opts->struct_size = size;
    return XFER_SUCCESS;
}

/* The caller's options in this library's layout: the fields within struct_size, defaults (0)
 * for those past it. Fields past our layout (a newer caller's) must be at their default 0. */
static xfer_status_t opts_copy(const xfer_coll_opts_t *u, xfer_coll_opts_t *c)
{
    size_t i;

    memset(c, 0, sizeof(*c));
    if (!u) {
        c->struct_size = sizeof(*c);
        return XFER_SUCCESS;
    }
    if (check_struct_size("opts->struct_size", u->struct_size) != XFER_SUCCESS)
        return XFER_ERR_INVALID_ARG;
    memcpy(c, u, XFER_MIN(u->struct_size, sizeof(*c)));
    for (i = sizeof(*c); i < u->struct_size; i++)
        if (((const unsigned char *) u)[i] != 0)
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "opts sets a field this libxfer does not know (byte %zu of "
                            "struct_size %zu, its xfer_coll_opts_t has %zu): built against a "
                            "newer libxfer?",
                            i, u->struct_size, sizeof(*c));
    return XFER_SUCCESS;
}

/* An option with named values 1..n (names[v - 1]): the field's value @p v, or with 0 the
 * environment variable @p env, value dflt when it is unset. */
static xfer_status_t choice(int v, const char *field, const char *env, const char *const *names,
                            int n, int dflt, const char *expect, int *out)
{
    const char *s;
    int i;
    if (v >= 1 && v <= n) {
        *out = v;
        return XFER_SUCCESS;
    }
    if (v != 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "opts->%s has an invalid value %d", field, v);
    s = xfer_env_str(env);
    for (i = 0; i < n; i++)
        if (s ? strcmp(s, names[i]) == 0 : i + 1 == dflt) {
            *out = i + 1;
            return XFER_SUCCESS;
        }
    return XFER_ERR(XFER_ERR_INVALID_ARG, "%s=\"%s\": expected %s", env, s, expect);
}

/* indexed by value - 1: xfer_hier_sync_t, xfer_intra_allgather_t */
static const char *const hier_sync_names[] = {"flags", "barrier"};
static const char *const intra_names[] = {"mpi", "ring", "auto"};

/* XFER_HIER_AUTO_FLAT: "hier:<inner>" runs <inner> (auto for hier, hier:auto, hier:direct). */
static void flatten(xfer_resolved_opts_t *o)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    const char *inner =
        o->hier_inner && strcmp(o->hier_inner, "direct") != 0 ? o->hier_inner : NULL;
    if (!atomic_flag_test_and_set(&warned))
        xfer_log(XFER_LOG_WARN,
                 "algorithm hier%s%s%s: nonblocking and persistent calls run %s without node "
                 "staging",
                 o->hier_inner ? ":" : "", o->hier_inner ? o->hier_inner : "",
                 o->algorithm_from_env ? " (from XFER_ALGORITHM)" : "", inner ? inner : "auto");
    o->hier = 0;
    o->hier_inner = NULL;
    o->algorithm = inner;
}

xfer_status_t xfer_opts_resolve(const xfer_coll_opts_t *user, xfer_resolved_opts_t *o)
{
    xfer_status_t st;
    xfer_coll_opts_t opts;
    const xfer_coll_opts_t *u = &opts; /* read only this copy, never past user->struct_size */

    memset(o, 0, sizeof(*o));
    st = opts_copy(user, &opts);
    if (st != XFER_SUCCESS)
        return st;
    if (u->duplex < XFER_DUPLEX_AUTO || u->duplex > XFER_DUPLEX_FULL)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "opts->duplex has an invalid value %d",
                        (int) u->duplex);
    o->duplex = u->duplex;

    o->algorithm = xfer_select_named(u->algorithm, &o->algorithm_from_env);
    if (o->algorithm && strncmp(o->algorithm, "hier", 4) == 0 &&
        (o->algorithm[4] == '\0' || o->algorithm[4] == ':')) {
        o->hier = 1;
        o->hier_inner = o->algorithm[4] == ':' ? o->algorithm + 5 : NULL;
        if (o->hier_inner && strcmp(o->hier_inner, "auto") == 0)
            o->hier_inner = NULL;
        if (o->hier_inner && strcmp(o->hier_inner, "direct") != 0 && !xfer_algo_find(o->hier_inner))
            return XFER_ERR(XFER_ERR_UNKNOWN_ALGORITHM,
                            "\"%s\": unknown inner algorithm \"%s\" for hier", o->algorithm,
                            o->hier_inner);
        o->algorithm = NULL;
    }
    if (o->algorithm && !xfer_algo_find(o->algorithm)) {
        char names[256] = "";
        int i, w = 0;
        for (i = 0; i < xfer_algo_count() && w >= 0 && (size_t) w < sizeof(names); i++)
            w += snprintf(names + w, sizeof(names) - (size_t) w, "%s%s", i ? ", " : "",
                          xfer_algo_at(i)->name);
        return XFER_ERR(XFER_ERR_UNKNOWN_ALGORITHM, "unknown algorithm \"%s\"%s; known: auto, %s",
                        o->algorithm, o->algorithm_from_env ? " (from XFER_ALGORITHM)" : "", names);
    }

    switch (u->fallback) {
    case XFER_FALLBACK_ERROR:
        o->fallback_warn = 0;
        break;
    case XFER_FALLBACK_WARN:
        o->fallback_warn = 1;
        break;
    case XFER_FALLBACK_FROM_ENV:
    case XFER_FALLBACK_FROM_ENV_ELSE_WARN:
        st = xfer_select_fallback_env(&o->fallback_warn, &o->fallback_from_env);
        if (st != XFER_SUCCESS)
            return st;
        if (!o->fallback_from_env)
            o->fallback_warn = u->fallback == XFER_FALLBACK_FROM_ENV_ELSE_WARN;
        break;
    default:
        return XFER_ERR(XFER_ERR_INVALID_ARG, "opts->fallback has an invalid value %d",
                        (int) u->fallback);
    }
    if (u->hier_senders < 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "opts->hier_senders is %d: expected > 0 or XFER_HIER_SENDERS_FROM_ENV",
                        u->hier_senders);
    o->hier_senders = u->hier_senders;
    if (u->hier_senders == XFER_HIER_SENDERS_FROM_ENV)
        o->hier_senders = (int) xfer_env_long("XFER_HIER_SENDERS", 1);
    if (o->hier_senders < 1)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "XFER_HIER_SENDERS=%d: expected >= 1",
                        o->hier_senders);
    st = choice((int) u->hier_sync, "hier_sync", "XFER_HIER_SYNC", hier_sync_names, 2,
                XFER_HIER_SYNC_FLAGS, "flags or barrier", &o->hier_sync);
    if (st == XFER_SUCCESS)
        st =
            choice((int) u->intra_allgather, "intra_allgather", "XFER_INTRA_ALLGATHER", intra_names,
                   3, XFER_INTRA_ALLGATHER_AUTO, "auto, mpi or ring", &o->intra_allgather);
    if (st != XFER_SUCCESS)
        return st;
    switch (u->hier_auto) {
    case XFER_HIER_AUTO_ALLOW:
    case XFER_HIER_AUTO_NEVER:
        o->no_auto_hier = u->hier_auto == XFER_HIER_AUTO_NEVER;
        break;
    case XFER_HIER_AUTO_FLAT:
        o->no_auto_hier = 1;
        if (o->hier)
            flatten(o);
        break;
    case XFER_HIER_AUTO_ALWAYS: /* the named algorithm becomes the inner one */
        if (!o->hier) {
            o->hier = 1;
            o->hier_inner = o->algorithm;
            o->algorithm = NULL;
        }
        break;
    default:
        return XFER_ERR(XFER_ERR_INVALID_ARG, "opts->hier_auto has an invalid value %d",
                        (int) u->hier_auto);
    }
    switch (u->check) {
    case XFER_CHECK_FROM_ENV:
        o->check = xfer_env_long("XFER_CHECK", 0) != 0;
        break;
    case XFER_CHECK_OFF:
    case XFER_CHECK_ON:
        o->check = u->check == XFER_CHECK_ON;
        break;
    default:
        return XFER_ERR(XFER_ERR_INVALID_ARG, "opts->check has an invalid value %d",
                        (int) u->check);
    }
    switch (u->learn) {
    case XFER_COLL_LEARN_FROM_ENV: /* the selector reads XFER_LEARN */
    case XFER_COLL_LEARN_OFF:
    case XFER_COLL_LEARN_ON:
        o->learn = u->learn;
        break;
    default:
        return XFER_ERR(XFER_ERR_INVALID_ARG, "opts->learn has an invalid value %d",
                        (int) u->learn);
    }
    o->once = u->once != 0;
    if (u->timeout_ms < XFER_TIMEOUT_NONE)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "opts->timeout_ms is %d: expected > 0, XFER_TIMEOUT_NONE (-1) or "
                        "XFER_TIMEOUT_FROM_ENV (0)",
                        u->timeout_ms);
    if (u->timeout_ms == XFER_TIMEOUT_FROM_ENV)
        o->timeout_ms = (int) xfer_env_long("XFER_TIMEOUT_MS", 0);
    else
        o->timeout_ms = u->timeout_ms == XFER_TIMEOUT_NONE ? 0 : u->timeout_ms;
    if (o->timeout_ms < 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "XFER_TIMEOUT_MS=%d is negative", o->timeout_ms);
    return XFER_SUCCESS;
}
