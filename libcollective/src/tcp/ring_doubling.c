/* Allreduce by recursive doubling, for buffers between what the argument
 * check carries and RING_DOUBLING_BYTES: log2(size) steps in which rank
 * r and rank r ^ d swap their whole partial results and both reduce
 * them, against the ring's 2 (size - 1) steps of a block each. With
 * more ranks than a power of two, each rank past it first hands its data
 * to the rank that many below and gets the result back at the end. The
 * partners are at power-of-two distances: the ring's streams and the
 * chords the control exchanges use. Both ends of a step reduce the same
 * two values in the same order, the lower rank's first: every op is
 * commutative in value but not always in bits (of two NaNs, a sum or a
 * MIN keeps one's payload; MIN and MAX of +0 and -0 keep one), and each
 * rank reducing its own first left partners with different bits. So
 * every rank ends with the same bits. */
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"
#include "ring_stream.h"

static int
steps(tcp_ring *g, char *scratch, void *recv, size_t bytes, coll_dtype dt,
      coll_op op, char *err, size_t errlen)
{
    int p2 = 1, rank = g->rank, r = 0;
    ring_piece buf[2] = {{scratch, recv, bytes / coll_dtype_size(dt)},
                         {recv, recv, bytes / coll_dtype_size(dt)}};
    ring_buf out_scratch, out_recv;
    ring_step s = {.out_side = RING_SEND_SIDE,
                   .dt = dt,
                   .op = op == COLL_OP_AVG ? COLL_OP_SUM : op};

    while (p2 * 2 <= g->size)
        p2 *= 2;
    if (ring_buf_init(&out_scratch, &buf[0], 1, coll_dtype_size(dt), g->size,
                      "allreduce") != 0)
        return COLL_ENOMEM;
    if (ring_buf_init(&out_recv, &buf[1], 1, coll_dtype_size(dt), g->size,
                      "allreduce") != 0) {
        ring_buf_release(&out_scratch);
        return COLL_ENOMEM;
    }
    /* the ranks past p2 hand their data down */
    if (rank >= p2) {
        s.out_len = bytes;
        r = ring_step_with(g, rank - p2, &out_recv, &s, err, errlen);
    } else if (rank + p2 < g->size) {
        s.in_len = bytes, s.reduce = 1;
        memcpy(scratch, recv, bytes);
        r = ring_step_with(g, rank + p2, &out_scratch, &s, err, errlen);
    }
    for (int d = 1; r == 0 && rank < p2 && d < p2; d *= 2) {
        s = (ring_step){.out_side = RING_SEND_SIDE,
                        .out_len = bytes,
                        .in_len = bytes,
                        .reduce = 1,
                        .scale = op == COLL_OP_AVG && d * 2 == p2,
                        .theirs_first = (rank ^ d) < rank,
                        .dt = dt,
                        .op = op == COLL_OP_AVG ? COLL_OP_SUM : op};
        memcpy(scratch, recv, bytes); /* what goes out, while recv changes */
        r = ring_step_with(g, rank ^ d, &out_scratch, &s, err, errlen);
    }
    /* and get the result back */
    s = (ring_step){.out_side = RING_RECV_SIDE, .dt = dt};
    if (r == 0 && rank >= p2) {
        s.in_len = bytes;
        r = ring_step_with(g, rank - p2, &out_recv, &s, err, errlen);
    } else if (r == 0 && rank + p2 < g->size) {
        s.out_len = bytes;
        r = ring_step_with(g, rank + p2, &out_recv, &s, err, errlen);
    }
    ring_buf_release(&out_scratch);
    ring_buf_release(&out_recv);
    return r;
}

int
ring_allreduce_doubling(tcp_ring *g, const void *send, void *recv, size_t count,
                        coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    size_t bytes = count * coll_dtype_size(dt);
    char *scratch = malloc(bytes ? bytes : 1);
    int r;

    if (scratch == NULL)
        return COLL_ENOMEM;
    if (send != recv)
        memcpy(recv, send, bytes);
    if ((r = ring_begin_chords(g, RING_CHORDS_POW2, "allreduce", err,
                               errlen)) == 0)
        r = steps(g, scratch, recv, bytes, dt, op, err, errlen);
    free(scratch);
    return ring_end(g, r);
}
