/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "../core/core.h"
#include "shwin.h"
#include "topo.h"

#define ALIGN 64

static size_t align_up(size_t x)
{
    return (x + ALIGN - 1) / ALIGN * ALIGN;
}

static size_t ctrl_bytes(int nslots, int nstripes)
{
    return align_up(2 * (2 * (size_t) nslots + 4 * (size_t) nstripes) * sizeof(int64_t));
}

void xfer_shwin_free(xfer_shwin_t **pw)
{
    xfer_shwin_t *w = pw ? *pw : NULL;
    if (!w)
        return;
    if (MPI_Win_unlock_all(w->win) != MPI_SUCCESS || MPI_Win_free(&w->win) != MPI_SUCCESS)
        xfer_log(XFER_LOG_WARN, "freeing a node staging window failed");
    xfer_free(w);
    *pw = NULL;
}

void xfer_shwin_abandon(xfer_shwin_t **pw)
{
    if (pw && *pw) {
        xfer_free(*pw);
        *pw = NULL;
    }
}

static xfer_status_t create(MPI_Comm node, int nslots, int nstripes, size_t s_cap, size_t r_cap,
                            xfer_shwin_t **out)
{
    xfer_status_t st = XFER_SUCCESS;
    xfer_shwin_t *w = xfer_calloc(1, sizeof(*w));
    MPI_Aint size = 0;
    int me, du;
    void *mine;
    size_t total;

    if (!w)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "staging window");
    w->win = MPI_WIN_NULL;
    w->nslots = nslots;
    w->nstripes = nstripes;
    w->s_cap = align_up(s_cap);
    w->r_cap = align_up(r_cap);
    w->ctrl = ctrl_bytes(nslots, nstripes);
    total = w->ctrl + 2 * (w->s_cap + w->r_cap);
    XFER_MPI_GOTO(MPI_Comm_rank(node, &me), st, fail);
    /* slot 0 allocates everything; the others map it */
    XFER_MPI_GOTO(MPI_Win_allocate_shared(me == 0 ? (MPI_Aint) total : 0, 1, MPI_INFO_NULL, node,
                                          &mine, &w->win),
                  st, fail);
    XFER_MPI_GOTO(MPI_Win_shared_query(w->win, 0, &size, &du, &w->base), st, fail);
    if ((size_t) size < total) {
        st = XFER_ERR(XFER_ERR_INTERNAL, "shared window of %ld bytes, %zu needed", (long) size,
                      total);
        goto fail;
    }
    XFER_MPI_GOTO(MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win), st, fail_locked);
    if (me == 0)
        memset(w->base, 0, w->ctrl);
    XFER_MPI_GOTO(MPI_Win_sync(w->win), st, fail_unlock);
    XFER_MPI_GOTO(MPI_Barrier(node), st, fail_unlock); /* zeroed flags visible to all */
    XFER_MPI_GOTO(MPI_Win_sync(w->win), st, fail_unlock);
    *out = w;
    return XFER_SUCCESS;
fail_unlock:
    MPI_Win_unlock_all(w->win);
fail_locked:
fail:
    if (w->win != MPI_WIN_NULL)
        MPI_Win_free(&w->win);
    xfer_free(w);
    return st;
}

xfer_status_t xfer_shwin_reserve(xfer_shwin_t **pw, MPI_Comm node, int nslots, int nstripes,
                                 size_t s_need, size_t r_need)
{
    xfer_shwin_t *w = *pw;
    size_t s_cap = s_need, r_cap = r_need;

    if (w && w->nslots == nslots && w->nstripes >= nstripes && w->s_cap >= s_need &&
        w->r_cap >= r_need)
        return XFER_SUCCESS;
    if (w) { /* grow geometrically so a slowly growing dataset does not reallocate each call */
        s_cap = XFER_MAX(s_need, s_need > w->s_cap ? 2 * w->s_cap : w->s_cap);
        r_cap = XFER_MAX(r_need, r_need > w->r_cap ? 2 * w->r_cap : w->r_cap);
        nstripes = XFER_MAX(nstripes, w->nstripes);
        xfer_shwin_free(pw); /* collective: waits for every rank of the node to be done */
    }
    return create(node, nslots, nstripes, s_cap, r_cap, pw);
}

unsigned char *xfer_shwin_S(const xfer_shwin_t *w, int parity)
{
    return w->base + w->ctrl + (size_t) parity * (w->s_cap + w->r_cap);
}

unsigned char *xfer_shwin_R(const xfer_shwin_t *w, int parity)
{
    return xfer_shwin_S(w, parity) + w->s_cap;
}

static int64_t *flag(const xfer_shwin_t *w, int parity, int kind, int index)
{
    int64_t *f = (int64_t *) (void *) w->base;
    const size_t per_parity = 2 * (size_t) w->nslots + 4 * (size_t) w->nstripes;
    size_t at = (size_t) parity * per_parity;
    switch (kind) {
    case XFER_FLAG_READY:
        at += (size_t) index;
        break;
    case XFER_FLAG_COPIED:
        at += (size_t) w->nslots + (size_t) index;
        break;
    case XFER_FLAG_SENT:
        at += 2 * (size_t) w->nslots + (size_t) index;
        break;
    case XFER_FLAG_VALID:
        at += 2 * (size_t) w->nslots + (size_t) w->nstripes + (size_t) index;
        break;
    case XFER_FLAG_CLAIM:
        at += 2 * (size_t) w->nslots + 2 * (size_t) w->nstripes + (size_t) index;
        break;
    default:
        at += 2 * (size_t) w->nslots + 3 * (size_t) w->nstripes + (size_t) index;
    }
    return f + at;
}

void xfer_flag_store(xfer_shwin_t *w, int parity, int kind, int index, long epoch)
{
    MPI_Win_sync(w->win); /* our stores to the data region become visible first */
    __atomic_store_n(flag(w, parity, kind, index), (int64_t) epoch, __ATOMIC_RELEASE);
}

long xfer_flag_load(xfer_shwin_t *w, int parity, int kind, int index)
{
    long v = (long) __atomic_load_n(flag(w, parity, kind, index), __ATOMIC_ACQUIRE);
    MPI_Win_sync(w->win);
    return v;
}

int xfer_flag_claim(xfer_shwin_t *w, int parity, int kind, int index, long epoch)
{
    int64_t *f = flag(w, parity, kind, index);
    int64_t v = __atomic_load_n(f, __ATOMIC_ACQUIRE);
    while (v < (int64_t) epoch)
        if (__atomic_compare_exchange_n(f, &v, (int64_t) epoch, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

const char *xfer_flag_name(int kind)
{
    static const char *names[] = {"ready", "copied", "sent", "valid", "claim", "pclaim"};
    return kind >= 0 && kind < XFER_NFLAGS ? names[kind] : "?";
}
