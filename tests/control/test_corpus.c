/* SPDX-License-Identifier: BSD-3-Clause */
/* The malformed-message corpus against a running xferd: each file of tests/control/corpus
 * (NN-EXPECT-what.bin, written by gen_corpus.py) goes raw over a fresh DEALER socket; xferd
 * must answer with err EXPECT ("ok": a success; "drop": no answer, the connection is cut by
 * ZMQ_MAXMSGSIZE), and afterwards still answer a valid status and exit cleanly on SIGTERM.
 *   test_corpus --xferd PATH --corpus DIR */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

#define TOKEN      "corpus-token-0123456789abcdef"
#define REPLY_WAIT 10000 /* bound on an answer (a sanitizer build is slow) */
#define DROP_WAIT  300   /* how long an answer that must not come is waited for */

static const char *workflow = "workflow: w\n"
                              "control: {heartbeat_ms: 1000}\n"
                              "components:\n"
                              "  - {name: a, nprocs: 1, cmd: [x]}\n"
                              "  - {name: b, nprocs: 1, cmd: [x]}\n"
                              "channels:\n"
                              "  - {name: c, from: a, to: b, datasets: [{name: d, type: float64, "
                              "dims: [4]}]}\n";

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t) n + 1);
        if (buf && fread(buf, 1, (size_t) n, f) != (size_t) n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t) n;
    }
    fclose(f);
    return buf;
}

/* Send one corpus file and check the answer. */
static void run_case(const fx_daemon_t *d, const char *dir, const char *name)
{
    char path[1024], expect[32] = "";
    const char *dash = strchr(name, '-'), *dash2 = dash ? strchr(dash + 1, '-') : NULL;
    unsigned char *buf;
    size_t len = 0;
    fx_raw_t r = {0};
    xfer_ctl_msg_t *m;

    if (!dash || !dash2 || dash2 - dash - 1 >= (long) sizeof(expect)) {
        CHECK(0, "corpus file name %s is not NN-EXPECT-what.bin", name);
        return;
    }
    memcpy(expect, dash + 1, (size_t) (dash2 - dash - 1));
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    buf = slurp(path, &len);
    if (!buf) {
        CHECK(0, "cannot read %s", path);
        return;
    }
    if (fx_raw_open(&r, d->endpoint) != 0 || fx_raw_send_bytes(&r, buf, len, 0) != 0) {
        CHECK(0, "%s: cannot send", name);
        fx_raw_close(&r);
        free(buf);
        return;
    }
    m = fx_raw_recv(&r, strcmp(expect, "drop") == 0 ? DROP_WAIT : REPLY_WAIT);
    if (strcmp(expect, "drop") == 0) {
        CHECK(!m, "%s: answered, expected the connection to be dropped", name);
    } else if (!m) {
        CHECK(0, "%s: no answer within %d ms", name, REPLY_WAIT);
    } else {
        const char *err = xfer_ctl_str(m, "err", "");
        int ok = xfer_ctl_bool(m, "ok", 0);
        CHECK(strcmp(xfer_ctl_op(m), "reply") == 0, "%s: answered with \"%s\"", name,
              xfer_ctl_op(m));
        CHECK(xfer_ctl_validate(m) == XFER_SUCCESS, "%s: invalid reply: %s", name,
              xfer_last_error());
        if (strcmp(expect, "ok") == 0)
            CHECK(ok, "%s: err %s: %s", name, err, xfer_ctl_str(m, "msg", ""));
        else
            CHECK(!ok && strcmp(err, expect) == 0, "%s: got %s (%s), expected err %s", name,
                  ok ? "ok" : err, xfer_ctl_str(m, "msg", ""), expect);
        /* requests that decode carry id 7: the answer must name it */
        if (strcmp(expect, "ok") == 0 || strcmp(expect, "version") == 0 ||
            strcmp(expect, "denied") == 0 || strcmp(expect, "unknown") == 0)
            CHECK(xfer_ctl_int(m, "id", -1) == 7, "%s: reply id %lld", name,
                  (long long) xfer_ctl_int(m, "id", -1));
        printf("  %-40s %s: %s\n", name, ok ? "ok" : err, xfer_ctl_str(m, "msg", ""));
    }
    if (!m && strcmp(expect, "drop") == 0)
        printf("  %-40s dropped\n", name);
    xfer_ctl_msg_free(&m);
    fx_raw_close(&r);
    free(buf);
}

/* A valid status request over a fresh socket must still be answered. */
static void check_alive(const fx_daemon_t *d, const char *after)
{
    fx_raw_t r = {0};
    xfer_ctl_msg_t *q = NULL, *m = NULL;

    if (fx_raw_open(&r, d->endpoint) != 0)
        return;
    xfer_ctl_msg_new("status", &q);
    xfer_ctl_set_int(q, "id", 99);
    xfer_ctl_set_str(q, "wf", "w");
    xfer_ctl_set_str(q, "tok", TOKEN);
    fx_raw_send(&r, q);
    m = fx_raw_recv(&r, REPLY_WAIT);
    CHECK(m && xfer_ctl_bool(m, "ok", 0) && xfer_ctl_int(m, "id", 0) == 99,
          "no valid status after %s", after);
    xfer_ctl_msg_free(&q);
    xfer_ctl_msg_free(&m);
    fx_raw_close(&r);
}

int main(int argc, char **argv)
{
    const char *xferd = NULL, *dir = NULL;
    fx_daemon_t d;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    DIR *dp;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--xferd") == 0)
            xferd = argv[i + 1];
        else if (strcmp(argv[i], "--corpus") == 0)
            dir = argv[i + 1];
    }
    if (!xferd || !dir) {
        fprintf(stderr, "usage: test_corpus --xferd PATH --corpus DIR\n");
        return 2;
    }
    dp = opendir(dir);
    if (!dp) {
        perror(dir);
        return 1;
    }
    while ((e = readdir(dp)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".bin") == 0) {
            names = realloc(names, (n + 1) * sizeof(*names));
            names[n++] = strdup(e->d_name);
        }
    }
    closedir(dp);
    qsort(names, n, sizeof(*names), by_name);
    CHECK(n >= 30, "only %zu corpus files in %s", n, dir);

    if (fx_setup(&d, xferd, workflow, TOKEN) != 0 || fx_start(&d, NULL) != 0) {
        fx_failures++;
        fx_cleanup(&d);
        return 1;
    }
    printf("xferd at %s: %zu corpus files\n", d.endpoint, n);
    for (size_t i = 0; i < n; i++) {
        run_case(&d, dir, names[i]);
        check_alive(&d, names[i]);
    }
    /* more than one frame */
    {
        fx_raw_t r = {0};
        xfer_ctl_msg_t *m;
        if (fx_raw_open(&r, d.endpoint) == 0) {
            fx_raw_send_bytes(&r, "\x80", 1, 1);
            fx_raw_send_bytes(&r, "\x80", 1, 0);
            m = fx_raw_recv(&r, REPLY_WAIT);
            CHECK(m && strcmp(xfer_ctl_str(m, "err", ""), "protocol") == 0,
                  "two frames: expected err protocol");
            xfer_ctl_msg_free(&m);
        }
        fx_raw_close(&r);
    }
    check_alive(&d, "everything");
    fx_stop(&d, SIGTERM);
    fx_cleanup(&d);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (fx_failures) {
        fprintf(stderr, "test_corpus: %d checks failed\n", fx_failures);
        return 1;
    }
    printf("test_corpus: all checks passed\n");
    return 0;
}
