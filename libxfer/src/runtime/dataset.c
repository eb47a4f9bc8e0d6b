/* SPDX-License-Identifier: BSD-3-Clause */
/* Channels: datasets, steps, the control notes of the step protocol (runtime.h) and the
 * collective that moves each step. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../coll/coll.h"
#include "../select/select.h"
#include "runtime.h"

#define XFER_NOTE_TAG 0x5801

enum {
    NOTE_ANN = 1,
    NOTE_EOS = 2,
    NOTE_CLOSE = 3,
    NOTE_FIN = 4,
    NOTE_ACK = 5,
    NOTE_CREDIT = 6,
    NOTE_END = 7,
    NOTE_FAIL = 8 /* rank 0 -> its own side: xferd declared the peer component failed */
};

typedef struct note {
    int64_t type, value;
} note_t;

/* An outgoing note and its request: each has its own storage so the buffer never moves. */
typedef struct note_out {
    MPI_Request req;
    note_t n;
} note_out_t;

static const char *side_name(const xfer_channel_t *ch, int side)
{
    const xfer_config_t *c = ch->x->cfg;
    return c->components[side == 0 ? ch->cfg->from : ch->cfg->to].name;
}

static const char *peer_name(const xfer_channel_t *ch)
{
    return side_name(ch, 1 - ch->side);
}

static uint64_t volume(int nd, const uint64_t *count)
{
    uint64_t v = 1;
    int d;
    for (d = 0; d < nd; d++)
        v *= count[d];
    return v;
}

static void fmt_box(char *buf, size_t len, int nd, const uint64_t *start, const uint64_t *count)
{
    size_t o = 0;
    int d;
    o += (size_t) snprintf(buf + o, len - o, "[");
    for (d = 0; d < nd && o < len; d++)
        o += (size_t) snprintf(buf + o, len - o, "%s%llu:%llu", d ? ", " : "",
                               (unsigned long long) start[d],
                               (unsigned long long) (start[d] + count[d]));
    if (o < len)
        snprintf(buf + o, len - o, "]");
}

/* ---- control notes ------------------------------------------------------------------------ */

static xfer_status_t note_send(xfer_channel_t *ch, MPI_Comm c, int dest, int type, int64_t value)
{
    xfer_status_t st = XFER_SUCCESS;
    note_out_t *o;

    if (ch->nout == ch->cap_out) {
        int cap = ch->cap_out ? 2 * ch->cap_out : 16;
        void **grown = xfer_realloc_array(ch->out, (size_t) cap, sizeof(*grown));
        if (!grown)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "control notes");
        ch->out = grown;
        ch->cap_out = cap;
    }
    o = xfer_malloc(sizeof(*o));
    if (!o)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "control note");
    o->n.type = type;
    o->n.value = value;
    XFER_MPI_GOTO(MPI_Isend(&o->n, 2, MPI_INT64_T, dest, XFER_NOTE_TAG, c, &o->req), st, fail);
    ch->out[ch->nout++] = o;
    return XFER_SUCCESS;
fail:
    xfer_free(o);
    return st;
}

/* Complete the notes that went out (they are small: the MPI library sends them eagerly). */
static xfer_status_t notes_reap(xfer_channel_t *ch, int wait)
{
    xfer_status_t st = XFER_SUCCESS;
    int i, k = 0;
    for (i = 0; i < ch->nout; i++) {
        note_out_t *o = ch->out[i];
        int flag = 0;
        if (st == XFER_SUCCESS) {
            int rc = wait ? MPI_Wait(&o->req, MPI_STATUS_IGNORE)
                          : MPI_Test(&o->req, &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                st = xfer_err_mpi(rc, __func__, "MPI_Test(control note)");
        }
        if (wait || flag)
            xfer_free(o);
        else
            ch->out[k++] = o;
    }
    ch->nout = k;
    return st;
}

/* The announcer of this side tells every other rank of both sides. */
static xfer_status_t announce(xfer_channel_t *ch, int type, int64_t value)
{
    xfer_status_t st = XFER_SUCCESS;
    int r;
    for (r = 0; r < ch->nremote && st == XFER_SUCCESS; r++)
        st = note_send(ch, ch->ctl_inter, r, type, value);
    for (r = 1; r < ch->nlocal && st == XFER_SUCCESS; r++)
        st = note_send(ch, ch->ctl_local, r, type, value);
    return st;
}

static int is_announcer(const xfer_channel_t *ch)
{
    return ch->me == 0 && ch->sends[ch->side];
}

/* Steps that will run: the smallest end announced by a sending side (UINT64_MAX: open). */
static uint64_t run_limit(const xfer_channel_t *ch)
{
    uint64_t lim = UINT64_MAX;
    int k;
    for (k = 0; k < 2; k++)
        if (ch->sends[k] && ch->eos[k] >= 0 && (uint64_t) ch->eos[k] < lim)
            lim = (uint64_t) ch->eos[k];
    return lim;
}

static xfer_status_t end_own_side(xfer_channel_t *ch)
{
    if (!is_announcer(ch) || ch->eos[ch->side] >= 0)
        return XFER_SUCCESS;
    ch->eos[ch->side] = (int64_t) ch->ann[ch->side];
    return announce(ch, NOTE_EOS, ch->eos[ch->side]);
}

/* The leader (rank 0, which holds the connection to xferd) learns that the peer failed and
 * tells the other ranks of its side; their pending and later calls fail with PEER_FAILED. */
static xfer_status_t check_peer(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    int r;
    if (ch->peer_failed || !ch->x->ctl || ch->me != 0 ||
        !xfer_rt_ctl_failed(ch->x, ch->peer, ch->peer_why, sizeof(ch->peer_why)))
        return XFER_SUCCESS;
    ch->peer_failed = 1;
    for (r = 1; r < ch->nlocal && st == XFER_SUCCESS; r++)
        st = note_send(ch, ch->ctl_local, r, NOTE_FAIL, ch->peer);
    return st;
}

static xfer_status_t peer_failed_error(const xfer_channel_t *ch)
{
    return xfer_err_raw(XFER_ERR_PEER_FAILED, "channel %s: component %s failed (xferd: %s)",
                        ch->cfg->name, peer_name(ch),
                        ch->peer_why[0] ? ch->peer_why : "declared by the control plane");
}

static xfer_status_t poll_notes(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    int pass;
    XFER_CHECK_GOTO(check_peer(ch), st, out);
    for (pass = 0; pass < 2; pass++) {
        MPI_Comm c = pass == 0 ? ch->ctl_inter : ch->ctl_local;
        const int side = pass == 0 ? 1 - ch->side : ch->side;
        for (;;) {
            int flag = 0;
            MPI_Status s;
            note_t n;
            XFER_MPI_GOTO(MPI_Iprobe(MPI_ANY_SOURCE, XFER_NOTE_TAG, c, &flag, &s), st, out);
            if (!flag)
                break;
            XFER_MPI_GOTO(
                MPI_Recv(&n, 2, MPI_INT64_T, s.MPI_SOURCE, XFER_NOTE_TAG, c, MPI_STATUS_IGNORE), st,
                out);
            switch (n.type) {
            case NOTE_ANN:
                if ((uint64_t) n.value + 1 > ch->ann[side])
                    ch->ann[side] = (uint64_t) n.value + 1;
                break;
            case NOTE_EOS:
                ch->eos[side] = n.value;
                break;
            case NOTE_CLOSE:
                ch->close_seen = 1;
                break;
            case NOTE_FIN:
                ch->fin_seen = 1;
                ch->fin_acks = n.value;
                break;
            case NOTE_ACK: /* announcer: remote rank s.MPI_SOURCE released n.value steps */
                ch->acks_recv++;
                if (ch->rel_of && s.MPI_SOURCE < ch->nremote &&
                    (uint64_t) n.value > ch->rel_of[s.MPI_SOURCE]) {
                    uint64_t m = UINT64_MAX;
                    int r;
                    ch->rel_of[s.MPI_SOURCE] = (uint64_t) n.value;
                    for (r = 0; r < ch->nremote; r++)
                        m = XFER_MIN(m, ch->rel_of[r]);
                    if (m > ch->credit) {
                        ch->credit = m;
                        for (r = 1; r < ch->nlocal && st == XFER_SUCCESS; r++)
                            st = note_send(ch, ch->ctl_local, r, NOTE_CREDIT, (int64_t) m);
                        if (st != XFER_SUCCESS)
                            goto out;
                    }
                }
                break;
            case NOTE_END:
                ch->end_seen = 1;
                break;
            case NOTE_CREDIT:
                if ((uint64_t) n.value > ch->credit)
                    ch->credit = (uint64_t) n.value;
                break;
            case NOTE_FAIL:
                ch->peer_failed = 1;
                break;
            default:
                return XFER_ERR(XFER_ERR_INTERNAL, "channel %s: unknown control note %lld",
                                ch->cfg->name, (long long) n.type);
            }
        }
    }
    if (ch->close_seen)
        st = end_own_side(ch);
    if (st == XFER_SUCCESS)
        st = notes_reap(ch, 0);
out:
    return st;
}

/* ---- setup: geometry of every sending rank, contributions, plans --------------------------- */

/* Number of uint64 in one rank's geometry record for side k's datasets. */
static int geo_len(const xfer_channel_t *ch, int k)
{
    int i, n = 0;
    for (i = 0; i < ch->nds; i++)
        if (ch->ds[i].cfg->from == (k == 0 ? ch->cfg->from : ch->cfg->to))
            n += 2 * ch->ds[i].cfg->ndims;
    return n;
}

static int dset_side(const xfer_channel_t *ch, const xfer_rt_dset_t *d)
{
    return d->cfg->from == ch->cfg->from ? 0 : 1;
}

/* Check that side k's blocks of every dataset tile the global array exactly; fill the
 * datasets' g_start/g_count from @p geo (nranks records) and the contribution sizes. */
static xfer_status_t lay_out(xfer_channel_t *ch, int k, int nranks, const uint64_t *geo,
                             size_t *bytes, int fill_global)
{
    const int len = geo_len(ch, k);
    xfer_status_t st = XFER_SUCCESS;
    int i, r;
    size_t *off = NULL;

    off = xfer_calloc((size_t) nranks, sizeof(*off));
    if (!off)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "layout");
    for (r = 0; r < nranks; r++)
        off[r] = sizeof(xfer_rt_hdr_t);
    for (i = 0; i < ch->nds; i++) {
        xfer_rt_dset_t *d = &ch->ds[i];
        const int nd = d->cfg->ndims;
        uint64_t covered = 0;
        int pos = 0, j;
        if (dset_side(ch, d) != k)
            continue;
        for (j = 0; j < i; j++)
            if (dset_side(ch, &ch->ds[j]) == k)
                pos += 2 * ch->ds[j].cfg->ndims;
        if (fill_global) {
            d->g_start = xfer_calloc((size_t) nranks * (size_t) nd, sizeof(uint64_t));
            d->g_count = xfer_calloc((size_t) nranks * (size_t) nd, sizeof(uint64_t));
            d->g_off = xfer_calloc((size_t) nranks, sizeof(size_t));
            if (!d->g_start || !d->g_count || !d->g_off) {
                st = XFER_ERR(XFER_ERR_NO_MEMORY, "dataset layout");
                goto out;
            }
        }
        for (r = 0; r < nranks; r++) {
            const uint64_t *s = geo + (size_t) r * (size_t) len + pos, *c = s + nd;
            uint64_t v = volume(nd, c);
            int e;
            covered += v;
            for (e = 0; e < r && v > 0; e++) { /* blocks must not overlap */
                const uint64_t *s2 = geo + (size_t) e * (size_t) len + pos, *c2 = s2 + nd;
                int dd, disjoint = 0;
                if (volume(nd, c2) == 0)
                    continue;
                for (dd = 0; dd < nd; dd++)
                    if (s[dd] + c[dd] <= s2[dd] || s2[dd] + c2[dd] <= s[dd])
                        disjoint = 1;
                if (!disjoint) {
                    char b1[160], b2[160];
                    fmt_box(b1, sizeof(b1), nd, s, c);
                    fmt_box(b2, sizeof(b2), nd, s2, c2);
                    st = XFER_ERR(XFER_ERR_INVALID_ARG,
                                  "channel %s: dataset %s: the block of %s rank %d %s overlaps "
                                  "the block of rank %d %s",
                                  ch->cfg->name, d->cfg->name, side_name(ch, k), r, b1, e, b2);
                    goto out;
                }
            }
            if (fill_global) {
                memcpy(d->g_start + (size_t) r * nd, s, (size_t) nd * sizeof(uint64_t));
                memcpy(d->g_count + (size_t) r * nd, c, (size_t) nd * sizeof(uint64_t));
                d->g_off[r] = off[r];
            }
            if (r == ch->me && k == ch->side) {
                d->my_off = off[r];
                d->my_bytes = (size_t) v * d->esize;
            }
            off[r] += ((size_t) v * d->esize + 7) & ~(size_t) 7;
        }
        d->never = covered == 0; /* no rank put it in step 0: this side never sends it */
        if (covered != volume(nd, d->cfg->dims) && covered != 0) {
            st = XFER_ERR(XFER_ERR_INVALID_ARG,
                          "channel %s: dataset %s: the blocks of %s's %d ranks hold %llu of its "
                          "%llu elements (each element must belong to exactly one rank's block)",
                          ch->cfg->name, d->cfg->name, side_name(ch, k), nranks,
                          (unsigned long long) covered,
                          (unsigned long long) volume(nd, d->cfg->dims));
            goto out;
        }
    }
    for (r = 0; r < nranks; r++)
        bytes[r] = off[r];
out:
    xfer_free(off);
    return st;
}

