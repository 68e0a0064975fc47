/* The agents' calls to hvdd, made by hvdrun-ssh (relay.h): each in a
 * detached thread with its own client; the answers queue up for the
 * fleet's loop, woken through a pipe. Quiet calls (no answer wanted) queue
 * per host and one thread of that host makes them in order. */
#include "relay.h"

#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hvd_clock.h"
#include "hvdd_client.h"

/* Answered calls at once, per agent (it makes at most four: three of its
 * NIC choice together, and its heartbeat; one more for room) and over
 * all; more are refused. With a host's quiet thread, 6 per host: hvdd
 * lets one address hold 6 connections per rank beside the ranks' own,
 * and these all come from hvdrun-ssh's. */
#define RELAY_HOST_CALLS 5
#define RELAY_MAX_CALLS 4096
/* Quiet calls waiting, over all hosts (an agent sends one per worker's
 * end and one at its own) */
#define RELAY_MAX_QUIET 65536
/* How deep a call's JSON may nest: the agents' go 3 deep, and the
 * client's json_dumps recurses on a relay thread's small stack. */
#define RELAY_MAX_DEPTH 8
#define RELAY_MAX_WAIT_MS 600000L
/* A call's thread: the client and libcurl, no more */
#define RELAY_STACK (256u << 10)

typedef struct call call;

/* What runs and waits for one host. */
typedef struct host_calls {
    int running;        /* answered calls, now */
    call *quiet, *last; /* quiet calls waiting, in order */
    int quiet_busy;     /* its quiet thread runs */
} host_calls;

typedef struct answer {
    struct answer *next;
    int host;
    unsigned gen;
    char *line;
} answer;

struct relay {
    pthread_mutex_t mu;
    int refs;         /* the owner's, until relay_close, and each call's */
    int calls;        /* running */
    host_calls *host; /* per host (nhosts of them) */
    int nhosts;
    int quiet;              /* quiet calls waiting or running */
    pthread_cond_t settled; /* quiet reached 0 (monotonic clock) */
    int closed;             /* answers are dropped */
    answer *head, *tail;
    int wake[2]; /* a byte per queued answer */
    char *addr, *token;
    int port;
};

/* One call, as the agent sent it (checked). */
struct call {
    call *next; /* in its host's quiet queue */
    relay *r;
    int host;
    unsigned gen;
    json_int_t id;
    char op;         /* 'p'ost, 'u' put, 'g'et */
    char what[64];   /* post: the route; put, get: the key */
    json_t *body;    /* post */
    size_t len;      /* put: the data's bytes */
    int want;        /* post: the agent wants hvdd's JSON answer */
    int quiet;       /* post: no answer at all (relay_settle waits) */
    char *data;      /* put */
    long timeout_ms; /* post: hvdd's; get: the wait */
    double deadline; /* s of connection retries */
};

static const char *const routes[] = {
    "agent",           "agent/targets", "agent/probes", "agent/decision",
    "agent/heartbeat", "agent/exit",    "exit"};

static void
release(relay *r)
{
    answer *a = r->head;

    while (a) {
        answer *next = a->next;
        free(a->line);
        free(a);
        a = next;
    }
    close(r->wake[0]);
    close(r->wake[1]);
    pthread_cond_destroy(&r->settled);
    pthread_mutex_destroy(&r->mu);
    free(r->host);
    free(r->addr);
    free(r->token);
    free(r);
}

static void
unref(relay *r)
{
    int last;

    pthread_mutex_lock(&r->mu);
    last = --r->refs == 0;
    pthread_mutex_unlock(&r->mu);
    if (last)
        release(r);
}

