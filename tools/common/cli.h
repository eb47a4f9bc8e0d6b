/* SPDX-License-Identifier: BSD-3-Clause */
/* The command line every libxfer program shares (docs/tools.md): options by getopt_long;
 * -h/--help prints the usage to stdout and exits 0; --version prints
 * "PROG (libxfer X.Y.Z, MPI flavour F)" and exits 0; a usage error prints one line naming the
 * problem, "(see PROG --help)", to stderr and exits 2. MPI programs parse their options before
 * MPI_Init, so --help and --version need no launcher. */
#ifndef XFER_TOOLS_CLI_H
#define XFER_TOOLS_CLI_H

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/version.h>

#define XFER_CLI_USAGE 2 /* the exit status of a usage error */

/* The optstring prefix that makes getopt_long report a missing value as ':' (with opterr = 0,
 * the messages are xfer_cli_bad_option's). */
#define XFER_CLI_OPTS ":"

static inline void xfer_cli_version(const char *prog)
{
    printf("%s (libxfer %s, MPI flavour %s)\n", prog, XFER_VERSION_STRING, XFER_MPI_FLAVOR);
}

/* A usage error in the program's own words: one line, exit 2. */
static inline void xfer_cli_usage_error(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
static inline void xfer_cli_usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see %s --help)\n", prog);
    exit(XFER_CLI_USAGE);
}

/* getopt_long returned ':' or '?' (unknown option, missing value, a value where none goes):
 * say which, exit 2. */
static inline void xfer_cli_bad_option(const char *prog, int c, char *const argv[])
    __attribute__((noreturn));
static inline void xfer_cli_bad_option(const char *prog, int c, char *const argv[])
{
    const char *arg = argv[optind - 1];
    const int n = (int) strcspn(arg, "=");
    if (c == ':')
        xfer_cli_usage_error(prog, "%s needs a value", arg);
    if (strncmp(arg, "--", 2) == 0 && optopt)
        xfer_cli_usage_error(prog, "%.*s takes no value", n, arg);
    if (strncmp(arg, "--", 2) != 0 && optopt)
        xfer_cli_usage_error(prog, "unknown option -%c", optopt);
    xfer_cli_usage_error(prog, "unknown option %.*s", n, arg);
}

/* An integer option value in [lo, hi], or a usage error naming the option. */
static inline long xfer_cli_long(const char *prog, const char *opt, const char *val, long lo,
                                 long hi)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(val, &end, 10);
    if (errno || end == val || *end || v < lo || v > hi)
        xfer_cli_usage_error(prog, "%s: expected an integer in %ld..%ld, got \"%s\"", opt, lo, hi,
                             val);
    return v;
}

/* A number option value in [lo, hi], or a usage error naming the option. */
static inline double xfer_cli_double(const char *prog, const char *opt, const char *val, double lo,
                                     double hi)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(val, &end);
    if (errno || end == val || *end || !(v >= lo) || !(v <= hi))
        xfer_cli_usage_error(prog, "%s: expected a number in %g..%g, got \"%s\"", opt, lo, hi, val);
    return v;
}

#endif
