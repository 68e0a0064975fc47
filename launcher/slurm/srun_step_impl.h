/* What srun_step.c and srun_step_start.c share: the step itself.
 * Private to the Slurm launcher. */
#ifndef HVD_SRUN_STEP_IMPL_H
#define HVD_SRUN_STEP_IMPL_H

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/types.h>

#include "srun_auth.h"
#include "srun_step.h"

/* Connections not yet through the handshake at once (then an idle one
 * gives its place to a new one, else the rest wait in the backlog:
 * srun_step.c). */
#define PENDING_MAX 256

typedef struct pending {
    int fd;
    char nonce[SRUN_AUTH_NONCE];
    char buf[SRUN_AUTH_LINE];
    size_t len;
    double since, deadline; /* accepted; given up */
    char peer[INET6_ADDRSTRLEN];
    char where[INET6_ADDRSTRLEN + 8]; /* hvdrun's end: "ADDRESS PORT" */
} pending;

typedef struct out_line {
    int fd;
    char buf[1024];
    size_t len;
} out_line;

struct srun_step {
    char **nodes;
    size_t n;
    int (*fds)[SRUN_STREAMS];
    char (*local)[INET6_ADDRSTRLEN];
    char *secret;
    int listen_fd, epoll_fd;
    pid_t pid;
    int pid_fd;      /* srun's pidfd, watched until it is reaped; -1: none */
    out_line out[2]; /* srun's stdout, stderr */
    int done, code, cancelled, strangers;
    int signalled;     /* hvdrun sent srun a signal itself */
    int task_failed;   /* srun said a task (an agent) ended badly */
    int said_fd_limit; /* out of descriptors, said once */
    int paused_full;   /* accepting paused for want of a slot */
    int accepting;     /* listen_fd is watched */
    void (*before_print)(void *);
    void *print_arg;
    double pause_until; /* out of descriptors: accept again after this */
    char last[512];
    pending pend[PENDING_MAX];
    int npend;
};

static inline void
srun_step_watch(srun_step *st, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    epoll_ctl(st->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

/* Closes srun's pipes and the poll set and frees the step; srun itself is
 * left alone (srun_step_start.c). */
void srun_step_release(srun_step *st);

#endif
