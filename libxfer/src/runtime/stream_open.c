/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's open (transport.h, ops->open): its slots, the channel's algorithm named, its joined
 * and variable datasets' state, the handshake of both sides' descriptions, then the communicators
 * and plans (xfer_ch_prepare). Collective over both sides, in file order. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../coll/coll.h"
#include "../codec/codec.h"
#include "../select/selector.h"
#include "../topo/topo.h"
#include "stream.h"

/* Precedence: file < environment (the selector reads it). */
static void name_algorithm(xfer_channel_t *ch)
{
    const xfer_cfg_channel_t *c = ch->cfg;
    xfer_select_channel_algorithm(c->algorithm, ch->x->cfg->topology == XFER_TOPOLOGY_RING,
                                  c->duplex == XFER_DUPLEX_FULL, ch->algorithm,
                                  sizeof(ch->algorithm));
}

/* One line per dataset, the same text on both sides when they agree. */
static void describe(const xfer_channel_t *ch, int i, char *buf, size_t len)
{
    const xfer_cfg_dataset_t *d = &ch->cfg->datasets[i];
    size_t o = (size_t) snprintf(buf, len, "%s", xfer_type_name(d->type));
    int k;
    for (k = 0; d->record && k < d->record->nfields && o < len; k++) { /* {id:int64@0,...} */
        const xfer_record_field_t *f = &d->record->fields[k];
        o += (size_t) snprintf(buf + o, len - o, "%s%s:%s*%u@%zu%s", k ? "," : "{", f->name,
                               xfer_type_name(f->type), (unsigned) f->count, f->offset,
                               k == d->record->nfields - 1 ? "}" : "");
    }
    if (o < len)
        o += (size_t) snprintf(buf + o, len - o, "[");
    for (k = 0; k < d->ndims && o < len; k++) /* "[joined,3]", "[variable,64]", "[13,9]" */
        if ((k == 0 && d->joined) || (d->variable >> k & 1u))
            o += (size_t) snprintf(buf + o, len - o, "%s%s", k ? "," : "",
                                   k == 0 && d->joined ? "joined" : "variable");
        else
            o += (size_t) snprintf(buf + o, len - o, "%s%llu", k ? "," : "",
                                   (unsigned long long) d->dims[k]);
    static const char *const sel[] = {"all", "rows", "columns", "block", "user", "channel"};
    if (o < len)
        o += (size_t) snprintf(buf + o, len - o, "] from %s, selection %s",
                               ch->x->cfg->components[d->from].name,
                               (unsigned) d->selection < 6 ? sel[d->selection] : "?");
    if (o < len && d->blocks == XFER_BLOCKS_PER_STEP) /* its blocks move as the step's own */
        o += (size_t) snprintf(buf + o, len - o, ", blocks per_step");
    if (o < len && d->compression != XFER_COMPRESSION_NONE)
        snprintf(buf + o, len - o, ", compression %s tolerance %.17g",
                 xfer_codec_name(d->compression), d->tolerance);
}

/* What one side sends the other at formation: a text table, compared line by line. */
static size_t channel_table(const xfer_channel_t *ch, char *buf, size_t len)
{
    size_t o = 0;
    int i;
    o += (size_t) snprintf(
        buf + o, len - o, "duplex %s\nalgorithm %s\nhier %d %d %d\ndirect path %s\n",
        ch->cfg->duplex == XFER_DUPLEX_FULL ? "full" : "half", ch->algorithm, ch->cfg->hier.enabled,
        ch->cfg->hier.leaders_per_node, ch->cfg->hier.sync,
        xfer_env_long("XFER_RT_DIRECT", 0) > 0 ? "forced (XFER_RT_DIRECT)" : "when needed");
    for (i = 0; i < ch->nds && o < len; i++) {
        char d[2048];
        describe(ch, i, d, sizeof(d));
        o += (size_t) snprintf(buf + o, len - o, "dataset %s %s\n", ch->cfg->datasets[i].name, d);
    }
    return o < len ? o : len;
}

