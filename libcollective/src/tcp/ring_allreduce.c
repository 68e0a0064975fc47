/* The ring allreduce: a reduce-scatter, then an allgather, each of
 * size - 1 steps (ring_stream.c). The buffer is a list of pieces (the
 * fused requests, or one buffer) seen as one: bytes go straight from and
 * to the pieces, so fusing copies nothing. Received data is reduced
 * RING_SEGMENT bytes at a time, while it is in cache, and avg's division
 * is done there too, on the step that completes a block. A large buffer
 * goes in chunks of RING_CHUNK_BLOCK bytes per rank, one after another,
 * each a whole reduce-scatter and allgather: a block reduced in the first
 * half is still in cache when it goes out in the second. Up to
 * RING_DOUBLING_BYTES, recursive doubling takes fewer steps
 * (ring_doubling.c): fused groups that small are packed for it. */
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"
#include "ring_stream.h"

/* The ResNet-50 set fused (tests/bench/fusion), medians of 8 steps in
 * turns, 5 pairs: 4 ranks 113-119 ms against 137-139 unchunked (1 MiB:
 * 128-135, 2 MiB: 110-122); 2 ranks unchanged (49-55 against 51-53), as
 * is a single 64 MiB buffer within the noise. */
#define RING_CHUNK_BLOCK (512u << 10)

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

int
ring_reduce_steps(tcp_ring *g, const ring_buf *b, int first, coll_dtype dt,
                  coll_op op, char *err, size_t errlen)
{
    ring_step s = {
        .reduce = 1, .dt = dt, .op = op == COLL_OP_AVG ? COLL_OP_SUM : op};
    int r = 0;

    for (int k = 0; r == 0 && k < g->size - 1; k++) {
        s.out_side = k ? RING_RECV_SIDE : RING_SEND_SIDE;
        ring_step_blocks(g, b, &s, first - k, first - k - 1);
        s.scale = op == COLL_OP_AVG && k == g->size - 2;
        r = ring_run_step(g, b, &s, err, errlen);
    }
    return r;
}

/* reduce-scatter: block rank - k goes right (this rank's own data at
 * k = 0), block rank - k - 1 comes in and takes this rank's part;
 * afterwards block rank + 1 is whole here (and divided, for avg) */
static int
allreduce_steps(tcp_ring *g, const ring_buf *b, coll_dtype dt, coll_op op,
                char *err, size_t errlen)
{
    int r = ring_reduce_steps(g, b, g->rank, dt, op, err, errlen);

    return r ? r : ring_allgather_steps(g, b, g->rank + 1, err, errlen);
}

/* A fused group small enough for recursive doubling: packed into one
 * buffer (at most RING_DOUBLING_BYTES) and unpacked after. */
static int
doubling_packed(tcp_ring *g, const ring_piece *piece, int n, size_t count,
                coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    size_t es = coll_dtype_size(dt), at = 0;
    char *buf = malloc(count * es + 1);
    int r;

    if (buf == NULL)
        return COLL_ENOMEM;
    for (int k = 0; k < n; at += piece[k++].count * es)
        if (piece[k].count)
            memcpy(buf + at, piece[k].send, piece[k].count * es);
    r = ring_allreduce_doubling(g, buf, buf, count, dt, op, err, errlen);
    at = 0;
    for (int k = 0; r == 0 && k < n; at += piece[k++].count * es)
        if (piece[k].count)
            memcpy(piece[k].recv, buf + at, piece[k].count * es);
    free(buf);
    return r;
}

int
ring_allreduce_pieces(tcp_ring *g, const ring_piece *piece, int n,
                      coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    size_t es = coll_dtype_size(dt), count = 0, len, chunk;
    ring_buf b;
    int r;

    for (int k = 0; k < n; k++)
        count += piece[k].count;
    if (count && count * es <= RING_DOUBLING_BYTES)
        return n == 1
                   ? ring_allreduce_doubling(g, piece[0].send, piece[0].recv,
                                             count, dt, op, err, errlen)
                   : doubling_packed(g, piece, n, count, dt, op, err, errlen);
    if (ring_buf_init(&b, piece, n, es, g->size, "allreduce") != 0)
        return COLL_ENOMEM;
    chunk = RING_CHUNK_BLOCK * (size_t)g->size / es;
    r = ring_begin(g, b.what, err, errlen);
    for (size_t at = 0; r == 0 && at < count; at += chunk) {
        size_t m = count - at < chunk ? count - at : chunk;
        for (int k = 0; k < g->size; k++)
            b.block_at[k] = (at + elem_block_start(m, g->size, k, &len)) * es;
        b.block_at[g->size] = (at + m) * es;
        r = allreduce_steps(g, &b, dt, op, err, errlen);
    }
    ring_buf_release(&b);
    return ring_end(g, r);
}

int
ring_allreduce(tcp_ring *g, const void *send, void *recv, size_t count,
               coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    ring_piece p = {send, recv, count};

    return ring_allreduce_pieces(g, &p, 1, dt, op, err, errlen);
}
