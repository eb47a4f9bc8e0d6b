/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libxfer_world.so: in an MPMD launch, each component's MPI_COMM_WORLD means its own processes,
 * for an unmodified program (C, Fortran, mpi4py). xfer-run preloads it into every component of
 * an MPMD launch and says which (XFER_MPI_WORLD, the component's `mpi_world` key;
 * XFER_WORLD_COLOR, the component's index):
 *   component  every MPI call given MPI_COMM_WORLD gets the component's world instead: a
 *              communicator split from the job's world by component, named MPI_COMM_WORLD,
 *              with the world's error handler (the interceptors are generated from the MPI
 *              library's own prototypes: gen_world.py);
 *   job        MPI_COMM_WORLD stays the job's, and a collective call on it fails at once with
 *              a message naming the call and the fix (it would wait for every component's
 *              processes, which never make the same call: a silent hang).
 *   error handlers under component: one set on MPI_COMM_WORLD is set on the component's world
 *              and the job's (whose handler the library calls for errors of no communicator);
 *              MPI_Comm_get_errhandler and MPI_Comm_call_errhandler on MPI_COMM_WORLD reach the
 *              component's world's. A handler the program makes (C or Fortran) is made around
 *              a trampoline of world_errh.c, which gives it MPI_COMM_WORLD when the library
 *              gives the component's world: it sees the communicator the program named.
 * Without XFER_MPI_WORLD every call passes through. What stays the job's: MPI_Abort (the whole
 * job ends, as a program that aborts means), the predefined attributes (MPI_TAG_UB,
 * MPI_APPNUM, MPI_UNIVERSE_SIZE, ...), and the calls made on any other communicator. libxfer
 * itself reaches the job's world through xfer_world_job (xfer_init given MPI_COMM_WORLD).
 *
 * Fortran: an entry point that reaches the C MPI_ name is served by the C interceptor; the others
 * are intercepted themselves (generated: gen_world.py; MPI_INIT, MPI_INIT_THREAD and
 * MPI_FINALIZE here), with the same rules:
 *   MPICH 4.0     mpif.h and `use mpi` reach the C names but for MPI_Comm_get_attr,
 *                 MPI_Comm_set_attr, MPI_Attr_get and MPI_Attr_put (intercepted); `use mpi_f08`
 *                 calls the PMPI_ names (every entry point that takes a communicator
 *                 intercepted, mpi_x_f08_, mpi_x_f08ts_ and their _large_ forms);
 *   Open MPI 4.1  mpif.h, `use mpi` and `use mpi_f08` call PMPI_ names or internal functions:
 *                 all intercepted (mpi_x_, mpi_x, mpi_x__, MPI_X, MPI_X_f08, mpi_x_f08_).
 * Strings pass with their hidden lengths (gfortran's size_t after the error code). Not
 * intercepted in Fortran: MPI_Abort (as in C), MPI_Comm_call_errhandler (the job's world holds
 * the same handler, given the world's handle), and the MPIX_ extensions.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "world.h"

enum { MODE_OFF = 0, MODE_COMPONENT, MODE_JOB };

static struct {
    int ready, mode;
    MPI_Comm comp, job;
    MPI_Fint comp_f, world_f;
    char name[64]; /* the component's, for messages */
} xw = {0, MODE_OFF, MPI_COMM_NULL, MPI_COMM_NULL, 0, 0, ""};

static void say(const char *what)
{
    fprintf(stderr, "libxfer_world: %s\n", what);
}

/* Which component this process is (XFER_WORLD_COLOR, else its MPI_APPNUM): -1 if neither. */
static int color_of(void)
{
    const char *c = getenv("XFER_WORLD_COLOR");
    int *appnum = NULL, flag = 0;
    if (c && *c) {
        char *end;
        const long v = strtol(c, &end, 10);
        return *end == '\0' && v >= 0 && v < 1 << 20 ? (int) v : -1;
    }
    if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag) == MPI_SUCCESS && flag &&
        appnum)
        return *appnum;
    return -1;
}

