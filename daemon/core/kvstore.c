#include "kvstore.h"

#include <stdlib.h>
#include <string.h>

typedef struct kv_scope {
    hmap keys;     /* key -> kv_value */
    hmap finished; /* ranks that DELETEd, in a sized scope */
    int size;      /* 0: ad-hoc scope */
} kv_scope;

void
hvdd_kv_init(kvstore *kv)
{
    memset(kv, 0, sizeof(*kv));
    hvdd_hmap_init(&kv->scopes);
}

static void
scope_free(void *p)
{
    kv_scope *s = p;

    hvdd_hmap_release(&s->keys, free);
    hvdd_hmap_release(&s->finished, NULL);
    free(s);
}

void
hvdd_kv_release(kvstore *kv)
{
    hvdd_hmap_release(&kv->scopes, scope_free);
    hvdd_kv_init(kv);
}

int
hvdd_kv_name_ok(const char *s, size_t max)
{
    size_t n = 0;

    /* max counts the NUL, as the buffers that hold names do */
    for (; s[n]; n++)
        if (s[n] < 0x21 || s[n] > 0x7e || s[n] == '/' || n + 1 >= max)
            return 0;
    return n > 0;
}

static kv_scope *
scope_get(kvstore *kv, const char *name, int create)
{
    kv_scope *s = hvdd_hmap_get(&kv->scopes, name);

    if (s || !create)
        return s;
    if ((s = calloc(1, sizeof(*s))) == NULL)
        return NULL;
    hvdd_hmap_init(&s->keys);
    hvdd_hmap_init(&s->finished);
    if (hvdd_hmap_put(&kv->scopes, name, s, NULL) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

int
hvdd_kv_set_scope_size(kvstore *kv, const char *scope, int size)
{
    kv_scope *s;

    if (!hvdd_kv_name_ok(scope, KV_MAX_SCOPE))
        return KV_EBADNAME;
    if ((s = scope_get(kv, scope, 1)) == NULL)
        return KV_ENOMEM;
    s->size = size;
    return KV_OK;
}

/* The counts of v's budget (and the store's) change by sign. */
static void
account(kvstore *kv, const kv_value *v, int sign)
{
    kv->nkeys += (size_t)sign;
    kv->nbytes += (size_t)sign * v->len;
    if (v->writer == KV_OPEN) {
        kv->open_keys += (size_t)sign;
        kv->open_bytes += (size_t)sign * v->len;
    }
}

/* Whether a value of len bytes fits in place of old (or NULL). */
static int
room_for(const kvstore *kv, const kv_value *old, size_t len, kv_writer w)
{
    size_t keys = kv->nkeys - (old != NULL), bytes = kv->nbytes;
    size_t okeys = kv->open_keys, obytes = kv->open_bytes;

    if (old) {
        bytes -= old->len;
        if (old->writer == KV_OPEN)
            okeys--, obytes -= old->len;
    }
    if (keys >= KV_MAX_KEYS || bytes + len > KV_MAX_BYTES)
        return KV_EFULL;
    if (w == KV_OPEN && (okeys >= KV_OPEN_KEYS || obytes + len > KV_OPEN_BYTES))
        return KV_EOPENFULL;
    return KV_OK;
}

int
hvdd_kv_put(kvstore *kv, const char *scope, const char *key, const void *data,
            size_t len, kv_writer writer)
{
    kv_scope *s;
    kv_value *v, *old;
    int r;

    if (!hvdd_kv_name_ok(scope, KV_MAX_SCOPE) ||
        !hvdd_kv_name_ok(key, KV_MAX_KEY))
        return KV_EBADNAME;
    if (len > KV_MAX_VALUE)
        return KV_ETOOBIG;
    old = (kv_value *)hvdd_kv_get(kv, scope, key);
    if ((r = room_for(kv, old, len, writer)) != KV_OK)
        return r;
    if ((s = scope_get(kv, scope, 1)) == NULL ||
        (v = malloc(sizeof(*v) + len)) == NULL)
        return KV_ENOMEM;
    v->len = len;
    v->writer = writer;
    if (len)
        memcpy(v->data, data, len);
    if (hvdd_hmap_put(&s->keys, key, v, (void **)&old) != 0) {
        free(v);
        return KV_ENOMEM;
    }
    if (old) {
        account(kv, old, -1);
        free(old);
    }
    account(kv, v, 1);
    return KV_OK;
}

const kv_value *
hvdd_kv_get(const kvstore *kv, const char *scope, const char *key)
{
    kv_scope *s = hvdd_hmap_get(&kv->scopes, scope);

    return s ? hvdd_hmap_get(&s->keys, key) : NULL;
}

static void
drop_value(kvstore *kv, kv_value *v)
{
    account(kv, v, -1);
    free(v);
}

static void
count_and_free(const char *key, void *value, void *arg)
{
    (void)key;
    drop_value(arg, value);
}

static void
clear_scope(kvstore *kv, kv_scope *s)
{
    hvdd_hmap_each(&s->keys, count_and_free, kv);
    hvdd_hmap_release(&s->keys, NULL);
    hvdd_hmap_release(&s->finished, NULL);
}

/* 1 when key is a member's: a rank of the scope, in decimal, as Gloo
 * names the key each member puts and DELETEs. */
static int
member_key(const char *key, int size)
{
    long rank = 0;

    if (key[0] == '0')
        return key[1] == '\0';
    for (const char *c = key; *c; c++) {
        if (*c < '0' || *c > '9' || (rank = rank * 10 + (*c - '0')) >= size)
            return 0;
    }
    return key[0] != '\0';
}

int
hvdd_kv_delete(kvstore *kv, const char *scope, const char *key)
{
    kv_scope *s;
    kv_value *v;

    if (!hvdd_kv_name_ok(scope, KV_MAX_SCOPE) ||
        !hvdd_kv_name_ok(key, KV_MAX_KEY))
        return KV_EBADNAME;
    if ((s = hvdd_hmap_get(&kv->scopes, scope)) == NULL)
        return 0;
    /* (a key no member puts, in a sized scope: removed, as elsewhere;
     * counted, a few finalised the scope before its members were done) */
    if (s->size == 0 || !member_key(key, s->size)) {
        if ((v = hvdd_hmap_remove(&s->keys, key)) != NULL)
            drop_value(kv, v);
        else if (s->size > 0)
            return KV_ENOKEY;
        if (s->keys.count == 0 && s->size == 0)
            scope_free(hvdd_hmap_remove(&kv->scopes, scope));
        return 0;
    }
    /* Only the keys that were put count (a made-up DELETE finalised a
     * scope and wiped the real keys), and a member that DELETEs twice
     * counts once. */
    if (hvdd_hmap_get(&s->keys, key) == NULL)
        return KV_ENOKEY;
    if (hvdd_hmap_get(&s->finished, key) == NULL &&
        hvdd_hmap_put(&s->finished, key, s, NULL) != 0)
        return KV_ENOMEM;
    if ((int)s->finished.count < s->size)
        return 0;
    clear_scope(kv, s);
    return 1;
}

const char *
hvdd_kv_strerror(int code)
{
    switch (code) {
    case KV_OK:
        return "ok";
    case KV_ENOMEM:
        return "out of memory";
    case KV_EBADNAME:
        return "scope and key must be 1 to 128 and 512 printable bytes";
    case KV_ETOOBIG:
        return "value larger than 1 MiB";
    case KV_EFULL:
        return "the store is full (262144 keys or 256 MiB)";
    case KV_EOPENFULL:
        return "the store's share for writes without the job token is full "
               "(65536 keys or 64 MiB)";
    case KV_ENOKEY:
        return "no such key in this scope";
    }
    return "unknown error";
}
