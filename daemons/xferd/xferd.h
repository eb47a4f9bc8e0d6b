/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd, the workflow's control-plane daemon (docs/control-protocol.md): shared declarations of
 * the main loop (xferd.c), the registry of components, channels, failures and pending lookups
 * (state.c), the requests on it (ops.c), its replay and snapshot (replay.c), the ranks' liveness
 * (ranks.c) and the journal (journal.c). Only public libxfer headers are used. */
#ifndef XFERD_H
#define XFERD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <xfer/config.h>
#include <xfer/control.h>
#include <xfer/status.h>

#define XFERD_MAX_LOOKUPS  4096 /* pending lookups; more: err "busy" */
#define XFERD_MAX_FAILURES 4096 /* failures kept for status; later ones are still notified */
#define XFERD_MAX_IDENT    255  /* ZeroMQ routing ids are at most 255 bytes */
/* A session is gen * XFERD_SLOTS + component + 1: its component is found without a search.
 * Workflows have at most 4096 components. */
#define XFERD_SLOTS      8192
#define XFERD_MAX_RANKS  (1 << 20) /* ranks of a component whose beats are tracked */
#define XFERD_MAX_WAIT   86400000  /* longest lookup wait honoured, ms */
#define XFERD_RATE_SLOTS 8         /* one-second buckets of the step byte rate */
#define XFERD_RATE_WIN   5         /* seconds the rate is taken over */

enum { XFERD_INFO = 0, XFERD_WARN = 1, XFERD_ERROR = 2 };

typedef enum xferd_cstate {
    XFERD_WAITING = 0,
    XFERD_RUNNING = 1,
    XFERD_DONE = 2,
    XFERD_FAILED = 3
} xferd_cstate_t;

/** A ZeroMQ routing id (len 0: none known). */
typedef struct xferd_peer {
    unsigned char id[XFERD_MAX_IDENT];
    size_t len;
} xferd_peer_t;

typedef struct xferd_comp {
    const char *name; /* the configuration's */
    xferd_cstate_t state;
    int64_t session; /* 0: never registered */
    int64_t nprocs, pid;
    char *host;
    char *reason;           /* why it failed */
    int64_t failed_session; /* the session (incarnation) it was last declared failed in; 0 none */
    int64_t last_seen;      /* monotonic ms of the last request of its session; -1 never */
    int unconfirmed;        /* running as read back from the journal, not heard from since */
    int last_failure;       /* index into failures of its latest failure, -1 none */
    int notified;           /* failures[0 .. notified) were considered for its session */
    xferd_peer_t peer;      /* who last spoke for its session */
    /* ranks.c: the other ranks' beats, the first error a rank reported */
    int64_t registered; /* monotonic ms of its registration (or the daemon's restart) */
    int64_t *rank_seen; /* [nprocs]: each rank's last beat (-1: none yet); NULL: none came */
    int64_t *rank_pid;  /* [nprocs]: their pids, as their beats said */
    char *error;        /* the first error one of its ranks reported ("rank R: text") */
} xferd_comp_t;

/* A side's acks may reach the daemon before the step reports they depend on: the two leaders
 * report over connections of their own while the data goes over MPI. What a side reported is
 * acked[]; released[] is the part of it the other side's announcements cover, so it never
 * exceeds step[] + 1 and catches up as the step reports come (docs/control-protocol.md). */
typedef struct xferd_chan {
    const char *name;
    int from, to;        /* component indices: side 0 and side 1 */
    int sends[2];        /* the side has datasets to send (else it only receives) */
    char *port;          /* NULL: not published */
    int64_t step[2];     /* last step announced by each side, -1 none */
    int64_t acked[2];    /* steps each side reported released */
    int64_t released[2]; /* of those, the steps the other side's announcements cover */
    int64_t bytes;       /* payload announced, both sides */
    /* A side that sends under a flow policy (docs/runtime.md, "Flow policies") reports its
     * application's steps too ("flow"): the sender's number of the last step it sent (-1 none),
     * the steps `policy: latest` dropped and those a stride skipped. flow[]: it reported. */
    int flow[2];
    int64_t app_step[2], dropped[2], skipped[2];
    int64_t rate_sec[XFERD_RATE_SLOTS], rate_bytes[XFERD_RATE_SLOTS];
    /* A reader that attaches (docs/control-protocol.md, "attach"): the port it accepts on and
     * its session; the sender's session told of it (0: not yet). */
    char *attach_port;
    int64_t attach_session, attach_told;
} xferd_chan_t;

