#include "agent_brief.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *
string_array(char *const *v, size_t n)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* [name, slots] each, and max_slots when there is one: the agents build
 * the plan hvdrun built, and max_slots moves ranks between hosts. */
static json_t *
hosts_array(const cfg_hostlist *l)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < l->count; i++)
        if (json_array_append_new(a, l->hosts[i].max_slots
                                         ? json_pack("[sii]", l->hosts[i].name,
                                                     l->hosts[i].slots,
                                                     l->hosts[i].max_slots)
                                         : json_pack("[si]", l->hosts[i].name,
                                                     l->hosts[i].slots)) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

char *
hvdrun_brief_encode(const hvdrun_brief *j)
{
    size_t argc = 0, nchosen;
    json_t *o;
    char *text, *line;

    while (j->argv[argc])
        argc++;
    o = json_pack(
        "{si so* si so* so* ss ss si ss sf sf sf sb sb}", "host", j->host,
        "hosts", hosts_array(&j->hosts), "np", j->np, "argv",
        string_array(j->argv, argc), "env", string_array(j->base.v, j->base.n),
        "cwd", j->cwd, "rendezvous_addr", j->rendezvous_addr, "rendezvous_port",
        j->rendezvous_port, "token", j->token, "heartbeat", j->heartbeat,
        "kill_grace", j->kill_grace, "start_timeout", j->start_timeout,
        "timestamps", j->timestamps, "verbose", j->verbose);
    if (o && j->network_interface)
        json_object_set_new(o, "network_interface",
                            json_string(j->network_interface));
    if (o && j->output_dir)
        json_object_set_new(o, "output_dir", json_string(j->output_dir));
    for (nchosen = 0; j->chosen && j->chosen[nchosen]; nchosen++)
        ;
    if (o && nchosen &&
        json_object_set_new(o, "chosen", string_array(j->chosen, nchosen)) !=
            0) {
        json_decref(o);
        o = NULL;
    }
    text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (text == NULL)
        return NULL;
    line = malloc(strlen(text) + 2);
    if (line)
        snprintf(line, strlen(text) + 2, "%s\n", text);
    free(text);
    return line;
}

static int
decode_hosts(json_t *list, hvdrun_brief *j, char *err, size_t size)
{
    size_t i;
    json_t *v;
    cfg_err e;

    cfg_hostlist_init(&j->hosts);
    json_array_foreach(list, i, v)
    {
        cfg_host h = {0};
        h.name = (char *)json_string_value(json_array_get(v, 0));
        h.slots = (int)json_integer_value(json_array_get(v, 1));
        h.max_slots = (int)json_integer_value(json_array_get(v, 2));
        if (h.name == NULL || h.slots < 1 ||
            (h.max_slots != 0 && h.max_slots < h.slots) ||
            cfg_hostlist_add(&j->hosts, &h, &e) != 0) {
            snprintf(err, size, "bad host entry %zu", i);
            return -1;
        }
    }
    if (cfg_plan_build(&j->hosts, j->np, &j->plan, &e) != 0 || j->host < 0 ||
        j->host >= j->plan.nhosts) {
        snprintf(err, size, "the plan does not give host %d ranks", j->host);
        return -1;
    }
    return 0;
}

/* A JSON array of strings as a NULL-terminated array into it (*out
 * calloc'd); -1 for anything else. */
static int
decode_strings(json_t *a, char ***out)
{
    size_t n = json_array_size(a);

    if ((*out = calloc(n + 1, sizeof(char *))) == NULL || !json_is_array(a))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (((*out)[i] = (char *)json_string_value(json_array_get(a, i))) ==
            NULL)
            return -1;
    return 0;
}

int
hvdrun_brief_decode(const char *line, hvdrun_brief *j, char *err, size_t size)
{
    json_error_t je;
    json_t *hosts = NULL, *argv = NULL, *env = NULL, *chosen = NULL;

    memset(j, 0, sizeof(*j));
    j->root = json_loads(line, 0, &je);
    if (j->root == NULL) {
        snprintf(err, size, "the job message is not JSON: %s", je.text);
        return -1;
    }
    if (json_unpack_ex(
            j->root, &je, 0,
            "{si so si so so ss ss si ss sF sF sF sb sb s?s s?s s?o}", "host",
            &j->host, "hosts", &hosts, "np", &j->np, "argv", &argv, "env", &env,
            "cwd", &j->cwd, "rendezvous_addr", &j->rendezvous_addr,
            "rendezvous_port", &j->rendezvous_port, "token", &j->token,
            "heartbeat", &j->heartbeat, "kill_grace", &j->kill_grace,
            "start_timeout", &j->start_timeout, "timestamps", &j->timestamps,
            "verbose", &j->verbose, "network_interface", &j->network_interface,
            "output_dir", &j->output_dir, "chosen", &chosen) != 0) {
        snprintf(err, size, "the job message lacks a field: %s", je.text);
        return -1;
    }
    if (decode_strings(argv, &j->argv) != 0 || j->argv[0] == NULL) {
        snprintf(err, size, "the job message has no command");
        return -1;
    }
    if (chosen && !json_is_null(chosen) &&
        decode_strings(chosen, &j->chosen) != 0) {
        snprintf(err, size, "the job message's chosen names are not strings");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(env); i++) {
        json_t *v = json_array_get(env, i);
        if (!json_is_string(v) ||
            envlist_put(&j->base, json_string_value(v)) != 0) {
            snprintf(err, size, "bad environment entry %zu", i);
            return -1;
        }
    }
    return decode_hosts(hosts, j, err, size);
}

int
hvdrun_brief_join_round(hvdrun_brief *j, int round, const char *spec, char *err,
                        size_t size)
{
    cfg_hostlist hosts;
    cfg_plan plan;
    cfg_err e;
    char value[16];
    int np, at = -1;

    cfg_hostlist_init(&hosts);
    if (cfg_hostspec_parse(spec, &hosts, &e) != 0) {
        snprintf(err, size, "bad round hosts '%.200s': %s", spec, e.msg);
        cfg_hostlist_release(&hosts);
        return -1;
    }
    for (size_t i = 0; i < hosts.count; i++)
        if (strcmp(hosts.hosts[i].name, j->hosts.hosts[j->host].name) == 0)
            at = (int)i;
    np = (int)cfg_hostlist_slots(&hosts);
    snprintf(value, sizeof(value), "%d", round);
    if (at < 0 || cfg_plan_build(&hosts, np, &plan, &e) != 0) {
        snprintf(err, size, "round %d has no ranks on this host ('%.200s')",
                 round, spec);
        cfg_hostlist_release(&hosts);
        return -1;
    }
    /* (its workers register first: their round may pass while they
     * start, and hvdd then gives them ranks in the one that runs) */
    if (envlist_set(&j->base, "HOROVOD_ELASTIC_ROUND", value) != 0 ||
        envlist_set(&j->base, "HOROVOD_ELASTIC_JOIN", "1") != 0) {
        snprintf(err, size, "out of memory");
        cfg_plan_release(&plan);
        cfg_hostlist_release(&hosts);
        return -1;
    }
    cfg_plan_release(&j->plan);
    cfg_hostlist_release(&j->hosts);
    j->hosts = hosts;
    j->plan = plan;
    j->host = at;
    j->np = np;
    return 0;
}

void
hvdrun_brief_release(hvdrun_brief *j)
{
    cfg_plan_release(&j->plan);
    cfg_hostlist_release(&j->hosts);
    envlist_release(&j->base);
    free(j->argv);
    free(j->chosen);
    json_decref(j->root);
    memset(j, 0, sizeof(*j));
}
