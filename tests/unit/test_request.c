#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"
#include "unit.h"

#define TOKEN "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define AUTH "Bearer " TOKEN

static hvdd_state st;
static hvdd_response rs;
static int conn_state;

static void
start(int size, const char *hosts)
{
    char err[256];
    conn_state = -1;
    ck_assert_int_eq(hvdd_state_init(&st, size, hosts, TOKEN, err, sizeof(err)),
                     0);
}

static void
teardown(void)
{
    free(rs.body);
    hvdd_state_release(&st);
}

/* Sends one request; the response is in rs. */
static const char *peer; /* the client's address, or NULL */

static int
call(const char *method, const char *path, const char *auth, const char *body,
     const char *wait, int allowed, int deadline_passed)
{
    hvdd_request rq = {method,      path,
                       wait,        auth,
                       body,        body ? strlen(body) : 0,
                       allowed,     deadline_passed,
                       &conn_state, 100.0,
                       peer};
    free(rs.body);
    memset(&rs, 0, sizeof(rs));
    hvdd_handle(&st, &rq, &rs);
    return rs.status;
}

static int
body_has(const char *s)
{
    return rs.body && memmem(rs.body, rs.len, s, strlen(s)) != NULL;
}

START_TEST(control_needs_the_token)
{
    start(2, "a:2");
    ck_assert_int_eq(call("GET", "/v1/status", NULL, NULL, NULL, 1, 0), 401);
    ck_assert_int_eq(call("POST", "/v1/abort", "Bearer nope",
                          "{\"reason\":\"x\"}", NULL, 1, 0),
                     401);
    ck_assert_int_eq(call("POST", "/v1/abort", "Bearer " TOKEN "0",
                          "{\"reason\":\"x\"}", NULL, 1, 0),
                     401);
    ck_assert_int_eq(st.roster.aborted, 0); /* nothing changed */
    ck_assert_int_eq(call("GET", "/v1/status", AUTH, NULL, NULL, 0, 0), 200);
    ck_assert(body_has("\"size\":2"));
}
END_TEST

START_TEST(store_only_for_the_jobs_addresses)
{
    start(1, NULL);
    ck_assert_int_eq(call("PUT", "/global/k", NULL, "v", NULL, 0, 0), 403);
    ck_assert_int_eq(call("PUT", "/global/k", NULL, "v", NULL, 1, 0), 200);
    ck_assert_str_eq(rs.notify, "kv/global/k");
    ck_assert_int_eq(call("GET", "/global/k", NULL, NULL, NULL, 1, 0), 200);
    ck_assert_uint_eq(rs.len, 1);
    ck_assert_int_eq(rs.body[0], 'v');
}
END_TEST

/* Gloo puts each rank's address under the rank's number; Horovod's
 * finalize DELETEs that key. */
START_TEST(horovod_protocol)
{
    start(2, "a:1,b:1");
    ck_assert_int_eq(call("GET", "/global/0", NULL, NULL, NULL, 1, 0), 404);
    ck_assert_int_eq(call("PUT", "/global/0", NULL, "addr0", NULL, 1, 0), 200);
    ck_assert_int_eq(call("PUT", "/global/1", NULL, "addr1", NULL, 1, 0), 200);
    ck_assert_int_eq(call("PUT", "/local_a/0", NULL, "l", NULL, 1, 0), 200);
    ck_assert_int_eq(call("DELETE", "/global/0", NULL, NULL, NULL, 1, 0), 200);
    ck_assert_int_eq(call("GET", "/global/0", NULL, NULL, NULL, 1, 0), 200);
    ck_assert_int_eq(call("DELETE", "/global/1", NULL, NULL, NULL, 1, 0), 200);
    ck_assert(body_has("scope cleared"));
    ck_assert_int_eq(call("GET", "/global/0", NULL, NULL, NULL, 1, 0), 404);
    /* local_a has one member: its DELETE clears it */
    ck_assert_int_eq(call("DELETE", "/local_a/0", NULL, NULL, NULL, 1, 0), 200);
    ck_assert_int_eq(call("GET", "/local_a/0", NULL, NULL, NULL, 1, 0), 404);
}
END_TEST

/* Made-up DELETEs in a sized scope finalise nothing: only the keys that
 * were put count. */
START_TEST(bogus_deletes_do_not_finalise)
{
    start(2, "a:1,b:1");
    ck_assert_int_eq(call("PUT", "/global/0", NULL, "addr0", NULL, 1, 0), 200);
    ck_assert_int_eq(call("DELETE", "/global/x", NULL, NULL, NULL, 1, 0), 404);
    ck_assert_int_eq(call("DELETE", "/global/1", NULL, NULL, NULL, 1, 0), 404);
    ck_assert_int_eq(call("DELETE", "/global/y", NULL, NULL, NULL, 1, 0), 404);
    ck_assert_int_eq(call("GET", "/global/0", NULL, NULL, NULL, 1, 0), 200);
    ck_assert(body_has("addr0"));
}
END_TEST

/* The scopes of hvdrun, the agents and libcollective need the token for
 * every read and write, from any address; Horovod's keep its model. */
START_TEST(job_scopes_need_the_token)
{
    static const char *paths[] = {"/ring/comm0-0", "/nccl/comm0-blocking",
                                  "/hvdrun/master_port", "/collective/k",
                                  "/anything/k"};
    start(2, "a:1,b:1");
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        ck_assert_int_eq(call("PUT", paths[i], NULL, "evil", NULL, 1, 0), 401);
        ck_assert_int_eq(call("GET", paths[i], NULL, NULL, NULL, 1, 0), 401);
        ck_assert_int_eq(call("DELETE", paths[i], NULL, NULL, NULL, 1, 0), 401);
        ck_assert_int_eq(call("PUT", paths[i], "Bearer nope", "x", NULL, 1, 0),
                         401);
        ck_assert_int_eq(call("PUT", paths[i], AUTH, "real", NULL, 0, 0), 200);
        ck_assert_int_eq(call("GET", paths[i], NULL, NULL, NULL, 1, 0), 401);
        ck_assert_int_eq(call("GET", paths[i], AUTH, NULL, NULL, 0, 0), 200);
        ck_assert(body_has("real"));
    }
    ck_assert_uint_eq(st.kv.nkeys, 5);
    /* Horovod's scopes: the job's addresses, or the token */
    ck_assert_int_eq(call("PUT", "/global/0", NULL, "a", NULL, 1, 0), 200);
    ck_assert_int_eq(call("PUT", "/local_x/0", NULL, "a", NULL, 1, 0), 200);
    ck_assert_int_eq(call("PUT", "/cross_0/0", NULL, "a", NULL, 1, 0), 200);
    ck_assert_int_eq(call("PUT", "/global/1", AUTH, "a", NULL, 0, 0), 200);
    ck_assert_int_eq(call("PUT", "/globalx/1", NULL, "a", NULL, 1, 0), 401);
}
END_TEST

