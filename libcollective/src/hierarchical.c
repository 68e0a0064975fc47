/* Allreduce in two levels, as Horovod's HOROVOD_HIERARCHICAL_ALLREDUCE
 * (hvdrun --hierarchical-allreduce): within each host on its local TCP
 * ring, then across hosts among the ranks with local_rank 0 on their
 * cross ring, then a broadcast within each host. Only one rank per host
 * sends across hosts, which pays where the network between hosts is slower
 * than within them. Taking the cross step on local_rank 0 only keeps it
 * right when hosts have different numbers of ranks.
 *
 * The two rings are connected at the first such call: every rank makes
 * the call at the same point of its sequence, so their keys match. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

int
comm_hier_wanted(const coll_comm *c)
{
    const char *v = getenv("HOROVOD_HIERARCHICAL_ALLREDUCE");

    /* with several hosts; the same answer on every rank (local_size is
     * not: hosts may have different numbers of ranks) */
    return v && strcmp(v, "1") == 0 && c->local_size < c->size;
}

/* The ring of a group (no I/O yet), named by which and group; NULL for
 * a group of one. */
static int
make_ring(coll_comm *c, tcp_ring **g, const char *which, int group, int rank,
          int size)
{
    char prefix[96];

    if (*g || size < 2)
        return 0;
    snprintf(prefix, sizeof(prefix), "%s.%s%d", c->prefix, which, group);
    *g = ring_new(prefix, rank, size, comm_spin(c));
    return *g ? 0 : COLL_ENOMEM;
}

/* count elements, already agreed on by every rank; send may be recv. */
int
comm_hier_allreduce(coll_comm *c, const void *send, void *recv, size_t count,
                    coll_dtype dt, coll_op op)
{
    size_t bytes = count * coll_dtype_size(dt);
    char *err = c->last_error;
    size_t errlen = sizeof(c->last_error);
    int host_first = c->rank - c->local_rank, r;

    /* the local group is named by its host's first rank, the cross group
     * of local_rank 0 by nothing else */
    r = make_ring(c, &c->local_ring, "local", host_first, c->local_rank,
                  c->local_size);
    if (r == 0 && c->local_rank == 0)
        r = make_ring(c, &c->cross_ring, "cross", 0, c->cross_rank,
                      c->cross_size);
    if (r == 0 && c->local_ring)
        r = ring_allreduce(c->local_ring, send, recv, count, dt, op, err,
                           errlen);
    else if (r == 0 && send != recv) /* alone on its host */
        memmove(recv, send, bytes);
    if (r == 0 && c->local_rank == 0 && c->cross_ring)
        r = ring_allreduce(c->cross_ring, recv, recv, count, dt, op, err,
                           errlen);
    if (r == 0 && c->local_ring)
        r = ring_broadcast(c->local_ring, recv, bytes, 0, err, errlen);
    if (r == COLL_ENOMEM)
        return comm_fail(c, r, "out of memory");
    return r ? comm_fail(c, r, "%s", c->last_error) : 0;
}
