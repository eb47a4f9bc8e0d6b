/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: starting a run's helpers, ompi-server and xferd, and waiting until they serve. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"

/* Start ompi-server and wait (bounded) for its URI file. */
int start_server(runner_t *r, const plan_t *pl, int devnull)
{
    int64_t deadline;

    unlink(pl->uri);
    if (spawn(pl->server.v, devnull, devnull, -1, &r->server) != 0)
        return -1;
    deadline = now_ms() + SERVER_WAIT_MS;
    for (;;) {
        struct pollfd pfd = {sig_pipe[0], POLLIN, 0};
        struct stat sb;
        FILE *f;

        /* ready when the URI line is complete */
        if (stat(pl->uri, &sb) == 0 && sb.st_size > 0 && (f = fopen(pl->uri, "r")) != NULL) {
            int c, last = EOF;
            while ((c = fgetc(f)) != EOF)
                last = c;
            fclose(f);
            if (last == '\n')
                return 0;
        }
        reap(r);
        if (r->server == 0) {
            run_error("ompi-server exited before writing %s", pl->uri);
            return -1;
        }
        if (now_ms() >= deadline) {
            run_error("ompi-server did not write %s within %d s", pl->uri, SERVER_WAIT_MS / 1000);
            return -1;
        }
        if (poll(&pfd, 1, 20) > 0) {
            handle_signals(r);
            if (r->stop_at)
                return -1;
        }
    }
}

/* A fresh workflow token, readable by the owner only. */
static int write_token(const char *path)
{
    char tok[65];
    int fd;

    if (xfer_ctl_make_token(tok, 32) != XFER_SUCCESS) {
        run_error("cannot make a workflow token: %s", xfer_last_error());
        return -1;
    }
    unlink(path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, tok, 64) != 64 || write(fd, "\n", 1) != 1) {
        run_error("cannot write the workflow token %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return close(fd) == 0 ? 0 : -1;
}

/* Start xferd when the plan has one and wait (bounded) for its ready file; then connect. */
int start_xferd(runner_t *r, const plan_t *pl, int devnull)
{
    xfer_ctl_opts_t co;
    char *token = NULL;
    int64_t deadline;
    int rc;

    if (!pl->endpoint)
        return 0;
    if (pl->xferd.n) {
        if (pl->make_token && write_token(pl->token_file) != 0)
            return -1;
        unlink(pl->ready);
        /* a journal of an earlier run in a reused run directory is not this run's state */
        if (pl->journal && unlink(pl->journal) != 0 && errno != ENOENT) {
            run_error("cannot remove the old journal %s: %s", pl->journal, strerror(errno));
            return -1;
        }
        if (spawn(pl->xferd.v, devnull, devnull, -1, &r->xferd) != 0)
            return -1;
        deadline = now_ms() + SERVER_WAIT_MS;
        for (;;) {
            struct pollfd pfd = {sig_pipe[0], POLLIN, 0};
            if (access(pl->ready, F_OK) == 0) /* written whole, then renamed */
                break;
            reap(r);
            if (r->xferd == 0) {
                run_error("xferd exited before it was ready (see its messages above)");
                return -1;
            }
            if (now_ms() >= deadline) {
                run_error("xferd did not write %s within %d s", pl->ready, SERVER_WAIT_MS / 1000);
                return -1;
            }
            if (poll(&pfd, 1, 20) > 0) {
                handle_signals(r);
                if (r->stop_at)
                    return -1;
            }
        }
    }
    if (xfer_ctl_read_token(pl->token_file, &token) != XFER_SUCCESS) {
        run_error("%s", xfer_last_error());
        return -1;
    }
    co.endpoint = pl->endpoint;
    co.workflow = pl->cfg->workflow;
    co.token = token;
    co.server_key = pl->cfg->curve_public_key;
    rc = xfer_ctl_connect(&co, &r->ctl) == XFER_SUCCESS ? 0 : -1;
    if (rc != 0)
        run_error("cannot reach xferd at %s: %s", pl->endpoint, xfer_last_error());
    free(token);
    return rc;
}
