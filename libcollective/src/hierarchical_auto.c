/* The collectives that take two levels by themselves in a job of several
 * hosts while the local level is shared memory (COLL_SHM on), on the
 * levels hierarchical.c makes: their gain is that the ranks of a host
 * never talk through loopback TCP, and that less crosses the network.
 *
 * Broadcast: within the root's host, then among local_rank 0 across,
 * then within every other host: the data crosses the network once per
 * host.
 *
 * Reducescatter: every rank of a host sums the whole buffer (a local
 * allreduce), local_rank 0 of each host reducescatters those sums across
 * hosts so that each gets its own host's blocks, then hands them to its
 * ranks (a local broadcast of that part; each keeps its block). Across
 * hosts each local_rank 0 sends (hosts - 1) / hosts of the buffer, once;
 * the flat ring sends (size - 1) / size of it from every rank, and a
 * host's link carries it twice, in and out, for every pair of hosts the
 * ring joins.
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

/* Where block k of count elements begins (k = size: the end). */
static size_t
block_at(size_t count, int size, int k)
{
    size_t len;

    return k >= size ? count : elem_block_start(count, size, k, &len);
}

/* What a reducescatter's levels need: host j's part of the buffer (its
 * ranks' blocks) begins at part_at(j); the largest part has most
 * elements; this rank's block is at mine in its host's part. */
typedef struct host_parts {
    size_t count, most, mine, len;
    size_t own; /* elements of this host's part */
    int host;
} host_parts;

static size_t
part_at(const coll_comm *c, const comm_hier *h, size_t count, int j)
{
    return block_at(count, c->size, h->host_first[j]);
}

static void
host_parts_init(host_parts *hp, const coll_comm *c, const comm_hier *h,
                size_t count)
{
    size_t at = elem_block_start(count, c->size, c->rank, &hp->len);

    hp->count = count;
    hp->host = host_of(h, c->rank);
    hp->mine = at - part_at(c, h, count, hp->host);
    hp->own =
        part_at(c, h, count, hp->host + 1) - part_at(c, h, count, hp->host);
    hp->most = 0;
    for (int j = 0; j < h->hosts; j++) {
        size_t n = part_at(c, h, count, j + 1) - part_at(c, h, count, j);
        hp->most = n > hp->most ? n : hp->most;
    }
}

/* local_rank 0's step across: the hosts' sums (sum), laid out one part
 * per host, each padded to the largest, so that the cross transport's
 * reducescatter gives host j part j; into part. */
static int
cross_parts(const coll_comm *c, const comm_hier *h, const host_parts *hp,
            const char *sum, char *part, coll_dtype dt, coll_op how, char *err,
            size_t errlen)
{
    size_t es = coll_dtype_size(dt), lanes = (size_t)h->hosts * hp->most;
    const char *in = sum;
    char *padded = NULL;
    int r;

    if (h->cross == NULL) { /* HOROVOD_CROSS_SIZE 1 on a job of hosts */
        snprintf(err, errlen, "reducescatter: no level across hosts");
        return COLL_EIDENTITY;
    }
    if (lanes != hp->count) { /* some part smaller than the largest */
        if ((padded = calloc(lanes, es)) == NULL) {
            snprintf(err, errlen, "out of memory");
            return COLL_ENOMEM;
        }
        for (int j = 0; j < h->hosts; j++) {
            size_t at = part_at(c, h, hp->count, j);
            memcpy(padded + (size_t)j * hp->most * es, sum + at * es,
                   (part_at(c, h, hp->count, j + 1) - at) * es);
        }
        in = padded;
    }
    r = h->cross->ops->reducescatter(h->cross, in, part, lanes, dt, how, err,
                                     errlen);
    free(padded);
    return r;
}

/* 1 when the padded parts would send more across hosts than the flat
 * ring: each local_rank 0 sends (hosts - 1) parts of the largest size,
 * the ring (size - 1) / size of the buffer over each host's link (hosts
 * of 4, 1 and 1 ranks: 4/3 of the buffer against 5/6). */
static int
padding_costs_more(const coll_comm *c, const comm_hier *h, const host_parts *hp)
{
    double two = (double)(h->hosts - 1) * (double)hp->most;

    return two * c->size > (double)(c->size - 1) * (double)hp->count;
}

int
comm_hier_reducescatter(const coll_comm *c, comm_hier *h, transport *net,
                        const char *tag, const void *send, void *recv,
                        size_t count, coll_dtype dt, coll_op op, char *err,
                        size_t errlen)
{
    size_t es = coll_dtype_size(dt);
    coll_op how = op == COLL_OP_AVG ? COLL_OP_SUM : op;
    int flat, r = comm_hier_learn(c, h, net, err, errlen);
    char *sum = NULL, *part = NULL;
    host_parts hp;

    if (r == 0 && !stays_flat(c, h))
        host_parts_init(&hp, c, h, count);
    if (r == 0 && (stays_flat(c, h) || padding_costs_more(c, h, &hp)))
        return net->ops->reducescatter(net, send, recv, count, dt, op, err,
                                       errlen);
    if (r != 0 || (r = comm_hier_open(c, h, net, tag, &flat, err, errlen)) != 0)
        return r;
    sum = malloc(count * es + 1);
    part = malloc(hp.most * es + 1);
    if (sum == NULL || part == NULL) {
        snprintf(err, errlen, "out of memory");
        r = COLL_ENOMEM;
    } else if (h->local) { /* this host's sum of the whole buffer */
        transport_piece all = {send, sum, count};
        r = h->local->ops->allreduce(h->local, &all, 1, dt, how, err, errlen);
    } else { /* alone on its host */
        memcpy(sum, send, count * es);
    }
    if (r == 0 && c->local_rank == 0) /* (a cross level: several hosts) */
        r = cross_parts(c, h, &hp, sum, part, dt, how, err, errlen);
    if (r == 0 && h->local && hp.own)
        r = h->local->ops->broadcast(h->local, part, hp.own * es, 0, err,
                                     errlen);
    if (r == 0 && hp.len) {
        memcpy(recv, part + hp.mine * es, hp.len * es);
        if (op == COLL_OP_AVG)
            elem_scale_avg(recv, hp.len, dt, c->size);
    }
    free(sum);
    free(part);
    return r;
}
