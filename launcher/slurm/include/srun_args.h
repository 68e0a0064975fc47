/* srun's argv for a step (private to launcher/slurm/ and --dry-run). */
#ifndef HVD_SRUN_ARGS_H
#define HVD_SRUN_ARGS_H

#include <stddef.h>

#include "srun_step.h"

/* argv (calloc'd; its strings point into spec, nodearg and counts, which
 * must outlive it), or NULL when out of memory. */
char **srun_argv(const srun_step_spec *spec, char *nodearg, size_t nodelen,
                 char counts[3][40]);

/* The step's generic resources for nodes[0..n), into out (room for
 * SRUN_GRES_MAX bytes): "" where the job asked for its GPUs per node, or
 * none (the step takes the job's request as its own); where it asked per
 * task or per job (SLURM_GPUS, SLURM_GPUS_PER_TASK, ...), which a step of
 * one task per node cannot take, "--gres=gpu:K,..." with the K GPUs the
 * job has on each node and its other kinds there (a nic, ...: a step
 * that names its gres gets only those), or "--gres=none" where it has
 * none (srun_gres.c). 0, or -1 with the reason in err (scontrol failed,
 * or the nodes' gres differ, which one step cannot take). */
#define SRUN_GRES_MAX 320
int srun_gres_arg(char *const *nodes, size_t n, char *out, size_t outlen,
                  char *err, size_t errlen);

#endif
