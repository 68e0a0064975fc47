/* A Slurm allocation as its environment describes it: which nodes, and
 * how many tasks each may run. hvdrun takes its hosts from here when it
 * runs inside one and is given neither -H nor --hostfile. */
#ifndef CFG_SLURM_ALLOC_H
#define CFG_SLURM_ALLOC_H

#include <stddef.h>

#include "cfg_error.h"
#include "hostlist.h"

/* The variables that describe an allocation (NULL when not set). */
typedef struct cfg_slurm_env {
    const char *nodelist;       /* SLURM_NODELIST, else SLURM_JOB_NODELIST */
    const char *num_nodes;      /* SLURM_NNODES, else SLURM_JOB_NUM_NODES */
    const char *tasks_per_node; /* SLURM_TASKS_PER_NODE */
    /* Inside a job step (srun --pty bash, or salloc's shell where Slurm
     * makes it a step: SLURM_STEP_NODELIST set), SLURM_NNODES and
     * SLURM_TASKS_PER_NODE describe the step but SLURM_NODELIST the job,
     * and the job's tasks per node are told nowhere. The allocation is
     * then the step's own: SLURM_STEP_NODELIST, SLURM_STEP_NUM_NODES and
     * SLURM_STEP_TASKS_PER_NODE above. */
    int in_step;
    /* Inside a step: its task count (SLURM_STEP_NUM_TASKS), this task's
     * number (SLURM_PROCID) and, in srun --pty's step, SLURM_PTY_PORT;
     * NULL when not set. */
    const char *step_tasks;
    const char *procid;
    const char *pty_port;
} cfg_slurm_env;

/* Reads the variables through get (getenv, or a test's own). */
void cfg_slurm_env_read(cfg_slurm_env *env, const char *(*get)(const char *));

/* 1 when all three are set: the test mpiexec.hydra makes. */
int cfg_slurm_in_allocation(const cfg_slurm_env *env);

/* The step's task count when hvdrun runs as one of several tasks of a
 * job step (srun -n 3 hvdrun ...: each task a copy of hvdrun), else 0.
 * Task 0 of srun --pty's step is no copy, however many tasks the step
 * has: its shell is the one a user types into (srun -N 2 -n 4 --pty
 * bash; the other tasks get no input, and a shell there ends). Nor is a
 * process without SLURM_PROCID, which srun gives every task: a worker
 * that inherited the step's variables from a job started in it. */
long cfg_slurm_step_copies(const cfg_slurm_env *env);

/* Expands SLURM_TASKS_PER_NODE ("2(x3),1") into counts[0..n-1], one per
 * node; the spec must describe exactly n nodes, each count >= 1. */
int cfg_slurm_tasks_per_node(const char *spec, int *counts, size_t n,
                             cfg_err *e);

/* Appends the allocation's nodes to out, in Slurm's order, each with its
 * tasks as slots. Errors name the variable at fault. */
int cfg_slurm_hosts(const cfg_slurm_env *env, cfg_hostlist *out, cfg_err *e);

/* What a node holds of a job's generic resources: its GPUs, and its
 * other kinds as srun's --gres names them, untyped and in the order of
 * their names ("nic:2,shard:4"; "" for none), which a step that names
 * its GPUs must name too, or go without. */
typedef struct cfg_node_gres {
    long gpus;
    char other[256];
} cfg_node_gres;

/* Each of nodes[0..n)'s generic resources in job, from `scontrol show
 * job -d JOB` (detail; only the record of JobId=job counts): out[i].
 * Errors say what is wrong with the line at fault (an entry that cannot
 * be read, GPU shares given by index alone, more kinds than other holds),
 * or name a node the record does not name. */
int cfg_slurm_node_gres(const char *detail, const char *job, char *const *nodes,
                        size_t n, cfg_node_gres *out, cfg_err *e);

#endif
