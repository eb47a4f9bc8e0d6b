/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-synth: variable shapes (dims entries `variable`; docs/runtime.md, "Shapes that change").
 *
 * Each step, the dataset's global shape is drawn from --seed for (channel, dataset, step), and
 * so is the way the sending ranks split it into blocks that tile it exactly: every rank of
 * either side computes both without a message. The shapes cycle through four kinds, from an
 * offset drawn per dataset, so that any four consecutive steps hold each: extents drawn anywhere
 * up to the most, one variable extent 0 (--no-empty-steps: 1), large extents, and extents of 1
 * or 2 (fewer elements than senders). The blocks cycle through three: slabs along a drawn
 * dimension cut at drawn places (uneven, some empty) and dealt to the ranks in a drawn order; a
 * grid over two drawn dimensions when the senders factor (else slabs for a drawn number of
 * them, the others empty); every element on one drawn rank. A rank whose block is empty puts a
 * block of 0 elements or does not put at all (both legal; drawn, but some rank always puts, so
 * that the step has a shape). Values are the pattern keyed on the element's global index in the
 * step's shape; a receiver checks them as tools/synth/shape.c says. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#define XFER_XALLOC_PROG "xfer-synth"
#define XFER_XALLOC_EXIT 1
#include "common/xalloc.h"

enum { S_DRAWN, S_ZERO, S_LARGE, S_SMALL };
enum { B_SLABS, B_GRID, B_ONE };

typedef struct vblock {
    uint64_t start[XFER_MAX_DIMS], count[XFER_MAX_DIMS];
    int puts; /* the rank puts the dataset (an empty block may not) */
} vblock_t;

static int senders_of(const xfer_cfg_dataset_t *d)
{
    return cfg->components[d->from].nprocs;
}

static int varies(const xfer_cfg_dataset_t *d, int k)
{
    return (d->variable >> k) & 1u;
}

/* The most a variable extent reaches: smaller with more of them, a step stays small. */
static uint64_t extent_max(const xfer_cfg_dataset_t *d)
{
    int k, n = 0;
    for (k = 0; k < d->ndims; k++)
        n += varies(d, k);
    return n <= 1 ? 24 : n == 2 ? 10 : 5;
}

/* A draw for dataset j of channel i in step s (s + 1: 0 keys what holds for every step). */
static uint64_t vdraw(int what, int i, int j, uint64_t s, uint64_t item)
{
    return synth_draw((uint64_t) what, (uint64_t) i, (uint64_t) j, s + 1, item);
}

/* The global shape of dataset j of channel i in step s. */
static void step_shape(int i, int j, uint64_t s, uint64_t *dims)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const uint64_t e = extent_max(d);
    const uint64_t kind = (s + synth_draw(R_VSHAPE, (uint64_t) i, (uint64_t) j, 0, 0)) % 4;
    uint64_t zero = vdraw(R_VSHAPE, i, j, s, 0) % (uint64_t) d->ndims;
    int k;
    while (!varies(d, (int) zero)) /* the variable extent that is 0 in an S_ZERO step */
        zero = (zero + 1) % (uint64_t) d->ndims;
    for (k = 0; k < d->ndims; k++) {
        const uint64_t r = vdraw(R_VSHAPE, i, j, s, (uint64_t) k + 1);
        if (!varies(d, k)) {
            dims[k] = d->dims[k];
            continue;
        }
        switch (kind) {
        case S_DRAWN:
            dims[k] = r % (e + 1);
            break;
        case S_ZERO:
            dims[k] = (uint64_t) k == zero ? 0 : 1 + r % e;
            break;
        case S_LARGE:
            dims[k] = e / 2 + r % (e - e / 2 + 1);
            break;
        default:
            dims[k] = 1 + r % 2;
        }
        if (dims[k] == 0 && o.no_empty_steps)
            dims[k] = 1;
    }
}

