/* Allgathers on the TCP ring: size - 1 steps, each a send and a receive
 * made in this thread, every rank sending each block once: for the data
 * of allgather(v) above RING_BRUCK_BYTES. Below it, and for the control
 * exchanges, ring_bruck.c's log2(size) steps. */
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"
#include "ring_stream.h"

int
ring_allgatherv(tcp_ring *g, const void *mine, void *all, const size_t *bytes,
                const char *what, char *err, size_t errlen)
{
    ring_piece whole = {all, all, 0};
    ring_buf b;
    int r;

    for (int k = 0; k < g->size; k++)
        whole.count += bytes[k];
    if (whole.count <= RING_BRUCK_BYTES)
        return ring_bruck_allgatherv(g, mine, all, bytes, what, err, errlen);
    if (ring_buf_init(&b, &whole, 1, 1, g->size, what) != 0)
        return COLL_ENOMEM;
    for (int k = 0; k < g->size; k++)
        b.block_at[k + 1] = b.block_at[k] + bytes[k];
    if (mine && bytes[g->rank]) /* mine may lie inside all */
        memmove((char *)all + b.block_at[g->rank], mine, bytes[g->rank]);
    if ((r = ring_begin(g, what, err, errlen)) == 0)
        r = ring_allgather_steps(g, &b, g->rank, err, errlen);
    ring_buf_release(&b);
    return ring_end(g, r);
}
