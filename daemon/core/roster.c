#include "roster.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct barrier {
    int round;
    int count;
    unsigned char *joined; /* size flags for the current round */
} barrier;

static void
barrier_free(void *p)
{
    barrier *b = p;

    free(b->joined);
    free(b);
}

/* Horovod's scope sizes: global, local_<host>, cross_<local_rank>. */
static int
set_scopes(hvdd_roster *j, kvstore *kv)
{
    char name[KV_MAX_SCOPE];
    int r = hvdd_kv_set_scope_size(kv, "global", j->size);

    for (int i = 0; r == 0 && i < j->plan.size; i++) {
        const cfg_slot *s = &j->plan.slots[i];
        snprintf(name, sizeof(name), "local_%s", j->hosts.hosts[s->host].name);
        r = hvdd_kv_set_scope_size(kv, name, s->local_size);
        snprintf(name, sizeof(name), "cross_%d", s->local_rank);
        if (r == 0)
            r = hvdd_kv_set_scope_size(kv, name, s->cross_size);
    }
    return r;
}

static int
make_plan(hvdd_roster *j, kvstore *kv, char *err, size_t errlen)
{
    cfg_err e;

    if (cfg_plan_build(&j->hosts, j->size, &j->plan, &e) != 0) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    if ((j->ranks = calloc(j->size, sizeof(*j->ranks))) == NULL ||
        set_scopes(j, kv) != 0 ||
        hvdd_agents_init(&j->agents, j->plan.nhosts, NULL) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    j->has_plan = 1;
    j->job_hosts = j->plan.nhosts;
    return 0;
}

int
hvdd_roster_reset_round_state(hvdd_roster *j, kvstore *kv, char *err,
                              size_t errlen)
{
    hvdd_hmap_release(&j->barriers, barrier_free);
    hvdd_hmap_init(&j->barriers);
    if (set_scopes(j, kv) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int
hvdd_roster_init(hvdd_roster *j, int size, const char *hosts_spec, kvstore *kv,
                 char *err, size_t errlen)
{
    cfg_err e;

    memset(j, 0, sizeof(*j));
    j->size = size;
    cfg_hostlist_init(&j->hosts);
    hvdd_hmap_init(&j->barriers);
    hvdd_hmap_init(&j->arrived);
    snprintf(j->iface, sizeof(j->iface), "lo");
    snprintf(j->master_addr, sizeof(j->master_addr), "127.0.0.1");
    if (size < 1) {
        snprintf(err, errlen, "the job size must be at least 1");
        return -1;
    }
    if (hosts_spec == NULL)
        return (j->arrivals = calloc(size, sizeof(*j->arrivals))) ? 0 : -1;
    if (cfg_hostspec_parse(hosts_spec, &j->hosts, &e) != 0) {
        snprintf(err, errlen, "bad hosts '%s': %s", hosts_spec, e.msg);
        return -1;
    }
    return make_plan(j, kv, err, errlen);
}

void
hvdd_roster_release(hvdd_roster *j)
{
    cfg_plan_release(&j->plan);
    cfg_hostlist_release(&j->hosts);
    hvdd_hmap_release(&j->barriers, barrier_free);
    hvdd_hmap_release(&j->arrived, NULL);
    hvdd_agents_release(&j->agents);
    free(j->ranks);
    free(j->arrivals);
    memset(j, 0, sizeof(*j));
}

static int
take_rank(hvdd_roster *j, int rank, int pid, double now)
{
    j->ranks[rank].state = RANK_REGISTERED;
    j->ranks[rank].pid = pid;
    j->ranks[rank].last_seen = now;
    return rank;
}

static int
register_planned(hvdd_roster *j, const char *host, int pid, int rank,
                 double now, char *err, size_t errlen)
{
    if (rank >= j->size) {
        snprintf(err, errlen, "rank %d is outside the job (size %d)", rank,
                 j->size);
        return -1;
    }
    if (rank >= 0) {
        const char *want = j->hosts.hosts[j->plan.slots[rank].host].name;
        if (strcmp(want, host) != 0) {
            snprintf(err, errlen, "rank %d belongs to host '%s', not '%s'",
                     rank, want, host);
            return -1;
        }
        if (j->ranks[rank].state == RANK_KEPT && j->ranks[rank].pid != pid) {
            snprintf(err, errlen,
                     "rank %d of round %d is kept for pid %d, not %d", rank,
                     j->round, j->ranks[rank].pid, pid);
            return -1;
        }
        return take_rank(j, rank, pid, now);
    }
    for (int r = 0; r < j->size; r++)
        if (j->ranks[r].state == RANK_PENDING &&
            strcmp(j->hosts.hosts[j->plan.slots[r].host].name, host) == 0)
            return take_rank(j, r, pid, now);
    snprintf(err, errlen, "host '%s' has no free rank in the plan", host);
    return -1;
}

/* Standalone: hosts in order of first arrival, slots = their workers. */
static int
plan_from_arrivals(hvdd_roster *j, kvstore *kv, double now, char *err,
                   size_t errlen)
{
    cfg_host h = {.slots = 1};

    for (int i = 0; i < j->narrivals; i++) {
        h.name = j->arrivals[i].host;
        if (cfg_hostlist_add(&j->hosts, &h, NULL) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    if (make_plan(j, kv, err, errlen) != 0)
        return -1;
    for (int i = 0; i < j->narrivals; i++)
        if ((j->arrivals[i].rank =
                 register_planned(j, j->arrivals[i].host, j->arrivals[i].pid,
                                  -1, now, err, errlen)) < 0)
            return -1;
    return 0;
}

int
hvdd_roster_register(hvdd_roster *j, const char *host, int pid, int rank,
                     kvstore *kv, double now, int *arrival, char *err,
                     size_t errlen)
{
    char key[300];
    hvdd_arrival *a;

    if (j->has_plan)
        return register_planned(j, host, pid, rank, now, err, errlen);
    if (rank >= 0) {
        snprintf(err, errlen, "this hvdd has no plan: register without a rank");
        return -1;
    }
    snprintf(key, sizeof(key), "%.255s %d", host, pid);
    if (hvdd_hmap_get(&j->arrived, key) != NULL) {
        snprintf(err, errlen, "'%s' pid %d registered twice", host, pid);
        return -1;
    }
    if (j->narrivals >= j->size) {
        snprintf(err, errlen, "all %d ranks have registered", j->size);
        return -1;
    }
    a = &j->arrivals[j->narrivals];
    snprintf(a->host, sizeof(a->host), "%s", host);
    a->pid = pid;
    a->rank = -2;
    *arrival = j->narrivals++;
    if (hvdd_hmap_put(&j->arrived, key, (void *)(intptr_t)j->narrivals, NULL) !=
            0 ||
        (j->narrivals == j->size &&
         plan_from_arrivals(j, kv, now, err, errlen) != 0))
        return -1;
    return a->rank;
}

int
hvdd_roster_arrival_rank(const hvdd_roster *j, int arrival)
{
    if (arrival < 0 || arrival >= j->narrivals)
        return -1;
    return j->arrivals[arrival].rank;
}

static int
valid_rank(const hvdd_roster *j, int rank)
{
    return j->has_plan && rank >= 0 && rank < j->size &&
           j->ranks[rank].state != RANK_PENDING &&
           j->ranks[rank].state != RANK_KEPT;
}

int
hvdd_roster_heartbeat(hvdd_roster *j, int rank, double now)
{
    if (!valid_rank(j, rank))
        return -1;
    j->ranks[rank].last_seen = now;
    return 0;
}

int
hvdd_roster_exited(hvdd_roster *j, int rank, int code, int pid,
                   const char *host)
{
    /* a rank that never registered (any program, not only libcollective)
     * is reported by its host's agent */
    if (!j->has_plan || rank < 0 || rank >= j->size)
        return -1;
    /* a worker of an earlier round reporting its old rank, now another
     * worker's (a rank not registered yet has no pid) */
    if (pid > 0 && j->ranks[rank].pid > 0 && j->ranks[rank].pid != pid)
        return -2;
    /* (a rank waiting for a new worker has no pid yet: an old worker of
     * another host that had that rank index must not take it) */
    if (host && strcmp(host, j->hosts.hosts[j->plan.slots[rank].host].name))
        return -2;
    if (pid > 0)
        j->ranks[rank].pid = pid;
    j->ranks[rank].state = RANK_EXITED;
    j->ranks[rank].exit_code = code;
    if (code != 0)
        hvdd_roster_note_failure(j, j->round, rank, j->ranks[rank].pid, code,
                                 j->hosts.hosts[j->plan.slots[rank].host].name);
    return 0;
}

void
hvdd_roster_note_failure(hvdd_roster *j, int round, int rank, int pid, int code,
                         const char *host)
{
    hvdd_failure *f;

    for (int i = 0; pid > 0 && i < j->nfailures; i++)
        if (j->failures[i].pid == pid && strcmp(j->failures[i].host, host) == 0)
            return; /* (its agent's report and its own) */
    if (j->nfailures >= HVDD_FAILURES_KEPT)
        return;
    f = &j->failures[j->nfailures++];
    *f = (hvdd_failure){round, rank, pid, code, ""};
    snprintf(f->host, sizeof(f->host), "%s", host);
}

static barrier *
barrier_get(hvdd_roster *j, const char *name)
{
    barrier *b = hvdd_hmap_get(&j->barriers, name);

    if (b)
        return b;
    if ((b = calloc(1, sizeof(*b))) == NULL ||
        (b->joined = calloc(j->size, 1)) == NULL ||
        hvdd_hmap_put(&j->barriers, name, b, NULL) != 0) {
        if (b)
            free(b->joined);
        free(b);
        return NULL;
    }
    return b;
}

int
hvdd_roster_barrier(hvdd_roster *j, const char *name, int rank, int *round)
{
    barrier *b;

    if (!valid_rank(j, rank) || (b = barrier_get(j, name)) == NULL)
        return -1;
    if (*round >= 0 && *round < b->round)
        return 1; /* the round this caller joined has completed */
    if (*round < 0) {
        *round = b->round;
        if (!b->joined[rank]) {
            b->joined[rank] = 1;
            b->count++;
        }
    }
    if (b->count < j->size)
        return 0;
    b->round++;
    b->count = 0;
    memset(b->joined, 0, j->size);
    return 1;
}

void
hvdd_roster_abort(hvdd_roster *j, const char *reason)
{
    size_t n = strlen(reason), size = sizeof(j->abort_reason);

    if (j->aborted)
        return;
    j->aborted = 1;
    /* one line (hvdd's stdout gives hvdrun "abort REASON" lines, and a
     * newline would start a line of hvdrun's protocol of its own), cut
     * where a UTF-8 character starts (the status is JSON) */
    if (n >= size)
        for (n = size - 1; n > 0 && (reason[n] & 0xc0) == 0x80; n--)
            ;
    for (size_t i = 0; i < n; i++)
        j->abort_reason[i] =
            (unsigned char)reason[i] < 0x20 || reason[i] == 0x7f ? ' '
                                                                 : reason[i];
    j->abort_reason[n] = '\0';
}

/* An agent between its registration and its exit that went silent. */
static int
check_agents(hvdd_roster *j, double now)
{
    char reason[512];

    for (int h = 0; h < j->agents.nhosts && j->plan.nhosts > 0; h++) {
        const agent_info *a = &j->agents.hosts[h];
        if (!a->registered || a->finished ||
            now - a->last_seen <= j->heartbeat_timeout ||
            cfg_plan_first_rank(&j->plan, h) < 0)
            continue; /* (a host the round has no rank on is not watched:
                       * one that left, or one still joining) */
        snprintf(reason, sizeof(reason),
                 "the agent of host '%s' sent no heartbeat for %.1f s",
                 j->hosts.hosts[h].name, now - a->last_seen);
        hvdd_roster_abort(j, reason);
        return 1;
    }
    return 0;
}

int
hvdd_roster_check_heartbeats(hvdd_roster *j, double now)
{
    char reason[512];

    if (j->heartbeat_timeout <= 0 || !j->has_plan || j->aborted)
        return 0;
    if (check_agents(j, now))
        return 1;
    for (int r = 0; r < j->size; r++) {
        rank_info *ri = &j->ranks[r];
        if (ri->state != RANK_REGISTERED ||
            now - ri->last_seen <= j->heartbeat_timeout)
            continue;
        ri->state = RANK_LOST;
        snprintf(reason, sizeof(reason),
                 "rank %d on host '%s' (pid %d) sent no heartbeat for %.1f s",
                 r, j->hosts.hosts[j->plan.slots[r].host].name, ri->pid,
                 now - ri->last_seen);
        hvdd_roster_abort(j, reason);
        return 1;
    }
    return 0;
}

int
hvdd_roster_host_index(const hvdd_roster *j, const char *name)
{
    for (int h = 0; j->has_plan && h < j->job_hosts; h++)
        if (strcmp(j->hosts.hosts[h].name, name) == 0)
            return h;
    return -1;
}

const char *
hvdd_roster_iface(const hvdd_roster *j, int h)
{
    if (j->has_plan && j->plan.nhosts > 1 && j->agents.decided == 1)
        return j->agents.picks[h].iface;
    return j->iface;
}

const char *
hvdd_roster_master_addr(const hvdd_roster *j)
{
    /* rank 0's host: in an elastic round, not always the job's first */
    if (j->has_plan && j->plan.nhosts > 1 && j->agents.decided == 1 &&
        j->plan.size > 0)
        return j->agents.picks[j->plan.slots[0].host].addr;
    return j->master_addr;
}
