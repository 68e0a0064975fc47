/* The ring allreduce over the TCP ring: a reduce-scatter, then an
 * allgather, each of size - 1 steps in which every rank streams one block
 * to its right while it receives another from its left. The buffer is a
 * list of pieces (the fused requests, or one buffer) seen as one: bytes
 * go straight from and to the pieces, so fusing copies nothing. Received
 * data is reduced RING_SEGMENT bytes at a time, while it is in cache,
 * and avg's division is done there too, on the step that completes a
 * block. */
#include <errno.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "comm.h"
#include "tcp_ring.h"

/* What is received before it is reduced, and the most one send takes:
 * it stays in a core's L2. Of 64 KiB .. 16 MiB it was the fastest for 2
 * ranks moving 102 MB with the kernel's default socket settings (about
 * 60 ms; 1 MiB: 80, 16 MiB: 105); with the ring's settings 128 KiB to
 * 1 MiB measure the same. */
#define RING_SEGMENT (256u << 10)
/* Pieces one send or receive call gathers (small tensors are many). */
#define RING_IOV 64

/* The pieces as one buffer: start[k] is piece k's first byte in it. */
typedef struct {
    const ring_piece *piece;
    int n;
    size_t *start; /* n + 1 */
    size_t es;
} pieces;

enum side { SEND_SIDE, RECV_SIDE };

/* One step: bytes [out, out + out_len) of the out side go right while
 * [in, in + in_len) of the recv side come from the left. With reduce,
 * they become this rank's send side op the received bytes (and, with
 * scale, are divided by the ring's size). */
typedef struct {
    enum side out_side;
    size_t out, out_len;
    size_t in, in_len;
    int reduce, scale;
    coll_dtype dt;
    coll_op op;
} ring_step;

/* The piece holding byte at (< the whole's size): the last one starting
 * at or before it, which is never an empty one. */
static int
piece_at(const pieces *b, size_t at)
{
    int lo = 0, hi = b->n - 1;

    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (b->start[mid] <= at)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static char *
side_ptr(const ring_piece *p, enum side s)
{
    return s == SEND_SIDE ? (char *)p->send : (char *)p->recv;
}

/* Up to RING_IOV pieces' parts covering [at, at + len) of side s, at
 * most `most` bytes; returns how many. */
static int
gather(const pieces *b, enum side s, size_t at, size_t len, size_t most,
       struct iovec *iov)
{
    int n = 0;

    len = len < most ? len : most;
    for (int k = len ? piece_at(b, at) : b->n; n < RING_IOV && k < b->n && len;
         k++) {
        size_t off = at - b->start[k], take = b->start[k + 1] - at;
        if (take == 0)
            continue;
        take = take < len ? take : len;
        iov[n++] = (struct iovec){side_ptr(&b->piece[k], s) + off, take};
        at += take;
        len -= take;
    }
    return n;
}

/* recv side [at, at + len) = send side op segment, divided when scaled. */
static void
reduce_segment(const pieces *b, const ring_step *s, const char *segment,
               size_t at, size_t len, int size)
{
    struct iovec dst[RING_IOV], own[RING_IOV];

    while (len) {
        int n = gather(b, RECV_SIDE, at, len, len, dst);
        gather(b, SEND_SIDE, at, len, len, own);
        for (int k = 0; k < n; k++) {
            size_t count = dst[k].iov_len / b->es;
            comm_reduce_to(dst[k].iov_base, own[k].iov_base, segment, count,
                           s->dt, s->op);
            if (s->scale)
                comm_scale_avg(dst[k].iov_base, count, s->dt, size);
            segment += dst[k].iov_len;
            at += dst[k].iov_len;
            len -= dst[k].iov_len;
        }
    }
}

/* Sends what the right stream takes now: bytes sent, or -1 when it is
 * broken. */
static ssize_t
push(tcp_ring *g, const pieces *b, const ring_step *s, size_t *sent)
{
    struct iovec iov[RING_IOV];
    struct msghdr m = {.msg_iov = iov};
    ssize_t n;

    m.msg_iovlen = (size_t)gather(b, s->out_side, s->out + *sent,
                                  s->out_len - *sent, RING_SEGMENT, iov);
    if ((n = sendmsg(g->right, &m, MSG_DONTWAIT | MSG_NOSIGNAL)) > 0)
        *sent += (size_t)n;
    return n >= 0 ? n : errno == EAGAIN || errno == EINTR ? 0 : -1;
}

/* Receives what the left stream has now: straight into the pieces, or,
 * to reduce, into the segment, reduced when full. Bytes received, or -1
 * when the stream is broken or closed. */
static ssize_t
pull(tcp_ring *g, const pieces *b, const ring_step *s, size_t *got,
     size_t *held)
{
    struct iovec iov[RING_IOV];
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = 1};
    size_t want = s->in_len - *got;
    ssize_t n;

    if (s->reduce)
        iov[0] = (struct iovec){g->segment + *held, want < RING_SEGMENT - *held
                                                        ? want
                                                        : RING_SEGMENT - *held};
    else
        m.msg_iovlen =
            (size_t)gather(b, RECV_SIDE, s->in + *got, want, SIZE_MAX, iov);
    if ((n = recvmsg(g->left, &m, MSG_DONTWAIT)) == 0)
        return -1;
    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    *got += (size_t)n;
    if (s->reduce && (*held += (size_t)n) > 0 &&
        (*held == RING_SEGMENT || *got == s->in_len)) {
        reduce_segment(b, s, g->segment, s->in + *got - *held, *held, g->size);
        *held = 0;
    }
    return n;
}

