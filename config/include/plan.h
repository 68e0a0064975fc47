/* The job plan: which rank runs where, by Horovod's rules. */
#ifndef CFG_PLAN_H
#define CFG_PLAN_H

#include "hostlist.h"

typedef struct cfg_slot {
    int rank;
    int host; /* index into the host list */
    int local_rank;
    int local_size;
    int cross_rank; /* this host's index among hosts with this local_rank */
    int cross_size; /* number of hosts with this local_rank */
} cfg_slot;

typedef struct cfg_plan {
    cfg_slot *slots; /* size entries, by rank */
    int size;
    int nhosts; /* hosts that got at least one rank: the first nhosts */
    int scale;  /* > 1 when np exceeded the slots and they were multiplied */
} cfg_plan;

/* Hosts in order, slots filled in order, ranks contiguous per host. np <= 0
 * takes every slot; np below the slots takes the first np; np above them
 * multiplies every host's slots by the smallest factor that fits (plan->scale
 * says so, for the caller's warning). Release with cfg_plan_release. */
int cfg_plan_build(const cfg_hostlist *hosts, int np, cfg_plan *plan,
                   cfg_err *e);
void cfg_plan_release(cfg_plan *plan);

/* Index of the first rank of host h, or -1 when h got no rank. */
int cfg_plan_first_rank(const cfg_plan *plan, int host);

#endif
