/* What the comm writes to Horovod's timeline (timeline.h), on rank 0:
 *   blocking calls: tensor "<call>" (allreduce, broadcast, ...):
 *     NEGOTIATE_<CALL> (the argument check across ranks), then <CALL>
 *     with <TRANSPORT>_<CALL> inside, its end carrying dtype and shape;
 *   async requests (the fusion thread): tensor = the request's name:
 *     NEGOTIATE_<KIND> from the cycle any rank first queued it to the
 *     cycle every rank had, an instant per rank as it queued it (rank 0
 *     learns names only from its own queue: the others' ids wait for
 *     it), then <KIND> with QUEUE (behind earlier groups of the cycle)
 *     and <TRANSPORT>_<KIND> (its fused group on the wire) inside.
 * Groups are reduced in place, so there is no MEMCPY_IN/OUT_FUSION_BUFFER
 * phase on host buffers. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "id_index.h"
#include "timeline.h"
#include "timeline_events.h"

int
comm_timeline_open(coll_comm *c)
{
    const char *path = getenv("HOROVOD_TIMELINE");
    const char *marks = getenv("HOROVOD_TIMELINE_MARK_CYCLES");
    char err[300];

    if (path == NULL || path[0] == '\0' || c->rank != 0)
        return 0;
    if ((c->timeline = timeline_open(path, err, sizeof(err))) == NULL)
        return comm_fail(c, COLL_EINVAL, "%s", err);
    c->mark_cycles = marks && strcmp(marks, "1") == 0;
    return 0;
}

/* "ALLREDUCE" from "allreduce", "TCP_ALLREDUCE" from "tcp", ... */
static void
upper(char *out, size_t size, const char *a, const char *b)
{
    size_t i = 0;

    for (const char *s = a; s && *s && i + 1 < size; s++)
        out[i++] = (char)toupper((unsigned char)*s);
    if (a && b && i + 1 < size)
        out[i++] = '_';
    for (const char *s = b; s && *s && i + 1 < size; s++)
        out[i++] = (char)toupper((unsigned char)*s);
    out[i] = '\0';
}

static void
end_args(coll_timeline *t, const char *tensor, int dt, int64_t count)
{
    char args[160];

    snprintf(args, sizeof(args), "\"dtype\": \"%s\", \"shape\": \"[%lld]\"",
             timeline_dtype(dt), (long long)count);
    timeline_event(t, tensor, 'E', NULL, args, timeline_now(t));
}

void
comm_tl_call_begin(coll_comm *c, const char *what)
{
    char name[64];

    if (c->timeline == NULL)
        return;
    upper(name, sizeof(name), "negotiate", what);
    timeline_event(c->timeline, what, 'B', name, NULL,
                   timeline_now(c->timeline));
}

void
comm_tl_call_negotiated(coll_comm *c, const char *what, int ok,
                        comm_slots *slots, int64_t count, int64_t dt)
{
    coll_timeline *t = c->timeline;
    char name[64];

    if (t == NULL)
        return;
    timeline_event(t, what, 'E', NULL, ok ? NULL : "\"error\": true",
                   timeline_now(t));
    if (!ok) {
        timeline_flush(t);
        return;
    }
    upper(name, sizeof(name), what, NULL);
    timeline_event(t, what, 'B', name, NULL, timeline_now(t));
    upper(name, sizeof(name), c->world ? c->world->ops->name : "local", what);
    timeline_event(t, what, 'B', name, NULL, timeline_now(t));
    slots->timeline = t;
    slots->what = what;
    slots->count = count;
    slots->dt = dt;
}

void
comm_tl_call_end(comm_slots *slots)
{
    if (slots->timeline == NULL)
        return;
    timeline_event(slots->timeline, slots->what, 'E', NULL, NULL,
                   timeline_now(slots->timeline));
    end_args(slots->timeline, slots->what, (int)slots->dt, slots->count);
    timeline_flush(slots->timeline);
    slots->timeline = NULL;
}

/* ---- the fusion thread's requests ---- */

typedef struct tl_request {
    int64_t id;
    int kind;
    char name[128]; /* "" until rank 0 queues it */
    int64_t first;  /* the cycle any rank first had it */
    int64_t *ready; /* per rank: when it had it, or -1 */
    int begun;      /* NEGOTIATE written (the name is known) */
    int state;      /* 0 negotiating, 1 queued, 2 on the wire */
    int seen;       /* some rank had it this cycle */
    int dead;       /* done: dropped at the cycle's end */
} tl_request;

struct tl_fusion {
    coll_timeline *t;
    int size;
    tl_request *r;
    size_t n, cap;
    id_index index; /* id -> position in r */
};

static const char *kinds[] = {"allreduce", "allgather", "broadcast"};

tl_fusion *
tl_fusion_new(coll_timeline *t, int size)
{
    tl_fusion *f = t ? calloc(1, sizeof(*f)) : NULL;

    if (f) {
        f->t = t;
        f->size = size;
    }
    return f;
}

/* What a request left open closes, marked as failed (a request that
 * went away unfinished: expired elsewhere, the comm stopped or reset). */
static void
close_open(tl_fusion *f, tl_request *r)
{
    int64_t now = timeline_now(f->t);

    if (!r->begun || r->dead)
        return;
    if (r->state >= 1)
        timeline_event(f->t, r->name, 'E', NULL, NULL, now);
    timeline_event(f->t, r->name, 'E', NULL, "\"error\": true", now);
}

