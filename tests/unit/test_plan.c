#include <stdlib.h>
#include <string.h>

#include "agent_brief.h"
#include "hostfile.h"
#include "plan.h"
#include "unit.h"

static cfg_hostlist l;
static cfg_plan p;
static cfg_err e;

static void
setup(void)
{
    cfg_hostlist_init(&l);
    memset(&p, 0, sizeof(p));
}

static void
teardown(void)
{
    cfg_plan_release(&p);
    cfg_hostlist_release(&l);
}

static void
build(const char *spec, int np)
{
    ck_assert_int_eq(cfg_hostspec_parse(spec, &l, &e), 0);
    ck_assert_int_eq(cfg_plan_build(&l, np, &p, &e), 0);
}

/* The plan of np ranks on the hosts of a host file's text (read first):
 * cfg_plan_build's result. */
static int
plan_of_file(const char *text, int np)
{
    ck_assert_int_eq(cfg_hostfile_parse(text, strlen(text), "h", &l, &e), 0);
    return cfg_plan_build(&l, np, &p, &e);
}

/* rank: host, local_rank, local_size, cross_rank, cross_size */
static void
expect(int rank, int host, int lr, int ls, int cr, int cs)
{
    const cfg_slot *s = &p.slots[rank];
    ck_assert_int_eq(s->rank, rank);
    ck_assert_int_eq(s->host, host);
    ck_assert_int_eq(s->local_rank, lr);
    ck_assert_int_eq(s->local_size, ls);
    ck_assert_int_eq(s->cross_rank, cr);
    ck_assert_int_eq(s->cross_size, cs);
}

/* Horovod's own example: worker-0:1,worker-1:2 gives rank 2 cross_size 1. */
START_TEST(horovod_example)
{
    build("worker-0:1,worker-1:2", 3);
    ck_assert_int_eq(p.size, 3);
    expect(0, 0, 0, 1, 0, 2);
    expect(1, 1, 0, 2, 1, 2);
    expect(2, 1, 1, 2, 0, 1);
}
END_TEST

START_TEST(two_by_four)
{
    build("a:4,b:4", 0);
    ck_assert_int_eq(p.size, 8);
    ck_assert_int_eq(p.nhosts, 2);
    expect(0, 0, 0, 4, 0, 2);
    expect(3, 0, 3, 4, 0, 2);
    expect(4, 1, 0, 4, 1, 2);
    expect(7, 1, 3, 4, 1, 2);
}
END_TEST

START_TEST(np_below_slots_takes_first)
{
    build("a:4,b:4,c:4", 6);
    ck_assert_int_eq(p.size, 6);
    ck_assert_int_eq(p.nhosts, 2);
    ck_assert_int_eq(p.scale, 1);
    expect(5, 1, 1, 2, 1, 2);
    expect(2, 0, 2, 4, 0, 1);
}
END_TEST

START_TEST(np_above_slots_scales_each_host)
{
    build("a:4,b:4", 16);
    ck_assert_int_eq(p.size, 16);
    ck_assert_int_eq(p.scale, 2);
    expect(7, 0, 7, 8, 0, 2);
    expect(8, 1, 0, 8, 1, 2);
    expect(15, 1, 7, 8, 1, 2);
}
END_TEST

START_TEST(np_above_slots_not_multiple)
{
    build("a:2,b:1", 5);
    ck_assert_int_eq(p.scale, 2);
    expect(3, 0, 3, 4, 0, 1);
    expect(4, 1, 0, 1, 1, 2);
}
END_TEST

/* max_slots caps a host when -np is above the slots (OpenMPI's
 * oversubscription limit): the others take more */
START_TEST(np_above_slots_keeps_max_slots)
{
    ck_assert_int_eq(plan_of_file("a slots=1 max_slots=1\nb slots=1\n", 4), 0);
    ck_assert_int_eq(p.scale, 3);
    expect(0, 0, 0, 1, 0, 2);
    expect(3, 1, 2, 3, 0, 1);
}
END_TEST

START_TEST(np_above_every_max_slots_is_error)
{
    ck_assert_int_eq(
        plan_of_file("a slots=1 max_slots=1\nb slots=1 max_slots=2\n", 4),
        CFG_ERANGE);
    ck_assert_str_eq(
        e.msg, "-np 4 is more than the 3 ranks the hosts' max_slots allow");
    cfg_plan_release(&p);
    ck_assert_int_eq(cfg_plan_build(&l, 3, &p, &e), 0);
    expect(2, 1, 1, 2, 0, 1);
}
END_TEST

