/* The ring's handshake (ring_shake.h): one event loop over this round's
 * listener, the streams it dials and the connections it accepted, each a
 * small state machine that moves one message at a time. */
#include "ring_shake.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hvd_clock.h"

#define MAGIC "HVR2"
#define NONCE SHAKE_NONCE
#define MAC 32
#define HELLO_BYTES (4 + 4 + 4 + NONCE + MAC)
#define ANSWER_BYTES (4 + MAC)
/* Connections accepted but not yet proven, besides those the round
 * expects: a flood beyond them evicts the oldest, not the round. */
#define SPARE_PENDING 64

enum step {
    CONNECTING,
    SEND_HELLO,
    RECV_ANSWER,
    RECV_HELLO,
    SEND_ANSWER,
    DONE
};

typedef struct shake {
    int fd;
    int out; /* index into the round's out, or -1: accepted here */
    int peer;
    enum step step;
    unsigned char msg[HELLO_BYTES];
    size_t have, want; /* bytes of msg moved so far, and in all */
    unsigned char nc[NONCE];
    double since; /* accepted at */
} shake;

typedef struct loop {
    const shake_round *r;
    shake *s;
    int n, cap;
    int accepted, dialled;
    const char *what;
    char *err;
    size_t errlen;
} loop;

int
ring_setup_failed(char *err, size_t errlen, const char *what, const char *fmt,
                  va_list ap)
{
    int n = snprintf(err, errlen, "%s: connecting the TCP ring: ", what);

    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    return COLL_ETRANSPORT;
}

static int fail(loop *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
fail(loop *l, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = ring_setup_failed(l->err, l->errlen, l->what, fmt, ap);
    va_end(ap);
    return r;
}

static void
put32(unsigned char *p, uint32_t v)
{
    v = htonl(v);
    memcpy(p, &v, 4);
}

static uint32_t
get32(const unsigned char *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return ntohl(v);
}

/* Appends n bytes at *at within buf (room bytes); 0, or -1 when full. */
static int
add(unsigned char *buf, size_t room, size_t *at, const void *p, size_t n)
{
    if (n > room - *at)
        return -1;
    memcpy(buf + *at, p, n);
    *at += n;
    return 0;
}

/* MAC_role over what both ends must agree on (ring_shake.h). */
static int
mac(const shake_round *r, char role, int rank_c, int rank_s,
    const unsigned char *nc, const unsigned char *ns, const char *addr,
    unsigned char out[MAC])
{
    unsigned char in[512], ranks[8];
    unsigned int len = MAC;
    size_t at = 0;

    put32(ranks, (uint32_t)rank_c);
    put32(ranks + 4, (uint32_t)rank_s);
    if (add(in, sizeof(in), &at, &role, 1) ||
        add(in, sizeof(in), &at, "hvdrun-ring-2", 14) ||
        add(in, sizeof(in), &at, r->g->prefix, strlen(r->g->prefix) + 1) ||
        add(in, sizeof(in), &at, r->tag, strlen(r->tag) + 1) ||
        add(in, sizeof(in), &at, ranks, 8) ||
        add(in, sizeof(in), &at, nc, NONCE) ||
        add(in, sizeof(in), &at, ns, NONCE) ||
        add(in, sizeof(in), &at, addr, strlen(addr) + 1))
        return -1;
    if (HMAC(EVP_sha256(), r->secret, (int)strlen(r->secret), in, at, out,
             &len) == NULL)
        return -1;
    return len == MAC ? 0 : -1;
}

static void
drop(loop *l, int i)
{
    if (l->s[i].fd >= 0)
        close(l->s[i].fd);
    l->s[i] = l->s[--l->n];
}

/* The dialled streams: non-blocking connects, hellos queued. */
static int
dial(loop *l, int k)
{
    const shake_out *o = &l->r->out[k];
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV},
                    *ai = NULL;
    char host[INET6_ADDRSTRLEN], serv[16];
    shake *s = &l->s[l->n];

    if (sscanf(o->addr, "%45s %15s", host, serv) != 2 ||
        getaddrinfo(host, serv, &hints, &ai) != 0)
        return fail(l, "bad address for %s", o->name);
    *s = (shake){.fd = socket(ai->ai_family,
                              SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0),
                 .out = k,
                 .peer = o->peer,
                 .step = CONNECTING};
    if (s->fd >= 0)
        ring_buffer_options(s->fd, l->r->loopback);
    if (s->fd < 0 || (connect(s->fd, ai->ai_addr, ai->ai_addrlen) != 0 &&
                      errno != EINPROGRESS)) {
        int e = errno;
        freeaddrinfo(ai);
        if (s->fd >= 0)
            close(s->fd);
        return fail(l, "cannot connect to %s: %s", o->name, strerror(e));
    }
    freeaddrinfo(ai);
    l->n++;
    return 0;
}

