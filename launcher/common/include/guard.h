/* The guard: a small process forked at start that outlives hvdrun only to
 * stop hvdrun's workers. hvdrun tells it each worker's process group over
 * a pipe; when that pipe reaches EOF while groups are still registered
 * (hvdrun was killed, even with SIGKILL), the guard sends them SIGTERM,
 * then SIGKILL after the grace period, and exits. PR_SET_PDEATHSIG alone
 * is not enough: it reaches the worker, not the worker's children. */
#ifndef HVD_GUARD_H
#define HVD_GUARD_H

#include <sys/types.h>

/* Forks the guard. Returns the write end of its pipe (closing it with no
 * group registered lets the guard exit at once; reap it by *pid), or
 * -1. */
int guard_start(double grace_seconds, pid_t *pid);
/* A guard started ahead of its workers (guard_start's two results): an
 * agent starts its own while it waits on the other hosts' network
 * choice, not on the way from "go" to its workers. */
typedef struct guard_started {
    int fd; /* -1: none */
    pid_t pid;
} guard_started;

/* Ends a guard started ahead that no worker will need (NULL accepted). */
void guard_drop(guard_started *g);

/* Registers / forgets a process group. Errors are ignored: the guard is a
 * safety net, and the workers' PDEATHSIG remains. */
void guard_add(int fd, pid_t pgid);
void guard_remove(int fd, pid_t pgid);

#endif
