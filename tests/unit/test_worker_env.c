#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "worker_env.h"

START_TEST(identity_variables)
{
    cfg_hostlist l;
    cfg_plan p;
    envlist base = {0}, env = {0};
    worker_net net = {"10.0.0.1", 29500, "eth0", "10.0.0.9", 4321, "t0k", 2.5};

    cfg_hostlist_init(&l);
    ck_assert_int_eq(cfg_hostspec_parse("worker-0:1,worker-1:2", &l, NULL), 0);
    ck_assert_int_eq(cfg_plan_build(&l, 3, &p, NULL), 0);
    ck_assert_int_eq(envlist_set(&base, "RANK", "stale"), 0);
    ck_assert_int_eq(worker_env_rank(&env, &base, &p, &l, 2, &net), 0);
    ck_assert_str_eq(envlist_get(&env, "HOROVOD_RANK"), "2");
    ck_assert_str_eq(envlist_get(&env, "HOROVOD_SIZE"), "3");
    ck_assert_str_eq(envlist_get(&env, "HOROVOD_LOCAL_RANK"), "1");
    ck_assert_str_eq(envlist_get(&env, "HOROVOD_LOCAL_SIZE"), "2");
    ck_assert_str_eq(envlist_get(&env, "HOROVOD_CROSS_RANK"), "0");
    ck_assert_str_eq(envlist_get(&env, "HOROVOD_CROSS_SIZE"), "1");
    ck_assert_str_eq(envlist_get(&env, "HOROVOD_HOSTNAME"), "worker-1");
    ck_assert_str_eq(envlist_get(&env, "RANK"), "2");
    ck_assert_str_eq(envlist_get(&env, "GROUP_RANK"), "1");
    ck_assert_str_eq(envlist_get(&env, "GROUP_WORLD_SIZE"), "2");
    ck_assert_str_eq(envlist_get(&env, "MASTER_ADDR"), "10.0.0.1");
    ck_assert_str_eq(envlist_get(&env, "MASTER_PORT"), "29500");
    ck_assert_str_eq(envlist_get(&env, "NCCL_SOCKET_IFNAME"), "eth0");
    ck_assert_str_eq(envlist_get(&env, "GLOO_SOCKET_IFNAME"), "eth0");
    ck_assert_str_eq(envlist_get(&env, "TP_SOCKET_IFNAME"), "eth0");
    ck_assert_str_eq(envlist_get(&env, "PYTHONUNBUFFERED"), "1");
    ck_assert_str_eq(envlist_get(&env, "HOROVOD_GLOO_RENDEZVOUS_ADDR"),
                     "10.0.0.9");
    ck_assert_str_eq(envlist_get(&env, "HOROVOD_GLOO_RENDEZVOUS_PORT"), "4321");
    ck_assert_str_eq(envlist_get(&env, "HVDD_TOKEN"), "t0k");
    ck_assert_str_eq(envlist_get(&env, "HVDD_HEARTBEAT_SECONDS"), "2.5");
    envlist_release(&env);
    envlist_release(&base);
    cfg_plan_release(&p);
    cfg_hostlist_release(&l);
}
END_TEST

START_TEST(dropped_variables)
{
    ck_assert(worker_env_dropped("BASH_FUNC_module%%=() {}"));
    ck_assert(worker_env_dropped("OLDPWD=/tmp"));
    ck_assert(worker_env_dropped("CUDA_VISIBLE_DEVICES=0"));
    ck_assert(worker_env_dropped("NV_CUDA_VISIBLE_DEVICES=0"));
    ck_assert(!worker_env_dropped("PATH=/bin"));
    ck_assert(!worker_env_dropped("OLDPWDX=1"));
    ck_assert(worker_env_dropped("HVDD_TOKEN=abc"));
    /* hvdrun's own srun task (a batch script, srun --pty's shell) */
    ck_assert(worker_env_dropped("SLURM_PROCID=0"));
    ck_assert(worker_env_dropped("SLURM_LOCALID=0"));
    ck_assert(worker_env_dropped("SLURM_GTIDS=0"));
    ck_assert(worker_env_dropped("SLURM_TASK_PID=4242"));
    ck_assert(!worker_env_dropped("SLURM_PROCIDX=1"));
    ck_assert(!worker_env_dropped("SLURM_JOB_ID=7"));
}
END_TEST

