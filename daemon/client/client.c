#include "hvdd_client.h"

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hvd_clock.h"
#include "hvdd_chan.h"

struct hvdd_client {
    CURL *curl; /* reused: keeps the connection alive */
    char base[300];
    char auth[128];
    double deadline;
    char error[512];
    int round; /* said in rank calls when >= 0 */
};

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void
curl_setup(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
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

    pthread_once(&curl_once, curl_setup);
    if (c == NULL || (c->curl = curl_easy_init()) == NULL) {
        free(c);
        return NULL;
    }
    snprintf(c->base, sizeof(c->base),
             strchr(addr, ':') ? "http://[%s]:%d" : "http://%s:%d", addr, port);
    if (token)
        snprintf(c->auth, sizeof(c->auth), "Authorization: Bearer %s", token);
    c->deadline = connect_deadline;
    c->round = -1;
    return c;
}

void
hvdd_client_free(hvdd_client *c)
{
    if (c == NULL)
        return;
    curl_easy_cleanup(c->curl);
    explicit_bzero(c->auth, sizeof(c->auth));
    free(c);
}

const char *
hvdd_client_error(const hvdd_client *c)
{
    return c ? c->error : "";
}

const char *
hvdd_strerror(int code)
{
    switch (code) {
#define HVDD_ERRNO_CASE(name, val, text)                                       \
    case val:                                                                  \
        return text;
        HVDD_ERRNO_MAP(HVDD_ERRNO_CASE)
#undef HVDD_ERRNO_CASE
    case 0:
        return "success";
    }
    return "unknown error";
}

static size_t
collect(char *data, size_t size, size_t n, void *arg)
{
    buf *b = arg;
    size_t add = size * n;

    if (b->len + add + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        char *p;
        while (cap < b->len + add + 1)
            cap *= 2;
        if ((p = realloc(b->p, cap)) == NULL)
            return 0;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, add);
    b->len += add;
    b->p[b->len] = '\0';
    return add;
}

static int
retryable(CURLcode rc)
{
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_SEND_ERROR ||
           rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING;
}

static void
set_method(CURL *h, const char *method, const void *body, size_t len)
{
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    if (strcmp(method, "GET") == 0)
        return;
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body || strcmp(method, "DELETE") != 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)len);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
    }
}

/* One HTTP exchange, retried while the connection fails and the deadline
 * allows. Returns 0 with *status, or HVDD_ECONNECT / HVDD_ETIMEOUT. */
static int
exchange(hvdd_client *c, const char *method, const char *url, const void *body,
         size_t len, long timeout_ms, long *status, buf *out)
{
    struct curl_slist *hdr = curl_slist_append(NULL, "Expect:");
    double end = hvd_mono_now() + c->deadline;
    long delay_ms = 10;
    CURLcode rc;

    if (c->auth[0])
        hdr = curl_slist_append(hdr, c->auth);
    for (;;) {
        CURL *h = c->curl;
        curl_easy_reset(h);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
        set_method(h, method, body, len);
        out->len = 0;
        if ((rc = curl_easy_perform(h)) == CURLE_OK) {
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
            break;
        }
        if (!retryable(rc) || hvd_mono_now() + delay_ms / 1000.0 > end) {
            curl_slist_free_all(hdr);
            return fail(c,
                        rc == CURLE_OPERATION_TIMEDOUT ? HVDD_ETIMEOUT
                                                       : HVDD_ECONNECT,
                        "%s %s: %s", method, url, curl_easy_strerror(rc));
        }
        struct timespec ts = {0, delay_ms * 1000000L};
        nanosleep(&ts, NULL);
        delay_ms = delay_ms * 2 > 500 ? 500 : delay_ms * 2;
    }
    curl_slist_free_all(hdr);
    return 0;
}

/* Maps hvdd's answer to our codes; the reason line goes to c->error. */
static int
status_code(hvdd_client *c, long status, const buf *b, const char *what)
{
    return hvdd_answer_code((int)status, b->p, b->len, what, c->error,
                            sizeof(c->error));
}

