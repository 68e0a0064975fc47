/* The launcher's line to one host's agent: an SSH channel for another
 * host, pipes to a child process for this one. Both read and write the
 * same way, without blocking, so one event loop serves every host. */
#ifndef HVDRUN_LINK_H
#define HVDRUN_LINK_H

#include <signal.h>
#include <sys/types.h>

#include "spawn.h"
#include "ssh_conn.h"

typedef struct hvdrun_link {
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
} hvdrun_link;

/* Starts the launch host's agent: argv with the launcher's environment. */
int hvdrun_link_local(hvdrun_link *l, char *const argv[],
                      const sigset_t *unblock);
/* Starts connecting to a host; the agent runs once ssh_conn_advance
 * reports the channel open (then call hvdrun_link_opened). */
int hvdrun_link_remote(hvdrun_link *l, const ssh_target *t,
                       const char *command);
void hvdrun_link_opened(hvdrun_link *l);
/* Queues bytes for the agent's stdin. Returns 0 or -1 (out of memory). */
int hvdrun_link_send(hvdrun_link *l, const char *data, size_t n);
/* Writes what it can of the queue. */
void hvdrun_link_flush(hvdrun_link *l);
/* Reads stream 0 (stdout) or 1 (stderr): > 0 bytes, 0 at EOF (eof[] set),
 * -1 when nothing is there now. */
ssize_t hvdrun_link_read(hvdrun_link *l, int stream, char *buf, size_t n);
/* Once both streams ended: collects the exit code. 1 when done. */
int hvdrun_link_reap(hvdrun_link *l);
/* The fd to poll and its events, or -1. */
int hvdrun_link_pollfd(const hvdrun_link *l, int stream, short *events);
/* Drops the link; a local agent still running gets SIGKILL. */
void hvdrun_link_release(hvdrun_link *l);

#endif
