/* The GPUs a step of one agent per node asks for. A step takes the job's
 * GPU request as its own: asked per node (--gres=gpu:N, --gpus-per-node)
 * it gets every GPU of the job on each node, as the workers need; asked
 * per task or per job (--gpus-per-task, --gpus) it got one GPU a node
 * for its one task, or could not be made ("Insufficient GRES"). Then the
 * step asks for each node's GPUs itself, from slurmctld's own account of
 * the job (scontrol show job -d: some tens of ms, paid by these jobs
 * alone). */
#include "srun_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm_alloc.h"

int
srun_gres_needed(void)
{
    const char *tres = getenv("SLURM_TRES_PER_TASK");

    return getenv("SLURM_GPUS") || getenv("SLURM_GPUS_PER_TASK") ||
           getenv("SLURM_GPUS_PER_SOCKET") || (tres && strstr(tres, "gpu"));
}

/* scontrol's account of the job into a malloc'd string, or NULL. */
static char *
job_detail(const char *job, char *err, size_t errlen)
{
    char cmd[96], *buf = NULL;
    size_t len = 0, cap = 0, got;
    FILE *p;

    if (job == NULL || !*job || strspn(job, "0123456789") != strlen(job) ||
        strlen(job) > 20) {
        snprintf(err, errlen, "srun: SLURM_JOB_ID is not a job number: '%.40s'",
                 job ? job : "");
        return NULL;
    }
    snprintf(cmd, sizeof(cmd), "scontrol show job -d %s 2>&1", job);
    if ((p = popen(cmd, "r")) == NULL) {
        snprintf(err, errlen, "srun: cannot run scontrol");
        return NULL;
    }
    do {
        if (len + 4096 + 1 > cap) {
            char *more = cap < (1u << 20) ? realloc(buf, cap += 8192) : NULL;
            if (more == NULL)
                break;
            buf = more;
        }
        got = fread(buf + len, 1, cap - len - 1, p);
        len += got;
    } while (got > 0);
    if (pclose(p) != 0 || buf == NULL || len == 0) {
        if (buf)
            buf[len] = '\0';
        snprintf(err, errlen,
                 "srun: scontrol show job -d %s failed, and the step's GPUs "
                 "cannot be known: %.200s",
                 job, buf && len ? strtok(buf, "\n") : "no output");
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

int
srun_gres_arg(char *const *nodes, size_t n, char *out, size_t outlen, char *err,
              size_t errlen)
{
    char *detail = job_detail(getenv("SLURM_JOB_ID"), err, errlen);
    long *gpus = calloc(n ? n : 1, sizeof(*gpus));
    cfg_err e;
    int r = -1;

    if (detail == NULL || gpus == NULL) {
        if (detail)
            snprintf(err, errlen, "srun: out of memory");
        goto out;
    }
    if (cfg_slurm_node_gpus(detail, nodes, n, gpus, &e) != 0) {
        snprintf(err, errlen, "srun: %s", e.msg);
        goto out;
    }
    for (size_t i = 1; i < n; i++)
        if (gpus[i] != gpus[0]) {
            snprintf(err, errlen,
                     "srun: the job's GPUs differ by node (%s has %ld, %s "
                     "%ld), and one step cannot take each node's own: ask "
                     "for GPUs per node (--gpus-per-node=N or --gres=gpu:N)",
                     nodes[0], gpus[0], nodes[i], gpus[i]);
            goto out;
        }
    if (n && gpus[0] > 0)
        snprintf(out, outlen, "--gres=gpu:%ld", gpus[0]);
    else
        snprintf(out, outlen, "--gres=none");
    r = 0;
out:
    free(detail);
    free(gpus);
    return r;
}
