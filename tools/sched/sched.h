/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-sched's commands that live in files of their own: tools/xfer-sched.c dispatches to them
 * (argv[1] is the command; each parses its own options and returns the exit status). */
#ifndef XFER_TOOLS_SCHED_H
#define XFER_TOOLS_SCHED_H

#include <time.h>

#include <xfer/sim.h>

/* The node options (--node-size, --node-size-b, --roundrobin, --senders, --hier-sync, --calls,
 * --jitter) that `verify`/`cost`/`dump` and `joined` share: their getopt codes, their
 * getopt_long entries, and their parsing (tools/sched/nodes.c). */
enum {
    XFER_SCHED_O_NODE = 0x400,
    XFER_SCHED_O_NODEB,
    XFER_SCHED_O_RR,
    XFER_SCHED_O_SENDERS,
    XFER_SCHED_O_SYNC,
    XFER_SCHED_O_CALLS,
    XFER_SCHED_O_JITTER
};
#define XFER_SCHED_NODE_LONGOPTS                                                                   \
    {"node-size", required_argument, NULL, XFER_SCHED_O_NODE},                                     \
        {"node-size-b", required_argument, NULL, XFER_SCHED_O_NODEB},                              \
        {"roundrobin", no_argument, NULL, XFER_SCHED_O_RR},                                        \
        {"senders", required_argument, NULL, XFER_SCHED_O_SENDERS},                                \
        {"hier-sync", required_argument, NULL, XFER_SCHED_O_SYNC},                                 \
        {"calls", required_argument, NULL, XFER_SCHED_O_CALLS},                                    \
    {                                                                                              \
        "jitter", required_argument, NULL, XFER_SCHED_O_JITTER                                     \
    }
/* Option @p c with argument @p arg into @p n, if it is a node option (returns 1; usage errors
 * exit naming @p prog); 0: not one. */
int xfer_sched_node_opt(const char *prog, int c, const char *arg, xfer_sim_nodes_t *n);

/* Seconds on the monotonic clock, for the commands' timings. */
static inline double xfer_sched_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* tools/sched/joined.c: the joined datasets' schedules, step by step from a seed. */
int xfer_sched_joined(int argc, char **argv);

#endif /* XFER_TOOLS_SCHED_H */
