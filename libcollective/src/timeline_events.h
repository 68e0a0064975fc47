/* The comm's timeline events (timeline_events.c): the blocking calls'
 * and the fusion thread's. Each does nothing without a timeline. */
#ifndef COLL_TIMELINE_EVENTS_H
#define COLL_TIMELINE_EVENTS_H

#include <stdint.h>

#include "comm.h"

/* A blocking call: its argument check begins; it ended (ok or not: the
 * call's events start, or end); its slots are released (the call ends). */
void comm_tl_call_begin(coll_comm *c, const char *what);
void comm_tl_call_negotiated(coll_comm *c, const char *what, int ok,
                             comm_slots *slots, int64_t count, int64_t dt);
void comm_tl_call_end(comm_slots *slots);

/* The fusion thread's requests, by id (the same on every rank). */
typedef struct tl_fusion tl_fusion;
/* NULL without a timeline. */
tl_fusion *tl_fusion_new(struct coll_timeline *t, int size);
void tl_fusion_free(tl_fusion *f);
/* A cycle's exchange showed rank's queue holding id (name: rank 0's own
 * request's, or NULL when rank 0 has not queued it yet). */
void tl_fusion_seen(tl_fusion *f, int64_t id, int kind, int rank,
                    const char *name);
/* Every rank has it: the negotiation is over, it waits for its group. */
void tl_fusion_start(tl_fusion *f, int64_t id);
/* Its group goes on the wire (transport: "tcp", "shm", "nccl", ...). */
void tl_fusion_wire(tl_fusion *f, int64_t id, const char *wire);
/* It finished (ok), or failed or was refused. */
void tl_fusion_done(tl_fusion *f, int64_t id, int ok, int dt, int64_t count);
/* HOROVOD_TIMELINE_MARK_CYCLES: a cycle that had requests; and the
 * cycle's events out. */
void tl_fusion_mark(tl_fusion *f, int busy);
void tl_fusion_flush(tl_fusion *f);

#endif
