/* SPDX-License-Identifier: BSD-3-Clause */
/* Joining components: which component this process is, the launch mode, and the
 * intercommunicator of each channel (MPMD split, or connect/accept through a port file). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

#define XFER_FORM_TAG 0x5800

static const char *const launch_names[] = {"auto", "mpmd", "separate", "user"};

static xfer_status_t components_list(const xfer_config_t *c, char *buf, size_t len)
{
    size_t o = 0;
    int i;
    buf[0] = '\0';
    for (i = 0; i < c->ncomponents && o < len; i++)
        o += (size_t) snprintf(buf + o, len - o, "%s%s", i ? ", " : "", c->components[i].name);
    return XFER_SUCCESS;
}

xfer_status_t xfer_rt_launch_mode(struct xfer *x, const char *component)
{
    const xfer_config_t *c = x->cfg;
    xfer_status_t st = XFER_SUCCESS;
    const char *env = xfer_env_str("XFER_LAUNCH");
    int *appnum_p = NULL, flag = 0, appnum = -1, maxapp = -1, size, i;
    int *comp_of = NULL;

    x->launch = c->launch;
    if (env) {
        for (i = 0; i < 4; i++)
            if (strcmp(env, launch_names[i]) == 0)
                x->launch = (xfer_launch_t) i;
        if (strcmp(env, launch_names[x->launch]) != 0) {
            x->launch = c->launch; /* agreed below, with the component */
            st = XFER_ERR(XFER_ERR_CONFIG,
                          "XFER_LAUNCH=\"%s\": expected auto, mpmd, separate or user", env);
        }
    }
    if (MPI_Comm_get_attr(x->world, MPI_APPNUM, &appnum_p, &flag) == MPI_SUCCESS && flag &&
        appnum_p)
        appnum = *appnum_p;
    XFER_MPI_GOTO(MPI_Allreduce(&appnum, &maxapp, 1, MPI_INT, MPI_MAX, x->world), st, out);
    if (x->launch == XFER_LAUNCH_AUTO)
        x->launch = maxapp >= 1 ? XFER_LAUNCH_MPMD : XFER_LAUNCH_SEPARATE;

    if (!component)
        component = xfer_env_str("XFER_COMPONENT");
    if (component) {
        if (xfer_config_component(c, component, &x->comp) != XFER_SUCCESS) {
            char list[512];
            components_list(c, list, sizeof(list));
            st = XFER_ERR(XFER_ERR_NOT_FOUND,
                          "component \"%s\" is not in workflow %s (components: %s); check "
                          "XFER_COMPONENT, the name passed to xfer_init or xfer-run's --component",
                          component, c->workflow, list);
        }
    } else if (x->launch == XFER_LAUNCH_MPMD && appnum >= 0 && appnum < c->ncomponents) {
        x->comp = appnum; /* application context k of the launch is component k of the file */
    } else {
        st = XFER_ERR(XFER_ERR_INVALID_ARG,
                      "which component is this? pass its name to xfer_init or set "
                      "XFER_COMPONENT (launch: %s)",
                      launch_names[x->launch]);
    }
    /* Some ranks may not know their component (a name misspelled for a few of them): every
     * rank hears of it before the next collective, which those ranks could not join. */
    st = xfer_rt_agree(x->world, st);
    if (st != XFER_SUCCESS)
        goto out;
    XFER_MPI_GOTO(MPI_Comm_rank(x->world, &x->rank), st, out);
    XFER_MPI_GOTO(MPI_Comm_size(x->world, &size), st, out);

    if (x->launch != XFER_LAUNCH_MPMD) {
        XFER_MPI_GOTO(MPI_Comm_dup(x->world, &x->comm), st, out);
        x->size = size;
        if (size != c->components[x->comp].nprocs)
            return XFER_ERR(XFER_ERR_CONFIG,
                            "component %s runs on %d ranks; the workflow file says nprocs: %d",
                            c->components[x->comp].name, size, c->components[x->comp].nprocs);
        return XFER_SUCCESS;
    }

    /* MPMD: every rank says which component it is; the component's ranks split off. */
    comp_of = xfer_calloc((size_t) size, sizeof(int));
    x->leader = xfer_calloc((size_t) c->ncomponents, sizeof(int));
    x->nranks = xfer_calloc((size_t) c->ncomponents, sizeof(int));
    if (!comp_of || !x->leader || !x->nranks) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "component table");
        goto out;
    }
    XFER_MPI_GOTO(MPI_Allgather(&x->comp, 1, MPI_INT, comp_of, 1, MPI_INT, x->world), st, out);
    for (i = 0; i < c->ncomponents; i++)
        x->leader[i] = -1;
    for (i = size - 1; i >= 0; i--) {
        x->leader[comp_of[i]] = i;
        x->nranks[comp_of[i]]++;
    }
    XFER_MPI_GOTO(MPI_Comm_split(x->world, x->comp, x->rank, &x->comm), st, out);
    XFER_MPI_GOTO(MPI_Comm_size(x->comm, &x->size), st, out);
    for (i = 0; i < c->ncomponents; i++)
        if (x->nranks[i] != c->components[i].nprocs) {
            st = x->nranks[i] == 0
                     ? XFER_ERR(XFER_ERR_CONFIG,
                                "component %s is not part of this MPMD launch (it needs %d "
                                "ranks; start every component in one mpiexec, in file order, or "
                                "use xfer-run)",
                                c->components[i].name, c->components[i].nprocs)
                     : XFER_ERR(XFER_ERR_CONFIG,
                                "component %s runs on %d ranks; the workflow file says nprocs: %d",
                                c->components[i].name, x->nranks[i], c->components[i].nprocs);
            goto out;
        }
