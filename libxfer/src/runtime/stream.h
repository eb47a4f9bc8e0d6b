/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream transport (transport.h; its table is stream_ops.c): its own types and the interface
 * between its files (channel.h has the channel core's, runtime.h the structures both read):
 * stream_notes.c   the step protocol's notes
 * stream_layout.c  a step's slot, the contributions laid out, the plans' options
 * stream_setup.c   step 0's set-up: block exchange, stages, plans
 * stream.c         the slots, progress, puts, commit, step end
 * stream_get.c     the fetch of a received step
 * stream_open.c, stream_finish.c    the open (handshake) and the finish
 * stream_joined.c, stream_jmove.c, stream_jplan.c, stream_zip.c   the joined, variable,
 *                  per_step and compressed datasets: their tables and commit, the second phase
 *                  point to point, by the slot's plan, and the frames (stream_jtable.h)
 *
 * Step protocol (per channel). A side that sends data is a *sending side*; its group rank 0
 * is the side's announcer. Control notes travel on communicators of their own (duplicates of
 * the channel's intercommunicator and of the component's communicator), never mixed with data:
 *   ANN(s)  announcer -> every other rank of both sides: step s is committed and will run;
 *   EOS(n)  announcer -> every other rank: the side sends no step after n - 1;
 *   CLOSE   a receive-only side's rank 0 -> the sending side's announcer: stop announcing;
 *   ACK(n)  a receiving rank -> the other side's announcer: I released n steps;
 *   CREDIT(n) announcer -> its own side: every remote rank released n steps (flow control);
 *   FIN(a)  rank 0 <-> rank 0 at the end: nothing more comes; a ACKs were sent to you;
 *   END     announcer -> its own side, last of all: no more notes on the local communicator.
 * A rank starts the collective of step s only when every sending side announced s (and, on a
 * sending side, when it committed s itself). Every started collective therefore has all its
 * participants; nothing is ever abandoned half-posted, which lets both sides finish cleanly
 * whichever ends first. Each step moves a sending rank's contribution, a 32-byte header (step,
 * datasets put) followed by its block of each dataset it sends, by an inter-group allgatherv,
 * the direct M x N schedule or both (runtime.h, xfer_rt_path_t). */
#ifndef XFER_RT_STREAM_H
#define XFER_RT_STREAM_H

#include "channel.h"

#define XFER_RT_EXEC_TAG 0x5810 /* the direct path's messages (lanes above it) */

/* The step protocol's notes (above); NOTE_FAIL, the channel core's, is channel.h's. */
enum {
    NOTE_ANN = 1,
    NOTE_EOS = 2,
    NOTE_CLOSE = 3,
    NOTE_FIN = 4,
    NOTE_ACK = 5,
    NOTE_CREDIT = 6,
    NOTE_END = 7
};

#define XFER_RT_MAGIC 0x58465331u /* "XFS1" */

/* Header at the start of every sending rank's contribution. */
typedef struct xfer_rt_hdr {
    uint32_t magic;
    uint32_t attr_len; /* bytes of attributes after the header (the side's rank 0 only) */
    uint64_t step;
    uint64_t mask; /* bit i: dataset i of this direction was put in this step */
    uint64_t rank;
} xfer_rt_hdr_t;

/* A slot holds one step in flight (max_in_flight_steps + 1 of them: stream_open.c). */
enum {
    XFER_SLOT_FREE = 0,
    XFER_SLOT_FILLING,
    XFER_SLOT_COMMITTED,
    XFER_SLOT_ACTIVE,
    XFER_SLOT_DONE
};

typedef struct xfer_rt_slot {
    int state;
    uint64_t step;
    int released;         /* the application finished with the step */
    uint64_t mask;        /* datasets put (sending side) */
    char *sbuf, *rbuf;    /* this rank's contribution; every remote contribution */
    MPI_Comm comm;        /* duplicate of the channel's intercommunicator */
    xfer_plan_t *plan;    /* the allgatherv plan (allgatherv and hybrid paths) */
    struct xfer_exec *ex; /* the direct schedule's executor over merged (direct and hybrid) */
    MPI_Comm merged;
    int plan_done, ex_done; /* the step's parts that completed */
    unsigned bound_gen;     /* the path's bound_gen its executor was remapped with */
    int lost;               /* its collective failed: no longer progressed */
} xfer_rt_slot_t;

