/* A ring of plain TCP streams (Gloo's mesh is made beside it only when
 * needed): rank r holds one stream to rank r+1 (its right) and one from
 * rank r-1 (its left). It carries allreduce, allgather(v), broadcast and
 * reducescatter. Chords,
 * streams to ranks that are not neighbours, are added where needed: at
 * power-of-two distances for the small control exchanges (argument
 * checks, barrier, fusion cycle: ring_bruck.c), to every rank for
 * alltoall(v) up to mesh_ranks ranks (Gloo keeps it beyond). Why
 * not Gloo's pairs: each of their receives is read on Gloo's epoll thread
 * and handed to the caller, and each send waits for the receiver's
 * notice; here that moved about half of what plain sockets move
 * (tests/bench/fusion prints both) and cost small operations on busy
 * cores milliseconds. Private to libcollective. */
#ifndef COLL_TCP_RING_H
#define COLL_TCP_RING_H

#include <stddef.h>

#include "collective.h"
#include "hvdd_client.h"
#include "transport.h"

/* A stream to a rank that is not a neighbour: a chord. */
typedef struct {
    int fd; /* -1: none */
    char name[96];
} ring_peer;

/* How a rank retries a stuck stream before it sleeps in poll
 * (transport_spec's cpu_each): busy for 50 us when it has a CPU of its own,
 * else for up to 500 us, yielding the CPU before each retry (on 4 ranks over 2
 * CPUs, 200 and 1000 us measured the same). */
#define RING_SPIN_US 50
#define RING_YIELD_US 500

typedef struct tcp_ring {
    char prefix[96];  /* of its keys in hvdd's store (scope "ring") */
    char iface[64];   /* where it listens: the interface hvdd chose */
    char secret[160]; /* the job token: each stream's handshake */
    hvdd_client *(*open_store)(void); /* for each set-up */
    int rank, size;
    int timeout_ms; /* the longest wait without progress */
    int spin_us;    /* how long to retry before sleeping in poll */
    int yields;     /* each retry first yields the CPU */
    int left, right;
    int broken; /* a failure closed the streams: no second connect */
    char left_name[96], right_name[96]; /* "rank 3 (10.0.0.2:41234)" */
    char *segment;                      /* RING_SEGMENT bytes to reduce in */
    ring_peer *chord;     /* size entries, once connected; NULL before */
    unsigned chords_made; /* bit 1 << set: ring_connect_chords(set) done */
    int chord_rounds;     /* ring_connect_chords calls so far */
} tcp_ring;

/* No I/O: every rank connects (ring_connect) at the same point of its
 * sequence, or at the first collective on the ring. NULL when out of
 * memory. spec->cpu_each: spin for RING_SPIN_US, else yield for up to
 * RING_YIELD_US. */
tcp_ring *ring_new(const transport_spec *spec);
void ring_free(tcp_ring *g);
/* Closes its streams and chords after a failure, so that the peers fail
 * at once too (and theirs after them) instead of waiting out the
 * timeout. */
void ring_break(tcp_ring *g);

/* Listens on HOROVOD_GLOO_IFACE's address, publishes it in hvdd's store,
 * connects to the right and accepts the left (ring_connect.c). what: the
 * collective that connects, for errors. 0, COLL_EIDENTITY when the
 * interface has no usable address, else COLL_ETRANSPORT. */
int ring_connect(tcp_ring *g, const char *what, char *err, size_t errlen);

/* Chords: streams to ranks that are not neighbours. The small
 * allgathers (ring_bruck_allgatherv) need those at a power-of-two distance
 * either way round, alltoall all of them. Every rank connects a set at
 * the same point of its sequence (its first use of it), once; with
 * fewer than 4 ranks there are none. */
typedef enum { RING_CHORDS_POW2, RING_CHORDS_ALL } ring_chords;
int ring_connect_chords(tcp_ring *g, ring_chords set, const char *what,
                        char *err, size_t errlen);

