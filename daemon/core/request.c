/* Dispatch: the token check for /v1 and for the store's own scopes, the
 * address check for Horovod's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page.h"
#include "routes.h"

int
hvdd_state_init(hvdd_state *st, int size, const char *hosts_spec,
                const char *token, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    hvdd_kv_init(&st->kv);
    if (strlen(token) != HVDD_TOKEN_HEX) {
        snprintf(err, errlen, "the token must be %d hex digits",
                 HVDD_TOKEN_HEX);
        return -1;
    }
    memcpy(st->token, token, HVDD_TOKEN_HEX + 1);
    return hvdd_roster_init(&st->roster, size, hosts_spec, &st->kv, err,
                            errlen);
}

void
hvdd_state_release(hvdd_state *st)
{
    hvdd_roster_release(&st->roster);
    hvdd_kv_release(&st->kv);
    explicit_bzero(st->token, sizeof(st->token));
}

void
hvdd_reply_text(hvdd_response *rs, int status, const char *fmt, ...)
{
    va_list ap;
    char buf[1024];
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof(buf) - 2)
        n = sizeof(buf) - 2;
    buf[n++] = '\n';
    rs->status = status;
    rs->content_type = "text/plain";
    free(rs->body);
    rs->body = malloc(n);
    rs->len = rs->body ? (size_t)n : 0;
    if (rs->body)
        memcpy(rs->body, buf, n);
}

void
hvdd_reply_json(hvdd_response *rs, int status, json_t *j)
{
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

    json_decref(j);
    if (s == NULL) {
        hvdd_reply_text(rs, 500, "out of memory");
        return;
    }
    free(rs->body);
    rs->status = status;
    rs->content_type = "application/json";
    rs->body = s;
    rs->len = strlen(s);
}

void
hvdd_reply_wait(hvdd_response *rs, const char *event, int wait_ms)
{
    rs->wait_ms = wait_ms;
    snprintf(rs->wait_event, sizeof(rs->wait_event), "%s", event);
}

/* Compares in constant time, so that timing tells nothing of the token. */
static int
token_ok(const hvdd_state *st, const char *auth)
{
    static const char prefix[] = "Bearer ";
    unsigned char diff = 0;

    if (auth == NULL || strncmp(auth, prefix, sizeof(prefix) - 1) != 0)
        return 0;
    auth += sizeof(prefix) - 1;
    if (strlen(auth) != HVDD_TOKEN_HEX)
        return 0;
    for (int i = 0; i < HVDD_TOKEN_HEX; i++)
        diff |= (unsigned char)(auth[i] ^ st->token[i]);
    return diff == 0;
}

/* Horovod's Gloo rendezvous scopes (global, local_<host>, cross_<n>):
 * Horovod's workers cannot send a token, so there the store trusts the
 * job's addresses. Every other scope is the job's own (ring, nccl,
 * collective, hvdrun) and needs the token. */
static int
horovod_scope(const char *path)
{
    return strncmp(path, "/global/", 8) == 0 ||
           strncmp(path, "/local_", 7) == 0 || strncmp(path, "/cross_", 7) == 0;
}

static void
log_line(hvdd_state *st, const char *fmt, const char *a, const char *b)
{
    char line[600];

    if (st->log == NULL)
        return;
    snprintf(line, sizeof(line), fmt, a, b);
    st->log(st->log_arg, line);
}

int
hvdd_access(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs)
{
    if (strncmp(rq->path, "/v1/", 4) == 0) {
        if (token_ok(st, rq->auth))
            return KV_JOB;
        log_line(st, "refused %s %s: missing or wrong token", rq->method,
                 rq->path);
        hvdd_reply_text(rs, 401, "missing or wrong job token");
        return -1;
    }
    if (token_ok(st, rq->auth) || !hvdd_kv_path_ok(rq->path))
        return KV_JOB; /* a bad path gets its 400, and changes nothing */
    if (!horovod_scope(rq->path)) {
        log_line(st, "refused %s %s: missing or wrong token", rq->method,
                 rq->path);
        hvdd_reply_text(rs, 401, "this scope needs the job token");
        return -1;
    }
    /* the job's other hosts: every address their agents reported */
    if (!rq->peer_allowed &&
        !(rq->peer && hvdd_agents_has_addr(&st->roster.agents, rq->peer))) {
        log_line(st, "refused %s %s: address not in the job", rq->method,
                 rq->path);
        hvdd_reply_text(rs, 403, "this address is not one of the job's hosts");
        return -1;
    }
    return KV_OPEN;
}

void
hvdd_handle(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs)
{
    int who;

    if (rq->body_len > HVDD_MAX_BODY) {
        hvdd_reply_text(rs, 413, "request body larger than %d bytes",
                        HVDD_MAX_BODY);
        return;
    }
    if (strcmp(rq->path, "/job") == 0) {
        if (strcmp(rq->method, "GET") != 0) {
            hvdd_reply_text(rs, 405, "%s /job: the page is read with GET",
                            rq->method);
            return;
        }
        /* the page holds no job data: its reads need the token */
        rs->status = 200;
        rs->content_type = "text/html; charset=utf-8";
        rs->body = strdup(hvdd_job_page);
        rs->len = rs->body ? strlen(rs->body) : 0;
        if (rs->body == NULL)
            hvdd_reply_text(rs, 500, "out of memory");
        return;
    }
    if ((who = hvdd_access(st, rq, rs)) < 0)
        return;
    if (strncmp(rq->path, "/v1/", 4) == 0)
        hvdd_control_route(st, rq, rs);
    else
        hvdd_kv_route(st, rq, rs, (kv_writer)who);
}
