/* What every worker is given: the environment contract of hvdrun.1
 * ("ENVIRONMENT GIVEN TO WORKERS"). */
#ifndef HVD_WORKER_ENV_H
#define HVD_WORKER_ENV_H

#include "envlist.h"
#include "hostlist.h"
#include "options.h"
#include "plan.h"

/* Where the job's processes meet. */
typedef struct worker_net {
    const char *master_addr;     /* rank 0's host on the chosen network */
    int master_port;             /* a port free on that host */
    const char *iface;           /* HOROVOD_GLOO_IFACE / NCCL_SOCKET_IFNAME */
    const char *rendezvous_addr; /* hvdd, for Gloo and libcollective */
    int rendezvous_port;         /* 0: no rendezvous variables */
    const char *token;           /* the job token, or NULL */
    double heartbeat;            /* seconds between heartbeats, or 0 */
} worker_net;

/* The part every rank shares: the launcher's environment less what must
 * not travel (BASH_FUNC_*, OLDPWD, *CUDA_VISIBLE_DEVICES; Slurm's
 * variables of hvdrun's own task, SLURM_PROCID, SLURM_LOCALID,
 * SLURM_GTIDS and SLURM_TASK_PID, which no rank is; Slurm's variables of
 * the launch node, which worker_env_node gives each host its own; where
 * Slurm gave the launcher GPUs (SLURM_STEP_GPUS, SLURM_JOB_GPUS), the
 * variables that name them, likewise),
 * Horovod's tunables from the settings, then -x NAME / NAME=VALUE. An -x
 * NAME that the launcher's environment lacks is reported through
 * *missing (the first one) and skipped. Returns 0 or -1 (out of
 * memory). */
int worker_env_base(envlist *out, char *const *environ_, const cfg_values *vals,
                    const char **missing);

/* base plus one rank's identity (Horovod's and torchrun's variables). */
int worker_env_rank(envlist *out, const envlist *base, const cfg_plan *plan,
                    const cfg_hostlist *hosts, int rank, const worker_net *net);

/* Where workers start (an agent's host, or this one for a job here):
 * Slurm's variables of a node (SLURMD_NODENAME, SLURM_NODEID,
 * SLURM_TOPOLOGY_ADDR[_PATTERN], SLURM_CPUS_ON_NODE) from this process's
 * environment (slurmstepd's, for an agent srun started; none over SSH).
 * Where Slurm gave this process GPUs (SLURM_STEP_GPUS or
 * SLURM_JOB_GPUS), the variables Slurm names them with
 * (CUDA_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL, ROCR_VISIBLE_DEVICES,
 * ZE_AFFINITY_MASK, SLURM_STEP_GPUS, SLURM_JOB_GPUS, SLURM_GPUS_ON_NODE)
 * are this process's: the launcher's (from a shell Slurm gave no GPUs,
 * such as salloc's on a login node) are replaced, or removed where this
 * process has none, unless chosen names them (-x; NULL-terminated, or
 * NULL). Returns 0 or -1 (out of memory). */
int worker_env_node(envlist *base, char *const *chosen);

/* The names -x gave (NAME or NAME=VALUE each), NULL-terminated, in one
 * malloc'd block the caller frees; NULL when out of memory. */
char **worker_env_chosen(const cfg_values *vals);

/* 1 when entry (NAME or NAME=VALUE) is one of the variables Slurm names
 * a node's GPUs with (above): srun's agents must not be given the launch
 * node's. */
int worker_env_slurm_gpus(const char *entry);

/* The names worker_env_node adds, for --dry-run (one line into out). */
void worker_env_node_describe(char *out, size_t n);

/* 1 when a variable of the launcher must not reach the workers. */
int worker_env_dropped(const char *entry);

#endif