typedef struct xferd_failure {
    int comp;
    char *reason;
    int64_t at_ms; /* daemon uptime when declared */
} xferd_failure_t;

typedef struct xferd_lookup {
    xferd_peer_t peer;
    int64_t id;
    int comp, chan;
    int64_t deadline; /* monotonic ms */
} xferd_lookup_t;

typedef struct xferd_journal xferd_journal_t;

/** The outcome of one request: ok, deferred (answered later), or an error code and message. */
typedef struct xferd_res {
    const char *err; /* NULL: ok */
    char msg[512];
    int deferred;
} xferd_res_t;

typedef struct xferd {
    const xfer_config_t *cfg;
    int ncomp, nchan;
    xferd_comp_t *comp;
    xferd_chan_t *chan;
    xferd_failure_t *fail;
    int nfail;
    xferd_lookup_t *look;
    int nlook;
    int64_t gen;      /* generation of the next session */
    int64_t start_ms; /* monotonic ms of this (re)start */
    int recovered;
    int hb_ms, hb_timeout_ms;
    int64_t last_tick; /* monotonic ms of the last liveness check (0: none yet) */
    void *sock;        /* the ROUTER */
    xferd_journal_t *jr;
    FILE *log;
    int quiet;
    int stopping;
    char stop_reason[128];
    char *token;
    int64_t rl_sec; /* rate limit of the log lines about refused messages */
    int rl_lines;
    long rl_dropped;
} xferd_t;

