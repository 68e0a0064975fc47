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

/* One step: block out_block (mod size) of the out side goes right while
 * block in_block of the recv side comes from the left. With reduce, the
 * incoming block becomes this rank's send side op the received bytes
 * (and, with scale, is divided by the ring's size). */
typedef struct {
    enum ring_side out_side;
    int out_block, in_block;
    int reduce, scale;
    coll_dtype dt;
    coll_op op;
    size_t out, out_len, in, in_len; /* bytes, set by ring_run_step */
} ring_step;

/* 0 or COLL_ENOMEM; ring_buf_free frees what it allocated. */
int ring_buf_init(ring_buf *b, const ring_piece *piece, int n, size_t es,
                  int size, const char *what);
void ring_buf_free(ring_buf *b);
/* 0, or COLL_ETRANSPORT with the peer named in err. */
int ring_run_step(tcp_ring *g, const ring_buf *b, ring_step *s, char *err,
                  size_t errlen);
/* Before a collective: connects at first use, refuses a broken ring. */
int ring_begin(tcp_ring *g, const char *what, char *err, size_t errlen);
/* After one: breaks the ring after a transport failure; returns r. */
int ring_end(tcp_ring *g, int r);
/* size - 1 steps of whole blocks going round, block first - k out and
 * first - k - 1 in at step k: afterwards every rank has every block
 * (ring_allreduce.c). */
int ring_allgather_steps(tcp_ring *g, const ring_buf *b, int first, char *err,
                         size_t errlen);

#endif
