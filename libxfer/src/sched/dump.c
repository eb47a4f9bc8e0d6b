/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>

#include <xfer/coll.h>

#include "../core/core.h"
#include "../topo/shwin.h"
#include "sched.h"

static void peer_name(const xfer_sched_t *s, int merged, char *out, size_t len)
{
    if (s->n[1] == 0) /* one communicator (isomorphic schedules) */
        snprintf(out, len, "rank %d", merged);
    else if (merged < s->n[0])
        snprintf(out, len, "A%d", merged);
    else
        snprintf(out, len, "B%d", merged - s->n[0]);
}

static void group_desc(const xfer_sched_t *s, const xfer_group_t *g, char *out, size_t len)
{
    int i, w = 0;
    if (g->slot == XFER_SLOT_LOCAL) {
        snprintf(out, len, "local(%d)", g->size);
        return;
    }
    w = snprintf(out, len, "slot%d{", g->slot);
    for (i = 0; i < g->nranges && w > 0 && (size_t) w < len; i++) {
        char first[16];
        peer_name(s, g->ranges[i].start, first, sizeof(first));
        w += snprintf(out + w, len - (size_t) w, "%s%s+%dx%d", i ? "," : "", first,
                      g->ranges[i].stride, g->ranges[i].count);
    }
    if (w > 0 && (size_t) w < len)
        snprintf(out + w, len - (size_t) w, "}(%d)", g->size);
}

static void counts_desc(const xfer_counts_t *c, char *out, size_t len)
{
    switch (c->kind) {
    case XFER_COUNTS_UNIFORM:
        snprintf(out, len, "%d x %zu", c->n, c->k);
        break;
    case XFER_COUNTS_SEGMENTS:
        snprintf(out, len, "%zu in %d segments", c->k, c->n);
        break;
    case XFER_COUNTS_PIECES:
        snprintf(out, len, "pieces of %d blocks of %zu over %d members", c->m, c->k, c->n);
        break;
    case XFER_COUNTS_BLOCKS:
        snprintf(out, len, "%d members' blocks of %zu in %d subgroups", c->m, c->k, c->n);
        break;
    default:
        snprintf(out, len, "%d counts, %zu total", c->n, xfer_counts_total(c));
        break;
    }
}

