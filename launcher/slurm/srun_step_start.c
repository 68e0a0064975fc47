/* Starting an srun step (srun_step.h): the listener and srun. Nothing
 * here checks a handshake (srun_step.c and srun_auth.c do); --dry-run
 * shows the step with srun_args.c alone. */
#include "srun_step_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "envlist.h"
#include "spawn.h"
#include "srun_args.h"
#include "worker_env.h"

extern char **environ;

/* "PORT ADDR,ADDR,...": this host's IPv4 addresses but loopback, which
 * on another node would be that node's own (a stranger's port). */
static int
link_value(int port, char *out, size_t n)
{
    struct ifaddrs *all, *a;
    size_t at = (size_t)snprintf(out, n, "%d ", port), first = at;

    if (getifaddrs(&all) != 0)
        return -1;
    for (a = all; a; a = a->ifa_next) {
        char ip[INET_ADDRSTRLEN];
        if (a->ifa_addr == NULL || a->ifa_addr->sa_family != AF_INET ||
            !(a->ifa_flags & IFF_UP) || (a->ifa_flags & IFF_LOOPBACK))
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)a->ifa_addr)->sin_addr, ip,
                  sizeof(ip));
        if (at + strlen(ip) + 2 < n)
            at += (size_t)snprintf(out + at, n - at, "%s%s",
                                   at > first ? "," : "", ip);
    }
    freeifaddrs(all);
    return at > first ? 0 : -1;
}

/* Room in the descriptor limit for n nodes' three streams and the
 * handshakes pending beside them: at 1024, a job of about 330 nodes ran
 * out while its agents connected. Raised only as far as needed (within
 * the hard limit), as srun passes its limits on to the workers. */
static void
room_for_nodes(size_t n)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)n * SRUN_STREAMS + PENDING_MAX + 256;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return;
    rl.rlim_cur =
        rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
    setrlimit(RLIMIT_NOFILE, &rl); /* else the shortage is said at accept */
}

/* The agents' port's backlog (the kernel holds it to net.core.somaxconn,
 * 4096 by default): a burst of many nodes' three connections each waits
 * there, and a stranger's flood, refused as fast as it comes, fills it
 * less. At 128, one address connecting again each time it was refused
 * kept it full, and a node's agent waited for SYN retries (1 s, 3 s)
 * past its own 5 s to connect. */
#define BACKLOG 4096

static int
listen_any(int *port)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(fd, BACKLOG) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* What srun must not take from hvdrun's environment: the job's GPU
 * requests and bindings, which srun reads as its own options
 * (SLURM_GPUS_PER_TASK=1, left by `sbatch --gpus-per-task=1`, gave the
 * step of one agent per node one GPU a node; SLURM_GPUS=4 of `--gpus=4`
 * made a step of 2 tasks impossible, "Insufficient GRES"; a binding
 * would hold each agent, and so its workers, to one GPU). The step asks
 * for its GPUs itself where it must (srun_gres.c). Nor the launch node's
 * own GPUs, which would reach the agents through --export=ALL: each agent
 * has its node's from slurmstepd. */
static int
srun_env_kept(const char *entry)
{
    static const char *const requests[] = {
        "SLURM_GPUS",           "SLURM_GPUS_PER_NODE",
        "SLURM_GPUS_PER_TASK",  "SLURM_GPUS_PER_SOCKET",
        "SLURM_CPUS_PER_GPU",   "SLURM_MEM_PER_GPU",
        "SLURM_NTASKS_PER_GPU", "SLURM_GRES",
        "SLURM_STEP_GRES",      "SLURM_TRES_PER_TASK",
        "SLURM_GPU_BIND",       "SLURM_TRES_BIND"};
    size_t n = strcspn(entry, "=");

    for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
        if (strlen(requests[i]) == n && strncmp(entry, requests[i], n) == 0)
            return 0;
    return !worker_env_slurm_gpus(entry);
}

