#include "agents.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
hvdd_agents_init(agents *a, int nhosts, const char *wanted)
{
    memset(a, 0, sizeof(*a));
    a->nhosts = nhosts;
    snprintf(a->wanted, sizeof(a->wanted), "%s", wanted ? wanted : "");
    a->hosts = calloc(nhosts > 0 ? nhosts : 1, sizeof(*a->hosts));
    a->picks = calloc(nhosts > 0 ? nhosts : 1, sizeof(*a->picks));
    if (a->hosts == NULL || a->picks == NULL)
        return -1;
    if (nhosts == 1) { /* loopback, without probes */
        nic_host one = {.naddrs = 0};
        a->decided = hvdd_nic_choose(&one, 1, NULL, 0, NULL, NULL, a->network,
                                     a->picks, a->error, sizeof(a->error)) == 0
                         ? 1
                         : -1;
    }
    return 0;
}

void
hvdd_agents_release(agents *a)
{
    free(a->hosts);
    free(a->picks);
    free(a->probes);
    memset(a, 0, sizeof(*a));
}

/* An agent that registers after the choice: its address on the chosen
 * network, if it has one (without probes: the others' responders are
 * gone; the workers' own connections are the test). */
static void
pick_late(agents *a, int h)
{
    agent_info *ai = &a->hosts[h];

    /* the one host of a one-host plan, whose loopback was chosen at the
     * start: its agent runs it from afar (an allocation of one node, -H
     * of one other host), and is not late; each job of one node failed */
    if (strcmp(a->network, "loopback") == 0 && h == 0) {
        /* (again: a host forgotten and added back lost it) */
        snprintf(a->picks[0].iface, sizeof(a->picks[0].iface), "lo");
        snprintf(a->picks[0].addr, sizeof(a->picks[0].addr), "127.0.0.1");
        return;
    }
    ai->late = 1;
    if (strcmp(a->network, "loopback") == 0)
        snprintf(ai->error, sizeof(ai->error),
                 "the job started on one host and its workers use loopback: "
                 "no other host can join it");
    else if (hvdd_nic_pick_in(&ai->nic, a->network, &a->picks[h]) != 0)
        snprintf(ai->error, sizeof(ai->error),
                 "host '%s' has no address on the job's network %s",
                 ai->nic.name, a->network);
}

int
hvdd_agents_register(agents *a, int h, const char *name, const char *id,
                     int probe_port, const nic_addr *addrs, int naddrs,
                     char *err, size_t errlen)
{
    agent_info *ai;

    if (h < 0 || h >= a->nhosts) {
        snprintf(err, errlen, "no such host in the plan");
        return -1;
    }
    ai = &a->hosts[h];
    if (ai->registered) {
        snprintf(err, errlen, "this host's agent registered already");
        return -1;
    }
    if (naddrs > NIC_MAX_ADDRS || id[0] == '\0' || strlen(id) >= 64) {
        snprintf(err, errlen,
                 "bad agent report (id, or more than %d "
                 "addresses)",
                 NIC_MAX_ADDRS);
        return -1;
    }
    snprintf(ai->nic.id, sizeof(ai->nic.id), "%s", id);
    snprintf(ai->nic.name, sizeof(ai->nic.name), "%.63s", name);
    memcpy(ai->nic.addrs, addrs, sizeof(*addrs) * (size_t)naddrs);
    ai->nic.naddrs = naddrs;
    ai->probe_port = probe_port;
    ai->registered = 1;
    if (a->decided == 1)
        pick_late(a, h);
    return 0;
}

int
hvdd_agents_add(agents *a)
{
    agent_info *hosts =
        realloc(a->hosts, sizeof(*hosts) * ((size_t)a->nhosts + 1));
    nic_pick *picks;

    if (hosts == NULL)
        return -1;
    a->hosts = hosts;
    if ((picks = realloc(a->picks, sizeof(*picks) * ((size_t)a->nhosts + 1))) ==
        NULL)
        return -1;
    a->picks = picks;
    memset(&a->hosts[a->nhosts], 0, sizeof(*hosts));
    memset(&a->picks[a->nhosts], 0, sizeof(*picks));
    return a->nhosts++;
}

void
hvdd_agents_forget(agents *a, int h)
{
    if (h >= 0 && h < a->nhosts) {
        memset(&a->hosts[h], 0, sizeof(a->hosts[h]));
        memset(&a->picks[h], 0, sizeof(a->picks[h]));
    }
}

int
hvdd_agents_all_registered(const agents *a)
{
    for (int h = 0; h < a->nhosts; h++)
        if (!a->hosts[h].registered)
            return 0;
    return 1;
}

/* The --network-interface entries as a NULL-terminated list in buf. */
static const char **
wanted_list(agents *a, char *buf, size_t size, const char **list, int max)
{
    int n = 0;
    char *save = NULL;

    if (a->wanted[0] == '\0')
        return NULL;
    snprintf(buf, size, "%s", a->wanted);
    for (char *e = strtok_r(buf, ",", &save); e && n < max - 1;
         e = strtok_r(NULL, ",", &save))
        list[n++] = e;
    list[n] = NULL;
    return list;
}

static void
decide(agents *a)
{
    nic_host *hosts = calloc((size_t)a->nhosts, sizeof(*hosts));
    const char *list[16], **wanted;
    char buf[256];

    if (hosts == NULL) {
        snprintf(a->error, sizeof(a->error), "out of memory");
        a->decided = -1;
        return;
    }
    for (int h = 0; h < a->nhosts; h++)
        hosts[h] = a->hosts[h].nic;
    wanted = wanted_list(a, buf, sizeof(buf), list, 16);
    a->decided =
        hvdd_nic_choose(hosts, a->nhosts, a->probes, a->nprobes, wanted, NULL,
                        a->network, a->picks, a->error, sizeof(a->error)) == 0
            ? 1
            : -1;
    free(hosts);
}

int
hvdd_agents_report(agents *a, int h, const nic_probe *results, int n, char *err,
                   size_t errlen)
{
    if (h < 0 || h >= a->nhosts || !a->hosts[h].registered ||
        a->hosts[h].reported) {
        snprintf(err, errlen, "unexpected probe report");
        return -1;
    }
    if (a->nprobes + n > a->cap) {
        int cap = (a->nprobes + n) * 2;
        nic_probe *p = realloc(a->probes, sizeof(*p) * (size_t)cap);
        if (p == NULL) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        a->probes = p;
        a->cap = cap;
    }
    if (a->hosts[h].late) { /* the choice is made: nothing to add */
        a->hosts[h].reported = 1;
        return 0;
    }
    for (int i = 0; i < n; i++) {
        a->probes[a->nprobes] = results[i];
        a->probes[a->nprobes++].from = h;
    }
    a->hosts[h].reported = 1;
    for (int k = 0; k < a->nhosts; k++)
        if (!a->hosts[k].reported)
            return 0;
    decide(a);
    return 0;
}

int
hvdd_agents_has_addr(const agents *a, const char *addr)
{
    for (int h = 0; h < a->nhosts; h++)
        for (int i = 0; a->hosts[h].registered && i < a->hosts[h].nic.naddrs;
             i++)
            if (strcmp(a->hosts[h].nic.addrs[i].addr, addr) == 0)
                return 1;
    return 0;
}
