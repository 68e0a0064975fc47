/* The control API (/v1/...): registration, heartbeats, barriers, exits,
 * abort and status. Every body is a JSON object. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routes.h"

/* The JSON body, or NULL after replying 400. */
static json_t *
parse_body(const hvdd_request *rq, hvdd_response *rs)
{
    json_error_t err;
    json_t *j = json_loadb(rq->body ? rq->body : "", rq->body_len,
                           JSON_REJECT_DUPLICATES, &err);

    if (j == NULL || !json_is_object(j)) {
        hvdd_reply_text(rs, 400, "expected a JSON object: %s",
                        j ? "not an object" : err.text);
        json_decref(j);
        return NULL;
    }
    return j;
}

/* What int_member gives for a member that is no int: below every value
 * the callers accept (each refuses a negative where it wants a count, a
 * rank or a pid). */
#define NOT_AN_INT LONG_MIN

/* An integer member, or dflt when absent; NOT_AN_INT when it is not an
 * integer or lies outside int (a rank of 4294967296 was rank 0). */
static long
int_member(json_t *j, const char *name, long dflt)
{
    json_t *v = json_object_get(j, name);
    json_int_t n;

    if (v == NULL)
        return dflt;
    if (!json_is_integer(v))
        return NOT_AN_INT;
    n = json_integer_value(v);
    return n < INT_MIN || n > INT_MAX ? NOT_AN_INT : (long)n;
}

static json_t *
identity(const hvdd_state *st, int rank)
{
    const hvdd_roster *j = &st->roster;
    const cfg_slot *s = &j->plan.slots[rank];

    return json_pack("{si si si si si si ss ss ss si si sb}", "rank", rank,
                     "size", j->size, "local_rank", s->local_rank, "local_size",
                     s->local_size, "cross_rank", s->cross_rank, "cross_size",
                     s->cross_size, "host", j->hosts.hosts[s->host].name,
                     "iface", hvdd_roster_iface(j, s->host), "master_addr",
                     hvdd_roster_master_addr(j), "master_port", j->master_port,
                     "round", j->round, "fresh", j->fresh);
}

/* 409 when the body names a round that is over; 1 then. */
static int
stale_round(const hvdd_state *st, hvdd_response *rs, json_t *b)
{
    long round = int_member(b, "round", -1);

    if (round == NOT_AN_INT) {
        hvdd_reply_text(rs, 400, "\"round\" must be an integer");
        return 1;
    }
    if (round < 0 || round == st->roster.round)
        return 0;
    if (round > st->roster.round)
        hvdd_reply_text(rs, 409, "no round %ld: the job is in round %d", round,
                        st->roster.round);
    else
        hvdd_reply_text(rs, 409, "round %ld is over: the job is in round %d",
                        round, st->roster.round);
    return 1;
}

/* With "trim" and "min": N, a round of fewer than N ranks (one per
 * worker that goes on) is not started: 200 {"started": false,
 * "workers": K}, and nothing changes. */
static int
too_few(const hvdd_state *st, hvdd_response *rs, json_t *b, int ranks)
{
    long least = int_member(b, "min", 0);

    if (least <= 0 || ranks >= least)
        return 0;
    hvdd_reply_json(rs, 200,
                    json_pack("{sb si si}", "started", 0, "workers", ranks,
                              "round", st->roster.round));
    return 1;
}

/* Who goes on, from "keep": the launcher's list of {"host", "pid"}, or
 * "registered" (every running worker, hvdd's own list). NULL after
 * replying. */
static hvdd_survivor *
keep_list(const hvdd_state *st, hvdd_response *rs, json_t *keep, int *n,
          int *registered)
{
    hvdd_survivor *sv;
    json_t *v;
    size_t i;

    *registered = json_is_string(keep) &&
                  strcmp(json_string_value(keep), "registered") == 0;
    if (*registered)
        sv = hvdd_roster_registered(&st->roster, n);
    else if (keep && !json_is_array(keep))
        sv = NULL;
    else if ((sv = calloc(json_array_size(keep) + 1, sizeof(*sv))) != NULL)
        json_array_foreach(keep, i, v)
        {
            sv[i].host = json_string_value(json_object_get(v, "host"));
            long pid = int_member(v, "pid", -1);
            sv[i].pid = pid < 0 ? -1 : (int)pid;
            if (sv[i].host == NULL)
                sv[i].pid = -1; /* not in the round */
        }
    if (!*registered)
        *n = (int)json_array_size(keep);
    if (sv == NULL && *registered)
        hvdd_reply_text(rs, 500, "out of memory");
    else if (sv == NULL)
        hvdd_reply_text(rs, 400,
                        "round needs \"hosts\" (a -H spec) and \"keep\" (a "
                        "list of {\"host\", \"pid\"}, or \"registered\")");
    return sv;
}

