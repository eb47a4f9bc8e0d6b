/* SPDX-License-Identifier: BSD-3-Clause */
/* Does every write to xfer-run's output hold whole lines?
 *
 *   launcher_whole_lines [--launcher-cuts] PREFIX[,PREFIX...] -- COMMAND [ARGS...]
 *
 * Runs COMMAND (xfer-run) with its stdout and stderr on one AF_UNIX SOCK_SEQPACKET socket, which
 * keeps the boundaries of write() calls: each write of COMMAND or of any process that shares
 * its output (xferd, the launcher, the components) arrives as one record. Processes that share
 * a pipe or a terminal see their writes interleaved at exactly these boundaries, so a line
 * written in pieces can be cut by another process's line. Every record must be exactly one
 * line (one newline, at its end) starting with one of the PREFIXes. Prints the offending
 * records and a count; exits 0 when all are whole, 1 otherwise, 2 on a usage or setup error.
 * (A record holding several whole lines is reported too: the launchers' own chunks are what
 * xfer-run is to cut into lines.) --launcher-cuts: a line without a known prefix is counted,
 * not a failure: Open MPI's mpirun passes on its ranks' output in pieces as they come, so in
 * one MPMD launch the ranks' lines may already be cut and mixed when xfer-run reads them. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define RECORD_MAX (1 << 20)

static int has_prefix(const char *rec, size_t len, char *prefixes)
{
    char *save = NULL, *list = strdup(prefixes), *p;
    int ok = 0;

    if (!list)
        return 0;
    for (p = strtok_r(list, ",", &save); p && !ok; p = strtok_r(NULL, ",", &save))
        ok = strlen(p) <= len && memcmp(rec, p, strlen(p)) == 0;
    free(list);
    return ok;
}

static void show(const char *what, const char *rec, size_t len)
{
    printf("%s (%zu bytes): \"", what, len);
    for (size_t i = 0; i < len && i < 300; i++)
        if (rec[i] == '\n')
            fputs("\\n", stdout);
        else
            putchar(rec[i]);
    printf("%s\"\n", len > 300 ? "..." : "");
}

int main(int argc, char **argv)
{
    char *rec;
    long records = 0, bad = 0, cut = 0;
    int sv[2], status = 0, cuts_ok = 0;
    pid_t pid;

    if (argc > 1 && strcmp(argv[1], "--launcher-cuts") == 0) {
        cuts_ok = 1;
        argv++;
        argc--;
    }
    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fprintf(stderr, "usage: launcher_whole_lines [--launcher-cuts] PREFIX[,PREFIX...] -- "
                        "COMMAND [ARGS...]\n");
        return 2;
    }
    rec = malloc(RECORD_MAX);
    if (!rec || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0) {
        fprintf(stderr, "launcher_whole_lines: %s\n", rec ? strerror(errno) : "out of memory");
        return 2;
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "launcher_whole_lines: fork: %s\n", strerror(errno));
        return 2;
    }
    if (pid == 0) {
        close(sv[0]);
        if (dup2(sv[1], 1) < 0 || dup2(sv[1], 2) < 0)
            _exit(127);
        close(sv[1]);
        execvp(argv[3], argv + 3);
        _exit(127);
    }
    close(sv[1]);
    /* until every process holding the socket is gone (xfer-run waits for its descendants) */
    for (;;) {
        ssize_t n = recv(sv[0], rec, RECORD_MAX, 0);
        const char *nl;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        records++;
        nl = memchr(rec, '\n', (size_t) n);
        if (!nl || nl != rec + n - 1) {
            show(nl ? "several lines in one write" : "part of a line", rec, (size_t) n);
            bad++;
        } else if (!has_prefix(rec, (size_t) n, argv[1])) {
            show(cuts_ok ? "a line the launcher cut" : "a line without a known prefix", rec,
                 (size_t) n);
            if (cuts_ok)
                cut++;
            else
                bad++;
        }
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (cuts_ok)
        printf("%ld lines cut by the launcher before xfer-run read them\n", cut);
    printf("%ld writes, %ld not one whole line; the command exited with %d\n", records, bad,
           WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    free(rec);
    return bad || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ? 1 : 0;
}
