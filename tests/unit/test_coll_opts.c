/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer_coll_opts_t: a zeroed then initialised struct resolves to the defaults and its FROM_ENV
 * values take the environment; a struct of an older, smaller layout (struct_size) is neither
 * written nor read past its end; a newer, larger one is accepted when the fields this library
 * does not know are 0; invalid values and sizes return XFER_ERR_INVALID_ARG naming the field. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../support/unit.h"
#include "coll/coll.h"

#define CANARY 0xA5

static long checks;

/* A caller's struct with room after it, aligned as the struct. */
typedef union {
    xfer_coll_opts_t opts;
    unsigned char bytes[sizeof(xfer_coll_opts_t) + 64];
} padded_t;

static const char *const env_names[] = {
    "XFER_ALGORITHM",    "XFER_FALLBACK",  "XFER_CHECK",          "XFER_TIMEOUT_MS",
    "XFER_HIER_SENDERS", "XFER_HIER_SYNC", "XFER_INTRA_ALLGATHER"};

static void clear_env(void)
{
    size_t i;
    for (i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++)
        unsetenv(env_names[i]);
}

static xfer_resolved_opts_t resolve_ok(const xfer_coll_opts_t *u, const char *what)
{
    xfer_resolved_opts_t r;
    xfer_status_t st = xfer_opts_resolve(u, &r);
    checks++;
    UCHECK(st == XFER_SUCCESS, "%s: %s (%s)", what, xfer_status_name(st), xfer_last_error());
    return r;
}

static void expect_defaults(const xfer_resolved_opts_t *r, const char *what)
{
    checks++;
    UCHECK(r->algorithm == NULL && !r->hier && r->duplex == XFER_DUPLEX_AUTO, "%s: algorithm",
           what);
    UCHECK(r->fallback_warn == 0 && r->fallback_from_env == 0, "%s: fallback", what);
    UCHECK(r->check == 0, "%s: check %d", what, r->check);
    UCHECK(r->timeout_ms == 0, "%s: timeout_ms %d", what, r->timeout_ms);
    UCHECK(r->hier_senders == 1, "%s: hier_senders %d", what, r->hier_senders);
    UCHECK(r->hier_sync == XFER_HIER_FLAGS, "%s: hier_sync %d", what, r->hier_sync);
    UCHECK(r->intra_allgather == XFER_INTRA_AUTO, "%s: intra_allgather %d", what,
           r->intra_allgather);
    UCHECK(r->no_auto_hier == 0, "%s: no_auto_hier %d", what, r->no_auto_hier);
}

