/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: each component's MPI_COMM_WORLD in an MPMD launch (components[].mpi_world): the
 * interposer libxfer_world.so, which the wrapper of every process preloads into the program
 * (output.c), and the variables that tell it the component. */
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

/* libxfer_world.so: XFER_WORLD_LIB when set; else the build tree's when this xfer-run is the
 * build tree's, the installed one otherwise (BIN/../LIBDIR/libxfer_world.so, wherever the
 * install went). NULL when there is none (libxfer built without python3). */
static const char *world_lib(const plan_t *pl)
{
    static char *found;
    static int looked;
    const char *env = getenv("XFER_WORLD_LIB");
    char *dir;

    if (env && *env)
        return env;
    if (looked)
        return found;
    looked = 1;
    dir = dir_of(pl->self);
#if defined(XFER_RUN_WORLD_BUILD) && defined(XFER_RUN_BUILD_DIR)
    if (strcmp(dir, XFER_RUN_BUILD_DIR) == 0 && access(XFER_RUN_WORLD_BUILD, R_OK) == 0)
        found = xstrdup(XFER_RUN_WORLD_BUILD);
#endif
#ifdef XFER_RUN_WORLD_INSTALL
    if (!found) {
        char *p = xasprintf("%s/../%s", dir, XFER_RUN_WORLD_INSTALL);
        if (access(p, R_OK) == 0)
            found = abs_path(p);
        free(p);
    }
#endif
    free(dir);
    return found;
}

int world_check(const plan_t *pl)
{
    int c;
    if (pl->mode != XFER_LAUNCH_MPMD || pl->cfg->ncomponents < 2 || world_lib(pl))
        return 0;
    for (c = 0; c < pl->cfg->ncomponents; c++)
        if (pl->cfg->components[c].mpi_world == XFER_MPI_WORLD_COMPONENT) {
            run_error("component %s: mpi_world: component needs libxfer_world.so, which this "
                      "libxfer does not have (it was built without python3; or set "
                      "XFER_WORLD_LIB to its path). Rebuild libxfer with python3, or set "
                      "mpi_world: job for %s and give MPI calls the communicator xfer_comm() "
                      "returns",
                      pl->cfg->components[c].name, pl->cfg->components[c].name);
            return -1;
        }
    return 0;
}

void world_env(const plan_t *pl, int c, strv_t *names)
{
    const xfer_cfg_component_t *k = &pl->cfg->components[c];
    const char *lib = world_lib(pl);
    if (pl->mode != XFER_LAUNCH_MPMD || pl->cfg->ncomponents < 2 || !lib)
        return;
    sv_push(names, "XFER_WORLD_SO");
    sv_push(names, lib);
    sv_push(names, "XFER_MPI_WORLD");
    sv_push(names, k->mpi_world == XFER_MPI_WORLD_JOB ? "job" : "component");
    sv_push(names, "XFER_WORLD_COLOR");
    sv_take(names, xasprintf("%d", c));
}

void world_preload(void)
{
    const char *lib = getenv("XFER_WORLD_SO"), *old = getenv("LD_PRELOAD");
    char *v;
    if (!lib || !*lib)
        return;
    v = old && *old ? xasprintf("%s:%s", old, lib) : xstrdup(lib);
    setenv("LD_PRELOAD", v, 1);
    unsetenv("XFER_WORLD_SO");
    free(v);
}

void world_refusals(const plan_t *pl)
{
    char *path = xasprintf("%s/world.refused", pl->run_dir), line[1100], first[1100] = "";
    char more[64] = "";
    FILE *f = fopen(path, "r");
    int n = 0;
    if (f) {
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = '\0';
            if (!n++)
                snprintf(first, sizeof first, "%s", line);
        }
        fclose(f);
        unlink(path);
    }
    if (n > 1)
        snprintf(more, sizeof more, " (%d processes refused such a call)", n);
    if (n > 0)
        run_error("%s%s", first, more);
    free(path);
}
