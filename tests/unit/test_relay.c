/* relay.c, hvdrun-ssh's end of the agents' calls, against a real hvdd
 * over its channel: what an agent may not ask is answered "refused"
 * without reaching hvdd, every answer carries its call's id to the host
 * and generation that asked, an agent has at most five calls waiting, a
 * call hvdd holds past its timeout or that finds hvdd gone says so,
 * freeing with calls waiting is safe, and quiet calls (reports) get no
 * answer and are in before the launcher's next call. */
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hvdd_chan.h"
#include "hvdd_fixture.h"
#include "relay.h"
#include "unit.h"

static hvdd_fixture hvdd;
static hvdd_chan *ch;
static relay *r;

static void
setup(void)
{
    hvdd_fixture_start(&hvdd);
    ck_assert_ptr_nonnull(ch = hvdd_chan_new(hvdd.chan));
    ck_assert_ptr_nonnull(r = relay_new(ch));
}

static void
teardown(void)
{
    relay_free(r);
    hvdd_chan_free(ch);
    hvdd_fixture_stop(&hvdd);
}

/* The next answer, waited for up to 15 s: its JSON (the caller decrefs),
 * host and gen. */
static json_t *
next_answer(int *host, unsigned *gen)
{
    char *line = NULL;
    json_t *a;

    for (int i = 0; i < 150 && !relay_take(r, host, gen, &line); i++) {
        struct pollfd p = {-1, 0, 0};
        p.fd = relay_fd(r, &p.events);
        poll(&p, 1, 100);
    }
    ck_assert_ptr_nonnull(line);
    ck_assert_int_eq(strncmp(line, "answer ", 7), 0);
    ck_assert_int_eq(line[strlen(line) - 1], '\n');
    ck_assert_ptr_nonnull(a = json_loads(line + 7, 0, NULL));
    free(line);
    return a;
}

static int
code_of(json_t *a)
{
    return (int)json_integer_value(json_object_get(a, "code"));
}
static void
refused(const char *call, json_int_t id, int want_code)
{
    int host = -1;
    unsigned gen = 0;
    json_t *a;

    relay_call(r, 3, 7, call);
    a = next_answer(&host, &gen);
    ck_assert_int_eq(host, 3);
    ck_assert_uint_eq(gen, 7);
    ck_assert_int_eq(json_integer_value(json_object_get(a, "id")), id);
    ck_assert_int_eq(json_integer_value(json_object_get(a, "code")), want_code);
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(a, "error")), "refused"));
    json_decref(a);
}

START_TEST(what_an_agent_may_not_ask_is_refused)
{
    refused("not json", 0, HVDD_EINVAL);
    refused("[1,2]", 0, HVDD_EINVAL);
    refused("{\"op\":\"post\",\"what\":\"agent\",\"body\":{}}", 0, HVDD_EINVAL);
    refused("{\"id\":5,\"op\":\"post\",\"what\":\"abort\",\"body\":{}}", 5,
            HVDD_EINVAL);
    refused("{\"id\":6,\"op\":\"post\",\"what\":\"../v1/agent\",\"body\":{}}",
            6, HVDD_EINVAL);
    refused("{\"id\":7,\"op\":\"post\",\"what\":\"agent\"}", 7, HVDD_EINVAL);
    refused("{\"id\":8,\"op\":\"delete\",\"key\":\"k\"}", 8, HVDD_EINVAL);
    refused("{\"id\":9,\"op\":\"get\",\"key\":\"a/b\"}", 9, HVDD_EINVAL);
    refused("{\"id\":10,\"op\":\"get\"}", 10, HVDD_EINVAL);
    refused("{\"id\":11,\"op\":\"put\",\"key\":\"k\"}", 11, HVDD_EINVAL);
    refused("{\"id\":12,\"id\":13,\"op\":\"get\",\"key\":\"k\"}", 0,
            HVDD_EINVAL);
}
END_TEST

START_TEST(deep_json_a_nul_in_a_route_and_no_host_are_refused)
{
    int host = 0;
    unsigned gen = 0;
    json_t *a;

    /* 9 levels inside the call: the body's arrays */
    refused("{\"id\":20,\"op\":\"post\",\"what\":\"agent\","
            "\"body\":{\"x\":[[[[[[[[1]]]]]]]]}}",
            20, HVDD_EINVAL);
    refused("{\"id\":21,\"op\":\"post\",\"what\":\"agent\\u0000x\","
            "\"body\":{}}",
            21, HVDD_EINVAL);
    relay_call(r, -1, 1, "{\"id\":22,\"op\":\"get\",\"key\":\"k\"}");
    a = next_answer(&host, &gen);
    ck_assert_int_eq(host, -1); /* (the fleet drops it: no such host) */
    ck_assert_int_eq(json_integer_value(json_object_get(a, "code")),
                     HVDD_EINVAL);
    json_decref(a);
}
END_TEST

