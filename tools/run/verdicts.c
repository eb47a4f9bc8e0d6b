/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: what xferd says of a run and what xfer-run says of its failures: the exits it
 * reports to xferd, xferd's verdicts (a component that stopped beating, a failure declared
 * before another's exit), the readers the others go on without, the one line of the run's first
 * failure. */
#define _XOPEN_SOURCE 700

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/control.h>

#include "run.h"
#include "runner.h"

/* Tell xferd that a job's components ended: it declares those that did not say goodbye failed
 * and notifies their peers. */
void report_exit(runner_t *r, int j, int code)
{
    int c, c0 = j, c1 = j + 1;

    if (!r->ctl)
        return;
    if (!r->report_components) { /* mpmd: the one job held every component */
        c0 = 0;
        c1 = r->pl->cfg->ncomponents;
    }
    for (c = c0; c < c1; c++) {
        xfer_ctl_msg_t *m = NULL;
        if (r->ended && r->ended[c])
            continue; /* its wrapper's report came first */
        if (xfer_ctl_msg_new("exited", &m) != XFER_SUCCESS ||
            xfer_ctl_set_str(m, "component", r->pl->cfg->components[c].name) != XFER_SUCCESS ||
            xfer_ctl_set_int(m, "code", code) != XFER_SUCCESS ||
            xfer_ctl_send(r->ctl, m) != XFER_SUCCESS)
            run_note("cannot report the exit of %s to xferd: %s", r->pl->cfg->components[c].name,
                     xfer_last_error());
        xfer_ctl_msg_free(&m);
    }
}

/* After component @p failed failed: do running peers of it hold a session with xferd? They
 * then learn of the failure from xferd and end with an error naming it; give them that
 * chance before stopping them. */
int peers_registered(runner_t *r, int failed)
{
    const xfer_config_t *cfg = r->pl->cfg;
    xfer_ctl_msg_t *req = NULL, *rep = NULL;
    int i, k, n = 0;

    if (!r->ctl || xfer_ctl_msg_new("status", &req) != XFER_SUCCESS)
        return 0;
    if (xfer_ctl_request(r->ctl, req, 1000, &rep) == XFER_SUCCESS) {
        for (i = 0; i < xfer_ctl_nitems(rep, "components"); i++) {
            const xfer_ctl_msg_t *it = xfer_ctl_item(rep, "components", i);
            const char *name = xfer_ctl_str(it, "name", "");
            if (strcmp(xfer_ctl_str(it, "state", ""), "running") != 0)
                continue;
            for (k = 0; k < cfg->nchannels; k++) {
                const xfer_cfg_channel_t *ch = &cfg->channels[k];
                int other = ch->from == failed ? ch->to : ch->to == failed ? ch->from : -1;
                if (other >= 0 && strcmp(cfg->components[other].name, name) == 0 &&
                    (r->report_components ? r->jobs[other].pid > 0 : r->running > 0)) {
                    n++;
                    break;
                }
            }
        }
    }
    xfer_ctl_msg_free(&req);
    xfer_ctl_msg_free(&rep);
    return n;
}

/* The index of component @p name, or -1 (a launch of several: "mpiexec", "srun"). */
static int comp_of(const xfer_config_t *cfg, const char *name)
{
    int c;
    for (c = 0; c < cfg->ncomponents; c++)
        if (strcmp(cfg->components[c].name, name) == 0)
            return c;
    return -1;
}

/* Is @p name a component this xfer-run launched (not one --without left out, nor, under
 * --attach, the run's others)? */
static int launched_here(const plan_t *pl, const char *name)
{
    const int c = comp_of(pl->cfg, name);
    return c >= 0 && (!pl->absent || !pl->absent[c]);
}

/* The earliest failure in xferd's status reply @p rep of another component than @p skip (NULL:
 * any; @p pl: of the components launched here only): its name into @p who and xferd's reason
 * into @p why. 0: none. */
static int first_failure(const xfer_ctl_msg_t *rep, const char *skip, const plan_t *pl, char *who,
                         size_t wlen, char *why, size_t ylen)
{
    int64_t best = INT64_MAX;
    int i, found = 0;

    for (i = 0; i < xfer_ctl_nitems(rep, "failures"); i++) {
        const xfer_ctl_msg_t *it = xfer_ctl_item(rep, "failures", i);
        const char *name = xfer_ctl_str(it, "component", "");
        const int64_t at = xfer_ctl_int(it, "at_ms", INT64_MAX);
        if ((skip && strcmp(name, skip) == 0) || at >= best || (pl && !launched_here(pl, name)))
            continue;
        best = at;
        snprintf(who, wlen, "%s", name);
        snprintf(why, ylen, "%s", xfer_ctl_str(it, "reason", "declared failed"));
        found = 1;
    }
    return found;
}