relay *
relay_new(const char *addr, int port, const char *token)
{
    relay *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return NULL;
    if (pipe2(r->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        free(r);
        return NULL;
    }
    hvd_cond_init_monotonic(&r->settled);
    pthread_mutex_init(&r->mu, NULL);
    r->refs = 1;
    r->port = port;
    r->addr = strdup(addr);
    r->token = strdup(token ? token : "");
    if (r->addr == NULL || r->token == NULL) {
        release(r);
        return NULL;
    }
    return r;
}

int
relay_fd(const relay *r)
{
    return r->wake[0];
}

/* Queues an answer (taken) unless the relay is closed. */
static void
push(relay *r, int host, unsigned gen, char *line)
{
    answer *a = line ? malloc(sizeof(*a)) : NULL;

    pthread_mutex_lock(&r->mu);
    if (a == NULL || r->closed) {
        pthread_mutex_unlock(&r->mu);
        free(a);
        free(line);
        return;
    }
    *a = (answer){NULL, host, gen, line};
    if (r->tail)
        r->tail->next = a;
    else
        r->head = a;
    r->tail = a;
    if (write(r->wake[1], "a", 1) < 0)
        (void)0; /* full: readable anyway */
    pthread_mutex_unlock(&r->mu);
}

int
relay_take(relay *r, int *host, unsigned *gen, char **line)
{
    answer *a;
    char drain[256];

    pthread_mutex_lock(&r->mu);
    if ((a = r->head) != NULL) {
        r->head = a->next;
        if (r->head == NULL)
            r->tail = NULL;
    }
    if (r->head == NULL) /* the bytes go with the last answer */
        while (read(r->wake[0], drain, sizeof(drain)) > 0)
            ;
    pthread_mutex_unlock(&r->mu);
    if (a == NULL)
        return 0;
    *host = a->host;
    *gen = a->gen;
    *line = a->line;
    free(a);
    return 1;
}

int
relay_settle(relay *r, int ms)
{
    struct timespec until = hvd_clock_after(CLOCK_MONOTONIC, ms / 1000.0);
    int e = 0, left;

    pthread_mutex_lock(&r->mu);
    while (r->quiet > 0 && e == 0)
        e = pthread_cond_timedwait(&r->settled, &r->mu, &until);
    left = r->quiet;
    pthread_mutex_unlock(&r->mu);
    return left == 0 ? 0 : -1;
}

void
relay_close(relay *r)
{
    if (r == NULL)
        return;
    pthread_mutex_lock(&r->mu);
    r->closed = 1;
    pthread_mutex_unlock(&r->mu);
    unref(r);
}

/* "answer {...}\n" for call c: code, the client's error, and what came. */
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
    json_decref(c->body);
    free(c->data);
    free(c);
}

/* Makes c with a client of its own: its answer line (NULL when out of
 * memory), and hvdd_client.h's code in *code. */
static char *
make(relay *r, call *c, int *code_out)
{
    hvdd_client *cl = hvdd_client_new(r->addr, r->port, r->token, c->deadline);
    json_t *got = NULL, *text = NULL;
    char *data = NULL;
    size_t len = 0;
    int code = HVDD_ENOMEM;

    if (cl && c->op == 'p') {
        code = hvdd_client_post(cl, c->what, c->body, c->timeout_ms,
                                c->want ? &got : NULL);
        c->body = NULL; /* taken */
    } else if (cl && c->op == 'u') {
        code = hvdd_client_put(cl, "hvdrun", c->what, c->data, c->len);
    } else if (cl) {
        code = hvdd_client_get(cl, "hvdrun", c->what, (int)c->timeout_ms, &data,
                               &len);
    }
    if (code == 0 && data && (text = json_stringn(data, len)) == NULL)
        code = HVDD_EPROTO; /* not text: the relay carries text only */
    char *line =
        answer_line(c, code,
                    code == HVDD_EPROTO && data ? "the value is not text"
                    : cl                        ? hvdd_client_error(cl)
                                                : "out of memory",
                    got, text);
    json_decref(got);
    json_decref(text);
    free(data);
    hvdd_client_free(cl);
    *code_out = code;
    return line;
}

/* An answered call's thread. */
static void *
run(void *arg)
{
    call *c = arg;
    relay *r = c->r;
    int code;
    char *line = make(r, c, &code);

    /* its room first: the agent's next calls follow this answer */
    pthread_mutex_lock(&r->mu);
    r->calls--;
    r->host[c->host].running--;
    pthread_mutex_unlock(&r->mu);
    push(r, c->host, c->gen, line);
    call_free(c);
    unref(r);
    return NULL;
}

/* The next quiet call of host (under mu), NULL when none waits; once the
 * relay is closed, or hvdd out of reach, the rest are dropped (each would
 * spend its deadline retrying). */
static call *
next_quiet(relay *r, int host, int drop)
{
    host_calls *h = &r->host[host];
    call *c;

    while ((c = h->quiet) != NULL) {
        if ((h->quiet = c->next) == NULL)
            h->last = NULL;
        if (!r->closed && !drop)
            return c;
        r->quiet--;
        call_free(c);
    }
    h->quiet_busy = 0;
    return NULL;
}

/* A host's quiet calls, one after the other, in the order they came. */
static void *
run_quiet(void *arg)
{
    call *c = arg;
    relay *r = c->r;
    int host = c->host, code;

    while (c) {
        free(make(r, c, &code)); /* nobody waits for the answer */
        call_free(c);
        pthread_mutex_lock(&r->mu);
        r->quiet--;
        c = next_quiet(r, host, code == HVDD_ECONNECT);
        if (r->quiet == 0)
            pthread_cond_broadcast(&r->settled);
        pthread_mutex_unlock(&r->mu);
    }
    unref(r);
    return NULL;
}

