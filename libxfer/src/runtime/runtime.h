/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime layer: the workflow context (struct xfer) and what its channels share whatever their
 * transport (struct xfer_channel: datasets, health, flow and finish counters, and the stream's
 * state that the channel core reads too: its notes' queue, path, layout and set-up). The
 * transports' own types are theirs: the stream's slots, headers, notes and joined tables in
 * stream.h (its step protocol), the file's in file.h. */
#ifndef XFER_RUNTIME_H
#define XFER_RUNTIME_H

#include <mpi.h>
#include <stdint.h>

#include <xfer/xfer.h>

#include "../core/core.h"
#include "transport.h"

/* A sending rank's blocks of a fixed-shape dataset (ch_blocks.c): n boxes of 2 ndims words
 * (start, then count) in box[], one after the other in pk[] (byte offsets, each block padded to 8
 * bytes; pk[n] is their total), vol elements in all. The put list's own (ch_blocks.c): at[b],
 * where the transport keeps block b (the stream: its offset in stage0 until the first commit);
 * of[b], which block of the first step it is (blocks: fixed, after the first step). */
typedef struct xfer_rt_blocks {
    int n, cap;
    uint64_t *box;
    size_t *pk, *at;
    int *of;
    uint64_t vol;
} xfer_rt_blocks_t;

/* One dataset of a channel. Geometry of the sending side's ranks is known after setup. */
typedef struct xfer_rt_dset {
    const xfer_cfg_dataset_t *cfg;
    int out;      /* this component sends it */
    int bit;      /* index within its direction (header mask bit) */
    size_t esize; /* bytes per element */
    /* this rank's block of a joined or variable dataset (sending side) */
    int declared;
    uint64_t start[XFER_MAX_DIMS], count[XFER_MAX_DIMS];
    /* a fixed-shape one's (docs/runtime.md, "Several blocks per rank"): the blocks put in the step
     * being filled, put_now once a put of it came in this step (an empty one too); blocks: fixed,
     * the first committed step's (fix_set), the decomposition every later step repeats */
    xfer_rt_blocks_t put, fix;
    int put_now, fix_set;
    int side_max; /* the most blocks a rank of this side put in the step committed last */
    size_t my_off, my_bytes; /* place of this rank's blocks in its contribution (the stream), one
                                after the other as fix.pk lays them out, the last one unpadded */
    /* every sending rank's blocks (after setup): rank r's are g_first[r] .. g_first[r + 1] - 1,
     * block b at [b * ndims] */
    size_t *g_first;
    uint64_t *g_start, *g_count;
    size_t *g_off; /* byte offset of each block within its rank's contribution */
    int never;     /* no sending rank put it in step 0: never sent */
    /* receiving side: this rank's selection (xfer_select, else the dataset's mode) */
    int sel_declared, sel_resolved; /* by xfer_select; by the mode, computed once */
    uint64_t sel_start[XFER_MAX_DIMS], sel_count[XFER_MAX_DIMS];
    /* every receiving rank's selection (after setup): [rank * ndims], and where it sits in that
     * rank's receive area (direct path) */
    uint64_t *gs_start, *gs_count;
    size_t *gs_off;
    int whole; /* every receiving rank selects all of it (after setup) */
    /* Joined or variable (docs/runtime.md, "Datasets whose shape changes"): the global shape and
     * the blocks travel with every step. Receiving side: the shape of arrived step sstep, each
     * sending rank's rows of it (joined), and the box xfer_select declared (clipped to each
     * step's shape into sel_*). */
    int dyn;
    uint64_t pdims[XFER_MAX_DIMS]; /* sending: the shape this rank's put of the step gives */
    uint64_t sstep;                /* UINT64_MAX: no step arrived yet */
    uint64_t sdims[XFER_MAX_DIMS];
    uint64_t *srows; /* nremote entries (joined) */
    /* the stream's joined datasets: each receiving rank's rule, from the set-up's records
     * ([2r] UINT64_MAX and [2r+1] the selection mode, or [2r] and [2r+1] the rows it declared) */
    uint64_t *jrule;
    uint64_t usr_start[XFER_MAX_DIMS], usr_count[XFER_MAX_DIMS];
    /* xfer_bind_buffer: the application's buffer this rank sends the dataset from (its block)
     * or receives it into (its selection), every step, without a copy */
    void *bound; /* the caller's buffer of the step in flight (xfer_bind_buffer) */
    size_t bound_size;
    void *next_bound; /* receiving: rebound during a step, for the next one to start */
    size_t next_bound_size;
} xfer_rt_dset_t;

/* The step protocol's state on one rank of a channel (stream.h's header, stream_notes.c); the
 * channel core keeps its notes' queue (out) and a NOTE_FAIL's words (why_req) here, and
 * xfer_finalize's agreement its ACK counts (fin_agree.c). */
typedef struct xfer_rt_proto {
    uint64_t ann[2]; /* steps announced by side k's announcer */
    int64_t eos[2];  /* side k ended after this many steps (-1: not ended) */
    int close_seen;  /* announcer: the receive-only side asked to stop */
    int close_sent;
    void **out; /* control notes in flight */
    int nout, cap_out;
    int end_seen;        /* the own announcer's last note arrived */
    int fin_seen;        /* the other side's rank 0 said it finished (rank 0 only) */
    int64_t fin_acks;    /* rank 0: the ACK total the other side's FIN announced */
    uint64_t acks_sent;  /* ACK notes this rank sent; rank 0 learns its side's total */
    uint64_t acks_total; /* xfer_finalize: every rank's acks_sent, summed (fin_agree.c) */
    int bye_failed;      /* xfer_finalize: a rank of this side knew the channel failed */
    uint64_t acks_recv;  /* announcer: ACK notes received */
    /* flow control */
    uint64_t released;    /* steps the application released (receiving side) */
    uint64_t credit;      /* steps the other side released (what a sender may run ahead of) */
    uint64_t *rel_of;     /* announcer: steps released by each remote rank */
    MPI_Request *why_req; /* rank 0: the failure's words to each other rank (NOTE_FAIL) */
    int nwhy;
} xfer_rt_proto_t;

/* How the channel's steps move (docs/runtime.md, "M x N selections"):
 *   allgatherv  every receiving rank takes every dataset whole: one inter-group allgatherv plan
 *               per slot moves whole contributions (fc, ring, hier: the collectives' choice);
 *   direct      M x N selections, steps beyond int counts, bound buffers: one schedule of this
 *               rank (mxn.h), run by each slot's executor; the receive area holds the remote
 *               senders' headers, the attributes and this rank's selections;
 *   hybrid      some datasets are taken whole by every receiving rank, others in parts: the
 *               contributions start with the headers, the attributes and the whole datasets,
 *               which the allgatherv plan moves, while the direct schedule moves the parts of
 *               the others into this rank's selections after the plan's region.
 * direct is set on the direct and hybrid paths, hybrid on the hybrid one. */
typedef struct xfer_rt_path {
    int direct, hybrid;
    struct xfer_sched *mxn;
    size_t r_area;
    uint64_t step_recv;         /* bytes that land on this rank per step (for xfer_channel_stats) */
    int bound_send, bound_recv; /* datasets this rank bound (xfer_bind_buffer), by direction */
    unsigned bound_gen;         /* bumped whenever a bound buffer moves (a step of its own) */
    struct xfer_exec_seg *seg[2]; /* their ranges in the contribution and receive area */
    int nseg[2];
    int *node[2]; /* the direct schedule's node staging: node keys of side k's ranks (or NULL) */
} xfer_rt_path_t;

/* The channel's contributions, fixed at set-up (stream_layout.c, stream_setup.c). */
typedef struct xfer_rt_layout {
    size_t my_bytes; /* this rank's contribution (header included), 0 if it sends nothing */
    size_t *r_bytes; /* every remote rank's contribution */
    size_t r_total;
    size_t my_plan; /* bytes of this rank's contribution the allgatherv plan moves */
    size_t *r_plan; /* ... of every remote rank's */
    size_t *r_pre;  /* where each remote rank's plan part lands in a receive stage (exclusive
                       prefix of r_plan, nremote + 1 entries) */
    /* rank 0 of a sending side carries the step's attributes after its header, in attr_cap
     * bytes reserved in its contribution */
    size_t attr_cap;
    size_t attr_user; /* of which the attributes may take this much (attributes_bytes); the rest
                         carries the stream's joined tables (stream_joined.c) */
    /* Step 0's blocks, put before the contribution sizes are known, appended in put order after
     * room for the header. Put in the channel's order (the usual case) they are laid out as the
     * contribution itself, and setup adopts stage0 as the first slot's send stage: no copy. */
    char *stage0;
    size_t stage0_len;
    int natural; /* the first commit laid this rank's blocks out in channel order in every slot's
                    send stage (xfer_ch_stage_first): set-up moves them where the layout wants */
} xfer_rt_layout_t;

/* Step 0's set-up (stream_setup.c): a state machine that every progress pass advances and that
 * never blocks, so that no component waits on one channel's first step while its peer waits on
 * another's (docs/runtime.md, "Several channels"). Each rank posts its geometry record once its
 * part is fixed (a sending rank: at its first commit; a receive-only rank: at its first call
 * that needs a step; every rank: in xfer_finalize); the records are exchanged, then the blocks
 * their counts announce (several per rank: docs/runtime.md, "Several blocks per rank"); both sides
 * vote twice (the layout and the plans; then the build) and the channel is set up. The
 * communicators and the allgatherv plans were made when the channel formed (xfer_init): the
 * plans are recounted for the real contributions without any communication
 * (xfer_plan_recount), or, where they cannot carry them, every rank takes the direct path. */
enum {
    XFER_SU_IDLE = 0, /* this rank has not posted its record */
    XFER_SU_EXCHANGE, /* records in flight */
    XFER_SU_BLOCKS,   /* the sending ranks' blocks in flight */
    XFER_SU_VOTE1,    /* layout and plans: the votes in flight */
    XFER_SU_VOTE2,    /* the build: the votes in flight */
    XFER_SU_DONE
};

typedef struct xfer_rt_setup {
    int state;
    uint64_t *mine, *own_all, *rem_all; /* geometry records: this rank's, its side's, the peer's */
    uint64_t *mybx, *own_bx, *rem_bx;   /* their blocks (a sending rank's of the first step) */
    int *own_rc, *own_rd, *rem_rc, *rem_rd;   /* words of each rank's blocks, and where they land */
    MPI_Request req[2];                       /* on ctl_local and on ctl_inter */
    int vote[2], got_local[2], got_remote[2]; /* [status, plans ok]: MPI_MIN over each side */
    xfer_status_t st;                         /* this rank's own verdict so far, */
    char why[1024];                           /* in words */
    /* between the votes: what the layout found */
    size_t *own_bytes, *own_pre, *rem_pre, tot[2], plan_tot[2];
    int partial, flags;
} xfer_rt_setup_t;

/* Attributes of the step being filled (xfer_put_attr), encoded (ch_attr.c). */
typedef struct xfer_rt_attr_out {
    char *buf;
    size_t len;
} xfer_rt_attr_out_t;

/* A sender's flow policy (ch_flow.c; docs/runtime.md, "Flow policies"): `policy: latest` holds
 * the application's steps here, each put's block copied, until rank 0 of the side decides to send
 * or drop them; `stride: N` sends every N-th step only. */
typedef struct xfer_rt_hput {
    int ds; /* the dataset's index in ch->ds */
    xfer_type_t type;
    int ndims;
    uint64_t dims[XFER_MAX_DIMS], start[XFER_MAX_DIMS], count[XFER_MAX_DIMS];
    size_t at, bytes; /* its block in the hold's data */
} xfer_rt_hput_t;

typedef struct xfer_rt_hold {
    int state;     /* XFER_HOLD_* (ch_flow.c) */
    uint64_t step; /* the application's step it holds */
    int nput;
    size_t cap_put;
    xfer_rt_hput_t *put;
    char *data; /* the blocks, 8-byte aligned one after the other */
    size_t len, cap;
    char *attrs; /* the step's attributes (encoded, ch_attr.c) */
    size_t attr_len, attr_cap;
} xfer_rt_hold_t;

#define XFER_RT_HOLDS  2 /* the step kept for the transport's room, the step being put */
#define XFER_RT_ROUNDS 4 /* rank 0's verdicts whose broadcasts may be in flight at once */

typedef struct xfer_rt_flow {
    int on;          /* the sending side of a channel with policy latest or stride > 1 */
    int latest;      /* policy: latest (XFER_POLICY overrides the file) */
    uint64_t stride; /* stride (XFER_STRIDE overrides the file) */
    uint64_t app;    /* sending: the application's step (the number receivers see) */
    int open;        /* sending: the application put something in step app */
    MPI_Comm comm;   /* latest: rank 0's verdicts, one MPI_Ibcast a round (each step's end) */
    xfer_rt_hold_t hold[XFER_RT_HOLDS]; /* latest: hold[(first + i) % N], oldest first */
    int first, n;                       /* the held steps (the one being put is hold[first + n]) */
    uint64_t sealed;                    /* steps this rank held so far (one round each) */
    int64_t rv[XFER_RT_ROUNDS];         /* the rounds' verdicts, round k in [k % N] */
    MPI_Request rreq[XFER_RT_ROUNDS];   /* ... and their broadcasts */
    uint64_t rounds;                    /* rounds this rank posted */
    MPI_Comm fin;    /* xfer_finalize: whether the side's ranks held as many steps */
    int64_t span[2]; /* ... the most and minus the fewest (MPI_MAX) */
    MPI_Request agree;
    int flush;              /* xfer_finalize's flush: 0 not begun, 1 agreeing, 2 the last round
                               (its verdict awaited), 3 done */
    int last;               /* the last round's slot (a rank other than 0) */
    xfer_status_t flush_st; /* its outcome */
    /* latest, rank 0 of a side that takes readers back without xferd (ch_attach.c): since when
     * (xfer_now_ms) the newest held step has found no room (0: it has); a reader silent for
     * control.timeout_ms is lost, as under policy block (ch_flow.c) */
    double stall_ms;
    int gone_here; /* a rank other than 0 met the reader's loss sending a held step: it sends no
                      more, counting what rounds send as sent, until rank 0's verdict switches the
                      side (ch_flow.c, carry_out) */
    /* receiving: the sender's number of the step that arrived last (label_of: its wire step) */
    uint64_t label_of, label;
    int label_set;
    /* sending: the application's steps a stride skipped; the number of the last step sent (-1:
     * none yet). What xferd was told last, and when (the component's leader reports, ch_flow.c's
     * xfer_ch_flow_report: docs/control-protocol.md, "flow"). */
    uint64_t skipped;
    int64_t last_sent;
    int reported;
    int64_t rep_sent;
    uint64_t rep_dropped, rep_skipped;
    double rep_ms;
} xfer_rt_flow_t;

/* A sending side's reader loss (ch_loss.c; docs/runtime.md, "Readers that fail or leave"):
 * under `on_reader_loss: continue` the reader's failure (xferd's verdict) or its early close
 * ends the channel for the sender, whose calls then succeed and send nothing. */
typedef struct xfer_rt_loss {
    int cont;      /* the sending side of a half-duplex channel with on_reader_loss: continue
                      (or spill) */
    int spill;     /* ... with on_reader_loss: spill */
    int detach;    /* either side of a file channel whose reader may attach late or come back
                      (continue or spill, not policy latest): file_attach.c, not lose() */
    int unsent;    /* the step just committed was not kept for anybody (file_attach.c) */
    int away;      /* detach: no reader attached now; xferd's verdict on the one that was is
                      not asked again until one attaches (ch_health.c) */
    int lost;      /* the reader is gone: nothing more goes onto the channel */
    int closed;    /* it closed the channel (a clean leave), rather than failed */
    int agreed;    /* the side agreed that the reader failed, at a commit its ranks make together
                      (ch_step.c): until then a rank that switched alone still says so there */
    uint64_t from; /* the application's first step not sent */
    /* The reader's loss met in a wait for the side's own ranks (ch_wait.c): that wait completes,
     * as it does on the others; the loss is taken at the channel's next wait on the reader, or
     * at the commit, which makes the side's exchanges first (ch_loss.c, xfer_ch_loss_defer). */
    xfer_status_t late_st;
    char late_why[512];
    /* A reader that attaches late or comes back (ch_attach.c): the stream between separate
     * launches, stride 1 (policy block or latest). */
    int attachable; /* this sending side takes readers that announce themselves */
    int never;      /* no reader attached yet (XFER_ABSENT, or none came at xfer_init) */
    int attaches;   /* readers attached after the first join */
    uint64_t base;  /* the application's step of the stream's step 0 (since the last attach) */
    MPI_Comm comm;  /* the side's rounds while detached (a duplicate of the component's) */
    /* Ranks learn of a loss at different steps: the side first agrees where its rounds begin
     * (an MPI_Iallreduce each rank posts when it learns; ch_attach.c). */
    int entered;          /* 0: not posted; 1: posted; 2: agreed (first_round is known) */
    MPI_Request enter;    /* ... the agreement */
    uint64_t enter_in[2]; /* this rank's steps ended when it learned, and whether it finalizes */
    uint64_t enter_out[2];
    uint64_t first_round; /* the first step end (steps ended) at which the side holds a round */
} xfer_rt_loss_t;

/* The steps a detachable stream's sending side keeps for a reader that attaches late or comes
 * back (ch_keep.c): on_reader_loss: spill (the steps its reader has not released, and every step
 * ended while detached, on disk then) or history: K (the last K ended, in memory); replayed at
 * the attach (start: oldest). A step is one record: what the application put, and its
 * attributes. */
typedef struct xfer_rt_kept {
    uint64_t label; /* the application's step */
    uint64_t idx;   /* its step on the stream now attached (UINT64_MAX: not sent on it) */
    int sent;       /* counted in steps_sent (else in steps_unsent) */
    int on_disk;    /* its record is in a spill file (rec NULL) */
    char *rec;      /* the record (ch_keep.c) */
    size_t len;
} xfer_rt_kept_t;

typedef struct xfer_rt_keep {
    int on;            /* this sending side keeps steps (spill or history, start: oldest) */
    int spill;         /* on_reader_loss: spill (else history) */
    int history;       /* history: K */
    xfer_rt_kept_t *e; /* oldest first: consecutive steps, the last ended one last */
    int n, cap;
    uint64_t next;     /* the application's step after the last one kept */
    char *pend;        /* the record of the step being put: its puts, then its attributes */
    size_t plen, pcap; /* ... its bytes, its room */
    size_t pputs;      /* ... the bytes of its puts (the attributes follow) */
    uint32_t pnput;
    /* spill's bounds, over the whole side, since the reader was lost */
    uint64_t spilled, spilled_bytes;
    uint64_t unsynced, unsynced_bytes; /* this rank's steps ended before the side's first round */
    int synced;                        /* the side added them up at its first round */
    char dir[768];                     /* the spill files' */
} xfer_rt_keep_t;

/* What failed or ended on a channel. */
typedef struct xfer_rt_health {
    int failed;            /* a collective failed: the channel is unusable */
    int ended;             /* the application was told the channel ended */
    int finished;          /* xfer_finalize completed this channel */
    int peer_failed;       /* xferd declared the peer component failed */
    int64_t peer_session;  /* the peer's incarnation attached to (its xferd session; 0: first) */
    int ctl_lost;          /* the control plane is gone: the peer's liveness is unknown */
    char peer_why[256];    /* why (the leader knows; other ranks learn it by NOTE_FAIL) */
    char ctl_why[256];     /* why the control plane is lost (the leader's words) */
    xfer_status_t fail_st; /* a failure in the progress thread: its status and words, */
    char fail_why[1024];   /* reported by the application's next call */
    /* The first step whose collective failed (UINT64_MAX: none), most often because the peer
     * went away: the steps before it are still delivered; a wait for it or a later one fails
     * with these words (docs/runtime.md, "What a receiver gets when its sender dies"). */
    uint64_t lost_step;
    xfer_status_t lost_st;
    char lost_why[1024];
} xfer_rt_health_t;

/* The commit's check of a sending side's blocks (ch_blocks.c): every rank's blocks of the
 * fixed-shape datasets it checks (blocks: per_step ones at every commit, fixed ones at the first),
 * gathered on comm, a duplicate of ctl_local that nothing else uses but the side's agreement on
 * the end before such a commit (ch_step.c). */
typedef struct xfer_rt_gather {
    MPI_Comm comm;
    int n;          /* datasets gathered at the last commit ... */
    int *which;     /* ... their indices in ch->ds, in channel order */
    uint64_t *cnt;  /* [r * (nds + 1) + j]: rank r's blocks of the j-th, then [nds] its verdict */
    uint64_t *mine; /* this rank's counts, then its boxes */
    size_t cap_mine;
    uint64_t *box; /* every rank's boxes, rank r's from word rd[r] */
    size_t cap_box;
    int *rc, *rd;
    MPI_Request req;
    int ended; /* the side's agreement on the end before a commit it makes together (ch_step.c) */
} xfer_rt_gather_t;

/* A layer above a channel's step state machine (ch_flow.c's flow policies), reached through its
 * table so that the core's reader-loss switch calls it without depending on it: */
typedef struct xfer_ch_layer_ops {
    /* the reader is gone (ch_loss.c): nothing held is sent; the oldest held step into *from */
    void (*lost)(struct xfer_channel *ch, uint64_t *from);
    /* a step the application ends on a channel whose reader is gone: the layer's own part of it
     * (policy latest: the round every rank of the side still makes) */
    xfer_status_t (*lost_end)(struct xfer_channel *ch);
} xfer_ch_layer_ops_t;

struct xfer_channel {
    struct xfer *x;
    const xfer_transport_ops_t *ops;  /* its transport's (transport.h) */
    const xfer_ch_layer_ops_t *above; /* a flow policy's layer (ch_flow.c), or NULL */
    int index;
    const xfer_cfg_channel_t *cfg;
    xfer_role_t role;
    int side;           /* 0: the channel's `from` component, 1: its `to` */
    int peer;           /* component index of the other side */
    int sends[2];       /* side k sends data */
    MPI_Comm inter;     /* the channel's intercommunicator (owned) */
    int disconnect;     /* formed by connect/accept: MPI_Comm_disconnect it */
    MPI_Comm ctl_inter; /* control notes to the other side */
    MPI_Comm ctl_local; /* control notes inside this side */
    int me, nlocal, nremote;
    char algorithm[64]; /* effective algorithm name (after env and topology) */
    int nds;
    xfer_rt_dset_t *ds;
    xfer_rt_layout_t lay;        /* sizes of the contributions and step 0's stage */
    xfer_rt_attr_out_t attr_out; /* attributes of the step being filled (xfer_put_attr) */
    xfer_rt_path_t path;
    xfer_channel_stats_t stats;
    int nslots; /* the stream's slots (stream.h; none on the file transport) */
    struct xfer_rt_slot *slots;
    int setup;          /* geometry exchanged and plans built */
    xfer_rt_setup_t su; /* how far step 0's set-up is (stream_setup.c) */
    int node_key;       /* this rank's node among its component's (direct path staging) */
    uint64_t cur;       /* step of the application's next put/get */
    int cur_committed;  /* full duplex: the first get of the step committed it */
    int committing; /* inside a commit the side agreed to make (ch_step.c): the step is committed
                       whatever this rank learns of the end meanwhile, and the announcer ends its
                       side (a reader's CLOSE) only after it */
    uint64_t committed;      /* steps this rank committed (sending side) */
    uint64_t started;        /* steps whose collective this rank started */
    xfer_rt_proto_t proto;   /* the step protocol's notes and flow control (stream_notes.c) */
    xfer_rt_health_t health; /* what failed or ended */
    int begun;  /* xfer_step_begin said OK for step cur (xfer_step_end then never waits) */
    int ending; /* xfer_finalize ended it: its step 0 is set up with what it has */
    int closed; /* xfer_channel_close ended it (channel.c): its handle is gone, its calls refused;
                   xfer_finalize finishes it with the others, its end pass done */
    xfer_status_t end_st; /* ... and how its end went (channel.c), in these words */
    char end_why[512];
    struct xfer_file *file;    /* transport: file (file.h); NULL for the stream */
    struct xfer_rt_joined *jn; /* the stream's joined and variable datasets (stream.h), or NULL */
    xfer_rt_gather_t gat;      /* the sending side's blocks at a commit (ch_blocks.c) */
    xfer_rt_flow_t flow;       /* policy and stride (ch_flow.c) */
    xfer_rt_loss_t loss;       /* on_reader_loss (ch_loss.c) */
    xfer_rt_keep_t keep;       /* steps kept for a reader that attaches (ch_keep.c) */
};

/* What tells a peer that computes from one that is gone (docs/runtime.md, "Liveness"). */
typedef enum xfer_rt_live {
    XFER_LIVE_CONTROL, /* xferd: heartbeats, launcher exits; waits for data have no clock */
    XFER_LIVE_JOB,     /* one MPMD job: a process that dies ends the job; waits have no clock */
    XFER_LIVE_CLOCK    /* separate jobs without xferd: nothing does, timeout_ms bounds waits */
} xfer_rt_live_t;

struct xfer {
    xfer_config_t *cfg;
    int comp;       /* this component's index */
    MPI_Comm world; /* duplicate of the communicator given to xfer_init */
    MPI_Comm comm;  /* the component's ranks */
    MPI_Comm fin;   /* xfer_finalize's agreements only (fin_agree.c): a duplicate of comm */
    int rank, size;
    xfer_launch_t launch;
    int timeout_ms;
    xfer_rt_live_t live;
    char run_dir[512];
    int *leader; /* MPMD: world rank of each component's rank 0 (-1: absent) */
    int *nranks; /* MPMD: ranks of each component */
    int nch;
    xfer_channel_t **ch;           /* by channel index; NULL for channels of other components */
    int use_ctl;                   /* the workflow has a control plane (every rank knows) */
    struct xfer_rt_ctl *ctl;       /* rank 0's connection to it (NULL elsewhere) */
    struct xfer_rt_beat *beat;     /* another rank's heartbeats to it (NULL on rank 0) */
    xfer_progress_mode_t progress; /* effective: XFER_PROGRESS_THREAD or _CALLS */
    struct xfer_rt_progress *prog; /* the progress thread (NULL: none) */
    xfer_interrupt_fn intr_fn;     /* the application's interrupt check (xfer_set_interrupt) */
    void *intr_arg;
    /* this run's identity, for the file transport: shared by one MPMD launch, or XFER_RUN_ID
     * (xfer-run sets it); "" when none is known */
    char run_id[128];
    int nreported; /* errors this rank reported to xferd (xfer_rt_done) */
    /* This rank's step 0 began, on every channel at once: at its first commit or first call that
     * waits, on any channel (ch_step.c, ch_wait.c). Its selections and first bindings of the
     * channels it only receives on are fixed from then on (ch_select.c), and it posts its part of
     * their step 0 set-up (stream.c): a bound sender's xfer_step_end waits for that part, and the
     * rank may be waiting on another channel for a step that sender commits after it. */
    int began;
};

/* rt_util.c: what the channels ask of their context (no channel function is called back). */
/* Every rank of @p comm learns the worst status; ranks that succeeded get a message saying
 * which rank failed and why (its message is broadcast). Collective. */
xfer_status_t xfer_rt_agree(MPI_Comm comm, xfer_status_t st);

/* The transport channel @p index takes: XFER_TRANSPORT (stream|file) for every channel, else
 * the file's. */
xfer_status_t xfer_rt_transport(const struct xfer *x, int index, xfer_transport_t *t);

/* intercomm.c */
xfer_status_t xfer_rt_launch_mode(struct xfer *x, const char *component);
/* Forms channel @p index's intercommunicator; *@p inter stays MPI_COMM_NULL when the channel
 * starts detached (a detachable channel whose reader is absent: ch_attach.c). */
xfer_status_t xfer_rt_form(struct xfer *x, int index, MPI_Comm *inter, int *disconnect);
void xfer_rt_run_dir(const struct xfer *x, char *buf, size_t len);
/* The watchdog of MPI_Comm_accept/connect (intercomm.c): on expiry it says @p what and ends the
 * process with exit code 124. */
typedef struct xfer_rt_watch xfer_rt_watch_t;
xfer_rt_watch_t *xfer_rt_watch_begin(int timeout_ms, const char *what);
void xfer_rt_watch_end(xfer_rt_watch_t *w);
/* ch_attach.c: readers that attach late or come back (docs/runtime.md) */
int xfer_rt_detachable(const struct xfer *x, int index);
xfer_status_t xfer_rt_attach_form(struct xfer *x, int index, MPI_Comm *inter, int *disconnect);

/* channel.c (the channel's other files: channel.h) */
/* A channel of transport @p ops (its ops->open makes the transport's state); the file's has no
 * intercommunicator (@p inter MPI_COMM_NULL). */
xfer_status_t xfer_rt_channel_new(struct xfer *x, int index, const xfer_transport_ops_t *ops,
                                  MPI_Comm inter, int disconnect, xfer_channel_t **out);
/* xfer_finalize's passes over every channel (channel.c): end (after a flow policy's flush; its
 * outcome: xfer_rt_channel_ended), drained, goodbye, parted, close; xfer_rt_channels_wait
 * progresses them all until a condition holds on each. The end pass of @p only alone (NULL:
 * every channel not ended yet) is xfer_channel_close's. */
xfer_status_t xfer_rt_channels_end(struct xfer *x, xfer_channel_t *only);
xfer_status_t xfer_rt_channel_ended(const xfer_channel_t *ch);
xfer_status_t xfer_rt_channels_drain(struct xfer *x);
xfer_status_t xfer_rt_channel_goodbye(xfer_channel_t *ch);
xfer_status_t xfer_rt_channels_part(struct xfer *x);
xfer_status_t xfer_rt_channel_close(xfer_channel_t *ch);
void xfer_rt_channel_free(xfer_channel_t **ch, int collective);
int xfer_rt_channel_collective(const xfer_channel_t *ch); /* its frees may be collective */
/* fin_agree.c: what every rank of the component acts on, whatever it alone learned: after the
 * drain, each channel's fate and ACK total; before the frees, whether any channel failed
 * (*failed; 1 when the agreement itself fails). Collective over the component. */
xfer_status_t xfer_rt_fin_agree_channels(struct xfer *x);
xfer_status_t xfer_rt_fin_agree_failed(struct xfer *x, int *failed);

/* control.c: the control plane (xferd); every function is a no-op without one */
typedef struct xfer_rt_ctl xfer_rt_ctl_t;
xfer_status_t xfer_rt_ctl_start(struct xfer *x); /* rank 0 registers; sets x->use_ctl */
/* Collective over the component: every other rank beats with the leader's session. */
xfer_status_t xfer_rt_ctl_ranks(struct xfer *x);
void xfer_rt_ctl_stop(struct xfer *x, int clean); /* clean: say bye */
xfer_status_t xfer_rt_ctl_publish(struct xfer *x, int index, const char *port);
/* Waits up to @p bound_ms for the port of channel @p index's accepting component. */
xfer_status_t xfer_rt_ctl_lookup(struct xfer *x, int index, int bound_ms, char *port, size_t len);
void xfer_rt_ctl_step(struct xfer *x, int index, int side, uint64_t step, uint64_t bytes);
void xfer_rt_ctl_ack(struct xfer *x, int index, int side, uint64_t released);
void xfer_rt_ctl_flow(struct xfer *x, int index, int side, int64_t app_step, uint64_t dropped,
                      uint64_t skipped);
/* Tell xferd of an error a call returns to the application, which may abort next (at most
 * XFER_RT_ERRORS_REPORTED per rank; waits for the daemon's reply, at most a second). */
#define XFER_RT_ERRORS_REPORTED 4
void xfer_rt_ctl_error(struct xfer *x, const char *text);
/* rt_util.c: the end of a public call on @p x: success leaves no stale words (xfer_last_error); an
 * error the application may die of is reported to xferd. Returns @p st. */
xfer_status_t xfer_rt_done(struct xfer *x, xfer_status_t st);
/* rank 0: xferd declared component @p comp failed (its reason in @p why) */
int xfer_rt_ctl_failed(struct xfer *x, int comp, char *why, size_t len);
/* Forget xferd's verdict on component @p comp (rank 0's view): a reader that failed came back
 * (the file transport's attach, file_attach.c); a later failure of it is noted again. */
void xfer_rt_ctl_forget(struct xfer *x, int comp);
/* The same, for the incarnation of @p comp whose session is @p since (0: any): a component that
 * failed and came back (a new session) is alive again for the channels attached to it since. */
int xfer_rt_ctl_failed_since(struct xfer *x, int comp, int64_t since, char *why, size_t len);
/* The same, from the connection watchdog (intercomm.c) while the main thread waits inside
 * MPI_Comm_accept/connect: it reads the main thread's connection too, which the main thread
 * does not touch meanwhile (the watchdog's start and join order the handoff). xferd sends a
 * notice to the connection that last spoke for the session: right after the port's publish or
 * lookup, that is the main thread's, not the heartbeat thread's. */
int xfer_rt_ctl_failed_in_wait(struct xfer *x, int comp, char *why, size_t len);
/* A reader of channel @p index offers @p port through xferd ("attach"). */
xfer_status_t xfer_rt_ctl_attach(struct xfer *x, int index, const char *port);
/* Rank 0 of a sender: a live reader's offer to attach to channel @p index, taken (1), with the
 * reader's session; 0 none. */
int xfer_rt_ctl_take_offer(struct xfer *x, int index, char *port, size_t len, int64_t *session);
/* rank 0: the control plane is gone (shut down, or silent for more than timeout_ms): nothing
 * tells a computing peer from a dead one any more (why in @p why) */
int xfer_rt_ctl_lost(struct xfer *x, char *why, size_t len);

/* progress.c: the progress thread (docs/runtime.md, "Progress"). Every public call that
 * touches a channel holds the context's lock (xfer_rt_lock; no-ops without the thread). */
xfer_status_t xfer_rt_progress_start(struct xfer *x);
void xfer_rt_progress_stop(struct xfer *x);
void xfer_rt_lock(const struct xfer *x);
void xfer_rt_unlock(const struct xfer *x);
void xfer_rt_progress_kick(struct xfer *x); /* a step was committed: a pass now */

/* rt_util.c: the deadline of a wait for the peer that starts now (MPI_Wtime based): timeout_ms from
 * now when nothing else tells a dead peer from a computing one (XFER_LIVE_CLOCK), else none
 * (HUGE_VAL). */
double xfer_rt_deadline(const struct xfer *x);
/* rt_util.c: the bound (ms) on waiting for the peer of channel @p index while the channels are
 * formed: control.timeout_ms times the channel's place in the workflow (1 for the first). Every
 * component forms its channels in the workflow's order, so the peer may come to this one only
 * after forming those before it, with components of their own (chaos.batch seed 29: a reader's
 * accept ended at 8 s while its writer still formed the channel before). */
int xfer_rt_form_bound(const struct xfer *x, int index);

#endif /* XFER_RUNTIME_H */