/* Boundaries b[0] = 0 <= b[1] <= ... <= b[n] = len of n pieces of len, cut at drawn places. */
static void cuts(int i, int j, uint64_t s, uint64_t item, uint64_t len, int n, uint64_t *b)
{
    int t, u;
    b[0] = 0;
    b[n] = len;
    for (t = 1; t < n; t++) {
        const uint64_t c = vdraw(R_VBLOCK, i, j, s, item + (uint64_t) t) % (len + 1);
        for (u = t; u > 1 && b[u - 1] > c; u--) /* insertion sort of the cuts */
            b[u] = b[u - 1];
        b[u] = c;
    }
}

/* Every sending rank's block (of p) of dataset j of channel i in step s, of shape @p dims. */
static void step_blocks(int i, int j, uint64_t s, const uint64_t *dims, int p, vblock_t *blk)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const int nd = d->ndims, k1 = (int) (vdraw(R_VBLOCK, i, j, s, 1) % (uint64_t) nd);
    const uint64_t kind = (s + synth_draw(R_VBLOCK, (uint64_t) i, (uint64_t) j, 0, 0)) % 3;
    uint64_t *b1 = xchecked(calloc((size_t) p + 1, sizeof(*b1)));
    uint64_t *b2 = xchecked(calloc((size_t) p + 1, sizeof(*b2))), vol = 0;
    int *perm = xchecked(calloc((size_t) p, sizeof(*perm)));
    int r, t, u, k, a = 1, m = p, any = 0;

    for (r = 0; r < p; r++) { /* a drawn order of the ranks */
        perm[r] = r;
        memset(&blk[r], 0, sizeof(blk[r]));
    }
    for (t = p - 1; t > 0; t--) {
        const int w = (int) (vdraw(R_VBLOCK, i, j, s, 200 + (uint64_t) t) % (uint64_t) (t + 1));
        const int x = perm[t];
        perm[t] = perm[w];
        perm[w] = x;
    }
    for (a = 2; a < p && (p % a != 0 || p / a < 2); a++)
        ; /* the least factor of p that leaves a second one of 2 or more */
    if (kind == B_ONE) {
        r = (int) (vdraw(R_VBLOCK, i, j, s, 3) % (uint64_t) p);
        memcpy(blk[r].count, dims, (size_t) nd * sizeof(uint64_t));
    } else if (kind == B_GRID && nd >= 2 && a < p) { /* a x (p / a) over dims k1 and k2 */
        const int k2 = (k1 + 1 + (int) (vdraw(R_VBLOCK, i, j, s, 2) % (uint64_t) (nd - 1))) % nd;
        const int bcuts = p / a;
        cuts(i, j, s, 10, dims[k1], a, b1);
        cuts(i, j, s, 100, dims[k2], bcuts, b2);
        for (t = 0; t < a; t++)
            for (u = 0; u < bcuts; u++) {
                vblock_t *v = &blk[perm[t * bcuts + u]];
                memcpy(v->count, dims, (size_t) nd * sizeof(uint64_t));
                v->start[k1] = b1[t];
                v->count[k1] = b1[t + 1] - b1[t];
                v->start[k2] = b2[u];
                v->count[k2] = b2[u + 1] - b2[u];
            }
    } else { /* slabs along k1: for every rank, or (B_GRID unfit) a drawn number of them */
        if (kind == B_GRID)
            m = 1 + (int) (vdraw(R_VBLOCK, i, j, s, 4) % (uint64_t) p);
        cuts(i, j, s, 10, dims[k1], m, b1);
        for (t = 0; t < m; t++) {
            vblock_t *v = &blk[perm[t]];
            memcpy(v->count, dims, (size_t) nd * sizeof(uint64_t));
            v->start[k1] = b1[t];
            v->count[k1] = b1[t + 1] - b1[t];
        }
    }
    for (r = 0; r < p; r++) {
        const uint64_t n = synth_vol(nd, blk[r].count);
        vol += n;
        blk[r].puts = n > 0 || vdraw(R_VBLOCK, i, j, s, 300 + (uint64_t) r) % 2 == 0;
        any |= blk[r].puts;
    }
    if (!any) /* a step nobody puts has no shape: rank 0 puts its empty block */
        blk[0].puts = 1;
    if (vol != synth_vol(nd, dims))
        FAIL("channel %s dataset %s step %" PRIu64 ": xfer-synth's own blocks hold %" PRIu64
             " elements of %" PRIu64 " (a bug in tools/synth/variable.c)",
             cfg->channels[i].name, d->name, s, vol, synth_vol(nd, dims));
    for (k = 0; k < nd; k++) /* (a block is inside the shape) */
        for (r = 0; r < p; r++)
            if (blk[r].start[k] + blk[r].count[k] > dims[k])
                FAIL("channel %s dataset %s step %" PRIu64 ": xfer-synth's block of rank %d "
                     "leaves the shape (a bug in tools/synth/variable.c)",
                     cfg->channels[i].name, d->name, s, r);
    free(b1);
    free(b2);
    free(perm);
}

