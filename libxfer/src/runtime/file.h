/* SPDX-License-Identifier: BSD-3-Clause */
/* The file transport of a channel (docs/runtime.md, "Stream or file"): each step of a sending
 * side is one parallel HDF5 file, written collectively by its ranks through the HDF5 adapter
 * (libxfer_hdf5.so, loaded when the first such channel opens) and given its final name only
 * once complete; each receiving rank reads its selections of it on its own. No
 * intercommunicator: the two sides meet in a directory,
 *   DIR/WORKFLOW/CHANNEL/SENDER.run       the sending side's manifest: run id, datasets
 *   DIR/WORKFLOW/CHANNEL/SENDER.NNNNNN.h5 step NNNNNN of SENDER
 *   DIR/WORKFLOW/CHANNEL/SENDER.end       SENDER sent N steps and no more
 *   DIR/WORKFLOW/CHANNEL/RECEIVER.closed  RECEIVER stopped reading (run id, its incarnation)
 *   DIR/WORKFLOW/CHANNEL/RECEIVER.attach  RECEIVER (an incarnation) asks to attach
 *   DIR/WORKFLOW/CHANNEL/SENDER.attached  the sender's answer: where the reader begins
 * file.c: the step protocol over those files; file_io.c: paths, the adapter, the files;
 * file_attach.c: readers that attach late or come back (on_reader_loss: continue, spill). */
#ifndef XFER_RT_FILE_H
#define XFER_RT_FILE_H

#include "channel.h"

struct xfer_adapter_ops;

/* One sending side's files (this component's own, or the peer's). */
typedef struct xfer_file_side {
    const char *name; /* the component's name */
    char run[128];    /* the run id its manifest holds ("": not read yet) */
} xfer_file_side_t;

/* A reader that attaches late or comes back (file_attach.c). */
typedef struct xfer_file_att {
    /* sending side, alike on every rank (changed only at a commit its ranks agree on) */
    int attached;      /* a reader is attached: its releases give the sender room */
    char inc[128];     /* rank 0: the attached reader's incarnation ("": not announced yet) */
    uint64_t at, from; /* it attached at step `at` and began at `from` (room counts from them) */
    uint64_t det;      /* the first step committed while no reader was attached */
    uint64_t spilled, spilled_bytes; /* steps (and bytes) spilled since */
    /* receiving side */
    char me[128];  /* this reader's incarnation */
    int told;      /* rank 0 announced it (RECEIVER.attach) */
    int first;     /* 1: the run's first reader; 0: it comes back; -1: not known yet */
    int answered;  /* where it begins is known: */
    uint64_t upto; /* a missing step file below this step is a gap (not kept), skipped */
} xfer_file_att_t;

typedef struct xfer_file {
    const struct xfer_adapter_ops *ops;
    const char *(*adapter_error)(void);
    char dir[1024]; /* DIR/WORKFLOW/CHANNEL */
    char run[128];  /* the id of this side's own files (a sending side's: the run's, or its own) */
    int keep;       /* keep the step files (else the receiver removes each once released) */
    xfer_file_side_t own, peer;
    /* sending: this rank's blocks of the step being filled (copies, or the caller's buffer of a
     * bound dataset) */
    void **blk;
    size_t *blk_cap;
    const void **blk_at; /* where the step's block is */
    uint64_t mask;       /* datasets this rank put in the step */
    /* joined datasets of the step being committed: every rank's rows, [rank * njoined + j] for
     * the j-th joined dataset this side sends (in channel order); gathered at the commit */
    int njoined;
    uint64_t *rows;
    /* variable shapes of the step being committed: every rank's record of each (put, dims,
     * start, count: ch_layout.c), vrec_len words a rank; the agreed shape goes to ds->sdims */
    int vrec_len;
    uint64_t *vrec, *vone;
    int closed_seen; /* the receiver closed: the sender's steps end */
    /* receiving: this rank's selections of the peer's step `have_step` */
    int have;
    uint64_t have_step;
    void **sel; /* the selection of each received dataset (or its bound buffer) */
    size_t *sel_cap;
    const void **landed; /* where the step's selection of each is: sel[i], or the bound buffer */
    uint64_t rmask;      /* datasets the step's file holds */
    char *attrs;         /* the step's attributes, encoded as xfer_put_attr encodes them */
    size_t attrs_len, attrs_cap;
    int64_t peer_end; /* steps the peer sent in all (-1: it has not ended) */
    xfer_file_att_t att;
} xfer_file_t;

/* file.c: the channel calls of a file channel */
xfer_status_t xfer_file_open(xfer_channel_t *ch);
/* The peer's failure as xferd reports it (rank 0 asks, the side's other ranks hear from it). */
xfer_status_t xfer_file_check_peer(xfer_channel_t *ch);
xfer_status_t xfer_file_finish(xfer_channel_t *ch);
void xfer_file_free(xfer_channel_t *ch, int collective);

/* file_attach.c: readers that attach late or come back (ch->loss.detach) */
/* Either side, at the channel's open (collective over the component): the sender starts
 * attached (its reader launched with it) or, named in XFER_ABSENT, detached; a reader draws
 * its incarnation. */