/* The launch node's Slurm variables of a node are dropped (each host
 * gets its own where its workers start), unless -x names them; an
 * agent's workers get its node's, set by slurmstepd; where it has none
 * (over SSH) they have none; -x's value stays. */
START_TEST(node_variables_are_each_hosts_own)
{
    static const char *const node[] = {
        "SLURMD_NODENAME", "SLURM_NODEID", "SLURM_TOPOLOGY_ADDR",
        "SLURM_TOPOLOGY_ADDR_PATTERN", "SLURM_CPUS_ON_NODE"};
    char *environ_[] = {"SLURMD_NODENAME=h1", "SLURM_NODEID=0",
                        "SLURM_CPUS_ON_NODE=2", "SLURM_JOB_ID=7", NULL};
    cfg_values job;
    envlist base = {0};
    const char *missing;

    for (size_t i = 0; i < sizeof(node) / sizeof(node[0]); i++)
        ck_assert(worker_env_dropped(node[i]));
    cfg_values_init(&job);
    ck_assert_int_eq(
        cfg_values_set(&job, CFG_OPT_ENV, "SLURM_CPUS_ON_NODE=4", NULL), 0);
    ck_assert_int_eq(worker_env_base(&base, environ_, &job, &missing), 0);
    ck_assert_ptr_null(envlist_get(&base, "SLURMD_NODENAME"));
    ck_assert_ptr_null(envlist_get(&base, "SLURM_NODEID"));
    ck_assert_str_eq(envlist_get(&base, "SLURM_CPUS_ON_NODE"), "4");
    ck_assert_str_eq(envlist_get(&base, "SLURM_JOB_ID"), "7");
    /* the agent on h2 */
    for (size_t i = 0; i < sizeof(node) / sizeof(node[0]); i++)
        ck_assert_int_eq(unsetenv(node[i]), 0);
    ck_assert_int_eq(setenv("SLURMD_NODENAME", "h2", 1), 0);
    ck_assert_int_eq(setenv("SLURM_NODEID", "1", 1), 0);
    ck_assert_int_eq(setenv("SLURM_CPUS_ON_NODE", "8", 1), 0);
    ck_assert_int_eq(worker_env_node(&base, NULL), 0);
    ck_assert_str_eq(envlist_get(&base, "SLURMD_NODENAME"), "h2");
    ck_assert_str_eq(envlist_get(&base, "SLURM_NODEID"), "1");
    ck_assert_str_eq(envlist_get(&base, "SLURM_CPUS_ON_NODE"), "4"); /* -x */
    ck_assert_ptr_null(envlist_get(&base, "SLURM_TOPOLOGY_ADDR"));
    ck_assert_ptr_null(envlist_get(&base, "SLURM_TOPOLOGY_ADDR_PATTERN"));
    envlist_release(&base);
    cfg_values_release(&job);
}
END_TEST

/* Where Slurm gave the launcher GPUs, the launch node's (as Slurm names
 * them) stay behind and each node's workers get the GPUs Slurm gave that
 * node's agent (its step has SLURM_STEP_GPUS), -x's winning; elsewhere,
 * in a Slurm job or not, they are the user's and travel (but
 * CUDA_VISIBLE_DEVICES, which never does); an agent Slurm gave no GPUs
 * adds none. */
