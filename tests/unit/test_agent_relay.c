/* The agent's end of the relay (agent_relay.c, agent_stdin.c), with this
 * process as the agent and the test as hvdrun: stdin keeps every line
 * but the answers, a call goes out as one control line and returns what
 * its answer says, and a launcher that goes away fails the calls. */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_relay.h"
#include "hvdd_client.h"
#include "unit.h"

static int to_agent, from_agent; /* the test's ends of stdin and stdout */

static void
setup(void)
{
    int in[2], out[2];

    ck_assert_int_eq(pipe(in), 0);
    ck_assert_int_eq(pipe(out), 0);
    ck_assert_int_ge(dup2(in[0], STDIN_FILENO), 0);
    ck_assert_int_ge(dup2(out[1], STDOUT_FILENO), 0);
    close(in[0]);
    close(out[1]);
    to_agent = in[1];
    from_agent = out[0];
    ck_assert_int_eq(agent_stdin_start(), 0);
}

static void
say(const char *text)
{
    ck_assert_int_eq(write(to_agent, text, strlen(text)),
                     (ssize_t)strlen(text));
}

/* Everything fd 0 gives until its EOF (malloc'd). */
static char *
read_stdin(size_t *len)
{
    size_t cap = 1 << 22;
    char *b = malloc(cap);
    ssize_t n;

    *len = 0;
    while ((n = read(STDIN_FILENO, b + *len, cap - *len)) > 0)
        *len += (size_t)n;
    return b;
}

/* The agent's next line on stdout, as JSON after "@hvd call ". */
static json_t *
next_call(void)
{
    char line[8192];
    size_t n = 0;

    while (n < sizeof(line) - 1 && read(from_agent, line + n, 1) == 1 &&
           line[n] != '\n')
        n++;
    line[n] = '\0';
    ck_assert_int_eq(strncmp(line, "@hvd call ", 10), 0);
    return json_loads(line + 10, 0, NULL);
}

START_TEST(stdin_keeps_every_line_but_the_answers)
{
    size_t big = 1 << 20, len;
    char *line = malloc(big + 1), *got;

    memset(line, 'x', big);
    line[big] = '\0';
    say("{\"the\":\"brief\"}\n");
    say("answer {\"id\":77,\"code\":0}\n"); /* nobody's: dropped */
    say("answering machine\n");
    say("go\n");
    say(line);
    say("\nabort done\n");
    close(to_agent);
    got = read_stdin(&len);
    {
        const char *head = "{\"the\":\"brief\"}\nanswering machine\ngo\n",
                   *tail = "\nabort done\n";
        size_t h = strlen(head), t = strlen(tail);
        ck_assert_uint_eq(len, h + big + t);
        ck_assert_int_eq(memcmp(got, head, h), 0);
        ck_assert_int_eq(memcmp(got + h, line, big), 0);
        ck_assert_int_eq(memcmp(got + h + big, tail, t), 0);
    }
    free(got);
    free(line);
}
END_TEST

typedef struct posting {
    hvdd_client *c;
    int r;
    json_t *answer;
} posting;

static void *
post(void *arg)
{
    posting *p = arg;

    p->r = hvdd_client_post(p->c, "agent/decision",
                            json_pack("{ss}", "host", "h1"), 1000, &p->answer);
    return NULL;
}

START_TEST(a_post_is_one_line_out_and_its_answer_back)
{
    posting p = {.c = hvdd_client_new("10.0.0.1", 1, "t", 5)};
    pthread_t t;
    json_t *call;
    char answer[256];

    ck_assert_int_eq(pthread_create(&t, NULL, post, &p), 0);
    call = next_call();
    ck_assert_ptr_nonnull(call);
    ck_assert_str_eq(json_string_value(json_object_get(call, "op")), "post");
    ck_assert_str_eq(json_string_value(json_object_get(call, "what")),
                     "agent/decision");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(call, "body"), "host")),
                     "h1");
    ck_assert(json_is_true(json_object_get(call, "want")));
    ck_assert_int_eq(json_integer_value(json_object_get(call, "timeout")),
                     1000);
    snprintf(answer, sizeof(answer),
             "answer {\"id\":%lld,\"code\":0,\"body\":{\"iface\":\"eth0\"}}\n",
             (long long)json_integer_value(json_object_get(call, "id")));
    say("answer {\"id\":999999,\"code\":0}\n"); /* another's: ignored */
    say(answer);
    pthread_join(t, NULL);
    ck_assert_int_eq(p.r, 0);
    ck_assert_str_eq(json_string_value(json_object_get(p.answer, "iface")),
                     "eth0");
    json_decref(p.answer);
    json_decref(call);
    hvdd_client_free(p.c);
}
END_TEST

