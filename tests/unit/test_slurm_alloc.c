/* A Slurm allocation's hosts from its variables: the node lists and task
 * counts below are the ones Slurm's scontrol (show hostnames) and
 * mpiexec.hydra's Slurm bootstrap document and produce. */
#include <stdlib.h>
#include <string.h>

#include "hostlist_fixture.h"
#include "slurm_alloc.h"
#include "unit.h"

/* A node list and what it expands to, in order, space-separated. */
static const struct {
    const char *list, *names;
} lists[] = {
    {"node[01-04,07]", "node01 node02 node03 node04 node07"},
    {"rack[0-1]_blade[0-3]", "rack0_blade0 rack0_blade1 rack0_blade2 "
                             "rack0_blade3 rack1_blade0 rack1_blade1 "
                             "rack1_blade2 rack1_blade3"},
    {"10.0.0.[100-104]", "10.0.0.100 10.0.0.101 10.0.0.102 10.0.0.103 "
                         "10.0.0.104"},
    {"n[9-11],m[008-010]", "n9 n10 n11 m008 m009 m010"},
    {"x[1,3-4]y[08-9]", "x1y08 x1y09 x3y08 x3y09 x4y08 x4y09"},
    {"n[099-101]", "n099 n100 n101"},
    {"n[01-1]", "n01"},
    {"node[1-2][3-4]", "node13 node14 node23 node24"},
    {"gpu-a100-[1-2],login", "gpu-a100-1 gpu-a100-2 login"},
    {"q", "q"},
};

static const char *fake[10][2];
static const char *
fake_get(const char *name)
{
    for (size_t i = 0; i < sizeof(fake) / sizeof(fake[0]) && fake[i][0]; i++)
        if (strcmp(fake[i][0], name) == 0)
            return fake[i][1];
    return NULL;
}

/* The hosts of an allocation of `list` with one task per node. */
static int
hosts_of(const char *list_s, const char *nodes, const char *tasks)
{
    cfg_slurm_env env = {
        .nodelist = list_s, .num_nodes = nodes, .tasks_per_node = tasks};
    return cfg_slurm_hosts(&env, &list, &list_err);
}

START_TEST(node_lists)
{
    char want[400], got[400] = "";
    size_t n = 1;

    snprintf(want, sizeof(want), "%s", lists[_i].names);
    for (const char *p = want; *p; p++)
        n += *p == ' ';
    char nodes[16], tasks[32];
    snprintf(nodes, sizeof(nodes), "%zu", n);
    snprintf(tasks, sizeof(tasks), "1(x%zu)", n);
    ck_assert_msg(hosts_of(lists[_i].list, nodes, tasks) == 0, "%s: %s",
                  lists[_i].list, list_err.msg);
    for (size_t i = 0; i < list.count; i++)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
                 i ? " " : "", list.hosts[i].name);
    ck_assert_str_eq(got, want);
}
END_TEST

START_TEST(tasks_per_node_become_slots)
{
    ck_assert_int_eq(hosts_of("node[1-4]", "4", "2(x3),1"), 0);
    ck_assert_uint_eq(list.count, 4);
    ck_assert_int_eq(list.hosts[0].slots, 2);
    ck_assert_int_eq(list.hosts[2].slots, 2);
    ck_assert_int_eq(list.hosts[3].slots, 1);
    ck_assert_int_eq(cfg_hostlist_slots(&list), 7);
}
END_TEST

START_TEST(tasks_forms)
{
    int c[5];

    ck_assert_int_eq(cfg_slurm_tasks_per_node("3,1(x2),4(x2)", c, 5, NULL), 0);
    ck_assert_int_eq(c[0], 3);
    ck_assert_int_eq(c[1], 1);
    ck_assert_int_eq(c[2], 1);
    ck_assert_int_eq(c[3], 4);
    ck_assert_int_eq(c[4], 4);
    ck_assert_int_eq(cfg_slurm_tasks_per_node("8", c, 1, NULL), 0);
    ck_assert_int_eq(c[0], 8);
}
END_TEST

static const struct {
    const char *list, *nodes, *tasks, *needle;
} bad[] = {
    {"node[1-4]", "4", "2(x3)", "describes 3 nodes, the allocation has 4"},
    {"node[1-2]", "2", "2(x3)", "describes more than the 2 nodes"},
    {"node[1-2]", "2", "0,1", "bad item '0'"},
    {"node[1-2]", "2", "2(3)", "bad item '2(3)'"},
    {"node[1-2]", "2", "2(x)", "bad item '2(x)'"},
    {"node[1-2]", "2", "x,1", "bad item 'x'"},
    {"node[1-3]", "2", "1(x2)", "names 3 nodes, SLURM_NNODES says 2"},
    {"node[1-2]", "two", "1(x2)", "SLURM_NNODES: bad count 'two'"},
    {"node[5-3]", "3", "1(x3)", "SLURM_NODELIST: range '5-3'"},
    {"node[a-b]", "2", "1(x2)", "SLURM_NODELIST: bad range 'a-b'"},
    {"node[1-2", "2", "1(x2)", "without its ']'"},
    {"node[1-2]]", "2", "1(x2)", "bad host name 'node1]'"},
    {"node[1-3]", "3", "1,,1", "bad item '' in '1,,1'"},
    {"node[1-2]", "2", ",1,1", "bad item ''"},
    {"node[1-2]", "2", "1,1,", "bad item ''"},
    {"node[0000000000000001-2]", "2", "1(x2)", "bound too long"},
};