xfer_status_t xfer_sched_dump(const xfer_sched_t *s, FILE *out)
{
    xfer_op_t *scratch = NULL;
    xfer_status_t st = XFER_SUCCESS;
    int r, i;

    if (!s || !out)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "NULL schedule or stream");
    if (s->gen && !(scratch = xfer_malloc((size_t) s->gen_max_ops * sizeof(xfer_op_t))))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "dump scratch");
    if (s->n[1] == 0)
        fprintf(out, "schedule %s%s%s for rank %d of %d: %d rounds, %d ops\n", s->algo,
                s->variant[0] ? "/" : "", s->variant, s->rank, s->n[0], s->nrounds, s->nops);
    else
        fprintf(out, "schedule %s%s%s for %c%d (p=%d q=%d): %d rounds, %d ops, %d split slots\n",
                s->algo, s->variant[0] ? "/" : "", s->variant, s->group ? 'B' : 'A', s->rank,
                s->n[0], s->n[1], s->nrounds, s->nops, s->nslots);
    fprintf(out, "  buffers: SEND %zu, RECV %zu, TMP %zu %s%s\n", s->send_bytes, s->recv_bytes,
            s->tmp_bytes, s->unit, s->gen ? "; rounds generated on demand" : "");
    if (s->uses_node)
        fprintf(out,
                "  node window: NODE_S %zu, NODE_R %zu bytes (the call's parity; flags relative "
                "to the call's epoch e)\n",
                s->node_bytes[0], s->node_bytes[1]);
    for (r = 0; r < s->nrounds; r++) {
        xfer_round_view_t v;
        XFER_CHECK_GOTO(xfer_sched_round_view(s, r, scratch, &v), st, done);
        if (v.n == 0)
            continue; /* generated rounds in which this rank has nothing to do */
        fprintf(out, "  round %d\n", r);
        for (i = 0; i < v.n; i++) {
            const xfer_op_t *op = &v.ops[i];
            char a[64], b[160], c[64];
            int d;
            fprintf(out, "    ");
            if (v.first >= 0)
                fprintf(out, "#%d ", v.first + i);
            if (op->chain)
                fprintf(out, "[chain %d] ", op->chain);
            if (op->flags & XFER_OPF_NO_BARRIER)
                fprintf(out, "[no barrier] ");
            for (d = 0; d < op->ndeps; d++)
                fprintf(out, "%s#%d%s", d ? "," : "[after ", s->deps[op->dep0 + d],
                        d + 1 == op->ndeps ? "] " : "");
            switch (op->kind) {
            case XFER_OP_SEND:
            case XFER_OP_RECV:
                if (op->comm == XFER_COMM_MAIN)
                    peer_name(s, op->peer, a, sizeof(a));
                else
                    snprintf(a, sizeof(a), "stripe rank %d", op->peer);
                if (op->aux)
                    fprintf(out, "[lane %d] ", op->aux);
                if (op->npieces == 0) {
                    fprintf(out, "%s %s %s %s[%zu..%zu) %zu %s\n", xfer_op_name(op->kind),
                            op->kind == XFER_OP_SEND ? "to" : "from", a, xfer_buf_name(op->buf),
                            op->off, op->off + op->len, op->len, s->unit);
                    break;
                }
                fprintf(out, "%s %s %s, one message of %zu %s:", xfer_op_name(op->kind),
                        op->kind == XFER_OP_SEND ? "to" : "from", a, op->len, s->unit);
                for (d = 0; d < op->npieces; d++) {
                    const xfer_piece_t *pc = &s->pieces[op->piece0 + d];
                    fprintf(out, " %s[%zu..%zu)", xfer_buf_name(pc->buf), pc->off,
                            pc->off + pc->len);
                }
                fprintf(out, "\n");
                break;
            case XFER_OP_COPY:
                fprintf(out, "copy %s[%zu..%zu) -> %s[%zu..) %zu bytes\n", xfer_buf_name(op->buf),
                        op->off, op->off + op->len, xfer_buf_name(op->buf2), op->off2, op->len);
                break;
            case XFER_OP_ALLGATHERV:
                group_desc(s, &s->groups[op->group], b, sizeof(b));
                counts_desc(&s->counts[op->counts], c, sizeof(c));
                fprintf(out, "allgatherv over %s in place at %s+%zu: %s\n", b,
                        xfer_buf_name(op->buf), op->off, c);
                break;
            case XFER_OP_BCAST:
                group_desc(s, &s->groups[op->group], b, sizeof(b));
                fprintf(out, "bcast over %s root #%d %s[%zu..%zu) %zu bytes\n", b, op->peer,
                        xfer_buf_name(op->buf), op->off, op->off + op->len, op->len);
                break;
            case XFER_OP_GATHERV:
                group_desc(s, &s->groups[op->group], b, sizeof(b));
                counts_desc(&s->counts[op->counts], c, sizeof(c));
                fprintf(out, "gatherv over %s root #%d %s[%zu..%zu) -> %s+%zu: %s\n", b, op->peer,
                        xfer_buf_name(op->buf), op->off, op->off + op->len, xfer_buf_name(op->buf2),
                        op->off2, c);
                break;
            case XFER_OP_FLAG_WAIT:
                fprintf(out, "wait for %s flags %d..%d at call %s%+d\n", xfer_flag_name(op->buf2),
                        op->peer, op->peer + (int) op->len - 1, "e", op->aux);
                break;
            case XFER_OP_FLAG_PUT:
                fprintf(out, "publish %s flag %d := call e%+d%s\n", xfer_flag_name(op->buf2),
                        op->peer, op->aux,
                        op->flags & XFER_OPF_ON_FAILURE ? " (-e if the call fails)" : "");
                break;
            case XFER_OP_BARRIER:
                fprintf(out, "barrier over the node\n");
                break;
            case XFER_OP_TASK:
                fprintf(out, "task %d (steps decided at run time)\n", op->peer);
                break;
            default:
                fprintf(out, "?\n");
            }
        }
    }
    if (ferror(out))
        st = XFER_ERR(XFER_ERR_INTERNAL, "write error on dump stream");
done:
    xfer_free(scratch);
    return st;
}