out:
    xfer_free(comp_of);
    return st;
}

/* ---- watchdog: MPI_Comm_accept/connect cannot time out by themselves ----------------------- */

#define WATCH_POLL_MS  100     /* how often the watchdog looks at xferd's verdicts on the peer */
#define WATCH_SLEEP_MS 3600000 /* without xferd: the longest single wait (then it looks again) */

typedef struct xfer_rt_watch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    int timeout_ms;
    char what[512];
    struct xfer *x; /* with xferd (rank 0): end as soon as it declares component peer failed */
    int peer;
    pthread_t th;
} watch_t;

static void wake_after(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long) (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void *watch_main(void *arg)
{
    watch_t *w = arg;
    const double end = xfer_now_ms() + w->timeout_ms;
    char why[512];
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        const double left = end - xfer_now_ms();
        struct timespec ts;
        int slice;
        if (left <= 0)
            break;
        /* (the bound may be INT_MAX ms: xfer_rt_form_bound saturates) */
        slice = left > WATCH_SLEEP_MS ? WATCH_SLEEP_MS : (int) left + 1;
        if (w->x && slice > WATCH_POLL_MS)
            slice = WATCH_POLL_MS;
        wake_after(&ts, slice);
        if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) != 0 && !w->done && w->x &&
            xfer_rt_ctl_failed_in_wait(w->x, w->peer, why, sizeof(why))) {
            /* The peer will not come: say so at once rather than at the bound. */
            fprintf(stderr,
                    "xfer: %s: component %s failed (xferd: %s); exiting "
                    "(XFER_ERR_PEER_FAILED)\n",
                    w->what, w->x->cfg->components[w->peer].name, why);
            fflush(stderr);
            _exit(1);
        }
    }
    if (!w->done) {
        /* The MPI call is stuck inside the library and nothing else can bound it: say why and
         * end the process (the launcher then stops the workflow). */
        fprintf(stderr, "xfer: %s: no peer within %d ms; exiting (XFER_ERR_TIMEOUT)\n", w->what,
                w->timeout_ms);
        fflush(stderr);
        _exit(124);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* @p x (NULL: none) and @p peer: the component whose failure, heard from xferd, ends the wait. */
static int watch_begin(watch_t *w, int timeout_ms, const char *what, struct xfer *x, int peer)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->timeout_ms = timeout_ms;
    w->x = x;
    w->peer = peer;
    snprintf(w->what, sizeof(w->what), "%s", what);
    return pthread_create(&w->th, NULL, watch_main, w);
}

static void watch_end(watch_t *w)
{
    pthread_mutex_lock(&w->mu);
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

xfer_rt_watch_t *xfer_rt_watch_begin(int timeout_ms, const char *what)
{
    watch_t *w = xfer_calloc(1, sizeof(*w));
    if (w && watch_begin(w, timeout_ms, what, NULL, -1) != 0) {
        xfer_free(w);
        w = NULL;
    }
    return w;
}

void xfer_rt_watch_end(xfer_rt_watch_t *w)
{
    if (!w)
        return;
    watch_end(w);
    xfer_free(w);
}

/* ---- port files --------------------------------------------------------------------------- */

void xfer_rt_run_dir(const struct xfer *x, char *buf, size_t len)
{
    const char *env = xfer_env_str("XFER_RUN_DIR");
    if (env)
        snprintf(buf, len, "%s", env);
    else if (x->cfg->run_dir && x->cfg->run_dir[0])
        snprintf(buf, len, "%s", x->cfg->run_dir);
    else
        snprintf(buf, len, "xfer-run.%s", x->cfg->workflow);
}

static xfer_status_t write_port(const char *path, const char *port)
{
    char tmp[1100];
    FILE *f;
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long) getpid());
    f = fopen(tmp, "w");
    if (!f)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "cannot write port file %s: %s", tmp,
                        strerror(errno));
    if (fprintf(f, "%s\n", port) < 0 || fclose(f) != 0) {
        unlink(tmp);
        return XFER_ERR(XFER_ERR_INVALID_ARG, "cannot write port file %s", tmp);
    }
    if (rename(tmp, path) != 0) { /* readers see the whole name or nothing */
        unlink(tmp);
        return XFER_ERR(XFER_ERR_INVALID_ARG, "cannot rename %s to %s: %s", tmp, path,
                        strerror(errno));
    }
    return XFER_SUCCESS;
}

