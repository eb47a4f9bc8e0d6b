/* SPDX-License-Identifier: BSD-3-Clause */
/* The progress thread: moves a context's steps while the application computes.
 *
 * MPI moves a message only inside MPI calls, and a schedule posts its next operations only when
 * the executor runs: without help, a step the producer committed reaches the consumer during the
 * producer's next libxfer call, one computation later (or never, if the producer stops calling).
 * With MPI_THREAD_MULTIPLE, this thread runs one progress pass over the context's channels
 * whenever the application is outside libxfer: every public call holds the context's lock, and
 * the thread only ever try-locks it (an application inside a call progresses by itself).
 *
 * Naps: a pass that finds a collective in flight naps PROG_BUSY_NS (every pass drives the
 * transfer); an idle one backs off to PROG_IDLE_MAX_NS, so a computing rank pays a few hundred
 * wake-ups a second. A commit wakes the thread at once (xfer_rt_progress_kick). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "channel.h"

#define PROG_BUSY_NS     50000L   /* 50 us between passes while a step is in flight */
#define PROG_IDLE_MIN_NS 200000L  /* first idle nap */
#define PROG_IDLE_MAX_NS 5000000L /* longest idle nap */
#define PROG_LOCKED_NS   1000000L /* the application is inside a call: it progresses */

struct xfer_rt_progress {
    struct xfer *x;
    pthread_mutex_t lock; /* the context's lock (recursive: public calls nest) */
    pthread_mutex_t mu;   /* guards kicked, for the condition variable */
    pthread_cond_t cv;
    int kicked;
    atomic_int stop;
    pthread_t th;
};

static void nap(struct xfer_rt_progress *p, long ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += ns;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
    }
    pthread_mutex_lock(&p->mu);
    while (!p->kicked && !atomic_load(&p->stop))
        if (pthread_cond_timedwait(&p->cv, &p->mu, &ts) == ETIMEDOUT)
            break;
    p->kicked = 0;
    pthread_mutex_unlock(&p->mu);
}

static void *progress_main(void *arg)
{
    struct xfer_rt_progress *p = arg;
    struct xfer *x = p->x;
    long idle = PROG_IDLE_MIN_NS;

    while (!atomic_load(&p->stop)) {
        int i, active = 0;
        long ns;
        if (pthread_mutex_trylock(&p->lock) != 0) {
            nap(p, PROG_LOCKED_NS);
            continue;
        }
        for (i = 0; i < x->nch; i++)
            if (x->ch[i])
                xfer_ch_progress_background(x->ch[i], &active);
        pthread_mutex_unlock(&p->lock);
        if (active) {
            ns = PROG_BUSY_NS;
            idle = PROG_IDLE_MIN_NS;
        } else {
            ns = idle;
            idle = idle * 2 > PROG_IDLE_MAX_NS ? PROG_IDLE_MAX_NS : idle * 2;
        }
        nap(p, ns);
    }
    return NULL;
}

static const char *thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE:
        return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    default:
        return "MPI_THREAD_MULTIPLE";
    }
}

xfer_status_t xfer_rt_progress_start(struct xfer *x)
{
    xfer_progress_mode_t mode = x->cfg->progress;
    const char *env = xfer_env_str("XFER_PROGRESS");
    struct xfer_rt_progress *p;
    pthread_mutexattr_t ma;
    xfer_status_t st = XFER_SUCCESS;
    int level = MPI_THREAD_SINGLE;

    if (env && strcmp(env, "auto") == 0)
        mode = XFER_PROGRESS_AUTO;
    else if (env && strcmp(env, "thread") == 0)
        mode = XFER_PROGRESS_THREAD;
    else if (env && strcmp(env, "calls") == 0)
        mode = XFER_PROGRESS_CALLS;
    else if (env && env[0])
        return XFER_ERR(XFER_ERR_INVALID_ARG, "XFER_PROGRESS=%s: expected auto|thread|calls", env);
    x->progress = XFER_PROGRESS_CALLS;
    if (mode == XFER_PROGRESS_CALLS)
        return XFER_SUCCESS;
    XFER_MPI_GOTO(MPI_Query_thread(&level), st, out);
    if (level != MPI_THREAD_MULTIPLE) {
        if (mode == XFER_PROGRESS_AUTO)
            return XFER_SUCCESS;
        return XFER_ERR(XFER_ERR_STATE,
                        "progress: thread needs MPI_THREAD_MULTIPLE, and MPI was initialised "
                        "with %s: call MPI_Init_thread with MPI_THREAD_MULTIPLE, or set "
                        "progress: auto or calls",
                        thread_level_name(level));
    }
    p = xfer_calloc(1, sizeof(*p));
    if (!p)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "progress thread");
    p->x = x;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&p->lock, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    atomic_init(&p->stop, 0);
    if (pthread_create(&p->th, NULL, progress_main, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        pthread_mutex_destroy(&p->lock);
        xfer_free(p);
        return XFER_ERR(XFER_ERR_INTERNAL, "cannot start the progress thread: %s", strerror(errno));
    }
    x->prog = p;
    x->progress = XFER_PROGRESS_THREAD;
out:
    return st;
}

void xfer_rt_progress_stop(struct xfer *x)
{
    struct xfer_rt_progress *p = x ? x->prog : NULL;
    if (!p)
        return;
    atomic_store(&p->stop, 1);
    pthread_mutex_lock(&p->mu);
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->th, NULL);
    x->prog = NULL;
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->lock);
    xfer_free(p);
}

void xfer_rt_lock(const struct xfer *x)
{
    if (x && x->prog)
        pthread_mutex_lock(&x->prog->lock);
}

void xfer_rt_unlock(const struct xfer *x)
{
    if (x && x->prog)
        pthread_mutex_unlock(&x->prog->lock);
}

void xfer_rt_progress_kick(struct xfer *x)
{
    struct xfer_rt_progress *p = x ? x->prog : NULL;
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->kicked = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}
