#include <string.h>

#include "hostfile.h"
#include "hostlist_fixture.h"
#include "unit.h"

static int
parse(const char *text)
{
    return cfg_hostfile_parse(text, strlen(text), "hosts.txt", &list,
                              &list_err);
}

START_TEST(openmpi_format)
{
    ck_assert_int_eq(parse("# cluster\n\nnode1 slots=4 max_slots=8\n"
                           "node2 slots=2   # two GPUs\n"
                           "node3\n"),
                     0);
    ck_assert_uint_eq(list.count, 3);
    ck_assert_int_eq(list.hosts[0].slots, 4);
    ck_assert_int_eq(list.hosts[0].max_slots, 8);
    ck_assert_int_eq(list.hosts[1].slots, 2);
    ck_assert_int_eq(list.hosts[2].slots, 1);
}
END_TEST

START_TEST(hydra_format)
{
    ck_assert_int_eq(parse("node1:4\nnode2:2\r\n[fe80::2]:3\n"), 0);
    ck_assert_uint_eq(list.count, 3);
    ck_assert_int_eq(list.hosts[0].slots, 4);
    ck_assert_int_eq(list.hosts[1].slots, 2);
    ck_assert_str_eq(list.hosts[2].name, "fe80::2");
    ck_assert_int_eq(list.hosts[2].slots, 3);
}
END_TEST

/* a host named again: slots added, a bound only while every line gives
 * one, a user from the line that gives it */
START_TEST(repeated_host_merges)
{
    ck_assert_int_eq(parse("a slots=2 max_slots=2\na slots=1\n"
                           "b slots=1 max_slots=1\nb slots=2 max_slots=3\n"
                           "c slots=1\nu@c slots=1\n"),
                     0);
    ck_assert_int_eq(list.hosts[0].slots, 3);
    ck_assert_int_eq(list.hosts[0].max_slots, 0);
    ck_assert_int_eq(list.hosts[1].max_slots, 4);
    ck_assert_str_eq(list.hosts[2].user, "u");
    ck_assert_int_eq(cfg_hostlist_slots(&list), 8);
}
END_TEST

START_TEST(user_at_ipv6_with_slots_field)
{
    ck_assert_int_eq(parse("u@[fe80::1] slots=2\n"), 0);
    ck_assert_str_eq(list.hosts[0].name, "fe80::1");
    ck_assert_str_eq(list.hosts[0].user, "u");
    ck_assert_int_eq(list.hosts[0].slots, 2);
}
END_TEST

static const struct {
    const char *text, *needle;
} bad_plain[] = {
    {"node1 slots=x\n", "hosts.txt:1: 'slots=x'"},
    {"node1 slots=2\nnode2 cpus=3\n", "hosts.txt:2: unknown field 'cpus'"},
    {"a\nb\nnode3 slots\n", "hosts.txt:3: unexpected 'slots'"},
    {"node1:2 slots=3\n", "slots given twice"},
    {"node1 slots=4 max_slots=2\n", "max_slots=2 is below"},
    {"# only comments\n\n", "no hosts"},
    {"bad!host slots=1\n", "hosts.txt:1: bad host name"},
    /* a bound on the slots of the whole list (one host's, or a file of
     * ranges naming the same hosts again and again), where it is passed */
    {"a slots=1\nu@a slots=1\nv@a slots=1\n",
     "hosts.txt:3: host 'a' given again with another user"},
    {"a slots=1048576\nb slots=1\n",
     "hosts.txt:2: more than 1048576 slots in all"},
};

START_TEST(plain_errors)
{
    ck_assert_int_ne(parse(bad_plain[_i].text), 0);
    ck_assert_msg(strstr(list_err.msg, bad_plain[_i].needle) != NULL,
                  "'%s' lacks '%s'", list_err.msg, bad_plain[_i].needle);
}
END_TEST