/* The stream's datasets whose shape or blocks change every step, joined, variable or per_step
 * (stream_joined.c): each slot's second phase. */
typedef struct xfer_rt_jslot {
    int state;
    MPI_Request treq; /* a sending rank's gather of its side's entries */
    /* side k's table: rank r's entry of its dataset j at [r * W[k] + woff[k][j]] (joined: its
     * rows, NOT_PUT when it did not put it; variable: put, dims[nd], start[nd], count[nd]) */
    uint64_t *tab[2];
    /* side k's joined dataset j: the rows of its ranks below r at [j * (n_k + 1) + r], their
     * total at r = n_k (xfer_ch_jprefix, each time the table arrives) */
    uint64_t *pre[2];
    /* sending: this rank's entries (W[side] words), the copy of each dataset's block, and
     * where each one's block of the step is sent from: its copy, or the caller's block when the
     * dataset is bound (xfer_bind_buffer) */
    void **blk;
    size_t *blk_cap;
    const void **from;
    uint64_t *mine;
    /* receiving: this rank's box of each such dataset it receives (its start and count, in
     * XFER_MAX_DIMS words each), the library's buffer of it, and where the step's box lands:
     * there, or in the bound buffer when it holds the box */
    void **sel;
    size_t *sel_cap;
    void **land;
    uint64_t *bs, *bc;
    MPI_Request *req;
    int nreq, ndone, cap_req; /* requests posted, completed (in order), room */
    /* per_step datasets (blocks: per_step): side k's box table, every rank's blocks of each in
     * turn (2 nd words each: start, count), rank r's of its dataset j from word mo[k][r * nj + j];
     * the sending side's rank 0 sends its side's to every receiving rank (breq: its receive) */
    uint64_t *mb[2];
    size_t mb_cap[2], *mo[2];
    MPI_Request breq;
    /* receivers that all take every row: the slot's allgatherv plan, recounted for the step */
    xfer_plan_t *plan;
    MPI_Comm pcomm;
    int by_plan, plan_done;
    int *rc, *rd; /* every remote rank's bytes, and where they land */
    size_t *lb;   /* every rank of this side's bytes */
    char *rbuf;   /* every remote rank's rows */
    size_t rbuf_cap;
    char *rland; /* where the step's rows landed: rbuf, or the bound buffer (stream_jplan.c) */
    char *pack;  /* this rank's rows of several datasets, one after the other */
    size_t pack_cap;
    /* compressed datasets (stream_zip.c): sending, this rank's frames of each of its side's
     * (its blocks in order, each frame padded to 8 bytes), their bytes and raw bytes; receiving,
     * the frames of each of the other side's from each sending rank (rank r's of dataset j at
     * zoff[j * (nremote + 1) + r] of zin[j]), a block decoded, and whether frames wait */
    char **z;
    size_t *zcap, *zlen, *zraw_len;
    int *zskip; /* auto sent this rank's blocks raw in the step (no frames: stream_jtable.h) */
    char **zin;
    size_t *zin_cap, *zoff;
    char *zraw;
    size_t zraw_cap;
    int zpending;
    double zt0; /* sending: when the step's second phase started (auto's link rate) */
} xfer_rt_jslot_t;

typedef struct xfer_rt_joined {
    int nj[2];      /* joined and variable datasets side k sends */
    int *idx[2];    /* their indices in ch->ds */
    int W[2];       /* the words of a rank's entries in side k's table */
    int *woff[2];   /* where dataset j's entry starts among them */
    size_t tab_at;  /* where a side's table sits in rank 0's attribute area */
    size_t tab_len; /* the room it takes there (the larger side's) */
    MPI_Comm local; /* the sending side's gathers (a duplicate of ctl_local) */
    MPI_Comm *comm; /* per slot: the rows' messages (duplicates of the intercommunicator) */
    int plans;      /* every joined dataset's mode is all: each slot has an allgatherv plan */
    int all_taken;  /* (after the set-up) every receiving rank takes every row of each */
    int bound;      /* (after the set-up) a rank of either side bound one of them */
    int zipped[2];  /* side k sends a compressed dataset */
    struct xfer_codec_auto *za; /* auto's state of each dataset this side sends (stream_zip.c) */
    xfer_rt_jslot_t *js;
} xfer_rt_joined_t;

