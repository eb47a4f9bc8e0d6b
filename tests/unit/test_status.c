/* SPDX-License-Identifier: BSD-3-Clause */
/* The error text (core/status.c): a caller that adds its context to the words of the call that
 * failed passes xfer_last_error() itself as an argument; the new text must hold both, once
 * each, whole (xfer-chaos seed 52 on Open MPI printed "channel ch3: publishing the port with
 * xferd: channel ch3: publishing the port with xferd: n/xferd.sock: ..." when the formatting
 * wrote over the words it was reading). Texts too long for the buffer are cut, never run over.
 * The library reports its own version and file (core/version.c). */
#include <string.h>

#include <xfer/version.h>

#include "../support/unit.h"
#include "core/core.h"

static long checks;

static void wraps_its_own_words(void)
{
    const char *inner =
        "xferd at ipc:///tmp/run/xferd.sock: no reply to \"publish\" within 8000 ms";
    char want[512];
    xfer_status_t st;

    st = xfer_err_text(XFER_ERR_TIMEOUT, inner);
    checks++;
    UCHECK(st == XFER_ERR_TIMEOUT && strcmp(xfer_last_error(), inner) == 0, "set: \"%s\"",
           xfer_last_error());
    st = xfer_err_raw(XFER_ERR_TIMEOUT, "channel %s: publishing the port with xferd: %s", "ch3",
                      xfer_last_error());
    snprintf(want, sizeof(want), "channel ch3: publishing the port with xferd: %s", inner);
    checks++;
    UCHECK(st == XFER_ERR_TIMEOUT && strcmp(xfer_last_error(), want) == 0,
           "wrapped: \"%s\", expected \"%s\"", xfer_last_error(), want);
    /* twice: the outer context around the wrapped text */
    st = xfer_err_raw(XFER_ERR_TIMEOUT, "%s (component alpha)", xfer_last_error());
    checks++;
    UCHECK(strstr(xfer_last_error(), want) == xfer_last_error() &&
               strcmp(xfer_last_error() + strlen(want), " (component alpha)") == 0,
           "wrapped twice: \"%s\"", xfer_last_error());
}

static void long_words_are_cut(void)
{
    char inner[3000];
    size_t n;

    memset(inner, 'x', sizeof(inner) - 1);
    inner[sizeof(inner) - 1] = '\0';
    (void) xfer_err_raw(XFER_ERR_INVALID_ARG, "%s", inner);
    n = strlen(xfer_last_error());
    checks++;
    UCHECK(n > 0 && n < sizeof(inner) - 1, "a text longer than the buffer: %zu characters", n);
    (void) xfer_err_raw(XFER_ERR_INVALID_ARG, "context: %s", xfer_last_error());
    checks++;
    UCHECK(strncmp(xfer_last_error(), "context: xxx", 12) == 0 && strlen(xfer_last_error()) == n,
           "a long text wrapped: %.40s... (%zu characters)", xfer_last_error(),
           strlen(xfer_last_error()));
}

/* Linked statically here, so the "library" file is this program: dladdr still names it. */
static void says_which_library(void)
{
    const char *v = NULL, *f = NULL, *path = NULL;
    checks++;
    UCHECK(xfer_library_version(&v, &f) == XFER_SUCCESS && strcmp(v, XFER_VERSION_STRING) == 0 &&
               strcmp(f, XFER_MPI_FLAVOR) == 0,
           "xfer_library_version: %s %s", v ? v : "(null)", f ? f : "(null)");
    checks++;
    UCHECK(xfer_library_path(&path) == XFER_SUCCESS && path && strstr(path, "test_status"),
           "xfer_library_path: %s", path ? path : "(null)");
    checks++;
    UCHECK(xfer_library_path(NULL) == XFER_ERR_INVALID_ARG, "xfer_library_path(NULL)");
}

int main(void)
{
    wraps_its_own_words();
    long_words_are_cut();
    says_which_library();
    return unit_finish("test_status", checks);
}
