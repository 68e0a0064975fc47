/* The collectives on GPU buffers, once the ranks agreed on the arguments
 * on the host (device_ops.c; NCCL would hang or read out of bounds on a
 * mismatch): NCCL moves the data on the communicator's stream and the
 * call waits for it. Built only with CUDA and NCCL. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "elementwise.h"
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
    return gpus > 0 && dev_buffer_device(p) >= 0;
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
        size_t start = elem_block_start(o->count, d->size, p, &len);
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
dev_run(dev_comm **dc, const dev_peers *peers, int device, const dev_op *o,
        char *err, size_t errlen)
{
    return nc_run(dc, peers, device, dev_kind_name(o->kind), enqueue, NULL, o,
                  err, errlen);
}

/* Packs the group into the device fusion buffer (grown to threshold at
 * most) and reduces it in place (fused), then unpacks it (unpack): all
 * queued on one stream. */
typedef struct fused_group {
    const dev_piece *g;
    int ng;
    coll_dtype dt;
    coll_op op;
    size_t threshold;
} fused_group;

static ncclResult_t
fused(dev_comm *d, const void *arg)
{
    const fused_group *fg = arg;
    const dev_piece *g = fg->g;
    int ng = fg->ng;
    size_t threshold = fg->threshold;
    size_t es = coll_dtype_size(fg->dt), total = 0, off = 0;
    ncclDataType_t t = nccl_type(fg->dt);

    if (ng == 1)
        return g[0].count ? ncclAllReduce(g[0].send, g[0].recv, g[0].count, t,
                                          nccl_op(fg->op), d->nccl, d->stream)
                          : ncclSuccess;
    for (int i = 0; i < ng; i++)
        total += g[i].count * es;
    if (d->fusion_bytes < total) {
        size_t want = total > threshold ? total : threshold;
        cudaFree(d->fusion);
        d->fusion_bytes = 0;
        if (cudaMalloc(&d->fusion, want) != cudaSuccess)
            return ncclSystemError;
        d->fusion_bytes = want;
    }
    char *buf = d->fusion;
    for (int i = 0; i < ng; off += g[i++].count * es)
        if (cudaMemcpyAsync(buf + off, g[i].send, g[i].count * es,
                            cudaMemcpyDeviceToDevice, d->stream) != cudaSuccess)
            return ncclUnhandledCudaError;
    return ncclAllReduce(buf, buf, total / es, t, nccl_op(fg->op), d->nccl,
                         d->stream);
}

static ncclResult_t
unpack(dev_comm *d, const void *arg)
{
    const fused_group *fg = arg;
    size_t es = coll_dtype_size(fg->dt), off = 0;

    for (int i = 0; fg->ng > 1 && i < fg->ng; off += fg->g[i++].count * es)
        if (cudaMemcpyAsync(fg->g[i].recv, (char *)d->fusion + off,
                            fg->g[i].count * es, cudaMemcpyDeviceToDevice,
                            d->stream) != cudaSuccess)
            return ncclUnhandledCudaError;
    return ncclSuccess;
}

int
dev_fused_allreduce(dev_comm **dc, const dev_peers *peers, const dev_piece *g,
                    int ng, coll_dtype dt, coll_op op, size_t threshold,
                    char *err, size_t errlen)
{
    int device = dev_buffer_device(g[0].recv);

    for (int i = 0; i < ng; i++)
        if (dev_buffer_device(g[i].send) != device ||
            dev_buffer_device(g[i].recv) != device) {
            snprintf(err, errlen,
                     "allreduce_async: '%s': buffers on different GPUs",
                     g[i].name);
            return COLL_EINVAL;
        }
    return nc_run(dc, peers, device, "allreduce_async", fused, unpack,
                  &(fused_group){g, ng, dt, op, threshold}, err, errlen);
}
