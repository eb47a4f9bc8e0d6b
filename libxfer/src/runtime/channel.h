/* SPDX-License-Identifier: BSD-3-Clause */
/* The channel core: the interface between its files, whatever the transport (runtime.h has the
 * structures; each transport's own interface is its header: stream.h, file.h):
 * ch_health.c   control notes out, the peer's failure, usable or not, datasets by name
 * ch_layout.c   dataset geometry: tiling checks in words, box copies
 * ch_blocks.c   several blocks per rank: each put's, the commit's check of the side's
 * ch_select.c   selections and bound buffers
 * ch_wait.c     the one wait loop of every transport
 * ch_step.c     the step state machine, the public data calls' bodies
 * ch_put.c, ch_get.c  the checks of a put and of a get
 * ch_attr.c     the step's attributes
 * ch_api.c      the public data calls
 * channel.c     life cycle: creation, finish, free (through the transport's table) */
#ifndef XFER_RT_CHANNEL_H
#define XFER_RT_CHANNEL_H

#include "runtime.h"
#include "tile.h"

#define XFER_NOTE_TAG 0x5801
#define XFER_WHY_TAG  0x5802 /* the words of a NOTE_FAIL, right after it, on the local notes */

/* A note's type: 1 .. 7 are the stream's step protocol (stream.h); this one is the core's. */
enum {
    NOTE_FAIL = 8 /* rank 0 -> its own side: xferd declared the peer failed (value: its index),
                     or the control plane is lost (-1); without xferd, any rank of an attachable
                     sending side -> the others: it met its reader's loss */
};

typedef struct note {
    int64_t type, value;
} note_t;

/* A wait with nothing in flight spins this long, then naps this long between polls. */
#define XFER_RT_SPIN_S 0.02
#define XFER_RT_NAP_NS 200000L
/* A resumable wait asks the application's interrupt check this often (s). */
#define XFER_RT_INTR_S 0.05

/* ch_health.c: whatever the transport */
xfer_status_t xfer_ch_note_send(xfer_channel_t *ch, MPI_Comm c, int dest, int type, int64_t value);
xfer_status_t xfer_ch_notes_reap(xfer_channel_t *ch, int wait);
xfer_status_t xfer_ch_check_peer(xfer_channel_t *ch);
/* Tell this side's other ranks (NOTE_FAIL and its words, health.peer_why for @p value >= 0,
 * else ctl_why), once: rank 0 with xferd's verdict; without xferd, the rank of an attachable
 * sending side that met its reader's loss first (ch_loss.c). */
xfer_status_t xfer_ch_tell_side(xfer_channel_t *ch, int value);
/* A NOTE_FAIL of @p value from rank @p src of this side arrived: the failure, and its words. */
xfer_status_t xfer_ch_take_fail(xfer_channel_t *ch, int64_t value, int src);
/* A rank other than 0 that its side's verdict tells the peer failed (rank 0's round under policy
 * latest, the side's agreement at a commit): rank 0 sent it xferd's notice and its words before
 * any rank could know (without xferd: the rank that met the loss first), taken now if they were
 * not yet, so that none is left unmatched (the other notes on the channel no longer matter: it
 * is lost). */
xfer_status_t xfer_ch_take_notice(xfer_channel_t *ch);
/* After an MPI failure: xferd's verdict on the peer, awaited at most *@p wait_ms (set here);
 * 1 when the peer failed. */
int xfer_ch_await_verdict(xfer_channel_t *ch, int *wait_ms);
xfer_status_t xfer_ch_peer_failed_error(const xfer_channel_t *ch);
xfer_status_t xfer_ch_ctl_lost_error(const xfer_channel_t *ch);
xfer_status_t xfer_ch_check_usable(xfer_channel_t *ch);
/* The channel failed with @p st: marked so, the first failure's status and words kept for its
 * later calls (xfer_ch_failed_error), whichever poll met it (a wait on another channel, a side
 * exchange whose condition held, the progress thread). */
void xfer_ch_fail_keep(xfer_channel_t *ch, xfer_status_t st);
xfer_status_t xfer_ch_failed_error(const xfer_channel_t *ch);
xfer_rt_dset_t *xfer_ch_find_dset(xfer_channel_t *ch, const char *name);
xfer_status_t xfer_ch_no_such_dataset(xfer_channel_t *ch, const char *name);
/* MPI errors come back as codes while a call of ours runs (MPICH reports failed requests
 * through MPI_COMM_WORLD's handler) */
