/* SPDX-License-Identifier: BSD-3-Clause */
/* Label maps of the simulator (sim_labels.h). */
#include <string.h>

#include "../core/core.h"
#include "sim_labels.h"

int xfer_rv_push(runvec_t *v, run_t x)
{
    if (v->n > 0) { /* coalesce with the previous run when it continues it */
        run_t *l = &v->r[v->n - 1];
        if (l->off + l->len == x.off && l->grp == x.grp && l->goff + l->len == x.goff) {
            l->len += x.len;
            return 1;
        }
    }
    if (v->n == v->cap) {
        int cap = v->cap ? v->cap * 2 : 4;
        run_t *n = xfer_realloc_array(v->r, (size_t) cap, sizeof(run_t));
        if (!n)
            return 0;
        v->r = n;
        v->cap = cap;
    }
    v->r[v->n++] = x;
    return 1;
}

void xfer_rv_free(runvec_t *v)
{
    xfer_free(v->r);
    memset(v, 0, sizeof(*v));
}

/* First run of @p m ending after @p off. */
static int rv_find(const runvec_t *m, size_t off)
{
    int lo = 0, hi = m->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (m->r[mid].off + m->r[mid].len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The labels of [off, off+len) appended to @p out (offsets relative to @p off + @p rel).
 * Returns 0 when part of the range holds nothing; *@p gap is then its first byte. */
int xfer_rv_get(const runvec_t *m, size_t off, size_t len, size_t rel, runvec_t *out, size_t *gap)
{
    size_t pos = off, end = off + len;
    int i = rv_find(m, off);
    while (pos < end) {
        run_t x;
        if (i >= m->n || m->r[i].off > pos) {
            *gap = pos;
            return 0;
        }
        x.off = rel + (pos - off);
        x.len = XFER_MIN(end, m->r[i].off + m->r[i].len) - pos;
        x.goff = m->r[i].goff + (pos - m->r[i].off);
        x.grp = m->r[i].grp;
        if (!xfer_rv_push(out, x)) {
            *gap = (size_t) -1;
            return 0;
        }
        pos += x.len;
        i++;
    }
    return 1;
}

enum { RV_STACK = 16 }; /* a put's new runs assembled on the stack: a message has a few */

/* Overwrite [off, off+len) of @p m with @p src (relative offsets, covering the range). */
int xfer_rv_put(runvec_t *m, size_t off, size_t len, const runvec_t *src)
{
    run_t stack[RV_STACK];
    runvec_t mid = {NULL, 0, 0};
    size_t end = off + len;
    int i0 = rv_find(m, off), i1 = i0, k, keep, grow, ok = 0;
    run_t left, right;
    int has_left = 0, has_right = 0;

    if (len == 0)
        return 1;
    if (src->n + 2 <= RV_STACK) { /* room for src and both neighbours: pushes never grow it */
        mid.r = stack;
        mid.cap = RV_STACK;
    }
    while (i1 < m->n && m->r[i1].off < end)
        i1++;
    if (i0 < i1 && m->r[i0].off < off) {
        left = m->r[i0];
        left.len = off - left.off;
        has_left = 1;
    }
    if (i0 < i1 && m->r[i1 - 1].off + m->r[i1 - 1].len > end) {
        right = m->r[i1 - 1];
        right.goff += end - right.off;
        right.len = right.off + right.len - end;
        right.off = end;
        has_right = 1;
    }
    /* the previous and next untouched runs join in so the result stays coalesced */
    if (i0 > 0 && !has_left) {
        i0--;
        left = m->r[i0];
        has_left = 1;
    }
    if (i1 < m->n && !has_right) {
        right = m->r[i1];
        i1++;
        has_right = 1;
    }
    if (has_left && !xfer_rv_push(&mid, left))
        goto out;
    for (k = 0; k < src->n; k++) {
        run_t x = src->r[k];
        x.off += off;
        if (!xfer_rv_push(&mid, x))
            goto out;
    }
    if (has_right && !xfer_rv_push(&mid, right))
        goto out;
    keep = i1 - i0;
    grow = mid.n - keep;
    if (grow > 0 && m->n + grow > m->cap) {
        int cap = XFER_MAX(m->cap * 2, m->n + grow);
        run_t *n = xfer_realloc_array(m->r, (size_t) cap, sizeof(run_t));
        if (!n)
            goto out;
        m->r = n;
        m->cap = cap;
    }
    if (grow != 0 && i1 < m->n)
        memmove(&m->r[i1 + grow], &m->r[i1], (size_t) (m->n - i1) * sizeof(run_t));
    if (mid.n)
        memcpy(&m->r[i0], mid.r, (size_t) mid.n * sizeof(run_t));
    m->n += grow;
    ok = 1;
out:
    if (mid.r != stack)
        xfer_rv_free(&mid);
    return ok;
}
