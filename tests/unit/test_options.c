#include <stdio.h>
#include <string.h>

#include "options.h"
#include "unit.h"

static cfg_values cli, file;
static cfg_err e;

static void
setup(void)
{
    cfg_values_init(&cli);
    cfg_values_init(&file);
    memset(&e, 0, sizeof(e));
}

static void
teardown(void)
{
    cfg_values_release(&cli);
    cfg_values_release(&file);
}

static int
parse(const char *text)
{
    return cfg_configfile_parse(text, strlen(text), "/etc/job/run.yaml", &file,
                                &e);
}

/* Collects the tunable variables as "A=1;B=2;". */
static int
collect(const char *name, const char *value, void *arg)
{
    char *buf = arg;
    size_t n = strlen(buf);
    snprintf(buf + n, 1024 - n, "%s=%s;", name, value);
    return 0;
}

static const char horovod_example[] = "controller: gloo\n"
                                      "params:\n"
                                      "  fusion_threshold_mb: 32\n"
                                      "  cycle_time_ms: 10\n"
                                      "  cache_capacity: 2048\n"
                                      "  hierarchical_allreduce: true\n"
                                      "autotune:\n"
                                      "  enabled: true\n"
                                      "  log_file: tune.csv\n"
                                      "  warmup_samples: 5\n"
                                      "timeline:\n"
                                      "  filename: tl.json\n"
                                      "  mark_cycles: true\n"
                                      "stall_check:\n"
                                      "  enabled: false\n"
                                      "  warning_time_seconds: 120\n"
                                      "library_options:\n"
                                      "  num_nccl_streams: 2\n"
                                      "  gloo_timeout_seconds: 60\n"
                                      "logging:\n"
                                      "  level: INFO\n"
                                      "  hide_timestamp: true\n";

START_TEST(horovod_keys_map_to_horovod_variables)
{
    char env[1024] = "";

    ck_assert_int_eq(parse(horovod_example), 0);
    ck_assert_int_eq(cfg_values_tunable_env(&file, collect, env), 0);
    ck_assert_str_eq(env, "HOROVOD_FUSION_THRESHOLD=33554432;"
                          "HOROVOD_CYCLE_TIME=10;"
                          "HOROVOD_CACHE_CAPACITY=2048;"
                          "HOROVOD_HIERARCHICAL_ALLREDUCE=1;"
                          "HOROVOD_AUTOTUNE=1;"
                          "HOROVOD_AUTOTUNE_LOG=tune.csv;"
                          "HOROVOD_AUTOTUNE_WARMUP_SAMPLES=5;"
                          "HOROVOD_TIMELINE=tl.json;"
                          "HOROVOD_TIMELINE_MARK_CYCLES=1;"
                          "HOROVOD_STALL_CHECK_DISABLE=1;"
                          "HOROVOD_STALL_CHECK_TIME_SECONDS=120;"
                          "HOROVOD_NUM_NCCL_STREAMS=2;"
                          "HOROVOD_GLOO_TIMEOUT_SECONDS=60;"
                          "HOROVOD_LOG_LEVEL=INFO;"
                          "HOROVOD_LOG_HIDE_TIME=1;");
}
END_TEST

START_TEST(autotune_details_need_autotune)
{
    char env[1024] = "";

    ck_assert_int_eq(
        parse("autotune:\n  enabled: false\n  warmup_samples: 5\n"), 0);
    ck_assert_int_eq(cfg_values_tunable_env(&file, collect, env), 0);
    ck_assert_str_eq(env, "HOROVOD_AUTOTUNE=0;");
}
END_TEST