void
tl_fusion_free(tl_fusion *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->n; i++) {
        close_open(f, &f->r[i]);
        free(f->r[i].ready);
    }
    timeline_flush(f->t);
    free(f->r);
    id_index_release(&f->index);
    free(f);
}

static tl_request *
lookup(tl_fusion *f, int64_t id)
{
    long i = id_index_find(&f->index, id);

    return i >= 0 && !f->r[i].dead ? &f->r[i] : NULL;
}

/* At the cycle's end: requests done, or that no rank has any more, go. */
static void
sweep(tl_fusion *f)
{
    size_t k = 0;

    for (size_t i = 0; i < f->n; i++) {
        tl_request *r = &f->r[i];
        if (!r->seen || r->dead) {
            close_open(f, r);
            free(r->ready);
            continue;
        }
        r->seen = 0;
        f->r[k++] = *r;
    }
    f->n = k;
    id_index_clear(&f->index);
    for (size_t i = 0; i < f->n; i++)
        id_index_put(&f->index, f->r[i].id, i, f->n);
}

static tl_request *
add_request(tl_fusion *f, int64_t id, int kind, int64_t now)
{
    tl_request *r;

    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        tl_request *grown = realloc(f->r, cap * sizeof(*grown));
        if (grown == NULL)
            return NULL;
        f->r = grown;
        f->cap = cap;
    }
    r = &f->r[f->n];
    *r = (tl_request){.id = id, .kind = kind, .first = now};
    if ((r->ready = malloc(sizeof(int64_t) * (size_t)f->size)) == NULL)
        return NULL;
    for (int k = 0; k < f->size; k++)
        r->ready[k] = -1;
    id_index_put(&f->index, id, f->n, f->n);
    f->n++;
    return r;
}

/* NEGOTIATE_<KIND>'s begin and the instants so far, once the name is
 * known (they carry their own times). */
static void
begin(tl_fusion *f, tl_request *r)
{
    char name[64], rank[16];

    upper(name, sizeof(name), "negotiate", kinds[r->kind % 3]);
    timeline_event(f->t, r->name, 'B', name, NULL, r->first);
    for (int k = 0; k < f->size; k++)
        if (r->ready[k] >= 0) {
            snprintf(rank, sizeof(rank), "%d", k);
            timeline_event(f->t, r->name, 'X', rank, NULL, r->ready[k]);
        }
    r->begun = 1;
}

void
tl_fusion_seen(tl_fusion *f, int64_t id, int kind, int rank, const char *name)
{
    int64_t now;
    tl_request *r;
    char who[16];

    if (f == NULL || rank < 0 || rank >= f->size)
        return;
    now = timeline_now(f->t);
    if ((r = lookup(f, id)) == NULL &&
        (r = add_request(f, id, kind, now)) == NULL)
        return;
    r->seen = 1;
    if (r->ready[rank] < 0) {
        r->ready[rank] = now;
        if (r->begun) {
            snprintf(who, sizeof(who), "%d", rank);
            timeline_event(f->t, r->name, 'X', who, NULL, now);
        }
    }
    if (name && !r->begun) {
        snprintf(r->name, sizeof(r->name), "%s", name);
        begin(f, r);
    }
}

void
tl_fusion_start(tl_fusion *f, int64_t id)
{
    tl_request *r = f ? lookup(f, id) : NULL;
    char name[32];
    int64_t now;

    if (r == NULL || !r->begun || r->state != 0)
        return;
    now = timeline_now(f->t);
    timeline_event(f->t, r->name, 'E', NULL, NULL, now);
    upper(name, sizeof(name), kinds[r->kind % 3], NULL);
    timeline_event(f->t, r->name, 'B', name, NULL, now);
    timeline_event(f->t, r->name, 'B', "QUEUE", NULL, now);
    r->state = 1;
}

void
tl_fusion_wire(tl_fusion *f, int64_t id, const char *wire)
{
    tl_request *r = f ? lookup(f, id) : NULL;
    char name[64];
    int64_t now;

    if (r == NULL || r->state != 1)
        return;
    now = timeline_now(f->t);
    timeline_event(f->t, r->name, 'E', NULL, NULL, now);
    upper(name, sizeof(name), wire, kinds[r->kind % 3]);
    timeline_event(f->t, r->name, 'B', name, NULL, now);
    r->state = 2;
}

void
tl_fusion_done(tl_fusion *f, int64_t id, int ok, int dt, int64_t count)
{
    tl_request *r = f ? lookup(f, id) : NULL;
    int64_t now;

    if (r == NULL)
        return;
    now = timeline_now(f->t);
    if (r->begun) {
        /* close what is open: the phase, then the request */
        if (r->state >= 1)
            timeline_event(f->t, r->name, 'E', NULL, NULL, now);
        if (ok)
            end_args(f->t, r->name, dt, count);
        else
            timeline_event(f->t, r->name, 'E', NULL, "\"error\": true", now);
    }
    r->dead = 1;
}

void
tl_fusion_mark(tl_fusion *f, int busy)
{
    if (f && busy)
        timeline_marker(f->t, "CYCLE_START", timeline_now(f->t));
}

void
tl_fusion_flush(tl_fusion *f)
{
    if (f == NULL)
        return;
    sweep(f);
    timeline_flush(f->t);
}
