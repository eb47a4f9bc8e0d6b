/* SPDX-License-Identifier: BSD-3-Clause */
/* A plain MPI program for the launcher tests: each rank prints its component (XFER_COMPONENT),
 * MPI_APPNUM (-1 when the launcher sets none), its rank and the size of MPI_COMM_WORLD. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const char *component = getenv("XFER_COMPONENT");
    int rank = -1, size = -1, appnum = -1, flag = 0, *attr = NULL;

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
        MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS ||
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &attr, &flag) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (flag)
        appnum = *attr;
    printf("mpi_hello component=%s appnum=%d rank=%d world=%d\n", component ? component : "-",
           appnum, rank, size);
    fflush(stdout);
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