/* an agent rebuilds the plan from its brief: it must be hvdrun's, the
 * ranks that max_slots moved included (without it, the agents ran 4 ranks
 * where hvdrun's plan, and hvdd's, had 2) */
START_TEST(agents_brief_gives_the_same_plan)
{
    char *argv[] = {"true", NULL}, *line, err[200];
    hvdrun_brief out = {.host = 0,
                        .np = 6,
                        .argv = argv,
                        .cwd = "/",
                        .rendezvous_addr = "127.0.0.1",
                        .token = "t"},
                 in;

    ck_assert_int_eq(plan_of_file("a slots=2 max_slots=2\nb slots=2\n", 6), 0);
    out.hosts = l;
    ck_assert_ptr_nonnull(line = hvdrun_brief_encode(&out));
    ck_assert_int_eq(hvdrun_brief_decode(line, &in, err, sizeof(err)), 0);
    ck_assert_int_eq(in.plan.size, p.size);
    for (int r = 0; r < p.size; r++)
        ck_assert_int_eq(in.plan.slots[r].host, p.slots[r].host);
    ck_assert_int_eq(in.plan.slots[2].host, 1);
    ck_assert_ptr_null(in.chosen); /* none given: none in the line */
    hvdrun_brief_release(&in);
    free(line);
}
END_TEST

/* the names -x gave reach the agent, which keeps those of the GPU
 * variables (worker_env_node) */
START_TEST(agents_brief_carries_the_chosen_names)
{
    char *argv[] = {"true", NULL},
         *chosen[] = {"ROCR_VISIBLE_DEVICES", "X", NULL};
    char *line, err[200];
    hvdrun_brief out = {.host = 0,
                        .np = 2,
                        .argv = argv,
                        .chosen = chosen,
                        .cwd = "/",
                        .rendezvous_addr = "127.0.0.1",
                        .token = "t"},
                 in;

    ck_assert_int_eq(plan_of_file("a slots=2\n", 2), 0);
    out.hosts = l;
    ck_assert_ptr_nonnull(line = hvdrun_brief_encode(&out));
    ck_assert_int_eq(hvdrun_brief_decode(line, &in, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(in.chosen);
    ck_assert_str_eq(in.chosen[0], "ROCR_VISIBLE_DEVICES");
    ck_assert_str_eq(in.chosen[1], "X");
    ck_assert_ptr_null(in.chosen[2]);
    hvdrun_brief_release(&in);
    free(line);
    /* anything but strings there is refused */
    ck_assert_int_ne(
        hvdrun_brief_decode("{\"host\":0,\"hosts\":[[\"a\",1]],\"np\":1,"
                            "\"argv\":[\"true\"],\"env\":[],\"cwd\":\"/\","
                            "\"rendezvous_addr\":\"x\",\"rendezvous_port\":1,"
                            "\"token\":\"t\",\"heartbeat\":0,\"kill_grace\":1,"
                            "\"start_timeout\":1,\"timestamps\":false,"
                            "\"verbose\":false,\"chosen\":[1]}",
                            &in, err, sizeof(err)),
        0);
    ck_assert_str_eq(err, "the job message's chosen names are not strings");
    hvdrun_brief_release(&in);
}
END_TEST

START_TEST(no_hosts_is_error)
{
    ck_assert_int_eq(cfg_plan_build(&l, 2, &p, &e), CFG_EINVAL);
    ck_assert_str_eq(e.msg, "no hosts to run on");
    ck_assert_int_eq(cfg_plan_first_rank(&p, 0), -1);
}
END_TEST

START_TEST(first_rank_of_host)
{
    build("a:3,b:2,c:1", 4);
    ck_assert_int_eq(cfg_plan_first_rank(&p, 0), 0);
    ck_assert_int_eq(cfg_plan_first_rank(&p, 1), 3);
    ck_assert_int_eq(cfg_plan_first_rank(&p, 2), -1);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("ranks");

    tcase_add_checked_fixture(tc, setup, teardown);
    ADD(tc, horovod_example);
    ADD(tc, two_by_four);
    ADD(tc, np_below_slots_takes_first);
    ADD(tc, np_above_slots_keeps_max_slots);
    ADD(tc, np_above_every_max_slots_is_error);
    ADD(tc, agents_brief_gives_the_same_plan);
    ADD(tc, agents_brief_carries_the_chosen_names);
    ADD(tc, np_above_slots_scales_each_host);
    ADD(tc, np_above_slots_not_multiple);
    ADD(tc, no_hosts_is_error);
    ADD(tc, first_rank_of_host);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