static int all_bytes(const unsigned char *p, size_t from, size_t to, unsigned char v)
{
    size_t i;
    for (i = from; i < to; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

/* (a) zeroed then initialised: defaults; FROM_ENV values take the environment, set fields win */
static void defaults_and_env(void)
{
    xfer_coll_opts_t o;
    xfer_resolved_opts_t r;

    clear_env();
    memset(&o, 0, sizeof(o));
    UCHECK(xfer_coll_opts_init(&o) == XFER_SUCCESS, "init: %s", xfer_last_error());
    UCHECK(o.struct_size == sizeof(xfer_coll_opts_t), "struct_size %zu", o.struct_size);
    UCHECK(o.algorithm == NULL && o.duplex == XFER_DUPLEX_AUTO &&
               o.fallback == XFER_FALLBACK_FROM_ENV && o.check == XFER_CHECK_FROM_ENV &&
               o.timeout_ms == XFER_TIMEOUT_FROM_ENV &&
               o.hier_senders == XFER_HIER_SENDERS_FROM_ENV &&
               o.hier_sync == XFER_HIER_SYNC_FROM_ENV &&
               o.intra_allgather == XFER_INTRA_ALLGATHER_FROM_ENV &&
               o.hier_auto == XFER_HIER_AUTO_ALLOW,
           "init does not give the FROM_ENV values");
    r = resolve_ok(&o, "initialised");
    expect_defaults(&r, "initialised, empty environment");
    r = resolve_ok(NULL, "NULL opts");
    expect_defaults(&r, "NULL opts");

    setenv("XFER_ALGORITHM", "fc_full", 1);
    setenv("XFER_FALLBACK", "warn", 1);
    setenv("XFER_CHECK", "1", 1);
    setenv("XFER_TIMEOUT_MS", "250", 1);
    setenv("XFER_HIER_SENDERS", "3", 1);
    setenv("XFER_HIER_SYNC", "barrier", 1);
    setenv("XFER_INTRA_ALLGATHER", "ring", 1);
    r = resolve_ok(&o, "environment");
    UCHECK(r.algorithm && !strcmp(r.algorithm, "fc_full") && r.algorithm_from_env,
           "XFER_ALGORITHM not honoured");
    UCHECK(r.fallback_warn == 1 && r.fallback_from_env == 1, "XFER_FALLBACK not honoured");
    UCHECK(r.check == 1, "XFER_CHECK not honoured");
    UCHECK(r.timeout_ms == 250, "XFER_TIMEOUT_MS not honoured: %d", r.timeout_ms);
    UCHECK(r.hier_senders == 3, "XFER_HIER_SENDERS not honoured: %d", r.hier_senders);
    UCHECK(r.hier_sync == XFER_HIER_BARRIER, "XFER_HIER_SYNC not honoured: %d", r.hier_sync);
    UCHECK(r.intra_allgather == XFER_INTRA_RING, "XFER_INTRA_ALLGATHER not honoured: %d",
           r.intra_allgather);

    /* fields set in the struct win over the environment */
    o.algorithm = "ring_full";
    o.fallback = XFER_FALLBACK_ERROR;
    o.check = XFER_CHECK_OFF;
    o.timeout_ms = XFER_TIMEOUT_NONE;
    o.hier_senders = 2;
    o.hier_sync = XFER_HIER_SYNC_FLAGS;
    o.intra_allgather = XFER_INTRA_ALLGATHER_MPI;
    o.hier_auto = XFER_HIER_AUTO_NEVER;
    r = resolve_ok(&o, "fields over environment");
    UCHECK(r.algorithm && !strcmp(r.algorithm, "ring_full") && !r.algorithm_from_env, "algorithm");
    UCHECK(r.fallback_warn == 0, "fallback ERROR");
    UCHECK(r.check == 0, "check OFF over XFER_CHECK=1");
    UCHECK(r.timeout_ms == 0, "timeout NONE over XFER_TIMEOUT_MS: %d", r.timeout_ms);
    UCHECK(r.hier_senders == 2, "hier_senders %d", r.hier_senders);
    UCHECK(r.hier_sync == XFER_HIER_FLAGS, "hier_sync FLAGS over XFER_HIER_SYNC=barrier");
    UCHECK(r.intra_allgather == XFER_INTRA_MPI, "intra_allgather MPI over the environment");
    UCHECK(r.no_auto_hier == 1, "hier_auto NEVER");
    /* the interposer's options: XFER_FALLBACK when set, else warn; hier:<inner> runs flat */
    o.fallback = XFER_FALLBACK_FROM_ENV_ELSE_WARN;
    r = resolve_ok(&o, "fallback FROM_ENV_ELSE_WARN, XFER_FALLBACK=warn");
    UCHECK(r.fallback_warn == 1 && r.fallback_from_env == 1, "FROM_ENV_ELSE_WARN with warn");
    setenv("XFER_FALLBACK", "error", 1);
    r = resolve_ok(&o, "fallback FROM_ENV_ELSE_WARN, XFER_FALLBACK=error");
    UCHECK(r.fallback_warn == 0 && r.fallback_from_env == 1, "FROM_ENV_ELSE_WARN with error");
    unsetenv("XFER_FALLBACK");
    r = resolve_ok(&o, "fallback FROM_ENV_ELSE_WARN, no XFER_FALLBACK");
    UCHECK(r.fallback_warn == 1 && r.fallback_from_env == 0, "FROM_ENV_ELSE_WARN unset: warn");
    o.fallback = XFER_FALLBACK_FROM_ENV;
    r = resolve_ok(&o, "fallback FROM_ENV, no XFER_FALLBACK");
    UCHECK(r.fallback_warn == 0, "FROM_ENV unset: error");
    o.fallback = XFER_FALLBACK_ERROR;
    {
        static const char *const named[][2] = {{"hier:ring", "ring"},
                                               {"hier", NULL},
                                               {"hier:auto", NULL},
                                               {"hier:direct", NULL},
                                               {"fc_full", "fc_full"}};
        int k;
        o.hier_auto = XFER_HIER_AUTO_FLAT;
        for (k = 0; k < 5; k++) {
            o.algorithm = named[k][0];
            r = resolve_ok(&o, named[k][0]);
            UCHECK(
                !r.hier && r.no_auto_hier && !r.hier_inner &&
                    (named[k][1] ? r.algorithm && !strcmp(r.algorithm, named[k][1]) : !r.algorithm),
                "hier_auto FLAT, %s: hier %d, algorithm %s", named[k][0], r.hier,
                r.algorithm ? r.algorithm : "(auto)");
        }
        o.algorithm = NULL; /* from XFER_ALGORITHM alike */
        setenv("XFER_ALGORITHM", "hier:fc_direct", 1);
        r = resolve_ok(&o, "hier_auto FLAT, XFER_ALGORITHM=hier:fc_direct");
        UCHECK(!r.hier && r.algorithm && !strcmp(r.algorithm, "fc_direct") && r.algorithm_from_env,
               "hier_auto FLAT over XFER_ALGORITHM=hier:fc_direct");
        setenv("XFER_ALGORITHM", "fc_full", 1);
        o.algorithm = "ring_full";
        o.hier_auto = XFER_HIER_AUTO_NEVER;
    }
    o.check = XFER_CHECK_ON;
    o.timeout_ms = 40;
    o.intra_allgather = XFER_INTRA_ALLGATHER_AUTO;
    r = resolve_ok(&o, "explicit values");
    UCHECK(r.check == 1 && r.timeout_ms == 40 && r.intra_allgather == XFER_INTRA_AUTO,
           "check ON, timeout 40, intra AUTO: %d %d %d", r.check, r.timeout_ms, r.intra_allgather);
    /* ALWAYS: the named algorithm becomes the inner one of node staging, as "hier:ring_full" */
    o.hier_auto = XFER_HIER_AUTO_ALWAYS;
    r = resolve_ok(&o, "hier_auto ALWAYS");
    UCHECK(r.hier == 1 && r.hier_inner && !strcmp(r.hier_inner, "ring_full") && !r.algorithm,
           "hier_auto ALWAYS around ring_full: hier %d inner %s", r.hier,
           r.hier_inner ? r.hier_inner : "(auto)");
    o.algorithm = "auto";
    r = resolve_ok(&o, "hier_auto ALWAYS, auto");
    UCHECK(r.hier == 1 && !r.hier_inner, "hier_auto ALWAYS around auto: the automatic inner one");
    o.algorithm = "hier:fc_half";
    r = resolve_ok(&o, "hier_auto ALWAYS, hier:fc_half");
    UCHECK(r.hier == 1 && r.hier_inner && !strcmp(r.hier_inner, "fc_half"), "an explicit hier:");
    clear_env();
}

/* (b) an older caller whose struct ends before hier_auto: nothing written or read past it */
static void older_caller(void)
{
    const size_t old = offsetof(xfer_coll_opts_t, hier_auto);
    const size_t first = offsetof(xfer_coll_opts_t, timeout_ms) + sizeof(int);
    padded_t p;
    xfer_resolved_opts_t r;

    clear_env();
    memset(p.bytes, CANARY, sizeof(p.bytes));
    UCHECK(xfer_coll_opts_init_sized(&p.opts, old) == XFER_SUCCESS, "init old: %s",
           xfer_last_error());
    UCHECK(p.opts.struct_size == old, "struct_size %zu, want %zu", p.opts.struct_size, old);
    UCHECK(all_bytes(p.bytes, sizeof(size_t), old, 0), "fields of the old layout not defaulted");
    UCHECK(all_bytes(p.bytes, old, sizeof(p.bytes), CANARY), "init wrote past struct_size");
    /* The canary where hier_auto would be is no valid hier_auto: reading it would fail. */
    p.opts.hier_sync = XFER_HIER_SYNC_BARRIER;
    r = resolve_ok(&p.opts, "older caller");
    UCHECK(r.no_auto_hier == 0, "hier_auto past struct_size not at its default");
    UCHECK(r.hier_sync == XFER_HIER_BARRIER, "hier_sync within struct_size ignored");
    UCHECK(all_bytes(p.bytes, old, sizeof(p.bytes), CANARY), "resolve wrote past struct_size");

    /* The first layout: everything past timeout_ms defaults, FROM_ENV ones from the
     * environment, although the bytes there would all be invalid values. */
    memset(p.bytes, CANARY, sizeof(p.bytes));
    UCHECK(xfer_coll_opts_init_sized(&p.opts, first) == XFER_SUCCESS, "init first: %s",
           xfer_last_error());
    UCHECK(all_bytes(p.bytes, first, sizeof(p.bytes), CANARY), "init wrote past the first layout");
    p.opts.timeout_ms = 70;
    setenv("XFER_HIER_SYNC", "barrier", 1);
    setenv("XFER_INTRA_ALLGATHER", "mpi", 1);
    setenv("XFER_HIER_SENDERS", "2", 1);
    r = resolve_ok(&p.opts, "first layout");
    UCHECK(r.timeout_ms == 70, "timeout_ms within struct_size ignored: %d", r.timeout_ms);
    UCHECK(r.hier_senders == 2 && r.hier_sync == XFER_HIER_BARRIER &&
               r.intra_allgather == XFER_INTRA_MPI && r.no_auto_hier == 0,
           "fields past struct_size: %d %d %d %d", r.hier_senders, r.hier_sync, r.intra_allgather,
           r.no_auto_hier);
    clear_env();

    /* A newer caller: fields we do not know are accepted at their default 0, refused set. */
    memset(p.bytes, CANARY, sizeof(p.bytes));
    UCHECK(xfer_coll_opts_init_sized(&p.opts, sizeof(xfer_coll_opts_t) + 16) == XFER_SUCCESS,
           "init newer: %s", xfer_last_error());
    UCHECK(all_bytes(p.bytes, sizeof(xfer_coll_opts_t), sizeof(xfer_coll_opts_t) + 16, 0) &&
               all_bytes(p.bytes, sizeof(xfer_coll_opts_t) + 16, sizeof(p.bytes), CANARY),
           "newer caller's struct not zeroed exactly to its size");
    r = resolve_ok(&p.opts, "newer caller, unknown fields 0");
    expect_defaults(&r, "newer caller");
    p.bytes[sizeof(xfer_coll_opts_t) + 9] = 1;
    checks++;
    UCHECK(xfer_opts_resolve(&p.opts, &r) == XFER_ERR_INVALID_ARG &&
               strstr(xfer_last_error(), "does not know"),
           "unknown field set: %s", xfer_last_error());
}

static void expect_invalid(const xfer_coll_opts_t *o, const char *field, const char *what)
{
    xfer_resolved_opts_t r;
    xfer_status_t st = xfer_opts_resolve(o, &r);
    checks++;
    UCHECK(st == XFER_ERR_INVALID_ARG, "%s: %s, want XFER_ERR_INVALID_ARG", what,
           xfer_status_name(st));
    UCHECK(strstr(xfer_last_error(), field) != NULL, "%s: message does not name %s: %s", what,
           field, xfer_last_error());
}

/* (c) invalid values and sizes */
static void invalid(void)
{
    xfer_coll_opts_t o;
    padded_t p;

#define BAD(field, value)                                                                          \
    do {                                                                                           \
        xfer_coll_opts_init(&o);                                                                   \
        memcpy(&o.field, &(int){value}, sizeof(int));                                              \
        expect_invalid(&o, "opts->" #field, #field " = " #value);                                  \
    } while (0)

    clear_env();
    BAD(duplex, 3);
    BAD(fallback, 4);
    BAD(fallback, 9);
    BAD(check, 3);
    BAD(check, -1); /* the former "from the environment" */
    BAD(hier_sync, 3);
    BAD(hier_sync, -1);
    BAD(intra_allgather, 4);
    BAD(hier_auto, 4);
    BAD(hier_auto, -1); /* the former "never" */
    BAD(hier_senders, -1);
    BAD(timeout_ms, -2);
#undef BAD

    /* never initialised: zeroed, or garbage */
    memset(&o, 0, sizeof(o));
    expect_invalid(&o, "opts->struct_size is 0", "zeroed, not initialised");
    memset(&o, 0xA7, sizeof(o));
    expect_invalid(&o, "opts->struct_size", "garbage, not initialised");
    xfer_coll_opts_init(&o);
    o.struct_size = offsetof(xfer_coll_opts_t, timeout_ms);
    expect_invalid(&o, "opts->struct_size", "smaller than the first layout");

    memset(p.bytes, CANARY, sizeof(p.bytes));
    checks++;
    UCHECK(xfer_coll_opts_init_sized(&p.opts, sizeof(size_t)) == XFER_ERR_INVALID_ARG,
           "init with a size below the first layout");
    UCHECK(all_bytes(p.bytes, 0, sizeof(p.bytes), CANARY), "a refused init wrote");
    UCHECK(xfer_coll_opts_init_sized(NULL, sizeof(xfer_coll_opts_t)) == XFER_ERR_INVALID_ARG,
           "init NULL");
    UCHECK(xfer_coll_opts_init(NULL) == XFER_ERR_INVALID_ARG, "init NULL (inline wrapper)");
}

int main(void)
{
    defaults_and_env();
    older_caller();
    invalid();
    return unit_finish("test_coll_opts", checks);
}
