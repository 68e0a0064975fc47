/* The native TCP ring as a transport (transport.h): every operation on
 * the ring's own streams and chords, but alltoall(v) beyond mesh_ranks
 * ranks, which a Gloo transport beside it carries (connected at its
 * first use, by every rank at the same call). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_ring.h"
#include "transport.h"

typedef struct tcp_transport {
    transport base;
    tcp_ring *ring;
    transport_spec spec;  /* for the Gloo transport beyond mesh_ranks */
    transport *beyond;    /* that transport, once needed */
    int beyond_connected; /* it joined the other ranks */
} tcp_transport;

static tcp_ring *
ring_of(transport *t)
{
    return ((tcp_transport *)t)->ring;
}

static int
tt_connect(transport *t, const char *what, char *err, size_t errlen)
{
    return ring_connect(ring_of(t), what, err, errlen);
}

/* In log2(size) steps on the ring's streams and power-of-two chords
 * (ring_bruck_allgatherv), whatever the size; whole slots (used is not
 * looked at). */
static int
tt_exchange(transport *t, void *all, size_t bytes, size_t used,
            const char *what, char *err, size_t errlen)
{
    size_t *each = transport_each(t->size, bytes);
    int r;

    if (each == NULL)
        return COLL_ENOMEM;
    r = ring_bruck_allgatherv(ring_of(t), NULL, all, each, what, err, errlen);
    free(each);
    return r;
}

static int
tt_allreduce(transport *t, const transport_piece *piece, int n, coll_dtype dt,
             coll_op op, char *err, size_t errlen)
{
    return ring_allreduce_pieces(ring_of(t), piece, n, dt, op, err, errlen);
}

static int
tt_allgatherv(transport *t, const void *mine, void *all, const size_t *bytes,
              const char *what, char *err, size_t errlen)
{
    return ring_allgatherv(ring_of(t), mine, all, bytes, what, err, errlen);
}

static int
tt_broadcast(transport *t, void *buf, size_t bytes, int root, char *err,
             size_t errlen)
{
    return ring_broadcast(ring_of(t), buf, bytes, root, err, errlen);
}

static int
tt_reducescatter(transport *t, const void *send, void *recv, size_t count,
                 coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    return ring_reducescatter(ring_of(t), send, recv, count, dt, op, err,
                              errlen);
}

/* Gloo's full mesh took 18 ms to connect on 2 ranks, 35 on 4, 97 on 8
 * and 588 on 32: it is made only for alltoall(v) beyond mesh_ranks. */
static int
beyond_mesh(tcp_transport *tt, const char *what, char *err, size_t errlen)
{
    int r;

    if (tt->beyond_connected)
        return 0;
    if (tt->beyond == NULL) {
        transport_spec s = tt->spec;
        /* the ring's keys are shorter: this fits */
        snprintf(s.prefix, sizeof(s.prefix), "%.80s.mesh", tt->spec.prefix);
        if ((tt->beyond = gloo_transport_new(&s)) == NULL)
            return COLL_ENOMEM;
    }
    r = tt->beyond->ops->connect(tt->beyond, what, err, errlen);
    tt->beyond_connected = r == 0;
    return r;
}

static int
tt_alltoallv(transport *t, const void *send, const size_t *send_bytes,
             void *recv, const size_t *recv_bytes, const char *what, char *err,
             size_t errlen)
{
    tcp_transport *tt = (tcp_transport *)t;
    int r;

    if (t->size <= tt->spec.mesh_ranks)
        return ring_alltoallv(tt->ring, send, send_bytes, recv, recv_bytes,
                              what, err, errlen);
    if ((r = beyond_mesh(tt, what, err, errlen)) != 0)
        return r;
    return tt->beyond->ops->alltoallv(tt->beyond, send, send_bytes, recv,
                                      recv_bytes, what, err, errlen);
}

static int
tt_barrier(transport *t, const char *what, char *err, size_t errlen)
{
    return transport_exchange_barrier(t, what, err, errlen);
}

static void
tt_free(transport *t)
{
    tcp_transport *tt = (tcp_transport *)t;

    transport_free(tt->beyond);
    ring_free(tt->ring);
    explicit_bzero(&tt->spec, sizeof(tt->spec));
    free(tt);
}

static const transport_ops tcp_ops = {
    .name = "tcp",
    .connect = tt_connect,
    .exchange = tt_exchange,
    .allreduce = tt_allreduce,
    .allgatherv = tt_allgatherv,
    .broadcast = tt_broadcast,
    .reducescatter = tt_reducescatter,
    .alltoallv = tt_alltoallv,
    .barrier = tt_barrier,
    .free = tt_free,
};

transport *
tcp_transport_new(const transport_spec *spec)
{
    tcp_transport *tt = calloc(1, sizeof(*tt));

    if (tt == NULL || (tt->ring = ring_new(spec)) == NULL) {
        free(tt);
        return NULL;
    }
    tt->base = (transport){&tcp_ops, spec->rank, spec->size};
    tt->spec = *spec;
    return &tt->base;
}
