#include "plan.h"

#include <stdlib.h>
#include <string.h>

/* Ranks per host into n: each host's slots times scale, but no more than
 * its max_slots, in order until np. The ranks placed. */
static long
place(const cfg_hostlist *hosts, long np, long scale, int *n, int *maxlocal)
{
    long left = np;

    *maxlocal = 0;
    for (size_t i = 0; i < hosts->count; i++) {
        long want = hosts->hosts[i].slots * scale;
        if (hosts->hosts[i].max_slots && want > hosts->hosts[i].max_slots)
            want = hosts->hosts[i].max_slots;
        n[i] = (int)(want < left ? want : left);
        left -= n[i];
        if (n[i] > *maxlocal)
            *maxlocal = n[i];
    }
    return np - left;
}

/* Ranks per host into *out: the lowest scale from *scale up (times each
 * host's slots) that places np within every max_slots (OpenMPI's meaning:
 * how far a host may be oversubscribed). 0, or a code with e set. */
static int
ranks_per_host(const cfg_hostlist *hosts, long np, int *scale, int *maxlocal,
               int **out, cfg_err *e)
{
    int *n = calloc(hosts->count ? hosts->count : 1, sizeof(*n));
    long lo = *scale, hi = np, placed;

    if (n == NULL)
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    /* the most that can be placed: at a scale of np, a host without a
     * bound takes all np (its slots are at least 1) */
    if ((placed = place(hosts, np, hi, n, maxlocal)) < np) {
        free(n);
        return cfg_fail(e, CFG_ERANGE,
                        "-np %ld is more than the %ld ranks the hosts' "
                        "max_slots allow",
                        np, placed);
    }
    /* what place() puts grows with the scale: the lowest that will do */
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (place(hosts, np, mid, n, maxlocal) >= np)
            hi = mid;
        else
            lo = mid + 1;
    }
    place(hosts, np, lo, n, maxlocal);
    *scale = (int)lo;
    *out = n;
    return 0;
}

static void
fill_slots(cfg_plan *plan, const int *n, size_t nhosts, int *count_at_local)
{
    int rank = 0;
    size_t h;

    for (h = 0; h < nhosts && n[h] > 0; h++) {
        for (int lr = 0; lr < n[h]; lr++, rank++) {
            cfg_slot *s = &plan->slots[rank];
            s->rank = rank;
            s->host = (int)h;
            s->local_rank = lr;
            s->local_size = n[h];
            s->cross_rank = count_at_local[lr]++;
        }
        plan->nhosts = (int)h + 1;
    }
    for (rank = 0; rank < plan->size; rank++)
        plan->slots[rank].cross_size =
            count_at_local[plan->slots[rank].local_rank];
}

int
cfg_plan_build(const cfg_hostlist *hosts, int np, cfg_plan *plan, cfg_err *e)
{
    long total = cfg_hostlist_slots(hosts);
    int *n = NULL, *count_at_local = NULL, maxlocal = 0, r = 0;

    memset(plan, 0, sizeof(*plan));
    if (total <= 0)
        return cfg_fail(e, CFG_EINVAL, "no hosts to run on");
    if (np <= 0)
        np = total > CFG_MAX_SLOTS ? CFG_MAX_SLOTS : (int)total;
    if (np > CFG_MAX_SLOTS)
        return cfg_fail(e, CFG_ERANGE, "more than %d processes", CFG_MAX_SLOTS);
    plan->scale = (int)((np + total - 1) / total);
    plan->size = np;
    if ((r = ranks_per_host(hosts, np, &plan->scale, &maxlocal, &n, e)) != 0)
        return r;
    count_at_local = calloc(maxlocal + 1, sizeof(*count_at_local));
    plan->slots = calloc(np, sizeof(*plan->slots));
    if (count_at_local == NULL || plan->slots == NULL) {
        r = cfg_fail(e, CFG_ENOMEM, "out of memory");
        cfg_plan_release(plan);
        goto out;
    }
    fill_slots(plan, n, hosts->count, count_at_local);
out:
    free(n);
    free(count_at_local);
    return r;
}

void
cfg_plan_release(cfg_plan *plan)
{
    free(plan->slots);
    memset(plan, 0, sizeof(*plan));
}

int
cfg_plan_first_rank(const cfg_plan *plan, int host)
{
    int r;

    for (r = 0; r < plan->size; r++)
        if (plan->slots[r].host == host)
            return r;
    return -1;
}
