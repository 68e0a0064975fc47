/* The NCCL backend's interface to the rest of libcollective: buffers in
 * GPU memory go to NCCL instead of the host transports. The backend
 * (nccl_comm.c, nccl_ops.c) is built when CMake finds CUDA and NCCL; a
 * build without them cannot tell a device pointer from a host one, so
 * dev_pointer() is 0 there and nothing below is ever reached. It knows
 * nothing of the comm: the comm checks the arguments across ranks first
 * (device_ops.c) and says who the communicator joins (dev_peers).
 * Private to libcollective. */
#ifndef COLL_DEVICE_H
#define COLL_DEVICE_H

#include <stddef.h>

#include "collective.h"
#include "hvdd_client.h"

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

/* The operation's name, for errors. */
static inline const char *
dev_kind_name(dev_kind k)
{
    static const char *const names[] = {
        [DEV_ALLREDUCE] = "allreduce",        [DEV_BROADCAST] = "broadcast",
        [DEV_ALLGATHER] = "allgather",        [DEV_ALLGATHERV] = "allgatherv",
        [DEV_ALLTOALL] = "alltoall",          [DEV_ALLTOALLV] = "alltoallv",
        [DEV_REDUCESCATTER] = "reducescatter"};
    return names[k];
}

/* An NCCL communicator with its stream, on one GPU. */
typedef struct dev_comm dev_comm;

/* Who a communicator joins: rank of size; rank 0 puts NCCL's unique id
 * in hvdd's store (kv, under key; kv may be NULL for a job of one), the
 * others wait for it there, up to timeout_ms like every wait. */
typedef struct dev_peers {
    hvdd_client *kv;
    const char *key;
    int rank, size;
    int timeout_ms;
} dev_peers;

/* One request of a fused group of device buffers. */
typedef struct dev_piece {
    const void *send;
    void *recv;
    size_t count;
    const char *name; /* the request's, for errors */
} dev_piece;

/* Added to the type that ranks compare before a collective, so that a
 * rank with a device buffer and one with a host buffer disagree. */
#define DEV_ON_DEVICE 0x100

#ifdef COLL_HAVE_NCCL
/* The NCCL version this build was made with (NCCL_VERSION_CODE). */
int dev_nccl_version(void);
/* 1 when p is GPU (or managed) memory; 0 without a usable GPU. */
int dev_pointer(const void *p);
/* The GPU a buffer lives on, or -1 for host memory. */
int dev_buffer_device(const void *p);
/* The GPU d lives on; -1 for no communicator yet (d NULL). */
int dev_comm_device(const dev_comm *d);
/* Runs o (whose arguments every rank agreed on) through *dc, made at
 * the first call on GPU device for peers. 0 or a COLL_E* code with the
 * detail in err. */
int dev_run(dev_comm **dc, const dev_peers *peers, int device, const dev_op *o,
            char *err, size_t errlen);
/* The fusion thread's allreduce of ng device pieces of one type and op,
 * packed into a device fusion buffer of up to threshold bytes, through
 * *dc (made at the first call). */
int dev_fused_allreduce(dev_comm **dc, const dev_peers *peers,
                        const dev_piece *g, int ng, coll_dtype dt, coll_op op,
                        size_t threshold, char *err, size_t errlen);
void dev_comm_free(dev_comm *d);
#else
static inline int
dev_nccl_version(void)
{
    return 0;
}
static inline int
dev_pointer(const void *p)
{
    (void)p;
    return 0;
}
static inline int
dev_buffer_device(const void *p)
{
    (void)p;
    return -1;
}
static inline int
dev_comm_device(const dev_comm *d)
{
    (void)d;
    return -1;
}
static inline int
dev_run(dev_comm **dc, const dev_peers *peers, int device, const dev_op *o,
        char *err, size_t errlen)
{
    (void)dc, (void)peers, (void)device, (void)o, (void)err, (void)errlen;
    return COLL_ENOTSUP;
}
static inline int
dev_fused_allreduce(dev_comm **dc, const dev_peers *peers, const dev_piece *g,
                    int ng, coll_dtype dt, coll_op op, size_t threshold,
                    char *err, size_t errlen)
{
    (void)dc, (void)peers, (void)g, (void)ng, (void)dt, (void)op;
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
