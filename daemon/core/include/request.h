/* hvdd's HTTP API as a pure function: a request in, a response out, no
 * sockets. The server feeds it; the fuzzer and the unit tests call it
 * directly. */
#ifndef HVDD_REQUEST_H
#define HVDD_REQUEST_H

#include <stddef.h>

#include "hvdd_client.h" /* HVDD_MAX_WAIT_MS, the clients' too */
#include "kvstore.h"
#include "roster.h"

#define HVDD_TOKEN_HEX 64 /* a 256-bit token, hex */
#define HVDD_MAX_BODY (KV_MAX_VALUE + 4096)

typedef struct hvdd_state {
    kvstore kv;
    hvdd_roster roster;
    char token[HVDD_TOKEN_HEX + 1];
    int debug;
    /* Called for every line worth a log entry (auth failures, aborts). */
    void (*log)(void *arg, const char *line);
    void *log_arg;
} hvdd_state;

typedef struct hvdd_request {
    const char *method;
    const char *path; /* percent-decoded, without the query */
    const char *wait; /* the ?wait=ms value, or NULL */
    const char *auth; /* the Authorization header, or NULL */
    const char *body;
    size_t body_len;
    int peer_allowed;    /* loopback or --allow: may use the KV routes */
    int deadline_passed; /* a long-poll's wait is over */
    int *conn_state;     /* per-connection memory across waits; starts -1 */
    double now;
    const char *peer; /* the client's numeric address, or NULL */
} hvdd_request;

typedef struct hvdd_response {
    int status;
    char *body; /* malloc'd, or NULL */
    size_t len;
    const char *content_type;
    /* When wait_ms > 0: hold the request until `wait_event` is notified or
     * wait_ms passes, then call hvdd_handle again. */
    int wait_ms;
    char wait_event[KV_MAX_SCOPE + KV_MAX_KEY + 16];
    /* An event this request caused: wake those who wait for it ("*" for
     * every waiter). */
    char notify[KV_MAX_SCOPE + KV_MAX_KEY + 16];
} hvdd_response;

int hvdd_state_init(hvdd_state *st, int size, const char *hosts_spec,
                    const char *token, char *err, size_t errlen);
void hvdd_state_release(hvdd_state *st);

/* Who may make rq (its body aside): KV_JOB (it carries the job token,
 * or its path is bad and will get 400), KV_OPEN (a Horovod scope, from
 * one of the job's addresses), or -1 with the refusal (401 or 403) in rs,
 * logged. The server asks as soon as the headers are in, before it reads
 * any body; hvdd_handle asks again. */
int hvdd_access(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs);

/* Fills rs (which the caller zeroes first and frees rs->body after). */
void hvdd_handle(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs);

/* The job's state as the JSON of GET /v1/status; the caller frees it. */
char *hvdd_status_json(const hvdd_state *st, double now);

#endif