/* What the job's addresses may write without the token has a budget of
 * its own: filling it does not stop the job's own writes. */
START_TEST(open_writes_cannot_starve_the_job)
{
    static char big[KV_MAX_VALUE];
    char path[64];
    int i, code = 200;

    start(1, NULL);
    for (i = 0; code == 200 && i < 1000; i++) {
        snprintf(path, sizeof(path), "/global/big%d", i);
        hvdd_request rq = {.method = "PUT",
                           .path = path,
                           .body = big,
                           .body_len = sizeof(big),
                           .peer_allowed = 1,
                           .conn_state = &conn_state};
        free(rs.body);
        memset(&rs, 0, sizeof(rs));
        hvdd_handle(&st, &rq, &rs);
        code = rs.status;
    }
    ck_assert_int_eq(code, 507);
    ck_assert(body_has("without the job token"));
    ck_assert_int_lt(i, 256); /* it stopped well before the whole store */
    ck_assert_int_eq(call("PUT", "/ring/comm0-0", AUTH, "addr", NULL, 0, 0),
                     200);
    hvdd_request rq = {.method = "PUT",
                       .path = "/nccl/id",
                       .auth = AUTH,
                       .body = big,
                       .body_len = sizeof(big),
                       .conn_state = &conn_state};
    free(rs.body);
    memset(&rs, 0, sizeof(rs));
    hvdd_handle(&st, &rq, &rs);
    ck_assert_int_eq(rs.status, 200);
}
END_TEST

START_TEST(bad_requests)
{
    start(1, NULL);
    ck_assert_int_eq(call("GET", "/global", NULL, NULL, NULL, 1, 0), 400);
    ck_assert_int_eq(call("GET", "/a/b/c", NULL, NULL, NULL, 1, 0), 400);
    ck_assert_int_eq(call("GET", "//k", NULL, NULL, NULL, 1, 0), 400);
    ck_assert_int_eq(call("POST", "/global/k", NULL, "v", NULL, 1, 0), 405);
    ck_assert_int_eq(call("GET", "/global/k", NULL, NULL, "soon", 1, 0), 400);
    ck_assert_int_eq(call("GET", "/v1/nothing", AUTH, NULL, NULL, 1, 0), 404);
    ck_assert_int_eq(call("POST", "/v1/register", AUTH, "[1]", NULL, 1, 0),
                     400);
    ck_assert_int_eq(call("POST", "/v1/register", AUTH, "{", NULL, 1, 0), 400);
    ck_assert_int_eq(
        call("POST", "/v1/register", AUTH, "{\"host\":3}", NULL, 1, 0), 400);
    ck_assert_int_eq(call("POST", "/v1/abort", AUTH, "{}", NULL, 1, 0), 400);
}
END_TEST

START_TEST(oversized_body_refused)
{
    hvdd_request rq = {"PUT", "/global/k", NULL, NULL, "", HVDD_MAX_BODY + 1, 1,
                       0,     &conn_state, 0,    NULL};
    start(1, NULL);
    hvdd_handle(&st, &rq, &rs);
    ck_assert_int_eq(rs.status, 413);
    ck_assert_uint_eq(st.kv.nkeys, 0);
}
END_TEST

START_TEST(long_poll_waits_then_answers)
{
    start(1, NULL);
    ck_assert_int_eq(call("GET", "/global/k", NULL, NULL, "500", 1, 0), 0);
    ck_assert_int_eq(rs.wait_ms, 500);
    ck_assert_str_eq(rs.wait_event, "kv/global/k");
    /* the wait passed without a PUT */
    ck_assert_int_eq(call("GET", "/global/k", NULL, NULL, "500", 1, 1), 404);
}
END_TEST

START_TEST(planned_registration)
{
    start(3, "a:1,b:2");
    ck_assert_int_eq(call("POST", "/v1/register", AUTH,
                          "{\"host\":\"b\",\"pid\":7,\"rank\":2}", NULL, 1, 0),
                     200);
    ck_assert(body_has("\"rank\":2"));
    ck_assert(body_has("\"local_rank\":1"));
    ck_assert(body_has("\"cross_size\":1"));
    ck_assert_int_eq(call("POST", "/v1/register", AUTH,
                          "{\"host\":\"a\",\"pid\":8,\"rank\":1}", NULL, 1, 0),
                     409);
    ck_assert(body_has("rank 1 belongs to host 'b', not 'a'"));
    ck_assert_int_eq(call("POST", "/v1/register", AUTH,
                          "{\"host\":\"b\",\"pid\":9}", NULL, 1, 0),
                     200);
    ck_assert(body_has("\"rank\":1"));
    ck_assert_int_eq(call("POST", "/v1/register", AUTH,
                          "{\"host\":\"b\",\"pid\":10}", NULL, 1, 0),
                     409);
    ck_assert(body_has("host 'b' has no free rank"));
}
END_TEST

START_TEST(standalone_registration_waits_for_everyone)
{
    int first;

    start(3, NULL);
    ck_assert_int_eq(call("POST", "/v1/register", AUTH,
                          "{\"host\":\"y\",\"pid\":1}", NULL, 1, 0),
                     0);
    ck_assert_str_eq(rs.wait_event, "register");
    first = conn_state;
    conn_state = -1;
    ck_assert_int_eq(call("POST", "/v1/register", AUTH,
                          "{\"host\":\"x\",\"pid\":2}", NULL, 1, 0),
                     0);
    conn_state = -1;
    ck_assert_int_eq(call("POST", "/v1/register", AUTH,
                          "{\"host\":\"y\",\"pid\":3}", NULL, 1, 0),
                     200);
    ck_assert_str_eq(rs.notify, "register");
    /* hosts in order of first arrival, ranks contiguous per host */
    ck_assert(body_has("\"rank\":1"));
    ck_assert(body_has("\"local_rank\":1"));
    conn_state = first; /* the first waiter asks again */
    ck_assert_int_eq(call("POST", "/v1/register", AUTH,
                          "{\"host\":\"y\",\"pid\":1}", NULL, 1, 0),
                     200);
    ck_assert(body_has("\"rank\":0"));
    ck_assert(body_has("\"local_size\":2"));
}
END_TEST

