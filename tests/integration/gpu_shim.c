/* The wrappers of gpu_shim.h: stage in, call the real function, stage
 * out. This file calls the real names (GPU_SHIM_REAL_NAMES). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_SHIM_REAL_NAMES
#include "fail.h"
#include "gpu_shim.h"

/* A call's buffers in GPU memory; recv == send when the call is in
 * place. */
typedef struct staged {
    void *send, *recv;
    void *host_recv;
    size_t recv_bytes;
} staged;

static void *
to_device(const void *host, size_t bytes)
{
    void *d = NULL;
    cudaError_t e = cudaMalloc(&d, bytes + 16); /* never a NULL buffer */

    if (e != cudaSuccess)
        FAIL("cudaMalloc %zu: %s", bytes, cudaGetErrorString(e));
    if (host && bytes &&
        (e = cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice)) != cudaSuccess)
        FAIL("cudaMemcpy to the GPU: %s", cudaGetErrorString(e));
    return d;
}

static staged
stage(const void *send, size_t send_bytes, void *recv, size_t recv_bytes)
{
    staged s = {NULL, NULL, recv, recv_bytes};

    s.recv = to_device(recv, recv_bytes);
    s.send = send == recv ? s.recv : to_device(send, send_bytes);
    return s;
}

static int
unstage(staged *s, int r)
{
    cudaError_t e;

    if (r == 0 && s->recv_bytes &&
        (e = cudaMemcpy(s->host_recv, s->recv, s->recv_bytes,
                        cudaMemcpyDeviceToHost)) != cudaSuccess)
        FAIL("cudaMemcpy from the GPU: %s", cudaGetErrorString(e));
    if (s->send != s->recv)
        cudaFree(s->send);
    cudaFree(s->recv);
    return r;
}

int
gpu_allreduce(coll_comm *c, const void *send, void *recv, size_t count,
              coll_dtype dt, coll_op op)
{
    size_t b = count * coll_dtype_size(dt);
    staged s = stage(send, b, recv, b);

    return unstage(&s, coll_allreduce(c, s.send, s.recv, count, dt, op));
}

int
gpu_broadcast(coll_comm *c, void *buf, size_t count, coll_dtype dt, int root)
{
    size_t b = count * coll_dtype_size(dt);
    staged s = stage(buf, b, buf, b);

    return unstage(&s, coll_broadcast(c, s.recv, count, dt, root));
}

int
gpu_allgather(coll_comm *c, const void *send, void *recv, size_t count,
              coll_dtype dt)
{
    size_t b = count * coll_dtype_size(dt);
    staged s = stage(send, b, recv, b * (size_t)coll_size(c));

    return unstage(&s, coll_allgather(c, s.send, s.recv, count, dt));
}

static size_t
sum(const size_t *counts, int n)
{
    size_t t = 0;

    for (int i = 0; i < n; i++)
        t += counts[i];
    return t;
}

int
gpu_allgatherv(coll_comm *c, const void *send, size_t count, void *recv,
               const size_t *counts, coll_dtype dt)
{
    size_t es = coll_dtype_size(dt);
    staged s = stage(send, count * es, recv, sum(counts, coll_size(c)) * es);

    return unstage(&s, coll_allgatherv(c, s.send, count, s.recv, counts, dt));
}

int
gpu_alltoall(coll_comm *c, const void *send, void *recv, size_t count,
             coll_dtype dt)
{
    size_t b = count * coll_dtype_size(dt) * (size_t)coll_size(c);
    staged s = stage(send, b, recv, b);

    return unstage(&s, coll_alltoall(c, s.send, s.recv, count, dt));
}

int
gpu_alltoallv(coll_comm *c, const void *send, const size_t *send_counts,
              void *recv, const size_t *recv_counts, coll_dtype dt)
{
    size_t es = coll_dtype_size(dt);
    staged s = stage(send, sum(send_counts, coll_size(c)) * es, recv,
                     sum(recv_counts, coll_size(c)) * es);

    return unstage(
        &s, coll_alltoallv(c, s.send, send_counts, s.recv, recv_counts, dt));
}

int
gpu_reducescatter(coll_comm *c, const void *send, void *recv, size_t count,
                  coll_dtype dt, coll_op op)
{
    size_t es = coll_dtype_size(dt), n = (size_t)coll_size(c);
    size_t mine = count / n + ((size_t)coll_rank(c) < count % n);
    staged s = stage(send, count * es, recv, mine * es);

    return unstage(&s, coll_reducescatter(c, s.send, s.recv, count, dt, op));
}

/* Pending async requests and their device copies. */
#define MAX_PENDING 256
static struct {
    coll_request *req;
    staged s;
} pending[MAX_PENDING];

int
gpu_allreduce_async(coll_comm *c, const char *name, const void *send,
                    void *recv, size_t count, coll_dtype dt, coll_op op,
                    coll_request **req)
{
    size_t b = count * coll_dtype_size(dt);
    int i = 0, r;

    while (i < MAX_PENDING && pending[i].req)
        i++;
    if (i == MAX_PENDING)
        FAIL("more than %d async requests pending", MAX_PENDING);
    pending[i].s = stage(send, b, recv, b);
    r = coll_allreduce_async(c, name, pending[i].s.send, pending[i].s.recv,
                             count, dt, op, req);
    if (r != 0)
        return unstage(&pending[i].s, r);
    pending[i].req = *req;
    return 0;
}

int
gpu_wait(coll_request *req)
{
    for (int i = 0; i < MAX_PENDING; i++)
        if (pending[i].req == req) {
            pending[i].req = NULL;
            return unstage(&pending[i].s, coll_wait(req));
        }
    FAIL("gpu_wait: unknown request");
}

int
gpu_count(const char **why)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);

    *why = e == cudaSuccess ? "CUDA sees no device" : cudaGetErrorString(e);
    return e == cudaSuccess ? n : 0;
}

int
gpu_select(int local_rank)
{
    const char *why;
    int n = gpu_count(&why);

    return n > 0 && cudaSetDevice(local_rank % n) == cudaSuccess ? 0 : -1;
}

int
gpu_refusals(coll_comm *c)
{
    float host[4] = {1, 2, 3, 4};
    float *dev = to_device(host, sizeof(host));
    int r;

    if ((r = coll_allreduce_fp16(c, dev, dev, 4, COLL_OP_SUM)) != COLL_ENOTSUP)
        FAIL("allreduce_fp16 on the GPU: got %d, want COLL_ENOTSUP", r);
    if ((r = coll_allreduce(c, host, dev, 4, COLL_DT_F32, COLL_OP_SUM)) !=
        COLL_EINVAL)
        FAIL("allreduce from host to GPU memory: got %d, want COLL_EINVAL", r);
    cudaFree(dev);
    return 2;
}

int
gpu_mixed_ranks(coll_comm *c)
{
    float host[64] = {0};
    float *buf = coll_rank(c) == 0 ? to_device(host, sizeof(host)) : host;
    int r = coll_allreduce(c, buf, buf, 64, COLL_DT_F32, COLL_OP_SUM);

    printf("rank %d: mixed: %s: %s\n", coll_rank(c), coll_strerror(r),
           coll_last_error(c));
    if (buf != host)
        cudaFree(buf);
    return r == COLL_EMISMATCH ? 0 : 1;
}