/* Every rank of both sides reaches the same verdict: the worst status of all. */
static xfer_status_t agree(xfer_channel_t *ch, xfer_status_t st, const char *what)
{
    int mine = (int) st, local = 0, remote = 0, flag = 0;
    double deadline = xfer_rt_deadline(ch->x);
    MPI_Request req;
    xfer_status_t rc = XFER_SUCCESS;

    XFER_MPI_GOTO(MPI_Allreduce(&mine, &local, 1, MPI_INT, MPI_MIN, ch->ctl_local), rc, out);
    XFER_MPI_GOTO(MPI_Iallreduce(&local, &remote, 1, MPI_INT, MPI_MIN, ch->ctl_inter, &req), rc,
                  out);
    while (!flag) {
        XFER_MPI_GOTO(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), rc, out);
        if (!flag && MPI_Wtime() > deadline)
            return XFER_ERR(XFER_ERR_TIMEOUT, "channel %s: %s: no answer from %s within %d ms",
                            ch->cfg->name, what, peer_name(ch), ch->x->timeout_ms);
    }
    if (st != XFER_SUCCESS)
        return st;
    if (local != XFER_SUCCESS)
        return XFER_ERR((xfer_status_t) local, "channel %s: %s failed on another rank of %s",
                        ch->cfg->name, what, side_name(ch, ch->side));
    if (remote != XFER_SUCCESS)
        return XFER_ERR(XFER_ERR_PEER_FAILED, "channel %s: %s failed at %s (%s): see its error",
                        ch->cfg->name, what, peer_name(ch),
                        xfer_status_name((xfer_status_t) remote));
out:
    return rc;
}

static xfer_status_t wait_req(xfer_channel_t *ch, MPI_Request *req, const char *what)
{
    double deadline = xfer_rt_deadline(ch->x);
    xfer_status_t st = XFER_SUCCESS;
    int flag = 0;
    while (!flag) {
        XFER_MPI_GOTO(MPI_Test(req, &flag, MPI_STATUS_IGNORE), st, out);
        if (!flag && MPI_Wtime() > deadline)
            return XFER_ERR(XFER_ERR_TIMEOUT, "channel %s: %s: no answer from %s within %d ms",
                            ch->cfg->name, what, peer_name(ch), ch->x->timeout_ms);
    }
out:
    return st;
}

static xfer_status_t plan_opts(const xfer_channel_t *ch, xfer_coll_opts_t *o)
{
    const xfer_cfg_hier_t *h = &ch->cfg->hier;
    xfer_coll_opts_init(o);
    o->duplex = ch->cfg->duplex;
    o->check = XFER_CHECK_OFF; /* the handshake and the setup checked both sides */
    o->fallback = XFER_FALLBACK_WARN;
    o->algorithm = ch->plan_algorithm;
    o->hier_auto = h->enabled == 0 ? XFER_HIER_AUTO_NEVER : XFER_HIER_AUTO_ALLOW;
    o->hier_senders = h->leaders_per_node;
    o->hier_sync = (xfer_hier_sync_t) h->sync; /* XFER_HIER_SYNC_FLAGS or _BARRIER */
    /* Flat collectives progress in xfer_test and our own waits bound them: a collective
     * started early must not expire while the peer legitimately computes. A node-staged one
     * runs inside xfer_wait and gets the bound there (setup). */
    o->timeout_ms = XFER_TIMEOUT_NONE;
    return XFER_SUCCESS;
}

