/* The GPUs a step of one agent per node asks for. A step takes the job's
 * GPU request as its own: asked per node (--gres=gpu:N, --gpus-per-node)
 * it gets every GPU of the job on each node, as the workers need; asked
 * per task or per job (--gpus-per-task, --gpus) it got one GPU a node
 * for its one task, or could not be made ("Insufficient GRES"). Then the
 * step asks for each node's GPUs itself, from slurmctld's own account of
 * the job (scontrol show job -d: some tens of ms, paid by these jobs
 * alone), and for the node's other generic resources beside them: a step
 * that names its gres gets those alone (salloc --gres=nic:1
 * --gpus-per-task=1 gave the step "gres:gpu:2" and no nic). */
#include "srun_args.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm_alloc.h"

/* The job asked for GPUs per task or per job (SLURM_GPUS,
 * SLURM_GPUS_PER_TASK, ...). */
static int
gres_needed(void)
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
    size_t len = 0, cap = 0, got = 0;
    int status, cut = 0;
    FILE *p;

    snprintf(cmd, sizeof(cmd), "scontrol show job -d %s 2>&1", job);
    /* (pclose waits for scontrol: an inherited SIGCHLD=SIG_IGN would
     * have the kernel reap it first, and pclose fail) */
    signal(SIGCHLD, SIG_DFL);
    if ((p = popen(cmd, "r")) == NULL) {
        snprintf(err, errlen, "srun: cannot run scontrol");
        return NULL;
    }
    do {
        if (len + 1 >= cap) {
            char *more = cap < (1u << 20) ? realloc(buf, cap += 65536) : NULL;
            if (more == NULL) {
                cut = 1; /* (the rest is read and dropped below) */
                break;
            }
            buf = more;
        }
        len += got = fread(buf + len, 1, cap - len - 1, p);
    } while (got > 0);
    while (cut && fgetc(p) != EOF)
        ;
    status = pclose(p);
    if (buf)
        buf[len] = '\0';
    if (status != 0 || cut || len == 0) {
        snprintf(err, errlen,
                 "srun: scontrol show job -d %s %s, and the step's GPUs "
                 "cannot be known%s%.*s",
                 job, cut ? "said more than 1 MiB" : "failed",
                 len && !cut ? ": " : "",
                 len && !cut ? (int)strcspn(buf, "\n") : 0, buf ? buf : "");
        free(buf);
        return NULL;
    }
    return buf;
}

/* One step asks for the same gres on every node: 1 with the reason in
 * err where nodes differ (GPUs first, then the other kinds), else 0. */
static int
gres_differ(char *const *nodes, size_t n, const cfg_node_gres *g, char *err,
            size_t errlen)
{
    for (size_t i = 1; i < n; i++) {
        int gpus = g[i].gpus != g[0].gpus;
        char mine[300], theirs[300];
        if (!gpus && strcmp(g[i].other, g[0].other) == 0)
            continue;
        if (gpus) {
            snprintf(mine, sizeof(mine), "%ld", g[0].gpus);
            snprintf(theirs, sizeof(theirs), "%ld", g[i].gpus);
        } else {
            snprintf(mine, sizeof(mine), "'%s'", g[0].other);
            snprintf(theirs, sizeof(theirs), "'%s'", g[i].other);
        }
        snprintf(err, errlen,
                 "srun: the job's %s differ by node (%s has %s, %s %s), and "
                 "one step cannot take each node's own: ask for %s per node "
                 "(%s)",
                 gpus ? "GPUs" : "generic resources", nodes[0], mine, nodes[i],
                 theirs, gpus ? "GPUs" : "them",
                 gpus ? "--gpus-per-node=N or --gres=gpu:N" : "--gres=NAME:N");
        return 1;
    }
    return 0;
}

int
srun_gres_arg(char *const *nodes, size_t n, char *out, size_t outlen, char *err,
              size_t errlen)
{
    const char *job = getenv("SLURM_JOB_ID");
    char *detail = NULL;
    cfg_node_gres *gres;
    char gpus[32] = "";
    cfg_err e;
    int r = -1;

    out[0] = '\0';
    if (!gres_needed())
        return 0;
    gres = calloc(n ? n : 1, sizeof(*gres));
    if (job == NULL || !*job || strlen(job) > 20 ||
        strspn(job, "0123456789") != strlen(job)) {
        snprintf(err, errlen, "srun: SLURM_JOB_ID is not a job number: '%.40s'",
                 job ? job : "");
        goto out;
    }
    if ((detail = job_detail(job, err, errlen)) == NULL)
        goto out;
    if (gres == NULL) {
        snprintf(err, errlen, "srun: out of memory");
        goto out;
    }
    if (cfg_slurm_node_gres(detail, job, nodes, n, gres, &e) != 0) {
        snprintf(err, errlen, "srun: %s", e.msg);
        goto out;
    }
    if (gres_differ(nodes, n, gres, err, errlen))
        goto out;
    if (n && gres[0].gpus > 0)
        snprintf(gpus, sizeof(gpus), "gpu:%ld%s", gres[0].gpus,
                 *gres[0].other ? "," : "");
    if (n == 0 || (gres[0].gpus == 0 && !*gres[0].other))
        snprintf(out, outlen, "--gres=none");
    else if (snprintf(out, outlen, "--gres=%s%s", gpus, gres[0].other) >=
             (int)outlen) {
        snprintf(err, errlen, "srun: the step's --gres is too long: %s",
                 gres[0].other);
        goto out;
    }
    r = 0;
out:
    free(detail);
    free(gres);
    return r;
}
