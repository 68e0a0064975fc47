/* NCCL communicators: made from a unique id that rank 0 publishes in
 * hvdd's store, bound to one GPU and one stream, and always non-blocking
 * (ncclConfig_t.blocking = 0) so that every wait polls NCCL's
 * asynchronous error against a deadline: a dead peer or a timeout ends in
 * an error and an aborted communicator, never in a hang. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collective.h"
#include "hvd_clock.h"
#include "nccl_comm.h"

/* How often a wait looks at the stream: a small fraction of a small
 * NCCL operation. */
#define POLL_NS 20000

static void
nap(void)
{
    struct timespec ts = {0, POLL_NS};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int
nccl_error(dev_comm *d, ncclResult_t r, const char *what, char *err,
           size_t errlen)
{
    const char *last = d && d->nccl ? ncclGetLastError(d->nccl) : "";

    snprintf(err, errlen, "%s: NCCL: %s%s%s", what, ncclGetErrorString(r),
             last && *last ? ": " : "", last ? last : "");
    if (d && d->nccl && !d->aborted) {
        ncclCommAbort(d->nccl);
        d->aborted = 1;
    }
    return r == ncclInvalidArgument || r == ncclInvalidUsage ? COLL_EINVAL
                                                             : COLL_ETRANSPORT;
}

static int
timed_out(dev_comm *d, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "%s: NCCL: no progress in %d s (a peer died or stopped "
             "calling); the communicator was aborted",
             what, d->timeout_ms / 1000);
    ncclCommAbort(d->nccl);
    d->aborted = 1;
    return COLL_ETRANSPORT;
}

int
nc_issued(dev_comm *d, ncclResult_t r, const char *what, char *err,
          size_t errlen)
{
    double deadline = hvd_mono_now() + d->timeout_ms / 1000.0;

    while (r == ncclInProgress) {
        if (hvd_mono_now() > deadline)
            return timed_out(d, what, err, errlen);
        nap();
        if (ncclCommGetAsyncError(d->nccl, &r) != ncclSuccess)
            r = ncclInternalError;
    }
    return r == ncclSuccess ? 0 : nccl_error(d, r, what, err, errlen);
}

int
nc_wait(dev_comm *d, const char *what, char *err, size_t errlen)
{
    double deadline = hvd_mono_now() + d->timeout_ms / 1000.0;
    ncclResult_t async;
    cudaError_t ce;

    while ((ce = cudaStreamQuery(d->stream)) == cudaErrorNotReady) {
        if (ncclCommGetAsyncError(d->nccl, &async) != ncclSuccess)
            async = ncclInternalError;
        if (async != ncclSuccess && async != ncclInProgress)
            return nccl_error(d, async, what, err, errlen);
        if (hvd_mono_now() > deadline)
            return timed_out(d, what, err, errlen);
        nap();
    }
    if (ce == cudaSuccess)
        return 0;
    snprintf(err, errlen, "%s: CUDA: %s", what, cudaGetErrorString(ce));
    ncclCommAbort(d->nccl);
    d->aborted = 1;
    return COLL_ETRANSPORT;
}

