/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-synth's parts share this: tools/xfer-synth.c (the options, the run around the steps,
 * every rank's results), tools/synth/step.c (one step of every channel: puts, commits, gets
 * checked against the pattern, releases, in the orders and with the delays and faults that
 * --seed and --fault ask for), tools/synth/shape.c (the receiving side's checks of a dataset
 * whose shape changes), tools/synth/joined.c (the rows of joined datasets) and
 * tools/synth/variable.c (variable shapes and their blocks) and tools/synth/blocks.c (several
 * blocks per rank of fixed-shape datasets). */
#ifndef XFER_TOOLS_SYNTH_H
#define XFER_TOOLS_SYNTH_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include <xfer/xfer.h>

enum { ORD_PHASED, ORD_FILE, ORD_RANDOM };
enum { AT_BEGIN, AT_COMMIT, AT_END };

typedef struct opts {
    int steps;
    const char *decomp;
    const char *config;
    const char *component;
    const char *skip;       /* never put this dataset */
    const char *get;        /* also get this (perhaps unknown) dataset every step */
    int exit_after;         /* exit(3) without finalizing after this many steps (-1: never) */
    const char *mpi_thread; /* MPI_Init_thread level: single (MPI_Init) or multiple */
    int stall_after;        /* stop calling libxfer after this many steps, for ever (-1: never) */
    int kill_after;         /* rank hook_rank sends itself SIGKILL after this many steps (-1: no) */
    int sigstop_after;      /* rank hook_rank sends itself SIGSTOP after this many steps (-1: no) */
    int hook_rank;          /* --fault-rank: the rank --kill-after and --sigstop-after hit */
    int report_time;        /* rank 0 prints how long its steps took (flow control tests) */
    int compute_ms;         /* each step "computes" this long (a sleep) before its puts */
    int begin_ms;           /* begin every step with xfer_step_begin(timeout), -2: do not */
    const char *select;     /* xfer_select every received dataset: overlap, mixed (even ranks all,
                             * odd ones overlap), corner, none, all */
    int deadline_ms;        /* with begin_ms: give up on a step not begun within this (0: never) */
    int quiet;
    int attrs; /* put and check per-step attributes */
    int bind;  /* xfer_bind_buffer every dataset: no copies in put and get (2: two buffers each,
                  in turn: even steps in the first, odd ones in the second) */
    const char *put_order; /* forward, reverse (datasets against the channel's order), twice
                            * (each block, then again with wrong data: refused, naming both) */
    int seeded;            /* --seed given */
    uint64_t seed;         /* orders, delays and user selections are drawn from it */
    int orders;            /* ORD_* */
    int delay_ms;          /* before and after each step, a delay drawn in 0..delay_ms */
    int stop_after;        /* finalize after this many steps (-1: run them all) */
    int fault_sig;         /* --fault: 0 none, SIGKILL or SIGSTOP */
    int fault_rank, fault_at;
    int64_t fault_step;
    int bk, bl;             /* --blocks KxL: each fixed-shape block put as K x L blocks */
    int move;               /* --move: rank r plays rank (r + s) mod n's block in step s */
    const char *bad_blocks; /* --bad-blocks hole|overlap|mismatch (tools/synth/blocks.c) */
    int64_t bad_step;       /* --bad-step: the step it spoils (-1: its kind's) */
    int report;             /* a line per completed step and channel */
    int no_empty_steps; /* joined datasets: a step of no rows gets one (a runtime without them) */
    int recv_ms;        /* each step received on a channel "analyses" this long after its gets */
    int expect_frames;  /* compressed datasets received on the stream came as frames (flow.c) */
} opts_t;

/* How a channel ended for this rank (the results' end=). */
enum { END_RUNNING, END_OK, END_EOS, END_STOPPED, END_FAILED, END_WRONG, END_ABORTED, END_KILLED };

