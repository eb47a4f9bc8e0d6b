/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer-run: start the components of a workflow file and supervise them (docs/launcher.md).
 *
 * mpmd: one mpiexec, one application context per component in file order (the runtime takes a
 * rank's component from MPI_APPNUM). separate: one mpiexec per component, each in its own
 * process group; the runtime joins them with MPI_Comm_connect/accept (Open MPI through one
 * ompi-server that xfer-run starts). Output lines carry a "[component] " prefix. The first
 * component to fail stops the others, and xfer-run exits with its code.
 *
 * No orphans: Hydra and ORTE start their ranks in sessions of their own (measured), so a signal
 * to a launcher's process group never reaches the ranks. A launcher cleans up its ranks when it
 * gets SIGTERM; for everything that escapes it, xfer-run is a child subreaper (Linux), so what a
 * dying launcher leaves behind is re-parented here, and the final sweep stops every remaining
 * descendant (TERM, 5 s, KILL) and reaps it.
 */
#define _GNU_SOURCE /* getopt_long, open_memstream */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

#include "run/memory.h"
#include "run/run.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xfer-run [options] FILE.yaml\n"
            "Start the components of a workflow file and supervise them.\n\n"
            "  --check                 validate FILE and exit\n"
            "  --print-config          print the effective configuration and exit\n"
            "  --dry-run               print the commands that would run and exit\n"
            "  --launch MODE           auto | mpmd | separate (overrides the file's launch)\n"
            "  --transport T           stream | file: every channel over MPI or through HDF5\n"
            "                          step files (default: $XFER_TRANSPORT, else the file's)\n"
            "  --launcher NAME         auto | mpiexec | slurm: Slurm's srun inside an\n"
            "                          allocation (auto), else mpiexec (default:\n"
            "                          $XFER_RUN_LAUNCHER, else auto)\n"
            "  --mpiexec PATH          launcher (default %s)\n"
            "  --mpiexec-flags FLAGS   extra launcher flags, split on spaces\n"
            "                          (default: $XFER_RUN_MPIEXEC_FLAGS)\n"
            "  --srun PATH             Slurm's srun (default: PATH)\n"
            "  --srun-flags FLAGS      extra srun flags, split on spaces\n"
            "                          (default: $XFER_RUN_SRUN_FLAGS)\n"
            "  --slurm-het             Slurm, mpmd: a heterogeneous step (one component per\n"
            "                          part) instead of --multi-prog\n"
            "  --run-dir DIR           rendezvous directory (default: the file's run_dir, else\n"
            "                          a fresh $TMPDIR/xfer-run.XXXXXX removed at the end)\n"
            "  --keep-run-dir          do not remove the fresh run directory\n"
            "  --walltime SEC          stop everything after SEC seconds (exit 124)\n"
            "  --xferd PATH            the control daemon (default: next to xfer-run, then\n"
            "                          the build tree, then PATH)\n"
            "  --no-daemon             run without the control plane (port files, no\n"
            "                          heartbeats or failure notices)\n"
            "  --no-yield              never preload the UCX yield helper (MPICH ch4:ucx\n"
            "                          with more processes than cores; also XFER_RUN_YIELD=0)\n"
            "  --without COMPONENT     launch the workflow without this reader (repeatable):\n"
            "                          it starts later, with --attach; the others get\n"
            "                          XFER_ABSENT\n"
            "  --attach COMPONENT      start this reader alone into the workflow running in\n"
            "                          --run-dir DIR (late, or back after it died)\n"
            "  -v, --verbose           say what xfer-run chooses and why (launch mode, yield\n"
            "                          helper, Python interpreters)\n"
            "  -q, --quiet             no output prefixes, no launcher notes\n"
            "  -h, --help              this text\n"
            "  --version               version and MPI flavour\n\n"
            "exit status: 0 all components succeeded; the first failing component's code\n"
            "(--attach: its code); 1 xferd declared a running component failed; 3 a reader of\n"
            "channels with on_reader_loss: continue or spill failed, the others completed;\n"
            "124 walltime exceeded; 128+N signal N; 2 usage, configuration or start errors\n",
            XFER_RUN_MPIEXEC);
}

