#include <string.h>

#include "hvd_addr.h"
#include "nic.h"
#include "unit.h"

/* A made-up cluster: each host's interfaces, and what each probe around
 * the ring got back. */
static nic_host hosts[4];
static nic_probe probes[64];
static int nprobes;
static nic_pick picks[4];
static char network[80], err[4096];

static void
add_addr(int h, const char *iface, const char *addr, int prefix)
{
    nic_addr *a = &hosts[h].addrs[hosts[h].naddrs++];
    snprintf(a->iface, sizeof(a->iface), "%s", iface);
    snprintf(a->addr, sizeof(a->addr), "%s", addr);
    a->prefix = prefix;
}

static void
probe(int from, const char *addr, const char *answer)
{
    nic_probe *p = &probes[nprobes++];
    p->from = from;
    snprintf(p->addr, sizeof(p->addr), "%.63s", addr);
    snprintf(p->answer_id, sizeof(p->answer_id), "%.63s", answer);
}

static void
setup(void)
{
    memset(hosts, 0, sizeof(hosts));
    memset(picks, 0, sizeof(picks));
    nprobes = 0;
    err[0] = '\0';
    for (int h = 0; h < 4; h++) {
        snprintf(hosts[h].id, sizeof(hosts[h].id), "host%d", h);
        /* decoys every real host has */
        add_addr(h, "lo", "127.0.0.1", 8);
        add_addr(h, "docker0", "172.17.0.1", 16);
        add_addr(h, "eth0", h == 0 ? "fe80::1" : "fe80::2", 64);
    }
}

/* The usual cluster: a shared 10.1.0.0/16 on eth0 (named ens5 on host 1),
 * docker0 everywhere answering for itself, a private network on host 0. */
static void
cluster(int n)
{
    for (int h = 0; h < n; h++) {
        char a[32];
        snprintf(a, sizeof(a), "10.1.0.%d", h + 1);
        add_addr(h, h == 1 ? "ens5" : "eth0", a, 16);
    }
    add_addr(0, "eth1", "192.168.7.1", 24); /* not shared */
    for (int h = 0; h < n; h++) {
        char a[32];
        snprintf(a, sizeof(a), "10.1.0.%d", (h + 1) % n + 1);
        probe(h, a, hosts[(h + 1) % n].id);
        probe(h, "172.17.0.1", hosts[h].id); /* docker0 reaches itself */
    }
}

START_TEST(one_host_uses_loopback)
{
    ck_assert_int_eq(hvdd_nic_choose(hosts, 1, NULL, 0, NULL, NULL, network,
                                     picks, err, sizeof(err)),
                     0);
    ck_assert_str_eq(network, "loopback");
    ck_assert_str_eq(picks[0].iface, "lo");
}
END_TEST

START_TEST(picks_the_shared_network_with_per_host_names)
{
    cluster(3);
    ck_assert_int_eq(hvdd_nic_choose(hosts, 3, probes, nprobes, NULL, NULL,
                                     network, picks, err, sizeof(err)),
                     0);
    ck_assert_str_eq(network, "10.1.0.0/16");
    ck_assert_str_eq(picks[0].iface, "eth0");
    ck_assert_str_eq(picks[1].iface, "ens5");
    ck_assert_str_eq(picks[2].iface, "eth0");
    ck_assert_str_eq(picks[1].addr, "10.1.0.2");
}
END_TEST

START_TEST(docker0_answering_for_itself_is_rejected)
{
    /* only docker0 is shared: every probe is answered by the prober */
    for (int h = 0; h < 2; h++)
        probe(h, "172.17.0.1", hosts[h].id);
    ck_assert_int_eq(hvdd_nic_choose(hosts, 2, probes, nprobes, NULL, NULL,
                                     network, picks, err, sizeof(err)),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "docker0 172.17.0.1/16: answered by "
                                      "the wrong host for 'host1'"));
}
END_TEST

START_TEST(loopback_and_link_local_never_candidates)
{
    ck_assert(!hvdd_nic_candidate("127.0.0.1"));
    ck_assert(!hvdd_nic_candidate("::1"));
    ck_assert(!hvdd_nic_candidate("fe80::1"));
    ck_assert(!hvdd_nic_candidate("169.254.3.4"));
    ck_assert(hvdd_nic_candidate("10.0.0.1"));
    ck_assert(hvdd_nic_candidate("2001:db8::1"));
    ck_assert(!hvdd_nic_candidate("not-an-address"));
}
END_TEST

START_TEST(unanswered_probe_rejects_network)
{
    add_addr(0, "eth0", "10.1.0.1", 16);
    add_addr(1, "eth0", "10.1.0.2", 16);
    probe(0, "10.1.0.2", "host1");
    probe(1, "10.1.0.1", ""); /* a firewall */
    ck_assert_int_eq(hvdd_nic_choose(hosts, 2, probes, nprobes, NULL, NULL,
                                     network, picks, err, sizeof(err)),
                     -1);
    ck_assert_ptr_nonnull(
        strstr(err, "host 'host1' [docker0 172.17.0.1/16: not probed; eth0 "
                    "10.1.0.2/16: no answer from 'host0'; ]"));
}
END_TEST

