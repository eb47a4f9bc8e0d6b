/* SPDX-License-Identifier: BSD-3-Clause */
/* The tuning file `auto` reads (tuning.h). */
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "tuning.h"

static const char *const dir_names[] = {"a-to-b", "b-to-a", "both"};

const char *xfer_tuning_dir_name(int dir)
{
    return dir >= 0 && dir <= XFER_DIR_BOTH ? dir_names[dir] : "?";
}

void xfer_tuning_free(xfer_tuning_t **t)
{
    if (!t || !*t)
        return;
    xfer_free((*t)->best);
    xfer_free(*t);
    *t = NULL;
}

/* A positive number in @p s (the whole word), or -1. */
static double number(const char *s)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    return errno || end == s || *end || !(v > 0) || v > DBL_MAX ? -1.0 : v;
}

static long integer(const char *s, long lo, long hi)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    return errno || end == s || *end || v < lo || v > hi ? -1 : v;
}

/* Parse one line (comment stripped) into @p t. */
static xfer_status_t parse_line(xfer_tuning_t *t, char *line, int ln)
{
    char *w[10];
    int n = 0, i;
    for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
        if (n == 10)
            return XFER_ERR(XFER_ERR_CONFIG, "%s:%d: too many words", t->path, ln);
        w[n++] = tok;
    }
    if (n == 0)
        return XFER_SUCCESS;
    if (n == 2 && (!strcmp(w[0], "alpha") || !strcmp(w[0], "beta") ||
                   !strcmp(w[0], "beta_two_way") || !strcmp(w[0], "gamma"))) {
        const double v = number(w[1]);
        if (v < 0)
            return XFER_ERR(XFER_ERR_CONFIG,
                            "%s:%d: %s \"%s\": expected a positive number of seconds", t->path, ln,
                            w[0], w[1]);
        *(!strcmp(w[0], "alpha")  ? &t->alpha
          : !strcmp(w[0], "beta") ? &t->beta
          : w[0][1] == 'e'        ? &t->beta_two_way
                                  : &t->gamma) = v;
        return XFER_SUCCESS;
    }
    if (!strcmp(w[0], "best")) {
        xfer_tuning_best_t b;
        long bytes;
        if (n != 9)
            return XFER_ERR(XFER_ERR_CONFIG,
                            "%s:%d: best: expected DIRECTION P Q PPN COUNTS BYTES ALGORITHM "
                            "SECONDS (%d words given)",
                            t->path, ln, n - 1);
        memset(&b, 0, sizeof(b));
        b.dir = -1;
        for (i = 0; i <= XFER_DIR_BOTH; i++)
            if (!strcmp(w[1], dir_names[i]))
                b.dir = i;
        b.p = (int) integer(w[2], 1, 1 << 30);
        b.q = (int) integer(w[3], 1, 1 << 30);
        b.ppn = (int) integer(w[4], 1, 1 << 20);
        b.varied = !strcmp(w[5], "varied") ? 1 : !strcmp(w[5], "uniform") ? 0 : -1;
        bytes = integer(w[6], 1, 1L << 62);
        b.seconds = number(w[8]);
        if (b.dir < 0 || b.p < 0 || b.q < 0 || b.ppn < 0 || b.varied < 0 || bytes < 0 ||
            b.seconds < 0 || strlen(w[7]) >= sizeof(b.algo))
            return XFER_ERR(XFER_ERR_CONFIG,
                            "%s:%d: best %s %s %s %s %s %s %s %s: DIRECTION is a-to-b, b-to-a or "
                            "both; P, Q, PPN and BYTES positive integers; COUNTS uniform or "
                            "varied; SECONDS positive",
                            t->path, ln, w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8]);
        b.bytes = (size_t) bytes;
        b.line = ln;
        snprintf(b.algo, sizeof(b.algo), "%s", w[7]);
        if (!xfer_grow_array((void **) &t->best, &t->best_cap, t->nbest + 1, sizeof(b)))
            return XFER_ERR(XFER_ERR_NO_MEMORY, "%s: %d entries", t->path, t->nbest + 1);
        t->best[t->nbest++] = b;
        return XFER_SUCCESS;
    }
    return XFER_ERR(XFER_ERR_CONFIG,
                    "%s:%d: \"%s\": expected alpha, beta, beta_two_way, gamma or best", t->path, ln,
                    w[0]);
}

xfer_status_t xfer_tuning_load(const char *path, xfer_tuning_t **out)
{
    xfer_status_t st = XFER_SUCCESS;
    xfer_tuning_t *t;
    char line[1024];
    FILE *f;
    int ln = 0;

    *out = NULL;
    if (!(t = xfer_calloc(1, sizeof(*t))))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "tuning");
    snprintf(t->path, sizeof(t->path), "%s", path);
    t->hash = XFER_FNV_OFFSET;
    if (!(f = fopen(path, "r"))) {
        st = XFER_ERR(XFER_ERR_CONFIG, "XFER_TUNING=%s: cannot open it: %s", path, strerror(errno));
        goto fail;
    }
    while (fgets(line, sizeof(line), f)) {
        const size_t len = strlen(line);
        ln++;
        t->hash = xfer_fnv1a(t->hash, line, len);
        if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
            st = XFER_ERR(XFER_ERR_CONFIG, "%s:%d: line longer than %zu characters", path, ln,
                          sizeof(line) - 2);
            break;
        }
        line[strcspn(line, "#")] = '\0';
        if ((st = parse_line(t, line, ln)) != XFER_SUCCESS)
            break;
    }
    if (st == XFER_SUCCESS && ferror(f))
        st = XFER_ERR(XFER_ERR_CONFIG, "%s: read error", path);
    fclose(f);
    if (st != XFER_SUCCESS)
        goto fail;
    *out = t;
    return XFER_SUCCESS;
fail:
    xfer_tuning_free(&t);
    return st;
}

const xfer_tuning_best_t *xfer_tuning_match(const xfer_tuning_t *t, int dir, int p, int q, int ppn,
                                            int varied, size_t bytes)
{
    const xfer_tuning_best_t *pick = NULL;
    double dist = 2.0 + 1e-9; /* max(ratio, 1 / ratio) of the sizes: within a factor of 2 */
    int i;
    if (!t || bytes == 0)
        return NULL;
    for (i = 0; i < t->nbest; i++) {
        const xfer_tuning_best_t *b = &t->best[i];
        double d;
        if (b->dir != dir || b->p != p || b->q != q || b->ppn != ppn || b->varied != varied)
            continue;
        d = (double) bytes / (double) b->bytes;
        d = d < 1.0 ? 1.0 / d : d;
        if (d < dist || (pick && d == dist && b->bytes < pick->bytes)) {
            pick = b;
            dist = d;
        }
    }
    return pick;
}
