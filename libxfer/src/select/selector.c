/* SPDX-License-Identifier: BSD-3-Clause */
/* The selector (selector.h): the environment read once, the tuning file, the model, the
 * candidates of a call, and the learning state of each call signature with its agreements. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "selector.h"

/* A call signature: what must repeat for one call's time to say something about the next. Sizes
 * are classed in quarter powers of two, so that a dataset whose rows change a little each step
 * keeps learning; its times are scaled to the first call's volume. */
typedef struct sig_key {
    int n[2], dir, varied, ppn, size_class[2];
    unsigned exclude;
} sig_key_t;

typedef struct sig_entry {
    sig_key_t key;
    xfer_learn_t learn;
    double ref_volume;
    struct sig_entry *next;
} sig_entry_t;

enum { MAX_SIGNATURES = 256 }; /* past this, new signatures take the model's choice */

struct xfer_selector {
    xfer_topo_t *topo;
    MPI_Comm comm; /* a duplicate of the merged communicator: the agreements (owned) */
    xfer_tuning_t *tuning;
    xfer_model_t model;
    int env_mismatch, model_mismatch, learn;
    int broken; /* an agreement timed out: its reduction may still be pending on s->comm */
    double mine[XFER_LEARN_MAX], agreed[XFER_LEARN_MAX]; /* a blocking agreement's vectors */
    sig_entry_t *sigs;
    int nsigs;
    double probe_beta; /* beta measured by a probe (probed), for the candidates' ranking */
    int probed;
    pthread_mutex_t lock;
};

static _Thread_local char last_algorithm[64];

void xfer_select_last_set(const char *name)
{
    snprintf(last_algorithm, sizeof(last_algorithm), "%s", name ? name : "");
}

xfer_status_t xfer_last_op_algorithm(const char **name)
{
    if (!name)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "name is NULL");
    *name = last_algorithm;
    return XFER_SUCCESS;
}

/* ---- the environment ------------------------------------------------------------------------ */

const char *xfer_select_named(const char *given, int *from_env)
{
    const char *a = given;
    *from_env = 0;
    if (!a) {
        a = xfer_env_str("XFER_ALGORITHM");
        *from_env = a != NULL;
    }
    return a && strcmp(a, "auto") == 0 ? NULL : a;
}

xfer_status_t xfer_select_fallback_env(int *warn, int *set)
{
    const char *env = xfer_env_str("XFER_FALLBACK");
    *warn = env && strcmp(env, "warn") == 0;
    *set = env != NULL;
    if (env && !*warn && strcmp(env, "error") != 0)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "XFER_FALLBACK=\"%s\": expected warn or error", env);
    return XFER_SUCCESS;
}

void xfer_select_channel_algorithm(const char *cfg_alg, int ring_topology, int full_duplex,
                                   char *out, size_t len)
{
    const char *env = xfer_env_str("XFER_ALGORITHM");
    const xfer_algo_t *ring;
    snprintf(out, len, "%s", env ? env : cfg_alg);
    if (!env && strcmp(cfg_alg, "auto") == 0 && ring_topology &&
        (ring = xfer_select_ring_default(full_duplex)))
        snprintf(out, len, "%s", ring->name);
}

/* An unset variable hashes as the empty string. */
static uint64_t str_hash(const char *s)
{
    return xfer_fnv1a(XFER_FNV_OFFSET, s, s ? strlen(s) : 0);
}

