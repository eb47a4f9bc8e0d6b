/* SPDX-License-Identifier: BSD-3-Clause */
/* The second phase of each slot's step (stream_joined.c: the joined, variable, per_step and
 * compressed datasets): the other side's table read, the step by the slot's plan when it carries
 * it, else each sending rank's blocks (or frames: stream_zip.c) to every receiving rank whose
 * share they meet, from the put's copy or the bound block, and each receiving rank's share
 * received in place (subarray datatypes), once the box table arrived when there is one. */
#include <limits.h>
#include <string.h>

#include "../coll/coll.h"
#include "stream_jtable.h"

/* Receiving rank @p r's box of a step of shape @p dims, by its rule (what
 * xfer_ch_step_selection gives that rank itself). */
static void box_of(const xfer_rt_dset_t *d, int r, int nrecv, const uint64_t *dims, uint64_t *bs,
                   uint64_t *bc)
{
    const int nd = d->cfg->ndims;
    if (xfer_ch_rule_box(nd, d->jrule + (size_t) r * 2 * (size_t) nd, dims, nrecv, r, bs, bc) ==
        XFER_SUCCESS)
        return;
    xfer_clear_error(); /* (no such mode: the set-up's checks refused it) */
    memset(bs, 0, (size_t) nd * sizeof(uint64_t));
    memset(bc, 0, (size_t) nd * sizeof(uint64_t));
}

/* The intersection of two boxes: 0 when empty. */
static int meet(int nd, const uint64_t *as, const uint64_t *ac, const uint64_t *bs,
                const uint64_t *bc, uint64_t *is, uint64_t *ic)
{
    int e;
    for (e = 0; e < nd; e++) {
        const uint64_t lo = as[e] > bs[e] ? as[e] : bs[e];
        const uint64_t hi = as[e] + ac[e] < bs[e] + bc[e] ? as[e] + ac[e] : bs[e] + bc[e];
        if (hi <= lo)
            return 0;
        is[e] = lo;
        ic[e] = hi - lo;
    }
    return 1;
}

/* Does one of side @p k's rank @p r's blocks of its dataset @p j in the slot's step meet the box
 * (@p bs, @p bc)? */
static int meets_any(const xfer_channel_t *ch, const xfer_rt_jslot_t *js, int k, int j, int r,
                     const uint64_t *bs, const uint64_t *bc)
{
    const int nd = dset_at(ch, k, j)->cfg->ndims;
    uint64_t ms[XFER_MAX_DIMS], mc[XFER_MAX_DIMS], is[XFER_MAX_DIMS], ic[XFER_MAX_DIMS];
    int b;
    for (b = 0; b < xfer_ch_jnblk(ch, js->tab[k], k, r, j); b++) {
        xfer_ch_jbox(ch, js, k, j, r, b, ms, mc);
        if (meet(nd, ms, mc, bs, bc, is, ic))
            return 1;
    }
    return 0;
}

/* The datatype of box (@p is, @p ic) inside an array (start @p as, count @p ac) of @p esize-byte
 * elements, C order; XFER_ERR_TOO_LARGE past int extents. */
static xfer_status_t box_type(const xfer_channel_t *ch, const xfer_rt_dset_t *d, const uint64_t *as,
                              const uint64_t *ac, const uint64_t *is, const uint64_t *ic,
                              MPI_Datatype *t)
{
    const int nd = d->cfg->ndims;
    int sizes[XFER_MAX_DIMS], subs[XFER_MAX_DIMS], starts[XFER_MAX_DIMS], e;
    MPI_Datatype el = MPI_DATATYPE_NULL;
    xfer_status_t st = XFER_SUCCESS;
    for (e = 0; e < nd; e++) {
        if (ac[e] > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE,
                            "channel %s: dataset %s: an extent of %llu rows or elements, more than "
                            "one message describes",
                            ch->cfg->name, d->cfg->name, (unsigned long long) ac[e]);
        sizes[e] = (int) ac[e];
        subs[e] = (int) ic[e];
        starts[e] = (int) (is[e] - as[e]);
    }
    XFER_MPI_GOTO(MPI_Type_contiguous((int) d->esize, MPI_BYTE, &el), st, out);
    XFER_MPI_GOTO(MPI_Type_create_subarray(nd, sizes, subs, starts, MPI_ORDER_C, el, t), st, out);
    XFER_MPI_GOTO(MPI_Type_commit(t), st, out);
out:
    if (el != MPI_DATATYPE_NULL)
        MPI_Type_free(&el);
    return st;
}
/* ---- the second phase ---------------------------------------------------------------------- */

