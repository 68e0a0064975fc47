/* The shared-memory transport for the ranks of one host: a segment (a
 * memfd, never a name in /dev/shm) that every rank maps, and the steps
 * the collectives are made of. Private to libcollective.
 *
 * A step: every rank writes its own area of the step's slot, posts (its
 * counter becomes the step's number + 1), waits until every rank has
 * posted, then reads the others' areas. Two slots alternate: a rank that
 * has seen every rank post step s knows every rank is done reading step
 * s - 1, so the slot of step s + 1 is free to write before that step
 * begins (the allreduce writes its reduced chunk there at once). */
#ifndef COLL_SHM_H
#define COLL_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

/* What one rank writes per step, at most: the chunk that the reductions
 * cut into size sub-blocks; rank 0 chooses it, and the others take its
 * choice from the segment's header. With a CPU per rank fewer steps pay:
 * on 2 ranks (2 cores), 1 MiB allreduces took 65-70 us in a long run
 * against 97-100 with 256 KiB, and 64 MiB 12.5-13.5 ms against 15. With
 * more ranks than CPUs each step waits for every rank to be scheduled,
 * and smaller ones pay: 4 ranks on 2 cores, ResNet-50's fused step took
 * 53 ms with 1 MiB against 46 with 256 KiB (medians of 6 in turns). */
#define SHM_SUBS_BYTES (1u << 20)
#define SHM_SUBS_SHARED (256u << 10)
/* With a CPU per rank, a broadcast or an allgather goes in pieces of
 * this many bytes a step, not a whole area: the next piece is written
 * while the last is read, and a piece stays in the core's 1 MiB L2 on
 * both sides. 2 ranks (2 cores), tests/bench/collectives, medians of 3
 * rounds, before -> after: broadcast of 1 MiB 185 -> 46 us, 4 MiB 453 ->
 * 157, 16 MiB 1682 -> 634, 64 MiB 6746 -> 3727; allgather of 1 MiB 180
 * -> 52, 4 MiB 570 -> 207, 64 MiB 8605 -> 6617 (pieces of 64 KiB to
 * 512 KiB were tried; 256 KiB was best or near it at every size from
 * 1 MiB). With more ranks than CPUs no difference stood out of the
 * noise, and whole areas stay there (fewer steps, each of which waits
 * for every rank to be scheduled). */
#define SHM_PIECE (256u << 10)
/* The reductions work in chunks of this many bytes, which stay in the L1
 * cache (32 KiB or more on x86 and Arm cores) while they are reduced and
 * copied (shm_reduce.c); a multiple of every element's size. */
#define SHM_CHUNK (16u << 10)
/* A rank's control line: its counter alone on a cache line, so that a
 * rank spinning on one peer's line does not slow another's writes. */
#define SHM_LINE 64

/* The segment begins with this, written by rank 0 before it publishes
 * the segment; the others check it against what they were told. */
typedef struct shm_header {
    uint64_t magic;
    uint32_t size;  /* ranks */
    uint32_t sub;   /* bytes of a sub-block */
    uint64_t bytes; /* of the segment */
    unsigned char nonce[16];
    /* ranks asleep on a futex: a poster wakes them only when some are */
    uint32_t sleepers __attribute__((aligned(SHM_LINE)));
} shm_header;

/* Rank k's control line: written by rank k alone. */
typedef struct shm_line {
    uint32_t posted; /* steps it has posted */
    int32_t pid;     /* its process, written once it has mapped the segment */
} shm_line;

typedef struct shm_transport {
    transport base;
    transport_spec spec;
    unsigned char *seg; /* the mapping */
    size_t seg_bytes;
    shm_header *head;
    unsigned char *lines; /* size control lines */
    unsigned char *slots; /* 2 slots of size areas */
    size_t sub;           /* bytes of one sub-block (a multiple of 64) */
    size_t area;          /* a rank's area: its size sub-blocks + one */
    uint32_t step;        /* steps this rank has posted */
    int *pidfd;           /* each peer's, to see it die (-1: none) */
    int *pid;
    /* Room the operations reuse, so that a call allocates nothing (a
     * malloc of a sub-block's 128 KiB was an mmap and page faults each
     * time, a third of a 32 KiB allreduce): */
    size_t *offsets;  /* 2 * (size + 1): blocks, slots, send and recv */
    const void **src; /* size: a reduction's inputs */
    const void **run; /* size: the same, for a run within one piece */
    void *chunk;      /* SHM_CHUNK bytes: a reduced chunk on its way out */
} shm_transport;

static inline shm_line *
shm_line_of(const shm_transport *t, int k)
{
    return (shm_line *)(t->lines + (size_t)k * SHM_LINE);
}

/* The segment (shm_segment.c): rank 0 makes it and publishes where it
 * is in hvdd's store; the others map it; connect returns once every rank
 * has. No descriptor of it remains open after. */
int shm_attach(shm_transport *t, const char *what, char *err, size_t errlen);
void shm_detach(shm_transport *t);

/* The geometry for size ranks and this rank's CPUs (sub, area,
 * seg_bytes); at attach, the others take rank 0's from its segment. */
void shm_geometry(shm_transport *t);

/* rank's area in the slot of step (the slot alternates). */
static inline unsigned char *
shm_area(const shm_transport *t, uint32_t step, int rank)
{
    return t->slots +
           ((size_t)(step & 1u) * (size_t)t->base.size + (size_t)rank) *
               t->area;
}

/* Posts this rank's step and waits until every rank has posted it
 * (shm_wait.c): 0, or COLL_ETRANSPORT when a rank died or did not post
 * within the timeout (err says which, what names the operation). */
int shm_step(shm_transport *t, const char *what, char *err, size_t errlen);

/* Streaming copies (shm_store.c): shm_streams says whether an
 * operation whose output is bytes long goes into the caller's buffers
 * with streaming stores (on x86-64, larger than spec.stream_above, which
 * shm_transport_new sets to shm_last_level_cache() where it is 0);
 * shm_store copies n bytes, streaming when told; shm_store_done orders
 * the streamed stores before what follows: the operation's return, or
 * the next post of a step. */
size_t shm_last_level_cache(void);
int shm_streams(const shm_transport *t, size_t bytes);
/* Whether an allreduce whose blocks are block bytes writes its reduced
 * chunks into its area with streaming stores (shm_reduce.c's
 * reduce_chunk): on x86-64, with a CPU per rank, blocks of a chunk or
 * more. */
int shm_shares(const shm_transport *t, size_t block);
void shm_store(void *dst, const void *src, size_t n, int stream);
void shm_store_done(int stream);

/* The operations (shm_transport.c, shm_reduce.c). */
int shm_allgatherv(transport *t, const void *mine, void *all,
                   const size_t *bytes, const char *what, char *err,
                   size_t errlen);
int shm_allreduce(transport *t, const transport_piece *piece, int n,
                  coll_dtype dt, coll_op op, char *err, size_t errlen);
int shm_reducescatter(transport *t, const void *send, void *recv, size_t count,
                      coll_dtype dt, coll_op op, char *err, size_t errlen);

/* Runs the allreduce over every part of the segment it uses, at connect
 * (shm_reduce.c), so that a job's first large calls do not pay for its
 * first use; errors named by what. */
int shm_rehearse(transport *t, const char *what, char *err, size_t errlen);

#endif