static int
start_srun(srun_step *st, const srun_step_spec *spec, int port, char *err,
           size_t errlen)
{
    char value[1024], counts[3][40], *nodearg = malloc(65536), **argv = NULL;
    envlist env = {0};
    spawned child;
    int r = -1, e = 0;

    snprintf(err, errlen, "srun: out of memory");
    for (char **v = environ; *v; v++)
        if (srun_env_kept(*v) && envlist_put(&env, *v) != 0)
            goto out;
    if (link_value(port, value, sizeof(value)) != 0) {
        snprintf(err, errlen,
                 "srun: this host has no IPv4 address but "
                 "loopback for the nodes to reach it");
        goto out;
    }
    if (nodearg == NULL || envlist_set(&env, "HVDRUN_SRUN_LINK", value) ||
        envlist_set(&env, "HVDRUN_SRUN_SECRET", spec->secret) ||
        (argv = srun_argv(spec, nodearg, 65536, counts)) == NULL) {
        snprintf(err, errlen, "srun: out of memory");
        goto out;
    }
    if (spawn_worker(argv, envlist_array(&env), spec->unblock, &child) != 0) {
        snprintf(err, errlen, "srun: cannot start it: %s", strerror(errno));
        goto out;
    }
    /* an exec failure: srun is not installed here */
    if (spawn_exec_errno(child.status_fd, &e) == 1) {
        snprintf(err, errlen,
                 "srun: cannot run it: %s (is Slurm's client "
                 "installed here?)",
                 strerror(e));
        waitpid(child.pid, NULL, 0);
        close(child.out_fd);
        close(child.err_fd);
        close(child.status_fd);
        goto out;
    }
    close(child.status_fd);
    st->pid = child.pid;
    /* its end wakes the step's poll (a kernel before 5.3 has no pidfd:
     * wait_srun then looks in short steps) */
    if ((st->pid_fd = (int)syscall(SYS_pidfd_open, child.pid, 0)) >= 0)
        srun_step_watch(st, st->pid_fd);
    st->out[0].fd = child.out_fd;
    st->out[1].fd = child.err_fd;
    srun_step_watch(st, child.out_fd);
    srun_step_watch(st, child.err_fd);
    r = 0;
out:
    free(argv);
    free(nodearg);
    envlist_release(&env);
    return r;
}

static srun_step *
alloc_step(const srun_step_spec *spec)
{
    srun_step *st = calloc(1, sizeof(*st));

    if (st == NULL)
        return NULL;
    st->listen_fd = st->epoll_fd = st->out[0].fd = st->out[1].fd = -1;
    st->pid_fd = -1;
    st->pid = -1;
    st->n = spec->n;
    st->nodes = calloc(spec->n, sizeof(*st->nodes));
    st->fds = calloc(spec->n, sizeof(*st->fds));
    st->local = calloc(spec->n, sizeof(*st->local));
    st->secret = strdup(spec->secret);
    /* every stream "not connected" before anything can fail: the step's
     * end closes the ones it finds (a row of calloc's zeros was fd 0) */
    for (size_t i = 0; st->fds && i < spec->n; i++)
        for (int k = 0; k < SRUN_STREAMS; k++)
            st->fds[i][k] = -1;
    if (!st->nodes || !st->fds || !st->local || !st->secret) {
        srun_step_forget(st);
        return NULL;
    }
    for (size_t i = 0; i < spec->n; i++) {
        if ((st->nodes[i] = strdup(spec->nodes[i])) == NULL) {
            srun_step_forget(st);
            return NULL;
        }
    }
    return st;
}

srun_step *
srun_step_start(const srun_step_spec *spec, char *err, size_t errlen)
{
    srun_step *st = alloc_step(spec);
    int port;

    if (st == NULL) {
        snprintf(err, errlen, "srun: out of memory");
        return NULL;
    }
    room_for_nodes(spec->n);
    if ((st->epoll_fd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
        (st->listen_fd = listen_any(&port)) < 0) {
        snprintf(err, errlen, "srun: cannot listen for the agents: %s",
                 strerror(errno));
        srun_step_forget(st);
        return NULL;
    }
    srun_step_watch(st, st->listen_fd);
    st->accepting = 1;
    if (start_srun(st, spec, port, err, errlen) != 0) {
        srun_step_forget(st);
        return NULL;
    }
    return st;
}

void
srun_step_forget(srun_step *st)
{
    if (st == NULL)
        return;
    /* srun passes SIGTERM on to the step; srun_step_free waits for its
     * end on the pidfd (then SIGTERM again, then SIGKILL) */
    if (st->pid > 0 && !st->done) {
        st->signalled = 1;
        kill(st->pid, SIGTERM);
    }
    srun_step_free(st);
}

void
srun_step_release(srun_step *st)
{
    for (int k = 0; k < 2; k++)
        if (st->out[k].fd >= 0)
            close(st->out[k].fd);
    if (st->pid_fd >= 0)
        close(st->pid_fd);
    if (st->epoll_fd >= 0)
        close(st->epoll_fd);
    for (size_t i = 0; st->nodes && i < st->n; i++)
        free(st->nodes[i]);
    free(st->nodes);
    free(st->fds);
    free(st->local);
    free(st->secret);
    free(st);
}
