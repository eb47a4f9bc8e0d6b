/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: the launchers: how a plan's contexts become launcher command lines. */
#define _XOPEN_SOURCE 700

#include <stdlib.h>
#include <string.h>

#include "run.h"

/* The environment flags of one application context: -x NAME=VALUE (Open MPI) or
 * -env NAME VALUE (MPICH/Hydra). */
static void add_env(strv_t *s, int openmpi, const char *name, const char *value)
{
    if (openmpi) {
        sv_push(s, "-x");
        sv_take(s, xprintf("%s=%s", name, value));
    } else {
        sv_push(s, "-env");
        sv_push(s, name);
        sv_push(s, value);
    }
}

void add_context(const plan_t *pl, int c, const char *cmd, strv_t *s)
{
    const xfer_cfg_component_t *k = &pl->cfg->components[c];
    int i;

    sv_push(s, "-n");
    sv_take(s, xprintf("%d", k->nprocs));
    add_env(s, pl->openmpi, "XFER_CONFIG", pl->config_path);
    add_env(s, pl->openmpi, "XFER_COMPONENT", k->name);
    add_env(s, pl->openmpi, "XFER_RUN_DIR", pl->run_dir);
    add_env(s, pl->openmpi, "XFER_LAUNCH", pl->mode == XFER_LAUNCH_MPMD ? "mpmd" : "separate");
    if (pl->endpoint) {
        add_env(s, pl->openmpi, "XFER_CONTROL_ENDPOINT", pl->endpoint);
        if (pl->token_file)
            add_env(s, pl->openmpi, "XFER_CONTROL_TOKEN_FILE", pl->token_file);
    }
    for (i = 0; i < k->nenv; i++) {
        const char *eq = strchr(k->env[i], '=');
        char *name;
        if (!eq)
            continue; /* the parser only hands out NAME=value */
        name = checked(strndup(k->env[i], (size_t) (eq - k->env[i])));
        add_env(s, pl->openmpi, name, eq + 1);
        free(name);
    }
    if (pl->mode == XFER_LAUNCH_MPMD && !quiet) {
        sv_push(s, pl->self);
        sv_push(s, "--exec-prefixed");
        sv_push(s, k->name);
        sv_push(s, "--");
    }
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
            sv_take(s, checked(strndup(f, n)));
            if (!strcmp(s->v[s->n - 1], "--oversubscribe"))
                oversubscribe = 1;
        }
        f += n;
    }
    if (pl->openmpi && !oversubscribe)
        sv_push(s, "--oversubscribe"); /* more ranks than cores is the normal case here */
    if (pl->openmpi && pl->mode == XFER_LAUNCH_SEPARATE) {
        sv_push(s, "--ompi-server");
        sv_take(s, xprintf("file:%s", pl->uri));
    }
}
