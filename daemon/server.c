#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "gate.h"
#include "hmap.h"
#include "http_lib.h"
#include "hvd_clock.h"

/* How long a connection has to send a request's headers, from its accept
 * or its previous response: a slowloris gets this long, not minutes. */
#define HEADER_SECONDS 10.0
/* Descriptors hvdd keeps for itself beside its connections. */
#define OWN_FDS 128

/* libmicrohttpd, once loaded (http_lib.h): set before the first HTTP
 * connection reaches it, and only such connections' code calls it. */
static const hvdd_http_lib *http;

struct hvdd_server {
    struct MHD_Daemon *d; /* NULL until the first HTTP caller, or start */
    unsigned conn_cap;    /* what the gate lets through, for MHD */
    hvdd_state *st;
    hvdd_server_opts o;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* tells the timer to stop at once */
    pthread_t timer;
    int timer_started;
    int listen_fd;
    pthread_t acceptor;
    int acceptor_started;
    int stopping;
    conn *held;    /* list of every held request */
    hmap by_event; /* event -> first conn held for it */
    int abort_told;
    unsigned ticks;     /* of the timer, every 50 ms */
    hvdd_gate *gate;    /* the caps and the header deadline */
    int spare_fd;       /* given up to accept (and drop) at the fd limit */
    hvdd_channel *chan; /* the launcher's, or NULL */
};

/* Lets go of a held request: MHD calls the handler again for it, or the
 * channel's thread runs it again. */
static void
release_held(hvdd_server *s, conn *c)
{
    if (!c->waiting)
        return;
    c->waiting = 0;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->held = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->ev_prev)
        c->ev_prev->ev_next = c->ev_next;
    else if (c->ev_next)
        hvdd_hmap_put(&s->by_event, c->event, c->ev_next, NULL);
    else
        hvdd_hmap_remove(&s->by_event, c->event);
    if (c->ev_next)
        c->ev_next->ev_prev = c->ev_prev;
    c->prev = c->next = c->ev_prev = c->ev_next = NULL;
    if (c->chan)
        hvdd_channel_released(c->chan, c);
    else if (c->mc)
        http->resume_connection(c->mc);
}

static void
hold(hvdd_server *s, conn *c, const char *event, int wait_ms)
{
    conn *head;

    c->waiting = 1;
    /* a request released and held again keeps its first deadline: writes
     * that kept waking a long-poll held it past its wait for as long as
     * they came */
    if (c->deadline == 0)
        c->deadline = hvd_mono_now() + wait_ms / 1000.0;
    snprintf(c->event, sizeof(c->event), "%s", event);
    c->prev = NULL;
    c->next = s->held;
    if (s->held)
        s->held->prev = c;
    s->held = c;
    head = hvdd_hmap_get(&s->by_event, c->event);
    c->ev_prev = NULL;
    c->ev_next = head;
    if (head)
        head->ev_prev = c;
    hvdd_hmap_put(&s->by_event, c->event, c, NULL);
    /* Suspended under the same lock that guards every resume. */
    if (c->mc)
        http->suspend_connection(c->mc);
}

static void
notify(hvdd_server *s, const char *event)
{
    conn *c;

    if (strcmp(event, "*") == 0) {
        while (s->held)
            release_held(s, s->held);
        return;
    }
    while ((c = hvdd_hmap_get(&s->by_event, event)) != NULL)
        release_held(s, c);
}

static void
check_abort(hvdd_server *s)
{
    if (!s->st->roster.aborted || s->abort_told)
        return;
    s->abort_told = 1;
    notify(s, "*");
    if (s->o.on_abort)
        s->o.on_abort(s->o.arg, s->st->roster.abort_reason);
}

static void
check_warning(hvdd_server *s)
{
    if (!s->st->roster.warning_new)
        return;
    s->st->roster.warning_new = 0;
    if (s->o.on_warn)
        s->o.on_warn(s->o.arg, s->st->roster.warning);
}

