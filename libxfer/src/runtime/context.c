/* SPDX-License-Identifier: BSD-3-Clause */
/* The workflow context: configuration, component, channels (formation in intercomm.c, steps in
 * channel.c and the ch_*.c files); the helpers its channels call are in rt_util.c. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"

/* Under libxfer_world.so (a component's `mpi_world: component` in an MPMD launch) the program's
 * MPI_COMM_WORLD is its component's processes; the workflow forms over the job's world, which
 * the interposer hands out (xfer_world_job). Any other communicator is the caller's choice. */
static MPI_Comm job_world(MPI_Comm comm)
{
    int (*job)(MPI_Comm *) = NULL;
    MPI_Comm w = MPI_COMM_NULL;
    void *p;
    if (comm != MPI_COMM_WORLD || !(p = dlsym(RTLD_DEFAULT, "xfer_world_job")))
        return comm;
    memcpy(&job, &p, sizeof(p));
    return job(&w) && w != MPI_COMM_NULL ? w : comm;
}

/* This run's identity, which tells its step files (transport: file) from an earlier run's: in
 * one MPMD launch, world rank 0's words for every component; else XFER_RUN_ID (xfer-run gives
 * every component the same). In one launch the components must also agree on each channel's
 * transport (XFER_TRANSPORT set for some only would leave the others waiting). */
static xfer_status_t run_identity(struct xfer *x)
{
    const char *env = xfer_env_str("XFER_RUN_ID");
    xfer_status_t st = XFER_SUCCESS;
    int i, *t = NULL, *lo = NULL, *hi = NULL;

    if (x->launch != XFER_LAUNCH_MPMD) {
        snprintf(x->run_id, sizeof(x->run_id), "%s", env ? env : "");
        return XFER_SUCCESS;
    }
    if (x->rank == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(x->run_id, sizeof(x->run_id), "%s", env ? env : "");
        if (!env)
            snprintf(x->run_id, sizeof(x->run_id), "mpmd-%ld-%lld.%09ld", (long) getpid(),
                     (long long) ts.tv_sec, ts.tv_nsec);
    }
    XFER_MPI_GOTO(MPI_Bcast(x->run_id, (int) sizeof(x->run_id), MPI_CHAR, 0, x->world), st, out);
    t = xfer_calloc((size_t) x->cfg->nchannels + 1, sizeof(int));
    lo = xfer_calloc((size_t) x->cfg->nchannels + 1, sizeof(int));
    hi = xfer_calloc((size_t) x->cfg->nchannels + 1, sizeof(int));
    if (!t || !lo || !hi) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "transports");
        goto out;
    }
    for (i = 0; i < x->cfg->nchannels && st == XFER_SUCCESS; i++)
        st = xfer_rt_transport(x, i, (xfer_transport_t *) &t[i]);
    t[x->cfg->nchannels] = st != XFER_SUCCESS; /* an error here: every rank hears of it below */
    XFER_MPI_GOTO(MPI_Allreduce(t, lo, x->cfg->nchannels + 1, MPI_INT, MPI_MIN, x->world), st, out);
    XFER_MPI_GOTO(MPI_Allreduce(t, hi, x->cfg->nchannels + 1, MPI_INT, MPI_MAX, x->world), st, out);
    if (st != XFER_SUCCESS || hi[x->cfg->nchannels])
        goto out; /* the failing ranks' own errors; the others' come from the agreement */
    for (i = 0; i < x->cfg->nchannels; i++)
        if (lo[i] != hi[i]) {
            st = XFER_ERR(XFER_ERR_CONFIG,
                          "channel %s: the components of this launch disagree on its transport "
                          "(stream at some, file at others: is XFER_TRANSPORT set for some "
                          "components only?)",
                          x->cfg->channels[i].name);
            break;
        }
out:
    xfer_free(t);
    xfer_free(lo);
    xfer_free(hi);
    return st;
}

static void free_ctx(struct xfer *x, int collective)
{
    int i;
    if (!x)
        return;
    xfer_rt_progress_stop(x);
    for (i = 0; x->ch && i < x->nch; i++)
        xfer_rt_channel_free(&x->ch[i], collective);
    xfer_rt_ctl_stop(x, 0);
    xfer_free(x->ch);
    xfer_free(x->leader);
    xfer_free(x->nranks);
    if (collective && x->fin != MPI_COMM_NULL)
        MPI_Comm_free(&x->fin);
    if (collective && x->comm != MPI_COMM_NULL)
        MPI_Comm_free(&x->comm);
    if (collective && x->world != MPI_COMM_NULL)
        MPI_Comm_free(&x->world);
    xfer_config_free(&x->cfg);
    xfer_free(x);
}

