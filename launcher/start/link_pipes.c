/* The pipes way: the launch host's own agent, a child process whose
 * stdin, stdout and stderr are pipes. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "link_way.h"
#include "spawn.h"

extern char **environ;

typedef struct pipes {
    spawned child; /* pid, out_fd, err_fd */
    int in_fd;
} pipes;

static pipes *
of(const hvdrun_link *l)
{
    return l->impl;
}

static int
p_advance(hvdrun_link *l)
{
    (void)l;
    return 1; /* running since spawn */
}

static ssize_t
p_read(hvdrun_link *l, int stream, char *buf, size_t n)
{
    pipes *p = of(l);
    ssize_t r = read(stream ? p->child.err_fd : p->child.out_fd, buf, n);

    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return -1;
    return r < 0 ? 0 : r;
}

static ssize_t
p_write(hvdrun_link *l, const char *buf, size_t n)
{
    ssize_t r = write(of(l)->in_fd, buf, n);

    if (r < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    return r;
}

static int
p_finish(hvdrun_link *l, int *code)
{
    int status;

    if (waitpid(of(l)->child.pid, &status, WNOHANG) != of(l)->child.pid)
        return 0;
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return 1;
}

static int
p_pollfd(const hvdrun_link *l, int stream, short *events)
{
    *events = POLLIN;
    if (l->eof[stream])
        return -1;
    return stream ? of(l)->child.err_fd : of(l)->child.out_fd;
}

static int
p_logging_in(const hvdrun_link *l)
{
    (void)l;
    return 0;
}

static const char *
p_step(const hvdrun_link *l)
{
    (void)l;
    return "running";
}

static const char *
p_error(const hvdrun_link *l)
{
    (void)l;
    return "";
}

static const char *
p_local_addr(const hvdrun_link *l)
{
    (void)l;
    return "127.0.0.1";
}

static void
p_keepalive(hvdrun_link *l)
{
    (void)l;
}

static void
close_pipes(pipes *p, int reaped)
{
    if (p->child.pid > 0 && !reaped) {
        kill(p->child.pid, SIGKILL);
        waitpid(p->child.pid, NULL, 0);
    }
    if (p->child.out_fd >= 0)
        close(p->child.out_fd);
    if (p->child.err_fd >= 0)
        close(p->child.err_fd);
    if (p->in_fd >= 0)
        close(p->in_fd);
    free(p);
}

static void
p_close(hvdrun_link *l)
{
    close_pipes(of(l), l->done);
}

static const link_way pipes_way = {
    .name = "pipes",
    .remote = 0,
    .advance = p_advance,
    .read = p_read,
    .write = p_write,
    .finish = p_finish,
    .pollfd = p_pollfd,
    .logging_in = p_logging_in,
    .step = p_step,
    .error = p_error,
    .local_addr = p_local_addr,
    .keepalive = p_keepalive,
    .close = p_close,
};

hvdrun_link *
hvdrun_link_pipes(char *const argv[], const sigset_t *unblock)
{
    pipes *p = calloc(1, sizeof(*p));
    hvdrun_link *l;

    if (p == NULL)
        return NULL;
    p->in_fd = -1;
    if (spawn_with_stdin(argv, environ, unblock, &p->child, &p->in_fd) != 0) {
        int e = errno;
        free(p);
        errno = e;
        return NULL;
    }
    close(p->child.status_fd); /* an exec failure shows as exit 127 */
    p->child.status_fd = -1;
    if ((l = hvdrun_link_new(&pipes_way, p)) == NULL) {
        close_pipes(p, 0);
        errno = ENOMEM;
        return NULL;
    }
    l->open = 1;
    return l;
}