START_TEST(barrier_and_heartbeats)
{
    int r0;

    start(2, "a:2");
    for (int r = 0; r < 2; r++) {
        char b[64];
        conn_state = -1;
        snprintf(b, sizeof(b), "{\"host\":\"a\",\"pid\":%d,\"rank\":%d}", r, r);
        ck_assert_int_eq(call("POST", "/v1/register", AUTH, b, NULL, 1, 0),
                         200);
    }
    conn_state = -1;
    ck_assert_int_eq(call("POST", "/v1/barrier", AUTH,
                          "{\"name\":\"start\",\"rank\":0}", NULL, 1, 0),
                     0);
    r0 = conn_state;
    conn_state = -1;
    ck_assert_int_eq(call("POST", "/v1/barrier", AUTH,
                          "{\"name\":\"start\",\"rank\":1}", NULL, 1, 0),
                     200);
    ck_assert_str_eq(rs.notify, "barrier/start");
    conn_state = r0;
    ck_assert_int_eq(call("POST", "/v1/barrier", AUTH,
                          "{\"name\":\"start\",\"rank\":0}", NULL, 1, 0),
                     200);
    st.roster.heartbeat_timeout = 5;
    ck_assert_int_eq(
        call("POST", "/v1/heartbeat", AUTH, "{\"rank\":1}", NULL, 1, 0), 200);
    ck_assert_int_eq(
        call("POST", "/v1/heartbeat", AUTH, "{\"rank\":7}", NULL, 1, 0), 409);
    ck_assert_int_eq(hvdd_roster_check_heartbeats(&st.roster, 104.0), 0);
    ck_assert_int_eq(hvdd_roster_check_heartbeats(&st.roster, 106.0), 1);
    ck_assert_ptr_nonnull(strstr(st.roster.abort_reason, "rank 0 on host 'a'"));
    ck_assert_int_eq(call("GET", "/v1/status", AUTH, NULL, NULL, 1, 0), 200);
    ck_assert(body_has("\"aborted\":true"));
    ck_assert(body_has("\"state\":\"lost\""));
}
END_TEST

START_TEST(exit_and_abort)
{
    start(1, "a:1");
    ck_assert_int_eq(call("POST", "/v1/register", AUTH,
                          "{\"host\":\"a\",\"pid\":5}", NULL, 1, 0),
                     200);
    ck_assert_int_eq(
        call("POST", "/v1/exit", AUTH, "{\"rank\":0,\"code\":3}", NULL, 1, 0),
        200);
    ck_assert_int_eq(call("POST", "/v1/abort", AUTH,
                          "{\"reason\":\"operator says stop\"}", NULL, 1, 0),
                     200);
    ck_assert_str_eq(rs.notify, "*");
    ck_assert_int_eq(call("GET", "/v1/status", AUTH, NULL, NULL, 1, 0), 200);
    ck_assert(body_has("\"exit_code\":3"));
    ck_assert(body_has("\"abort_reason\":\"operator says stop\""));
}
END_TEST

/* integers past int are refused, not cut (4294967296 was rank 0), and a
 * host name no host list could hold is refused at once (it wedged the
 * plan made from the arrivals: the job could never start) */
static const struct {
    const char *path, *body, *says;
} refused_400[] = {
    {"/v1/register", "{\"host\":\"a\",\"pid\":5,\"rank\":4294967296}", NULL},
    {"/v1/register", "{\"host\":\"a\",\"pid\":4294967397}", NULL},
    {"/v1/register", "{\"host\":\"node a\",\"pid\":5}",
     "bad host name 'node a'"},
    {"/v1/exit", "{\"rank\":4294967297,\"code\":3}", NULL},
    {"/v1/exit", "{\"rank\":1,\"code\":4294967299}", NULL},
    {"/v1/heartbeat", "{\"rank\":-4294967295}", NULL},
    {"/v1/barrier", "{\"name\":\"b\",\"rank\":0,\"round\":1e3}", NULL},
};

START_TEST(out_of_range_integers_and_bad_names_are_400)
{
    start(2, NULL);
    for (size_t i = 0; i < sizeof(refused_400) / sizeof(refused_400[0]); i++) {
        ck_assert_msg(call("POST", refused_400[i].path, AUTH,
                           refused_400[i].body, NULL, 1, 0) == 400,
                      "%s %s: %d", refused_400[i].path, refused_400[i].body,
                      rs.status);
        if (refused_400[i].says)
            ck_assert_ptr_nonnull(strstr(rs.body, refused_400[i].says));
    }
    ck_assert_int_eq(st.roster.narrivals, 0);
}
END_TEST

/* a route of another method is 405, a name that only looks like part of
 * one 404 (a substring test made /v1/a and /v1/ster 405) */
START_TEST(routes_405_only_for_their_own_names)
{
    start(1, "a:1");
    ck_assert_int_eq(call("GET", "/v1/a", AUTH, NULL, NULL, 1, 0), 404);
    ck_assert_int_eq(call("GET", "/v1/ster", AUTH, NULL, NULL, 1, 0), 404);
    ck_assert_int_eq(call("GET", "/v1/agent", AUTH, NULL, NULL, 1, 0), 405);
    ck_assert_int_eq(call("GET", "/v1/register", AUTH, NULL, NULL, 1, 0), 405);
    ck_assert_int_eq(call("POST", "/v1/status", AUTH, "{}", NULL, 1, 0), 405);
    ck_assert_int_eq(call("POST", "/job", NULL, NULL, NULL, 1, 0), 405);
    ck_assert_int_eq(call("HEAD", "/job", NULL, NULL, NULL, 1, 0), 405);
    ck_assert_int_eq(call("GET", "/job", NULL, NULL, NULL, 1, 0), 200);
}
END_TEST

/* The reason reaches hvdrun as one "abort REASON" line: a newline in it
 * made lines of hvdrun's protocol ("kill"); cut to fit, it keeps whole
 * UTF-8 characters (a split one lost the reason from the status) */
