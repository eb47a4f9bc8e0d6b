/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-sched: the node options its commands share (sched.h). */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "../common/cli.h"
#include "sched.h"

int xfer_sched_node_opt(const char *prog, int c, const char *arg, xfer_sim_nodes_t *n)
{
    switch (c) {
    case XFER_SCHED_O_NODE:
        n->node_size[0] = n->node_size[1] =
            (int) xfer_cli_long(prog, "--node-size", arg, 1, 1 << 20);
        return 1;
    case XFER_SCHED_O_NODEB:
        n->node_size[1] = (int) xfer_cli_long(prog, "--node-size-b", arg, 1, 1 << 20);
        return 1;
    case XFER_SCHED_O_RR:
        n->roundrobin = 1;
        return 1;
    case XFER_SCHED_O_SENDERS:
        n->senders = (int) xfer_cli_long(prog, "--senders", arg, 1, 1 << 20);
        return 1;
    case XFER_SCHED_O_SYNC:
        if (strcmp(arg, "flags") && strcmp(arg, "barrier"))
            xfer_cli_usage_error(prog, "--hier-sync: expected flags or barrier, got \"%s\"", arg);
        n->barrier = !strcmp(arg, "barrier");
        return 1;
    case XFER_SCHED_O_CALLS:
        n->calls = (int) xfer_cli_long(prog, "--calls", arg, 1, 1000);
        return 1;
    case XFER_SCHED_O_JITTER:
        n->jitter_runs = (int) xfer_cli_long(prog, "--jitter", arg, 0, 100000);
        return 1;
    default:
        return 0;
    }
}
