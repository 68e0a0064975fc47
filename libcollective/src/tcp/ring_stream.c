/* The TCP ring's streaming engine: the pieces seen as one buffer, and
 * the step in which one block streams to the right while another comes
 * from the left, in this thread, without copies. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "elementwise.h"
#include "ring_stream.h"

/* Pieces one send or receive call gathers (small tensors are many). */
#define RING_IOV 64

static long long
now_us(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

/* The piece holding byte at (< the whole's size): the last one starting
 * at or before it, which is never an empty one. */
static int
piece_at(const ring_buf *b, size_t at)
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
side_ptr(const ring_piece *p, enum ring_side s)
{
    return s == RING_SEND_SIDE ? (char *)p->send : (char *)p->recv;
}

/* Up to RING_IOV pieces' parts covering [at, at + len) of side s, at
 * most `most` bytes; returns how many. */
static int
gather(const ring_buf *b, enum ring_side s, size_t at, size_t len, size_t most,
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

/* recv side [at, at + len) = send side op segment (segment op send side
 * with theirs_first), divided when scaled. */
static void
reduce_segment(const ring_buf *b, const ring_step *s, const char *segment,
               size_t at, size_t len, int size)
{
    struct iovec dst[RING_IOV], own[RING_IOV];

    while (len) {
        int n = gather(b, RING_RECV_SIDE, at, len, len, dst);
        gather(b, RING_SEND_SIDE, at, len, len, own);
        for (int k = 0; k < n; k++) {
            size_t count = dst[k].iov_len / b->es;
            const void *x = s->theirs_first ? segment : own[k].iov_base,
                       *y = s->theirs_first ? own[k].iov_base : segment;
            if (s->scale) /* avg: the op is the sum */
                elem_sum_scaled(dst[k].iov_base, x, y, count, s->dt, size);
            else
                elem_reduce_to(dst[k].iov_base, x, y, count, s->dt, s->op);
            segment += dst[k].iov_len;
            at += dst[k].iov_len;
            len -= dst[k].iov_len;
        }
    }
}

/* Sends what the out stream takes now, of the first `ready` bytes:
 * bytes sent, or -1 when it is broken. */
static ssize_t
push(const ring_link *l, const ring_buf *b, const ring_step *s, size_t ready,
     size_t *sent)
{
    struct iovec iov[RING_IOV];
    struct msghdr m = {.msg_iov = iov};
    ssize_t n;

    m.msg_iovlen = (size_t)gather(b, s->out_side, s->out + *sent, ready - *sent,
                                  RING_SEGMENT, iov);
    if ((n = sendmsg(l->out, &m, MSG_DONTWAIT | MSG_NOSIGNAL)) > 0)
        *sent += (size_t)n;
    return n >= 0 ? n : errno == EAGAIN || errno == EINTR ? 0 : -1;
}

/* Receives what the in stream has now: straight into the pieces, or,
 * to reduce, into the segment, reduced when full. Bytes received, or -1
 * when the stream is broken or closed. */
static ssize_t
pull(tcp_ring *g, const ring_link *l, const ring_buf *b, const ring_step *s,
     size_t *got, size_t *held)
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
        m.msg_iovlen = (size_t)gather(b, RING_RECV_SIDE, s->in + *got, want,
                                      SIZE_MAX, iov);
    if ((n = recvmsg(l->in, &m, MSG_DONTWAIT)) == 0)
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
closed(const ring_buf *b, const char *who, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s closed the connection", b->what, who);
    return COLL_ETRANSPORT;
}

void
ring_step_blocks(const tcp_ring *g, const ring_buf *b, ring_step *s,
                 int out_block, int in_block)
{
    int out = (out_block + g->size) % g->size,
        in = (in_block + g->size) % g->size;

    s->out = b->block_at[out];
    s->out_len = b->block_at[out + 1] - s->out;
    s->in = b->block_at[in];
    s->in_len = b->block_at[in + 1] - s->in;
}

void
ring_link_between(const tcp_ring *g, int to, int from, ring_link *l)
{
    int right = (g->rank + 1) % g->size,
        left = (g->rank + g->size - 1) % g->size;

    if (to == right)
        l->out = g->right, l->out_name = g->right_name;
    else if (to == left)
        l->out = g->left, l->out_name = g->left_name;
    else
        l->out = g->chord[to].fd, l->out_name = g->chord[to].name;
    if (from == left)
        l->in = g->left, l->in_name = g->left_name;
    else if (from == right)
        l->in = g->right, l->in_name = g->right_name;
    else
        l->in = g->chord[from].fd, l->in_name = g->chord[from].name;
}

int
ring_step_with(tcp_ring *g, int peer, const ring_buf *b, const ring_step *s,
               char *err, size_t errlen)
{
    ring_link l;

    ring_link_between(g, peer, peer, &l);
    return ring_run_step_on(g, &l, b, s, err, errlen);
}

int
ring_run_step(tcp_ring *g, const ring_buf *b, const ring_step *s, char *err,
              size_t errlen)
{
    ring_link l = {g->right, g->left, g->right_name, g->left_name};

    return ring_run_step_on(g, &l, b, s, err, errlen);
}

/* Moves data while it moves and polls only when neither stream can (a
 * poll before every call cost about a fifth of the fused step). Sending
 * does not wait for receiving: with the ring's socket buffers, a limit of
 * 512 KiB ahead changed nothing on 2 ranks and cost 3 ranks 67 -> 83 ms,
 * 4 ranks 87 -> 119 ms (64 MiB, on 2 cores). */
int
ring_run_step_on(tcp_ring *g, const ring_link *l, const ring_buf *b,
                 const ring_step *s, char *err, size_t errlen)
{
    size_t sent = 0, got = 0, held = 0;
    long long idle_since = 0; /* us; 0: moving */

    while (sent < s->out_len || got < s->in_len) {
        size_t ready = s->forward && got < s->out_len ? got : s->out_len;
        int to_send = sent < ready;
        int to_get = got < s->in_len, n;
        ssize_t pushed = 0, pulled = 0;

        if (to_send && (pushed = push(l, b, s, ready, &sent)) < 0)
            return closed(b, l->out_name, err, errlen);
        if (to_get && (pulled = pull(g, l, b, s, &got, &held)) < 0)
            return closed(b, l->in_name, err, errlen);
        if (pushed > 0 || pulled > 0) {
            idle_since = 0;
            continue;
        }
        if (g->spin_us) { /* retry a while before sleeping */
            long long now = now_us();
            if (idle_since == 0)
                idle_since = now;
            if (now - idle_since < g->spin_us) {
                if (g->yields)
                    sched_yield();
                continue;
            }
        }
        idle_since = 0;
        /* only the streams this step still uses: poll reports a hang-up
         * even without events asked for, so a peer that is done with this
         * step and gone would wake it at once, for ever, past the timeout
         * that a hung peer on the other stream must meet */
        struct pollfd p[2] = {{to_send ? l->out : -1, POLLOUT, 0},
                              {to_get ? l->in : -1, POLLIN, 0}};
        while ((n = poll(p, 2, g->timeout_ms)) < 0 && errno == EINTR)
            ;
        if (n <= 0) {
            snprintf(err, errlen, "%s: no progress with %s or %s for %d s",
                     b->what, l->in_name, l->out_name, g->timeout_ms / 1000);
            return COLL_ETRANSPORT;
        }
    }
    return 0;
}

int
ring_buf_init(ring_buf *b, const ring_piece *piece, int n, size_t es, int size,
              const char *what)
{
    *b = (ring_buf){piece,
                    n,
                    calloc((size_t)n + 1, sizeof(size_t)),
                    calloc((size_t)size + 1, sizeof(size_t)),
                    es,
                    what};
    if (b->start == NULL || b->block_at == NULL) {
        ring_buf_release(b);
        return COLL_ENOMEM;
    }
    for (int k = 0; k < n; k++)
        b->start[k + 1] = b->start[k] + piece[k].count * es;
    return 0;
}

void
ring_buf_release(ring_buf *b)
{
    free(b->start);
    free(b->block_at);
    b->start = b->block_at = NULL;
}

int
ring_begin(tcp_ring *g, const char *what, char *err, size_t errlen)
{
    if (g->segment == NULL && (g->segment = malloc(RING_SEGMENT)) == NULL)
        return COLL_ENOMEM;
    if (g->broken) {
        snprintf(err, errlen, "%s: the ring failed earlier", what);
        return COLL_ETRANSPORT;
    }
    return g->left < 0 || g->right < 0 ? ring_connect(g, what, err, errlen) : 0;
}

int
ring_begin_chords(tcp_ring *g, ring_chords set, const char *what, char *err,
                  size_t errlen)
{
    int r = ring_begin(g, what, err, errlen);

    return r ? r : ring_connect_chords(g, set, what, err, errlen);
}

int
ring_end(tcp_ring *g, int r)
{
    if (r == COLL_ETRANSPORT)
        ring_break(g);
    return r;
}
