/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-info: version, MPI flavour and the algorithm registry with each algorithm's flags. Runs
 * without mpiexec. */
#include <stdio.h>

#include <xfer/xfer.h>

#include "common/cli.h"

/* The names of the flags set in @p flags, space-separated ("-" for none). */
static void print_flags(unsigned flags)
{
    const char *name;
    unsigned f;
    int any = 0;

    for (f = 1; f != 0 && f <= XFER_ALGO_FLAGS_ALL; f <<= 1)
        if ((flags & f) && xfer_algorithm_flag_info(f, &name, NULL) == XFER_SUCCESS)
            printf("%s%s", any++ ? " " : "", name);
    fputs(any ? "\n" : "-\n", stdout);
}

static void usage(void)
{
    printf("usage: xfer-info [-h|--help] [--version]\n"
           "The libxfer version, the MPI flavour it was built for and the algorithm registry\n"
           "with each algorithm's flags. Runs without mpiexec.\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};
    int n = 0, i, c;
    unsigned flags, f;
    xfer_algo_info_t info;
    const char *name, *meaning;

    opterr = 0;
    while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage();
            return 0;
        }
        if (c == 'V') {
            xfer_cli_version("xfer-info");
            return 0;
        }
        xfer_cli_bad_option("xfer-info", c, argv);
    }
    if (optind < argc)
        xfer_cli_usage_error("xfer-info", "unexpected argument \"%s\"", argv[optind]);

    if (xfer_algorithm_count(&n) != XFER_SUCCESS)
        return 1;
    printf("libxfer %s (built for %s)\n\nalgorithms (XFER_ALGORITHM / YAML `algorithm:`):\n",
           XFER_VERSION_STRING, XFER_MPI_FLAVOR);
    printf("  %-12s %s\n", "auto", "cheapest candidate under the alpha-beta model (default)");
    for (i = 0; i < n; i++) {
        if (xfer_algorithm_info(i, &info) != XFER_SUCCESS ||
            xfer_algorithm_flags(i, &flags) != XFER_SUCCESS)
            return 1;
        printf("  %-12s %s\n  %-12s restrictions: %s\n  %-12s flags: ", info.name, info.summary, "",
               info.restrictions, "");
        print_flags(flags);
    }
    printf("\nflags:\n");
    for (f = 1; f != 0 && f <= XFER_ALGO_FLAGS_ALL; f <<= 1)
        if (xfer_algorithm_flag_info(f, &name, &meaning) == XFER_SUCCESS)
            printf("  %-12s %s\n", name, meaning);
    printf("\nenvironment: XFER_ALGORITHM, XFER_FALLBACK=warn|error, XFER_CHECK=1, "
           "XFER_TIMEOUT_MS, XFER_TRACE=1|2, XFER_ALPHA, XFER_BETA\n");
    return 0;
}