/* Did xferd declare another component than @p c failed already (a stall it detected, a failure
 * it was told of)? Then that one failed first and @p c's exit is the consequence: its name and
 * xferd's reason into @p who and @p why. The first error a rank of @p c reported (it may have
 * died before its own words came out) into @p err ("" if none). */
static int failed_before(runner_t *r, int c, char *who, size_t wlen, char *why, size_t ylen,
                         char *err, size_t elen)
{
    const char *mine = r->pl->cfg->components[c].name;
    xfer_ctl_msg_t *req = NULL, *rep = NULL;
    int i, found = 0;

    err[0] = '\0';
    if (!r->ctl || xfer_ctl_msg_new("status", &req) != XFER_SUCCESS)
        return 0;
    if (xfer_ctl_request(r->ctl, req, 1000, &rep) == XFER_SUCCESS) {
        for (i = 0; i < xfer_ctl_nitems(rep, "components"); i++) {
            const xfer_ctl_msg_t *it = xfer_ctl_item(rep, "components", i);
            if (strcmp(xfer_ctl_str(it, "name", ""), mine) == 0)
                snprintf(err, elen, "%s", xfer_ctl_str(it, "error", ""));
        }
        found = first_failure(rep, mine, NULL, who, wlen, why, ylen);
    }
    xfer_ctl_msg_free(&req);
    xfer_ctl_msg_free(&rep);
    return found;
}

/* A component that only reads channels with on_reader_loss: continue or spill failed (separate
 * launches: its own launch ended, or it stalled): the others go on without it. 1: so (said in
 * one line); 0: its failure is the run's (under --attach it is the only one). */
int reader_lost(runner_t *r, int c, const char *how)
{
    char names[512];
    if (r->lost && r->lost[c]) /* (lost before: its end now, xfer-run's stop of a reader that
                                  stalled say, is that loss's) */
        return 1;
    if (!r->report_components || !r->lost || r->result >= 0 || r->stop_at || r->pl->attach >= 0)
        return 0;
    if (!reader_expendable(r->pl->cfg, c, names, sizeof(names)))
        return 0;
    r->lost[c] = 1;
    r->readers_lost++;
    run_error("component %s failed (%s); it only reads, on_reader_loss: %s: the others go on",
              r->pl->cfg->components[c].name, how, names);
    return 1;
}

void how_ended(int code, char *how, size_t len)
{
    if (code > 128)
        snprintf(how, len, "signal %d, %s", code - 128, strsignal(code - 128));
    else
        snprintf(how, len, "exit code %d", code);
}

/* The run's first failure, in one line: @p c ended with @p code (> 128: a signal), unless xferd
 * declared another component failed before it. */
void report_first(runner_t *r, int c, int code)
{
    const char *name = r->pl->cfg->components[c].name;
    char who[256], why[512], how[96], err[1200];
    how_ended(code, how, sizeof(how));
    if (r->pl->attach >= 0) { /* alone: the run's other failures are not its */
        (void) failed_before(r, c, who, sizeof(who), why, sizeof(why), err, sizeof(err));
        if (err[0])
            run_error("component %s failed (%s): its first error: %s", name, how, err);
        else
            run_error("component %s failed (%s)", name, how);
    } else if (failed_before(r, c, who, sizeof(who), why, sizeof(why), err, sizeof(err)))
        run_error("component %s failed (xferd: %s); %s then ended (%s); stopping the others", who,
                  why, name, how);
    else if (err[0])
        run_error("component %s failed (%s): its first error: %s; stopping the others", name, how,
                  err);
    else
        run_error("component %s failed (%s); stopping the others", name, how);
}

/* One launch of every component ended in failure (MPMD: MPI_Abort may have ended it, the
 * component's own words with it): the first error each component's ranks reported to xferd. */
void report_errors(runner_t *r)
{
    xfer_ctl_msg_t *req = NULL, *rep = NULL;
    int i;
    if (!r->ctl || xfer_ctl_msg_new("status", &req) != XFER_SUCCESS)
        return;
    if (xfer_ctl_request(r->ctl, req, 1000, &rep) == XFER_SUCCESS)
        for (i = 0; i < xfer_ctl_nitems(rep, "components"); i++) {
            const xfer_ctl_msg_t *it = xfer_ctl_item(rep, "components", i);
            const char *err = xfer_ctl_str(it, "error", "");
            if (err[0])
                run_error("component %s failed: its first error: %s", xfer_ctl_str(it, "name", "?"),
                          err);
        }
    xfer_ctl_msg_free(&req);
    xfer_ctl_msg_free(&rep);
}

