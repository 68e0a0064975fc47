/* relay.c, hvdrun-ssh's end of the agents' calls: what an agent may not
 * ask is answered "refused" without reaching hvdd, every answer carries
 * its call's id to the host and generation that asked, a call that
 * cannot reach hvdd says so, closing with a call in flight is safe, and
 * quiet calls (reports) get no answer, reach a real hvdd, and are waited
 * for by relay_settle. */
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hvdd_client.h"
#include "relay.h"
#include "unit.h"

static relay *r;

static void
setup(void)
{
    /* port 1: nothing listens, so a call that goes out fails to connect */
    ck_assert_ptr_nonnull(r = relay_new("127.0.0.1", 1, "token"));
}

static void
teardown(void)
{
    relay_close(r);
}

/* The next answer, waited for up to 15 s: its JSON (the caller decrefs),
 * host and gen. */
static json_t *
next_answer(int *host, unsigned *gen)
{
    char *line = NULL;
    json_t *a;

    for (int i = 0; i < 150 && !relay_take(r, host, gen, &line); i++) {
        struct pollfd p = {relay_fd(r), POLLIN, 0};
        poll(&p, 1, 100);
    }
    ck_assert_ptr_nonnull(line);
    ck_assert_int_eq(strncmp(line, "answer ", 7), 0);
    ck_assert_int_eq(line[strlen(line) - 1], '\n');
    ck_assert_ptr_nonnull(a = json_loads(line + 7, 0, NULL));
    free(line);
    return a;
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
    const char *held = "{\"id\":30,\"op\":\"put\",\"key\":\"k\","
                       "\"data\":\"v\",\"deadline\":3}";
    int host = -1, refusals = 0, failures = 0;
    unsigned gen = 0;

    /* each retries connecting for 3 s: five are held, the sixth refused,
     * and another agent's call still goes */
    for (int i = 0; i < 6; i++)
        relay_call(r, 0, 1, held);
    relay_call(r, 1, 1, held);
    for (int k = 0; k < 7; k++) {
        json_t *a = next_answer(&host, &gen);
        int code = (int)json_integer_value(json_object_get(a, "code"));
        if (code == HVDD_EREFUSED) {
            refusals++;
            ck_assert_int_eq(host, 0);
            ck_assert_int_eq(k, 0); /* at once, before any held call ends */
        } else {
            ck_assert_int_eq(code, HVDD_ECONNECT);
            failures++;
        }
        json_decref(a);
    }
    ck_assert_int_eq(refusals, 1);
    ck_assert_int_eq(failures, 6);
}
END_TEST

START_TEST(a_call_that_cannot_reach_hvdd_says_so)
{
    int host = -1;
    unsigned gen = 0;
    json_t *a;

    relay_call(r, 0, 2,
               "{\"id\":42,\"op\":\"post\",\"what\":\"agent/heartbeat\","
               "\"timeout\":1000,\"deadline\":0,\"body\":{\"host\":\"h\"}}");
    a = next_answer(&host, &gen);
    ck_assert_int_eq(host, 0);
    ck_assert_uint_eq(gen, 2);
    ck_assert_int_eq(json_integer_value(json_object_get(a, "id")), 42);
    ck_assert_int_eq(json_integer_value(json_object_get(a, "code")),
                     HVDD_ECONNECT);
    ck_assert_ptr_nonnull(json_string_value(json_object_get(a, "error")));
    ck_assert_ptr_null(json_object_get(a, "body"));
    json_decref(a);
}
END_TEST