static int read_port(const char *path, char *port, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n;
    if (!f)
        return 0;
    n = fread(port, 1, len - 1, f);
    fclose(f);
    port[n] = '\0';
    while (n > 0 && (port[n - 1] == '\n' || port[n - 1] == '\r'))
        port[--n] = '\0';
    return n > 0;
}

static xfer_status_t open_port_error(int rc, const char *channel)
{
    char text[MPI_MAX_ERROR_STRING] = "", lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    char *nl;
    int len = 0;
    MPI_Error_string(rc, text, &len);
    MPI_Get_library_version(lib, &len);
    if ((nl = strchr(lib, '\n')) != NULL)
        *nl = '\0';
    return XFER_ERR(XFER_ERR_NOT_SUPPORTED,
                    "channel %s: MPI_Open_port failed: %s. This MPI library (%s) cannot connect "
                    "separately launched jobs (Debian's MPICH is built with ch4:ucx, which has no "
                    "ports). Launch the workflow as one MPMD job instead (launch: mpmd, or "
                    "xfer-run --launch mpmd), or use an MPI with dynamic processes (Open MPI with "
                    "ompi-server, MPICH ch3)",
                    channel, text, lib);
}

/* No port file came: the peer may not run (or not in this run directory), or it runs and
 * accepted its reader already (<channel>.accepted says who and where): a reader that comes back
 * cannot rejoin the channel. */
static xfer_status_t no_port_error(const xfer_cfg_channel_t *c, const char *dir, const char *path,
                                   const char *peer, int bound)
{
    char acc[1100], who[256] = "";
    FILE *f;
    snprintf(acc, sizeof(acc), "%s/%s.accepted", dir, c->name);
    if ((f = fopen(acc, "r")) != NULL) {
        if (!fgets(who, sizeof(who), f))
            who[0] = '\0';
        fclose(f);
        who[strcspn(who, "\n")] = '\0';
        return XFER_ERR(XFER_ERR_TIMEOUT,
                        "channel %s: component %s accepted its reader already (%s; see %s) and "
                        "waits for no other: a component that ended cannot rejoin a running "
                        "workflow; start the workflow anew",
                        c->name, peer, who[0] ? who : "no details", acc);
    }
    return XFER_ERR(XFER_ERR_TIMEOUT,
                    "channel %s: no port file %s from component %s within %d ms (is %s running, "
                    "with the same run directory?)",
                    c->name, path, peer, bound, peer);
}

/* The `from` component accepts, the `to` component connects; the port name travels through
 * <run dir>/<channel>.port. */
