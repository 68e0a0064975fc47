/* Slurm's description of an allocation, from its variables. The node list
 * is Slurm's hostlist syntax (brackets, several per name, zero padding
 * kept), which range.c expands; the tasks are "COUNT[(xREPEAT)]" items. */
#include "slurm_alloc.h"

#include <stdlib.h>
#include <string.h>

#include "hvd_numbers.h"
#include "internal.h"

void
cfg_slurm_env_read(cfg_slurm_env *env, const char *(*get)(const char *))
{
    /* SLURM_NODELIST and SLURM_NNODES first: inside a step (srun --pty
     * bash) they describe the step, as SLURM_TASKS_PER_NODE then does */
    env->nodelist = get("SLURM_NODELIST");
    if (env->nodelist == NULL)
        env->nodelist = get("SLURM_JOB_NODELIST");
    env->num_nodes = get("SLURM_NNODES");
    if (env->num_nodes == NULL)
        env->num_nodes = get("SLURM_JOB_NUM_NODES");
    env->tasks_per_node = get("SLURM_TASKS_PER_NODE");
}

int
cfg_slurm_in_allocation(const cfg_slurm_env *env)
{
    return env->nodelist && env->num_nodes && env->tasks_per_node;
}

/* One item, "2" or "2(x3)": its count and how many nodes it covers. */
static int
parse_item(const char *item, long *count, long *repeat)
{
    char num[24];
    const char *paren = strchr(item, '(');
    size_t len = paren ? (size_t)(paren - item) : strlen(item);

    *repeat = 1;
    if (len == 0 || len >= sizeof(num))
        return -1;
    memcpy(num, item, len);
    num[len] = '\0';
    if (hvd_parse_long(num, 1, CFG_MAX_SLOTS, count) != 0)
        return -1;
    if (paren == NULL)
        return 0;
    len = strlen(paren);
    if (len < 4 || paren[1] != 'x' || paren[len - 1] != ')' ||
        len - 3 >= sizeof(num))
        return -1;
    memcpy(num, paren + 2, len - 3);
    num[len - 3] = '\0';
    return hvd_parse_long(num, 1, CFG_MAX_HOSTS, repeat);
}

int
cfg_slurm_tasks_per_node(const char *spec, int *counts, size_t n, cfg_err *e)
{
    char *copy = strdup(spec), *item, *next;
    size_t at = 0;
    int r = 0;

    if (copy == NULL)
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    /* (strsep, not strtok: an empty item is an error, not skipped) */
    for (next = copy; (item = strsep(&next, ",")) != NULL && r == 0;) {
        long count, repeat;
        if (parse_item(item, &count, &repeat) != 0)
            r = cfg_fail(e, CFG_EINVAL,
                         "SLURM_TASKS_PER_NODE: bad item '%s' in '%.200s'",
                         item, spec);
        for (long i = 0; r == 0 && i < repeat; i++, at++) {
            if (at >= n)
                r = cfg_fail(e, CFG_EINVAL,
                             "SLURM_TASKS_PER_NODE describes more than the "
                             "%zu nodes of the allocation: '%.200s'",
                             n, spec);
            else
                counts[at] = (int)count;
        }
    }
    free(copy);
    if (r == 0 && at != n)
        r = cfg_fail(e, CFG_EINVAL,
                     "SLURM_TASKS_PER_NODE describes %zu nodes, the "
                     "allocation has %zu: '%.200s'",
                     at, n, spec);
    return r;
}

int
cfg_slurm_hosts(const cfg_slurm_env *env, cfg_hostlist *out, cfg_err *e)
{
    cfg_host tmpl = {.slots = 1};
    cfg_hostlist nodes;
    long want;
    int *counts = NULL, r;

    if (!cfg_slurm_in_allocation(env))
        return cfg_fail(e, CFG_EINVAL, "not inside a Slurm allocation");
    if (hvd_parse_long(env->num_nodes, 1, CFG_MAX_HOSTS, &want) != 0)
        return cfg_fail(e, CFG_EINVAL, "SLURM_NNODES: bad count '%s'",
                        env->num_nodes);
    cfg_hostlist_init(&nodes);
    r = cfg_range_expand(env->nodelist, &tmpl, "SLURM_NODELIST", &nodes, e);
    if (r == 0 && nodes.count != (size_t)want)
        r = cfg_fail(e, CFG_EINVAL,
                     "SLURM_NODELIST names %zu nodes, SLURM_NNODES says "
                     "%ld: '%.200s'",
                     nodes.count, want, env->nodelist);
    if (r == 0 && (counts = calloc(nodes.count, sizeof(*counts))) == NULL)
        r = cfg_fail(e, CFG_ENOMEM, "out of memory");
    if (r == 0)
        r = cfg_slurm_tasks_per_node(env->tasks_per_node, counts, nodes.count,
                                     e);
    for (size_t i = 0; r == 0 && i < nodes.count; i++) {
        nodes.hosts[i].slots = counts[i];
        r = cfg_hostlist_add(out, &nodes.hosts[i], e);
    }
    free(counts);
    cfg_hostlist_release(&nodes);
    return r;
}
