/* tcp_floor: how long two processes on this machine take to move BYTES
 * each way at once over loopback TCP, with one thread each, non-blocking
 * sockets and 1 MiB writes, and the socket settings libcollective's ring
 * uses (2 MiB buffers, cubic or reno on loopback): a floor for any
 * allreduce that moves as much over TCP here (a 2-rank ring allreduce
 * sends its buffer once each way).
 * usage: tcp_floor BYTES [ROUNDS]   prints the fastest round in ms. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hvd_clock.h"

#define CHUNK (1 << 20)

static int
die(const char *what)
{
    perror(what);
    exit(1);
}

/* Sends and receives n bytes at once on fd; returns the seconds taken. */
static double
round_trip(int fd, char *out, char *in, size_t n)
{
    double t0 = hvd_mono_now();
    size_t sent = 0, got = 0;

    while (sent < n || got < n) {
        struct pollfd p = {
            fd, (sent < n ? POLLOUT : 0) | (got < n ? POLLIN : 0), 0};
        if (poll(&p, 1, 30000) <= 0)
            die("poll");
        if (sent < n && (p.revents & POLLOUT)) {
            ssize_t w = send(fd, out + sent,
                             n - sent < CHUNK ? n - sent : CHUNK, MSG_NOSIGNAL);
            if (w < 0 && errno != EAGAIN)
                die("send");
            sent += w > 0 ? (size_t)w : 0;
        }
        if (got < n && (p.revents & (POLLIN | POLLHUP))) {
            ssize_t r =
                recv(fd, in + got, n - got < CHUNK ? n - got : CHUNK, 0);
            if (r == 0 || (r < 0 && errno != EAGAIN))
                die("recv");
            got += r > 0 ? (size_t)r : 0;
        }
    }
    return hvd_mono_now() - t0;
}

/* As libcollective's ring_connect.c sets them, before connect/listen. */
static void
ring_options(int fd)
{
    static const char *const unpaced[] = {"cubic", "reno"};
    int size = 2 << 20;

    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    for (int i = 0; i < 2; i++)
        if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, unpaced[i],
                       (socklen_t)strlen(unpaced[i])) == 0)
            break;
}

int
main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;
    int rounds = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 5, one = 1, ls, fd;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    double best = 1e9;
    pid_t child;

    if (n == 0 || rounds <= 0) {
        fprintf(stderr, "usage: tcp_floor BYTES [ROUNDS]\n");
        return 2;
    }
    if ((ls = socket(AF_INET, SOCK_STREAM, 0)) >= 0)
        ring_options(ls);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(ls, 1) != 0 ||
        getsockname(ls, (struct sockaddr *)&a, &alen) != 0)
        die("listen");
    if ((child = fork()) < 0)
        die("fork");
    if (child == 0) {
        close(ls);
        if ((fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0)
            ring_options(fd);
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
            die("connect");
    } else if ((fd = accept(ls, NULL, NULL)) < 0) {
        kill(child, SIGKILL);
        die("accept");
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, O_NONBLOCK);
    char *out = malloc(n), *in = malloc(n);
    if (out == NULL || in == NULL)
        die("malloc");
    memset(out, 1, n);
    memset(in, 0, n);
    for (int i = 0; i < rounds; i++) {
        double t = round_trip(fd, out, in, n);
        best = t < best ? t : best;
    }
    if (child == 0)
        return 0;
    waitpid(child, NULL, 0);
    printf("%.1f\n", best * 1e3);
    return 0;
}
