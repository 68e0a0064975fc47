#include "hmap.h"

#include <stdlib.h>
#include <string.h>

static size_t
hash_of(const char *s, size_t *len)
{
    size_t h = 14695981039346656037ULL;
    const char *p = s;

    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    *len = (size_t)(p - s);
    return h;
}

void
hvdd_hmap_init(hmap *m)
{
    memset(m, 0, sizeof(*m));
}

void
hvdd_hmap_release(hmap *m, void (*free_value)(void *))
{
    for (size_t i = 0; i < m->nbuckets; i++) {
        hmap_entry *e = m->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            if (free_value)
                free_value(e->value);
            free(e);
        }
    }
    free(m->buckets);
    hvdd_hmap_init(m);
}

static hmap_entry **
find(const hmap *m, const char *key, size_t h, size_t len)
{
    hmap_entry **pp;

    if (m->nbuckets == 0)
        return NULL;
    for (pp = &m->buckets[h & (m->nbuckets - 1)]; *pp; pp = &(*pp)->next)
        if ((*pp)->hash == h && (*pp)->keylen == len &&
            memcmp((*pp)->key, key, len) == 0)
            return pp;
    return pp;
}

void *
hvdd_hmap_get(const hmap *m, const char *key)
{
    size_t len, h = hash_of(key, &len);
    hmap_entry **pp = find(m, key, h, len);

    return pp && *pp ? (*pp)->value : NULL;
}

static int
grow(hmap *m)
{
    size_t n = m->nbuckets ? m->nbuckets * 2 : 64;
    hmap_entry **b = calloc(n, sizeof(*b));

    if (b == NULL)
        return -1;
    for (size_t i = 0; i < m->nbuckets; i++) {
        hmap_entry *e = m->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = n;
    return 0;
}

int
hvdd_hmap_put(hmap *m, const char *key, void *value, void **old)
{
    size_t len, h = hash_of(key, &len);
    hmap_entry **pp, *e;

    if (old)
        *old = NULL;
    if (m->count + 1 > m->nbuckets && grow(m) != 0)
        return -1;
    pp = find(m, key, h, len);
    if (*pp) {
        if (old)
            *old = (*pp)->value;
        (*pp)->value = value;
        return 0;
    }
    if ((e = malloc(sizeof(*e) + len + 1)) == NULL)
        return -1;
    e->next = NULL;
    e->hash = h;
    e->value = value;
    e->keylen = len;
    memcpy(e->key, key, len + 1);
    *pp = e;
    m->count++;
    return 0;
}

void *
hvdd_hmap_remove(hmap *m, const char *key)
{
    size_t len, h = hash_of(key, &len);
    hmap_entry **pp = find(m, key, h, len), *e;
    void *v;

    if (pp == NULL || *pp == NULL)
        return NULL;
    e = *pp;
    *pp = e->next;
    v = e->value;
    free(e);
    m->count--;
    return v;
}

void
hvdd_hmap_each(const hmap *m,
               void (*fn)(const char *key, void *value, void *arg), void *arg)
{
    for (size_t i = 0; i < m->nbuckets; i++)
        for (hmap_entry *e = m->buckets[i]; e; e = e->next)
            fn(e->key, e->value, arg);
}
