/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulator's event queue: operations whose waits are satisfied, posted in the order of the
 * times they become ready (ties in the order they became ready), and the jitter's random delays.
 * Posting in time order makes the ports' free times claimed in time order, so the predicted time
 * of a pipelined schedule holds. Buckets of equal times (sim_int.h) give exactly the order of
 * (time, arrival) that a heap of events gives.
 */
#include <string.h>

#include "sim_int.h"

/* The map's key of time @p t: its bits, with -0.0 and 0.0 one time as they compare equal. */
static uint64_t time_key(double t)
{
    uint64_t u;
    if (t == 0.0)
        t = 0.0;
    memcpy(&u, &t, sizeof(u));
    return u;
}

static void heap_push(sim_queue_t *q, int b)
{
    int i = q->nheap++;
    for (; i > 0 && q->b[b].t < q->b[q->heap[(i - 1) / 2]].t; i = (i - 1) / 2)
        q->heap[i] = q->heap[(i - 1) / 2];
    q->heap[i] = b;
}

static void heap_pop(sim_queue_t *q)
{
    const int last = q->heap[--q->nheap];
    int i = 0, c;
    while ((c = 2 * i + 1) < q->nheap) {
        if (c + 1 < q->nheap && q->b[q->heap[c + 1]].t < q->b[q->heap[c]].t)
            c++;
        if (!(q->b[q->heap[c]].t < q->b[last].t))
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (q->nheap > 0)
        q->heap[i] = last;
}

/* A free bucket for time @p t, empty and in the heap, or -1 when out of memory. */
static int new_bucket(sim_queue_t *q, double t)
{
    int b;
    if (q->b_free == 0) {
        const int cap = q->b_cap ? 2 * q->b_cap : 64;
        sim_bucket_t *nb = xfer_realloc_array(q->b, (size_t) cap, sizeof(*nb));
        int *nh;
        if (!nb)
            return -1;
        q->b = nb;
        nh = xfer_realloc_array(q->heap, (size_t) cap, sizeof(*nh));
        if (!nh)
            return -1;
        q->heap = nh;
        memset(&nb[q->b_cap], 0, (size_t) (cap - q->b_cap) * sizeof(*nb));
        for (b = q->b_cap; b < cap; b++)
            nb[b].next_free = b + 2 <= cap ? b + 2 : 0;
        q->b_free = q->b_cap + 1;
        q->b_cap = cap;
    }
    b = q->b_free - 1;
    q->b_free = q->b[b].next_free;
    q->b[b].t = t;
    q->b[b].head = q->b[b].n = 0;
    heap_push(q, b);
    return b;
}

/* The live bucket of time @p t, created if there is none; -1 when out of memory. */
static int bucket_at(sim_queue_t *q, double t)
{
    uint64_t *slot;
    int b = q->last - 1;
    if (b >= 0 && q->b[b].t == t)
        return b;
    if (q->at.cap == 0 && !xfer_hmap_init(&q->at, 64))
        return -1;
    slot = xfer_hmap_slot(&q->at, time_key(t));
    if (!slot)
        return -1;
    if (*slot == 0) {
        b = new_bucket(q, t);
        if (b < 0) {
            xfer_hmap_erase(&q->at, time_key(t));
            return -1;
        }
        *slot = (uint64_t) b + 1;
    }
    b = (int) *slot - 1;
    q->last = b + 1;
    return b;
}

static void enqueue_at(sim_t *m, int rank, int k, double t, int finish)
{
    sim_queue_t *q = &m->q;
    const int b = bucket_at(q, t);
    sim_bucket_t *B = b < 0 ? NULL : &q->b[b];
    sim_event_t *ev;
    if (B && B->n == B->cap) {
        const int cap = B->cap ? 2 * B->cap : 16;
        ev = xfer_realloc_array(B->ev, (size_t) cap, sizeof(*ev));
        if (ev) {
            B->ev = ev;
            B->cap = cap;
        } else {
            B = NULL;
        }
    }
    if (!B) {
        sim_fail(m, XFER_ERR_NO_MEMORY, "simulator queue");
        return;
    }
    ev = &B->ev[B->n++];
    ev->t = t;
    ev->rank = rank;
    ev->k = k;
    ev->finish = finish;
}

void sim_enqueue(sim_t *m, int rank, int k)
{
    enqueue_at(m, rank, k, m->r[rank].state[k].post, 0);
}

void sim_defer(sim_t *m, int rank, int k, double t)
{
    enqueue_at(m, rank, k, t, 1);
}

int sim_dequeue(sim_t *m, ready_t *out)
{
    sim_queue_t *q = &m->q;
    sim_bucket_t *B;
    const sim_event_t *ev;
    int b;
    if (q->nheap == 0)
        return 0;
    b = q->heap[0];
    B = &q->b[b];
    ev = &B->ev[B->head++];
    out->t = ev->t;
    out->rank = ev->rank;
    out->k = ev->k;
    out->finish = ev->finish;
    if (B->head == B->n) { /* the bucket is done: later events of its time get a new one */
        heap_pop(q);
        xfer_hmap_erase(&q->at, time_key(B->t));
        B->head = B->n = 0;
        B->next_free = q->b_free;
        q->b_free = b + 1;
        if (q->last == b + 1)
            q->last = 0;
    }
    return 1;
}

void sim_queue_free(sim_t *m)
{
    int b;
    for (b = 0; b < m->q.b_cap; b++)
        xfer_free(m->q.b[b].ev);
    xfer_free(m->q.b);
    xfer_free(m->q.heap);
    xfer_hmap_fini(&m->q.at);
    memset(&m->q, 0, sizeof(m->q));
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