/* Does @p d move in each slot's second phase (stream_joined.c) rather than in the contributions:
 * a joined or variable dataset, one whose blocks change every step (blocks: per_step), or one
 * compressed (its frames' sizes change every step)? */
static inline int xfer_ch_jroute(const xfer_rt_dset_t *d)
{
    return d->dyn || d->cfg->blocks == XFER_BLOCKS_PER_STEP ||
           d->cfg->compression != XFER_COMPRESSION_NONE;
}

/* stream_notes.c: the stream's notes */
xfer_status_t xfer_ch_announce(xfer_channel_t *ch, int type, int64_t value);
int xfer_ch_is_announcer(const xfer_channel_t *ch);
uint64_t xfer_ch_run_limit(const xfer_channel_t *ch);
xfer_status_t xfer_ch_end_own_side(xfer_channel_t *ch);
xfer_status_t xfer_ch_poll_notes(xfer_channel_t *ch);

/* stream_layout.c */
xfer_rt_slot_t *xfer_ch_slot_of(xfer_channel_t *ch, uint64_t step);
int xfer_ch_geo_len(const xfer_channel_t *ch);
/* Where dataset @p i sits in a rank's geometry record (its blocks' number, or its selection). */
int xfer_ch_geo_pos(const xfer_channel_t *ch, int i);
/* The words of the blocks of side @p k's rank whose record is @p rec (the set-up's second
 * exchange). */
int xfer_ch_geo_blocks(const xfer_channel_t *ch, int k, const uint64_t *rec);
xfer_status_t xfer_ch_lay_out(xfer_channel_t *ch, int k, int nranks, const uint64_t *geo,
                              const uint64_t *bx, const int *bd, size_t *bytes, size_t *prefix);
/* Does dataset @p d travel in the allgatherv plan's part of each contribution (runtime.h,
 * xfer_rt_path_t), rather than by the direct schedule? (After setup.) */
static inline int xfer_ch_by_plan(const xfer_channel_t *ch, const xfer_rt_dset_t *d)
{
    return !ch->path.direct || (ch->path.hybrid && d->whole);
}
/* Where remote rank @p r's header, and the attributes, land in a slot's receive stage. */
size_t xfer_ch_hdr_at(const xfer_channel_t *ch, int r);
size_t xfer_ch_attr_at(const xfer_channel_t *ch);

/* stream_layout.c, stream_open.c (xfer_ch_prepare), stream_setup.c */
/* The options of the channel's allgatherv plans (its algorithm, node staging, no clock). */
xfer_status_t xfer_ch_plan_opts(const xfer_channel_t *ch, xfer_coll_opts_t *o);
/* When the channel forms (collective over both sides, in file order): this rank's node, every
 * slot's communicators and its allgatherv plan for the predicted contributions. */
xfer_status_t xfer_ch_prepare(xfer_channel_t *ch);
/* Step 0's set-up (runtime.h, xfer_rt_setup_t): post this rank's geometry record (its part is
 * fixed now); advance whatever is in flight (never blocks); let go of its memory. */
xfer_status_t xfer_ch_setup_post(xfer_channel_t *ch);
xfer_status_t xfer_ch_setup_advance(xfer_channel_t *ch);
void xfer_ch_setup_release(xfer_channel_t *ch);
/* the bound buffers moved (a put from another block, a rebind): their ranges follow */
void xfer_ch_bound_refresh(xfer_channel_t *ch);

/* stream.c: the slots' progress, the commit, and the transport's table entries (transport.h;
 * stream_ops.c holds the table) */
int xfer_ch_busy(const xfer_channel_t *ch); /* a collective of the channel is in flight */
xfer_status_t xfer_ch_progress_all(xfer_channel_t *ch, int force);
/* One pass over @p ch alone: notes, collectives to start (step 0's set-up when @p force or
 * when finalize drains), executors. */
xfer_status_t xfer_ch_progress_one(xfer_channel_t *ch, int force);
xfer_status_t xfer_ch_commit(xfer_channel_t *ch);
/* A sending rank's first commit before the set-up: every slot's send stage, this rank's blocks
 * in channel order (the layout set-up may change), step 0's staged blocks moved in. */
