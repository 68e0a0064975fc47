/* The agents' calls to hvdd, made by hvdrun-ssh over hvdd's channel
 * (relay.h, hvdd_chan.h): each call checked, then sent as one request;
 * the calls waiting for an answer are kept by their request's id until
 * hvdd answers, their timeout passes, or hvdd is gone. One thread, the
 * fleet's loop, uses it. */
#include "relay.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hvd_clock.h"
#include "hvdd_chan.h"

/* Answered calls at once, per agent (it makes at most four: three of its
 * NIC choice together, and its heartbeat; one more for room) and over
 * all; more are refused. */
#define RELAY_HOST_CALLS 5
#define RELAY_MAX_CALLS 4096
/* How deep a call's JSON may nest: the agents' go 3 deep. */
#define RELAY_MAX_DEPTH 8
#define RELAY_MAX_WAIT_MS 600000L

/* One call, as the agent sent it (checked). */
typedef struct call {
    struct call *next, *prev; /* waiting for hvdd, in the order sent */
    int host;
    unsigned gen;
    json_int_t id;   /* the agent's */
    uint64_t req;    /* the channel's */
    char op;         /* 'p'ost, 'u' put, 'g'et */
    char what[64];   /* post: the route; put, get: the key */
    json_t *body;    /* post */
    size_t len;      /* put: the data's bytes */
    int want;        /* post: the agent wants hvdd's JSON answer */
    int quiet;       /* post: no answer at all */
    char *data;      /* put */
    long wait_ms;    /* get: hvdd's wait */
    long timeout_ms; /* how long hvdrun waits for hvdd's answer */
    double until;    /* ... until then */
} call;

/* An answer ready for the fleet. */
typedef struct answer {
    struct answer *next;
    int host;
    unsigned gen;
    char *line;
} answer;

struct relay {
    hvdd_chan *ch;
    call *first, *last; /* waiting for hvdd */
    int calls;
    int *running; /* per host (nhosts) */
    int nhosts;
    answer *head, *tail; /* made here: refusals, timeouts, hvdd gone */
};

static const char *const routes[] = {
    "agent",           "agent/targets", "agent/probes", "agent/decision",
    "agent/heartbeat", "agent/exit",    "exit"};
/* The reports, which may be quiet: never held by hvdd */
static const char *const reports[] = {"agent/exit", "exit"};

relay *
relay_new(hvdd_chan *ch)
{
    relay *r = calloc(1, sizeof(*r));

    if (r)
        r->ch = ch;
    return r;
}

int
relay_fd(const relay *r, short *events)
{
    return hvdd_chan_fd(r->ch, events);
}

int
relay_ready(const relay *r)
{
    return r->head != NULL || hvdd_chan_pending(r->ch);
}

/* Queues an answer (taken) made here. */
static void
push(relay *r, int host, unsigned gen, char *line)
{
    answer *a = line ? malloc(sizeof(*a)) : NULL;

    if (a == NULL) {
        free(line);
        return;
    }
    *a = (answer){NULL, host, gen, line};
    if (r->tail)
        r->tail->next = a;
    else
        r->head = a;
    r->tail = a;
}

/* "answer {...}\n" for call c: code, the reason, and what came. */
static char *
answer_line(const call *c, int code, const char *error, json_t *body,
            json_t *data)
{
    json_t *o = json_pack("{sI si}", "id", c->id, "code", code);
    char *text, *line = NULL;

    if (o && code != 0)
        json_object_set_new(o, "error", json_string(error ? error : ""));
    if (o && body)
        json_object_set(o, "body", body);
    if (o && data)
        json_object_set(o, "data", data);
    text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (text && asprintf(&line, "answer %s\n", text) < 0)
        line = NULL;
    free(text);
    return line;
}

static void
call_free(call *c)
{
    if (c == NULL)
        return;
    json_decref(c->body);
    free(c->data);
    free(c);
}

/* c no longer waits (it is freed). */
static void
unlink_call(relay *r, call *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        r->first = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        r->last = c->prev;
    r->calls--;
    r->running[c->host]--;
    call_free(c);
}

/* c's path in hvdd: a post's route, or the key in the store's scope. */
static void
call_path(const call *c, char *out, size_t size)
{
    snprintf(out, size, c->op == 'p' ? "/v1/%s" : "/hvdrun/%s", c->what);
}