/* Held HTTP requests whose client hung up are answered now (they would
 * fail to send and close): libmicrohttpd does not watch a suspended
 * connection, so a client that left kept its descriptor and its address's
 * share of the caps until the wait ended; 448 of them, made and closed in
 * under a second, shut a host's ranks out of hvdd for two minutes.
 * (A client that only shut its writing side is taken as gone too.) */
static void
release_gone(hvdd_server *s)
{
    struct pollfd p[64];
    conn *of[64];
    int n = 0;

    for (conn *c = s->held, *next; c; c = next) {
        next = c->next;
        if (c->mc && c->fd >= 0) {
            p[n] = (struct pollfd){c->fd, POLLRDHUP, 0};
            of[n++] = c;
        }
        /* a batch, polled at once; a release unlinks only the ones
         * polled, behind next */
        if (n == 64 || (next == NULL && n > 0)) {
            if (poll(p, (nfds_t)n, 0) > 0)
                for (int i = 0; i < n; i++)
                    if (p[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
                        of[i]->deadline_passed = 1;
                        release_held(s, of[i]);
                    }
            n = 0;
        }
    }
}

/* libmicrohttpd's own unescaping, but a decoded %00, which cut the name
 * short where the handler reads it (PUT /global/k%00junk stored "k"),
 * becomes a byte that every name and route check refuses. */
static size_t
unescape(void *cls, struct MHD_Connection *mc, char *s)
{
    size_t n = http->http_unescape(s);

    (void)cls;
    (void)mc;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\0')
            s[i] = '\x01';
    return n;
}

static void *
timer_main(void *arg)
{
    hvdd_server *s = arg;

    pthread_mutex_lock(&s->mu);
    for (;;) {
        struct timespec ts = hvd_clock_after(CLOCK_REALTIME, 0.05);
        if (!s->stopping)
            pthread_cond_timedwait(&s->wake, &s->mu, &ts);
        if (s->stopping) {
            pthread_mutex_unlock(&s->mu);
            return NULL;
        }
        double t = hvd_mono_now();
        if (++s->ticks % 10 == 0) {
            hvdd_gate_expire(s->gate, t);
            release_gone(s);
        }
        for (conn *c = s->held, *next; c; c = next) {
            next = c->next;
            if (c->deadline <= t) {
                c->deadline_passed = 1;
                release_held(s, c);
            }
        }
        hvdd_roster_check_heartbeats(&s->st->roster, t);
        check_abort(s);
    }
}

/* The client's numeric address (IPv4-mapped shown as IPv4), or NULL. */
static const char *
peer_address(struct MHD_Connection *mc, char *host, size_t size)
{
    const union MHD_ConnectionInfo *ci =
        http->get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    socklen_t len;

    if (ci == NULL || ci->client_addr == NULL)
        return NULL;
    len = ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                 : sizeof(struct sockaddr_in);
    if (getnameinfo(ci->client_addr, len, host, size, NULL, 0,
                    NI_NUMERICHOST) != 0)
        return NULL;
    return strncmp(host, "::ffff:", 7) == 0 ? host + 7 : host;
}

static int
peer_allowed(const hvdd_server *s, const char *h)
{
    if (h == NULL)
        return 0;
    /* This host's own workers; other loopback addresses must be allowed
     * like any other, which lets tests see a refusal without a network. */
    if (strcmp(h, "127.0.0.1") == 0 || strcmp(h, "::1") == 0)
        return 1;
    for (const char **a = s->o.allow; a && *a; a++)
        if (strcmp(*a, h) == 0)
            return 1;
    return 0;
}

static enum MHD_Result
send_response(struct MHD_Connection *mc, hvdd_response *rs)
{
    struct MHD_Response *r = http->create_response_from_buffer(
        rs->len, rs->body ? rs->body : (void *)"",
        rs->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ok;

    if (r == NULL) {
        free(rs->body);
        return MHD_NO;
    }
    rs->body = NULL;
    if (rs->content_type)
        http->add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                  rs->content_type);
    ok = http->queue_response(mc, (unsigned)rs->status, r);
    http->destroy_response(r);
    return ok;
}

static int
conn_fd(struct MHD_Connection *mc)
{
    const union MHD_ConnectionInfo *ci =
        http->get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);

    return ci ? ci->connect_fd : -1;
}