/* After lay_out: may stage0 serve as this rank's contribution as it is? Only when every block
 * sits where the contribution has it: blocks put out of the channel's order, put again with
 * another size (appended anew) or missing move the offsets or the length. */
static int stage0_fits(const xfer_channel_t *ch)
{
    int i;
    if (!ch->stage0 || ch->stage0_len != ch->my_bytes)
        return 0;
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        if (d->staged && (d->st_off != d->my_off || d->st_len != d->my_bytes))
            return 0;
    }
    return 1;
}

static xfer_status_t setup(xfer_channel_t *ch)
{
    const int k = ch->side, ko = 1 - k;
    const int len_own = geo_len(ch, k), len_rem = geo_len(ch, ko);
    uint64_t *mine = NULL, *own_all = NULL, *rem_all = NULL;
    size_t *own_bytes = NULL;
    int *rcounts = NULL, *rdispls = NULL;
    xfer_status_t st = XFER_SUCCESS, st2;
    MPI_Request req;
    int i, r, pos = 0;

    if (ch->setup)
        return XFER_SUCCESS;
    mine = xfer_calloc((size_t) len_own + 1, sizeof(uint64_t));
    own_all = xfer_calloc((size_t) ch->nlocal * (size_t) len_own + 1, sizeof(uint64_t));
    rem_all = xfer_calloc((size_t) ch->nremote * (size_t) len_rem + 1, sizeof(uint64_t));
    own_bytes = xfer_calloc((size_t) ch->nlocal, sizeof(size_t));
    ch->r_bytes = xfer_calloc((size_t) ch->nremote, sizeof(size_t));
    if (!mine || !own_all || !rem_all || !own_bytes || !ch->r_bytes) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel setup");
        goto out;
    }
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        if (dset_side(ch, d) != k)
            continue;
        if (d->declared) { /* undeclared: an empty block */
            memcpy(mine + pos, d->start, (size_t) d->cfg->ndims * sizeof(uint64_t));
            memcpy(mine + pos + d->cfg->ndims, d->count, (size_t) d->cfg->ndims * sizeof(uint64_t));
        }
        pos += 2 * d->cfg->ndims;
    }
    /* Blocks of this side (to check the tiling here too: both sides report the same error)
     * and of the other side, whose data this side receives. */
    XFER_MPI_GOTO(
        MPI_Allgather(mine, len_own, MPI_UINT64_T, own_all, len_own, MPI_UINT64_T, ch->ctl_local),
        st, out);
    XFER_MPI_GOTO(MPI_Iallgather(mine, len_own, MPI_UINT64_T, rem_all, len_rem, MPI_UINT64_T,
                                 ch->ctl_inter, &req),
                  st, out);
    XFER_CHECK_GOTO(wait_req(ch, &req, "exchanging the dataset blocks"), st, out);

    if (ch->sends[k])
        st = lay_out(ch, k, ch->nlocal, own_all, own_bytes, 0);
    if (st == XFER_SUCCESS && ch->sends[ko])
        st = lay_out(ch, ko, ch->nremote, rem_all, ch->r_bytes, 1);
    if (st == XFER_SUCCESS) {
        ch->my_bytes = ch->sends[k] ? own_bytes[ch->me] : 0;
        ch->r_total = 0;
        for (r = 0; r < ch->nremote; r++)
            ch->r_total += ch->sends[ko] ? ch->r_bytes[r] : 0;
        if (ch->my_bytes > INT_MAX || ch->r_total > INT_MAX)
            st =
                XFER_ERR(XFER_ERR_TOO_LARGE,
                         "channel %s: one step moves %zu bytes per %s rank and %zu bytes in "
                         "all from %s; steps over 2 GiB are not supported (split the datasets "
                         "over more channels)",
                         ch->cfg->name, ch->my_bytes, side_name(ch, k), ch->r_total, peer_name(ch));
    }
    for (i = 0; st == XFER_SUCCESS && i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        if (i == 0 && stage0_fits(ch)) { /* slot 0 holds step 0, its blocks in place already */
            s->sbuf = ch->stage0;
            ch->stage0 = NULL;
        } else if (ch->my_bytes && !(s->sbuf = xfer_calloc(1, ch->my_bytes)))
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: send stage", ch->cfg->name);
        if (ch->r_total && !(s->rbuf = xfer_malloc(ch->r_total)))
            st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: receive stage", ch->cfg->name);
    }
    st2 = agree(ch, st, "setting up the first step");
    if (st2 != XFER_SUCCESS) {
        st = st2;
        goto out;
    }

    rcounts = xfer_calloc((size_t) ch->nremote, sizeof(int));
    rdispls = xfer_calloc((size_t) ch->nremote, sizeof(int));
    if (!rcounts || !rdispls) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel setup");
        goto out;
    }
    for (r = 0, pos = 0; r < ch->nremote; r++) {
        rcounts[r] = ch->sends[ko] ? (int) ch->r_bytes[r] : 0;
        rdispls[r] = pos;
        pos += rcounts[r];
    }
    for (i = 0; i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        xfer_coll_opts_t o;
        plan_opts(ch, &o);
        XFER_MPI_GOTO(MPI_Comm_dup(ch->inter, &s->comm), st, out);
        XFER_CHECK_GOTO(xfer_allgatherv_inter_init(s->sbuf, (int) ch->my_bytes, MPI_BYTE, s->rbuf,
                                                   rcounts, rdispls, MPI_BYTE, s->comm, &o,
                                                   &s->plan),
                        st, out);
        s->hier = s->plan->hier != NULL; /* node-staged: progresses only inside xfer_wait */
        if (s->hier)
            s->plan->opts.timeout_ms = ch->x->timeout_ms;
    }
    if (ch->me == 0 && xfer_trace_level() > 0) {
        const char *alg = "?";
        xfer_plan_algorithm(ch->slots[0].plan, &alg);
        xfer_log(XFER_LOG_TRACE, "channel %s at %s: %s, %zu bytes per step from this rank, %zu in",
                 ch->cfg->name, side_name(ch, k), alg, ch->my_bytes, ch->r_total);
    }
    ch->setup = 1;
out:
    xfer_free(mine);
    xfer_free(own_all);
    xfer_free(rem_all);
    xfer_free(own_bytes);
    xfer_free(rcounts);
    xfer_free(rdispls);
    if (st != XFER_SUCCESS)
        ch->failed = 1;
    return st;
}

/* ---- slots and steps ---------------------------------------------------------------------- */

static xfer_rt_slot_t *slot_of(xfer_channel_t *ch, uint64_t step)
{
    return &ch->slots[step % (uint64_t) ch->nslots];
}

static int this_sends(const xfer_channel_t *ch)
{
    return ch->sends[ch->side];
}

static int this_recvs(const xfer_channel_t *ch)
{
    return ch->sends[1 - ch->side];
}

/* Can this rank start the collective of step ch->started now? */
static int can_start(xfer_channel_t *ch)
{
    const uint64_t s = ch->started;
    xfer_rt_slot_t *sl = slot_of(ch, s);
    int k;
    if (s >= run_limit(ch))
        return 0;
    for (k = 0; k < 2; k++)
        if (ch->sends[k] && ch->ann[k] <= s)
            return 0;
    if (this_sends(ch))
        return s < ch->committed && sl->state == XFER_SLOT_COMMITTED && sl->step == s;
    /* receive only: a free slot inside the window of steps the application has not released */
    return sl->state == XFER_SLOT_FREE && s < ch->released + (uint64_t) ch->nslots;
}

static xfer_status_t start_next(xfer_channel_t *ch)
{
    xfer_rt_slot_t *sl = slot_of(ch, ch->started);
    xfer_status_t st;
    if (!ch->setup)
        XFER_CHECK_GOTO(setup(ch), st, out);
    sl->step = ch->started;
    sl->state = XFER_SLOT_ACTIVE;
    XFER_CHECK_GOTO(xfer_start(sl->plan), st, out);
    ch->started++;
out:
    if (st != XFER_SUCCESS)
        ch->failed = 1;
    return st;
}

static void slot_done(xfer_channel_t *ch, xfer_rt_slot_t *sl)
{
    sl->state = XFER_SLOT_DONE;
    if (!this_recvs(ch) || sl->step < ch->released)
        sl->state = XFER_SLOT_FREE;
}

/* One pass over a channel: notes, collectives that can start, flat collectives that finished.
 * With @p force, also run node-staged collectives of steps <= force_step (they progress only
 * inside xfer_wait). */
