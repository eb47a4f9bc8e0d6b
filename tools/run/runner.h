/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: the state of a run, shared by its supervision (supervise.c) and the start of its
 * helpers, ompi-server and xferd (daemons.c). */
#ifndef XFER_RUN_RUNNER_H
#define XFER_RUN_RUNNER_H

#include <sys/types.h>

#include <xfer/control.h>

#include "run.h"

typedef struct job {
    const char *name; /* the component (separate) or the launcher (mpmd: "mpiexec", "srun") */
    char *prefix;
    pid_t pid; /* > 0 while running */
    stream_t out, err;
    int stdin_w; /* Hydra, separate: the write end of its stdin, held open while it runs */
} job_t;

typedef struct runner {
    job_t *jobs;
    int njobs, running;
    int report_components; /* separate: name the failing component */
    pid_t server;
    int server_stopped;
    pid_t xferd;
    int xferd_stopped;
    int xferd_restarts;
    xfer_ctl_t *ctl;  /* xfer-run's connection to xferd: it reports exits */
    int grace_ms;     /* with xferd: a failure's peers get this long to fail on their own */
    int64_t stop_due; /* when the others are stopped after a failure (0: not pending) */
    int64_t watch_at; /* when xferd's verdicts are read next (watch_xferd) */
    int hung;         /* the first failure was xferd's verdict on a running component */
    const plan_t *pl;
    int devnull;
    int result;         /* exit code, fixed by the first cause; -1 while none */
    int64_t stop_at;    /* when the stop signal went out (0: not stopping) */
    int64_t done_since; /* since when only components that said bye are left (watch_xferd) */
    int64_t walltime;   /* deadline (0: none) */
    int64_t leftovers;  /* when the launch ended with processes left (0: not yet) */
    const char *walltime_text;
    int exits_fd;         /* RUN_DIR/EXITS_FIFO: the wrappers report abnormal ends (output.c) */
    unsigned char *ended; /* per component: its end was reported to xferd already */
    unsigned char *lost;  /* per component: a reader the others go on without (separate) */
    unsigned char *bye;   /* per component: it said bye to xferd (watch_xferd) */
    int readers_lost;     /* how many: the run's status is EXIT_READER_LOST if nothing else */
    int env_written;      /* RUN_DIR/RUN_ENV_FILE, for --attach (late.c) */
    int64_t hold_at;      /* a component started later (--attach) runs: asked again then */
    int held;             /* said so */
    char exits_buf[1024];
    size_t exits_len;
} runner_t;

/* supervise.c: collect ended processes; act on the signals that arrived (sig_pipe); send
 * @p sig to every launch and start the stop's clock */
void reap(runner_t *r);
void handle_signals(runner_t *r);
void stop_jobs(runner_t *r, int sig);

/* verdicts.c: xferd's verdicts and the run's failure reports */
void report_exit(runner_t *r, int j, int code); /* a job's components ended: tell xferd */
/* Do running peers of component @p failed hold a session with xferd (they fail on their own)? */
int peers_registered(runner_t *r, int failed);
/* A reader the others go on without (said in one line): 1; else 0 (its failure is the run's). */
int reader_lost(runner_t *r, int c, const char *how);
void how_ended(int code, char *how, size_t len); /* "exit code N", "signal S, Name" */
void report_first(runner_t *r, int c, int code); /* the run's first failure, in one line */
void report_errors(runner_t *r); /* an MPMD launch failed: each component's first error */
void watch_xferd(runner_t *r, int64_t now); /* every WATCH_MS: a component that stopped beating */
/* Once every launch here ended: components xferd says are running, started into the run by
 * another xfer-run (--attach), the first one's name into @p name. xferd and ompi-server stay
 * for them. */
int others_running(runner_t *r, char *name, size_t len);

/* daemons.c: start ompi-server (separate launches, Open MPI) and xferd, each waited for
 * (bounded) until it serves; 0 or -1 (said) */
int start_server(runner_t *r, const plan_t *pl, int devnull);
int start_xferd(runner_t *r, const plan_t *pl, int devnull);

#endif /* XFER_RUN_RUNNER_H */
