/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: the launchers: how a plan's contexts become launcher command lines. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* The environment flags of one application context: -x NAME=VALUE (Open MPI) or
 * -env NAME VALUE (MPICH/Hydra). */
static void add_env(strv_t *s, int openmpi, const char *name, const char *value)
{
    if (openmpi) {
        sv_push(s, "-x");
        sv_take(s, xasprintf("%s=%s", name, value));
    } else {
        sv_push(s, "-env");
        sv_push(s, name);
        sv_push(s, value);
    }
}

void add_context(const plan_t *pl, int c, const char *cmd, strv_t *s)
{
    const xfer_cfg_component_t *k = &pl->cfg->components[c];
    char *preload = yield_preload(pl, c);
    strv_t w;
    size_t j;
    int i;

    sv_push(s, "-n");
    sv_take(s, xasprintf("%d", k->nprocs));
    add_env(s, pl->openmpi, "XFER_CONFIG", pl->config_path);
    add_env(s, pl->openmpi, "XFER_COMPONENT", k->name);
    add_env(s, pl->openmpi, "XFER_RUN_DIR", pl->run_dir);
    add_env(s, pl->openmpi, "XFER_RUN_ID", pl->run_id);
    add_env(s, pl->openmpi, "XFER_LAUNCH", pl->mode == XFER_LAUNCH_MPMD ? "mpmd" : "separate");
    if (pl->transport)
        add_env(s, pl->openmpi, "XFER_TRANSPORT", pl->transport);
    if (pl->transport_dir)
        add_env(s, pl->openmpi, "XFER_TRANSPORT_DIR", pl->transport_dir);
    if (pl->endpoint) {
        add_env(s, pl->openmpi, "XFER_CONTROL_ENDPOINT", pl->endpoint);
        if (pl->token_file)
            add_env(s, pl->openmpi, "XFER_CONTROL_TOKEN_FILE", pl->token_file);
    }
    if (pl->absent_names) /* --without: their senders start detached (late.c) */
        add_env(s, pl->openmpi, "XFER_ABSENT", pl->absent_names);
    if (pl->attach >= 0) /* the wrappers report to this xfer-run, not to the run's */
        add_env(s, pl->openmpi, "XFER_RUN_EXITS", pl->exits);
    for (i = 0; i < k->nenv; i++) {
        const char *eq = strchr(k->env[i], '=');
        char *name;
        if (!eq || (preload && !strncmp(k->env[i], "LD_PRELOAD=", 11)))
            continue; /* the parser only hands out NAME=value; preload holds this one */
        name = xstrndup(k->env[i], (size_t) (eq - k->env[i]));
        add_env(s, pl->openmpi, name, eq + 1);
        free(name);
    }
    if (preload) /* the UCX yield helper after the user's preloads (yield.c) */
        add_env(s, pl->openmpi, "LD_PRELOAD", preload);
    free(preload);
    /* mpi_world: the wrapper appends libxfer_world.so to the program's LD_PRELOAD (world.c) */
    memset(&w, 0, sizeof(w));
    world_env(pl, c, &w);
    for (j = 0; j + 1 < w.n; j += 2)
        add_env(s, pl->openmpi, w.v[j], w.v[j + 1]);
    sv_free(&w);
    /* every process runs under the wrapper (output.c): its output prefixed in one MPMD launch,
     * passed on in whole lines in a separate one (which xfer-run prefixes, per launch), its
     * abnormal end reported to xfer-run */
    sv_push(s, pl->self);
    sv_push(s, "--exec-prefixed");
    sv_push(s, k->name);
    if (quiet)
        sv_push(s, "--plain");
    else if (pl->mode != XFER_LAUNCH_MPMD)
        sv_push(s, "--lines");
    sv_push(s, "--");
    sv_push(s, cmd);
    for (i = 1; i < k->argc; i++)
        sv_push(s, k->argv[i]);
}

/* mpiexec and the flags every launch of this run shares. */
void add_launcher(const plan_t *pl, const opts_t *o, strv_t *s)
{
    const char *f = o->mpiexec_flags ? o->mpiexec_flags : "";
    int oversubscribe = 0;

    sv_push(s, o->mpiexec);
    while (*f) {
        size_t n;
        f += strspn(f, " \t");
        n = strcspn(f, " \t");
        if (n) {
            sv_take(s, xstrndup(f, n));
            if (!strcmp(s->v[s->n - 1], "--oversubscribe"))
                oversubscribe = 1;
        }
        f += n;
    }
    if (pl->openmpi && !oversubscribe)
        sv_push(s, "--oversubscribe"); /* more ranks than cores is the normal case here */
    if (pl->openmpi && pl->mode == XFER_LAUNCH_SEPARATE && pl->uri) {
        sv_push(s, "--ompi-server");
        sv_take(s, xasprintf("file:%s", pl->uri));
    }
}

