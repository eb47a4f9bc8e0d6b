/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-bench --calibrate: measure the link and write the tuning file auto reads. */
#ifndef XB_CALIBRATE_H
#define XB_CALIBRATE_H

#include <mpi.h>
#include <unistd.h>

#include "xbench.h"

typedef struct xb_link {
    double alpha, beta;
    double beta_two_way; /* per direction, A0 sending to B0 while receiving from a third rank */
    double beta_pair;    /* per direction, A0 and B0 sending to each other at once */
} xb_link_t;

/* One measured call: key "DIRECTION P Q PPN COUNTS BYTES" and its fastest algorithm. */
typedef struct xb_best {
    char key[160];
    char algo[48];
    double seconds;
} xb_best_t;

/* Most ranks of MPI_COMM_WORLD on one shared-memory node (as libxfer counts them). Collective. */
int xb_node_ppn(void);

/* Between A's and B's first ranks: alpha (ping-pong), one-way beta, and per direction when data
 * flows both ways at once: beta_pair when the two send to each other, beta_two_way when A's
 * first rank sends to B's first while it receives from a third rank (B's second, else A's
 * second; the pair figure when there is no third rank). Medians, valid on world rank 0.
 * Collective. */
int xb_calibrate_link(const xb_setup_t *s, xb_link_t *out);

/* Rank 0: rewrite @p path with the new link figures and entries, keeping the entries of other
 * calls already there. 0, or -1 with a message on stderr. */
int xb_calibrate_write(const char *path, const xb_link_t *link, const xb_best_t *best, int nbest);

#endif /* XB_CALIBRATE_H */
