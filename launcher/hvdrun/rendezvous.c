#include "rendezvous.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sibling.h"

/* hvdd beside this hvdrun (build tree and install alike), else PATH. */
static void
hvdd_path(char *out, size_t size)
{
    if (sibling_path("hvdd", out, size) == 0 && access(out, X_OK) == 0)
        return;
    snprintf(out, size, "hvdd");
}

static int
bind_socket(rendezvous *rv, const rendezvous_opts *o, char *err, size_t n)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    const char *addr = o->listen_addr ? o->listen_addr : "0.0.0.0";

    if (fd < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
        snprintf(err, n, "bad rendezvous address '%s' (an IPv4 address)", addr);
        goto fail;
    }
    a.sin_port = htons((uint16_t)o->listen_port);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(fd, 4096) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        snprintf(err, n, "cannot listen on %s:%d: %s", addr, o->listen_port,
                 strerror(errno));
        goto fail;
    }
    rv->port = ntohs(a.sin_port);
    /* Local workers reach an all-addresses listener over loopback. */
    snprintf(rv->addr, sizeof(rv->addr), "%s",
             strcmp(addr, "0.0.0.0") == 0 ? "127.0.0.1" : addr);
    return fd;
fail:
    if (fd >= 0)
        close(fd);
    return -1;
}

/* "a:2,[fe80::1]:4": the hosts that got ranks, with their rank counts. */
static char *
hosts_arg(const cfg_hostlist *hosts, const cfg_plan *plan)
{
    size_t cap = 64, used = 0;
    char *s = malloc(cap);

    for (int h = 0; s && h < plan->nhosts; h++) {
        const char *name = hosts->hosts[h].name;
        int n = plan->slots[cfg_plan_first_rank(plan, h)].local_size;
        size_t need = strlen(name) + 16;
        if (used + need > cap) {
            char *t = realloc(s, cap = (used + need) * 2);
            if (t == NULL) {
                free(s);
                return NULL;
            }
            s = t;
        }
        used += snprintf(s + used, cap - used,
                         strchr(name, ':') ? "%s[%s]:%d" : "%s%s:%d",
                         h ? "," : "", name, n);
    }
    return s;
}

/* hvdd's command line, built a word at a time so that an option is added
 * without renumbering slots. Bounded: a word that does not fit sets full,
 * which the caller checks once at the end. argv is always NULL-ended. */
typedef struct argv_builder {
    char *argv[32];
    int argc;
    char text[128]; /* the printed values of argv_optf */
    size_t used;
    int full;
} argv_builder;

static void
argv_word(argv_builder *b, const char *word)
{
    if (b->argc + 1 >= (int)(sizeof(b->argv) / sizeof(b->argv[0]))) {
        b->full = 1;
        return;
    }
    b->argv[b->argc++] = (char *)word; /* execvp's type; never written */
    b->argv[b->argc] = NULL;
}

/* "--flag value"; nothing when value is NULL: the option is not given. */
static void
argv_opt(argv_builder *b, const char *flag, const char *value)
{
    if (value == NULL)
        return;
    argv_word(b, flag);
    argv_word(b, value);
}

/* "--flag value", the value printed into the builder's own storage. */
static void __attribute__((format(printf, 3, 4)))
argv_optf(argv_builder *b, const char *flag, const char *fmt, ...)
{
    size_t room = sizeof(b->text) - b->used;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(b->text + b->used, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room) {
        b->full = 1;
        return;
    }
    argv_opt(b, flag, b->text + b->used);
    b->used += (size_t)n + 1;
}

/* What hvdrun tells hvdd: the socket is descriptor 3, the channel 4, and
 * the token comes on stdin (see exec_hvdd). Returns 0, or -1 when it did
 * not fit. */
static int
hvdd_argv(argv_builder *b, const char *spec, const cfg_plan *plan,
          const rendezvous_opts *o)
{
    argv_word(b, "hvdd");
    argv_opt(b, "--listen-fd", "3");
    argv_opt(b, "--channel-fd", o->channel ? "4" : NULL);
    argv_optf(b, "--size", "%d", plan->size);
    argv_opt(b, "--hosts", spec);
    argv_word(b, "--token-stdin");
    argv_opt(b, "--iface", o->iface);
    argv_opt(b, "--master-addr", o->master_addr);
    argv_optf(b, "--master-port", "%d", o->master_port);
    argv_optf(b, "--heartbeat-timeout", "%g", o->heartbeat_timeout);
    argv_opt(b, "--network-interface", o->network_interface);
    return b->full ? -1 : 0;
}

/* hvdd with in as stdin, out as stdout, listen_fd as 3 and chan_fd (when
 * >= 0) as 4. */
