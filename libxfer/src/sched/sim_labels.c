/* SPDX-License-Identifier: BSD-3-Clause */
/* Label maps of the simulator (sim_labels.h). */
#include <string.h>

#include "../core/core.h"
#include "sim_labels.h"

/* Does @p x continue @p l (then they are one run)? */
static int continues(const run_t *l, const run_t *x)
{
    return l->off + l->len == x->off && l->grp == x->grp && l->goff + l->len == x->goff;
}

int xfer_rv_push(runvec_t *v, run_t x)
{
    if (v->n > 0 && continues(&v->r[v->n - 1], &x)) { /* coalesced */
        v->r[v->n - 1].len += x.len;
        return 1;
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

/* xfer_rv_push into @p v, which has room, holding @p n runs; returns the new count. */
static int append(run_t *v, int n, run_t x)
{
    if (n > 0 && continues(&v[n - 1], &x)) {
        v[n - 1].len += x.len;
        return n;
    }
    v[n] = x;
    return n + 1;
}

enum { RV_STACK = 16 }; /* a put's new runs assembled on the stack: a message has a few */

/* Overwrite [off, off+len) of @p m with @p src (relative offsets, covering the range). */
int xfer_rv_put(runvec_t *m, size_t off, size_t len, const runvec_t *src)
{
    run_t stack[RV_STACK], *mid = stack;
    const size_t end = off + len;
    int i0 = rv_find(m, off), i1 = i0, k, n = 0, grow, ok = 0;
    run_t left = {0, 0, 0, 0}, right = {0, 0, 0, 0};
    int has_left = 0, has_right = 0;

    if (len == 0)
        return 1;
    /* room for src's runs and both neighbours: on the stack unless a message has many */
    if (src->n + 2 > RV_STACK && !(mid = xfer_malloc((size_t) (src->n + 2) * sizeof(run_t))))
        return 0;
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
    if (has_left)
        n = append(mid, n, left);
    for (k = 0; k < src->n; k++) {
        run_t x = src->r[k];
        x.off += off;
        n = append(mid, n, x);
    }
    if (has_right)
        n = append(mid, n, right);
    grow = n - (i1 - i0);
    if (grow > 0 && m->n + grow > m->cap) {
        int cap = XFER_MAX(m->cap * 2, m->n + grow);
        run_t *r = xfer_realloc_array(m->r, (size_t) cap, sizeof(run_t));
        if (!r)
            goto out;
        m->r = r;
        m->cap = cap;
    }
    if (grow != 0 && i1 < m->n)
        memmove(&m->r[i1 + grow], &m->r[i1], (size_t) (m->n - i1) * sizeof(run_t));
    for (k = 0; k < n; k++)
        m->r[i0 + k] = mid[k];
    m->n += grow;
    ok = 1;
out:
    if (mid != stack)
        xfer_free(mid);
    return ok;
}
