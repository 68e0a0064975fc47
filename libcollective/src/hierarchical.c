/* Collectives in two levels. Allreduce as Horovod's
 * HOROVOD_HIERARCHICAL_ALLREDUCE (hvdrun --hierarchical-allreduce):
 * within each host on its local transport, then across hosts among the
 * ranks with local_rank 0 on their cross transport, then a broadcast
 * within each host; allgather likewise (HOROVOD_HIERARCHICAL_ALLGATHER).
 * Broadcast and reducescatter take two levels by themselves
 * (hierarchical_auto.c), on the levels made here. Only one rank per host
 * sends across hosts, which pays where the network between hosts is slower
 * than within them. Taking the cross step on local_rank 0 only keeps it
 * right when hosts have different numbers of ranks. The local transport
 * is shared memory (unless COLL_SHM=0).
 *
 * The comm's blocking calls have one pair of transports (and a lane per
 * local_rank for reducescatter), its fusion thread another (fused groups go the
 * same way), each connected at its first such call: every rank makes the call
 * at the same point of its sequence, so their keys match. That call also learns
 * which ranks each host has (one exchange on the comm's or the thread's
 * transport of every rank): ranks not numbered host by host stay flat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

static int
env_on(const char *name)
{
    const char *v = getenv(name);

    return v && strcmp(v, "1") == 0;
}

void
comm_hier_read_env(coll_comm *c)
{
    /* with several hosts; the same answer on every rank (local_size is
     * not: hosts may have different numbers of ranks) */
    int hosts = c->local_size < c->size;

    c->hier_allreduce = hosts && env_on("HOROVOD_HIERARCHICAL_ALLREDUCE");
    c->hier_allgather = hosts && env_on("HOROVOD_HIERARCHICAL_ALLGATHER");
    /* broadcast's and reducescatter's two levels: their gain needs the
     * local step on shared memory */
    c->hier_shm = hosts && c->shm;
}

int
comm_hier_wanted(const coll_comm *c)
{
    return c->hier_allreduce;
}

int
comm_hier_gather_wanted(const coll_comm *c)
{
    return c->hier_allgather;
}

void
comm_hier_free(comm_hier *h)
{
    transport_free(h->local);
    transport_free(h->cross);
    transport_free(h->lane);
    free(h->host_first);
    h->local = h->cross = h->lane = NULL;
    h->host_first = NULL;
}

/* The transport of a group, named by which, group and tag, made and
 * connected at its first use; none for a group of one. */
