/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry (the algorithm descriptors, in order), the names of their flags, and the
 * automatic choice among them. */
#include <stdio.h>
#include <string.h>

#include <xfer/coll.h>

#include "../core/core.h"
#include "select.h"

/* ---- the registry ---------------------------------------------------------------------- */

/* Each algorithm's file exports its descriptor (algos/algo.h); this is only their order, which
 * is part of the interface: xfer_algorithm_info's indices (native first), the cross-group
 * check's algorithm numbers, xfer-info's listing, the order in which auto tries them, and
 * xfer_select_ring_default's choice (ring_full before ring). */
static const xfer_algo_t *const registry[] = {
    &xfer_algo_native,    &xfer_algo_root_gather, &xfer_algo_fc_half,    &xfer_algo_fc_full,
    &xfer_algo_fc_full_v, &xfer_algo_ring_half,   &xfer_algo_ring_full,  &xfer_algo_ring,
    &xfer_algo_fc_direct, &xfer_algo_relay,       &xfer_algo_relay_full, /* appended: indices are
                                                                            part of the interface */
};

#define NALGOS ((int) (sizeof(registry) / sizeof(registry[0])))

static const struct {
    unsigned flag;
    const char *name, *meaning;
} flag_names[] = {
    {XFER_ALGO_NATIVE, "native", "the MPI library's own collective; libxfer builds no schedule"},
    {XFER_ALGO_AUTO_HALF, "auto_half", "a candidate of auto when one group sends nothing"},
    {XFER_ALGO_AUTO_FULL, "auto_full", "a candidate of auto when both groups send"},
    {XFER_ALGO_RING, "ring",
     "talks to ring neighbours only: usable on a ring topology (auto's only candidates there)"},
    {XFER_ALGO_HALF_ONLY, "half_only",
     "moves data one way only: one group must send 0 bytes (not for duplex: full)"},
    {XFER_ALGO_SPLITS, "splits",
     "may split the groups into subgroups: a plan recounted for other counts may need others"},
};

_Static_assert((XFER_ALGO_NATIVE | XFER_ALGO_AUTO_HALF | XFER_ALGO_AUTO_FULL | XFER_ALGO_RING |
                XFER_ALGO_HALF_ONLY | XFER_ALGO_SPLITS) == XFER_ALGO_FLAGS_ALL,
               "XFER_ALGO_FLAGS_ALL is every flag (and flag_names names each)");

int xfer_algo_count(void)
{
    return NALGOS;
}

const xfer_algo_t *xfer_algo_at(int index)
{
    return index >= 0 && index < NALGOS ? registry[index] : NULL;
}