/* The round's hosts: "hosts", cut with "trim" to the workers that run,
 * then "add" (hosts that join, with new workers only) after them. 0, or
 * 1 after replying (a bad spec, or "min" not met). */
static int
round_spec(const hvdd_state *st, hvdd_response *rs, json_t *b, int registered,
           char *spec, size_t size)
{
    const char *hosts = json_string_value(json_object_get(b, "hosts"));
    const char *add = json_string_value(json_object_get(b, "add"));
    int trim = registered && json_is_true(json_object_get(b, "trim"));
    int ranks = -1, added = 0;
    size_t at;
    cfg_hostlist more;
    cfg_err e;

    if (hosts[0] == '\0') { /* every host of the last round is gone */
        spec[0] = '\0';
        ranks = 0;
    } else if (trim) {
        ranks = hvdd_roster_trim_spec(&st->roster, hosts, spec, size);
    } else if (snprintf(spec, size, "%s", hosts) < (int)size) {
        ranks = 0;
    }
    if (ranks < 0) {
        hvdd_reply_text(rs, 409, "round: bad hosts '%s'", hosts);
        return 1;
    }
    if (add && add[0]) {
        cfg_hostlist_init(&more);
        if (cfg_hostspec_parse(add, &more, &e) != 0 ||
            (at = strlen(spec)) + strlen(add) + 2 > size) {
            cfg_hostlist_release(&more);
            hvdd_reply_text(rs, 409, "round: bad \"add\" '%s'", add);
            return 1;
        }
        added = (int)cfg_hostlist_slots(&more);
        cfg_hostlist_release(&more);
        snprintf(spec + at, size - at, "%s%s", at ? "," : "", add);
    }
    if (ranks + added == 0 && trim && int_member(b, "min", 0) <= 0) {
        hvdd_reply_text(rs, 409, "round: no worker of hosts '%s' is registered",
                        hosts);
        return 1;
    }
    return trim && too_few(st, rs, b, ranks + added);
}

/* POST /v1/round (the launcher): {"hosts": "a:2,c:2", "keep": [{"host":
 * H, "pid": P}, ...] or "registered", "trim"?, "min"?, "add"?} starts the
 * next round; the answer is the round and who has each rank (pid 0: a new
 * worker's). */
static void
do_round(hvdd_state *st, hvdd_response *rs, json_t *b)
{
    hvdd_survivor *sv;
    json_t *ranks;
    char err[512] = "", spec[8192];
    int r, n = 0, registered;

    if (!json_is_string(json_object_get(b, "hosts"))) {
        hvdd_reply_text(rs, 400, "round needs \"hosts\" (a -H spec)");
        return;
    }
    if ((sv = keep_list(st, rs, json_object_get(b, "keep"), &n, &registered)) ==
        NULL)
        return;
    if (round_spec(st, rs, b, registered, spec, sizeof(spec)) != 0) {
        free(sv);
        return;
    }
    r = hvdd_roster_new_round(&st->roster, spec, sv, n, &st->kv, err,
                              sizeof(err));
    free(sv);
    if (r != 0) {
        hvdd_reply_text(rs, 409, "round: %s", err);
        return;
    }
    ranks = json_array();
    for (int k = 0; ranks && k < st->roster.size; k++)
        json_array_append_new(
            ranks,
            json_pack(
                "{ss si}", "host",
                st->roster.hosts.hosts[st->roster.plan.slots[k].host].name,
                "pid", st->roster.ranks[k].pid));
    /* every held request: rejoins, and barriers of the old round (which
     * are gone) answered now, not at their timeout */
    snprintf(rs->notify, sizeof(rs->notify), "*");
    hvdd_reply_json(rs, 200,
                    json_pack("{sb si si so*}", "started", 1, "round",
                              st->roster.round, "size", st->roster.size,
                              "ranks", ranks));
}

/* POST /v1/host (the launcher): {"host": "x"} takes a host into a running
 * job (elastic growth, or a host back after its cooldown); its agent then
 * registers, and a round gives it ranks ("add"). */
static void
do_host(hvdd_state *st, hvdd_response *rs, json_t *b)
{
    const char *host = json_string_value(json_object_get(b, "host"));
    char err[512];
    int h;

    if (host == NULL || host[0] == '\0' || strlen(host) > 255) {
        hvdd_reply_text(rs, 400, "host needs \"host\" (a host name)");
        return;
    }
    if ((h = hvdd_roster_add_host(&st->roster, host, err, sizeof(err))) < 0) {
        hvdd_reply_text(rs, 409, "host: %s", err);
        return;
    }
    hvdd_reply_json(rs, 200, json_pack("{si}", "index", h));
}

/* POST /v1/rejoin (a worker of the last round): {"host", "pid", "after",
 * "wait"?} waits for the round after `after` (not with "wait": 0) and
 * answers the worker's identity in it, or 410 when it is not in it. */