typedef struct chan {
    xfer_channel_t *h; /* NULL: not a channel of this component */
    xfer_role_t role;
    int end;               /* END_* */
    uint64_t steps;        /* step_end calls that returned XFER_SUCCESS */
    uint64_t got;          /* steps whose data this rank received whole and found right */
    xfer_status_t st;      /* the failure (END_FAILED) */
    const char *eos_where; /* the call that met the end of the stream */
    /* flow policies (tools/synth/flow.c): the sending side's policy and stride as the library
     * decides them (the file, then XFER_POLICY and XFER_STRIDE) */
    int latest;              /* policy: latest */
    uint64_t stride;         /* stride (1: every step) */
    int eager;               /* receiving side: read every step of its own (else every stride-th) */
    int has_q;               /* the current step's sender number is known (q) */
    uint64_t q;              /* receiving side: the sender's number of the step being read */
    int64_t first_q, last_q; /* the first and last steps received (-1: none yet) */
    int saw_end;             /* receiving side: the end of the stream came */
    int zgot; /* elements of a dataset compressed by lz4, zstd or zfp came (flow.c checks) */
} chan_t;

/* The run's state (tools/xfer-synth.c) */
extern opts_t o;
extern int wrank;                /* the rank in MPI_COMM_WORLD */
extern char me[64];              /* the component's name */
extern long long at_step;        /* the step being played, for the messages (-1: none) */
extern const xfer_config_t *cfg; /* the workflow, comp this component in it */
extern int comp, crank, csize;
extern chan_t *chs; /* per channel of the workflow */
extern uint64_t checked;
extern int synth_seed_in_errors; /* failures end with "(seed S)": the run draws from it */
extern void **bnd;               /* the bound buffers (--bind), BND() */
extern uint64_t synth_not_ready;

/* The bound buffer of channel i, dataset j in step s, in bnd[]: NDS_MAX slots per channel
 * (--bind-alternate: odd steps use a second set of nchannels * NDS_MAX after the first) */
#define NDS_MAX      (2 * XFER_MAX_DATASETS) /* datasets a channel may have */
#define BND(i, j, s) ((o.bind == 2 && ((s) &1) ? cfg->nchannels * NDS_MAX : 0) + (i) *NDS_MAX + (j))
/* A receiving side's: by the steps it read (a policy may send only some of the sender's) */
#define RBND(i, j, next) BND((i), (j), chs[i].got + (next))

/* Print "xfer-synth: COMPONENT rank R: [step S: ]MESSAGE", every channel's results, and exit(1)
 * (the launcher stops the other ranks; MPI_Abort can lose the output). */
void synth_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void synth_print_results(void);

#define FAIL(...) synth_die(__VA_ARGS__)

