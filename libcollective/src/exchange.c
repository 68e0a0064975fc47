/* The first step of every blocking collective but the barrier: one
 * allgather of a fixed-size slot per rank, holding the rank's arguments
 * and, when they fit in COMM_SMALL_BYTES, its data. The ranks thus always
 * issue the same operation whatever counts they were given (Gloo aborts
 * the process on a count mismatch), every rank sees every rank's
 * arguments, and a small operation is over in this one round trip instead
 * of two. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "timeline_events.h"

/* which: the collective, as a hash of its name (an allreduce and an
 * allgather of the same count and type otherwise agreed, and both went
 * on with the other's data); b, a type, takes half of the 8 bytes, so
 * that the header stays 24 */
typedef struct slot_header {
    int64_t a;
    int32_t b;
    uint32_t which;
    int64_t d;
} slot_header;
_Static_assert(sizeof(slot_header) == 24, "no padding, compared whole");

uint64_t
comm_name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

const char *
comm_slot_data(const comm_slots *slots, int rank)
{
    return slots->all + slots->stride * (size_t)rank + sizeof(slot_header);
}

void
comm_slots_release(comm_slots *slots)
{
    comm_tl_call_end(slots);
    free(slots->all);
    slots->all = NULL;
}

int
comm_barrier(coll_comm *c, const char *what)
{
    return c->world->ops->barrier(c->world, what, c->last_error,
                                  sizeof(c->last_error));
}

int
comm_exchange_cap(coll_comm *c, const char *what, int64_t a, int64_t b,
                  int64_t d, const void *data, size_t bytes, size_t cap,
                  comm_slots *slots)
{
    slot_header mine = {a, (int32_t)b, (uint32_t)comm_name_hash(what), d},
                theirs;
    size_t stride = sizeof(slot_header) + (cap + 7) / 8 * 8;
    char *all = calloc((size_t)c->size, stride), *own;
    int r;

    *slots = (comm_slots){.all = NULL, .stride = stride};
    if (all == NULL)
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    comm_tl_call_begin(c, what);
    own = all + stride * (size_t)c->rank;
    memcpy(own, &mine, sizeof(mine));
    if (data && bytes && bytes <= cap)
        memcpy(own + sizeof(mine), data, bytes);
    /* only the header and the data this rank carries need to travel */
    r = c->world->ops->exchange(
        c->world, all, stride,
        sizeof(mine) + (data && bytes <= cap ? (bytes + 7) / 8 * 8 : 0), what,
        c->last_error, sizeof(c->last_error));
    if (r != 0) {
        free(all);
        comm_tl_call_negotiated(c, what, 0, slots, a, b);
        return comm_fail(c, r, "%s", c->last_error);
    }
    for (int i = 0; i < c->size; i++) {
        memcpy(&theirs, all + stride * (size_t)i, sizeof(theirs));
        if (memcmp(&theirs, &mine, sizeof(mine)) != 0) {
            free(all);
            comm_tl_call_negotiated(c, what, 0, slots, a, b);
            if (theirs.which != mine.which)
                return comm_fail(c, COLL_EMISMATCH,
                                 "%s: rank %d called another collective", what,
                                 i);
            return comm_fail(c, COLL_EMISMATCH,
                             "%s: ranks disagree on count, type or op/root "
                             "(this rank: %lld, %lld, %lld; rank %d: %lld, "
                             "%lld, %lld)",
                             what, (long long)a, (long long)b, (long long)d, i,
                             (long long)theirs.a, (long long)theirs.b,
                             (long long)theirs.d);
        }
    }
    slots->all = all;
    comm_tl_call_negotiated(c, what, 1, slots, a, b);
    return 0;
}

int
comm_exchange(coll_comm *c, const char *what, int64_t a, int64_t b, int64_t d,
              const void *data, size_t bytes, comm_slots *slots)
{
    return comm_exchange_cap(c, what, a, b, d, data, bytes, COMM_SMALL_BYTES,
                             slots);
}

void
comm_reduce_slots(const comm_slots *slots, int size, void *out, size_t start,
                  size_t len, coll_dtype dt, coll_op op)
{
    size_t es = coll_dtype_size(dt);

    if (len == 0)
        return;
    memcpy(out, comm_slot_data(slots, 0) + start * es, len * es);
    for (int i = 1; i < size; i++)
        elem_reduce_into(out, comm_slot_data(slots, i) + start * es, len, dt,
                         op);
}
