/* SPDX-License-Identifier: BSD-3-Clause */
/* An unmodified MPI program's error handler on MPI_COMM_WORLD (tests/world/world_test.sh): a
 * handler made by MPI_Comm_create_errhandler and set on MPI_COMM_WORLD must be called with
 * MPI_COMM_WORLD and the error's class, for an error a call raises (a send to a rank past the
 * last), from MPI_Comm_call_errhandler, from two threads at once; with the duplicate for an
 * error on a duplicate of the world (which inherits the handler); MPI_Comm_get_errhandler must
 * give back the handle set; a predefined handler must work as set. Rank 0 prints one line that
 * depends on the world's size only, so a run as a component of an MPMD launch prints what a
 * standalone run does. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

enum { THREADS = 2, PER_THREAD = 50 };

static int failures;
static MPI_Comm expected; /* the communicator the handler must be given */
static int expected_class;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int calls_world, calls_dup;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "world_errh: check failed: %s: ", #cond);                              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            pthread_mutex_lock(&mu);                                                               \
            failures++;                                                                            \
            pthread_mutex_unlock(&mu);                                                             \
        }                                                                                          \
    } while (0)

static void handler(MPI_Comm *comm, int *code, ...)
{
    int cls = -1;
    MPI_Error_class(*code, &cls);
    CHECK(*comm == expected, "handler given communicator %#lx, not %s %#lx", (long) *comm,
          expected == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "the duplicate", (long) expected);
    CHECK(cls == expected_class, "handler given error class %d, not %d", cls, expected_class);
    pthread_mutex_lock(&mu);
    if (*comm == MPI_COMM_WORLD)
        calls_world++;
    else
        calls_dup++;
    pthread_mutex_unlock(&mu);
}

/* a send to rank `size` (no such rank) on @p comm: the handler's, then MPI_ERR_RANK returned */
static void bad_send(MPI_Comm comm, int size)
{
    int x = 0, cls = -1;
    const int rc = MPI_Send(&x, 1, MPI_INT, size, 0, comm);
    CHECK(rc != MPI_SUCCESS, "a send to rank %d succeeded", size);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "a send to rank %d returned class %d", size, cls);
}

static int world_size;

static void *thread_main(void *arg)
{
    int i;
    (void) arg;
    for (i = 0; i < PER_THREAD; i++)
        bad_send(MPI_COMM_WORLD, world_size);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size, prov, i, threads = 0, n[3];
    MPI_Errhandler eh, got;
    MPI_Comm dup;
    pthread_t t[THREADS];

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    world_size = size;
    MPI_Barrier(MPI_COMM_WORLD); /* (under mpi_world: job, refused: the handler is not set yet) */

    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    CHECK(got == eh, "MPI_Comm_get_errhandler(MPI_COMM_WORLD) is not the handler set");
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh); /* the world keeps it */

    /* an error a call on the world raises, and one the program raises */
    expected = MPI_COMM_WORLD;
    expected_class = MPI_ERR_RANK;
    bad_send(MPI_COMM_WORLD, size);
    expected_class = MPI_ERR_OTHER;
    CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER) == MPI_SUCCESS,
          "MPI_Comm_call_errhandler failed");
    /* from several threads at once */
    expected_class = MPI_ERR_RANK;
    if (prov == MPI_THREAD_MULTIPLE) {
        for (i = 0; i < THREADS; i++)
            if (pthread_create(&t[i], NULL, thread_main, NULL) == 0)
                threads++;
        for (i = 0; i < threads; i++)
            pthread_join(t[i], NULL);
        CHECK(threads == THREADS, "%d threads started", threads);
    } else {
        for (i = 0; i < THREADS; i++)
            thread_main(NULL);
    }

    /* a duplicate inherits the handler, which is given the duplicate */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_get_errhandler(dup, &got);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(got == eh, "the duplicate's handler is not the world's");
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh);
    expected = dup;
    bad_send(dup, size);
    expected_class = MPI_ERR_OTHER;
    MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
    MPI_Comm_free(&dup);

    /* a predefined handler, as set */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    CHECK(got == MPI_ERRORS_RETURN, "MPI_ERRORS_RETURN set, another handler got");
    MPI_Errhandler_free(&got);
    expected = MPI_COMM_NULL; /* the handler must not be called */
    bad_send(MPI_COMM_WORLD, size);

    CHECK(calls_world == 2 + THREADS * PER_THREAD && calls_dup == 2,
          "%d calls of the handler on MPI_COMM_WORLD, %d on the duplicate", calls_world, calls_dup);
    n[0] = calls_world;
    n[1] = calls_dup;
    n[2] = failures;
    MPI_Allreduce(MPI_IN_PLACE, n, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("world_errh: %d ranks, handler calls on MPI_COMM_WORLD %d, on the duplicate %d, "
               "failures %d\n",
               size, n[0], n[1], n[2]);
    fflush(stdout);
    MPI_Finalize();
    return n[2] ? 1 : 0;
}
