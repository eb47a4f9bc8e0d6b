/* SPDX-License-Identifier: BSD-3-Clause */
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <sched.h>
#include <string.h>

#include "../core/core.h"
#include "shwin.h"
#include "topo.h"

static pthread_mutex_t topo_lock = PTHREAD_MUTEX_INITIALIZER;
static int topo_keyval = MPI_KEYVAL_INVALID;
static int self_keyval = MPI_KEYVAL_INVALID;
static xfer_topo_t *live; /* guarded by topo_lock */

static void unlink_live(xfer_topo_t *t)
{
    xfer_topo_t **pp;
    pthread_mutex_lock(&topo_lock);
    for (pp = &live; *pp; pp = &(*pp)->next_live)
        if (*pp == t) {
            *pp = t->next_live;
            break;
        }
    pthread_mutex_unlock(&topo_lock);
}

void xfer_comm_release(MPI_Comm *comm)
{
    int rc;
    if (*comm == MPI_COMM_NULL)
        return;
    rc = MPI_Comm_free(comm);
    if (rc != MPI_SUCCESS) {
        xfer_log(XFER_LOG_WARN, "MPI_Comm_free failed (error %d) while releasing libxfer state",
                 rc);
        *comm = MPI_COMM_NULL;
    }
}

/* hier:direct announcements travel to every rank of a producer node, and those that do not
 * ship take theirs in at their next call: take in the ones still due so that no message is left
 * unmatched at MPI_Finalize (MPI implementations warn about those). They are all on their way
 * once the remote group's calls are; XFER_TIMEOUT_MS (default 10 s) bounds the wait. */
static void drain_announcements(xfer_topo_t *t)
{
    long left = t->hm->dstream.expected - t->hm->dstream.received + t->hm->dstream_orphans;
    const long tmo = xfer_env_long("XFER_TIMEOUT_MS", 0);
    const double t0 = xfer_now(), limit = tmo > 0 ? 1e-3 * (double) tmo : 10.0;

    while (left > 0 && t->hm->direct[0] != MPI_COMM_NULL) {
        MPI_Message msg;
        int flag = 0;
        long id[2];
        if (MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, t->hm->direct[0], &flag, &msg,
                        MPI_STATUS_IGNORE) != MPI_SUCCESS)
            break;
        if (flag) {
            if (MPI_Mrecv(id, 2, MPI_LONG, &msg, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                break;
            left--;
        } else if (xfer_now() - t0 > limit) {
            xfer_log(XFER_LOG_WARN,
                     "hier:direct: %ld receiver announcements never arrived (did a rank of the "
                     "other group fail?)",
                     left);
            break;
        } else {
            sched_yield();
        }
    }
}

/* Node staging's module (the window's free is collective over the node, as every path here
 * is). */
static void hier_module_free(xfer_topo_t *t)
{
    xfer_stripes_t *st, *sn;
    if (!t->hm)
        return;
    xfer_shwin_free(&t->hm->win);
    for (st = t->hm->stripes; st; st = sn) {
        sn = st->next;
        xfer_comm_release(&st->comm);
        xfer_free(st);
    }
    drain_announcements(t);
    xfer_comm_release(&t->hm->direct[0]);
    xfer_comm_release(&t->hm->direct[1]);
    xfer_dstream_free(&t->hm->dstream);
    xfer_comm_release(&t->hm->node_comm);
    xfer_nodes_free(&t->hm->nodes[0]);
    xfer_nodes_free(&t->hm->nodes[1]);
    xfer_free(t->hm);
    t->hm = NULL;
}

static void topo_free(xfer_topo_t *t)
{
    xfer_subcomm_t *s, *n;
    if (!t)
        return;
    hier_module_free(t);
    if (t->selector_free)
        t->selector_free(t->selector);
    for (s = t->subs; s; s = n) {
        n = s->next;
        xfer_comm_release(&s->comm);
        xfer_free(s);
    }
    xfer_comm_release(&t->local);
    xfer_comm_release(&t->merged);
    xfer_free(t);
}

/* Attribute delete callback: the user freed the intercommunicator (or we are finalising). */
static int topo_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    xfer_topo_t *t = attr;
    (void) comm;
    (void) keyval;
    (void) extra;
    unlink_live(t);
    topo_free(t);
    return MPI_SUCCESS;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still works: release every
 * context that is still attached to a live intercommunicator. */
static int self_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void) comm;
    (void) keyval;
    (void) attr;
    (void) extra;
    for (;;) {
        xfer_topo_t *t;
        pthread_mutex_lock(&topo_lock);
        t = live;
        pthread_mutex_unlock(&topo_lock);
        if (!t)
            break;
        /* triggers topo_delete_fn, which unlinks and frees t */
        if (MPI_Comm_delete_attr(t->inter, topo_keyval) != MPI_SUCCESS) {
            unlink_live(t);
            topo_free(t);
        }
    }
    /* nothing can be reported from MPI_Finalize's callback; keyvals are freed with MPI anyway */
    if (MPI_Comm_free_keyval(&topo_keyval) != MPI_SUCCESS ||
        MPI_Comm_free_keyval(&self_keyval) != MPI_SUCCESS)
        xfer_log(XFER_LOG_WARN, "could not free libxfer's attribute keys at MPI_Finalize");
    return MPI_SUCCESS;
}

