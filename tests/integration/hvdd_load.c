/* Load test and benchmark client: N simulated workers on one epoll loop,
 * each on its own keep-alive connection, speaking plain HTTP/1.1 so that
 * the figure is hvdd's, not a client library's. Each worker registers with
 * a standalone hvdd (answered once all N arrived), PUTs one key,
 * long-poll GETs its neighbour's key and checks it, and passes a barrier.
 * usage: HVDD_TOKEN=... hvdd_load PORT N
 * Prints "N clients: T s, all N values read back equal" and exits 0, or
 * says what went wrong and exits 1. Gives up after 60 s. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hvd_clock.h"

enum step { REGISTER, PUT, GET, BARRIER, DONE };

typedef struct client {
    int fd, id, rank;
    enum step step;
    char out[768];
    size_t out_len, out_sent;
    char in[1024];
    size_t in_len;
} client;

static int n, port;
static const char *token;

static void
request(client *c)
{
    char path[64], body[128] = "";
    const char *method = "POST";

    switch (c->step) {
    case REGISTER:
        snprintf(path, sizeof(path), "/v1/register");
        snprintf(body, sizeof(body), "{\"host\":\"sim%d\",\"pid\":%d}",
                 c->id % 64, c->id);
        break;
    case PUT:
        method = "PUT";
        snprintf(path, sizeof(path), "/bench/key_%d", c->rank);
        snprintf(body, sizeof(body), "value-of-%d", c->rank);
        break;
    case GET:
        method = "GET";
        snprintf(path, sizeof(path), "/bench/key_%d?wait=60000",
                 (c->rank + 1) % n);
        break;
    default:
        snprintf(path, sizeof(path), "/v1/barrier");
        snprintf(body, sizeof(body), "{\"name\":\"done\",\"rank\":%d}",
                 c->rank);
    }
    c->out_len = (size_t)snprintf(
        c->out, sizeof(c->out),
        "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
        "Content-Length: %zu\r\n\r\n%s",
        method, path, token, strlen(body), body);
    c->out_sent = 0;
    c->in_len = 0;
}

/* A whole response in c->in? Returns its status (body at *body), 0 while
 * incomplete, -1 when malformed. */
static int
response(client *c, const char **body, size_t *blen)
{
    char *end, *cl;
    long len;

    c->in[c->in_len] = '\0';
    if ((end = strstr(c->in, "\r\n\r\n")) == NULL)
        return 0;
    if ((cl = strcasestr(c->in, "\r\nContent-Length:")) == NULL || cl > end)
        return -1;
    len = strtol(cl + 17, NULL, 10);
    if ((size_t)(end + 4 - c->in) + (size_t)len > c->in_len)
        return 0;
    *body = end + 4;
    *blen = (size_t)len;
    return (int)strtol(c->in + 9, NULL, 10);
}

/* Handles a complete response; returns 0, or -1 after saying why. */
static int
advance(client *c, int status, const char *body, size_t blen)
{
    char want[64];
    const char *r;

    if (status != 200) {
        fprintf(stderr, "client %d step %d: HTTP %d: %.*s\n", c->id, c->step,
                status, (int)blen, body);
        return -1;
    }
    if (c->step == REGISTER) {
        if ((r = strstr(body, "\"rank\":")) == NULL)
            return -1;
        c->rank = (int)strtol(r + 7, NULL, 10);
    } else if (c->step == GET) {
        int k = snprintf(want, sizeof(want), "value-of-%d", (c->rank + 1) % n);
        if ((size_t)k != blen || memcmp(body, want, blen) != 0) {
            fprintf(stderr, "client %d: read '%.*s', want '%s'\n", c->id,
                    (int)blen, body, want);
            return -1;
        }
    }
    c->step++;
    if (c->step != DONE)
        request(c);
    return 0;
}

static int
pump(client *c, int ep)
{
    const char *body;
    size_t blen;
    ssize_t k;
    int status;

    while (c->out_sent < c->out_len) {
        k = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent,
                 MSG_NOSIGNAL);
        if (k < 0)
            return errno == EAGAIN ? 0 : -1;
        c->out_sent += (size_t)k;
    }
    for (;;) {
        k = recv(c->fd, c->in + c->in_len, sizeof(c->in) - 1 - c->in_len, 0);
        if (k == 0 || (k < 0 && errno != EAGAIN))
            return -1;
        if (k < 0)
            return 0;
        c->in_len += (size_t)k;
        if ((status = response(c, &body, &blen)) < 0)
            return -1;
        if (status == 0)
            continue;
        if (advance(c, status, body, blen) != 0)
            return -1;
        if (c->step == DONE) {
            epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
            return 1;
        }
        return pump(c, ep);
    }
}

static int
connect_all(client *cs, int ep)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    int one = 1;

    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < n; i++) {
        client *c = &cs[i];
        struct epoll_event ev = {EPOLLIN | EPOLLOUT | EPOLLET, {.ptr = c}};
        c->id = i;
        c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (c->fd < 0)
            return -1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) != 0 &&
            errno != EINPROGRESS)
            return -1;
        request(c);
        epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
    }
    return 0;
}

int
main(int argc, char **argv)
{
    struct epoll_event evs[256];
    struct rlimit rl = {0, 0};
    client *cs;
    int ep, done = 0;
    double t0, limit;

    if (argc != 3 || (token = getenv("HVDD_TOKEN")) == NULL) {
        fprintf(stderr, "usage: HVDD_TOKEN=... hvdd_load PORT N\n");
        return 2;
    }
    port = (int)strtol(argv[1], NULL, 10);
    n = (int)strtol(argv[2], NULL, 10);
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    cs = calloc((size_t)n, sizeof(*cs));
    ep = epoll_create1(0);
    t0 = hvd_mono_now();
    limit = t0 + 60;
    if (cs == NULL || ep < 0 || connect_all(cs, ep) != 0) {
        fprintf(stderr, "hvdd_load: cannot open %d connections: %s\n", n,
                strerror(errno));
        return 1;
    }
    while (done < n && hvd_mono_now() < limit) {
        int k = epoll_wait(ep, evs, 256, 1000);
        for (int i = 0; i < k; i++) {
            int r = pump(evs[i].data.ptr, ep);
            if (r < 0) {
                client *c = evs[i].data.ptr;
                fprintf(stderr, "hvdd_load: client %d failed at step %d\n",
                        c->id, c->step);
                return 1;
            }
            done += r;
        }
    }
    if (done < n) {
        fprintf(stderr, "hvdd_load: %d of %d clients done after 60 s\n", done,
                n);
        return 1;
    }
    printf("%d clients: %.3f s, all %d values read back equal\n", n,
           hvd_mono_now() - t0, n);
    for (int i = 0; i < n; i++)
        close(cs[i].fd);
    free(cs);
    return 0;
}