static xfer_status_t progress(xfer_channel_t *ch, int force, uint64_t force_step)
{
    /* Only a wait on this very channel may build its plans (a collective with the peer). */
    const int allow_setup = force;
    xfer_status_t st;
    uint64_t lim;
    int i;

    if (ch->failed)
        return XFER_ERR(XFER_ERR_STATE, "channel %s failed earlier; it cannot be used",
                        ch->cfg->name);
    XFER_CHECK_GOTO(poll_notes(ch), st, out);
    if (ch->peer_failed)
        return peer_failed_error(ch);
    /* Committed steps past the end of the channel will never run. */
    lim = run_limit(ch);
    for (i = 0; i < ch->nslots; i++) {
        xfer_rt_slot_t *sl = &ch->slots[i];
        if (sl->state == XFER_SLOT_COMMITTED && sl->step >= lim)
            sl->state = XFER_SLOT_FREE;
    }
    while ((ch->setup || allow_setup) && can_start(ch)) {
        /* the first start builds the plans: collective with the peer, bounded */
        XFER_CHECK_GOTO(start_next(ch), st, out);
    }
    for (i = 0; i < ch->nslots; i++) { /* in step order: oldest first */
        xfer_rt_slot_t *sl = slot_of(ch, ch->started + (uint64_t) i);
        int done = 0;
        if (sl->state != XFER_SLOT_ACTIVE)
            continue;
        if (sl->hier) {
            if (!force || sl->step > force_step)
                continue;
            st = xfer_wait(sl->plan);
            done = st == XFER_SUCCESS;
        } else {
            st = xfer_test(sl->plan, &done);
        }
        if (st != XFER_SUCCESS) {
            ch->failed = 1;
            return XFER_ERR(st, "channel %s: step %llu between %s and %s failed: %.600s",
                            ch->cfg->name, (unsigned long long) sl->step, side_name(ch, 0),
                            side_name(ch, 1), xfer_last_error());
        }
        if (done)
            slot_done(ch, sl);
    }
    return XFER_SUCCESS;
out:
    return st;
}

/* Progress every channel of the context (a wait on one channel must not starve the others:
 * a pipeline's middle component waits on one while the next one needs its notes). */
static xfer_status_t progress_all(xfer_channel_t *ch, int force, uint64_t force_step)
{
    xfer_status_t st = progress(ch, force, force_step);
    int i;
    for (i = 0; st == XFER_SUCCESS && i < ch->x->nch; i++) {
        xfer_channel_t *o = ch->x->ch[i];
        if (o && o != ch && !o->failed && o->inter != MPI_COMM_NULL && !o->finished)
            progress(o, 0, 0); /* its own errors surface on its own calls */
    }
    return st;
}

typedef int (*cond_fn)(xfer_channel_t *ch, void *arg);

static xfer_status_t wait_until(xfer_channel_t *ch, cond_fn cond, void *arg, uint64_t force_step,
                                const char *what)
{
    const double deadline = xfer_rt_deadline(ch->x);
    xfer_status_t st;
    for (;;) {
        XFER_CHECK_GOTO(progress_all(ch, 1, force_step), st, out);
        if (cond(ch, arg))
            return XFER_SUCCESS;
        if (MPI_Wtime() > deadline) {
            st = XFER_ERR(XFER_ERR_TIMEOUT, "channel %s: %s: nothing from %s within %d ms",
                          ch->cfg->name, what, peer_name(ch), ch->x->timeout_ms);
            goto out;
        }
    }
out:
    return st;
}

/* ---- the application's calls ------------------------------------------------------------- */

static xfer_status_t check_usable(xfer_channel_t *ch)
{
    if (ch->peer_failed)
        return peer_failed_error(ch);
    if (ch->failed)
        return XFER_ERR(XFER_ERR_STATE, "channel %s failed earlier; it cannot be used",
                        ch->cfg->name);
    if (ch->finished)
        return XFER_ERR(XFER_ERR_STATE, "channel %s was finalized", ch->cfg->name);
    return XFER_SUCCESS;
}

static xfer_status_t ended(xfer_channel_t *ch, uint64_t step)
{
    const uint64_t lim = run_limit(ch);
    int k, who = 1 - ch->side;
    for (k = 0; k < 2; k++)
        if (ch->sends[k] && ch->eos[k] >= 0 && (uint64_t) ch->eos[k] == lim)
            who = k;
    ch->ended = 1;
    if (who == ch->side && this_sends(ch) && !this_recvs(ch) && ch->close_seen)
        return XFER_ERR(XFER_ERR_END_OF_STREAM,
                        "channel %s: %s closed the channel after step %lld; step %llu is not sent",
                        ch->cfg->name, peer_name(ch), (long long) lim - 1,
                        (unsigned long long) step);
    return XFER_ERR(XFER_ERR_END_OF_STREAM, "channel %s: %s ended the channel after %llu step%s",
                    ch->cfg->name, side_name(ch, who), (unsigned long long) lim,
                    lim == 1 ? "" : "s");
}

static xfer_rt_dset_t *find_dset(xfer_channel_t *ch, const char *name)
{
    int i;
    for (i = 0; i < ch->nds; i++)
        if (strcmp(ch->ds[i].cfg->name, name) == 0)
            return &ch->ds[i];
    return NULL;
}

static xfer_status_t no_such_dataset(xfer_channel_t *ch, const char *name)
{
    char list[400];
    size_t o = 0;
    int i;
    list[0] = '\0';
    for (i = 0; i < ch->nds && o < sizeof(list); i++)
        o += (size_t) snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "",
                               ch->ds[i].cfg->name);
    return XFER_ERR(XFER_ERR_NOT_FOUND, "channel %s has no dataset \"%s\" (datasets: %s)",
                    ch->cfg->name, name, list);
}

static int slot_free_cond(xfer_channel_t *ch, void *arg)
{
    const uint64_t s = *(uint64_t *) arg;
    return slot_of(ch, s)->state == XFER_SLOT_FREE || run_limit(ch) <= s;
}

/* The slot of the current step, ready for puts. */
static xfer_status_t fill_slot(xfer_channel_t *ch, xfer_rt_slot_t **out)
{
    xfer_rt_slot_t *sl = slot_of(ch, ch->cur);
    xfer_status_t st;
    uint64_t s = ch->cur;
    if (sl->state == XFER_SLOT_FILLING && sl->step == ch->cur) {
        *out = sl;
        return XFER_SUCCESS;
    }
    if (sl->state != XFER_SLOT_FREE)
        XFER_CHECK_GOTO(wait_until(ch, slot_free_cond, &s, s, "waiting for a free step slot"), st,
                        out_err);
    if (sl->state != XFER_SLOT_FREE)
        return ended(ch, s);
    sl->state = XFER_SLOT_FILLING;
    sl->step = ch->cur;
    sl->mask = 0;
    *out = sl;
    return XFER_SUCCESS;
out_err:
    return st;
}

/* Step 0: keep a block in stage0 (see runtime.h) until the contribution is laid out. */
static xfer_status_t stage_block(xfer_channel_t *ch, xfer_rt_dset_t *ds, const void *block,
                                 size_t bytes)
{
    const size_t padded = (bytes + 7) & ~(size_t) 7;
    size_t base = ch->stage0_len ? ch->stage0_len : sizeof(xfer_rt_hdr_t);
    char *grown;
    if (ds->staged && ds->st_len == bytes) { /* put again, same block: in place */
        memcpy(ch->stage0 + ds->st_off, block, bytes);
        return XFER_SUCCESS;
    }
    if (padded > SIZE_MAX - base)
        return XFER_ERR(XFER_ERR_TOO_LARGE, "staging dataset %s", ds->cfg->name);
    /* exactly the size needed: glibc grows large blocks with mremap, without copying */
    grown = xfer_realloc_array(ch->stage0, base + padded, 1);
    if (!grown)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "staging dataset %s (%zu bytes)", ds->cfg->name, bytes);
    if (!ch->stage0)
        memset(grown, 0, base); /* the header's room */
    ch->stage0 = grown;
    memcpy(grown + base, block, bytes);
    memset(grown + base + bytes, 0, padded - bytes);
    ds->staged = 1;
    ds->st_off = base;
    ds->st_len = bytes;
    ch->stage0_len = base + padded;
    return XFER_SUCCESS;
}

