/* hvdd's HTTP server (libmicrohttpd, one epoll thread): feeds requests to
 * hvdd_handle, holds long-polls, runs the timers. */
#ifndef HVDD_SERVER_H
#define HVDD_SERVER_H

#include <stddef.h>

#include "request.h"

typedef struct hvdd_server hvdd_server;

typedef struct hvdd_server_opts {
    const char *addr;   /* numeric IPv4 or IPv6; NULL: every address */
    int port;           /* 0: ephemeral */
    int listen_fd;      /* >= 0: serve this bound, listening socket */
    int channel_fd;     /* >= 0: the launcher's channel (hvdd_chan.h) */
    const char **allow; /* addresses that may use the store, NULL-ended */
    unsigned max_conns; /* connections at once, at most (the descriptor
                           limit may allow fewer) */
    unsigned per_addr;  /* of them from one address */
    /* Called (under the server's lock) when the job aborts. */
    void (*on_abort)(void *arg, const char *reason);
    /* Called (likewise) with a rank's warning for the launcher. */
    void (*on_warn)(void *arg, const char *text);
    void *arg;
} hvdd_server_opts;

/* Starts serving st. *port gets the bound port. Returns NULL with err. */
hvdd_server *hvdd_server_start(hvdd_state *st, const hvdd_server_opts *o,
                               int *port, char *err, size_t errlen);
/* Answers every held request (503) and stops. Accepts NULL. */
void hvdd_server_stop(hvdd_server *s);

#endif