static void
exec_hvdd(const char *path, char **argv, int listen_fd, int chan_fd, int in,
          int out)
{
    int fds[4] = {in, out, listen_fd, chan_fd}, to[4] = {0, 1, 3, 4};
    sigset_t none;

    setpgid(0, 0); /* the terminal's Ctrl-C is hvdrun's to handle */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* out of the way first (one may be another's target), then in place:
     * dup2 clears close-on-exec, but not onto the descriptor itself */
    for (int k = 0; k < 4; k++)
        if (fds[k] >= 0 && (fds[k] = fcntl(fds[k], F_DUPFD_CLOEXEC, 10)) < 0)
            _exit(127);
    for (int k = 0; k < 4; k++)
        if (fds[k] >= 0 && dup2(fds[k], to[k]) < 0)
            _exit(127);
    execvp(path, argv);
    fprintf(stderr, "hvdrun: cannot run '%s': %s\n", path, strerror(errno));
    _exit(127);
}

int
rendezvous_start(rendezvous *rv, const cfg_hostlist *hosts,
                 const cfg_plan *plan, const rendezvous_opts *o, char *err,
                 size_t errlen)
{
    char path[PATH_MAX];
    char *spec = hosts_arg(hosts, plan);
    argv_builder args = {.argc = 0};
    int in[2] = {-1, -1}, out[2] = {-1, -1}, chan[2] = {-1, -1}, fd = -1;
    int r = -1;

    memset(rv, 0, sizeof(*rv));
    rv->lifeline_fd = rv->events_fd = rv->channel_fd = -1;
    if (spec == NULL || hvdd_token_new(rv->token) != 0) {
        snprintf(err, errlen, "cannot make the job token: %s", strerror(errno));
        goto out;
    }
    if ((fd = bind_socket(rv, o, err, errlen)) < 0)
        goto out;
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
        (o->channel &&
         socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, chan) != 0)) {
        snprintf(err, errlen, "cannot start hvdd: %s", strerror(errno));
        goto out;
    }
    hvdd_path(path, sizeof(path));
    if (hvdd_argv(&args, spec, plan, o) != 0) {
        snprintf(err, errlen, "cannot start hvdd: too many arguments");
        goto out;
    }
    if ((rv->pid = fork()) < 0) {
        snprintf(err, errlen, "cannot start hvdd: %s", strerror(errno));
        goto out;
    }
    if (rv->pid == 0)
        exec_hvdd(path, args.argv, fd, chan[1], in[0], out[1]);
    setpgid(rv->pid, rv->pid);
    rv->lifeline_fd = in[1];
    rv->events_fd = out[0];
    rv->channel_fd = chan[0];
    in[1] = out[0] = chan[0] = -1;
    if (write(rv->lifeline_fd, rv->token, HVDD_TOKEN_LEN) != HVDD_TOKEN_LEN ||
        write(rv->lifeline_fd, "\n", 1) != 1) {
        snprintf(err, errlen, "hvdd did not start");
        goto out;
    }
    if (o->verbose)
        fprintf(stderr,
                "hvdrun: rendezvous: hvdd (pid %d, %s) on %s:%d, job token "
                "set (not shown)\n",
                (int)rv->pid, path, rv->addr, rv->port);
    r = 0;
out:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
        if (chan[i] >= 0)
            close(chan[i]);
    }
    if (fd >= 0)
        close(fd);
    free(spec);
    if (r != 0)
        rendezvous_stop(rv);
    return r;
}

/* Waits up to ms for hvdd's stdout to close, which it does as it exits. */
static void
wait_events_eof(int fd, int ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    char buf[512];

    while (fd >= 0 && poll(&p, 1, ms) > 0 && read(fd, buf, sizeof(buf)) > 0)
        ;
}

void
rendezvous_let_go(rendezvous *rv)
{
    if (rv->lifeline_fd >= 0)
        close(rv->lifeline_fd);
    rv->lifeline_fd = -1;
}

/* pid reaped now (or by someone else already): 1, else 0. */
static int
reaped(pid_t pid)
{
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);

    return r == pid || (r < 0 && errno == ECHILD);
}

/* Waits up to ms for hvdd's exit, woken by it (a pidfd: polling every ms
 * cost the end of every job up to a ms), and reaps it: 0, or -1. */
static int
reap_within(pid_t pid, int ms)
{
    int pfd;

    if (reaped(pid))
        return 0;
    if ((pfd = (int)syscall(SYS_pidfd_open, pid, 0)) >= 0) {
        struct pollfd p = {pfd, POLLIN, 0};
        poll(&p, 1, ms);
        close(pfd);
        return reaped(pid) ? 0 : -1;
    }
    for (int i = 0; i < ms; i++) { /* (no pidfd: a kernel before 5.3) */
        struct timespec ms1 = {0, 1000 * 1000};
        nanosleep(&ms1, NULL);
        if (reaped(pid))
            return 0;
    }
    return -1;
}

void
rendezvous_stop(rendezvous *rv)
{
    int status;

    rendezvous_let_go(rv);
    if (rv->channel_fd >= 0)
        close(rv->channel_fd);
    rv->channel_fd = -1;
    wait_events_eof(rv->events_fd, 2000);
    if (rv->events_fd >= 0)
        close(rv->events_fd);
    rv->events_fd = -1;
    /* stdout closed: its exit is a moment away */
    if (rv->pid > 0 && reap_within(rv->pid, 50) == 0)
        rv->pid = 0;
    if (rv->pid > 0) {
        kill(rv->pid, SIGKILL);
        waitpid(rv->pid, &status, 0);
        rv->pid = 0;
    }
    explicit_bzero(rv->token, sizeof(rv->token));
}
