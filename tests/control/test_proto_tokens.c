/* SPDX-License-Identifier: BSD-3-Clause */
/* Token files (generated tokens; a file's mode, size, blank and NUL content) and the protocol's
 * error codes against the status codes, both ways. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_proto.h"

static void write_token(const char *path, const char *text, size_t n, mode_t mode)
{
    FILE *f;

    unlink(path);
    f = fopen(path, "w");
    if (!f || fwrite(text, 1, n, f) != n) {
        CHECK(0, "cannot write %s", path);
        if (f)
            fclose(f);
        return;
    }
    fclose(f);
    chmod(path, mode);
}

static void expect_token(const char *path, const char *want_token, const char *want_err)
{
    char *tok = NULL;
    xfer_status_t st = xfer_ctl_read_token(path, &tok);

    if (want_token) {
        CHECK(st == XFER_SUCCESS && tok && strcmp(tok, want_token) == 0, "token: %s: %s",
              xfer_status_name(st), xfer_last_error());
    } else {
        CHECK(st == XFER_ERR_DENIED && !tok, "token refused: %s", xfer_status_name(st));
        CHECK(strstr(xfer_last_error(), path) && strstr(xfer_last_error(), want_err),
              "token error \"%s\" lacks the path or \"%s\"", xfer_last_error(), want_err);
    }
    free(tok);
}

void test_tokens(void)
{
    char dir[] = "/tmp/xfer-token-test.XXXXXX", path[128], a[65], b[65], big[1100];

    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof(path), "%s/token", dir);

    OK(xfer_ctl_make_token(a, 32));
    OK(xfer_ctl_make_token(b, 32));
    CHECK(strlen(a) == 64 && strspn(a, "0123456789abcdef") == 64, "hex token: %s", a);
    CHECK(strcmp(a, b) != 0, "two tokens differ");
    CHECK(xfer_ctl_make_token(a, 0) == XFER_ERR_INVALID_ARG, "0 bytes");

    write_token(path, "0123456789abcdef\n", 17, 0600);
    expect_token(path, "0123456789abcdef", NULL);
    write_token(path, "0123456789abcdef\n\n", 18, 0600); /* one newline is dropped */
    expect_token(path, "0123456789abcdef\n", NULL);
    chmod(path, 0644);
    expect_token(path, NULL, "group or others");
    chmod(path, 0640);
    expect_token(path, NULL, "mode 0640");
    chmod(path, 0604);
    expect_token(path, NULL, "group or others");
    write_token(path, "", 0, 0600);
    expect_token(path, NULL, "empty");
    write_token(path, "\n", 1, 0600);
    expect_token(path, NULL, "empty");
    write_token(path, "0123456789abcde", 15, 0600);
    expect_token(path, NULL, "too short");
    memset(big, 't', sizeof(big));
    write_token(path, big, XFER_CTL_MAX_STR, 0600);
    big[XFER_CTL_MAX_STR] = '\0';
    expect_token(path, big, NULL);
    write_token(path, big, XFER_CTL_MAX_STR + 1, 0600);
    expect_token(path, NULL, "longer than 1024");
    write_token(path, "0123456789\0abcdef", 17, 0600);
    expect_token(path, NULL, "NUL");
    unlink(path);
    expect_token(path, NULL, "cannot open");
    rmdir(dir);
}

void test_errs(void)
{
    static const struct {
        const char *name;
        xfer_status_t st;
    } t[] = {{"protocol", XFER_ERR_PROTOCOL},  {"version", XFER_ERR_PROTOCOL},
             {"denied", XFER_ERR_DENIED},      {"unknown", XFER_ERR_NOT_FOUND},
             {"order", XFER_ERR_PROTOCOL},     {"exists", XFER_ERR_STATE},
             {"failed", XFER_ERR_PEER_FAILED}, {"timeout", XFER_ERR_TIMEOUT},
             {"busy", XFER_ERR_STATE},         {"internal", XFER_ERR_INTERNAL}};

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        CHECK(xfer_ctl_err_status(t[i].name) == t[i].st, "err %s", t[i].name);
    CHECK(xfer_ctl_err_status("no-such-code") == XFER_ERR_PROTOCOL, "unknown code");
    CHECK(xfer_ctl_err_status(NULL) == XFER_ERR_PROTOCOL, "NULL code");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_PEER_FAILED), "failed") == 0, "failed");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_DENIED), "denied") == 0, "denied");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_NOT_FOUND), "unknown") == 0, "unknown");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_TIMEOUT), "timeout") == 0, "timeout");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_PROTOCOL), "protocol") == 0, "protocol");
    CHECK(strcmp(xfer_ctl_err_name(XFER_ERR_NO_MEMORY), "internal") == 0, "internal");
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        CHECK(xfer_ctl_err_status(xfer_ctl_err_name(t[i].st)) == t[i].st, "name/status %s",
              t[i].name);
}
