/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Relay chains over the receivers' ring (ours; first in fc_half for p < q with equal blocks).
 * Half duplex: group sg (p senders, blocks a_0..a_{p-1} of any sizes, empty ones included)
 * delivers everything to each of the q receivers of the other group. Sender i hands its block,
 * segment by segment, to the head of its chain, receiver h(i) = floor(i q / p); the chain runs
 * round the receivers' ring h -> h+1 -> ... -> h-1, every receiver forwarding a segment as soon
 * as it has it. Every receiver takes in each chain once (T = sum a_i bytes, the bound), every
 * ring link carries each chain at most once (T less the chain ending there), and a sender sends
 * its block once: with pipelining every port carries at most T, whatever the skew, where a
 * store-and-forward exchange of uneven blocks makes some port carry more (the heaviest
 * sender's block n times, or its pieces then a whole ring). No pair of ranks carries data both
 * ways. Chains never split the groups: the schedule uses point-to-point messages only.
 *
 * Order: the chains share the ring links, so each link carries their segments as one sequence
 * known to both ends: segment j of chain i crosses the link out of receiver b at step
 * j + pos_i(b) (pos_i(b): b's place on chain i, 0 at its head), chains in index order within a
 * step. Every forward waits only for a transfer of an earlier step, so the sequences cannot
 * deadlock. Alternate segments of a link go on two lanes (two in flight), which hides each
 * message's handshake.
 *
 * Feeding: on one node a sender's segments go to its head one a message; across a network
 * several a message, each asked for by the head shortly before its ring needs it
 * (XFER_RELAY_FEED).
 *
 * Segments: across a network at most shape->seg_cap bytes (XFER_NET_SEGMENT, under the MPI
 * libraries' eager limits for TCP, so a forward goes out without a rendezvous), else the
 * alpha-beta optimum of a chain (xfer_chain_segments); XFER_SEGMENT_BYTES overrides both. The
 * heaviest chain gets that many segments and the others segments of the same size.
 */
#ifndef XFER_RELAY_H
#define XFER_RELAY_H

#include <stddef.h>

#include "../../sched/sched.h"

/* Segments of two transfers in flight on each ring link. */
#define XFER_RELAY_LANES 2

/* Across a network a sender hands its head messages of at least this many bytes (whole
 * segments, two in flight), above Open MPI's eager limit for TCP (64 KiB), and the head asks for
 * each one two messages' worth of steps before its ring needs it: the message then waits for
 * the head's receive and travels when the ring needs it. Eager segments instead fill the head's
 * inbound queue with the sender's whole block ahead of the ring's segments, which then wait
 * behind it. Measured on the emulated cluster (200 Mbit/s, 500 ms queues, Open MPI, 4 MiB a
 * rank on average, the heaviest twice that; xfer-bench --v 1, medians of 4): (4, 4) 906 -> 734
 * ms, (5, 3) 1142 -> 904 ms, against floors of 699 and 874 ms; (2, 6) and (6, 2), where one
 * chain or one head dominates, 357 -> 379 and 1095 -> 1129 ms. XFER_RELAY_FEED_BYTES overrides
 * (0: a segment a message, as on one node). */
#define XFER_RELAY_FEED 98304

/* Append this rank's part of the relay chains that carry group @p sg's blocks to every rank of
 * the other group (the shape's group 1 - sg contributes nothing), in the current round.
 * Sets s->max_ports. */
xfer_status_t xfer_relay_append(const xfer_shape_t *shape, xfer_sched_t *s, int sg);

/* The same with chain i headed by receiver @p heads[i] (the same array on every rank) instead
 * of floor(i q / p), the schedule's chains numbered from @p chain_base + 1 (at most + 8), so
 * that the two directions of a full-duplex relay run side by side in one round, neither waiting
 * behind the other's operations, and senders feeding their heads @p feed bytes a message across
 * a network (XFER_RELAY_FEED for paced feeds, 0 for a segment a message; XFER_RELAY_FEED_BYTES
 * overrides). Sets s->max_ports to at least one direction's. */
xfer_status_t xfer_relay_append_heads(const xfer_shape_t *shape, xfer_sched_t *s, int sg,
                                      const int *heads, int chain_base, long feed);

/* Predicted time of xfer_relay_append's schedule under latency @p a and time per byte @p b:
 * the fill (a segment crossing q links) and then every segment through a receiver's port, each
 * costing its bytes or, when that is less, a latency shared by the lanes. */
double xfer_relay_cost(const xfer_shape_t *shape, int sg, double a, double b);

#endif /* XFER_RELAY_H */