START_TEST(own_keys)
{
    ck_assert_int_eq(parse("np: 4\nhosts: [a:2, b:2]\nverbose: yes\n"
                           "kill_grace: 1.5\nenv: [A=1, B]\n"
                           "hostfile: hosts.txt\n"),
                     0);
    ck_assert_str_eq(cfg_values_get(&file, CFG_OPT_NP), "4");
    ck_assert_str_eq(cfg_values_get(&file, CFG_OPT_HOSTS), "a:2,b:2");
    ck_assert(cfg_values_flag(&file, CFG_OPT_VERBOSE));
    ck_assert(cfg_values_double(&file, CFG_OPT_KILL_GRACE, 0) == 1.5);
    ck_assert_uint_eq(file.nlist, 2);
    ck_assert_str_eq(file.list[1], "B");
    /* relative to the config file, not to the working directory */
    ck_assert_str_eq(cfg_values_get(&file, CFG_OPT_HOSTFILE),
                     "/etc/job/hosts.txt");
}
END_TEST

START_TEST(env_as_mapping)
{
    ck_assert_int_eq(parse("env:\n  OMP_NUM_THREADS: 4\n"), 0);
    ck_assert_str_eq(file.list[0], "OMP_NUM_THREADS=4");
}
END_TEST

START_TEST(command_line_over_file_over_defaults)
{
    char env[1024] = "";

    ck_assert_int_eq(parse("np: 4\nparams:\n  cycle_time_ms: 10\n"
                           "  cache_capacity: 7\nenv: [A=file, B=file]\n"),
                     0);
    ck_assert_int_eq(cfg_values_set(&cli, CFG_OPT_NP, "8", &e), 0);
    ck_assert_int_eq(cfg_values_set(&cli, CFG_OPT_CYCLE_TIME_MS, "2.5", &e), 0);
    ck_assert_int_eq(cfg_values_set(&cli, CFG_OPT_ENV, "A=cli", &e), 0);
    ck_assert_int_eq(cfg_values_merge(&cli, &file, &e), 0);
    ck_assert_str_eq(cfg_values_get(&cli, CFG_OPT_NP), "8");
    ck_assert_int_eq(cfg_values_long(&cli, CFG_OPT_KILL_GRACE, 3), 3);
    ck_assert_int_eq(cfg_values_tunable_env(&cli, collect, env), 0);
    ck_assert_str_eq(env, "HOROVOD_CYCLE_TIME=2.5;HOROVOD_CACHE_CAPACITY=7;");
    /* file entries first, so that the command line's A wins when applied */
    ck_assert_uint_eq(cli.nlist, 3);
    ck_assert_str_eq(cli.list[0], "A=file");
    ck_assert_str_eq(cli.list[2], "A=cli");
}
END_TEST

START_TEST(env_mapping_value_too_long_is_refused)
{
    char text[5100] = "env:\n  FOO: ";

    memset(text + strlen(text), 'x', 5000);
    ck_assert_int_ne(parse(text), 0);
    ck_assert_ptr_nonnull(strstr(e.msg, "run.yaml:2:8: 'env' value longer"));
}
END_TEST

START_TEST(command_line_hosts_hide_the_files_other_way)
{
    ck_assert_int_eq(parse("hosts: a:2\n"), 0);
    ck_assert_int_eq(cfg_values_set(&cli, CFG_OPT_HOSTFILE, "h.txt", &e), 0);
    ck_assert_int_eq(cfg_values_merge(&cli, &file, &e), 0);
    ck_assert_ptr_null(cfg_values_get(&cli, CFG_OPT_HOSTS));
    ck_assert_str_eq(cfg_values_get(&cli, CFG_OPT_HOSTFILE), "h.txt");
}
END_TEST

/* both in the file, none on the command line: both kept (hvdrun then
 * refuses the pair), not one hidden by the other as the merge copies */
START_TEST(file_with_both_ways_keeps_both)
{
    ck_assert_int_eq(parse("hosts: a:2\nhostfile: h.txt\n"), 0);
    ck_assert_int_eq(cfg_values_merge(&cli, &file, &e), 0);
    ck_assert_str_eq(cfg_values_get(&cli, CFG_OPT_HOSTS), "a:2");
    ck_assert_str_eq(cfg_values_get(&cli, CFG_OPT_HOSTFILE), "/etc/job/h.txt");
}
END_TEST

