/* Joining the job's transport: hvdd's store and the world transport
 * (shared memory when every rank is on this host, else the TCP ring, or
 * Gloo with COLL_TRANSPORT=gloo). */
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collective.h"
#include "comm.h"
#include "timeline.h"
#include "device.h"
#include "fusion.h"

/* Each context needs its own key prefix, the same on every rank: ranks
 * create comms in the same order, so a per-process count is enough. An
 * elastic round starts the count again (its new workers start at 0). */
static int generation;

int
comm_fail(coll_comm *c, int code, const char *fmt, ...)
{
    char buf[sizeof(c->last_error)];
    va_list ap;

    /* through a copy: callers pass c->last_error itself as an argument */
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    memcpy(c->last_error, buf, sizeof(buf));
    if (code == COLL_ETRANSPORT)
        c->dead = 1;
    return code;
}

long
comm_env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    char *end;
    long n;

    if (v == NULL || *v == '\0')
        return dflt;
    n = strtol(v, &end, 10);
    return *end || n <= 0 ? dflt : n;
}

void
comm_prefix(const coll_comm *c, char *out, size_t size)
{
    if (c->round > 0)
        snprintf(out, size, "r%d.comm%d", c->round, generation++);
    else
        snprintf(out, size, "comm%d", generation++);
}

void
comm_prefix_restart(void)
{
    generation = 0;
}

int
comm_timeout_ms(void)
{
    long s = comm_env_long("HOROVOD_GLOO_TIMEOUT_SECONDS", 30);

    /* (past INT_MAX ms it wrapped: 2147484 s was -2147483, at once) */
    return (int)(s < INT_MAX / 1000 ? s * 1000 : INT_MAX / 1000 * 1000);
}

/* The most ranks alltoall(v) takes the TCP streams for, Gloo beyond:
 * COLL_MESH_RANKS, else TRANSPORT_MESH_RANKS (the same on every rank). */
static int
mesh_ranks(void)
{
    return (int)comm_env_long("COLL_MESH_RANKS", TRANSPORT_MESH_RANKS);
}

/* Spinning saves the sleep and wake-up in poll: 2 ranks on 2 CPUs, 8 B
 * allreduce 39 -> 7 us, 32 KiB 112 -> 26 (OpenMPI, which busy-polls:
 * 7-9 and 27). With more ranks than CPUs a busy spin takes the CPU a peer
 * needs (4 ranks on 2: 8 B 82 -> 416 us); yielding it at each retry
 * instead hands it to a peer that can run (OpenMPI yields there too):
 * 8 B 83-86 -> 41-49 us, 32 KiB 275-288 -> 121-149 (OpenMPI: 41, 126). */
static int
cpu_each(const coll_comm *c)
{
    cpu_set_t set;
    long cpus = sched_getaffinity(0, sizeof(set), &set) == 0
                    ? CPU_COUNT(&set)
                    : sysconf(_SC_NPROCESSORS_ONLN);

    return c->local_size > 0 && c->local_size <= cpus;
}

hvdd_client *
comm_new_client(void)
{
    const char *addr = getenv("HOROVOD_GLOO_RENDEZVOUS_ADDR");
    long port = comm_env_long("HOROVOD_GLOO_RENDEZVOUS_PORT", 0);

    if (addr == NULL || port <= 0)
        return NULL;
    return hvdd_client_new(addr, (int)port, getenv("HVDD_TOKEN"),
                           comm_timeout_ms() / 1000.0);
}

transport *
comm_transport_new(const coll_comm *c, const char *name, int rank, int size,
                   int one_host)
{
    const char *iface = getenv("HOROVOD_GLOO_IFACE");
    transport *t;
    transport_spec spec = {
        .rank = rank,
        .size = size,
        .timeout_ms = comm_timeout_ms(),
        .cpu_each = cpu_each(c),
        .one_host = one_host && c->shm,
        .mesh_ranks = mesh_ranks(),
        .stream_above = (size_t)comm_env_long("COLL_SHM_STREAM_BYTES", 0),
        .open_store = comm_new_client,
    };

    snprintf(spec.prefix, sizeof(spec.prefix), "%s%s", c->prefix, name);
    snprintf(spec.iface, sizeof(spec.iface), "%s",
             iface && *iface ? iface : "lo");
    snprintf(spec.secret, sizeof(spec.secret), "%s",
             getenv("HVDD_TOKEN") ? getenv("HVDD_TOKEN") : "");
    t = transport_new(c->kind, &spec);
    explicit_bzero(spec.secret, sizeof(spec.secret));
    return t;
}