static xfer_status_t add_req(xfer_rt_jslot_t *js, MPI_Request **out)
{
    if (js->nreq == js->cap_req) {
        const int cap = js->cap_req ? 2 * js->cap_req : 16;
        MPI_Request *nr = xfer_realloc_array(js->req, (size_t) cap, sizeof(*nr));
        if (!nr)
            return XFER_ERR(XFER_ERR_NO_MEMORY, "joined rows: requests");
        js->req = nr;
        js->cap_req = cap;
    }
    *out = &js->req[js->nreq++];
    return XFER_SUCCESS;
}

/* The other side's table, from rank 0's attribute area of the step (receiving ranks). */
static xfer_status_t read_table(xfer_channel_t *ch, xfer_rt_slot_t *sl, xfer_rt_jslot_t *js)
{
    const int ko = 1 - ch->side;
    const xfer_rt_hdr_t *h = (const xfer_rt_hdr_t *) (sl->rbuf + xfer_ch_hdr_at(ch, 0));
    if (h->magic != XFER_RT_MAGIC || h->step != sl->step)
        return XFER_ERR(XFER_ERR_MISMATCH,
                        "channel %s: step %llu: rank 0's header of %s is not of this step",
                        ch->cfg->name, (unsigned long long) sl->step, xfer_ch_peer_name(ch));
    memcpy(js->tab[ko], sl->rbuf + xfer_ch_attr_at(ch) + ch->jn->tab_at,
           (size_t) ch->jn->W[ko] * (size_t) ch->nremote * sizeof(uint64_t));
    xfer_ch_jprefix(ch, js, ko);
    return XFER_SUCCESS;
}

/* Post the send (@p out) or the receive of box (@p is, @p ic) of the array @p buf holds (start
 * @p as, count @p ac), to or from rank @p peer of the other side: one message, described by a
 * subarray datatype (no packing). */
static xfer_status_t post(xfer_channel_t *ch, xfer_rt_jslot_t *js, const xfer_rt_dset_t *d, int out,
                          void *buf, const uint64_t *as, const uint64_t *ac, const uint64_t *is,
                          const uint64_t *ic, int peer, int tag, MPI_Comm comm)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Request *q;
    xfer_status_t st;
    XFER_CHECK_GOTO(box_type(ch, d, as, ac, is, ic, &t), st, out_err);
    XFER_CHECK_GOTO(add_req(js, &q), st, out_err);
    if (out)
        XFER_MPI_GOTO(MPI_Isend(buf, 1, t, peer, tag, comm, q), st, out_err);
    else
        XFER_MPI_GOTO(MPI_Irecv(buf, 1, t, peer, tag, comm, q), st, out_err);
    {
        const uint64_t b = xfer_ch_volume(d->cfg->ndims, ic) * d->esize;
        if (out) {
            ch->stats.bytes_sent += b;
            ch->stats.wire_bytes_sent += b;
        } else {
            ch->stats.bytes_received += b;
            ch->stats.wire_bytes_received += b;
        }
    }
out_err:
    if (t != MPI_DATATYPE_NULL) /* (freed once the operation no longer needs it) */
        MPI_Type_free(&t);
    return st;
}

/* Post the send (@p out) or the receive of @p n bytes of frames (a multiple of 8) to or from rank
 * @p peer of the other side. */