/* After MPI_Init: the component's world (collective over the job's world). */
static void setup(void)
{
    const char *m = getenv("XFER_MPI_WORLD"), *n = getenv("XFER_COMPONENT");
    MPI_Errhandler eh;
    int color, rank;

    if (xw.ready)
        return;
    xw.ready = 1;
    if (!m || !*m)
        return;
    snprintf(xw.name, sizeof(xw.name), "%s", n && *n ? n : "(XFER_COMPONENT unset)");
    if (strcmp(m, "component") != 0 && strcmp(m, "job") != 0) {
        say("XFER_MPI_WORLD: expected component or job; MPI_COMM_WORLD is left the job's");
        return;
    }
    color = color_of();
    if (color < 0) {
        say("cannot tell this process's component (no XFER_WORLD_COLOR, no MPI_APPNUM); "
            "MPI_COMM_WORLD is left the job's");
        return;
    }
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (PMPI_Comm_split(MPI_COMM_WORLD, color, rank, &xw.comp) != MPI_SUCCESS) {
        say("cannot split the job's world by component; MPI_COMM_WORLD is left the job's");
        return;
    }
    if (PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh) == MPI_SUCCESS) {
        PMPI_Comm_set_errhandler(xw.comp, eh);
        PMPI_Errhandler_free(&eh);
    }
    PMPI_Comm_set_name(xw.comp, "MPI_COMM_WORLD");
    xw.world_f = PMPI_Comm_c2f(MPI_COMM_WORLD);
    xw.comp_f = PMPI_Comm_c2f(xw.comp);
    xw.mode = strcmp(m, "component") == 0 ? MODE_COMPONENT : MODE_JOB;
}

static void teardown(void)
{
    if (xw.comp != MPI_COMM_NULL)
        PMPI_Comm_free(&xw.comp);
    if (xw.job != MPI_COMM_NULL)
        PMPI_Comm_free(&xw.job);
    xw.mode = MODE_OFF;
}

/* The refusal, on stderr and, for xfer-run (which prints it when the run fails: the MPI
 * library's abort may end the processes before their output is forwarded), appended to
 * RUN_DIR/world.refused in one write. */
static void refuse(const char *fn)
{
    const char *dir = getenv("XFER_RUN_DIR");
    char msg[1024], path[4096];
    int n, fd;

    n = snprintf(msg, sizeof(msg),
                 "libxfer_world: %s on MPI_COMM_WORLD in component %s: in this MPMD launch "
                 "MPI_COMM_WORLD holds every component's processes (mpi_world: job), and the "
                 "other components never make this call, so it would wait for ever. Set "
                 "`mpi_world: component` for this component in the workflow file (its "
                 "MPI_COMM_WORLD then means its own processes), or use the communicator "
                 "xfer_comm() returns.\n",
                 fn, xw.name);
    if (n <= 0 || n >= (int) sizeof(msg))
        return;
    fputs(msg, stderr);
    if (dir && *dir && snprintf(path, sizeof(path), "%s/world.refused", dir) < (int) sizeof(path) &&
        (fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) >= 0) {
        if (write(fd, msg, (size_t) n) != n)
            fputs("libxfer_world: cannot tell xfer-run\n", stderr);
        close(fd);
    }
}

MPI_Comm xw_comm(MPI_Comm comm, const char *fn, int collective)
{
    if (comm != MPI_COMM_WORLD || xw.mode == MODE_OFF)
        return comm;
    if (xw.mode == MODE_COMPONENT)
        return xw.comp;
    if (!collective)
        return comm;
    refuse(fn);
    return MPI_COMM_NULL; /* the MPI library raises the error */
}

MPI_Comm xw_comp_world(void)
{
    return xw.mode == MODE_COMPONENT ? xw.comp : MPI_COMM_NULL;
}

MPI_Fint xw_fcomm(MPI_Fint comm, const char *fn, int collective)
{
    if (comm != xw.world_f || xw.mode == MODE_OFF)
        return comm;
    if (xw.mode == MODE_COMPONENT)
        return xw.comp_f;
    if (!collective)
        return comm;
    refuse(fn);
    return PMPI_Comm_c2f(MPI_COMM_NULL);
}

xw_fn_t xw_next(xw_fn_t *cache, const char *name)
{
    if (!*cache) {
        void *p = dlsym(RTLD_NEXT, name);
        if (!p) {
            fprintf(stderr, "libxfer_world: the MPI library has no %s\n", name);
            abort();
        }
        memcpy(cache, &p, sizeof(p));
    }
    return *cache;
}

/* The job's world for libxfer, duplicated when xfer_init first asks (collective over the job's
 * world, as xfer_init is): a program without libxfer makes no more communicators than the
 * split. */
int xfer_world_job(MPI_Comm *job)
{
    if (xw.mode == MODE_OFF)
        return 0;
    if (xw.job == MPI_COMM_NULL && PMPI_Comm_dup(MPI_COMM_WORLD, &xw.job) != MPI_SUCCESS) {
        xw.job = MPI_COMM_NULL;
        return 0;
    }
    *job = xw.job;
    return 1;
}