START_TEST(abort_reason_is_one_line_of_whole_characters)
{
    char body[700] = "{\"reason\":\"";

    start(1, "a:1");
    ck_assert_int_eq(call("POST", "/v1/abort", AUTH,
                          "{\"reason\":\"loss is NaN\\nkill\\r\"}", NULL, 1, 0),
                     200);
    ck_assert_str_eq(st.roster.abort_reason, "loss is NaN kill ");
    st.roster.aborted = 0;
    memset(body + strlen(body), 'a', 510);
    snprintf(body + strlen(body), sizeof(body) - strlen(body), "\\u00e9\"}");
    ck_assert_int_eq(call("POST", "/v1/abort", AUTH, body, NULL, 1, 0), 200);
    ck_assert_uint_eq(strlen(st.roster.abort_reason), 510);
    ck_assert_int_eq(call("GET", "/v1/status", AUTH, NULL, NULL, 1, 0), 200);
    ck_assert(body_has("\"abort_reason\":\"aaaa"));
}
END_TEST

/* Three hosts; eth0 is called ens5 on b; docker0 is the same everywhere. */
static void
agents_report_in(int answer_real)
{
    static const char *names[] = {"a", "b", "c"};
    char body[512];

    for (int h = 0; h < 3; h++) {
        snprintf(body, sizeof(body),
                 "{\"host\":\"%s\",\"id\":\"id-%s\",\"probe_port\":%d,"
                 "\"interfaces\":[{\"name\":\"lo\",\"addr\":\"127.0.0.1\","
                 "\"prefix\":8},{\"name\":\"%s\",\"addr\":\"10.1.0.%d\","
                 "\"prefix\":16},{\"name\":\"docker0\",\"addr\":"
                 "\"172.17.0.1\",\"prefix\":16}]}",
                 names[h], names[h], 7000 + h, h == 1 ? "ens5" : "eth0", h + 1);
        conn_state = -1;
        ck_assert_int_eq(call("POST", "/v1/agent", AUTH, body, NULL, 1, 0),
                         200);
        if (h == 0) { /* targets wait for every agent */
            ck_assert_int_eq(call("POST", "/v1/agent/targets", AUTH,
                                  "{\"host\":\"a\"}", NULL, 1, 0),
                             0);
            ck_assert_str_eq(rs.wait_event, "agents");
        }
    }
    ck_assert_int_eq(
        call("POST", "/v1/agent/targets", AUTH, "{\"host\":\"c\"}", NULL, 1, 0),
        200);
    ck_assert(body_has("\"peer\":\"a\""));
    ck_assert(body_has("\"id\":\"id-a\""));
    ck_assert(body_has("\"port\":7000"));
    ck_assert(body_has("\"addrs\":[\"10.1.0.1\",\"172.17.0.1\"]"));
    for (int h = 0; h < 3; h++) {
        int next = (h + 1) % 3;
        snprintf(body, sizeof(body),
                 "{\"host\":\"%s\",\"results\":[{\"addr\":\"10.1.0.%d\","
                 "\"answer\":\"%s\"},{\"addr\":\"172.17.0.1\","
                 "\"answer\":\"id-%s\"}]}",
                 names[h], next + 1,
                 answer_real ? (next == 0   ? "id-a"
                                : next == 1 ? "id-b"
                                            : "id-c")
                             : "",
                 names[h]);
        if (h == 0) {
            ck_assert_int_eq(call("POST", "/v1/agent/decision", AUTH,
                                  "{\"host\":\"a\"}", NULL, 1, 0),
                             0);
            ck_assert_str_eq(rs.wait_event, "nic");
        }
        ck_assert_int_eq(
            call("POST", "/v1/agent/probes", AUTH, body, NULL, 1, 0), 200);
    }
    ck_assert_str_eq(rs.notify, "nic");
}

/* An agent reports the end of any rank, registered or not. */
START_TEST(exit_of_unregistered_rank)
{
    start(2, "a:2");
    ck_assert_int_eq(call("POST", "/v1/exit", AUTH,
                          "{\"rank\":1,\"code\":7,\"pid\":42}", NULL, 1, 0),
                     200);
    ck_assert_int_eq(
        call("POST", "/v1/exit", AUTH, "{\"rank\":2,\"code\":7}", NULL, 1, 0),
        409);
    ck_assert_int_eq(call("GET", "/v1/status", AUTH, NULL, NULL, 1, 0), 200);
    ck_assert(body_has("\"rank\":1,\"host\":\"a\",\"state\":\"exited\","
                       "\"pid\":42,\"exit_code\":7"));
    ck_assert(body_has("\"rank\":0,\"host\":\"a\",\"state\":\"pending\""));
}
END_TEST

/* The KV routes take the job's hosts: the addresses their agents
 * reported, and nothing else. */
START_TEST(agent_addresses_may_use_the_store)
{
    start(3, "a:1,b:1,c:1");
    peer = "10.1.0.2";
    ck_assert_int_eq(call("PUT", "/global/k", NULL, "v", NULL, 0, 0), 403);
    peer = NULL;
    agents_report_in(1);
    peer = "10.1.0.2";
    ck_assert_int_eq(call("PUT", "/global/k", NULL, "v", NULL, 0, 0), 200);
    peer = "10.1.0.9";
    ck_assert_int_eq(call("GET", "/global/k", NULL, NULL, NULL, 0, 0), 403);
    peer = NULL;
}
END_TEST

/* An agent that goes silent between registering and its exit stops the
 * job with its host named; one that said it is done does not. (call()
 * stamps every request at t=100.) */
START_TEST(agent_heartbeats)
{
    start(3, "a:1,b:1,c:1");
    st.roster.heartbeat_timeout = 5;
    ck_assert_int_eq(call("POST", "/v1/agent/heartbeat", AUTH,
                          "{\"host\":\"b\"}", NULL, 1, 0),
                     409); /* not registered yet */
    agents_report_in(1);
    ck_assert_int_eq(call("POST", "/v1/agent/heartbeat", AUTH,
                          "{\"host\":\"b\"}", NULL, 1, 0),
                     200);
    ck_assert_int_eq(
        call("POST", "/v1/agent/exit", AUTH, "{\"host\":\"a\"}", NULL, 1, 0),
        200);
    ck_assert_int_eq(
        call("POST", "/v1/agent/exit", AUTH, "{\"host\":\"c\"}", NULL, 1, 0),
        200);
    ck_assert_int_eq(hvdd_roster_check_heartbeats(&st.roster, 104.0), 0);
    ck_assert_int_eq(hvdd_roster_check_heartbeats(&st.roster, 106.0), 1);
    ck_assert_str_eq(st.roster.abort_reason,
                     "the agent of host 'b' sent no heartbeat for 6.0 s");
}
END_TEST