/* The request as hvdd_handle and hvdd_access see it. */
static hvdd_request
request_of(hvdd_server *s, struct MHD_Connection *mc, const conn *c,
           const char *url, const char *method, char *host, size_t hostlen)
{
    const char *peer = peer_address(mc, host, hostlen);
    hvdd_request rq = {
        .method = method,
        .path = url,
        .wait =
            http->lookup_connection_value(mc, MHD_GET_ARGUMENT_KIND, "wait"),
        .auth = http->lookup_connection_value(mc, MHD_HEADER_KIND,
                                              MHD_HTTP_HEADER_AUTHORIZATION),
        .body = c->body,
        .body_len = c->too_big ? HVDD_MAX_BODY + 1 : c->len,
        .peer_allowed = peer_allowed(s, peer),
        .peer = peer,
        .deadline_passed = c->deadline_passed,
        .conn_state = (int *)&c->conn_state,
        .now = hvd_mono_now(),
    };
    return rq;
}

static enum MHD_Result
refuse(struct MHD_Connection *mc, int status, const char *why)
{
    hvdd_response rs = {.status = status, .content_type = "text/plain"};

    rs.body = strdup(why);
    rs.len = rs.body ? strlen(rs.body) : 0;
    return send_response(mc, &rs);
}

/* First call, once the headers are in: who may ask is decided now,
 * before any byte of a body is read (an unfinished upload from a refused
 * address cost hvdd its 1 MiB), and an oversized body is refused. */
static enum MHD_Result
first_call(hvdd_server *s, struct MHD_Connection *mc, const char *url,
           const char *method, void **con_cls)
{
    const char *cl =
        http->lookup_connection_value(mc, MHD_HEADER_KIND, "Content-Length");
    conn *c = calloc(1, sizeof(*c));
    char host[INET6_ADDRSTRLEN + 8];
    hvdd_response rs = {0};
    int who;

    hvdd_gate_headers_in(s->gate, conn_fd(mc));
    if (c == NULL)
        return MHD_NO;
    c->mc = mc;
    c->fd = conn_fd(mc);
    c->conn_state = -1;
    *con_cls = c;
    hvdd_request rq = request_of(s, mc, c, url, method, host, sizeof(host));
    pthread_mutex_lock(&s->mu);
    who = s->stopping ? 0 : hvdd_access(s->st, &rq, &rs);
    pthread_mutex_unlock(&s->mu);
    if (who < 0) {
        c->too_big = 1; /* nothing of a body is kept */
        return send_response(mc, &rs);
    }
    free(rs.body);
    if (cl && strtoull(cl, NULL, 10) > HVDD_MAX_BODY) {
        c->too_big = 1;
        return refuse(mc, 413, "request body too large\n");
    }
    return MHD_YES;
}

static int
take_upload(conn *c, const char *data, size_t n)
{
    if (c->too_big || c->len + n > HVDD_MAX_BODY) {
        c->too_big = 1;
        return 0;
    }
    if (c->len + n > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 512; /* most bodies are small */
        char *b;
        while (cap < c->len + n)
            cap *= 2;
        if ((b = realloc(c->body, cap)) == NULL)
            return -1;
        c->body = b;
        c->cap = cap;
    }
    memcpy(c->body + c->len, data, n);
    c->len += n;
    return 0;
}

static enum MHD_Result
handler(void *cls, struct MHD_Connection *mc, const char *url,
        const char *method, const char *version, const char *upload_data,
        size_t *upload_data_size, void **con_cls)
{
    hvdd_server *s = cls;
    conn *c = *con_cls;
    hvdd_response rs = {0};

    (void)version;
    if (c == NULL)
        return first_call(s, mc, url, method, con_cls);
    if (*upload_data_size > 0) {
        if (take_upload(c, upload_data, *upload_data_size) != 0)
            return MHD_NO;
        *upload_data_size = 0;
        return MHD_YES;
    }
    char host[INET6_ADDRSTRLEN + 8];
    hvdd_request rq = request_of(s, mc, c, url, method, host, sizeof(host));
    if (hvdd_server_run(s, c, &rq, &rs))
        return MHD_YES; /* held: MHD calls again once it is released */
    return send_response(mc, &rs);
}

