#include "nic.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hvd_addr.h"

int
hvdd_nic_candidate(const char *addr)
{
    unsigned char a[16];
    int v4;

    if (hvd_addr_bytes(addr, a, &v4) != 0)
        return 0;
    if (v4)
        return a[12] != 127 && !(a[12] == 169 && a[13] == 254);
    if (memcmp(a, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16) == 0)
        return 0;
    return !(a[0] == 0xfe && (a[1] & 0xc0) == 0x80);
}

/* The address host h has in `network`, or -1. */
static int
addr_in(const nic_host *h, const char *network)
{
    char net[80];

    for (int i = 0; i < h->naddrs; i++)
        if (hvdd_nic_candidate(h->addrs[i].addr) &&
            hvd_addr_network(h->addrs[i].addr, h->addrs[i].prefix, net,
                             sizeof(net)) == 0 &&
            strcmp(net, network) == 0)
            return i;
    return -1;
}

int
hvdd_nic_pick_in(const nic_host *h, const char *network, nic_pick *pick)
{
    int i = addr_in(h, network);

    if (i < 0)
        return -1;
    snprintf(pick->iface, sizeof(pick->iface), "%s", h->addrs[i].iface);
    snprintf(pick->addr, sizeof(pick->addr), "%s", h->addrs[i].addr);
    return 0;
}

/* What host `from` got back when it probed addr; NULL: never probed. */
static const char *
probe_answer(const nic_probe *p, int n, int from, const char *addr)
{
    for (int i = 0; i < n; i++)
        if (p[i].from == from && strcmp(p[i].addr, addr) == 0)
            return p[i].answer_id;
    return NULL;
}

/* 1 when every host has an address in network and every probe around the
 * ring reached the right host there. */
static int
usable(const nic_host *h, int n, const nic_probe *p, int np,
       const char *network)
{
    for (int i = 0; i < n; i++) {
        const nic_host *next = &h[(i + 1) % n];
        int a = addr_in(&h[i], network), b = addr_in(next, network);
        const char *got;
        if (a < 0 || b < 0)
            return 0;
        got = probe_answer(p, np, i, next->addrs[b].addr);
        if (got == NULL || strcmp(got, next->id) != 0)
            return 0;
    }
    return 1;
}

/* Which --network-interface entry the network satisfies on every host:
 * the worst (largest) index over hosts; -1 when some host matches none.
 * Without entries every network scores 0. */
static int
wanted_score(const nic_host *h, int n, const char *network,
             const char *const *wanted)
{
    int worst = 0;

    if (wanted == NULL || wanted[0] == NULL)
        return 0;
    for (int i = 0; i < n; i++) {
        const nic_addr *a = &h[i].addrs[addr_in(&h[i], network)];
        int k = 0;
        for (; wanted[k]; k++)
            if (strchr(wanted[k], '/') ? hvd_addr_in_cidr(a->addr, wanted[k])
                                       : strcmp(a->iface, wanted[k]) == 0)
                break;
        if (wanted[k] == NULL)
            return -1;
        if (k > worst)
            worst = k;
    }
    return worst;
}

/* Lower is better: wanted order, then the control network, then name. */
static int
better(int score, int control, const char *net, int best_score,
       int best_control, const char *best)
{
    if (best == NULL)
        return 1;
    if (score != best_score)
        return score < best_score;
    if (control != best_control)
        return control > best_control;
    return strcmp(net, best) < 0;
}

/* Appends to err (size bytes, *used of them taken); a message that does
 * not fit is cut, and *used stays within the buffer. */
static void __attribute__((format(printf, 4, 5)))
append(char *err, size_t size, size_t *used, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*used + 1 >= size)
        return;
    va_start(ap, fmt);
    n = vsnprintf(err + *used, size - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = *used + (size_t)n < size ? *used + (size_t)n : size - 1;
}

static void
explain(const nic_host *h, int n, const nic_probe *p, int np, char *err,
        size_t size)
{
    size_t used = 0;

    err[0] = '\0';
    append(err, size, &used,
           "no network reaches every one of the %d hosts with the right host "
           "answering:",
           n);
    for (int i = 0; i < n; i++) {
        const nic_host *next = &h[(i + 1) % n];
        const char *next_name = next->name[0] ? next->name : next->id;
        append(err, size, &used, " host '%s' [",
               h[i].name[0] ? h[i].name : h[i].id);
        for (int k = 0; k < h[i].naddrs; k++) {
            const nic_addr *a = &h[i].addrs[k];
            char net[80];
            const char *got = NULL;
            int b = -1;
            if (!hvdd_nic_candidate(a->addr) ||
                hvd_addr_network(a->addr, a->prefix, net, sizeof(net)) != 0)
                continue;
            if ((b = addr_in(next, net)) >= 0)
                got = probe_answer(p, np, i, next->addrs[b].addr);
            append(err, size, &used, "%s %s/%d: %s%s%s%s", a->iface, a->addr,
                   a->prefix,
                   b < 0                   ? "next host has no address there"
                   : got == NULL           ? "not probed"
                   : got[0] == 0           ? "no answer from "
                   : strcmp(got, next->id) ? "answered by the wrong host for "
                                           : "ok to ",
                   b < 0 || got == NULL ? "" : "'",
                   b < 0 || got == NULL ? "" : next_name,
                   b < 0 || got == NULL ? "; " : "'; ");
        }
        append(err, size, &used, "]");
    }
}

int
hvdd_nic_choose(const nic_host *hosts, int nhosts, const nic_probe *probes,
                int nprobes, const char *const *wanted,
                const char *control_network, char network[80], nic_pick *picks,
                char *err, size_t errlen)
{
    const char *best = NULL;
    char nets[NIC_MAX_ADDRS][80];
    int best_score = 0, best_control = 0;

    if (nhosts < 1) {
        snprintf(err, errlen, "no hosts to choose a network for");
        return -1;
    }
    if (nhosts == 1) { /* everything on one host: loopback */
        snprintf(network, 80, "loopback");
        snprintf(picks[0].iface, sizeof(picks[0].iface), "lo");
        snprintf(picks[0].addr, sizeof(picks[0].addr), "127.0.0.1");
        return 0;
    }
    for (int k = 0; k < hosts[0].naddrs; k++) {
        const nic_addr *a = &hosts[0].addrs[k];
        int score, control;
        if (!hvdd_nic_candidate(a->addr) ||
            hvd_addr_network(a->addr, a->prefix, nets[k], sizeof(nets[k])) !=
                0 ||
            !usable(hosts, nhosts, probes, nprobes, nets[k]) ||
            (score = wanted_score(hosts, nhosts, nets[k], wanted)) < 0)
            continue;
        control = control_network && strcmp(control_network, nets[k]) == 0;
        if (better(score, control, nets[k], best_score, best_control, best)) {
            best = nets[k];
            best_score = score;
            best_control = control;
        }
    }
    if (best == NULL) {
        explain(hosts, nhosts, probes, nprobes, err, errlen);
        return -1;
    }
    snprintf(network, 80, "%s", best);
    for (int i = 0; i < nhosts; i++) {
        const nic_addr *a = &hosts[i].addrs[addr_in(&hosts[i], best)];
        snprintf(picks[i].iface, sizeof(picks[i].iface), "%s", a->iface);
        snprintf(picks[i].addr, sizeof(picks[i].addr), "%s", a->addr);
    }
    return 0;
}
