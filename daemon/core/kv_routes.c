/* The Horovod-compatible key-value routes: PUT/GET/DELETE /<scope>/<key>,
 * plus our long-poll GET ?wait=ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hvd_numbers.h"
#include "routes.h"

/* "/scope/key" -> scope, key. Returns 0 or -1. */
static int
split_path(const char *path, char *scope, char *key)
{
    const char *slash;
    size_t n;

    if (path[0] != '/' || (slash = strchr(path + 1, '/')) == NULL)
        return -1;
    n = (size_t)(slash - path - 1);
    if (n == 0 || n >= KV_MAX_SCOPE || strchr(slash + 1, '/') ||
        strlen(slash + 1) >= KV_MAX_KEY)
        return -1;
    memcpy(scope, path + 1, n);
    scope[n] = '\0';
    snprintf(key, KV_MAX_KEY, "%s", slash + 1);
    return hvdd_kv_name_ok(scope, KV_MAX_SCOPE) &&
                   hvdd_kv_name_ok(key, KV_MAX_KEY)
               ? 0
               : -1;
}

static void
get(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs,
    const char *scope, const char *key)
{
    const kv_value *v = hvdd_kv_get(&st->kv, scope, key);
    long wait = 0;
    char event[KV_MAX_SCOPE + KV_MAX_KEY + 8];

    if (v) {
        free(rs->body);
        rs->status = 200;
        rs->content_type = "application/octet-stream";
        rs->len = v->len;
        rs->body = malloc(v->len ? v->len : 1);
        if (rs->body == NULL)
            hvdd_reply_text(rs, 500, "out of memory");
        else
            memcpy(rs->body, v->data, v->len);
        return;
    }
    if (rq->wait && hvd_parse_long(rq->wait, 0, HVDD_MAX_WAIT_MS, &wait) != 0) {
        hvdd_reply_text(rs, 400, "wait must be 0 to %d milliseconds",
                        HVDD_MAX_WAIT_MS);
        return;
    }
    if (wait > 0 && !rq->deadline_passed) {
        snprintf(event, sizeof(event), "kv/%s/%s", scope, key);
        hvdd_reply_wait(rs, event, (int)wait);
        return;
    }
    hvdd_reply_text(rs, 404, "no key '%s' in scope '%s'", key, scope);
}

int
hvdd_kv_path_ok(const char *path)
{
    char scope[KV_MAX_SCOPE], key[KV_MAX_KEY];

    return split_path(path, scope, key) == 0;
}

void
hvdd_kv_route(hvdd_state *st, const hvdd_request *rq, hvdd_response *rs,
              kv_writer writer)
{
    char scope[KV_MAX_SCOPE], key[KV_MAX_KEY];
    int r;

    if (split_path(rq->path, scope, key) != 0) {
        hvdd_reply_text(rs, 400, "expected /<scope>/<key> (%s)",
                        hvdd_kv_strerror(KV_EBADNAME));
        return;
    }
    if (strcmp(rq->method, "GET") == 0) {
        get(st, rq, rs, scope, key);
    } else if (strcmp(rq->method, "PUT") == 0) {
        r = hvdd_kv_put(&st->kv, scope, key, rq->body, rq->body_len, writer);
        if (r == KV_OK) {
            hvdd_reply_text(rs, 200, "ok");
            snprintf(rs->notify, sizeof(rs->notify), "kv/%s/%s", scope, key);
        } else {
            hvdd_reply_text(rs,
                            r == KV_ETOOBIG                      ? 413
                            : r == KV_EFULL || r == KV_EOPENFULL ? 507
                                                                 : 500,
                            "%s", hvdd_kv_strerror(r));
        }
    } else if (strcmp(rq->method, "DELETE") == 0) {
        r = hvdd_kv_delete(&st->kv, scope, key);
        if (r == KV_ENOKEY)
            hvdd_reply_text(rs, 404, "no key '%s' in scope '%s'", key, scope);
        else if (r < 0)
            hvdd_reply_text(rs, 500, "%s", hvdd_kv_strerror(r));
        else
            hvdd_reply_text(rs, 200, r == 1 ? "scope cleared" : "ok");
    } else {
        hvdd_reply_text(rs, 405, "method %s not allowed here", rq->method);
    }
}
