/* Reducescatter on the TCP ring: the reduce-scatter half of the ring
 * allreduce, its blocks shifted by one so that rank r ends with block r.
 * Each block comes in once and goes on at the next step, so two blocks'
 * room (alternating) holds the partial sums; the last one lands in the
 * caller's recv. */
#include <stdlib.h>

#include "elementwise.h"
#include "ring_stream.h"

int
ring_reducescatter(tcp_ring *g, const void *send, void *recv, size_t count,
                   coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    size_t es = coll_dtype_size(dt), len, most = count / (size_t)g->size + 1;
    ring_piece *piece = malloc(sizeof(*piece) * (size_t)g->size);
    char *room = malloc(2 * most * es);
    ring_buf b;
    int r = COLL_ENOMEM;

    /* piece k is block k: from send; into recv for this rank's block, else
     * into the room of the step it comes in at (k = rank - 2 - step) */
    for (int k = 0; piece && room && k < g->size; k++) {
        size_t at = elem_block_start(count, g->size, k, &len);
        int step = (g->rank - 2 - k + 2 * g->size) % g->size;
        piece[k] = (ring_piece){
            (const char *)send + at * es,
            k == g->rank ? recv : room + (size_t)(step % 2) * most * es, len};
    }
    if (piece && room &&
        ring_buf_init(&b, piece, g->size, es, g->size, "reducescatter") == 0) {
        for (int k = 0; k < g->size; k++)
            b.block_at[k + 1] = b.start[k + 1];
        /* block rank - 1 - k goes right (this rank's own data at k =
         * 0), block rank - 2 - k comes in; the last is block rank */
        if ((r = ring_begin(g, b.what, err, errlen)) == 0)
            r = ring_reduce_steps(g, &b, g->rank - 1, dt, op, err, errlen);
        ring_buf_release(&b);
        r = ring_end(g, r);
    }
    free(piece);
    free(room);
    return r;
}