static long
bounded(json_t *v, long dflt)
{
    json_int_t n = json_is_integer(v) ? json_integer_value(v) : dflt;

    return n < 0 ? 0 : n > RELAY_MAX_WAIT_MS ? RELAY_MAX_WAIT_MS : (long)n;
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
    json_t *deadline = json_object_get(o, "deadline");

    c->deadline = json_is_number(deadline) ? json_number_value(deadline) : 5;
    c->deadline = c->deadline < 0 ? 0 : c->deadline > 600 ? 600 : c->deadline;
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
        c->timeout_ms = bounded(json_object_get(o, "timeout"), 30000);
        if (c->timeout_ms < 1) /* (0 is no timeout to libcurl) */
            c->timeout_ms = 1;
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
        c->timeout_ms = bounded(json_object_get(o, "wait"), 0);
        return NULL;
    }
    c->op = 'u';
    json_t *data = json_object_get(o, "data");
    if (!json_is_string(data))
        return "a put without data";
    c->len = json_string_length(data);
    if ((c->data = malloc(c->len + 1)) == NULL)
        return "out of memory";
    memcpy(c->data, json_string_value(data), c->len + 1);
    return NULL;
}

/* Room for host's count of calls (under mu): 0, or -1. */
static int
host_slot(relay *r, int host)
{
    if (host < r->nhosts)
        return 0;
    int n = host + 16;
    host_calls *p = realloc(r->host, (size_t)n * sizeof(*p));
    if (p == NULL)
        return -1;
    memset(p + r->nhosts, 0, (size_t)(n - r->nhosts) * sizeof(*p));
    r->host = p;
    r->nhosts = n;
    return 0;
}

/* A detached thread for fn(c), with no signal: hvdrun-ssh reads its own
 * from a signalfd. 0, or an error number. */
static int
spawn(void *(*fn)(void *), call *c)
{
    pthread_attr_t at;
    sigset_t all, old;
    pthread_t t;
    int e;

    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, RELAY_STACK);
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    e = pthread_create(&t, &at, fn, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
    return e;
}

/* Queues a quiet call behind its host's, or starts the host's quiet
 * thread with it; NULL, or why not (c untouched). */
static const char *
start_quiet(relay *r, call *c)
{
    host_calls *h;

    pthread_mutex_lock(&r->mu);
    if (host_slot(r, c->host) != 0) {
        pthread_mutex_unlock(&r->mu);
        return "out of memory";
    }
    if (r->quiet >= RELAY_MAX_QUIET) {
        pthread_mutex_unlock(&r->mu);
        return "too many calls at once";
    }
    r->quiet++;
    h = &r->host[c->host];
    if (h->quiet_busy) {
        if (h->last)
            h->last->next = c;
        else
            h->quiet = c;
        h->last = c;
        pthread_mutex_unlock(&r->mu);
        return NULL;
    }
    h->quiet_busy = 1;
    r->refs++;
    pthread_mutex_unlock(&r->mu);
    if (spawn(run_quiet, c) == 0)
        return NULL;
    pthread_mutex_lock(&r->mu);
    r->quiet--;
    r->refs--;
    r->host[c->host].quiet_busy = 0; /* (its queue was empty) */
    if (r->quiet == 0)
        pthread_cond_broadcast(&r->settled);
    pthread_mutex_unlock(&r->mu);
    return "no thread for it";
}

/* Starts c's thread; NULL, or why not (c untouched). */
static const char *
start(relay *r, call *c)
{
    if (c->quiet)
        return start_quiet(r, c);
    pthread_mutex_lock(&r->mu);
    if (host_slot(r, c->host) != 0) {
        pthread_mutex_unlock(&r->mu);
        return "out of memory";
    }
    if (r->calls >= RELAY_MAX_CALLS ||
        r->host[c->host].running >= RELAY_HOST_CALLS) {
        pthread_mutex_unlock(&r->mu);
        return "too many calls at once";
    }
    r->calls++;
    r->host[c->host].running++;
    r->refs++;
    pthread_mutex_unlock(&r->mu);
    if (spawn(run, c) == 0)
        return NULL;
    pthread_mutex_lock(&r->mu);
    r->calls--;
    r->host[c->host].running--;
    r->refs--;
    pthread_mutex_unlock(&r->mu);
    return "no thread for it";
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
        *c = (call){.r = r, .host = host, .gen = gen};
        if (json_is_object(o))
            c->id = json_integer_value(json_object_get(o, "id"));
    }
    if (host < 0)
        why = "no such host";
    if (why == NULL && (why = parse(c, o)) == NULL) {
        if ((why = start(r, c)) == NULL) {
            json_decref(o);
            return;
        }
        code = HVDD_EREFUSED;
    }
    /* refused here, without reaching hvdd */
    char text[128];
    if (c == NULL && json_is_object(o)) /* still its id, for its answer */
        none.id = json_integer_value(json_object_get(o, "id"));
    snprintf(text, sizeof(text), "hvdrun refused the call: %s", why);
    push(r, host, gen, answer_line(c ? c : &none, code, text, NULL, NULL));
    if (c)
        call_free(c);
    json_decref(o);
}