int
hvdd_server_run(hvdd_server *s, conn *c, const hvdd_request *rq,
                hvdd_response *rs)
{
    pthread_mutex_lock(&s->mu);
    if (s->stopping) {
        rs->status = 503;
        rs->content_type = "text/plain";
        rs->body = strdup("hvdd is stopping\n");
        rs->len = rs->body ? strlen(rs->body) : 0;
    } else {
        hvdd_handle(s->st, rq, rs);
    }
    if (rs->notify[0])
        notify(s, rs->notify);
    check_abort(s);
    check_warning(s);
    if (rs->wait_ms > 0 && !s->stopping) {
        if (s->st->debug && s->st->log) {
            char line[300];
            snprintf(line, sizeof(line), "%.6f %s %.80s held for %.80s",
                     rq->now, rq->method, rq->path, rs->wait_event);
            s->st->log(s->st->log_arg, line);
        }
        hold(s, c, rs->wait_event, rs->wait_ms);
        pthread_mutex_unlock(&s->mu);
        free(rs->body);
        rs->body = NULL;
        return 1;
    }
    if (s->st->debug && s->st->log) {
        char line[300];
        snprintf(line, sizeof(line), "%.6f %s %s -> %d", rq->now, rq->method,
                 rq->path, rs->status);
        s->st->log(s->st->log_arg, line);
    }
    pthread_mutex_unlock(&s->mu);
    return 0;
}

void
hvdd_server_forget(hvdd_server *s, conn *c)
{
    pthread_mutex_lock(&s->mu);
    if (c->waiting) {
        c->chan = NULL; /* no one to tell */
        release_held(s, c);
    }
    pthread_mutex_unlock(&s->mu);
}

void
hvdd_server_lock(hvdd_server *s)
{
    pthread_mutex_lock(&s->mu);
}

void
hvdd_server_unlock(hvdd_server *s)
{
    pthread_mutex_unlock(&s->mu);
}

const char *
hvdd_server_token(const hvdd_server *s)
{
    return s->st->token;
}

static void
completed(void *cls, struct MHD_Connection *mc, void **con_cls,
          enum MHD_RequestTerminationCode toe)
{
    hvdd_server *s = cls;
    conn *c = *con_cls;

    (void)toe;
    hvdd_gate_request_done(s->gate, conn_fd(mc), hvd_mono_now());
    if (c == NULL)
        return;
    free(c->body);
    free(c);
    *con_cls = NULL;
}

/* libmicrohttpd's start and end of a connection: the gate counts it
 * from accept until the end. */
static void
connection_event(void *cls, struct MHD_Connection *mc, void **socket_context,
                 enum MHD_ConnectionNotificationCode what)
{
    hvdd_server *s = cls;

    if (what == MHD_CONNECTION_NOTIFY_STARTED)
        *socket_context = (void *)hvdd_gate_started(s->gate, conn_fd(mc));
    else if (what == MHD_CONNECTION_NOTIFY_CLOSED)
        hvdd_gate_closed(s->gate, (uintptr_t)*socket_context);
}

/* The descriptor limit, raised as far as allowed towards what want
 * connections need: the connection cap is derived from what it is. */
static int
fd_limit(unsigned want)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    if (rl.rlim_cur < want + OWN_FDS) {
        rl.rlim_cur =
            rl.rlim_max < want + OWN_FDS ? rl.rlim_max : want + OWN_FDS;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    return rl.rlim_cur > (1u << 20) ? 1 << 20 : (int)rl.rlim_cur;
}

/* Connections at once: what was asked, within the limit less what hvdd
 * needs for itself (half the limit when it is small). */