/* ---- Slurm: srun -------------------------------------------------------------------------- */

/* srun and the flags every srun of this run shares: the MPI plugin of the flavour (MPICH
 * speaks PMI-2, Open MPI PMIx; the wrong one starts N singletons without a word, so it is
 * never left to a cluster default unless SLURM_MPI_TYPE says which), no stdin (a background
 * srun would read the caller's), and a failing task ends the step. */
static void add_srun(const plan_t *pl, const opts_t *o, strv_t *s)
{
    const char *f = o->srun_flags ? o->srun_flags : "";
    const char *mpi_type = getenv("SLURM_MPI_TYPE");

    sv_push(s, pl->srun);
    while (*f) {
        size_t n;
        f += strspn(f, " \t");
        n = strcspn(f, " \t");
        if (n)
            sv_take(s, xstrndup(f, n));
        f += n;
    }
    if (!mpi_type || !*mpi_type)
        sv_push(s, pl->openmpi ? "--mpi=pmix" : "--mpi=pmi2");
    sv_push(s, "--input=none");
    sv_push(s, "--kill-on-bad-exit=1");
    sv_take(s, xasprintf("--job-name=%s", pl->cfg->workflow));
}

/* Component @p c's mpi_world variables for env(1): behind the wrapper, as for mpiexec; without
 * it (-q), LD_PRELOAD itself (@p preload, else the component's, else xfer-run's, then
 * libxfer_world.so): 1 when it set LD_PRELOAD. */
static int world_srun_env(const plan_t *pl, int c, const char *preload, strv_t *s)
{
    const xfer_cfg_component_t *k = &pl->cfg->components[c];
    const char *old = getenv("LD_PRELOAD");
    strv_t w;
    size_t i;
    int e, set = 0;

    memset(&w, 0, sizeof(w));
    world_env(pl, c, &w);
    for (i = 0; i + 1 < w.n; i += 2) {
        if (strcmp(w.v[i], "XFER_WORLD_SO") != 0 || (pl->mode == XFER_LAUNCH_MPMD && !quiet)) {
            sv_take(s, xasprintf("%s=%s", w.v[i], w.v[i + 1]));
            continue;
        }
        for (e = 0; e < k->nenv; e++)
            if (strncmp(k->env[e], "LD_PRELOAD=", 11) == 0)
                old = k->env[e] + 11;
        if (preload)
            old = preload;
        sv_take(s, old && *old ? xasprintf("LD_PRELOAD=%s:%s", old, w.v[i + 1])
                               : xasprintf("LD_PRELOAD=%s", w.v[i + 1]));
        set = 1;
    }
    sv_free(&w);
    return set;
}

/* Component @p c's command: its environment as `env NAME=VALUE ...` (srun passes xfer-run's
 * environment on, and under srun MPI_APPNUM does not tell components apart), then the
 * command and its arguments; in an MPMD launch behind xfer-run's output prefixer. */
static void add_srun_command(const plan_t *pl, int c, const char *cmd, int het, strv_t *s)
{
    const xfer_cfg_component_t *k = &pl->cfg->components[c];
    char *preload = yield_preload(pl, c);
    int i;

    if (pl->mode == XFER_LAUNCH_MPMD && !quiet) {
        sv_push(s, pl->self);
        sv_push(s, "--exec-prefixed");
        sv_push(s, k->name);
        sv_push(s, "--");
    }
    sv_push(s, pl->env);
    sv_take(s, xasprintf("XFER_CONFIG=%s", pl->config_path));
    sv_take(s, xasprintf("XFER_COMPONENT=%s", k->name));
    sv_take(s, xasprintf("XFER_RUN_DIR=%s", pl->run_dir));
    sv_take(s, xasprintf("XFER_RUN_ID=%s", pl->run_id));
    sv_take(s, xasprintf("XFER_LAUNCH=%s", pl->mode == XFER_LAUNCH_MPMD ? "mpmd" : "separate"));
    if (pl->transport)
        sv_take(s, xasprintf("XFER_TRANSPORT=%s", pl->transport));
    if (pl->transport_dir)
        sv_take(s, xasprintf("XFER_TRANSPORT_DIR=%s", pl->transport_dir));
    if (pl->endpoint) {
        sv_take(s, xasprintf("XFER_CONTROL_ENDPOINT=%s", pl->endpoint));
        if (pl->token_file)
            sv_take(s, xasprintf("XFER_CONTROL_TOKEN_FILE=%s", pl->token_file));
    }
    if (pl->absent_names)
        sv_take(s, xasprintf("XFER_ABSENT=%s", pl->absent_names));
    /* Open MPI in a heterogeneous step: its shared-memory transport crashed (2 of 2) */
    if (het && pl->openmpi && !getenv("OMPI_MCA_btl"))
        sv_push(s, "OMPI_MCA_btl=self,tcp");
    for (i = 0; i < k->nenv; i++)
        if (!preload || strncmp(k->env[i], "LD_PRELOAD=", 11) != 0)
            sv_push(s, k->env[i]);
    if (!world_srun_env(pl, c, preload, s) && preload)
        sv_take(s, xasprintf("LD_PRELOAD=%s", preload));
    free(preload);
    sv_push(s, cmd);
    for (i = 1; i < k->argc; i++)
        sv_push(s, k->argv[i]);
}