static xfer_status_t setup_channel(struct xfer *x, int i, MPI_Comm inter, int disconnect)
{
    xfer_status_t st;
    XFER_CHECK_GOTO(xfer_rt_channel_new(x, i, &xfer_stream_ops, inter, disconnect, &x->ch[i]), st,
                    out);
    st = x->ch[i]->ops->open(x->ch[i]); /* agreed by the caller on each side */
out:
    return st;
}

xfer_status_t xfer_init(const char *yaml_path, const char *component, MPI_Comm comm, xfer_t **out)
{
    struct xfer *x = NULL;
    xfer_status_t st = XFER_SUCCESS;
    int i, inited = 0, rank = 0;
    long env_tmo;

    if (!out)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "output pointer is NULL");
    *out = NULL;
    XFER_MPI_GOTO(MPI_Initialized(&inited), st, early);
    if (!inited)
        return XFER_ERR(XFER_ERR_STATE, "MPI is not initialised: call MPI_Init first");
    if (comm == MPI_COMM_NULL)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "comm is MPI_COMM_NULL");
    comm = job_world(comm);
    if (!yaml_path)
        yaml_path = xfer_env_str("XFER_CONFIG");
    XFER_MPI_GOTO(MPI_Comm_rank(comm, &rank), st, early);
    x = xfer_calloc(1, sizeof(*x));
    if (!x) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "context");
        goto early;
    }
    x->world = x->comm = x->fin = MPI_COMM_NULL;
    if (!yaml_path)
        st = XFER_ERR(XFER_ERR_INVALID_ARG,
                      "no workflow file: pass its path to xfer_init or set XFER_CONFIG");
    else
        st = xfer_config_load(yaml_path, &x->cfg);
    if (st != XFER_SUCCESS)
        goto early;
    XFER_MPI_GOTO(MPI_Comm_dup(comm, &x->world), st, early);
    XFER_MPI_GOTO(MPI_Comm_set_errhandler(x->world, MPI_ERRORS_RETURN), st, fail);
    x->timeout_ms = x->cfg->timeout_ms;
    env_tmo = xfer_env_long("XFER_TIMEOUT_MS", 0);
    if (env_tmo > 0)
        x->timeout_ms = (int) env_tmo;
    /* Virtual nodes from the file, unless the environment says otherwise. */
    if (x->cfg->ranks_per_node > 0 && !xfer_env_str("XFER_NODE_SIZE")) {
        char v[32];
        snprintf(v, sizeof(v), "%d", x->cfg->ranks_per_node);
        setenv("XFER_NODE_SIZE", v, 0);
    }
    st = xfer_rt_launch_mode(x, component);
    st = xfer_rt_agree(x->world, st);
    if (st != XFER_SUCCESS)
        goto fail;
    st = xfer_rt_agree(x->world, run_identity(x));
    if (st != XFER_SUCCESS)
        goto fail;
    XFER_MPI_GOTO(MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN), st, fail);
    XFER_MPI_GOTO(MPI_Comm_dup(x->comm, &x->fin), st, fail);
    /* The control plane, when there is one: the leader registers before any channel forms. */
    st = xfer_rt_ctl_start(x);
    st = xfer_rt_agree(x->comm, st);
    if (st == XFER_SUCCESS)
        st = xfer_rt_agree(x->comm, xfer_rt_ctl_ranks(x));
    if (st != XFER_SUCCESS)
        goto fail;
    x->live = x->use_ctl                      ? XFER_LIVE_CONTROL
              : x->launch == XFER_LAUNCH_MPMD ? XFER_LIVE_JOB
                                              : XFER_LIVE_CLOCK;
    x->nch = x->cfg->nchannels;
    x->ch = xfer_calloc((size_t) (x->nch ? x->nch : 1), sizeof(*x->ch));
    if (!x->ch) {
        st = XFER_ERR(XFER_ERR_NO_MEMORY, "channels");
        goto fail;
    }
    /* File order on every component: a pair of components forms its channels in the same
     * order, so no two components ever wait on each other crosswise. A file channel needs no
     * intercommunicator (launch: user included). */
    for (i = 0; i < x->nch; i++) {
        const xfer_cfg_channel_t *c = &x->cfg->channels[i];
        MPI_Comm inter = MPI_COMM_NULL;
        xfer_transport_t t;
        int disconnect = 0;
        if (c->from != x->comp && c->to != x->comp)
            continue;
        st = xfer_rt_agree(x->comm, xfer_rt_transport(x, i, &t));
        if (st != XFER_SUCCESS)
            goto fail;
        if (t == XFER_TRANSPORT_FILE) {
            st = xfer_rt_agree(
                x->comm, xfer_rt_channel_new(x, i, &xfer_file_ops, MPI_COMM_NULL, 0, &x->ch[i]));
            if (st == XFER_SUCCESS)
                st = x->ch[i]->ops->open(x->ch[i]); /* agreed */
            if (st != XFER_SUCCESS)
                goto fail;
            continue;
        }
        if (x->launch == XFER_LAUNCH_USER)
            continue; /* attached by the application */
        st = xfer_rt_form(x, i, &inter, &disconnect);
        st = xfer_rt_agree(x->comm, st);
        if (st != XFER_SUCCESS)
            goto fail;
        if (inter == MPI_COMM_NULL) /* a detachable channel whose reader is absent */
            st = xfer_rt_channel_new(x, i, &xfer_stream_ops, MPI_COMM_NULL, 0, &x->ch[i]);
        if (inter == MPI_COMM_NULL && st == XFER_SUCCESS)
            st = xfer_ch_attach_detached(x->ch[i]);
        if (inter != MPI_COMM_NULL)
            st = setup_channel(x, i, inter, disconnect);
        st = xfer_rt_agree(x->comm, st);
        if (st != XFER_SUCCESS)
            goto fail;
    }
    /* channels formed: from here on the progress thread (if any) may pass over them */
    st = xfer_rt_progress_start(x);
    st = xfer_rt_agree(x->comm, st);
    if (st != XFER_SUCCESS)
        goto fail;
    *out = x;
    xfer_clear_error();
    return XFER_SUCCESS;
