/* Joining the job's transport: hvdd's store and the TCP ring; a Gloo
 * context at the first collective that needs one. */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collective.h"
#include "comm.h"
#include "device.h"
#include "fusion.h"

/* Each context needs its own key prefix, the same on every rank: ranks
 * create comms in the same order, so a per-process count is enough. */
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

static long
env_long(const char *name, long dflt)
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
comm_prefix(char *out, size_t size)
{
    snprintf(out, size, "comm%d", generation++);
}

const char *
comm_iface(void)
{
    const char *iface = getenv("HOROVOD_GLOO_IFACE");

    return iface && *iface ? iface : "lo";
}

int
comm_timeout_ms(void)
{
    return (int)(env_long("HOROVOD_GLOO_TIMEOUT_SECONDS", 30) * 1000);
}

int
comm_mesh_ranks(void)
{
    return (int)env_long("COLL_MESH_RANKS", RING_MESH_RANKS);
}

/* Spinning saves the sleep and wake-up in poll: 2 ranks on 2 CPUs, 8 B
 * allreduce 39 -> 7 us, 32 KiB 112 -> 26 (OpenMPI, which busy-polls:
 * 7-9 and 27). With more ranks than CPUs a busy spin takes the CPU a peer
 * needs (4 ranks on 2: 8 B 82 -> 416 us); yielding it at each retry
 * instead hands it to a peer that can run (OpenMPI yields there too):
 * 8 B 83-86 -> 41-49 us, 32 KiB 275-288 -> 121-149 (OpenMPI: 41, 126). */
ring_spin
comm_spin(const coll_comm *c)
{
    cpu_set_t set;
    long cpus = sched_getaffinity(0, sizeof(set), &set) == 0
                    ? CPU_COUNT(&set)
                    : sysconf(_SC_NPROCESSORS_ONLN);

    return c->local_size > 0 && c->local_size <= cpus ? RING_SPIN_BUSY
                                                      : RING_SPIN_YIELD;
}

hvdd_client *
comm_new_client(void)
{
    const char *addr = getenv("HOROVOD_GLOO_RENDEZVOUS_ADDR");
    long port = env_long("HOROVOD_GLOO_RENDEZVOUS_PORT", 0);

    if (addr == NULL || port <= 0)
        return NULL;
    return hvdd_client_new(addr, (int)port, getenv("HVDD_TOKEN"),
                           comm_timeout_ms() / 1000.0);
}

int
comm_connect(coll_comm *c)
{
    const char *addr = getenv("HOROVOD_GLOO_RENDEZVOUS_ADDR");
    const char *iface = getenv("HOROVOD_GLOO_IFACE");
    long port = env_long("HOROVOD_GLOO_RENDEZVOUS_PORT", 0);
    char prefix[32];
    int r = 0;

    if (c->size == 1)
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
    comm_prefix(prefix, sizeof(prefix));
    snprintf(c->prefix, sizeof(c->prefix), "%s", prefix);
    if ((c->ring = ring_new(prefix, c->rank, c->size, comm_spin(c))) == NULL)
        r = comm_fail(c, COLL_ENOMEM, "out of memory");
    /* now, not at the first collective: a rank that dies before it then
     * closes its streams, and the others learn of it at once */
    if (r == 0 && (r = ring_connect(c->ring, "coll_init", c->last_error,
                                    sizeof(c->last_error))) == COLL_ETRANSPORT)
        r = COLL_ERENDEZVOUS;
    /* a barrier ends the set-up, as in Horovod: coll_init returns once
     * every rank has connected (and the control exchanges' chords are up) */
    if (r == 0 && comm_barrier(c, "coll_init") != 0)
        r = COLL_ERENDEZVOUS;
    return r ? r : comm_register(c, addr, (int)port, getenv("HVDD_TOKEN"));
}

/* Gloo's full mesh took 18 ms to connect on 2 ranks, 35 on 4, 97 on 8 and
 * 588 on 32 (a third of a 4-rank job that only says hello), and only
 * alltoall(v) beyond comm_mesh_ranks() ranks uses it: it is connected
 * then, by every rank at the same call. */
int
comm_gloo(coll_comm *c)
{
    int r;

    if (c->gloo)
        return 0;
    r = gb_connect(&c->gloo, c->client, "collective", c->prefix, c->rank,
                   c->size, comm_iface(), comm_timeout_ms(), c->last_error,
                   sizeof(c->last_error));
    return r ? comm_fail(c, r, "%s", c->last_error) : 0;
}

void
comm_disconnect(coll_comm *c)
{
    comm_fusion_stop(c);
    dev_comm_free(c->dev);
    c->dev = NULL;
    comm_unregister(c);
    ring_free(c->local_ring);
    ring_free(c->cross_ring);
    gb_free(c->gloo);
    ring_free(c->ring);
    hvdd_client_free(c->client);
    c->local_ring = c->cross_ring = NULL;
    c->gloo = NULL;
    c->ring = NULL;
    c->client = NULL;
}
