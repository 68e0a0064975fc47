/* coll_check on the GPU: built with COLL_CHECK_GPU, coll_check's calls go
 * through these wrappers, which copy every buffer into GPU memory, call
 * the real function on the device copies (so libcollective takes its
 * NCCL path) and copy the results back. In-place calls stay in place. */
#ifndef GPU_SHIM_H
#define GPU_SHIM_H

#include <collective.h>

int gpu_allreduce(coll_comm *c, const void *send, void *recv, size_t count,
                  coll_dtype dt, coll_op op);
int gpu_broadcast(coll_comm *c, void *buf, size_t count, coll_dtype dt,
                  int root);
int gpu_allgather(coll_comm *c, const void *send, void *recv, size_t count,
                  coll_dtype dt);
int gpu_allgatherv(coll_comm *c, const void *send, size_t count, void *recv,
                   const size_t *counts, coll_dtype dt);
int gpu_alltoall(coll_comm *c, const void *send, void *recv, size_t count,
                 coll_dtype dt);
int gpu_alltoallv(coll_comm *c, const void *send, const size_t *send_counts,
                  void *recv, const size_t *recv_counts, coll_dtype dt);
int gpu_reducescatter(coll_comm *c, const void *send, void *recv, size_t count,
                      coll_dtype dt, coll_op op);
int gpu_allreduce_async(coll_comm *c, const char *name, const void *send,
                        void *recv, size_t count, coll_dtype dt, coll_op op,
                        coll_request **req);
int gpu_wait(coll_request *req);

/* The number of GPUs CUDA sees (0 without a GPU or a driver), and why
 * none when none. */
int gpu_count(const char **why);
/* Makes GPU local_rank % count current; 0 or -1. */
int gpu_select(int local_rank);
/* What must fail: fp16 compression of device buffers (not supported),
 * send on the host with recv on the GPU (invalid). Returns the number of
 * checks made; exits on a failure. */
int gpu_refusals(coll_comm *c);
/* Rank 0 with a device buffer, the others with host buffers: every rank
 * must get COLL_EMISMATCH (printed). 0 when it did. */
int gpu_mixed_ranks(coll_comm *c);

#ifndef GPU_SHIM_REAL_NAMES
#define coll_allreduce gpu_allreduce
#define coll_broadcast gpu_broadcast
#define coll_allgather gpu_allgather
#define coll_allgatherv gpu_allgatherv
#define coll_alltoall gpu_alltoall
#define coll_alltoallv gpu_alltoallv
#define coll_reducescatter gpu_reducescatter
#define coll_allreduce_async gpu_allreduce_async
#define coll_wait gpu_wait
#endif

#endif