START_TEST(detects_yaml_by_content)
{
    ck_assert(cfg_hostfile_is_yaml("- name: a\n", 10));
    ck_assert(cfg_hostfile_is_yaml("# c\nhosts:\n  - a\n", 17));
    ck_assert(cfg_hostfile_is_yaml("---\n- a\n", 8));
    ck_assert(cfg_hostfile_is_yaml("cluster:\n", 9));
    ck_assert(!cfg_hostfile_is_yaml("node1:4\n", 8));
    ck_assert(!cfg_hostfile_is_yaml("node1 slots=4\n", 14));
    ck_assert(!cfg_hostfile_is_yaml("[::1]:2\n", 8));
}
END_TEST

START_TEST(yaml_host_list)
{
    ck_assert_int_eq(parse("hosts:\n"
                           "  - name: gpu1\n"
                           "    slots: 8\n"
                           "    ssh_port: 2222\n"
                           "    user: alice\n"
                           "    identity_file: ~/.ssh/id_ed25519\n"
                           "  - name: gpu2\n"
                           "  - gpu3:2\n"),
                     0);
    ck_assert_uint_eq(list.count, 3);
    ck_assert_int_eq(list.hosts[0].slots, 8);
    ck_assert_int_eq(list.hosts[0].ssh_port, 2222);
    ck_assert_str_eq(list.hosts[0].user, "alice");
    ck_assert_str_eq(list.hosts[0].identity_file, "~/.ssh/id_ed25519");
    ck_assert_int_eq(list.hosts[1].slots, 1);
    ck_assert_str_eq(list.hosts[2].name, "gpu3");
    ck_assert_int_eq(list.hosts[2].slots, 2);
}
END_TEST

START_TEST(yaml_top_level_list_with_name_range)
{
    ck_assert_int_eq(parse("- {name: 'node[01-04]', slots: 2}\n"), 0);
    ck_assert_uint_eq(list.count, 4);
    ck_assert_str_eq(list.hosts[0].name, "node01");
    ck_assert_str_eq(list.hosts[3].name, "node04");
    ck_assert_int_eq(cfg_hostlist_slots(&list), 8);
}
END_TEST

START_TEST(yaml_cluster_shape)
{
    ck_assert_int_eq(parse("cluster:\n"
                           "  - master: 10.0.0.1\n"
                           "    workers: 10.0.0.2-10.0.0.10\n"),
                     0);
    ck_assert_uint_eq(list.count, 10);
    ck_assert_str_eq(list.hosts[0].name, "10.0.0.1");
    ck_assert_str_eq(list.hosts[1].name, "10.0.0.2");
    ck_assert_str_eq(list.hosts[9].name, "10.0.0.10");
    ck_assert_int_eq(list.hosts[9].slots, 1);
}
END_TEST

START_TEST(yaml_cluster_slots_lists_and_short_ranges)
{
    ck_assert_int_eq(parse("cluster:\n"
                           "  - master: head\n"
                           "    workers: ['node[1-3,7]', 192.168.1.250-252]\n"
                           "    slots: 4\n"),
                     0);
    ck_assert_uint_eq(list.count, 8);
    ck_assert_str_eq(list.hosts[1].name, "node1");
    ck_assert_str_eq(list.hosts[4].name, "node7");
    ck_assert_str_eq(list.hosts[7].name, "192.168.1.252");
    ck_assert_int_eq(list.hosts[7].slots, 4);
}
END_TEST

START_TEST(address_range_crosses_octet)
{
    ck_assert_int_eq(parse("cluster:\n  - workers: 10.0.0.254-10.0.1.1\n"), 0);
    ck_assert_uint_eq(list.count, 4);
    ck_assert_str_eq(list.hosts[2].name, "10.0.1.0");
}
END_TEST

#define TEN_TIMES(s) s s s s s s s s s s

/* The root, the cluster list and its item are three levels deep; the
 * brackets make the rest: 64, and 65 (its 62nd '[' at column 75). */