static xfer_status_t post_frames(xfer_channel_t *ch, xfer_rt_jslot_t *js, int out, void *buf,
                                 size_t n, int peer, int tag, MPI_Comm comm)
{
    MPI_Request *q;
    xfer_status_t st;
    if (n / 8 > INT_MAX)
        return XFER_ERR(XFER_ERR_TOO_LARGE,
                        "channel %s: %zu bytes of compressed frames from one rank, more than one "
                        "message carries",
                        ch->cfg->name, n);
    XFER_CHECK_GOTO(add_req(js, &q), st, out_err);
    if (out) {
        XFER_MPI_GOTO(MPI_Isend(buf, (int) (n / 8), MPI_UINT64_T, peer, tag, comm, q), st, out_err);
        ch->stats.wire_bytes_sent += n;
    } else {
        XFER_MPI_GOTO(MPI_Irecv(buf, (int) (n / 8), MPI_UINT64_T, peer, tag, comm, q), st, out_err);
        ch->stats.wire_bytes_received += n;
    }
out_err:
    return st;
}

#define JBOX_TAG 32000 /* the box table's messages (the datasets' own: their indices) */

/* This rank's blocks of each dataset its side sends, to every receiving rank whose box meets
 * them, from the put's copy (a per_step dataset's blocks one after the other, each padded) or
 * the caller's bound block. */
static xfer_status_t post_sends(xfer_channel_t *ch, xfer_rt_jslot_t *js, MPI_Comm comm)
{
    xfer_rt_joined_t *jn = ch->jn;
    const int k = ch->side, nrecv = side_ranks(ch, 1 - k);
    xfer_status_t st = XFER_SUCCESS;
    int j, r, b;

    for (j = 0; j < jn->nj[k]; j++) {
        xfer_rt_dset_t *d = &ch->ds[jn->idx[k][j]];
        const int nd = d->cfg->ndims, nb = xfer_ch_jnblk(ch, js->tab[k], k, ch->me, j);
        uint64_t dims[XFER_MAX_DIMS], ms[XFER_MAX_DIMS], mc[XFER_MAX_DIMS];
        uint64_t rs[XFER_MAX_DIMS], rcnt[XFER_MAX_DIMS], is[XFER_MAX_DIMS], ic[XFER_MAX_DIMS];
        size_t off = 0;
        xfer_ch_jdims(ch, js, k, j, dims);
        if (zipped(d) && !js->zskip[j]) { /* its frames, whole, to every receiving rank one of
                                              its blocks meets (raw: as any dataset, below) */
            for (r = 0; r < nrecv && js->zlen[j]; r++) {
                box_of(d, r, nrecv, dims, rs, rcnt);
                if (!meets_any(ch, js, k, j, ch->me, rs, rcnt))
                    continue;
                XFER_CHECK_GOTO(
                    post_frames(ch, js, 1, js->z[j], js->zlen[j], r, jn->idx[k][j], comm), st, out);
                ch->stats.bytes_sent += js->zraw_len[j];
            }
            continue;
        }
        for (b = 0; b < nb; b++) {
            uint64_t v;
            xfer_ch_jbox(ch, js, k, j, ch->me, b, ms, mc);
            v = xfer_ch_volume(nd, mc);
            for (r = 0; r < nrecv && v; r++) {
                box_of(d, r, nrecv, dims, rs, rcnt);
                if (meet(nd, ms, mc, rs, rcnt, is, ic))
                    XFER_CHECK_GOTO(post(ch, js, d, 1, (char *) js->from[j] + off, ms, mc, is, ic,
                                         r, jn->idx[k][j], comm),
                                    st, out);
            }
            off += PAD8((size_t) v * d->esize);
        }
    }
out:
    return st;
}

/* This rank's box of each dataset the other side sends, from every sending rank whose blocks
 * meet it (the other side's box table arrived when it has per_step datasets): into the buffer
 * bound to it when that holds the box (xfer_get into it then copies nothing), else into the
 * library's. */
