#include "guard.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct guard_msg {
    int32_t op; /* 1 add, 0 remove */
    int32_t pgid;
} guard_msg;

typedef struct groups {
    pid_t *v;
    size_t n, cap;
} groups;

static void
groups_apply(groups *g, const guard_msg *m)
{
    size_t i;

    for (i = 0; i < g->n; i++)
        if (g->v[i] == m->pgid) {
            if (m->op == 0)
                g->v[i] = g->v[--g->n];
            return;
        }
    if (m->op != 1)
        return;
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 64;
        pid_t *v = realloc(g->v, cap * sizeof(*v));
        if (v == NULL)
            return;
        g->v = v;
        g->cap = cap;
    }
    g->v[g->n++] = m->pgid;
}

static size_t
signal_all(groups *g, int sig)
{
    size_t i, alive = 0;

    for (i = 0; i < g->n; i++)
        if (kill(-g->v[i], sig) == 0)
            alive++;
    return alive;
}

static void
guard_main(int fd, double grace)
{
    groups g = {0};
    guard_msg m;
    ssize_t n;
    int waited_ms;

    for (;;) {
        n = read(fd, &m, sizeof(m));
        if (n == sizeof(m))
            groups_apply(&g, &m);
        else if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }
    if (signal_all(&g, SIGTERM) == 0)
        _exit(0);
    for (waited_ms = 0; waited_ms < grace * 1000; waited_ms += 20) {
        poll(NULL, 0, 20);
        if (signal_all(&g, 0) == 0)
            _exit(0);
    }
    signal_all(&g, SIGKILL);
    _exit(0);
}

int
guard_start(double grace, pid_t *guard)
{
    int p[2];
    pid_t pid;
    sigset_t all;

    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    if ((pid = fork()) < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        /* Leave the terminal's signals and hvdrun's output to hvdrun: the
         * guard must not keep a pipe to hvdrun's reader open. */
        int devnull = open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3; fd++)
            dup2(devnull, fd);
        /* every other descriptor, in two calls (one close per possible
         * descriptor was a thousand system calls) */
        if ((p[0] > 3 && close_range(3, (unsigned)p[0] - 1, 0) != 0) ||
            close_range((unsigned)p[0] + 1, ~0u, 0) != 0)
            for (int fd = 3; fd < 1024; fd++) /* (a kernel before 5.9) */
                if (fd != p[0])
                    close(fd);
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        guard_main(p[0], grace);
    }
    close(p[0]);
    *guard = pid;
    return p[1];
}

static void
send_msg(int fd, int op, pid_t pgid)
{
    guard_msg m = {op, (int32_t)pgid};

    if (fd >= 0 && write(fd, &m, sizeof(m)) != sizeof(m))
        return;
}

void
guard_add(int fd, pid_t pgid)
{
    send_msg(fd, 1, pgid);
}

void
guard_remove(int fd, pid_t pgid)
{
    send_msg(fd, 0, pgid);
}

void
guard_drop(guard_started *g)
{
    if (g == NULL || g->fd < 0)
        return;
    close(g->fd); /* no group registered: it exits at once */
    waitpid(g->pid, NULL, 0);
    g->fd = -1;
}
