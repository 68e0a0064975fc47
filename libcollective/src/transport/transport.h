/* The seam between the comm and the networks that carry host buffers:
 * every host collective (the control exchange, allreduce, allgather(v),
 * broadcast, reducescatter, alltoall(v), barrier; fused and hierarchical
 * ones too) goes through a transport. Three implement it: the native TCP
 * ring (tcp/, the default) and Gloo's own algorithms (gloo/,
 * COLL_TRANSPORT=gloo) between hosts, and shared memory (shm/) among
 * the ranks of one host unless COLL_SHM=0. A transport knows nothing of the
 * comm: what it needs comes in a transport_spec. Private to libcollective. */
#ifndef COLL_TRANSPORT_H
#define COLL_TRANSPORT_H

#include <stddef.h>

#include "collective.h"
#include "hvdd_client.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The TCP transport's alltoall(v) goes on the ring's streams and chords
 * up to this many ranks by default (COLL_MESH_RANKS sets mesh_ranks), on
 * Gloo's
 * alltoall(v) beyond. On 33 ranks (2 cores) the chords took 6.0 ms for
 * 32 KiB and 18.7 for 1 MiB, Gloo 30.3 and 37.4. Beyond 256 neither was
 * measured; there each rank's descriptors (one per rank either way)
 * near the usual limit of 1024, and Gloo is the well-kept one. */
#define TRANSPORT_MESH_RANKS 256

/* What a transport needs to connect: no I/O happens until connect. */
typedef struct transport_spec {
    char prefix[96]; /* of its keys in hvdd's store, the same on every rank */
    int rank, size;
    char iface[64];      /* the interface hvdd chose (HOROVOD_GLOO_IFACE) */
    int timeout_ms;      /* the longest wait without progress */
    int cpu_each;        /* this host's ranks have a CPU each (else yield it) */
    int one_host;        /* every rank is on this host: shared memory */
    int mesh_ranks;      /* tcp: alltoall(v) on its own streams up to this many
                            ranks, on a Gloo transport beyond (COLL_MESH_RANKS) */
    size_t stream_above; /* shm: outputs of more bytes than this are written
                            with streaming stores (COLL_SHM_STREAM_BYTES;
                            0: the last level cache's size, which
                            shm_transport_new puts here) */
    char secret[160];    /* the job token (HVDD_TOKEN): tcp's streams prove
                            with it that both ends belong to the job */
    /* A new client of hvdd's store for the set-up, which the transport
     * frees; NULL when out of memory. */
    hvdd_client *(*open_store)(void);
} transport_spec;

/* One piece of a buffer that several requests make (a fused group):
 * reduced as one buffer, without a copy where the transport can. */
typedef struct transport_piece {
    const void *send;
    void *recv;
    size_t count;
} transport_piece;

typedef struct transport transport;

/* Every call returns 0 or a negative COLL_E* code with the detail in err
 * (what: the operation, for errors). Every rank of the transport makes
 * the same calls in the same order. */
typedef struct transport_ops {
    const char *name; /* "tcp", "gloo" (as COLL_TRANSPORT names them), "shm" */
    /* Joins the other ranks (coll_init's, or the first use's). */
    int (*connect)(transport *t, const char *what, char *err, size_t errlen);
    /* The control exchange: all holds size slots of bytes each, this
     * rank's filled in; afterwards every slot is. Only the first used
     * bytes of this rank's slot need to travel (shm copies no more of
     * each rank's slot than that rank's used, which may differ by rank;
     * the rest of a slot is then undefined). */
    int (*exchange)(transport *t, void *all, size_t bytes, size_t used,
                    const char *what, char *err, size_t errlen);
    /* recv = op over every rank's send (send may be recv; avg divides),
     * for n pieces taken as one buffer. */
    int (*allreduce)(transport *t, const transport_piece *piece, int n,
                     coll_dtype dt, coll_op op, char *err, size_t errlen);
    /* all gets one slot per rank in rank order: bytes[k] from rank k;
     * this rank's from mine (which may lie inside all), or, with mine
     * NULL, as the caller filled it in. */
    int (*allgatherv)(transport *t, const void *mine, void *all,
                      const size_t *bytes, const char *what, char *err,
                      size_t errlen);
    /* Every rank's buf becomes root's. */
    int (*broadcast)(transport *t, void *buf, size_t bytes, int root, char *err,
                     size_t errlen);
    /* recv = block rank of op over every rank's send, blocks as
     * elem_block_start cuts them (avg divides). */
    int (*reducescatter)(transport *t, const void *send, void *recv,
                         size_t count, coll_dtype dt, coll_op op, char *err,
                         size_t errlen);
    /* send block k (send_bytes[k]) goes to rank k; recv block k
     * (recv_bytes[k]) comes from it. Pairs agree (the caller checked);
     * send and recv do not overlap. */
    int (*alltoallv)(transport *t, const void *send, const size_t *send_bytes,
                     void *recv, const size_t *recv_bytes, const char *what,
                     char *err, size_t errlen);
    int (*barrier)(transport *t, const char *what, char *err, size_t errlen);
    void (*free)(transport *t);
} transport_ops;

/* What every transport begins with. */
struct transport {
    const transport_ops *ops;
    int rank, size;
};

typedef enum transport_kind { TRANSPORT_TCP, TRANSPORT_GLOO } transport_kind;

/* COLL_TRANSPORT: "tcp" (also unset or empty) or "gloo"; 0, or -1 for
 * anything else (*kind untouched). */
int transport_kind_from_env(transport_kind *kind);

/* COLL_SHM: "1" (also unset or empty) or "0"; 0, or -1 for anything
 * else (*on untouched). */
int transport_shm_from_env(int *on);

/* A transport of kind for spec (shared memory instead when spec->one_host;
 * no I/O yet), or NULL when out of memory.
 * Free it with transport_free (NULL accepted). */
transport *transport_new(transport_kind kind, const transport_spec *spec);
void transport_free(transport *t);

/* The implementations' constructors (tcp/, gloo/). */
transport *tcp_transport_new(const transport_spec *spec);
transport *gloo_transport_new(const transport_spec *spec);
transport *shm_transport_new(const transport_spec *spec);

/* size entries of bytes each (malloc'd; NULL when out of memory): the
 * sizes for the forms whose slots are all one size. */
size_t *transport_each(int size, size_t bytes);
/* allgatherv with every slot of bytes. */
int transport_allgather(transport *t, const void *mine, void *all, size_t bytes,
                        const char *what, char *err, size_t errlen);

/* 1 byte per rank through the exchange: what the native ring's barrier
 * is, for transports without one of their own. */
int transport_exchange_barrier(transport *t, const char *what, char *err,
                               size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
