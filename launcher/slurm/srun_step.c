/* The srun step of srun_step.h: a listening socket, srun as a child in
 * its own process group (a terminal's Ctrl-C reaches hvdrun alone, which
 * stops the job itself), and the connections coming back. */
#include "srun_step_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "envlist.h"
#include "hvd_clock.h"
#include "spawn.h"
#include "srun_args.h"
#include "srun_auth.h"

/* A connection's handshake gets this long: an agent answers hvdrun's
 * hello at once (an HMAC), and with 10 s, 256 connections that sent
 * nothing held every slot past the agents' own 5 s to connect. */
#define HANDSHAKE_SECONDS 3.0
/* A handshake still pending after this long has not answered hvdrun's
 * hello (an agent answers in milliseconds): it may give its place to a
 * new connection. Younger ones never do, so that a burst of many nodes'
 * connections (3 each) waits in the backlog as before rather than
 * pushing each other out. */
#define IDLE_SECONDS 1.0
/* One address holds at most this many pending handshakes: a node's
 * agent has its three streams in flight at most. Beyond them, its oldest
 * gives way once it has waited PEER_IDLE_SECONDS (an agent answers in
 * milliseconds), and otherwise the new connection is refused at once: one
 * address that connected 800 times a second, each connection held a
 * second, kept every slot young and the backlog full, and a node's agent
 * never got in. */
#define PENDING_PER_ADDR 16
#define PEER_IDLE_SECONDS 0.25
/* Connections taken in one look at the port: a flood refilling the
 * backlog does not keep hvdrun from the handshakes it holds. Those
 * refused at once (PENDING_PER_ADDR) cost an accept and a close and
 * count apart: taken 64 a look with the rest, one address's refusals
 * filled the backlog faster than it emptied, and a node's agent waited
 * for SYN retries behind them. */
#define ACCEPTS_PER_POLL 64
#define REFUSALS_PER_POLL 1024
/* Strangers named on stderr, then only counted. */
#define STRANGERS_NAMED 3

