/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: the UCX yield helper (tools/ucx_yield.c). MPICH's ch4:ucx device waits by polling
 * in user space, so with more processes than cores a waiting rank burns the time slice the
 * rank it waits for needs. When the run is oversubscribed that way, every MPI process gets
 * libxfer_ucx_yield.so appended to its LD_PRELOAD (launch.c); --no-yield or XFER_RUN_YIELD=0
 * turns that off, XFER_RUN_YIELD=1 asks for it whatever the counts. Open MPI yields by itself
 * and gets nothing. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT_S */

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

#define YIELD_LIB "libxfer_ucx_yield.so"

/* The MPICH device in MPI_Get_library_version's text ("MPICH Device:\tch4:ucx"), or NULL. */
char *mpich_device(const char *version)
{
    const char *p = strstr(version, "MPICH Device:"), *end;

    if (!p)
        return NULL;
    p += strlen("MPICH Device:");
    p += strspn(p, " \t");
    end = p + strcspn(p, " \t\r\n");
    return xstrndup(p, (size_t) (end - p));
}

/* The CPUs this process may run on (sched_getaffinity, what nproc counts); 0 if unknown. */
static int affinity_cpus(void)
{
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    size_t ncpu = conf > 0 ? (size_t) conf : 1024, size;
    cpu_set_t *set;
    int n = 0;

    for (;; ncpu *= 2) { /* the kernel's mask may be wider than the CPUs configured */
        set = CPU_ALLOC(ncpu);
        if (!set)
            return 0;
        size = CPU_ALLOC_SIZE(ncpu);
        CPU_ZERO_S(size, set);
        if (sched_getaffinity(0, size, set) == 0) {
            n = CPU_COUNT_S(size, set);
            break;
        }
        CPU_FREE(set);
        set = NULL;
        if (errno != EINVAL || ncpu > (1u << 20))
            break;
    }
    CPU_FREE(set);
    return n;
}

/* A Slurm allocation's CPUs: SLURM_JOB_CPUS_PER_NODE, e.g. "4(x2),2" = 10; 0 if unknown. */
static int slurm_cpus(void)
{
    const char *s = getenv("SLURM_JOB_CPUS_PER_NODE");
    long total = 0;

    if (!s || !*s)
        return 0;
    while (*s) {
        char *end;
        long cpus = strtol(s, &end, 10), times = 1;
        if (end == s || cpus < 0)
            return 0;
        s = end;
        if (strncmp(s, "(x", 2) == 0) {
            times = strtol(s + 2, &end, 10);
            if (end == s + 2 || *end != ')' || times < 0)
                return 0;
            s = end + 1;
        }
        total += cpus * times;
        if (total > INT_MAX)
            return 0;
        if (*s == ',')
            s++;
        else if (*s)
            return 0;
    }
    return (int) total;
}

/* The helper: beside xfer-run (the build tree keeps both in tools/), in the install's library
 * directory relative to bin/, then where this build made it. */
static char *find_helper(const char *self_dir)
{
    char *p = xasprintf("%s/" YIELD_LIB, self_dir);

    if (access(p, R_OK) == 0)
        return p;
    free(p);
#ifdef XFER_RUN_YIELD_INSTALL_REL
    p = xasprintf("%s/" XFER_RUN_YIELD_INSTALL_REL "/" YIELD_LIB, self_dir);
    if (access(p, R_OK) == 0) {
        char *a = realpath(p, NULL); /* <prefix>/lib/..., not <prefix>/bin/../lib/... */
        if (!a)
            return p;
        free(p);
        return a;
    }
    free(p);
#endif
#ifdef XFER_RUN_YIELD_BUILD
    if (access(XFER_RUN_YIELD_BUILD, R_OK) == 0)
        return xstrdup(XFER_RUN_YIELD_BUILD);
#endif
    return NULL;
}