static xfer_status_t put_impl(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block)
{
    xfer_status_t st;
    xfer_rt_dset_t *ds;
    xfer_rt_slot_t *sl;
    uint64_t v;
    int i;

    if (!ch || !d || !d->name)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel, descriptor or its name is NULL");
    XFER_CHECK_GOTO(check_usable(ch), st, out);
    ds = find_dset(ch, d->name);
    if (!ds)
        return no_such_dataset(ch, d->name);
    if (!ds->out)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel %s: dataset %s is sent by %s, not by %s",
                        ch->cfg->name, d->name, peer_name(ch), side_name(ch, ch->side));
    if (d->type != ds->cfg->type || d->ndims != ds->cfg->ndims ||
        memcmp(d->dims, ds->cfg->dims, (size_t) d->ndims * sizeof(uint64_t)) != 0) {
        char want[200], got[200];
        uint64_t z[XFER_MAX_DIMS] = {0};
        fmt_box(want, sizeof(want), ds->cfg->ndims, z, ds->cfg->dims);
        if (d->ndims >= 1 && d->ndims <= XFER_MAX_DIMS)
            fmt_box(got, sizeof(got), d->ndims, z, d->dims);
        else
            snprintf(got, sizeof(got), "(%d dimensions)", d->ndims);
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: dataset %s is %s%s in the workflow file, the put says %s%s",
                        ch->cfg->name, d->name, xfer_type_name(ds->cfg->type), want,
                        xfer_type_name(d->type), got);
    }
    for (i = 0; i < d->ndims; i++)
        if (d->count[i] > d->dims[i] || d->start[i] > d->dims[i] - d->count[i])
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: block start %llu count %llu in dimension "
                            "%d exceeds its size %llu",
                            ch->cfg->name, d->name, (unsigned long long) d->start[i],
                            (unsigned long long) d->count[i], i, (unsigned long long) d->dims[i]);
    v = volume(d->ndims, d->count);
    if (v > 0 && !block)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel %s: dataset %s: block is NULL",
                        ch->cfg->name, d->name);
    if (ch->cur_committed)
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s: step %llu was committed by its first xfer_get: put every "
                        "dataset of a full-duplex step before getting",
                        ch->cfg->name, (unsigned long long) ch->cur);
    if (run_limit(ch) <= ch->cur)
        return ended(ch, ch->cur);
    if (ch->setup || ch->cur > 0) { /* the decomposition is fixed by step 0 */
        const size_t len = (size_t) d->ndims * sizeof(uint64_t);
        if (ds->declared
                ? memcmp(ds->start, d->start, len) != 0 || memcmp(ds->count, d->count, len) != 0
                : v > 0) { /* undeclared in step 0: an empty block */
            char was[200], now[200];
            uint64_t z[XFER_MAX_DIMS] = {0};
            fmt_box(was, sizeof(was), d->ndims, ds->declared ? ds->start : z,
                    ds->declared ? ds->count : z);
            fmt_box(now, sizeof(now), d->ndims, d->start, d->count);
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: this rank's block changed from %s to %s "
                            "in step %llu; the decomposition is fixed by the first step",
                            ch->cfg->name, d->name, was, now, (unsigned long long) ch->cur);
        }
    } else {
        memcpy(ds->start, d->start, (size_t) d->ndims * sizeof(uint64_t));
        memcpy(ds->count, d->count, (size_t) d->ndims * sizeof(uint64_t));
        ds->declared = 1;
    }
    XFER_CHECK_GOTO(fill_slot(ch, &sl), st, out);
    sl->mask |= (uint64_t) 1 << ds->bit;
    if (v > 0) {
        if (!sl->sbuf) /* before the first step is set up: keep the block until then */
            return stage_block(ch, ds, block, (size_t) v * ds->esize);
        memcpy(sl->sbuf + ds->my_off, block, (size_t) v * ds->esize);
    }
    return XFER_SUCCESS;
out:
    return st;
}

static int step0_go(xfer_channel_t *ch, void *arg)
{
    int k;
    (void) arg;
    if (run_limit(ch) == 0)
        return 1;
    for (k = 0; k < 2; k++)
        if (ch->sends[k] && ch->ann[k] < 1)
            return 0;
    return 1;
}

/* Commit the current step of a sending rank: header, announcement, start when possible. */
/* What a step of this side moves, for xferd's throughput figures: the datasets put in it,
 * whole (the sending ranks' blocks tile them). */
static uint64_t step_bytes(const xfer_channel_t *ch, uint64_t mask)
{
    uint64_t b = 0;
    int i;
    for (i = 0; i < ch->nds; i++) {
        const xfer_rt_dset_t *d = &ch->ds[i];
        if (d->out && (mask >> d->bit & 1u))
            b += volume(d->cfg->ndims, d->cfg->dims) * d->esize;
    }
    return b;
}

static xfer_status_t commit(xfer_channel_t *ch)
{
    xfer_rt_slot_t *sl;
    xfer_rt_hdr_t h;
    xfer_status_t st;
    int i;

    if (ch->cur_committed)
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(poll_notes(ch), st, out);
    if (run_limit(ch) <= ch->cur)
        return ended(ch, ch->cur);
    XFER_CHECK_GOTO(fill_slot(ch, &sl), st, out);
    if (is_announcer(ch)) {
        ch->ann[ch->side] = ch->cur + 1;
        XFER_CHECK_GOTO(announce(ch, NOTE_ANN, (int64_t) ch->cur), st, out);
        xfer_rt_ctl_step(ch->x, ch->index, ch->side, ch->cur, step_bytes(ch, sl->mask));
    }
    if (!ch->setup) {
        /* Step 0 sizes the contributions: once every sending side said go, all ranks of both
         * sides exchange their blocks and build the plans. */
        XFER_CHECK_GOTO(wait_until(ch, step0_go, NULL, 0, "waiting for step 0 to start"), st, out);
        if (run_limit(ch) == 0)
            return ended(ch, ch->cur);
        XFER_CHECK_GOTO(setup(ch), st, out);
        if (ch->stage0) { /* not adopted by setup: copy the blocks into place */
            for (i = 0; i < ch->nds; i++) {
                const xfer_rt_dset_t *d = &ch->ds[i];
                if (d->staged && d->my_bytes)
                    memcpy(sl->sbuf + d->my_off, ch->stage0 + d->st_off, d->my_bytes);
            }
            xfer_free(ch->stage0);
            ch->stage0 = NULL;
        }
    }
    memset(&h, 0, sizeof(h));
    h.magic = XFER_RT_MAGIC;
    h.step = ch->cur;
    h.mask = sl->mask;
    h.rank = (uint64_t) ch->me;
    memcpy(sl->sbuf, &h, sizeof(h));
    sl->state = XFER_SLOT_COMMITTED;
    ch->committed = ch->cur + 1;
    ch->cur_committed = 1;
    st = progress_all(ch, 0, 0);
out:
    return st;
}

static int step_ready(xfer_channel_t *ch, void *arg)
{
    const uint64_t s = *(uint64_t *) arg;
    const xfer_rt_slot_t *sl = slot_of(ch, s);
    return (sl->state == XFER_SLOT_DONE && sl->step == s) || run_limit(ch) <= s;
}

static int ahead_ok(xfer_channel_t *ch, void *arg)
{
    const uint64_t next = *(uint64_t *) arg, w = (uint64_t) ch->cfg->max_in_flight_steps;
    if (run_limit(ch) <= next)
        return 1;
    return slot_of(ch, next)->state == XFER_SLOT_FREE && ch->credit + w >= next;
}

static xfer_status_t step_end_impl(xfer_channel_t *ch)
{
    xfer_status_t st;
    xfer_rt_slot_t *sl;
    uint64_t next;

    if (!ch)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel is NULL");
    XFER_CHECK_GOTO(check_usable(ch), st, out);
    if (ch->ended)
        return ended(ch, ch->cur);
    if (this_sends(ch))
        XFER_CHECK_GOTO(commit(ch), st, out);
    else
        XFER_CHECK_GOTO(progress_all(ch, 0, 0), st, out);
    if (this_recvs(ch)) {
        sl = slot_of(ch, ch->cur);
        ch->released = ch->cur + 1;
        if (sl->step == ch->cur && sl->state == XFER_SLOT_DONE)
            sl->state = XFER_SLOT_FREE;
        /* credit for the sender: it may run max_in_flight_steps ahead of this */
        XFER_CHECK_GOTO(note_send(ch, ch->ctl_inter, 0, NOTE_ACK, (int64_t) ch->released), st, out);
        ch->acks_sent++;
        if (ch->me == 0)
            xfer_rt_ctl_ack(ch->x, ch->index, ch->side, ch->released);
    }
    ch->cur++;
    ch->cur_committed = 0;
    /* Back-pressure: on return the peer has released every step up to cur - W (credit),
     * and the next step's slot is free for its puts. */
    next = ch->cur;
    if (this_sends(ch) && !ahead_ok(ch, &next))
        XFER_CHECK_GOTO(wait_until(ch, ahead_ok, &next, next - 1,
                                   "waiting for the receiver to catch up (max_in_flight_steps)"),
                        st, out);
    st = progress_all(ch, 0, 0);
out:
    return st;
}

