/* Allreduce in two levels, as Horovod's HOROVOD_HIERARCHICAL_ALLREDUCE
 * (hvdrun --hierarchical-allreduce): within each host on its local
 * transport, then across hosts among the ranks with local_rank 0 on their
 * cross transport, then a broadcast within each host. Only one rank per host
 * sends across hosts, which pays where the network between hosts is slower
 * than within them. Taking the cross step on local_rank 0 only keeps it
 * right when hosts have different numbers of ranks. The local transport
 * is shared memory (unless COLL_SHM=0).
 *
 * The comm's blocking calls have one pair of transports, its fusion
 * thread another (fused groups go the same way), each connected at its
 * first such call: every rank makes the call at the same point of its
 * sequence, so their keys match. */
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

void
comm_hier_free(comm_hier *h)
{
    transport_free(h->local);
    transport_free(h->cross);
    h->local = h->cross = NULL;
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
    if ((*t = comm_transport_new(c, name, rank, size, one_host)) == NULL)
        return COLL_ENOMEM;
    r = (*t)->ops->connect(*t, "hierarchical allreduce", err, errlen);
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

    if (in_place == NULL)
        return COLL_ENOMEM;
    for (int k = 0; k < n; k++)
        in_place[k] =
            (transport_piece){piece[k].recv, piece[k].recv, piece[k].count};
    r = cross->ops->allreduce(cross, in_place, n, dt, op, err, errlen);
    if (in_place != &one)
        free(in_place);
    return r;
}

int
comm_hier_allreduce(const coll_comm *c, comm_hier *h, const char *tag,
                    const transport_piece *piece, int n, coll_dtype dt,
                    coll_op op, char *err, size_t errlen)
{
    size_t es = coll_dtype_size(dt);
    coll_op how = op == COLL_OP_AVG ? COLL_OP_SUM : op;
    int host_first = c->rank - c->local_rank, r;

    /* the local group is named by its host's first rank, the cross group
     * of local_rank 0 by nothing else */
    r = open_group(c, &h->local, "local", host_first, tag, c->local_rank,
                   c->local_size, 1, err, errlen);
    if (r == 0 && c->local_rank == 0)
        r = open_group(c, &h->cross, "cross", 0, tag, c->cross_rank,
                       c->cross_size, 0, err, errlen);
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
