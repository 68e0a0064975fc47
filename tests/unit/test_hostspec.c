#include <string.h>

#include "hostlist.h"
#include "hostlist_fixture.h"
#include "unit.h"

START_TEST(plain_list)
{
    ck_assert_int_eq(
        cfg_hostspec_parse("server1:8,server2:8", &list, &list_err), 0);
    ck_assert_uint_eq(list.count, 2);
    ck_assert_str_eq(list.hosts[0].name, "server1");
    ck_assert_int_eq(list.hosts[0].slots, 8);
    ck_assert_str_eq(list.hosts[1].name, "server2");
    ck_assert_int_eq(cfg_hostlist_slots(&list), 16);
}
END_TEST

START_TEST(no_slots_means_one)
{
    ck_assert_int_eq(cfg_hostspec_parse("a,b:3", &list, &list_err), 0);
    ck_assert_int_eq(list.hosts[0].slots, 1);
    ck_assert_int_eq(list.hosts[1].slots, 3);
}
END_TEST

START_TEST(spaces_around_commas)
{
    ck_assert_int_eq(cfg_hostspec_parse(" a:2 ,  b:1 ", &list, &list_err), 0);
    ck_assert_uint_eq(list.count, 2);
    ck_assert_str_eq(list.hosts[0].name, "a");
    ck_assert_str_eq(list.hosts[1].name, "b");
}
END_TEST

START_TEST(ipv4_ipv6_and_names)
{
    ck_assert_int_eq(
        cfg_hostspec_parse("10.0.0.1:2,[fe80::1]:2,[::1],my_host-3:4", &list,
                           &list_err),
        0);
    ck_assert_uint_eq(list.count, 4);
    ck_assert_str_eq(list.hosts[0].name, "10.0.0.1");
    ck_assert_str_eq(list.hosts[1].name, "fe80::1");
    ck_assert_int_eq(list.hosts[1].slots, 2);
    ck_assert_str_eq(list.hosts[2].name, "::1");
    ck_assert_int_eq(list.hosts[2].slots, 1);
    ck_assert_str_eq(list.hosts[3].name, "my_host-3");
}
END_TEST

START_TEST(ipv6_zone_by_name_or_number)
{
    ck_assert_int_eq(
        cfg_hostspec_parse("[fe80::1%eth0]:2,[fe80::2%3]", &list, &list_err),
        0);
    ck_assert_str_eq(list.hosts[0].name, "fe80::1%eth0");
    ck_assert_str_eq(list.hosts[1].name, "fe80::2%3");
}
END_TEST

START_TEST(user_at_host)
{
    ck_assert_int_eq(cfg_hostspec_parse("alice@gpu1:4", &list, &list_err), 0);
    ck_assert_str_eq(list.hosts[0].user, "alice");
    ck_assert_str_eq(list.hosts[0].name, "gpu1");
    ck_assert_int_eq(list.hosts[0].slots, 4);
}
END_TEST

START_TEST(repeated_host_adds_slots)
{
    ck_assert_int_eq(cfg_hostspec_parse("a:2,b:1,a:3", &list, &list_err), 0);
    ck_assert_uint_eq(list.count, 2);
    ck_assert_int_eq(list.hosts[0].slots, 5);
}
END_TEST

/* Each bad spec must fail, and the message must name the culprit. */
static const struct {
    const char *spec, *needle;
} bad[] = {
    {"a:x", "entry 1 'a': slots"},
    {"a:2,b:0", "entry 2 'b'"},
    {"a:2,,b", "entry 2 is empty"},
    {"a:2,", "entry 2 is empty"},
    {"", "entry 1 is empty"},
    {"fe80::1:2", "needs brackets"},
    {"[fe80::1:2", "missing ']'"},
    {"[fe80::1]x", "after ']'"},
    {"bad host:2", "bad host name 'bad host'"},
    {"a:-1", "slots must be"},
    {"a:99999999999", "slots must be"},
    {"a:2:3", "needs brackets"},
    {"-a:1", "bad host name"},
    {"a:1 2", "slots must be"},
    /* what inet_pton does not read is no IPv6 address */
    {"[::::]:2", "bad host name '::::'"},
    {"[:::::::::]:2", "bad host name"},
    {"[fe80::1%]:2", "bad host name"},
    {"[fe80::1%eth 0]:2", "bad host name"},
    /* a host given again must not change who logs in, or how */
    {"bob@a,alice@a", "entry 2: host 'a' given again with another user"},
};

START_TEST(bad_specs)
{
    int r = cfg_hostspec_parse(bad[_i].spec, &list, &list_err);
    ck_assert_int_eq(r, CFG_EINVAL);
    ck_assert_msg(strstr(list_err.msg, bad[_i].needle) != NULL,
                  "spec '%s': message '%s' lacks '%s'", bad[_i].spec,
                  list_err.msg, bad[_i].needle);
}
END_TEST

START_TEST(error_without_buffer)
{
    ck_assert_int_eq(cfg_hostspec_parse("a:x", &list, NULL), CFG_EINVAL);
    ck_assert_str_eq(cfg_strerror(CFG_EINVAL), "invalid input");
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("hostspec");
    TCase *tc = tcase_create("parse");

    hostlist_fixture_add(tc);
    ADD(tc, plain_list);
    ADD(tc, no_slots_means_one);
    ADD(tc, spaces_around_commas);
    ADD(tc, ipv4_ipv6_and_names);
    ADD(tc, ipv6_zone_by_name_or_number);
    ADD(tc, user_at_host);
    ADD(tc, repeated_host_adds_slots);
    tcase_add_loop_test(tc, bad_specs, 0, sizeof(bad) / sizeof(bad[0]));
    ADD(tc, error_without_buffer);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
