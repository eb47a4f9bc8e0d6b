/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-info: version, MPI flavour and the algorithm registry. Runs without mpiexec. */
#include <stdio.h>

#include <xfer/xfer.h>

int main(void)
{
    int n = 0, i;
    xfer_algo_info_t info;

    if (xfer_algorithm_count(&n) != XFER_SUCCESS)
        return 1;
    printf("libxfer %s (built for %s)\n\nalgorithms (XFER_ALGORITHM / YAML `algorithm:`):\n",
           XFER_VERSION_STRING, XFER_MPI_FLAVOR);
    printf("  %-12s %s\n", "auto", "cheapest candidate under the alpha-beta model (default)");
    for (i = 0; i < n; i++) {
        if (xfer_algorithm_info(i, &info) != XFER_SUCCESS)
            return 1;
        printf("  %-12s %s\n  %-12s restrictions: %s\n", info.name, info.summary, "",
               info.restrictions);
    }
    printf("\nenvironment: XFER_ALGORITHM, XFER_FALLBACK=warn|error, XFER_CHECK=1, "
           "XFER_TIMEOUT_MS, XFER_TRACE=1|2, XFER_ALPHA, XFER_BETA\n");
    return 0;
}
