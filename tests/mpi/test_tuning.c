/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `auto` from a tuning file (XFER_TUNING, as xfer-bench --calibrate writes it): an entry for the
 * call's direction, shape, ranks per node and size (within a factor of 2) decides the
 * algorithm, even one the model would not pick; other sizes fall back to the model; every
 * result matches MPI_Allgather on the same intercommunicator. A file that does not parse, or
 * that one rank cannot open, fails on every rank (naming file and line); ranks reading
 * different files get XFER_ERR_MISMATCH from auto (a named algorithm still runs).
 *
 *   mpiexec -n 4 test_tuning DIR      (2 + 2 ranks; DIR: where to write the files)
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdlib.h>

#include <xfer/xfer.h>

#include "../support/mpitest.h"

static mt_inter_t ic;
static int ppn;
static char dir[512];

/* Write @p text to DIR/name on world rank 0 (or on every rank with @p own: name.RANK). */
static void write_file(const char *name, const char *text, int own, char *path, size_t len)
{
    int wrank;
    FILE *f;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (own)
        snprintf(path, len, "%s/%s.%d", dir, name, wrank);
    else
        snprintf(path, len, "%s/%s", dir, name);
    if (own || wrank == 0) {
        f = fopen(path, "w");
        MT_CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* A fresh intercommunicator (its topology, and so the tuning, is loaded on first use). */
static MPI_Comm fresh(void)
{
    MPI_Comm c;
    MT_MPI(MPI_Comm_dup(ic.inter, &c));
    return c;
}

/* One auto call of @p count ints per sending rank (@p full: both groups send): the algorithm it
 * chose into @p name, the result checked against MPI. Returns the status. */
static xfer_status_t run(MPI_Comm inter, int count, int full, char *name, size_t len)
{
    const int mine = full || ic.group == 0 ? count : 0;
    const int theirs = full || ic.group == 1 ? count : 0;
    int *s = malloc(sizeof(int) * (size_t) (mine + 1));
    int *r = calloc((size_t) (theirs * ic.nremote + 1), sizeof(int));
    int *ref = calloc((size_t) (theirs * ic.nremote + 1), sizeof(int));
    xfer_plan_t *plan = NULL;
    const char *algo = "";
    xfer_status_t st;
    for (int i = 0; i < mine; i++)
        s[i] = mt_value(ic.group, ic.rank, i, count);
    MT_MPI(MPI_Allgather(s, mine, MPI_INT, ref, theirs, MPI_INT, inter));
    st = xfer_allgather_inter_init(s, mine, MPI_INT, r, theirs, MPI_INT, inter, NULL, &plan);
    if (st == XFER_SUCCESS) {
        xfer_plan_algorithm(plan, &algo);
        snprintf(name, len, "%s", algo);
        st = xfer_start(plan);
        if (st == XFER_SUCCESS)
            st = xfer_wait(plan);
        MT_CHECK(st == XFER_SUCCESS, "%s: %s", algo, xfer_last_error());
        MT_CHECK(!memcmp(r, ref, sizeof(int) * (size_t) (theirs * ic.nremote)),
                 "%s (%d ints, %s): result differs from MPI_Allgather", algo, count,
                 full ? "full" : "half");
        xfer_plan_free(&plan);
    }
    free(s);
    free(r);
    free(ref);
    return st;
}

int main(int argc, char **argv)
{
    char path[1024], text[1024], name[64], plain[64];
    MPI_Comm a, b;
    MPI_Comm node;
    xfer_status_t st;

    mt_init(&argc, &argv, 2, &ic);
    snprintf(dir, sizeof(dir), "%s", argc > 1 ? argv[argc - 1] : ".");
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MT_MPI(MPI_Comm_size(node, &ppn));
    MT_MPI(MPI_Allreduce(MPI_IN_PLACE, &ppn, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    MPI_Comm_free(&node);

    /* the model's own choices, no tuning */
    unsetenv("XFER_TUNING");
    a = fresh();
    MT_CHECK(run(a, 1024, 0, plain, sizeof(plain)) == XFER_SUCCESS, "model: %s", xfer_last_error());
    MPI_Comm_free(&a);

    /* entries naming algorithms the model does not pick here */
    snprintf(text, sizeof(text),
             "# test\nalpha 1e-5\nbeta 1e-9\nbeta_two_way 2e-9\n"
             "best a-to-b %d %d %d uniform 4096 %s 0.001\n"
             "best both %d %d %d uniform 4096 ring 0.002   # comment\n",
             ic.group ? ic.nremote : ic.nlocal, ic.group ? ic.nlocal : ic.nremote, ppn,
             strcmp(plain, "ring_half") ? "ring_half" : "fc_full",
             ic.group ? ic.nremote : ic.nlocal, ic.group ? ic.nlocal : ic.nremote, ppn);
    write_file("tuning.good", text, 0, path, sizeof(path));
    setenv("XFER_TUNING", path, 1);
    a = fresh();
    MT_CHECK(run(a, 1024, 0, name, sizeof(name)) == XFER_SUCCESS, "tuned: %s", xfer_last_error());
    MT_CHECK(!strcmp(name, strcmp(plain, "ring_half") ? "ring_half" : "fc_full"),
             "4096 B half: chose %s, the file says otherwise", name);
    MT_CHECK(run(a, 600, 0, name, sizeof(name)) == XFER_SUCCESS, "tuned: %s", xfer_last_error());
    MT_CHECK(!strcmp(name, strcmp(plain, "ring_half") ? "ring_half" : "fc_full"),
             "2400 B half (within 2x of 4096): chose %s", name);
    MT_CHECK(run(a, 1024, 1, name, sizeof(name)) == XFER_SUCCESS, "tuned: %s", xfer_last_error());
    MT_CHECK(!strcmp(name, "ring"), "4096 B full: chose %s, the file says ring", name);
    MT_CHECK(run(a, 100, 0, name, sizeof(name)) == XFER_SUCCESS, "tuned: %s", xfer_last_error());
    {
        char small[64];
        unsetenv("XFER_TUNING");
        b = fresh();
        MT_CHECK(run(b, 100, 0, small, sizeof(small)) == XFER_SUCCESS, "%s", xfer_last_error());
        MT_CHECK(!strcmp(name, small), "400 B (beyond 2x): %s, the model alone picks %s", name,
                 small);
        MPI_Comm_free(&b);
    }
    MPI_Comm_free(&a);

    /* a line that does not parse: an error on every rank, naming file and line */
    write_file("tuning.bad", "alpha 1e-5\nbest both 2 2 x uniform 10 ring 1\n", 0, path,
               sizeof(path));
    setenv("XFER_TUNING", path, 1);
    a = fresh();
    st = run(a, 10, 0, name, sizeof(name));
    MT_CHECK(st == XFER_ERR_CONFIG && strstr(xfer_last_error(), "tuning.bad:2:"),
             "bad file: %s (%s)", xfer_status_string(st), xfer_last_error());
    MPI_Comm_free(&a);

    /* one rank cannot open its file: every rank fails */
    snprintf(path, sizeof(path), "%s/tuning.missing.%d", dir, ic.group == 1 && ic.rank == 1);
    write_file("tuning.missing.0", "alpha 1e-5\n", 0, text, sizeof(text));
    setenv("XFER_TUNING", path, 1);
    a = fresh();
    st = run(a, 10, 0, name, sizeof(name));
    MT_CHECK(st == XFER_ERR_CONFIG, "missing on one rank: %s (%s)", xfer_status_string(st),
             xfer_last_error());
    MPI_Comm_free(&a);

    /* different files: auto refuses everywhere, a named algorithm runs */
    snprintf(text, sizeof(text), "alpha %de-6\n", 1 + ic.group);
    write_file("tuning.own", text, 1, path, sizeof(path));
    setenv("XFER_TUNING", path, 1);
    a = fresh();
    st = run(a, 10, 0, name, sizeof(name));
    MT_CHECK(st == XFER_ERR_MISMATCH, "different files: %s (%s)", xfer_status_string(st),
             xfer_last_error());
    setenv("XFER_ALGORITHM", "fc_full", 1);
    st = run(a, 10, 0, name, sizeof(name));
    MT_CHECK(st == XFER_SUCCESS && !strcmp(name, "fc_full"), "named algorithm: %s",
             xfer_last_error());
    unsetenv("XFER_ALGORITHM");
    MPI_Comm_free(&a);

    mt_free_inter(&ic);
    {
        int rc = mt_finish("test_tuning");
        MPI_Finalize();
        return rc;
    }
}