static xfer_status_t ensure_keyvals(void)
{
    xfer_status_t st = XFER_SUCCESS;
    pthread_mutex_lock(&topo_lock);
    if (topo_keyval == MPI_KEYVAL_INVALID) {
        XFER_MPI_GOTO(
            MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, topo_delete_fn, &topo_keyval, NULL), st,
            out);
        XFER_MPI_GOTO(
            MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &self_keyval, NULL), st,
            out);
        XFER_MPI_GOTO(MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL), st, out);
    }
out:
    pthread_mutex_unlock(&topo_lock);
    return st;
}

/* How many shared-memory nodes the two groups span and the most ranks on one of them: the
 * cost model charges node-shared memory traffic when ranks share a node. */
static xfer_status_t count_nodes(xfer_topo_t *t)
{
    xfer_status_t st = XFER_SUCCESS;
    MPI_Comm node = MPI_COMM_NULL;
    int nrank = 0, nsize = 1, in[3], out[3];

    XFER_MPI_GOTO(MPI_Comm_split_type(t->merged, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), st,
                  out);
    XFER_MPI_GOTO(MPI_Comm_rank(node, &nrank), st, out);
    XFER_MPI_GOTO(MPI_Comm_size(node, &nsize), st, out);
    in[0] = nrank == 0; /* one leader per node */
    in[1] = nsize;
    in[2] = xfer_env_long("XFER_NODE_SIZE", 0) > 0; /* virtual nodes asked for anywhere */
    XFER_MPI_GOTO(MPI_Allreduce(&in[0], &out[0], 1, MPI_INT, MPI_SUM, t->merged), st, out);
    XFER_MPI_GOTO(MPI_Allreduce(&in[1], &out[1], 2, MPI_INT, MPI_MAX, t->merged), st, out);
    t->nnodes = out[0];
    t->max_ppn = out[1];
    /* both groups agree whether a hierarchy is worth considering, so that they make the same
     * collective calls */
    t->hier_possible = out[2] || (t->nnodes > 1 && t->max_ppn > 1);
out:
    xfer_comm_release(&node);
    return st;
}

static xfer_status_t topo_create(MPI_Comm inter, xfer_topo_t **out)
{
    xfer_status_t st = XFER_SUCCESS;
    xfer_topo_t *t;
    int lsize, rsize, lrank;

    *out = NULL;
    t = xfer_calloc(1, sizeof(*t));
    if (t)
        t->hm = xfer_calloc(1, sizeof(*t->hm));
    if (!t || !t->hm) {
        xfer_free(t);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "intercommunicator context");
    }
    t->inter = inter;
    t->merged = t->local = t->hm->node_comm = MPI_COMM_NULL;
    t->hm->direct[0] = t->hm->direct[1] = MPI_COMM_NULL;
    XFER_MPI_GOTO(MPI_Comm_size(inter, &lsize), st, fail);
    XFER_MPI_GOTO(MPI_Comm_remote_size(inter, &rsize), st, fail);
    XFER_MPI_GOTO(MPI_Comm_rank(inter, &lrank), st, fail);
    /* Both sides pass high = 0: MPI orders the groups consistently; we read off which one we
     * are in (a group placed first keeps merged rank == local rank on every member). */
    XFER_MPI_GOTO(MPI_Intercomm_merge(inter, 0, &t->merged), st, fail);
    XFER_MPI_GOTO(MPI_Comm_set_errhandler(t->merged, MPI_ERRORS_RETURN), st, fail);
    XFER_MPI_GOTO(MPI_Comm_rank(t->merged, &t->merged_rank), st, fail);
    t->group = t->merged_rank == lrank ? 0 : 1;
    t->rank = lrank;
    t->n[t->group] = lsize;
    t->n[1 - t->group] = rsize;
    XFER_MPI_GOTO(MPI_Comm_split(t->merged, t->group, lrank, &t->local), st, fail);
    XFER_MPI_GOTO(MPI_Comm_set_errhandler(t->local, MPI_ERRORS_RETURN), st, fail);
    XFER_CHECK_GOTO(count_nodes(t), st, fail);

    *out = t;
    return XFER_SUCCESS;
