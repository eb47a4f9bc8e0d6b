/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libxfer_world: a program's error handler on MPI_COMM_WORLD is given MPI_COMM_WORLD (world.c).
 *
 * Under mpi_world: component an error raised on MPI_COMM_WORLD is raised on the component's
 * world, and the MPI library calls the handler with that communicator's handle: a handler that
 * checks `*comm == MPI_COMM_WORLD` (MPICH's errhan tests do) would see another. So each
 * communicator error handler the program makes is made around a function of ours, which calls
 * the program's function with a pointer to MPI_COMM_WORLD when the library gave the component's
 * world, else with what the library gave (a communicator made from the world, the job's world).
 * The handle is the library's own object, as the program asked for it: MPI_Comm_get_errhandler
 * gives it back, its references are counted by the library, and nothing of ours is to be freed.
 *
 * Our functions are SLOTS trampolines, each bound to one function of the program (and its
 * language) when first needed; the handlers made for that function share it. Nothing is looked
 * up through MPI while a handler runs (MPICH 4.0 runs it holding its lock and, under
 * MPI_THREAD_MULTIPLE, aborts on a call that takes it again: MPI_Comm_get_errhandler would).
 * Handlers are made by MPI_Comm_create_errhandler, MPICH's MPI_Errhandler_create, and the
 * Fortran entry points that do not reach these (Open MPI's mpif.h and `use mpi`, both libraries'
 * `use mpi_f08`). A Fortran handler is given Fortran handles (MPI_Fint): Open MPI's differ from
 * C's, MPICH's are the same integers. A program with more than SLOTS handler functions gets its
 * own function for the rest (given the component's world's handle), after a note on stderr.
 *
 * Outside mpi_world: component (standalone, mpi_world: job, before MPI_Init) handlers are made
 * as the program asks.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "world.h"

typedef void (*xw_ffn_t)(MPI_Fint *comm, MPI_Fint *code); /* a Fortran handler */

enum { SLOTS = 64 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* written once each, under the lock, before the first handler that uses it exists */
static struct {
    MPI_Comm_errhandler_function *fn; /* the program's */
    int fortran;                      /* fn takes Fortran handles */
} slot[SLOTS];
static int nslots, full_said;

/* What every trampoline does: the program's function of slot @p k, given MPI_COMM_WORLD when
 * the library gave the component's world, else what it gave. Open MPI calls a C handler with
 * two more arguments (a message and NULL), MPICH with none: they are passed on. */
static void xw_errh_call(int k, MPI_Comm *comm, int *code, const char *message, void *more)
{
    MPI_Comm world = MPI_COMM_WORLD, comp = xw_comp_world();
    const int mine = comp != MPI_COMM_NULL && *comm == comp;

    if (slot[k].fortran) {
        MPI_Fint fcomm = PMPI_Comm_c2f(mine ? world : *comm), fcode = (MPI_Fint) *code;
        ((xw_ffn_t) (void (*)(void)) slot[k].fn)(&fcomm, &fcode);
        return;
    }
#ifdef OPEN_MPI
    slot[k].fn(mine ? &world : comm, code, message, more);
#else
    (void) message;
    (void) more;
    slot[k].fn(mine ? &world : comm, code);
#endif
}

/* trampoline k: two octal digits, 00 to 77 */
#ifdef OPEN_MPI
#define XW_TRAMP(k)                                                                                \
    static void xw_tramp_##k(MPI_Comm *comm, int *code, ...)                                       \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, code);                                                                        \
        const char *message = va_arg(ap, const char *);                                            \
        void *more = va_arg(ap, void *);                                                           \
        va_end(ap);                                                                                \
        xw_errh_call(0##k, comm, code, message, more);                                             \
    }
#else
#define XW_TRAMP(k)                                                                                \
    static void xw_tramp_##k(MPI_Comm *comm, int *code, ...)                                       \
    {                                                                                              \
        xw_errh_call(0##k, comm, code, NULL, NULL);                                                \
    }
#endif
#define XW_TRAMP8(k)                                                                               \
    XW_TRAMP(k##0)                                                                                 \
    XW_TRAMP(k##1)                                                                                 \
    XW_TRAMP(k##2)                                                                                 \
    XW_TRAMP(k##3)                                                                                 \
    XW_TRAMP(k##4)                                                                                 \
    XW_TRAMP(k##5)                                                                                 \
    XW_TRAMP(k##6)                                                                                 \
    XW_TRAMP(k##7)
XW_TRAMP8(0)
XW_TRAMP8(1)
XW_TRAMP8(2)
XW_TRAMP8(3)
XW_TRAMP8(4)
XW_TRAMP8(5)
XW_TRAMP8(6)
XW_TRAMP8(7)
#define XW_T8(k)                                                                                   \
    xw_tramp_##k##0, xw_tramp_##k##1, xw_tramp_##k##2, xw_tramp_##k##3, xw_tramp_##k##4,           \
        xw_tramp_##k##5, xw_tramp_##k##6, xw_tramp_##k##7
static MPI_Comm_errhandler_function *const tramp[SLOTS] = {XW_T8(0), XW_T8(1), XW_T8(2), XW_T8(3),
                                                           XW_T8(4), XW_T8(5), XW_T8(6), XW_T8(7)};

/* The trampoline of @p fn, bound now if it has none: NULL when every one is taken. */
static MPI_Comm_errhandler_function *trampoline(MPI_Comm_errhandler_function *fn, int fortran)
{
    MPI_Comm_errhandler_function *t = NULL;
    int k, say = 0;

    pthread_mutex_lock(&lock);
    for (k = 0; k < nslots && (slot[k].fn != fn || slot[k].fortran != fortran); k++)
        ;
    if (k == nslots && nslots < SLOTS) {
        slot[k].fn = fn;
        slot[k].fortran = fortran;
        nslots++;
    }
    if (k < nslots)
        t = tramp[k];
    else if (!full_said)
        say = full_said = 1;
    pthread_mutex_unlock(&lock);
    if (say)
        fprintf(stderr,
                "libxfer_world: more than %d error handler functions: the next ones are given "
                "the component's communicator, not MPI_COMM_WORLD\n",
                SLOTS);
    return t;
}

/* A handler made for the program: around a trampoline under mpi_world: component. */
static int make(MPI_Comm_errhandler_function *fn, int fortran, MPI_Errhandler *eh)
{
    MPI_Comm_errhandler_function *t = NULL;

    if (xw_comp_world() != MPI_COMM_NULL && fn)
        t = trampoline(fn, fortran);
    return PMPI_Comm_create_errhandler(t ? t : fn, eh);
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return make(fn, 0, errhandler);
}

#ifdef MPICH
/* deprecated (MPI-1), still in MPICH's header; Open MPI's makes it a compile-time error */
int MPI_Errhandler_create(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return make(fn, 0, errhandler);
}
#endif

/* An error raised by MPI_Comm_call_errhandler on MPI_COMM_WORLD reaches the handler that an
 * error of any other call on it does, the component's world's (xw_errh_call gives the handler
 * MPI_COMM_WORLD): MPI_Errhandler_set, which MPICH still has, sets that one only. */
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    return PMPI_Comm_call_errhandler(xw_comm(comm, "MPI_Comm_call_errhandler", 0), errorcode);
}

/* ---- Fortran entry points that make a handler without the C MPI_ names -------------------- */

/* Fortran entry points have no C header to declare them. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

/* A handler made from Fortran: around a trampoline under mpi_world: component, else by the
 * library's own entry point @p name (which marks the handler Fortran's, for Fortran handles).
 * ierr is absent (NULL) in mpi_f08 when the caller leaves it out. */
static void fmake(xw_fn_t *real, const char *name, void (*fn)(void), MPI_Fint *errhandler,
                  MPI_Fint *ierr)
{
    MPI_Comm_errhandler_function *t = NULL;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int rc;

    if (xw_comp_world() != MPI_COMM_NULL && fn)
        t = trampoline((MPI_Comm_errhandler_function *) fn, 1);
    if (!t) {
        ((void (*)(void (*)(void), MPI_Fint *, MPI_Fint *)) xw_next(real, name))(fn, errhandler,
                                                                                 ierr);
        return;
    }
    rc = PMPI_Comm_create_errhandler(t, &eh);
    if (rc == MPI_SUCCESS)
        *errhandler = PMPI_Errhandler_c2f(eh);
    if (ierr)
        *ierr = (MPI_Fint) rc;
}

#define XW_FMAKE(name)                                                                             \
    void name(void (*fn)(void), MPI_Fint *errhandler, MPI_Fint *ierr)                              \
    {                                                                                              \
        static xw_fn_t real;                                                                       \
        fmake(&real, #name, fn, errhandler, ierr);                                                 \
    }

/* `use mpi_f08`: both libraries' call PMPI_ names (MPICH) or the library's own (Open MPI) */
XW_FMAKE(mpi_comm_create_errhandler_f08_)
#ifdef OPEN_MPI
/* mpif.h and `use mpi` (libmpi_mpifh: ompi_comm_create_errhandler_f, not MPI_ names); MPICH's
 * call MPI_Comm_create_errhandler and MPI_Errhandler_create, above */
XW_FMAKE(mpi_comm_create_errhandler_)
XW_FMAKE(mpi_comm_create_errhandler)
XW_FMAKE(mpi_comm_create_errhandler__)
XW_FMAKE(MPI_COMM_CREATE_ERRHANDLER)
XW_FMAKE(MPI_Comm_create_errhandler_f08)
XW_FMAKE(mpi_errhandler_create_)
XW_FMAKE(mpi_errhandler_create)
XW_FMAKE(mpi_errhandler_create__)
XW_FMAKE(MPI_ERRHANDLER_CREATE)
XW_FMAKE(MPI_Errhandler_create_f08)
#endif
