/* The collectives on GPU buffers: the ranks agree on the arguments on
 * the host (as for host buffers; NCCL would hang or read out of bounds on a
 * mismatch), then NCCL moves the data on the comm's stream and the call
 * waits for it. Built only with CUDA and NCCL. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "comm.h"
#include "fusion.h"
#include "nccl_comm.h"

static int gpus;
static pthread_once_t gpus_once = PTHREAD_ONCE_INIT;

/* Without a GPU (or a driver) cudaGetDeviceCount fails and leaves the
 * count alone: then no pointer is ever a device pointer. */
static void
count_gpus(void)
{
    int n = 0;

    if (cudaGetDeviceCount(&n) != cudaSuccess)
        n = 0;
    cudaGetLastError();
    gpus = n;
}

int
dev_pointer(const void *p)
{
    pthread_once(&gpus_once, count_gpus);
    return gpus > 0 && nc_buffer_device(p) >= 0;
}

static ncclDataType_t
nccl_type(coll_dtype dt)
{
    switch (dt) {
    case COLL_DT_U8:
        return ncclUint8;
    case COLL_DT_I8:
        return ncclInt8;
    case COLL_DT_I32:
        return ncclInt32;
    case COLL_DT_I64:
        return ncclInt64;
    case COLL_DT_F16:
        return ncclFloat16;
    case COLL_DT_BF16:
        return ncclBfloat16;
    case COLL_DT_F64:
        return ncclFloat64;
    default:
        return ncclFloat32;
    }
}

/* NCCL's avg divides integers after the sum, as the host path does;
 * floats it scales before (the same up to rounding). */
static ncclRedOp_t
nccl_op(coll_op op)
{
    switch (op) {
    case COLL_OP_AVG:
        return ncclAvg;
    case COLL_OP_MIN:
        return ncclMin;
    case COLL_OP_MAX:
        return ncclMax;
    case COLL_OP_PROD:
        return ncclProd;
    default:
        return ncclSum;
    }
}

static const char *const kind_names[] = {
    [DEV_ALLREDUCE] = "allreduce",        [DEV_BROADCAST] = "broadcast",
    [DEV_ALLGATHER] = "allgather",        [DEV_ALLGATHERV] = "allgatherv",
    [DEV_ALLTOALL] = "alltoall",          [DEV_ALLTOALLV] = "alltoallv",
    [DEV_REDUCESCATTER] = "reducescatter"};

/* Both buffers on the same GPU (a missing send is the in-place
 * broadcast); the GPU, or a code. */
static int
buffers_device(coll_comm *c, const dev_op *o, const char *what)
{
    int rd = nc_buffer_device(o->recv);
    /* in place, or nothing to send */
    int sd = o->kind == DEV_BROADCAST || (o->send == NULL && o->count == 0)
                 ? rd
                 : nc_buffer_device(o->send);

    if (rd < 0 || sd != rd)
        return comm_fail(c, COLL_EINVAL,
                         "%s: send and recv must be on the same GPU (send on "
                         "%d, recv on %d; -1 is host memory)",
                         what, sd, rd);
    if (c->dev && c->dev->device != rd)
        return comm_fail(c, COLL_EINVAL,
                         "%s: buffer on GPU %d, but this comm's NCCL "
                         "communicator is on GPU %d",
                         what, rd, c->dev->device);
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
        comm_slots_free(&slots);
        return r;
    default:
        break;
    }
    if ((r = comm_exchange(c, what, a, dt, d, NULL, 0, &slots)) != 0)
        return r;
    comm_slots_free(&slots);
    return 0;
}

/* Point-to-point rounds (in one group, see grouped): alltoall (counts
 * NULL) and alltoallv. */
static ncclResult_t
exchange_blocks(dev_comm *d, const dev_op *o, size_t es)
{
    ncclDataType_t t = nccl_type(o->dt);
    size_t soff = 0, roff = 0;
    ncclResult_t r = ncclSuccess;

    for (int p = 0; r == ncclSuccess && p < d->size; p++) {
        size_t sn = o->counts ? o->counts[p] : o->count;
        size_t rn = o->rcounts ? o->rcounts[p] : o->count;
        if (sn)
            r = ncclSend((const char *)o->send + soff * es, sn, t, p, d->nccl,
                         d->stream);
        if (r == ncclSuccess && rn)
            r = ncclRecv((char *)o->recv + roff * es, rn, t, p, d->nccl,
                         d->stream);
        soff += sn;
        roff += rn;
    }
    return r;
}

/* Every rank's part, from its own root (in one group). */
static ncclResult_t
gather_parts(dev_comm *d, const dev_op *o, size_t es)
{
    ncclDataType_t t = nccl_type(o->dt);
    size_t off = 0;
    ncclResult_t r = ncclSuccess;

    for (int p = 0; r == ncclSuccess && p < d->size; off += o->counts[p++])
        if (o->counts[p])
            r = ncclBroadcast(p == d->rank ? o->send
                                           : (char *)o->recv + off * es,
                              (char *)o->recv + off * es, o->counts[p], t, p,
                              d->nccl, d->stream);
    return r;
}

/* Uneven blocks: one reduce per block to its owner (in one group). */
static ncclResult_t
reduce_blocks(dev_comm *d, const dev_op *o, size_t es)
{
    ncclDataType_t t = nccl_type(o->dt);
    ncclResult_t r = ncclSuccess;
    size_t len;

    for (int p = 0; r == ncclSuccess && p < d->size; p++) {
        size_t start = comm_block_start(o->count, d->size, p, &len);
        if (len)
            r = ncclReduce((const char *)o->send + start * es, o->recv, len, t,
                           nccl_op(o->op), p, d->nccl, d->stream);
    }
    return r;
}