fail:
    st = xfer_rt_done(x, st);
    free_ctx(x, 0);
    return st;
early:
    if (x)
        free_ctx(x, 1);
    return st;
}

xfer_status_t xfer_channel_attach(xfer_t *x, const char *channel, MPI_Comm inter)
{
    xfer_status_t st;
    xfer_transport_t tp;
    MPI_Comm dup = MPI_COMM_NULL;
    int i, is_inter = 0;

    if (!x || !channel)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "context or channel name is NULL");
    if (x->launch != XFER_LAUNCH_USER)
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s: xfer_channel_attach needs launch: user (this workflow's "
                        "channels were formed by xfer_init)",
                        channel);
    XFER_CHECK_GOTO(xfer_config_channel(x->cfg, channel, &i), st, out);
    if (x->cfg->channels[i].from != x->comp && x->cfg->channels[i].to != x->comp)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel %s does not involve component %s", channel,
                        x->cfg->components[x->comp].name);
    XFER_CHECK_GOTO(xfer_rt_transport(x, i, &tp), st, out);
    if (x->ch[i] && tp == XFER_TRANSPORT_FILE)
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s uses the file transport: it has no intercommunicator to "
                        "attach (xfer_init opened it)",
                        channel);
    if (x->ch[i])
        return XFER_ERR(XFER_ERR_STATE, "channel %s is already attached", channel);
    XFER_MPI_GOTO(MPI_Comm_test_inter(inter, &is_inter), st, out);
    if (!is_inter)
        return XFER_ERR(XFER_ERR_NOT_INTERCOMM,
                        "channel %s: the communicator is not an "
                        "intercommunicator",
                        channel);
    XFER_MPI_GOTO(MPI_Comm_dup(inter, &dup), st, out);
    xfer_rt_lock(x); /* the progress thread passes over x->ch */
    st = setup_channel(x, i, dup, 0);
    xfer_rt_unlock(x);
    if (st != XFER_SUCCESS && !x->ch[i] && dup != MPI_COMM_NULL)
        MPI_Comm_free(&dup);
out:
    return xfer_done(st);
}