/* Copy the part of a block inside a selection: @p src holds the block (start bs, count bc,
 * contiguous), @p dst the selection (start ss, count sc, contiguous). */
static void copy_box(char *dst, const uint64_t *ss, const uint64_t *sc, const char *src,
                     const uint64_t *bs, const uint64_t *bc, int nd, size_t esize)
{
    uint64_t lo[XFER_MAX_DIMS] = {0}, n[XFER_MAX_DIMS] = {0}, idx[XFER_MAX_DIMS] = {0};
    size_t sstride[XFER_MAX_DIMS] = {0}, dstride[XFER_MAX_DIMS] = {0}, run;
    int d, inner;

    for (d = 0; d < nd; d++) {
        uint64_t a = XFER_MAX(ss[d], bs[d]);
        uint64_t b = XFER_MIN(ss[d] + sc[d], bs[d] + bc[d]);
        if (b <= a)
            return; /* disjoint */
        lo[d] = a;
        n[d] = b - a;
        idx[d] = 0;
    }
    sstride[nd - 1] = dstride[nd - 1] = esize;
    for (d = nd - 2; d >= 0; d--) {
        sstride[d] = sstride[d + 1] * (size_t) bc[d + 1];
        dstride[d] = dstride[d + 1] * (size_t) sc[d + 1];
    }
    /* Merge trailing dimensions that are whole in both boxes into one contiguous run. */
    inner = nd - 1;
    run = (size_t) n[nd - 1] * esize;
    while (inner > 0 && n[inner] == bc[inner] && n[inner] == sc[inner]) {
        inner--;
        run *= (size_t) n[inner];
    }
    for (;;) {
        size_t so = 0, doff = 0;
        for (d = 0; d < inner; d++) {
            so += (size_t) (lo[d] - bs[d] + idx[d]) * sstride[d];
            doff += (size_t) (lo[d] - ss[d] + idx[d]) * dstride[d];
        }
        so += (size_t) (lo[inner] - bs[inner]) * sstride[inner];
        doff += (size_t) (lo[inner] - ss[inner]) * dstride[inner];
        for (d = inner + 1; d < nd; d++) {
            so += (size_t) (lo[d] - bs[d]) * sstride[d];
            doff += (size_t) (lo[d] - ss[d]) * dstride[d];
        }
        memcpy(dst + doff, src + so, run);
        for (d = inner - 1; d >= 0; d--) {
            if (++idx[d] < n[d])
                break;
            idx[d] = 0;
        }
        if (d < 0)
            break;
    }
}

static xfer_status_t get_impl(xfer_channel_t *ch, const char *dataset, const uint64_t start[],
                              const uint64_t count[], void *buf, size_t bufsize,
                              xfer_dataset_desc_t *out)
{
    xfer_status_t st;
    xfer_rt_dset_t *ds;
    xfer_rt_slot_t *sl;
    const xfer_rt_hdr_t *h0 = NULL;
    uint64_t s, v, bytes, zero[XFER_MAX_DIMS] = {0};
    int nd, r, d, present = 0, absent = 0, first_absent = -1;
    size_t off = 0;

    if (!ch || !dataset)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or dataset name is NULL");
    XFER_CHECK_GOTO(check_usable(ch), st, out_err);
    ds = find_dset(ch, dataset);
    if (!ds)
        return no_such_dataset(ch, dataset);
    if (ds->out)
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s is sent by %s (this component), not received",
                        ch->cfg->name, dataset, side_name(ch, ch->side));
    nd = ds->cfg->ndims;
    if (!start)
        start = zero;
    if (!count)
        count = ds->cfg->dims;
    for (d = 0; d < nd; d++)
        if (count[d] > ds->cfg->dims[d] || start[d] > ds->cfg->dims[d] - count[d])
            return XFER_ERR(XFER_ERR_INVALID_ARG,
                            "channel %s: dataset %s: selection start %llu count %llu in "
                            "dimension %d exceeds its size %llu",
                            ch->cfg->name, dataset, (unsigned long long) start[d],
                            (unsigned long long) count[d], d,
                            (unsigned long long) ds->cfg->dims[d]);
    v = volume(nd, count);
    bytes = v * ds->esize;
    if (bytes > bufsize || (v > 0 && !buf))
        return XFER_ERR(XFER_ERR_INVALID_ARG,
                        "channel %s: dataset %s: the buffer holds %zu bytes, the selection needs "
                        "%llu",
                        ch->cfg->name, dataset, buf ? bufsize : 0, (unsigned long long) bytes);
    if (ch->ended)
        return ended(ch, ch->cur);
    if (this_sends(ch))
        XFER_CHECK_GOTO(commit(ch), st, out_err); /* full duplex: this step's puts are done */
    s = ch->cur;
    XFER_CHECK_GOTO(wait_until(ch, step_ready, &s, s, "waiting for a step"), st, out_err);
    sl = slot_of(ch, s);
    if (!(sl->state == XFER_SLOT_DONE && sl->step == s))
        return ended(ch, s);
    if (ds->never)
        return XFER_ERR(XFER_ERR_NOT_FOUND,
                        "channel %s: %s did not put dataset %s in step 0, so it never sends it "
                        "(the decomposition is fixed by step 0)",
                        ch->cfg->name, peer_name(ch), dataset);
    /* Headers: every sending rank sent this step; which datasets it put. */
    for (r = 0; r < ch->nremote; r++) {
        const xfer_rt_hdr_t *h = (const xfer_rt_hdr_t *) (sl->rbuf + off);
        const uint64_t bv = volume(nd, ds->g_count + (size_t) r * nd);
        if (h->magic != XFER_RT_MAGIC || h->step != s || h->rank != (uint64_t) r) {
            ch->failed = 1;
            return XFER_ERR(XFER_ERR_MISMATCH,
                            "channel %s: step %llu: the data of %s rank %d is not of this step "
                            "(header step %llu, rank %llu)",
                            ch->cfg->name, (unsigned long long) s, peer_name(ch), r,
                            (unsigned long long) h->step, (unsigned long long) h->rank);
        }
        if (!h0)
            h0 = h;
        if (bv > 0) {
            if (h->mask >> ds->bit & 1)
                present++;
            else if (absent++ == 0)
                first_absent = r;
        }
        off += ch->r_bytes[r];
    }
    if (present == 0 && absent > 0)
        return XFER_ERR(XFER_ERR_NOT_FOUND, "channel %s: %s did not put dataset %s in step %llu",
                        ch->cfg->name, peer_name(ch), dataset, (unsigned long long) s);
    if (absent > 0)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: step %llu: %d ranks of %s put dataset %s, rank %d did not",
                        ch->cfg->name, (unsigned long long) s, present, peer_name(ch), dataset,
                        first_absent);
    for (r = 0, off = 0; r < ch->nremote; r++) {
        const uint64_t *bs = ds->g_start + (size_t) r * nd, *bc = ds->g_count + (size_t) r * nd;
        if (volume(nd, bc) > 0 && v > 0)
            copy_box(buf, start, count, sl->rbuf + off + ds->g_off[r], bs, bc, nd, ds->esize);
        off += ch->r_bytes[r];
    }
    if (out) {
        memset(out, 0, sizeof(*out));
        out->name = ds->cfg->name;
        out->type = ds->cfg->type;
        out->ndims = nd;
        memcpy(out->dims, ds->cfg->dims, (size_t) nd * sizeof(uint64_t));
        memcpy(out->start, start, (size_t) nd * sizeof(uint64_t));
        memcpy(out->count, count, (size_t) nd * sizeof(uint64_t));
        out->step = s;
    }
    return XFER_SUCCESS;
out_err:
    return st;
}

/* An MPI failure on a channel is most often the peer going away: the MPI library may see it
 * (ch3 does, at once) before xferd does. With a control plane, wait (bounded by twice xferd's
 * detection time) for the verdict: the leader asks its connection, the other ranks wait for
 * the leader's NOTE_FAIL. Either way the error names the channel and the peer. */
