/* The shared-memory transport (transport.h) for ranks that share a host:
 * the operations that move bytes without reducing them. Each goes in
 * steps of at most one area per rank (shm.h): the rank copies its part
 * into its area, the step, then every rank copies what it needs out. */
#include <stdlib.h>
#include <string.h>

#include "shm.h"

static shm_transport *
shm_of(transport *t)
{
    return (shm_transport *)t;
}

static int
st_connect(transport *t, const char *what, char *err, size_t errlen)
{
    int r = shm_attach(shm_of(t), what, err, errlen);

    return r != 0 ? r : shm_rehearse(t, what, err, errlen);
}

static size_t
least(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* The bytes a rank copies in per step of a broadcast or an allgather:
 * SHM_PIECE where rank 0 chose the sub-blocks of a CPU per rank (sub *
 * size above SHM_SUBS_SHARED), else an area. Every rank takes the same,
 * from the geometry in the segment's header. */
static size_t
piece_of(const shm_transport *s)
{
    return s->sub * (size_t)s->base.size > SHM_SUBS_SHARED
               ? least(SHM_PIECE, s->area)
               : s->area;
}

int
shm_allgatherv(transport *t, const void *mine, void *all, const size_t *bytes,
               const char *what, char *err, size_t errlen)
{
    shm_transport *s = shm_of(t);
    int p = t->size, me = t->rank, r = 0;
    size_t most = 0, at = 0, *off = s->offsets;

    for (int k = 0; k < p; at += bytes[k++]) {
        off[k] = at;
        most = bytes[k] > most ? bytes[k] : most;
    }
    size_t piece = piece_of(s);
    int stream = shm_streams(s, at);
    if (mine && (char *)all + off[me] != mine)
        memmove((char *)all + off[me], mine, bytes[me]);
    for (size_t done = 0; r == 0 && done < most; done += piece) {
        uint32_t step = s->step;
        if (done < bytes[me])
            memcpy(shm_area(s, step, me), (char *)all + off[me] + done,
                   least(piece, bytes[me] - done));
        r = shm_step(s, what, err, errlen);
        for (int k = 0; r == 0 && k < p; k++)
            if (k != me && done < bytes[k])
                shm_store((char *)all + off[k] + done, shm_area(s, step, k),
                          least(piece, bytes[k] - done), stream);
    }
    shm_store_done(stream);
    return r;
}

static int
st_exchange(transport *t, void *all, size_t bytes, size_t used,
            const char *what, char *err, size_t errlen)
{
    shm_transport *s = shm_of(t);
    uint32_t step = s->step;
    size_t *each;
    int r;

    /* the argument check of a small operation: one step, each rank's
     * used bytes (24 of its 4120 for an 8 B allreduce) after their count,
     * which may differ by rank (allgatherv); the choice rests on bytes,
     * the same on every rank, so that all take the same steps */
    if (bytes + sizeof(uint64_t) <= s->area && used <= bytes) {
        uint64_t n = used;
        unsigned char *mine = shm_area(s, step, t->rank);
        memcpy(mine, &n, sizeof(n));
        memcpy(mine + sizeof(n), (char *)all + bytes * t->rank, used);
        r = shm_step(s, what, err, errlen);
        for (int k = 0; r == 0 && k < t->size; k++) {
            const unsigned char *theirs = shm_area(s, step, k);
            memcpy(&n, theirs, sizeof(n));
            if (k != t->rank)
                memcpy((char *)all + bytes * k, theirs + sizeof(n),
                       n < bytes ? n : bytes);
        }
        return r;
    }
    if ((each = transport_each(t->size, bytes)) == NULL)
        return COLL_ENOMEM;
    r = shm_allgatherv(t, NULL, all, each, what, err, errlen);
    free(each);
    return r;
}

static int
st_broadcast(transport *t, void *buf, size_t bytes, int root, char *err,
             size_t errlen)
{
    shm_transport *s = shm_of(t);
    int r = 0;
    size_t piece = piece_of(s);
    int stream = t->rank != root && shm_streams(s, bytes);

    for (size_t done = 0; r == 0 && done < bytes; done += piece) {
        uint32_t step = s->step;
        size_t n = least(piece, bytes - done);
        if (t->rank == root)
            memcpy(shm_area(s, step, root), (char *)buf + done, n);
        r = shm_step(s, "broadcast", err, errlen);
        if (r == 0 && t->rank != root)
            shm_store((char *)buf + done, shm_area(s, step, root), n, stream);
    }
    shm_store_done(stream);
    return r;
}

/* The most bytes any pair sends: every rank knows only its own row, and
 * all must take the same number of steps. */
static int
largest_pair(shm_transport *s, const size_t *send_bytes,
             const size_t *recv_bytes, size_t *most, const char *what,
             char *err, size_t errlen)
{
    uint32_t step = s->step;
    uint64_t mine = 0, theirs;
    int r;

    for (int k = 0; k < s->base.size; k++) {
        mine = send_bytes[k] > mine ? send_bytes[k] : mine;
        mine = recv_bytes[k] > mine ? recv_bytes[k] : mine;
    }
    memcpy(shm_area(s, step, s->base.rank), &mine, sizeof(mine));
    r = shm_step(s, what, err, errlen);
    for (int k = 0; r == 0 && k < s->base.size; k++) {
        memcpy(&theirs, shm_area(s, step, k), sizeof(theirs));
        mine = theirs > mine ? theirs : mine;
    }
    *most = (size_t)mine;
    return r;
}

/* Block k of send goes to rank k a sub-block per step: this rank's area
 * holds one sub-block for every peer. */
static int
st_alltoallv(transport *t, const void *send, const size_t *send_bytes,
             void *recv, const size_t *recv_bytes, const char *what, char *err,
             size_t errlen)
{
    shm_transport *s = shm_of(t);
    int p = t->size, me = t->rank, r;
    size_t most, *soff = s->offsets, *roff = soff + p + 1;

    soff[0] = roff[0] = 0;
    for (int k = 0; k < p; k++) {
        soff[k + 1] = soff[k] + send_bytes[k];
        roff[k + 1] = roff[k] + recv_bytes[k];
    }
    memcpy((char *)recv + roff[me], (const char *)send + soff[me],
           send_bytes[me]);
    r = largest_pair(s, send_bytes, recv_bytes, &most, what, err, errlen);
    for (size_t done = 0; r == 0 && done < most; done += s->sub) {
        uint32_t step = s->step;
        unsigned char *area = shm_area(s, step, me);
        for (int k = 0; k < p; k++)
            if (k != me && done < send_bytes[k])
                memcpy(area + (size_t)k * s->sub,
                       (const char *)send + soff[k] + done,
                       least(s->sub, send_bytes[k] - done));
        r = shm_step(s, what, err, errlen);
        for (int k = 0; r == 0 && k < p; k++)
            if (k != me && done < recv_bytes[k])
                memcpy((char *)recv + roff[k] + done,
                       shm_area(s, step, k) + (size_t)me * s->sub,
                       least(s->sub, recv_bytes[k] - done));
    }
    return r;
}

static int
st_barrier(transport *t, const char *what, char *err, size_t errlen)
{
    return shm_step(shm_of(t), what, err, errlen);
}

static void
st_free(transport *t)
{
    shm_transport *s = shm_of(t);

    shm_detach(s);
    free(s->pidfd);
    free(s->pid);
    free(s->offsets);
    free(s->src);
    free(s->run);
    free(s->chunk);
    explicit_bzero(&s->spec, sizeof(s->spec));
    free(s);
}

static const transport_ops shm_ops = {
    .name = "shm",
    .connect = st_connect,
    .exchange = st_exchange,
    .allreduce = shm_allreduce,
    .allgatherv = shm_allgatherv,
    .broadcast = st_broadcast,
    .reducescatter = shm_reducescatter,
    .alltoallv = st_alltoallv,
    .barrier = st_barrier,
    .free = st_free,
};

transport *
shm_transport_new(const transport_spec *spec)
{
    shm_transport *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return NULL;
    s->base = (transport){&shm_ops, spec->rank, spec->size};
    s->spec = *spec;
    if (s->spec.stream_above == 0) /* (once, before any operation) */
        s->spec.stream_above = shm_last_level_cache();
    s->pidfd = malloc(sizeof(int) * (size_t)spec->size);
    for (int k = 0; s->pidfd && k < spec->size; k++)
        s->pidfd[k] = -1; /* before any st_free, which closes them */
    s->pid = calloc((size_t)spec->size, sizeof(int));
    s->offsets = calloc(2 * ((size_t)spec->size + 1), sizeof(size_t));
    s->src = calloc((size_t)spec->size, sizeof(*s->src));
    s->run = calloc((size_t)spec->size, sizeof(*s->run));
    s->chunk = aligned_alloc(SHM_LINE, SHM_CHUNK);
    if (s->pidfd == NULL || s->pid == NULL || s->offsets == NULL ||
        s->src == NULL || s->run == NULL || s->chunk == NULL) {
        st_free(&s->base);
        return NULL;
    }
    shm_geometry(s);
    return &s->base;
}
