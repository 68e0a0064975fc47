/* GET /v1/status: the job as hvdd sees it, as JSON. */
#include <jansson.h>
#include <stdlib.h>

#include "request.h"

static const char *
state_name(rank_state s)
{
    static const char *names[] = {"pending", "registered", "exited", "lost",
                                  "kept"};

    return names[s];
}

static json_t *
ranks_json(const hvdd_roster *j, double now)
{
    json_t *a = json_array();

    for (int r = 0; a && j->has_plan && r < j->size; r++) {
        const rank_info *ri = &j->ranks[r];
        json_t *o = json_pack("{si ss ss si}", "rank", r, "host",
                              j->hosts.hosts[j->plan.slots[r].host].name,
                              "state", state_name(ri->state), "pid", ri->pid);
        if (o && ri->state == RANK_EXITED)
            json_object_set_new(o, "exit_code", json_integer(ri->exit_code));
        if (o && ri->state == RANK_REGISTERED && j->heartbeat_timeout > 0)
            json_object_set_new(o,
                                "heartbeat_age", /* (or since it registered) */
                                json_real(now - ri->last_seen));
        json_array_append_new(a, o);
    }
    return a;
}

/* Workers that ended with a non-zero code, of every round. */
static json_t *
failures_json(const hvdd_roster *j)
{
    json_t *a = json_array();

    for (int i = 0; a && i < j->nfailures; i++) {
        const hvdd_failure *f = &j->failures[i];
        json_array_append_new(
            a, json_pack("{si si ss si si}", "round", f->round, "rank", f->rank,
                         "host", f->host, "pid", f->pid, "exit_code", f->code));
    }
    return a;
}

/* What a host's agent is doing, for the job's page. */
static const char *
agent_state(const hvdd_roster *j, int h, double now)
{
    const agent_info *a = &j->agents.hosts[h];

    if (j->agents.nhosts <= h || !a->registered)
        return j->plan.nhosts == 1 ? "this host" : "starting";
    if (a->finished)
        return "finished";
    if (j->heartbeat_timeout > 0 && now - a->last_seen > j->heartbeat_timeout)
        return "lost";
    return "running";
}

static json_t *
hosts_json(const hvdd_roster *j, double now)
{
    json_t *a = json_array();

    for (int h = 0; a && j->has_plan && h < j->job_hosts; h++) {
        int first = cfg_plan_first_rank(&j->plan, h);
        if (first < 0) /* none in this round */
            continue;
        json_array_append_new(
            a, json_pack("{ss si ss ss ss}", "name", j->hosts.hosts[h].name,
                         "ranks", j->plan.slots[first].local_size, "iface",
                         hvdd_roster_iface(j, h), "addr",
                         j->agents.decided == 1 && h < j->agents.nhosts
                             ? j->agents.picks[h].addr
                             : "",
                         "agent", agent_state(j, h, now)));
    }
    return a;
}

/* The agents' decision: the network, or what is pending, or why none. */
static void
add_network(const hvdd_roster *j, json_t *nic)
{
    const agents *a = &j->agents;

    json_object_set_new(nic, "decision",
                        json_string(a->decided > 0    ? "chosen"
                                    : a->decided == 0 ? "pending"
                                                      : "failed"));
    if (a->decided > 0)
        json_object_set_new(nic, "network", json_string(a->network));
    if (a->decided < 0)
        json_object_set_new(nic, "error", json_string(a->error));
}

static int
registered(const hvdd_roster *j)
{
    int n = 0;

    if (!j->has_plan)
        return j->narrivals;
    for (int r = 0; r < j->size; r++)
        n +=
            j->ranks[r].state != RANK_PENDING && j->ranks[r].state != RANK_KEPT;
    return n;
}

char *
hvdd_status_json(const hvdd_state *st, double now)
{
    const hvdd_roster *j = &st->roster;
    json_t *o =
        json_pack("{si si si sb so* so* s{ss ss si}}", "size", j->size, "round",
                  j->round, "registered", registered(j), "aborted", j->aborted,
                  "hosts", hosts_json(j, now), "ranks", ranks_json(j, now),
                  "nic", "iface", j->iface, "master_addr",
                  hvdd_roster_master_addr(j), "master_port", j->master_port);
    char *s;

    if (o == NULL)
        return NULL;
    if (j->aborted)
        json_object_set_new(o, "abort_reason", json_string(j->abort_reason));
    json_object_set_new(o, "failures", failures_json(j));
    if (j->has_plan)
        add_network(j, json_object_get(o, "nic"));
    s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}