/* recv = op over every rank's send (send may be recv; avg divides),
 * connecting first if needed (ring_allreduce.c; up to RING_DOUBLING_BYTES
 * by recursive doubling). 0, or COLL_ETRANSPORT
 * with the failing peer named in err. */
int ring_allreduce(tcp_ring *g, const void *send, void *recv, size_t count,
                   coll_dtype dt, coll_op op, char *err, size_t errlen);

/* The same by recursive doubling (ring_doubling.c): log2(size) steps of
 * the whole buffer, for up to RING_DOUBLING_BYTES. coll_bench, µs, ring
 * against doubling, 2 cores: 16 KiB on 2 ranks 27.7 / 23.9, 4: 122.5 /
 * 98.9, 8: 523.6 / 223.5, 16: 1815 / 743; 64 KiB about even (16 ranks
 * 1631 / 1547); 128 KiB the ring ahead (8 ranks 767 / 916). */
#define RING_DOUBLING_BYTES (64u << 10)
int ring_allreduce_doubling(tcp_ring *g, const void *send, void *recv,
                            size_t count, coll_dtype dt, coll_op op, char *err,
                            size_t errlen);

/* The same over n pieces taken as one buffer (a fused group): no copy
 * into a fusion buffer. */
typedef transport_piece ring_piece;
int ring_allreduce_pieces(tcp_ring *g, const ring_piece *piece, int n,
                          coll_dtype dt, coll_op op, char *err, size_t errlen);

/* recv block k (recv_bytes[k] bytes, in rank order) = rank k's block for
 * this rank; send block k (send_bytes[k]) goes to rank k
 * (ring_alltoall.c). Each pair must agree on its sizes (the caller
 * checked). send and recv must not overlap. */
int ring_alltoallv(tcp_ring *g, const void *send, const size_t *send_bytes,
                   void *recv, const size_t *recv_bytes, const char *what,
                   char *err, size_t errlen);

/* An allgatherv (as ring_allgatherv below) in log2(size) steps on the
 * ring's streams and power-of-two chords, for small slots
 * (ring_bruck.c): the control exchanges. */
int ring_bruck_allgatherv(tcp_ring *g, const void *mine, void *all,
                          const size_t *bytes, const char *what, char *err,
                          size_t errlen);

/* ring_allgatherv takes ring_bruck_allgatherv's log2(size) steps up to
 * this many bytes in all. coll_bench allgather, µs, ring against Bruck
 * (2 cores): 64 KiB on 4 ranks 136 / 84, on 8 411 / 224; 4 MiB on 8
 * ranks 4776 / 4447; 8 MiB on 8 ranks 9660 / 11171 (on 4 ranks Bruck
 * stayed ahead up to 64 MiB; on 2 they are one step, the same). */
#define RING_BRUCK_BYTES (4u << 20)

/* all gets one slot per rank in rank order (ring_allgather.c): this
 * rank's from mine (which may lie inside all), or, with mine NULL, as
 * the caller filled it in. bytes[k]: rank k's slot. what names the
 * operation in errors. */
int ring_allgatherv(tcp_ring *g, const void *mine, void *all,
                    const size_t *bytes, const char *what, char *err,
                    size_t errlen);
/* recv = block rank of op over every rank's send, blocks as
 * elem_block_start cuts them (ring_reducescatter.c; avg divides). */
int ring_reducescatter(tcp_ring *g, const void *send, void *recv, size_t count,
                       coll_dtype dt, coll_op op, char *err, size_t errlen);
/* Every rank's buf becomes root's (ring_broadcast.c): a binomial tree
 * (log2(size) steps) up to RING_TREE_BYTES, a chain round the ring
 * beyond. coll_bench broadcast, µs, chain against tree (2 cores): 16 KiB
 * on 4 ranks 43 / 37, 8: 124 / 114, 16: 663 / 410; 64 KiB on 16 ranks
 * 752 / 537; 256 KiB on 8 ranks 294 / 339. */
#define RING_TREE_BYTES (64u << 10)
int ring_broadcast(tcp_ring *g, void *buf, size_t bytes, int root, char *err,
                   size_t errlen);

#endif