START_TEST(agents_choose_the_network)
{
    start(3, "a:1,b:1,c:1");
    agents_report_in(1);
    ck_assert_int_eq(call("POST", "/v1/agent/decision", AUTH,
                          "{\"host\":\"b\"}", NULL, 1, 0),
                     200);
    ck_assert(body_has("\"network\":\"10.1.0.0/16\""));
    ck_assert(body_has("\"iface\":\"ens5\""));
    ck_assert(body_has("\"addr\":\"10.1.0.2\""));
    ck_assert(body_has("\"master_addr\":\"10.1.0.1\""));
    /* a worker on b gets b's own name for the interface */
    ck_assert_int_eq(call("POST", "/v1/register", AUTH,
                          "{\"host\":\"b\",\"pid\":4,\"rank\":1}", NULL, 1, 0),
                     200);
    ck_assert(body_has("\"iface\":\"ens5\""));
    ck_assert(body_has("\"master_addr\":\"10.1.0.1\""));
    ck_assert_int_eq(call("GET", "/v1/status", AUTH, NULL, NULL, 1, 0), 200);
    ck_assert(body_has("\"decision\":\"chosen\""));
    ck_assert(body_has("{\"name\":\"b\",\"ranks\":1,\"iface\":\"ens5\","
                       "\"addr\":\"10.1.0.2\",\"agent\":\"running\"}"));
}
END_TEST

START_TEST(agents_without_a_common_network)
{
    start(3, "a:1,b:1,c:1");
    agents_report_in(0);
    ck_assert_int_eq(call("POST", "/v1/agent/decision", AUTH,
                          "{\"host\":\"c\"}", NULL, 1, 0),
                     409);
    ck_assert(body_has("host 'a' [eth0 10.1.0.1/16: no answer from 'b'; "
                       "docker0 172.17.0.1/16: answered by the wrong host "
                       "for 'b'; ]"));
    ck_assert_int_eq(call("GET", "/v1/status", AUTH, NULL, NULL, 1, 0), 200);
    ck_assert(body_has("\"decision\":\"failed\""));
}
END_TEST

START_TEST(agent_errors)
{
    start(2, "a:1,b:1");
    ck_assert_int_eq(call("POST", "/v1/agent", AUTH,
                          "{\"host\":\"z\",\"id\":\"i\",\"probe_port\":1,"
                          "\"interfaces\":[]}",
                          NULL, 1, 0),
                     409);
    ck_assert(body_has("'z' is not a host of the plan"));
    ck_assert_int_eq(call("POST", "/v1/agent", AUTH,
                          "{\"host\":\"a\",\"id\":\"i\",\"probe_port\":1,"
                          "\"interfaces\":[{\"name\":\"eth0\"}]}",
                          NULL, 1, 0),
                     400);
    ck_assert_int_eq(call("POST", "/v1/agent", AUTH,
                          "{\"host\":\"a\",\"id\":\"i\",\"probe_port\":1,"
                          "\"interfaces\":[]}",
                          NULL, 1, 0),
                     200);
    ck_assert_int_eq(call("POST", "/v1/agent", AUTH,
                          "{\"host\":\"a\",\"id\":\"i\",\"probe_port\":1,"
                          "\"interfaces\":[]}",
                          NULL, 1, 0),
                     409);
    ck_assert(body_has("registered already"));
    ck_assert_int_eq(call("POST", "/v1/agent/probes", AUTH,
                          "{\"host\":\"b\",\"results\":[]}", NULL, 1, 0),
                     409);
}
END_TEST

/* Registers pid on host as rank; the status of the call. */
static int
reg(const char *host, int pid, int rank, int round)
{
    char body[160];

    snprintf(body, sizeof(body),
             "{\"host\":\"%s\",\"pid\":%d,\"rank\":%d,\"round\":%d}", host, pid,
             rank, round);
    conn_state = -1;
    return call("POST", "/v1/register", AUTH, body, NULL, 1, 0);
}

static int
rejoin(const char *host, int pid, int after, int deadline_passed)
{
    char body[160];

    snprintf(body, sizeof(body), "{\"host\":\"%s\",\"pid\":%d,\"after\":%d}",
             host, pid, after);
    conn_state = -1;
    return call("POST", "/v1/rejoin", AUTH, body, NULL, 1, deadline_passed);
}

/* Hosts a:2,b:2,c:2; b fails: a and c go on, older hosts first. */
START_TEST(round_after_a_host_failed)
{
    start(6, "a:2,b:2,c:2");
    for (int r = 0; r < 6; r++)
        ck_assert_int_eq(reg(r < 2   ? "a"
                             : r < 4 ? "b"
                                     : "c",
                             100 + r, r, 0),
                         200);
    ck_assert_int_eq(rejoin("a", 100, 0, 0), 0); /* held: no round 1 yet */
    ck_assert_str_eq(rs.wait_event, "round");
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"a:2,c:2\",\"keep\":[{\"host\":\"a\","
                          "\"pid\":100},{\"host\":\"a\",\"pid\":101},"
                          "{\"host\":\"c\",\"pid\":104},{\"host\":\"c\","
                          "\"pid\":105}]}",
                          NULL, 1, 0),
                     200);
    ck_assert(body_has("\"round\":1"));
    ck_assert(body_has("\"size\":4"));
    ck_assert_str_eq(rs.notify, "*"); /* held requests answered */
    /* c's second worker is rank 3 now, local 1 of 2, cross 1 of 2 */
    ck_assert_int_eq(rejoin("c", 105, 0, 0), 200);
    ck_assert(body_has("\"rank\":3"));
    ck_assert(body_has("\"local_rank\":1"));
    ck_assert(body_has("\"cross_rank\":1"));
    ck_assert(body_has("\"cross_size\":2"));
    ck_assert(body_has("\"round\":1"));
    ck_assert(body_has("\"fresh\":false"));
    /* b's workers are not in it */
    ck_assert_int_eq(rejoin("b", 102, 0, 0), 410);
    ck_assert(body_has("host 'b' pid 102 is not in round 1"));
    /* the kept rank is its survivor's: a stranger cannot take it */
    ck_assert_int_eq(reg("c", 999, 3, 1), 409);
    ck_assert(body_has("kept for pid 105"));
    ck_assert_int_eq(reg("c", 105, 3, 1), 200);
    /* calls of round 0 are refused, naming both rounds */
    ck_assert_int_eq(call("POST", "/v1/heartbeat", AUTH,
                          "{\"rank\":3,\"round\":0}", NULL, 1, 0),
                     409);
    ck_assert(body_has("round 0 is over: the job is in round 1"));
    ck_assert_int_eq(call("POST", "/v1/heartbeat", AUTH,
                          "{\"rank\":3,\"round\":1}", NULL, 1, 0),
                     200);
    /* b's late exit report, naming its old rank 2 (c's first worker's
     * rank now): refused, nothing changes */
    ck_assert_int_eq(call("POST", "/v1/exit", AUTH,
                          "{\"rank\":2,\"code\":137,\"pid\":102}", NULL, 1, 0),
                     409);
    ck_assert(body_has("pid 102 does not have rank 2 in round 1"));
    ck_assert_int_eq(rejoin("c", 104, 0, 0), 200);
    ck_assert(body_has("\"rank\":2"));
    ck_assert_int_eq(call("POST", "/v1/heartbeat", AUTH,
                          "{\"rank\":3,\"round\":7}", NULL, 1, 0),
                     409);
    ck_assert(body_has("no round 7: the job is in round 1"));
    ck_assert_int_eq(call("GET", "/v1/status", AUTH, NULL, NULL, 1, 0), 200);
    ck_assert(body_has("\"round\":1"));
    ck_assert(body_has("\"state\":\"kept\""));
    /* once aborted, a rejoin is told so */
    ck_assert_int_eq(
        call("POST", "/v1/abort", AUTH, "{\"reason\":\"test\"}", NULL, 1, 0),
        200);
    ck_assert_int_eq(rejoin("a", 100, 1, 0), 410);
    ck_assert(body_has("job aborted: test"));
}
END_TEST