static void model_init(xfer_selector_t *s)
{
    xfer_model_t *m = &s->model;
    const xfer_tuning_t *tu = s->tuning;
    const char *topo = xfer_env_str("XFER_TOPOLOGY");
    memset(m, 0, sizeof(*m));
    m->tuning = tu;
    m->alpha = xfer_env_double("XFER_ALPHA", tu && tu->alpha > 0 ? tu->alpha : 2e-6);
    m->beta = xfer_env_double("XFER_BETA", tu && tu->beta > 0 ? tu->beta : 1e-10);
    m->beta_measured = xfer_env_str("XFER_BETA") != NULL || (tu && tu->beta > 0);
    m->gamma = xfer_env_double("XFER_GAMMA", tu && tu->gamma > 0 ? tu->gamma : 2.5e-10);
    m->nnodes = s->topo->nnodes > 0 ? s->topo->nnodes : 1;
    m->max_ppn = s->topo->max_ppn > 0 ? s->topo->max_ppn : 1;
    m->ring = topo && strcmp(topo, "ring") == 0;
    if (topo && !m->ring && strcmp(topo, "fully_connected") != 0)
        xfer_log(XFER_LOG_WARN, "XFER_TOPOLOGY=\"%s\": expected fully_connected or ring", topo);
}

static void selector_free(struct xfer_selector *s)
{
    sig_entry_t *e, *n;
    if (!s)
        return;
    for (e = s->sigs; e; e = n) {
        n = e->next;
        xfer_free(e);
    }
    xfer_tuning_free(&s->tuning);
    xfer_comm_release(&s->comm);
    pthread_mutex_destroy(&s->lock);
    xfer_free(s);
}

/* Both groups must select alike: different XFER_ALGORITHM, XFER_FALLBACK or XFER_LEARN settings
 * in the two jobs would make them run different schedules and hang, and auto must see the same
 * model (the tuning file's contents and the variables that override it). A file one rank cannot
 * read fails the selector on every rank. */
static xfer_status_t selector_create(xfer_topo_t *t, xfer_selector_t **out)
{
    xfer_status_t st = XFER_SUCCESS, tuned = XFER_SUCCESS;
    const char *tuning = xfer_env_str("XFER_TUNING");
    unsigned long long h[4], hmin[4], hmax[4];
    xfer_selector_t *s;

    *out = NULL;
    if (!(s = xfer_calloc(1, sizeof(*s))))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "selector");
    pthread_mutex_init(&s->lock, NULL);
    s->topo = t;
    s->comm = MPI_COMM_NULL;
    s->learn = xfer_env_long("XFER_LEARN", 1) != 0;
    if (tuning && *tuning)
        tuned = xfer_tuning_load(tuning, &s->tuning);
    h[0] = (unsigned long long) str_hash(xfer_env_str("XFER_ALGORITHM"));
    h[1] = (unsigned long long) str_hash(xfer_env_str("XFER_FALLBACK")) ^
           ((unsigned long long) s->learn << 1);
    h[2] = (unsigned long long) (s->tuning ? s->tuning->hash : 0) ^
           str_hash(xfer_env_str("XFER_ALPHA")) ^ (str_hash(xfer_env_str("XFER_BETA")) << 1) ^
           (str_hash(xfer_env_str("XFER_GAMMA")) << 2);
    h[3] = tuned != XFER_SUCCESS;
    XFER_MPI_GOTO(MPI_Allreduce(h, hmin, 4, MPI_UNSIGNED_LONG_LONG, MPI_MIN, t->merged), st, fail);
    XFER_MPI_GOTO(MPI_Allreduce(h, hmax, 4, MPI_UNSIGNED_LONG_LONG, MPI_MAX, t->merged), st, fail);
    if (hmax[3]) {
        st = tuned != XFER_SUCCESS
                 ? tuned
                 : XFER_ERR(XFER_ERR_CONFIG, "another rank could not load XFER_TUNING (its error "
                                             "names the problem)");
        goto fail;
    }
    s->env_mismatch = hmin[0] != hmax[0] || hmin[1] != hmax[1];
    s->model_mismatch = hmin[2] != hmax[2];
    XFER_MPI_GOTO(MPI_Comm_dup(t->merged, &s->comm), st, fail);
    XFER_MPI_GOTO(MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN), st, fail);
    model_init(s);
    *out = s;
    return XFER_SUCCESS;
fail:
    selector_free(s);
    return st;
}