int
dev_buffer_device(const void *p)
{
    struct cudaPointerAttributes a;

    if (p == NULL || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError(); /* a host pointer is not an error to keep */
        return -1;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged
               ? a.device
               : -1;
}

int
nc_enter(dev_comm *d, int *prev, char *err, size_t errlen)
{
    cudaError_t ce;

    *prev = -1;
    if (cudaGetDevice(prev) != cudaSuccess)
        *prev = -1;
    if (*prev == d->device)
        return 0;
    if ((ce = cudaSetDevice(d->device)) != cudaSuccess) {
        snprintf(err, errlen, "cannot use GPU %d: %s", d->device,
                 cudaGetErrorString(ce));
        return COLL_ETRANSPORT;
    }
    return 0;
}

void
nc_leave(int prev)
{
    int now;

    if (prev >= 0 && cudaGetDevice(&now) == cudaSuccess && now != prev)
        cudaSetDevice(prev);
}

/* The 128-byte id: made by rank 0, read by the others from hvdd. */
static int
share_id(ncclUniqueId *id, hvdd_client *kv, const char *key, int rank, int size,
         int timeout_ms, char *err, size_t errlen)
{
    ncclResult_t nr;
    char *data = NULL;
    size_t len = 0;
    int r;

    if (rank == 0) {
        if ((nr = ncclGetUniqueId(id)) != ncclSuccess)
            return nccl_error(NULL, nr, "NCCL unique id", err, errlen);
        if (size == 1)
            return 0;
        r = hvdd_client_put(kv, "nccl", key, id, sizeof(*id));
    } else {
        r = hvdd_client_get(kv, "nccl", key, timeout_ms, &data, &len);
        if (r == 0 && len == sizeof(*id))
            memcpy(id, data, sizeof(*id));
        else if (r == 0)
            r = -1;
        free(data);
    }
    if (r != 0) {
        snprintf(err, errlen, "NCCL unique id through hvdd (key %s): %s", key,
                 hvdd_client_error(kv));
        return COLL_ERENDEZVOUS;
    }
    return 0;
}

static int
make(dev_comm *d, hvdd_client *kv, const char *key, char *err, size_t errlen)
{
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    ncclUniqueId id;
    cudaError_t ce;
    int r;

    if ((ce = cudaStreamCreate(&d->stream)) != cudaSuccess) {
        snprintf(err, errlen, "CUDA stream on GPU %d: %s", d->device,
                 cudaGetErrorString(ce));
        return COLL_ETRANSPORT;
    }
    if ((r = share_id(&id, kv, key, d->rank, d->size, d->timeout_ms, err,
                      errlen)) != 0)
        return r;
    cfg.blocking = 0;
    return nc_issued(
        d, ncclCommInitRankConfig(&d->nccl, d->size, id, d->rank, &cfg),
        "NCCL communicator", err, errlen);
}

int
nc_open(dev_comm **out, hvdd_client *kv, const char *key, int rank, int size,
        int device, int timeout_ms, char *err, size_t errlen)
{
    dev_comm *d = calloc(1, sizeof(*d));
    int prev, r;

    *out = NULL;
    if (d == NULL) {
        snprintf(err, errlen, "out of memory");
        return COLL_ENOMEM;
    }
    *d = (dev_comm){
        .device = device, .rank = rank, .size = size, .timeout_ms = timeout_ms};
    if ((r = nc_enter(d, &prev, err, errlen)) == 0) {
        r = make(d, kv, key, err, errlen);
        nc_leave(prev);
    }
    if (r != 0) {
        dev_comm_free(d);
        return r;
    }
    *out = d;
    return 0;
}

void
dev_comm_free(dev_comm *d)
{
    int prev;
    char err[256];

    if (d == NULL)
        return;
    if (nc_enter(d, &prev, err, sizeof(err)) == 0) {
        /* finalize flushes what is queued; a peer that is gone would
         * keep it busy, so it gets the timeout and then an abort */
        if (d->nccl && !d->aborted &&
            nc_issued(d, ncclCommFinalize(d->nccl), "finalize", err,
                      sizeof(err)) == 0)
            ncclCommDestroy(d->nccl);
        cudaFree(d->fusion);
        if (d->stream)
            cudaStreamDestroy(d->stream);
        nc_leave(prev);
    }
    free(d);
}

int
nc_run(dev_comm **dc, const dev_peers *peers, int device, const char *what,
       nc_step start, nc_step then, const void *arg, char *err, size_t errlen)
{
    int prev, r;

    if (*dc == NULL &&
        (r = nc_open(dc, peers->kv, peers->key, peers->rank, peers->size,
                     device, peers->timeout_ms, err, errlen)) != 0)
        return r;
    if ((*dc)->aborted) {
        snprintf(err, errlen, "%s: the NCCL communicator failed earlier", what);
        return COLL_EDEAD;
    }
    if ((r = nc_enter(*dc, &prev, err, errlen)) != 0)
        return r;
    r = nc_issued(*dc, start(*dc, arg), what, err, errlen);
    if (r == 0 && then)
        r = nc_issued(*dc, then(*dc, arg), what, err, errlen);
    if (r == 0)
        r = nc_wait(*dc, what, err, errlen);
    nc_leave(prev);
    return r;
}

int
dev_comm_device(const dev_comm *d)
{
    return d ? d->device : -1;
}

int
dev_nccl_version(void)
{
    return NCCL_VERSION_CODE;
}