START_TEST(no_common_network_lists_every_candidate)
{
    add_addr(0, "eth0", "10.1.0.1", 24);
    add_addr(1, "eth0", "10.2.0.1", 24);
    ck_assert_int_eq(hvdd_nic_choose(hosts, 2, probes, nprobes, NULL, NULL,
                                     network, picks, err, sizeof(err)),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "host 'host0' ["));
    ck_assert_ptr_nonnull(
        strstr(err, "eth0 10.1.0.1/24: next host has no address there"));
    ck_assert_ptr_nonnull(
        strstr(err, "eth0 10.2.0.1/24: next host has no address there"));
    ck_assert_ptr_null(strstr(err, "127.0.0.1"));
}
END_TEST

/* An explanation longer than the caller's buffer is cut there: once
 * written past the end (a size_t that wrapped). */
START_TEST(long_explanation_stays_in_its_buffer)
{
    struct {
        char err[200];
        char guard[256];
    } out;

    memset(&out, 'G', sizeof(out));
    for (unsigned k = 0; k < 12; k++) {
        char name[32], a[64];
        snprintf(name, sizeof(name), "interface-with-a-long-name%02u", k);
        snprintf(a, sizeof(a), "2001:db8:0:%u::1", k);
        add_addr(0, name, a, 64);
    }
    add_addr(1, "eth0", "2001:db8:0:0::2", 64);
    probe(0, "2001:db8:0:0::2", "someone-else");
    ck_assert_int_eq(hvdd_nic_choose(hosts, 2, probes, nprobes, NULL, NULL,
                                     network, picks, out.err, sizeof(out.err)),
                     -1);
    ck_assert_uint_lt(strlen(out.err), sizeof(out.err));
    for (size_t i = 0; i < sizeof(out.guard); i++)
        ck_assert_int_eq(out.guard[i], 'G');
}
END_TEST

/* Two good networks: --network-interface decides, by name or CIDR, then
 * the control connection's network, then the name. */
static void
two_networks(void)
{
    for (int h = 0; h < 2; h++) {
        char a[32], b[32];
        snprintf(a, sizeof(a), "10.1.0.%d", h + 1);
        snprintf(b, sizeof(b), "10.9.0.%d", h + 1);
        add_addr(h, "eth0", a, 16);
        add_addr(h, "ib0", b, 16);
    }
    for (int h = 0; h < 2; h++) {
        char a[32], b[32];
        snprintf(a, sizeof(a), "10.1.0.%d", (h + 1) % 2 + 1);
        snprintf(b, sizeof(b), "10.9.0.%d", (h + 1) % 2 + 1);
        probe(h, a, hosts[(h + 1) % 2].id);
        probe(h, b, hosts[(h + 1) % 2].id);
    }
}

START_TEST(tie_break_order)
{
    const char *by_name[] = {"ib0", NULL};
    const char *by_cidr[] = {"10.9.0.0/16", NULL};
    const char *missing[] = {"eth7", NULL};

    two_networks();
    ck_assert_int_eq(hvdd_nic_choose(hosts, 2, probes, nprobes, NULL, NULL,
                                     network, picks, err, sizeof(err)),
                     0);
    ck_assert_str_eq(network, "10.1.0.0/16"); /* by name: deterministic */
    ck_assert_int_eq(hvdd_nic_choose(hosts, 2, probes, nprobes, NULL,
                                     "10.9.0.0/16", network, picks, err,
                                     sizeof(err)),
                     0);
    ck_assert_str_eq(network, "10.9.0.0/16"); /* control network */
    ck_assert_int_eq(hvdd_nic_choose(hosts, 2, probes, nprobes, by_name,
                                     "10.1.0.0/16", network, picks, err,
                                     sizeof(err)),
                     0);
    ck_assert_str_eq(picks[1].iface, "ib0"); /* --network-interface first */
    ck_assert_int_eq(hvdd_nic_choose(hosts, 2, probes, nprobes, by_cidr, NULL,
                                     network, picks, err, sizeof(err)),
                     0);
    ck_assert_str_eq(picks[0].addr, "10.9.0.1");
    ck_assert_int_eq(hvdd_nic_choose(hosts, 2, probes, nprobes, missing, NULL,
                                     network, picks, err, sizeof(err)),
                     -1);
}
END_TEST

START_TEST(network_of_address)
{
    char net[80];

    ck_assert_int_eq(hvd_addr_network("10.1.2.3", 16, net, sizeof(net)), 0);
    ck_assert_str_eq(net, "10.1.0.0/16");
    ck_assert_int_eq(hvd_addr_network("2001:db8::5", 64, net, sizeof(net)), 0);
    ck_assert_str_eq(net, "2001:db8::/64");
    ck_assert_int_eq(hvd_addr_network("10.1.2.3", 33, net, sizeof(net)), -1);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("nic");
    TCase *tc = tcase_create("choose");

    tcase_add_checked_fixture(tc, setup, NULL);
    ADD(tc, one_host_uses_loopback);
    ADD(tc, picks_the_shared_network_with_per_host_names);
    ADD(tc, docker0_answering_for_itself_is_rejected);
    ADD(tc, loopback_and_link_local_never_candidates);
    ADD(tc, unanswered_probe_rejects_network);
    ADD(tc, long_explanation_stays_in_its_buffer);
    ADD(tc, no_common_network_lists_every_candidate);
    ADD(tc, tie_break_order);
    ADD(tc, network_of_address);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
