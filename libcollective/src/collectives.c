/* The blocking collectives: argument checks here and across ranks, then
 * the backend. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "comm.h"
#include "device.h"
#include "halfprec.h"

size_t
coll_dtype_size(coll_dtype dt)
{
    switch (dt) {
    case COLL_DT_U8:
    case COLL_DT_I8:
        return 1;
    case COLL_DT_F16:
    case COLL_DT_BF16:
        return 2;
    case COLL_DT_I32:
    case COLL_DT_F32:
        return 4;
    case COLL_DT_I64:
    case COLL_DT_F64:
        return 8;
    }
    return 0;
}

int
comm_usable(coll_comm *c)
{
    if (c == NULL)
        return COLL_EINVAL;
    if (c->dead)
        return comm_fail(c, COLL_EDEAD, "the communicator failed earlier: %s",
                         c->last_error);
    return 0;
}

int
comm_reduce_begin(coll_comm *c, int kind, const void *send, void *recv,
                  size_t count, coll_dtype dt, coll_op op, int *result)
{
    const char *what = kind == DEV_ALLREDUCE ? "allreduce" : "reducescatter";
    size_t es = coll_dtype_size(dt);

    if ((*result = comm_usable(c)) != 0)
        return 1;
    if (es == 0 || op < COLL_OP_SUM || op > COLL_OP_PROD ||
        comm_oversized(count, es, 1) ||
        (count && (send == NULL || recv == NULL))) {
        *result = comm_fail(c, COLL_EINVAL, "%s: bad type, op or buffer", what);
        return 1;
    }
    if (dev_pointer(send) || dev_pointer(recv)) {
        *result = comm_on_device(c, &(dev_op){.kind = (dev_kind)kind,
                                              .send = send,
                                              .recv = recv,
                                              .count = count,
                                              .dt = dt,
                                              .op = op});
        return 1;
    }
    if (c->size > 1)
        return 0;
    if (count && send != recv) /* a job of one: the data is the result */
        memmove(recv, send, count * es);
    return 1;
}

int
coll_allreduce(coll_comm *c, const void *send, void *recv, size_t count,
               coll_dtype dt, coll_op op)
{
    size_t es = coll_dtype_size(dt);
    coll_op how = op == COLL_OP_AVG ? COLL_OP_SUM : op;
    int divide = op == COLL_OP_AVG; /* after a sum, where not done yet */
    comm_slots slots;
    int r;

    if (comm_reduce_begin(c, DEV_ALLREDUCE, send, recv, count, dt, op, &r))
        return r;
    if ((r = comm_exchange(c, "allreduce", (int64_t)count, dt, op, send,
                           count * es, &slots)) != 0)
        return r;
    if (count * es <= COMM_SMALL_BYTES) {
        comm_reduce_slots(&slots, c->size, recv, 0, count, dt, how);
    } else { /* the transport divides avg, as the two levels do */
        transport_piece p = {send, recv, count};
        r = comm_hier_wanted(c) /* hierarchical.c */
                ? comm_hier_allreduce(c, &c->hier, c->world, "", &p, 1, dt, op,
                                      c->last_error, sizeof(c->last_error))
                : c->world->ops->allreduce(c->world, &p, 1, dt, op,
                                           c->last_error,
                                           sizeof(c->last_error));
        divide = 0;
        if (r == COLL_ENOMEM)
            r = comm_fail(c, r, "out of memory");
        else if (r != 0)
            r = comm_fail(c, r, "%s", c->last_error);
    }
    comm_slots_release(&slots);
    if (r == 0 && divide)
        elem_scale_avg(recv, count, dt, c->size);
    return r;
}

int
coll_broadcast(coll_comm *c, void *buf, size_t count, coll_dtype dt, int root)
{
    size_t es = coll_dtype_size(dt);
    comm_slots slots;
    int r;

    if ((r = comm_usable(c)) != 0)
        return r;
    if (es == 0 || root < 0 || root >= c->size || (count && buf == NULL) ||
        comm_oversized(count, es, 1))
        return comm_fail(c, COLL_EINVAL, "broadcast: bad type, root or buffer");
    if (dev_pointer(buf))
        return comm_on_device(c, &(dev_op){.kind = DEV_BROADCAST,
                                           .recv = buf,
                                           .count = count,
                                           .dt = dt,
                                           .root = root});
    if (c->size == 1)
        return 0;
    if ((r = comm_exchange(c, "broadcast", (int64_t)count, dt, root, buf,
                           count * es, &slots)) != 0)
        return r;
    if (count * es <= COMM_SMALL_BYTES) {
        if (count)
            memcpy(buf, comm_slot_data(&slots, root), count * es);
    } else {
        r = comm_hier_broadcast_wanted(c) /* two levels: hierarchical_auto.c */
                ? comm_hier_broadcast(c, &c->hier, c->world, "", buf,
                                      count * es, root, c->last_error,
                                      sizeof(c->last_error))
                : c->world->ops->broadcast(c->world, buf, count * es, root,
                                           c->last_error,
                                           sizeof(c->last_error));
        if (r == COLL_ENOMEM)
            r = comm_fail(c, r, "out of memory");
        else if (r != 0)
            r = comm_fail(c, r, "%s", c->last_error);
    }
    comm_slots_release(&slots);
    return r;
}

