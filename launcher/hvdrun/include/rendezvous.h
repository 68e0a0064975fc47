/* Starting hvdd for a job and listening to what it reports. */
#ifndef HVD_RENDEZVOUS_H
#define HVD_RENDEZVOUS_H

#include <sys/types.h>

#include "hostlist.h"
#include "plan.h"
#include "hvdd_token.h"

typedef struct rendezvous {
    pid_t pid;
    int lifeline_fd; /* hvdd's stdin: the token, then EOF when we go */
    int events_fd;   /* hvdd's stdout: "abort REASON" lines */
    int channel_fd;  /* the launcher's channel (hvdd_chan.h), or -1 */
    int port;
    char addr[64]; /* where workers reach hvdd */
    char token[HVDD_TOKEN_LEN + 1];
} rendezvous;

typedef struct rendezvous_opts {
    const char *listen_addr; /* NULL: every address */
    int listen_port;         /* 0: ephemeral */
    double heartbeat_timeout;
    const char *iface;
    const char *master_addr;
    int master_port;
    const char *network_interface; /* for the agents' choice, or NULL */
    int channel; /* open the launcher's channel to hvdd (channel_fd) */
    int verbose;
} rendezvous_opts;

/* Binds the listening socket here (so that the port is known, and workers
 * may start, before hvdd runs), then starts hvdd on it with a fresh token
 * given on its stdin. Returns 0, or -1 with a message in err. */
int rendezvous_start(rendezvous *rv, const cfg_hostlist *hosts,
                     const cfg_plan *plan, const rendezvous_opts *o, char *err,
                     size_t errlen);

/* Closes hvdd's lifeline: hvdd begins to stop, and nothing waits for it
 * yet (rendezvous_stop does). */
void rendezvous_let_go(rendezvous *rv);

/* Closes hvdd's lifeline (and the channel, unless its owner took it and
 * set channel_fd to -1) and reaps hvdd (SIGKILL after 2 s). */
void rendezvous_stop(rendezvous *rv);

#endif
