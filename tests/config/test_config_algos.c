/* SPDX-License-Identifier: BSD-3-Clause */
/* test_config (test_config.c): every algorithm is allowed or refused as its registry flags say. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/config.h>

#include "../support/unit.h"
#include "config/cfg.h"
#include "test_config.h"

/* ---- the algorithm's flags decide what a channel may name ---------------------------------- */

/* A two-component workflow with one channel running @p algo. */
static void write_channel(const char *path, int ring, int full, const char *algo)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "workflow: w\n"
             "topology: {kind: %s}\n"
             "components:\n"
             "  - {name: a, nprocs: 3, cmd: [a]}\n"
             "  - {name: b, nprocs: 2, cmd: [b]}\n"
             "channels:\n"
             "  - name: c\n"
             "    from: a\n"
             "    to: b\n"
             "    duplex: %s\n"
             "    algorithm: %s\n"
             "    datasets: [{name: x, type: float64, dims: [8]}]\n",
             ring ? "ring" : "fully_connected", full ? "full" : "half", algo);
    write_text(path, text);
}

/* Every registered algorithm on both topologies in both duplex modes: it loads exactly when its
 * flags allow (half_only: half duplex only; ring: the only ones on a ring topology), and a
 * refusal names the algorithm and the rule. Then the cases the flags were drawn for. */
void test_algorithm_flags(void)
{
    xfer_algo_info_t info;
    xfer_config_t *c = NULL;
    unsigned flags;
    int n = 0, i, ring, full;

    UCHECK(xfer_algorithm_count(&n) == XFER_SUCCESS && n > 0, "no algorithms");
    for (i = 0; i < n; i++) {
        UCHECK(xfer_algorithm_info(i, &info) == XFER_SUCCESS &&
                   xfer_algorithm_flags(i, &flags) == XFER_SUCCESS,
               "algorithm %d", i);
        for (ring = 0; ring < 2; ring++)
            for (full = 0; full < 2; full++) {
                const int half_bad = full && (flags & XFER_ALGO_HALF_ONLY);
                const int ring_bad = ring && !(flags & XFER_ALGO_RING);
                xfer_status_t st;
                write_channel("algo.yaml", ring, full, info.name);
                st = xfer_config_load("algo.yaml", &c);
                checks++;
                UCHECK((st == XFER_SUCCESS) == !(half_bad || ring_bad),
                       "%s, %s topology, %s duplex: %s", info.name,
                       ring ? "ring" : "fully connected", full ? "full" : "half",
                       st == XFER_SUCCESS ? "loaded" : xfer_last_error());
                if (st != XFER_SUCCESS)
                    UCHECK(strstr(xfer_last_error(), info.name) &&
                               strstr(xfer_last_error(), half_bad
                                                             ? "moves data one way only"
                                                             : "needs a fully connected topology"),
                           "%s: %s", info.name, xfer_last_error());
                xfer_config_free(&c);
            }
    }
    /* what the flags must say for the algorithms they were drawn for */
    write_channel("algo.yaml", 0, 1, "fc_half");
    UCHECK(xfer_config_load("algo.yaml", &c) == XFER_ERR_CONFIG, "fc_half in full duplex");
    xfer_config_free(&c);
    write_channel("algo.yaml", 1, 0, "native");
    UCHECK(xfer_config_load("algo.yaml", &c) == XFER_ERR_CONFIG, "native on a ring");
    xfer_config_free(&c);
    write_channel("algo.yaml", 1, 0, "root_gather");
    UCHECK(xfer_config_load("algo.yaml", &c) == XFER_ERR_CONFIG, "root_gather on a ring");
    xfer_config_free(&c);
    write_channel("algo.yaml", 1, 1, "ring_full");
    UCHECK(xfer_config_load("algo.yaml", &c) == XFER_SUCCESS, "ring_full on a ring: %s",
           xfer_last_error());
    xfer_config_free(&c);
    write_channel("algo.yaml", 1, 0, "ring_half");
    UCHECK(xfer_config_load("algo.yaml", &c) == XFER_SUCCESS, "ring_half on a ring: %s",
           xfer_last_error());
    xfer_config_free(&c);
    write_channel("algo.yaml", 1, 1, "auto");
    UCHECK(xfer_config_load("algo.yaml", &c) == XFER_SUCCESS, "auto on a ring: %s",
           xfer_last_error());
    xfer_config_free(&c);
    checks += 6;
}
