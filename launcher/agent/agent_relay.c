/* hvdd_client.h for the agent, through hvdrun (agent_relay.h): each call
 * is a control line on stdout, and the caller's thread waits for the
 * answer that agent_stdin.c hands over. The same codes and error texts as
 * the HTTP client's: hvdrun-ssh maps hvdd's answers with the same
 * hvdd_answer_code. */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_brief.h"
#include "agent_relay.h"
#include "hvd_clock.h"
#include "hvdd_client.h"
#include "output.h"

/* An answer later than this past the call's own wait means hvdrun lost
 * it: the call fails rather than hang. */
#define ANSWER_GRACE_S 60

struct hvdd_client {
    double deadline; /* s of connection retries, passed on */
    char error[512];
};

/* A call waiting for its answer. */
typedef struct waiter {
    struct waiter *next;
    json_int_t id;
    json_t *answer; /* once it came */
} waiter;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t came; /* on the monotonic clock (came_init) */
static pthread_once_t came_once = PTHREAD_ONCE_INIT;
static waiter *waiting;
static json_int_t last_id;
static int gone; /* stdin ended */

static void
came_init(void)
{
    hvd_cond_init_monotonic(&came);
}

static int
fail(hvdd_client *c, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->error, sizeof(c->error), fmt, ap);
    va_end(ap);
    return code;
}

hvdd_client *
hvdd_client_new(const char *addr, int port, const char *token,
                double connect_deadline)
{
    hvdd_client *c = calloc(1, sizeof(*c));

    (void)addr; /* hvdrun-ssh's relay has its own */
    (void)port;
    (void)token;
    if (c)
        c->deadline = connect_deadline;
    return c;
}

void
hvdd_client_free(hvdd_client *c)
{
    free(c);
}

const char *
hvdd_client_error(const hvdd_client *c)
{
    return c ? c->error : "";
}

void
agent_relay_answer(const char *json)
{
    json_t *a = json_loads(json, JSON_ALLOW_NUL, NULL);
    json_int_t id = json_integer_value(json_object_get(a, "id"));

    pthread_once(&came_once, came_init);
    pthread_mutex_lock(&mu);
    for (waiter *w = waiting; a && w; w = w->next)
        if (w->id == id && w->answer == NULL) {
            w->answer = a;
            a = NULL;
            pthread_cond_broadcast(&came);
        }
    pthread_mutex_unlock(&mu);
    json_decref(a); /* late (its call gave up), or not ours */
}

void
agent_relay_gone(void)
{
    pthread_once(&came_once, came_init);
    pthread_mutex_lock(&mu);
    gone = 1;
    pthread_cond_broadcast(&came);
    pthread_mutex_unlock(&mu);
}

static void
unlink_waiter(waiter *w)
{
    for (waiter **p = &waiting; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            return;
        }
}

static int
send_call(json_t *req)
{
    char *text = json_dumps(req, JSON_COMPACT), *line = NULL;
    int n = text ? asprintf(&line, "%scall %s\n", HVDRUN_CONTROL, text) : -1;
    int r = n < 0 ? -1 : out_write(STDOUT_FILENO, line, (size_t)n);

    free(text);
    free(line);
    return r;
}

/* A call sent, its answer not yet waited for. */
struct agent_call {
    waiter w;
    hvdd_client *c;
    long wait_ms;
    int want;  /* a post's JSON answer is wanted */
    int early; /* a code decided before it went (hvdrun gone) */
};

/* Sends req (taken) with a fresh id: the call to wait for with end().
 * NULL when out of memory. */
static agent_call *
begin(hvdd_client *c, json_t *req, long wait_ms)
{
    agent_call *k = req ? calloc(1, sizeof(*k)) : NULL;

    if (k == NULL) {
        json_decref(req);
        return NULL;
    }
    k->c = c;
    k->wait_ms = wait_ms;
    pthread_once(&came_once, came_init);
    pthread_mutex_lock(&mu);
    if (gone) {
        pthread_mutex_unlock(&mu);
        json_decref(req);
        k->early = HVDD_ECONNECT;
        return k;
    }
    k->w.id = ++last_id;
    k->w.next = waiting;
    waiting = &k->w;
    pthread_mutex_unlock(&mu);
    json_object_set_new(req, "id", json_integer(k->w.id));
    json_object_set_new(req, "deadline", json_real(c->deadline));
    if (send_call(req) != 0)
        agent_relay_gone(); /* stdout broke: hvdrun is gone */
    json_decref(req);
    return k;
}

/* Waits for k's answer (its own wait, the client's deadline and a grace,
 * from now: a call begun early may wait longer) and frees k: 0 with *answer
 * (the caller decrefs it), or a code with the client's error said. */
static int
round_trip(agent_call *k, json_t **answer)
{
    hvdd_client *c = k->c;
    struct timespec until;
    int r = 0;

    *answer = NULL;
    if (k->early) {
        free(k);
        return fail(c, HVDD_ECONNECT, "hvdrun is gone");
    }
    until = hvd_clock_after(
        CLOCK_MONOTONIC,
        (double)(k->wait_ms / 1000 + (long)c->deadline + ANSWER_GRACE_S));
    pthread_mutex_lock(&mu);
    while (k->w.answer == NULL && !gone && r == 0)
        r = pthread_cond_timedwait(&came, &mu, &until);
    unlink_waiter(&k->w);
    pthread_mutex_unlock(&mu);
    *answer = k->w.answer;
    free(k);
    if (*answer != NULL)
        return 0;
    return r == ETIMEDOUT ? fail(c, HVDD_ETIMEOUT, "no answer from hvdrun")
                          : fail(c, HVDD_ECONNECT, "hvdrun is gone");
}