xfer_status_t xfer_ch_stage_first(xfer_channel_t *ch);
xfer_status_t xfer_ch_stream_stage(xfer_channel_t *ch, xfer_rt_dset_t *ds, const void *block,
                                   uint64_t vol);
xfer_status_t xfer_ch_stream_room(xfer_channel_t *ch, void *arg, int *met);
void xfer_ch_stream_unput(xfer_channel_t *ch, xfer_rt_dset_t *ds);
/* Step *@p arg arrived, or the channel ended before it (a wait condition). */
xfer_status_t xfer_ch_step_ready(xfer_channel_t *ch, void *arg, int *met);
int xfer_ch_stream_has(xfer_channel_t *ch, uint64_t s);
int xfer_ch_stream_over(xfer_channel_t *ch, uint64_t s);
xfer_status_t xfer_ch_ended(xfer_channel_t *ch, uint64_t step);
xfer_status_t xfer_ch_stream_release(xfer_channel_t *ch);
xfer_status_t xfer_ch_stream_sent(xfer_channel_t *ch);
xfer_status_t xfer_ch_stream_after_end(xfer_channel_t *ch);
int xfer_ch_stream_pending(const xfer_channel_t *ch);
xfer_status_t xfer_ch_stream_poll(xfer_channel_t *ch, int force, int *busy);
/* stream_get.c */
xfer_status_t xfer_ch_stream_fetch(xfer_channel_t *ch, xfer_rt_dset_t *ds, const uint64_t *start,
                                   const uint64_t *count, void *buf, uint64_t bytes, uint64_t s);
/* stream_open.c, stream_finish.c: the stream's open, its passes of xfer_finalize, its free */
xfer_status_t xfer_ch_stream_open(xfer_channel_t *ch);
void xfer_ch_stream_free(xfer_channel_t *ch, int collective);
xfer_status_t xfer_ch_stream_end(xfer_channel_t *ch);
int xfer_ch_stream_drained(xfer_channel_t *ch);
xfer_status_t xfer_ch_stream_goodbye(xfer_channel_t *ch);
int xfer_ch_stream_parted(xfer_channel_t *ch);
xfer_status_t xfer_ch_stream_close(xfer_channel_t *ch);

/* stream_joined.c: the joined and variable datasets (xfer_rt_joined_t above; stream_jtable.h) */
xfer_status_t xfer_ch_joined_new(xfer_channel_t *ch);
xfer_status_t xfer_ch_joined_prepare(xfer_channel_t *ch);
void xfer_ch_joined_free(xfer_channel_t *ch, int collective);
/* the set-up's geometry records: a receiving rank's rule (xfer_ch_rule_of), in */
xfer_status_t xfer_ch_joined_rule_in(xfer_channel_t *ch, xfer_rt_dset_t *d, int r, int nranks,
                                     const uint64_t *rec);
/* a sending rank's put of @p v elements (its rows, or its block of a variable shape) */
xfer_status_t xfer_ch_joined_stage(xfer_channel_t *ch, xfer_rt_slot_t *sl, xfer_rt_dset_t *d,
                                   const void *block, uint64_t v);
xfer_status_t xfer_ch_joined_commit(xfer_channel_t *ch, xfer_rt_slot_t *sl);
/* Does the commit gather this side's rows and shapes (transport.h, side_commit)? */
int xfer_ch_joined_side_commit(const xfer_channel_t *ch);
void xfer_ch_joined_table_out(xfer_channel_t *ch, xfer_rt_slot_t *sl);
xfer_status_t xfer_ch_joined_progress(xfer_channel_t *ch, xfer_rt_slot_t *sl, int *done);
void xfer_ch_joined_reset(xfer_channel_t *ch, xfer_rt_slot_t *sl);
void xfer_ch_joined_shape(xfer_channel_t *ch, uint64_t s);
xfer_status_t xfer_ch_joined_fetch(xfer_channel_t *ch, xfer_rt_dset_t *ds, const uint64_t *start,
                                   const uint64_t *count, void *buf, uint64_t bytes, uint64_t s);

#endif /* XFER_RT_STREAM_H */
