/* The asynchronous calls: each builds a named request and hands it to
 * the comm's fusion thread (fusion.c), which runs it once every rank has
 * queued the same name; coll_test and coll_wait. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "device.h"
#include "fusion.h"

/* The same on every rank for the same name. */
static uint64_t
name_id(const char *name)
{
    return comm_name_hash(name) >> 1;
}

/* Checks the arguments (an allreduce's op and a broadcast's root too),
 * then runs the request at once in a job of one (with `alone`, the
 * blocking call) or queues it with the fusion thread; *out gets it. */
static int
queue_request(coll_comm *c, const char *what, const char *name,
              const coll_request *fields,
              int (*alone)(coll_comm *, coll_request *), coll_request **out)
{
    coll_request *q;
    int r;

    if (out)
        *out = NULL;
    if ((r = comm_usable(c)) != 0)
        return r;
    if (out == NULL || name == NULL || strlen(name) >= sizeof(q->name) ||
        coll_dtype_size(fields->dt) == 0 ||
        comm_oversized(fields->count, coll_dtype_size(fields->dt),
                       fields->kind == REQ_ALLGATHER ? (size_t)c->size : 1) ||
        (fields->count && (fields->send == NULL || fields->recv == NULL)))
        return comm_fail(c, COLL_EINVAL, "%s: bad argument", what);
    if (fields->kind == REQ_ALLREDUCE &&
        (fields->op < COLL_OP_SUM || fields->op > COLL_OP_PROD))
        return comm_fail(c, COLL_EINVAL, "%s: bad op", what);
    if (fields->kind == REQ_BROADCAST &&
        (fields->root < 0 || fields->root >= c->size))
        return comm_fail(c, COLL_EINVAL, "%s: bad root", what);
    if ((q = malloc(sizeof(*q))) == NULL)
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    *q = *fields;
    q->id = name_id(name);
    snprintf(q->name, sizeof(q->name), "%s", name);
    q->comm = c;
    q->on_device = dev_pointer(q->send) || dev_pointer(q->recv);
    if (q->on_device && q->kind != REQ_ALLREDUCE) {
        free(q);
        return comm_fail(c, COLL_ENOTSUP,
                         "%s: GPU buffers: use the blocking call", what);
    }
    if (c->size == 1) { /* nothing to agree on */
        q->result = alone(c, q);
        q->done = 1;
    } else if ((r = fusion_enqueue(c, q)) != 0)
        return r;
    __atomic_add_fetch(&c->refs, 1, __ATOMIC_ACQ_REL); /* until coll_wait */
    *out = q;
    return 0;
}

static int
allreduce_alone(coll_comm *c, coll_request *q)
{
    return coll_allreduce(c, q->send, q->recv, q->count, q->dt, q->op);
}

static int
allgather_alone(coll_comm *c, coll_request *q)
{
    return coll_allgather(c, q->send, q->recv, q->count, q->dt);
}

static int
broadcast_alone(coll_comm *c, coll_request *q)
{
    return coll_broadcast(c, q->recv, q->count, q->dt, q->root);
}

int
coll_allreduce_async(coll_comm *c, const char *name, const void *send,
                     void *recv, size_t count, coll_dtype dt, coll_op op,
                     coll_request **out)
{
    return queue_request(c, "allreduce_async", name,
                         &(coll_request){.send = send,
                                         .recv = recv,
                                         .count = count,
                                         .dt = dt,
                                         .op = op,
                                         .kind = REQ_ALLREDUCE},
                         allreduce_alone, out);
}

int
coll_allgather_async(coll_comm *c, const char *name, const void *send,
                     void *recv, size_t count, coll_dtype dt,
                     coll_request **out)
{
    return queue_request(c, "allgather_async", name,
                         &(coll_request){.send = send,
                                         .recv = recv,
                                         .count = count,
                                         .dt = dt,
                                         .kind = REQ_ALLGATHER},
                         allgather_alone, out);
}

int
coll_broadcast_async(coll_comm *c, const char *name, void *buf, size_t count,
                     coll_dtype dt, int root, coll_request **out)
{
    return queue_request(c, "broadcast_async", name,
                         &(coll_request){.send = buf,
                                         .recv = buf,
                                         .count = count,
                                         .dt = dt,
                                         .kind = REQ_BROADCAST,
                                         .root = root},
                         broadcast_alone, out);
}

int
coll_join(coll_comm *c, int *last)
{
    int r;

    if ((r = comm_usable(c)) != 0)
        return r;
    if (last == NULL)
        return comm_fail(c, COLL_EINVAL, "join: no place for the result");
    if (c->size == 1) { /* nobody to wait for */
        *last = 0;
        return 0;
    }
    return fusion_join(c, last);
}

int
coll_test(coll_request *q, int *done)
{
    fusion *f;

    if (q == NULL || done == NULL)
        return COLL_EINVAL;
    f = q->comm->fusion;
    if (f)
        pthread_mutex_lock(&f->mu);
    *done = q->done;
    if (f)
        pthread_mutex_unlock(&f->mu);
    return 0;
}

int
coll_wait(coll_request *q)
{
    coll_comm *c;
    fusion *f;
    int r;

    if (q == NULL)
        return COLL_EINVAL;
    c = q->comm;
    f = c->fusion; /* (NULL once coll_finalize stopped it) */
    if (f) {
        pthread_mutex_lock(&f->mu);
        while (!q->done && !f->stopped)
            pthread_cond_wait(&f->changed, &f->mu);
        pthread_mutex_unlock(&f->mu);
    }
    r = q->done ? q->result : COLL_EDEAD;
    if (r != 0 && q->error[0])
        comm_fail(c, r, "%s: %s", q->name, q->error);
    free(q);
    comm_release(c);
    return r;
}