/* ---- set-up and the calls written by hand ------------------------------------------------ */

int MPI_Init(int *argc, char ***argv)
{
    const int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        setup();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    const int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        setup();
    return rc;
}

int MPI_Finalize(void)
{
    teardown();
    return PMPI_Finalize();
}

/* The predefined attributes are the job's (MPI attaches them to MPI_COMM_WORLD only). */
static int predefined(int keyval)
{
    return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
           keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_APPNUM || keyval == MPI_UNIVERSE_SIZE ||
           keyval == MPI_LASTUSEDCODE;
}

MPI_Comm xw_attr_comm(MPI_Comm comm, int keyval)
{
    return predefined(keyval) ? comm : xw_comm(comm, "MPI_Comm_get_attr", 0);
}

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag)
{
    return PMPI_Comm_get_attr(xw_attr_comm(comm, keyval), keyval, value, flag);
}

/* An error handler set on MPI_COMM_WORLD serves the component's world and the job's (whose
 * handler the MPI library calls for errors of no communicator). */
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    if (comm == MPI_COMM_WORLD && xw.mode == MODE_COMPONENT) {
        const int rc = PMPI_Comm_set_errhandler(xw.comp, errhandler);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return PMPI_Comm_set_errhandler(comm, errhandler);
}

/* The Fortran values of the predefined keys: Open MPI's are the C ones, MPICH's the C ones + 1
 * (mpif.h and mpi_f08 alike: MPI_TAG_UB is 0x64400002 against C's 0x64400001). */
static int fpredefined(MPI_Fint keyval)
{
#ifdef MPICH
    return predefined((int) keyval - 1);
#else
    return predefined((int) keyval);
#endif
}

MPI_Fint xw_fattr_comm(MPI_Fint comm, MPI_Fint keyval)
{
    return fpredefined(keyval) ? comm : xw_fcomm(comm, "MPI_Comm_get_attr", 0);
}

/* ---- Fortran entry points of set-up ------------------------------------------------------ */

/* The error code is last, absent (NULL) in mpi_f08 when the caller leaves it out, so whether MPI
 * is up is asked. No C header declares these. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#define XW_FINIT(fn)                                                                               \
    void fn(MPI_Fint *ierr)                                                                        \
    {                                                                                              \
        static xw_fn_t real;                                                                       \
        int up = 0;                                                                                \
        ((void (*)(MPI_Fint *)) xw_next(&real, #fn))(ierr);                                        \
        if (PMPI_Initialized(&up) == MPI_SUCCESS && up)                                            \
            setup();                                                                               \
    }
#define XW_FINIT_THREAD(fn)                                                                        \
    void fn(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)                                \
    {                                                                                              \
        static xw_fn_t real;                                                                       \
        int up = 0;                                                                                \
        ((void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *)) xw_next(&real, #fn))(required, provided,   \
                                                                             ierr);                \
        if (PMPI_Initialized(&up) == MPI_SUCCESS && up)                                            \
            setup();                                                                               \
    }
#define XW_FFINALIZE(fn)                                                                           \
    void fn(MPI_Fint *ierr)                                                                        \
    {                                                                                              \
        static xw_fn_t real;                                                                       \
        teardown();                                                                                \
        ((void (*)(MPI_Fint *)) xw_next(&real, #fn))(ierr);                                        \
    }

/* `use mpi_f08`, both libraries: MPICH's mpi_init_f08_ calls PMPI_Init, Open MPI's ompi_init_f */
XW_FINIT(mpi_init_f08_)
XW_FINIT_THREAD(mpi_init_thread_f08_)
XW_FFINALIZE(mpi_finalize_f08_)

#ifdef OPEN_MPI
/* Open MPI's mpif.h and `use mpi` (MPICH's call MPI_Init...), and their MPI_X_f08 aliases */
XW_FINIT(mpi_init)
XW_FINIT(mpi_init_)
XW_FINIT(mpi_init__)
XW_FINIT(MPI_INIT)
XW_FINIT(MPI_Init_f08)
XW_FINIT_THREAD(mpi_init_thread)
XW_FINIT_THREAD(mpi_init_thread_)
XW_FINIT_THREAD(mpi_init_thread__)
XW_FINIT_THREAD(MPI_INIT_THREAD)
XW_FINIT_THREAD(MPI_Init_thread_f08)
XW_FFINALIZE(mpi_finalize)
XW_FFINALIZE(mpi_finalize_)
XW_FFINALIZE(mpi_finalize__)
XW_FFINALIZE(MPI_FINALIZE)
XW_FFINALIZE(MPI_Finalize_f08)
#endif