static xfer_status_t post_recvs(xfer_channel_t *ch, xfer_rt_jslot_t *js, MPI_Comm comm)
{
    xfer_rt_joined_t *jn = ch->jn;
    const int k = 1 - ch->side, nsend = side_ranks(ch, k), nrecv = ch->nlocal;
    xfer_status_t st = XFER_SUCCESS;
    int j, r, b;

    for (j = 0; j < jn->nj[k]; j++) {
        xfer_rt_dset_t *d = &ch->ds[jn->idx[k][j]];
        const int nd = d->cfg->ndims;
        uint64_t dims[XFER_MAX_DIMS], ms[XFER_MAX_DIMS], mc[XFER_MAX_DIMS];
        uint64_t is[XFER_MAX_DIMS], ic[XFER_MAX_DIMS];
        uint64_t *bs = js->bs + (size_t) j * XFER_MAX_DIMS,
                 *bc = js->bc + (size_t) j * XFER_MAX_DIMS;
        size_t bytes;
        xfer_ch_jdims(ch, js, k, j, dims);
        box_of(d, ch->me, nrecv, dims, bs, bc);
        bytes = (size_t) xfer_ch_volume(nd, bc) * d->esize;
        js->land[j] = d->bound && bytes <= d->bound_size ? d->bound : NULL;
        if (!js->land[j] && js->sel_cap[j] < bytes) {
            void *nb = xfer_realloc_array(js->sel[j], bytes, 1);
            if (!nb)
                return XFER_ERR(XFER_ERR_NO_MEMORY,
                                "channel %s: dataset %s: %zu bytes of its selection", ch->cfg->name,
                                d->cfg->name, bytes);
            js->sel[j] = nb;
            js->sel_cap[j] = bytes;
        }
        if (!js->land[j])
            js->land[j] = js->sel[j];
        for (r = 0; r < nsend; r++) {
            /* a compressed dataset's frames come whole, when one of the rank's blocks meets
             * (stream_zip.c); its blocks as they are otherwise, each part that meets in place */
            const int frames = zipped(d) && !zraw_at(ch, js->tab[k], k, r, j);
            if (frames) {
                xfer_ch_zip_room(ch, js, j, r, bytes && meets_any(ch, js, k, j, r, bs, bc));
                continue;
            }
            for (b = 0; bytes && b < xfer_ch_jnblk(ch, js->tab[k], k, r, j); b++) {
                xfer_ch_jbox(ch, js, k, j, r, b, ms, mc);
                if (meet(nd, ms, mc, bs, bc, is, ic))
                    XFER_CHECK_GOTO(
                        post(ch, js, d, 0, js->land[j], bs, bc, is, ic, r, jn->idx[k][j], comm), st,
                        out);
            }
            if (zipped(d))
                xfer_ch_zip_room(ch, js, j, r, 0);
        }
        if (zipped(d)) { /* the frames' room no longer moves: their receives */
            size_t *off;
            XFER_CHECK_GOTO(xfer_ch_zip_reserve(ch, js, j, &off), st, out);
            for (r = 0; r < nsend; r++)
                if (off[r + 1] > off[r])
                    XFER_CHECK_GOTO(post_frames(ch, js, 0, js->zin[j] + off[r], off[r + 1] - off[r],
                                                r, jn->idx[k][j], comm),
                                    st, out);
        }
    }
out:
    return st;
}

/* The second phase of the slot's step: the tables read, the step by the plan when it carries it,
 * else each rank's sends; the sending side's rank 0 sends its box table to every receiving rank;
 * a receiving rank posts its receives at once, or once the other side's box table arrived. */
