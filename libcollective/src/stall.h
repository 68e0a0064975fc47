/* Horovod's stall check, on rank 0's fusion thread: names that some ranks
 * have queued and others have not for HOROVOD_STALL_CHECK_TIME_SECONDS
 * (default 60) give Horovod's warning, every that many seconds, with a
 * "R: [name, ...]" line per missing rank (at most 6 names); past
 * HOROVOD_STALL_SHUTDOWN_TIME_SECONDS (0: never; ignored below the
 * warning time, as Horovod does) the ranks stalled that long are marked
 * '!' and the job is to stop. HOROVOD_STALL_CHECK_DISABLE=1 turns it
 * off. This is the bookkeeping; fusion.c feeds it each cycle's queues and
 * sends the warning through hvdd (the library never prints). */
#ifndef COLL_STALL_H
#define COLL_STALL_H

#include <stddef.h>
#include <stdint.h>

typedef struct stall_check stall_check;

/* The settings, read in the caller's thread. */
typedef struct stall_settings {
    int on;
    double warn_s, shutdown_s; /* shutdown_s 0: never */
} stall_settings;
void stall_settings_read(stall_settings *s);

/* NULL when off (or out of memory). */
stall_check *stall_new(const stall_settings *s, int size);
void stall_free(stall_check *sc);

/* A cycle: every id each rank has queued now, then the report. */
void stall_cycle_begin(stall_check *sc);
void stall_seen(stall_check *sc, int64_t id, int rank, double now);
/* The request ran, failed or expired on rank 0: a later one of the same
 * name (the next step's) starts its own clock. */
void stall_forget(stall_check *sc, int64_t id);
/* The name of a request id (NULL: unknown). */
typedef const char *(*stall_name_fn)(void *arg, int64_t id);
/* Checked every cycle; due when a name is newly stalled past the warning
 * time, past the shutdown time, or again a warning time after the last
 * warning: 1 with Horovod's warning in text (and
 * *shutdown set, with the one-line reason, when a rank is stalled past
 * the shutdown time); 0 when nothing is due. */
int stall_report(stall_check *sc, double now, stall_name_fn name_of, void *arg,
                 char *text, size_t size, int *shutdown, char *reason,
                 size_t rsize);

#endif
