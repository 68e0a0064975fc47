/* A collective on GPU buffers: the ranks agree on the arguments on the
 * host, as for host buffers (NCCL would hang or read out of bounds on a
 * mismatch), then the NCCL backend (nccl/) runs it on the comm's own
 * communicator, made at the first such call. */
#include <stdint.h>
#include <stdio.h>

#include "comm.h"
#include "device.h"

/* Both buffers on the same GPU (a missing send is the in-place
 * broadcast); the GPU, or a code. */
static int
buffers_device(coll_comm *c, const dev_op *o, const char *what)
{
    int rd = dev_buffer_device(o->recv), cd = dev_comm_device(c->dev);
    /* in place, or nothing to send */
    int sd = o->kind == DEV_BROADCAST || (o->send == NULL && o->count == 0)
                 ? rd
                 : dev_buffer_device(o->send);

    if (rd < 0 || sd != rd)
        return comm_fail(c, COLL_EINVAL,
                         "%s: send and recv must be on the same GPU (send on "
                         "%d, recv on %d; -1 is host memory)",
                         what, sd, rd);
    if (cd >= 0 && cd != rd)
        return comm_fail(c, COLL_EINVAL,
                         "%s: buffer on GPU %d, but this comm's NCCL "
                         "communicator is on GPU %d",
                         what, rd, cd);
    return rd;
}

/* The same check as the host path makes, with the type marked as on the
 * device: a rank with host buffers and one with device buffers disagree. */
static int
agree(coll_comm *c, const dev_op *o, const char *what)
{
    int64_t a = (int64_t)o->count, d = 0, dt = o->dt + DEV_ON_DEVICE;
    comm_slots slots;
    int r;

    if (c->size == 1)
        return o->kind == DEV_ALLTOALLV && o->counts[0] != o->rcounts[0]
                   ? comm_fail(c, COLL_EMISMATCH, "alltoallv: counts differ")
                   : 0;
    switch (o->kind) {
    case DEV_ALLREDUCE:
    case DEV_REDUCESCATTER:
        d = o->op;
        break;
    case DEV_BROADCAST:
        d = o->root;
        break;
    case DEV_ALLGATHERV:
        a = 0;
        for (int i = 0; i < c->size; i++)
            a += (int64_t)o->counts[i];
        d = comm_digest(o->counts, c->size);
        break;
    case DEV_ALLTOALLV:
        r = comm_agree_pairs(c, dt, o->counts, o->rcounts, NULL, 0, &slots);
        comm_slots_release(&slots);
        return r;
    default:
        break;
    }
    if ((r = comm_exchange(c, what, a, dt, d, NULL, 0, &slots)) != 0)
        return r;
    comm_slots_release(&slots);
    return 0;
}

int
comm_on_device(coll_comm *c, const dev_op *o)
{
    const char *what = dev_kind_name(o->kind);
    char key[64];
    int device, r;

    if ((device = buffers_device(c, o, what)) < 0)
        return device;
    if ((r = agree(c, o, what)) != 0)
        return r;
    snprintf(key, sizeof(key), "%s-blocking", c->prefix);
    dev_peers peers = {c->client, key, c->rank, c->size, comm_timeout_ms()};
    r = dev_run(&c->dev, &peers, device, o, c->last_error,
                sizeof(c->last_error));
    return r ? comm_fail(c, r, "%s", c->last_error) : 0;
}
