/* /v1/agent...: what the per-host agents tell hvdd so that it can choose
 * the network (ARCHITECTURE.md, "NIC choice"):
 *   POST /v1/agent           {"host","id","probe_port","interfaces":[...]}
 *   POST /v1/agent/targets   {"host"}  -> the next host's addresses
 *   POST /v1/agent/probes    {"host","results":[{"addr","answer"}]}
 *   POST /v1/agent/decision  {"host"}  -> this host's interface, or 409
 *   POST /v1/agent/heartbeat {"host"}  while its workers run
 *   POST /v1/agent/exit      {"host"}  its workers are done
 * targets and decision are held until every agent has got that far. An
 * agent of a host that joins later (POST /v1/host) gets no targets and
 * its address on the network chosen before. */
#include <stdio.h>
#include <string.h>

#include "routes.h"

static int
host_of(hvdd_state *st, json_t *b, hvdd_response *rs)
{
    const char *name = json_string_value(json_object_get(b, "host"));
    int h = name ? hvdd_roster_host_index(&st->roster, name) : -1;

    if (h < 0)
        hvdd_reply_text(rs, 409, "\"host\" '%s' is not a host of the plan",
                        name ? name : "");
    return h;
}

static int
parse_interfaces(json_t *list, nic_addr *out, int max)
{
    size_t i;
    json_t *v;
    int n = 0;

    if (!json_is_array(list) || json_array_size(list) > (size_t)max)
        return -1;
    json_array_foreach(list, i, v)
    {
        const char *name = json_string_value(json_object_get(v, "name"));
        const char *addr = json_string_value(json_object_get(v, "addr"));
        json_t *prefix = json_object_get(v, "prefix");
        if (!name || !addr || !json_is_integer(prefix) || strlen(name) > 31 ||
            strlen(addr) > 63)
            return -1;
        snprintf(out[n].iface, sizeof(out[n].iface), "%s", name);
        snprintf(out[n].addr, sizeof(out[n].addr), "%s", addr);
        out[n++].prefix = (int)json_integer_value(prefix);
    }
    return n;
}

static void
do_agent(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs, json_t *b)
{
    nic_addr addrs[NIC_MAX_ADDRS];
    const char *id = json_string_value(json_object_get(b, "id"));
    json_t *port = json_object_get(b, "probe_port");
    int h = host_of(st, b, rs), n;
    char err[256];

    if (h < 0)
        return;
    n = parse_interfaces(json_object_get(b, "interfaces"), addrs,
                         NIC_MAX_ADDRS);
    if (id == NULL || !json_is_integer(port) || n < 0) {
        hvdd_reply_text(rs, 400,
                        "agent needs \"id\", \"probe_port\" and up to %d "
                        "\"interfaces\" {name, addr, prefix}",
                        NIC_MAX_ADDRS);
        return;
    }
    if (hvdd_agents_register(
            &st->roster.agents, h, st->roster.hosts.hosts[h].name, id,
            (int)json_integer_value(port), addrs, n, err, sizeof(err)) != 0) {
        hvdd_reply_text(rs, 409, "%s", err);
        return;
    }
    st->roster.agents.hosts[h].last_seen = rq->now;
    snprintf(rs->notify, sizeof(rs->notify), "agents");
    hvdd_reply_json(rs, 200, json_pack("{si}", "index", h));
}

/* Heartbeats and the end of an agent's work: hvdd declares an agent dead
 * (and stops the job) only between its registration and its exit. */
static void
do_alive(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs, json_t *b,
         int finished)
{
    int h = host_of(st, b, rs);
    agent_info *a;

    if (h < 0)
        return;
    a = &st->roster.agents.hosts[h];
    if (!a->registered) {
        hvdd_reply_text(rs, 409, "the agent of '%s' has not registered",
                        st->roster.hosts.hosts[h].name);
        return;
    }
    a->last_seen = rq->now;
    a->finished |= finished;
    hvdd_reply_text(rs, 200, "ok");
}

