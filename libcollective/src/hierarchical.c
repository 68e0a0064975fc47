/* Allreduce in two levels, as Horovod's HOROVOD_HIERARCHICAL_ALLREDUCE
 * (hvdrun --hierarchical-allreduce): within each host on its local
 * transport, then across hosts among the ranks with local_rank 0 on their
 * cross transport, then a broadcast within each host. Only one rank per host
 * sends across hosts, which pays where the network between hosts is slower
 * than within them. Taking the cross step on local_rank 0 only keeps it
 * right when hosts have different numbers of ranks. The local transport
 * is shared memory (unless COLL_SHM=0).
 *
 * The two transports are connected at the first such call: every rank makes
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

/* The transport of a group, named by which and group, made and connected
 * at its first use; none for a group of one. */
static int
open_group(coll_comm *c, transport **t, const char *which, int group, int rank,
           int size, int one_host)
{
    char name[64];
    int r;

    if (*t || size < 2)
        return 0;
    snprintf(name, sizeof(name), ".%s%d", which, group);
    if ((*t = comm_transport_new(c, name, rank, size, one_host)) == NULL)
        return COLL_ENOMEM;
    r = (*t)->ops->connect(*t, "hierarchical allreduce", c->last_error,
                           sizeof(c->last_error));
    if (r != 0) {
        transport_free(*t);
        *t = NULL;
    }
    return r;
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
    transport_piece local = {send, recv, count}, cross = {recv, recv, count};

    /* the local group is named by its host's first rank, the cross group
     * of local_rank 0 by nothing else */
    r = open_group(c, &c->local, "local", host_first, c->local_rank,
                   c->local_size, 1);
    if (r == 0 && c->local_rank == 0)
        r = open_group(c, &c->cross, "cross", 0, c->cross_rank, c->cross_size,
                       0);
    if (r == 0 && c->local)
        r = c->local->ops->allreduce(c->local, &local, 1, dt, op, err, errlen);
    else if (r == 0 && send != recv) /* alone on its host */
        memmove(recv, send, bytes);
    if (r == 0 && c->local_rank == 0 && c->cross)
        r = c->cross->ops->allreduce(c->cross, &cross, 1, dt, op, err, errlen);
    if (r == 0 && c->local)
        r = c->local->ops->broadcast(c->local, recv, bytes, 0, err, errlen);
    if (r == COLL_ENOMEM)
        return comm_fail(c, r, "out of memory");
    return r ? comm_fail(c, r, "%s", c->last_error) : 0;
}