static xfer_status_t form_separate(struct xfer *x, int index, MPI_Comm *inter, int *disconnect)
{
    const xfer_cfg_channel_t *c = &x->cfg->channels[index];
    const int accepting = c->from == x->comp;
    const int peer_comp = accepting ? c->to : c->from;
    const char *peer = x->cfg->components[peer_comp].name;
    const int bound = xfer_rt_form_bound(x, index);
    char dir[512], path[1024], what[1200];
    char port[MPI_MAX_PORT_NAME + 1];
    int status[2] = {XFER_SUCCESS, 0}, rank = 0, rc;
    char msg[1024] = "";
    xfer_status_t st = XFER_SUCCESS;
    watch_t w;

    memset(port, 0, sizeof(port));
    XFER_MPI_GOTO(MPI_Comm_rank(x->comm, &rank), st, out);
    xfer_rt_run_dir(x, dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/%s.port", dir, c->name);
    if (rank == 0) {
        if (accepting) {
            MPI_Errhandler old_world, old_self;
            if (mkdir(dir, 0700) != 0 && errno != EEXIST)
                st = XFER_ERR(XFER_ERR_INVALID_ARG,
                              "channel %s: cannot create run directory "
                              "%s: %s",
                              c->name, dir, strerror(errno));
            unlink(path); /* a stale name from an earlier run */
            {
                char acc[1100];
                snprintf(acc, sizeof(acc), "%s/%s.accepted", dir, c->name);
                unlink(acc);
            }
            /* MPI_Open_port reports on no communicator: make its failure a return code. */
            MPI_Comm_get_errhandler(MPI_COMM_WORLD, &old_world);
            MPI_Comm_get_errhandler(MPI_COMM_SELF, &old_self);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
            if (st == XFER_SUCCESS && (rc = MPI_Open_port(MPI_INFO_NULL, port)) != MPI_SUCCESS)
                st = open_port_error(rc, c->name);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, old_world);
            MPI_Comm_set_errhandler(MPI_COMM_SELF, old_self);
            MPI_Errhandler_free(&old_world);
            MPI_Errhandler_free(&old_self);
            if (st == XFER_SUCCESS)
                st = x->ctl ? xfer_rt_ctl_publish(x, index, port) : write_port(path, port);
        } else if (x->ctl) {
            st = xfer_rt_ctl_lookup(x, index, bound, port, sizeof(port));
        } else {
            const double deadline = MPI_Wtime() + 1e-3 * bound;
            const struct timespec nap = {0, 20 * 1000 * 1000};
            while (!read_port(path, port, sizeof(port))) {
                if (MPI_Wtime() > deadline) {
                    st = no_port_error(c, dir, path, peer, bound);
                    break;
                }
                nanosleep(&nap, NULL); /* waiting for another job to write a file */
            }
        }
        status[0] = (int) st;
        if (st != XFER_SUCCESS)
            snprintf(msg, sizeof(msg), "%s", xfer_last_error());
    }
    XFER_MPI_GOTO(MPI_Bcast(status, 2, MPI_INT, 0, x->comm), st, out);
    if (status[0] != XFER_SUCCESS) {
        XFER_MPI_GOTO(MPI_Bcast(msg, (int) sizeof(msg), MPI_CHAR, 0, x->comm), st, out);
        return rank == 0 ? (xfer_status_t) status[0]
                         : xfer_err_raw((xfer_status_t) status[0], "%s", msg);
    }
    snprintf(what, sizeof(what), "channel %s: %s component %s (port %s %s)", c->name,
             accepting ? "waiting for" : "connecting to", peer, x->use_ctl ? "from xferd" : "file",
             x->use_ctl ? "" : path);
    if (watch_begin(&w, bound, what, rank == 0 && x->use_ctl ? x : NULL, peer_comp) != 0)
        return XFER_ERR(XFER_ERR_INTERNAL, "cannot start the connection watchdog");
    if (accepting)
        rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, x->comm, inter);
    else
        rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, x->comm, inter);
    watch_end(&w);
    if (rc != MPI_SUCCESS) {
        st = xfer_err_mpi(rc, __func__, accepting ? "MPI_Comm_accept" : "MPI_Comm_connect");
        goto out;
    }
    *disconnect = 1;
    if (accepting && rank == 0) {
        if (!x->use_ctl) { /* the name is used up: a later reader learns who took it */
            char acc[1100], host[256] = "", line[512];
            time_t now = time(NULL);
            gethostname(host, sizeof(host) - 1);
            snprintf(acc, sizeof(acc), "%s/%s.accepted", dir, c->name);
            snprintf(line, sizeof(line), "pid %ld on %s accepted at %.24s", (long) getpid(), host,
                     ctime(&now));
            if (write_port(acc, line) != XFER_SUCCESS)
                xfer_log(XFER_LOG_WARN, "%s", xfer_last_error());
            unlink(path);
        }
        MPI_Close_port(port);
    }
out:
    return st;
}

xfer_status_t xfer_rt_form(struct xfer *x, int index, MPI_Comm *inter, int *disconnect)
{
    const xfer_cfg_channel_t *c = &x->cfg->channels[index];
    const int peer = c->from == x->comp ? c->to : c->from;
    xfer_status_t st = XFER_SUCCESS;
    char what[256];
    watch_t w;
    int rc;

    *disconnect = 0;
    if (x->launch == XFER_LAUNCH_SEPARATE && xfer_rt_detachable(x, index))
        return xfer_rt_attach_form(x, index, inter, disconnect);
    if (x->launch == XFER_LAUNCH_SEPARATE)
        return form_separate(x, index, inter, disconnect);
    snprintf(what, sizeof(what), "channel %s: forming the intercommunicator with component %s",
             c->name, x->cfg->components[peer].name);
    if (watch_begin(&w, xfer_rt_form_bound(x, index), what, NULL, -1) != 0)
        return XFER_ERR(XFER_ERR_INTERNAL, "cannot start the connection watchdog");
    rc = MPI_Intercomm_create(x->comm, 0, x->world, x->leader[peer], XFER_FORM_TAG + index, inter);
    watch_end(&w);
    if (rc != MPI_SUCCESS)
        st = xfer_err_mpi(rc, __func__, "MPI_Intercomm_create");
    return st;
}