static xfer_status_t explain(xfer_channel_t *ch, xfer_status_t st)
{
    const xfer_config_t *cfg;
    char mpi_msg[700];
    double deadline;
    int wait_ms;

    if (st != XFER_ERR_MPI || !ch)
        return st;
    cfg = ch->x->cfg;
    snprintf(mpi_msg, sizeof(mpi_msg), "%s", xfer_last_error());
    ch->failed = 1;
    if (!ch->x->use_ctl)
        return xfer_err_raw(st, "channel %s: communication with component %s failed: %s",
                            ch->cfg->name, peer_name(ch), mpi_msg);
    wait_ms =
        2 * (cfg->heartbeat_timeout_ms > 0 ? cfg->heartbeat_timeout_ms : 4 * cfg->heartbeat_ms) +
        cfg->heartbeat_ms;
    deadline = MPI_Wtime() + 1e-3 * wait_ms;
    while (!ch->peer_failed && MPI_Wtime() < deadline) {
        const struct timespec nap = {0, 2 * 1000 * 1000};
        if (ch->me == 0) {
            (void) check_peer(ch); /* telling the side's other ranks is best effort here */
        } else {
            int flag = 0;
            MPI_Status ms;
            note_t n;
            while (!ch->peer_failed &&
                   MPI_Iprobe(0, XFER_NOTE_TAG, ch->ctl_local, &flag, &ms) == MPI_SUCCESS && flag &&
                   MPI_Recv(&n, 2, MPI_INT64_T, 0, XFER_NOTE_TAG, ch->ctl_local,
                            MPI_STATUS_IGNORE) == MPI_SUCCESS)
                if (n.type == NOTE_FAIL)
                    ch->peer_failed = 1;
        }
        if (!ch->peer_failed)
            nanosleep(&nap, NULL); /* polling interval of a bounded wait */
    }
    if (ch->peer_failed)
        return peer_failed_error(ch);
    return xfer_err_raw(st,
                        "channel %s: communication with component %s failed, and xferd "
                        "declared no failure within %d ms: %s",
                        ch->cfg->name, peer_name(ch), wait_ms, mpi_msg);
}

/* MPICH reports a failed request of MPI_Testany/Waitall through MPI_COMM_WORLD's error
 * handler, not the request's communicator: while a call of ours runs, failures must come back
 * as codes (the application's handlers are restored on return). */
typedef struct errh_guard {
    MPI_Errhandler world, self;
    int set;
} errh_guard_t;

static void guard_begin(errh_guard_t *g)
{
    g->set = MPI_Comm_get_errhandler(MPI_COMM_WORLD, &g->world) == MPI_SUCCESS;
    if (g->set && MPI_Comm_get_errhandler(MPI_COMM_SELF, &g->self) != MPI_SUCCESS) {
        MPI_Errhandler_free(&g->world);
        g->set = 0;
    }
    if (g->set) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    }
}

static xfer_status_t guard_end(errh_guard_t *g, xfer_status_t st)
{
    if (g->set) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, g->world);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, g->self);
        MPI_Errhandler_free(&g->world);
        MPI_Errhandler_free(&g->self);
    }
    return st;
}

xfer_status_t xfer_put(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block)
{
    errh_guard_t g;
    guard_begin(&g);
    return guard_end(&g, explain(ch, put_impl(ch, d, block)));
}

xfer_status_t xfer_step_end(xfer_channel_t *ch)
{
    errh_guard_t g;
    guard_begin(&g);
    return guard_end(&g, explain(ch, step_end_impl(ch)));
}

xfer_status_t xfer_get_selection(xfer_channel_t *ch, const char *dataset, const uint64_t start[],
                                 const uint64_t count[], void *buf, size_t bufsize,
                                 xfer_dataset_desc_t *out)
{
    errh_guard_t g;
    guard_begin(&g);
    return guard_end(&g, explain(ch, get_impl(ch, dataset, start, count, buf, bufsize, out)));
}

xfer_status_t xfer_get(xfer_channel_t *ch, const char *dataset, void *buf, size_t bufsize,
                       xfer_dataset_desc_t *out)
{
    return xfer_get_selection(ch, dataset, NULL, NULL, buf, bufsize, out);
}

/* ---- channel life cycle ------------------------------------------------------------------ */

xfer_status_t xfer_rt_channel_new(struct xfer *x, int index, MPI_Comm inter, int disconnect,
                                  xfer_channel_t **out)
{
    const xfer_cfg_channel_t *c = &x->cfg->channels[index];
    xfer_channel_t *ch;
    xfer_status_t st = XFER_SUCCESS;
    const char *env_alg = xfer_env_str("XFER_ALGORITHM");
    const xfer_algo_t *ring;
    int i, bits[2] = {0, 0};

    ch = xfer_calloc(1, sizeof(*ch));
    if (!ch)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "channel");
    ch->x = x;
    ch->index = index;
    ch->cfg = c;
    ch->inter = inter;
    ch->disconnect = disconnect;
    ch->ctl_inter = ch->ctl_local = MPI_COMM_NULL;
    ch->side = c->from == x->comp ? 0 : 1;
    ch->peer = ch->side == 0 ? c->to : c->from;
    ch->eos[0] = ch->eos[1] = -1;
    ch->role = c->duplex == XFER_DUPLEX_FULL ? XFER_ROLE_BOTH
               : ch->side == 0               ? XFER_ROLE_SEND
                                             : XFER_ROLE_RECV;
    /* Precedence: file < environment. A ring topology keeps the automatic choice on rings;
     * the plan's selector does not know the workflow's topology, so the registry names the
     * ring algorithm for the duplex mode now. */
    snprintf(ch->algorithm, sizeof(ch->algorithm), "%s", env_alg ? env_alg : c->algorithm);
    if (!env_alg && strcmp(c->algorithm, "auto") == 0 && x->cfg->topology == XFER_TOPOLOGY_RING &&
        (ring = xfer_select_ring_default(c->duplex == XFER_DUPLEX_FULL)))
        snprintf(ch->algorithm, sizeof(ch->algorithm), "%s", ring->name);
    if (c->hier.enabled == 1) /* forced node staging around the chosen (or automatic) one */
        snprintf(ch->plan_algorithm, sizeof(ch->plan_algorithm), "hier%s%s",
                 strcmp(ch->algorithm, "auto") ? ":" : "",
                 strcmp(ch->algorithm, "auto") ? ch->algorithm : "");
    else
        snprintf(ch->plan_algorithm, sizeof(ch->plan_algorithm), "%s", ch->algorithm);
    ch->nds = c->ndatasets;
    ch->ds = xfer_calloc((size_t) ch->nds, sizeof(*ch->ds));
    ch->nslots = c->max_in_flight_steps + 1;
    ch->slots = xfer_calloc((size_t) ch->nslots, sizeof(*ch->slots));
    if (!ch->ds || !ch->slots) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel");
        goto fail;
    }
    for (i = 0; i < ch->nslots; i++)
        ch->slots[i].comm = MPI_COMM_NULL;
    for (i = 0; i < ch->nds; i++) {
        xfer_rt_dset_t *d = &ch->ds[i];
        const int k = c->datasets[i].from == c->from ? 0 : 1;
        d->cfg = &c->datasets[i];
        d->out = k == ch->side;
        d->bit = bits[k]++;
        d->esize = xfer_type_size(d->cfg->type);
        ch->sends[k] = 1;
    }
    XFER_MPI_GOTO(MPI_Comm_rank(inter, &ch->me), st, fail);
    XFER_MPI_GOTO(MPI_Comm_size(inter, &ch->nlocal), st, fail);
    XFER_MPI_GOTO(MPI_Comm_remote_size(inter, &ch->nremote), st, fail);
    XFER_MPI_GOTO(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN), st, fail);
    if (ch->me == 0 && ch->sends[ch->side] &&
        !(ch->rel_of = xfer_calloc((size_t) ch->nremote, sizeof(uint64_t)))) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channel");
        goto fail;
    }
    XFER_MPI_GOTO(MPI_Comm_dup(inter, &ch->ctl_inter), st, fail);
    XFER_MPI_GOTO(MPI_Comm_dup(x->comm, &ch->ctl_local), st, fail);
    *out = ch;
    return XFER_SUCCESS;
fail:
    ch->inter = MPI_COMM_NULL; /* the caller still owns it */
    xfer_rt_channel_free(&ch, 0);
    return st;
}

/* One line per dataset, the same text on both sides when they agree. */
static void describe(const xfer_channel_t *ch, int i, char *buf, size_t len)
{
    const xfer_cfg_dataset_t *d = &ch->cfg->datasets[i];
    size_t o = (size_t) snprintf(buf, len, "%s[", xfer_type_name(d->type));
    int k;
    for (k = 0; k < d->ndims && o < len; k++)
        o += (size_t) snprintf(buf + o, len - o, "%s%llu", k ? "," : "",
                               (unsigned long long) d->dims[k]);
    if (o < len)
        snprintf(buf + o, len - o, "] from %s", ch->x->cfg->components[d->from].name);
}