static int
outgoing_failed(loop *l, shake *s, const char *why)
{
    return fail(l, "%s: %s", l->r->out[s->out].name, why);
}

/* The dialler's side once connected: the hello with its proof, then the
 * listener's answer. -1 (err set) on failure; the round fails with it. */
static int
dialler_next(loop *l, shake *s)
{
    const shake_round *r = l->r;
    const shake_out *o = &r->out[s->out];
    unsigned char want[MAC];

    switch (s->step) {
    case CONNECTING:
        memcpy(s->msg, MAGIC, 4);
        put32(s->msg + 4, (uint32_t)r->g->rank);
        put32(s->msg + 8, (uint32_t)s->peer);
        if (RAND_bytes(s->nc, NONCE) != 1)
            return outgoing_failed(l, s, "no random bytes for the nonce");
        memcpy(s->msg + 12, s->nc, NONCE);
        if (mac(r, 'C', r->g->rank, s->peer, s->nc, o->ns, o->addr,
                s->msg + 12 + NONCE) != 0)
            return outgoing_failed(l, s, "cannot compute the proof");
        s->step = SEND_HELLO, s->have = 0, s->want = HELLO_BYTES;
        return 0;
    case SEND_HELLO:
        s->step = RECV_ANSWER, s->have = 0, s->want = ANSWER_BYTES;
        return 0;
    case RECV_ANSWER:
        if (memcmp(s->msg, MAGIC, 4) != 0 ||
            mac(r, 'S', r->g->rank, s->peer, s->nc, o->ns, o->addr, want) !=
                0 ||
            CRYPTO_memcmp(want, s->msg + 4, MAC) != 0)
            return outgoing_failed(
                l, s,
                "failed the handshake: not a rank of this job (a stranger "
                "answered, or the address was redirected)");
        ring_stream_options(s->fd);
        *o->fd = s->fd;
        s->fd = -1;
        s->step = DONE;
        l->dialled++;
        return 0;
    default:
        return 0;
    }
}

/* The listener's side: a hello from a rank this round wants, with its
 * proof; the answer proves this end, and the stream is taken. 0 goes on,
 * -1 drops this connection (and only it). */
static int
listener_next(loop *l, shake *s)
{
    const shake_round *r = l->r;
    unsigned char want[MAC];
    int *slot;

    switch (s->step) {
    case RECV_HELLO:
        s->peer = (int)get32(s->msg + 4);
        memcpy(s->nc, s->msg + 12, NONCE);
        if (memcmp(s->msg, MAGIC, 4) != 0 ||
            get32(s->msg + 8) != (uint32_t)r->g->rank || s->peer < 0 ||
            s->peer >= r->g->size || !r->wanted(r->arg, s->peer) ||
            *r->slot(r->arg, s->peer) >= 0 ||
            mac(r, 'C', s->peer, r->g->rank, s->nc, r->ns, r->addr, want) !=
                0 ||
            CRYPTO_memcmp(want, s->msg + 12 + NONCE, MAC) != 0)
            return -1;
        memcpy(s->msg, MAGIC, 4);
        if (mac(r, 'S', s->peer, r->g->rank, s->nc, r->ns, r->addr,
                s->msg + 4) != 0)
            return -1;
        s->step = SEND_ANSWER, s->have = 0, s->want = ANSWER_BYTES;
        return 0;
    case SEND_ANSWER:
        slot = r->slot(r->arg, s->peer);
        if (*slot >= 0) /* another connection proved this rank first */
            return -1;
        ring_stream_options(s->fd);
        *slot = s->fd;
        s->fd = -1;
        s->step = DONE;
        l->accepted++;
        return 0;
    default:
        return 0;
    }
}

/* Moves bytes of the current message; 1 when it is whole, 0 not yet, -1
 * when the connection failed (errno, 0 for EOF). */
static int
move(shake *s)
{
    int sending = s->step == SEND_HELLO || s->step == SEND_ANSWER;

    while (s->have < s->want) {
        ssize_t n =
            sending
                ? send(s->fd, s->msg + s->have, s->want - s->have, MSG_NOSIGNAL)
                : recv(s->fd, s->msg + s->have, s->want - s->have, 0);
        if (n > 0) {
            s->have += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (n == 0)
            errno = 0;
        return -1;
    }
    return 1;
}

/* One connection's turn. -1: the round fails (err set). */
static int
advance(loop *l, int i)
{
    shake *s = &l->s[i];
    int e = 0, r = 0;
    socklen_t elen = sizeof(e);

    if (s->step == CONNECTING) {
        getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &e, &elen);
        if (e == EINPROGRESS || e == EALREADY)
            return 0;
        if (e != 0)
            return fail(l, "cannot connect to %s: %s", l->r->out[s->out].name,
                        strerror(e));
        return dialler_next(l, s);
    }
    while (s->step != DONE && (r = move(s)) == 1)
        if ((s->out >= 0 ? dialler_next(l, s) : listener_next(l, s)) != 0) {
            if (s->out >= 0)
                return -1;
            drop(l, i);
            return 0;
        }
    if (s->step == DONE || r == 0)
        return 0;
    if (s->out < 0) { /* a caller that went away: it never counted */
        drop(l, i);
        return 0;
    }
    e = errno;
    return fail(l, "%s: %s", l->r->out[s->out].name,
                e ? strerror(e) : "closed the connection in the handshake");
}

