/* Shared by the route files of hvdd's API; private to daemon/. */
#ifndef HVDD_ROUTES_H
#define HVDD_ROUTES_H

#include <jansson.h>

#include "request.h"

/* A plain-text response (a reason line for errors). */
void hvdd_reply_text(hvdd_response *rs, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A JSON response; takes ownership of j. */
void hvdd_reply_json(hvdd_response *rs, int status, json_t *j);
/* Holds the request until `event` or the wait passes. */
void hvdd_reply_wait(hvdd_response *rs, const char *event, int wait_ms);

/* 1 when path is /<scope>/<key> with names the store takes. */
int hvdd_kv_path_ok(const char *path);
/* The store's routes, for a request let in as writer (KV_JOB: it carried
 * the token). */
void hvdd_kv_route(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs,
                   kv_writer writer);
void hvdd_control_route(hvdd_state *st, const hvdd_request *rq,
                        hvdd_response *rs);
/* The agents' routes; returns 0 when `what` is not one of them. */
int hvdd_agent_route(hvdd_state *st, const char *what, const hvdd_request *rq,
                     hvdd_response *rs, json_t *b);

#endif
