/* Broadcast on the TCP ring: a chain from the root round to the rank
 * before it, each rank passing on what it has received while the rest
 * still comes in, so a large buffer takes about the time of one hop
 * (Gloo's broadcast sends it from the root to each rank in turn). Up to
 * RING_TREE_BYTES, a binomial tree on the ring's streams and
 * power-of-two chords instead. */
#include "elementwise.h"
#include "ring_stream.h"

/* A binomial tree from the root: at step d (the highest power of two
 * below size first, then halving), each place that has the buffer (a
 * multiple of 2d) sends all of it to place + d; places are ranks counted
 * from the root. log2(size) steps to the chain's size - 1 hops. */
static int
tree(tcp_ring *g, const ring_buf *b, size_t bytes, int place, int root,
     char *err, size_t errlen)
{
    int p = g->size, top = 1, r = 0;

    while (top * 2 < p)
        top *= 2;
    for (int d = top; r == 0 && d >= 1; d /= 2) {
        ring_step s = {.out_side = RING_RECV_SIDE};
        int peer;
        if (place % (2 * d) == 0 && place + d < p) {
            s.out_len = bytes;
            peer = (place + d + root) % p;
        } else if (place % (2 * d) == d) {
            s.in_len = bytes;
            peer = (place - d + root) % p;
        } else {
            continue;
        }
        r = ring_step_with(g, peer, b, &s, err, errlen);
    }
    return r;
}

int
ring_broadcast(tcp_ring *g, void *buf, size_t bytes, int root, char *err,
               size_t errlen)
{
    ring_piece whole = {buf, buf, bytes};
    int place = (g->rank - root + g->size) % g->size; /* 0: the root */
    ring_step s = {.out_side = RING_RECV_SIDE,
                   .out_len = place < g->size - 1 ? bytes : 0,
                   .in_len = place > 0 ? bytes : 0,
                   .forward = place > 0};
    ring_buf b;
    int r;

    if (ring_buf_init(&b, &whole, 1, 1, g->size, "broadcast") != 0)
        return COLL_ENOMEM;
    if (bytes <= RING_TREE_BYTES) {
        if ((r = ring_begin_chords(g, RING_CHORDS_POW2, b.what, err, errlen)) ==
            0)
            r = tree(g, &b, bytes, place, root, err, errlen);
    } else if ((r = ring_begin(g, b.what, err, errlen)) == 0) {
        r = ring_run_step(g, &b, &s, err, errlen);
    }
    ring_buf_release(&b);
    return ring_end(g, r);
}
