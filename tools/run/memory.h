/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run --check: per channel and direction, what each receiving rank holds of a step
 * (its selection under the dataset's mode; `user`: at most the whole; a joined dataset at its
 * max_rows, or a note to @p out that without it its rows are not counted; a variable shape: a
 * note, not counted) times the slots
 * (max_in_flight_steps + 1), printed to @p out; a warning to @p err when a rank, or all ranks
 * of the receiving component on one host, would need more than this host's memory (a cluster's
 * nodes may differ: the check uses the host it runs on). A sender's steps kept for readers that
 * attach later: history (K copies of its blocks per step, per rank) and spill (on disk, up to
 * spill.max_steps steps or spill.max_bytes). Returns the number of warnings. */
#ifndef XFER_RUN_MEMORY_H
#define XFER_RUN_MEMORY_H

#include <stdio.h>

#include <xfer/xfer.h>

int xfer_run_memory_check(const xfer_config_t *cfg, FILE *out, FILE *err);

#endif
