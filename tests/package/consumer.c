/* SPDX-License-Identifier: BSD-3-Clause */
/* A program built against libxfer from outside its tree (the build tree or an install; CMake
 * package and pkg-config): MPI, an intercommunicator of the two halves of the world and an
 * xfer_allgather_inter over it, checked. Rank 0 says which libxfer it loaded, so the test can
 * tell the build tree's from the install's. Run with 2 or more ranks. */
#include <stdio.h>
#include <string.h>

#include <mpi.h>
#include <xfer/xfer.h>

int main(int argc, char **argv)
{
    int rank, size, half, low, remote, i, bad = 0;
    int got[64];
    MPI_Comm local, inter;
    xfer_coll_opts_t o;
    const char *version = NULL, *flavor = NULL, *path = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || size > 128) {
        fprintf(stderr, "consumer: run with 2 to 128 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    half = size / 2;
    low = rank < half;
    MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 7, &inter);
    MPI_Comm_remote_size(inter, &remote);
    xfer_coll_opts_init(&o);
    if (xfer_allgather_inter(&rank, 1, MPI_INT, got, 1, MPI_INT, inter, &o) != XFER_SUCCESS) {
        fprintf(stderr, "consumer: xfer_allgather_inter: %s\n", xfer_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (i = 0; i < remote; i++) /* the other half's world ranks, in order */
        bad |= got[i] != (low ? half : 0) + i;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0) {
        (void) xfer_library_version(&version, &flavor);
        if (xfer_library_path(&path) != XFER_SUCCESS)
            path = "(unknown)";
        printf("consumer: headers %s, libxfer %s (%s) from %s\n", XFER_VERSION_STRING, version,
               flavor, path);
        printf("consumer: xfer_allgather_inter on %d ranks: %s\n", size, bad ? "WRONG" : "ok");
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    MPI_Finalize();
    return bad;
}
