/* Allreduce in two levels, as Horovod's HOROVOD_HIERARCHICAL_ALLREDUCE
 * (hvdrun --hierarchical-allreduce): within each host over its local
 * context, then across hosts among the ranks with local_rank 0 over their
 * cross context, then a broadcast within each host. Only one rank per host
 * sends across hosts, which pays where the network between hosts is slower
 * than within them. Taking the cross step on local_rank 0 only keeps it
 * right when hosts have different numbers of ranks.
 *
 * The two contexts are made at the first such call: every rank makes the
 * call at the same point of its sequence, so their keys match. */
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

static int
connect_scope(coll_comm *c, gloo_ctx **g, const char *which, int group,
              int rank, int size)
{
    char prefix[96];

    if (*g || size < 2)
        return 0;
    snprintf(prefix, sizeof(prefix), "%s.%s%d", c->prefix, which, group);
    return gb_connect(g, c->client, "collective", prefix, rank, size,
                      comm_iface(), comm_timeout_ms(), c->last_error,
                      sizeof(c->last_error));
}

/* buf holds count elements, already agreed on by every rank. */
int
comm_hier_allreduce(coll_comm *c, void *buf, size_t count, coll_dtype dt,
                    coll_op op)
{
    size_t bytes = count * coll_dtype_size(dt);
    int host_first = c->rank - c->local_rank, r;

    /* the local group is named by its host's first rank, the cross group
     * of local_rank 0 by nothing else */
    r = connect_scope(c, &c->local_gloo, "local", host_first, c->local_rank,
                      c->local_size);
    if (r == 0 && c->local_gloo)
        r = gb_allreduce(c->local_gloo, buf, count, dt, op, c->last_error,
                         sizeof(c->last_error));
    if (r == 0 && c->local_rank == 0)
        r = connect_scope(c, &c->cross_gloo, "cross", 0, c->cross_rank,
                          c->cross_size);
    if (r == 0 && c->local_rank == 0 && c->cross_gloo)
        r = gb_allreduce(c->cross_gloo, buf, count, dt, op, c->last_error,
                         sizeof(c->last_error));
    if (r == 0 && c->local_gloo)
        r = gb_broadcast(c->local_gloo, buf, bytes, 0, c->last_error,
                         sizeof(c->last_error));
    return r ? comm_fail(c, r, "%s", c->last_error) : 0;
}