START_TEST(slurm_gpus_are_each_nodes_own)
{
    static const char *const gpu[] = {
        "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES",
        "ZE_AFFINITY_MASK",     "SLURM_STEP_GPUS",    "SLURM_JOB_GPUS",
        "SLURM_GPUS_ON_NODE"};
    char *in_job[] = {"SLURM_JOB_ID=7",
                      "CUDA_VISIBLE_DEVICES=0,1",
                      "ROCR_VISIBLE_DEVICES=0,1",
                      "SLURM_JOB_GPUS=0,1",
                      "SLURM_GPUS_ON_NODE=2",
                      "GPU_DEVICE_ORDINAL=0,1",
                      NULL};
    char *outside[] = {"ROCR_VISIBLE_DEVICES=1", "CUDA_VISIBLE_DEVICES=1",
                       "SLURM_JOB_ID=8", NULL};
    cfg_values job;
    envlist base = {0}, plain = {0};
    const char *missing;
    char **chosen;

    for (size_t i = 0; i < sizeof(gpu) / sizeof(gpu[0]); i++) {
        ck_assert(worker_env_slurm_gpus(gpu[i]));
        ck_assert_int_eq(unsetenv(gpu[i]), 0);
    }
    ck_assert(!worker_env_slurm_gpus("SLURM_GPUS_PER_TASK=1"));
    cfg_values_init(&job);
    ck_assert_int_eq(
        cfg_values_set(&job, CFG_OPT_ENV, "GPU_DEVICE_ORDINAL=5", NULL), 0);
    ck_assert_int_eq(worker_env_base(&base, in_job, &job, &missing), 0);
    ck_assert_ptr_null(envlist_get(&base, "CUDA_VISIBLE_DEVICES"));
    ck_assert_ptr_null(envlist_get(&base, "ROCR_VISIBLE_DEVICES"));
    ck_assert_ptr_null(envlist_get(&base, "SLURM_JOB_GPUS"));
    chosen = worker_env_chosen(&job);
    ck_assert_ptr_nonnull(chosen);
    /* an agent whose step has no GPUs adds none */
    ck_assert_int_eq(setenv("CUDA_VISIBLE_DEVICES", "2", 1), 0);
    ck_assert_int_eq(worker_env_node(&base, chosen), 0);
    ck_assert_ptr_null(envlist_get(&base, "CUDA_VISIBLE_DEVICES"));
    /* the agent on h2, whose step has GPUs 1 and 2 */
    ck_assert_int_eq(setenv("CUDA_VISIBLE_DEVICES", "1,2", 1), 0);
    ck_assert_int_eq(setenv("ROCR_VISIBLE_DEVICES", "1,2", 1), 0);
    ck_assert_int_eq(setenv("GPU_DEVICE_ORDINAL", "1,2", 1), 0);
    ck_assert_int_eq(setenv("SLURM_STEP_GPUS", "1,2", 1), 0);
    ck_assert_int_eq(worker_env_node(&base, chosen), 0);
    ck_assert_str_eq(envlist_get(&base, "CUDA_VISIBLE_DEVICES"), "1,2");
    ck_assert_str_eq(envlist_get(&base, "ROCR_VISIBLE_DEVICES"), "1,2");
    ck_assert_str_eq(envlist_get(&base, "SLURM_STEP_GPUS"), "1,2");
    ck_assert_str_eq(envlist_get(&base, "GPU_DEVICE_ORDINAL"), "5"); /* -x */
    ck_assert_ptr_null(envlist_get(&base, "SLURM_JOB_GPUS"));
    /* no GPUs from Slurm: the user's ROCR_VISIBLE_DEVICES travels */
    ck_assert_int_eq(worker_env_base(&plain, outside, &job, &missing), 0);
    ck_assert_str_eq(envlist_get(&plain, "ROCR_VISIBLE_DEVICES"), "1");
    ck_assert_ptr_null(envlist_get(&plain, "CUDA_VISIBLE_DEVICES"));
    for (size_t i = 0; i < sizeof(gpu) / sizeof(gpu[0]); i++)
        ck_assert_int_eq(unsetenv(gpu[i]), 0);
    envlist_release(&base);
    envlist_release(&plain);
    cfg_values_release(&job);
    free(chosen);
}
END_TEST

/* A launcher Slurm gave no GPUs (salloc's shell on a login node) whose
 * environment names some: where Slurm gave an agent GPUs, its workers
 * get the node's, and a launcher's variable the node lacks goes, unless
 * -x set it; where a -x name was not set on the launcher, the node's. */
