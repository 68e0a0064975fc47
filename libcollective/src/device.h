/* Buffers in GPU memory go to NCCL instead of Gloo. The NCCL backend
 * (nccl_comm.c, nccl_ops.c) is built when CMake finds CUDA and NCCL; a
 * build without them cannot tell a device pointer from a host one, so
 * dev_pointer() is 0 there and nothing below is ever reached. Private to
 * libcollective. */
#ifndef COLL_DEVICE_H
#define COLL_DEVICE_H

#include <stddef.h>

#include "client.h"
#include "collective.h"

struct coll_request;

/* One blocking collective on device buffers, as the public call got it. */
typedef enum dev_kind {
    DEV_ALLREDUCE,
    DEV_BROADCAST,
    DEV_ALLGATHER,
    DEV_ALLGATHERV,
    DEV_ALLTOALL,
    DEV_ALLTOALLV,
    DEV_REDUCESCATTER
} dev_kind;

typedef struct dev_op {
    dev_kind kind;
    const void *send;
    void *recv;            /* broadcast: the buffer */
    size_t count;          /* elements this rank sends */
    const size_t *counts;  /* allgatherv: per rank; alltoallv: to send */
    const size_t *rcounts; /* alltoallv: to receive */
    coll_dtype dt;
    coll_op op;
    int root;
} dev_op;

/* An NCCL communicator with its stream, on one GPU. */
typedef struct dev_comm dev_comm;

/* Added to the type that ranks compare before a collective, so that a
 * rank with a device buffer and one with a host buffer disagree. */
#define DEV_ON_DEVICE 0x100

#ifdef COLL_HAVE_NCCL
/* 1 when p is GPU (or managed) memory; 0 without a usable GPU. */
int dev_pointer(const void *p);
/* Checks the arguments across ranks, then runs o through the comm's
 * communicator (made at the first call, on the buffer's GPU). */
int dev_collective(coll_comm *c, const dev_op *o);
/* The fusion thread's allreduce of ng device requests of one type and op,
 * packed into a device fusion buffer of up to threshold bytes, through
 * the thread's own communicator *dc (made at the first call; its unique
 * id travels through kv under key). */
int dev_fused_allreduce(dev_comm **dc, hvdd_client *kv, const char *key,
                        int rank, int size, struct coll_request **g, int ng,
                        size_t threshold, char *err, size_t errlen);
void dev_comm_free(dev_comm *d);
#else
static inline int
dev_pointer(const void *p)
{
    (void)p;
    return 0;
}
static inline int
dev_collective(coll_comm *c, const dev_op *o)
{
    (void)c;
    (void)o;
    return COLL_ENOTSUP;
}
static inline int
dev_fused_allreduce(dev_comm **dc, hvdd_client *kv, const char *key, int rank,
                    int size, struct coll_request **g, int ng, size_t threshold,
                    char *err, size_t errlen)
{
    (void)dc, (void)kv, (void)key, (void)rank, (void)size, (void)g, (void)ng;
    (void)threshold, (void)err, (void)errlen;
    return COLL_ENOTSUP;
}
static inline void
dev_comm_free(dev_comm *d)
{
    (void)d;
}
#endif

#endif