int synth_variable_declare(int i, int j, const char *pick)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const uint64_t e = extent_max(d), dd = (uint64_t) d->ndims;
    uint64_t n[XFER_MAX_DIMS] = {0}, kind = 0, slab;
    decl_t b;
    int k;
    if (!pick && !(o.seeded && d->selection == XFER_SELECT_USER))
        return 0;
    /* boxes are declared before step 0, against a typical step (e / 2 in a variable extent):
     * some steps are smaller (the box is clipped, perhaps to nothing), some larger; a box is
     * checked against the fixed extents only, so it may reach past every step in the others */
    memset(&b, 0, sizeof(b));
    b.declared = 1;
    for (k = 0; k < d->ndims; k++) {
        n[k] = varies(d, k) ? e / 2 : d->dims[k];
        b.count[k] = varies(d, k) ? 4 * e : d->dims[k]; /* past every step's end */
        if (n[k] == 0)
            FAIL("channel %s: dataset %s has an extent of 0", cfg->channels[i].name, d->name);
    }
    slab = (n[0] + (uint64_t) csize - 1) / (uint64_t) csize;
    if (!pick) /* one kind per rank, from an offset drawn per dataset */
        kind = (synth_draw(R_VSELECT, (uint64_t) comp, (uint64_t) i, (uint64_t) j, 0) +
                (uint64_t) crank) %
               4;
    if ((pick && strcmp(pick, "all") == 0) ||
        (pick && strcmp(pick, "mixed") == 0 && crank % 2 == 0) || (!pick && kind == 0)) {
        b.whole = 1; /* xfer_select(NULL, NULL): all of every step */
    } else if (pick && (strcmp(pick, "overlap") == 0 || strcmp(pick, "mixed") == 0)) {
        b.start[0] = (uint64_t) crank * slab; /* two slabs: each overlaps the next rank's */
        b.count[0] = 2 * slab;
        if (!varies(d, 0)) { /* within a fixed extent */
            b.start[0] = b.start[0] < n[0] - 1 ? b.start[0] : n[0] - 1;
            b.count[0] = b.count[0] < n[0] - b.start[0] ? b.count[0] : n[0] - b.start[0];
        }
    } else if (pick && strcmp(pick, "corner") == 0) {
        for (k = 0; k < d->ndims; k++)
            b.count[k] = (n[k] + 1) / 2;
    } else if (pick && strcmp(pick, "none") == 0) {
        for (k = 0; k < d->ndims; k++)
            b.count[k] = 0;
    } else if (pick) {
        FAIL("--select %s: expected overlap, mixed, corner, none or all", pick);
    } else if (kind == 1) { /* nothing, whatever the step holds */
        b.count[synth_draw(R_VSELECT, (uint64_t) comp, (uint64_t) crank, (uint64_t) j, 1) % dd] = 0;
    } else {
        for (k = 0; k < d->ndims; k++) {
            const uint64_t r1 = synth_draw(R_VSELECT, (uint64_t) crank, (uint64_t) j, (uint64_t) k,
                                           2),
                           r2 = synth_draw(R_VSELECT, (uint64_t) crank, (uint64_t) j, (uint64_t) k,
                                           3);
            b.start[k] = r1 % n[k];
            if (kind == 2) /* from there on, past every step's end: clipped to each step */
                b.count[k] = varies(d, k) ? 4 * e : d->dims[k] - b.start[k];
            else /* a box inside a typical step */
                b.count[k] = 1 + r2 % (n[k] - b.start[k]);
        }
    }
    synth_declare(i, j, &b);
    return 1;
}

