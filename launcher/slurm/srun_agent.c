/* hvdrun-srun-agent: what srun runs on each node (itself, or
 * through `hvdrun --agent-srun` with --remote-hvdrun).
 * It connects back to hvdrun three times (srun_step.h), makes the first
 * two connections its stdin/stdout and stderr, runs the agent in this
 * same process (agent_run.h: no second program start on the node), and
 * then sends the agent's exit code on the third. It exits 0 once hvdrun
 * has taken the code ("bye"); with the code itself when hvdrun is gone,
 * so that srun's --kill-on-bad-exit ends the rest of the step. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent_run.h"
#include "hvd_clock.h"
#include "hvd_exit.h"
#include "srun_auth.h"
#include "srun_step.h"

#define CONNECT_MS 5000
#define HANDSHAKE_SECONDS 10.0
/* Tries again for this long (hvdrun waits 30 s for a node by default,
 * --start-timeout): see connect_streams. */
#define RETRY_SECONDS 15.0

static const char *node_name = "?";

static void
say(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "hvdrun: node %s: ", node_name);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
}

/* Reads one line (at most n - 1 bytes) from socket fd before the
 * deadline (a monotonic time; 0: none): what has come is looked at
 * (MSG_PEEK) and only the line's bytes taken, so that nothing after it
 * is read away and a line costs a few calls, not two per byte. 0 or -1. */
static int
read_line(int fd, char *buf, size_t n, double deadline)
{
    size_t len = 0;

    while (len < n - 1) {
        struct pollfd p = {fd, POLLIN, 0};
        int ms = -1;
        ssize_t got;
        char *nl;
        if (deadline > 0) {
            ms = (int)((deadline - hvd_mono_now()) * 1000);
            if (ms <= 0)
                return -1;
        }
        if (poll(&p, 1, ms) <= 0)
            return -1;
        if ((got = recv(fd, buf + len, n - 1 - len, MSG_PEEK)) <= 0)
            return -1;
        nl = memchr(buf + len, '\n', (size_t)got);
        if (nl)
            got = nl - (buf + len) + 1;
        if (recv(fd, buf + len, (size_t)got, 0) != got)
            return -1;
        len += (size_t)got;
        if (nl) {
            buf[len] = '\0';
            return 0;
        }
    }
    return -1;
}

/* A connection to addr:port, or -1 with errno saying why (0: the address
 * cannot be resolved). */
static int
dial(const char *addr, const char *port)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
    int fd, why = 0;

    if (getaddrinfo(addr, port, &hints, &res) != 0) {
        errno = 0;
        return -1;
    }
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        why = errno;
    } else {
        struct timeval tv = {CONNECT_MS / 1000, 0};
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        /* the agent's calls and lines go at once (hvdrun's end too) */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
            why = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    errno = why;
    return fd;
}

/* The first half of a stream's handshake: hvdrun's challenge read and
 * answered; expect is the proof hvdrun must send back. */
static int
hello(int fd, const char *secret, int stream, double deadline, char *expect)
{
    char line[SRUN_AUTH_LINE], answer[SRUN_AUTH_LINE], where[80];

    return srun_auth_where(fd, 1, where, sizeof(where)) == 0 &&
                   read_line(fd, line, sizeof(line), deadline) == 0 &&
                   srun_auth_answer(secret, line, node_name, stream, where,
                                    answer, sizeof(answer), expect) == 0 &&
                   send(fd, answer, strlen(answer), MSG_NOSIGNAL) ==
                       (ssize_t)strlen(answer)
               ? 0
               : -1;
}

/* The second half: hvdrun proves it holds the secret. */
static int
proven(int fd, const char *expect, double deadline)
{
    char line[SRUN_AUTH_LINE];

    if (read_line(fd, line, sizeof(line), deadline) != 0)
        return -1;
    line[strcspn(line, "\n")] = '\0';
    return srun_auth_equal(line, expect) ? 0 : 1;
}

/* The streams to hvdrun at address a, their handshakes overlapped (one
 * after another, they took a third of the agents' start). 0, or -1 with
 * every descriptor closed and *again set where trying again may do: a
 * connection that hvdrun closed before its handshake was done (it
 * refuses an address's connections beyond a few at once, as when
 * several nodes share one address or a stranger floods from this one),
 * or one that was not answered in time; not where nothing listens
 * there, or what answered is not hvdrun. The handshakes end by latest (a
 * monotonic time) at most. */
static int
connect_at(const char *a, const char *port, const char *secret, int fd[],
           double latest, int *again)
{
    double deadline = hvd_mono_now() + HANDSHAKE_SECONDS;
    char expect[SRUN_STREAMS][65];
    int k, r = 0;

    if (deadline > latest)
        deadline = latest;
    for (k = 0; k < SRUN_STREAMS; k++) {
        fd[k] = -1;
        if (r == 0 && (fd[k] = dial(a, port)) < 0) {
            r = -1;
            *again |= errno == EINPROGRESS || errno == EAGAIN ||
                      errno == ETIMEDOUT; /* (SO_SNDTIMEO's) */
        }
    }
    for (k = 0; r == 0 && k < SRUN_STREAMS; k++)
        r = hello(fd[k], secret, k, deadline, expect[k]);
    for (k = 0; r == 0 && k < SRUN_STREAMS; k++)
        r = proven(fd[k], expect[k], deadline);
    if (r > 0)
        say("%s:%s does not know the job's secret; not hvdrun", a, port);
    else if (r < 0 && fd[0] >= 0)
        *again = 1;
    for (k = 0; r != 0 && k < SRUN_STREAMS; k++)
        if (fd[k] >= 0)
            close(fd[k]);
    return r == 0 ? 0 : -1;
}

