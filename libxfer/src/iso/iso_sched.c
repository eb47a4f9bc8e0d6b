/* SPDX-License-Identifier: BSD-3-Clause */
/* The isomorphic schedule object, its figures and its symbolic verification (no MPI). */
#include <string.h>

#include "../core/core.h"
#include "iso_sched.h"

void xfer_iso_sched_init(xfer_iso_sched_t *s, const char *algo, int op, int d, int sn)
{
    memset(s, 0, sizeof(*s));
    s->algo = algo;
    s->op = op;
    s->d = d;
    s->s = sn;
}

void xfer_iso_sched_fini(xfer_iso_sched_t *s)
{
    xfer_free(s->steps);
    xfer_free(s->parts);
    s->steps = NULL;
    s->parts = NULL;
    s->nsteps = s->nparts = s->steps_cap = s->parts_cap = 0;
}

void xfer_iso_sched_step(xfer_iso_sched_t *s, const int *vec)
{
    xfer_iso_step_t *st;
    if (s->error)
        return;
    xfer_iso_sched_close(s);
    if (!xfer_grow_array((void **) &s->steps, &s->steps_cap, s->nsteps + 1, sizeof(*s->steps))) {
        s->error = XFER_ERR(XFER_ERR_NO_MEMORY, "isomorphic schedule: %d steps", s->nsteps + 1);
        return;
    }
    st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof(*st));
    memcpy(st->vec, vec, sizeof(int) * (size_t) s->d);
    st->first = s->nparts;
}

void xfer_iso_sched_part(xfer_iso_sched_t *s, int block, int sbuf, int sslot, int rbuf, int rslot)
{
    xfer_iso_part_t *p;
    if (s->error)
        return;
    if (s->nsteps == 0) {
        s->error = XFER_ERR(XFER_ERR_INTERNAL, "isomorphic schedule: part before any step");
        return;
    }
    if (!xfer_grow_array((void **) &s->parts, &s->parts_cap, s->nparts + 1, sizeof(*s->parts))) {
        s->error = XFER_ERR(XFER_ERR_NO_MEMORY, "isomorphic schedule: %d parts", s->nparts + 1);
        return;
    }
    p = &s->parts[s->nparts++];
    p->block = block;
    p->sbuf = (uint8_t) sbuf;
    p->rbuf = (uint8_t) rbuf;
    p->sslot = sslot;
    p->rslot = rslot;
    s->steps[s->nsteps - 1].nparts++;
    if (rbuf == XFER_ISO_TMP && rslot >= s->ntmp)
        s->ntmp = rslot + 1;
    if (sbuf == XFER_ISO_TMP && sslot >= s->ntmp)
        s->ntmp = sslot + 1;
}

void xfer_iso_sched_close(xfer_iso_sched_t *s)
{
    if (s->nsteps > 0 && s->steps[s->nsteps - 1].nparts == 0)
        s->nsteps--;
}

static int vec_zero(const int *v, int d)
{
    for (int j = 0; j < d; j++)
        if (v[j] != 0)
            return 0;
    return 1;
}

int xfer_iso_sched_rounds(const xfer_iso_sched_t *s)
{
    int r = 0;
    for (int t = 0; t < s->nsteps; t++)
        r += !vec_zero(s->steps[t].vec, s->d);
    return s->concurrent && r > 0 ? 1 : r; /* independent steps all go at once */
}

long xfer_iso_sched_volume(const xfer_iso_sched_t *s)
{
    long v = 0;
    for (int t = 0; t < s->nsteps; t++)
        if (!vec_zero(s->steps[t].vec, s->d))
            v += s->steps[t].nparts;
    return v;
}

static const struct {
    const char *name;
    xfer_iso_builder_fn build;
    int periodic; /* blocks travel through intermediate processes: needs wrap-around */
} builders[XFER_ISO_NALGOS] = {{"straight", xfer_iso_build_straight, 0},
                               {"posted", xfer_iso_build_posted, 0},
                               {"torus", xfer_iso_build_torus, 1},
                               {"direct", xfer_iso_build_direct, 1}};

xfer_status_t xfer_iso_sched_build(const xfer_iso_nbh_t *n, const char *algo, int op,
                                   xfer_iso_sched_t *s)
{
    xfer_status_t st;
    int a = 0;
    while (a < XFER_ISO_NALGOS && strcmp(algo, builders[a].name) != 0)
        a++;
    if (a == XFER_ISO_NALGOS)
        return XFER_ERR(XFER_ERR_UNKNOWN_ALGORITHM,
                        "isomorphic algorithm \"%s\": expected straight, posted, torus or direct",
                        algo);
    if (builders[a].periodic && (st = xfer_iso_need_periodic(n, builders[a].name)) != XFER_SUCCESS)
        return st;
    xfer_iso_sched_init(s, builders[a].name, op, n->d, n->s);
    s->algo_id = a;
    st = builders[a].build(n, op, s);
    if (st == XFER_SUCCESS)
        xfer_iso_sched_close(s);
    if (st == XFER_SUCCESS && s->error)
        st = s->error;
    if (st != XFER_SUCCESS)
        xfer_iso_sched_fini(s);
    return st;
}

