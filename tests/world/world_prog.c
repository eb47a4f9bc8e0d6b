/* SPDX-License-Identifier: BSD-3-Clause */
/* An unmodified MPI program that uses MPI_COMM_WORLD throughout (tests/world/world_test.sh):
 * collectives, point to point, communicator constructors, topologies, attributes, error
 * handlers and a nonblocking collective, all on MPI_COMM_WORLD, every result checked against
 * what it must be for the world's size. Rank 0 prints one line that depends on the size only,
 * so a run as one component of an MPMD launch prints what a standalone run does. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "world_prog: check failed: %s: ", #cond);                              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size, i, sum = 0, max = 0, *all, *tub = NULL, flag = 0, cmp, prov;
    int dims[1] = {0}, periods[1] = {1}, left, right, got = -1, split_size, eh_ok;
    long long digest = 0, d2;
    MPI_Comm dup, half, cart;
    MPI_Errhandler eh;
    MPI_Request req;
    char name[MPI_MAX_OBJECT_NAME];
    int len;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* collectives */
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size - 1) / 2, "Allreduce sum %d over %d ranks", sum, size);
    MPI_Reduce(&rank, &max, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    CHECK(rank != 0 || max == size - 1, "Reduce max %d", max);
    all = malloc(sizeof(int) * (size_t) size);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (i = 0; i < size; i++)
        CHECK(all[i] == i, "Allgather[%d] = %d", i, all[i]);
    d2 = rank == 0 ? 12345 : 0;
    MPI_Bcast(&d2, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    CHECK(d2 == 12345, "Bcast %lld", d2);
    /* point to point round the world's ring */
    left = (rank - 1 + size) % size;
    right = (rank + 1) % size;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(got == left, "Sendrecv got %d from %d", got, left);
    /* constructors */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "Comm_compare(world, dup) = %d", cmp);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_size(half, &split_size);
    CHECK(split_size == (size + (rank % 2 ? 0 : 1)) / 2, "split size %d", split_size);
    MPI_Dims_create(size, 1, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Cart_shift(cart, 0, 1, &left, &right);
    CHECK(left == (rank - 1 + size) % size && right == (rank + 1) % size, "Cart_shift %d %d", left,
          right);
    /* attributes, name, error handlers */
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tub, &flag);
    CHECK(flag && *tub >= 32767, "MPI_TAG_UB");
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "name \"%s\"", name);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    eh_ok = eh == MPI_ERRORS_RETURN;
    CHECK(eh_ok, "errhandler not the one set");
    MPI_Errhandler_free(&eh);
    CHECK(MPI_Send(&rank, 1, MPI_INT, size, 0, MPI_COMM_WORLD) != MPI_SUCCESS,
          "a send to rank %d (the size) succeeded", size);
    /* a nonblocking collective */
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (i = 0; i < size; i++)
        digest = digest * 31 + all[i];
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("world_prog: %d ranks, sum %d, max %d, digest %lld, cart %d, failures %d\n", size,
               sum, max, digest, dims[0], failures);
    fflush(stdout);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    free(all);
    MPI_Finalize();
    return failures ? 1 : 0;
}
