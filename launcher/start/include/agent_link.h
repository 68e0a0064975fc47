/* How the launcher starts a host's agent and talks to it: the one seam
 * for "how agents get started". A link is started one of several ways
 * (pipes to a child process for the launch host, an SSH channel for
 * another host; each way lives in its own file of start/), and then
 * reads, writes and ends the same way, without blocking, so one event
 * loop (the fleet) serves every host. A new way adds a constructor here
 * and a file there. */
#ifndef HVDRUN_LINK_H
#define HVDRUN_LINK_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct hvdrun_link hvdrun_link;

/* What an SSH start needs. */
typedef struct ssh_target {
    const char *host;
    int port;
    const char *user;
    const char *identity_file; /* tried after ssh-agent; or NULL */
    const char *known_hosts;
    int accept_new;
    double timeout; /* seconds for blocking-prone calls */
} ssh_target;

/* Sets up and tears down what the SSH way needs (libssh2), once per run.
 * hvdrun_links_begin returns 0 or -1. The SSH way is a library of its own
 * (hvdstartssh): a program that starts agents only through srun or pipes
 * (hvdrun itself, for a Slurm job) loads neither libssh2 nor OpenSSL. */
int hvdrun_links_begin(void);
void hvdrun_links_end(void);

/* The launch host's agent: argv run with the launcher's environment and
 * `unblock` as its signal mask, on pipes. NULL with errno on failure. */
hvdrun_link *hvdrun_link_pipes(char *const argv[], const sigset_t *unblock);
/* Another host's agent: `command` over SSH to t. NULL only when out of
 * memory; a start that fails at once is a failed link (see _advance). */
hvdrun_link *hvdrun_link_ssh(const ssh_target *t, const char *command);

/* Node `node` of an srun step (srun_step.h; the step stays the
 * caller's and must outlive the link). NULL only when out of memory. */
struct srun_step;
hvdrun_link *hvdrun_link_srun(struct srun_step *st, size_t node);

/* Moves a start on as far as it can without blocking: 1 once the agent
 * runs (messages can go), 0 while starting, -1 when the start failed
 * (hvdrun_link_step and hvdrun_link_error say where and why). */
int hvdrun_link_advance(hvdrun_link *l);
/* 1 once the agent runs. */
int hvdrun_link_is_open(const hvdrun_link *l);
/* 1 for a link to another host. */
int hvdrun_link_is_remote(const hvdrun_link *l);
/* 1 while the start still holds a scarce resource of the other side
 * (an SSH login not yet at exec: sshd's MaxStartups counts those). */
int hvdrun_link_logging_in(const hvdrun_link *l);
/* Where the start is ("connect", "auth", "running", ...) and, after a
 * failure, why; owned by the link. */
const char *hvdrun_link_step(const hvdrun_link *l);
const char *hvdrun_link_error(const hvdrun_link *l);
/* This host's address as the agent's host reaches it (the SSH
 * connection's own end), for hvdd's address; "127.0.0.1" for pipes. */
const char *hvdrun_link_local_addr(const hvdrun_link *l);

/* Queues bytes for the agent's stdin. Returns 0 or -1 (out of memory). */
int hvdrun_link_send(hvdrun_link *l, const char *data, size_t n);
/* Writes what it can of the queue. */
void hvdrun_link_flush(hvdrun_link *l);
/* Reads stream 0 (stdout) or 1 (stderr): > 0 bytes, 0 at EOF, -1 when
 * nothing is there now. A broken connection reads as EOF. */
ssize_t hvdrun_link_read(hvdrun_link *l, int stream, char *buf, size_t n);
/* Once both streams ended: collects the exit code. 1 when done. */
int hvdrun_link_reap(hvdrun_link *l);
/* The agent's exit code, once reaped (the remote command's, or 128+sig;
 * 255 for a connection that broke). */
int hvdrun_link_code(const hvdrun_link *l);
/* The fd to poll for stream and its events, or -1. */
int hvdrun_link_pollfd(const hvdrun_link *l, int stream, short *events);
/* 1 when the link would move on at its next advance or read without
 * anything new to poll for: the caller must not sleep before it. Under
 * srun every node's handshakes go through one step, so one node's
 * advance can finish another's, already advanced in that turn; over
 * SSH a read of one stream, or a write, takes in all that arrived, so
 * the other stream's data, an EOF or the close can wait in libssh2. */
int hvdrun_link_ready(const hvdrun_link *l);
/* A dead network sends no FIN: SSH keepalives find it (a no-op for
 * pipes). */
void hvdrun_link_keepalive(hvdrun_link *l);
/* Drops the link at once: its agent sees EOF on stdin and stops; a local
 * agent still running gets SIGKILL. NULL accepted. */
void hvdrun_link_free(hvdrun_link *l);

#endif