/* The line that answers c, from hvdd's answer a. */
static char *
answer_from(const call *c, const hvdd_chan_answer *a)
{
    char what[96], err[512];
    json_t *got = NULL, *text = NULL;
    json_error_t je;
    int code;

    call_path(c, what, sizeof(what));
    code = hvdd_answer_code(a->status, a->body, a->len, what, err, sizeof(err));
    if (code == 0 && c->op == 'p' && c->want &&
        (got = json_loadb(a->body, a->len, 0, &je)) == NULL) {
        snprintf(err, sizeof(err), "%s: bad JSON: %s", what, je.text);
        code = HVDD_EPROTO;
    }
    if (code == 0 && c->op == 'g' &&
        (text = json_stringn(a->body, a->len)) == NULL) {
        snprintf(err, sizeof(err), "the value is not text");
        code = HVDD_EPROTO; /* the relay carries text only */
    }
    char *line = answer_line(c, code, err, got, text);
    json_decref(got);
    json_decref(text);
    return line;
}

/* Every waiting call gets code (hvdd gone), or those past their time
 * (all 0) get HVDD_ETIMEOUT. */
static void
fail_waiting(relay *r, int all, int code, const char *why)
{
    double t = hvd_mono_now();

    for (call *c = r->first, *next; c; c = next) {
        next = c->next;
        if (!all && c->until > t)
            continue;
        push(r, c->host, c->gen, answer_line(c, code, why, NULL, NULL));
        unlink_call(r, c);
    }
}

/* hvdd's answers that came, and the calls past their time, answered. */
static void
pump(relay *r)
{
    hvdd_chan_answer a;
    int n;

    while ((n = hvdd_chan_take(r->ch, &a)) > 0) {
        call *c = r->first;
        while (c && c->req != a.id)
            c = c->next;
        if (c) { /* (none: its time had passed) */
            push(r, c->host, c->gen, answer_from(c, &a));
            unlink_call(r, c);
        }
        free(a.body);
    }
    if (n < 0)
        fail_waiting(r, 1, HVDD_ECONNECT, "cannot reach hvdd: it is gone");
    else
        fail_waiting(r, 0, HVDD_ETIMEOUT, "timed out waiting for hvdd");
}

int
relay_take(relay *r, int *host, unsigned *gen, char **line)
{
    answer *q;

    if (r->head == NULL) /* (once per round of the fleet's takes) */
        pump(r);
    if ((q = r->head) == NULL)
        return 0;
    if ((r->head = q->next) == NULL)
        r->tail = NULL;
    *host = q->host;
    *gen = q->gen;
    *line = q->line;
    free(q);
    return 1;
}

void
relay_free(relay *r)
{
    if (r == NULL)
        return;
    while (r->first)
        unlink_call(r, r->first);
    while (r->head) {
        answer *a = r->head;
        r->head = a->next;
        free(a->line);
        free(a);
    }
    free(r->running);
    free(r);
}

static long
bounded(json_t *v, long dflt)
{
    json_int_t n = json_is_integer(v) ? json_integer_value(v) : dflt;

    return n < 0 ? 0 : n > RELAY_MAX_WAIT_MS ? RELAY_MAX_WAIT_MS : (long)n;
}

static int
is_report(const char *what)
{
    for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++)
        if (strcmp(what, reports[i]) == 0)
            return 1;
    return 0;
}

static int
is_route(const char *what)
{
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (strcmp(what, routes[i]) == 0)
            return 1;
    return 0;
}

/* 1 when v nests no deeper than `left` levels (a scalar: 0 levels);
 * the recursion goes no deeper than that either. */
static int
shallow(json_t *v, int left)
{
    const char *k;
    json_t *e;
    size_t i;

    if (!json_is_object(v) && !json_is_array(v))
        return 1;
    if (left == 0)
        return 0;
    if (json_is_object(v)) {
        json_object_foreach(v, k, e) if (!shallow(e, left - 1)) return 0;
    } else {
        json_array_foreach(v, i, e) if (!shallow(e, left - 1)) return 0;
    }
    return 1;
}

/* A string of the agent's, without a NUL inside (NULL: none). */
static const char *
text_of(json_t *o, const char *name)
{
    json_t *v = json_object_get(o, name);
    const char *t = json_string_value(v);

    return t && strlen(t) == json_string_length(v) ? t : NULL;
}

