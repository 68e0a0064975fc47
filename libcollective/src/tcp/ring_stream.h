/* The TCP ring's streaming engine (ring_stream.c), shared by the ring's
 * collectives: a buffer made of pieces (the requests of a fused group,
 * or one buffer), cut into one block per rank, and the step in which a
 * block goes to the right while another comes from the left. Private to
 * libcollective. */
#ifndef COLL_RING_STREAM_H
#define COLL_RING_STREAM_H

#include <stddef.h>

#include "collective.h"
#include "tcp_ring.h"

/* What is received before it is reduced, and the most one send takes:
 * it stays in a core's L2. Of 64 KiB .. 16 MiB it was the fastest for 2
 * ranks moving 102 MB with the kernel's default socket settings (about
 * 60 ms; 1 MiB: 80, 16 MiB: 105); with the ring's settings 128 KiB to
 * 1 MiB measure the same. */
#define RING_SEGMENT (256u << 10)

typedef struct {
    const ring_piece *piece;
    int n;
    size_t *start;    /* n + 1: piece k's first byte in the whole */
    size_t *block_at; /* size + 1: block k's first byte; the caller fills */
    size_t es;        /* reductions go by whole elements of es bytes */
    const char *what; /* the operation, for errors */
} ring_buf;

enum ring_side { RING_SEND_SIDE, RING_RECV_SIDE };

/* One step: bytes [out, out + out_len) of the out side go right while
 * [in, in + in_len) of the recv side come from the left (ring_step_blocks
 * sets them to blocks). With reduce, the incoming bytes become this
 * rank's send side op the received ones (with theirs_first, the received
 * op the send side's; and, with scale, are divided by the ring's size).
 * With forward (the same range in and out), a byte goes right only once
 * it has come in: a chain. */
typedef struct {
    enum ring_side out_side;
    size_t out, out_len, in, in_len;
    int reduce, scale, forward, theirs_first;
    coll_dtype dt;
    coll_op op;
} ring_step;

/* Sets s's ranges to blocks out_block and in_block (taken mod size). */
void ring_step_blocks(const tcp_ring *g, const ring_buf *b, ring_step *s,
                      int out_block, int in_block);
/* 0 or COLL_ENOMEM; ring_buf_release frees what it allocated. */
int ring_buf_init(ring_buf *b, const ring_piece *piece, int n, size_t es,
                  int size, const char *what);
void ring_buf_release(ring_buf *b);
/* 0, or COLL_ETRANSPORT with the peer named in err. */
int ring_run_step(tcp_ring *g, const ring_buf *b, const ring_step *s, char *err,
                  size_t errlen);
/* The same with "right" and "left" standing for l's streams (which may
 * be one stream, both ways): alltoall's steps go to other ranks. */
typedef struct {
    int out, in;
    const char *out_name, *in_name;
} ring_link;
int ring_run_step_on(tcp_ring *g, const ring_link *l, const ring_buf *b,
                     const ring_step *s, char *err, size_t errlen);
/* The streams out to rank `to` and in from rank `from`: a neighbour's
 * ring stream, either way (rank + 1 on the right stream, rank - 1 back
 * along the left one: the ring's streams carry nothing backwards
 * otherwise; on 2 ranks out goes right and in comes from the left), any
 * other rank's chord (connected before). */
void ring_link_between(const tcp_ring *g, int to, int from, ring_link *l);
/* One step with one peer, both ways on the stream between them. */
int ring_step_with(tcp_ring *g, int peer, const ring_buf *b, const ring_step *s,
                   char *err, size_t errlen);
/* Before a collective: connects at first use, refuses a broken ring. */
int ring_begin(tcp_ring *g, const char *what, char *err, size_t errlen);
/* The same, then the chords of set (connected at their first use). */
int ring_begin_chords(tcp_ring *g, ring_chords set, const char *what, char *err,
                      size_t errlen);
/* After one: breaks the ring after a transport failure; returns r. */
int ring_end(tcp_ring *g, int r);
/* size - 1 steps of whole blocks going round, block first - k out and
 * first - k - 1 in at step k: afterwards every rank has every block
 * (ring_allreduce.c). */
int ring_allgather_steps(tcp_ring *g, const ring_buf *b, int first, char *err,
                         size_t errlen);
/* size - 1 steps of whole blocks reduced on their way round, block
 * first - k out (this rank's send side at k = 0) and first - k - 1 in at
 * step k: afterwards block first + 1 is whole here, divided for avg
 * (ring_allreduce.c). */
int ring_reduce_steps(tcp_ring *g, const ring_buf *b, int first, coll_dtype dt,
                      coll_op op, char *err, size_t errlen);

#endif