const xfer_algo_t *xfer_algo_find(const char *name)
{
    int i;
    for (i = 0; name && i < NALGOS; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

int xfer_algo_index(const xfer_algo_t *algo)
{
    int i;
    for (i = 0; algo && i < NALGOS; i++)
        if (registry[i] == algo)
            return i;
    return -1;
}

int xfer_algo_supports(const xfer_algo_t *algo, const xfer_shape_t *shape, const char **why)
{
    *why = "";
    if ((algo->flags & XFER_ALGO_HALF_ONLY) && shape->total[0] > 0 && shape->total[1] > 0) {
        *why = "both groups contribute data (full duplex); this algorithm needs one side to "
               "send 0 bytes";
        return 0;
    }
    return !algo->supports || algo->supports(shape, why);
}

const xfer_algo_t *xfer_select_ring_default(int full_duplex)
{
    const unsigned want =
        XFER_ALGO_RING | (full_duplex ? XFER_ALGO_AUTO_FULL : XFER_ALGO_AUTO_HALF);
    int i;
    for (i = 0; i < NALGOS; i++)
        if ((registry[i]->flags & want) == want)
            return registry[i];
    return NULL;
}

double xfer_algo_predict(const xfer_algo_t *al, const xfer_shape_t *s, const xfer_model_t *m)
{
    double t = al->cost(s, m->alpha, m->beta);
    if (m->max_ppn > 1) { /* ranks share a node: its memory system carries their traffic */
        const int nranks = s->n[0] + s->n[1];
        t += m->gamma * al->volume(s) * XFER_MIN(1.0, (double) m->max_ppn / nranks);
    }
    return t;
}

static int tuning_dir(const xfer_shape_t *shape)
{
    const int half = shape->total[0] == 0 || shape->total[1] == 0;
    return !half ? XFER_DIR_BOTH : shape->total[0] > 0 ? XFER_DIR_A_TO_B : XFER_DIR_B_TO_A;
}

const xfer_tuning_best_t *xfer_select_measured(const xfer_shape_t *shape, const xfer_model_t *m)
{
    const int varied = !xfer_shape_uniform(shape, 0) || !xfer_shape_uniform(shape, 1);
    const size_t bytes = XFER_MAX(shape->total[0] ? xfer_cost_max_count(shape, 0) : 0,
                                  shape->total[1] ? xfer_cost_max_count(shape, 1) : 0);
    if (!m->tuning)
        return NULL;
    return xfer_tuning_match(m->tuning, tuning_dir(shape), shape->n[0], shape->n[1], m->max_ppn,
                             varied, bytes);
}

const xfer_algo_t *xfer_select_auto(const xfer_shape_t *shape, const xfer_model_t *m, char *why,
                                    size_t whylen, int *measured)
{
    const int half = shape->total[0] == 0 || shape->total[1] == 0;
    const unsigned want = half ? XFER_ALGO_AUTO_HALF : XFER_ALGO_AUTO_FULL;
    const xfer_algo_t *best = NULL;
    double best_cost = 0.0;
    int i, w;
    const char *dummy;

    if (measured)
        *measured = 0;
    /* Measured on this machine: the best for the nearest size, any algorithm that can run the
     * call (on a ring topology, a ring-capable one). */
    if (m->tuning) {
        const int dir = tuning_dir(shape);
        const int varied = !xfer_shape_uniform(shape, 0) || !xfer_shape_uniform(shape, 1);
        const xfer_tuning_best_t *b = xfer_select_measured(shape, m);
        const xfer_algo_t *al = b ? xfer_algo_find(b->algo) : NULL;
        if (al && xfer_algo_supports(al, shape, &dummy) && !(al->flags & m->exclude) &&
            (!m->ring || (al->flags & XFER_ALGO_RING))) {
            snprintf(
                why, whylen,
                "auto: measured best for %s p=%d q=%d ppn=%d %s %zu bytes/rank (%s:%d, %.3g s)",
                xfer_tuning_dir_name(dir), shape->n[0], shape->n[1], m->max_ppn,
                varied ? "varied" : "uniform", b->bytes, m->tuning->path, b->line, b->seconds);
            if (measured)
                *measured = 1;
            return al;
        }
    }
    w = snprintf(why, whylen, "auto: %s duplex, %s, %d node(s), <= %d ranks/node, predicted",
                 half ? "half" : "full", m->ring ? "ring" : "fully connected", m->nnodes,
                 m->max_ppn);
    for (i = 0; i < NALGOS; i++) {
        const xfer_algo_t *al = registry[i];
        const int ok = xfer_algo_supports(al, shape, &dummy);
        double c = ok ? xfer_algo_predict(al, shape, m) : 0.0;
        if (w > 0 && (size_t) w < whylen)
            w += ok ? snprintf(why + w, whylen - (size_t) w, " %s=%.3g", al->name, c)
                    : snprintf(why + w, whylen - (size_t) w, " %s=n/a", al->name);
        if (!(al->flags & want) || !ok || !(al->flags & XFER_ALGO_RING) != !m->ring ||
            (al->flags & m->exclude))
            continue;
        if (!best || c < best_cost) {
            best = al;
            best_cost = c;
        }
    }
    return best ? best : xfer_algo_find("root_gather");
}

/* ---- public listing ------------------------------------------------------------------------- */

xfer_status_t xfer_algorithm_count(int *count)
{
    if (!count)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "count is NULL");
    *count = NALGOS;
    return XFER_SUCCESS;
}

xfer_status_t xfer_algorithm_info(int index, xfer_algo_info_t *info)
{
    if (!info || index < 0 || index >= NALGOS)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "no algorithm %d (there are %d)", index, NALGOS);
    info->name = registry[index]->name;
    info->summary = registry[index]->summary;
    info->restrictions = registry[index]->restrictions;
    return XFER_SUCCESS;
}

xfer_status_t xfer_algorithm_flags(int index, unsigned *flags)
{
    if (!flags || index < 0 || index >= NALGOS)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "%s", !flags ? "flags is NULL" : "no such algorithm");
    *flags = registry[index]->flags;
    return XFER_SUCCESS;
}

xfer_status_t xfer_algorithm_flag_info(unsigned flag, const char **name, const char **meaning)
{
    size_t i;
    for (i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++) {
        if (flag_names[i].flag == flag) {
            if (name)
                *name = flag_names[i].name;
            if (meaning)
                *meaning = flag_names[i].meaning;
            return XFER_SUCCESS;
        }
    }
    return XFER_ERR(XFER_ERR_INVALID_ARG, "0x%x is not one algorithm flag", flag);
}
