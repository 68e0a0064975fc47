/* What server.c shares with hvdd's other front door, the launcher's
 * channel (channel.c): a request's state and its run under the server's
 * lock. Private to daemon/. */
#ifndef HVDD_SERVER_IMPL_H
#define HVDD_SERVER_IMPL_H

#include "request.h"
#include "server.h"

struct hvdd_channel;

/* One request's state, kept across the handler's calls and across waits.
 * mc is its HTTP connection; chan its channel instead (mc NULL). */
typedef struct conn {
    struct MHD_Connection *mc;
    int fd; /* mc's socket */
    struct hvdd_channel *chan;
    char *body;
    size_t len, cap;
    int too_big;
    int conn_state;
    /* while held: */
    int waiting;
    int deadline_passed;
    double deadline;
    char event[KV_MAX_SCOPE + KV_MAX_KEY + 16];
    struct conn *prev, *next;       /* every held request */
    struct conn *ev_prev, *ev_next; /* those held for the same event */
    struct conn *ready;             /* a channel's: released, to run again */
} conn;

/* Runs rq (c's) under the server's lock: 1 when c is now held (its front
 * door hears of its release: MHD resumes it, a channel's gets
 * hvdd_channel_released), else 0 with rs filled (the caller frees its
 * body). A stopping server answers 503. */
int hvdd_server_run(hvdd_server *s, conn *c, const hvdd_request *rq,
                    hvdd_response *rs);

/* Takes c out of the held requests if it is there (a channel that ends
 * with requests held). */
void hvdd_server_forget(hvdd_server *s, conn *c);

/* The server's lock, which guards held requests and the channel's list
 * of released ones. */
void hvdd_server_lock(hvdd_server *s);
void hvdd_server_unlock(hvdd_server *s);

/* The job's token, for the channel's requests. */
const char *hvdd_server_token(const hvdd_server *s);

#endif
