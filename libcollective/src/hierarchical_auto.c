/* The collectives that take two levels by themselves in a job of several
 * hosts while the local level is shared memory (COLL_SHM on), on the
 * levels hierarchical.c makes: their gain is that the ranks of a host
 * never talk through loopback TCP, and that less crosses the network.
 *
 * Broadcast: within the root's host, then among local_rank 0 across,
 * then within every other host: the data crosses the network once per
 * host.
 *
 * Reducescatter: the ranks of a host reducescatter the buffer in shared
 * memory, its blocks laid out so that local_rank l receives its host's
 * sums of the blocks of every host's local_rank l; then the ranks of
 * each local_rank reducescatter those across hosts, each ending with its
 * own block. Across hosts each host sends (hosts - 1) / hosts of the
 * buffer, from every rank at once; the flat ring sends (size - 1) / size
 * of it out of every host, through one rank, and every hop of it, in a
 * host or across, is TCP. It needs hosts of equal size (else flat).
 *
 * Both stay flat where every host has one rank (the cross level would be
 * the world again) or ranks are not numbered host by host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

int
comm_hier_broadcast_wanted(const coll_comm *c)
{
    return c->hier_shm;
}

int
comm_hier_reducescatter_wanted(const coll_comm *c)
{
    return c->hier_shm;
}

/* 1 when the job cannot take two levels: hosts unknown (not numbered
 * host by host) or one rank per host. (The same answer on every rank:
 * not cross_size, which Horovod counts per local_rank.) */
static int
stays_flat(const coll_comm *c, const comm_hier *h)
{
    return h->hosts < 0 || h->hosts == c->size;
}

/* The host (index into h->host_first) that rank belongs to. */
static int
host_of(const comm_hier *h, int rank)
{
    int j = 0;

    while (h->host_first[j + 1] <= rank)
        j++;
    return j;
}

int
comm_hier_broadcast(const coll_comm *c, comm_hier *h, transport *net,
                    const char *tag, void *buf, size_t bytes, int root,
                    char *err, size_t errlen)
{
    int flat, r = comm_hier_learn(c, h, net, err, errlen), from, mine;

    if (r == 0 && stays_flat(c, h))
        return net->ops->broadcast(net, buf, bytes, root, err, errlen);
    if (r != 0 || (r = comm_hier_open(c, h, net, tag, &flat, err, errlen)) != 0)
        return r;
    from = host_of(h, root);
    mine =
        host_of(h, c->rank) == from; /* (not cross_rank: Horovod's
                                      * counts the ranks of one local_rank) */
    if (mine && h->local) /* the root's host, its local_rank 0 included */
        r = h->local->ops->broadcast(h->local, buf, bytes,
                                     root - h->host_first[from], err, errlen);
    if (r == 0 && c->local_rank == 0 && h->cross)
        r = h->cross->ops->broadcast(h->cross, buf, bytes, from, err, errlen);
    if (r == 0 && !mine && h->local)
        r = h->local->ops->broadcast(h->local, buf, bytes, 0, err, errlen);
    return r;
}

/* 1 when every host has as many ranks (the lanes across hosts, one per
 * local_rank, then have one rank on every host); from what every rank
 * learnt alike, so the same answer on all. */
static int
equal_hosts(const comm_hier *h)
{
    int each = h->host_first[1];

    for (int j = 1; j < h->hosts; j++)
        if (h->host_first[j + 1] - h->host_first[j] != each)
            return 0;
    return 1;
}

/* send, its blocks padded to b elements each and laid out lane by lane:
 * block r (of local_rank r % L on host r / L) at (r % L * hosts + r / L)
 * * b, so that the local reducescatter gives local_rank l the blocks of
 * every host's local_rank l, in host order. */
static void
lay_out_lanes(const coll_comm *c, const comm_hier *h, const char *send,
              char *lanes, size_t count, size_t b, size_t es)
{
    int each = c->local_size;

    for (int r = 0; r < c->size; r++) {
        size_t len, at = elem_block_start(count, c->size, r, &len);
        char *to = lanes + ((size_t)(r % each) * (size_t)h->hosts +
                            (size_t)(r / each)) *
                               b * es;
        memcpy(to, send + at * es, len * es);
        memset(to + len * es, 0, (b - len) * es);
    }
}

int
comm_hier_reducescatter(const coll_comm *c, comm_hier *h, transport *net,
                        const char *tag, const void *send, void *recv,
                        size_t count, coll_dtype dt, coll_op op, char *err,
                        size_t errlen)
{
    size_t es = coll_dtype_size(dt), b = (count + c->size - 1) / c->size;
    size_t len, hb;
    coll_op how = op == COLL_OP_AVG ? COLL_OP_SUM : op;
    int flat, r = comm_hier_learn(c, h, net, err, errlen);
    char *lanes = NULL, *group = NULL;
    transport *lane;

    if (r == 0 && (stays_flat(c, h) || !equal_hosts(h)))
        return net->ops->reducescatter(net, send, recv, count, dt, op, err,
                                       errlen);
    if (r == 0)
        r = comm_hier_open(c, h, net, tag, &flat, err, errlen);
    if (r == 0)
        r = comm_hier_open_lane(c, h, tag, host_of(h, c->rank), err, errlen);
    if (r != 0)
        return r;
    hb = (size_t)h->hosts * b;
    lane = c->local_rank == 0 ? h->cross : h->lane;
    lanes = malloc((size_t)c->size * b * es + 1);
    group = malloc(hb * es + 1);
    if (lanes == NULL || group == NULL) {
        snprintf(err, errlen, "out of memory");
        r = COLL_ENOMEM;
    } else {
        lay_out_lanes(c, h, send, lanes, count, b, es);
        r = h->local->ops->reducescatter(
            h->local, lanes, group, (size_t)c->size * b, dt, how, err, errlen);
    }
    /* this lane's blocks, summed over its host: across, into block r */
    if (r == 0)
        r = lane->ops->reducescatter(lane, group, lanes, hb, dt, how, err,
                                     errlen);
    elem_block_start(count, c->size, c->rank, &len);
    if (r == 0 && len) {
        memcpy(recv, lanes, len * es);
        if (op == COLL_OP_AVG)
            elem_scale_avg(recv, len, dt, c->size);
    }
    free(lanes);
    free(group);
    return r;
}
