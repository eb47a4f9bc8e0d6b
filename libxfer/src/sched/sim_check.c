/* SPDX-License-Identifier: BSD-3-Clause */
/* The simulator's checks: per round (single port, ring links, races) and at the end
 * (completeness and order), and its messages naming ranks and blocks. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim_int.h"

void sim_rank_name(const sim_t *m, int merged, char *out, size_t len)
{
    if (m->flat)
        snprintf(out, len, "P%d", merged);
    else if (merged < m->shape->n[0])
        snprintf(out, len, "A%d", merged);
    else
        snprintf(out, len, "B%d", merged - m->shape->n[0]);
}

/* "block m_j of group X" for byte @p byte of group @p g's data. */
void sim_block_name(const sim_t *m, int g, size_t byte, char *out, size_t len)
{
    const xfer_shape_t *sh = m->shape;
    int lo = 0, hi = sh->n[g] - 1;
    while (lo < hi) { /* last rank whose block starts at or before the byte */
        int mid = lo + (hi - lo + 1) / 2;
        if (xfer_shape_offset(sh, g, mid) <= byte)
            lo = mid;
        else
            hi = mid - 1;
    }
    snprintf(out, len, "block %d of group %c (global byte %zu)", lo, g ? 'B' : 'A', byte);
}

xfer_status_t sim_fail(sim_t *m, xfer_status_t st, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    if (m->err != XFER_SUCCESS)
        return m->err;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    m->err = XFER_ERR(st, "%s", msg);
    return m->err;
}

/* ---- round-level checks ------------------------------------------------------------------------
 */

/* The ranges @p op touches, into @p a (room for two), or for a combined message into the rank's
 * access buffer @p which; *@p out is where they are. */
static int accesses(const sim_rank_t *R, const xfer_op_t *op, access_t a[2], int which,
                    access_t **out)
{
    int n = 0, i;
    const xfer_sched_t *s = R->s;
    *out = a;
    if ((op->kind == XFER_OP_SEND || op->kind == XFER_OP_RECV) && op->npieces > 0) {
        *out = R->acc.a[which];
        for (i = 0; i < op->npieces && i < R->acc.cap; i++) {
            const xfer_piece_t *pc = &s->pieces[op->piece0 + i];
            (*out)[n++] = (access_t){pc->buf, op->kind == XFER_OP_RECV, pc->off, pc->len};
        }
        return n;
    }
    switch (op->kind) {
    case XFER_OP_SEND:
        a[n++] = (access_t){op->buf, 0, op->off, op->len};
        break;
    case XFER_OP_RECV:
        a[n++] = (access_t){op->buf, 1, op->off, op->len};
        break;
    case XFER_OP_COPY:
        a[n++] = (access_t){op->buf, 0, op->off, op->len};
        a[n++] = (access_t){op->buf2, 1, op->off2, op->len};
        break;
    case XFER_OP_ALLGATHERV:
        a[n++] = (access_t){op->buf, 1, op->off, op->len};
        break;
    case XFER_OP_BCAST:
        a[n++] = (access_t){op->buf, s->groups[op->group].my_index != op->peer, op->off, op->len};
        break;
    case XFER_OP_GATHERV:
        a[n++] = (access_t){op->buf, 0, op->off, op->len};
        if (s->groups[op->group].my_index == op->peer)
            a[n++] = (access_t){op->buf2, 1, op->off2, xfer_counts_total(&s->counts[op->counts])};
        break;
    }
    return n;
}

/* Does op @p j of view @p v wait (directly) for op @p i? */
static int depends(const xfer_sched_t *s, const xfer_round_view_t *v, int j, int i)
{
    const xfer_op_t *o = &v->ops[j];
    int d;
    if (v->first < 0)
        return 0;
    for (d = 0; d < o->ndeps; d++)
        if (s->deps[o->dep0 + d] == v->first + i)
            return 1;
    return 0;
}

/* Are merged ranks @p a and @p b neighbours on the ring of @p n (b compared mod n)? */
static int ring_neighbours(int n, int a, int b)
{
    int d = b >= 0 && b < n ? b - a : (b - a) % n; /* in range: no division */
    if (d < 0)
        d += n;
    return d == 1 || d == n - 1;
}