int
coll_allgather(coll_comm *c, const void *send, void *recv, size_t count,
               coll_dtype dt)
{
    size_t es = coll_dtype_size(dt), bytes = count * es;
    comm_slots slots;
    int r;

    if ((r = comm_usable(c)) != 0)
        return r;
    if (es == 0 || (count && (send == NULL || recv == NULL)) ||
        comm_oversized(count, es, (size_t)c->size))
        return comm_fail(c, COLL_EINVAL, "allgather: bad type or buffer");
    if (dev_pointer(send) || dev_pointer(recv))
        return comm_on_device(c, &(dev_op){.kind = DEV_ALLGATHER,
                                           .send = send,
                                           .recv = recv,
                                           .count = count,
                                           .dt = dt});
    if (c->size == 1) {
        if (count && send != recv)
            memmove(recv, send, bytes);
        return 0;
    }
    if ((r = comm_exchange(c, "allgather", (int64_t)count, dt, 0, send, bytes,
                           &slots)) != 0)
        return r;
    if (bytes <= COMM_SMALL_BYTES) {
        /* send may lie inside recv: the slots hold copies */
        for (int i = 0; bytes && i < c->size; i++)
            memcpy((char *)recv + bytes * i, comm_slot_data(&slots, i), bytes);
    } else if (comm_hier_gather_wanted(c)) { /* two levels: hierarchical.c */
        r = comm_hier_allgather(c, &c->hier, c->world, "", send, recv, bytes,
                                c->last_error, sizeof(c->last_error));
        if (r != 0)
            r = r == COLL_ENOMEM ? comm_fail(c, r, "out of memory")
                                 : comm_fail(c, r, "%s", c->last_error);
    } else if ((r = transport_allgather(c->world, send, recv, bytes,
                                        "allgather", c->last_error,
                                        sizeof(c->last_error))) != 0) {
        r = comm_fail(c, r, "%s", c->last_error);
    }
    comm_slots_release(&slots);
    return r;
}

/* The argument check's exchange with nothing in it: the same one step as
 * the transports' barrier, and a rank that is in another collective (one
 * that returned COLL_EINVAL alone, before its check) is told so, where a
 * plain barrier met that collective's check and passed. */
int
coll_barrier(coll_comm *c)
{
    comm_slots slots;
    int r;

    if ((r = comm_usable(c)) != 0)
        return r;
    if (c->size == 1)
        return 0;
    if ((r = comm_exchange(c, "barrier", 0, 0, 0, NULL, 0, &slots)) == 0)
        comm_slots_release(&slots);
    return r;
}

int
coll_allreduce_fp16(coll_comm *c, const float *send, float *recv, size_t count,
                    coll_op op)
{
    uint16_t *wire;
    int r;

    if ((r = comm_usable(c)) != 0)
        return r;
    if ((count && (send == NULL || recv == NULL)) ||
        comm_oversized(count, sizeof(float), 1))
        return comm_fail(c, COLL_EINVAL,
                         "allreduce_fp16: missing buffer or count too large");
    if (dev_pointer(send) || dev_pointer(recv))
        return comm_fail(c, COLL_ENOTSUP,
                         "allreduce_fp16: GPU buffers are not compressed "
                         "(NCCL reduces f32 on the GPU): use allreduce");
    if ((wire = malloc(count * sizeof(*wire) + 1)) == NULL)
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    for (size_t i = 0; i < count; i++)
        wire[i] = coll_f32_to_f16(send[i]);
    r = coll_allreduce(c, wire, wire, count, COLL_DT_F16, op);
    for (size_t i = 0; r == 0 && i < count; i++)
        recv[i] = coll_f16_to_f32(wire[i]);
    free(wire);
    return r;
}
