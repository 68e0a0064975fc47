/* srun's command line for a step of srun_step.h: here alone, without the
 * handshake's libsodium, so that hvdrun's --dry-run can show it. */
#include <stdio.h>
#include <stdlib.h>

#include "srun_args.h"

/* srun's argv: PRRTE's and hydra's flags (one agent per node, no MPI
 * plugin, no binding, no stdin; a bad exit ends the step), and the whole
 * of each node for the step, shared with any other (--whole --overlap):
 * under task/cgroup a task of one CPU would hold every worker of its
 * node to that CPU, and inside `srun --pty bash` the new step would wait
 * for the CPUs that shell's step holds. --export=ALL: `sbatch
 * --export=NONE` leaves SLURM_EXPORT_ENV=NONE behind, which srun takes as
 * its own, and the agents then got neither hvdrun's port nor the secret
 * (every job failed, each agent saying it was not started by hvdrun). */
char **
srun_argv(const srun_step_spec *spec, char *nodearg, size_t nodelen,
          char counts[3][40])
{
    static const char *fixed[] = {"--ntasks-per-node=1", "--kill-on-bad-exit",
                                  "--mpi=none",          "--cpu-bind=none",
                                  "--input=none",        "--whole",
                                  "--overlap",           "--export=ALL"};
    char **argv = calloc(20, sizeof(*argv));
    size_t used;
    int k = 0;

    if (argv == NULL)
        return NULL;
    argv[k++] = "srun";
    snprintf(counts[0], 40, "--nodes=%zu", spec->n);
    snprintf(counts[1], 40, "--ntasks=%zu", spec->n);
    argv[k++] = counts[0];
    argv[k++] = counts[1];
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        argv[k++] = (char *)fixed[i];
    if (!spec->whole_allocation) {
        used = (size_t)snprintf(nodearg, nodelen, "--nodelist=");
        for (size_t i = 0; i < spec->n && used < nodelen; i++)
            used += (size_t)snprintf(nodearg + used, nodelen - used, "%s%s",
                                     i ? "," : "", spec->nodes[i]);
        argv[k++] = nodearg;
    }
    if (spec->gres && *spec->gres)
        argv[k++] = (char *)spec->gres;
    if (spec->agent) {
        argv[k++] = (char *)spec->agent;
    } else {
        argv[k++] = (char *)spec->hvdrun;
        argv[k++] = "--agent-srun";
    }
    argv[k] = NULL;
    return argv;
}

void
srun_step_describe(const srun_step_spec *spec, char *out, size_t n)
{
    char counts[3][40], *nodearg = malloc(n);
    char **argv = nodearg ? srun_argv(spec, nodearg, n, counts) : NULL;
    size_t at = 0;

    out[0] = '\0';
    for (int i = 0; argv && argv[i] && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%s", i ? " " : "", argv[i]);
    free(argv);
    free(nodearg);
}