/* A call that must succeed, and leave no words behind when it does. */
#define XCHECK(call)                                                                               \
    do {                                                                                           \
        const double t0_ = MPI_Wtime();                                                            \
        xfer_status_t st_ = (call);                                                                \
        if (st_ != XFER_SUCCESS)                                                                   \
            FAIL("%s: %s: %s (after %.0f ms)", #call, xfer_status_name(st_), xfer_last_error(),    \
                 1e3 * (MPI_Wtime() - t0_));                                                       \
        if (xfer_last_error()[0]) /* a success leaves no words behind */                           \
            FAIL("%s succeeded, but xfer_last_error() says \"%s\"", #call, xfer_last_error());     \
    } while (0)

/* A call on channel i in step s: 1 on success; 0 when it met the end of the stream (the channel
 * ends for this rank, the others go on); a failure is reported and ends the process. */
int synth_ch_result(int i, uint64_t s, xfer_status_t st, const char *what, double t0);
#define CHCALL(ok, i, s, call)                                                                     \
    do {                                                                                           \
        const double t0_ = MPI_Wtime();                                                            \
        const xfer_status_t st_ = (call);                                                          \
        (ok) = synth_ch_result((i), (s), st_, #call, t0_);                                         \
    } while (0)

static inline int synth_live(int i)
{
    return chs[i].h && chs[i].end == END_RUNNING;
}

/* What --seed draws: one mix of (seed, what, component, rank, step, item). */
enum {
    R_PUT = 1,
    R_ORDER,
    R_FULL,
    R_DELAY0,
    R_DELAY1,
    R_SELECT,
    R_DSORDER,
    R_ROWS,
    R_JSELECT,
    R_VSHAPE,
    R_VBLOCK,
    R_VSELECT,
    R_FLOW
};
uint64_t synth_draw(uint64_t what, uint64_t a, uint64_t b, uint64_t c, uint64_t d);

void synth_nap_ms(int ms);
void synth_delay(int which, uint64_t s);    /* 0..delay_ms, drawn for this rank and step */
void synth_fault_point(int at, uint64_t s); /* --fault, when it is AT_* of step s */

/* The pattern and the decomposition */
/* Fill box (start, count) of dataset @p d of channel @p ch, dataset index @p di, step @p s, with
 * the pattern, packed: element g of the row-major flattening of @p dims (the file's dims; a
 * joined dataset's: the step's rows first, so that its elements are keyed on the global row). */
void synth_fill(const xfer_cfg_dataset_t *d, const uint64_t *dims, int ch, int di, uint64_t s,
                const uint64_t *start, const uint64_t *count, char *buf);
/* Check a hyperslab inside what this rank received of dataset j of channel i in step s (the
 * middle third of every dimension of @p dims, within @p out's box): xfer_get_selection into a
 * buffer of its own, compared with the pattern. *@p n gets its elements. 0: the channel
 * ended. */
int synth_check_hyperslab(int i, int j, uint64_t s, const uint64_t *dims,
                          const xfer_dataset_desc_t *out, uint64_t *n);
/* Compare @p n elements of dataset @p d received (@p got) with the pattern (@p want): 1 when
 * they match; else the first that differs in *@p bad and, for a record, its field in *@p field
 * (-1 otherwise). A record is compared field by field: padding is not data. */
int synth_same(const xfer_cfg_dataset_t *d, const char *got, const char *want, uint64_t n,
               uint64_t *bad, int *field);
/* Compare what this rank received of dataset j of channel i in step s, box @p start/@p count of
 * the step's shape @p dims, with the pattern; a difference ends the run naming @p what, the
 * element, its global coordinates, the field and @p more (may be NULL). */
void synth_check_data(int i, int j, uint64_t s, const char *what, const uint64_t *dims,
                      const uint64_t *start, const uint64_t *count, const char *got,
                      const char *want, const char *more);
/* Records: a put gives the caller's layout in desc.record on even steps (one of its own, laid
 * out by xfer_record_layout from the fields' types and counts, which the runtime checks against
 * the declaration) and NULL on odd ones; a get must give the declaration back. */
typedef struct synth_layout {
    xfer_record_t r;
    xfer_record_field_t f[XFER_RECORD_MAX_FIELDS];
} synth_layout_t;
void synth_record_desc(const xfer_cfg_dataset_t *d, uint64_t s, xfer_dataset_desc_t *desc,
                       synth_layout_t *own);
void synth_check_record_desc(int i, int j, uint64_t s, const xfer_dataset_desc_t *out);
void synth_block_of(const xfer_cfg_dataset_t *d, int rank, int nranks, const char *mode,
                    uint64_t *start, uint64_t *count);
/* Part i of n of a length: even, uneven (weights 1, 2, 3 ...) or with part 0 empty. */
void synth_split(uint64_t len, int n, int i, const char *mode, uint64_t *start, uint64_t *count);
uint64_t synth_vol(int nd, const uint64_t *c);
/* The bytes of box @p count of dataset @p d of channel @p ch, or the end of the run, naming the
 * dataset, when they do not fit this process's sizes (a buffer also needs one byte more). */
size_t synth_box_bytes(const char *ch, const xfer_cfg_dataset_t *d, const uint64_t *count);
/* A buffer of @p bytes (and one more, so that none is empty) for @p what of dataset @p d of
 * channel @p ch, zeroed when @p zero; a failure ends the run naming the dataset and the size. */
void *synth_data_alloc(const char *ch, const xfer_cfg_dataset_t *d, size_t bytes, int zero,
                       const char *what);

/* Datasets whose shape changes every step (tools/synth/shape.c): joined rows and variable
 * extents. Every rank computes the step's shape from --seed, so a receiver knows each byte it
 * must get. */
typedef struct decl {    /* what a receiving rank declared with xfer_select */
    int declared, whole; /* whole: xfer_select(NULL, NULL) */
    uint64_t start[XFER_MAX_DIMS], count[XFER_MAX_DIMS];
} decl_t;
extern decl_t *synth_decl;                             /* [channel * NDS_MAX + dataset] */
extern uint64_t synth_jbound_gets, synth_jcopied_gets; /* --bind: in the buffer, or copied */
/* Declare box @p b of received dataset j of channel i (xfer_select) and keep it for the checks. */
void synth_declare(int i, int j, const decl_t *b);
/* This rank's selection of dataset j of channel i in a step of shape @p dims, by the documented
 * rules: the box it declared clipped to the step, or the dataset's mode over the step's shape. */
void synth_step_selection(int i, int j, const uint64_t *dims, uint64_t *start, uint64_t *count);
/* Compare @p n values with what was expected; on a difference end the run naming @p what. */
void synth_same_u64(int i, uint64_t s, const char *what, int n, const uint64_t *got,
                    const uint64_t *want);
/* Receive dataset j of channel i in step s, of shape @p dims, and check it: xfer_get_shape
 * (then @p more, may be NULL, for what only its kind checks), the selection, every value and a
 * hyperslab. @p cap: the bytes of the buffer bound to it (--bind). 0: the channel ended. */
int synth_shape_get(int i, int j, uint64_t s, const uint64_t *dims, size_t cap,
                    int (*more)(int i, int j, uint64_t s));

/* Joined datasets (dims: [joined, ...]; tools/synth/joined.c): every rank computes every
 * sending rank's rows of every step from --seed. */
/* Declare this rank's box of received joined dataset j of channel i (--select PICK, or drawn
 * from --seed under selection: user); 0 when it declares none. */
int synth_joined_declare(int i, int j, const char *pick);
/* Bytes of the buffer --bind gives joined dataset @p d: a sender's most rows, a receiver's
 * typical step (smaller than some steps: those land in the library's buffer). */
size_t synth_joined_bind_bytes(int i, const xfer_cfg_dataset_t *d, int sending);
/* This rank's put of joined dataset j of channel i in step s, and the receiving side's checks
 * of it (shape, senders' rows, selection, every byte). 0: the channel ended. */
int synth_joined_put(int i, int j, uint64_t s);
int synth_joined_get(int i, int j, uint64_t s);

/* Variable shapes (dims entries `variable`; tools/synth/variable.c): every rank computes each
 * step's shape and every sending rank's block of it from --seed. The same four calls. */
int synth_variable_declare(int i, int j, const char *pick);
size_t synth_variable_bind_bytes(int i, const xfer_cfg_dataset_t *d, int sending);
int synth_variable_put(int i, int j, uint64_t s);
int synth_variable_get(int i, int j, uint64_t s);

/* Several blocks per rank (--blocks, --move, --bad-blocks, --put-order twice;
 * tools/synth/blocks.c): are they asked for; this rank's blocks of fixed-shape dataset j of
 * channel i in step s (0: the channel ended); xfer_step_end of a step --bad-blocks spoils (-1:
 * not one: the caller commits as usual; 0: the channel ended; 1: committed). */
int synth_blocks_on(void);
int synth_blocks_put(int i, int j, uint64_t s);
int synth_blocks_end(int i, uint64_t s);

/* Flow policies (tools/synth/flow.c). Each channel's policy and stride, the file's and then
 * the environment's overrides, parsed as ch_flow.c does, and whether a reader reads every step
 * of its own (its sender never waits for it through other channels) or every stride-th; does
 * channel i read in this rank's step s; receiving side, the sender's number of the step being
 * read: adopt @p q (from xfer_channel_step or a get's desc.step) and check it against the order
 * the policy promises; the receiving side's step number (s when the policy sends every step) for
 * the data checks; a line's counters; the counters' own identities at the end. */
void synth_flow_open(void);
int synth_flow_on(int i);
int synth_flow_reads(int i, uint64_t s);
void synth_flow_adopt(int i, uint64_t q);
int synth_flow_learn(int i, uint64_t s);
void synth_flow_result(int i, char *line, size_t len);
void synth_flow_check_counts(void);
/* After its last step: read channel i (from this rank's step s on) to the end of its stream. */
void synth_flow_drain(int i, uint64_t s);

/* The step-status API (--begin): begin each channel's step s, polling with the timeout. */
void synth_begin_step(uint64_t s);
/* Step s of every channel of this component, in the order of --orders. */
void synth_run_step(uint64_t s);

#endif