typedef struct xfer_errh_guard {
    MPI_Errhandler world, self;
    int set;
} xfer_errh_guard_t;
void xfer_errh_guard_begin(xfer_errh_guard_t *g);
xfer_status_t xfer_errh_guard_end(xfer_errh_guard_t *g, xfer_status_t st);
/* A nonblocking collective's request abandoned after a failure (a peer gone): freed if it
 * completed, else left to MPI_Finalize, since MPI makes freeing or cancelling a pending one
 * erroneous (Open MPI's MPI_Request_free refuses it with MPI_ERR_REQUEST, fatal under the
 * default error handler). *@p req is MPI_REQUEST_NULL after it. */
void xfer_ch_abandon_coll(MPI_Request *req);

/* ch_layout.c */
int xfer_ch_this_sends(const xfer_channel_t *ch);
int xfer_ch_this_recvs(const xfer_channel_t *ch);
const char *xfer_ch_side_name(const xfer_channel_t *ch, int side);
const char *xfer_ch_peer_name(const xfer_channel_t *ch);
uint64_t xfer_ch_volume(int nd, const uint64_t *count);
void xfer_ch_fmt_box(char *buf, size_t len, int nd, const uint64_t *start, const uint64_t *count);
int xfer_ch_dset_side(const xfer_channel_t *ch, const xfer_rt_dset_t *d);
/* A variable shape's step (ch_layout.c): the senders' records (@p stride words apart) agree and
 * tile it; its shape into @p dims. */
xfer_status_t xfer_ch_check_step_blocks(const xfer_channel_t *ch, const xfer_rt_dset_t *d, int k,
                                        int nranks, const uint64_t *rec, size_t stride,
                                        uint64_t step, uint64_t *dims);
/* Do side @p k's blocks @p t of @p d tile it exactly in step @p step? The fault in words
 * (XFER_ERR_INVALID_ARG): the blocks that overlap with their ranks, or the first hole as a box,
 * its size and a block beside it. */
xfer_status_t xfer_ch_check_tiling(const xfer_channel_t *ch, const xfer_rt_dset_t *d, int k,
                                   uint64_t step, const xfer_tiles_t *t);
void xfer_ch_copy_box(char *dst, const uint64_t *ss, const uint64_t *sc, const char *src,
                      const uint64_t *bs, const uint64_t *bc, int nd, size_t esize);

/* ch_wait.c: every wait of a channel, whatever its transport, is this loop: one pass over the
 * context's other channels and this one (ops->poll), the condition, then the step the wait
 * needs, its own clock, the application's interrupt check, the liveness deadline, a nap. */
typedef struct xfer_ch_wait {
    xfer_ch_cond_fn cond;
    void *arg;
    const char *what; /* its errors' words: "waiting for a step" */
    double until;     /* MPI_Wtime() after which it returns with *met 0 (HUGE_VAL: none) */
    uint64_t need;    /* a step lost at or before this one ends it (docs/runtime.md, "What a
                         receiver gets when its sender dies"); UINT64_MAX: none can */
    int resumable;    /* entered without changing anything: the application's interrupt check
                         (xfer_set_interrupt) may end it with XFER_ERR_INTERRUPTED */
    int force;        /* a wait on this very channel's steps (ops->poll) */
    int aside;        /* the channel's own failure is not this wait's: its poll's status is
                         ignored (and a channel whose reader is gone is not polled) */
    int side;         /* an exchange among the sending side's ranks, which every one of them
                         completes: the reader's failure known under on_reader_loss: continue
                         does not end it (ch_loss.c) */
} xfer_ch_wait_t;
/* Wait until w->cond holds (*met 1) or w->until passes (*met 0, success). Liveness bounds it: a
 * failed peer or a lost control plane is an error, and so is the timeout in XFER_LIVE_CLOCK. */
xfer_status_t xfer_ch_wait(xfer_channel_t *ch, const xfer_ch_wait_t *w, int *met);
/* The common case: until @p cond holds, not resumable, forced; @p need as in xfer_ch_wait_t. */
xfer_status_t xfer_ch_wait_until(xfer_channel_t *ch, xfer_ch_cond_fn cond, void *arg,
                                 const char *what, uint64_t need);