/* ---- torus arithmetic ------------------------------------------------------------------------ */

xfer_status_t xfer_iso_need_periodic(const xfer_iso_nbh_t *n, const char *algo)
{
    for (int j = 0; j < n->d; j++) {
        if (n->periods[j])
            continue;
        for (int i = 0; i < n->s; i++)
            if (n->off[i * n->d + j] != 0)
                return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                                "isomorphic %s: dimension %d is not periodic and offset %d moves "
                                "along it (only straight and posted handle that)",
                                algo, j, i);
    }
    return XFER_SUCCESS;
}

int xfer_iso_size(const xfer_iso_nbh_t *n)
{
    int p = 1;
    for (int j = 0; j < n->d; j++)
        p *= n->dims[j];
    return p;
}

int xfer_iso_shift(const xfer_iso_nbh_t *n, int rank, const int *vec, int sign)
{
    int coord[XFER_ISO_MAXDIMS], r = rank, out = 0;
    for (int j = n->d - 1; j >= 0; j--) {
        coord[j] = r % n->dims[j];
        r /= n->dims[j];
    }
    for (int j = 0; j < n->d; j++) {
        long c = (long) coord[j] + (long) sign * vec[j];
        if (n->periods[j]) {
            c %= n->dims[j];
            if (c < 0)
                c += n->dims[j];
        } else if (c < 0 || c >= n->dims[j]) {
            return -1;
        }
        out = out * n->dims[j] + (int) c;
    }
    return out;
}

/* ---- figures --------------------------------------------------------------------------------- */

xfer_status_t xfer_iso_counts(const xfer_iso_nbh_t *n, xfer_iso_counts_t *c)
{
    xfer_iso_sched_t s;
    xfer_status_t st;
    memset(c, 0, sizeof(*c));
    c->s = n->s;
    for (int j = 0; j < n->d; j++) {
        int pos = 0, neg = 0;
        for (int i = 0; i < n->s; i++) {
            pos = XFER_MAX(pos, n->off[i * n->d + j]);
            neg = XFER_MAX(neg, -n->off[i * n->d + j]);
        }
        c->D += pos + neg;
    }
    for (int i = 0; i < n->s; i++) {
        int zero = 1;
        for (int j = 0; j < n->d; j++) {
            int v = n->off[i * n->d + j];
            c->V += v < 0 ? -v : v;
            c->direct_V += v != 0;
            zero &= v == 0;
        }
        c->self += zero;
    }
    /* The allgather volumes depend on the trie and its dimension order, so they come from the
     * schedules themselves, and so do the direct rounds (one per distinct nonzero coordinate
     * value per dimension); periods only decide whether the builders apply. */
    {
        xfer_iso_nbh_t m = *n;
        for (int j = 0; j < m.d; j++)
            m.periods[j] = 1;
        if ((st = xfer_iso_sched_build(&m, "torus", XFER_ISO_OP_ALLGATHER, &s)) != XFER_SUCCESS)
            return st;
        c->W = xfer_iso_sched_volume(&s);
        xfer_iso_sched_fini(&s);
        if ((st = xfer_iso_sched_build(&m, "direct", XFER_ISO_OP_ALLGATHER, &s)) != XFER_SUCCESS)
            return st;
        c->direct_W = xfer_iso_sched_volume(&s);
        c->direct_rounds = xfer_iso_sched_rounds(&s);
        xfer_iso_sched_fini(&s);
    }
    return XFER_SUCCESS;
}

/* ---- verification ---------------------------------------------------------------------------- */

static const char *buf_name(int b)
{
    return b == XFER_ISO_SEND ? "send" : b == XFER_ISO_RECV ? "recv" : "tmp";
}

/* Slots touched by one step must be pairwise distinct, reads and writes alike. */
static xfer_status_t check_step_slots(const xfer_iso_sched_t *s, int t, int nslots[3], char *mark)
{
    const xfer_iso_step_t *st = &s->steps[t];
    size_t base[3] = {0, (size_t) nslots[0], (size_t) nslots[0] + (size_t) nslots[1]};
    xfer_status_t rc = XFER_SUCCESS;
    for (int k = 0; k < st->nparts && rc == XFER_SUCCESS; k++) {
        const xfer_iso_part_t *p = &s->parts[st->first + k];
        if (p->sslot < 0 || p->sslot >= nslots[p->sbuf] || p->rslot < 0 ||
            p->rslot >= nslots[p->rbuf] || p->rbuf == XFER_ISO_SEND)
            return XFER_ERR(XFER_ERR_VERIFY,
                            "%s: step %d part %d: slot out of range (%s %d -> %s %d)", s->algo, t,
                            k, buf_name(p->sbuf), p->sslot, buf_name(p->rbuf), p->rslot);
        if (mark[base[p->rbuf] + (size_t) p->rslot] & 2)
            rc = XFER_ERR(XFER_ERR_VERIFY, "%s: step %d writes %s slot %d twice", s->algo, t,
                          buf_name(p->rbuf), p->rslot);
        mark[base[p->rbuf] + (size_t) p->rslot] |= 2;
        mark[base[p->sbuf] + (size_t) p->sslot] |= 1;
    }
    for (int k = 0; k < st->nparts && rc == XFER_SUCCESS; k++) {
        const xfer_iso_part_t *p = &s->parts[st->first + k];
        if (mark[base[p->sbuf] + (size_t) p->sslot] == 3)
            rc = XFER_ERR(XFER_ERR_VERIFY, "%s: step %d reads and writes %s slot %d", s->algo, t,
                          buf_name(p->sbuf), p->sslot);
    }
    for (int k = 0; k < st->nparts; k++) {
        const xfer_iso_part_t *p = &s->parts[st->first + k];
        mark[base[p->rbuf] + (size_t) p->rslot] = 0;
        mark[base[p->sbuf] + (size_t) p->sslot] = 0;
    }
    return rc;
}

