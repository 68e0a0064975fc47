/* The per-host agents' part of the rendezvous: each agent reports its
 * host's interfaces, probes the next host around the ring, and reports
 * what answered; with every report in, hvdd chooses the network (nic.h).
 * Needs a plan (hvdd --hosts). Not thread-safe: the server serialises. */
#ifndef HVDD_AGENTS_H
#define HVDD_AGENTS_H

#include "nic.h"

typedef struct agent_info {
    int registered;
    int reported; /* its probe results are in */
    int probe_port;
    nic_host nic;     /* id and interfaces */
    double last_seen; /* its registration or last heartbeat */
    int finished;     /* its workers are done: no more heartbeats */
    int late;         /* registered after the network was chosen */
    char error[256];  /* late: why it cannot use the job's network */
} agent_info;

typedef struct agents {
    int nhosts;
    agent_info *hosts; /* the plan's hosts, in order */
    nic_probe *probes;
    int nprobes, cap;
    int decided; /* 0 pending, 1 chosen, -1 no common network */
    char network[80];
    nic_pick *picks; /* per host, once decided */
    char error[4096];
    char wanted[256]; /* --network-interface, comma-separated, or "" */
} agents;

/* nhosts from the plan; one host is decided at once (loopback). */
int hvdd_agents_init(agents *a, int nhosts, const char *wanted);
void hvdd_agents_release(agents *a);

/* Records host h's agent. Returns 0, or -1 with err (bad or repeated). */
int hvdd_agents_register(agents *a, int h, const char *name, const char *id,
                         int probe_port, const nic_addr *addrs, int naddrs,
                         char *err, size_t errlen);
int hvdd_agents_all_registered(const agents *a);
/* Elastic growth, once the network is chosen: one more host (its index,
 * or -1 out of memory), and a host whose agent will register again (a
 * host that left and comes back). A late agent does not probe: it gets
 * its address on the chosen network, or an error naming why not. */
int hvdd_agents_add(agents *a);
void hvdd_agents_forget(agents *a, int h);
/* 1 when a registered agent reported addr as one of its host's. */
int hvdd_agents_has_addr(const agents *a, const char *addr);

/* Host h's probe results: addr -> the id that answered ("" for none).
 * Decides once every host has reported. Returns 0 or -1 with err. */
int hvdd_agents_report(agents *a, int h, const nic_probe *results, int n,
                       char *err, size_t errlen);

#endif