START_TEST(an_agent_has_at_most_five_calls_at_once)
{
    const char *held = "{\"id\":30,\"op\":\"get\",\"key\":\"k\","
                       "\"wait\":20000}";
    int host = -1, refusals = 0, got = 0;
    unsigned gen = 0;

    /* hvdd holds each get until k exists: five wait, the sixth is
     * refused, and another agent's call still goes */
    for (int i = 0; i < 6; i++)
        relay_call(r, 0, 1, held);
    relay_call(r, 1, 1, held);
    {
        json_t *a = next_answer(&host, &gen);
        ck_assert_int_eq(code_of(a), HVDD_EREFUSED);
        ck_assert_int_eq(host, 0);
        json_decref(a);
        refusals++;
    }
    relay_call(r, 2, 1,
               "{\"id\":31,\"op\":\"put\",\"key\":\"k\",\"data\":\"v\"}");
    for (int k = 0; k < 7; k++) {
        json_t *a = next_answer(&host, &gen);
        ck_assert_int_eq(code_of(a), 0);
        if (host != 2) {
            ck_assert_str_eq(json_string_value(json_object_get(a, "data")),
                             "v");
            got++;
        }
        json_decref(a);
    }
    ck_assert_int_eq(refusals, 1);
    ck_assert_int_eq(got, 6);
}
END_TEST

START_TEST(a_call_held_past_its_timeout_says_so)
{
    int host = -1;
    unsigned gen = 0;
    struct timespec t0, t1;
    json_t *a;

    /* targets are held until every agent has registered: none will (a
     * plan of two hosts; of one, loopback is chosen without agents) */
    relay_free(r);
    hvdd_chan_free(ch);
    hvdd_fixture_stop(&hvdd);
    hvdd_fixture_start_hosts(&hvdd, "a:2,b:1");
    ck_assert_ptr_nonnull(ch = hvdd_chan_new(hvdd.chan));
    ck_assert_ptr_nonnull(r = relay_new(ch));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    relay_call(r, 0, 2,
               "{\"id\":40,\"op\":\"post\",\"what\":\"agent/targets\","
               "\"timeout\":300,\"want\":true,\"body\":{\"host\":\"a\"}}");
    a = next_answer(&host, &gen);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_int_eq(json_integer_value(json_object_get(a, "id")), 40);
    ck_assert_int_eq(code_of(a), HVDD_ETIMEOUT);
    ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 5);
    json_decref(a);
}
END_TEST

START_TEST(a_call_that_finds_hvdd_gone_says_so)
{
    int host = -1;
    unsigned gen = 0;
    json_t *a;

    /* one waiting when hvdd dies, one after */
    relay_call(r, 0, 2,
               "{\"id\":41,\"op\":\"get\",\"key\":\"never\",\"wait\":20000}");
    kill(hvdd.pid, SIGKILL);
    a = next_answer(&host, &gen);
    ck_assert_int_eq(json_integer_value(json_object_get(a, "id")), 41);
    ck_assert_int_eq(code_of(a), HVDD_ECONNECT);
    json_decref(a);
    relay_call(r, 0, 2,
               "{\"id\":42,\"op\":\"post\",\"what\":\"agent/heartbeat\","
               "\"timeout\":1000,\"body\":{\"host\":\"h\"}}");
    a = next_answer(&host, &gen);
    ck_assert_int_eq(host, 0);
    ck_assert_uint_eq(gen, 2);
    ck_assert_int_eq(json_integer_value(json_object_get(a, "id")), 42);
    ck_assert_int_eq(code_of(a), HVDD_ECONNECT);
    ck_assert_ptr_nonnull(json_string_value(json_object_get(a, "error")));
    ck_assert_ptr_null(json_object_get(a, "body"));
    json_decref(a);
}
END_TEST