/* A word of a --multi-prog line: srun splits on blanks and honours single quotes only. */
static int multiprog_word(const char *w, char **out)
{
    if (strchr(w, '\'') || strchr(w, '\n')) {
        run_error("srun --multi-prog cannot carry the argument \"%s\" (a quote or newline in it); "
                  "use --slurm-het",
                  w);
        return -1;
    }
    *out = xasprintf("'%s'", w);
    return 0;
}

int slurm_lines(plan_t *pl, const opts_t *o, const char *const *cmds)
{
    const xfer_config_t *cfg = pl->cfg;
    int c, i, first = 0;

    if (pl->mode == XFER_LAUNCH_SEPARATE) { /* one srun (a job, or a step) per component */
        pl->nlines = cfg->ncomponents;
        pl->lines = xchecked(calloc((size_t) cfg->ncomponents, sizeof(strv_t)));
        for (c = 0; c < cfg->ncomponents; c++) {
            if (pl->absent[c])
                continue; /* not launched here (--without, --attach) */
            add_srun(pl, o, &pl->lines[c]);
            sv_push(&pl->lines[c], "-n");
            sv_take(&pl->lines[c], xasprintf("%d", cfg->components[c].nprocs));
            if (pl->in_allocation) /* steps of one allocation that share its CPUs */
                sv_push(&pl->lines[c], "--overlap");
            add_srun_command(pl, c, cmds[c], 0, &pl->lines[c]);
        }
        return 0;
    }
    pl->nlines = 1;
    pl->lines = xchecked(calloc(1, sizeof(strv_t)));
    add_srun(pl, o, &pl->lines[0]);
    if (o->slurm_het) { /* srun -n P CMD_A : -n Q CMD_B (needs two nodes in the allocation) */
        for (c = 0; c < cfg->ncomponents; c++) {
            if (c > 0)
                sv_push(&pl->lines[0], ":");
            sv_push(&pl->lines[0], "-n");
            sv_take(&pl->lines[0], xasprintf("%d", cfg->components[c].nprocs));
            add_srun_command(pl, c, cmds[c], 1, &pl->lines[0]);
        }
        return 0;
    }
    /* srun -n P+Q --multi-prog FILE: a line per component, "FIRST-LAST WORDS..." */
    for (c = 0; c < cfg->ncomponents; c++) {
        strv_t words = {NULL, 0, 0};
        char *line = xasprintf("%d-%d", first, first + cfg->components[c].nprocs - 1);
        add_srun_command(pl, c, cmds[c], 0, &words);
        for (i = 0; i < (int) words.n; i++) {
            char *q, *l2;
            if (multiprog_word(words.v[i], &q) != 0) {
                sv_free(&words);
                free(line);
                return -1;
            }
            l2 = xasprintf("%s %s", line, q);
            free(q);
            free(line);
            line = l2;
        }
        sv_free(&words);
        sv_take(&pl->mp_lines, line);
        first += cfg->components[c].nprocs;
    }
    pl->multiprog = xasprintf("%s/slurm.multi-prog", pl->run_dir);
    sv_push(&pl->lines[0], "-n");
    sv_take(&pl->lines[0], xasprintf("%d", first));
    sv_push(&pl->lines[0], "--multi-prog");
    sv_push(&pl->lines[0], pl->multiprog);
    if (o->dry_run)
        return 0; /* printed, not written */
    {
        FILE *f = fopen(pl->multiprog, "w");
        size_t j;
        if (!f) {
            run_error("cannot write %s: %s", pl->multiprog, strerror(errno));
            return -1;
        }
        fprintf(f, "# written by xfer-run for workflow %s: srun --multi-prog\n", cfg->workflow);
        for (j = 0; j < pl->mp_lines.n; j++)
            fprintf(f, "%s\n", pl->mp_lines.v[j]);
        if (fclose(f) != 0) {
            run_error("cannot write %s: %s", pl->multiprog, strerror(errno));
            return -1;
        }
    }
    return 0;
}
