/* srun's argv for a step (private to launcher/slurm/ and --dry-run). */
#ifndef HVD_SRUN_ARGS_H
#define HVD_SRUN_ARGS_H

#include <stddef.h>

#include "srun_step.h"

/* argv (calloc'd; its strings point into spec, nodearg and counts, which
 * must outlive it), or NULL when out of memory. */
char **srun_argv(const srun_step_spec *spec, char *nodearg, size_t nodelen,
                 char counts[3][40]);

#endif
