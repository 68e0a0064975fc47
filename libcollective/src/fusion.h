/* Asynchronous requests with tensor fusion: a background thread per comm
 * that, every cycle, agrees with the other ranks on which named requests
 * every rank has queued, packs the allreduces into fusion buffers and
 * reduces each buffer with one collective (as Horovod's coordinator does);
 * allgathers and broadcasts run one by one. It uses its own transport
 * (the comm's kind), so blocking collectives may run beside it. The public
 * calls are in async.c. */
#ifndef COLL_FUSION_H
#define COLL_FUSION_H

#include <pthread.h>
#include <stdint.h>

#include "hvdd_client.h"
#include "collective.h"
#include "comm.h"
#include "transport.h"

/* What an async request does. */
typedef enum req_kind { REQ_ALLREDUCE, REQ_ALLGATHER, REQ_BROADCAST } req_kind;

struct coll_request {
    struct coll_request *next; /* in the pending list */
    coll_comm *comm;
    uint64_t id; /* hash of the name, the same on every rank */
    char name[128];
    const void *send;
    void *recv;
    size_t count;
    coll_dtype dt;
    coll_op op;
    req_kind kind;
    int root;         /* broadcast */
    int on_device;    /* GPU buffers: NCCL, fused in a device buffer */
    double queued_at; /* hvd_mono_now() when queued, for the stall timeout */
    int done;
    int result;
    char error[256];
    int stand_in;    /* a joined rank's zeros for another rank's request */
    int stall_named; /* its name went to hvdd for rank 0's stall warning */
};

typedef struct fusion {
    pthread_mutex_t mu;
    pthread_cond_t changed;
    pthread_t thread;
    int started;
    int stopping; /* this rank wants to stop; the thread stops when all do */
    int stopped;
    int sync_made;         /* mu and changed exist */
    transport *net;        /* its own: cycles and groups */
    const coll_comm *comm; /* its identity, for the two levels' transports */
    comm_hier hier;        /* its own, for hierarchical groups */
    struct dev_comm *dev;  /* NCCL, at the first device group */
    hvdd_client *kv;       /* the thread's own, for NCCL's unique id */
    char dev_key[48];      /* where that id goes in hvdd's store */
    coll_request *pending;
    double cycle_ms;
    size_t threshold; /* fusion buffer bytes */
    double timeout_s; /* the transport's (and NCCL's) */
    double expire_s;  /* a request not queued by every rank by then fails */
    int64_t *hdrs;    /* the cycle's exchange: 3 per rank */
    size_t *bytes;    /* and each rank's entry bytes */
    /* join (coll_join): this rank's wish, the cycle it joined in (+1; 0:
     * not joined), every rank's as the last exchange said, the outcome */
    int joining;
    int64_t cycle, joined_at;
    int64_t *joined; /* size entries */
    int join_done, join_last;
    int rank, size;
    int dead;
    struct tl_fusion *tl; /* rank 0's timeline events (timeline_events.h) */
    int mark_cycles;
    /* the stall check (stall.h): rank 0's bookkeeping; every rank's
     * client to hvdd, where the others put the names rank 0 lacks */
    struct stall_check *stall;
    double stall_warn_s; /* 0: off */
    hvdd_client *stall_client;
    char stall_prefix[40];
    char error[512];
} fusion;

/* Queues q (taken) with c's fusion thread, started at the first call;
 * 0 or a code (q freed). */
int fusion_enqueue(coll_comm *c, coll_request *q);
/* Horovod's join through c's fusion thread (started if needed): returns
 * once every rank has joined, with the last to join in *last. */
int fusion_join(coll_comm *c, int *last);

#endif
