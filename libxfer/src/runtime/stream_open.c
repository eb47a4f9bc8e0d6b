/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream's open (transport.h, ops->open): the channel's algorithm named, its joined and
 * variable datasets' state, the handshake of both sides' descriptions, then the communicators
 * and plans (xfer_ch_prepare). Collective over both sides, in file order. */
#include <stdio.h>
#include <string.h>

#include "../select/select.h"
#include "channel.h"

/* Precedence: file < environment. A ring topology keeps the automatic choice on rings; the
 * plan's selector does not know the workflow's topology, so the registry names the ring
 * algorithm for the duplex mode now. */
static void name_algorithm(xfer_channel_t *ch)
{
    const xfer_cfg_channel_t *c = ch->cfg;
    const char *env_alg = xfer_env_str("XFER_ALGORITHM");
    const xfer_algo_t *ring;
    snprintf(ch->algorithm, sizeof(ch->algorithm), "%s", env_alg ? env_alg : c->algorithm);
    if (!env_alg && strcmp(c->algorithm, "auto") == 0 &&
        ch->x->cfg->topology == XFER_TOPOLOGY_RING &&
        (ring = xfer_select_ring_default(c->duplex == XFER_DUPLEX_FULL)))
        snprintf(ch->algorithm, sizeof(ch->algorithm), "%s", ring->name);
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
        snprintf(buf + o, len - o, "] from %s, selection %s", ch->x->cfg->components[d->from].name,
                 (unsigned) d->selection < 6 ? sel[d->selection] : "?");
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

xfer_status_t xfer_ch_stream_open(xfer_channel_t *ch)
{
    xfer_status_t st;
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