/* A wait condition: the MPI_Request *@p arg completed. */
xfer_status_t xfer_ch_req_done(xfer_channel_t *ch, void *arg, int *met);
/* Wait for @p req while the peer lives (the handshake at formation). */
xfer_status_t xfer_ch_wait_req(xfer_channel_t *ch, MPI_Request *req, const char *what);
/* A wait of the whole context (xfer_finalize): every channel still finishing moves (forced)
 * until each says it is through (@p each), or until @p cond holds. With @p each, a channel that
 * fails drops out and the first failure is returned at the end, with its words; at the deadline
 * the late channels fail. Without it (an agreement of the component's ranks: @p cond), a
 * channel's failure is kept on the channel (fail_st, fail_why) for the agreement to carry.
 * With @p only (xfer_channel_close), that channel alone finishes: the others, which go on, get
 * the passes of any wait on one channel (xfer_ch_progress_others: not forced, their errors left
 * for their own calls). */
typedef struct xfer_ch_wait_all {
    int (*each)(xfer_channel_t *ch);
    xfer_status_t (*cond)(struct xfer *x, void *arg, int *met);
    void *arg;
    const char *what;
    xfer_channel_t *only;
} xfer_ch_wait_all_t;
xfer_status_t xfer_ch_wait_all(struct xfer *x, const xfer_ch_wait_all_t *w);
/* One pass over the context's other channels (a wait on one channel must not starve them). */
void xfer_ch_progress_others(xfer_channel_t *ch);
/* one pass of the progress thread (progress.c); *active set when a collective is in flight */
void xfer_ch_progress_background(xfer_channel_t *ch, int *active);
/* A resumable wait asks the application's interrupt check (xfer_set_interrupt) at most every
 * XFER_RT_INTR_S since *asked: XFER_ERR_INTERRUPTED when it says stop. */
xfer_status_t xfer_ch_ask_interrupt(xfer_channel_t *ch, const char *what, double now,
                                    double *asked);
/* The error of a wait that control.timeout_ms ended (separate jobs without xferd); @p dir: the
 * file transport's folder, or NULL. */
xfer_status_t xfer_ch_wait_timeout_error(const xfer_channel_t *ch, const char *what,
                                         const char *dir);

/* ch_select.c */
/* This rank's selection of received dataset @p d into d->sel_*: declared, or by its mode. */
xfer_status_t xfer_ch_own_selection(xfer_channel_t *ch, xfer_rt_dset_t *d);
/* A receiving rank's rule for a joined or variable dataset: the box it declared (2 nd words:
 * start, count), or rule[0] UINT64_MAX and rule[nd] its selection mode; the set-up's geometry
 * records carry it to the senders. */
void xfer_ch_rule_of(const xfer_rt_dset_t *d, uint64_t *rule);
/* Rank @p r of @p n's box of a step of shape @p dims by @p rule: the mode over the shape, or the
 * declared box clipped to it. */
xfer_status_t xfer_ch_rule_box(int nd, const uint64_t *rule, const uint64_t *dims, int n, int r,
                               uint64_t *bs, uint64_t *bc);
/* A joined or variable dataset's step @p step arrived with global shape @p dims: this rank's
 * selection of it (the declared box clipped to it, or the dataset's mode over it). */
xfer_status_t xfer_ch_step_selection(xfer_channel_t *ch, xfer_rt_dset_t *d, uint64_t step,
                                     const uint64_t *dims);
/* Is dimension @p i of @p c given by each step (joined rows, a variable extent)? */
static inline int xfer_ch_dim_varies(const xfer_cfg_dataset_t *c, int i)
{
    return (i == 0 && c->joined) || (c->variable >> i & 1u);
}
/* The global shape of @p d on the receiving side: its step's (joined, variable) or the file's. */
static inline const uint64_t *xfer_ch_dims_of(const xfer_rt_dset_t *d)
{
    return d->dyn ? d->sdims : d->cfg->dims;
}
/* Bytes of this rank's selection of @p d (what lands here per step on the direct path). */
size_t xfer_ch_sel_bytes(const xfer_rt_dset_t *d);

/* A copy of the handle of a channel xfer_channel_close closed: every call on it fails with
 * these words (channel.c). */
xfer_status_t xfer_ch_closed_error(const xfer_channel_t *ch);

/* The body of a public call on channel @p ch: @p call under the context's lock (the progress
 * thread, progress.c; no lock without it); refused on a closed channel. */
