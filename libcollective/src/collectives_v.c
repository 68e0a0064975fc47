/* allgatherv, alltoall and reducescatter (alltoallv has its own file). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "comm.h"
#include "device.h"

int64_t
comm_digest(const size_t *counts, int n)
{
    uint64_t h = 1469598103934665603ULL;

    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)counts[i]) * 1099511628211ULL;
    return (int64_t)(h >> 1);
}

int
coll_allgatherv(coll_comm *c, const void *send, size_t count, void *recv,
                const size_t *counts, coll_dtype dt)
{
    size_t es = coll_dtype_size(dt), total = 0, *bytes;
    char err[512] = "";
    int r;

    if ((r = comm_usable(c)) != 0)
        return r;
    if (es == 0 || counts == NULL || counts[c->rank] != count)
        return comm_fail(c, COLL_EINVAL,
                         "allgatherv: bad type, or count != counts[rank]");
    /* (before the device path too: its own check sums the counts) */
    for (int i = 0; i < c->size; i++) {
        if (comm_oversized(counts[i], es, 1) ||
            comm_oversized(total + counts[i], es, 1))
            return comm_fail(c, COLL_EINVAL, "allgatherv: counts too large");
        total += counts[i];
    }
    if (dev_pointer(send) || dev_pointer(recv))
        return comm_on_device(c, &(dev_op){.kind = DEV_ALLGATHERV,
                                           .send = send,
                                           .recv = recv,
                                           .count = count,
                                           .counts = counts,
                                           .dt = dt});
    if (total && (recv == NULL || (count && send == NULL)))
        return comm_fail(c, COLL_EINVAL, "allgatherv: missing buffer");
    if (c->size == 1) {
        if (count && send != recv)
            memmove(recv, send, count * es);
        return 0;
    }
    /* every part small enough (the same answer on every rank that agrees
     * on counts): the check's exchange carries the data */
    int small = 1;
    comm_slots slots;
    for (int i = 0; i < c->size; i++)
        small &= counts[i] * es <= COMM_SMALL_BYTES;
    if ((r = comm_exchange(c, "allgatherv", (int64_t)total, dt,
                           comm_digest(counts, c->size), send, count * es,
                           &slots)) != 0)
        return r;
    if (small || total == 0) {
        size_t off = 0;
        for (int i = 0; i < c->size; off += counts[i++] * es)
            if (counts[i])
                memcpy((char *)recv + off, comm_slot_data(&slots, i),
                       counts[i] * es);
        comm_slots_release(&slots);
        return 0;
    }
    comm_slots_release(&slots);
    if ((bytes = malloc(sizeof(*bytes) * (size_t)c->size)) == NULL)
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    for (int i = 0; i < c->size; i++)
        bytes[i] = counts[i] * es;
    r = comm_hier_gather_wanted(c) /* two levels: hierarchical.c */
            ? comm_hier_allgatherv(c, &c->hier, c->world, "", send, recv, bytes,
                                   err, sizeof(err))
            : c->world->ops->allgatherv(c->world, send, recv, bytes,
                                        "allgatherv", err, sizeof(err));
    free(bytes);
    if (r == COLL_ENOMEM && err[0] == '\0')
        snprintf(err, sizeof(err), "out of memory");
    return r ? comm_fail(c, r, "%s", err) : 0;
}

int
coll_alltoall(coll_comm *c, const void *send, void *recv, size_t count,
              coll_dtype dt)
{
    size_t es = coll_dtype_size(dt);
    char err[512] = "";
    int r;

    if ((r = comm_usable(c)) != 0)
        return r;
    if (es == 0 || (count && (send == NULL || recv == NULL)) ||
        comm_oversized(count, es, (size_t)c->size))
        return comm_fail(c, COLL_EINVAL, "alltoall: bad type or buffer");
    if (dev_pointer(send) || dev_pointer(recv))
        return comm_on_device(c, &(dev_op){.kind = DEV_ALLTOALL,
                                           .send = send,
                                           .recv = recv,
                                           .count = count,
                                           .dt = dt});
    if (c->size == 1) {
        if (count && send != recv)
            memmove(recv, send, count * es);
        return 0;
    }
    size_t block = count * es, all = block * (size_t)c->size;
    comm_slots slots;
    if ((r = comm_exchange(c, "alltoall", (int64_t)count, dt, 0, send, all,
                           &slots)) != 0)
        return r;
    if (all <= COMM_SMALL_BYTES) { /* the exchange carried every block */
        for (int i = 0; block && i < c->size; i++)
            memcpy((char *)recv + block * i,
                   comm_slot_data(&slots, i) + block * c->rank, block);
        comm_slots_release(&slots);
        return 0;
    }
    comm_slots_release(&slots);
    size_t *each = transport_each(c->size, block);
    if (each == NULL)
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    r = c->world->ops->alltoallv(c->world, send, each, recv, each, "alltoall",
                                 err, sizeof(err));
    free(each);
    return r ? comm_fail(c, r, "%s", err) : 0;
}

int
coll_reducescatter(coll_comm *c, const void *send, void *recv, size_t count,
                   coll_dtype dt, coll_op op)
{
    size_t es = coll_dtype_size(dt), start, len;
    coll_op how = op == COLL_OP_AVG ? COLL_OP_SUM : op;
    comm_slots slots;
    int r;

    if (comm_reduce_begin(c, DEV_REDUCESCATTER, send, recv, count, dt, op, &r))
        return r;
    start = elem_block_start(count, c->size, c->rank, &len);
    if ((r = comm_exchange(c, "reducescatter", (int64_t)count, dt, op, send,
                           count * es, &slots)) != 0)
        return r;
    if (count * es <= COMM_SMALL_BYTES) {
        comm_reduce_slots(&slots, c->size, recv, start, len, dt, how);
        if (op == COLL_OP_AVG)
            elem_scale_avg(recv, len, dt, c->size);
    } else if ((r = comm_hier_reducescatter_wanted(c) /* two levels */
                        ? comm_hier_reducescatter(
                              c, &c->hier, c->world, "", send, recv, count, dt,
                              op, c->last_error, sizeof(c->last_error))
                        : c->world->ops->reducescatter(
                              c->world, send, recv, count, dt, op,
                              c->last_error, sizeof(c->last_error))) != 0) {
        r = comm_fail(c, r, "%s", c->last_error);
    }
    comm_slots_release(&slots);
    return r;
}
