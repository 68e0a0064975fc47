#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "hvd_exit.h"

/* Runs in the child between fork and exec: async-signal-safe calls only. */
static void
child(char *const argv[], char *const envp[], const sigset_t *unblock,
      pid_t parent, int in, int out, int err, int status)
{
    int e;

    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(HVD_EXIT_NOTFOUND);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigprocmask(SIG_SETMASK, unblock, NULL);
    if (in < 0)
        in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        _exit(HVD_EXIT_NOTFOUND);
    execvpe(argv[0], argv, envp);
    e = errno;
    if (write(status, &e, sizeof(e)) < 0)
        _exit(HVD_EXIT_NOTFOUND);
    _exit(e == ENOENT ? HVD_EXIT_NOTFOUND : HVD_EXIT_NOEXEC);
}

static int
pipe_pair(int fds[2])
{
    return pipe2(fds, O_CLOEXEC);
}

static void
close_pair(int fds[2])
{
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* in_fd NULL: stdin from /dev/null; else a pipe whose write end it gets. */
static int
spawn(char *const argv[], char *const envp[], const sigset_t *unblock,
      spawned *out, int *in_fd)
{
    int o[2] = {-1, -1}, e[2] = {-1, -1}, s[2] = {-1, -1}, in[2] = {-1, -1};
    int saved;
    pid_t parent = getpid(), pid;

    if (pipe_pair(o) || pipe_pair(e) || pipe_pair(s) ||
        (in_fd && pipe_pair(in)))
        goto fail;
    if ((pid = fork()) < 0)
        goto fail;
    if (pid == 0)
        child(argv, envp, unblock, parent, in[0], o[1], e[1], s[1]);
    setpgid(pid, pid); /* also here: no race with a killpg right after */
    close(o[1]);
    close(e[1]);
    close(s[1]);
    if (in_fd) {
        close(in[0]);
        fcntl(in[1], F_SETFL, O_NONBLOCK);
        *in_fd = in[1];
    }
    fcntl(o[0], F_SETFL, O_NONBLOCK);
    fcntl(e[0], F_SETFL, O_NONBLOCK);
    *out = (spawned){pid, o[0], e[0], s[0]};
    return 0;
fail:
    saved = errno;
    close_pair(o);
    close_pair(e);
    close_pair(s);
    close_pair(in);
    errno = saved;
    return -1;
}

int
spawn_worker(char *const argv[], char *const envp[], const sigset_t *unblock,
             spawned *out)
{
    return spawn(argv, envp, unblock, out, NULL);
}

int
spawn_with_stdin(char *const argv[], char *const envp[],
                 const sigset_t *unblock, spawned *out, int *in_fd)
{
    return spawn(argv, envp, unblock, out, in_fd);
}

int
spawn_exec_errno(int status_fd, int *err)
{
    ssize_t n;

    do
        n = read(status_fd, err, sizeof(*err));
    while (n < 0 && errno == EINTR);
    return n == sizeof(*err) ? 1 : 0;
}