#define XFER_CH_LOCKED(ch, call)                                                                   \
    do {                                                                                           \
        struct xfer *x_ = (ch) ? (ch)->x : NULL;                                                   \
        xfer_status_t st_;                                                                         \
        xfer_rt_lock(x_);                                                                          \
        st_ = xfer_rt_done(x_, (ch) && (ch)->closed ? xfer_ch_closed_error(ch) : (call));          \
        xfer_rt_unlock(x_);                                                                        \
        return st_;                                                                                \
    } while (0)

/* ch_blocks.c: a fixed-shape dataset's blocks on a sending rank (docs/runtime.md, "Several blocks
 * per rank"). A put of box d->start, d->count (@p v elements): checked (*@p of: which block of the
 * first step it is, blocks: fixed; -1 otherwise), then added to the step's (an empty one adds
 * nothing) and taken back when the transport could not stage it. */
xfer_status_t xfer_ch_block_check(xfer_channel_t *ch, const xfer_rt_dset_t *ds,
                                  const xfer_dataset_desc_t *d, uint64_t v, int *of);
xfer_status_t xfer_ch_block_push(xfer_rt_dset_t *ds, const xfer_dataset_desc_t *d, uint64_t v,
                                 int of);
void xfer_ch_block_pop(xfer_rt_dset_t *ds, uint64_t v);
/* The commit's check, before the transport's commit: this rank's blocks: fixed (all of the first
 * step's), then, gathered over the side (its per_step datasets; the fixed ones at the first
 * commit), the tiling of each. Collective over the side when it gathers. A refusal forgets the
 * puts of the dataset at fault; the step stays uncommitted. */
xfer_status_t xfer_ch_blocks_commit(xfer_channel_t *ch);
/* Rank @p r's boxes (2 nd words each) of dataset @p i gathered at the last commit (*@p n). */
const uint64_t *xfer_ch_gathered(const xfer_channel_t *ch, int i, int r, int *n);
void xfer_ch_blocks_next(xfer_channel_t *ch); /* the step ended: its puts are forgotten */
/* Bytes of this rank's blocks of the first step one after the other (blocks: fixed), each padded
 * to 8 bytes but the last: what a contribution holds of them (0: none). */
size_t xfer_ch_region(const xfer_rt_dset_t *d);
/* Does the commit of step cur gather the side's blocks (blocks: per_step; fixed, the first)? */
int xfer_ch_blocks_gather_due(const xfer_channel_t *ch);
xfer_status_t xfer_ch_blocks_open(xfer_channel_t *ch);
void xfer_ch_blocks_free(xfer_channel_t *ch, int collective);
void xfer_ch_blocks_release(xfer_rt_blocks_t *l);

/* ch_put.c */
xfer_status_t xfer_ch_put_check(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block,
                                xfer_rt_dset_t **out, uint64_t *vol, int *of);
/* ch_step.c: the core's step state machine (transport.h), the public data calls' bodies. */
xfer_status_t xfer_ch_put(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block);
xfer_status_t xfer_ch_step_begin(xfer_channel_t *ch, int timeout_ms, xfer_step_status_t *status);
/* xfer_step_begin's arguments checked, in the same words whatever answers the call (the core,
 * a flow policy, a lost reader). */
xfer_status_t xfer_ch_begin_args(const xfer_channel_t *ch, int timeout_ms,
                                 const xfer_step_status_t *status);
xfer_status_t xfer_ch_step_end(xfer_channel_t *ch);
/* The transport's step cur ends (commit and release, the counters, the room for the next):
 * xfer_step_end's body, and a held step's replay (ch_flow.c). @p label: the sender's number of
 * the step, carried with it under a flow policy. */
xfer_status_t xfer_ch_end_step(xfer_channel_t *ch, uint64_t label);
/* Put @p i of a recorded step: its descriptor into *@p d (zeroed), its block into *@p block. */
typedef void (*xfer_ch_rec_put_fn)(const xfer_channel_t *ch, void *arg, int i,
                                   xfer_dataset_desc_t *d, const void **block);
/* A step recorded as the application gave it (policy latest's held steps, ch_flow.c; the kept
 * steps of a reader that attaches, ch_keep.c) onto the transport: room first (a wait named
 * @p what), then its @p nput puts, its attributes, its end numbered @p label. Not sent: what it
 * put and set is forgotten, and the next step starts empty. */
xfer_status_t xfer_ch_send_recorded(xfer_channel_t *ch, const char *what, int nput,
                                    xfer_ch_rec_put_fn put, void *arg, const char *attrs,
                                    size_t attr_len, uint64_t label);
