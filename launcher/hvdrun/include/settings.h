/* From argv to a plan: the command line over the config file over the
 * defaults, then the hosts, then the ranks. */
#ifndef HVD_SETTINGS_H
#define HVD_SETTINGS_H

#include "hostlist.h"
#include "options.h"
#include "plan.h"
#include "slurm_alloc.h"

/* How the agents of other hosts start (--launcher). */
typedef enum launcher_kind {
    LAUNCH_SSH,   /* an SSH connection per host */
    LAUNCH_SLURM, /* one srun step, an agent per node */
    LAUNCH_LOCAL  /* this host only, no agents */
} launcher_kind;

typedef struct settings {
    cfg_values values;
    launcher_kind launcher;
    int from_allocation; /* the hosts are the Slurm allocation's */
    cfg_slurm_env slurm; /* what Slurm's variables say of hvdrun's place */
    cfg_hostlist hosts;
    cfg_plan plan;
    char **command; /* argv of the worker command; may be empty */
    int ncommand;
} settings;

/* Fills s. Prints a one-line error (and a hint after usage errors) and
 * returns hvdrun's exit code on failure; 0 on success. --help and
 * --version are handled by the caller before the plan is built: *done is
 * set when they were printed. */
int settings_load(int argc, char **argv, settings *s, int *done);
void settings_release(settings *s);
/* The plan takes every node of the Slurm allocation it came from: srun
 * then needs no --nodelist. */
int settings_whole_allocation(const settings *s);
/* An elastic job: --min-np, --max-np or --host-discovery-script. */
int settings_elastic(const settings *s);

#endif
