/* SPDX-License-Identifier: BSD-3-Clause */
/* Node layouts of both groups, node communicators and stripe intercommunicators. */
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "topo.h"

void xfer_nodes_free(xfer_nodes_t *n)
{
    xfer_free(n->node_of);
    xfer_free(n->slot_of);
    xfer_free(n->node_size);
    xfer_free(n->node_first);
    xfer_free(n->members);
    memset(n, 0, sizeof(*n));
}

/* Build group layout @p L of @p n ranks from each rank's node key (keys grow with the lowest
 * rank of their node, so ranking distinct keys numbers nodes by lowest rank). */
static xfer_status_t build_layout(xfer_nodes_t *L, int n, const int *key, int is_virtual)
{
    int *sorted = NULL, i, m;
    xfer_status_t st = XFER_SUCCESS;

    memset(L, 0, sizeof(*L));
    L->n = n;
    L->is_virtual = is_virtual;
    L->node_of = xfer_malloc((size_t) n * sizeof(int));
    L->slot_of = xfer_malloc((size_t) n * sizeof(int));
    L->members = xfer_malloc((size_t) n * sizeof(int));
    sorted = xfer_malloc((size_t) n * sizeof(int));
    if (!L->node_of || !L->slot_of || !L->members || !sorted) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "node layout of %d ranks", n);
        goto out;
    }
    /* distinct keys in increasing order -> node ids */
    memcpy(sorted, key, (size_t) n * sizeof(int));
    for (i = 1; i < n; i++) { /* insertion sort: n is a group size, done once */
        int v = sorted[i], j = i;
        while (j > 0 && sorted[j - 1] > v) {
            sorted[j] = sorted[j - 1];
            j--;
        }
        sorted[j] = v;
    }
    for (i = 0, m = 0; i < n; i++)
        if (i == 0 || sorted[i] != sorted[i - 1])
            sorted[m++] = sorted[i];
    L->nnodes = m;
    L->node_size = xfer_calloc((size_t) m, sizeof(int));
    L->node_first = xfer_calloc((size_t) m + 1, sizeof(int));
    if (!L->node_size || !L->node_first) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "node layout of %d nodes", m);
        goto out;
    }
    for (i = 0; i < n; i++) {
        int lo = 0, hi = m - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (sorted[mid] < key[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        L->node_of[i] = lo;
        L->slot_of[i] = L->node_size[lo]++; /* ranks visited in order: slots by rank */
    }
    for (i = 0; i < m; i++)
        L->node_first[i + 1] = L->node_first[i] + L->node_size[i];
    L->min_ppn = n;
    for (i = 0; i < n; i++)
        L->members[L->node_first[L->node_of[i]] + L->slot_of[i]] = i;
    L->block = 1;
    for (i = 0; i < n; i++)
        if (L->members[i] != i)
            L->block = 0;
    for (i = 0; i < m; i++) {
        L->min_ppn = XFER_MIN(L->min_ppn, L->node_size[i]);
        L->max_ppn = XFER_MAX(L->max_ppn, L->node_size[i]);
    }
out:
    xfer_free(sorted);
    if (st != XFER_SUCCESS)
        xfer_nodes_free(L);
    return st;
}

/* Node key of rank @p r of @p n on virtual nodes of @p k ranks (XFER_NODE_SIZE, XFER_NODE_MAP). */
static int virtual_key(int r, int n, long k, int roundrobin)
{
    const int nn = (int) ((n + k - 1) / k);
    return roundrobin ? r % nn : (int) (r / k);
}

xfer_status_t xfer_nodes_virtual(xfer_nodes_t *L, int n, int k, int roundrobin)
{
    int *keys, r;
    xfer_status_t st;
    if (n < 1 || k < 1)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "virtual nodes of %d ranks for %d ranks", k, n);
    keys = xfer_malloc((size_t) n * sizeof(int));
    if (!keys)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "node keys of %d ranks", n);
    for (r = 0; r < n; r++)
        keys[r] = virtual_key(r, n, k, roundrobin);
    st = build_layout(L, n, keys, 1);
    xfer_free(keys);
    return st;
}