/* Compare the two tables; the first difference, in words, into @p msg. */
static int compare_tables(const xfer_channel_t *ch, const char *mine, const char *theirs, char *msg,
                          size_t len)
{
    const char *me = ch->x->cfg->components[ch->x->comp].name, *peer = xfer_ch_peer_name(ch);
    const char *p;
    char line[2048], key[128];
    /* every line of mine must be in theirs; then the reverse */
    int pass;
    for (pass = 0; pass < 2; pass++) {
        const char *a = pass == 0 ? mine : theirs, *b = pass == 0 ? theirs : mine;
        p = a;
        while (*p) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t) (nl - p) : strlen(p);
            const char *q;
            size_t kn;
            snprintf(line, sizeof(line), "%.*s", (int) n, p);
            p += n + (nl ? 1 : 0);
            /* the key: first two words for datasets, first word otherwise */
            q = strchr(line, ' ');
            if (q && strncmp(line, "dataset ", 8) == 0)
                q = strchr(q + 1, ' ');
            kn = q ? (size_t) (q - line) : strlen(line);
            snprintf(key, sizeof(key), "%.*s", (int) kn, line);
            {
                const char *found = NULL, *s = b;
                char other[2048];
                while (*s) {
                    const char *nl2 = strchr(s, '\n');
                    size_t n2 = nl2 ? (size_t) (nl2 - s) : strlen(s);
                    if (n2 >= kn && strncmp(s, key, kn) == 0 && (n2 == kn || s[kn] == ' ')) {
                        found = s;
                        snprintf(other, sizeof(other), "%.*s", (int) n2, s);
                        break;
                    }
                    s += n2 + (nl2 ? 1 : 0);
                }
                if (!found) {
                    snprintf(msg, len, "%s: declared at %s, missing at %s", key,
                             pass == 0 ? me : peer, pass == 0 ? peer : me);
                    return 1;
                }
                if (strcmp(other, line) != 0) {
                    const char *va = line + kn + (line[kn] ? 1 : 0);
                    const char *vb = other + kn + (other[kn] ? 1 : 0);
                    snprintf(msg, len, "%s: %s at %s, %s at %s", key, pass == 0 ? va : vb, me,
                             pass == 0 ? vb : va, peer);
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* Both sides check that they describe the channel alike: duplex, algorithm, datasets. */
static xfer_status_t handshake(xfer_channel_t *ch)
{
    enum { TABLE = 16384 };
    char *mine = NULL, *theirs = NULL, msg[600] = "";
    int lens[2] = {0, 0}, bad = 0;
    MPI_Request req[2];
    xfer_status_t st = XFER_SUCCESS;

    mine = xfer_calloc(1, TABLE);
    theirs = xfer_calloc(1, TABLE);
    if (!mine || !theirs) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "handshake");
        goto out;
    }
    lens[0] = (int) channel_table(ch, mine, TABLE);
    if (ch->me == 0) {
        XFER_MPI_GOTO(MPI_Irecv(theirs, TABLE - 1, MPI_CHAR, 0, 1, ch->ctl_inter, &req[0]), st,
                      out);
        XFER_MPI_GOTO(MPI_Isend(mine, lens[0], MPI_CHAR, 0, 1, ch->ctl_inter, &req[1]), st, out);
        st = xfer_ch_wait_req(ch, &req[0], "exchanging the channel description");
        if (st == XFER_SUCCESS)
            st = xfer_ch_wait_req(ch, &req[1], "exchanging the channel description");
        if (st == XFER_SUCCESS)
            bad = compare_tables(ch, mine, theirs, msg, sizeof(msg));
    }
    {
        int v[2] = {(int) st, bad};
        XFER_MPI_GOTO(MPI_Bcast(v, 2, MPI_INT, 0, ch->ctl_local), st, out);
        XFER_MPI_GOTO(MPI_Bcast(msg, (int) sizeof(msg), MPI_CHAR, 0, ch->ctl_local), st, out);
        if (v[0] != XFER_SUCCESS)
            return ch->me == 0 ? (xfer_status_t) v[0]
                               : XFER_ERR((xfer_status_t) v[0],
                                          "channel %s: the handshake with %s failed on rank 0",
                                          ch->cfg->name, xfer_ch_peer_name(ch));
        if (v[1])
            st = XFER_ERR(XFER_ERR_MISMATCH, "channel %s: %s", ch->cfg->name, msg);
    }
out:
    xfer_free(mine);
    xfer_free(theirs);
    if (st != XFER_SUCCESS)
        ch->health.failed = 1;
    return st;
}

/* ---- communicators and plans -------------------------------------------------------------- */

/* What rank @p r of side @p k would contribute with the datasets in rows (the plans' first
 * shape; a recount fits them to the real blocks at step 0). */
static size_t predicted(const xfer_channel_t *ch, int k, int n, int r)
{
    size_t b = sizeof(xfer_rt_hdr_t) + (r == 0 ? ch->lay.attr_cap : 0);
    int i;
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        uint64_t st[XFER_MAX_DIMS], cnt[XFER_MAX_DIMS];
        if (xfer_ch_dset_side(ch, d) != k ||
            xfer_decompose(XFER_SELECT_ROWS, d->cfg->ndims, d->cfg->dims, n, r, st, cnt) !=
                XFER_SUCCESS)
            continue;
        b += ((size_t) xfer_ch_volume(d->cfg->ndims, cnt) * d->esize + 7) & ~(size_t) 7;
    }
    return b;
}

/* The most side @p k's @p n ranks can contribute in all, whatever their blocks: what node
 * staging reserves so that any decomposition's aggregates fit. */