/* A new connection on the listener; the oldest unproven one makes room
 * when too many are pending. */
static void
take_caller(loop *l)
{
    int fd = accept4(l->r->listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    int oldest = -1;

    if (fd < 0)
        return;
    if (l->n == l->cap) {
        for (int i = 0; i < l->n; i++)
            if (l->s[i].out < 0 && l->s[i].step != DONE &&
                (oldest < 0 || l->s[i].since < l->s[oldest].since))
                oldest = i;
        if (oldest < 0) {
            close(fd);
            return;
        }
        drop(l, oldest);
    }
    l->s[l->n++] = (shake){.fd = fd,
                           .out = -1,
                           .peer = -1,
                           .step = RECV_HELLO,
                           .want = HELLO_BYTES,
                           .since = hvd_mono_now()};
}

static short
events_of(const shake *s)
{
    if (s->step == CONNECTING || s->step == SEND_HELLO ||
        s->step == SEND_ANSWER)
        return POLLOUT;
    return POLLIN;
}

static int
finished(const loop *l)
{
    return l->dialled == l->r->nout && l->accepted == l->r->accepts;
}

/* Names what was missing when the deadline passed. */
static int
too_late(loop *l)
{
    const shake_round *r = l->r;
    int secs = r->deadline_ms / 1000;

    for (int i = 0; i < l->n; i++)
        if (l->s[i].out >= 0 && l->s[i].step != DONE)
            return fail(l, "%s did not answer the handshake within %d s",
                        r->out[l->s[i].out].name, secs);
    for (int k = 0; k < r->g->size; k++)
        if (r->wanted(r->arg, k) && *r->slot(r->arg, k) < 0)
            return fail(l, "rank %d did not connect within %d s", k, secs);
    return fail(l, "the handshake did not finish within %d s", secs);
}

static int
run(loop *l, double deadline)
{
    struct pollfd *p = calloc((size_t)l->cap + 1, sizeof(*p));
    int r = 0;

    if (p == NULL)
        return fail(l, "out of memory");
    while (r == 0 && !finished(l)) {
        int m = 0, left = (int)((deadline - hvd_mono_now()) * 1000);
        if (left <= 0) {
            r = too_late(l);
            break;
        }
        for (int i = 0; i < l->n; i++)
            p[m++] = (struct pollfd){l->s[i].step == DONE ? -1 : l->s[i].fd,
                                     events_of(&l->s[i]), 0};
        p[m] = (struct pollfd){
            l->accepted < l->r->accepts ? l->r->listener : -1, POLLIN, 0};
        if (poll(p, (nfds_t)m + 1, left) < 0 && errno != EINTR) {
            r = fail(l, "poll: %s", strerror(errno));
            break;
        }
        /* from the end: drop() moves the last connection into a freed
         * place */
        for (int i = m - 1; r == 0 && i >= 0; i--)
            if (p[i].revents && i < l->n)
                r = advance(l, i);
        if (r == 0 && p[m].revents)
            take_caller(l);
    }
    free(p);
    return r;
}

int
shake_run(const shake_round *r, const char *what, char *err, size_t errlen)
{
    loop l = {.r = r, .what = what, .err = err, .errlen = errlen};
    double deadline = hvd_mono_now() + r->deadline_ms / 1000.0;
    int rc = 0;

    if (r->secret == NULL || r->secret[0] == '\0')
        return fail(&l, "no job secret (HVDD_TOKEN is not set): the ranks "
                        "cannot prove who they are; start the job with "
                        "hvdrun");
    l.cap = r->nout + r->accepts + SPARE_PENDING;
    if ((l.s = calloc((size_t)l.cap, sizeof(*l.s))) == NULL)
        return fail(&l, "out of memory");
    for (int k = 0; rc == 0 && k < r->nout; k++)
        rc = dial(&l, k);
    if (rc == 0)
        rc = run(&l, deadline);
    while (l.n > 0)
        drop(&l, l.n - 1);
    free(l.s);
    return rc;
}
