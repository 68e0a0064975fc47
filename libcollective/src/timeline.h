/* Horovod's timeline (HOROVOD_TIMELINE=FILE), written by rank 0: a Chrome
 * trace JSON array in which every tensor is a "process" (its name in a
 * process_name record) and its requests are begin/end events, so that
 * chrome://tracing and Perfetto open it as they open Horovod's. The file
 * is valid JSON after every write: it always ends with ']', and the next
 * write starts over it (as Horovod's writer does), so a job that is
 * killed leaves a readable timeline. Events gather in memory and go out
 * in one write per flush (a fusion cycle, a blocking call). Thread-safe:
 * the fusion thread and the caller's thread both write. */
#ifndef COLL_TIMELINE_H
#define COLL_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct coll_timeline coll_timeline;

/* Creates (truncates) path and writes the header; NULL with err when the
 * file cannot be written. */
coll_timeline *timeline_open(const char *path, char *err, size_t errlen);
/* Flushes and closes; NULL accepted. */
void timeline_close(coll_timeline *t);
/* Microseconds since the timeline was opened. */
int64_t timeline_now(const coll_timeline *t);
/* One event of tensor `tensor`: phase 'B' (begin), 'E' (end) or 'X' (an
 * instant of no duration, as Horovod marks a rank's readiness); name is
 * ignored for 'E'; args is NULL or JSON object members ("\"a\": 1"). */
void timeline_event(coll_timeline *t, const char *tensor, char phase,
                    const char *name, const char *args, int64_t ts);
/* A global instant (HOROVOD_TIMELINE_MARK_CYCLES: "CYCLE_START"). */
void timeline_marker(coll_timeline *t, const char *name, int64_t ts);
/* Writes what gathered since the last flush. */
void timeline_flush(coll_timeline *t);

/* "float32", ... (Horovod's names) for a coll_dtype. */
const char *timeline_dtype(int dt);

#endif
