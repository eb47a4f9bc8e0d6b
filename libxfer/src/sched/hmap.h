/* SPDX-License-Identifier: BSD-3-Clause */
/* A small open-addressing hash map from 64-bit keys to 64-bit values (the simulator's
 * matching tables). Key UINT64_MAX is reserved. */
#ifndef XFER_HMAP_H
#define XFER_HMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct xfer_hmap {
    uint64_t *keys;
    uint64_t *vals;
    size_t cap, used, tomb;
} xfer_hmap_t;

int xfer_hmap_init(xfer_hmap_t *m, size_t expect);
void xfer_hmap_fini(xfer_hmap_t *m);
/* Returns a pointer to the value slot, inserting (value 0) if absent; NULL on no memory. */
uint64_t *xfer_hmap_slot(xfer_hmap_t *m, uint64_t key);
/* Returns a pointer to the value or NULL if absent. */
uint64_t *xfer_hmap_find(const xfer_hmap_t *m, uint64_t key);
void xfer_hmap_erase(xfer_hmap_t *m, uint64_t key);

#endif /* XFER_HMAP_H */
