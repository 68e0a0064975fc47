/* Rounds of an elastic job: the launcher starts round N + 1 with the
 * hosts that go on and the workers that survive; hvdd numbers the new
 * round's ranks (hosts in the order the launcher gives: the hosts that
 * go on first, so that they keep the low ranks and rank 0 is a survivor
 * whenever there is one), gives each survivor the first rank of its
 * host, in the order of its old rank, and leaves the rest to new
 * workers. A survivor learns
 * its new identity by rejoining; a worker of an old round that is not in
 * the new one is told so. */
#include "roster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The hosts of a round: order[0..n) indexes into j->hosts (the hosts of
 * round 0's plan: they have agents), slots[h] the ranks of host h. */
typedef struct round_hosts {
    int *order, *slots;
    int n;
} round_hosts;

/* The round's plan: ranks host by host in rh's order, host indexes those
 * of j->hosts. */
static int
round_plan(const hvdd_roster *j, const round_hosts *rh, cfg_plan *plan)
{
    int size = 0, most = 0, rank = 0, *at_local;

    for (int i = 0; i < rh->n; i++) {
        int n = rh->slots[rh->order[i]];
        size += n;
        most = n > most ? n : most;
    }
    memset(plan, 0, sizeof(*plan));
    plan->slots = calloc(size ? (size_t)size : 1, sizeof(*plan->slots));
    at_local = calloc((size_t)most + 1, sizeof(int));
    if (plan->slots == NULL || at_local == NULL) {
        free(plan->slots);
        free(at_local);
        return -1;
    }
    for (int i = 0; i < rh->n; i++) {
        int h = rh->order[i], n = rh->slots[h];
        for (int lr = 0; lr < n; lr++, rank++)
            plan->slots[rank] = (cfg_slot){rank, h, lr, n, at_local[lr]++, 0};
    }
    for (int r = 0; r < size; r++)
        plan->slots[r].cross_size = at_local[plan->slots[r].local_rank];
    plan->size = size;
    plan->nhosts = j->job_hosts;
    plan->scale = 1;
    free(at_local);
    return 0;
}

/* rh from a spec ("c:2,a:2") that names only hosts the job knows (the
 * parser adds up a host named twice). */
static int
round_hosts_parse(const hvdd_roster *j, const char *spec, round_hosts *rh,
                  char *err, size_t errlen)
{
    cfg_hostlist want;
    cfg_err e;
    int r = 0;

    cfg_hostlist_init(&want);
    if (cfg_hostspec_parse(spec, &want, &e) != 0) {
        snprintf(err, errlen, "bad hosts '%s': %s", spec, e.msg);
        cfg_hostlist_release(&want);
        return -1;
    }
    for (size_t i = 0; r == 0 && i < want.count; i++) {
        int h = hvdd_roster_host_index(j, want.hosts[i].name);
        if (h < 0) {
            snprintf(err, errlen, "host '%s' is not one of this job's",
                     want.hosts[i].name);
            r = -1;
        } else if (want.hosts[i].slots > 0) {
            rh->slots[h] = want.hosts[i].slots;
            rh->order[rh->n++] = h;
        }
    }
    cfg_hostlist_release(&want);
    return r;
}

/* A worker of this round that runs: registered, or kept from the last
 * round and not registered again yet (it may be about to rejoin). */
static int
running(const rank_info *ri)
{
    return ri->state == RANK_REGISTERED || ri->state == RANK_KEPT;
}

/* A rank of host h that goes on into the next round: a running worker's,
 * or one a host that joined (its agent alive) has not registered yet:
 * its workers are starting, and register into the round that runs. */
static int
goes_on(const hvdd_roster *j, int r, int h)
{
    const agent_info *a = &j->agents.hosts[h];

    return running(&j->ranks[r]) || (j->ranks[r].state == RANK_PENDING &&
                                     a->late && a->registered && !a->finished);
}

/* The first rank of host h not yet given, or -1. */
static int
free_rank_on(const rank_info *ranks, const cfg_plan *plan, int h)
{
    for (int r = 0; r < plan->size; r++)
        if (plan->slots[r].host == h && ranks[r].state == RANK_PENDING)
            return r;
    return -1;
}

