/* SPDX-License-Identifier: BSD-3-Clause */
/* The workflow-file loader when memory runs out: for each allocation the loader makes (malloc,
 * calloc and realloc are wrapped at link time: -Wl,--wrap; libyaml's own are not), a load in which
 * that one allocation fails must return XFER_ERR_NO_MEMORY, or the status of the load without a
 * failure with its whole report (or the report's first 1023 bytes, when the buffer of a long one
 * is what failed: never a report that lacks an error), with no configuration, a message, and
 * nothing leaked (ctest runs this under valgrind and in the sanitizer tree).
 *
 *   test_config_oom FILE...   each FILE, valid or not */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/config.h>

#include "../support/unit.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long nalloc;  /* allocations counted since the last reset */
static long fail_at; /* the one that fails (1-based), 0: none */

static int failing(void)
{
    return ++nalloc == fail_at;
}

void *__wrap_malloc(size_t n)
{
    return failing() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return failing() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return failing() ? NULL : __real_realloc(p, n);
}

static long checks;

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        if (f)
            fclose(f);
        return NULL;
    }
    buf = malloc((size_t) n + 1);
    if (buf && fread(buf, 1, (size_t) n, f) != (size_t) n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t) n;
    return buf;
}

static void check_file(const char *path)
{
    xfer_config_t *c = NULL;
    xfer_status_t want, st;
    size_t len = 0;
    char *text = read_file(path, &len), *report;
    long total, k;

    UCHECK(text != NULL, "cannot read %s", path);
    if (!text)
        return;
    fail_at = 0;
    nalloc = 0;
    want = xfer_config_load_buffer(path, text, len, &c);
    total = nalloc;
    report = strdup(xfer_last_error());
    xfer_config_free(&c);
    UCHECK(want == XFER_SUCCESS || want == XFER_ERR_CONFIG, "%s: %s", path, xfer_last_error());
    for (k = 1; k <= total; k++) {
        nalloc = 0;
        fail_at = k;
        st = xfer_config_load_buffer(path, text, len, &c);
        fail_at = 0;
        checks++;
        UCHECK(st == XFER_ERR_NO_MEMORY || st == want, "%s, allocation %ld of %ld failing: %s (%s)",
               path, k, total, xfer_status_name(st), xfer_last_error());
        UCHECK((st == XFER_SUCCESS) == (c != NULL), "%s, allocation %ld: configuration %p", path, k,
               (void *) c);
        UCHECK(st == XFER_SUCCESS || xfer_last_error()[0], "%s, allocation %ld: no message", path,
               k);
        UCHECK(st != XFER_ERR_CONFIG || strcmp(xfer_last_error(), report) == 0 ||
                   (strlen(xfer_last_error()) == 1023 &&
                    strncmp(xfer_last_error(), report, 1023) == 0),
               "%s, allocation %ld: an incomplete report:\n%s", path, k, xfer_last_error());
        xfer_config_free(&c);
    }
    printf("%s: %ld allocations, each failed once\n", path, total);
    free(report);
    free(text);
}

int main(int argc, char **argv)
{
    int i;

    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE...\n", argv[0]);
        return 2;
    }
    for (i = 1; i < argc; i++)
        check_file(argv[i]);
    return unit_finish("test_config_oom", checks);
}