/* A round that needs new workers says so (they need the state), and its
 * free ranks take registrations of new workers. */
START_TEST(round_with_new_workers)
{
    start(4, "a:2,b:2");
    for (int r = 0; r < 4; r++)
        ck_assert_int_eq(reg(r < 2 ? "a" : "b", 100 + r, r, 0), 200);
    /* b's rank 3 failed; b comes back with both slots */
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"a:2,b:2\",\"keep\":[{\"host\":\"a\","
                          "\"pid\":100},{\"host\":\"a\",\"pid\":101},"
                          "{\"host\":\"b\",\"pid\":102}]}",
                          NULL, 1, 0),
                     200);
    ck_assert(body_has("{\"host\":\"b\",\"pid\":0}"));
    ck_assert_int_eq(rejoin("b", 102, 0, 0), 200);
    ck_assert(body_has("\"rank\":2"));
    ck_assert(body_has("\"fresh\":true"));
    ck_assert_int_eq(reg("b", 200, 3, 1), 200);
    /* the launcher's order is the ranks': b's survivor first */
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"b:1,a:1\",\"keep\":[{\"host\":\"a\","
                          "\"pid\":100},{\"host\":\"b\",\"pid\":102}]}",
                          NULL, 1, 0),
                     200);
    ck_assert(body_has("\"ranks\":[{\"host\":\"b\",\"pid\":102},"
                       "{\"host\":\"a\",\"pid\":100}]"));
    ck_assert_int_eq(rejoin("b", 102, 1, 0), 200);
    ck_assert(body_has("\"rank\":0"));
    ck_assert(body_has("\"round\":2"));
    /* no round after 2: the wait ends with 408 */
    ck_assert_int_eq(rejoin("a", 100, 2, 1), 408);
}
END_TEST

/* "keep": "registered": hvdd's own list of who runs, in rank order; the
 * dead worker whose exit was not reported yet is on the dropped host */
START_TEST(round_keeps_the_registered)
{
    start(4, "a:2,b:2");
    for (int r = 0; r < 4; r++)
        ck_assert_int_eq(reg(r < 2 ? "a" : "b", 100 + r, r, 0), 200);
    ck_assert_int_eq(call("POST", "/v1/exit", AUTH,
                          "{\"rank\":1,\"code\":0,\"pid\":101}", NULL, 1, 0),
                     200); /* finished: not kept */
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"b:2,a:2\",\"keep\":\"registered\"}",
                          NULL, 1, 0),
                     200);
    ck_assert(body_has("\"ranks\":[{\"host\":\"b\",\"pid\":102},"
                       "{\"host\":\"b\",\"pid\":103},{\"host\":\"a\","
                       "\"pid\":100},{\"host\":\"a\",\"pid\":0}]"));
    /* trimmed: a's waiting rank goes (b's 2 kept, a's rank 3 not
     * registered in round 1) */
    ck_assert_int_eq(reg("a", 100, 2, 1), 200);
    ck_assert_int_eq(reg("b", 102, 0, 1), 200);
    ck_assert_int_eq(reg("b", 103, 1, 1), 200);
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"b:2,a:2\",\"keep\":\"registered\","
                          "\"trim\":true}",
                          NULL, 1, 0),
                     200);
    ck_assert(body_has("\"size\":3"));
    ck_assert(body_has("{\"host\":\"a\",\"pid\":100}]"));
    ck_assert_int_eq(rejoin("a", 100, 1, 0), 200);
    ck_assert(body_has("\"fresh\":false"));
    /* round 2's three are kept, none registered again yet: they still
     * count as running; "min" above them starts nothing */
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"b:2,a:2\",\"keep\":\"registered\","
                          "\"trim\":true,\"min\":4}",
                          NULL, 1, 0),
                     200);
    ck_assert(body_has("\"started\":false"));
    ck_assert(body_has("\"workers\":3"));
    ck_assert(body_has("\"round\":2"));
    /* b leaves: a's survivor goes on alone, though not registered again */
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"a:2\",\"keep\":\"registered\","
                          "\"trim\":true,\"min\":1}",
                          NULL, 1, 0),
                     200);
    ck_assert(body_has("\"started\":true"));
    ck_assert(body_has("\"ranks\":[{\"host\":\"a\",\"pid\":100}]"));
}
END_TEST

START_TEST(bad_rounds)
{
    start(2, "a:1,b:1");
    ck_assert_int_eq(
        call("POST", "/v1/round", AUTH, "{\"keep\":[]}", NULL, 1, 0), 400);
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"a:1,zz:1\",\"keep\":[]}", NULL, 1, 0),
                     409);
    ck_assert(body_has("host 'zz' is not one of this job's"));
    ck_assert_int_eq(call("POST", "/v1/round", NULL,
                          "{\"hosts\":\"a:1\",\"keep\":[]}", NULL, 1, 0),
                     401);
    ck_assert_int_eq(
        call("POST", "/v1/rejoin", AUTH, "{\"host\":\"a\"}", NULL, 1, 0), 400);
    ck_assert_int_eq(call("GET", "/v1/status", AUTH, NULL, NULL, 1, 0), 200);
    ck_assert(body_has("\"round\":0"));
}
END_TEST