#define DEEP_64                                                                \
    "cluster:\n  - workers: "                                                  \
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["            \
    "n1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"
#define DEEP_65                                                                \
    "cluster:\n  - workers: "                                                  \
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["           \
    "n1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"

static const struct {
    const char *text, *needle;
} bad_yaml[] = {
    {"hosts:\n  - name: a\n    slots: two\n",
     "hosts.txt:3:12: 'slots' expects an integer"},
    {"hosts:\n  - name: a\n    cores: 2\n",
     "hosts.txt:3:5: unknown key 'cores'"},
    {"hosts:\n  - slots: 2\n", "hosts.txt:2:5: host without 'name'"},
    {"nodes:\n  - a\n", "hosts.txt:1:1: unknown key 'nodes'"},
    {"hosts: a\n", "hosts.txt:1:8: expected a list of hosts"},
    {"- name: [a\n", "hosts.txt:2:"},
    {"cluster:\n  - master: 10.0.0.9-10.0.0.2\n", "is empty or too large"},
    {"cluster:\n  - workers: node[4-1]\n", "is empty or too large"},
    {"cluster:\n  - workers: node[1-2\n", "without its ']'"},
    {"cluster:\n  - slots: 2\n", "expected 'master' or 'workers'"},
    {"cluster:\n  - master: a\n    gpus: 2\n", "unknown key 'gpus'"},
    {"cluster:\n  - workers: 10.0.0.0-10.1.0.0\n", "too large"},
    {"hosts:\n  - name: a\n    slots: 4\n    max_slots: 2\n", "below slots"},
    /* refused where they start, before any host is built: an alias (a
     * list inside itself; a few hundred bytes standing for billions of
     * hosts), a second document, nesting past 64 */
    {"cluster:\n  - workers: &a [n1, *a]\n",
     "hosts.txt:2:22: YAML aliases (*name) are not supported"},
    {"- &l0 n1\n- *l0\n", "hosts.txt:2:3: YAML aliases"},
    {"- a\n---\n- b\n", "hosts.txt:2:1: a second YAML document"},
    /* no alias: the same ranges again and again, up to the bound */
    {"cluster:\n  - slots: 1000\n    workers:\n" TEN_TIMES(
         "      - n[0-99]\n") "      - n[0-99]\n",
     "hosts.txt:14:9: more than 1048576 slots in all"},
    {DEEP_65, "hosts.txt:2:75: nested more than 64 deep"},
    /* libyaml keeps both; the last won without a word */
    {"hosts:\n  - name: a\n    slots: 2\n    slots: 5\n",
     "hosts.txt:4:5: 'slots' given twice"},
};

START_TEST(yaml_nested_64_deep_is_read)
{
    ck_assert_int_eq(parse(DEEP_64), 0);
    ck_assert_str_eq(list.hosts[0].name, "n1");
}
END_TEST

START_TEST(yaml_errors)
{
    ck_assert_int_ne(parse(bad_yaml[_i].text), 0);
    ck_assert_msg(strstr(list_err.msg, bad_yaml[_i].needle) != NULL,
                  "'%s' lacks '%s'", list_err.msg, bad_yaml[_i].needle);
}
END_TEST

START_TEST(load_missing_file_names_it)
{
    ck_assert_int_eq(cfg_hostfile_load("/nonexistent/hosts", &list, &list_err),
                     CFG_EIO);
    ck_assert_ptr_nonnull(strstr(list_err.msg, "'/nonexistent/hosts'"));
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("hostfile");
    TCase *tc = tcase_create("parse");

    hostlist_fixture_add(tc);
    ADD(tc, openmpi_format);
    ADD(tc, hydra_format);
    tcase_add_loop_test(tc, plain_errors, 0,
                        sizeof(bad_plain) / sizeof(bad_plain[0]));
    ADD(tc, detects_yaml_by_content);
    ADD(tc, yaml_host_list);
    ADD(tc, yaml_top_level_list_with_name_range);
    ADD(tc, yaml_cluster_shape);
    ADD(tc, yaml_cluster_slots_lists_and_short_ranges);
    ADD(tc, address_range_crosses_octet);
    ADD(tc, repeated_host_merges);
    ADD(tc, user_at_ipv6_with_slots_field);
    ADD(tc, yaml_nested_64_deep_is_read);
    tcase_add_loop_test(tc, yaml_errors, 0,
                        sizeof(bad_yaml) / sizeof(bad_yaml[0]));
    ADD(tc, load_missing_file_names_it);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