/* calls' NCCL calls as one group, so that NCCL runs them together. */
static ncclResult_t
grouped(ncclResult_t (*calls)(dev_comm *, const dev_op *, size_t), dev_comm *d,
        const dev_op *o, size_t es)
{
    ncclResult_t r = ncclGroupStart(), end;

    if (r == ncclSuccess)
        r = calls(d, o, es);
    end = ncclGroupEnd();
    return r != ncclSuccess ? r : end;
}

static ncclResult_t
enqueue(dev_comm *d, const void *arg)
{
    const dev_op *o = arg;
    size_t es = coll_dtype_size(o->dt);
    ncclDataType_t t = nccl_type(o->dt);

    switch (o->kind) {
    case DEV_ALLREDUCE:
        return o->count ? ncclAllReduce(o->send, o->recv, o->count, t,
                                        nccl_op(o->op), d->nccl, d->stream)
                        : ncclSuccess;
    case DEV_BROADCAST:
        return o->count ? ncclBroadcast(o->recv, o->recv, o->count, t, o->root,
                                        d->nccl, d->stream)
                        : ncclSuccess;
    case DEV_ALLGATHER:
        return o->count ? ncclAllGather(o->send, o->recv, o->count, t, d->nccl,
                                        d->stream)
                        : ncclSuccess;
    case DEV_ALLGATHERV:
        return grouped(gather_parts, d, o, es);
    case DEV_ALLTOALL:
    case DEV_ALLTOALLV:
        return grouped(exchange_blocks, d, o, es);
    case DEV_REDUCESCATTER:
        if (o->count % (size_t)d->size == 0)
            return o->count
                       ? ncclReduceScatter(o->send, o->recv,
                                           o->count / (size_t)d->size, t,
                                           nccl_op(o->op), d->nccl, d->stream)
                       : ncclSuccess;
        return grouped(reduce_blocks, d, o, es);
    }
    return ncclInvalidArgument;
}

int
dev_collective(coll_comm *c, const dev_op *o)
{
    const char *what = kind_names[o->kind];
    char key[64];
    int device, r;

    if ((device = buffers_device(c, o, what)) < 0)
        return device;
    if ((r = agree(c, o, what)) != 0)
        return r;
    snprintf(key, sizeof(key), "%s-blocking", c->prefix);
    r = nc_run(&c->dev, c->client, key, c->rank, c->size, device, what, enqueue,
               NULL, o, c->last_error, sizeof(c->last_error));
    return r ? comm_fail(c, r, "%s", c->last_error) : 0;
}

/* Packs the group into the device fusion buffer (grown to threshold at
 * most) and reduces it in place (fused), then unpacks it (unpack): all
 * queued on one stream. */
typedef struct fused_group {
    coll_request **g;
    int ng;
    size_t threshold;
} fused_group;

static ncclResult_t
fused(dev_comm *d, const void *arg)
{
    const fused_group *fg = arg;
    coll_request **g = fg->g;
    int ng = fg->ng;
    size_t threshold = fg->threshold;
    size_t es = coll_dtype_size(g[0]->dt), total = 0, off = 0;
    ncclDataType_t t = nccl_type(g[0]->dt);

    if (ng == 1)
        return g[0]->count
                   ? ncclAllReduce(g[0]->send, g[0]->recv, g[0]->count, t,
                                   nccl_op(g[0]->op), d->nccl, d->stream)
                   : ncclSuccess;
    for (int i = 0; i < ng; i++)
        total += g[i]->count * es;
    if (d->fusion_bytes < total) {
        size_t want = total > threshold ? total : threshold;
        cudaFree(d->fusion);
        d->fusion_bytes = 0;
        if (cudaMalloc(&d->fusion, want) != cudaSuccess)
            return ncclSystemError;
        d->fusion_bytes = want;
    }
    char *buf = d->fusion;
    for (int i = 0; i < ng; off += g[i++]->count * es)
        if (cudaMemcpyAsync(buf + off, g[i]->send, g[i]->count * es,
                            cudaMemcpyDeviceToDevice, d->stream) != cudaSuccess)
            return ncclUnhandledCudaError;
    return ncclAllReduce(buf, buf, total / es, t, nccl_op(g[0]->op), d->nccl,
                         d->stream);
}

static ncclResult_t
unpack(dev_comm *d, const void *arg)
{
    const fused_group *fg = arg;
    size_t es = coll_dtype_size(fg->g[0]->dt), off = 0;

    for (int i = 0; fg->ng > 1 && i < fg->ng; off += fg->g[i++]->count * es)
        if (cudaMemcpyAsync(fg->g[i]->recv, (char *)d->fusion + off,
                            fg->g[i]->count * es, cudaMemcpyDeviceToDevice,
                            d->stream) != cudaSuccess)
            return ncclUnhandledCudaError;
    return ncclSuccess;
}

int
dev_fused_allreduce(dev_comm **dc, hvdd_client *kv, const char *key, int rank,
                    int size, coll_request **g, int ng, size_t threshold,
                    char *err, size_t errlen)
{
    int device = nc_buffer_device(g[0]->recv);

    for (int i = 0; i < ng; i++)
        if (nc_buffer_device(g[i]->send) != device ||
            nc_buffer_device(g[i]->recv) != device) {
            snprintf(err, errlen,
                     "allreduce_async: '%s': buffers on different GPUs",
                     g[i]->name);
            return COLL_EINVAL;
        }
    return nc_run(dc, kv, key, rank, size, device, "allreduce_async", fused,
                  unpack, &(fused_group){g, ng, threshold}, err, errlen);
}
