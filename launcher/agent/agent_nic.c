#include "agent_nic.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent_relay.h"
#include "hvd_numbers.h"
#include "local_host.h"
#include "hvd_clock.h"
#include "quiet_thread.h"

#define PROBE_TIMEOUT_MS 1000

/* Answers "NONCE\n" with "ID NONCE\n" until told to stop. */
typedef struct responder {
    int fd, port;
    char id[40];
    volatile int stop;
    pthread_t thread;
} responder;

static void
answer(responder *r, int fd)
{
    char buf[128], reply[200];
    struct pollfd p = {fd, POLLIN, 0};
    ssize_t n;

    if (poll(&p, 1, PROBE_TIMEOUT_MS) == 1 &&
        (n = read(fd, buf, sizeof(buf) - 1)) > 0) {
        buf[n] = '\0';
        buf[strcspn(buf, "\r\n")] = '\0';
        n = snprintf(reply, sizeof(reply), "%s %s\n", r->id, buf);
        if (write(fd, reply, (size_t)n) < 0)
            (void)0; /* the prober sees nothing: a failed probe */
    }
    close(fd);
}

static void *
respond(void *arg)
{
    responder *r = arg;

    while (!r->stop) {
        struct pollfd p = {r->fd, POLLIN, 0};
        int fd;
        if (poll(&p, 1, 100) != 1)
            continue;
        if ((fd = accept4(r->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
            answer(r, fd);
    }
    return NULL;
}

/* Listens on every address (IPv6 and IPv4 where the host has IPv6). */
static int
responder_start(responder *r)
{
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
    struct sockaddr_in a4 = {.sin_family = AF_INET};
    struct sockaddr_storage got;
    socklen_t len = sizeof(got);
    int off = 0;

    r->fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (r->fd >= 0 &&
        (setsockopt(r->fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) ||
         bind(r->fd, (struct sockaddr *)&a6, sizeof(a6)))) {
        close(r->fd);
        r->fd = -1;
    }
    if (r->fd < 0) {
        r->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (r->fd < 0 || bind(r->fd, (struct sockaddr *)&a4, sizeof(a4)))
            return -1;
    }
    if (listen(r->fd, 64) || getsockname(r->fd, (struct sockaddr *)&got, &len))
        return -1;
    r->port = ntohs(got.ss_family == AF_INET6
                        ? ((struct sockaddr_in6 *)&got)->sin6_port
                        : ((struct sockaddr_in *)&got)->sin_port);
    r->stop = 0;
    return quiet_thread_start(&r->thread, respond, r) == 0 ? 0 : -1;
}

static void
responder_stop(responder *r)
{
    r->stop = 1;
    /* wakes the thread's poll now, not at its next 100 ms timeout (which
     * every multi-host job's start waited for) */
    shutdown(r->fd, SHUT_RDWR);
    pthread_join(r->thread, NULL);
    close(r->fd);
}

static void
random_hex(char *out, size_t bytes)
{
    unsigned char b[32];

    if (bytes > sizeof(b) || getrandom(b, bytes, 0) != (ssize_t)bytes)
        memset(b, 0, sizeof(b)); /* still unique enough with the pid */
    for (size_t i = 0; i < bytes; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i] ^ (i == 0 ? getpid() : 0));
}

static int
prefix_len(const struct sockaddr *mask)
{
    const unsigned char *b;
    int n = 0, len;

    if (mask == NULL)
        return 0;
    if (mask->sa_family == AF_INET) {
        b = (const unsigned char *)&((const struct sockaddr_in *)mask)
                ->sin_addr;
        len = 4;
    } else {
        b = ((const struct sockaddr_in6 *)mask)->sin6_addr.s6_addr;
        len = 16;
    }
    for (int i = 0; i < len; i++)
        n += __builtin_popcount(b[i]);
    return n;
}

/* Every up address of this host: [{name, addr, prefix}]. */
static json_t *
interfaces(void)
{
    struct ifaddrs *ifs, *i;
    json_t *a = json_array();
    char addr[INET6_ADDRSTRLEN + 16];

    if (a == NULL || getifaddrs(&ifs) != 0)
        return a;
    for (i = ifs; i; i = i->ifa_next) {
        int fam = i->ifa_addr ? i->ifa_addr->sa_family : -1;
        if ((fam != AF_INET && fam != AF_INET6) || !(i->ifa_flags & IFF_UP) ||
            json_array_size(a) >= 32)
            continue;
        if (getnameinfo(i->ifa_addr,
                        fam == AF_INET ? sizeof(struct sockaddr_in)
                                       : sizeof(struct sockaddr_in6),
                        addr, sizeof(addr), NULL, 0, NI_NUMERICHOST) != 0)
            continue;
        json_array_append_new(a, json_pack("{ss ss si}", "name", i->ifa_name,
                                           "addr", addr, "prefix",
                                           prefix_len(i->ifa_netmask)));
    }
    freeifaddrs(ifs);
    return a;
}

/* Connects to addr:port within the probe timeout; returns the fd or -1. */
static int
connect_bounded(const char *addr, int port)
{
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST,
                             .ai_socktype = SOCK_STREAM},
                    *res;
    char ports[16];
    int fd = -1, err = 0;
    socklen_t len = sizeof(err);

    snprintf(ports, sizeof(ports), "%d", port);
    if (getaddrinfo(addr, ports, &hints, &res) != 0)
        return -1;
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        struct pollfd p = {fd, POLLOUT, 0};
        if (errno != EINPROGRESS || poll(&p, 1, PROBE_TIMEOUT_MS) != 1 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

/* The id that answered at addr:port with our nonce, or "" for none. */
static void
probe(const char *addr, int port, char *id, size_t size)
{
    char nonce[33], msg[40], buf[160], *sp;
    int fd = connect_bounded(addr, port), n, got = 0;
    double end = hvd_mono_now() + PROBE_TIMEOUT_MS / 1000.0;

    id[0] = '\0';
    if (fd < 0)
        return;
    random_hex(nonce, 16);
    n = snprintf(msg, sizeof(msg), "%s\n", nonce);
    if (write(fd, msg, (size_t)n) == n)
        while (got < (int)sizeof(buf) - 1 && hvd_mono_now() < end) {
            struct pollfd p = {fd, POLLIN, 0};
            ssize_t r;
            if (poll(&p, 1, PROBE_TIMEOUT_MS) != 1 ||
                (r = read(fd, buf + got, sizeof(buf) - 1 - got)) <= 0)
                break;
            got += (int)r;
            buf[got] = '\0';
            if (strchr(buf, '\n'))
                break;
        }
    close(fd);
    buf[got] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    sp = strchr(buf, ' ');
    if (sp && strcmp(sp + 1, nonce) == 0)
        snprintf(id, size, "%.*s", (int)(sp - buf), buf);
}

/* The end of a post that waits on hvdd (targets, decision), and again
 * while hvdd holds it past its own wait limit, until end. */
static int
post_end_until(hvdd_client *c, agent_call *k, const char *what, json_t *body,
               double end, json_t **answer)
{
    int r = agent_post_end(c, k, answer);

    while (r == HVDD_ETIMEOUT && hvd_mono_now() < end)
        r = hvdd_client_post(c, what, json_incref(body), 60000, answer);
    json_decref(body);
    return r;
}

/* Probes the next host's addresses; results for agent/probes. */
static json_t *
probe_targets(json_t *t)
{
    json_t *results = json_array(), *addr;
    char id[80];
    size_t i;

    json_array_foreach(json_object_get(t, "addrs"), i, addr)
    {
        probe(json_string_value(addr),
              (int)json_integer_value(json_object_get(t, "port")), id,
              sizeof(id));
        json_array_append_new(results,
                              json_pack("{ss ss}", "addr",
                                        json_string_value(addr), "answer", id));
    }
    return results;
}

static int
copy_str(json_t *o, const char *name, char *out, size_t size)
{
    const char *v = json_string_value(json_object_get(o, name));

    if (v == NULL)
        return -1;
    snprintf(out, size, "%s", v);
    return 0;
}

/* Rank 0's host picks MASTER_PORT and publishes it in hvdd's store, with
 * its decision asked (the port unbound no longer than it must be); the
 * others ask for it before they register. Either is waited for after the
 * decision, beside the other calls. */
static int
rank0_host(const hvdrun_brief *j)
{
    return j->plan.slots[0].host == j->host;
}

static agent_call *
master_port_begin(hvdd_client *c, const hvdrun_brief *j, int *port)
{
    char text[16];

    if (!rank0_host(j))
        return agent_get_begin(c, "master_port", 30000);
    *port = free_local_port();
    snprintf(text, sizeof(text), "%d", *port);
    return agent_put_begin(c, "master_port", text, strlen(text));
}

static int
master_port_end(hvdd_client *c, agent_call *k, const hvdrun_brief *j,
                double end, int *port)
{
    char *v = NULL;
    size_t len;
    int r;

    if (rank0_host(j))
        return agent_put_end(c, k);
    r = agent_get_end(c, k, &v, &len);
    while (r == HVDD_ENOTFOUND && hvd_mono_now() < end) {
        free(v);
        r = hvdd_client_get(c, "hvdrun", "master_port", 30000, &v, &len);
    }
    if (r == 0) {
        long p = 0;
        if (hvd_parse_long(v, 1, 65535, &p) != 0)
            r = HVDD_EPROTO;
        *port = (int)p;
    }
    free(v);
    return r;
}

/* Registers and learns the next host's probe targets (one wait for both:
 * hvdd holds the targets until every agent registered, this one too),
 * probes them, and reports with the decision asked at once (held until
 * every report is in). The registration answers first: when it fails,
 * the targets are not waited for. */
static int
negotiate(hvdd_client *c, const hvdrun_brief *j, responder *rsp, agent_net *out,
          double end, agent_call **mp)
{
    const char *host = j->hosts.hosts[j->host].name;
    int multi = j->plan.nhosts > 1, r;
    json_t *t = NULL, *d = NULL, *ask = json_pack("{ss}", "host", host);
    agent_call *reg, *tg = NULL, *pr = NULL, *dc;

    if (!rank0_host(j))
        *mp = master_port_begin(c, j, &out->master_port);
    reg = agent_post_begin(c, "agent",
                           json_pack("{ss ss si so}", "host", host, "id",
                                     rsp->id, "probe_port", rsp->port,
                                     "interfaces", interfaces()),
                           30000, 0);
    if (multi)
        tg = agent_post_begin(c, "agent/targets", json_incref(ask), 60000, 1);
    if ((r = agent_post_end(c, reg, NULL)) != 0) {
        agent_call_drop(tg);
        json_decref(ask);
        return r;
    }
    if (multi && (r = post_end_until(c, tg, "agent/targets", json_incref(ask),
                                     end, &t)) == 0)
        pr = agent_post_begin(
            c, "agent/probes",
            json_pack("{ss so}", "host", host, "results", probe_targets(t)),
            30000, 0);
    json_decref(t);
    if (r != 0) {
        json_decref(ask);
        return r;
    }
    dc = agent_post_begin(c, "agent/decision", json_incref(ask), 60000, 1);
    if (rank0_host(j))
        *mp = master_port_begin(c, j, &out->master_port);
    if (multi && (r = agent_post_end(c, pr, NULL)) != 0) { /* (NULL: ENOMEM) */
        agent_call_drop(dc);
        json_decref(ask);
        return r;
    }
    r = post_end_until(c, dc, "agent/decision", ask, end, &d);
    if (r == 0 && (copy_str(d, "iface", out->iface, sizeof(out->iface)) ||
                   copy_str(d, "addr", out->addr, sizeof(out->addr)) ||
                   copy_str(d, "master_addr", out->master_addr,
                            sizeof(out->master_addr))))
        r = HVDD_EPROTO;
    json_decref(d);
    return r;
}

int
agent_nic_choose(hvdd_client *c, const hvdrun_brief *j, agent_net *out,
                 char *err, size_t size)
{
    responder rsp;
    double end =
        hvd_mono_now() + (j->start_timeout > 0 ? j->start_timeout : 30);
    agent_call *mp = NULL;
    int r;

    memset(out, 0, sizeof(*out));
    random_hex(rsp.id, 12);
    if (responder_start(&rsp) != 0) {
        snprintf(err, size, "cannot listen for NIC probes: %s",
                 strerror(errno));
        return -1;
    }
    r = negotiate(c, j, &rsp, out, end, &mp);
    responder_stop(&rsp);
    if (r == 0)
        r = master_port_end(c, mp, j, end, &out->master_port);
    else
        agent_call_drop(mp);
    if (r != 0) {
        snprintf(err, size, "%s", hvdd_client_error(c));
        return -1;
    }
    return 0;
}