START_TEST(an_answers_code_and_error_are_the_calls)
{
    posting p = {.c = hvdd_client_new("10.0.0.1", 1, "t", 5)};
    pthread_t t;
    json_t *call;
    char answer[256];

    ck_assert_int_eq(pthread_create(&t, NULL, post, &p), 0);
    call = next_call();
    snprintf(answer, sizeof(answer),
             "answer {\"id\":%lld,\"code\":%d,\"error\":\"held too long\"}\n",
             (long long)json_integer_value(json_object_get(call, "id")),
             HVDD_ETIMEOUT);
    say(answer);
    pthread_join(t, NULL);
    ck_assert_int_eq(p.r, HVDD_ETIMEOUT);
    ck_assert_str_eq(hvdd_client_error(p.c), "held too long");
    json_decref(call);
    hvdd_client_free(p.c);
}
END_TEST

typedef struct getting {
    hvdd_client *c;
    int r;
    char *data;
    size_t len;
} getting;

static void *
get(void *arg)
{
    getting *g = arg;

    g->r = hvdd_client_get(g->c, "hvdrun", "master_port", 30000, &g->data,
                           &g->len);
    return NULL;
}

START_TEST(the_hvdrun_scope_of_the_store_and_no_other)
{
    hvdd_client *c = hvdd_client_new("10.0.0.1", 1, "t", 5);
    getting g = {.c = c};
    pthread_t t;
    json_t *call;
    char answer[256];

    /* another scope: refused here, nothing sent */
    ck_assert_int_eq(hvdd_client_put(c, "global", "k", "v", 1), HVDD_EINVAL);
    ck_assert_int_eq(pthread_create(&t, NULL, get, &g), 0);
    call = next_call(); /* the get is the first line out */
    ck_assert_str_eq(json_string_value(json_object_get(call, "op")), "get");
    ck_assert_str_eq(json_string_value(json_object_get(call, "key")),
                     "master_port");
    ck_assert_int_eq(json_integer_value(json_object_get(call, "wait")), 30000);
    snprintf(answer, sizeof(answer),
             "answer {\"id\":%lld,\"code\":0,\"data\":\"29500\"}\n",
             (long long)json_integer_value(json_object_get(call, "id")));
    say(answer);
    pthread_join(t, NULL);
    ck_assert_int_eq(g.r, 0);
    ck_assert_uint_eq(g.len, 5);
    ck_assert_str_eq(g.data, "29500");
    free(g.data);
    json_decref(call);
    hvdd_client_free(c);
}
END_TEST

START_TEST(a_report_goes_out_quiet_and_waits_for_nothing)
{
    json_t *c;

    /* nobody answers: it returns at once all the same */
    agent_relay_tell("exit", json_pack("{si}", "rank", 3), 2000, 1.5);
    c = next_call();
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(json_string_value(json_object_get(c, "op")), "post");
    ck_assert_str_eq(json_string_value(json_object_get(c, "what")), "exit");
    ck_assert(json_is_true(json_object_get(c, "quiet")));
    ck_assert(json_is_integer(json_object_get(c, "id")));
    ck_assert(json_real_value(json_object_get(c, "deadline")) == 1.5);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(c, "body"), "rank")),
        3);
    json_decref(c);
}
END_TEST

START_TEST(a_launcher_gone_fails_every_call)
{
    posting p = {.c = hvdd_client_new("10.0.0.1", 1, "t", 5)};
    pthread_t t;
    json_t *call;
    size_t len;

    ck_assert_int_eq(pthread_create(&t, NULL, post, &p), 0);
    call = next_call(); /* sent, and then stdin ends */
    close(to_agent);
    pthread_join(t, NULL);
    ck_assert_int_eq(p.r, HVDD_ECONNECT);
    ck_assert_str_eq(hvdd_client_error(p.c), "hvdrun is gone");
    free(read_stdin(&len)); /* fd 0 ends too */
    ck_assert_uint_eq(len, 0);
    /* and a call after it fails at once */
    ck_assert_int_eq(hvdd_client_post(p.c, "agent/heartbeat",
                                      json_pack("{ss}", "host", "h1"), 1000,
                                      NULL),
                     HVDD_ECONNECT);
    json_decref(call);
    hvdd_client_free(p.c);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("agent_relay");
    TCase *tc = tcase_create("core");

    /* (each test in a process of its own: Check's default) */
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 30);
    ADD(tc, stdin_keeps_every_line_but_the_answers);
    ADD(tc, a_post_is_one_line_out_and_its_answer_back);
    ADD(tc, an_answers_code_and_error_are_the_calls);
    ADD(tc, the_hvdrun_scope_of_the_store_and_no_other);
    ADD(tc, a_report_goes_out_quiet_and_waits_for_nothing);
    ADD(tc, a_launcher_gone_fails_every_call);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