xfer_status_t xfer_ch_get(xfer_channel_t *ch, const char *dataset, const uint64_t start[],
                          const uint64_t count[], void *buf, size_t bufsize,
                          xfer_dataset_desc_t *out);
/* The encoded attributes of the receiving side's current step (ch_attr.c), once it arrived. */
xfer_status_t xfer_ch_attrs(xfer_channel_t *ch, const char **p, size_t *len);
xfer_status_t xfer_ch_channel_progress(xfer_channel_t *ch, int *busy);
xfer_status_t xfer_ch_get_shape(xfer_channel_t *ch, const char *dataset, xfer_dataset_desc_t *out);
xfer_status_t xfer_ch_get_rows(xfer_channel_t *ch, const char *dataset, uint64_t *rows, int n,
                               int *nsenders);
/* Commit the step being filled, once (the sender's room first, XFER_TP_ROOM_AT_COMMIT). */
xfer_status_t xfer_ch_commit_step(xfer_channel_t *ch);
/* Is the commit of step cur one the sending side's ranks make together (their blocks gathered,
 * the stream's joined rows), on a transport whose ranks would otherwise each take the end of
 * the stream where they learn it (not XFER_TP_COLLECTIVE_COMMIT)? Then no rank takes the end on
 * its own before that commit: the side agrees on it there (ch_step.c), or a rank that learned it
 * first would leave the others in the commit's exchange. */
int xfer_ch_side_agrees(const xfer_channel_t *ch);
/* A rank whose reader is gone (ch_loss.c), at a step whose commit its side makes together: its
 * word that the reader failed, in the agreement its side's other ranks make there (they switch
 * at this step with it). Collective over the side. */
xfer_status_t xfer_ch_agree_lost(xfer_channel_t *ch);
/* Has the stream ended before step @p s, as this rank may say on its own (not before a commit
 * the side agrees on)? */
int xfer_ch_over_here(xfer_channel_t *ch, uint64_t s);
/* Wait (resumable) for step @p s as xfer_ch_step_ready says. */
xfer_status_t xfer_ch_wait_step(xfer_channel_t *ch, uint64_t s);

/* ch_loss.c: on_reader_loss on a channel's sending side (runtime.h, xfer_rt_loss_t) */
enum { XFER_LOSS_AT_PUT, XFER_LOSS_AT_BEGIN, XFER_LOSS_AT_END, XFER_LOSS_AT_POLL };
typedef struct xfer_ch_loss_snap {
    uint64_t cur, steps, sent, app; /* before a sending call: ch->cur, stats.steps and
                                       steps_sent, flow.app */
} xfer_ch_loss_snap_t;
xfer_status_t xfer_ch_loss_open(xfer_channel_t *ch); /* the key, XFER_ON_READER_LOSS */
void xfer_ch_loss_snap(const xfer_channel_t *ch, xfer_ch_loss_snap_t *snap);
/* A sending call's outcome @p st: a failure that says the reader is gone (xferd declared it
 * failed, or it closed the channel) ends what the channel sends, and the call succeeds; where the
 * transport commits collectively (XFER_TP_COLLECTIVE_COMMIT) xfer_step_begin goes on instead
 * and the next commit, which all ranks agree on, takes it. */
xfer_status_t xfer_ch_loss_after(xfer_channel_t *ch, xfer_status_t st, int at,
                                 const xfer_ch_loss_snap_t *snap, xfer_step_status_t *status);
/* The sending calls once the reader is gone: a put is checked, a step begins and ends. */
xfer_status_t xfer_ch_loss_put(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block);
xfer_status_t xfer_ch_loss_begin(xfer_channel_t *ch, int timeout_ms, xfer_step_status_t *status);
xfer_status_t xfer_ch_loss_end(xfer_channel_t *ch);
xfer_status_t xfer_ch_loss_poll(xfer_channel_t *ch, int *busy);
/* xfer_finalize's passes: @p st of a pass over @p ch, absorbed when it says the reader is gone
 * (the channel then sits out the rest of the finish and its frees are local). */
xfer_status_t xfer_ch_loss_finish(xfer_channel_t *ch, xfer_status_t st);
/* Would this error of @p ch be absorbed (the reader is gone)? Switches the channel if so. */
int xfer_ch_loss_take(xfer_channel_t *ch, xfer_status_t st);
/* spill's bounds (either transport): XFER_ERR_SPILL_FULL in words when step @p step, of @p bytes
 * over the side, would pass them, @p spilled steps holding @p held bytes having been spilled
 * since step @p since; else XFER_SUCCESS. */
