#include "worker_env.h"

#include "hvdd_token.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names that never travel: OLDPWD; a token from an outer job, which must
 * not leak into this one; what Slurm tells one srun task about itself
 * (hvdrun's own task, in a batch script or srun --pty's shell): no rank
 * is that task, and a framework that reads SLURM_PROCID would take every
 * rank for rank 0. */
static const char *const dropped_names[] = {"OLDPWD",       HVDD_TOKEN_ENV,
                                            "SLURM_PROCID", "SLURM_LOCALID",
                                            "SLURM_GTIDS",  "SLURM_TASK_PID"};

/* What Slurm tells a task about its node: true of the node the variables
 * were set on only. The launcher's go (unless -x names them), and each
 * host's own come back where its workers start (worker_env_node). */
static const char *const slurm_node_vars[] = {
    "SLURMD_NODENAME", "SLURM_NODEID", "SLURM_TOPOLOGY_ADDR",
    "SLURM_TOPOLOGY_ADDR_PATTERN", "SLURM_CPUS_ON_NODE"};

/* What Slurm sets where a step has GPUs, to name that node's (the
 * step's, or the batch script's: SLURM_JOB_GPUS) GPUs: true of that node
 * only. Where Slurm gave the launcher GPUs (SLURM_STEP_GPUS or
 * SLURM_JOB_GPUS set) the launcher's go, and where it gave the starting
 * process GPUs, its own come back (worker_env_node). Elsewhere they are
 * the user's and travel (a cluster without GPUs in Slurm's gres), but
 * for CUDA_VISIBLE_DEVICES, which never does (worker_env_dropped). */
static const char *const slurm_gpu_vars[] = {
    "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES",
    "ZE_AFFINITY_MASK",     "SLURM_STEP_GPUS",    "SLURM_JOB_GPUS",
    "SLURM_GPUS_ON_NODE"};

extern char **environ;

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int
named(const char *entry, size_t n, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(names[i]) == n && strncmp(entry, names[i], n) == 0)
            return 1;
    return 0;
}

int
worker_env_slurm_gpus(const char *entry)
{
    const char *eq = strchr(entry, '=');
    size_t n = eq ? (size_t)(eq - entry) : strlen(entry);

    return named(entry, n, slurm_gpu_vars, COUNT(slurm_gpu_vars));
}

/* base's NAME from this process's environment, unless base has it (-x) */
static int
add_own(envlist *base, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const char *name = names[i], *v = getenv(name);
        if (v && envlist_get(base, name) == NULL &&
            envlist_set(base, name, v) != 0)
            return -1;
    }
    return 0;
}

static int
chosen_has(char *const *chosen, const char *name)
{
    for (size_t i = 0; chosen && chosen[i]; i++)
        if (strcmp(chosen[i], name) == 0)
            return 1;
    return 0;
}

/* base's GPU variables are this process's, but those -x set (chosen
 * names them, and the launcher had them) */
static int
own_gpus(envlist *base, char *const *chosen)
{
    for (size_t i = 0; i < COUNT(slurm_gpu_vars); i++) {
        const char *name = slurm_gpu_vars[i], *v = getenv(name);
        if (chosen_has(chosen, name) && envlist_get(base, name))
            continue;
        if (v == NULL)
            envlist_unset(base, name);
        else if (envlist_set(base, name, v) != 0)
            return -1;
    }
    return 0;
}

/* 1 when Slurm gave the process of environment env GPUs: a step with
 * GPUs has SLURM_STEP_GPUS, a batch script SLURM_JOB_GPUS. */
static int
slurm_gave_gpus(char *const *env)
{
    for (size_t i = 0; env && env[i]; i++)
        if (strncmp(env[i], "SLURM_STEP_GPUS=", 16) == 0 ||
            strncmp(env[i], "SLURM_JOB_GPUS=", 15) == 0)
            return 1;
    return 0;
}

int
worker_env_node(envlist *base, char *const *chosen)
{
    if (add_own(base, slurm_node_vars, COUNT(slurm_node_vars)) != 0)
        return -1;
    return slurm_gave_gpus(environ) ? own_gpus(base, chosen) : 0;
}

char **
worker_env_chosen(const cfg_values *vals)
{
    size_t bytes = (vals->nlist + 1) * sizeof(char *);
    char **out, *at;

    for (size_t i = 0; i < vals->nlist; i++)
        bytes += strcspn(vals->list[i], "=") + 1;
    if ((out = malloc(bytes)) == NULL)
        return NULL;
    at = (char *)(out + vals->nlist + 1);
    for (size_t i = 0; i < vals->nlist; i++) {
        size_t n = strcspn(vals->list[i], "=");
        out[i] = memcpy(at, vals->list[i], n);
        out[i][n] = '\0';
        at += n + 1;
    }
    out[vals->nlist] = NULL;
    return out;
}

void
worker_env_node_describe(char *out, size_t n)
{
    size_t at = 0;

    out[0] = '\0';
    for (size_t i = 0; i < COUNT(slurm_node_vars) && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%s", i ? " " : "",
                               slurm_node_vars[i]);
    for (size_t i = 0; i < COUNT(slurm_gpu_vars) && at < n; i++)
        at += (size_t)snprintf(
            out + at, n - at, "%s%s",
            i ? " " : "; with GPUs from Slurm: ", slurm_gpu_vars[i]);
}