int
comm_connect(coll_comm *c)
{
    const char *addr = getenv("HOROVOD_GLOO_RENDEZVOUS_ADDR");
    const char *iface = getenv("HOROVOD_GLOO_IFACE");
    long port = comm_env_long("HOROVOD_GLOO_RENDEZVOUS_PORT", 0);
    int r;

    if (transport_kind_from_env(&c->kind) != 0)
        return comm_fail(c, COLL_EINVAL,
                         "COLL_TRANSPORT='%s': use tcp (the default) or gloo",
                         getenv("COLL_TRANSPORT"));
    if (transport_shm_from_env(&c->shm) != 0)
        return comm_fail(c, COLL_EINVAL,
                         "COLL_SHM='%s': use 1 (the default: ranks of one "
                         "host share memory) or 0",
                         getenv("COLL_SHM"));
    comm_hier_read_env(c);
    comm_elastic_read_env(c);
    if (c->size == 1 && !c->elastic)
        return 0;
    if (addr == NULL || port <= 0)
        return comm_fail(c, COLL_ERENDEZVOUS,
                         "HOROVOD_GLOO_RENDEZVOUS_ADDR and _PORT are not "
                         "set: start the job with hvdrun");
    if (iface == NULL || *iface == '\0')
        return comm_fail(c, COLL_EIDENTITY,
                         "HOROVOD_GLOO_IFACE is not set: the network to use "
                         "is unknown");
    if ((c->client = comm_new_client()) == NULL)
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    if (c->elastic)
        hvdd_client_set_round(c->client, c->round);
    if ((r = comm_elastic_join_first(c)) != 0)
        return r;
    return comm_join_world(c);
}

int
comm_join_world(coll_comm *c)
{
    const char *addr = getenv("HOROVOD_GLOO_RENDEZVOUS_ADDR");
    long port = comm_env_long("HOROVOD_GLOO_RENDEZVOUS_PORT", 0);
    int r = 0;

    comm_prefix(c, c->prefix, sizeof(c->prefix));
    if (c->size == 1) /* an elastic round of one: nothing to connect */
        return comm_register(c, addr, (int)port, getenv("HVDD_TOKEN"));
    c->world =
        comm_transport_new(c, "", c->rank, c->size, c->local_size == c->size);
    if (c->world == NULL)
        r = comm_fail(c, COLL_ENOMEM, "out of memory");
    /* now, not at the first collective: a rank that dies before it then
     * closes its streams, and the others learn of it at once */
    if (r == 0 &&
        (r = c->world->ops->connect(c->world, "coll_init", c->last_error,
                                    sizeof(c->last_error))) == COLL_ETRANSPORT)
        r = COLL_ERENDEZVOUS;
    /* a barrier ends the set-up, as in Horovod: coll_init returns once
     * every rank has connected (and the control exchanges' chords are up) */
    if (r == 0 && comm_barrier(c, "coll_init") != 0)
        r = COLL_ERENDEZVOUS;
    return r ? r : comm_register(c, addr, (int)port, getenv("HVDD_TOKEN"));
}

void
comm_close_transports(coll_comm *c)
{
    comm_fusion_stop(c);
    dev_comm_free(c->dev);
    c->dev = NULL;
    comm_hier_free(&c->hier);
    transport_free(c->world);
    c->world = NULL;
}

void
comm_disconnect(coll_comm *c)
{
    comm_close_transports(c);
    timeline_close(c->timeline); /* (after the fusion thread's end) */
    c->timeline = NULL;
    comm_unregister(c);
    hvdd_client_free(c->client);
    c->client = NULL;
}