/* A call whose answer body the caller may keep (*out) or not (NULL). */
static int
call(hvdd_client *c, const char *method, const char *path, const char *query,
     const void *body, size_t len, long timeout_ms, buf *keep)
{
    char url[2048];
    buf b = {0};
    long status = 0;
    int r;

    snprintf(url, sizeof(url), "%s%s%s", c->base, path, query ? query : "");
    r = exchange(c, method, url, body, len, timeout_ms, &status, &b);
    if (r == 0)
        r = status_code(c, status, &b, path);
    if (r == 0 && keep)
        *keep = b;
    else
        free(b.p);
    return r;
}

/* "/scope/key" with both parts escaped. */
static int
kv_path(hvdd_client *c, const char *scope, const char *key, char *path,
        size_t size)
{
    char *s = curl_easy_escape(c->curl, scope, 0);
    char *k = curl_easy_escape(c->curl, key, 0);
    int n = s && k ? snprintf(path, size, "/%s/%s", s, k) : -1;

    curl_free(s);
    curl_free(k);
    if (n < 0 || (size_t)n >= size)
        return fail(c, HVDD_EINVAL, "scope or key too long");
    return 0;
}

int
hvdd_client_put(hvdd_client *c, const char *scope, const char *key,
                const void *data, size_t len)
{
    char path[1500];
    int r = kv_path(c, scope, key, path, sizeof(path));

    return r ? r : call(c, "PUT", path, NULL, data, len, 30000, NULL);
}

int
hvdd_client_get(hvdd_client *c, const char *scope, const char *key, int wait_ms,
                char **data, size_t *len)
{
    char path[1500], query[32] = "";
    buf b = {0};
    int r = kv_path(c, scope, key, path, sizeof(path));

    if (r)
        return r;
    /* hvdd holds a request at most HVDD_MAX_WAIT_MS (it refuses more
     * with 400): a longer wait is several, as long as the key is missing */
    do {
        int now = wait_ms < HVDD_MAX_WAIT_MS ? wait_ms : HVDD_MAX_WAIT_MS;
        if (now > 0)
            snprintf(query, sizeof(query), "?wait=%d", now);
        r = call(c, "GET", path, query, NULL, 0, now + 30000L, &b);
        wait_ms -= now;
    } while (r == HVDD_ENOTFOUND && wait_ms > 0);
    if (r == 0) {
        *data = b.p ? b.p : strdup("");
        *len = b.len;
        if (*data == NULL)
            return fail(c, HVDD_ENOMEM, "out of memory");
    }
    return r;
}

int
hvdd_client_delete(hvdd_client *c, const char *scope, const char *key)
{
    char path[1500];
    int r = kv_path(c, scope, key, path, sizeof(path));

    return r ? r : call(c, "DELETE", path, NULL, NULL, 0, 30000, NULL);
}

/* POSTs j (taken) to /v1/<what>; the JSON answer goes to *answer. */
static int
post(hvdd_client *c, const char *what, json_t *j, long timeout_ms,
     json_t **answer)
{
    char path[64], *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    buf b = {0};
    json_error_t err;
    int r;

    json_decref(j);
    if (body == NULL)
        return fail(c, HVDD_ENOMEM, "out of memory");
    snprintf(path, sizeof(path), "/v1/%s", what);
    r = call(c, "POST", path, NULL, body, strlen(body), timeout_ms,
             answer ? &b : NULL);
    free(body);
    if (r == 0 && answer) {
        *answer = json_loadb(b.p ? b.p : "", b.len, 0, &err);
        free(b.p);
        if (*answer == NULL)
            return fail(c, HVDD_EPROTO, "%s: bad JSON: %s", path, err.text);
    }
    return r;
}

static int
get_int(json_t *o, const char *name, int *out)
{
    json_t *v = json_object_get(o, name);

    if (!json_is_integer(v))
        return -1;
    *out = (int)json_integer_value(v);
    return 0;
}