xfer_status_t xfer_file_att_open(xfer_channel_t *ch);
/* Sending side, the commit's agreement (collective over the side): the reader's loss, close or
 * announcement, acted on by every rank at this step; *@p mask: the datasets put on any rank. */
xfer_status_t xfer_file_att_agree(xfer_channel_t *ch, uint64_t *mask);
/* Sending side, before the step's file is written: *@p write 0 when nothing is kept for a
 * reader not attached (continue without history); XFER_ERR_SPILL_FULL beyond spill's bounds
 * (@p bytes: the step's data). */
xfer_status_t xfer_file_att_keep(xfer_channel_t *ch, uint64_t bytes, int *write);
/* Sending side, the step written (@p wrote) or not: spill's count, history's ring. */
xfer_status_t xfer_file_att_kept(xfer_channel_t *ch, int wrote);
/* Sending side: may step cur be written? At once with no reader attached; else within
 * max_in_flight_steps of the steps it released since it began (its backlog counted as its
 * progress, not held against the sender), or once it closed. */
xfer_status_t xfer_file_att_room(xfer_channel_t *ch, int *met);
/* Receiving rank: its announcement and the sender's answer; then step *@p s (moved on past
 * the steps not kept for it). *@p ready 0: not yet known where it begins. */
xfer_status_t xfer_file_att_reader(xfer_channel_t *ch, uint64_t *s, int *ready);
/* Receiving rank: step *@p s has no file; 1 when it never will (not kept): *@p s moved on to
 * the next one there is (or the end). */
int xfer_file_att_gap(xfer_channel_t *ch, uint64_t *s);
/* A marker of run @p run at @p path: 1 when there, its line @p key into @p val ("": none). */
int xfer_file_marker_value(const char *path, const char *run, const char *key, char *val,
                           size_t len);

#define META_GROUP  "/.xfer"    /* the step's identity: run, step, sender, datasets put */
#define JOINED_ROWS "xfer_rows" /* a joined dataset's attribute: each sending rank's rows */
/* a compressed dataset's deflate level in the step file: 1, the fastest (HDF5's filters are
 * serial per chunk; lz4-like speed matters more than the last few percent) */
#define XFER_FILE_DEFLATE 1

/* file_io.c: the directory, the adapter and the files (file_read.c reads a step's) */
/* An adapter's failure in the channel's words (@p what: the step and the file). */
xfer_status_t xfer_file_adapter_fail(const xfer_channel_t *ch, xfer_status_t st, const char *what);
xfer_status_t xfer_file_load_adapter(xfer_channel_t *ch);
xfer_status_t xfer_file_make_dir(xfer_channel_t *ch);
void xfer_file_path(const xfer_channel_t *ch, const xfer_file_side_t *s, const char *what,
                    char *buf, size_t len);
void xfer_file_step_path(const xfer_channel_t *ch, const xfer_file_side_t *s, uint64_t step,
                         char *buf, size_t len);
/* Sending side, rank 0: remove the side's files of an earlier run, write its manifest. */
xfer_status_t xfer_file_start_side(xfer_channel_t *ch);
/* Receiving rank: the peer's manifest, if it is there and of this run (*found: when the run
 * has an id, the manifest must carry it; else the one there is adopted), checked against this
 * component's description of the datasets. */
xfer_status_t xfer_file_read_manifest(xfer_channel_t *ch, int *found);
/* Write a small marker file atomically (rank 0): "run RUN\n" and @p extra. */
xfer_status_t xfer_file_write_marker(xfer_channel_t *ch, const char *path, const char *run,
                                     const char *extra);
/* Take room now for the marker @p path written later (its .tmp; xfer_file_write_marker reuses
 * it): a disk that fills during the run cannot refuse a side's last words. */
xfer_status_t xfer_file_reserve_marker(xfer_channel_t *ch, const char *path);
/* Receiving side, rank 0: the directory, and room for its "closed" marker (and "released",
 * keep: true). */
xfer_status_t xfer_file_start_receiver(xfer_channel_t *ch);
/* Rank 0: remove the rooms taken and not used (the channel finished or failed). */
void xfer_file_drop_reserved(xfer_channel_t *ch);
/* Read a marker: 1 when it exists and names this run (its "steps N" line into *@p n). */
int xfer_file_read_marker(const xfer_channel_t *ch, const char *path, const char *run, int64_t *n);
/* The j-th joined dataset this side sends: its rows on every rank of the step being committed
 * (f->rows), their total and this rank's first row. */
void xfer_file_rows_of(const xfer_channel_t *ch, int j, uint64_t *total, uint64_t *first);
/* Write the step being committed (collective over the side's ranks). */
xfer_status_t xfer_file_write_step(xfer_channel_t *ch, uint64_t mask, const char *attrs,
                                   size_t attrs_len);
/* Read this rank's selections of the peer's step @p step; *@p found 0 when its file is not
 * there (yet) or is not of this run. */
xfer_status_t xfer_file_read_step(xfer_channel_t *ch, uint64_t step, int *found);

#endif /* XFER_RT_FILE_H */
