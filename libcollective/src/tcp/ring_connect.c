/* Connecting the TCP ring: every rank listens on the address of the
 * interface hvdd chose, puts "address port" in hvdd's store, and then, in
 * one round of handshakes (ring_shake.c), dials its right neighbour while
 * it accepts its left one; each stream proves both ends hold the job's
 * secret. Every rank publishes before it looks anything up, so the
 * lookups cannot wait on each other. The chords (streams to ranks that
 * are not neighbours) are made the same way: each rank dials its chords
 * above and accepts those below. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "hvd_clock.h"
#include "ring_shake.h"
#include "tcp_ring.h"

typedef struct {
    tcp_ring *g;
    hvdd_client *kv;
    struct timespec deadline;
    int loopback;     /* the interface is: every rank is on this host */
    const char *what; /* the collective that connects, for errors */
    int with_ring;    /* the round makes the ring's two streams */
    int with_chords;  /* and the chords of set */
    ring_chords set;
    char *err;
    size_t errlen;
} setup;

static int fail(setup *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
fail(setup *s, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = ring_setup_failed(s->err, s->errlen, s->what, fmt, ap);
    va_end(ap);
    return r;
}

static int
ms_left(const setup *s)
{
    struct timespec now;
    long ms;

    clock_gettime(CLOCK_MONOTONIC, &now);
    ms = (s->deadline.tv_sec - now.tv_sec) * 1000L +
         (s->deadline.tv_nsec - now.tv_nsec) / 1000000L;
    return ms < 0 ? 0 : ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/* The interface's first IPv4 address, else its first global IPv6 one;
 * *loopback: whether it is a loopback interface. */
static int
iface_address(const char *iface, struct sockaddr_storage *out, int *loopback)
{
    struct ifaddrs *all, *a;
    int found = 0;

    if (getifaddrs(&all) != 0)
        return 0;
    for (int family = AF_INET; !found && family != -1;
         family = family == AF_INET ? AF_INET6 : -1)
        for (a = all; !found && a; a = a->ifa_next) {
            if (a->ifa_addr == NULL || a->ifa_addr->sa_family != family ||
                strcmp(a->ifa_name, iface) != 0)
                continue;
            if (family == AF_INET6 &&
                IN6_IS_ADDR_LINKLOCAL(
                    &((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr))
                continue;
            *loopback = (a->ifa_flags & IFF_LOOPBACK) != 0;
            memcpy(out, a->ifa_addr,
                   family == AF_INET ? sizeof(struct sockaddr_in)
                                     : sizeof(struct sockaddr_in6));
            found = 1;
        }
    freeifaddrs(all);
    return found;
}

/* Fixed socket buffers (the kernel doubles them, up to rmem_max and
 * wmem_max): the 2-rank 64 MiB allreduce took a median 28-33 ms against
 * 41-46 with the kernel's autotuning, in turns (1 MiB: 31-36; 512 KiB:
 * 51). Set before connect and listen, so the handshake scales the window. */
#define RING_SOCKET_BUFFER (2 << 20)

/* On loopback, a congestion control that does not pace: BBR (some hosts'
 * default) paces with timers and left the ring idle for about 40% of a
 * 2-rank allreduce here (64 MiB median 45-50 ms; with reno 35-36). Across
 * hosts the host's own choice stays. Unknown or not allowed: the next. */
void
ring_buffer_options(int fd, int loopback)
{
    static const char *const unpaced[] = {"cubic", "reno"};
    int size = RING_SOCKET_BUFFER;

    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    for (int i = 0; loopback && i < 2; i++)
        if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, unpaced[i],
                       (socklen_t)strlen(unpaced[i])) == 0)
            break;
}

void
ring_stream_options(int fd)
{
    int one = 1;

    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Listens on the interface's address and publishes "address port
 * nonce" under <prefix>-<rank><tag>: value gets "address port" and ns a
 * fresh nonce, for the handshake. */
static int
listen_and_publish(setup *s, const char *tag, int *out, char *value,
                   size_t vlen, unsigned char ns[SHAKE_NONCE])
{
    struct sockaddr_storage a = {0};
    socklen_t alen = sizeof(a);
    char host[INET6_ADDRSTRLEN], serv[16], key[160];
    char text[96 + 2 * SHAKE_NONCE + 2];
    const char *iface = s->g->iface;
    int fd;

    if (!iface_address(iface, &a, &s->loopback)) { /* HOROVOD_GLOO_IFACE */
        fail(s, "interface '%s' has no usable address", iface);
        return COLL_EIDENTITY;
    }
    if ((fd = socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0)
        ring_buffer_options(fd,
                            s->loopback); /* accepted streams inherit them */
    if (fd < 0 ||
        bind(fd, (struct sockaddr *)&a,
             a.ss_family == AF_INET ? sizeof(struct sockaddr_in)
                                    : sizeof(struct sockaddr_in6)) != 0 ||
        /* room for strangers' connections beside the ranks' */
        listen(fd, s->g->size + 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) ||
        getnameinfo((struct sockaddr *)&a, alen, host, sizeof(host), serv,
                    sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return fail(s, "cannot listen on '%s': %s", iface, strerror(e));
    }
    *out = fd;
    if (RAND_bytes(ns, SHAKE_NONCE) != 1)
        return fail(s, "no random bytes for the handshake's nonce");
    snprintf(value, vlen, "%s %s", host, serv);
    snprintf(text, sizeof(text), "%s ", value);
    for (int i = 0; i < SHAKE_NONCE; i++)
        snprintf(text + strlen(text), 3, "%02x", ns[i]);
    snprintf(key, sizeof(key), "%s-%d%s", s->g->prefix, s->g->rank, tag);
    if (hvdd_client_put(s->kv, "ring", key, text, strlen(text)) != 0)
        return fail(s, "publishing %s: %s", key, hvdd_client_error(s->kv));
    return 0;
}

/* Rank r's "address port" for tag, waiting for it until the deadline:
 * what o dials (its addr and name). */
static int
lookup(setup *s, int r, const char *tag, shake_out *o)
{
    char key[160], *data = NULL, host[INET6_ADDRSTRLEN], serv[16];
    char nonce[2 * SHAKE_NONCE + 1];
    size_t len;
    int rc;

    snprintf(key, sizeof(key), "%s-%d%s", s->g->prefix, r, tag);
    do { /* hvdd holds a request 30 s at most */
        int wait = ms_left(s) < 30000 ? ms_left(s) : 30000;
        rc = hvdd_client_get(s->kv, "ring", key, wait > 0 ? wait : 1, &data,
                             &len);
    } while (rc == HVDD_ENOTFOUND && ms_left(s) > 0);
    if (rc != 0)
        return fail(s, "rank %d's address (key %s): %s", r, key,
                    hvdd_client_error(s->kv));
    rc = sscanf(data, "%45s %15s %32s", host, serv, nonce);
    free(data);
    if (rc != 3 || strlen(nonce) != 2 * SHAKE_NONCE)
        return fail(s, "rank %d published no address", r);
    for (int i = 0; i < SHAKE_NONCE; i++) {
        unsigned v;
        if (sscanf(nonce + 2 * i, "%2x", &v) != 1)
            return fail(s, "rank %d published no address", r);
        o->ns[i] = (unsigned char)v;
    }
    o->peer = r;
    snprintf(o->addr, sizeof(o->addr), "%s %s", host, serv);
    snprintf(o->name, o->namelen, "rank %d (%s:%s)", r, host, serv);
    return 0;
}

/* The round of handshakes on listener (published as addr). */
static int
run_round(setup *s, const char *tag, int listener, const char *addr,
          const unsigned char *ns, shake_out *out, int nout, int accepts,
          int (*wanted)(void *, int), int *(*slot)(void *, int), void *arg)
{
    shake_round r = {.g = s->g,
                     .secret = s->g->secret,
                     .tag = tag,
                     .listener = listener,
                     .addr = addr,
                     .ns = ns,
                     .out = out,
                     .nout = nout,
                     .accepts = accepts,
                     .wanted = wanted,
                     .slot = slot,
                     .arg = arg,
                     .deadline_ms = ms_left(s),
                     .loopback = s->loopback};

    return shake_run(&r, s->what, s->err, s->errlen);
}

static void
start(setup *s, tcp_ring *g, const char *what, char *err, size_t errlen)
{
    *s = (setup){.g = g, .what = what, .err = err, .errlen = errlen};
    s->deadline = hvd_clock_after(CLOCK_MONOTONIC, g->timeout_ms / 1000.0);
}

/* 1 when rank is neither g's rank nor a neighbour. */
static int
is_chord(const tcp_ring *g, int rank)
{
    int d = (rank - g->rank + g->size) % g->size;

    return d > 1 && d < g->size - 1;
}

static int
power_of_two(int d)
{
    return d > 0 && (d & (d - 1)) == 0;
}

/* A chord of the set: the relation is symmetric, as both ends must agree
 * on it. */
static int
in_set(const tcp_ring *g, ring_chords set, int rank)
{
    int d = (rank - g->rank + g->size) % g->size;

    return is_chord(g, rank) && (set == RING_CHORDS_ALL || power_of_two(d) ||
                                 power_of_two(g->size - d));
}

static int
left_of(const tcp_ring *g)
{
    return (g->rank + g->size - 1) % g->size;
}

/* What a round accepts: the left neighbour (when it makes the ring) and
 * the chords of its set from lower ranks. */
static int
accepts(void *arg, int rank)
{
    const setup *s = arg;

    if (s->with_ring && rank == left_of(s->g))
        return 1;
    return s->with_chords && rank < s->g->rank && in_set(s->g, s->set, rank);
}

static int *
slot_of(void *arg, int rank)
{
    setup *s = arg;

    return s->with_ring && rank == left_of(s->g) ? &s->g->left
                                                 : &s->g->chord[rank].fd;
}

/* The streams this round dials: the right neighbour, and the chords of
 * its set to higher ranks; each looked up in the store. */
static int
dial_list(setup *s, const char *tag, shake_out *out, int *n)
{
    tcp_ring *g = s->g;
    int r = 0;

    *n = 0;
    if (s->with_ring) {
        out[(*n)++] = (shake_out){.fd = &g->right,
                                  .name = g->right_name,
                                  .namelen = sizeof(g->right_name)};
        r = lookup(s, (g->rank + 1) % g->size, tag, &out[0]);
    }
    for (int k = g->rank + 1; r == 0 && s->with_chords && k < g->size; k++)
        if (in_set(g, s->set, k) && g->chord[k].fd < 0) {
            out[*n] = (shake_out){.fd = &g->chord[k].fd,
                                  .name = g->chord[k].name,
                                  .namelen = sizeof(g->chord[k].name)};
            r = lookup(s, k, tag, &out[(*n)++]);
        }
    return r;
}

/* One round: listen, publish, look up what to dial, and the handshakes of
 * every stream at once. The ring's round also makes the power-of-two
 * chords that coll_init's barrier needs: one round instead of two (each
 * handshake waits for the other end, which on busy cores is what a
 * round costs). */
static int
connect_round(setup *s)
{
    tcp_ring *g = s->g;
    shake_out *out = calloc((size_t)g->size + 1, sizeof(*out));
    int listener = -1, r, expect = 0, n = 0;
    char tag[32] = "", addr[96];
    unsigned char ns[SHAKE_NONCE];

    if (out == NULL)
        return fail(s, "out of memory");
    for (int k = 0; k < g->size; k++)
        expect += accepts(s, k) && *slot_of(s, k) < 0;
    /* a chord set has a key of its own per round: all ranks make the
     * same rounds */
    if (!s->with_ring)
        snprintf(tag, sizeof(tag), "-chords%d", ++g->chord_rounds);
    r = listen_and_publish(s, tag, &listener, addr, sizeof(addr), ns);
    if (r == 0)
        r = dial_list(s, tag, out, &n);
    if (r == 0)
        r = run_round(s, tag, listener, addr, ns, out, n, expect, accepts,
                      slot_of, s);
    for (int k = 0; r == 0 && s->with_chords && k < g->rank; k++)
        if (accepts(s, k) && k != left_of(g))
            snprintf(g->chord[k].name, sizeof(g->chord[k].name), "rank %d", k);
    if (listener >= 0)
        close(listener);
    free(out);
    return r;
}

/* The chord array, all -1, before the first set. */
static int
chord_table(tcp_ring *g)
{
    if (g->chord)
        return 0;
    if ((g->chord = calloc((size_t)g->size, sizeof(*g->chord))) == NULL)
        return COLL_ENOMEM;
    for (int k = 0; k < g->size; k++)
        g->chord[k].fd = -1;
    return 0;
}

int
ring_connect(tcp_ring *g, const char *what, char *err, size_t errlen)
{
    setup s;
    int r;

    if (chord_table(g) != 0)
        return COLL_ENOMEM;
    start(&s, g, what, err, errlen);
    s.with_ring = 1;
    /* with fewer than 4 ranks every other rank is a neighbour */
    s.with_chords = g->size >= 4;
    s.set = RING_CHORDS_POW2;
    if ((s.kv = g->open_store()) == NULL)
        return fail(&s, "no hvdd client (out of memory, or no rendezvous)");
    snprintf(g->left_name, sizeof(g->left_name), "rank %d", left_of(g));
    if ((r = connect_round(&s)) == 0)
        g->chords_made |= 1u << RING_CHORDS_POW2;
    hvdd_client_free(s.kv);
    return r;
}

int
ring_connect_chords(tcp_ring *g, ring_chords set, const char *what, char *err,
                    size_t errlen)
{
    setup s;
    int r;

    if (g->chords_made & (1u << set) ||
        g->chords_made & (1u << RING_CHORDS_ALL))
        return 0;
    if (chord_table(g) != 0)
        return COLL_ENOMEM;
    if (g->size < 4) { /* every other rank is a neighbour */
        g->chords_made |= 1u << set;
        return 0;
    }
    start(&s, g, what, err, errlen);
    s.with_chords = 1;
    s.set = set;
    if ((s.kv = g->open_store()) == NULL)
        return fail(&s, "no hvdd client (out of memory, or no rendezvous)");
    if ((r = connect_round(&s)) == 0)
        g->chords_made |= 1u << set;
    hvdd_client_free(s.kv);
    return r;
}

tcp_ring *
ring_new(const transport_spec *spec)
{
    tcp_ring *g = calloc(1, sizeof(*g));

    if (g == NULL)
        return NULL;
    snprintf(g->prefix, sizeof(g->prefix), "%s", spec->prefix);
    snprintf(g->iface, sizeof(g->iface), "%s", spec->iface);
    snprintf(g->secret, sizeof(g->secret), "%s", spec->secret);
    g->open_store = spec->open_store;
    g->rank = spec->rank;
    g->size = spec->size;
    g->timeout_ms = spec->timeout_ms;
    g->spin_us = spec->cpu_each ? RING_SPIN_US : RING_YIELD_US;
    g->yields = !spec->cpu_each;
    g->left = g->right = -1;
    return g;
}

void
ring_break(tcp_ring *g)
{
    if (g->left >= 0)
        close(g->left);
    if (g->right >= 0)
        close(g->right);
    g->left = g->right = -1;
    for (int k = 0; g->chord && k < g->size; k++)
        if (g->chord[k].fd >= 0) {
            close(g->chord[k].fd);
            g->chord[k].fd = -1;
        }
    g->broken = 1;
}

void
ring_free(tcp_ring *g)
{
    if (g == NULL)
        return;
    ring_break(g);
    explicit_bzero(g->secret, sizeof(g->secret));
    free(g->chord);
    free(g->segment);
    free(g);
}