static void
get_str(json_t *o, const char *name, char *out, size_t size)
{
    const char *s = json_string_value(json_object_get(o, name));

    snprintf(out, size, "%s", s ? s : "");
}

/* j with this client's round added (rank calls). */
static json_t *
in_round(const hvdd_client *c, json_t *j)
{
    if (j && c->round >= 0)
        json_object_set_new(j, "round", json_integer(c->round));
    return j;
}

void
hvdd_client_set_round(hvdd_client *c, int round)
{
    c->round = round;
}

/* The identity in answer a (taken). */
static int
parse_identity(hvdd_client *c, json_t *a, const char *what, hvdd_identity *id)
{
    int r = 0;

    memset(id, 0, sizeof(*id));
    if (get_int(a, "rank", &id->rank) || get_int(a, "size", &id->size) ||
        get_int(a, "local_rank", &id->local_rank) ||
        get_int(a, "local_size", &id->local_size) ||
        get_int(a, "cross_rank", &id->cross_rank) ||
        get_int(a, "cross_size", &id->cross_size) ||
        get_int(a, "master_port", &id->master_port) ||
        get_int(a, "round", &id->round))
        r = fail(c, HVDD_EPROTO, "%s: incomplete identity", what);
    id->fresh = json_is_true(json_object_get(a, "fresh"));
    get_str(a, "host", id->host, sizeof(id->host));
    get_str(a, "iface", id->iface, sizeof(id->iface));
    get_str(a, "master_addr", id->master_addr, sizeof(id->master_addr));
    json_decref(a);
    return r;
}

int
hvdd_client_register(hvdd_client *c, const char *host, int pid, int rank,
                     hvdd_identity *id)
{
    json_t *a = NULL;
    int r = post(
        c, "register",
        in_round(c, rank >= 0 ? json_pack("{ss si si}", "host", host, "pid",
                                          pid, "rank", rank)
                              : json_pack("{ss si}", "host", host, "pid", pid)),
        150000, &a);

    return r ? r : parse_identity(c, a, "register", id);
}

int
hvdd_client_rejoin(hvdd_client *c, const char *host, int pid, int after,
                   long wait_ms, hvdd_identity *id)
{
    json_t *a = NULL;
    double until = hvd_mono_now() + wait_ms / 1000.0;
    int r;

    do { /* hvdd holds one request at most HVDD_MAX_WAIT_MS: ask again */
        json_t *j =
            json_pack("{ss si si}", "host", host, "pid", pid, "after", after);
        if (j && wait_ms == 0) /* only whether the round is there */
            json_object_set_new(j, "wait", json_integer(0));
        r = post(c, "rejoin", j, wait_ms + 10000, &a);
    } while (r == HVDD_ETIMEOUT && wait_ms > 0 && hvd_mono_now() < until);
    return r ? r : parse_identity(c, a, "rejoin", id);
}

int
hvdd_client_barrier(hvdd_client *c, const char *name, int rank)
{
    return post(c, "barrier",
                in_round(c, json_pack("{ss si}", "name", name, "rank", rank)),
                150000, NULL);
}

int
hvdd_client_heartbeat(hvdd_client *c, int rank)
{
    return post(c, "heartbeat", in_round(c, json_pack("{si}", "rank", rank)),
                10000, NULL);
}

int
hvdd_client_exit(hvdd_client *c, int rank, int code)
{
    return post(c, "exit",
                in_round(c, json_pack("{si si}", "rank", rank, "code", code)),
                10000, NULL);
}

int
hvdd_client_abort(hvdd_client *c, const char *reason)
{
    return post(c, "abort", json_pack("{ss}", "reason", reason), 10000, NULL);
}

int
hvdd_client_status(hvdd_client *c, char **json)
{
    buf b = {0};
    int r = call(c, "GET", "/v1/status", NULL, NULL, 0, 10000, &b);

    if (r == 0)
        *json = b.p;
    return r;
}

int
hvdd_client_post(hvdd_client *c, const char *what, json_t *j, long timeout_ms,
                 json_t **answer)
{
    return post(c, what, j, timeout_ms, answer);
}