xfer_status_t xfer_channel_open(xfer_t *x, const char *channel, xfer_channel_t **ch)
{
    xfer_status_t st;
    int i;
    if (!x || !channel || !ch)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "context, channel name or output is NULL");
    XFER_CHECK_GOTO(xfer_config_channel(x->cfg, channel, &i), st, out);
    if (x->cfg->channels[i].from != x->comp && x->cfg->channels[i].to != x->comp)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "channel %s joins %s and %s, not component %s",
                        channel, x->cfg->components[x->cfg->channels[i].from].name,
                        x->cfg->components[x->cfg->channels[i].to].name,
                        x->cfg->components[x->comp].name);
    if (!x->ch[i])
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s has no intercommunicator yet (launch: user: "
                        "call xfer_channel_attach first)",
                        channel);
    if (x->ch[i]->closed)
        return XFER_ERR(XFER_ERR_STATE,
                        "channel %s was closed (xfer_channel_close): a closed channel does not "
                        "open again",
                        channel);
    *ch = x->ch[i];
    return xfer_done(XFER_SUCCESS);
out:
    return st;
}

xfer_status_t xfer_comm(const xfer_t *x, MPI_Comm *comm)
{
    if (!x || !comm)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "context or output is NULL");
    *comm = x->comm;
    return xfer_done(XFER_SUCCESS);
}

xfer_status_t xfer_set_interrupt(xfer_t *x, xfer_interrupt_fn fn, void *arg)
{
    if (!x)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "xfer_set_interrupt: context is NULL");
    xfer_rt_lock(x);
    x->intr_fn = fn;
    x->intr_arg = arg;
    xfer_rt_unlock(x);
    return xfer_done(XFER_SUCCESS);
}

xfer_status_t xfer_config_of(const xfer_t *x, const xfer_config_t **cfg, int *component)
{
    if (!x)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "context is NULL");
    if (cfg)
        *cfg = x->cfg;
    if (component)
        *component = x->comp;
    return xfer_done(XFER_SUCCESS);
}

/* Keep the first error of finalize's passes, with its words. */
static void first_error(xfer_status_t st, xfer_status_t *first, char *msg, size_t len)
{
    if (st == XFER_SUCCESS || *first != XFER_SUCCESS)
        return;
    *first = st;
    snprintf(msg, len, "%s", xfer_last_error());
}

xfer_status_t xfer_finalize(xfer_t **px)
{
    struct xfer *x = px ? *px : NULL;
    xfer_status_t first = XFER_SUCCESS;
    char first_msg[1024] = "";
    int i, failed = 0;

    if (!x)
        return XFER_SUCCESS;
    /* From here on only this thread progresses the channels. */
    xfer_rt_progress_stop(x);
    /* Every channel finishes together (channel.c): no wait on one channel while the peer of
     * another waits for this component's end of that one. A closed channel ended in its
     * xfer_channel_close, which returned how; it takes the passes from the drain on. */
    first_error(xfer_rt_channels_end(x, NULL), &first, first_msg, sizeof(first_msg));
    for (i = 0; i < x->nch; i++)
        if (x->ch[i] && !x->ch[i]->closed)
            first_error(xfer_rt_channel_ended(x->ch[i]), &first, first_msg, sizeof(first_msg));
    first_error(xfer_rt_channels_drain(x), &first, first_msg, sizeof(first_msg));
    /* The ranks learned of failures at different moments: from here on each acts on what
     * they agree (fin_agree.c), or one would wait in a collective another skipped. */
    first_error(xfer_rt_fin_agree_channels(x), &first, first_msg, sizeof(first_msg));
    for (i = 0; i < x->nch; i++)
        if (x->ch[i])
            first_error(xfer_rt_channel_goodbye(x->ch[i]), &first, first_msg, sizeof(first_msg));
    first_error(xfer_rt_channels_part(x), &first, first_msg, sizeof(first_msg));
    for (i = 0; i < x->nch; i++)
        if (x->ch[i])
            first_error(xfer_rt_channel_close(x->ch[i]), &first, first_msg, sizeof(first_msg));
    first_error(xfer_rt_fin_agree_failed(x, &failed), &first, first_msg, sizeof(first_msg));
    if (first != XFER_SUCCESS) /* said to xferd while the connection is there */
        first = xfer_rt_done(x, xfer_err_raw(first, "%s", first_msg));
    /* the leader says goodbye to xferd (a failed component says nothing: xfer-run reports) */
    xfer_rt_ctl_stop(x, !failed);
    /* After a failure the peer may be gone: collective frees could wait for ever. */
    for (i = 0; i < x->nch; i++)
        xfer_rt_channel_free(&x->ch[i], !failed && xfer_rt_channel_collective(x->ch[i]));
    free_ctx(x, !failed);
    *px = NULL;
    if (first != XFER_SUCCESS)
        return xfer_err_raw(first, "%s", first_msg);
    xfer_clear_error();
    return XFER_SUCCESS;
}
