#include "gate.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hmap.h"

/* One descriptor number's connection, from accept to close. */
typedef struct slot {
    char addr[INET6_ADDRSTRLEN + 8]; /* "": no connection */
    uint64_t gen;                    /* which connection of this number it is */
    double deadline; /* for its headers; 0 while a request is in */
} slot;

struct hvdd_gate {
    pthread_mutex_t mu;
    slot *slots;
    int nfds;
    unsigned cap, per_addr, live;
    double header_s;
    uint64_t gen;
    hmap by_addr; /* address -> its count, as a pointer-sized integer */
};

hvdd_gate *
hvdd_gate_new(unsigned cap, unsigned per_addr, double header_s, int nfds)
{
    hvdd_gate *g = calloc(1, sizeof(*g));

    if (g == NULL ||
        (g->slots = calloc((size_t)nfds, sizeof(*g->slots))) == NULL) {
        free(g);
        return NULL;
    }
    pthread_mutex_init(&g->mu, NULL);
    hvdd_hmap_init(&g->by_addr);
    g->nfds = nfds;
    g->cap = cap;
    g->per_addr = per_addr;
    g->header_s = header_s;
    return g;
}

void
hvdd_gate_free(hvdd_gate *g)
{
    if (g == NULL)
        return;
    hvdd_hmap_release(&g->by_addr, NULL);
    pthread_mutex_destroy(&g->mu);
    free(g->slots);
    free(g);
}

static uintptr_t
count_of(hvdd_gate *g, const char *addr)
{
    return (uintptr_t)hvdd_hmap_get(&g->by_addr, addr);
}

/* Changes addr's count by one way or the other; 0 or -1 (no memory). */
static int
count(hvdd_gate *g, const char *addr, int up)
{
    uintptr_t n = count_of(g, addr) + (up ? 1 : (uintptr_t)-1);

    if (n == 0) {
        hvdd_hmap_remove(&g->by_addr, addr);
        return 0;
    }
    return hvdd_hmap_put(&g->by_addr, addr, (void *)n, NULL);
}

/* Forgets the connection in slot fd (under the lock). */
static void
forget(hvdd_gate *g, int fd)
{
    slot *s = &g->slots[fd];

    if (s->addr[0] == '\0')
        return;
    count(g, s->addr, 0);
    g->live--;
    s->addr[0] = '\0';
    s->deadline = 0;
}

int
hvdd_gate_admit(hvdd_gate *g, int fd, const char *addr, double now)
{
    int in = 0;

    if (fd < 0 || fd >= g->nfds)
        return 0;
    pthread_mutex_lock(&g->mu);
    /* a number libmicrohttpd closed without telling (it never started) */
    forget(g, fd);
    if (g->live < g->cap && count_of(g, addr) < g->per_addr &&
        count(g, addr, 1) == 0) {
        slot *s = &g->slots[fd];
        snprintf(s->addr, sizeof(s->addr), "%s", addr);
        s->gen = ++g->gen;
        s->deadline = now + g->header_s;
        g->live++;
        in = 1;
    }
    pthread_mutex_unlock(&g->mu);
    return in;
}

void
hvdd_gate_drop(hvdd_gate *g, int fd)
{
    if (fd < 0 || fd >= g->nfds)
        return;
    pthread_mutex_lock(&g->mu);
    forget(g, fd);
    pthread_mutex_unlock(&g->mu);
}

uintptr_t
hvdd_gate_started(hvdd_gate *g, int fd)
{
    uintptr_t ticket = 0;

    pthread_mutex_lock(&g->mu);
    if (fd >= 0 && fd < g->nfds && g->slots[fd].addr[0])
        ticket = (uintptr_t)(g->slots[fd].gen << 20 | (uint64_t)fd);
    pthread_mutex_unlock(&g->mu);
    return ticket;
}

void
hvdd_gate_closed(hvdd_gate *g, uintptr_t ticket)
{
    int fd = (int)(ticket & ((1u << 20) - 1));

    if (ticket == 0 || fd >= g->nfds)
        return;
    pthread_mutex_lock(&g->mu);
    /* the number may already hold a newer connection: only its own */
    if (g->slots[fd].addr[0] && g->slots[fd].gen == (uint64_t)ticket >> 20)
        forget(g, fd);
    pthread_mutex_unlock(&g->mu);
}

static void
set_deadline(hvdd_gate *g, int fd, double when)
{
    if (fd < 0 || fd >= g->nfds)
        return;
    pthread_mutex_lock(&g->mu);
    if (g->slots[fd].addr[0])
        g->slots[fd].deadline = when;
    pthread_mutex_unlock(&g->mu);
}

void
hvdd_gate_headers_in(hvdd_gate *g, int fd)
{
    set_deadline(g, fd, 0);
}

void
hvdd_gate_request_done(hvdd_gate *g, int fd, double now)
{
    set_deadline(g, fd, now + g->header_s);
}

int
hvdd_gate_expire(hvdd_gate *g, double now)
{
    int n = 0;

    pthread_mutex_lock(&g->mu);
    for (int fd = 0; fd < g->nfds; fd++) {
        slot *s = &g->slots[fd];
        if (s->addr[0] && s->deadline > 0 && s->deadline <= now) {
            /* libmicrohttpd sees the end and closes it */
            shutdown(fd, SHUT_RDWR);
            s->deadline = 0;
            n++;
        }
    }
    pthread_mutex_unlock(&g->mu);
    return n;
}

unsigned
hvdd_gate_count(hvdd_gate *g, const char *addr)
{
    unsigned n;

    pthread_mutex_lock(&g->mu);
    n = addr ? (unsigned)count_of(g, addr) : g->live;
    pthread_mutex_unlock(&g->mu);
    return n;
}