int plan_yield(plan_t *pl, const opts_t *o, const char *self_dir)
{
    const xfer_config_t *cfg = pl->cfg;
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "", *dev = NULL, *lib = NULL;
    const char *env = getenv("XFER_RUN_YIELD");
    int len = 0, nprocs = 0, cpus, c, force = 0;
    const char *where;

    if (env && *env && strcmp(env, "auto") && strcmp(env, "0") && strcmp(env, "1")) {
        run_error("XFER_RUN_YIELD: expected 0, 1 or auto, got \"%s\"", env);
        return -1;
    }
    if (o->no_yield || (env && !strcmp(env, "0"))) {
        run_verbose("yield helper: off (%s)", o->no_yield ? "--no-yield" : "XFER_RUN_YIELD=0");
        return 0;
    }
    force = env && !strcmp(env, "1");
    if (pl->openmpi) {
        run_verbose("yield helper: not for Open MPI");
        return 0;
    }
    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS || !(dev = mpich_device(version)) ||
        strcmp(dev, "ch4:ucx") != 0) {
        run_verbose("yield helper: not needed: the MPI library is not MPICH ch4:ucx (device %s)",
                    dev ? dev : "unknown");
        free(dev);
        return 0;
    }
    free(dev);
    for (c = 0; c < cfg->ncomponents; c++)
        nprocs += cfg->components[c].nprocs;
    if (pl->slurm) {
        cpus = pl->in_allocation ? slurm_cpus() : 0;
        where = "the Slurm allocation's, SLURM_JOB_CPUS_PER_NODE";
    } else {
        cpus = affinity_cpus();
        where = "sched_getaffinity";
    }
    if (!force && (cpus <= 0 || nprocs <= cpus)) {
        if (cpus > 0)
            run_verbose("yield helper: not needed: %d processes on %d core(s) (%s)", nprocs, cpus,
                        where);
        else
            run_verbose("yield helper: not used: the cores are unknown%s",
                        pl->slurm ? " (srun outside an allocation gets one per task)" : "");
        return 0;
    }
    if (!(lib = find_helper(self_dir))) {
        run_note("%d processes on %d cores with MPICH ch4:ucx, but " YIELD_LIB " is not found "
                 "(looked beside xfer-run and in the install's library directory): waiting "
                 "ranks spin and the run is slow",
                 nprocs, cpus);
        return 0;
    }
    if (strpbrk(lib, " :")) { /* LD_PRELOAD splits its list there */
        run_note("yield helper %s: a space or colon in its path; LD_PRELOAD cannot name it", lib);
        free(lib);
        return 0;
    }
    pl->yield_lib = lib;
    env = getenv("LD_PRELOAD");
    if (env && strstr(env, YIELD_LIB))
        run_verbose("yield helper: already in LD_PRELOAD (%s)", env);
    else if (force)
        run_verbose("yield helper: XFER_RUN_YIELD=1: preloading %s in every MPI process", lib);
    else
        run_verbose("yield helper: %d processes on %d core(s) (%s) and MPICH ch4:ucx, whose "
                    "waiting ranks poll: preloading %s in every MPI process so that they yield "
                    "(--no-yield or XFER_RUN_YIELD=0 to run without)",
                    nprocs, cpus, where, lib);
    return 0;
}

/* Component @p c's LD_PRELOAD with the helper appended (its env's, else xfer-run's), or NULL
 * when there is nothing to add: no helper, or the list already names it. Caller frees. */
char *yield_preload(const plan_t *pl, int c)
{
    const xfer_cfg_component_t *k = &pl->cfg->components[c];
    const char *base = getenv("LD_PRELOAD");
    int i;

    if (!pl->yield_lib)
        return NULL;
    for (i = 0; i < k->nenv; i++)
        if (strncmp(k->env[i], "LD_PRELOAD=", 11) == 0)
            base = k->env[i] + 11;
    if (base && strstr(base, YIELD_LIB))
        return NULL;
    /* after the user's: a sanitizer runtime must stay first */
    return base && *base ? xasprintf("%s:%s", base, pl->yield_lib) : xstrdup(pl->yield_lib);
}