/* Authenticated streams to hvdrun at the first address that answers and
 * proves it holds the secret; the addresses again, after a pause that
 * grows (50 ms to 1 s, each a random 50-100% of that so that nodes
 * refused together do not come back together), while trying again may
 * do and RETRY_SECONDS have not passed. */
static int
connect_streams(char *addrs, const char *port, const char *secret, int fd[])
{
    double until = hvd_mono_now() + RETRY_SECONDS, pause = 0.05;
    unsigned seed =
        (unsigned)getpid() ^ (unsigned)(uint64_t)(hvd_mono_now() * 1e6);

    for (;;) {
        char list[1024], *save = NULL;
        int again = 0;
        snprintf(list, sizeof(list), "%s", addrs);
        for (char *a = strtok_r(list, ",", &save); a;
             a = strtok_r(NULL, ",", &save))
            if (connect_at(a, port, secret, fd, until + HANDSHAKE_SECONDS,
                           &again) == 0)
                return 0;
        if (!again || hvd_mono_now() + pause > until)
            return -1;
        double wait = pause * (0.5 + 0.5 * rand_r(&seed) / RAND_MAX);
        struct timespec ts = {(time_t)wait,
                              (long)((wait - (time_t)wait) * 1e9)};
        nanosleep(&ts, NULL);
        pause = pause * 2 < 1 ? pause * 2 : 1;
    }
}

/* Takes name out of the environment and wipes its entry where it was:
 * /proc/PID/environ shows the environment this process started with, and
 * the agent runs in this process for the whole job. */
static void
scrub_env(const char *name)
{
    char *value = getenv(name), *entry;

    if (value == NULL)
        return;
    entry = value - strlen(name) - 1; /* "NAME=value" */
    unsetenv(name);
    explicit_bzero(entry, strlen(entry));
}

/* The connections as the agent's stdio (the status one stays apart, not
 * inherited by the workers). 0, or -1. */
static int
take_stdio(int fd[])
{
    if (dup2(fd[SRUN_STDIO], 0) < 0 || dup2(fd[SRUN_STDIO], 1) < 0 ||
        dup2(fd[SRUN_STDERR], 2) < 0)
        return -1;
    close(fd[SRUN_STDIO]);
    close(fd[SRUN_STDERR]);
    return 0;
}

/* The agent is done: hvdrun sees both streams end (its stdin is still
 * read by the agent's own thread, so the writing side is shut, not
 * closed), then takes the code on the status connection. */
static void
end_stdio(void)
{
    fflush(stdout);
    fflush(stderr);
    shutdown(1, SHUT_WR);
    shutdown(2, SHUT_WR);
}

static int
report(int status_fd, int code)
{
    char line[32];

    snprintf(line, sizeof(line), "exit %d\n", code);
    if (send(status_fd, line, strlen(line), MSG_NOSIGNAL) !=
        (ssize_t)strlen(line))
        return 0;
    /* hvdrun answers once it has the code; a dead hvdrun is EOF */
    return read_line(status_fd, line, sizeof(line), 0) == 0 &&
           strcmp(line, "bye\n") == 0;
}

int
main(int argc, char **argv)
{
    const char *link = getenv("HVDRUN_SRUN_LINK");
    char secret[256], port[16], addrs[1024];
    int fd[SRUN_STREAMS], code;

    (void)argc;
    node_name = getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "?";
    if (link == NULL || getenv("HVDRUN_SRUN_SECRET") == NULL ||
        sscanf(link, "%15s %1023s", port, addrs) != 2) {
        say("%s%sstarted without hvdrun's address and secret (run by "
            "hvdrun's srun step only)",
            "", "");
        return HVD_EXIT_USAGE;
    }
    /* srun's own address first: hvdrun runs beside srun */
    if (getenv("SLURM_SRUN_COMM_HOST")) {
        char rest[1024];
        snprintf(rest, sizeof(rest), "%s", addrs);
        snprintf(addrs, sizeof(addrs), "%.200s,%.800s",
                 getenv("SLURM_SRUN_COMM_HOST"), rest);
    }
    snprintf(secret, sizeof(secret), "%s", getenv("HVDRUN_SRUN_SECRET"));
    /* the workers do not inherit them, and the agent, this process for
     * the whole job, does not show them */
    scrub_env("HVDRUN_SRUN_SECRET");
    scrub_env("HVDRUN_SRUN_LINK");
    if (connect_streams(addrs, port, secret, fd) != 0) {
        say("cannot reach hvdrun at port %s of %s", port, addrs);
        return HVD_EXIT_LAUNCH;
    }
    /* Slurm's signals (scancel) reach every process of the step: the
     * agent stops its workers on SIGTERM and returns its code */
    if (take_stdio(fd) != 0) {
        say("%s%scannot take its connections as stdio", "", "");
        return HVD_EXIT_LAUNCH;
    }
    code = agent_run(1, argv);
    end_stdio();
    return report(fd[SRUN_STATUS], code) ? 0 : code;
}
