/* Rounds of an elastic job: the launcher starts round N + 1 with the
 * hosts that go on and the workers that survive; hvdd numbers the new
 * round's ranks (hosts in the job's order, so older hosts keep the low
 * ranks), gives each survivor the first rank of its host, in the order
 * of its old rank, and leaves the rest to new workers. A survivor learns
 * its new identity by rejoining; a worker of an old round that is not in
 * the new one is told so. */
#include "roster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The round's plan over the job's hosts (those of round 0's plan: they
 * have agents): slots[h] ranks on host h, hosts in order, host indexes
 * those of j->hosts (a host may have none). */
static int
round_plan(const hvdd_roster *j, const int *slots, cfg_plan *plan)
{
    int size = 0, most = 0, rank = 0, *at_local;

    for (int h = 0; h < j->job_hosts; h++) {
        size += slots[h];
        most = slots[h] > most ? slots[h] : most;
    }
    memset(plan, 0, sizeof(*plan));
    plan->slots = calloc(size ? (size_t)size : 1, sizeof(*plan->slots));
    at_local = calloc((size_t)most + 1, sizeof(int));
    if (plan->slots == NULL || at_local == NULL) {
        free(plan->slots);
        free(at_local);
        return -1;
    }
    for (int h = 0; h < j->job_hosts; h++)
        for (int lr = 0; lr < slots[h]; lr++, rank++)
            plan->slots[rank] =
                (cfg_slot){rank, (int)h, lr, slots[h], at_local[lr]++, 0};
    for (int r = 0; r < size; r++)
        plan->slots[r].cross_size = at_local[plan->slots[r].local_rank];
    plan->size = size;
    plan->nhosts = j->job_hosts;
    plan->scale = 1;
    free(at_local);
    return 0;
}

/* slots[h] for every host of the job from a spec ("a:2,c:2") that names
 * only hosts it knows (the parser adds up a host named twice). */
static int
round_slots(const hvdd_roster *j, const char *spec, int *slots, char *err,
            size_t errlen)
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
        } else {
            slots[h] = want.hosts[i].slots;
        }
    }
    cfg_hostlist_release(&want);
    return r;
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
    int *slots = calloc(j->job_hosts ? (size_t)j->job_hosts : 1, sizeof(int));
    rank_info *ranks = NULL;
    cfg_plan plan;

    if (!j->has_plan) {
        free(slots);
        snprintf(err, errlen, "this hvdd has no plan yet");
        return -1;
    }
    if (slots == NULL || round_slots(j, hosts_spec, slots, err, errlen) != 0 ||
        round_plan(j, slots, &plan) != 0) {
        if (slots && !err[0])
            snprintf(err, errlen, "out of memory");
        free(slots);
        return -1;
    }
    free(slots);
    if (plan.size < 1 ||
        (ranks = calloc((size_t)plan.size, sizeof(*ranks))) == NULL) {
        snprintf(err, errlen,
                 plan.size < 1 ? "a round needs a rank" : "out of memory");
        cfg_plan_release(&plan);
        return -1;
    }
    for (int k = 0; k < nkeep; k++) {
        int h = hvdd_roster_host_index(j, keep[k].host), r;
        if (h < 0 || keep[k].pid <= 0 ||
            (r = free_rank_on(ranks, &plan, h)) < 0)
            continue; /* not in this round: told so when it rejoins */
        ranks[r].state = RANK_KEPT;
        ranks[r].pid = keep[k].pid;
    }
    cfg_plan_release(&j->plan);
    free(j->ranks);
    j->plan = plan;
    j->ranks = ranks;
    j->size = plan.size;
    j->round++;
    j->fresh = 0;
    for (int r = 0; r < j->size; r++)
        j->fresh |= ranks[r].state == RANK_PENDING;
    return hvdd_roster_reset_round_state(j, kv, err, errlen);
}

int
hvdd_roster_rejoin(const hvdd_roster *j, const char *host, int pid, int after)
{
    int h = hvdd_roster_host_index(j, host);

    if (j->round <= after)
        return -2;
    for (int r = 0; h >= 0 && r < j->size; r++)
        if (j->plan.slots[r].host == h && j->ranks[r].pid == pid &&
            (j->ranks[r].state == RANK_KEPT ||
             j->ranks[r].state == RANK_REGISTERED))
            return r;
    return -1;
}
