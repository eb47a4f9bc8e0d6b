/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "fixture.h"

#define READY_WAIT_MS 30000 /* bound on xferd's start (a sanitizer build is slow) */

int fx_failures = 0;

int64_t fx_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A short pause inside a bounded wait for a condition (never a wait by itself). */
static void pause_ms(int ms)
{
    struct timespec ts = {0, (long) ms * 1000000L};
    nanosleep(&ts, NULL);
}

static int write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    size_t n = strlen(text);

    if (fd < 0)
        return -1;
    if (write(fd, text, n) != (ssize_t) n) {
        close(fd);
        return -1;
    }
    return close(fd);
}

int fx_setup(fx_daemon_t *d, const char *xferd, const char *yaml, const char *token)
{
    const char *tmp = getenv("TMPDIR");
    char tokline[1100];

    memset(d, 0, sizeof(*d));
    d->xferd = xferd;
    d->pid = -1;
    snprintf(d->dir, sizeof(d->dir), "%s/xferd-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(d->dir)) {
        perror("mkdtemp");
        return -1;
    }
    snprintf(d->cfg, sizeof(d->cfg), "%s/wf.yaml", d->dir);
    snprintf(d->tok_file, sizeof(d->tok_file), "%s/token", d->dir);
    snprintf(d->ready, sizeof(d->ready), "%s/ready", d->dir);
    snprintf(d->log, sizeof(d->log), "%s/xferd.log", d->dir);
    snprintf(d->run_dir, sizeof(d->run_dir), "%s/run", d->dir);
    snprintf(d->journal, sizeof(d->journal), "%s/run/xferd.journal", d->dir);
    snprintf(tokline, sizeof(tokline), "%s\n", token);
    if (write_file(d->cfg, yaml, 0644) != 0 || write_file(d->tok_file, tokline, 0600) != 0) {
        perror("fx_setup");
        return -1;
    }
    return 0;
}