/* Fills c from the agent's JSON; NULL, or why it is refused. */
static const char *
parse(call *c, json_t *o)
{
    const char *op = text_of(o, "op"), *what = text_of(o, "what");
    const char *key = text_of(o, "key");

    if (!shallow(o, RELAY_MAX_DEPTH))
        return "nested too deep";
    if (op && strcmp(op, "post") == 0) {
        json_t *body = json_object_get(o, "body");
        if (what == NULL || !is_route(what))
            return "not one of the agents' routes";
        if (!json_is_object(body))
            return "a post without a body";
        c->op = 'p';
        snprintf(c->what, sizeof(c->what), "%s", what);
        c->body = json_incref(body);
        c->want = json_is_true(json_object_get(o, "want"));
        c->quiet = json_is_true(json_object_get(o, "quiet"));
        if (c->quiet && !is_report(what))
            return "only a report may be quiet";
        c->timeout_ms = bounded(json_object_get(o, "timeout"), 30000);
        return NULL;
    }
    if (op == NULL || (strcmp(op, "put") && strcmp(op, "get")))
        return "an unknown op";
    if (json_object_get(o, "quiet"))
        return "only a post may be quiet";
    if (key == NULL || !key[0] || strlen(key) >= sizeof(c->what) ||
        strchr(key, '/'))
        return "a bad key";
    snprintf(c->what, sizeof(c->what), "%s", key);
    if (op[0] == 'g') {
        c->op = 'g';
        c->wait_ms = bounded(json_object_get(o, "wait"), 0);
        c->timeout_ms = c->wait_ms + 30000; /* as the HTTP client's */
        return NULL;
    }
    c->op = 'u';
    c->timeout_ms = 30000;
    json_t *data = json_object_get(o, "data");
    if (!json_is_string(data))
        return "a put without data";
    c->len = json_string_length(data);
    if ((c->data = malloc(c->len + 1)) == NULL)
        return "out of memory";
    memcpy(c->data, json_string_value(data), c->len + 1);
    return NULL;
}

/* Room for host's count of calls: 0, or -1. */
static int
host_slot(relay *r, int host)
{
    if (host < r->nhosts)
        return 0;
    int n = host + 16;
    int *p = realloc(r->running, (size_t)n * sizeof(*p));
    if (p == NULL)
        return -1;
    memset(p + r->nhosts, 0, (size_t)(n - r->nhosts) * sizeof(*p));
    r->running = p;
    r->nhosts = n;
    return 0;
}

/* Sends c; NULL (c is the relay's, or freed when quiet), or why not (c
 * untouched, *code the answer's). */
static const char *
start(relay *r, call *c, int *code)
{
    char path[96], *body = NULL;
    const char *method = c->op == 'p' ? "POST" : c->op == 'u' ? "PUT" : "GET";
    const void *bytes = c->data;
    size_t len = c->len;
    int e;

    if (host_slot(r, c->host) != 0)
        return "out of memory";
    if (!c->quiet && (r->calls >= RELAY_MAX_CALLS ||
                      r->running[c->host] >= RELAY_HOST_CALLS))
        return "too many calls at once";
    call_path(c, path, sizeof(path));
    if (c->op == 'p') {
        if ((body = json_dumps(c->body, JSON_COMPACT)) == NULL)
            return "out of memory";
        bytes = body;
        len = strlen(body);
    }
    c->req = c->quiet ? 0 : hvdd_chan_next_id(r->ch);
    e = hvdd_chan_send(r->ch, c->req, method, path, c->wait_ms, bytes, len);
    free(body);
    if (e != 0) {
        *code = e == HVDD_ECONNECT ? HVDD_ECONNECT : HVDD_EREFUSED;
        return e == HVDD_ECONNECT ? "cannot reach hvdd: it is gone"
               : e == HVDD_EINVAL ? "too large for hvdd"
                                  : "hvdd takes no more now";
    }
    if (c->quiet) {
        call_free(c);
        return NULL;
    }
    c->until = hvd_mono_now() + c->timeout_ms / 1000.0;
    c->prev = r->last;
    if (r->last)
        r->last->next = c;
    else
        r->first = c;
    r->last = c;
    r->calls++;
    r->running[c->host]++;
    return NULL;
}

void
relay_call(relay *r, int host, unsigned gen, const char *json)
{
    json_t *o = json_loads(json, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
    call *c = calloc(1, sizeof(*c)), none = {0};
    const char *why =
        c == NULL ? "out of memory"
        : !json_is_object(o) || !json_is_integer(json_object_get(o, "id"))
            ? "not a call"
            : NULL;
    int code = HVDD_EINVAL;

    if (c) {
        c->host = host;
        c->gen = gen;
        if (json_is_object(o))
            c->id = json_integer_value(json_object_get(o, "id"));
    }
    if (host < 0)
        why = "no such host";
    if (why == NULL && (why = parse(c, o)) == NULL) {
        code = HVDD_EREFUSED;
        if ((why = start(r, c, &code)) == NULL) {
            json_decref(o);
            return;
        }
    }
    /* refused here, without reaching hvdd */
    char text[128];
    if (c == NULL && json_is_object(o)) /* still its id, for its answer */
        none.id = json_integer_value(json_object_get(o, "id"));
    if (code == HVDD_ECONNECT)
        snprintf(text, sizeof(text), "%s", why);
    else
        snprintf(text, sizeof(text), "hvdrun refused the call: %s", why);
    push(r, host, gen, answer_line(c ? c : &none, code, text, NULL, NULL));
    call_free(c);
    json_decref(o);
}