size_t synth_variable_bind_bytes(int i, const xfer_cfg_dataset_t *d, int sending)
{
    const uint64_t e = extent_max(d);
    uint64_t c[XFER_MAX_DIMS];
    int k;
    /* a sender: the largest step (one rank may hold all of it); a receiver: a typical step,
     * which some of its selections exceed */
    for (k = 0; k < d->ndims; k++)
        c[k] = !varies(d, k) ? d->dims[k] : sending ? e : e / 2;
    return synth_box_bytes(cfg->channels[i].name, d, c);
}

/* --report: the step's shape and every sending rank's block ('*': it does not put). */
static void report(int i, int j, uint64_t s, const uint64_t *dims, int p, const vblock_t *blk)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    int r, k;
    printf("xfer-synth-shape component=%s channel=%s dataset=%s step=%" PRIu64 " dims=", me,
           cfg->channels[i].name, d->name, s);
    for (k = 0; k < d->ndims; k++)
        printf("%s%" PRIu64, k ? "," : "", dims[k]);
    printf(" blocks=");
    for (r = 0; r < p; r++) {
        printf("%s[", r ? "," : "");
        for (k = 0; k < d->ndims; k++)
            printf("%s%" PRIu64 ":%" PRIu64, k ? "," : "", blk[r].start[k],
                   blk[r].start[k] + blk[r].count[k]);
        printf("]%s", blk[r].puts ? "" : "*");
    }
    printf("\n");
    fflush(stdout);
}

int synth_variable_put(int i, int j, uint64_t s)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    const int p = senders_of(d);
    vblock_t *blk = xchecked(calloc((size_t) p, sizeof(*blk)));
    uint64_t dims[XFER_MAX_DIMS];
    xfer_dataset_desc_t desc;
    synth_layout_t own;
    size_t bytes;
    char *buf;
    int k, ok = 1;

    if (p != csize)
        FAIL("channel %s: dataset %s: the workflow file says %d sending ranks, %s has %d",
             cfg->channels[i].name, d->name, p, me, csize);
    step_shape(i, j, s, dims);
    step_blocks(i, j, s, dims, p, blk);
    if (o.report && crank == 0)
        report(i, j, s, dims, p, blk);
    if (!blk[crank].puts) {
        free(blk);
        return 1;
    }
    memset(&desc, 0, sizeof(desc));
    desc.name = d->name;
    desc.type = d->type;
    desc.ndims = d->ndims;
    synth_record_desc(d, s, &desc, &own);
    memcpy(desc.dims, dims, sizeof(desc.dims));
    memcpy(desc.start, blk[crank].start, sizeof(desc.start));
    memcpy(desc.count, blk[crank].count, sizeof(desc.count));
    bytes = synth_box_bytes(cfg->channels[i].name, d, desc.count);
    buf = o.bind ? bnd[BND(i, j, s)]
                 : synth_data_alloc(cfg->channels[i].name, d, bytes, 0, "this rank's block");
    if (strcmp(o.put_order, "twice") == 0) {
        /* first a shape one longer in a variable extent, with wrong data: the second put
         * replaces the shape as well as the block */
        xfer_dataset_desc_t wrong = desc;
        for (k = 0; k < d->ndims && !varies(d, k); k++)
            ;
        wrong.dims[k]++;
        memset(buf, 0xa5, bytes);
        CHCALL(ok, i, s, xfer_put(chs[i].h, &wrong, buf));
    }
    if (ok) {
        synth_fill(d, dims, i, j, s, desc.start, desc.count, buf);
        CHCALL(ok, i, s, xfer_put(chs[i].h, &desc, buf));
    }
    if (!o.bind)
        free(buf);
    free(blk);
    return ok;
}

int synth_variable_get(int i, int j, uint64_t s)
{
    const xfer_cfg_dataset_t *d = &cfg->channels[i].datasets[j];
    uint64_t dims[XFER_MAX_DIMS];
    step_shape(i, j, s, dims);
    return synth_shape_get(i, j, s, dims, o.bind ? synth_variable_bind_bytes(i, d, 0) : 0, NULL);
}
