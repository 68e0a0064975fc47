/* The key-value store Gloo and NCCL bootstrap from, with Horovod's
 * semantics: scopes of keys; in a scope whose size is known (global,
 * local_<host>, cross_<n>) every member DELETEs the key it put (its rank,
 * as Gloo names it) once done, and the last such DELETE clears the scope;
 * in an ad-hoc scope DELETE removes the key. Writes that came without the
 * job token (KV_OPEN) have a budget of their own within the store's, so
 * that they cannot make the job's own writes fail. Every input is
 * bounded. Not thread-safe: the server serialises. */
#ifndef HVDD_KVSTORE_H
#define HVDD_KVSTORE_H

#include <stddef.h>

#include "hmap.h"

#define KV_MAX_SCOPE 128          /* bytes of a scope name, with its NUL */
#define KV_MAX_KEY 512            /* bytes of a key, with its NUL */
#define KV_MAX_VALUE (1 << 20)    /* bytes of one value */
#define KV_MAX_KEYS 262144        /* keys in the whole store */
#define KV_MAX_BYTES (256u << 20) /* bytes of all values together */
#define KV_OPEN_KEYS 65536        /* of them, written without the token */
#define KV_OPEN_BYTES (64u << 20)

enum {
    KV_OK = 0,
    KV_ENOMEM = -1,
    KV_EBADNAME = -2,  /* empty, too long, or not printable ASCII */
    KV_ETOOBIG = -3,   /* value over KV_MAX_VALUE */
    KV_EFULL = -4,     /* KV_MAX_KEYS or KV_MAX_BYTES reached */
    KV_EOPENFULL = -5, /* KV_OPEN_KEYS or KV_OPEN_BYTES reached */
    KV_ENOKEY = -6     /* a sized scope's DELETE of a key nobody put */
};

/* Who writes: the job (with the token) or an address the store lets in
 * without one (Horovod's workers). */
typedef enum kv_writer { KV_JOB, KV_OPEN } kv_writer;

typedef struct kv_value {
    size_t len;
    kv_writer writer; /* whose budget it counts in */
    char data[];
} kv_value;

typedef struct kvstore {
    hmap scopes; /* name -> kv_scope */
    size_t nkeys;
    size_t nbytes;
    size_t open_keys; /* of them, KV_OPEN's */
    size_t open_bytes;
} kvstore;

void hvdd_kv_init(kvstore *kv);
void hvdd_kv_release(kvstore *kv);

/* Declares that `scope` has `size` members (from the job plan). */
int hvdd_kv_set_scope_size(kvstore *kv, const char *scope, int size);

/* Stores a copy of data (replacing an earlier value), in writer's
 * budget. */
int hvdd_kv_put(kvstore *kv, const char *scope, const char *key,
                const void *data, size_t len, kv_writer writer);
/* The stored value, or NULL; valid until the next change of the store. */
const kv_value *hvdd_kv_get(const kvstore *kv, const char *scope,
                            const char *key);
/* Horovod's DELETE. Returns 1 when it cleared a whole scope, 0 otherwise,
 * or a negative KV_E* code (KV_ENOKEY: in a sized scope, a key that is
 * not there, which counts for nothing). */
int hvdd_kv_delete(kvstore *kv, const char *scope, const char *key);

/* 1 when s is a usable scope or key name of at most max bytes. */
int hvdd_kv_name_ok(const char *s, size_t max);

const char *hvdd_kv_strerror(int code);

#endif