void sim_check_round(sim_t *m, int rank)
{
    const sim_rank_t *R = &m->r[rank];
    const xfer_sched_t *s = R->s;
    const xfer_round_view_t *v = &R->view;
    int sends = 0, recvs = 0, i, j, c;
    unsigned long chains_s = 0, chains_r = 0; /* chains seen (first 64) */
    char me[16], peer[16];

    /* names are formatted only for a message: this runs once per rank and round */
    for (i = 0; i < v->n; i++) {
        const xfer_op_t *op = &v->ops[i];
        if (op->kind != XFER_OP_SEND && op->kind != XFER_OP_RECV)
            continue;
        if (s->ring_only && op->comm == XFER_COMM_MAIN && !ring_neighbours(m->N, rank, op->peer)) {
            sim_rank_name(m, rank, me, sizeof(me));
            sim_rank_name(m, op->peer, peer, sizeof(peer));
            sim_fail(m, XFER_ERR_VERIFY, "%s: round %d: %s %s %s, which is not its ring neighbour",
                     s->algo, R->round, me, op->kind == XFER_OP_SEND ? "sends to" : "receives from",
                     peer);
            return;
        }
        if (op->chain == 0) {
            sends += op->kind == XFER_OP_SEND;
            recvs += op->kind == XFER_OP_RECV;
        } else {
            unsigned long bit = 1ul << (op->chain % 64);
            if (op->kind == XFER_OP_SEND && !(chains_s & bit)) {
                chains_s |= bit;
                sends++;
            }
            if (op->kind == XFER_OP_RECV && !(chains_r & bit)) {
                chains_r |= bit;
                recvs++;
            }
        }
    }
    if (m->o.check_ports && (sends > s->max_ports || recvs > s->max_ports)) {
        sim_rank_name(m, rank, me, sizeof(me));
        sim_fail(m, XFER_ERR_VERIFY,
                 "%s: round %d: %s starts %d sends and %d receives at once (single-port allows %d)",
                 s->algo, R->round, me, sends, recvs, s->max_ports);
        return;
    }
    if (v->n > 256)
        return; /* pairwise race check bounded; such rounds are chains of disjoint pieces */
    for (i = 0; i + 1 < v->n; i++) {
        access_t a2[2], *a;
        const int na = accesses(R, &v->ops[i], a2, 0, &a);
        for (j = i + 1; j < v->n; j++) {
            access_t b2[2], *b;
            int nb, x, y;
            if (v->ops[i].chain && v->ops[i].chain == v->ops[j].chain)
                continue; /* one after the other */
            if (depends(s, v, j, i))
                continue;
            nb = accesses(R, &v->ops[j], b2, 1, &b);
            for (x = 0; x < na; x++)
                for (y = 0; y < nb; y++)
                    if (a[x].buf == b[y].buf && (a[x].write || b[y].write) && a[x].len &&
                        b[y].len && a[x].off < b[y].off + b[y].len &&
                        b[y].off < a[x].off + a[x].len) {
                        c = a[x].buf;
                        sim_rank_name(m, rank, me, sizeof(me));
                        sim_fail(m, XFER_ERR_VERIFY,
                                 "%s: round %d: %s: %s and %s touch %s[%zu..%zu) at the same time",
                                 s->algo, R->round, me, xfer_op_name(v->ops[i].kind),
                                 xfer_op_name(v->ops[j].kind), xfer_buf_name(c),
                                 XFER_MAX(a[x].off, b[y].off),
                                 XFER_MIN(a[x].off + a[x].len, b[y].off + b[y].len));
                        return;
                    }
        }
    }
}

void sim_describe_stuck(sim_t *m)
{
    int rank, k;
    for (rank = 0; rank < m->N; rank++) {
        const sim_rank_t *R = &m->r[rank];
        if (R->round >= R->s->nrounds)
            continue;
        for (k = 0; k < R->view.n; k++)
            if (R->state[k].st == ST_POSTED) {
                const xfer_op_t *o = &R->view.ops[k];
                char me[16], peer[16] = "its group";
                sim_rank_name(m, rank, me, sizeof(me));
                if (!sim_is_coll(o->kind))
                    sim_rank_name(m, sim_peer(m, rank, o), peer, sizeof(peer));
                sim_fail(m, XFER_ERR_DEADLOCK,
                         "%s/%s: deadlock: %s waits in round %d on a %s of %zu %s with %s",
                         R->s->algo, R->s->variant, me, R->round, xfer_op_name(o->kind), o->len,
                         R->s->unit, peer);
                return;
            }
    }
    sim_fail(m, XFER_ERR_DEADLOCK, "schedules stopped with ranks unfinished");
}

