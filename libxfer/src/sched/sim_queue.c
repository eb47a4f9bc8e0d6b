/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulator's event queue: operations whose waits are satisfied, posted in the order of the
 * times they become ready (ties in the order they became ready), and the jitter's random delays.
 */
#include "sim_int.h"

static int earlier(const ready_t *a, const ready_t *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* Post operations in the order of the times they become ready, so that the ports' free times
 * are claimed in time order and the predicted time of a pipelined schedule holds. */
static void enqueue_at(sim_t *m, int rank, int k, double t, int finish)
{
    ready_t x;
    size_t i;
    if (m->nheap == m->heap_cap) {
        size_t cap = m->heap_cap ? m->heap_cap * 2 : 4096;
        ready_t *h = xfer_realloc_array(m->heap, cap, sizeof(*h));
        if (!h) {
            sim_fail(m, XFER_ERR_NO_MEMORY, "simulator queue");
            return;
        }
        m->heap = h;
        m->heap_cap = cap;
    }
    x.t = t;
    x.seq = m->seq++;
    x.rank = rank;
    x.k = k;
    x.finish = finish;
    for (i = m->nheap++; i > 0 && earlier(&x, &m->heap[(i - 1) / 2]); i = (i - 1) / 2)
        m->heap[i] = m->heap[(i - 1) / 2];
    m->heap[i] = x;
}

void sim_enqueue(sim_t *m, int rank, int k)
{
    enqueue_at(m, rank, k, m->r[rank].post[k], 0);
}

void sim_defer(sim_t *m, int rank, int k, double t)
{
    enqueue_at(m, rank, k, t, 1);
}

double sim_rand01(sim_t *m)
{
    m->rng ^= m->rng << 13; /* xorshift64 */
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return (double) (m->rng >> 11) / 9007199254740992.0;
}

double sim_delay(sim_t *m, int rank)
{
    return m->o.jitter > 0 && m->slow ? m->o.jitter * m->slow[rank] * sim_rand01(m) : 0.0;
}

ready_t sim_dequeue(sim_t *m)
{
    const ready_t top = m->heap[0], last = m->heap[--m->nheap];
    size_t i = 0, c;
    while ((c = 2 * i + 1) < m->nheap) {
        if (c + 1 < m->nheap && earlier(&m->heap[c + 1], &m->heap[c]))
            c++;
        if (!earlier(&m->heap[c], &last))
            break;
        m->heap[i] = m->heap[c];
        i = c;
    }
    if (m->nheap > 0)
        m->heap[i] = last;
    return top;
}