/* the reason comes first, whatever the length of the list it names */
START_TEST(long_node_list_keeps_the_reason)
{
    char nodes[4096] = "";

    for (int i = 0; i < 100; i++)
        snprintf(nodes + strlen(nodes), sizeof(nodes) - strlen(nodes),
                 "%sgpu-node%03d", i ? "," : "", 2 * i);
    ck_assert_int_ne(hosts_of(nodes, "99", "1(x99)"), 0);
    ck_assert_msg(strstr(list_err.msg, "names 100 nodes, SLURM_NNODES says 99"),
                  "%s", list_err.msg);
}
END_TEST

START_TEST(bad_allocations)
{
    ck_assert_int_ne(hosts_of(bad[_i].list, bad[_i].nodes, bad[_i].tasks), 0);
    ck_assert_msg(strstr(list_err.msg, bad[_i].needle) != NULL,
                  "'%s' lacks '%s'", list_err.msg, bad[_i].needle);
    ck_assert_uint_eq(list.count, 0);
}
END_TEST

START_TEST(detection_needs_all_three)
{
    cfg_slurm_env env;

    memset(fake, 0, sizeof(fake));
    fake[0][0] = "SLURM_NODELIST", fake[0][1] = "n[1-2]";
    fake[1][0] = "SLURM_NNODES", fake[1][1] = "2";
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_eq(cfg_slurm_in_allocation(&env), 0);
    fake[2][0] = "SLURM_TASKS_PER_NODE", fake[2][1] = "1(x2)";
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_eq(cfg_slurm_in_allocation(&env), 1);
    ck_assert_str_eq(env.nodelist, "n[1-2]");
    /* the job's variables only where the step's are not set: inside a
     * step, SLURM_NODELIST goes with SLURM_TASKS_PER_NODE */
    fake[3][0] = "SLURM_JOB_NODELIST", fake[3][1] = "m[1-4]";
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_str_eq(env.nodelist, "n[1-2]");
    ck_assert_int_eq(cfg_slurm_hosts(&env, &list, &list_err), 0);
    ck_assert_str_eq(list.hosts[1].name, "n2");
    fake[0][0] = "UNSET";
    fake[3][1] = "m[1-2]";
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_str_eq(env.nodelist, "m[1-2]");
}
END_TEST

/* What Slurm 22.05 sets inside a 1-node step (srun -N1 -w h3 --pty bash)
 * of `salloc -N 3 -n 6`: SLURM_NODELIST is the job's, SLURM_NNODES and
 * SLURM_TASKS_PER_NODE the step's, which hvdrun refused as a mismatch
 * ("names 3 nodes, SLURM_NNODES says 1"). The allocation is the step's
 * own, which Slurm describes whole (the job's tasks per node are told
 * nowhere there). */
START_TEST(inside_a_step_the_allocation_is_the_steps)
{
    static const char *step[][2] = {
        {"SLURM_JOB_NODELIST", "h[1-3]"}, {"SLURM_JOB_NUM_NODES", "3"},
        {"SLURM_NODELIST", "h[1-3]"},     {"SLURM_NNODES", "1"},
        {"SLURM_TASKS_PER_NODE", "1"},    {"SLURM_STEP_NODELIST", "h3"},
        {"SLURM_STEP_NUM_NODES", "1"},    {"SLURM_STEP_TASKS_PER_NODE", "1"},
    };
    cfg_slurm_env env;

    memset(fake, 0, sizeof(fake));
    memcpy(fake, step, sizeof(step));
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_eq(cfg_slurm_in_allocation(&env), 1);
    ck_assert_msg(cfg_slurm_hosts(&env, &list, &list_err) == 0, "%s",
                  list_err.msg);
    ck_assert_uint_eq(list.count, 1);
    ck_assert_str_eq(list.hosts[0].name, "h3");
    ck_assert_int_eq(list.hosts[0].slots, 1);
    /* a step of 2 nodes and 4 tasks (srun -N2 -n4 --pty bash) */
    fake[5][1] = "h[1-2]";
    fake[6][1] = "2";
    fake[7][1] = "3,1";
    cfg_hostlist_release(&list);
    cfg_hostlist_init(&list);
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_eq(cfg_slurm_hosts(&env, &list, &list_err), 0);
    ck_assert_uint_eq(list.count, 2);
    ck_assert_int_eq(list.hosts[0].slots, 3);
    ck_assert_int_eq(list.hosts[1].slots, 1);
    /* errors name the step's variables */
    fake[6][1] = "3";
    cfg_hostlist_release(&list);
    cfg_hostlist_init(&list);
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_ne(cfg_slurm_hosts(&env, &list, &list_err), 0);
    ck_assert_msg(strstr(list_err.msg, "SLURM_STEP_NODELIST names 2 nodes, "
                                       "SLURM_STEP_NUM_NODES says 3"),
                  "%s", list_err.msg);
}
END_TEST

