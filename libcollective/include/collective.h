/* libcollective: what a worker started by hvdrun links to learn who it is
 * and, in later versions, to sum, gather and broadcast with its peers.
 *
 * Every function returns 0 or a negative COLL_E* code; coll_strerror()
 * names a code and coll_last_error() gives the detail of a comm's last
 * failure. The library never prints and never exits. */
#ifndef COLLECTIVE_H
#define COLLECTIVE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define COLL_API __attribute__((visibility("default")))
#else
#define COLL_API
#endif

/* The error codes; the list only grows. */
#define COLL_ERRNO_MAP(X)                                                      \
    X(ENOMEM, -1, "out of memory")                                             \
    X(EINVAL, -2, "invalid argument")                                          \
    X(EIDENTITY, -3, "bad job identity in the environment")                    \
    X(ERENDEZVOUS, -4, "cannot reach the job's rendezvous daemon")             \
    X(ETRANSPORT, -5, "a peer failed or timed out")                            \
    X(EMISMATCH, -6, "ranks called the operation with different arguments")    \
    X(ENOTSUP, -7, "not supported by this build")                              \
    X(EDEAD, -8, "the communicator failed earlier and cannot be used")         \
    X(EREMOVED, -9, "this worker is not in the job's new round")

enum {
#define COLL_ERRNO_ENUM(name, val, text) COLL_##name = (val),
    COLL_ERRNO_MAP(COLL_ERRNO_ENUM)
#undef COLL_ERRNO_ENUM
};

/* Element types. */
typedef enum coll_dtype {
    COLL_DT_U8,
    COLL_DT_I8,
    COLL_DT_I32,
    COLL_DT_I64,
    COLL_DT_F16,
    COLL_DT_BF16,
    COLL_DT_F32,
    COLL_DT_F64
} coll_dtype;

/* Reductions; AVG is SUM divided by the number of ranks. */
typedef enum coll_op {
    COLL_OP_SUM,
    COLL_OP_AVG,
    COLL_OP_MIN,
    COLL_OP_MAX,
    COLL_OP_PROD
} coll_op;

/* One process's membership in the job. Opaque. */
typedef struct coll_comm coll_comm;

/* Reads the identity hvdrun gave (HOROVOD_RANK, HOROVOD_SIZE, ...; or
 * torchrun's RANK, WORLD_SIZE, ...). A process started without either is
 * a job of one, as in Horovod. A partial or inconsistent identity fails
 * with COLL_EIDENTITY; coll_last_error(NULL) then says why. On success
 * *out is a new comm that the caller frees with coll_finalize. */
COLL_API int coll_init(coll_comm **out);

/* Frees the comm; accepts NULL. */
COLL_API int coll_finalize(coll_comm *c);

/* The identity; each returns -1 for a NULL comm. */
COLL_API int coll_rank(const coll_comm *c);
COLL_API int coll_size(const coll_comm *c);
COLL_API int coll_local_rank(const coll_comm *c);
COLL_API int coll_local_size(const coll_comm *c);
COLL_API int coll_cross_rank(const coll_comm *c);
COLL_API int coll_cross_size(const coll_comm *c);

/* Blocking collectives. Every rank of the comm calls them in the same
 * order with the same count, dtype and op (checked: a mismatch returns
 * COLL_EMISMATCH on every rank instead of reaching the transport). A
 * failed peer or a timeout (HOROVOD_GLOO_TIMEOUT_SECONDS, default 30)
 * returns COLL_ETRANSPORT; the comm is then dead (COLL_EDEAD after). */

/* recv = op over ranks of send; send == recv works in place. F16 (IEEE
 * half) and BF16 hold uint16_t bit patterns. */
COLL_API int coll_allreduce(coll_comm *c, const void *send, void *recv,
                            size_t count, coll_dtype dt, coll_op op);
/* Horovod's Compression.fp16: f32 buffers travel (and are reduced) as
 * IEEE half, then come back to f32. Each value keeps about 3 decimal
 * digits: the error is within size * 2^-10 of the largest magnitude that
 * any rank contributes, and values beyond 65504 become infinite. */
COLL_API int coll_allreduce_fp16(coll_comm *c, const float *send, float *recv,
                                 size_t count, coll_op op);
/* Asynchronous allreduce with tensor fusion, Horovod's core feature. The
 * request is queued under `name` (unique among this rank's pending ones);
 * a background thread, every HOROVOD_CYCLE_TIME ms (default 1), agrees
 * with the other ranks on the names every rank has queued, packs those of
 * one type and op into buffers of up to HOROVOD_FUSION_THRESHOLD bytes
 * (default 64 MiB) and reduces each with one collective. Ranks may queue
 * names in different orders. send and recv must stay valid until
 * coll_wait. *req is freed by coll_wait. Every rank must use async calls
 * if any does, and coll_finalize waits for every rank's. */
typedef struct coll_request coll_request;
COLL_API int coll_allreduce_async(coll_comm *c, const char *name,
                                  const void *send, void *recv, size_t count,
                                  coll_dtype dt, coll_op op,
                                  coll_request **req);
