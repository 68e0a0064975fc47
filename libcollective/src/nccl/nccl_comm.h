/* What the two NCCL files share: the communicator and the calls that
 * bracket every use of it. Built only with CUDA and NCCL. */
#ifndef COLL_NCCL_COMM_H
#define COLL_NCCL_COMM_H

#include <cuda_runtime.h>
#include <nccl.h>

#include "device.h"

struct dev_comm {
    ncclComm_t nccl;
    cudaStream_t stream;
    int device; /* the GPU the communicator lives on */
    int rank, size;
    int timeout_ms; /* HOROVOD_GLOO_TIMEOUT_SECONDS, for every wait */
    int aborted;    /* after an error or a timeout: unusable */
    void *fusion;   /* the fusion thread's device buffer, once needed */
    size_t fusion_bytes;
};

/* Makes a communicator of size ranks on GPU device: rank 0 publishes the
 * unique id in hvdd's store (scope "nccl", key), the others wait for it
 * there (kv may be NULL for a job of one). */
int nc_open(dev_comm **out, hvdd_client *kv, const char *key, int rank,
            int size, int device, int timeout_ms, char *err, size_t errlen);

/* Makes d's GPU current for the calling thread; *prev is what to give
 * back to nc_leave. */
int nc_enter(dev_comm *d, int *prev, char *err, size_t errlen);
void nc_leave(int prev);

/* After an NCCL call (or ncclGroupEnd) that returned r: 0 once it is
 * enqueued; a COLL_E* code (the communicator aborted) if it failed or
 * did not get enqueued in time. */
int nc_issued(dev_comm *d, ncclResult_t r, const char *what, char *err,
              size_t errlen);
/* Waits until the stream's work is done, polling NCCL's asynchronous
 * error, up to the timeout; aborts the communicator on failure. */
int nc_wait(dev_comm *d, const char *what, char *err, size_t errlen);

/* What every NCCL operation does: makes *dc at the first call (nc_open's
 * arguments), refuses an aborted one, runs start(*dc, arg) on its GPU and
 * stream, then (when not NULL) then(*dc, arg) once start's NCCL work is
 * on the stream, and waits for it all (nc_issued, nc_wait). A
 * non-blocking communicator may return ncclInProgress before its work is
 * on the stream, and nothing else may go on the stream until it is: work
 * that must follow the NCCL call goes in then. */
typedef ncclResult_t (*nc_step)(dev_comm *, const void *);
int nc_run(dev_comm **dc, const dev_peers *peers, int device, const char *what,
           nc_step start, nc_step then, const void *arg, char *err,
           size_t errlen);

#endif