static void
unwatch(srun_step *st, int fd)
{
    epoll_ctl(st->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

/* Takes new connections again, once a slot is free and any pause over. */
static void
resume_accepting(srun_step *st)
{
    /* (paused for want of a slot: as soon as one is free, too) */
    if (!st->accepting && st->listen_fd >= 0 &&
        (hvd_mono_now() >= st->pause_until ||
         (st->paused_full && st->npend < PENDING_MAX))) {
        srun_step_watch(st, st->listen_fd);
        st->accepting = 1;
    }
}

static void
pause_accepting(srun_step *st, double seconds, int full)
{
    if (st->accepting)
        unwatch(st, st->listen_fd);
    st->accepting = 0;
    st->paused_full = full;
    st->pause_until = hvd_mono_now() + seconds;
}

/* ---- srun's own lines: relayed, the last one kept ---- */

static void
about_to_print(const srun_step *st)
{
    if (st->before_print)
        st->before_print(st->print_arg);
}

void
srun_step_on_print(srun_step *st, void (*before)(void *), void *arg)
{
    st->before_print = before;
    st->print_arg = arg;
}

static void
relay_line(srun_step *st, char *line)
{
    about_to_print(st);
    fprintf(stderr, "%s\n", line);
    snprintf(st->last, sizeof(st->last), "%.500s", line);
    /* Slurm stopping the step itself: slurmstepd's "CANCELLED" may come
     * after srun's end, srun's "Job step aborted" at once (scancel, a time
     * limit, a failed node). srun says the latter also when it ends the
     * step itself, after a task's bad exit (--kill-on-bad-exit: an agent
     * hvdrun dropped, or one that crashed), which it reports first; and
     * once hvdrun signalled srun, what follows is its own doing. */
    if (strstr(line, "srun: error: ") && strstr(line, ": task "))
        st->task_failed = 1;
    if (!st->signalled &&
        (strstr(line, "CANCELLED") || strstr(line, "has been revoked") ||
         (!st->task_failed && strstr(line, "srun: Job step aborted"))))
        st->cancelled = 1;
}

static void
drain(srun_step *st, out_line *o)
{
    ssize_t r;

    if (o->fd < 0)
        return;
    while ((r = read(o->fd, o->buf + o->len, sizeof(o->buf) - 1 - o->len)) !=
           0) {
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return;
            break;
        }
        o->len += (size_t)r;
        char *nl;
        while ((nl = memchr(o->buf, '\n', o->len)) != NULL) {
            *nl = '\0';
            relay_line(st, o->buf);
            o->len -= (size_t)(nl + 1 - o->buf);
            memmove(o->buf, nl + 1, o->len);
        }
        if (o->len == sizeof(o->buf) - 1) { /* a line too long: cut */
            o->buf[o->len] = '\0';
            relay_line(st, o->buf);
            o->len = 0;
        }
    }
    if (o->len) { /* EOF after a last line without its newline */
        o->buf[o->len] = '\0';
        relay_line(st, o->buf);
        o->len = 0;
    }
    unwatch(st, o->fd);
    close(o->fd);
    o->fd = -1;
}

static void
reap(srun_step *st)
{
    int status;

    if (st->done || waitpid(st->pid, &status, WNOHANG) != st->pid)
        return;
    st->done = 1;
    if (st->pid_fd >= 0) { /* readable for good now: out of the poll set */
        unwatch(st, st->pid_fd);
        close(st->pid_fd);
        st->pid_fd = -1;
    }
    st->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- connections from the agents ---- */

static void
stranger(srun_step *st, const char *peer, const char *why)
{
    if (st->strangers++ >= STRANGERS_NAMED)
        return;
    about_to_print(st);
    fprintf(stderr,
            "hvdrun: refused a connection from %s to the agents' port: %s\n",
            peer, why);
}

static void
drop_pending(srun_step *st, int i)
{
    unwatch(st, st->pend[i].fd);
    close(st->pend[i].fd);
    st->pend[i] = st->pend[--st->npend];
}

static long
node_of(const srun_step *st, const char *name)
{
    for (size_t i = 0; i < st->n; i++)
        if (strcmp(st->nodes[i], name) == 0)
            return (long)i;
    return -1;
}

/* Node i's streams taken from an earlier try that its agent gave up
 * (one stream failed at that address, and the agent closes them all and
 * dials the next): those its agent closed are forgotten, so that the new
 * try's take their places. Only while the node is incomplete: once all
 * its streams are in, they are the fleet's. */
static void
forget_dead_streams(srun_step *st, long i)
{
    int k, complete = 1;

    for (k = 0; k < SRUN_STREAMS; k++)
        complete &= st->fds[i][k] >= 0;
    for (k = 0; !complete && k < SRUN_STREAMS; k++) {
        char c;
        ssize_t r;
        if (st->fds[i][k] < 0)
            continue;
        r = recv(st->fds[i][k], &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
            close(st->fds[i][k]);
            st->fds[i][k] = -1;
        }
    }
}

/* A whole answer line in p: 1 the connection is taken, -1 refused. */
static int
finish_handshake(srun_step *st, pending *p)
{
    char node[256], proof[80];
    int stream;
    long i;

    if (srun_auth_check(st->secret, p->nonce, p->where, p->buf, node,
                        sizeof(node), &stream, proof, sizeof(proof)) != 0)
        return stranger(st, p->peer, "it does not know the job's secret"), -1;
    if ((i = node_of(st, node)) < 0)
        return stranger(st, p->peer, "not a node of this job"), -1;
    forget_dead_streams(st, i);
    if (st->fds[i][stream] >= 0)
        return stranger(st, p->peer, "that node's stream is already connected"),
               -1;
    if (write(p->fd, proof, strlen(proof)) != (ssize_t)strlen(proof))
        return -1;
    st->fds[i][stream] = p->fd;
    if (stream == SRUN_STDIO) /* hvdd's address as this node reaches it */
        snprintf(st->local[i], sizeof(st->local[i]), "%.*s",
                 (int)strcspn(p->where, " "), p->where);
    return 1;
}

static void
read_pending(srun_step *st, int i)
{
    pending *p = &st->pend[i];
    ssize_t r = read(p->fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len);
    int taken;

    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (r <= 0) {
        stranger(st, p->peer, "it closed during the handshake");
        return drop_pending(st, i);
    }
    p->len += (size_t)r;
    p->buf[p->len] = '\0';
    if (strchr(p->buf, '\n') == NULL) {
        if (p->len == sizeof(p->buf) - 1) {
            stranger(st, p->peer, "its handshake is too long");
            drop_pending(st, i);
        }
        return;
    }
    taken = finish_handshake(st, p);
    if (taken == 1) {
        unwatch(st, p->fd);
        st->pend[i] = st->pend[--st->npend];
    } else {
        drop_pending(st, i);
    }
}

/* The pending handshake that came first, of those from peer (NULL: of
 * all); -1 when none. */
static int
oldest_pending(const srun_step *st, const char *peer, int *from_peer)
{
    int at = -1;

    *from_peer = 0;
    for (int i = 0; i < st->npend; i++) {
        if (peer && strcmp(st->pend[i].peer, peer) != 0)
            continue;
        (*from_peer)++;
        if (at < 0 || st->pend[i].since < st->pend[at].since)
            at = i;
    }
    return at;
}

/* Closes the oldest pending handshake (from peer; NULL: of all) when it
 * has waited `after` seconds: 1 when one went, else 0 with *wait the
 * seconds until the oldest would have. Connections that send nothing
 * thus cannot hold every slot until the agents give up (pausing alone let
 * them), and an agent's handshake in progress is never the one to go. */
static int
drop_idle(srun_step *st, const char *peer, double after, double *wait)
{
    int n, i = oldest_pending(st, peer, &n);
    double idle = i < 0 ? 0 : st->pend[i].since + after - hvd_mono_now();

    *wait = idle > 0.01 ? idle : 0.01;
    if (i < 0 || idle > 0)
        return 0;
    stranger(st, st->pend[i].peer, "no handshake before newer connections");
    drop_pending(st, i);
    return 1;
}

/* Out of descriptors: said once, with the limit to raise. */
static void
out_of_descriptors(srun_step *st)
{
    struct rlimit rl = {0};

    if (st->said_fd_limit++)
        return;
    getrlimit(RLIMIT_NOFILE, &rl);
    about_to_print(st);
    fprintf(stderr,
            "hvdrun: out of file descriptors for the agents' connections "
            "(%s, limit %llu: ulimit -n)\n",
            strerror(errno), (unsigned long long)rl.rlim_cur);
}

static void
accept_new(srun_step *st)
{
    struct sockaddr_storage a;
    socklen_t len = sizeof(a);
    char hello[80], where[sizeof(st->pend[0].where)],
        peer[sizeof(st->pend[0].peer)];
    double wait = 0;
    int fd = -1, from_peer, refused = 0;

    for (int k = 0; st->accepting && k < ACCEPTS_PER_POLL; k++) {
        pending *p;
        int one = 1;
        /* every slot taken and none idle: the rest wait in the backlog
         * until the oldest is */
        if (st->npend == PENDING_MAX &&
            !drop_idle(st, NULL, IDLE_SECONDS, &wait)) {
            pause_accepting(st, wait, 1);
            return;
        }
        len = sizeof(a);
        if ((fd = accept4(st->listen_fd, (struct sockaddr *)&a, &len,
                          SOCK_NONBLOCK | SOCK_CLOEXEC)) < 0)
            break;
        /* an agent's answers and control lines are small writes that
         * must go at once: Nagle's wait for the ACK of the previous one
         * (delayed 40 ms) held a second answer to a node that long */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (srun_auth_where(fd, 0, where, sizeof(where)) != 0 ||
            srun_auth_where(fd, 1, peer, sizeof(peer)) != 0) {
            close(fd);
            continue;
        }
        peer[strcspn(peer, " ")] = '\0'; /* the address alone */
        if (oldest_pending(st, peer, &from_peer) >= 0 &&
            from_peer >= PENDING_PER_ADDR &&
            !drop_idle(st, peer, PEER_IDLE_SECONDS, &wait)) {
            stranger(st, peer, "too many handshakes at once from its address");
            close(fd);
            if (refused++ < REFUSALS_PER_POLL)
                k--; /* not one of the 64 */
            continue;
        }
        p = &st->pend[st->npend];
        if (srun_auth_hello(p->nonce, hello, sizeof(hello)) != 0 ||
            write(fd, hello, strlen(hello)) != (ssize_t)strlen(hello)) {
            close(fd);
            continue;
        }
        memcpy(p->where, where, sizeof(where));
        memcpy(p->peer, peer, sizeof(peer));
        p->fd = fd;
        p->len = 0;
        p->since = hvd_mono_now();
        p->deadline = p->since + HANDSHAKE_SECONDS;
        st->npend++;
        srun_step_watch(st, fd);
    }
    if (fd < 0 && st->accepting && (errno == EMFILE || errno == ENFILE)) {
        out_of_descriptors(st);
        pause_accepting(st, 1, 0); /* not a busy loop */
    }
}

void
srun_step_poll(srun_step *st)
{
    double now = hvd_mono_now();

    /* the answers first: a handshake whose answer waits unread is not
     * taken for an idle one that a new connection may push out */
    for (int i = st->npend - 1; i >= 0; i--) {
        if (now > st->pend[i].deadline) {
            stranger(st, st->pend[i].peer, "no handshake within 3 s");
            drop_pending(st, i);
        } else {
            read_pending(st, i);
        }
    }
    resume_accepting(st);
    accept_new(st);
    drain(st, &st->out[0]);
    drain(st, &st->out[1]);
    reap(st);
}

/* ---- what the links read ---- */

int
srun_step_pollfd(const srun_step *st)
{
    return st->epoll_fd;
}

int
srun_step_fd(const srun_step *st, size_t node, int stream)
{
    return node < st->n ? st->fds[node][stream] : -1;
}

const char *
srun_step_local_addr(const srun_step *st, size_t node)
{
    return node < st->n ? st->local[node] : "";
}

int
srun_step_done(const srun_step *st)
{
    return st->done;
}

int
srun_step_code(const srun_step *st)
{
    return st->code;
}

const char *
srun_step_last_line(const srun_step *st)
{
    return st->last;
}

int
srun_step_cancelled(const srun_step *st)
{
    return st->cancelled;
}

/* ---- the end ---- */

void
srun_step_close_node(srun_step *st, size_t node)
{
    for (int k = 0; node < st->n && k < SRUN_STREAMS; k++)
        if (st->fds[node][k] >= 0) {
            close(st->fds[node][k]);
            st->fds[node][k] = -1;
        }
}

/* Waits up to `seconds` for srun, relaying its lines meanwhile: woken by
 * its output and by its end. Its pipes close a moment before it becomes a
 * zombie, so a wake-up on their EOF may find it still running: the pidfd
 * wakes the wait again when it is done (without one, a kernel before 5.3,
 * the zombie is looked for in 2 ms steps). */
static int
wait_srun(srun_step *st, double seconds)
{
    double end = hvd_mono_now() + seconds;

    while (!st->done && hvd_mono_now() < end) {
        struct pollfd p = {st->epoll_fd, POLLIN, 0};
        srun_step_poll(st);
        if (!st->done)
            poll(&p, 1,
                 st->pid_fd >= 0 || st->out[0].fd >= 0 || st->out[1].fd >= 0
                     ? 20
                     : 2);
    }
    return st->done;
}

void
srun_step_end(srun_step *st)
{
    for (size_t i = 0; st->fds && i < st->n; i++)
        srun_step_close_node(st, i);
    while (st->npend > 0) {
        stranger(st, st->pend[st->npend - 1].peer,
                 "still in its handshake when the start ended");
        drop_pending(st, st->npend - 1);
    }
    if (st->strangers > STRANGERS_NAMED) {
        about_to_print(st);
        fprintf(stderr,
                "hvdrun: refused %d more connections to the agents' port\n",
                st->strangers - STRANGERS_NAMED);
    }
    if (st->listen_fd >= 0)
        close(st->listen_fd);
    st->listen_fd = -1;
    /* the agents stop on EOF and srun ends with them; else Slurm's own
     * teardown: srun passes SIGTERM on to the step */
    if (st->pid > 0 && !wait_srun(st, 10)) {
        st->signalled = 1;
        kill(st->pid, SIGTERM);
        if (!wait_srun(st, 10)) {
            kill(st->pid, SIGKILL);
            waitpid(st->pid, NULL, 0);
            st->done = 1;
        }
    }
}

void
srun_step_free(srun_step *st)
{
    if (st == NULL)
        return;
    srun_step_end(st);
    srun_step_release(st);
}