START_TEST(answers_go_to_the_host_and_generation_that_asked)
{
    int seen[3] = {0};

    /* the first is held until the last puts its key: answers come in
     * another order than their calls */
    relay_call(r, 0, 10,
               "{\"id\":100,\"op\":\"get\",\"key\":\"x\","
               "\"wait\":20000}");
    relay_call(r, 1, 11, "{\"id\":101,\"op\":\"get\",\"key\":\"none\"}");
    relay_call(r, 2, 12,
               "{\"id\":102,\"op\":\"put\",\"key\":\"x\",\"data\":\"y\"}");
    for (int k = 0; k < 3; k++) {
        int host = -1;
        unsigned gen = 0;
        json_t *a = next_answer(&host, &gen);
        json_int_t id = json_integer_value(json_object_get(a, "id"));
        ck_assert(host >= 0 && host < 3);
        ck_assert_int_eq(id, 100 + host);
        ck_assert_uint_eq(gen, (unsigned)(10 + host));
        ck_assert_int_eq(code_of(a), host == 1 ? HVDD_ENOTFOUND : 0);
        seen[host]++;
        json_decref(a);
    }
    ck_assert(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
}
END_TEST

START_TEST(freeing_with_calls_waiting)
{
    relay *other = relay_new(ch);

    ck_assert_ptr_nonnull(other);
    for (int i = 0; i < 4; i++)
        relay_call(other, i, 1,
                   "{\"id\":1,\"op\":\"get\",\"key\":\"k\",\"wait\":500}");
    relay_free(other); /* their answers come to nobody: no crash, no leak
                          (the sanitizer builds see either) */
}
END_TEST

/* Host 0's quiet report of rank's end. */
static void
quiet_exit(int id, int rank, int code, int pid)
{
    char call[200];

    snprintf(call, sizeof(call),
             "{\"id\":%d,\"op\":\"post\",\"what\":\"exit\","
             "\"quiet\":true,\"body\":{\"rank\":%d,"
             "\"code\":%d,\"pid\":%d,\"host\":\"h\"}}",
             id, rank, code, pid);
    relay_call(r, 0, 1, call);
}

START_TEST(quiet_calls_get_no_answer_and_are_in_before_the_next_call)
{
    hvdd_chan_answer got = {0};
    int host = -1;
    unsigned gen = 0;
    char *line = NULL;
    json_t *st, *ranks;

    for (int rank = 0; rank < 3; rank++)
        quiet_exit(rank + 1, rank, rank == 1 ? 3 : 0, 1000 + rank);
    /* a host's reports are made in order: the last of rank 2's stays */
    for (int i = 0; i < 5; i++)
        quiet_exit(10 + i, 2, 11 + i, 1002);
    /* no waiting: the status is asked right after, on the same channel */
    ck_assert_int_eq(
        hvdd_chan_call(ch, "GET", "/v1/status", 0, NULL, 0, 5000, &got), 0);
    ck_assert_int_eq(got.status, 200);
    ck_assert_int_eq(relay_take(r, &host, &gen, &line), 0); /* no answer */
    ck_assert_ptr_nonnull(st = json_loadb(got.body, got.len, 0, NULL));
    ranks = json_object_get(st, "ranks");
    ck_assert_int_eq(json_array_size(ranks), 3);
    for (int rank = 0; rank < 3; rank++) {
        json_t *o = json_array_get(ranks, rank);
        ck_assert_str_eq(json_string_value(json_object_get(o, "state")),
                         "exited");
        ck_assert_int_eq(json_integer_value(json_object_get(o, "exit_code")),
                         rank == 1   ? 3
                         : rank == 2 ? 15
                                     : 0);
    }
    json_decref(st);
    free(got.body);
    /* a quiet call that is not a report is refused (hvdd would hold a
     * quiet targets for nobody), and so is a quiet put (answered, as
     * every refusal) */
    relay_call(r, 0, 1,
               "{\"id\":3,\"op\":\"post\",\"what\":\"agent/targets\","
               "\"quiet\":true,\"body\":{\"host\":\"h\"}}");
    {
        json_t *a = next_answer(&host, &gen);
        ck_assert_int_eq(json_integer_value(json_object_get(a, "id")), 3);
        ck_assert_int_eq(code_of(a), HVDD_EINVAL);
        json_decref(a);
    }
    relay_call(r, 0, 1,
               "{\"id\":2,\"op\":\"put\",\"key\":\"k\",\"data\":\"v\","
               "\"quiet\":true}");
    {
        json_t *a = next_answer(&host, &gen);
        ck_assert_int_eq(code_of(a), HVDD_EINVAL);
        json_decref(a);
    }
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("relay");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    ADD(tc, what_an_agent_may_not_ask_is_refused);
    ADD(tc, deep_json_a_nul_in_a_route_and_no_host_are_refused);
    ADD(tc, an_agent_has_at_most_five_calls_at_once);
    ADD(tc, a_call_held_past_its_timeout_says_so);
    ADD(tc, a_call_that_finds_hvdd_gone_says_so);
    ADD(tc, answers_go_to_the_host_and_generation_that_asked);
    ADD(tc, freeing_with_calls_waiting);
    ADD(tc, quiet_calls_get_no_answer_and_are_in_before_the_next_call);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