static xfer_status_t start_moving(xfer_channel_t *ch, xfer_rt_slot_t *sl, xfer_rt_jslot_t *js)
{
    xfer_rt_joined_t *jn = ch->jn;
    const MPI_Comm comm = jn->comm[sl - ch->slots];
    const int k = ch->side, ko = 1 - k;
    xfer_status_t st = XFER_SUCCESS;
    size_t words;
    int r;

    js->nreq = js->ndone = 0;
    js->by_plan = js->plan_done = 0;
    js->zt0 = xfer_now();
    if (xfer_ch_this_recvs(ch))
        XFER_CHECK_GOTO(read_table(ch, sl, js), st, out);
    XFER_CHECK_GOTO(xfer_ch_jplan_step(ch, js, &js->by_plan), st, out);
    if (xfer_ch_this_sends(ch) && !js->by_plan)
        XFER_CHECK_GOTO(post_sends(ch, js, comm), st, out);
    if (xfer_ch_this_sends(ch) && ch->me == 0 && (words = xfer_ch_jbox_words(ch, js, k)) > 0)
        for (r = 0; r < ch->nremote; r++) {
            MPI_Request *q;
            XFER_CHECK_GOTO(add_req(js, &q), st, out);
            XFER_MPI_GOTO(MPI_Isend(js->mb[k], (int) words, MPI_UINT64_T, r, JBOX_TAG, comm, q), st,
                          out);
        }
    js->state = J_MOVING;
    if (xfer_ch_this_recvs(ch) && (words = xfer_ch_jbox_words(ch, js, ko)) > 0) {
        if (words > INT_MAX)
            return XFER_ERR(XFER_ERR_TOO_LARGE,
                            "channel %s: step %llu: the blocks of %s take more than %d words",
                            ch->cfg->name, (unsigned long long) sl->step, xfer_ch_peer_name(ch),
                            INT_MAX);
        if (js->mb_cap[ko] < words) {
            uint64_t *nb = xfer_realloc_array(js->mb[ko], words, sizeof(uint64_t));
            if (!nb)
                return XFER_ERR(XFER_ERR_NO_MEMORY, "channel %s: %zu words of blocks",
                                ch->cfg->name, words);
            js->mb[ko] = nb;
            js->mb_cap[ko] = words;
        }
        XFER_MPI_GOTO(
            MPI_Irecv(js->mb[ko], (int) words, MPI_UINT64_T, 0, JBOX_TAG, comm, &js->breq), st,
            out);
        js->state = J_BOXES;
    } else if (xfer_ch_this_recvs(ch) && !js->by_plan) {
        XFER_CHECK_GOTO(post_recvs(ch, js, comm), st, out);
    }
out:
    return st;
}

xfer_status_t xfer_ch_joined_progress(xfer_channel_t *ch, xfer_rt_slot_t *sl, int *done)
{
    xfer_rt_joined_t *jn = ch->jn;
    xfer_rt_jslot_t *js;
    xfer_status_t st = XFER_SUCCESS;
    int flag = 0;

    *done = 1;
    if (!jn)
        return XFER_SUCCESS;
    js = &jn->js[sl - ch->slots];
    if (js->state == J_DONE)
        return XFER_SUCCESS;
    if (js->state != J_MOVING && js->state != J_BOXES) {
        if (xfer_ch_this_sends(ch) && jn->nj[ch->side] && js->state != J_READY) {
            *done = 0; /* (the fixed part waited for the table: not reached) */
            return XFER_SUCCESS;
        }
        XFER_CHECK_GOTO(start_moving(ch, sl, js), st, out);
    }
    if (js->state == J_BOXES) { /* the other side's box table: then this rank's receives */
        XFER_MPI_GOTO(MPI_Test(&js->breq, &flag, MPI_STATUS_IGNORE), st, out);
        if (!flag) {
            *done = 0;
            return XFER_SUCCESS;
        }
        if (!js->by_plan)
            XFER_CHECK_GOTO(post_recvs(ch, js, jn->comm[sl - ch->slots]), st, out);
        js->state = J_MOVING;
    }
    for (; js->ndone < js->nreq; js->ndone++) { /* in order: each one once */
        XFER_MPI_GOTO(MPI_Test(&js->req[js->ndone], &flag, MPI_STATUS_IGNORE), st, out);
        if (!flag)
            break;
    }
    *done = js->ndone == js->nreq;
    if (js->by_plan && !js->plan_done)
        XFER_CHECK_GOTO(xfer_test(js->plan, &js->plan_done), st, out);
    *done &= !js->by_plan || js->plan_done;
    if (*done && xfer_ch_this_recvs(ch))
        XFER_CHECK_GOTO(xfer_ch_zip_decode(ch, js), st, out);
    if (*done && xfer_ch_this_sends(ch))
        xfer_ch_zip_sent(ch, js);
    if (*done)
        js->state = J_DONE;
out:
    return st;
}

/* The slot starts a new step (sending: at its fill; receiving: when its collective starts). */
void xfer_ch_joined_reset(xfer_channel_t *ch, xfer_rt_slot_t *sl)
{
    xfer_rt_jslot_t *js;
    if (!ch->jn)
        return;
    js = &ch->jn->js[sl - ch->slots];
    js->state = J_IDLE;
    js->nreq = 0;
    js->by_plan = 0;
    memset((void *) js->from, 0, (size_t) ch->jn->nj[ch->side] * sizeof(*js->from));
}