START_TEST(launchers_gpu_variables_give_way_to_slurms)
{
    char *login[] = {"ROCR_VISIBLE_DEVICES=7", "ZE_AFFINITY_MASK=7",
                     "GPU_DEVICE_ORDINAL=7", "SLURM_JOB_ID=9", NULL};
    const char *gpu[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                         "SLURM_STEP_GPUS", "GPU_DEVICE_ORDINAL",
                         "ZE_AFFINITY_MASK"};
    cfg_values job;
    envlist base = {0};
    const char *missing;
    char **chosen;

    for (size_t i = 0; i < sizeof(gpu) / sizeof(gpu[0]); i++)
        ck_assert_int_eq(unsetenv(gpu[i]), 0);
    cfg_values_init(&job);
    ck_assert_int_eq(
        cfg_values_set(&job, CFG_OPT_ENV, "GPU_DEVICE_ORDINAL", NULL), 0);
    ck_assert_int_eq(cfg_values_set(&job, CFG_OPT_ENV, "HVD_NOT_SET", NULL), 0);
    ck_assert_int_eq(worker_env_base(&base, login, &job, &missing), 0);
    ck_assert_str_eq(envlist_get(&base, "ROCR_VISIBLE_DEVICES"), "7");
    chosen = worker_env_chosen(&job);
    ck_assert_ptr_nonnull(chosen);
    ck_assert_str_eq(chosen[0], "GPU_DEVICE_ORDINAL");
    ck_assert_str_eq(chosen[1], "HVD_NOT_SET");
    ck_assert_ptr_null(chosen[2]);
    /* the agent on h1, whose step has GPUs 0 and 1 */
    ck_assert_int_eq(setenv("CUDA_VISIBLE_DEVICES", "0,1", 1), 0);
    ck_assert_int_eq(setenv("ROCR_VISIBLE_DEVICES", "0,1", 1), 0);
    ck_assert_int_eq(setenv("SLURM_STEP_GPUS", "0,1", 1), 0);
    ck_assert_int_eq(worker_env_node(&base, chosen), 0);
    ck_assert_str_eq(envlist_get(&base, "CUDA_VISIBLE_DEVICES"), "0,1");
    ck_assert_str_eq(envlist_get(&base, "ROCR_VISIBLE_DEVICES"), "0,1");
    ck_assert_ptr_null(envlist_get(&base, "ZE_AFFINITY_MASK"));
    ck_assert_str_eq(envlist_get(&base, "GPU_DEVICE_ORDINAL"), "7"); /* -x */
    ck_assert_str_eq(envlist_get(&base, "SLURM_JOB_ID"), "9");
    for (size_t i = 0; i < sizeof(gpu) / sizeof(gpu[0]); i++)
        ck_assert_int_eq(unsetenv(gpu[i]), 0);
    envlist_release(&base);
    cfg_values_release(&job);
    free(chosen);
}
END_TEST

START_TEST(base_forwards_filters_and_overrides)
{
    char *environ_[] = {"PATH=/bin", "OLDPWD=/x", "KEEP=launcher",
                        "CUDA_VISIBLE_DEVICES=1", NULL};
    cfg_values job;
    envlist base = {0};
    const char *missing;

    cfg_values_init(&job);
    ck_assert_int_eq(cfg_values_set(&job, CFG_OPT_ENV, "KEEP=override", NULL),
                     0);
    ck_assert_int_eq(
        cfg_values_set(&job, CFG_OPT_ENV, "HVD_SURELY_UNSET", NULL), 0);
    ck_assert_int_eq(cfg_values_set(&job, CFG_OPT_CYCLE_TIME_MS, "5", NULL), 0);
    ck_assert_int_eq(worker_env_base(&base, environ_, &job, &missing), 0);
    ck_assert_str_eq(envlist_get(&base, "PATH"), "/bin");
    ck_assert_ptr_null(envlist_get(&base, "OLDPWD"));
    ck_assert_ptr_null(envlist_get(&base, "CUDA_VISIBLE_DEVICES"));
    ck_assert_str_eq(envlist_get(&base, "KEEP"), "override");
    ck_assert_str_eq(envlist_get(&base, "HOROVOD_CYCLE_TIME"), "5");
    ck_assert_str_eq(missing, "HVD_SURELY_UNSET");
    envlist_release(&base);
    cfg_values_release(&job);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("worker_env");
    TCase *tc = tcase_create("env");

    ADD(tc, identity_variables);
    ADD(tc, slurm_gpus_are_each_nodes_own);
    ADD(tc, launchers_gpu_variables_give_way_to_slurms);
    ADD(tc, dropped_variables);
    ADD(tc, node_variables_are_each_hosts_own);
    ADD(tc, base_forwards_filters_and_overrides);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
