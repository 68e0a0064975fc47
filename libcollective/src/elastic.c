/* Elastic rounds: a comm leaves the round it is in and joins the next
 * one that the launcher started in hvdd (after a failure, or when hosts
 * were added), in place: the same coll_comm, a new identity, every
 * transport made again under a prefix of the new round. Survivors learn
 * their identity by rejoining hvdd; new workers read theirs from the
 * environment hvdrun gave them, with HOROVOD_ELASTIC_ROUND. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collective.h"
#include "comm.h"

void
comm_elastic_read_env(coll_comm *c)
{
    const char *on = getenv("HOROVOD_ELASTIC");

    c->elastic = on && strcmp(on, "1") == 0;
    c->round = c->elastic ? (int)comm_env_long("HOROVOD_ELASTIC_ROUND", 0) : 0;
}

/* How long a worker waits for the next round (Horovod's variable, in
 * seconds, fractions too); a little longer than the launcher, which
 * gives up on --min-np at the same timeout and says why. */
static long
elastic_timeout_ms(void)
{
    const char *v = getenv("HOROVOD_ELASTIC_TIMEOUT");
    char *end;
    double s = v && *v ? strtod(v, &end) : 600;

    if (v && *v && (*end || !isfinite(s) || s < 0))
        s = 600;
    return (long)(fmin(s, 1e9) * 1000) + 5000; /* (a bound: defined) */
}

static void
take_identity(coll_comm *c, const hvdd_identity *id)
{
    c->rank = id->rank;
    c->size = id->size;
    c->local_rank = id->local_rank;
    c->local_size = id->local_size;
    c->cross_rank = id->cross_rank;
    c->cross_size = id->cross_size;
    c->round = id->round;
    c->fresh = id->fresh;
    c->dead = 0;
    comm_hier_read_env(c); /* several hosts or one, now */
}

int
comm_elastic_join_first(coll_comm *c)
{
    const char *join = getenv("HOROVOD_ELASTIC_JOIN");
    const char *host = getenv("HOROVOD_HOSTNAME");
    hvdd_identity id;
    int pid = (int)getpid();

    if (!c->elastic || join == NULL || strcmp(join, "1") != 0 || host == NULL ||
        getenv("HVDD_TOKEN") == NULL)
        return 0;
    /* its own round and rank first (its output is tagged with that
     * rank); any of its host's in the round that runs, if that is over */
    if (hvdd_client_register(c->client, host, pid, c->rank, &id) != 0) {
        hvdd_client_set_round(c->client, -1);
        if (hvdd_client_register(c->client, host, pid, -1, &id) != 0)
            return comm_fail(c, COLL_ERENDEZVOUS, "register with hvdd: %s",
                             hvdd_client_error(c->client));
    }
    take_identity(c, &id);
    hvdd_client_set_round(c->client, c->round);
    c->registered = 1;
    return 0;
}

int
coll_reset(coll_comm *c)
{
    const char *host = getenv("HOROVOD_HOSTNAME");
    hvdd_identity id;
    int r;

    if (c == NULL)
        return COLL_EINVAL;
    if (!c->elastic || c->client == NULL || host == NULL)
        return comm_fail(c, COLL_ENOTSUP,
                         "reset: not an elastic job (HOROVOD_ELASTIC=1 "
                         "and hvdd's rounds)");
    /* the old round's transports go; the client to hvdd stays, and the
     * heartbeats until the next round starts: a worker waiting for it is
     * not a lost one */
    comm_close_transports(c);
    r = hvdd_client_rejoin(c->client, host, (int)getpid(), c->round,
                           elastic_timeout_ms(), &id);
    comm_stop_heartbeat(c); /* its beats name the old round now */
    c->registered = 0;
    if (r == HVDD_EGONE) {
        c->dead = 1;
        return comm_fail(c, COLL_EREMOVED, "reset: %s",
                         hvdd_client_error(c->client));
    }
    if (r != 0) {
        c->dead = 1;
        return comm_fail(c, COLL_ERENDEZVOUS, "reset: %s",
                         hvdd_client_error(c->client));
    }
    take_identity(c, &id);
    hvdd_client_set_round(c->client, c->round);
    comm_prefix_restart();
    if ((r = comm_join_world(c)) != 0) {
        c->dead = 1;
        return comm_fail(c, r, "reset: %s", c->last_error);
    }
    return 0;
}

int
coll_round(const coll_comm *c)
{
    return c ? c->round : COLL_EINVAL;
}

int
coll_round_fresh(const coll_comm *c)
{
    return c ? c->fresh : COLL_EINVAL;
}

int
coll_round_changed(coll_comm *c, int *changed)
{
    const char *host = getenv("HOROVOD_HOSTNAME");
    hvdd_identity id;
    int r;

    if (c == NULL || changed == NULL)
        return COLL_EINVAL;
    *changed = 0;
    if (!c->elastic || c->client == NULL || host == NULL)
        return comm_fail(c, COLL_ENOTSUP, "round_changed: not an elastic job");
    r = hvdd_client_rejoin(c->client, host, (int)getpid(), c->round, 0, &id);
    if (r == HVDD_ETIMEOUT) /* no round after this one */
        return 0;
    if (r == 0 || r == HVDD_EGONE) {
        *changed = 1;
        return 0;
    }
    return comm_fail(c, COLL_ERENDEZVOUS, "round_changed: %s",
                     hvdd_client_error(c->client));
}
