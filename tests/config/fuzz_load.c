/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target of the workflow-file loader (xfer_config_load_buffer), which every component,
 * xfer-run and xferd run on a file a user wrote. Besides crashes, sanitizer reports, leaks and
 * hangs, it aborts when the loader's promises break:
 *   - failure: no configuration, XFER_ERR_CONFIG or XFER_ERR_NO_MEMORY, and a report of at most
 *     XFER_CONFIG_MAX_ERRORS lines "fuzz.yaml:<line>:<col>: ..." in file order, then at most one
 *     "... and N more errors" (or one "fuzz.yaml: ..." line for a file too large);
 *   - success: the effective configuration loads again and prints the same text.
 * Built with clang -fsanitize=fuzzer,address,undefined by tests/config/tests.cmake. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/config.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char name[] = "fuzz.yaml";

static void fail(const char *what, const char *text)
{
    fprintf(stderr, "fuzz_load: %s\n%s\n", what, text ? text : "");
    abort();
}

/* The report of a failed load: its lines, their positions in file order, the tail. */
static void check_report(const char *report)
{
    const size_t nlen = strlen(name);
    const char *line = report;
    long prev_line = 0, prev_col = 0;
    int n = 0;

    if (!*report)
        fail("an error without a message", NULL);
    while (line && *line) {
        const char *eol = strchr(line, '\n');
        if (strncmp(line, "... and ", 8) == 0) {
            if (n != XFER_CONFIG_MAX_ERRORS || (eol && eol[1]))
                fail("\"... and N more\" before the limit or not last", report);
        } else {
            char *end;
            long l, c;
            if (strncmp(line, name, nlen) != 0 || line[nlen] != ':')
                fail("a line that does not name the file", report);
            l = strtol(line + nlen + 1, &end, 10);
            if (*end == ' ' && n == 0 && !eol)
                return; /* "fuzz.yaml: larger than ...": one line, no position */
            if (*end != ':' || l < 1)
                fail("a line without a line number", report);
            c = strtol(end + 1, &end, 10);
            if (*end != ':' || c < 1)
                fail("a line without a column", report);
            if (l < prev_line || (l == prev_line && c < prev_col))
                fail("errors out of file order", report);
            prev_line = l;
            prev_col = c;
            if (++n > XFER_CONFIG_MAX_ERRORS)
                fail("more lines than XFER_CONFIG_MAX_ERRORS", report);
        }
        line = eol ? eol + 1 : NULL;
    }
}

/* The effective configuration of @p c, as text (malloc'd). */
static char *print(const xfer_config_t *c, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);

    if (!f)
        abort();
    if (xfer_config_print(c, f) != XFER_SUCCESS)
        fail("xfer_config_print failed", NULL);
    if (fclose(f) != 0)
        abort();
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xfer_config_t *c = NULL, *back = NULL;
    char *t1, *t2;
    size_t n1, n2;
    xfer_status_t st;

    st = xfer_config_load_buffer(name, data, size, &c);
    if (st != XFER_SUCCESS) {
        if (c)
            fail("a configuration on failure", NULL);
        if (st != XFER_ERR_CONFIG && st != XFER_ERR_NO_MEMORY)
            fail(xfer_status_name(st), xfer_last_error());
        if (st == XFER_ERR_CONFIG)
            check_report(xfer_last_error());
        return 0;
    }
    if (!c)
        fail("success without a configuration", NULL);
    t1 = print(c, &n1);
    st = xfer_config_load_buffer(name, t1, n1, &back);
    if (st != XFER_SUCCESS)
        fail("the effective configuration does not load", xfer_last_error());
    t2 = print(back, &n2);
    if (n1 != n2 || memcmp(t1, t2, n1) != 0) {
        fprintf(stderr, "%s\n----\n%s\n", t1, t2);
        fail("print -> load -> print differs", NULL);
    }
    free(t1);
    free(t2);
    xfer_config_free(&c);
    xfer_config_free(&back);
    return 0;
}