/* An agent of host `name` with one interface; the status of the call. */
static int
agent_with(const char *name, const char *iface, const char *addr, int prefix)
{
    char body[512];

    snprintf(body, sizeof(body),
             "{\"host\":\"%s\",\"id\":\"id-%s\",\"probe_port\":7100,"
             "\"interfaces\":[{\"name\":\"%s\",\"addr\":\"%s\","
             "\"prefix\":%d}]}",
             name, name, iface, addr, prefix);
    conn_state = -1;
    return call("POST", "/v1/agent", AUTH, body, NULL, 1, 0);
}

static int
agent_call(const char *what, const char *name, const char *extra)
{
    char path[64], body[256];

    snprintf(path, sizeof(path), "/v1/agent/%s", what);
    snprintf(body, sizeof(body), "{\"host\":\"%s\"%s}", name, extra);
    conn_state = -1;
    return call("POST", path, AUTH, body, NULL, 1, 0);
}

static int
add_host(const char *name)
{
    char body[128];

    snprintf(body, sizeof(body), "{\"host\":\"%s\"}", name);
    return call("POST", "/v1/host", AUTH, body, NULL, 1, 0);
}

/* Hosts join a running job: d is taken in after the network choice, its
 * agent gets its address on that network without probes, and a round
 * gives it new ranks after the running ones; e, off the network, is told
 * why; b leaves and comes back, its agent registering again. */
START_TEST(hosts_join_a_running_job)
{
    start(3, "a:1,b:1,c:1");
    ck_assert_int_eq(add_host("d"), 409); /* the network is not chosen */
    ck_assert(body_has("once its network is chosen"));
    agents_report_in(1);
    for (int r = 0; r < 3; r++)
        ck_assert_int_eq(reg(r == 0   ? "a"
                             : r == 1 ? "b"
                                      : "c",
                             100 + r, r, 0),
                         200);
    ck_assert_int_eq(add_host("a"), 409);
    ck_assert(body_has("host 'a' has running ranks in round 0"));
    ck_assert_int_eq(add_host("bad name"), 409);
    ck_assert_int_eq(add_host("d"), 200);
    ck_assert(body_has("\"index\":3"));
    ck_assert_int_eq(agent_with("d", "eth1", "10.1.0.4", 16), 200);
    ck_assert_int_eq(agent_call("targets", "d", ""), 200);
    ck_assert(body_has("\"addrs\":[]"));
    ck_assert_int_eq(agent_call("probes", "d", ",\"results\":[]"), 200);
    ck_assert_int_eq(agent_call("decision", "d", ""), 200);
    ck_assert(body_has("\"iface\":\"eth1\""));
    ck_assert(body_has("\"addr\":\"10.1.0.4\""));
    ck_assert_int_eq(add_host("e"), 200);
    ck_assert_int_eq(agent_with("e", "eth0", "192.168.7.5", 24), 200);
    ck_assert_int_eq(agent_call("decision", "e", ""), 409);
    ck_assert(body_has("host 'e' has no address on the job's network "
                       "10.1.0.0/16"));
    /* d's two new ranks come after the three that run */
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"a:1,b:1,c:1\",\"keep\":"
                          "\"registered\",\"trim\":true,\"min\":5,"
                          "\"add\":\"d:2\"}",
                          NULL, 1, 0),
                     200);
    ck_assert(body_has("\"size\":5"));
    ck_assert(body_has("{\"host\":\"c\",\"pid\":102},{\"host\":\"d\","
                       "\"pid\":0},{\"host\":\"d\",\"pid\":0}]"));
    ck_assert_int_eq(reg("d", 200, 4, 1), 200);
    ck_assert(body_has("\"local_rank\":1,\"local_size\":2"));
    ck_assert(body_has("\"iface\":\"eth1\""));
    ck_assert(body_has("\"fresh\":true"));
    /* b fails and leaves; later it comes back with a new agent */
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"a:1,c:1,d:2\",\"keep\":"
                          "\"registered\",\"trim\":true}",
                          NULL, 1, 0),
                     200);
    ck_assert_int_eq(agent_with("b", "ens5", "10.1.0.2", 16), 409);
    ck_assert_int_eq(add_host("b"), 200);
    ck_assert(body_has("\"index\":1"));
    ck_assert_int_eq(agent_with("b", "ens5", "10.1.0.2", 16), 200);
    ck_assert_int_eq(agent_call("decision", "b", ""), 200);
    ck_assert(body_has("\"addr\":\"10.1.0.2\""));
}
END_TEST

/* A host whose ranks ended may come back before any round drops them
 * (a job below --min-np makes none); an unregistered host added first
 * does not hold up a later one's agent. */
START_TEST(a_failed_host_comes_back_below_min_np)
{
    start(3, "a:1,b:1,c:1");
    agents_report_in(1);
    for (int r = 0; r < 3; r++)
        ck_assert_int_eq(reg(r == 0   ? "a"
                             : r == 1 ? "b"
                                      : "c",
                             100 + r, r, 0),
                         200);
    ck_assert_int_eq(call("POST", "/v1/exit", AUTH,
                          "{\"rank\":2,\"code\":3,\"pid\":102}", NULL, 1, 0),
                     200);
    ck_assert_int_eq(add_host("c"), 200);
    ck_assert_int_eq(add_host("never"), 200);
    ck_assert_int_eq(agent_with("c", "eth0", "10.1.0.3", 16), 200);
    ck_assert_int_eq(agent_call("targets", "c", ""), 200);
    ck_assert_int_eq(agent_call("decision", "c", ""), 200);
    ck_assert(body_has("\"addr\":\"10.1.0.3\""));
}
END_TEST

/* A host's new workers still starting when another host fails go on
 * into the next round (its agent is alive): they register there, first
 * naming their old round (refused), then for any rank of their host. */
