#include "plan.h"

#include <stdlib.h>
#include <string.h>

/* Ranks per host, after scaling and truncation to np. */
static int *
ranks_per_host(const cfg_hostlist *hosts, long np, int scale, int *maxlocal)
{
    int *n = calloc(hosts->count ? hosts->count : 1, sizeof(*n));
    long left = np;
    size_t i;

    if (n == NULL)
        return NULL;
    *maxlocal = 0;
    for (i = 0; i < hosts->count && left > 0; i++) {
        long want = (long)hosts->hosts[i].slots * scale;
        n[i] = (int)(want < left ? want : left);
        left -= n[i];
        if (n[i] > *maxlocal)
            *maxlocal = n[i];
    }
    return n;
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
    n = ranks_per_host(hosts, np, plan->scale, &maxlocal);
    count_at_local = calloc(maxlocal + 1, sizeof(*count_at_local));
    plan->slots = calloc(np, sizeof(*plan->slots));
    if (n == NULL || count_at_local == NULL || plan->slots == NULL) {
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