/* srun -N 3 -n 3 hvdrun ...: three copies, each of which would start the
 * whole job; one task of a step, the job's own shell, task 0's shell of
 * srun -N 2 -n 4 --pty bash (the one a user types into), and a process
 * without SLURM_PROCID are not copies. */
START_TEST(several_tasks_of_a_step_are_copies)
{
    static const char *step[][2] = {
        {"SLURM_NODELIST", "h[1-3]"},
        {"SLURM_NNODES", "3"},
        {"SLURM_TASKS_PER_NODE", "1(x3)"},
        {"SLURM_STEP_NODELIST", "h[1-3]"},
        {"SLURM_STEP_NUM_NODES", "3"},
        {"SLURM_STEP_TASKS_PER_NODE", "1(x3)"},
        {"SLURM_STEP_NUM_TASKS", "3"},
        {"SLURM_PROCID", "2"},
    };
    cfg_slurm_env env;

    memset(fake, 0, sizeof(fake));
    memcpy(fake, step, sizeof(step));
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_eq(cfg_slurm_step_copies(&env), 3);
    ck_assert_str_eq(env.procid, "2");
    fake[6][1] = "1";
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_eq(cfg_slurm_step_copies(&env), 0);
    fake[6][1] = "4";
    fake[8][0] = "SLURM_PTY_PORT", fake[8][1] = "39271";
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_eq(cfg_slurm_step_copies(&env), 4); /* task 2 of 4 */
    fake[7][1] = "0";
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_eq(cfg_slurm_step_copies(&env), 0);
    /* no SLURM_PROCID: not a task of the step but a worker of a job
     * started in it, which inherited the step's variables */
    fake[8][0] = "UNSET";
    fake[7][0] = "UNSET";
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_eq(cfg_slurm_step_copies(&env), 0);
    fake[7][0] = "SLURM_PROCID";
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_eq(cfg_slurm_step_copies(&env), 4);
    /* no step: salloc's shell or the batch script (the task count there
     * is the job's, not a count of hvdruns) */
    fake[8][0] = "UNSET";
    fake[3][0] = "UNSET";
    cfg_slurm_env_read(&env, fake_get);
    ck_assert_int_eq(cfg_slurm_step_copies(&env), 0);
}
END_TEST

/* scontrol show job -d's records, as Slurm prints them: a hostlist per
 * detail line, the gres forms of its versions (typed and untyped, counts
 * or index lists alone, CNT, GRES_IDX=), other kinds of gres beside; only
 * the job's own record counts (an array's id prints every task's) */
START_TEST(node_gpus_from_scontrol)
{
    static const char detail[] =
        "JobId=7 ArrayJobId=7 ArrayTaskId=1 JobName=x\n"
        "   NumNodes=6 NumCPUs=8 NumTasks=8 CPUs/Task=1\n"
        "     Nodes=n[1-2] CPU_IDs=0-1 Mem=0 GRES=gpu:2(IDX:0,2)\n"
        "     Nodes=n3 CPU_IDs=0-1 Mem=0 GRES=nic:1(IDX:0),gpu:a100:1(IDX:3)\n"
        "     Nodes=n4 CPU_IDs=0-1 Mem=0 GRES=\n"
        "     Nodes=n5 CPU_IDs=0 Mem=0 GRES=gpu(CNT:3)\n"
        "     Nodes=n6 CPU_IDs=0 Mem=0 GRES_IDX=gpu(IDX:0,2-4)\n"
        "     Nodes=n7 CPU_IDs=0 Mem=0 GRES=gpu:a100(IDX:0-1)\n"
        "     Nodes=n8 CPU_IDs=0 Mem=0 GRES=gpu:2(S:0-1)(IDX:0-1)\n"
        "   TresPerJob=gres:gpu:5\n"
        "\n"
        "JobId=71 ArrayJobId=7 ArrayTaskId=2 JobName=x\n"
        "     Nodes=n1 CPU_IDs=0-1 Mem=0 GRES=gpu:4(IDX:0-3)\n";
    char *nodes[] = {"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"};
    long want[8] = {2, 2, 1, 0, 3, 4, 2, 2};
    cfg_node_gres g[8];
    cfg_err e;

    ck_assert_int_eq(cfg_slurm_node_gres(detail, "7", nodes, 8, g, &e), 0);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(g[i].gpus, want[i]);
    /* the other task's record */
    ck_assert_int_eq(cfg_slurm_node_gres(detail, "71", nodes, 1, g, &e), 0);
    ck_assert_int_eq(g[0].gpus, 4);
    /* a node the record does not name, and a gpu entry that cannot be read,
     * are errors, never 0 GPUs */
    ck_assert_int_eq(cfg_slurm_node_gres(detail, "71", nodes, 2, g, &e),
                     CFG_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "names no node 'n2'"));
    ck_assert_int_eq(cfg_slurm_node_gres("JobId=9 x\n  Nodes=n1 GRES=gpu:x\n",
                                         "9", nodes, 1, g, &e),
                     CFG_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "Nodes=n1 GRES=gpu:x"));
}
END_TEST

