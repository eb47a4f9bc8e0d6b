/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "../core/core.h"
#include "hmap.h"

#define EMPTY UINT64_MAX
#define TOMB  (UINT64_MAX - 1)

static size_t hash64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return (size_t) k;
}

static int alloc_tables(xfer_hmap_t *m, size_t cap)
{
    size_t i;
    m->keys = xfer_malloc(cap * sizeof(uint64_t));
    m->vals = xfer_malloc(cap * sizeof(uint64_t));
    if (!m->keys || !m->vals) {
        xfer_free(m->keys);
        xfer_free(m->vals);
        m->keys = m->vals = NULL;
        return 0;
    }
    for (i = 0; i < cap; i++)
        m->keys[i] = EMPTY;
    m->cap = cap;
    m->used = m->tomb = 0;
    return 1;
}

int xfer_hmap_init(xfer_hmap_t *m, size_t expect)
{
    size_t cap = 64;
    while (cap < 2 * expect)
        cap *= 2;
    return alloc_tables(m, cap);
}

void xfer_hmap_fini(xfer_hmap_t *m)
{
    xfer_free(m->keys);
    xfer_free(m->vals);
    memset(m, 0, sizeof(*m));
}

static int rehash(xfer_hmap_t *m, size_t cap)
{
    xfer_hmap_t n;
    size_t i;
    if (!alloc_tables(&n, cap))
        return 0;
    for (i = 0; i < m->cap; i++)
        if (m->keys[i] != EMPTY && m->keys[i] != TOMB)
            *xfer_hmap_slot(&n, m->keys[i]) = m->vals[i];
    xfer_hmap_fini(m);
    *m = n;
    return 1;
}

uint64_t *xfer_hmap_find(const xfer_hmap_t *m, uint64_t key)
{
    size_t mask = m->cap - 1, i = hash64(key) & mask;
    while (m->keys[i] != EMPTY) {
        if (m->keys[i] == key)
            return &m->vals[i];
        i = (i + 1) & mask;
    }
    return NULL;
}

uint64_t *xfer_hmap_slot(xfer_hmap_t *m, uint64_t key)
{
    size_t mask, i;
    uint64_t *v = xfer_hmap_find(m, key);

    if (v)
        return v;
    if ((m->used + m->tomb + 1) * 4 > m->cap * 3 &&
        !rehash(m, m->used * 4 > m->cap ? m->cap * 2 : m->cap))
        return NULL;
    mask = m->cap - 1;
    i = hash64(key) & mask;
    while (m->keys[i] != EMPTY && m->keys[i] != TOMB)
        i = (i + 1) & mask;
    if (m->keys[i] == TOMB)
        m->tomb--;
    m->keys[i] = key;
    m->vals[i] = 0;
    m->used++;
    return &m->vals[i];
}

void xfer_hmap_erase(xfer_hmap_t *m, uint64_t key)
{
    uint64_t *v = xfer_hmap_find(m, key);
    if (!v)
        return;
    m->keys[v - m->vals] = TOMB;
    m->used--;
    m->tomb++;
}