/* ---- xferd.c ---------------------------------------------------------------------------- */
void xferd_log(xferd_t *d, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A line about a refused or undeliverable message: at most 20 a second, the rest counted. */
void xferd_log_refused(xferd_t *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Short hex form of a routing id for logs. */
const char *xferd_peer_hex(const xferd_peer_t *p, char *buf, size_t cap);
/* Send @p m to @p peer; a vanished peer or a full queue is logged, not fatal. */
void xferd_send(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *m);
/* Send a reply (ok when @p res->err is NULL); @p reply may carry extra fields or be NULL. */
void xferd_reply(xferd_t *d, const xferd_peer_t *peer, int64_t id, const xferd_res_t *res,
                 xfer_ctl_msg_t *reply);
void xferd_res_err(xferd_res_t *res, const char *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int64_t xferd_now_ms(void);

/* ---- state.c ---------------------------------------------------------------------------- */
xfer_status_t xferd_state_init(xferd_t *d, const xfer_config_t *cfg);
void xferd_state_free(xferd_t *d);
/* A component failed (journaled, peers notified). */
void xferd_declare_failure(xferd_t *d, int k, const char *reason);
/* Tell every live session that the daemon stops. */
void xferd_shutdown_notices(xferd_t *d, const char *reason);

/* state.c, for ops.c and replay.c: */
/* Printable, bounded copy of a client's string for messages and logs. */
const char *xferd_safe(const char *s, char *buf, size_t cap);
/* The component (channel) of that name in the workflow; -1 none. */
int xferd_comp_index(const xferd_t *d, const char *name);
int xferd_chan_index(const xferd_t *d, const char *name);
/* *@p dst becomes a copy of @p s (NULL: none); the old one is freed. */
void xferd_set_str(char **dst, const char *s);
/* The state changes, live (ops.c, once journaled) and replayed (replay.c). */
void xferd_apply_register(xferd_t *d, int k, int64_t session, int64_t nprocs, int64_t pid,
                          const char *host);
void xferd_apply_failed(xferd_t *d, int k, const char *reason, int64_t at_ms, int64_t session);
/* Reader @p session of channel @p ch offers @p port (NULL: its offer ends). */
void xferd_apply_attach(xferd_chan_t *ch, int64_t session, const char *port);
/* A reader attaches: the channel's stream is formed anew, its steps on the wire count from 0. */
void xferd_apply_anew(xferd_chan_t *ch);
void xferd_apply_step(xferd_chan_t *ch, int side, int64_t step, int64_t total);
void xferd_apply_ack(xferd_chan_t *ch, int side, int64_t acked);
void xferd_apply_flow(xferd_chan_t *ch, int side, int64_t app_step, int64_t dropped,
                      int64_t skipped);
/* A journal record: one message, its op naming the change. NULL when out of memory. */
xfer_ctl_msg_t *xferd_rec_new(const char *op);
/* Journal @p r (consumed) unless @p built failed; XFER_SUCCESS or the failure, logged. */
xfer_status_t xferd_rec_journal(xferd_t *d, xfer_ctl_msg_t *r, xfer_status_t built, int sync);
/* The failure notices component @p y has not had yet, and the offers of readers that attach to
 * its channels (while they are alive). */
void xferd_deliver_notices(xferd_t *d, int y);
/* Answer pending lookup @p i (with @p port when it is published) and drop it. */
void xferd_lookup_answer(xferd_t *d, int i, const xferd_res_t *res, const char *port);
/* Drop the pending lookups of component @p k (its session ended or was replaced). */
void xferd_lookups_drop_comp(xferd_t *d, int k);

/* ---- ops.c ------------------------------------------------------------------------------ */
/* Carry out a validated, authenticated request; the reply is sent unless deferred. */
void xferd_request(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req);
/* Liveness checks and lookup deadlines; returns the next time (monotonic ms) to call it. */
int64_t xferd_tick(xferd_t *d);

/* ---- replay.c --------------------------------------------------------------------------- */
/* Journal replay: apply one record (returns 0 when it does not fit this workflow). */
int xferd_apply_record(xferd_t *d, const xfer_ctl_msg_t *rec);
/* Restart: running components get a fresh liveness deadline, failures count as notified. */
void xferd_after_replay(xferd_t *d);
/* The records that rebuild the current state (compaction), one by one through @p put. */
xfer_status_t xferd_snapshot(xferd_t *d, xfer_status_t (*put)(void *ctx, xfer_ctl_msg_t *rec),
                             void *ctx);

/* ---- journal.c -------------------------------------------------------------------------- */
/* Replay @p path into @p d (when it exists), rewrite it compactly and open it for appending. */
xfer_status_t xferd_journal_open(xferd_t *d, const char *path);
/* Append @p rec; @p sync: fdatasync as well. */
xfer_status_t xferd_journal_append(xferd_t *d, const xfer_ctl_msg_t *rec, int sync);
/* Compact when the journal has grown a lot; called between requests (state and journal agree). */
void xferd_journal_maintain(xferd_t *d);
void xferd_journal_close(xferd_t *d);

/* ops.c: a reader that attaches to a sender that runs on (docs/control-protocol.md) */
void xferd_op_attach(xferd_t *d, const xferd_peer_t *peer, const xfer_ctl_msg_t *req,
                     xferd_res_t *res, int *who);

/* ranks.c: the ranks of each component, their beats and the errors they report */
void xferd_op_beat(xferd_t *d, const xfer_ctl_msg_t *req, xferd_res_t *res);
/* A rank reports an error a call returned to its application (it may abort next). */
void xferd_op_error(xferd_t *d, const xfer_ctl_msg_t *req, xferd_res_t *res);
/* A component (re)registers: its ranks start anew. */
void xferd_liveness_reset(xferd_comp_t *c, int64_t now);
/* The daemon did not run for @p stall ms: nobody's silence of that time counts. */
void xferd_liveness_shift(xferd_t *d, int64_t stall, int64_t now);
/* Declare failed every running component whose leader or any rank is silent too long. */
void xferd_liveness_check(xferd_t *d, int64_t now);

#endif /* XFERD_H */
