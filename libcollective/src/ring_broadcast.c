/* Broadcast on the TCP ring: a chain from the root round to the rank
 * before it, each rank passing on what it has received while the rest
 * still comes in, so a large buffer takes about the time of one hop
 * (Gloo's broadcast sends it from the root to each rank in turn). */
#include "comm.h"
#include "ring_stream.h"

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
    if ((r = ring_begin(g, b.what, err, errlen)) == 0)
        r = ring_run_step(g, &b, &s, err, errlen);
    ring_buf_free(&b);
    return ring_end(g, r);
}
