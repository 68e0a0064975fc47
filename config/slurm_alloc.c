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
    env->in_step = get("SLURM_STEP_NODELIST") != NULL;
    env->step_tasks = env->procid = env->pty_port = NULL;
    if (env->in_step) { /* the step's (slurm_alloc.h) */
        env->step_tasks = get("SLURM_STEP_NUM_TASKS");
        env->procid = get("SLURM_PROCID");
        env->pty_port = get("SLURM_PTY_PORT");
        env->nodelist = get("SLURM_STEP_NODELIST");
        env->num_nodes = get("SLURM_STEP_NUM_NODES");
        env->tasks_per_node = get("SLURM_STEP_TASKS_PER_NODE");
        return;
    }
    /* (the batch script of sbatch and salloc's own shell are no step) */
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

long
cfg_slurm_step_copies(const cfg_slurm_env *env)
{
    long n;

    /* (every task srun starts has SLURM_PROCID: without it, the step's
     * variables were inherited, by a worker of a job started there) */
    if (!env->in_step || env->step_tasks == NULL || env->procid == NULL ||
        hvd_parse_long(env->step_tasks, 1, 1L << 30, &n) != 0)
        return 0;
    if (env->pty_port && strcmp(env->procid, "0") == 0)
        return 0;
    return n > 1 ? n : 0;
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

/* The variables env's values came from, for errors. */
static const char *
nodelist_name(const cfg_slurm_env *env)
{
    return env->in_step ? "SLURM_STEP_NODELIST" : "SLURM_NODELIST";
}

static const char *
num_nodes_name(const cfg_slurm_env *env)
{
    return env->in_step ? "SLURM_STEP_NUM_NODES" : "SLURM_NNODES";
}

static const char *
tasks_name(const cfg_slurm_env *env)
{
    return env->in_step ? "SLURM_STEP_TASKS_PER_NODE" : "SLURM_TASKS_PER_NODE";
}

static int counts_of(const char *name, const char *spec, int *counts, size_t n,
                     cfg_err *e);

int
cfg_slurm_tasks_per_node(const char *spec, int *counts, size_t n, cfg_err *e)
{
    return counts_of("SLURM_TASKS_PER_NODE", spec, counts, n, e);
}

/* name's "COUNT[(xREPEAT)],..." into counts[0..n-1]. */
static int
counts_of(const char *name, const char *spec, int *counts, size_t n, cfg_err *e)
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
            r = cfg_fail(e, CFG_EINVAL, "%s: bad item '%s' in '%.200s'", name,
                         item, spec);
        for (long i = 0; r == 0 && i < repeat; i++, at++) {
            if (at >= n)
                r = cfg_fail(e, CFG_EINVAL,
                             "%s describes more than the %zu nodes of the "
                             "allocation: '%.200s'",
                             name, n, spec);
            else
                counts[at] = (int)count;
        }
    }
    free(copy);
    if (r == 0 && at != n)
        r = cfg_fail(e, CFG_EINVAL,
                     "%s describes %zu nodes, the allocation has %zu: "
                     "'%.200s'",
                     name, at, n, spec);
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
        return cfg_fail(e, CFG_EINVAL, "%s: bad count '%s'",
                        num_nodes_name(env), env->num_nodes);
    cfg_hostlist_init(&nodes);
    r = cfg_range_expand(env->nodelist, &tmpl, nodelist_name(env), &nodes, e);
    if (r == 0 && nodes.count != (size_t)want)
        r = cfg_fail(e, CFG_EINVAL, "%s names %zu nodes, %s says %ld: '%.200s'",
                     nodelist_name(env), nodes.count, num_nodes_name(env), want,
                     env->nodelist);
    if (r == 0 && (counts = calloc(nodes.count, sizeof(*counts))) == NULL)
        r = cfg_fail(e, CFG_ENOMEM, "out of memory");
    if (r == 0)
        r = counts_of(tasks_name(env), env->tasks_per_node, counts, nodes.count,
                      e);
    for (size_t i = 0; r == 0 && i < nodes.count; i++) {
        nodes.hosts[i].slots = counts[i];
        r = cfg_hostlist_add(out, &nodes.hosts[i], e);
    }
    free(counts);
    cfg_hostlist_release(&nodes);
    return r;
}