START_TEST(choices_are_stored_as_the_table_writes_them)
{
    ck_assert_int_eq(parse("launcher: SLURM\nlogging:\n  level: debug\n"), 0);
    ck_assert_str_eq(cfg_values_get(&file, CFG_OPT_LAUNCHER), "slurm");
    ck_assert_str_eq(cfg_values_get(&file, CFG_OPT_LOG_LEVEL), "DEBUG");
}
END_TEST

/* a mapping without keys: the duplicate check sorted a NULL array of
 * none (undefined behaviour the fuzzer found) */
START_TEST(an_empty_mapping_is_no_setting)
{
    ck_assert_int_eq(parse("{}\n"), 0);
    ck_assert_ptr_null(cfg_values_get(&file, CFG_OPT_NP));
    ck_assert_int_eq(parse("logging: {}\n"), 0);
}
END_TEST

static const struct {
    const char *text, *needle;
} bad[] = {
    {"rendezvous_port: 70000\n", "expects a port from 0 to 65535"},
    {"np: 2\nnp: 4\n", "run.yaml:2:1: 'np' given twice"},
    {"ssh_port: 0\n", "expects a port from 1 to 65535"},
    {"kill_grace: 0x10\n", "'kill_grace' expects a number >= 0"},
    {"kill_grace: inf\n", "'kill_grace' expects a number >= 0"},
    {"params:\n  fusion_threshold: 1\n",
     "run.yaml:2:3: unknown key 'params.fusion_threshold'"},
    {"colour: red\n", "run.yaml:1:1: unknown key 'colour'"},
    {"np: 0\n", "run.yaml:1:5: 'np' expects an integer >= 1"},
    {"controller: mpi\n", "'controller' expects one of gloo"},
    {"logging:\n  level: LOUD\n", "expects one of TRACE|DEBUG"},
    {"autotune:\n  gaussian_process_noise: 2\n", "from 0 to 1"},
    {"verbose: maybe\n", "expects true or false"},
    {"params: 3\n", "unknown key 'params'"},
    {"- a\n", "expected a mapping of settings"},
    {"np: [1]\n", "expects a single value"},
    {"np: 4\n  bad indent: 1\n", "run.yaml:2:"},
};

START_TEST(errors_name_the_key)
{
    ck_assert_int_ne(parse(bad[_i].text), 0);
    ck_assert_msg(strstr(e.msg, bad[_i].needle) != NULL, "'%s' lacks '%s'",
                  e.msg, bad[_i].needle);
}
END_TEST

START_TEST(table_is_consistent)
{
    for (int i = 0; i < CFG_OPT_COUNT; i++) {
        const cfg_option *o = &cfg_options[i];
        ck_assert_int_eq(o->id, i);
        ck_assert_ptr_nonnull(o->help);
        if (o->long_name)
            ck_assert_ptr_eq(cfg_option_by_long(o->long_name), o);
        if (o->key)
            ck_assert_ptr_eq(cfg_option_by_key(o->key), o);
    }
    ck_assert_ptr_eq(cfg_option_by_long("prefix-output-with-timestamp"),
                     &cfg_options[CFG_OPT_PREFIX_TIMESTAMP]);
    ck_assert_ptr_eq(cfg_option_by_short("np"), &cfg_options[CFG_OPT_NP]);
    ck_assert_ptr_null(cfg_option_by_long("nope"));
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("configfile");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, an_empty_mapping_is_no_setting);
    ADD(tc, horovod_keys_map_to_horovod_variables);
    ADD(tc, autotune_details_need_autotune);
    ADD(tc, own_keys);
    ADD(tc, env_as_mapping);
    ADD(tc, command_line_over_file_over_defaults);
    ADD(tc, command_line_hosts_hide_the_files_other_way);
    ADD(tc, env_mapping_value_too_long_is_refused);
    ADD(tc, file_with_both_ways_keeps_both);
    ADD(tc, choices_are_stored_as_the_table_writes_them);
    tcase_add_loop_test(tc, errors_name_the_key, 0,
                        sizeof(bad) / sizeof(bad[0]));
    ADD(tc, table_is_consistent);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