int fx_start(fx_daemon_t *d, const char *const *extra)
{
    const char *argv[32];
    int n = 0, status;
    int64_t deadline;
    FILE *f;

    argv[n++] = d->xferd;
    argv[n++] = "--config";
    argv[n++] = d->cfg;
    argv[n++] = "--token-file";
    argv[n++] = d->tok_file;
    argv[n++] = "--run-dir";
    argv[n++] = d->run_dir;
    argv[n++] = "--ready-file";
    argv[n++] = d->ready;
    for (int i = 0; extra && extra[i] && n < 31; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    unlink(d->ready);
    fflush(NULL);
    d->pid = fork();
    if (d->pid < 0) {
        perror("fork");
        return -1;
    }
    if (d->pid == 0) {
        int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(d->xferd, (char *const *) argv);
        perror("execv");
        _exit(127);
    }
    deadline = fx_now_ms() + READY_WAIT_MS;
    for (;;) {
        struct stat sb;
        if (stat(d->ready, &sb) == 0 && sb.st_size > 0)
            break;
        if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
            fprintf(stderr, "xferd exited (status 0x%x) before it was ready\n", status);
            d->pid = -1;
            fx_dump_log(d);
            return -1;
        }
        if (fx_now_ms() > deadline) {
            fprintf(stderr, "xferd not ready within %d ms\n", READY_WAIT_MS);
            return -1;
        }
        pause_ms(5);
    }
    f = fopen(d->ready, "r");
    if (!f || !fgets(d->endpoint, sizeof(d->endpoint), f)) {
        fprintf(stderr, "cannot read %s\n", d->ready);
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    d->endpoint[strcspn(d->endpoint, "\n")] = '\0';
    return 0;
}

int fx_run(fx_daemon_t *d, const char *const *args)
{
    const char *argv[32];
    int n = 0, status = -1;

    argv[n++] = d->xferd;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    fflush(NULL);
    d->pid = fork();
    if (d->pid < 0)
        return -1;
    if (d->pid == 0) {
        int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(d->xferd, (char *const *) argv);
        _exit(127);
    }
    if (fx_wait_exit(d, 20000, &status) != 0)
        return -1;
    return status;
}

int fx_wait_exit(fx_daemon_t *d, int timeout_ms, int *status)
{
    int64_t deadline = fx_now_ms() + timeout_ms;

    if (d->pid <= 0)
        return -1;
    for (;;) {
        pid_t p = waitpid(d->pid, status, WNOHANG);
        if (p == d->pid) {
            d->pid = -1;
            return 0;
        }
        if (p < 0 || fx_now_ms() > deadline)
            return -1;
        pause_ms(5);
    }
}

int fx_stop(fx_daemon_t *d, int sig)
{
    int status = 0;

    if (d->pid <= 0)
        return -1;
    kill(d->pid, sig);
    if (fx_wait_exit(d, 20000, &status) != 0) {
        CHECK(0, "xferd did not exit within 20 s of signal %d", sig);
        return -1;
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "xferd ended with status 0x%x", status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

void fx_dump_log(const fx_daemon_t *d)
{
    FILE *f = fopen(d->log, "r");
    char line[2048];

    if (!f)
        return;
    fprintf(stderr, "---- %s ----\n", d->log);
    while (fgets(line, sizeof(line), f))
        fputs(line, stderr);
    fclose(f);
}

int fx_log_has(const fx_daemon_t *d, const char *text)
{
    FILE *f = fopen(d->log, "r");
    char line[2048];
    int found = 0;

    if (!f)
        return 0;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, text) != NULL;
    fclose(f);
    return found;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb;
    (void) flag;
    (void) ftw;
    remove(path);
    return 0;
}

void fx_cleanup(fx_daemon_t *d)
{
    int status;

    if (d->pid > 0) {
        kill(d->pid, SIGKILL);
        waitpid(d->pid, &status, 0);
        d->pid = -1;
    }
    if (fx_failures)
        fx_dump_log(d);
    if (d->dir[0])
        nftw(d->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- raw DEALER --------------------------------------------------------------------------- */

int fx_raw_open(fx_raw_t *r, const char *endpoint)
{
    int zero = 0;

    r->ctx = zmq_ctx_new();
    r->sock = r->ctx ? zmq_socket(r->ctx, ZMQ_DEALER) : NULL;
    if (!r->sock || zmq_setsockopt(r->sock, ZMQ_LINGER, &zero, sizeof(zero)) != 0 ||
        zmq_connect(r->sock, endpoint) != 0) {
        fprintf(stderr, "raw DEALER to %s: %s\n", endpoint, zmq_strerror(errno));
        return -1;
    }
    return 0;
}

int fx_raw_send_bytes(fx_raw_t *r, const void *buf, size_t len, int more)
{
    return zmq_send(r->sock, buf, len, more ? ZMQ_SNDMORE : 0) < 0 ? -1 : 0;
}

int fx_raw_send(fx_raw_t *r, const xfer_ctl_msg_t *m)
{
    void *buf;
    size_t len;
    int rc;

    if (xfer_ctl_encode(m, XFER_CTL_MAX_REPLY, &buf, &len) != XFER_SUCCESS)
        return -1;
    rc = fx_raw_send_bytes(r, buf, len, 0);
    free(buf);
    return rc;
}

xfer_ctl_msg_t *fx_raw_recv(fx_raw_t *r, int timeout_ms)
{
    zmq_pollitem_t it = {r->sock, 0, ZMQ_POLLIN, 0};
    xfer_ctl_msg_t *m = NULL;
    zmq_msg_t z;

    if (zmq_poll(&it, 1, timeout_ms) <= 0)
        return NULL;
    zmq_msg_init(&z);
    if (zmq_msg_recv(&z, r->sock, ZMQ_DONTWAIT) >= 0 &&
        xfer_ctl_decode(zmq_msg_data(&z), zmq_msg_size(&z), XFER_CTL_MAX_REPLY, &m) !=
            XFER_SUCCESS) {
        fprintf(stderr, "undecodable message from xferd: %s\n", xfer_last_error());
        xfer_ctl_msg_free(&m);
    }
    zmq_msg_close(&z);
    return m;
}

void fx_raw_close(fx_raw_t *r)
{
    if (r->sock)
        zmq_close(r->sock);
    if (r->ctx)
        zmq_ctx_term(r->ctx);
    r->sock = r->ctx = NULL;
}