/* Rank @p rank must hold the other group's data of its current call, each byte at its global
 * offset in RECV (labels of call c are groups 2c and 2c + 1). */
void sim_verify_rank(sim_t *m, int rank)
{
    const sim_rank_t *R = &m->r[rank];
    const int o = R->s->group == 0 ? 1 : 0, want = o + 2 * R->call;
    const size_t total = m->shape->total[o];
    const runvec_t *map = &R->map[XFER_BUF_RECV];
    size_t pos = 0;
    int i;
    char me[16], b[96], when[48] = "";

    if (m->hier)
        snprintf(when, sizeof(when), " in call %d", R->call + 1);
    for (i = 0; i < map->n && pos < total; i++) {
        const run_t *x = &map->r[i];
        if (x->off > pos)
            break; /* a hole at pos */
        if (x->grp != want || x->goff != x->off) {
            sim_rank_name(m, rank, me, sizeof(me));
            sim_block_name(m, o, x->off, b, sizeof(b));
            sim_fail(m, XFER_ERR_VERIFY,
                     "%s: %s holds the wrong data at RECV[%zu..%zu)%s: expected %s, found group "
                     "%c's byte %zu%s (%s)",
                     R->s->algo, me, x->off, x->off + x->len, when, b, x->grp % 2 ? 'B' : 'A',
                     x->goff, x->grp / 2 != R->call ? " of another call" : "",
                     x->grp / 2 != R->call ? "calls mixed" : "order");
            return;
        }
        pos = x->off + x->len;
    }
    if (pos < total) {
        sim_rank_name(m, rank, me, sizeof(me));
        sim_block_name(m, o, pos, b, sizeof(b));
        sim_fail(m, XFER_ERR_VERIFY, "%s: %s never receives %s%s (completeness)", R->s->algo, me, b,
                 when);
    }
}

/* Every rank must hold the other group's data, each byte at its global offset in RECV. */
void sim_verify(sim_t *m)
{
    int rank;
    for (rank = 0; rank < m->N && m->err == XFER_SUCCESS; rank++)
        sim_verify_rank(m, rank);
}

/* Every process of a flat world ends with the blocks expect() names, and nothing elsewhere. */
void sim_verify_flat(sim_t *m)
{
    int rank;
    for (rank = 0; rank < m->N && m->err == XFER_SUCCESS; rank++) {
        const sim_rank_t *R = &m->r[rank];
        size_t u, want, gap = 0;
        for (u = 0; u < R->s->recv_bytes && m->err == XFER_SUCCESS; u++) {
            const int has = m->flat->expect(m->flat->ctx, rank, u, &want);
            const int held =
                (m->tmp.n = 0, xfer_rv_get(&R->map[XFER_BUF_RECV], u, 1, 0, &m->tmp, &gap));
            if (gap == (size_t) -1) {
                sim_fail(m, XFER_ERR_NO_MEMORY, "simulator labels");
            } else if (has && !held) {
                sim_fail(m, XFER_ERR_VERIFY,
                         "%s %s: P%d never receives its block %zu (global block "
                         "%zu) (completeness)",
                         R->s->algo, R->s->variant, rank, u, want);
            } else if (has && m->tmp.r[0].goff != want) {
                sim_fail(m, XFER_ERR_VERIFY,
                         "%s %s: P%d's block %zu holds global block %zu, "
                         "expected %zu (order)",
                         R->s->algo, R->s->variant, rank, u, m->tmp.r[0].goff, want);
            } else if (!has && held) {
                sim_fail(m, XFER_ERR_VERIFY,
                         "%s %s: P%d's block %zu has no sender (an edge) but was "
                         "overwritten with global block %zu",
                         R->s->algo, R->s->variant, rank, u, m->tmp.r[0].goff);
            }
        }
    }
}
