/* Allreduce's argument check and, for small buffers, the allreduce itself
 * in one Gloo operation. Every rank allgathers a slot of fixed size: its
 * (count, type, op), and its data when they fit in SMALL_BYTES. The ranks
 * thus always issue the same operation whatever counts they were given
 * (Gloo aborts the process on a count mismatch), and a small allreduce
 * costs one round trip instead of two: each rank reduces the slots in
 * rank order, so every rank gets the same bits. */
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "halfprec.h"

#define SMALL_BYTES 4096

typedef struct slot_header {
    int64_t count, dtype, op;
} slot_header;

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

/* acc = acc op x, elementwise (op is not avg: that is sum, scaled later). */
static void
reduce_into(void *acc, const void *x, size_t n, coll_dtype dt, coll_op op)
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

int
comm_allreduce_small(coll_comm *c, void *buf, size_t count, coll_dtype dt,
                     coll_op op)
{
    size_t bytes = count * coll_dtype_size(dt);
    size_t slot = sizeof(slot_header) + SMALL_BYTES;
    slot_header mine = {(int64_t)count, dt, op}, theirs;
    int small = bytes <= SMALL_BYTES, r;
    char *all = calloc(c->size + 1, slot), *own;

    if (all == NULL)
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    own = all + slot * c->size;
    memcpy(own, &mine, sizeof(mine));
    if (small && bytes)
        memcpy(own + sizeof(mine), buf, bytes);
    r = gb_allgather(c->gloo, own, all, slot, c->last_error,
                     sizeof(c->last_error));
    for (int i = 0; r == 0 && i < c->size; i++) {
        memcpy(&theirs, all + slot * i, sizeof(theirs));
        if (memcmp(&theirs, &mine, sizeof(mine)) != 0)
            r = comm_fail(c, COLL_EMISMATCH,
                          "allreduce: ranks disagree on count, type or op "
                          "(this rank: %lld, %d, %d; rank %d: %lld, %lld, "
                          "%lld)",
                          (long long)count, (int)dt, (int)op, i,
                          (long long)theirs.count, (long long)theirs.dtype,
                          (long long)theirs.op);
    }
    if (r == 0 && small && bytes) {
        coll_op how = op == COLL_OP_AVG ? COLL_OP_SUM : op;
        memcpy(buf, all + sizeof(mine), bytes);
        for (int i = 1; i < c->size; i++)
            reduce_into(buf, all + slot * i + sizeof(mine), count, dt, how);
    }
    free(all);
    if (r == COLL_EMISMATCH)
        return r;
    if (r < 0) { /* the user called allreduce: say so, not "allgather" */
        const char *detail = strchr(c->last_error, ':');
        return comm_fail(c, r, "allreduce%s", detail ? detail : "");
    }
    return small;
}
