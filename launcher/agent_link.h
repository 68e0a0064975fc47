/* The launcher's line to one host's agent: an SSH channel for another
 * host, pipes to a child process for this one. Both read and write the
 * same way, without blocking, so one event loop serves every host. */
#ifndef HVD_AGENT_LINK_H
#define HVD_AGENT_LINK_H

#include <signal.h>
#include <sys/types.h>

#include "spawn.h"
#include "ssh_conn.h"

typedef struct agent_link {
    int remote;
    ssh_conn ssh;
    spawned local; /* the local agent: pid, out_fd, err_fd */
    int in_fd;
    int open;   /* the agent runs: messages can go */
    int eof[2]; /* its stdout, stderr ended */
    int done;   /* it is gone; code is its exit code */
    int code;
    char *pending; /* bytes for its stdin not yet written */
    size_t pending_len;
} agent_link;

/* Starts the launch host's agent: argv with the launcher's environment. */
int agent_link_local(agent_link *l, char *const argv[],
                     const sigset_t *unblock);
/* Starts connecting to a host; the agent runs once ssh_conn_advance
 * reports the channel open (then call agent_link_opened). */
int agent_link_remote(agent_link *l, const ssh_target *t, const char *command);
void agent_link_opened(agent_link *l);
/* Queues bytes for the agent's stdin. Returns 0 or -1 (out of memory). */
int agent_link_send(agent_link *l, const char *data, size_t n);
/* Writes what it can of the queue. */
void agent_link_flush(agent_link *l);
/* Reads stream 0 (stdout) or 1 (stderr): > 0 bytes, 0 at EOF (eof[] set),
 * -1 when nothing is there now. */
ssize_t agent_link_read(agent_link *l, int stream, char *buf, size_t n);
/* Once both streams ended: collects the exit code. 1 when done. */
int agent_link_reap(agent_link *l);
/* The fd to poll and its events, or -1. */
int agent_link_pollfd(const agent_link *l, int stream, short *events);
/* Drops the link; a local agent still running gets SIGKILL. */
void agent_link_free(agent_link *l);

#endif