xfer_status_t xfer_ch_spill_bounds(const xfer_channel_t *ch, uint64_t spilled, uint64_t held,
                                   uint64_t since, uint64_t step, uint64_t bytes);
/* The transport's commit asks: is the reader known gone on this rank (continue only)? */
int xfer_ch_loss_known(xfer_channel_t *ch);
/* Does @p st say that the reader is gone, under on_reader_loss: continue or spill, not taken
 * yet? */
int xfer_ch_loss_is_reader(const xfer_channel_t *ch, xfer_status_t st);
/* The reader's loss this rank met (the last error's words) told to the side's other ranks,
 * without xferd, and neither taken nor deferred here (policy latest: rank 0's round switches
 * the side). */
void xfer_ch_loss_tell(xfer_channel_t *ch);
/* A wait for the side's own ranks met @p st (ch_wait.c): 1 if it is the reader's loss under
 * on_reader_loss: continue or spill, kept for later (the wait goes on); 0: it stands. */
int xfer_ch_loss_defer(xfer_channel_t *ch, xfer_status_t st);
/* The loss deferred so, with its words, until it is taken (else XFER_SUCCESS). */
xfer_status_t xfer_ch_loss_late(const xfer_channel_t *ch);
/* ch_attach.c: a detached sending side's rounds, and a channel that starts detached */
void xfer_ch_attach_enter(xfer_channel_t *ch, int final);
/* A detached step's end: will the side hold a round once stats.steps + @p ahead steps ended
 * (collective: the side's agreement on where its rounds begin, the first time)? */
xfer_status_t xfer_ch_attach_due(xfer_channel_t *ch, int ahead, int *due);
/* @p pending: the step in hand did not end (spill's bound); a reader that attaches gets it. */
xfer_status_t xfer_ch_attach_round(xfer_channel_t *ch, int pending);
xfer_status_t xfer_ch_attach_detached(xfer_channel_t *ch);

/* ch_keep.c: the steps a detachable stream's sending side keeps (spill, history: K) for a reader
 * that attaches, replayed at its attach (start: oldest) */
xfer_status_t xfer_ch_keep_open(xfer_channel_t *ch, const xfer_channel_flow_t *eff);
void xfer_ch_keep_free(xfer_channel_t *ch);
/* A put the application made (xfer_put succeeded): kept with the step being put. */
xfer_status_t xfer_ch_keep_put(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block);
/* The step's attributes, as they stand at its end (the step number left out). */
xfer_status_t xfer_ch_keep_attrs(xfer_channel_t *ch);
/* spill, a detached step's end, before it is counted: the bounds (collective over the side from
 * its first round on), then this rank's kept steps to their files (*@p on_disk); the side agrees
 * on the outcome. XFER_ERR_SPILL_FULL, XFER_ERR_IO: the step does not end on any rank. */
xfer_status_t xfer_ch_keep_spill(xfer_channel_t *ch, int *on_disk);
/* The application's step stats.steps ended (before it is counted): kept; @p sent: counted sent,
 * as step @p idx of the stream attached now (UINT64_MAX: not sent). */
xfer_status_t xfer_ch_keep_ended(xfer_channel_t *ch, int sent, uint64_t idx, int on_disk);
/* A reader attached (ch_attach.c, after the transplant): the kept steps replayed, oldest first,
 * then with @p pending the step in hand (its end was refused by spill's bound), which ends. */
xfer_status_t xfer_ch_keep_replay(xfer_channel_t *ch, int pending);
uint64_t xfer_ch_keep_first(const xfer_channel_t *ch); /* the oldest kept step's number */
/* Before the replay, collective over the side @p side: every rank keeps from the same step. */
xfer_status_t xfer_ch_keep_agree(xfer_channel_t *ch, MPI_Comm side);

/* Is @p d compressed on its way (docs/runtime.md, "Compression": the stream transport's; the
 * file transport, ch->file, writes it as it is)? */
static inline int xfer_ch_zipped(const xfer_channel_t *ch, const xfer_rt_dset_t *d)
{
    return d->cfg->compression != XFER_COMPRESSION_NONE && !ch->file;
}