/* The same for allgather (recv: size * count elements, every rank's send
 * in rank order) and broadcast (buf becomes root's): queued by name and
 * run by the same thread, each on its own (only allreduces are fused).
 * Host buffers only (COLL_ENOTSUP for GPU buffers). */
COLL_API int coll_allgather_async(coll_comm *c, const char *name,
                                  const void *send, void *recv, size_t count,
                                  coll_dtype dt, coll_request **req);
COLL_API int coll_broadcast_async(coll_comm *c, const char *name, void *buf,
                                  size_t count, coll_dtype dt, int root,
                                  coll_request **req);
/* Horovod's join: this rank has no more work (fewer batches than the
 * others). Until every rank has joined, its async thread takes part in the
 * other ranks' async allreduces with zeros (an average still divides by
 * the job's size); async allgathers, broadcasts and GPU allreduces fail
 * with COLL_ENOTSUP while a rank has joined. Returns once every rank has
 * joined, with the rank that joined last in *last. Every rank must call
 * it; it starts the async thread if no async call did. */
COLL_API int coll_join(coll_comm *c, int *last);
/* *done = 1 once the request has finished (then coll_wait returns at
 * once). */
COLL_API int coll_test(coll_request *req, int *done);
/* Waits for the request, frees it and returns its result. */
COLL_API int coll_wait(coll_request *req);

/* buf on every rank = buf on root. */
COLL_API int coll_broadcast(coll_comm *c, void *buf, size_t count,
                            coll_dtype dt, int root);
/* recv (size * count elements) = every rank's send, in rank order. */
COLL_API int coll_allgather(coll_comm *c, const void *send, void *recv,
                            size_t count, coll_dtype dt);
COLL_API int coll_barrier(coll_comm *c);

/* Rank r contributes counts[r] elements (count == counts[rank]); recv
 * holds them all in rank order. Every rank passes the same counts. */
COLL_API int coll_allgatherv(coll_comm *c, const void *send, size_t count,
                             void *recv, const size_t *counts, coll_dtype dt);
/* send holds size blocks of count elements, block r for rank r; recv gets
 * block `rank` of every rank, in rank order. */
COLL_API int coll_alltoall(coll_comm *c, const void *send, void *recv,
                           size_t count, coll_dtype dt);
/* send_counts[r] elements go to rank r (blocks in rank order), and
 * recv_counts[r] come from rank r; each rank's recv_counts[r] must equal
 * rank r's send_counts[rank] (checked). */
COLL_API int coll_alltoallv(coll_comm *c, const void *send,
                            const size_t *send_counts, void *recv,
                            const size_t *recv_counts, coll_dtype dt);
/* op over every rank's send (count elements); rank r receives block r:
 * count / size elements, one more for r < count % size. recv holds that
 * block. */
COLL_API int coll_reducescatter(coll_comm *c, const void *send, void *recv,
                                size_t count, coll_dtype dt, coll_op op);

/* Elastic jobs (HOROVOD_ELASTIC=1: the launcher runs the job in rounds,
 * hvdd's POST /v1/round; hvdrun --min-np starts one when a host fails).
 * After a
 * failure (an operation returned COLL_ETRANSPORT, the comm is dead) or
 * when coll_round_changed says the job's hosts changed, every worker
 * calls coll_reset: it leaves its round (async requests still queued fail
 * with COLL_EDEAD), waits for the next round of the job's rendezvous (up
 * to HOROVOD_ELASTIC_TIMEOUT seconds, default 600) and joins it with the
 * rank, size and local and cross identity hvdd gives it, on a new
 * transport. COLL_EREMOVED: this worker is not in the new round (it
 * should exit 0); COLL_ENOTSUP outside an elastic job. */
COLL_API int coll_reset(coll_comm *c);
/* The round the comm is in (0: the job's first), and whether that round
 * has new workers (coll_round_fresh: 1), which need the training state
 * from the others. */
COLL_API int coll_round(const coll_comm *c);
COLL_API int coll_round_fresh(const coll_comm *c);
/* *changed = 1 when the job has started a round after this comm's (a
 * host failed or was added): the caller should commit, or roll back, and
 * call coll_reset. One request to hvdd, whose answer may differ from one
 * rank to the next: ask on one rank and broadcast the answer, so that
 * every rank resets at the same step (collective.torch.elastic does).
 * coll_round and coll_round_fresh are 0 outside an elastic job. */
COLL_API int coll_round_changed(coll_comm *c, int *changed);

/* Bytes of one element. */
COLL_API size_t coll_dtype_size(coll_dtype dt);
/* The NCCL version (NCCL_VERSION_CODE) when this build has the NCCL
 * backend for GPU buffers, else 0: without it a GPU pointer must never be
 * passed. */
COLL_API int coll_nccl_built(void);

/* Static text for a code; never NULL. */
COLL_API const char *coll_strerror(int err);

/* The detail of the comm's last failure, or "" (owned by the comm). With
 * NULL: the detail of this thread's last failed coll_init. */
COLL_API const char *coll_last_error(const coll_comm *c);

#ifdef __cplusplus
}
#endif

#endif