static void
do_rejoin(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs, json_t *b)
{
    const char *host = json_string_value(json_object_get(b, "host"));
    long pid = int_member(b, "pid", 0), after = int_member(b, "after", -2);
    long wait = int_member(b, "wait", -1); /* 0: answer at once */
    int r;

    if (host == NULL || pid <= 0 || after < 0) {
        hvdd_reply_text(rs, 400,
                        "rejoin needs \"host\" (text), \"pid\" and \"after\" "
                        "(integers)");
        return;
    }
    if (st->roster.aborted) {
        hvdd_reply_text(rs, 410, "job aborted: %s", st->roster.abort_reason);
        return;
    }
    r = hvdd_roster_rejoin(&st->roster, host, (int)pid, (int)after);
    if (r == -2 && (rq->deadline_passed || wait == 0))
        hvdd_reply_text(rs, 408, "no round after %ld yet", after);
    else if (r == -2)
        hvdd_reply_wait(rs, "round", HVDD_MAX_WAIT_MS);
    else if (r == -1)
        hvdd_reply_text(rs, 410, "host '%s' pid %ld is not in round %d", host,
                        pid, st->roster.round);
    else
        hvdd_reply_json(rs, 200, identity(st, r));
}

static void
do_register(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs,
            json_t *b)
{
    const char *host = json_string_value(json_object_get(b, "host"));
    long pid = int_member(b, "pid", 0), rank = int_member(b, "rank", -1);
    int waiting = *rq->conn_state >= 0, r;
    char err[512];

    if (host == NULL || host[0] == '\0' || strlen(host) > 255 || pid < 0 ||
        rank < -1) {
        hvdd_reply_text(rs, 400,
                        "register needs \"host\" (text), \"pid\" and an "
                        "optional \"rank\" (integers)");
        return;
    }
    /* (a name no host list could hold made the plan from the arrivals
     * fail later, for every rank: the job could never start) */
    if (!cfg_host_name_valid(host)) {
        hvdd_reply_text(rs, 400, "register: bad host name '%.255s'", host);
        return;
    }
    if (!waiting && stale_round(st, rs, b))
        return;
    if (waiting) /* asked again after a wait: conn_state is the arrival */
        r = hvdd_roster_arrival_rank(&st->roster, *rq->conn_state);
    else
        r = hvdd_roster_register(&st->roster, host, (int)pid, (int)rank,
                                 &st->kv, rq->now, rq->conn_state, err,
                                 sizeof(err));
    if (r == -1) {
        hvdd_reply_text(rs, 409, "%s", waiting ? "registration lost" : err);
        return;
    }
    if (r == -2) {
        if (rq->deadline_passed)
            hvdd_reply_text(rs, 408, "not every rank registered in time");
        else
            hvdd_reply_wait(rs, "register", HVDD_MAX_WAIT_MS);
        return;
    }
    if (!waiting)
        snprintf(rs->notify, sizeof(rs->notify), "register");
    hvdd_reply_json(rs, 200, identity(st, r));
}

static void
do_barrier(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs, json_t *b)
{
    const char *name = json_string_value(json_object_get(b, "name"));
    long rank = int_member(b, "rank", -2);
    char event[300];
    int r;

    if (name == NULL || !hvdd_kv_name_ok(name, 200) || rank < 0) {
        hvdd_reply_text(rs, 400, "barrier needs \"name\" and \"rank\"");
        return;
    }
    if (stale_round(st, rs, b))
        return;
    r = hvdd_roster_barrier(&st->roster, name, (int)rank, rq->conn_state);
    snprintf(event, sizeof(event), "barrier/%s", name);
    if (r < 0)
        hvdd_reply_text(rs, 409, "rank %ld is not registered", rank);
    else if (r == 1) {
        snprintf(rs->notify, sizeof(rs->notify), "%s", event);
        hvdd_reply_text(rs, 200, "ok");
    } else if (rq->deadline_passed)
        hvdd_reply_text(rs, 408, "barrier '%s' not complete in time", name);
    else
        hvdd_reply_wait(rs, event, HVDD_MAX_WAIT_MS);
}

