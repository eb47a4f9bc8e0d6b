/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An ordinary MPI program that knows nothing of libxfer: intercommunicator MPI_Allgather and
 * MPI_Allgatherv in full and half duplex, equal, skewed and zero counts, a derived datatype,
 * plus an intracommunicator MPI_Allgather that an interposer must leave alone. It checks its
 * results against the known data and prints a checksum of every receive buffer (gathered on
 * world rank 0, in rank order), so two runs can be compared byte for byte: one plain, one
 * under LD_PRELOAD=libxfer_pmpi.so.
 *
 * Usage: mpiexec -n P+Q plain_intercomm P
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors;

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ULL;
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static int val(int group, int rank, int i, int call)
{
    return (group + 1) * 1000003 + rank * 10007 + i * 3 + call * 101;
}

int main(int argc, char **argv)
{
    int p, wrank, wsize, group, rank, nl, nr, call, i, j;
    MPI_Comm local, inter;
    MPI_Datatype pair;
    uint64_t sums[64];
    int nsums = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    p = argc > 1 ? atoi(argv[1]) : wsize / 2;
    group = wrank < p ? 0 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, group, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, group ? 0 : p, 7, &inter);
    MPI_Comm_rank(local, &rank);
    MPI_Comm_size(local, &nl);
    MPI_Comm_remote_size(inter, &nr);
    MPI_Type_vector(2, 1, 3, MPI_INT, &pair); /* 2 ints, stride 3 */
    MPI_Type_commit(&pair);

    for (call = 0; call < 12; call++) {
        const int mode = call % 3; /* 0 full, 1 A->B, 2 B->A */
        const int k = call < 6 ? 5 + call : 16384 + call;
        const int me_sends = mode == 0 || (mode == 1 && group == 0) || (mode == 2 && group == 1);
        const int they_send = mode == 0 || (mode == 1 && group == 1) || (mode == 2 && group == 0);
        int *sbuf = malloc((size_t) (k + 1) * sizeof(int));
        int *rbuf = malloc((size_t) (k + 1) * (size_t) nr * sizeof(int) + 64);
        int *rcounts = malloc((size_t) nr * sizeof(int));
        int *displs = malloc((size_t) nr * sizeof(int));
        int scount, off = 0;
        size_t rbytes = (size_t) (k + 1) * (size_t) nr * sizeof(int) + 64;

        for (i = 0; i <= k; i++)
            sbuf[i] = val(group, rank, i, call);
        memset(rbuf, 0x77, rbytes);
        if (call % 2 == 0) { /* MPI_Allgather */
            scount = me_sends ? k : 0;
            MPI_Allgather(sbuf, scount, MPI_INT, rbuf, they_send ? k : 0, MPI_INT, inter);
            for (i = 0; they_send && i < nr; i++)
                for (j = 0; j < k; j++)
                    errors += rbuf[i * k + j] != val(1 - group, i, j, call);
        } else { /* MPI_Allgatherv, skewed counts with zeros, reversed displacements */
            scount = me_sends && rank % 2 == 0 ? k - rank : 0;
            for (i = nr - 1; i >= 0; i--) {
                rcounts[i] = they_send && i % 2 == 0 ? k - i : 0;
                displs[i] = off;
                off += rcounts[i] + 1;
            }
            MPI_Allgatherv(sbuf, scount, MPI_INT, rbuf, rcounts, displs, MPI_INT, inter);
            for (i = 0; i < nr; i++)
                for (j = 0; j < rcounts[i]; j++)
                    errors += rbuf[displs[i] + j] != val(1 - group, i, j, call);
        }
        sums[nsums++] = fnv(rbuf, rbytes);
        free(sbuf);
        free(rbuf);
        free(rcounts);
        free(displs);
    }
    { /* derived send type: `pair` picks ints 0 and 3 of each 4-int extent; 3 of them are
       * received as 6 contiguous ints */
        int sbuf[12], rbuf[6 * 8];
        for (i = 0; i < 12; i++)
            sbuf[i] = val(group, rank, i, 99);
        memset(rbuf, 0, sizeof(rbuf));
        MPI_Allgather(sbuf, 3, pair, rbuf, 6, MPI_INT, inter);
        for (i = 0; i < nr; i++)
            for (j = 0; j < 3; j++) {
                errors += rbuf[i * 6 + 2 * j] != val(1 - group, i, 4 * j, 99);
                errors += rbuf[i * 6 + 2 * j + 1] != val(1 - group, i, 4 * j + 3, 99);
            }
        sums[nsums++] = fnv(rbuf, sizeof(rbuf));
    }
    { /* intracommunicator allgather: must pass through untouched */
        int *all = malloc((size_t) wsize * sizeof(int));
        MPI_Allgather(&wrank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (i = 0; i < wsize; i++)
            errors += all[i] != i;
        sums[nsums++] = fnv(all, (size_t) wsize * sizeof(int));
        free(all);
    }
    {
        uint64_t *every = wrank == 0 ? malloc((size_t) wsize * 64 * sizeof(uint64_t)) : NULL;
        int total = 0;
        MPI_Gather(sums, 64, MPI_UINT64_T, every, 64, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (wrank == 0) {
            for (i = 0; i < wsize; i++)
                for (j = 0; j < nsums; j++)
                    printf("rank %d result %d checksum %016llx\n", i, j,
                           (unsigned long long) every[i * 64 + j]);
            printf("wrong elements: %d\n", total);
            free(every);
        }
        MPI_Bcast(&total, 1, MPI_INT, 0, MPI_COMM_WORLD);
        errors = total;
    }
    MPI_Type_free(&pair);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    MPI_Finalize();
    return errors ? 1 : 0;
}