/* The other kinds beside the GPUs, as srun's --gres takes them back: a
 * count alone (CNT, as Slurm 22.05 prints a count-only nic; beyond 32
 * bits too), typed (the type left out, and the kind's types added up),
 * an index list alone; in the order of their names, whatever order the
 * node printed; a kind whose count is 0 left out */
START_TEST(node_gres_keeps_other_kinds)
{
    static const char detail[] =
        "JobId=8 JobName=x\n"
        "     Nodes=n1 CPU_IDs=0-1 Mem=0 GRES=nic(CNT:1),gpu:2(IDX:0-1)\n"
        "     Nodes=n2 CPU_IDs=0-1 Mem=0 GRES=gpu:a100:1(IDX:3),"
        "nic:mlx5:1(IDX:0),nic:cx6:1(IDX:1),bw(CNT:4294967296)\n"
        "     Nodes=n3 CPU_IDs=0 Mem=0 GRES=shard:3(IDX:0),nic(IDX:0,2-3),"
        "fpga:0\n"
        "     Nodes=n4 CPU_IDs=0 Mem=0 GRES=(null)\n";
    char *nodes[] = {"n1", "n2", "n3", "n4"};
    const char *want[] = {"nic:1", "bw:4294967296,nic:2", "nic:3,shard:3", ""};
    long gpus[] = {2, 1, 0, 0};
    cfg_node_gres g[4];
    cfg_err e;

    ck_assert_int_eq(cfg_slurm_node_gres(detail, "8", nodes, 4, g, &e), 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(g[i].gpus, gpus[i]);
        ck_assert_str_eq(g[i].other, want[i]);
    }
    /* an other kind that cannot be read is an error, not dropped */
    ck_assert_int_eq(cfg_slurm_node_gres("JobId=9 x\n  Nodes=n1 GRES=nic:x\n",
                                         "9", nodes, 1, g, &e),
                     CFG_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "unreadable GRES in '"));
    ck_assert_ptr_nonnull(strstr(e.msg, "GRES=nic:x"));
    /* shares of GPUs with indices alone: the indices are GPUs', not how
     * many shares */
    ck_assert_int_eq(
        cfg_slurm_node_gres("JobId=9 x\n  Nodes=n1 GRES=shard(IDX:0,2-3)\n",
                            "9", nodes, 1, g, &e),
        CFG_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "no count of a GPU's shares"));
    /* more kinds than fit: said so */
    ck_assert_int_eq(
        cfg_slurm_node_gres("JobId=9 x\n  Nodes=n1 GRES=a:1,b:1,c:1,d:1,e:1,"
                            "f:1,g:1,h:1,i:1,j:1,k:1,l:1,m:1,n:1,o:1,p:1,q:1\n",
                            "9", nodes, 1, g, &e),
        CFG_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "more kinds of generic resources"));
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("slurm_alloc");
    TCase *tc = tcase_create("parse");

    hostlist_fixture_add(tc);
    tcase_add_loop_test(tc, node_lists, 0, sizeof(lists) / sizeof(lists[0]));
    ADD(tc, tasks_per_node_become_slots);
    ADD(tc, tasks_forms);
    ADD(tc, long_node_list_keeps_the_reason);
    tcase_add_loop_test(tc, bad_allocations, 0, sizeof(bad) / sizeof(bad[0]));
    ADD(tc, detection_needs_all_three);
    ADD(tc, node_gres_keeps_other_kinds);
    ADD(tc, inside_a_step_the_allocation_is_the_steps);
    ADD(tc, several_tasks_of_a_step_are_copies);
    ADD(tc, node_gpus_from_scontrol);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
