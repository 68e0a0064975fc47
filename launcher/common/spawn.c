#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "hvd_exit.h"

/* What the child needs, in the parent's memory (which it shares until its
 * exec). */
typedef struct child_args {
    char *const *argv, *const *envp;
    const sigset_t *unblock;
    pid_t parent;
    int in, out, err, status;
} child_args;

/* Every signal this process handles goes back to its default action in
 * the child: a handler run there would run on the parent's memory. (Not
 * instrumented: the sanitizers' bookkeeping is the parent's.) */
__attribute__((no_sanitize("address"))) static void
default_handlers(void)
{
    struct sigaction sa;

    for (int sig = 1; sig < NSIG; sig++)
        if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
            sa.sa_handler != SIG_IGN) {
            sa.sa_handler = SIG_DFL;
            sa.sa_flags = 0;
            sigaction(sig, &sa, NULL);
        }
}

/* Runs in the child between its start and exec, on the parent's memory:
 * async-signal-safe calls only, nothing written but its own stack. */
__attribute__((no_sanitize("address"))) static int
child(void *arg)
{
    const child_args *a = arg;
    int in = a->in, e;

    default_handlers();
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != a->parent)
        _exit(HVD_EXIT_NOTFOUND);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigprocmask(SIG_SETMASK, a->unblock, NULL);
    if (in < 0)
        in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(a->out, 1) < 0 || dup2(a->err, 2) < 0)
        _exit(HVD_EXIT_NOTFOUND);
    execvpe(a->argv[0], a->argv, a->envp);
    e = errno;
    if (write(a->status, &e, sizeof(e)) < 0)
        _exit(HVD_EXIT_NOTFOUND);
    _exit(e == ENOENT ? HVD_EXIT_NOTFOUND : HVD_EXIT_NOEXEC);
}

/* The child's stack, beside what grows with the arguments: execvpe
 * copies argv onto it to run a script without "#!" through /bin/sh
 * (glibc's posix_spawn sizes its own the same way) */
#define CHILD_STACK (64u << 10)

/* The stack's bytes for argv, in whole pages. */
static size_t
stack_bytes(char *const argv[], size_t page)
{
    size_t argc = 0, n;

    while (argv[argc])
        argc++;
    n = (argc + 2) * sizeof(char *) + CHILD_STACK;
    return (n + page - 1) / page * page;
}

/* Starts child(a) sharing this process's memory until it execs or exits,
 * which this thread waits for (CLONE_VM | CLONE_VFORK, as posix_spawn
 * does, which cannot set PR_SET_PDEATHSIG): no page tables to copy, and
 * no copy-on-write fault in this process after, for each page it writes
 * (a multi-threaded agent's heap and stacks). Every signal is blocked
 * meanwhile. */
static pid_t
start_child(child_args *a)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), size;
    char *map;
    sigset_t all, old;
    pid_t pid;
    int saved;

    size = stack_bytes(a->argv, page);
    /* a guard page below: an overflow faults, it does not write over
     * the parent's memory */
    map = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (map == MAP_FAILED)
        return -1;
    if (mprotect(map, page, PROT_NONE) != 0) {
        munmap(map, size + page);
        return -1;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid = clone(child, map + page + size, CLONE_VM | CLONE_VFORK | SIGCHLD, a);
    saved = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    munmap(map, size + page);
    errno = saved;
    return pid;
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
    child_args a = {argv, envp, unblock, parent, in[0], o[1], e[1], s[1]};
    if ((pid = start_child(&a)) < 0)
        goto fail;
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
