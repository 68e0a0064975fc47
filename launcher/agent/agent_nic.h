/* The agent's part of the NIC choice (ARCHITECTURE.md, "NIC choice"): tell
 * hvdd this host's interfaces, answer the previous host's probes, probe
 * the next host's addresses, and get hvdd's decision. */
#ifndef HVD_AGENT_NIC_H
#define HVD_AGENT_NIC_H

#include <stddef.h>

#include "agent_brief.h"
#include "hvdd_client.h"

typedef struct agent_net {
    char iface[64];       /* this host's interface on the chosen network */
    char addr[64];        /* its address */
    char master_addr[64]; /* rank 0's host on that network */
    int master_port;      /* free on rank 0's host */
} agent_net;

/* Returns 0, or -1 with the reason (hvdd's, when it could not choose) in
 * err. Bounded by the job's start timeout. */
int agent_nic_choose(hvdd_client *c, const hvdrun_brief *j, agent_net *out,
                     char *err, size_t size);

#endif