static size_t side_most(const xfer_channel_t *ch, int k, int n)
{
    size_t b = (size_t) n * (sizeof(xfer_rt_hdr_t) + 7 * (size_t) ch->nds) + ch->lay.attr_cap;
    int i;
    for (i = 0; i < ch->nds; i++)
        if (xfer_ch_dset_side(ch, &ch->ds[i]) == k)
            b += (size_t) xfer_ch_volume(ch->ds[i].cfg->ndims, ch->ds[i].cfg->dims) *
                 ch->ds[i].esize;
    return b;
}

/* Each slot's plan for the predicted contributions (none when a side's would exceed int). */
static xfer_status_t reference_plans(xfer_channel_t *ch)
{
    static char dummy[8]; /* the plans are rebound to the stages at step 0 */
    const int k = ch->side, ko = 1 - k;
    size_t mine = ch->sends[k] ? predicted(ch, k, ch->nlocal, ch->me) : 0, tot[2] = {0, 0};
    int *rc = xfer_calloc((size_t) ch->nremote + 1, sizeof(int));
    int *rd = xfer_calloc((size_t) ch->nremote + 1, sizeof(int));
    xfer_status_t st = XFER_SUCCESS;
    int r, i;

    if (!rc || !rd) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: plans", ch->cfg->name);
        goto out;
    }
    for (r = 0; r < ch->nlocal; r++)
        tot[k] += ch->sends[k] ? predicted(ch, k, ch->nlocal, r) : 0;
    for (r = 0; r < ch->nremote; r++)
        tot[ko] += ch->sends[ko] ? predicted(ch, ko, ch->nremote, r) : 0;
    if (tot[0] > INT_MAX || tot[1] > INT_MAX)
        goto out; /* the direct path's, whatever the blocks (the same verdict everywhere) */
    for (r = 0; r < ch->nremote; r++) {
        rc[r] = ch->sends[ko] ? (int) predicted(ch, ko, ch->nremote, r) : 0;
        rd[r + 1] = rd[r] + rc[r];
    }
    for (i = 0; i < ch->nslots; i++) {
        xfer_coll_opts_t o;
        xfer_call_t c;
        XFER_CHECK_GOTO(xfer_ch_plan_opts(ch, &o), st, out);
        memset(&c, 0, sizeof(c));
        c.kind = XFER_CALL_ALLGATHERV;
        c.sbuf = dummy;
        c.scount = (int) mine;
        c.stype = MPI_BYTE;
        c.rbuf = dummy;
        c.rcounts = rc;
        c.rdispls = rd;
        c.rtype = MPI_BYTE;
        c.inter = ch->slots[i].comm;
        XFER_CHECK_GOTO(xfer_plan_create_reserved(
                            &c, &o, ch->sends[k] ? side_most(ch, k, ch->nlocal) : 0,
                            ch->sends[ko] ? side_most(ch, ko, ch->nremote) : 0, &ch->slots[i].plan),
                        st, out);
    }
out:
    xfer_free(rc);
    xfer_free(rd);
    return st;
}

xfer_status_t xfer_ch_prepare(xfer_channel_t *ch)
{
    MPI_Comm nc = MPI_COMM_NULL;
    xfer_status_t st = XFER_SUCCESS;
    int i, is_virtual;

    /* this rank's node, as node staging places it (MPI_COMM_TYPE_SHARED, or XFER_NODE_SIZE) */
    XFER_CHECK_GOTO(
        xfer_node_split(ch->ctl_local, ch->me, ch->nlocal, &nc, &ch->node_key, &is_virtual), st,
        out);
    xfer_comm_release(&nc);
    for (i = 0; i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        XFER_MPI_GOTO(MPI_Comm_dup(ch->inter, &s->comm), st, out);
        XFER_MPI_GOTO(MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN), st, out);
        XFER_MPI_GOTO(MPI_Intercomm_merge(s->comm, ch->side, &s->merged), st, out);
        XFER_MPI_GOTO(MPI_Comm_set_errhandler(s->merged, MPI_ERRORS_RETURN), st, out);
    }
    XFER_CHECK_GOTO(xfer_ch_joined_prepare(ch), st, out);
    st = reference_plans(ch);
out:
    return st;
}

xfer_status_t xfer_ch_stream_open(xfer_channel_t *ch)
{
    xfer_status_t st;
    int i;
    /* a slot per step in flight (and the one being filled) */
    ch->nslots = ch->cfg->max_in_flight_steps + 1;
    if (!(ch->slots = xfer_calloc((size_t) ch->nslots, sizeof(*ch->slots))))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel");
    for (i = 0; i < ch->nslots; i++)
        ch->slots[i].comm = ch->slots[i].merged = MPI_COMM_NULL;
    name_algorithm(ch);
    /* after the datasets, before the layout */
    XFER_CHECK_GOTO(xfer_ch_joined_new(ch), st, out);
    XFER_CHECK_GOTO(handshake(ch), st, out);
    /* communicators and plans: collective over both sides, in file order (a failure of one
     * rank's is agreed by the caller on each side; the peer's side learns it at the first step) */
    st = xfer_ch_prepare(ch);
out:
    return st;
}