/* No launched component waits or runs any more, by xferd's word: the launches of the ones that
 * did not say bye (failed, and stopped or hung) are stopped. One whose component said bye (done)
 * ends on its own, with its own exit code, unless the stop's SIGKILL comes first
 * (KILL_AFTER_MS); with only such launches left, they are stopped LEFTOVER_GRACE_MS later. */
static void stop_left(runner_t *r, int64_t now)
{
    int j, any = 0;
    for (j = 0; j < r->njobs; j++) {
        const int c = comp_of(r->pl->cfg, r->jobs[j].name);
        if (r->jobs[j].pid > 0 && !(c >= 0 && r->bye[c])) {
            if (!any++)
                run_note("no component is left running; stopping the run");
            kill(-r->jobs[j].pid, SIGTERM);
        }
    }
    if (any) {
        r->stop_at = now; /* (the clock for SIGKILL) */
        return;
    }
    if (!r->done_since)
        r->done_since = now;
    if (now < r->done_since + LEFTOVER_GRACE_MS)
        return;
    run_note("the components that said bye did not exit within %d ms; stopping them",
             LEFTOVER_GRACE_MS);
    stop_jobs(r, SIGTERM);
}

/* A component that stopped beating (a hung or stopped process, a lost node) ends no launch:
 * its peers that wait for it fail on their own (xferd tells them), and one that computes
 * learns it at its next call, however long that takes; but once every other component is done
 * (in one MPMD launch every other process then waits for it in MPI_Finalize) or failed, nothing
 * would end the run. So xfer-run reads xferd's verdicts every second: the first one about a
 * component still running is the run's first failure (said at once, exit status 1); when no
 * component is left waiting or running, the run stops (SIGTERM, then SIGKILL, which a stopped
 * process does not hold off). */
void watch_xferd(runner_t *r, int64_t now)
{
    const xfer_config_t *cfg = r->pl->cfg;
    xfer_ctl_msg_t *req = NULL, *rep = NULL;
    char who[256] = "", why[512] = "";
    int i, c = -1, alive = 0, answered = 0;

    if (!r->ctl || r->xferd <= 0 || r->running == 0 || r->stop_at || r->stop_due ||
        (r->result >= 0 && !r->hung) || now < r->watch_at)
        return;
    r->watch_at = now + WATCH_MS;
    if (xfer_ctl_msg_new("status", &req) != XFER_SUCCESS)
        return;
    if (xfer_ctl_request(r->ctl, req, WATCH_MS / 2, &rep) == XFER_SUCCESS) {
        answered = 1;
        /* a component started elsewhere (--without, then --attach) is its xfer-run's */
        (void) first_failure(rep, NULL, r->pl, who, sizeof(who), why, sizeof(why));
        for (i = 0; i < xfer_ctl_nitems(rep, "components"); i++) {
            const xfer_ctl_msg_t *it = xfer_ctl_item(rep, "components", i);
            const char *state = xfer_ctl_str(it, "state", "");
            const char *name = xfer_ctl_str(it, "name", "");
            const int k = comp_of(cfg, name);
            alive += launched_here(r->pl, name) &&
                     (!strcmp(state, "waiting") || !strcmp(state, "running"));
            if (k >= 0)
                r->bye[k] = strcmp(state, "done") == 0;
        }
    }
    xfer_ctl_msg_free(&req);
    xfer_ctl_msg_free(&rep);
    if (!answered)
        return;
    if (r->result < 0) {
        c = who[0] ? comp_of(cfg, who) : -1;
        if (c < 0 || (r->ended && r->ended[c]))
            return; /* (an exit xfer-run reported itself: its own path names it) */
        if (!r->lost[c]) {
            char how[600];
            snprintf(how, sizeof(how), "xferd: %s", why);
            if (!reader_lost(r, c, how)) {
                r->result = EXIT_FAILED;
                r->hung = 1;
                run_error("component %s failed (xferd: %s); its peers fail as they meet it", who,
                          why);
            }
        }
    }
    if (alive == 0)
        stop_left(r, now);
}

int others_running(runner_t *r, char *name, size_t len)
{
    xfer_ctl_msg_t *req = NULL, *rep = NULL;
    int i, n = 0;
    if (!r->ctl || xfer_ctl_msg_new("status", &req) != XFER_SUCCESS)
        return 0;
    if (xfer_ctl_request(r->ctl, req, WATCH_MS / 2, &rep) == XFER_SUCCESS)
        for (i = 0; i < xfer_ctl_nitems(rep, "components"); i++) {
            const xfer_ctl_msg_t *it = xfer_ctl_item(rep, "components", i);
            if (strcmp(xfer_ctl_str(it, "state", ""), "running") != 0)
                continue;
            if (!n++)
                snprintf(name, len, "%s", xfer_ctl_str(it, "name", ""));
        }
    xfer_ctl_msg_free(&req);
    xfer_ctl_msg_free(&rep);
    return n;
}
