/* One SSH connection to one host with one exec channel (libssh2), driven
 * without blocking: the launcher's event loop calls ssh_conn_advance
 * when the socket is ready, for every host at once. What the SSH way of
 * agent_link.h (link_ssh.c) is made of; private to start/. */
#ifndef HVD_SSH_CONN_H
#define HVD_SSH_CONN_H

#include <libssh2.h>
#include <stddef.h>
#include <sys/types.h>

#include "agent_link.h"

/* The steps, in order; a failure names the step it happened in. */
#define SSH_STEPS(X)                                                           \
    X(RESOLVE, "resolve")                                                      \
    X(CONNECT, "connect")                                                      \
    X(HANDSHAKE, "handshake")                                                  \
    X(HOSTKEY, "host key")                                                     \
    X(AUTH, "auth")                                                            \
    X(EXEC, "exec")                                                            \
    X(OPEN, "running")                                                         \
    X(CLOSING, "closing")                                                      \
    X(CLOSED, "closed")

typedef enum ssh_step {
#define SSH_STEP_ENUM(id, name) SSH_##id,
    SSH_STEPS(SSH_STEP_ENUM)
#undef SSH_STEP_ENUM
} ssh_step;

typedef struct ssh_conn {
    ssh_target t;
    const char *command;
    ssh_step step;
    int failed; /* the step `step` failed; see error */
    char error[600];
    int fd;
    LIBSSH2_SESSION *s;
    LIBSSH2_CHANNEL *ch;
    LIBSSH2_AGENT *agent;
    struct libssh2_agent_publickey *ids[16]; /* agent's, -i's own first */
    int nids, id;
    int agent_done;
    char keys[4][1024]; /* identity files still to try */
    int nkeys, key;
    int rsa_refused;
    char local_addr[64]; /* this side of the connection */
    int exit_code;       /* once CLOSED: the remote command's, or 128+sig */
} ssh_conn;

const char *ssh_step_name(ssh_step s);

/* Resolves the host and starts a non-blocking connect. Returns 0, or -1
 * with failed set. */
int ssh_conn_start(ssh_conn *c, const ssh_target *t, const char *command);
/* Moves through the steps up to OPEN as far as it can without blocking.
 * Returns 1 once OPEN, 0 while waiting, -1 on failure (failed, error). */
int ssh_conn_advance(ssh_conn *c);
/* POLLIN and/or POLLOUT: what the connection waits for. */
short ssh_conn_events(const ssh_conn *c);
/* Reads stdout (stream 0) or stderr (1) of the channel: > 0 bytes, 0 at
 * EOF, LIBSSH2_ERROR_EAGAIN, or another negative error. */
ssize_t ssh_conn_read(ssh_conn *c, int stream, char *buf, size_t n);
/* 1 when the channel has data or an EOF to read that poll cannot see:
 * every libssh2 call that reads the socket (a read of either stream, a
 * write, which first drains what came in) moves all that arrived into
 * libssh2's queue, so one stream's data or the EOF can wait there with
 * the socket empty. */
int ssh_conn_buffered(const ssh_conn *c);
/* Writes to the channel's stdin: bytes written, EAGAIN, or error. */
ssize_t ssh_conn_write(ssh_conn *c, const char *buf, size_t n);
/* Once both streams hit EOF: waits for the close without blocking;
 * returns 1 when CLOSED (exit_code set), 0 to call again, -1 on error. */
int ssh_conn_finish(ssh_conn *c);
/* Drops the connection at once (no waiting for the remote side). */
void ssh_conn_release(ssh_conn *c);

#endif
