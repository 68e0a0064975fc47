/* The srun way: a node's agent, started by the job's one srun step
 * (srun_step.h), reached over the three connections it made back. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "link_way.h"
#include "srun_step.h"

typedef struct srun_node {
    srun_step *st; /* the fleet's; shared by every node's link */
    size_t node;
    char status[64]; /* "exit CODE\n" as it arrives */
    size_t len;
    char err[700];
} srun_node;

static srun_node *
of(const hvdrun_link *l)
{
    return l->impl;
}

static int
all_connected(const srun_node *s)
{
    for (int k = 0; k < SRUN_STREAMS; k++)
        if (srun_step_fd(s->st, s->node, k) < 0)
            return 0;
    return 1;
}

static int
s_advance(hvdrun_link *l)
{
    srun_node *s = of(l);

    srun_step_poll(s->st);
    if (all_connected(s))
        return 1;
    if (!srun_step_done(s->st))
        return 0;
    snprintf(s->err, sizeof(s->err),
             "srun ended (exit %d) before this node's agent connected%s%.500s",
             srun_step_code(s->st), srun_step_last_line(s->st)[0] ? ": " : "",
             srun_step_last_line(s->st));
    return -1;
}

static int
stream_fd(const srun_node *s, int stream)
{
    return srun_step_fd(s->st, s->node, stream ? SRUN_STDERR : SRUN_STDIO);
}

static ssize_t
s_read(hvdrun_link *l, int stream, char *buf, size_t n)
{
    srun_node *s = of(l);
    ssize_t r = read(stream_fd(s, stream), buf, n);
    int e = errno;

    srun_step_poll(s->st); /* srun's own lines, as they come */
    if (r < 0 && (e == EAGAIN || e == EINTR))
        return -1;
    return r < 0 ? 0 : r;
}

static ssize_t
s_write(hvdrun_link *l, const char *buf, size_t n)
{
    ssize_t r = send(stream_fd(of(l), 0), buf, n, MSG_NOSIGNAL);

    if (r < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    return r;
}

/* The agent's code arrives on the status connection; "bye" lets its
 * srun task end with 0 (a failure is hvdrun's to report, not srun's). */
static int
s_finish(hvdrun_link *l, int *code)
{
    srun_node *s = of(l);
    int fd = srun_step_fd(s->st, s->node, SRUN_STATUS);
    ssize_t r = read(fd, s->status + s->len, sizeof(s->status) - 1 - s->len);

    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (r > 0) {
        s->len += (size_t)r;
        s->status[s->len] = '\0';
        if (strchr(s->status, '\n') == NULL && s->len < sizeof(s->status) - 1)
            return 0;
    }
    /* (a "bye" that cannot go: the task ends with the code itself) */
    if (sscanf(s->status, "exit %d", code) == 1)
        (void)send(fd, "bye\n", 4, MSG_NOSIGNAL);
    else
        *code = 255; /* the connection broke: the node or its task died */
    return 1;
}

static int
s_pollfd(const hvdrun_link *l, int stream, short *events)
{
    const srun_node *s = of(l);

    *events = POLLIN;
    if (!l->open)
        return stream == 0 ? srun_step_pollfd(s->st) : -1;
    /* both ended: the exit code comes on the status connection */
    if (l->eof[0] && l->eof[1])
        return stream == 0 ? srun_step_fd(s->st, s->node, SRUN_STATUS) : -1;
    if (l->eof[stream])
        return -1;
    return stream_fd(s, stream);
}

static int
s_ready(const hvdrun_link *l)
{
    return !l->open && all_connected(of(l));
}

static int
s_logging_in(const hvdrun_link *l)
{
    (void)l;
    return 0;
}

static const char *
s_step(const hvdrun_link *l)
{
    return l->open ? "running" : "srun";
}

static const char *
s_error(const hvdrun_link *l)
{
    return of(l)->err;
}

static const char *
s_local_addr(const hvdrun_link *l)
{
    return srun_step_local_addr(of(l)->st, of(l)->node);
}

static void
s_keepalive(hvdrun_link *l)
{
    (void)l; /* a dead node: Slurm ends the step; hvdd's heartbeats */
}

static void
s_close(hvdrun_link *l)
{
    srun_node *s = of(l);

    srun_step_close_node(s->st, s->node);
    free(s);
}

static const link_way srun_way = {
    .name = "srun",
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
hvdrun_link_srun(srun_step *st, size_t node)
{
    srun_node *s = calloc(1, sizeof(*s));
    hvdrun_link *l;

    if (s == NULL)
        return NULL;
    s->st = st;
    s->node = node;
    if ((l = hvdrun_link_new(&srun_way, s)) == NULL)
        free(s);
    return l;
}
