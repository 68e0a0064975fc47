/* alltoallv: the only collective whose arguments differ by rank by
 * design, so its check compares pairs: rank i's send_counts[j] must be
 * rank j's recv_counts[i]. Every rank's counts (and, when they fit, its
 * data) travel in one exchange slot; each rank checks every pair itself,
 * so all reach the same verdict in one round trip. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "comm.h"
#include "device.h"

/* A slot: [carried][send_counts n][recv_counts n][data], int64 counts. */
#define HEAD(n) (sizeof(int64_t) * (1 + 2 * (size_t)(n)))

static int64_t
slot_count(const comm_slots *slots, int rank, size_t index)
{
    int64_t v;

    memcpy(&v, comm_slot_data(slots, rank) + sizeof(v) * index, sizeof(v));
    return v;
}

/* 1 when some pair disagrees, judged from every rank's slot. */
static int
disagree_in_slots(const comm_slots *slots, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (slot_count(slots, (int)i, 1 + j) !=
                slot_count(slots, (int)j, 1 + n + i))
                return 1;
    return 0;
}

/* The slots hold the counts always, the data when it fits in what other
 * collectives' slots carry: beyond 64 ranks the counts alone exceed it,
 * and the slots grow to hold them (16 bytes a rank per rank). */
int
comm_agree_pairs(coll_comm *c, int64_t dt, const size_t *send_counts,
                 const size_t *recv_counts, const void *data, size_t bytes,
                 comm_slots *slots)
{
    size_t n = (size_t)c->size, head = HEAD(n);
    size_t cap = head > COMM_SMALL_BYTES ? head : COMM_SMALL_BYTES;
    int carried = data != NULL && head + bytes <= cap;
    int64_t *mine;
    int r;

    *slots = (comm_slots){.all = NULL};
    if ((mine = calloc(1, head + (carried ? bytes : 0))) == NULL)
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    mine[0] = carried;
    for (size_t i = 0; i < n; i++) {
        mine[1 + i] = (int64_t)send_counts[i];
        mine[1 + n + i] = (int64_t)recv_counts[i];
    }
    if (carried && bytes)
        memcpy((char *)mine + head, data, bytes);
    r = comm_exchange_cap(c, "alltoallv", 0, dt, 0, mine,
                          head + (carried ? bytes : 0), cap, slots);
    free(mine);
    if (r != 0 || !disagree_in_slots(slots, n))
        return r;
    comm_slots_release(slots);
    return comm_fail(c, COLL_EMISMATCH,
                     "alltoallv: a rank's receive counts do not match what "
                     "the others send");
}

/* Every rank's data came with its counts: each block for this rank is
 * at its sender's offset for this rank. */
static int
all_carried(const comm_slots *slots, int n)
{
    for (int i = 0; i < n; i++)
        if (slot_count(slots, i, 0) == 0)
            return 0;
    return 1;
}

static void
take_blocks(const comm_slots *slots, int n, int rank, void *recv, size_t es)
{
    size_t out = 0;

    for (int i = 0; i < n; i++) {
        size_t in = 0, len = (size_t)slot_count(slots, i, 1 + (size_t)rank);
        for (int j = 0; j < rank; j++)
            in += (size_t)slot_count(slots, i, 1 + (size_t)j);
        if (len)
            memcpy((char *)recv + out * es,
                   comm_slot_data(slots, i) + HEAD(n) + in * es, len * es);
        out += len;
    }
}

/* Totals that fit in memory, and a buffer wherever they are not 0 (every
 * other collective checks this; a NULL send with counts crashed). */
static int
check_buffers(coll_comm *c, const void *send, const size_t *send_counts,
              const void *recv, const size_t *recv_counts, size_t es)
{
    size_t sent = 0, received = 0;

    for (int i = 0; i < c->size; i++) {
        if (comm_oversized(sent + send_counts[i], es, 1) ||
            comm_oversized(received + recv_counts[i], es, 1) ||
            comm_oversized(send_counts[i], es, 1) ||
            comm_oversized(recv_counts[i], es, 1))
            return comm_fail(c, COLL_EINVAL, "alltoallv: counts too large");
        sent += send_counts[i];
        received += recv_counts[i];
    }
    if ((sent && send == NULL) || (received && recv == NULL))
        return comm_fail(c, COLL_EINVAL, "alltoallv: missing buffer");
    return 0;
}

int
coll_alltoallv(coll_comm *c, const void *send, const size_t *send_counts,
               void *recv, const size_t *recv_counts, coll_dtype dt)
{
    size_t es = coll_dtype_size(dt), total = 0, *sb, *rb;
    comm_slots slots;
    char err[512];
    int r;

    if ((r = comm_usable(c)) != 0)
        return r;
    if (es == 0 || send_counts == NULL || recv_counts == NULL)
        return comm_fail(c, COLL_EINVAL, "alltoallv: bad type or counts");
    if ((r = check_buffers(c, send, send_counts, recv, recv_counts, es)) != 0)
        return r;
    if (dev_pointer(send) || dev_pointer(recv))
        return comm_on_device(c, &(dev_op){.kind = DEV_ALLTOALLV,
                                           .send = send,
                                           .recv = recv,
                                           .counts = send_counts,
                                           .rcounts = recv_counts,
                                           .dt = dt});
    if (c->size == 1) {
        if (send_counts[0] != recv_counts[0])
            return comm_fail(c, COLL_EMISMATCH, "alltoallv: counts differ");
        if (send_counts[0] && send != recv)
            memmove(recv, send, send_counts[0] * es);
        return 0;
    }
    for (int i = 0; i < c->size; i++)
        total += send_counts[i];
    if ((r = comm_agree_pairs(c, dt, send_counts, recv_counts, send, total * es,
                              &slots)) != 0)
        return r;
    if (all_carried(&slots, c->size)) {
        take_blocks(&slots, c->size, c->rank, recv, es);
        comm_slots_release(&slots);
        return 0;
    }
    comm_slots_release(&slots);
    if ((sb = malloc(sizeof(size_t) * 2 * (size_t)c->size)) == NULL)
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    rb = sb + c->size;
    for (int i = 0; i < c->size; i++) {
        sb[i] = send_counts[i] * es;
        rb[i] = recv_counts[i] * es;
    }
    r = c->world->ops->alltoallv(c->world, send, sb, recv, rb, "alltoallv", err,
                                 sizeof(err));
    free(sb);
    return r ? comm_fail(c, r, "%s", err) : 0;
}