xfer_status_t xfer_iso_sched_verify(const xfer_iso_nbh_t *n, const xfer_iso_sched_t *s)
{
    int p = xfer_iso_size(n), nsend = s->op == XFER_ISO_OP_ALLTOALL ? n->s : 1;
    int nslots[3] = {nsend, n->s, s->ntmp}, per = nsend + n->s + s->ntmp, maxparts = 0;
    long *lab = NULL, *vals = NULL;
    char *mark = NULL;
    xfer_status_t st = XFER_SUCCESS;

    for (int t = 0; t < s->nsteps; t++)
        maxparts = XFER_MAX(maxparts, s->steps[t].nparts);
    lab = xfer_calloc((size_t) p * (size_t) per + 1, sizeof(long));
    vals = xfer_calloc((size_t) p * (size_t) maxparts + 1, sizeof(long));
    mark = xfer_calloc((size_t) per + 1, 1);
    if (!lab || !vals || !mark) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "isomorphic verify: %d processes x %d slots", p, per);
        goto out;
    }
    /* A label is origin * (s + 1) + block + 1; 0 is "nothing here". */
    for (int r = 0; r < p; r++)
        for (int i = 0; i < nsend; i++)
            lab[(size_t) r * (size_t) per + (size_t) i] = (long) r * (n->s + 1) + i + 1;

    for (int t = 0; t < s->nsteps && st == XFER_SUCCESS; t++) {
        const xfer_iso_step_t *stp = &s->steps[t];
        size_t base[3] = {0, (size_t) nsend, (size_t) nsend + (size_t) n->s};
        if ((st = check_step_slots(s, t, nslots, mark)) != XFER_SUCCESS)
            break;
        for (int r = 0; r < p && st == XFER_SUCCESS; r++) {
            if (xfer_iso_shift(n, r, stp->vec, 1) < 0)
                continue; /* nobody to send to */
            for (int k = 0; k < stp->nparts; k++) {
                const xfer_iso_part_t *q = &s->parts[stp->first + k];
                long v = lab[(size_t) r * (size_t) per + base[q->sbuf] + (size_t) q->sslot];
                if (v == 0) {
                    st = XFER_ERR(XFER_ERR_VERIFY,
                                  "%s: step %d: rank %d sends %s slot %d (block %d), which holds "
                                  "nothing yet",
                                  s->algo, t, r, buf_name(q->sbuf), q->sslot, q->block);
                    break;
                }
                vals[(size_t) r * (size_t) maxparts + (size_t) k] = v;
            }
        }
        for (int r = 0; r < p && st == XFER_SUCCESS; r++) {
            int src = xfer_iso_shift(n, r, stp->vec, -1);
            if (src < 0)
                continue;
            for (int k = 0; k < stp->nparts; k++) {
                const xfer_iso_part_t *q = &s->parts[stp->first + k];
                lab[(size_t) r * (size_t) per + base[q->rbuf] + (size_t) q->rslot] =
                    vals[(size_t) src * (size_t) maxparts + (size_t) k];
            }
        }
    }
    for (int r = 0; r < p && st == XFER_SUCCESS; r++) {
        for (int i = 0; i < n->s; i++) {
            int src = xfer_iso_shift(n, r, &n->off[i * n->d], -1);
            long want =
                src < 0 ? 0 : (long) src * (n->s + 1) + (s->op == XFER_ISO_OP_ALLTOALL ? i : 0) + 1;
            long got = lab[(size_t) r * (size_t) per + (size_t) nsend + (size_t) i];
            if (got != want) {
                st = XFER_ERR(XFER_ERR_VERIFY,
                              "%s %s: rank %d receive block %d holds %s (rank %ld block %ld), "
                              "expected rank %d's",
                              s->algo, s->op == XFER_ISO_OP_ALLTOALL ? "alltoall" : "allgather", r,
                              i, got ? "data" : "nothing", got ? (got - 1) / (n->s + 1) : -1L,
                              got ? (got - 1) % (n->s + 1) : -1L, src);
                break;
            }
        }
    }
out:
    xfer_free(lab);
    xfer_free(vals);
    xfer_free(mark);
    return st;
}
