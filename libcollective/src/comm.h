/* The comm's definition, private to libcollective. */
#ifndef COLL_COMM_H
#define COLL_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "hvdd_client.h"
#include "collective.h"
#include "device.h"
#include "elementwise.h"
#include "transport.h"

/* The transports of the two-level collectives (hierarchical.c), each
 * made at its first use: this host's ranks, local_rank 0 of every host,
 * and reducescatter's lane of this rank's local_rank. */
typedef struct comm_hier {
    transport *local, *cross;
    /* for local_rank > 0: its local_rank's ranks across hosts (the
     * second level of reducescatter; local_rank 0's is cross) */
    transport *lane;
    /* for allgather: where each host's ranks begin (hosts + 1 entries,
     * the last = size), learnt at the first one; hosts < 0 when the ranks
     * are not numbered host by host (then allgather stays flat) */
    int *host_first;
    int hosts;
} comm_hier;

struct coll_comm {
    int rank, size;
    int local_rank, local_size;
    int cross_rank, cross_size;
    hvdd_client *client;   /* NULL for a job of one */
    transport_kind kind;   /* COLL_TRANSPORT: tcp or gloo */
    int shm;               /* COLL_SHM: ranks of one host share memory */
    transport *world;      /* every rank; NULL for a job of one */
    comm_hier hier;        /* the blocking calls' two levels */
    int hier_allreduce;    /* HOROVOD_HIERARCHICAL_ALLREDUCE, several hosts */
    int hier_allgather;    /* HOROVOD_HIERARCHICAL_ALLGATHER, likewise */
    int hier_shm;          /* several hosts, COLL_SHM on */
    char prefix[32];       /* of the world transport's keys */
    int dead;              /* a transport failure broke the comm */
    struct fusion *fusion; /* the async thread, once started */
    struct heartbeat *heartbeat; /* the heartbeat thread, if asked for */
    struct dev_comm *dev;        /* NCCL, at the first device buffer */
    int registered;              /* hvdd knows this rank */
    int elastic;                 /* HOROVOD_ELASTIC=1: rounds (elastic.c) */
    int round;                   /* the elastic round this comm is in */
    int fresh;                   /* that round has new workers */
    /* HOROVOD_TIMELINE, on the rank that was 0 at coll_init (timeline.h):
     * the blocking calls' events here, the async ones' in fusion.c */
    struct coll_timeline *timeline;
    int mark_cycles; /* HOROVOD_TIMELINE_MARK_CYCLES=1 */
    char last_error[512];
    /* the comm's own reference, dropped by coll_finalize, and one for
     * each request not yet waited for: a request waited for after
     * coll_finalize still reads its comm (atomic; a coll_wait on one
     * thread while another finalizes is still not supported) */
    int refs;
};

/* 1 when `times` buffers of n elements of es bytes each are more than
 * memory can hold: count * size wrapped (a small buffer was allocated,
 * or the small path taken, for a huge count). */
static inline int
comm_oversized(size_t n, size_t es, size_t times)
{
    return es && times && n > (size_t)PTRDIFF_MAX / es / times;
}

/* Drops one reference to c (comm.h's refs); the last frees it. */
void comm_release(coll_comm *c);

/* Sets c->last_error and returns code (marking the comm dead when the
 * transport failed). */
