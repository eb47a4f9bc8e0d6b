/* SPDX-License-Identifier: BSD-3-Clause */
/* A component that meets an error and calls MPI_Abort at once, printing nothing (what a
 * check macro or Python's exit handler does): the error must still reach the user, through
 * xferd and xfer-run (tests/runtime/channels.cmake, workflow.abort_after_error). Plays the
 * receiving component of a workflow whose first channel has no dataset "nosuch". */
#include <mpi.h>
#include <stdio.h>

#include <xfer/xfer.h>

int main(int argc, char **argv)
{
    const xfer_config_t *cfg;
    xfer_channel_t *ch;
    xfer_t *x;
    char buf[8];

    MPI_Init(&argc, &argv);
    if (xfer_init(NULL, NULL, MPI_COMM_WORLD, &x) != XFER_SUCCESS ||
        xfer_config_of(x, &cfg, NULL) != XFER_SUCCESS ||
        xfer_channel_open(x, cfg->channels[0].name, &ch) != XFER_SUCCESS) {
        fprintf(stderr, "abort_after_error: set-up failed: %s\n", xfer_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (xfer_get(ch, "nosuch", buf, sizeof(buf), NULL) != XFER_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 3); /* not a word of its own */
    fprintf(stderr, "abort_after_error: xfer_get of an unknown dataset succeeded\n");
    MPI_Finalize();
    return 1;
}