static void
do_rank_call(hvdd_state *st, const char *what, hvdd_response *rs, json_t *b,
             double now)
{
    long rank = int_member(b, "rank", -2), code = int_member(b, "code", 0);
    long pid = int_member(b, "pid", 0);
    const char *host = json_string_value(json_object_get(b, "host"));
    int r;

    if (code == NOT_AN_INT || pid == NOT_AN_INT || rank == NOT_AN_INT) {
        hvdd_reply_text(rs, 400,
                        "%s needs \"rank\" and optional \"code\" and "
                        "\"pid\" (integers)",
                        what);
        return;
    }
    if (stale_round(st, rs, b))
        return;
    r = strcmp(what, "heartbeat") == 0
            ? hvdd_roster_heartbeat(&st->roster, (int)rank, now)
            : hvdd_roster_exited(&st->roster, (int)rank, (int)code, (int)pid,
                                 host);

    if (r == -2 && code != 0) /* a worker of an earlier round, late */
        hvdd_roster_note_failure(
            &st->roster, st->roster.round, (int)rank, (int)pid, (int)code,
            host && hvdd_roster_host_index(&st->roster, host) >= 0 ? host
                                                                   : "?");
    if (r == -2)
        hvdd_reply_text(rs, 409,
                        "exit: pid %ld does not have rank %ld in round %d", pid,
                        rank, st->roster.round);
    else if (rank < 0 || r != 0)
        hvdd_reply_text(rs, 409, "%s: rank %ld is not %s", what, rank,
                        strcmp(what, "heartbeat") == 0 ? "registered"
                                                       : "a rank of the plan");
    else if (st->roster.aborted)
        hvdd_reply_text(rs, 410, "job aborted: %s", st->roster.abort_reason);
    else
        hvdd_reply_text(rs, 200, "ok");
}

static void
do_abort(hvdd_state *st, hvdd_response *rs, json_t *b)
{
    const char *reason = json_string_value(json_object_get(b, "reason"));

    if (reason == NULL || reason[0] == '\0') {
        hvdd_reply_text(rs, 400, "abort needs a \"reason\"");
        return;
    }
    hvdd_roster_abort(&st->roster, reason);
    snprintf(rs->notify, sizeof(rs->notify), "*");
    hvdd_reply_text(rs, 200, "aborted: %s", st->roster.abort_reason);
}

/* POST /v1/warn (a rank): {"text"} for the launcher to print, one line
 * per line (libcollective's stall check: the library itself never
 * prints). */
static void
do_warn(hvdd_state *st, hvdd_response *rs, json_t *b)
{
    const char *text = json_string_value(json_object_get(b, "text"));

    if (text == NULL || text[0] == '\0' ||
        strlen(text) >= sizeof(st->roster.warning)) {
        hvdd_reply_text(rs, 400,
                        "warn needs a \"text\" of fewer than %zu "
                        "bytes",
                        sizeof(st->roster.warning));
        return;
    }
    snprintf(st->roster.warning, sizeof(st->roster.warning), "%s", text);
    st->roster.warning_new = 1;
    hvdd_reply_text(rs, 200, "ok");
}

/* 1 when /v1/what is a route (of some other method), for 405 over 404. */
static int
known_route(const char *what)
{
    static const char *const routes[] = {
        "status",       "register",       "barrier",         "heartbeat",
        "exit",         "abort",          "round",           "rejoin",
        "host",         "warn",           "agent",           "agent/targets",
        "agent/probes", "agent/decision", "agent/heartbeat", "agent/exit"};

    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (strcmp(what, routes[i]) == 0)
            return 1;
    return 0;
}

void
hvdd_control_route(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs)
{
    const char *what = rq->path + 4;
    json_t *b;

    if (strcmp(what, "status") == 0 && strcmp(rq->method, "GET") == 0) {
        char *s = hvdd_status_json(st, rq->now);
        if (s == NULL) {
            hvdd_reply_text(rs, 500, "out of memory");
            return;
        }
        rs->status = 200;
        rs->content_type = "application/json";
        rs->body = s;
        rs->len = strlen(s);
        return;
    }
    if (strcmp(rq->method, "POST") != 0 || strcmp(what, "status") == 0) {
        hvdd_reply_text(rs, known_route(what) ? 405 : 404,
                        "%s /v1/%s: no such route", rq->method, what);
        return;
    }
    if ((b = parse_body(rq, rs)) == NULL)
        return;
    if (strcmp(what, "register") == 0)
        do_register(st, rq, rs, b);
    else if (strcmp(what, "barrier") == 0)
        do_barrier(st, rq, rs, b);
    else if (strcmp(what, "heartbeat") == 0 || strcmp(what, "exit") == 0)
        do_rank_call(st, what, rs, b, rq->now);
    else if (strcmp(what, "abort") == 0)
        do_abort(st, rs, b);
    else if (strcmp(what, "round") == 0)
        do_round(st, rs, b);
    else if (strcmp(what, "rejoin") == 0)
        do_rejoin(st, rq, rs, b);
    else if (strcmp(what, "host") == 0)
        do_host(st, rs, b);
    else if (strcmp(what, "warn") == 0)
        do_warn(st, rs, b);
    else if (!hvdd_agent_route(st, what, rq, rs, b))
        hvdd_reply_text(rs, 404, "POST /v1/%s: no such route", what);
    json_decref(b);
}