int comm_fail(coll_comm *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Connects a job of more than one rank through hvdd (its world
 * transport); nothing for a job of one. */
int comm_connect(coll_comm *c);
/* HOROVOD_TIMELINE on rank 0 (timeline.c): 0, or COLL_EINVAL when the
 * file cannot be written (said). */
int comm_timeline_open(coll_comm *c);
void comm_disconnect(coll_comm *c);
/* A transport of c's kind (no I/O yet) for rank of size, its keys under
 * c's prefix and name; shared memory when one_host (all its ranks are on
 * this host) and COLL_SHM allows. NULL when out of memory. */
transport *comm_transport_new(const coll_comm *c, const char *name, int rank,
                              int size, int one_host);

/* A client of the job's hvdd from the environment hvdrun set, or NULL
 * (out of memory, or no rendezvous address). */
hvdd_client *comm_new_client(void);
/* A fresh key prefix for a new transport (the same on every rank of c's
 * round); comm_prefix_restart starts the count again for a new round. */
void comm_prefix(const coll_comm *c, char *out, size_t size);
void comm_prefix_restart(void);
/* The world transport of c's identity: connected, a barrier, registered
 * with hvdd (coll_init and each elastic round). */
int comm_join_world(coll_comm *c);
/* HOROVOD_ELASTIC and HOROVOD_ELASTIC_ROUND (coll_init). */
void comm_elastic_read_env(coll_comm *c);
/* A worker of a host that joined an elastic job (HOROVOD_ELASTIC_JOIN=1)
 * registers before it connects, and takes its identity from hvdd's
 * answer: the round it was started for may be over (another host failed
 * while it started), and hvdd then gives it a rank of its host in the
 * round that runs. 0, or a COLL_ code (said). */
int comm_elastic_join_first(coll_comm *c);
/* Stops the async thread and frees the GPU communicator and every
 * transport (both levels, the world's); the client to hvdd stays. */
void comm_close_transports(coll_comm *c);
/* Stops the heartbeats; comm_unregister also tells hvdd this rank ended. */
void comm_stop_heartbeat(coll_comm *c);
/* A variable's whole number > 0, else dflt. */
long comm_env_long(const char *name, long dflt);
/* The timeout (HOROVOD_GLOO_TIMEOUT_SECONDS), as coll_init read it. */
int comm_timeout_ms(void);
/* Stops the async thread, once every rank asks (coll_finalize). */
void comm_fusion_stop(coll_comm *c);

/* Registers the rank with hvdd and starts heartbeats when hvdrun asked
 * for them; comm_unregister stops them and reports the exit. */
int comm_register(coll_comm *c, const char *addr, int port, const char *token);
void comm_unregister(coll_comm *c);

/* HOROVOD_HIERARCHICAL_ALLREDUCE=1 and a job where it can help; then
 * comm_hier_allreduce does allreduce of n pieces (send may be recv; avg
 * divides) in two levels on h's transports, named with tag (the same on
 * every rank); net is the transport of every rank (the comm's or the
 * fusion thread's), for learning the hosts' ranks once, and for a flat
 * allreduce where ranks are not numbered host by host. 0, or a code with
 * the detail in err. */
int comm_hier_wanted(const coll_comm *c);
int comm_hier_allreduce(const coll_comm *c, comm_hier *h, transport *net,
                        const char *tag, const transport_piece *piece, int n,
                        coll_dtype dt, coll_op op, char *err, size_t errlen);
/* Reads HOROVOD_HIERARCHICAL_ALLREDUCE and _ALLGATHER once (coll_init):
 * the fusion thread must not call getenv while Python may change the
 * environment. */
void comm_hier_read_env(coll_comm *c);
void comm_hier_free(comm_hier *h);
/* HOROVOD_HIERARCHICAL_ALLGATHER=1 and several hosts; then
 * comm_hier_allgatherv does allgatherv (transport.h's) in two levels:
 * within each host, across hosts among local_rank 0, then a broadcast
 * within each host; net is the transport of every rank (the comm's or
 * the fusion thread's), for learning the hosts' ranks once. */
int comm_hier_gather_wanted(const coll_comm *c);
int comm_hier_allgatherv(const coll_comm *c, comm_hier *h, transport *net,
                         const char *tag, const void *mine, void *all,
                         const size_t *bytes, char *err, size_t errlen);
/* The same with bytes from every rank (as transport_allgather). */
int comm_hier_allgather(const coll_comm *c, comm_hier *h, transport *net,
                        const char *tag, const void *mine, void *all,
                        size_t bytes, char *err, size_t errlen);

/* comm_hier_learn learns which ranks each host has (once, one exchange
 * on net); h->hosts < 0 when they are not numbered host by host.
 * comm_hier_open also makes and connects this rank's levels (once), *flat
 * set when the ranks are not numbered host by host. */
int comm_hier_learn(const coll_comm *c, comm_hier *h, transport *net, char *err,
                    size_t errlen);
int comm_hier_open(const coll_comm *c, comm_hier *h, transport *net,
                   const char *tag, int *flat, char *err, size_t errlen);
/* comm_hier_open_lane makes and connects (once) the lane of this rank's
 * local_rank across hosts (h->cross for local_rank 0, h->lane else), in
 * which it is rank host of h->hosts. */
int comm_hier_open_lane(const coll_comm *c, comm_hier *h, const char *tag,
                        int host, char *err, size_t errlen);

/* Several hosts and shared memory on (hierarchical_auto.c); then
 * comm_hier_broadcast does
 * broadcast (transport.h's) in two levels: within the root's host, across
 * hosts among local_rank 0, then within every other host. Flat where
 * every host has one rank or ranks are not numbered host by host. */
int comm_hier_broadcast_wanted(const coll_comm *c);
int comm_hier_broadcast(const coll_comm *c, comm_hier *h, transport *net,
                        const char *tag, void *buf, size_t bytes, int root,
                        char *err, size_t errlen);
/* Likewise comm_hier_reducescatter does reducescatter (transport.h's) in
 * two levels: within each host, then across hosts among the ranks of
 * each local_rank. Flat where broadcast is, and where hosts have
 * different numbers of ranks. */
int comm_hier_reducescatter_wanted(const coll_comm *c);
int comm_hier_reducescatter(const coll_comm *c, comm_hier *h, transport *net,
                            const char *tag, const void *send, void *recv,
                            size_t count, coll_dtype dt, coll_op op, char *err,
                            size_t errlen);

/* The first step of the blocking collectives (exchange.c): one
 * allgather of a fixed-size slot per rank with its arguments (a, b, d)
 * and, up to COMM_SMALL_BYTES, its data. 0 with *slots (the caller
 * frees them with comm_slots_release; rank i's data at comm_slot_data(slots,
 * i)) when every rank passed the same arguments; COLL_EMISMATCH on every
 * rank if not. comm_exchange_cap: slots that carry up to cap bytes. */
typedef struct {
    char *all;
    size_t stride; /* bytes from one rank's slot to the next */
    /* the timeline: the call's events end when its slots are released */
    struct coll_timeline *timeline;
    const char *what;
    int64_t count, dt;
} comm_slots;
/* 4 KiB at every size. Every rank receives every slot, so on many ranks
 * a small operation moves size x 4 KiB; but what the check does not carry
 * takes more steps: slots shrunk to 64 KiB / size made a 4 KiB allreduce
 * on 33 ranks (2 cores) take 10.6 ms instead of 1.4 (8 B: 1.4 instead
 * of 2.2). */
#define COMM_SMALL_BYTES 4096
/* A barrier on c's world transport. 0, or a code with c->last_error set
 * (starting with what). */
int comm_barrier(coll_comm *c, const char *what);
int comm_exchange(coll_comm *c, const char *what, int64_t a, int64_t b,
                  int64_t d, const void *data, size_t bytes, comm_slots *slots);
/* FNV-1a of a name: the same on every rank (requests' ids, the argument
 * check's collective, the timeline's tensors). */
uint64_t comm_name_hash(const char *s);
int comm_exchange_cap(coll_comm *c, const char *what, int64_t a, int64_t b,
                      int64_t d, const void *data, size_t bytes, size_t cap,
                      comm_slots *slots);
const char *comm_slot_data(const comm_slots *slots, int rank);
void comm_slots_release(comm_slots *slots);
/* A digest of a counts array, so that ranks can agree on all of it. */
int64_t comm_digest(const size_t *counts, int n);
/* alltoallv's check across ranks (alltoallv.c; dt as the exchange
 * compares it): each rank's recv_counts[r] must be rank r's
 * send_counts[rank]; 0, or COLL_EMISMATCH on every rank. data (bytes;
 * NULL: none) travels with the counts when it fits; then *slots (the
 * caller frees them) hold every rank's counts and data. */
int comm_agree_pairs(coll_comm *c, int64_t dt, const size_t *send_counts,
                     const size_t *recv_counts, const void *data, size_t bytes,
                     comm_slots *slots);
/* Elements start .. start + len of every rank's slot data, reduced in
 * rank order into out (the same bits on every rank). */
void comm_reduce_slots(const comm_slots *slots, int size, void *out,
                       size_t start, size_t len, coll_dtype dt, coll_op op);

/* What allreduce and reducescatter (kind: DEV_ALLREDUCE or
 * DEV_REDUCESCATTER) do first: check the arguments, hand GPU buffers to
 * NCCL, finish a job of one. 1 when the call is over (*result is its
 * result), 0 to go on. */
int comm_reduce_begin(coll_comm *c, int kind, const void *send, void *recv,
                      size_t count, coll_dtype dt, coll_op op, int *result);
/* A collective on GPU buffers (device_ops.c): checked across ranks like
 * the host path, then run by the NCCL backend. 0, or a code with
 * last_error set. */
int comm_on_device(coll_comm *c, const dev_op *o);
/* 0, or COLL_EINVAL for NULL, or COLL_EDEAD after a transport failure. */
int comm_usable(coll_comm *c);

extern _Thread_local char coll_init_detail[512];

#endif
