/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-bench --calibrate FILE: the tuning file `auto` reads (libxfer/src/select/tuning.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"

int xb_node_ppn(void)
{
    MPI_Comm node;
    int n = 1, most = 1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return -1;
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    MPI_Allreduce(&n, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return most;
}

/* Between world ranks 0 (A's first) and @p peer (B's first): the median one-way time of a
 * @p bytes message (ping-pong, half the round trip) or, with @p both, of the two-way exchange
 * (each sends @p bytes to the other at once) or, with @p third >= 0, of rank 0 sending to
 * @p peer while @p third sends to rank 0. Collective over world; the result on rank 0. */
static double exchange(int peer, unsigned char *buf, int bytes, int both, int third, int reps)
{
    int me, other;
    double t[16];
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    other = me == 0 ? peer : 0;
    if (reps > 16)
        reps = 16;
    for (int r = 0; r < reps + 1; r++) { /* the first is a warm-up */
        double t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (third >= 0) {
            if (me == 0)
                MPI_Sendrecv(buf, bytes, MPI_BYTE, peer, 7, buf + bytes, bytes, MPI_BYTE, third, 7,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if (me == peer)
                MPI_Recv(buf, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if (me == third)
                MPI_Send(buf, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        } else if (me == 0 || me == peer) {
            if (both)
                MPI_Sendrecv(buf, bytes, MPI_BYTE, other, 7, buf + bytes, bytes, MPI_BYTE, other, 7,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if (me == 0) {
                MPI_Send(buf, bytes, MPI_BYTE, other, 7, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes, MPI_BYTE, other, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, bytes, MPI_BYTE, other, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, other, 7, MPI_COMM_WORLD);
            }
        }
        if (r > 0)
            t[r - 1] = (MPI_Wtime() - t0) / (both || third >= 0 ? 1.0 : 2.0);
    }
    return xb_median(t, reps);
}

int xb_calibrate_link(const xb_setup_t *s, xb_link_t *out)
{
    const int big = 4 << 20, peer = s->n[0]; /* world rank of B's first rank */
    const int third = s->n[1] > 1 ? peer + 1 : s->n[0] > 1 ? 1 : -1;
    unsigned char *buf = calloc(2, (size_t) big);
    double a, one, pair, link;
    if (!buf)
        return -1;
    a = exchange(peer, buf, 1, 0, -1, 15);
    one = exchange(peer, buf, big, 0, -1, 5);
    pair = exchange(peer, buf, big, 1, -1, 5);
    link = third >= 0 ? exchange(peer, buf, big, 0, third, 5) : pair;
    free(buf);
    out->alpha = a;
    out->beta = one - a > 0 ? (one - a) / big : one / big;
    out->beta_pair = pair - a > 0 ? (pair - a) / big : pair / big;
    out->beta_two_way = link - a > 0 ? (link - a) / big : link / big;
    return 0;
}

/* Does line @p l (a copy) hold a `best` entry with the key of @p key ("dir p q ppn counts
 * bytes")? */
static int same_key(const char *l, const char *key)
{
    char w[7][64];
    char mine[512];
    if (sscanf(l, " best %63s %63s %63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4], w[5],
               w[6]) != 7)
        return 0;
    snprintf(mine, sizeof(mine), "%s %s %s %s %s %s", w[0], w[1], w[2], w[3], w[4], w[5]);
    return strcmp(mine, key) == 0;
}

static int is_link_line(const char *l)
{
    char w[32];
    if (sscanf(l, " %31s", w) != 1)
        return 0;
    return !strcmp(w, "alpha") || !strcmp(w, "beta") || !strcmp(w, "beta_two_way");
}

int xb_calibrate_write(const char *path, const xb_link_t *link, const xb_best_t *best, int nbest)
{
    char tmp[4096], line[1024];
    FILE *in = fopen(path, "r"), *out;
    int i, kept = 0;

    snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long) getpid());
    if (!(out = fopen(tmp, "w"))) {
        fprintf(stderr, "xfer-bench: cannot write %s: %s\n", tmp, strerror(errno));
        if (in)
            fclose(in);
        return -1;
    }
    fprintf(out,
            "# libxfer tuning for auto (XFER_TUNING=%s), written by xfer-bench "
            "--calibrate\n",
            path);
    fprintf(out, "alpha %.6g\nbeta %.6g\nbeta_two_way %.6g\n", link->alpha, link->beta,
            link->beta_two_way);
    /* keep what earlier runs measured for other calls */
    while (in && fgets(line, sizeof(line), in)) {
        int drop = is_link_line(line) || !strncmp(line, "# libxfer tuning", 16);
        for (i = 0; i < nbest && !drop; i++)
            drop = same_key(line, best[i].key);
        if (!drop) {
            fputs(line, out);
            kept++;
        }
    }
    if (in)
        fclose(in);
    for (i = 0; i < nbest; i++)
        fprintf(out, "best %s %s %.6g\n", best[i].key, best[i].algo, best[i].seconds);
    if (ferror(out) | fclose(out) || rename(tmp, path) != 0) {
        fprintf(stderr, "xfer-bench: writing %s failed: %s\n", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    printf("\ncalibration: alpha %.3g s, beta %.3g s/B (%.1f Mbit/s one way), two-way %.3g s/B "
           "(%.1f Mbit/s each way; %.1f Mbit/s when one pair sends both ways); %d best entries "
           "written to %s (%d lines kept)\n",
           link->alpha, link->beta, 8e-6 / link->beta, link->beta_two_way,
           8e-6 / link->beta_two_way, 8e-6 / link->beta_pair, nbest, path, kept);
    return 0;
}
