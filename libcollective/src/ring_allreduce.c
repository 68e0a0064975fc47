/* The ring allreduce: a reduce-scatter, then an allgather, each of
 * size - 1 steps (ring_stream.c). The buffer is a list of pieces (the
 * fused requests, or one buffer) seen as one: bytes go straight from and
 * to the pieces, so fusing copies nothing. Received data is reduced
 * RING_SEGMENT bytes at a time, while it is in cache, and avg's division
 * is done there too, on the step that completes a block. */
#include "comm.h"
#include "ring_stream.h"

int
ring_allgather_steps(tcp_ring *g, const ring_buf *b, int first, char *err,
                     size_t errlen)
{
    ring_step s = {.out_side = RING_RECV_SIDE};
    int r = 0;

    for (int k = 0; r == 0 && k < g->size - 1; k++) {
        ring_step_blocks(g, b, &s, first - k, first - k - 1);
        r = ring_run_step(g, b, &s, err, errlen);
    }
    return r;
}

static int
allreduce_steps(tcp_ring *g, const ring_buf *b, coll_dtype dt, coll_op op,
                char *err, size_t errlen)
{
    ring_step s = {
        .reduce = 1, .dt = dt, .op = op == COLL_OP_AVG ? COLL_OP_SUM : op};
    int r = 0;

    /* reduce-scatter: block rank - k goes right (this rank's own data at
     * k = 0), block rank - k - 1 comes in and takes this rank's part;
     * afterwards block rank + 1 is whole here (and divided, for avg) */
    for (int k = 0; r == 0 && k < g->size - 1; k++) {
        s.out_side = k ? RING_RECV_SIDE : RING_SEND_SIDE;
        ring_step_blocks(g, b, &s, g->rank - k, g->rank - k - 1);
        s.scale = op == COLL_OP_AVG && k == g->size - 2;
        r = ring_run_step(g, b, &s, err, errlen);
    }
    return r ? r : ring_allgather_steps(g, b, g->rank + 1, err, errlen);
}

int
ring_allreduce_pieces(tcp_ring *g, const ring_piece *piece, int n,
                      coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    size_t es = coll_dtype_size(dt), count = 0, len;
    ring_buf b;
    int r;

    if (ring_buf_init(&b, piece, n, es, g->size, "allreduce") != 0)
        return COLL_ENOMEM;
    for (int k = 0; k < n; k++)
        count += piece[k].count;
    for (int k = 0; k < g->size; k++)
        b.block_at[k] = comm_block_start(count, g->size, k, &len) * es;
    b.block_at[g->size] = count * es;
    if ((r = ring_begin(g, b.what, err, errlen)) == 0)
        r = allreduce_steps(g, &b, dt, op, err, errlen);
    ring_buf_free(&b);
    return ring_end(g, r);
}

int
ring_allreduce(tcp_ring *g, const void *send, void *recv, size_t count,
               coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    ring_piece p = {send, recv, count};

    return ring_allreduce_pieces(g, &p, 1, dt, op, err, errlen);
}