int
hvdd_roster_new_round(hvdd_roster *j, const char *hosts_spec,
                      const hvdd_survivor *keep, int nkeep, kvstore *kv,
                      char *err, size_t errlen)
{
    size_t n = j->job_hosts > 0 ? (size_t)j->job_hosts : 1;
    round_hosts rh = {calloc(n, sizeof(int)), calloc(n, sizeof(int)), 0};
    rank_info *ranks = NULL;
    cfg_plan plan;
    int r = -1;

    if (!j->has_plan)
        snprintf(err, errlen, "this hvdd has no plan yet");
    else if (rh.order == NULL || rh.slots == NULL)
        snprintf(err, errlen, "out of memory");
    else if (round_hosts_parse(j, hosts_spec, &rh, err, errlen) == 0 &&
             (r = round_plan(j, &rh, &plan)) != 0)
        snprintf(err, errlen, "out of memory");
    free(rh.order);
    free(rh.slots);
    if (r != 0)
        return -1;
    if (plan.size < 1 ||
        (ranks = calloc((size_t)plan.size, sizeof(*ranks))) == NULL) {
        snprintf(err, errlen,
                 plan.size < 1 ? "a round needs a rank" : "out of memory");
        cfg_plan_release(&plan);
        return -1;
    }
    for (int k = 0; k < nkeep; k++) {
        int h = hvdd_roster_host_index(j, keep[k].host), at;
        if (h < 0 || keep[k].pid <= 0 ||
            (at = free_rank_on(ranks, &plan, h)) < 0)
            continue; /* not in this round: told so when it rejoins */
        ranks[at].state = RANK_KEPT;
        ranks[at].pid = keep[k].pid;
    }
    cfg_plan_release(&j->plan);
    free(j->ranks);
    j->plan = plan;
    j->ranks = ranks;
    j->size = plan.size;
    j->round++;
    j->fresh = 0;
    for (int k = 0; k < j->size; k++)
        j->fresh |= ranks[k].state == RANK_PENDING;
    return hvdd_roster_reset_round_state(j, kv, err, errlen);
}

int
hvdd_roster_trim_spec(const hvdd_roster *j, const char *spec, char *out,
                      size_t size)
{
    cfg_hostlist want;
    cfg_err e;
    size_t at = 0;
    int total = 0;

    cfg_hostlist_init(&want);
    if (cfg_hostspec_parse(spec, &want, &e) != 0) {
        cfg_hostlist_release(&want);
        return -1;
    }
    out[0] = '\0';
    for (size_t i = 0; i < want.count; i++) {
        int h = hvdd_roster_host_index(j, want.hosts[i].name), n = 0;
        for (int r = 0; h >= 0 && r < j->size; r++)
            n += j->plan.slots[r].host == h && goes_on(j, r, h);
        n = n < want.hosts[i].slots ? n : want.hosts[i].slots;
        total += n;
        if (n > 0 && at < size)
            at += (size_t)snprintf(out + at, size - at, "%s%s:%d",
                                   at ? "," : "", want.hosts[i].name, n);
    }
    cfg_hostlist_release(&want);
    return at < size ? total : -1;
}

hvdd_survivor *
hvdd_roster_registered(const hvdd_roster *j, int *n)
{
    hvdd_survivor *sv = calloc(j->size > 0 ? (size_t)j->size : 1, sizeof(*sv));

    *n = 0;
    for (int r = 0; sv && j->has_plan && r < j->size; r++)
        if (running(&j->ranks[r]))
            sv[(*n)++] = (hvdd_survivor){
                j->hosts.hosts[j->plan.slots[r].host].name, j->ranks[r].pid};
    return sv;
}

int
hvdd_roster_rejoin(const hvdd_roster *j, const char *host, int pid, int after)
{
    int h = hvdd_roster_host_index(j, host);

    if (j->round <= after)
        return -2;
    for (int r = 0; h >= 0 && r < j->size; r++)
        if (j->plan.slots[r].host == h && j->ranks[r].pid == pid &&
            running(&j->ranks[r]))
            return r;
    return -1;
}

int
hvdd_roster_add_host(hvdd_roster *j, const char *name, char *err, size_t errlen)
{
    cfg_host host = {.name = (char *)name, .slots = 1};
    int h = hvdd_roster_host_index(j, name);
    cfg_err e;

    if (!j->has_plan || j->agents.decided != 1 ||
        j->hosts.count != (size_t)j->job_hosts) {
        snprintf(err, errlen,
                 "hosts join a running job only, once its network is chosen");
        return -1;
    }
    for (int r = 0; h >= 0 && r < j->size; r++)
        if (j->plan.slots[r].host == h && running(&j->ranks[r])) {
            snprintf(err, errlen, "host '%s' has running ranks in round %d",
                     name, j->round);
            return -1;
        }
    if (h >= 0) { /* it left and comes back: its agent registers again */
        hvdd_agents_forget(&j->agents, h);
        return h;
    }
    if (!cfg_host_name_valid(name)) {
        snprintf(err, errlen, "bad host name '%.200s'", name);
        return -1;
    }
    if (cfg_hostlist_add(&j->hosts, &host, &e) != 0 ||
        hvdd_agents_add(&j->agents) != j->job_hosts) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return j->job_hosts++;
}
