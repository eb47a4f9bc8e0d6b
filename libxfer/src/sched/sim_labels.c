/* SPDX-License-Identifier: BSD-3-Clause */
/* Label maps of the simulator (sim_labels.h). */
#include <string.h>

#include "../core/core.h"
#include "sim_labels.h"

/* Append the run (off, len, goff, grp) to the @p n runs of @p v, which has room, coalesced
 * with the last one when it continues it; returns the new count. Fields, not a run_t by
 * value: the copies through the stack were a good part of a message's cost. */
static int append(run_t *v, int n, size_t off, size_t len, size_t goff, int grp)
{
    if (n > 0) {
        run_t *l = &v[n - 1];
        if (l->off + l->len == off && l->grp == grp && l->goff + l->len == goff) {
            l->len += len;
            return n;
        }
    }
    v[n].off = off;
    v[n].len = len;
    v[n].goff = goff;
    v[n].grp = grp;
    return n + 1;
}

/* Room for one more run in @p v; 0 when out of memory. */
static int room(runvec_t *v)
{
    if (v->n == v->cap) {
        int cap = v->cap ? v->cap * 2 : 4;
        run_t *n = xfer_realloc_array(v->r, (size_t) cap, sizeof(run_t));
        if (!n)
            return 0;
        v->r = n;
        v->cap = cap;
    }
    return 1;
}

int xfer_rv_push(runvec_t *v, run_t x)
{
    if (!room(v))
        return 0;
    v->n = append(v->r, v->n, x.off, x.len, x.goff, x.grp);
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
        const run_t *r;
        size_t n;
        if (i >= m->n || m->r[i].off > pos) {
            *gap = pos;
            return 0;
        }
        r = &m->r[i];
        if (!room(out)) {
            *gap = (size_t) -1;
            return 0;
        }
        n = XFER_MIN(end, r->off + r->len) - pos;
        out->n = append(out->r, out->n, rel + (pos - off), n, r->goff + (pos - r->off), r->grp);
        pos += n;
        i++;
    }
    return 1;
}

enum { RV_STACK = 16 }; /* a put's new runs assembled on the stack: a message has a few */

/* Overwrite [off, off+len) of @p m with @p src (relative offsets, covering the range). */
int xfer_rv_put(runvec_t *m, size_t off, size_t len, const runvec_t *src)
{
    run_t stack[RV_STACK], *mid = stack;
    const size_t end = off + len;
    int i0 = rv_find(m, off), i1 = i0, k, n = 0, grow, ok = 0, cut_left, cut_right;

    if (len == 0)
        return 1;
    /* room for src's runs and both neighbours: on the stack unless a message has many */
    if (src->n + 2 > RV_STACK && !(mid = xfer_malloc((size_t) (src->n + 2) * sizeof(run_t))))
        return 0;
    while (i1 < m->n && m->r[i1].off < end)
        i1++;
    /* runs [i0, i1) overlap the range: the parts of the first and last outside it stay; else
     * the previous and next untouched runs join in, so the result stays coalesced */
    cut_left = i0 < i1 && m->r[i0].off < off;
    cut_right = i0 < i1 && m->r[i1 - 1].off + m->r[i1 - 1].len > end;
    if (cut_left) {
        const run_t *r = &m->r[i0];
        n = append(mid, n, r->off, off - r->off, r->goff, r->grp);
    } else if (i0 > 0) {
        const run_t *r = &m->r[--i0];
        n = append(mid, n, r->off, r->len, r->goff, r->grp);
    }
    for (k = 0; k < src->n; k++) {
        const run_t *x = &src->r[k];
        n = append(mid, n, x->off + off, x->len, x->goff, x->grp);
    }
    if (cut_right) {
        const run_t *r = &m->r[i1 - 1];
        n = append(mid, n, end, r->off + r->len - end, r->goff + (end - r->off), r->grp);
    } else if (i1 < m->n) {
        const run_t *r = &m->r[i1++];
        n = append(mid, n, r->off, r->len, r->goff, r->grp);
    }
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
    if (n > 0)
        memcpy(&m->r[i0], mid, (size_t) n * sizeof(run_t));
    m->n += grow;
    ok = 1;
out:
    if (mid != stack)
        xfer_free(mid);
    return ok;
}
