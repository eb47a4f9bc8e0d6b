/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Measured tuning for `auto` (XFER_TUNING=FILE, written by `xfer-bench --calibrate FILE`).
 * A text file, one entry per line, '#' starts a comment:
 *
 *   alpha SECONDS                  latency of one message (ping-pong)
 *   beta SECONDS_PER_BYTE          one way, one message at a time
 *   beta_two_way SECONDS_PER_BYTE  per direction when a rank sends and receives at once (to
 *                                  and from different peers)
 *   gamma SECONDS_PER_BYTE         node-shared memory traffic
 *   best DIRECTION P Q PPN COUNTS BYTES ALGORITHM SECONDS
 *       the fastest algorithm measured for a call of P ranks in group A (the low group of the
 *       merged intercommunicator) and Q in group B, at most PPN ranks per node, where
 *       DIRECTION is a-to-b, b-to-a or both (who contributes data), COUNTS is uniform or
 *       varied (allgatherv with different counts) and BYTES the largest contribution of one
 *       rank; SECONDS is its median time (for the record). ALGORITHM may be hier:INNER or
 *       hier:direct: with several ranks per (real) node auto then stages through the nodes
 *
 * auto takes the `best` entry of the same direction, P, Q, PPN and COUNTS whose BYTES is
 * nearest to the call's (within a factor of 2), and the model with these alpha/beta/gamma
 * otherwise (XFER_ALPHA, XFER_BETA and XFER_GAMMA, when set, take precedence). Every rank of
 * both groups must read the same file: the topology compares a hash of it (and of those
 * variables) across ranks.
 */
#ifndef XFER_TUNING_H
#define XFER_TUNING_H

#include <stddef.h>
#include <stdint.h>

#include <xfer/status.h>

enum { XFER_DIR_A_TO_B = 0, XFER_DIR_B_TO_A = 1, XFER_DIR_BOTH = 2 };

typedef struct xfer_tuning_best {
    int dir, p, q, ppn, varied;
    size_t bytes;
    char algo[48];
    double seconds;
    int line;
} xfer_tuning_best_t;

typedef struct xfer_tuning {
    char path[512];
    double alpha, beta, beta_two_way, gamma; /* 0: not given */
    xfer_tuning_best_t *best;
    int nbest, best_cap;
    uint64_t hash; /* of the file's bytes */
} xfer_tuning_t;

/* Read @p path. XFER_ERR_CONFIG naming the file and line when it cannot be read or parsed. */
xfer_status_t xfer_tuning_load(const char *path, xfer_tuning_t **out);
void xfer_tuning_free(xfer_tuning_t **t);

/* The entry for a call, or NULL. */
const xfer_tuning_best_t *xfer_tuning_match(const xfer_tuning_t *t, int dir, int p, int q, int ppn,
                                            int varied, size_t bytes);

const char *xfer_tuning_dir_name(int dir);

#endif /* XFER_TUNING_H */