static unsigned
connection_cap(int limit, unsigned want)
{
    unsigned room =
        limit > 2 * OWN_FDS ? (unsigned)(limit - OWN_FDS) : (unsigned)limit / 2;

    return want < room ? want : room;
}

/* The listening socket: the launcher's, or one bound here. Returns it, or
 * -1 with err; a socket bound here is closed again on failure. */
static int
open_listener(const hvdd_server_opts *o, int *port, char *err, size_t n)
{
    struct sockaddr_storage ss;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    socklen_t len = sizeof(ss);
    const char *addr = o->addr ? o->addr : "0.0.0.0";
    int fd = o->listen_fd, one = 1, r = -1;

    memset(&ss, 0, sizeof(ss));
    if (fd < 0) {
        if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
            a4->sin_family = AF_INET;
            a4->sin_port = htons((uint16_t)o->port);
            len = sizeof(*a4);
        } else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
            a6->sin6_family = AF_INET6;
            a6->sin6_port = htons((uint16_t)o->port);
            len = sizeof(*a6);
        } else {
            snprintf(err, n, "'%s' is not a numeric IP address", addr);
            goto out;
        }
        fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
            bind(fd, (struct sockaddr *)&ss, len) != 0 ||
            listen(fd, 4096) != 0) {
            snprintf(err, n, "cannot listen on %s:%d: %s", addr, o->port,
                     strerror(errno));
            goto out;
        }
    }
    len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        snprintf(err, n, "bad listening socket: %s", strerror(errno));
        goto out;
    }
    *port = ntohs(ss.ss_family == AF_INET6 ? a6->sin6_port : a4->sin_port);
    r = fd;
out:
    if (r < 0 && fd >= 0 && fd != o->listen_fd)
        close(fd);
    return r;
}

/* Out of descriptors: the spare one makes room to accept the next
 * caller and drop it, so that the backlog drains and accept does not
 * spin on EMFILE; then a pause. */
