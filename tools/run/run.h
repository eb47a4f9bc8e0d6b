/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run's modules (tools/run/): what they share. xfer-run.c parses the options and runs the
 * stages: plan.c builds the launch plan, with launch.c's launcher command lines; supervise.c
 * runs it, with proc.c (descendants, signals, spawning), output.c (prefixed output) and
 * verdicts.c (xferd's verdicts, the failure reports); util.c
 * has the small helpers, memory.c the --check memory estimate. */
#ifndef XFER_RUN_H
#define XFER_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <xfer/xfer.h>

#ifndef XFER_RUN_MPIEXEC
#error "the build defines XFER_RUN_MPIEXEC, the launcher of the MPI flavour"
#endif

enum {
    EXIT_FAILED = 1,      /* xferd declared a running component failed (it stopped beating) */
    EXIT_USAGE = 2,       /* bad options, invalid file, command not found, start failure */
    EXIT_READER_LOST = 3, /* a component that only reads channels with on_reader_loss: continue
                             or spill failed; the others completed (supervise.c) */
    EXIT_WALLTIME = 124   /* --walltime exceeded */
};

/* Only the planning stage allocates; running out of memory there ends the program before
 * anything was started. */
#define XFER_XALLOC_PROG "xfer-run"
#define XFER_XALLOC_EXIT EXIT_USAGE
#include "common/xalloc.h"

#define KILL_AFTER_MS     5000  /* SIGTERM (or the forwarded signal), then SIGKILL after this */
#define LEFTOVER_GRACE_MS 2000  /* leftovers of a finished launch may exit on their own first */
#define SERVER_WAIT_MS    10000 /* bound on ompi-server writing its URI, xferd its ready file */
#define XFERD_STOP_MS     3000  /* bound on xferd answering "stop" */
#define XFERD_RESTARTS    3     /* a crashed xferd is restarted (from its journal) this often */
#define WATCH_MS          1000  /* xferd's verdicts are read this often (supervise.c) */
#define LINE_MAX_BYTES    65536 /* longer output lines are split */

extern int quiet;       /* -q: no prefixes, no notes */
extern int verbose;     /* -v: the choices xfer-run makes, and why */
extern int sig_pipe[2]; /* signals arrive here as bytes (proc.c) */

/* A growing, NULL-terminated argument vector that owns its strings. */
typedef struct strv {
    char **v;
    size_t n, cap;
} strv_t;

typedef struct stream {
    int fd;             /* read end; -1 at EOF */
    int dest;           /* 1 or 2 */
    const char *prefix; /* "[name] " (NULL: none) */
    size_t plen;        /* its length */
    char *buf;          /* the pending partial line */
    size_t len;
    char *line;       /* the prefix, then room for a line and its newline: what one write sends */
    char *import_err; /* the first Python import error line, IMPORT_ERR_MAX (NULL: not kept) */
} stream_t;

typedef struct opts {
    const char *file;
    const char *mpiexec;
    const char *mpiexec_flags;
    const char *run_dir;
    const char *launch;
    const char *walltime_text;
    const char *xferd;
    const char *launcher;   /* auto | mpiexec | slurm (default: $XFER_RUN_LAUNCHER, else auto) */
    const char *srun;       /* Slurm's srun (default: PATH) */
    const char *srun_flags; /* extra srun flags (default: $XFER_RUN_SRUN_FLAGS) */
    const char *transport;  /* stream | file for every channel (default: $XFER_TRANSPORT) */
    double walltime;
    int check, print_config, dry_run, keep_run_dir, no_daemon, slurm_het;
    int no_yield;         /* --no-yield: never preload the UCX yield helper (yield.c) */
    const char **without; /* --without: components not launched (late.c) */
    int nwithout;
    const char *attach; /* --attach: the one component started into a running workflow */
} opts_t;

typedef struct plan {
    const xfer_config_t *cfg;
    xfer_launch_t mode;
    int openmpi;
    int slurm;         /* the launcher is Slurm's srun (else mpiexec) */
    char *srun;        /* its path */
    char *env;         /* env(1), which sets a component's environment under srun */
    int in_allocation; /* inside a Slurm allocation (SLURM_JOB_ID): srun starts job steps */
    char *multiprog;   /* srun --multi-prog: the file (in the run directory) */
    strv_t mp_lines;   /* its lines */
    char *self;        /* this executable, absolute */
    char *config_path; /* the workflow file, absolute */
    char *run_dir;     /* absolute */
    int run_dir_tmp;   /* made by mkdtemp: removed at the end */
    char *run_id;      /* XFER_RUN_ID: tells this run's step files (transport: file) from others */
    const char *transport;     /* XFER_TRANSPORT for every component (NULL: the file's) */
    const char *transport_dir; /* XFER_TRANSPORT_DIR (NULL: the file's) */
    char *uri;                 /* ompi-server's URI file (Open MPI, separate) */
    strv_t server;             /* the ompi-server command */
    strv_t *lines; /* the mpiexec commands: one (mpmd) or one per component (separate) */
    int nlines;
    strv_t rootenv; /* NAME=value xfer-run adds to its own environment */
    /* the control plane: xferd, started here unless the file names a running one */
    char *endpoint;    /* NULL: no control plane */
    char *bind;        /* what xferd binds, when not endpoint (TCP for remote components) */
    char *token_file;  /* the workflow token */
    int make_token;    /* xfer-run writes a fresh token there */
    char *ready;       /* xferd writes its endpoint here once it serves */
    char *journal;     /* xferd's journal */
    strv_t xferd;      /* the xferd command (empty: none to start) */
    int hb_timeout_ms; /* xferd's failure detection bound */
    char *yield_lib;   /* the UCX yield helper every MPI process preloads (NULL: none) */
    char **python;     /* per component: the Python interpreter it runs (NULL: not Python) */
    /* late and returning components (late.c) */
    unsigned char *absent; /* per component: not launched by this xfer-run (--without, --attach) */
    char *absent_names;    /* XFER_ABSENT: --without's components, comma separated (NULL: none) */
    int attach;            /* --attach: the component started into a running workflow; -1 */
    char *env_file;        /* RUN_DIR/RUN_ENV_FILE: what the components get, for --attach */
    char *cwd;             /* --attach: the running workflow's working directory */
    long run_pid;          /* --attach: that run's xfer-run (0: unknown) */
    strv_t run_env;        /* --attach: RUN_ENV_FILE's NAME=value lines */
    char *exits;           /* the wrappers report ends here: RUN_DIR/EXITS_FIFO, or under --attach
                              a FIFO of its own (XFER_RUN_EXITS), the run's being its xfer-run's */
} plan_t;

/* util.c: small helpers: messages, allocation, argument vectors, time, descriptors, paths */
char *abs_path(const char *path);
char *self_exe(void); /* this executable, absolute (exits when /proc/self/exe is unreadable) */
char *dir_of(const char *path);
char *find_in_path(const char *name);
int cloexec_pipe(int p[2]);
int is_exec_file(const char *path);
int set_cloexec(int fd);
int status_code(int st);
int64_t now_ms(void);
void close_fd(int *fd);
void run_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void run_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void run_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sv_free(strv_t *s);
void sv_push(strv_t *s, const char *str);
void sv_take(strv_t *s, char *str);

/* output.c: output forwarding ("[name] " before every line) and the --exec-prefixed mode, the
 * wrapper of every process of an mpiexec launch, which reports an abnormal end to xfer-run
 * through the FIFO RUN_DIR/EXITS_FIFO (supervise.c) */
#define EXITS_FIFO     "exits.fifo"
#define IMPORT_ERR_MAX 256 /* a Python import error reported with an end (supervise.c) */
int exec_prefixed(int argc, char **argv);
int stream_init(stream_t *s, int fd, int dest, const char *prefix);
int stream_pump(stream_t *s);
void stream_free(stream_t *s); /* its buffers (NULL after) */

/* proc.c: the descendants of this process, signals as poll events, spawning */
int install_signals(void);
int signal_descendants(int sig);
int spawn(char *const argv[], int in_fd, int out_fd, int err_fd, pid_t *pid_out);

/* plan.c: the launch plan: the launch mode, commands, the run directory, the control plane */
/* cmd[0] as the launch finds it: with a '/', relative to the workflow file's directory; else
 * beside xfer-run, then in PATH. NULL with the reason in *why (caller frees both). */
char *resolve_command(const char *cmd, const char *self_dir, const char *yaml_dir, char **why);
int build_plan(plan_t *pl, const opts_t *o, const xfer_config_t *cfg);
/* Channel @p k's on_reader_loss (XFER_ON_READER_LOSS overrides the file's); detachable: a
 * half-duplex channel whose sender goes on without its reader (continue or spill). */
xfer_reader_loss_t loss_policy(const xfer_config_t *cfg, int k);
int loss_detachable(const xfer_config_t *cfg, int k);
const char *loss_word(xfer_reader_loss_t loss); /* "fail", "continue", "spill" */
/* May component @p c fail without stopping the others: it only reads, on detachable channels?
 * Their policy and names into @p names ("continue (channel c)", "spill (channels c, d)"). */
int reader_expendable(const xfer_config_t *cfg, int c, char *names, size_t len);
void free_plan(plan_t *pl, int keep_run_dir);
void print_command(const strv_t *env, const strv_t *cmd);

/* launch.c: the launchers: how a plan's contexts become launcher command lines */
void add_context(const plan_t *pl, int c, const char *cmd, strv_t *s);

/* world.c: components[].mpi_world in an MPMD launch. world_check: -1 (said) when a component
 * needs libxfer_world.so and there is none. world_env: the variables of component @p c's
 * processes, as name, value pairs into @p names. world_preload: in the wrapper's child, before
 * the program starts, libxfer_world.so appended to its LD_PRELOAD. */
int world_check(const plan_t *pl);
void world_env(const plan_t *pl, int c, strv_t *names);
void world_preload(void);
/* After a failed run: what libxfer_world refused (mpi_world: job), once. */
void world_refusals(const plan_t *pl);
void add_launcher(const plan_t *pl, const opts_t *o, strv_t *s);
int slurm_lines(plan_t *pl, const opts_t *o, const char *const *cmds);

/* python.c: Python components: the interpreter a component runs (its cmd[0] when that is a
 * python, else its script's #! line), and --check's import of numpy and xfer in it */
typedef struct py_interp {
    char *path;   /* the interpreter, as the launch finds it */
    strv_t opts;  /* its options before the script (-u, -I, -S, -X ...) */
    char *script; /* the script whose #! line names it (NULL: cmd[0] is the interpreter) */
    char *dir;    /* the run's sys.path[0]: the script's directory (NULL: the working one) */
} py_interp_t;
int python_of(const char *cmd, const xfer_cfg_component_t *k, py_interp_t *py); /* 1: Python */
void python_free(py_interp_t *py);
/* Starts each Python component's interpreter once; what it imports to @p out, what it cannot
 * (the interpreter, the ImportError, the fix) to @p err. Returns the number that cannot. */
int xfer_run_python_check(const xfer_config_t *cfg, const char *file, FILE *out, FILE *err);

/* yield.c: the UCX yield helper for oversubscribed MPICH ch4:ucx runs */
char *mpich_device(const char *version); /* "ch4:ucx" from MPI_Get_library_version's text */
int plan_yield(plan_t *pl, const opts_t *o, const char *self_dir);
char *yield_preload(const plan_t *pl, int c); /* component c's LD_PRELOAD, helper added */

/* late.c: components that start later or come back (--without, --attach, RUN_ENV_FILE) */
#define RUN_ENV_FILE "xfer-run.env"
int plan_late(plan_t *pl, const opts_t *o);   /* the components not launched; -1: refused */
int attach_env(plan_t *pl, const opts_t *o);  /* --attach: the running workflow's RUN_ENV_FILE */
int write_run_env(const plan_t *pl);          /* at start, once xferd serves */
void end_run_env(const plan_t *pl, int code); /* at the end: XFER_RUN_ENDED */
int attach_run_alive(const plan_t *pl);       /* is the run attached to still running? */
int channel_file(const plan_t *pl, int k);    /* channel k travels through files */

/* supervise.c: running the plan: servers, xferd, the launches, supervision to the end */
int run_workflow(const plan_t *pl, const opts_t *o);

#endif
