/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-bench --calibrate: measure the link and write the tuning file auto reads. */
#ifndef XB_CALIBRATE_H
#define XB_CALIBRATE_H

#include <mpi.h>
#include <unistd.h>

#include "xbench.h"

typedef struct xb_link {
    double alpha, beta, beta_two_way;
} xb_link_t;

/* One measured call: key "DIRECTION P Q PPN COUNTS BYTES" and its fastest algorithm. */
typedef struct xb_best {
    char key[160];
    char algo[48];
    double seconds;
} xb_best_t;

/* Most ranks of MPI_COMM_WORLD on one shared-memory node (as libxfer counts them). Collective. */
int xb_node_ppn(void);

/* Ping-pong and two-way exchange between A's and B's first ranks: alpha, one-way beta and the
 * per-direction beta when both send at once (medians; valid on world rank 0). Collective. */
int xb_calibrate_link(const xb_setup_t *s, xb_link_t *out);

/* Rank 0: rewrite @p path with the new link figures and entries, keeping the entries of other
 * calls already there. 0, or -1 with a message on stderr. */
int xb_calibrate_write(const char *path, const xb_link_t *link, const xb_best_t *best, int nbest);

#endif /* XB_CALIBRATE_H */