/* The answer's code, its error into the client's, and the answer kept in
 * *a for what it carries. NULL k: out of memory. */
static int
end(hvdd_client *c, agent_call *k, json_t **a)
{
    json_t *code;
    int r;

    *a = NULL;
    if (k == NULL)
        return fail(c, HVDD_ENOMEM, "out of memory");
    if ((r = round_trip(k, a)) != 0)
        return r;
    code = json_object_get(*a, "code");
    if (!json_is_integer(code))
        return fail(c, HVDD_EPROTO, "hvdrun's answer has no code");
    if (json_integer_value(code) != 0)
        fail(c, (int)json_integer_value(code), "%s",
             json_string_value(json_object_get(*a, "error"))
                 ? json_string_value(json_object_get(*a, "error"))
                 : "");
    return (int)json_integer_value(code);
}

void
agent_call_drop(agent_call *k)
{
    if (k == NULL)
        return;
    pthread_mutex_lock(&mu);
    unlink_waiter(&k->w);
    pthread_mutex_unlock(&mu);
    json_decref(k->w.answer);
    free(k);
}

agent_call *
agent_post_begin(hvdd_client *c, const char *what, json_t *j, long timeout_ms,
                 int want)
{
    agent_call *k = begin(c,
                          json_pack("{ss ss sI so sb}", "op", "post", "what",
                                    what, "timeout", (json_int_t)timeout_ms,
                                    "body", j, "want", want),
                          timeout_ms);

    if (k)
        k->want = want;
    return k;
}

int
agent_post_end(hvdd_client *c, agent_call *k, json_t **answer)
{
    int want = k && k->want;
    json_t *a;
    int r = end(c, k, &a);

    if (answer)
        *answer =
            r == 0 && want ? json_incref(json_object_get(a, "body")) : NULL;
    json_decref(a);
    return r;
}

int
hvdd_client_post(hvdd_client *c, const char *what, json_t *j, long timeout_ms,
                 json_t **answer)
{
    return agent_post_end(
        c, agent_post_begin(c, what, j, timeout_ms, answer != NULL), answer);
}

void
agent_relay_tell(const char *what, json_t *body, long timeout_ms,
                 double deadline)
{
    json_t *req = json_pack("{ss ss sI so sb sf}", "op", "post", "what", what,
                            "timeout", (json_int_t)timeout_ms, "body", body,
                            "quiet", 1, "deadline", deadline);

    pthread_mutex_lock(&mu);
    if (req && !gone) /* (an id as every call has; nothing waits on it) */
        json_object_set_new(req, "id", json_integer(++last_id));
    pthread_mutex_unlock(&mu);
    if (req && json_object_get(req, "id") && send_call(req) != 0)
        agent_relay_gone();
    json_decref(req);
}

agent_call *
agent_put_begin(hvdd_client *c, const char *key, const char *data, size_t len)
{
    return begin(
        c, json_pack("{ss ss ss%}", "op", "put", "key", key, "data", data, len),
        0);
}

agent_call *
agent_get_begin(hvdd_client *c, const char *key, int wait_ms)
{
    return begin(
        c, json_pack("{ss ss si}", "op", "get", "key", key, "wait", wait_ms),
        wait_ms > 0 ? wait_ms : 0);
}

int
agent_put_end(hvdd_client *c, agent_call *k)
{
    json_t *a;
    int r = end(c, k, &a);

    json_decref(a);
    return r;
}

int
agent_get_end(hvdd_client *c, agent_call *k, char **data, size_t *len)
{
    json_t *a, *v;
    int r = end(c, k, &a);

    *data = NULL;
    *len = 0;
    v = json_object_get(a, "data");
    if (r == 0 && !json_is_string(v))
        r = fail(c, HVDD_EPROTO, "hvdrun's answer has no value");
    if (r == 0 && (*data = malloc(json_string_length(v) + 1)) == NULL)
        r = fail(c, HVDD_ENOMEM, "out of memory");
    if (r == 0) { /* NUL-terminated past *len, as the client's */
        *len = json_string_length(v);
        memcpy(*data, json_string_value(v), *len + 1);
    }
    json_decref(a);
    return r;
}

static int
hvdrun_scope(hvdd_client *c, const char *scope)
{
    return strcmp(scope, "hvdrun") == 0
               ? 0
               : fail(c, HVDD_EINVAL,
                      "the agent reaches only the store's "
                      "\"hvdrun\" scope");
}

int
hvdd_client_put(hvdd_client *c, const char *scope, const char *key,
                const void *data, size_t len)
{
    json_t *text = json_stringn(data, len);
    int r;

    if ((r = hvdrun_scope(c, scope)) != 0 || text == NULL) {
        json_decref(text);
        return r ? r : fail(c, HVDD_EINVAL, "a value that is not text");
    }
    json_decref(text);
    return agent_put_end(c, agent_put_begin(c, key, data, len));
}

int
hvdd_client_get(hvdd_client *c, const char *scope, const char *key, int wait_ms,
                char **data, size_t *len)
{
    int r;

    *data = NULL;
    *len = 0;
    if ((r = hvdrun_scope(c, scope)) != 0)
        return r;
    return agent_get_end(c, agent_get_begin(c, key, wait_ms), data, len);
}
