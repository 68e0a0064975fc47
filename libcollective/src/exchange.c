/* The first step of every blocking collective but the barrier: one
 * allgather of a fixed-size slot per rank, holding the rank's arguments
 * and, when they fit in COMM_SMALL_BYTES, its data. The ranks thus always
 * issue the same Gloo operation whatever counts they were given (Gloo
 * aborts the process on a count mismatch), every rank sees every rank's
 * arguments, and a small operation is over in this one round trip instead
 * of two. */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

typedef struct slot_header {
    int64_t a, b, d;
} slot_header;

#define SLOT (sizeof(slot_header) + COMM_SMALL_BYTES)

const char *
comm_slot_data(const char *slots, int rank)
{
    return slots + SLOT * (size_t)rank + sizeof(slot_header);
}

int
comm_exchange(coll_comm *c, const char *what, int64_t a, int64_t b, int64_t d,
              const void *data, size_t bytes, char **slots)
{
    slot_header mine = {a, b, d}, theirs;
    char *all = calloc(2 * (size_t)c->size, SLOT), *own;
    int r;

    *slots = NULL;
    if (all == NULL)
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    /* an allgather as an alltoall of this slot sent to every rank: the
     * same bytes as Gloo's ring allgather, in one step instead of size - 1
     * (8 B allreduce, 4 ranks here: ~3.9 -> ~2.6 ms; 2 ranks: the same) */
    own = all + SLOT * c->size;
    memcpy(own, &mine, sizeof(mine));
    if (data && bytes && bytes <= COMM_SMALL_BYTES)
        memcpy(own + sizeof(mine), data, bytes);
    for (int i = 1; i < c->size; i++)
        memcpy(own + SLOT * i, own, SLOT);
    r = gb_alltoall(c->gloo, own, all, SLOT, c->last_error,
                    sizeof(c->last_error));
    if (r != 0) {
        /* the caller called `what`, not alltoall */
        const char *detail = strchr(c->last_error, ':');
        free(all);
        return comm_fail(c, r, "%s%s", what, detail ? detail : "");
    }
    for (int i = 0; i < c->size; i++) {
        memcpy(&theirs, all + SLOT * i, sizeof(theirs));
        if (memcmp(&theirs, &mine, sizeof(mine)) != 0) {
            free(all);
            return comm_fail(c, COLL_EMISMATCH,
                             "%s: ranks disagree on count, type or op/root "
                             "(this rank: %lld, %lld, %lld; rank %d: %lld, "
                             "%lld, %lld)",
                             what, (long long)a, (long long)b, (long long)d, i,
                             (long long)theirs.a, (long long)theirs.b,
                             (long long)theirs.d);
        }
    }
    *slots = all;
    return 0;
}

void
comm_reduce_slots(const char *slots, int size, void *out, size_t start,
                  size_t len, coll_dtype dt, coll_op op)
{
    size_t es = coll_dtype_size(dt);

    if (len == 0)
        return;
    memcpy(out, comm_slot_data(slots, 0) + start * es, len * es);
    for (int i = 1; i < size; i++)
        comm_reduce_into(out, comm_slot_data(slots, i) + start * es, len, dt,
                         op);
}
