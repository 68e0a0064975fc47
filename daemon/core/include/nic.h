/* Choosing the network every host of a job uses (ARCHITECTURE.md, "NIC
 * choice"). Pure logic: the agents' interface lists and the results of
 * their ring probes go in, one interface per host comes out. */
#ifndef HVDD_NIC_H
#define HVDD_NIC_H

#include <stddef.h>

#define NIC_MAX_ADDRS 32

typedef struct nic_addr {
    char iface[32]; /* the interface's name on that host */
    char addr[64];  /* numeric IPv4 or IPv6 */
    int prefix;     /* network prefix length */
} nic_addr;

typedef struct nic_host {
    char id[64];   /* the agent's host id (answers probes with it) */
    char name[64]; /* the host's name in the plan, for messages */
    nic_addr addrs[NIC_MAX_ADDRS];
    int naddrs;
} nic_host;

/* Host `from` connected to `addr` (an address host from+1 reported) and
 * got back `answer_id`: "" when nothing answered. */
typedef struct nic_probe {
    int from;
    char addr[64];
    char answer_id[64];
} nic_probe;

/* The decision for one host: its interface (names may differ per host)
 * and its address on the chosen network. */
typedef struct nic_pick {
    char iface[32];
    char addr[64];
} nic_pick;

/* Picks the network. `wanted` (NULL-terminated, may be NULL) holds
 * --network-interface entries: interface names or CIDRs, in order of
 * preference. `control_network` (may be NULL) is the CIDR the control
 * connection used: the tie-break after `wanted`. One host: loopback.
 * On success returns 0, writes the network ("10.1.0.0/16", or "loopback")
 * to network and one pick per host to picks (nhosts entries). Else -1
 * with a message in err that lists every host's candidates and what their
 * probes found. */
int hvdd_nic_choose(const nic_host *hosts, int nhosts, const nic_probe *probes,
                    int nprobes, const char *const *wanted,
                    const char *control_network, char network[80],
                    nic_pick *picks, char *err, size_t errlen);

/* 1 when addr is a candidate: not loopback, not link-local. */
int hvdd_nic_candidate(const char *addr);

/* Host h's interface and address in network (as hvdd_nic_choose wrote
 * it): 0, or -1 when h has none there. */
int hvdd_nic_pick_in(const nic_host *h, const char *network, nic_pick *pick);

#endif
