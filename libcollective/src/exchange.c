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
#include "halfprec.h"

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
    char *all = calloc(c->size + 1, SLOT), *own;
    int r;

    *slots = NULL;
    if (all == NULL)
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    own = all + SLOT * c->size;
    memcpy(own, &mine, sizeof(mine));
    if (data && bytes && bytes <= COMM_SMALL_BYTES)
        memcpy(own + sizeof(mine), data, bytes);
    r = gb_allgather(c->gloo, own, all, SLOT, c->last_error,
                     sizeof(c->last_error));
    if (r != 0) {
        /* the caller called `what`, not allgather */
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

#define REDUCE_AS(T, acc, x, n, op)                                            \
    do {                                                                       \
        T *a_ = (T *)(acc);                                                    \
        const T *b_ = (const T *)(x);                                          \
        for (size_t i_ = 0; i_ < (n); i_++)                                    \
            a_[i_] = (op) == COLL_OP_MIN ? (b_[i_] < a_[i_] ? b_[i_] : a_[i_]) \
                     : (op) == COLL_OP_MAX                                     \
                         ? (b_[i_] > a_[i_] ? b_[i_] : a_[i_])                 \
                     : (op) == COLL_OP_PROD ? (T)(a_[i_] * b_[i_])             \
                                            : (T)(a_[i_] + b_[i_]);            \
    } while (0)

static float
half_op(float a, float b, coll_op op)
{
    switch (op) {
    case COLL_OP_MIN:
        return b < a ? b : a;
    case COLL_OP_MAX:
        return b > a ? b : a;
    case COLL_OP_PROD:
        return a * b;
    default:
        return a + b;
    }
}

void
comm_reduce_into(void *acc, const void *x, size_t n, coll_dtype dt, coll_op op)
{
    uint16_t *h = acc;
    const uint16_t *g = x;

    switch (dt) {
    case COLL_DT_U8:
        REDUCE_AS(uint8_t, acc, x, n, op);
        break;
    case COLL_DT_I8:
        REDUCE_AS(int8_t, acc, x, n, op);
        break;
    case COLL_DT_I32:
        REDUCE_AS(int32_t, acc, x, n, op);
        break;
    case COLL_DT_I64:
        REDUCE_AS(int64_t, acc, x, n, op);
        break;
    case COLL_DT_F32:
        REDUCE_AS(float, acc, x, n, op);
        break;
    case COLL_DT_F64:
        REDUCE_AS(double, acc, x, n, op);
        break;
    case COLL_DT_F16:
        for (size_t i = 0; i < n; i++)
            h[i] = coll_f32_to_f16(
                half_op(coll_f16_to_f32(h[i]), coll_f16_to_f32(g[i]), op));
        break;
    case COLL_DT_BF16:
        for (size_t i = 0; i < n; i++)
            h[i] = coll_f32_to_bf16(
                half_op(coll_bf16_to_f32(h[i]), coll_bf16_to_f32(g[i]), op));
        break;
    }
}