xfer_status_t xfer_selector_get(xfer_topo_t *t, xfer_selector_t **out)
{
    xfer_status_t st;
    if (t->selector) {
        *out = t->selector;
        return XFER_SUCCESS;
    }
    XFER_CHECK_GOTO(selector_create(t, out), st, fail);
    t->selector = *out;
    t->selector_free = selector_free;
    return XFER_SUCCESS;
fail:
    return st;
}

int xfer_selector_env_mismatch(const xfer_selector_t *s)
{
    return s->env_mismatch;
}

const xfer_model_t *xfer_selector_base_model(const xfer_selector_t *s)
{
    return &s->model;
}

int xfer_selector_learns(const xfer_selector_t *s)
{
    return s->learn;
}

xfer_status_t xfer_selector_model(const xfer_selector_t *s, xfer_model_t *m)
{
    if (s->model_mismatch)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "auto: the ranks' XFER_TUNING files or XFER_ALPHA/XFER_BETA/XFER_GAMMA "
                        "differ, so they would choose differently; give every rank of both groups "
                        "the same (or name the algorithm)");
    *m = s->model;
    return XFER_SUCCESS;
}

/* ---- candidates ----------------------------------------------------------------------------- */

static int eligible(const xfer_algo_t *al, const xfer_shape_t *shape, const xfer_model_t *m)
{
    const int half = shape->total[0] == 0 || shape->total[1] == 0;
    const unsigned want = half ? XFER_ALGO_AUTO_HALF : XFER_ALGO_AUTO_FULL;
    const char *why;
    return (al->flags & want) && !(al->flags & m->exclude) &&
           !(al->flags & XFER_ALGO_RING) == !m->ring && xfer_algo_supports(al, shape, &why);
}

int xfer_select_candidates(const xfer_shape_t *shape, const xfer_model_t *m,
                           const xfer_model_t *ranked, int *cand, char *why, size_t whylen,
                           int *measured)
{
    const xfer_algo_t *first = xfer_select_auto(shape, m, why, whylen, measured);
    const xfer_model_t *r = ranked ? ranked : m;
    const double window = r->beta_measured ? XFER_SELECT_WINDOW_MEASURED : XFER_SELECT_WINDOW;
    double pred[64], cost[64], c0 = -1.0;
    int idx[64], n = 0, i, j, k, out = 0;
    const int na = xfer_algo_count() < 64 ? xfer_algo_count() : 64;

    cand[out++] = xfer_algo_index(first);
    if (*measured) { /* the tuning file's best first, then the model's own candidates */
        xfer_model_t plain = *m;
        char dummy[8];
        int again;
        plain.tuning = NULL;
        first = xfer_select_auto(shape, &plain, dummy, sizeof(dummy), &again);
        if (first != xfer_algo_at(cand[0]) && eligible(first, shape, m))
            cand[out++] = xfer_algo_index(first);
    }
    if (!eligible(first, shape, m))
        return out;            /* root_gather: nothing else can run the call */
    for (i = 0; i < na; i++) { /* r's predictions (-1: not eligible), and the best of them */
        pred[i] = eligible(xfer_algo_at(i), shape, m) ? xfer_algo_predict(xfer_algo_at(i), shape, r)
                                                      : -1.0;
        if (pred[i] >= 0.0 && (c0 < 0.0 || pred[i] < c0))
            c0 = pred[i];
    }
    for (i = 0; i < na; i++) {
        const double c = pred[i];
        if (xfer_algo_at(i) == first || i == cand[0] || c < 0.0 || c > c0 * window)
            continue;
        for (j = n; j > 0 && cost[j - 1] > c; j--) { /* by cost; registry order on ties */
            cost[j] = cost[j - 1];
            idx[j] = idx[j - 1];
        }
        cost[j] = c;
        idx[j] = i;
        n++;
    }
    for (k = 0; k < n && out < XFER_LEARN_MAX; k++)
        cand[out++] = idx[k];
    return out;
}