/* What one side sends the other at formation: a text table, compared line by line. */
static size_t channel_table(const xfer_channel_t *ch, char *buf, size_t len)
{
    size_t o = 0;
    int i;
    o += (size_t) snprintf(buf + o, len - o, "duplex %s\nalgorithm %s\nhier %d %d %d\n",
                           ch->cfg->duplex == XFER_DUPLEX_FULL ? "full" : "half", ch->algorithm,
                           ch->cfg->hier.enabled, ch->cfg->hier.leaders_per_node,
                           ch->cfg->hier.sync);
    for (i = 0; i < ch->nds && o < len; i++) {
        char d[256];
        describe(ch, i, d, sizeof(d));
        o += (size_t) snprintf(buf + o, len - o, "dataset %s %s\n", ch->cfg->datasets[i].name, d);
    }
    return o < len ? o : len;
}

/* Compare the two tables; the first difference, in words, into @p msg. */
static int compare_tables(const xfer_channel_t *ch, const char *mine, const char *theirs, char *msg,
                          size_t len)
{
    const char *me = ch->x->cfg->components[ch->x->comp].name, *peer = peer_name(ch);
    const char *p;
    char line[400], key[128];
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
                char other[400];
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
xfer_status_t xfer_rt_channel_handshake(xfer_channel_t *ch)
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
        st = wait_req(ch, &req[0], "exchanging the channel description");
        if (st == XFER_SUCCESS)
            st = wait_req(ch, &req[1], "exchanging the channel description");
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
                                          ch->cfg->name, peer_name(ch));
        if (v[1])
            st = XFER_ERR(XFER_ERR_MISMATCH, "channel %s: %s", ch->cfg->name, msg);
    }
out:
    xfer_free(mine);
    xfer_free(theirs);
    if (st != XFER_SUCCESS)
        ch->failed = 1;
    return st;
}

static int drained(xfer_channel_t *ch, void *arg)
{
    const uint64_t lim = run_limit(ch);
    int i, k;
    (void) arg;
    for (k = 0; k < 2; k++)
        if (ch->sends[k] && ch->eos[k] < 0)
            return 0; /* a sending side has not said its last word (its notes still come) */
    if (ch->started < lim && ch->setup)
        return 0;
    if (!ch->setup && lim > 0)
        return 0;
    for (i = 0; i < ch->nslots; i++)
        if (ch->slots[i].state == XFER_SLOT_ACTIVE)
            return 0;
    return 1;
}

static int end_cond(xfer_channel_t *ch, void *arg)
{
    (void) arg;
    return ch->end_seen;
}

static int fin_cond(xfer_channel_t *ch, void *arg)
{
    (void) arg;
    /* the goodbye, and every ACK sent before it (they come from several ranks: no order) */
    return ch->fin_seen && (!is_announcer(ch) || (int64_t) ch->acks_recv >= ch->fin_acks);
}

/* Finish a channel: the sending sides announce their end, the receive-only side asks the
 * sender to stop, every step that was announced is completed, then both rank 0s say goodbye
 * so that no note is left in flight when the communicators go. */
xfer_status_t xfer_rt_channel_finish(xfer_channel_t *ch)
{
    xfer_status_t st = XFER_SUCCESS;
    int i;

    if (ch->failed || ch->finished)
        return XFER_SUCCESS;
    XFER_CHECK_GOTO(poll_notes(ch), st, out);
    if (ch->peer_failed) { /* nobody to finish with */
        st = peer_failed_error(ch);
        goto out;
    }
    /* An uncommitted step's puts are dropped. */
    for (i = 0; i < ch->nslots; i++)
        if (ch->slots[i].state == XFER_SLOT_FILLING)
            ch->slots[i].state = XFER_SLOT_FREE;
    if (this_sends(ch))
        XFER_CHECK_GOTO(end_own_side(ch), st, out);
    else if (ch->me == 0 && run_limit(ch) == UINT64_MAX)
        XFER_CHECK_GOTO(note_send(ch, ch->ctl_inter, 0, NOTE_CLOSE, 0), st, out);
    ch->released = UINT64_MAX / 2; /* receive what was announced, for nobody */
    for (i = 0; i < ch->nslots; i++)
        if (ch->slots[i].state == XFER_SLOT_DONE)
            ch->slots[i].state = XFER_SLOT_FREE;
    XFER_CHECK_GOTO(wait_until(ch, drained, NULL, UINT64_MAX, "finishing the steps in flight"), st,
                    out);
    {
        uint64_t total = 0;
        XFER_MPI_GOTO(
            MPI_Reduce(&ch->acks_sent, &total, 1, MPI_UINT64_T, MPI_SUM, 0, ch->ctl_local), st,
            out);
        if (ch->me == 0) {
            XFER_CHECK_GOTO(note_send(ch, ch->ctl_inter, 0, NOTE_FIN, (int64_t) total), st, out);
            XFER_CHECK_GOTO(wait_until(ch, fin_cond, NULL, 0, "saying goodbye"), st, out);
        }
    }
    /* The announcer's notes to its own side end with END: drain them all. */
    if (is_announcer(ch)) {
        int r;
        for (r = 1; r < ch->nlocal; r++)
            XFER_CHECK_GOTO(note_send(ch, ch->ctl_local, r, NOTE_END, 0), st, out);
    } else if (this_sends(ch)) {
        XFER_CHECK_GOTO(wait_until(ch, end_cond, NULL, 0, "finishing"), st, out);
    }
    XFER_CHECK_GOTO(notes_reap(ch, 1), st, out);
    XFER_MPI_GOTO(MPI_Barrier(ch->ctl_local), st, out);
    ch->finished = 1;
out:
    if (st != XFER_SUCCESS)
        ch->failed = 1;
    return st;
}

void xfer_rt_channel_free(xfer_channel_t **pch, int collective)
{
    xfer_channel_t *ch = pch ? *pch : NULL;
    int i;
    if (!ch)
        return;
    for (i = 0; ch->slots && i < ch->nslots; i++) {
        xfer_rt_slot_t *s = &ch->slots[i];
        if (collective && s->plan)
            xfer_plan_free(&s->plan);
        if (collective && s->comm != MPI_COMM_NULL) {
            if (ch->disconnect)
                MPI_Comm_disconnect(&s->comm);
            else
                MPI_Comm_free(&s->comm);
        }
        xfer_free(s->sbuf);
        xfer_free(s->rbuf);
    }
    for (i = 0; ch->ds && i < ch->nds; i++) {
        xfer_free(ch->ds[i].g_start);
        xfer_free(ch->ds[i].g_count);
        xfer_free(ch->ds[i].g_off);
    }
    xfer_free(ch->stage0);
    notes_reap(ch, collective);
    for (i = 0; i < ch->nout; i++)
        xfer_free(ch->out[i]); /* abandoned after a failure */
    xfer_free(ch->out);
    if (collective) {
        if (ch->ctl_local != MPI_COMM_NULL)
            MPI_Comm_free(&ch->ctl_local);
        if (ch->ctl_inter != MPI_COMM_NULL) {
            if (ch->disconnect)
                MPI_Comm_disconnect(&ch->ctl_inter);
            else
                MPI_Comm_free(&ch->ctl_inter);
        }
        if (ch->inter != MPI_COMM_NULL) {
            if (ch->disconnect)
                MPI_Comm_disconnect(&ch->inter);
            else
                MPI_Comm_free(&ch->inter);
        }
    }
    xfer_free(ch->r_bytes);
    xfer_free(ch->rel_of);
    xfer_free(ch->ds);
    xfer_free(ch->slots);
    xfer_free(ch);
    *pch = NULL;
}

/* ---- small accessors --------------------------------------------------------------------- */

xfer_status_t xfer_channel_role(const xfer_channel_t *ch, xfer_role_t *role)
{
    if (!ch || !role)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or output is NULL");
    *role = ch->role;
    return XFER_SUCCESS;
}

xfer_status_t xfer_channel_step(const xfer_channel_t *ch, uint64_t *step)
{
    if (!ch || !step)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or output is NULL");
    *step = ch->cur;
    return XFER_SUCCESS;
}

xfer_status_t xfer_channel_intercomm(const xfer_channel_t *ch, MPI_Comm *inter)
{
    if (!ch || !inter)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel or output is NULL");
    *inter = ch->inter;
    return XFER_SUCCESS;
}