static int
closed(const char *who, char *err, size_t errlen)
{
    snprintf(err, errlen, "allreduce: %s closed the connection", who);
    return COLL_ETRANSPORT;
}

/* Moves data while it moves and polls only when neither stream can (a
 * poll before every call cost about a fifth of the fused step). Sending
 * does not wait for receiving: with the ring's socket buffers, a limit of
 * 512 KiB ahead changed nothing on 2 ranks and cost 3 ranks 67 -> 83 ms,
 * 4 ranks 87 -> 119 ms (64 MiB, on 2 cores). */
static int
run_step(tcp_ring *g, const pieces *b, const ring_step *s, char *err,
         size_t errlen)
{
    size_t sent = 0, got = 0, held = 0;

    while (sent < s->out_len || got < s->in_len) {
        int to_send = sent < s->out_len;
        int to_get = got < s->in_len, n;
        ssize_t out = 0, in = 0;

        if (to_send && (out = push(g, b, s, &sent)) < 0)
            return closed(g->right_name, err, errlen);
        if (to_get && (in = pull(g, b, s, &got, &held)) < 0)
            return closed(g->left_name, err, errlen);
        if (out > 0 || in > 0)
            continue;
        struct pollfd p[2] = {{g->right, to_send ? POLLOUT : 0, 0},
                              {g->left, to_get ? POLLIN : 0, 0}};
        while ((n = poll(p, 2, g->timeout_ms)) < 0 && errno == EINTR)
            ;
        if (n <= 0) {
            snprintf(err, errlen,
                     "allreduce: no progress with %s or %s for %d s",
                     g->left_name, g->right_name, g->timeout_ms / 1000);
            return COLL_ETRANSPORT;
        }
    }
    return 0;
}

/* Where block k of the whole starts, in bytes, and its length. */
static size_t
block(const tcp_ring *g, const pieces *b, int k, size_t *len)
{
    size_t n, at = comm_block_start(b->start[b->n] / b->es, g->size,
                                    (k + g->size) % g->size, &n);

    *len = n * b->es;
    return at * b->es;
}

static int
ring_run(tcp_ring *g, const pieces *b, coll_dtype dt, coll_op op, char *err,
         size_t errlen)
{
    coll_op how = op == COLL_OP_AVG ? COLL_OP_SUM : op;
    ring_step s = {.dt = dt, .op = how};
    int r = 0;

    /* reduce-scatter: block rank - k goes right (this rank's own data at
     * k = 0), block rank - k - 1 comes in and takes this rank's part;
     * afterwards block rank + 1 is whole here (and divided, for avg) */
    s.reduce = 1;
    for (int k = 0; r == 0 && k < g->size - 1; k++) {
        s.out_side = k ? RECV_SIDE : SEND_SIDE;
        s.out = block(g, b, g->rank - k, &s.out_len);
        s.in = block(g, b, g->rank - k - 1, &s.in_len);
        s.scale = op == COLL_OP_AVG && k == g->size - 2;
        r = run_step(g, b, &s, err, errlen);
    }
    /* allgather: whole blocks go round, rank + 1 - k out, rank - k in */
    s.reduce = s.scale = 0;
    s.out_side = RECV_SIDE;
    for (int k = 0; r == 0 && k < g->size - 1; k++) {
        s.out = block(g, b, g->rank + 1 - k, &s.out_len);
        s.in = block(g, b, g->rank - k, &s.in_len);
        r = run_step(g, b, &s, err, errlen);
    }
    return r;
}

int
ring_allreduce_pieces(tcp_ring *g, const ring_piece *piece, int n,
                      coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    pieces b = {piece, n, calloc((size_t)n + 1, sizeof(size_t)),
                coll_dtype_size(dt)};
    int r = 0;

    if (b.start == NULL ||
        (g->segment == NULL && (g->segment = malloc(RING_SEGMENT)) == NULL)) {
        free(b.start);
        return COLL_ENOMEM;
    }
    for (int k = 0; k < n; k++)
        b.start[k + 1] = b.start[k] + piece[k].count * b.es;
    if (g->broken) {
        snprintf(err, errlen, "allreduce: the ring failed earlier");
        r = COLL_ETRANSPORT;
    } else if (g->left < 0 || g->right < 0) {
        r = ring_connect(g, err, errlen);
    }
    if (r == 0)
        r = ring_run(g, &b, dt, op, err, errlen);
    if (r == COLL_ETRANSPORT)
        ring_break(g);
    free(b.start);
    return r;
}

int
ring_allreduce(tcp_ring *g, const void *send, void *recv, size_t count,
               coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    ring_piece p = {send, recv, count};

    return ring_allreduce_pieces(g, &p, 1, dt, op, err, errlen);
}