fail:
    topo_free(t);
    return st;
}

xfer_status_t xfer_topo_get(MPI_Comm inter, xfer_topo_t **out)
{
    xfer_status_t st;
    xfer_topo_t *t = NULL;
    int is_inter = 0, found = 0;

    *out = NULL;
    if (inter == MPI_COMM_NULL)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "communicator is MPI_COMM_NULL");
    XFER_MPI_GOTO(MPI_Comm_test_inter(inter, &is_inter), st, out);
    if (!is_inter)
        return XFER_ERR(XFER_ERR_NOT_INTERCOMM,
                        "an intracommunicator was passed where an intercommunicator is required "
                        "(build one with MPI_Intercomm_create or MPI_Comm_connect/accept)");
    XFER_CHECK_GOTO(ensure_keyvals(), st, out);
    XFER_MPI_GOTO(MPI_Comm_get_attr(inter, topo_keyval, &t, &found), st, out);
    if (found && t) {
        *out = t;
        return XFER_SUCCESS;
    }
    XFER_CHECK_GOTO(topo_create(inter, &t), st, out);
    XFER_MPI_GOTO(MPI_Comm_set_attr(inter, topo_keyval, t), st, out_free);
    pthread_mutex_lock(&topo_lock);
    t->next_live = live;
    live = t;
    pthread_mutex_unlock(&topo_lock);
    *out = t;
    return XFER_SUCCESS;
out_free:
    topo_free(t);
out:
    return st;
}

void xfer_dstream_free(xfer_dstream_t *s)
{
    xfer_free(s->seen);
    xfer_free(s->src);
    s->seen = NULL;
    s->src = NULL;
}

xfer_status_t xfer_topo_direct_comms(xfer_topo_t *t, MPI_Comm out[2])
{
    xfer_status_t st = XFER_SUCCESS;
    int i;
    for (i = 0; i < 2; i++)
        if (t->hm->direct[i] == MPI_COMM_NULL) {
            XFER_MPI_GOTO(MPI_Comm_dup(t->inter, &t->hm->direct[i]), st, out);
            XFER_MPI_GOTO(MPI_Comm_set_errhandler(t->hm->direct[i], MPI_ERRORS_RETURN), st, out);
        }
    out[0] = t->hm->direct[0];
    out[1] = t->hm->direct[1];
out:
    return st;
}

xfer_status_t xfer_topo_split(xfer_topo_t *t, const char *key, int color, int order, MPI_Comm *out)
{
    xfer_status_t st = XFER_SUCCESS;
    xfer_subcomm_t *s;

    for (s = t->subs; s; s = s->next)
        if (strcmp(s->key, key) == 0) {
            *out = s->comm;
            return XFER_SUCCESS;
        }
    s = xfer_calloc(1, sizeof(*s));
    if (!s)
        return XFER_ERR(XFER_ERR_NO_MEMORY, "sub-communicator cache entry");
    snprintf(s->key, sizeof(s->key), "%s", key);
    s->comm = MPI_COMM_NULL;
    XFER_MPI_GOTO(MPI_Comm_split(t->merged, color, order, &s->comm), st, fail);
    if (s->comm != MPI_COMM_NULL)
        XFER_MPI_GOTO(MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN), st, fail);
    s->next = t->subs;
    t->subs = s;
    *out = s->comm;
    return XFER_SUCCESS;
fail:
    xfer_comm_release(&s->comm);
    xfer_free(s);
    return st;
}
