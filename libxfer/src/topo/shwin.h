/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A node's shared staging window (MPI_Win_allocate_shared on the node communicator, mapped by
 * every rank of the node). Two parities alternate call by call so that back-to-back calls never
 * touch the buffers of the previous one while it may still be in use. Each parity has a data
 * region -- S (the node's aggregate of the group's contributions) then R (the result received
 * from the other group) -- and control flags written with release/acquire atomics:
 *   ready[slot]   epoch whose block rank `slot` has deposited in S
 *   copied[slot]  epoch whose result rank `slot` has copied out of R
 *   sent[stripe]  epoch whose S segment stripe leader `stripe` has finished sending
 *   valid[stripe] epoch whose R stripe area leader `stripe` has filled
 *   claim[stripe] epoch for which a rank has claimed receiving stripe `stripe` (hier:direct:
 *                 the first ranks to arrive receive)
 *   pclaim[stripe] epoch for which a rank has claimed shipping S stripe `stripe` (hier:direct:
 *                 the first ranks to arrive send)
 * Epochs count the window's uses (the same on every rank of the node); flags only grow, so
 * nothing is ever reset.
 */
#ifndef XFER_SHWIN_H
#define XFER_SHWIN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include <xfer/status.h>

enum {
    XFER_FLAG_READY = 0,
    XFER_FLAG_COPIED,
    XFER_FLAG_SENT,
    XFER_FLAG_VALID,
    XFER_FLAG_CLAIM,
    XFER_FLAG_PCLAIM,
    XFER_NFLAGS
};

struct xfer_shwin {
    MPI_Win win;
    unsigned char *base;
    size_t ctrl;  /* bytes of control area (both parities) */
    size_t s_cap; /* S bytes per parity */
    size_t r_cap; /* R bytes per parity */
    int nslots;   /* ranks of the node */
    int nstripes; /* stripes the control area has room for */
    long epoch;   /* uses so far */
};

typedef struct xfer_shwin xfer_shwin_t;

/* Make *w (possibly NULL) a window with room for @p s_need + @p r_need bytes per parity,
 * @p nslots ranks and @p nstripes stripes. Collective over @p node when it has to (re)allocate;
 * every rank of the node decides alike, since the needs derive from the call's global shape. */
xfer_status_t xfer_shwin_reserve(xfer_shwin_t **w, MPI_Comm node, int nslots, int nstripes,
                                 size_t s_need, size_t r_need);
/* Collective over the node. NULL accepted. */
void xfer_shwin_free(xfer_shwin_t **w);
/* The record only, after a failure: MPI_Win_free is collective; the window stays to MPI. */
void xfer_shwin_abandon(xfer_shwin_t **w);

const char *xfer_flag_name(int kind);

unsigned char *xfer_shwin_S(const xfer_shwin_t *w, int parity);
unsigned char *xfer_shwin_R(const xfer_shwin_t *w, int parity);

/* Writers of one flag must be ordered (a flag only grows): whoever publishes epoch e of a flag
 * waits for its epoch e - 2 first when nothing else it did in the call already implies it (the
 * executor's FLAG_WAIT operations, exec.c, do the waiting). */
void xfer_flag_store(xfer_shwin_t *w, int parity, int kind, int index, long epoch);
long xfer_flag_load(xfer_shwin_t *w, int parity, int kind, int index);
/* Claim stripe @p index for @p epoch (@p kind XFER_FLAG_CLAIM or XFER_FLAG_PCLAIM): 1 for the one
 * rank whose compare-and-swap raised the flag to @p epoch, 0 for everyone else. */
int xfer_flag_claim(xfer_shwin_t *w, int parity, int kind, int index, long epoch);

#endif /* XFER_SHWIN_H */