START_TEST(answers_go_to_the_host_and_generation_that_asked)
{
    int seen[3] = {0};

    for (int i = 0; i < 3; i++) {
        char call[200];
        snprintf(call, sizeof(call),
                 "{\"id\":%d,\"op\":\"get\",\"key\":\"k\",\"wait\":0,"
                 "\"deadline\":0}",
                 100 + i);
        relay_call(r, i, (unsigned)(10 + i), call);
    }
    for (int k = 0; k < 3; k++) {
        int host = -1;
        unsigned gen = 0;
        json_t *a = next_answer(&host, &gen);
        json_int_t id = json_integer_value(json_object_get(a, "id"));
        ck_assert(host >= 0 && host < 3);
        ck_assert_int_eq(id, 100 + host);
        ck_assert_uint_eq(gen, (unsigned)(10 + host));
        seen[host]++;
        json_decref(a);
    }
    ck_assert(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
}
END_TEST

START_TEST(closing_with_calls_in_flight)
{
    relay *other = relay_new("127.0.0.1", 1, "token");

    ck_assert_ptr_nonnull(other);
    for (int i = 0; i < 4; i++)
        relay_call(other, i, 1,
                   "{\"id\":1,\"op\":\"post\",\"what\":\"exit\","
                   "\"deadline\":0.2,\"body\":{}}");
    relay_close(other); /* the calls end by themselves, their answers
                           dropped: nothing to see but no crash (the
                           sanitizer builds see a use after free) */
    {
        struct timespec t = {0, 400 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
}
END_TEST

#define TOKEN "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

/* A real hvdd for a job of 3 ranks on host h: its pid, its port in *port;
 * it ends when *stdin_fd closes. */
static pid_t
start_hvdd(int *port, int *stdin_fd)
{
    int in[2], out[2];
    pid_t pid;
    char line[64] = {0};
    FILE *f;

    ck_assert_int_eq(pipe(in), 0);
    ck_assert_int_eq(pipe(out), 0);
    if ((pid = fork()) == 0) {
        signal(SIGTERM, SIG_DFL);
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        alarm(60);
        execl(HVD_BIN_DIR "/hvdd", "hvdd", "--size", "3", "--hosts", "h:3",
              "--listen", "127.0.0.1:0", "--token-stdin", (char *)NULL);
        _exit(127);
    }
    ck_assert_int_gt(pid, 0);
    close(in[0]);
    close(out[1]);
    ck_assert_int_eq(write(in[1], TOKEN "\n", strlen(TOKEN) + 1),
                     strlen(TOKEN) + 1);
    f = fdopen(out[0], "r");
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    fclose(f);
    ck_assert_int_eq(sscanf(line, "listening %d", port), 1);
    *stdin_fd = in[1];
    return pid;
}

/* Host 0's quiet report of rank's end. */
static void
quiet_exit(relay *q, int id, int rank, int code, int pid)
{
    char call[200];

    snprintf(call, sizeof(call),
             "{\"id\":%d,\"op\":\"post\",\"what\":\"exit\","
             "\"quiet\":true,\"deadline\":2,\"body\":{\"rank\":%d,"
             "\"code\":%d,\"pid\":%d,\"host\":\"h\"}}",
             id, rank, code, pid);
    relay_call(q, 0, 1, call);
}

START_TEST(quiet_calls_get_no_answer_and_are_settled)
{
    int port, lifeline, host = -1;
    unsigned gen = 0;
    pid_t hvdd = start_hvdd(&port, &lifeline);
    relay *q = relay_new("127.0.0.1", port, TOKEN);
    hvdd_client *c = hvdd_client_new("127.0.0.1", port, TOKEN, 5);
    char *status = NULL, *line = NULL;
    json_t *st, *ranks;

    ck_assert_ptr_nonnull(q);
    ck_assert_ptr_nonnull(c);
    for (int rank = 0; rank < 3; rank++)
        quiet_exit(q, rank + 1, rank, rank == 1 ? 3 : 0, 1000 + rank);
    /* a host's reports are made in order: the last of rank 2's stays */
    for (int i = 0; i < 5; i++)
        quiet_exit(q, 10 + i, 2, 11 + i, 1002);
    ck_assert_int_eq(relay_settle(q, 10000), 0);
    ck_assert_int_eq(relay_take(q, &host, &gen, &line), 0); /* no answer */
    ck_assert_int_eq(hvdd_client_status(c, &status), 0);
    ck_assert_ptr_nonnull(st = json_loads(status, 0, NULL));
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
    free(status);
    hvdd_client_free(c);
    relay_close(q);
    close(lifeline); /* hvdd ends */
    waitpid(hvdd, NULL, 0);
}
END_TEST

START_TEST(settle_waits_for_the_quiet_calls_still_out)
{
    /* nothing listens on port 1: the call retries connecting for 1 s */
    relay_call(r, 0, 1,
               "{\"id\":1,\"op\":\"post\",\"what\":\"agent/exit\","
               "\"quiet\":true,\"deadline\":1,\"body\":{\"host\":\"h\"}}");
    ck_assert_int_eq(relay_settle(r, 100), -1);
    ck_assert_int_eq(relay_settle(r, 10000), 0);
    /* a quiet put is refused (answered, as every refusal) */
    relay_call(r, 0, 1,
               "{\"id\":2,\"op\":\"put\",\"key\":\"k\",\"data\":\"v\","
               "\"quiet\":true}");
    {
        int host = -1;
        unsigned gen = 0;
        json_t *a = next_answer(&host, &gen);
        ck_assert_int_eq(json_integer_value(json_object_get(a, "code")),
                         HVDD_EINVAL);
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
    ADD(tc, a_call_that_cannot_reach_hvdd_says_so);
    ADD(tc, answers_go_to_the_host_and_generation_that_asked);
    ADD(tc, closing_with_calls_in_flight);
    ADD(tc, quiet_calls_get_no_answer_and_are_settled);
    ADD(tc, settle_waits_for_the_quiet_calls_still_out);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
