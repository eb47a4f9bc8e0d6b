/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer-isobench: isomorphic neighbourhood collectives side by side, in one run: MPI's
 * MPI_Neighbor_alltoall/allgather on the equivalent distributed-graph communicator, and
 * libxfer's straightforward (one exchange at a time, and all posted at once), torus
 * (message-combining) and torus-direct schedules as persistent requests, plus the automatic
 * choice and a blocking torus call (datatypes built per call).
 * Methods are interleaved inside each repetition; a repetition's time is the slowest process's,
 * after a barrier; the table gives the median over repetitions and rounds per operation.
 *
 *   mpiexec -n 8 xfer-isobench --d 2 --radius 1 [--vonneumann] [--op alltoall|allgather]
 *           [--sizes 8,64,512,4096,65536] [--reps 200] [--dims 4,2] [--csv FILE]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <xfer/xfer.h>

#include "common/cli.h"

enum { MAXD = 8, NMETH = 7 };

static const char *meth_name[NMETH] = {"MPI_Neighbor", "straight", "posted",        "torus",
                                       "direct",       "auto",     "torus-blocking"};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static void die(const char *what, xfer_status_t st)
{
    fprintf(stderr, "xfer-isobench: %s: %s (%s)\n", what, xfer_status_string(st),
            xfer_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s)
            break;
        out[n++] = (int) v;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv)
{
    int rank, size, d = 2, radius = 1, vonneumann = 0, allgather = 0, reps = 200;
    int dims[MAXD] = {0}, periods[MAXD], ndims_given = 0, sizes[32], nsizes;
    int *off = NULL, s = 0, *src, *dst, *ones;
    const char *csv_path = NULL;
    FILE *csv = NULL;
    MPI_Comm graph;
    xfer_iso_t *iso = NULL;
    xfer_iso_info_t info;
    struct rusage ru;
    long rss, rss_max;

    nsizes = parse_list("8,64,512,4096,65536", sizes, 32);
    {
        enum { O_D = 256, O_RADIUS, O_VN, O_OP, O_SIZES, O_REPS, O_DIMS, O_CSV, O_VERSION };
        static const struct option longopts[] = {{"d", required_argument, NULL, O_D},
                                                 {"radius", required_argument, NULL, O_RADIUS},
                                                 {"vonneumann", no_argument, NULL, O_VN},
                                                 {"op", required_argument, NULL, O_OP},
                                                 {"sizes", required_argument, NULL, O_SIZES},
                                                 {"reps", required_argument, NULL, O_REPS},
                                                 {"dims", required_argument, NULL, O_DIMS},
                                                 {"csv", required_argument, NULL, O_CSV},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {"version", no_argument, NULL, O_VERSION},
                                                 {NULL, 0, NULL, 0}};
        const char *prog = "xfer-isobench";
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
            switch (c) {
            case 'h':
                printf("usage: mpiexec -n N xfer-isobench [--d D] [--radius R] [--vonneumann]\n"
                       "           [--op alltoall|allgather] [--sizes a,b,...] [--reps N]\n"
                       "           [--dims x,y,...] [--csv FILE] [-h|--help] [--version]\n"
                       "The isomorphic neighbourhood collectives against MPI_Neighbor_*\n"
                       "(docs/isomorphic.md).\n");
                return 0;
            case O_VERSION:
                xfer_cli_version(prog);
                return 0;
            case O_D:
                d = (int) xfer_cli_long(prog, "--d", optarg, 1, MAXD);
                break;
            case O_RADIUS:
                radius = (int) xfer_cli_long(prog, "--radius", optarg, 1, 64);
                break;
            case O_VN:
                vonneumann = 1;
                break;
            case O_OP:
                if (strcmp(optarg, "alltoall") && strcmp(optarg, "allgather"))
                    xfer_cli_usage_error(prog, "--op: expected alltoall or allgather");
                allgather = strcmp(optarg, "allgather") == 0;
                break;
            case O_SIZES:
                nsizes = parse_list(optarg, sizes, 32);
                break;
            case O_REPS:
                reps = (int) xfer_cli_long(prog, "--reps", optarg, 1, 1 << 30);
                break;
            case O_DIMS:
                ndims_given = parse_list(optarg, dims, MAXD);
                break;
            case O_CSV:
                csv_path = optarg;
                break;
            default:
                xfer_cli_bad_option(prog, c, argv);
            }
        }
        if (optind < argc)
            xfer_cli_usage_error(prog, "unexpected argument \"%s\"", argv[optind]);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (d < 1 || d > MAXD || radius < 1 || reps < 1 || nsizes < 1 ||
        (ndims_given && ndims_given != d)) {
        if (rank == 0)
            fprintf(stderr, "xfer-isobench: bad --d, --radius, --reps, --sizes or --dims\n");
        MPI_Finalize();
        return 2;
    }
    if (MPI_Dims_create(size, d, dims) != MPI_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "xfer-isobench: --dims do not multiply to %d processes\n", size);
        MPI_Finalize();
        return 2;
    }
    for (int j = 0; j < d; j++)
        periods[j] = 1;

    /* The neighbourhood: Moore (all nonzero vectors with |c_j| <= r) or von Neumann (2rd). */
    {
        xfer_iso_stencil_t kind = vonneumann ? XFER_ISO_VON_NEUMANN : XFER_ISO_MOORE;
        xfer_status_t st = xfer_iso_stencil(kind, d, radius, 0, NULL, &s);
        if (st == XFER_ERR_TOO_LARGE && (off = malloc(sizeof(int) * (size_t) s * (size_t) d)))
            st = xfer_iso_stencil(kind, d, radius, s, off, &s);
        if (st != XFER_SUCCESS)
            die("xfer_iso_stencil", st);
    }
    {
        xfer_status_t st = xfer_iso_create(MPI_COMM_WORLD, d, dims, periods, s, off, &iso);
        if (st != XFER_SUCCESS)
            die("xfer_iso_create", st);
        xfer_iso_get_info(iso, &info);
    }
    /* MPI's graph: sources R - C^i, destinations R + C^i (row-major coordinates). */
    src = malloc(sizeof(int) * (size_t) s);
    dst = malloc(sizeof(int) * (size_t) s);
    ones = malloc(sizeof(int) * (size_t) s);
    if (!src || !dst || !ones)
        MPI_Abort(MPI_COMM_WORLD, 1);
    {
        int c[MAXD], x = rank;
        for (int j = d - 1; j >= 0; j--) {
            c[j] = x % dims[j];
            x /= dims[j];
        }
        for (int i = 0; i < s; i++) {
            int a = 0, b = 0;
            for (int j = 0; j < d; j++) {
                int p = ((c[j] + off[i * d + j]) % dims[j] + dims[j]) % dims[j];
                int q = ((c[j] - off[i * d + j]) % dims[j] + dims[j]) % dims[j];
                a = a * dims[j] + p;
                b = b * dims[j] + q;
            }
            dst[i] = a;
            src[i] = b;
            ones[i] = 1; /* not MPI_UNWEIGHTED: GCC 12 flags Open MPI's (int *) 2 */
        }
    }
    if (MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, s, src, ones, s, dst, ones, MPI_INFO_NULL, 0,
                                       &graph) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);

    if (rank == 0) {
        printf("# xfer-isobench: %s, %d processes, torus", allgather ? "allgather" : "alltoall",
               size);
        for (int j = 0; j < d; j++)
            printf("%s%d", j ? "x" : " ", dims[j]);
        printf(", %s r=%d d=%d: s=%d D=%d V=%ld W=%ld direct rounds=%d, %d repetitions\n",
               vonneumann ? "von Neumann" : "Moore", radius, d, s, info.D, info.V, info.W,
               info.direct_rounds, reps);
        printf("%8s  %-15s %6s %12s %12s %9s\n", "bytes", "method", "rounds", "median_us", "min_us",
               "vs_MPI");
        if (csv_path && !(csv = fopen(csv_path, "w"))) {
            perror(csv_path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (csv)
            fprintf(csv, "op,d,radius,vonneumann,np,s,bytes,method,rounds,median_us,min_us\n");
    }

    for (int z = 0; z < nsizes; z++) {
        int m = sizes[z], nsend = allgather ? 1 : s, rounds[NMETH] = {0};
        char *sbuf = malloc((size_t) nsend * (size_t) m + 1),
             *rbuf = malloc((size_t) s * (size_t) m + 1);
        double *t = malloc(sizeof(double) * (size_t) reps * NMETH), med[NMETH], mn[NMETH];
        xfer_iso_req_t *req[NMETH] = {NULL};
        xfer_iso_opts_t o;
        if (!sbuf || !rbuf || !t)
            MPI_Abort(MPI_COMM_WORLD, 1);
        memset(sbuf, rank & 0xff, (size_t) nsend * (size_t) m + 1);
        rounds[0] = s;
        for (int k = 1; k <= 5; k++) {
            static const char *algo[] = {NULL, "straight", "posted", "torus", "direct", "auto"};
            const char *name;
            xfer_status_t st;
            xfer_iso_opts_init(&o);
            o.algorithm = algo[k];
            st = allgather ? xfer_iso_allgather_init(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o,
                                                     &req[k])
                           : xfer_iso_alltoall_init(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o,
                                                    &req[k]);
            if (st != XFER_SUCCESS)
                die("init", st);
            xfer_iso_req_algorithm(req[k], &name, &rounds[k]);
        }
        rounds[6] = rounds[3];
        xfer_iso_opts_init(&o);
        o.algorithm = "torus";
        for (int r = -5; r < reps; r++) { /* 5 warm-up repetitions */
            for (int k = 0; k < NMETH; k++) {
                double t0, dt;
                xfer_status_t st = XFER_SUCCESS;
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                if (k == 0) {
                    int rc =
                        allgather
                            ? MPI_Neighbor_allgather(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, graph)
                            : MPI_Neighbor_alltoall(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, graph);
                    if (rc != MPI_SUCCESS)
                        MPI_Abort(MPI_COMM_WORLD, 1);
                } else if (k == 6) {
                    st = allgather
                             ? xfer_iso_allgather(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o)
                             : xfer_iso_alltoall(sbuf, m, MPI_BYTE, rbuf, m, MPI_BYTE, iso, &o);
                } else {
                    st = xfer_iso_start(req[k]);
                    if (st == XFER_SUCCESS)
                        st = xfer_iso_wait(req[k]);
                }
                if (st != XFER_SUCCESS)
                    die(meth_name[k], st);
                dt = MPI_Wtime() - t0;
                MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (r >= 0)
                    t[k * reps + r] = dt;
            }
        }
        for (int k = 0; k < NMETH; k++) {
            qsort(t + k * reps, (size_t) reps, sizeof(double), cmp_double);
            med[k] = t[k * reps + reps / 2];
            mn[k] = t[k * reps];
        }
        if (rank == 0) {
            for (int k = 0; k < NMETH; k++) {
                printf("%8d  %-15s %6d %12.2f %12.2f %9.2f\n", m, meth_name[k], rounds[k],
                       med[k] * 1e6, mn[k] * 1e6, med[0] / med[k]);
                if (csv)
                    fprintf(csv, "%s,%d,%d,%d,%d,%d,%d,%s,%d,%.3f,%.3f\n",
                            allgather ? "allgather" : "alltoall", d, radius, vonneumann, size, s, m,
                            meth_name[k], rounds[k], med[k] * 1e6, mn[k] * 1e6);
            }
            fflush(stdout);
        }
        for (int k = 1; k <= 5; k++)
            xfer_iso_req_free(&req[k]);
        free(sbuf);
        free(rbuf);
        free(t);
    }
    getrusage(RUSAGE_SELF, &ru);
    rss = ru.ru_maxrss;
    MPI_Reduce(&rss, &rss_max, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# peak RSS of the largest process: %.1f MiB\n", rss_max / 1024.0);
        if (csv)
            fclose(csv);
    }
    MPI_Comm_free(&graph);
    xfer_iso_free(&iso);
    free(off);
    free(src);
    free(dst);
    free(ones);
    MPI_Finalize();
    return 0;
}