xfer_status_t xfer_node_split(MPI_Comm local, int rank, int n, MPI_Comm *nc, int *key,
                              int *is_virtual)
{
    const long k = xfer_env_long("XFER_NODE_SIZE", 0);
    const char *map = xfer_env_str("XFER_NODE_MAP");
    xfer_status_t st = XFER_SUCCESS;

    *nc = MPI_COMM_NULL;
    if (k < 0)
        return XFER_ERR(XFER_ERR_CONFIG, "XFER_NODE_SIZE=%ld must be >= 0", k);
    if (map && strcmp(map, "block") != 0 && strcmp(map, "roundrobin") != 0)
        return XFER_ERR(XFER_ERR_CONFIG, "XFER_NODE_MAP=\"%s\": expected block or roundrobin", map);
    if (k > 0) { /* virtual nodes on one host */
        *key = virtual_key(rank, n, k, map && strcmp(map, "roundrobin") == 0);
        *is_virtual = 1;
        XFER_MPI_GOTO(MPI_Comm_split(local, *key, rank, nc), st, out);
    } else {
        XFER_MPI_GOTO(MPI_Comm_split_type(local, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, nc), st,
                      out);
        XFER_MPI_GOTO(MPI_Allreduce(&rank, key, 1, MPI_INT, MPI_MIN, *nc), st, out);
        *is_virtual = 0;
    }
out:
    if (st != XFER_SUCCESS)
        xfer_comm_release(nc);
    return st;
}

xfer_status_t xfer_topo_nodes(xfer_topo_t *t)
{
    const int g = t->group, n = t->n[g], N = t->n[0] + t->n[1];
    int mine[2], *all = NULL, *keys = NULL, i, gg;
    xfer_status_t st = XFER_SUCCESS;
    MPI_Comm nc = MPI_COMM_NULL;

    if (t->hm->have_nodes)
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(xfer_node_split(t->local, t->rank, n, &nc, &mine[0], &mine[1]), st, out);
    XFER_MPI_GOTO(MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN), st, out);
    all = xfer_malloc((size_t) N * 2 * sizeof(int));
    keys = xfer_malloc((size_t) XFER_MAX(t->n[0], t->n[1]) * sizeof(int));
    if (!all || !keys) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "node keys of %d ranks", N);
        goto out;
    }
    XFER_MPI_GOTO(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, t->merged), st, out);
    for (gg = 0; gg < 2; gg++) {
        const int base = gg == 0 ? 0 : t->n[0];
        for (i = 0; i < t->n[gg]; i++)
            keys[i] = all[2 * (base + i)];
        XFER_CHECK_GOTO(build_layout(&t->hm->nodes[gg], t->n[gg], keys, all[2 * base + 1]), st,
                        out);
    }
    t->hm->node_comm = nc;
    nc = MPI_COMM_NULL;
    t->hm->have_nodes = 1;
out:
    xfer_comm_release(&nc);
    xfer_free(all);
    xfer_free(keys);
    if (st != XFER_SUCCESS) {
        xfer_nodes_free(&t->hm->nodes[0]);
        xfer_nodes_free(&t->hm->nodes[1]);
    }
    return st;
}

xfer_status_t xfer_topo_stripes(xfer_topo_t *t, int senders, MPI_Comm *out)
{
    xfer_stripes_t *s;
    xfer_status_t st = XFER_SUCCESS;
    const xfer_nodes_t *me = &t->hm->nodes[t->group];
    int slot, node;

    XFER_CHECK_GOTO(xfer_topo_nodes(t), st, fail_early);
    for (s = t->hm->stripes; s; s = s->next)
        if (s->senders == senders) {
            *out = s->comm;
            return XFER_SUCCESS;
        }
    if (senders < 1 || senders > t->hm->nodes[0].min_ppn || senders > t->hm->nodes[1].min_ppn)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "%d senders per node, but the smallest node has %d ranks (groups: %d "
                        "and %d); use at most that many",
                        senders, XFER_MIN(t->hm->nodes[0].min_ppn, t->hm->nodes[1].min_ppn),
                        t->hm->nodes[0].min_ppn, t->hm->nodes[1].min_ppn);
    s = xfer_calloc(1, sizeof(*s));
    if (!s)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "stripe cache entry");
    s->senders = senders;
    s->comm = MPI_COMM_NULL;
    slot = me->slot_of[t->rank];
    node = me->node_of[t->rank];
    /* split of an intercommunicator: same colour in both groups -> one intercommunicator */
    XFER_MPI_GOTO(MPI_Comm_split(t->inter, slot < senders ? slot : MPI_UNDEFINED, node, &s->comm),
                  st, fail);
    if (s->comm != MPI_COMM_NULL)
        XFER_MPI_GOTO(MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN), st, fail);
    s->next = t->hm->stripes;
    t->hm->stripes = s;
    *out = s->comm;
    return XFER_SUCCESS;
fail:
    xfer_comm_release(&s->comm);
    xfer_free(s);
fail_early:
    return st;
}