static void
shed(hvdd_server *s)
{
    int fd;

    if (s->spare_fd >= 0) {
        close(s->spare_fd);
        if ((fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
            close(fd);
        s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    poll(NULL, 0, 10);
}

/* The caller's numeric address (IPv4-mapped shown as IPv4). */
static const char *
address_of(const struct sockaddr_storage *ss, socklen_t len, char *host,
           size_t size)
{
    if (getnameinfo((const struct sockaddr *)ss, len, host, size, NULL, 0,
                    NI_NUMERICHOST) != 0)
        return "?";
    return strncmp(host, "::ffff:", 7) == 0 ? host + 7 : host;
}

/* libmicrohttpd's thread, fed by the acceptor. Limits set on purpose:
 * MHD's defaults (1020 connections, no idle timeout, 32 KiB a connection)
 * break a rendezvous of thousands. The gate keeps MHD below its own
 * limit, at which 0.9.75 deadlocked (its thread waited on a lock it held,
 * and SIGTERM no longer worked). 0, or -1 with err. */
static int
http_start(hvdd_server *s, char *err, size_t errlen)
{
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC;

    if ((http = hvdd_http_lib_load(err, errlen)) == NULL)
        return -1;
    s->d = http->start_daemon(
        flags, 0, NULL, NULL, handler, s, MHD_OPTION_CONNECTION_LIMIT,
        s->conn_cap + 64, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)130,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)8192,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_NOTIFY_CONNECTION,
        connection_event, s, MHD_OPTION_END);
    if (s->d == NULL) {
        snprintf(err, errlen, "cannot start the HTTP server: %s",
                 strerror(errno));
        return -1;
    }
    return 0;
}

/* The acceptor's start of the HTTP server, at the first caller: 1, or 0
 * with the job aborted (its workers could never reach the store). */
static int
http_start_or_abort(hvdd_server *s)
{
    char err[400], reason[440];

    if (http_start(s, err, sizeof(err)) == 0)
        return 1;
    snprintf(reason, sizeof(reason), "hvdd cannot serve HTTP: %s", err);
    pthread_mutex_lock(&s->mu);
    hvdd_roster_abort(&s->st->roster, reason);
    check_abort(s);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* Accepts here and hands connections to MHD. With MHD 0.9.75 in epoll
 * mode, measured here, connections went unserved: a burst of 256 new ones
 * left unread, and a third of 127 resumed long-polls never called back.
 * Poll mode with our own accept served every case, and 4096 clients in
 * 0.4 s (tests/bench/rendezvous), so that is what runs. */
static void *
accept_main(void *arg)
{
    hvdd_server *s = arg;
    struct sockaddr_storage ss;
    char host[INET6_ADDRSTRLEN + 8];

    for (;;) {
        socklen_t len = sizeof(ss);
        int fd = accept4(s->listen_fd, (struct sockaddr *)&ss, &len,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
            shed(s);
            continue;
        }
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return NULL; /* shut down */
        }
        if (!hvdd_gate_admit(s->gate, fd,
                             address_of(&ss, len, host, sizeof(host)),
                             hvd_mono_now())) {
            close(fd); /* over a cap: it never reaches MHD */
            continue;
        }
        if (s->d == NULL && !http_start_or_abort(s)) {
            hvdd_gate_drop(s->gate, fd);
            close(fd);
            continue;
        }
        /* on failure MHD has closed fd already */
        if (http->add_connection(s->d, fd, (struct sockaddr *)&ss, len) !=
            MHD_YES)
            hvdd_gate_drop(s->gate, fd);
    }
}

hvdd_server *
hvdd_server_start(hvdd_state *st, const hvdd_server_opts *o, int *port,
                  char *err, size_t errlen)
{
    hvdd_server *s = calloc(1, sizeof(*s));
    unsigned per_addr;
    int limit;

    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->st = st;
    s->o = *o;
    s->listen_fd = -1;
    s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    hvdd_hmap_init(&s->by_event);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->wake, NULL);
    if ((s->listen_fd = open_listener(o, port, err, errlen)) < 0)
        goto fail;
    limit = fd_limit(o->max_conns);
    s->conn_cap = connection_cap(limit, o->max_conns);
    /* one address never takes more than half: the others keep room */
    per_addr = o->per_addr < s->conn_cap / 2 ? o->per_addr
               : s->conn_cap / 2             ? s->conn_cap / 2
                                             : 1;
    if ((s->gate = hvdd_gate_new(s->conn_cap, per_addr, HEADER_SECONDS,
                                 limit)) == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* started by hand (no launcher's socket): a library that cannot
     * load is said at once; a launcher's hvdd waits for its workers */
    if (o->listen_fd < 0 && http_start(s, err, errlen) != 0)
        goto fail;
    if (pthread_create(&s->timer, NULL, timer_main, s) != 0 ||
        (s->timer_started = 1,
         pthread_create(&s->acceptor, NULL, accept_main, s) != 0)) {
        snprintf(err, errlen, "cannot start threads");
        goto fail;
    }
    s->acceptor_started = 1;
    if (o->channel_fd >= 0 &&
        (s->chan = hvdd_channel_start(s, o->channel_fd, err, errlen)) == NULL)
        goto fail;
    return s;
fail:
    hvdd_server_stop(s);
    return NULL;
}

void
hvdd_server_stop(hvdd_server *s)
{
    int had_held;

    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    had_held = s->held != NULL;
    notify(s, "*"); /* MHD aborts when stopped with a request held */
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->mu);
    hvdd_channel_stop(s->chan); /* its released requests answered 503 */
    if (s->timer_started)
        pthread_join(s->timer, NULL);
    if (s->listen_fd >= 0)
        shutdown(s->listen_fd, SHUT_RDWR); /* ends accept() */
    if (s->acceptor_started)
        pthread_join(s->acceptor, NULL);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->d) {
        /* Let the MHD thread answer the released requests first. */
        struct timespec ts = {0, 100 * 1000 * 1000};
        if (had_held)
            nanosleep(&ts, NULL);
        http->stop_daemon(s->d);
    }
    hvdd_gate_free(s->gate);
    if (s->spare_fd >= 0)
        close(s->spare_fd);
    hvdd_hmap_release(&s->by_event, NULL);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