/* @p m with the probe's beta, when a probe measured one (else NULL). Under s->lock. */
static const xfer_model_t *probed_model(const xfer_selector_t *s, const xfer_model_t *m,
                                        xfer_model_t *buf)
{
    if (!s->probed || m->beta_measured)
        return NULL;
    *buf = *m;
    buf->beta = s->probe_beta;
    buf->beta_measured = 1;
    return buf;
}

int xfer_selector_candidates(xfer_selector_t *s, const xfer_shape_t *shape, const xfer_model_t *m,
                             int *cand, char *why, size_t whylen, int *measured)
{
    xfer_model_t buf;
    const xfer_model_t *r;
    int n;
    pthread_mutex_lock(&s->lock);
    r = probed_model(s, m, &buf);
    n = xfer_select_candidates(shape, m, r, cand, why, whylen, measured);
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* ---- signatures ----------------------------------------------------------------------------- */

/* Four classes per power of two: the highest bit and the two below it. */
static int size_class(size_t bytes)
{
    int msb = 0;
    if (!bytes)
        return -1;
    while (msb < 63 && (bytes >> (msb + 1)) != 0)
        msb++;
    return 4 * msb + (msb >= 2 ? (int) ((bytes >> (msb - 2)) & 3u) : 0);
}

static void make_key(const xfer_shape_t *shape, const xfer_model_t *m, sig_key_t *k)
{
    int g;
    memset(k, 0, sizeof(*k));
    for (g = 0; g < 2; g++) {
        k->n[g] = shape->n[g];
        k->size_class[g] = shape->total[g] ? size_class(xfer_cost_max_count(shape, g)) : -1;
    }
    k->dir = shape->total[0] && shape->total[1] ? 2 : shape->total[0] ? 0 : 1;
    k->varied = !xfer_shape_uniform(shape, 0) || !xfer_shape_uniform(shape, 1);
    k->ppn = m->max_ppn;
    k->exclude = m->exclude | (m->ring ? 1u << 31 : 0u);
}

static double volume(const xfer_shape_t *shape)
{
    return (double) shape->total[0] + (double) shape->total[1];
}

/* The entry of @p shape's signature, made with its candidates when new; NULL past the table's
 * bound or without memory (the call then takes the model's choice). */
static sig_entry_t *entry_of(xfer_selector_t *s, const xfer_shape_t *shape, const xfer_model_t *m)
{
    sig_key_t key;
    sig_entry_t *e;
    make_key(shape, m, &key);
    pthread_mutex_lock(&s->lock);
    for (e = s->sigs; e; e = e->next)
        if (memcmp(&e->key, &key, sizeof(key)) == 0)
            break;
    if (!e && s->nsigs < MAX_SIGNATURES && (e = xfer_calloc(1, sizeof(*e)))) {
        int cand[XFER_LEARN_MAX], n, measured;
        char why[16];
        xfer_model_t buf;
        n = xfer_select_candidates(shape, m, probed_model(s, m, &buf), cand, why, sizeof(why),
                                   &measured);
        e->key = key;
        e->ref_volume = volume(shape);
        if (!m->beta_measured && !s->probed && !measured)
            xfer_learn_probe(&e->learn, cand[0]); /* rank again once a call has measured beta */
        else
            xfer_learn_init(&e->learn, cand, n, 1);
        e->next = s->sigs;
        s->sigs = e;
        s->nsigs++;
    }
    pthread_mutex_unlock(&s->lock);
    return e;
}

/* ---- decisions ------------------------------------------------------------------------------ */

void xfer_selector_trace(const xfer_selector_t *s, const xfer_learn_t *l, const char *what)
{
    const int lvl = xfer_trace_level();
    char buf[256];
    int k, w = 0;
    if (lvl < 1 || (lvl < 2 && s->topo->rank != 0))
        return;
    for (k = 0; k < l->ncand && w >= 0 && (size_t) w < sizeof(buf); k++)
        w += snprintf(buf + w, sizeof(buf) - (size_t) w, "%s%s%s", k ? ", " : "",
                      xfer_algo_at(l->cand[k])->name,
                      l->state == XFER_LEARN_SETTLED && k == l->pick ? "*" : "");
    xfer_log(XFER_LOG_TRACE, "learn group %d rank %d: %s [%s]%s", s->topo->group, s->topo->rank,
             what, buf,
             l->state == XFER_LEARN_SETTLED   ? " settled"
             : l->state == XFER_LEARN_EXPLORE ? " exploring"
             : l->state == XFER_LEARN_PROBE   ? " probing"
                                              : "");
}

static void trace_agreed(const xfer_selector_t *s, const xfer_learn_t *l, const double *v, int was)
{
    char what[256];
    int k, w;
    w = snprintf(what, sizeof(what), "%s agreed",
                 was == XFER_LEARN_EXPLORE ? "round"
                 : was == XFER_LEARN_PROBE ? "probe"
                                           : "watch");
    for (k = 0; k < l->ncand && w >= 0 && (size_t) w < sizeof(what); k++)
        w += snprintf(what + w, sizeof(what) - (size_t) w,
                      v[k] < XFER_LEARN_MISSING ? " %.4g" : " -",
                      v[k] < XFER_LEARN_MISSING ? v[k] : 0.0);
    xfer_selector_trace(s, l, what);
}

/* The agreement of a plan made for one call: every rank has passed the argument check, so every
 * rank comes; a peer that dies or hangs meanwhile is bounded by @p timeout_ms when set. */
static xfer_status_t agree_now(xfer_selector_t *s, xfer_learn_t *l, int timeout_ms)
{
    double *mine = s->mine, *agreed = s->agreed; /* MPI may hold them past a timeout */
    const int was = l->state;
    xfer_status_t st = XFER_SUCCESS;
    MPI_Request req = MPI_REQUEST_NULL;
    int done = 0;

    if (s->broken)
        return XFER_ERR(XFER_ERR_TIMEOUT, "auto: an earlier agreement on this intercommunicator "
                                          "timed out; name an algorithm (or XFER_LEARN=0)");
    xfer_learn_pack(l, mine);
    if (timeout_ms <= 0) {
        XFER_MPI_GOTO(MPI_Allreduce(mine, agreed, xfer_learn_len(l), MPI_DOUBLE, MPI_MAX, s->comm),
                      st, out);
    } else {
        const double end = MPI_Wtime() + timeout_ms / 1000.0;
        XFER_MPI_GOTO(
            MPI_Iallreduce(mine, agreed, xfer_learn_len(l), MPI_DOUBLE, MPI_MAX, s->comm, &req), st,
            out);
        while (!done) {
            XFER_MPI_GOTO(MPI_Test(&req, &done, MPI_STATUS_IGNORE), st, out);
            if (!done && MPI_Wtime() > end) {
                s->broken = 1; /* the request stays with MPI */
                st = XFER_ERR(XFER_ERR_TIMEOUT,
                              "auto: the ranks' agreement on the measured times did not complete "
                              "within %d ms (a rank of either group did not make this call)",
                              timeout_ms);
                goto out;
            }
            if (!done)
                sched_yield();
        }
    }
    xfer_learn_apply(l, agreed);
    trace_agreed(s, l, agreed, was);
out:
    return st;
}

/* A probe's time came back agreed: beta from it, when the call was mostly bytes by the model (the
 * probed algorithm's alpha and gamma terms taken off its time), then the candidates ranked with
 * that beta; the probe counts as the round's first call. All from agreed values and the shape:
 * the same on every rank. */
static void probe_done(xfer_selector_t *s, sig_entry_t *e, const xfer_shape_t *shape,
                       const xfer_model_t *m)
{
    const xfer_algo_t *al = xfer_algo_at(e->learn.cand[0]);
    const double t = e->learn.est[0] * volume(shape) / e->ref_volume;
    xfer_model_t m0 = *m, buf;
    double with, without;
    int cand[XFER_LEARN_MAX], n, measured;
    char why[16], what[160];

    m0.beta = 0.0;
    with = xfer_algo_predict(al, shape, m);
    without = xfer_algo_predict(al, shape, &m0);
    pthread_mutex_lock(&s->lock);
    if (!s->probed && with > without && t - without >= 0.5 * t) {
        s->probe_beta = m->beta * (t - without) / (with - without);
        s->probed = 1;
        snprintf(what, sizeof(what), "probe: %s took %.4g s, so beta %.3g s/B (%.4g MB/s)",
                 al->name, t, s->probe_beta, 1e-6 / s->probe_beta);
    } else {
        snprintf(what, sizeof(what), "probe: %s took %.4g s%s", al->name, t,
                 s->probed ? "" : ", too little of it bytes to measure beta");
    }
    n = xfer_select_candidates(shape, m, probed_model(s, m, &buf), cand, why, sizeof(why),
                               &measured);
    xfer_learn_begin(&e->learn, cand, n);
    pthread_mutex_unlock(&s->lock);
    xfer_selector_trace(s, &e->learn, what);
}

xfer_status_t xfer_selector_pick(xfer_selector_t *s, const xfer_shape_t *shape,
                                 const xfer_model_t *m, int timeout_ms, xfer_pick_t *pick,
                                 char *how, size_t len)
{
    xfer_status_t st;
    sig_entry_t *e;

    memset(pick, 0, sizeof(*pick));
    if (volume(shape) <= 0.0 || !(e = entry_of(s, shape, m)) || e->learn.state == XFER_LEARN_FIXED)
        return XFER_SUCCESS; /* the model's choice stands */
    if (xfer_learn_due(&e->learn))
        XFER_CHECK_GOTO(agree_now(s, &e->learn, timeout_ms), st, out);
    if (e->learn.state == XFER_LEARN_PROBED)
        probe_done(s, e, shape, m);
    if (e->learn.state == XFER_LEARN_FIXED)
        return XFER_SUCCESS; /* ranked again: the model's choice alone */
    pick->learn = &e->learn;
    pick->slot = xfer_learn_choose(&e->learn);
    pick->algo = xfer_algo_at(e->learn.cand[pick->slot]);
    pick->scale = e->ref_volume / volume(shape);
    snprintf(how, len, "learning: %s %s (%d of %d)",
             e->learn.state == XFER_LEARN_SETTLED ? "settled on"
             : e->learn.state == XFER_LEARN_PROBE ? "probing"
                                                  : "exploring",
             pick->algo->name, pick->slot + 1, e->learn.ncand);
    return XFER_SUCCESS;
out:
    return st;
}

void xfer_pick_record(const xfer_pick_t *pick, double seconds)
{
    if (pick->learn)
        xfer_learn_record(pick->learn, pick->slot, seconds * pick->scale);
}

void xfer_selector_seed(xfer_selector_t *s, const xfer_shape_t *shape, const xfer_model_t *m,
                        const int *cand, int n, xfer_learn_t *out)
{
    sig_entry_t *e = entry_of(s, shape, m);
    if (e && e->learn.state == XFER_LEARN_SETTLED) {
        xfer_learn_init(out, &e->learn.cand[e->learn.pick], 1, 0);
        return;
    }
    xfer_learn_init(out, cand, n, 1);
}

xfer_status_t xfer_selector_post(xfer_selector_t *s, xfer_learn_t *l, xfer_learn_carrier_t *c)
{
    xfer_status_t st = XFER_SUCCESS;
    xfer_learn_pack(l, c->mine);
    XFER_MPI_GOTO(MPI_Iallreduce(c->mine, c->agreed, xfer_learn_len(l), MPI_DOUBLE, MPI_MAX,
                                 s->comm, &c->req),
                  st, out);
    c->posted = 1;
out:
    return st;
}

void xfer_selector_apply(xfer_selector_t *s, xfer_learn_t *l, xfer_learn_carrier_t *c)
{
    const int was = l->state;
    xfer_learn_apply(l, c->agreed);
    trace_agreed(s, l, c->agreed, was);
    c->posted = 0;
}
