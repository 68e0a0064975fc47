/* Starting one worker process. */
#ifndef HVD_SPAWN_H
#define HVD_SPAWN_H

#include <signal.h>
#include <sys/types.h>

typedef struct spawned {
    pid_t pid;  /* also its process group id */
    int out_fd; /* read ends, non-blocking, close-on-exec */
    int err_fd;
    int status_fd; /* EOF once exec succeeded; an int errno if it failed */
} spawned;

/* Forks and execs argv[0] (searched in PATH) with envp, in its own process
 * group, stdin from /dev/null, stdout and stderr to pipes. The worker is
 * killed if hvdrun dies (PR_SET_PDEATHSIG); `unblock` is the signal mask
 * the worker starts with. Returns 0, or -1 with errno when fork or pipe
 * failed (an exec failure arrives later on status_fd). */
int spawn_worker(char *const argv[], char *const envp[],
                 const sigset_t *unblock, spawned *out);

/* The same with a pipe to the child's stdin: *in_fd is its write end
 * (non-blocking, close-on-exec). For the launch host's own agent. */
int spawn_with_stdin(char *const argv[], char *const envp[],
                     const sigset_t *unblock, spawned *out, int *in_fd);
/* Decodes a status_fd message: the errno of a failed exec. */
int spawn_exec_errno(int status_fd, int *err);

#endif