int
worker_env_dropped(const char *entry)
{
    static const char cuda[] = "CUDA_VISIBLE_DEVICES";
    const char *eq = strchr(entry, '=');
    size_t n = eq ? (size_t)(eq - entry) : strlen(entry);

    if (strncmp(entry, "BASH_FUNC_", 10) == 0)
        return 1;
    if (named(entry, n, dropped_names, COUNT(dropped_names)) ||
        named(entry, n, slurm_node_vars, COUNT(slurm_node_vars)))
        return 1;
    /* Each host picks its own devices; the launch host's choice would pin
     * every worker to the same GPU. */
    return n >= sizeof(cuda) - 1 &&
           strncmp(entry + n - (sizeof(cuda) - 1), cuda, sizeof(cuda) - 1) == 0;
}

static int
emit_tunable(const char *name, const char *value, void *arg)
{
    return envlist_set(arg, name, value);
}

int
worker_env_base(envlist *out, char *const *environ_, const cfg_values *vals,
                const char **missing)
{
    size_t i;
    int slurm_gpus = slurm_gave_gpus(environ_);

    *missing = NULL;
    for (i = 0; environ_ && environ_[i]; i++)
        if (!worker_env_dropped(environ_[i]) &&
            !(slurm_gpus && worker_env_slurm_gpus(environ_[i])) &&
            strchr(environ_[i], '=') && envlist_put(out, environ_[i]) != 0)
            return -1;
    if (cfg_values_tunable_env(vals, emit_tunable, out) != 0)
        return -1;
    for (i = 0; i < vals->nlist; i++) {
        const char *x = vals->list[i], *v;
        if (strchr(x, '=')) {
            if (envlist_put(out, x) != 0)
                return -1;
        } else if ((v = getenv(x)) != NULL) {
            if (envlist_set(out, x, v) != 0)
                return -1;
        } else if (*missing == NULL) {
            *missing = x;
        }
    }
    return 0;
}

/* Horovod's, NCCL's, PyTorch's Gloo (c10d) and TensorPipe's (RPC). */
static const char *const iface_vars[] = {
    "HOROVOD_GLOO_IFACE", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME",
    "TP_SOCKET_IFNAME"};

static int
set_int(envlist *l, const char *name, long v)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%ld", v);
    return envlist_set(l, name, buf);
}

int
worker_env_rank(envlist *out, const envlist *base, const cfg_plan *plan,
                const cfg_hostlist *hosts, int rank, const worker_net *net)
{
    const cfg_slot *s = &plan->slots[rank];
    int r = 0;

    r |= envlist_copy(out, base);
    r |= set_int(out, "HOROVOD_RANK", s->rank);
    r |= set_int(out, "HOROVOD_SIZE", plan->size);
    r |= set_int(out, "HOROVOD_LOCAL_RANK", s->local_rank);
    r |= set_int(out, "HOROVOD_LOCAL_SIZE", s->local_size);
    r |= set_int(out, "HOROVOD_CROSS_RANK", s->cross_rank);
    r |= set_int(out, "HOROVOD_CROSS_SIZE", s->cross_size);
    r |= envlist_set(out, "HOROVOD_HOSTNAME", hosts->hosts[s->host].name);
    r |= envlist_set(out, "HOROVOD_CONTROLLER", "gloo");
    r |= envlist_set(out, "HOROVOD_CPU_OPERATIONS", "gloo");
    /* the interface hvdd chose, in every variable the frameworks read:
     * left to itself, PyTorch's Gloo takes the host name's address, which
     * on Debian (127.0.1.1 in /etc/hosts) is loopback */
    for (size_t i = 0; i < sizeof(iface_vars) / sizeof(iface_vars[0]); i++)
        r |= envlist_set(out, iface_vars[i], net->iface);
    r |= set_int(out, "RANK", s->rank);
    r |= set_int(out, "WORLD_SIZE", plan->size);
    r |= set_int(out, "LOCAL_RANK", s->local_rank);
    r |= set_int(out, "LOCAL_WORLD_SIZE", s->local_size);
    r |= set_int(out, "GROUP_RANK", s->host);
    r |= set_int(out, "GROUP_WORLD_SIZE", plan->nhosts);
    r |= envlist_set(out, "MASTER_ADDR", net->master_addr);
    r |= set_int(out, "MASTER_PORT", net->master_port);
    r |= envlist_set(out, "PYTHONUNBUFFERED", "1");
    if (net->rendezvous_port > 0) {
        r |= envlist_set(out, "HOROVOD_GLOO_RENDEZVOUS_ADDR",
                         net->rendezvous_addr);
        r |= set_int(out, "HOROVOD_GLOO_RENDEZVOUS_PORT", net->rendezvous_port);
    }
    if (net->token)
        r |= envlist_set(out, HVDD_TOKEN_ENV, net->token);
    if (net->heartbeat > 0) {
        char beat[32];
        snprintf(beat, sizeof(beat), "%g", net->heartbeat);
        r |= envlist_set(out, "HVDD_HEARTBEAT_SECONDS", beat);
    }
    return r ? -1 : 0;
}