/* ch_flow.c: policy latest and stride on a channel's sending side (runtime.h, xfer_rt_flow_t) */
xfer_status_t xfer_ch_flow_open(xfer_channel_t *ch); /* the keys, their XFER_POLICY/STRIDE */
void xfer_ch_flow_free(xfer_channel_t *ch, int collective);
static inline int xfer_ch_flow_on(const xfer_channel_t *ch)
{
    return ch->flow.on;
}
/* Is the application's step being put one the transport never sees (stride)? */
static inline int xfer_ch_flow_skips(const xfer_channel_t *ch)
{
    return ch->flow.on && ch->flow.app % ch->flow.stride != 0;
}
/* The public calls' bodies on a sending side under a policy (xfer_ch_flow_on). */
xfer_status_t xfer_ch_flow_begin(xfer_channel_t *ch, int timeout_ms, xfer_step_status_t *status);
xfer_status_t xfer_ch_flow_put(xfer_channel_t *ch, const xfer_dataset_desc_t *d, const void *block);
xfer_status_t xfer_ch_flow_end(xfer_channel_t *ch);
/* xfer_finalize, before any transport's end, every channel at once: every held step judged,
 * the last one sent (*@p done once this channel's flush is over; its outcome in flow.flush_st,
 * which the channel's end returns). Never waits for the receivers. */
void xfer_ch_flow_flush_step(xfer_channel_t *ch, int *done);
/* Rank 0 of a sending side under a flow policy tells xferd its counts (ch_flow.c). */
void xfer_ch_flow_report(xfer_channel_t *ch, int force);
/* The sender's number of the transport's step @p s (a receiving side; @p s arrived): its
 * xfer.step attribute, or @p s itself when it has none (no policy). A sending side under a
 * policy: the application's step. */
uint64_t xfer_ch_step_label(xfer_channel_t *ch, uint64_t s);
/* The step the next put or get of @p ch belongs to, in the sender's numbers (xfer_channel_step):
 * the step an error of a put or a get names. */
uint64_t xfer_ch_step_now(const xfer_channel_t *ch);

/* The hidden attribute that carries the sender's step number (ch_flow.c), and the room its
 * record takes beyond attributes_bytes in every step (ch_attr.c's record of a uint64). */
#define XFER_CH_LABEL       "xfer.step"
#define XFER_CH_LABEL_BYTES 32
/* Attribute names under this prefix are the library's: refused to xfer_put_attr, not listed. */
#define XFER_CH_ATTR_RESERVED "xfer."

/* ch_attr.c: the records of a step's attributes (the stream carries them after rank 0's
 * header, the file transport keeps them as HDF5 attributes of the step's root group) */
typedef struct xfer_ch_attr {
    const char *name;
    int is_string; /* values: the string and its NUL (count bytes) */
    xfer_type_t type;
    size_t count, bytes;
    const void *values;
} xfer_ch_attr_t;
/* The record at *@p o of @p buf (advancing *@p o): 0 at the end or on a malformed record. */
int xfer_ch_attr_next(const char *buf, size_t len, size_t *o, xfer_ch_attr_t *a);
/* Append a record to *@p buf (grown as needed). */
xfer_status_t xfer_ch_attr_append(char **buf, size_t *len, size_t *cap, const xfer_ch_attr_t *a);
/* The step being filled: its attributes forgotten; set to @p len encoded bytes at @p buf (a held
 * step's, ch_flow.c); its sender's step number @p label added (XFER_CH_LABEL). */
void xfer_ch_attr_drop(xfer_channel_t *ch);
xfer_status_t xfer_ch_attr_restore(xfer_channel_t *ch, const char *buf, size_t len);
xfer_status_t xfer_ch_attr_label(xfer_channel_t *ch, uint64_t label);

/* ch_get.c. What every get checks, whatever the transport: the dataset, the box asked for
 * (NULL start and count: this rank's selection; they point to the box on return) inside this
 * rank's selection, the buffer; the dataset and the box's bytes come back. */
xfer_status_t xfer_ch_get_check(xfer_channel_t *ch, const char *dataset, const uint64_t **start,
                                const uint64_t **count, const void *buf, size_t bufsize,
                                xfer_rt_dset_t **out, uint64_t *bytes);
/* What a get returns in its descriptor (NULL: nothing). */
void xfer_ch_get_desc(xfer_dataset_desc_t *out, const xfer_rt_dset_t *ds, const uint64_t *start,
                      const uint64_t *count, uint64_t step);

#endif /* XFER_RT_CHANNEL_H */
