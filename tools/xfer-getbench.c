/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-getbench: the cost of one xfer_get, for comparing the language bindings with C
 * (bench/get-bench.sh, docs/bindings.md). Component `prod` puts a dataset `x` of --bytes bytes
 * (uint8) every step; component `cons` begins each step (waiting for the data), then times
 * xfer_get of the whole dataset into a buffer allocated once, and prints
 *   lang,call,bytes,steps,min_us,median_us,max_us
 * over the steps after the first (its warm-up). bench/getbench.py is the Python consumer.
 *   xfer-getbench [--steps N]      (XFER_CONFIG: a workflow of prod -> cons, dataset x)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

#include "common/cli.h"

#define XC(call)                                                                                   \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        if (st_ != XFER_SUCCESS) {                                                                 \
            fprintf(stderr, "xfer-getbench: %s: %s\n", #call, xfer_last_error());                  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const xfer_config_t *cfg;
    const xfer_cfg_dataset_t *d;
    xfer_channel_t *ch;
    xfer_t *x = NULL;
    xfer_step_status_t ss;
    int comp, steps = 50, s;
    size_t bytes;
    unsigned char *buf;
    double *t;

    {
        static const struct option longopts[] = {{"steps", required_argument, NULL, 's'},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {"version", no_argument, NULL, 'V'},
                                                 {NULL, 0, NULL, 0}};
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
            if (c == 'h') {
                printf("usage: xfer-getbench [--steps N] [-h|--help] [--version]\n"
                       "The cost of one xfer_get (bench/get-bench.sh; XFER_CONFIG: a workflow of\n"
                       "prod -> cons with one uint8 dataset x).\n");
                return 0;
            }
            if (c == 'V') {
                xfer_cli_version("xfer-getbench");
                return 0;
            }
            if (c == 's')
                steps = (int) xfer_cli_long("xfer-getbench", "--steps", optarg, 2, 1 << 30);
            else
                xfer_cli_bad_option("xfer-getbench", c, argv);
        }
        if (optind < argc)
            xfer_cli_usage_error("xfer-getbench", "unexpected argument \"%s\"", argv[optind]);
    }
    MPI_Init(&argc, &argv);
    XC(xfer_init(NULL, NULL, MPI_COMM_WORLD, &x));
    XC(xfer_config_of(x, &cfg, &comp));
    XC(xfer_channel_open(x, "c", &ch));
    d = &cfg->channels[0].datasets[0];
    bytes = (size_t) d->dims[0];
    buf = malloc(bytes + 1);
    t = calloc((size_t) steps, sizeof(double));
    if (!buf || !t || steps < 2)
        XC(XFER_ERR_INVALID_ARG);
    memset(buf, 7, bytes);
    for (s = 0; s < steps; s++) {
        XC(xfer_step_begin(ch, -1, &ss));
        if (strcmp(cfg->components[comp].name, "prod") == 0) {
            xfer_dataset_desc_t desc;
            memset(&desc, 0, sizeof(desc));
            desc.name = "x";
            desc.type = d->type;
            desc.ndims = 1;
            desc.dims[0] = desc.count[0] = d->dims[0];
            XC(xfer_put(ch, &desc, buf));
        } else {
            const double t0 = MPI_Wtime();
            XC(xfer_get(ch, "x", buf, bytes, NULL));
            t[s] = MPI_Wtime() - t0;
        }
        XC(xfer_step_end(ch));
    }
    if (strcmp(cfg->components[comp].name, "cons") == 0) {
        qsort(t + 1, (size_t) steps - 1, sizeof(double), cmp);
        printf("c,get,%zu,%d,%.2f,%.2f,%.2f\n", bytes, steps - 1, 1e6 * t[1],
               1e6 * t[1 + (steps - 1) / 2], 1e6 * t[steps - 1]);
    }
    XC(xfer_finalize(&x));
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