/* Returns 0 to go on, 1 to exit 0 (help, version), -1 on a usage error. */
static int parse_args(int argc, char **argv, opts_t *o)
{
    enum {
        O_CHECK = 256,
        O_PRINT,
        O_DRY,
        O_LAUNCH,
        O_MPIEXEC,
        O_FLAGS,
        O_RUNDIR,
        O_KEEP,
        O_WALL,
        O_XFERD,
        O_NODAEMON,
        O_VERSION,
        O_LAUNCHER,
        O_SRUN,
        O_SRUNFLAGS,
        O_HET,
        O_TRANSPORT,
        O_NOYIELD,
        O_WITHOUT,
        O_ATTACH
    };
    static const struct option longopts[] = {{"check", no_argument, NULL, O_CHECK},
                                             {"print-config", no_argument, NULL, O_PRINT},
                                             {"dry-run", no_argument, NULL, O_DRY},
                                             {"launch", required_argument, NULL, O_LAUNCH},
                                             {"mpiexec", required_argument, NULL, O_MPIEXEC},
                                             {"mpiexec-flags", required_argument, NULL, O_FLAGS},
                                             {"run-dir", required_argument, NULL, O_RUNDIR},
                                             {"keep-run-dir", no_argument, NULL, O_KEEP},
                                             {"walltime", required_argument, NULL, O_WALL},
                                             {"xferd", required_argument, NULL, O_XFERD},
                                             {"no-daemon", no_argument, NULL, O_NODAEMON},
                                             {"launcher", required_argument, NULL, O_LAUNCHER},
                                             {"srun", required_argument, NULL, O_SRUN},
                                             {"srun-flags", required_argument, NULL, O_SRUNFLAGS},
                                             {"slurm-het", no_argument, NULL, O_HET},
                                             {"transport", required_argument, NULL, O_TRANSPORT},
                                             {"no-yield", no_argument, NULL, O_NOYIELD},
                                             {"without", required_argument, NULL, O_WITHOUT},
                                             {"attach", required_argument, NULL, O_ATTACH},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"verbose", no_argument, NULL, 'v'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, O_VERSION},
                                             {NULL, 0, NULL, 0}};
    int c;

    memset(o, 0, sizeof *o);
    o->mpiexec = XFER_RUN_MPIEXEC;
    o->mpiexec_flags = getenv("XFER_RUN_MPIEXEC_FLAGS");
    o->srun_flags = getenv("XFER_RUN_SRUN_FLAGS");
    o->launcher = getenv("XFER_RUN_LAUNCHER");
    o->transport = getenv("XFER_TRANSPORT");
    if (o->transport && !*o->transport)
        o->transport = NULL;
    if (!o->launcher || !*o->launcher)
        o->launcher = "auto";
    opterr = 0; /* our words, below */
    while ((c = getopt_long(argc, argv, ":qvh", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 1;
        case O_VERSION:
            printf("xfer-run (libxfer %s, MPI flavour %s)\n", XFER_VERSION_STRING, XFER_MPI_FLAVOR);
            return 1;
        case 'q':
            quiet = 1;
            break;
        case 'v':
            verbose = 1;
            break;
        case O_NOYIELD:
            o->no_yield = 1;
            break;
        case O_CHECK:
            o->check = 1;
            break;
        case O_WITHOUT:
            if (!o->without) /* at most one per argument */
                o->without = calloc((size_t) argc, sizeof(char *));
            if (!o->without) {
                run_error("out of memory");
                return -1;
            }
            o->without[o->nwithout++] = optarg;
            break;
        case O_ATTACH:
            if (o->attach && strcmp(o->attach, optarg) != 0) {
                run_error("--attach %s and --attach %s: one component at a time", o->attach,
                          optarg);
                return -1;
            }
            o->attach = optarg;
            break;
        case O_PRINT:
            o->print_config = 1;
            break;
        case O_DRY:
            o->dry_run = 1;
            break;
        case O_KEEP:
            o->keep_run_dir = 1;
            break;
        case O_NODAEMON:
            o->no_daemon = 1;
            break;
        case O_XFERD:
            o->xferd = optarg;
            break;
        case O_LAUNCH:
            if (strcmp(optarg, "auto") && strcmp(optarg, "mpmd") && strcmp(optarg, "separate")) {
                run_error("--launch: expected auto|mpmd|separate, got \"%s\"", optarg);
                return -1;
            }
            o->launch = optarg;
            break;
        case O_MPIEXEC:
            o->mpiexec = optarg;
            break;
        case O_LAUNCHER:
            o->launcher = optarg;
            break;
        case O_SRUN:
            o->srun = optarg;
            break;
        case O_SRUNFLAGS:
            o->srun_flags = optarg;
            break;
        case O_HET:
            o->slurm_het = 1;
            break;
        case O_TRANSPORT:
            o->transport = optarg;
            break;
        case O_FLAGS:
            o->mpiexec_flags = optarg;
            break;
        case O_RUNDIR:
            if (!*optarg) {
                run_error("--run-dir: empty directory name");
                return -1;
            }
            o->run_dir = optarg;
            break;
        case O_WALL: {
            char *end;
            errno = 0;
            o->walltime = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(o->walltime > 0) || o->walltime > 1e9) {
                run_error("--walltime: expected a positive number of seconds, got \"%s\"", optarg);
                return -1;
            }
            o->walltime_text = optarg;
            break;
        }
        case ':':
            run_error("%s needs a value (see xfer-run --help)", argv[optind - 1]);
            return -1;
        default: /* a known long option given a value it does not take sets optopt */
            run_error(optopt >= O_CHECK ? "%.*s takes no value (see xfer-run --help)"
                                        : "unknown option %.*s (see xfer-run --help)",
                      (int) strcspn(argv[optind - 1], "="), argv[optind - 1]);
            return -1;
        }
    }
    if (optind >= argc) {
        run_error("no workflow file (see xfer-run --help)");
        return -1;
    }
    if (optind + 1 < argc) {
        run_error("more than one workflow file: %s and %s", argv[optind], argv[optind + 1]);
        return -1;
    }
    o->file = argv[optind];
    if (strcmp(o->launcher, "auto") && strcmp(o->launcher, "mpiexec") &&
        strcmp(o->launcher, "slurm")) {
        run_error("--launcher (or XFER_RUN_LAUNCHER): expected auto|mpiexec|slurm, got \"%s\"",
                  o->launcher);
        return -1;
    }
    if (o->transport && strcmp(o->transport, "stream") && strcmp(o->transport, "file")) {
        run_error("--transport (or XFER_TRANSPORT): expected stream|file, got \"%s\"",
                  o->transport);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o;
    xfer_config_t *cfg = NULL;
    plan_t pl;
    int rc, i;
    xfer_status_t st;

    if (argc >= 2 && strcmp(argv[1], "--exec-prefixed") == 0)
        return exec_prefixed(argc, argv);
    rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        free(o.without);
        return rc > 0 ? 0 : EXIT_USAGE;
    }

    st = xfer_config_load(o.file, &cfg);
    if (st != XFER_SUCCESS) {
        const char *msg = xfer_last_error();
        if (msg && *msg)
            fprintf(stderr, "%s\n", msg);
        else
            fprintf(stderr, "%s: %s\n", o.file, xfer_status_string(st));
        free(o.without);
        return EXIT_USAGE;
    }
    rc = 0;
    if (o.check) {
        /* a Python component whose interpreter cannot import numpy and xfer fails the check:
         * the run would die at its start */
        char *py_ok = NULL;
        size_t py_len = 0;
        FILE *py_out = open_memstream(&py_ok, &py_len);
        int bad = py_out ? xfer_run_python_check(cfg, o.file, py_out, stderr) : 0;
        if (py_out)
            fclose(py_out);
        if (bad) {
            free(py_ok);
            rc = EXIT_USAGE;
            goto out;
        }
        printf("%s: ok (workflow %s: %d components, %d channels)\n", o.file, cfg->workflow,
               cfg->ncomponents, cfg->nchannels);
        fflush(stdout);
        xfer_run_memory_check(cfg, stdout, stderr); /* warnings only: the file is valid */
        fflush(stderr);
        if (py_ok)
            fputs(py_ok, stdout);
        free(py_ok);
    }
    if (o.print_config) {
        fflush(stdout);
        st = xfer_config_print(cfg, stdout);
        if (st != XFER_SUCCESS) {
            run_error("cannot print the configuration: %s", xfer_last_error());
            rc = EXIT_USAGE;
        }
    }
    if (o.check || o.print_config)
        goto out;

    if (build_plan(&pl, &o, cfg) != 0) {
        rc = EXIT_USAGE;
        goto plan_out;
    }
    if (o.dry_run) {
        if (pl.server.n)
            print_command(&pl.rootenv, &pl.server);
        if (pl.xferd.n)
            print_command(&pl.rootenv, &pl.xferd);
        for (i = 0; i < pl.nlines; i++)
            if (pl.lines[i].n) /* (an absent component has none) */
                print_command(&pl.rootenv, &pl.lines[i]);
        for (i = 0; i < (int) pl.mp_lines.n; i++) /* what --multi-prog's file would hold */
            printf("  %s\n", pl.mp_lines.v[i]);
        goto plan_out;
    }
    fflush(NULL);
    rc = run_workflow(&pl, &o);

plan_out:
    free_plan(&pl, o.keep_run_dir);
out:
    if (fflush(stdout) != 0 && rc == 0)
        rc = EXIT_USAGE;
    xfer_config_free(&cfg);
    free(o.without);
    return rc;
}
