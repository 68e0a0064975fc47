#include "agent_link.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int
hvdrun_link_local(hvdrun_link *l, char *const argv[], const sigset_t *unblock)
{
    memset(l, 0, sizeof(*l));
    l->in_fd = -1;
    l->ssh.fd = -1;
    if (spawn_with_stdin(argv, environ, unblock, &l->local, &l->in_fd) != 0)
        return -1;
    close(l->local.status_fd); /* an exec failure shows as exit 127 */
    l->local.status_fd = -1;
    l->open = 1;
    return 0;
}

int
hvdrun_link_remote(hvdrun_link *l, const ssh_target *t, const char *command)
{
    memset(l, 0, sizeof(*l));
    l->remote = 1;
    l->in_fd = -1;
    l->local = (spawned){0, -1, -1, -1};
    return ssh_conn_start(&l->ssh, t, command);
}

void
hvdrun_link_opened(hvdrun_link *l)
{
    l->open = 1;
}

int
hvdrun_link_send(hvdrun_link *l, const char *data, size_t n)
{
    char *p = realloc(l->pending, l->pending_len + n);

    if (p == NULL)
        return -1;
    memcpy(p + l->pending_len, data, n);
    l->pending = p;
    l->pending_len += n;
    hvdrun_link_flush(l);
    return 0;
}

static void
consumed(hvdrun_link *l, size_t n)
{
    memmove(l->pending, l->pending + n, l->pending_len - n);
    l->pending_len -= n;
}

void
hvdrun_link_flush(hvdrun_link *l)
{
    ssize_t n = 1;

    while (l->open && !l->done && l->pending_len > 0 && n > 0) {
        if (l->remote)
            n = ssh_conn_write(&l->ssh, l->pending, l->pending_len);
        else
            n = write(l->in_fd, l->pending, l->pending_len);
        if (n > 0)
            consumed(l, (size_t)n);
        else if (!l->remote && n < 0 && errno != EAGAIN && errno != EINTR)
            l->pending_len = 0; /* the agent is gone: nobody to tell */
        else if (l->remote && n < 0 && n != LIBSSH2_ERROR_EAGAIN)
            l->pending_len = 0;
    }
}

ssize_t
hvdrun_link_read(hvdrun_link *l, int stream, char *buf, size_t n)
{
    ssize_t r;

    if (l->eof[stream] || !l->open)
        return -1;
    if (l->remote) {
        r = ssh_conn_read(&l->ssh, stream, buf, n);
        if (r == LIBSSH2_ERROR_EAGAIN)
            return -1;
    } else {
        r = read(stream ? l->local.err_fd : l->local.out_fd, buf, n);
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            return -1;
    }
    if (r <= 0) {
        l->eof[stream] = 1;
        return 0;
    }
    return r;
}

int
hvdrun_link_reap(hvdrun_link *l)
{
    int status;

    if (l->done)
        return 1;
    if (!l->eof[0] || !l->eof[1])
        return 0;
    if (l->remote) {
        int r = ssh_conn_finish(&l->ssh);
        if (r == 0)
            return 0;
        l->code = r > 0 ? l->ssh.exit_code : 255;
    } else {
        if (waitpid(l->local.pid, &status, WNOHANG) != l->local.pid)
            return 0;
        l->code =
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    l->done = 1;
    return 1;
}

int
hvdrun_link_pollfd(const hvdrun_link *l, int stream, short *events)
{
    if (l->remote) {
        *events = ssh_conn_events(&l->ssh);
        return stream == 0 && !l->done ? l->ssh.fd : -1;
    }
    *events = POLLIN;
    if (l->eof[stream])
        return -1;
    return stream ? l->local.err_fd : l->local.out_fd;
}

void
hvdrun_link_release(hvdrun_link *l)
{
    if (l->remote)
        ssh_conn_release(&l->ssh);
    if (!l->remote && l->local.pid > 0 && !l->done) {
        kill(l->local.pid, SIGKILL);
        waitpid(l->local.pid, NULL, 0);
    }
    if (l->local.out_fd >= 0)
        close(l->local.out_fd);
    if (l->local.err_fd >= 0)
        close(l->local.err_fd);
    if (l->in_fd >= 0)
        close(l->in_fd);
    free(l->pending);
    memset(l, 0, sizeof(*l));
    l->in_fd = -1;
}