static void
do_targets(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs, json_t *b)
{
    int h = host_of(st, b, rs), next;
    const agent_info *peer;
    json_t *addrs;

    if (h < 0)
        return;
    if (st->roster.agents.decided == 1) { /* a late agent: no probes */
        hvdd_reply_json(rs, 200,
                        json_pack("{ss ss si s[]}", "peer", "", "id", "",
                                  "port", 0, "addrs"));
        return;
    }
    if (!hvdd_agents_all_registered(&st->roster.agents)) {
        if (rq->deadline_passed)
            hvdd_reply_text(rs, 408,
                            "not every host's agent registered in time");
        else
            hvdd_reply_wait(rs, "agents", HVDD_MAX_WAIT_MS);
        return;
    }
    next = (h + 1) % st->roster.agents.nhosts;
    peer = &st->roster.agents.hosts[next];
    addrs = json_array();
    for (int i = 0; addrs && i < peer->nic.naddrs; i++)
        if (hvdd_nic_candidate(peer->nic.addrs[i].addr))
            json_array_append_new(addrs, json_string(peer->nic.addrs[i].addr));
    hvdd_reply_json(rs, 200,
                    json_pack("{ss ss si so*}", "peer",
                              st->roster.hosts.hosts[next].name, "id",
                              peer->nic.id, "port", peer->probe_port, "addrs",
                              addrs));
}

static void
do_probes(hvdd_state *st, hvdd_response *rs, json_t *b)
{
    nic_probe results[NIC_MAX_ADDRS];
    json_t *list = json_object_get(b, "results"), *v;
    int h = host_of(st, b, rs), n = 0;
    char err[256];
    size_t i;

    if (h < 0)
        return;
    if (!json_is_array(list) || json_array_size(list) > NIC_MAX_ADDRS) {
        hvdd_reply_text(rs, 400, "probes need \"results\": [{addr, answer}]");
        return;
    }
    json_array_foreach(list, i, v)
    {
        const char *addr = json_string_value(json_object_get(v, "addr"));
        const char *answer = json_string_value(json_object_get(v, "answer"));
        if (!addr || !answer || strlen(addr) > 63 || strlen(answer) > 63) {
            hvdd_reply_text(rs, 400,
                            "a probe result needs \"addr\" and "
                            "\"answer\" (\"\" when nothing answered)");
            return;
        }
        snprintf(results[n].addr, sizeof(results[n].addr), "%s", addr);
        snprintf(results[n++].answer_id, sizeof(results[0].answer_id), "%s",
                 answer);
    }
    if (hvdd_agents_report(&st->roster.agents, h, results, n, err,
                           sizeof(err))) {
        hvdd_reply_text(rs, 409, "%s", err);
        return;
    }
    if (st->roster.agents.decided != 0)
        snprintf(rs->notify, sizeof(rs->notify), "nic");
    hvdd_reply_text(rs, 200, "ok");
}

static void
do_decision(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs,
            json_t *b)
{
    const agents *a = &st->roster.agents;
    int h = host_of(st, b, rs);

    if (h < 0)
        return;
    if (a->decided == 0) {
        if (rq->deadline_passed)
            hvdd_reply_text(rs, 408, "not every host's probes arrived in time");
        else
            hvdd_reply_wait(rs, "nic", HVDD_MAX_WAIT_MS);
    } else if (a->decided < 0) {
        hvdd_reply_text(rs, 409, "%s", a->error);
    } else if (a->hosts[h].error[0]) { /* late, and off the network */
        hvdd_reply_text(rs, 409, "%s", a->hosts[h].error);
    } else {
        hvdd_reply_json(rs, 200,
                        json_pack("{ss ss ss ss}", "network", a->network,
                                  "iface", hvdd_roster_iface(&st->roster, h),
                                  "addr", a->picks[h].addr, "master_addr",
                                  hvdd_roster_master_addr(&st->roster)));
    }
}

/* Returns 1 when `what` was an agent route (and answered). */
int
hvdd_agent_route(hvdd_state *st, const char *what, const hvdd_request *rq,
                 hvdd_response *rs, json_t *b)
{
    if (strcmp(what, "agent") == 0)
        do_agent(st, rq, rs, b);
    else if (strcmp(what, "agent/heartbeat") == 0)
        do_alive(st, rq, rs, b, 0);
    else if (strcmp(what, "agent/exit") == 0)
        do_alive(st, rq, rs, b, 1);
    else if (strcmp(what, "agent/targets") == 0)
        do_targets(st, rq, rs, b);
    else if (strcmp(what, "agent/probes") == 0)
        do_probes(st, rs, b);
    else if (strcmp(what, "agent/decision") == 0)
        do_decision(st, rq, rs, b);
    else
        return 0;
    return 1;
}