static int
open_group(const coll_comm *c, transport **t, const char *which, int group,
           const char *tag, int rank, int size, int one_host, char *err,
           size_t errlen)
{
    char name[64];
    int r;

    if (*t || size < 2)
        return 0;
    snprintf(name, sizeof(name), ".%s%d%s", which, group, tag);
    if ((*t = comm_transport_new(c, name, rank, size, one_host)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return COLL_ENOMEM;
    }
    r = (*t)->ops->connect(*t, "hierarchical", err, errlen);
    if (r != 0) {
        transport_free(*t);
        *t = NULL;
    }
    return r;
}

static int
cross_step(transport *cross, const transport_piece *piece, int n, coll_dtype dt,
           coll_op op, char *err, size_t errlen)
{
    transport_piece one, *in_place = n == 1 ? &one : malloc(sizeof(one) * n);
    int r;

    if (in_place == NULL) {
        snprintf(err, errlen, "out of memory");
        return COLL_ENOMEM;
    }
    for (int k = 0; k < n; k++)
        in_place[k] =
            (transport_piece){piece[k].recv, piece[k].recv, piece[k].count};
    r = cross->ops->allreduce(cross, in_place, n, dt, op, err, errlen);
    if (in_place != &one)
        free(in_place);
    return r;
}

/* Where each host's ranks begin, from every rank's local rank and size
 * and cross rank (one exchange on net, at the first call): hosts whose
 * ranks follow each other, local_rank 0 first, as many as their
 * local_size, cross_rank the host's index (as hvdrun numbers them), else
 * h->hosts = -1 (the caller stays flat). Kept only once learnt. */
int
comm_hier_learn(const coll_comm *c, comm_hier *h, transport *net, char *err,
                size_t errlen)
{
    int32_t *id;
    int *first, hosts = 0, r;

    if (h->host_first)
        return 0;
    id = calloc((size_t)c->size, 3 * sizeof(int32_t));
    first = calloc((size_t)c->size + 1, sizeof(int));
    if (id == NULL || first == NULL) {
        free(id);
        free(first);
        snprintf(err, errlen, "out of memory");
        return COLL_ENOMEM;
    }
    id[3 * c->rank] = c->local_rank;
    id[3 * c->rank + 1] = c->local_size;
    id[3 * c->rank + 2] = c->cross_rank;
    r = net->ops->exchange(net, id, 3 * sizeof(int32_t), 3 * sizeof(int32_t),
                           "hierarchical: hosts", err, errlen);
    for (int k = 0; r == 0 && k < c->size && hosts >= 0; k++) {
        int lr = id[3 * k], ls = id[3 * k + 1], cr = id[3 * k + 2];
        if (lr == 0 && cr == hosts && k + ls <= c->size)
            first[hosts++] = k;
        else if (lr == 0 || k == 0 || id[3 * (k - 1)] != lr - 1 ||
                 id[3 * (k - 1) + 1] != ls)
            hosts = -1;
    }
    if (r == 0 && hosts > 0) {
        first[hosts] = c->size;
        for (int j = 0; j < hosts; j++) /* each block its host's local_size */
            if (first[j + 1] - first[j] != id[3 * first[j] + 1])
                hosts = -1;
    }
    free(id);
    if (r != 0) {
        free(first);
        return r;
    }
    h->host_first = first;
    h->hosts = hosts;
    return 0;
}

/* What both kinds of call do first: learn the hosts (once), then make
 * and connect this rank's levels (once): its host's group, named by the
 * host's first rank, and for local_rank 0 the cross group. *flat: the
 * ranks are not numbered host by host, so the caller stays flat. */
int
comm_hier_open(const coll_comm *c, comm_hier *h, transport *net,
               const char *tag, int *flat, char *err, size_t errlen)
{
    int r = comm_hier_learn(c, h, net, err, errlen);

    *flat = r == 0 && h->hosts < 0;
    if (r == 0 && !*flat)
        r = open_group(c, &h->local, "local", c->rank - c->local_rank, tag,
                       c->local_rank, c->local_size, 1, err, errlen);
    if (r == 0 && !*flat && c->local_rank == 0)
        r = open_group(c, &h->cross, "cross", 0, tag, c->cross_rank,
                       c->cross_size, 0, err, errlen);
    return r;
}

int
comm_hier_allreduce(const coll_comm *c, comm_hier *h, transport *net,
                    const char *tag, const transport_piece *piece, int n,
                    coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    size_t es = coll_dtype_size(dt);
    coll_op how = op == COLL_OP_AVG ? COLL_OP_SUM : op;
    int flat, r = comm_hier_open(c, h, net, tag, &flat, err, errlen);

    if (r == 0 && flat) /* not numbered host by host: one flat allreduce */
        return net->ops->allreduce(net, piece, n, dt, op, err, errlen);
    if (r == 0 && h->local)
        r = h->local->ops->allreduce(h->local, piece, n, dt, how, err, errlen);
    for (int k = 0; r == 0 && !h->local && k < n; k++) /* alone on its host */
        if (piece[k].send != piece[k].recv && piece[k].count)
            memmove(piece[k].recv, piece[k].send, piece[k].count * es);
    if (r == 0 && c->local_rank == 0 && h->cross)
        r = cross_step(h->cross, piece, n, dt, how, err, errlen);
    for (int k = 0; r == 0 && h->local && k < n; k++)
        if (piece[k].count)
            r = h->local->ops->broadcast(h->local, piece[k].recv,
                                         piece[k].count * es, 0, err, errlen);
    for (int k = 0; r == 0 && op == COLL_OP_AVG && k < n; k++)
        elem_scale_avg(piece[k].recv, piece[k].count, dt, c->size);
    return r;
}

/* The two-level allgatherv once the hosts are known: this host's blocks
 * into place (local), every host's (cross), then the whole buffer from
 * local_rank 0 to its host. */
static int
gather_levels(const coll_comm *c, comm_hier *h, const void *mine, char *all,
              const size_t *bytes, char *err, size_t errlen)
{
    int first = c->rank - c->local_rank, r = 0;
    size_t at = 0, total = 0, *host_bytes = NULL;

    for (int k = 0; k < c->size; k++) {
        at += k < first ? bytes[k] : 0;
        total += bytes[k];
    }
    if (h->local)
        r = h->local->ops->allgatherv(h->local, mine, all + at, bytes + first,
                                      "allgatherv", err, errlen);
    else if (bytes[c->rank] && mine != all + at)
        memmove(all + at, mine, bytes[c->rank]);
    if (r == 0 && c->local_rank == 0 && h->cross) {
        if ((host_bytes = calloc((size_t)h->hosts, sizeof(size_t))) == NULL) {
            snprintf(err, errlen, "out of memory");
            return COLL_ENOMEM;
        }
        for (int j = 0; j < h->hosts; j++)
            for (int k = h->host_first[j]; k < h->host_first[j + 1]; k++)
                host_bytes[j] += bytes[k];
        r = h->cross->ops->allgatherv(h->cross, NULL, all, host_bytes,
                                      "allgatherv", err, errlen);
        free(host_bytes);
    }
    if (r == 0 && h->local && total)
        r = h->local->ops->broadcast(h->local, all, total, 0, err, errlen);
    return r;
}

int
comm_hier_allgatherv(const coll_comm *c, comm_hier *h, transport *net,
                     const char *tag, const void *mine, void *all,
                     const size_t *bytes, char *err, size_t errlen)
{
    int flat, r = comm_hier_open(c, h, net, tag, &flat, err, errlen);

    if (r == 0 && flat) /* not numbered host by host: flat */
        return net->ops->allgatherv(net, mine, all, bytes, "allgatherv", err,
                                    errlen);
    return r ? r : gather_levels(c, h, mine, all, bytes, err, errlen);
}

int
comm_hier_allgather(const coll_comm *c, comm_hier *h, transport *net,
                    const char *tag, const void *mine, void *all, size_t bytes,
                    char *err, size_t errlen)
{
    size_t *each = transport_each(c->size, bytes);
    int r;

    if (each == NULL) {
        snprintf(err, errlen, "out of memory");
        return COLL_ENOMEM;
    }
    r = comm_hier_allgatherv(c, h, net, tag, mine, all, each, err, errlen);
    free(each);
    return r;
}

/* The lane of this rank's local_rank across hosts: the cross group for
 * local_rank 0, its own (named by its local_rank) for the others; its
 * rank is this rank's host (as the caller learnt it), of hosts. */
int
comm_hier_open_lane(const coll_comm *c, comm_hier *h, const char *tag, int host,
                    char *err, size_t errlen)
{
    if (c->local_rank == 0)
        return 0;
    return open_group(c, &h->lane, "cross", c->local_rank, tag, host, h->hosts,
                      0, err, errlen);
}
