/* The SSH way: another host's agent, the remote command of one SSH
 * connection's one exec channel (ssh_conn.c). */
#include <libssh2.h>
#include <stdlib.h>

#include "link_way.h"
#include "ssh_conn.h"

int
hvdrun_links_begin(void)
{
    return libssh2_init(0) == 0 ? 0 : -1;
}

void
hvdrun_links_end(void)
{
    libssh2_exit();
}

static ssh_conn *
of(const hvdrun_link *l)
{
    return l->impl;
}

static int
s_advance(hvdrun_link *l)
{
    return of(l)->failed ? -1 : ssh_conn_advance(of(l));
}

static ssize_t
s_read(hvdrun_link *l, int stream, char *buf, size_t n)
{
    ssize_t r = ssh_conn_read(of(l), stream, buf, n);

    if (r == LIBSSH2_ERROR_EAGAIN)
        return -1;
    return r < 0 ? 0 : r; /* a broken connection: EOF */
}

static ssize_t
s_write(hvdrun_link *l, const char *buf, size_t n)
{
    ssize_t r = ssh_conn_write(of(l), buf, n);

    if (r == LIBSSH2_ERROR_EAGAIN)
        return 0;
    return r < 0 ? -1 : r;
}

static int
s_finish(hvdrun_link *l, int *code)
{
    int r = ssh_conn_finish(of(l));

    if (r == 0)
        return 0;
    *code = r > 0 ? of(l)->exit_code : 255;
    return 1;
}

/* One socket carries both streams (and the login before them). */
static int
s_pollfd(const hvdrun_link *l, int stream, short *events)
{
    *events = ssh_conn_events(of(l));
    return stream == 0 && !l->done ? of(l)->fd : -1;
}

static int
s_ready(const hvdrun_link *l)
{
    /* (once both EOFs are read, the fleet asks for the close at once) */
    return l->open && !(l->eof[0] && l->eof[1]) && ssh_conn_buffered(of(l));
}

static int
s_logging_in(const hvdrun_link *l)
{
    return !of(l)->failed && of(l)->step < SSH_EXEC;
}

static const char *
s_step(const hvdrun_link *l)
{
    return ssh_step_name(of(l)->step);
}

static const char *
s_error(const hvdrun_link *l)
{
    return of(l)->error;
}

static const char *
s_local_addr(const hvdrun_link *l)
{
    return of(l)->local_addr;
}

/* In non-blocking mode sending keepalives (every 15 s, configured at
 * connect) is the caller's job. */
static void
s_keepalive(hvdrun_link *l)
{
    int next;

    libssh2_keepalive_send(of(l)->s, &next);
}

static void
s_close(hvdrun_link *l)
{
    ssh_conn_release(of(l));
    free(of(l));
}

static const link_way ssh_way = {
    .name = "ssh",
    .remote = 1,
    .advance = s_advance,
    .read = s_read,
    .write = s_write,
    .finish = s_finish,
    .pollfd = s_pollfd,
    .ready = s_ready,
    .logging_in = s_logging_in,
    .step = s_step,
    .error = s_error,
    .local_addr = s_local_addr,
    .keepalive = s_keepalive,
    .close = s_close,
};

hvdrun_link *
hvdrun_link_ssh(const ssh_target *t, const char *command)
{
    ssh_conn *c = calloc(1, sizeof(*c));
    hvdrun_link *l;

    if (c == NULL)
        return NULL;
    /* a start that fails here (resolve) leaves c failed: the first
     * advance reports it */
    ssh_conn_start(c, t, command);
    if ((l = hvdrun_link_new(&ssh_way, c)) == NULL) {
        ssh_conn_release(c);
        free(c);
    }
    return l;
}