START_TEST(a_joiners_workers_survive_a_round_while_they_start)
{
    start(3, "a:1,b:1,c:1");
    agents_report_in(1);
    for (int r = 0; r < 3; r++)
        ck_assert_int_eq(reg(r == 0   ? "a"
                             : r == 1 ? "b"
                                      : "c",
                             100 + r, r, 0),
                         200);
    ck_assert_int_eq(add_host("x"), 200);
    ck_assert_int_eq(agent_with("x", "eth0", "10.1.0.7", 16), 200);
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"a:1,b:1,c:1\",\"keep\":"
                          "\"registered\",\"trim\":true,\"add\":\"x:2\"}",
                          NULL, 1, 0),
                     200);
    /* b fails before x's workers register */
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"a:1,c:1,x:2\",\"keep\":"
                          "\"registered\",\"trim\":true,\"min\":4}",
                          NULL, 1, 0),
                     200);
    ck_assert(body_has("\"size\":4"));
    ck_assert(body_has("{\"host\":\"x\",\"pid\":0},{\"host\":\"x\","
                       "\"pid\":0}]"));
    ck_assert_int_eq(reg("x", 300, 3, 1), 409);
    ck_assert(body_has("round 1 is over: the job is in round 2"));
    conn_state = -1;
    ck_assert_int_eq(call("POST", "/v1/register", AUTH,
                          "{\"host\":\"x\",\"pid\":300,\"rank\":-1}", NULL, 1,
                          0),
                     200);
    ck_assert(body_has("\"rank\":2"));
    ck_assert(body_has("\"round\":2"));
}
END_TEST

/* A rank's warning for the launcher (the stall check's): kept until the
 * server passes it on; the token is needed, and a text. */
START_TEST(warnings_for_the_launcher)
{
    start(2, "a:2");
    ck_assert_int_eq(
        call("POST", "/v1/warn", NULL, "{\"text\":\"x\"}", NULL, 1, 0), 401);
    ck_assert_int_eq(call("POST", "/v1/warn", AUTH, "{}", NULL, 1, 0), 400);
    ck_assert_int_eq(st.roster.warning_new, 0);
    ck_assert_int_eq(call("POST", "/v1/warn", AUTH,
                          "{\"text\":\"Missing ranks:\\n1: [a]\"}", NULL, 1, 0),
                     200);
    ck_assert_int_eq(st.roster.warning_new, 1);
    ck_assert_str_eq(st.roster.warning, "Missing ranks:\n1: [a]");
}
END_TEST

/* The job's page: served without the token (it holds no job data); the
 * status it reads needs the token and keeps failed workers across
 * rounds. */
START_TEST(the_job_page)
{
    start(2, "a:2");
    ck_assert_int_eq(call("GET", "/job", NULL, NULL, NULL, 1, 0), 200);
    ck_assert_str_eq(rs.content_type, "text/html; charset=utf-8");
    ck_assert(body_has("<title>hvdrun job</title>"));
    ck_assert(body_has("Authorization"));
    ck_assert(!body_has(TOKEN));
    ck_assert_int_ne(call("POST", "/job", NULL, NULL, NULL, 1, 0), 200);
    ck_assert_int_eq(call("GET", "/v1/status", NULL, NULL, NULL, 1, 0), 401);
    ck_assert_int_eq(reg("a", 10, 0, 0), 200);
    ck_assert_int_eq(reg("a", 11, 1, 0), 200);
    ck_assert_int_eq(call("POST", "/v1/exit", AUTH,
                          "{\"rank\":1,\"code\":137,\"pid\":11}", NULL, 1, 0),
                     200);
    ck_assert_int_eq(call("POST", "/v1/round", AUTH,
                          "{\"hosts\":\"a:1\",\"keep\":\"registered\","
                          "\"trim\":true}",
                          NULL, 1, 0),
                     200);
    ck_assert_int_eq(call("GET", "/v1/status", AUTH, NULL, NULL, 1, 0), 200);
    ck_assert(body_has("\"failures\":[{\"round\":0,\"rank\":1,\"host\":"
                       "\"a\",\"pid\":11,\"exit_code\":137}]"));
    ck_assert(body_has("\"agent\":\"this host\""));
}
END_TEST

/* A one-host job whose host is not the launcher's (salloc -N 1 from a
 * login node, -H of one other host) has that host's agent: it gets the
 * loopback chosen at the start. It got "no other host can join", and
 * every such job failed. */
START_TEST(the_one_host_of_a_one_host_job_gets_loopback)
{
    start(2, "a:2");
    ck_assert_int_eq(agent_with("a", "eth0", "10.1.0.9", 16), 200);
    ck_assert_int_eq(agent_call("decision", "a", ""), 200);
    ck_assert(body_has("\"iface\":\"lo\""));
    ck_assert(body_has("\"addr\":\"127.0.0.1\""));
}
END_TEST

/* A one-host job uses loopback: no other host can join it. */
START_TEST(no_host_joins_a_loopback_job)
{
    start(2, "a:2");
    ck_assert_int_eq(add_host("z"), 200);
    ck_assert_int_eq(agent_with("z", "eth0", "10.1.0.9", 16), 200);
    ck_assert_int_eq(agent_call("decision", "z", ""), 409);
    ck_assert(body_has("workers use loopback: no other host can join it"));
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("request");
    TCase *tc = tcase_create("api");

    tcase_add_checked_fixture(tc, NULL, teardown);
    ADD(tc, control_needs_the_token);
    ADD(tc, the_one_host_of_a_one_host_job_gets_loopback);
    ADD(tc, store_only_for_the_jobs_addresses);
    ADD(tc, horovod_protocol);
    ADD(tc, bogus_deletes_do_not_finalise);
    ADD(tc, job_scopes_need_the_token);
    ADD(tc, open_writes_cannot_starve_the_job);
    ADD(tc, bad_requests);
    ADD(tc, oversized_body_refused);
    ADD(tc, long_poll_waits_then_answers);
    ADD(tc, planned_registration);
    ADD(tc, standalone_registration_waits_for_everyone);
    ADD(tc, barrier_and_heartbeats);
    ADD(tc, abort_reason_is_one_line_of_whole_characters);
    ADD(tc, out_of_range_integers_and_bad_names_are_400);
    ADD(tc, routes_405_only_for_their_own_names);
    ADD(tc, exit_and_abort);
    ADD(tc, agents_choose_the_network);
    ADD(tc, agent_addresses_may_use_the_store);
    ADD(tc, agent_heartbeats);
    ADD(tc, exit_of_unregistered_rank);
    ADD(tc, agents_without_a_common_network);
    ADD(tc, agent_errors);
    ADD(tc, round_after_a_host_failed);
    ADD(tc, round_with_new_workers);
    ADD(tc, round_keeps_the_registered);
    ADD(tc, bad_rounds);
    ADD(tc, hosts_join_a_running_job);
    ADD(tc, no_host_joins_a_loopback_job);
    ADD(tc, a_failed_host_comes_back_below_min_np);
    ADD(tc, warnings_for_the_launcher);
    ADD(tc, the_job_page);
    ADD(tc, a_joiners_workers_survive_a_round_while_they_start);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
